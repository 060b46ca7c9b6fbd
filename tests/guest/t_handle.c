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

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	int ret = ioctl(fd, cmd, arg);

	return ret < 0 ? -errno : ret;
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
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, 4096);
	/*
	 * A writable descriptor opening the same device widens the handle:
	 * the same number, and now writes go through, for both openers.
	 */
	assert_int_equal(sys_dio_open(ctx, rw, 0), h);
	dio_req_prep_write(&r, h, buf, 4096, 0);
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, 4096);
	/* The writable opener goes; the handle keeps what it was given. */
	assert_int_equal(sys_dio_close(ctx, h), 0);
	dio_req_prep_write(&r, h, buf, 4096, 4096);
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, 4096);
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
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, 4096);
	dio_req_prep_read(&r, h, buf, 4096, 8192);
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(sys_dio_open(other, ro, 0), -1);
	assert_int_equal(errno, EBUSY);
	/* Widened by a readable opener: the read returns what was written. */
	assert_int_equal(sys_dio_open(ctx, ro, 0), h);
	memset(buf, 0, 4096);
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, 4096);
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
	assert_int_equal(xioctl(ctx, DIO_IOC_OPEN, o), -EFAULT);
	/* Handles are numbered from 1: the first would have been 1. */
	assert_int_equal(sys_dio_close(ctx, 1), -1);
	assert_int_equal(errno, EBADF);
	h = sys_dio_open(other, fd, 0);
	assert_true(h >= 1);
	close(other);
	/* And once more while the context holds the device already. */
	h = sys_dio_open(ctx, fd, 0);
	assert_true(h >= 1);
	assert_int_equal(xioctl(ctx, DIO_IOC_OPEN, o), -EFAULT);
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
	struct dio_query q;
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
	/* The claim went with it: the device can be claimed again. */
	fd = open_disk(O_RDWR);
	assert_true(sys_dio_open(ctx, fd, 0) >= 1);
	close(fd);
	close(ctx);
	close(pipefd[0]);
	close(pipefd[1]);
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
	/* A context descriptor is not a block device either. */
	assert_int_equal(sys_dio_open(ctx, ctx, 0), -1);
	assert_int_equal(errno, ENOTBLK);

	fd = open_disk(O_RDWR);
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.fd = fd;
	o.flags = 1U << 9;
	assert_int_equal(xioctl(ctx, DIO_IOC_OPEN, &o), -EINVAL);
	o.flags = 0;
	o.reserved[0] = 1;
	assert_int_equal(xioctl(ctx, DIO_IOC_OPEN, &o), -EINVAL);
	o.reserved[0] = 0;
	o.size = 4;
	assert_int_equal(xioctl(ctx, DIO_IOC_OPEN, &o), -EINVAL);
	assert_int_equal(xioctl(ctx, DIO_IOC_OPEN, NULL), -EFAULT);
	unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_int_equal(xioctl(ctx, DIO_IOC_OPEN, unmapped), -EFAULT);
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
	assert_int_equal(sys_dio_close(ctx, h), -1);
	close(fd);
	close(ctx);
	assert_int_equal(tl_slab_wait("dio_handle", 0, 5), 0);
}

static void test_hundred_devices(void **state)
{
	static char names[128][32];
	int ctx, n, i, h[128];
	struct dio_query q;
	char dev[64];

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=1 num_tgts=10 max_luns=10",
					    dev, sizeof(dev)), 0);
	for (i = 0; i < 300; i++) {
		n = tl_scsi_debug_disks(names, 128);
		if (n >= 100)
			break;
		usleep(100000);
	}
	assert_int_equal(n, 100);
	ctx = sys_dio_init(0, DIO_PRIVATE);
	for (i = 0; i < n; i++) {
		char path[64];
		int fd;

		snprintf(path, sizeof(path), "/dev/%.31s", names[i]);
		assert_int_equal(tl_sh("test -b %s", path), 0);
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
	for (i = 0; i < n / 2; i++)
		assert_int_equal(sys_dio_close(ctx, h[i]), 0);
	close(ctx);		/* the rest go with the descriptor */
	assert_int_equal(tl_slab_wait("dio_handle", 0, 5), 0);
	/* Back to the suite's disk. */
	assert_int_equal(tl_scsi_debug_load("dev_size_mb=32 dif=1 dix=1 guard=0",
					    disk, sizeof(disk)), 0);
}

static void test_unload_refused_while_context_exists(void **state)
{
	int ctx = sys_dio_init(0x6000, DIO_CREAT), fd = open_disk(O_RDWR);

	assert_true(ctx >= 0);
	assert_true(sys_dio_open(ctx, fd, 0) >= 1);
	assert_int_equal(syscall(SYS_delete_module, "dio_batch", O_NONBLOCK), -1);
	assert_true(errno == EWOULDBLOCK || errno == EBUSY);
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
		cmocka_unit_test(test_open_bad_descriptors),
		cmocka_unit_test(test_thousand_opens_and_closes),
		cmocka_unit_test(test_hundred_devices),
		cmocka_unit_test(test_unload_refused_while_context_exists),
	};

	return cmocka_run_group_tests_name("handle", tests, setup, teardown);
}
