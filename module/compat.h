/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dio_batch: every difference between the kernels we support, in one place.
 *
 * Feature tests (HAVE_*) come from Kbuild, which greps the target kernel's
 * headers; LINUX_VERSION_CODE is used only where no symbol tells.
 *
 *  - claiming a block device: blkdev_get_by_dev() (6.1) ->
 *    bdev_file_open_by_dev() returning a struct file (6.9+)
 *  - struct blk_integrity: a profile with a name (6.1) -> csum_type and
 *    flags in the queue limits (6.11+)
 *  - pin_user_pages(): a vmas argument (6.1) -> none (6.5+)
 *  - page fragments: page_frag_alloc_align() with a mask (6.1) ->
 *    __page_frag_alloc_align() and page_frag_cache_drain()
 */
#ifndef _DIO_BATCH_COMPAT_H
#define _DIO_BATCH_COMPAT_H

/* First, before any header an older kernel does not have. */
#include <linux/version.h>
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "dio_batch needs Linux 6.1 or newer"
#endif

#include <linux/blkdev.h>
#include <linux/blk-integrity.h>
#include <linux/device.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#ifdef HAVE_LINUX_PAGE_FRAG_CACHE_H
#include <linux/page_frag_cache.h>
#endif
#include <linux/uio.h>
#include <linux/ipc_namespace.h>
#include <linux/nsproxy.h>
#include <linux/proc_ns.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/crc-t10dif.h>
#include <linux/crc64.h>
#include <net/checksum.h>
/* 6.12 moved <asm/unaligned.h> to <linux/unaligned.h>. */
#ifdef HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * 6.5 to 6.8 changed blkdev_get_by_dev() and then replaced it with
 * bdev_open_by_dev(); dkms.conf does not build for them (untested).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0) && !defined(HAVE_BDEV_FILE_OPEN)
#error "dio_batch supports 6.1 to 6.4 and 6.9 or newer"
#endif

/* ---- block device open and claim ---- */

struct dio_bdev {
	struct block_device	*bdev;
#ifdef HAVE_BDEV_FILE_OPEN
	struct file		*file;
#else
	fmode_t			mode;
#endif
};

/**
 * dio_bdev_open - open (and optionally claim) a block device by number
 * @b: filled on success
 * @dev: device number
 * @read: open for reading
 * @write: open for writing
 * @holder: claim exclusively for this holder, or NULL for no claim; the
 *	same holder may open the device several times
 *
 * Return: 0, or -errno (-EBUSY when another holder has it).
 */
static inline int dio_bdev_open(struct dio_bdev *b, dev_t dev, bool read,
				bool write, void *holder)
{
#ifdef HAVE_BDEV_FILE_OPEN
	blk_mode_t mode = (read ? BLK_OPEN_READ : 0) |
			  (write ? BLK_OPEN_WRITE : 0);
	struct file *f;

	f = bdev_file_open_by_dev(dev, mode, holder, NULL);
	if (IS_ERR(f))
		return PTR_ERR(f);
	b->file = f;
	b->bdev = file_bdev(f);
	return 0;
#else
	fmode_t mode = (read ? FMODE_READ : 0) | (write ? FMODE_WRITE : 0);
	struct block_device *bdev;

	if (holder)
		mode |= FMODE_EXCL;
	bdev = blkdev_get_by_dev(dev, mode, holder);
	if (IS_ERR(bdev))
		return PTR_ERR(bdev);
	b->bdev = bdev;
	b->mode = mode;
	return 0;
#endif
}

/**
 * dio_bdev_close - release what dio_bdev_open() got, claim included
 * @b: the device
 * @holder: the holder given to dio_bdev_open()
 */
static inline void dio_bdev_close(struct dio_bdev *b, void *holder)
{
#ifdef HAVE_BDEV_FILE_OPEN
	fput(b->file);
#else
	blkdev_put(b->bdev, b->mode);
#endif
}

/*
 * Alignment of user buffers for direct I/O: the device's DMA alignment and,
 * with PI, the protection interval (at most a page).  The block layer
 * generates and verifies PI a page piece at a time, rounding each piece up
 * to whole intervals: a straddling interval gets a wrong tuple, and more
 * tuples are written than its buffer holds (KASAN slab-out-of-bounds in
 * t10_pi_type1_generate_crc on 6.1, with plain O_DIRECT too).
 */
static inline unsigned int dio_bdev_dma_alignment(struct block_device *bdev)
{
	struct blk_integrity *bi = bdev_get_integrity(bdev);
	unsigned int align;

#ifdef HAVE_BDEV_DMA_ALIGNMENT
	align = bdev_dma_alignment(bdev) + 1;
#else
	align = queue_dma_alignment(bdev_get_queue(bdev)) + 1;
#endif
	if (bi && bi->interval_exp)
		align = max_t(unsigned int, align,
			      1U << min_t(unsigned int, bi->interval_exp,
					  PAGE_SHIFT));
	return align;
}

/* ---- namespaces ---- */

/* The caller's IPC namespace, with a reference. */
static inline struct ipc_namespace *dio_ipc_ns_get(void)
{
	return get_ipc_ns(current->nsproxy->ipc_ns);
}

/*
 * 6.1 does not export put_ipc_ns(); the namespace's own proc_ns_operations
 * (nsfs drops its references through them) do the same.
 */
static inline void dio_ipc_ns_put(struct ipc_namespace *ns)
{
#if defined(HAVE_PUT_IPC_NS_EXPORTED) || !defined(CONFIG_IPC_NS)
	put_ipc_ns(ns);
#else
	ns->ns.ops->put(&ns->ns);
#endif
}

/* ---- locks ---- */

/*
 * sparse learns that a call took a lock only when it returned true through
 * __cond_lock(); newer kernels (context analysis) no longer have it.
 */
#ifndef __cond_lock
#define __cond_lock(x, c)	(c)
#endif

/* ---- workqueues ---- */

/*
 * A bound workqueue.  Kernels with WQ_PERCPU (7.3 here) want it said, and
 * warn at alloc_workqueue() when neither it nor WQ_UNBOUND is given;
 * before it, bound was what no flag meant.
 */
#ifdef HAVE_WQ_PERCPU
#define DIO_WQ_PERCPU	WQ_PERCPU
#else
#define DIO_WQ_PERCPU	0
#endif

/* ---- file descriptors ---- */

/* struct fd became opaque in 6.12; fd_file() is a macro since then. */
#ifndef fd_file
#define fd_file(f)	((f).file)
#endif

/* ---- pages ---- */

/* nth_page() went away once struct pages of a folio were always contiguous. */
#ifdef nth_page
#define dio_nth_page(page, n)	nth_page(page, n)
#else
#define dio_nth_page(page, n)	((page) + (n))
#endif

/**
 * dio_page_frag_alloc - a fragment of a page fragment cache
 * @nc: the cache; its caller serialises
 * @len: bytes, at most a page
 * @gfp: for a new page of the cache
 * @align: the fragment's alignment, a power of two
 *
 * The fragment holds a reference to its (compound) page: page_frag_free()
 * drops it.  6.1 exports page_frag_alloc_align() taking an alignment mask;
 * later kernels name that __page_frag_alloc_align() and wrap it.
 *
 * Return: the fragment's address, or NULL.
 */
static inline void *dio_page_frag_alloc(struct page_frag_cache *nc,
					unsigned int len, gfp_t gfp,
					unsigned int align)
{
#ifdef HAVE___PAGE_FRAG_ALLOC_ALIGN
	return __page_frag_alloc_align(nc, len, gfp, -align);
#else
	return page_frag_alloc_align(nc, len, gfp, -align);
#endif
}

/**
 * dio_page_frag_cache_drain - drop a fragment cache's own page reference
 * @nc: the cache, no longer used (zeroed, or holding a page)
 *
 * Fragments still allocated keep the page until page_frag_free().
 */
static inline void dio_page_frag_cache_drain(struct page_frag_cache *nc)
{
#ifdef HAVE_PAGE_FRAG_CACHE_DRAIN
	page_frag_cache_drain(nc);
#else
	if (nc->va)
		__page_frag_cache_drain(virt_to_head_page(nc->va),
					nc->pagecnt_bias);
#endif
}

/* ---- user buffers ---- */

/* A single user buffer as an iov_iter; @fast is scratch for old kernels. */
static inline int dio_import_buf(int dir, void __user *buf, size_t len,
				 struct iovec *fast, struct iov_iter *iter)
{
#ifdef HAVE_IMPORT_UBUF
	return import_ubuf(dir, buf, len, iter);
#else
	return import_single_range(dir, buf, len, fast, iter);
#endif
}

/*
 * Pin user pages long-term, mmap_lock held (registered buffers).  6.5
 * dropped the vmas argument.
 */
static inline long dio_pin_user_pages(unsigned long start,
				      unsigned long nr_pages,
				      unsigned int gup_flags,
				      struct page **pages)
{
	/* As fixed.c's check of the VMAs, not mmap_assert_locked(). */
	lockdep_assert_held(&current->mm->mmap_lock);
#ifdef HAVE_PIN_USER_PAGES_VMAS
	return pin_user_pages(start, nr_pages, gup_flags, pages, NULL);
#else
	return pin_user_pages(start, nr_pages, gup_flags, pages);
#endif
}

/* ---- bios ---- */

#ifdef HAVE_BIO_IOV_ITER_GET_PAGES_EXPORTED
/**
 * dio_bio_iov_iter_get_pages - pin user pages from @iter into @bio
 * @bio: a bio with room in its bvec table
 * @iter: the user's buffer; advanced past what was added
 *
 * The bio's size is a multiple of the logical block size.
 *
 * Return: 0 when pages were added, else -errno.
 */
static inline int dio_bio_iov_iter_get_pages(struct bio *bio,
					     struct iov_iter *iter)
{
	return bio_iov_iter_get_pages(bio, iter);
}
#else
/*
 * 7.x no longer exports bio_iov_iter_get_pages(): pin with
 * iov_iter_extract_pages() and add the pages ourselves, the way
 * block/bio.c does, then trim the bio to whole logical blocks.
 */
static inline void dio_bio_trim_tail(struct bio *bio, struct iov_iter *iter,
				     unsigned int trim)
{
	iov_iter_revert(iter, trim);
	bio->bi_iter.bi_size -= trim;
	while (trim) {
		struct bio_vec *bv = &bio->bi_io_vec[bio->bi_vcnt - 1];
		unsigned int n = min(trim, bv->bv_len);

		bv->bv_len -= n;
		trim -= n;
		if (!bv->bv_len) {
			if (bio_flagged(bio, BIO_PAGE_PINNED))
				unpin_user_page(bv->bv_page);
			bio->bi_vcnt--;
		}
	}
}

static inline int dio_bio_iov_iter_get_pages(struct bio *bio,
					     struct iov_iter *iter)
{
	unsigned int lbs = bdev_logical_block_size(bio->bi_bdev);
	ssize_t ret = 0;

	if (iov_iter_extract_will_pin(iter))
		bio_set_flag(bio, BIO_PAGE_PINNED);
	while (iov_iter_count(iter) && bio->bi_vcnt < bio->bi_max_vecs) {
		struct page *stack[16], **pages = stack;
		unsigned int maxpages = min_t(unsigned int, ARRAY_SIZE(stack),
					      bio->bi_max_vecs - bio->bi_vcnt);
		size_t off, left;
		int i;

		ret = iov_iter_extract_pages(iter, &pages,
					     UINT_MAX - bio->bi_iter.bi_size,
					     maxpages, 0, &off);
		if (ret <= 0) {
			ret = ret ? ret : -EFAULT;
			break;
		}
		for (left = ret, i = 0; left; i++) {
			size_t len = min_t(size_t, PAGE_SIZE - off, left);

			__bio_add_page(bio, pages[i], len, off);
			left -= len;
			off = 0;
		}
		ret = 0;
	}
	dio_bio_trim_tail(bio, iter, bio->bi_iter.bi_size & (lbs - 1));
	if (bio->bi_vcnt)
		return 0;
	return ret ? ret : -EINVAL;
}
#endif

/**
 * dio_bio_integrity_add_page - add one segment to a bio's integrity payload
 * @bio: the bio, its payload allocated with bio_integrity_alloc()
 * @page: first page of the segment
 * @len: bytes
 * @offset: offset in @page
 *
 * 6.1's bio_integrity_add_page() does not advance the payload's size
 * (bio_integrity_prep() sets it for its own payloads); left at 0, the
 * request reaches the driver with no integrity segment and the kernel hits
 * a BUG.  Newer kernels advance it themselves.
 *
 * Return: 0, or -ENOMEM when the segment could not be added.
 */
static inline int dio_bio_integrity_add_page(struct bio *bio,
					     struct page *page,
					     unsigned int len,
					     unsigned int offset)
{
	struct bio_integrity_payload *bip = bio_integrity(bio);
	unsigned int before = bip->bip_iter.bi_size;

	if (bio_integrity_add_page(bio, page, len, offset) != len)
		return -ENOMEM;
	if (bip->bip_iter.bi_size == before)
		bip->bip_iter.bi_size += len;
	return 0;
}

/* 6.14 gave integrity payloads their own pool: nothing to set up there. */
static inline int dio_bioset_integrity_create(struct bio_set *bs, int size)
{
#ifdef HAVE_BIOSET_INTEGRITY_CREATE
	/* 6.1 returns -1, not an errno, when its pools cannot be allocated. */
	return bioset_integrity_create(bs, size) ? -ENOMEM : 0;
#else
	return 0;
#endif
}

/* ---- integrity profile ---- */

/**
 * struct dio_bi - what the module needs to know of a device's PI format
 * @md_size: metadata bytes per interval (what a PI buffer holds), 0 without
 * @pi_size: bytes of the PI tuple inside it (8, or 16 for CRC64)
 * @pi_offset: offset of the PI tuple in the metadata
 * @interval: protection interval in bytes
 * @guard: DIO_GUARD_*
 * @type: 1 or 3 (type 2 is handled as 1 by the kernel)
 * @kgenerate: block layer generates PI on writes without a payload
 * @kverify: block layer verifies PI on reads without a payload
 * @device_capable: the device (not only the HBA) handles PI
 * @name: profile name as the kernel shows it in sysfs
 */
struct dio_bi {
	unsigned int	md_size;
	unsigned int	pi_size;
	unsigned int	pi_offset;
	unsigned int	interval;
	unsigned int	guard;
	unsigned int	type;
	bool		kgenerate;
	bool		kverify;
	bool		device_capable;
	const char	*name;
};

static inline void dio_bi_name(struct dio_bi *out)
{
	static const char * const names[][2] = {
		[DIO_GUARD_NONE]  = { "nop", "nop" },
		[DIO_GUARD_IP]    = { "T10-DIF-TYPE1-IP", "T10-DIF-TYPE3-IP" },
		[DIO_GUARD_CRC16] = { "T10-DIF-TYPE1-CRC", "T10-DIF-TYPE3-CRC" },
		[3]               = { "nop", "nop" },
		[DIO_GUARD_CRC64] = { "EXT-DIF-TYPE1-CRC64", "EXT-DIF-TYPE3-CRC64" },
	};

	out->name = names[out->guard][out->type == 3];
}

/*
 * dio_bdev_integrity() reads @bdev's PI format into *@out.  It returns
 * false, with *@out all zero, when the device has no integrity metadata.
 * @cache (or NULL): a word the caller keeps for @bdev, zero at first,
 * where 6.1 remembers which profile it found (see there).
 */
#ifdef HAVE_BI_CSUM_TYPE
/* 6.11+: the format is described by csum_type and flags. */
static inline bool dio_bdev_integrity(struct block_device *bdev,
				      struct dio_bi *out, unsigned long *cache)
{
	struct blk_integrity *bi = bdev_get_integrity(bdev);

	memset(out, 0, sizeof(*out));
	if (!bi)
		return false;
#ifdef HAVE_BI_PI_TUPLE_SIZE
	/* 6.15+: metadata may be larger than the PI tuple. */
	out->md_size = bi->metadata_size;
	out->pi_size = bi->pi_tuple_size;
#else
	out->md_size = bi->tuple_size;
	out->pi_size = bi->csum_type == BLK_INTEGRITY_CSUM_CRC64 ? 16 :
		       bi->csum_type != BLK_INTEGRITY_CSUM_NONE ? 8 : 0;
#endif
	if (!out->md_size) {
		out->pi_size = 0;
		return false;
	}
	out->pi_offset = bi->pi_offset;
	out->interval = 1U << bi->interval_exp;
	out->type = (bi->flags & BLK_INTEGRITY_REF_TAG) ? 1 : 3;
	out->kgenerate = !(bi->flags & BLK_INTEGRITY_NOGENERATE);
	out->kverify = !(bi->flags & BLK_INTEGRITY_NOVERIFY);
	out->device_capable = bi->flags & BLK_INTEGRITY_DEVICE_CAPABLE;
	switch (bi->csum_type) {
	case BLK_INTEGRITY_CSUM_IP:
		out->guard = DIO_GUARD_IP;
		break;
	case BLK_INTEGRITY_CSUM_CRC:
		out->guard = DIO_GUARD_CRC16;
		break;
	case BLK_INTEGRITY_CSUM_CRC64:
		/* The kernel's 3 is not LBMD's 4: map, never copy raw. */
		out->guard = DIO_GUARD_CRC64;
		break;
	default:
		out->guard = DIO_GUARD_NONE;
		out->pi_size = 0;
		break;
	}
	dio_bi_name(out);
	return true;
}
#else
/*
 * 6.1: a registered profile, known by its name: block/t10-pi.c's six (type
 * 2 registers type 1's).  Any other (dm-integrity's, "nop") carries no PI
 * the module knows.  Exact names, not substrings.
 */
static const struct {
	const char	*name;
	unsigned int	guard;
	unsigned int	type;
} dio_profiles[] = {
	{ "T10-DIF-TYPE1-CRC",   DIO_GUARD_CRC16, 1 },
	{ "T10-DIF-TYPE1-IP",    DIO_GUARD_IP,    1 },
	{ "T10-DIF-TYPE3-CRC",   DIO_GUARD_CRC16, 3 },
	{ "T10-DIF-TYPE3-IP",    DIO_GUARD_IP,    3 },
	{ "EXT-DIF-TYPE1-CRC64", DIO_GUARD_CRC64, 1 },
	{ "EXT-DIF-TYPE3-CRC64", DIO_GUARD_CRC64, 3 },
};

/*
 * @p's index in dio_profiles[], ARRAY_SIZE() for another.  This runs per
 * request: *@cache keeps the last profile looked up (its address, with
 * its index + 1 in the low bits) so that the names are compared once.
 * The caller holds the disk open, so its driver and t10_pi stay loaded:
 * the address of a profile it remembered is not reused meanwhile.
 */
static inline unsigned int dio_profile_index(const struct blk_integrity_profile *p,
					     unsigned long *cache)
{
	unsigned long c = cache ? READ_ONCE(*cache) : 0;
	const char *name = p->name ?: "";
	unsigned int i;

	BUILD_BUG_ON(ARRAY_SIZE(dio_profiles) + 1 > 7);
	BUILD_BUG_ON(__alignof__(struct blk_integrity_profile) < 8);
	if (c && (c & ~7UL) == (unsigned long)p)
		return (c & 7) - 1;
	for (i = 0; i < ARRAY_SIZE(dio_profiles); i++)
		if (!strcmp(name, dio_profiles[i].name))
			break;
	if (cache)
		WRITE_ONCE(*cache, (unsigned long)p | (i + 1));
	return i;
}

static inline bool dio_bdev_integrity(struct block_device *bdev,
				      struct dio_bi *out, unsigned long *cache)
{
	struct blk_integrity *bi = bdev_get_integrity(bdev);
	unsigned int i;

	memset(out, 0, sizeof(*out));
	if (!bi || !bi->profile || !bi->tuple_size)
		return false;
	/*
	 * md RAID1 stacks its members' integrity here, but does not carry
	 * it: 6.1's raid1_write_request() sets its clones' bi_opf to the op
	 * and REQ_SYNC | REQ_FUA, dropping REQ_INTEGRITY, so the NVMe driver
	 * sets PRACT and the controller writes PI of its own instead of the
	 * caller's; reads came back with the module's buffer untouched
	 * (t_stacks: RAID1 over two NVMe PI namespaces, every guard 0, where
	 * 6.12 and 7.3 return the stored tuples).  No PI through md on these
	 * kernels: refused rather than wrong.
	 */
	if (!strncmp(bdev->bd_disk->disk_name, "md", 2))
		return false;
	out->md_size = bi->tuple_size;
	out->interval = 1U << bi->interval_exp;
	out->kgenerate = bi->flags & BLK_INTEGRITY_GENERATE;
	out->kverify = bi->flags & BLK_INTEGRITY_VERIFY;
	out->device_capable = bi->flags & BLK_INTEGRITY_DEVICE_CAPABLE;
	out->guard = DIO_GUARD_NONE;
	out->type = 1;
	i = dio_profile_index(bi->profile, cache);
	if (i < ARRAY_SIZE(dio_profiles)) {
		out->guard = dio_profiles[i].guard;
		out->type = dio_profiles[i].type;
	}
	out->pi_size = out->guard == DIO_GUARD_CRC64 ? 16 :
		       out->guard != DIO_GUARD_NONE ? 8 : 0;
	dio_bi_name(out);
	return true;
}
#endif

/* ---- PI payloads and guards ---- */

/* CRC64-NVMe (the kernel's crc64_rocksoft before 6.15), 0 to start. */
static inline u64 dio_crc64_nvme(u64 crc, const void *p, size_t len)
{
#ifdef HAVE_CRC64_NVME
	return crc64_nvme(crc, p, len);
#else
	return crc64_rocksoft_update(crc, p, len);
#endif
}

/**
 * dio_bdev_nocheck_capable - does @bdev's driver honour a raw read?
 * @bdev: the device
 *
 * Can a read skip the HBA's and disk's checks?  Before 6.14 only SCSI
 * disks look at BIP_CTRL_NOCHECK/BIP_DISK_NOCHECK; since then the
 * BIP_CHECK_* flags tell every driver what to check.  A stacked device
 * (device-mapper, md) never says yes: from 6.14 the payloads it clones
 * for the devices below lose BIP_DISK_NOCHECK (BIP_CLONE_FLAGS), and
 * before, what lies below is not known.  A SCSI disk's parent device sits
 * on the SCSI bus; a stacked device's disk has no parent device at all.
 *
 * Return: true when DIO_PI_NOCHECK reaches a driver that skips its checks.
 */
static inline bool dio_bdev_nocheck_capable(struct block_device *bdev)
{
	struct device *parent = disk_to_dev(bdev->bd_disk)->parent;

#ifdef HAVE_BIP_CHECK_FLAGS
	/* Not stacked. */
	return parent;
#else
	/* A SCSI disk. */
	return parent && parent->bus && !strcmp(parent->bus->name, "scsi");
#endif
}

/**
 * dio_bip_set_flags - control flags of a payload the module attaches
 * @bip: the payload
 * @bi: the device's format
 * @nocheck: a raw read: neither HBA nor disk checks
 * @app_tag: with @chk_app, the app tag the device should check (6.14+)
 * @chk_app: ask the device to check the app tag, where it can
 */
static inline void dio_bip_set_flags(struct bio_integrity_payload *bip,
				     const struct dio_bi *bi, bool nocheck,
				     u16 app_tag, bool chk_app)
{
	if (bi->guard == DIO_GUARD_IP)
		bip->bip_flags |= BIP_IP_CHECKSUM;
#ifdef HAVE_BIP_CHECK_FLAGS
	if (nocheck) {
		bip->bip_flags |= BIP_DISK_NOCHECK;
		return;
	}
	bip->bip_flags |= BIP_CHECK_GUARD;
	if (bi->type == 1)
		bip->bip_flags |= BIP_CHECK_REFTAG;
	if (chk_app) {
		bip->bip_flags |= BIP_CHECK_APPTAG;
		bip->app_tag = app_tag;
	}
#else
	if (nocheck)
		bip->bip_flags |= BIP_CTRL_NOCHECK | BIP_DISK_NOCHECK;
#endif
}

#endif /* _DIO_BATCH_COMPAT_H */
