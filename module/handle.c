// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: device handles.
 *
 * DIO_IOC_OPEN turns a block device descriptor into a small integer handle
 * of the context (never a kernel pointer).  The device is opened again by
 * number and claimed exclusively with the context as holder, as the 2011
 * proposal's bd_claim(), unless DIO_OPEN_NOCLAIM.  Opening a device the
 * context already holds returns the same handle and counts one more
 * reference for the calling descriptor.  A handle may read while one of
 * the descriptors holding it opened it through a block device descriptor
 * that can read, and write while one opened it through one that can write:
 * each holder (struct dio_opener) keeps those files, and requests are
 * checked against them (the LSM's rw_verify_area(), the write policy of
 * blkdev_write_iter()).  When a holder's last OPEN is closed, or its
 * descriptor released, the access it brought goes.  An opener with more
 * access than the device was opened with reopens it with the union of
 * both (same holder, so the claim carries over; the block device and
 * requests in flight are untouched).  When the last holder goes, the
 * handle is revoked: its number no longer resolves, while requests already
 * in flight keep the device open until they are reported.  Numbers are
 * allocated cyclically, so a revoked number is not soon reused.
 *
 * The queries of a live handle are here too: DIO_IOC_QUERY (its device's
 * geometry and PI format) and DIO_IOC_COUNTERS (its counts, or its
 * device's, which counters.c keeps).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "dio_batch.h"

static struct kmem_cache *dio_handle_cache;

static void dio_handle_free_rcu(struct rcu_head *rcu)
{
	kmem_cache_free(dio_handle_cache,
			container_of(rcu, struct dio_handle, rcu));
}

static void dio_handle_release(struct kref *ref)
{
	struct dio_handle *h = container_of(ref, struct dio_handle, ref);

	dio_bdev_close(&h->bdev, h->claimed ? h->ctx : NULL);
	/* Its last request completed: its device's counts take its own. */
	dio_counts_exit(h);
	dio_ctx_put(h->ctx);
	call_rcu(&h->rcu, dio_handle_free_rcu);
}

/**
 * dio_handle_put - drop a reference to a handle
 * @h: the handle
 *
 * Process context only: the last reference closes the block device.
 */
void dio_handle_put(struct dio_handle *h)
{
	might_sleep();
	kref_put(&h->ref, dio_handle_release);
}

/**
 * dio_handle_get - look up a live handle of a context
 * @ctx: the context
 * @id: the handle number
 *
 * Return: the handle with a reference held, or NULL when @id was never
 * issued in @ctx or has been revoked.
 */
struct dio_handle *dio_handle_get(struct dio_ctx *ctx, u32 id)
{
	struct dio_handle *h;

	rcu_read_lock();
	h = xa_load(&ctx->handles, id);
	if (h && (READ_ONCE(h->revoked) || !kref_get_unless_zero(&h->ref)))
		h = NULL;
	rcu_read_unlock();
	return h;
}

/**
 * dio_handle_file - the file a request of @h is checked against
 * @h: a handle the caller holds a reference to
 * @write: for a write (else a read)
 *
 * Return: the block device file of one of the handle's openers with that
 * access, with a reference the caller drops with fput(), or NULL when no
 * opener has it (the handle's access does not allow the request).
 */
struct file *dio_handle_file(struct dio_handle *h, bool write)
{
	struct file *f;

	spin_lock(&h->file_lock);
	f = write ? h->wfile : h->rfile;
	if (f)
		get_file(f);
	spin_unlock(&h->file_lock);
	return f;
}

/* Called with ctx->lock held, when the last opener goes. */
static void dio_handle_revoke(struct dio_handle *h)
{
	lockdep_assert_held(&h->ctx->lock);
	WRITE_ONCE(h->revoked, true);
	xa_erase(&h->ctx->handles, h->id);
	dio_handle_put(h);
}

/*
 * The handle's access is its openers': a file of one that may read, and of
 * one that may write.  ctx->lock held.
 */
static void dio_handle_update_access(struct dio_handle *h)
{
	struct file *rfile = NULL, *wfile = NULL;
	struct dio_opener *op;

	lockdep_assert_held(&h->ctx->lock);
	list_for_each_entry(op, &h->openers, node) {
		rfile = rfile ? rfile : op->rfile;
		wfile = wfile ? wfile : op->wfile;
	}
	spin_lock(&h->file_lock);
	h->rfile = rfile;
	h->wfile = wfile;
	spin_unlock(&h->file_lock);
}

static struct dio_handle *dio_handle_find_dev(struct dio_ctx *ctx, dev_t dev)
{
	struct dio_handle *h;
	unsigned long id;

	lockdep_assert_held(&ctx->lock);
	xa_for_each(&ctx->handles, id, h)
		if (h->dev == dev)
			return h;
	return NULL;
}

/*
 * Open @h's device with at least the access @read and @write ask for,
 * reopening it with the union of both; ctx->lock held.  The handle's
 * access itself comes from its openers' files.  Return: 0 or -errno.
 */
static int dio_handle_widen_bdev(struct dio_handle *h, bool read, bool write)
{
	void *holder = h->claimed ? h->ctx : NULL;
	struct dio_bdev old = h->bdev, b;
	int ret;

	lockdep_assert_held(&h->ctx->lock);
	read |= h->bdev_read;
	write |= h->bdev_write;
	if (read == h->bdev_read && write == h->bdev_write)
		return 0;
	ret = dio_bdev_open(&b, h->dev, read, write, holder);
	if (ret)
		return ret;
	/* Same device, so bios in flight keep their block_device. */
	if (WARN_ON_ONCE(b.bdev != old.bdev)) {
		dio_bdev_close(&b, holder);
		return -ENXIO;
	}
	h->bdev = b;
	h->bdev_read = read;
	h->bdev_write = write;
	dio_bdev_close(&old, holder);
	return 0;
}

static struct dio_handle *dio_handle_create(struct dio_ctx *ctx, dev_t dev,
					    bool read, bool write, bool claim)
{
	struct dio_handle *h;
	int ret;

	h = kmem_cache_zalloc(dio_handle_cache, GFP_KERNEL);
	if (!h)
		return ERR_PTR(-ENOMEM);
	kref_init(&h->ref);
	h->ctx = ctx;
	h->dev = dev;
	INIT_LIST_HEAD(&h->openers);
	spin_lock_init(&h->file_lock);
	h->bdev_read = read;
	h->bdev_write = write;
	h->claimed = claim;
	ret = dio_counts_init(h);
	if (ret)
		goto out_free_handle;
	ret = dio_bdev_open(&h->bdev, dev, read, write, claim ? ctx : NULL);
	if (ret)
		goto out_exit_counts;
	ret = xa_alloc_cyclic(&ctx->handles, &h->id, h, xa_limit_31b,
			      &ctx->next_id, GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		goto out_close_bdev;
	kref_get(&ctx->ref);
	return h;

out_close_bdev:
	dio_bdev_close(&h->bdev, claim ? ctx : NULL);
out_exit_counts:
	dio_counts_exit(h);
out_free_handle:
	kmem_cache_free(dio_handle_cache, h);
	return ERR_PTR(ret);
}

/* A block device descriptor's file, with a reference, and its device. */
static struct file *dio_fd_to_file(int fd, dev_t *dev)
{
	struct file *file = fget(fd);

	if (!file)
		return ERR_PTR(-EBADF);
	if (!(file->f_mode & (FMODE_READ | FMODE_WRITE))) {
		fput(file);			/* open mode 3: ioctls only */
		return ERR_PTR(-EBADF);
	}
	if (!S_ISBLK(file_inode(file)->i_mode)) {
		fput(file);
		return ERR_PTR(-ENOTBLK);
	}
	*dev = file_inode(file)->i_rdev;
	return file;
}

/**
 * dio_write_allowed - the write policy of the kernel's own block device path
 * @file: a block device file (its mapping's host is the device's inode)
 * @err_ro: the error for a read-only device
 *
 * As blkdev_write_iter(): a read-only device is refused, and so is an
 * active swap device.
 *
 * Return: 0, @err_ro, or -ETXTBSY.
 */
int dio_write_allowed(struct file *file, int err_ro)
{
	struct inode *inode = file->f_mapping->host;

	if (bdev_read_only(I_BDEV(inode)))
		return err_ro;
	if (IS_SWAPFILE(inode))
		return -ETXTBSY;
	return 0;
}

/**
 * dio_opener_free - drop a descriptor's hold on a handle, whatever its count
 * @df: the descriptor
 * @op: its opener of the handle
 *
 * For an opener whose count reached 0, and for every opener of a
 * descriptor being released.  The access the opener brought goes; the
 * handle is revoked when this was its last opener.
 *
 * Context: ctx->lock held.
 */
void dio_opener_free(struct dio_file *df, struct dio_opener *op)
{
	struct dio_handle *h = op->h;

	lockdep_assert_held(&df->ctx->lock);
	list_del(&op->node);
	xa_erase(&df->opened, h->id);
	/* No request finds @op's files after this. */
	dio_handle_update_access(h);
	if (list_empty(&h->openers))
		dio_handle_revoke(h);
	if (op->rfile)
		fput(op->rfile);
	if (op->wfile)
		fput(op->wfile);
	kfree(op);
}

/*
 * Drop one OPEN of @df on handle @id.  The caller holds ctx->lock.
 * Return: 0, or -EBADF when @df has no OPEN of it.
 */
static int dio_opener_put(struct dio_file *df, u32 id)
{
	struct dio_opener *op;

	lockdep_assert_held(&df->ctx->lock);
	op = xa_load(&df->opened, id);
	if (!op)
		return -EBADF;
	if (--op->count == 0)
		dio_opener_free(df, op);
	return 0;
}

/*
 * Count one more OPEN of @df on @h through @file.  The caller holds
 * ctx->lock.  The opener keeps a reference to @file for each access it
 * brings first.
 */
static int dio_opener_get(struct dio_file *df, struct dio_handle *h,
			  struct file *file)
{
	struct dio_opener *op;
	int ret;

	lockdep_assert_held(&df->ctx->lock);
	op = xa_load(&df->opened, h->id);
	if (!op) {
		op = kzalloc(sizeof(*op), GFP_KERNEL_ACCOUNT);
		if (!op)
			return -ENOMEM;
		ret = xa_err(xa_store(&df->opened, h->id, op,
				      GFP_KERNEL_ACCOUNT));
		if (ret) {
			kfree(op);
			return ret;
		}
		op->h = h;
		list_add_tail(&op->node, &h->openers);
	} else if (op->count >= DIO_MAX_OPENS) {
		return -EMFILE;
	}
	op->count++;
	if ((file->f_mode & FMODE_READ) && !op->rfile)
		op->rfile = get_file(file);
	if ((file->f_mode & FMODE_WRITE) && !op->wfile)
		op->wfile = get_file(file);
	dio_handle_update_access(h);
	return 0;
}

/*
 * The handle of @dev in @ctx, created (and its device opened and claimed)
 * if the context has none yet, opened with at least @file's access, with
 * one more OPEN counted for @df.  The caller holds ctx->lock.  Return:
 * the handle's number, or -errno; on failure the handle is as it was.
 */
static int dio_handle_open_locked(struct dio_file *df, dev_t dev,
				  struct file *file, bool claim)
{
	bool read = file->f_mode & FMODE_READ, write = file->f_mode & FMODE_WRITE;
	struct dio_ctx *ctx = df->ctx;
	struct dio_handle *h;
	bool created = false;
	int ret;

	lockdep_assert_held(&ctx->lock);
	if (write) {
		ret = dio_write_allowed(file, -EROFS);
		if (ret)
			return ret;
	}
	h = dio_handle_find_dev(ctx, dev);
	if (h) {
		if (h->claimed != claim)
			return -EINVAL;
		ret = dio_handle_widen_bdev(h, read, write);
		if (ret)
			return ret;
	} else {
		h = dio_handle_create(ctx, dev, read, write, claim);
		if (IS_ERR(h))
			return PTR_ERR(h);
		created = true;
	}
	ret = dio_opener_get(df, h, file);
	if (ret)
		goto out_revoke;
	return h->id;

out_revoke:
	if (created)
		dio_handle_revoke(h);
	return ret;
}

/**
 * dio_handle_open_ioctl - DIO_IOC_OPEN
 * @df: the calling descriptor
 * @arg: struct dio_open, copied in
 * @uarg: the user's struct, where the handle is written
 *
 * User memory is never touched under ctx->lock (a fault there could be
 * made to wait for ever): the handle's field is probed for writing first,
 * and the handle written back after the lock is dropped.
 *
 * Return: as the comment of struct dio_open in uapi/linux/dio_batch.h
 * says of DIO_IOC_OPEN, errors included.
 */
long dio_handle_open_ioctl(struct dio_file *df, void *arg,
			   void __user *uarg)
{
	const struct dio_open *o = arg;
	struct dio_open __user *uo = uarg;
	struct dio_ctx *ctx = df->ctx;
	struct file *file;
	dev_t dev;
	int ret;

	if ((o->flags & ~DIO_OPEN_F_ALL) || o->handle || o->reserved[0] ||
	    o->reserved[1])
		return -EINVAL;
	/* @handle was 0: writing it again changes nothing, but faults now. */
	if (put_user(0, &uo->handle))
		return -EFAULT;
	file = dio_fd_to_file(o->fd, &dev);
	if (IS_ERR(file))
		return PTR_ERR(file);

	mutex_lock(&ctx->lock);
	ret = dio_handle_open_locked(df, dev, file,
				     !(o->flags & DIO_OPEN_NOCLAIM));
	mutex_unlock(&ctx->lock);
	fput(file);
	if (ret < 0)
		return ret;
	if (put_user(ret, &uo->handle)) {
		/* Unmapped since the probe: give the reference back. */
		mutex_lock(&ctx->lock);
		dio_opener_put(df, ret);
		mutex_unlock(&ctx->lock);
		return -EFAULT;
	}
	return ret;
}

/**
 * dio_handle_close_ioctl - DIO_IOC_CLOSE
 * @df: the calling descriptor
 * @arg: struct dio_close, copied in
 * @uarg: the user's struct (unused)
 *
 * When this was the descriptor's last OPEN of the handle, the access it
 * brought goes with it; when it was the handle's last opener, the handle
 * is revoked.
 *
 * Return: as the comment of struct dio_close in uapi/linux/dio_batch.h
 * says of DIO_IOC_CLOSE, errors included.
 */
long dio_handle_close_ioctl(struct dio_file *df, void *arg,
			    void __user *uarg)
{
	const struct dio_close *c = arg;
	struct dio_ctx *ctx = df->ctx;
	int ret;

	if (c->reserved)
		return -EINVAL;

	mutex_lock(&ctx->lock);
	ret = dio_opener_put(df, c->handle);
	mutex_unlock(&ctx->lock);
	return ret;
}

static void dio_query_fill(struct dio_handle *h, struct dio_query *q)
{
	struct block_device *bdev = h->bdev.bdev;
	struct request_queue *rq = bdev_get_queue(bdev);
	struct dio_bi bi;

	q->logical_block_size = bdev_logical_block_size(bdev);
	q->physical_block_size = bdev_physical_block_size(bdev);
	q->dma_alignment = dio_bdev_dma_alignment(bdev);
	q->max_segments = queue_max_segments(rq);
	q->capacity = bdev_nr_bytes(bdev);
	q->max_io_bytes = DIO_MAX_IO_BYTES;
	q->max_segment_size = queue_max_segment_size(rq);
	q->dev_major = MAJOR(bdev->bd_dev);
	q->dev_minor = MINOR(bdev->bd_dev);
	/* Where ref tags count from: the seeds of integrity.c add the same. */
	q->part_start_bytes = (u64)get_start_sect(bdev) << SECTOR_SHIFT;
	if (!dio_bdev_integrity(bdev, &bi, NULL))
		return;
	strscpy(q->profile, bi.name, sizeof(q->profile));
	q->pi_interval = bi.interval;
	q->pi_md_size = bi.md_size;
	/* Metadata beyond the PI, as FS_IOC_GETLBMD_CAP (6.17) has it. */
	q->pi_opaque_size = bi.md_size - bi.pi_size;
	if (q->pi_opaque_size && bi.pi_size)
		q->pi_opaque_offset = bi.pi_offset ? 0 : bi.pi_size;
	if (!bi.pi_size)
		return;		/* metadata without PI */
	q->pi_caps = DIO_PI_CAP_INTEGRITY;
	if (bi.type == 1)
		q->pi_caps |= DIO_PI_CAP_REFTAG;
	if (bi.kgenerate)
		q->pi_caps |= DIO_PI_CAP_KGENERATE;
	if (bi.kverify)
		q->pi_caps |= DIO_PI_CAP_KVERIFY;
	if (bi.device_capable)
		q->pi_caps |= DIO_PI_CAP_DEVICE;
	if (dio_bdev_nocheck_capable(bdev))
		q->pi_caps |= DIO_PI_CAP_NOCHECK;
	q->pi_tuple_size = bi.pi_size;
	q->pi_guard_type = bi.guard;
	q->pi_type = bi.type;
	q->pi_app_tag_size = bi.guard != DIO_GUARD_NONE ? 2 : 0;
	q->pi_ref_tag_size = bi.guard == DIO_GUARD_CRC64 ? 6 :
			     bi.guard != DIO_GUARD_NONE ? 4 : 0;
	q->pi_offset = bi.pi_offset;
}

/**
 * dio_handle_query_ioctl - DIO_IOC_QUERY
 * @df: the calling descriptor
 * @arg: struct dio_query, copied in and filled (dio_cmd_run() writes it
 *	back)
 * @uarg: the user's struct (unused)
 *
 * @size and @handle are read, and the reserved fields must be zero; the
 * rest is output (what the caller left there is ignored).
 *
 * Return: as the comment of struct dio_query in uapi/linux/dio_batch.h
 * says of DIO_IOC_QUERY, errors included.
 */
long dio_handle_query_ioctl(struct dio_file *df, void *arg,
			    void __user *uarg)
{
	struct dio_query *q = arg;
	struct dio_handle *h;
	u32 handle;

	if (q->reserved[0] || q->reserved[1])
		return -EINVAL;
	handle = q->handle;
	memset(q, 0, sizeof(*q));
	h = dio_handle_get(df->ctx, handle);
	if (!h)
		return -EBADF;
	dio_query_fill(h, q);
	dio_handle_put(h);
	q->size = sizeof(*q);
	q->handle = handle;
	return 0;
}

/**
 * dio_handle_counters_ioctl - DIO_IOC_COUNTERS
 * @df: the calling descriptor
 * @arg: struct dio_counters, copied in and filled (dio_cmd_run() writes it
 *	back)
 * @uarg: the user's struct (unused)
 *
 * @size, @flags and @handle are read, and the padding and reserved fields
 * must be zero; the counts are output (counters.c sums them).  Without
 * flags, the handle's counts; with DIO_COUNTERS_DEVICE, its device's since
 * the module was loaded (every handle of every context that had it).
 *
 * Return: as the comment of struct dio_counters in uapi/linux/dio_batch.h
 * says of DIO_IOC_COUNTERS, errors included.
 */
long dio_handle_counters_ioctl(struct dio_file *df, void *arg,
			       void __user *uarg)
{
	struct dio_counters *c = arg;
	struct dio_handle *h;
	u32 handle, flags;

	if ((c->flags & ~DIO_COUNTERS_F_ALL) || c->pad ||
	    memchr_inv(c->reserved, 0, sizeof(c->reserved)))
		return -EINVAL;
	handle = c->handle;
	flags = c->flags;
	h = dio_handle_get(df->ctx, handle);
	if (!h)
		return -EBADF;
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->flags = flags;
	c->handle = handle;
	dio_counters_fill(h, c);
	dio_handle_put(h);
	return 0;
}

/**
 * dio_handle_module_init - create the handle cache
 *
 * Return: 0 or -ENOMEM.
 */
int dio_handle_module_init(void)
{
	dio_handle_cache = KMEM_CACHE(dio_handle, SLAB_ACCOUNT);
	return dio_handle_cache ? 0 : -ENOMEM;
}

/**
 * dio_handle_module_exit - destroy the handle cache after RCU frees ran,
 * and the devices' counts
 */
void dio_handle_module_exit(void)
{
	rcu_barrier();
	kmem_cache_destroy(dio_handle_cache);
	dio_counters_module_exit();
}
