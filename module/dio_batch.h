/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dio_batch: internal types shared by the module's files.
 *
 * Objects and who keeps them alive:
 *
 *  struct dio_ctx     a context (context.c): the handle table, named by a
 *                     key (or private).  One kref per descriptor and per
 *                     handle.
 *  struct dio_file    one context descriptor (file.c), an anon inode file:
 *                     its own completion queue and request table.  One kref
 *                     for the open file and one per request not yet
 *                     reported.
 *  struct dio_handle  a claimed block device in a context (handle.c).  One
 *                     kref for the context's table (dropped when the last
 *                     opener goes, which revokes the handle) and one per
 *                     request.
 *  struct dio_opener  one descriptor's hold on a handle: how many OPENs it
 *                     has not closed, and the block device files they came
 *                     through (one reference each), which give the handle
 *                     its access.  Freed when the count reaches 0.
 *  struct dio_kreq    the kernel's state of one submitted request (io.c),
 *                     keyed by the user address of its struct dio_request
 *                     in the descriptor's table; freed when reported.
 *  struct dio_user    what one user has pinned by I/O in flight (user.c);
 *                     one reference per request that charged it.
 *  struct dio_fixed   a descriptor's registered buffers (fixed.c): one
 *                     reference while registered and one per request
 *                     using them, dropped when the request is freed.
 *  struct dio_dev     a device's counts since the module was loaded
 *                     (counters.c): made by the first handle of its
 *                     dev_t, freed when the module is unloaded.
 */
#ifndef _DIO_BATCH_INTERNAL_H
#define _DIO_BATCH_INTERNAL_H

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/hashtable.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/mm_types.h>
#include <linux/sizes.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <linux/dio_batch.h>

#include "compat.h"

#define DIO_MAX_BATCH		4096U
/* A descriptor's request table: 256 buckets (max_inflight is 1024). */
#define DIO_REQ_HASH_BITS	8
#define DIO_MAX_PI_PAGES	32U
#define DIO_MAX_PI_BYTES	(64U * 1024)
#define DIO_MAX_IO_BYTES	(64U * 1024 * 1024)
/* Most OPENs of one handle through one descriptor not yet closed. */
#define DIO_MAX_OPENS		65536U
/* Registered buffers: most per set, and largest (io_uring's 1 GiB). */
#define DIO_MAX_FIXED_BUFS	1024U
#define DIO_MAX_FIXED_BUF_BYTES	((u64)SZ_1G)

struct dio_dev;
struct dio_fixed;
struct dio_kbuf;

extern unsigned int dio_max_inflight;
extern unsigned int dio_max_user_pinned_mb;
extern struct workqueue_struct *dio_wq;
extern struct bio_set dio_bio_set;

/* Set at creation and then only read, but for the fields that say. */
struct dio_ctx {
	struct kref		ref;
	unsigned int		users;		/* descriptors; dio_ctx_mutex */
	u64			key;
	bool			keyed;
	struct ipc_namespace	*ipc_ns;	/* where the key lives */
	kuid_t			uid;		/* owner */
	kgid_t			gid;
	kuid_t			cuid;		/* creator */
	kgid_t			cgid;
	struct pid		*cpid;
	umode_t			mode;
	struct list_head	node;		/* dio_ctx_list, when keyed */
	struct mutex		lock;		/* handles: open, close, revoke */
	/* id -> struct dio_handle: changed under @lock, looked up in RCU */
	struct xarray		handles;
	u32			next_id;	/* xa_alloc_cyclic()'s; @lock */
};

/*
 * What DIO_IOC_COUNTERS reports (counters.c), in the order of struct
 * dio_counters' fields from @reads on.  The first three and the two byte
 * counts are indexed by DIO_OP_*.
 */
enum dio_cnt {
	DIO_CNT_READS,
	DIO_CNT_WRITES,
	DIO_CNT_FLUSHES,
	DIO_CNT_READ_BYTES,
	DIO_CNT_WRITE_BYTES,
	DIO_CNT_IO_ERRORS,
	DIO_CNT_REFUSED,
	DIO_CNT_PI_GUARD,
	DIO_CNT_PI_APP,
	DIO_CNT_PI_REF,
	DIO_CNT_PI_UNKNOWN,
	DIO_CNT_PI_USER,
	DIO_CNT_PI_MODULE,
	DIO_CNT_PI_DEVICE,
	DIO_CNT_NR
};

/* A handle's counts on one CPU: this_cpu_*() only, summed when read. */
struct dio_counts {
	u64			v[DIO_CNT_NR];
};

struct dio_handle {
	struct kref		ref;
	struct rcu_head		rcu;
	struct dio_ctx		*ctx;
	u32			id;
	struct list_head	openers;	/* dio_opener.node; ctx->lock */
	/*
	 * The files requests are checked against (rw_verify_area()): one of
	 * a readable and one of a writable opener, NULL when none has that
	 * access.  Borrowed from the openers; file_lock guards them.
	 */
	spinlock_t		file_lock;
	struct file		*rfile;
	struct file		*wfile;
	bool			bdev_read;	/* the mode @bdev is open with; */
	bool			bdev_write;	/* ctx->lock */
	/* Set at creation, then only read: claimed with ctx as holder. */
	bool			claimed;
	/*
	 * Set once, under ctx->lock, when the last opener goes (WRITE_ONCE);
	 * read without it (READ_ONCE) by the lookups, dio_handle_get() and
	 * SUBMIT's batch: a request racing the revoke may still get in, with
	 * its own reference.
	 */
	bool			revoked;
	dev_t			dev;		/* set at creation */
	/*
	 * Replaced under ctx->lock when an opener with more access reopens
	 * the device (dio_handle_widen_bdev()), which keeps @bdev.bdev the
	 * same block device.  Requests and QUERY read @bdev.bdev, and nothing
	 * else of it, without the lock, through a reference to the handle.
	 */
	struct dio_bdev		bdev;
	/* dio_bdev_integrity()'s cache: one word, READ_ONCE/WRITE_ONCE. */
	unsigned long		pi_profile;
	/* Its requests' counts, per CPU; set at creation (counters.c). */
	struct dio_counts __percpu *counts;
	/* Its device's counts, and its place in them; counters.c's lock. */
	struct dio_dev		*dstats;
	struct list_head	dev_node;
};

/* All under ctx->lock. */
struct dio_opener {
	struct list_head	node;		/* dio_handle.openers */
	struct dio_handle	*h;
	unsigned int		count;		/* OPENs not yet closed */
	struct file		*rfile;		/* readable descriptor, or NULL */
	struct file		*wfile;		/* writable descriptor, or NULL */
};

struct dio_user {
	struct hlist_node	node;		/* user.c's table; its lock */
	kuid_t			uid;
	refcount_t		ref;		/* to 0 under the table's lock */
	atomic_long_t		pinned;		/* bytes, whole pages */
};

struct dio_file {
	struct kref		ref;
	struct dio_ctx		*ctx;
	struct mm_struct	*mm;		/* creator's: submits, reports */
	/*
	 * @lock (IRQ-safe) guards the request table and nr_reqs, the done
	 * list, nr_done and released; completions take it from interrupt
	 * context.  Read without it (READ_ONCE), where a stale value costs
	 * only a later look: nr_done by poll and by COLLECT's wait condition,
	 * released by a PI bisection that stops early for a closed descriptor
	 * (integrity.c).
	 */
	spinlock_t		lock;
	DECLARE_HASHTABLE(reqs, DIO_REQ_HASH_BITS);	/* key -> dio_kreq */
	struct list_head	done;
	unsigned int		nr_done;
	unsigned int		nr_reqs;	/* submitted, not yet reported */
	bool			released;
	wait_queue_head_t	wait;
	struct work_struct	reap_work;
	/* Completions that may sleep, for complete_work (complete.c). */
	struct llist_head	complete;
	struct work_struct	complete_work;
	struct xarray		opened;		/* id -> dio_opener; ctx->lock */
	/* @fixed; REGISTER's early -EBUSY reads it without (READ_ONCE). */
	spinlock_t		fixed_lock;
	struct dio_fixed	*fixed;		/* registered buffers, or NULL */
	/* Reported requests' structs, kept for reuse (io.c). */
	struct llist_head	kreq_cache;
	atomic_t		nr_kreq_cache;
	/*
	 * Where requests' PI buffers of up to a page come from (integrity.c,
	 * dio_pi_alloc()): fragments of compound pages, charged to the
	 * descriptor's submitters.  @pi_frag_lock: SUBMIT's threads.
	 */
	struct mutex		pi_frag_lock;
	struct page_frag_cache	pi_frag;
};

/*
 * Is the caller the process that created @df (or one of its threads)?
 * Only it may SUBMIT, WAIT, COLLECT and register buffers (DIO_CMD_MINE in
 * the descriptor's command table), so that results are written only into
 * the memory of the process that submitted.
 */
static inline bool dio_file_is_mine(const struct dio_file *df)
{
	return current->mm == df->mm;
}

/*
 * Every bio the module allocates comes from dio_bio_set with this in front
 * of it: which of its request's protection intervals its data starts at.
 * The request's own bios carry it from submission to release (6.1 frees
 * the integrity payload at completion, so it cannot be read back there).
 */
struct dio_bio {
	u64			first;
	struct bio		bio;
};

static inline struct dio_bio *dio_bio(struct bio *bio)
{
	return container_of(bio, struct dio_bio, bio);
}

/*
 * What a request reports: struct dio_request's fields from result to
 * pi_err_source, written back by dio_put_result().
 */
struct dio_result {
	s64			result;
	u64			pi_err_interval;
	u64			pi_err_expected;
	u64			pi_err_actual;
	u8			pi_err_tag;
	u8			pi_err_source;
};

/* dio_kreq.pi_order of a PI buffer that is a page fragment. */
#define DIO_PI_FRAG	UINT_MAX

/*
 * A request has one owner at a time, who needs no lock for the fields no
 * comment gives one: its submitter, until dio_submit_one() drops the
 * submission bias of @remaining; then whoever drops @remaining to 0 (the
 * last bio's completion, or the completion work it queues), until
 * dio_kreq_complete() puts it on the done list under df->lock; then
 * whoever claims it there under df->lock (WAIT, COLLECT or the reaper),
 * until it is freed.  Meanwhile the bios' completions touch only @error,
 * @bios and @remaining.
 */
struct dio_kreq {
	struct hlist_node	hnode;		/* dio_file.reqs; df->lock */
	struct list_head	node;		/* dio_file.done; df->lock */
	/* dio_file.complete while live; dio_file.kreq_cache once freed */
	struct llist_node	complete;
	struct dio_file		*df;
	struct dio_handle	*h;
	/* Both held until the request is freed (reported or reaped). */
	struct file		*file;		/* checked at submission; notified */
	struct dio_user		*user;		/* charged @pinned, or NULL */
	unsigned long		pinned;
	/* DIO_REQ_FIXED: the set, held until freed, and the buffer. */
	struct dio_fixed	*fixed;
	const struct dio_kbuf	*fbuf;
	u64			uaddr;		/* user struct dio_request */
	atomic_t		remaining;	/* bios + submission bias */
	/*
	 * The first error, or 0: set only by cmpxchg() (bios' completions,
	 * the submitter's bio that failed to build, and its page cache
	 * step, submit.c); read once @remaining is 0, when it is final.
	 */
	int			error;
	bool			done;		/* on the done list; df->lock */
	bool			claimed;	/* being reported; df->lock */
	u8			opcode;
	u64			bytes;
	/* @bios while bios complete; none is needed once @remaining is 0 */
	spinlock_t		bio_lock;
	struct bio		*bios;		/* completed, pages still held */
	void			*pi;		/* kernel PI buffer, or NULL */
	unsigned int		pi_order;	/* its pages' order, or DIO_PI_FRAG */
	unsigned int		pi_len;		/* bytes of PI for the data */
	unsigned int		pi_off;		/* bytes given to bios so far */
	struct dio_bi		bi;		/* the device's PI format */
	/* ktime_get_ns() at submission while dio_batch_complete is traced */
	u64			start_ns;
	/* To write back: the owner's (see above), none other touches it. */
	struct dio_result	out;
	/*
	 * Last, not zeroed by dio_kreq_alloc(): the only part of the struct
	 * user copies go to and from (the cache's whitelist).
	 */
	struct dio_request	ureq;		/* the request as submitted */
};

/*
 * An ioctl command, one entry of a device's table (main.c, file.c): its
 * number, its argument struct's size and first published size, what
 * dio_cmd_run() does around it (DIO_CMD_*), and the command itself, given
 * the calling descriptor (NULL on the control device), the struct copied
 * in (@arg) and the user's struct (@uarg).
 */
struct dio_cmd {
	unsigned int	cmd;
	unsigned int	flags;
	u32		size;
	u32		min_size;
	long		(*fn)(struct dio_file *df, void *arg, void __user *uarg);
};

/* Only the process that created the descriptor: -EXDEV for another. */
#define DIO_CMD_MINE		BIT(0)
/* The struct is written back when the command succeeds. */
#define DIO_CMD_OUT		BIT(1)
/* An output-only struct: only its size is read (DIO_IOC_FEATURES). */
#define DIO_CMD_OUT_ONLY	BIT(2)

/* Room for any command's struct, which dio_cmd_run() copies in and out. */
union dio_cmd_arg {
	struct dio_features	features;
	struct dio_init		init;
	struct dio_open		open;
	struct dio_close	close;
	struct dio_query	query;
	struct dio_stat		stat;
	struct dio_submit	submit;
	struct dio_wait		wait;
	struct dio_register	reg;
	struct dio_counters	counters;
};

/* A table entry; @_arg names its struct as a member of union dio_cmd_arg. */
#define DIO_CMD(_cmd, _arg, _min_size, _flags, _fn) {			\
	.cmd		= _cmd,						\
	.flags		= _flags,					\
	.size		= sizeof_field(union dio_cmd_arg, _arg),	\
	.min_size	= _min_size,					\
	.fn		= _fn,						\
}

/* abi_check.c */
void dio_abi_check(void);

/* uarg.c */
long dio_cmd_run(const struct dio_cmd *cmds, size_t nr, struct dio_file *df,
		 unsigned int cmd, void __user *uarg);
int dio_get_usize(const void __user *uarg, size_t min_size, u32 *usize);
int dio_copy_arg(void *karg, size_t ksize, size_t min_size,
		 const void __user *uarg);
int dio_copy_request(struct dio_request *r, u64 uaddr);
int dio_put_result(u64 uaddr, const struct dio_result *res);

/* context.c */
struct dio_ctx *dio_ctx_join(const struct dio_init *in);
long dio_ctx_stat_ioctl(struct dio_file *df, void *arg, void __user *uarg);
void dio_ctx_leave(struct dio_ctx *ctx);
void dio_ctx_put(struct dio_ctx *ctx);
int dio_ctx_module_init(void);
void dio_ctx_module_exit(void);

/* file.c */
long dio_file_init_ioctl(struct dio_file *df, void *arg, void __user *uarg);
void dio_file_put(struct dio_file *df);
int dio_file_module_init(void);
void dio_file_module_exit(void);

/* handle.c */
long dio_handle_open_ioctl(struct dio_file *df, void *arg,
			   void __user *uarg);
long dio_handle_close_ioctl(struct dio_file *df, void *arg,
			    void __user *uarg);
long dio_handle_query_ioctl(struct dio_file *df, void *arg,
			    void __user *uarg);
long dio_handle_counters_ioctl(struct dio_file *df, void *arg,
			       void __user *uarg);
struct dio_handle *dio_handle_get(struct dio_ctx *ctx, u32 id);
struct file *dio_handle_file(struct dio_handle *h, bool write);
int dio_write_allowed(struct file *file, int err_ro);
void dio_handle_put(struct dio_handle *h);
void dio_opener_free(struct dio_file *df, struct dio_opener *op);
int dio_handle_module_init(void);
void dio_handle_module_exit(void);

/* user.c */
struct dio_user *dio_user_get(void);
void dio_user_put(struct dio_user *u);
int dio_user_charge(struct dio_user *u, unsigned long bytes);
void dio_user_uncharge(struct dio_user *u, unsigned long bytes);

/* fixed.c */
long dio_fixed_register_ioctl(struct dio_file *df, void *arg,
			      void __user *uarg);
long dio_fixed_unregister_ioctl(struct dio_file *df, void *arg,
				void __user *uarg);
int dio_fixed_unregister(struct dio_file *df);
struct dio_fixed *dio_fixed_get(struct dio_file *df);
struct dio_fixed *dio_fixed_hold(struct dio_fixed *f);
void dio_fixed_put(struct dio_fixed *f);
const struct dio_kbuf *dio_fixed_find(const struct dio_fixed *f, u32 index,
				      u64 addr, u64 len);
unsigned int dio_fixed_bio_add(struct bio *bio, const struct dio_kbuf *b,
			       u64 addr, u64 len, unsigned int lbs);
unsigned long dio_fixed_pages(u64 addr, u64 len);

/* counters.c */
int dio_counts_init(struct dio_handle *h);
void dio_counts_exit(struct dio_handle *h);
void dio_count_error(struct dio_counts __percpu *c,
		     const struct dio_result *out);
void dio_count_refused(struct dio_kreq *kreq);
void dio_counters_fill(struct dio_handle *h, struct dio_counters *c);
void dio_counters_module_exit(void);

/* io.c */
extern atomic_t dio_kreqs_kept;
struct dio_kreq *dio_kreq_lookup(struct dio_file *df, u64 uaddr);
int dio_kreq_insert(struct dio_file *df, struct dio_kreq *kreq);
void dio_kreq_remove(struct dio_file *df, struct dio_kreq *kreq);
struct dio_kreq *dio_kreq_alloc(struct dio_file *df, struct llist_node **kept);
void dio_kreq_cache_drain(struct dio_file *df);
void dio_kreq_release(struct dio_kreq *kreq);
void dio_kreq_free(struct dio_kreq *kreq);
void dio_kreq_remove_list(struct dio_file *df, struct list_head *list);
int dio_io_module_init(void);
void dio_io_module_exit(void);

/* submit.c */
long dio_submit_ioctl(struct dio_file *df, void *arg, void __user *uarg);

/* pagecache.c */
int dio_kreq_sync_cache(struct dio_kreq *kreq);
bool dio_kreq_written_cached(const struct dio_kreq *kreq);
void dio_kreq_invalidate_written(struct dio_kreq *kreq);

/* complete.c */
void dio_kreq_put(struct dio_kreq *kreq);
void dio_bio_end_io(struct bio *bio);
void dio_kreq_complete_work(struct work_struct *work);

/* wait.c */
long dio_wait_ioctl(struct dio_file *df, void *arg, void __user *uarg);
long dio_collect_ioctl(struct dio_file *df, void *arg, void __user *uarg);

/* integrity.c */
extern atomic64_t dio_locate_reads;
int dio_pi_check_request(struct dio_kreq *kreq);
int dio_pi_prepare(struct dio_kreq *kreq);
int dio_pi_attach(struct dio_kreq *kreq, struct bio *bio);
bool dio_pi_needs_process(struct dio_kreq *kreq);
void dio_pi_complete(struct dio_kreq *kreq);
void dio_pi_report(struct dio_kreq *kreq);
void dio_pi_free(struct dio_kreq *kreq);

#endif /* _DIO_BATCH_INTERNAL_H */
