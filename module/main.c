// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: the module's parameters, the control device /dev/dio_batch
 * and its table of commands (dio_cmd_run() in uarg.c runs them; the
 * descriptor's table is file.c's), debugfs, and module init and exit.
 *
 * Which files call which others' functions (tests/module-graph.sh checks
 * that this list is the sources' graph):
 *
 *   main.c:      abi_check.c uarg.c context.c file.c handle.c io.c
 *   file.c:      uarg.c context.c handle.c fixed.c io.c submit.c wait.c
 *                complete.c
 *   submit.c:    io.c complete.c pagecache.c uarg.c handle.c fixed.c
 *                integrity.c counters.c user.c
 *   wait.c:      io.c uarg.c integrity.c
 *   io.c:        file.c handle.c fixed.c integrity.c user.c
 *   complete.c:  pagecache.c integrity.c counters.c user.c
 *   handle.c:    context.c counters.c
 *   integrity.c: uarg.c
 *   abi_check.c: none
 *   context.c:   none
 *   counters.c:  none
 *   fixed.c:     none
 *   pagecache.c: none
 *   trace.c:     none
 *   uarg.c:      none
 *   user.c:      none
 *
 * The one call back up is io.c's dio_file_put(): a request holds its
 * descriptor until it is freed, and the last one may free it, while
 * file.c reaps the requests of a closed descriptor and runs the commands
 * that make them.  No other loop.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/compat.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

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
 * DIO_IOC_FEATURES reads only the size (DIO_CMD_OUT_ONLY): struct
 * dio_features is the output-only exception of the header's rules (no
 * tail, no reserved field is read), so the probe answers a program of any
 * age.
 */
static long dio_features_ioctl(struct dio_file *df, void *arg,
			       void __user *uarg)
{
	struct dio_features *f = arg;

	*f = (struct dio_features){
		.size		= sizeof(*f),
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
	return 0;
}

/* The control device's commands. */
static const struct dio_cmd dio_ctl_cmds[] = {
	DIO_CMD(DIO_IOC_FEATURES, features, DIO_FEATURES_SIZE_VER0,
		DIO_CMD_OUT_ONLY | DIO_CMD_OUT, dio_features_ioctl),
	DIO_CMD(DIO_IOC_INIT, init, DIO_INIT_SIZE_VER0, 0,
		dio_file_init_ioctl),
};

static long dio_ctl_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	return dio_cmd_run(dio_ctl_cmds, ARRAY_SIZE(dio_ctl_cmds), NULL, cmd,
			   (void __user *)arg);
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

static struct dentry *dio_debugfs;

static int dio_locate_reads_get(void *data, u64 *val)
{
	*val = atomic64_read(&dio_locate_reads);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(dio_locate_reads_fops, dio_locate_reads_get, NULL,
			 "%llu\n");

/*
 * debugfs, for the tests: dio_batch/locate_reads, the re-reads made so far
 * to find refused intervals (integrity.c), and dio_batch/kept_kreqs, the
 * request structs descriptors keep for reuse (io.c; the tests count live
 * requests as the dio_kreq slab's objects less these).  Optional: the
 * module works without it, so its failures are not ours.
 */
static void dio_debugfs_init(void)
{
	dio_debugfs = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file_unsafe("locate_reads", 0444, dio_debugfs, NULL,
				   &dio_locate_reads_fops);
	debugfs_create_atomic_t("kept_kreqs", 0444, dio_debugfs,
				&dio_kreqs_kept);
}

/* The module's parts, set up in this order and torn down in the reverse. */
static int __init dio_batch_init(void)
{
	int ret;

	dio_abi_check();
	ret = dio_io_module_init();
	if (ret)
		return ret;
	ret = dio_ctx_module_init();
	if (ret)
		goto out_io_exit;
	ret = dio_file_module_init();
	if (ret)
		goto out_ctx_exit;
	ret = dio_handle_module_init();
	if (ret)
		goto out_file_exit;
	ret = misc_register(&dio_miscdev);
	if (ret)
		goto out_handle_exit;
	dio_debugfs_init();
	pr_info("ABI %u loaded\n", DIO_BATCH_ABI_VERSION);
	return 0;

out_handle_exit:
	dio_handle_module_exit();
out_file_exit:
	dio_file_module_exit();
out_ctx_exit:
	dio_ctx_module_exit();
out_io_exit:
	dio_io_module_exit();
	return ret;
}

static void __exit dio_batch_exit(void)
{
	debugfs_remove_recursive(dio_debugfs);
	misc_deregister(&dio_miscdev);
	dio_handle_module_exit();
	dio_file_module_exit();
	dio_ctx_module_exit();
	dio_io_module_exit();
}

module_init(dio_batch_init);
module_exit(dio_batch_exit);

MODULE_DESCRIPTION("Batched direct I/O with end-to-end protection information");
MODULE_AUTHOR("dio_batch developers");
MODULE_LICENSE("GPL");
/* The package's version (module/Kbuild says where it comes from). */
MODULE_VERSION(DIO_BATCH_VERSION);
