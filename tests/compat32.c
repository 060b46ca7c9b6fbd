// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * compat32: built with -m32, run by t_query in the guest.  A 32-bit
 * program uses the same ABI through compat_ioctl: features, a private
 * context and its stat, a handle for the device in argv[1] (512-byte
 * sectors), its query, a 4 KiB write read back plainly and through an
 * iovec, the same through registered buffers (ABI 3: the library converts
 * the 32-bit struct iovec array), the errnos of a NULL array, a bad handle
 * and a misaligned buffer, close.  Prints what failed; exit status 0 when
 * all held.  The ABI's layout is checked when it is compiled: one layout
 * for 32 and 64 bits.
 *
 * compat32 --abi DEVICE ROW, run by t_abi: the ABI rules of the header's
 * preamble for one row of tests/lib/abi_rules.h (a command, or
 * "dio_request"), or for every number no row names ("sweep"), from a
 * 32-bit program; the cases that fail are printed, exit status 0 when
 * none did.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "dioctl.h"
#include "lib/abi_rules.h"

/*
 * The ABI's layout table (module/abi_layout.h, which the module compiles
 * into BUILD_BUG_ON()s), as a 32-bit program compiles the header: one
 * layout for 32 and 64 bits.
 */
#define DIO_ABI_SIZE(type, size)	_Static_assert(sizeof(struct type) == (size), #type)
#define DIO_ABI_CONST(name, value)	_Static_assert((name) == (value), #name)
#define DIO_ABI_FIELD(type, f, off, size)					\
	_Static_assert(offsetof(struct type, f) == (off) &&			\
		       sizeof(((struct type *)0)->f) == (size), #type "." #f)
#define DIO_ABI_IOC(cmd, nr)							\
	_Static_assert(_IOC_TYPE(cmd) == DIO_BATCH_IOC_MAGIC && _IOC_NR(cmd) == (nr) && \
		       _IOC_DIR(cmd) == (_IOC_READ | _IOC_WRITE), #cmd)
#include "../module/abi_layout.h"
#undef DIO_ABI_SIZE
#undef DIO_ABI_CONST
#undef DIO_ABI_FIELD
#undef DIO_ABI_IOC

#define CHECK(c) do { if (!(c)) { printf("compat32: %s failed (errno %d)\n", #c, errno); return 1; } } while (0)

/* compat32 --abi DEVICE ROW|sweep */
static int abi_main(const char *dev, const char *row)
{
	const struct abi_subject *s = abi_subject_find(row);
	struct abi_env e;
	unsigned int failed;

	if (!s && strcmp(row, "sweep")) {
		printf("compat32: no row %s in tests/lib/abi_rules.h\n", row);
		return 1;
	}
	if (abi_env_open(&e, "abi32", dev))
		return 1;
	failed = s ? abi_run_subject(&e, s) : abi_sweep(&e);
	abi_env_close(&e);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct dio_request w, r, *rp;
	struct dio_features f;
	struct dio_query q;
	struct dio_stat st;
	int ctx, fd, h;
	char *a, *b;

	CHECK(sizeof(void *) == 4);
	if (argc == 4 && !strcmp(argv[1], "--abi"))
		return abi_main(argv[2], argv[3]);
	CHECK(argc == 2);
	CHECK(sys_dio_features(&f) == 0);
	CHECK(f.abi_version == DIO_BATCH_ABI_VERSION);
	ctx = sys_dio_init(0, DIO_PRIVATE);
	CHECK(ctx >= 0);
	/* DIO_IOC_STAT (ABI 2) through compat_ioctl. */
	CHECK(sys_dio_stat(ctx, &st) == 0);
	CHECK(st.size == sizeof(st));
	CHECK(st.flags == DIO_STAT_PRIVATE && st.key == 0);
	CHECK(st.uid == geteuid() && st.cuid == geteuid());
	CHECK(st.gid == getegid() && st.cgid == getegid());
	CHECK(st.cpid == getpid());
	CHECK(st.nr_descriptors == 1 && st.nr_handles == 0);
	fd = open(argv[1], O_RDWR);
	CHECK(fd >= 0);
	h = sys_dio_open(ctx, fd, 0);
	CHECK(h >= 1);
	CHECK(sys_dio_stat(ctx, &st) == 0 && st.nr_handles == 1);
	CHECK(sys_dio_query(ctx, h, &q) == 0);
	CHECK(q.part_start_bytes == 0);		/* a whole disk (ABI 4) */
	printf("compat32: %s lbs %u capacity %llu profile %s\n", argv[1],
	       q.logical_block_size, (unsigned long long)q.capacity, q.profile);
	CHECK(posix_memalign((void **)&a, 4096, 4096) == 0);
	CHECK(posix_memalign((void **)&b, 4096, 4096) == 0);
	memset(a, 0x32, 4096);
	memset(b, 0, 4096);
	dio_req_prep_write(&w, h, a, 4096, 8192);
	rp = &w;
	CHECK(sys_dio_submit(ctx, &rp, 1) == 1);
	CHECK(sys_dio_wait(ctx, &rp, 1, NULL) == 1);
	CHECK(w.result == 4096);
	dio_req_prep_read(&r, h, b, 4096, 8192);
	rp = &r;
	CHECK(sys_dio_submit(ctx, &rp, 1) == 1);
	CHECK(sys_dio_collect(ctx, &rp, 1, 1, NULL) == 1);
	CHECK(rp == &r);
	CHECK(r.result == 4096);
	CHECK(memcmp(a, b, 4096) == 0);
	/* An iovec request: struct iovec in the 32-bit layout. */
	{
		struct iovec iov[2] = { { b, 2048 }, { (char *)b + 2048, 2048 } };

		memset(b, 0, 4096);
		dio_req_prep_readv(&r, h, iov, 2, 8192);
		rp = &r;
		CHECK(sys_dio_submit(ctx, &rp, 1) == 1);
		CHECK(sys_dio_wait(ctx, &rp, 1, NULL) == 1);
		CHECK(r.result == 4096);
		CHECK(memcmp(a, b, 4096) == 0);
	}
	/* Registered buffers (ABI 3): a and b are buffers 0 and 1. */
	{
		struct iovec fb[2] = { { a, 4096 }, { b, 4096 } };

		CHECK(f.features & DIO_FEAT_FIXED_BUFS);
		CHECK(sys_dio_register_buffers(ctx, fb, 2) == 0);
		errno = 0;
		CHECK(sys_dio_register_buffers(ctx, fb, 2) == -1 && errno == EBUSY);
		memset(a, 0x3f, 4096);
		memset(b, 0, 4096);
		dio_req_prep_write_fixed(&w, h, a, 4096, 16384, 0);
		rp = &w;
		CHECK(sys_dio_submit(ctx, &rp, 1) == 1);
		CHECK(sys_dio_wait(ctx, &rp, 1, NULL) == 1);
		CHECK(w.result == 4096);
		dio_req_prep_read_fixed(&r, h, b, 4096, 16384, 1);
		rp = &r;
		CHECK(sys_dio_submit(ctx, &rp, 1) == 1);
		CHECK(sys_dio_wait(ctx, &rp, 1, NULL) == 1);
		CHECK(r.result == 4096);
		CHECK(memcmp(a, b, 4096) == 0);
		/* b is not within buffer 0. */
		dio_req_prep_read_fixed(&r, h, b, 4096, 16384, 0);
		rp = &r;
		errno = 0;
		CHECK(sys_dio_submit(ctx, &rp, 1) == -1 && errno == EFAULT);
		CHECK(sys_dio_unregister_buffers(ctx) == 0);
		errno = 0;
		CHECK(sys_dio_unregister_buffers(ctx) == -1 && errno == ENXIO);
		memset(a, 0x32, 4096);
	}
	/* Errors come back as they do in 64-bit programs. */
	errno = 0;
	CHECK(sys_dio_submit(ctx, NULL, 1) == -1 && errno == EFAULT);
	/* COLLECT into a NULL array: EFAULT, and the completion stays. */
	dio_req_prep_read(&r, h, b, 4096, 8192);
	rp = &r;
	CHECK(sys_dio_submit(ctx, &rp, 1) == 1);
	errno = 0;
	CHECK(sys_dio_collect(ctx, NULL, 1, 1, NULL) == -1 && errno == EFAULT);
	rp = NULL;
	CHECK(sys_dio_collect(ctx, &rp, 1, 1, NULL) == 1);
	CHECK(rp == &r && r.result == 4096);
	dio_req_prep_write(&w, h, a, 4096, 8192);
	w.handle = 999;
	rp = &w;
	CHECK(sys_dio_submit(ctx, &rp, 1) == -1 && errno == EBADF);
	dio_req_prep_read(&r, h, (char *)b + 1, 4096, 8192);
	rp = &r;
	CHECK(sys_dio_submit(ctx, &rp, 1) == -1 && errno == EINVAL);
	CHECK(sys_dio_close(ctx, h) == 0);
	CHECK(sys_dio_exit(ctx) == 0);
	printf("compat32: ok\n");
	return 0;
}
