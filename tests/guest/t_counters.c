// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * DIO_IOC_COUNTERS (ABI 5): exact counts after known I/O.  On a scsi_debug
 * DIF/DIX disk: reads, writes, a flush and their bytes; a guard the
 * caller's PI fails before submission (DIO_PI_VERIFY_USER: found by the
 * user, and refused), a wrong app tag (found by the module), a wrong ref
 * tag the disk refuses (found by the device), a block corrupted behind
 * its PI read raw with DIO_PI_CHK_GUARD (found by the module) and read
 * plainly (found by the device), a medium error (an I/O error); requests
 * SUBMIT refused with and without the handle found; and another handle's
 * counts untouched.  Every count
 * is compared after every step.  On NVMe namespace 1, the device's counts
 * since the module was loaded (DIO_COUNTERS_DEVICE) across two contexts'
 * handles, a block corrupted behind the namespace that the device refuses
 * (tag unknown before 6.14, guard from 6.14), one handle revoked, and a
 * handle made again starting at zero; each device count is compared with
 * the device's own read just before the step it checks, so that neither
 * earlier programs' I/O on that dev_t nor another context's between the
 * steps counts.  As a user who is not root (uid 1000, the
 * disk and /dev/dio_batch through a group): its own handle's counts and
 * its device's; root's keyed context refused to it, root's handle not
 * live in its own context, root's counts read only through root's
 * descriptor (which any holder may) and SUBMIT through it EXDEV.  dioctl
 * stat shows the same counts (jq on its -j document, which tests/vm/check.sh
 * validates on the host against tools/dioctl.schema.json: counters-json).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "dioctl_run.h"
#include "testlib.h"
#include "tl_dev.h"

#define LEN	(64 * 1024)
#define CTL_PATH	"/dev/" DIO_BATCH_DEVNAME
#define UID_USER	1000		/* a user who is not root */
#define GID_USER	1000
#define GID_DIO		4242		/* the group given the disk and CTL_PATH */
#define ROOT_KEY	0xc0c0a7e5ULL	/* root's context in test_user_counts() */

/* Each count of struct dio_counters, named, for the messages. */
static const struct {
	const char *name;
	size_t off;
} fields[] = {
#define F(f) { #f, offsetof(struct dio_counters, f) }
	F(reads), F(writes), F(flushes), F(read_bytes), F(write_bytes),
	F(io_errors), F(refused), F(pi_guard), F(pi_app), F(pi_ref),
	F(pi_unknown), F(pi_by_user), F(pi_by_module), F(pi_by_device),
#undef F
};
#define NFIELDS	(sizeof(fields) / sizeof(fields[0]))

static uint64_t field(const struct dio_counters *c, size_t i)
{
	uint64_t v;

	memcpy(&v, (const char *)c + fields[i].off, sizeof(v));
	return v;
}

/*
 * How many counts of @c are not @base (none when NULL) plus @want, each
 * printed, and one more when the PI failures by tag do not add up to
 * those by finder.  Also used in a child that is not root (no cmocka
 * assertion there).
 */
static int counts_differ(const char *what, const struct dio_counters *c,
			 const struct dio_counters *base,
			 const struct dio_counters *want)
{
	uint64_t got, exp;
	int bad = 0;
	size_t i;

	for (i = 0; i < NFIELDS; i++) {
		got = field(c, i);
		exp = (base ? field(base, i) : 0) + field(want, i);
		if (got != exp) {
			print_message("# %s: %s %llu, want %llu\n", what, fields[i].name,
				      (unsigned long long)got, (unsigned long long)exp);
			bad++;
		}
	}
	if (c->pi_guard + c->pi_app + c->pi_ref + c->pi_unknown !=
	    c->pi_by_user + c->pi_by_module + c->pi_by_device) {
		print_message("# %s: the PI failures by tag are not those by finder\n", what);
		bad++;
	}
	return bad;
}

/*
 * The counts of @h (with @flags) are @base plus @want, every one of them;
 * each that is not is printed.  The sum by tag is the sum by finder.
 */
static void expect_counts(const char *what, int ctx, int h, unsigned int flags,
			  const struct dio_counters *base,
			  const struct dio_counters *want)
{
	struct dio_counters c;
	size_t i;

	memset(&c, 0xa5, sizeof(c));
	assert_int_equal(sys_dio_counters(ctx, h, flags, &c), 0);
	assert_int_equal(c.size, sizeof(c));
	assert_int_equal(c.flags, flags);
	assert_int_equal(c.handle, h);
	assert_int_equal(c.pad, 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(c.reserved[i], 0);
	if (counts_differ(what, &c, base, want))
		fail_msg("%s: counts differ (above)", what);
}

static void get_counts(int ctx, int h, unsigned int flags, struct dio_counters *c)
{
	assert_int_equal(sys_dio_counters(ctx, h, flags, c), 0);
}

/* @a plus @b, count by count. */
static void counts_add(struct dio_counters *a, const struct dio_counters *b)
{
	uint64_t v;
	size_t i;

	for (i = 0; i < NFIELDS; i++) {
		v = field(a, i) + field(b, i);
		memcpy((char *)a + fields[i].off, &v, sizeof(v));
	}
}

/* @path in @ctx (tl_dev_open()), its data tl_fill()ed. */
static void dev_open_filled(struct tl_dev *d, int ctx, const char *path, unsigned int oflags)
{
	tl_dev_open(d, ctx, path, oflags, LEN);
	tl_fill(d->data, LEN, 11);
}

static void gen(struct tl_dev *d, uint64_t off, uint16_t app)
{
	assert_int_equal(dio_pi_generate(&d->p, d->data, LEN, d->pi,
					 &(struct dio_pi_params){ .seed = off / d->q.pi_interval,
								  .app_tag = app }), 0);
}

static void write_pi(struct tl_dev *d, uint64_t off, unsigned int pi_flags,
		     struct dio_request *r)
{
	dio_req_prep_write(r, d->h, d->data, LEN, off);
	dio_req_set_pi(r, d->pi, d->pilen, pi_flags, 0, 0);
}

static void read_pi(struct tl_dev *d, uint64_t off, unsigned int pi_flags,
		    uint16_t app, uint16_t mask, struct dio_request *r)
{
	dio_req_prep_read(r, d->h, d->back, LEN, off);
	dio_req_set_pi(r, d->pi2, d->pilen, pi_flags, app, mask);
}

static void assert_pi_failure(const struct dio_request *r, int src, int tag)
{
	if (r->result != -EILSEQ || r->pi_err_source != src || r->pi_err_tag != tag)
		print_message("# result %lld source %s tag %s\n", (long long)r->result,
			      dio_pi_source_name(r->pi_err_source),
			      dio_pi_tag_name(r->pi_err_tag));
	assert_int_equal(r->result, -EILSEQ);
	assert_int_equal(r->pi_err_source, src);
	assert_int_equal(r->pi_err_tag, tag);
}

/*
 * dioctl stat -j of @path: its counts @base plus @want (the document kept
 * for the host, which validates it against tools/dioctl.schema.json:
 * tests/vm/check.sh); the plain form succeeds too.
 */
static void dioctl_stat(const char *path, const struct dio_counters *base,
			const struct dio_counters *want)
{
	char filter[2048];
	size_t i, n = 0;

	dioctl_expect(0, "stat %s", path);
	dioctl_expect(0, "stat %s -j", path);
	n += snprintf(filter + n, sizeof(filter) - n, ".command == \"stat\" and .exit_code == 0");
	for (i = 0; i < NFIELDS; i++)
		n += snprintf(filter + n, sizeof(filter) - n, " and .%s == %llu", fields[i].name,
			      (unsigned long long)(field(base, i) + field(want, i)));
	assert_true(n < sizeof(filter));
	expect_jq_true("%s", filter);
}

static int teardown(void **state)
{
	tl_fd_close_all();
	return tl_scsi_debug_unload();
}

/*
 * Known I/O on a scsi_debug DIF type 1 disk (512-byte intervals, CRC
 * guard), the counts checked after every step; an NVMe handle of the same
 * context counts nothing of it.
 */
static void test_handle_counts(void **state)
{
	const uint64_t off = 16 * LEN, off2 = 32 * LEN;
	struct dio_counters want = { 0 }, zero = { 0 }, nvme_dev, disk_dev, scratch;
	struct dio_request r;
	char path[64], nvme[64];
	struct tl_dev d, other;
	unsigned char blk[512];
	int ctx, fd;

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1", path, sizeof(path)), 0);
	assert_int_equal(tl_nvme_dev(1, nvme, sizeof(nvme)), 0);
	ctx = tl_fd_track(sys_dio_init(0, DIO_PRIVATE));
	dev_open_filled(&d, ctx, path, 0);
	dev_open_filled(&other, ctx, nvme, 0);
	assert_int_equal(d.q.pi_interval, 512);
	assert_int_equal(d.q.pi_type, 1);
	/*
	 * The devices' baselines, before this test's first request: the
	 * disk's number may have served earlier programs' disks, the
	 * namespace their I/O.  Only get_counts() here writes them.
	 */
	get_counts(ctx, other.h, DIO_COUNTERS_DEVICE, &nvme_dev);
	get_counts(ctx, d.h, DIO_COUNTERS_DEVICE, &disk_dev);
	/* A new handle counts from zero. */
	expect_counts("new handle", ctx, d.h, 0, NULL, &want);

	/* A write with the caller's PI, a write with the kernel's. */
	gen(&d, off, 0x1234);
	write_pi(&d, off, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	dio_req_prep_write(&r, d.h, d.data, LEN, off + LEN);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	want.writes = 2;
	want.write_bytes = 2 * LEN;
	expect_counts("two writes", ctx, d.h, 0, NULL, &want);

	/* Reads: without PI (the module checks), and with a PI buffer. */
	dio_req_prep_read(&r, d.h, d.back, LEN, off);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	read_pi(&d, off + LEN, 0, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	want.reads = 2;
	want.read_bytes = 2 * LEN;
	expect_counts("two reads", ctx, d.h, 0, NULL, &want);

	/* App tag 0x4321 asked of blocks written with 0x1234: the module's. */
	read_pi(&d, off, DIO_PI_CHK_APPTAG, 0x4321, 0xffff, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_pi_failure(&r, DIO_PI_SRC_MODULE, DIO_PI_TAG_APP);
	want.reads++;
	want.pi_app++;
	want.pi_by_module++;
	expect_counts("wrong app tag", ctx, d.h, 0, NULL, &want);

	/* A bad guard in block 3, refused by DIO_PI_VERIFY_USER: the user's. */
	gen(&d, off, 0);
	tl_dev_tuple(&d, d.pi, 3)[0] ^= 0x01;
	write_pi(&d, off, DIO_PI_VERIFY_USER, &r);
	assert_int_equal(tl_dev_run(&d, &r), -EILSEQ);
	assert_pi_failure(&r, DIO_PI_SRC_USER, DIO_PI_TAG_GUARD);
	want.refused++;
	want.pi_guard++;
	want.pi_by_user++;
	expect_counts("guard refused before submission", ctx, d.h, 0, NULL, &want);

	/* A bad ref tag in block 5, sent: the disk refuses the write. */
	gen(&d, off, 0);
	tl_dev_tuple(&d, d.pi, 5)[7] ^= 0x40;
	write_pi(&d, off, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_pi_failure(&r, DIO_PI_SRC_DEVICE, DIO_PI_TAG_REF);
	want.writes++;
	want.pi_ref++;
	want.pi_by_device++;
	expect_counts("ref tag refused by the disk", ctx, d.h, 0, NULL, &want);

	/*
	 * Block 2 at off2 changed behind its PI (written with the kernel's
	 * generation off: the disk keeps the old tuple; not through the
	 * module, so not counted).  Read raw with DIO_PI_CHK_GUARD, the
	 * module finds it; read plainly, the disk refuses it.
	 */
	gen(&d, off2, 0);
	write_pi(&d, off2, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	want.writes++;
	want.write_bytes += LEN;
	memcpy(blk, d.data + 2 * 512, 512);
	blk[100] ^= 0xff;
	assert_int_equal(tl_sh("echo 0 > /sys/block/%s/integrity/write_generate",
			       tl_basename(path)), 0);
	fd = open(path, O_RDWR | O_DIRECT);
	assert_true(fd >= 0);
	{
		void *b = tl_xalloc(512, 0);

		memcpy(b, blk, 512);
		assert_int_equal(pwrite(fd, b, 512, off2 + 2 * 512), 512);
		free(b);
	}
	close(fd);
	assert_int_equal(tl_sh("echo 1 > /sys/block/%s/integrity/write_generate",
			       tl_basename(path)), 0);
	read_pi(&d, off2, DIO_PI_NOCHECK | DIO_PI_CHK_GUARD, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_pi_failure(&r, DIO_PI_SRC_MODULE, DIO_PI_TAG_GUARD);
	dio_req_prep_read(&r, d.h, d.back, LEN, off2);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_pi_failure(&r, DIO_PI_SRC_DEVICE, DIO_PI_TAG_GUARD);
	want.reads += 2;
	want.pi_guard += 2;
	want.pi_by_module++;
	want.pi_by_device++;
	expect_counts("corrupted block", ctx, d.h, 0, NULL, &want);

	/* scsi_debug's medium errors: a read that fails, not for its PI. */
	{
		char *v = tl_sysfs_read("/sys/module/scsi_debug/parameters/medium_error_start");
		unsigned long long start;

		assert_non_null(v);
		start = strtoull(v, NULL, 0);
		free(v);
		assert_true((start + 1) * 512 < d.q.capacity);
		assert_int_equal(tl_sh("echo 2 > /sys/bus/pseudo/drivers/scsi_debug/opts"), 0);
		dio_req_prep_read(&r, d.h, d.back, LEN, start * 512 / LEN * LEN);
		assert_int_equal(tl_dev_run(&d, &r), 0);
		assert_int_equal(tl_sh("echo 0 > /sys/bus/pseudo/drivers/scsi_debug/opts"), 0);
		print_message("# medium error: result %lld\n", (long long)r.result);
		assert_true(r.result == -ENODATA || r.result == -EIO);
	}
	want.reads++;
	want.io_errors++;
	expect_counts("medium error", ctx, d.h, 0, NULL, &want);

	/* A flush. */
	dio_req_prep_flush(&r, d.h);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, 0);
	want.flushes = 1;
	expect_counts("flush", ctx, d.h, 0, NULL, &want);

	/* Refused once the handle is found: beyond the device, misaligned. */
	dio_req_prep_read(&r, d.h, d.back, LEN, d.q.capacity);
	assert_int_equal(tl_dev_run(&d, &r), -ENXIO);
	dio_req_prep_read(&r, d.h, d.back, LEN, 100);
	assert_int_equal(tl_dev_run(&d, &r), -EINVAL);
	want.refused += 2;
	/* Before it: a handle that is not live, an unknown flag: nowhere. */
	dio_req_prep_read(&r, 9999, d.back, LEN, 0);
	assert_int_equal(tl_dev_run(&d, &r), -EBADF);
	dio_req_prep_read(&r, d.h, d.back, LEN, 0);
	r.flags |= 0x8000;
	assert_int_equal(tl_dev_run(&d, &r), -EINVAL);
	expect_counts("refused", ctx, d.h, 0, NULL, &want);

	/* The device's counts grew by the handle's: no other handle had it. */
	expect_counts("the disk's counts", ctx, d.h, DIO_COUNTERS_DEVICE, &disk_dev, &want);
	/* The NVMe handle, and its device, counted none of it. */
	expect_counts("the other handle", ctx, other.h, 0, NULL, &zero);
	expect_counts("the other device", ctx, other.h, DIO_COUNTERS_DEVICE, &nvme_dev, &zero);

	/*
	 * dioctl stat: the disk's counts, while this context holds its claim
	 * (dioctl opens it without one), as the schema says.
	 */
	dioctl_stat(path, &disk_dev, &want);

	/* Arguments. */
	assert_int_equal(tl_errno(sys_dio_counters(ctx, 9999, 0, &scratch)), -EBADF);
	assert_int_equal(tl_errno(sys_dio_counters(ctx, d.h, 2, &scratch)), -EINVAL);
	assert_int_equal(tl_errno(sys_dio_counters(ctx, d.h, ~0U, &scratch)), -EINVAL);

	tl_dev_close(&other);
	tl_dev_close(&d);
	tl_fd_close(ctx);
}

/*
 * Another program's I/O on @path between two steps of test_device_counts():
 * a context of its own writes and reads LEN at @off, and closes its handle
 * (whose counts stay the device's).
 */
static void other_program_io(const char *path, uint64_t off)
{
	struct dio_request r;
	struct tl_dev o;
	int ctx;

	ctx = tl_fd_track(sys_dio_init(0, DIO_PRIVATE));
	dev_open_filled(&o, ctx, path, DIO_OPEN_NOCLAIM);
	dio_req_prep_write(&r, o.h, o.data, LEN, off);
	assert_int_equal(tl_dev_run(&o, &r), 0);
	assert_int_equal(r.result, LEN);
	dio_req_prep_read(&r, o.h, o.back, LEN, off);
	assert_int_equal(tl_dev_run(&o, &r), 0);
	assert_int_equal(r.result, LEN);
	assert_int_equal(sys_dio_close(ctx, o.h), 0);
	tl_dev_close(&o);
	tl_fd_close(ctx);
}

/*
 * One NVMe namespace held by two contexts (DIO_OPEN_NOCLAIM): each
 * handle counts its own requests, the device counts both, and keeps
 * counting what a revoked handle did.  The device's counts are checked
 * step by step: each step's baseline is read just before it, so what
 * other programs did on the namespace, before this test (t_pi, t_io_*,
 * this program's first test...) or between its steps, counts in no
 * verdict.  Between the steps another context does I/O of its own on
 * the namespace, as another program would.
 */
static void test_device_counts(void **state)
{
	const uint64_t off = 64 * LEN;
	struct dio_counters base, scratch, want_a = { 0 }, want_b = { 0 }, step;
	struct dio_request r;
	struct tl_dev a, b;
	char path[64];
	int ctx_a, ctx_b, i, h_old;

	assert_int_equal(tl_nvme_dev(1, path, sizeof(path)), 0);
	ctx_a = tl_fd_track(sys_dio_init(0, DIO_PRIVATE));
	ctx_b = tl_fd_track(sys_dio_init(0, DIO_PRIVATE));
	dev_open_filled(&a, ctx_a, path, DIO_OPEN_NOCLAIM);
	dev_open_filled(&b, ctx_b, path, DIO_OPEN_NOCLAIM);
	/*
	 * Each step's baseline: the device's counts before it, read here
	 * only.  A call expected to fail writes into scratch (the library
	 * zeroes the struct before the ioctl).
	 */
	get_counts(ctx_a, a.h, DIO_COUNTERS_DEVICE, &base);
	expect_counts("the device, from b", ctx_b, b.h, DIO_COUNTERS_DEVICE, &base,
		      &(struct dio_counters){ 0 });

	/* Two writes through a, three reads through b. */
	for (i = 0; i < 2; i++) {
		dio_req_prep_write(&r, a.h, a.data, LEN, off + i * LEN);
		assert_int_equal(tl_dev_run(&a, &r), 0);
		assert_int_equal(r.result, LEN);
	}
	for (i = 0; i < 3; i++) {
		dio_req_prep_read(&r, b.h, b.back, LEN, off + (i % 2) * LEN);
		assert_int_equal(tl_dev_run(&b, &r), 0);
		assert_int_equal(r.result, LEN);
	}
	want_a.writes = 2;
	want_a.write_bytes = 2 * LEN;
	want_b.reads = 3;
	want_b.read_bytes = 3 * LEN;
	step = want_a;
	counts_add(&step, &want_b);
	expect_counts("handle a", ctx_a, a.h, 0, NULL, &want_a);
	expect_counts("handle b", ctx_b, b.h, 0, NULL, &want_b);
	expect_counts("the device, from a", ctx_a, a.h, DIO_COUNTERS_DEVICE, &base, &step);
	expect_counts("the device, from b", ctx_b, b.h, DIO_COUNTERS_DEVICE, &base, &step);

	other_program_io(path, off + 8 * LEN);

	/*
	 * Byte 100 of block 3 at @off changed behind the namespace's back (its
	 * backing file, data first: t_pi.c): the device refuses a's read.
	 * Before 6.14 the module names the block but not the tag (it cannot
	 * read NVMe raw): an unknown tag; from 6.14 the guard.
	 */
	{
		FILE *f = fopen("/tmp/results/nvme1.img", "r+");
		int ch;

		assert_non_null(f);
		assert_int_equal(fseek(f, (long)(off + 3 * a.q.pi_interval + 100), SEEK_SET), 0);
		ch = fgetc(f);
		assert_true(ch != EOF);
		assert_int_equal(fseek(f, (long)(off + 3 * a.q.pi_interval + 100), SEEK_SET), 0);
		assert_int_equal(fputc(ch ^ 0xff, f), ch ^ 0xff);
		fclose(f);
	}
	get_counts(ctx_a, a.h, DIO_COUNTERS_DEVICE, &base);
	step = (struct dio_counters){ .reads = 1, .pi_by_device = 1 };
	dio_req_prep_read(&r, a.h, a.back, LEN, off);
	assert_int_equal(tl_dev_run(&a, &r), 0);
	if (tl_kernel_at_least(6, 14)) {
		assert_pi_failure(&r, DIO_PI_SRC_DEVICE, DIO_PI_TAG_GUARD);
		step.pi_guard = 1;
	} else {
		assert_pi_failure(&r, DIO_PI_SRC_DEVICE, DIO_PI_TAG_NONE);
		step.pi_unknown = 1;
	}
	assert_int_equal(r.pi_err_interval, off / a.q.pi_interval + 3);
	counts_add(&want_a, &step);
	expect_counts("handle a, a block the device refused", ctx_a, a.h, 0, NULL, &want_a);
	expect_counts("the device, a block it refused", ctx_b, b.h, DIO_COUNTERS_DEVICE, &base,
		      &step);
	expect_counts("handle b, unchanged", ctx_b, b.h, 0, NULL, &want_b);

	other_program_io(path, off + 8 * LEN);

	/* b's last opener closes it: revoked, its counts stay the device's. */
	get_counts(ctx_a, a.h, DIO_COUNTERS_DEVICE, &base);
	h_old = b.h;
	assert_int_equal(sys_dio_close(ctx_b, b.h), 0);
	assert_int_equal(tl_errno(sys_dio_counters(ctx_b, h_old, 0, &scratch)), -EBADF);
	expect_counts("the device after b's revoke", ctx_a, a.h, DIO_COUNTERS_DEVICE, &base,
		      &(struct dio_counters){ 0 });
	/* Opened again: a new handle, from zero; the device goes on. */
	b.h = sys_dio_open(ctx_b, b.fd, DIO_OPEN_NOCLAIM);
	assert_true(b.h >= 1);
	assert_int_not_equal(b.h, h_old);
	expect_counts("b opened again", ctx_b, b.h, 0, NULL, &(struct dio_counters){ 0 });

	other_program_io(path, off + 8 * LEN);

	get_counts(ctx_a, a.h, DIO_COUNTERS_DEVICE, &base);
	dio_req_prep_read(&r, b.h, b.back, LEN, off + LEN);
	assert_int_equal(tl_dev_run(&b, &r), 0);
	assert_int_equal(r.result, LEN);
	want_b = (struct dio_counters){ .reads = 1, .read_bytes = LEN };
	expect_counts("b's new handle", ctx_b, b.h, 0, NULL, &want_b);
	expect_counts("the device, one read more", ctx_a, a.h, DIO_COUNTERS_DEVICE, &base,
		      &want_b);
	expect_counts("handle a, unchanged", ctx_a, a.h, 0, NULL, &want_a);

	/* The corrupted block written again, for the programs after this one. */
	dio_req_prep_write(&r, a.h, a.data, LEN, off);
	assert_int_equal(tl_dev_run(&a, &r), 0);
	assert_int_equal(r.result, LEN);

	tl_dev_close(&a);
	tl_dev_close(&b);
	tl_fd_close(ctx_a);
	tl_fd_close(ctx_b);
}

/* The nodes test_user_counts() gave to GID_DIO, put back by its teardown. */
static struct tl_node_saved ctl_saved, disk_saved;
static char user_disk[64];

/* What user_counts_child() does on its own handle, counted. */
static const struct dio_counters user_want = {
	.reads = 1, .writes = 2, .flushes = 1, .read_bytes = LEN,
	.write_bytes = 2 * LEN, .refused = 1,
};

/* What test_user_counts() gives its child. */
struct user_args {
	const char *path;		/* the disk, root:GID_DIO 0660 */
	int root_ctx;			/* root's context, inherited */
	int root_h;			/* root's handle of the disk there */
	struct dio_counters root_want;	/* that handle's counts */
	struct dio_counters dev_base;	/* the disk's before the test */
};

/* In the child: one request, submitted and waited for: 0, or SUBMIT's -errno. */
static int child_run(int ctx, struct dio_request *r)
{
	struct dio_request *rp = r;

	if (sys_dio_submit(ctx, &rp, 1) != 1)
		return -errno;
	TL_CHILD_CHECK(sys_dio_wait(ctx, &rp, 1, NULL) == 1, "WAIT");
	return 0;
}

/* In the child: expect_counts() without cmocka. */
static void child_counts(const char *what, int ctx, int h, unsigned int flags,
			 const struct dio_counters *base,
			 const struct dio_counters *want)
{
	struct dio_counters c;

	TL_CHILD_CHECK(sys_dio_counters(ctx, h, flags, &c) == 0, "%s: COUNTERS", what);
	TL_CHILD_CHECK(!counts_differ(what, &c, base, want), "%s: counts differ (above)",
		       what);
}

/* test_user_counts()'s child, uid UID_USER in group GID_DIO. */
static int user_counts_child(void *arg)
{
	const struct user_args *ua = arg;
	struct dio_counters c, dev_want = user_want;
	unsigned char *buf = tl_alloc(LEN, 0);
	struct dio_request r;
	int ctx, fd, h, i;

	TL_CHILD_CHECK(buf, "out of memory");
	/* Root's context by its key: another user's, mode 0600. */
	TL_CHILD_CHECK(sys_dio_init(ROOT_KEY, 0) < 0 && errno == EACCES,
		       "INIT of root's key");
	TL_CHILD_CHECK(sys_dio_init(ROOT_KEY, DIO_FOREIGN) < 0 && errno == EACCES,
		       "INIT of root's key with DIO_FOREIGN");

	/* A context of its own, the disk through its group. */
	fd = open(ua->path, O_RDWR | O_CLOEXEC);
	TL_CHILD_CHECK(fd >= 0, "open %s", ua->path);
	ctx = sys_dio_init(0, DIO_PRIVATE);
	TL_CHILD_CHECK(ctx >= 0, "INIT");
	h = sys_dio_open(ctx, fd, DIO_OPEN_NOCLAIM);
	TL_CHILD_CHECK(h >= 1, "OPEN");
	TL_CHILD_CHECK(h != ua->root_h, "handle %d: root's number too", h);
	child_counts("the user's new handle", ctx, h, 0, NULL, &(struct dio_counters){ 0 });

	/* Two writes, a read, a flush, a request refused (misaligned). */
	tl_fill(buf, LEN, 77);
	for (i = 0; i < 2; i++) {
		dio_req_prep_write(&r, h, buf, LEN, (2 + i) * LEN);
		TL_CHILD_CHECK(child_run(ctx, &r) == 0 && r.result == LEN,
			       "write %d: %lld", i, (long long)r.result);
	}
	dio_req_prep_read(&r, h, buf, LEN, 2 * LEN);
	TL_CHILD_CHECK(child_run(ctx, &r) == 0 && r.result == LEN, "read: %lld",
		       (long long)r.result);
	dio_req_prep_flush(&r, h);
	TL_CHILD_CHECK(child_run(ctx, &r) == 0 && r.result == 0, "flush: %lld",
		       (long long)r.result);
	dio_req_prep_read(&r, h, buf, LEN, 100);
	TL_CHILD_CHECK(child_run(ctx, &r) == -EINVAL, "a misaligned read");
	child_counts("the user's handle", ctx, h, 0, NULL, &user_want);
	/* Its device's: root's write too, whoever did it (the ABI). */
	counts_add(&dev_want, &ua->root_want);
	child_counts("the disk, from the user's handle", ctx, h, DIO_COUNTERS_DEVICE,
		     &ua->dev_base, &dev_want);

	/* Root's handle is not live in the user's context, with either flag. */
	TL_CHILD_CHECK(sys_dio_counters(ctx, ua->root_h, 0, &c) < 0 && errno == EBADF,
		       "root's handle %d in the user's context", ua->root_h);
	TL_CHILD_CHECK(sys_dio_counters(ctx, ua->root_h, DIO_COUNTERS_DEVICE, &c) < 0 &&
		       errno == EBADF, "root's handle's device in the user's context");

	/*
	 * Root's descriptor, inherited: any process that has it may read
	 * its counts (the ABI); SUBMIT is its creator's alone (EXDEV, before
	 * the handle is looked up: counted nowhere).
	 */
	child_counts("root's handle, through root's descriptor", ua->root_ctx, ua->root_h, 0,
		     NULL, &ua->root_want);
	dio_req_prep_read(&r, ua->root_h, buf, LEN, 0);
	TL_CHILD_CHECK(child_run(ua->root_ctx, &r) == -EXDEV,
		       "SUBMIT through root's descriptor");

	close(ctx);
	close(fd);
	free(buf);
	return 0;
}

/*
 * The counters as a user who is not root (uid 1000, given the disk and
 * /dev/dio_batch through group GID_DIO, as a site's udev rule gives
 * them): its own handle's counts, exact, and its device's, which count
 * root's I/O too.  Root's keyed context (mode 0600) is another user's:
 * its key is refused (DIO_FOREIGN too), its handle is not live in the
 * user's context (EBADF); only its descriptor, inherited, reads its
 * counts, as the ABI says any process that has it may, and SUBMIT
 * through it is EXDEV.  Root's handle counts none of the user's I/O.
 */
static void test_user_counts(void **state)
{
	struct dio_counters dev_want = user_want;
	struct user_args ua = { 0 };
	struct dio_request r;
	struct tl_dev nv, d;
	char nvme[64];
	int ctx;

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1", user_disk,
					    sizeof(user_disk)), 0);
	assert_int_equal(tl_nvme_dev(1, nvme, sizeof(nvme)), 0);
	ctx = tl_fd_track(sys_dio_init_mode(ROOT_KEY, DIO_CREAT | DIO_EXCL, 0600));
	/* The NVMe handle first: the disk's number is not the user's handle. */
	dev_open_filled(&nv, ctx, nvme, DIO_OPEN_NOCLAIM);
	dev_open_filled(&d, ctx, user_disk, DIO_OPEN_NOCLAIM);
	get_counts(ctx, d.h, DIO_COUNTERS_DEVICE, &ua.dev_base);
	dio_req_prep_write(&r, d.h, d.data, LEN, 8 * LEN);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	ua.root_want = (struct dio_counters){ .writes = 1, .write_bytes = LEN };
	expect_counts("root's handle", ctx, d.h, 0, NULL, &ua.root_want);

	assert_int_equal(tl_node_give(CTL_PATH, GID_DIO, 0660, &ctl_saved), 0);
	assert_int_equal(tl_node_give(user_disk, GID_DIO, 0660, &disk_saved), 0);
	ua.path = user_disk;
	ua.root_ctx = ctx;
	ua.root_h = d.h;
	assert_int_equal(tl_run_as(UID_USER, GID_USER, GID_DIO, user_counts_child, &ua), 0);
	assert_int_equal(tl_node_restore(user_disk, &disk_saved), 0);
	assert_int_equal(tl_node_restore(CTL_PATH, &ctl_saved), 0);

	expect_counts("root's handle after the user's", ctx, d.h, 0, NULL, &ua.root_want);
	counts_add(&dev_want, &ua.root_want);
	expect_counts("the disk after the user's", ctx, d.h, DIO_COUNTERS_DEVICE, &ua.dev_base,
		      &dev_want);

	tl_dev_close(&nv);
	tl_dev_close(&d);
	tl_fd_close(ctx);
}

static int teardown_user(void **state)
{
	int ret = 0;

	if (tl_node_restore(user_disk, &disk_saved))
		ret = -1;
	if (tl_node_restore(CTL_PATH, &ctl_saved))
		ret = -1;
	return teardown(state) ? -1 : ret;
}

/* The module says it has the counters. */
static void test_feature(void **state)
{
	struct dio_features f;

	assert_int_equal(sys_dio_features(&f), 0);
	assert_true(f.abi_version >= 5);
	assert_true(f.features & DIO_FEAT_COUNTERS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_feature),
		cmocka_unit_test_teardown(test_handle_counts, teardown),
		cmocka_unit_test_teardown(test_device_counts, teardown),
		cmocka_unit_test_teardown(test_user_counts, teardown_user),
	};

	if (dioctl_run_init("counters-json", 0) || tl_dio_load())
		return 1;
	return cmocka_run_group_tests_name("counters", tests, NULL, NULL);
}
