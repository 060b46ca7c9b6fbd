// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: submitting requests and reporting their completions.
 *
 * SUBMIT reads each struct dio_request from the caller's memory, checks it
 * as the kernel's own read and write paths would (the LSM, through
 * rw_verify_area() on the block device file the handle was opened with; a
 * read-only or swap device for writes), charges the pages it will pin to
 * the caller's user (user.c), pins them straight into bios (as
 * block/fops.c's __blkdev_direct_IO does) and submits the whole batch under
 * one plug.  A request larger than one bio becomes several bios that share
 * a count.  A read's pages are marked dirty at submission, as block/fops.c
 * does.  Before its bios, a request keeps the block device's page cache
 * coherent as the kernel's own direct I/O does (dio_kreq_sync_cache()):
 * when the device has cached pages, those of the request's range are
 * written back, and for a write dropped; a failure there is that
 * request's result, and the batch goes on.
 *
 * The last bio to complete completes the request where it runs, as
 * block/fops.c's blkdev_bio_end_io() does: it releases the pages and the
 * charge and queues the request on its descriptor's done list, keeping
 * only what the report needs (result, a read's PI).  Pins therefore end
 * with the I/O, reported or not.  Only a request with work that may sleep
 * is completed in process context instead, by its descriptor's completion
 * work (one work item for all the requests waiting for it, and one
 * wake-up): a read whose PI the module verifies on the pages the bios
 * hold, a refusal whose interval it must find, a read with a page that
 * lost its dirty bit while the I/O ran (dirtying it again takes the page
 * lock), or a write whose device has cached pages, which are dropped again
 * (dio_kreq_invalidate_written()).
 *
 * A request with DIO_REQ_FIXED names a registered buffer (fixed.c): its
 * bios get the registration's pages, already pinned and charged, so it
 * pins, charges and dirties nothing, and releases no page at completion;
 * it holds the registration until it is freed.
 *
 * A descriptor belongs to the memory of the process that created it: only
 * that process may SUBMIT, WAIT and COLLECT (-EXDEV for another), so
 * results are written only into the memory of the process that submitted.
 * WAIT and COLLECT claim done requests, copy a read's PI out, write the
 * results into the caller's struct dio_request and free the kernel's
 * state, sending the fsnotify event pread or pwrite would from the
 * submitter's process (io_uring sends it from the submitter's task too).
 * A descriptor closed with requests in flight reaps them from a work item
 * (file.c; the events are sent then).
 *
 * The request table of a descriptor is a hash table keyed by the request's
 * user address divided by the smallest request size: requests that do not
 * overlap never share a key.  Entering and leaving it allocates nothing:
 * its link is in the request.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/fsnotify.h>
#include <linux/hrtimer.h>
#include <linux/log2.h>
#include <linux/pagemap.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/task_io_accounting_ops.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "dio_batch.h"
#include "trace.h"

#define DIO_REQ_KEY_SHIFT	ilog2(DIO_REQUEST_SIZE_VER0)
/* Freed request structs a descriptor keeps for its next submissions. */
#define DIO_KREQ_CACHE		64

static struct kmem_cache *dio_kreq_cache;
/* Request structs kept in all descriptors' caches (debugfs kept_kreqs). */
atomic_t dio_kreqs_kept = ATOMIC_INIT(0);
struct bio_set dio_bio_set;
struct workqueue_struct *dio_wq;

static unsigned long dio_req_key(u64 uaddr)
{
	BUILD_BUG_ON(DIO_REQUEST_SIZE_VER0 != 1U << DIO_REQ_KEY_SHIFT);
	return uaddr >> DIO_REQ_KEY_SHIFT;
}

/* The request in @df's table under @key, or NULL; df->lock held. */
static struct dio_kreq *dio_kreq_find(struct dio_file *df, u64 key)
{
	struct dio_kreq *kreq;

	hash_for_each_possible(df->reqs, kreq, hnode, key)
		if (dio_req_key(kreq->uaddr) == key)
			return kreq;
	return NULL;
}

/* The request submitted at @uaddr on @df, or NULL; df->lock held. */
static struct dio_kreq *dio_kreq_lookup(struct dio_file *df, u64 uaddr)
{
	struct dio_kreq *kreq = dio_kreq_find(df, dio_req_key(uaddr));

	return kreq && kreq->uaddr == uaddr ? kreq : NULL;
}

/* ---- completion (any context) ---- */

/*
 * Queue @kreq on its descriptor's done list; @wake: wake the waiters (a
 * run of completions wakes them once, with its last).
 */
static void dio_kreq_complete(struct dio_kreq *kreq, bool wake)
{
	struct dio_file *df = kreq->df;
	unsigned long flags;

	spin_lock_irqsave(&df->lock, flags);
	kreq->done = true;
	list_add_tail(&kreq->node, &df->done);
	df->nr_done++;
	/*
	 * A queued reap work holds @df (dio_file_reap_all() drops it): the
	 * run already going may free every request, @df with the last.  Our
	 * request holds @df until the reaper, which needs this lock, frees it.
	 */
	if (unlikely(df->released) && queue_work(dio_wq, &df->reap_work))
		kref_get(&df->ref);
	/* No waiter, no wake-up: its lock is not taken for nothing. */
	if (wake && wq_has_sleeper(&df->wait))
		wake_up(&df->wait);
	spin_unlock_irqrestore(&df->lock, flags);
}

/* Are all the pages of @bio still dirty (a read's, dirtied at submission)? */
static bool dio_bio_pages_dirty(struct bio *bio)
{
	struct folio_iter fi;

	bio_for_each_folio_all(fi, bio)
		if (!folio_test_dirty(fi.folio))
			return false;
	return true;
}

/* Mark a read's pages dirty before the device writes them. */
static void dio_bio_set_pages_dirty(struct bio *bio)
{
	struct folio_iter fi;

	bio_for_each_folio_all(fi, bio) {
		if (folio_test_dirty(fi.folio))
			continue;
		folio_lock(fi.folio);
		folio_mark_dirty(fi.folio);
		folio_unlock(fi.folio);
	}
}

/* ---- the block device's page cache ---- */

/*
 * The page cache a request must keep coherent: that of the block device
 * file it was checked against, whose f_mapping is the device's own, as
 * for the kernel's direct I/O (iocb->ki_filp->f_mapping).  A partition,
 * the whole disk and a device stacked on it each have their own, which
 * the kernel does not keep coherent with each other either.
 */
static struct address_space *dio_kreq_mapping(const struct dio_kreq *kreq)
{
	return kreq->file->f_mapping;
}

/*
 * The page cache before the bios of @kreq, a read or a write, checked and
 * entered in its table: what the kernel's direct I/O on a block device
 * does first (block/fops.c; mm/filemap.c's kiocb_write_and_wait() and
 * kiocb_invalidate_pages()).  The dirty pages of the request's range are
 * written back and waited for, so that a read gets what a buffered writer
 * left in the cache; for a write, the range's pages are then dropped, so
 * that a buffered reader reads what the write stored.  A device with no
 * cached page (the usual case for one used only through direct I/O)
 * costs one test of its count.
 *
 * Context: the submitter's, under its plug (a sleep flushes it).
 *
 * Return: 0, writeback's error (-EIO, -ENOSPC), or -EBUSY for a write
 * whose range holds a page that cannot be dropped (dirtied again while it
 * was written back, or buffers a filesystem holds): the kernel's pwrite()
 * with O_DIRECT writes through the cache then, which a request cannot.
 */
static int dio_kreq_sync_cache(struct dio_kreq *kreq)
{
	struct address_space *mapping = dio_kreq_mapping(kreq);
	loff_t pos = kreq->ureq.offset;
	loff_t end = pos + kreq->bytes - 1;
	int ret;

	if (likely(!READ_ONCE(mapping->nrpages)))
		return 0;
	ret = filemap_write_and_wait_range(mapping, pos, end);
	if (ret || kreq->opcode != DIO_OP_WRITE)
		return ret;
	return invalidate_inode_pages2_range(mapping, pos >> PAGE_SHIFT,
					     end >> PAGE_SHIFT);
}

/*
 * Has a write that succeeded cached pages on its device to drop again?
 * Any context: one test when the device has none.
 */
static bool dio_kreq_written_cached(const struct dio_kreq *kreq)
{
	return !kreq->error && READ_ONCE(dio_kreq_mapping(kreq)->nrpages);
}

/*
 * Drop the cached pages of a completed request, its pages released, when
 * it is a write that succeeded and its device has some: once more, as the
 * kernel does after a direct write (kiocb_invalidate_post_direct_write()),
 * since a buffered read or readahead that ran while the write was at the
 * device may have cached what was there before.  The completion work does
 * it (dio_kreq_needs_process()), before the request can be reported.  A
 * page that cannot be dropped is reported as the kernel reports it: the
 * device's page cache records -EIO for the next fsync(), and a message
 * (rate-limited) says so; the write itself succeeded.
 *
 * Context: process context, may sleep.
 */
static void dio_kreq_invalidate_written(struct dio_kreq *kreq)
{
	struct address_space *mapping;
	loff_t pos = kreq->ureq.offset;

	if (kreq->opcode != DIO_OP_WRITE || !dio_kreq_written_cached(kreq))
		return;
	mapping = dio_kreq_mapping(kreq);
	if (!invalidate_inode_pages2_range(mapping, pos >> PAGE_SHIFT,
					   (pos + kreq->bytes - 1) >> PAGE_SHIFT))
		return;
	errseq_set(&mapping->wb_err, -EIO);
	pr_crit_ratelimited("page cache invalidation failure after a write of %pg at %llu: possible data corruption due to collision with buffered I/O\n",
			    kreq->h->bdev.bdev, (unsigned long long)pos);
}

/*
 * Release the pages and the bios.  @may_sleep: in process context, where
 * a read's pages that lost their dirty bit are dirtied again; otherwise
 * dio_kreq_needs_process() found them all dirty.
 */
static void dio_kreq_release_pages(struct dio_kreq *kreq, bool may_sleep)
{
	bool read = kreq->opcode == DIO_OP_READ;
	struct bio *bio;

	while ((bio = kreq->bios)) {
		kreq->bios = bio->bi_next;
		bio->bi_next = NULL;
		/* Registered pages stay pinned by their set (fixed.c). */
		if (!kreq->fixed)
			bio_release_pages(bio, may_sleep && read &&
					  !dio_bio_pages_dirty(bio));
		bio_put(bio);
	}
	dio_user_uncharge(kreq->user, kreq->pinned);
	kreq->pinned = 0;
}

/*
 * Count a completed request in its handle's counts (counters.c): this
 * CPU's, no lock.  A flush's result is 0, so only reads and writes count
 * bytes; a failure's kind is counted out of line.
 */
static __always_inline void dio_kreq_count(const struct dio_kreq *kreq)
{
	struct dio_counts __percpu *c = kreq->h->counts;
	s64 res = kreq->out.result;

	BUILD_BUG_ON(DIO_CNT_READS + DIO_OP_WRITE != DIO_CNT_WRITES ||
		     DIO_CNT_READS + DIO_OP_FLUSH != DIO_CNT_FLUSHES ||
		     DIO_CNT_READ_BYTES + DIO_OP_WRITE != DIO_CNT_WRITE_BYTES);
	this_cpu_inc(c->v[DIO_CNT_READS + kreq->opcode]);
	if (likely(res > 0))
		this_cpu_add(c->v[DIO_CNT_READ_BYTES + kreq->opcode], res);
	else if (unlikely(res < 0))
		dio_count_error(c, &kreq->out);
}

/*
 * Complete a request whose bios all completed: the result, what is left
 * of its PI, its counts, its pages and charge; then it can be reported.  @may_sleep
 * as for dio_kreq_release_pages(), @wake as for dio_kreq_complete().
 * Inlined in both completion paths, as it was before it had trace events:
 * their out-of-line bodies made the compiler call it instead, a call per
 * I/O that disabled events must not cost (bench/README.md).
 */
static __always_inline void dio_kreq_finish(struct dio_kreq *kreq, bool may_sleep, bool wake)
{
	kreq->out.result = kreq->error ? kreq->error : (s64)kreq->bytes;
	dio_pi_complete(kreq);
	dio_kreq_count(kreq);
	trace_dio_batch_pi_error(kreq);
	trace_dio_batch_complete(kreq, kreq->start_ns ?
				 ktime_get_ns() - kreq->start_ns : 0);
	dio_kreq_release_pages(kreq, may_sleep);
	if (may_sleep)
		dio_kreq_invalidate_written(kreq);
	dio_kreq_complete(kreq, wake);
}

/* Must the completion sleep (see the comment at the top)? */
static bool dio_kreq_needs_process(struct dio_kreq *kreq)
{
	struct bio *bio;

	if (dio_pi_needs_process(kreq))
		return true;
	if (kreq->opcode == DIO_OP_WRITE)
		return dio_kreq_written_cached(kreq);
	/* Registered pages are dirtied when they are unpinned. */
	if (kreq->opcode != DIO_OP_READ || kreq->fixed)
		return false;
	for (bio = kreq->bios; bio; bio = bio->bi_next)
		if (!dio_bio_pages_dirty(bio))
			return true;
	return false;
}

/*
 * Drop one count of @kreq: a bio's, or the submission's own.  A request
 * whose completion may sleep joins its descriptor's list for the
 * completion work, which the first to join queues.  The request holds
 * the descriptor, so the work item outlives its queueing.
 */
static void dio_kreq_put(struct dio_kreq *kreq)
{
	struct dio_file *df = kreq->df;

	if (!atomic_dec_and_test(&kreq->remaining))
		return;
	if (!dio_kreq_needs_process(kreq)) {
		dio_kreq_finish(kreq, false, true);
		return;
	}
	if (llist_add(&kreq->complete, &df->complete))
		queue_work(dio_wq, &df->complete_work);
}

static void dio_bio_end_io(struct bio *bio)
{
	struct dio_kreq *kreq = bio->bi_private;
	unsigned long flags;

	if (bio->bi_status)
		cmpxchg(&kreq->error, 0, blk_status_to_errno(bio->bi_status));
	/* Keep the bio: the completion work verifies and releases it. */
	spin_lock_irqsave(&kreq->bio_lock, flags);
	bio->bi_next = kreq->bios;
	kreq->bios = bio;
	spin_unlock_irqrestore(&kreq->bio_lock, flags);
	dio_kreq_put(kreq);
}

/* ---- completion work (process context) ---- */

/**
 * dio_kreq_complete_work - complete a descriptor's requests that may sleep
 * @work: the descriptor's complete_work
 *
 * Completes the requests dio_kreq_put() listed, in the order they came,
 * in one run: one work item for them all (a kernel thread woken once, not
 * once per request), and one wake-up of the descriptor's waiters, with
 * the last.  Every run finds at least one request: only the one that
 * finds the list empty queues the work.  Does not touch the descriptor
 * after the last request is complete: its reporter may free it, and the
 * descriptor with it.
 */
void dio_kreq_complete_work(struct work_struct *work)
{
	struct dio_file *df = container_of(work, struct dio_file,
					   complete_work);
	struct llist_node *node;
	struct dio_kreq *kreq;

	node = llist_reverse_order(llist_del_all(&df->complete));
	while (node) {
		kreq = llist_entry(node, struct dio_kreq, complete);
		node = node->next;
		dio_kreq_finish(kreq, true, !node);
	}
}

/* ---- request structs ---- */

/*
 * Keep a freed request's struct for @df's next submissions, as io_uring
 * keeps its requests: no slab round trip, and no zeroing of the whole
 * struct, per request.  At most DIO_KREQ_CACHE a descriptor, charged to
 * the memory cgroup that allocated them, freed with the descriptor.
 */
static void dio_kreq_recycle(struct dio_kreq *kreq)
{
	struct dio_file *df = kreq->df;

	if (!atomic_add_unless(&df->nr_kreq_cache, 1, DIO_KREQ_CACHE)) {
		kmem_cache_free(dio_kreq_cache, kreq);
		return;
	}
	atomic_inc(&dio_kreqs_kept);
	llist_add(&kreq->complete, &df->kreq_cache);
}

/**
 * dio_kreq_cache_drain - free the request structs a descriptor kept
 * @df: the descriptor, being freed
 */
void dio_kreq_cache_drain(struct dio_file *df)
{
	struct llist_node *node = llist_del_all(&df->kreq_cache);
	struct dio_kreq *kreq, *next;

	llist_for_each_entry_safe(kreq, next, node, complete) {
		atomic_dec(&dio_kreqs_kept);
		kmem_cache_free(dio_kreq_cache, kreq);
	}
}

/*
 * Drop what a request holds, keyed on what is set (dio_kreq_alloc() zeroed
 * the rest): its file, after the fsnotify event pread or pwrite would send
 * for a request that moved data; its user account, registered set, PI
 * buffer and handle.  Then keep its struct for reuse.  Process context.
 */
static void dio_kreq_release(struct dio_kreq *kreq)
{
	if (kreq->file) {
		if (kreq->out.result > 0) {
			if (kreq->opcode == DIO_OP_READ)
				fsnotify_access(kreq->file);
			else
				fsnotify_modify(kreq->file);
		}
		fput(kreq->file);
	}
	dio_user_put(kreq->user);
	dio_fixed_put(kreq->fixed);
	dio_pi_free(kreq);
	if (kreq->h)
		dio_handle_put(kreq->h);
	dio_kreq_recycle(kreq);
}

/**
 * dio_kreq_free - free a request that left its descriptor's table
 * @kreq: the request; its pages are released
 *
 * Drops what the request holds (dio_kreq_release()), then its reference
 * to its descriptor, which may be the last.
 *
 * Context: process context: the submitter's when it is reported, the
 * reaper's otherwise.
 */
void dio_kreq_free(struct dio_kreq *kreq)
{
	struct dio_file *df = kreq->df;

	dio_kreq_release(kreq);
	dio_file_put(df);
}

/* Take a done request off the done list; df->lock held. */
static void dio_kreq_claim(struct dio_file *df, struct dio_kreq *kreq)
{
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

/* Take @kreq out of the table: its address may be submitted again. */
static void dio_kreq_remove(struct dio_file *df, struct dio_kreq *kreq)
{
	spin_lock_irq(&df->lock);
	hash_del(&kreq->hnode);
	df->nr_reqs--;
	spin_unlock_irq(&df->lock);
}

/* ---- submission ---- */

static int dio_req_check(const struct dio_request *r)
{
	if (r->opcode > DIO_OP_LAST)
		return -EINVAL;
	if (r->flags & ~DIO_REQ_F_ALL)
		return -EINVAL;
	if ((r->flags & DIO_REQ_FIXED) ? (r->flags & DIO_REQ_IOVEC) :
					 r->buf_index)
		return -EINVAL;
	/* One test of all the padding: no branch, and no memchr_inv() call. */
	BUILD_BUG_ON(sizeof(r->pad3) != 6);
	if (r->pad0 | r->pad2[0] | r->pad2[1] | r->pad2[2] |
	    r->pad3[0] | r->pad3[1] | r->pad3[2] | r->pad3[3] | r->pad3[4] |
	    r->pad3[5] | r->reserved[0] | r->reserved[1])
		return -EINVAL;
	if (r->opcode == DIO_OP_FLUSH)
		return (r->flags || r->buf || r->len || r->offset ||
			r->pi_buf || r->pi_len || r->pi_flags) ? -EINVAL : 0;
	if ((r->flags & DIO_REQ_FUA) && r->opcode != DIO_OP_WRITE)
		return -EINVAL;
	return 0;
}

/*
 * Every segment as the device needs it: its address aligned to the DMA
 * alignment, its length a multiple of the logical block size (the rule of
 * block/fops.c, which bio_iov_iter_get_pages() relies on).
 */
static bool dio_segs_aligned(const struct iovec *seg, unsigned long nr,
			     unsigned long addr_mask, size_t len_mask)
{
	for (; nr; nr--, seg++) {
		if (!seg->iov_len)
			continue;
		if (((unsigned long)seg->iov_base & addr_mask) ||
		    (seg->iov_len & len_mask))
			return false;
	}
	return true;
}

/* Pages the segments will pin, a page once per segment that covers it. */
static unsigned long dio_segs_pages(const struct iovec *seg, unsigned long nr)
{
	unsigned long pages = 0;

	for (; nr; nr--, seg++)
		if (seg->iov_len)
			pages += DIV_ROUND_UP(offset_in_page(seg->iov_base) +
					      seg->iov_len, PAGE_SIZE);
	return pages;
}

/*
 * A DIO_REQ_FIXED request's data, checked as any: found within the
 * registered buffer it names.  Nothing is pinned or charged: the set's
 * pages serve it, held until it is freed.
 */
static int dio_kreq_find_fixed(struct dio_kreq *kreq, struct dio_fixed *fixed)
{
	const struct dio_request *r = &kreq->ureq;
	const struct dio_kbuf *b;

	b = dio_fixed_find(fixed, r->buf_index, r->buf, r->len);
	if (IS_ERR(b))
		return PTR_ERR(b);
	kreq->fixed = dio_fixed_hold(fixed);
	kreq->fbuf = b;
	return 0;
}

/*
 * Turn the request's buffer into @iter, or with DIO_REQ_FIXED find it in
 * @fixed (@iter stays empty).  On success *@iov is NULL, or the iovec
 * array import_iovec() allocated, which the caller frees.
 */
static int dio_kreq_import(struct dio_kreq *kreq, struct dio_fixed *fixed,
			   struct iovec *fast, struct iovec **iov,
			   struct iov_iter *iter)
{
	const struct dio_request *r = &kreq->ureq;
	int dir = r->opcode == DIO_OP_READ ? ITER_DEST : ITER_SOURCE;
	struct block_device *bdev = kreq->h->bdev.bdev;
	unsigned long addr_mask = dio_bdev_dma_alignment(bdev) - 1;
	unsigned int lbs = bdev_logical_block_size(bdev);
	const struct iovec *segs;
	unsigned long nr_segs;
	struct iovec one;
	u64 capacity = bdev_nr_bytes(bdev);
	size_t count;
	ssize_t ret;

	*iov = NULL;
	if (r->offset & (lbs - 1))
		return -EINVAL;
	if (r->flags & DIO_REQ_IOVEC) {
		if (!r->len || r->len > UIO_MAXIOV)
			return -EINVAL;
		*iov = fast;
		ret = import_iovec(dir, u64_to_user_ptr(r->buf), r->len,
				   UIO_FASTIOV, iov, iter);
		if (ret < 0)
			return ret;
		/* The segments are in @fast unless import_iovec() allocated. */
		segs = *iov ? *iov : fast;
		nr_segs = r->len;
	} else {
		if (!r->len || r->len > DIO_MAX_IO_BYTES)
			return -EINVAL;
		/* @fast[0] may back @iter (import_single_range()). */
		if (!(r->flags & DIO_REQ_FIXED)) {
			ret = dio_import_buf(dir, u64_to_user_ptr(r->buf),
					     r->len, fast, iter);
			if (ret)
				return ret;
		}
		one.iov_base = u64_to_user_ptr(r->buf);
		one.iov_len = r->len;
		segs = &one;
		nr_segs = 1;
	}
	count = (r->flags & DIO_REQ_FIXED) ? r->len : iov_iter_count(iter);
	ret = -EINVAL;
	if (!count || count > DIO_MAX_IO_BYTES || (count & (lbs - 1)))
		goto out_free_iov;
	if (!dio_segs_aligned(segs, nr_segs, addr_mask, lbs - 1))
		goto out_free_iov;
	ret = -ENXIO;
	if (r->offset > capacity || count > capacity - r->offset)
		goto out_free_iov;
	kreq->bytes = count;
	if (r->flags & DIO_REQ_FIXED)
		return dio_kreq_find_fixed(kreq, fixed);
	kreq->pinned = dio_segs_pages(segs, nr_segs) << PAGE_SHIFT;
	return 0;

out_free_iov:
	kfree(*iov);
	*iov = NULL;
	return ret;
}

static void dio_bio_submit(struct dio_kreq *kreq, struct bio *bio)
{
	bio->bi_private = kreq;
	bio->bi_end_io = dio_bio_end_io;
	atomic_inc(&kreq->remaining);
	submit_bio(bio);
}

/*
 * Fill a new bio with the next part of the request's data: pinned from
 * @iter, or the registered pages from @addr on.  Return: 0, or -errno.
 */
static int dio_bio_fill(struct dio_kreq *kreq, struct bio *bio,
			struct iov_iter *iter, u64 addr, u64 left)
{
	unsigned int lbs = bdev_logical_block_size(kreq->h->bdev.bdev);

	if (!kreq->fixed)
		return dio_bio_iov_iter_get_pages(bio, iter);
	dio_fixed_bio_add(bio, kreq->fbuf, addr, left, lbs);
	return 0;
}

/*
 * Build and submit the request's bios.  Return: 0 once at least one bio is
 * on its way (a later failure then fails the request as a whole: its bios
 * already submitted complete, and the result is the error), or -errno when
 * none was submitted.
 */
static int dio_kreq_submit_bios(struct dio_kreq *kreq, struct iov_iter *iter)
{
	const struct dio_request *r = &kreq->ureq;
	struct block_device *bdev = kreq->h->bdev.bdev;
	u64 addr = r->buf, left = kreq->bytes;
	loff_t pos = r->offset;
	bool submitted = false;
	struct bio *bio;
	blk_opf_t opf;
	int nr_vecs;
	int ret;

	if (r->opcode == DIO_OP_FLUSH) {
		bio = bio_alloc_bioset(bdev, 0, REQ_OP_WRITE | REQ_PREFLUSH,
				       GFP_KERNEL, &dio_bio_set);
		dio_bio_submit(kreq, bio);
		return 0;
	}

	if (r->opcode == DIO_OP_READ)
		opf = REQ_OP_READ;
	else
		opf = REQ_OP_WRITE | REQ_SYNC | REQ_IDLE;
	if (r->flags & DIO_REQ_FUA)
		opf |= REQ_FUA;
	while (left) {
		if (kreq->fixed)
			nr_vecs = min_t(unsigned long, BIO_MAX_VECS,
					dio_fixed_pages(addr, left));
		else
			nr_vecs = bio_iov_vecs_to_alloc(iter, BIO_MAX_VECS);
		bio = bio_alloc_bioset(bdev, nr_vecs, opf, GFP_KERNEL,
				       &dio_bio_set);
		bio->bi_iter.bi_sector = pos >> SECTOR_SHIFT;
		ret = dio_bio_fill(kreq, bio, iter, addr, left);
		if (unlikely(ret))
			goto out_put_bio;
		ret = dio_pi_attach(kreq, bio);
		if (unlikely(ret))
			goto out_release_pages;
		pos += bio->bi_iter.bi_size;
		addr += bio->bi_iter.bi_size;
		left -= bio->bi_iter.bi_size;
		if (op_is_write(opf))
			task_io_account_write(bio->bi_iter.bi_size);
		else if (!kreq->fixed)
			dio_bio_set_pages_dirty(bio);
		dio_bio_submit(kreq, bio);
		submitted = true;
	}
	return 0;

out_release_pages:
	if (!kreq->fixed)
		bio_release_pages(bio, false);
out_put_bio:
	bio_put(bio);
	if (!submitted)
		return ret;
	cmpxchg(&kreq->error, 0, ret);
	return 0;
}

/*
 * Enter @kreq in its descriptor's table, counted against max_inflight.
 * Return: 0, -EAGAIN (limit reached) or -EBUSY (this address, or one it
 * overlaps, is in flight).
 */
static int dio_kreq_insert(struct dio_file *df, struct dio_kreq *kreq)
{
	u64 key;

	spin_lock_irq(&df->lock);
	if (df->nr_reqs >= READ_ONCE(dio_max_inflight)) {
		spin_unlock_irq(&df->lock);
		return -EAGAIN;
	}
	key = dio_req_key(kreq->uaddr);
	if (dio_kreq_find(df, key)) {
		spin_unlock_irq(&df->lock);
		return -EBUSY;
	}
	hash_add(df->reqs, &kreq->hnode, key);
	df->nr_reqs++;
	spin_unlock_irq(&df->lock);
	kref_get(&df->ref);
	return 0;
}

/*
 * Undo the submission of a request that never reached the device, keyed on
 * what it set: its entry in the table (dio_kreq_insert(): it is hashed,
 * and holds its descriptor), the charge of its pinned pages (@user is set
 * only once they are charged), and what dio_kreq_release() drops.
 */
static void dio_kreq_unsubmit(struct dio_kreq *kreq)
{
	struct dio_file *df = kreq->df;
	bool inserted;

	/* Under the lock: inserting a neighbour rewrites our hnode.pprev. */
	spin_lock_irq(&df->lock);
	inserted = hash_hashed(&kreq->hnode);
	if (inserted) {
		hash_del(&kreq->hnode);
		df->nr_reqs--;
	}
	spin_unlock_irq(&df->lock);
	/* A WAIT that found it in the table must see it gone. */
	if (inserted)
		wake_up(&df->wait);
	if (kreq->user)
		dio_user_uncharge(kreq->user, kreq->pinned);
	dio_kreq_release(kreq);
	if (inserted)
		dio_file_put(df);
}

/*
 * The checks of the kernel's own paths, on the file the handle was opened
 * through: the LSM's (rw_verify_area(), as vfs_read() and vfs_write() ask),
 * and for a write the device's read-only state and swap, which can change
 * after OPEN (blkdev_write_iter()).
 */
static int dio_kreq_permitted(struct dio_kreq *kreq)
{
	bool write = kreq->opcode == DIO_OP_WRITE;
	loff_t pos = kreq->ureq.offset;
	int ret;

	ret = rw_verify_area(write ? WRITE : READ, kreq->file, &pos,
			     kreq->bytes);
	if (ret)
		return ret;
	if (write)
		return dio_write_allowed(kreq->file, -EPERM);
	return 0;
}

/*
 * What one SUBMIT call looks up once for all its requests: the user's
 * pinned-memory account, the registered set (when a request first needs
 * it), and the handle the last request named with the files its reads and
 * writes are checked against (when one first needs each), and the request
 * structs it took from the descriptor's cache.  Every request
 * takes its own references from these; the batch's are dropped at the
 * end of the call.  A handle revoked during the call refuses the requests
 * after that; its access (which of its openers may read or write) is the
 * one the call found.
 */
struct dio_batch {
	struct dio_user		*user;
	struct dio_fixed	*fixed;
	struct dio_handle	*h;
	struct file		*file[2];	/* [write], or NULL */
	bool			looked[2];	/* @file[write] was looked up */
	struct llist_node	*kreqs;		/* taken from the kreq cache */
};

/*
 * A request struct for batch @b of @df: one the descriptor kept (taken a
 * batch's worth at a time: only llist_del_all() is safe against other
 * takers), or a new one.  Zeroed up to ureq, which the caller fills.
 */
static struct dio_kreq *dio_kreq_alloc(struct dio_file *df,
				       struct dio_batch *b)
{
	struct llist_node *node;
	struct dio_kreq *kreq;

	if (!b->kreqs)
		b->kreqs = llist_del_all(&df->kreq_cache);
	node = b->kreqs;
	if (node) {
		b->kreqs = node->next;
		atomic_dec(&df->nr_kreq_cache);
		atomic_dec(&dio_kreqs_kept);
		kreq = llist_entry(node, struct dio_kreq, complete);
	} else {
		kreq = kmem_cache_alloc(dio_kreq_cache, GFP_KERNEL);
		if (!kreq)
			return NULL;
	}
	memset(kreq, 0, offsetof(struct dio_kreq, ureq));
	return kreq;
}

/* Give back the kept request structs batch @b took and did not use. */
static void dio_batch_return_kreqs(struct dio_file *df, struct dio_batch *b)
{
	struct llist_node *last = b->kreqs;

	if (!last)
		return;
	while (last->next)
		last = last->next;
	llist_add_batch(b->kreqs, last, &df->kreq_cache);
}

static void dio_batch_drop_handle(struct dio_batch *b)
{
	int i;

	if (!b->h)
		return;
	for (i = 0; i < 2; i++) {
		if (b->file[i])
			fput(b->file[i]);
		b->file[i] = NULL;
		b->looked[i] = false;
	}
	dio_handle_put(b->h);
	b->h = NULL;
}

/* Handle @id with a reference for a request, or NULL when it is not live. */
static struct dio_handle *dio_batch_handle(struct dio_batch *b,
					   struct dio_file *df, u32 id)
{
	if (!b->h || b->h->id != id) {
		dio_batch_drop_handle(b);
		b->h = dio_handle_get(df->ctx, id);
		if (!b->h)
			return NULL;
	}
	if (READ_ONCE(b->h->revoked))
		return NULL;
	kref_get(&b->h->ref);
	return b->h;
}

/*
 * The file a request of the batch's handle is checked against, with a
 * reference for the request; NULL when no opener has the access.
 */
static struct file *dio_batch_file(struct dio_batch *b, bool write)
{
	if (!b->looked[write]) {
		b->file[write] = dio_handle_file(b->h, write);
		b->looked[write] = true;
	}
	return b->file[write] ? get_file(b->file[write]) : NULL;
}

/*
 * Submit the request at @uaddr, one of batch @b's.  Every failure before a
 * bio is on its way goes through dio_kreq_unsubmit().
 */
static int dio_submit_one(struct dio_file *df, struct dio_batch *b, u64 uaddr)
{
	struct dio_user *user = b->user;
	struct iovec fast[UIO_FASTIOV], *iov = NULL;
	struct iov_iter iter = {};
	struct dio_kreq *kreq;
	int ret;

	kreq = dio_kreq_alloc(df, b);
	if (!kreq)
		return -ENOMEM;
	kreq->df = df;
	/* Straight into the request: ureq is in the cache's whitelist. */
	ret = dio_copy_request(&kreq->ureq, uaddr);
	if (ret)
		goto out_unsubmit;
	ret = dio_req_check(&kreq->ureq);
	if (ret)
		goto out_unsubmit;
	kreq->h = dio_batch_handle(b, df, kreq->ureq.handle);
	ret = -EBADF;
	if (!kreq->h)
		goto out_unsubmit;
	kreq->uaddr = uaddr;
	kreq->opcode = kreq->ureq.opcode;
	atomic_set(&kreq->remaining, 1);	/* submission bias */
	spin_lock_init(&kreq->bio_lock);
	INIT_LIST_HEAD(&kreq->node);
	if (kreq->opcode != DIO_OP_FLUSH) {
		/* No opener of the handle has the access: EBADF, as pwrite. */
		kreq->file = dio_batch_file(b, kreq->opcode == DIO_OP_WRITE);
		ret = -EBADF;
		if (!kreq->file)
			goto out_unsubmit;
		if ((kreq->ureq.flags & DIO_REQ_FIXED) && !b->fixed)
			b->fixed = dio_fixed_get(df);
		/* Takes the iovecs (*@iov), or a registered set (@fixed). */
		ret = dio_kreq_import(kreq, b->fixed, fast, &iov, &iter);
		if (ret)
			goto out_unsubmit;
		ret = dio_kreq_permitted(kreq);
		if (ret)
			goto out_unsubmit;
	}
	ret = dio_pi_check_request(kreq);
	if (ret)
		goto out_unsubmit;
	ret = dio_user_charge(user, kreq->pinned);
	if (ret)
		goto out_unsubmit;
	if (user && kreq->pinned) {
		refcount_inc(&user->ref);
		kreq->user = user;
	}
	ret = dio_kreq_insert(df, kreq);
	if (ret)
		goto out_unsubmit;
	/* May allocate the PI buffer before it fails. */
	ret = dio_pi_prepare(kreq);
	if (ret)
		goto out_unsubmit;
	if (trace_dio_batch_complete_enabled())
		kreq->start_ns = ktime_get_ns();
	/* A read or a write: the page cache first; its failure is the result. */
	ret = kreq->file ? dio_kreq_sync_cache(kreq) : 0;
	if (unlikely(ret)) {
		/* No bio: the submission's count completes it with @ret. */
		cmpxchg(&kreq->error, 0, ret);
	} else {
		ret = dio_kreq_submit_bios(kreq, &iter);
		if (ret)
			goto out_unsubmit;
	}
	/* The submission's bias still holds @kreq: it cannot complete yet. */
	trace_dio_batch_submit(kreq);
	kfree(iov);
	/* From here on @kreq may complete and be reported at any time. */
	dio_kreq_put(kreq);
	return 0;

out_unsubmit:
	kfree(iov);
	if (kreq->h)
		dio_count_refused(kreq);
	dio_kreq_unsubmit(kreq);
	return ret;
}

/* Pointers SUBMIT reads from the caller's array in one copy. */
#define DIO_SUBMIT_CHUNK	32U
/* Not a request's address (misaligned): a pointer that could not be read. */
#define DIO_UADDR_FAULT		((u64)-1)

/*
 * Read @nr request pointers into @out; those that cannot be read (the
 * first one that faults and all after it) become DIO_UADDR_FAULT.
 */
static void dio_get_uaddrs(u64 *out, const u64 __user *uptr, unsigned int nr)
{
	unsigned int i;

	if (!copy_from_user(out, uptr, nr * sizeof(*out)))
		return;
	for (i = 0; i < nr; i++)
		if (get_user(out[i], &uptr[i]))
			break;
	for (; i < nr; i++)
		out[i] = DIO_UADDR_FAULT;
}

/**
 * dio_submit_ioctl - DIO_IOC_SUBMIT
 * @df: the calling descriptor, created by the caller's process
 *	(DIO_CMD_MINE: dio_cmd_run() answers -EXDEV to another)
 * @arg: struct dio_submit, copied in
 * @uarg: the user's struct (unused)
 *
 * Return: the number of requests queued; if the first one fails, -errno:
 * -EINVAL (bad request fields, alignment or length), -ENXIO (beyond the
 * device), -EBADF (handle not live, or a write or read its openers'
 * access does not allow), -EBUSY (request already in flight on this
 * descriptor, or one it overlaps), -EAGAIN (too many requests in flight,
 * or the user's pinned-memory ceiling reached while it has I/O in
 * flight), -EOPNOTSUPP (PI the device cannot honour), -EILSEQ (the
 * caller's PI refused before submission), -EPERM (a write to a read-only
 * device), -ETXTBSY (a write to an active swap device), the LSM's error,
 * -EFAULT, -ENOMEM (also: a request that alone passes the ceiling).  A
 * request whose page cache step fails (dio_kreq_sync_cache(): writeback's
 * error, or -EBUSY for a write) is queued: that error is its result.
 */
long dio_submit_ioctl(struct dio_file *df, void *arg, void __user *uarg)
{
	const struct dio_submit *s = arg;
	u64 uaddrs[DIO_SUBMIT_CHUNK];
	struct dio_batch b = {};
	struct blk_plug plug;
	u64 __user *ureqs;
	unsigned int i, n;
	int ret = 0;

	if (!s->nr || s->nr > DIO_MAX_BATCH || s->reserved[0] ||
	    s->reserved[1])
		return -EINVAL;
	ureqs = u64_to_user_ptr(s->reqs);
	b.user = dio_user_get();
	if (IS_ERR(b.user))
		return PTR_ERR(b.user);

	blk_start_plug(&plug);
	for (i = 0; i < s->nr && !ret; i++) {
		/* The pointers a chunk at a time; a fault: the good ones. */
		n = i % DIO_SUBMIT_CHUNK;
		if (!n)
			dio_get_uaddrs(uaddrs, &ureqs[i],
				       min(s->nr - i, DIO_SUBMIT_CHUNK));
		if (uaddrs[n] == DIO_UADDR_FAULT)
			ret = -EFAULT;
		else
			ret = dio_submit_one(df, &b, uaddrs[n]);
	}
	if (ret)
		i--;
	blk_finish_plug(&plug);
	dio_batch_return_kreqs(df, &b);
	dio_batch_drop_handle(&b);
	dio_fixed_put(b.fixed);
	dio_user_put(b.user);
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

/* Take reported requests out of the table in one round trip, and free them. */
static void dio_kreq_remove_list(struct dio_file *df, struct list_head *list)
{
	struct dio_kreq *kreq, *next;

	if (list_empty(list))
		return;
	spin_lock_irq(&df->lock);
	list_for_each_entry(kreq, list, node) {
		hash_del(&kreq->hnode);
		df->nr_reqs--;
	}
	spin_unlock_irq(&df->lock);
	list_for_each_entry_safe(kreq, next, list, node)
		dio_kreq_free(kreq);
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
 * Return: how many were reported: all of them, or fewer when the timeout
 * expired (possibly 0) or a signal came (-EINTR when none).  A listed
 * address with no request submitted on this descriptor stops the call:
 * -ENOENT if it is the first.  -EINVAL for bad fields, -EFAULT.
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
 * Return: how many completions were reported into @arg->reqs (at least
 * @arg->min_nr unless the timeout expired or a signal came: then fewer,
 * possibly 0, or -EINTR when none).  -EINVAL for bad fields, -EFAULT.
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

/**
 * dio_io_module_init - request cache, bio set and completion workqueue
 *
 * Return: 0 or -errno.
 */
int dio_io_module_init(void)
{
	/* User copies go to and from ureq only (dio_submit_one()). */
	size_t useroffset = offsetof(struct dio_kreq, ureq);
	size_t usersize = sizeof_field(struct dio_kreq, ureq);
	int ret;

	dio_kreq_cache = kmem_cache_create_usercopy("dio_kreq",
						    sizeof(struct dio_kreq),
						    __alignof__(struct dio_kreq),
						    SLAB_ACCOUNT, useroffset,
						    usersize, NULL);
	if (!dio_kreq_cache)
		return -ENOMEM;
	ret = bioset_init(&dio_bio_set, BIO_POOL_SIZE,
			  offsetof(struct dio_bio, bio), BIOSET_NEED_BVECS);
	if (ret)
		goto out_destroy_cache;
	ret = dio_bioset_integrity_create(&dio_bio_set, BIO_POOL_SIZE);
	if (ret)
		goto out_exit_bioset;
	/*
	 * As kintegrityd: bound, so that a completion's work runs on the CPU
	 * its interrupt came to (with blk-mq, the submitter's), not on
	 * another CPU that must be woken; high priority and CPU-intensive,
	 * for the verification.
	 */
	dio_wq = alloc_workqueue("dio_batch", DIO_WQ_PERCPU | WQ_HIGHPRI |
				 WQ_CPU_INTENSIVE, 0);
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
