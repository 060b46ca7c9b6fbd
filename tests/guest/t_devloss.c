// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Device loss: a device goes away under open handles, with requests in
 * flight at the device, a thread blocked in WAIT and another one pumping
 * new requests through a second descriptor of the context.
 *
 *  - a scsi_debug disk deleted (/sys/block/sdX/device/delete), then its
 *    LUN scanned back in: it must get a fresh, working handle;
 *  - a scsi_debug host removed (add_host = -1) with its disk;
 *  - NVMe namespace 3 detached from the controller (a Namespace
 *    Attachment admin command; the controller stays up, and namespace 1
 *    keeps working), then attached again;
 *  - the NVMe controller unbound from its driver (PCI NVMe has no
 *    delete_controller; rescan_controller is tried first while the
 *    namespaces are up), then bound again, so that the programs after this
 *    one find nvme0n1-4 as before.
 *
 * Every request submitted is reported, with its length or an errno of a
 * failed device; later submissions fail with an errno or a failed result;
 * query answers or fails with an errno; handles and descriptors close;
 * the other devices keep working; nothing is left allocated and the
 * module unloads.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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
#include <linux/nvme_ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

#define SD_DRV		"/sys/bus/pseudo/drivers/scsi_debug"
#define KiB		1024ULL
#define MiB		(1024 * KiB)
#define NERR		140

static bool debug_kernel;

/* ---- helpers ---- */

static int cmp_disk(const void *a, const void *b)
{
	size_t la = strlen(a), lb = strlen(b);

	return la != lb ? (la < lb ? -1 : 1) : strcmp(a, b);
}

/* scsi_debug disks, sorted (sda < sdb < sdaa); returns how many. */
static int sd_disks(char names[][32], int max)
{
	int n = tl_scsi_debug_disks(names, max);

	qsort(names, n, sizeof(names[0]), cmp_disk);
	return n;
}

/*
 * Wait up to 20 s (x tl_slow_factor()) for @want disks with their nodes:
 * a rescan or a host's removal settles in about a second.
 */
static int sd_wait_disks(int want, char names[][32], int max)
{
	int n = 0;

	for (int i = 0; i < 400 * tl_slow_factor(); i++) {
		n = sd_disks(names, max);
		if (n == want) {
			char dev[64];
			bool all = true;

			for (int k = 0; k < n; k++) {
				snprintf(dev, sizeof(dev), "/dev/%s", names[k]);
				all = all && !access(dev, F_OK);
			}
			if (all)
				return n;
		}
		usleep(50000);
	}
	return n;
}

/* A descriptor of /dev/@name, read-write. */
/*
 * Open a disk that just appeared.  Its node can be there a moment before
 * the disk is live (open gives ENXIO then), most visibly on the debug
 * kernel: try for up to 10 s (x tl_slow_factor()), and say why when it
 * never opens.
 */
static int open_disk(const char *name)
{
	char path[64];
	int fd = -1, i;

	snprintf(path, sizeof(path), "/dev/%.31s", name);
	for (i = 0; i < 200 * tl_slow_factor(); i++) {
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd >= 0 || (errno != ENXIO && errno != ENOENT &&
				errno != ENODEV))
			break;
		usleep(50000);
	}
	if (fd < 0)
		print_message("# open %s: %s\n", path, strerror(errno));
	return fd;
}

/* The errnos a failed or vanished device may give a request. */
/*
 * While a detached NVMe namespace is still known to the kernel, the
 * controller answers its commands with Invalid Field (sct 0 / sc 0x2),
 * which the block layer turns into EOPNOTSUPP.
 */
static bool ns_detached;

/*
 * While its controller is being unbound, QEMU's NVMe may answer a read cut
 * short by the reset with a PI check error (it moves data and metadata
 * separately): EILSEQ, reported as the device's (seen once in the debug
 * kernel's run, the module's reread to locate it then finding no device).
 */
static bool ctrl_unbinding;

static bool dead_device_errno(int e)
{
	return e == EIO || e == ENODEV || e == ENXIO || e == ENOLINK ||
	       e == ETIMEDOUT || e == EREMOTEIO || (ns_detached && e == EOPNOTSUPP);
}

/* A failed result the loss of the device explains, for request @r. */
static bool dead_device_result(const struct dio_request *r)
{
	if (r->result >= 0 || -r->result >= NERR)
		return false;
	if (dead_device_errno((int)-r->result))
		return true;
	return r->result == -EILSEQ && ctrl_unbinding &&
	       r->pi_err_source == DIO_PI_SRC_DEVICE;
}

/* A write then a read of @len bytes at @off through @h: same data back. */
static void roundtrip(int ctx, int h, size_t len, uint64_t off, uint64_t tag)
{
	struct dio_request r, *rp = &r;
	uint8_t *w = tl_xalloc(len, 0x3c), *b = tl_xalloc(len, 0x3c);

	tl_fill(w, len, tag);
	dio_req_prep_write(&r, h, w, len, off);
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, (int64_t)len);
	dio_req_prep_read(&r, h, b, len, off);
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, (int64_t)len);
	assert_memory_equal(w, b, len);
	free(w);
	free(b);
}

/* ---- load while the device goes ---- */

/*
 * A thread submitting batches through its own descriptor and waiting for
 * each (with a generous time-out: a completion that never comes is a
 * lost request).
 */
struct pump {
	pthread_t t;
	int ctx;
	int h;
	uint64_t span;			/* device bytes it may touch */
	size_t len;
	volatile int stop;
	long batches;
	long submitted;
	long reported;
	long lost;
	long result_hist[NERR];		/* 0: full length */
	long submit_hist[NERR];		/* 0: accepted */
	long bad;			/* result or errno outside the set */
	int64_t bad_value;
	struct dio_request bad_req;	/* the last of them */
	bool bad_unbinding;		/* ctrl_unbinding when it was seen */
};

/*
 * Time in these tests.  A request at a device that goes must still be
 * reported, with its length or a device errno: the WAITs give it 30 s
 * (the pump, a dead handle's requests) or 60 s (a batch at the device), x
 * tl_slow_factor(); a request not reported by then counts as lost, which
 * fails the test.  What they wait for: the device's removal (hundreds of
 * ms), SCSI error handling of commands that time out after 1 s (seconds),
 * an NVMe controller's reset (about a second).  The scsi_debug delays and
 * the sleeps before a removal (100 to 300 ms) only make it likely that
 * requests are in flight when the device goes; done before, they are as
 * good (check_batch() takes their length).
 */
static void *pump_run(void *arg)
{
	enum { NR = 8 };
	struct pump *p = arg;
	struct dio_request r[NR], *rp[NR];
	uint8_t *buf = tl_xalloc(NR * p->len, 0x3c);
	struct timespec to = { 30 * tl_slow_factor(), 0 };
	uint64_t seed = 0x1234 + p->h;
	int i, n, got;

	while (!p->stop) {
		for (i = 0; i < NR; i++) {
			uint64_t quarter = p->span / 4, off;

			/*
			 * Reads in the third quarter of the span, writes in
			 * the fourth, clear of load_start()'s requests: a
			 * read racing a write of the same block can see new
			 * data with old PI (QEMU's NVMe moves data and
			 * metadata separately), a refusal no device loss
			 * explains.
			 */
			seed = tl_mix(seed + i);
			off = 2 * quarter + (i % 2) * quarter +
			      (seed % (quarter / p->len)) * p->len;
			if (i % 2)
				dio_req_prep_write(&r[i], p->h, buf + i * p->len,
						   p->len, off);
			else
				dio_req_prep_read(&r[i], p->h, buf + i * p->len,
						  p->len, off);
			r[i].result = 0x5a5a5a5a;
			rp[i] = &r[i];
		}
		n = sys_dio_submit(p->ctx, rp, NR);
		if (n < 0) {
			if (errno < NERR)
				p->submit_hist[errno]++;
			if (!dead_device_errno(errno)) {
				p->bad++;
				p->bad_value = -errno;
			}
			usleep(5000);
			continue;
		}
		p->submit_hist[0]++;
		p->submitted += n;
		got = sys_dio_wait(p->ctx, rp, n, &to);
		if (got < 0)
			got = 0;
		p->reported += got;
		p->lost += n - got;
		for (i = 0; i < got; i++) {
			int64_t res = r[i].result;

			if (res == (int64_t)p->len) {
				p->result_hist[0]++;
			} else if (dead_device_result(&r[i])) {
				p->result_hist[-res]++;
			} else {
				p->bad++;
				p->bad_value = res;
				p->bad_req = r[i];
				p->bad_unbinding = ctrl_unbinding;
			}
		}
		p->batches++;
		if (got < n)
			break;	/* lost: do not wait for ever */
	}
	free(buf);
	return NULL;
}

/*
 * Write the third quarter of @span, where the pump reads, with good data
 * and PI first: what earlier programs of the run left there (t_pi and
 * t_bounds store PI the device refuses on purpose) would otherwise fail
 * the pump's reads with EILSEQ, a refusal no device loss explains.
 */
static void pump_prefill(int ctx, int h, uint64_t span)
{
	enum { CHUNK = 1024 * 1024 };
	uint8_t *buf = tl_xalloc(CHUNK, 0x5c);
	struct dio_request r, *rp = &r;
	uint64_t off;

	for (off = span / 2; off < span / 4 * 3; off += CHUNK) {
		dio_req_prep_write(&r, h, buf, CHUNK, off);
		assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
		assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
		assert_int_equal(r.result, CHUNK);
	}
	free(buf);
}

static void pump_start(struct pump *p, int ctx, int h, uint64_t span, size_t len)
{
	pump_prefill(ctx, h, span);
	memset(p, 0, sizeof(*p));
	p->ctx = ctx;
	p->h = h;
	p->span = span;
	p->len = len;
	assert_int_equal(pthread_create(&p->t, NULL, pump_run, p), 0);
}

static void pump_stop(struct pump *p, const char *what)
{
	char title[128];

	p->stop = 1;
	assert_int_equal(pthread_join(p->t, NULL), 0);
	print_message("# %s: %ld batches, %ld requests submitted, %ld reported, %ld lost\n",
		      what, p->batches, p->submitted, p->reported, p->lost);
	snprintf(title, sizeof(title), "%s: results", what);
	tl_print_hist(title, p->result_hist, NERR);
	snprintf(title, sizeof(title), "%s: submit errors", what);
	tl_print_hist(title, p->submit_hist, NERR);
	if (p->bad)
		fail_msg("%s: %ld results or errors outside the set, last %lld (%s at %llu, pi_err_source %u, tag %u, interval %llu, expected %#llx, actual %#llx, %s unbinding)",
			 what, p->bad, (long long)p->bad_value,
			 p->bad_req.opcode == DIO_OP_READ ? "read" : "write",
			 (unsigned long long)p->bad_req.offset,
			 p->bad_req.pi_err_source, p->bad_req.pi_err_tag,
			 (unsigned long long)p->bad_req.pi_err_interval,
			 (unsigned long long)p->bad_req.pi_err_expected,
			 (unsigned long long)p->bad_req.pi_err_actual,
			 p->bad_unbinding ? "while" : "not");
	assert_int_equal(p->lost, 0);
	assert_int_equal(p->reported, p->submitted);
}

/* A thread blocked in WAIT for a batch that is at the device. */
struct waiter {
	pthread_t t;
	int ctx;
	struct dio_request **rp;
	int nr;
	int ret;
};

static void *waiter_run(void *arg)
{
	struct waiter *w = arg;
	struct timespec to = { 60 * tl_slow_factor(), 0 };

	w->ret = sys_dio_wait(w->ctx, w->rp, w->nr, &to);
	return NULL;
}

/* Submit @nr requests and start a thread waiting for them. */
static void waiter_start(struct waiter *w, int ctx, struct dio_request **rp, int nr)
{
	assert_int_equal(sys_dio_submit(ctx, rp, nr), nr);
	*w = (struct waiter){ .ctx = ctx, .rp = rp, .nr = nr };
	assert_int_equal(pthread_create(&w->t, NULL, waiter_run, w), 0);
}

/*
 * @nr requests of 4 KiB through @h, request i on buf + i * 4 KiB: odd
 * ones write at @write_off + i * 4 KiB, even ones read at i * 4 KiB.
 */
static void prep_4k_batch(struct dio_request *r, struct dio_request **rp, int nr,
			  int h, uint8_t *buf, uint64_t write_off)
{
	for (int i = 0; i < nr; i++) {
		if (i % 2)
			dio_req_prep_write(&r[i], h, buf + i * 4096, 4096,
					   write_off + i * 4096);
		else
			dio_req_prep_read(&r[i], h, buf + i * 4096, 4096, i * 4096);
		r[i].result = 0x5a5a5a5a;
		rp[i] = &r[i];
	}
}

/*
 * Requests that were at the device when it went: each reported once,
 * with its length or a device errno.
 */
static void check_batch(const char *what, struct dio_request *r, int nr, int got)
{
	long hist[NERR] = { 0 };

	assert_int_equal(got, nr);
	for (int i = 0; i < nr; i++) {
		int64_t res = r[i].result;

		if (res == (int64_t)r[i].len) {
			hist[0]++;
		} else if (dead_device_result(&r[i])) {
			hist[-res]++;
		} else {
			fail_msg("%s: request %d: result %lld", what, i,
				 (long long)res);
		}
	}
	tl_print_hist(what, hist, NERR);
}

/*
 * After the loss: new requests fail at submission with a device errno or
 * are accepted and fail; query fails with an errno or answers sanely.
 */
static void check_dead_handle(int ctx, int h, uint64_t old_capacity)
{
	struct dio_request r, *rp = &r;
	struct timespec to = { 30 * tl_slow_factor(), 0 };
	uint8_t *buf = tl_xalloc(64 * KiB, 0x3c);
	struct dio_query q;
	int op, ret;

	for (op = 0; op < 3; op++) {
		if (op == 0)
			dio_req_prep_read(&r, h, buf, 4096, 0);
		else if (op == 1)
			dio_req_prep_write(&r, h, buf, 64 * KiB, 64 * KiB);
		else
			dio_req_prep_flush(&r, h);
		r.result = 0x5a5a5a5a;
		ret = sys_dio_submit(ctx, &rp, 1);
		if (ret < 0) {
			print_message("# after the loss: op %d refused: %s\n", op,
				      strerror(errno));
			assert_true(dead_device_errno(errno));
			continue;
		}
		assert_int_equal(ret, 1);
		assert_int_equal(sys_dio_wait(ctx, &rp, 1, &to), 1);
		print_message("# after the loss: op %d result %lld\n", op,
			      (long long)r.result);
		/* A flush may find nothing to flush (no write cache). */
		assert_true((r.result < 0 && dead_device_errno(-r.result)) ||
			    (op == 2 && r.result == 0));
	}
	ret = sys_dio_query(ctx, h, &q);
	if (ret < 0) {
		print_message("# after the loss: query: %s\n", strerror(errno));
		assert_true(dead_device_errno(errno));
	} else {
		print_message("# after the loss: query: capacity %llu (was %llu), "
			      "lbs %u, profile \"%s\"\n",
			      (unsigned long long)q.capacity,
			      (unsigned long long)old_capacity,
			      q.logical_block_size, q.profile);
		assert_true(q.capacity == 0 || q.capacity == old_capacity);
		assert_true(q.logical_block_size >= 512 &&
			    q.logical_block_size <= 4096 &&
			    !(q.logical_block_size & (q.logical_block_size - 1)));
		assert_true(strnlen(q.profile, sizeof(q.profile)) < sizeof(q.profile));
	}
	free(buf);
}

/* ---- set-up ---- */

static int setup(void **state)
{
	int dbg = tl_debug_kernel();

	if (dbg < 0)
		return -1;
	debug_kernel = dbg;
	return tl_dio_load();
}

static int teardown(void **state)
{
	tl_scsi_debug_ndelay(0);
	return tl_scsi_debug_unload();
}

/* ---- tests ---- */

static void test_disk_deleted_with_io_in_flight(void **state)
{
	enum { N = 16 };
	const uint64_t key = 0xde1e7e;
	char names[8][32], dev[64], victim[32], sibling[32], hctl[64], path[256];
	char host[32];
	struct dio_request r[N], *rp[N];
	struct waiter w;
	struct pump p;
	struct dio_query q;
	uint8_t *buf = tl_xalloc(N * 64 * KiB, 0x3c);
	int a1, a2, b, fd, fds, hv, hs, hn, i, n;
	uint64_t t0;

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=32 max_luns=2", dev, sizeof(dev)), 0);
	assert_int_equal(sd_wait_disks(2, names, 8), 2);
	snprintf(victim, sizeof(victim), "%s", names[0]);
	snprintf(sibling, sizeof(sibling), "%s", names[1]);
	tl_scsi_hctl(victim, hctl, sizeof(hctl));
	assert_true(hctl[0]);
	snprintf(host, sizeof(host), "%.*s", (int)strcspn(hctl, ":"), hctl);
	print_message("# victim %s (%s), sibling %s\n", victim, hctl, sibling);

	/* Two descriptors of one context on the victim, one context on the sibling. */
	a1 = sys_dio_init(key, DIO_CREAT | DIO_EXCL);
	a2 = sys_dio_init(key, 0);
	b = sys_dio_init(0, DIO_PRIVATE);
	assert_true(a1 >= 0 && a2 >= 0 && b >= 0);
	fd = open_disk(victim);
	fds = open_disk(sibling);
	assert_true(fd >= 0 && fds >= 0);
	hv = sys_dio_open(a1, fd, 0);
	hs = sys_dio_open(b, fds, 0);
	assert_true(hv >= 1 && hs >= 1);
	assert_int_equal(sys_dio_query(a1, hv, &q), 0);
	assert_int_equal(q.capacity, 32 * MiB);

	/* A batch at the device for 300 ms, and a thread waiting for it. */
	assert_int_equal(tl_scsi_debug_ndelay(300000000), 0);
	for (i = 0; i < N; i++) {
		size_t len = i == 0 ? 64 * KiB : (size_t)(i % 3 + 1) * 4096;

		if (i % 2)
			dio_req_prep_read(&r[i], hv, buf + i * 64 * KiB, len,
					  i * 64 * KiB);
		else
			dio_req_prep_write(&r[i], hv, buf + i * 64 * KiB, len,
					   8 * MiB + i * 64 * KiB);
		r[i].result = 0x5a5a5a5a;
		rp[i] = &r[i];
	}
	waiter_start(&w, a1, rp, N);
	/* And a pump through the other descriptor, on the same handle. */
	pump_start(&p, a2, hv, 32 * MiB, 16 * KiB);
	usleep(100000);

	t0 = tl_now_ns();
	snprintf(path, sizeof(path), "/sys/block/%s/device/delete", victim);
	assert_int_equal(tl_write_file(path, "1"), 0);
	print_message("# %s deleted in %.0f ms\n", victim, (tl_now_ns() - t0) / 1e6);
	usleep(200000);
	pump_stop(&p, "pump during delete");
	assert_int_equal(pthread_join(w.t, NULL), 0);
	check_batch("batch at the device", r, N, w.ret);
	assert_int_equal(tl_scsi_debug_ndelay(0), 0);

	/*
	 * Opening the deleted disk again through the descriptor this
	 * process still holds: refused.  ENXIO (nothing at that number any
	 * more) is not among DIO_IOC_OPEN's documented errnos yet.
	 */
	{
		int other = sys_dio_init(0, DIO_PRIVATE), ret;

		assert_true(other >= 0);
		ret = sys_dio_open(other, fd, 0);
		print_message("# OPEN of the deleted disk: %d (%s)\n", ret,
			      ret < 0 ? strerror(errno) : "a handle");
		assert_int_equal(ret, -1);
		assert_true(dead_device_errno(errno) || errno == EBADF);
		close(other);
	}

	/* The dead handle. */
	check_dead_handle(a1, hv, 32 * MiB);
	check_dead_handle(a2, hv, 32 * MiB);
	/* The sibling is unaffected. */
	roundtrip(b, hs, 64 * KiB, 4 * MiB, 1);

	/* The LUN comes back: a fresh handle that works. */
	snprintf(path, sizeof(path), "/sys/class/scsi_host/host%s/scan", host);
	assert_int_equal(tl_write_file(path, "- - -"), 0);
	n = sd_wait_disks(2, names, 8);
	assert_int_equal(n, 2);
	for (i = 0; i < n && !strcmp(names[i], sibling); i++)
		;
	assert_true(i < n);
	print_message("# LUN back as %s\n", names[i]);
	close(fd);
	fd = open_disk(names[i]);
	assert_true(fd >= 0);
	hn = sys_dio_open(a2, fd, 0);
	assert_true(hn >= 1);
	assert_int_not_equal(hn, hv);
	roundtrip(a2, hn, 64 * KiB, 1 * MiB, 2);

	/* Everything closes. */
	assert_int_equal(sys_dio_close(a1, hv), 0);
	assert_int_equal(sys_dio_query(a1, hv, &q), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(sys_dio_close(a2, hn), 0);
	assert_int_equal(close(a1), 0);
	assert_int_equal(close(a2), 0);
	assert_int_equal(close(b), 0);
	close(fd);
	close(fds);
	assert_true(tl_dio_caches_drained(20));
	free(buf);
}

/*
 * Commands the device never answers (scsi_debug ignores every command,
 * timeouts of 1 s) when the disk is deleted: error handling aborts them
 * and the requests fail with an errno, not a hang.
 */
static void test_disk_deleted_with_stuck_commands(void **state)
{
	enum { N = 8 };
	char names[8][32], dev[64], hctl[64], path[160];
	struct dio_request r[N], *rp[N];
	uint8_t *buf = tl_xalloc(N * 4096, 0x3c);
	long hist[NERR] = { 0 };
	struct waiter w;
	int ctx, fd, h, i;
	uint64_t t0;

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16", dev, sizeof(dev)), 0);
	assert_int_equal(sd_wait_disks(1, names, 8), 1);
	ctx = sys_dio_init(0, DIO_PRIVATE);
	fd = open(dev, O_RDWR | O_CLOEXEC);
	assert_true(ctx >= 0 && fd >= 0);
	h = sys_dio_open(ctx, fd, 0);
	assert_true(h >= 1);
	close(fd);
	snprintf(path, sizeof(path), "/sys/block/%s/device/timeout", names[0]);
	assert_int_equal(tl_write_file(path, "1"), 0);
	/*
	 * Error handling's own commands (TEST UNIT READY after each reset)
	 * time out after eh_timeout, 10 s by default: 1 s, as the commands'.
	 * And no write cache, so that the delete sends no SYNCHRONIZE CACHE,
	 * which nobody answers either: 7.3 retries it through five rounds
	 * of error handling (an idle 118 s of the 7.3 guest's run), and the
	 * test is about the module's requests, not the sd driver's.
	 */
	snprintf(path, sizeof(path), "/sys/block/%s/device/eh_timeout", names[0]);
	assert_int_equal(tl_write_file(path, "1"), 0);
	tl_scsi_hctl(names[0], hctl, sizeof(hctl));
	snprintf(path, sizeof(path), "/sys/block/%s/device/scsi_disk/%s/cache_type",
		 names[0], hctl);
	assert_int_equal(tl_write_file(path, "temporary write through"), 0);
	/* From now on scsi_debug answers nothing. */
	assert_int_equal(tl_write_file(SD_DRV "/every_nth", "1"), 0);
	assert_int_equal(tl_write_file(SD_DRV "/opts", "4"), 0);
	prep_4k_batch(r, rp, N, h, buf, 0);
	waiter_start(&w, ctx, rp, N);
	usleep(200000);
	t0 = tl_now_ns();
	snprintf(path, sizeof(path), "/sys/block/%s/device/delete", names[0]);
	assert_int_equal(tl_write_file(path, "1"), 0);
	print_message("# %s with stuck commands deleted in %.1f s\n", names[0],
		      (tl_now_ns() - t0) / 1e9);
	assert_int_equal(pthread_join(w.t, NULL), 0);
	tl_write_file(SD_DRV "/opts", "0");
	tl_write_file(SD_DRV "/every_nth", "0");
	assert_int_equal(w.ret, N);
	for (i = 0; i < N; i++) {
		int64_t res = r[i].result;

		if (!(res < 0 && -res < NERR && dead_device_errno(-res)))
			fail_msg("stuck request %d: result %lld", i, (long long)res);
		hist[-res]++;
	}
	tl_print_hist("stuck requests at the delete", hist, NERR);
	check_dead_handle(ctx, h, 16 * MiB);
	assert_int_equal(close(ctx), 0);
	assert_true(tl_dio_caches_drained(20));
	assert_int_equal(tl_scsi_debug_unload(), 0);
	free(buf);
}

static void test_host_removed_with_io_in_flight(void **state)
{
	enum { N = 16 };
	char names[8][32], dev[64], hctl[64], keep[32] = "";
	struct dio_request r[N], *rp[N];
	uint8_t *buf = tl_xalloc(N * 4096, 0x3c);
	struct waiter w;
	struct pump p;
	int host_max = -1, victim = -1, ctx, ctx2, ctxk, fd, fdk, h, hk, i, n;

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=32", dev, sizeof(dev)), 0);
	assert_int_equal(tl_write_file(SD_DRV "/add_host", "1"), 0);
	n = sd_wait_disks(2, names, 8);
	assert_int_equal(n, 2);
	/* The disk of the host added last goes with "add_host = -1". */
	for (i = 0; i < n; i++) {
		int hn;

		tl_scsi_hctl(names[i], hctl, sizeof(hctl));
		hn = atoi(hctl);
		if (hn > host_max) {
			host_max = hn;
			victim = i;
		}
	}
	snprintf(keep, sizeof(keep), "%.31s", names[victim ? 0 : 1]);
	print_message("# victim %s on host%d, keeping %s\n", names[victim],
		      host_max, keep);

	ctx = sys_dio_init(0xde1e7f, DIO_CREAT | DIO_EXCL);
	ctx2 = sys_dio_init(0xde1e7f, 0);
	ctxk = sys_dio_init(0, DIO_PRIVATE);
	assert_true(ctx >= 0 && ctx2 >= 0 && ctxk >= 0);
	fd = open_disk(names[victim]);
	fdk = open_disk(keep);
	assert_true(fd >= 0 && fdk >= 0);
	h = sys_dio_open(ctx, fd, 0);
	hk = sys_dio_open(ctxk, fdk, 0);
	assert_true(h >= 1 && hk >= 1);
	/* The second descriptor holds a reference of its own. */
	assert_int_equal(sys_dio_open(ctx2, fd, 0), h);
	close(fd);

	assert_int_equal(tl_scsi_debug_ndelay(300000000), 0);
	prep_4k_batch(r, rp, N, h, buf, 1 * MiB);
	waiter_start(&w, ctx, rp, N);
	pump_start(&p, ctx2, h, 32 * MiB, 4096);
	usleep(100000);
	assert_int_equal(tl_write_file(SD_DRV "/add_host", "-1"), 0);
	usleep(200000);
	pump_stop(&p, "pump during host removal");
	assert_int_equal(pthread_join(w.t, NULL), 0);
	check_batch("batch at the device", r, N, w.ret);
	assert_int_equal(tl_scsi_debug_ndelay(0), 0);
	assert_int_equal(sd_wait_disks(1, names, 8), 1);
	assert_string_equal(names[0], keep);

	check_dead_handle(ctx, h, 32 * MiB);
	roundtrip(ctxk, hk, 4096, 0, 3);
	/* The first descriptor leaves with its reference; the handle stays
	 * (dead) for the second until it closes it. */
	assert_int_equal(close(ctx), 0);
	check_dead_handle(ctx2, h, 32 * MiB);
	assert_int_equal(sys_dio_close(ctx2, h), 0);
	assert_int_equal(sys_dio_close(ctx2, h), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(close(ctx2), 0);
	assert_int_equal(close(ctxk), 0);
	close(fdk);
	assert_true(tl_dio_caches_drained(20));
	assert_int_equal(tl_scsi_debug_unload(), 0);
	free(buf);
}

/* ---- NVMe ---- */

/* Set while nvme0 is unbound: the teardown binds it again if a test failed. */
/*
 * Load for a device about to go: @nr requests of 64 KiB (odd ones read,
 * even ones write; every fourth through @hb, the rest through @ha) at the
 * device with a thread in WAIT for them on @ctx, and a pump through @ha
 * on the second descriptor @ctx2.
 */
static void load_start(struct dio_request *r, struct dio_request **rp, int nr,
		       uint8_t *buf, int ha, int hb, struct waiter *w, int ctx,
		       struct pump *p, int ctx2)
{
	for (int i = 0; i < nr; i++) {
		int h = i % 4 ? ha : hb;
		uint64_t off = (uint64_t)i * 64 * KiB;

		if (i % 2)
			dio_req_prep_read(&r[i], h, buf + i * 64 * KiB, 64 * KiB, off);
		else
			dio_req_prep_write(&r[i], h, buf + i * 64 * KiB, 64 * KiB,
					   8 * MiB + off);
		r[i].result = 0x5a5a5a5a;
		rp[i] = &r[i];
	}
	pump_start(p, ctx2, ha, 32 * MiB, 64 * KiB);
	usleep(200000);
	waiter_start(w, ctx, rp, nr);
}

/*
 * A device back after its loss: a fresh handle for @dev has the format it
 * had (@before) and does I/O.
 */
static void check_back(const char *dev, const struct dio_query *before, uint64_t tag)
{
	int ctx = sys_dio_init(0, DIO_PRIVATE), fd = open(dev, O_RDWR | O_CLOEXEC), h;
	struct dio_query q;

	assert_true(ctx >= 0 && fd >= 0);
	h = sys_dio_open(ctx, fd, 0);
	assert_true(h >= 1);
	assert_int_equal(sys_dio_query(ctx, h, &q), 0);
	assert_int_equal(q.capacity, before->capacity);
	assert_string_equal(q.profile, before->profile);
	roundtrip(ctx, h, 64 * KiB, 3 * MiB, tag);
	close(ctx);
	close(fd);
}

/* ---- NVMe namespace detach ---- */

#define NVME_ADMIN_NS_ATTACH	0x15
static int detached_nsid;		/* to attach again in the teardown */

/*
 * Namespace Attachment (NVMe 1.4, 5.20) of @nsid to or from controller
 * nvme0 alone: SEL 0 attaches, 1 detaches.  Return: 0, the NVMe status
 * (> 0), or -errno.
 */
static int nvme_ns_attach(int nsid, bool attach)
{
	uint16_t *list = NULL;
	struct nvme_admin_cmd c;
	char *v;
	int fd, ret;

	v = tl_sysfs_read("/sys/class/nvme/nvme0/cntlid");
	assert_non_null(v);
	assert_int_equal(posix_memalign((void **)&list, 4096, 4096), 0);
	memset(list, 0, 4096);
	list[0] = 1;			/* one controller: */
	list[1] = (uint16_t)atoi(v);	/* nvme0, little-endian like x86 */
	free(v);
	fd = open("/dev/nvme0", O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	memset(&c, 0, sizeof(c));
	c.opcode = NVME_ADMIN_NS_ATTACH;
	c.nsid = nsid;
	c.addr = (uintptr_t)list;
	c.data_len = 4096;
	c.cdw10 = attach ? 0 : 1;
	ret = ioctl(fd, NVME_IOCTL_ADMIN_CMD, &c);
	if (ret < 0)
		ret = -errno;
	close(fd);
	free(list);
	return ret;
}

/*
 * Wait until namespace @nsid is gone from /sys/block (or back): up to
 * @seconds (x tl_slow_factor()), a hang guard for what takes a second.
 */
static bool nvme_ns_wait(int nsid, bool present, int seconds)
{
	char dev[64];

	for (int i = 0; i < seconds * 20 * tl_slow_factor(); i++) {
		if (tl_nvme_present(nsid, dev, sizeof(dev)) == present)
			return true;
		usleep(50000);
	}
	return false;
}

/*
 * Namespace 3 leaves while the controller stays: I/O at it and a pump
 * through a second descriptor end with a device errno, the handle dies,
 * namespace 1 on the same controller is untouched; attached again, the
 * namespace comes back with its format and a fresh handle works.
 */
static void test_nvme_namespace_detached(void **state)
{
	enum { N = 16, NS = 3 };
	char dev[64], dev1[64];
	struct dio_request r[N], *rp[N];
	uint8_t *buf = tl_xalloc(N * 64 * KiB, 0x3c);
	struct dio_query q3;
	struct waiter w;
	struct pump p;
	int ctx, ctx2, c1, fd, fd1, h, h1, ret;
	uint64_t t0;

	assert_int_equal(tl_nvme_dev(NS, dev, sizeof(dev)), 0);
	assert_int_equal(tl_nvme_dev(1, dev1, sizeof(dev1)), 0);
	ctx = sys_dio_init(0xde1e83, DIO_CREAT | DIO_EXCL);
	ctx2 = sys_dio_init(0xde1e83, 0);
	c1 = sys_dio_init(0, DIO_PRIVATE);
	assert_true(ctx >= 0 && ctx2 >= 0 && c1 >= 0);
	fd = open(dev, O_RDWR | O_CLOEXEC);
	fd1 = open(dev1, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0 && fd1 >= 0);
	h = sys_dio_open(ctx, fd, 0);
	h1 = sys_dio_open(c1, fd1, 0);
	assert_true(h >= 1 && h1 >= 1);
	assert_int_equal(sys_dio_query(ctx, h, &q3), 0);
	roundtrip(ctx, h, 64 * KiB, 1 * MiB, 6);

	load_start(r, rp, N, buf, h, h, &w, ctx, &p, ctx2);
	t0 = tl_now_ns();
	detached_nsid = NS;
	ns_detached = true;
	ret = nvme_ns_attach(NS, false);
	if (ret)
		fail_msg("detaching namespace %d: %s %d", NS, ret < 0 ? "errno" : "NVMe status",
			 ret < 0 ? -ret : ret);
	if (!nvme_ns_wait(NS, false, 20))
		fail_msg("namespace %d still in /sys/block %d s after its detach", NS,
			 20 * tl_slow_factor());
	print_message("# namespace %d detached and gone in %.0f ms\n", NS,
		      (tl_now_ns() - t0) / 1e6);
	usleep(200000);
	pump_stop(&p, "pump during detach");
	assert_int_equal(pthread_join(w.t, NULL), 0);
	check_batch("batch at the namespace", r, N, w.ret);
	check_dead_handle(ctx, h, q3.capacity);
	check_dead_handle(ctx2, h, q3.capacity);

	ns_detached = false;
	/* The controller's other namespace did not notice. */
	roundtrip(c1, h1, 64 * KiB, 2 * MiB, 7);
	assert_int_equal(sys_dio_close(ctx, h), 0);
	assert_int_equal(close(ctx), 0);
	assert_int_equal(close(ctx2), 0);
	close(fd);

	/* Back: the same format, and a fresh handle does I/O. */
	ret = nvme_ns_attach(NS, true);
	if (ret)
		fail_msg("attaching namespace %d again: %s %d", NS,
			 ret < 0 ? "errno" : "NVMe status", ret < 0 ? -ret : ret);
	detached_nsid = 0;
	assert_int_equal(tl_nvme_dev(NS, dev, sizeof(dev)), 0);
	check_back(dev, &q3, 8);
	close(c1);
	close(fd1);
	assert_true(tl_dio_caches_drained(20));
	free(buf);
}

static char unbound_bdf[64];

static bool nvme_ctrl_present(void)
{
	return access("/sys/class/nvme/nvme0", F_OK) == 0;
}

static void test_nvme_controller_lost(void **state)
{
	enum { N = 16 };
	char dev1[64], dev2[64], bdf[64], path[256];
	struct dio_request r[N], *rp[N];
	uint8_t *buf = tl_xalloc(N * 64 * KiB, 0x3c);
	struct dio_query q1, q2, q;
	struct waiter w;
	struct pump p;
	int ctx, ctx2, fd1, fd2, h1, h2, i, ret;
	uint64_t t0;

	assert_int_equal(tl_nvme_dev(1, dev1, sizeof(dev1)), 0);
	assert_int_equal(tl_nvme_dev(2, dev2, sizeof(dev2)), 0);
	/* nvme0's PCI address, e.g. "0000:00:03.0". */
	assert_int_equal(tl_link_name("/sys/class/nvme/nvme0/device", bdf, sizeof(bdf)), 0);
	print_message("# nvme0 at %s: %s, %s\n", bdf, dev1, dev2);
	ctx = sys_dio_init(0xde1e80, DIO_CREAT | DIO_EXCL);
	ctx2 = sys_dio_init(0xde1e80, 0);
	assert_true(ctx >= 0 && ctx2 >= 0);
	fd1 = open(dev1, O_RDWR | O_CLOEXEC);
	fd2 = open(dev2, O_RDWR | O_CLOEXEC);
	assert_true(fd1 >= 0 && fd2 >= 0);
	h1 = sys_dio_open(ctx, fd1, 0);
	h2 = sys_dio_open(ctx, fd2, 0);
	assert_true(h1 >= 1 && h2 >= 1);
	assert_int_equal(sys_dio_query(ctx, h1, &q1), 0);
	assert_int_equal(sys_dio_query(ctx, h2, &q2), 0);

	/* rescan_controller with handles open: nothing changes for them. */
	assert_int_equal(tl_write_file("/sys/class/nvme/nvme0/rescan_controller", "1"), 0);
	usleep(200000);
	roundtrip(ctx, h1, 64 * KiB, 2 * MiB, 4);
	assert_int_equal(sys_dio_query(ctx, h1, &q), 0);
	assert_int_equal(q.capacity, q1.capacity);

	/* Load on both namespaces, then the controller goes. */
	load_start(r, rp, N, buf, h1, h2, &w, ctx, &p, ctx2);
	t0 = tl_now_ns();
	snprintf(unbound_bdf, sizeof(unbound_bdf), "%s", bdf);
	ctrl_unbinding = true;
	assert_int_equal(tl_write_file("/sys/bus/pci/drivers/nvme/unbind", bdf), 0);
	print_message("# nvme0 unbound in %.0f ms\n", (tl_now_ns() - t0) / 1e6);
	assert_false(nvme_ctrl_present());
	usleep(200000);
	pump_stop(&p, "pump during unbind");
	assert_int_equal(pthread_join(w.t, NULL), 0);
	check_batch("batch at the controller", r, N, w.ret);
	ctrl_unbinding = false;

	check_dead_handle(ctx, h1, q1.capacity);
	check_dead_handle(ctx2, h2, q2.capacity);
	assert_int_equal(sys_dio_close(ctx, h1), 0);
	assert_int_equal(sys_dio_close(ctx, h2), 0);
	assert_int_equal(close(ctx), 0);
	assert_int_equal(close(ctx2), 0);
	close(fd1);
	close(fd2);
	assert_true(tl_dio_caches_drained(20));

	/*
	 * Back, so that the programs after this one find their namespaces:
	 * nothing holds the old controller now, so it comes back as nvme0.
	 */
	ret = tl_write_file("/sys/bus/pci/drivers/nvme/bind", bdf);
	if (ret)
		fail_msg("binding %s to nvme again: %s", bdf, strerror(-ret));
	unbound_bdf[0] = 0;
	for (i = 1; i <= 4; i++) {
		char dev[64];

		assert_int_equal(tl_nvme_dev(i, dev, sizeof(dev)), 0);
		if (i == 1)
			snprintf(dev1, sizeof(dev1), "%s", dev);
	}
	snprintf(path, sizeof(path), "/sys/class/nvme/nvme0/device");
	assert_int_equal(access(path, F_OK), 0);
	check_back(dev1, &q1, 5);
	free(buf);
}

/* Nothing left: the module unloads, and loads again for the next program. */
static void test_all_freed_and_unload(void **state)
{
	assert_true(tl_dio_caches_drained(20));
	assert_int_equal(tl_dio_refcnt(), 0);
	assert_int_equal(tl_scsi_debug_unload(), 0);
	assert_int_equal(tl_dio_unload(), 0);
	assert_false(tl_module_loaded("dio_batch"));
	assert_int_equal(tl_dio_load(), 0);
}

static int test_teardown(void **state)
{
	/* The programs after this one need nvme0n1-4. */
	ns_detached = false;
	ctrl_unbinding = false;
	if (detached_nsid) {
		nvme_ns_attach(detached_nsid, true);
		detached_nsid = 0;
	}
	if (unbound_bdf[0]) {
		char dev[64];

		tl_write_file("/sys/bus/pci/drivers/nvme/bind", unbound_bdf);
		unbound_bdf[0] = 0;
		for (int i = 1; i <= 4; i++)
			tl_nvme_dev(i, dev, sizeof(dev));
	}
	tl_write_file(SD_DRV "/opts", "0");
	tl_write_file(SD_DRV "/every_nth", "0");
	tl_scsi_debug_ndelay(0);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_disk_deleted_with_io_in_flight, test_teardown),
		cmocka_unit_test_teardown(test_disk_deleted_with_stuck_commands, test_teardown),
		cmocka_unit_test_teardown(test_host_removed_with_io_in_flight, test_teardown),
		cmocka_unit_test_teardown(test_nvme_namespace_detached, test_teardown),
		cmocka_unit_test_teardown(test_nvme_controller_lost, test_teardown),
		cmocka_unit_test_teardown(test_all_freed_and_unload, test_teardown),
	};

	return cmocka_run_group_tests_name("devloss", tests, setup, teardown);
}
