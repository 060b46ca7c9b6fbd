// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * DIO_IOC_QUERY against sysfs, for every PI profile the scsi_debug and
 * QEMU NVMe devices offer, and the ABI from a 32-bit program.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

struct expect {
	const char *format;
	unsigned int lbs;
	unsigned int guard;
	unsigned int tuple;
	unsigned int type;
	unsigned int ref_size;
	int scsi;
};

static long sysfs_long(const char *dev, const char *attr)
{
	char *v = tl_sysfs_read("/sys/block/%s/%s", tl_basename(dev), attr);
	long n;

	assert_non_null(v);
	n = strtol(v, NULL, 10);
	free(v);
	return n;
}

static void check_query(const char *dev, const struct expect *e)
{
	int ctx = sys_dio_init(0, DIO_PRIVATE), fd, h;
	struct dio_query q;
	char *fmt;

	assert_true(ctx >= 0);
	fd = open(dev, O_RDWR);
	assert_true(fd >= 0);
	h = sys_dio_open(ctx, fd, 0);
	assert_true(h >= 1);
	assert_int_equal(sys_dio_query(ctx, h, &q), 0);
	print_message("# %s: %s interval %u tuple %u md %u guard %u type %u caps 0x%x\n",
		      dev, q.profile, q.pi_interval, q.pi_tuple_size,
		      q.pi_md_size, q.pi_guard_type, q.pi_type, q.pi_caps);

	/* Geometry against the block layer's own view. */
	assert_int_equal(q.logical_block_size, sysfs_long(dev, "queue/logical_block_size"));
	assert_int_equal(q.logical_block_size, e->lbs);
	assert_int_equal(q.physical_block_size, sysfs_long(dev, "queue/physical_block_size"));
	assert_int_equal(q.capacity, sysfs_long(dev, "size") * 512);
	assert_int_equal(q.max_segments, sysfs_long(dev, "queue/max_segments"));
	assert_int_equal(q.max_segment_size, sysfs_long(dev, "queue/max_segment_size"));
	assert_true(q.dma_alignment >= 1 && !(q.dma_alignment & (q.dma_alignment - 1)));
	assert_true(q.max_io_bytes >= 1U << 20);

	/* PI against /sys/block/X/integrity. */
	fmt = tl_sysfs_read("/sys/block/%s/integrity/format", tl_basename(dev));
	assert_non_null(fmt);
	assert_string_equal(fmt, e->format);
	if (!e->guard) {
		assert_string_equal(q.profile, "");
		assert_int_equal(q.pi_caps, 0);
		assert_int_equal(q.pi_tuple_size, 0);
		goto out;
	}
	assert_string_equal(q.profile, fmt);
	assert_int_equal(q.pi_interval,
			 sysfs_long(dev, "integrity/protection_interval_bytes"));
	assert_int_equal(q.pi_interval, e->lbs);
	assert_int_equal(q.pi_guard_type, e->guard);
	assert_int_equal(q.pi_tuple_size, e->tuple);
	assert_int_equal(q.pi_md_size, e->tuple);
	assert_int_equal(q.pi_offset, 0);
	/* No metadata beyond the PI on these profiles. */
	assert_int_equal(q.pi_opaque_size, 0);
	assert_int_equal(q.pi_opaque_offset, 0);
	assert_int_equal(q.pi_type, e->type);
	assert_int_equal(q.pi_app_tag_size, 2);
	assert_int_equal(q.pi_ref_tag_size, e->ref_size);
	assert_int_equal(q.pi_storage_tag_size, 0);
	assert_true(q.pi_caps & DIO_PI_CAP_INTEGRITY);
	assert_int_equal(!!(q.pi_caps & DIO_PI_CAP_REFTAG), e->type == 1);
	assert_int_equal(!!(q.pi_caps & DIO_PI_CAP_KVERIFY),
			 sysfs_long(dev, "integrity/read_verify"));
	assert_int_equal(!!(q.pi_caps & DIO_PI_CAP_KGENERATE),
			 sysfs_long(dev, "integrity/write_generate"));
	assert_int_equal(!!(q.pi_caps & DIO_PI_CAP_DEVICE),
			 sysfs_long(dev, "integrity/device_is_integrity_capable"));
	/* Raw reads: SCSI always; every driver since 6.14's BIP_CHECK_*. */
	assert_int_equal(!!(q.pi_caps & DIO_PI_CAP_NOCHECK),
			 e->scsi || tl_kernel_at_least(6, 14));
out:
	free(fmt);
	close(fd);
	close(ctx);
}

static void test_scsi_debug_profiles(void **state)
{
	static const struct { const char *opts; struct expect e; } cases[] = {
		{ "dif=1 dix=1 guard=0", { "T10-DIF-TYPE1-CRC", 512, DIO_GUARD_CRC16, 8, 1, 4, 1 } },
		{ "dif=1 dix=1 guard=1", { "T10-DIF-TYPE1-IP", 512, DIO_GUARD_IP, 8, 1, 4, 1 } },
		{ "dif=2 dix=1 guard=0 sector_size=4096", { "T10-DIF-TYPE1-CRC", 4096, DIO_GUARD_CRC16, 8, 1, 4, 1 } },
		{ "dif=1 dix=1 guard=1 sector_size=4096", { "T10-DIF-TYPE1-IP", 4096, DIO_GUARD_IP, 8, 1, 4, 1 } },
		{ "dif=3 dix=1 guard=0", { "T10-DIF-TYPE3-CRC", 512, DIO_GUARD_CRC16, 8, 3, 4, 1 } },
		{ "dif=3 dix=1 guard=1 sector_size=4096", { "T10-DIF-TYPE3-IP", 4096, DIO_GUARD_IP, 8, 3, 4, 1 } },
		{ "dif=0 dix=0", { "none", 512, DIO_GUARD_NONE, 0, 0, 0, 1 } },
	};
	char opts[128], dev[64];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(opts, sizeof(opts), "dev_size_mb=8 %s", cases[i].opts);
		assert_int_equal(tl_scsi_debug_load(opts, dev, sizeof(dev)), 0);
		check_query(dev, &cases[i].e);
		assert_int_equal(tl_scsi_debug_unload(), 0);
	}
}

static void test_nvme_profiles(void **state)
{
	static const struct expect e[] = {
		{ "T10-DIF-TYPE1-CRC", 512, DIO_GUARD_CRC16, 8, 1, 4, 0 },
		{ "EXT-DIF-TYPE1-CRC64", 4096, DIO_GUARD_CRC64, 16, 1, 6, 0 },
		{ "T10-DIF-TYPE3-CRC", 512, DIO_GUARD_CRC16, 8, 3, 4, 0 },
	};
	char dev[64];
	int ns;

	for (ns = 1; ns <= 3; ns++) {
		assert_int_equal(tl_nvme_dev(ns, dev, sizeof(dev)), 0);
		check_query(dev, &e[ns - 1]);
	}
}

static void test_compat32_program(void **state)
{
	char dev[64];
	const char *b = getenv("DIO_BUILD");

	assert_non_null(b);
	assert_int_equal(tl_scsi_debug_load("dev_size_mb=8 dif=1 dix=1", dev, sizeof(dev)), 0);
	assert_int_equal(tl_sh("%s/tests/compat32 %s", b, dev), 0);
	assert_int_equal(tl_scsi_debug_unload(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scsi_debug_profiles),
		cmocka_unit_test(test_nvme_profiles),
		cmocka_unit_test(test_compat32_program),
	};

	if (tl_dio_load())
		return 1;
	return cmocka_run_group_tests_name("query", tests, NULL, NULL);
}
