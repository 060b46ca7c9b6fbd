/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The ABI rules of uapi/linux/dio_batch.h's preamble as a table: a row per
 * command (and one for struct dio_request, which SUBMIT reads), and the
 * cases that check every rule of the preamble against the loaded module
 * with the errno the header promises.  t_abi runs them from a 64-bit
 * program, compat32 --abi from a 32-bit one (compat_ioctl), and checks
 * that every DIO_IOC_*, *_SIZE_VER0 and *_F_ALL the header defines has its
 * row here.
 *
 * Plain C and raw ioctls (no cmocka, no libdioctl), for both programs.  A
 * failing case prints one line ("# abi64 DIO_IOC_OPEN: size 40, tail byte
 * 39 set: got 0, want -E2BIG") and is counted.
 *
 * A row gives the struct's layout as the rules see it (reserved and
 * padding bytes, flag fields and their masks, fields that are only
 * output), how to fill a valid struct with the state it needs, and how to
 * tell the valid answer and undo what the call did (settle()).  Each case
 * takes a valid struct, breaks one rule, and expects the rule's errno; the
 * valid answer where the rule says the struct is accepted.
 */
#ifndef DIO_ABI_RULES_H
#define DIO_ABI_RULES_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/dio_batch.h>

/* A case's expected answer: the row's valid one (its settle() knows it). */
#define ABI_OK		1L
/* What the I/O of the rows reads and writes: the start of the device. */
#define ABI_IO_BYTES	4096U

struct abi_env {
	const char *tag;	/* "abi64" or "abi32", in every message */
	const char *subject;	/* the row being run */
	int ctl;		/* /dev/dio_batch */
	int ctx;		/* a private context */
	int dev;		/* the block device, O_RDWR */
	int h;			/* its handle; the environment holds one reference */
	size_t page;
	uint8_t *arena;		/* two pages: each case's argument */
	uint8_t *shadow;	/* the arena past the row's struct, before a call */
	void *data;		/* ABI_IO_BYTES of anonymous memory, page aligned */
	struct dio_request req;	/* the request SUBMIT queues, WAIT and COLLECT find */
	uint64_t addr;		/* a one-entry array of request addresses */
	struct dio_fixed_buf fb;	/* REGISTER's one-entry array */
	bool setup_failed;	/* fill() could not make the state its call needs */
	unsigned int cases, failed;
};

/* A field the rules name: a reserved or padding field, or an output. */
struct abi_span {
	const char *name;
	size_t off, len;
};

/* A flags field and the *_F_ALL mask the header gives it (0: none yet). */
struct abi_flag {
	const char *name;
	const char *mask_name;	/* NULL: the field takes no flag yet */
	size_t off, len;
	uint32_t all;
};

struct abi_subject {
	const char *name;	/* the command, or "dio_request" */
	unsigned long cmd;	/* 0: struct dio_request, through SUBMIT */
	bool on_ctx;		/* a context descriptor's, or the control device's */
	bool output_only;	/* only @size is read (the header's exception) */
	const char *ver0_name;
	size_t ksize, ver0;
	const struct abi_span *zero;	/* must be zero: -EINVAL; {NULL} ends */
	const struct abi_span *out;	/* not read; {NULL} ends */
	const struct abi_flag *flags;	/* bits outside @all: -EINVAL */
	/* A valid struct at @arg (zeroed, two pages), and the state it needs. */
	void (*fill)(struct abi_env *e, void *arg);
	/* Was @ret the valid answer?  Undo the call's work, or fill()'s. */
	bool (*settle)(struct abi_env *e, long ret, void *arg);
};

#define ABI_FIELD(t, f)	{ #f, offsetof(struct t, f), sizeof(((struct t *)0)->f) }
#define ABI_FROM(t, f, to, what) \
	{ what, offsetof(struct t, f), offsetof(struct t, to) - offsetof(struct t, f) }
#define ABI_END		{ NULL, 0, 0 }
#define ABI_CMD(c)	.name = #c, .cmd = (c)
#define ABI_VER0(t, v)	.ksize = sizeof(struct t), .ver0 = (v), .ver0_name = #v

static long abi_ioctl(int fd, unsigned long cmd, void *arg)
{
	long ret = ioctl(fd, cmd, arg);

	return ret < 0 ? -errno : ret;
}

static const char *abi_errname(long ret, char *buf, size_t len)
{
	const char *n = ret < 0 ? strerrorname_np(-ret) : NULL;

	if (n)
		snprintf(buf, len, "-%s", n);
	else
		snprintf(buf, len, "%ld", ret);
	return buf;
}

static void abi_prep_io(struct abi_env *e, struct dio_request *r, int op)
{
	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	r->opcode = op;
	r->handle = e->h;
	r->buf = (uintptr_t)e->data;
	r->len = ABI_IO_BYTES;
}

/* SUBMIT of the one request at @r: SUBMIT's answer. */
static long abi_submit(struct abi_env *e, void *r)
{
	struct dio_submit s = {
		.size = sizeof(s),
		.nr = 1,
		.reqs = (uintptr_t)&e->addr,
	};

	e->addr = (uintptr_t)r;
	return abi_ioctl(e->ctx, DIO_IOC_SUBMIT, &s);
}

/* WAIT for the request at @r: 1, or -ENOENT when it is not in flight. */
static long abi_reap(struct abi_env *e, void *r)
{
	uint64_t a = (uintptr_t)r;
	struct dio_wait w = {
		.size = sizeof(w),
		.nr = 1,
		.reqs = (uintptr_t)&a,
		.timeout_ns = DIO_WAIT_FOREVER,
	};

	return abi_ioctl(e->ctx, DIO_IOC_WAIT, &w);
}

/* One more reference to the handle (OPEN); the handle or -errno. */
static long abi_open_ref(struct abi_env *e)
{
	struct dio_open o = { .size = sizeof(o), .fd = e->dev };

	return abi_ioctl(e->ctx, DIO_IOC_OPEN, &o);
}

static long abi_close_ref(struct abi_env *e, long h)
{
	struct dio_close c = { .size = sizeof(c), .handle = h };

	return abi_ioctl(e->ctx, DIO_IOC_CLOSE, &c);
}

static long abi_register(struct abi_env *e)
{
	struct dio_register r = {
		.size = sizeof(r),
		.nr = 1,
		.bufs = (uintptr_t)&e->fb,
	};

	e->fb.addr = (uintptr_t)e->data;
	e->fb.len = ABI_IO_BYTES;
	return abi_ioctl(e->ctx, DIO_IOC_REGISTER, &r);
}

static long abi_unregister(struct abi_env *e)
{
	struct dio_register r = { .size = sizeof(r) };

	return abi_ioctl(e->ctx, DIO_IOC_UNREGISTER, &r);
}

/* ---- the rows: a valid struct, and its valid answer ---- */

static void abi_features_fill(struct abi_env *e, void *arg)
{
	struct dio_features *f = arg;

	f->size = sizeof(*f);
}

/* Output-only: the kernel writes its struct, zero in the reserved fields. */
static bool abi_features_settle(struct abi_env *e, long ret, void *arg)
{
	struct dio_features *f = arg;

	return ret == 0 && f->size == sizeof(*f) &&
	       f->abi_version == DIO_BATCH_ABI_VERSION &&
	       f->features == DIO_FEAT_ALL && !f->reserved0 && !f->reserved[0];
}

static void abi_init_fill(struct abi_env *e, void *arg)
{
	struct dio_init *in = arg;

	in->size = sizeof(*in);
	in->flags = DIO_PRIVATE;
}

static bool abi_init_settle(struct abi_env *e, long ret, void *arg)
{
	if (ret < 0)
		return false;
	close(ret);
	return true;
}

static void abi_open_fill(struct abi_env *e, void *arg)
{
	struct dio_open *o = arg;

	o->size = sizeof(*o);
	o->fd = e->dev;
}

/* The environment's handle again, with one more reference: dropped. */
static bool abi_open_settle(struct abi_env *e, long ret, void *arg)
{
	struct dio_open *o = arg;

	if (ret < 0)
		return false;
	abi_close_ref(e, ret);
	return ret == e->h && o->handle == (uint32_t)e->h;
}

static void abi_close_fill(struct abi_env *e, void *arg)
{
	struct dio_close *c = arg;

	e->setup_failed = abi_open_ref(e) != e->h;
	c->size = sizeof(*c);
	c->handle = e->h;
}

/* The reference fill() took is dropped, by the call or here. */
static bool abi_close_settle(struct abi_env *e, long ret, void *arg)
{
	if (ret == 0)
		return true;
	if (!e->setup_failed)
		abi_close_ref(e, e->h);
	return false;
}

static void abi_query_fill(struct abi_env *e, void *arg)
{
	struct dio_query *q = arg;

	q->size = sizeof(*q);
	q->handle = e->h;
}

static bool abi_query_settle(struct abi_env *e, long ret, void *arg)
{
	struct dio_query *q = arg;

	/* The environment's device is a whole disk: it starts at 0. */
	return ret == 0 && q->size == sizeof(*q) && q->handle == (uint32_t)e->h &&
	       q->logical_block_size >= 512 && q->capacity >= ABI_IO_BYTES &&
	       q->part_start_bytes == 0 && !q->reserved[0] && !q->reserved[1];
}

static void abi_stat_fill(struct abi_env *e, void *arg)
{
	struct dio_stat *st = arg;

	st->size = sizeof(*st);
}

static bool abi_stat_settle(struct abi_env *e, long ret, void *arg)
{
	struct dio_stat *st = arg;

	return ret == 0 && st->size == sizeof(*st) &&
	       st->flags == DIO_STAT_PRIVATE && st->nr_descriptors == 1 &&
	       st->nr_handles == 1 && st->mode == 0600 && !st->reserved[3];
}

/* SUBMIT: one read of the device's first block into e->data. */
static void abi_submit_fill(struct abi_env *e, void *arg)
{
	struct dio_submit *s = arg;

	abi_prep_io(e, &e->req, DIO_OP_READ);
	e->addr = (uintptr_t)&e->req;
	s->size = sizeof(*s);
	s->nr = 1;
	s->reqs = (uintptr_t)&e->addr;
}

static bool abi_submit_settle(struct abi_env *e, long ret, void *arg)
{
	long r = abi_reap(e, &e->req);

	return ret == 1 && r == 1 && e->req.result == ABI_IO_BYTES;
}

/* WAIT and COLLECT: e->req in flight. */
static void abi_inflight(struct abi_env *e)
{
	abi_prep_io(e, &e->req, DIO_OP_READ);
	e->setup_failed = abi_submit(e, &e->req) != 1;
}

static void abi_wait_fill(struct abi_env *e, void *arg)
{
	struct dio_wait *w = arg;

	abi_inflight(e);
	e->addr = (uintptr_t)&e->req;
	w->size = sizeof(*w);
	w->nr = 1;
	w->reqs = (uintptr_t)&e->addr;
	w->timeout_ns = DIO_WAIT_FOREVER;
}

static bool abi_wait_settle(struct abi_env *e, long ret, void *arg)
{
	if (ret == 1)
		return e->req.result == ABI_IO_BYTES;
	abi_reap(e, &e->req);
	return false;
}

static void abi_collect_fill(struct abi_env *e, void *arg)
{
	struct dio_wait *w = arg;

	abi_inflight(e);
	e->addr = 0;
	w->size = sizeof(*w);
	w->nr = 1;
	w->min_nr = 1;
	w->reqs = (uintptr_t)&e->addr;
	w->timeout_ns = DIO_WAIT_FOREVER;
}

static bool abi_collect_settle(struct abi_env *e, long ret, void *arg)
{
	if (ret == 1)
		return e->addr == (uintptr_t)&e->req &&
		       e->req.result == ABI_IO_BYTES;
	abi_reap(e, &e->req);
	return false;
}

static void abi_register_fill(struct abi_env *e, void *arg)
{
	struct dio_register *r = arg;

	e->fb.addr = (uintptr_t)e->data;
	e->fb.len = ABI_IO_BYTES;
	r->size = sizeof(*r);
	r->nr = 1;
	r->bufs = (uintptr_t)&e->fb;
}

static bool abi_register_settle(struct abi_env *e, long ret, void *arg)
{
	if (ret != 0)
		return false;
	return abi_unregister(e) == 0;
}

static void abi_unregister_fill(struct abi_env *e, void *arg)
{
	struct dio_register *r = arg;

	e->setup_failed = abi_register(e) != 0;
	r->size = sizeof(*r);
}

static bool abi_unregister_settle(struct abi_env *e, long ret, void *arg)
{
	if (ret == 0)
		return true;
	abi_unregister(e);
	return false;
}

static void abi_counters_fill(struct abi_env *e, void *arg)
{
	struct dio_counters *c = arg;

	c->size = sizeof(*c);
	c->handle = e->h;
}

/* The environment wrote the first block through its handle. */
static bool abi_counters_settle(struct abi_env *e, long ret, void *arg)
{
	struct dio_counters *c = arg;

	return ret == 0 && c->size == sizeof(*c) && c->handle == (uint32_t)e->h &&
	       c->flags == 0 && c->writes >= 1 && c->write_bytes >= ABI_IO_BYTES &&
	       !c->pad && !c->reserved[0] && !c->reserved[3];
}

/* struct dio_request, which SUBMIT reads: a read, the row's argument. */
static void abi_request_fill(struct abi_env *e, void *arg)
{
	abi_prep_io(e, arg, DIO_OP_READ);
}

static bool abi_request_settle(struct abi_env *e, long ret, void *arg)
{
	struct dio_request *r = arg;
	long w = abi_reap(e, r);

	return ret == 1 && w == 1 && r->result == ABI_IO_BYTES &&
	       r->pi_err_tag == DIO_PI_TAG_NONE;
}

/* ---- the table ---- */

static const struct abi_span abi_features_zero[] = {
	ABI_FIELD(dio_features, reserved0),
	ABI_FIELD(dio_features, reserved),
	ABI_END
};

static const struct abi_span abi_features_out[] = {
	ABI_FROM(dio_features, abi_version, reserved0, "abi_version..max_fixed_bufs"),
	ABI_FIELD(dio_features, max_fixed_buf_bytes),
	ABI_END
};

static const struct abi_span abi_init_zero[] = {
	ABI_FIELD(dio_init, reserved0),
	ABI_FIELD(dio_init, reserved),
	ABI_END
};

static const struct abi_flag abi_init_flags[] = {
	{ "flags", "DIO_INIT_F_ALL", offsetof(struct dio_init, flags), 4,
	  DIO_INIT_F_ALL },
	{ NULL, NULL, 0, 0, 0 }
};

/* @handle is "out:", but must be zero on input: the header's exception. */
static const struct abi_span abi_open_zero[] = {
	ABI_FIELD(dio_open, reserved),
	ABI_FIELD(dio_open, handle),
	ABI_END
};

static const struct abi_flag abi_open_flags[] = {
	{ "flags", "DIO_OPEN_F_ALL", offsetof(struct dio_open, flags), 4,
	  DIO_OPEN_F_ALL },
	{ NULL, NULL, 0, 0, 0 }
};

static const struct abi_span abi_close_zero[] = {
	ABI_FIELD(dio_close, reserved),
	ABI_END
};

static const struct abi_span abi_query_zero[] = {
	ABI_FIELD(dio_query, reserved),
	ABI_END
};

static const struct abi_span abi_query_out[] = {
	/* part_start_bytes (ABI 4) was reserved: now output, not read. */
	ABI_FROM(dio_query, logical_block_size, reserved,
		 "logical_block_size..part_start_bytes"),
	ABI_END
};

static const struct abi_span abi_stat_zero[] = {
	ABI_FIELD(dio_stat, reserved),
	ABI_END
};

static const struct abi_span abi_stat_out[] = {
	ABI_FROM(dio_stat, flags, reserved, "flags..nr_handles"),
	ABI_END
};

static const struct abi_span abi_submit_zero[] = {
	ABI_FIELD(dio_submit, reserved),
	ABI_END
};

static const struct abi_span abi_wait_zero[] = {
	ABI_FIELD(dio_wait, pad),
	ABI_FIELD(dio_wait, reserved),
	ABI_END
};

static const struct abi_span abi_register_zero[] = {
	ABI_FIELD(dio_register, pad),
	ABI_FIELD(dio_register, reserved),
	ABI_END
};

/* "zero (none defined yet)": no bit is known. */
static const struct abi_flag abi_register_flags[] = {
	{ "flags", NULL, offsetof(struct dio_register, flags), 4, 0 },
	{ NULL, NULL, 0, 0, 0 }
};

static const struct abi_span abi_counters_zero[] = {
	ABI_FIELD(dio_counters, pad),
	ABI_FIELD(dio_counters, reserved),
	ABI_END
};

static const struct abi_span abi_counters_out[] = {
	ABI_FROM(dio_counters, reads, reserved, "reads..pi_by_device"),
	ABI_END
};

static const struct abi_flag abi_counters_flags[] = {
	{ "flags", "DIO_COUNTERS_F_ALL", offsetof(struct dio_counters, flags), 4,
	  DIO_COUNTERS_F_ALL },
	{ NULL, NULL, 0, 0, 0 }
};

static const struct abi_span abi_request_zero[] = {
	ABI_FIELD(dio_request, pad0),
	ABI_FIELD(dio_request, pad2),
	ABI_FIELD(dio_request, pad3),
	ABI_FIELD(dio_request, reserved),
	ABI_END
};

static const struct abi_span abi_request_out[] = {
	ABI_FIELD(dio_request, result),
	ABI_FIELD(dio_request, pi_err_interval),
	ABI_FIELD(dio_request, pi_err_expected),
	ABI_FIELD(dio_request, pi_err_actual),
	ABI_FIELD(dio_request, pi_err_tag),
	ABI_FIELD(dio_request, pi_err_source),
	ABI_END
};

static const struct abi_flag abi_request_flags[] = {
	{ "flags", "DIO_REQ_F_ALL", offsetof(struct dio_request, flags), 2,
	  DIO_REQ_F_ALL },
	{ "pi_flags", "DIO_PI_F_ALL", offsetof(struct dio_request, pi_flags), 2,
	  DIO_PI_F_ALL },
	{ NULL, NULL, 0, 0, 0 }
};

static const struct abi_span abi_none[] = { ABI_END };
static const struct abi_flag abi_no_flags[] = { { NULL, NULL, 0, 0, 0 } };

/*
 * Every command of the header, and struct dio_request.  A command added
 * to the header without a row here fails t_abi's first test; one the
 * module answers without a row fails the sweep of unknown numbers.
 */
static const struct abi_subject abi_subjects[] = {
	{
		ABI_CMD(DIO_IOC_FEATURES), .on_ctx = false, .output_only = true,
		ABI_VER0(dio_features, DIO_FEATURES_SIZE_VER0),
		.zero = abi_features_zero, .out = abi_features_out,
		.flags = abi_no_flags,
		.fill = abi_features_fill, .settle = abi_features_settle,
	}, {
		ABI_CMD(DIO_IOC_INIT), .on_ctx = false,
		ABI_VER0(dio_init, DIO_INIT_SIZE_VER0),
		.zero = abi_init_zero, .out = abi_none, .flags = abi_init_flags,
		.fill = abi_init_fill, .settle = abi_init_settle,
	}, {
		ABI_CMD(DIO_IOC_OPEN), .on_ctx = true,
		ABI_VER0(dio_open, DIO_OPEN_SIZE_VER0),
		.zero = abi_open_zero, .out = abi_none, .flags = abi_open_flags,
		.fill = abi_open_fill, .settle = abi_open_settle,
	}, {
		ABI_CMD(DIO_IOC_CLOSE), .on_ctx = true,
		ABI_VER0(dio_close, DIO_CLOSE_SIZE_VER0),
		.zero = abi_close_zero, .out = abi_none, .flags = abi_no_flags,
		.fill = abi_close_fill, .settle = abi_close_settle,
	}, {
		ABI_CMD(DIO_IOC_QUERY), .on_ctx = true,
		ABI_VER0(dio_query, DIO_QUERY_SIZE_VER0),
		.zero = abi_query_zero, .out = abi_query_out,
		.flags = abi_no_flags,
		.fill = abi_query_fill, .settle = abi_query_settle,
	}, {
		ABI_CMD(DIO_IOC_STAT), .on_ctx = true,
		ABI_VER0(dio_stat, DIO_STAT_SIZE_VER0),
		.zero = abi_stat_zero, .out = abi_stat_out,
		.flags = abi_no_flags,
		.fill = abi_stat_fill, .settle = abi_stat_settle,
	}, {
		ABI_CMD(DIO_IOC_SUBMIT), .on_ctx = true,
		ABI_VER0(dio_submit, DIO_SUBMIT_SIZE_VER0),
		.zero = abi_submit_zero, .out = abi_none, .flags = abi_no_flags,
		.fill = abi_submit_fill, .settle = abi_submit_settle,
	}, {
		ABI_CMD(DIO_IOC_WAIT), .on_ctx = true,
		ABI_VER0(dio_wait, DIO_WAIT_SIZE_VER0),
		.zero = abi_wait_zero, .out = abi_none, .flags = abi_no_flags,
		.fill = abi_wait_fill, .settle = abi_wait_settle,
	}, {
		ABI_CMD(DIO_IOC_COLLECT), .on_ctx = true,
		ABI_VER0(dio_wait, DIO_WAIT_SIZE_VER0),
		.zero = abi_wait_zero, .out = abi_none, .flags = abi_no_flags,
		.fill = abi_collect_fill, .settle = abi_collect_settle,
	}, {
		ABI_CMD(DIO_IOC_REGISTER), .on_ctx = true,
		ABI_VER0(dio_register, DIO_REGISTER_SIZE_VER0),
		.zero = abi_register_zero, .out = abi_none,
		.flags = abi_register_flags,
		.fill = abi_register_fill, .settle = abi_register_settle,
	}, {
		ABI_CMD(DIO_IOC_UNREGISTER), .on_ctx = true,
		ABI_VER0(dio_register, DIO_REGISTER_SIZE_VER0),
		.zero = abi_register_zero, .out = abi_none,
		.flags = abi_register_flags,
		.fill = abi_unregister_fill, .settle = abi_unregister_settle,
	}, {
		ABI_CMD(DIO_IOC_COUNTERS), .on_ctx = true,
		ABI_VER0(dio_counters, DIO_COUNTERS_SIZE_VER0),
		.zero = abi_counters_zero, .out = abi_counters_out,
		.flags = abi_counters_flags,
		.fill = abi_counters_fill, .settle = abi_counters_settle,
	}, {
		.name = "dio_request", .cmd = 0, .on_ctx = true,
		ABI_VER0(dio_request, DIO_REQUEST_SIZE_VER0),
		.zero = abi_request_zero, .out = abi_request_out,
		.flags = abi_request_flags,
		.fill = abi_request_fill, .settle = abi_request_settle,
	},
};

#define ABI_NR_SUBJECTS	(sizeof(abi_subjects) / sizeof(abi_subjects[0]))

static const struct abi_subject *abi_subject_find(const char *name)
{
	size_t i;

	for (i = 0; i < ABI_NR_SUBJECTS; i++)
		if (!strcmp(abi_subjects[i].name, name))
			return &abi_subjects[i];
	return NULL;
}

/* ---- the cases ---- */

/* A valid struct of the row in the zeroed arena, with @size in it. */
static uint8_t *abi_begin(struct abi_env *e, const struct abi_subject *s,
			  uint32_t size)
{
	memset(e->arena, 0, 2 * e->page);
	e->setup_failed = false;
	s->fill(e, e->arena);
	memcpy(e->arena, &size, sizeof(size));
	return e->arena;
}

static void abi_fail(struct abi_env *e, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void abi_fail(struct abi_env *e, const char *what, const char *fmt, ...)
{
	va_list ap;

	e->failed++;
	printf("# %s %s: %s: ", e->tag, e->subject, what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/*
 * Call the row's command (through @fd, as @cmd) on the arena that
 * abi_begin() filled and the caller changed, and check the answer against
 * @want: ABI_OK for the row's valid answer, or -errno.  The kernel must
 * not write past its own struct, whatever the answer.
 */
static void abi_case(struct abi_env *e, const struct abi_subject *s, int fd,
		     unsigned long cmd, long want, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static void abi_case(struct abi_env *e, const struct abi_subject *s, int fd,
		     unsigned long cmd, long want, const char *fmt, ...)
{
	size_t past = 2 * e->page - s->ksize;
	char what[160], b1[48], b2[48];
	bool valid, ok;
	va_list ap;
	long ret;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	e->cases++;
	if (e->setup_failed) {
		abi_fail(e, what, "the state the call needs could not be made");
		s->settle(e, -ENOTTY, e->arena);
		return;
	}
	memcpy(e->shadow, e->arena + s->ksize, past);
	ret = s->cmd ? abi_ioctl(fd, cmd, e->arena) : abi_submit(e, e->arena);
	if (memcmp(e->shadow, e->arena + s->ksize, past)) {
		abi_fail(e, what, "the call wrote past the kernel's struct (%zu bytes)",
			 s->ksize);
	}
	valid = s->settle(e, ret, e->arena);
	ok = want == ABI_OK ? valid : ret == want;
	if (!ok)
		abi_fail(e, what, "got %s%s, want %s", abi_errname(ret, b1, sizeof(b1)),
			 ret >= 0 && !valid ? " (not the valid answer)" : "",
			 want == ABI_OK ? "the valid answer" :
			 abi_errname(want, b2, sizeof(b2)));
}

static void abi_set_bit(uint8_t *p, size_t len, unsigned int bit)
{
	uint16_t v16;
	uint32_t v32;

	if (len == 2) {
		memcpy(&v16, p, 2);
		v16 |= 1U << bit;
		memcpy(p, &v16, 2);
	} else {
		memcpy(&v32, p, 4);
		v32 |= 1U << bit;
		memcpy(p, &v32, 4);
	}
}

/*
 * Every rule of the header's preamble for row @s.  Returns the number of
 * failed cases (each printed).
 */
static unsigned int abi_run_subject(struct abi_env *e, const struct abi_subject *s)
{
	static const uint32_t small[] = { 0, 1, 4 };
	static const unsigned int dirs[] = {
		_IOC_NONE, _IOC_READ, _IOC_WRITE, _IOC_READ | _IOC_WRITE,
	};
	unsigned int failed = e->failed, cases = e->cases;
	int fd = s->on_ctx ? e->ctx : e->ctl, other = s->on_ctx ? e->ctl : e->ctx;
	/* The output-only struct: no tail or reserved field is read. */
	long tail = s->output_only ? ABI_OK : -E2BIG;
	long zero = s->output_only ? ABI_OK : -EINVAL;
	unsigned long c = s->cmd;
	const struct abi_span *sp;
	const struct abi_flag *fl;
	size_t i, extra, sz;
	unsigned int bit;
	uint8_t *a;

	e->subject = s->name;
	/* Sizes. */
	abi_begin(e, s, s->ksize);
	abi_case(e, s, fd, c, ABI_OK, "size %zu (the header's)", s->ksize);
	abi_begin(e, s, s->ver0);
	abi_case(e, s, fd, c, ABI_OK, "size %zu (%s)", s->ver0, s->ver0_name);
	for (i = 0; i < sizeof(small) / sizeof(small[0]); i++) {
		abi_begin(e, s, small[i]);
		abi_case(e, s, fd, c, -EINVAL, "size %u, below %s", small[i],
			 s->ver0_name);
	}
	abi_begin(e, s, s->ver0 - 1);
	abi_case(e, s, fd, c, -EINVAL, "size %zu, below %s", s->ver0 - 1,
		 s->ver0_name);
	for (extra = 1; extra <= 8; extra += 7) {
		abi_begin(e, s, s->ksize + extra);
		abi_case(e, s, fd, c, ABI_OK, "size %zu, zero tail", s->ksize + extra);
		for (i = 0; i < extra; i++) {
			a = abi_begin(e, s, s->ksize + extra);
			a[s->ksize + i] = 0xa5;
			abi_case(e, s, fd, c, tail, "size %zu, tail byte %zu set",
				 s->ksize + extra, s->ksize + i);
		}
	}
	abi_begin(e, s, e->page);
	abi_case(e, s, fd, c, ABI_OK, "size %zu (the page size), zero tail", e->page);
	a = abi_begin(e, s, e->page);
	a[e->page - 1] = 1;
	abi_case(e, s, fd, c, tail, "size %zu (the page size), last byte set",
		 e->page);
	abi_begin(e, s, e->page + 1);
	abi_case(e, s, fd, c, -E2BIG, "size %zu, above the page size", e->page + 1);
	abi_begin(e, s, UINT32_MAX);
	abi_case(e, s, fd, c, -E2BIG, "size %u", UINT32_MAX);

	/* Reserved and padding fields, a byte at a time. */
	for (sp = s->zero; sp->name; sp++) {
		for (i = 0; i < sp->len; i++) {
			a = abi_begin(e, s, s->ksize);
			a[sp->off + i] = 0xa5;
			abi_case(e, s, fd, c, zero, "%s byte %zu set", sp->name, i);
		}
	}
	/* Flag bits outside the mask, one at a time. */
	for (fl = s->flags; fl->name; fl++) {
		for (bit = 0; bit < fl->len * 8; bit++) {
			if (fl->all & (1U << bit))
				continue;
			a = abi_begin(e, s, s->ksize);
			abi_set_bit(a + fl->off, fl->len, bit);
			abi_case(e, s, fd, c, -EINVAL, "%s bit %u (outside %s)",
				 fl->name, bit, fl->mask_name ? fl->mask_name : "none defined");
		}
	}
	/* Output fields are not read. */
	for (sp = s->out; sp->name; sp++) {
		a = abi_begin(e, s, s->ksize);
		memset(a + sp->off, 0xff, sp->len);
		abi_case(e, s, fd, c, ABI_OK, "out %s all ones", sp->name);
	}

	/* The ioctl number: size bits ignored; direction, magic, descriptor. */
	if (c) {
		const size_t sizes[] = {
			0, 1, s->ksize - 1, s->ksize + 8, e->page, _IOC_SIZEMASK,
		};

		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			sz = sizes[i];
			if (sz == _IOC_SIZE(c))
				continue;
			abi_begin(e, s, s->ksize);
			abi_case(e, s, fd, _IOC(_IOC_DIR(c), _IOC_TYPE(c), _IOC_NR(c), sz),
				 ABI_OK, "number with size bits %zu", sz);
		}
		for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
			if (dirs[i] == _IOC_DIR(c))
				continue;
			abi_begin(e, s, s->ksize);
			abi_case(e, s, fd, _IOC(dirs[i], _IOC_TYPE(c), _IOC_NR(c), _IOC_SIZE(c)),
				 -ENOTTY, "number with direction %u", dirs[i]);
		}
		abi_begin(e, s, s->ksize);
		abi_case(e, s, fd, _IOC(_IOC_DIR(c), _IOC_TYPE(c) ^ 1, _IOC_NR(c), _IOC_SIZE(c)),
			 -ENOTTY, "number with magic 0x%lx", _IOC_TYPE(c) ^ 1);
		abi_begin(e, s, s->ksize);
		abi_case(e, s, other, c, -ENOTTY, "on the %s",
			 s->on_ctx ? "control device" : "context descriptor");
	}
	printf("# %s %s: %u cases, %u failed\n", e->tag, s->name, e->cases - cases,
	       e->failed - failed);
	fflush(stdout);
	return e->failed - failed;
}

/* Does a row of the table name command (@dir, @nr) on this descriptor? */
static bool abi_known(bool on_ctx, unsigned int dir, unsigned int nr)
{
	size_t i;

	for (i = 0; i < ABI_NR_SUBJECTS; i++) {
		const struct abi_subject *s = &abi_subjects[i];

		if (s->cmd && s->on_ctx == on_ctx && _IOC_DIR(s->cmd) == dir &&
		    _IOC_NR(s->cmd) == nr)
			return true;
	}
	return false;
}

/*
 * Every number of the magic, in every direction, on both descriptors:
 * those no row names are -ENOTTY.  A number the module answers otherwise
 * is a command the table lacks, or one matched too loosely.
 */
static unsigned int abi_sweep(struct abi_env *e)
{
	unsigned int failed = e->failed, cases = e->cases, dir, nr, side;
	char b[48];
	long ret;
	int fd;

	e->subject = "sweep";
	for (side = 0; side < 2; side++) {
		fd = side ? e->ctx : e->ctl;
		for (dir = 0; dir < 4; dir++) {
			for (nr = 0; nr < 256; nr++) {
				if (abi_known(side, dir, nr))
					continue;
				memset(e->arena, 0, 2 * e->page);
				e->cases++;
				ret = abi_ioctl(fd, _IOC(dir, DIO_BATCH_IOC_MAGIC, nr, 64),
						e->arena);
				if (ret != -ENOTTY)
					abi_fail(e, side ? "context descriptor" : "control device",
						 "number 0x%02x direction %u: got %s, want -ENOTTY (no row names it)",
						 nr, dir, abi_errname(ret, b, sizeof(b)));
			}
		}
	}
	printf("# %s sweep: %u cases, %u failed\n", e->tag, e->cases - cases,
	       e->failed - failed);
	fflush(stdout);
	return e->failed - failed;
}

static void abi_env_close(struct abi_env *e)
{
	if (e->dev >= 0)
		close(e->dev);
	if (e->ctx >= 0)
		close(e->ctx);
	if (e->ctl >= 0)
		close(e->ctl);
	if (e->arena)
		munmap(e->arena, 2 * e->page);
	if (e->data)
		munmap(e->data, e->page);
	free(e->shadow);
	memset(e, 0, sizeof(*e));
	e->dev = e->ctx = e->ctl = -1;
}

/*
 * A private context with a handle for @dev, whose first ABI_IO_BYTES are
 * written once (the rows read them: with PI, what the kernel generated).
 * Returns 0, or -1 with a message.
 */
static int abi_env_open(struct abi_env *e, const char *tag, const char *dev)
{
	struct dio_init in = { .size = sizeof(in), .flags = DIO_PRIVATE };
	const char *step;
	long ret;

	memset(e, 0, sizeof(*e));
	e->tag = tag;
	e->dev = e->ctx = e->ctl = -1;
	e->page = sysconf(_SC_PAGESIZE);
	step = "memory";
	e->arena = mmap(NULL, 2 * e->page, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	e->data = mmap(NULL, e->page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	e->shadow = malloc(2 * e->page);
	if (e->arena == MAP_FAILED || e->data == MAP_FAILED || !e->shadow) {
		e->arena = e->arena == MAP_FAILED ? NULL : e->arena;
		e->data = e->data == MAP_FAILED ? NULL : e->data;
		ret = -ENOMEM;
		goto out_fail;
	}
	step = "/dev/" DIO_BATCH_DEVNAME;
	e->ctl = open("/dev/" DIO_BATCH_DEVNAME, O_RDWR | O_CLOEXEC);
	ret = e->ctl < 0 ? -errno : 0;
	if (ret)
		goto out_fail;
	step = "DIO_IOC_INIT";
	ret = e->ctx = abi_ioctl(e->ctl, DIO_IOC_INIT, &in);
	if (ret < 0)
		goto out_fail;
	step = dev;
	e->dev = open(dev, O_RDWR | O_CLOEXEC);
	ret = e->dev < 0 ? -errno : 0;
	if (ret)
		goto out_fail;
	step = "DIO_IOC_OPEN";
	ret = e->h = abi_open_ref(e);
	if (ret < 0)
		goto out_fail;
	step = "a write of the first block";
	memset(e->data, 0xdb, ABI_IO_BYTES);
	abi_prep_io(e, &e->req, DIO_OP_WRITE);
	ret = abi_submit(e, &e->req);
	if (ret == 1)
		ret = abi_reap(e, &e->req);
	if (ret == 1)
		ret = e->req.result;
	if (ret != ABI_IO_BYTES)
		goto out_fail;
	return 0;

out_fail:
	printf("# %s: set-up: %s: %ld (%s)\n", tag, step, ret,
	       ret < 0 ? strerror(-ret) : "unexpected");
	fflush(stdout);
	abi_env_close(e);
	return -1;
}

#endif
