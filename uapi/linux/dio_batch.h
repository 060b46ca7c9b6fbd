/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * dio_batch: batched direct I/O with end-to-end protection information.
 *
 * The one ABI header, shared by the kernel module and user space.
 *
 * Two kinds of descriptor carry these ioctls:
 *
 *  - the control device /dev/dio_batch: DIO_IOC_FEATURES and DIO_IOC_INIT;
 *  - a context descriptor, returned by DIO_IOC_INIT: DIO_IOC_OPEN,
 *    DIO_IOC_CLOSE, DIO_IOC_QUERY, DIO_IOC_STAT, DIO_IOC_SUBMIT,
 *    DIO_IOC_WAIT, DIO_IOC_COLLECT, DIO_IOC_REGISTER,
 *    DIO_IOC_UNREGISTER and DIO_IOC_COUNTERS.  It is pollable: readable
 *    while it holds completions that were not yet reported by WAIT or
 *    COLLECT.
 *
 * Rules every argument struct follows.  Each is stated here once, with its
 * exceptions; tests/guest/t_abi.c checks every one for every command, from
 * 64- and 32-bit programs.
 *
 *  - It starts with __u32 size, set by the caller to sizeof() of the struct
 *    it was compiled with (struct dio_fixed_buf, an element of
 *    DIO_IOC_REGISTER's array, has none: its layout never changes).  The
 *    rules hold for struct dio_request too, which SUBMIT reads for each
 *    request: a broken one is SUBMIT's error when the request is first.
 *  - Sizes: below the struct's first published size (its *_SIZE_VER0) is
 *    -EINVAL.  A smaller (older) struct is accepted and its missing tail
 *    treated as zero.  A larger (newer) one is accepted when the tail the
 *    kernel does not know is all zero; a non-zero byte in that tail is
 *    -E2BIG.  A size above the page size (4096 on x86) is -E2BIG whatever
 *    the bytes, as for clone3() and openat2().  The kernel never writes
 *    past its own struct: a larger struct's tail is left as it was.
 *  - A reserved or padding field that gets a meaning keeps its place and
 *    size (the struct's size does not change), and a DIO_FEAT_* bit and
 *    the ABI version say which modules have it: an older module refuses a
 *    non-zero input there (-EINVAL, the next rule) and leaves an output
 *    there zero, so old programs, which keep it zero, see no difference.
 *  - Only fixed-width types; user pointers are __u64; padding is explicit.
 *    32- and 64-bit programs share one layout (32-bit programs on a 64-bit
 *    kernel go through compat_ioctl, under the same rules).
 *  - A non-zero byte in a reserved or padding field is -EINVAL, and so is
 *    a flag bit outside the field's *_F_ALL mask (a flags field documented
 *    as "none defined yet" takes no bit).
 *  - Fields documented "out:" are written, never read: what the caller left
 *    there does not matter.  Exception: DIO_IOC_OPEN's @handle must be zero
 *    (-EINVAL), so that a refused OPEN never changes it.
 *  - Exception to the tail and reserved rules: struct dio_features, the
 *    one output-only struct.  DIO_IOC_FEATURES, the probe a program makes
 *    first whatever the age of its header, reads only @size (-EINVAL below
 *    DIO_FEATURES_SIZE_VER0, -E2BIG above the page size): its reserved
 *    fields and a larger struct's tail are not read, so neither -EINVAL
 *    nor -E2BIG comes from them.  struct dio_query, struct dio_stat and
 *    struct dio_counters, mostly "out:", follow every rule.
 *
 * Rules for ioctl numbers:
 *
 *  - Every command is _IOWR(DIO_BATCH_IOC_MAGIC, number, its struct).  The
 *    module matches a command on magic, number and direction; the size
 *    bits are ignored (the struct's @size says which version the caller
 *    has), so a program built with a larger struct issues the same command
 *    with its own size in them, and a binding may put any size there.
 *  - The magic and number of a command with another direction (_IO, _IOR
 *    or _IOW) is not that command: -ENOTTY.
 *  - Each descriptor knows its own commands only: any other number, the
 *    other descriptor's commands included, is -ENOTTY.
 *
 * The magic 0xDB shares its number with drivers/char/mwave (00-0F, removed
 * from Linux in 2023); this header uses 0x40-0x5F only.
 */
#ifndef _UAPI_LINUX_DIO_BATCH_H
#define _UAPI_LINUX_DIO_BATCH_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define DIO_BATCH_DEVNAME	"dio_batch"
#define DIO_BATCH_IOC_MAGIC	0xDB

/*
 * ABI version reported by DIO_IOC_FEATURES; bumped when features are added
 * or documented behaviour changes.
 *
 *  1  the first interface.
 *  2  the trust boundary for users who are not root: context keys live in
 *     the caller's IPC namespace; joining another user's context needs
 *     DIO_FOREIGN; DIO_IOC_STAT; a descriptor's I/O belongs to the memory
 *     of the process that created it (SUBMIT, WAIT and COLLECT from another
 *     process are -EXDEV); writes obey the device's read-only state
 *     (-EROFS at OPEN, -EPERM at SUBMIT), an active swap device (-ETXTBSY)
 *     and the LSM; a handle's access follows the descriptors that hold it
 *     open; DIO_PI_GEN_APPTAG refuses the escape app tag 0xffff on type 1;
 *     pinned pages are released when the I/O completes and charged to a
 *     per-user ceiling (max_user_pinned); a PI failure whose interval the
 *     module cannot name reports DIO_PI_INTERVAL_UNKNOWN; pi_err_sector is
 *     pi_err_interval; pad3 must be zero.
 *  3  registered buffers: DIO_IOC_REGISTER, DIO_IOC_UNREGISTER,
 *     DIO_REQ_FIXED and dio_request.buf_index (was pad1);
 *     dio_features.max_fixed_bufs and max_fixed_buf_bytes (were reserved).
 *  4  dio_query.part_start_bytes (was reserved[0]): where a partition
 *     starts on its disk, from which reference tags count.
 *  5  DIO_IOC_COUNTERS: a handle's requests, bytes, errors, PI failures
 *     and refusals, and its device's since the module was loaded.
 */
#define DIO_BATCH_ABI_VERSION	5

/* Features (struct dio_features.features). */
#define DIO_FEAT_CONTEXTS	(1ULL << 0)	/* INIT/OPEN/CLOSE/QUERY */
#define DIO_FEAT_BATCH_IO	(1ULL << 1)	/* SUBMIT/WAIT/COLLECT, poll */
#define DIO_FEAT_PI		(1ULL << 2)	/* PI buffers in dio_request */
#define DIO_FEAT_PI_REPORT	(1ULL << 3)	/* exact PI failure reports */
#define DIO_FEAT_STAT		(1ULL << 4)	/* DIO_IOC_STAT, DIO_FOREIGN */
#define DIO_FEAT_PIN_LIMIT	(1ULL << 5)	/* per-user pinned-bytes ceiling */
#define DIO_FEAT_FIXED_BUFS	(1ULL << 6)	/* REGISTER, DIO_REQ_FIXED */
#define DIO_FEAT_PART_START	(1ULL << 7)	/* dio_query.part_start_bytes */
#define DIO_FEAT_COUNTERS	(1ULL << 8)	/* DIO_IOC_COUNTERS */
#define DIO_FEAT_ALL		(DIO_FEAT_CONTEXTS | DIO_FEAT_BATCH_IO | \
				 DIO_FEAT_PI | DIO_FEAT_PI_REPORT | \
				 DIO_FEAT_STAT | DIO_FEAT_PIN_LIMIT | \
				 DIO_FEAT_FIXED_BUFS | DIO_FEAT_PART_START | \
				 DIO_FEAT_COUNTERS)

/**
 * struct dio_features - DIO_IOC_FEATURES: what this module supports
 * @size:	in: sizeof(struct dio_features); out: the kernel's size
 * @abi_version: out: DIO_BATCH_ABI_VERSION of the running module
 * @features:	out: DIO_FEAT_* implemented by the running module
 * @init_flags:	out: DIO_INIT_F_ALL of the running module
 * @open_flags:	out: DIO_OPEN_F_ALL of the running module
 * @req_flags:	out: DIO_REQ_F_ALL of the running module
 * @pi_flags:	out: DIO_PI_F_ALL of the running module
 * @opcodes:	out: bit (1 << DIO_OP_*) for each opcode implemented
 * @max_batch:	out: most requests one SUBMIT, WAIT or COLLECT takes
 * @max_inflight: out: most requests in flight per context descriptor
 * @max_pi_bytes: out: largest PI buffer one request may carry
 * @max_user_pinned: out: most bytes of user memory one user may have
 *		pinned by I/O in flight, counted in whole pages per page pinned
 *		(a page pinned twice counts twice); 0 means no ceiling.  Callers
 *		with CAP_IPC_LOCK are not counted.  Over it, SUBMIT fails with
 *		-EAGAIN while the user has pinned I/O in flight, -ENOMEM when
 *		the request alone does not fit.  (ABI 2)
 * @max_fixed_bufs: out: most buffers one DIO_IOC_REGISTER takes (ABI 3)
 * @reserved0:	out: zero
 * @max_fixed_buf_bytes: out: largest registered buffer, bytes (ABI 3)
 * @reserved:	out: zero
 *
 * The output-only struct of the rules at the top: only @size is read.  The
 * kernel writes min(@size, its size) bytes.
 */
struct dio_features {
	__u32	size;
	__u32	abi_version;
	__u64	features;
	__u32	init_flags;
	__u32	open_flags;
	__u32	req_flags;
	__u32	pi_flags;
	__u32	opcodes;
	__u32	max_batch;
	__u32	max_inflight;
	__u32	max_pi_bytes;
	__u64	max_user_pinned;
	__u32	max_fixed_bufs;
	__u32	reserved0;
	__u64	max_fixed_buf_bytes;
	__u64	reserved[1];
};

#define DIO_FEATURES_SIZE_VER0	80

/* DIO_IOC_INIT flags.  Without DIO_CREAT an unknown key is -ENOENT. */
#define DIO_CREAT	(1U << 0)	/* create the context if the key is new */
#define DIO_EXCL	(1U << 1)	/* with DIO_CREAT: -EEXIST if it exists */
#define DIO_PRIVATE	(1U << 2)	/* new context no key reaches (key 0) */
#define DIO_FOREIGN	(1U << 3)	/* may join a context another user owns */
#define DIO_INIT_F_ALL	(DIO_CREAT | DIO_EXCL | DIO_PRIVATE | DIO_FOREIGN)

/**
 * struct dio_init - DIO_IOC_INIT: get a descriptor for a context
 * @size:	sizeof(struct dio_init)
 * @flags:	DIO_CREAT, DIO_EXCL, DIO_PRIVATE, DIO_FOREIGN
 * @key:	context name; keys live in the caller's IPC namespace, as
 *		System V IPC keys do.  Must be 0 with DIO_PRIVATE, and non-zero
 *		otherwise.
 * @mode:	permission bits (0777 mask) of a context this call creates,
 *		checked like System V IPC (owner, group, other; read and write
 *		are both needed to join; CAP_IPC_OWNER in the IPC namespace's
 *		user namespace overrides).  0 means 0600.  Ignored on join.
 * @reserved:	zero
 *
 * Returns a new close-on-exec descriptor, or -EINVAL (bad flags, mode,
 * key or reserved fields), -ENOENT (an unknown key without DIO_CREAT),
 * -EEXIST (a known key with DIO_EXCL), -EACCES (the mode denies joining,
 * or another user owns the context and DIO_FOREIGN was not given),
 * -ENOMEM, -EMFILE.  Every descriptor is its own completion queue; the
 * handle table is shared by the context.  A context owned by another user
 * (its creator's effective uid) is joined only with DIO_FOREIGN, whatever
 * its mode: without it such a key is -EACCES, so a key squatted by
 * someone else is never joined by mistake.  DIO_IOC_STAT
 * tells who owns what was joined.  DIO_FOREIGN goes with neither
 * DIO_PRIVATE nor DIO_EXCL (-EINVAL).
 *
 * The descriptor's I/O belongs to the process that created it (its memory,
 * shared by its threads), as a Linux AIO context does: SUBMIT, WAIT and
 * COLLECT from any other process (a fork()ed child, a receiver of the
 * descriptor through SCM_RIGHTS) are -EXDEV, so results are only ever
 * written into the memory of the process that submitted.  Requests in
 * flight when that process exits complete, release their pages and are
 * freed with the descriptor; nobody reports them.  OPEN, CLOSE, QUERY and
 * STAT work from any process that has the descriptor.
 */
struct dio_init {
	__u32	size;
	__u32	flags;
	__u64	key;
	__u32	mode;
	__u32	reserved0;
	__u64	reserved[2];
};

#define DIO_INIT_SIZE_VER0	40

/* DIO_IOC_OPEN flags. */
#define DIO_OPEN_NOCLAIM	(1U << 0)	/* do not claim the device */
#define DIO_OPEN_F_ALL		(DIO_OPEN_NOCLAIM)

/**
 * struct dio_open - DIO_IOC_OPEN: turn a block device descriptor into a handle
 * @size:	sizeof(struct dio_open)
 * @flags:	DIO_OPEN_NOCLAIM
 * @fd:		an open block device; its access mode becomes the handle's
 * @handle:	out: the handle (also the ioctl's return value); zero on
 *		input (-EINVAL), as the rules at the top say
 * @reserved:	zero
 *
 * The device is claimed exclusively with the context as holder unless
 * DIO_OPEN_NOCLAIM is given.  Opening a device the context already has
 * returns the same handle and takes one more reference for the caller.
 *
 * Access: each descriptor that holds a handle open contributes the access
 * of the block device descriptors it opened it through (the union, for as
 * long as it holds a reference); the handle reads when one of them may
 * read and writes when one of them may write.  When the last writable
 * holder closes the handle or exits, the handle stops accepting writes.
 * A writable @fd on a read-only device is -EROFS, and on an active swap
 * device (with DIO_OPEN_NOCLAIM: swap claims its device) -ETXTBSY.
 *
 * Returns the handle, or -EBADF (@fd is not an open descriptor), -ENOTBLK
 * (not a block device), -EBUSY (claimed by someone else: mounted, held by
 * md or device-mapper, swap or another context), -EROFS, -ETXTBSY (above),
 * -EINVAL (bad flags or reserved fields, or DIO_OPEN_NOCLAIM differing
 * from the context's existing handle of the device), -EMFILE (65536 OPENs
 * of one handle by one descriptor not yet closed), -ENOMEM, -EFAULT (the
 * struct could not be read or written: then no reference was taken and
 * the handle is as it was).
 */
struct dio_open {
	__u32	size;
	__u32	flags;
	__s32	fd;
	__u32	handle;
	__u64	reserved[2];
};

#define DIO_OPEN_SIZE_VER0	32

/**
 * struct dio_close - DIO_IOC_CLOSE: drop the caller's reference to a handle
 * @size:	sizeof(struct dio_close)
 * @handle:	a handle this descriptor opened
 * @reserved:	zero
 *
 * When this was the descriptor's last OPEN of the handle, the access it
 * brought goes with it; when it was the handle's last holder, the handle
 * is revoked.  Returns 0, or -EBADF (this descriptor holds no reference
 * to the handle), -EINVAL (non-zero @reserved), -EFAULT.
 */
struct dio_close {
	__u32	size;
	__u32	handle;
	__u64	reserved;
};

#define DIO_CLOSE_SIZE_VER0	16

/* Guard tag types: the values of upstream's LBMD_PI_CSUM_* (Linux 6.17). */
#define DIO_GUARD_NONE		0
#define DIO_GUARD_IP		1	/* IP checksum, 16 bit */
#define DIO_GUARD_CRC16		2	/* CRC16 T10-DIF, poly 0x8BB7 */
#define DIO_GUARD_CRC64		4	/* CRC64 NVMe (Rocksoft) */

/* Query capability flags (struct dio_query.pi_caps). */
#define DIO_PI_CAP_INTEGRITY	(1U << 0)	/* device stores PI */
#define DIO_PI_CAP_REFTAG	(1U << 1)	/* ref tag is checked (type 1/2) */
#define DIO_PI_CAP_KGENERATE	(1U << 2)	/* block layer generates on write */
#define DIO_PI_CAP_KVERIFY	(1U << 3)	/* block layer verifies on read */
#define DIO_PI_CAP_DEVICE	(1U << 4)	/* device capable (DIX, not DIF only) */
#define DIO_PI_CAP_NOCHECK	(1U << 5)	/* DIO_PI_NOCHECK honoured (SCSI) */

/**
 * struct dio_query - DIO_IOC_QUERY: what an application needs before I/O
 * @size:	sizeof(struct dio_query)
 * @handle:	in: the handle
 * @logical_block_size: bytes
 * @physical_block_size: bytes
 * @dma_alignment: required alignment of buffers and iovec bases, bytes
 * @max_segments: most data segments in one bio
 * @capacity:	device size in bytes
 * @max_io_bytes: largest data length one request may have
 * @max_segment_size: largest data segment, bytes
 * @pi_caps:	DIO_PI_CAP_*
 * @pi_interval: protection interval in bytes (0: no PI)
 * @pi_tuple_size: bytes of the PI tuple (8, or 16 for CRC64; 0: no PI)
 * @pi_guard_type: DIO_GUARD_*
 * @pi_type:	T10 protection type 1, 2 or 3 (0: no PI).  The module
 *		reports type 2 devices as 1 (the kernel's profiles treat them
 *		alike); libdioctl's sys_dio_query() reports 2 where it can
 *		learn it (SCSI: sysfs; NVMe: Identify Namespace)
 * @pi_app_tag_size: bytes of application tag in a tuple (2)
 * @pi_ref_tag_size: bytes of reference tag in a tuple (4, or 6 for CRC64)
 * @pi_offset:	offset of the PI tuple in the metadata
 * @pi_storage_tag_size: bytes of storage tag (0 on these kernels)
 * @pi_md_size:	metadata bytes per interval: what a PI buffer holds per
 *		interval (equal to @pi_tuple_size unless the device has more
 *		metadata than PI)
 * @pi_opaque_size: metadata bytes per interval that are not PI (upstream's
 *		lbmd_opaque_size; e.g. 8 on an NVMe format with 16 bytes of
 *		metadata and 8 of PI)
 * @pi_opaque_offset: offset of those bytes in the metadata
 *		(lbmd_opaque_offset)
 * @profile:	the kernel's integrity profile name, NUL-terminated
 *		("T10-DIF-TYPE1-CRC", "EXT-DIF-TYPE1-CRC64", or "" without PI)
 * @dev_major:	the handle's block device, as stat(2)'s st_rdev has it
 * @dev_minor:	(its sysfs entry is /sys/dev/block/MAJOR:MINOR)
 * @part_start_bytes: where the handle's device starts on its whole disk,
 *		in bytes: a partition's offset (sysfs's "start", which counts
 *		512-byte sectors, times 512); 0 for a whole disk, and for a
 *		stacked device (device-mapper, md), whose I/O the kernel remaps
 *		below it.  Reference tags and pi_err_interval count protection
 *		intervals from the start of the whole disk, so the first
 *		reference tag of I/O at byte @offset of the handle is
 *		(@part_start_bytes + @offset) / @pi_interval (libdioctl:
 *		dio_pi_seed()).  Not read, as the other outputs.  Was
 *		reserved[0] before ABI 4: a module without DIO_FEAT_PART_START
 *		leaves it zero, also for a partition.  (ABI 4)
 * @reserved:	zero
 *
 * @size and @handle are read, and the reserved fields must be zero; the
 * rest is output.  Returns 0, or -EBADF (a handle that is not live in the
 * context), -EINVAL (non-zero reserved fields).
 */
struct dio_query {
	__u32	size;
	__u32	handle;
	__u32	logical_block_size;
	__u32	physical_block_size;
	__u32	dma_alignment;
	__u32	max_segments;
	__u64	capacity;
	__u32	max_io_bytes;
	__u32	max_segment_size;
	__u32	pi_caps;
	__u16	pi_interval;
	__u8	pi_tuple_size;
	__u8	pi_guard_type;
	__u8	pi_type;
	__u8	pi_app_tag_size;
	__u8	pi_ref_tag_size;
	__u8	pi_offset;
	__u8	pi_storage_tag_size;
	__u8	pi_md_size;
	__u8	pi_opaque_size;
	__u8	pi_opaque_offset;
	char	profile[32];
	__u32	dev_major;
	__u32	dev_minor;
	__u64	part_start_bytes;
	__u64	reserved[2];
};

#define DIO_QUERY_SIZE_VER0	120

/* struct dio_stat.flags */
#define DIO_STAT_PRIVATE	(1U << 0)	/* DIO_PRIVATE: no key reaches it */

/**
 * struct dio_stat - DIO_IOC_STAT: who owns a context, as IPC_STAT tells
 * @size:	sizeof(struct dio_stat)
 * @flags:	out: DIO_STAT_*
 * @key:	out: the key (0 for a private context)
 * @uid:	out: owner's uid, in the caller's user namespace (the overflow
 *		uid when it has no mapping there)
 * @gid:	out: owner's group
 * @cuid:	out: creator's uid
 * @cgid:	out: creator's gid
 * @mode:	out: permission bits
 * @cpid:	out: creator's process id in the caller's pid namespace (0
 *		when it is not visible there)
 * @nr_descriptors: out: descriptors of the context, in every process
 * @nr_handles:	out: live handles
 * @reserved:	zero
 *
 * Only @size and the reserved fields (which must be zero) are read, and
 * the size rules apply in full; the kernel writes min(@size, its size)
 * bytes.  Returns 0, or -EINVAL (non-zero reserved fields).  (ABI 2)
 */
struct dio_stat {
	__u32	size;
	__u32	flags;
	__u64	key;
	__u32	uid;
	__u32	gid;
	__u32	cuid;
	__u32	cgid;
	__u32	mode;
	__s32	cpid;
	__u32	nr_descriptors;
	__u32	nr_handles;
	__u64	reserved[4];
};

#define DIO_STAT_SIZE_VER0	80

/*
 * Request opcodes.  Planned, not yet implemented: DIO_OP_WRITE_ZEROES,
 * DIO_OP_DISCARD.  DIO_IOC_FEATURES.opcodes tells which ones exist.
 */
#define DIO_OP_READ		0
#define DIO_OP_WRITE		1
#define DIO_OP_FLUSH		2
#define DIO_OP_LAST		DIO_OP_FLUSH

/* Request flags (struct dio_request.flags). */
#define DIO_REQ_FUA		(1U << 0)	/* write: forced unit access */
/* buf is an array of len struct iovec (the calling program's layout) */
#define DIO_REQ_IOVEC		(1U << 1)
#define DIO_REQ_PI		(1U << 2)	/* pi_buf/pi_len carry PI */
/* buf lies in registered buffer buf_index (DIO_IOC_REGISTER); ABI 3 */
#define DIO_REQ_FIXED		(1U << 3)
#define DIO_REQ_F_ALL		(DIO_REQ_FUA | DIO_REQ_IOVEC | DIO_REQ_PI | \
				 DIO_REQ_FIXED)

/*
 * PI control (struct dio_request.pi_flags).  The CHK bits are upstream's
 * IO_INTEGRITY_CHK_* (Linux 6.14) with the same values.
 */
#define DIO_PI_CHK_GUARD	(1U << 0)	/* check the guard tag */
#define DIO_PI_CHK_REFTAG	(1U << 1)	/* check the reference tag */
#define DIO_PI_CHK_APPTAG	(1U << 2)	/* check app_tag under app_tag_mask */
/* write: verify the caller's PI before submitting it */
#define DIO_PI_VERIFY_USER	(1U << 3)
/* write without a PI buffer: put app_tag in every tuple */
#define DIO_PI_GEN_APPTAG	(1U << 4)
/* read: no HBA or disk checking (a raw read of a bad block) */
#define DIO_PI_NOCHECK		(1U << 5)
#define DIO_PI_F_ALL		(DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG | \
				 DIO_PI_CHK_APPTAG | DIO_PI_VERIFY_USER | \
				 DIO_PI_GEN_APPTAG | DIO_PI_NOCHECK)

/**
 * define DIO_PI_CHK_ALL - every tag a check covers
 *
 * DIO_PI_CHK_GUARD, DIO_PI_CHK_REFTAG and DIO_PI_CHK_APPTAG: every check
 * struct dio_request.pi_flags can ask for, and every bit libdioctl's
 * dio_pi_verify() accepts in its chk_flags.
 */
#define DIO_PI_CHK_ALL		(DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG | \
				 DIO_PI_CHK_APPTAG)

/**
 * define DIO_PI_APP_ESCAPE - the app tag that turns a tuple's checks off
 *
 * The kernel's T10_PI_APP_ESCAPE: a tuple with this app tag is checked by
 * neither the kernel, nor the module, nor libdioctl's dio_pi_verify(), on
 * type 1 (and 2) whatever its ref tag, on type 3 when its ref tag is all
 * ones too.  DIO_PI_GEN_APPTAG with it on a type 1 device is -EINVAL.
 */
#define DIO_PI_APP_ESCAPE	0xffff

/* Which tag failed (struct dio_request.pi_err_tag). */
#define DIO_PI_TAG_NONE		0
#define DIO_PI_TAG_GUARD	1
#define DIO_PI_TAG_APP		2
#define DIO_PI_TAG_REF		3

/*
 * pi_err_interval when the device refused the request and the module could
 * not find which interval (pi_err_tag is then DIO_PI_TAG_NONE).
 */
#define DIO_PI_INTERVAL_UNKNOWN	(~0ULL)

/* Who found it (struct dio_request.pi_err_source). */
#define DIO_PI_SRC_NONE		0
#define DIO_PI_SRC_USER		1	/* DIO_PI_VERIFY_USER before submission */
#define DIO_PI_SRC_MODULE	2	/* this module verified the PI it read */
#define DIO_PI_SRC_DEVICE	3	/* device or block layer refused it */

/**
 * struct dio_request - one I/O, in the application's memory
 * @size:	sizeof(struct dio_request)
 * @opcode:	DIO_OP_*
 * @pad0:	zero
 * @flags:	DIO_REQ_*
 * @handle:	the device, from DIO_IOC_OPEN
 * @buf_index:	with DIO_REQ_FIXED: the registered buffer @buf lies in;
 *		zero otherwise.  (ABI 3; the same field as the old @pad1)
 * @buf:	data buffer, or iovec array with DIO_REQ_IOVEC
 * @len:	data bytes, or iovec count with DIO_REQ_IOVEC
 * @offset:	device offset in bytes
 * @cookie:	the caller's, returned untouched
 * @pi_buf:	with DIO_REQ_PI: the metadata, pi_md_size bytes per protection
 *		interval of the data, holding the PI tuple in the device's
 *		format at pi_offset
 * @pi_len:	bytes at @pi_buf: exactly (data bytes / interval) * pi_md_size
 * @pi_flags:	DIO_PI_*
 * @app_tag:	application tag to generate or to check
 * @app_tag_mask: bits of @app_tag that DIO_PI_CHK_APPTAG compares
 * @pad2:	zero
 * @result:	out: bytes transferred, or -errno (-EILSEQ: PI failure)
 * @pi_err_interval: out: after -EILSEQ, the first failing protection
 *		interval, counted in intervals from the start of the whole
 *		device; DIO_PI_INTERVAL_UNKNOWN when it could not be found
 * @pi_err_expected: out: the tag value that was expected
 * @pi_err_actual: out: the tag value that was found
 * @pi_err_tag:	out: DIO_PI_TAG_*
 * @pi_err_source: out: DIO_PI_SRC_*
 * @pad3:	zero
 * @reserved:	zero
 *
 * The kernel reads the request at DIO_IOC_SUBMIT and writes @result and the
 * pi_err_* fields back at DIO_IOC_WAIT or DIO_IOC_COLLECT, which only the
 * submitting process can call on its descriptor.  It never stores a kernel
 * pointer in it.  The pages of @buf (and the iovecs') are pinned from
 * SUBMIT until the I/O completes, not until it is reported; a read's PI
 * verification runs at completion too.
 *
 * With DIO_REQ_FIXED, [@buf, @buf + @len) must lie within registered
 * buffer @buf_index of the descriptor (-EFAULT otherwise; an index with no
 * buffer is -EINVAL) and is not pinned again: the registration's pages
 * serve it and are held until the request is reported.  DIO_REQ_FIXED
 * goes with neither DIO_REQ_IOVEC nor DIO_OP_FLUSH (-EINVAL); the PI
 * buffer, if any, is an ordinary one.
 *
 * Every request passes the checks of the kernel's own read and write
 * paths: the LSM's file permission for the access (through the block
 * device descriptor the handle was opened with), and for writes a device
 * that became read-only (-EPERM) or an active swap device (-ETXTBSY).
 * Completed reads and writes generate the fsnotify events pread and
 * pwrite would (IN_ACCESS, IN_MODIFY on the device node).
 *
 * PI (see also docs/pi.md): reference tags count protection intervals from
 * the start of the whole disk.  A write with DIO_REQ_PI sends the caller's
 * PI; DIO_PI_VERIFY_USER checks it first (against DIO_PI_CHK_*, or guard
 * and ref tag when none is given) and fails SUBMIT with -EILSEQ, the
 * request's result and pi_err_* filled, before any I/O; DIO_PI_CHK_APPTAG
 * alone does the same for the app tags (the device checks guard and ref
 * tag of a write itself).  A write without PI gets the kernel's, or the
 * module's with DIO_PI_GEN_APPTAG; DIO_PI_CHK_* are -EINVAL there.  A read
 * returns the device's PI into @pi_buf with DIO_REQ_PI; the module checks
 * what DIO_PI_CHK_* ask (by default guard and ref tag when the caller gave
 * no PI buffer and the device verifies reads).  PI features need the
 * request's PI to fit DIO_IOC_FEATURES' max_pi_bytes (-EINVAL otherwise).
 * A PI failure completes the request with -EILSEQ and the pi_err_* fields;
 * pi_err_tag is DIO_PI_TAG_NONE when the device refused a block the driver
 * cannot read raw, and pi_err_interval is DIO_PI_INTERVAL_UNKNOWN when the
 * module could not find the block at all.  DIO_PI_GEN_APPTAG with app tag
 * DIO_PI_APP_ESCAPE (0xffff) on a type 1 device is -EINVAL: such tuples are
 * escapes no check covers.
 */
struct dio_request {
	__u32	size;
	__u8	opcode;
	__u8	pad0;
	__u16	flags;
	__u32	handle;
	/* __extension__: an anonymous union is C11; C99 -pedantic accepts it so */
	__extension__ union {
		__u32	buf_index;
		__u32	pad1;		/* before ABI 3 */
	};
	__u64	buf;
	__u64	len;
	__u64	offset;
	__u64	cookie;
	__u64	pi_buf;
	__u32	pi_len;
	__u16	pi_flags;
	__u16	app_tag;
	__u16	app_tag_mask;
	__u16	pad2[3];
	__s64	result;
	__u64	pi_err_interval;
	__u64	pi_err_expected;
	__u64	pi_err_actual;
	__u8	pi_err_tag;
	__u8	pi_err_source;
	__u8	pad3[6];
	__u64	reserved[2];
};

#define DIO_REQUEST_SIZE_VER0	128

/**
 * struct dio_submit - DIO_IOC_SUBMIT: queue a batch of requests
 * @size:	sizeof(struct dio_submit)
 * @nr:		number of request pointers at @reqs (1..max_batch)
 * @reqs:	array of __u64 user addresses of struct dio_request
 * @reserved:	zero
 *
 * A handle's access (which of its openers may read or write) is looked up
 * once per call, when a request first needs it; a handle revoked during
 * the call refuses the requests after that.
 *
 * Returns how many were queued.  It stops at the first invalid request:
 * the count before it, or the error when it is the first: -EINVAL (fields,
 * alignment, lengths), -ENXIO (beyond the device), -EBADF (handle not
 * live, a write or read its openers' access does not allow), -EBUSY
 * (already in flight here), -EAGAIN (max_inflight reached, or the user's
 * max_user_pinned while it has pinned I/O in flight), -EOPNOTSUPP (PI the
 * device cannot honour), -EILSEQ (the caller's PI failed
 * DIO_PI_VERIFY_USER or a write's DIO_PI_CHK_APPTAG), -EPERM (a write to
 * a read-only device), -ETXTBSY (a write to an active swap device),
 * -EXDEV (the descriptor belongs to another process), the LSM's error
 * (usually -EACCES), -EFAULT, -ENOMEM (also: a request that alone exceeds
 * max_user_pinned).  A request whose step in the device's page cache fails
 * (writeback's error, or -EBUSY for a write over a cached page that cannot
 * be dropped) is queued all the same: that error is its result.
 */
struct dio_submit {
	__u32	size;
	__u32	nr;
	__u64	reqs;
	__u64	reserved[2];
};

#define DIO_SUBMIT_SIZE_VER0	32

/**
 * struct dio_wait - DIO_IOC_WAIT and DIO_IOC_COLLECT
 * @size:	sizeof(struct dio_wait)
 * @nr:		WAIT: requests listed at @reqs; COLLECT: room at @reqs
 * @reqs:	array of __u64 request addresses (WAIT: in; COLLECT: out)
 * @min_nr:	COLLECT: wait until this many completed; WAIT: zero
 * @pad:	zero
 * @timeout_ns:	relative timeout in nanoseconds; DIO_WAIT_FOREVER blocks
 * @reserved:	zero
 *
 * WAIT blocks until every listed request completed and returns how many it
 * reported (fewer on timeout, possibly 0, or on signal: -EINTR when none).
 * A listed address with no request submitted on this descriptor stops it:
 * -ENOENT when it is the first.  COLLECT reports up to @nr of this
 * descriptor's completions once at least @min_nr are there, and returns
 * how many (fewer on timeout, possibly 0, or on signal: -EINTR when none).
 * Results are written into each request.  Both are -EXDEV from a process
 * other than the descriptor's creator, -EINVAL for bad fields (@nr 0 or
 * above max_batch, a negative @timeout_ns other than DIO_WAIT_FOREVER,
 * @min_nr above @nr, or non-zero for WAIT), -EFAULT.
 */
struct dio_wait {
	__u32	size;
	__u32	nr;
	__u64	reqs;
	__u32	min_nr;
	__u32	pad;
	__s64	timeout_ns;
	__u64	reserved[2];
};

#define DIO_WAIT_SIZE_VER0	48
#define DIO_WAIT_FOREVER	(-1LL)

/**
 * struct dio_fixed_buf - one buffer for DIO_IOC_REGISTER
 * @addr:	start; any alignment (each request's data must be aligned
 *		as its device needs, as without registration)
 * @len:	bytes, 1..max_fixed_buf_bytes
 */
struct dio_fixed_buf {
	__u64	addr;
	__u64	len;
};

/**
 * struct dio_register - DIO_IOC_REGISTER and DIO_IOC_UNREGISTER
 * @size:	sizeof(struct dio_register)
 * @nr:		REGISTER: entries at @bufs (1..max_fixed_bufs); UNREGISTER: zero
 * @bufs:	REGISTER: array of struct dio_fixed_buf; UNREGISTER: zero
 * @flags:	zero (none defined yet)
 * @pad:	zero
 * @reserved:	zero
 *
 * REGISTER pins the pages of every buffer once, for as long as they stay
 * registered, so that requests naming them (DIO_REQ_FIXED) are not pinned
 * one by one, as io_uring's fixed buffers.  The buffers belong to the
 * descriptor, which has at most one set: -EBUSY while one is registered.
 * The memory must be the caller's anonymous or shared memory (MAP_ANONYMOUS,
 * shmem, memfd, hugetlb): a mapping of another file is -EOPNOTSUPP, an
 * unmapped or read-only page -EFAULT.  The pages are charged to the
 * caller's RLIMIT_MEMLOCK, as io_uring charges its buffers (whole pages
 * per buffer, the user's locked_vm; callers with CAP_IPC_LOCK are not
 * charged): -ENOMEM when they do not fit.  They count as the process's
 * pinned memory (VmPin in /proc/PID/status).
 *
 * The pages stay the buffer's until it is unregistered, whatever the
 * process does with its mappings (as with io_uring: unmapping or
 * remapping the memory does not change what requests read and write).
 * After fork() the child gets copies of them (pinned pages are copied at
 * fork), and only the registering process can use the set.
 *
 * UNREGISTER drops the set (-ENXIO when there is none); requests in
 * flight keep their buffer's pages, and its charge, until they are
 * reported.  Closing the descriptor unregisters too.  Both are -EXDEV from
 * a process other than the descriptor's creator, and -EINVAL for bad
 * fields, counts or lengths; REGISTER is -EINTR when a fatal signal comes
 * while it pins.  Both return 0.  (ABI 3)
 */
struct dio_register {
	__u32	size;
	__u32	nr;
	__u64	bufs;
	__u32	flags;
	__u32	pad;
	__u64	reserved[2];
};

#define DIO_REGISTER_SIZE_VER0	40

/* DIO_IOC_COUNTERS flags. */
/* the handle's device, module-wide, since the module was loaded */
#define DIO_COUNTERS_DEVICE	(1U << 0)
#define DIO_COUNTERS_F_ALL	(DIO_COUNTERS_DEVICE)

/**
 * struct dio_counters - DIO_IOC_COUNTERS: what a handle, or its device, did
 * @size:	sizeof(struct dio_counters)
 * @flags:	DIO_COUNTERS_DEVICE, or 0
 * @handle:	in: a live handle of the context
 * @pad:	zero
 * @reads:	out: read requests that completed, whatever their result
 * @writes:	out: write requests that completed, whatever their result
 * @flushes:	out: DIO_OP_FLUSH requests that completed
 * @read_bytes:	out: bytes the successful reads transferred
 * @write_bytes: out: bytes the successful writes transferred
 * @io_errors:	out: completed requests whose result is an error other
 *		than a PI failure (-EIO, -ENOSPC, ...)
 * @refused:	out: requests SUBMIT refused once it had found their handle
 *		live (access, alignment, range, limits, PI the device cannot
 *		honour, the caller's PI failing DIO_PI_VERIFY_USER, -EAGAIN,
 *		...): they never reached the device.  A request refused
 *		before its handle was looked up (unreadable, bad fields or
 *		flags, a handle that is not live) counts nowhere
 * @pi_guard:	out: PI failures of the guard tag
 * @pi_app:	out: PI failures of the application tag
 * @pi_ref:	out: PI failures of the reference tag
 * @pi_unknown:	out: PI failures whose tag is not known (DIO_PI_TAG_NONE:
 *		the device refused a block the driver cannot read raw, or
 *		the module could not find the block)
 * @pi_by_user:	out: PI failures DIO_PI_VERIFY_USER or a write's
 *		DIO_PI_CHK_APPTAG found before submission (DIO_PI_SRC_USER;
 *		these requests are in @refused too)
 * @pi_by_module: out: PI failures the module's verification of a read
 *		found (DIO_PI_SRC_MODULE)
 * @pi_by_device: out: PI failures the device or the block layer found
 *		(DIO_PI_SRC_DEVICE)
 * @reserved:	zero
 *
 * A PI failure is a request reported with -EILSEQ and a pi_err_source,
 * exactly those the trace event dio_batch_pi_error records: each counts
 * once by its tag and once by who found it, so @pi_guard + @pi_app +
 * @pi_ref + @pi_unknown equals @pi_by_user + @pi_by_module +
 * @pi_by_device.  A request is counted when it completes (when its last
 * bio completed and the module verified it), not when it is reported:
 * a request in flight, or completed and not yet reported by WAIT or
 * COLLECT, counts or not depending on that alone.
 *
 * Without flags, the counts are the handle's: every request of the
 * context's descriptors on the handle since it was created (the first
 * OPEN of the device in the context).  A handle is revoked when its last
 * opener closes it; opening the device again makes a new handle, whose
 * counts start at zero.  With DIO_COUNTERS_DEVICE, they are the handle's
 * device's (its dev_t, dev_major:dev_minor: a partition's are its own,
 * not its disk's), summed over every handle of every context that had it
 * open since the module was loaded, the handles revoked since included:
 * what the module did to that device, whoever did it.  A number the
 * kernel later gives to another device continues its count.
 *
 * Counting takes no lock: the counts are per CPU and summed when read,
 * so a read while requests complete sees each of them counted or not
 * yet, and may see a completion's fields counted in part.
 *
 * @size, @flags, @handle and the padding and reserved fields (which must
 * be zero) are read, and the size rules apply in full; the kernel writes
 * min(@size, its size) bytes.  Any process that has the descriptor may
 * ask.  Returns 0, or -EBADF for a handle that is not live, -EINVAL.
 * (ABI 5)
 */
struct dio_counters {
	__u32	size;
	__u32	flags;
	__u32	handle;
	__u32	pad;
	__u64	reads;
	__u64	writes;
	__u64	flushes;
	__u64	read_bytes;
	__u64	write_bytes;
	__u64	io_errors;
	__u64	refused;
	__u64	pi_guard;
	__u64	pi_app;
	__u64	pi_ref;
	__u64	pi_unknown;
	__u64	pi_by_user;
	__u64	pi_by_module;
	__u64	pi_by_device;
	__u64	reserved[4];
};

#define DIO_COUNTERS_SIZE_VER0	160

#define DIO_IOC_FEATURES	_IOWR(DIO_BATCH_IOC_MAGIC, 0x40, struct dio_features)
#define DIO_IOC_INIT		_IOWR(DIO_BATCH_IOC_MAGIC, 0x41, struct dio_init)
#define DIO_IOC_OPEN		_IOWR(DIO_BATCH_IOC_MAGIC, 0x42, struct dio_open)
#define DIO_IOC_CLOSE		_IOWR(DIO_BATCH_IOC_MAGIC, 0x43, struct dio_close)
#define DIO_IOC_QUERY		_IOWR(DIO_BATCH_IOC_MAGIC, 0x44, struct dio_query)
#define DIO_IOC_SUBMIT		_IOWR(DIO_BATCH_IOC_MAGIC, 0x45, struct dio_submit)
#define DIO_IOC_WAIT		_IOWR(DIO_BATCH_IOC_MAGIC, 0x46, struct dio_wait)
#define DIO_IOC_COLLECT		_IOWR(DIO_BATCH_IOC_MAGIC, 0x47, struct dio_wait)
#define DIO_IOC_STAT		_IOWR(DIO_BATCH_IOC_MAGIC, 0x48, struct dio_stat)
#define DIO_IOC_REGISTER	_IOWR(DIO_BATCH_IOC_MAGIC, 0x49, struct dio_register)
#define DIO_IOC_UNREGISTER	_IOWR(DIO_BATCH_IOC_MAGIC, 0x4A, struct dio_register)
#define DIO_IOC_COUNTERS	_IOWR(DIO_BATCH_IOC_MAGIC, 0x4B, struct dio_counters)

#endif /* _UAPI_LINUX_DIO_BATCH_H */
