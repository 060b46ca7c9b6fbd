/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * dioctl_pi.h - libdioctl: T10 protection information in user space
 *
 * Generate and verify the PI tuples a dio_batch request carries, exactly as
 * the Linux block layer does (block/t10-pi.c, Linux 6.1), with the guard
 * checksums at memory speed.
 *
 * Error convention of the whole library: like system calls, a function
 * returns 0 (or a count) on success and -1 with errno set on failure.  A PI
 * verification failure is -1 with errno EILSEQ and a struct dio_pi_error
 * filled in.  Functions that return a checksum cannot fail.
 *
 * Tuple formats (all fields big-endian):
 *
 *  - 8 bytes (DIO_GUARD_CRC16, DIO_GUARD_IP): guard(2) app(2) ref(4)
 *  - 16 bytes (DIO_GUARD_CRC64): guard(8) app(2) ref(6)
 *
 * A PI buffer holds the metadata of each interval, md_size bytes, in
 * order, exactly what a dio_batch request's pi_buf holds: the tuple at
 * pi_offset in it, and, when the device has more metadata than PI, bytes
 * the kernel does not interpret (upstream's "opaque" metadata) around it.
 * The caller owns those bytes: it puts what it wants stored there into
 * the PI buffer of a write, and finds what is stored there in the PI
 * buffer of a read.  The functions here write the tuples only: generation
 * leaves every other metadata byte exactly as the caller had it.
 *
 * When the tuple is not the first bytes of the metadata (pi_offset > 0,
 * NVMe's default "PI last" layout for metadata larger than the tuple),
 * the guard covers the interval's data and then the opaque bytes before
 * the tuple, as the NVMe specification and Linux (6.10 and later) compute
 * it.  So those bytes must be in the PI buffer before dio_pi_generate()
 * runs, and dio_pi_verify() checks them too; the bytes after the tuple
 * are covered by nothing.
 *
 * What varies from call to call (the first reference tag, the app tag and
 * its mask, which tags to check) travels in a struct dio_pi_params, not in
 * scalar arguments, so that a later option needs no new symbol.
 *
 * Every struct here has reserved fields that must be zero (EINVAL
 * otherwise), or that the library zeroes in what it fills in: later
 * versions give them a meaning without changing the layout.  Initialise
 * the structs you pass in with an initializer ({ 0 }, or designated
 * fields), never field by field on an uninitialised variable.
 *
 * Thread safety: the functions here are pure functions of their arguments.
 * They keep no state between calls and may run concurrently from any
 * number of threads, as long as no other thread writes the buffers or
 * structs a call is reading (or reads those it is writing).
 */
#ifndef _DIOCTL_PI_H
#define _DIOCTL_PI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <linux/dio_batch.h>

#ifndef DIO_PUBLIC
#define DIO_PUBLIC __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * DIO_PI_CHK_ALL (the DIO_PI_CHK_* bits dio_pi_verify() accepts) and
 * DIO_PI_APP_ESCAPE (the app tag that makes verification skip a tuple)
 * come from <linux/dio_batch.h>, which the module shares.
 */

/**
 * struct dio_pi_profile - how a device formats its protection information
 * @guard_type:	DIO_GUARD_IP, DIO_GUARD_CRC16 or DIO_GUARD_CRC64
 * @tuple_size:	bytes of the PI tuple: 8, or 16 for DIO_GUARD_CRC64
 * @pi_type:	T10 protection type 1, 2 or 3 (2 behaves as 1)
 * @ref_tag_size: bytes of reference tag: 4, or 6 for DIO_GUARD_CRC64
 * @interval:	bytes of data per tuple: a power of two, 512 to 65536
 * @md_size:	metadata bytes per interval, the stride of a PI buffer:
 *		@tuple_size, or more when the device has metadata beyond the PI
 *		(dio_query's pi_md_size)
 * @pi_offset:	offset of the tuple in each interval's metadata, at most
 *		@md_size - @tuple_size (dio_query's pi_offset)
 * @reserved:	zero
 *
 * Fill it with dio_pi_profile_init() (metadata that is only the tuple:
 * @md_size = @tuple_size, @pi_offset 0) or dio_pi_profile_from_query().
 * A profile with a non-zero @reserved field is invalid (EINVAL), so that
 * later versions can give those bytes a meaning.
 */
struct dio_pi_profile {
	uint8_t		guard_type;
	uint8_t		tuple_size;
	uint8_t		pi_type;
	uint8_t		ref_tag_size;
	uint32_t	interval;
	uint16_t	md_size;
	uint16_t	pi_offset;
	uint32_t	reserved[5];
};

/**
 * struct dio_pi_params - what a generation or verification writes or expects
 * @seed:	reference number of the first interval: the reference tag it
 *		has (types 1 and 2), normally the device offset divided by the
 *		interval; interval i has @seed + i
 * @app_tag:	dio_pi_generate(): the app tag written to every tuple;
 *		dio_pi_verify(): the app tag DIO_PI_CHK_APPTAG expects
 * @app_mask:	dio_pi_verify(): bits of the app tag DIO_PI_CHK_APPTAG
 *		compares (0xffff: all)
 * @chk_flags:	dio_pi_verify(): DIO_PI_CHK_GUARD, DIO_PI_CHK_REFTAG,
 *		DIO_PI_CHK_APPTAG (DIO_PI_CHK_ALL: every one)
 * @flags:	options; none are defined yet: zero
 * @reserved0:	zero
 * @reserved:	zero
 *
 * dio_pi_generate() ignores @app_mask and @chk_flags, so that one struct
 * can serve a write's generation and the verification of its read-back.
 * A non-zero @flags, @reserved0 or @reserved is EINVAL: later versions give
 * them a meaning (a new option, a storage tag) without a new symbol.  So
 * always initialise it as a whole, e.g.
 *
 *	struct dio_pi_params a = { .seed = off / p.interval, .app_tag = 7,
 *				   .app_mask = 0xffff,
 *				   .chk_flags = DIO_PI_CHK_ALL };
 */
struct dio_pi_params {
	uint64_t	seed;
	uint16_t	app_tag;
	uint16_t	app_mask;
	uint32_t	chk_flags;
	uint32_t	flags;
	uint32_t	reserved0;
	uint64_t	reserved[3];
};

/**
 * struct dio_pi_error - the first tuple dio_pi_verify() refused, or the one
 *	a device refused (dio_pi_explain_error())
 * @interval:	index of the failing interval in the buffer (0 = first)
 * @ref:	seed + @interval: the interval's reference number
 * @expected:	DIO_PI_TAG_GUARD: the guard computed over the data;
 *		DIO_PI_TAG_APP: the caller's app tag (unmasked);
 *		DIO_PI_TAG_REF: the low 32 (48 for CRC64) bits of @ref
 * @actual:	the tag as found in the tuple (app tag unmasked)
 * @tag:	DIO_PI_TAG_GUARD, DIO_PI_TAG_APP or DIO_PI_TAG_REF;
 *		DIO_PI_TAG_NONE after a successful verification
 * @pad:	zeroed by the library
 * @escaped:	dio_pi_verify(): how many tuples it skipped unchecked because
 *		they carry the kernel's escape (app tag 0xffff; for type 3
 *		also a ref tag of all ones), before the first failure or, on
 *		success, in the whole buffer.  Blocks a drive formatted or
 *		deallocated may read back so.  0 when no check was asked for,
 *		and from dio_pi_explain_error().  Since: 1.1.
 * @reserved:	zeroed by the library (room for later reports, e.g. a
 *		storage tag)
 *
 * Output only: dio_pi_verify() writes the whole struct (all but @escaped
 * zeroed on success), so its contents before the call do not matter.
 * dio_pi_explain_error() fills it for a read the device refused: @interval
 * and @ref are then both the interval's number on the disk (see there).
 * dio_pi_tag_name() names @tag.
 */
struct dio_pi_error {
	uint64_t	interval;
	uint64_t	ref;
	uint64_t	expected;
	uint64_t	actual;
	uint8_t		tag;
	uint8_t		pad[7];
	uint64_t	escaped;
	uint64_t	reserved[2];
};

/**
 * dio_pi_profile_init:
 * @p: the profile to fill
 * @guard_type: DIO_GUARD_IP, DIO_GUARD_CRC16 or DIO_GUARD_CRC64
 * @interval: bytes of data per tuple (power of two, 512..65536)
 * @pi_type: T10 protection type 1, 2 or 3
 *
 * Fills @p, deriving the tuple and reference tag sizes from @guard_type,
 * for metadata that is the tuple alone (@md_size = @tuple_size, @pi_offset
 * 0); set @md_size and @pi_offset afterwards for a device with more
 * metadata than PI.
 *
 * Returns: 0, or -1 with errno EINVAL for an unknown guard type, a bad
 * interval or a bad protection type (@p is then left untouched).
 *
 * Since: 0.1
 */
DIO_PUBLIC int dio_pi_profile_init(struct dio_pi_profile *p, int guard_type,
				   unsigned int interval, int pi_type);

/**
 * dio_pi_profile_from_query:
 * @q: a struct dio_query filled by DIO_IOC_QUERY
 * @p: the profile to fill
 *
 * Fills @p from what the device reports, metadata size and the tuple's
 * offset in it included (a @q->pi_md_size of 0 is taken as the tuple size).
 *
 * Returns: 0, or -1 with errno EOPNOTSUPP when the device has no protection
 * information (or a format this library does not handle: unknown guard,
 * storage tags), EINVAL when @q or @p is NULL, @q->size is below
 * DIO_QUERY_SIZE_VER0 or its PI fields contradict each other (tuple, ref
 * or app tag size not those of the guard type, a tuple that does not fit
 * in the metadata at @q->pi_offset).
 *
 * Since: 0.1
 */
DIO_PUBLIC int dio_pi_profile_from_query(const struct dio_query *q,
					 struct dio_pi_profile *p);

/**
 * dio_pi_len:
 * @p: a valid profile
 * @data_len: bytes of data, a multiple of @p->interval
 *
 * Returns: the bytes of PI buffer that @data_len bytes of data need
 * (@data_len / @p->interval * @p->md_size), or -1 with errno EINVAL when @p
 * is invalid or @data_len not a multiple of the interval, EOVERFLOW when
 * the length does not fit in a ssize_t.
 *
 * Since: 0.1
 */
DIO_PUBLIC ssize_t dio_pi_len(const struct dio_pi_profile *p, size_t data_len);

/**
 * dio_pi_seed:
 * @q: a struct dio_query filled by sys_dio_query() for a handle
 * @offset: byte offset in the handle's device (a partition's own offset),
 *	where a request starts
 *
 * The seed of a request at @offset (struct dio_pi_params' @seed): the
 * number of its first protection interval counted from the start of the
 * whole disk, (@q->part_start_bytes + @offset) / @q->pi_interval.
 * Reference tags count from there, also for I/O through a partition, and
 * so do the module's pi_err_interval and the @ref of a dio_pi_error.
 *
 *  - Types 1 and 2: the reference tag of the interval at @offset (a tuple
 *    holds its low 32 bits, 48 with DIO_GUARD_CRC64).
 *  - Type 3 has no reference tag: dio_pi_generate() writes 0 whatever the
 *    seed, and dio_pi_verify() does not check it.  The value is the same
 *    interval number, so that a verification failure's @ref still names
 *    the interval on the disk.
 *
 * @q->part_start_bytes is the module's (ABI 4, DIO_FEAT_PART_START); with
 * an older module, which leaves it 0, sys_dio_query() fills it in from
 * sysfs (/sys/dev/block/MAJOR:MINOR/start), so a partition's seeds are
 * right either way.  A struct dio_query filled by a raw DIO_IOC_QUERY of
 * an older module has 0 there: the seeds of a whole disk.
 *
 * Returns: the seed, or UINT64_MAX (never a seed) with errno EINVAL when
 * @q is NULL, @q->size is below DIO_QUERY_SIZE_VER0, @q->pi_interval is
 * not a power of two or the start of the request (@q->part_start_bytes +
 * @offset) is not a multiple of it; EOPNOTSUPP when the device has no
 * protection information (@q->pi_interval, @q->pi_tuple_size or
 * @q->pi_type 0); EOVERFLOW when @q->part_start_bytes + @offset does not
 * fit in 64 bits.
 *
 * Since: 1.0.0
 */
DIO_PUBLIC uint64_t dio_pi_seed(const struct dio_query *q, uint64_t offset);

/**
 * dio_pi_crc16_t10dif:
 * @crc: 0 to start, or the result over the preceding bytes
 * @buf: data
 * @len: bytes at @buf
 *
 * CRC-16/T10-DIF: polynomial 0x8BB7, initial value 0, not reflected, no
 * final XOR (ISA-L).  Incremental: crc(crc(0, a), b) == crc(0, a || b).
 *
 * Returns: the CRC, as stored big-endian in the tuple's guard.
 *
 * Since: 0.1
 */
DIO_PUBLIC uint16_t dio_pi_crc16_t10dif(uint16_t crc, const void *buf, size_t len);

/**
 * dio_pi_crc64_nvme:
 * @crc: 0 to start, or the result over the preceding bytes
 * @buf: data
 * @len: bytes at @buf
 *
 * CRC-64/NVME: polynomial 0xAD93D23594C93659 reflected, initial value and
 * final XOR all ones, in the convention of the kernel's crc64_rocksoft():
 * incremental, crc(crc(0, a), b) == crc(0, a || b).  Uses AVX-512
 * VPCLMULQDQ, VPCLMULQDQ with AVX2, or PCLMULQDQ when the CPU has them.
 *
 * Returns: the CRC, as stored big-endian in the tuple's guard.
 *
 * Since: 0.1
 */
DIO_PUBLIC uint64_t dio_pi_crc64_nvme(uint64_t crc, const void *buf, size_t len);

/**
 * dio_pi_ip_checksum:
 * @buf: data
 * @len: bytes at @buf (an odd last byte is padded with a zero byte)
 *
 * The RFC 1071 Internet checksum as the kernel's IP profile stores it: the
 * one's complement of the one's complement sum of the big-endian 16-bit
 * words.  Storing the result big-endian gives the same two bytes the kernel
 * writes on any architecture.  All-zero data gives 0xffff.
 *
 * Returns: the checksum, as stored big-endian in the tuple's guard.
 *
 * Since: 0.1
 */
DIO_PUBLIC uint16_t dio_pi_ip_checksum(const void *buf, size_t len);

/**
 * dio_pi_generate:
 * @p: the device's profile
 * @data: the data, @len bytes
 * @len: a multiple of @p->interval (0 is allowed)
 * @pi: the PI buffer, dio_pi_len(@p, @len) bytes
 * @a: @a->seed, the reference number of the first interval, and
 *	@a->app_tag, written to every tuple (@a->app_mask and @a->chk_flags
 *	are ignored)
 *
 * Writes one tuple per interval, at @p->pi_offset of the interval's
 * @p->md_size bytes of metadata: the guard over the interval's data (and,
 * when @p->pi_offset is not 0, over the metadata bytes before the tuple
 * after it), @a->app_tag, and for types 1 and 2 the low 32 (CRC64: 48)
 * bits of @a->seed + i for interval i; for type 3 the ref tag is 0, as the
 * kernel writes it.  Metadata bytes outside the tuples are never written:
 * they keep what the caller put there; those before a tuple are read, so
 * they must hold what is to be stored when the call is made.
 *
 * Returns: 0, or -1 with errno EINVAL when @p or @a is NULL or invalid
 * (@a->flags, @a->reserved0 or @a->reserved non-zero), @len is not a
 * multiple of the interval, or @data or @pi is NULL with @len non-zero.
 * Nothing is written on failure.
 *
 * Since: 0.1
 */
DIO_PUBLIC int dio_pi_generate(const struct dio_pi_profile *p, const void *data,
			       size_t len, void *pi,
			       const struct dio_pi_params *a);

/**
 * dio_pi_generate_iov:
 * @p: the device's profile
 * @iov: data segments, of any lengths and alignments; an interval may span
 *	segments
 * @iovcnt: number of segments (0 or more)
 * @pi: the PI buffer, dio_pi_len(@p, total) bytes
 * @a: as for dio_pi_generate()
 *
 * dio_pi_generate() over the concatenation of the segments.
 *
 * Returns: 0, or -1 with errno EINVAL as dio_pi_generate(), also for a
 * negative @iovcnt, a NULL @iov with @iovcnt > 0 or a total that overflows.
 *
 * Since: 0.1
 */
DIO_PUBLIC int dio_pi_generate_iov(const struct dio_pi_profile *p,
				   const struct iovec *iov, int iovcnt, void *pi,
				   const struct dio_pi_params *a);

/**
 * dio_pi_generate_copy:
 * @p: the device's profile
 * @dst: where the data is copied to (the I/O buffer), @len bytes
 * @src: the data, @len bytes; must not overlap @dst
 * @len: a multiple of @p->interval (0 is allowed)
 * @pi: the PI buffer, dio_pi_len(@p, @len) bytes
 * @a: as for dio_pi_generate()
 *
 * memcpy(@dst, @src, @len) and dio_pi_generate(@p, @dst, @len, @pi, @a)
 * in one pass over the data: each interval's guard is computed from the
 * bytes as they are copied, so that an application that stages its data
 * into an I/O buffer anyway gets the tuples for little more than the cost
 * of the copy.  The result is exactly that of the two calls; @dst and
 * @src may have any alignment.
 *
 * Returns: 0, or -1 with errno EINVAL as dio_pi_generate(), also when @dst
 * is NULL with @len non-zero.  Nothing is written on failure (neither
 * @dst nor @pi).
 *
 * Since: 0.2
 */
DIO_PUBLIC int dio_pi_generate_copy(const struct dio_pi_profile *p, void *dst,
				    const void *src, size_t len, void *pi,
				    const struct dio_pi_params *a);

/**
 * dio_pi_verify:
 * @p: the device's profile
 * @data: the data, @len bytes
 * @len: a multiple of @p->interval (0 is allowed)
 * @pi: the PI buffer, dio_pi_len(@p, @len) bytes
 * @a: what to check (@a->chk_flags: DIO_PI_CHK_GUARD, DIO_PI_CHK_REFTAG,
 *	DIO_PI_CHK_APPTAG) and expect: @a->seed, the reference number of the
 *	first interval; @a->app_tag under @a->app_mask (with
 *	DIO_PI_CHK_APPTAG)
 * @err: filled with the first failure (zeroed on success); may be NULL
 *
 * Checks the tuples in order (each at @p->pi_offset of its interval's
 * metadata, its guard over the data and the metadata bytes before the
 * tuple, as dio_pi_generate() computes it), as the kernel does:
 *
 *  - types 1 and 2: a tuple whose app tag is 0xffff is skipped entirely;
 *  - type 3: a tuple whose app tag is 0xffff and ref tag all ones is skipped;
 *
 * then, in this order, and only the checks @a->chk_flags asks for: the
 * guard against the interval's data, the app tag under @a->app_mask, and
 * (types 1 and 2 only: type 3 has no ref tag to check) the ref tag against
 * the low 32 (CRC64: 48) bits of @a->seed + i.  The kernel itself checks
 * the ref tag before the guard; a tuple that fails both is reported here
 * as a guard failure.
 *
 * Returns: 0 when every tuple passed or was skipped as an escape (then
 * @err->escaped says how many were skipped: a caller that reports
 * "verified" says so of the others only), -1 with errno EILSEQ at the
 * first failing tuple (@err filled), or -1 with errno EINVAL as
 * dio_pi_generate() or for @a->chk_flags bits outside DIO_PI_CHK_ALL.
 *
 * Since: 0.1
 */
DIO_PUBLIC int dio_pi_verify(const struct dio_pi_profile *p, const void *data,
			     size_t len, const void *pi,
			     const struct dio_pi_params *a,
			     struct dio_pi_error *err);

/**
 * dio_pi_verify_iov:
 * @p: the device's profile
 * @iov: data segments, as for dio_pi_generate_iov()
 * @iovcnt: number of segments
 * @pi: the PI buffer, as for dio_pi_verify()
 * @a: as for dio_pi_verify()
 * @err: as for dio_pi_verify()
 *
 * dio_pi_verify() over the concatenation of the segments.
 *
 * Returns: as dio_pi_verify(), and EINVAL as dio_pi_generate_iov().
 *
 * Since: 0.1
 */
DIO_PUBLIC int dio_pi_verify_iov(const struct dio_pi_profile *p,
				 const struct iovec *iov, int iovcnt,
				 const void *pi, const struct dio_pi_params *a,
				 struct dio_pi_error *err);

/**
 * dio_pi_read_raw:
 * @fd: a descriptor of an NVMe namespace's block device, open for reading
 *	(the one the handle was opened with will do)
 * @p: the device's profile (dio_pi_profile_from_query())
 * @buf: receives the data, @len bytes
 * @len: a multiple of @p->interval
 * @md: receives the metadata, dio_pi_len(@p, @len) bytes (@p->md_size per
 *	interval, the PI tuple at @p->pi_offset)
 * @offset: byte offset in @fd's device, a multiple of @p->interval
 *
 * Reads data and metadata with every check of the drive off, by NVMe
 * passthrough (a Read with PRINFO 0, NVME_IOCTL_IO64_CMD): what
 * DIO_PI_NOCHECK does where the block layer can (SCSI; NVMe from Linux
 * 6.14), on the NVMe drives of older kernels, where a read with
 * DIO_PI_NOCHECK is -EOPNOTSUPP.  Nothing is cached by the kernel.
 *
 * The kernel decides who may: Linux 6.1 lets only CAP_SYS_ADMIN send
 * passthrough commands; from 6.2 a process without it may send this read
 * on a descriptor of the whole namespace opened for reading, but never on
 * a partition.
 *
 * Returns: 0, or -1 with errno: ENOTTY (@fd is not an NVMe namespace or
 * partition: use DIO_PI_NOCHECK; a device-mapper or md device is not one,
 * even where it passes NVMe ioctls on to a namespace below), EACCES (the kernel refused the
 * passthrough: without CAP_SYS_ADMIN on Linux 6.1, on a partition, or a
 * descriptor not open for reading), EINVAL (@len or @offset not a multiple
 * of the interval, a bad profile, or beyond the namespace), EIO (the drive
 * failed the read), or another errno of ioctl(2).
 *
 * Since: 0.1
 */
DIO_PUBLIC int dio_pi_read_raw(int fd, const struct dio_pi_profile *p, void *buf,
			       size_t len, void *md, uint64_t offset);

/**
 * dio_pi_explain_error:
 * @fd: as for dio_pi_read_raw(): the NVMe namespace (or a partition of it)
 *	the request's handle was opened with
 * @p: the device's profile
 * @r: a read that completed with -EILSEQ, refused by the device
 *	(pi_err_source DIO_PI_SRC_DEVICE), whose interval the module found
 *	but whose tag it could not learn (pi_err_tag DIO_PI_TAG_NONE): NVMe
 *	before Linux 6.14.  Only read: it stays as the kernel wrote it.
 * @err: receives what the drive refused
 *
 * Reads the refused interval raw (dio_pi_read_raw()) and checks it as the
 * drive did: the guard, the ref tag (types 1 and 2: the interval's number
 * on the disk) and, where @r asked for it (DIO_PI_CHK_APPTAG), the app tag
 * under its mask, in that order, with the escapes of dio_pi_verify().
 * @err is written as a whole, for a device refusal:
 *
 *  - @err->interval and @err->ref: @r->pi_err_interval, the interval's
 *    number counted from the start of the disk (which is also its
 *    reference number: the seed of the raw read's verification);
 *  - @err->tag: DIO_PI_TAG_GUARD, DIO_PI_TAG_APP or DIO_PI_TAG_REF;
 *  - @err->expected and @err->actual: as dio_pi_verify() reports them
 *    (a guard: the guard of the data as stored, and the guard in the
 *    tuple), the values the module reports itself where it can read raw;
 *  - @err->pad and @err->reserved: zero.
 *
 * On failure @err is zeroed (tag DIO_PI_TAG_NONE) when it is not NULL.
 *
 * Returns: 0, or -1 with errno: EINVAL (@r is not such a refusal, @p or
 * @err is NULL, or the interval lies before @fd's partition), ENODATA
 * (the interval reads back correct now: rewritten since, or the refusal
 * was not about the data on the medium), ENOMEM, or dio_pi_read_raw()'s
 * (EACCES where the kernel forbids the passthrough: say so, and report
 * the interval alone).
 *
 * Since: 1.0
 */
DIO_PUBLIC int dio_pi_explain_error(int fd, const struct dio_pi_profile *p,
				    const struct dio_request *r,
				    struct dio_pi_error *err);

/**
 * dio_pi_explain:
 * @fd: as for dio_pi_explain_error()
 * @p: the device's profile
 * @r: as for dio_pi_explain_error()
 *
 * Deprecated: since 1.0.0, use dio_pi_explain_error(), which leaves the
 * request as the kernel wrote it.
 *
 * dio_pi_explain_error() into @r itself: on success it overwrites @r's
 * pi_err_tag, pi_err_expected and pi_err_actual with the error's tag,
 * expected and actual values (pi_err_interval and pi_err_source stay);
 * on failure @r is left alone.
 *
 * Returns: as dio_pi_explain_error().
 *
 * Since: 0.1
 */
DIO_PUBLIC int dio_pi_explain(int fd, const struct dio_pi_profile *p,
			      struct dio_request *r)
	__attribute__((deprecated("use dio_pi_explain_error()")));

/**
 * dio_pi_tag_name:
 * @tag: DIO_PI_TAG_NONE, DIO_PI_TAG_GUARD, DIO_PI_TAG_APP or
 *	DIO_PI_TAG_REF (struct dio_request's pi_err_tag, struct
 *	dio_pi_error's tag)
 *
 * Returns: the tag's short lowercase name: "none", "guard", "app" or
 * "ref"; "unknown" for any other value.  Never NULL; a static string.
 * The names never change (dioctl's JSON output carries them).
 *
 * Since: 1.0
 */
DIO_PUBLIC const char *dio_pi_tag_name(unsigned int tag);

/**
 * dio_pi_source_name:
 * @source: DIO_PI_SRC_NONE, DIO_PI_SRC_USER, DIO_PI_SRC_MODULE or
 *	DIO_PI_SRC_DEVICE (struct dio_request's pi_err_source)
 *
 * Returns: who found a PI failure, as a short lowercase name: "none",
 * "user" (DIO_PI_VERIFY_USER, before submission), "module" (the module
 * verified what it read) or "device" (the device or block layer refused
 * the I/O); "unknown" for any other value.  Never NULL; a static string.
 * The names never change (dioctl's JSON output carries them).
 *
 * Since: 1.0
 */
DIO_PUBLIC const char *dio_pi_source_name(unsigned int source);

#ifdef __cplusplus
}
#endif

#endif /* _DIOCTL_PI_H */
