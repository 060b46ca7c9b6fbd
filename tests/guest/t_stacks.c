// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The storage stacks databases run on, not only the simulators: PI through
 * the kernel's own SCSI target (LIO, exported by its loopback fabric
 * tcm_loop), device-mapper and the layers that do not pass integrity on.
 *
 * - LIO fileio backstores with PI types 1 and 3, their backing files on
 *   the guest's 9p share: 9p takes page references on every page of the
 *   target's I/O, the PI buffers the module attaches among them, which
 *   turned a PI read into "BUG: Bad page state" while those buffers were
 *   high-order pages without __GFP_COMP.  Writes and reads with user PI
 *   and kernel PI, raw reads, and blocks corrupted behind the target (the
 *   backing file's data, its .protection file's ref tag) reported exactly
 *   by dioctl read and dioctl scrub, against LIO's own DIF code;
 * - an iblock backstore over a scsi_debug DIF disk: LIO takes the disk's
 *   PI format and passes the initiator's PI to it;
 * - dm-linear mapping part of a disk: reports in the top device's numbering,
 *   the disk below holding the remapped ref tags;
 * - dm-multipath over two scsi_debug hosts with one WWN: exact reports, a
 *   PI error fails no path, a path that fails in the middle of a batch of
 *   PI writes leaves every block written and verified;
 * - dm-crypt and loop, which carry no integrity: no PI in the query, PI
 *   requests refused.
 *
 * Everything is driven as a user would: dioctl (JSON checked with jq),
 * configfs, dmsetup, losetup.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "dioctl_run.h"
#include "testlib.h"

#define MiB	(1024 * 1024ULL)
#define OUT	DIOCTL_OUT
#define ERR	DIOCTL_ERR
#define TGT	"/sys/kernel/config/target"
/* The loopback fabric's target and initiator port names. */
#define LOOP_WWN	"naa.5001405000000a01"
#define LOOP_INIT	"naa.5001405000000b01"

/* /dev/dio_batch's mode before a test opened it to uid 1000, or -1. */
static int ctl_mode = -1;

/* Give /dev/dio_batch back the mode it had (the tests after this one expect it). */
static void ctl_mode_restore(void)
{
	unsigned int old;

	if (ctl_mode >= 0 && tl_dio_ctl_chmod(ctl_mode, &old) == 0)
		ctl_mode = -1;
}

/* A shell command that must succeed. */
#define must(...) assert_int_equal(tl_sh(__VA_ARGS__), 0)

/*
 * The disk whose SCSI vendor and model are these, as "/dev/sdX", waited
 * for up to 10 s (x tl_slow_factor(): a hang guard, the LUN appears as
 * its target is set up); the test fails without one.
 */
static void find_disk(const char *vendor, const char *model, char *dev, size_t len)
{
	char path[64], *v, *m;
	glob_t g;
	size_t i;
	int tries;

	for (tries = 0; tries < 100 * tl_slow_factor(); tries++) {
		if (glob("/sys/block/sd*", 0, NULL, &g) == 0) {
			for (i = 0; i < g.gl_pathc; i++) {
				v = tl_sysfs_read("%s/device/vendor", g.gl_pathv[i]);
				m = tl_sysfs_read("%s/device/model", g.gl_pathv[i]);
				if (v && m && !strncmp(v, vendor, strlen(vendor)) &&
				    !strncmp(m, model, strlen(model))) {
					snprintf(path, sizeof(path), "/dev/%s",
						 strrchr(g.gl_pathv[i], '/') + 1);
					free(v);
					free(m);
					globfree(&g);
					if (access(path, F_OK))
						break;
					snprintf(dev, len, "%s", path);
					return;
				}
				free(v);
				free(m);
			}
			globfree(&g);
		}
		usleep(100000);
	}
	print_message("# no disk of vendor %s, model %s appeared\n", vendor, model);
	fail();
}

/*
 * The PI round trip on @dev: @len from 0 written with PI dioctl computes
 * and read back verified, then 1 MiB after it written with the kernel's
 * PI in 4 KiB requests, 16 in flight, and read back verified.
 */
static void pi_roundtrip(const char *dev, const char *len, int seed)
{
	dioctl_expect(0, "write %s -l %s --random %d --pi", dev, len, seed);
	dioctl_expect(0, "read %s -l %s -v -j", dev, len);
	expect_jq_true(".verified == true and .status == \"ok\"");
	dioctl_expect(0, "write %s -s %s -l 1M -b 4K -d 16 --random %d", dev, len, seed + 1);
	dioctl_expect(0, "read %s -s %s -l 1M -b 4K -d 16 -v", dev, len);
}

/*
 * Change byte 100 of block @lba of scsi_debug disk @sd behind its PI (the
 * kernel's generation off); the block's guard as stored and as its data
 * now computes.
 */
static void corrupt_sd(const char *sd, uint64_t lba, uint16_t *stored, uint16_t *now)
{
	unsigned char *blk = tl_xalloc(512, 0);
	int fd;

	must("echo 0 > /sys/block/%s/integrity/write_generate", tl_basename(sd));
	fd = open(sd, O_RDWR | O_DIRECT);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, blk, 512, lba * 512), 512);
	*stored = dio_pi_crc16_t10dif(0, blk, 512);
	blk[100] ^= 0xff;
	*now = dio_pi_crc16_t10dif(0, blk, 512);
	assert_int_equal(pwrite(fd, blk, 512, lba * 512), 512);
	close(fd);
	must("echo 1 > /sys/block/%s/integrity/write_generate", tl_basename(sd));
	free(blk);
}

/* ---- LIO ---- */

static void lio_modules(void)
{
	assert_int_equal(tl_kmod_probe("sd_mod", NULL), 0);
	assert_int_equal(tl_kmod_probe("target_core_mod", NULL), 0);
	assert_int_equal(tl_kmod_probe("target_core_file", NULL), 0);
	assert_int_equal(tl_kmod_probe("target_core_iblock", NULL), 0);
	assert_int_equal(tl_kmod_probe("tcm_loop", NULL), 0);
	/* configfs may have come with target_core_mod, after the guest's boot. */
	must("mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config");
	assert_int_equal(access(TGT, F_OK), 0);
}

/*
 * Export backstore HBA/NAME through tcm_loop; its disk in @dev.  The nexus
 * (the initiator's end) comes first: tcm_loop scans a LUN when it is
 * linked, and a scan without a nexus finds nothing.
 */
static void lio_export(const char *hba, const char *name, const char *model,
		       char *dev, size_t len)
{
	must("mkdir -p " TGT "/loopback/" LOOP_WWN "/tpgt_1");
	must("echo " LOOP_INIT " > " TGT "/loopback/" LOOP_WWN "/tpgt_1/nexus");
	must("mkdir -p " TGT "/loopback/" LOOP_WWN "/tpgt_1/lun/lun_0");
	must("ln -s " TGT "/core/%s/%s " TGT "/loopback/" LOOP_WWN "/tpgt_1/lun/lun_0/%s",
	     hba, name, name);
	find_disk("LIO-ORG", model, dev, len);
	print_message("# LIO %s/%s is %s\n", hba, name, dev);
}

/* Take every LIO object down again (whatever of it exists). */
static void lio_teardown(void)
{
	tl_sh("rm -f " TGT "/loopback/*/tpgt_1/lun/lun_0/* 2>/dev/null; "
	      "rmdir " TGT "/loopback/*/tpgt_1/lun/lun_0 " TGT "/loopback/*/tpgt_1 "
	      TGT "/loopback/* 2>/dev/null; "
	      "for d in " TGT "/core/*_1/*/; do rmdir \"$d\"; done 2>/dev/null; "
	      "rmdir " TGT "/core/*_1 2>/dev/null; true");
}

/*
 * A fileio backstore of @mb MiB with PI type @type, verified by LIO, its
 * file @file on the 9p share; exported, its disk in @dev.
 */
static void lio_fileio(const char *file, int mb, int type, char *dev, size_t len)
{
	const char *bs = TGT "/core/fileio_1/lio_fd";

	lio_modules();
	tl_sh("rm -f %s %s.protection", file, file);
	must("mkdir -p %s", bs);
	must("echo fd_dev_name=%s,fd_dev_size=%llu > %s/control", file, mb * MiB, bs);
	must("echo 1 > %s/enable", bs);
	must("echo %d > %s/attrib/pi_prot_type", type, bs);
	must("echo 1 > %s/attrib/pi_prot_format", bs);
	must("echo 1 > %s/attrib/pi_prot_verify", bs);
	must("test -f %s.protection", file);
	lio_export("fileio_1", "lio_fd", "FILEIO", dev, len);
}

static int teardown_lio(void **state)
{
	ctl_mode_restore();
	lio_teardown();
	tl_scsi_debug_unload();
	return 0;
}

/* The block at byte @off of @file, read, changed by @fn, written back. */
static void edit_file(const char *file, uint64_t off, void *buf, size_t len,
		      void (*fn)(void *buf))
{
	int fd = open(file, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, len, off), (ssize_t)len);
	fn(buf);
	assert_int_equal(pwrite(fd, buf, len, off), (ssize_t)len);
	assert_int_equal(fsync(fd), 0);
	close(fd);
}

static void flip_byte(void *buf)
{
	((unsigned char *)buf)[100] ^= 0xff;
}

static void ref_0x777(void *buf)
{
	unsigned char *t = buf;

	t[4] = 0;
	t[5] = 0;
	t[6] = 0x07;
	t[7] = 0x77;
}

/*
 * dioctl's JSON report (read -j or scrub) of lio_fileio_case()'s blocks,
 * @n failures: block 5's guard, @actual where @expected was due, and the
 * second, with type 1, block 9's ref tag, 0x777 for 0x9.  LIO's fileio
 * backstore verifies the PI itself (pi_prot_verify) and refuses the read:
 * the device found it, on every kernel; the module's raw re-read (which
 * LIO and the initiator do not check) finds the tag and values.
 */
static void expect_lio_report(int n, uint16_t expected, uint16_t actual)
{
	expect_jq_true("(.failures | length) == %d and (.failures[0] | .offset == 2560 and "
		       ".interval == 5 and .tag == \"guard\" and .expected == \"%#x\" and "
		       ".actual == \"%#x\" and .found_by == \"device\")", n, expected, actual);
	if (n == 2)
		expect_jq_true(".failures[1] | .offset == 4608 and .interval == 9 and "
			       ".tag == \"ref\" and .expected == \"0x9\" and "
			       ".actual == \"0x777\" and .found_by == \"device\"");
}

/*
 * PI through LIO's fileio backstore of type @type: the suite's writes,
 * reads and verification, then a block corrupted behind the target.
 */
static void lio_fileio_case(int type)
{
	const char *file = "/tmp/results/lio_fd.img";
	unsigned char blk[512], tuple[8];
	uint16_t guard_stored, guard_now;
	char dev[64];

	/*
	 * 8 MiB: the last range used below ends at 6 MiB.  Every byte goes
	 * through the 9p share, under KASAN on the debug kernel (a case with
	 * twice this I/O cost that kernel 115 s): the scrubs read only what
	 * was written and one formatted gap (4 MiB), then the corrupted
	 * first 64 KiB: a refused read's locate re-reads through 9p too.
	 */
	lio_fileio(file, 8, type, dev, sizeof(dev));
	dioctl_expect(0, "query %s -j", dev);
	expect_jq_true(".pi_tuple_size == 8 and .pi_interval == 512 and .pi_type == %d and "
		       ".pi_profile == \"T10-DIF-TYPE%d-CRC\"", type, type);

	/*
	 * 1 MiB requests: 16 KiB of PI each, a buffer of several pages.  The
	 * read is the one that ended in "Bad page state" before.
	 */
	dioctl_expect(0, "write %s -l 2M --random 11 --pi -j", dev);
	expect_jq_true(".status == \"ok\" and .requests == 2");
	dioctl_expect(0, "read %s -l 2M -v -j", dev);
	expect_jq_true(".verified == true and .status == \"ok\"");
	/* The device's PI back to the caller, and the module's own check. */
	dioctl_expect(0, "read %s -l 2M --pi -j", dev);
	dioctl_expect(0, "read %s -l 2M -j", dev);
	/* Kernel PI: generated by the kernel on write, verified on read. */
	dioctl_expect(0, "write %s -s 2M -l 1M --random 12 -j", dev);
	dioctl_expect(0, "read %s -s 2M -l 1M -v -j", dev);
	/* Small requests, PI inside one page. */
	dioctl_expect(0, "write %s -s 3M -l 256K -b 4K -d 32 --random 13 --pi", dev);
	dioctl_expect(0, "read %s -s 3M -l 256K -b 4K -d 32 -v", dev);
	dioctl_expect(0, "scrub %s -r 0:4M -j", dev);
	expect_jq_true(".pi_failures == 0 and .complete == true and .bytes_scrubbed == %llu",
		       4 * MiB);
	/*
	 * The corruption was reachable by any user with the door and the
	 * disk: the same PI write and verified read as uid 1000.
	 */
	{
		unsigned int old;

		assert_int_equal(tl_dio_ctl_chmod(0666, &old), 0);
		ctl_mode = old;
	}
	must("chmod 0666 %s", dev);
	must("setpriv --reuid=1000 --regid=1000 --clear-groups %s write %s -s 5M -l 1M "
	     "--random 14 --pi >" OUT " 2>" ERR, dioctl, dev);
	must("setpriv --reuid=1000 --regid=1000 --clear-groups %s read %s -s 5M -l 1M "
	     "-v -j >" OUT " 2>" ERR, dioctl, dev);
	expect_jq_true(".verified == true and .status == \"ok\"");
	ctl_mode_restore();
	must("chmod 0600 %s", dev);

	/* Block 5's data changed behind the target: its guard no longer fits. */
	edit_file(file, 5 * 512, blk, sizeof(blk), flip_byte);
	guard_now = dio_pi_crc16_t10dif(0, blk, 512);
	{
		int fd = open("/tmp/results/lio_fd.img.protection", O_RDONLY);

		assert_true(fd >= 0);
		assert_int_equal(pread(fd, tuple, 8, 5 * 8), 8);
		close(fd);
	}
	guard_stored = tuple[0] << 8 | tuple[1];
	assert_int_not_equal(guard_now, guard_stored);
	if (type == 1)	/* block 9's ref tag: 0x777 */
		edit_file("/tmp/results/lio_fd.img.protection", 9 * 8, tuple, 8, ref_0x777);

	dioctl_expect(4, "read %s -l 64K --pi", dev);
	assert_int_equal(tl_sh("grep -q 'PI error: block 5 of this I/O (interval 5' " OUT), 0);
	/* A read reports its request's first failure, a scrub every one. */
	dioctl_expect(4, "read %s -l 64K -v -j", dev);
	expect_lio_report(1, guard_now, guard_stored);
	dioctl_expect(4, "scrub %s -r 0:64K -j", dev);
	expect_jq_true(".pi_failures == %d", type == 1 ? 2 : 1);
	expect_lio_report(type == 1 ? 2 : 1, guard_now, guard_stored);
	/*
	 * Raw: LIO and the initiator skip their checks, the data comes back:
	 * the bytes the backing file holds at block 5.
	 */
	dioctl_expect(0, "read %s -s 2560 -l 512 --raw -O /tmp/stacks.raw", dev);
	must("cmp -n 512 /tmp/stacks.raw %s 0 2560", file);
	{
		unsigned char raw[512];
		int fd = open("/tmp/stacks.raw", O_RDONLY);

		assert_true(fd >= 0);
		assert_int_equal(read(fd, raw, 512), 512);
		close(fd);
		assert_memory_equal(raw, blk, 512);
	}
	/* Repaired by rewriting it: clean again. */
	dioctl_expect(0, "write %s -l 64K --random 11 --pi", dev);
	dioctl_expect(0, "scrub %s -r 0:64K -j", dev);
	expect_jq_true(".pi_failures == 0");
}

static void test_lio_fileio_type1(void **state)
{
	lio_fileio_case(1);
}

static void test_lio_fileio_type3(void **state)
{
	lio_fileio_case(3);
}

/*
 * dioctl's JSON report of LBA 5 of the disk below an iblock backstore,
 * corrupted behind its PI: the disk refuses LIO's read with a guard check
 * (scsi_debug: "GUARD check failed"), and LIO's iblock completes a
 * command whose bio failed, whatever the bio's status, with LOGICAL UNIT
 * COMMUNICATION FAILURE (its "bio error ... err: 8" is the disk's
 * BLK_STS_PROTECTION).  The initiator sees an I/O error, not a PI
 * failure: no tag, values or finder reach it, on every kernel.  A read
 * (@scrub false) reports its request, 64 KiB from 0; scrub bisects the
 * I/O error down to the block.
 */
static void expect_iblock_report(bool scrub)
{
	expect_jq_true("(.failures | length) == 1 and (.failures[0] | .offset == %d and "
		       ".length == %d and .interval == null and .tag == null and "
		       ".expected == null and .actual == null and .found_by == null and "
		       ".error == \"EIO\" and .note == \"I/O error\")",
		       scrub ? 2560 : 0, scrub ? 512 : 65536);
}

/* An iblock backstore over a scsi_debug DIF disk takes the disk's format. */
static void test_lio_iblock(void **state)
{
	const char *bs = TGT "/core/iblock_1/lio_ib";
	char sd[64], dev[64];
	uint16_t stored, now;

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=32 dif=1 dix=1", sd, sizeof(sd)), 0);
	lio_modules();
	must("mkdir -p %s", bs);
	must("echo udev_path=%s > %s/control", sd, bs);
	must("echo 1 > %s/enable", bs);
	must("grep -qx 1 %s/attrib/pi_prot_type", bs);
	lio_export("iblock_1", "lio_ib", "IBLOCK", dev, sizeof(dev));
	dioctl_expect(0, "query %s -j", dev);
	expect_jq_true(".pi_tuple_size == 8 and .pi_type == 1");
	pi_roundtrip(dev, "4M", 21);
	dioctl_expect(0, "scrub %s -r 0:5M -j", dev);
	expect_jq_true(".pi_failures == 0");
	/*
	 * Block 5 changed on the disk below, behind its PI (LIO maps the
	 * LUN's blocks to the disk's one to one): an I/O error through the
	 * target (expect_iblock_report()), which scrub narrows down to the
	 * block.
	 */
	corrupt_sd(sd, 5, &stored, &now);
	assert_int_not_equal(stored, now);
	dioctl_expect(3, "read %s -l 64K -v -j", dev);
	expect_iblock_report(false);
	dioctl_expect(3, "scrub %s -r 0:1M -j", dev);
	expect_jq_true(".pi_failures == 0 and .io_errors == 1");
	expect_iblock_report(true);
	/* Repaired by rewriting it: clean again. */
	dioctl_expect(0, "write %s -l 64K --random 21 --pi", dev);
	dioctl_expect(0, "scrub %s -r 0:1M -j", dev);
	expect_jq_true(".pi_failures == 0");
	/* LIO holds the disk below exclusively, as md and dm do. */
	dioctl_expect(2, "query %s", sd);
	must("grep -q 'Device or resource busy (EBUSY)' " ERR);
	/* What LIO wrote is on it, PI included. */
	lio_teardown();
	dioctl_expect(0, "scrub %s -r 0:5M -j", sd);
	expect_jq_true(".pi_failures == 0");
	dioctl_expect(0, "read %s -l 4M -v", sd);
}

/* ---- device-mapper ---- */

static void dm_modules(void)
{
	assert_int_equal(tl_kmod_probe("dm_mod", NULL), 0);
}

static int teardown_dm(void **state)
{
	tl_sh("dmsetup remove_all >/dev/null 2>&1; losetup -D 2>/dev/null; true");
	tl_scsi_debug_unload();
	return 0;
}

/* "MAJ:MIN" of a block device. */
static void devno(const char *dev, char *out, size_t len)
{
	struct stat st;

	assert_int_equal(stat(dev, &st), 0);
	snprintf(out, len, "%u:%u", major(st.st_rdev), minor(st.st_rdev));
}

/*
 * dioctl's JSON report (scrub, or read -j) of one failing block @interval
 * through device-mapper over a SCSI disk whose guard @actual should be
 * @expected.  Before 6.14 dm passes the module's raw re-read on to the
 * disk, which returns what it stores: the tag and both values.  From 6.14
 * the payloads dm clones for the disk lose BIP_DISK_NOCHECK, the disk
 * checks the re-read and refuses it again: the block, tag and values not
 * known, and said so.
 */
static void expect_dm_report(uint64_t interval, uint16_t expected, uint16_t actual)
{
	if (!tl_kernel_at_least(6, 14)) {
		expect_jq_true("(.failures | length) == 1 and (.failures[0] | .interval == %llu "
			       "and .tag == \"guard\" and .expected == \"%#x\" and "
			       ".actual == \"%#x\" and .found_by == \"device\")",
			       (unsigned long long)interval, expected, actual);
		return;
	}
	expect_jq_true("(.failures | length) == 1 and (.failures[0] | .interval == %llu and "
		       ".tag == null and .expected == null and .found_by == \"device\" and "
		       "(.note | test(\"tag and values unknown\")))", (unsigned long long)interval);
}

/*
 * dm-linear over the middle of a disk, as LVM builds it: PI passes through,
 * reports name the top device's blocks, the disk holds remapped ref tags.
 */
static void test_dm_linear(void **state)
{
	uint16_t stored, now;
	char sd[64], dn[32];

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=64 dif=1 dix=1", sd, sizeof(sd)), 0);
	dm_modules();
	devno(sd, dn, sizeof(dn));
	/* 16 MiB of the disk from sector 8192 (4 MiB) on. */
	must("dmsetup create dio_lin --table '0 32768 linear %s 8192'", dn);
	dioctl_expect(0, "query /dev/mapper/dio_lin -j");
	expect_jq_true(".pi_tuple_size == 8 and .pi_type == 1 and .capacity == %llu", 16 * MiB);
	/* A raw read needs a driver that skips its checks: dm is none. */
	expect_jq_true("(.pi_caps | index(\"nocheck\")) == null");
	dioctl_expect(5, "read /dev/mapper/dio_lin -l 4K --raw");
	pi_roundtrip("/dev/mapper/dio_lin", "2M", 31);

	/* Block 5 of the mapping is sector 8197 of the disk. */
	corrupt_sd(sd, 8192 + 5, &stored, &now);
	dioctl_expect(4, "read /dev/mapper/dio_lin -l 64K --pi");
	must("grep -q 'PI error: block 5 of this I/O (interval 5 ' " OUT);
	dioctl_expect(4, "scrub /dev/mapper/dio_lin -r 0:3M -j");
	expect_dm_report(5, now, stored);
	dioctl_expect(4, "read /dev/mapper/dio_lin -s 2048 -l 1024 -j");
	expect_dm_report(5, now, stored);
	dioctl_expect(0, "write /dev/mapper/dio_lin -l 64K --random 31 --pi");

	/* On the disk, ref tags of the disk's own numbering. */
	must("dmsetup remove dio_lin");
	dioctl_expect(0, "tag get %s -L 8192 -n 3 -j", sd);
	expect_jq_true("[.tags[].ref] == [\"0x00002000\", \"0x00002001\", \"0x00002002\"] or "
		       "[.tags[].ref] == [\"0x2000\", \"0x2001\", \"0x2002\"]");
	dioctl_expect(0, "scrub %s -r 4M:7M -j", sd);
	expect_jq_true(".pi_failures == 0");
}

/*
 * dm-linear over part of an NVMe PI namespace.  NVMe from 6.14 reads raw
 * when no BIP_CHECK_* flag asks for a check, and dm's clones keep those
 * flags: the module's raw re-read works through dm, reports are exact.
 * Before, the NVMe driver checks every read, only its passthrough reads
 * raw, and dm refuses ioctls for a table that maps part of a disk: the
 * block is named, its tag and values not known.  On every kernel the
 * namespace refused the read first: found by the device.
 */
static void test_dm_linear_nvme(void **state)
{
	unsigned char blk[512];
	uint16_t stored, now;
	char ns[64], dn[32];
	FILE *f;

	dm_modules();
	assert_int_equal(tl_nvme_dev(1, ns, sizeof(ns)), 0);
	devno(ns, dn, sizeof(dn));
	must("dmsetup create dio_lin --table '0 32768 linear %s 8192'", dn);
	dioctl_expect(0, "query /dev/mapper/dio_lin -j");
	expect_jq_true(".pi_tuple_size == 8 and .pi_type == 1 and "
		       "(.pi_caps | index(\"nocheck\")) == null");
	pi_roundtrip("/dev/mapper/dio_lin", "2M", 71);

	/* Block 5 of the mapping, LBA 8197 of the namespace (QEMU: data first). */
	f = fopen("/tmp/results/nvme1.img", "r+");
	assert_non_null(f);
	assert_int_equal(fseek(f, (8192 + 5) * 512L, SEEK_SET), 0);
	assert_int_equal(fread(blk, 1, 512, f), 512);
	stored = dio_pi_crc16_t10dif(0, blk, 512);
	blk[100] ^= 0xff;
	now = dio_pi_crc16_t10dif(0, blk, 512);
	assert_int_equal(fseek(f, (8192 + 5) * 512L, SEEK_SET), 0);
	assert_int_equal(fwrite(blk, 1, 512, f), 512);
	fclose(f);

	dioctl_expect(4, "scrub /dev/mapper/dio_lin -r 0:1M -j");
	if (tl_kernel_at_least(6, 14))
		expect_jq_true(".pi_failures == 1 and (.failures[0] | .interval == 5 and "
			       ".tag == \"guard\" and .expected == \"%#x\" and .actual == \"%#x\" and "
			       ".found_by == \"device\")", now, stored);
	else
		expect_jq_true(".pi_failures == 1 and (.failures[0] | .interval == 5 and "
			       ".tag == null and .found_by == \"device\" and "
			       "(.note | test(\"tag and values unknown\")))");
	dioctl_expect(0, "write /dev/mapper/dio_lin -l 64K --random 71 --pi");
	dioctl_expect(0, "scrub /dev/mapper/dio_lin -r 0:1M -j");
	expect_jq_true(".pi_failures == 0");
}

/* scsi_debug with two hosts, one LUN behind both: its two disks. */
static void two_paths(char a[64], char b[64])
{
	char names[8][32];

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=32 dif=1 dix=1 add_host=2 "
					    "vpd_use_hostno=0", a, 64), 0);
	assert_int_equal(tl_scsi_debug_wait_disks(2, names, 8), 2);
	snprintf(a, 64, "/dev/%s", names[0]);
	snprintf(b, 64, "/dev/%s", names[1]);
	must("test \"$(cat /sys/block/%s/device/wwid)\" = \"$(cat /sys/block/%s/device/wwid)\"",
	     names[0], names[1]);
	must("udevadm settle 2>/dev/null; test -b %s && test -b %s", a, b);
}

/* dm-multipath over @a and @b, round robin, named dio_mp. */
static void mpath_create(const char *a, const char *b)
{
	char da[32], db[32];

	assert_int_equal(tl_kmod_probe("dm_multipath", NULL), 0);
	/* Not asked for by the table's load where modprobe cannot see the modules. */
	assert_int_equal(tl_kmod_probe("dm_round_robin", NULL), 0);
	devno(a, da, sizeof(da));
	devno(b, db, sizeof(db));
	must("dmsetup create dio_mp --table '0 65536 multipath 0 0 1 1 round-robin 0 2 1 %s 1 %s 1'",
	     da, db);
}

/*
 * The paths of dio_mp that dmsetup status shows in state @state ("A"
 * active, "F" failed) and, in *@fails, the failures counted on all paths.
 * A path is "MAJ:MIN STATE FAIL_COUNT ...".
 */
static int mpath_paths(const char *state, int *fails)
{
	char line[512], *tok, *save = NULL, *prev = NULL;
	int n = 0, next_is_count = 0;
	FILE *p = popen("dmsetup status dio_mp", "r");

	assert_non_null(p);
	assert_non_null(fgets(line, sizeof(line), p));
	pclose(p);
	print_message("# dmsetup status dio_mp: %s", line);
	*fails = 0;
	for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		unsigned int ma, mi;
		char c;

		if (next_is_count) {
			*fails += atoi(tok);
			next_is_count = 0;
		} else if (prev && sscanf(prev, "%u:%u%c", &ma, &mi, &c) == 2) {
			n += !strcmp(tok, state);
			next_is_count = 1;
		}
		prev = tok;
	}
	return n;
}

static void test_dm_multipath_reports(void **state)
{
	uint16_t stored, now;
	char a[64], b[64];
	int fails;

	dm_modules();
	two_paths(a, b);
	mpath_create(a, b);
	dioctl_expect(0, "query /dev/mapper/dio_mp -j");
	expect_jq_true(".pi_tuple_size == 8 and .pi_type == 1");
	pi_roundtrip("/dev/mapper/dio_mp", "4M", 41);

	corrupt_sd(a, 7, &stored, &now);
	/* Every command names the block (before 6.14 its tag and values too). */
	dioctl_expect(4, "read /dev/mapper/dio_mp -l 64K -v");
	must("grep -q 'block 7 of this I/O (interval 7' " OUT);
	dioctl_expect(4, "read /dev/mapper/dio_mp -l 64K --pi -j");
	expect_dm_report(7, now, stored);
	dioctl_expect(4, "scrub /dev/mapper/dio_mp -r 0:4M -j");
	expect_dm_report(7, now, stored);
	expect_jq_true(".pi_failures == 1");
	/* A PI error is the data's, not the path's: both paths stay, unfailed. */
	assert_int_equal(mpath_paths("A", &fails), 2);
	assert_int_equal(fails, 0);
}

/* Requests of disk @dev ("/dev/sdb") at the device, reads and writes. */
static long disk_inflight(const char *dev)
{
	char *v = tl_sysfs_read("/sys/block/%s/inflight", tl_basename(dev));
	long r = 0, w = 0;

	assert_non_null(v);
	assert_int_equal(sscanf(v, "%ld %ld", &r, &w), 2);
	free(v);
	return r + w;
}

/*
 * A path fails in the middle of 256 PI writes: dm-multipath retries them on
 * the other, the batch completes, every block verifies, nothing is
 * reported that did not fail.
 */
static void test_dm_multipath_path_failure(void **state)
{
	char a[64], b[64], path[128];
	siginfo_t si;
	pid_t pid;
	int st, fails, i;

	dm_modules();
	two_paths(a, b);
	mpath_create(a, b);
	/*
	 * 20 ms a command: 256 writes at depth 16 take 16 rounds, about a
	 * third of a second at least, however loaded the machine (a slower
	 * guest only lengthens it).  The path fails once the first writes
	 * are seen at the paths, with at least 15 rounds, 300 ms, to go: a
	 * sysfs write away.  (It failed 60 ms after the fork, through a
	 * shell, before: a parent that got there later than the batch's end,
	 * dioctl's start and a third of a second, failed no path.)
	 */
	assert_int_equal(tl_scsi_debug_ndelay(20000000), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		execl("/bin/sh", "sh", "-c", "exec \"$0\" write /dev/mapper/dio_mp -l 16M "
		      "-b 64K -d 16 --random 51 --pi -j >" OUT " 2>" ERR, dioctl, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 30000 * tl_slow_factor(); i++) {
		if (disk_inflight(a) || disk_inflight(b))
			break;
		si.si_pid = 0;
		assert_int_equal(waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT), 0);
		if (si.si_pid == pid)
			break;		/* its status below says why */
		usleep(1000);
	}
	snprintf(path, sizeof(path), "/sys/block/%s/device/state", tl_basename(b));
	assert_int_equal(tl_write_file(path, "offline\n"), 0);	/* the newline is required */
	assert_int_equal(waitpid(pid, &st, 0), pid);
	dioctl_ran(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
		   "write /dev/mapper/dio_mp -l 16M -b 64K -d 16 --random 51 --pi -j");
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		show_output();
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	expect_jq_true(".status == \"ok\" and .requests == 256 and (.failures | length) == 0");
	/* The failed path is failed in dm's eyes, the other active. */
	assert_int_equal(mpath_paths("A", &fails), 1);
	assert_int_equal(mpath_paths("F", &fails), 1);
	assert_true(fails >= 1);
	assert_int_equal(tl_scsi_debug_ndelay(0), 0);
	dioctl_expect(0, "read /dev/mapper/dio_mp -l 16M -v -j");
	expect_jq_true(".verified == true and (.failures | length) == 0");
	/* On the path that stayed, the LUN itself: all of it, PI included. */
	must("dmsetup remove dio_mp");
	must("echo running > /sys/block/%s/device/state", tl_basename(b));
	dioctl_expect(0, "scrub %s -r 0:16M -j", a);
	expect_jq_true(".pi_failures == 0 and .io_errors == 0");
}

/* ---- layers that do not pass integrity on ---- */

/* No PI in the query, and PI asked for is refused, by dioctl and the module. */
static void expect_no_pi(const char *dev)
{
	struct dio_request r, *rp = &r;
	struct dio_query q;
	void *buf = tl_xalloc(4096, 0), *pi = tl_xalloc(4096, 0);
	int ctx, fd, h;

	dioctl_expect(0, "query %s -j", dev);
	expect_jq_true(".pi_tuple_size == 0 and .pi_profile == null");
	dioctl_expect(5, "write %s -l 64K --pi", dev);
	dioctl_expect(0, "write %s -l 64K", dev);

	ctx = sys_dio_init(0, DIO_PRIVATE);
	assert_true(ctx >= 0);
	fd = open(dev, O_RDWR | O_DIRECT);
	assert_true(fd >= 0);
	h = sys_dio_open(ctx, fd, 0);
	assert_true(h >= 0);
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	assert_int_equal(sys_dio_query(ctx, h, &q), 0);
	assert_int_equal(q.pi_tuple_size, 0);
	dio_req_prep_read(&r, h, buf, 4096, 0);
	assert_int_equal(dio_req_set_pi(&r, pi, 64, 0, 0, 0), 0);
	assert_int_equal(tl_dio_submit(ctx, &rp, 1), -EOPNOTSUPP);
	assert_int_equal(sys_dio_close(ctx, h), 0);
	close(fd);
	close(ctx);
	free(buf);
	free(pi);
}

static void test_dm_crypt_no_pi(void **state)
{
	char sd[64], dn[32];

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1", sd, sizeof(sd)), 0);
	dm_modules();
	assert_int_equal(tl_kmod_probe("dm_crypt", NULL), 0);
	/* Where modprobe cannot see the guest kernel's modules, nothing loads them. */
	assert_int_equal(tl_kmod_probe("ecb", NULL), 0);
	assert_int_equal(tl_kmod_probe("xts", NULL), 0);
	devno(sd, dn, sizeof(dn));
	must("dmsetup create dio_crypt --table '0 32768 crypt aes-xts-plain64 "
	     "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f 0 %s 0'", dn);
	expect_no_pi("/dev/mapper/dio_crypt");
}

static void test_loop_no_pi(void **state)
{
	char dev[64] = "";
	FILE *p;

	assert_int_equal(tl_kmod_probe("loop", NULL), 0);
	must("truncate -s 16M /tmp/stacks.loop");
	p = popen("losetup -f --show /tmp/stacks.loop", "r");
	assert_non_null(p);
	assert_non_null(fgets(dev, sizeof(dev), p));
	pclose(p);
	dev[strcspn(dev, "\n")] = 0;
	assert_true(dev[0] == '/');
	expect_no_pi(dev);
	must("losetup -d %s", dev);
}

/* ---- md ---- */

static int teardown_md(void **state)
{
	tl_sh("mdadm --stop --scan >/dev/null 2>&1; true");
	tl_sh("for d in /dev/nvme0n1 /dev/nvme0n5 /dev/sd?; do "
	      "mdadm --zero-superblock \"$d\" >/dev/null 2>&1; done; true");
	tl_scsi_debug_unload();
	return 0;
}

/* Data offset of md member @member of /dev/@md, in bytes. */
static uint64_t md_data_offset(const char *md, const char *member)
{
	char *s = tl_sysfs_read("/sys/block/%s/md/dev-%s/offset", md, member);
	uint64_t off;

	assert_non_null(s);
	off = strtoull(s, NULL, 10) * 512;
	free(s);
	return off;
}

/*
 * md RAID1 over two NVMe PI namespaces of one format (type 1 and type 2,
 * which the kernel calls type 1): md stacks their integrity, so PI goes
 * through (6.12 and later; 6.1's md loses the PI of reads, so the module
 * offers none through md there).  A PI error on the mirror reads go to is
 * not the caller's: md reads the block from the other mirror, rewrites
 * the bad one with it and returns good data; the caller sees a verified
 * read.
 */
static void test_md_raid1(void **state)
{
	const char *img = "/tmp/results/nvme1.img";
	char a[64], b[64], buf[512];
	uint64_t off;

	assert_int_equal(tl_kmod_probe("raid1", NULL), 0);
	assert_int_equal(tl_nvme_dev(1, a, sizeof(a)), 0);
	assert_int_equal(tl_nvme_dev(5, b, sizeof(b)), 0);
	/*
	 * QEMU refuses reads of blocks never written with PI (ref tag 0):
	 * written once whole, as a new disk would be formatted, so that md
	 * and mdadm can read their superblocks.
	 */
	dioctl_expect(0, "write %s -l $(blockdev --getsize64 %s) --pattern 0", a, a);
	dioctl_expect(0, "write %s -l $(blockdev --getsize64 %s) --pattern 0", b, b);
	/* Reads go to @a: @b is write-mostly. */
	must("mdadm --create /dev/md0 --run --quiet --level=1 --raid-devices=2 --metadata=1.2 "
	     "--assume-clean %s --write-mostly %s", a, b);
	if (!tl_kernel_at_least(6, 12)) {
		expect_no_pi("/dev/md0");
		return;
	}
	dioctl_expect(0, "query /dev/md0 -j");
	expect_jq_true(".pi_tuple_size == 8 and .pi_type == 1 and "
		       ".pi_profile == \"T10-DIF-TYPE1-CRC\"");
	pi_roundtrip("/dev/md0", "2M", 61);

	/* Block 5 of the array changed on @a behind its PI (QEMU: data first). */
	off = md_data_offset("md0", tl_basename(a)) + 5 * 512;
	edit_file(img, off, buf, sizeof(buf), flip_byte);
	/* The array answers from the good mirror and repairs the bad one. */
	dioctl_expect(0, "read /dev/md0 -l 64K -v -j");
	expect_jq_true(".verified == true and (.failures | length) == 0");
	must("dmesg | grep -q 'md/raid1:md0: read error corrected'");
	must("mdadm --stop /dev/md0");
	dioctl_expect(0, "scrub %s -r %llu:%llu -j", a, (unsigned long long)(off - 5 * 512),
		      (unsigned long long)(off - 5 * 512 + 64 * 1024));
	expect_jq_true(".pi_failures == 0");
}

/* md RAID5 does not pass integrity on: no PI through it. */
static void test_md_raid5_no_pi(void **state)
{
	char sd[64], names[8][32];

	assert_int_equal(tl_kmod_probe("raid456", NULL), 0);
	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1 per_host_store=1 add_host=3",
					    sd, sizeof(sd)), 0);
	assert_int_equal(tl_scsi_debug_wait_disks(3, names, 8), 3);
	must("mdadm --create /dev/md1 --run --quiet --level=5 --raid-devices=3 --metadata=1.2 "
	     "--assume-clean /dev/%s /dev/%s /dev/%s", names[0], names[1], names[2]);
	expect_no_pi("/dev/md1");
	must("mdadm --stop /dev/md1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_lio_fileio_type1, teardown_lio),
		cmocka_unit_test_teardown(test_lio_fileio_type3, teardown_lio),
		cmocka_unit_test_teardown(test_lio_iblock, teardown_lio),
		cmocka_unit_test_teardown(test_dm_linear, teardown_dm),
		cmocka_unit_test_teardown(test_dm_linear_nvme, teardown_dm),
		cmocka_unit_test_teardown(test_dm_multipath_reports, teardown_dm),
		cmocka_unit_test_teardown(test_dm_multipath_path_failure, teardown_dm),
		cmocka_unit_test_teardown(test_dm_crypt_no_pi, teardown_dm),
		cmocka_unit_test_teardown(test_loop_no_pi, teardown_dm),
		cmocka_unit_test_teardown(test_md_raid1, teardown_md),
		cmocka_unit_test_teardown(test_md_raid5_no_pi, teardown_md),
	};

	/* No udev in the guest: dmsetup makes the /dev/mapper nodes itself. */
	setenv("DM_DISABLE_UDEV", "1", 1);
	if (dioctl_run_init("stacks-json", 0) || tl_dio_load())
		return 1;
	return cmocka_run_group_tests_name("stacks", tests, NULL, NULL);
}
