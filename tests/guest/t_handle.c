// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Handles: exclusive claims, sharing within a context and across
 * processes, reference counting per opener, revocation when the last
 * opener goes, the query's answers against sysfs, and bad descriptors.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

static char disk[64];

static int setup(void **state)
{
	if (tl_dio_load())
		return -1;
	return tl_scsi_debug_load("dev_size_mb=32 dif=1 dix=1 guard=0", disk,
				  sizeof(disk));
}

static int teardown(void **state)
{
	return tl_scsi_debug_unload();
}

/*
 * Teardown: close what a test kept (tl_fd_keep()), so that a failed
 * assertion leaves no context (and no claim) behind for the next test;
 * scsi_debug at full speed again.
 */
static int cleanup(void **state)
{
	tl_fd_close_all();
	return tl_scsi_debug_ndelay(0);
}

static int open_disk(int flags)
{
	int fd = open(disk, flags | O_CLOEXEC);

	assert_true(fd >= 0);
	return fd;
}

static void test_open_query_close(void **state)
{
	int ctx = sys_dio_init(0, DIO_PRIVATE), fd = open_disk(O_RDWR), h;
	struct dio_query q;

	h = sys_dio_open(ctx, fd, 0);
	assert_true(h >= 1);
	assert_int_equal(sys_dio_query(ctx, h, &q), 0);
	assert_int_equal(q.size, sizeof(q));
	assert_int_equal(q.logical_block_size, 512);
	assert_int_equal(q.capacity, 32ULL << 20);
	assert_string_equal(q.profile, "T10-DIF-TYPE1-CRC");
	/* The handle does not depend on the caller's descriptor. */
	close(fd);
	assert_int_equal(sys_dio_query(ctx, h, &q), 0);
	assert_int_equal(sys_dio_close(ctx, h), 0);
	assert_int_equal(sys_dio_close(ctx, h), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(sys_dio_query(ctx, h, &q), -1);
	assert_int_equal(errno, EBADF);
	close(ctx);
}

static void test_same_device_same_handle_refcounted(void **state)
{
	int ctx = sys_dio_init(0, DIO_PRIVATE), fd = open_disk(O_RDWR);
	int fd2 = open_disk(O_RDWR), h1, h2;
	struct dio_query q;

	h1 = sys_dio_open(ctx, fd, 0);
	h2 = sys_dio_open(ctx, fd2, 0);
	assert_true(h1 >= 1);
	assert_int_equal(h1, h2);
	assert_int_equal(sys_dio_close(ctx, h1), 0);
	assert_int_equal(sys_dio_query(ctx, h1, &q), 0);	/* one ref left */
	assert_int_equal(sys_dio_close(ctx, h1), 0);
	assert_int_equal(sys_dio_query(ctx, h1, &q), -1);
	assert_int_equal(errno, EBADF);
	/* A revoked number is not reused at once. */
	h2 = sys_dio_open(ctx, fd, 0);
	assert_true(h2 >= 1);
	assert_int_not_equal(h2, h1);
	close(fd);
	close(fd2);
	close(ctx);
}

static void test_claim_is_exclusive(void **state)
{
	int a = sys_dio_init(0, DIO_PRIVATE), b = sys_dio_init(0, DIO_PRIVATE);
	int fd = open_disk(O_RDWR), ha, hb, ex;

	ha = sys_dio_open(a, fd, 0);
	assert_true(ha >= 1);
	/* Another context: busy. */
	assert_int_equal(sys_dio_open(b, fd, 0), -1);
	assert_int_equal(errno, EBUSY);
	/* The claim is the block layer's: O_EXCL opens fail too. */
	ex = open(disk, O_RDONLY | O_EXCL);
	assert_int_equal(ex, -1);
	assert_int_equal(errno, EBUSY);
	/* Without a claim, another context may share it. */
	hb = sys_dio_open(b, fd, DIO_OPEN_NOCLAIM);
	assert_true(hb >= 1);
	/* Same context, conflicting claim flag. */
	assert_int_equal(sys_dio_open(a, fd, DIO_OPEN_NOCLAIM), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(sys_dio_close(b, hb), 0);
	/* Closing the context releases the claim. */
	close(a);
	hb = sys_dio_open(b, fd, 0);
	assert_true(hb >= 1);
	close(b);
	close(fd);
}

static void test_claim_conflicts_with_mount_and_dm(void **state)
{
	int ctx = sys_dio_init(0, DIO_PRIVATE), fd;

	assert_int_equal(tl_kmod_probe("ext4", NULL), 0);
	assert_int_equal(tl_sh("mkfs.ext4 -q -F %s >/dev/null 2>&1", disk), 0);
	assert_int_equal(tl_sh("mkdir -p /tmp/mnt && mount -t ext4 %s /tmp/mnt", disk), 0);
	fd = open_disk(O_RDWR);
	assert_int_equal(sys_dio_open(ctx, fd, 0), -1);
	assert_int_equal(errno, EBUSY);
	close(fd);
	assert_int_equal(umount("/tmp/mnt"), 0);

	/* Held by device mapper. */
	assert_int_equal(tl_kmod_probe("dm_mod", NULL), 0);
	assert_int_equal(tl_sh("echo '0 2048 linear %s 0' | DM_DISABLE_UDEV=1 "
			       "dmsetup create diotest --noudevsync", disk), 0);
	fd = open_disk(O_RDWR);
	assert_int_equal(sys_dio_open(ctx, fd, 0), -1);
	assert_int_equal(errno, EBUSY);
	close(fd);
	assert_int_equal(tl_sh("DM_DISABLE_UDEV=1 dmsetup remove diotest --noudevsync"), 0);
	fd = open_disk(O_RDWR);
	assert_true(sys_dio_open(ctx, fd, 0) >= 1);
	close(fd);
	close(ctx);
}

/* Submit @r on @ctx, wait for it, and expect @len bytes done. */
static void io_ok(int ctx, struct dio_request *r, int64_t len)
{
	struct dio_request *rp = r;

	assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
	assert_int_equal(r->result, len);
}

static void test_readonly_handle(void **state)
{
	int ctx = sys_dio_init(0, DIO_PRIVATE), ro = open_disk(O_RDONLY);
	int rw = open_disk(O_RDWR), h;
	struct dio_request r, *rp = &r;
	void *buf = NULL;

	h = sys_dio_open(ctx, ro, 0);
	assert_true(h >= 1);
	assert_int_equal(posix_memalign(&buf, 4096, 4096), 0);
	memset(buf, 0xa5, 4096);
	dio_req_prep_write(&r, h, buf, 4096, 0);
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), -1);
	assert_int_equal(errno, EBADF);
	/* Reads work. */
	dio_req_prep_read(&r, h, buf, 4096, 0);
	io_ok(ctx, &r, 4096);
	/* In one batch too, where the write after a read stops it. */
	{
		struct dio_request r2[2], *rp2[2] = { &r2[0], &r2[1] };

		dio_req_prep_read(&r2[0], h, buf, 4096, 0);
		dio_req_prep_write(&r2[1], h, buf, 4096, 0);
		assert_int_equal(sys_dio_submit(ctx, rp2, 2), 1);
		assert_int_equal(sys_dio_wait(ctx, rp2, 1, NULL), 1);
		assert_int_equal(r2[0].result, 4096);
	}
	/*
	 * A writable descriptor opening the same device widens the handle:
	 * the same number, and now writes go through, for both openers.
	 */
	assert_int_equal(sys_dio_open(ctx, rw, 0), h);
	dio_req_prep_write(&r, h, buf, 4096, 0);
	io_ok(ctx, &r, 4096);
	/* The writable opener goes; the handle keeps what it was given. */
	assert_int_equal(sys_dio_close(ctx, h), 0);
	dio_req_prep_write(&r, h, buf, 4096, 4096);
	io_ok(ctx, &r, 4096);
	assert_int_equal(sys_dio_close(ctx, h), 0);
	assert_int_equal(sys_dio_close(ctx, h), -1);
	assert_int_equal(errno, EBADF);
	free(buf);
	close(ro);
	close(rw);
	close(ctx);
}

/*
 * A handle from an O_WRONLY descriptor writes and refuses reads with
 * EBADF, until a readable descriptor opens the device too; the claim
 * holds throughout (another context gets EBUSY).
 */
static void test_writeonly_handle(void **state)
{
	int ctx = sys_dio_init(0, DIO_PRIVATE), other = sys_dio_init(0, DIO_PRIVATE);
	int wo = open_disk(O_WRONLY), ro = open_disk(O_RDONLY), h;
	struct dio_request r, *rp = &r;
	void *buf = NULL;

	assert_true(ctx >= 0 && other >= 0);
	assert_int_equal(posix_memalign(&buf, 4096, 4096), 0);
	memset(buf, 0x3c, 4096);
	h = sys_dio_open(ctx, wo, 0);
	assert_true(h >= 1);
	dio_req_prep_write(&r, h, buf, 4096, 8192);
	io_ok(ctx, &r, 4096);
	dio_req_prep_read(&r, h, buf, 4096, 8192);
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(sys_dio_open(other, ro, 0), -1);
	assert_int_equal(errno, EBUSY);
	/* Widened by a readable opener: the read returns what was written. */
	assert_int_equal(sys_dio_open(ctx, ro, 0), h);
	memset(buf, 0, 4096);
	io_ok(ctx, &r, 4096);
	assert_int_equal(((unsigned char *)buf)[0], 0x3c);
	assert_int_equal(((unsigned char *)buf)[4095], 0x3c);
	assert_int_equal(sys_dio_open(other, ro, 0), -1);
	assert_int_equal(errno, EBUSY);
	free(buf);
	close(wo);
	close(ro);
	close(ctx);
	/* The claim went with the context. */
	ro = open_disk(O_RDONLY);
	assert_true(sys_dio_open(other, ro, 0) >= 1);
	close(ro);
	close(other);
}

/*
 * OPEN whose struct can be read but not written back (a read-only
 * mapping): EFAULT, and no reference is left behind: the device is not
 * held, and the number it would have had closes with EBADF.
 */
static void test_open_handle_not_written_back(void **state)
{
	int ctx = sys_dio_init(0, DIO_PRIVATE), fd = open_disk(O_RDWR);
	int other = sys_dio_init(0, DIO_PRIVATE), h;
	struct dio_open *o;

	assert_true(ctx >= 0 && other >= 0);
	o = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(o != MAP_FAILED);
	o->size = sizeof(*o);
	o->fd = fd;
	assert_int_equal(mprotect(o, 4096, PROT_READ), 0);
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_OPEN, o), -EFAULT);
	/* Handles are numbered from 1: the first would have been 1. */
	assert_int_equal(sys_dio_close(ctx, 1), -1);
	assert_int_equal(errno, EBADF);
	h = sys_dio_open(other, fd, 0);
	assert_true(h >= 1);
	close(other);
	/* And once more while the context holds the device already. */
	h = sys_dio_open(ctx, fd, 0);
	assert_true(h >= 1);
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_OPEN, o), -EFAULT);
	assert_int_equal(sys_dio_close(ctx, h), 0);
	assert_int_equal(sys_dio_close(ctx, h), -1);
	assert_int_equal(errno, EBADF);
	munmap(o, 4096);
	close(fd);
	close(ctx);
}

/*
 * Two processes share a key: the second sees the first's handle, and
 * loses it when the first (its only opener) exits.
 */
static void test_shared_and_revoked_on_exit(void **state)
{
	const uint64_t key = 0x5000;
	int pipefd[2], go[2], ctx, h = 0, st;
	struct dio_query q;
	char c = 0;
	pid_t pid;

	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(pipe(go), 0);
	pid = fork();
	if (pid == 0) {
		int cctx = sys_dio_init(key, DIO_CREAT | DIO_EXCL);
		int fd = open(disk, O_RDWR);
		int ch = sys_dio_open(cctx, fd, 0);

		if (write(pipefd[1], &ch, sizeof(ch)) != sizeof(ch))
			_exit(1);
		if (read(go[0], &c, 1) != 1)	/* wait for the parent */
			_exit(1);
		_exit(0);
	}
	assert_int_equal(read(pipefd[0], &h, sizeof(h)), sizeof(h));
	assert_true(h >= 1);
	ctx = sys_dio_init(key, 0);
	assert_true(ctx >= 0);
	assert_int_equal(sys_dio_query(ctx, h, &q), 0);
	assert_string_equal(q.profile, "T10-DIF-TYPE1-CRC");
	/* The parent did not open it: it cannot close the child's reference. */
	assert_int_equal(sys_dio_close(ctx, h), -1);
	assert_int_equal(errno, EBADF);
	/* Opening the same device from here shares the handle. */
	int fd = open_disk(O_RDWR);
	assert_int_equal(sys_dio_open(ctx, fd, 0), h);
	assert_int_equal(write(go[1], &c, 1), 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	/* Still ours. */
	assert_int_equal(sys_dio_query(ctx, h, &q), 0);
	assert_int_equal(sys_dio_close(ctx, h), 0);
	assert_int_equal(sys_dio_query(ctx, h, &q), -1);
	assert_int_equal(errno, EBADF);
	close(fd);
	close(ctx);
	close(pipefd[0]); close(pipefd[1]); close(go[0]); close(go[1]);
}

static void test_revoked_for_other_process_after_opener_exits(void **state)
{
	const uint64_t key = 0x5001;
	int pipefd[2], ctx, h = 0, st, fd;
	struct dio_request r, *rp = &r;
	struct dio_query q;
	void *buf;
	pid_t pid;

	assert_int_equal(pipe(pipefd), 0);
	ctx = sys_dio_init(key, DIO_CREAT | DIO_EXCL);
	assert_true(ctx >= 0);
	pid = fork();
	if (pid == 0) {
		int cctx = sys_dio_init(key, 0);
		int cfd = open(disk, O_RDWR);
		int ch = sys_dio_open(cctx, cfd, 0);

		if (write(pipefd[1], &ch, sizeof(ch)) != sizeof(ch))
			_exit(1);
		pause();	/* killed by the parent */
		_exit(0);
	}
	assert_int_equal(read(pipefd[0], &h, sizeof(h)), sizeof(h));
	assert_true(h >= 1);
	assert_int_equal(sys_dio_query(ctx, h, &q), 0);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(sys_dio_query(ctx, h, &q), -1);
	assert_int_equal(errno, EBADF);
	/* Requests naming it are refused too, from this (surviving) process. */
	buf = tl_alloc(4096, 0);
	assert_non_null(buf);
	dio_req_prep_read(&r, h, buf, 4096, 0);
	r.result = 0x5a5a;
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(r.result, 0x5a5a);
	/* The claim went with it: the device can be claimed again. */
	fd = open_disk(O_RDWR);
	assert_true(sys_dio_open(ctx, fd, 0) >= 1);
	close(fd);
	close(ctx);
	close(pipefd[0]);
	close(pipefd[1]);
	free(buf);
}

/*
 * The last opener exits with reads still at the device (scsi_debug delays
 * them): the handle is revoked at once for the process that stays, and the
 * orphaned requests complete and are freed by the module, with the exiting
 * descriptor and the handle (and its claim) after them.  "Still at the
 * device" when the child is gone: from its SUBMIT to the count of request
 * objects come a pipe write, its exit (a small process: tens of ms on a
 * loaded stock guest, up to a second on a loaded debug guest), waitpid
 * and two calls; the reads take 2 s (x tl_slow_factor(): 8 s there).
 */
static void test_inflight_io_of_exiting_opener(void **state)
{
	enum { N = 4 };
	const uint64_t key = 0x5002;
	int pipefd[2], ctx, h = 0, h2, st, fd;
	struct dio_request r, *rp = &r;
	struct dio_query q;
	long files;
	void *buf;
	pid_t pid;

	assert_int_equal(tl_slab_wait("dio_kreq", 0, 5), 0);
	assert_int_equal(pipe(pipefd), 0);
	ctx = tl_fd_keep(sys_dio_init(key, DIO_CREAT | DIO_EXCL));
	assert_true(ctx >= 0);
	files = tl_slab_active("dio_file");
	assert_true(files >= 1);
	buf = tl_alloc(N * 4096, 0);
	assert_non_null(buf);
	assert_int_equal(tl_scsi_debug_delay_ms(2000 * tl_slow_factor()), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct dio_request cr[N], *crp[N];
		int cctx = sys_dio_init(key, 0);
		int cfd = open(disk, O_RDWR);
		int ch = sys_dio_open(cctx, cfd, 0);

		if (ch < 1)
			_exit(2);
		for (int i = 0; i < N; i++) {
			dio_req_prep_read(&cr[i], ch, (char *)buf + i * 4096,
					  4096, i * 4096);
			crp[i] = &cr[i];
		}
		if (sys_dio_submit(cctx, crp, N) != N)
			_exit(3);
		if (write(pipefd[1], &ch, sizeof(ch)) != sizeof(ch))
			_exit(4);
		_exit(0);		/* no WAIT, no COLLECT, no CLOSE */
	}
	assert_int_equal(read(pipefd[0], &h, sizeof(h)), sizeof(h));
	assert_true(h >= 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* Revoked for us, while the child's reads are still in flight. */
	assert_int_equal(sys_dio_query(ctx, h, &q), -1);
	assert_int_equal(errno, EBADF);
	dio_req_prep_read(&r, h, buf, 4096, 0);
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(tl_slab_active("dio_kreq"), N);
	/*
	 * They complete, and everything of the child's goes: 20 s (x
	 * tl_slow_factor()) for the delay above and a work item's reaping.
	 */
	assert_true(tl_slab_reaches("dio_kreq", 0, 20));
	assert_true(tl_slab_reaches("dio_file", files, 5));
	assert_true(tl_slab_reaches("dio_handle", 0, 5));
	assert_int_equal(tl_scsi_debug_ndelay(0), 0);
	/* The claim was released: ours now, and I/O works through it. */
	fd = tl_fd_keep(open_disk(O_RDWR));
	h2 = sys_dio_open(ctx, fd, 0);
	assert_true(h2 >= 1);
	assert_int_not_equal(h2, h);
	dio_req_prep_read(&r, h2, buf, 4096, 0);
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, 4096);
	assert_int_equal(cleanup(state), 0);
	assert_true(tl_slab_reaches("dio_handle", 0, 5));
	assert_true(tl_slab_reaches("dio_kreq", 0, 5));
	close(pipefd[0]);
	close(pipefd[1]);
	free(buf);
}

static void test_open_bad_descriptors(void **state)
{
	int ctx = sys_dio_init(0, DIO_PRIVATE), pipes[2], reg, chr, fd;
	struct dio_open o;
	void *unmapped;

	reg = open("/tmp/regular", O_RDWR | O_CREAT, 0600);
	assert_true(reg >= 0);
	assert_int_equal(sys_dio_open(ctx, reg, 0), -1);
	assert_int_equal(errno, ENOTBLK);
	assert_int_equal(pipe(pipes), 0);
	assert_int_equal(sys_dio_open(ctx, pipes[0], 0), -1);
	assert_int_equal(errno, ENOTBLK);
	chr = open("/dev/null", O_RDWR);
	assert_int_equal(sys_dio_open(ctx, chr, 0), -1);
	assert_int_equal(errno, ENOTBLK);
	assert_int_equal(sys_dio_open(ctx, 1000, 0), -1);	/* closed */
	assert_int_equal(errno, EBADF);
	assert_int_equal(sys_dio_open(ctx, -1, 0), -1);
	assert_int_equal(errno, EBADF);
	fd = open(disk, O_PATH);
	assert_int_equal(sys_dio_open(ctx, fd, 0), -1);
	assert_int_equal(errno, EBADF);
	close(fd);
	/*
	 * Open mode 3 (O_ACCMODE: for ioctls only, as fdformat opens): a
	 * block device descriptor that may neither read nor write.
	 */
	fd = open(disk, O_ACCMODE);
	assert_true(fd >= 0);
	assert_int_equal(sys_dio_open(ctx, fd, 0), -1);
	assert_int_equal(errno, EBADF);
	close(fd);
	/* A context descriptor is not a block device either. */
	assert_int_equal(sys_dio_open(ctx, ctx, 0), -1);
	assert_int_equal(errno, ENOTBLK);

	fd = open_disk(O_RDWR);
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.fd = fd;
	o.flags = 1U << 9;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_OPEN, &o), -EINVAL);
	o.flags = 0;
	o.reserved[0] = 1;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_OPEN, &o), -EINVAL);
	o.reserved[0] = 0;
	o.size = 4;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_OPEN, &o), -EINVAL);
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_OPEN, NULL), -EFAULT);
	unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_OPEN, unmapped), -EFAULT);
	munmap(unmapped, 4096);

	/* Handles never issued, and handles of another context. */
	struct dio_query q;
	int other = sys_dio_init(0, DIO_PRIVATE);
	int h = sys_dio_open(other, fd, DIO_OPEN_NOCLAIM);

	assert_true(h >= 1);
	assert_int_equal(sys_dio_query(ctx, 12345, &q), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(sys_dio_close(ctx, 12345), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(sys_dio_query(ctx, h, &q), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(sys_dio_close(ctx, h), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(sys_dio_query(ctx, 0, &q), -1);
	assert_int_equal(errno, EBADF);
	close(other);
	close(fd);
	close(reg);
	close(chr);
	close(pipes[0]);
	close(pipes[1]);
	close(ctx);
}

/* A page's address that is not mapped any more. */
static void *unmapped_page(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	assert_int_equal(munmap(p, 4096), 0);
	return p;
}

/* Two zeroed pages, for argument structs up to and past a page. */
static uint8_t *big_arg(void)
{
	uint8_t *p = tl_alloc(8192, 0);

	assert_non_null(p);
	return p;
}

static int all_zero(const uint8_t *p, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (p[i])
			return 0;
	return 1;
}

/* DIO_IOC_OPEN: the size rules, the output-only handle, reserved[1]. */
static void test_open_bad_args(void **state)
{
	int ctx = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE)), fd = tl_fd_keep(open_disk(O_RDWR));
	uint8_t *big = big_arg();
	struct dio_open o, *bo = (struct dio_open *)big;
	struct dio_query q;
	int h;

	assert_true(ctx >= 0);
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.fd = fd;
	/* Below the first published size. */
	o.size = DIO_OPEN_SIZE_VER0 - 8;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_OPEN, &o), -EINVAL);
	o.size = 0;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_OPEN, &o), -EINVAL);
	o.size = sizeof(o);
	/* @handle is output: non-zero on input is refused, as reserved[1]. */
	o.handle = 1;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_OPEN, &o), -EINVAL);
	o.handle = 0;
	o.reserved[1] = 1;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_OPEN, &o), -EINVAL);
	o.reserved[1] = 0;
	assert_int_equal(tl_slab_wait("dio_handle", 0, 5), 0);

	/* A newer, larger struct: a non-zero unknown tail is E2BIG ... */
	memcpy(big, &o, sizeof(o));
	bo->size = sizeof(o) + 16;
	big[sizeof(o) + 15] = 1;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_OPEN, big), -E2BIG);
	assert_int_equal(tl_slab_wait("dio_handle", 0, 5), 0);
	/* ... a zero one is accepted, and the handle written back. */
	big[sizeof(o) + 15] = 0;
	h = ioctl(ctx, DIO_IOC_OPEN, big);
	assert_true(h >= 1);
	assert_int_equal(bo->handle, h);
	assert_true(all_zero(big, sizeof(o), 8192));
	/* Exactly a page: the largest size there is. */
	bo->handle = 0;
	bo->size = 4096;
	big[4095] = 1;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_OPEN, big), -E2BIG);
	big[4095] = 0;
	assert_int_equal(ioctl(ctx, DIO_IOC_OPEN, big), h);
	assert_int_equal(bo->handle, h);
	assert_true(all_zero(big, sizeof(o), 8192));
	bo->handle = 0;
	bo->size = 4097;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_OPEN, big), -E2BIG);
	/* No struct at all. */
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_OPEN, NULL), -EFAULT);
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_OPEN, unmapped_page()), -EFAULT);
	/* The two accepted opens took two references, the rest none. */
	assert_int_equal(sys_dio_close(ctx, h), 0);
	assert_int_equal(sys_dio_query(ctx, h, &q), 0);
	assert_int_equal(sys_dio_close(ctx, h), 0);
	assert_int_equal(sys_dio_query(ctx, h, &q), -1);
	assert_int_equal(errno, EBADF);
	free(big);
}

/* DIO_IOC_CLOSE: the size rules and reserved; refused calls drop nothing. */
static void test_close_bad_args(void **state)
{
	int ctx = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE)), fd = tl_fd_keep(open_disk(O_RDWR));
	uint8_t *big = big_arg();
	struct dio_close c, *bc = (struct dio_close *)big;
	struct dio_query q;
	int h, i;

	assert_true(ctx >= 0);
	h = sys_dio_open(ctx, fd, 0);
	assert_true(h >= 1);
	for (i = 0; i < 3; i++)			/* four references */
		assert_int_equal(sys_dio_open(ctx, fd, 0), h);
	memset(&c, 0, sizeof(c));
	c.handle = h;
	c.size = DIO_CLOSE_SIZE_VER0 - 8;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_CLOSE, &c), -EINVAL);
	c.size = 0;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_CLOSE, &c), -EINVAL);
	c.size = sizeof(c);
	c.reserved = 1;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_CLOSE, &c), -EINVAL);
	c.reserved = 1ULL << 63;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_CLOSE, &c), -EINVAL);
	c.reserved = 0;

	memcpy(big, &c, sizeof(c));
	bc->size = sizeof(c) + 8;
	big[sizeof(c) + 7] = 1;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_CLOSE, big), -E2BIG);
	big[sizeof(c) + 7] = 0;
	assert_int_equal(ioctl(ctx, DIO_IOC_CLOSE, big), 0);	/* three left */
	bc->size = 4096;
	big[4095] = 1;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_CLOSE, big), -E2BIG);
	big[4095] = 0;
	assert_int_equal(ioctl(ctx, DIO_IOC_CLOSE, big), 0);	/* two left */
	bc->size = 4097;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_CLOSE, big), -E2BIG);
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_CLOSE, NULL), -EFAULT);
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_CLOSE, unmapped_page()), -EFAULT);

	assert_int_equal(ioctl(ctx, DIO_IOC_CLOSE, &c), 0);	/* one left */
	assert_int_equal(sys_dio_query(ctx, h, &q), 0);
	assert_int_equal(ioctl(ctx, DIO_IOC_CLOSE, &c), 0);	/* revoked */
	assert_int_equal(sys_dio_query(ctx, h, &q), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_CLOSE, &c), -EBADF);
	free(big);
}

/* The answer of a query on the suite's disk, in a struct of any size. */
static void check_answer(const struct dio_query *q, int h)
{
	assert_int_equal(q->size, sizeof(*q));	/* the kernel's size */
	assert_int_equal(q->handle, h);
	assert_int_equal(q->logical_block_size, 512);
	assert_int_equal(q->capacity, 32ULL << 20);
	assert_string_equal(q->profile, "T10-DIF-TYPE1-CRC");
}

/* DIO_IOC_QUERY: the size rules; a larger struct gets the kernel's size. */
static void test_query_bad_args(void **state)
{
	int ctx = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE)), fd = tl_fd_keep(open_disk(O_RDWR));
	uint8_t *big = big_arg();
	struct dio_query q, *bq = (struct dio_query *)big;
	int h;

	assert_true(ctx >= 0);
	h = sys_dio_open(ctx, fd, 0);
	assert_true(h >= 1);
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.handle = h;
	assert_int_equal(ioctl(ctx, DIO_IOC_QUERY, &q), 0);
	check_answer(&q, h);

	memset(&q, 0, sizeof(q));
	q.handle = h;
	q.size = DIO_QUERY_SIZE_VER0 - 8;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_QUERY, &q), -EINVAL);
	q.size = 0;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_QUERY, &q), -EINVAL);
	assert_int_equal(q.capacity, 0);		/* nothing written */

	/* Larger: a non-zero unknown tail is E2BIG, and nothing is written. */
	bq->size = sizeof(q) + 16;
	bq->handle = h;
	big[sizeof(q) + 15] = 1;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_QUERY, big), -E2BIG);
	assert_int_equal(bq->capacity, 0);
	big[sizeof(q) + 15] = 0;
	assert_int_equal(ioctl(ctx, DIO_IOC_QUERY, big), 0);
	check_answer(bq, h);
	assert_true(all_zero(big, sizeof(q), 8192));	/* beyond its struct */

	memset(big, 0, 8192);
	bq->size = 4096;
	bq->handle = h;
	big[4095] = 1;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_QUERY, big), -E2BIG);
	assert_int_equal(bq->capacity, 0);
	big[4095] = 0;
	assert_int_equal(ioctl(ctx, DIO_IOC_QUERY, big), 0);
	check_answer(bq, h);
	assert_true(all_zero(big, sizeof(q), 8192));

	memset(big, 0, 8192);
	bq->size = 4097;
	bq->handle = h;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_QUERY, big), -E2BIG);
	assert_int_equal(bq->capacity, 0);
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_QUERY, NULL), -EFAULT);
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_QUERY, unmapped_page()), -EFAULT);
	free(big);
}

/*
 * DIO_IOC_QUERY with a non-zero reserved field: the ABI's rule
 * (<linux/dio_batch.h>: "non-zero reserved or padding fields, are
 * -EINVAL"; struct dio_query: "@reserved: zero") applies to every struct.
 */
static void test_query_nonzero_reserved(void **state)
{
	int ctx = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE)), fd = tl_fd_keep(open_disk(O_RDWR));
	struct dio_query q;
	int h;

	assert_true(ctx >= 0);
	h = sys_dio_open(ctx, fd, 0);
	assert_true(h >= 1);
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.handle = h;
	q.reserved[0] = 1;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_QUERY, &q), -EINVAL);
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.handle = h;
	q.reserved[1] = 1ULL << 63;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_QUERY, &q), -EINVAL);
	/* The output fields are not read: whatever a reused struct holds. */
	memset(&q, 0xff, sizeof(q));
	memset(q.reserved, 0, sizeof(q.reserved));
	q.size = sizeof(q);
	q.handle = h;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_QUERY, &q), 0);
	assert_true(q.dev_major != ~0U && q.logical_block_size != ~0U);
}

static void test_thousand_opens_and_closes(void **state)
{
	int ctx = sys_dio_init(0, DIO_PRIVATE), fd = open_disk(O_RDWR), i, h;
	assert_int_equal(tl_slab_wait("dio_handle", 0, 5), 0);
	for (i = 0; i < 1000; i++) {
		h = sys_dio_open(ctx, fd, 0);
		assert_true(h >= 1);
		assert_int_equal(sys_dio_close(ctx, h), 0);
	}
	/* Nested references: 1000 opens, one handle, then 1000 closes. */
	for (i = 0; i < 1000; i++)
		assert_true(sys_dio_open(ctx, fd, 0) >= 1);
	assert_int_equal(tl_slab_wait("dio_handle", 1, 5), 1);
	h = sys_dio_open(ctx, fd, 0);
	for (i = 0; i < 1001; i++)
		assert_int_equal(sys_dio_close(ctx, h), 0);
	/* dio_handle_close_ioctl(): no reference left on this descriptor. */
	assert_int_equal(sys_dio_close(ctx, h), -1);
	assert_int_equal(errno, EBADF);
	close(fd);
	close(ctx);
	assert_int_equal(tl_slab_wait("dio_handle", 0, 5), 0);
}

/*
 * 100 one-MiB scsi_debug disks from @opts, spread over @hosts SCSI hosts:
 * all opened in one context, queried, half closed, the rest dropped with
 * the descriptor, and no handle left.
 */
/*
 * Batches whose requests alternate between @n handles (SUBMIT looks a
 * handle and its access up once per run of requests naming it): all of
 * them complete and the data reads back the same way; a batch stops at an
 * unknown handle between live ones.  The disks share scsi_debug's one
 * store, so every request has a block of its own; and its one queue of
 * 192 commands, which two hosts can overfill (TASK SET FULL, EIO), so at
 * most BATCH_CHUNK requests are in flight.
 */
#define BATCH_CHUNK	64U

/* Submit and wait for @nr requests, BATCH_CHUNK at a time: each whole. */
static void submit_chunks(int ctx, struct dio_request **rp, unsigned int nr)
{
	unsigned int i, k;

	for (i = 0; i < nr; i += k) {
		k = nr - i < BATCH_CHUNK ? nr - i : BATCH_CHUNK;
		assert_int_equal(sys_dio_submit(ctx, rp + i, k), k);
		assert_int_equal(sys_dio_wait(ctx, rp + i, k, NULL), k);
		for (unsigned int j = i; j < i + k; j++)
			assert_int_equal(rp[j]->result, 4096);
	}
}

static void batch_across_handles(int ctx, const int *h, unsigned int n)
{
	const unsigned int nr = n * 2;
	struct dio_request *r = calloc(nr, sizeof(*r)), **rp;
	uint8_t *w = tl_xalloc((size_t)nr * 4096, 0);
	uint8_t *b = tl_xalloc((size_t)nr * 4096, 0);
	unsigned int j;

	rp = calloc(nr, sizeof(*rp));
	assert_non_null(r);
	assert_non_null(rp);
	for (j = 0; j < nr; j++) {
		tl_fill(w + (size_t)j * 4096, 4096, 0xba7c0000 + j);
		dio_req_prep_write(&r[j], h[j % n], w + (size_t)j * 4096, 4096,
				   (uint64_t)j * 4096);
		rp[j] = &r[j];
	}
	submit_chunks(ctx, rp, nr);
	for (j = 0; j < nr; j++)
		dio_req_prep_read(&r[j], h[j % n], b + (size_t)j * 4096, 4096,
				  (uint64_t)j * 4096);
	submit_chunks(ctx, rp, nr);
	assert_memory_equal(w, b, (size_t)nr * 4096);

	/* h[0], h[1], a handle never issued, h[2]: two are queued. */
	dio_req_prep_read(&r[0], h[0], b, 4096, 0);
	dio_req_prep_read(&r[1], h[1], b + 4096, 4096, 0);
	dio_req_prep_read(&r[2], 99999, b + 8192, 4096, 0);
	dio_req_prep_read(&r[3], h[2], b + 12288, 4096, 0);
	assert_int_equal(sys_dio_submit(ctx, rp, 4), 2);
	assert_int_equal(sys_dio_wait(ctx, rp, 2, NULL), 2);
	free(rp);
	free(r);
	free(w);
	free(b);
}

static void hundred_devices(const char *opts, int hosts)
{
	static char names[128][32];
	int ctx, n = 0, i, h[128], host[128], nhosts = 0;
	struct dio_query q;
	uint64_t t0 = tl_now_ns();
	char dev[64];

	assert_int_equal(tl_scsi_debug_load(opts, dev, sizeof(dev)), 0);
	/* A hang guard: 100 disks appear in seconds on a loaded stock guest. */
	for (i = 0; i < 600 * tl_slow_factor(); i++) {
		n = tl_scsi_debug_disks(names, 128);
		if (n >= 100)
			break;
		usleep(100000);
	}
	assert_int_equal(n, 100);
	print_message("# %s: 100 disks in %llu ms\n", opts,
		      (unsigned long long)((tl_now_ns() - t0) / 1000000));
	for (i = 0; i < n; i++) {
		char hctl[64];
		int k, hn;

		tl_scsi_hctl(names[i], hctl, sizeof(hctl));
		assert_true(hctl[0] >= '0' && hctl[0] <= '9');
		hn = atoi(hctl);
		for (k = 0; k < nhosts && host[k] != hn; k++)
			;
		if (k == nhosts)
			host[nhosts++] = hn;
	}
	assert_int_equal(nhosts, hosts);
	ctx = sys_dio_init(0, DIO_PRIVATE);
	assert_true(ctx >= 0);
	for (i = 0; i < n; i++) {
		char path[64];
		struct stat st;
		int fd;

		snprintf(path, sizeof(path), "/dev/%.31s", names[i]);
		/* stat(), not a shell's test -b: 100 shells cost ~30 s on debug. */
		assert_int_equal(stat(path, &st), 0);
		assert_true(S_ISBLK(st.st_mode));
		fd = open(path, O_RDWR);
		assert_true(fd >= 0);
		h[i] = sys_dio_open(ctx, fd, 0);
		assert_true(h[i] >= 1);
		close(fd);
	}
	assert_int_equal(tl_slab_wait("dio_handle", 100, 5), 100);
	for (i = 0; i < n; i++) {
		assert_int_equal(sys_dio_query(ctx, h[i], &q), 0);
		assert_int_equal(q.capacity, 1ULL << 20);
	}
	batch_across_handles(ctx, h, n);
	for (i = 0; i < n / 2; i++)
		assert_int_equal(sys_dio_close(ctx, h[i]), 0);
	close(ctx);		/* the rest go with the descriptor */
	assert_int_equal(tl_slab_wait("dio_handle", 0, 5), 0);
	print_message("# %s: done in %llu ms\n", opts,
		      (unsigned long long)((tl_now_ns() - t0) / 1000000));
	/* Back to the suite's disk. */
	assert_int_equal(tl_scsi_debug_load("dev_size_mb=32 dif=1 dix=1 guard=0",
					    disk, sizeof(disk)), 0);
}

static void test_hundred_devices(void **state)
{
	hundred_devices("dev_size_mb=1 num_tgts=10 max_luns=10", 1);
}

/* The same hundred behind two hosts (scsi_debug's add_host). */
static void test_hundred_devices_two_hosts(void **state)
{
	hundred_devices("dev_size_mb=1 add_host=2 num_tgts=5 max_luns=10", 2);
}

static void test_unload_refused_while_context_exists(void **state)
{
	int ctx = sys_dio_init(0x6000, DIO_CREAT), fd = open_disk(O_RDWR);

	assert_true(ctx >= 0);
	assert_true(sys_dio_open(ctx, fd, 0) >= 1);
	/*
	 * The module is live and referenced: try_stop_module() refuses with
	 * EWOULDBLOCK (EBUSY is only for a module coming or going).
	 */
	assert_int_equal(syscall(SYS_delete_module, "dio_batch", O_NONBLOCK), -1);
	assert_int_equal(errno, EWOULDBLOCK);
	assert_true(tl_module_loaded("dio_batch"));
	close(ctx);
	close(fd);
	assert_int_equal(tl_dio_unload(), 0);
	assert_false(tl_module_loaded("dio_batch"));
	assert_int_equal(tl_dio_load(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_query_close),
		cmocka_unit_test(test_same_device_same_handle_refcounted),
		cmocka_unit_test(test_claim_is_exclusive),
		cmocka_unit_test(test_claim_conflicts_with_mount_and_dm),
		cmocka_unit_test(test_readonly_handle),
		cmocka_unit_test(test_writeonly_handle),
		cmocka_unit_test(test_open_handle_not_written_back),
		cmocka_unit_test(test_shared_and_revoked_on_exit),
		cmocka_unit_test(test_revoked_for_other_process_after_opener_exits),
		cmocka_unit_test_teardown(test_inflight_io_of_exiting_opener,
					  cleanup),
		cmocka_unit_test(test_open_bad_descriptors),
		cmocka_unit_test_teardown(test_open_bad_args, cleanup),
		cmocka_unit_test_teardown(test_close_bad_args, cleanup),
		cmocka_unit_test_teardown(test_query_bad_args, cleanup),
		cmocka_unit_test_teardown(test_query_nonzero_reserved, cleanup),
		cmocka_unit_test(test_thousand_opens_and_closes),
		cmocka_unit_test(test_hundred_devices),
		cmocka_unit_test(test_hundred_devices_two_hosts),
		cmocka_unit_test(test_unload_refused_while_context_exists),
	};

	return cmocka_run_group_tests_name("handle", tests, setup, teardown);
}
