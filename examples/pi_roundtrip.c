// SPDX-License-Identifier: MIT
/*
 * pi_roundtrip: the first dio_batch program.
 *
 * Opens a block device, asks the module what it is (geometry, PI format),
 * writes 64 KiB with protection information that libdioctl computed, reads
 * it back with the PI, and checks both: the module verifies guard, app tag
 * and reference tag when the read completes, and the program verifies
 * again with dio_pi_verify() and compares data and PI byte for byte.  On a
 * device without PI it writes and reads the data alone.
 *
 *   usage: pi_roundtrip DEVICE [OFFSET]
 *
 * OFFSET (bytes, default 0) must be a multiple of the logical block size.
 * THE DATA THERE IS OVERWRITTEN.  The device must not be mounted or in use
 * (the module claims it exclusively).
 *
 * What is written: every 8 bytes hold their own byte offset in DEVICE
 * multiplied by 0x9e3779b97f4a7c15 (mod 2^64) and xored with APP_TAG, in
 * the machine's byte order; every tuple carries APP_TAG as its app tag.
 *
 * Exit status: 0 when everything checked out, 1 when a call failed, 2 for
 * bad arguments, 3 when the data or its PI came back wrong.
 *
 * Build: cc -O2 -o pi_roundtrip pi_roundtrip.c $(pkg-config --cflags --libs libdioctl)
 * Run as root, or as a member of the group /dev/dio_batch belongs to, with
 * read and write access to DEVICE.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dioctl.h>

#define LEN		(64 * 1024)
#define APP_TAG		0xd10b

static void fill(void *buf, size_t len, uint64_t off, uint64_t tag)
{
	uint64_t *w = buf;

	for (size_t i = 0; i < len / 8; i++)
		w[i] = (off + 8 * i) * 0x9e3779b97f4a7c15ULL ^ tag;
}

static const char *guard_name(unsigned int g)
{
	switch (g) {
	case DIO_GUARD_IP:	return "IP checksum";
	case DIO_GUARD_CRC16:	return "CRC16 T10-DIF";
	case DIO_GUARD_CRC64:	return "CRC64 NVMe";
	}
	return "unknown";
}

/* Submit one request and wait for it; its result is in @r->result. */
static void run(int ctx, struct dio_request *r, const char *what)
{
	struct dio_request *rp = r;

	if (sys_dio_submit(ctx, &rp, 1) != 1) {
		if (errno == EILSEQ)	/* DIO_PI_VERIFY_USER refused our PI */
			return;
		err(1, "%s: sys_dio_submit", what);
	}
	if (sys_dio_wait(ctx, &rp, 1, NULL) != 1)
		err(1, "%s: sys_dio_wait", what);
}

/* The result of a request that did not transfer @len bytes; exits 3 or 1. */
static void __attribute__((noreturn))
failed(const struct dio_request *r, const char *what)
{
	if (r->result == -EILSEQ) {
		printf("%s: PI check failed: ", what);
		if (r->pi_err_interval == DIO_PI_INTERVAL_UNKNOWN)
			printf("the device refused it; block not found");
		else
			printf("interval %" PRIu64 " of the disk: %s tag: expected %#" PRIx64
			       ", found %#" PRIx64, (uint64_t)r->pi_err_interval,
			       dio_pi_tag_name(r->pi_err_tag), (uint64_t)r->pi_err_expected,
			       (uint64_t)r->pi_err_actual);
		printf(" (found by %s)\n", dio_pi_source_name(r->pi_err_source));
		exit(3);
	}
	if (r->result < 0)
		errx(1, "%s: %s", what, strerror((int)-r->result));
	errx(1, "%s: %lld bytes instead of %llu", what, (long long)r->result,
	     (unsigned long long)r->len);
}

int main(int argc, char **argv)
{
	struct dio_request r;
	struct dio_features f = { .size = sizeof(f) };
	struct dio_query q;
	struct dio_pi_profile p;
	struct dio_pi_error pe;
	unsigned char *data, *back, *pi = NULL, *pi_back = NULL;
	uint64_t off = 0, seed = 0;
	size_t len, align, pi_len = 0;
	char *end;
	int fd, ctx, h, has_pi;

	if (argc < 2 || argc > 3)
		errx(2, "usage: pi_roundtrip DEVICE [OFFSET]");
	if (argc == 3) {
		errno = 0;
		off = strtoull(argv[2], &end, 0);
		if (errno || end == argv[2] || *end || argv[2][0] == '-')
			errx(2, "bad offset '%s'", argv[2]);
	}

	/* 1. The module: is it there, may we use it, what does it offer? */
	if (sys_dio_features(&f))
		err(1, "/dev/dio_batch (module not loaded? not in its group?)");
	printf("dio_batch ABI %u, at most %u requests per call, %u in flight\n",
	       f.abi_version, f.max_batch, f.max_inflight);

	/*
	 * 2. A private context (no key: no other process can join it), and a
	 * handle on the device.  The handle keeps the device open: the
	 * descriptor could be closed now.
	 */
	fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0)
		err(1, "%s", argv[1]);
	ctx = sys_dio_init(0, DIO_PRIVATE);
	if (ctx < 0)
		err(1, "sys_dio_init");
	h = sys_dio_open(ctx, fd, 0);
	if (h < 0)
		err(1, "sys_dio_open %s%s", argv[1],
		    errno == EBUSY ? " (mounted, or in use)" : "");

	/* 3. What the device is. */
	if (sys_dio_query(ctx, h, &q))
		err(1, "sys_dio_query");
	printf("%s: %u-byte blocks, %" PRIu64 " MiB, DMA alignment %u, "
	       "at most %u bytes per request\n", argv[1], q.logical_block_size,
	       (uint64_t)q.capacity >> 20, q.dma_alignment, q.max_io_bytes);
	has_pi = dio_pi_profile_from_query(&q, &p) == 0;
	if (has_pi)
		printf("PI: %s, %u-byte intervals, type %u, guard %s, "
		       "%u bytes of metadata per interval, the tuple (%u bytes) at %u\n",
		       q.profile, q.pi_interval, q.pi_type,
		       guard_name(q.pi_guard_type), q.pi_md_size, q.pi_tuple_size,
		       q.pi_offset);
	else if (errno == EOPNOTSUPP)
		printf("PI: none; data only\n");
	else
		err(1, "dio_pi_profile_from_query");

	len = LEN;
	if (len > q.max_io_bytes)
		len = q.max_io_bytes - q.max_io_bytes % q.logical_block_size;
	if (off % q.logical_block_size)
		errx(2, "offset %" PRIu64 " is not a multiple of %u", off,
		     q.logical_block_size);
	if (off > q.capacity || len > q.capacity - off)
		errx(2, "offset %" PRIu64 ": the device ends at %" PRIu64, off,
		     (uint64_t)q.capacity);

	/*
	 * 4. Buffers.  Page-aligned: that satisfies dma_alignment, and no
	 * protection interval straddles a page (the block layer handles PI a
	 * page piece at a time).
	 */
	align = q.dma_alignment > 4096 ? q.dma_alignment : 4096;
	if (posix_memalign((void **)&data, align, len) ||
	    posix_memalign((void **)&back, align, len))
		errx(1, "out of memory");
	fill(data, len, off, APP_TAG);
	memset(back, 0, len);

	if (has_pi) {
		/*
		 * pi_md_size bytes per interval, the tuple at pi_offset in them;
		 * the other bytes (none unless the device has more metadata
		 * than PI) are ours: zero here, stored and returned as they are.
		 */
		ssize_t n = dio_pi_len(&p, len);

		if (n < 0)
			err(1, "dio_pi_len");
		pi_len = n;
		pi = calloc(1, pi_len);
		pi_back = calloc(1, pi_len);
		if (!pi || !pi_back)
			errx(1, "out of memory");
		/*
		 * The first reference tag: the first interval's number counted
		 * from the start of the whole disk, also through a partition.
		 */
		seed = dio_pi_seed(&q, off);
		if (dio_pi_generate(&p, data, len, pi,
				    &(struct dio_pi_params){ .seed = seed,
							     .app_tag = APP_TAG }))
			err(1, "dio_pi_generate");
	}

	/*
	 * 5. Write.  DIO_PI_VERIFY_USER: the module checks our PI before any
	 * I/O (a program bug shows up as EILSEQ here, not on the disk).
	 */
	dio_req_prep_write(&r, h, data, len, off);
	if (has_pi && dio_req_set_pi(&r, pi, pi_len, DIO_PI_VERIFY_USER, 0, 0))
		err(1, "dio_req_set_pi");
	run(ctx, &r, "write");
	if (r.result != (int64_t)len)
		failed(&r, "write");

	/*
	 * 6. Read back, with the PI; the module checks the guard, the app tag
	 * and (types 1 and 2: type 3 has none) the reference tag when the read
	 * completes, and reports the first bad interval exactly.
	 */
	dio_req_prep_read(&r, h, back, len, off);
	if (has_pi &&
	    dio_req_set_pi(&r, pi_back, pi_len,
			   DIO_PI_CHK_GUARD | DIO_PI_CHK_APPTAG |
			   (q.pi_type == 3 ? 0 : DIO_PI_CHK_REFTAG), APP_TAG, 0xffff))
		err(1, "dio_req_set_pi");
	run(ctx, &r, "read");
	if (r.result != (int64_t)len)
		failed(&r, "read");

	/* 7. Our own checks: the data, the PI bytes, and the PI against the data. */
	if (memcmp(back, data, len)) {
		printf("read: the data differs from what was written\n");
		return 3;
	}
	if (has_pi) {
		if (memcmp(pi_back, pi, pi_len)) {
			printf("read: the PI differs from what was written\n");
			return 3;
		}
		if (dio_pi_verify(&p, back, len, pi_back,
				  &(struct dio_pi_params){ .seed = seed,
							   .app_tag = APP_TAG,
							   .app_mask = 0xffff,
							   .chk_flags = DIO_PI_CHK_ALL },
				  &pe)) {
			if (errno != EILSEQ)
				err(1, "dio_pi_verify");
			printf("dio_pi_verify: interval %" PRIu64 ": %s tag: expected %#" PRIx64
			       ", found %#" PRIx64 "\n", (uint64_t)pe.interval,
			       dio_pi_tag_name(pe.tag), (uint64_t)pe.expected,
			       (uint64_t)pe.actual);
			return 3;
		}
		printf("OK: %zu bytes at offset %" PRIu64 " written and read back with PI: "
		       "%zu intervals, ", len, off, len / q.pi_interval);
		if (q.pi_type == 3)
			printf("no ref tags (type 3)");
		else
			printf("ref tags %" PRIu64 " to %" PRIu64, seed,
			       seed + len / q.pi_interval - 1);
		printf(", app tag %#x, verified by the module and by libdioctl\n",
		       APP_TAG);
	} else {
		printf("OK: %zu bytes at offset %" PRIu64 " written and read back\n",
		       len, off);
	}

	/* 8. The handle and the context go with the descriptor. */
	sys_dio_close(ctx, h);
	sys_dio_exit(ctx);
	close(fd);
	free(data);
	free(back);
	free(pi);
	free(pi_back);
	return 0;
}
