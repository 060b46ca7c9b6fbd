// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Batched direct I/O, completions: WAIT and COLLECT (each request
 * reported once, partial room, timeouts, EINTR, EAGAIN), poll and epoll,
 * one completion queue per descriptor (also across fork()).
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

/* WAIT in any order and COLLECT report each request exactly once. */
static void test_wait_and_collect(void **state)
{
	enum { N = 16 };
	struct dio_request r[N], *rp[N], *got[N];
	uint8_t *buf = tl_xalloc(N * 4096, 0);
	int i;

	for (i = 0; i < N; i++) {
		dio_req_prep_read(&r[i], d.h, buf + i * 4096, 4096, i * 4096);
		r[i].result = SENTINEL;
		rp[i] = &r[i];
	}
	/* WAIT for all in reverse order. */
	assert_int_equal(tl_dio_submit(d.ctx, rp, N), N);
	for (i = 0; i < N; i++)
		got[i] = rp[N - 1 - i];
	assert_int_equal(tl_dio_wait(d.ctx, got, N, NULL), N);
	for (i = 0; i < N; i++)
		assert_int_equal(r[i].result, 4096);
	assert_int_equal(tl_dio_collect(d.ctx, got, 0, N, &ts_zero), 0);

	/* WAIT for three, COLLECT gets the other thirteen. */
	for (i = 0; i < N; i++)
		r[i].result = SENTINEL;
	assert_int_equal(tl_dio_submit(d.ctx, rp, N), N);
	got[0] = rp[5];
	got[1] = rp[0];
	got[2] = rp[15];
	assert_int_equal(tl_dio_wait(d.ctx, got, 3, NULL), 3);
	assert_int_equal(r[5].result, 4096);
	assert_int_equal(r[0].result, 4096);
	assert_int_equal(r[15].result, 4096);
	{
		struct dio_request *rest[N - 3];
		int k = 0;

		for (i = 0; i < N; i++)
			if (i != 0 && i != 5 && i != 15)
				rest[k++] = rp[i];
		collect_exactly(d.ctx, rest, N - 3);
	}
	for (i = 0; i < N; i++)
		assert_int_equal(r[i].result, 4096);
	/* A reported request is gone: WAIT does not know it any more. */
	assert_int_equal(tl_dio_wait(d.ctx, rp, 1, &ts_zero), -ENOENT);
	free(buf);
}

static void test_collect_partial_room(void **state)
{
	enum { N = 12 };
	struct dio_request r[N], *rp[N], *got[N];
	uint8_t *buf = tl_xalloc(N * 4096, 0);
	int i, n = 0, ret;

	for (i = 0; i < N; i++) {
		dio_req_prep_read(&r[i], d.h, buf + i * 4096, 4096, i * 4096);
		rp[i] = &r[i];
	}
	assert_int_equal(tl_dio_submit(d.ctx, rp, N), N);
	/* Wait for all twelve, then take them five at a time. */
	for (i = 0; i < N; i++)
		got[i] = NULL;
	while (n < N) {
		ret = tl_dio_collect(d.ctx, got + n, 1, (N - n) < 5 ? N - n : 5, NULL);
		assert_true(ret >= 1 && ret <= 5);
		n += ret;
	}
	for (i = 0; i < N; i++)
		assert_int_equal(r[i].result, 4096);
	assert_int_equal(tl_dio_collect(d.ctx, got, 0, N, &ts_zero), 0);
	free(buf);
}

/* poll() and epoll: readable exactly while completions are unreported. */
static void test_poll_epoll(void **state)
{
	struct pollfd pfd = { .fd = d.ctx, .events = POLLIN };
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct dio_request r[2], *rp[2] = { &r[0], &r[1] }, *got[2];
	uint8_t *buf = tl_xalloc(2 * 4096, 0);
	int ep = epoll_create1(EPOLL_CLOEXEC), et = epoll_create1(EPOLL_CLOEXEC);

	assert_true(ep >= 0 && et >= 0);
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, d.ctx, &ev), 0);
	ev.events = EPOLLIN | EPOLLET;
	assert_int_equal(epoll_ctl(et, EPOLL_CTL_ADD, d.ctx, &ev), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(epoll_wait(ep, &out, 1, 0), 0);
	assert_int_equal(epoll_wait(et, &out, 1, 0), 0);

	dio_req_prep_read(&r[0], d.h, buf, 4096, 0);
	dio_req_prep_read(&r[1], d.h, buf + 4096, 4096, 4096);
	assert_int_equal(tl_dio_submit(d.ctx, rp, 1), 1);
	assert_int_equal(poll(&pfd, 1, 10000), 1);
	assert_int_equal(pfd.revents, POLLIN);
	assert_int_equal(epoll_wait(ep, &out, 1, 10000), 1);
	assert_int_equal(out.events, EPOLLIN);
	assert_int_equal(epoll_wait(et, &out, 1, 10000), 1);
	/* Level-triggered stays readable; edge-triggered reported once. */
	assert_int_equal(epoll_wait(ep, &out, 1, 0), 1);
	assert_int_equal(epoll_wait(et, &out, 1, 0), 0);
	/* A second completion is a new edge. */
	assert_int_equal(tl_dio_submit(d.ctx, rp + 1, 1), 1);
	assert_int_equal(epoll_wait(et, &out, 1, 10000), 1);
	assert_int_equal(tl_dio_collect(d.ctx, got, 2, 2, NULL), 2);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	assert_int_equal(epoll_wait(ep, &out, 1, 0), 0);
	assert_int_equal(r[0].result, 4096);
	assert_int_equal(r[1].result, 4096);

	/* Readable again after WAIT reported one of two. */
	assert_int_equal(tl_dio_submit(d.ctx, rp, 2), 2);
	assert_int_equal(tl_dio_wait(d.ctx, rp, 1, NULL), 1);
	assert_int_equal(poll(&pfd, 1, 10000), 1);
	assert_int_equal(tl_dio_wait(d.ctx, rp + 1, 1, NULL), 1);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	close(ep);
	close(et);
	free(buf);
}

/* poll() of one descriptor: its result, with revents checked. */
static int poll1(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret = poll(&pfd, 1, ms);

	if (ret == 1 && pfd.revents != POLLIN)
		return -100 - pfd.revents;
	return ret;
}

/* A level-triggered epoll instance watching @fd. */
static int epoll_on(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
		close(ep);
		return -1;
	}
	return ep;
}

static int epoll_ready(int ep)
{
	struct epoll_event out;

	return epoll_wait(ep, &out, 1, 0);
}

/*
 * One request on @sub, with @other a descriptor of the same keyed context:
 * the completion is @sub's alone.  @other is not readable by poll() or
 * epoll, WAIT there does not know the request, COLLECT there finds nothing;
 * then @sub reports it, with the data of @off.
 */
static void queue_is_own(int sub, int other, int h, uint8_t *buf,
			 uint64_t off, uint64_t tag)
{
	struct dio_request r, *rp = &r, *got[2] = { NULL, NULL };
	int eps = epoll_on(sub), epo = epoll_on(other);
	uint8_t *want = tl_xalloc(4096, 0);

	assert_true(eps >= 0 && epo >= 0);
	tl_fill(want, 4096, tag);
	xpwrite(want, 4096, off);
	memset(buf, 0, 4096);
	dio_req_prep_read(&r, h, buf, 4096, off);
	r.result = SENTINEL;
	assert_int_equal(tl_dio_submit(sub, &rp, 1), 1);
	/* Known to be there: @sub polls readable first. */
	assert_int_equal(poll1(sub, 10000), 1);
	assert_int_equal(epoll_ready(eps), 1);
	/* Nothing of it on the other descriptor. */
	assert_int_equal(poll1(other, 0), 0);
	assert_int_equal(epoll_ready(epo), 0);
	assert_int_equal(sys_dio_wait(other, &rp, 1, &ts_zero), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(sys_dio_collect(other, got, 0, 2, &ts_zero), 0);
	assert_null(got[0]);
	assert_int_equal(r.result, SENTINEL);
	/* Still @sub's to report. */
	assert_int_equal(poll1(sub, 0), 1);
	assert_int_equal(sys_dio_collect(sub, got, 0, 2, &ts_zero), 1);
	assert_ptr_equal(got[0], &r);
	assert_int_equal(r.result, 4096);
	check_same(want, buf, 4096, "read reported on its own descriptor");
	assert_int_equal(poll1(sub, 0), 0);
	assert_int_equal(epoll_ready(eps), 0);
	assert_int_equal(poll1(other, 0), 0);
	close(eps);
	close(epo);
	free(want);
}

/* Two descriptors of one keyed context in one process: two queues. */
static void test_queue_per_descriptor(void **state)
{
	const uint64_t key = 0x7100;
	int a = tl_fd_keep(sys_dio_init(key, DIO_CREAT | DIO_EXCL));
	int b = tl_fd_keep(sys_dio_init(key, 0)), h;
	uint8_t *buf = tl_xalloc(4096, 0);
	struct dio_query q;

	assert_true(a >= 0 && b >= 0);
	assert_int_not_equal(a, b);
	h = sys_dio_open(a, d.fd, DIO_OPEN_NOCLAIM);
	assert_true(h >= 1);
	/* One context: the handle is b's too. */
	assert_int_equal(sys_dio_query(b, h, &q), 0);
	queue_is_own(a, b, h, buf, 30 * MiB, 7100);
	queue_is_own(b, a, h, buf, 30 * MiB + 4096, 7101);
	tl_fd_close(b);
	tl_fd_close(a);
	free(buf);
}

/* The child's steps for the test below; its exit status names a failure. */
static int queue_child(uint64_t key, int h, int to_child, int to_parent,
		       struct dio_request *parents, struct dio_request *mine,
		       uint8_t *buf, uint64_t off, uint64_t tag)
{
	struct dio_request *rp = parents, *got[2] = { NULL, NULL };
	uint8_t *want = tl_alloc(4096, 0);
	int b = sys_dio_init(key, 0), ep;
	char c;

	signal(SIGALRM, SIG_DFL);
	alarm(60);		/* never outlive a failed parent for long */
	if (b < 0 || !want)
		return 10;
	ep = epoll_on(b);
	if (ep < 0)
		return 11;
	/* Phase 1: the parent's request completed on its descriptor. */
	if (read(to_child, &c, 1) != 1)
		return 12;
	if (poll1(b, 0) != 0)
		return 13;
	if (epoll_ready(ep) != 0)
		return 14;
	if (sys_dio_wait(b, &rp, 1, &ts_zero) != -1 || errno != ENOENT)
		return 15;
	if (sys_dio_collect(b, got, 0, 2, &ts_zero) != 0 || got[0])
		return 16;
	if (write(to_parent, &c, 1) != 1)
		return 17;
	/* Phase 2: ours, on b, while the parent looks at its descriptor. */
	rp = mine;
	memset(buf, 0, 4096);
	dio_req_prep_read(mine, h, buf, 4096, off);
	mine->result = SENTINEL;
	if (sys_dio_submit(b, &rp, 1) != 1)
		return 18;
	if (poll1(b, 10000) != 1 || epoll_ready(ep) != 1)
		return 19;
	if (write(to_parent, &c, 1) != 1 || read(to_child, &c, 1) != 1)
		return 20;
	if (poll1(b, 0) != 1)
		return 21;
	if (sys_dio_collect(b, got, 0, 2, &ts_zero) != 1 || got[0] != mine)
		return 22;
	if (mine->result != 4096)
		return 23;
	tl_fill(want, 4096, tag);
	if (memcmp(want, buf, 4096))
		return 24;
	if (poll1(b, 0) != 0 || epoll_ready(ep) != 0)
		return 25;
	return 0;
}

/* A step of the exchange with the child failed: say how the child ended. */
static void child_step(bool ok, pid_t pid, const char *what)
{
	int st = 0;

	if (ok)
		return;
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	fail_msg("%s: child %s %d", what,
		 WIFEXITED(st) ? "exited with status" : "killed by signal",
		 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

/* A descriptor of the same key in a fork()ed child is a queue of its own. */
static void test_queue_per_descriptor_across_fork(void **state)
{
	const uint64_t key = 0x7102;
	const uint64_t off0 = 31 * MiB, off1 = 31 * MiB + 4096;
	struct dio_request r[2], *rp = &r[0], *cp = &r[1], *got[2] = { NULL };
	int a = tl_fd_keep(sys_dio_init(key, DIO_CREAT | DIO_EXCL));
	int to_child[2], to_parent[2], h, ep, st;
	uint8_t *buf = tl_xalloc(2 * 4096, 0), *want = tl_xalloc(2 * 4096, 0);
	char c = 0;
	pid_t pid;

	assert_true(a >= 0);
	h = sys_dio_open(a, d.fd, DIO_OPEN_NOCLAIM);
	assert_true(h >= 1);
	ep = tl_fd_keep(epoll_on(a));
	assert_true(ep >= 0);
	tl_fill(want, 4096, 7102);
	tl_fill(want + 4096, 4096, 7103);
	xpwrite(want, 4096, off0);
	xpwrite(want + 4096, 4096, off1);
	assert_int_equal(pipe2(to_child, O_CLOEXEC), 0);
	assert_int_equal(pipe2(to_parent, O_CLOEXEC), 0);
	dio_req_prep_read(&r[0], h, buf, 4096, off0);
	r[0].result = SENTINEL;

	/* A child that died early makes our write fail, not kill us. */
	signal(SIGPIPE, SIG_IGN);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		_exit(queue_child(key, h, to_child[0], to_parent[1], &r[0],
				  &r[1], buf + 4096, off1, 7103));
	}
	close(to_child[0]);
	close(to_parent[1]);
	/* Phase 1: ours completes on a; the child looks at its b. */
	assert_int_equal(tl_dio_submit(a, &rp, 1), 1);
	assert_int_equal(poll1(a, 10000), 1);
	child_step(write(to_child[1], &c, 1) == 1, pid, "phase 1");
	child_step(read(to_parent[0], &c, 1) == 1, pid, "phase 1");
	assert_int_equal(poll1(a, 0), 1);
	assert_int_equal(sys_dio_collect(a, got, 0, 2, &ts_zero), 1);
	assert_ptr_equal(got[0], &r[0]);
	assert_int_equal(r[0].result, 4096);
	check_same(want, buf, 4096, "read reported on the parent's descriptor");
	/* Phase 2: the child's completes on b; nothing of it here. */
	child_step(read(to_parent[0], &c, 1) == 1, pid, "phase 2");
	assert_int_equal(poll1(a, 0), 0);
	assert_int_equal(epoll_ready(ep), 0);
	assert_int_equal(sys_dio_wait(a, &cp, 1, &ts_zero), -1);
	assert_int_equal(errno, ENOENT);
	got[0] = NULL;
	assert_int_equal(sys_dio_collect(a, got, 0, 2, &ts_zero), 0);
	assert_null(got[0]);
	child_step(write(to_child[1], &c, 1) == 1, pid, "phase 2");
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(poll1(a, 0), 0);
	close(to_child[1]);
	close(to_parent[0]);
	tl_fd_close(ep);
	tl_fd_close(a);
	free(buf);
	free(want);
}

/*
 * COLLECT with min_nr above what completes returns what there is, late.
 * Both reads done and neither reported, whatever the machine's speed: they
 * are submitted one after the other, and an edge-triggered epoll instance
 * reports each completion as an edge (test_poll_epoll), which the test
 * waits for (a sleep of 500 ms stood there: a read late by that much was
 * missing from COLLECT's count).  The timeouts are lower bounds.
 */
static void test_collect_timeout(void **state)
{
	struct dio_request r[2], *rp[2] = { &r[0], &r[1] }, *got[4];
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET }, out;
	uint8_t *buf = tl_xalloc(2 * 4096, 0);
	int et = epoll_create1(EPOLL_CLOEXEC);
	struct timespec ts = ts_ms(200);
	uint64_t t0;

	assert_true(et >= 0);
	assert_int_equal(epoll_ctl(et, EPOLL_CTL_ADD, d.ctx, &ev), 0);
	dio_req_prep_read(&r[0], d.h, buf, 4096, 0);
	dio_req_prep_read(&r[1], d.h, buf + 4096, 4096, 4096);
	assert_int_equal(tl_dio_submit(d.ctx, rp, 1), 1);
	assert_int_equal(epoll_wait(et, &out, 1, 10000), 1);	/* r[0] done */
	assert_int_equal(tl_dio_submit(d.ctx, rp + 1, 1), 1);
	assert_int_equal(epoll_wait(et, &out, 1, 10000), 1);	/* r[1] done */
	close(et);
	t0 = tl_now_ns();
	assert_int_equal(tl_dio_collect(d.ctx, got, 4, 4, &ts), 2);
	assert_true(tl_now_ns() - t0 >= 200000000ULL);
	assert_int_equal(r[0].result, 4096);
	assert_int_equal(r[1].result, 4096);
	/* Nothing at all: 0 after the timeout, and at once with timeout 0. */
	ts = ts_ms(50);
	t0 = tl_now_ns();
	assert_int_equal(tl_dio_collect(d.ctx, got, 1, 4, &ts), 0);
	assert_true(tl_now_ns() - t0 >= 50000000ULL);
	assert_int_equal(tl_dio_collect(d.ctx, got, 1, 4, &ts_zero), 0);
	assert_int_equal(tl_dio_collect(d.ctx, got, 0, 4, NULL), 0);
	free(buf);
}

/*
 * WAIT on a request that is still at the device: scsi_debug completes it
 * 900 ms (x tl_slow_factor()) after queueing it.  Not done for WAIT with
 * no time and with 50 ms: the steps from the submission to the end of the
 * second WAIT (two calls and a 50 ms sleep) take under 100 ms on a loaded
 * guest, a margin of 800 ms.  The delay is also a lower bound of the wait
 * for it, as the timeouts are.
 */
static void test_wait_timeout_inflight(void **state)
{
	const long delay_ms = 900 * tl_slow_factor();
	struct dio_request r, *rp = &r;
	struct dio_wait w = { .size = sizeof(w), .nr = 1 };
	uint8_t *buf = tl_xalloc(4096, 0);
	struct timespec ts = ts_ms(50);
	uint64_t t0;
	uint64_t addr = (uintptr_t)rp;

	assert_int_equal(tl_scsi_debug_delay_ms(delay_ms), 0);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.result = SENTINEL;
	t0 = tl_now_ns();
	assert_int_equal(submit1(&r), 1);
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, &ts_zero), 0);
	assert_int_equal(r.result, SENTINEL);
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, &ts), 0);
	assert_true(tl_now_ns() - t0 >= 50000000ULL);
	assert_int_equal(r.result, SENTINEL);
	/* A timeout too far for the clock is as good as none. */
	w.reqs = (uintptr_t)&addr;
	w.timeout_ns = INT64_MAX;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_WAIT, &w), 1);
	assert_true(tl_now_ns() - t0 >= (uint64_t)(delay_ms - 50) * 1000000);
	assert_int_equal(r.result, 4096);
	/* Negative timeouts other than DIO_WAIT_FOREVER are refused. */
	w.timeout_ns = -2;
	assert_int_equal(tl_ioctl(d.ctx, DIO_IOC_WAIT, &w), -EINVAL);
	free(buf);
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static void alarm_in_ms(long ms)
{
	struct itimerval it = { .it_value = { ms / 1000, (ms % 1000) * 1000 } };
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */

	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGALRM, &sa, NULL), 0);
	assert_int_equal(setitimer(ITIMER_REAL, &it, NULL), 0);
}

/*
 * A signal ends a blocking COLLECT or WAIT; the completion stays.  The
 * signal comes 50 ms after the submission, the completion 900 ms (x
 * tl_slow_factor()) after it: a margin of 850 ms for a timer signal to
 * arrive late.
 */
static void test_eintr(void **state)
{
	struct dio_request r, *rp = &r, *got;
	uint8_t *buf = tl_xalloc(4096, 0);

	assert_int_equal(tl_scsi_debug_delay_ms(900 * tl_slow_factor()), 0);
	dio_req_prep_read(&r, d.h, buf, 4096, 0);
	r.result = SENTINEL;
	alarms = 0;
	assert_int_equal(submit1(&r), 1);
	alarm_in_ms(50);
	assert_int_equal(tl_dio_collect(d.ctx, &got, 1, 1, NULL), -EINTR);
	assert_int_equal(alarms, 1);
	assert_int_equal(r.result, SENTINEL);
	assert_int_equal(tl_dio_collect(d.ctx, &got, 1, 1, NULL), 1);
	assert_ptr_equal(got, &r);
	assert_int_equal(r.result, 4096);

	r.result = SENTINEL;
	assert_int_equal(submit1(&r), 1);
	alarm_in_ms(50);
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, NULL), -EINTR);
	assert_int_equal(alarms, 2);
	assert_int_equal(r.result, SENTINEL);
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, 4096);
	signal(SIGALRM, SIG_DFL);
	free(buf);
}

/* max_inflight counts submitted and unreported requests per descriptor. */
static void test_eagain(void **state)
{
	enum { N = 10 };
	struct dio_request r[N], *rp[N], *got[N];
	struct dio_features f;
	uint8_t *buf = tl_xalloc(N * 4096, 0);
	int i, ctx2, h2;

	assert_int_equal(tl_write_file(P_INFLIGHT, "8"), 0);
	assert_int_equal(sys_dio_features(&f), 0);
	assert_int_equal(f.max_inflight, 8);
	for (i = 0; i < N; i++) {
		dio_req_prep_read(&r[i], d.h, buf + i * 4096, 4096, i * 4096);
		r[i].result = SENTINEL;
		rp[i] = &r[i];
	}
	assert_int_equal(tl_dio_submit(d.ctx, rp, N), 8);
	assert_int_equal(tl_dio_submit(d.ctx, rp + 8, 2), -EAGAIN);
	assert_int_equal(r[8].result, SENTINEL);
	/* Completed but not reported still counts. */
	assert_int_equal(tl_dio_wait(d.ctx, rp, 1, NULL), 1);
	assert_int_equal(tl_dio_submit(d.ctx, rp + 8, 2), 1);
	assert_int_equal(tl_dio_submit(d.ctx, rp + 9, 1), -EAGAIN);
	/* The limit is per descriptor. */
	ctx2 = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE));
	assert_true(ctx2 >= 0);
	h2 = sys_dio_open(ctx2, d.fd, DIO_OPEN_NOCLAIM);
	assert_true(h2 >= 1);
	r[9].handle = h2;
	assert_int_equal(tl_dio_submit(ctx2, rp + 9, 1), 1);
	assert_int_equal(tl_dio_wait(ctx2, rp + 9, 1, NULL), 1);
	assert_int_equal(r[9].result, 4096);
	tl_fd_close(ctx2);
	collect_exactly(d.ctx, rp + 1, 8);
	for (i = 0; i < N; i++)
		assert_int_equal(r[i].result, 4096);
	/* Room again. */
	r[9].handle = d.h;
	assert_int_equal(tl_dio_submit(d.ctx, rp + 2, 8), 8);
	assert_int_equal(tl_dio_collect(d.ctx, got, 8, 8, NULL), 8);
	assert_int_equal(tl_write_file(P_INFLIGHT, "0"), 0);
	assert_int_equal(tl_dio_submit(d.ctx, rp, 1), -EAGAIN);
	assert_int_equal(tl_write_file(P_INFLIGHT, inflight_orig), 0);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_wait_and_collect, setup_sd512),
		T(test_collect_partial_room, setup_sd512),
		T(test_poll_epoll, setup_sd512),
		T(test_queue_per_descriptor, setup_sd512),
		T(test_queue_per_descriptor_across_fork, setup_sd512),
		T(test_collect_timeout, setup_sd512),
		T(test_wait_timeout_inflight, setup_sd512),
		T(test_eintr, setup_sd512),
		T(test_eagain, setup_sd512),
		T(test_all_freed_and_unload, NULL),
	};

	return IO_RUN("io_wait", tests);
}
