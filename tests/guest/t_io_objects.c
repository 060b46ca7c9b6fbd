// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Batched direct I/O, the module's objects: one kernel object per request,
 * the structs kept for reuse bounded, a descriptor closed with requests in
 * flight.
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

/* One slab object per request, and none left once reported. */
static void test_one_object_per_request(void **state)
{
	enum { N = 200 };
	struct dio_request *r = calloc(N, sizeof(*r)), **rp = calloc(N, sizeof(*rp));
	uint8_t *buf = tl_xalloc(N * 4096, 0);
	int i;

	assert_int_equal(tl_slab_active("dio_kreq"), 0);
	for (i = 0; i < N; i++) {
		dio_req_prep_read(&r[i], d.h, buf + i * 4096, 4096, i * 4096);
		rp[i] = &r[i];
	}
	assert_int_equal(tl_dio_submit(d.ctx, rp, N / 2), N / 2);
	assert_int_equal(tl_slab_active("dio_kreq"), N / 2);
	assert_int_equal(tl_dio_submit(d.ctx, rp + N / 2, N / 2), N / 2);
	assert_int_equal(tl_slab_active("dio_kreq"), N);
	assert_int_equal(tl_dio_wait(d.ctx, rp, N / 2, NULL), N / 2);
	assert_int_equal(tl_slab_active("dio_kreq"), N / 2);
	collect_exactly(d.ctx, rp + N / 2, N / 2);
	assert_int_equal(tl_slab_active("dio_kreq"), 0);
	free(r);
	free(rp);
	free(buf);
}

/* The request structs a descriptor keeps for reuse (debugfs kept_kreqs). */
static long kept_kreqs(void)
{
	char *v = tl_sysfs_read("/sys/kernel/debug/dio_batch/kept_kreqs");
	long n;

	assert_non_null(v);
	n = strtol(v, NULL, 10);
	free(v);
	return n;
}

/*
 * A descriptor keeps at most 64 of its reported requests' structs, reuses
 * them before it allocates, and frees them when it goes.
 */
static void test_kept_structs_bounded(void **state)
{
	enum { N = 200 };
	struct dio_request *r = calloc(N, sizeof(*r)), **rp = calloc(N, sizeof(*rp));
	uint8_t *buf = tl_xalloc(N * 4096, 0);
	long kept0 = kept_kreqs(), objs0 = tl_slab_active("dio_kreq") + kept0;
	int ctx = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE)), h, i, round;

	assert_true(ctx >= 0);
	h = sys_dio_open(ctx, d.fd, DIO_OPEN_NOCLAIM);
	assert_true(h >= 1);
	for (i = 0; i < N; i++) {
		dio_req_prep_read(&r[i], h, buf + i * 4096, 4096, i * 4096);
		rp[i] = &r[i];
	}
	for (round = 0; round < 3; round++) {
		assert_int_equal(tl_dio_submit(ctx, rp, N), N);
		/* The kept ones went to the new requests first. */
		assert_int_equal(kept_kreqs(), kept0);
		assert_int_equal(tl_slab_active("dio_kreq") + kept_kreqs(), objs0 + N);
		collect_exactly(ctx, rp, N);
		for (i = 0; i < N; i++)
			assert_int_equal(r[i].result, 4096);
		/* 64 kept, the other 136 freed; none alive. */
		assert_int_equal(kept_kreqs(), kept0 + 64);
		assert_int_equal(tl_slab_active("dio_kreq"), objs0 - kept0);
		assert_int_equal(tl_slab_active("dio_kreq") + kept_kreqs(), objs0 + 64);
	}
	tl_fd_close(ctx);
	/*
	 * The descriptor's memory goes with its last reference: at once, or
	 * from a work item; up to 5 s (x tl_slow_factor()).
	 */
	for (i = 0; i < 50 * tl_slow_factor() && kept_kreqs() != kept0; i++)
		usleep(100000);
	assert_int_equal(kept_kreqs(), kept0);
	assert_int_equal(tl_slab_active("dio_kreq") + kept_kreqs(), objs0);
	free(r);
	free(rp);
	free(buf);
}

/* Closing a descriptor with requests in flight: they are reaped. */
static void test_close_with_inflight(void **state)
{
	enum { N = 256 };
	struct dio_request *r = calloc(N, sizeof(*r)), **rp = calloc(N, sizeof(*rp));
	uint8_t *buf = tl_xalloc(N * 4096, 0);
	long files = tl_slab_active("dio_file");
	int ctx = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE)), h, i;

	assert_true(ctx >= 0);
	h = sys_dio_open(ctx, d.fd, DIO_OPEN_NOCLAIM);
	assert_true(h >= 1);
	assert_int_equal(tl_slab_active("dio_file"), files + 1);
	/*
	 * 200 ms: nothing below needs them in flight (a request is an object
	 * from SUBMIT until it is reported or reaped), but most are when the
	 * descriptor goes; they complete in a few rounds of 200 ms at the
	 * device, well within the 20 s (x tl_slow_factor()) of
	 * tl_slab_reaches().
	 */
	sd_ndelay(200000000);
	for (i = 0; i < N; i++) {
		if (i % 2)
			dio_req_prep_read(&r[i], h, buf + i * 4096, 4096,
					  i * 4096);
		else
			dio_req_prep_write(&r[i], h, buf + i * 4096, 4096,
					   20 * MiB + i * 4096);
		r[i].result = SENTINEL;
		rp[i] = &r[i];
	}
	assert_int_equal(tl_dio_submit(ctx, rp, N), N);
	assert_int_equal(tl_slab_active("dio_kreq"), N);
	tl_fd_close(ctx);
	assert_true(tl_slab_reaches("dio_kreq", 0, 20));
	assert_true(tl_slab_reaches("dio_file", files, 5));
	for (i = 0; i < N; i++)
		assert_int_equal(r[i].result, SENTINEL);
	free(r);
	free(rp);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_one_object_per_request, setup_sd512),
		T(test_kept_structs_bounded, setup_sd512),
		T(test_close_with_inflight, setup_sd512),
		T(test_all_freed_and_unload, NULL),
	};

	return IO_RUN("io_objects", tests);
}
