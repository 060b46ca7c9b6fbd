// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/* libdioctl: the sys_dio_* calls, thin wrappers over the ioctls. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "dioctl.h"
#include "devinfo.h"

#define DIO_DEV_PATH	"/dev/" DIO_BATCH_DEVNAME

static int dio_ctl_open(void)
{
	return open(DIO_DEV_PATH, O_RDWR | O_CLOEXEC);
}

/* Run one ioctl on the control device, keeping the ioctl's errno. */
static int dio_ctl_ioctl(unsigned long cmd, void *arg)
{
	int fd = dio_ctl_open(), ret, err;

	if (fd < 0)
		return -1;
	ret = ioctl(fd, cmd, arg);
	err = errno;
	close(fd);
	errno = err;
	return ret;
}

int sys_dio_features(struct dio_features *f)
{
	memset(f, 0, sizeof(*f));
	f->size = sizeof(*f);
	return dio_ctl_ioctl(DIO_IOC_FEATURES, f);
}

int sys_dio_init_mode(uint64_t key, unsigned int flags, mode_t mode)
{
	struct dio_init in = {
		.size = sizeof(in),
		.flags = flags,
		.key = key,
		.mode = mode,
	};

	return dio_ctl_ioctl(DIO_IOC_INIT, &in);
}

int sys_dio_init(uint64_t key, unsigned int flags)
{
	return sys_dio_init_mode(key, flags, 0600);
}

int sys_dio_exit(int ctx)
{
	return close(ctx);
}

int sys_dio_open(int ctx, int fd, unsigned int flags)
{
	struct dio_open o = { .size = sizeof(o), .flags = flags, .fd = fd };

	return ioctl(ctx, DIO_IOC_OPEN, &o);
}

int sys_dio_close(int ctx, int handle)
{
	struct dio_close c = { .size = sizeof(c), .handle = (uint32_t)handle };

	return ioctl(ctx, DIO_IOC_CLOSE, &c);
}

int sys_dio_query(int ctx, int handle, struct dio_query *q)
{
	uint64_t start;
	int saved;

	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->handle = (uint32_t)handle;
	if (ioctl(ctx, DIO_IOC_QUERY, q) < 0)
		return -1;
	/*
	 * A module older than ABI 4 (no DIO_FEAT_PART_START) leaves
	 * part_start_bytes 0, also for a partition: sysfs tells.  From a
	 * newer one 0 means a whole disk, which has no start in sysfs.  A
	 * start sysfs cannot tell leaves 0, as the query of a whole disk.
	 */
	if (!q->part_start_bytes && (q->dev_major || q->dev_minor)) {
		saved = errno;
		if (dio__part_start(q->dev_major, q->dev_minor, &start) == 0)
			q->part_start_bytes = start;
		errno = saved;
	}
	/*
	 * The kernel's profiles, and so the module, call type 2 type 1: ask
	 * the disk (devinfo.c).  Its rules for our purposes are type 1's.
	 */
	if (q->pi_type == 1 && (q->dev_major || q->dev_minor) &&
	    dio__pi_type_of(q->dev_major, q->dev_minor) == 2)
		q->pi_type = 2;
	return 0;
}

int sys_dio_stat(int ctx, struct dio_stat *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return ioctl(ctx, DIO_IOC_STAT, st);
}

int sys_dio_counters(int ctx, int handle, unsigned int flags,
		     struct dio_counters *c)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->flags = flags;
	c->handle = (uint32_t)handle;
	return ioctl(ctx, DIO_IOC_COUNTERS, c);
}

/*
 * The kernel takes arrays of __u64 addresses.  On 64-bit builds an array
 * of pointers is one; elsewhere it is widened (and narrowed back).  A NULL
 * array goes to the kernel as it is, which answers EFAULT; on 32-bit
 * builds an array in unmapped memory faults in the library, as it would
 * in memcpy().
 */
#define DIO_PTRS_ARE_U64 (sizeof(void *) == sizeof(uint64_t))

/* 0 with *out set, or -1 with errno ENOMEM. */
static int dio_widen(struct dio_request **reqs, unsigned int nr, bool copy_in,
		     uint64_t **out)
{
	uint64_t *a;
	unsigned int i;

	*out = (uint64_t *)reqs;
	if (DIO_PTRS_ARE_U64 || !reqs)
		return 0;
	a = calloc(nr ? nr : 1, sizeof(*a));
	if (!a)
		return -1;
	for (i = 0; copy_in && i < nr; i++)
		a[i] = (uintptr_t)reqs[i];
	*out = a;
	return 0;
}

static void dio_narrow(struct dio_request **reqs, uint64_t *a, int n)
{
	int i;

	if ((uint64_t *)reqs == a)
		return;
	for (i = 0; i < n; i++)
		reqs[i] = (struct dio_request *)(uintptr_t)a[i];
}

static void dio_widened_free(struct dio_request **reqs, uint64_t *a)
{
	if ((uint64_t *)reqs != a)
		free(a);
}

static int64_t dio_timeout_ns(const struct timespec *ts)
{
	int64_t sec;

	if (!ts)
		return DIO_WAIT_FOREVER;
	if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L)
		return -2;
	sec = ts->tv_sec;
	/* Saturate: a timeout of centuries is as good as forever. */
	if (sec >= INT64_MAX / 1000000000LL)
		return INT64_MAX;
	return sec * 1000000000LL + ts->tv_nsec;
}

int sys_dio_submit(int ctx, struct dio_request **reqs, unsigned int nr)
{
	struct dio_submit s = { .size = sizeof(s), .nr = nr };
	uint64_t *a;
	int ret, err;

	if (dio_widen(reqs, nr, true, &a))
		return -1;
	s.reqs = (uintptr_t)a;
	ret = ioctl(ctx, DIO_IOC_SUBMIT, &s);
	err = errno;
	dio_widened_free(reqs, a);
	errno = err;
	return ret;
}

static int dio_wait_common(int ctx, unsigned long cmd, struct dio_request **reqs,
			   unsigned int min_nr, unsigned int nr,
			   const struct timespec *timeout)
{
	struct dio_wait w = {
		.size = sizeof(w),
		.nr = nr,
		.min_nr = min_nr,
		.timeout_ns = dio_timeout_ns(timeout),
	};
	uint64_t *a;
	int ret, err;

	if (w.timeout_ns == -2) {
		errno = EINVAL;
		return -1;
	}
	/* COLLECT only writes the array. */
	if (dio_widen(reqs, nr, cmd == DIO_IOC_WAIT, &a))
		return -1;
	w.reqs = (uintptr_t)a;
	ret = ioctl(ctx, cmd, &w);
	err = errno;
	if (cmd == DIO_IOC_COLLECT)
		dio_narrow(reqs, a, ret > 0 ? ret : 0);
	dio_widened_free(reqs, a);
	errno = err;
	return ret;
}

int sys_dio_wait(int ctx, struct dio_request **reqs, unsigned int nr,
		 const struct timespec *timeout)
{
	return dio_wait_common(ctx, DIO_IOC_WAIT, reqs, 0, nr, timeout);
}

int sys_dio_collect(int ctx, struct dio_request **reqs, unsigned int min_nr,
		    unsigned int nr, const struct timespec *timeout)
{
	return dio_wait_common(ctx, DIO_IOC_COLLECT, reqs, min_nr, nr, timeout);
}

/*
 * struct iovec as the kernel's struct dio_fixed_buf: built on the stack
 * for up to this many buffers, in malloc()ed memory beyond.
 */
#define DIO_FIXED_ON_STACK	32
/*
 * Above this many buffers the array is not converted (it could be huge):
 * the module refuses a count above its max_fixed_bufs, far below this,
 * before it reads the array, so the kernel answers EINVAL.
 */
#define DIO_FIXED_CONVERT_MAX	(1U << 16)

int sys_dio_register_buffers(int ctx, const struct iovec *iov, unsigned int nr)
{
	struct dio_fixed_buf stack[DIO_FIXED_ON_STACK], *bufs = stack;
	struct dio_register reg = { .size = sizeof(reg), .nr = nr };
	unsigned int i;
	int ret, err;

	if (!iov || !nr) {
		errno = EINVAL;
		return -1;
	}
	if (nr > DIO_FIXED_CONVERT_MAX)
		return ioctl(ctx, DIO_IOC_REGISTER, &reg) < 0 ? -1 : 0;
	if (nr > DIO_FIXED_ON_STACK) {
		bufs = malloc((size_t)nr * sizeof(*bufs));
		if (!bufs)
			return -1;
	}
	for (i = 0; i < nr; i++) {
		bufs[i].addr = (uintptr_t)iov[i].iov_base;
		bufs[i].len = iov[i].iov_len;
	}
	reg.bufs = (uintptr_t)bufs;
	ret = ioctl(ctx, DIO_IOC_REGISTER, &reg);
	err = errno;
	if (bufs != stack)
		free(bufs);
	errno = err;
	return ret < 0 ? -1 : 0;
}

int sys_dio_unregister_buffers(int ctx)
{
	struct dio_register reg = { .size = sizeof(reg) };

	return ioctl(ctx, DIO_IOC_UNREGISTER, &reg) < 0 ? -1 : 0;
}

/*
 * The dio_req_prep_* helpers are released symbols (LIBDIOCTL_1.0, 1.2)
 * that write sizeof(*r) bytes into the caller's struct: the size a program
 * built against these nodes has.  A grown struct dio_request needs new
 * versions of them (a new node, the old symbols kept writing 128 bytes),
 * not a larger memset under the old ones: this stops the build until then.
 */
_Static_assert(sizeof(struct dio_request) == DIO_REQUEST_SIZE_VER0,
	       "struct dio_request grew: version the dio_req_prep_* helpers");

static void dio_req_prep(struct dio_request *r, int op, int handle,
			 const void *buf, uint64_t len, uint64_t offset)
{
	memset(r, 0, sizeof(*r));
	r->size = sizeof(*r);
	r->opcode = (uint8_t)op;
	r->handle = (uint32_t)handle;
	r->buf = (uintptr_t)buf;
	r->len = len;
	r->offset = offset;
}

void dio_req_prep_read(struct dio_request *r, int handle, void *buf,
		       size_t len, uint64_t offset)
{
	dio_req_prep(r, DIO_OP_READ, handle, buf, len, offset);
}

void dio_req_prep_write(struct dio_request *r, int handle, const void *buf,
			size_t len, uint64_t offset)
{
	dio_req_prep(r, DIO_OP_WRITE, handle, buf, len, offset);
}

void dio_req_prep_read_fixed(struct dio_request *r, int handle, void *buf,
			     size_t len, uint64_t offset, unsigned int buf_index)
{
	dio_req_prep(r, DIO_OP_READ, handle, buf, len, offset);
	r->flags = DIO_REQ_FIXED;
	r->buf_index = buf_index;
}

void dio_req_prep_write_fixed(struct dio_request *r, int handle,
			      const void *buf, size_t len, uint64_t offset,
			      unsigned int buf_index)
{
	dio_req_prep(r, DIO_OP_WRITE, handle, buf, len, offset);
	r->flags = DIO_REQ_FIXED;
	r->buf_index = buf_index;
}

void dio_req_prep_readv(struct dio_request *r, int handle,
			const struct iovec *iov, int iovcnt, uint64_t offset)
{
	dio_req_prep(r, DIO_OP_READ, handle, iov, (uint64_t)iovcnt, offset);
	r->flags = DIO_REQ_IOVEC;
}

void dio_req_prep_writev(struct dio_request *r, int handle,
			 const struct iovec *iov, int iovcnt, uint64_t offset)
{
	dio_req_prep(r, DIO_OP_WRITE, handle, iov, (uint64_t)iovcnt, offset);
	r->flags = DIO_REQ_IOVEC;
}

void dio_req_prep_flush(struct dio_request *r, int handle)
{
	dio_req_prep(r, DIO_OP_FLUSH, handle, NULL, 0, 0);
}

int dio_req_set_pi(struct dio_request *r, void *pi, uint32_t pi_len,
		   unsigned int pi_flags, uint16_t app_tag,
		   uint16_t app_tag_mask)
{
	/* pi_flags is 16 bits wide: refuse what would be cut off. */
	if (!r || pi_flags > UINT16_MAX) {
		errno = EINVAL;
		return -1;
	}
	r->flags |= DIO_REQ_PI;
	r->pi_buf = (uintptr_t)pi;
	r->pi_len = pi_len;
	r->pi_flags = (uint16_t)pi_flags;
	r->app_tag = app_tag;
	r->app_tag_mask = app_tag_mask;
	return 0;
}
