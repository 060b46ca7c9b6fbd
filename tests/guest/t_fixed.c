// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Registered buffers (ABI 3): DIO_IOC_REGISTER, DIO_IOC_UNREGISTER and
 * requests with DIO_REQ_FIXED, on a scsi_debug disk with PI (DIF type 1,
 * DIX, 512-byte sectors), run by a user who is not root (uid 1000) unless
 * a test says otherwise.
 *
 *  - data written from and read into registered anonymous memory and a
 *    memfd is the data on the disk (checked against a plain O_DIRECT
 *    descriptor), in requests of one block to 2 MiB at addresses that are
 *    not page-aligned (a request of more pages than one bio holds is cut
 *    into whole blocks);
 *  - reads are verified by the module against the device's PI, and a read
 *    with a PI buffer returns the device's tuples;
 *  - every bad argument gets its documented errno, and a request outside
 *    its buffer never reaches the device;
 *  - the pages are charged to RLIMIT_MEMLOCK per user and show in VmPin;
 *    unregistering, closing or a request in flight give back exactly what
 *    was charged, when the last user of the pages is gone;
 *  - the buffers belong to the registering process: a fork()ed child gets
 *    EXDEV, and its copy of the memory is never written by the parent's
 *    reads.
 *
 * Each test runs in a forked process (dropped to uid 1000 where it says
 * so) whose first failed check is printed and fails the test.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

#define KiB		1024ULL
#define MiB		(1024 * KiB)
#define U_USER		1000
#define PAGE		4096ULL

static char disk[64];
static int dfd = -1;		/* root's O_DIRECT descriptor of the disk */
static unsigned int ctl_mode;
static bool ctl_mode_saved;

/* ---- checks inside the test's process ---- */

/* Checks in the test's process, a tl_run_as() child, and in its own children. */
#define CHECK TL_CHILD_CHECK

static const char *en(int e)
{
	const char *s = e ? strerrorname_np(e) : "0";

	return s ? s : "?";
}

/* @expr must fail with errno @e. */
#define CHECK_ERR(expr, e)						\
	do {								\
		long r_ = (expr);					\
		int e_ = errno;						\
		CHECK(r_ == -1 && e_ == (e), "returned %ld errno %s, want %s", \
		      r_, en(e_), en(e));				\
	} while (0)

#define CHECK_OK(expr)							\
	do {								\
		long r_ = (expr);					\
		int e_ = errno;						\
		CHECK(r_ >= 0, "returned %ld errno %s", r_, en(e_));	\
	} while (0)

/* tl_run_as()'s function: the test's, which exits at its first failed check. */
static int child_main(void *fn)
{
	(*(void (**)(void))fn)();
	return 0;
}

/*
 * Run @fn in a child (as uid 1000 with @drop, else as root); the test
 * fails if it does.  The child inherits group_setup()'s RLIMIT_MEMLOCK.
 */
static void run_child(void (*fn)(void), bool drop)
{
	uid_t id = drop ? U_USER : 0;

	assert_int_equal(tl_run_as(id, id, 0, child_main, &fn), 0);
}

/* ---- helpers ---- */

/*
 * Not tl_dev_open() (tests/lib/tl_dev.h): this one runs in the children
 * of run_child(), which report with CHECK() rather than cmocka, and opens
 * the one shared descriptor in a private context, unclaimed.
 */
struct fx_dev {
	int ctx;
	int h;
	struct dio_query q;
};

static struct fx_dev fx_dev_open(void)
{
	struct fx_dev d;

	d.ctx = sys_dio_init(0, DIO_PRIVATE);
	CHECK(d.ctx >= 0, "sys_dio_init: %s", en(errno));
	/* Not claimed: the tests open the disk in several contexts. */
	d.h = sys_dio_open(d.ctx, dfd, DIO_OPEN_NOCLAIM);
	CHECK(d.h >= 0, "sys_dio_open: %s", en(errno));
	CHECK_OK(sys_dio_query(d.ctx, d.h, &d.q));
	CHECK(d.q.logical_block_size == 512 && d.q.pi_interval == 512,
	      "lbs %u interval %u", d.q.logical_block_size, d.q.pi_interval);
	return d;
}

/* DIO_IOC_REGISTER or _UNREGISTER as the ioctl, fields as given. */
static int reg_raw(int ctx, unsigned long cmd, const struct dio_fixed_buf *b,
		   unsigned int nr, unsigned int flags)
{
	struct dio_register r = {
		.size = sizeof(r), .nr = nr, .bufs = (uintptr_t)b,
		.flags = flags,
	};

	return ioctl(ctx, cmd, &r);
}

/* DIO_IOC_REGISTER of the one buffer [@addr, @addr + @len). */
static int reg_one(int ctx, uint64_t addr, uint64_t len)
{
	struct dio_fixed_buf b = { addr, len };

	return reg_raw(ctx, DIO_IOC_REGISTER, &b, 1, 0);
}

/* Submit one request and wait for it: its result. */
static long io1(int ctx, struct dio_request *r)
{
	struct dio_request *rp = r;
	int ret;

	r->result = -999;
	ret = sys_dio_submit(ctx, &rp, 1);
	CHECK(ret == 1, "submit: %d %s", ret, en(errno));
	ret = sys_dio_wait(ctx, &rp, 1, NULL);
	CHECK(ret == 1, "wait: %d %s", ret, en(errno));
	return r->result;
}

/* SUBMIT of one request that must fail with @e, and leave it untouched. */
static void submit_fails(int ctx, struct dio_request *r, int e)
{
	struct dio_request *rp = r;

	r->result = -999;
	CHECK_ERR(sys_dio_submit(ctx, &rp, 1), e);
	CHECK(r->result == -999, "result written: %lld", (long long)r->result);
}

/* VmPin of this process, kB. */
static long vmpin_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	CHECK(f, "open status");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	CHECK(kb >= 0, "no VmPin");
	return kb;
}

static void set_memlock(rlim_t bytes)
{
	struct rlimit rl = { bytes, bytes };

	CHECK_OK(setrlimit(RLIMIT_MEMLOCK, &rl));
}

static void *map_anon(size_t len, int byte)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED, "mmap %zu: %s", len, en(errno));
	memset(p, byte, len);
	return p;
}

/* The disk's bytes at @off, through root's O_DIRECT descriptor. */
static void disk_read(void *buf, size_t len, uint64_t off)
{
	CHECK(pread(dfd, buf, len, off) == (ssize_t)len, "pread: %s",
	      en(errno));
}

/* ---- tests ---- */

static void test_features(void **state)
{
	struct dio_features f = { .size = sizeof(f) };

	(void)state;
	assert_int_equal(sys_dio_features(&f), 0);
	assert_true(f.abi_version >= 3);
	assert_true(f.features & DIO_FEAT_FIXED_BUFS);
	assert_true(f.req_flags & DIO_REQ_FIXED);
	assert_int_equal(f.max_fixed_bufs, 1024);
	assert_true(f.max_fixed_buf_bytes == 1ULL << 30);
}

/*
 * Write from registered anonymous memory, read back into a registered
 * memfd, requests from one block to 2 MiB at addresses 512 bytes past a
 * page; the disk holds what was written.
 */
static void child_roundtrip(void)
{
	const size_t alen = 4 * MiB, mlen = 3 * MiB;
	static const struct { uint64_t off, len; } io[] = {
		{ 0, 512 }, { 512, 4096 }, { 4096 + 512, 64 * KiB },
		{ 1536, 2 * MiB + 512 },	/* more pages than a bio holds */
	};
	struct dio_request r;
	struct iovec iov[2];
	uint8_t *a, *m, *chk;
	struct fx_dev d;
	int mfd;
	size_t i;

	set_memlock(16 * MiB);
	d = fx_dev_open();
	a = map_anon(alen, 0);
	mfd = memfd_create("t_fixed", 0);
	CHECK(mfd >= 0, "memfd_create: %s", en(errno));
	CHECK_OK(ftruncate(mfd, mlen));
	m = mmap(NULL, mlen, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	CHECK(m != MAP_FAILED, "mmap memfd: %s", en(errno));
	memset(m, 0xee, mlen);
	chk = map_anon(alen, 0);
	iov[0] = (struct iovec){ a, alen };
	iov[1] = (struct iovec){ m, mlen };
	CHECK_OK(sys_dio_register_buffers(d.ctx, iov, 2));
	CHECK(vmpin_kb() == (long)((alen + mlen) / KiB), "VmPin %ld kB",
	      vmpin_kb());

	for (i = 0; i < sizeof(io) / sizeof(io[0]); i++) {
		uint64_t dev_off = (1 + 3 * i) * MiB;
		uint8_t *src = a + 512 + io[i].off;
		uint8_t *dst = m + 512 + io[i].off % (512 * KiB);

		tl_fill(src, io[i].len, 0xf1c0 + i);
		dio_req_prep_write_fixed(&r, d.h, src, io[i].len, dev_off, 0);
		CHECK(io1(d.ctx, &r) == (long)io[i].len, "write %zu: %lld",
		      i, (long long)r.result);
		dio_req_prep_read_fixed(&r, d.h, dst, io[i].len, dev_off, 1);
		CHECK(io1(d.ctx, &r) == (long)io[i].len, "read %zu: %lld", i,
		      (long long)r.result);
		CHECK(!memcmp(dst, src, io[i].len), "read %zu: data differs", i);
		/* The bytes before and after the request are untouched. */
		CHECK(dst[-1] == 0xee && dst[io[i].len] == 0xee,
		      "read %zu wrote outside its range", i);
		disk_read(chk, io[i].len, dev_off);
		CHECK(!memcmp(chk, src, io[i].len), "disk %zu differs", i);
		memset(dst, 0xee, io[i].len);
	}
	CHECK_OK(sys_dio_unregister_buffers(d.ctx));
	CHECK(vmpin_kb() == 0, "VmPin %ld kB after unregister", vmpin_kb());
	CHECK_ERR(sys_dio_unregister_buffers(d.ctx), ENXIO);
	close(d.ctx);
}

static void test_roundtrip(void **state)
{
	(void)state;
	run_child(child_roundtrip, true);
}

/*
 * PI: a fixed read without a PI buffer is verified by the module (the
 * device's tuples, which the kernel generated on the fixed write); with a
 * PI buffer it returns them: type 1 ref tags are the sector numbers.
 */
static void child_pi(void)
{
	const uint64_t off = 40 * MiB, len = 16 * KiB;
	uint8_t *a, pi[16 * KiB / 512 * 8];
	struct dio_request r;
	struct iovec iov;
	struct fx_dev d;
	unsigned int i;

	set_memlock(1 * MiB);
	d = fx_dev_open();
	a = map_anon(256 * KiB, 0);
	iov = (struct iovec){ a, 256 * KiB };
	CHECK_OK(sys_dio_register_buffers(d.ctx, &iov, 1));
	tl_fill(a, len, 0x9100);
	dio_req_prep_write_fixed(&r, d.h, a, len, off, 0);
	CHECK(io1(d.ctx, &r) == (long)len, "write: %lld", (long long)r.result);
	dio_req_prep_read_fixed(&r, d.h, a + 64 * KiB, len, off, 0);
	CHECK(io1(d.ctx, &r) == (long)len, "verified read: %lld",
	      (long long)r.result);
	CHECK(!memcmp(a, a + 64 * KiB, len), "verified read: data differs");
	memset(pi, 0xa5, sizeof(pi));
	dio_req_prep_read_fixed(&r, d.h, a + 128 * KiB, len, off, 0);
	CHECK_OK(dio_req_set_pi(&r, pi, sizeof(pi), 0, 0, 0));
	CHECK(io1(d.ctx, &r) == (long)len, "read with PI: %lld",
	      (long long)r.result);
	CHECK(!memcmp(a, a + 128 * KiB, len), "read with PI: data differs");
	for (i = 0; i < len / 512; i++) {
		const uint8_t *t = pi + 8 * i;
		uint32_t ref = (uint32_t)t[4] << 24 | t[5] << 16 | t[6] << 8 |
			       t[7];

		CHECK(ref == (uint32_t)(off / 512 + i), "tuple %u ref %u", i,
		      ref);
	}
	close(d.ctx);
}

static void test_pi(void **state)
{
	(void)state;
	run_child(child_pi, true);
}

/* Every bad argument of REGISTER, UNREGISTER and a fixed request. */
static void child_errors(void)
{
	struct dio_fixed_buf b[2], many[1025];
	struct dio_register rg = { .size = sizeof(rg), .nr = 1 };
	struct dio_request r;
	uint8_t *a, *ro, *hole;
	struct fx_dev d;
	int fd;

	set_memlock(8 * MiB);
	d = fx_dev_open();
	a = map_anon(64 * KiB, 0);
	b[0] = (struct dio_fixed_buf){ (uintptr_t)a, 32 * KiB };
	b[1] = (struct dio_fixed_buf){ (uintptr_t)(a + 32 * KiB), 32 * KiB };

	/* Nothing registered. */
	dio_req_prep_read_fixed(&r, d.h, a, 4096, 0, 0);
	submit_fails(d.ctx, &r, EINVAL);
	CHECK_ERR(sys_dio_unregister_buffers(d.ctx), ENXIO);

	/* REGISTER's fields. */
	CHECK_ERR(reg_raw(d.ctx, DIO_IOC_REGISTER, b, 0, 0), EINVAL);
	for (unsigned int i = 0; i < 1025; i++)
		many[i] = b[0];
	CHECK_ERR(reg_raw(d.ctx, DIO_IOC_REGISTER, many, 1025, 0), EINVAL);
	CHECK_ERR(reg_raw(d.ctx, DIO_IOC_REGISTER, b, 1, 1), EINVAL);
	rg.bufs = (uintptr_t)b;
	rg.reserved[1] = 1;
	CHECK_ERR(ioctl(d.ctx, DIO_IOC_REGISTER, &rg), EINVAL);
	rg.reserved[1] = 0;
	rg.pad = 1;
	CHECK_ERR(ioctl(d.ctx, DIO_IOC_REGISTER, &rg), EINVAL);
	CHECK_ERR(reg_raw(d.ctx, DIO_IOC_REGISTER, (void *)8, 1, 0), EFAULT);
	CHECK_ERR(reg_one(d.ctx, (uintptr_t)a, 0), EINVAL);
	CHECK_ERR(reg_one(d.ctx, (uintptr_t)a, (1ULL << 30) + 1), EINVAL);
	CHECK_ERR(reg_one(d.ctx, ~0ULL - 4095, 8192), EFAULT);

	/* Memory it must not take: a hole, read-only, a file's mapping. */
	hole = map_anon(3 * PAGE, 0);
	CHECK_OK(munmap(hole + PAGE, PAGE));
	CHECK_ERR(reg_one(d.ctx, (uintptr_t)hole, 3 * PAGE), EFAULT);
	ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(ro != MAP_FAILED, "mmap ro");
	CHECK_ERR(reg_one(d.ctx, (uintptr_t)ro, PAGE), EFAULT);
	fd = open("/proc/self/exe", O_RDONLY);
	CHECK(fd >= 0, "open exe");
	ro = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(ro != MAP_FAILED, "mmap exe: %s", en(errno));
	CHECK_ERR(reg_one(d.ctx, (uintptr_t)ro, PAGE), EOPNOTSUPP);
	close(fd);
	CHECK(vmpin_kb() == 0, "VmPin %ld kB after refusals", vmpin_kb());

	/* Registered: a second set, and UNREGISTER's fields. */
	CHECK_OK(reg_raw(d.ctx, DIO_IOC_REGISTER, b, 2, 0));
	CHECK_ERR(reg_raw(d.ctx, DIO_IOC_REGISTER, b, 2, 0), EBUSY);
	CHECK_ERR(reg_raw(d.ctx, DIO_IOC_UNREGISTER, b, 0, 0), EINVAL);
	CHECK_ERR(reg_raw(d.ctx, DIO_IOC_UNREGISTER, NULL, 1, 0), EINVAL);
	CHECK_ERR(reg_raw(d.ctx, DIO_IOC_UNREGISTER, NULL, 0, 1), EINVAL);

	/* Requests. */
	dio_req_prep_read_fixed(&r, d.h, a, 4096, 0, 2);	/* no such */
	submit_fails(d.ctx, &r, EINVAL);
	dio_req_prep_read_fixed(&r, d.h, a + 30 * KiB, 4096, 0, 0);
	submit_fails(d.ctx, &r, EFAULT);	/* past buffer 0's end */
	dio_req_prep_read_fixed(&r, d.h, a + 30 * KiB, 4096, 0, 1);
	submit_fails(d.ctx, &r, EFAULT);	/* before buffer 1 */
	dio_req_prep_read_fixed(&r, d.h, a - 4096, 4096, 0, 0);
	submit_fails(d.ctx, &r, EFAULT);
	dio_req_prep_read_fixed(&r, d.h, a + 1, 512, 0, 0);
	submit_fails(d.ctx, &r, EINVAL);	/* misaligned */
	dio_req_prep_read_fixed(&r, d.h, a, 100, 0, 0);
	submit_fails(d.ctx, &r, EINVAL);	/* not whole blocks */
	dio_req_prep_read_fixed(&r, d.h, a, 0, 0, 0);
	submit_fails(d.ctx, &r, EINVAL);
	dio_req_prep_read_fixed(&r, d.h, a, 4096, d.q.capacity, 0);
	submit_fails(d.ctx, &r, ENXIO);
	dio_req_prep_read_fixed(&r, d.h, a, 4096, 0, 0);
	r.flags |= DIO_REQ_IOVEC;
	submit_fails(d.ctx, &r, EINVAL);
	dio_req_prep_read(&r, d.h, a, 4096, 0);
	r.buf_index = 1;				/* without FIXED */
	submit_fails(d.ctx, &r, EINVAL);
	dio_req_prep_flush(&r, d.h);
	r.flags = DIO_REQ_FIXED;
	submit_fails(d.ctx, &r, EINVAL);
	/* The good one, last: the refusals left nothing in flight. */
	dio_req_prep_read_fixed(&r, d.h, a + 28 * KiB, 4096, 0, 0);
	CHECK(io1(d.ctx, &r) == 4096, "good read: %lld", (long long)r.result);
	CHECK_OK(sys_dio_unregister_buffers(d.ctx));
	/* Unregistered: the same request is refused. */
	submit_fails(d.ctx, &r, EINVAL);
	close(d.ctx);
}

static void test_errors(void **state)
{
	(void)state;
	run_child(child_errors, true);
}

/*
 * RLIMIT_MEMLOCK: whole pages per buffer, per user across descriptors and
 * processes; given back on unregister and on close.
 */
static void child_memlock(void)
{
	struct fx_dev d = fx_dev_open(), d2 = fx_dev_open();
	uint8_t *a = map_anon(1 * MiB, 0);
	struct iovec iov;
	int status;
	pid_t pid;

	set_memlock(256 * KiB);
	iov = (struct iovec){ a, 512 * KiB };
	CHECK_ERR(sys_dio_register_buffers(d.ctx, &iov, 1), ENOMEM);
	CHECK(vmpin_kb() == 0, "VmPin %ld kB after ENOMEM", vmpin_kb());
	/* 252 KiB from 512 bytes into a page: 64 pages, the whole limit. */
	iov = (struct iovec){ a + 512, 252 * KiB };
	CHECK_OK(sys_dio_register_buffers(d.ctx, &iov, 1));
	CHECK(vmpin_kb() == 256, "VmPin %ld kB", vmpin_kb());
	iov = (struct iovec){ a + 512 * KiB, 4096 };
	CHECK_ERR(sys_dio_register_buffers(d2.ctx, &iov, 1), ENOMEM);

	/* Another process of the same user, with its own limit. */
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		struct fx_dev c = fx_dev_open();

		CHECK_ERR(sys_dio_register_buffers(c.ctx, &iov, 1), ENOMEM);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      !WEXITSTATUS(status), "child 1 failed");

	CHECK_OK(sys_dio_unregister_buffers(d.ctx));
	CHECK(vmpin_kb() == 0, "VmPin %ld kB after unregister", vmpin_kb());
	CHECK_OK(sys_dio_register_buffers(d2.ctx, &iov, 1));
	CHECK(vmpin_kb() == 4, "VmPin %ld kB", vmpin_kb());
	/* Closing the descriptor unregisters. */
	close(d2.ctx);
	CHECK(vmpin_kb() == 0, "VmPin %ld kB after close", vmpin_kb());
	iov = (struct iovec){ a, 256 * KiB };
	CHECK_OK(sys_dio_register_buffers(d.ctx, &iov, 1));
	close(d.ctx);
}

static void test_memlock(void **state)
{
	(void)state;
	run_child(child_memlock, true);
}

/* Root has CAP_IPC_LOCK: not held to RLIMIT_MEMLOCK, still in VmPin. */
static void child_root_uncharged(void)
{
	struct fx_dev d = fx_dev_open();
	uint8_t *a = map_anon(1 * MiB, 0);
	struct iovec iov = { a, 1 * MiB };

	set_memlock(0);
	CHECK_OK(sys_dio_register_buffers(d.ctx, &iov, 1));
	CHECK(vmpin_kb() == 1024, "VmPin %ld kB", vmpin_kb());
	close(d.ctx);
	CHECK(vmpin_kb() == 0, "VmPin %ld kB after close", vmpin_kb());
}

static void test_root_uncharged(void **state)
{
	(void)state;
	run_child(child_root_uncharged, false);
}

/*
 * Requests in flight (scsi_debug delays every command) keep their pages
 * after UNREGISTER and after close, and give them back when they end.
 * "In flight" when VmPin is read: a SUBMIT of 8 reads and an UNREGISTER
 * or a close() before it, milliseconds on a loaded stock guest, tens of
 * them on the debug kernel; the reads take 500 ms (x tl_slow_factor()).
 */
static void child_inflight(void)
{
	const unsigned int n = 8;
	struct dio_request r[8], *rp[8];
	uint8_t *a = map_anon(n * 64 * KiB, 0), *chk = map_anon(64 * KiB, 0);
	struct iovec iov = { a, n * 64 * KiB };
	struct fx_dev d;
	unsigned int i;
	int ret;

	set_memlock(4 * MiB);
	d = fx_dev_open();
	CHECK_OK(sys_dio_register_buffers(d.ctx, &iov, 1));
	for (i = 0; i < n; i++) {
		dio_req_prep_read_fixed(&r[i], d.h, a + i * 64 * KiB, 64 * KiB,
					i * 64 * KiB, 0);
		rp[i] = &r[i];
	}
	ret = sys_dio_submit(d.ctx, rp, n);
	CHECK(ret == (int)n, "submit: %d %s", ret, en(errno));
	CHECK_OK(sys_dio_unregister_buffers(d.ctx));
	CHECK(vmpin_kb() == (long)(n * 64), "VmPin %ld kB in flight",
	      vmpin_kb());
	ret = sys_dio_wait(d.ctx, rp, n, NULL);
	CHECK(ret == (int)n, "wait: %d %s", ret, en(errno));
	for (i = 0; i < n; i++) {
		CHECK(r[i].result == 64 * KiB, "read %u: %lld", i,
		      (long long)r[i].result);
		disk_read(chk, 64 * KiB, i * 64 * KiB);
		CHECK(!memcmp(chk, a + i * 64 * KiB, 64 * KiB),
		      "read %u: data differs", i);
	}
	CHECK(vmpin_kb() == 0, "VmPin %ld kB after reporting", vmpin_kb());

	/* Closed with the reads in flight: the reaper gives the pages back. */
	CHECK_OK(sys_dio_register_buffers(d.ctx, &iov, 1));
	ret = sys_dio_submit(d.ctx, rp, n);
	CHECK(ret == (int)n, "submit: %d %s", ret, en(errno));
	close(d.ctx);
	CHECK(vmpin_kb() == (long)(n * 64), "VmPin %ld kB after close",
	      vmpin_kb());
	/* The delay above, and the reaper: 5 s (x tl_slow_factor()). */
	for (i = 0; i < 100U * tl_slow_factor() && vmpin_kb(); i++)
		usleep(50 * 1000);
	CHECK(vmpin_kb() == 0, "VmPin %ld kB %d s after close", vmpin_kb(),
	      5 * tl_slow_factor());
}

static void test_inflight(void **state)
{
	(void)state;
	assert_int_equal(tl_scsi_debug_delay_ms(500 * tl_slow_factor()), 0);
	run_child(child_inflight, true);
	assert_int_equal(tl_scsi_debug_ndelay(0), 0);
}

/*
 * The buffers are the registering process's: a fork()ed child gets EXDEV,
 * and the parent's fixed reads land in the parent's pages, never in the
 * child's copy of them.
 */
static void child_fork(void)
{
	uint8_t *a = map_anon(64 * KiB, 0x11), *chk = map_anon(4096, 0);
	struct iovec iov = { a, 64 * KiB };
	struct dio_request r;
	int go[2], done[2];
	struct fx_dev d;
	char c;
	pid_t pid;
	int status;
	size_t i;

	set_memlock(1 * MiB);
	d = fx_dev_open();
	CHECK_OK(sys_dio_register_buffers(d.ctx, &iov, 1));
	CHECK_OK(pipe(go));
	CHECK_OK(pipe(done));
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (!pid) {
		CHECK_ERR(sys_dio_unregister_buffers(d.ctx), EXDEV);
		CHECK_ERR(sys_dio_register_buffers(d.ctx, &iov, 1), EXDEV);
		dio_req_prep_read_fixed(&r, d.h, a, 4096, 0, 0);
		submit_fails(d.ctx, &r, EXDEV);
		CHECK(write(go[1], "g", 1) == 1, "pipe");
		CHECK(read(done[0], &c, 1) == 1, "pipe");
		for (i = 0; i < 64 * KiB; i++)
			CHECK(a[i] == 0x11, "child's byte %zu is 0x%02x", i,
			      a[i]);
		_exit(0);
	}
	CHECK(read(go[0], &c, 1) == 1, "pipe");
	tl_fill(chk, 4096, 0xf0f0);
	CHECK(pwrite(dfd, chk, 4096, 8 * MiB) == 4096, "pwrite");
	for (i = 0; i < 16; i++) {
		dio_req_prep_read_fixed(&r, d.h, a + i * 4096, 4096, 8 * MiB,
					0);
		CHECK(io1(d.ctx, &r) == 4096, "read %zu: %lld", i,
		      (long long)r.result);
		CHECK(!memcmp(a + i * 4096, chk, 4096), "read %zu differs", i);
	}
	CHECK(write(done[1], "d", 1) == 1, "pipe");
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      !WEXITSTATUS(status), "child failed");
	close(d.ctx);
}

static void test_fork(void **state)
{
	(void)state;
	run_child(child_fork, true);
}

/* ---- set-up ---- */

static int group_setup(void **state)
{
	(void)state;
	/* Room for the limits the tests set once they are not root. */
	if (setrlimit(RLIMIT_MEMLOCK, &(struct rlimit){ 64 * MiB, 64 * MiB })) {
		perror("RLIMIT_MEMLOCK");
		return -1;
	}
	if (tl_dio_load() < 0)
		return -1;
	if (tl_scsi_debug_load("dev_size_mb=64 dif=1 dix=1 guard=0", disk,
			       sizeof(disk))) {
		fprintf(stderr, "scsi_debug disk not available\n");
		return -1;
	}
	dfd = open(disk, O_RDWR | O_DIRECT);
	if (dfd < 0) {
		perror(disk);
		return -1;
	}
	if (tl_dio_ctl_chmod(0666, &ctl_mode))
		return -1;
	ctl_mode_saved = true;
	return 0;
}

static int group_teardown(void **state)
{
	int ret = 0;

	(void)state;
	if (ctl_mode_saved && tl_dio_ctl_chmod(ctl_mode, &ctl_mode))
		ret = -1;
	if (dfd >= 0)
		close(dfd);
	if (tl_scsi_debug_unload())
		ret = -1;
	if (!tl_dio_caches_drained(10))
		ret = -1;
	return ret;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_features),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_pi),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_memlock),
		cmocka_unit_test(test_root_uncharged),
		cmocka_unit_test(test_inflight),
		cmocka_unit_test(test_fork),
	};

	return cmocka_run_group_tests_name("fixed", tests, group_setup,
					   group_teardown);
}
