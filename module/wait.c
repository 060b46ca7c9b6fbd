// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: reporting completed requests (DIO_IOC_WAIT, DIO_IOC_COLLECT).
 *
 * WAIT and COLLECT claim done requests, copy a read's PI out, write the
 * results into the caller's struct dio_request and free the kernel's
 * state, sending the fsnotify event pread or pwrite would from the
 * submitter's process (io_uring sends it from the submitter's task too).
 * A descriptor closed with requests in flight reaps them from a work item
 * (file.c; the events are sent then).
 *
 * Only the process that created the descriptor may wait and collect
 * through it (dio_file_is_mine() in dio_batch.h says why).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hrtimer.h>
#include <linux/sched/signal.h>
#include <linux/uaccess.h>

#include "dio_batch.h"

/* Take a done request off the done list.  The caller holds df->lock. */
static void dio_kreq_claim(struct dio_file *df, struct dio_kreq *kreq)
{
	lockdep_assert_held(&df->lock);
	list_del_init(&kreq->node);
	df->nr_done--;
	kreq->claimed = true;
}

/*
 * Put claimed requests that could not be reported back at the head of the
 * done list, in their order.
 */
static void dio_kreq_unclaim_list(struct dio_file *df, struct list_head *list)
{
	struct dio_kreq *kreq;
	unsigned int n = 0;

	if (list_empty(list))
		return;
	spin_lock_irq(&df->lock);
	list_for_each_entry(kreq, list, node) {
		kreq->claimed = false;
		n++;
	}
	list_splice_init(list, &df->done);
	df->nr_done += n;
	spin_unlock_irq(&df->lock);
	wake_up(&df->wait);
}

static int dio_wait_check(const struct dio_wait *w, bool collect)
{
	if (!w->nr || w->nr > DIO_MAX_BATCH || w->pad || w->reserved[0] ||
	    w->reserved[1])
		return -EINVAL;
	if (w->timeout_ns < 0 && w->timeout_ns != DIO_WAIT_FOREVER)
		return -EINVAL;
	if (collect ? w->min_nr > w->nr : w->min_nr)
		return -EINVAL;
	return 0;
}

/*
 * A call's time limit.  The clock is read only when the call must sleep:
 * a WAIT or COLLECT whose requests are done reads no clock, as io_uring's
 * wait does not (a clock read can be a device access: the HPET's).
 */
struct dio_timeout {
	s64	ns;		/* the caller's timeout_ns */
	ktime_t	deadline;	/* 0 until the first sleep sets it */
};

/*
 * How long the next sleep may last: KTIME_MAX (no timer) for
 * DIO_WAIT_FOREVER and for timeouts that far; the whole timeout at the
 * first sleep, what is left of it at a later one.
 */
static ktime_t dio_remaining(struct dio_timeout *t)
{
	if (t->ns == DIO_WAIT_FOREVER)
		return KTIME_MAX;
	if (!t->deadline) {
		t->deadline = ktime_add_safe(ktime_get(), ns_to_ktime(t->ns));
		return t->deadline == KTIME_MAX ? KTIME_MAX : ns_to_ktime(t->ns);
	}
	if (t->deadline == KTIME_MAX)
		return KTIME_MAX;
	return max_t(ktime_t, ktime_sub(t->deadline, ktime_get()), 0);
}

/*
 * Wait condition of WAIT: true when the request at @uaddr can be reported
 * (then claimed into *@out) or is not in this descriptor's table (or is
 * being reported by another caller).
 */
static bool dio_req_ready(struct dio_file *df, u64 uaddr,
			  struct dio_kreq **out)
{
	struct dio_kreq *kreq;
	bool ready = true;

	*out = NULL;
	spin_lock_irq(&df->lock);
	kreq = dio_kreq_lookup(df, uaddr);
	if (kreq && !kreq->claimed) {
		if (kreq->done) {
			dio_kreq_claim(df, kreq);
			*out = kreq;
		} else {
			ready = false;
		}
	}
	spin_unlock_irq(&df->lock);
	return ready;
}

/*
 * Write a claimed request's result into its struct dio_request (and a
 * read's PI into the caller's PI buffer).  Return: 0 or -EFAULT.
 */
static int dio_kreq_write_result(struct dio_kreq *kreq)
{
	dio_pi_report(kreq);
	return dio_put_result(kreq->uaddr, &kreq->out);
}

/*
 * Report a claimed request, then free it.  Return: 0 or -EFAULT.  When
 * the struct cannot be written, the result is lost and the request freed
 * all the same (it would otherwise stay first on the done list for ever).
 */
static int dio_kreq_report(struct dio_file *df, struct dio_kreq *kreq)
{
	int ret = dio_kreq_write_result(kreq);

	dio_kreq_remove(df, kreq);
	dio_kreq_free(kreq);
	return ret;
}

static int dio_wait_result(unsigned int n, int err)
{
	if (n)
		return n;
	if (err == -ETIME)
		return 0;
	return err == -ERESTARTSYS ? -EINTR : err;
}

/**
 * dio_wait_ioctl - DIO_IOC_WAIT
 * @df: the calling descriptor, created by the caller's process
 *	(DIO_CMD_MINE: dio_cmd_run() answers -EXDEV to another)
 * @arg: struct dio_wait, copied in
 * @uarg: the user's struct (unused)
 *
 * Waits for the listed requests in order and reports each as it is done.
 *
 * Return: how many were reported, or what uapi/linux/dio_batch.h gives
 * for DIO_IOC_WAIT (struct dio_wait), whose comment lists the errors.
 */
long dio_wait_ioctl(struct dio_file *df, void *arg, void __user *uarg)
{
	const struct dio_wait *w = arg;
	struct dio_kreq *kreq;
	u64 __user *ureqs;
	struct dio_timeout tmo = { };
	unsigned int i;
	u64 uaddr;
	int ret;

	ret = dio_wait_check(w, false);
	if (ret)
		return ret;
	ureqs = u64_to_user_ptr(w->reqs);
	tmo.ns = w->timeout_ns;

	for (i = 0; i < w->nr; i++) {
		if (get_user(uaddr, &ureqs[i])) {
			ret = -EFAULT;
			break;
		}
		ret = wait_event_interruptible_hrtimeout(df->wait,
							 dio_req_ready(df, uaddr, &kreq),
							 dio_remaining(&tmo));
		if (ret)
			break;
		if (!kreq) {
			ret = -ENOENT;
			break;
		}
		ret = dio_kreq_report(df, kreq);
		if (ret)
			break;
	}
	return dio_wait_result(i, ret);
}

/* Done requests COLLECT claims in one round trip of the lock. */
#define DIO_COLLECT_CHUNK	64U

/* Claim up to @max done requests, oldest first, onto @list. */
static unsigned int dio_kreq_claim_list(struct dio_file *df,
					struct list_head *list,
					unsigned int max)
{
	struct dio_kreq *kreq;
	unsigned int n;

	spin_lock_irq(&df->lock);
	for (n = 0; n < max; n++) {
		kreq = list_first_entry_or_null(&df->done, struct dio_kreq,
						node);
		if (!kreq)
			break;
		dio_kreq_claim(df, kreq);
		list_add_tail(&kreq->node, list);
	}
	spin_unlock_irq(&df->lock);
	return n;
}

/*
 * Report the claimed requests of @claimed into @out from *@n on: each
 * one's address first (a bad array loses nothing: the rest go back to the
 * done list), then its result.  The reported ones leave the table in one
 * round trip and are freed.  Return: 0 or -EFAULT.
 */
static int dio_collect_list(struct dio_file *df, struct list_head *claimed,
			    u64 __user *out, unsigned int *n)
{
	struct dio_kreq *kreq;
	LIST_HEAD(reported);
	int ret = 0;

	while ((kreq = list_first_entry_or_null(claimed, struct dio_kreq,
						node))) {
		if (put_user(kreq->uaddr, &out[*n])) {
			ret = -EFAULT;
			break;
		}
		list_move_tail(&kreq->node, &reported);
		/* A struct that cannot take its result: lost, as in WAIT. */
		ret = dio_kreq_write_result(kreq);
		if (ret)
			break;
		(*n)++;
	}
	dio_kreq_unclaim_list(df, claimed);
	dio_kreq_remove_list(df, &reported);
	return ret;
}

/**
 * dio_collect_ioctl - DIO_IOC_COLLECT
 * @df: the calling descriptor, created by the caller's process
 *	(DIO_CMD_MINE: dio_cmd_run() answers -EXDEV to another)
 * @arg: struct dio_wait, copied in
 * @uarg: the user's struct (unused)
 *
 * Return: how many completions were reported into @arg->reqs, or what
 * uapi/linux/dio_batch.h gives for DIO_IOC_COLLECT (struct dio_wait),
 * whose comment lists the errors.
 */
long dio_collect_ioctl(struct dio_file *df, void *arg, void __user *uarg)
{
	const struct dio_wait *w = arg;
	LIST_HEAD(claimed);
	u64 __user *out;
	unsigned int n = 0;
	struct dio_timeout tmo = { };
	int ret, err;

	ret = dio_wait_check(w, true);
	if (ret)
		return ret;
	out = u64_to_user_ptr(w->reqs);
	tmo.ns = w->timeout_ns;

	/*
	 * Another caller on the same descriptor may claim what woke us:
	 * wait again until min_nr are reported here, the time is up or a
	 * signal comes.
	 */
	do {
		ret = wait_event_interruptible_hrtimeout(df->wait,
							 READ_ONCE(df->nr_done) >= w->min_nr - n,
							 dio_remaining(&tmo));
		while (n < w->nr &&
		       dio_kreq_claim_list(df, &claimed,
					   min(w->nr - n, DIO_COLLECT_CHUNK))) {
			err = dio_collect_list(df, &claimed, out, &n);
			if (err)
				return dio_wait_result(n, err);
			ret = 0;
		}
	} while (!ret && n < w->min_nr);
	return dio_wait_result(n, ret);
}
