// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Batched direct I/O, the data path: the features announced, reads and
 * writes of random offsets and sizes, the device's edges, vectored
 * requests, batches, FLUSH and FUA, on scsi_debug with 512- and 4096-byte
 * sectors and on QEMU NVMe namespaces with 512- and 4096-byte blocks.
 * Data is checked byte for byte, against what was written and against a
 * plain O_DIRECT descriptor of the same device.  The random offsets and
 * sizes come from tl_seed("DIO_SEED"), printed.
 *
 * Devices are set up by each test's setup (tests/lib/io_common.h); the
 * last test checks that nothing is left allocated and that the module
 * unloads.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"
#include "io_common.h"

/* The random source of test_roundtrip(), seeded in main(). */
static uint64_t rng;

static void test_features(void **state)
{
	struct dio_features f;

	assert_int_equal(sys_dio_features(&f), 0);
	assert_true(f.features & DIO_FEAT_BATCH_IO);
	assert_int_equal(f.opcodes, (1U << DIO_OP_READ) | (1U << DIO_OP_WRITE) |
			 (1U << DIO_OP_FLUSH));
	assert_int_equal(f.max_batch, 4096);
	assert_int_equal(f.max_inflight, atoi(inflight_orig));
}

/* Random offsets and sizes, 1 block to 8 MiB, both ways. */
static void test_roundtrip(void **state)
{
	static const size_t caps[] = { 0, 64 * KiB, 1 * MiB, 7 * MiB };
	size_t max = 8 * MiB;
	uint8_t *w = tl_xalloc(max, 0), *r = tl_xalloc(max, 0), *x = tl_xalloc(max, 0);
	int i;

	for (i = 0; i < 16; i++) {
		size_t blocks = i % 4 ? 1 + tl_rand(&rng) % (caps[i % 4] / d.lbs) : 1;
		size_t len = blocks * d.lbs;
		uint64_t off, tag = tl_rand(&rng);

		if (i % 4 == 3 && len <= 1 * MiB)
			len += 1 * MiB;		/* always more than one bio */
		off = tl_rand(&rng) % ((d.cap - len) / d.lbs + 1) * d.lbs;
		tl_fill(w, len, tag);
		memset(r, 0, len);
		memset(x, 0, len);
		if (i % 2 == 0) {
			assert_int_equal(rw1(DIO_OP_WRITE, d.h, w, len, off), len);
			xpread(x, len, off);
			check_same(w, x, len, "O_DIRECT read of a dio write");
		} else {
			xpwrite(w, len, off);
		}
		assert_int_equal(rw1(DIO_OP_READ, d.h, r, len, off), len);
		check_same(w, r, len, "dio read");
	}
	free(w);
	free(r);
	free(x);
}

/* The first and the last block of the device. */
static void test_edges(void **state)
{
	size_t len = 4 * d.lbs;
	uint8_t *w = tl_xalloc(len, 0), *r = tl_xalloc(len, 0);

	tl_fill(w, len, 11);
	assert_int_equal(rw1(DIO_OP_WRITE, d.h, w, len, 0), len);
	assert_int_equal(rw1(DIO_OP_READ, d.h, r, len, 0), len);
	check_same(w, r, len, "first blocks");
	tl_fill(w, len, 12);
	assert_int_equal(rw1(DIO_OP_WRITE, d.h, w, len, d.cap - len), len);
	xpread(r, len, d.cap - len);
	check_same(w, r, len, "last blocks");
	free(w);
	free(r);
}

/*
 * Many segments: written from 300 scattered segments at DMA-aligned (not
 * block-aligned) addresses, read back contiguously and through another
 * segmentation; then UIO_MAXIOV (1024) separate pages, so the request
 * needs several bios, and one segment too many.
 */
static void test_iovec(void **state)
{
	enum { NSEG = 300, NMAX = 1024 };
	size_t pool_len = (NMAX + 1) * 2 * 4096 + 8 * d.lbs;
	uint8_t *pool = tl_xalloc(pool_len, 0), *flat, *back;
	struct iovec *iov = calloc(NMAX + 1, sizeof(*iov));
	struct dio_request r, *rp = &r;
	size_t total = 0, pos;
	uint64_t off = 3 * MiB;
	int i;

	assert_non_null(iov);
	for (i = 0; i < NSEG; i++) {
		size_t adj = d.align > 1 ? (i % 4) * d.align : 0;

		iov[i].iov_base = pool + (size_t)i * 4 * 4096 + adj;
		iov[i].iov_len = d.lbs * (1 + i % 3);
		tl_fill(iov[i].iov_base, iov[i].iov_len, 1000 + i);
		total += iov[i].iov_len;
	}
	flat = tl_xalloc(total, 0);
	back = tl_xalloc(total, 0);
	for (i = 0, pos = 0; i < NSEG; pos += iov[i].iov_len, i++)
		memcpy(flat + pos, iov[i].iov_base, iov[i].iov_len);

	dio_req_prep_writev(&r, d.h, iov, NSEG, off);
	assert_int_equal(submit1(&r), 1);
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, total);
	assert_int_equal(rw1(DIO_OP_READ, d.h, back, total, off), total);
	check_same(flat, back, total, "300-segment write");
	xpread(back, total, off);
	check_same(flat, back, total, "300-segment write, O_DIRECT");

	/* Read it back into 130 segments of other sizes. */
	memset(pool, 0, pool_len);
	for (i = 0, pos = 0; pos < total; i++) {
		size_t len = d.lbs * (1 + (i * 7) % 5);

		if (len > total - pos)
			len = total - pos;
		iov[i].iov_base = pool + (size_t)i * 6 * 4096;
		iov[i].iov_len = len;
		pos += len;
	}
	assert_true(i >= 100 && i <= NMAX && (size_t)i * 6 * 4096 < pool_len);
	dio_req_prep_readv(&r, d.h, iov, i, off);
	assert_int_equal(submit1(&r), 1);
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, total);
	for (int k = 0, p = 0; k < i; p += iov[k].iov_len, k++)
		check_same(flat + p, iov[k].iov_base, iov[k].iov_len,
			   "segmented read");
	free(flat);
	free(back);

	/* 1024 segments, one page each, no two pages adjacent. */
	total = 0;
	for (i = 0; i < NMAX; i++) {
		iov[i].iov_base = pool + (size_t)i * 2 * 4096;
		iov[i].iov_len = 4096;
		tl_fill(iov[i].iov_base, 4096, 5000 + i);
		total += 4096;
	}
	dio_req_prep_writev(&r, d.h, iov, NMAX, off);
	assert_int_equal(submit1(&r), 1);
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, total);
	back = tl_xalloc(total, 0);
	xpread(back, total, off);
	for (i = 0; i < NMAX; i++)
		check_same(iov[i].iov_base, back + (size_t)i * 4096, 4096,
			   "1024-segment write");
	memset(back, 0, total);
	assert_int_equal(rw1(DIO_OP_READ, d.h, back, total, off), total);
	for (i = 0; i < NMAX; i++)
		check_same(iov[i].iov_base, back + (size_t)i * 4096, 4096,
			   "1024-segment read back");
	iov[NMAX].iov_base = pool + (size_t)NMAX * 2 * 4096;
	iov[NMAX].iov_len = 4096;
	dio_req_prep_writev(&r, d.h, iov, NMAX + 1, off);
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_writev(&r, d.h, iov, 0, off);
	assert_int_equal(submit1(&r), -EINVAL);
	free(back);
	free(iov);
	free(pool);
}

/*
 * Batches of @nr requests of @len bytes in one SUBMIT each: writes, then
 * reads; then one batch of reads of the odd ones and rewrites of the even
 * ones, mixed.
 */
static void run_batches(unsigned int nr, size_t len, uint64_t base)
{
	struct dio_request *r = calloc(nr, sizeof(*r)), **rp = calloc(nr, sizeof(*rp));
	uint8_t *w = tl_xalloc(nr * len, 0), *b = tl_xalloc(nr * len, 0), *x = tl_xalloc(nr * len, 0);
	unsigned int i;

	assert_non_null(r);
	assert_non_null(rp);
	for (i = 0; i < nr; i++) {
		tl_fill(w + i * len, len, (uint64_t)nr << 32 | i);
		dio_req_prep_write(&r[i], d.h, w + i * len, len, base + i * len);
		r[i].cookie = i;
		r[i].result = SENTINEL;
		rp[i] = &r[i];
	}
	assert_int_equal(tl_dio_submit(d.ctx, rp, nr), nr);
	collect_exactly(d.ctx, rp, nr);
	for (i = 0; i < nr; i++) {
		assert_int_equal(r[i].result, len);
		assert_int_equal(r[i].cookie, i);
		dio_req_prep_read(&r[i], d.h, b + i * len, len, base + i * len);
	}
	assert_int_equal(tl_dio_submit(d.ctx, rp, nr), nr);
	assert_int_equal(tl_dio_wait(d.ctx, rp, nr, NULL), nr);
	for (i = 0; i < nr; i++)
		assert_int_equal(r[i].result, len);
	check_same(w, b, nr * len, "batch read");
	xpread(x, nr * len, base);
	check_same(w, x, nr * len, "batch write, O_DIRECT");

	/* Mixed: even ones write new data, odd ones read the old. */
	memset(b, 0, nr * len);
	for (i = 0; i < nr; i++) {
		if (i % 2) {
			dio_req_prep_read(&r[i], d.h, b + i * len, len,
					  base + i * len);
		} else {
			tl_fill(w + i * len, len, (uint64_t)nr << 40 | i);
			dio_req_prep_write(&r[i], d.h, w + i * len, len,
					   base + i * len);
		}
	}
	assert_int_equal(tl_dio_submit(d.ctx, rp, nr), nr);
	collect_exactly(d.ctx, rp, nr);
	for (i = 0; i < nr; i++) {
		assert_int_equal(r[i].result, len);
		if (i % 2)
			check_same(w + i * len, b + i * len, len, "mixed read");
	}
	xpread(x, nr * len, base);
	check_same(w, x, nr * len, "mixed batch, O_DIRECT");
	free(r);
	free(rp);
	free(w);
	free(b);
	free(x);
}

static void test_batches(void **state)
{
	run_batches(1, d.lbs, 0);
	run_batches(64, 16 * KiB, 1 * MiB);
	run_batches(1024, 4 * KiB, 8 * MiB);
}

static void test_flush_fua(void **state)
{
	struct dio_request r[3], *rp[3] = { &r[0], &r[1], &r[2] };
	uint8_t *w = tl_xalloc(8192, 0), *b = tl_xalloc(8192, 0);

	tl_fill(w, 8192, 77);
	dio_req_prep_write(&r[0], d.h, w, 8192, 5 * MiB);
	r[0].flags |= DIO_REQ_FUA;
	dio_req_prep_flush(&r[1], d.h);
	dio_req_prep_write(&r[2], d.h, w, 4096, 6 * MiB);
	r[0].result = r[1].result = r[2].result = SENTINEL;
	assert_int_equal(tl_dio_submit(d.ctx, rp, 3), 3);
	assert_int_equal(tl_dio_wait(d.ctx, rp, 3, NULL), 3);
	assert_int_equal(r[0].result, 8192);
	assert_int_equal(r[1].result, 0);
	assert_int_equal(r[2].result, 4096);
	xpread(b, 8192, 5 * MiB);
	check_same(w, b, 8192, "FUA write");
	/* FUA is for writes; a flush carries nothing. */
	dio_req_prep_read(&r[0], d.h, b, 4096, 0);
	r[0].flags |= DIO_REQ_FUA;
	assert_int_equal(submit1(&r[0]), -EINVAL);
	dio_req_prep_flush(&r[1], d.h);
	r[1].flags = DIO_REQ_FUA;
	assert_int_equal(submit1(&r[1]), -EINVAL);
	dio_req_prep_flush(&r[1], d.h);
	r[1].len = 4096;
	assert_int_equal(submit1(&r[1]), -EINVAL);
	dio_req_prep_flush(&r[1], d.h);
	r[1].offset = 4096;
	assert_int_equal(submit1(&r[1]), -EINVAL);
	free(w);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_features, setup_sd512),
		TD("roundtrip_sd512", test_roundtrip, setup_sd512),
		TD("edges_sd512", test_edges, setup_sd512),
		TD("iovec_sd512", test_iovec, setup_sd512),
		TD("batches_sd512", test_batches, setup_sd512),
		T(test_flush_fua, setup_sd512),
		TD("roundtrip_sd4k", test_roundtrip, setup_sd4k),
		TD("edges_sd4k", test_edges, setup_sd4k),
		TD("iovec_sd4k", test_iovec, setup_sd4k),
		TD("batches_sd4k", test_batches, setup_sd4k),
		TD("roundtrip_nvme1", test_roundtrip, setup_nvme1),
		TD("iovec_nvme1", test_iovec, setup_nvme1),
		TD("batches_nvme1", test_batches, setup_nvme1),
		TD("roundtrip_nvme2", test_roundtrip, setup_nvme2),
		TD("edges_nvme2", test_edges, setup_nvme2),
		TD("iovec_nvme2", test_iovec, setup_nvme2),
		T(test_all_freed_and_unload, NULL),
	};

	rng = tl_seed("DIO_SEED");
	return IO_RUN("io_data", tests);
}
