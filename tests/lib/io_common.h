/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The device under test of the t_io_* programs (io_common.c): scsi_debug
 * with 512- and 4096-byte sectors, QEMU NVMe namespaces 1 (512-byte
 * blocks) and 2 (4096-byte blocks), one at a time, set up by each test's
 * setup (setup_sd512() ...): a device that does not appear fails the test.
 * Linked only into the guest programs that include this header.
 */
#ifndef IO_COMMON_H
#define IO_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "dioctl.h"

#define KiB		1024UL
#define MiB		(1024 * KiB)
#define SD_DRV		"/sys/bus/pseudo/drivers/scsi_debug"
#define P_INFLIGHT	"/sys/module/dio_batch/parameters/max_inflight"
#define SENTINEL	0x5a5a5a5aLL
#define CTL_PATH	"/dev/" DIO_BATCH_DEVNAME
#define UID_USER	1000		/* a user who is not root */
#define GID_USER	1000
#define GID_DIO		4242		/* the group given the disk and CTL_PATH */

enum dev_kind { DEV_NONE, DEV_SD512, DEV_SD4K, DEV_NVME1, DEV_NVME2 };

/* The device under test: a claimed handle and an unclaimed O_DIRECT fd. */
struct dev {
	enum dev_kind kind;
	char path[64];
	int fd;
	int ctx;
	int h;
	struct dio_query q;
	unsigned int lbs;
	unsigned int align;	/* what the buffers need */
	uint64_t cap;
};
extern struct dev d;

/* max_inflight as the module had it: teardown_sd() puts it back. */
extern char inflight_orig[32];

/* Fails the test at the first byte where @a and @b differ. */
void check_same(const void *a, const void *b, size_t len, const char *what);

/*
 * Time in these tests.  The 10 s of poll(), epoll_wait() and a child's
 * alarm() are hang guards: what they wait for (a read of 4 KiB, without a
 * delay) takes milliseconds on a loaded guest, tens of them on the debug
 * kernel.  A timeout that must expire (WAIT, COLLECT) is a lower bound:
 * the module sleeps on an hrtimer of CLOCK_MONOTONIC, the clock
 * tl_now_ns() reads, which never expires early, however loaded the
 * machine (only late).  Requests kept at the device are kept there by
 * scsi_debug's delay, an hrtimer started when it queued the command; a
 * test that needs a request not yet done says how long its own steps take
 * against that delay, which is multiplied by tl_slow_factor().
 */
extern const struct timespec ts_zero;
struct timespec ts_ms(long ms);

/* Collect exactly @nr completions, each one of @reqs, each once. */
void collect_exactly(int ctx, struct dio_request **reqs, unsigned int nr);
/* scsi_debug's completion delay. */
void sd_ndelay(long ns);

/* d closed, no device under test: the next setup opens one again. */
void dev_detach(void);
/* Tests' setups: d is the device named. */
int setup_sd512(void **state);
int setup_sd4k(void **state);
int setup_nvme1(void **state);
int setup_nvme2(void **state);
/*
 * Every test's teardown: scsi_debug's delay and max_inflight as they were,
 * the descriptors kept with tl_fd_keep() closed, the nodes give_to_group()
 * gave put back, d closed when requests were left.
 */
int teardown_sd(void **state);

/* One request, submitted and waited for; returns its result. */
int64_t rw1(int op, int h, void *buf, size_t len, uint64_t off);
/* A request prepared to fail at submission, for the error tests. */
int submit1(struct dio_request *r);
/* rw1() in a tl_run_as() child, in context @ctx: no cmocka there. */
int64_t child_rw(int ctx, int op, int h, void *buf, size_t len,
		 uint64_t off);
/*
 * Disk @path and /dev/dio_batch to root:GID_DIO 0660, as a site's udev
 * rule gives a group its disks; teardown_sd() puts them back.
 */
void give_to_group(const char *path);
/* pread() and pwrite() of d.fd, all of @len. */
void xpread(void *buf, size_t len, uint64_t off);
void xpwrite(const void *buf, size_t len, uint64_t off);

/* Every program's last test: no object left, the module unloads. */
void test_all_freed_and_unload(void **state);
/* The group's: the module loaded, max_inflight read; d closed. */
int io_group_setup(void **state);
int io_group_teardown(void **state);

#define T(fn, setup) { #fn, fn, setup, teardown_sd, NULL }
#define TD(name, fn, setup) { name, fn, setup, teardown_sd, NULL }
#define IO_RUN(name, tests) cmocka_run_group_tests_name((name), (tests), io_group_setup, \
							io_group_teardown)

#endif
