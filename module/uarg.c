// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: copying the extensible argument structs of the ioctls in from
 * user space.
 */
#include <linux/uaccess.h>

#include "dio_batch.h"

/**
 * dio_copy_arg - copy an extensible argument struct from user space
 * @karg: the kernel's struct; its first member is __u32 size
 * @ksize: sizeof the kernel's struct
 * @min_size: the struct's first published size (*_SIZE_VER0)
 * @uarg: the user's struct
 *
 * Older (smaller) structs are zero-extended; newer (larger) ones must have
 * an all-zero tail.  @karg->size keeps the caller's size, so that replies
 * write back no more than the caller has.
 *
 * Context: process context; may fault in user memory and sleep.
 *
 * Return: 0, -EFAULT, -EINVAL (size below @min_size) or -E2BIG (a size
 * above a page, or a non-zero tail the kernel does not know).
 */
int dio_copy_arg(void *karg, size_t ksize, size_t min_size,
		 const void __user *uarg)
{
	u32 usize;
	int ret;

	/*
	 * The common case, a caller built against this header, in one copy.
	 * Anything else (a fault past a smaller struct included) is read
	 * again below, size first, and what this copy read is overwritten.
	 */
	if (!copy_from_user(karg, uarg, ksize) && *(u32 *)karg == ksize)
		return 0;
	if (get_user(usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (usize < min_size)
		return -EINVAL;
	/* As clone3() and openat2(): no struct will ever be this large. */
	if (usize > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(karg, ksize, uarg, usize);
	if (ret)
		return ret;
	*(u32 *)karg = usize;
	return 0;
}
