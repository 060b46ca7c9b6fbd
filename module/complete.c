// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: completing requests.
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
 * A completed request waits on its descriptor's done list until WAIT or
 * COLLECT reports it (wait.c), or the descriptor's reaper frees it
 * (file.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/pagemap.h>

#include "dio_batch.h"
#include "trace.h"

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

/* Must the completion sleep (see the comment at the top of the file)? */
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

/**
 * dio_kreq_put - drop one count of a request
 * @kreq: the request
 *
 * A bio's count, or the submission's own.  The last completes the
 * request: here, or, when its completion may sleep, in its descriptor's
 * completion work, which the first request to join its list queues.  The
 * request holds the descriptor, so the work item outlives its queueing.
 *
 * Context: any.
 */
void dio_kreq_put(struct dio_kreq *kreq)
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

/**
 * dio_bio_end_io - a request's bio completed
 * @bio: the bio; its bi_private is the request
 *
 * The bio is kept on the request until its completion releases it.
 *
 * Context: any (the bio's completion).
 */
void dio_bio_end_io(struct bio *bio)
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
