// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The trust boundary (ABI 2), attacked by users who are not root: PI.
 * DIO_PI_GEN_APPTAG refuses the escape app tag on type 1; no kernel memory
 * reaches the disk or the caller through PI or through the metadata bytes
 * beyond the PI (NVMe namespace 4: 16 bytes of metadata, 8 of PI first).
 *
 * The attacks run in processes that dropped to spare uids (1000, 1001,
 * 2000: setgroups, setresgid, setresuid after fork) or in namespaces of
 * their own (unshare); what only root can set up runs as root.  Each test
 * asserts the exact documented errno and that nothing leaked: the bytes on
 * the disk, the bytes of the attacker's and the victim's memory, the
 * requests in the module's slab caches.  The test bed (devices, agents,
 * children, cleanup) is tests/lib/security_common.h's.  A device, a tool
 * or a kernel feature that is missing fails the test that needs it, with
 * a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"
#include "security_common.h"

/* ---- 4. PI: no escapes, no stale bytes ---- */

static int open_handle(int ctx, const char *dev, struct dio_query *q)
{
	int fd = open_disk(dev, O_RDWR), h = want_ok(sys_dio_open(ctx, fd, 0), dev);

	assert_int_equal(sys_dio_query(ctx, h, q), 0);
	return h;
}

/*
 * DIO_PI_GEN_APPTAG on a write without a PI buffer (dio_req_set_pi()
 * would set DIO_REQ_PI, which GEN_APPTAG refuses).
 */
static void gen_apptag(struct dio_request *r, uint16_t app)
{
	r->pi_flags = DIO_PI_GEN_APPTAG;
	r->app_tag = app;
}

/* One request, submitted and waited for; returns SUBMIT's errno or 0. */
static int run1(int ctx, struct dio_request *r)
{
	struct dio_request *rp = r;

	if (sys_dio_submit(ctx, &rp, 1) != 1)
		return errno;
	assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
	return 0;
}

/*
 * DIO_PI_GEN_APPTAG with the escape app tag 0xffff: EINVAL on type 1
 * (scsi_debug and NVMe namespace 1), nothing written; 0xfffe is fine
 * there; on type 3 (NVMe namespace 3) 0xffff is accepted.
 */
static void test_gen_apptag_escape(void **state)
{
	const char *devs[] = { disk, nvme1, nvme3 };
	int ctx = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE));

	assert_true(ctx >= 0);
	for (int i = 0; i < 3; i++) {
		struct dio_query q;
		int h = open_handle(ctx, devs[i], &q);
		uint32_t len = 8 * q.logical_block_size;
		uint8_t *b = tl_alloc(len, 0x3d), *back = tl_alloc(len, 0);
		uint64_t off = i == 0 ? OFF_APPTAG : 1 * MiB;
		struct dio_request r;
		char what[128];
		int e;

		assert_true(b && back);
		print_message("# %s: %s, type %u\n", devs[i], q.profile, q.pi_type);
		assert_true(q.pi_caps & DIO_PI_CAP_INTEGRITY);
		dio_req_prep_write(&r, h, b, len, off);
		assert_int_equal(run1(ctx, &r), 0);
		assert_int_equal(r.result, len);
		memset(b, 0x3e, len);
		dio_req_prep_write(&r, h, b, len, off);
		gen_apptag(&r, 0xffff);
		e = run1(ctx, &r);
		snprintf(what, sizeof(what), "%s (type %u): GEN_APPTAG 0xffff", devs[i], q.pi_type);
		if (q.pi_type == 1) {
			if (e != EINVAL)
				fail_msg("%s: SUBMIT errno %s, want EINVAL", what, en(e));
			dio_req_prep_read(&r, h, back, len, off);
			assert_int_equal(run1(ctx, &r), 0);
			assert_int_equal(r.result, len);
			assert_int_equal(first_diff(back, len, 0x3d), -1);
			dio_req_prep_write(&r, h, b, len, off);
			gen_apptag(&r, 0xfffe);
			assert_int_equal(run1(ctx, &r), 0);
			assert_int_equal(r.result, len);
		} else {
			assert_int_equal(q.pi_type, 3);
			if (e || r.result != len)
				fail_msg("%s: SUBMIT errno %s, result %lld; want accepted",
					 what, en(e), (long long)r.result);
		}
		free(b);
		free(back);
	}
}

/*
 * Read @n intervals at @off with DIO_REQ_PI into a buffer filled with
 * 0xee, data into @data; the PI buffer must equal @want byte for byte.
 */
static void read_pi_exact(int ctx, int h, const struct dio_query *q, uint64_t off,
			  uint32_t n, const uint8_t *data, const uint8_t *want,
			  const char *what)
{
	uint32_t len = n * q->pi_interval, plen = n * q->pi_md_size;
	uint8_t *b = tl_alloc(len, 0), *pi = tl_alloc(plen, 0xee);
	struct dio_request r;

	assert_true(b && pi);
	dio_req_prep_read(&r, h, b, len, off);
	dio_req_set_pi(&r, pi, plen, 0, 0, 0);
	assert_int_equal(run1(ctx, &r), 0);
	if (r.result != len)
		fail_msg("%s: read result %lld", what, (long long)r.result);
	assert_memory_equal(b, data, len);
	for (uint32_t i = 0; i < plen; i++)
		if (pi[i] != want[i])
			fail_msg("%s: PI byte %u (interval %u, byte %u of %u) is %#x, want %#x",
				 what, i, i / q->pi_md_size, i % q->pi_md_size,
				 q->pi_md_size, pi[i], want[i]);
	free(b);
	free(pi);
}

/*
 * Write @n intervals of data tagged @tag at @off: with the module's PI
 * (DIO_PI_GEN_APPTAG, @app), the kernel's (no PI flags, app tag 0), or
 * the caller's (@own, DIO_REQ_PI); then read the metadata back and
 * compare it with what it must be: the tuples, and every other metadata
 * byte zero (or the caller's).
 */
enum pi_src { PI_MODULE, PI_KERNEL, PI_OWN };

/*
 * Writes and reads of @n intervals at @off with the caller's metadata,
 * every byte beyond the tuples 0xab: kernel buffers of the size the next
 * request needs are freed holding 0xab, so that one reused without being
 * cleared shows.
 */
static void prime_md_buffers(int ctx, int h, const struct dio_query *q, uint64_t off,
			     uint32_t n)
{
	uint32_t len = n * q->pi_interval, plen = n * q->pi_md_size;
	uint8_t *data = tl_alloc(len, 0x5e), *pi = tl_alloc(plen, 0xab);
	struct dio_pi_profile p;
	struct dio_request r;

	assert_true(data && pi);
	assert_int_equal(dio_pi_profile_from_query(q, &p), 0);
	assert_int_equal(dio_pi_generate(&p, data, len, pi,
					 &(struct dio_pi_params){ .seed = off / q->pi_interval }), 0);
	for (int i = 0; i < 16; i++) {
		dio_req_prep_write(&r, h, data, len, off);
		dio_req_set_pi(&r, pi, plen, 0, 0, 0);
		assert_int_equal(run1(ctx, &r), 0);
		assert_int_equal(r.result, len);
		dio_req_prep_read(&r, h, data, len, off);	/* no PI: the kernel's */
		assert_int_equal(run1(ctx, &r), 0);
		assert_int_equal(r.result, len);
	}
	free(data);
	free(pi);
}

static void write_and_check_md(int ctx, int h, const struct dio_query *q, uint64_t off,
			       uint32_t n, enum pi_src src, uint16_t app, int own_fill,
			       const char *what)
{
	uint32_t len = n * q->pi_interval, plen = n * q->pi_md_size;
	uint8_t *data = tl_alloc(len, 0), *want = tl_alloc(plen, 0);
	struct dio_pi_profile p;
	struct dio_request r;

	assert_true(data && want);
	assert_int_equal(dio_pi_profile_from_query(q, &p), 0);
	tl_fill(data, len, off ^ src);
	if (src == PI_OWN)
		memset(want, own_fill, plen);
	else if (q->pi_md_size > q->pi_tuple_size)
		prime_md_buffers(ctx, h, q, 192 * KiB, n);
	assert_int_equal(dio_pi_generate(&p, data, len, want,
					 &(struct dio_pi_params){ .seed = off / q->pi_interval,
								  .app_tag = src == PI_KERNEL ? 0 : app }), 0);
	dio_req_prep_write(&r, h, data, len, off);
	if (src == PI_MODULE)
		gen_apptag(&r, app);
	else if (src == PI_OWN)
		dio_req_set_pi(&r, want, plen, 0, 0, 0);
	assert_int_equal(run1(ctx, &r), 0);
	if (r.result != len)
		fail_msg("%s: write result %lld", what, (long long)r.result);
	read_pi_exact(ctx, h, q, off, n, data, want, what);
	free(data);
	free(want);
}

/*
 * scsi_debug, type 1: the PI a write with DIO_PI_GEN_APPTAG put on the
 * disk, and the kernel's, read back with DIO_REQ_PI: every tuple exactly
 * guard, app tag and ref tag, no byte left over from anything else.
 */
static void test_scsi_pi_exact(void **state)
{
	int ctx = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE)), h;
	struct dio_query q;

	assert_true(ctx >= 0);
	h = open_handle(ctx, disk, &q);
	assert_int_equal(q.pi_md_size, 8);
	write_and_check_md(ctx, h, &q, OFF_PI, 16, PI_MODULE, 0x1234, 0,
			   "scsi_debug, module-generated PI");
	write_and_check_md(ctx, h, &q, OFF_PI + 64 * KiB, 16, PI_KERNEL, 0, 0,
			   "scsi_debug, kernel-generated PI");
}

/*
 * NVMe namespace 4: 16 bytes of metadata per block, the 8-byte PI tuple
 * first.  The caller's own bytes there (0xab) come back exactly;
 * module-generated and kernel-generated PI leave bytes 8..15 of every
 * entry zero (no kernel memory reaches the disk, nor the reader), also
 * right after buffers of the same size held 0xab there.  Debian's stock
 * kernels zero every allocation (init_on_alloc=1): there a buffer that is
 * not cleared still holds zeros, and only the debug kernel (or a guest
 * booted with init_on_alloc=0) can show one.
 */
static void test_nvme_metadata_beyond_pi(void **state)
{
	int ctx = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE)), h;
	struct dio_query q;
	char ns4[64];

	assert_true(ctx >= 0);
	if (tl_nvme_dev(4, ns4, sizeof(ns4)))
		fail_msg("NVMe namespace 4 (16 bytes of metadata, PI first) is not in the "
			 "test bed");
	h = open_handle(ctx, ns4, &q);
	print_message("# %s: %s, type %u, %u-byte blocks, metadata %u (PI %u at %u, "
		      "opaque %u at %u)\n", ns4, q.profile, q.pi_type, q.logical_block_size,
		      q.pi_md_size, q.pi_tuple_size, q.pi_offset, q.pi_opaque_size,
		      q.pi_opaque_offset);
	assert_int_equal(q.pi_md_size, 16);
	assert_int_equal(q.pi_tuple_size, 8);
	assert_int_equal(q.pi_offset, 0);
	assert_int_equal(q.pi_opaque_size, 8);
	assert_int_equal(q.pi_opaque_offset, 8);
	write_and_check_md(ctx, h, &q, 128 * KiB, 8, PI_OWN, 0x0abc, 0xab,
			   "namespace 4, the caller's metadata");
	write_and_check_md(ctx, h, &q, 0, 8, PI_MODULE, 0x4242, 0,
			   "namespace 4, module-generated PI");
	write_and_check_md(ctx, h, &q, 64 * KiB, 8, PI_KERNEL, 0, 0,
			   "namespace 4, kernel-generated PI");
}

/* Nothing of any test is left: requests, descriptors, handles, contexts. */
static void test_nothing_left(void **state)
{
	assert_true(tl_dio_caches_drained(20));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_gen_apptag_escape, sec_cleanup),
		cmocka_unit_test_teardown(test_scsi_pi_exact, sec_cleanup),
		cmocka_unit_test_teardown(test_nvme_metadata_beyond_pi, sec_cleanup),
		cmocka_unit_test_teardown(test_nothing_left, sec_cleanup),
	};

	return SEC_RUN("security_pi", tests);
}
