// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Batched direct I/O under faults: processes killed by SIGKILL with 256
 * requests in flight (after SUBMIT returned, while blocked in COLLECT, at
 * random moments that may fall inside SUBMIT, with threads in WAIT and
 * COLLECT), and threads sharing one descriptor.  Afterwards nothing may be
 * left: no descriptor, context, handle or request object, no module
 * reference, and the module must unload.  scsi_debug delays every command
 * so that the requests are still at the device when the process dies.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

#define SD_DRV		"/sys/bus/pseudo/drivers/scsi_debug"
#define NR_INFLIGHT	256
#define KILL_ITERS	100
#define BLK		4096

static char disk[64];

/* ---- the victim ---- */

struct victim {
	int ctx;
	int h;
	struct dio_request *r;
	struct dio_request **rp;
	uint8_t *buf;
};

static int victim_init(struct victim *v, unsigned int nr)
{
	int fd = open(disk, O_RDWR | O_DIRECT | O_CLOEXEC);
	unsigned int i;

	v->ctx = sys_dio_init(0, DIO_PRIVATE);
	if (fd < 0 || v->ctx < 0)
		return -1;
	v->h = sys_dio_open(v->ctx, fd, DIO_OPEN_NOCLAIM);
	close(fd);
	v->r = calloc(nr, sizeof(*v->r));
	v->rp = calloc(nr, sizeof(*v->rp));
	v->buf = tl_alloc((size_t)nr * BLK, 0x33);
	if (v->h < 1 || !v->r || !v->rp || !v->buf)
		return -1;
	for (i = 0; i < nr; i++) {
		if (i % 2)
			dio_req_prep_read(&v->r[i], v->h, v->buf + i * BLK,
					  BLK, (uint64_t)i * BLK);
		else
			dio_req_prep_write(&v->r[i], v->h, v->buf + i * BLK,
					   BLK, (32ULL << 20) + i * BLK);
		v->rp[i] = &v->r[i];
	}
	return 0;
}

static void *victim_waiter(void *arg)
{
	struct victim *v = arg;

	sys_dio_wait(v->ctx, v->rp + NR_INFLIGHT - 1, 1, NULL);
	pause();
	return NULL;
}

static void *victim_collector(void *arg)
{
	struct victim *v = arg;
	struct dio_request *got[NR_INFLIGHT];

	for (;;)
		sys_dio_collect(v->ctx, got, 1, NR_INFLIGHT / 2, NULL);
	return NULL;
}

/*
 * Modes: 0 pause after SUBMIT; 1 block in COLLECT for more than there
 * are; 2 threads in WAIT and COLLECT while the main one submits more on a
 * second descriptor; 3 as 0, but the parent does not wait to kill.
 */
static void victim(int tell, int mode)
{
	struct dio_request *got[NR_INFLIGHT];
	struct victim v, v2;
	pthread_t t;

	if (victim_init(&v, NR_INFLIGHT))
		_exit(3);
	if (sys_dio_submit(v.ctx, v.rp, NR_INFLIGHT) != NR_INFLIGHT)
		_exit(4);
	if (mode == 2) {
		if (victim_init(&v2, NR_INFLIGHT))
			_exit(3);
		pthread_create(&t, NULL, victim_waiter, &v);
		pthread_create(&t, NULL, victim_collector, &v);
		if (sys_dio_submit(v2.ctx, v2.rp, NR_INFLIGHT) != NR_INFLIGHT)
			_exit(4);
	}
	if (write(tell, "s", 1) != 1)
		_exit(5);
	if (mode == 1)
		sys_dio_collect(v.ctx, got, NR_INFLIGHT, NR_INFLIGHT, NULL);
	for (;;)
		pause();
}

static int setup(void **state)
{
	if (tl_dio_load())
		return -1;
	if (tl_scsi_debug_load("dev_size_mb=64 dif=1 dix=1 guard=0", disk,
			       sizeof(disk)))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	tl_scsi_debug_ndelay(0);
	return 0;
}

static void test_sigkill_with_inflight(void **state)
{
	unsigned int seed = 12345;
	uint64_t t0 = tl_now_ns();
	int i, p[2], st;
	pid_t pid;
	char c;

	assert_int_equal(tl_slab_active("dio_kreq"), 0);
	assert_int_equal(tl_slab_active("dio_file"), 0);
	assert_int_equal(tl_scsi_debug_ndelay(20000000), 0);	/* 20 ms a command */
	for (i = 0; i < KILL_ITERS; i++) {
		int mode = i % 4;

		assert_int_equal(pipe2(p, O_CLOEXEC), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(p[0]);
			victim(p[1], mode);
		}
		close(p[1]);
		/* Killed at any moment: no verdict depends on which. */
		if (mode == 3)
			usleep(rand_r(&seed) % 30000);
		else
			assert_int_equal(read(p[0], &c, 1), 1);
		assert_int_equal(kill(pid, SIGKILL), 0);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		close(p[0]);
		if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
			fail_msg("victim %d (mode %d) ended with status %#x",
				 i, mode, st);
	}
	print_message("# %d victims killed in %.1f s\n", KILL_ITERS,
		      (tl_now_ns() - t0) / 1e9);
	/*
	 * What the last victims left completes 20 ms a command later, in
	 * rounds of the device's queue, and is reaped: 0.2 s after the last
	 * kill on 6.1 beside a kernel build; 60 s (x tl_slow_factor()) is a
	 * hang guard.
	 */
	assert_true(tl_slab_reaches("dio_kreq", 0, 60));
	assert_true(tl_slab_reaches("dio_file", 0, 10));
	assert_true(tl_slab_reaches("dio_handle", 0, 10));
	assert_true(tl_slab_reaches("dio_ctx", 0, 10));
	print_message("# all reaped after %.1f s\n", (tl_now_ns() - t0) / 1e9);
}

/* Threads sharing one descriptor, each waiting for its own requests. */
struct worker {
	pthread_t t;
	int ctx;
	int h;
	int id;
	int errors;
};

static void *worker_run(void *arg)
{
	enum { N = 16, ROUNDS = 40 };
	struct worker *w = arg;
	struct dio_request r[N], *rp[N];
	uint8_t *buf = tl_alloc(2 * N * BLK, 0x33);
	uint64_t base = (uint64_t)w->id * 2 * N * BLK;
	int round, i;

	if (!buf) {
		w->errors++;
		return NULL;
	}
	for (round = 0; round < ROUNDS; round++) {
		for (i = 0; i < N; i++) {
			memset(buf + i * BLK, w->id * 31 + round + i, BLK);
			dio_req_prep_write(&r[i], w->h, buf + i * BLK, BLK,
					   base + i * BLK);
			rp[i] = &r[i];
		}
		if (sys_dio_submit(w->ctx, rp, N) != N ||
		    sys_dio_wait(w->ctx, rp, N, NULL) != N)
			w->errors++;
		for (i = 0; i < N; i++) {
			if (r[i].result != BLK)
				w->errors++;
			dio_req_prep_read(&r[i], w->h, buf + (N + i) * BLK,
					  BLK, base + i * BLK);
		}
		if (sys_dio_submit(w->ctx, rp, N) != N ||
		    sys_dio_wait(w->ctx, rp, N, NULL) != N)
			w->errors++;
		for (i = 0; i < N; i++)
			if (r[i].result != BLK ||
			    memcmp(buf + i * BLK, buf + (N + i) * BLK, BLK))
				w->errors++;
	}
	free(buf);
	return NULL;
}

static void test_threads_share_descriptor(void **state)
{
	enum { T = 4 };
	struct worker w[T];
	int ctx = sys_dio_init(0, DIO_PRIVATE), fd, h, i;
	struct dio_request *got[1];

	assert_int_equal(tl_scsi_debug_ndelay(0), 0);
	fd = open(disk, O_RDWR | O_DIRECT | O_CLOEXEC);
	assert_true(ctx >= 0 && fd >= 0);
	h = sys_dio_open(ctx, fd, 0);
	assert_true(h >= 1);
	for (i = 0; i < T; i++) {
		w[i] = (struct worker){ .ctx = ctx, .h = h, .id = i };
		assert_int_equal(pthread_create(&w[i].t, NULL, worker_run,
						&w[i]), 0);
	}
	for (i = 0; i < T; i++) {
		assert_int_equal(pthread_join(w[i].t, NULL), 0);
		assert_int_equal(w[i].errors, 0);
	}
	assert_int_equal(sys_dio_collect(ctx, got, 0, 1, &(struct timespec){ 0, 0 }), 0);
	assert_int_equal(tl_slab_active("dio_kreq"), 0);
	close(ctx);
	close(fd);
}

/*
 * Threads sharing one descriptor all in COLLECT with min_nr = nr = N,
 * while N requests per thread complete: whichever thread a completion
 * wakes, each call returns exactly N (a call woken by completions another
 * thread then takes must wait on, not return short).
 */
enum { CT = 4, CN = 8, CROUNDS = 50 };

struct collector {
	pthread_t t;
	int ctx;
	pthread_barrier_t *go, *done;
	int short_returns;
	int results_bad;
};

static void *collector_run(void *arg)
{
	struct collector *c = arg;
	struct dio_request *got[CN];
	/*
	 * A bound, not a hang: a call that missed its wake-up returns short
	 * after it.  The round's 32 reads (200 us each at the device) are
	 * done in milliseconds on a loaded guest; 10 s (x tl_slow_factor()).
	 */
	struct timespec ts = { 10 * tl_slow_factor(), 0 };
	int round, n, i;

	for (round = 0; round < CROUNDS; round++) {
		pthread_barrier_wait(c->go);
		n = sys_dio_collect(c->ctx, got, CN, CN, &ts);
		if (n != CN)
			c->short_returns++;
		for (i = 0; i < n; i++)
			if (got[i]->result != BLK)
				c->results_bad++;
		pthread_barrier_wait(c->done);
	}
	return NULL;
}

static void test_collectors_get_min_nr(void **state)
{
	struct dio_request r[CT * CN], *rp[CT * CN];
	pthread_barrier_t go, done;
	struct collector c[CT];
	int ctx = sys_dio_init(0, DIO_PRIVATE), fd, h, i, round, shorts = 0;
	uint8_t *buf = tl_alloc(CT * CN * BLK, 0x5a);

	assert_non_null(buf);
	/* A little delay, so that completions trickle in over the waiters. */
	assert_int_equal(tl_scsi_debug_ndelay(200000), 0);
	fd = open(disk, O_RDWR | O_CLOEXEC);
	assert_true(ctx >= 0 && fd >= 0);
	h = sys_dio_open(ctx, fd, 0);
	assert_true(h >= 1);
	assert_int_equal(pthread_barrier_init(&go, NULL, CT + 1), 0);
	assert_int_equal(pthread_barrier_init(&done, NULL, CT + 1), 0);
	for (i = 0; i < CT; i++) {
		c[i] = (struct collector){ .ctx = ctx, .go = &go, .done = &done };
		assert_int_equal(pthread_create(&c[i].t, NULL, collector_run, &c[i]), 0);
	}
	for (round = 0; round < CROUNDS; round++) {
		for (i = 0; i < CT * CN; i++) {
			dio_req_prep_read(&r[i], h, buf + i * BLK, BLK,
					  (uint64_t)(round * CT * CN + i) * BLK);
			rp[i] = &r[i];
		}
		pthread_barrier_wait(&go);
		/*
		 * Let the collectors go to sleep first: most rounds they are
		 * asleep by then; a round where one is not is as valid.
		 */
		usleep(2000);
		assert_int_equal(sys_dio_submit(ctx, rp, CT * CN), CT * CN);
		pthread_barrier_wait(&done);
	}
	for (i = 0; i < CT; i++) {
		assert_int_equal(pthread_join(c[i].t, NULL), 0);
		shorts += c[i].short_returns;
		assert_int_equal(c[i].results_bad, 0);
	}
	assert_int_equal(shorts, 0);
	assert_int_equal(tl_slab_active("dio_kreq"), 0);
	pthread_barrier_destroy(&go);
	pthread_barrier_destroy(&done);
	free(buf);
	close(ctx);
	close(fd);
}

/* Nothing left behind: the device is free, the module unloads. */
static void test_all_freed_and_unload(void **state)
{
	assert_int_equal(tl_scsi_debug_ndelay(0), 0);
	assert_true(tl_slab_reaches("dio_kreq", 0, 10));
	assert_true(tl_slab_reaches("dio_file", 0, 10));
	assert_true(tl_slab_reaches("dio_handle", 0, 10));
	assert_true(tl_slab_reaches("dio_ctx", 0, 10));
	assert_int_equal(tl_dio_refcnt(), 0);
	assert_int_equal(tl_scsi_debug_unload(), 0);
	assert_int_equal(tl_dio_unload(), 0);
	assert_false(tl_module_loaded("dio_batch"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_sigkill_with_inflight, teardown),
		cmocka_unit_test_teardown(test_threads_share_descriptor, teardown),
		cmocka_unit_test_teardown(test_collectors_get_min_nr, teardown),
		cmocka_unit_test_teardown(test_all_freed_and_unload, teardown),
	};

	return cmocka_run_group_tests_name("io_faults", tests, setup, NULL);
}
