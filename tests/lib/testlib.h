/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Helpers for the guest tests: loading modules with libkmod, finding the
 * scsi_debug and NVMe test devices, reading sysfs and /proc/slabinfo.
 *
 * Environment (set by tests/guest/run-suite.sh):
 *   DIO_MODDIR  the running kernel's module directory (modules.dep)
 *   DIO_KO      path of the dio_batch.ko built for the running kernel
 *   DIO_FLAVOUR the guest kernel's flavour, "debug" for the debug kernel
 *               (set by tests/vm/check.sh)
 * Functions return 0 or a negative errno unless they say otherwise, and
 * print what went wrong to stderr.
 */
#ifndef DIO_TESTLIB_H
#define DIO_TESTLIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int tl_kmod_insert_path(const char *path, const char *opts);
int tl_kmod_probe(const char *name, const char *opts);
int tl_kmod_remove(const char *name);
int tl_module_loaded(const char *name);

/* dio_batch itself, from $DIO_KO; 0 if it was already loaded. */
int tl_dio_load(void);
int tl_dio_unload(void);

/*
 * Load scsi_debug with @opts and wait for its disk(s).  @dev receives the
 * first disk's /dev path.  Unload with tl_scsi_debug_unload().
 */
int tl_scsi_debug_load(const char *opts, char *dev, size_t devlen);
int tl_scsi_debug_unload(void);
/* All scsi_debug disks, as "sdX" names; returns how many (at most max). */
int tl_scsi_debug_disks(char names[][32], int max);
/* Wait up to 10 s (x tl_slow_factor()) for @want of them; returns how many there are. */
int tl_scsi_debug_wait_disks(int want, char names[][32], int max);

/* Load the NVMe driver and wait for namespace @nsid of controller 0. */
int tl_nvme_dev(int nsid, char *dev, size_t devlen);
/* Is NVMe namespace @nsid of nvme0 in /sys/block now?  No loading, no wait. */
bool tl_nvme_present(int nsid, char *dev, size_t devlen);

/* The format of an NVMe namespace, as the controller reports it. */
struct tl_nvme_format {
	unsigned int	lba_size;	/* data bytes per block */
	unsigned int	ms;		/* metadata bytes per block */
	bool		ext;		/* metadata inline with the data (FLBAS bit 4) */
	int		pi_type;	/* 0 (none), 1, 2 or 3 (DPS) */
	bool		pi_first;	/* PI in the first bytes of the metadata */
	int		pif;		/* PI format: 0 16-bit guard, 2 64-bit */
};
/*
 * Identify Namespace (and the NVM command set's, for the PI format) of
 * namespace @nsid on nvme0, through /dev/nvme0.  0, the NVMe status (> 0)
 * or -errno.
 */
int tl_nvme_format(int nsid, struct tl_nvme_format *f);

/*
 * Give disk @dev an MBR with one Linux partition of @blocks logical
 * blocks from block @start (so it starts @start * the logical block size
 * bytes in: sysfs's "start" says that in 512-byte sectors), have the
 * kernel read it (BLKRRPART) and wait up to 5 s (x tl_slow_factor()) for
 * the partition's node, whose path goes into @part ("/dev/sdb1",
 * "/dev/nvme0n1p1").  Nothing on the disk may be open.  0 or -errno.
 */
int tl_partition_make(const char *dev, uint32_t start, uint32_t blocks,
		      char *part, size_t partlen);
/*
 * The disk without a partition table again (its first sector zeroed,
 * BLKRRPART), and @part's node gone.  0 or -errno.
 */
int tl_partition_remove(const char *dev, const char *part);

/* First line of a sysfs file (malloc'd, no newline) or NULL. */
char *tl_sysfs_read(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "sdb" for "/dev/sdb". */
const char *tl_basename(const char *dev);

/*
 * Active objects of a slab cache, -1 when it does not exist.  For
 * "dio_kreq": the live requests, less the structs descriptors keep for
 * reuse (debugfs dio_batch/kept_kreqs).
 */
long tl_slab_active(const char *cache);
/*
 * Wait up to @seconds (x tl_slow_factor()) for a cache to hold @want
 * objects (RCU and deferred frees take a moment); returns the last count
 * seen.
 */
long tl_slab_wait(const char *cache, long want, int seconds);
/* tl_slab_wait() == @want, saying on stderr what it saw when not. */
int tl_slab_reaches(const char *cache, long want, int seconds);

/* Write @val to a sysfs/procfs file; 0 or -errno. */
int tl_write_file(const char *path, const char *val);
/*
 * scsi_debug's completion delay in ns, below 1 s (0: scsi_debug's default
 * of one jiffy, whichever delay was set before); retried while the driver
 * refuses it because commands are queued.  0 or -errno.
 */
int tl_scsi_debug_ndelay(long ns);
/*
 * The same in ms, without ndelay's limit: from 1 s on as scsi_debug's
 * "delay", in jiffies of the running kernel (tl_kernel_hz()).  Either way
 * a command completes @ms after scsi_debug queued it (an hrtimer), never
 * sooner.  0 or -errno.
 */
int tl_scsi_debug_delay_ms(long ms);
/*
 * The running kernel's HZ (Debian's kernels: 250; the debug and kcsan
 * builds: 1000): the jiffies of /proc/timer_list counted over 200 ms,
 * rounded to 100, 250 or 1000; measured once, said on stdout.  -1 if
 * /proc/timer_list cannot be read.
 */
int tl_kernel_hz(void);

/*
 * Last component of what the symlink @path points to, in @out ("" and
 * -errno when it cannot be read).
 */
int tl_link_name(const char *path, char *out, size_t len);
/* "H:C:T:L" of SCSI disk @name ("sdb"), or "". */
void tl_scsi_hctl(const char *name, char *out, size_t len);

/*
 * Give /dev/dio_batch mode @mode (e.g. 0666, as a udev rule for a group
 * would give it to users who are not root), its mode before in *@old.
 * 0 or -errno, said on stderr.
 */
int tl_dio_ctl_chmod(unsigned int mode, unsigned int *old);

/* dio_batch's module reference count, -1 when it is not loaded. */
long tl_dio_refcnt(void);
/*
 * Wait up to @seconds for each of dio_batch's slab caches to hold no
 * objects; prints "# CACHE: N objects left" for each that does not.
 * 1 if all drained.
 */
int tl_dio_caches_drained(int seconds);
/*
 * Print "# @what: ok=N Input/output error=N ..." on stdout: the non-zero
 * counts of @hist[@nerr], indexed by errno (0: success).
 */
void tl_print_hist(const char *what, const long *hist, int nerr);

/* CLOCK_MONOTONIC in ns. */
uint64_t tl_now_ns(void);
/* @len bytes aligned to 4096, every byte @byte; NULL if out of memory. */
void *tl_alloc(size_t len, int byte);
/* A 64-bit mixer (MurmurHash3's finaliser): the test data generator. */
uint64_t tl_mix(uint64_t x);
/* Content unique to @tag at every 8 bytes (len / 8 words of tl_mix()). */
void tl_fill(void *buf, size_t len, uint64_t tag);

/*
 * 1 on a sanitizer kernel built from source (flavours debug and kcsan: slow,
 * smaller time budgets), 0 on a stock one; -1 when $DIO_FLAVOUR is not set.
 */
int tl_debug_kernel(void);
/*
 * How much slower than a stock kernel a test takes its kernel to be: 4 on
 * the sanitizer kernels (KASAN, lockdep, kmemleak or KCSAN, HZ 1000: 5 to
 * 20 times slower under TCG), 1 on a stock one, 4 when $DIO_FLAVOUR is not
 * set (the safe side).  Every bound that waits for something multiplies
 * by it: this library's (devices appearing, slab counts, scsi_debug's
 * queue draining, module removal) and the tests' own, and so do the
 * delays that keep requests at the device while a test looks at them.
 * Each such bound has a margin of ten or more over what it waits for on
 * a loaded stock guest (2 vCPUs under TCG, two guests on two host cores),
 * so that the factor, the one t_bounds and the fuzzers already gave the
 * debug kernel (250 disks for 1000, up to four times a time budget), covers
 * the debug kernel's slowness as well.  A wait ends as soon as what it
 * waits for happens: the factor lengthens only a failing test.
 */
int tl_slow_factor(void);

/* Is the running kernel at least MAJ.MIN? */
int tl_kernel_at_least(int maj, int min);

/* Run a shell command; returns its exit status. */
int tl_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Calls that show their values (testcheck.c; cmocka programs only, linked
 * with libdioctl): they fail the test, or return -errno instead of -1, so
 * that assert_int_equal(tl_ioctl(...), -EINVAL) shows the error it got.
 */
struct dio_request;
struct timespec;
/* tl_alloc(), failing the test when out of memory. */
void *tl_xalloc(size_t len, int byte);
/* @ret, or -errno when @ret < 0 (call it with the call's value). */
int tl_errno(int ret);
/* ioctl(), sys_dio_submit(), sys_dio_wait(), sys_dio_collect(): -errno on failure. */
int tl_ioctl(int fd, unsigned long cmd, void *arg);
int tl_dio_submit(int ctx, struct dio_request **r, unsigned int nr);
int tl_dio_wait(int ctx, struct dio_request **r, unsigned int nr,
		const struct timespec *ts);
int tl_dio_collect(int ctx, struct dio_request **r, unsigned int min_nr,
		   unsigned int nr, const struct timespec *ts);

#endif
