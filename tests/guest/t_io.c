// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Batched direct I/O: SUBMIT, WAIT, COLLECT and poll on real devices
 * (scsi_debug with 512- and 4096-byte sectors, QEMU NVMe namespaces with
 * 512- and 4096-byte blocks).  Data is checked byte for byte, against what
 * was written and against a plain O_DIRECT descriptor of the same device;
 * every error case checks the exact errno.  Devices are set up by each
 * test's setup: a device that does not appear fails the test.  The last
 * test checks that nothing is left allocated and that the module unloads.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

#define KiB		1024UL
#define MiB		(1024 * KiB)
#define SD_DRV		"/sys/bus/pseudo/drivers/scsi_debug"
#define P_INFLIGHT	"/sys/module/dio_batch/parameters/max_inflight"
#define SENTINEL	0x5a5a5a5aLL
#define CTL_PATH	"/dev/" DIO_BATCH_DEVNAME
#define UID_USER	1000		/* a user who is not root */
#define GID_USER	1000
#define GID_DIO		4242		/* the group given the disk and CTL_PATH */

enum dev_kind { DEV_NONE, DEV_SD512, DEV_SD4K, DEV_NVME1, DEV_NVME2 };

/* The device under test: a claimed handle and an unclaimed O_DIRECT fd. */
static struct dev {
	enum dev_kind kind;
	char path[64];
	int fd;
	int ctx;
	int h;
	struct dio_query q;
	unsigned int lbs;
	unsigned int align;	/* what the buffers need */
	uint64_t cap;
} d = { .kind = DEV_NONE, .fd = -1, .ctx = -1 };

/* Descriptors a test opened besides d's, closed by its teardown. */
static int extra_fd[4] = { -1, -1, -1, -1 };

static int track(int fd)
{
	for (int i = 0; i < 4; i++)
		if (extra_fd[i] < 0) {
			extra_fd[i] = fd;
			break;
		}
	return fd;
}

static void untrack_close(int fd)
{
	for (int i = 0; i < 4; i++)
		if (extra_fd[i] == fd)
			extra_fd[i] = -1;
	close(fd);
}

static char inflight_orig[32];

/* The nodes give_to_group() gave to GID_DIO, put back by teardown_sd(). */
static struct tl_node_saved ctl_saved, disk_saved;
static char user_disk[64];

/* ---- helpers ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void check_same(const void *a, const void *b, size_t len,
		       const char *what)
{
	const uint8_t *x = a, *y = b;
	size_t i;

	if (!memcmp(a, b, len))
		return;
	for (i = 0; i < len && x[i] == y[i]; i++)
		;
	fail_msg("%s: %zu bytes differ from byte %zu on", what, len, i);
}

/*
 * Time in these tests.  The 10 s of poll(), epoll_wait() and a child's
 * alarm() are hang guards: what they wait for (a read of 4 KiB, without a
 * delay) takes milliseconds on a loaded guest, tens of them on the debug
 * kernel.  A timeout that must expire (WAIT, COLLECT) is a lower bound:
 * the module sleeps on an hrtimer of CLOCK_MONOTONIC, the clock
 * tl_now_ns() reads, which never expires early, however loaded the
 * machine (only late).  Requests kept at the device are kept there by
 * scsi_debug's delay, an hrtimer started when it queued the command; a
 * test that needs a request not yet done says how long its own steps take
 * against that delay, which is multiplied by tl_slow_factor().
 */
static const struct timespec ts_zero = { 0, 0 };

static struct timespec ts_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	return ts;
}

/* Collect exactly @nr completions, each one of @reqs, each once. */
static void collect_exactly(int ctx, struct dio_request **reqs, unsigned int nr)
{
	struct dio_request **got = calloc(nr, sizeof(*got));
	unsigned int n = 0, i;
	bool *seen = calloc(nr, 1);
	int ret;

	assert_non_null(got);
	assert_non_null(seen);
	while (n < nr) {
		ret = tl_dio_collect(ctx, got, 1, nr - n, NULL);
		assert_true(ret >= 1);
		for (int k = 0; k < ret; k++) {
			for (i = 0; i < nr && reqs[i] != got[k]; i++)
				;
			assert_true(i < nr);
			assert_false(seen[i]);
			seen[i] = true;
		}
		n += ret;
	}
	assert_int_equal(tl_dio_collect(ctx, got, 0, 1, &ts_zero), 0);
	free(seen);
	free(got);
}

/* scsi_debug's completion delay. */
static void sd_ndelay(long ns)
{
	assert_int_equal(tl_scsi_debug_ndelay(ns), 0);
}

/* ---- the device under test ---- */

static void dev_detach(void)
{
	if (d.ctx >= 0)
		close(d.ctx);
	if (d.fd >= 0)
		close(d.fd);
	d.ctx = d.fd = -1;
	d.kind = DEV_NONE;
}

static int dev_attach(void)
{
	d.fd = open(d.path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (d.fd < 0) {
		fprintf(stderr, "open %s: %s\n", d.path, strerror(errno));
		return -1;
	}
	d.ctx = sys_dio_init(0, DIO_PRIVATE);
	if (d.ctx < 0) {
		fprintf(stderr, "sys_dio_init: %s\n", strerror(errno));
		return -1;
	}
	d.h = sys_dio_open(d.ctx, d.fd, 0);
	if (d.h < 1 || sys_dio_query(d.ctx, d.h, &d.q)) {
		fprintf(stderr, "sys_dio_open/query %s: %s\n", d.path,
			strerror(errno));
		return -1;
	}
	d.lbs = d.q.logical_block_size;
	d.align = d.q.dma_alignment;
	/*
	 * With PI, a protection interval must not straddle a page: the
	 * block layer generates and checks PI a page piece at a time.
	 */
	if (d.q.pi_interval && d.align < d.q.pi_interval)
		d.align = d.q.pi_interval < 4096 ? d.q.pi_interval : 4096;
	d.cap = d.q.capacity;
	print_message("# %s: %u-byte blocks, dma alignment %u, %llu MiB, %s\n",
		      d.path, d.lbs, d.align,
		      (unsigned long long)(d.cap / MiB), d.q.profile);
	return 0;
}

static int use_dev(enum dev_kind kind)
{
	int ret;

	if (d.kind == kind)
		return 0;
	dev_detach();
	switch (kind) {
	case DEV_SD512:
		ret = tl_scsi_debug_load("dev_size_mb=64 dif=1 dix=1 guard=0",
					 d.path, sizeof(d.path));
		break;
	case DEV_SD4K:
		ret = tl_scsi_debug_load("dev_size_mb=64 sector_size=4096 dif=1 dix=1 guard=1",
					 d.path, sizeof(d.path));
		break;
	case DEV_NVME1:
		ret = tl_nvme_dev(1, d.path, sizeof(d.path));
		break;
	case DEV_NVME2:
		ret = tl_nvme_dev(2, d.path, sizeof(d.path));
		break;
	default:
		return -1;
	}
	if (ret) {
		fprintf(stderr, "device for test not available: %d\n", ret);
		return -1;
	}
	if (dev_attach()) {
		dev_detach();
		return -1;
	}
	d.kind = kind;
	return 0;
}

static int setup_sd512(void **state) { return use_dev(DEV_SD512); }
static int setup_sd4k(void **state) { return use_dev(DEV_SD4K); }
static int setup_nvme1(void **state) { return use_dev(DEV_NVME1); }
static int setup_nvme2(void **state) { return use_dev(DEV_NVME2); }

/* For the tests that keep requests in flight with scsi_debug's delay. */
static int teardown_sd(void **state)
{
	char v[32];
	int i;

	if (d.kind == DEV_SD512 || d.kind == DEV_SD4K)
		tl_scsi_debug_ndelay(0);	/* either delay */
	snprintf(v, sizeof(v), "%s", inflight_orig);
	tl_write_file(P_INFLIGHT, v);
	for (i = 0; i < 4; i++)
		if (extra_fd[i] >= 0)
			untrack_close(extra_fd[i]);
	tl_node_restore(user_disk, &disk_saved);
	tl_node_restore(CTL_PATH, &ctl_saved);
	/* A failed test may have left requests: start the next one clean. */
	if (d.kind != DEV_NONE && tl_slab_active("dio_kreq") != 0)
		dev_detach();
	return 0;
}

/* One request, submitted and waited for; returns its result. */
static int64_t rw1(int op, int h, void *buf, size_t len, uint64_t off)
{
	struct dio_request r, *rp = &r;
	int ret;

	if (op == DIO_OP_READ)
		dio_req_prep_read(&r, h, buf, len, off);
	else
		dio_req_prep_write(&r, h, buf, len, off);
	r.result = SENTINEL;
	ret = tl_dio_submit(d.ctx, &rp, 1);
	if (ret != 1)
		return ret < 0 ? ret : -1000;
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, NULL), 1);
	return r.result;
}

/* A request prepared to fail at submission, for the error tests. */
static int submit1(struct dio_request *r)
{
	return tl_dio_submit(d.ctx, &r, 1);
}

/* rw1() in a tl_run_as() child, in context @ctx: no cmocka there. */
static int64_t child_rw(int ctx, int op, int h, void *buf, size_t len,
			uint64_t off)
{
	struct dio_request r, *rp = &r;

	if (op == DIO_OP_READ)
		dio_req_prep_read(&r, h, buf, len, off);
	else
		dio_req_prep_write(&r, h, buf, len, off);
	r.result = SENTINEL;
	if (sys_dio_submit(ctx, &rp, 1) != 1)
		return -errno;
	TL_CHILD_CHECK(sys_dio_wait(ctx, &rp, 1, NULL) == 1, "WAIT");
	return r.result;
}

/*
 * Disk @path and /dev/dio_batch to root:GID_DIO 0660, as a site's udev
 * rule gives a group its disks; teardown_sd() puts them back.
 */
static void give_to_group(const char *path)
{
	snprintf(user_disk, sizeof(user_disk), "%s", path);
	assert_int_equal(tl_node_give(CTL_PATH, GID_DIO, 0660, &ctl_saved), 0);
	assert_int_equal(tl_node_give(user_disk, GID_DIO, 0660, &disk_saved), 0);
}

static void xpread(void *buf, size_t len, uint64_t off)
{
	assert_int_equal(pread(d.fd, buf, len, off), (ssize_t)len);
}

static void xpwrite(const void *buf, size_t len, uint64_t off)
{
	assert_int_equal(pwrite(d.fd, buf, len, off), (ssize_t)len);
}

/* ---- tests ---- */

static void test_features(void **state)
{
	struct dio_features f;

	assert_int_equal(sys_dio_features(&f), 0);
	assert_true(f.features & DIO_FEAT_BATCH_IO);
	assert_int_equal(f.opcodes, (1U << DIO_OP_READ) | (1U << DIO_OP_WRITE) |
			 (1U << DIO_OP_FLUSH));
	assert_int_equal(f.max_batch, 4096);
	assert_int_equal(f.max_inflight, atoi(inflight_orig));
}

/* Random offsets and sizes, 1 block to 8 MiB, both ways. */
static void test_roundtrip(void **state)
{
	static const size_t caps[] = { 0, 64 * KiB, 1 * MiB, 7 * MiB };
	size_t max = 8 * MiB;
	uint8_t *w = tl_xalloc(max, 0), *r = tl_xalloc(max, 0), *x = tl_xalloc(max, 0);
	int i;

	for (i = 0; i < 16; i++) {
		size_t blocks = i % 4 ? 1 + rnd() % (caps[i % 4] / d.lbs) : 1;
		size_t len = blocks * d.lbs;
		uint64_t off, tag = rnd();

		if (i % 4 == 3 && len <= 1 * MiB)
			len += 1 * MiB;		/* always more than one bio */
		off = rnd() % ((d.cap - len) / d.lbs + 1) * d.lbs;
		tl_fill(w, len, tag);
		memset(r, 0, len);
		memset(x, 0, len);
		if (i % 2 == 0) {
			assert_int_equal(rw1(DIO_OP_WRITE, d.h, w, len, off), len);
			xpread(x, len, off);
			check_same(w, x, len, "O_DIRECT read of a dio write");
		} else {
			xpwrite(w, len, off);
		}
		assert_int_equal(rw1(DIO_OP_READ, d.h, r, len, off), len);
		check_same(w, r, len, "dio read");
	}
	free(w);
	free(r);
	free(x);
}

/* The first and the last block of the device. */
static void test_edges(void **state)
{
	size_t len = 4 * d.lbs;
	uint8_t *w = tl_xalloc(len, 0), *r = tl_xalloc(len, 0);

	tl_fill(w, len, 11);
	assert_int_equal(rw1(DIO_OP_WRITE, d.h, w, len, 0), len);
	assert_int_equal(rw1(DIO_OP_READ, d.h, r, len, 0), len);
	check_same(w, r, len, "first blocks");
	tl_fill(w, len, 12);
	assert_int_equal(rw1(DIO_OP_WRITE, d.h, w, len, d.cap - len), len);
	xpread(r, len, d.cap - len);
	check_same(w, r, len, "last blocks");
	free(w);
	free(r);
}

/*
 * Many segments: written from 300 scattered segments at DMA-aligned (not
 * block-aligned) addresses, read back contiguously and through another
 * segmentation; then UIO_MAXIOV (1024) separate pages, so the request
 * needs several bios, and one segment too many.
 */
static void test_iovec(void **state)
{
	enum { NSEG = 300, NMAX = 1024 };
	size_t pool_len = (NMAX + 1) * 2 * 4096 + 8 * d.lbs;
	uint8_t *pool = tl_xalloc(pool_len, 0), *flat, *back;
	struct iovec *iov = calloc(NMAX + 1, sizeof(*iov));
	struct dio_request r, *rp = &r;
	size_t total = 0, pos;
	uint64_t off = 3 * MiB;
	int i;

	assert_non_null(iov);
	for (i = 0; i < NSEG; i++) {
		size_t adj = d.align > 1 ? (i % 4) * d.align : 0;

		iov[i].iov_base = pool + (size_t)i * 4 * 4096 + adj;
		iov[i].iov_len = d.lbs * (1 + i % 3);
		tl_fill(iov[i].iov_base, iov[i].iov_len, 1000 + i);
		total += iov[i].iov_len;
	}
	flat = tl_xalloc(total, 0);
	back = tl_xalloc(total, 0);
	for (i = 0, pos = 0; i < NSEG; pos += iov[i].iov_len, i++)
		memcpy(flat + pos, iov[i].iov_base, iov[i].iov_len);

	dio_req_prep_writev(&r, d.h, iov, NSEG, off);
	assert_int_equal(submit1(&r), 1);
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, total);
	assert_int_equal(rw1(DIO_OP_READ, d.h, back, total, off), total);
	check_same(flat, back, total, "300-segment write");
	xpread(back, total, off);
	check_same(flat, back, total, "300-segment write, O_DIRECT");

	/* Read it back into 130 segments of other sizes. */
	memset(pool, 0, pool_len);
	for (i = 0, pos = 0; pos < total; i++) {
		size_t len = d.lbs * (1 + (i * 7) % 5);

		if (len > total - pos)
			len = total - pos;
		iov[i].iov_base = pool + (size_t)i * 6 * 4096;
		iov[i].iov_len = len;
		pos += len;
	}
	assert_true(i >= 100 && i <= NMAX && (size_t)i * 6 * 4096 < pool_len);
	dio_req_prep_readv(&r, d.h, iov, i, off);
	assert_int_equal(submit1(&r), 1);
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, total);
	for (int k = 0, p = 0; k < i; p += iov[k].iov_len, k++)
		check_same(flat + p, iov[k].iov_base, iov[k].iov_len,
			   "segmented read");
	free(flat);
	free(back);

	/* 1024 segments, one page each, no two pages adjacent. */
	total = 0;
	for (i = 0; i < NMAX; i++) {
		iov[i].iov_base = pool + (size_t)i * 2 * 4096;
		iov[i].iov_len = 4096;
		tl_fill(iov[i].iov_base, 4096, 5000 + i);
		total += 4096;
	}
	dio_req_prep_writev(&r, d.h, iov, NMAX, off);
	assert_int_equal(submit1(&r), 1);
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, total);
	back = tl_xalloc(total, 0);
	xpread(back, total, off);
	for (i = 0; i < NMAX; i++)
		check_same(iov[i].iov_base, back + (size_t)i * 4096, 4096,
			   "1024-segment write");
	memset(back, 0, total);
	assert_int_equal(rw1(DIO_OP_READ, d.h, back, total, off), total);
	for (i = 0; i < NMAX; i++)
		check_same(iov[i].iov_base, back + (size_t)i * 4096, 4096,
			   "1024-segment read back");
	iov[NMAX].iov_base = pool + (size_t)NMAX * 2 * 4096;
	iov[NMAX].iov_len = 4096;
	dio_req_prep_writev(&r, d.h, iov, NMAX + 1, off);
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_writev(&r, d.h, iov, 0, off);
	assert_int_equal(submit1(&r), -EINVAL);
	free(back);
	free(iov);
	free(pool);
}

/*
 * Batches of @nr requests of @len bytes in one SUBMIT each: writes, then
 * reads; then one batch of reads of the odd ones and rewrites of the even
 * ones, mixed.
 */
static void run_batches(unsigned int nr, size_t len, uint64_t base)
{
	struct dio_request *r = calloc(nr, sizeof(*r)), **rp = calloc(nr, sizeof(*rp));
	uint8_t *w = tl_xalloc(nr * len, 0), *b = tl_xalloc(nr * len, 0), *x = tl_xalloc(nr * len, 0);
	unsigned int i;

	assert_non_null(r);
	assert_non_null(rp);
	for (i = 0; i < nr; i++) {
		tl_fill(w + i * len, len, (uint64_t)nr << 32 | i);
		dio_req_prep_write(&r[i], d.h, w + i * len, len, base + i * len);
		r[i].cookie = i;
		r[i].result = SENTINEL;
		rp[i] = &r[i];
	}
	assert_int_equal(tl_dio_submit(d.ctx, rp, nr), nr);
	collect_exactly(d.ctx, rp, nr);
	for (i = 0; i < nr; i++) {
		assert_int_equal(r[i].result, len);
		assert_int_equal(r[i].cookie, i);
		dio_req_prep_read(&r[i], d.h, b + i * len, len, base + i * len);
	}
	assert_int_equal(tl_dio_submit(d.ctx, rp, nr), nr);
	assert_int_equal(tl_dio_wait(d.ctx, rp, nr, NULL), nr);
	for (i = 0; i < nr; i++)
		assert_int_equal(r[i].result, len);
	check_same(w, b, nr * len, "batch read");
	xpread(x, nr * len, base);
	check_same(w, x, nr * len, "batch write, O_DIRECT");

	/* Mixed: even ones write new data, odd ones read the old. */
	memset(b, 0, nr * len);
	for (i = 0; i < nr; i++) {
		if (i % 2) {
			dio_req_prep_read(&r[i], d.h, b + i * len, len,
					  base + i * len);
		} else {
			tl_fill(w + i * len, len, (uint64_t)nr << 40 | i);
			dio_req_prep_write(&r[i], d.h, w + i * len, len,
					   base + i * len);
		}
	}
	assert_int_equal(tl_dio_submit(d.ctx, rp, nr), nr);
	collect_exactly(d.ctx, rp, nr);
	for (i = 0; i < nr; i++) {
		assert_int_equal(r[i].result, len);
		if (i % 2)
			check_same(w + i * len, b + i * len, len, "mixed read");
	}
	xpread(x, nr * len, base);
	check_same(w, x, nr * len, "mixed batch, O_DIRECT");
	free(r);
	free(rp);
	free(w);
	free(b);
	free(x);
}

static void test_batches(void **state)
{
	run_batches(1, d.lbs, 0);
	run_batches(64, 16 * KiB, 1 * MiB);
	run_batches(1024, 4 * KiB, 8 * MiB);
}

/* WAIT in any order and COLLECT report each request exactly once. */
static void test_wait_and_collect(void **state)
{
	enum { N = 16 };
	struct dio_request r[N], *rp[N], *got[N];
	uint8_t *buf = tl_xalloc(N * 4096, 0);
	int i;

	for (i = 0; i < N; i++) {
		dio_req_prep_read(&r[i], d.h, buf + i * 4096, 4096, i * 4096);
		r[i].result = SENTINEL;
		rp[i] = &r[i];
	}
	/* WAIT for all in reverse order. */
	assert_int_equal(tl_dio_submit(d.ctx, rp, N), N);
	for (i = 0; i < N; i++)
		got[i] = rp[N - 1 - i];
	assert_int_equal(tl_dio_wait(d.ctx, got, N, NULL), N);
	for (i = 0; i < N; i++)
		assert_int_equal(r[i].result, 4096);
	assert_int_equal(tl_dio_collect(d.ctx, got, 0, N, &ts_zero), 0);

	/* WAIT for three, COLLECT gets the other thirteen. */
	for (i = 0; i < N; i++)
		r[i].result = SENTINEL;
	assert_int_equal(tl_dio_submit(d.ctx, rp, N), N);
	got[0] = rp[5];
	got[1] = rp[0];
	got[2] = rp[15];
	assert_int_equal(tl_dio_wait(d.ctx, got, 3, NULL), 3);
	assert_int_equal(r[5].result, 4096);
	assert_int_equal(r[0].result, 4096);
	assert_int_equal(r[15].result, 4096);
	{
		struct dio_request *rest[N - 3];
		int k = 0;

		for (i = 0; i < N; i++)
			if (i != 0 && i != 5 && i != 15)
				rest[k++] = rp[i];
		collect_exactly(d.ctx, rest, N - 3);
	}
	for (i = 0; i < N; i++)
		assert_int_equal(r[i].result, 4096);
	/* A reported request is gone: WAIT does not know it any more. */
	assert_int_equal(tl_dio_wait(d.ctx, rp, 1, &ts_zero), -ENOENT);
	free(buf);
}

static void test_collect_partial_room(void **state)
{
	enum { N = 12 };
	struct dio_request r[N], *rp[N], *got[N];
	uint8_t *buf = tl_xalloc(N * 4096, 0);
	int i, n = 0, ret;

	for (i = 0; i < N; i++) {
		dio_req_prep_read(&r[i], d.h, buf + i * 4096, 4096, i * 4096);
		rp[i] = &r[i];
	}
	assert_int_equal(tl_dio_submit(d.ctx, rp, N), N);
	/* Wait for all twelve, then take them five at a time. */
	for (i = 0; i < N; i++)
		got[i] = NULL;
	while (n < N) {
		ret = tl_dio_collect(d.ctx, got + n, 1, (N - n) < 5 ? N - n : 5, NULL);
		assert_true(ret >= 1 && ret <= 5);
		n += ret;
	}
	for (i = 0; i < N; i++)
		assert_int_equal(r[i].result, 4096);
	assert_int_equal(tl_dio_collect(d.ctx, got, 0, N, &ts_zero), 0);
	free(buf);
}

/* poll() and epoll: readable exactly while completions are unreported. */
static void test_poll_epoll(void **state)
{
	struct pollfd pfd = { .fd = d.ctx, .events = POLLIN };
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct dio_request r[2], *rp[2] = { &r[0], &r[1] }, *got[2];
	uint8_t *buf = tl_xalloc(2 * 4096, 0);
	int ep = epoll_create1(EPOLL_CLOEXEC), et = epoll_create1(EPOLL_CLOEXEC);

	assert_true(ep >= 0 && et >= 0);
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, d.ctx, &ev), 0);
	ev.events = EPOLLIN | EPOLLET;
	assert_int_equal(epoll_ctl(et, EPOLL_CTL_ADD, d.ctx, &ev), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(epoll_wait(ep, &out, 1, 0), 0);
	assert_int_equal(epoll_wait(et, &out, 1, 0), 0);

	dio_req_prep_read(&r[0], d.h, buf, 4096, 0);
	dio_req_prep_read(&r[1], d.h, buf + 4096, 4096, 4096);
	assert_int_equal(tl_dio_submit(d.ctx, rp, 1), 1);
	assert_int_equal(poll(&pfd, 1, 10000), 1);
	assert_int_equal(pfd.revents, POLLIN);
	assert_int_equal(epoll_wait(ep, &out, 1, 10000), 1);
	assert_int_equal(out.events, EPOLLIN);
	assert_int_equal(epoll_wait(et, &out, 1, 10000), 1);
	/* Level-triggered stays readable; edge-triggered reported once. */
	assert_int_equal(epoll_wait(ep, &out, 1, 0), 1);
	assert_int_equal(epoll_wait(et, &out, 1, 0), 0);
	/* A second completion is a new edge. */
	assert_int_equal(tl_dio_submit(d.ctx, rp + 1, 1), 1);
	assert_int_equal(epoll_wait(et, &out, 1, 10000), 1);
	assert_int_equal(tl_dio_collect(d.ctx, got, 2, 2, NULL), 2);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(epoll_wait(ep, &out, 1, 0), 0);
	assert_int_equal(r[0].result, 4096);
	assert_int_equal(r[1].result, 4096);

	/* Readable again after WAIT reported one of two. */
	assert_int_equal(tl_dio_submit(d.ctx, rp, 2), 2);
	assert_int_equal(tl_dio_wait(d.ctx, rp, 1, NULL), 1);
	assert_int_equal(poll(&pfd, 1, 10000), 1);
	assert_int_equal(tl_dio_wait(d.ctx, rp + 1, 1, NULL), 1);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	close(ep);
	close(et);
	free(buf);
}

/* poll() of one descriptor: its result, with revents checked. */
static int poll1(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret = poll(&pfd, 1, ms);

	if (ret == 1 && pfd.revents != POLLIN)
		return -100 - pfd.revents;
	return ret;
}

/* A level-triggered epoll instance watching @fd. */
static int epoll_on(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
		close(ep);
		return -1;
	}
	return ep;
}

static int epoll_ready(int ep)
{
	struct epoll_event out;

	return epoll_wait(ep, &out, 1, 0);
}

/*
 * One request on @sub, with @other a descriptor of the same keyed context:
 * the completion is @sub's alone.  @other is not readable by poll() or
 * epoll, WAIT there does not know the request, COLLECT there finds nothing;
 * then @sub reports it, with the data of @off.
 */
static void queue_is_own(int sub, int other, int h, uint8_t *buf,
			 uint64_t off, uint64_t tag)
{
	struct dio_request r, *rp = &r, *got[2] = { NULL, NULL };
	int eps = epoll_on(sub), epo = epoll_on(other);
	uint8_t *want = tl_xalloc(4096, 0);

	assert_true(eps >= 0 && epo >= 0);
	tl_fill(want, 4096, tag);
	xpwrite(want, 4096, off);
	memset(buf, 0, 4096);
	dio_req_prep_read(&r, h, buf, 4096, off);
	r.result = SENTINEL;
	assert_int_equal(tl_dio_submit(sub, &rp, 1), 1);
	/* Known to be there: @sub polls readable first. */
	assert_int_equal(poll1(sub, 10000), 1);
	assert_int_equal(epoll_ready(eps), 1);
	/* Nothing of it on the other descriptor. */
	assert_int_equal(poll1(other, 0), 0);
	assert_int_equal(epoll_ready(epo), 0);
	assert_int_equal(sys_dio_wait(other, &rp, 1, &ts_zero), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(sys_dio_collect(other, got, 0, 2, &ts_zero), 0);
	assert_null(got[0]);
	assert_int_equal(r.result, SENTINEL);
	/* Still @sub's to report. */
	assert_int_equal(poll1(sub, 0), 1);
	assert_int_equal(sys_dio_collect(sub, got, 0, 2, &ts_zero), 1);
	assert_ptr_equal(got[0], &r);
	assert_int_equal(r.result, 4096);
	check_same(want, buf, 4096, "read reported on its own descriptor");
	assert_int_equal(poll1(sub, 0), 0);
	assert_int_equal(epoll_ready(eps), 0);
	assert_int_equal(poll1(other, 0), 0);
	close(eps);
	close(epo);
	free(want);
}

/* Two descriptors of one keyed context in one process: two queues. */
static void test_queue_per_descriptor(void **state)
{
	const uint64_t key = 0x7100;
	int a = track(sys_dio_init(key, DIO_CREAT | DIO_EXCL));
	int b = track(sys_dio_init(key, 0)), h;
	uint8_t *buf = tl_xalloc(4096, 0);
	struct dio_query q;

	assert_true(a >= 0 && b >= 0);
	assert_int_not_equal(a, b);
	h = sys_dio_open(a, d.fd, DIO_OPEN_NOCLAIM);
	assert_true(h >= 1);
	/* One context: the handle is b's too. */
	assert_int_equal(sys_dio_query(b, h, &q), 0);
	queue_is_own(a, b, h, buf, 30 * MiB, 7100);
	queue_is_own(b, a, h, buf, 30 * MiB + 4096, 7101);
	untrack_close(b);
	untrack_close(a);
	free(buf);
}

/* The child's steps for the test below; its exit status names a failure. */
static int queue_child(uint64_t key, int h, int to_child, int to_parent,
		       struct dio_request *parents, struct dio_request *mine,
		       uint8_t *buf, uint64_t off, uint64_t tag)
{
	struct dio_request *rp = parents, *got[2] = { NULL, NULL };
	uint8_t *want = tl_alloc(4096, 0);
	int b = sys_dio_init(key, 0), ep;
	char c;

	signal(SIGALRM, SIG_DFL);
	alarm(60);		/* never outlive a failed parent for long */
	if (b < 0 || !want)
		return 10;
	ep = epoll_on(b);
	if (ep < 0)
		return 11;
	/* Phase 1: the parent's request completed on its descriptor. */
	if (read(to_child, &c, 1) != 1)
		return 12;
	if (poll1(b, 0) != 0)
		return 13;
	if (epoll_ready(ep) != 0)
		return 14;
	if (sys_dio_wait(b, &rp, 1, &ts_zero) != -1 || errno != ENOENT)
		return 15;
	if (sys_dio_collect(b, got, 0, 2, &ts_zero) != 0 || got[0])
		return 16;
	if (write(to_parent, &c, 1) != 1)
		return 17;
	/* Phase 2: ours, on b, while the parent looks at its descriptor. */
	rp = mine;
	memset(buf, 0, 4096);
	dio_req_prep_read(mine, h, buf, 4096, off);
	mine->result = SENTINEL;
	if (sys_dio_submit(b, &rp, 1) != 1)
		return 18;
	if (poll1(b, 10000) != 1 || epoll_ready(ep) != 1)
		return 19;
	if (write(to_parent, &c, 1) != 1 || read(to_child, &c, 1) != 1)
		return 20;
	if (poll1(b, 0) != 1)
		return 21;
	if (sys_dio_collect(b, got, 0, 2, &ts_zero) != 1 || got[0] != mine)
		return 22;
	if (mine->result != 4096)
		return 23;
	tl_fill(want, 4096, tag);
	if (memcmp(want, buf, 4096))
		return 24;
	if (poll1(b, 0) != 0 || epoll_ready(ep) != 0)
		return 25;
	return 0;
}

/* A step of the exchange with the child failed: say how the child ended. */
static void child_step(bool ok, pid_t pid, const char *what)
{
	int st = 0;

	if (ok)
		return;
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	fail_msg("%s: child %s %d", what,
		 WIFEXITED(st) ? "exited with status" : "killed by signal",
		 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

/* A descriptor of the same key in a fork()ed child is a queue of its own. */
static void test_queue_per_descriptor_across_fork(void **state)
{
	const uint64_t key = 0x7102;
	const uint64_t off0 = 31 * MiB, off1 = 31 * MiB + 4096;
	struct dio_request r[2], *rp = &r[0], *cp = &r[1], *got[2] = { NULL };
	int a = track(sys_dio_init(key, DIO_CREAT | DIO_EXCL));
	int to_child[2], to_parent[2], h, ep, st;
	uint8_t *buf = tl_xalloc(2 * 4096, 0), *want = tl_xalloc(2 * 4096, 0);
	char c = 0;
	pid_t pid;

	assert_true(a >= 0);
	h = sys_dio_open(a, d.fd, DIO_OPEN_NOCLAIM);
	assert_true(h >= 1);
	ep = track(epoll_on(a));
	assert_true(ep >= 0);
	tl_fill(want, 4096, 7102);
	tl_fill(want + 4096, 4096, 7103);
	xpwrite(want, 4096, off0);
	xpwrite(want + 4096, 4096, off1);
	assert_int_equal(pipe2(to_child, O_CLOEXEC), 0);
	assert_int_equal(pipe2(to_parent, O_CLOEXEC), 0);
	dio_req_prep_read(&r[0], h, buf, 4096, off0);
	r[0].result = SENTINEL;

	/* A child that died early makes our write fail, not kill us. */
	signal(SIGPIPE, SIG_IGN);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		_exit(queue_child(key, h, to_child[0], to_parent[1], &r[0],
				  &r[1], buf + 4096, off1, 7103));
	}
	close(to_child[0]);
	close(to_parent[1]);
	/* Phase 1: ours completes on a; the child looks at its b. */
	assert_int_equal(tl_dio_submit(a, &rp, 1), 1);
	assert_int_equal(poll1(a, 10000), 1);
	child_step(write(to_child[1], &c, 1) == 1, pid, "phase 1");
	child_step(read(to_parent[0], &c, 1) == 1, pid, "phase 1");
	assert_int_equal(poll1(a, 0), 1);
	assert_int_equal(sys_dio_collect(a, got, 0, 2, &ts_zero), 1);
	assert_ptr_equal(got[0], &r[0]);
	assert_int_equal(r[0].result, 4096);
	check_same(want, buf, 4096, "read reported on the parent's descriptor");
	/* Phase 2: the child's completes on b; nothing of it here. */
	child_step(read(to_parent[0], &c, 1) == 1, pid, "phase 2");
	assert_int_equal(poll1(a, 0), 0);
	assert_int_equal(epoll_ready(ep), 0);
	assert_int_equal(sys_dio_wait(a, &cp, 1, &ts_zero), -1);
	assert_int_equal(errno, ENOENT);
	got[0] = NULL;
	assert_int_equal(sys_dio_collect(a, got, 0, 2, &ts_zero), 0);
	assert_null(got[0]);
	child_step(write(to_child[1], &c, 1) == 1, pid, "phase 2");
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(poll1(a, 0), 0);
	close(to_child[1]);
	close(to_parent[0]);
	untrack_close(ep);
	untrack_close(a);
	free(buf);
	free(want);
}

/*
 * COLLECT with min_nr above what completes returns what there is, late.
 * Both reads done and neither reported, whatever the machine's speed: they
 * are submitted one after the other, and an edge-triggered epoll instance
 * reports each completion as an edge (test_poll_epoll), which the test
 * waits for (a sleep of 500 ms stood there: a read late by that much was
 * missing from COLLECT's count).  The timeouts are lower bounds.
 */
static void test_collect_timeout(void **state)
{
	struct dio_request r[2], *rp[2] = { &r[0], &r[1] }, *got[4];
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET }, out;
	uint8_t *buf = tl_xalloc(2 * 4096, 0);
	int et = epoll_create1(EPOLL_CLOEXEC);
	struct timespec ts = ts_ms(200);
	uint64_t t0;

	assert_true(et >= 0);
	assert_int_equal(epoll_ctl(et, EPOLL_CTL_ADD, d.ctx, &ev), 0);
	dio_req_prep_read(&r[0], d.h, buf, 4096, 0);
	dio_req_prep_read(&r[1], d.h, buf + 4096, 4096, 4096);
	assert_int_equal(tl_dio_submit(d.ctx, rp, 1), 1);
	assert_int_equal(epoll_wait(et, &out, 1, 10000), 1);	/* r[0] done */
	assert_int_equal(tl_dio_submit(d.ctx, rp + 1, 1), 1);
	assert_int_equal(epoll_wait(et, &out, 1, 10000), 1);	/* r[1] done */
	close(et);
	t0 = tl_now_ns();
	assert_int_equal(tl_dio_collect(d.ctx, got, 4, 4, &ts), 2);
	assert_true(tl_now_ns() - t0 >= 200000000ULL);
	assert_int_equal(r[0].result, 4096);
	assert_int_equal(r[1].result, 4096);
	/* Nothing at all: 0 after the timeout, and at once with timeout 0. */
	ts = ts_ms(50);
	t0 = tl_now_ns();
	assert_int_equal(tl_dio_collect(d.ctx, got, 1, 4, &ts), 0);
	assert_true(tl_now_ns() - t0 >= 50000000ULL);
	assert_int_equal(tl_dio_collect(d.ctx, got, 1, 4, &ts_zero), 0);
	assert_int_equal(tl_dio_collect(d.ctx, got, 0, 4, NULL), 0);
	free(buf);
}

/*
 * WAIT on a request that is still at the device: scsi_debug completes it
 * 900 ms (x tl_slow_factor()) after queueing it.  Not done for WAIT with
 * no time and with 50 ms: the steps from the submission to the end of the
 * second WAIT (two calls and a 50 ms sleep) take under 100 ms on a loaded
 * guest, a margin of 800 ms.  The delay is also a lower bound of the wait
 * for it, as the timeouts are.
 */
static void test_wait_timeout_inflight(void **state)
{
	const long delay_ms = 900 * tl_slow_factor();
	struct dio_request r, *rp = &r;
	struct dio_wait w = { .size = sizeof(w), .nr = 1 };
	uint8_t *buf = tl_xalloc(4096, 0);
	struct timespec ts = ts_ms(50);
	uint64_t t0;
	uint64_t addr = (uintptr_t)rp;

	assert_int_equal(tl_scsi_debug_delay_ms(delay_ms), 0);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.result = SENTINEL;
	t0 = tl_now_ns();
	assert_int_equal(submit1(&r), 1);
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, &ts_zero), 0);
	assert_int_equal(r.result, SENTINEL);
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, &ts), 0);
	assert_true(tl_now_ns() - t0 >= 50000000ULL);
	assert_int_equal(r.result, SENTINEL);
	/* A timeout too far for the clock is as good as none. */
	w.reqs = (uintptr_t)&addr;
	w.timeout_ns = INT64_MAX;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_WAIT, &w), 1);
	assert_true(tl_now_ns() - t0 >= (uint64_t)(delay_ms - 50) * 1000000);
	assert_int_equal(r.result, 4096);
	/* Negative timeouts other than DIO_WAIT_FOREVER are refused. */
	w.timeout_ns = -2;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_WAIT, &w), -EINVAL);
	free(buf);
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void alarm_in_ms(long ms)
{
	struct itimerval it = { .it_value = { ms / 1000, (ms % 1000) * 1000 } };
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */

	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
}

/*
 * A signal ends a blocking COLLECT or WAIT; the completion stays.  The
 * signal comes 50 ms after the submission, the completion 900 ms (x
 * tl_slow_factor()) after it: a margin of 850 ms for a timer signal to
 * arrive late.
 */
static void test_eintr(void **state)
{
	struct dio_request r, *rp = &r, *got;
	uint8_t *buf = tl_xalloc(4096, 0);

	assert_int_equal(tl_scsi_debug_delay_ms(900 * tl_slow_factor()), 0);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.result = SENTINEL;
	alarms = 0;
	assert_int_equal(submit1(&r), 1);
	alarm_in_ms(50);
	assert_int_equal(tl_dio_collect(d.ctx, &got, 1, 1, NULL), -EINTR);
	assert_int_equal(alarms, 1);
	assert_int_equal(r.result, SENTINEL);
	assert_int_equal(tl_dio_collect(d.ctx, &got, 1, 1, NULL), 1);
	assert_ptr_equal(got, &r);
	assert_int_equal(r.result, 4096);

	r.result = SENTINEL;
	assert_int_equal(submit1(&r), 1);
	alarm_in_ms(50);
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, NULL), -EINTR);
	assert_int_equal(alarms, 2);
	assert_int_equal(r.result, SENTINEL);
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, 4096);
	signal(SIGALRM, SIG_DFL);
	free(buf);
}

/* max_inflight counts submitted and unreported requests per descriptor. */
static void test_eagain(void **state)
{
	enum { N = 10 };
	struct dio_request r[N], *rp[N], *got[N];
	struct dio_features f;
	uint8_t *buf = tl_xalloc(N * 4096, 0);
	int i, ctx2, h2;

	assert_int_equal(tl_write_file(P_INFLIGHT, "8"), 0);
	assert_int_equal(sys_dio_features(&f), 0);
	assert_int_equal(f.max_inflight, 8);
	for (i = 0; i < N; i++) {
		dio_req_prep_read(&r[i], d.h, buf + i * 4096, 4096, i * 4096);
		r[i].result = SENTINEL;
		rp[i] = &r[i];
	}
	assert_int_equal(tl_dio_submit(d.ctx, rp, N), 8);
	assert_int_equal(tl_dio_submit(d.ctx, rp + 8, 2), -EAGAIN);
	assert_int_equal(r[8].result, SENTINEL);
	/* Completed but not reported still counts. */
	assert_int_equal(tl_dio_wait(d.ctx, rp, 1, NULL), 1);
	assert_int_equal(tl_dio_submit(d.ctx, rp + 8, 2), 1);
	assert_int_equal(tl_dio_submit(d.ctx, rp + 9, 1), -EAGAIN);
	/* The limit is per descriptor. */
	ctx2 = track(sys_dio_init(0, DIO_PRIVATE));
	assert_true(ctx2 >= 0);
	h2 = sys_dio_open(ctx2, d.fd, DIO_OPEN_NOCLAIM);
	assert_true(h2 >= 1);
	r[9].handle = h2;
	assert_int_equal(tl_dio_submit(ctx2, rp + 9, 1), 1);
	assert_int_equal(tl_dio_wait(ctx2, rp + 9, 1, NULL), 1);
	assert_int_equal(r[9].result, 4096);
	untrack_close(ctx2);
	collect_exactly(d.ctx, rp + 1, 8);
	for (i = 0; i < N; i++)
		assert_int_equal(r[i].result, 4096);
	/* Room again. */
	r[9].handle = d.h;
	assert_int_equal(tl_dio_submit(d.ctx, rp + 2, 8), 8);
	assert_int_equal(tl_dio_collect(d.ctx, got, 8, 8, NULL), 8);
	assert_int_equal(tl_write_file(P_INFLIGHT, "0"), 0);
	assert_int_equal(tl_dio_submit(d.ctx, rp, 1), -EAGAIN);
	assert_int_equal(tl_write_file(P_INFLIGHT, inflight_orig), 0);
	free(buf);
}

static void test_flush_fua(void **state)
{
	struct dio_request r[3], *rp[3] = { &r[0], &r[1], &r[2] };
	uint8_t *w = tl_xalloc(8192, 0), *b = tl_xalloc(8192, 0);

	tl_fill(w, 8192, 77);
	dio_req_prep_write(&r[0], d.h, w, 8192, 5 * MiB);
	r[0].flags |= DIO_REQ_FUA;
	dio_req_prep_flush(&r[1], d.h);
	dio_req_prep_write(&r[2], d.h, w, 4096, 6 * MiB);
	r[0].result = r[1].result = r[2].result = SENTINEL;
	assert_int_equal(tl_dio_submit(d.ctx, rp, 3), 3);
	assert_int_equal(tl_dio_wait(d.ctx, rp, 3, NULL), 3);
	assert_int_equal(r[0].result, 8192);
	assert_int_equal(r[1].result, 0);
	assert_int_equal(r[2].result, 4096);
	xpread(b, 8192, 5 * MiB);
	check_same(w, b, 8192, "FUA write");
	/* FUA is for writes; a flush carries nothing. */
	dio_req_prep_read(&r[0], d.h, b, 4096, 0);
	r[0].flags |= DIO_REQ_FUA;
	assert_int_equal(submit1(&r[0]), -EINVAL);
	dio_req_prep_flush(&r[1], d.h);
	r[1].flags = DIO_REQ_FUA;
	assert_int_equal(submit1(&r[1]), -EINVAL);
	dio_req_prep_flush(&r[1], d.h);
	r[1].len = 4096;
	assert_int_equal(submit1(&r[1]), -EINVAL);
	dio_req_prep_flush(&r[1], d.h);
	r[1].offset = 4096;
	assert_int_equal(submit1(&r[1]), -EINVAL);
	free(w);
	free(b);
}

/*
 * QUERY's dma_alignment is enough for I/O: with PI it keeps protection
 * intervals from straddling pages.
 */
static void test_query_alignment(void **state)
{
	print_message("# %s: dma_alignment %u, pi_interval %u, needed %u\n",
		      d.path, d.q.dma_alignment, d.q.pi_interval, d.align);
	assert_int_equal(d.q.dma_alignment, d.align);
}

/* Offsets, lengths and buffers the device cannot take. */
static void test_bad_alignment(void **state)
{
	size_t lbs = d.lbs;
	uint8_t *buf = tl_xalloc(8 * 4096, 0);
	struct iovec iov[3];
	struct dio_request r;

	dio_req_prep_read(&r, d.h, buf, lbs, 1);
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_read(&r, d.h, buf, lbs, lbs / 2);
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_write(&r, d.h, buf, lbs - 1, 0);
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_write(&r, d.h, buf, lbs + 1, 0);
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_write(&r, d.h, buf, 0, 0);
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_write(&r, d.h, buf, 64 * MiB + lbs, 0);
	assert_int_equal(submit1(&r), -EINVAL);
	/* Buffer below the DMA alignment; at the alignment it works. */
	assert_true(d.align >= 2);
	if (d.q.dma_alignment < d.align) {
		/* PI: a protection interval may not straddle a page. */
		dio_req_prep_write(&r, d.h, buf + d.q.dma_alignment, lbs, 0);
		assert_int_equal(submit1(&r), -EINVAL);
	}
	dio_req_prep_read(&r, d.h, buf + 1, lbs, 0);
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_write(&r, d.h, buf + d.align / 2, lbs, 0);
	assert_int_equal(submit1(&r), -EINVAL);
	tl_fill(buf + d.align, lbs, 31);
	assert_int_equal(rw1(DIO_OP_WRITE, d.h, buf + d.align, lbs, 4 * MiB), lbs);
	assert_int_equal(rw1(DIO_OP_READ, d.h, buf + 4096 * 2 + d.align, lbs,
			     4 * MiB), lbs);
	check_same(buf + d.align, buf + 4096 * 2 + d.align, lbs,
		   "DMA-aligned buffer");
	/* An iovec whose segments are not each a block multiple. */
	iov[0].iov_base = buf;
	iov[0].iov_len = lbs / 2;
	iov[1].iov_base = buf + 4096;
	iov[1].iov_len = lbs / 2;
	dio_req_prep_writev(&r, d.h, iov, 2, 0);
	assert_int_equal(submit1(&r), -EINVAL);
	/* An iovec segment at an address below the DMA alignment. */
	iov[0].iov_base = buf;
	iov[0].iov_len = lbs;
	iov[1].iov_base = buf + 4096 + 1;
	iov[1].iov_len = lbs;
	dio_req_prep_readv(&r, d.h, iov, 2, 0);
	assert_int_equal(submit1(&r), -EINVAL);
	/* Empty segments do not matter; all empty is no I/O. */
	iov[1].iov_len = 0;
	iov[2].iov_base = buf + 8192;
	iov[2].iov_len = lbs;
	assert_int_equal(rw1(DIO_OP_WRITE, d.h, buf + 16384, 2 * lbs, 4 * MiB),
			 2 * lbs);
	dio_req_prep_readv(&r, d.h, iov, 3, 4 * MiB);
	assert_int_equal(submit1(&r), 1);
	assert_int_equal(tl_dio_wait(d.ctx, (struct dio_request *[]){ &r }, 1, NULL), 1);
	assert_int_equal(r.result, 2 * lbs);
	iov[0].iov_len = iov[2].iov_len = 0;
	dio_req_prep_readv(&r, d.h, iov, 3, 0);
	assert_int_equal(submit1(&r), -EINVAL);
	free(buf);
}

/* Fields that must be zero or known. */
static void test_bad_fields(void **state)
{
	uint8_t *buf = tl_xalloc(4096, 0);
	struct {
		struct dio_request r;
		uint64_t tail;
	} big;
	struct dio_request r;

	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.opcode = DIO_OP_LAST + 1;
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.flags = 0x8000;
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.pad0 = 1;
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.pad1 = 1;
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.pad2[2] = 1;
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.reserved[1] = 1;
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.size = DIO_REQUEST_SIZE_VER0 - 8;
	assert_int_equal(submit1(&r), -EINVAL);
	/* A newer, larger request: a zero tail is fine, any other is not. */
	memset(&big, 0, sizeof(big));
	dio_req_prep_read(&big.r, d.h, buf, 4096, 0);
	big.r.size = sizeof(big);
	assert_int_equal(submit1(&big.r), 1);
	assert_int_equal(tl_dio_wait(d.ctx, (struct dio_request *[]){ &big.r }, 1,
				     NULL), 1);
	assert_int_equal(big.r.result, 4096);
	big.tail = 1;
	assert_int_equal(submit1(&big.r), -E2BIG);
	/* Handles: unknown, and 0. */
	dio_req_prep_read(&r, d.h + 1000, buf, 4096, 0);
	assert_int_equal(submit1(&r), -EBADF);
	dio_req_prep_read(&r, 0, buf, 4096, 0);
	assert_int_equal(submit1(&r), -EBADF);
	free(buf);
}

static void test_past_end(void **state)
{
	uint8_t *buf = tl_xalloc(2 * 4096, 0);
	struct dio_request r;
	size_t lbs = d.lbs;

	dio_req_prep_read(&r, d.h, buf, lbs, d.cap);
	assert_int_equal(submit1(&r), -ENXIO);
	dio_req_prep_write(&r, d.h, buf, 2 * lbs, d.cap - lbs);
	assert_int_equal(submit1(&r), -ENXIO);
	dio_req_prep_read(&r, d.h, buf, lbs, UINT64_MAX - lbs + 1);
	assert_int_equal(submit1(&r), -ENXIO);
	dio_req_prep_read(&r, d.h, buf, lbs, d.cap + 64 * MiB);
	assert_int_equal(submit1(&r), -ENXIO);
	assert_int_equal(rw1(DIO_OP_READ, d.h, buf, lbs, d.cap - lbs), lbs);
	free(buf);
}

static void test_nr_bounds(void **state)
{
	struct dio_request r, *rp = &r;
	uint64_t *many = calloc(4097, sizeof(*many));
	struct dio_submit s = { .size = sizeof(s) };
	struct dio_wait w = { .size = sizeof(w) };
	uint8_t *buf = tl_xalloc(4096, 0);
	int i;

	assert_non_null(many);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	for (i = 0; i < 4097; i++)
		many[i] = (uintptr_t)&r;
	s.reqs = (uintptr_t)many;
	s.nr = 0;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_SUBMIT, &s), -EINVAL);
	s.nr = 4097;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_SUBMIT, &s), -EINVAL);
	s.nr = 1;
	s.reserved[0] = 1;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_SUBMIT, &s), -EINVAL);
	s.reserved[0] = 0;
	s.size = DIO_SUBMIT_SIZE_VER0 - 8;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_SUBMIT, &s), -EINVAL);
	/* Nothing got in. */
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, &ts_zero), -ENOENT);

	w.reqs = (uintptr_t)many;
	w.nr = 0;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_WAIT, &w), -EINVAL);
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_COLLECT, &w), -EINVAL);
	w.nr = 4097;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_WAIT, &w), -EINVAL);
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_COLLECT, &w), -EINVAL);
	w.nr = 2;
	w.min_nr = 3;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_COLLECT, &w), -EINVAL);
	w.min_nr = 1;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_WAIT, &w), -EINVAL);
	w.min_nr = 0;
	w.pad = 1;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_COLLECT, &w), -EINVAL);
	free(many);
	free(buf);
}

/* A page that is reserved but not accessible. */
static void *noaccess_page(void)
{
	void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	assert_true(p != MAP_FAILED);
	return p;
}

/*
 * SUBMIT of 40 requests whose pointer array runs into an unreadable page
 * after @good pointers (SUBMIT reads the array 32 pointers at a time):
 * the @good before it are queued, and SUBMIT says so.
 */
static void array_into_fault(int good)
{
	struct dio_request *r = tl_xalloc(40 * sizeof(*r), 0), **rp, *got[40];
	uint8_t *buf = tl_xalloc(40 * 4096, 0), *two;

	two = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(two != MAP_FAILED);
	assert_int_equal(mprotect(two + 4096, 4096, PROT_NONE), 0);
	rp = (struct dio_request **)(two + 4096) - good;
	for (int i = 0; i < good; i++) {
		dio_req_prep_read(&r[i], d.h, buf + i * 4096, 4096, i * 4096);
		rp[i] = &r[i];
	}
	assert_int_equal(tl_dio_submit(d.ctx, rp, 40), good);
	assert_int_equal(tl_dio_collect(d.ctx, got, good, 40, NULL), good);
	for (int i = 0; i < good; i++)
		assert_int_equal(r[i].result, 4096);
	munmap(two, 8192);
	free(buf);
	free(r);
}

/*
 * COLLECT of 40 done requests into an array that runs into an unreadable
 * page after @good slots: the @good are reported (-EFAULT when none), and
 * the rest stay queued for the next COLLECT, nothing lost.
 */
static void collect_into_fault(int good)
{
	struct dio_request *r = tl_xalloc(40 * sizeof(*r), 0), *rp[40], *got[40], **outp;
	uint8_t *buf = tl_xalloc(40 * 4096, 0), *two;
	struct dio_wait w = { .size = sizeof(w), .nr = 40, .min_nr = 40,
			      .timeout_ns = DIO_WAIT_FOREVER };
	int seen = 0;

	two = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(two != MAP_FAILED);
	assert_int_equal(mprotect(two + 4096, 4096, PROT_NONE), 0);
	outp = (struct dio_request **)(two + 4096) - good;
	for (int i = 0; i < 40; i++) {
		dio_req_prep_read(&r[i], d.h, buf + i * 4096, 4096, i * 4096);
		r[i].result = SENTINEL;
		rp[i] = &r[i];
	}
	assert_int_equal(tl_dio_submit(d.ctx, rp, 40), 40);
	/* min_nr 40: all are done before the first is claimed. */
	w.reqs = (uintptr_t)outp;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_COLLECT, &w), good ? good : -EFAULT);
	for (int i = 0; i < good; i++)
		assert_int_equal(outp[i]->result, 4096);
	for (int i = 0; i < 40; i++)
		seen += r[i].result == 4096;
	assert_int_equal(seen, good);
	assert_int_equal(tl_dio_collect(d.ctx, got, 40 - good, 40, &ts_zero), 40 - good);
	for (int i = 0; i < 40; i++)
		assert_int_equal(r[i].result, 4096);
	munmap(two, 8192);
	free(buf);
	free(r);
}

static void test_efault(void **state)
{
	struct dio_submit s = { .size = sizeof(s), .nr = 1 };
	struct dio_wait w = { .size = sizeof(w), .nr = 1 };
	uint8_t *buf = tl_xalloc(8192, 0), *bad = noaccess_page(), *half;
	struct dio_request r, *rp = &r, *got[2];
	struct iovec iov[2], *iov_bad = (struct iovec *)bad;
	uint64_t addr;

	/* The array of request pointers. */
	s.reqs = 0;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_SUBMIT, &s), -EFAULT);
	s.reqs = (uintptr_t)bad;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_SUBMIT, &s), -EFAULT);
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_SUBMIT, NULL), -EFAULT);
	/* The request itself. */
	assert_int_equal(tl_dio_submit(d.ctx, (struct dio_request *[]){ NULL }, 1),
			 -EFAULT);
	assert_int_equal(tl_dio_submit(d.ctx, (struct dio_request *[]){
				(struct dio_request *)bad }, 1), -EFAULT);
	/* The data buffer, and an iovec array or segment. */
	dio_req_prep_write(&r, d.h, NULL, 4096, 0);
	assert_int_equal(submit1(&r), -EFAULT);
	dio_req_prep_write(&r, d.h, bad, 4096, 0);
	assert_int_equal(submit1(&r), -EFAULT);
	dio_req_prep_read(&r, d.h, bad, 4096, 0);
	assert_int_equal(submit1(&r), -EFAULT);
	dio_req_prep_readv(&r, d.h, iov_bad, 2, 0);
	assert_int_equal(submit1(&r), -EFAULT);
	dio_req_prep_readv(&r, d.h, NULL, 2, 0);
	assert_int_equal(submit1(&r), -EFAULT);
	iov[0].iov_base = bad;
	iov[0].iov_len = 4096;
	iov[1].iov_base = buf;
	iov[1].iov_len = 4096;
	dio_req_prep_writev(&r, d.h, iov, 2, 0);
	assert_int_equal(submit1(&r), -EFAULT);
	/* None of them stayed. */
	assert_int_equal(tl_dio_collect(d.ctx, got, 0, 2, &ts_zero), 0);
	assert_int_equal(tl_slab_active("dio_kreq"), 0);

	/*
	 * Half the buffer mapped: the first bios go, the rest cannot be
	 * built, and the request fails as a whole.
	 */
	half = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(half != MAP_FAILED);
	memset(half, 1, 1 * MiB);
	assert_int_equal(mprotect(half + 1 * MiB, 1 * MiB, PROT_NONE), 0);
	dio_req_prep_read(&r, d.h, half, 2 * MiB, 0);
	r.result = SENTINEL;
	assert_int_equal(submit1(&r), 1);
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, -EFAULT);
	munmap(half, 2 * MiB);

	/* COLLECT into an unusable array: the completion stays queued. */
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.result = SENTINEL;
	assert_int_equal(submit1(&r), 1);
	w.reqs = (uintptr_t)bad;
	w.min_nr = 1;
	w.timeout_ns = DIO_WAIT_FOREVER;
	/* The kernel cannot write there (a sanity check of the test). */
	assert_int_equal(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, bad), -1);
	assert_int_equal(errno, EFAULT);
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_COLLECT, &w), -EFAULT);
	assert_int_equal(r.result, SENTINEL);
	w.reqs = 0;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_COLLECT, &w), -EFAULT);
	assert_int_equal(tl_dio_collect(d.ctx, got, 1, 2, NULL), 1);
	assert_ptr_equal(got[0], &r);
	assert_int_equal(r.result, 4096);
	/* WAIT with an unusable list. */
	w.reqs = (uintptr_t)bad;
	w.min_nr = 0;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_WAIT, &w), -EFAULT);
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_WAIT, NULL), -EFAULT);
	/* The address list is read, and only read. */
	addr = (uintptr_t)&r;
	w.reqs = (uintptr_t)&addr;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_WAIT, &w), -ENOENT);
	munmap(bad, 4096);
	free(buf);
	/* A request array that runs into a page it cannot read. */
	array_into_fault(35);
	array_into_fault(32);
	array_into_fault(1);
	collect_into_fault(39);
	collect_into_fault(1);
	collect_into_fault(0);
}

/*
 * A request whose struct cannot take its result any more (read-only
 * after SUBMIT): -EFAULT, and it does not block the completions behind it.
 */
/*
 * PI buffers the module cannot use: one it cannot read (a write with the
 * caller's PI) or write back (a read that returns PI) fails the request
 * with EFAULT at SUBMIT, before anything reaches the device; an iovec
 * request's PI length must be that of its data, and not 0 or above the
 * 64 KiB a request may bounce.
 */
static void test_pi_buffer_faults(void **state)
{
	unsigned int n = 4096 / d.q.pi_interval, md = d.q.pi_md_size;
	uint8_t *buf = tl_xalloc(4096, 0), *pi = tl_xalloc(128 * 1024, 0);
	uint8_t *bad = noaccess_page();
	struct iovec iov = { .iov_base = buf, .iov_len = 4096 };
	struct dio_request r;

	(void)state;
	assert_true(n >= 1 && md >= 8);
	dio_req_prep_write(&r, d.h, buf, 4096, 0);
	r.flags |= DIO_REQ_PI;
	r.pi_buf = (uintptr_t)bad;
	r.pi_len = n * md;
	assert_int_equal(submit1(&r), -EFAULT);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.flags |= DIO_REQ_PI;
	r.pi_buf = (uintptr_t)bad;
	r.pi_len = n * md;
	assert_int_equal(submit1(&r), -EFAULT);

	dio_req_prep_readv(&r, d.h, &iov, 1, 0);
	r.flags |= DIO_REQ_PI;
	r.pi_buf = (uintptr_t)pi;
	r.pi_len = 0;
	assert_int_equal(submit1(&r), -EINVAL);
	r.pi_len = 64 * 1024 + md;
	assert_int_equal(submit1(&r), -EINVAL);
	r.pi_len = (n + 1) * md;
	assert_int_equal(submit1(&r), -EINVAL);
	/* The right length works, and nothing of the refused ones stayed. */
	r.pi_len = n * md;
	assert_int_equal(submit1(&r), 1);
	assert_int_equal(tl_dio_wait(d.ctx, (struct dio_request *[]){ &r }, 1, NULL), 1);
	assert_int_equal(r.result, 4096);
	assert_int_equal(tl_slab_active("dio_kreq"), 0);
	free(buf);
	free(pi);
	munmap(bad, 4096);
}

static void test_result_unwritable(void **state)
{
	struct dio_request *r = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct dio_request other, *got[2];
	uint8_t *buf = tl_xalloc(8192, 0);
	struct pollfd pfd = { .fd = d.ctx, .events = POLLIN };

	assert_true(r != MAP_FAILED);
	dio_req_prep_read(r, d.h, buf, 4096, 0);
	r->result = SENTINEL;
	assert_int_equal(submit1(r), 1);
	assert_int_equal(poll(&pfd, 1, 10000), 1);
	assert_int_equal(mprotect(r, 4096, PROT_READ), 0);
	assert_int_equal(tl_dio_wait(d.ctx, &r, 1, NULL), -EFAULT);
	assert_int_equal(tl_dio_wait(d.ctx, &r, 1, &ts_zero), -ENOENT);
	assert_int_equal(tl_slab_active("dio_kreq"), 0);
	/* The same through COLLECT, with a good one done behind it. */
	assert_int_equal(mprotect(r, 4096, PROT_READ | PROT_WRITE), 0);
	assert_int_equal(r->result, SENTINEL);
	assert_int_equal(submit1(r), 1);
	assert_int_equal(poll(&pfd, 1, 10000), 1);
	assert_int_equal(mprotect(r, 4096, PROT_READ), 0);
	dio_req_prep_read(&other, d.h, buf + 4096, 4096, 4096);
	other.result = SENTINEL;
	assert_int_equal(submit1(&other), 1);
	assert_int_equal(tl_dio_collect(d.ctx, got, 2, 2, NULL), -EFAULT);
	assert_ptr_equal(got[0], r);
	assert_int_equal(tl_dio_collect(d.ctx, got, 1, 2, NULL), 1);
	assert_ptr_equal(got[0], &other);
	assert_int_equal(other.result, 4096);
	assert_int_equal(tl_slab_active("dio_kreq"), 0);
	munmap(r, 4096);
	free(buf);
}

/* A bad request stops the batch: those before it go, the rest are untouched. */
static void test_bad_in_middle(void **state)
{
	enum { N = 6 };
	struct dio_request r[N], *rp[N], *got[N];
	uint8_t *w = tl_xalloc(N * 4096, 0), *x = tl_xalloc(N * 4096, 0);
	uint8_t *zero = tl_xalloc(N * 4096, 0);
	struct timespec ts = ts_ms(100);
	int i;

	for (i = 0; i < N; i++) {
		tl_fill(w + i * 4096, 4096, 900 + i);
		dio_req_prep_write(&r[i], d.h, w + i * 4096, 4096,
				   10 * MiB + i * 4096);
		r[i].result = SENTINEL;
		rp[i] = &r[i];
	}
	xpwrite(x, N * 4096, 10 * MiB);		/* zeroes */
	r[2].offset = 10 * MiB + 2 * 4096 + 1;
	assert_int_equal(tl_dio_submit(d.ctx, rp, N), 2);
	assert_int_equal(tl_dio_wait(d.ctx, rp, 2, NULL), 2);
	assert_int_equal(r[0].result, 4096);
	assert_int_equal(r[1].result, 4096);
	for (i = 2; i < N; i++)
		assert_int_equal(r[i].result, SENTINEL);
	assert_int_equal(tl_dio_wait(d.ctx, rp + 3, 1, &ts_zero), -ENOENT);
	/* Nothing was queued to complete: 0 after 100 ms, however late. */
	assert_int_equal(tl_dio_collect(d.ctx, got, 1, N, &ts), 0);
	xpread(x, N * 4096, 10 * MiB);
	check_same(w, x, 2 * 4096, "requests before the bad one");
	check_same(zero, x + 2 * 4096, (N - 2) * 4096, "requests after it");
	/* A NULL in the list stops it the same way. */
	r[2].offset = 10 * MiB + 2 * 4096;
	rp[3] = NULL;
	assert_int_equal(tl_dio_submit(d.ctx, rp + 2, 3), 1);
	assert_int_equal(tl_dio_collect(d.ctx, got, 1, N, NULL), 1);
	assert_ptr_equal(got[0], &r[2]);
	assert_int_equal(r[2].result, 4096);
	assert_int_equal(r[4].result, SENTINEL);
	free(w);
	free(x);
	free(zero);
}

/* A request in flight cannot be submitted again; a reported one can. */
static void test_ebusy(void **state)
{
	struct dio_request *r = tl_xalloc(4096, 0), *rp[2], *got[2];
	uint8_t *buf = tl_xalloc(8192, 0);

	dio_req_prep_read(&r[0], d.h, buf, 4096, 0);
	dio_req_prep_read(&r[1], d.h, buf + 4096, 4096, 0);
	rp[0] = &r[0];
	rp[1] = &r[1];
	assert_int_equal(tl_dio_submit(d.ctx, rp, 1), 1);
	assert_int_equal(tl_dio_submit(d.ctx, rp, 1), -EBUSY);
	assert_int_equal(tl_dio_submit(d.ctx, (struct dio_request *[]){ &r[1], &r[0] },
				       2), 1);
	/* In one batch twice. */
	assert_int_equal(tl_dio_wait(d.ctx, rp, 2, NULL), 2);
	assert_int_equal(tl_dio_submit(d.ctx, (struct dio_request *[]){ &r[0], &r[0] },
				       2), 1);
	assert_int_equal(tl_dio_collect(d.ctx, got, 1, 2, NULL), 1);
	assert_int_equal(r[0].result, 4096);
	/* A struct overlapping one in flight. */
	assert_int_equal(tl_dio_submit(d.ctx, rp, 1), 1);
	dio_req_prep_read((struct dio_request *)((uint8_t *)r + 64), d.h,
			  buf + 4096, 4096, 0);
	assert_int_equal(tl_dio_submit(d.ctx, (struct dio_request *[]){
				(struct dio_request *)((uint8_t *)r + 64) }, 1),
			 -EBUSY);
	assert_int_equal(tl_dio_collect(d.ctx, got, 1, 2, NULL), 1);
	assert_ptr_equal(got[0], &r[0]);
	free(r);
	free(buf);
}

/*
 * The device's page cache, kept coherent as the kernel's own O_DIRECT
 * keeps it: a dio write drops the cached pages of its range, so that a
 * buffered read after it sees the new data; a dio read first writes back
 * what a buffered write left dirty in the cache; the same inside one
 * batch.  Nothing here goes through d.fd (O_DIRECT) between the buffered
 * call and the dio one: its own writeback or invalidation would hide what
 * the module does not do.
 */
static void test_page_cache(void **state)
{
	const size_t pg = 4096;
	const uint64_t off = 20 * MiB;
	uint8_t *a = tl_xalloc(pg, 0), *b = tl_xalloc(pg, 0);
	uint8_t *x = tl_xalloc(pg, 0), *y = tl_xalloc(pg, 0);
	struct dio_request r[2], *rp[2] = { &r[0], &r[1] };
	int bfd = track(open(d.path, O_RDWR | O_CLOEXEC));

	assert_true(bfd >= 0);
	/* A page cached by a buffered read, then written by a request. */
	tl_fill(a, pg, 1000);
	xpwrite(a, pg, off);
	assert_int_equal(pread(bfd, x, pg, off), pg);
	check_same(a, x, pg, "buffered read");
	tl_fill(b, pg, 1001);
	assert_int_equal(rw1(DIO_OP_WRITE, d.h, b, pg, off), pg);
	assert_int_equal(pread(bfd, x, pg, off), pg);
	check_same(b, x, pg, "buffered read after a dio write");
	/* One block at the end of a cached page: the rest of it stays. */
	assert_int_equal(rw1(DIO_OP_WRITE, d.h, a, d.lbs, off + pg - d.lbs),
			 d.lbs);
	assert_int_equal(pread(bfd, x, pg, off), pg);
	check_same(b, x, pg - d.lbs, "the page's other blocks");
	check_same(a, x + pg - d.lbs, d.lbs, "the block a dio write wrote");

	/* A buffered write left dirty in the cache, then a request reads. */
	tl_fill(a, pg, 1002);
	assert_int_equal(pwrite(bfd, a, pg, off + pg), pg);
	memset(x, 0, pg);
	assert_int_equal(rw1(DIO_OP_READ, d.h, x, pg, off + pg), pg);
	check_same(a, x, pg, "dio read of a page a buffered write dirtied");

	/* Both in one batch. */
	assert_int_equal(pread(bfd, x, pg, off + 2 * pg), pg);
	tl_fill(a, pg, 1003);
	assert_int_equal(pwrite(bfd, a, pg, off + 3 * pg), pg);
	tl_fill(b, pg, 1004);
	dio_req_prep_write(&r[0], d.h, b, pg, off + 2 * pg);
	dio_req_prep_read(&r[1], d.h, y, pg, off + 3 * pg);
	assert_int_equal(tl_dio_submit(d.ctx, rp, 2), 2);
	assert_int_equal(tl_dio_wait(d.ctx, rp, 2, NULL), 2);
	assert_int_equal(r[0].result, pg);
	assert_int_equal(r[1].result, pg);
	assert_int_equal(pread(bfd, x, pg, off + 2 * pg), pg);
	check_same(b, x, pg, "buffered read after a dio write in a batch");
	check_same(a, y, pg, "dio read in a batch of a dirty page");
	/* The next tests see a device with nothing cached, as before. */
	assert_int_equal(posix_fadvise(bfd, 0, 0, POSIX_FADV_DONTNEED), 0);
	untrack_close(bfd);
	free(a);
	free(b);
	free(x);
	free(y);
}

/*
 * test_page_cache_user()'s child, uid UID_USER in group GID_DIO: a
 * buffered write left dirty, then a request writes the same page; a page
 * root cached, written by a request; a buffered write left dirty, then
 * a request reads it.  Through descriptors and a context of its own.
 */
static int page_cache_child(void *arg)
{
	const size_t pg = 4096;
	const uint64_t off = *(const uint64_t *)arg;
	uint8_t *a = tl_alloc(pg, 0), *b = tl_alloc(pg, 0), *x = tl_alloc(pg, 0);
	int bfd, dfd, ctx, h;

	TL_CHILD_CHECK(a && b && x, "out of memory");
	bfd = open(d.path, O_RDWR | O_CLOEXEC);
	TL_CHILD_CHECK(bfd >= 0, "open %s", d.path);
	dfd = open(d.path, O_RDWR | O_DIRECT | O_CLOEXEC);
	TL_CHILD_CHECK(dfd >= 0, "open %s with O_DIRECT", d.path);
	ctx = sys_dio_init(0, DIO_PRIVATE);
	TL_CHILD_CHECK(ctx >= 0, "INIT");
	/* Root's context holds the claim. */
	h = sys_dio_open(ctx, dfd, DIO_OPEN_NOCLAIM);
	TL_CHILD_CHECK(h >= 1, "OPEN");

	/*
	 * A buffered write left dirty, then a request writes the page: the
	 * dirty page is written back before the request and dropped, so a
	 * buffered read sees the request's data, and so does the disk once
	 * the cache is synced and dropped (a page still dirty would have
	 * gone to the disk after the request, over its data).
	 */
	tl_fill(a, pg, 1200);
	TL_CHILD_CHECK(pwrite(bfd, a, pg, off) == (ssize_t)pg, "buffered write");
	tl_fill(b, pg, 1201);
	TL_CHILD_CHECK(child_rw(ctx, DIO_OP_WRITE, h, b, pg, off) == (int64_t)pg,
		       "dio write over a dirty page");
	TL_CHILD_CHECK(pread(bfd, x, pg, off) == (ssize_t)pg, "buffered read");
	TL_CHILD_CHECK(!memcmp(x, b, pg),
		       "buffered read after a dio write over a dirty page: not the write's data");
	TL_CHILD_CHECK(!fsync(bfd), "fsync");
	TL_CHILD_CHECK(!posix_fadvise(bfd, off, pg, POSIX_FADV_DONTNEED), "POSIX_FADV_DONTNEED");
	TL_CHILD_CHECK(pread(dfd, x, pg, off) == (ssize_t)pg, "O_DIRECT read");
	TL_CHILD_CHECK(!memcmp(x, b, pg),
		       "the disk after the cache was synced: not the dio write's data");

	/* The page root cached: root reads it after this child. */
	tl_fill(b, pg, 1203);
	TL_CHILD_CHECK(child_rw(ctx, DIO_OP_WRITE, h, b, pg, off + pg) == (int64_t)pg,
		       "dio write of a page root cached");

	/* A buffered write left dirty, then a request reads the page. */
	tl_fill(a, pg, 1204);
	TL_CHILD_CHECK(pwrite(bfd, a, pg, off + 2 * pg) == (ssize_t)pg, "buffered write");
	memset(x, 0, pg);
	TL_CHILD_CHECK(child_rw(ctx, DIO_OP_READ, h, x, pg, off + 2 * pg) == (int64_t)pg,
		       "dio read of a dirty page");
	TL_CHILD_CHECK(!memcmp(x, a, pg),
		       "dio read of a page a buffered write dirtied: not that write's data");

	close(ctx);
	close(dfd);
	close(bfd);
	free(a);
	free(b);
	free(x);
	return 0;
}

/*
 * test_page_cache()'s coherency as a user who is not root (uid 1000,
 * given the disk and /dev/dio_batch through group GID_DIO, with its own
 * context and descriptors): page_cache_child(); and a page root's
 * buffered read cached before it, which the user's request writes, read
 * by root afterwards: the user's data, not the page root had cached.
 */
static void test_page_cache_user(void **state)
{
	const size_t pg = 4096;
	uint64_t off = 24 * MiB;
	uint8_t *a = tl_xalloc(pg, 0), *x = tl_xalloc(pg, 0);
	int bfd = track(open(d.path, O_RDWR | O_CLOEXEC));

	assert_true(bfd >= 0);
	tl_fill(a, pg, 1202);
	xpwrite(a, pg, off + pg);
	assert_int_equal(pread(bfd, x, pg, off + pg), pg);
	check_same(a, x, pg, "root's buffered read");
	give_to_group(d.path);
	assert_int_equal(tl_run_as(UID_USER, GID_USER, GID_DIO, page_cache_child, &off), 0);
	tl_fill(a, pg, 1203);
	assert_int_equal(pread(bfd, x, pg, off + pg), pg);
	check_same(a, x, pg, "root's buffered read after the user's dio write");
	/* The next tests see a device with nothing cached, as before. */
	assert_int_equal(posix_fadvise(bfd, 0, 0, POSIX_FADV_DONTNEED), 0);
	untrack_close(bfd);
	free(a);
	free(x);
}

#define PC_MNT	"/tmp/mnt-pagecache"

/* What page_cache_busy_writes() writes, and where. */
struct busy_args {
	const char *path;
	uint64_t tag;		/* tl_fill()'s */
};

/*
 * A page the module cannot drop before a write: ext4's superblock and
 * group descriptors, whose buffers ext4 holds while it is mounted, in the
 * disk's first page.  A write there through an unclaimed handle is not
 * done and completes with -EBUSY (pwrite() with O_DIRECT would write
 * through the cache instead); the requests beside it in the batch are
 * done.  Run by tl_run_as(), as root or not, through descriptors and a
 * context of its own.
 */
static int page_cache_busy_writes(void *arg)
{
	const struct busy_args *ba = arg;
	const size_t pg = 4096;
	uint8_t *w = tl_alloc(pg, 0), *old = tl_alloc(pg, 0), *x = tl_alloc(pg, 0);
	struct dio_request r[2], *rp[2] = { &r[0], &r[1] };
	int ctx, fd, h;

	TL_CHILD_CHECK(w && old && x, "out of memory");
	fd = open(ba->path, O_RDWR | O_DIRECT | O_CLOEXEC);
	TL_CHILD_CHECK(fd >= 0, "open %s", ba->path);
	ctx = sys_dio_init(0, DIO_PRIVATE);
	TL_CHILD_CHECK(ctx >= 0, "INIT");
	h = sys_dio_open(ctx, fd, DIO_OPEN_NOCLAIM);
	TL_CHILD_CHECK(h >= 1, "OPEN");
	TL_CHILD_CHECK(pread(fd, old, pg, 0) == (ssize_t)pg, "O_DIRECT read");
	tl_fill(w, pg, ba->tag);
	dio_req_prep_write(&r[0], h, w, pg, 0);
	dio_req_prep_write(&r[1], h, w, pg, 48 * MiB);
	r[0].result = r[1].result = SENTINEL;
	TL_CHILD_CHECK(sys_dio_submit(ctx, rp, 2) == 2, "SUBMIT");
	TL_CHILD_CHECK(sys_dio_wait(ctx, rp, 2, NULL) == 2, "WAIT");
	TL_CHILD_CHECK(r[0].result == -EBUSY, "the write of the first page: %lld",
		       (long long)r[0].result);
	TL_CHILD_CHECK(r[1].result == (int64_t)pg, "the write beside it: %lld",
		       (long long)r[1].result);
	TL_CHILD_CHECK(pread(fd, x, pg, 0) == (ssize_t)pg, "O_DIRECT read");
	TL_CHILD_CHECK(!memcmp(old, x, pg), "the first page, which the write left alone");
	TL_CHILD_CHECK(pread(fd, x, pg, 48 * MiB) == (ssize_t)pg, "O_DIRECT read");
	TL_CHILD_CHECK(!memcmp(w, x, pg), "the write beside it: not its data");
	close(ctx);
	close(fd);
	free(w);
	free(old);
	free(x);
	return 0;
}

/*
 * The disk under test as ext4, mounted on PC_MNT, its path in @path: it
 * is ext4's afterwards, and the device is set up again for the next test.
 */
static void page_cache_mount(char *path, size_t len)
{
	snprintf(path, len, "%s", d.path);
	dev_detach();			/* its claim keeps mount out */
	assert_int_equal(tl_kmod_probe("ext4", NULL), 0);
	assert_int_equal(tl_sh("mkfs.ext4 -q -F -b 4096 %s >/dev/null 2>&1",
			       path), 0);
	assert_int_equal(tl_sh("mkdir -p " PC_MNT " && mount -t ext4 %s " PC_MNT,
			       path), 0);
}

/* page_cache_busy_writes() as root. */
static void test_page_cache_busy(void **state)
{
	char path[sizeof(d.path)];

	page_cache_mount(path, sizeof(path));
	assert_int_equal(tl_run_as(0, 0, 0, page_cache_busy_writes,
				   &(struct busy_args){ path, 1100 }), 0);
}

/*
 * page_cache_busy_writes() as a user who is not root (uid 1000, given the
 * disk and /dev/dio_batch through group GID_DIO): the page ext4 holds is
 * no more writable through the module for a user who may write the disk.
 */
static void test_page_cache_busy_user(void **state)
{
	char path[sizeof(d.path)];

	page_cache_mount(path, sizeof(path));
	give_to_group(path);
	assert_int_equal(tl_run_as(UID_USER, GID_USER, GID_DIO, page_cache_busy_writes,
				   &(struct busy_args){ path, 1101 }), 0);
}

static int teardown_mount(void **state)
{
	tl_sh("umount " PC_MNT " 2>/dev/null");
	return teardown_sd(state);
}

static void test_enoent(void **state)
{
	struct dio_request r[2], *rp[2] = { &r[0], &r[1] };
	uint8_t *buf = tl_xalloc(4096, 0);

	dio_req_prep_read(&r[0], d.h, buf, 4096, 0);
	dio_req_prep_read(&r[1], d.h, buf, 4096, 0);
	assert_int_equal(tl_dio_wait(d.ctx, rp + 1, 1, NULL), -ENOENT);
	assert_int_equal(submit1(&r[0]), 1);
	assert_int_equal(tl_dio_wait(d.ctx, rp, 2, NULL), 1);
	assert_int_equal(r[0].result, 4096);
	/* An address inside a request in flight is not that request. */
	assert_int_equal(submit1(&r[0]), 1);
	assert_int_equal(tl_dio_wait(d.ctx, (struct dio_request *[]){
				(struct dio_request *)((uint8_t *)&r[0] + 8) },
				     1, &ts_zero), -ENOENT);
	assert_int_equal(tl_dio_wait(d.ctx, rp, 1, NULL), 1);
	free(buf);
}

/* Revoking a handle stops new requests; those in flight complete. */
static void test_revoked_handle(void **state)
{
	struct dio_request r[3], *rp[3] = { &r[0], &r[1], &r[2] };
	uint8_t *w = tl_xalloc(8192, 0), *b = tl_xalloc(8192, 0);

	tl_fill(w, 8192, 4242);
	/*
	 * 300 ms: the two are most likely still in flight at the revocation;
	 * done already, they must be reported the same (results are written
	 * when reported, not when done): no verdict depends on it.
	 */
	sd_ndelay(300000000);
	dio_req_prep_write(&r[0], d.h, w, 8192, 12 * MiB);
	dio_req_prep_read(&r[1], d.h, b, 4096, 0);
	r[0].result = r[1].result = SENTINEL;
	assert_int_equal(tl_dio_submit(d.ctx, rp, 2), 2);
	assert_int_equal(sys_dio_close(d.ctx, d.h), 0);
	dio_req_prep_read(&r[2], d.h, b + 4096, 4096, 0);
	assert_int_equal(submit1(&r[2]), -EBADF);
	assert_int_equal(r[0].result, SENTINEL);
	assert_int_equal(tl_dio_wait(d.ctx, rp, 2, NULL), 2);
	assert_int_equal(r[0].result, 8192);
	assert_int_equal(r[1].result, 4096);
	sd_ndelay(0);
	xpread(b, 8192, 12 * MiB);
	check_same(w, b, 8192, "write in flight at revocation");
	assert_int_equal(submit1(&r[2]), -EBADF);
	/* Open it again for the tests that follow. */
	d.h = sys_dio_open(d.ctx, d.fd, 0);
	assert_true(d.h >= 1);
	free(w);
	free(b);
}

static void test_readonly_handle(void **state)
{
	int fd = track(open(d.path, O_RDONLY | O_DIRECT | O_CLOEXEC));
	int ctx = track(sys_dio_init(0, DIO_PRIVATE)), h;
	struct dio_request r, *rp = &r;
	uint8_t *buf = tl_xalloc(2 * 4096, 0);

	assert_true(fd >= 0 && ctx >= 0);
	h = sys_dio_open(ctx, fd, DIO_OPEN_NOCLAIM);
	assert_true(h >= 1);
	tl_fill(buf, 4096, 99);
	dio_req_prep_write(&r, h, buf, 4096, 0);
	assert_int_equal(tl_dio_submit(ctx, &rp, 1), -EBADF);
	dio_req_prep_writev(&r, h, &(struct iovec){ buf, 4096 }, 1, 0);
	assert_int_equal(tl_dio_submit(ctx, &rp, 1), -EBADF);
	dio_req_prep_read(&r, h, buf, 4096, 0);
	assert_int_equal(tl_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(tl_dio_wait(ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, 4096);
	xpread(buf + 4096, 4096, 0);
	check_same(buf, buf + 4096, 4096, "read through a read-only handle");
	/* Another descriptor's requests are not this one's. */
	assert_int_equal(tl_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, &ts_zero), -ENOENT);
	assert_int_equal(tl_dio_wait(ctx, &rp, 1, NULL), 1);
	untrack_close(ctx);
	untrack_close(fd);
	free(buf);
}

/* One slab object per request, and none left once reported. */
static void test_one_object_per_request(void **state)
{
	enum { N = 200 };
	struct dio_request *r = calloc(N, sizeof(*r)), **rp = calloc(N, sizeof(*rp));
	uint8_t *buf = tl_xalloc(N * 4096, 0);
	int i;

	assert_int_equal(tl_slab_active("dio_kreq"), 0);
	for (i = 0; i < N; i++) {
		dio_req_prep_read(&r[i], d.h, buf + i * 4096, 4096, i * 4096);
		rp[i] = &r[i];
	}
	assert_int_equal(tl_dio_submit(d.ctx, rp, N / 2), N / 2);
	assert_int_equal(tl_slab_active("dio_kreq"), N / 2);
	assert_int_equal(tl_dio_submit(d.ctx, rp + N / 2, N / 2), N / 2);
	assert_int_equal(tl_slab_active("dio_kreq"), N);
	assert_int_equal(tl_dio_wait(d.ctx, rp, N / 2, NULL), N / 2);
	assert_int_equal(tl_slab_active("dio_kreq"), N / 2);
	collect_exactly(d.ctx, rp + N / 2, N / 2);
	assert_int_equal(tl_slab_active("dio_kreq"), 0);
	free(r);
	free(rp);
	free(buf);
}

/* The request structs a descriptor keeps for reuse (debugfs kept_kreqs). */
static long kept_kreqs(void)
{
	char *v = tl_sysfs_read("/sys/kernel/debug/dio_batch/kept_kreqs");
	long n;

	assert_non_null(v);
	n = strtol(v, NULL, 10);
	free(v);
	return n;
}

/*
 * A descriptor keeps at most 64 of its reported requests' structs, reuses
 * them before it allocates, and frees them when it goes.
 */
static void test_kept_structs_bounded(void **state)
{
	enum { N = 200 };
	struct dio_request *r = calloc(N, sizeof(*r)), **rp = calloc(N, sizeof(*rp));
	uint8_t *buf = tl_xalloc(N * 4096, 0);
	long kept0 = kept_kreqs(), objs0 = tl_slab_active("dio_kreq") + kept0;
	int ctx = track(sys_dio_init(0, DIO_PRIVATE)), h, i, round;

	assert_true(ctx >= 0);
	h = sys_dio_open(ctx, d.fd, DIO_OPEN_NOCLAIM);
	assert_true(h >= 1);
	for (i = 0; i < N; i++) {
		dio_req_prep_read(&r[i], h, buf + i * 4096, 4096, i * 4096);
		rp[i] = &r[i];
	}
	for (round = 0; round < 3; round++) {
		assert_int_equal(tl_dio_submit(ctx, rp, N), N);
		/* The kept ones went to the new requests first. */
		assert_int_equal(kept_kreqs(), kept0);
		assert_int_equal(tl_slab_active("dio_kreq") + kept_kreqs(), objs0 + N);
		collect_exactly(ctx, rp, N);
		for (i = 0; i < N; i++)
			assert_int_equal(r[i].result, 4096);
		/* 64 kept, the other 136 freed; none alive. */
		assert_int_equal(kept_kreqs(), kept0 + 64);
		assert_int_equal(tl_slab_active("dio_kreq"), objs0 - kept0);
		assert_int_equal(tl_slab_active("dio_kreq") + kept_kreqs(), objs0 + 64);
	}
	untrack_close(ctx);
	/*
	 * The descriptor's memory goes with its last reference: at once, or
	 * from a work item; up to 5 s (x tl_slow_factor()).
	 */
	for (i = 0; i < 50 * tl_slow_factor() && kept_kreqs() != kept0; i++)
		usleep(100000);
	assert_int_equal(kept_kreqs(), kept0);
	assert_int_equal(tl_slab_active("dio_kreq") + kept_kreqs(), objs0);
	free(r);
	free(rp);
	free(buf);
}

/* Closing a descriptor with requests in flight: they are reaped. */
static void test_close_with_inflight(void **state)
{
	enum { N = 256 };
	struct dio_request *r = calloc(N, sizeof(*r)), **rp = calloc(N, sizeof(*rp));
	uint8_t *buf = tl_xalloc(N * 4096, 0);
	long files = tl_slab_active("dio_file");
	int ctx = track(sys_dio_init(0, DIO_PRIVATE)), h, i;

	assert_true(ctx >= 0);
	h = sys_dio_open(ctx, d.fd, DIO_OPEN_NOCLAIM);
	assert_true(h >= 1);
	assert_int_equal(tl_slab_active("dio_file"), files + 1);
	/*
	 * 200 ms: nothing below needs them in flight (a request is an object
	 * from SUBMIT until it is reported or reaped), but most are when the
	 * descriptor goes; they complete in a few rounds of 200 ms at the
	 * device, well within the 20 s (x tl_slow_factor()) of
	 * tl_slab_reaches().
	 */
	sd_ndelay(200000000);
	for (i = 0; i < N; i++) {
		if (i % 2)
			dio_req_prep_read(&r[i], h, buf + i * 4096, 4096,
					  i * 4096);
		else
			dio_req_prep_write(&r[i], h, buf + i * 4096, 4096,
					   20 * MiB + i * 4096);
		r[i].result = SENTINEL;
		rp[i] = &r[i];
	}
	assert_int_equal(tl_dio_submit(ctx, rp, N), N);
	assert_int_equal(tl_slab_active("dio_kreq"), N);
	untrack_close(ctx);
	assert_true(tl_slab_reaches("dio_kreq", 0, 20));
	assert_true(tl_slab_reaches("dio_file", files, 5));
	for (i = 0; i < N; i++)
		assert_int_equal(r[i].result, SENTINEL);
	free(r);
	free(rp);
	free(buf);
}

/* Everything closed: no object left, the module unloads. */
static void test_all_freed_and_unload(void **state)
{
	dev_detach();
	assert_true(tl_slab_reaches("dio_kreq", 0, 10));
	assert_true(tl_slab_reaches("dio_file", 0, 10));
	assert_true(tl_slab_reaches("dio_handle", 0, 10));
	assert_true(tl_slab_reaches("dio_ctx", 0, 10));
	assert_int_equal(tl_scsi_debug_unload(), 0);
	assert_int_equal(tl_dio_unload(), 0);
	assert_false(tl_module_loaded("dio_batch"));
}

static int group_setup(void **state)
{
	char *v;

	if (tl_dio_load())
		return -1;
	v = tl_sysfs_read(P_INFLIGHT);
	if (!v)
		return -1;
	snprintf(inflight_orig, sizeof(inflight_orig), "%s", v);
	free(v);
	return 0;
}

static int group_teardown(void **state)
{
	dev_detach();
	return 0;
}

#define T(fn, setup) { #fn, fn, setup, teardown_sd, NULL }
#define TD(name, fn, setup) { name, fn, setup, teardown_sd, NULL }

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_features, setup_sd512),
		TD("roundtrip_sd512", test_roundtrip, setup_sd512),
		TD("edges_sd512", test_edges, setup_sd512),
		TD("iovec_sd512", test_iovec, setup_sd512),
		TD("batches_sd512", test_batches, setup_sd512),
		T(test_wait_and_collect, setup_sd512),
		T(test_collect_partial_room, setup_sd512),
		T(test_poll_epoll, setup_sd512),
		T(test_queue_per_descriptor, setup_sd512),
		T(test_queue_per_descriptor_across_fork, setup_sd512),
		T(test_collect_timeout, setup_sd512),
		T(test_wait_timeout_inflight, setup_sd512),
		T(test_eintr, setup_sd512),
		T(test_eagain, setup_sd512),
		T(test_flush_fua, setup_sd512),
		TD("bad_alignment_sd512", test_bad_alignment, setup_sd512),
		TD("query_alignment_sd512", test_query_alignment, setup_sd512),
		T(test_bad_fields, setup_sd512),
		TD("past_end_sd512", test_past_end, setup_sd512),
		T(test_nr_bounds, setup_sd512),
		T(test_efault, setup_sd512),
		TD("pi_buffer_faults_sd512", test_pi_buffer_faults, setup_sd512),
		T(test_result_unwritable, setup_sd512),
		T(test_bad_in_middle, setup_sd512),
		T(test_ebusy, setup_sd512),
		T(test_page_cache, setup_sd512),
		T(test_page_cache_user, setup_sd512),
		{ "test_page_cache_busy", test_page_cache_busy, setup_sd512,
		  teardown_mount, NULL },
		{ "test_page_cache_busy_user", test_page_cache_busy_user, setup_sd512,
		  teardown_mount, NULL },
		T(test_enoent, setup_sd512),
		T(test_revoked_handle, setup_sd512),
		T(test_readonly_handle, setup_sd512),
		T(test_one_object_per_request, setup_sd512),
		T(test_kept_structs_bounded, setup_sd512),
		T(test_close_with_inflight, setup_sd512),
		TD("roundtrip_sd4k", test_roundtrip, setup_sd4k),
		TD("edges_sd4k", test_edges, setup_sd4k),
		TD("iovec_sd4k", test_iovec, setup_sd4k),
		TD("batches_sd4k", test_batches, setup_sd4k),
		TD("bad_alignment_sd4k", test_bad_alignment, setup_sd4k),
		TD("past_end_sd4k", test_past_end, setup_sd4k),
		TD("roundtrip_nvme1", test_roundtrip, setup_nvme1),
		TD("iovec_nvme1", test_iovec, setup_nvme1),
		TD("batches_nvme1", test_batches, setup_nvme1),
		TD("bad_alignment_nvme1", test_bad_alignment, setup_nvme1),
		TD("roundtrip_nvme2", test_roundtrip, setup_nvme2),
		TD("edges_nvme2", test_edges, setup_nvme2),
		TD("iovec_nvme2", test_iovec, setup_nvme2),
		TD("past_end_nvme2", test_past_end, setup_nvme2),
		TD("query_alignment_nvme2", test_query_alignment, setup_nvme2),
		TD("pi_buffer_faults_nvme2", test_pi_buffer_faults, setup_nvme2),
		T(test_all_freed_and_unload, NULL),
	};

	return cmocka_run_group_tests_name("io", tests, group_setup,
					   group_teardown);
}
