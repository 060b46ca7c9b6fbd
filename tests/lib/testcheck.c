// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Helpers for the cmocka test programs (testlib.h, "Calls that show their
 * values"): they fail the test or return -errno, so that an assertion on
 * their value shows which error a call gave.  Kept out of testlib.c, which
 * tests/kmodctl links without cmocka and libdioctl.
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
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"
#include "tl_dev.h"

void *tl_xalloc(size_t len, int byte)
{
	void *p = tl_alloc(len, byte);

	assert_non_null(p);
	return p;
}

static int tracked_fds[32];
static int nr_tracked_fds;

int tl_fd_keep(int fd)
{
	if (fd < 0)
		return fd;
	assert_true(nr_tracked_fds < (int)(sizeof(tracked_fds) / sizeof(tracked_fds[0])));
	tracked_fds[nr_tracked_fds++] = fd;
	return fd;
}

int tl_fd_track(int fd)
{
	assert_true(fd >= 0);
	return tl_fd_keep(fd);
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

void tl_dev_open(struct tl_dev *d, int ctx, const char *path, unsigned int oflags,
		 size_t len)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->path, sizeof(d->path), "%s", path);
	d->own_ctx = ctx < 0;
	d->ctx = d->own_ctx ? tl_fd_track(sys_dio_init(0, DIO_PRIVATE)) : ctx;
	d->fd = tl_fd_track(open(path, O_RDWR));
	d->h = sys_dio_open(d->ctx, d->fd, oflags);
	assert_true(d->h >= 1);
	assert_int_equal(sys_dio_query(d->ctx, d->h, &d->q), 0);
	assert_int_equal(dio_pi_profile_from_query(&d->q, &d->p), 0);
	d->len = len;
	d->pilen = len / d->q.pi_interval * d->q.pi_md_size;
	d->data = tl_xalloc(len, 0);
	d->back = tl_xalloc(len, 0);
	d->pi = tl_xalloc(d->pilen, 0);
	d->pi2 = tl_xalloc(d->pilen, 0);
}

void tl_dev_close(struct tl_dev *d)
{
	free(d->data);
	free(d->back);
	free(d->pi);
	free(d->pi2);
	tl_fd_close(d->fd);
	if (d->own_ctx)
		tl_fd_close(d->ctx);
}

int tl_dev_run(struct tl_dev *d, struct dio_request *r)
{
	struct dio_request *rp = r;

	if (sys_dio_submit(d->ctx, &rp, 1) != 1)
		return -errno;
	assert_int_equal(sys_dio_wait(d->ctx, &rp, 1, NULL), 1);
	return 0;
}

unsigned char *tl_dev_tuple(const struct tl_dev *d, unsigned char *pi, size_t i)
{
	return pi + i * d->q.pi_md_size + d->q.pi_offset;
}
