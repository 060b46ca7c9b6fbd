// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The test bed itself: the module loads and unloads through libkmod,
 * /dev/dio_batch appears with its mode, and the PI devices the other tests
 * rely on show the integrity formats they are configured for.
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

static void test_nvme_profiles(void **state)
{
	static const struct { int nsid; const char *format; int lbs; } ns[] = {
		{ 1, "T10-DIF-TYPE1-CRC", 512 },
		{ 2, "EXT-DIF-TYPE1-CRC64", 4096 },
		{ 3, "T10-DIF-TYPE3-CRC", 512 },
	};
	char dev[64], *fmt, *lbs;
	size_t i;

	for (i = 0; i < 3; i++) {
		assert_int_equal(tl_nvme_dev(ns[i].nsid, dev, sizeof(dev)), 0);
		fmt = tl_sysfs_read("/sys/block/%s/integrity/format",
				    tl_basename(dev));
		lbs = tl_sysfs_read("/sys/block/%s/queue/logical_block_size",
				    tl_basename(dev));
		assert_non_null(fmt);
		assert_non_null(lbs);
		print_message("# %s: %s, %s-byte blocks\n", dev, fmt, lbs);
		assert_string_equal(fmt, ns[i].format);
		assert_int_equal(atoi(lbs), ns[i].lbs);
		free(fmt);
		free(lbs);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_module_load_creates_device),
		cmocka_unit_test(test_module_unload_removes_device),
		cmocka_unit_test(test_scsi_debug_profiles),
		cmocka_unit_test(test_nvme_profiles),
	};

	return cmocka_run_group_tests_name("testbed", tests, NULL, NULL);
}
