// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dioctl's helpers for the commands that reach the module: its features,
 * a device opened in a private context of its own, the size of requests,
 * and what a failed request reports (the tag and values of a PI failure,
 * who found it, its JSON).  They call dioctl_util.c and dioctl_json.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dioctl_tool.h"

/* ---- features and devices ---- */

void get_features(struct dio_features *f)
{
	if (sys_dio_features(f) < 0)
		die_ctl(errno, "cannot reach /dev/" DIO_BATCH_DEVNAME);
}

void dev_open(struct dev *d, const char *path, bool writable)
{
	memset(d, 0, sizeof(*d));
	d->path = path;
	d->fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (d->fd < 0 && (errno == EACCES || errno == EPERM)) {
		char what[512];

		snprintf(what, sizeof(what), "open %s", path);
		die_access(errno, path, what);
	}
	if (d->fd < 0)
		die(EXIT_OPEN, errno, "open %s", path);
	d->ctx = sys_dio_init(0, DIO_PRIVATE);
	if (d->ctx < 0)
		die_ctl(errno, "sys_dio_init");
	d->h = sys_dio_open(d->ctx, d->fd, 0);
	if (d->h < 0)
		die(EXIT_OPEN, errno, "sys_dio_open %s%s", path, errno == EBUSY ?
		    " (mounted, or held by md/dm or another context?)" : "");
	if (sys_dio_query(d->ctx, d->h, &d->q) < 0)
		die(EXIT_OPEN, errno, "sys_dio_query %s", path);
	d->start = d->q.part_start_bytes;
	d->has_pi = dio_pi_profile_from_query(&d->q, &d->p) == 0;
}

void dev_close(struct dev *d)
{
	sys_dio_close(d->ctx, d->h);
	sys_dio_exit(d->ctx);
	close(d->fd);
}

/* ---- request sizes ---- */

uint64_t pick_req_size(const struct dev *d, const struct dio_features *f,
		       const struct opts *o, uint64_t unit, bool pi)
{
	const struct dio_query *q = &d->q;
	uint64_t max = q->max_io_bytes / unit * unit, r;

	if (pi) {
		uint64_t pimax = (uint64_t)f->max_pi_bytes / q->pi_md_size * q->pi_interval;

		if (pimax < max)
			max = pimax / unit * unit;
	}
	if (!max)
		die(EXIT_NOTSUP, 0, "%s: the device's and the module's limits leave no room "
		    "for a request of one %" PRIu64 "-byte unit", d->path, unit);
	if (!o->req_size) {
		r = 1 << 20;
		return r > max ? max : r / unit * unit;
	}
	if (o->req_size % unit || o->req_size > max)
		usage_error("--request-size %" PRIu64 ": must be a multiple of %" PRIu64
			    " and at most %" PRIu64 " (the device's max_io_bytes%s)",
			    o->req_size, unit, max, pi ? " and the module's max_pi_bytes" : "");
	return o->req_size;
}
/* ---- failures ---- */

const char *source_name(unsigned int s)
{
	if (s == DIO_PI_SRC_DIOCTL)
		return "dioctl";
	/* An EILSEQ no one claimed: who found it is not known. */
	if (s == DIO_PI_SRC_NONE)
		return "unknown";
	return dio_pi_source_name(s);
}

const char *source_text(unsigned int s)
{
	static const char *const n[] = {
		"unknown", "user (DIO_PI_VERIFY_USER, before submission)",
		"module (dio_batch verified what it read)",
		"device (the device or block layer refused the I/O)",
	};

	if (s == DIO_PI_SRC_DIOCTL)
		return "dioctl (libdioctl's dio_pi_verify() on the tuples read)";
	return s < 4 ? n[s] : "unknown";
}

int dev_explain(const struct dev *d, const struct dio_request *r,
		struct dio_pi_error *e)
{
	if (r->result != -EILSEQ || r->pi_err_tag != DIO_PI_TAG_NONE ||
	    r->pi_err_interval == DIO_PI_INTERVAL_UNKNOWN ||
	    r->pi_err_source != DIO_PI_SRC_DEVICE || !d->has_pi) {
		*e = (struct dio_pi_error){ .interval = r->pi_err_interval,
					    .ref = r->pi_err_interval,
					    .expected = r->pi_err_expected,
					    .actual = r->pi_err_actual,
					    .tag = r->pi_err_tag };
		return 0;
	}
	return dio_pi_explain_error(d->fd, &d->p, r, e) < 0 ? errno : 0;
}

const char *explain_text(int e)
{
	switch (e) {
	case EACCES:
		return "refused by the device; this kernel's NVMe driver does not say which "
		       "tag, and reading the block raw by NVMe passthrough was refused "
		       "(Linux 6.1 allows it only with CAP_SYS_ADMIN; later kernels to "
		       "a reader of the whole namespace)";
	case ENODATA:
		return "refused by the device, yet the block reads back correct now";
	case ENOTTY:
	case 0:
		return "refused by the device; tag and values unknown on this kernel";
	default:
		return "refused by the device; tag and values unknown (the raw read "
		       "by NVMe passthrough failed)";
	}
}

void print_unchecked(FILE *out, uint64_t n)
{
	fprintf(out, "%" PRIu64 " block%s NOT checked: %s the escape app tag 0xffff (a drive "
		"may return blocks it formatted or deallocated so)", n, n == 1 ? "" : "s",
		n == 1 ? "its tuple carries" : "their tuples carry");
}

void failure_from_req(const struct dev *d, const struct dio_request *req,
		      uint64_t off, uint64_t len, struct failure *f)
{
	uint64_t iv = d->q.pi_interval;
	const struct dio_request *r = req;
	struct dio_pi_error e;
	int why = dev_explain(d, r, &e);

	memset(f, 0, sizeof(*f));
	f->err = r->result < 0 ? (int)-r->result : EIO;
	f->offset = off;
	f->length = len;
	f->interval = DIO_PI_INTERVAL_UNKNOWN;
	f->tag = DIO_PI_TAG_NONE;
	if (f->err != EILSEQ)
		return;
	f->source = r->pi_err_source;
	if (r->pi_err_interval == DIO_PI_INTERVAL_UNKNOWN || !iv)
		return;
	f->interval = r->pi_err_interval;
	f->offset = r->pi_err_interval * iv - d->start;
	f->length = iv;
	f->tag = e.tag;
	f->expected = e.expected;
	f->actual = e.actual;
	f->explain_err = why;
}

const char *failure_note(const struct failure *f)
{
	if (f->err != EILSEQ)
		return "I/O error";
	if (f->interval == DIO_PI_INTERVAL_UNKNOWN)
		return "refused by the device; no block of it failed when read again";
	if (f->tag == DIO_PI_TAG_NONE)
		return explain_text(f->explain_err);
	return NULL;
}
/* The members of a failure's JSON object: failure_json() without its braces. */
void failure_json_members(const struct failure *f)
{
	const char *note = failure_note(f);
	bool values = f->err == EILSEQ && f->tag != DIO_PI_TAG_NONE;

	j_u64("offset", f->offset);
	j_u64("length", f->length);
	if (f->interval == DIO_PI_INTERVAL_UNKNOWN)
		j_null("interval");
	else
		j_u64("interval", f->interval);
	if (values) {
		j_str("tag", dio_pi_tag_name(f->tag));
		j_hex("expected", f->expected);
		j_hex("actual", f->actual);
	} else {
		j_null("tag");
		j_null("expected");
		j_null("actual");
	}
	if (f->err == EILSEQ)
		j_str("found_by", source_name(f->source));
	else
		j_null("found_by");
	j_str("error", err_name(f->err));
	if (note)
		j_str("note", note);
	else
		j_null("note");
}

void failure_json(const struct failure *f)
{
	j_begin(NULL);
	failure_json_members(f);
	j_end();
}
