// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The device under test of the t_io_* programs: see io_common.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"
#include "io_common.h"

/* The device under test: a claimed handle and an unclaimed O_DIRECT fd. */
struct dev d = { .kind = DEV_NONE, .fd = -1, .ctx = -1 };

char inflight_orig[32];

/* The nodes give_to_group() gave to GID_DIO, put back by teardown_sd(). */
static struct tl_node_saved ctl_saved, disk_saved;
static char user_disk[64];

/* ---- helpers ---- */

void check_same(const void *a, const void *b, size_t len, const char *what)
{
	const uint8_t *x = a, *y = b;
	size_t i;

	if (!memcmp(a, b, len))
		return;
	for (i = 0; i < len && x[i] == y[i]; i++)
		;
	fail_msg("%s: %zu bytes differ from byte %zu on", what, len, i);
}

const struct timespec ts_zero = { 0, 0 };

struct timespec ts_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	return ts;
}

/* Collect exactly @nr completions, each one of @reqs, each once. */
void collect_exactly(int ctx, struct dio_request **reqs, unsigned int nr)
{
	struct dio_request **got = calloc(nr, sizeof(*got));
	unsigned int n = 0, i;
	bool *seen = calloc(nr, 1);
	int ret;

	assert_non_null(got);
	assert_non_null(seen);
	while (n < nr) {
		ret = tl_dio_collect(ctx, got, 1, nr - n, NULL);
		assert_true(ret >= 1);
		for (int k = 0; k < ret; k++) {
			for (i = 0; i < nr && reqs[i] != got[k]; i++)
				;
			assert_true(i < nr);
			assert_false(seen[i]);
			seen[i] = true;
		}
		n += ret;
	}
	assert_int_equal(tl_dio_collect(ctx, got, 0, 1, &ts_zero), 0);
	free(seen);
	free(got);
}

/* scsi_debug's completion delay. */
void sd_ndelay(long ns)
{
	assert_int_equal(tl_scsi_debug_ndelay(ns), 0);
}

/* ---- the device under test ---- */

void dev_detach(void)
{
	if (d.ctx >= 0)
		close(d.ctx);
	if (d.fd >= 0)
		close(d.fd);
	d.ctx = d.fd = -1;
	d.kind = DEV_NONE;
}

static int dev_attach(void)
{
	d.fd = open(d.path, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (d.fd < 0) {
		fprintf(stderr, "open %s: %s\n", d.path, strerror(errno));
		return -1;
	}
	d.ctx = sys_dio_init(0, DIO_PRIVATE);
	if (d.ctx < 0) {
		fprintf(stderr, "sys_dio_init: %s\n", strerror(errno));
		return -1;
	}
	d.h = sys_dio_open(d.ctx, d.fd, 0);
	if (d.h < 1 || sys_dio_query(d.ctx, d.h, &d.q)) {
		fprintf(stderr, "sys_dio_open/query %s: %s\n", d.path,
			strerror(errno));
		return -1;
	}
	d.lbs = d.q.logical_block_size;
	d.align = d.q.dma_alignment;
	/*
	 * With PI, a protection interval must not straddle a page: the
	 * block layer generates and checks PI a page piece at a time.
	 */
	if (d.q.pi_interval && d.align < d.q.pi_interval)
		d.align = d.q.pi_interval < 4096 ? d.q.pi_interval : 4096;
	d.cap = d.q.capacity;
	print_message("# %s: %u-byte blocks, dma alignment %u, %llu MiB, %s\n",
		      d.path, d.lbs, d.align,
		      (unsigned long long)(d.cap / MiB), d.q.profile);
	return 0;
}

static int use_dev(enum dev_kind kind)
{
	int ret;

	if (d.kind == kind)
		return 0;
	dev_detach();
	switch (kind) {
	case DEV_SD512:
		ret = tl_scsi_debug_load("dev_size_mb=64 dif=1 dix=1 guard=0",
					 d.path, sizeof(d.path));
		break;
	case DEV_SD4K:
		ret = tl_scsi_debug_load("dev_size_mb=64 sector_size=4096 dif=1 dix=1 guard=1",
					 d.path, sizeof(d.path));
		break;
	case DEV_NVME1:
		ret = tl_nvme_dev(1, d.path, sizeof(d.path));
		break;
	case DEV_NVME2:
		ret = tl_nvme_dev(2, d.path, sizeof(d.path));
		break;
	default:
		return -1;
	}
	if (ret) {
		fprintf(stderr, "device for test not available: %d\n", ret);
		return -1;
	}
	if (dev_attach()) {
		dev_detach();
		return -1;
	}
	d.kind = kind;
	return 0;
}

int setup_sd512(void **state) { return use_dev(DEV_SD512); }
int setup_sd4k(void **state) { return use_dev(DEV_SD4K); }
int setup_nvme1(void **state) { return use_dev(DEV_NVME1); }
int setup_nvme2(void **state) { return use_dev(DEV_NVME2); }

/* For the tests that keep requests in flight with scsi_debug's delay. */
int teardown_sd(void **state)
{
	char v[32];

	if (d.kind == DEV_SD512 || d.kind == DEV_SD4K)
		tl_scsi_debug_ndelay(0);	/* either delay */
	snprintf(v, sizeof(v), "%s", inflight_orig);
	tl_write_file(P_INFLIGHT, v);
	tl_fd_close_all();
	tl_node_restore(user_disk, &disk_saved);
	tl_node_restore(CTL_PATH, &ctl_saved);
	/* A failed test may have left requests: start the next one clean. */
	if (d.kind != DEV_NONE && tl_slab_active("dio_kreq") != 0)
		dev_detach();
	return 0;
}

/* One request, submitted and waited for; returns its result. */
int64_t rw1(int op, int h, void *buf, size_t len, uint64_t off)
{
	struct dio_request r, *rp = &r;
	int ret;

	if (op == DIO_OP_READ)
		dio_req_prep_read(&r, h, buf, len, off);
	else
		dio_req_prep_write(&r, h, buf, len, off);
	r.result = SENTINEL;
	ret = tl_dio_submit(d.ctx, &rp, 1);
	if (ret != 1)
		return ret < 0 ? ret : -1000;
	assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, NULL), 1);
	return r.result;
}

/* A request prepared to fail at submission, for the error tests. */
int submit1(struct dio_request *r)
{
	return tl_dio_submit(d.ctx, &r, 1);
}

/* rw1() in a tl_run_as() child, in context @ctx: no cmocka there. */
int64_t child_rw(int ctx, int op, int h, void *buf, size_t len,
		 uint64_t off)
{
	struct dio_request r, *rp = &r;

	if (op == DIO_OP_READ)
		dio_req_prep_read(&r, h, buf, len, off);
	else
		dio_req_prep_write(&r, h, buf, len, off);
	r.result = SENTINEL;
	if (sys_dio_submit(ctx, &rp, 1) != 1)
		return -errno;
	TL_CHILD_CHECK(sys_dio_wait(ctx, &rp, 1, NULL) == 1, "WAIT");
	return r.result;
}

/*
 * Disk @path and /dev/dio_batch to root:GID_DIO 0660, as a site's udev
 * rule gives a group its disks; teardown_sd() puts them back.
 */
void give_to_group(const char *path)
{
	snprintf(user_disk, sizeof(user_disk), "%s", path);
	assert_int_equal(tl_node_give(CTL_PATH, GID_DIO, 0660, &ctl_saved), 0);
	assert_int_equal(tl_node_give(user_disk, GID_DIO, 0660, &disk_saved), 0);
}

void xpread(void *buf, size_t len, uint64_t off)
{
	assert_int_equal(pread(d.fd, buf, len, off), (ssize_t)len);
}

void xpwrite(const void *buf, size_t len, uint64_t off)
{
	assert_int_equal(pwrite(d.fd, buf, len, off), (ssize_t)len);
}

/* Everything closed: no object left, the module unloads. */
void test_all_freed_and_unload(void **state)
{
	dev_detach();
	assert_true(tl_slab_reaches("dio_kreq", 0, 10));
	assert_true(tl_slab_reaches("dio_file", 0, 10));
	assert_true(tl_slab_reaches("dio_handle", 0, 10));
	assert_true(tl_slab_reaches("dio_ctx", 0, 10));
	assert_int_equal(tl_scsi_debug_unload(), 0);
	assert_int_equal(tl_dio_unload(), 0);
	assert_false(tl_module_loaded("dio_batch"));
}

int io_group_setup(void **state)
{
	char *v;

	if (tl_dio_load())
		return -1;
	v = tl_sysfs_read(P_INFLIGHT);
	if (!v)
		return -1;
	snprintf(inflight_orig, sizeof(inflight_orig), "%s", v);
	free(v);
	return 0;
}

int io_group_teardown(void **state)
{
	dev_detach();
	return 0;
}
