// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * io_bench: the same random direct I/O through four engines, in one run.
 *
 *   dio_batch  one DIO_IOC_SUBMIT per batch, DIO_IOC_COLLECT to reap
 *   io_uring   liburing, one io_uring_enter per batch (submit and wait)
 *   libaio     io_submit / io_getevents
 *   psync      pread / pwrite, one thread (-j N: also N threads)
 *   dio+pi     (-P) dio_batch with a PI buffer in every request: PI made
 *              by libdioctl for writes, the device's PI returned by reads
 *   dio+fixed  (-F) dio_batch with registered buffers: each run registers
 *              its queue's buffers once (sys_dio_register_buffers, one per
 *              slot) before its loop, and every request names its slot's
 *              (DIO_REQ_FIXED), so requests do not pin their pages one by one
 *   io_uring+fixed  (-F too) its peer: the same buffers registered with
 *              the ring (io_uring_register_buffers), READ_FIXED/WRITE_FIXED
 *   io_uring+pi  (-U) dio+pi's peer: upstream's own user PI (Linux 6.14+),
 *              READ/WRITE with a PI attribute (sqe->attr_ptr, a struct
 *              io_uring_attr_pi): PI made by libdioctl for writes, the
 *              device's PI returned by reads and checked here as dio+pi's
 *
 * Every engine runs the same loop: fill the queue up to the queue depth,
 * submit what was added in one call, wait for at least one completion,
 * reap all that are there, repeat.  Offsets are uniformly random blocks of
 * a region at the start of the device; no two I/Os in flight touch the
 * same block.  By default a random-read workload, then a random-write one,
 * each on every engine for the runtime (or the I/O bound, whichever comes
 * first).  The table gives IOPS, MB/s, average latency (submission to
 * reaping) and IOPS relative to io_uring; the lines after it give CPU time
 * per I/O: the process's own (getrusage, all threads), its system part,
 * and the whole guest's (/proc/stat: work done in interrupts, softirqs and
 * kernel threads on the process's behalf, e.g. the block layer's PI
 * verification in kintegrityd, or scsi_debug's completions).
 *
 * Nothing is measured blind: the region is first written with a known
 * pattern (each block carries its block number and a generation that every
 * write bumps), every read's header is checked, every Nth read (-V) in
 * full, and after a workload with writes a sample of each engine's written
 * blocks is read back.  An I/O error, short transfer or mismatch fails the
 * engine's row and the exit status.
 *
 * Exit status: 0 all good; 1 an engine failed or is unavailable; 2 usage or
 * set-up error; 3 an engine hung (watchdog).  Writes the device: use a
 * scratch device only.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libaio.h>
#include <liburing.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

#include "dioctl.h"

/* Upstream's user PI through io_uring: what the build host lacks. */
#include "../tests/lib/uring_pi.h"

#define MAGIC		UINT64_C(0xd10bb4c4be4c0000)
#define GEN_UNKNOWN	UINT32_MAX	/* block content unknown: not checked */
#define WSAMPLE		64		/* written blocks read back per worker */
#define WSAMPLE_EVERY	16		/* one write in this many is sampled */
#define MAX_QD		1024
#define MAX_THREADS	64

enum engine {
	E_DIO, E_DIO_PI, E_DIO_FIXED, E_URING, E_URING_FIXED, E_AIO, E_PSYNC,
	E_PSYNC_N, E_URING_PI, E_NR
};
static const char *const engine_names[E_NR] = {
	"dio_batch", "dio+pi", "dio+fixed", "io_uring", "io_uring+fixed",
	"libaio", "psync", "psync-N", "io_uring+pi",
};
/*
 * The order of the tables and of the engines' turns.  io_uring+pi came
 * last into the enum, so that the others keep their random seeds (the
 * seed of a run is derived from the engine's number).
 */
static const enum engine engine_order[E_NR] = {
	E_DIO, E_DIO_PI, E_DIO_FIXED, E_URING, E_URING_FIXED, E_URING_PI,
	E_AIO, E_PSYNC, E_PSYNC_N,
};
/* @e (an int) takes every engine in engine_order; @ei counts. */
#define for_each_engine(e, ei) \
	for ((ei) = 0; (ei) < E_NR && ((e) = (int)engine_order[ei], 1); (ei)++)

static struct {
	const char *dev;
	unsigned int bs, qd, threads, verify_every, rounds;
	bool calibrate, time_calls;
	double runtime;
	int rwmix;			/* read %, or -1: randread then randwrite */
	uint64_t max_ios, size;
	unsigned int engines;		/* bit per enum engine */
} o = {
	.bs = 4096, .qd = 32, .threads = 0, .verify_every = 16, .rounds = 3,
	.calibrate = true,
	.runtime = 5, .rwmix = -1,
	.engines = 1 << E_DIO | 1 << E_URING | 1 << E_AIO | 1 << E_PSYNC,
};

static int dev_fd = -1;			/* O_RDWR | O_DIRECT */
static uint64_t nblocks;		/* blocks of o.bs in the region */
static uint32_t *gens;			/* per block: generation on the device */
static uint8_t *busy;			/* per block: an I/O is in flight */
static unsigned int lbs;		/* logical block size */
static const char *running = "";	/* for the watchdog */

/* ---- small helpers ---- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Clock reads only -T asks for: by default one per loop in every engine. */
static double tnow(void)
{
	return o.time_calls ? now() : 0;
}

static void __attribute__((noreturn, format(printf, 1, 2))) die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("io_bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void *xalloc_aligned(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, len))
		die("out of memory (%zu bytes)", len);
	memset(p, 0, len);
	return p;
}

static void watchdog(int sig)
{
	static const char msg[] = "io_bench: watchdog: engine did not finish in time: ";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0 ||
	    write(2, running, strlen(running)) < 0 || write(2, "\n", 1) < 0)
		_exit(3);
	_exit(3);
}

/* CPU time of this process (all threads), user and system, in seconds. */
static void self_cpu(double *usr, double *sys)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*usr = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6;
	*sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

/* Busy CPU time of the whole machine, seconds (all CPUs, not idle/iowait). */
static double machine_cpu(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 8)
		return 0;
	/* user nice system idle iowait irq softirq steal */
	return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) /
	       sysconf(_SC_CLK_TCK);
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* ---- the pattern: block number and generation in every block ---- */

static uint64_t pat_seed(uint64_t blk, uint32_t gen)
{
	return ((blk << 24) ^ gen ^ MAGIC) * 0x9e3779b97f4a7c15ULL;
}

static void pat_fill(void *buf, uint64_t blk, uint32_t gen)
{
	uint64_t *w = buf, s = pat_seed(blk, gen);
	size_t i, n = o.bs / 8;

	w[0] = MAGIC ^ blk;
	w[1] = (uint64_t)o.bs << 32 | gen;
	for (i = 2; i < n; i++)
		w[i] = s + i * 0xd1b54a32d192ed03ULL;
}

/* 0 when @buf holds block @blk at generation @gen; else a message. */
static int pat_check(const void *buf, uint64_t blk, uint32_t gen, bool full,
		     char *msg, size_t msglen)
{
	const uint64_t *w = buf;
	uint64_t s;
	size_t i, n = o.bs / 8;

	if (gen == GEN_UNKNOWN)
		return 0;
	if (w[0] != (MAGIC ^ blk) || w[1] != ((uint64_t)o.bs << 32 | gen)) {
		if ((w[0] & ~UINT64_C(0xffffffffff)) == (MAGIC & ~UINT64_C(0xffffffffff)))
			snprintf(msg, msglen, "block %" PRIu64 " holds block %" PRIu64
				 " generation %" PRIu32 ", expected generation %" PRIu32,
				 blk, w[0] ^ MAGIC, (uint32_t)w[1], gen);
		else
			snprintf(msg, msglen, "block %" PRIu64 " has no pattern header "
				 "(%016" PRIx64 " %016" PRIx64 "), expected generation %" PRIu32,
				 blk, w[0], w[1], gen);
		return -1;
	}
	if (!full)
		return 0;
	s = pat_seed(blk, gen);
	for (i = 2; i < n; i++)
		if (w[i] != s + i * 0xd1b54a32d192ed03ULL) {
			snprintf(msg, msglen, "block %" PRIu64 " generation %" PRIu32
				 ": byte %zu differs", blk, gen, i * 8);
			return -1;
		}
	return 0;
}

/* ---- statistics ---- */

struct stats {
	uint64_t ios, reads, writes;
	double lat_sum;			/* seconds */
	uint64_t checked_hdr, checked_full, checked_wr;
	uint64_t errors;
	char err[256];			/* the first error */
	double elapsed, usr, sys, machine;
	double t_submit, t_wait;	/* wall time in the submit / wait calls */
	double best_cpu, best_sys, best_machine;	/* per I/O, best round */
	bool ran, unavailable, timed_calls;
};

static void __attribute__((format(printf, 2, 3)))
st_error(struct stats *st, const char *fmt, ...)
{
	va_list ap;

	if (!st->errors++) {
		va_start(ap, fmt);
		vsnprintf(st->err, sizeof(st->err), fmt, ap);
		va_end(ap);
	}
}

static void st_add(struct stats *a, const struct stats *b)
{
	a->ios += b->ios;
	a->reads += b->reads;
	a->writes += b->writes;
	a->lat_sum += b->lat_sum;
	a->t_submit += b->t_submit;
	a->t_wait += b->t_wait;
	a->timed_calls |= b->timed_calls;
	a->checked_hdr += b->checked_hdr;
	a->checked_full += b->checked_full;
	a->checked_wr += b->checked_wr;
	if (b->errors && !a->errors)
		memcpy(a->err, b->err, sizeof(a->err));
	a->errors += b->errors;
}

/* ---- the workload: one worker per thread ---- */

struct slot {
	void *buf;
	void *pi;			/* dio+pi: the request's PI tuples */
	uint64_t blk;
	uint32_t gen;
	bool write;
	double t;			/* when it was queued */
};

struct worker {
	uint64_t rng;
	uint64_t stripe, nstripes;	/* blocks with blk % nstripes == stripe */
	uint64_t issued, max_ios;
	double deadline;
	uint64_t nreads, nwrites;
	uint64_t wsample[WSAMPLE];
	unsigned int nws;
	struct stats st;
};

static void worker_init(struct worker *w, unsigned int stripe,
			unsigned int nstripes, uint64_t seed, double deadline,
			uint64_t max_ios)
{
	memset(w, 0, sizeof(*w));
	w->rng = seed * 0x9e3779b97f4a7c15ULL + 0x1234567;
	w->stripe = stripe;
	w->nstripes = nstripes;
	w->deadline = deadline;
	w->max_ios = max_ios ? (max_ios + nstripes - 1) / nstripes : 0;
}

/* May another I/O be queued?  Stops at the deadline, the bound, an error. */
static bool worker_more(const struct worker *w, double t)
{
	return t < w->deadline && (!w->max_ios || w->issued < w->max_ios) &&
	       !w->st.errors;
}

static uint32_t next_gen(uint32_t g)
{
	return g + 1 == GEN_UNKNOWN ? 0 : g + 1;
}

/* Choose a free block and the direction; fill the buffer of a write. */
static void slot_prep(struct worker *w, struct slot *s, double t, int rwmix)
{
	uint64_t per = (nblocks - w->stripe + w->nstripes - 1) / w->nstripes;
	uint64_t i = xorshift(&w->rng) % per, blk;

	for (;;) {
		blk = i * w->nstripes + w->stripe;
		if (!busy[blk])
			break;
		if (++i == per)
			i = 0;
	}
	busy[blk] = 1;
	s->blk = blk;
	s->write = (int)(xorshift(&w->rng) % 100) >= rwmix;
	s->t = t;
	if (s->write) {
		s->gen = next_gen(gens[blk]);
		gens[blk] = s->gen;
		pat_fill(s->buf, blk, s->gen);
	} else {
		s->gen = gens[blk];
	}
	w->issued++;
}

/* A queued I/O that was never submitted. */
static void slot_undo(struct worker *w, struct slot *s)
{
	if (s->write)
		gens[s->blk] = GEN_UNKNOWN;	/* conservative: not checked */
	busy[s->blk] = 0;
	w->issued--;
}

/* Account and check one completion; @res is bytes or -errno. */
static void slot_done(struct worker *w, struct slot *s, long long res, double t,
		      const char *extra)
{
	char msg[200];

	w->st.ios++;
	w->st.lat_sum += t - s->t;
	if (res != (long long)o.bs) {
		if (s->write)
			gens[s->blk] = GEN_UNKNOWN;
		if (res < 0)
			st_error(&w->st, "%s of block %" PRIu64 ": %s%s",
				 s->write ? "write" : "read", s->blk,
				 strerror((int)-res), extra ? extra : "");
		else
			st_error(&w->st, "%s of block %" PRIu64 ": %lld bytes of %u",
				 s->write ? "write" : "read", s->blk, res, o.bs);
	} else if (s->write) {
		w->st.writes++;
		if (w->nwrites++ % WSAMPLE_EVERY == 0)
			w->wsample[w->nws++ % WSAMPLE] = s->blk;
	} else {
		bool full = o.verify_every && w->nreads % o.verify_every == 0;

		w->st.reads++;
		w->nreads++;
		if (pat_check(s->buf, s->blk, s->gen, full, msg, sizeof(msg)))
			st_error(&w->st, "read verification: %s", msg);
		else if (full)
			w->st.checked_full++;
		else
			w->st.checked_hdr++;
	}
	busy[s->blk] = 0;
}

/* After a run: read back the sampled written blocks (untimed). */
static void worker_check_writes(struct worker *w, void *buf)
{
	unsigned int i, n = w->nws < WSAMPLE ? w->nws : WSAMPLE;
	char msg[200];
	ssize_t r;

	for (i = 0; i < n && !w->st.errors; i++) {
		uint64_t blk = w->wsample[i];

		r = pread(dev_fd, buf, o.bs, (off_t)(blk * o.bs));
		if (r != (ssize_t)o.bs)
			st_error(&w->st, "read-back of written block %" PRIu64 ": %s",
				 blk, r < 0 ? strerror(errno) : "short read");
		else if (pat_check(buf, blk, gens[blk], true, msg, sizeof(msg)))
			st_error(&w->st, "written block read back: %s", msg);
		else
			w->st.checked_wr++;
	}
}

/* ---- engines: each runs one worker (psync-N: several) to the end ---- */

struct slots {
	struct slot s[MAX_QD];
	unsigned int free[MAX_QD], nfree;
};

static void slots_init(struct slots *sl, unsigned int n)
{
	unsigned int i;

	sl->nfree = 0;
	for (i = 0; i < n; i++) {
		sl->s[i].buf = xalloc_aligned(o.bs);
		sl->free[sl->nfree++] = n - 1 - i;
	}
}

/* The slots' buffers as an iovec array (to register them); free() it. */
static struct iovec *slots_iov(const struct slots *sl)
{
	struct iovec *iov = calloc(o.qd, sizeof(*iov));
	unsigned int i;

	if (!iov)
		die("out of memory");
	for (i = 0; i < o.qd; i++) {
		iov[i].iov_base = sl->s[i].buf;
		iov[i].iov_len = o.bs;
	}
	return iov;
}

static void slots_exit(struct slots *sl, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		free(sl->s[i].buf);
}

/*
 * dio_batch: requests in an array, one SUBMIT per batch, COLLECT to reap.
 * With @pi (engine dio+pi) every request carries a PI buffer: writes send
 * tuples generated in user space (libdioctl), reads fetch the device's and
 * the module does not verify them itself; every Nth read verifies them here.
 * With @fixed (engine dio+fixed) the slots' buffers are registered with the
 * descriptor before the loop, slot k's as buffer k, and every request names
 * its buffer (DIO_REQ_FIXED): the loop is otherwise the same.
 */
static int run_dio(struct worker *w, int rwmix, bool pi, bool fixed)
{
	static struct slots sl;
	struct dio_request *reqs = xalloc_aligned(sizeof(*reqs) * o.qd);
	struct dio_request **sub = calloc(o.qd, sizeof(*sub));
	struct dio_request **done = calloc(o.qd, sizeof(*done));
	struct timespec tmo = { .tv_sec = 10 };
	unsigned int inflight = 0, n, i;
	struct dio_pi_profile prof;
	struct dio_query q;
	uint32_t pi_len = 0;
	uint64_t npiread = 0;
	int ctx, h, ret;
	char extra[160];
	double t, ts;

	if (!sub || !done)
		die("out of memory");
	ctx = sys_dio_init(0, DIO_PRIVATE);
	if (ctx < 0) {
		st_error(&w->st, "sys_dio_init: %s (is dio_batch loaded?)", strerror(errno));
		w->st.unavailable = true;
		goto out_free;
	}
	h = sys_dio_open(ctx, dev_fd, 0);
	if (h < 0) {
		st_error(&w->st, "sys_dio_open(%s): %s", o.dev, strerror(errno));
		w->st.unavailable = true;
		goto out_exit;
	}
	if (pi) {
		if (sys_dio_query(ctx, h, &q) || dio_pi_profile_from_query(&q, &prof) ||
		    q.pi_md_size != q.pi_tuple_size || o.bs % q.pi_interval) {
			st_error(&w->st, "%s has no PI format this engine handles", o.dev);
			w->st.unavailable = true;
			goto out_close;
		}
		pi_len = (uint32_t)dio_pi_len(&prof, o.bs);
	}
	slots_init(&sl, o.qd);
	for (i = 0; pi && i < o.qd; i++)
		sl.s[i].pi = xalloc_aligned(pi_len);
	if (fixed) {
		struct iovec *iov = slots_iov(&sl);

		ret = sys_dio_register_buffers(ctx, iov, o.qd);
		free(iov);
		if (ret) {
			if (errno == ENOTTY)
				st_error(&w->st, "module without registered buffers");
			else
				st_error(&w->st, "sys_dio_register_buffers(%u buffers of %u "
					 "bytes): %s", o.qd, o.bs, strerror(errno));
			w->st.unavailable = true;
			goto out_slots;
		}
	}
	w->st.timed_calls = o.time_calls;
	t = now();
	for (;;) {
		n = 0;
		while (inflight + n < o.qd && worker_more(w, t)) {
			unsigned int k = sl.free[--sl.nfree];
			struct slot *s = &sl.s[k];
			uint64_t off;

			slot_prep(w, s, t, rwmix);
			off = s->blk * o.bs;
			if (fixed && s->write)
				dio_req_prep_write_fixed(&reqs[k], h, s->buf, o.bs, off, k);
			else if (fixed)
				dio_req_prep_read_fixed(&reqs[k], h, s->buf, o.bs, off, k);
			else if (s->write)
				dio_req_prep_write(&reqs[k], h, s->buf, o.bs, off);
			else
				dio_req_prep_read(&reqs[k], h, s->buf, o.bs, off);
			if (pi) {
				struct dio_pi_params a = { .seed = off / prof.interval };

				if (s->write)
					dio_pi_generate(&prof, s->buf, o.bs, s->pi, &a);
				dio_req_set_pi(&reqs[k], s->pi, pi_len, 0, 0, 0);
			}
			sub[n++] = &reqs[k];
		}
		ts = tnow();
		for (i = 0; i < n; i += (unsigned int)ret) {
			ret = sys_dio_submit(ctx, sub + i, n - i);
			if (ret <= 0) {
				unsigned int j;

				st_error(&w->st, "sys_dio_submit: %s",
					 strerror(ret < 0 ? errno : EIO));
				for (j = i; j < n; j++) {
					unsigned int k = (unsigned int)(sub[j] - reqs);

					slot_undo(w, &sl.s[k]);
					sl.free[sl.nfree++] = k;
				}
				break;
			}
			inflight += (unsigned int)ret;
		}
		if (!inflight)
			break;
		if (o.time_calls) {
			t = now();
			w->st.t_submit += t - ts;
			ts = t;
		}
		ret = sys_dio_collect(ctx, done, 1, o.qd, &tmo);
		t = now();
		w->st.t_wait += t - ts;
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			st_error(&w->st, "sys_dio_collect: %s", strerror(errno));
			break;		/* the context's close reaps the rest */
		}
		if (ret == 0) {
			st_error(&w->st, "sys_dio_collect: nothing completed in %ld s",
				 (long)tmo.tv_sec);
			continue;
		}
		for (i = 0; i < (unsigned int)ret; i++) {
			struct dio_request *r = done[i];
			unsigned int k = (unsigned int)(r - reqs);
			struct slot *s = &sl.s[k];
			struct dio_pi_params pa = {
				.chk_flags = DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG,
			};
			struct dio_pi_error pe;

			extra[0] = 0;
			if (r->result == -EILSEQ)
				snprintf(extra, sizeof(extra), " (PI: interval %llu tag %u "
					 "expected %#llx actual %#llx source %u)",
					 (unsigned long long)r->pi_err_interval, r->pi_err_tag,
					 (unsigned long long)r->pi_err_expected,
					 (unsigned long long)r->pi_err_actual,
					 r->pi_err_source);
			if (pi && !s->write && r->result == (long long)o.bs &&
			    o.verify_every && npiread++ % o.verify_every == 0 &&
			    s->gen != GEN_UNKNOWN &&
			    (pa.seed = s->blk * o.bs / prof.interval,
			     dio_pi_verify(&prof, s->buf, o.bs, s->pi, &pa, &pe)))
				st_error(&w->st, "PI of block %" PRIu64 " read back: "
					 "interval %" PRIu64 " tag %u expected %#" PRIx64
					 " actual %#" PRIx64, s->blk, pe.interval, pe.tag,
					 pe.expected, pe.actual);
			slot_done(w, s, r->result, t, extra);
			sl.free[sl.nfree++] = k;
		}
		inflight -= (unsigned int)ret;
	}
	if (inflight)
		w->st.errors++;
	/* Not timed apart: the descriptor's close would drop them as well. */
	if (fixed && sys_dio_unregister_buffers(ctx))
		st_error(&w->st, "sys_dio_unregister_buffers: %s", strerror(errno));
out_slots:
	for (i = 0; pi && i < o.qd; i++) {
		free(sl.s[i].pi);
		sl.s[i].pi = NULL;
	}
	slots_exit(&sl, o.qd);
out_close:
	sys_dio_close(ctx, h);
out_exit:
	sys_dio_exit(ctx);
out_free:
	free(done);
	free(sub);
	free(reqs);
	return 0;
}

/*
 * io_uring+pi's device: its PI format from the kernel's own description
 * (FS_IOC_GETLBMD_CAP), the profile dio+pi gets from the module.  0, or
 * -1 with the reason in @why.
 */
static int uring_pi_profile(struct dio_pi_profile *prof, char *why, size_t len)
{
	struct logical_block_metadata_cap cap = { 0 };

	if (ioctl(dev_fd, FS_IOC_GETLBMD_CAP, &cap)) {
		snprintf(why, len, "FS_IOC_GETLBMD_CAP: %s", strerror(errno));
		return -1;
	}
	if (!(cap.lbmd_flags & LBMD_PI_CAP_INTEGRITY)) {
		snprintf(why, len, "%s has no PI (FS_IOC_GETLBMD_CAP)", o.dev);
		return -1;
	}
	/* As dio+pi: metadata that is the tuple alone, whole intervals. */
	if (dio_pi_profile_init(prof, cap.lbmd_guard_tag_type, cap.lbmd_interval,
				cap.lbmd_flags & LBMD_PI_CAP_REFTAG ? 1 : 3) ||
	    cap.lbmd_size != cap.lbmd_pi_size || cap.lbmd_pi_size != prof->tuple_size ||
	    o.bs % prof->interval) {
		snprintf(why, len, "%s has no PI format this engine handles (guard %u, "
			 "interval %u, metadata %u, tuple %u)", o.dev,
			 cap.lbmd_guard_tag_type, cap.lbmd_interval, cap.lbmd_size,
			 cap.lbmd_pi_size);
		return -1;
	}
	return 0;
}

/*
 * With @fixed (engine io_uring+fixed, dio+fixed's peer) the slots'
 * buffers are registered with the ring before the loop, slot k's as
 * buffer k, and every request is a READ_FIXED or WRITE_FIXED of its own.
 * With @pi (engine io_uring+pi, dio+pi's peer) every READ and WRITE
 * carries a PI attribute (Linux 6.14+) pointing at the slot's PI buffer:
 * writes send tuples libdioctl generated, reads return the device's, and
 * every Nth read's are verified here as dio+pi's are.  The device checks
 * guard and ref tag (IO_INTEGRITY_CHK_*: the checks dio_batch asks of it
 * for dio+pi on 6.14+ kernels); the kernel itself neither generates nor
 * verifies.
 */
static int run_uring(struct worker *w, int rwmix, bool fixed, bool pi)
{
	static struct slots sl;
	static struct io_uring_attr_pi attr[MAX_QD];
	struct io_uring_params p = { 0 };
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct dio_pi_profile prof;
	unsigned int inflight = 0, n, head, seen, i;
	uint16_t chk = 0;
	uint32_t pi_len = 0;
	uint64_t npiread = 0;
	char why[200];
	double t, ts;
	int ret;

	ret = io_uring_queue_init_params(o.qd, &ring, &p);
	if (ret < 0) {
		st_error(&w->st, "io_uring_queue_init: %s", strerror(-ret));
		w->st.unavailable = true;
		return 0;
	}
	if (pi) {
		/*
		 * A kernel without PI attributes would ignore them (6.1 and
		 * 6.12 do not look at those SQE words for a READ): the data
		 * would go with the kernel's PI and none would come back.
		 */
		if (!(p.features & IORING_FEAT_RW_ATTR)) {
			struct utsname u;

			st_error(&w->st, "io_uring without PI attributes (no "
				 "IORING_FEAT_RW_ATTR; Linux %s)",
				 uname(&u) ? "?" : u.release);
			w->st.unavailable = true;
		} else if (uring_pi_profile(&prof, why, sizeof(why))) {
			st_error(&w->st, "%s", why);
			w->st.unavailable = true;
		}
		if (w->st.unavailable) {
			io_uring_queue_exit(&ring);
			return 0;
		}
		pi_len = (uint32_t)dio_pi_len(&prof, o.bs);
		chk = IO_INTEGRITY_CHK_GUARD;
		if (prof.pi_type != 3)
			chk |= IO_INTEGRITY_CHK_REFTAG;
	}
	slots_init(&sl, o.qd);
	for (i = 0; pi && i < o.qd; i++)
		sl.s[i].pi = xalloc_aligned(pi_len);
	if (fixed) {
		struct iovec *iov = slots_iov(&sl);

		ret = io_uring_register_buffers(&ring, iov, o.qd);
		free(iov);
		if (ret < 0) {
			st_error(&w->st, "io_uring_register_buffers(%u buffers of %u bytes): %s",
				 o.qd, o.bs, strerror(-ret));
			w->st.unavailable = true;
			io_uring_queue_exit(&ring);
			slots_exit(&sl, o.qd);
			return 0;
		}
	}
	w->st.timed_calls = o.time_calls;
	t = now();
	for (;;) {
		n = 0;
		while (inflight + n < o.qd && worker_more(w, t)) {
			unsigned int k = sl.free[--sl.nfree];
			struct slot *s = &sl.s[k];
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			slot_prep(w, s, t, rwmix);
			if (fixed && s->write)
				io_uring_prep_write_fixed(sqe, dev_fd, s->buf, o.bs,
							  s->blk * o.bs, (int)k);
			else if (fixed)
				io_uring_prep_read_fixed(sqe, dev_fd, s->buf, o.bs,
							 s->blk * o.bs, (int)k);
			else if (s->write)
				io_uring_prep_write(sqe, dev_fd, s->buf, o.bs, s->blk * o.bs);
			else
				io_uring_prep_read(sqe, dev_fd, s->buf, o.bs, s->blk * o.bs);
			if (pi) {
				struct io_uring_attr_pi *a = &attr[k];
				struct dio_pi_params pa = {
					.seed = s->blk * o.bs / prof.interval,
				};

				if (s->write)
					dio_pi_generate(&prof, s->buf, o.bs, s->pi, &pa);
				a->flags = chk;
				a->app_tag = 0;
				a->len = pi_len;
				a->addr = (uint64_t)(uintptr_t)s->pi;
				a->seed = pa.seed;
				a->rsvd = 0;
				sqe->addr3 = (uint64_t)(uintptr_t)a;	/* attr_ptr */
				sqe->__pad2[0] = IORING_RW_ATTR_FLAG_PI; /* attr_type_mask */
			}
			io_uring_sqe_set_data64(sqe, k);
			n++;
		}
		inflight += n;
		if (!inflight)
			break;
		/* Submits what was queued (also any left over) and waits for one. */
		ts = tnow();
		ret = io_uring_submit_and_wait(&ring, 1);
		t = now();
		w->st.t_wait += t - ts;
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
			st_error(&w->st, "io_uring_submit_and_wait: %s", strerror(-ret));
			break;
		}
		seen = 0;
		io_uring_for_each_cqe(&ring, head, cqe) {
			unsigned int k = (unsigned int)cqe->user_data;
			struct slot *s = &sl.s[k];

			if (pi && !s->write && cqe->res == (int)o.bs && o.verify_every &&
			    npiread++ % o.verify_every == 0 && s->gen != GEN_UNKNOWN) {
				struct dio_pi_params pa = {
					.seed = s->blk * o.bs / prof.interval,
					.chk_flags = DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG,
				};
				struct dio_pi_error pe;

				if (dio_pi_verify(&prof, s->buf, o.bs, s->pi, &pa, &pe))
					st_error(&w->st, "PI of block %" PRIu64 " read back: "
						 "interval %" PRIu64 " tag %u expected %#" PRIx64
						 " actual %#" PRIx64, s->blk, pe.interval, pe.tag,
						 pe.expected, pe.actual);
			}
			slot_done(w, s, cqe->res, t,
				  pi && cqe->res == -EILSEQ ? " (PI: which block, io_uring "
				  "does not say)" : NULL);
			sl.free[sl.nfree++] = k;
			seen++;
		}
		io_uring_cq_advance(&ring, seen);
		inflight -= seen;
	}
	io_uring_queue_exit(&ring);	/* waits for anything left */
	if (inflight)
		w->st.errors++;
	for (i = 0; pi && i < o.qd; i++) {
		free(sl.s[i].pi);
		sl.s[i].pi = NULL;
	}
	slots_exit(&sl, o.qd);
	return 0;
}

static int run_aio(struct worker *w, int rwmix)
{
	static struct slots sl;
	static struct iocb iocbs[MAX_QD], *pend[MAX_QD];
	static struct io_event ev[MAX_QD];
	unsigned int inflight = 0, npend = 0, i;
	io_context_t ctx = 0;
	double t, ts;
	int ret;

	ret = io_setup((int)o.qd, &ctx);
	if (ret < 0) {
		st_error(&w->st, "io_setup: %s", strerror(-ret));
		w->st.unavailable = true;
		return 0;
	}
	slots_init(&sl, o.qd);
	w->st.timed_calls = o.time_calls;
	t = now();
	for (;;) {
		while (inflight + npend < o.qd && worker_more(w, t)) {
			unsigned int k = sl.free[--sl.nfree];
			struct slot *s = &sl.s[k];

			slot_prep(w, s, t, rwmix);
			if (s->write)
				io_prep_pwrite(&iocbs[k], dev_fd, s->buf, o.bs,
					       (long long)(s->blk * o.bs));
			else
				io_prep_pread(&iocbs[k], dev_fd, s->buf, o.bs,
					      (long long)(s->blk * o.bs));
			iocbs[k].data = (void *)(uintptr_t)k;
			pend[npend++] = &iocbs[k];
		}
		ts = tnow();
		if (npend) {
			ret = io_submit(ctx, npend, pend);
			if (ret > 0) {
				inflight += (unsigned int)ret;
				npend -= (unsigned int)ret;
				memmove(pend, pend + ret, npend * sizeof(*pend));
			} else if (ret != -EAGAIN || !inflight) {
				st_error(&w->st, "io_submit: %s", strerror(ret ? -ret : EIO));
				for (i = 0; i < npend; i++) {
					unsigned int k = (unsigned int)(uintptr_t)pend[i]->data;

					slot_undo(w, &sl.s[k]);
					sl.free[sl.nfree++] = k;
				}
				npend = 0;
			}
		}
		if (!inflight)
			break;
		if (o.time_calls) {
			t = now();
			w->st.t_submit += t - ts;
			ts = t;
		}
		ret = io_getevents(ctx, 1, (long)o.qd, ev, NULL);
		t = now();
		w->st.t_wait += t - ts;
		if (ret < 0) {
			if (ret == -EINTR)
				continue;
			st_error(&w->st, "io_getevents: %s", strerror(-ret));
			break;
		}
		for (i = 0; i < (unsigned int)ret; i++) {
			unsigned int k = (unsigned int)(uintptr_t)ev[i].data;
			long long res = (long long)ev[i].res;

			slot_done(w, &sl.s[k], res, t, NULL);
			sl.free[sl.nfree++] = k;
		}
		inflight -= (unsigned int)ret;
	}
	io_destroy(ctx);		/* waits for anything left */
	if (inflight)
		w->st.errors++;
	slots_exit(&sl, o.qd);
	return 0;
}

struct psync_arg {
	struct worker w;
	int rwmix;
};

static void *psync_thread(void *p)
{
	struct psync_arg *a = p;
	struct worker *w = &a->w;
	struct slot s = { .buf = xalloc_aligned(o.bs) };
	double t = now();
	ssize_t r;

	while (worker_more(w, t)) {
		slot_prep(w, &s, t, a->rwmix);
		if (s.write)
			r = pwrite(dev_fd, s.buf, o.bs, (off_t)(s.blk * o.bs));
		else
			r = pread(dev_fd, s.buf, o.bs, (off_t)(s.blk * o.bs));
		t = now();
		slot_done(w, &s, r < 0 ? -errno : r, t, NULL);
	}
	free(s.buf);
	return NULL;
}

/* ---- one engine, one workload ---- */

static void run_engine(enum engine e, int rwmix, struct stats *out, uint64_t seed,
		       double runtime, uint64_t max_ios)
{
	unsigned int nthr = e == E_PSYNC_N ? o.threads : 1, i;
	static struct psync_arg args[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	double t0, t1, u0, s0, u1, s1, m0, m1, deadline;
	void *rbuf = xalloc_aligned(o.bs);

	memset(out, 0, sizeof(*out));
	running = engine_names[e];
	alarm((unsigned int)runtime + 120);
	self_cpu(&u0, &s0);
	m0 = machine_cpu();
	t0 = now();
	deadline = t0 + runtime;
	for (i = 0; i < nthr; i++) {
		worker_init(&args[i].w, i, nthr, seed + i, deadline, max_ios);
		args[i].rwmix = rwmix;
	}
	switch (e) {
	case E_DIO:
	case E_DIO_PI:
	case E_DIO_FIXED:
		run_dio(&args[0].w, rwmix, e == E_DIO_PI, e == E_DIO_FIXED);
		break;
	case E_URING:
	case E_URING_FIXED:
	case E_URING_PI:
		run_uring(&args[0].w, rwmix, e == E_URING_FIXED, e == E_URING_PI);
		break;
	case E_AIO:
		run_aio(&args[0].w, rwmix);
		break;
	case E_PSYNC:
	case E_PSYNC_N:
		for (i = 0; i < nthr; i++)
			if (pthread_create(&tid[i], NULL, psync_thread, &args[i]))
				die("pthread_create failed");
		for (i = 0; i < nthr; i++)
			pthread_join(tid[i], NULL);
		break;
	default:
		break;
	}
	t1 = now();
	m1 = machine_cpu();
	self_cpu(&u1, &s1);
	alarm(0);
	out->ran = true;
	out->elapsed = t1 - t0;
	out->usr = u1 - u0;
	out->sys = s1 - s0;
	out->machine = m1 - m0;
	for (i = 0; i < nthr; i++) {
		if (args[i].w.st.unavailable)
			out->unavailable = true;
		if (!args[i].w.st.unavailable)
			worker_check_writes(&args[i].w, rbuf);
		st_add(out, &args[i].w.st);
	}
	free(rbuf);
}

/* Add one round of an engine to its totals; keep the best round's CPU. */
static void st_merge_round(struct stats *tot, const struct stats *r)
{
	double cpu, sys, mach;

	if (r->ios) {
		cpu = (r->usr + r->sys) / r->ios;
		sys = r->sys / r->ios;
		mach = r->machine / r->ios;
		if (!tot->ios || cpu < tot->best_cpu) {
			tot->best_cpu = cpu;
			tot->best_sys = sys;
		}
		if (!tot->ios || mach < tot->best_machine)
			tot->best_machine = mach;
	}
	st_add(tot, r);
	tot->ran = true;
	tot->unavailable |= r->unavailable;
	tot->elapsed += r->elapsed;
	tot->usr += r->usr;
	tot->sys += r->sys;
	tot->machine += r->machine;
}

/* ---- output ---- */

static const char *engine_label(enum engine e)
{
	static char buf[32];

	if (e != E_PSYNC_N)
		return engine_names[e];
	snprintf(buf, sizeof(buf), "psync-%ut", o.threads);
	return buf;
}

static void print_cpu_line(const char *title, const struct stats *st,
			   double (*f)(const struct stats *))
{
	const struct stats *ref = &st[E_URING];
	double rv = ref->ran && ref->ios && !ref->errors ? f(ref) : 0;
	unsigned int ei;
	int e;

	printf("%-37s", title);
	for_each_engine(e, ei) {
		double v;

		if (!st[e].ran || !st[e].ios || st[e].unavailable)
			continue;
		v = f(&st[e]);
		printf("  %s %.1f", engine_label(e), v);
		if (rv > 0)
			printf(" (%.2fx)", v / rv);
	}
	putchar('\n');
}

static double cpu_proc(const struct stats *s) { return s->best_cpu * 1e6; }
static double cpu_sys(const struct stats *s) { return s->best_sys * 1e6; }
static double cpu_machine(const struct stats *s) { return s->best_machine * 1e6; }
static double cpu_mean(const struct stats *s) { return (s->usr + s->sys) / s->ios * 1e6; }

/*
 * With io_uring+pi in the run, each engine's CPU per I/O over its
 * (process, best round / whole guest): the ratios of PI against upstream's
 * own user PI.  Nothing without it, so that the other tables stay as
 * they were.
 */
static void print_pi_ratios(const struct stats *st)
{
	const struct stats *ref = &st[E_URING_PI];
	unsigned int ei;
	int e;

	bool title = false;

	if (!ref->ran || !ref->ios || ref->unavailable || ref->errors ||
	    cpu_proc(ref) <= 0)
		return;
	for_each_engine(e, ei) {
		const struct stats *s = &st[e];

		if (e == E_URING_PI || !s->ran || !s->ios || s->unavailable)
			continue;
		if (!title)
			printf("%-37s", "CPU/IO vs io_uring+pi (proc / guest):");
		title = true;
		printf("  %s %.2fx", engine_label(e), cpu_proc(s) / cpu_proc(ref));
		if (cpu_machine(ref) > 0)
			printf(" / %.2fx", cpu_machine(s) / cpu_machine(ref));
	}
	if (title)
		putchar('\n');
}

static int print_table(const char *name, int rwmix, const struct stats *st)
{
	const struct stats *ref = &st[E_URING];
	double ref_iops = ref->ran && !ref->errors && ref->elapsed > 0 ?
			  ref->ios / ref->elapsed : 0;
	unsigned int ei;
	int e, bad = 0;

	printf("\n== %s: %d%% reads, bs %u, qd %u, %.1f s per engine in %u round%s%s\n",
	       name, rwmix, o.bs, o.qd, o.runtime, o.rounds, o.rounds > 1 ? "s" : "",
	       o.max_ios ? " (or the I/O bound)" : "");
	printf("%-14s %10s %9s %11s %11s %9s %9s %7s\n", "engine", "IOPS", "MB/s",
	       "avg lat us", "vs io_uring", "rd hdr", "rd full", "wr back");
	for_each_engine(e, ei) {
		const struct stats *s = &st[e];
		double iops;

		if (!s->ran)
			continue;
		if (s->unavailable) {
			printf("%-14s unavailable: %s\n", engine_label(e), s->err);
			bad = 1;
			continue;
		}
		iops = s->elapsed > 0 ? s->ios / s->elapsed : 0;
		printf("%-14s %10.0f %9.2f %11.1f ", engine_label(e), iops,
		       iops * o.bs / 1e6, s->ios ? s->lat_sum / s->ios * 1e6 : 0);
		if (ref_iops > 0)
			printf("%10.2fx", iops / ref_iops);
		else
			printf("%11s", "-");
		printf(" %9" PRIu64 " %9" PRIu64 " %7" PRIu64 "\n", s->checked_hdr,
		       s->checked_full, s->checked_wr);
		if (s->errors) {
			printf("%-14s FAILED: %" PRIu64 " error(s), first: %s\n",
			       "", s->errors, s->err);
			bad = 1;
		}
	}
	print_cpu_line("CPU us/IO, process (usr+sys):", st, cpu_proc);
	print_cpu_line("  of which sys:", st, cpu_sys);
	print_cpu_line("CPU us/IO, whole guest (/proc/stat):", st, cpu_machine);
	if (o.rounds > 1)
		print_cpu_line("CPU us/IO, process, mean of rounds:", st, cpu_mean);
	print_pi_ratios(st);
	if (!o.time_calls)
		goto out;
	printf("%-37s", "wall us/IO in calls (submit/wait):");
	for_each_engine(e, ei) {
		const struct stats *s = &st[e];

		if (!s->ran || !s->ios || s->unavailable || !s->timed_calls)
			continue;
		if (e == E_URING)
			printf("  %s -/%.1f", engine_label(e), s->t_wait / s->ios * 1e6);
		else
			printf("  %s %.1f/%.1f", engine_label(e), s->t_submit / s->ios * 1e6,
			       s->t_wait / s->ios * 1e6);
	}
	putchar('\n');
out:
	fflush(stdout);
	return bad;
}

/* ---- set-up ---- */

static void describe_device(uint64_t capacity)
{
	const char *name = strrchr(o.dev, '/') ? strrchr(o.dev, '/') + 1 : o.dev;
	char path[256], fmt[64] = "none", model[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/block/%s/integrity/format", name);
	if ((f = fopen(path, "r"))) {
		if (!fgets(fmt, sizeof(fmt), f))
			strcpy(fmt, "?");
		fclose(f);
	}
	snprintf(path, sizeof(path), "/sys/class/block/%s/device/model", name);
	if ((f = fopen(path, "r"))) {
		if (!fgets(model, sizeof(model), f))
			model[0] = 0;
		fclose(f);
	}
	fmt[strcspn(fmt, "\n")] = 0;
	model[strcspn(model, "\n")] = 0;
	for (char *p = model + strlen(model); p > model && p[-1] == ' '; )
		*--p = 0;
	printf("io_bench: %s%s%s%s: %" PRIu64 " MiB, logical block %u, integrity %s; "
	       "region %" PRIu64 " MiB (%" PRIu64 " blocks of %u)\n", o.dev,
	       model[0] ? " (" : "", model, model[0] ? ")" : "",
	       capacity >> 20, lbs, fmt, (nblocks * o.bs) >> 20, nblocks, o.bs);
}

/* Write the whole region with generation 0 of the pattern. */
static void prefill(void)
{
	size_t chunk = (1U << 20) / o.bs * o.bs;
	uint64_t blk, per, j;
	void *buf;
	double t0 = now();

	if (chunk < o.bs)
		chunk = o.bs;
	per = chunk / o.bs;
	buf = xalloc_aligned(chunk);
	for (blk = 0; blk < nblocks; blk += per) {
		uint64_t n = nblocks - blk < per ? nblocks - blk : per;
		ssize_t r;

		for (j = 0; j < n; j++)
			pat_fill((char *)buf + j * o.bs, blk + j, 0);
		r = pwrite(dev_fd, buf, n * o.bs, (off_t)(blk * o.bs));
		if (r != (ssize_t)(n * o.bs))
			die("prefill: write at block %" PRIu64 ": %s", blk,
			    r < 0 ? strerror(errno) : "short write");
	}
	if (fdatasync(dev_fd))
		die("prefill: fdatasync: %s", strerror(errno));
	free(buf);
	printf("io_bench: region written with the pattern in %.1f s\n", now() - t0);
}

/*
 * What the building blocks of an I/O cost on this CPU (under TCG they are
 * far from native, and not in proportion): a system call, a clock read, and
 * on one block: clearing and copying with the string instructions the
 * kernel uses (clear_page_erms, copy_user_enhanced_fast_string), a CRC16
 * T10-DIF with PCLMULQDQ (ISA-L; the kernel's crct10dif-pclmul is alike).
 */
static double time_op(void (*fn)(void *), void *arg)
{
	double t0 = now(), t;
	uint64_t n = 0, batch = 1;

	do {
		for (uint64_t i = 0; i < batch; i++)
			fn(arg);
		n += batch;
		batch *= 2;
		t = now() - t0;
	} while (t < 0.05);
	return t / n * 1e6;
}

static char *cal_a, *cal_b;
static volatile uint64_t cal_sink;

static void op_syscall(void *a) { (void)a; cal_sink += (uint64_t)getppid(); }
static void op_clock(void *a) { (void)a; cal_sink += (uint64_t)now(); }
static void op_crc(void *a) { (void)a; cal_sink += dio_pi_crc16_t10dif(0, cal_a, o.bs); }
#if defined(__x86_64__)
static void op_stos(void *a)
{
	void *d = cal_a;
	size_t n = o.bs;

	(void)a;
	__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(0) : "memory");
}

static void op_movs(void *a)
{
	void *d = cal_b;
	const void *sp = cal_a;
	size_t n = o.bs;

	(void)a;
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(sp), "+c"(n) : : "memory");
}
#else
static void op_stos(void *a) { (void)a; memset(cal_a, 0, o.bs); }
static void op_movs(void *a) { (void)a; memcpy(cal_b, cal_a, o.bs); }
#endif

static void calibrate(void)
{
	cal_a = xalloc_aligned(o.bs);
	cal_b = xalloc_aligned(o.bs);
	printf("io_bench: primitives, us: syscall %.2f, clock_gettime %.2f; on %u bytes: "
	       "rep stosb %.2f, rep movsb %.2f, CRC16 (PCLMUL) %.2f\n",
	       time_op(op_syscall, NULL), time_op(op_clock, NULL), o.bs,
	       time_op(op_stos, NULL), time_op(op_movs, NULL), time_op(op_crc, NULL));
	free(cal_a);
	free(cal_b);
}

static void usage(FILE *out, int rc)
{
	fputs("usage: io_bench [OPTIONS] DEVICE      (writes DEVICE: scratch devices only)\n"
	      "  -b, --bs BYTES          block size (4096)\n"
	      "  -q, --qd N              queue depth of dio_batch, io_uring, libaio (32)\n"
	      "  -t, --runtime SEC       runtime per engine and workload (5)\n"
	      "  -m, --rwmix PCT         one mixed workload with PCT% reads\n"
	      "                          (default: randread, then randwrite)\n"
	      "  -n, --max-ios N         at most N I/Os per engine and workload (no bound)\n"
	      "  -s, --size BYTES        region at the start of DEVICE (min(device, 64M));\n"
	      "                          K, M, G suffixes\n"
	      "  -j, --threads N         also psync with N threads\n"
	      "  -e, --engines LIST      comma-separated, of dio_batch,dio+pi,dio+fixed,io_uring,\n"
	      "                          io_uring+fixed,io_uring+pi,libaio,psync\n"
	      "                          (default dio_batch,io_uring,libaio,psync)\n"
	      "  -P, --pi                also dio+pi: dio_batch with PI buffers (PI devices)\n"
	      "  -F, --fixed             also dio+fixed and io_uring+fixed: registered buffers\n"
	      "  -U, --uring-pi          also io_uring+pi: io_uring with PI attributes, dio+pi's\n"
	      "                          peer (Linux 6.14+ with IORING_FEAT_RW_ATTR, PI devices)\n"
	      "  -V, --verify-every N    verify every Nth read in full (16; 1: all; 0: headers only)\n"
	      "  -r, --rounds N          split each engine's runtime in N turns, engines\n"
	      "                          alternating (3); CPU lines show the best turn\n"
	      "  -C, --no-calibrate      skip timing the primitives (syscall, copy, CRC)\n"
	      "  -T, --time-calls        also time the submit and wait calls (one or two\n"
	      "                          more clock reads per batch: costly under TCG)\n"
	      "  -h, --help\n", out);
	exit(rc);
}

static uint64_t parse_size(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		die("bad number '%s'", s);
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end)
		die("bad number '%s'", s);
	return v;
}

static void parse_engines(char *list)
{
	char *tok, *save = NULL;
	int e;

	o.engines = 0;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (e = 0; e < E_NR; e++)
			if (e != E_PSYNC_N && !strcmp(tok, engine_names[e]))
				break;
		if (e == E_NR)
			die("unknown engine '%s'", tok);
		o.engines |= 1U << e;
	}
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "bs", required_argument, NULL, 'b' },
		{ "qd", required_argument, NULL, 'q' },
		{ "runtime", required_argument, NULL, 't' },
		{ "rwmix", required_argument, NULL, 'm' },
		{ "max-ios", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 'j' },
		{ "engines", required_argument, NULL, 'e' },
		{ "verify-every", required_argument, NULL, 'V' },
		{ "pi", no_argument, NULL, 'P' },
		{ "fixed", no_argument, NULL, 'F' },
		{ "uring-pi", no_argument, NULL, 'U' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "no-calibrate", no_argument, NULL, 'C' },
		{ "time-calls", no_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct { const char *name; int rwmix; } wl[2];
	struct stats st[E_NR];
	uint64_t capacity;
	double t_start = now();
	unsigned int ei;
	int c, nwl, i, e, bad = 0;

	while ((c = getopt_long(argc, argv, "b:q:t:m:n:s:j:e:V:PFUr:CTh", lopts, NULL)) != -1) {
		switch (c) {
		case 'b': o.bs = (unsigned int)parse_size(optarg); break;
		case 'q': o.qd = (unsigned int)parse_size(optarg); break;
		case 't': o.runtime = atof(optarg); break;
		case 'm': o.rwmix = atoi(optarg); break;
		case 'n': o.max_ios = parse_size(optarg); break;
		case 's': o.size = parse_size(optarg); break;
		case 'j': o.threads = (unsigned int)parse_size(optarg); break;
		case 'e': parse_engines(optarg); break;
		case 'V': o.verify_every = (unsigned int)parse_size(optarg); break;
		case 'P': o.engines |= 1U << E_DIO_PI; break;
		case 'F': o.engines |= 1U << E_DIO_FIXED | 1U << E_URING_FIXED; break;
		case 'U': o.engines |= 1U << E_URING_PI; break;
		case 'r': o.rounds = (unsigned int)parse_size(optarg); break;
		case 'C': o.calibrate = false; break;
		case 'T': o.time_calls = true; break;
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	}
	if (optind != argc - 1)
		usage(stderr, 2);
	o.dev = argv[optind];
	if (o.bs < 512 || o.bs % 8 || o.bs > (16U << 20))
		die("block size %u: 512 bytes to 16 MiB, a multiple of 8", o.bs);
	if (!o.qd || o.qd > MAX_QD)
		die("queue depth %u: 1 to %u", o.qd, MAX_QD);
	if (o.runtime <= 0 || o.runtime > 3600)
		die("runtime %.1f s: more than 0, at most 3600", o.runtime);
	if (o.rwmix > 100 || o.rwmix < -1)
		die("read mix %d%%: 0 to 100", o.rwmix);
	if (!o.rounds || o.rounds > 100)
		die("rounds %u: 1 to 100", o.rounds);
	if (o.threads > MAX_THREADS)
		die("threads %u: at most %u", o.threads, MAX_THREADS);
	if (o.threads > 1)
		o.engines |= 1U << E_PSYNC_N;

	/* Refuse a device someone holds (mounted, md/dm, ...). */
	dev_fd = open(o.dev, O_RDWR | O_EXCL);
	if (dev_fd < 0)
		die("%s: %s", o.dev, errno == EBUSY ? "in use (mounted or held)" : strerror(errno));
	close(dev_fd);
	dev_fd = open(o.dev, O_RDWR | O_DIRECT);
	if (dev_fd < 0)
		die("%s: %s", o.dev, strerror(errno));
	if (ioctl(dev_fd, BLKGETSIZE64, &capacity) || ioctl(dev_fd, BLKSSZGET, &lbs))
		die("%s: not a block device (%s)", o.dev, strerror(errno));
	if (o.bs % lbs)
		die("block size %u is not a multiple of the logical block size %u", o.bs, lbs);
	if (!o.size)
		o.size = capacity < (64ULL << 20) ? capacity : 64ULL << 20;
	if (o.size > capacity)
		die("region %" PRIu64 " bytes is beyond the device (%" PRIu64 ")", o.size, capacity);
	nblocks = o.size / o.bs;
	if (nblocks < 4ULL * o.qd * (o.threads > 1 ? o.threads : 1))
		die("region of %" PRIu64 " blocks too small for queue depth %u", nblocks, o.qd);
	gens = calloc(nblocks, sizeof(*gens));
	busy = calloc(nblocks, 1);
	if (!gens || !busy)
		die("out of memory");
	signal(SIGALRM, watchdog);

	describe_device(capacity);
	printf("io_bench: engines in order:");
	for_each_engine(e, ei)
		if (o.engines & (1U << e))
			printf(" %s", engine_label(e));
	printf("; random offsets, no two I/Os in flight on one block; every read's "
	       "header checked, every %uth in full\n", o.verify_every);
	if (o.calibrate)
		calibrate();
	prefill();

	if (o.rwmix < 0) {
		wl[0].name = "randread", wl[0].rwmix = 100;
		wl[1].name = "randwrite", wl[1].rwmix = 0;
		nwl = 2;
	} else {
		wl[0].name = o.rwmix == 100 ? "randread" : o.rwmix == 0 ? "randwrite" : "randrw";
		wl[0].rwmix = o.rwmix;
		nwl = 1;
	}
	/*
	 * Rounds: every engine runs runtime/rounds at a time, in turn, so that
	 * a busy host (other guests) disturbs them alike; the CPU lines take
	 * each engine's best round, since stolen time only ever adds.
	 */
	for (i = 0; i < nwl; i++) {
		unsigned int r;

		memset(st, 0, sizeof(st));
		for (r = 0; r < o.rounds; r++)
			for_each_engine(e, ei) {
				struct stats one;

				if (!(o.engines & (1U << e)) || st[e].unavailable ||
				    st[e].errors)
					continue;
				run_engine(e, wl[i].rwmix, &one,
					   (uint64_t)(i * 1000 + r * 16 + e + 1),
					   o.runtime / o.rounds,
					   o.max_ios ? (o.max_ios + o.rounds - 1) / o.rounds : 0);
				st_merge_round(&st[e], &one);
			}
		bad |= print_table(wl[i].name, wl[i].rwmix, st);
	}
	close(dev_fd);
	printf("\nio_bench: %s, %.1f s in all\n", bad ? "FAILED" : "all I/O verified",
	       now() - t_start);
	return bad;
}
