// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: submitting requests and reporting their completions.
 *
 * SUBMIT reads each struct dio_request from the caller's memory, pins the
 * data pages straight into bios (as block/fops.c's __blkdev_direct_IO does)
 * and submits the whole batch under one plug.  A request larger than one
 * bio becomes several bios that share a count; the last to complete queues
 * the request on its descriptor's done list, from any context, without
 * touching user memory.
 *
 * WAIT and COLLECT run in the caller's process: they claim done requests,
 * release the pages (dirtying them after reads, which may sleep), write the
 * results into the caller's struct dio_request and free the kernel's state.
 * A descriptor closed with requests in flight reaps them from a work item.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/hrtimer.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "dio_batch.h"

static struct kmem_cache *dio_kreq_cache;
struct bio_set dio_bio_set;
struct workqueue_struct *dio_wq;

/* ---- completion (any context) ---- */

static void dio_kreq_complete(struct dio_kreq *kreq)
{
	struct dio_file *df = kreq->df;
	unsigned long flags;

	xa_lock_irqsave(&df->reqs, flags);
	kreq->done = true;
	list_add_tail(&kreq->node, &df->done);
	df->nr_done++;
	/* Under the lock: a reaper cannot free @df before we are done. */
	wake_up(&df->wait);
	if (df->released)
		queue_work(dio_wq, &df->reap_work);
	xa_unlock_irqrestore(&df->reqs, flags);
}

static void dio_bio_end_io(struct bio *bio)
{
	struct dio_kreq *kreq = bio->bi_private;
	unsigned long flags;

	if (bio->bi_status)
		cmpxchg(&kreq->error, 0, blk_status_to_errno(bio->bi_status));
	/* Keep the bio: its pages are released in process context. */
	spin_lock_irqsave(&kreq->bio_lock, flags);
	bio->bi_next = kreq->bios;
	kreq->bios = bio;
	spin_unlock_irqrestore(&kreq->bio_lock, flags);
	if (atomic_dec_and_test(&kreq->remaining))
		dio_kreq_complete(kreq);
}

/* ---- reaping (process context) ---- */

/* Release pages and bios once; safe to call again. */
static void dio_kreq_release_bios(struct dio_kreq *kreq)
{
	bool dirty = kreq->opcode == DIO_OP_READ;
	struct bio *bio;

	while ((bio = kreq->bios)) {
		kreq->bios = bio->bi_next;
		bio->bi_next = NULL;
		bio_release_pages(bio, dirty);
		bio_put(bio);
	}
}

/* Compute the result; verifies PI where the module does. */
static void dio_kreq_finish(struct dio_kreq *kreq)
{
	struct dio_request *out = &kreq->out;

	if (!kreq->bios && !kreq->pi)
		return;		/* already finished */
	out->result = kreq->error ? kreq->error : kreq->bytes;
	dio_pi_finish(kreq);
	dio_kreq_release_bios(kreq);
	dio_pi_free(kreq);
}

static void dio_kreq_free(struct dio_kreq *kreq)
{
	struct dio_file *df = kreq->df;

	dio_kreq_finish(kreq);
	dio_handle_put(kreq->h);
	kmem_cache_free(dio_kreq_cache, kreq);
	dio_file_put(df);
}

/* Write the result fields into the caller's struct dio_request. */
static int dio_kreq_report(struct dio_kreq *kreq)
{
	struct dio_request __user *u = u64_to_user_ptr(kreq->uaddr);
	const struct dio_request *o = &kreq->out;
	size_t off = offsetof(struct dio_request, result);
	size_t end = offsetof(struct dio_request, pad3);

	dio_kreq_finish(kreq);
	if (copy_to_user((void __user *)u + off, (const void *)o + off,
			 end - off))
		return -EFAULT;
	return 0;
}

/* Take a done request off the done list; xa_lock held. */
static void dio_kreq_claim(struct dio_file *df, struct dio_kreq *kreq)
{
	list_del_init(&kreq->node);
	df->nr_done--;
	kreq->claimed = true;
}

/* Put a claimed request back, when its report could not be written. */
static void dio_kreq_unclaim(struct dio_file *df, struct dio_kreq *kreq)
{
	xa_lock_irq(&df->reqs);
	kreq->claimed = false;
	list_add(&kreq->node, &df->done);
	df->nr_done++;
	xa_unlock_irq(&df->reqs);
}

/* Forget a reported request: its address may be submitted again. */
static void dio_kreq_retire(struct dio_file *df, struct dio_kreq *kreq)
{
	xa_lock_irq(&df->reqs);
	__xa_erase(&df->reqs, kreq->uaddr);
	df->nr_reqs--;
	xa_unlock_irq(&df->reqs);
	dio_kreq_free(kreq);
}

/**
 * dio_file_reap_all - free the done requests of a released descriptor
 * @df: the descriptor; its file is gone or going
 *
 * Marks @df released, so that later completions queue its reap work.  Must
 * not touch @df after freeing the last request: that may free @df.
 */
void dio_file_reap_all(struct dio_file *df)
{
	struct dio_kreq *kreq, *next;
	LIST_HEAD(list);

	xa_lock_irq(&df->reqs);
	df->released = true;
	list_for_each_entry(kreq, &df->done, node) {
		kreq->claimed = true;
		__xa_erase(&df->reqs, kreq->uaddr);
		df->nr_reqs--;
	}
	list_splice_init(&df->done, &list);
	df->nr_done = 0;
	xa_unlock_irq(&df->reqs);

	list_for_each_entry_safe(kreq, next, &list, node)
		dio_kreq_free(kreq);
}

/**
 * dio_ctx_poll - readable while the descriptor has unreported completions
 * @file: the context descriptor
 * @pt: poll table
 *
 * Return: EPOLLIN | EPOLLRDNORM when completions wait, else 0.
 */
__poll_t dio_ctx_poll(struct file *file, struct poll_table_struct *pt)
{
	struct dio_file *df = file->private_data;

	poll_wait(file, &df->wait, pt);
	return READ_ONCE(df->nr_done) ? EPOLLIN | EPOLLRDNORM : 0;
}

/* ---- submission ---- */

static int dio_req_check(const struct dio_request *r)
{
	if (r->opcode > DIO_OP_LAST)
		return -EINVAL;
	if (r->flags & ~DIO_REQ_F_ALL)
		return -EINVAL;
	if (r->pad0 || r->pad1 || r->pad2[0] || r->pad2[1] || r->pad2[2] ||
	    r->reserved[0] || r->reserved[1])
		return -EINVAL;
	if (r->opcode == DIO_OP_FLUSH)
		return (r->flags || r->buf || r->len || r->offset ||
			r->pi_buf || r->pi_len || r->pi_flags) ? -EINVAL : 0;
	if ((r->flags & DIO_REQ_FUA) && r->opcode != DIO_OP_WRITE)
		return -EINVAL;
	return 0;
}

static int dio_kreq_import(struct dio_kreq *kreq, struct iovec *fast,
			   struct iovec **iov, struct iov_iter *iter)
{
	const struct dio_request *r = &kreq->ureq;
	int dir = r->opcode == DIO_OP_READ ? ITER_DEST : ITER_SOURCE;
	struct block_device *bdev = kreq->h->bdev.bdev;
	unsigned int lbs = bdev_logical_block_size(bdev);
	ssize_t ret;

	*iov = NULL;
	if (r->flags & DIO_REQ_IOVEC) {
		if (!r->len || r->len > UIO_MAXIOV)
			return -EINVAL;
		*iov = fast;
		ret = import_iovec(dir, u64_to_user_ptr(r->buf), r->len,
				   UIO_FASTIOV, iov, iter);
		if (ret < 0)
			return ret;
	} else {
		if (r->len > DIO_MAX_IO_BYTES)
			return -EINVAL;
		ret = dio_import_buf(dir, u64_to_user_ptr(r->buf), r->len,
				     fast, iter);
		if (ret)
			return ret;
	}
	ret = -EINVAL;
	if (!iov_iter_count(iter) || iov_iter_count(iter) > DIO_MAX_IO_BYTES)
		goto out_free_iov;
	if ((r->offset | iov_iter_count(iter)) & (lbs - 1))
		goto out_free_iov;
	if (!iov_iter_is_aligned(iter, dio_bdev_dma_alignment(bdev) - 1,
				 lbs - 1))
		goto out_free_iov;
	ret = -ENXIO;
	if (r->offset > bdev_nr_bytes(bdev) ||
	    iov_iter_count(iter) > bdev_nr_bytes(bdev) - r->offset)
		goto out_free_iov;
	kreq->bytes = iov_iter_count(iter);
	return 0;

out_free_iov:
	kfree(*iov);
	*iov = NULL;
	return ret;
}

/* Build and submit the bios; returns how many were submitted or -errno. */
static int dio_kreq_submit_bios(struct dio_kreq *kreq, struct iov_iter *iter)
{
	const struct dio_request *r = &kreq->ureq;
	struct block_device *bdev = kreq->h->bdev.bdev;
	blk_opf_t opf;
	loff_t pos = r->offset;
	struct bio *bio;
	int nr = 0, ret = 0;

	if (r->opcode == DIO_OP_FLUSH) {
		bio = bio_alloc_bioset(bdev, 0, REQ_OP_WRITE | REQ_PREFLUSH,
				       GFP_KERNEL, &dio_bio_set);
		bio->bi_private = kreq;
		bio->bi_end_io = dio_bio_end_io;
		atomic_inc(&kreq->remaining);
		submit_bio(bio);
		return 1;
	}

	opf = r->opcode == DIO_OP_READ ? REQ_OP_READ :
	      REQ_OP_WRITE | REQ_SYNC | REQ_IDLE;
	if (r->flags & DIO_REQ_FUA)
		opf |= REQ_FUA;
	while (iov_iter_count(iter)) {
		bio = bio_alloc_bioset(bdev, bio_iov_vecs_to_alloc(iter,
				       BIO_MAX_VECS), opf, GFP_KERNEL,
				       &dio_bio_set);
		bio->bi_iter.bi_sector = pos >> SECTOR_SHIFT;
		bio->bi_private = kreq;
		bio->bi_end_io = dio_bio_end_io;
		ret = bio_iov_iter_get_pages(bio, iter);
		if (unlikely(ret)) {
			bio_put(bio);
			break;
		}
		ret = dio_pi_attach(kreq, bio);
		if (unlikely(ret)) {
			bio_release_pages(bio, false);
			bio_put(bio);
			break;
		}
		pos += bio->bi_iter.bi_size;
		atomic_inc(&kreq->remaining);
		submit_bio(bio);
		nr++;
	}
	return nr ? nr : ret;
}

/* Undo a request that never reached the device. */
static void dio_kreq_abort(struct dio_file *df, struct dio_kreq *kreq)
{
	kreq->bios = NULL;
	dio_kreq_retire(df, kreq);
}

static int dio_submit_one(struct dio_file *df, u64 uaddr)
{
	struct iovec fast[UIO_FASTIOV], *iov = NULL;
	struct iov_iter iter = {};
	struct dio_kreq *kreq;
	int ret;

	kreq = kmem_cache_zalloc(dio_kreq_cache, GFP_KERNEL);
	if (!kreq)
		return -ENOMEM;
	ret = dio_copy_arg(&kreq->ureq, sizeof(kreq->ureq),
			   DIO_REQUEST_SIZE_VER0, u64_to_user_ptr(uaddr));
	if (ret)
		goto out_free_kreq;
	ret = dio_req_check(&kreq->ureq);
	if (ret)
		goto out_free_kreq;
	kreq->h = dio_handle_get(df->ctx, kreq->ureq.handle);
	if (!kreq->h) {
		ret = -EBADF;
		goto out_free_kreq;
	}
	ret = -EBADF;
	if (kreq->ureq.opcode == DIO_OP_WRITE && !kreq->h->writable)
		goto out_put_handle;
	kreq->df = df;
	kreq->uaddr = uaddr;
	kreq->opcode = kreq->ureq.opcode;
	atomic_set(&kreq->remaining, 1);	/* submission bias */
	spin_lock_init(&kreq->bio_lock);
	INIT_LIST_HEAD(&kreq->node);
	if (kreq->opcode != DIO_OP_FLUSH) {
		ret = dio_kreq_import(kreq, fast, &iov, &iter);
		if (ret)
			goto out_put_handle;
	}
	ret = dio_pi_check_request(kreq->h, &kreq->ureq);
	if (ret)
		goto out_free_iov;

	ret = xa_insert_irq(&df->reqs, uaddr, kreq, GFP_KERNEL);
	if (ret)
		goto out_free_iov;	/* -EBUSY: already in flight */
	xa_lock_irq(&df->reqs);
	if (df->nr_reqs >= READ_ONCE(dio_max_inflight)) {
		__xa_erase(&df->reqs, uaddr);
		xa_unlock_irq(&df->reqs);
		ret = -EAGAIN;
		goto out_free_iov;
	}
	df->nr_reqs++;
	xa_unlock_irq(&df->reqs);
	kref_get(&df->ref);

	ret = dio_pi_prepare(kreq);
	if (ret)
		goto out_abort;
	ret = dio_kreq_submit_bios(kreq, &iter);
	kfree(iov);
	if (ret < 0)
		goto out_abort;
	/* Later bios that could not be built fail the request as a whole. */
	if (iov_iter_count(&iter) && kreq->opcode != DIO_OP_FLUSH)
		cmpxchg(&kreq->error, 0, -EFAULT);
	if (atomic_dec_and_test(&kreq->remaining))
		dio_kreq_complete(kreq);
	return 0;

out_abort:
	dio_kreq_abort(df, kreq);
	return ret;
out_free_iov:
	kfree(iov);
out_put_handle:
	dio_handle_put(kreq->h);
out_free_kreq:
	kmem_cache_free(dio_kreq_cache, kreq);
	return ret;
}

/**
 * dio_submit_ioctl - DIO_IOC_SUBMIT
 * @df: the calling descriptor
 * @arg: user pointer to struct dio_submit
 *
 * Return: the number of requests queued; if the first one fails, -errno:
 * -EINVAL (bad request fields, alignment or length), -ENXIO (beyond the
 * device), -EBADF (handle not live, or write on a read-only handle),
 * -EBUSY (request already in flight on this descriptor), -EAGAIN (too many
 * requests in flight), -EOPNOTSUPP (PI the device cannot honour), -EFAULT,
 * -ENOMEM.
 */
long dio_submit_ioctl(struct dio_file *df, void __user *arg)
{
	struct dio_submit s;
	struct blk_plug plug;
	u64 __user *ureqs;
	unsigned int i;
	u64 uaddr;
	int ret;

	ret = dio_copy_arg(&s, sizeof(s), DIO_SUBMIT_SIZE_VER0, arg);
	if (ret)
		return ret;
	if (!s.nr || s.nr > DIO_MAX_BATCH || s.reserved[0] || s.reserved[1])
		return -EINVAL;
	ureqs = u64_to_user_ptr(s.reqs);

	blk_start_plug(&plug);
	for (i = 0; i < s.nr; i++) {
		if (get_user(uaddr, &ureqs[i])) {
			ret = -EFAULT;
			break;
		}
		ret = dio_submit_one(df, uaddr);
		if (ret)
			break;
	}
	blk_finish_plug(&plug);
	return i ? i : ret;
}

/* ---- waiting ---- */

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

static ktime_t dio_deadline(s64 timeout_ns)
{
	if (timeout_ns == DIO_WAIT_FOREVER)
		return KTIME_MAX;
	return ktime_add_ns(ktime_get(), timeout_ns);
}

static ktime_t dio_remaining(ktime_t deadline)
{
	if (deadline == KTIME_MAX)
		return KTIME_MAX;
	return max_t(ktime_t, ktime_sub(deadline, ktime_get()), 0);
}

/*
 * Wait condition of WAIT: true when the request at @uaddr can be reported
 * (then claimed into *@out) or is not in this descriptor's table.
 */
static bool dio_req_ready(struct dio_file *df, u64 uaddr,
			  struct dio_kreq **out)
{
	struct dio_kreq *kreq;
	bool ready = true;

	xa_lock_irq(&df->reqs);
	kreq = xa_load(&df->reqs, uaddr);
	*out = NULL;
	if (kreq && !kreq->claimed) {
		if (kreq->done) {
			dio_kreq_claim(df, kreq);
			*out = kreq;
		} else {
			ready = false;
		}
	}
	xa_unlock_irq(&df->reqs);
	return ready;
}

/* Report a claimed request; on failure it goes back on the done list. */
static int dio_kreq_deliver(struct dio_file *df, struct dio_kreq *kreq,
			    u64 __user *slot)
{
	if ((slot && put_user(kreq->uaddr, slot)) || dio_kreq_report(kreq)) {
		dio_kreq_unclaim(df, kreq);
		return -EFAULT;
	}
	dio_kreq_retire(df, kreq);
	return 0;
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
 * @df: the calling descriptor
 * @arg: user pointer to struct dio_wait
 *
 * Waits for the listed requests in order and reports each as it is done.
 *
 * Return: how many were reported: all of them, or fewer when the timeout
 * expired (possibly 0) or a signal came (-EINTR when none).  A listed
 * address with no request submitted on this descriptor stops the call:
 * -ENOENT if it is the first.  -EINVAL for bad fields, -EFAULT.
 */
long dio_wait_ioctl(struct dio_file *df, void __user *arg)
{
	struct dio_kreq *kreq;
	u64 __user *ureqs;
	struct dio_wait w;
	ktime_t deadline;
	unsigned int i;
	u64 uaddr;
	int ret;

	ret = dio_copy_arg(&w, sizeof(w), DIO_WAIT_SIZE_VER0, arg);
	if (ret)
		return ret;
	ret = dio_wait_check(&w, false);
	if (ret)
		return ret;
	ureqs = u64_to_user_ptr(w.reqs);
	deadline = dio_deadline(w.timeout_ns);

	for (i = 0; i < w.nr; i++) {
		if (get_user(uaddr, &ureqs[i])) {
			ret = -EFAULT;
			break;
		}
		ret = wait_event_interruptible_hrtimeout(df->wait,
				dio_req_ready(df, uaddr, &kreq),
				dio_remaining(deadline));
		if (ret)
			break;
		if (!kreq) {
			ret = -ENOENT;
			break;
		}
		ret = dio_kreq_deliver(df, kreq, NULL);
		if (ret)
			break;
	}
	return dio_wait_result(i, ret);
}

static struct dio_kreq *dio_kreq_claim_first(struct dio_file *df)
{
	struct dio_kreq *kreq;

	xa_lock_irq(&df->reqs);
	kreq = list_first_entry_or_null(&df->done, struct dio_kreq, node);
	if (kreq)
		dio_kreq_claim(df, kreq);
	xa_unlock_irq(&df->reqs);
	return kreq;
}

/**
 * dio_collect_ioctl - DIO_IOC_COLLECT
 * @df: the calling descriptor
 * @arg: user pointer to struct dio_wait
 *
 * Return: how many completions were reported into @arg->reqs (at least
 * @arg->min_nr unless the timeout expired or a signal came: then fewer,
 * possibly 0, or -EINTR when none).  -EINVAL for bad fields, -EFAULT.
 */
long dio_collect_ioctl(struct dio_file *df, void __user *arg)
{
	struct dio_kreq *kreq;
	u64 __user *out;
	struct dio_wait w;
	unsigned int n = 0;
	int ret;

	ret = dio_copy_arg(&w, sizeof(w), DIO_WAIT_SIZE_VER0, arg);
	if (ret)
		return ret;
	ret = dio_wait_check(&w, true);
	if (ret)
		return ret;
	out = u64_to_user_ptr(w.reqs);

	ret = wait_event_interruptible_hrtimeout(df->wait,
			READ_ONCE(df->nr_done) >= w.min_nr,
			dio_remaining(dio_deadline(w.timeout_ns)));
	while (n < w.nr && (kreq = dio_kreq_claim_first(df))) {
		int err = dio_kreq_deliver(df, kreq, &out[n]);

		if (err) {
			ret = err;
			break;
		}
		n++;
	}
	return dio_wait_result(n, ret);
}

/**
 * dio_io_module_init - request cache, bio set and reap workqueue
 *
 * Return: 0 or -errno.
 */
int dio_io_module_init(void)
{
	int ret = -ENOMEM;

	dio_kreq_cache = KMEM_CACHE(dio_kreq, 0);
	if (!dio_kreq_cache)
		return -ENOMEM;
	ret = bioset_init(&dio_bio_set, BIO_POOL_SIZE, 0, BIOSET_NEED_BVECS);
	if (ret)
		goto out_destroy_cache;
	ret = bioset_integrity_create(&dio_bio_set, BIO_POOL_SIZE);
	if (ret)
		goto out_exit_bioset;
	dio_wq = alloc_workqueue("dio_batch", WQ_UNBOUND, 0);
	if (!dio_wq) {
		ret = -ENOMEM;
		goto out_exit_bioset;
	}
	return 0;

out_exit_bioset:
	bioset_exit(&dio_bio_set);
out_destroy_cache:
	kmem_cache_destroy(dio_kreq_cache);
	return ret;
}

/**
 * dio_io_module_exit - undo dio_io_module_init(); every request is freed
 */
void dio_io_module_exit(void)
{
	destroy_workqueue(dio_wq);
	bioset_exit(&dio_bio_set);
	kmem_cache_destroy(dio_kreq_cache);
}
