// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The trust boundary (ABI 2), attacked by users who are not root: I/O
 * belongs to the process that created the descriptor.  A fork()ed child,
 * a receiver through SCM_RIGHTS and the holder of a descriptor whose
 * submitter died get EXDEV from SUBMIT, WAIT and COLLECT, and no result is
 * ever written into their memory.
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

/* ---- 1. A descriptor's I/O belongs to the process that created it ---- */

/* Root's context and a handle there, inherited by a tl_run_as() child. */
struct inherited {
	int ctx, h;
	struct dio_request **rp;	/* reap_child()'s: REAP_NR in flight there */
};

#define REAP_NR		4		/* test_forked_child_cannot_reap()'s requests */

/* test_forked_child_cannot_reap()'s child: COLLECT and WAIT of root's requests. */
static int reap_child(void *arg)
{
	const struct inherited *in = arg;
	struct dio_request *got[REAP_NR];
	struct timespec cto = ms_ts(2000);
	int ret;

	memset(arena, 0xc3, ARENA_SZ);
	memset(got, 0xc3, sizeof(got));
	ret = sys_dio_collect(in->ctx, got, 1, REAP_NR, &cto);
	TL_CHILD_CHECK(ret == -1 && errno == EXDEV, "COLLECT returned %d", ret);
	ret = sys_dio_wait(in->ctx, in->rp, REAP_NR, &cto);
	TL_CHILD_CHECK(ret == -1 && errno == EXDEV, "WAIT returned %d", ret);
	ret = sys_dio_collect(in->ctx, got, 0, REAP_NR, &(struct timespec){ 0, 0 });
	TL_CHILD_CHECK(ret == -1 && errno == EXDEV, "COLLECT (no wait) returned %d", ret);
	TL_CHILD_CHECK(first_diff(arena, ARENA_SZ, 0xc3) < 0,
		       "the child's memory changed at arena byte %ld",
		       first_diff(arena, ARENA_SZ, 0xc3));
	TL_CHILD_CHECK(first_diff(got, sizeof(got), 0xc3) < 0,
		       "COLLECT wrote into the child's array");
	return 0;
}

/*
 * The parent submits reads into its buffers and does not reap them; a
 * fork()ed child, now uid 1000, calls COLLECT and WAIT (on the parent's
 * request addresses) on the inherited descriptor: EXDEV, and its own copy
 * of the requests, the buffers and COLLECT's array, filled with 0xc3,
 * is unchanged byte for byte.  The parent then reaps all of them, with
 * the data of the disk.
 */
static void test_forked_child_cannot_reap(void **state)
{
	enum { N = REAP_NR };
	struct dio_request *r = (struct dio_request *)(arena + ARENA_REQS), *rp[N];
	uint8_t *buf = arena + ARENA_BUFS, *want = tl_alloc(N * BLK, 0);
	struct timespec to = ms_ts(10000);
	int ctx = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE)), fd = open_disk(disk, O_RDWR), h;

	assert_true(ctx >= 0);
	h = want_ok(sys_dio_open(ctx, fd, 0), "OPEN");
	tl_fill(want, N * BLK, 101);
	assert_int_equal(pwrite(dfd, want, N * BLK, OFF_MM), N * BLK);
	memset(arena, 0x77, ARENA_SZ);
	for (int i = 0; i < N; i++) {
		dio_req_prep_read(&r[i], h, buf + i * BLK, BLK, OFF_MM + i * BLK);
		r[i].result = 0x5a5a;
		rp[i] = &r[i];
	}
	/*
	 * In flight for a while: the child acts before or after completion,
	 * and its calls are refused either way (no verdict depends on when).
	 */
	assert_int_equal(tl_scsi_debug_ndelay(200000000), 0);
	assert_int_equal(sys_dio_submit(ctx, rp, N), N);
	assert_int_equal(tl_run_as(U_ALICE, U_ALICE, 0, reap_child,
				   &(struct inherited){ .ctx = ctx, .rp = rp }), 0);
	/* The parent's requests were waiting for it alone. */
	assert_int_equal(sys_dio_wait(ctx, rp, N, &to), N);
	for (int i = 0; i < N; i++)
		assert_int_equal(r[i].result, BLK);
	assert_memory_equal(buf, want, N * BLK);
	free(want);
}

/* test_forked_child_cannot_submit()'s child: a write and a read on root's handle. */
static int submit_child(void *arg)
{
	const struct inherited *in = arg;
	struct dio_request w, rd, *p;
	uint8_t *b = arena + ARENA_BUFS;
	int ret;

	memset(b, 0xee, 2 * BLK);
	dio_req_prep_write(&w, in->h, b, BLK, OFF_MM + 64 * KiB);
	p = &w;
	ret = sys_dio_submit(in->ctx, &p, 1);
	TL_CHILD_CHECK(ret == -1 && errno == EXDEV, "write SUBMIT returned %d", ret);
	dio_req_prep_read(&rd, in->h, b + BLK, BLK, OFF_MM + 64 * KiB);
	p = &rd;
	ret = sys_dio_submit(in->ctx, &p, 1);
	TL_CHILD_CHECK(ret == -1 && errno == EXDEV, "read SUBMIT returned %d", ret);
	TL_CHILD_CHECK(first_diff(b + BLK, BLK, 0xee) < 0, "the read landed");
	return 0;
}

/*
 * A fork()ed child, now uid 1001, submits a write and a read on the
 * inherited descriptor: EXDEV for both, nothing queued (the parent
 * collects nothing, no request object exists) and nothing written.  The
 * parent's own I/O on the descriptor still works.
 */
static void test_forked_child_cannot_submit(void **state)
{
	struct dio_request *got[4], r, *rp = &r;
	int ctx = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE)), fd = open_disk(disk, O_RDWR), h;

	assert_true(ctx >= 0);
	h = want_ok(sys_dio_open(ctx, fd, 0), "OPEN");
	disk_fill(OFF_MM + 64 * KiB, BLK, 0x31);
	assert_int_equal(tl_slab_wait("dio_kreq", 0, 5), 0);
	assert_int_equal(tl_run_as(U_BOB, U_BOB, 0, submit_child,
				   &(struct inherited){ .ctx = ctx, .h = h }), 0);
	assert_int_equal(sys_dio_collect(ctx, got, 0, 4, &(struct timespec){ 1, 0 }), 0);
	assert_int_equal(tl_slab_active("dio_kreq"), 0);
	disk_is(OFF_MM + 64 * KiB, BLK, 0x31, "after the child's write");
	dio_req_prep_read(&r, h, arena + ARENA_BUFS, BLK, OFF_MM + 64 * KiB);
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, BLK);
	assert_int_equal(first_diff(arena + ARENA_BUFS, BLK, 0x31), -1);
}

/*
 * SCM_RIGHTS to a process that forked before the context existed (its
 * memory has nothing to do with the sender's) and runs as uid 1000:
 * SUBMIT, WAIT and COLLECT are EXDEV, and nothing is written into its
 * memory; OPEN, CLOSE, QUERY and STAT work.  The sender reaps its own.
 */
static void test_scm_rights_receiver_cannot_do_io(void **state)
{
	enum { N = 4 };
	struct agent *a = agent(U_ALICE);
	struct dio_request *r = (struct dio_request *)(arena + ARENA_REQS), *rp[N];
	struct timespec to = ms_ts(10000);
	int ctx = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE)), fd = open_disk(disk, O_RDWR);
	int ro = open_disk(disk, O_RDONLY), actx, aro, h;
	struct arep ar;

	assert_true(ctx >= 0);
	h = want_ok(sys_dio_open(ctx, fd, 0), "OPEN");
	disk_fill(OFF_MM + 128 * KiB, N * BLK, 0x42);
	memset(arena, 0x77, ARENA_SZ);
	for (int i = 0; i < N; i++) {
		dio_req_prep_read(&r[i], h, arena + ARENA_BUFS + i * BLK, BLK,
				  OFF_MM + 128 * KiB + i * BLK);
		rp[i] = &r[i];
	}
	assert_int_equal(tl_scsi_debug_ndelay(200000000), 0);
	assert_int_equal(sys_dio_submit(ctx, rp, N), N);
	actx = agent_give(a, ctx);
	aro = agent_give(a, ro);

	ar = ACALL(a, .op = A_COLLECT, .ctx = actx, .min_nr = 1, .nr = N, .fill = 0x5c,
		   .timeout_ms = 2000);
	rep_err(ar, EXDEV, "COLLECT by the receiver");
	assert_int_equal(ar.diff, -1);
	ar = ACALL(a, .op = A_WAIT, .ctx = actx, .nr = N, .aoff = ARENA_REQS, .fill = 0x5c,
		   .timeout_ms = 2000);
	rep_err(ar, EXDEV, "WAIT by the receiver");
	assert_int_equal(ar.diff, -1);
	ar = a_io(a, actx, h, DIO_OP_READ, OFF_MM + 128 * KiB, 0x42);
	rep_err(ar, EXDEV, "read SUBMIT by the receiver");
	ar = a_io(a, actx, h, DIO_OP_WRITE, OFF_MM + 128 * KiB, 0xee);
	rep_err(ar, EXDEV, "write SUBMIT by the receiver");
	/* What any holder of the descriptor may do. */
	rep_ok(ACALL(a, .op = A_QUERY, .ctx = actx, .h = h), "QUERY by the receiver");
	ar = ACALL(a, .op = A_STAT, .ctx = actx);
	rep_ok(ar, "STAT by the receiver");
	assert_int_equal(ar.st.flags, DIO_STAT_PRIVATE);
	assert_int_equal(ar.st.nr_handles, 1);
	ar = ACALL(a, .op = A_OPEN, .ctx = actx, .fd = aro);
	rep_ok(ar, "OPEN by the receiver");
	assert_int_equal(ar.ret, h);
	rep_ok(ACALL(a, .op = A_CLOSEH, .ctx = actx, .h = h), "CLOSE by the receiver");

	/* The sender's requests are all there, for the sender. */
	assert_int_equal(sys_dio_wait(ctx, rp, N, &to), N);
	for (int i = 0; i < N; i++)
		assert_int_equal(r[i].result, BLK);
	assert_int_equal(first_diff(arena + ARENA_BUFS, N * BLK, 0x42), -1);
	disk_is(OFF_MM + 128 * KiB, N * BLK, 0x42, "after the receiver's write");
	assert_int_equal(tl_slab_wait("dio_kreq", 0, 5), 0);
}

/*
 * The submitter (uid 1000) exits with reads in flight while another
 * process (root, which got the descriptor by SCM_RIGHTS) holds it: that
 * process's COLLECT and WAIT are EXDEV and write nothing into its memory
 * at the requests' addresses; closing the descriptor frees everything.
 */
static void test_submitter_exits_with_io_in_flight(void **state)
{
	enum { N = 8 };
	struct agent *s;
	struct dio_request *got[N], *rp[N];
	int fd = open_disk(disk, O_RDWR), sctx, sfd, h, ctx, ret;
	struct arep ar;

	assert_true(tl_dio_caches_drained(10));
	s = agent(U_ALICE);
	sfd = agent_give(s, fd);
	tl_fd_close(fd);
	ar = ACALL(s, .op = A_INIT, .flags = DIO_PRIVATE);
	rep_ok(ar, "INIT by uid 1000");
	sctx = (int)ar.ret;
	ar = ACALL(s, .op = A_OPEN, .ctx = sctx, .fd = sfd);
	rep_ok(ar, "OPEN by uid 1000");
	h = (int)ar.ret;
	ctx = agent_take(s, sctx);
	assert_int_equal(tl_scsi_debug_ndelay(500000000), 0);	/* 500 ms */
	ar = ACALL(s, .op = A_SUBMIT_ARENA, .ctx = sctx, .h = h, .nr = N, .len = BLK,
		   .off = OFF_MM, .aoff = ARENA_REQS);
	assert_int_equal(ar.ret, N);
	agent_exit(s);

	/* Our copy of the arena is where the kernel would write results. */
	memset(arena, 0x5c, ARENA_SZ);
	memset(got, 0x5c, sizeof(got));
	ret = sys_dio_collect(ctx, got, 1, N, &(struct timespec){ 3, 0 });
	want_err(ret, EXDEV, "COLLECT of the dead submitter's requests");
	for (int i = 0; i < N; i++)
		rp[i] = (struct dio_request *)(arena + ARENA_REQS) + i;
	ret = sys_dio_wait(ctx, rp, N, &(struct timespec){ 3, 0 });
	want_err(ret, EXDEV, "WAIT for the dead submitter's requests");
	assert_int_equal(first_diff(arena, ARENA_SZ, 0x5c), -1);
	assert_int_equal(first_diff(got, sizeof(got), 0x5c), -1);
	/* Closing the last descriptor frees the requests, handle, context. */
	tl_fd_close(ctx);
	assert_true(tl_dio_caches_drained(20));
}

/* Nothing of any test is left: requests, descriptors, handles, contexts. */
static void test_nothing_left(void **state)
{
	assert_true(tl_dio_caches_drained(20));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_forked_child_cannot_reap, sec_cleanup),
		cmocka_unit_test_teardown(test_forked_child_cannot_submit, sec_cleanup),
		cmocka_unit_test_teardown(test_scm_rights_receiver_cannot_do_io, sec_cleanup),
		cmocka_unit_test_teardown(test_submitter_exits_with_io_in_flight, sec_cleanup),
		cmocka_unit_test_teardown(test_nothing_left, sec_cleanup),
	};

	return SEC_RUN("security_owner", tests);
}
