// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: keeping the block device's page cache coherent with the
 * requests, as the kernel's own direct I/O does: before a request's bios
 * (dio_kreq_sync_cache(): when the device has cached pages, those of the
 * request's range are written back, and for a write dropped; a failure
 * there is that request's result), and again after a write
 * (dio_kreq_invalidate_written(), in its completion work).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/pagemap.h>

#include "dio_batch.h"

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

/**
 * dio_kreq_sync_cache - the page cache before a request's bios
 * @kreq: a read or a write, checked and entered in its table
 *
 * What the kernel's direct I/O on a block device
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
int dio_kreq_sync_cache(struct dio_kreq *kreq)
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

/**
 * dio_kreq_written_cached - has a write cached pages to drop again?
 * @kreq: a completed request
 *
 * Context: any: one test when the device has none.
 *
 * Return: true when @kreq succeeded and its device has cached pages.
 */
bool dio_kreq_written_cached(const struct dio_kreq *kreq)
{
	return !kreq->error && READ_ONCE(dio_kreq_mapping(kreq)->nrpages);
}

/**
 * dio_kreq_invalidate_written - drop cached pages again after a write
 * @kreq: a completed request, its pages released
 *
 * Drops the cached pages of the request's range when it is a write that
 * succeeded and its device has some: once more, as the kernel does after
 * a direct write (kiocb_invalidate_post_direct_write()), since a buffered
 * read or readahead that ran while the write was at the device may have
 * cached what was there before.  The completion work does
 * it (dio_kreq_needs_process()), before the request can be reported.  A
 * page that cannot be dropped is reported as the kernel reports it: the
 * device's page cache records -EIO for the next fsync(), and a message
 * (rate-limited) says so; the write itself succeeded.
 *
 * Context: process context, may sleep.
 */
void dio_kreq_invalidate_written(struct dio_kreq *kreq)
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
