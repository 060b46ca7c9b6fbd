/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libdioctl: the sys_dio_* calls over /dev/dio_batch, and PI helpers.
 *
 * This header includes <dioctl_pi.h> (the PI helpers: profiles,
 * dio_pi_generate(), dio_pi_verify(), ...); both are always installed
 * together, and either may be included alone.
 *
 * Error convention: every function here behaves like the system call it
 * mirrors.  On success it returns 0, a descriptor, a handle or a count; on
 * failure it returns -1 and sets errno.  The errno values are the module's
 * (see <linux/dio_batch.h> and each function's man page).
 *
 * Threads: the library keeps no state of its own; each sys_dio_* call is
 * one ioctl, and what may run concurrently is what the module allows.  On
 * one context descriptor, any of sys_dio_submit(), sys_dio_wait(),
 * sys_dio_collect(), sys_dio_open(), sys_dio_close(), sys_dio_query() and
 * sys_dio_stat() may be called at the same time from several threads of
 * the process that created the descriptor (the kernel serialises what it
 * must).  Each completion is reported exactly once: threads that
 * sys_dio_collect() (or sys_dio_wait() for different requests) on one
 * descriptor each get different completions, and a sys_dio_wait() for a
 * request another thread is reporting does not report it again (it stops
 * there: ENOENT when it is the first).  A struct dio_request belongs to
 * the kernel from sys_dio_submit() until a sys_dio_wait() or
 * sys_dio_collect() reported it: do not submit it again (EBUSY on the
 * same descriptor), modify or free it, or its buffers, meanwhile.
 * sys_dio_submit(), sys_dio_wait(), sys_dio_collect(),
 * sys_dio_register_buffers() and sys_dio_unregister_buffers() work only in
 * the process that created the descriptor (EXDEV in any other, e.g. after
 * fork() or SCM_RIGHTS); sys_dio_open(), sys_dio_close(), sys_dio_query()
 * and sys_dio_stat() work in any process that has it.  The dio_req_*
 * helpers only write the struct they are given, and the dio_pi_* helpers
 * are pure functions: all are thread-safe on distinct arguments.
 */
#ifndef _DIOCTL_H
#define _DIOCTL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <linux/dio_batch.h>

/*
 * <time.h> defines struct timespec only under POSIX or C11: declared here
 * so that strict C99 sees one struct in every prototype below.
 */
struct timespec;

#ifndef DIO_PUBLIC
#define DIO_PUBLIC __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * sys_dio_features:
 * @f: filled with what the loaded module supports
 *
 * Returns: 0, or -1 with errno: ENOENT/ENODEV when /dev/dio_batch is
 * missing (module not loaded), EACCES, EFAULT.
 * Since: 0.1
 */
DIO_PUBLIC int sys_dio_features(struct dio_features *f);

/**
 * sys_dio_init:
 * @key: the context's name (0 with DIO_PRIVATE), in the caller's IPC
 *	namespace
 * @flags: DIO_CREAT, DIO_EXCL, DIO_PRIVATE, DIO_FOREIGN
 *
 * Same as sys_dio_init_mode() with mode 0600.
 * Since: 0.1
 */
DIO_PUBLIC int sys_dio_init(uint64_t key, unsigned int flags);

/**
 * sys_dio_init_mode:
 * @key: the context's name (0 with DIO_PRIVATE).  Keys live in the
 *	caller's IPC namespace, as System V IPC keys do (not in its user
 *	namespace)
 * @flags: DIO_CREAT, DIO_EXCL, DIO_PRIVATE, DIO_FOREIGN
 * @mode: permissions of a context this call creates (0777 mask)
 *
 * Joining a context needs read and write permission under its mode (or
 * CAP_IPC_OWNER in the user namespace of the IPC namespace).  A context
 * owned by another user (its creator's effective uid) is joined only with
 * DIO_FOREIGN, whatever its mode; without it such a key is EACCES, so a
 * key someone else squatted is never joined by mistake (sys_dio_stat()
 * tells who owns what was joined).  DIO_FOREIGN goes with neither
 * DIO_PRIVATE nor DIO_EXCL.
 *
 * The descriptor's I/O belongs to the process that created it: SUBMIT,
 * WAIT and COLLECT from another process (a fork()ed child, a receiver of
 * the descriptor through SCM_RIGHTS) are EXDEV; OPEN, CLOSE, QUERY and
 * STAT work from any process that has it.
 *
 * Returns: a new close-on-exec context descriptor, or -1 with errno:
 * ENOENT (unknown key, no DIO_CREAT), EEXIST (DIO_EXCL, key exists),
 * EACCES (mode denies joining, or the context is another user's and
 * DIO_FOREIGN was not given), EINVAL (bad flags or combination, key or
 * mode), ENOMEM, EMFILE, and those of opening /dev/dio_batch.
 * Since: 0.1
 */
DIO_PUBLIC int sys_dio_init_mode(uint64_t key, unsigned int flags, mode_t mode);

/**
 * sys_dio_exit:
 * @ctx: a context descriptor
 *
 * Closes @ctx; the context dies with its last descriptor.  Requests still
 * in flight complete and are freed; their results are not reported.
 * Returns: 0, or -1 with errno EBADF.
 * Since: 0.1
 */
DIO_PUBLIC int sys_dio_exit(int ctx);

/**
 * sys_dio_open:
 * @ctx: a context descriptor
 * @fd: an open block device; its access mode becomes the handle's
 * @flags: DIO_OPEN_NOCLAIM to skip the exclusive claim
 *
 * A handle's access follows its holders: it reads while one of the
 * descriptors holding it opened it through a readable @fd, and writes
 * while one opened it through a writable one; when the last writable
 * holder closes it (or exits), it stops accepting writes.
 *
 * Returns: the handle (>= 1), or -1 with errno: EBADF, ENOTBLK, EBUSY
 * (claimed elsewhere: mounted, md/dm, another context), EROFS (writable
 * @fd on a read-only device), ETXTBSY (writable @fd on an active swap
 * device, with DIO_OPEN_NOCLAIM), EINVAL, EFAULT, ENOMEM.
 * Since: 0.1
 */
DIO_PUBLIC int sys_dio_open(int ctx, int fd, unsigned int flags);

/**
 * sys_dio_close:
 * @ctx: the context descriptor that opened @handle
 * @handle: a handle
 *
 * Returns: 0, or -1 with errno EBADF (this descriptor holds no reference).
 * Since: 0.1
 */
DIO_PUBLIC int sys_dio_close(int ctx, int handle);

/**
 * sys_dio_query:
 * @ctx: a context descriptor
 * @handle: a live handle of its context
 * @q: filled with the device's geometry and PI format
 *
 * Returns: 0, or -1 with errno EBADF.
 * Since: 0.1
 */
DIO_PUBLIC int sys_dio_query(int ctx, int handle, struct dio_query *q);

/**
 * sys_dio_stat:
 * @ctx: a context descriptor
 * @st: zeroed, then filled with who owns and created the context, its
 *	mode and key, and how many descriptors and handles it has
 *
 * DIO_IOC_STAT, as IPC_STAT tells of a System V IPC object: ids in the
 * caller's user namespace (the overflow id when they have no mapping
 * there), the creator's pid in its pid namespace (0 when not visible).
 * Works from any process that has @ctx.  The module has it when
 * sys_dio_features() reports DIO_FEAT_STAT.
 *
 * Returns: 0, or -1 with errno: EBADF (@ctx is not open), ENOTTY (@ctx is
 * not a context descriptor, or the module predates DIO_IOC_STAT), EFAULT.
 * Since: 0.1
 */
DIO_PUBLIC int sys_dio_stat(int ctx, struct dio_stat *st);

/**
 * sys_dio_counters:
 * @ctx: a context descriptor
 * @handle: a live handle of the context
 * @flags: 0 for the handle's counts, DIO_COUNTERS_DEVICE for its
 *	device's since the module was loaded (every handle of every
 *	context that had it open)
 * @c: zeroed, then filled with the counts: completed reads, writes and
 *	flushes, the bytes read and written, I/O errors, requests SUBMIT
 *	refused, and PI failures by tag (guard, app, ref, unknown) and by
 *	who found them (user, module, device)
 *
 * DIO_IOC_COUNTERS.  A request counts when it completes, whether or not it
 * was reported yet; a handle counts from its creation (the context's first
 * OPEN of the device).  The exact meaning of every count is struct
 * dio_counters' in <linux/dio_batch.h>.  Counting costs the I/O path no
 * lock; a read while requests complete may see the last of them in part.
 * Works from any process that has @ctx.  The module has it when
 * sys_dio_features() reports DIO_FEAT_COUNTERS (ABI 5).
 *
 * Returns: 0, or -1 with errno: EBADF (@ctx is not open, or @handle is not
 * live in the context), EINVAL (a flag outside DIO_COUNTERS_F_ALL), ENOTTY
 * (@ctx is not a context descriptor, or the module predates
 * DIO_IOC_COUNTERS), EFAULT.
 * Since: 1.1.0
 */
DIO_PUBLIC int sys_dio_counters(int ctx, int handle, unsigned int flags,
				struct dio_counters *c);

/**
 * sys_dio_submit:
 * @ctx: a context descriptor
 * @reqs: @nr pointers to requests
 * @nr: how many
 *
 * Returns: how many requests were queued (stops at the first invalid one),
 * or -1 with errno when the first one is invalid: EINVAL, ENXIO, EBADF
 * (handle not live, or an access its holders do not have), EBUSY, EAGAIN
 * (max_inflight, or the user's max_user_pinned while it has pinned I/O in
 * flight), EOPNOTSUPP, EILSEQ, EPERM (write to a read-only device),
 * ETXTBSY (write to an active swap device), EXDEV (@ctx was created by
 * another process), the LSM's error (usually EACCES), EFAULT, ENOMEM (also
 * a request that alone exceeds max_user_pinned); see dio_batch.h.
 * Since: 0.1
 */
DIO_PUBLIC int sys_dio_submit(int ctx, struct dio_request **reqs, unsigned int nr);

/**
 * sys_dio_wait:
 * @ctx: the descriptor the requests were submitted on
 * @reqs: @nr requests to wait for
 * @nr: how many
 * @timeout: relative; NULL waits forever
 *
 * Returns: how many of @reqs (in order) completed and were reported;
 * fewer, possibly 0, when @timeout expired; -1 with errno EINTR on a
 * signal before any, ENOENT when the first was never submitted here,
 * EXDEV when @ctx was created by another process.
 * Since: 0.1
 */
DIO_PUBLIC int sys_dio_wait(int ctx, struct dio_request **reqs, unsigned int nr,
			    const struct timespec *timeout);

/**
 * sys_dio_collect:
 * @ctx: a context descriptor
 * @reqs: room for @nr pointers to completed requests
 * @min_nr: wait until this many completed (0: do not wait)
 * @nr: most to report
 * @timeout: relative; NULL waits forever
 *
 * Returns: how many completions were reported into @reqs, or -1 with errno
 * EINTR (signal before any), EINVAL (@min_nr > @nr), EXDEV (@ctx was
 * created by another process).
 * Since: 0.1
 */
DIO_PUBLIC int sys_dio_collect(int ctx, struct dio_request **reqs,
			       unsigned int min_nr, unsigned int nr,
			       const struct timespec *timeout);

/**
 * sys_dio_register_buffers:
 * @ctx: a context descriptor
 * @iov: the buffers: @nr ranges of the caller's memory, each 1 to
 *	max_fixed_buf_bytes (sys_dio_features()) long, at any address (each
 *	request's data must be aligned as its device needs, as always)
 * @nr: how many, 1 to max_fixed_bufs (sys_dio_features())
 *
 * Registers @iov as the descriptor's fixed buffers, numbered 0 to @nr - 1
 * in the order given, as io_uring's fixed buffers: their pages are pinned
 * once, here, and stay pinned while registered, so that requests naming
 * one of them (dio_req_prep_read_fixed(), dio_req_prep_write_fixed():
 * DIO_REQ_FIXED and buf_index) are not pinned and unpinned one by one.
 * The pages are charged to the caller's RLIMIT_MEMLOCK (whole pages per
 * buffer; not for callers with CAP_IPC_LOCK) and show as the process's
 * pinned memory (VmPin).  A descriptor has at most one set; it stays until
 * sys_dio_unregister_buffers() or the descriptor's close.  Only the array
 * at @iov is read, and only during the call.  The module has it when
 * sys_dio_features() reports DIO_FEAT_FIXED_BUFS (ABI version 3).
 *
 * Returns: 0, or -1 with errno: EINVAL (@iov NULL or @nr 0, both refused
 * without a system call; @nr above max_fixed_bufs, a length of 0 or above
 * max_fixed_buf_bytes), EBUSY (the descriptor
 * already has buffers registered), EFAULT (@iov, or a buffer, is not
 * mapped, or a buffer is read-only), EOPNOTSUPP (a buffer lies in a
 * mapping of a file other than shmem, a memfd or hugetlbfs), ENOMEM (the
 * pages do not fit in RLIMIT_MEMLOCK, or out of memory), EXDEV (@ctx was
 * created by another process), ENOTTY (the module predates registered
 * buffers, ABI version 2 or older).
 * Since: 0.3
 */
DIO_PUBLIC int sys_dio_register_buffers(int ctx, const struct iovec *iov,
					unsigned int nr);

/**
 * sys_dio_unregister_buffers:
 * @ctx: a context descriptor with registered buffers
 *
 * Drops the buffers sys_dio_register_buffers() registered: their pages
 * are unpinned and uncharged, except those of requests still in flight,
 * which keep their buffer until they are reported.  Closing the
 * descriptor does the same.
 *
 * Returns: 0, or -1 with errno: ENXIO (no buffers are registered), EXDEV
 * (@ctx was created by another process), ENOTTY (the module predates
 * registered buffers).
 * Since: 0.3
 */
DIO_PUBLIC int sys_dio_unregister_buffers(int ctx);

/*
 * Request helpers: zero @r and fill it.  Since: 0.1
 *
 * The seven dio_req_prep_* helpers (these five and the _fixed pair below)
 * are exported functions, not inline ones, and stay so: they are in the
 * released nodes LIBDIOCTL_1.0 and LIBDIOCTL_1.2 (libdioctl.map), whose
 * symbols can never be taken back.  The cost is one function call per
 * request, against a system call per batch of them.  Layout changes are
 * carried by the struct's size field, not by inlining: the module reads
 * @size to know which struct dio_request a program has, and should the
 * struct grow, these symbols keep filling DIO_REQUEST_SIZE_VER0 bytes for
 * the programs linked against them while new versions of the helpers (a
 * new node) fill the larger struct.
 */
DIO_PUBLIC void dio_req_prep_read(struct dio_request *r, int handle, void *buf,
				  size_t len, uint64_t offset);
DIO_PUBLIC void dio_req_prep_write(struct dio_request *r, int handle,
				   const void *buf, size_t len, uint64_t offset);
DIO_PUBLIC void dio_req_prep_readv(struct dio_request *r, int handle,
				   const struct iovec *iov, int iovcnt,
				   uint64_t offset);
DIO_PUBLIC void dio_req_prep_writev(struct dio_request *r, int handle,
				    const struct iovec *iov, int iovcnt,
				    uint64_t offset);
DIO_PUBLIC void dio_req_prep_flush(struct dio_request *r, int handle);
/**
 * dio_req_prep_read_fixed:
 * @r: the request to fill
 * @handle: the device
 * @buf: where to read to: within registered buffer @buf_index
 * @len: bytes
 * @offset: device offset in bytes
 * @buf_index: a buffer of sys_dio_register_buffers() (0 is the first)
 *
 * dio_req_prep_read() with DIO_REQ_FIXED and @buf_index: the request uses
 * the registered buffer's pinned pages.  [@buf, @buf + @len) must lie
 * within buffer @buf_index of the descriptor it is submitted on, or
 * sys_dio_submit() fails with EFAULT (EINVAL when there is no such buffer).
 * Since: 0.3
 */
DIO_PUBLIC void dio_req_prep_read_fixed(struct dio_request *r, int handle,
					void *buf, size_t len, uint64_t offset,
					unsigned int buf_index);
/**
 * dio_req_prep_write_fixed:
 * @r: the request to fill
 * @handle: the device
 * @buf: the data: within registered buffer @buf_index
 * @len: bytes
 * @offset: device offset in bytes
 * @buf_index: a buffer of sys_dio_register_buffers() (0 is the first)
 *
 * dio_req_prep_write() with DIO_REQ_FIXED and @buf_index, as
 * dio_req_prep_read_fixed().
 * Since: 0.3
 */
DIO_PUBLIC void dio_req_prep_write_fixed(struct dio_request *r, int handle,
					 const void *buf, size_t len,
					 uint64_t offset, unsigned int buf_index);
/**
 * dio_req_set_pi:
 * @r: a prepared request
 * @pi: the PI buffer (pi_md_size bytes per protection interval)
 * @pi_len: bytes at @pi
 * @pi_flags: DIO_PI_* (the module refuses bits it does not know)
 * @app_tag: app tag to generate or check
 * @app_tag_mask: bits of @app_tag that DIO_PI_CHK_APPTAG compares
 *
 * Sets DIO_REQ_PI and the PI fields of @r.
 *
 * Returns: 0, or -1 with errno EINVAL when @r is NULL or @pi_flags does
 * not fit in the request's 16-bit pi_flags (@r is then left untouched).
 * Since: 0.1
 */
DIO_PUBLIC int dio_req_set_pi(struct dio_request *r, void *pi, uint32_t pi_len,
			      unsigned int pi_flags, uint16_t app_tag,
			      uint16_t app_tag_mask);

#ifdef __cplusplus
}
#endif

/* Always installed beside this header (make install). */
#include "dioctl_pi.h"

#endif /* _DIOCTL_H */
