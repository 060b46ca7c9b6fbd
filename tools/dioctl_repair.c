// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dioctl scrub --repair-from SOURCE: once the scrub has read everything,
 * each failing block it listed (in ascending order of offset) is read from
 * SOURCE at the same offset, the copy is checked, and only a copy that
 * passes is written back to the device, with PI generated from it
 * (dio_pi_generate()) and forced unit access (DIO_REQ_FUA), then read back
 * with its PI and verified.  One request at a time: a scrub finds few bad
 * blocks, and each repair is ordered (copy, write, read-back).
 *
 * SOURCE is
 * - a block device (a mirror): read through dio_batch at the same offsets;
 *   when it has PI of the same interval it is read with its PI (the device
 *   checks it) and dioctl verifies the copy's tuples with dio_pi_verify():
 *   guard, reference tag (the source's own interval numbers, the device's
 *   when both are whole disks or partitions at the same start), and with
 *   --app-tag the application tag;
 * - a regular file (an image of the device): byte N of the file is byte N
 *   of the device;
 * - "-" (standard input) or any other file that cannot seek (a FIFO): a
 *   stream whose first byte is the scrub's START (--range; 0 by default).
 *   It is read forwards only, as the blocks come (ascending offsets), the
 *   bytes between them read and dropped, and after the last repair up to
 *   END, so that a producer of exactly the range ends cleanly.
 *
 * A copy without PI of its own (file, stream, a device without PI of that
 * interval) gets its tuples from dio_pi_generate(): guard over the copy,
 * reference tag the device's (seed_at()), and they are checked against
 * what the scrub learnt of the block: when the device refused it for its
 * guard and the values are known, the block's stored tuple names the data
 * that belongs there, so the copy's guard must be that stored guard
 * ("actual"); a copy whose guard is the damaged data's ("expected") is the
 * damaged data itself.  For other failures (reference or application tag,
 * an I/O error, values unknown) there is nothing of the block to check a
 * copy without PI against, and the copy is taken as it is.
 *
 * The app tag written: --app-tag when given, else the copy's own (a device
 * source with PI), else 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dioctl_tool.h"

struct source {
	const char	*path;
	int		kind;		/* SOURCE_* */
	int		fd;
	struct dev	d;		/* SOURCE_DEVICE */
	bool		pi;		/* read with PI, verified by dioctl */
	uint64_t	pos;		/* SOURCE_STREAM: device offset of its next byte */
	uint64_t	end;		/* SOURCE_STREAM: the scrub's END */
	uint64_t	size;		/* SOURCE_FILE: bytes */
	unsigned char	*data, *md, *smd, *scratch, *rb, *rbmd;	/* smd: the source's tuples */
	uint64_t	max;		/* bytes the buffers hold */
};

enum { SOURCE_DEVICE, SOURCE_FILE, SOURCE_STREAM };

static const char *const kind_names[] = { "device", "file", "stream" };

const char *source_kind(const struct source *src)
{
	return kind_names[src->kind];
}

static const char *const outcome_names[] = {
	[REPAIR_NONE] = "none",
	[REPAIR_DONE] = "repaired",
	[REPAIR_WOULD] = "would-repair",
	[REPAIR_COPY_BAD] = "copy-bad",
	[REPAIR_SOURCE_ERROR] = "source-error",
	[REPAIR_WRITE_FAILED] = "write-failed",
	[REPAIR_READBACK_FAILED] = "read-back-failed",
	[REPAIR_NOT_TRIED] = "not-tried",
};

const char *repair_outcome_name(int outcome)
{
	return outcome_names[outcome];
}

static const char *const outcome_texts[] = {
	[REPAIR_NONE] = "",
	[REPAIR_DONE] = "repaired",
	[REPAIR_WOULD] = "would be repaired (dry run)",
	[REPAIR_COPY_BAD] = "not repaired: the copy is bad too",
	[REPAIR_SOURCE_ERROR] = "not repaired: the copy could not be read",
	[REPAIR_WRITE_FAILED] = "not repaired: the write failed",
	[REPAIR_READBACK_FAILED] = "not repaired: the read-back failed",
	[REPAIR_NOT_TRIED] = "not repaired",
};

const char *repair_outcome_text(int outcome)
{
	return outcome_texts[outcome];
}

void repair_json(const struct repair_result *r)
{
	j_begin("repair");
	j_str("outcome", repair_outcome_name(r->outcome));
	if (r->why[0])
		j_str("reason", r->why);
	else
		j_null("reason");
	if (r->err)
		j_str("error", err_name(r->err));
	else
		j_null("error");
	j_end();
}

static int __attribute__((format(printf, 4, 5)))
set(struct repair_result *res, int outcome, int err, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	res->outcome = outcome;
	res->err = err;
	res->why[0] = 0;
	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(res->why, sizeof(res->why), fmt, ap);
		va_end(ap);
	}
	n = strlen(res->why);
	if (err && err != EILSEQ && n < sizeof(res->why))
		snprintf(res->why + n, sizeof(res->why) - n, "%s%s (%s)", n ? ": " : "",
			 err_text(err), err_name(err));
	return outcome;
}

struct source *source_open(const char *path, const struct dev *d, bool pi, uint64_t unit,
			   uint64_t max, uint64_t start, uint64_t end)
{
	struct source *src = calloc(1, sizeof(*src));
	struct stat st;

	if (!src)
		die(EXIT_IO, ENOMEM, "--repair-from");
	src->path = path;
	src->max = max;
	src->pos = start;
	src->end = end;
	if (!strcmp(path, "-")) {
		src->kind = SOURCE_STREAM;
		src->fd = 0;
	} else {
		if (stat(path, &st))
			die(EXIT_OPEN, errno, "--repair-from %s", path);
		if (S_ISDIR(st.st_mode))
			die(EXIT_OPEN, EISDIR, "--repair-from %s", path);
		if (S_ISBLK(st.st_mode)) {
			src->kind = SOURCE_DEVICE;
			dev_open(&src->d, path, false);
			src->fd = -1;
			src->size = src->d.q.capacity;
			if (unit % src->d.q.logical_block_size)
				die(EXIT_NOTSUP, 0, "--repair-from %s: its %u-byte blocks do not "
				    "divide %s's %" PRIu64 "-byte ones", path,
				    src->d.q.logical_block_size, d->path, unit);
			src->pi = pi && src->d.has_pi && src->d.q.pi_interval == unit;
			if (src->pi)
				src->smd = xalloc(max / unit * src->d.q.pi_md_size);
		} else {
			src->fd = open(path, O_RDONLY | O_CLOEXEC);
			if (src->fd < 0)
				die(EXIT_OPEN, errno, "--repair-from: open %s", path);
			src->kind = S_ISREG(st.st_mode) ? SOURCE_FILE : SOURCE_STREAM;
			src->size = st.st_size;
		}
	}
	src->data = xalloc(max);
	src->rb = xalloc(max);
	src->scratch = xalloc(1 << 16);
	if (pi) {
		src->md = xalloc(max / unit * d->q.pi_md_size);
		src->rbmd = xalloc(max / unit * d->q.pi_md_size);
	}
	return src;
}

/* Submit @r on @d and wait for it; the request's errno, 0 when it did it all. */
static int run_one(const struct dev *d, struct dio_request *r, uint64_t len)
{
	struct dio_request *rp = r;
	int ret;

	if (sys_dio_submit(d->ctx, &rp, 1) != 1)
		return errno ? errno : EIO;
	do {
		ret = sys_dio_wait(d->ctx, &rp, 1, NULL);
	} while (ret < 0 && errno == EINTR);
	if (ret != 1)
		die(EXIT_IO, ret < 0 ? errno : EIO, "sys_dio_wait");
	if (r->result == (int64_t)len)
		return 0;
	return r->result < 0 ? (int)-r->result : EIO;
}

/* Read and drop stream bytes until its position is @to. */
static int stream_skip(struct source *src, uint64_t to, struct repair_result *res)
{
	while (src->pos < to) {
		uint64_t want = to - src->pos < (1 << 16) ? to - src->pos : (1 << 16);
		ssize_t n = read(src->fd, src->scratch, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return set(res, REPAIR_SOURCE_ERROR, errno, "reading %s", src->path);
		if (!n)
			return set(res, REPAIR_SOURCE_ERROR, 0, "%s ended at byte %" PRIu64
				   " of the device", src->path, src->pos);
		src->pos += n;
	}
	return 0;
}

/* The guard of the tuple at @t, as dio_pi_error reports guards. */
static uint64_t guard_of(const struct dev *d, const unsigned char *md, uint64_t k)
{
	const unsigned char *t = md + k * d->q.pi_md_size + d->q.pi_offset;
	int n = d->q.pi_tuple_size == 16 ? 8 : 2;
	uint64_t v = 0;

	while (n--)
		v = v << 8 | *t++;
	return v;
}

static uint16_t app_of(const struct dev *d, const unsigned char *md, uint64_t k)
{
	const unsigned char *t = md + k * d->q.pi_md_size + d->q.pi_offset +
				 (d->q.pi_tuple_size == 16 ? 8 : 2);

	return (uint16_t)(t[0] << 8 | t[1]);
}

/*
 * Read the copy of @len bytes at @off into src->data, and check it; for a
 * device source with PI, its own tuples into src->smd.  0, or the outcome.
 */
static int read_copy(struct source *src, const struct dev *d, const struct opts *o,
		     uint64_t off, uint64_t len, struct repair_result *res)
{
	struct dio_request r;
	struct dio_pi_error e;
	struct failure f;
	ssize_t n;
	uint64_t got, unit;
	int err;

	switch (src->kind) {
	case SOURCE_DEVICE:
		if (off + len > src->size)
			return set(res, REPAIR_SOURCE_ERROR, 0, "%s ends at byte %" PRIu64,
				   src->path, src->size);
		dio_req_prep_read(&r, src->d.h, src->data, len, off);
		unit = src->d.q.pi_interval;
		if (src->pi)
			dio_req_set_pi(&r, src->smd, len / unit * src->d.q.pi_md_size, 0, 0, 0);
		err = run_one(&src->d, &r, len);
		if (err == EILSEQ) {
			failure_from_req(&src->d, &r, off, len, &f);
			if (f.tag != DIO_PI_TAG_NONE)
				return set(res, REPAIR_COPY_BAD, EILSEQ, "%s refused its copy: "
					   "%s tag of interval %" PRIu64 ", expected %#" PRIx64
					   ", actual %#" PRIx64, src->path, dio_pi_tag_name(f.tag),
					   f.interval, f.expected, f.actual);
			return set(res, REPAIR_COPY_BAD, EILSEQ, "%s refused its copy: PI check "
				   "failed", src->path);
		}
		if (err)
			return set(res, REPAIR_SOURCE_ERROR, err, "reading %s", src->path);
		if (src->pi) {
			struct dio_pi_params a = {
				.seed = dio_pi_seed(&src->d.q, off),
				.app_tag = o->app_tag < 0 ? 0 : o->app_tag,
				.app_mask = o->app_mask,
				.chk_flags = DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG |
					     (o->app_tag >= 0 ? DIO_PI_CHK_APPTAG : 0),
			};

			if (dio_pi_verify(&src->d.p, src->data, len, src->smd, &a, &e)) {
				if (errno != EILSEQ)
					die(EXIT_IO, errno, "dio_pi_verify");
				return set(res, REPAIR_COPY_BAD, EILSEQ, "the copy in %s fails "
					   "verification: %s tag of interval %" PRIu64 ", expected %#"
					   PRIx64 ", actual %#" PRIx64, src->path,
					   dio_pi_tag_name(e.tag), e.ref, e.expected, e.actual);
			}
		}
		return 0;
	case SOURCE_FILE:
		for (got = 0; got < len; got += n) {
			n = pread(src->fd, src->data + got, len - got, off + got);
			if (n < 0 && errno == EINTR) {
				n = 0;
				continue;
			}
			if (n < 0)
				return set(res, REPAIR_SOURCE_ERROR, errno, "reading %s", src->path);
			if (!n)
				return set(res, REPAIR_SOURCE_ERROR, 0, "%s ends at byte %" PRIu64,
					   src->path, off + got);
		}
		return 0;
	default:
		if (off < src->pos)
			return set(res, REPAIR_SOURCE_ERROR, 0, "%s is a stream, already read "
				   "past byte %" PRIu64 " of the device", src->path, off);
		if (stream_skip(src, off, res))
			return res->outcome;
		for (got = 0; got < len; got += n) {
			n = read(src->fd, src->data + got, len - got);
			if (n < 0 && errno == EINTR) {
				n = 0;
				continue;
			}
			if (n < 0)
				return set(res, REPAIR_SOURCE_ERROR, errno, "reading %s", src->path);
			if (!n) {
				src->pos += got;
				return set(res, REPAIR_SOURCE_ERROR, 0, "%s ended at byte %" PRIu64
					   " of the device", src->path, src->pos);
			}
		}
		src->pos += len;
		return 0;
	}
}

void repair_one(struct source *src, const struct dev *d, bool pi, const struct opts *o,
		const struct failure *f, struct repair_result *res)
{
	uint64_t off = f->offset, len = f->length, unit = pi ? d->q.pi_interval :
			d->q.logical_block_size, nb = len / unit, k;
	struct dio_pi_params a = { .app_mask = 0xffff };
	struct dio_pi_error e;
	struct dio_request r;
	size_t mdlen = pi ? nb * d->q.pi_md_size : 0;
	int err;

	memset(res, 0, sizeof(*res));
	if (len > src->max || len % unit)
		die(EXIT_IO, EINVAL, "--repair-from: a failure of %" PRIu64 " bytes", len);
	if (read_copy(src, d, o, off, len, res))
		return;
	if (pi) {
		/* The caller's PI for the copy: one tuple per interval. */
		for (k = 0; k < nb; k++) {
			a.seed = dio_pi_seed(&d->q, off) + k;
			a.app_tag = o->app_tag >= 0 ? o->app_tag :
				    src->pi ? app_of(&src->d, src->smd, k) : 0;
			if (dio_pi_generate(&d->p, src->data + k * unit, unit,
					    src->md + k * d->q.pi_md_size, &a) < 0)
				die(EXIT_IO, errno, "dio_pi_generate");
		}
		/*
		 * A copy without PI of its own, against the tuple the device
		 * holds for a block it refused for its guard.
		 */
		if (!src->pi && f->err == EILSEQ && f->tag == DIO_PI_TAG_GUARD && nb == 1) {
			uint64_t g = guard_of(d, src->md, 0);

			if (g == f->expected && g != f->actual) {
				set(res, REPAIR_COPY_BAD, 0, "the copy in %s holds the damaged data "
				    "(its guard %#" PRIx64 " is the damaged block's)", src->path, g);
				return;
			}
			if (g != f->actual) {
				set(res, REPAIR_COPY_BAD, 0, "the copy in %s does not match the PI "
				    "the device holds for the block: its guard is %#" PRIx64
				    ", the stored one %#" PRIx64, src->path, g, f->actual);
				return;
			}
		}
	}
	if (o->dry_run) {
		set(res, REPAIR_WOULD, 0, NULL);
		return;
	}
	dio_req_prep_write(&r, d->h, src->data, len, off);
	r.flags |= DIO_REQ_FUA;
	if (pi)
		dio_req_set_pi(&r, src->md, mdlen, 0, 0, 0);
	err = run_one(d, &r, len);
	if (err) {
		set(res, REPAIR_WRITE_FAILED, err, err == EILSEQ ? "the device refused the "
		    "PI written" : "writing %s", d->path);
		return;
	}
	memset(src->rb, 0, len);
	dio_req_prep_read(&r, d->h, src->rb, len, off);
	if (pi) {
		memset(src->rbmd, 0, mdlen);
		dio_req_set_pi(&r, src->rbmd, mdlen, 0, 0, 0);
	}
	err = run_one(d, &r, len);
	if (err) {
		set(res, REPAIR_READBACK_FAILED, err, err == EILSEQ ? "the device refused the "
		    "block read back" : "reading %s back", d->path);
		return;
	}
	if (pi) {
		a = (struct dio_pi_params){
			.seed = dio_pi_seed(&d->q, off),
			.app_mask = 0xffff,
			.chk_flags = DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG,
		};
		if (dio_pi_verify(&d->p, src->rb, len, src->rbmd, &a, &e)) {
			if (errno != EILSEQ)
				die(EXIT_IO, errno, "dio_pi_verify");
			set(res, REPAIR_READBACK_FAILED, EILSEQ, "read back: %s tag of interval %"
			    PRIu64 ", expected %#" PRIx64 ", actual %#" PRIx64,
			    dio_pi_tag_name(e.tag), e.ref, e.expected, e.actual);
			return;
		}
		for (k = 0; k < nb; k++) {
			size_t at = k * d->q.pi_md_size + d->q.pi_offset;

			if (memcmp(src->md + at, src->rbmd + at, d->q.pi_tuple_size)) {
				set(res, REPAIR_READBACK_FAILED, 0, "read back: the tuple of "
				    "interval %" PRIu64 " is not the one written",
				    dio_pi_seed(&d->q, off) + k);
				return;
			}
		}
	}
	if (memcmp(src->data, src->rb, len)) {
		set(res, REPAIR_READBACK_FAILED, 0, "read back: the data is not the copy written");
		return;
	}
	set(res, REPAIR_DONE, 0, NULL);
}

void source_close(struct source *src, bool drain)
{
	struct repair_result res;

	/* A stream: read up to END, so that a producer of the range ends cleanly. */
	if (drain && src->kind == SOURCE_STREAM && src->pos < src->end)
		stream_skip(src, src->end, &res);
	if (src->kind == SOURCE_DEVICE)
		dev_close(&src->d);
	else if (src->fd > 0)
		close(src->fd);
	free(src->data);
	free(src->rb);
	free(src->scratch);
	free(src->md);
	free(src->smd);
	free(src->rbmd);
	free(src);
}
