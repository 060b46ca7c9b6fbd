// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dioctl scrub --repair-from SOURCE, as people run it: a scsi_debug DIF
 * disk (T10-DIF-TYPE1-CRC, 512-byte blocks) with blocks corrupted behind
 * their PI, repaired from a good copy of the same data:
 *
 * - a device: NVMe namespace 1 (the same PI format), written with the same
 *   data; a block corrupted on both is left alone and reported ("copy-bad",
 *   the source refused it), the others repaired; --dry-run first, which
 *   writes nothing (the blocks are still bad after it);
 * - an image file read from the good device: a block the image holds
 *   damaged in the same way ("holds the damaged data") and one it holds
 *   different from the PI the disk keeps for it are refused, the others
 *   repaired;
 * - "-": the good device's bytes through a pipe (dioctl read -O -), the
 *   whole device and a --range (the stream starts at START), and a stream
 *   that ends too soon ("source-error");
 * - scsi_debug's medium errors (reads only): each sector written and its
 *   read-back failing again ("read-back-failed"), exit status 3 kept;
 * - the disk made read-only while the scrub reads it (the scrub stopped
 *   with SIGSTOP before its repairs can have begun): "write-failed", EPERM.
 *
 * Every per-block outcome is asserted in the JSON (jq), the disk is
 * scrubbed again after each run (what was repaired stays repaired, what
 * was not is still bad), the repaired blocks compared byte for byte with
 * the source.  It runs on every stock kernel (tests/guest/run-suite.sh):
 * NVMe reports refusals differently before and from 6.14.  Every JSON
 * document is kept for the host's validation against the schema
 * ($RESULTS/repair-json, tests/vm/check.sh).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "dioctl_run.h"
#include "testlib.h"

#define MiB	(1024 * 1024ULL)
#define OUT	DIOCTL_OUT
#define ERR	DIOCTL_ERR
#define IMG	"/tmp/repair.img"
#define PROD	"/tmp/repair.producer"	/* the stderr of a pipe's producer */
/* The disk, and as much of the NVMe namespace: 16384 blocks. */
#define LEN	(8 * MiB)

/* Each failure: "INTERVAL OUTCOME ERROR", a line each (jq -r). */
#define OUTCOMES ".failures[] | \"\\(.interval) \\(.repair.outcome) \\(.repair.error)\""
#define COUNTS "[.pi_failures, .repair.source_type, .repair.dry_run, .repair.repaired, " \
	       ".repair.would_repair, .repair.not_repaired, .status, .exit_code] | @tsv"

/* @dev's failing intervals after a plain scrub, one line each ("" for none). */
static void expect_bad(const char *dev, const char *want)
{
	int st = run("scrub %s -j", dev);

	expect_exit(st, want[0] ? 4 : 0);
	expect_jq("[.failures[].interval | tostring] | join(\" \")", want);
	expect_jq(".repair | tostring", "null");
}

/*
 * Block @blk of the scsi_debug disk @dev changed behind its PI: byte @at
 * xor @x, written with the kernel's PI generation off, so that the disk
 * keeps the old tuple (t_dioctl's scrub tests do the same).
 */
static void corrupt_sd(const char *dev, uint64_t blk, int at, int x)
{
	unsigned char *b = tl_xalloc(512, 0);
	int fd;

	assert_int_equal(sh("echo 0 > /sys/block/%s/integrity/write_generate",
			    tl_basename(dev)), 0);
	fd = open(dev, O_RDWR | O_DIRECT);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, b, 512, blk * 512), 512);
	b[at] ^= x;
	assert_int_equal(pwrite(fd, b, 512, blk * 512), 512);
	close(fd);
	assert_int_equal(sh("echo 1 > /sys/block/%s/integrity/write_generate",
			    tl_basename(dev)), 0);
	free(b);
}


/* Byte @at of the file @path xor @x. */
static void poke(const char *path, long at, int x)
{
	FILE *f = fopen(path, "r+");
	int c;

	assert_non_null(f);
	assert_int_equal(fseek(f, at, SEEK_SET), 0);
	c = fgetc(f);
	assert_true(c != EOF);
	assert_int_equal(fseek(f, at, SEEK_SET), 0);
	assert_int_equal(fputc(c ^ x, f), c ^ x);
	assert_int_equal(fclose(f), 0);
}

/* Block @blk of @a and of @b, read with O_DIRECT, are the same bytes. */
static void expect_same(const char *a, const char *b, uint64_t blk)
{
	unsigned char *x = tl_xalloc(512, 0), *y = tl_xalloc(512, 0);
	int fa = open(a, O_RDONLY | O_DIRECT), fb = open(b, O_RDONLY | O_DIRECT);

	assert_true(fa >= 0 && fb >= 0);
	assert_int_equal(pread(fa, x, 512, blk * 512), 512);
	assert_int_equal(pread(fb, y, 512, blk * 512), 512);
	assert_memory_equal(x, y, 512);
	close(fa);
	close(fb);
	free(x);
	free(y);
}

static char sd[64], nv[64];

/* The disk and the namespace's first LEN bytes: the same data and PI. */
static int setup(void **state)
{
	if (tl_scsi_debug_load("dev_size_mb=8 dif=1 dix=1", sd, sizeof(sd)) ||
	    tl_nvme_dev(1, nv, sizeof(nv)))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	unlink(IMG);
	return tl_scsi_debug_unload();
}

static void write_both(void)
{
	expect_exit(run("write %s -l %llu --random 5 --pi", sd, LEN), 0);
	expect_exit(run("write %s -l %llu --random 5 --pi", nv, LEN), 0);
	expect_bad(sd, "");
}

/* From a device; a block bad on both; --dry-run first. */
static void test_repair_from_device(void **state)
{
	char want[256];

	write_both();
	corrupt_sd(sd, 100, 7, 0xff);
	corrupt_sd(sd, 2001, 300, 0x01);
	corrupt_sd(sd, 9000, 511, 0x80);
	/* NVMe namespace 1 behind its PI: its image, data first (mset=0). */
	poke("/tmp/results/nvme1.img", 9000 * 512 + 20, 0x5a);
	/* The source's own scrub sees its bad block. */
	expect_exit(run("scrub %s -r 0:%llu -j", nv, LEN), 4);
	expect_jq("[.failures[].interval | tostring] | join(\" \")", "9000");

	/* --dry-run: what it would do; nothing written. */
	expect_exit(run("scrub %s --repair-from %s --dry-run -j", sd, nv), 4);
	expect_jq(OUTCOMES, "100 would-repair null\n2001 would-repair null\n9000 copy-bad EILSEQ");
	expect_jq(COUNTS, "3\tdevice\ttrue\t0\t2\t1\tpi-failure\t4");
	snprintf(want, sizeof(want), ".failures[2].repair.reason | startswith(\"%s refused its "
		 "copy: \")", nv);
	expect_jq(want, "true");
	expect_bad(sd, "100 2001 9000");
	/* The text report of a dry run. */
	expect_exit(run("scrub %s --repair-from %s --dry-run", sd, nv), 4);
	expect_in(OUT, "    would be repaired (dry run)\n");
	expect_in(OUT, "    not repaired: the copy is bad too: ");
	expect_in(OUT, " (dry run, nothing written): 2 would be repaired, 1 not\n");
	expect_bad(sd, "100 2001 9000");

	/* The repair: two blocks, the third left alone and reported. */
	expect_exit(run("scrub %s --repair-from %s -j", sd, nv), 4);
	expect_jq(OUTCOMES, "100 repaired null\n2001 repaired null\n9000 copy-bad EILSEQ");
	expect_jq(COUNTS, "3\tdevice\tfalse\t2\t0\t1\tpi-failure\t4");
	expect_jq("[.failures[0].repair.reason, .failures[1].repair.reason] | @json", "[null,null]");
	snprintf(want, sizeof(want), "; 2 repaired from %s, 1 left\n", nv);
	expect_in(ERR, want);
	expect_bad(sd, "9000");
	expect_same(sd, nv, 100);
	expect_same(sd, nv, 2001);
	/* The source is made good again: the last one repaired, exit 0. */
	expect_exit(run("write %s -s %d -l 512 --random 5 --pi", nv, 9000 * 512), 0);
	expect_exit(run("scrub %s --repair-from %s", sd, nv), 0);
	expect_in(OUT, "    repaired\n");
	snprintf(want, sizeof(want), "repair from %s: 1 repaired, 0 not\n", nv);
	expect_in(OUT, want);
	expect_bad(sd, "");
	expect_same(sd, nv, 9000);
	/* Nothing to repair: the document says so, exit 0. */
	expect_exit(run("scrub %s --repair-from %s -j", sd, nv), 0);
	expect_jq(COUNTS, "0\tdevice\tfalse\t0\t0\t0\tok\t0");
}

/* From an image file; copies that do not match the disk's PI refused. */
static void test_repair_from_file(void **state)
{
	write_both();
	/* The image: the good device's bytes, as a user makes it. */
	expect_exit(run("read %s -l %llu -v -O " IMG, nv, LEN), 0);
	corrupt_sd(sd, 3000, 100, 0x10);
	corrupt_sd(sd, 5000, 100, 0x10);
	corrupt_sd(sd, 12000, 100, 0x10);
	corrupt_sd(sd, 16383, 0, 0x01);
	/* 5000: damaged in the image the same way; 12000: differently. */
	poke(IMG, 5000 * 512 + 100, 0x10);
	poke(IMG, 12000 * 512 + 200, 0x01);

	expect_exit(run("scrub %s --repair-from " IMG " --dry-run -j", sd), 4);
	expect_jq(OUTCOMES, "3000 would-repair null\n5000 copy-bad null\n"
		  "12000 copy-bad null\n16383 would-repair null");
	expect_bad(sd, "3000 5000 12000 16383");
	expect_exit(run("scrub %s --repair-from " IMG " -j", sd), 4);
	expect_jq(OUTCOMES, "3000 repaired null\n5000 copy-bad null\n"
		  "12000 copy-bad null\n16383 repaired null");
	expect_jq(COUNTS, "4\tfile\tfalse\t2\t0\t2\tpi-failure\t4");
	expect_jq(".failures[1].repair.reason | test(\"holds the damaged data\")", "true");
	expect_jq(".failures[2].repair.reason | test(\"does not match the PI the device holds\")",
		  "true");
	expect_bad(sd, "5000 12000");
	expect_same(sd, nv, 3000);
	expect_same(sd, nv, 16383);
	/* A file too short for a block: source-error. */
	assert_int_equal(sh("truncate -s 4M " IMG), 0);
	expect_exit(run("scrub %s --repair-from " IMG " -j", sd), 4);
	expect_jq(OUTCOMES, "5000 copy-bad null\n12000 source-error null");
}

/* From stdin: the whole device, a range (the stream starts at START), too short. */
static void test_repair_from_stdin(void **state)
{
	char prefix[1024];

	write_both();
	corrupt_sd(sd, 1, 1, 0x02);
	corrupt_sd(sd, 3000, 2, 0x04);
	corrupt_sd(sd, 12000, 3, 0x08);
	/* Too short: the stream ends at 4 MiB, before 12000's block. */
	snprintf(prefix, sizeof(prefix), "%s read %s -l 4M -O - 2>" PROD " | ", dioctl, nv);
	expect_exit(run_in(prefix, "scrub %s --repair-from - -j", sd), 4);
	expect_jq(OUTCOMES, "1 repaired null\n3000 repaired null\n12000 source-error null");
	expect_jq(COUNTS, "3\tstream\tfalse\t2\t0\t1\tpi-failure\t4");
	expect_jq(".failures[2].repair.reason", "- ended at byte 4194304 of the device");
	expect_bad(sd, "12000");
	/* The whole device: read to its end (the producer ends cleanly). */
	corrupt_sd(sd, 5, 4, 0x20);
	snprintf(prefix, sizeof(prefix), "%s read %s -l %llu -O - 2>" PROD " | ", dioctl,
		 nv, LEN);
	expect_exit(run_in(prefix, "scrub %s --repair-from - -j", sd), 0);
	expect_in(PROD, "read 8388608 bytes at offset 0 from ");
	expect_jq(OUTCOMES, "5 repaired null\n12000 repaired null");
	expect_jq(COUNTS, "2\tstream\tfalse\t2\t0\t0\tok\t0");
	expect_bad(sd, "");
	expect_same(sd, nv, 5);
	expect_same(sd, nv, 12000);
	/* A range: the stream holds START..END. */
	corrupt_sd(sd, 3000, 2, 0x04);
	corrupt_sd(sd, 3001, 2, 0x04);
	snprintf(prefix, sizeof(prefix), "%s read %s -s 1M -l 1M -O - 2>" PROD " | ",
		 dioctl, nv);
	expect_exit(run_in(prefix, "scrub %s -r 1M:2M --repair-from - -j", sd), 0);
	expect_in(PROD, "read 1048576 bytes at offset 1048576 from ");
	expect_jq(OUTCOMES, "3000 repaired null\n3001 repaired null");
	expect_bad(sd, "");
	expect_same(sd, nv, 3000);
	expect_same(sd, nv, 3001);
}

/*
 * I/O errors (scsi_debug's medium errors, on reads only): each sector's
 * copy is written, and reading it back fails again: read-back-failed, and
 * the exit status stays 3.
 */
static void test_repair_io_errors(void **state)
{
	unsigned long long start, count, i;
	char want[1024], *v;

	v = tl_sysfs_read("/sys/module/scsi_debug/parameters/medium_error_start");
	assert_non_null(v);
	start = strtoull(v, NULL, 0);
	free(v);
	v = tl_sysfs_read("/sys/module/scsi_debug/parameters/medium_error_count");
	assert_non_null(v);
	count = strtoull(v, NULL, 0);
	free(v);
	assert_true(count > 0 && count < 20 && (start + count) * 512 <= LEN);
	write_both();
	want[0] = 0;
	for (i = 0; i < count; i++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%llu",
			 i ? " " : "", (start + i) * 512);
	assert_int_equal(sh("echo 2 > /sys/bus/pseudo/drivers/scsi_debug/opts"), 0);
	expect_exit(run("scrub %s --repair-from %s --dry-run -j", sd, nv), 3);
	expect_jq("[.failures[] | select(.repair.outcome == \"would-repair\") | .offset | tostring] "
		  "| join(\" \")", want);
	expect_exit(run("scrub %s --repair-from %s -j", sd, nv), 3);
	assert_int_equal(sh("echo 0 > /sys/bus/pseudo/drivers/scsi_debug/opts"), 0);
	expect_jq("[.failures[] | select(.repair.outcome == \"read-back-failed\") | .offset | "
		  "tostring] | join(\" \")", want);
	expect_jq("[.failures[].repair.error] | unique | .[0] | test(\"^(ENODATA|EIO)$\")", "true");
	expect_jq("[.failures[].repair.error] | unique | length", "1");
	snprintf(want, sizeof(want), "0\tdevice\tfalse\t0\t0\t%llu\tio-error\t3", count);
	expect_jq(COUNTS, want);
	expect_bad(sd, "");
}

static void set_ro(const char *dev, int on)
{
	int fd = open(dev, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(ioctl(fd, BLKROSET, &on), 0);
	close(fd);
}

/*
 * A write that fails: the disk made read-only (BLKROSET, blockdev
 * --setro) while the scrub reads it, before its repairs.  The scrub, held
 * to 1 MB/s, is stopped (SIGSTOP) once the disk has read 512 KiB for it;
 * then it has not read all 8 MiB yet, so it has not begun its repairs
 * (they come after the last read completes, which the disk counts first).
 */
static void test_repair_write_failed(void **state)
{
	unsigned long long base, got;
	int i, st, fd;
	pid_t pid;

	write_both();
	corrupt_sd(sd, 100, 1, 0x01);
	sh("command -v udevadm >/dev/null && udevadm settle");
	base = sectors_read(sd);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		fd = open(OUT, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(126);
		fd = open(ERR, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execl(dioctl, "dioctl", "scrub", sd, "--rate", "1", "-b", "256K", "--repair-from",
		      nv, "-j", (char *)NULL);
		_exit(127);
	}
	/* A hang guard of 60 s (x tl_slow_factor()) for the first 512 KiB. */
	for (i = 0; i < 6000 * tl_slow_factor() && sectors_read(sd) - base < 1024; i++)
		usleep(10000);
	assert_int_equal(kill(pid, SIGSTOP), 0);
	got = sectors_read(sd) - base;
	print_message("# stopped after %llu sectors read\n", got);
	assert_true(got >= 1024);
	assert_true(got < LEN / 512);
	set_ro(sd, 1);
	assert_int_equal(kill(pid, SIGCONT), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	set_ro(sd, 0);
	assert_true(WIFEXITED(st));
	dioctl_ran(WEXITSTATUS(st), "scrub (read-only before its repairs) --repair-from -j");
	expect_exit(WEXITSTATUS(st), 4);
	expect_jq(OUTCOMES, "100 write-failed EPERM");
	expect_jq(".failures[0].repair.reason | test(\"Operation not permitted\")", "true");
	expect_bad(sd, "100");
	/* Read-only from the start: --dry-run opens it read-only; a repair cannot. */
	set_ro(sd, 1);
	expect_exit(run("scrub %s --repair-from %s -j", sd, nv), 2);
	expect_in(ERR, "Read-only file system (EROFS)");
	expect_exit(run("scrub %s --repair-from %s --dry-run -j", sd, nv), 4);
	expect_jq(OUTCOMES, "100 would-repair null");
	set_ro(sd, 0);
	expect_bad(sd, "100");
}

/* Command lines refused. */
static void test_usage(void **state)
{
	expect_exit(run("scrub %s --dry-run -j", sd), 1);
	expect_in(ERR, "--dry-run: with --repair-from only");
	expect_exit(run("scrub %s --repair-from /dev/dio-no-such-disk -j", sd), 2);
	expect_in(ERR, "--repair-from /dev/dio-no-such-disk: No such file or directory");
	expect_exit(run("scrub %s --repair-from /tmp -j", sd), 2);
	expect_in(ERR, "--repair-from /tmp: Is a directory (EISDIR)");
	expect_exit(run("read %s --repair-from %s", sd, nv), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_usage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repair_from_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repair_from_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repair_from_stdin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repair_io_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repair_write_failed, setup, teardown),
	};

	if (dioctl_run_init("repair-json", 0) || tl_dio_load())
		return 1;
	return cmocka_run_group_tests_name("repair", tests, NULL, NULL);
}
