// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Multi-process stress with data verification.  Writer processes share a
 * keyed context and write and read verified patterns on two devices (a
 * scsi_debug disk with DIF/DIX and NVMe namespace 1 with PI type 1, the
 * block layer generating and checking PI), while churner processes join
 * and leave the context, open and close handles (the same devices, and a
 * second LUN claimed and released), and the parent SIGKILLs writers and
 * churners at random moments and starts replacements.
 *
 * Every 512-byte sector written carries a header (device, slot, block,
 * sector, writer incarnation, generation) and a payload derived from it,
 * so a stale, misplaced, torn or corrupt sector is found.  Each writer
 * incarnation owns one slot (2 MiB) per device and knows the generation
 * of each of its blocks; a block has at most one request in flight.
 * Reads of its own blocks must return exactly the last generation
 * written; reads of other slots must return sectors that are consistent
 * and in their place.  At the end, once every request of the killed
 * processes completed, every slot is read back: the blocks of a killed
 * writer may hold the generation confirmed or the one in flight.
 *
 * Asserts: no mismatch, every request of a process that was not killed
 * reported (none lost) with its full length, every process not killed
 * exits cleanly, nothing left allocated.  Prints the counts.
 * Duration: DIO_STRESS_SECONDS (default 30 on the debug kernel, 20
 * elsewhere).  Before it, a directed case: a descriptor shared by fork()
 * is the parent's; the child's SUBMIT and COLLECT on it are EXDEV, and the
 * parent's reads are reported to the parent alone.
 *
 * PI, when the module announces DIO_FEAT_PI (see "PI:" in prep()): a
 * third of the writes carry PI generated with libdioctl, a third have the
 * module generate it with the incarnation as app tag, the rest leave it to
 * the block layer; two thirds of the reads return PI, checked against the
 * data, the reference tags and each block's app tag.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

#define KiB		1024ULL
#define MiB		(1024 * KiB)
#define SECT		512
#define BLK		4096
#define SPB		(BLK / SECT)		/* sectors per block */
#define SLOT_BLOCKS	512			/* 2 MiB */
#define NSLOT		24			/* 48 MiB of each device */
#define NDEV		2
#define NWRITERS	4
#define NCHURN		2
#define QD		12			/* requests in flight per writer */
#define MAXNB		8			/* blocks per request */
#define MAGIC		0xd10b5eedU
#define KEY		0x57e55ULL
#define MAXINC		(NSLOT)			/* incarnations: one slot each */
#define MAXPROC		(MAXINC + 64)

/* One slot of one device. */
struct slot {
	int owner;			/* incarnation, 0: never used */
	int dead;			/* its writer was killed */
	uint32_t confirmed[SLOT_BLOCKS];	/* generation reported done */
	uint32_t pending[SLOT_BLOCKS];	/* generation in flight, 0: none */
	uint32_t maxgen[SLOT_BLOCKS];	/* highest generation issued */
	uint16_t app[SLOT_BLOCKS];	/* PI app tag of the confirmed write */
	uint16_t app_pending[SLOT_BLOCKS];
};

struct pstat {
	pid_t pid;
	int inc;			/* writer incarnation, 0: churner */
	int killed;
	int clean_exit;
	long submitted, reported;
	long reads, writes, flushes, bytes;
	long cross_reads;
	long pi_writes, pi_reads;	/* with a PI buffer (or GEN_APPTAG) */
	long churn_ops;
	long mismatches;
	long errors;
	char why[200];
};

struct shared {
	volatile int stop;
	int handle[NDEV + 1];		/* the parent's handles: 2 devices, LUN 1 */
	struct slot slot[NDEV][NSLOT];
	struct pstat p[MAXPROC];
};

static struct shared *sh;
static bool use_pi;			/* DIO_FEAT_PI announced */
static struct dio_pi_profile prof[NDEV];
static char devpath[NDEV + 1][64];	/* scsi_debug LUN 0, nvme0n1, LUN 1 */
static bool debug_kernel;

/* ---- helpers ---- */

/* Each process's state of the tests' random source (tl_rand()). */
static __thread uint64_t rs;

static uint64_t rnd(void)
{
	return tl_rand(&rs);
}

static unsigned int rn(unsigned int n)
{
	return tl_rand_below(&rs, n);
}

/* ---- the stamp ---- */

struct sect_hdr {
	uint32_t magic;
	uint8_t dev;
	uint8_t slot;
	uint16_t sect;			/* in the block */
	uint32_t block;			/* absolute, on the device */
	uint32_t inc;
	uint32_t gen;
	uint32_t pad;
};

static void stamp_sector(uint8_t *s, int dev, int slot, uint32_t block,
			 int sect, uint32_t inc, uint32_t gen)
{
	struct sect_hdr h = { MAGIC, dev, slot, sect, block, inc, gen, 0 };
	uint64_t seed = tl_mix(((uint64_t)inc << 32 | gen) ^ tl_mix((uint64_t)block << 8 | sect) ^ dev);
	uint64_t *p = (uint64_t *)(s + sizeof(h));

	memcpy(s, &h, sizeof(h));
	for (size_t i = 0; i < (SECT - sizeof(h)) / 8; i++)
		p[i] = tl_mix(seed + i);
}

static void stamp_block(uint8_t *b, int dev, int slot, uint32_t block,
			uint32_t inc, uint32_t gen)
{
	for (int s = 0; s < SPB; s++)
		stamp_sector(b + s * SECT, dev, slot, block, s, inc, gen);
}

/*
 * Check one sector read from (dev, slot, block, sect): in its place and
 * consistent.  Returns its header in *@h.  0, or a static reason.
 */
static const char *check_sector(const uint8_t *s, int dev, int slot, uint32_t block,
				int sect, struct sect_hdr *h)
{
	static uint8_t want[SECT];

	memcpy(h, s, sizeof(*h));
	if (h->magic != MAGIC)
		return "no stamp";
	if (h->dev != dev || h->slot != slot || h->block != block || h->sect != sect)
		return "misplaced";
	stamp_sector(want, dev, slot, block, sect, h->inc, h->gen);
	if (memcmp(want, s, SECT))
		return "corrupt payload";
	return NULL;
}

static uint32_t slot_block(int slot, int b)
{
	return slot * SLOT_BLOCKS + b;
}

/* ---- writers ---- */

struct wreq {
	struct dio_request r;
	int dev;
	int first;			/* block in the slot */
	int nb;
	bool write;
	bool flush;
	bool iovec;
	bool cross;			/* a read of another slot */
	int cross_slot;
	uint32_t gen[MAXNB];
	uint32_t c0[MAXNB];		/* cross: generation confirmed at submission */
	/*
	 * PI: 0 none (the block layer, or the module, generates and checks);
	 * 1 a PI buffer (write: generated here; read: checked here);
	 * 2 write: DIO_PI_GEN_APPTAG; 3 read: a PI buffer and
	 * DIO_PI_CHK_APPTAG against the incarnation.
	 */
	int pimode;
	uint16_t app[MAXNB];		/* read: app tag expected per block */
	uint8_t *pi;
	uint8_t *buf;			/* MAXNB blocks */
	struct iovec iov[MAXNB];
	bool busy;
};

static struct pstat *me;

/* What a failed request says, PI report included. */
static const char *res_str(const struct dio_request *r)
{
	static char b[160];

	if (r->result == -EILSEQ)
		snprintf(b, sizeof(b), "%lld (PI: interval %llu tag %u source %u "
			 "expected %#llx actual %#llx)", (long long)r->result,
			 (unsigned long long)r->pi_err_interval, r->pi_err_tag,
			 r->pi_err_source, (unsigned long long)r->pi_err_expected,
			 (unsigned long long)r->pi_err_actual);
	else
		snprintf(b, sizeof(b), "%lld", (long long)r->result);
	return b;
}

static void wfail(const char *fmt, ...)
{
	va_list ap;

	if (!me->why[0]) {
		va_start(ap, fmt);
		vsnprintf(me->why, sizeof(me->why), fmt, ap);
		va_end(ap);
	}
}

/* The app tag an incarnation writes: never 0 (the kernel's) nor 0xffff. */
static uint16_t inc_app(int inc)
{
	return 1 + inc % 0xfffd;
}

/* App tag of tuple @t of @pi. */
static uint16_t tuple_app(const struct dio_pi_profile *p, const uint8_t *pi, int t)
{
	const uint8_t *a = pi + t * p->tuple_size + (p->tuple_size == 16 ? 8 : 2);

	return a[0] << 8 | a[1];
}

/* A read with a PI buffer: the tuples match the data and carry the app tags. */
static const char *check_read_pi(struct wreq *q, uint64_t off)
{
	const struct dio_pi_profile *p = &prof[q->dev];
	struct dio_pi_error e;
	int tpb = BLK / p->interval, ret;

	if (q->iovec)
		ret = dio_pi_verify_iov(p, q->iov, q->nb, q->pi,
					&(struct dio_pi_params){ .seed = off / p->interval,
								 .chk_flags = DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG },
					&e);
	else
		ret = dio_pi_verify(p, q->buf, (size_t)q->nb * BLK, q->pi,
				    &(struct dio_pi_params){ .seed = off / p->interval,
							     .chk_flags = DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG },
				    &e);
	if (ret)
		return e.tag == DIO_PI_TAG_REF ? "PI ref tag" : "PI guard";
	for (int b = 0; b < q->nb; b++)
		for (int t = 0; t < tpb; t++)
			if (tuple_app(p, q->pi, b * tpb + t) != q->app[b])
				return "PI app tag";
	return NULL;
}

static int join(int *h)
{
	int ctx = sys_dio_init(KEY, 0), i;

	if (ctx < 0) {
		wfail("joining the context: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < NDEV; i++) {
		int fd = open(devpath[i], O_RDWR | O_CLOEXEC);

		h[i] = fd >= 0 ? sys_dio_open(ctx, fd, 0) : -1;
		if (fd >= 0)
			close(fd);
		if (h[i] != sh->handle[i]) {
			wfail("dev %d: handle %d, the context has %d (%s)", i, h[i],
			      sh->handle[i], strerror(errno));
			close(ctx);
			return -1;
		}
	}
	return ctx;
}

static void complete(struct wreq *q, int inc, int myslot)
{
	struct slot *sl = &sh->slot[q->dev][myslot];
	int64_t want = q->flush ? 0 : (int64_t)q->nb * BLK;
	int b, s;

	me->reported++;
	q->busy = false;
	if (q->r.result != want) {
		me->errors++;
		wfail("%s dev %d %sblock %d x%d%s: result %s", q->flush ? "flush" :
		      q->write ? "write" : "read", q->dev, q->cross ? "other slot, " : "",
		      q->first, q->nb, q->iovec ? " iovec" : "", res_str(&q->r));
		/* Its blocks stay uncertain: both generations allowed. */
		return;
	}
	if (q->flush)
		return;
	me->bytes += want;
	if (!q->write && (q->pimode == 1 || q->pimode == 3)) {
		const char *why = check_read_pi(q, (uint64_t)slot_block(myslot, q->first) * BLK);

		if (why) {
			me->mismatches++;
			wfail("read dev %d block %d x%d%s with PI (mode %d): %s",
			      q->dev, q->first, q->nb, q->iovec ? " iovec" : "",
			      q->pimode, why);
		}
	}
	for (b = 0; b < q->nb; b++) {
		int blk = q->first + b;
		const uint8_t *p = q->iovec ? q->iov[b].iov_base : q->buf + b * BLK;

		if (q->write) {
			sl->confirmed[blk] = q->gen[b];
			sl->app[blk] = sl->app_pending[blk];
			sl->pending[blk] = 0;
			continue;
		}
		for (s = 0; s < SPB; s++) {
			struct sect_hdr h;
			int sln = q->cross ? q->cross_slot : myslot;
			const char *why = check_sector(p + s * SECT, q->dev, sln,
						       slot_block(sln, blk), s, &h);

			if (!why && !q->cross &&
			    (h.inc != (uint32_t)inc || h.gen != sl->confirmed[blk]))
				why = "stale";
			/*
			 * Another slot: the owner's, at least as new as what
			 * was confirmed when the read went, at most the newest
			 * issued; unwritten if nothing was confirmed yet.
			 */
			if (why && q->cross && !q->c0[b] && !strcmp(why, "no stamp"))
				continue;
			if (!why && q->cross &&
			    h.inc != (uint32_t)sh->slot[q->dev][sln].owner)
				why = "another writer's";
			if (!why && q->cross && h.gen < q->c0[b])
				why = "stale";
			if (!why && q->cross &&
			    h.gen > sh->slot[q->dev][sln].maxgen[blk])
				why = "from the future";
			if (why) {
				me->mismatches++;
				wfail("read dev %d slot %d block %d sector %d: %s "
				      "(inc %u gen %u, want inc %d gen %u)", q->dev, sln,
				      blk, s, why, h.inc, h.gen,
				      q->cross ? sh->slot[q->dev][sln].owner : inc,
				      q->cross ? 0 : sl->confirmed[blk]);
				break;
			}
		}
	}
}

/* Find @nb free consecutive blocks of the slot on @dev; -1 if none. */
static int pick_blocks(bool *busy, int nb)
{
	for (int tries = 0; tries < 8; tries++) {
		int first = rn(SLOT_BLOCKS - nb + 1), b;

		for (b = 0; b < nb && !busy[first + b]; b++)
			;
		if (b == nb)
			return first;
	}
	return -1;
}

static void prep(struct wreq *q, int dev, int h, int inc, int myslot, bool *busy,
		 bool init_write, int init_block)
{
	struct slot *sl = &sh->slot[dev][myslot];
	unsigned int k = rn(100);
	int b;

	memset(&q->r, 0, sizeof(q->r));
	q->dev = dev;
	q->flush = false;
	q->cross = false;
	q->iovec = !init_write && rn(100) < 20;
	if (init_write) {
		q->write = true;
		q->first = init_block;
		q->nb = MAXNB;
	} else if (k < 3) {
		q->flush = true;
		q->nb = 0;
		dio_req_prep_flush(&q->r, h);
		return;
	} else {
		q->write = k < 55;
		q->nb = 1 + rn(MAXNB);
		q->first = pick_blocks(busy, q->nb);
		if (q->first < 0) {
			q->nb = 0;
			return;
		}
		/*
		 * Someone else's slot, read only, on scsi_debug: it copies
		 * under a lock, so a sector read while its owner writes it is
		 * old or new, never torn (QEMU's NVMe may tear it).
		 */
		if (!q->write && dev == 0 && rn(100) < 20) {
			q->cross = true;
			q->cross_slot = rn(NSLOT);
			if (!sh->slot[dev][q->cross_slot].owner ||
			    q->cross_slot == myslot)
				q->cross = false;
		}
	}
	for (b = 0; b < q->nb; b++) {
		int blk = q->first + b;

		if (!q->cross)
			busy[blk] = true;
		else
			q->c0[b] = sh->slot[dev][q->cross_slot].confirmed[blk];
		q->iov[b].iov_base = q->buf + ((b * 3) % MAXNB) * BLK;
		q->iov[b].iov_len = BLK;
		if (q->write) {
			uint32_t gen = sl->maxgen[blk] + 1;
			uint8_t *p = q->iovec ? q->iov[b].iov_base : q->buf + b * BLK;

			q->gen[b] = gen;
			sl->maxgen[blk] = gen;
			sl->pending[blk] = gen;	/* before the submission */
			stamp_block(p, dev, myslot, slot_block(myslot, blk), inc, gen);
		}
	}
	{
		int sln = q->cross ? q->cross_slot : myslot;
		uint64_t off = (uint64_t)slot_block(sln, q->first) * BLK;

		if (q->iovec) {
			if (q->write)
				dio_req_prep_writev(&q->r, h, q->iov, q->nb, off);
			else
				dio_req_prep_readv(&q->r, h, q->iov, q->nb, off);
		} else if (q->write) {
			dio_req_prep_write(&q->r, h, q->buf, q->nb * BLK, off);
		} else {
			dio_req_prep_read(&q->r, h, q->buf, q->nb * BLK, off);
		}
	}
	if (q->write && rn(100) < 10)
		q->r.flags |= DIO_REQ_FUA;
	/*
	 * PI (when the module announces DIO_FEAT_PI): a third of the writes
	 * carry PI generated here with libdioctl (app tag: the incarnation),
	 * a third have the module generate it (DIO_PI_GEN_APPTAG), the rest
	 * leave it to the block layer (app tag 0).  Two thirds of the reads of
	 * the writer's own blocks return PI, checked here against the data,
	 * the reference tags and the app tag each block was written with;
	 * some of them also have DIO_PI_CHK_APPTAG check the incarnation.
	 */
	q->pimode = 0;
	if (!use_pi || init_write || q->cross)
		goto no_pi;
	{
		const struct dio_pi_profile *p = &prof[dev];
		uint64_t off = (uint64_t)slot_block(myslot, q->first) * BLK;
		size_t len = (size_t)q->nb * BLK;
		uint32_t pilen = dio_pi_len(p, len);
		uint16_t app = inc_app(inc);
		bool all_mine = true;

		q->pimode = rn(3);
		if (q->write) {
			if (q->pimode == 1) {
				if (q->iovec)
					dio_pi_generate_iov(p, q->iov, q->nb, q->pi,
							    &(struct dio_pi_params){ .seed = off / p->interval,
										     .app_tag = app });
				else
					dio_pi_generate(p, q->buf, len, q->pi,
							&(struct dio_pi_params){ .seed = off / p->interval,
										 .app_tag = app });
				dio_req_set_pi(&q->r, q->pi, pilen,
					       DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG |
					       (rn(2) ? DIO_PI_VERIFY_USER : 0), 0, 0);
			} else if (q->pimode == 2) {
				q->r.pi_flags = DIO_PI_GEN_APPTAG;
				q->r.app_tag = app;
			}
			for (b = 0; b < q->nb; b++)
				sl->app_pending[q->first + b] = q->pimode ? app : 0;
			me->pi_writes += q->pimode != 0;
			goto no_pi;
		}
		if (q->pimode == 0)
			goto no_pi;
		for (b = 0; b < q->nb; b++) {
			q->app[b] = sl->app[q->first + b];
			all_mine = all_mine && q->app[b] == app;
		}
		if (q->pimode == 2)
			q->pimode = all_mine ? 3 : 1;
		memset(q->pi, 0, pilen);
		if (q->pimode == 3)
			dio_req_set_pi(&q->r, q->pi, pilen, DIO_PI_CHK_GUARD |
				       DIO_PI_CHK_REFTAG | DIO_PI_CHK_APPTAG, app, 0xffff);
		else
			dio_req_set_pi(&q->r, q->pi, pilen, DIO_PI_CHK_GUARD |
				       DIO_PI_CHK_REFTAG, 0, 0);
		me->pi_reads++;
	}
no_pi:
	return;
}

static void writer(int slotno, int inc, uint64_t seed)
{
	struct wreq q[QD];
	struct dio_request *rp[QD], *got[QD];
	bool busy[NDEV][SLOT_BLOCKS];
	int h[NDEV], ctx, i, n, d;
	long outstanding = 0;

	rs = seed;
	memset(busy, 0, sizeof(busy));
	memset(q, 0, sizeof(q));
	for (i = 0; i < QD; i++) {
		q[i].buf = tl_alloc(MAXNB * BLK, 0);
		q[i].pi = tl_alloc(MAXNB * BLK / 512 * 16, 0);
		if (!q[i].buf || !q[i].pi)
			_exit(2);
	}
	ctx = join(h);
	if (ctx < 0)
		_exit(3);
	/* Make the slots known: every block gets generation 1. */
	for (d = 0; d < NDEV; d++) {
		for (int b0 = 0; b0 < SLOT_BLOCKS; b0 += QD * MAXNB) {
			for (n = 0; n < QD && b0 + n * MAXNB < SLOT_BLOCKS; n++) {
				prep(&q[n], d, h[d], inc, slotno, busy[d], true,
				     b0 + n * MAXNB);
				q[n].busy = true;
				rp[n] = &q[n].r;
			}
			if (sys_dio_submit(ctx, rp, n) != n) {
				wfail("init submit: %s", strerror(errno));
				_exit(4);
			}
			me->submitted += n;
			me->writes += n;
			if (sys_dio_wait(ctx, rp, n, NULL) != n) {
				wfail("init wait: %s", strerror(errno));
				_exit(4);
			}
			for (i = 0; i < n; i++) {
				complete(&q[i], inc, slotno);
				for (int b = 0; b < MAXNB; b++)
					busy[d][q[i].first + b] = false;
			}
		}
	}
	while (!sh->stop && !me->why[0]) {
		/* Fill the free slots of the queue. */
		n = 0;
		for (i = 0; i < QD && n < 1 + (int)rn(QD); i++) {
			if (q[i].busy)
				continue;
			d = rn(NDEV);
			prep(&q[i], d, h[d], inc, slotno, busy[d], false, 0);
			if (!q[i].flush && !q[i].nb)
				continue;
			q[i].busy = true;
			rp[n++] = &q[i].r;
			if (q[i].flush)
				me->flushes++;
			else if (q[i].write)
				me->writes++;
			else
				me->reads++;
			me->cross_reads += q[i].cross;
		}
		if (n) {
			int ret = sys_dio_submit(ctx, rp, n);

			if (ret != n) {
				wfail("submit of %d: %d (%s)", n, ret, strerror(errno));
				break;
			}
			me->submitted += n;
			outstanding += n;
		}
		/* Reap: COLLECT mostly, WAIT on one, or poll first. */
		if (!outstanding)
			continue;
		if (rn(4) == 0) {
			for (i = 0; i < QD && !q[i].busy; i++)
				;
			if (sys_dio_wait(ctx, (struct dio_request *[]){ &q[i].r }, 1,
					 NULL) != 1) {
				wfail("wait: %s", strerror(errno));
				break;
			}
			got[0] = &q[i].r;
			n = 1;
		} else {
			if (rn(8) == 0) {
				struct pollfd pfd = { .fd = ctx, .events = POLLIN };

				poll(&pfd, 1, 1000);
			}
			n = sys_dio_collect(ctx, got, 1, QD, NULL);
			if (n < 1) {
				wfail("collect: %d (%s)", n, strerror(errno));
				break;
			}
		}
		for (int k = 0; k < n; k++) {
			struct wreq *w = (struct wreq *)got[k];

			if (w < q || w >= q + QD) {
				wfail("a completion of %p, not one of ours", (void *)got[k]);
				_exit(5);
			}
			complete(w, inc, slotno);
			if (!w->cross)
				for (int b = 0; b < w->nb; b++)
					busy[w->dev][w->first + b] = false;
			outstanding--;
		}
	}
	/*
	 * Stop: everything submitted is reported, within a minute (x
	 * tl_slow_factor()): a hang guard for at most QD requests that take
	 * milliseconds each, PI included, on a loaded guest.
	 */
	while (outstanding > 0) {
		struct timespec to = { 60 * tl_slow_factor(), 0 };

		n = sys_dio_collect(ctx, got, 1, QD, &to);
		if (n < 1) {
			wfail("%ld requests never reported (%s)", outstanding,
			      n < 0 ? strerror(errno) : "time-out");
			break;
		}
		for (int k = 0; k < n; k++) {
			complete((struct wreq *)got[k], inc, slotno);
			outstanding--;
		}
	}
	close(ctx);
	me->clean_exit = 1;
	_exit(me->why[0] ? 1 : 0);
}

/* ---- churners ---- */

static void churner(uint64_t seed)
{
	/*
	 * Reads left in flight land in @junk whenever they complete: never
	 * in @buf, whose content is checked.
	 */
	uint8_t *buf = tl_alloc(BLK, 0), *junk = tl_alloc(BLK, 0);
	struct dio_request r, *rp = &r;
	struct dio_query q;

	rs = seed;
	while (!sh->stop && !me->why[0]) {
		int ctx, h[NDEV], fd, k = rn(4);

		switch (k) {
		case 0: case 1:
			/* Join, open the devices, read a sector, leave. */
			ctx = join(h);
			if (ctx < 0)
				break;
			if (sys_dio_query(ctx, h[0], &q) || q.logical_block_size != 512) {
				wfail("query: %s", strerror(errno));
				break;
			}
			/*
			 * A checked read (k == 0) goes to scsi_debug only: it
			 * copies a sector and its PI under one lock.  QEMU's
			 * NVMe writes data and metadata separately, so a read
			 * racing a writer there may see one without the other
			 * and fail its PI check (sct 2, sc 0x84), as a real
			 * drive would not.
			 */
			dio_req_prep_read(&r, h[k == 0 ? 0 : rn(NDEV)], k == 0 ? buf : junk,
					  BLK, (uint64_t)rn(NSLOT * SLOT_BLOCKS) * BLK);
			if (sys_dio_submit(ctx, &rp, 1) != 1) {
				wfail("churn submit: %s", strerror(errno));
				break;
			}
			if (k == 0 && (sys_dio_wait(ctx, &rp, 1, NULL) != 1 ||
				       r.result != BLK)) {
				wfail("churn read: %s", res_str(&r));
				break;
			}
			/* k == 1: left in flight. */
			if (rn(2)) {
				sys_dio_close(ctx, h[0]);
				sys_dio_close(ctx, h[1]);
			}
			close(ctx);
			break;
		case 2:
			/* A private context sharing the device unclaimed. */
			ctx = sys_dio_init(0, DIO_PRIVATE);
			fd = open(devpath[rn(NDEV)], O_RDONLY | O_CLOEXEC);
			h[0] = sys_dio_open(ctx, fd, DIO_OPEN_NOCLAIM);
			if (ctx < 0 || fd < 0 || h[0] < 1 || sys_dio_query(ctx, h[0], &q)) {
				wfail("private context: %s", strerror(errno));
				break;
			}
			close(fd);
			close(ctx);
			break;
		default:
			/* The second LUN, claimed in the shared context and let go. */
			ctx = sys_dio_init(KEY, 0);
			fd = open(devpath[NDEV], O_RDONLY | O_CLOEXEC);
			h[0] = ctx >= 0 && fd >= 0 ? sys_dio_open(ctx, fd, 0) : -1;
			if (h[0] < 1) {
				wfail("LUN 1: %s", strerror(errno));
				break;
			}
			dio_req_prep_read(&r, h[0], buf, BLK, 0);
			if (sys_dio_submit(ctx, &rp, 1) != 1 ||
			    sys_dio_wait(ctx, &rp, 1, NULL) != 1 || r.result != BLK) {
				wfail("LUN 1 read at 0: %s", res_str(&r));
				break;
			}
			if (sys_dio_close(ctx, h[0])) {
				wfail("LUN 1 close: %s", strerror(errno));
				break;
			}
			close(fd);
			close(ctx);
			break;
		}
		me->churn_ops++;
	}
	me->clean_exit = 1;
	_exit(me->why[0] ? 1 : 0);
}

/* ---- the parent ---- */

static int nproc, ninc, nslot_used;

static int spawn(bool is_writer, uint64_t seed)
{
	struct pstat *p;
	pid_t pid;

	if (nproc == MAXPROC)
		return -1;
	p = &sh->p[nproc];
	memset(p, 0, sizeof(*p));
	if (is_writer) {
		if (nslot_used == NSLOT)
			return -1;
		p->inc = ++ninc;
		for (int d = 0; d < NDEV; d++)
			sh->slot[d][nslot_used].owner = p->inc;
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		me = p;
		if (is_writer)
			writer(nslot_used, p->inc, seed);
		churner(seed);
	}
	p->pid = pid;
	if (is_writer)
		nslot_used++;
	return nproc++;
}

static int setup(void **state)
{
	int dbg = tl_debug_kernel();
	char names[4][32];
	int i, n = 0;

	if (dbg < 0)
		return -1;
	debug_kernel = dbg;
	if (tl_dio_load())
		return -1;
	if (tl_scsi_debug_load("dev_size_mb=64 max_luns=2 dif=1 dix=1 guard=0",
			       devpath[0], sizeof(devpath[0])))
		return -1;
	n = tl_scsi_debug_wait_disks(2, names, 4);
	if (n != 2)
		return -1;
	/* Both LUNs share scsi_debug's store: LUN 1 is only ever read. */
	qsort(names, 2, sizeof(names[0]), (int (*)(const void *, const void *))strcmp);
	snprintf(devpath[0], sizeof(devpath[0]), "/dev/%.31s", names[0]);
	snprintf(devpath[NDEV], sizeof(devpath[NDEV]), "/dev/%.31s", names[1]);
	for (i = 0; i < 200 && access(devpath[NDEV], F_OK); i++)
		usleep(50000);
	if (tl_nvme_dev(1, devpath[1], sizeof(devpath[1])))
		return -1;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		  -1, 0);
	return sh == MAP_FAILED ? -1 : 0;
}

static int teardown(void **state)
{
	return tl_scsi_debug_unload();
}

/* Keep the first failure, go on cleaning up; fail_msg() it at the end. */
#define FIRST_FAILURE(...)							\
	do {									\
		if (!failure[0])						\
			snprintf(failure, sizeof(failure), __VA_ARGS__);	\
		else {								\
			print_message("# also: ");				\
			print_message(__VA_ARGS__);				\
			print_message("\n");					\
		}								\
	} while (0)

/* Results of the final read of each block of a slot (BLK, or -errno). */
static int64_t final_res[SLOT_BLOCKS];

/* Read every block of slot @s that was written into @buf, 4 KiB each. */
static void read_written_blocks(int ctx, int h, const struct slot *sl, uint8_t *buf,
				int s)
{
	static struct dio_request r[SLOT_BLOCKS];
	static struct dio_request *rp[SLOT_BLOCKS];
	int b, n = 0;

	for (b = 0; b < SLOT_BLOCKS; b++) {
		final_res[b] = BLK;
		if (!sl->confirmed[b] && !sl->pending[b])
			continue;
		dio_req_prep_read(&r[n], h, buf + b * BLK, BLK,
				  (uint64_t)slot_block(s, b) * BLK);
		r[n].cookie = b;
		rp[n] = &r[n];
		n++;
	}
	if (!n)
		return;
	assert_int_equal(sys_dio_submit(ctx, rp, n), n);
	assert_int_equal(sys_dio_wait(ctx, rp, n, NULL), n);
	for (b = 0; b < n; b++)
		final_res[r[b].cookie] = r[b].result;
}

static void test_stress(void **state)
{
	const char *env = getenv("DIO_STRESS_SECONDS");
	uint64_t budget = (env ? strtoul(env, NULL, 0) : debug_kernel ? 30 : 20) *
			  1000000000ULL;
	uint64_t seed = tl_seed("DIO_SEED"), t0, next_kill;
	int ctx, fd[NDEV + 1], i, d, st, kills = 0, writer_kills = 0;
	long tot[10] = { 0 }, verified = 0, uncertain = 0, bad = 0;
	char failure[300] = "";
	struct dio_features f;
	struct dio_query q;
	uint8_t *buf;

	memset(sh, 0, sizeof(*sh));
	nproc = ninc = nslot_used = 0;
	rs = seed;
	print_message("# stress: %s, %s; %.0f s\n", devpath[0], devpath[1], budget / 1e9);
	/* The context and its handles live for the whole test. */
	ctx = sys_dio_init(KEY, DIO_CREAT | DIO_EXCL);
	assert_true(ctx >= 0);
	for (d = 0; d <= NDEV; d++) {
		fd[d] = open(devpath[d], (d < NDEV ? O_RDWR : O_RDONLY) | O_CLOEXEC);
		assert_true(fd[d] >= 0);
	}
	assert_int_equal(sys_dio_features(&f), 0);
	use_pi = f.features & DIO_FEAT_PI;
	for (d = 0; d < NDEV; d++) {
		sh->handle[d] = sys_dio_open(ctx, fd[d], 0);
		assert_true(sh->handle[d] >= 1);
		assert_int_equal(sys_dio_query(ctx, sh->handle[d], &q), 0);
		assert_int_equal(q.logical_block_size, 512);
		assert_true(q.capacity >= (uint64_t)NSLOT * SLOT_BLOCKS * BLK);
		/* Both devices have PI (scsi_debug DIF/DIX, NVMe type 1). */
		if (use_pi && dio_pi_profile_from_query(&q, &prof[d]))
			fail_msg("%s: no PI profile: %s", devpath[d], strerror(errno));
		if (use_pi && BLK % prof[d].interval)
			fail_msg("%s: PI interval %u", devpath[d], prof[d].interval);
	}
	print_message("# PI: %s\n", use_pi ? "carried by a third of the writes, two thirds of the reads" :
		      "not announced by the module, not used");

	t0 = tl_now_ns();
	for (i = 0; i < NWRITERS; i++)
		assert_true(spawn(true, rnd()) >= 0);
	for (i = 0; i < NCHURN; i++)
		assert_true(spawn(false, rnd()) >= 0);
	next_kill = t0 + 1000000000ULL + rn(2000) * 1000000ULL;
	while (tl_now_ns() - t0 < budget) {
		usleep(50000);
		if (tl_now_ns() < next_kill)
			continue;
		/* A random live process: a writer if a slot is left for its successor. */
		for (int tries = 0; tries < 20; tries++) {
			struct pstat *p = &sh->p[rn(nproc)];

			if (p->killed || p->clean_exit || (p->inc && nslot_used == NSLOT))
				continue;
			kill(p->pid, SIGKILL);
			waitpid(p->pid, &st, 0);
			p->killed = 1;
			kills++;
			if (p->inc) {
				/* Incarnation n owns slot n - 1. */
				for (d = 0; d < NDEV; d++)
					sh->slot[d][p->inc - 1].dead = 1;
				writer_kills++;
			}
			/* Its slot stays as it is, and is checked at the end. */
			spawn(p->inc != 0, rnd());
			break;
		}
		next_kill = tl_now_ns() + 500000000ULL + rn(2500) * 1000000ULL;
	}
	sh->stop = 1;
	/*
	 * Every process is reaped before a failure is raised, and the
	 * parent's context and devices closed, so that the group teardown
	 * can unload scsi_debug and the next program starts clean.
	 */
	for (i = 0; i < nproc; i++) {
		struct pstat *p = &sh->p[i];
		pid_t r = 0;

		if (p->killed)
			continue;
		/* A hang guard: a process stops within its last batch's time. */
		for (int k = 0; k < 1200 * tl_slow_factor() &&
		     (r = waitpid(p->pid, &st, WNOHANG)) == 0; k++)
			usleep(100000);
		if (r == 0) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, &st, 0);
			FIRST_FAILURE("%s %d did not stop", p->inc ? "writer" : "churner", i);
			continue;
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st) || !p->clean_exit)
			FIRST_FAILURE("%s (incarnation %d) ended with status %#x: %s",
				      p->inc ? "writer" : "churner", p->inc, st, p->why);
		else if (p->submitted != p->reported)
			FIRST_FAILURE("writer %d: %ld submitted, %ld reported", p->inc,
				      p->submitted, p->reported);
	}
	if (failure[0]) {
		close(ctx);
		for (d = 0; d <= NDEV; d++)
			close(fd[d]);
		tl_slab_wait("dio_kreq", 0, 60);
		fail_msg("%s", failure);
	}
	for (i = 0; i < nproc; i++) {
		struct pstat *p = &sh->p[i];

		tot[0] += p->reads;
		tot[1] += p->writes;
		tot[2] += p->flushes;
		tot[3] += p->bytes;
		tot[4] += p->churn_ops;
		tot[5] += p->mismatches;
		tot[6] += p->errors;
		tot[7] += p->cross_reads;
		tot[8] += p->pi_writes;
		tot[9] += p->pi_reads;
		if (p->why[0])
			print_message("# %s %d%s: %s\n", p->inc ? "writer" : "churner",
				      p->inc, p->killed ? " (killed)" : "", p->why);
	}
	print_message("# stress: %.1f s: %ld reads (%ld of other slots, %ld with PI), "
		      "%ld writes (%ld with PI), %ld flushes, %.1f MiB; %d kills "
		      "(%d writers), %d processes; %ld churn operations\n",
		      (tl_now_ns() - t0) / 1e9, tot[0], tot[7], tot[9], tot[1], tot[8],
		      tot[2], tot[3] / (double)MiB, kills, writer_kills, nproc, tot[4]);
	assert_int_equal(tot[5], 0);
	assert_int_equal(tot[6], 0);

	/* The killed processes' requests complete; then every slot is read. */
	assert_int_equal(tl_slab_wait("dio_kreq", 0, 60), 0);
	buf = tl_alloc(SLOT_BLOCKS * BLK, 0);
	assert_non_null(buf);
	for (d = 0; d < NDEV; d++) {
		for (int s = 0; s < nslot_used; s++) {
			struct slot *sl = &sh->slot[d][s];

			/*
			 * Only blocks that were written, one request per block
			 * (in batches): a block never written, or whose killed
			 * writer's first write never went, may be refused by
			 * QEMU's NVMe, which can take its zero metadata for PI
			 * (sct 2 / sc 0x84) when a neighbour's data shares its
			 * host block.  Such a block must then hold no stamp.
			 */
			read_written_blocks(ctx, sh->handle[d], sl, buf, s);
			for (int b = 0; b < SLOT_BLOCKS; b++) {
				uint32_t c = sl->confirmed[b], pd = sl->pending[b];

				if (!c && !pd)
					continue;	/* never written */
				if (final_res[b] != BLK) {
					bool maybe_unwritten = !c && sl->dead &&
							       final_res[b] == -EILSEQ;

					if (maybe_unwritten)
						continue;
					if (bad++ < 5)
						print_message("# final: dev %d slot %d block %d: read "
							      "result %lld (owner %d confirmed %u "
							      "pending %u%s)\n", d, s, b,
							      (long long)final_res[b], sl->owner, c, pd,
							      sl->dead ? ", killed" : "");
					continue;
				}
				for (int x = 0; x < SPB; x++) {
					struct sect_hdr h;
					const char *why = check_sector(buf + b * BLK + x * SECT,
								       d, s, slot_block(s, b), x, &h);

					/* A killed writer's first write may not have gone. */
					if (why && !c && sl->dead && !strcmp(why, "no stamp"))
						continue;
					if (!why && h.inc != (uint32_t)sl->owner)
						why = "another writer's";
					/* The generation confirmed, or the one in flight at the kill. */
					if (!why && h.gen != c && !(pd && h.gen == pd))
						why = "stale";
					if (why) {
						if (bad++ < 5)
							print_message("# final: dev %d slot %d block %d "
								      "sector %d: %s (inc %u gen %u; "
								      "owner %d confirmed %u pending %u%s)\n",
								      d, s, b, x, why, h.inc, h.gen,
								      sl->owner, c, pd,
								      sl->dead ? ", killed" : "");
						break;
					}
				}
				verified++;
				uncertain += pd != 0;
			}
		}
	}
	print_message("# final: %ld blocks verified (%ld with a write in flight at a kill), "
		      "%ld bad\n", verified, uncertain, bad);
	assert_int_equal(bad, 0);
	free(buf);
	close(ctx);
	for (d = 0; d <= NDEV; d++)
		close(fd[d]);
	assert_int_equal(tl_slab_wait("dio_kreq", 0, 20), 0);
	assert_int_equal(tl_slab_wait("dio_file", 0, 20), 0);
	assert_int_equal(tl_slab_wait("dio_handle", 0, 20), 0);
	assert_int_equal(tl_slab_wait("dio_ctx", 0, 20), 0);
}

/*
 * A descriptor shared by fork() belongs to the parent, which created it
 * (ABI 2): the child's SUBMIT and COLLECT on it are EXDEV, nothing of the
 * child's is queued, and its memory (its copy of the requests and the
 * buffers) is not written.  The parent's reads, in flight meanwhile, are
 * reported to the parent alone, each with its length and the stamped
 * data.
 */
static int inh_ctx = -1, inh_fd = -1;

/* Its teardown: a failed assertion leaves no claim for test_stress. */
static int inherited_cleanup(void **state)
{
	if (inh_ctx >= 0)
		close(inh_ctx);
	if (inh_fd >= 0)
		close(inh_fd);
	inh_ctx = inh_fd = -1;
	return 0;
}

static void test_inherited_descriptor_is_the_parents(void **state)
{
	enum { N = 4 };
	struct dio_request *r = NULL, *rp[N], *got[N];
	uint8_t *buf = NULL, *want = NULL;
	int ctx, fd, h, i, st;
	pid_t pid;

	assert_int_equal(posix_memalign((void **)&buf, 4096, N * BLK), 0);
	assert_int_equal(posix_memalign((void **)&want, 4096, N * BLK), 0);
	assert_int_equal(posix_memalign((void **)&r, 4096, N * sizeof(*r)), 0);
	inh_ctx = ctx = sys_dio_init(0, DIO_PRIVATE);
	inh_fd = fd = open(devpath[0], O_RDWR | O_CLOEXEC);
	assert_true(ctx >= 0 && fd >= 0);
	h = sys_dio_open(ctx, fd, 0);
	assert_true(h >= 1);
	/* Known, stamped data on the disk. */
	for (i = 0; i < N; i++)
		stamp_block(want + i * BLK, 0, 0, 15000 + i, 1, 1);
	dio_req_prep_write(&r[0], h, want, N * BLK, 15000ULL * BLK);
	rp[0] = &r[0];
	assert_int_equal(sys_dio_submit(ctx, rp, 1), 1);
	assert_int_equal(sys_dio_wait(ctx, rp, 1, NULL), 1);
	assert_int_equal(r[0].result, N * BLK);

	/* The parent's reads, not reaped before the child is done. */
	memset(buf, 0x77, N * BLK);
	for (i = 0; i < N; i++) {
		dio_req_prep_read(&r[i], h, buf + i * BLK, BLK, (15000ULL + i) * BLK);
		rp[i] = &r[i];
	}
	assert_int_equal(sys_dio_submit(ctx, rp, N), N);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct dio_request cr, *crp = &cr;
		int bad = 0;

		memset(r, 0xc3, N * sizeof(*r));
		memset(buf, 0xc3, N * BLK);
		memset(got, 0xc3, sizeof(got));
		dio_req_prep_read(&cr, h, buf, BLK, 15000ULL * BLK);
		if (sys_dio_submit(ctx, &crp, 1) != -1 || errno != EXDEV)
			bad |= 1;
		if (sys_dio_collect(ctx, got, 1, N, &(struct timespec){ 2, 0 }) != -1 ||
		    errno != EXDEV)
			bad |= 2;
		for (i = 0; i < (int)(N * sizeof(*r)); i++)
			if (((uint8_t *)r)[i] != 0xc3)
				bad |= 4;
		for (i = 0; i < N * BLK; i++)
			if (buf[i] != 0xc3)
				bad |= 8;
		for (i = 0; i < (int)sizeof(got); i++)
			if (((uint8_t *)got)[i] != 0xc3)
				bad |= 16;
		_exit(bad);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	/* 1: SUBMIT, 2: COLLECT not EXDEV; 4, 8, 16: the child's memory written. */
	assert_int_equal(WEXITSTATUS(st), 0);
	/* Four reads of 4 KiB: milliseconds; 10 s (x the factor), a hang guard. */
	assert_int_equal(sys_dio_collect(ctx, got, N, N,
					 &(struct timespec){ 10 * tl_slow_factor(), 0 }), N);
	for (i = 0; i < N; i++) {
		assert_true(got[i] >= r && got[i] < r + N);
		if (got[i]->result != BLK)
			fail_msg("a read reported to its submitter: result %s",
				 res_str(got[i]));
	}
	assert_memory_equal(buf, want, N * BLK);
	/* Nothing of the child's was queued. */
	assert_int_equal(sys_dio_collect(ctx, got, 0, N, &(struct timespec){ 0, 0 }), 0);
	inherited_cleanup(state);
	free(buf);
	free(want);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_inherited_descriptor_is_the_parents,
					  inherited_cleanup),
		cmocka_unit_test(test_stress),
	};

	return cmocka_run_group_tests_name("stress", tests, setup, teardown);
}
