// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: requests (struct dio_kreq): their structs, which descriptors
 * keep for reuse, a descriptor's table of its requests, and their freeing;
 * the module's request cache, bio set and completion workqueue.
 * Submitting requests is submit.c's, completing them complete.c's, and
 * reporting them wait.c's.
 *
 * The request table of a descriptor is a hash table keyed by the request's
 * user address divided by the smallest request size: requests that do not
 * overlap never share a key.  Entering and leaving it allocates nothing:
 * its link is in the request.
 *
 * A request holds its descriptor from its entry in the table until it is
 * freed, and the last request may free the descriptor (dio_file_put()):
 * that is the one call from these files back up to file.c, which reaps the
 * requests of a closed descriptor and runs the commands that make them
 * (tests/module-graph.sh checks that no other call goes back up).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fsnotify.h>
#include <linux/log2.h>
#include <linux/slab.h>

#include "dio_batch.h"

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

/*
 * The request in @df's table under @key, or NULL.  The caller holds
 * df->lock.
 */
static struct dio_kreq *dio_kreq_find(struct dio_file *df, u64 key)
{
	struct dio_kreq *kreq;

	lockdep_assert_held(&df->lock);
	hash_for_each_possible(df->reqs, kreq, hnode, key)
		if (dio_req_key(kreq->uaddr) == key)
			return kreq;
	return NULL;
}

/**
 * dio_kreq_lookup - the request submitted at an address
 * @df: the descriptor
 * @uaddr: the user address of the request's struct dio_request
 *
 * Context: @df->lock held.
 *
 * Return: the request in @df's table, or NULL.
 */
struct dio_kreq *dio_kreq_lookup(struct dio_file *df, u64 uaddr)
{
	struct dio_kreq *kreq;

	lockdep_assert_held(&df->lock);
	kreq = dio_kreq_find(df, dio_req_key(uaddr));
	return kreq && kreq->uaddr == uaddr ? kreq : NULL;
}

/**
 * dio_kreq_insert - enter a request in its descriptor's table
 * @df: the descriptor
 * @kreq: the request, its @uaddr set
 *
 * The request is counted against max_inflight, and holds a reference to
 * @df from then on.
 *
 * Return: 0, -EAGAIN (the limit is reached) or -EBUSY (this address, or
 * one it overlaps, is in flight).
 */
int dio_kreq_insert(struct dio_file *df, struct dio_kreq *kreq)
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

/**
 * dio_kreq_remove - take a request out of its descriptor's table
 * @df: the descriptor
 * @kreq: the request, claimed
 *
 * Its address may be submitted again.
 */
void dio_kreq_remove(struct dio_file *df, struct dio_kreq *kreq)
{
	spin_lock_irq(&df->lock);
	hash_del(&kreq->hnode);
	df->nr_reqs--;
	spin_unlock_irq(&df->lock);
}

/* ---- request structs ---- */

/**
 * dio_kreq_alloc - a request struct for a SUBMIT call
 * @df: the descriptor
 * @kept: the structs the call took from @df's cache and has not used yet
 *
 * One the descriptor kept (taken a batch's worth at a time into *@kept:
 * only llist_del_all() is safe against other takers), or a new one.  The
 * call gives back what is left in *@kept when it ends.
 *
 * Return: the struct, zeroed up to @ureq, which the caller fills; or NULL.
 */
struct dio_kreq *dio_kreq_alloc(struct dio_file *df, struct llist_node **kept)
{
	struct llist_node *node;
	struct dio_kreq *kreq;

	if (!*kept)
		*kept = llist_del_all(&df->kreq_cache);
	node = *kept;
	if (node) {
		*kept = node->next;
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

/**
 * dio_kreq_release - drop what a request holds, and keep its struct
 * @kreq: the request, out of its descriptor's table or never in it
 *
 * Drops what is set (dio_kreq_alloc() zeroed the rest): its file, after
 * the fsnotify event pread or pwrite would send for a request that moved
 * data; its user account, registered set, PI buffer and handle.  Then its
 * struct is kept for reuse.  Its reference to its descriptor is not
 * dropped: dio_kreq_free() does that.
 *
 * Context: process context.
 */
void dio_kreq_release(struct dio_kreq *kreq)
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

/**
 * dio_kreq_remove_list - take requests out of the table, and free them
 * @df: their descriptor
 * @list: the requests, reported (linked by @node)
 *
 * One round trip of the lock for them all.
 *
 * Context: process context.
 */
void dio_kreq_remove_list(struct dio_file *df, struct list_head *list)
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
