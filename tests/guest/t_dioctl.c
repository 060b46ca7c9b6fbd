// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dioctl, the command-line tool, run as people run it: as a child
 * process with arguments, checked by exit status, stdout (JSON parsed
 * with jq and python3 -m json.tool, compared field by field), stderr,
 * and progress under a pseudo-terminal (script) and not when piped.
 *
 * Every size here is what its check needs, no more: PI generation and
 * verification of each MiB costs the TCG guest real CPU time.  Process
 * starts cost it more: python3 parses all of a test's JSON documents at
 * its end in one run (json_check()), not each once per field compared,
 * and jq runs without a shell.
 *
 * - every exit status: 0, 1 (usage), 2 (module or device unreachable),
 *   3 (I/O error: scsi_debug medium errors), 4 (PI failure), 5 (not
 *   supported: PI on a disk without), 130 (scrub interrupted by SIGINT);
 * - scrub of 16 MiB with three blocks corrupted behind their PI
 *   (scsi_debug: a 16 MiB disk, written with the kernel's PI generation
 *   off; NVMe: the first 16 MiB of the namespace, its image edited) finds
 *   exactly those three, with tag and values where the kernel can tell
 *   them (scsi_debug everywhere, NVMe from 6.14), the block alone on NVMe
 *   before;
 * - scrub, write and read of a 32 MiB device under a 24 MiB address-space
 *   cap (ulimit -v), and the cap exceeded by a large --depth;
 * - read --output and write --input through files and pipes, tag get
 *   and tag set, --version, per-command --help;
 * - with --json, one document whatever happens: the error document of
 *   every failure path (its message the line on stderr), tag get ending
 *   its document at a bad block; every document kept for the host's
 *   validation against tools/dioctl.schema.json (tests/lib/dioctl_run.h);
 * - /dev/dio_batch as group dio_batch, mode 0660: a user not in the group
 *   (uid 1000, setpriv) is told so, with the group and the mode.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "dioctl_run.h"
#include "testlib.h"

#define MiB	(1024 * 1024ULL)
#define OUT	DIOCTL_OUT
#define ERR	DIOCTL_ERR

/*
 * OUT is the error document of a failure: "status": "error", @code,
 * errno name @err (NULL: null), @command (NULL: null), and its message is
 * the last line dioctl printed on stderr, without "dioctl: ".
 */
static void expect_error_doc(int code, const char *err, const char *command)
{
	char *msg, *e = slurp(ERR), *line;
	size_t n;

	expect_jqf("[.status, .exit_code, (.error | tostring), (.command | tostring)] | @tsv",
		   "error\t%d\t%s\t%s", code, err ? err : "null", command ? command : "null");
	msg = jq(".message");
	assert_true(asprintf(&line, "dioctl: %s\n", msg) > 0);
	n = strlen(e);
	if (n < strlen(line) || strcmp(e + n - strlen(line), line)) {
		print_message("# stderr does not end with the document's message:\n%s# stderr:\n%s",
			      line, e);
		fail();
	}
	free(line);
	free(msg);
	free(e);
}

/* Add @line to the lines of @buf (size @len), newline-separated as jq -r prints them. */
static void __attribute__((format(printf, 3, 4)))
add_line(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n)
		n += snprintf(buf + n, len - n, "\n");
	assert_true(n < len);
	va_start(ap, fmt);
	assert_true((size_t)vsnprintf(buf + n, len - n, fmt, ap) < len - n);
	va_end(ap);
}

static int teardown(void **state)
{
	int ret = json_check();

	return tl_scsi_debug_unload() || ret;
}

/* @len bytes of @dev at @off, read with O_DIRECT (no claim). */
static void pread_dev(const char *dev, void *buf, size_t len, uint64_t off)
{
	int fd = open(dev, O_RDONLY | O_DIRECT);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, off), (ssize_t)len);
	close(fd);
}

/* ---- the command line ---- */

static void test_version_and_help(void **state)
{
	static const char *const cmds[][2] = {
		{ "features", "--json" }, { "query", "--output-format" },
		{ "read", "--output FILE" }, { "write", "--input FILE" },
		{ "scrub", "--range START:END" }, { "tag", "--lba N" },
	};
	size_t i;

	expect_exit(run("--version"), 0);
	expect_in(OUT, "dioctl " DIO_BATCH_VERSION " (dio_batch ABI ");
	expect_exit(run("-V"), 0);
	expect_in(OUT, "dioctl " DIO_BATCH_VERSION);
	expect_exit(run("--help"), 0);
	expect_in(OUT, "Exit status: 0 success, 1 usage error");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		expect_exit(run("%s --help", cmds[i][0]), 0);
		expect_in(OUT, "usage: dioctl ");
		expect_in(OUT, cmds[i][0]);
		expect_in(OUT, cmds[i][1]);
		expect_exit(run("%s -h", cmds[i][0]), 0);
		expect_in(OUT, cmds[i][1]);
	}
	/* Each command's own help, not the global one. */
	expect_exit(run("scrub --help"), 0);
	expect_in(OUT, "--rate MB/s");
	expect_exit(run("read --help"), 0);
	expect_in(OUT, "--verify");
}

static void test_usage_errors(void **state)
{
	static const char *const bad[] = {
		"", "frob", "read /dev/null --bogus", "read /dev/null --rate 5",
		"scrub /dev/null --range 5", "scrub /dev/null --range 8:4",
		"write /dev/null --length 1Q", "write /dev/null --app-tag 0x10000",
		"features extra", "query", "query /dev/a /dev/b", "tag frob /dev/null",
		"scrub /dev/null -o yaml", "read /dev/null -O - --json",
		"scrub /dev/null --depth 0",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		expect_exit(run("%s", bad[i]), 1);
		expect_in(ERR, "dioctl");
	}
	expect_exit(run("read /dev/null --rate 5"), 1);
	expect_in(ERR, "'--rate' is not an option of this command");

	/*
	 * With --json, each prints the error document on stdout (dioctl(1):
	 * one document per command, whatever happens), the command named
	 * when dioctl knows it.
	 */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *cmd = NULL;

		if (!bad[i][0] || strstr(bad[i], "-o yaml"))
			continue;	/* no command; -o yaml after -j: no JSON */
		if (!strncmp(bad[i], "tag ", 4))
			cmd = "tag";
		else if (strncmp(bad[i], "frob", 4))
			cmd = strndup(bad[i], strcspn(bad[i], " "));
		expect_exit(run("%s -j", bad[i]), 1);
		expect_error_doc(1, NULL, cmd);
		if (cmd && strcmp(cmd, "tag"))
			free((char *)cmd);
	}
	expect_exit(run("--json frob"), 1);
	expect_error_doc(1, NULL, NULL);
	expect_exit(run("tag get -L 0 -j"), 1);
	expect_error_doc(1, NULL, "tag get");
	expect_exit(run("read -o json /dev/null --rate 5"), 1);
	expect_error_doc(1, NULL, "read");
	expect_jq(".device", "null");
	expect_exit(run("scrub /dev/null --output-format=json -r 8:4"), 1);
	expect_error_doc(1, NULL, "scrub");
	/* -o normal after --json: text, nothing on stdout. */
	expect_exit(run("scrub /dev/null --json -o normal -r 8:4"), 1);
	expect_in(ERR, "END must be above START");
	{
		char *o = slurp(OUT);

		assert_string_equal(o, "");
		free(o);
	}
}

/* Exit status 2: no module, no device, not a block device, claimed. */
static void test_unreachable(void **state)
{
	char dev[64];
	int ctx, fd;

	expect_exit(run("query /dev/dio-no-such-disk"), 2);
	expect_in(ERR, "open /dev/dio-no-such-disk: No such file or directory (ENOENT)");
	expect_exit(run("query /dev/null"), 2);
	expect_in(ERR, "ENOTBLK");
	/* Open failures: the error document, with the device. */
	expect_exit(run("query /dev/dio-no-such-disk -j"), 2);
	expect_error_doc(2, "ENOENT", "query");
	expect_jq(".device", "/dev/dio-no-such-disk");
	expect_exit(run("read /dev/null -j -l 4K"), 2);
	expect_error_doc(2, "ENOTBLK", "read");

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=4 dif=1 dix=1", dev, sizeof(dev)), 0);
	ctx = sys_dio_init(0, DIO_PRIVATE);
	assert_true(ctx >= 0);
	fd = open(dev, O_RDWR);
	assert_true(fd >= 0);
	assert_true(sys_dio_open(ctx, fd, 0) >= 1);
	expect_exit(run("scrub %s", dev), 2);
	expect_in(ERR, "EBUSY");
	expect_exit(run("tag get %s -L 0 -n 1 -j", dev), 2);
	expect_error_doc(2, "EBUSY", "tag get");
	close(ctx);
	close(fd);
	expect_exit(run("scrub %s -b 64K", dev), 0);

	/* The module away: the control device is not there. */
	assert_int_equal(tl_scsi_debug_unload(), 0);
	assert_int_equal(tl_dio_unload(), 0);
	expect_exit(run("features"), 2);
	expect_in(ERR, "cannot reach /dev/dio_batch (is the dio_batch module loaded?)");
	expect_exit(run("features --json"), 2);
	expect_error_doc(2, "ENOENT", "features");
	expect_in(OUT, "is the dio_batch module loaded?");
	expect_exit(run("scrub /dev/null -j"), 2);
	expect_error_doc(2, "ENOENT", "scrub");
	assert_int_equal(tl_dio_load(), 0);
	expect_exit(run("features"), 0);
}

/* Exit status 5: PI asked of a disk without. */
static void test_not_supported(void **state)
{
	char dev[64];

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=4 dif=0 dix=0", dev, sizeof(dev)), 0);
	expect_exit(run("read %s -l 4096 --pi", dev), 5);
	expect_in(ERR, "EOPNOTSUPP");
	expect_exit(run("scrub %s --app-tag 1", dev), 5);
	expect_exit(run("tag get %s -L 0 -n 1", dev), 5);
	expect_exit(run("read %s -l 4096 --pi -j", dev), 5);
	expect_error_doc(5, "EOPNOTSUPP", "read");
	expect_exit(run("tag set %s -L 0 -n 1 -a 1 -j", dev), 5);
	expect_error_doc(5, "EOPNOTSUPP", "tag set");
	/* Without PI a scrub still reads every block. */
	expect_exit(run("scrub %s -j", dev), 0);
	expect_jq("[.pi, .bytes_scrubbed, (.pi_profile | tostring), .status, .interval_size] | @tsv",
		  "false\t4194304\tnull\tok\t512");
}

/* ---- JSON of features and query ---- */

static void test_json_features_query(void **state)
{
	struct dio_features f;
	char dev[64], *a, *b;

	assert_int_equal(sys_dio_features(&f), 0);
	expect_exit(run("features --json"), 0);
	expect_jq(".command", "features");
	expect_jqf("[.dioctl_version, .abi_version, .tool_abi_version, .features.value, "
		   ".pi_flags.value, .opcodes.value, .max_batch, .max_inflight, "
		   ".max_pi_bytes, .max_user_pinned, .max_fixed_bufs, .max_fixed_buf_bytes] | @tsv",
		   "%s\t%u\t%u\t%llu\t%u\t%u\t%u\t%u\t%u\t%llu\t%u\t%llu", DIO_BATCH_VERSION,
		   f.abi_version, DIO_BATCH_ABI_VERSION, (unsigned long long)f.features,
		   f.pi_flags, f.opcodes, f.max_batch, f.max_inflight, f.max_pi_bytes,
		   (unsigned long long)f.max_user_pinned, f.max_fixed_bufs,
		   (unsigned long long)f.max_fixed_buf_bytes);
	expect_jq("any(.features.names[]; . == \"pi\")", "true");
	expect_jq("[.features.names[] | select(. == \"pin-limit\" or . == \"fixed-bufs\")] | join(\",\")",
		  "pin-limit,fixed-bufs");
	expect_jq("any(.request_flags.names[]; . == \"fixed\")", "true");
	expect_jq(".opcodes.names | join(\",\")", "read,write,flush");

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=64 dif=1 dix=1", dev, sizeof(dev)), 0);
	expect_exit(run("query %s -j", dev), 0);
	expect_jq(".command", "query");
	expect_jqf("[.device, .capacity, .blocks, .logical_block_size, .pi_profile, "
		   ".pi_guard_type, .pi_guard, .pi_type, .pi_interval, .pi_tuple_size, "
		   ".pi_md_size, .pi_offset, .pi_app_tag_size, .pi_ref_tag_size, "
		   ".partition_start] | @tsv",
		   "%s\t67108864\t131072\t512\tT10-DIF-TYPE1-CRC\t%d\tCRC16 T10-DIF\t1\t512"
		   "\t8\t8\t0\t2\t4\t0", dev, DIO_GUARD_CRC16);
	expect_jq("any(.pi_caps.names[]; . == \"nocheck\")", "true");
	a = slurp(OUT);
	/* -o json is --json. */
	expect_exit(run("query -o json %s", dev), 0);
	b = slurp(OUT);
	assert_string_equal(a, b);
	free(a);
	free(b);
	/* The text form keeps its lines (tests/vm/demo.sh greps them). */
	expect_exit(run("query %s", dev), 0);
	expect_in(OUT, "pi profile           T10-DIF-TYPE1-CRC\n");
}

/* ---- scrub with corrupted blocks ---- */

/*
 * Both scrub tests corrupt these blocks of 512 bytes and scrub 16 MiB
 * (32768 blocks): one early, one in the middle at an odd block (not on a
 * 4 KiB boundary), one near the end.  The size is not the point; each
 * MiB scrubbed costs the TCG guest its PI generation and verification.
 */
#define SCRUB_LEN	(16 * MiB)
static const uint64_t bad_blocks[3] = { 1000, 12001, 30000 };

static void test_scrub_scsi_corruption(void **state)
{
	unsigned char *blk = tl_xalloc(512, 0);
	uint16_t expected[3], actual[3];
	char dev[64], want[1024], *s;
	int i, fd;

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1", dev, sizeof(dev)), 0);
	expect_exit(run("write %s --length 16M --random 7 --pi --json", dev), 0);
	expect_jqf("[.command, .device, .offset, .length, .requests, .pi, .first_interval, "
		   ".last_interval, .status, .exit_code, (.failures | length)] | @tsv",
		   "write\t%s\t0\t16777216\t16\ttrue\t0\t32767\tok\t0\t0", dev);
	expect_exit(run("scrub %s", dev), 0);
	expect_in(OUT, "no failures\n");

	/* Three blocks changed behind their PI: the disk keeps the old tuples. */
	assert_int_equal(sh("echo 0 > /sys/block/%s/integrity/write_generate",
			    tl_basename(dev)), 0);
	fd = open(dev, O_RDWR | O_DIRECT);
	assert_true(fd >= 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(pread(fd, blk, 512, bad_blocks[i] * 512), 512);
		actual[i] = dio_pi_crc16_t10dif(0, blk, 512);
		blk[100 + i] ^= 0xff;
		expected[i] = dio_pi_crc16_t10dif(0, blk, 512);
		assert_int_equal(pwrite(fd, blk, 512, bad_blocks[i] * 512), 512);
	}
	close(fd);
	assert_int_equal(sh("echo 1 > /sys/block/%s/integrity/write_generate",
			    tl_basename(dev)), 0);

	expect_exit(run("scrub %s --json", dev), 4);
	s = jq(".end");
	assert_string_equal(s, "16777216");
	free(s);
	/* expect_three with the sizes filled in. */
	{
		char want_tsv[512];

		snprintf(want_tsv, sizeof(want_tsv),
			 "scrub\t%s\ttrue\t512\t512\t0\t16777216\t16777216\t16777216\tfalse\ttrue\t3"
			 "\t0\t0\tpi-failure\t4\t3", dev);
		expect_jq("[.command, .device, .pi, .interval, .interval_size, .start, .end, .bytes_total, "
			  ".bytes_scrubbed, .interrupted, .complete, .pi_failures, .io_errors, "
			  ".unlisted_failures, .status, .exit_code, (.failures | length)] | @tsv",
			  want_tsv);
	}
	/* The three, each a line (one jq for all of them). */
	want[0] = 0;
	for (i = 0; i < 3; i++)
		add_line(want, sizeof(want), "%llu %llu guard %#x %#x device EILSEQ",
			 (unsigned long long)bad_blocks[i] * 512,
			 (unsigned long long)bad_blocks[i], expected[i], actual[i]);
	expect_jq(".failures[] | \"\\(.offset) \\(.interval) \\(.tag) \\(.expected) \\(.actual) "
		  "\\(.found_by) \\(.error)\"", want);
	expect_in(ERR, "dioctl scrub");
	/* The text report: the same three, and the exit status. */
	expect_exit(run("scrub %s -d 4", dev), 4);
	expect_in(OUT, "3 PI failures, 0 I/O errors:\n");
	for (i = 0; i < 3; i++) {
		snprintf(want, sizeof(want), "  block at byte %llu (interval %llu): guard tag, "
			 "expected %#x, actual %#x; found by device\n",
			 (unsigned long long)bad_blocks[i] * 512,
			 (unsigned long long)bad_blocks[i], expected[i], actual[i]);
		expect_in(OUT, want);
	}
	expect_in(ERR, "dioctl: scrub of ");
	expect_in(ERR, " found 3 PI failures and 0 I/O errors\n");

	/* A range that holds one of them. */
	expect_exit(run("scrub %s -j -r %llu:%llu", dev,
			(unsigned long long)(bad_blocks[1] - 10) * 512,
			(unsigned long long)(bad_blocks[1] + 10) * 512), 4);
	expect_jqf("[.bytes_scrubbed, .pi_failures, .failures[0].interval] | @tsv",
		   "10240\t1\t%llu", (unsigned long long)bad_blocks[1]);
	/* A read over a bad block stops there and says which, exit 4. */
	expect_exit(run("read %s -s %llu -l 64K --pi", dev,
			(unsigned long long)bad_blocks[0] * 512 - 4096), 4);
	snprintf(want, sizeof(want), "PI error: block 8 of this I/O (interval %llu",
		 (unsigned long long)bad_blocks[0]);
	expect_in(OUT, want);
	expect_in(ERR, "protection information check failed (EILSEQ)");
	/*
	 * tag get over a bad block with --json: the document ends there with
	 * the failure (the tuples before it listed; here none: one request).
	 */
	expect_exit(run("tag get %s -L %llu -n 4 -j", dev, (unsigned long long)bad_blocks[1] - 2), 4);
	expect_jq("[.command, .status, .exit_code, .error, (.tags | length), .interval_size] | @tsv",
		  "tag get\tpi-failure\t4\tEILSEQ\t0\t512");
	expect_exit(run("tag get %s -L %llu -n 4 -j -b 1K", dev,
			(unsigned long long)bad_blocks[1] - 2), 4);
	expect_jqf("[.status, .exit_code, (.tags | length), .tags[0].lba, .tags[1].interval] | @tsv",
		   "pi-failure\t4\t2\t%llu\t%llu", (unsigned long long)bad_blocks[1] - 2,
		   (unsigned long long)bad_blocks[1] - 1);
	expect_in(ERR, "protection information check failed (EILSEQ)");
	/* Repaired from the same data (--random depends on the offset only): clean. */
	for (i = 0; i < 3; i++) {
		unsigned long long at = bad_blocks[i] * 512 / 4096 * 4096;

		expect_exit(run("write %s -s %llu -l 4K --random 7 --pi", dev, at), 0);
		expect_exit(run("scrub %s -r %llu:%llu -j", dev, at, at + 4096), 0);
		expect_jq("[.pi_failures, .bytes_scrubbed, .status] | @tsv", "0\t4096\tok");
	}
	free(blk);
}

static void test_scrub_nvme_corruption(void **state)
{
	unsigned char *blk = tl_xalloc(512, 0);
	uint16_t expected[3], actual[3];
	char dev[64], want[2048];
	uint64_t cap;
	FILE *img;
	int i;

	assert_int_equal(tl_nvme_dev(1, dev, sizeof(dev)), 0);
	expect_exit(run("query %s -j", dev), 0);
	expect_jq(".pi_profile", "T10-DIF-TYPE1-CRC");
	{
		char *c = jq(".capacity");

		cap = strtoull(c, NULL, 0);
		free(c);
	}
	print_message("# %s: %llu bytes\n", dev, (unsigned long long)cap);
	assert_true(cap > 60 * MiB && cap <= 64 * MiB);
	/*
	 * Its first 16 MiB (SCRUB_LEN), written and scrubbed as a range: the
	 * whole device as the default range is test_scrub_scsi_corruption's.
	 */
	expect_exit(run("write %s -l %llu --random 11 --pi", dev, SCRUB_LEN), 0);
	expect_exit(run("scrub %s -r 0:%llu", dev, SCRUB_LEN), 0);
	expect_in(OUT, "no failures\n");

	/* QEMU keeps the data first in the image (mset=0): flip a byte of each. */
	img = fopen("/tmp/results/nvme1.img", "r+");
	assert_non_null(img);
	for (i = 0; i < 3; i++) {
		pread_dev(dev, blk, 512, bad_blocks[i] * 512);
		actual[i] = dio_pi_crc16_t10dif(0, blk, 512);
		blk[200 + i] ^= 0x5a;
		expected[i] = dio_pi_crc16_t10dif(0, blk, 512);
		assert_int_equal(fseek(img, (long)(bad_blocks[i] * 512 + 200 + i), SEEK_SET), 0);
		assert_int_equal(fputc(blk[200 + i], img), blk[200 + i]);
	}
	fclose(img);

	/*
	 * Exact tags and values on every kernel: the module's own from 6.14,
	 * NVMe passthrough (dio_pi_explain()) before.
	 */
	expect_exit(run("scrub %s -r 0:%llu -j", dev, SCRUB_LEN), 4);
	expect_jqf("[.pi_failures, .io_errors, .bytes_scrubbed, .complete, .status, .exit_code] "
		   "| @tsv", "3\t0\t%llu\ttrue\tpi-failure\t4", SCRUB_LEN);
	want[0] = 0;
	for (i = 0; i < 3; i++)
		add_line(want, sizeof(want), "%llu %llu guard %#x %#x device EILSEQ null",
			 (unsigned long long)bad_blocks[i] * 512,
			 (unsigned long long)bad_blocks[i], expected[i], actual[i]);
	expect_jq(".failures[] | \"\\(.offset) \\(.interval) \\(.tag) \\(.expected) \\(.actual) "
		  "\\(.found_by) \\(.error) \\(.note)\"", want);
	expect_exit(run("scrub %s -r 0:%llu -d 16 -b 128K", dev, SCRUB_LEN), 4);
	expect_in(OUT, "3 PI failures, 0 I/O errors:\n");
	/*
	 * As a user who is not root, with the device readable: the same from
	 * 6.2; on 6.1 the passthrough is CAP_SYS_ADMIN's, and the report says
	 * so for each block.
	 */
	assert_int_equal(sh("chmod 0666 /dev/dio_batch && chmod 0644 %s", dev), 0);
	expect_exit(sh("setpriv --reuid=1000 --regid=1000 --clear-groups %s scrub %s -r 0:%llu "
		       "-j >" OUT " 2>" ERR, dioctl, dev, SCRUB_LEN), 4);
	assert_int_equal(sh("chmod 0600 /dev/dio_batch %s", dev), 0);
	want[0] = 0;
	for (i = 0; i < 3; i++) {
		if (tl_kernel_at_least(6, 2))
			add_line(want, sizeof(want), "%llu guard %#x %#x null",
				 (unsigned long long)bad_blocks[i], expected[i], actual[i]);
		else
			add_line(want, sizeof(want), "%llu null null null refused by the device; "
				 "this kernel's NVMe driver does not say which tag, and reading the "
				 "block raw by NVMe passthrough was refused (Linux 6.1 allows it only "
				 "with CAP_SYS_ADMIN; later kernels to a reader of the whole namespace)",
				 (unsigned long long)bad_blocks[i]);
	}
	expect_jq(".failures[] | \"\\(.interval) \\(.tag) \\(.expected) \\(.actual) \\(.note)\"",
		  want);
	/* A raw read of a bad block on every kernel (passthrough before 6.14). */
	expect_exit(run("read %s -s %llu -l 512 --raw --verify", dev,
			(unsigned long long)bad_blocks[0] * 512), 4);
	expect_in(OUT, "verify FAILED: block 0 ");
	expect_in(OUT, "guard tag expected");
	/* Repaired from the same data (--random depends on the offset only). */
	for (i = 0; i < 3; i++) {
		unsigned long long at = bad_blocks[i] * 512 / 4096 * 4096;

		expect_exit(run("write %s -s %llu -l 4K --random 11 --pi", dev, at), 0);
		expect_exit(run("scrub %s -r %llu:%llu -j", dev, at, at + 4096), 0);
		expect_jq("[.pi_failures, .bytes_scrubbed, .status] | @tsv", "0\t4096\tok");
	}
	free(blk);
}

/* Exit status 3: scsi_debug's medium errors, narrowed down to each sector. */
static void test_scrub_io_errors(void **state)
{
	char dev[64], want[4096], *v;
	unsigned long long start, count, i;

	/* 4 MiB: the medium errors (sectors 4660..4669 by default) are inside. */
	assert_int_equal(tl_scsi_debug_load("dev_size_mb=4 dif=1 dix=1", dev, sizeof(dev)), 0);
	v = tl_sysfs_read("/sys/module/scsi_debug/parameters/medium_error_start");
	assert_non_null(v);
	start = strtoull(v, NULL, 0);
	free(v);
	v = tl_sysfs_read("/sys/module/scsi_debug/parameters/medium_error_count");
	assert_non_null(v);
	count = strtoull(v, NULL, 0);
	free(v);
	print_message("# medium errors at sectors %llu..%llu\n", start, start + count - 1);
	assert_true(count > 0 && count < 100 && (start + count) * 512 < 4 * MiB);
	expect_exit(run("write %s -l 4M --pi", dev), 0);
	assert_int_equal(sh("echo 2 > /sys/bus/pseudo/drivers/scsi_debug/opts"), 0);
	expect_exit(run("read %s -s %llu -l 64K", dev, start * 512 / 65536 * 65536), 3);
	assert_int_equal(sh("echo 0 > /sys/bus/pseudo/drivers/scsi_debug/opts"), 0);
	expect_exit(run("read %s -s %llu -l 64K", dev, start * 512 / 65536 * 65536), 0);
	/* The scrub's report, back in OUT. */
	assert_int_equal(sh("echo 2 > /sys/bus/pseudo/drivers/scsi_debug/opts"), 0);
	expect_exit(run("scrub %s -j", dev), 3);
	assert_int_equal(sh("echo 0 > /sys/bus/pseudo/drivers/scsi_debug/opts"), 0);
	expect_jqf("[.pi_failures, .io_errors, .bytes_scrubbed, .complete, .status, .exit_code, "
		   "(.failures | length)] | @tsv", "0\t%llu\t4194304\ttrue\tio-error\t3\t%llu",
		   count, count);
	want[0] = 0;
	for (i = 0; i < count; i++)
		add_line(want, sizeof(want), "%llu 512 null null null", (start + i) * 512);
	expect_jq(".failures[] | \"\\(.offset) \\(.length) \\(.interval) \\(.tag) \\(.found_by)\"",
		  want);
	/* A medium error: ENODATA, or EIO where the kernel maps it so. */
	expect_jq("[.failures[].error] | unique | .[0] | test(\"^(ENODATA|EIO)$\")", "true");
	expect_jq("[.failures[].error] | unique | length", "1");
}

/*
 * Bounded memory: a device larger than the address space allowed.  The
 * cap (24 MiB) leaves dioctl room for its libraries (under 4 MiB) and its
 * default 8 requests of 1 MiB with their PI, but not for the 32 MiB disk:
 * a tool that held the whole device, or a buffer per MiB of it, fails.
 */
static void test_memory_cap(void **state)
{
	char dev[64];

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=32 dif=1 dix=1", dev, sizeof(dev)), 0);
	expect_exit(sh("ulimit -v 24576; %s write %s -l 32M --random 5 --pi -j >" OUT
		       " 2>" ERR, dioctl, dev), 0);
	expect_jq("[.length, .status] | @tsv", "33554432\tok");
	expect_exit(sh("ulimit -v 24576; %s scrub %s -j >" OUT " 2>" ERR, dioctl, dev), 0);
	expect_jq("[.bytes_scrubbed, .pi_failures, .complete] | @tsv", "33554432\t0\ttrue");
	expect_exit(sh("ulimit -v 24576; %s read %s -v -O - 2>" ERR " | cmp - %s >" OUT,
		       dioctl, dev, dev), 0);
	/* The cap bites: 64 requests of 1 MiB in flight do not fit in it. */
	expect_exit(sh("ulimit -v 24576; %s scrub %s -d 64 -b 1M >" OUT " 2>" ERR,
		       dioctl, dev), 3);
	expect_in(ERR, "ENOMEM");
}

/* ---- progress ---- */

static void test_progress(void **state)
{
	char dev[64], *s, *p;
	int lines = 0;

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1", dev, sizeof(dev)), 0);
	/*
	 * A terminal: updates in place, with rate, ETA and failures.  At
	 * 10 MB/s the 16 MiB take 1.6 s at least, however fast the machine:
	 * several of the updates dioctl makes every 0.2 s.
	 */
	expect_exit(sh("script -qec '%s scrub %s --rate 10' /dev/null >" OUT " 2>" ERR,
		       dioctl, dev), 0);
	s = slurp(OUT);
	print_message("# under a pty: %zu bytes, %d carriage returns\n", strlen(s),
		      (int)(strchr(s, '\r') ? 1 : 0));
	assert_non_null(strstr(s, "\rscrub "));
	assert_non_null(strstr(s, " MB/s, ETA "));
	assert_non_null(strstr(s, "16.0 MiB of 16.0 MiB (100%)"));
	assert_non_null(strstr(s, "0 failures"));
	/* More than one update at 10 MB/s over 16 MiB. */
	p = strstr(s, "\rscrub ");
	assert_non_null(strstr(p + 1, "\rscrub "));
	free(s);
	/* Piped: no updates, one final line. */
	expect_exit(sh("%s scrub %s 2>" ERR " | cat >" OUT, dioctl, dev), 0);
	s = slurp(ERR);
	assert_null(strchr(s, '\r'));
	assert_null(strstr(s, "ETA"));
	for (p = s; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 1);
	assert_int_equal(strncmp(s, "dioctl scrub ", 13), 0);
	assert_non_null(strstr(s, ": 16777216 of 16777216 bytes in "));
	free(s);
	expect_in(OUT, "no failures\n");
}

/*
 * Wait until the scrub @pid runs has read 2 MiB of @dev beyond @base
 * sectors: it is past its start (its SIGINT handler set) and well under
 * way, whatever the machine's speed (at --rate 4, half a second after its
 * first read).  A hang guard of 60 s (x tl_slow_factor()); the scrub
 * must not end before.
 */
static void scrub_under_way(const char *dev, unsigned long long base, pid_t pid)
{
	const int tries = 6000 * tl_slow_factor();
	siginfo_t si;
	int i;

	for (i = 0; i < tries && (sectors_read(dev) - base) * 512 < 2 * MiB; i++) {
		si.si_pid = 0;
		assert_int_equal(waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT), 0);
		if (si.si_pid == pid)
			fail_msg("dioctl scrub ended before it read 2 MiB");
		usleep(10000);
	}
	if (i == tries)
		fail_msg("dioctl scrub read %llu bytes in %d s",
			 (sectors_read(dev) - base) * 512, tries / 100);
}

/*
 * SIGINT: the report so far, exit 130 when nothing failed.  The signal
 * comes once the disk has read 2 MiB for the scrub (it slept 3 s before:
 * a scrub slow to start on a loaded guest could take it before its handler
 * was there, or show less than 1 MiB done); at --rate 4 (MB/s) the scrub
 * of 64 MiB is then 14 s or more from its end, and 32 MiB, the bound
 * checked, 6 s away at least (6.1 beside a kernel build: 8 MiB done, the
 * requests in flight at the signal included).
 */
static void test_sigint(void **state)
{
	unsigned long long done, base;
	char dev[64], *s;
	pid_t pid;
	int st;

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=64 dif=1 dix=1", dev, sizeof(dev)), 0);
	base = sectors_read(dev);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int o = open(OUT, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(ERR, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(o, 1);
		dup2(e, 2);
		execl(dioctl, "dioctl", "scrub", dev, "--rate", "4", "--json", (char *)NULL);
		_exit(127);
	}
	scrub_under_way(dev, base, pid);
	assert_int_equal(kill(pid, SIGINT), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	expect_exit(WEXITSTATUS(st), 130);
	expect_jq("[.interrupted, .complete, .status, .exit_code, .pi_failures] | @tsv",
		  "true\tfalse\tinterrupted\t130\t0");
	s = jq(".bytes_scrubbed");
	done = strtoull(s, NULL, 0);
	free(s);
	print_message("# interrupted after %llu bytes\n", done);
	/*
	 * At least what the disk read for it (the requests in flight at the
	 * signal are collected and counted; 1 MiB of the 2 left for reads
	 * not its own); far from all.
	 */
	assert_true(done >= 1 * MiB && done <= 32 * MiB);
	expect_in(ERR, ", interrupted\n");
	/* The text report says so too. */
	base = sectors_read(dev);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int o = open(OUT, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(ERR, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(o, 1);
		dup2(e, 2);
		execl(dioctl, "dioctl", "scrub", dev, "--rate", "4", (char *)NULL);
		_exit(127);
	}
	scrub_under_way(dev, base, pid);
	assert_int_equal(kill(pid, SIGINT), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(WEXITSTATUS(st), 130);
	expect_in(OUT, "INTERRUPTED, the report so far");
	expect_in(OUT, "no failures\n");
}

/* ---- read --output, write --input ---- */

static void test_streams(void **state)
{
	const unsigned long long len = 3 * MiB + 512;
	char dev[64];

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1", dev, sizeof(dev)), 0);
	assert_int_equal(sh("head -c %llu /dev/urandom >/tmp/dioctl.in", len), 0);
	/* From a file, several requests in flight and a short last one. */
	expect_exit(run("write %s -s 1M -i /tmp/dioctl.in -p -b 64K -d 4 -j", dev), 0);
	expect_jqf("[.offset, .length, .requests, .request_size, .depth, .first_interval, "
		   ".last_interval, .status] | @tsv", "1048576\t%llu\t49\t65536\t4\t2048\t%llu\tok",
		   len, 2048 + len / 512 - 1);
	expect_exit(run("read %s -s 1M -l %llu -v --output /tmp/dioctl.back -j", dev, len), 0);
	expect_jqf("[.length, .verified, .status] | @tsv", "%llu\ttrue\tok", len);
	assert_int_equal(sh("cmp /tmp/dioctl.in /tmp/dioctl.back"), 0);
	/* From stdin until it ends, to stdout. */
	expect_exit(sh("cat /tmp/dioctl.in | %s write %s -s 8M -i - --pi >" OUT " 2>" ERR,
		       dioctl, dev), 0);
	expect_in(OUT, "wrote 3146240 bytes at offset 8388608 to ");
	expect_exit(sh("%s read %s -s 8M -l %llu -v -O - 2>" ERR " | cmp - /tmp/dioctl.in >" OUT,
		       dioctl, dev, len), 0);
	expect_in(ERR, "read 3146240 bytes at offset 8388608 from ");
	/* The whole device to a pipe, by default from 0 to the end. */
	expect_exit(sh("%s read %s -O - 2>" ERR " | wc -c >" OUT, dioctl, dev), 0);
	expect_in(OUT, "16777216\n");
	/* Input shorter than --length: an I/O error; not whole blocks: usage. */
	expect_exit(run("write %s -l 4M -i /tmp/dioctl.in", dev), 3);
	expect_in(ERR, "ended after");
	/* An input that cannot be opened, --json: the error document. */
	expect_exit(run("write %s -l 4K -i /tmp/dioctl.no-such-file -j", dev), 3);
	expect_error_doc(3, "ENOENT", "write");
	expect_jq(".device", dev);
	expect_exit(sh("head -c 1000 /dev/zero | %s write %s -i - >" OUT " 2>" ERR,
		       dioctl, dev), 1);
	/* Old style: --batch splits the length into requests in flight together. */
	expect_exit(run("write %s -s 0 -l 64K --random 42 --pi --app-tag 0xd1 --batch 4 --fua", dev), 0);
	expect_in(OUT, "in 4 requests; PI generated for intervals 0..127, app tag 0x00d1\n");
	expect_exit(run("read %s -s 0 -l 64K --verify --app-tag 0xd1 -j", dev), 0);
	expect_jq("[.command, .verified, .app_tag, .app_tag_hex, .status] | @tsv",
		  "read\ttrue\t209\t0xd1\tok");
	expect_exit(run("read %s -s 0 -l 64K --verify --app-tag 0xd2", dev), 4);
	expect_in(OUT, "verify FAILED: block 0 of this I/O (interval 0 of the disk): app tag "
		  "expected 0xd2, actual 0xd1\n");
	expect_in(ERR, "128 blocks failed verification");
}

/* ---- tag get / tag set ---- */

static void test_tags(void **state)
{
	char dev[64], want[4096] = "", line[128], *before, *after;
	int i;

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1", dev, sizeof(dev)), 0);
	expect_exit(run("write %s -l 1M --random 9 --pi --app-tag 0x1111", dev), 0);
	expect_exit(run("tag get %s -L 99 -n 12 -j", dev), 0);
	expect_jq("[.command, .lba, .count, .interval, .interval_size, (.tags | length), .status, "
		  ".exit_code, .error, .message] | @tsv",
		  "tag get\t99\t12\t512\t512\t12\tok\t0\t\t");
	expect_jq("[.tags[].interval] | map(tostring) | join(\",\")",
		  "99,100,101,102,103,104,105,106,107,108,109,110");
	before = jq("[.tags[].guard] | join(\",\")");
	expect_jq("[.tags[].ref] | join(\",\")",
		  "0x63,0x64,0x65,0x66,0x67,0x68,0x69,0x6a,0x6b,0x6c,0x6d,0x6e");

	expect_exit(run("tag set %s --lba 100 --count 10 --app-tag 0xbeef", dev), 0);
	expect_in(OUT, "set app tag 0xbeef on 10 blocks of");
	/* Set again, --json: the tuples as written; app_tag_hex as tag values are. */
	expect_exit(run("tag set %s --lba 100 --count 2 --app-tag 0xbeef -j", dev), 0);
	expect_jq("[.command, .app_tag, .app_tag_hex, (. as $d | .tags "
		  "| map(.app == $d.app_tag_hex) | all), .status] | @tsv" , "tag set\t48879\t0xbeef\ttrue\tok");
	expect_exit(run("tag get %s -L 99 -n 12 --json", dev), 0);
	for (i = 0; i < 12; i++) {
		snprintf(line, sizeof(line), "%s%s", i ? "," : "",
			 i == 0 || i == 11 ? "0x1111" : "0xbeef");
		strcat(want, line);
	}
	expect_jq("[.tags[].app] | join(\",\")", want);
	after = jq("[.tags[].guard] | join(\",\")");
	assert_string_equal(before, after);	/* data and guards unchanged */
	free(before);
	free(after);
	expect_jq("[.tags[].lba] | map(tostring) | join(\",\")",
		  "99,100,101,102,103,104,105,106,107,108,109,110");
	/* Text form. */
	expect_exit(run("tag get %s -L 100 -n 1", dev), 0);
	expect_in(OUT, "lba 100  interval 100  guard 0x");
	expect_in(OUT, "  app 0xbeef  ref 0x00000064\n");

	/* Verification against the new tags: read, and a scrub with an app tag. */
	expect_exit(run("read %s -s 51200 -l 5120 -v -a 0xbeef", dev), 0);
	expect_exit(run("scrub %s -r 50688:56832 -a 0xbeef -j", dev), 4);
	expect_jq(".failures[] | \"\\(.offset) \\(.interval) \\(.tag) \\(.expected) \\(.actual) "
		  "\\(.found_by)\"",
		  "50688 99 app 0xbeef 0x1111 dioctl\n56320 110 app 0xbeef 0x1111 dioctl");
	/* The app tag asked, in the form of the values it is compared with. */
	expect_jq("[.app_tag, .app_tag_hex, .app_mask_hex, (. as $d | .failures "
		  "| map(.expected == $d.app_tag_hex) | all)] | @tsv", "48879\t0xbeef\t0xffff\ttrue");
	/* Under a mask that ignores the differing bits. */
	expect_exit(run("scrub %s -r 51200:56320 -a 0xb0e1 -m 0xf0f0 -j", dev), 0);
	expect_jq("[.pi_failures, .app_tag, .app_mask, .app_tag_hex, .app_mask_hex] | @tsv",
		  "0\t45281\t61680\t0xb0e1\t0xf0f0");
	/* Past the end, and set without a tag: usage errors. */
	expect_exit(run("tag get %s -L 32760 -n 9", dev), 1);
	expect_exit(run("tag set %s -L 0 -n 1", dev), 1);
}

/* ---- a user not in the dio_batch group ---- */

/*
 * /dev/dio_batch as the dio-batch-dkms package's udev rule sets it: group
 * dio_batch, mode 0660.  The guest's /etc/group, the host's (read-only),
 * may have no such group: run_as() binds a copy that names gid CTL_GID
 * dio_batch over it, in a mount namespace of its own.
 */
#define CTL_PATH	"/dev/dio_batch"
#define CTL_GID		3000
#define NOT_MEMBER	"--clear-groups"
#define MEMBER		"--groups=3000"

static unsigned int ctl_mode_saved;
static gid_t ctl_gid_saved;
static bool ctl_saved;

static int ctl_teardown(void **state)
{
	int ret = 0;

	if (ctl_saved && (chown(CTL_PATH, 0, ctl_gid_saved) || chmod(CTL_PATH, ctl_mode_saved))) {
		print_message("# restoring %s: %s\n", CTL_PATH, strerror(errno));
		ret = -1;
	}
	ctl_saved = false;
	return teardown(state) || ret;
}

/* dioctl ARGS as uid 1000, gid 1000 and the groups @groups (setpriv's); its exit status. */
static int __attribute__((format(printf, 2, 3))) run_as(const char *groups, const char *fmt, ...)
{
	char *args;
	va_list ap;
	int ret;

	va_start(ap, fmt);
	assert_true(vasprintf(&args, fmt, ap) >= 0);
	va_end(ap);
	ret = sh("unshare -m sh -c 'mount --bind /tmp/dioctl.group /etc/group && exec setpriv "
		 "--reuid=1000 --regid=1000 %s %s %s' >" OUT " 2>" ERR, groups, dioctl, args);
	print_message("# as uid 1000 (%s): dioctl %s: exit %d\n", groups, args, ret);
	dioctl_ran(ret, args);
	free(args);
	return ret;
}

static void test_group_access(void **state)
{
	char dev[64], want[512];
	struct stat st;

	assert_int_equal(stat(CTL_PATH, &st), 0);
	ctl_mode_saved = st.st_mode & 07777;
	ctl_gid_saved = st.st_gid;
	ctl_saved = true;
	assert_int_equal(sh("cp /etc/group /tmp/dioctl.group && "
			    "echo dio_batch:x:%d: >>/tmp/dioctl.group", CTL_GID), 0);
	assert_int_equal(chown(CTL_PATH, 0, CTL_GID), 0);
	assert_int_equal(chmod(CTL_PATH, 0660), 0);

	/* Not a member: refused, and told why and what to do. */
	expect_exit(run_as(NOT_MEMBER, "features"), 2);
	expect_in(ERR, "dioctl: cannot open /dev/dio_batch: Permission denied (EACCES); "
		  "/dev/dio_batch is group dio_batch, mode 0660 (crw-rw----): this user "
		  "(uid 1000) is not in group dio_batch; add it to that group (usermod -aG "
		  "dio_batch USER, then log in again) or run dioctl as root\n");
	expect_not_in(ERR, "module loaded");
	expect_exit(run_as(NOT_MEMBER, "features -j"), 2);
	expect_error_doc(2, "EACCES", "features");
	expect_in(OUT, "not in group dio_batch");

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=4 dif=1 dix=1", dev, sizeof(dev)), 0);
	assert_int_equal(chmod(dev, 0644), 0);
	expect_exit(run_as(NOT_MEMBER, "query %s -j", dev), 2);
	expect_error_doc(2, "EACCES", "query");
	expect_exit(run_as(NOT_MEMBER, "scrub %s", dev), 2);
	expect_in(ERR, "not in group dio_batch");

	/* A member: in. */
	expect_exit(run_as(MEMBER, "features -j"), 0);
	expect_jq(".command", "features");
	expect_exit(run_as(MEMBER, "query %s -j", dev), 0);
	expect_jq("[.command, .pi_profile] | @tsv", "query\tT10-DIF-TYPE1-CRC");

	/* The disk refuses the member: its own group and mode. */
	assert_int_equal(chmod(dev, 0600), 0);
	assert_int_equal(stat(dev, &st), 0);
	expect_exit(run_as(MEMBER, "query %s", dev), 2);
	snprintf(want, sizeof(want), "dioctl: open %s: Permission denied (EACCES); %s is group ",
		 dev, dev);
	expect_in(ERR, want);
	expect_in(ERR, ", mode 0600 (brw-------), which lets no group member open it\n");

	/* /dev/dio_batch for root alone: no group gets in. */
	assert_int_equal(chmod(CTL_PATH, 0600), 0);
	expect_exit(run_as(MEMBER, "features -j"), 2);
	expect_error_doc(2, "EACCES", "features");
	expect_in(ERR, "/dev/dio_batch is group dio_batch, mode 0600 (crw-------), which lets "
		  "no group member open it (the dio-batch-dkms package's udev rule makes it "
		  "group dio_batch, mode 0660); run dioctl as root or give the device that "
		  "group and mode\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_and_help),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test_teardown(test_unreachable, teardown),
		cmocka_unit_test_teardown(test_not_supported, teardown),
		cmocka_unit_test_teardown(test_json_features_query, teardown),
		cmocka_unit_test_teardown(test_scrub_scsi_corruption, teardown),
		cmocka_unit_test_teardown(test_scrub_nvme_corruption, teardown),
		cmocka_unit_test_teardown(test_scrub_io_errors, teardown),
		cmocka_unit_test_teardown(test_memory_cap, teardown),
		cmocka_unit_test_teardown(test_progress, teardown),
		cmocka_unit_test_teardown(test_sigint, teardown),
		cmocka_unit_test_teardown(test_streams, teardown),
		cmocka_unit_test_teardown(test_tags, teardown),
		cmocka_unit_test_teardown(test_group_access, ctl_teardown),
	};

	if (dioctl_run_init("dioctl-json", DIOCTL_RUN_PY_PARSE) || tl_dio_load())
		return 1;
	return cmocka_run_group_tests_name("dioctl", tests, NULL, NULL);
}
