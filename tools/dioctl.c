// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dioctl: the command-line tool of dio_batch.
 *
 *   dioctl features
 *   dioctl query DEVICE
 *   dioctl write DEVICE --offset N --length N [--pattern BYTE|--random SEED]
 *                       [--pi] [--app-tag T] [--batch N] [--fua]
 *   dioctl read DEVICE --offset N --length N [--pi] [--verify] [--raw]
 *                      [--dump] [--app-tag T] [--batch N]
 *
 * Every command works in a private context of its own.  Exit status: 0 on
 * success, 1 on failure, with one line on stderr naming the errno.  See
 * dioctl(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dioctl.h"

/* ---- messages ---- */

static const char *err_text(int e)
{
	/* glibc's text for EILSEQ is about multibyte characters. */
	return e == EILSEQ ? "protection information check failed" : strerror(e);
}

/* Print "dioctl: WHAT: TEXT (ENAME)" (no errno part when @e is 0), exit 1. */
static void __attribute__((noreturn, format(printf, 2, 3)))
fail(int e, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("dioctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (e)
		fprintf(stderr, ": %s (%s)", err_text(e), strerrorname_np(e) ?: "?");
	fputc('\n', stderr);
	exit(1);
}

static void usage(FILE *out)
{
	fputs("usage: dioctl [-h] COMMAND [ARGS]\n"
	      "  features                  what the loaded dio_batch module supports\n"
	      "  query DEVICE              geometry and PI format of a block device\n"
	      "  write DEVICE --offset N --length N [--pattern BYTE | --random SEED]\n"
	      "               [--pi] [--app-tag T] [--batch N] [--fua]\n"
	      "  read DEVICE --offset N --length N [--pi] [--verify] [--raw] [--dump]\n"
	      "              [--app-tag T] [--batch N]\n"
	      "Numbers may be hex (0x...) and take K, M, G suffixes (KiB, MiB, GiB).\n"
	      "Exit status 0 on success, 1 on failure.  See dioctl(1).\n", out);
}

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

static const char *tag_name(unsigned int t)
{
	static const char *const n[] = { "none", "guard", "app", "ref" };

	return t < 4 ? n[t] : "unknown";
}

static const char *source_name(unsigned int s)
{
	static const char *const n[] = {
		"unknown", "user (DIO_PI_VERIFY_USER, before submission)",
		"module (dio_batch verified what it read)",
		"device (the device or block layer refused the I/O)",
	};

	return s < 4 ? n[s] : "unknown";
}

/* ---- numbers ---- */

/* "64K", "0x1000", "2M": bytes; fails on garbage and overflow. */
static uint64_t parse_num(const char *s, const char *what)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		fail(EINVAL, "bad %s '%s'", what, s);
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (shift && !strcmp(end, "iB"))
		end += 2;
	if (*end || (v << shift) >> shift != v)
		fail(EINVAL, "bad %s '%s'", what, s);
	return v << shift;
}

/* splitmix64: the --random data of a byte offset depends only on it. */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* ---- features ---- */

static void get_features(struct dio_features *f)
{
	if (sys_dio_features(f) < 0)
		fail(errno, "cannot reach /dev/" DIO_BATCH_DEVNAME
		     " (is the dio_batch module loaded?)");
}

static int cmd_features(void)
{
	static const struct bitname feat[] = {
		{ DIO_FEAT_CONTEXTS, "contexts" }, { DIO_FEAT_BATCH_IO, "batch-io" },
		{ DIO_FEAT_PI, "pi" }, { DIO_FEAT_PI_REPORT, "pi-report" }, { 0, NULL }
	};
	static const struct bitname init[] = {
		{ DIO_CREAT, "creat" }, { DIO_EXCL, "excl" }, { DIO_PRIVATE, "private" },
		{ 0, NULL }
	};
	static const struct bitname open[] = { { DIO_OPEN_NOCLAIM, "noclaim" }, { 0, NULL } };
	static const struct bitname req[] = {
		{ DIO_REQ_FUA, "fua" }, { DIO_REQ_IOVEC, "iovec" }, { DIO_REQ_PI, "pi" },
		{ 0, NULL }
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
	if (!(f.features & DIO_FEAT_PI))
		printf("note: no PI support in this module: --pi requests fail with EOPNOTSUPP\n");
	return 0;
}

/* ---- devices ---- */

struct dev {
	const char		*path;
	int			fd, ctx, h;
	struct dio_query	q;
	struct dio_pi_profile	p;
	bool			has_pi;		/* @p is valid */
	uint64_t		start;		/* partition start, bytes */
};

/* Byte offset of a partition in its disk (0 for a whole disk). */
static uint64_t part_start(const struct dev *d)
{
	unsigned long long sectors = 0;
	char path[64];
	struct stat st;
	FILE *f;

	if (fstat(d->fd, &st) < 0)
		fail(errno, "stat %s", d->path);
	if (!S_ISBLK(st.st_mode))
		fail(ENOTBLK, "%s", d->path);
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/start",
		 major(st.st_rdev), minor(st.st_rdev));
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &sectors) != 1)
		sectors = 0;
	fclose(f);
	return sectors * 512;
}

static void dev_open(struct dev *d, const char *path, bool writable)
{
	memset(d, 0, sizeof(*d));
	d->path = path;
	d->fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (d->fd < 0)
		fail(errno, "open %s", path);
	d->start = part_start(d);
	d->ctx = sys_dio_init(0, DIO_PRIVATE);
	if (d->ctx < 0)
		fail(errno, "sys_dio_init");
	d->h = sys_dio_open(d->ctx, d->fd, 0);
	if (d->h < 0)
		fail(errno, "sys_dio_open %s%s", path, errno == EBUSY ?
		     " (mounted, or held by md/dm or another context?)" : "");
	if (sys_dio_query(d->ctx, d->h, &d->q) < 0)
		fail(errno, "sys_dio_query %s", path);
	d->has_pi = dio_pi_profile_from_query(&d->q, &d->p) == 0;
}

static void dev_close(struct dev *d)
{
	sys_dio_close(d->ctx, d->h);
	sys_dio_exit(d->ctx);
	close(d->fd);
}

static int cmd_query(const char *path)
{
	struct dio_features f;
	struct dev d;
	const struct dio_query *q = &d.q;

	get_features(&f);
	dev_open(&d, path, false);
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
	return 0;
}

/* ---- I/O ---- */

struct io_opts {
	bool		write;
	uint64_t	offset, length;
	bool		have_offset, have_length;
	bool		random;		/* else pattern */
	uint64_t	seed;
	unsigned char	pattern;
	bool		pi, verify, raw, dump, fua;
	int		app_tag;	/* -1: none */
	unsigned int	batch;
};

/* The I/O of one command: @n requests of @chunk bytes each. */
struct io {
	struct dev		*d;
	const struct io_opts	*o;
	size_t			chunk, md_chunk;	/* data, PI bytes per request */
	unsigned int		n;
	unsigned char		*data, *md;	/* md: pi_md_size per interval */
	struct dio_request	*reqs;
	struct dio_request	**ptrs;
};

/* Reference number of the interval at byte @off of the device. */
static uint64_t seed_of(const struct dev *d, uint64_t off)
{
	return (d->start + off) / d->q.pi_interval;
}

static void fill_data(unsigned char *buf, size_t len, uint64_t off,
		      const struct io_opts *o)
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

/*
 * A request's PI buffer holds pi_md_size bytes per interval with the tuple
 * at pi_offset; libdioctl reads and writes the tuples in place, and leaves
 * the bytes beyond them (zero here) alone.
 */
static const unsigned char *md_tuple(const struct io *io, size_t k)
{
	const struct dio_query *q = &io->d->q;

	return io->md + k * q->pi_md_size + q->pi_offset;
}

static void *xalloc(size_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len ? len : 1))
		fail(ENOMEM, "allocating %zu bytes", len);
	memset(p, 0, len);
	return p;
}

/* Check the options against the module and the device; size the I/O. */
static void io_plan(struct io *io, const struct dio_features *f)
{
	const struct io_opts *o = io->o;
	const struct dio_query *q = &io->d->q;
	uint64_t unit = o->pi ? q->pi_interval : q->logical_block_size;

	if (o->pi && !(f->features & DIO_FEAT_PI))
		fail(EOPNOTSUPP, "the loaded dio_batch module has no PI support yet "
		     "(DIO_FEAT_PI not reported); retry without --pi");
	if (o->raw && !(f->pi_flags & DIO_PI_NOCHECK))
		fail(EOPNOTSUPP, "the loaded dio_batch module has no raw reads (DIO_PI_NOCHECK)");
	if (o->pi && !io->d->has_pi)
		fail(EOPNOTSUPP, "%s: no protection information this tool can handle (profile '%s')",
		     io->d->path, q->profile[0] ? q->profile : "none");
	if (!o->length || o->offset % unit || o->length % unit)
		fail(EINVAL, "--offset and --length must be multiples of %" PRIu64
		     " (%s) and the length non-zero", unit,
		     o->pi ? "the protection interval" : "the logical block size");
	if (!o->batch || o->batch > f->max_batch || o->length % o->batch ||
	    (o->length / o->batch) % unit)
		fail(EINVAL, "--batch %u: must split the length into at most %u requests "
		     "of whole %" PRIu64 "-byte units", o->batch, f->max_batch, unit);
	io->n = o->batch;
	io->chunk = o->length / o->batch;
	if (io->chunk > q->max_io_bytes)
		fail(EINVAL, "requests of %zu bytes exceed the device's %u; raise --batch",
		     io->chunk, q->max_io_bytes);
	if (o->pi) {
		io->md_chunk = io->chunk / q->pi_interval * q->pi_md_size;
		if (io->md_chunk > f->max_pi_bytes)
			fail(EINVAL, "requests need %zu bytes of PI, more than the module's %u; "
			     "raise --batch", io->md_chunk, f->max_pi_bytes);
	}
}

static void io_alloc(struct io *io)
{
	const struct dio_query *q = &io->d->q;
	size_t intervals = io->o->pi ? io->o->length / q->pi_interval : 0;

	io->data = xalloc(io->o->length);
	io->reqs = calloc(io->n, sizeof(*io->reqs));
	io->ptrs = calloc(io->n, sizeof(*io->ptrs));
	if (!io->reqs || !io->ptrs)
		fail(ENOMEM, "allocating %u requests", io->n);
	if (!io->o->pi)
		return;
	io->md = xalloc(intervals * q->pi_md_size);
}

static void io_prep(struct io *io)
{
	const struct io_opts *o = io->o;
	unsigned int flags = o->raw ? DIO_PI_NOCHECK : 0;
	struct dio_request *r;
	uint64_t off;
	unsigned int k;

	for (k = 0; k < io->n; k++) {
		r = &io->reqs[k];
		off = o->offset + (uint64_t)k * io->chunk;
		if (o->write)
			dio_req_prep_write(r, io->d->h, io->data + k * io->chunk,
					   io->chunk, off);
		else
			dio_req_prep_read(r, io->d->h, io->data + k * io->chunk,
					  io->chunk, off);
		if (o->fua)
			r->flags |= DIO_REQ_FUA;
		if (o->pi && dio_req_set_pi(r, io->md + k * io->md_chunk,
					    io->md_chunk, flags, 0, 0) < 0)
			fail(errno, "dio_req_set_pi");
		r->cookie = k;
		io->ptrs[k] = r;
	}
}

/* Write: the data, and its PI generated as the device expects it. */
static void io_generate(struct io *io)
{
	const struct io_opts *o = io->o;
	struct dio_pi_params a = { .app_tag = o->app_tag < 0 ? 0 : o->app_tag };

	fill_data(io->data, o->length, io->d->start + o->offset, o);
	if (!o->pi)
		return;
	a.seed = seed_of(io->d, o->offset);
	if (dio_pi_generate(&io->d->p, io->data, o->length, io->md, &a) < 0)
		fail(errno, "dio_pi_generate");
}

/* The module's report of a PI failure (result -EILSEQ). */
static void print_pi_report(const struct io *io, const struct dio_request *r)
{
	uint64_t first = seed_of(io->d, io->o->offset);

	if (r->pi_err_interval == DIO_PI_INTERVAL_UNKNOWN) {
		printf("PI error: the device refused this I/O, and no block of it "
		       "could be found to fail when read again\n"
		       "  found by: %s\n", source_name(r->pi_err_source));
		return;
	}
	printf("PI error: block %" PRIu64 " of this I/O (interval %" PRIu64
	       " of the disk, byte offset %" PRIu64 " of %s)\n",
	       (uint64_t)r->pi_err_interval - first, (uint64_t)r->pi_err_interval,
	       (uint64_t)(io->o->offset + (r->pi_err_interval - first) * io->d->q.pi_interval),
	       io->d->path);
	if (r->pi_err_tag == DIO_PI_TAG_NONE)
		printf("  tag:      not known (the device refused the block and this "
		       "kernel cannot read it raw)\n");
	else
		printf("  tag:      %s\n  expected: %#" PRIx64 "\n  actual:   %#" PRIx64 "\n",
		       tag_name(r->pi_err_tag), (uint64_t)r->pi_err_expected,
		       (uint64_t)r->pi_err_actual);
	printf("  found by: %s\n", source_name(r->pi_err_source));
}

static void explain_submit_error(const struct io *io, int e)
{
	unsigned int caps = io->d->q.pi_caps;

	if (e == EOPNOTSUPP && io->o->raw && !(caps & DIO_PI_CAP_NOCHECK))
		fail(e, "raw read refused: %s cannot skip the device's PI checks on "
		     "this kernel (no DIO_PI_CAP_NOCHECK)", io->d->path);
	if (e == EOPNOTSUPP && io->o->pi)
		fail(e, "PI request refused by the module for %s", io->d->path);
	if (e == EILSEQ)
		print_pi_report(io, io->ptrs[0]);
	fail(e, "sys_dio_submit on %s", io->d->path);
}

static void io_run(struct io *io)
{
	unsigned int done = 0;
	int ret;

	while (done < io->n) {
		ret = sys_dio_submit(io->d->ctx, io->ptrs + done, io->n - done);
		if (ret < 0) {
			/* Reported on the failing request: make it ptrs[0]. */
			io->ptrs += done;
			explain_submit_error(io, errno);
		}
		done += ret;
	}
	ret = sys_dio_wait(io->d->ctx, io->ptrs, io->n, NULL);
	if (ret < 0)
		fail(errno, "sys_dio_wait");
	if ((unsigned int)ret != io->n)
		fail(EIO, "sys_dio_wait reported %d of %u requests", ret, io->n);
}

static void dump_tuples(const struct io *io, size_t first_iv, size_t n)
{
	const struct dio_query *q = &io->d->q;
	unsigned int ts = q->pi_tuple_size, gs = ts == 16 ? 8 : 2, i;
	uint64_t seed = seed_of(io->d, io->o->offset);
	const unsigned char *t;
	size_t k;

	for (k = first_iv; k < first_iv + n; k++) {
		t = md_tuple(io, k);
		printf("  block %4zu  interval %8" PRIu64 "  guard ", k, seed + k);
		for (i = 0; i < gs; i++)
			printf("%02x", t[i]);
		printf("  app %02x%02x  ref ", t[gs], t[gs + 1]);
		for (i = gs + 2; i < ts; i++)
			printf("%02x", t[i]);
		putchar('\n');
	}
}

/* Check fetched PI with libdioctl; returns false after printing a failure. */
static bool verify_tuples(const struct io *io, size_t first_iv, size_t n)
{
	const struct dio_query *q = &io->d->q;
	const struct io_opts *o = io->o;
	struct dio_pi_params a = {
		.seed = seed_of(io->d, o->offset) + first_iv,
		.app_tag = o->app_tag < 0 ? 0 : o->app_tag,
		.app_mask = 0xffff,
		.chk_flags = DIO_PI_CHK_GUARD,
	};
	struct dio_pi_error e;

	if (q->pi_type != 3)
		a.chk_flags |= DIO_PI_CHK_REFTAG;
	if (o->app_tag >= 0)
		a.chk_flags |= DIO_PI_CHK_APPTAG;
	if (!dio_pi_verify(&io->d->p, io->data + first_iv * q->pi_interval,
			   n * q->pi_interval, io->md + first_iv * q->pi_md_size,
			   &a, &e))
		return true;
	if (errno != EILSEQ)
		fail(errno, "dio_pi_verify");
	printf("verify FAILED: block %" PRIu64 " of this I/O (interval %" PRIu64
	       " of the disk): %s tag expected %#" PRIx64 ", actual %#" PRIx64 "\n",
	       first_iv + e.interval, e.ref, tag_name(e.tag), e.expected, e.actual);
	return false;
}

/* Results of the completed requests; returns the first errno, or 0. */
static int io_results(struct io *io)
{
	const struct io_opts *o = io->o;
	size_t per = o->pi ? io->chunk / io->d->q.pi_interval : 0;
	const struct dio_request *r;
	bool valid;
	int err = 0;
	unsigned int k;

	for (k = 0; k < io->n; k++) {
		r = &io->reqs[k];
		if (r->result < 0 && !err)
			err = (int)-r->result;
		if (r->result == -EILSEQ)
			print_pi_report(io, r);
		else if (r->result < 0)
			printf("request %u (offset %" PRIu64 "): %s (%s)\n", k,
			       (uint64_t)r->offset, err_text(-r->result),
			       strerrorname_np(-r->result) ?: "?");
		/* What a read returned is whole unless the device refused it. */
		valid = r->result == (int64_t)io->chunk ||
			(r->result == -EILSEQ && r->pi_err_source == DIO_PI_SRC_MODULE);
		if (o->write || !o->pi || !valid)
			continue;
		if (o->dump)
			dump_tuples(io, k * per, per);
		if (o->verify && !verify_tuples(io, k * per, per) && !err)
			err = EILSEQ;
	}
	return err;
}

static int cmd_io(const char *path, const struct io_opts *o)
{
	struct dio_features f;
	struct dev d;
	struct io io = { .d = &d, .o = o };
	int err;

	get_features(&f);
	dev_open(&d, path, o->write);
	io_plan(&io, &f);
	io_alloc(&io);
	io_prep(&io);
	if (o->write)
		io_generate(&io);
	io_run(&io);
	err = io_results(&io);
	if (err)
		fail(err, "%s %" PRIu64 " bytes at offset %" PRIu64 " of %s",
		     o->write ? "write" : "read", o->length, o->offset, path);
	printf("%s %" PRIu64 " bytes at offset %" PRIu64 " %s %s in %u request%s",
	       o->write ? "wrote" : "read", o->length, o->offset,
	       o->write ? "to" : "from", path, io.n, io.n == 1 ? "" : "s");
	if (o->pi)
		printf("; PI %s for intervals %" PRIu64 "..%" PRIu64 "%s",
		       o->write ? "generated" : o->raw ? "read raw (NOCHECK)" : "fetched",
		       seed_of(&d, o->offset),
		       seed_of(&d, o->offset) + o->length / d.q.pi_interval - 1,
		       o->verify ? ", verified" : "");
	if (o->app_tag >= 0)
		printf(", app tag %#06x", o->app_tag);
	putchar('\n');
	dev_close(&d);
	return 0;
}

/* ---- command line ---- */

enum { OPT_OFFSET = 256, OPT_LENGTH, OPT_PATTERN, OPT_RANDOM, OPT_PI,
       OPT_APP_TAG, OPT_BATCH, OPT_FUA, OPT_VERIFY, OPT_RAW, OPT_DUMP };

static const struct option io_longopts[] = {
	{ "offset", required_argument, NULL, OPT_OFFSET },
	{ "length", required_argument, NULL, OPT_LENGTH },
	{ "pattern", required_argument, NULL, OPT_PATTERN },
	{ "random", required_argument, NULL, OPT_RANDOM },
	{ "pi", no_argument, NULL, OPT_PI },
	{ "app-tag", required_argument, NULL, OPT_APP_TAG },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "fua", no_argument, NULL, OPT_FUA },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "dump", no_argument, NULL, OPT_DUMP },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* Options only one of read and write takes. */
static void only_for(const struct io_opts *o, bool write, const char *opt)
{
	if (o->write != write)
		fail(EINVAL, "%s is an option of '%s' only", opt, write ? "write" : "read");
}

static void parse_io_opt(struct io_opts *o, int c, bool *have_data)
{
	uint64_t v;

	switch (c) {
	case OPT_OFFSET: o->offset = parse_num(optarg, "--offset"); o->have_offset = true; break;
	case OPT_LENGTH: o->length = parse_num(optarg, "--length"); o->have_length = true; break;
	case OPT_PATTERN:
	case OPT_RANDOM:
		only_for(o, true, c == OPT_PATTERN ? "--pattern" : "--random");
		if (*have_data)
			fail(EINVAL, "give one of --pattern and --random");
		*have_data = true;
		v = parse_num(optarg, c == OPT_PATTERN ? "--pattern" : "--random");
		if (c == OPT_PATTERN && v > 0xff)
			fail(EINVAL, "--pattern takes one byte (0..0xff)");
		o->random = c == OPT_RANDOM;
		o->seed = v;
		o->pattern = (unsigned char)v;
		break;
	case OPT_APP_TAG:
		v = parse_num(optarg, "--app-tag");
		if (v > 0xffff)
			fail(EINVAL, "--app-tag takes 16 bits (0..0xffff)");
		o->app_tag = (int)v;
		o->pi = true;
		break;
	case OPT_BATCH:
		v = parse_num(optarg, "--batch");
		o->batch = v > 1000000 ? 1000000 : (unsigned int)v;
		break;
	case OPT_PI: o->pi = true; break;
	case OPT_FUA: only_for(o, true, "--fua"); o->fua = true; break;
	case OPT_VERIFY: only_for(o, false, "--verify"); o->verify = o->pi = true; break;
	case OPT_RAW: only_for(o, false, "--raw"); o->raw = o->pi = true; break;
	case OPT_DUMP: only_for(o, false, "--dump"); o->dump = o->pi = true; break;
	}
}

int main(int argc, char **argv)
{
	struct io_opts o = { .app_tag = -1, .batch = 1, .random = true };
	const char *cmd = argc > 1 ? argv[1] : NULL;
	bool io_cmd, have_data = false;
	int c;

	if (!cmd) {
		usage(stderr);
		return 1;
	}
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		usage(stdout);
		return 0;
	}
	io_cmd = !strcmp(cmd, "read") || !strcmp(cmd, "write");
	if (!io_cmd && strcmp(cmd, "features") && strcmp(cmd, "query"))
		fail(EINVAL, "unknown command '%s' (try dioctl -h)", cmd);
	o.write = !strcmp(cmd, "write");
	/* Parse the command's own arguments, argv[1] acting as argv[0]. */
	opterr = 0;
	while ((c = getopt_long(argc - 1, argv + 1, "h", io_longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		}
		if (c == '?' || c == ':' || !io_cmd)
			fail(EINVAL, "%s: bad option or missing value: '%s' (try dioctl -h)",
			     cmd, argv[optind]);
		parse_io_opt(&o, c, &have_data);
	}
	argc -= optind + 1;
	argv += optind + 1;
	if (!strcmp(cmd, "features")) {
		if (argc)
			fail(EINVAL, "features takes no arguments");
		return cmd_features();
	}
	if (argc != 1)
		fail(EINVAL, "%s needs exactly one DEVICE (try dioctl -h)", cmd);
	if (!strcmp(cmd, "query"))
		return cmd_query(argv[0]);
	if (!o.have_offset || !o.have_length)
		fail(EINVAL, "%s needs --offset and --length", cmd);
	return cmd_io(argv[0], &o);
}
