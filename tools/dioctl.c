// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dioctl: the command-line tool of dio_batch.
 *
 *   dioctl [-V] [-h] COMMAND [OPTIONS] [DEVICE]
 *   features | query DEVICE | read DEVICE | write DEVICE | scrub DEVICE
 *   | tag get DEVICE | tag set DEVICE
 *
 * Every command works in a private context of its own.  Exit status: 0
 * success, 1 usage error, 2 module or device unreachable, 3 I/O error,
 * 4 PI failure found, 5 not supported, 130 scrub interrupted; one line on
 * stderr names the errno.  --json (-o json) prints one JSON document on
 * stdout.  See dioctl(1).  This file: the command line and the commands
 * features, stat, query, read, write and tag; scrub is in dioctl_scrub.c,
 * the helpers they share in dioctl_dev.c, dioctl_util.c and dioctl_json.c
 * (dioctl_tool.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dioctl_tool.h"

/* splitmix64: the --random data of a byte offset depends only on it. */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* ---- features ---- */

struct bitname {
	uint64_t	bit;
	const char	*name;
};

static void print_bits(const char *label, uint64_t v, const struct bitname *t)
{
	uint64_t known = 0;

	printf("%-20s %#" PRIx64, label, v);
	for (; t->name; t++) {
		known |= t->bit;
		if (v & t->bit)
			printf(" %s", t->name);
	}
	if (v & ~known)
		printf(" unknown:%#" PRIx64, v & ~known);
	putchar('\n');
}

/* "key": { "value": N, "names": [ ... ] } */
static void json_bits(const char *key, uint64_t v, const struct bitname *t)
{
	uint64_t known = 0;

	j_begin(key);
	j_u64("value", v);
	j_abegin("names");
	for (; t->name; t++) {
		known |= t->bit;
		if (v & t->bit)
			j_str(NULL, t->name);
	}
	j_aend();
	j_u64("unknown", v & ~known);
	j_end();
}

static const struct bitname pi_cap_names[] = {
	{ DIO_PI_CAP_INTEGRITY, "integrity" }, { DIO_PI_CAP_REFTAG, "reftag" },
	{ DIO_PI_CAP_KGENERATE, "kgenerate" }, { DIO_PI_CAP_KVERIFY, "kverify" },
	{ DIO_PI_CAP_DEVICE, "device" }, { DIO_PI_CAP_NOCHECK, "nocheck" }, { 0, NULL }
};

static const char *guard_name(unsigned int g)
{
	switch (g) {
	case DIO_GUARD_NONE:	return "none";
	case DIO_GUARD_IP:	return "IP checksum";
	case DIO_GUARD_CRC16:	return "CRC16 T10-DIF";
	case DIO_GUARD_CRC64:	return "CRC64 NVMe";
	}
	return "unknown";
}

static int cmd_features(const struct opts *o)
{
	static const struct bitname feat[] = {
		{ DIO_FEAT_CONTEXTS, "contexts" }, { DIO_FEAT_BATCH_IO, "batch-io" },
		{ DIO_FEAT_PI, "pi" }, { DIO_FEAT_PI_REPORT, "pi-report" },
		{ DIO_FEAT_STAT, "stat" }, { DIO_FEAT_PIN_LIMIT, "pin-limit" },
		{ DIO_FEAT_FIXED_BUFS, "fixed-bufs" },
		{ DIO_FEAT_PART_START, "part-start" },
		{ DIO_FEAT_COUNTERS, "counters" }, { 0, NULL }
	};
	static const struct bitname init[] = {
		{ DIO_CREAT, "creat" }, { DIO_EXCL, "excl" }, { DIO_PRIVATE, "private" },
		{ DIO_FOREIGN, "foreign" }, { 0, NULL }
	};
	static const struct bitname open[] = { { DIO_OPEN_NOCLAIM, "noclaim" }, { 0, NULL } };
	static const struct bitname req[] = {
		{ DIO_REQ_FUA, "fua" }, { DIO_REQ_IOVEC, "iovec" }, { DIO_REQ_PI, "pi" },
		{ DIO_REQ_FIXED, "fixed" }, { 0, NULL }
	};
	static const struct bitname pi[] = {
		{ DIO_PI_CHK_GUARD, "chk-guard" }, { DIO_PI_CHK_REFTAG, "chk-reftag" },
		{ DIO_PI_CHK_APPTAG, "chk-apptag" }, { DIO_PI_VERIFY_USER, "verify-user" },
		{ DIO_PI_GEN_APPTAG, "gen-apptag" }, { DIO_PI_NOCHECK, "nocheck" },
		{ 0, NULL }
	};
	static const struct bitname ops[] = {
		{ 1U << DIO_OP_READ, "read" }, { 1U << DIO_OP_WRITE, "write" },
		{ 1U << DIO_OP_FLUSH, "flush" }, { 0, NULL }
	};
	struct dio_features f;

	get_features(&f);
	if (o->json) {
		j_begin(NULL);
		j_str("command", "features");
		j_str("dioctl_version", DIO_BATCH_VERSION);
		j_u64("abi_version", f.abi_version);
		j_u64("tool_abi_version", DIO_BATCH_ABI_VERSION);
		json_bits("features", f.features, feat);
		json_bits("init_flags", f.init_flags, init);
		json_bits("open_flags", f.open_flags, open);
		json_bits("request_flags", f.req_flags, req);
		json_bits("pi_flags", f.pi_flags, pi);
		json_bits("opcodes", f.opcodes, ops);
		j_u64("max_batch", f.max_batch);
		j_u64("max_inflight", f.max_inflight);
		j_u64("max_pi_bytes", f.max_pi_bytes);
		j_u64("max_user_pinned", f.max_user_pinned);
		j_u64("max_fixed_bufs", f.max_fixed_bufs);
		j_u64("max_fixed_buf_bytes", f.max_fixed_buf_bytes);
		j_str("status", "ok");
		j_u64("exit_code", EXIT_OK);
		j_end();
		j_done();
		return EXIT_OK;
	}
	printf("%-20s %u (this tool: %u)\n", "abi version", f.abi_version,
	       DIO_BATCH_ABI_VERSION);
	print_bits("features", f.features, feat);
	print_bits("init flags", f.init_flags, init);
	print_bits("open flags", f.open_flags, open);
	print_bits("request flags", f.req_flags, req);
	print_bits("pi flags", f.pi_flags, pi);
	print_bits("opcodes", f.opcodes, ops);
	printf("%-20s %u\n%-20s %u\n%-20s %u\n", "max batch", f.max_batch,
	       "max inflight", f.max_inflight, "max pi bytes", f.max_pi_bytes);
	printf("%-20s %" PRIu64 "\n", "max user pinned", (uint64_t)f.max_user_pinned);
	printf("%-20s %u\n%-20s %" PRIu64 "\n", "max fixed bufs", f.max_fixed_bufs,
	       "max fixed buf bytes", (uint64_t)f.max_fixed_buf_bytes);
	if (!(f.features & DIO_FEAT_PI))
		printf("note: no PI support in this module: --pi requests fail with EOPNOTSUPP\n");
	return EXIT_OK;
}

/* ---- devices ---- */

/*
 * The counts of a block device since the module was loaded
 * (DIO_COUNTERS_DEVICE): every handle of every context that had it.  The
 * device is opened without a claim, so that it works while an
 * application's context holds it.
 */
static int cmd_stat(const char *path, const struct opts *o)
{
	static const struct { const char *name, *label; size_t off; } cnt[] = {
#define C(f, l) { #f, l, offsetof(struct dio_counters, f) }
		C(reads, "reads"), C(writes, "writes"), C(flushes, "flushes"),
		C(read_bytes, "read bytes"), C(write_bytes, "write bytes"),
		C(io_errors, "io errors"), C(refused, "refused"),
		C(pi_guard, "pi guard"), C(pi_app, "pi app"), C(pi_ref, "pi ref"),
		C(pi_unknown, "pi unknown tag"), C(pi_by_user, "pi found by user"),
		C(pi_by_module, "pi found by module"),
		C(pi_by_device, "pi found by device"),
#undef C
	};
	struct dio_features f;
	struct dio_counters c;
	struct dio_query q;
	int fd, ctx, h;
	uint64_t v;

	get_features(&f);
	if (!(f.features & DIO_FEAT_COUNTERS))
		die(EXIT_NOTSUP, EOPNOTSUPP, "the loaded dio_batch module has no counters "
		    "(ABI %u; DIO_IOC_COUNTERS came with ABI 5)", f.abi_version);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		char what[512];

		snprintf(what, sizeof(what), "open %s", path);
		die_access(errno, path, what);
	}
	if (fd < 0)
		die(EXIT_OPEN, errno, "open %s", path);
	ctx = sys_dio_init(0, DIO_PRIVATE);
	if (ctx < 0)
		die_ctl(errno, "sys_dio_init");
	h = sys_dio_open(ctx, fd, DIO_OPEN_NOCLAIM);
	if (h < 0)
		die(EXIT_OPEN, errno, "sys_dio_open %s", path);
	if (sys_dio_query(ctx, h, &q) < 0)
		die(EXIT_OPEN, errno, "sys_dio_query %s", path);
	if (sys_dio_counters(ctx, h, DIO_COUNTERS_DEVICE, &c) < 0)
		die(errno == ENOTTY ? EXIT_NOTSUP : EXIT_OPEN, errno,
		    "sys_dio_counters %s", path);
	sys_dio_close(ctx, h);
	sys_dio_exit(ctx);
	close(fd);
	if (o->json) {
		j_begin(NULL);
		j_str("command", "stat");
		j_str("device", path);
		j_u64("dev_major", q.dev_major);
		j_u64("dev_minor", q.dev_minor);
		for (size_t i = 0; i < sizeof(cnt) / sizeof(cnt[0]); i++) {
			memcpy(&v, (const char *)&c + cnt[i].off, sizeof(v));
			j_u64(cnt[i].name, v);
		}
		j_str("status", "ok");
		j_u64("exit_code", EXIT_OK);
		j_end();
		j_done();
		return EXIT_OK;
	}
	printf("%-20s %s (%u:%u), since the module was loaded\n", "device", path,
	       q.dev_major, q.dev_minor);
	for (size_t i = 0; i < sizeof(cnt) / sizeof(cnt[0]); i++) {
		memcpy(&v, (const char *)&c + cnt[i].off, sizeof(v));
		printf("%-20s %" PRIu64 "\n", cnt[i].label, v);
	}
	return EXIT_OK;
}

static int cmd_query(const char *path, const struct opts *o)
{
	struct dio_features f;
	struct dev d;
	const struct dio_query *q = &d.q;

	get_features(&f);
	dev_open(&d, path, false);
	if (o->json) {
		j_begin(NULL);
		j_str("command", "query");
		j_str("device", path);
		j_u64("handle", d.h);
		j_u64("capacity", q->capacity);
		j_u64("blocks", q->capacity / q->logical_block_size);
		j_u64("logical_block_size", q->logical_block_size);
		j_u64("physical_block_size", q->physical_block_size);
		j_u64("dma_alignment", q->dma_alignment);
		j_u64("max_segments", q->max_segments);
		j_u64("max_segment_size", q->max_segment_size);
		j_u64("max_io_bytes", q->max_io_bytes);
		if (q->profile[0])
			j_str("pi_profile", q->profile);
		else
			j_null("pi_profile");
		json_bits("pi_caps", q->pi_caps, pi_cap_names);
		j_u64("pi_guard_type", q->pi_guard_type);
		j_str("pi_guard", guard_name(q->pi_guard_type));
		j_u64("pi_type", q->pi_type);
		j_u64("pi_interval", q->pi_interval);
		j_u64("pi_tuple_size", q->pi_tuple_size);
		j_u64("pi_md_size", q->pi_md_size);
		j_u64("pi_offset", q->pi_offset);
		j_u64("pi_app_tag_size", q->pi_app_tag_size);
		j_u64("pi_ref_tag_size", q->pi_ref_tag_size);
		j_u64("pi_storage_tag_size", q->pi_storage_tag_size);
		j_u64("pi_opaque_size", q->pi_opaque_size);
		j_u64("pi_opaque_offset", q->pi_opaque_offset);
		j_u64("partition_start", d.start);
		j_str("status", "ok");
		j_u64("exit_code", EXIT_OK);
		j_end();
		j_done();
		dev_close(&d);
		return EXIT_OK;
	}
	printf("%-20s %s (handle %d)\n", "device", path, d.h);
	printf("%-20s %" PRIu64 " bytes (%" PRIu64 " blocks)\n", "capacity",
	       (uint64_t)q->capacity, (uint64_t)q->capacity / q->logical_block_size);
	printf("%-20s %u\n%-20s %u\n%-20s %u\n", "logical block size",
	       q->logical_block_size, "physical block size", q->physical_block_size,
	       "dma alignment", q->dma_alignment);
	printf("%-20s %u\n%-20s %u\n%-20s %u\n", "max segments", q->max_segments,
	       "max segment size", q->max_segment_size, "max io bytes",
	       q->max_io_bytes);
	printf("%-20s %s\n", "pi profile", q->profile[0] ? q->profile : "(none)");
	print_bits("pi caps", q->pi_caps, pi_cap_names);
	if (q->pi_interval) {
		printf("%-20s %s (%u)\n", "pi guard", guard_name(q->pi_guard_type),
		       q->pi_guard_type);
		printf("%-20s %u\n%-20s %u\n%-20s %u\n%-20s %u\n", "pi type",
		       q->pi_type, "pi interval", q->pi_interval, "pi tuple size",
		       q->pi_tuple_size, "pi md size", q->pi_md_size);
		printf("%-20s %u\n%-20s %u\n%-20s %u\n%-20s %u\n", "pi offset",
		       q->pi_offset, "app tag size", q->pi_app_tag_size,
		       "ref tag size", q->pi_ref_tag_size, "storage tag size",
		       q->pi_storage_tag_size);
		printf("%-20s %u\n%-20s %u\n", "opaque md size", q->pi_opaque_size,
		       "opaque md offset", q->pi_opaque_offset);
	}
	if (d.start)
		printf("%-20s %" PRIu64 " bytes into its disk (ref tags count from the disk)\n",
		       "partition start", d.start);
	dev_close(&d);
	return EXIT_OK;
}

/* ---- read and write ---- */

/* One request of the pipeline and its buffers. */
struct slot {
	struct dio_request	r;
	unsigned char		*data, *md;
	uint64_t		off;
	size_t			len;
};

struct io {
	struct dev		*d;
	const struct opts	*o;
	uint64_t		unit, req, end;	/* end: exclusive byte offset */
	bool			end_known;	/* else: stdin, until EOF */
	unsigned int		depth;
	struct slot		*slots;
	int			in_fd, out_fd;
	FILE			*info;		/* where text summaries go */
	uint64_t		next, done_bytes;
	unsigned int		nreq;
	int			err;		/* first request failure */
	unsigned int		verify_failures;
	/* Blocks --verify checked, and those it skipped as escapes. */
	uint64_t		checked, escaped;
	bool			eof;
};

static uint64_t seed_of(const struct dev *d, uint64_t off)
{
	return dio_pi_seed(&d->q, off);
}

static void fill_data(unsigned char *buf, size_t len, uint64_t off,
		      const struct opts *o)
{
	uint64_t v;
	size_t i;

	if (!o->random) {
		memset(buf, o->pattern, len);
		return;
	}
	for (i = 0; i < len; i += 8) {
		v = mix64(o->seed ^ mix64((off + i) / 8));
		memcpy(buf + i, &v, 8);
	}
}

/* Read up to @len bytes of the input; returns how many (fewer at EOF). */
static size_t read_full(int fd, unsigned char *buf, size_t len, const char *name)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(fd, buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die(EXIT_IO, errno, "reading %s", name);
		if (!n)
			break;
		got += n;
	}
	return got;
}

static void write_full(int fd, const unsigned char *buf, size_t len, const char *name)
{
	ssize_t n;

	while (len) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die(EXIT_IO, errno, "writing %s", name);
		buf += n;
		len -= n;
	}
}

/* The module's report of a PI failure (result -EILSEQ), as text. */
static void print_pi_report(FILE *out, const struct dev *d, uint64_t first_off,
			    const struct dio_request *req)
{
	uint64_t first = seed_of(d, first_off);
	const struct dio_request *r = req;
	struct dio_pi_error e;
	int why = dev_explain(d, r, &e);

	if (r->pi_err_interval == DIO_PI_INTERVAL_UNKNOWN && r->opcode == DIO_OP_WRITE) {
		/*
		 * A write's blocks were never stored, so none can be read
		 * again.  The module checked the PI it sent against the data,
		 * block by block, as the device does, and found nothing
		 * wrong: the device refused the write as a whole.
		 */
		fprintf(out, "PI error: the device refused this write as a whole, without "
			"saying which block%s\n  found by: %s\n",
			(r->flags & DIO_REQ_PI) || (r->pi_flags & DIO_PI_GEN_APPTAG) ?
			"; the PI sent checked correct against its data, block by block" :
			" (the kernel generated its PI)", source_text(r->pi_err_source));
		return;
	}
	if (r->pi_err_interval == DIO_PI_INTERVAL_UNKNOWN) {
		fprintf(out, "PI error: the device refused this I/O, and no block of it "
			"could be found to fail when read again\n"
			"  found by: %s\n", source_text(r->pi_err_source));
		return;
	}
	fprintf(out, "PI error: block %" PRIu64 " of this I/O (interval %" PRIu64
		" of the disk, byte offset %" PRIu64 " of %s)\n",
		(uint64_t)r->pi_err_interval - first, (uint64_t)r->pi_err_interval,
		(uint64_t)(r->pi_err_interval * d->q.pi_interval - d->start), d->path);
	if (e.tag == DIO_PI_TAG_NONE)
		fprintf(out, "  tag:      not known (%s%s%s)\n", explain_text(why),
			why ? ": " : "", why ? strerror(why) : "");
	else
		fprintf(out, "  tag:      %s\n  expected: %#" PRIx64 "\n  actual:   %#" PRIx64 "\n",
			dio_pi_tag_name(e.tag), (uint64_t)e.expected, (uint64_t)e.actual);
	fprintf(out, "  found by: %s\n", source_text(r->pi_err_source));
}

/* A failure kept for the JSON report of read and write (at most a few). */
#define IO_MAX_FAILS 64
static struct failure io_fails[IO_MAX_FAILS];
static unsigned int io_nfails;

static void io_keep(const struct failure *f)
{
	if (io_nfails < IO_MAX_FAILS)
		io_fails[io_nfails++] = *f;
}

static void io_plan(struct io *io, const struct dio_features *f)
{
	const struct opts *o = io->o;
	struct dev *d = io->d;
	const struct dio_query *q = &d->q;
	struct stat st;

	io->unit = o->pi ? q->pi_interval : q->logical_block_size;
	if (o->pi && !(f->features & DIO_FEAT_PI))
		die(EXIT_NOTSUP, EOPNOTSUPP, "the loaded dio_batch module has no PI support "
		    "(DIO_FEAT_PI not reported); retry without --pi");
	if (o->raw && !(f->pi_flags & DIO_PI_NOCHECK))
		die(EXIT_NOTSUP, EOPNOTSUPP, "the loaded dio_batch module has no raw reads "
		    "(DIO_PI_NOCHECK)");
	if (o->pi && !d->has_pi)
		die(EXIT_NOTSUP, EOPNOTSUPP, "%s: no protection information this tool can "
		    "handle (profile '%s')", d->path, q->profile[0] ? q->profile : "none");
	if (o->offset % io->unit)
		usage_error("--offset %" PRIu64 " must be a multiple of %" PRIu64 " (%s)",
			    o->offset, io->unit, o->pi ? "the protection interval" :
			    "the logical block size");
	if (o->offset > q->capacity)
		usage_error("--offset %" PRIu64 " is beyond the end of %s (%" PRIu64 " bytes)",
			    o->offset, d->path, (uint64_t)q->capacity);
	io->end_known = true;
	if (o->have_length) {
		io->end = o->offset + o->length;
	} else if (o->write && o->input && strcmp(o->input, "-") &&
		   !fstat(io->in_fd, &st) && S_ISREG(st.st_mode)) {
		io->end = o->offset + st.st_size;
	} else if (o->write && o->input) {
		io->end = q->capacity;		/* until the input ends */
		io->end_known = false;
	} else if (!o->write) {
		io->end = q->capacity;		/* to the end of the device */
	} else {
		usage_error("write needs --length (or --input FILE)");
	}
	if (io->end <= o->offset && io->end_known)
		usage_error("nothing to do: the length is 0");
	if ((io->end - o->offset) % io->unit && io->end_known)
		usage_error("the length %" PRIu64 " must be a multiple of %" PRIu64 " (%s)",
			    io->end - o->offset, io->unit, o->pi ? "the protection interval" :
			    "the logical block size");
	if (io->end > q->capacity)
		usage_error("%" PRIu64 " bytes at offset %" PRIu64 " go beyond the end of %s "
			    "(%" PRIu64 " bytes)", io->end - o->offset, o->offset, d->path,
			    (uint64_t)q->capacity);
	io->depth = o->depth;
	if (o->batch) {
		/* The old --batch N: the length as N requests in flight together. */
		uint64_t len = io->end - o->offset;

		if (!io->end_known || len % o->batch || (len / o->batch) % io->unit)
			usage_error("--batch %u: must split the length into whole %" PRIu64
				    "-byte units", o->batch, io->unit);
		io->req = len / o->batch;
		io->depth = o->batch;
		if (io->req > pick_req_size(d, f, &(struct opts){ 0 }, io->unit, o->pi) &&
		    io->req > q->max_io_bytes)
			usage_error("requests of %" PRIu64 " bytes exceed the device's %u; "
				    "raise --batch", io->req, q->max_io_bytes);
		if (o->pi && io->req / q->pi_interval * q->pi_md_size > f->max_pi_bytes)
			usage_error("requests need %" PRIu64 " bytes of PI, more than the "
				    "module's %u; raise --batch",
				    io->req / q->pi_interval * q->pi_md_size, f->max_pi_bytes);
	} else {
		io->req = pick_req_size(d, f, o, io->unit, o->pi);
	}
	if (!io->depth || io->depth > f->max_inflight || io->depth > f->max_batch)
		usage_error("--depth %u: must be 1 to %u (the module's max_inflight and "
			    "max_batch)", io->depth,
			    f->max_inflight < f->max_batch ? f->max_inflight : f->max_batch);
}

/* Prepare slot @s for the next piece; false when there is nothing more. */
static bool io_prep(struct io *io, struct slot *s)
{
	const struct opts *o = io->o;
	const struct dio_query *q = &io->d->q;
	unsigned int flags = o->raw ? DIO_PI_NOCHECK : 0;
	struct dio_pi_params a = { .app_tag = o->app_tag < 0 ? 0 : o->app_tag };
	size_t len, got;

	if (io->next >= io->end || io->eof || io->err)
		return false;
	len = io->end - io->next < io->req ? io->end - io->next : io->req;
	s->off = io->next;
	if (o->write && o->input) {
		got = read_full(io->in_fd, s->data, len, o->input);
		if (got < len) {
			if (io->end_known)
				die(EXIT_IO, 0, "%s ended after %" PRIu64 " bytes, before the "
				    "%" PRIu64 " to write", o->input,
				    s->off + got - o->offset, io->end - o->offset);
			io->eof = true;
			if (got % io->unit)
				die(EXIT_USAGE, 0, "%s: its length (%" PRIu64 " bytes) is not a "
				    "multiple of %" PRIu64, o->input,
				    s->off + got - o->offset, io->unit);
			if (!got)
				return false;
			len = got;
		}
	} else if (o->write) {
		fill_data(s->data, len, io->d->start + s->off, o);
	}
	s->len = len;
	io->next += len;
	if (o->write)
		dio_req_prep_write(&s->r, io->d->h, s->data, len, s->off);
	else
		dio_req_prep_read(&s->r, io->d->h, s->data, len, s->off);
	if (o->fua)
		s->r.flags |= DIO_REQ_FUA;
	if (o->pi) {
		size_t mdlen = len / q->pi_interval * q->pi_md_size;

		if (o->write) {
			a.seed = seed_of(io->d, s->off);
			if (dio_pi_generate(&io->d->p, s->data, len, s->md, &a) < 0)
				die(EXIT_IO, errno, "dio_pi_generate");
		}
		if (dio_req_set_pi(&s->r, s->md, mdlen, flags, 0, 0) < 0)
			die(EXIT_IO, errno, "dio_req_set_pi");
	}
	return true;
}

static void explain_submit_error(struct io *io, struct slot *s, int e)
{
	const struct opts *o = io->o;

	if (e == EOPNOTSUPP && o->raw && !(io->d->q.pi_caps & DIO_PI_CAP_NOCHECK))
		die(EXIT_NOTSUP, e, "raw read refused: %s cannot skip the device's PI "
		    "checks on this kernel (no DIO_PI_CAP_NOCHECK)", io->d->path);
	if (e == EOPNOTSUPP && o->pi)
		die(EXIT_NOTSUP, e, "PI request refused by the module for %s", io->d->path);
	if (e == EILSEQ)
		print_pi_report(io->info, io->d, s->off, &s->r);
	die_errno(e, "sys_dio_submit on %s", io->d->path);
}

static void dump_tuples(const struct io *io, const struct slot *s)
{
	const struct dio_query *q = &io->d->q;
	unsigned int ts = q->pi_tuple_size, gs = ts == 16 ? 8 : 2, i;
	uint64_t seed = seed_of(io->d, s->off);
	uint64_t base = (s->off - io->o->offset) / q->pi_interval;
	size_t k, n = s->len / q->pi_interval;
	const unsigned char *t;

	for (k = 0; k < n; k++) {
		t = s->md + k * q->pi_md_size + q->pi_offset;
		fprintf(io->info, "  block %4" PRIu64 "  interval %8" PRIu64 "  guard ",
			base + k, seed + k);
		for (i = 0; i < gs; i++)
			fprintf(io->info, "%02x", t[i]);
		fprintf(io->info, "  app %02x%02x  ref ", t[gs], t[gs + 1]);
		for (i = gs + 2; i < ts; i++)
			fprintf(io->info, "%02x", t[i]);
		fputc('\n', io->info);
	}
}

/*
 * Check fetched PI with libdioctl, every tuple (dio_pi_verify() stops at
 * the first failure: go on after it).  Returns the failures found.
 */
static unsigned int verify_tuples(struct io *io, const struct slot *s)
{
	const struct dio_query *q = &io->d->q;
	const struct opts *o = io->o;
	size_t n = s->len / q->pi_interval, k = 0;
	struct dio_pi_params a = {
		.app_tag = o->app_tag < 0 ? 0 : o->app_tag,
		.app_mask = o->app_mask,
		.chk_flags = DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG,
	};
	struct dio_pi_error e;
	struct failure f;
	unsigned int bad = 0;

	if (o->app_tag >= 0)
		a.chk_flags |= DIO_PI_CHK_APPTAG;
	io->checked += n;
	while (k < n) {
		a.seed = seed_of(io->d, s->off) + k;
		if (!dio_pi_verify(&io->d->p, s->data + k * q->pi_interval,
				   (n - k) * q->pi_interval, s->md + k * q->pi_md_size,
				   &a, &e)) {
			io->escaped += e.escaped;
			break;
		}
		if (errno != EILSEQ)
			die(EXIT_IO, errno, "dio_pi_verify");
		io->escaped += e.escaped;
		k += e.interval;
		fprintf(io->info, "verify FAILED: block %" PRIu64 " of this I/O (interval %"
			PRIu64 " of the disk): %s tag expected %#" PRIx64 ", actual %#" PRIx64
			"\n", (s->off - o->offset) / q->pi_interval + k, e.ref,
			dio_pi_tag_name(e.tag), e.expected, e.actual);
		f = (struct failure){
			.offset = s->off + k * q->pi_interval, .length = q->pi_interval,
			.interval = e.ref, .tag = e.tag, .expected = e.expected,
			.actual = e.actual, .source = DIO_PI_SRC_DIOCTL, .err = EILSEQ,
		};
		io_keep(&f);
		bad++;
		k++;
	}
	return bad;
}

/* A completed request: its failure, tuples, verification and output. */
static void io_complete(struct io *io, struct slot *s)
{
	const struct opts *o = io->o;
	struct dio_request *r = &s->r;
	struct failure f;

	if (r->result != (int64_t)s->len) {
		int e = r->result < 0 ? (int)-r->result : EIO;

		if (io->err)
			return;		/* after the first failure: drained only */
		io->err = e;
		failure_from_req(io->d, r, s->off, s->len, &f);
		io_keep(&f);
		if (e == EILSEQ)
			print_pi_report(io->info, io->d, o->offset, r);
		else
			fprintf(io->info, "request at offset %" PRIu64 " (%zu bytes): %s (%s)\n",
				s->off, s->len, r->result < 0 ? err_text(e) : "short transfer",
				err_name(e));
		return;
	}
	if (io->err)
		return;
	io->nreq++;
	io->done_bytes += s->len;
	if (o->write)
		return;
	if (o->dump)
		dump_tuples(io, s);
	if (o->verify)
		io->verify_failures += verify_tuples(io, s);
	if (o->output)
		write_full(io->out_fd, s->data, s->len, o->output);
}

static int cmd_io(const char *path, const struct opts *o)
{
	struct dio_features f;
	struct dev d;
	struct io io = { .d = &d, .o = o, .in_fd = -1, .out_fd = -1, .info = stdout };
	struct dio_request **ptrs;
	unsigned int head = 0, inflight = 0, k, nprep;
	bool passthrough;
	double t0;
	int ret, code;

	get_features(&f);
	if (o->input)
		io.in_fd = strcmp(o->input, "-") ? open(o->input, O_RDONLY | O_CLOEXEC) : 0;
	if (io.in_fd < 0 && o->input)
		die(EXIT_IO, errno, "open %s", o->input);
	if (o->output && !strcmp(o->output, "-")) {
		io.out_fd = 1;
		io.info = stderr;
	} else if (o->output) {
		io.out_fd = open(o->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (io.out_fd < 0)
			die(EXIT_IO, errno, "open %s", o->output);
	}
	if (o->json)
		io.info = stderr;	/* stdout holds the JSON document */
	dev_open(&d, path, o->write);
	io_plan(&io, &f);
	io.slots = calloc(io.depth, sizeof(*io.slots));
	ptrs = calloc(io.depth, sizeof(*ptrs));
	if (!io.slots || !ptrs)
		die(EXIT_IO, ENOMEM, "allocating %u requests", io.depth);
	/* A raw read on NVMe before 6.14: by passthrough (dio_pi_read_raw()). */
	passthrough = o->raw && !o->write && d.has_pi && !(d.q.pi_caps & DIO_PI_CAP_NOCHECK);
	for (k = 0; k < io.depth; k++) {
		io.slots[k].data = xalloc(io.req);
		if (o->pi || passthrough)
			io.slots[k].md = xalloc(io.req / d.q.pi_interval * d.q.pi_md_size);
	}
	io.next = o->offset;
	t0 = now_s();
	for (;;) {
		/* Fill the free slots, in order after the head, and submit them. */
		nprep = 0;
		while (inflight + nprep < io.depth &&
		       io_prep(&io, &io.slots[(head + inflight + nprep) % io.depth])) {
			ptrs[nprep] = &io.slots[(head + inflight + nprep) % io.depth].r;
			nprep++;
		}
		if (passthrough) {
			/*
			 * NVMe before Linux 6.14: the driver cannot skip its
			 * checks, the drive can, for a passthrough read.  One
			 * at a time, in order.
			 */
			for (k = 0; k < nprep; k++) {
				struct slot *s = &io.slots[(head + k) % io.depth];

				if (dio_pi_read_raw(d.fd, &d.p, s->data, s->len, s->md, s->off) < 0)
					die(errno == ENOTTY ? EXIT_NOTSUP : errno == EACCES ? EXIT_OPEN : EXIT_IO,
					    errno, "raw read of %s by NVMe passthrough%s", path,
					    errno == EACCES ? " (Linux 6.1 allows it only with "
					    "CAP_SYS_ADMIN)" : "");
				s->r.result = s->len;
				io_complete(&io, s);
			}
			head = (head + nprep) % io.depth;
			if (!nprep)
				break;
			continue;
		}
		for (k = 0; k < nprep; k += ret) {
			ret = sys_dio_submit(d.ctx, ptrs + k, nprep - k);
			if (ret < 0)
				explain_submit_error(&io, &io.slots[(head + inflight + k) % io.depth],
						     errno);
		}
		inflight += nprep;
		if (!inflight)
			break;
		/* Complete the oldest: output stays in order. */
		ptrs[0] = &io.slots[head].r;
		do {
			ret = sys_dio_wait(d.ctx, ptrs, 1, NULL);
		} while (ret < 0 && errno == EINTR);
		if (ret != 1)
			die(EXIT_IO, ret < 0 ? errno : EIO, "sys_dio_wait");
		io_complete(&io, &io.slots[head]);
		head = (head + 1) % io.depth;
		inflight--;
	}
	code = io.err ? exit_code_of(io.err) : io.verify_failures ? EXIT_PI : EXIT_OK;
	if (o->json) {
		j_begin(NULL);
		j_str("command", o->write ? "write" : "read");
		j_str("device", path);
		j_u64("offset", o->offset);
		j_u64("length", io.done_bytes);
		j_u64("requests", io.nreq);
		j_u64("request_size", io.req);
		j_u64("depth", io.depth);
		j_bool("pi", o->pi);
		j_bool("raw", o->raw);
		j_bool("verified", o->verify);
		if (o->verify) {
			j_u64("checked_blocks", io.checked - io.escaped);
			j_u64("unchecked_blocks", io.escaped);
		} else {
			j_null("checked_blocks");
			j_null("unchecked_blocks");
		}
		if (o->app_tag >= 0) {
			j_u64("app_tag", o->app_tag);
			j_hex("app_tag_hex", o->app_tag);
		} else {
			j_null("app_tag");
			j_null("app_tag_hex");
		}
		if (o->pi && io.done_bytes) {
			j_u64("first_interval", seed_of(&d, o->offset));
			j_u64("last_interval", seed_of(&d, o->offset + io.done_bytes) - 1);
		} else {
			j_null("first_interval");
			j_null("last_interval");
		}
		j_dbl("seconds", now_s() - t0);
		j_str("status", status_name(code));
		j_u64("exit_code", code);
		j_abegin("failures");
		for (k = 0; k < io_nfails; k++)
			failure_json(&io_fails[k]);
		j_aend();
		j_end();
		j_done();
	}
	if (io.err)
		die(code, io.err, "%s at offset %" PRIu64 " of %s",
		    o->write ? "write" : "read", o->offset, path);
	if (io.verify_failures)
		die(EXIT_PI, EILSEQ, "read %" PRIu64 " bytes at offset %" PRIu64 " of %s: "
		    "%u block%s failed verification", io.done_bytes, o->offset, path,
		    io.verify_failures, io.verify_failures == 1 ? "" : "s");
	if (!o->json) {
		fprintf(io.info, "%s %" PRIu64 " bytes at offset %" PRIu64 " %s %s in %u request%s",
			o->write ? "wrote" : "read", io.done_bytes, o->offset,
			o->write ? "to" : "from", path, io.nreq, io.nreq == 1 ? "" : "s");
		if (o->pi && io.done_bytes)
			fprintf(io.info, "; PI %s for intervals %" PRIu64 "..%" PRIu64,
				o->write ? "generated" : o->raw ? "read raw (NOCHECK)" : "fetched",
				seed_of(&d, o->offset),
				seed_of(&d, o->offset + io.done_bytes) - 1);
		/* "verified" only of the blocks that were checked. */
		if (o->verify && io.checked > io.escaped)
			fprintf(io.info, ", %" PRIu64 " block%s verified",
				io.checked - io.escaped, io.checked - io.escaped == 1 ? "" : "s");
		if (o->app_tag >= 0)
			fprintf(io.info, "%s app tag %#06x",
				o->verify && io.checked > io.escaped ? " with" : ",", o->app_tag);
		if (o->verify && io.escaped) {
			fputs("; ", io.info);
			print_unchecked(io.info, io.escaped);
		}
		fputc('\n', io.info);
	}
	if (io.out_fd > 1 && close(io.out_fd) < 0)
		die(EXIT_IO, errno, "closing %s", o->output);
	dev_close(&d);
	return EXIT_OK;
}

/* ---- tag get / tag set ---- */

static uint64_t be_get(const unsigned char *p, int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | *p++;
	return v;
}

/* One request at a time: read with PI; for set, rewrite app tags and write. */
/*
 * Submit @r on @d and wait for it (tag get and set, one request at a
 * time); exits on a SUBMIT or WAIT that fails, naming @what.
 */
static void tag_run(struct dev *d, struct dio_request *r, const char *what)
{
	struct dio_request *rp = r;

	if (sys_dio_submit(d->ctx, &rp, 1) != 1)
		die_errno(errno, "sys_dio_submit (%s) on %s", what, d->path);
	if (sys_dio_wait(d->ctx, &rp, 1, NULL) != 1)
		die(EXIT_IO, errno, "sys_dio_wait");
}

static int cmd_tag(const char *path, bool set, const struct opts *o)
{
	struct dio_features f;
	struct dev d;
	const struct dio_query *q;
	struct dio_request r;
	unsigned char *data, *md, *t;
	uint64_t unit, req, lba, n, k, gs;
	size_t mdlen;
	double t0 = now_s();

	get_features(&f);
	dev_open(&d, path, set);
	q = &d.q;
	if (!(f.features & DIO_FEAT_PI))
		die(EXIT_NOTSUP, EOPNOTSUPP, "the loaded dio_batch module has no PI support");
	if (!d.has_pi)
		die(EXIT_NOTSUP, EOPNOTSUPP, "%s: no protection information (profile '%s')",
		    path, q->profile[0] ? q->profile : "none");
	unit = q->pi_interval;
	if (!o->have_lba || !o->have_count || !o->count)
		usage_error("tag %s needs --lba N and --count N (N > 0)", set ? "set" : "get");
	if (set && o->app_tag < 0)
		usage_error("tag set needs --app-tag T");
	if (o->lba > q->capacity / unit || o->count > q->capacity / unit - o->lba)
		usage_error("--lba %" PRIu64 " --count %" PRIu64 " go beyond the end of %s "
			    "(%" PRIu64 " protection intervals)", o->lba, o->count, path,
			    (uint64_t)q->capacity / unit);
	req = pick_req_size(&d, &f, o, unit, true);
	data = xalloc(req);
	md = xalloc(req / unit * q->pi_md_size);
	gs = q->pi_guard_type == DIO_GUARD_CRC64 ? 8 : 2;
	if (o->json) {
		j_begin(NULL);
		j_str("command", set ? "tag set" : "tag get");
		j_str("device", path);
		j_u64("lba", o->lba);
		j_u64("count", o->count);
		/* "interval": the size, as in 0.3.0 (deprecated: interval_size). */
		j_u64("interval", unit);
		j_u64("interval_size", unit);
		if (set) {
			j_u64("app_tag", o->app_tag);
			j_hex("app_tag_hex", o->app_tag);
		}
		j_abegin("tags");
	}
	for (lba = o->lba; lba < o->lba + o->count; lba += n) {
		n = o->lba + o->count - lba < req / unit ? o->lba + o->count - lba : req / unit;
		mdlen = n * q->pi_md_size;
		dio_req_prep_read(&r, d.h, data, n * unit, lba * unit);
		dio_req_set_pi(&r, md, mdlen, 0, 0, 0);
		tag_run(&d, &r, "read");
		if (r.result != (int64_t)(n * unit)) {
			int e = r.result < 0 ? (int)-r.result : EIO;

			/* With --json, die() ends the document with the error. */
			if (e == EILSEQ)
				print_pi_report(stderr, &d, lba * unit, &r);
			die_errno(e, "reading blocks %" PRIu64 "..%" PRIu64 " of %s%s", lba,
				  lba + n - 1, path, set ? " (no tag was changed there)" : "");
		}
		for (k = 0; k < n && set; k++) {
			t = md + k * q->pi_md_size + q->pi_offset;
			t[gs] = o->app_tag >> 8;
			t[gs + 1] = o->app_tag & 0xff;
		}
		if (set) {
			/* Data, guard and ref tag as read: the device checks them again. */
			dio_req_prep_write(&r, d.h, data, n * unit, lba * unit);
			dio_req_set_pi(&r, md, mdlen, 0, 0, 0);
			tag_run(&d, &r, "write");
		}
		if (set && r.result != (int64_t)(n * unit)) {
			int e = r.result < 0 ? (int)-r.result : EIO;

			if (e == EILSEQ)
				print_pi_report(stderr, &d, lba * unit, &r);
			die_errno(e, "rewriting blocks %" PRIu64 "..%" PRIu64 " of %s", lba,
				  lba + n - 1, path);
		}
		/* The tuples as read, or as written: listed once they are. */
		for (k = 0; k < n && (o->json || !set); k++) {
			t = md + k * q->pi_md_size + q->pi_offset;
			if (o->json) {
				j_begin(NULL);
				j_u64("lba", lba + k);
				j_u64("interval", seed_of(&d, (lba + k) * unit));
				j_hex("guard", be_get(t, gs));
				j_hex("app", be_get(t + gs, 2));
				j_hex("ref", be_get(t + gs + 2, q->pi_ref_tag_size));
				j_end();
				continue;
			}
			printf("lba %" PRIu64 "  interval %" PRIu64 "  guard %#0*" PRIx64
			       "  app %#06" PRIx64 "  ref %#0*" PRIx64 "\n", lba + k,
			       seed_of(&d, (lba + k) * unit), (int)(gs * 2 + 2),
			       be_get(t, gs), be_get(t + gs, 2),
			       (int)(q->pi_ref_tag_size * 2 + 2),
			       be_get(t + gs + 2, q->pi_ref_tag_size));
		}
	}
	if (o->json) {
		j_aend();
		j_dbl("seconds", now_s() - t0);
		j_str("status", status_name(EXIT_OK));
		j_u64("exit_code", EXIT_OK);
		j_null("error");
		j_null("message");
		j_end();
		j_done();
	} else if (set) {
		printf("set app tag %#06x on %" PRIu64 " block%s of %s from lba %" PRIu64
		       " (data, guard and ref tag unchanged)\n", o->app_tag, o->count,
		       o->count == 1 ? "" : "s", path, o->lba);
	}
	dev_close(&d);
	return EXIT_OK;
}

/* ---- command line ---- */

static void usage(FILE *out)
{
	fputs("usage: dioctl [-h] [-V] COMMAND [OPTIONS] [DEVICE]\n"
	      "  features                   what the loaded dio_batch module supports\n"
	      "  query DEVICE               geometry and PI format of a block device\n"
	      "  stat DEVICE                what the module did to a device: counts\n"
	      "  write DEVICE -s OFF -l LEN [--pattern B|--random SEED|-i FILE] [-p] [-a T]\n"
	      "  read DEVICE [-s OFF] [-l LEN] [-p] [-v] [--raw] [--dump] [-a T] [--output FILE]\n"
	      "  scrub DEVICE [-r START:END] [-d N] [-b N] [-a T -m M] [--rate MB/s]\n"
	      "        [--repair-from SOURCE [--dry-run]]\n"
	      "  tag get DEVICE -L LBA -n COUNT\n"
	      "  tag set DEVICE -L LBA -n COUNT -a T\n"
	      "Every command takes -j (--json, -o json) and -h (--help: its own options).\n"
	      "Numbers may be hex (0x...) and take K, M, G, T suffixes (KiB, MiB, GiB, TiB).\n"
	      "Exit status: 0 success, 1 usage error, 2 module or device cannot be reached\n"
	      "or opened, 3 I/O error, 4 PI failure found, 5 not supported by module or\n"
	      "device, 130 scrub interrupted.  See dioctl(1).\n", out);
}

static const char help_common[] =
	"  -j, --json              print one JSON document on stdout (dioctl(1): schema)\n"
	"  -o, --output-format F   'json' (as --json) or 'normal'\n"
	"  -h, --help              this help\n";

static const char help_size[] =
	"  -d, --depth N           requests in flight (default 8)\n"
	"  -b, --request-size N    bytes per request (default 1M, within the device's\n"
	"                          max_io_bytes and the module's max_pi_bytes)\n";

static void cmd_help(const char *cmd)
{
	if (!strcmp(cmd, "features")) {
		printf("usage: dioctl features [-j]\n"
		       "What the loaded module supports: ABI version, features, flag masks,\n"
		       "opcodes and limits (sys_dio_features).\n%s", help_common);
	} else if (!strcmp(cmd, "query")) {
		printf("usage: dioctl query DEVICE [-j]\n"
		       "The device's geometry and PI format (sys_dio_query).\n%s", help_common);
	} else if (!strcmp(cmd, "stat")) {
		printf("usage: dioctl stat DEVICE [-j]\n"
		       "What the module did to the device since it was loaded, for every context\n"
		       "and handle (sys_dio_counters, DIO_COUNTERS_DEVICE): completed reads,\n"
		       "writes and flushes, bytes, I/O errors, requests refused, PI failures by\n"
		       "tag and by who found them.  Works while another context holds the device.\n"
		       "%s", help_common);
	} else if (!strcmp(cmd, "write")) {
		printf("usage: dioctl write DEVICE -s OFFSET [-l LENGTH] [DATA] [-p] [-a T]\n"
		       "                    [-d N] [-b N] [--fua] [-j]\n"
		       "Write LENGTH bytes at OFFSET, N requests in flight, with bounded memory.\n"
		       "  -s, --offset N          where, in bytes (default 0)\n"
		       "  -l, --length N          how much (default: the whole --input file)\n"
		       "  --random SEED           DATA: pseudo-random bytes of SEED and offset\n"
		       "                          (default: --random 0)\n"
		       "  --pattern BYTE          DATA: every byte BYTE\n"
		       "  -i, --input FILE        DATA: from FILE, '-' for stdin (streamed)\n"
		       "  -p, --pi                generate PI with libdioctl (ref tags from the disk's\n"
		       "                          start); the device checks it\n"
		       "  -a, --app-tag T         the 16-bit app tag to write (implies --pi)\n"
		       "  --fua                   forced unit access\n"
		       "  --batch N               (old) LENGTH as N requests in flight together\n"
		       "%s%s", help_size, help_common);
	} else if (!strcmp(cmd, "read")) {
		printf("usage: dioctl read DEVICE [-s OFFSET] [-l LENGTH] [-p] [-v] [--raw] [--dump]\n"
		       "                   [-a T [-m M]] [--output FILE] [-d N] [-b N] [-j]\n"
		       "Read LENGTH bytes at OFFSET, N requests in flight, with bounded memory.\n"
		       "  -s, --offset N          where, in bytes (default 0)\n"
		       "  -l, --length N          how much (default: to the end of the device)\n"
		       "  -p, --pi                fetch the device's PI with the data\n"
		       "  -v, --verify            check every tuple with dio_pi_verify (implies --pi)\n"
		       "  -a, --app-tag T         with --verify: the app tag expected\n"
		       "  -m, --app-mask M        bits of T compared (default 0xffff)\n"
		       "  --raw                   a raw read: nobody checks PI (DIO_PI_NOCHECK)\n"
		       "  --dump                  print each tuple (implies --pi)\n"
		       "  -O, --output FILE       write the data to FILE, '-' for stdout (then\n"
		       "                          messages go to stderr)\n"
		       "%s%s", help_size, help_common);
	} else if (!strcmp(cmd, "scrub")) {
		printf("usage: dioctl scrub DEVICE [-r START:END] [-d N] [-b N] [-a T -m M]\n"
		       "                    [--rate MB/s] [--repair-from SOURCE [--dry-run]] [-j]\n"
		       "Read the whole device (or a range) with its PI, verify every tuple with\n"
		       "libdioctl, continue past bad blocks, and report every failing block.\n"
		       "Progress on stderr when it is a terminal; one final line otherwise.\n"
		       "SIGINT stops it and prints the report so far.\n"
		       "  -r, --range START:END   bytes, END exclusive; either may be left out\n"
		       "  -a, --app-tag T         also check app tags against T\n"
		       "  -m, --app-mask M        bits of T compared (default 0xffff)\n"
		       "  --rate MB/s             read at most this many MB (10^6 bytes) a second\n"
		       "  --max-report N          failures listed (default 100000; the rest counted)\n"
		       "  --repair-from SOURCE    rewrite each failing block from a good copy: a\n"
		       "                          device, an image file, or '-' (stdin, a stream from\n"
		       "                          START); written with PI and FUA only when the copy\n"
		       "                          verifies, then read back verified\n"
		       "  --dry-run               with --repair-from: check the copies, write nothing\n"
		       "%s%s", help_size, help_common);
	} else if (!strcmp(cmd, "tag")) {
		printf("usage: dioctl tag get DEVICE -L LBA -n COUNT [-j]\n"
		       "       dioctl tag set DEVICE -L LBA -n COUNT -a T\n"
		       "get: print the PI tuples (guard, app, ref) of COUNT blocks from LBA.\n"
		       "set: rewrite the app tags of existing blocks in place: each block is read\n"
		       "with its PI (the device checks it) and written back with the same data,\n"
		       "guard and ref tag and the new app tag (the device checks them again).\n"
		       "  -L, --lba N             first protection interval, from the device's start\n"
		       "  -n, --count N           how many\n"
		       "  -a, --app-tag T         (set) the new app tag\n"
		       "  -b, --request-size N    bytes per request (default 1M)\n"
		       "%s", help_common);
	} else {
		usage(stdout);
	}
}

/* Long-only options: values below ' ', so that takes() lists them as characters. */
enum { OPT_PATTERN = 1, OPT_RANDOM, OPT_FUA, OPT_RAW, OPT_DUMP, OPT_BATCH,
       OPT_RATE, OPT_MAX_REPORT, OPT_REPAIR_FROM, OPT_DRY_RUN };

static const struct option longopts[] = {
	{ "offset", required_argument, NULL, 's' },
	{ "length", required_argument, NULL, 'l' },
	{ "pattern", required_argument, NULL, OPT_PATTERN },
	{ "random", required_argument, NULL, OPT_RANDOM },
	{ "input", required_argument, NULL, 'i' },
	{ "output", required_argument, NULL, 'O' },
	{ "pi", no_argument, NULL, 'p' },
	{ "app-tag", required_argument, NULL, 'a' },
	{ "app-mask", required_argument, NULL, 'm' },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "depth", required_argument, NULL, 'd' },
	{ "request-size", required_argument, NULL, 'b' },
	{ "fua", no_argument, NULL, OPT_FUA },
	{ "verify", no_argument, NULL, 'v' },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "dump", no_argument, NULL, OPT_DUMP },
	{ "range", required_argument, NULL, 'r' },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "max-report", required_argument, NULL, OPT_MAX_REPORT },
	{ "repair-from", required_argument, NULL, OPT_REPAIR_FROM },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "lba", required_argument, NULL, 'L' },
	{ "count", required_argument, NULL, 'n' },
	{ "json", no_argument, NULL, 'j' },
	{ "output-format", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* Which options each command takes (short letters; long-only ones as \001...). */
static bool takes(const char *cmd, int c)
{
	static const struct { const char *cmd, *opts; } t[] = {
		{ "features", "joh" },
		{ "query", "joh" },
		{ "stat", "joh" },
		/* OPT_PATTERN, OPT_RANDOM, OPT_FUA, OPT_BATCH */
		{ "write", "joh" "slipadb" "\001\002\003\006" },
		/* OPT_RAW, OPT_DUMP, OPT_BATCH */
		{ "read", "joh" "slpamvdbO" "\004\005\006" },
		/* OPT_RATE, OPT_MAX_REPORT, OPT_REPAIR_FROM, OPT_DRY_RUN */
		{ "scrub", "joh" "ramdb" "\007\010\011\012" },
		{ "tag", "joh" "Lnab" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(cmd, t[i].cmd))
			return c > 0 && c < 256 && strchr(t[i].opts, c) != NULL;
	return false;
}

static void parse_range(struct opts *o, const char *s)
{
	const char *colon = strchr(s, ':');
	char buf[64];

	if (!colon || (size_t)(colon - s) >= sizeof(buf))
		usage_error("--range takes START:END (bytes; END exclusive; either may be empty)");
	memcpy(buf, s, colon - s);
	buf[colon - s] = 0;
	o->range_start = buf[0] ? parse_num(buf, "--range start") : 0;
	o->range_to_end = !colon[1];
	o->range_end = colon[1] ? parse_num(colon + 1, "--range end") : 0;
	if (!o->range_to_end && o->range_end <= o->range_start)
		usage_error("--range %s: END must be above START", s);
	o->have_range = true;
}

static void parse_opt(struct opts *o, int c)
{
	uint64_t v;

	switch (c) {
	case 's': o->offset = parse_num(optarg, "--offset"); o->have_offset = true; break;
	case 'l': o->length = parse_num(optarg, "--length"); o->have_length = true; break;
	case OPT_PATTERN:
	case OPT_RANDOM:
	case 'i':
		if (o->have_data)
			usage_error("give one of --pattern, --random and --input");
		o->have_data = true;
		if (c == 'i') {
			o->input = optarg;
			break;
		}
		v = parse_num(optarg, c == OPT_PATTERN ? "--pattern" : "--random");
		if (c == OPT_PATTERN && v > 0xff)
			usage_error("--pattern takes one byte (0..0xff)");
		o->random = c == OPT_RANDOM;
		o->seed = v;
		o->pattern = (unsigned char)v;
		break;
	case 'O': o->output = optarg; break;
	case 'a':
		v = parse_num(optarg, "--app-tag");
		if (v > 0xffff)
			usage_error("--app-tag takes 16 bits (0..0xffff)");
		o->app_tag = (int)v;
		o->pi = true;
		break;
	case 'm':
		v = parse_num(optarg, "--app-mask");
		if (v > 0xffff)
			usage_error("--app-mask takes 16 bits (0..0xffff)");
		o->app_mask = (unsigned int)v;
		break;
	case OPT_BATCH:
		v = parse_num(optarg, "--batch");
		if (!v || v > 65536)
			usage_error("--batch takes 1 to 65536");
		o->batch = (unsigned int)v;
		break;
	case 'd':
		v = parse_num(optarg, "--depth");
		if (!v || v > 65536)
			usage_error("--depth takes 1 to 65536");
		o->depth = (unsigned int)v;
		break;
	case 'b':
		o->req_size = parse_num(optarg, "--request-size");
		if (!o->req_size)
			usage_error("--request-size must not be 0");
		break;
	case 'p': o->pi = true; break;
	case OPT_FUA: o->fua = true; break;
	case 'v': o->verify = o->pi = true; break;
	case OPT_RAW: o->raw = o->pi = true; break;
	case OPT_DUMP: o->dump = o->pi = true; break;
	case 'r': parse_range(o, optarg); break;
	case OPT_RATE: {
		char *end;

		errno = 0;
		o->rate = strtod(optarg, &end);
		if (errno || end == optarg || *end || !(o->rate > 0))
			usage_error("bad --rate '%s' (MB/s, above 0)", optarg);
		break;
	}
	case OPT_MAX_REPORT:
		v = parse_num(optarg, "--max-report");
		o->max_report = v > 10000000 ? 10000000 : (unsigned int)v;
		break;
	case OPT_REPAIR_FROM: o->repair_from = optarg; break;
	case OPT_DRY_RUN: o->dry_run = true; break;
	case 'L': o->lba = parse_num(optarg, "--lba"); o->have_lba = true; break;
	case 'n': o->count = parse_num(optarg, "--count"); o->have_count = true; break;
	case 'j': o->json = true; break;
	case 'o':
		if (!strcmp(optarg, "json"))
			o->json = true;
		else if (!strcmp(optarg, "normal"))
			o->json = false;
		else
			usage_error("-o takes 'json' or 'normal', not '%s'", optarg);
		break;
	}
}

#define OPTSTRING "s:l:i:O:pa:m:d:b:vr:L:n:jo:h"

/*
 * Whether the command line asks for JSON (-j, --json, -o json): looked
 * for before anything is checked, so that every failure, a bad command
 * line's too, prints its error document.  The last of -j and -o wins, as
 * in parse_opt().
 */
static bool wants_json(int argc, char **argv)
{
	char **copy = calloc(argc + 1, sizeof(*copy));
	bool json = false;
	int c;

	if (!copy)
		return false;
	/* A copy: getopt_long() permutes what it parses. */
	memcpy(copy, argv, argc * sizeof(*copy));
	opterr = 0;
	optind = 0;
	while ((c = getopt_long(argc, copy, OPTSTRING, longopts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'o' && optarg)
			json = !strcmp(optarg, "json");
	}
	optind = 0;
	free(copy);
	return json;
}

int main(int argc, char **argv)
{
	struct opts o = { .app_tag = -1, .app_mask = 0xffff, .depth = 8, .random = true,
			  .max_report = 100000 };
	const char *cmd = argc > 1 ? argv[1] : NULL;
	const char *sub = NULL;
	int c, li = -1, skip = 1;

	signal(SIGPIPE, SIG_IGN);	/* a closed pipe is EPIPE: exit status 3 */
	if (!cmd) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		printf("dioctl %s (dio_batch ABI %u)\n", DIO_BATCH_VERSION,
		       DIO_BATCH_ABI_VERSION);
		return EXIT_OK;
	}
	j_set_mode(wants_json(argc, argv));
	if (!strcmp(cmd, "tag") && argc > 2 && (!strcmp(argv[2], "get") || !strcmp(argv[2], "set")))
		skip = 2;
	if (!takes(cmd, 'h'))
		usage_error("unknown command '%s' (try dioctl -h)", cmd);
	o.cmd = cmd;
	o.write = !strcmp(cmd, "write");
	j_set_command(skip == 2 ? (!strcmp(argv[2], "get") ? "tag get" : "tag set") : cmd);
	if (!strcmp(cmd, "tag")) {
		sub = argc > 2 ? argv[2] : "";
		if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
			cmd_help(cmd);
			return EXIT_OK;
		}
		if (strcmp(sub, "get") && strcmp(sub, "set"))
			usage_error("tag takes 'get' or 'set' (try dioctl tag --help)");
	}
	/* The command's own arguments, argv[skip] acting as argv[0]; GNU
	 * getopt lets options follow the device too. */
	opterr = 0;
	while ((c = getopt_long(argc - skip, argv + skip, OPTSTRING, longopts, &li)) != -1) {
		if (c == 'h') {
			cmd_help(cmd);
			return EXIT_OK;
		}
		if (c == '?' || c == ':')
			usage_error("%s: unknown option or missing value: '%s' (try dioctl %s "
				    "--help)", cmd, argv[skip + optind - 1], cmd);
		if (!takes(cmd, c)) {
			char so[3] = { '-', (char)c, 0 };

			usage_error("%s: '%s%s' is not an option of this command (try dioctl "
				    "%s --help)", cmd, li >= 0 ? "--" : "",
				    li >= 0 ? longopts[li].name : so, cmd);
		}
		parse_opt(&o, c);
		li = -1;
	}
	argc -= optind + skip;
	argv += optind + skip;
	if (!strcmp(cmd, "features")) {
		if (argc)
			usage_error("features takes no arguments");
		return cmd_features(&o);
	}
	if (argc != 1)
		usage_error("%s needs exactly one DEVICE (try dioctl %s --help)", cmd, cmd);
	j_set_device(argv[0]);
	if (!strcmp(cmd, "query"))
		return cmd_query(argv[0], &o);
	if (!strcmp(cmd, "stat"))
		return cmd_stat(argv[0], &o);
	if (!strcmp(cmd, "scrub"))
		return cmd_scrub(argv[0], &o);
	if (!strcmp(cmd, "tag"))
		return cmd_tag(argv[0], !strcmp(sub, "set"), &o);
	if (o.write && o.output)
		usage_error("--output is an option of 'read'");
	if (o.output && !strcmp(o.output, "-") && (o.json || o.dump))
		usage_error("--output - puts the data on stdout: no --json or --dump with it");
	return cmd_io(argv[0], &o);
}
