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
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

void *tl_xalloc(size_t len, int byte)
{
	void *p = tl_alloc(len, byte);

	assert_non_null(p);
	return p;
}

static int tracked_fds[16];
static int nr_tracked_fds;

int tl_fd_track(int fd)
{
	assert_true(fd >= 0);
	assert_true(nr_tracked_fds < (int)(sizeof(tracked_fds) / sizeof(tracked_fds[0])));
	tracked_fds[nr_tracked_fds++] = fd;
	return fd;
}

void tl_fd_close(int fd)
{
	for (int i = 0; i < nr_tracked_fds; i++)
		if (tracked_fds[i] == fd)
			tracked_fds[i] = tracked_fds[--nr_tracked_fds];
	close(fd);
}

void tl_fd_close_all(void)
{
	while (nr_tracked_fds)
		close(tracked_fds[--nr_tracked_fds]);
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
