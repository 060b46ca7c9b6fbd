// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Batched direct I/O and the device's page cache, kept coherent as
 * O_DIRECT keeps it: a buffered read after a dio write, a dio read of a
 * page a buffered write left dirty, alone and in one batch; -EBUSY for a
 * write over the first page of a mounted ext4, reached with
 * DIO_OPEN_NOCLAIM, and the write beside it done; the same as uid 1000,
 * given the disk and /dev/dio_batch through a group, with its own context
 * and descriptors.
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
 * The device's page cache, kept coherent as the kernel's own O_DIRECT
 * keeps it: a dio write drops the cached pages of its range, so that a
 * buffered read after it sees the new data; a dio read first writes back
 * what a buffered write left dirty in the cache; the same inside one
 * batch.  Nothing here goes through d.fd (O_DIRECT) between the buffered
 * call and the dio one: its own writeback or invalidation would hide what
 * the module does not do.
 */
static void test_page_cache(void **state)
{
	const size_t pg = 4096;
	const uint64_t off = 20 * MiB;
	uint8_t *a = tl_xalloc(pg, 0), *b = tl_xalloc(pg, 0);
	uint8_t *x = tl_xalloc(pg, 0), *y = tl_xalloc(pg, 0);
	struct dio_request r[2], *rp[2] = { &r[0], &r[1] };
	int bfd = tl_fd_keep(open(d.path, O_RDWR | O_CLOEXEC));

	assert_true(bfd >= 0);
	/* A page cached by a buffered read, then written by a request. */
	tl_fill(a, pg, 1000);
	xpwrite(a, pg, off);
	assert_int_equal(pread(bfd, x, pg, off), pg);
	check_same(a, x, pg, "buffered read");
	tl_fill(b, pg, 1001);
	assert_int_equal(rw1(DIO_OP_WRITE, d.h, b, pg, off), pg);
	assert_int_equal(pread(bfd, x, pg, off), pg);
	check_same(b, x, pg, "buffered read after a dio write");
	/* One block at the end of a cached page: the rest of it stays. */
	assert_int_equal(rw1(DIO_OP_WRITE, d.h, a, d.lbs, off + pg - d.lbs),
			 d.lbs);
	assert_int_equal(pread(bfd, x, pg, off), pg);
	check_same(b, x, pg - d.lbs, "the page's other blocks");
	check_same(a, x + pg - d.lbs, d.lbs, "the block a dio write wrote");

	/* A buffered write left dirty in the cache, then a request reads. */
	tl_fill(a, pg, 1002);
	assert_int_equal(pwrite(bfd, a, pg, off + pg), pg);
	memset(x, 0, pg);
	assert_int_equal(rw1(DIO_OP_READ, d.h, x, pg, off + pg), pg);
	check_same(a, x, pg, "dio read of a page a buffered write dirtied");

	/* Both in one batch. */
	assert_int_equal(pread(bfd, x, pg, off + 2 * pg), pg);
	tl_fill(a, pg, 1003);
	assert_int_equal(pwrite(bfd, a, pg, off + 3 * pg), pg);
	tl_fill(b, pg, 1004);
	dio_req_prep_write(&r[0], d.h, b, pg, off + 2 * pg);
	dio_req_prep_read(&r[1], d.h, y, pg, off + 3 * pg);
	assert_int_equal(tl_dio_submit(d.ctx, rp, 2), 2);
	assert_int_equal(tl_dio_wait(d.ctx, rp, 2, NULL), 2);
	assert_int_equal(r[0].result, pg);
	assert_int_equal(r[1].result, pg);
	assert_int_equal(pread(bfd, x, pg, off + 2 * pg), pg);
	check_same(b, x, pg, "buffered read after a dio write in a batch");
	check_same(a, y, pg, "dio read in a batch of a dirty page");
	/* The next tests see a device with nothing cached, as before. */
	assert_int_equal(posix_fadvise(bfd, 0, 0, POSIX_FADV_DONTNEED), 0);
	tl_fd_close(bfd);
	free(a);
	free(b);
	free(x);
	free(y);
}

/*
 * test_page_cache_user()'s child, uid UID_USER in group GID_DIO: a
 * buffered write left dirty, then a request writes the same page; a page
 * root cached, written by a request; a buffered write left dirty, then
 * a request reads it.  Through descriptors and a context of its own.
 */
static int page_cache_child(void *arg)
{
	const size_t pg = 4096;
	const uint64_t off = *(const uint64_t *)arg;
	uint8_t *a = tl_alloc(pg, 0), *b = tl_alloc(pg, 0), *x = tl_alloc(pg, 0);
	int bfd, dfd, ctx, h;

	TL_CHILD_CHECK(a && b && x, "out of memory");
	bfd = open(d.path, O_RDWR | O_CLOEXEC);
	TL_CHILD_CHECK(bfd >= 0, "open %s", d.path);
	dfd = open(d.path, O_RDWR | O_DIRECT | O_CLOEXEC);
	TL_CHILD_CHECK(dfd >= 0, "open %s with O_DIRECT", d.path);
	ctx = sys_dio_init(0, DIO_PRIVATE);
	TL_CHILD_CHECK(ctx >= 0, "INIT");
	/* Root's context holds the claim. */
	h = sys_dio_open(ctx, dfd, DIO_OPEN_NOCLAIM);
	TL_CHILD_CHECK(h >= 1, "OPEN");

	/*
	 * A buffered write left dirty, then a request writes the page: the
	 * dirty page is written back before the request and dropped, so a
	 * buffered read sees the request's data, and so does the disk once
	 * the cache is synced and dropped (a page still dirty would have
	 * gone to the disk after the request, over its data).
	 */
	tl_fill(a, pg, 1200);
	TL_CHILD_CHECK(pwrite(bfd, a, pg, off) == (ssize_t)pg, "buffered write");
	tl_fill(b, pg, 1201);
	TL_CHILD_CHECK(child_rw(ctx, DIO_OP_WRITE, h, b, pg, off) == (int64_t)pg,
		       "dio write over a dirty page");
	TL_CHILD_CHECK(pread(bfd, x, pg, off) == (ssize_t)pg, "buffered read");
	TL_CHILD_CHECK(!memcmp(x, b, pg),
		       "buffered read after a dio write over a dirty page: not the write's data");
	TL_CHILD_CHECK(!fsync(bfd), "fsync");
	TL_CHILD_CHECK(!posix_fadvise(bfd, off, pg, POSIX_FADV_DONTNEED), "POSIX_FADV_DONTNEED");
	TL_CHILD_CHECK(pread(dfd, x, pg, off) == (ssize_t)pg, "O_DIRECT read");
	TL_CHILD_CHECK(!memcmp(x, b, pg),
		       "the disk after the cache was synced: not the dio write's data");

	/* The page root cached: root reads it after this child. */
	tl_fill(b, pg, 1203);
	TL_CHILD_CHECK(child_rw(ctx, DIO_OP_WRITE, h, b, pg, off + pg) == (int64_t)pg,
		       "dio write of a page root cached");

	/* A buffered write left dirty, then a request reads the page. */
	tl_fill(a, pg, 1204);
	TL_CHILD_CHECK(pwrite(bfd, a, pg, off + 2 * pg) == (ssize_t)pg, "buffered write");
	memset(x, 0, pg);
	TL_CHILD_CHECK(child_rw(ctx, DIO_OP_READ, h, x, pg, off + 2 * pg) == (int64_t)pg,
		       "dio read of a dirty page");
	TL_CHILD_CHECK(!memcmp(x, a, pg),
		       "dio read of a page a buffered write dirtied: not that write's data");

	close(ctx);
	close(dfd);
	close(bfd);
	free(a);
	free(b);
	free(x);
	return 0;
}

/*
 * test_page_cache()'s coherency as a user who is not root (uid 1000,
 * given the disk and /dev/dio_batch through group GID_DIO, with its own
 * context and descriptors): page_cache_child(); and a page root's
 * buffered read cached before it, which the user's request writes, read
 * by root afterwards: the user's data, not the page root had cached.
 */
static void test_page_cache_user(void **state)
{
	const size_t pg = 4096;
	uint64_t off = 24 * MiB;
	uint8_t *a = tl_xalloc(pg, 0), *x = tl_xalloc(pg, 0);
	int bfd = tl_fd_keep(open(d.path, O_RDWR | O_CLOEXEC));

	assert_true(bfd >= 0);
	tl_fill(a, pg, 1202);
	xpwrite(a, pg, off + pg);
	assert_int_equal(pread(bfd, x, pg, off + pg), pg);
	check_same(a, x, pg, "root's buffered read");
	give_to_group(d.path);
	assert_int_equal(tl_run_as(UID_USER, GID_USER, GID_DIO, page_cache_child, &off), 0);
	tl_fill(a, pg, 1203);
	assert_int_equal(pread(bfd, x, pg, off + pg), pg);
	check_same(a, x, pg, "root's buffered read after the user's dio write");
	/* The next tests see a device with nothing cached, as before. */
	assert_int_equal(posix_fadvise(bfd, 0, 0, POSIX_FADV_DONTNEED), 0);
	tl_fd_close(bfd);
	free(a);
	free(x);
}

#define PC_MNT	"/tmp/mnt-pagecache"

/* What page_cache_busy_writes() writes, and where. */
struct busy_args {
	const char *path;
	uint64_t tag;		/* tl_fill()'s */
};

/*
 * A page the module cannot drop before a write: ext4's superblock and
 * group descriptors, whose buffers ext4 holds while it is mounted, in the
 * disk's first page.  A write there through an unclaimed handle is not
 * done and completes with -EBUSY (pwrite() with O_DIRECT would write
 * through the cache instead); the requests beside it in the batch are
 * done.  Run by tl_run_as(), as root or not, through descriptors and a
 * context of its own.
 */
static int page_cache_busy_writes(void *arg)
{
	const struct busy_args *ba = arg;
	const size_t pg = 4096;
	uint8_t *w = tl_alloc(pg, 0), *old = tl_alloc(pg, 0), *x = tl_alloc(pg, 0);
	struct dio_request r[2], *rp[2] = { &r[0], &r[1] };
	int ctx, fd, h;

	TL_CHILD_CHECK(w && old && x, "out of memory");
	fd = open(ba->path, O_RDWR | O_DIRECT | O_CLOEXEC);
	TL_CHILD_CHECK(fd >= 0, "open %s", ba->path);
	ctx = sys_dio_init(0, DIO_PRIVATE);
	TL_CHILD_CHECK(ctx >= 0, "INIT");
	h = sys_dio_open(ctx, fd, DIO_OPEN_NOCLAIM);
	TL_CHILD_CHECK(h >= 1, "OPEN");
	TL_CHILD_CHECK(pread(fd, old, pg, 0) == (ssize_t)pg, "O_DIRECT read");
	tl_fill(w, pg, ba->tag);
	dio_req_prep_write(&r[0], h, w, pg, 0);
	dio_req_prep_write(&r[1], h, w, pg, 48 * MiB);
	r[0].result = r[1].result = SENTINEL;
	TL_CHILD_CHECK(sys_dio_submit(ctx, rp, 2) == 2, "SUBMIT");
	TL_CHILD_CHECK(sys_dio_wait(ctx, rp, 2, NULL) == 2, "WAIT");
	TL_CHILD_CHECK(r[0].result == -EBUSY, "the write of the first page: %lld",
		       (long long)r[0].result);
	TL_CHILD_CHECK(r[1].result == (int64_t)pg, "the write beside it: %lld",
		       (long long)r[1].result);
	TL_CHILD_CHECK(pread(fd, x, pg, 0) == (ssize_t)pg, "O_DIRECT read");
	TL_CHILD_CHECK(!memcmp(old, x, pg), "the first page, which the write left alone");
	TL_CHILD_CHECK(pread(fd, x, pg, 48 * MiB) == (ssize_t)pg, "O_DIRECT read");
	TL_CHILD_CHECK(!memcmp(w, x, pg), "the write beside it: not its data");
	close(ctx);
	close(fd);
	free(w);
	free(old);
	free(x);
	return 0;
}

/*
 * The disk under test as ext4, mounted on PC_MNT, its path in @path: it
 * is ext4's afterwards, and the device is set up again for the next test.
 */
static void page_cache_mount(char *path, size_t len)
{
	snprintf(path, len, "%s", d.path);
	dev_detach();			/* its claim keeps mount out */
	assert_int_equal(tl_kmod_probe("ext4", NULL), 0);
	assert_int_equal(tl_sh("mkfs.ext4 -q -F -b 4096 %s >/dev/null 2>&1",
			       path), 0);
	assert_int_equal(tl_sh("mkdir -p " PC_MNT " && mount -t ext4 %s " PC_MNT,
			       path), 0);
}

/* page_cache_busy_writes() as root. */
static void test_page_cache_busy(void **state)
{
	char path[sizeof(d.path)];

	page_cache_mount(path, sizeof(path));
	assert_int_equal(tl_run_as(0, 0, 0, page_cache_busy_writes,
				   &(struct busy_args){ path, 1100 }), 0);
}

/*
 * page_cache_busy_writes() as a user who is not root (uid 1000, given the
 * disk and /dev/dio_batch through group GID_DIO): the page ext4 holds is
 * no more writable through the module for a user who may write the disk.
 */
static void test_page_cache_busy_user(void **state)
{
	char path[sizeof(d.path)];

	page_cache_mount(path, sizeof(path));
	give_to_group(path);
	assert_int_equal(tl_run_as(UID_USER, GID_USER, GID_DIO, page_cache_busy_writes,
				   &(struct busy_args){ path, 1101 }), 0);
}

static int teardown_mount(void **state)
{
	tl_sh("umount " PC_MNT " 2>/dev/null");
	return teardown_sd(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_page_cache, setup_sd512),
		T(test_page_cache_user, setup_sd512),
		{ "test_page_cache_busy", test_page_cache_busy, setup_sd512,
		  teardown_mount, NULL },
		{ "test_page_cache_busy_user", test_page_cache_busy_user, setup_sd512,
		  teardown_mount, NULL },
		T(test_all_freed_and_unload, NULL),
	};

	return IO_RUN("io_pagecache", tests);
}
