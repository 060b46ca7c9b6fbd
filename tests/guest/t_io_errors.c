// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Batched direct I/O, requests refused: alignment (and QUERY's
 * dma_alignment), bad fields, past the end, batch sizes, EFAULT for every
 * pointer (PI buffers too), results that cannot be written, a bad request
 * in the middle of a batch, a request in flight submitted again (EBUSY),
 * handles not there, revoked or read-only; every one with its exact
 * errno.
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

/*
 * QUERY's dma_alignment is enough for I/O: with PI it keeps protection
 * intervals from straddling pages.
 */
static void test_query_alignment(void **state)
{
	print_message("# %s: dma_alignment %u, pi_interval %u, needed %u\n",
		      d.path, d.q.dma_alignment, d.q.pi_interval, d.align);
	assert_int_equal(d.q.dma_alignment, d.align);
}

/* Offsets, lengths and buffers the device cannot take. */
static void test_bad_alignment(void **state)
{
	size_t lbs = d.lbs;
	uint8_t *buf = tl_xalloc(8 * 4096, 0);
	struct iovec iov[3];
	struct dio_request r;

	dio_req_prep_read(&r, d.h, buf, lbs, 1);
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_read(&r, d.h, buf, lbs, lbs / 2);
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_write(&r, d.h, buf, lbs - 1, 0);
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_write(&r, d.h, buf, lbs + 1, 0);
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_write(&r, d.h, buf, 0, 0);
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_write(&r, d.h, buf, 64 * MiB + lbs, 0);
	assert_int_equal(submit1(&r), -EINVAL);
	/* Buffer below the DMA alignment; at the alignment it works. */
	assert_true(d.align >= 2);
	if (d.q.dma_alignment < d.align) {
		/* PI: a protection interval may not straddle a page. */
		dio_req_prep_write(&r, d.h, buf + d.q.dma_alignment, lbs, 0);
		assert_int_equal(submit1(&r), -EINVAL);
	}
	dio_req_prep_read(&r, d.h, buf + 1, lbs, 0);
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_write(&r, d.h, buf + d.align / 2, lbs, 0);
	assert_int_equal(submit1(&r), -EINVAL);
	tl_fill(buf + d.align, lbs, 31);
	assert_int_equal(rw1(DIO_OP_WRITE, d.h, buf + d.align, lbs, 4 * MiB), lbs);
	assert_int_equal(rw1(DIO_OP_READ, d.h, buf + 4096 * 2 + d.align, lbs,
			     4 * MiB), lbs);
	check_same(buf + d.align, buf + 4096 * 2 + d.align, lbs,
		   "DMA-aligned buffer");
	/* An iovec whose segments are not each a block multiple. */
	iov[0].iov_base = buf;
	iov[0].iov_len = lbs / 2;
	iov[1].iov_base = buf + 4096;
	iov[1].iov_len = lbs / 2;
	dio_req_prep_writev(&r, d.h, iov, 2, 0);
	assert_int_equal(submit1(&r), -EINVAL);
	/* An iovec segment at an address below the DMA alignment. */
	iov[0].iov_base = buf;
	iov[0].iov_len = lbs;
	iov[1].iov_base = buf + 4096 + 1;
	iov[1].iov_len = lbs;
	dio_req_prep_readv(&r, d.h, iov, 2, 0);
	assert_int_equal(submit1(&r), -EINVAL);
	/* Empty segments do not matter; all empty is no I/O. */
	iov[1].iov_len = 0;
	iov[2].iov_base = buf + 8192;
	iov[2].iov_len = lbs;
	assert_int_equal(rw1(DIO_OP_WRITE, d.h, buf + 16384, 2 * lbs, 4 * MiB),
			 2 * lbs);
	dio_req_prep_readv(&r, d.h, iov, 3, 4 * MiB);
	assert_int_equal(submit1(&r), 1);
	assert_int_equal(tl_dio_wait(d.ctx, (struct dio_request *[]){ &r }, 1, NULL), 1);
	assert_int_equal(r.result, 2 * lbs);
	iov[0].iov_len = iov[2].iov_len = 0;
	dio_req_prep_readv(&r, d.h, iov, 3, 0);
	assert_int_equal(submit1(&r), -EINVAL);
	free(buf);
}

/* Fields that must be zero or known. */
static void test_bad_fields(void **state)
{
	uint8_t *buf = tl_xalloc(4096, 0);
	struct {
		struct dio_request r;
		uint64_t tail;
	} big;
	struct dio_request r;

	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.opcode = DIO_OP_LAST + 1;
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.flags = 0x8000;
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.pad0 = 1;
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.pad1 = 1;
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.pad2[2] = 1;
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.reserved[1] = 1;
	assert_int_equal(submit1(&r), -EINVAL);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.size = DIO_REQUEST_SIZE_VER0 - 8;
	assert_int_equal(submit1(&r), -EINVAL);
	/* A newer, larger request: a zero tail is fine, any other is not. */
	memset(&big, 0, sizeof(big));
	dio_req_prep_read(&big.r, d.h, buf, 4096, 0);
	big.r.size = sizeof(big);
	assert_int_equal(submit1(&big.r), 1);
	assert_int_equal(tl_dio_wait(d.ctx, (struct dio_request *[]){ &big.r }, 1,
				     NULL), 1);
	assert_int_equal(big.r.result, 4096);
	big.tail = 1;
	assert_int_equal(submit1(&big.r), -E2BIG);
	/* Handles: unknown, and 0. */
	dio_req_prep_read(&r, d.h + 1000, buf, 4096, 0);
	assert_int_equal(submit1(&r), -EBADF);
	dio_req_prep_read(&r, 0, buf, 4096, 0);
	assert_int_equal(submit1(&r), -EBADF);
	free(buf);
}

static void test_past_end(void **state)
{
	uint8_t *buf = tl_xalloc(2 * 4096, 0);
	struct dio_request r;
	size_t lbs = d.lbs;

	dio_req_prep_read(&r, d.h, buf, lbs, d.cap);
	assert_int_equal(submit1(&r), -ENXIO);
	dio_req_prep_write(&r, d.h, buf, 2 * lbs, d.cap - lbs);
	assert_int_equal(submit1(&r), -ENXIO);
	dio_req_prep_read(&r, d.h, buf, lbs, UINT64_MAX - lbs + 1);
	assert_int_equal(submit1(&r), -ENXIO);
	dio_req_prep_read(&r, d.h, buf, lbs, d.cap + 64 * MiB);
	assert_int_equal(submit1(&r), -ENXIO);
	assert_int_equal(rw1(DIO_OP_READ, d.h, buf, lbs, d.cap - lbs), lbs);
	free(buf);
}

static void test_nr_bounds(void **state)
{
	struct dio_request r, *rp = &r;
	uint64_t *many = calloc(4097, sizeof(*many));
	struct dio_submit s = { .size = sizeof(s) };
	struct dio_wait w = { .size = sizeof(w) };
	uint8_t *buf = tl_xalloc(4096, 0);
	int i;

	assert_non_null(many);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	for (i = 0; i < 4097; i++)
		many[i] = (uintptr_t)&r;
	s.reqs = (uintptr_t)many;
	s.nr = 0;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_SUBMIT, &s), -EINVAL);
	s.nr = 4097;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_SUBMIT, &s), -EINVAL);
	s.nr = 1;
	s.reserved[0] = 1;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_SUBMIT, &s), -EINVAL);
	s.reserved[0] = 0;
	s.size = DIO_SUBMIT_SIZE_VER0 - 8;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_SUBMIT, &s), -EINVAL);
	/* Nothing got in. */
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, &ts_zero), -ENOENT);

	w.reqs = (uintptr_t)many;
	w.nr = 0;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_WAIT, &w), -EINVAL);
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_COLLECT, &w), -EINVAL);
	w.nr = 4097;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_WAIT, &w), -EINVAL);
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_COLLECT, &w), -EINVAL);
	w.nr = 2;
	w.min_nr = 3;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_COLLECT, &w), -EINVAL);
	w.min_nr = 1;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_WAIT, &w), -EINVAL);
	w.min_nr = 0;
	w.pad = 1;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_COLLECT, &w), -EINVAL);
	free(many);
	free(buf);
}

/* A page that is reserved but not accessible. */
static void *noaccess_page(void)
{
	void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	assert_true(p != MAP_FAILED);
	return p;
}

/*
 * SUBMIT of 40 requests whose pointer array runs into an unreadable page
 * after @good pointers (SUBMIT reads the array 32 pointers at a time):
 * the @good before it are queued, and SUBMIT says so.
 */
static void array_into_fault(int good)
{
	struct dio_request *r = tl_xalloc(40 * sizeof(*r), 0), **rp, *got[40];
	uint8_t *buf = tl_xalloc(40 * 4096, 0), *two;

	two = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(two != MAP_FAILED);
	assert_int_equal(mprotect(two + 4096, 4096, PROT_NONE), 0);
	rp = (struct dio_request **)(two + 4096) - good;
	for (int i = 0; i < good; i++) {
		dio_req_prep_read(&r[i], d.h, buf + i * 4096, 4096, i * 4096);
		rp[i] = &r[i];
	}
	assert_int_equal(tl_dio_submit(d.ctx, rp, 40), good);
	assert_int_equal(tl_dio_collect(d.ctx, got, good, 40, NULL), good);
	for (int i = 0; i < good; i++)
		assert_int_equal(r[i].result, 4096);
	munmap(two, 8192);
	free(buf);
	free(r);
}

/*
 * COLLECT of 40 done requests into an array that runs into an unreadable
 * page after @good slots: the @good are reported (-EFAULT when none), and
 * the rest stay queued for the next COLLECT, nothing lost.
 */
static void collect_into_fault(int good)
{
	struct dio_request *r = tl_xalloc(40 * sizeof(*r), 0), *rp[40], *got[40], **outp;
	uint8_t *buf = tl_xalloc(40 * 4096, 0), *two;
	struct dio_wait w = { .size = sizeof(w), .nr = 40, .min_nr = 40,
			      .timeout_ns = DIO_WAIT_FOREVER };
	int seen = 0;

	two = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(two != MAP_FAILED);
	assert_int_equal(mprotect(two + 4096, 4096, PROT_NONE), 0);
	outp = (struct dio_request **)(two + 4096) - good;
	for (int i = 0; i < 40; i++) {
		dio_req_prep_read(&r[i], d.h, buf + i * 4096, 4096, i * 4096);
		r[i].result = SENTINEL;
		rp[i] = &r[i];
	}
	assert_int_equal(tl_dio_submit(d.ctx, rp, 40), 40);
	/* min_nr 40: all are done before the first is claimed. */
	w.reqs = (uintptr_t)outp;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_COLLECT, &w), good ? good : -EFAULT);
	for (int i = 0; i < good; i++)
		assert_int_equal(outp[i]->result, 4096);
	for (int i = 0; i < 40; i++)
		seen += r[i].result == 4096;
	assert_int_equal(seen, good);
	assert_int_equal(tl_dio_collect(d.ctx, got, 40 - good, 40, &ts_zero), 40 - good);
	for (int i = 0; i < 40; i++)
		assert_int_equal(r[i].result, 4096);
	munmap(two, 8192);
	free(buf);
	free(r);
}

static void test_efault(void **state)
{
	struct dio_submit s = { .size = sizeof(s), .nr = 1 };
	struct dio_wait w = { .size = sizeof(w), .nr = 1 };
	uint8_t *buf = tl_xalloc(8192, 0), *bad = noaccess_page(), *half;
	struct dio_request r, *rp = &r, *got[2];
	struct iovec iov[2], *iov_bad = (struct iovec *)bad;
	uint64_t addr;

	/* The array of request pointers. */
	s.reqs = 0;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_SUBMIT, &s), -EFAULT);
	s.reqs = (uintptr_t)bad;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_SUBMIT, &s), -EFAULT);
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_SUBMIT, NULL), -EFAULT);
	/* The request itself. */
	assert_int_equal(tl_dio_submit(d.ctx, (struct dio_request *[]){ NULL }, 1),
			 -EFAULT);
	assert_int_equal(tl_dio_submit(d.ctx, (struct dio_request *[]){
				(struct dio_request *)bad }, 1), -EFAULT);
	/* The data buffer, and an iovec array or segment. */
	dio_req_prep_write(&r, d.h, NULL, 4096, 0);
	assert_int_equal(submit1(&r), -EFAULT);
	dio_req_prep_write(&r, d.h, bad, 4096, 0);
	assert_int_equal(submit1(&r), -EFAULT);
	dio_req_prep_read(&r, d.h, bad, 4096, 0);
	assert_int_equal(submit1(&r), -EFAULT);
	dio_req_prep_readv(&r, d.h, iov_bad, 2, 0);
	assert_int_equal(submit1(&r), -EFAULT);
	dio_req_prep_readv(&r, d.h, NULL, 2, 0);
	assert_int_equal(submit1(&r), -EFAULT);
	iov[0].iov_base = bad;
	iov[0].iov_len = 4096;
	iov[1].iov_base = buf;
	iov[1].iov_len = 4096;
	dio_req_prep_writev(&r, d.h, iov, 2, 0);
	assert_int_equal(submit1(&r), -EFAULT);
	/* None of them stayed. */
	assert_int_equal(tl_dio_collect(d.ctx, got, 0, 2, &ts_zero), 0);
	assert_int_equal(tl_slab_active("dio_kreq"), 0);

	/*
	 * Half the buffer mapped: the first bios go, the rest cannot be
	 * built, and the request fails as a whole.
	 */
	half = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(half != MAP_FAILED);
	memset(half, 1, 1 * MiB);
	assert_int_equal(mprotect(half + 1 * MiB, 1 * MiB, PROT_NONE), 0);
	dio_req_prep_read(&r, d.h, half, 2 * MiB, 0);
	r.result = SENTINEL;
	assert_int_equal(submit1(&r), 1);
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, -EFAULT);
	munmap(half, 2 * MiB);

	/* COLLECT into an unusable array: the completion stays queued. */
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.result = SENTINEL;
	assert_int_equal(submit1(&r), 1);
	w.reqs = (uintptr_t)bad;
	w.min_nr = 1;
	w.timeout_ns = DIO_WAIT_FOREVER;
	/* The kernel cannot write there (a sanity check of the test). */
	assert_int_equal(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, bad), -1);
	assert_int_equal(errno, EFAULT);
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_COLLECT, &w), -EFAULT);
	assert_int_equal(r.result, SENTINEL);
	w.reqs = 0;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_COLLECT, &w), -EFAULT);
	assert_int_equal(tl_dio_collect(d.ctx, got, 1, 2, NULL), 1);
	assert_ptr_equal(got[0], &r);
	assert_int_equal(r.result, 4096);
	/* WAIT with an unusable list. */
	w.reqs = (uintptr_t)bad;
	w.min_nr = 0;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_WAIT, &w), -EFAULT);
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_WAIT, NULL), -EFAULT);
	/* The address list is read, and only read. */
	addr = (uintptr_t)&r;
	w.reqs = (uintptr_t)&addr;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_WAIT, &w), -ENOENT);
	munmap(bad, 4096);
	free(buf);
	/* A request array that runs into a page it cannot read. */
	array_into_fault(35);
	array_into_fault(32);
	array_into_fault(1);
	collect_into_fault(39);
	collect_into_fault(1);
	collect_into_fault(0);
}

/*
 * A request whose struct cannot take its result any more (read-only
 * after SUBMIT): -EFAULT, and it does not block the completions behind it.
 */
/*
 * PI buffers the module cannot use: one it cannot read (a write with the
 * caller's PI) or write back (a read that returns PI) fails the request
 * with EFAULT at SUBMIT, before anything reaches the device; an iovec
 * request's PI length must be that of its data, and not 0 or above the
 * 64 KiB a request may bounce.
 */
static void test_pi_buffer_faults(void **state)
{
	unsigned int n = 4096 / d.q.pi_interval, md = d.q.pi_md_size;
	uint8_t *buf = tl_xalloc(4096, 0), *pi = tl_xalloc(128 * 1024, 0);
	uint8_t *bad = noaccess_page();
	struct iovec iov = { .iov_base = buf, .iov_len = 4096 };
	struct dio_request r;

	(void)state;
	assert_true(n >= 1 && md >= 8);
	dio_req_prep_write(&r, d.h, buf, 4096, 0);
	r.flags |= DIO_REQ_PI;
	r.pi_buf = (uintptr_t)bad;
	r.pi_len = n * md;
	assert_int_equal(submit1(&r), -EFAULT);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.flags |= DIO_REQ_PI;
	r.pi_buf = (uintptr_t)bad;
	r.pi_len = n * md;
	assert_int_equal(submit1(&r), -EFAULT);

	dio_req_prep_readv(&r, d.h, &iov, 1, 0);
	r.flags |= DIO_REQ_PI;
	r.pi_buf = (uintptr_t)pi;
	r.pi_len = 0;
	assert_int_equal(submit1(&r), -EINVAL);
	r.pi_len = 64 * 1024 + md;
	assert_int_equal(submit1(&r), -EINVAL);
	r.pi_len = (n + 1) * md;
	assert_int_equal(submit1(&r), -EINVAL);
	/* The right length works, and nothing of the refused ones stayed. */
	r.pi_len = n * md;
	assert_int_equal(submit1(&r), 1);
	assert_int_equal(tl_dio_wait(d.ctx, (struct dio_request *[]){ &r }, 1, NULL), 1);
	assert_int_equal(r.result, 4096);
	assert_int_equal(tl_slab_active("dio_kreq"), 0);
	free(buf);
	free(pi);
	munmap(bad, 4096);
}

static void test_result_unwritable(void **state)
{
	struct dio_request *r = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct dio_request other, *got[2];
	uint8_t *buf = tl_xalloc(8192, 0);
	struct pollfd pfd = { .fd = d.ctx, .events = POLLIN };

	assert_true(r != MAP_FAILED);
	dio_req_prep_read(r, d.h, buf, 4096, 0);
	r->result = SENTINEL;
	assert_int_equal(submit1(r), 1);
	assert_int_equal(poll(&pfd, 1, 10000), 1);
	assert_int_equal(mprotect(r, 4096, PROT_READ), 0);
	assert_int_equal(tl_dio_wait(d.ctx, &r, 1, NULL), -EFAULT);
	assert_int_equal(tl_dio_wait(d.ctx, &r, 1, &ts_zero), -ENOENT);
	assert_int_equal(tl_slab_active("dio_kreq"), 0);
	/* The same through COLLECT, with a good one done behind it. */
	assert_int_equal(mprotect(r, 4096, PROT_READ | PROT_WRITE), 0);
	assert_int_equal(r->result, SENTINEL);
	assert_int_equal(submit1(r), 1);
	assert_int_equal(poll(&pfd, 1, 10000), 1);
	assert_int_equal(mprotect(r, 4096, PROT_READ), 0);
	dio_req_prep_read(&other, d.h, buf + 4096, 4096, 4096);
	other.result = SENTINEL;
	assert_int_equal(submit1(&other), 1);
	assert_int_equal(tl_dio_collect(d.ctx, got, 2, 2, NULL), -EFAULT);
	assert_ptr_equal(got[0], r);
	assert_int_equal(tl_dio_collect(d.ctx, got, 1, 2, NULL), 1);
	assert_ptr_equal(got[0], &other);
	assert_int_equal(other.result, 4096);
	assert_int_equal(tl_slab_active("dio_kreq"), 0);
	munmap(r, 4096);
	free(buf);
}

/* A bad request stops the batch: those before it go, the rest are untouched. */
static void test_bad_in_middle(void **state)
{
	enum { N = 6 };
	struct dio_request r[N], *rp[N], *got[N];
	uint8_t *w = tl_xalloc(N * 4096, 0), *x = tl_xalloc(N * 4096, 0);
	uint8_t *zero = tl_xalloc(N * 4096, 0);
	struct timespec ts = ts_ms(100);
	int i;

	for (i = 0; i < N; i++) {
		tl_fill(w + i * 4096, 4096, 900 + i);
		dio_req_prep_write(&r[i], d.h, w + i * 4096, 4096,
				   10 * MiB + i * 4096);
		r[i].result = SENTINEL;
		rp[i] = &r[i];
	}
	xpwrite(x, N * 4096, 10 * MiB);		/* zeroes */
	r[2].offset = 10 * MiB + 2 * 4096 + 1;
	assert_int_equal(tl_dio_submit(d.ctx, rp, N), 2);
	assert_int_equal(tl_dio_wait(d.ctx, rp, 2, NULL), 2);
	assert_int_equal(r[0].result, 4096);
	assert_int_equal(r[1].result, 4096);
	for (i = 2; i < N; i++)
		assert_int_equal(r[i].result, SENTINEL);
	assert_int_equal(tl_dio_wait(d.ctx, rp + 3, 1, &ts_zero), -ENOENT);
	/* Nothing was queued to complete: 0 after 100 ms, however late. */
	assert_int_equal(tl_dio_collect(d.ctx, got, 1, N, &ts), 0);
	xpread(x, N * 4096, 10 * MiB);
	check_same(w, x, 2 * 4096, "requests before the bad one");
	check_same(zero, x + 2 * 4096, (N - 2) * 4096, "requests after it");
	/* A NULL in the list stops it the same way. */
	r[2].offset = 10 * MiB + 2 * 4096;
	rp[3] = NULL;
	assert_int_equal(tl_dio_submit(d.ctx, rp + 2, 3), 1);
	assert_int_equal(tl_dio_collect(d.ctx, got, 1, N, NULL), 1);
	assert_ptr_equal(got[0], &r[2]);
	assert_int_equal(r[2].result, 4096);
	assert_int_equal(r[4].result, SENTINEL);
	free(w);
	free(x);
	free(zero);
}

/* A request in flight cannot be submitted again; a reported one can. */
static void test_ebusy(void **state)
{
	struct dio_request *r = tl_xalloc(4096, 0), *rp[2], *got[2];
	uint8_t *buf = tl_xalloc(8192, 0);

	dio_req_prep_read(&r[0], d.h, buf, 4096, 0);
	dio_req_prep_read(&r[1], d.h, buf + 4096, 4096, 0);
	rp[0] = &r[0];
	rp[1] = &r[1];
	assert_int_equal(tl_dio_submit(d.ctx, rp, 1), 1);
	assert_int_equal(tl_dio_submit(d.ctx, rp, 1), -EBUSY);
	assert_int_equal(tl_dio_submit(d.ctx, (struct dio_request *[]){ &r[1], &r[0] },
				       2), 1);
	/* In one batch twice. */
	assert_int_equal(tl_dio_wait(d.ctx, rp, 2, NULL), 2);
	assert_int_equal(tl_dio_submit(d.ctx, (struct dio_request *[]){ &r[0], &r[0] },
				       2), 1);
	assert_int_equal(tl_dio_collect(d.ctx, got, 1, 2, NULL), 1);
	assert_int_equal(r[0].result, 4096);
	/* A struct overlapping one in flight. */
	assert_int_equal(tl_dio_submit(d.ctx, rp, 1), 1);
	dio_req_prep_read((struct dio_request *)((uint8_t *)r + 64), d.h,
			  buf + 4096, 4096, 0);
	assert_int_equal(tl_dio_submit(d.ctx, (struct dio_request *[]){
				(struct dio_request *)((uint8_t *)r + 64) }, 1),
			 -EBUSY);
	assert_int_equal(tl_dio_collect(d.ctx, got, 1, 2, NULL), 1);
	assert_ptr_equal(got[0], &r[0]);
	free(r);
	free(buf);
}

static void test_enoent(void **state)
{
	struct dio_request r[2], *rp[2] = { &r[0], &r[1] };
	uint8_t *buf = tl_xalloc(4096, 0);

	dio_req_prep_read(&r[0], d.h, buf, 4096, 0);
	dio_req_prep_read(&r[1], d.h, buf, 4096, 0);
	assert_int_equal(tl_dio_wait(d.ctx, rp + 1, 1, NULL), -ENOENT);
	assert_int_equal(submit1(&r[0]), 1);
	assert_int_equal(tl_dio_wait(d.ctx, rp, 2, NULL), 1);
	assert_int_equal(r[0].result, 4096);
	/* An address inside a request in flight is not that request. */
	assert_int_equal(submit1(&r[0]), 1);
	assert_int_equal(tl_dio_wait(d.ctx, (struct dio_request *[]){
				(struct dio_request *)((uint8_t *)&r[0] + 8) },
				     1, &ts_zero), -ENOENT);
	assert_int_equal(tl_dio_wait(d.ctx, rp, 1, NULL), 1);
	free(buf);
}

/* Revoking a handle stops new requests; those in flight complete. */
static void test_revoked_handle(void **state)
{
	struct dio_request r[3], *rp[3] = { &r[0], &r[1], &r[2] };
	uint8_t *w = tl_xalloc(8192, 0), *b = tl_xalloc(8192, 0);

	tl_fill(w, 8192, 4242);
	/*
	 * 300 ms: the two are most likely still in flight at the revocation;
	 * done already, they must be reported the same (results are written
	 * when reported, not when done): no verdict depends on it.
	 */
	sd_ndelay(300000000);
	dio_req_prep_write(&r[0], d.h, w, 8192, 12 * MiB);
	dio_req_prep_read(&r[1], d.h, b, 4096, 0);
	r[0].result = r[1].result = SENTINEL;
	assert_int_equal(tl_dio_submit(d.ctx, rp, 2), 2);
	assert_int_equal(sys_dio_close(d.ctx, d.h), 0);
	dio_req_prep_read(&r[2], d.h, b + 4096, 4096, 0);
	assert_int_equal(submit1(&r[2]), -EBADF);
	assert_int_equal(r[0].result, SENTINEL);
	assert_int_equal(tl_dio_wait(d.ctx, rp, 2, NULL), 2);
	assert_int_equal(r[0].result, 8192);
	assert_int_equal(r[1].result, 4096);
	sd_ndelay(0);
	xpread(b, 8192, 12 * MiB);
	check_same(w, b, 8192, "write in flight at revocation");
	assert_int_equal(submit1(&r[2]), -EBADF);
	/* Open it again for the tests that follow. */
	d.h = sys_dio_open(d.ctx, d.fd, 0);
	assert_true(d.h >= 1);
	free(w);
	free(b);
}

static void test_readonly_handle(void **state)
{
	int fd = tl_fd_keep(open(d.path, O_RDONLY | O_DIRECT | O_CLOEXEC));
	int ctx = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE)), h;
	struct dio_request r, *rp = &r;
	uint8_t *buf = tl_xalloc(2 * 4096, 0);

	assert_true(fd >= 0 && ctx >= 0);
	h = sys_dio_open(ctx, fd, DIO_OPEN_NOCLAIM);
	assert_true(h >= 1);
	tl_fill(buf, 4096, 99);
	dio_req_prep_write(&r, h, buf, 4096, 0);
	assert_int_equal(tl_dio_submit(ctx, &rp, 1), -EBADF);
	dio_req_prep_writev(&r, h, &(struct iovec){ buf, 4096 }, 1, 0);
	assert_int_equal(tl_dio_submit(ctx, &rp, 1), -EBADF);
	dio_req_prep_read(&r, h, buf, 4096, 0);
	assert_int_equal(tl_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(tl_dio_wait(ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, 4096);
	xpread(buf + 4096, 4096, 0);
	check_same(buf, buf + 4096, 4096, "read through a read-only handle");
	/* Another descriptor's requests are not this one's. */
	assert_int_equal(tl_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, &ts_zero), -ENOENT);
	assert_int_equal(tl_dio_wait(ctx, &rp, 1, NULL), 1);
	tl_fd_close(ctx);
	tl_fd_close(fd);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		TD("bad_alignment_sd512", test_bad_alignment, setup_sd512),
		TD("query_alignment_sd512", test_query_alignment, setup_sd512),
		T(test_bad_fields, setup_sd512),
		TD("past_end_sd512", test_past_end, setup_sd512),
		T(test_nr_bounds, setup_sd512),
		T(test_efault, setup_sd512),
		TD("pi_buffer_faults_sd512", test_pi_buffer_faults, setup_sd512),
		T(test_result_unwritable, setup_sd512),
		T(test_bad_in_middle, setup_sd512),
		T(test_ebusy, setup_sd512),
		T(test_enoent, setup_sd512),
		T(test_revoked_handle, setup_sd512),
		T(test_readonly_handle, setup_sd512),
		TD("bad_alignment_sd4k", test_bad_alignment, setup_sd4k),
		TD("past_end_sd4k", test_past_end, setup_sd4k),
		TD("bad_alignment_nvme1", test_bad_alignment, setup_nvme1),
		TD("past_end_nvme2", test_past_end, setup_nvme2),
		TD("query_alignment_nvme2", test_query_alignment, setup_nvme2),
		TD("pi_buffer_faults_nvme2", test_pi_buffer_faults, setup_nvme2),
		T(test_all_freed_and_unload, NULL),
	};

	return IO_RUN("io_errors", tests);
}
