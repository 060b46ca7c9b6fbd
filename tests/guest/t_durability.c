// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * What a completed request promises about durability, shown where the
 * device can show it: the block layer's own block_rq_issue events (as
 * blktrace, perf and bpftrace read them) at the device that holds the data.
 * A DIO_REQ_FUA write reaches the device as a write with forced unit
 * access ("WF..." in the event's rwbs), its PI with it in the same request;
 * a DIO_OP_FLUSH reaches it as one cache flush ("FF"); a write that asked
 * for neither carries neither, and no flush is issued that nobody asked
 * for.  On a scsi_debug disk (write cache on, DPO/FUA), an NVMe namespace
 * (QEMU's volatile write cache), dm-linear over the SCSI disk (the events
 * at the disk, sectors shifted by the mapping) and dm-multipath over two
 * paths to one scsi_debug LUN (the events at whichever path carried each
 * request).
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
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

#define LEN		(16 * 1024)
#define TRACEFS		"/sys/kernel/tracing"
#define RQ_ISSUE	TRACEFS "/events/block/block_rq_issue/enable"
#define MAXDEV		2
#define MAXRQ		256

#define must(...) assert_int_equal(tl_sh(__VA_ARGS__), 0)

/* One request as block_rq_issue showed it. */
struct issued {
	unsigned int major, minor;
	char rwbs[16];
	unsigned long long sector;
	unsigned int nr;
};

/* The devices whose issued requests a case looks at (the ones below). */
struct bottom {
	int n;
	unsigned int major[MAXDEV], minor[MAXDEV];
};

static void tracefs_mount(void)
{
	struct stat st;

	if (stat(TRACEFS "/trace", &st) == 0)
		return;
	must("mount -t tracefs tracefs " TRACEFS);
}

static void trace_start(void)
{
	int fd;

	tracefs_mount();
	assert_int_equal(tl_write_file(RQ_ISSUE, "0"), 0);
	fd = open(TRACEFS "/trace", O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(tl_write_file(RQ_ISSUE, "1"), 0);
}

static int teardown(void **state)
{
	tl_write_file(RQ_ISSUE, "0");
	tl_sh("dmsetup remove_all >/dev/null 2>&1; true");
	tl_scsi_debug_unload();
	return 0;
}

static void bottom_add(struct bottom *b, const char *dev)
{
	struct stat st;

	assert_int_equal(stat(dev, &st), 0);
	assert_true(b->n < MAXDEV);
	b->major[b->n] = major(st.st_rdev);
	b->minor[b->n] = minor(st.st_rdev);
	b->n++;
}

static bool bottom_has(const struct bottom *b, unsigned int maj, unsigned int min)
{
	for (int i = 0; i < b->n; i++)
		if (b->major[i] == maj && b->minor[i] == min)
			return true;
	return false;
}

/*
 * The requests block_rq_issue recorded at the devices of @b, in order.
 * The event prints "MAJ,MIN RWBS BYTES (CMD) SECTOR + NR ..." (7.3 adds
 * the I/O priority after NR).
 */
static int trace_issued(const struct bottom *b, struct issued *out, int max)
{
	char line[512], *p;
	FILE *f;
	int n = 0;

	assert_int_equal(tl_write_file(RQ_ISSUE, "0"), 0);
	f = fopen(TRACEFS "/trace", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		struct issued r;

		p = strstr(line, " block_rq_issue: ");
		if (!p)
			continue;
		p += strlen(" block_rq_issue: ");
		if (sscanf(p, "%u,%u %15s", &r.major, &r.minor, r.rwbs) != 3)
			fail_msg("block_rq_issue: cannot read \"%s\"", p);
		if (!bottom_has(b, r.major, r.minor))
			continue;
		print_message("# issued: %s", p);
		p = strchr(p, ')');
		if (!p || sscanf(p + 1, " %llu + %u", &r.sector, &r.nr) != 2)
			fail_msg("block_rq_issue: no sector in \"%s\"", line);
		assert_true(n < max);
		out[n++] = r;
	}
	fclose(f);
	return n;
}

/*
 * blk_fill_rwbs(): an 'F' before the operation is a preflush, the
 * operation's letter (W, R, D, F for a flush, N), then an 'F' for FUA.
 */
static bool rwbs_preflush(const char *rwbs)
{
	return rwbs[0] == 'F' && rwbs[1] && strchr("WRDFN", rwbs[1]);
}

static char rwbs_op(const char *rwbs)
{
	return rwbs[rwbs_preflush(rwbs)];
}

static bool rwbs_fua(const char *rwbs)
{
	return rwbs[rwbs_preflush(rwbs) + 1] == 'F';
}

/* @dev's queue caches writes and takes FUA, or the case shows nothing. */
static void expect_write_cache(const char *dev)
{
	char *wc = tl_sysfs_read("/sys/block/%s/queue/write_cache", tl_basename(dev));
	char *fua = tl_sysfs_read("/sys/block/%s/queue/fua", tl_basename(dev));

	assert_non_null(wc);
	assert_non_null(fua);
	print_message("# %s: write_cache \"%s\", fua %s\n", dev, wc, fua);
	if (strncmp(wc, "write back", 10) || atoi(fua) != 1)
		fail_msg("%s: no volatile write cache or no FUA: nothing to show", dev);
	free(wc);
	free(fua);
}

static int run(int ctx, struct dio_request *r)
{
	struct dio_request *rp = r;

	assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
	return 0;
}

/*
 * Through @top: three plain writes, two FUA writes (the second with the
 * caller's PI where @top has PI), one flush, each waited for before the
 * next, while block_rq_issue records what reaches the devices of @b, where
 * sector S of @top is sector S + @shift.
 */
static void check_flags(const char *top, const struct bottom *b, unsigned long long shift)
{
	static const struct { uint64_t off; bool fua; } writes[] = {
		{ 1 << 20, false }, { 2 << 20, true }, { 3 << 20, false },
		{ 4 << 20, true }, { 5 << 20, false },
	};
	const int nw = sizeof(writes) / sizeof(writes[0]);
	struct issued is[MAXRQ];
	struct dio_pi_profile prof;
	struct dio_request r;
	struct dio_query q;
	unsigned char *data = tl_xalloc(LEN, 0), *pi = NULL;
	size_t pilen = 0;
	int ctx, fd, h, n, flushes = 0, seen[8] = { 0 };
	bool user_pi = false;

	ctx = sys_dio_init(0, DIO_PRIVATE);
	assert_true(ctx >= 0);
	fd = open(top, O_RDWR);
	assert_true(fd >= 0);
	h = sys_dio_open(ctx, fd, 0);
	assert_true(h >= 1);
	assert_int_equal(sys_dio_query(ctx, h, &q), 0);
	if (q.pi_md_size && dio_pi_profile_from_query(&q, &prof) == 0) {
		user_pi = true;
		pilen = LEN / q.pi_interval * q.pi_md_size;
		pi = tl_xalloc(pilen, 0);
	}
	tl_fill(data, LEN, 11);

	trace_start();
	for (int i = 0; i < nw; i++) {
		dio_req_prep_write(&r, h, data, LEN, writes[i].off);
		if (writes[i].fua)
			r.flags |= DIO_REQ_FUA;
		if (i == 3 && user_pi) {
			struct dio_pi_params pp = { .seed = writes[i].off / q.pi_interval };

			assert_int_equal(dio_pi_generate(&prof, data, LEN, pi, &pp), 0);
			dio_req_set_pi(&r, pi, pilen, 0, 0, 0);
		}
		run(ctx, &r);
		assert_int_equal(r.result, LEN);
	}
	dio_req_prep_flush(&r, h);
	run(ctx, &r);
	assert_int_equal(r.result, 0);
	n = trace_issued(b, is, MAXRQ);

	for (int k = 0; k < n; k++) {
		const char *rw = is[k].rwbs;
		int i;

		if (rwbs_preflush(rw) && rwbs_op(rw) != 'F')
			fail_msg("%s: a %s request at sector %llu with a preflush nobody asked for",
				 top, rw, is[k].sector);
		if (rwbs_op(rw) == 'F') {
			flushes++;
			continue;
		}
		if (rwbs_op(rw) != 'W')
			continue;
		for (i = 0; i < nw; i++)
			if (is[k].sector == writes[i].off / 512 + shift)
				break;
		if (i == nw)
			fail_msg("%s: a write at sector %llu that was not ours", top, is[k].sector);
		if (is[k].nr != LEN / 512)
			fail_msg("%s: write %d reached the device as %u sectors, not %d",
				 top, i, is[k].nr, LEN / 512);
		if (rwbs_fua(rw) != writes[i].fua)
			fail_msg("%s: write %d (%s) reached the device as \"%s\"", top, i,
				 writes[i].fua ? "FUA" : "no FUA", rw);
		seen[i]++;
	}
	for (int i = 0; i < nw; i++)
		if (seen[i] != 1)
			fail_msg("%s: write %d reached the device %d times", top, i, seen[i]);
	if (flushes != 1)
		fail_msg("%s: %d cache flushes reached the device for the one asked for",
			 top, flushes);
	print_message("# %s: %d writes (2 FUA%s), 1 flush, as asked\n", top, nw,
		      user_pi ? ", one with its PI" : "");

	free(data);
	free(pi);
	close(fd);
	close(ctx);
}

/* check_flags() on a device itself. */
static void check_device(const char *dev)
{
	struct bottom b = { 0 };

	expect_write_cache(dev);
	bottom_add(&b, dev);
	check_flags(dev, &b, 0);
}

static void test_scsi(void **state)
{
	char sd[64];

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1", sd, sizeof(sd)), 0);
	check_device(sd);
}

static void test_nvme(void **state)
{
	char nv[64];

	assert_int_equal(tl_nvme_dev(1, nv, sizeof(nv)), 0);
	check_device(nv);
}

static void test_dm_linear(void **state)
{
	struct bottom b = { 0 };
	char sd[64];

	assert_int_equal(tl_kmod_probe("dm_mod", NULL), 0);
	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1", sd, sizeof(sd)), 0);
	expect_write_cache(sd);
	must("dmsetup create dio_dur --table '0 16384 linear %s 8192'", sd);
	bottom_add(&b, sd);
	check_flags("/dev/mapper/dio_dur", &b, 8192);
	must("dmsetup remove dio_dur");
}

static void test_dm_multipath(void **state)
{
	struct bottom b = { 0 };
	char names[8][32], a[64], c[64];

	assert_int_equal(tl_kmod_probe("dm_mod", NULL), 0);
	assert_int_equal(tl_kmod_probe("dm_multipath", NULL), 0);
	assert_int_equal(tl_kmod_probe("dm_round_robin", NULL), 0);
	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1 add_host=2 vpd_use_hostno=0",
					    a, sizeof(a)), 0);
	assert_int_equal(tl_scsi_debug_wait_disks(2, names, 8), 2);
	snprintf(a, sizeof(a), "/dev/%s", names[0]);
	snprintf(c, sizeof(c), "/dev/%s", names[1]);
	expect_write_cache(a);
	expect_write_cache(c);
	bottom_add(&b, a);
	bottom_add(&b, c);
	must("dmsetup create dio_dur --table '0 32768 multipath 0 0 1 1 round-robin 0 2 1 "
	     "%u:%u 1 %u:%u 1'", b.major[0], b.minor[0], b.major[1], b.minor[1]);
	check_flags("/dev/mapper/dio_dur", &b, 0);
	must("dmsetup remove dio_dur");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_scsi, teardown),
		cmocka_unit_test_teardown(test_nvme, teardown),
		cmocka_unit_test_teardown(test_dm_linear, teardown),
		cmocka_unit_test_teardown(test_dm_multipath, teardown),
	};

	/* No udev in the guest: dmsetup makes the /dev/mapper nodes itself. */
	setenv("DM_DISABLE_UDEV", "1", 1);
	if (tl_dio_load())
		return 1;
	return cmocka_run_group_tests_name("durability", tests, NULL, NULL);
}
