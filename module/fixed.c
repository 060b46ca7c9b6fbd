// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: registered buffers (DIO_IOC_REGISTER, DIO_REQ_FIXED).
 *
 * A descriptor may register one set of buffers of its process's memory.
 * Their pages are pinned once, long-term (FOLL_LONGTERM, as io_uring's
 * fixed buffers are), and requests that name a buffer (DIO_REQ_FIXED) put
 * those pages into their bios without pinning or unpinning anything.
 *
 * The set is charged as io_uring charges its buffers: every page to the
 * user's locked_vm against RLIMIT_MEMLOCK (not for CAP_IPC_LOCK) and to the
 * process's pinned_vm.  Only anonymous and shared memory is taken (shmem,
 * memfd, hugetlb): the pages of another file's mapping could be written
 * back, or truncated, under a long-term pin.
 *
 * The set is refcounted: the descriptor holds one reference while it is
 * registered and every request that uses it one more, until the request is
 * freed (reported or reaped), in process context.  The last reference
 * unpins the pages, marking them dirty (a read may have written any of
 * them), and gives back the charge.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/cred.h>
#include <linux/hugetlb.h>
#include <linux/mm.h>
#include <linux/nospec.h>
#include <linux/overflow.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dio_batch.h"

/* One registered buffer: the pages of [addr, addr + len), whole. */
struct dio_kbuf {
	u64			addr;
	u64			len;
	unsigned long		base;		/* addr & PAGE_MASK */
	unsigned long		nr_pages;
	struct page		**pages;
};

struct dio_fixed {
	refcount_t		ref;
	unsigned int		nr;
	struct user_struct	*user;		/* locked_vm charged, or NULL */
	struct mm_struct	*mm;		/* pinned_vm charged; mmgrab() */
	unsigned long		nr_pages;	/* charged to both */
	struct dio_kbuf		bufs[];
};

/*
 * Charge @nr_pages to the caller's RLIMIT_MEMLOCK (its user's locked_vm,
 * as io_uring's __io_account_mem()) and its process's pinned_vm.
 */
static int dio_fixed_charge(struct dio_fixed *f, unsigned long nr_pages)
{
	unsigned long limit, cur;

	if (!capable(CAP_IPC_LOCK)) {
		limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
		f->user = get_uid(current_user());
		cur = atomic_long_read(&f->user->locked_vm);
		do {
			if (nr_pages > limit || cur > limit - nr_pages) {
				free_uid(f->user);
				f->user = NULL;
				return -ENOMEM;
			}
		} while (!atomic_long_try_cmpxchg(&f->user->locked_vm, &cur,
						  cur + nr_pages));
	}
	mmgrab(current->mm);
	f->mm = current->mm;
	atomic64_add(nr_pages, &f->mm->pinned_vm);
	f->nr_pages = nr_pages;
	return 0;
}

static void dio_fixed_uncharge(struct dio_fixed *f)
{
	atomic64_sub(f->nr_pages, &f->mm->pinned_vm);
	mmdrop(f->mm);
	if (f->user) {
		atomic_long_sub(f->nr_pages, &f->user->locked_vm);
		free_uid(f->user);
	}
}

/*
 * Is every page of [start, end) mapped, and anonymous or shared memory?
 * mmap_lock held.  Return: 0, -EFAULT (a hole) or -EOPNOTSUPP (a mapping
 * of another file).
 */
static int dio_fixed_check_vmas(struct mm_struct *mm, unsigned long start,
				unsigned long end)
{
	struct vm_area_struct *vma;

	/*
	 * Not mmap_assert_locked(): with CONFIG_DEBUG_VM it calls dump_mm(),
	 * which 6.1 does not export to modules.
	 */
	lockdep_assert_held(&mm->mmap_lock);
	while (start < end) {
		vma = find_vma(mm, start);
		if (!vma || vma->vm_start > start)
			return -EFAULT;
		if (vma->vm_file && !(vma->vm_flags & VM_HUGETLB) &&
		    !shmem_mapping(vma->vm_file->f_mapping))
			return -EOPNOTSUPP;
		start = vma->vm_end;
	}
	return 0;
}

/* Pin the pages of @b, whose addr, len and nr_pages are set. */
static int dio_kbuf_pin(struct dio_kbuf *b)
{
	struct mm_struct *mm = current->mm;
	long pinned;
	int ret;

	b->pages = kvmalloc_array(b->nr_pages, sizeof(*b->pages),
				  GFP_KERNEL_ACCOUNT);
	if (!b->pages)
		return -ENOMEM;
	mmap_read_lock(mm);
	ret = dio_fixed_check_vmas(mm, b->base,
				   b->base + (b->nr_pages << PAGE_SHIFT));
	if (ret)
		goto out_unlock;
	/* Under the lock that checked them: the mappings cannot change. */
	pinned = dio_pin_user_pages(b->base, b->nr_pages,
				    FOLL_WRITE | FOLL_LONGTERM, b->pages);
	mmap_read_unlock(mm);
	if (pinned == b->nr_pages)
		return 0;
	if (pinned > 0)
		unpin_user_pages(b->pages, pinned);
	ret = pinned < 0 ? pinned : -EFAULT;
	goto out_free_pages;

out_unlock:
	mmap_read_unlock(mm);
out_free_pages:
	kvfree(b->pages);
	b->pages = NULL;
	return ret;
}

static void dio_kbuf_unpin(struct dio_kbuf *b)
{
	unpin_user_pages_dirty_lock(b->pages, b->nr_pages, true);
	kvfree(b->pages);
}

/**
 * dio_fixed_put - drop a reference to a registered set
 * @f: the set, or NULL
 *
 * Context: process context; the last reference unpins the pages.
 */
void dio_fixed_put(struct dio_fixed *f)
{
	unsigned int i;

	if (!f || !refcount_dec_and_test(&f->ref))
		return;
	for (i = 0; i < f->nr; i++)
		dio_kbuf_unpin(&f->bufs[i]);
	dio_fixed_uncharge(f);
	kvfree(f);
}

/**
 * dio_fixed_get - the descriptor's registered set, with a reference
 * @df: the descriptor
 *
 * Return: the set, or NULL when none is registered.
 */
struct dio_fixed *dio_fixed_get(struct dio_file *df)
{
	struct dio_fixed *f;

	spin_lock(&df->fixed_lock);
	f = df->fixed;
	if (f)
		refcount_inc(&f->ref);
	spin_unlock(&df->fixed_lock);
	return f;
}

/**
 * dio_fixed_hold - one more reference, for a request that uses @f
 * @f: a set the caller holds a reference to
 *
 * Return: @f.
 */
struct dio_fixed *dio_fixed_hold(struct dio_fixed *f)
{
	refcount_inc(&f->ref);
	return f;
}

/**
 * dio_fixed_find - the registered buffer a request's data lies in
 * @f: the set (NULL: none registered)
 * @index: the request's buf_index
 * @addr: the data's user address
 * @len: its bytes
 *
 * Return: the buffer; ERR_PTR(-EINVAL) when @index names no buffer,
 * ERR_PTR(-EFAULT) when [@addr, @addr + @len) is not within it.
 */
const struct dio_kbuf *dio_fixed_find(const struct dio_fixed *f, u32 index,
				      u64 addr, u64 len)
{
	const struct dio_kbuf *b;

	if (!f || index >= f->nr)
		return ERR_PTR(-EINVAL);
	/* The caller's number: no buffer past the set, not even speculatively. */
	b = &f->bufs[array_index_nospec(index, f->nr)];
	if (addr < b->addr || len > b->len || addr - b->addr > b->len - len)
		return ERR_PTR(-EFAULT);
	return b;
}

/**
 * dio_fixed_bio_add - put registered pages into a bio
 * @bio: a new bio with room for @max_pages vectors
 * @b: the buffer, from dio_fixed_find()
 * @addr: user address of the first byte to add, within @b
 * @len: bytes left to add
 * @lbs: the device's logical block size
 *
 * Adds as much of [@addr, @addr + @len) as @max_pages pages hold, in whole
 * logical blocks.  The pages are the registration's: the bio takes no
 * reference and must not release them.
 *
 * Return: the bytes added.
 */
unsigned int dio_fixed_bio_add(struct bio *bio, const struct dio_kbuf *b,
			       u64 addr, u64 len, unsigned int lbs)
{
	unsigned long idx = (addr - b->base) >> PAGE_SHIFT;
	unsigned int off = offset_in_page(addr);
	u64 room = ((u64)bio->bi_max_vecs << PAGE_SHIFT) - off;
	unsigned int bytes, left, n;

	/*
	 * @addr is the caller's, checked against @b by dio_fixed_find(): the
	 * first page it names is one of @b's, speculatively too.
	 */
	idx = array_index_nospec(idx, b->nr_pages);
	bytes = len <= room ? len : round_down(room, lbs);
	for (left = bytes; left; left -= n, off = 0, idx++) {
		n = min_t(unsigned int, left, PAGE_SIZE - off);
		__bio_add_page(bio, b->pages[idx], n, off);
	}
	return bytes;
}

/**
 * dio_fixed_pages - pages [@addr, @addr + @len) spans
 * @addr: user address
 * @len: bytes
 *
 * Return: the page count.
 */
unsigned long dio_fixed_pages(u64 addr, u64 len)
{
	return DIV_ROUND_UP(offset_in_page(addr) + len, PAGE_SIZE);
}

/* Check and size the user's buffers; the set's array gets them. */
static int dio_fixed_fill(struct dio_fixed *f, const struct dio_fixed_buf *in,
			  unsigned long *nr_pages)
{
	unsigned int i;
	u64 end;

	*nr_pages = 0;
	for (i = 0; i < f->nr; i++) {
		struct dio_kbuf *b = &f->bufs[i];

		if (!in[i].len || in[i].len > DIO_MAX_FIXED_BUF_BYTES)
			return -EINVAL;
		if (check_add_overflow(in[i].addr, in[i].len, &end) ||
		    end > TASK_SIZE)
			return -EFAULT;
		b->addr = in[i].addr;
		b->len = in[i].len;
		b->base = b->addr & PAGE_MASK;
		b->nr_pages = dio_fixed_pages(b->addr, b->len);
		*nr_pages += b->nr_pages;
	}
	return 0;
}

/* The user's struct dio_fixed_buf array, checked; kvfree() it. */
static struct dio_fixed_buf *dio_fixed_copy_in(const struct dio_register *reg)
{
	struct dio_fixed_buf *in;

	in = kvmalloc_array(reg->nr, sizeof(*in), GFP_KERNEL_ACCOUNT);
	if (!in)
		return ERR_PTR(-ENOMEM);
	if (copy_from_user(in, u64_to_user_ptr(reg->bufs),
			   array_size(reg->nr, sizeof(*in)))) {
		kvfree(in);
		return ERR_PTR(-EFAULT);
	}
	return in;
}

/* Check the argument of REGISTER (@reg_op) or UNREGISTER. */
static int dio_register_check(const struct dio_register *reg, bool reg_op)
{
	if (reg->flags || reg->pad || reg->reserved[0] || reg->reserved[1])
		return -EINVAL;
	if (!reg_op)
		return reg->nr || reg->bufs ? -EINVAL : 0;
	if (!reg->nr || reg->nr > DIO_MAX_FIXED_BUFS)
		return -EINVAL;
	return 0;
}

/**
 * dio_fixed_register_ioctl - DIO_IOC_REGISTER
 * @df: the calling descriptor, created by the caller's process
 *	(DIO_CMD_MINE: dio_cmd_run() answers -EXDEV to another)
 * @arg: struct dio_register, copied in
 * @uarg: the user's struct (unused)
 *
 * Return: as the comment of struct dio_register in uapi/linux/dio_batch.h
 * says of DIO_IOC_REGISTER, errors included.
 */
long dio_fixed_register_ioctl(struct dio_file *df, void *arg,
			      void __user *uarg)
{
	const struct dio_register *reg = arg;
	struct dio_fixed_buf *in;
	unsigned long nr_pages;
	struct dio_fixed *f;
	unsigned int i;
	int ret;

	ret = dio_register_check(reg, true);
	if (ret)
		return ret;
	if (READ_ONCE(df->fixed))
		return -EBUSY;
	in = dio_fixed_copy_in(reg);
	if (IS_ERR(in))
		return PTR_ERR(in);
	f = kvzalloc(struct_size(f, bufs, reg->nr), GFP_KERNEL_ACCOUNT);
	ret = -ENOMEM;
	if (!f)
		goto out_free_in;
	refcount_set(&f->ref, 1);
	f->nr = reg->nr;
	ret = dio_fixed_fill(f, in, &nr_pages);
	if (ret)
		goto out_free_set;
	ret = dio_fixed_charge(f, nr_pages);
	if (ret)
		goto out_free_set;
	for (i = 0; i < f->nr; i++) {
		ret = -EINTR;
		if (fatal_signal_pending(current))
			goto out_unpin;
		ret = dio_kbuf_pin(&f->bufs[i]);
		if (ret)
			goto out_unpin;
	}
	spin_lock(&df->fixed_lock);
	if (df->fixed) {
		spin_unlock(&df->fixed_lock);
		ret = -EBUSY;
		goto out_unpin;
	}
	df->fixed = f;
	spin_unlock(&df->fixed_lock);
	kvfree(in);
	return 0;

out_unpin:
	while (i--)
		dio_kbuf_unpin(&f->bufs[i]);
	dio_fixed_uncharge(f);
out_free_set:
	kvfree(f);
out_free_in:
	kvfree(in);
	return ret;
}

/**
 * dio_fixed_unregister - drop the descriptor's registered set
 * @df: the descriptor
 *
 * Requests in flight keep their references.
 *
 * Return: 0, or -ENXIO when none is registered.
 */
int dio_fixed_unregister(struct dio_file *df)
{
	struct dio_fixed *f;

	spin_lock(&df->fixed_lock);
	f = df->fixed;
	df->fixed = NULL;
	spin_unlock(&df->fixed_lock);
	if (!f)
		return -ENXIO;
	dio_fixed_put(f);
	return 0;
}

/**
 * dio_fixed_unregister_ioctl - DIO_IOC_UNREGISTER
 * @df: the calling descriptor, created by the caller's process
 *	(DIO_CMD_MINE: dio_cmd_run() answers -EXDEV to another)
 * @arg: struct dio_register, copied in
 * @uarg: the user's struct (unused)
 *
 * Return: as the comment of struct dio_register in uapi/linux/dio_batch.h
 * says of DIO_IOC_UNREGISTER, errors included.
 */
long dio_fixed_unregister_ioctl(struct dio_file *df, void *arg,
				void __user *uarg)
{
	int ret;

	ret = dio_register_check(arg, false);
	if (ret)
		return ret;
	return dio_fixed_unregister(df);
}
