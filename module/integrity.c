// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: protection information carried by requests.
 *
 * A request's PI travels through one physically contiguous kernel buffer
 * (at most DIO_MAX_PI_BYTES).  Each bio gets its slice of it as its
 * integrity payload, so the block layer neither generates nor verifies
 * PI for it, and every driver's integrity segment limit (one, on NVMe)
 * holds however the caller's PI buffer is laid out in memory.  PI is a
 * small fraction of the data (8 or 16 bytes per 512 or 4096), so copying
 * it costs little; the data itself stays zero-copy.
 *
 *  - write with a PI buffer: copied in at submission (and verified first
 *    with DIO_PI_VERIFY_USER); the device checks it.
 *  - write without one: the block layer generates PI, unless
 *    DIO_PI_GEN_APPTAG asks for an app tag: then the module generates.
 *  - read, with or without a PI buffer: the device's PI lands in the
 *    kernel buffer; when the I/O completes the module verifies it when
 *    asked to (DIO_PI_CHK_*; by default when the caller gave no PI buffer
 *    and the device has read_verify on) in place on the pages the bios
 *    hold, and the report copies it out to the caller's PI buffer.
 *  - any failure: when the I/O completes, the module finds the first bad
 *    interval by verifying the data against the PI it has (a refused
 *    write), or by reading the request again, in chunks and then halves,
 *    until one interval is left (a refused read; that one raw where the
 *    driver allows, so that tag and values are known).  An interval it
 *    cannot find is reported as
 *    DIO_PI_INTERVAL_UNKNOWN, never as a guess.
 *
 * Every PI buffer the module allocates is zeroed: metadata bytes beyond
 * the PI tuple that a path does not fill must not carry old kernel memory
 * to the device, or to the caller after a read.
 *
 * Reference tags are the whole device's LBA in protection intervals (a
 * partition's offset included): the seed of every payload is set to it,
 * so the kernel's type 1 remapping is the identity.
 *
 * Checks per tuple run guard, then app tag, then ref tag, as libdioctl's
 * dio_pi_verify() does; tuples the kernel treats as escapes (app tag
 * 0xffff, and for type 3 also an all-ones ref tag) are skipped.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/cache.h>
#include <linux/dma-mapping.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "dio_batch.h"
#include "trace.h"

/* A re-read that locates a refused interval covers at most this much. */
#define DIO_LOCATE_PAGES	(SZ_1M / PAGE_SIZE)
#define DIO_LOCATE_MD		(32U * 1024)

struct dio_tuple_t10 {
	__be16	guard;
	__be16	app;
	__be32	ref;
};

struct dio_tuple_crc64 {
	__be64	guard;
	__be16	app;
	u8	ref[6];
};

struct dio_tags {
	u64	guard;
	u64	ref;
	u16	app;
};

static bool dio_pi_is_read(const struct dio_request *r)
{
	return r->opcode == DIO_OP_READ;
}

static u64 dio_ref_mask(const struct dio_bi *bi)
{
	return bi->guard == DIO_GUARD_CRC64 ? GENMASK_ULL(47, 0) :
					      GENMASK_ULL(31, 0);
}

/*
 * Guard of one interval, as the kernel's t10-pi profiles compute it: over
 * the interval's data and, when the tuple is not the first bytes of the
 * metadata @md, over the metadata bytes before it (NVMe's rule, which
 * t10_pi_generate() follows since PI offsets).  The IP sum goes on over
 * those bytes as over one buffer (the data is an even number of bytes);
 * no device has that layout, as SCSI's PI is all of its metadata.
 */
static u64 dio_guard(const struct dio_bi *bi, const void *data, const u8 *md)
{
	unsigned int off = bi->pi_offset;
	__wsum sum;

	switch (bi->guard) {
	case DIO_GUARD_CRC16:
		return crc_t10dif_update(crc_t10dif(data, bi->interval), md, off);
	case DIO_GUARD_IP:
		sum = csum_partial(md, off, csum_partial(data, bi->interval, 0));
		/* Stored raw in the big-endian field, as t10_pi_ip_fn does. */
		return be16_to_cpu((__force __be16)csum_fold(sum));
	case DIO_GUARD_CRC64:
		return dio_crc64_nvme(dio_crc64_nvme(0, data, bi->interval), md,
				      off);
	}
	return 0;
}

static void dio_tuple_get(const struct dio_bi *bi, const void *t,
			  struct dio_tags *g)
{
	if (bi->guard == DIO_GUARD_CRC64) {
		const struct dio_tuple_crc64 *p = t;

		g->guard = be64_to_cpu(p->guard);
		g->app = be16_to_cpu(p->app);
		g->ref = (u64)get_unaligned_be16(p->ref) << 32 |
			 get_unaligned_be32(p->ref + 2);
	} else {
		const struct dio_tuple_t10 *p = t;

		g->guard = be16_to_cpu(p->guard);
		g->app = be16_to_cpu(p->app);
		g->ref = be32_to_cpu(p->ref);
	}
}

static void dio_tuple_set(const struct dio_bi *bi, void *t,
			  const struct dio_tags *g)
{
	if (bi->guard == DIO_GUARD_CRC64) {
		struct dio_tuple_crc64 *p = t;

		p->guard = cpu_to_be64(g->guard);
		p->app = cpu_to_be16(g->app);
		put_unaligned_be16(g->ref >> 32, p->ref);
		put_unaligned_be32(g->ref, p->ref + 2);
	} else {
		struct dio_tuple_t10 *p = t;

		p->guard = cpu_to_be16(g->guard);
		p->app = cpu_to_be16(g->app);
		p->ref = cpu_to_be32(g->ref);
	}
}

/* First interval of the request, counted from the start of the disk. */
static u64 dio_kreq_first_interval(const struct dio_kreq *kreq)
{
	struct block_device *bdev = kreq->h->bdev.bdev;

	return ((u64)get_start_sect(bdev) * SECTOR_SIZE + kreq->ureq.offset) >>
	       ilog2(kreq->bi.interval);
}

/* Interval @i's metadata in the request's PI buffer; its tuple is at pi_offset. */
static u8 *dio_pi_md(const struct dio_kreq *kreq, u64 i)
{
	return kreq->pi + i * kreq->bi.md_size;
}

/* Checks the module applies when it verifies what a read returned. */
static unsigned int dio_pi_read_checks(const struct dio_kreq *kreq)
{
	const struct dio_request *r = &kreq->ureq;
	unsigned int chk = r->pi_flags & DIO_PI_CHK_ALL;

	if (r->pi_flags & DIO_PI_NOCHECK)
		return chk;
	if (!chk && !(r->flags & DIO_REQ_PI) && kreq->bi.kverify)
		chk = DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG;
	return chk;
}

/**
 * dio_pi_check_request - can the request's device honour its PI fields?
 * @kreq: the request, its handle set; its device's PI format is read
 *	into kreq->bi here, once for the request (dio_pi_prepare() and the
 *	completion use that snapshot)
 *
 * Return: 0; -EINVAL for PI fields that contradict each other or the
 * data (unknown pi_flags bits, a PI length that is not exactly one
 * metadata entry per interval or is above DIO_MAX_PI_BYTES, a PI buffer
 * not aligned to the metadata size, flags that do not apply to the
 * opcode, app tag fields no flag uses, check flags on a write without a
 * PI buffer, DIO_PI_GEN_APPTAG with the escape app tag 0xffff on type 1);
 * -EOPNOTSUPP for PI on a device
 * without it, a reference tag check on type 3, or a raw read the driver
 * cannot do.
 */
int dio_pi_check_request(struct dio_kreq *kreq)
{
	const struct dio_request *r = &kreq->ureq;
	bool pi = r->flags & DIO_REQ_PI, read = dio_pi_is_read(r);
	struct block_device *bdev = kreq->h->bdev.bdev;
	const struct dio_bi *bi = &kreq->bi;
	unsigned int f = r->pi_flags;

	/* All zero without PI. */
	dio_bdev_integrity(bdev, &kreq->bi, &kreq->h->pi_profile);
	if (f & ~DIO_PI_F_ALL)
		return -EINVAL;
	if (!pi && (r->pi_buf || r->pi_len))
		return -EINVAL;
	if (!(f & (DIO_PI_CHK_APPTAG | DIO_PI_GEN_APPTAG)) &&
	    (r->app_tag || r->app_tag_mask))
		return -EINVAL;
	if ((f & DIO_PI_NOCHECK) && !read)
		return -EINVAL;
	if ((f & DIO_PI_VERIFY_USER) && (read || !pi))
		return -EINVAL;
	if ((f & DIO_PI_GEN_APPTAG) && (read || pi))
		return -EINVAL;
	/* A write without a PI buffer has no caller's PI to check. */
	if ((f & DIO_PI_CHK_ALL) && !read && !pi)
		return -EINVAL;
	if (!pi && !f)
		return 0;

	if (!bi->pi_size)
		return -EOPNOTSUPP;
	if ((f & DIO_PI_CHK_REFTAG) && bi->type != 1)
		return -EOPNOTSUPP;
	/* Type 1 tuples with this app tag are escapes no check covers. */
	if ((f & DIO_PI_GEN_APPTAG) && r->app_tag == DIO_PI_APP_ESCAPE &&
	    bi->type == 1)
		return -EINVAL;
	if ((f & DIO_PI_NOCHECK) && !dio_bdev_nocheck_capable(bdev))
		return -EOPNOTSUPP;
	if (!pi)
		return 0;
	if (r->len % bi->interval && !(r->flags & DIO_REQ_IOVEC))
		return -EINVAL;
	if (!(r->flags & DIO_REQ_IOVEC) &&
	    r->pi_len != r->len / bi->interval * bi->md_size)
		return -EINVAL;
	if (!r->pi_len || r->pi_len > DIO_MAX_PI_BYTES)
		return -EINVAL;
	if (r->pi_buf & (min_t(unsigned int, bi->md_size, 16) - 1))
		return -EINVAL;
	return 0;
}

/* Walk the caller's data an interval at a time; process context. */
typedef int (*dio_pi_fn)(struct dio_kreq *kreq, u64 i, const void *data,
			 void *arg);

static int dio_pi_walk(struct dio_kreq *kreq, dio_pi_fn fn, void *arg)
{
	const struct dio_request *r = &kreq->ureq;
	struct iovec fast[UIO_FASTIOV], *iov = NULL;
	unsigned int interval = kreq->bi.interval;
	u64 i, n = kreq->bytes / interval;
	struct iov_iter iter;
	void *scratch;
	int ret;

	if (r->flags & DIO_REQ_IOVEC) {
		iov = fast;
		ret = import_iovec(ITER_SOURCE, u64_to_user_ptr(r->buf), r->len,
				   UIO_FASTIOV, &iov, &iter);
		if (ret < 0)
			return ret;
	} else {
		ret = dio_import_buf(ITER_SOURCE, u64_to_user_ptr(r->buf),
				     r->len, fast, &iter);
		if (ret)
			return ret;
	}
	scratch = kmalloc(interval, GFP_KERNEL);
	if (!scratch) {
		ret = -ENOMEM;
		goto out_free_iov;
	}
	for (i = 0, ret = 0; i < n && !ret; i++) {
		if (copy_from_iter(scratch, interval, &iter) != interval)
			ret = -EFAULT;
		else
			ret = fn(kreq, i, scratch, arg);
	}
	kfree(scratch);
out_free_iov:
	kfree(iov);
	return ret;
}

static int dio_pi_generate_one(struct dio_kreq *kreq, u64 i, const void *data,
			       void *arg)
{
	const struct dio_bi *bi = &kreq->bi;
	u8 *md = dio_pi_md(kreq, i);
	struct dio_tags g = {
		.guard	= dio_guard(bi, data, md),
		.app	= kreq->ureq.app_tag,
		/* Type 3 has no reference tag: the kernel writes 0. */
		.ref	= bi->type == 1 ? (*(u64 *)arg + i) & dio_ref_mask(bi) : 0,
	};

	dio_tuple_set(bi, md + bi->pi_offset, &g);
	return 0;
}

struct dio_pi_check {
	u64		seed;
	unsigned int	flags;
};

static int dio_pi_fail(struct dio_kreq *kreq, u64 sector, u8 tag, u64 expected,
		       u64 actual)
{
	struct dio_result *o = &kreq->out;

	o->pi_err_interval = sector;
	o->pi_err_tag = tag;
	o->pi_err_expected = expected;
	o->pi_err_actual = actual;
	return -EILSEQ;
}

/*
 * Check one interval's tuple, in its metadata @md, against its data;
 * -EILSEQ fills the report.
 */
static int dio_pi_check_tuple(struct dio_kreq *kreq, u64 sector,
			      const void *data, const u8 *md,
			      unsigned int flags)
{
	const struct dio_request *r = &kreq->ureq;
	const struct dio_bi *bi = &kreq->bi;
	struct dio_tags g;
	u64 want;

	dio_tuple_get(bi, md + bi->pi_offset, &g);
	if (g.app == DIO_PI_APP_ESCAPE &&
	    (bi->type == 1 || g.ref == dio_ref_mask(bi)))
		return 0;
	if (flags & DIO_PI_CHK_GUARD) {
		want = dio_guard(bi, data, md);
		if (want != g.guard)
			return dio_pi_fail(kreq, sector, DIO_PI_TAG_GUARD, want,
					   g.guard);
	}
	if ((flags & DIO_PI_CHK_APPTAG) &&
	    ((g.app ^ r->app_tag) & r->app_tag_mask))
		return dio_pi_fail(kreq, sector, DIO_PI_TAG_APP, r->app_tag,
				   g.app);
	if ((flags & DIO_PI_CHK_REFTAG) && bi->type == 1) {
		want = sector & dio_ref_mask(bi);
		if (want != g.ref)
			return dio_pi_fail(kreq, sector, DIO_PI_TAG_REF, want,
					   g.ref);
	}
	return 0;
}

static int dio_pi_verify_one(struct dio_kreq *kreq, u64 i, const void *data,
			     void *arg)
{
	const struct dio_pi_check *c = arg;

	return dio_pi_check_tuple(kreq, c->seed + i, data, dio_pi_md(kreq, i),
				  c->flags);
}

/*
 * Copy @len bytes of @bio's data, from @off into its bvec @j on, into @dst:
 * for an interval that crosses a page or a bvec.  Return: 0, or -EAGAIN if
 * the bio ends first.
 */
static int dio_bio_gather(struct bio *bio, unsigned int j, unsigned int off,
			  void *dst, unsigned int len)
{
	while (len) {
		struct bio_vec *bv;
		unsigned int at, n;

		if (j >= bio->bi_vcnt)
			return -EAGAIN;
		bv = &bio->bi_io_vec[j];
		at = bv->bv_offset + off;
		n = min3(len, bv->bv_len - off,
			 (unsigned int)(PAGE_SIZE - (at & ~PAGE_MASK)));
		memcpy_from_page(dst, dio_nth_page(bv->bv_page, at >> PAGE_SHIFT),
				 at & ~PAGE_MASK, n);
		dst += n;
		len -= n;
		off += n;
		if (off == bv->bv_len) {
			j++;
			off = 0;
		}
	}
	return 0;
}

/* Check @n intervals of data at @data, interval @i of the request first. */
static int dio_pi_check_run(struct dio_kreq *kreq, u64 seed, u64 i,
			    const u8 *data, unsigned int n, unsigned int flags)
{
	unsigned int interval = kreq->bi.interval;
	int ret = 0;

	for (; n && !ret; n--, i++, data += interval)
		ret = dio_pi_check_tuple(kreq, seed + i, data,
					 dio_pi_md(kreq, i), flags);
	return ret;
}

/*
 * Verify one bio's data against the kernel buffer, on the pages it holds:
 * in place, a page's worth of whole intervals at a time, where intervals
 * lie within one page; through @scratch (allocated on first need), one at
 * a time, where one does not.  @next gets the interval after the bio's
 * last.
 */
static int dio_pi_verify_bio(struct dio_kreq *kreq, struct bio *bio,
			     unsigned int flags, void **scratch, u64 *next)
{
	unsigned int interval = kreq->bi.interval, j = 0, off = 0;
	u64 seed = dio_kreq_first_interval(kreq), i = dio_bio(bio)->first;
	int ret = 0;

	while (j < bio->bi_vcnt && !ret) {
		struct bio_vec *bv = &bio->bi_io_vec[j];
		unsigned int at = bv->bv_offset + off;
		struct page *page = dio_nth_page(bv->bv_page, at >> PAGE_SHIFT);
		unsigned int n;
		void *p;

		at &= ~PAGE_MASK;
		/* The whole intervals of this bvec that lie in this page. */
		n = min_t(unsigned int, bv->bv_len - off, PAGE_SIZE - at) /
		    interval;
		if (n) {
			p = kmap_local_page(page);
			ret = dio_pi_check_run(kreq, seed, i, p + at, n, flags);
			kunmap_local(p);
		} else {
			n = 1;
			if (!*scratch)
				*scratch = kmalloc(interval, GFP_KERNEL);
			if (!*scratch)
				return -ENOMEM;
			ret = dio_bio_gather(bio, j, off, *scratch, interval);
			if (!ret)
				ret = dio_pi_check_run(kreq, seed, i, *scratch,
						       1, flags);
		}
		/* On to the next interval, which may start in a later bvec. */
		i += n;
		off += n * interval;
		while (j < bio->bi_vcnt && off >= bio->bi_io_vec[j].bv_len)
			off -= bio->bi_io_vec[j++].bv_len;
	}
	*next = i;
	return ret;
}

/*
 * Verify a completed request's data against its PI, on the pages its bios
 * hold (never through the memory of whoever reports it: that may be
 * another process), bios in the order of their data so that the first
 * failure is the one reported.
 * Return: 0, -EILSEQ (report filled), -ENOMEM, or -EAGAIN when the bios do
 * not cover the request (its submission failed part way).
 */
static int dio_pi_verify_bios(struct dio_kreq *kreq, unsigned int flags)
{
	u64 next = 0, n = kreq->bytes / kreq->bi.interval;
	struct bio *bio, *b;
	void *scratch = NULL;
	int ret = 0;

	while (next < n && !ret) {
		/* The bio whose data starts at interval @next. */
		for (bio = NULL, b = kreq->bios; b && !bio; b = b->bi_next)
			if (dio_bio(b)->first == next)
				bio = b;
		if (!bio) {
			/* Cut short at submission: kreq->error says why. */
			ret = -EAGAIN;
			break;
		}
		ret = dio_pi_verify_bio(kreq, bio, flags, &scratch, &next);
	}
	kfree(scratch);
	return ret;
}

/*
 * Verify a write's PI, copied into the kernel buffer, against the caller's
 * data, through its own memory (at submission, so it is the submitter's):
 * DIO_PI_VERIFY_USER and a write's DIO_PI_CHK_APPTAG.  -EILSEQ fills the
 * report.
 */
static int dio_pi_verify_user(struct dio_kreq *kreq, unsigned int flags)
{
	struct dio_pi_check c = {
		.seed = dio_kreq_first_interval(kreq),
		.flags = flags,
	};

	return dio_pi_walk(kreq, dio_pi_verify_one, &c);
}

/*
 * Every buffer the module puts into a bio, here and in dio_pi_locate(),
 * is memory a lower layer may take page references on: LIO's file
 * backstore hands the pages to its file's I/O (9p, NFS, the network
 * stack), which does get_page()/put_page() on them, as the kernel's own
 * direct I/O and integrity paths allow.  So it comes from the page
 * allocator in units whose reference count covers every page: order-0
 * pages, compound pages (__GFP_COMP), or fragments of compound pages that
 * each hold a reference.  Never slab memory (newer kernels refuse
 * references to slab pages; a slab object's page is not ours alone) and
 * never a high-order allocation without __GFP_COMP: a reference taken and
 * dropped on one of its tail pages frees that page under the module, and
 * the module's own free then frees it again (t_stacks: LIO over 9p).
 * Buffers are freed by dropping the module's reference: a page a lower
 * layer still holds goes when that layer lets go.
 */

/*
 * A device reads and writes PI buffers by DMA.  Where DMA is not coherent
 * with the CPU's caches (many arm64 and other SoC platforms), the cache
 * maintenance around a transfer works on whole cache lines, so two
 * requests' buffers that shared a line would lose what the CPU wrote into
 * one when the device's writes to the other are made visible.  Every PI
 * buffer therefore starts and ends on a line: the DMA API's
 * dma_get_cache_alignment(), and never less than L1_CACHE_BYTES, so that
 * the rule also holds (and is checked) where DMA is coherent and that
 * alignment is 1, as on x86.
 */
static unsigned int dio_pi_dma_align(void)
{
	return max_t(unsigned int, dma_get_cache_alignment(), L1_CACHE_BYTES);
}

/*
 * A physically contiguous, zeroed PI buffer of @len bytes, charged to the
 * caller's memory cgroup: up to a page, a fragment of the descriptor's
 * compound page (no page allocation per request) rounded up to whole
 * cache lines (dio_pi_dma_align()) and aligned to that size rounded up to
 * a power of two, so that it never crosses a page; above a page, a
 * compound page of its own.  Zeroed: generation fills only the PI tuple
 * of each metadata entry, and a device may return less than it was given.
 */
static int dio_pi_alloc(struct dio_kreq *kreq, unsigned int len)
{
	unsigned int align = dio_pi_dma_align(), size = ALIGN(len, align);
	struct dio_file *df = kreq->df;
	struct page *page;

	if (size <= PAGE_SIZE) {
		mutex_lock(&df->pi_frag_lock);
		kreq->pi = dio_page_frag_alloc(&df->pi_frag, size,
					       GFP_KERNEL_ACCOUNT,
					       roundup_pow_of_two(size));
		mutex_unlock(&df->pi_frag_lock);
		if (!kreq->pi)
			return -ENOMEM;
		/*
		 * The rule above, checked on every request of every guest
		 * run (whose kernel log must stay free of warnings).
		 */
		WARN_ON_ONCE(!IS_ALIGNED((unsigned long)kreq->pi, align));
		memset(kreq->pi, 0, len);
		kreq->pi_order = DIO_PI_FRAG;
	} else {
		kreq->pi_order = get_order(len);
		page = alloc_pages(GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_COMP |
				   __GFP_NOWARN, kreq->pi_order);
		if (!page)
			return -ENOMEM;
		kreq->pi = page_address(page);
	}
	kreq->pi_len = len;
	kreq->pi_off = 0;
	return 0;
}

/*
 * Report a request refused before submission: SUBMIT fails it, and its
 * result and pi_err_* fields tell why.
 */
static int dio_pi_refuse(struct dio_kreq *kreq, int err)
{
	kreq->out.result = err;
	kreq->out.pi_err_source = DIO_PI_SRC_USER;
	trace_dio_batch_pi_error(kreq);
	if (dio_put_result(kreq->uaddr, &kreq->out))
		return -EFAULT;
	return err;
}

/**
 * dio_pi_prepare - set up a request's PI before its bios are built
 * @kreq: the request, imported and checked
 *
 * Allocates the kernel PI buffer where the request needs one, copies the
 * caller's PI in (verifying it with DIO_PI_VERIFY_USER, and its app tags
 * with DIO_PI_CHK_APPTAG) or generates PI for DIO_PI_GEN_APPTAG.
 *
 * Return: 0; -EILSEQ when the caller's PI failed verification (the
 * request's result and pi_err_* fields are written); -EFAULT; -ENOMEM.
 */
int dio_pi_prepare(struct dio_kreq *kreq)
{
	const struct dio_request *r = &kreq->ureq;
	bool pi = r->flags & DIO_REQ_PI;
	unsigned int len;
	int ret;

	/* kreq->bi: dio_pi_check_request() read the format. */
	if (r->opcode == DIO_OP_FLUSH || !kreq->bi.pi_size)
		return 0;
	len = kreq->bytes / kreq->bi.interval * kreq->bi.md_size;
	if (pi && len != r->pi_len)
		return -EINVAL;		/* an iovec request's PI length */
	if (!pi && !(r->pi_flags & (DIO_PI_GEN_APPTAG | DIO_PI_NOCHECK)) &&
	    !(dio_pi_is_read(r) && dio_pi_read_checks(kreq)))
		return 0;		/* the block layer's own PI */
	if (len > DIO_MAX_PI_BYTES) {
		/*
		 * Too long to bounce: PI the caller asked for is refused; a
		 * plain read is left to the block layer's own verification.
		 */
		return pi || r->pi_flags ? -EINVAL : 0;
	}
	ret = dio_pi_alloc(kreq, len);
	if (ret)
		return ret;

	if (dio_pi_is_read(r)) {
		if (pi && fault_in_writeable(u64_to_user_ptr(r->pi_buf), len))
			return -EFAULT;
		return 0;
	}
	if (!pi) {
		u64 seed = dio_kreq_first_interval(kreq);

		return dio_pi_walk(kreq, dio_pi_generate_one, &seed);
	}
	if (copy_from_user(kreq->pi, u64_to_user_ptr(r->pi_buf), len))
		return -EFAULT;
	/*
	 * The device checks guard and ref tag of every write, but the
	 * drives of these kernels never check app tags: the module does.
	 */
	if (r->pi_flags & (DIO_PI_VERIFY_USER | DIO_PI_CHK_APPTAG)) {
		unsigned int chk = r->pi_flags & DIO_PI_CHK_ALL;

		ret = dio_pi_verify_user(kreq, chk ? chk : DIO_PI_CHK_GUARD |
							  DIO_PI_CHK_REFTAG);
		if (ret == -EILSEQ)
			return dio_pi_refuse(kreq, ret);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * dio_pi_attach - give a bio its slice of the request's PI
 * @kreq: the request
 * @bio: one of its bios, pages added, not yet submitted
 *
 * Return: 0; -EINVAL when the bio is not whole intervals; -ENOMEM.
 */
int dio_pi_attach(struct dio_kreq *kreq, struct bio *bio)
{
	const struct dio_request *r = &kreq->ureq;
	struct block_device *bdev = kreq->h->bdev.bdev;
	unsigned int ishift, len;
	struct bio_integrity_payload *bip;
	void *vaddr;
	int ret;

	if (!kreq->pi)
		return 0;
	ishift = ilog2(kreq->bi.interval);
	if (bio->bi_iter.bi_size & (kreq->bi.interval - 1))
		return -EINVAL;
	len = (bio->bi_iter.bi_size >> ishift) * kreq->bi.md_size;
	if (WARN_ON_ONCE(kreq->pi_off + len > kreq->pi_len))
		return -EINVAL;

	bip = bio_integrity_alloc(bio, GFP_NOIO, 1);
	if (IS_ERR(bip))
		return PTR_ERR(bip);
	vaddr = kreq->pi + kreq->pi_off;
	/* One segment: the buffer is physically contiguous. */
	ret = dio_bio_integrity_add_page(bio, virt_to_page(vaddr), len,
					 offset_in_page(vaddr));
	if (ret)
		return ret;
	bip_set_seed(bip, (bio->bi_iter.bi_sector + get_start_sect(bdev)) >>
			  (ishift - SECTOR_SHIFT));
	dio_bip_set_flags(bip, &kreq->bi, r->pi_flags & DIO_PI_NOCHECK,
			  r->app_tag, (r->pi_flags & DIO_PI_CHK_APPTAG) &&
			  r->app_tag_mask == 0xffff);
	dio_bio(bio)->first = kreq->pi_off / kreq->bi.md_size;
	kreq->pi_off += len;
	return 0;
}

/* Re-reads made to find refused intervals, for tests (debugfs, main.c). */
atomic64_t dio_locate_reads = ATOMIC64_INIT(0);

/* Data and metadata pages a re-read goes through. */
struct dio_locate_buf {
	struct page	*data[DIO_LOCATE_PAGES];
	void		*md;
	u64		per;		/* intervals one re-read covers */
};

/*
 * Read intervals [@first, @first + @n) of the request again into @lb.
 * Where @nocheck and the driver allows, HBA and device skip their checks,
 * so that the module sees what is stored.  Return: 0 or -errno (-EILSEQ:
 * the device refused it).
 */
static int dio_pi_reread(struct dio_kreq *kreq, struct dio_locate_buf *lb,
			 u64 first, u64 n, bool nocheck)
{
	struct block_device *bdev = kreq->h->bdev.bdev;
	const struct dio_request *r = &kreq->ureq;
	const struct dio_bi *bi = &kreq->bi;
	unsigned int ishift = ilog2(bi->interval), p, len;
	unsigned int bytes = n << ishift;
	struct bio_integrity_payload *bip;
	struct bio *bio;
	int ret;

	/*
	 * REQ_NOMERGE: a re-read merged with other I/O in flight (the same
	 * process's next read, say) would fail for that I/O's bad block and
	 * name an intact interval of this one.
	 */
	bio = bio_alloc_bioset(bdev, DIV_ROUND_UP(bytes, PAGE_SIZE),
			       REQ_OP_READ | REQ_NOMERGE, GFP_KERNEL, &dio_bio_set);
	bio->bi_iter.bi_sector = (kreq->ureq.offset >> SECTOR_SHIFT) +
				 (first << (ishift - SECTOR_SHIFT));
	ret = -ENOMEM;
	for (p = 0; bytes; p++, bytes -= len) {
		len = min_t(unsigned int, bytes, PAGE_SIZE);
		if (bio_add_page(bio, lb->data[p], len, 0) != len)
			goto out_put_bio;
	}
	bip = bio_integrity_alloc(bio, GFP_KERNEL, 1);
	if (IS_ERR(bip)) {
		ret = PTR_ERR(bip);
		goto out_put_bio;
	}
	ret = dio_bio_integrity_add_page(bio, virt_to_page(lb->md),
					 n * bi->md_size, 0);
	if (ret)
		goto out_put_bio;
	bip_set_seed(bip, (bio->bi_iter.bi_sector + get_start_sect(bdev)) >>
			  (ishift - SECTOR_SHIFT));
	/* Checked as the request was, app tag included where the device can. */
	dio_bip_set_flags(bip, bi, nocheck, r->app_tag,
			  (r->pi_flags & DIO_PI_CHK_APPTAG) &&
			  r->app_tag_mask == 0xffff);
	atomic64_inc(&dio_locate_reads);
	ret = submit_bio_wait(bio);
out_put_bio:
	bio_put(bio);
	return ret;
}

static void dio_locate_buf_free(struct dio_locate_buf *lb)
{
	unsigned int p;

	for (p = 0; p < DIO_LOCATE_PAGES && lb->data[p]; p++)
		put_page(lb->data[p]);
	if (lb->md)
		put_page(virt_to_page(lb->md));
	kfree(lb);
}

static struct dio_locate_buf *dio_locate_buf_alloc(const struct dio_bi *bi)
{
	struct dio_locate_buf *lb;
	unsigned int p;

	lb = kzalloc(sizeof(*lb), GFP_KERNEL);
	if (!lb)
		return NULL;
	lb->per = min(DIO_LOCATE_PAGES * PAGE_SIZE / bi->interval,
		      DIO_LOCATE_MD / bi->md_size);
	for (p = 0; p < DIV_ROUND_UP(lb->per * bi->interval, PAGE_SIZE); p++) {
		lb->data[p] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!lb->data[p])
			goto out_free_buf;
	}
	/* Compound: it goes into a bio (see dio_pi_alloc()). */
	lb->md = (void *)__get_free_pages(GFP_KERNEL | __GFP_ZERO | __GFP_COMP,
					  get_order(lb->per * bi->md_size));
	if (!lb->md)
		goto out_free_buf;
	return lb;

out_free_buf:
	dio_locate_buf_free(lb);
	return NULL;
}

/*
 * The device refused a read: find the first interval it refuses.  Chunks
 * of lb->per intervals are read again in order until one is refused, then
 * that chunk is halved until one interval is left (a 64 MiB request takes
 * at most 64 + 12 reads, not one per interval).  That interval is read
 * once more on its own, raw: where the driver honours that (SCSI; NVMe
 * from 6.14), also below device-mapper before 6.14, which passes the
 * payload's flags on to the device it maps to, the module checks it and
 * reports tag, expected and actual values.  A driver that ignores the
 * flags, or a 6.14+ dm whose clones lose them, checks the block, and its
 * refusal names the interval with DIO_PI_TAG_NONE.  (The handle's
 * DIO_PI_CAP_NOCHECK decides only what a caller may ask for, and says no
 * for a stacked device, where the module cannot tell what lies below.)
 * When the re-reads
 * all pass (the failure did not last), or the request's descriptor is
 * gone, pi_err_interval stays DIO_PI_INTERVAL_UNKNOWN.
 */
static void dio_pi_locate(struct dio_kreq *kreq)
{
	u64 n = kreq->bytes / kreq->bi.interval;
	u64 seed = dio_kreq_first_interval(kreq);
	u64 lo, hi = 0, mid;
	struct dio_locate_buf *lb;
	int ret = 0;

	lb = dio_locate_buf_alloc(&kreq->bi);
	if (!lb)
		return;
	for (lo = 0; lo < n; lo += lb->per) {
		if (READ_ONCE(kreq->df->released))
			goto out_free_buf;
		hi = min(lo + lb->per, n);
		ret = dio_pi_reread(kreq, lb, lo, hi - lo, false);
		if (ret)
			break;
	}
	if (ret != -EILSEQ)
		goto out_free_buf;
	while (hi - lo > 1) {
		if (READ_ONCE(kreq->df->released))
			goto out_free_buf;
		mid = lo + (hi - lo) / 2;
		ret = dio_pi_reread(kreq, lb, lo, mid - lo, false);
		if (ret == -EILSEQ)
			hi = mid;
		else if (!ret)
			lo = mid;
		else
			goto out_free_buf;
	}
	ret = dio_pi_reread(kreq, lb, lo, 1, true);
	if (ret == -EILSEQ) {
		dio_pi_fail(kreq, seed + lo, DIO_PI_TAG_NONE, 0, 0);
	} else if (!ret) {
		ret = dio_pi_check_tuple(kreq, seed + lo, page_address(lb->data[0]),
					 lb->md, DIO_PI_CHK_ALL &
					 ~(kreq->ureq.app_tag_mask ? 0 :
					   DIO_PI_CHK_APPTAG));
		/* Stored intact, yet refused: the block, without a tag. */
		if (!ret)
			dio_pi_fail(kreq, seed + lo, DIO_PI_TAG_NONE, 0, 0);
	}
out_free_buf:
	dio_locate_buf_free(lb);
}

/**
 * dio_pi_needs_process - must a completed request's PI work sleep?
 * @kreq: the request; all its bios completed, its error is final
 *
 * Return: true when dio_pi_complete() has more to do than free the PI
 * buffer: a read whose PI the module verifies, or a refusal to locate.
 * Then the request completes in process context.
 */
bool dio_pi_needs_process(struct dio_kreq *kreq)
{
	const struct dio_request *r = &kreq->ureq;

	if (!kreq->bi.pi_size || r->opcode == DIO_OP_FLUSH)
		return false;
	if (kreq->error == -EILSEQ)
		return true;
	return !kreq->error && dio_pi_is_read(r) && kreq->pi &&
	       dio_pi_read_checks(kreq);
}

/**
 * dio_pi_complete - verify a completed request's PI, before its pages go
 * @kreq: the request; its result is set, its bios still hold the pages
 *
 * Runs in process context when dio_pi_needs_process() says so, otherwise
 * in any context (it then only frees); never in the memory of whoever
 * reports the request.  Sets the result to -EILSEQ and fills pi_err_* when the module's
 * verification fails; for a request the device refused, finds the failing
 * interval (or reports DIO_PI_INTERVAL_UNKNOWN).  Frees the PI buffer
 * unless the report must copy it out (a read with DIO_REQ_PI).
 */
void dio_pi_complete(struct dio_kreq *kreq)
{
	const struct dio_request *r = &kreq->ureq;
	struct dio_result *o = &kreq->out;
	unsigned int chk;
	int ret;

	if (!kreq->bi.pi_size || r->opcode == DIO_OP_FLUSH)
		return;
	if (kreq->error == -EILSEQ) {
		o->pi_err_source = DIO_PI_SRC_DEVICE;
		o->pi_err_interval = DIO_PI_INTERVAL_UNKNOWN;
		o->pi_err_tag = DIO_PI_TAG_NONE;
		if (dio_pi_is_read(r))
			/* What came back is not what is stored: look again. */
			dio_pi_locate(kreq);
		else if (kreq->pi)
			/* The device refused a write: find where. */
			dio_pi_verify_bios(kreq, DIO_PI_CHK_ALL &
					   ~(r->app_tag_mask ? 0 : DIO_PI_CHK_APPTAG));
		goto out_free;
	}
	if (kreq->error || !dio_pi_is_read(r) || !kreq->pi)
		goto out_free;
	chk = dio_pi_read_checks(kreq);
	if (chk) {
		ret = dio_pi_verify_bios(kreq, chk);
		if (ret)
			o->result = ret;	/* a read not verified is no success */
		if (ret == -EILSEQ)
			o->pi_err_source = DIO_PI_SRC_MODULE;
	}
	if (r->flags & DIO_REQ_PI)
		return;			/* dio_pi_report() copies it out */
out_free:
	dio_pi_free(kreq);
}

/**
 * dio_pi_report - copy a completed read's PI to its submitter
 * @kreq: the request, being reported in its submitter's process
 *
 * The device's PI goes to the caller's PI buffer whenever the device
 * returned it, also when the module's verification failed.  A buffer that
 * cannot be written makes the result -EFAULT.
 */
void dio_pi_report(struct dio_kreq *kreq)
{
	const struct dio_request *r = &kreq->ureq;

	if (!kreq->pi || kreq->error || !dio_pi_is_read(r) ||
	    !(r->flags & DIO_REQ_PI))
		return;
	if (copy_to_user(u64_to_user_ptr(r->pi_buf), kreq->pi, kreq->pi_len))
		kreq->out.result = -EFAULT;
}

/**
 * dio_pi_free - free a request's PI buffer
 * @kreq: the request
 */
void dio_pi_free(struct dio_kreq *kreq)
{
	if (!kreq->pi)
		return;
	/* Our reference only: see dio_pi_alloc(). */
	if (kreq->pi_order == DIO_PI_FRAG)
		page_frag_free(kreq->pi);
	else
		put_page(virt_to_page(kreq->pi));
	kreq->pi = NULL;
}
