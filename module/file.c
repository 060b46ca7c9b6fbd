// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: the context descriptor, struct dio_file, the anon inode file
 * DIO_IOC_INIT returns (context.c finds or creates its context): its
 * creation by INIT, its references, its command table and poll, and its
 * release.
 *
 * Its commands are those of its requests (SUBMIT: submit.c; WAIT and
 * COLLECT: wait.c), of its registered buffers (REGISTER, UNREGISTER:
 * fixed.c), and of its context (OPEN, CLOSE, QUERY, COUNTERS: handle.c;
 * STAT: context.c).  Only the process that created the descriptor may run
 * the DIO_CMD_MINE ones (dio_file_is_mine() in dio_batch.h says why).
 *
 * Its release drops the descriptor's handles and registered buffers, then
 * reaps: the requests already done are freed, and the descriptor is marked
 * released, so that each request that completes later queues the reap
 * work, which frees it.  Requests in flight hold the descriptor's memory
 * (and the module) until the last one is freed; their results are not
 * reported.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "dio_batch.h"

static struct kmem_cache *dio_file_cache;

static void dio_file_release_mem(struct kref *ref)
{
	struct dio_file *df = container_of(ref, struct dio_file, ref);

	WARN_ON_ONCE(!hash_empty(df->reqs));
	WARN_ON_ONCE(!list_empty(&df->done));
	xa_destroy(&df->opened);
	dio_kreq_cache_drain(df);
	/* Fragments still in use keep their page. */
	dio_page_frag_cache_drain(&df->pi_frag);
	mmdrop(df->mm);
	dio_ctx_put(df->ctx);
	kmem_cache_free(dio_file_cache, df);
	/* Our own workqueue is flushed before the module text goes away. */
	module_put(THIS_MODULE);
}

/**
 * dio_file_put - drop a reference to a descriptor's memory
 * @df: the descriptor
 *
 * Must be called in process context: the last reference frees the context
 * reference too.
 */
void dio_file_put(struct dio_file *df)
{
	kref_put(&df->ref, dio_file_release_mem);
}

/*
 * Free the done requests of a released descriptor, whose file is gone or
 * going.  Called twice over: from the file's release, which marks @df
 * released so that later completions queue its reap work, and from that
 * work, which finds @df already released and drops the reference its
 * queueing took.  Results are not reported.  Must not touch @df after
 * freeing the last request: that may free @df.
 */
static void dio_file_reap_all(struct dio_file *df)
{
	struct dio_kreq *kreq, *next;
	LIST_HEAD(list);
	bool from_work;

	spin_lock_irq(&df->lock);
	from_work = df->released;
	df->released = true;
	list_for_each_entry(kreq, &df->done, node) {
		kreq->claimed = true;
		hash_del(&kreq->hnode);
		df->nr_reqs--;
	}
	list_splice_init(&df->done, &list);
	df->nr_done = 0;
	spin_unlock_irq(&df->lock);

	list_for_each_entry_safe(kreq, next, &list, node)
		dio_kreq_free(kreq);
	if (from_work)
		dio_file_put(df);
}

static void dio_file_reap_work(struct work_struct *work)
{
	struct dio_file *df = container_of(work, struct dio_file, reap_work);

	/* Queueing took a reference, which dio_file_reap_all() drops. */
	dio_file_reap_all(df);
}

/* Drop every handle reference of @df, whose file is being released. */
static void dio_file_drop_handles(struct dio_file *df)
{
	struct dio_ctx *ctx = df->ctx;
	struct dio_opener *op;
	unsigned long id;

	mutex_lock(&ctx->lock);
	xa_for_each(&df->opened, id, op)
		dio_opener_free(df, op);
	mutex_unlock(&ctx->lock);
}

static int dio_file_release(struct inode *inode, struct file *file)
{
	struct dio_file *df = file->private_data;

	dio_file_drop_handles(df);
	/* Requests in flight keep the pages they use. */
	dio_fixed_unregister(df);
	dio_file_reap_all(df);
	dio_ctx_leave(df->ctx);
	dio_file_put(df);
	return 0;
}

/* Readable while the descriptor has unreported completions. */
static __poll_t dio_file_poll(struct file *file, struct poll_table_struct *pt)
{
	struct dio_file *df = file->private_data;

	poll_wait(file, &df->wait, pt);
	return READ_ONCE(df->nr_done) ? EPOLLIN | EPOLLRDNORM : 0;
}

/* A descriptor's commands, which dio_cmd_run() (uarg.c) runs. */
static const struct dio_cmd dio_file_cmds[] = {
	DIO_CMD(DIO_IOC_SUBMIT, submit, DIO_SUBMIT_SIZE_VER0,
		DIO_CMD_MINE, dio_submit_ioctl),
	DIO_CMD(DIO_IOC_WAIT, wait, DIO_WAIT_SIZE_VER0,
		DIO_CMD_MINE, dio_wait_ioctl),
	DIO_CMD(DIO_IOC_COLLECT, wait, DIO_WAIT_SIZE_VER0,
		DIO_CMD_MINE, dio_collect_ioctl),
	DIO_CMD(DIO_IOC_OPEN, open, DIO_OPEN_SIZE_VER0, 0,
		dio_handle_open_ioctl),
	DIO_CMD(DIO_IOC_CLOSE, close, DIO_CLOSE_SIZE_VER0, 0,
		dio_handle_close_ioctl),
	DIO_CMD(DIO_IOC_QUERY, query, DIO_QUERY_SIZE_VER0, DIO_CMD_OUT,
		dio_handle_query_ioctl),
	DIO_CMD(DIO_IOC_STAT, stat, DIO_STAT_SIZE_VER0, DIO_CMD_OUT,
		dio_ctx_stat_ioctl),
	DIO_CMD(DIO_IOC_REGISTER, reg, DIO_REGISTER_SIZE_VER0,
		DIO_CMD_MINE, dio_fixed_register_ioctl),
	DIO_CMD(DIO_IOC_UNREGISTER, reg, DIO_REGISTER_SIZE_VER0,
		DIO_CMD_MINE, dio_fixed_unregister_ioctl),
	DIO_CMD(DIO_IOC_COUNTERS, counters, DIO_COUNTERS_SIZE_VER0,
		DIO_CMD_OUT, dio_handle_counters_ioctl),
};

static long dio_file_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	return dio_cmd_run(dio_file_cmds, ARRAY_SIZE(dio_file_cmds),
			   file->private_data, cmd, (void __user *)arg);
}

static const struct file_operations dio_file_fops = {
	.owner		= THIS_MODULE,
	.unlocked_ioctl	= dio_file_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.poll		= dio_file_poll,
	.release	= dio_file_release,
	.llseek		= noop_llseek,
};

/* A descriptor of @ctx, holding a reference to it and to the module. */
static struct dio_file *dio_file_alloc(struct dio_ctx *ctx)
{
	struct dio_file *df;

	df = kmem_cache_zalloc(dio_file_cache, GFP_KERNEL);
	if (!df)
		return NULL;
	kref_init(&df->ref);
	kref_get(&ctx->ref);
	df->ctx = ctx;
	mmgrab(current->mm);
	df->mm = current->mm;
	spin_lock_init(&df->lock);
	hash_init(df->reqs);
	INIT_LIST_HEAD(&df->done);
	init_waitqueue_head(&df->wait);
	INIT_WORK(&df->reap_work, dio_file_reap_work);
	init_llist_head(&df->complete);
	INIT_WORK(&df->complete_work, dio_kreq_complete_work);
	xa_init(&df->opened);
	spin_lock_init(&df->fixed_lock);
	mutex_init(&df->pi_frag_lock);
	/* Pending I/O outlives the file: keep the module until it is freed. */
	__module_get(THIS_MODULE);
	return df;
}

/*
 * A new descriptor of @ctx, which already counts it among its users, in a
 * new close-on-exec file descriptor.  The descriptor takes its own
 * reference to @ctx.  Return: the file descriptor, or -ENOMEM, -EMFILE.
 */
static int dio_file_open(struct dio_ctx *ctx)
{
	struct dio_file *df;
	int fd;

	df = dio_file_alloc(ctx);
	if (!df)
		return -ENOMEM;
	fd = anon_inode_getfd("[dio_batch]", &dio_file_fops, df,
			      O_RDWR | O_CLOEXEC);
	if (fd < 0)
		dio_file_put(df);
	return fd;
}

/**
 * dio_file_init_ioctl - DIO_IOC_INIT: a new descriptor for a context
 * @df: NULL (the control device)
 * @arg: struct dio_init, copied in
 * @uarg: the user's struct (unused)
 *
 * The context is found or created by dio_ctx_join() (context.c).
 *
 * Return: a new close-on-exec file descriptor, or what
 * uapi/linux/dio_batch.h gives for DIO_IOC_INIT (struct dio_init), whose
 * comment lists the errors.
 */
long dio_file_init_ioctl(struct dio_file *df, void *arg, void __user *uarg)
{
	struct dio_ctx *ctx;
	int ret;

	ctx = dio_ctx_join(arg);
	if (IS_ERR(ctx))
		return PTR_ERR(ctx);
	ret = dio_file_open(ctx);
	if (ret < 0)
		dio_ctx_leave(ctx);
	/* The descriptor holds its own reference. */
	dio_ctx_put(ctx);
	return ret;
}

/**
 * dio_file_module_init - create the descriptor cache
 *
 * Return: 0 or -ENOMEM.
 */
int dio_file_module_init(void)
{
	dio_file_cache = KMEM_CACHE(dio_file, SLAB_ACCOUNT);
	return dio_file_cache ? 0 : -ENOMEM;
}

/**
 * dio_file_module_exit - destroy the descriptor cache; every descriptor is
 *	gone
 */
void dio_file_module_exit(void)
{
	kmem_cache_destroy(dio_file_cache);
}
