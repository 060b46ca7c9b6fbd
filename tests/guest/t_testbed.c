// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The test bed itself: the module loads and unloads through libkmod,
 * /dev/dio_batch appears with its mode, the module is the package's
 * version, and the PI devices the other tests rely on show the integrity
 * formats they are configured for.
 */
#include <errno.h>
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

static void test_module_load_creates_device(void **state)
{
	struct dio_features f;
	struct stat st;
	char *misc;

	assert_int_equal(tl_dio_load(), 0);
	assert_true(tl_module_loaded("dio_batch"));
	assert_int_equal(stat("/dev/dio_batch", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0660);
	misc = tl_sysfs_read("/sys/class/misc/dio_batch/dev");
	assert_non_null(misc);
	assert_int_equal(major(st.st_rdev), 10);	/* MISC_MAJOR */
	free(misc);

	assert_int_equal(sys_dio_features(&f), 0);
	assert_int_equal(f.size, sizeof(f));
	assert_int_equal(f.abi_version, DIO_BATCH_ABI_VERSION);
	assert_true(f.features & DIO_FEAT_CONTEXTS);
	assert_int_equal(f.init_flags, DIO_INIT_F_ALL);
}

/*
 * The module carries the package's version, the one this program was built
 * with (MODULE_VERSION: debian/changelog's, through module/Kbuild, or the
 * one dkms.conf passes to a DKMS build; the DKMS check runs this program
 * against the module DKMS built).
 */
static void test_module_version(void **state)
{
	char *v;

	assert_int_equal(tl_dio_load(), 0);
	v = tl_sysfs_read("/sys/module/dio_batch/version");
	assert_non_null(v);
	print_message("# /sys/module/dio_batch/version: %s\n", v);
	assert_string_equal(v, DIO_BATCH_VERSION);
	free(v);
}

static void test_module_unload_removes_device(void **state)
{
	struct stat st;

	assert_int_equal(tl_dio_load(), 0);
	assert_int_equal(tl_dio_unload(), 0);
	assert_false(tl_module_loaded("dio_batch"));
	assert_int_equal(stat("/dev/dio_batch", &st), -1);
	assert_int_equal(errno, ENOENT);
	/* And back, for the tests that follow. */
	assert_int_equal(tl_dio_load(), 0);
	assert_int_equal(stat("/dev/dio_batch", &st), 0);
}

struct sd_case {
	const char *opts;
	const char *format;
	int lbs;
};

static void check_scsi_debug(const struct sd_case *c)
{
	char dev[64], *fmt, *lbs;

	assert_int_equal(tl_scsi_debug_load(c->opts, dev, sizeof(dev)), 0);
	fmt = tl_sysfs_read("/sys/block/%s/integrity/format", tl_basename(dev));
	lbs = tl_sysfs_read("/sys/block/%s/queue/logical_block_size",
			    tl_basename(dev));
	assert_non_null(fmt);
	assert_non_null(lbs);
	print_message("# %s: %s, %s-byte blocks\n", c->opts, fmt, lbs);
	assert_string_equal(fmt, c->format);
	assert_int_equal(atoi(lbs), c->lbs);
	free(fmt);
	free(lbs);
	assert_int_equal(tl_scsi_debug_unload(), 0);
}

static void test_scsi_debug_profiles(void **state)
{
	static const struct sd_case cases[] = {
		{ "dev_size_mb=16 dif=1 dix=1 guard=0", "T10-DIF-TYPE1-CRC", 512 },
		{ "dev_size_mb=16 dif=1 dix=1 guard=1", "T10-DIF-TYPE1-IP", 512 },
		{ "dev_size_mb=16 dif=2 dix=1 guard=0 sector_size=4096", "T10-DIF-TYPE1-CRC", 4096 },
		{ "dev_size_mb=16 dif=3 dix=1 guard=0", "T10-DIF-TYPE3-CRC", 512 },
		{ "dev_size_mb=16 dif=3 dix=1 guard=1 sector_size=4096", "T10-DIF-TYPE3-IP", 4096 },
		{ "dev_size_mb=16 dif=0 dix=0", "none", 512 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_scsi_debug(&cases[i]);
}

static char *nvme_attr(const char *dev, const char *attr)
{
	return tl_sysfs_read("/sys/block/%s/%s", tl_basename(dev), attr);
}

/*
 * The NVMe namespaces of tests/vm/run.sh, as the controller formats them
 * (Identify) and as the kernel shows them (sysfs).  nsid 4 has 16 bytes of
 * metadata per block, the 8-byte PI tuple first: the kernel registers it
 * as T10-DIF-TYPE1-CRC like nsid 1.  No kernel shows the metadata size in
 * integrity/ (6.1, 6.12 and 7.3 have no integrity/tuple_size); since 6.12
 * (not 6.1) NVMe's own metadata_bytes attribute does.
 */
static void test_nvme_profiles(void **state)
{
	static const struct {
		int nsid;
		const char *format;
		unsigned int lbs, ms;
		int type, pif;
	} ns[] = {
		{ 1, "T10-DIF-TYPE1-CRC", 512, 8, 1, 0 },
		{ 2, "EXT-DIF-TYPE1-CRC64", 4096, 16, 1, 2 },
		{ 3, "T10-DIF-TYPE3-CRC", 512, 8, 3, 0 },
		{ 4, "T10-DIF-TYPE1-CRC", 512, 16, 1, 0 },
	};
	struct tl_nvme_format nf;
	char dev[64], *fmt, *lbs, *iv, *gen, *ver, *mdb;
	size_t i;

	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		assert_int_equal(tl_nvme_dev(ns[i].nsid, dev, sizeof(dev)), 0);
		assert_int_equal(tl_nvme_format(ns[i].nsid, &nf), 0);
		fmt = nvme_attr(dev, "integrity/format");
		lbs = nvme_attr(dev, "queue/logical_block_size");
		iv = nvme_attr(dev, "integrity/protection_interval_bytes");
		gen = nvme_attr(dev, "integrity/write_generate");
		ver = nvme_attr(dev, "integrity/read_verify");
		mdb = nvme_attr(dev, "metadata_bytes");
		assert_non_null(fmt);
		assert_non_null(lbs);
		assert_non_null(iv);
		assert_non_null(gen);
		assert_non_null(ver);
		print_message("# nsid %d %s: %s, %s-byte blocks, interval %s, "
			      "metadata_bytes %s; Identify: %u+%u%s, type %d%s, pif %d\n",
			      ns[i].nsid, dev, fmt, lbs, iv, mdb ? mdb : "(none)",
			      nf.lba_size, nf.ms, nf.ext ? " extended" : "",
			      nf.pi_type, nf.pi_first ? " first" : "", nf.pif);
		/* The controller: separate metadata (mset=0), PI first (pil=1). */
		assert_int_equal(nf.lba_size, ns[i].lbs);
		assert_int_equal(nf.ms, ns[i].ms);
		assert_false(nf.ext);
		assert_int_equal(nf.pi_type, ns[i].type);
		assert_int_equal(nf.pif, ns[i].pif);
		if (nf.ms > 8 && ns[i].pif == 0)
			assert_true(nf.pi_first);
		/* The kernel. */
		assert_string_equal(fmt, ns[i].format);
		assert_int_equal(atoi(lbs), ns[i].lbs);
		assert_int_equal(atoi(iv), ns[i].lbs);
		/* The block layer generates and verifies on every namespace. */
		assert_string_equal(gen, "1");
		assert_string_equal(ver, "1");
		if (tl_kernel_at_least(6, 12)) {
			assert_non_null(mdb);
			assert_int_equal(atoi(mdb), ns[i].ms);
		}
		free(fmt);
		free(lbs);
		free(iv);
		free(gen);
		free(ver);
		free(mdb);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_module_load_creates_device),
		cmocka_unit_test(test_module_version),
		cmocka_unit_test(test_module_unload_removes_device),
		cmocka_unit_test(test_scsi_debug_profiles),
		cmocka_unit_test(test_nvme_profiles),
	};

	return cmocka_run_group_tests_name("testbed", tests, NULL, NULL);
}
