// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The module's trace events (module/trace.h) through tracefs, as perf
 * trace, trace-cmd and bpftrace read them: their fields, a write and a
 * read seen submitted and completed (result, latency, cookie), and two
 * known PI failures with every field of the report: a guard that
 * DIO_PI_VERIFY_USER refuses before submission, and a wrong app tag on a
 * read (found by the module, or by the device from 6.14).  Disabled, the
 * events record nothing.  On NVMe namespace 1 (T10 type 1, CRC16).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

#define LEN	(64 * 1024)
#define TRACEFS	"/sys/kernel/tracing"
#define EVENTS	TRACEFS "/events/dio_batch"

static const char *const events[] = {
	"dio_batch_submit", "dio_batch_complete", "dio_batch_pi_error",
};

/* tracefs at /sys/kernel/tracing, mounted if it is not. */
static void tracefs_mount(void)
{
	struct stat st;

	if (stat(TRACEFS "/trace", &st) == 0)
		return;
	assert_int_equal(tl_sh("mount -t tracefs tracefs " TRACEFS), 0);
	assert_int_equal(stat(TRACEFS "/trace", &st), 0);
}

static void events_enable(int on)
{
	char path[128];
	size_t i;

	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		snprintf(path, sizeof(path), EVENTS "/%s/enable", events[i]);
		assert_int_equal(tl_write_file(path, on ? "1" : "0"), 0);
	}
}

static void trace_clear(void)
{
	int fd = open(TRACEFS "/trace", O_WRONLY | O_TRUNC);

	assert_true(fd >= 0);
	close(fd);
}

static int teardown(void **state)
{
	char path[128];
	size_t i;

	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		snprintf(path, sizeof(path), EVENTS "/%s/enable", events[i]);
		tl_write_file(path, "0");
	}
	return 0;
}

/*
 * The text of the trace's lines of @event (after "EVENT: "), in @out (up
 * to @max of @len bytes each); returns how many.
 */
static int trace_lines(const char *event, char out[][256], int max)
{
	char line[512], tag[64], *p;
	FILE *f = fopen(TRACEFS "/trace", "r");
	int n = 0;

	assert_non_null(f);
	snprintf(tag, sizeof(tag), " %s: ", event);
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, tag);
		if (!p || n == max)
			continue;
		p += strlen(tag);
		p[strcspn(p, "\n")] = 0;
		print_message("# %s: %s\n", event, p);
		snprintf(out[n++], 256, "%s", p);
	}
	fclose(f);
	return n;
}

/* The whole of file @path, NUL-terminated (malloc'd), or NULL. */
static char *slurp(const char *path)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f || !buf) {
		if (f)
			fclose(f);
		free(buf);
		return NULL;
	}
	while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len + 1 == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	fclose(f);
	buf[len] = 0;
	return buf;
}

/* Every event is there, with the fields its format says. */
static void test_formats(void **state)
{
	static const char *const fields[][10] = {
		{ "dev_t dev;", "u8 op;", "u16 flags;", "u64 sector;", "u64 bytes;",
		  "u64 cookie;" },
		{ "dev_t dev;", "u8 op;", "u64 sector;", "u64 bytes;", "s64 result;",
		  "u64 latency_ns;", "u64 cookie;" },
		{ "dev_t dev;", "u8 op;", "u8 tag;", "u8 source;", "u64 sector;",
		  "u64 interval;", "u64 expected;", "u64 actual;", "u64 cookie;" },
	};
	size_t i, j;
	char *fmt;

	tracefs_mount();
	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		char path[128];

		snprintf(path, sizeof(path), EVENTS "/%s/format", events[i]);
		fmt = slurp(path);
		assert_non_null(fmt);
		for (j = 0; j < 10 && fields[i][j]; j++) {
			if (!strstr(fmt, fields[i][j]))
				print_message("# %s: no field \"%s\" in:\n%s\n", events[i],
					      fields[i][j], fmt);
			assert_non_null(strstr(fmt, fields[i][j]));
		}
		free(fmt);
	}
}

struct dev {
	int ctx, fd, h;
	unsigned int major, minor;
	struct dio_query q;
	struct dio_pi_profile p;
	unsigned char *data, *pi;
	size_t pilen;
};

static void dev_open(struct dev *d, int nsid)
{
	char path[64];
	struct stat st;

	assert_int_equal(tl_nvme_dev(nsid, path, sizeof(path)), 0);
	d->ctx = sys_dio_init(0, DIO_PRIVATE);
	assert_true(d->ctx >= 0);
	d->fd = open(path, O_RDWR);
	assert_true(d->fd >= 0);
	assert_int_equal(fstat(d->fd, &st), 0);
	d->major = major(st.st_rdev);
	d->minor = minor(st.st_rdev);
	d->h = sys_dio_open(d->ctx, d->fd, 0);
	assert_true(d->h >= 1);
	assert_int_equal(sys_dio_query(d->ctx, d->h, &d->q), 0);
	assert_int_equal(dio_pi_profile_from_query(&d->q, &d->p), 0);
	assert_int_equal(d->q.pi_guard_type, DIO_GUARD_CRC16);
	d->pilen = LEN / d->q.pi_interval * d->q.pi_md_size;
	d->data = tl_xalloc(LEN, 0);
	d->pi = tl_xalloc(d->pilen, 0);
	tl_fill(d->data, LEN, 7);
}

static void dev_close(struct dev *d)
{
	free(d->data);
	free(d->pi);
	close(d->fd);
	close(d->ctx);
}

/* Submit @r and wait for it; the submit's errno, or 0. */
static int run(struct dev *d, struct dio_request *r)
{
	struct dio_request *rp = r;

	if (sys_dio_submit(d->ctx, &rp, 1) != 1)
		return errno;
	assert_int_equal(sys_dio_wait(d->ctx, &rp, 1, NULL), 1);
	return 0;
}

static void test_known_failures(void **state)
{
	char lines[8][256], op[8], flags[32], tag[16], src[16];
	unsigned long long sector, sectors, cookie, lat, expected, actual;
	uint64_t off = 16 * LEN, seed;
	unsigned int maj, min, iv;
	unsigned char *t;
	struct dio_request r;
	long long res, interval;
	uint16_t good;
	struct dev d;
	int n, want_src;

	tracefs_mount();
	dev_open(&d, 1);
	iv = d.q.pi_interval;
	seed = off / iv;
	events_enable(1);
	trace_clear();

	/* A write with the caller's PI: submitted, then completed. */
	assert_int_equal(dio_pi_generate(&d.p, d.data, LEN, d.pi,
					 &(struct dio_pi_params){ .seed = seed, .app_tag = 0x1234 }), 0);
	dio_req_prep_write(&r, d.h, d.data, LEN, off);
	dio_req_set_pi(&r, d.pi, d.pilen, 0, 0, 0);
	r.cookie = 0xc0ffee01;
	assert_int_equal(run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	assert_int_equal(trace_lines("dio_batch_submit", lines, 8), 1);
	assert_int_equal(sscanf(lines[0], "%u,%u %7s %llu + %llu [%31[^]]] cookie 0x%llx",
				&maj, &min, op, &sector, &sectors, flags, &cookie), 7);
	assert_int_equal(maj, d.major);
	assert_int_equal(min, d.minor);
	assert_string_equal(op, "W");
	assert_int_equal(sector, off / 512);
	assert_int_equal(sectors, LEN / 512);
	assert_string_equal(flags, "PI");
	assert_int_equal(cookie, 0xc0ffee01);
	assert_int_equal(trace_lines("dio_batch_complete", lines, 8), 1);
	assert_int_equal(sscanf(lines[0], "%u,%u %7s %llu + %llu [%lld] %llu ns cookie 0x%llx",
				&maj, &min, op, &sector, &sectors, &res, &lat, &cookie), 8);
	assert_int_equal(maj, d.major);
	assert_string_equal(op, "W");
	assert_int_equal(sector, off / 512);
	assert_int_equal(res, LEN);
	assert_true(lat > 0);
	assert_int_equal(cookie, 0xc0ffee01);
	assert_int_equal(trace_lines("dio_batch_pi_error", lines, 8), 0);

	/*
	 * Interval 5's guard changed: DIO_PI_VERIFY_USER refuses the write
	 * before any bio, so it is neither submitted nor completed.
	 */
	trace_clear();
	t = d.pi + 5 * d.q.pi_md_size + d.q.pi_offset;
	good = t[0] << 8 | t[1];
	t[0] ^= 0x5a;
	dio_req_prep_write(&r, d.h, d.data, LEN, off);
	dio_req_set_pi(&r, d.pi, d.pilen, DIO_PI_VERIFY_USER, 0, 0);
	r.cookie = 0xc0ffee02;
	assert_int_equal(run(&d, &r), EILSEQ);
	assert_int_equal(r.pi_err_source, DIO_PI_SRC_USER);
	assert_int_equal(trace_lines("dio_batch_submit", lines, 8), 0);
	assert_int_equal(trace_lines("dio_batch_complete", lines, 8), 0);
	assert_int_equal(trace_lines("dio_batch_pi_error", lines, 8), 1);
	assert_int_equal(sscanf(lines[0], "%u,%u %7s %llu interval %lld %15s expected 0x%llx "
				"actual 0x%llx found by %15s cookie 0x%llx",
				&maj, &min, op, &sector, &interval, tag, &expected, &actual,
				src, &cookie), 10);
	assert_int_equal(maj, d.major);
	assert_int_equal(min, d.minor);
	assert_string_equal(op, "W");
	assert_int_equal(sector, off / 512);
	assert_int_equal(interval, seed + 5);
	assert_string_equal(tag, "guard");
	assert_int_equal(expected, good);
	assert_int_equal(actual, good ^ 0x5a00);
	assert_string_equal(src, "user");
	assert_int_equal(cookie, 0xc0ffee02);

	/*
	 * A read that asks for app tag 0x4321 of blocks written with 0x1234:
	 * refused at the first block, by the module, or from 6.14 by the
	 * NVMe driver (the module then finds the block).
	 */
	trace_clear();
	dio_req_prep_read(&r, d.h, d.data, LEN, off);
	dio_req_set_pi(&r, d.pi, d.pilen, DIO_PI_CHK_APPTAG, 0x4321, 0xffff);
	r.cookie = 0xc0ffee03;
	assert_int_equal(run(&d, &r), 0);
	assert_int_equal(r.result, -EILSEQ);
	want_src = tl_kernel_at_least(6, 14) ? DIO_PI_SRC_DEVICE : DIO_PI_SRC_MODULE;
	assert_int_equal(r.pi_err_source, want_src);
	assert_int_equal(trace_lines("dio_batch_submit", lines, 8), 1);
	n = trace_lines("dio_batch_pi_error", lines, 8);
	assert_int_equal(n, 1);
	assert_int_equal(sscanf(lines[0], "%u,%u %7s %llu interval %lld %15s expected 0x%llx "
				"actual 0x%llx found by %15s cookie 0x%llx",
				&maj, &min, op, &sector, &interval, tag, &expected, &actual,
				src, &cookie), 10);
	assert_string_equal(op, "R");
	assert_int_equal(interval, seed);
	assert_string_equal(tag, "app");
	assert_int_equal(expected, 0x4321);
	assert_int_equal(actual, 0x1234);
	assert_string_equal(src, want_src == DIO_PI_SRC_DEVICE ? "device" : "module");
	assert_int_equal(cookie, 0xc0ffee03);
	assert_int_equal(trace_lines("dio_batch_complete", lines, 8), 1);
	assert_int_equal(sscanf(lines[0], "%u,%u %7s %llu + %llu [%lld] %llu ns cookie 0x%llx",
				&maj, &min, op, &sector, &sectors, &res, &lat, &cookie), 8);
	assert_int_equal(res, -EILSEQ);

	/* Disabled, they record nothing. */
	events_enable(0);
	trace_clear();
	dio_req_prep_read(&r, d.h, d.data, LEN, off);
	assert_int_equal(run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	assert_int_equal(trace_lines("dio_batch_submit", lines, 8), 0);
	assert_int_equal(trace_lines("dio_batch_complete", lines, 8), 0);
	dev_close(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_formats, teardown),
		cmocka_unit_test_teardown(test_known_failures, teardown),
	};

	if (tl_dio_load())
		return 1;
	return cmocka_run_group_tests_name("trace", tests, NULL, NULL);
}
