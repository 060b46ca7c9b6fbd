// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: the control device /dev/dio_batch, ioctl dispatch for the
 * context descriptors, and module init/exit.  The commands' argument
 * structs are copied in by dio_copy_arg() (uarg.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/uaccess.h>

#include "dio_batch.h"

unsigned int dio_max_inflight = 1024;
module_param_named(max_inflight, dio_max_inflight, uint, 0644);
MODULE_PARM_DESC(max_inflight,
		 "Requests submitted and not yet reported, per descriptor (default 1024)");

unsigned int dio_max_user_pinned_mb = 256;
module_param_named(max_user_pinned_mb, dio_max_user_pinned_mb, uint, 0644);
MODULE_PARM_DESC(max_user_pinned_mb,
		 "MiB of user memory one user may have pinned by I/O in flight, whole pages per pin; 0: no ceiling; CAP_IPC_LOCK is exempt (default 256)");

/*
 * DIO_IOC_FEATURES reads only the size: struct dio_features is the
 * output-only exception of the header's rules (no tail, no reserved field
 * is read), so the probe answers a program of any age.
 */
static long dio_features_ioctl(void __user *arg)
{
	struct dio_features f = {
		.size		= sizeof(f),
		.abi_version	= DIO_BATCH_ABI_VERSION,
		.features	= DIO_FEAT_ALL,
		.init_flags	= DIO_INIT_F_ALL,
		.open_flags	= DIO_OPEN_F_ALL,
		.req_flags	= DIO_REQ_F_ALL,
		.pi_flags	= DIO_PI_F_ALL,
		.opcodes	= BIT(DIO_OP_READ) | BIT(DIO_OP_WRITE) |
				  BIT(DIO_OP_FLUSH),
		.max_batch	= DIO_MAX_BATCH,
		.max_inflight	= READ_ONCE(dio_max_inflight),
		.max_pi_bytes	= DIO_MAX_PI_BYTES,
		.max_user_pinned = (u64)READ_ONCE(dio_max_user_pinned_mb) << 20,
		.max_fixed_bufs	= DIO_MAX_FIXED_BUFS,
		.max_fixed_buf_bytes = DIO_MAX_FIXED_BUF_BYTES,
	};
	u32 usize;

	if (get_user(usize, (u32 __user *)arg))
		return -EFAULT;
	if (usize < DIO_FEATURES_SIZE_VER0)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	if (copy_to_user(arg, &f, min_t(size_t, usize, sizeof(f))))
		return -EFAULT;
	return 0;
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

static long dio_ctl_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	if (dio_ioc_is(cmd, DIO_IOC_FEATURES))
		return dio_features_ioctl(uarg);
	if (dio_ioc_is(cmd, DIO_IOC_INIT))
		return dio_ctx_init_ioctl(uarg);
	return -ENOTTY;
}

/**
 * dio_ctx_ioctl - ioctl entry of a context descriptor
 * @file: the descriptor
 * @cmd: DIO_IOC_*
 * @arg: user pointer to the command's struct
 *
 * Return: the command's result, or -ENOTTY for a command this descriptor
 * does not know.
 */
long dio_ctx_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct dio_file *df = file->private_data;
	void __user *uarg = (void __user *)arg;

	if (dio_ioc_is(cmd, DIO_IOC_SUBMIT))
		return dio_submit_ioctl(df, uarg);
	if (dio_ioc_is(cmd, DIO_IOC_WAIT))
		return dio_wait_ioctl(df, uarg);
	if (dio_ioc_is(cmd, DIO_IOC_COLLECT))
		return dio_collect_ioctl(df, uarg);
	if (dio_ioc_is(cmd, DIO_IOC_OPEN))
		return dio_handle_open_ioctl(df, uarg);
	if (dio_ioc_is(cmd, DIO_IOC_CLOSE))
		return dio_handle_close_ioctl(df, uarg);
	if (dio_ioc_is(cmd, DIO_IOC_QUERY))
		return dio_handle_query_ioctl(df, uarg);
	if (dio_ioc_is(cmd, DIO_IOC_STAT))
		return dio_ctx_stat_ioctl(df, uarg);
	if (dio_ioc_is(cmd, DIO_IOC_REGISTER))
		return dio_fixed_register_ioctl(df, uarg);
	if (dio_ioc_is(cmd, DIO_IOC_UNREGISTER))
		return dio_fixed_unregister_ioctl(df, uarg);
	return -ENOTTY;
}

static const struct file_operations dio_ctl_fops = {
	.owner		= THIS_MODULE,
	.unlocked_ioctl	= dio_ctl_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice dio_miscdev = {
	.minor		= MISC_DYNAMIC_MINOR,
	.name		= DIO_BATCH_DEVNAME,
	.fops		= &dio_ctl_fops,
	.mode		= 0660,
};

static int __init dio_batch_init(void)
{
	int ret;

	dio_abi_check();
	ret = dio_io_module_init();
	if (ret)
		return ret;
	ret = dio_pi_module_init();
	if (ret)
		goto out_io_exit;
	ret = dio_ctx_module_init();
	if (ret)
		goto out_pi_exit;
	ret = misc_register(&dio_miscdev);
	if (ret)
		goto out_ctx_exit;
	pr_info("ABI %u loaded\n", DIO_BATCH_ABI_VERSION);
	return 0;

out_ctx_exit:
	dio_ctx_module_exit();
out_pi_exit:
	dio_pi_module_exit();
out_io_exit:
	dio_io_module_exit();
	return ret;
}

static void __exit dio_batch_exit(void)
{
	misc_deregister(&dio_miscdev);
	dio_ctx_module_exit();
	dio_pi_module_exit();
	dio_io_module_exit();
}

module_init(dio_batch_init);
module_exit(dio_batch_exit);

MODULE_DESCRIPTION("Batched direct I/O with end-to-end protection information");
MODULE_AUTHOR("dio_batch developers");
MODULE_LICENSE("GPL");
/* The package's version (module/Kbuild says where it comes from). */
MODULE_VERSION(DIO_BATCH_VERSION);
