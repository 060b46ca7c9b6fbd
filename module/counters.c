// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: counters, which DIO_IOC_COUNTERS reads (handle.c).
 *
 * Each handle counts its requests per CPU (struct dio_counts): a request
 * is counted where it completes (complete.c, dio_kreq_finish()) or where SUBMIT
 * refuses it, with this_cpu_*() operations, no lock and no shared cache
 * line.  DIO_IOC_COUNTERS sums the CPUs' counts.
 *
 * A device's counts since the module was loaded (DIO_COUNTERS_DEVICE)
 * cost the I/O path nothing more: struct dio_dev, one per dev_t a handle
 * was ever created for, lists the live handles of its device and holds
 * what the handles freed before left it (a handle folds its counts into
 * its device's when it is freed, after its last request completed).  The
 * device's counts are those plus the live handles' sums.  dio_dev_lock
 * guards the table, every list and the folded counts; it is taken when a
 * handle is created or freed and when a device's counts are read, never
 * per request.  The records are not charged to anyone's memory cgroup:
 * they outlive their handles, and are freed when the module is unloaded.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/xarray.h>

#include "dio_batch.h"

/* A device's counts: see the comment at the top. */
struct dio_dev {
	struct list_head	handles;	/* dio_handle.dev_node */
	u64			folded[DIO_CNT_NR];
};

static DEFINE_MUTEX(dio_dev_lock);
/* dev_t -> struct dio_dev; dio_dev_lock */
static DEFINE_XARRAY(dio_devs);

/* Where each count goes in struct dio_counters. */
static const size_t dio_cnt_offset[DIO_CNT_NR] = {
	[DIO_CNT_READS]		= offsetof(struct dio_counters, reads),
	[DIO_CNT_WRITES]	= offsetof(struct dio_counters, writes),
	[DIO_CNT_FLUSHES]	= offsetof(struct dio_counters, flushes),
	[DIO_CNT_READ_BYTES]	= offsetof(struct dio_counters, read_bytes),
	[DIO_CNT_WRITE_BYTES]	= offsetof(struct dio_counters, write_bytes),
	[DIO_CNT_IO_ERRORS]	= offsetof(struct dio_counters, io_errors),
	[DIO_CNT_REFUSED]	= offsetof(struct dio_counters, refused),
	[DIO_CNT_PI_GUARD]	= offsetof(struct dio_counters, pi_guard),
	[DIO_CNT_PI_APP]	= offsetof(struct dio_counters, pi_app),
	[DIO_CNT_PI_REF]	= offsetof(struct dio_counters, pi_ref),
	[DIO_CNT_PI_UNKNOWN]	= offsetof(struct dio_counters, pi_unknown),
	[DIO_CNT_PI_USER]	= offsetof(struct dio_counters, pi_by_user),
	[DIO_CNT_PI_MODULE]	= offsetof(struct dio_counters, pi_by_module),
	[DIO_CNT_PI_DEVICE]	= offsetof(struct dio_counters, pi_by_device),
};

/* The device record of @dev, made if it has none; dio_dev_lock held. */
static struct dio_dev *dio_dev_get(dev_t dev)
{
	struct dio_dev *d;
	int ret;

	lockdep_assert_held(&dio_dev_lock);
	d = xa_load(&dio_devs, dev);
	if (d)
		return d;
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&d->handles);
	ret = xa_err(xa_store(&dio_devs, dev, d, GFP_KERNEL));
	if (ret) {
		kfree(d);
		return ERR_PTR(ret);
	}
	return d;
}

/**
 * dio_counts_init - give a new handle its counts, zero
 * @h: the handle, its @dev set, not yet visible to anyone
 *
 * Allocates its per-CPU counts (charged to the caller's memory cgroup)
 * and enters it in its device's record, made on the device's first
 * handle since the module was loaded.
 *
 * Return: 0 or -ENOMEM.
 */
int dio_counts_init(struct dio_handle *h)
{
	struct dio_dev *d;
	int ret;

	h->counts = alloc_percpu_gfp(struct dio_counts, GFP_KERNEL_ACCOUNT);
	if (!h->counts)
		return -ENOMEM;
	mutex_lock(&dio_dev_lock);
	d = dio_dev_get(h->dev);
	if (IS_ERR(d)) {
		ret = PTR_ERR(d);
		goto out_unlock;
	}
	h->dstats = d;
	list_add_tail(&h->dev_node, &d->handles);
	mutex_unlock(&dio_dev_lock);
	return 0;

out_unlock:
	mutex_unlock(&dio_dev_lock);
	free_percpu(h->counts);
	h->counts = NULL;
	return ret;
}

/* Add @c's counts, every CPU's, to @sum. */
static void dio_counts_sum(struct dio_counts __percpu *c, u64 *sum)
{
	const struct dio_counts *p;
	int cpu, i;

	for_each_possible_cpu(cpu) {
		p = per_cpu_ptr(c, cpu);
		for (i = 0; i < DIO_CNT_NR; i++)
			sum[i] += READ_ONCE(p->v[i]);
	}
}

/**
 * dio_counts_exit - fold a handle's counts into its device's, and free them
 * @h: the handle, being freed: none of its requests is left to count
 *
 * Context: process context.
 */
void dio_counts_exit(struct dio_handle *h)
{
	mutex_lock(&dio_dev_lock);
	dio_counts_sum(h->counts, h->dstats->folded);
	list_del(&h->dev_node);
	mutex_unlock(&dio_dev_lock);
	free_percpu(h->counts);
}

/* One PI failure, by its tag and by who found it. */
static void dio_count_pi(struct dio_counts __percpu *c,
			 const struct dio_result *out)
{
	BUILD_BUG_ON(DIO_CNT_PI_APP - DIO_CNT_PI_GUARD !=
		     DIO_PI_TAG_APP - DIO_PI_TAG_GUARD);
	BUILD_BUG_ON(DIO_CNT_PI_REF - DIO_CNT_PI_GUARD !=
		     DIO_PI_TAG_REF - DIO_PI_TAG_GUARD);
	BUILD_BUG_ON(DIO_CNT_PI_MODULE - DIO_CNT_PI_USER !=
		     DIO_PI_SRC_MODULE - DIO_PI_SRC_USER);
	BUILD_BUG_ON(DIO_CNT_PI_DEVICE - DIO_CNT_PI_USER !=
		     DIO_PI_SRC_DEVICE - DIO_PI_SRC_USER);

	if (out->pi_err_tag >= DIO_PI_TAG_GUARD &&
	    out->pi_err_tag <= DIO_PI_TAG_REF)
		this_cpu_inc(c->v[DIO_CNT_PI_GUARD + out->pi_err_tag -
				  DIO_PI_TAG_GUARD]);
	else
		this_cpu_inc(c->v[DIO_CNT_PI_UNKNOWN]);
	if (out->pi_err_source >= DIO_PI_SRC_USER &&
	    out->pi_err_source <= DIO_PI_SRC_DEVICE)
		this_cpu_inc(c->v[DIO_CNT_PI_USER + out->pi_err_source -
				  DIO_PI_SRC_USER]);
}

/* A PI failure is what the trace event dio_batch_pi_error records. */
static bool dio_is_pi_failure(const struct dio_result *out)
{
	return out->result == -EILSEQ && out->pi_err_source;
}

/**
 * dio_count_error - count a completed request that failed
 * @c: its handle's counts
 * @out: what it reports: a negative result
 *
 * A PI failure by its tag and finder, any other error as an I/O error.
 * Out of line: the completion inlines only the success path.
 *
 * Context: any.
 */
void dio_count_error(struct dio_counts __percpu *c,
		     const struct dio_result *out)
{
	if (dio_is_pi_failure(out))
		dio_count_pi(c, out);
	else
		this_cpu_inc(c->v[DIO_CNT_IO_ERRORS]);
}

/**
 * dio_count_refused - count a request SUBMIT refused
 * @kreq: the request, its handle found; its result and pi_err_* fields
 *	say whether its PI was what SUBMIT refused (DIO_PI_SRC_USER)
 */
void dio_count_refused(struct dio_kreq *kreq)
{
	struct dio_counts __percpu *c = kreq->h->counts;

	this_cpu_inc(c->v[DIO_CNT_REFUSED]);
	if (dio_is_pi_failure(&kreq->out))
		dio_count_pi(c, &kreq->out);
}

/* A device's counts: what its freed handles left, and its live ones'. */
static void dio_dev_sum(struct dio_dev *d, u64 *sum)
{
	struct dio_handle *h;
	int i;

	mutex_lock(&dio_dev_lock);
	for (i = 0; i < DIO_CNT_NR; i++)
		sum[i] += d->folded[i];
	list_for_each_entry(h, &d->handles, dev_node)
		dio_counts_sum(h->counts, sum);
	mutex_unlock(&dio_dev_lock);
}

/**
 * dio_counters_fill - a handle's counts, or its device's, for DIO_IOC_COUNTERS
 * @h: the handle, with a reference
 * @c: the command's struct: its @flags say whose counts (the handle's, or
 *	with DIO_COUNTERS_DEVICE its device's since the module was loaded);
 *	every count field is set, and nothing else is touched
 *
 * Context: process context.
 */
void dio_counters_fill(struct dio_handle *h, struct dio_counters *c)
{
	u64 sum[DIO_CNT_NR] = {};
	int i;

	if (c->flags & DIO_COUNTERS_DEVICE)
		dio_dev_sum(h->dstats, sum);
	else
		dio_counts_sum(h->counts, sum);
	for (i = 0; i < DIO_CNT_NR; i++)
		*(u64 *)((u8 *)c + dio_cnt_offset[i]) = sum[i];
}

/**
 * dio_counters_module_exit - free the device records; no handle is left
 */
void dio_counters_module_exit(void)
{
	struct dio_dev *d;
	unsigned long dev;

	xa_for_each(&dio_devs, dev, d) {
		WARN_ON_ONCE(!list_empty(&d->handles));
		kfree(d);
	}
	xa_destroy(&dio_devs);
}
