// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: running a command of either device's table (dio_cmd_run()),
 * and copying the extensible argument structs of the ioctls in from user
 * space and back.
 */
#include <linux/uaccess.h>

#include "dio_batch.h"

/**
 * dio_get_usize - read and check the size an argument struct starts with
 * @uarg: the user's struct
 * @min_size: the smallest size the command accepts (its VER0)
 * @usize: the size read
 *
 * Context: process context; may fault in user memory and sleep.
 *
 * Return: 0, -EFAULT, -EINVAL (below @min_size) or -E2BIG (above a page).
 */
int dio_get_usize(const void __user *uarg, size_t min_size, u32 *usize)
{
	if (get_user(*usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (*usize < min_size)
		return -EINVAL;
	/* As clone3() and openat2(): no struct will ever be this large. */
	if (*usize > PAGE_SIZE)
		return -E2BIG;
	return 0;
}

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
	ret = dio_get_usize(uarg, min_size, &usize);
	if (ret)
		return ret;
	ret = copy_struct_from_user(karg, ksize, uarg, usize);
	if (ret)
		return ret;
	*(u32 *)karg = usize;
	return 0;
}

/**
 * dio_copy_request - copy a struct dio_request in from user space
 * @r: the kernel's copy
 * @uaddr: the user's struct
 *
 * The common case, a struct of this module's size, in sixteen 8-byte
 * loads: the work of copy_from_user() on hardware, and a fraction of it
 * under TCG, where a string copy runs a translation block per byte (the
 * benchmarks' guests).  Anything else goes through dio_copy_arg(), so @r
 * must be in memory hardened usercopy allows (the stack, or a whitelisted
 * field).
 *
 * Context: process context; may fault in user memory and sleep.
 *
 * Return: as dio_copy_arg().
 */
int dio_copy_request(struct dio_request *r, u64 uaddr)
{
	const u64 __user *u = u64_to_user_ptr(uaddr);
	u64 *k = (u64 *)r;
	unsigned int i;

	BUILD_BUG_ON(sizeof(*r) % sizeof(u64));
	if (!user_access_begin(u, sizeof(*r)))
		return -EFAULT;
	for (i = 0; i < sizeof(*r) / sizeof(u64); i++)
		unsafe_get_user(k[i], &u[i], out_end_access);
	user_access_end();
	if (r->size == sizeof(*r))
		return 0;
	/* Another size: read again, size first. */
	return dio_copy_arg(r, sizeof(*r), DIO_REQUEST_SIZE_VER0, u);

out_end_access:
	user_access_end();
	/* A fault: dio_copy_arg() tells a short older struct from a bad one. */
	return dio_copy_arg(r, sizeof(*r), DIO_REQUEST_SIZE_VER0, u);
}

/**
 * dio_put_result - write a request's result fields back to user space
 * @uaddr: the user's struct dio_request
 * @res: its result, pi_err_interval, pi_err_expected, pi_err_actual,
 *	pi_err_tag and pi_err_source
 *
 * Field by field: every byte written comes from @res, and there is no
 * string copy (a byte loop under TCG).
 *
 * Context: process context; may fault in user memory and sleep.
 *
 * Return: 0 or -EFAULT.
 */
int dio_put_result(u64 uaddr, const struct dio_result *res)
{
	struct dio_request __user *u = u64_to_user_ptr(uaddr);
	size_t off = offsetof(struct dio_request, result);
	size_t end = offsetof(struct dio_request, pad3);

	/* These fields are all of [result, pad3), in this order. */
	BUILD_BUG_ON(end != offsetofend(struct dio_request, pi_err_source));
	BUILD_BUG_ON(offsetof(struct dio_request, pi_err_tag) !=
		     offsetofend(struct dio_request, pi_err_actual));
	BUILD_BUG_ON(end - off != offsetofend(struct dio_result, pi_err_source));
	if (!user_access_begin((void __user *)u + off, end - off))
		return -EFAULT;
	unsafe_put_user(res->result, &u->result, out_fault);
	unsafe_put_user(res->pi_err_interval, &u->pi_err_interval, out_fault);
	unsafe_put_user(res->pi_err_expected, &u->pi_err_expected, out_fault);
	unsafe_put_user(res->pi_err_actual, &u->pi_err_actual, out_fault);
	unsafe_put_user(res->pi_err_tag, &u->pi_err_tag, out_fault);
	unsafe_put_user(res->pi_err_source, &u->pi_err_source, out_fault);
	user_access_end();
	return 0;

out_fault:
	user_access_end();
	return -EFAULT;
}

/*
 * The size encoded in an ioctl number changes when a struct grows, so the
 * commands are matched on magic, number and direction, never on the size
 * bits; the struct's own size field says which version the caller has.
 * Another direction is another (unknown) command: -ENOTTY.
 */
static bool dio_ioc_is(unsigned int cmd, unsigned int want)
{
	return _IOC_TYPE(cmd) == _IOC_TYPE(want) &&
	       _IOC_NR(cmd) == _IOC_NR(want) &&
	       _IOC_DIR(cmd) == _IOC_DIR(want);
}

/*
 * Read only the size of an output-only struct into @karg, which is
 * otherwise left to the command (dio_get_usize()'s checks and errors).
 */
static int dio_copy_size(void *karg, size_t min_size, const void __user *uarg)
{
	u32 usize;
	int ret;

	ret = dio_get_usize(uarg, min_size, &usize);
	if (ret)
		return ret;
	*(u32 *)karg = usize;
	return 0;
}

/**
 * dio_cmd_run - run the command @cmd names in a table of commands
 * @cmds: the table
 * @nr: its length
 * @df: the calling descriptor, or NULL on the control device
 * @cmd: the ioctl number
 * @uarg: the user's argument struct
 *
 * The one place every command goes through: matched by dio_ioc_is(); a
 * DIO_CMD_MINE command refused to any process but @df's creator; its
 * struct copied in by dio_copy_arg() (only its size for DIO_CMD_OUT_ONLY);
 * and for DIO_CMD_OUT, written back after the command succeeds, as much of
 * it as the caller's size covers.
 *
 * Return: the command's result; -ENOTTY for a command not in @cmds,
 * -EXDEV for a DIO_CMD_MINE one from another process, or the copies'
 * -EFAULT, -EINVAL, -E2BIG.
 */
long dio_cmd_run(const struct dio_cmd *cmds, size_t nr, struct dio_file *df,
		 unsigned int cmd, void __user *uarg)
{
	const struct dio_cmd *c;
	union dio_cmd_arg karg;
	u32 usize;
	long ret;

	for (c = cmds; c < cmds + nr; c++)
		if (dio_ioc_is(cmd, c->cmd))
			break;
	if (c == cmds + nr)
		return -ENOTTY;
	if ((c->flags & DIO_CMD_MINE) && !dio_file_is_mine(df))
		return -EXDEV;
	if (c->flags & DIO_CMD_OUT_ONLY)
		ret = dio_copy_size(&karg, c->min_size, uarg);
	else
		ret = dio_copy_arg(&karg, c->size, c->min_size, uarg);
	if (ret)
		return ret;
	usize = *(u32 *)&karg;
	ret = c->fn(df, &karg, uarg);
	if (ret < 0 || !(c->flags & DIO_CMD_OUT))
		return ret;
	if (copy_to_user(uarg, &karg, min_t(size_t, usize, c->size)))
		return -EFAULT;
	return ret;
}
