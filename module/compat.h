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
 */
#ifndef _DIO_BATCH_COMPAT_H
#define _DIO_BATCH_COMPAT_H

#include <linux/version.h>
#include <linux/blkdev.h>
#include <linux/blk-integrity.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/uio.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "dio_batch needs Linux 6.1 or newer"
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
 * @write: open for writing too
 * @holder: claim exclusively for this holder, or NULL for no claim
 *
 * Return: 0, or -errno (-EBUSY when another holder has it).
 */
static inline int dio_bdev_open(struct dio_bdev *b, dev_t dev, bool write,
				void *holder)
{
#ifdef HAVE_BDEV_FILE_OPEN
	blk_mode_t mode = BLK_OPEN_READ | (write ? BLK_OPEN_WRITE : 0);
	struct file *f;

	f = bdev_file_open_by_dev(dev, mode, holder, NULL);
	if (IS_ERR(f))
		return PTR_ERR(f);
	b->file = f;
	b->bdev = file_bdev(f);
	return 0;
#else
	fmode_t mode = FMODE_READ | (write ? FMODE_WRITE : 0);
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

static inline unsigned int dio_bdev_dma_alignment(struct block_device *bdev)
{
#ifdef HAVE_BDEV_DMA_ALIGNMENT
	return bdev_dma_alignment(bdev) + 1;
#else
	return queue_dma_alignment(bdev_get_queue(bdev)) + 1;
#endif
}

/* ---- file descriptors ---- */

/* struct fd became opaque in 6.12; fd_file() is a macro since then. */
#ifndef fd_file
#define fd_file(f)	((f).file)
#endif

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

/* ---- integrity profile ---- */

/**
 * struct dio_bi - what the module needs to know of a device's PI format
 * @tuple_size: bytes per interval, 0 without PI
 * @interval: protection interval in bytes
 * @guard: DIO_GUARD_*
 * @type: 1 or 3 (type 2 is handled as 1 by the kernel)
 * @kgenerate: block layer generates PI on writes without a payload
 * @kverify: block layer verifies PI on reads without a payload
 * @device_capable: the device (not only the HBA) handles PI
 * @name: profile name as the kernel prints it in sysfs
 */
struct dio_bi {
	unsigned int	tuple_size;
	unsigned int	interval;
	unsigned int	guard;
	unsigned int	type;
	bool		kgenerate;
	bool		kverify;
	bool		device_capable;
	const char	*name;
};

#ifdef HAVE_BI_CSUM_TYPE
static inline bool dio_bdev_integrity(struct block_device *bdev,
				      struct dio_bi *out)
{
	struct blk_integrity *bi = bdev_get_integrity(bdev);

	memset(out, 0, sizeof(*out));
	if (!bi || !bi->tuple_size)
		return false;
	out->tuple_size = bi->tuple_size;
	out->interval = 1U << bi->interval_exp;
	out->type = (bi->flags & BLK_INTEGRITY_REF_TAG) ? 1 : 3;
	out->kgenerate = !(bi->flags & BLK_INTEGRITY_NOGENERATE);
	out->kverify = !(bi->flags & BLK_INTEGRITY_NOVERIFY);
	out->device_capable = bi->flags & BLK_INTEGRITY_DEVICE_CAPABLE;
	switch (bi->csum_type) {
	case BLK_INTEGRITY_CSUM_IP:
		out->guard = DIO_GUARD_IP;
		out->name = out->type == 1 ? "T10-DIF-TYPE1-IP" :
					     "T10-DIF-TYPE3-IP";
		break;
	case BLK_INTEGRITY_CSUM_CRC:
		out->guard = DIO_GUARD_CRC16;
		out->name = out->type == 1 ? "T10-DIF-TYPE1-CRC" :
					     "T10-DIF-TYPE3-CRC";
		break;
	case BLK_INTEGRITY_CSUM_CRC64:
		out->guard = DIO_GUARD_CRC64;
		out->name = out->type == 1 ? "EXT-DIF-TYPE1-CRC64" :
					     "EXT-DIF-TYPE3-CRC64";
		break;
	default:
		out->guard = DIO_GUARD_NONE;
		out->name = "nop";
		break;
	}
	return true;
}
#else
static inline bool dio_bdev_integrity(struct block_device *bdev,
				      struct dio_bi *out)
{
	struct blk_integrity *bi = bdev_get_integrity(bdev);
	const char *name;

	memset(out, 0, sizeof(*out));
	if (!bi || !bi->profile || !bi->tuple_size)
		return false;
	name = bi->profile->name;
	out->name = name;
	out->tuple_size = bi->tuple_size;
	out->interval = 1U << bi->interval_exp;
	out->kgenerate = bi->flags & BLK_INTEGRITY_GENERATE;
	out->kverify = bi->flags & BLK_INTEGRITY_VERIFY;
	out->device_capable = bi->flags & BLK_INTEGRITY_DEVICE_CAPABLE;
	out->type = strstr(name, "TYPE3") ? 3 : 1;
	if (strstr(name, "CRC64"))
		out->guard = DIO_GUARD_CRC64;
	else if (strstr(name, "-IP"))
		out->guard = DIO_GUARD_IP;
	else if (strstr(name, "-CRC"))
		out->guard = DIO_GUARD_CRC16;
	else
		out->guard = DIO_GUARD_NONE;
	return true;
}
#endif

#endif /* _DIO_BATCH_COMPAT_H */
