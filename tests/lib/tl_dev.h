/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A PI device under test for the cmocka programs (testcheck.c): a handle
 * on a block device, its QUERY and PI profile, and buffers for one
 * request's data and PI of @len bytes (t_pi, t_counters).
 */
#ifndef TL_DEV_H
#define TL_DEV_H

#include <stdbool.h>
#include <stddef.h>

#include "dioctl.h"

struct tl_dev {
	char path[64];
	int ctx, fd, h;
	bool own_ctx;		/* made by tl_dev_open(), closed by tl_dev_close() */
	struct dio_query q;
	struct dio_pi_profile p;
	/* len bytes of data, pilen of PI (len's intervals), each zeroed */
	unsigned char *data, *back, *pi, *pi2;
	size_t len, pilen;
};

/*
 * Opens @path (O_RDWR) in context @ctx, or in a private context of its own
 * when @ctx < 0, with DIO_IOC_OPEN's @oflags; queries it and learns its PI
 * profile; the descriptors are tracked (tl_fd_track()).  Fails the test
 * when any of it fails.
 */
void tl_dev_open(struct tl_dev *d, int ctx, const char *path, unsigned int oflags,
		 size_t len);
/* Frees the buffers and closes the descriptors tl_dev_open() opened. */
void tl_dev_close(struct tl_dev *d);
/* One request, submitted and waited for: 0, or SUBMIT's -errno. */
int tl_dev_run(struct tl_dev *d, struct dio_request *r);
/* The PI tuple of interval @i in @pi, @d's metadata layout. */
unsigned char *tl_dev_tuple(const struct tl_dev *d, unsigned char *pi, size_t i);

#endif
