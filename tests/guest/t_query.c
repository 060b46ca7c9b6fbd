// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * DIO_IOC_QUERY against sysfs, for every PI profile the scsi_debug and
 * QEMU NVMe devices offer (metadata larger than PI included), a
 * partition's start (ABI 4) and the seeds libdioctl makes of it, and the
 * ABI from a 32-bit program.
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
#include <sys/stat.h>
#include <sys/sysmacros.h>
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
	/*
	 * Metadata per interval when there is more than the tuple (0: the
	 * tuple alone), and where its bytes that are not PI lie.
	 */
	unsigned int md, opaque_offset;
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

/* The query of @dev checked against @e and sysfs; the query in @out. */
static void check_query(const char *dev, const struct expect *e,
			struct dio_query *out)
{
	unsigned int md = e->md ? e->md : e->tuple;
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
	/* PI first in the metadata on every device here. */
	assert_int_equal(q.pi_offset, 0);
	assert_int_equal(q.pi_md_size, md);
	/* Metadata beyond the PI: its size and offset, as upstream's LBMD. */
	assert_int_equal(q.pi_opaque_size, md - e->tuple);
	assert_int_equal(q.pi_opaque_offset, e->opaque_offset);
	/* libdioctl takes every one of these formats. */
	{
		struct dio_pi_profile p;

		assert_int_equal(dio_pi_profile_from_query(&q, &p), 0);
		assert_int_equal(p.md_size, md);
		assert_int_equal(p.pi_offset, 0);
		assert_int_equal(p.tuple_size, e->tuple);
		assert_int_equal(dio_pi_len(&p, 8 * q.pi_interval), 8 * md);
	}
	assert_int_equal(q.pi_type, e->type);
	assert_int_equal(q.pi_app_tag_size, 2);
	assert_int_equal(q.pi_ref_tag_size, e->ref_size);
	assert_int_equal(q.pi_storage_tag_size, 0);
	assert_true(q.pi_caps & DIO_PI_CAP_INTEGRITY);
	assert_int_equal(!!(q.pi_caps & DIO_PI_CAP_REFTAG), e->type != 3);
	/* The device's number, as stat(2) has it. */
	{
		struct stat st;

		assert_int_equal(stat(dev, &st), 0);
		assert_int_equal(q.dev_major, major(st.st_rdev));
		assert_int_equal(q.dev_minor, minor(st.st_rdev));
	}
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
	if (out)
		*out = q;
	free(fmt);
	close(fd);
	close(ctx);
}

static void test_scsi_debug_profiles(void **state)
{
	static const struct { const char *opts; struct expect e; } cases[] = {
		{ "dif=1 dix=1 guard=0", { "T10-DIF-TYPE1-CRC", 512, DIO_GUARD_CRC16, 8, 1, 4, 1, 0, 0 } },
		{ "dif=1 dix=1 guard=1", { "T10-DIF-TYPE1-IP", 512, DIO_GUARD_IP, 8, 1, 4, 1, 0, 0 } },
		/* Type 2: the module says 1 (the kernel's profile), libdioctl sysfs's 2. */
		{ "dif=2 dix=1 guard=0 sector_size=4096", { "T10-DIF-TYPE1-CRC", 4096, DIO_GUARD_CRC16, 8, 2, 4, 1, 0, 0 } },
		{ "dif=1 dix=1 guard=1 sector_size=4096", { "T10-DIF-TYPE1-IP", 4096, DIO_GUARD_IP, 8, 1, 4, 1, 0, 0 } },
		{ "dif=3 dix=1 guard=0", { "T10-DIF-TYPE3-CRC", 512, DIO_GUARD_CRC16, 8, 3, 4, 1, 0, 0 } },
		{ "dif=3 dix=1 guard=1 sector_size=4096", { "T10-DIF-TYPE3-IP", 4096, DIO_GUARD_IP, 8, 3, 4, 1, 0, 0 } },
		{ "dif=0 dix=0", { "none", 512, DIO_GUARD_NONE, 0, 0, 0, 1, 0, 0 } },
	};
	char opts[128], dev[64];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(opts, sizeof(opts), "dev_size_mb=8 %s", cases[i].opts);
		assert_int_equal(tl_scsi_debug_load(opts, dev, sizeof(dev)), 0);
		check_query(dev, &cases[i].e, NULL);
		assert_int_equal(tl_scsi_debug_unload(), 0);
	}
}

/*
 * The NVMe namespaces of tests/vm/run.sh; nsid 4 has 16 bytes of metadata
 * per block, the CRC16 tuple in the first 8.  The metadata size is checked
 * against what the controller reports (Identify) and, where the kernel
 * has it (6.12 and later), NVMe's metadata_bytes attribute.
 */
static void test_nvme_profiles(void **state)
{
	static const struct expect e[] = {
		[1] = { "T10-DIF-TYPE1-CRC", 512, DIO_GUARD_CRC16, 8, 1, 4, 0, 0, 0 },
		[2] = { "EXT-DIF-TYPE1-CRC64", 4096, DIO_GUARD_CRC64, 16, 1, 6, 0, 0, 0 },
		[3] = { "T10-DIF-TYPE3-CRC", 512, DIO_GUARD_CRC16, 8, 3, 4, 0, 0, 0 },
		[4] = { "T10-DIF-TYPE1-CRC", 512, DIO_GUARD_CRC16, 8, 1, 4, 0, 16, 8 },
		/* Type 2, which libdioctl learns by Identify Namespace. */
		[5] = { "T10-DIF-TYPE1-CRC", 512, DIO_GUARD_CRC16, 8, 2, 4, 0, 0, 0 },
	};
	struct tl_nvme_format nf;
	struct dio_query q;
	char dev[64], *mdb;
	int ns;

	for (ns = 1; ns <= 5; ns++) {
		assert_int_equal(tl_nvme_dev(ns, dev, sizeof(dev)), 0);
		check_query(dev, &e[ns], &q);
		assert_int_equal(tl_nvme_format(ns, &nf), 0);
		assert_int_equal(q.pi_md_size, nf.ms);
		mdb = tl_sysfs_read("/sys/block/%s/metadata_bytes", tl_basename(dev));
		if (tl_kernel_at_least(6, 12))
			assert_non_null(mdb);
		if (mdb)
			assert_int_equal(q.pi_md_size, atoi(mdb));
		free(mdb);
	}
}

/* Root's context, and its handle of the device, inherited. */
struct query_args {
	int ctx, h;
};

/* In a tl_run_as() child: the PI type QUERY says, 90 when it fails. */
static int query_type_child(void *arg)
{
	const struct query_args *qa = arg;
	struct dio_query q;

	if (sys_dio_query(qa->ctx, qa->h, &q))
		return 90;
	return q.pi_type;
}

/*
 * Type 2 as a user who is not root: sysfs tells anyone on SCSI; NVMe's
 * Identify needs CAP_SYS_ADMIN on 6.1, so there the module's 1 stands.
 */
static void test_type2_unprivileged(void **state)
{
	struct query_args qa;
	char dev[64];
	int fd, st;

	assert_int_equal(tl_nvme_dev(5, dev, sizeof(dev)), 0);
	qa.ctx = sys_dio_init(0, DIO_PRIVATE);
	assert_true(qa.ctx >= 0);
	fd = open(dev, O_RDONLY);
	assert_true(fd >= 0);
	qa.h = sys_dio_open(qa.ctx, fd, 0);
	assert_true(qa.h >= 1);
	/*
	 * The device node stays root's: the user reads through its handle.
	 * No access to /dev/nvme0n5 as uid 1000 (root's, mode 0600 or 0660 disk).
	 */
	assert_int_equal(tl_run_as(1000, 1000, 0, query_type_child, &qa), 1);
	assert_int_equal(chmod(dev, 0644), 0);
	st = tl_run_as(1000, 1000, 0, query_type_child, &qa);
	assert_int_equal(chmod(dev, 0600), 0);
	assert_int_equal(st, tl_kernel_at_least(6, 2) ? 2 : 1);
	close(fd);
	close(qa.ctx);
}

/*
 * What test_partition_start has open (tl_fd_keep()), and the partition it
 * made: closed and removed at its end, or by its teardown when it failed
 * half-way (a disk left open could not be unloaded, a partition table left
 * on an NVMe namespace would stay there for the next programs).
 */
static char part_disk[64], part_made[72];

static int part_teardown(void **state)
{
	int ret = 0;

	tl_fd_close_all();
	if (part_made[0])
		ret = tl_partition_remove(part_disk, part_made);
	part_made[0] = 0;
	return ret;
}

/* The module's own answer: a raw DIO_IOC_QUERY, without libdioctl's sysfs. */
static void raw_query(int ctx, int h, struct dio_query *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->handle = h;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_QUERY, q), 0);
}

/*
 * @len bytes with PI at @off of handle @h (seeds from dio_pi_seed()),
 * read back through handle @rh at @roff, whose ref tags the module checks
 * (and the device, on the write), and compared.
 */
static void seed_roundtrip(int ctx, int h, const struct dio_query *q, uint64_t off,
			   int rh, const struct dio_query *rq, uint64_t roff,
			   size_t len, uint64_t tag)
{
	size_t pilen = len / q->pi_interval * q->pi_md_size;
	unsigned char *data = tl_xalloc(len, 0), *back = tl_xalloc(len, 0);
	unsigned char *pi = tl_xalloc(pilen, 0), *pi2 = tl_xalloc(pilen, 0xee);
	struct dio_pi_params a = { .seed = dio_pi_seed(q, off),
				   .chk_flags = DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG };
	struct dio_request r, *rp = &r;
	struct dio_pi_profile p;

	assert_int_equal(dio_pi_seed(rq, roff), a.seed);
	assert_int_equal(dio_pi_profile_from_query(q, &p), 0);
	tl_fill(data, len, tag);
	assert_int_equal(dio_pi_generate(&p, data, len, pi, &a), 0);
	dio_req_prep_write(&r, h, data, len, off);
	dio_req_set_pi(&r, pi, pilen, 0, 0, 0);
	assert_int_equal(tl_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(tl_dio_wait(ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, len);
	dio_req_prep_read(&r, rh, back, len, roff);
	dio_req_set_pi(&r, pi2, pilen, DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG, 0, 0);
	assert_int_equal(tl_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(tl_dio_wait(ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, len);
	assert_memory_equal(back, data, len);
	assert_memory_equal(pi2, pi, pilen);
	assert_int_equal(dio_pi_verify(&p, back, len, pi2, &a, NULL), 0);
	free(data);
	free(back);
	free(pi);
	free(pi2);
}

/*
 * part_start_bytes (ABI 4, DIO_FEAT_PART_START) on @dev: 0 on the whole
 * disk; on a partition @start logical blocks in, sysfs's start times 512,
 * in the module's raw answer and in sys_dio_query()'s.  Then the seeds
 * dio_pi_seed() makes of it: a write with PI through the partition (the
 * device checks its ref tags) read back, ref tags checked by the module,
 * through the partition and through the whole disk at the same place.
 */
static void check_part_start(const char *dev, uint32_t start)
{
	int ctx = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE)), fd, pfd, h, ph;
	struct dio_query lq, pq, wq;
	char *part = part_made, *sysfs;
	uint64_t bytes;
	size_t len;

	assert_true(ctx >= 0);
	snprintf(part_disk, sizeof(part_disk), "%s", dev);
	assert_int_equal(tl_partition_make(dev, start, start, part, sizeof(part_made)), 0);
	pfd = tl_fd_keep(open(part, O_RDWR));
	assert_true(pfd >= 0);
	ph = sys_dio_open(ctx, pfd, 0);
	assert_true(ph >= 1);
	raw_query(ctx, ph, &pq);
	bytes = (uint64_t)start * pq.logical_block_size;
	sysfs = tl_sysfs_read("/sys/class/block/%s/start", tl_basename(part));
	assert_non_null(sysfs);
	print_message("# %s: sysfs start %s, byte %llu; the module says %llu, seed %llu\n",
		      part, sysfs, (unsigned long long)bytes,
		      (unsigned long long)pq.part_start_bytes,
		      (unsigned long long)dio_pi_seed(&pq, 0));
	assert_int_equal(strtoull(sysfs, NULL, 10) * 512, bytes);
	free(sysfs);
	assert_int_equal(pq.part_start_bytes, bytes);
	assert_int_equal(pq.capacity, bytes);
	assert_int_equal(sys_dio_query(ctx, ph, &lq), 0);
	assert_int_equal(lq.part_start_bytes, bytes);
	/* Intervals, not 512-byte sectors: 1 MiB is 2048 or 256 of them. */
	assert_int_equal(dio_pi_seed(&lq, 0), bytes / pq.pi_interval);

	/*
	 * The whole disk: 0.  Not claimed: a claimed partition's disk is
	 * claimed for the partition, whoever holds both.
	 */
	fd = tl_fd_keep(open(dev, O_RDWR));
	assert_true(fd >= 0);
	h = sys_dio_open(ctx, fd, DIO_OPEN_NOCLAIM);
	assert_true(h >= 1);
	raw_query(ctx, h, &wq);
	assert_int_equal(wq.part_start_bytes, 0);
	assert_int_equal(sys_dio_query(ctx, h, &lq), 0);
	assert_int_equal(lq.part_start_bytes, 0);
	assert_int_equal(dio_pi_seed(&wq, 8 * wq.pi_interval), 8);

	len = 4 * pq.pi_interval;
	seed_roundtrip(ctx, ph, &pq, 2 * pq.pi_interval, ph, &pq, 2 * pq.pi_interval,
		       len, start);
	seed_roundtrip(ctx, ph, &pq, 8 * pq.pi_interval, h, &wq,
		       bytes + 8 * pq.pi_interval, len, start + 1);
	assert_int_equal(sys_dio_close(ctx, h), 0);
	assert_int_equal(sys_dio_close(ctx, ph), 0);
	assert_int_equal(part_teardown(NULL), 0);
}

/*
 * The partition's start, on SCSI and NVMe, with 512- and 4096-byte
 * blocks (and so intervals): a partition 1 MiB into the disk.
 */
static void test_partition_start(void **state)
{
	struct dio_features f;
	char dev[64];

	assert_int_equal(sys_dio_features(&f), 0);
	assert_true(f.abi_version >= 4);
	assert_true(f.features & DIO_FEAT_PART_START);
	assert_int_equal(tl_scsi_debug_load("dev_size_mb=8 dif=1 dix=1", dev, sizeof(dev)), 0);
	check_part_start(dev, 2048);
	assert_int_equal(tl_scsi_debug_unload(), 0);
	assert_int_equal(tl_scsi_debug_load("dev_size_mb=8 dif=1 dix=1 guard=1 sector_size=4096",
					    dev, sizeof(dev)), 0);
	check_part_start(dev, 256);
	assert_int_equal(tl_scsi_debug_unload(), 0);
	assert_int_equal(tl_nvme_dev(1, dev, sizeof(dev)), 0);
	check_part_start(dev, 2048);
	/* CRC64, 4096-byte blocks, 48-bit ref tags. */
	assert_int_equal(tl_nvme_dev(2, dev, sizeof(dev)), 0);
	check_part_start(dev, 256);
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
		cmocka_unit_test(test_type2_unprivileged),
		cmocka_unit_test_teardown(test_partition_start, part_teardown),
		cmocka_unit_test(test_compat32_program),
	};

	if (tl_dio_load())
		return 1;
	return cmocka_run_group_tests_name("query", tests, NULL, NULL);
}
