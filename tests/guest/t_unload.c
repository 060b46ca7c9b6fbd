// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Module unload races: delete_module() hammered from another process
 * (O_NONBLOCK and plain, never O_TRUNC) while contexts exist, while
 * requests are in flight on descriptors that are already closed or whose
 * process was killed, and while another process loads the module again
 * and uses it.  An unload must never succeed while anything of the module
 * is alive (the refusal is EWOULDBLOCK, or EBUSY while the module is
 * coming or going), must succeed once everything is gone, and the module
 * must load again and work.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

#define BLK		4096
#define MiB		(1024 * 1024ULL)

static char disk[64];
static bool debug_kernel;

/* ---- helpers ---- */

/*
 * Load the module; a concurrent unload may still be finishing (its exit
 * function: milliseconds): up to 2 s (x tl_slow_factor()).
 */
static int dio_reload(void)
{
	int ret = 0, i;

	for (i = 0; i < 100 * tl_slow_factor(); i++) {
		ret = tl_dio_load();
		if (ret != -EEXIST && ret != -EBUSY)
			break;
		usleep(20000);
	}
	return ret;
}

/* A context with a handle on the disk; returns the context descriptor. */
static int ctx_with_handle(uint64_t key, int *h)
{
	int fd = open(disk, O_RDWR | O_CLOEXEC), ctx;

	assert_true(fd >= 0);
	ctx = key ? sys_dio_init(key, DIO_CREAT) : sys_dio_init(0, DIO_PRIVATE);
	assert_true(ctx >= 0);
	*h = sys_dio_open(ctx, fd, DIO_OPEN_NOCLAIM);
	assert_true(*h >= 1);
	close(fd);
	return ctx;
}

/* ---- the unloader: another process calling delete_module() ---- */

struct unloader {
	volatile int stop;		/* parent -> child */
	volatile int stop_on_success;	/* stop at the first unload */
	volatile long attempts;
	volatile long ewouldblock;
	volatile long ebusy;
	volatile long enoent;
	volatile long other;
	volatile int other_errno;
	volatile long successes;
	volatile uint64_t first_success_ns;
	volatile int usleep_us;
};

static struct unloader *u;
static pid_t unloader_pid = -1;

static void unloader_run(void)
{
	while (!u->stop) {
		/* Both flavours of the call; never O_TRUNC (forced). */
		int flags = (u->attempts & 1) ? O_NONBLOCK : 0;
		long r = syscall(SYS_delete_module, "dio_batch", flags);

		u->attempts++;
		if (r == 0) {
			if (!u->successes)
				u->first_success_ns = tl_now_ns();
			u->successes++;
			if (u->stop_on_success)
				break;
		} else if (errno == EWOULDBLOCK) {
			u->ewouldblock++;
		} else if (errno == EBUSY) {
			u->ebusy++;
		} else if (errno == ENOENT) {
			u->enoent++;
		} else {
			u->other++;
			u->other_errno = errno;
		}
		if (u->usleep_us)
			usleep(u->usleep_us);
	}
	_exit(0);
}

static void unloader_start(int usleep_us, bool stop_on_success)
{
	memset((void *)u, 0, sizeof(*u));
	u->usleep_us = usleep_us;
	u->stop_on_success = stop_on_success;
	unloader_pid = fork();
	assert_true(unloader_pid >= 0);
	if (unloader_pid == 0)
		unloader_run();
}

static void unloader_stop(void)
{
	int st;

	if (unloader_pid < 0)
		return;
	u->stop = 1;
	assert_int_equal(waitpid(unloader_pid, &st, 0), unloader_pid);
	unloader_pid = -1;
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void unloader_print(const char *what)
{
	print_message("# %s: %ld delete_module calls: %ld EWOULDBLOCK, %ld EBUSY, "
		      "%ld ENOENT, %ld other (last %d), %ld unloads\n", what,
		      u->attempts, u->ewouldblock, u->ebusy, u->enoent,
		      u->other, u->other_errno, u->successes);
}

/* ---- set-up ---- */

static int setup(void **state)
{
	int dbg = tl_debug_kernel();

	if (dbg < 0)
		return -1;
	debug_kernel = dbg;
	u = mmap(NULL, sizeof(*u), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (u == MAP_FAILED)
		return -1;
	if (tl_dio_load())
		return -1;
	return tl_scsi_debug_load("dev_size_mb=16", disk, sizeof(disk));
}

static int test_teardown(void **state)
{
	if (unloader_pid > 0) {
		kill(unloader_pid, SIGKILL);
		waitpid(unloader_pid, NULL, 0);
		unloader_pid = -1;
	}
	tl_scsi_debug_ndelay(0);
	return 0;
}

static int teardown(void **state)
{
	test_teardown(state);
	tl_scsi_debug_unload();
	return dio_reload();
}

/* ---- tests ---- */

/*
 * A context lives for the whole test: every unload attempt is refused,
 * while this process creates and closes contexts, opens handles and does
 * I/O (some descriptors closed with requests in flight).  The budget only
 * sets how long that goes on; the unloader makes its first attempt within
 * milliseconds of it.
 */
static void test_refused_while_context_exists(void **state)
{
	const uint64_t budget = (debug_kernel ? 12 : 6) * 1000000000ULL;
	struct dio_request r[8], *rp[8];
	uint8_t *buf = tl_xalloc(8 * BLK, 0x5c);
	uint64_t t0 = tl_now_ns();
	long rounds = 0, ios = 0;
	int anchor, ah, ctx, h, i;

	anchor = ctx_with_handle(0x7a11, &ah);
	assert_true(tl_dio_refcnt() > 0);
	unloader_start(0, false);
	while (tl_now_ns() - t0 < budget) {
		ctx = ctx_with_handle(rounds % 3 ? 0 : 0x7a12, &h);
		for (i = 0; i < 8; i++) {
			if (i % 2)
				dio_req_prep_write(&r[i], h, buf + i * BLK, BLK,
						   8 * MiB + i * BLK);
			else
				dio_req_prep_read(&r[i], h, buf + i * BLK, BLK,
						  i * BLK);
			rp[i] = &r[i];
		}
		assert_int_equal(sys_dio_submit(ctx, rp, 8), 8);
		ios += 8;
		/* Every other round: close with the requests in flight. */
		if (rounds % 2 == 0) {
			assert_int_equal(sys_dio_wait(ctx, rp, 8, NULL), 8);
			for (i = 0; i < 8; i++)
				assert_int_equal(r[i].result, BLK);
		}
		assert_int_equal(close(ctx), 0);
		/* The anchor's handle still works. */
		dio_req_prep_read(&r[0], ah, buf, BLK, 0);
		assert_int_equal(sys_dio_submit(anchor, rp, 1), 1);
		assert_int_equal(sys_dio_wait(anchor, rp, 1, NULL), 1);
		assert_int_equal(r[0].result, BLK);
		rounds++;
	}
	unloader_stop();
	unloader_print("context alive");
	print_message("# %ld rounds, %ld requests in %.1f s\n", rounds, ios + rounds,
		      (tl_now_ns() - t0) / 1e9);
	assert_int_equal(u->successes, 0);
	assert_int_equal(u->other, 0);
	assert_int_equal(u->enoent, 0);
	assert_true(u->attempts > 0);
	assert_int_equal(u->ewouldblock + u->ebusy, u->attempts);
	assert_true(tl_module_loaded("dio_batch"));
	close(anchor);
	assert_true(tl_dio_caches_drained(20));
	free(buf);
}

/* A process that submits, then blocks in COLLECT until it is killed. */
static void victim(int tell, int nr)
{
	struct dio_request *r = calloc(nr, sizeof(*r)), **rp = calloc(nr, sizeof(*rp));
	struct dio_request *got[4];
	uint8_t *buf = tl_xalloc((size_t)nr * BLK, 0x5c);
	int ctx, h, i;

	ctx = ctx_with_handle(0, &h);
	for (i = 0; i < nr; i++) {
		dio_req_prep_read(&r[i], h, buf + (size_t)i * BLK, BLK,
				  (uint64_t)i * BLK);
		rp[i] = &r[i];
	}
	if (sys_dio_submit(ctx, rp, nr) != nr)
		_exit(2);
	if (write(tell, "s", 1) != 1)
		_exit(3);
	sys_dio_collect(ctx, got, 4, 4, NULL);
	pause();
	_exit(4);
}

/*
 * Requests in flight on descriptors that are gone (closed by this
 * process, or by the death of a killed one): the module stays until they
 * completed and were reaped, then unloads.  They must still be in flight
 * once both descriptors are gone: a SIGKILL, the victim's exit and a
 * close(), 8 ms on 6.1 beside a kernel build, about a second on a loaded
 * debug guest (its exit tears down its memory under KASAN).
 * The commands take 2 s (x tl_slow_factor(): 8 s there), beyond ndelay's
 * limit of 1 s that bounded it before (900 ms on the debug kernel).
 */
static void test_refused_while_io_in_flight(void **state)
{
	const long delay_ns = 2000 * tl_slow_factor() * 1000000L;
	enum { N = 64 };
	struct dio_request *r = calloc(N, sizeof(*r)), **rp = calloc(N, sizeof(*rp));
	uint8_t *buf = tl_xalloc(N * BLK, 0x5c);
	uint64_t t_submit, t_gone;
	int ctx, h, i, p[2], st;
	pid_t pid;
	char c;

	assert_true(tl_dio_caches_drained(10));
	assert_int_equal(tl_scsi_debug_delay_ms(delay_ns / 1000000), 0);

	/* One descriptor closed by a SIGKILL, one by close(). */
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		victim(p[1], N);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	ctx = ctx_with_handle(0, &h);
	for (i = 0; i < N; i++) {
		dio_req_prep_write(&r[i], h, buf + i * BLK, BLK, 4 * MiB + i * BLK);
		rp[i] = &r[i];
	}
	t_submit = tl_now_ns();
	assert_int_equal(sys_dio_submit(ctx, rp, N), N);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_int_equal(close(ctx), 0);
	t_gone = tl_now_ns();
	/* No descriptor is left, yet the requests hold the module. */
	assert_true(tl_dio_refcnt() > 0);
	assert_true(tl_slab_active("dio_kreq") > 0);

	unloader_start(1000, true);
	/* A hang guard: the requests complete delay_ns after they went. */
	for (i = 0; i < 3000 * tl_slow_factor() && !u->successes; i++)
		usleep(10000);
	unloader_stop();
	unloader_print("requests in flight");
	print_message("# unloaded %.0f ms after the submission, %.0f ms after "
		      "the last descriptor went (commands take %ld ms)\n",
		      (u->first_success_ns - t_submit) / 1e6,
		      (u->first_success_ns - t_gone) / 1e6, delay_ns / 1000000);
	assert_int_equal(u->successes, 1);
	assert_int_equal(u->other, 0);
	/* Refused at least once: the descriptors were gone before that. */
	assert_true(u->ewouldblock + u->ebusy >= 1);
	/*
	 * Not before the device could have completed the requests: a lower
	 * bound, scsi_debug's delay being an hrtimer started after t_submit.
	 */
	assert_true(u->first_success_ns - t_submit >= (uint64_t)delay_ns * 9 / 10);
	assert_false(tl_module_loaded("dio_batch"));
	assert_int_equal(tl_slab_active("dio_kreq"), -1);	/* cache destroyed */
	assert_int_equal(tl_scsi_debug_ndelay(0), 0);
	assert_int_equal(dio_reload(), 0);
	free(r);
	free(rp);
	free(buf);
}

/*
 * Unload and load race with a user: this process keeps creating
 * contexts and doing I/O, and loads the module again whenever it went.
 * Opening the control device may then fail (ENOENT: no node, ENODEV: the
 * misc device is going); nothing else may.
 */
static void test_unload_load_race(void **state)
{
	const uint64_t budget = (debug_kernel ? 25 : 10) * 1000000000ULL;
	const int max_unloads = debug_kernel ? 12 : 30;
	struct dio_request r, *rp = &r;
	uint8_t *buf = tl_xalloc(BLK, 0x5c);
	long rounds = 0, gone = 0, reloads = 0;
	uint64_t t0 = tl_now_ns();
	int fd = open(disk, O_RDWR | O_CLOEXEC), ctx, h;

	assert_true(fd >= 0);
	unloader_start(2000, false);
	while (tl_now_ns() - t0 < budget && u->successes < max_unloads) {
		ctx = sys_dio_init(0, DIO_PRIVATE);
		if (ctx < 0) {
			if (errno != ENOENT && errno != ENODEV)
				fail_msg("sys_dio_init: %s", strerror(errno));
			gone++;
			if (!tl_module_loaded("dio_batch")) {
				assert_int_equal(dio_reload(), 0);
				reloads++;
			}
			continue;
		}
		/* From here the descriptor holds the module. */
		h = sys_dio_open(ctx, fd, DIO_OPEN_NOCLAIM);
		assert_true(h >= 1);
		dio_req_prep_read(&r, h, buf, BLK, (rounds % 64) * BLK);
		assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
		if (rounds % 2)
			assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
		assert_int_equal(close(ctx), 0);
		rounds++;
	}
	unloader_stop();
	/*
	 * At least one unload got through: this process leaves no context
	 * between a close() and the next INIT, and the unloader tries every
	 * 2 ms.  On 6.1 beside a kernel build it got through 31 times in
	 * 7.4 s (the loop stops after 30), so one in 10 s (25 on the debug
	 * kernel) is far from the edge; a loaded machine, descheduling this
	 * process in a gap, only widens it.
	 */
	unloader_print("unload/load race");
	print_message("# %ld contexts used, %ld control opens failed, %ld reloads in %.1f s\n",
		      rounds, gone, reloads, (tl_now_ns() - t0) / 1e9);
	assert_int_equal(u->other, 0);
	assert_true(u->successes >= 1);
	close(fd);
	assert_int_equal(dio_reload(), 0);
	assert_true(tl_dio_caches_drained(20));
	/* Loaded again, it works. */
	ctx = ctx_with_handle(0, &h);
	dio_req_prep_read(&r, h, buf, BLK, 0);
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, BLK);
	close(ctx);
	free(buf);
}

/* Everything closed: unloads at once, loads again, and works. */
static void test_clean_unload_and_reload(void **state)
{
	struct dio_features f;
	struct stat st;
	int i;

	assert_true(tl_dio_caches_drained(20));
	assert_int_equal(tl_dio_refcnt(), 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(syscall(SYS_delete_module, "dio_batch", O_NONBLOCK), 0);
		assert_false(tl_module_loaded("dio_batch"));
		assert_int_equal(stat("/dev/dio_batch", &st), -1);
		assert_int_equal(sys_dio_init(0, DIO_PRIVATE), -1);
		assert_true(errno == ENOENT || errno == ENODEV);
		assert_int_equal(syscall(SYS_delete_module, "dio_batch", O_NONBLOCK), -1);
		assert_int_equal(errno, ENOENT);
		assert_int_equal(tl_dio_load(), 0);
		assert_int_equal(sys_dio_features(&f), 0);
		assert_int_equal(f.abi_version, DIO_BATCH_ABI_VERSION);
		assert_int_equal(tl_slab_active("dio_ctx"), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_refused_while_context_exists, test_teardown),
		cmocka_unit_test_teardown(test_refused_while_io_in_flight, test_teardown),
		cmocka_unit_test_teardown(test_unload_load_race, test_teardown),
		cmocka_unit_test_teardown(test_clean_unload_and_reload, test_teardown),
	};

	return cmocka_run_group_tests_name("unload", tests, setup, teardown);
}
