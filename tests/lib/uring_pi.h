/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Upstream's user PI through io_uring (Linux 6.14): IORING_RW_ATTR_FLAG_PI
 * and struct io_uring_attr_pi, IORING_FEAT_RW_ATTR (a kernel has it), the
 * IO_INTEGRITY_CHK_* bits, and the device's metadata layout
 * (FS_IOC_GETLBMD_CAP, 6.17), as 7.3's <linux/io_uring.h> and
 * <linux/fs.h> define them: the build host (Debian 12, liburing 2.3) has
 * none of it.  In the SQE, attr_ptr and attr_type_mask are the two words
 * liburing 2.3 calls addr3 and __pad2[0] (checked here).  For
 * bench/io_bench.c's io_uring+pi engine and tests/guest/t_peer.c.
 * Include after <liburing.h> and <linux/fs.h>.
 */
#ifndef DIO_URING_PI_H
#define DIO_URING_PI_H

#include <stddef.h>

#ifndef IORING_RW_ATTR_FLAG_PI
#define IORING_RW_ATTR_FLAG_PI	(1U << 0)
struct io_uring_attr_pi {
	__u16	flags;
	__u16	app_tag;
	__u32	len;
	__u64	addr;
	__u64	seed;
	__u64	rsvd;
};
#endif
#ifndef IORING_FEAT_RW_ATTR
#define IORING_FEAT_RW_ATTR	(1U << 16)
#endif
#ifndef IO_INTEGRITY_CHK_GUARD
#define IO_INTEGRITY_CHK_GUARD	(1U << 0)
#define IO_INTEGRITY_CHK_REFTAG	(1U << 1)
#define IO_INTEGRITY_CHK_APPTAG	(1U << 2)
#endif
#ifndef FS_IOC_GETLBMD_CAP
#define LBMD_PI_CAP_INTEGRITY	(1 << 0)
#define LBMD_PI_CAP_REFTAG	(1 << 1)
struct logical_block_metadata_cap {
	__u32	lbmd_flags;
	__u16	lbmd_interval;
	__u8	lbmd_size;
	__u8	lbmd_opaque_size;
	__u8	lbmd_opaque_offset;
	__u8	lbmd_pi_size;
	__u8	lbmd_pi_offset;
	__u8	lbmd_guard_tag_type;
	__u8	lbmd_app_tag_size;
	__u8	lbmd_ref_tag_size;
	__u8	lbmd_storage_tag_size;
	__u8	pad;
};
#define FS_IOC_GETLBMD_CAP	_IOWR(0x15, 2, struct logical_block_metadata_cap)
#endif
_Static_assert(sizeof(struct io_uring_attr_pi) == 32, "io_uring_attr_pi");
_Static_assert(sizeof(struct logical_block_metadata_cap) == 16, "lbmd_cap");
_Static_assert(offsetof(struct io_uring_sqe, addr3) == 48 &&
	       offsetof(struct io_uring_sqe, __pad2) == 56,
	       "attr_ptr and attr_type_mask are the SQE's words at 48 and 56");

#endif
