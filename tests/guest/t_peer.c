// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dio_batch beside its peer: upstream's own user PI through io_uring
 * (Linux 6.14: a READ or WRITE of an O_DIRECT block device with a PI
 * attribute, sqe->attr_ptr at a struct io_uring_attr_pi), on the 7.3
 * kernel only (run-suite.sh runs it there alone: 6.1 and 6.12 have no PI
 * attribute and would ignore it).  The same thing through both interfaces
 * on NVMe namespace 1 (T10-DIF-TYPE1-CRC, 512-byte blocks, 8-byte PI),
 * and what each reports, asserted; each test prints its row of the table
 * in docs/kernels.md ("dio_batch and io_uring's PI on 7.3") as "# row: ...":
 *
 *  1. a block changed behind its PI (its data in the namespace's backing
 *     file): io_uring's checked read fails with -EILSEQ and nothing more;
 *     dio_batch's names the interval, tag, expected, actual and source;
 *  2. raw reads of it: io_uring without check flags, dio_batch with
 *     DIO_PI_NOCHECK: the changed data and the stored tuples;
 *  3. PI the kernel generates for a write without the caller's: both, read
 *     back verified (each interface's writes read by the other, too);
 *  4. app tag masks: dio_batch checks the bits of app_tag_mask, io_uring
 *     all 16 (IO_INTEGRITY_CHK_APPTAG);
 *  5. registered buffers (io_uring's fixed buffers with PI in a buffer of
 *     its own; DIO_REQ_FIXED with DIO_REQ_PI), a partition of the
 *     namespace (the ref tags' seeds), and dm-linear over the namespace.
 *
 * The uapi of 7.3 that Debian 12's headers and liburing 2.3 lack is
 * defined here, as bench/io_bench.c does.
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
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/fs.h>
#include <liburing.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

#include "uring_pi.h"

#define NSID		1
#define IV		512		/* nsid 1: 512-byte blocks, 8-byte tuples */
#define LEN		(16 * 1024)	/* 32 intervals a request */
#define NIV		(LEN / IV)
#define PILEN		(NIV * 8)
#define IMG		"/tmp/results/nvme1.img"
#define CHK_GR		(IO_INTEGRITY_CHK_GUARD | IO_INTEGRITY_CHK_REFTAG)
/* The regions of the namespace (64 MiB) each test uses. */
#define OFF_BAD		(1ULL << 20)
#define OFF_GEN		(2ULL << 20)
#define OFF_APP		(3ULL << 20)
#define OFF_FIXED	(4ULL << 20)
#define PART_START	16384		/* blocks: 8 MiB in */
#define PART_BLOCKS	16384
#define DM_START	49152		/* sectors: 24 MiB in, 16 MiB mapped */
#define DM_NAME		"dio_peer"

/* One device, open for both interfaces. */
struct peer {
	char path[64];
	int fd;			/* O_RDWR | O_DIRECT: io_uring's */
	int ctx, h;		/* dio_batch's */
	struct dio_query q;
	struct dio_pi_profile p;
	unsigned char *data, *back, *pi, *pi2;
};

static struct io_uring ring;
static bool ring_up;
static char ns_dev[64], part_dev[72];
static bool dm_up;

/* The data's random source (tl_rand()), seeded in main(). */
static uint64_t rs;

static int teardown(void **state)
{
	tl_fd_close_all();
	if (dm_up) {
		tl_sh("dmsetup remove " DM_NAME " >/dev/null 2>&1");
		dm_up = false;
	}
	if (part_dev[0]) {
		tl_partition_remove(ns_dev, part_dev);
		part_dev[0] = 0;
	}
	return 0;
}

static void peer_open(struct peer *pe, const char *path)
{
	memset(pe, 0, sizeof(*pe));
	snprintf(pe->path, sizeof(pe->path), "%s", path);
	pe->fd = open(path, O_RDWR | O_DIRECT);
	assert_true(pe->fd >= 0);
	tl_fd_keep(pe->fd);
	pe->ctx = sys_dio_init(0, DIO_PRIVATE);
	assert_true(pe->ctx >= 0);
	tl_fd_keep(pe->ctx);
	pe->h = sys_dio_open(pe->ctx, pe->fd, 0);
	assert_true(pe->h >= 1);
	assert_int_equal(sys_dio_query(pe->ctx, pe->h, &pe->q), 0);
	assert_int_equal(dio_pi_profile_from_query(&pe->q, &pe->p), 0);
	assert_string_equal(pe->q.profile, "T10-DIF-TYPE1-CRC");
	assert_int_equal(pe->q.pi_interval, IV);
	assert_int_equal(pe->q.pi_md_size, 8);
	pe->data = tl_xalloc(LEN, 0);
	pe->back = tl_xalloc(LEN, 0);
	pe->pi = tl_xalloc(PILEN, 0);
	pe->pi2 = tl_xalloc(PILEN, 0);
	tl_fill(pe->data, LEN, tl_rand(&rs));
}

static void peer_close(struct peer *pe)
{
	free(pe->data);
	free(pe->back);
	free(pe->pi);
	free(pe->pi2);
	tl_fd_close(pe->ctx);
	tl_fd_close(pe->fd);
}

static void ring_setup(void)
{
	struct io_uring_params p = { 0 };

	if (ring_up)
		return;
	assert_int_equal(io_uring_queue_init_params(8, &ring, &p), 0);
	ring_up = true;
	/* The kernel says it takes attributes: 7.3 must. */
	assert_true(p.features & IORING_FEAT_RW_ATTR);
}

/* The whole namespace, tracked by teardown (nothing else may hold it). */
static void ns_open(struct peer *pe)
{
	assert_int_equal(tl_nvme_dev(NSID, ns_dev, sizeof(ns_dev)), 0);
	ring_setup();
	peer_open(pe, ns_dev);
}

/*
 * One io_uring READ or WRITE (fixed buffer @fixed, or none when < 0) with
 * a PI attribute when @pi is not NULL; the CQE's result, its flags in
 * *@cflags.
 */
static int uring_rw(struct peer *pe, int write, void *buf, size_t len, uint64_t off,
		    int fixed, void *pi, uint16_t flags, uint16_t app, uint64_t seed,
		    unsigned int *cflags)
{
	struct io_uring_attr_pi a = {
		.flags = flags, .app_tag = app, .len = (uint32_t)(len / IV * 8),
		.addr = (uint64_t)(uintptr_t)pi, .seed = seed,
	};
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct io_uring_cqe *cqe;
	int res;

	assert_non_null(sqe);
	if (fixed >= 0 && write)
		io_uring_prep_write_fixed(sqe, pe->fd, buf, len, off, fixed);
	else if (fixed >= 0)
		io_uring_prep_read_fixed(sqe, pe->fd, buf, len, off, fixed);
	else if (write)
		io_uring_prep_write(sqe, pe->fd, buf, len, off);
	else
		io_uring_prep_read(sqe, pe->fd, buf, len, off);
	if (pi) {
		sqe->addr3 = (uint64_t)(uintptr_t)&a;		/* attr_ptr */
		sqe->__pad2[0] = IORING_RW_ATTR_FLAG_PI;	/* attr_type_mask */
	}
	assert_int_equal(io_uring_submit_and_wait(&ring, 1), 1);
	assert_int_equal(io_uring_wait_cqe(&ring, &cqe), 0);
	res = cqe->res;
	if (cflags)
		*cflags = cqe->flags;
	io_uring_cqe_seen(&ring, cqe);
	return res;
}

/* One dio_batch request, submitted and waited for: its result, or the submit's -errno. */
static long long dio_run(struct peer *pe, struct dio_request *r)
{
	struct dio_request *rp = r;

	if (sys_dio_submit(pe->ctx, &rp, 1) != 1)
		return -errno;
	assert_int_equal(sys_dio_wait(pe->ctx, &rp, 1, NULL), 1);
	return r->result;
}

static long long dio_rw(struct peer *pe, int write, void *buf, uint64_t off, void *pi,
			unsigned int flags, uint16_t app, uint16_t mask,
			struct dio_request *r)
{
	if (write)
		dio_req_prep_write(r, pe->h, buf, LEN, off);
	else
		dio_req_prep_read(r, pe->h, buf, LEN, off);
	if (pi)
		assert_int_equal(dio_req_set_pi(r, pi, PILEN, flags, app, mask), 0);
	return dio_run(pe, r);
}

static void gen(struct peer *pe, const void *data, void *pi, uint64_t seed, uint16_t app)
{
	assert_int_equal(dio_pi_generate(&pe->p, data, LEN, pi,
					 &(struct dio_pi_params){ .seed = seed, .app_tag = app }), 0);
}

/* 0 when @pi holds good PI of @data from @seed (app tag @app under @mask). */
static int verify(struct peer *pe, const void *data, const void *pi, uint64_t seed,
		  uint16_t app, uint16_t mask, unsigned int chk)
{
	struct dio_pi_error e;

	return dio_pi_verify(&pe->p, data, LEN, pi,
			     &(struct dio_pi_params){ .seed = seed, .app_tag = app,
						      .app_mask = mask, .chk_flags = chk }, &e);
}

static uint16_t be16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Tuple @i's tags in @pi. */
#define T_GUARD(pi, i)	be16((pi) + (i) * 8)
#define T_APP(pi, i)	be16((pi) + (i) * 8 + 2)
#define T_REF(pi, i)	be32((pi) + (i) * 8 + 4)

static const char *src_name(int s)
{
	return dio_pi_source_name(s);
}

/*
 * @r failed on PI with exactly this report (printed whole when a field
 * differs).
 */
static void assert_pi_err(const char *what, const struct dio_request *r, int source,
			  uint64_t interval, int tag, uint64_t expected, uint64_t actual)
{
	if (r->result != -EILSEQ || r->pi_err_source != source ||
	    r->pi_err_interval != interval || r->pi_err_tag != tag ||
	    r->pi_err_expected != expected || r->pi_err_actual != actual)
		print_message("# %s: result %lld source %u interval %llu tag %u expected %#llx "
			      "actual %#llx; want -EILSEQ source %d interval %llu tag %d "
			      "expected %#llx actual %#llx\n", what, (long long)r->result,
			      r->pi_err_source, (unsigned long long)r->pi_err_interval,
			      r->pi_err_tag, (unsigned long long)r->pi_err_expected,
			      (unsigned long long)r->pi_err_actual, source,
			      (unsigned long long)interval, tag, (unsigned long long)expected,
			      (unsigned long long)actual);
	assert_int_equal(r->result, -EILSEQ);
	assert_int_equal(r->pi_err_source, source);
	assert_int_equal(r->pi_err_interval, interval);
	assert_int_equal(r->pi_err_tag, tag);
	assert_int_equal(r->pi_err_expected, expected);
	assert_int_equal(r->pi_err_actual, actual);
}

/*
 * Byte 100 of interval @lba of the namespace changed in its backing file
 * (QEMU keeps the data first, the metadata after all of it): the block as
 * now stored goes to @blk.
 */
static void corrupt(uint64_t lba, unsigned char *blk)
{
	FILE *f = fopen(IMG, "r+");

	assert_non_null(f);
	assert_int_equal(fseek(f, (long)(lba * IV), SEEK_SET), 0);
	assert_int_equal(fread(blk, 1, IV, f), IV);
	blk[100] ^= 0xff;
	assert_int_equal(fseek(f, (long)(lba * IV), SEEK_SET), 0);
	assert_int_equal(fwrite(blk, 1, IV, f), IV);
	assert_int_equal(fclose(f), 0);
}

/*
 * The ref tag the namespace stores for block @lba, from its backing file
 * (QEMU, mset=0: 8 bytes of metadata per block after the data of all the
 * namespace's blocks, which sysfs counts).
 */
static uint32_t stored_ref(uint64_t lba)
{
	char *n = tl_sysfs_read("/sys/block/%s/size", tl_basename(ns_dev));
	unsigned char t[8];
	FILE *f = fopen(IMG, "r");
	long blocks;

	assert_non_null(n);
	blocks = atol(n);
	free(n);
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)(blocks * IV + lba * 8), SEEK_SET), 0);
	assert_int_equal(fread(t, 1, 8, f), 8);
	fclose(f);
	return be32(t + 4);
}

/*
 * How the kernel describes the device's metadata (FS_IOC_GETLBMD_CAP,
 * 6.17), printed: 0 or -errno.
 */
static int lbmd_get(struct peer *pe, struct logical_block_metadata_cap *cap)
{
	int ret;

	memset(cap, 0xa5, sizeof(*cap));
	ret = tl_errno(ioctl(pe->fd, FS_IOC_GETLBMD_CAP, cap));
	print_message("# %s: FS_IOC_GETLBMD_CAP %d: flags %#x interval %u size %u pi %u@%u "
		      "guard %u app %u ref %u\n", pe->path, ret, cap->lbmd_flags,
		      cap->lbmd_interval, cap->lbmd_size, cap->lbmd_pi_size, cap->lbmd_pi_offset,
		      cap->lbmd_guard_tag_type, cap->lbmd_app_tag_size, cap->lbmd_ref_tag_size);
	return ret;
}

/* The format dio_batch's query says, as the kernel's own ioctl says it. */
static void lbmd_assert(struct peer *pe, int ret, const struct logical_block_metadata_cap *cap)
{
	assert_int_equal(ret, 0);
	assert_int_equal(cap->lbmd_flags, LBMD_PI_CAP_INTEGRITY | LBMD_PI_CAP_REFTAG);
	assert_int_equal(cap->lbmd_interval, IV);
	assert_int_equal(cap->lbmd_size, 8);
	assert_int_equal(cap->lbmd_pi_size, 8);
	assert_int_equal(cap->lbmd_guard_tag_type, pe->q.pi_guard_type);
	assert_int_equal(cap->lbmd_app_tag_size, 2);
	assert_int_equal(cap->lbmd_ref_tag_size, 4);
}

/*
 * Rows 1 and 2: a block changed behind its PI, read checked (both
 * -EILSEQ; only dio_batch says which block, tag and values, and who found
 * it) and raw (both return the changed data and the stored tuples).
 */
static void test_corrupted_block(void **state)
{
	const uint64_t off = OFF_BAD;
	struct logical_block_metadata_cap cap;
	struct dio_request r;
	unsigned char blk[IV];
	unsigned int cf_chk = 99, cf_raw = 99;
	int u_chk, u_plain, u_raw, u_ref_only, u_back_ok, u_pi_ok;
	long long d_raw;
	struct peer pe;
	uint64_t seed;

	ns_open(&pe);
	lbmd_assert(&pe, lbmd_get(&pe, &cap), &cap);
	seed = dio_pi_seed(&pe.q, off);
	assert_int_equal(seed, off / IV);
	gen(&pe, pe.data, pe.pi, seed, 0);
	assert_int_equal(dio_rw(&pe, 1, pe.data, off, pe.pi, 0, 0, 0, &r), LEN);
	corrupt(seed + 7, blk);

	/* Row 1: checked reads. */
	u_chk = uring_rw(&pe, 0, pe.back, LEN, off, -1, pe.pi2, CHK_GR, 0, seed, &cf_chk);
	u_plain = uring_rw(&pe, 0, pe.back, LEN, off, -1, NULL, 0, 0, 0, NULL);
	dio_rw(&pe, 0, pe.back, off, pe.pi2, DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG, 0, 0, &r);
	print_message("# row: corrupted block: io_uring+PI read (GUARD|REFTAG) %d (%s), cqe flags %#x,"
		      " plain O_DIRECT read %d; dio_batch %lld: interval %llu (seed %llu + 7) "
		      "tag %s expected %#llx actual %#llx source %s\n", u_chk, strerror(-u_chk),
		      cf_chk, u_plain, (long long)r.result,
		      (unsigned long long)r.pi_err_interval, (unsigned long long)seed,
		      dio_pi_tag_name(r.pi_err_tag), (unsigned long long)r.pi_err_expected,
		      (unsigned long long)r.pi_err_actual, src_name(r.pi_err_source));
	assert_int_equal(u_chk, -EILSEQ);
	assert_int_equal(cf_chk, 0);
	assert_int_equal(u_plain, -EILSEQ);
	assert_pi_err("dio_batch checked read", &r, DIO_PI_SRC_DEVICE, seed + 7,
		      DIO_PI_TAG_GUARD, dio_pi_crc16_t10dif(0, blk, IV), T_GUARD(pe.pi, 7));
	/* The same report without a PI buffer: the module's default check. */
	dio_rw(&pe, 0, pe.back, off, NULL, 0, 0, 0, &r);
	assert_pi_err("dio_batch plain read", &r, DIO_PI_SRC_DEVICE, seed + 7,
		      DIO_PI_TAG_GUARD, dio_pi_crc16_t10dif(0, blk, IV), T_GUARD(pe.pi, 7));

	/* Row 2: raw reads. */
	memset(pe.back, 0, LEN);
	memset(pe.pi2, 0xee, PILEN);
	u_raw = uring_rw(&pe, 0, pe.back, LEN, off, -1, pe.pi2, 0, 0, seed, &cf_raw);
	u_back_ok = !memcmp(pe.back + 7 * IV, blk, IV) && !memcmp(pe.back, pe.data, 7 * IV);
	u_pi_ok = !memcmp(pe.pi2, pe.pi, PILEN);
	/* A ref tag check alone passes: the guard is what is wrong. */
	u_ref_only = uring_rw(&pe, 0, pe.back, LEN, off, -1, pe.pi2,
			      IO_INTEGRITY_CHK_REFTAG, 0, seed, NULL);
	memset(pe.back, 0, LEN);
	memset(pe.pi2, 0xee, PILEN);
	d_raw = dio_rw(&pe, 0, pe.back, off, pe.pi2, DIO_PI_NOCHECK, 0, 0, &r);
	print_message("# row: raw read: io_uring+PI read (flags 0) %d, data %s, tuples %s "
		      "(block 7: guard %#x app %#x ref %#x), REFTAG alone %d; dio_batch "
		      "DIO_PI_NOCHECK %lld, data %s, tuples %s\n", u_raw,
		      u_back_ok ? "as changed" : "DIFFERENT", u_pi_ok ? "as stored" : "DIFFERENT",
		      T_GUARD(pe.pi, 7), T_APP(pe.pi, 7), T_REF(pe.pi, 7), u_ref_only, d_raw,
		      !memcmp(pe.back + 7 * IV, blk, IV) && !memcmp(pe.back, pe.data, 7 * IV) ?
		      "as changed" : "DIFFERENT",
		      !memcmp(pe.pi2, pe.pi, PILEN) ? "as stored" : "DIFFERENT");
	assert_int_equal(u_raw, LEN);
	assert_int_equal(cf_raw, 0);
	assert_true(u_back_ok);
	assert_true(u_pi_ok);
	assert_int_equal(u_ref_only, LEN);
	assert_int_equal(d_raw, LEN);
	assert_memory_equal(pe.back, pe.data, 7 * IV);
	assert_memory_equal(pe.back + 7 * IV, blk, IV);
	assert_memory_equal(pe.back + 8 * IV, pe.data + 8 * IV, LEN - 8 * IV);
	assert_memory_equal(pe.pi2, pe.pi, PILEN);
	assert_int_equal(T_REF(pe.pi2, 7), seed + 7);

	/* Repaired through io_uring, with the caller's PI; both read it clean. */
	assert_int_equal(uring_rw(&pe, 1, pe.data, LEN, off, -1, pe.pi, CHK_GR, 0, seed, NULL),
			 LEN);
	assert_int_equal(dio_rw(&pe, 0, pe.back, off, NULL, 0, 0, 0, &r), LEN);
	assert_memory_equal(pe.back, pe.data, LEN);
	peer_close(&pe);
}

/*
 * Row 3: PI the kernel generates for a write without the caller's, read
 * back checked with the tuples verified here; each interface reads what
 * the other wrote.
 */
static void test_generated_pi(void **state)
{
	const uint64_t off = OFF_GEN, off2 = OFF_GEN + LEN;
	unsigned char *data2;
	struct dio_request r;
	int u_w, u_r, u_v, u_x;
	long long d_w, d_r, d_x;
	int d_v;
	struct peer pe;
	uint64_t seed, seed2;

	ns_open(&pe);
	seed = dio_pi_seed(&pe.q, off);
	seed2 = dio_pi_seed(&pe.q, off2);
	data2 = tl_xalloc(LEN, 0);
	tl_fill(data2, LEN, 0x3333);

	u_w = uring_rw(&pe, 1, pe.data, LEN, off, -1, NULL, 0, 0, 0, NULL);
	memset(pe.back, 0, LEN);
	memset(pe.pi2, 0xee, PILEN);
	u_r = uring_rw(&pe, 0, pe.back, LEN, off, -1, pe.pi2, CHK_GR, 0, seed, NULL);
	u_v = memcmp(pe.back, pe.data, LEN) ? -1 :
	      verify(&pe, pe.back, pe.pi2, seed, 0, 0xffff, DIO_PI_CHK_ALL);
	/* dio_batch reads io_uring's write, the module verifying it. */
	d_x = dio_rw(&pe, 0, pe.back, off, NULL, 0, 0, 0, &r);
	if (memcmp(pe.back, pe.data, LEN))
		d_x = -1000;

	d_w = dio_rw(&pe, 1, data2, off2, NULL, 0, 0, 0, &r);
	memset(pe.back, 0, LEN);
	memset(pe.pi2, 0xee, PILEN);
	d_r = dio_rw(&pe, 0, pe.back, off2, pe.pi2, DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG, 0, 0, &r);
	d_v = memcmp(pe.back, data2, LEN) ? -1 :
	      verify(&pe, pe.back, pe.pi2, seed2, 0, 0xffff, DIO_PI_CHK_ALL);
	/* io_uring reads dio_batch's write, the device checking it. */
	memset(pe.back, 0, LEN);
	u_x = uring_rw(&pe, 0, pe.back, LEN, off2, -1, pe.pi2, CHK_GR, 0, seed2, NULL);
	if (u_x == LEN && memcmp(pe.back, data2, LEN))
		u_x = -1000;
	print_message("# row: kernel-generated PI: io_uring write without the attribute %d, "
		      "read back with PI (GUARD|REFTAG) %d, tuples %s, read by dio_batch %lld; "
		      "dio_batch write without DIO_REQ_PI %lld, read back with PI (CHK_GUARD|"
		      "CHK_REFTAG) %lld, tuples %s, read by io_uring+PI %d\n", u_w, u_r,
		      u_v ? "BAD" : "verified (app tag 0)", d_x, d_w, d_r,
		      d_v ? "BAD" : "verified (app tag 0)", u_x);
	assert_int_equal(u_w, LEN);
	assert_int_equal(u_r, LEN);
	assert_int_equal(u_v, 0);
	assert_int_equal(d_x, LEN);
	assert_int_equal(d_w, LEN);
	assert_int_equal(d_r, LEN);
	assert_int_equal(d_v, 0);
	assert_int_equal(u_x, LEN);
	free(data2);
	peer_close(&pe);
}

/*
 * Row 4: app tags.  Stored 0x1234; asked for 0x1299, which differs only
 * in the low byte: dio_batch's check under the mask 0xff00 passes (the
 * module checks a partial mask itself), io_uring's compares all 16 bits
 * (the NVMe driver sets the app tag mask to 0xffff) and fails.
 */
static void test_app_tag_mask(void **state)
{
	const uint64_t off = OFF_APP;
	struct dio_request r, r2;
	int u_bad, u_good, u_nochk;
	long long d_masked;
	struct peer pe;
	uint64_t seed;

	ns_open(&pe);
	seed = dio_pi_seed(&pe.q, off);
	gen(&pe, pe.data, pe.pi, seed, 0x1234);
	assert_int_equal(dio_rw(&pe, 1, pe.data, off, pe.pi, 0, 0, 0, &r), LEN);

	d_masked = dio_rw(&pe, 0, pe.back, off, pe.pi2, DIO_PI_CHK_APPTAG, 0x1299, 0xff00, &r);
	dio_rw(&pe, 0, pe.back, off, pe.pi2, DIO_PI_CHK_APPTAG, 0x1299, 0xffff, &r2);
	u_bad = uring_rw(&pe, 0, pe.back, LEN, off, -1, pe.pi2,
			 CHK_GR | IO_INTEGRITY_CHK_APPTAG, 0x1299, seed, NULL);
	u_good = uring_rw(&pe, 0, pe.back, LEN, off, -1, pe.pi2,
			  CHK_GR | IO_INTEGRITY_CHK_APPTAG, 0x1234, seed, NULL);
	/* Without IO_INTEGRITY_CHK_APPTAG the attribute's app tag is not looked at. */
	u_nochk = uring_rw(&pe, 0, pe.back, LEN, off, -1, pe.pi2, CHK_GR, 0x1299, seed, NULL);
	print_message("# row: app tag mask: stored 0x1234, asked 0x1299: dio_batch mask 0xff00 %lld, "
		      "mask 0xffff %lld (interval %llu tag %s expected %#llx actual %#llx source %s); "
		      "io_uring+PI CHK_APPTAG %d (%s), with 0x1234 %d, without CHK_APPTAG %d\n",
		      d_masked, (long long)r2.result, (unsigned long long)r2.pi_err_interval,
		      dio_pi_tag_name(r2.pi_err_tag), (unsigned long long)r2.pi_err_expected,
		      (unsigned long long)r2.pi_err_actual, src_name(r2.pi_err_source), u_bad,
		      strerror(-u_bad), u_good, u_nochk);
	assert_int_equal(d_masked, LEN);
	assert_pi_err("dio_batch app tag, full mask", &r2, DIO_PI_SRC_DEVICE, seed,
		      DIO_PI_TAG_APP, 0x1299, 0x1234);
	assert_int_equal(u_bad, -EILSEQ);
	assert_int_equal(u_good, LEN);
	assert_int_equal(u_nochk, LEN);
	peer_close(&pe);
}

/*
 * Row 5, registered buffers: io_uring's fixed buffers (READ_FIXED,
 * WRITE_FIXED) with the PI attribute, its PI in a buffer of its own, and
 * dio_batch's DIO_REQ_FIXED with DIO_REQ_PI: data and tuples through
 * both, and a wrong guard refused through both.
 */
static void test_fixed_buffers(void **state)
{
	const uint64_t off = OFF_FIXED, off2 = OFF_FIXED + LEN;
	unsigned char *ubuf, *dbuf;
	struct dio_request r;
	struct iovec iov;
	int u_w, u_r, u_ok, u_bad;
	long long d_w, d_r, d_bad;
	int d_ok;
	struct peer pe;
	uint64_t seed, seed2;

	ns_open(&pe);
	seed = dio_pi_seed(&pe.q, off);
	seed2 = dio_pi_seed(&pe.q, off2);
	ubuf = tl_xalloc(2 * LEN, 0);
	dbuf = tl_xalloc(2 * LEN, 0);
	iov = (struct iovec){ ubuf, 2 * LEN };
	assert_int_equal(io_uring_register_buffers(&ring, &iov, 1), 0);
	iov = (struct iovec){ dbuf, 2 * LEN };
	assert_int_equal(sys_dio_register_buffers(pe.ctx, &iov, 1), 0);

	/* io_uring: write from the first half, read into the second. */
	tl_fill(ubuf, LEN, 0x5151);
	gen(&pe, ubuf, pe.pi, seed, 0);
	u_w = uring_rw(&pe, 1, ubuf, LEN, off, 0, pe.pi, CHK_GR, 0, seed, NULL);
	memset(pe.pi2, 0xee, PILEN);
	u_r = uring_rw(&pe, 0, ubuf + LEN, LEN, off, 0, pe.pi2, CHK_GR, 0, seed, NULL);
	u_ok = !memcmp(ubuf, ubuf + LEN, LEN) && !memcmp(pe.pi, pe.pi2, PILEN);
	pe.pi[3 * 8] ^= 0x01;
	u_bad = uring_rw(&pe, 1, ubuf, LEN, off, 0, pe.pi, CHK_GR, 0, seed, NULL);

	/* dio_batch: the same. */
	tl_fill(dbuf, LEN, 0x5252);
	gen(&pe, dbuf, pe.pi, seed2, 0);
	dio_req_prep_write_fixed(&r, pe.h, dbuf, LEN, off2, 0);
	assert_int_equal(dio_req_set_pi(&r, pe.pi, PILEN, 0, 0, 0), 0);
	d_w = dio_run(&pe, &r);
	memset(pe.pi2, 0xee, PILEN);
	dio_req_prep_read_fixed(&r, pe.h, dbuf + LEN, LEN, off2, 0);
	assert_int_equal(dio_req_set_pi(&r, pe.pi2, PILEN, DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG,
					0, 0), 0);
	d_r = dio_run(&pe, &r);
	d_ok = !memcmp(dbuf, dbuf + LEN, LEN) && !memcmp(pe.pi, pe.pi2, PILEN);
	pe.pi[3 * 8] ^= 0x01;
	dio_req_prep_write_fixed(&r, pe.h, dbuf, LEN, off2, 0);
	assert_int_equal(dio_req_set_pi(&r, pe.pi, PILEN, 0, 0, 0), 0);
	d_bad = dio_run(&pe, &r);
	print_message("# row: registered buffers: io_uring WRITE_FIXED+PI %d, READ_FIXED+PI %d, "
		      "data and tuples %s, a wrong guard %d; dio_batch DIO_REQ_FIXED+PI write %lld, "
		      "read %lld, data and tuples %s, a wrong guard %lld (interval %llu tag %s "
		      "source %s)\n", u_w, u_r, u_ok ? "back" : "DIFFERENT", u_bad, d_w, d_r,
		      d_ok ? "back" : "DIFFERENT", d_bad, (unsigned long long)r.pi_err_interval,
		      dio_pi_tag_name(r.pi_err_tag), src_name(r.pi_err_source));
	assert_int_equal(u_w, LEN);
	assert_int_equal(u_r, LEN);
	assert_true(u_ok);
	assert_int_equal(u_bad, -EILSEQ);
	assert_int_equal(d_w, LEN);
	assert_int_equal(d_r, LEN);
	assert_true(d_ok);
	assert_pi_err("dio_batch fixed write, wrong guard", &r, DIO_PI_SRC_DEVICE, seed2 + 3,
		      DIO_PI_TAG_GUARD, T_GUARD(pe.pi, 3) ^ 0x100, T_GUARD(pe.pi, 3));
	assert_int_equal(io_uring_unregister_buffers(&ring), 0);
	assert_int_equal(sys_dio_unregister_buffers(pe.ctx), 0);
	free(ubuf);
	free(dbuf);
	peer_close(&pe);
}

/*
 * Row 5, a partition of the namespace (from block 16384).  dio_batch's
 * ref tags count from the start of the disk (dio_pi_seed()); a seed that
 * counts from the partition's is refused.  io_uring's seed is the
 * block layer's virtual one, which it remaps to the disk's LBA on the
 * way down and back on the way up.
 */
static void test_partition(void **state)
{
	const uint64_t off = 64 * IV;
	const uint64_t pseed = off / IV;
	struct dio_request r, rbad;
	int u_disk_w, u_disk_r, u_disk_pi, u_part_w, u_part_r;
	uint32_t u_part_ref = 0, d_part_ref = 0, u_part_sent;
	long long d_w, d_r, d_read_u;
	struct peer ns, pe;
	uint64_t dseed;

	ns_open(&ns);
	peer_close(&ns);
	assert_int_equal(tl_partition_make(ns_dev, PART_START, PART_BLOCKS, part_dev,
					   sizeof(part_dev)), 0);
	peer_open(&pe, part_dev);
	assert_int_equal(pe.q.part_start_bytes, (uint64_t)PART_START * IV);
	dseed = dio_pi_seed(&pe.q, off);
	assert_int_equal(dseed, PART_START + pseed);

	/* io_uring, the disk's seed. */
	gen(&pe, pe.data, pe.pi, dseed, 0);
	u_disk_w = uring_rw(&pe, 1, pe.data, LEN, off, -1, pe.pi, CHK_GR, 0, dseed, NULL);
	memset(pe.pi2, 0xee, PILEN);
	u_disk_r = uring_rw(&pe, 0, pe.back, LEN, off, -1, pe.pi2, CHK_GR, 0, dseed, NULL);
	u_disk_pi = !memcmp(pe.pi, pe.pi2, PILEN) && !memcmp(pe.back, pe.data, LEN);
	/* io_uring, the partition's seed. */
	gen(&pe, pe.data, pe.pi, pseed, 0);
	u_part_w = uring_rw(&pe, 1, pe.data, LEN, off, -1, pe.pi, CHK_GR, 0, pseed, NULL);
	/* The block layer remaps the ref tags where they are: the caller's buffer. */
	u_part_sent = T_REF(pe.pi, 0);
	memset(pe.pi2, 0xee, PILEN);
	u_part_r = uring_rw(&pe, 0, pe.back, LEN, off, -1, pe.pi2, CHK_GR, 0, pseed, NULL);
	if (u_part_r == LEN)
		u_part_ref = T_REF(pe.pi2, 0);
	/* What dio_batch reads of that: the tuples as stored. */
	memset(pe.pi2, 0xee, PILEN);
	d_read_u = dio_rw(&pe, 0, pe.back, off, pe.pi2, DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG,
			  0, 0, &r);
	if (d_read_u == LEN)
		d_part_ref = T_REF(pe.pi2, 0);
	/* dio_batch: dio_pi_seed()'s seed, then the partition's. */
	gen(&pe, pe.data, pe.pi, dseed, 0);
	d_w = dio_rw(&pe, 1, pe.data, off, pe.pi, 0, 0, 0, &r);
	d_r = dio_rw(&pe, 0, pe.back, off, pe.pi2, DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG, 0, 0, &r);
	gen(&pe, pe.data, pe.pi, pseed, 0);
	dio_rw(&pe, 1, pe.data, off, pe.pi, 0, 0, 0, &rbad);
	print_message("# row: partition (from block %d): io_uring+PI with the disk's seed %llu: "
		      "write %d read %d (tuples %s); with the partition's seed %llu: write %d (the "
		      "caller's first ref tag after it %#x) read %d (first ref tag %#x), dio_batch "
		      "reads ref tag %#x (%lld); dio_batch with "
		      "dio_pi_seed() %llu: write %lld read %lld; with the partition's seed: %lld "
		      "(interval %llu tag %s expected %#llx actual %#llx source %s)\n", PART_START,
		      (unsigned long long)dseed, u_disk_w, u_disk_r, u_disk_pi ? "back" : "DIFFERENT",
		      (unsigned long long)pseed, u_part_w, u_part_sent, u_part_r, u_part_ref,
		      d_part_ref,
		      d_read_u, (unsigned long long)dseed, d_w, d_r, (long long)rbad.result,
		      (unsigned long long)rbad.pi_err_interval, dio_pi_tag_name(rbad.pi_err_tag),
		      (unsigned long long)rbad.pi_err_expected,
		      (unsigned long long)rbad.pi_err_actual, src_name(rbad.pi_err_source));
	assert_int_equal(u_disk_w, LEN);
	assert_int_equal(u_disk_r, LEN);
	assert_true(u_disk_pi);
	assert_int_equal(u_part_w, LEN);
	assert_int_equal(u_part_sent, dseed);
	assert_int_equal(u_part_r, LEN);
	assert_int_equal(u_part_ref, pseed);
	assert_int_equal(d_read_u, LEN);
	assert_int_equal(d_part_ref, dseed);
	assert_int_equal(d_w, LEN);
	assert_int_equal(d_r, LEN);
	assert_pi_err("dio_batch, the partition's seed", &rbad, DIO_PI_SRC_DEVICE, dseed,
		      DIO_PI_TAG_REF, dseed, pseed);
	peer_close(&pe);
	assert_int_equal(tl_partition_remove(ns_dev, part_dev), 0);
	part_dev[0] = 0;
}

/*
 * Row 5, dm-linear over the namespace (16 MiB from 24 MiB in): user PI
 * through both, checked; a block changed below the mapping, read checked
 * and raw through both.
 */
static void test_dm_linear(void **state)
{
	const uint64_t off = 0, off2 = LEN;
	unsigned char blk[IV];
	struct logical_block_metadata_cap cap;
	struct dio_request r, rbad;
	struct stat st;
	int lbmd_ret;
	struct peer ns, pe;
	int u_w, u_r, u_ok, u_bad, u_raw, u_raw_ok;
	uint32_t u_sent_ref, u_raw_ref, u_disk_ref;
	unsigned char sent[PILEN];
	long long d_w, d_r, d_nocheck;
	uint64_t seed, seed2;

	ns_open(&ns);
	peer_close(&ns);
	assert_int_equal(tl_kmod_probe("dm_mod", NULL), 0);
	assert_int_equal(stat(ns_dev, &st), 0);
	assert_int_equal(tl_sh("dmsetup create " DM_NAME " --table '0 32768 linear %u:%u %d'",
			       major(st.st_rdev), minor(st.st_rdev), DM_START), 0);
	dm_up = true;
	peer_open(&pe, "/dev/mapper/" DM_NAME);
	lbmd_ret = lbmd_get(&pe, &cap);
	seed = dio_pi_seed(&pe.q, off);
	seed2 = dio_pi_seed(&pe.q, off2);

	gen(&pe, pe.data, pe.pi, seed, 0);
	memcpy(sent, pe.pi, PILEN);
	u_w = uring_rw(&pe, 1, pe.data, LEN, off, -1, pe.pi, CHK_GR, 0, seed, NULL);
	/* The block layer remaps the ref tags where they are: the caller's buffer. */
	u_sent_ref = T_REF(pe.pi, 0);
	u_disk_ref = stored_ref(DM_START + seed);
	memset(pe.pi2, 0xee, PILEN);
	u_r = uring_rw(&pe, 0, pe.back, LEN, off, -1, pe.pi2, CHK_GR, 0, seed, NULL);
	u_ok = !memcmp(pe.back, pe.data, LEN) && !memcmp(sent, pe.pi2, PILEN);

	tl_fill(pe.data + LEN / 2, LEN / 2, 0x7777);	/* other data for dio_batch */
	gen(&pe, pe.data, pe.pi2, seed2, 0);
	d_w = dio_rw(&pe, 1, pe.data, off2, pe.pi2, 0, 0, 0, &r);
	d_r = dio_rw(&pe, 0, pe.back, off2, pe.pi2, DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG, 0, 0, &r);
	if (d_r == LEN && memcmp(pe.back, pe.data, LEN))
		d_r = -1000;
	d_nocheck = dio_rw(&pe, 0, pe.back, off2, pe.pi2, DIO_PI_NOCHECK, 0, 0, &r);

	/* Block 5 of io_uring's range: sector DM_START + 5 of the namespace. */
	corrupt(DM_START + seed + 5, blk);
	u_bad = uring_rw(&pe, 0, pe.back, LEN, off, -1, pe.pi2, CHK_GR, 0, seed, NULL);
	memset(pe.back, 0, LEN);
	memset(pe.pi2, 0xee, PILEN);
	u_raw = uring_rw(&pe, 0, pe.back, LEN, off, -1, pe.pi2, 0, 0, seed, NULL);
	u_raw_ref = T_REF(pe.pi2, 0);
	u_raw_ok = !memcmp(pe.back + 5 * IV, blk, IV) && !memcmp(pe.pi2, sent, PILEN);
	dio_rw(&pe, 0, pe.back, off, NULL, 0, 0, 0, &rbad);
	print_message("# row: dm-linear: io_uring+PI write %d (the caller's first ref tag after "
		      "it %#x, the namespace's %#x) read %d (data and tuples %s), changed block read checked %d, raw %d "
		      "(%s, first ref tag %#x); dio_batch PI write %lld read %lld, "
		      "DIO_PI_NOCHECK %lld, changed block %lld (interval %llu tag %s expected %#llx "
		      "actual %#llx source %s)\n", u_w, u_sent_ref, u_disk_ref, u_r,
		      u_ok ? "back" : "DIFFERENT", u_bad, u_raw,
		      u_raw_ok ? "changed data, stored tuples" : "DIFFERENT", u_raw_ref, d_w, d_r,
		      d_nocheck, (long long)rbad.result, (unsigned long long)rbad.pi_err_interval,
		      dio_pi_tag_name(rbad.pi_err_tag), (unsigned long long)rbad.pi_err_expected,
		      (unsigned long long)rbad.pi_err_actual, src_name(rbad.pi_err_source));
	lbmd_assert(&pe, lbmd_ret, &cap);
	assert_int_equal(pe.q.pi_caps & DIO_PI_CAP_NOCHECK, 0);
	assert_int_equal(u_w, LEN);
	assert_int_equal(u_r, LEN);
	assert_true(u_ok);
	assert_int_equal(d_w, LEN);
	assert_int_equal(d_r, LEN);
	assert_int_equal(d_nocheck, -EOPNOTSUPP);
	assert_int_equal(u_bad, -EILSEQ);
	assert_int_equal(u_raw, LEN);
	assert_true(u_raw_ok);
	/* Left as sent (through dm the kernel remaps a copy), stored remapped. */
	assert_int_equal(u_sent_ref, seed);
	assert_int_equal(u_disk_ref, DM_START + seed);
	assert_int_equal(u_raw_ref, seed);
	assert_pi_err("dio_batch through dm, changed block", &rbad, DIO_PI_SRC_DEVICE, seed + 5,
		      DIO_PI_TAG_GUARD, dio_pi_crc16_t10dif(0, blk, IV), T_GUARD(sent, 5));
	peer_close(&pe);
	assert_int_equal(tl_sh("dmsetup remove " DM_NAME), 0);
	dm_up = false;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_corrupted_block, teardown),
		cmocka_unit_test_teardown(test_generated_pi, teardown),
		cmocka_unit_test_teardown(test_app_tag_mask, teardown),
		cmocka_unit_test_teardown(test_fixed_buffers, teardown),
		cmocka_unit_test_teardown(test_partition, teardown),
		cmocka_unit_test_teardown(test_dm_linear, teardown),
	};

	rs = tl_seed("DIO_SEED");
	/* No udev in the guest: dmsetup makes the /dev/mapper nodes itself. */
	setenv("DM_DISABLE_UDEV", "1", 1);
	if (tl_dio_load())
		return 1;
	return cmocka_run_group_tests_name("peer", tests, NULL, NULL);
}
