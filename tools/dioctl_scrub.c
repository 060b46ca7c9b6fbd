// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dioctl scrub: read a whole device (or a range) with its PI, --depth
 * requests of --request-size bytes in flight whatever the device's size,
 * verify every tuple in user space with libdioctl, and go on past bad
 * blocks:
 *
 * - a read the device refuses (result -EILSEQ) names one block (the
 *   module locates it): that block is a failure, and the parts of the
 *   request before and after it are read again, so every other block is
 *   still read and verified;
 * - a refused read the module could not narrow down (its own reads of
 *   the request alone passed: the block layer had merged it with a
 *   neighbour that holds the bad block) is read again once nothing else
 *   is in flight, then in halves; a single block still refused so is
 *   read once more without a PI buffer (the module verifies it), and
 *   listed when that fails too;
 * - an I/O error (EIO, ENODATA, ...) is bisected down to single blocks,
 *   each failing one listed; other errors (the device went away) stop the
 *   scrub.
 *
 * Progress on stderr when it is a terminal, one final line when not;
 * SIGINT (or SIGTERM) stops submitting, waits for what is in flight and
 * prints the report so far.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dioctl_tool.h"

/* One of failures[]; with --repair-from its "repair" too. */
static void failure_json_repair(const struct failure *f, const struct repair_result *rep)
{
	j_begin(NULL);
	failure_json_members(f);
	if (rep)
		repair_json(rep);
	j_end();
}

static void failure_text(const struct failure *f)
{
	const char *note = failure_note(f);

	if (f->err != EILSEQ) {
		printf("  bytes %" PRIu64 "..%" PRIu64 ": I/O error: %s (%s)\n", f->offset,
		       f->offset + f->length - 1, err_text(f->err), err_name(f->err));
		return;
	}
	if (f->interval == DIO_PI_INTERVAL_UNKNOWN) {
		printf("  bytes %" PRIu64 "..%" PRIu64 ": %s; found by %s\n", f->offset,
		       f->offset + f->length - 1, note, source_name(f->source));
		return;
	}
	printf("  block at byte %" PRIu64 " (interval %" PRIu64 "): ", f->offset, f->interval);
	if (note)
		printf("%s", note);
	else
		printf("%s tag, expected %#" PRIx64 ", actual %#" PRIx64, dio_pi_tag_name(f->tag),
		       f->expected, f->actual);
	printf("; found by %s\n", source_name(f->source));
}

/* ---- the scrub ---- */

struct range {
	uint64_t	off, len;
	unsigned int	tries;		/* times a refusal nobody located was retried */
};

struct sslot {
	struct dio_request	r;
	unsigned char		*data, *md;
	uint64_t		off, len;
	unsigned int		tries;
};

struct scrub {
	struct dev		d;
	const struct opts	*o;
	bool			pi;		/* read with PI */
	uint64_t		unit, req, start, end, next;
	unsigned int		depth;
	struct sslot		*slots;
	unsigned int		*free_slots, nfree;
	struct range		*pending;	/* to read again */
	size_t			npending, pending_cap;
	struct failure		*fails;
	size_t			nfails, fails_cap, unlisted;
	uint64_t		pi_failures, io_errors;
	/* Blocks skipped unchecked: their tuples carry the escape app tag. */
	uint64_t		unchecked;
	uint64_t		*unconfirmed;	/* offsets of refused blocks that read well */
	size_t			nunconfirmed, unconfirmed_cap;
	uint64_t		done, submitted;
	int			fatal;		/* errno that stopped it */
	double			t0, last_progress;
	bool			tty;
	struct source		*src;		/* --repair-from */
	struct repair_result	*repairs;	/* one per listed failure */
	uint64_t		repaired[2];	/* PI failures, I/O errors repaired */
	size_t			would, unrepaired;
};

/* range.tries of a block read one last time without a PI buffer. */
#define TRIES_PLAIN	100

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
	/* A second one ends the process at once. */
	signal(sig, SIG_DFL);
}

static void push_range(struct scrub *s, uint64_t off, uint64_t len, unsigned int tries)
{
	if (!len)
		return;
	if (s->npending == s->pending_cap) {
		s->pending_cap = s->pending_cap ? 2 * s->pending_cap : 64;
		s->pending = realloc(s->pending, s->pending_cap * sizeof(*s->pending));
		if (!s->pending)
			die(EXIT_IO, ENOMEM, "scrub: list of ranges to read again");
	}
	s->pending[s->npending++] = (struct range){ off, len, tries };
}

static void add_failure(struct scrub *s, const struct failure *f)
{
	if (f->err == EILSEQ)
		s->pi_failures++;
	else
		s->io_errors++;
	if (s->nfails >= s->o->max_report) {
		s->unlisted++;
		return;
	}
	if (s->nfails == s->fails_cap) {
		s->fails_cap = s->fails_cap ? 2 * s->fails_cap : 64;
		s->fails = realloc(s->fails, s->fails_cap * sizeof(*s->fails));
		if (!s->fails)
			die(EXIT_IO, ENOMEM, "scrub: failure list");
	}
	s->fails[s->nfails++] = *f;
}

static uint64_t seed_at(const struct scrub *s, uint64_t off)
{
	return dio_pi_seed(&s->d.q, off);
}

/*
 * The next piece to read, or false when there is none.  Pieces read again
 * (@retry) go alone in their SUBMIT, so that the block layer does not merge
 * them with their neighbours: a merged command the device refuses fails
 * every request in it, and the module finds the bad block in one of them
 * only.
 */
static bool next_piece(struct scrub *s, uint64_t *off, uint64_t *len,
		       unsigned int *tries, bool *retry)
{
	struct range *r;

	*retry = s->npending > 0;
	*tries = 0;
	if (s->npending) {
		r = &s->pending[s->npending - 1];
		*tries = r->tries;
		*off = r->off;
		*len = r->len < s->req ? r->len : s->req;
		r->off += *len;
		r->len -= *len;
		if (!r->len)
			s->npending--;
		return true;
	}
	if (s->next >= s->end)
		return false;
	*off = s->next;
	*len = s->end - s->next < s->req ? s->end - s->next : s->req;
	s->next += *len;
	return true;
}

/* --rate: when what was submitted so far has had its time (0: no limit). */
static double rate_due(const struct scrub *s)
{
	if (!s->o->rate)
		return 0;
	return s->t0 + (double)s->submitted / (s->o->rate * 1e6);
}

/* --rate: sleep until @bytes more may be submitted; false if interrupted. */
static bool rate_wait(struct scrub *s, uint64_t bytes)
{
	double at = rate_due(s), now;
	struct timespec ts;

	if (!s->o->rate)
		return true;
	while (!interrupted && (now = now_s()) < at) {
		double w = at - now;

		ts.tv_sec = (time_t)w;
		ts.tv_nsec = (long)((w - ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
	}
	return !interrupted;
}

static void fmt_bytes(char *buf, size_t len, uint64_t b)
{
	if (b >= (1ULL << 30))
		snprintf(buf, len, "%.1f GiB", b / 1073741824.0);
	else
		snprintf(buf, len, "%.1f MiB", b / 1048576.0);
}

static void progress(struct scrub *s, bool final)
{
	double now = now_s(), el = now - s->t0, mbs = el > 0 ? s->done / el / 1e6 : 0;
	uint64_t total = s->end - s->start, fails = s->pi_failures + s->io_errors;
	char done[32], all[32], eta[32] = "-";

	if (!s->tty && !final)
		return;
	if (!final && s->last_progress && now - s->last_progress < 0.2)
		return;
	s->last_progress = now;
	fmt_bytes(done, sizeof(done), s->done);
	fmt_bytes(all, sizeof(all), total);
	if (mbs > 0 && s->done < total) {
		double left = (total - s->done) / (mbs * 1e6);

		snprintf(eta, sizeof(eta), "%d:%02d", (int)(left / 60), (int)fmod(left, 60));
	} else if (s->done >= total) {
		snprintf(eta, sizeof(eta), "0:00");
	}
	if (s->tty)
		fprintf(stderr, "\rscrub %s: %s of %s (%.0f%%), %.1f MB/s, ETA %s, %" PRIu64
			" failure%s\033[K%s", s->d.path, done, all,
			total ? 100.0 * s->done / total : 100.0, mbs, eta, fails,
			fails == 1 ? "" : "s", final ? "\n" : "");
	else
		fprintf(stderr, "dioctl scrub %s: %" PRIu64 " of %" PRIu64 " bytes in %.1f s "
			"(%.1f MB/s), %" PRIu64 " failure%s%s\n", s->d.path, s->done, total,
			el, mbs, fails, fails == 1 ? "" : "s",
			interrupted ? ", interrupted" : "");
}

/* Verify every tuple of a completed read; failures go to the list. */
static void verify_piece(struct scrub *s, const struct sslot *sl)
{
	const struct dio_query *q = &s->d.q;
	const struct opts *o = s->o;
	uint64_t n = sl->len / q->pi_interval, k = 0;
	struct dio_pi_params a = {
		.app_tag = o->app_tag < 0 ? 0 : o->app_tag,
		.app_mask = o->app_mask,
		.chk_flags = DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG,
	};
	struct dio_pi_error e;
	struct failure f;

	if (o->app_tag >= 0)
		a.chk_flags |= DIO_PI_CHK_APPTAG;
	while (k < n) {
		a.seed = seed_at(s, sl->off) + k;
		if (!dio_pi_verify(&s->d.p, sl->data + k * q->pi_interval,
				   (n - k) * q->pi_interval, sl->md + k * q->pi_md_size,
				   &a, &e)) {
			s->unchecked += e.escaped;
			return;
		}
		if (errno != EILSEQ)
			die(EXIT_IO, errno, "dio_pi_verify");
		s->unchecked += e.escaped;
		k += e.interval;
		f = (struct failure){
			.offset = sl->off + k * q->pi_interval, .length = q->pi_interval,
			.interval = e.ref, .tag = e.tag, .expected = e.expected,
			.actual = e.actual, .source = DIO_PI_SRC_DIOCTL, .err = EILSEQ,
		};
		add_failure(s, &f);
		k++;
	}
}

/* Errors worth narrowing down to blocks: the medium's, not the device gone. */
static bool medium_error(int e)
{
	return e == EIO || e == ENODATA || e == EREMOTEIO || e == ETIMEDOUT ||
	       e == EBADMSG || e == ENOLINK;
}

/* Errors of a device that is gone: its handle revoked, the disk removed. */
static bool device_gone(int e)
{
	return e == ENXIO || e == ENODEV;
}

static void complete(struct scrub *s, struct sslot *sl)
{
	const struct dio_request *r = &sl->r;
	struct failure f;
	uint64_t bad, half;
	int e;

	if (r->result == (int64_t)sl->len) {
		if (s->pi && sl->tries != TRIES_PLAIN)
			verify_piece(s, sl);
		s->done += sl->len;
		return;
	}
	e = r->result < 0 ? (int)-r->result : EIO;
	failure_from_req(&s->d, r, sl->off, sl->len, &f);
	if (e == EILSEQ && f.interval != DIO_PI_INTERVAL_UNKNOWN &&
	    f.offset >= sl->off && f.offset < sl->off + sl->len) {
		add_failure(s, &f);
		bad = f.offset;
		/* Read the rest again: before the block (for our own checks) and after. */
		push_range(s, bad + s->unit, sl->off + sl->len - bad - s->unit, 0);
		push_range(s, sl->off, bad - sl->off, 0);
		s->done += s->unit;
		return;
	}
	if (e == EILSEQ) {
		/*
		 * Refused, and the module's reads of this request alone passed:
		 * most likely it was merged with a neighbour that holds the bad
		 * block.  Read it again alone; then in halves; a single block
		 * refused three times is reported, tag and values unknown.
		 */
		if (!sl->tries) {
			push_range(s, sl->off, sl->len, 1);
			return;
		}
		if (sl->len > s->unit) {
			half = sl->len / s->unit / 2 * s->unit;
			push_range(s, sl->off + half, sl->len - half, 1);
			push_range(s, sl->off, half, 1);
			return;
		}
		if (sl->tries < 3) {
			push_range(s, sl->off, sl->len, sl->tries + 1);
			return;
		}
		if (sl->tries == 3) {
			/*
			 * Last, a read without a PI buffer, which the module
			 * verifies itself (guard and ref tag) with an exact report.
			 */
			push_range(s, sl->off, sl->len, TRIES_PLAIN);
			return;
		}
		/*
		 * Refused every time, yet each time the module's own reads of
		 * the block passed: not a failure the block can be shown to
		 * have; listed apart.
		 */
		if (s->nunconfirmed < s->o->max_report) {
			if (s->nunconfirmed == s->unconfirmed_cap) {
				s->unconfirmed_cap = s->unconfirmed_cap ? 2 * s->unconfirmed_cap : 16;
				s->unconfirmed = realloc(s->unconfirmed, s->unconfirmed_cap *
							 sizeof(*s->unconfirmed));
				if (!s->unconfirmed)
					die(EXIT_IO, ENOMEM, "scrub: list of refusals");
			}
			s->unconfirmed[s->nunconfirmed++] = sl->off;
		}
		s->done += sl->len;
		return;
	}
	if (medium_error(e) && sl->len > s->unit) {
		half = sl->len / s->unit / 2 * s->unit;
		push_range(s, sl->off + half, sl->len - half, 0);
		push_range(s, sl->off, half, 0);
		return;
	}
	add_failure(s, &f);
	s->done += sl->len;
	if (!medium_error(e) && !s->fatal)
		s->fatal = e;
}

static int cmp_failure(const void *a, const void *b)
{
	const struct failure *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static void report(struct scrub *s, int code)
{
	const struct dio_query *q = &s->d.q;
	const struct opts *o = s->o;
	double el = now_s() - s->t0;
	bool unknown_tags = false;
	size_t i;

	if (o->json) {
		j_begin(NULL);
		j_str("command", "scrub");
		j_str("device", s->d.path);
		if (q->profile[0])
			j_str("pi_profile", q->profile);
		else
			j_null("pi_profile");
		j_bool("pi", s->pi);
		/* "interval": the size, as in 0.3.0 (deprecated: interval_size). */
		j_u64("interval", s->unit);
		j_u64("interval_size", s->unit);
		j_u64("start", s->start);
		j_u64("end", s->end);
		j_u64("bytes_total", s->end - s->start);
		j_u64("bytes_scrubbed", s->done);
		j_u64("request_size", s->req);
		j_u64("depth", s->depth);
		if (o->app_tag >= 0) {
			j_u64("app_tag", o->app_tag);
			j_hex("app_tag_hex", o->app_tag);
		} else {
			j_null("app_tag");
			j_null("app_tag_hex");
		}
		j_u64("app_mask", o->app_mask);
		j_hex("app_mask_hex", o->app_mask);
		j_dbl("seconds", el);
		j_dbl("mb_per_s", el > 0 ? s->done / el / 1e6 : 0);
		j_bool("interrupted", interrupted != 0);
		j_bool("complete", !interrupted && !s->fatal);
		j_u64("pi_failures", s->pi_failures);
		j_u64("unchecked_blocks", s->unchecked);
		j_u64("io_errors", s->io_errors);
		j_u64("unlisted_failures", s->unlisted);
		j_abegin("unconfirmed_refusals");
		for (i = 0; i < s->nunconfirmed; i++) {
			j_begin(NULL);
			j_u64("offset", s->unconfirmed[i]);
			j_u64("length", s->unit);
			j_end();
		}
		j_aend();
		j_str("status", code == EXIT_OK ? "ok" : code == EXIT_PI ? "pi-failure" :
				code == EXIT_IO ? "io-error" : "interrupted");
		j_u64("exit_code", code);
		if (s->src) {
			j_begin("repair");
			j_str("source", o->repair_from);
			j_str("source_type", source_kind(s->src));
			j_bool("dry_run", o->dry_run);
			j_u64("repaired", s->repaired[0] + s->repaired[1]);
			j_u64("would_repair", s->would);
			j_u64("not_repaired", s->unrepaired);
			j_end();
		} else {
			j_null("repair");
		}
		j_abegin("failures");
		for (i = 0; i < s->nfails; i++)
			failure_json_repair(&s->fails[i], s->repairs ? &s->repairs[i] : NULL);
		j_aend();
		j_end();
		j_done();
		return;
	}
	printf("scrub %s: %" PRIu64 " of %" PRIu64 " bytes (%" PRIu64 "..%" PRIu64 "), %s, "
	       "%" PRIu64 "-byte blocks, in %.1f s (%.1f MB/s)%s\n", s->d.path, s->done,
	       s->end - s->start, s->start, s->end, s->pi ? q->profile : "no PI", s->unit,
	       el, el > 0 ? s->done / el / 1e6 : 0,
	       interrupted ? ": INTERRUPTED, the report so far" :
	       s->fatal ? ": STOPPED, the report so far" : "");
	if (s->unchecked) {
		print_unchecked(stdout, s->unchecked);
		putchar('\n');
	}
	if (!s->nfails && !s->unlisted) {
		printf("no failures\n");
	} else {
		printf("%" PRIu64 " PI failure%s, %" PRIu64 " I/O error%s:\n", s->pi_failures,
		       s->pi_failures == 1 ? "" : "s", s->io_errors,
		       s->io_errors == 1 ? "" : "s");
		for (i = 0; i < s->nfails; i++) {
			failure_text(&s->fails[i]);
			if (s->repairs)
				printf("    %s%s%s\n", repair_outcome_text(s->repairs[i].outcome),
				       s->repairs[i].why[0] ? ": " : "", s->repairs[i].why);
			if (s->fails[i].err == EILSEQ && s->fails[i].tag == DIO_PI_TAG_NONE &&
			    s->fails[i].interval != DIO_PI_INTERVAL_UNKNOWN)
				unknown_tags = true;
		}
		if (s->unlisted)
			printf("  ... and %zu more, not listed (--max-report)\n", s->unlisted);
		if (unknown_tags)
			printf("note: this kernel cannot read a block the device refuses raw "
			       "(NVMe before Linux 6.14): the module names the block only\n");
	}
	if (s->nunconfirmed) {
		printf("note: the device refused %zu block%s, which passed every time the "
		       "module read them again (not counted as failures):\n", s->nunconfirmed,
		       s->nunconfirmed == 1 ? "" : "s");
		for (i = 0; i < s->nunconfirmed; i++)
			printf("  block at byte %" PRIu64 "\n", s->unconfirmed[i]);
	}
	if (s->fatal)
		printf("stopped: %s (%s)\n", err_text(s->fatal), err_name(s->fatal));
	if (s->src && o->dry_run)
		printf("repair from %s (dry run, nothing written): %zu would be repaired, "
		       "%zu not%s\n", o->repair_from, s->would, s->unrepaired,
		       s->unlisted ? ", and the failures not listed not tried" : "");
	else if (s->src)
		printf("repair from %s: %" PRIu64 " repaired, %zu not%s\n", o->repair_from,
		       s->repaired[0] + s->repaired[1], s->unrepaired,
		       s->unlisted ? ", and the failures not listed not tried" : "");
}

/*
 * --repair-from: each listed failure in ascending order (a stream source
 * is read forwards only), after the scrub.
 */
static void repair_all(struct scrub *s)
{
	const struct opts *o = s->o;
	struct repair_result *res;
	size_t i;

	s->repairs = calloc(s->nfails ? s->nfails : 1, sizeof(*s->repairs));
	if (!s->repairs)
		die(EXIT_IO, ENOMEM, "scrub: repair list");
	for (i = 0; i < s->nfails; i++) {
		res = &s->repairs[i];
		if (interrupted || s->fatal) {
			res->outcome = REPAIR_NOT_TRIED;
			snprintf(res->why, sizeof(res->why), "the scrub was %s",
				 interrupted ? "interrupted" : "stopped");
		} else {
			repair_one(s->src, &s->d, s->pi, o, &s->fails[i], res);
		}
		if (res->outcome == REPAIR_DONE)
			s->repaired[s->fails[i].err != EILSEQ]++;
		else if (res->outcome == REPAIR_WOULD)
			s->would++;
		else
			s->unrepaired++;
	}
}

int cmd_scrub(const char *path, const struct opts *o)
{
	struct scrub *s = calloc(1, sizeof(*s));
	struct dio_features f;
	struct dio_request **ptrs;
	struct sigaction sa = { .sa_handler = on_signal };
	uint64_t off, len;
	unsigned int k, n, inflight = 0, nprep, tries;
	bool retry;
	int ret, code;

	if (!s)
		die(EXIT_IO, ENOMEM, "scrub");
	s->o = o;
	get_features(&f);
	if (o->dry_run && !o->repair_from)
		usage_error("--dry-run: with --repair-from only");
	dev_open(&s->d, path, o->repair_from && !o->dry_run);
	s->pi = s->d.has_pi && (f.features & DIO_FEAT_PI);
	if (o->app_tag >= 0 && !s->pi)
		die(EXIT_NOTSUP, EOPNOTSUPP, "--app-tag: %s has no PI this tool can read",
		    path);
	s->unit = s->pi ? s->d.q.pi_interval : s->d.q.logical_block_size;
	s->start = o->have_range ? o->range_start : 0;
	s->end = o->have_range && !o->range_to_end ? o->range_end : s->d.q.capacity;
	if (s->start % s->unit || s->end % s->unit)
		usage_error("--range: START and END must be multiples of %" PRIu64, s->unit);
	if (s->end > s->d.q.capacity || s->start >= s->end)
		usage_error("--range %" PRIu64 ":%" PRIu64 " is not inside %s (%" PRIu64
			    " bytes)", s->start, s->end, path, (uint64_t)s->d.q.capacity);
	s->req = pick_req_size(&s->d, &f, o, s->unit, s->pi);
	s->depth = o->depth;
	if (s->depth > f.max_inflight || s->depth > f.max_batch)
		usage_error("--depth %u: at most %u (the module's max_inflight and max_batch)",
			    s->depth, f.max_inflight < f.max_batch ? f.max_inflight : f.max_batch);
	if (o->repair_from)
		s->src = source_open(o->repair_from, &s->d, s->pi, s->unit, s->req, s->start,
				     s->end);
	s->slots = calloc(s->depth, sizeof(*s->slots));
	s->free_slots = calloc(s->depth, sizeof(*s->free_slots));
	ptrs = calloc(s->depth, sizeof(*ptrs));
	if (!s->slots || !s->free_slots || !ptrs)
		die(EXIT_IO, ENOMEM, "allocating %u requests", s->depth);
	for (k = 0; k < s->depth; k++) {
		s->slots[k].data = xalloc(s->req);
		if (s->pi)
			s->slots[k].md = xalloc(s->req / s->unit * s->d.q.pi_md_size);
		s->free_slots[s->nfree++] = k;
	}
	s->next = s->start;
	s->tty = isatty(2);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	s->t0 = now_s();
	progress(s, false);
	for (;;) {
		nprep = 0;
		while (!interrupted && !s->fatal && s->nfree &&
		       (!nprep || !s->npending) &&
		       /* After a refusal nobody located: alone on the device. */
		       (!s->npending || !s->pending[s->npending - 1].tries || !inflight) &&
		       next_piece(s, &off, &len, &tries, &retry)) {
			struct sslot *sl = &s->slots[s->free_slots[--s->nfree]];

			/*
			 * Pieces already prepared go to the device now, not
			 * after this one's wait: a batch held back while the
			 * rate limit sleeps would leave the disk idle.
			 */
			if (nprep && rate_due(s) > now_s()) {
				push_range(s, off, len, tries);
				s->nfree++;
				break;
			}
			if (!rate_wait(s, len)) {
				push_range(s, off, len, tries);
				s->nfree++;
				break;
			}
			sl->off = off;
			sl->len = len;
			sl->tries = tries;
			dio_req_prep_read(&sl->r, s->d.h, sl->data, len, off);
			if (s->pi && tries != TRIES_PLAIN)
				dio_req_set_pi(&sl->r, sl->md, len / s->unit * s->d.q.pi_md_size,
					       0, 0, 0);
			sl->r.cookie = sl - s->slots;
			ptrs[nprep++] = &sl->r;
			s->submitted += len;
			if (retry)
				break;		/* alone */
		}
		for (k = 0; k < nprep; k += ret) {
			ret = sys_dio_submit(s->d.ctx, ptrs + k, nprep - k);
			if (ret < 0 && errno == EAGAIN && inflight + k > 0) {
				/* The user's pinned-memory ceiling: wait for completions. */
				for (n = k; n < nprep; n++) {
					struct sslot *sl = &s->slots[ptrs[n]->cookie];

					push_range(s, sl->off, sl->len, sl->tries);
					s->submitted -= sl->len;
					s->free_slots[s->nfree++] = ptrs[n]->cookie;
				}
				nprep = k;
				break;
			}
			if (ret < 0 && device_gone(errno)) {
				/*
				 * The disk went away (its handle was revoked):
				 * stop, collect what is in flight and report
				 * what was scrubbed and found until then.
				 */
				s->fatal = errno;
				for (n = k; n < nprep; n++) {
					s->submitted -= s->slots[ptrs[n]->cookie].len;
					s->free_slots[s->nfree++] = ptrs[n]->cookie;
				}
				nprep = k;
				break;
			}
			if (ret < 0)
				die_errno(errno, "sys_dio_submit on %s", path);
		}
		inflight += nprep;
		if (!inflight)
			break;
		ret = sys_dio_collect(s->d.ctx, ptrs, 1, s->depth, NULL);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			die(EXIT_IO, errno, "sys_dio_collect");
		for (k = 0; k < (unsigned int)ret; k++) {
			complete(s, &s->slots[ptrs[k]->cookie]);
			s->free_slots[s->nfree++] = ptrs[k]->cookie;
		}
		inflight -= ret;
		progress(s, false);
	}
	progress(s, true);
	qsort(s->fails, s->nfails, sizeof(*s->fails), cmp_failure);
	if (s->src)
		repair_all(s);
	/* Failures repaired are gone; the rest keep their exit status. */
	code = s->io_errors > s->repaired[1] || s->fatal ? EXIT_IO :
	       s->pi_failures > s->repaired[0] ? EXIT_PI : interrupted ? EXIT_INTR : EXIT_OK;
	report(s, code);
	fflush(stdout);
	if (s->fatal)
		fprintf(stderr, "dioctl: scrub of %s stopped: %s (%s)\n", path,
			err_text(s->fatal), err_name(s->fatal));
	else if (code == EXIT_INTR)
		fprintf(stderr, "dioctl: scrub of %s interrupted\n", path);
	else if (code != EXIT_OK && s->src)
		fprintf(stderr, "dioctl: scrub of %s found %" PRIu64 " PI failure%s and %" PRIu64
			" I/O error%s; %" PRIu64 " repaired from %s, %" PRIu64 " left\n", path,
			s->pi_failures, s->pi_failures == 1 ? "" : "s", s->io_errors,
			s->io_errors == 1 ? "" : "s", s->repaired[0] + s->repaired[1],
			o->repair_from, s->pi_failures + s->io_errors - s->repaired[0] -
			s->repaired[1]);
	else if (code != EXIT_OK)
		fprintf(stderr, "dioctl: scrub of %s found %" PRIu64 " PI failure%s and %" PRIu64
			" I/O error%s\n", path, s->pi_failures, s->pi_failures == 1 ? "" : "s",
			s->io_errors, s->io_errors == 1 ? "" : "s");
	if (s->src)
		source_close(s->src, !interrupted && !s->fatal);
	dev_close(&s->d);
	return code;
}
