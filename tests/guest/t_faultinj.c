// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Faults: every failure surfaces as an errno of the call or as a failed
 * request result, nothing leaks, and a context stays usable once the
 * faults stop.
 *
 * On every kernel: failures of the device itself (scsi_debug offline, a
 * medium error).  On the debug kernel only (CONFIG_FAULT_INJECTION; the
 * stock kernels have none of it, and this program checks that the knobs
 * are absent there instead of skipping anything):
 *
 *  - fail-nth sweeps: each call (INIT, OPEN, QUERY, SUBMIT, WAIT, COLLECT,
 *    CLOSE, the descriptor's release) is repeated with its 1st, 2nd, ...
 *    slab or page allocation failed (/proc/thread-self/fail-nth), until a
 *    run completes without reaching the armed one;
 *  - failslab and fail_page_alloc with task-filter=Y, probability=100, an
 *    interval and a times budget, for a child process that sets
 *    /proc/self/make-it-fail around its calls only;
 *  - fail_make_request on the test disk: bios fail with -EIO, the requests
 *    report it, and failed writes leave the disk untouched;
 *  - a fail-nth sweep over loading the module itself (finit_module): the
 *    loader's allocations and dio_batch_init's, each failed in turn; a
 *    failed load leaves nothing behind (module, device node, caches,
 *    debugfs), and the last, clean load works.
 *
 * The flavour comes from DIO_FLAVOUR (tests/vm/check.sh).
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

#define SD_DRV		"/sys/bus/pseudo/drivers/scsi_debug"
#define DBGFS		"/sys/kernel/debug"
#define DEBUGFS_MAGIC	0x64626720
#define KiB		1024ULL
#define MiB		(1024 * KiB)
#define NERR		140
#define NTH_MAX		400	/* a call with more fault points fails the test */

static bool debug_kernel;
static char disk[64];
static int ctl = -1;
static int dfd = -1;		/* the disk, O_RDWR | O_DIRECT */

/* ---- helpers ---- */

static void xwrite_file(const char *path, const char *val)
{
	int ret = tl_write_file(path, val);

	if (ret)
		fail_msg("writing \"%s\" to %s: %s", val, path, strerror(-ret));
}

static int ctx_open(int *h)
{
	int ctx = sys_dio_init(0, DIO_PRIVATE);

	assert_true(ctx >= 0);
	*h = sys_dio_open(ctx, dfd, 0);
	assert_true(*h >= 1);
	return ctx;
}

/* One request, submitted and waited for; its result. */
static int64_t rw1(int ctx, int op, int h, void *buf, size_t len, uint64_t off)
{
	struct dio_request r, *rp = &r;

	if (op == DIO_OP_READ)
		dio_req_prep_read(&r, h, buf, len, off);
	else
		dio_req_prep_write(&r, h, buf, len, off);
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
	return r.result;
}

/* Write @len at @off tagged @tag, read it back through another buffer. */
static void roundtrip(int ctx, int h, size_t len, uint64_t off, uint64_t tag)
{
	uint8_t *w = tl_xalloc(len, 0x6b), *b = tl_xalloc(len, 0x6b);

	tl_fill(w, len, tag);
	assert_int_equal(rw1(ctx, DIO_OP_WRITE, h, w, len, off), (int64_t)len);
	assert_int_equal(rw1(ctx, DIO_OP_READ, h, b, len, off), (int64_t)len);
	assert_memory_equal(w, b, len);
	free(w);
	free(b);
}

/* The disk's content at @off, read with plain O_DIRECT, equals @tag's. */
static void expect_on_disk(uint64_t off, size_t len, uint64_t tag, const char *what)
{
	uint8_t *w = tl_xalloc(len, 0x6b), *b = tl_xalloc(len, 0x6b);

	tl_fill(w, len, tag);
	assert_int_equal(pread(dfd, b, len, off), (ssize_t)len);
	if (memcmp(w, b, len))
		fail_msg("%s: the disk at %llu does not hold tag %llu", what,
			 (unsigned long long)off, (unsigned long long)tag);
	free(w);
	free(b);
}

static void put_on_disk(uint64_t off, size_t len, uint64_t tag)
{
	uint8_t *w = tl_xalloc(len, 0x6b);

	tl_fill(w, len, tag);
	assert_int_equal(pwrite(dfd, w, len, off), (ssize_t)len);
	free(w);
}

/* ---- set-up ---- */

static int setup(void **state)
{
	int dbg = tl_debug_kernel();

	if (dbg < 0)
		return -1;
	debug_kernel = dbg;
	if (tl_dio_load())
		return -1;
	if (tl_scsi_debug_load("dev_size_mb=32 dif=1 dix=1 guard=0", disk, sizeof(disk)))
		return -1;
	ctl = open("/dev/dio_batch", O_RDWR | O_CLOEXEC);
	dfd = open(disk, O_RDWR | O_DIRECT | O_CLOEXEC);
	return ctl < 0 || dfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	close(ctl);
	close(dfd);
	return 0;
}

/* ---- every kernel ---- */

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/*
 * The debug kernel has the knobs, the stock kernels have none: what this
 * program runs depends on it, so it is checked, not assumed.
 */
static void test_fault_knobs_match_flavour(void **state)
{
	static const char *const knobs[] = {
		DBGFS "/failslab/probability",
		DBGFS "/failslab/task-filter",
		DBGFS "/fail_page_alloc/probability",
		DBGFS "/fail_make_request/probability",
		"/proc/self/make-it-fail",
		"/proc/thread-self/fail-nth",
	};
	char path[128];
	struct statfs sf;

	/* debugfs is mounted, so an absent knob means an absent feature. */
	assert_int_equal(statfs(DBGFS, &sf), 0);
	assert_int_equal((unsigned long)sf.f_type, DEBUGFS_MAGIC);
	snprintf(path, sizeof(path), "/sys/block/%s/make-it-fail", tl_basename(disk));
	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		if (exists(knobs[i]) != debug_kernel)
			fail_msg("%s: %s on the %s kernel", knobs[i],
				 debug_kernel ? "missing" : "present",
				 debug_kernel ? "debug" : "stock");
	}
	if (exists(path) != debug_kernel)
		fail_msg("%s: %s", path, debug_kernel ? "missing" : "present");
	if (debug_kernel) {
		/* The failslab marks of the debug guest's slub_debug=. */
		static const struct { const char *cache; const char *mark; } marks[] = {
			{ "kmalloc-64", "1" }, { "dio_kreq", "1" },
			{ "kmemleak_object", "0" }, { "kmemleak_scan_area", "0" },
			{ "debug_objects_cache", "0" },
		};

		for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
			char *v = tl_sysfs_read("/sys/kernel/slab/%s/failslab", marks[i].cache);

			if (!v || strcmp(v, marks[i].mark))
				fail_msg("/sys/kernel/slab/%s/failslab: %s, not %s (the "
					 "guest's slub_debug= missing?)", marks[i].cache,
					 v ? v : strerror(errno), marks[i].mark);
			free(v);
		}
	}
	print_message("# %s kernel: fault injection %s\n",
		      debug_kernel ? "debug" : "stock",
		      debug_kernel ? "available, all tests run" :
		      "absent (checked); injection tests not built into this run");
}

/* An offline device fails the requests; back online, all is as before. */
static void test_device_offline(void **state)
{
	enum { N = 6 };
	char path[128];
	struct dio_request r[N], *rp[N];
	uint8_t *buf = tl_xalloc(N * 64 * KiB, 0x6b);
	long hist[NERR] = { 0 };
	int ctx, h, i;

	ctx = ctx_open(&h);
	put_on_disk(1 * MiB, N * 64 * KiB, 100);
	snprintf(path, sizeof(path), "/sys/block/%s/device/state", tl_basename(disk));
	xwrite_file(path, "offline\n");	/* the newline is required */
	for (i = 0; i < N; i++) {
		if (i % 2)
			dio_req_prep_read(&r[i], h, buf + i * 64 * KiB, 64 * KiB,
					  1 * MiB + i * 64 * KiB);
		else
			dio_req_prep_write(&r[i], h, buf + i * 64 * KiB, 64 * KiB,
					   1 * MiB + i * 64 * KiB);
		r[i].result = 0x5a5a5a5a;
		rp[i] = &r[i];
	}
	assert_int_equal(sys_dio_submit(ctx, rp, N), N);
	assert_int_equal(sys_dio_wait(ctx, rp, N, NULL), N);
	xwrite_file(path, "running\n");
	for (i = 0; i < N; i++) {
		/* -EIO, or -ENODEV (BLK_STS_OFFLINE) on newer kernels. */
		if (r[i].result != -EIO && r[i].result != -ENODEV)
			fail_msg("request %d on an offline device: result %lld",
				 i, (long long)r[i].result);
		hist[-r[i].result]++;
	}
	tl_print_hist("offline device", hist, NERR);
	/* Nothing was written; the context works again. */
	expect_on_disk(1 * MiB, N * 64 * KiB, 100, "offline writes");
	roundtrip(ctx, h, 64 * KiB, 2 * MiB, 101);
	close(ctx);
	assert_true(tl_dio_caches_drained(10));
	free(buf);
}

/* A medium error fails the request that covers the bad sector, only it. */
static void test_medium_error(void **state)
{
	struct dio_request r[3], *rp[3] = { &r[0], &r[1], &r[2] };
	uint8_t *buf = tl_xalloc(4 * MiB, 0x6b);
	char *v = tl_sysfs_read("/sys/module/scsi_debug/parameters/medium_error_start");
	uint64_t bad;
	int ctx, h, i;

	assert_non_null(v);
	bad = strtoull(v, NULL, 0) * 512;
	free(v);
	print_message("# medium error at byte %llu\n", (unsigned long long)bad);
	assert_true(bad + 4 * MiB < 32 * MiB);
	ctx = ctx_open(&h);
	xwrite_file(SD_DRV "/opts", "2");
	/* Covering it: one bio; several bios; beside it. */
	dio_req_prep_read(&r[0], h, buf, 64 * KiB, bad & ~(64 * KiB - 1));
	dio_req_prep_read(&r[1], h, buf + 1 * MiB, 3 * MiB, (bad & ~(MiB - 1)) > MiB ?
			  (bad & ~(MiB - 1)) - MiB : 0);
	dio_req_prep_read(&r[2], h, buf, 64 * KiB, (bad & ~(64 * KiB - 1)) + 2 * MiB);
	for (i = 0; i < 3; i++)
		r[i].result = 0x5a5a5a5a;
	assert_int_equal(sys_dio_submit(ctx, rp, 3), 3);
	assert_int_equal(sys_dio_wait(ctx, rp, 3, NULL), 3);
	xwrite_file(SD_DRV "/opts", "0");
	print_message("# results: %lld %lld %lld\n", (long long)r[0].result,
		      (long long)r[1].result, (long long)r[2].result);
	for (i = 0; i < 2; i++)
		if (r[i].result != -ENODATA && r[i].result != -EIO)
			fail_msg("read %d over the bad sector: result %lld", i,
				 (long long)r[i].result);
	assert_int_equal(r[2].result, 64 * KiB);
	/* Without the error, the same reads work. */
	assert_int_equal(sys_dio_submit(ctx, rp, 3), 3);
	assert_int_equal(sys_dio_wait(ctx, rp, 3, NULL), 3);
	assert_int_equal(r[0].result, 64 * KiB);
	assert_int_equal(r[1].result, 3 * MiB);
	assert_int_equal(r[2].result, 64 * KiB);
	close(ctx);
	assert_true(tl_dio_caches_drained(10));
	free(buf);
}

/* ---- debug kernel: fault injection ---- */

/* A knob: its path, the value it had, the value the test wants. */
struct knob {
	const char *path;
	const char *want;
	char saved[64];
};

static struct knob slab_knobs[] = {
	{ DBGFS "/failslab/ignore-gfp-wait", "N", "" },
	/*
	 * Only caches marked failslab fail.  6.1's /sys/kernel/slab/NAME/
	 * failslab is read-only: the debug guest boots with slub_debug=A;-,
	 * kmemleak_object,kmemleak_scan_area,debug_objects_cache (kernel.sh),
	 * which marks every cache (the module's, created later, too) but the
	 * debug kernel's own bookkeeping.  Those allocations sit beside
	 * nearly every other one and survive a failure (fallback pools):
	 * unfiltered, they were half of every fail-nth sweep's points (the
	 * module load: 998 points, 748 of them loads that succeeded anyway
	 * and were unloaded again; filtered, 490 and 257, the failed loads
	 * as many as before).  test_fault_knobs_match_flavour checks the
	 * marks.
	 */
	{ DBGFS "/failslab/cache-filter", "Y", "" },
	{ DBGFS "/failslab/verbose", "1", "" },
	{ DBGFS "/failslab/task-filter", "Y", "" },
	{ DBGFS "/failslab/space", "0", "" },
	{ DBGFS "/fail_page_alloc/ignore-gfp-wait", "N", "" },
	{ DBGFS "/fail_page_alloc/ignore-gfp-highmem", "N", "" },
	{ DBGFS "/fail_page_alloc/min-order", "0", "" },
	{ DBGFS "/fail_page_alloc/verbose", "1", "" },
	{ DBGFS "/fail_page_alloc/task-filter", "Y", "" },
	{ DBGFS "/fail_page_alloc/space", "0", "" },
	{ DBGFS "/fail_make_request/verbose", "1", "" },
	{ DBGFS "/fail_make_request/task-filter", "Y", "" },
	{ DBGFS "/fail_make_request/space", "0", "" },
	/* Off until a test turns it on. */
	{ DBGFS "/failslab/probability", "0", "" },
	{ DBGFS "/fail_page_alloc/probability", "0", "" },
	{ DBGFS "/fail_make_request/probability", "0", "" },
	{ DBGFS "/failslab/interval", "1", "" },
	{ DBGFS "/fail_page_alloc/interval", "1", "" },
	{ DBGFS "/fail_make_request/interval", "1", "" },
	{ DBGFS "/failslab/times", "1", "" },
	{ DBGFS "/fail_page_alloc/times", "1", "" },
	{ DBGFS "/fail_make_request/times", "1", "" },
};
#define NKNOBS (sizeof(slab_knobs) / sizeof(slab_knobs[0]))

static int knobs_set(void **state)
{
	for (size_t i = 0; i < NKNOBS; i++) {
		char *v = tl_sysfs_read("%s", slab_knobs[i].path);

		if (!v) {
			fprintf(stderr, "%s: missing\n", slab_knobs[i].path);
			return -1;
		}
		snprintf(slab_knobs[i].saved, sizeof(slab_knobs[i].saved), "%s", v);
		free(v);
		if (tl_write_file(slab_knobs[i].path, slab_knobs[i].want)) {
			fprintf(stderr, "%s: cannot write %s\n",
				slab_knobs[i].path, slab_knobs[i].want);
			return -1;
		}
	}
	return 0;
}

static int knobs_restore(void **state)
{
	char path[128];

	/* Probabilities first: nothing fires while the rest goes back. */
	for (size_t i = NKNOBS; i-- > 0;)
		tl_write_file(slab_knobs[i].path, slab_knobs[i].saved);
	snprintf(path, sizeof(path), "/sys/block/%s/make-it-fail", tl_basename(disk));
	tl_write_file(path, "0");
	tl_write_file("/proc/thread-self/make-it-fail", "0");
	tl_write_file("/proc/thread-self/fail-nth", "0");
	tl_scsi_debug_ndelay(0);
	return 0;
}

/* ---- fail-nth ---- */

static int nth_fd = -1;

static void nth_arm(int n)
{
	char b[16];
	int len = snprintf(b, sizeof(b), "%d", n);

	if (nth_fd < 0)
		nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	assert_true(nth_fd >= 0);
	assert_int_equal(pwrite(nth_fd, b, len, 0), len);
}

/* Disarm; did the armed fault fire? */
static bool nth_fired(void)
{
	char b[16] = "";
	int left;

	assert_true(pread(nth_fd, b, sizeof(b) - 1, 0) > 0);
	left = atoi(b);
	if (left)
		assert_int_equal(pwrite(nth_fd, "0", 1, 0), 1);
	return left == 0;
}

struct sweep {
	const char *name;
	int points;		/* fault points the call reached */
	long call_hist[NERR];	/* 0: the call succeeded */
	long result_hist[NERR];	/* 0: full length (requests only) */
	uint64_t t0;		/* when its first call returned */
};

static void sweep_done(struct sweep *s)
{
	char title[128];

	print_message("# %s: %d fault points (%.1f s)\n", s->name, s->points,
		      s->t0 ? (tl_now_ns() - s->t0) / 1e9 : 0.0);
	snprintf(title, sizeof(title), "%s: calls", s->name);
	tl_print_hist(title, s->call_hist, NERR);
	if (s->result_hist[0] || s->points > 0) {
		bool any = false;

		for (int e = 0; e < NERR; e++)
			any = any || s->result_hist[e];
		if (any) {
			snprintf(title, sizeof(title), "%s: results", s->name);
			tl_print_hist(title, s->result_hist, NERR);
		}
	}
	if (s->points >= NTH_MAX)
		fail_msg("%s: more than %d fault points", s->name, NTH_MAX);
}

/* An allocation failure may only fail a call with ENOMEM. */
static void sweep_call(struct sweep *s, int n, int ret, int err, bool fired)
{
	if (!s->t0)
		s->t0 = tl_now_ns();
	if (ret >= 0) {
		s->call_hist[0]++;
		return;
	}
	s->call_hist[err < NERR ? err : 0]++;
	if (err != ENOMEM)
		fail_msg("%s: fault %d%s: the call failed with %s", s->name, n,
			 fired ? "" : " (not reached)", strerror(err));
	if (!fired)
		fail_msg("%s: failed with %s without a fault", s->name, strerror(err));
}

/* A failed allocation in the I/O path: the request reports -ENOMEM or -EIO. */
static void sweep_result(struct sweep *s, int n, int64_t res, int64_t len)
{
	if (res == len) {
		s->result_hist[0]++;
		return;
	}
	if (res != -ENOMEM && res != -EIO)
		fail_msg("%s: fault %d: request result %lld", s->name, n,
			 (long long)res);
	s->result_hist[-res]++;
}

static void test_nth_init(void **state)
{
	static const struct { const char *name; uint32_t flags; uint64_t key; bool join; } cases[] = {
		{ "INIT private", DIO_PRIVATE, 0, false },
		{ "INIT keyed, create", DIO_CREAT | DIO_EXCL, 0xfa17, false },
		{ "INIT keyed, join", 0, 0xfa18, true },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct sweep s = { .name = cases[c].name };
		int keep = -1, n, fd;
		bool fired = true;

		if (cases[c].join) {
			keep = sys_dio_init(cases[c].key, DIO_CREAT | DIO_EXCL);
			assert_true(keep >= 0);
		}
		for (n = 1; fired && n <= NTH_MAX; n++) {
			struct dio_init in = { .size = sizeof(in),
					       .flags = cases[c].flags,
					       .key = cases[c].key };

			nth_arm(n);
			fd = ioctl(ctl, DIO_IOC_INIT, &in);
			int err = errno;

			fired = nth_fired();
			sweep_call(&s, n, fd, err, fired);
			if (fd >= 0) {
				/* The context is whole: a handle opens, I/O works. */
				int h = sys_dio_open(fd, dfd, DIO_OPEN_NOCLAIM);
				uint8_t *b = tl_xalloc(4096, 0x6b);

				assert_true(h >= 1);
				assert_int_equal(rw1(fd, DIO_OP_READ, h, b, 4096, 0), 4096);
				free(b);
				close(fd);
			}
			s.points = n - 1;
		}
		if (keep >= 0)
			close(keep);
		sweep_done(&s);
		assert_true(tl_dio_caches_drained(10));
	}
}

static void test_nth_open_query_close(void **state)
{
	struct sweep so = { .name = "OPEN (new handle)" };
	struct sweep s2 = { .name = "OPEN (second reference)" };
	struct sweep sq = { .name = "QUERY" };
	struct sweep sc = { .name = "CLOSE" };
	struct dio_query q;
	bool fired;
	int n, ctx, h, ret, err;

	for (fired = true, n = 1; fired && n <= NTH_MAX; n++) {
		ctx = sys_dio_init(0, DIO_PRIVATE);
		assert_true(ctx >= 0);
		nth_arm(n);
		h = sys_dio_open(ctx, dfd, 0);
		err = errno;
		fired = nth_fired();
		sweep_call(&so, n, h, err, fired);
		if (h >= 0) {
			assert_int_equal(sys_dio_query(ctx, h, &q), 0);
			assert_int_equal(q.capacity, 32 * MiB);
		} else {
			/* Nothing half-made: the claim is free, the handle absent. */
			assert_int_equal(sys_dio_query(ctx, 1, &q), -1);
			assert_int_equal(errno, EBADF);
			h = sys_dio_open(ctx, dfd, 0);
			assert_true(h >= 1);
		}
		close(ctx);
		so.points = n - 1;
	}
	sweep_done(&so);

	ctx = ctx_open(&h);
	for (fired = true, n = 1; fired && n <= NTH_MAX; n++) {
		nth_arm(n);
		ret = sys_dio_open(ctx, dfd, 0);
		err = errno;
		fired = nth_fired();
		sweep_call(&s2, n, ret, err, fired);
		if (ret >= 0) {
			assert_int_equal(ret, h);
			assert_int_equal(sys_dio_close(ctx, h), 0);
		}
		s2.points = n - 1;
	}
	sweep_done(&s2);
	/* The references balance: one close revokes the handle. */
	assert_int_equal(sys_dio_close(ctx, h), 0);
	assert_int_equal(sys_dio_query(ctx, h, &q), -1);
	assert_int_equal(errno, EBADF);
	h = sys_dio_open(ctx, dfd, 0);
	assert_true(h >= 1);

	for (fired = true, n = 1; fired && n <= NTH_MAX; n++) {
		nth_arm(n);
		ret = sys_dio_query(ctx, h, &q);
		err = errno;
		fired = nth_fired();
		sweep_call(&sq, n, ret, err, fired);
		sq.points = n - 1;
	}
	sweep_done(&sq);

	for (fired = true, n = 1; fired && n <= NTH_MAX; n++) {
		assert_int_equal(sys_dio_open(ctx, dfd, 0), h);	/* 2 refs */
		nth_arm(n);
		ret = sys_dio_close(ctx, h);
		err = errno;
		fired = nth_fired();
		sweep_call(&sc, n, ret, err, fired);
		if (ret == 0)
			assert_int_equal(sys_dio_query(ctx, h, &q), 0);	/* 1 left */
		else
			assert_int_equal(sys_dio_close(ctx, h), 0);
		sc.points = n - 1;
	}
	sweep_done(&sc);
	close(ctx);
	assert_true(tl_dio_caches_drained(10));
}

/*
 * SUBMIT with each of its fault points failed: the batch is refused with
 * ENOMEM, or accepted and every request reports its length or a failure;
 * a write that reports its length is on the disk.
 */
static void test_nth_submit(void **state)
{
	enum { NSEG = 12 };	/* more than UIO_FASTIOV: an allocated iovec */
	const size_t big = 2 * MiB;	/* more than one bio */
	struct sweep s = { .name = "SUBMIT (write, iovec write, 2 MiB write, read)" };
	uint8_t *w = tl_xalloc(big, 0x6b), *seg = tl_xalloc(NSEG * 4096, 0x6b);
	uint8_t *rb = tl_xalloc(64 * KiB, 0x6b);
	struct dio_request r[4], *rp[4] = { &r[0], &r[1], &r[2], &r[3] };
	struct iovec iov[NSEG];
	int ctx, h, n, ret, err, i;
	bool fired;

	ctx = ctx_open(&h);
	put_on_disk(20 * MiB, 64 * KiB, 7);
	for (fired = true, n = 1; fired && n <= NTH_MAX; n++) {
		tl_fill(w, big, 1000 + n);
		tl_fill(seg, NSEG * 4096, 2000 + n);
		for (i = 0; i < NSEG; i++) {
			/* Scattered in memory, contiguous on disk. */
			iov[i].iov_base = seg + ((i * 5) % NSEG) * 4096;
			iov[i].iov_len = 4096;
		}
		dio_req_prep_write(&r[0], h, w, 64 * KiB, 0);
		dio_req_prep_writev(&r[1], h, iov, NSEG, 1 * MiB);
		dio_req_prep_write(&r[2], h, w, big, 4 * MiB);
		dio_req_prep_read(&r[3], h, rb, 64 * KiB, 20 * MiB);
		for (i = 0; i < 4; i++)
			r[i].result = 0x5a5a5a5a;
		nth_arm(n);
		ret = sys_dio_submit(ctx, rp, 4);
		err = errno;
		fired = nth_fired();
		sweep_call(&s, n, ret, err, fired);
		if (ret > 0) {
			assert_int_equal(sys_dio_wait(ctx, rp, ret, NULL), ret);
			for (i = 0; i < ret; i++)
				sweep_result(&s, n, r[i].result, i == 1 ? NSEG * 4096 :
					     (int64_t)r[i].len);
			for (i = ret; i < 4; i++)
				assert_int_equal(r[i].result, 0x5a5a5a5a);
			/* What reports success is on the disk. */
			if (ret > 0 && r[0].result == 64 * KiB)
				expect_on_disk(0, 64 * KiB, 1000 + n, "write");
			if (ret > 1 && r[1].result == NSEG * 4096) {
				uint8_t *b = tl_xalloc(NSEG * 4096, 0x6b);

				assert_int_equal(pread(dfd, b, NSEG * 4096, 1 * MiB),
						 NSEG * 4096);
				for (i = 0; i < NSEG; i++)
					assert_memory_equal(b + i * 4096,
							    iov[i].iov_base, 4096);
				free(b);
			}
			if (ret > 2 && r[2].result == (int64_t)big)
				expect_on_disk(4 * MiB, big, 1000 + n, "2 MiB write");
			if (ret > 3 && r[3].result == 64 * KiB) {
				uint8_t *e = tl_xalloc(64 * KiB, 0x6b);

				tl_fill(e, 64 * KiB, 7);
				assert_memory_equal(rb, e, 64 * KiB);
				free(e);
			}
		}
		/* Nothing stays queued. */
		assert_int_equal(sys_dio_collect(ctx, rp, 0, 4, &(struct timespec){ 0, 0 }), 0);
		s.points = n - 1;
	}
	sweep_done(&s);
	roundtrip(ctx, h, 64 * KiB, 8 * MiB, 3);
	close(ctx);
	assert_true(tl_dio_caches_drained(10));
	free(w);
	free(seg);
	free(rb);
}

/*
 * PI under allocation faults.  Each round submits a write with the
 * caller's PI (DIO_PI_VERIFY_USER), a write whose PI the module generates
 * (DIO_PI_GEN_APPTAG), a read returning PI and checking all three tags,
 * and a plain read of a block whose data changed behind its PI, which the
 * module locates by reading it again an interval at a time.  Pass 0 arms
 * SUBMIT (PI buffers, payloads, generation), pass 1 arms WAIT
 * (verification, and the locating reads with their own pages and bios).
 * Every write rewrites what is there, so the reads in the same batch see
 * the same bytes whichever comes first.  The corrupted read reports
 * -EILSEQ unless the fault failed its I/O, with its exact block unless
 * the fault hit the search (then its first interval and no tag).
 */
enum { PI_LEN = 64 * KiB, PI_APP = 0x2bad };
#define PI_WOFF		(12 * MiB)
#define PI_GOFF		(13 * MiB)

static void prep_pi_round(struct dio_request *r, int h, uint8_t *w, uint8_t *g,
			  uint8_t *rb, uint8_t *bb, uint8_t *pi_w, uint8_t *pi_r,
			  size_t pilen)
{
	int i;

	dio_req_prep_write(&r[0], h, w, PI_LEN, PI_WOFF);
	dio_req_set_pi(&r[0], pi_w, pilen, DIO_PI_VERIFY_USER, 0, 0);
	dio_req_prep_write(&r[1], h, g, PI_LEN, PI_GOFF);
	r[1].pi_flags = DIO_PI_GEN_APPTAG;
	r[1].app_tag = PI_APP;
	memset(rb, 0, PI_LEN);
	dio_req_prep_read(&r[2], h, rb, PI_LEN, PI_GOFF);
	dio_req_set_pi(&r[2], pi_r, pilen, DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG |
		       DIO_PI_CHK_APPTAG, PI_APP, 0xffff);
	dio_req_prep_read(&r[3], h, bb, PI_LEN, 14 * MiB);
	for (i = 0; i < 4; i++)
		r[i].result = 0x5a5a5a5a;
}

static void test_nth_pi(void **state)
{
	enum { LEN = PI_LEN, APP = PI_APP, BAD = 5 };
	const uint64_t woff = PI_WOFF, goff = PI_GOFF, boff = 14 * MiB;
	char gen[128];
	struct sweep sw[2] = { { .name = "SUBMIT with PI" }, { .name = "WAIT with PI" } };
	uint8_t *w = tl_xalloc(LEN, 0x6b), *g = tl_xalloc(LEN, 0x6b);
	uint8_t *rb = tl_xalloc(LEN, 0x6b), *bb = tl_xalloc(LEN, 0x6b);
	struct dio_request r[4], *rp[4] = { &r[0], &r[1], &r[2], &r[3] }, *got[4];
	uint8_t *pi_w, *pi_r, *blk = tl_xalloc(512, 0x6b);
	struct dio_pi_profile p;
	struct dio_pi_error e;
	struct dio_query q;
	int ctx, h, n, ret, err, pass, i, more;
	size_t pilen;
	bool fired;

	ctx = ctx_open(&h);
	assert_int_equal(sys_dio_query(ctx, h, &q), 0);
	assert_int_equal(dio_pi_profile_from_query(&q, &p), 0);
	assert_int_equal(p.interval, 512);
	pilen = dio_pi_len(&p, LEN);
	pi_w = tl_xalloc(pilen, 0x6b);
	pi_r = tl_xalloc(pilen, 0x6b);
	tl_fill(w, LEN, 41);
	tl_fill(g, LEN, 42);
	assert_int_equal(dio_pi_generate(&p, w, LEN, pi_w,
					 &(struct dio_pi_params){ .seed = woff / 512 }), 0);

	/* Block BAD of boff: new data, the old tuple (generation off). */
	snprintf(gen, sizeof(gen), "/sys/block/%s/integrity/write_generate",
		 tl_basename(disk));
	put_on_disk(boff, LEN, 43);
	tl_fill(blk, 512, 44);
	xwrite_file(gen, "0");
	assert_int_equal(pwrite(dfd, blk, 512, boff + BAD * 512), 512);
	xwrite_file(gen, "1");
	/* The writes' data is there before any read of a round. */
	prep_pi_round(r, h, w, g, rb, bb, pi_w, pi_r, pilen);
	assert_int_equal(sys_dio_submit(ctx, rp, 2), 2);
	assert_int_equal(sys_dio_wait(ctx, rp, 2, NULL), 2);
	assert_int_equal(r[0].result, LEN);
	assert_int_equal(r[1].result, LEN);

	for (pass = 0; pass < 2; pass++) {
		struct sweep *s = &sw[pass];

		for (fired = true, n = 1; fired && n <= NTH_MAX; n++) {
			prep_pi_round(r, h, w, g, rb, bb, pi_w, pi_r, pilen);
			if (pass == 0) {
				nth_arm(n);
				ret = sys_dio_submit(ctx, rp, 4);
				err = errno;
				fired = nth_fired();
				sweep_call(s, n, ret, err, fired);
				if (ret > 0)
					assert_int_equal(sys_dio_wait(ctx, rp, ret, NULL), ret);
			} else {
				assert_int_equal(sys_dio_submit(ctx, rp, 4), 4);
				/*
				 * Most likely all done before the call; if
				 * not, WAIT sleeps, which allocates nothing,
				 * and completions run outside this task,
				 * where fail-nth does not count: the sweep's
				 * verdict is the same.
				 */
				usleep(20000);
				nth_arm(n);
				ret = sys_dio_wait(ctx, rp, 4, NULL);
				err = errno;
				fired = nth_fired();
				sweep_call(s, n, ret, err, fired);
				more = ret < 4 ? sys_dio_collect(ctx, got, 4 - (ret > 0 ? ret : 0),
								 4, NULL) : 0;
				assert_int_equal(more + (ret > 0 ? ret : 0), 4);
				ret = 4;
			}
			/* SUBMIT returns -1 when the first request failed. */
			if (ret < 0)
				ret = 0;
			for (i = 0; i < ret; i++) {
				if (i == 3)
					continue;
				sweep_result(s, n, r[i].result, LEN);
			}
			for (i = ret; i < 4; i++)
				assert_int_equal(r[i].result, 0x5a5a5a5a);
			/* What reports success holds: the data and all three tags. */
			if (ret > 2 && r[2].result == LEN) {
				assert_memory_equal(rb, g, LEN);
				assert_int_equal(dio_pi_verify(&p, rb, LEN, pi_r,
							       &(struct dio_pi_params){ .seed = goff / 512,
											.app_tag = APP,
											.app_mask = 0xffff,
											.chk_flags = DIO_PI_CHK_ALL },
							       &e), 0);
			}
			if (ret > 3 && r[3].result != -ENOMEM && r[3].result != -EIO) {
				assert_int_equal(r[3].result, -EILSEQ);
				assert_int_equal(r[3].pi_err_source, DIO_PI_SRC_DEVICE);
				/*
				 * Located at completion, in a work item the
				 * task's faults do not reach; a locate that
				 * could not run says so, never guesses.
				 */
				if (r[3].pi_err_tag == DIO_PI_TAG_NONE)
					assert_int_equal(r[3].pi_err_interval,
							 DIO_PI_INTERVAL_UNKNOWN);
				else {
					assert_int_equal(r[3].pi_err_interval, boff / 512 + BAD);
					assert_int_equal(r[3].pi_err_tag, DIO_PI_TAG_GUARD);
					assert_int_equal(r[3].pi_err_expected,
							 dio_pi_crc16_t10dif(0, blk, 512));
				}
				s->result_hist[EILSEQ]++;
			}
			/* Nothing stays queued. */
			assert_int_equal(sys_dio_collect(ctx, got, 0, 4, &(struct timespec){ 0, 0 }), 0);
			s->points = n - 1;
		}
		sweep_done(s);
	}
	/*
	 * PI verification and locating run when the I/O completes, so WAIT
	 * only copies results and PI out: it has no allocation to fail.
	 */
	close(ctx);
	if (sw[0].points < 5 || sw[1].points != 0)
		fail_msg("PI sweeps reached %d and %d fault points: SUBMIT's PI paths were "
			 "not exercised, or WAIT allocates", sw[0].points, sw[1].points);
	expect_on_disk(woff, LEN, 41, "write with PI");
	expect_on_disk(goff, LEN, 42, "write with generated PI");
	assert_true(tl_dio_caches_drained(10));
	free(w);
	free(g);
	free(rb);
	free(bb);
	free(pi_w);
	free(pi_r);
	free(blk);
}

/* WAIT and COLLECT reporting under faults (pages were released at completion). */
static void test_nth_wait_collect(void **state)
{
	struct sweep sw = { .name = "WAIT" }, sc = { .name = "COLLECT" };
	struct dio_request r[2], *rp[2] = { &r[0], &r[1] }, *got[2];
	uint8_t *b = tl_xalloc(128 * KiB, 0x6b), *e = tl_xalloc(64 * KiB, 0x6b);
	int ctx, h, n, ret, err, pass;
	bool fired;

	ctx = ctx_open(&h);
	put_on_disk(24 * MiB, 64 * KiB, 9);
	tl_fill(e, 64 * KiB, 9);
	for (pass = 0; pass < 2; pass++) {
		struct sweep *s = pass ? &sc : &sw;

		for (fired = true, n = 1; fired && n <= NTH_MAX; n++) {
			dio_req_prep_read(&r[0], h, b, 64 * KiB, 24 * MiB);
			dio_req_prep_write(&r[1], h, b + 64 * KiB, 4096, 28 * MiB);
			assert_int_equal(sys_dio_submit(ctx, rp, 2), 2);
			/*
			 * Most likely both done before the call; a WAIT or
			 * COLLECT that sleeps first makes the same calls
			 * (see the PI sweep): no verdict depends on it.
			 */
			usleep(20000);
			if (pass == 0) {
				nth_arm(n);
				ret = sys_dio_wait(ctx, rp, 2, NULL);
			} else {
				nth_arm(n);
				ret = sys_dio_collect(ctx, got, 2, 2, NULL);
			}
			err = errno;
			fired = nth_fired();
			sweep_call(s, n, ret, err, fired);
			if (ret < 2) {
				/* The rest is still there to report. */
				int more = sys_dio_collect(ctx, got, 2 - (ret > 0 ? ret : 0),
							   2, NULL);

				assert_int_equal(more + (ret > 0 ? ret : 0), 2);
			}
			sweep_result(s, n, r[0].result, 64 * KiB);
			sweep_result(s, n, r[1].result, 4096);
			if (r[0].result == 64 * KiB)
				assert_memory_equal(b, e, 64 * KiB);
			s->points = n - 1;
		}
		sweep_done(s);
	}
	close(ctx);
	assert_true(tl_dio_caches_drained(10));
	free(b);
	free(e);
}

/* The release of a descriptor with requests in flight, under faults. */
static void test_nth_release_with_inflight(void **state)
{
	enum { N = 8 };
	struct sweep s = { .name = "close() with requests in flight" };
	struct dio_request r[N], *rp[N];
	uint8_t *b = tl_xalloc(N * 4096, 0x6b);
	int n, ctx, h, ret, err, i;
	bool fired;

	/*
	 * 50 ms: the requests are most likely in flight at the close; done,
	 * they are reaped by the same release (no verdict depends on it).
	 */
	assert_int_equal(tl_scsi_debug_ndelay(50000000), 0);
	for (fired = true, n = 1; fired && n <= NTH_MAX; n++) {
		ctx = ctx_open(&h);
		for (i = 0; i < N; i++) {
			dio_req_prep_read(&r[i], h, b + i * 4096, 4096, i * 4096);
			rp[i] = &r[i];
		}
		assert_int_equal(sys_dio_submit(ctx, rp, N), N);
		nth_arm(n);
		ret = close(ctx);
		err = errno;
		fired = nth_fired();
		assert_int_equal(ret, 0);
		sweep_call(&s, n, ret, err, fired);
		s.points = n - 1;
		assert_true(tl_dio_caches_drained(10));
	}
	assert_int_equal(tl_scsi_debug_ndelay(0), 0);
	sweep_done(&s);
	free(b);
}

/* ---- fail-nth over loading the module ---- */

#define LOAD_NTH_MAX	4000	/* fault points of one finit_module() */

/* The module's slab caches (tl_dio_caches_drained()'s list). */
static const char *const dio_caches[] = {
	"dio_kreq", "dio_file", "dio_handle", "dio_ctx",
};

/*
 * Is there a slab cache @name?  /proc/slabinfo lists every cache (the
 * guests boot with slab_nomerge, so each under its own name).
 */
static bool slab_cache_exists(const char *name)
{
	char line[512];
	size_t len = strlen(name);
	bool found = false;
	FILE *f = fopen("/proc/slabinfo", "re");

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, name, len) && line[len] == ' ';
	fclose(f);
	return found;
}

/* After a failed load: nothing of the module is left. */
static void expect_no_module(int n, int err)
{
	static const char *const paths[] = {
		"/sys/module/dio_batch", "/dev/dio_batch", DBGFS "/dio_batch",
	};

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (exists(paths[i]))
			fail_msg("fault %d: the load failed with %s, but %s exists",
				 n, strerror(err), paths[i]);
	for (size_t i = 0; i < sizeof(dio_caches) / sizeof(dio_caches[0]); i++)
		if (slab_cache_exists(dio_caches[i]))
			fail_msg("fault %d: the load failed with %s, but slab cache %s "
				 "is still there", n, strerror(err), dio_caches[i]);
}

/*
 * 6.1's sysfs_slab_add() (mm/slub.c) leaks the kobject's name when
 * kobject_init_and_add() or sysfs_create_group() fails: it returns without
 * kobject_put().  kmem_cache_create() reaches it under the sweep for every
 * cache the load creates (the module's four, bioset_init()'s "bio-N").
 * Those reports, and only those, are acknowledged here: kmemleak's
 * "clear" greys the objects reported so far.  Any other report fails the
 * test and is left for the suite's final scan.
 */
static void kmemleak_ack_slab_name_leaks(void)
{
	const char *kml = DBGFS "/kmemleak";
	bool in_report = false, name = false, slab = false;
	int acked = 0, bad = 0;
	char line[512];
	FILE *f;

	/*
	 * kmemleak reports objects older than 5 s, and treats an object whose
	 * checksum changed since the last scan as referenced: two scans.  The
	 * 6 s are a lower bound (sleep never returns early; kmemleak's age
	 * is in jiffies of the same time).
	 */
	sleep(6);
	xwrite_file(kml, "scan");
	xwrite_file(kml, "scan");
	f = fopen(kml, "re");
	assert_non_null(f);
	while (true) {
		bool eof = !fgets(line, sizeof(line), f);

		if (eof || !strncmp(line, "unreferenced object", 19)) {
			if (in_report && name && slab)
				acked++;
			else if (in_report)
				bad++;
			if (eof)
				break;
			in_report = true;
			name = slab = false;
		}
		name = name || strstr(line, "kobject_set_name_vargs");
		slab = slab || strstr(line, "sysfs_slab_add");
	}
	fclose(f);
	print_message("# kmemleak: %d leaks of sysfs_slab_add()'s kobject name "
		      "(a 6.1 bug) acknowledged, %d other reports\n", acked, bad);
	if (bad)
		fail_msg("kmemleak reports %d leaks besides sysfs_slab_add()'s "
			 "(see the suite's kmemleak.txt)", bad);
	if (acked)
		xwrite_file(kml, "clear");
}

/*
 * finit_module() with its 1st, 2nd, ... slab or page allocation failed,
 * until a load completes without reaching the armed fault.  The first
 * points belong to the kernel's loader (reading the file, the module's
 * memory, sysfs, notifiers), then come dio_batch_init()'s (the request
 * cache, the bio set and its integrity pools, the workqueue, the context,
 * descriptor and handle caches, the misc device) and the loader's again.
 *
 * A failed load must fail with ENOMEM: every allocation failure in the
 * 6.1 loader (kernel/module/main.c: kernel_read_file, module_alloc,
 * percpu_modalloc, strndup_user, the COMING notifiers, mod_sysfs_setup,
 * do_init_module) and in dio_batch_init's callees (kmem_cache_create,
 * bioset_init, alloc_workqueue, misc_register's device_create) is
 * reported as -ENOMEM, and dio_batch_init passes its callees' errors on.
 * Some failures are absorbed instead (a uevent not sent, a devtmpfs node
 * or debugfs file not made, dynamic debug or a kmemleak scan area missing):
 * the load then succeeds although the fault fired; the module is unloaded
 * again and the sweep goes on, so that the load it ends with is whole.
 */
static void test_nth_module_load(void **state)
{
	const char *ko = getenv("DIO_KO");
	long hist[NERR] = { 0 };
	char errnos[512] = "", bad[256] = "", *rcu_exp;
	struct dio_features f = { .size = sizeof(f) };
	int n, ret, err, kfd, ctx, h, failed = 0, absorbed = 0, len = 0;
	bool fired = true, loaded = false;
	uint64_t t0;

	assert_non_null(ko);
	/* Everything of this program that holds the module goes first. */
	assert_true(tl_dio_caches_drained(10));
	close(ctl);
	ctl = -1;
	assert_int_equal(tl_dio_refcnt(), 0);
	assert_int_equal(tl_dio_unload(), 0);
	expect_no_module(0, 0);
	kfd = open(ko, O_RDONLY | O_CLOEXEC);
	if (kfd < 0)
		fail_msg("%s: %s", ko, strerror(errno));
	/*
	 * Only for speed: a failed load waits for RCU grace periods
	 * several times (the loader's unwinding, the module's exit).
	 */
	rcu_exp = tl_sysfs_read("/sys/kernel/rcu_expedited");
	if (rcu_exp)
		xwrite_file("/sys/kernel/rcu_expedited", "1");

	t0 = tl_now_ns();
	for (n = 1; n <= LOAD_NTH_MAX; n++) {
		nth_arm(n);
		ret = syscall(SYS_finit_module, kfd, "", 0);
		err = errno;
		fired = nth_fired();
		if (ret == 0) {
			if (!fired) {
				loaded = true;
				break;
			}
			/* A failure the loader or the module absorbs. */
			absorbed++;
			assert_int_equal(tl_dio_unload(), 0);
			continue;
		}
		failed++;
		hist[err < NERR ? err : 0]++;
		if (!fired && !bad[0])
			snprintf(bad, sizeof(bad), "fault %d (not reached): the load failed "
				 "with %s", n, strerror(err));
		/* Kept for the end: the sweep goes on to leave the module loaded. */
		if (err != ENOMEM && !bad[0])
			snprintf(bad, sizeof(bad), "fault %d: the load failed with %s, "
				 "not ENOMEM", n, strerror(err));
		expect_no_module(n, err);
	}
	close(kfd);
	if (rcu_exp) {
		xwrite_file("/sys/kernel/rcu_expedited", rcu_exp);
		free(rcu_exp);
	}
	for (int e = 0; e < NERR; e++)
		if (hist[e])
			len += snprintf(errnos + len, sizeof(errnos) - len, " %s=%ld",
					e ? strerrorname_np(e) : "other", hist[e]);
	print_message("# module load: %d injection points, %d failed loads, errnos:%s (%.1f s)\n",
		      n - 1, failed, len ? errnos : " none", (tl_now_ns() - t0) / 1e9);
	print_message("# module load: %d loads succeeded although the fault fired\n",
		      absorbed);
	if (!loaded) {
		tl_dio_load();	/* for the tests after this one */
		fail_msg("module load: still failing after %d fault points", LOAD_NTH_MAX);
	}
	assert_true(failed > 0);
	kmemleak_ack_slab_name_leaks();

	/* The clean load works: the device, its features, a context and I/O. */
	ctl = open("/dev/dio_batch", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		fail_msg("/dev/dio_batch after the load: %s", strerror(errno));
	assert_int_equal(tl_ioctl(ctl, DIO_IOC_FEATURES, &f), 0);
	assert_int_equal(f.abi_version, DIO_BATCH_ABI_VERSION);
	assert_int_equal(f.features, DIO_FEAT_ALL);
	assert_true(exists(DBGFS "/dio_batch/locate_reads"));
	ctx = ctx_open(&h);
	roundtrip(ctx, h, 64 * KiB, 10 * MiB, 500);
	close(ctx);
	assert_true(tl_dio_caches_drained(10));
	if (bad[0])
		fail_msg("module load: %s", bad);
}

/* ---- failslab / fail_page_alloc with task-filter, in a child ---- */

enum { ST_INIT, ST_OPEN, ST_SUBMIT, ST_WAIT, ST_QUERY, ST_CLOSE, ST_OLD, NSTEP };
static const char *const step_name[NSTEP] = {
	"INIT", "OPEN", "SUBMIT", "WAIT", "QUERY", "CLOSE", "I/O on the old context",
};

struct report {
	long rounds;
	long hist[NSTEP][NERR];		/* 0: success */
	long results[NERR];		/* 0: full length */
	long writes_checked;
	int bad;
	char why[256];
};

static struct report *rep;

#define CHILD_FAIL(...) do {						\
		snprintf(rep->why, sizeof(rep->why), __VA_ARGS__);	\
		rep->bad = 1;						\
		_exit(1);						\
	} while (0)

static int mif_fd = -1;

static void faults(bool on)
{
	if (pwrite(mif_fd, on ? "1" : "0", 1, 0) != 1)
		CHILD_FAIL("make-it-fail: %s", strerror(errno));
}

/* ret < 0: was errno one allocation failure may cause? */
static void child_step(int step, int ret, int err)
{
	if (ret >= 0) {
		rep->hist[step][0]++;
		return;
	}
	rep->hist[step][err < NERR ? err : 0]++;
	if (err != ENOMEM)
		CHILD_FAIL("%s failed with %s under allocation faults",
			   step_name[step], strerror(err));
}

static void child_result(int64_t res, int64_t len)
{
	if (res == len) {
		rep->results[0]++;
		return;
	}
	if (res != -ENOMEM && res != -EIO)
		CHILD_FAIL("request result %lld under allocation faults",
			   (long long)res);
	rep->results[-res]++;
}

static void child_check_disk(uint64_t off, size_t len, uint64_t tag)
{
	uint8_t *w = malloc(len), *b = NULL;

	if (!w || posix_memalign((void **)&b, 4096, len))
		CHILD_FAIL("out of memory");
	tl_fill(w, len, tag);
	if (pread(dfd, b, len, off) != (ssize_t)len || memcmp(w, b, len))
		CHILD_FAIL("a write that reported success is not on the disk");
	rep->writes_checked++;
	free(w);
	free(b);
}

/*
 * Each round: a new private context, a handle, a write, its wait, a
 * query, a close; and a read on a context made before the faults.  Only
 * the calls run with make-it-fail set.
 */
static void fault_child(int rounds)
{
	uint8_t *buf = NULL, *old = NULL;
	struct dio_request r, ro, *rp = &r, *rop = &ro;
	struct dio_query q;
	int octx, oh, i;

	mif_fd = open("/proc/self/make-it-fail", O_WRONLY | O_CLOEXEC);
	if (mif_fd < 0)
		CHILD_FAIL("/proc/self/make-it-fail: %s", strerror(errno));
	if (posix_memalign((void **)&buf, 4096, 64 * KiB) ||
	    posix_memalign((void **)&old, 4096, 64 * KiB))
		CHILD_FAIL("out of memory");
	memset(old, 0, 64 * KiB);
	/* Touch now what the faulted calls use. */
	mlockall(MCL_CURRENT | MCL_FUTURE);
	octx = sys_dio_init(0, DIO_PRIVATE);
	oh = octx >= 0 ? sys_dio_open(octx, dfd, DIO_OPEN_NOCLAIM) : -1;
	if (oh < 1)
		CHILD_FAIL("old context: %s", strerror(errno));

	for (i = 0; i < rounds; i++) {
		int ctx, h, ret;
		uint64_t tag = 5000 + i, off = (uint64_t)(i % 64) * 64 * KiB;

		rep->rounds++;
		tl_fill(buf, 64 * KiB, tag);
		/*
		 * A step that failed is done again without faults, so that
		 * every step of every round runs under them.
		 */
		faults(true);
		ctx = sys_dio_init(0, DIO_PRIVATE);
		faults(false);
		child_step(ST_INIT, ctx, errno);
		if (ctx < 0 && (ctx = sys_dio_init(0, DIO_PRIVATE)) < 0)
			CHILD_FAIL("INIT without faults: %s", strerror(errno));
		faults(true);
		h = sys_dio_open(ctx, dfd, DIO_OPEN_NOCLAIM);
		faults(false);
		child_step(ST_OPEN, h, errno);
		if (h < 1 && (h = sys_dio_open(ctx, dfd, DIO_OPEN_NOCLAIM)) < 1)
			CHILD_FAIL("OPEN without faults: %s", strerror(errno));
		{
			dio_req_prep_write(&r, h, buf, 64 * KiB, off);
			faults(true);
			ret = sys_dio_submit(ctx, &rp, 1);
			faults(false);
			child_step(ST_SUBMIT, ret, errno);
			if (ret == 1) {
				faults(true);
				ret = sys_dio_wait(ctx, &rp, 1, NULL);
				faults(false);
				child_step(ST_WAIT, ret, errno);
				if (ret != 1 && sys_dio_wait(ctx, &rp, 1, NULL) != 1)
					CHILD_FAIL("a request was lost");
				child_result(r.result, 64 * KiB);
				if (r.result == 64 * KiB)
					child_check_disk(off, 64 * KiB, tag);
			}
			faults(true);
			ret = sys_dio_query(ctx, h, &q);
			faults(false);
			child_step(ST_QUERY, ret, errno);
			if (ret == 0 && q.capacity != 32 * MiB)
				CHILD_FAIL("query: capacity %llu",
					   (unsigned long long)q.capacity);
			faults(true);
			ret = sys_dio_close(ctx, h);
			faults(false);
			child_step(ST_CLOSE, ret, errno);
		}
		faults(true);
		close(ctx);
		/* The old context, under the same faults. */
		dio_req_prep_read(&ro, oh, old, 64 * KiB, off);
		ret = sys_dio_submit(octx, &rop, 1);
		faults(false);
		child_step(ST_OLD, ret, errno);
		if (ret == 1) {
			if (sys_dio_wait(octx, &rop, 1, NULL) != 1)
				CHILD_FAIL("a request on the old context was lost");
			child_result(ro.result, 64 * KiB);
		}
	}
	/* Faults stopped: the old context works as ever. */
	tl_fill(buf, 64 * KiB, 9999);
	dio_req_prep_write(&r, oh, buf, 64 * KiB, 30 * MiB);
	if (sys_dio_submit(octx, &rp, 1) != 1 || sys_dio_wait(octx, &rp, 1, NULL) != 1 ||
	    r.result != 64 * KiB)
		CHILD_FAIL("old context after the faults: write %lld", (long long)r.result);
	dio_req_prep_read(&ro, oh, old, 64 * KiB, 30 * MiB);
	if (sys_dio_submit(octx, &rop, 1) != 1 || sys_dio_wait(octx, &rop, 1, NULL) != 1 ||
	    ro.result != 64 * KiB || memcmp(buf, old, 64 * KiB))
		CHILD_FAIL("old context after the faults: read %lld", (long long)ro.result);
	close(octx);
	_exit(0);
}

static long knob_long(const char *path)
{
	char *v = tl_sysfs_read("%s", path);
	long n = v ? strtol(v, NULL, 10) : -999;

	free(v);
	return n;
}

static void run_fault_child(const char *what, int rounds)
{
	pid_t pid;
	int st, k;

	memset(rep, 0, sizeof(*rep));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		fault_child(rounds);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	print_message("# %s: %ld rounds, %ld writes verified on the disk\n", what,
		      rep->rounds, rep->writes_checked);
	for (k = 0; k < NSTEP; k++) {
		char title[128];

		snprintf(title, sizeof(title), "%s: %s", what, step_name[k]);
		tl_print_hist(title, rep->hist[k], NERR);
	}
	tl_print_hist("request results", rep->results, NERR);
	if (rep->bad)
		fail_msg("%s: %s", what, rep->why);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("%s: the child ended with status %#x", what, st);
}

static void test_failslab_task_filter(void **state)
{
	static const char *const intervals[] = { "1", "3", "5", "7", "11" };
	const int rounds = 12;
	long injected = 0;

	for (size_t i = 0; i < sizeof(intervals) / sizeof(intervals[0]); i++) {
		char what[64];

		xwrite_file(DBGFS "/failslab/interval", intervals[i]);
		xwrite_file(DBGFS "/failslab/times", "40");
		xwrite_file(DBGFS "/failslab/probability", "100");
		snprintf(what, sizeof(what), "failslab interval %s", intervals[i]);
		run_fault_child(what, rounds);
		xwrite_file(DBGFS "/failslab/probability", "0");
		injected += 40 - knob_long(DBGFS "/failslab/times");
	}
	print_message("# failslab: %ld allocations failed\n", injected);
	assert_true(injected > 0);
	assert_true(tl_dio_caches_drained(10));
}

static void test_fail_page_alloc_task_filter(void **state)
{
	long injected;

	xwrite_file(DBGFS "/fail_page_alloc/interval", "2");
	xwrite_file(DBGFS "/fail_page_alloc/times", "40");
	xwrite_file(DBGFS "/fail_page_alloc/probability", "100");
	run_fault_child("fail_page_alloc interval 2", 30);
	xwrite_file(DBGFS "/fail_page_alloc/probability", "0");
	injected = 40 - knob_long(DBGFS "/fail_page_alloc/times");
	print_message("# fail_page_alloc: %ld page allocations failed\n", injected);
	assert_true(injected > 0);
	assert_true(tl_dio_caches_drained(10));
}

/* ---- fail_make_request ---- */

static void test_fail_make_request(void **state)
{
	enum { N = 6 };
	char mif[128];
	struct dio_request r[N], *rp[N];
	uint8_t *buf = tl_xalloc(4 * MiB, 0x6b);
	long hist[NERR] = { 0 };
	int ctx, h, i, tfd, pass;

	snprintf(mif, sizeof(mif), "/sys/block/%s/make-it-fail", tl_basename(disk));
	tfd = open("/proc/thread-self/make-it-fail", O_WRONLY | O_CLOEXEC);
	assert_true(tfd >= 0);
	ctx = ctx_open(&h);
	put_on_disk(12 * MiB, 4 * MiB, 77);
	xwrite_file(mif, "1");
	xwrite_file(DBGFS "/fail_make_request/times", "-1");
	xwrite_file(DBGFS "/fail_make_request/probability", "100");

	/* Pass 0: every bio fails.  Pass 1: every other bio. */
	for (pass = 0; pass < 2; pass++) {
		xwrite_file(DBGFS "/fail_make_request/interval", pass ? "2" : "1");
		tl_fill(buf, 4 * MiB, 300 + pass);
		dio_req_prep_write(&r[0], h, buf, 64 * KiB, 12 * MiB);
		dio_req_prep_write(&r[1], h, buf + 64 * KiB, 3 * MiB, 13 * MiB);
		dio_req_prep_read(&r[2], h, buf + 3 * MiB + 64 * KiB, 64 * KiB, 0);
		dio_req_prep_flush(&r[3], h);
		dio_req_prep_write(&r[4], h, buf + 3 * MiB + 128 * KiB, 4096,
				   12 * MiB + 64 * KiB);
		dio_req_prep_read(&r[5], h, buf + 3 * MiB + 256 * KiB, 512 * KiB, 0);
		for (i = 0; i < N; i++) {
			r[i].result = 0x5a5a5a5a;
			rp[i] = &r[i];
		}
		assert_int_equal(pwrite(tfd, "1", 1, 0), 1);
		i = sys_dio_submit(ctx, rp, N);
		assert_int_equal(pwrite(tfd, "0", 1, 0), 1);
		assert_int_equal(i, N);
		assert_int_equal(sys_dio_wait(ctx, rp, N, NULL), N);
		for (i = 0; i < N; i++) {
			int64_t len = r[i].opcode == DIO_OP_FLUSH ? 0 : (int64_t)r[i].len;

			if (pass == 0 && r[i].result != -EIO)
				fail_msg("every bio failed, request %d: result %lld",
					 i, (long long)r[i].result);
			if (pass == 1 && r[i].result != -EIO && r[i].result != len)
				fail_msg("every other bio failed, request %d: result %lld",
					 i, (long long)r[i].result);
			hist[r[i].result < 0 ? -r[i].result : 0]++;
		}
		if (pass == 0) {
			/* The failed writes did not reach the disk. */
			expect_on_disk(12 * MiB, 4 * MiB, 77, "failed writes");
		}
	}
	xwrite_file(DBGFS "/fail_make_request/probability", "0");
	xwrite_file(mif, "0");
	tl_print_hist("fail_make_request results", hist, NERR);
	/* Faults stopped: the same context works. */
	roundtrip(ctx, h, 3 * MiB, 12 * MiB, 400);
	close(ctx);
	close(tfd);
	assert_true(tl_dio_caches_drained(10));
	free(buf);
}

/* The last test: nothing left; on the debug kernel kmemleak still runs. */
static void test_all_freed(void **state)
{
	assert_true(tl_dio_caches_drained(20));
	if (debug_kernel) {
		/* kmemleak refuses commands once it disabled itself. */
		int ret = tl_write_file(DBGFS "/kmemleak", "stack=on");

		if (ret)
			fail_msg("kmemleak is off (%s): the faults disabled it, "
				 "so the suite's leak check would be empty",
				 strerror(-ret));
	}
}

#define T(fn) cmocka_unit_test(fn)
#define TI(fn) cmocka_unit_test_setup_teardown(fn, knobs_set, knobs_restore)

int main(void)
{
	const struct CMUnitTest common[] = {
		T(test_fault_knobs_match_flavour),
		T(test_device_offline),
		T(test_medium_error),
	};
	const struct CMUnitTest injection[] = {
		TI(test_nth_init),
		TI(test_nth_open_query_close),
		TI(test_nth_submit),
		TI(test_nth_pi),
		TI(test_nth_wait_collect),
		TI(test_nth_release_with_inflight),
		TI(test_failslab_task_filter),
		TI(test_fail_page_alloc_task_filter),
		TI(test_fail_make_request),
		TI(test_nth_module_load),
	};
	const struct CMUnitTest last[] = { T(test_all_freed) };
	struct CMUnitTest tests[16];
	const char *fl = getenv("DIO_FLAVOUR");
	size_t n = 0, i;

	rep = mmap(NULL, sizeof(*rep), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rep == MAP_FAILED)
		return 1;
	for (i = 0; i < sizeof(common) / sizeof(common[0]); i++)
		tests[n++] = common[i];
	/*
	 * Only the debug kernel can inject faults: elsewhere these tests are
	 * not skipped but absent, and test_fault_knobs_match_flavour checks
	 * that the kernel indeed has no knobs.
	 */
	if (fl && !strcmp(fl, "debug"))
		for (i = 0; i < sizeof(injection) / sizeof(injection[0]); i++)
			tests[n++] = injection[i];
	tests[n++] = last[0];
	return _cmocka_run_group_tests("faultinj", tests, n, setup, teardown);
}
