// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: device handles.
 *
 * DIO_IOC_OPEN turns a block device descriptor into a small integer handle
 * of the context (never a kernel pointer).  The device is opened again by
 * number and claimed exclusively with the context as holder, as the 2011
 * proposal's bd_claim(), unless DIO_OPEN_NOCLAIM.  Opening a device the
 * context already holds returns the same handle and counts one more
 * reference for the calling descriptor.  A handle may read when one of its
 * openers' descriptors could read, and write when one could write: an
 * opener with more access than the handle has reopens the device with the
 * union of both (same holder, so the claim carries over; the block device
 * and requests in flight are untouched).  When the last reference goes
 * (DIO_IOC_CLOSE, or the descriptor's release), the handle is revoked: its
 * number no longer resolves, while requests already in flight keep the
 * device open until they are reported.  Numbers are allocated cyclically,
 * so a revoked number is not soon reused.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
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

/* Called with ctx->lock held, when the last opener's reference goes. */
static void dio_handle_revoke(struct dio_handle *h)
{
	lockdep_assert_held(&h->ctx->lock);
	WRITE_ONCE(h->revoked, true);
	xa_erase(&h->ctx->handles, h->id);
	dio_handle_put(h);
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

/* Count one more reference of @df to handle @id; ctx->lock held. */
static int dio_file_opened_inc(struct dio_file *df, u32 id)
{
	void *old = xa_load(&df->opened, id);
	unsigned long n = old ? xa_to_value(old) : 0;

	return xa_err(xa_store(&df->opened, id, xa_mk_value(n + 1),
			       GFP_KERNEL));
}

/*
 * Drop one reference of @df to handle @id; ctx->lock held.  Return: true,
 * or false when @df holds none.
 */
static bool dio_file_opened_dec(struct dio_file *df, u32 id)
{
	void *entry = xa_load(&df->opened, id);
	unsigned long n;

	if (!entry)
		return false;
	n = xa_to_value(entry);
	if (n > 1)
		/* Replacing an existing entry allocates nothing. */
		xa_store(&df->opened, id, xa_mk_value(n - 1), GFP_KERNEL);
	else
		xa_erase(&df->opened, id);
	return true;
}

/*
 * Give @h at least the access @readable and @writable ask for, reopening
 * its device with the union of both; ctx->lock held.  Return: 0 or -errno.
 */
static int dio_handle_widen(struct dio_handle *h, bool readable, bool writable)
{
	void *holder = h->claimed ? h->ctx : NULL;
	struct dio_bdev old = h->bdev, b;
	int ret;

	lockdep_assert_held(&h->ctx->lock);
	readable |= h->readable;
	writable |= h->writable;
	if (readable == h->readable && writable == h->writable)
		return 0;
	ret = dio_bdev_open(&b, h->dev, readable, writable, holder);
	if (ret)
		return ret;
	/* Same device, so bios in flight keep their block_device. */
	if (WARN_ON_ONCE(b.bdev != old.bdev)) {
		dio_bdev_close(&b, holder);
		return -ENXIO;
	}
	h->bdev = b;
	WRITE_ONCE(h->readable, readable);
	WRITE_ONCE(h->writable, writable);
	dio_bdev_close(&old, holder);
	return 0;
}

static struct dio_handle *dio_handle_create(struct dio_ctx *ctx, dev_t dev,
					    bool readable, bool writable,
					    bool claim)
{
	struct dio_handle *h;
	int ret;

	h = kmem_cache_zalloc(dio_handle_cache, GFP_KERNEL);
	if (!h)
		return ERR_PTR(-ENOMEM);
	kref_init(&h->ref);
	h->ctx = ctx;
	h->dev = dev;
	h->readable = readable;
	h->writable = writable;
	h->claimed = claim;
	ret = dio_bdev_open(&h->bdev, dev, readable, writable,
			    claim ? ctx : NULL);
	if (ret)
		goto out_free_handle;
	ret = xa_alloc_cyclic(&ctx->handles, &h->id, h, xa_limit_31b,
			      &ctx->next_id, GFP_KERNEL);
	if (ret < 0)
		goto out_close_bdev;
	kref_get(&ctx->ref);
	return h;

out_close_bdev:
	dio_bdev_close(&h->bdev, claim ? ctx : NULL);
out_free_handle:
	kmem_cache_free(dio_handle_cache, h);
	return ERR_PTR(ret);
}

/* The device number and access mode of a block device descriptor. */
static int dio_fd_to_dev(int fd, dev_t *dev, bool *readable, bool *writable)
{
	struct fd f = fdget(fd);
	struct inode *inode;
	struct file *file;
	int ret = 0;

	file = fd_file(f);
	if (!file)
		return -EBADF;
	inode = file_inode(file);
	if (!(file->f_mode & (FMODE_READ | FMODE_WRITE)))
		ret = -EBADF;		/* O_PATH */
	else if (!S_ISBLK(inode->i_mode))
		ret = -ENOTBLK;
	*dev = inode->i_rdev;
	*readable = file->f_mode & FMODE_READ;
	*writable = file->f_mode & FMODE_WRITE;
	fdput(f);
	return ret;
}

/* Drop @count references of a descriptor to handle @id; ctx->lock held. */
static void dio_handle_unref(struct dio_ctx *ctx, u32 id, unsigned long count)
{
	struct dio_handle *h = xa_load(&ctx->handles, id);

	if (WARN_ON_ONCE(!h || h->openers < count))
		return;
	h->openers -= count;
	if (!h->openers)
		dio_handle_revoke(h);
}

/**
 * dio_handle_open_ioctl - DIO_IOC_OPEN
 * @df: the calling descriptor
 * @arg: user pointer to struct dio_open
 *
 * Return: the handle, or -errno: -EBADF (not an open descriptor), -ENOTBLK
 * (not a block device), -EBUSY (claimed by someone else: mounted, held by
 * md/dm or another context), -EINVAL (bad flags or reserved fields, or
 * DIO_OPEN_NOCLAIM differing from the context's existing handle), -ENOMEM,
 * -EFAULT (the struct could not be read, or the handle not written back:
 * then no reference was taken).
 */
long dio_handle_open_ioctl(struct dio_file *df, void __user *arg)
{
	struct dio_open __user *uo = arg;
	struct dio_ctx *ctx = df->ctx;
	bool readable, writable, claim;
	struct dio_handle *h;
	struct dio_open o;
	dev_t dev;
	int ret;

	ret = dio_copy_arg(&o, sizeof(o), DIO_OPEN_SIZE_VER0, arg);
	if (ret)
		return ret;
	if ((o.flags & ~DIO_OPEN_F_ALL) || o.handle || o.reserved[0] ||
	    o.reserved[1])
		return -EINVAL;
	ret = dio_fd_to_dev(o.fd, &dev, &readable, &writable);
	if (ret)
		return ret;
	claim = !(o.flags & DIO_OPEN_NOCLAIM);

	mutex_lock(&ctx->lock);
	h = dio_handle_find_dev(ctx, dev);
	if (h) {
		if (h->claimed != claim) {
			ret = -EINVAL;
			goto out_unlock;
		}
		ret = dio_handle_widen(h, readable, writable);
		if (ret)
			goto out_unlock;
		ret = dio_file_opened_inc(df, h->id);
		if (ret)
			goto out_unlock;
		h->openers++;
	} else {
		h = dio_handle_create(ctx, dev, readable, writable, claim);
		if (IS_ERR(h)) {
			ret = PTR_ERR(h);
			goto out_unlock;
		}
		ret = dio_file_opened_inc(df, h->id);
		if (ret)
			goto out_revoke;
		h->openers = 1;
	}
	/*
	 * Written back under the lock: a CLOSE by another thread cannot
	 * free @h meanwhile, and a caller that cannot learn the handle does
	 * not keep a reference to it.
	 */
	ret = h->id;
	if (put_user(h->id, &uo->handle)) {
		dio_file_opened_dec(df, h->id);
		dio_handle_unref(ctx, h->id, 1);
		ret = -EFAULT;
	}
	mutex_unlock(&ctx->lock);
	return ret;

out_revoke:
	dio_handle_revoke(h);
out_unlock:
	mutex_unlock(&ctx->lock);
	return ret;
}

/**
 * dio_handle_close_ioctl - DIO_IOC_CLOSE
 * @df: the calling descriptor
 * @arg: user pointer to struct dio_close
 *
 * Return: 0, or -EBADF when this descriptor holds no reference to the
 * handle, -EINVAL for non-zero reserved fields, -EFAULT.
 */
long dio_handle_close_ioctl(struct dio_file *df, void __user *arg)
{
	struct dio_ctx *ctx = df->ctx;
	struct dio_close c;
	int ret;

	ret = dio_copy_arg(&c, sizeof(c), DIO_CLOSE_SIZE_VER0, arg);
	if (ret)
		return ret;
	if (c.reserved)
		return -EINVAL;

	mutex_lock(&ctx->lock);
	if (dio_file_opened_dec(df, c.handle))
		dio_handle_unref(ctx, c.handle, 1);
	else
		ret = -EBADF;
	mutex_unlock(&ctx->lock);
	return ret;
}

/**
 * dio_file_drop_handles - drop every handle reference of a descriptor
 * @df: the descriptor being released
 */
void dio_file_drop_handles(struct dio_file *df)
{
	struct dio_ctx *ctx = df->ctx;
	unsigned long id;
	void *entry;

	mutex_lock(&ctx->lock);
	xa_for_each(&df->opened, id, entry) {
		dio_handle_unref(ctx, id, xa_to_value(entry));
		xa_erase(&df->opened, id);
	}
	mutex_unlock(&ctx->lock);
}

/**
 * dio_bdev_is_scsi - is @bdev a SCSI disk (sd)?
 * @bdev: the device
 *
 * Return: true when the disk's parent device sits on the SCSI bus.
 */
bool dio_bdev_is_scsi(struct block_device *bdev)
{
	struct device *parent = disk_to_dev(bdev->bd_disk)->parent;

	return parent && parent->bus && !strcmp(parent->bus->name, "scsi");
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
	if (!dio_bdev_integrity(bdev, &bi))
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
	if (dio_nocheck_capable(dio_bdev_is_scsi(bdev)))
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
 * @arg: user pointer to struct dio_query
 *
 * @size and @handle are read, and the reserved fields must be zero; the
 * rest is output.
 *
 * Return: 0, or -EBADF for a handle that is not live in the context,
 * -EINVAL (size too small, non-zero reserved fields), -E2BIG
 * (unknown non-zero tail), -EFAULT.
 */
long dio_handle_query_ioctl(struct dio_file *df, void __user *arg)
{
	struct dio_handle *h;
	struct dio_query q;
	u32 usize, handle;
	int ret;

	ret = dio_copy_arg(&q, sizeof(q), DIO_QUERY_SIZE_VER0, arg);
	if (ret)
		return ret;
	if (q.reserved[0] || q.reserved[1] || q.reserved[2] || q.reserved[3])
		return -EINVAL;
	usize = q.size;
	handle = q.handle;
	memset(&q, 0, sizeof(q));
	h = dio_handle_get(df->ctx, handle);
	if (!h)
		return -EBADF;
	dio_query_fill(h, &q);
	dio_handle_put(h);
	q.size = sizeof(q);
	q.handle = handle;
	if (copy_to_user(arg, &q, min_t(size_t, usize, sizeof(q))))
		return -EFAULT;
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
 * dio_handle_module_exit - destroy the handle cache after RCU frees ran
 */
void dio_handle_module_exit(void)
{
	rcu_barrier();
	kmem_cache_destroy(dio_handle_cache);
}
