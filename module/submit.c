// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: submitting requests (DIO_IOC_SUBMIT).
 *
 * SUBMIT reads each struct dio_request from the caller's memory, checks it
 * as the kernel's own read and write paths would (the LSM, through
 * rw_verify_area() on the block device file the handle was opened with; a
 * read-only or swap device for writes), charges the pages it will pin to
 * the caller's user (user.c), pins them straight into bios (as
 * block/fops.c's __blkdev_direct_IO does) and submits the whole batch under
 * one plug.  A request larger than one bio becomes several bios that share
 * a count.  On a device with PI no request is merged with another (a
 * device refuses a command whole).  A read's pages are marked dirty at submission, as block/fops.c
 * does.  Before its bios, a request keeps the block device's page cache
 * coherent as the kernel's own direct I/O does (pagecache.c); a failure
 * there is that request's result, and the batch goes on.
 *
 * A request with DIO_REQ_FIXED names a registered buffer (fixed.c): its
 * bios get the registration's pages, already pinned and charged, so it
 * pins, charges and dirties nothing, and releases no page at completion;
 * it holds the registration until it is freed.
 *
 * Only the process that created the descriptor may submit through it
 * (dio_file_is_mine() in dio_batch.h says why).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <linux/task_io_accounting_ops.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "dio_batch.h"
#include "trace.h"

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
	/*
	 * On a device with PI, a request is a command of its own.  Merged
	 * with its neighbours (adjacent requests of the batch, under the plug,
	 * where the queue takes enough integrity segments: SCSI with DIX, NVMe
	 * where the driver maps metadata in several segments), a refusal for
	 * one bad block would fail them all, and the caller could not tell
	 * which of its requests holds the block.
	 */
	if (kreq->bi.pi_size)
		opf |= REQ_NOMERGE;
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
	/* Only a request in the table holds its descriptor. */
	if (inserted)
		dio_kreq_free(kreq);
	else
		dio_kreq_release(kreq);
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

	kreq = dio_kreq_alloc(df, &b->kreqs);
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
		/*
		 * When no opener of the handle has the access, the answer is
		 * -EBADF, as pwrite() gives.
		 */
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
	/*
	 * A read or a write keeps the page cache coherent first.  When that
	 * fails, the failure is the request's result.
	 */
	ret = kreq->file ? dio_kreq_sync_cache(kreq) : 0;
	if (unlikely(ret)) {
		/*
		 * No bio is submitted: dropping the submission's count
		 * completes the request, with @ret as its result.
		 */
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
/*
 * A pointer that could not be read.  It cannot be a request's address,
 * which is aligned.
 */
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
 * It stops at the first request that fails.  A request whose page cache
 * step fails (dio_kreq_sync_cache()) is queued, with that error as its
 * result.
 *
 * Return: the number of requests queued, or when the first one fails,
 * what uapi/linux/dio_batch.h gives for DIO_IOC_SUBMIT (struct
 * dio_submit), whose comment lists the errors.
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
		/*
		 * Read the pointers a chunk at a time.  When a read faults,
		 * the pointers before the fault are still used.
		 */
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
