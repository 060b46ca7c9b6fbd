// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Helpers for the cmocka test programs (testlib.h, "Calls that show their
 * values"): they fail the test or return -errno, so that an assertion on
 * their value shows which error a call gave.  Kept out of testlib.c, which
 * tests/kmodctl links without cmocka and libdioctl.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <time.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

void *tl_xalloc(size_t len, int byte)
{
	void *p = tl_alloc(len, byte);

	assert_non_null(p);
	return p;
}

int tl_errno(int ret)
{
	return ret < 0 ? -errno : ret;
}

int tl_ioctl(int fd, unsigned long cmd, void *arg)
{
	return tl_errno(ioctl(fd, cmd, arg));
}

int tl_dio_submit(int ctx, struct dio_request **r, unsigned int nr)
{
	return tl_errno(sys_dio_submit(ctx, r, nr));
}

int tl_dio_wait(int ctx, struct dio_request **r, unsigned int nr,
		const struct timespec *ts)
{
	return tl_errno(sys_dio_wait(ctx, r, nr, ts));
}

int tl_dio_collect(int ctx, struct dio_request **r, unsigned int min_nr,
		   unsigned int nr, const struct timespec *ts)
{
	return tl_errno(sys_dio_collect(ctx, r, min_nr, nr, ts));
}
