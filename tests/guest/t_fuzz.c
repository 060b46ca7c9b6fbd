// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * An ioctl fuzzer, seeded and bounded.  Four worker processes share a
 * keyed context (each through descriptors of its own, and through one
 * descriptor they all inherited) and make private and keyed contexts of
 * their own; one of them runs as uid 1000.  They throw at every ioctl of
 * /dev/dio_batch and of context descriptors (and at unknown numbers and
 * wrong directions):
 *
 *  - valid argument structs with one or two fields mutated, random bytes,
 *    sizes 0, 1, VER0 - 1, VER0, larger with a zero or a non-zero tail,
 *    huge; structs straddling an inaccessible page;
 *  - pointers: NULL, never mappable (below mmap_min_addr, last user page),
 *    PROT_NONE, read-only (for structs the kernel writes back), kernel and
 *    non-canonical addresses, misaligned, and pages another thread keeps
 *    flipping between read-write and no access;
 *  - handles live, revoked, of other contexts, random; block device, pipe,
 *    regular, O_PATH and closed descriptors;
 *  - request arrays with garbage, duplicate, NULL and unmapped entries;
 *    requests with every field mutated, iovec arrays likewise, I/O on two
 *    scratch scsi_debug disks (so valid requests reach the device);
 *  - registered buffers (ABI 3): REGISTER arrays of 1 to 1025 buffers of
 *    anonymous memory, the flip zone and a memfd, or read-only, PROT_NONE,
 *    file-backed, unmapped, overflowing, empty and huge ones; UNREGISTER;
 *    requests with DIO_REQ_FIXED whose data lies within the buffer they
 *    name, straddles it or misses it, buffer indexes 0..3 and wild,
 *    DIO_REQ_FIXED with DIO_REQ_IOVEC or on a flush, an index without it.
 *
 * Every call must return success (in the command's range) or an errno of
 * that command's documented set; the histogram is printed.  The inherited
 * descriptor (and its dups) is the parent's: SUBMIT, WAIT, COLLECT,
 * REGISTER and UNREGISTER on it never succeed, EXDEV joins their sets
 * there (ABI 2, 3), and EXDEV anywhere else is a violation.  A REGISTER
 * that succeeds must not have taken a buffer it is sure to refuse.
 * Workers must exit cleanly; afterwards every descriptor closes, the slab
 * caches drain to zero, the module's reference count is zero and I/O
 * still works.
 *
 * Before the fuzzing, a directed case: struct sizes far above a page over
 * zero-filled memory must not keep the kernel scanning user memory.
 *
 * Seed: DIO_FUZZ_SEED (else time and pid), printed.  Bounds:
 * DIO_FUZZ_SECONDS (default 30 on the debug kernel, 15 elsewhere) and
 * DIO_FUZZ_CALLS per worker (default 200000), whichever comes first.
 *
 * A floor: the workers together must make at least FUZZ_MIN_RATE calls
 * (FUZZ_MIN_RATE_DEBUG on the debug kernel) per second of the budget, at
 * most half their call bound; DIO_FUZZ_MIN_CALLS sets it instead.  The
 * budget is wall-clock time, so the count falls with the host's load (a
 * worker below its share of the floor goes on past the budget, up to four
 * times it, so that a loaded machine makes the floor late, not never):
 * stock kernels made 143616 to 161907 calls in 15 s beside one other
 * guest on a 2-core machine and 43046 beside three, the debug kernel
 * 48898 in 30 s.  The floors sit well below the loaded counts (about a
 * third of the lowest): a fuzzer stuck in a slow path, or one that gives
 * up early, fails; a busy machine does not.
 */
#define FUZZ_MIN_RATE		1000	/* calls per second, all workers */
#define FUZZ_MIN_RATE_DEBUG	300
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

#define NWORKERS	4
#define NERR		140
#define KiB		1024ULL
#define MiB		(1024 * KiB)
#define DISK_SIZE	(16 * MiB)
#define SHARED_KEY	0xf022ULL
#define PAGE		4096UL

#define ARENA_SZ	(1 * MiB)	/* structs, arrays, buffers */
#define FLIP_SZ		(64 * KiB)	/* flipped by a thread */
#define MAXCTX		12
#define MAXH		6
#define RING		512
#define NBAD		8		/* violations kept per worker */

/* Command kinds, for the histogram and the errno sets. */
enum kind {
	K_FEATURES, K_INIT, K_OPEN, K_CLOSE, K_QUERY, K_SUBMIT, K_WAIT,
	K_COLLECT, K_STAT, K_REGISTER, K_UNREGISTER, K_COUNTERS, K_UNKNOWN,
	K_WRONGDIR, NKIND
};
static const char *const kind_name[NKIND] = {
	"FEATURES", "INIT", "OPEN", "CLOSE", "QUERY", "SUBMIT", "WAIT",
	"COLLECT", "STAT", "REGISTER", "UNREGISTER", "COUNTERS", "unknown",
	"wrong-dir",
};
static const unsigned long kind_cmd[K_UNKNOWN] = {
	DIO_IOC_FEATURES, DIO_IOC_INIT, DIO_IOC_OPEN, DIO_IOC_CLOSE,
	DIO_IOC_QUERY, DIO_IOC_SUBMIT, DIO_IOC_WAIT, DIO_IOC_COLLECT,
	DIO_IOC_STAT, DIO_IOC_REGISTER, DIO_IOC_UNREGISTER, DIO_IOC_COUNTERS,
};
/* The ioctl numbers of dio_batch.h: FEATURES's to the last command's. */
#define IOC_NR_FIRST	_IOC_NR(DIO_IOC_FEATURES)
#define IOC_NR_LAST	_IOC_NR(TL_IOC_LAST)
enum { FD_CTL, FD_CTX, NFDK };

/* What the workers report, in shared memory. */
struct wstats {
	long calls;
	long io_ok;			/* valid_io()'s requests reported whole */
	long fixed_ok;			/* of them, DIO_REQ_FIXED ones */
	long hist[NFDK][NKIND][NERR];	/* [0]: success */
	int nbad;
	char bad[NBAD][240];
	int done;
};

static struct wstats *ws;		/* NWORKERS of them */
static uint64_t seed;
static char disks[2][64];

/* Mappings made before fork, at the same address in every worker. */
static uint8_t *arena, *flipz, *ro_page, *none_page;
/*
 * For DIO_IOC_REGISTER: a private mapping of a file that is not shared
 * memory (EOPNOTSUPP), and shared memory (a memfd: registrable).
 */
static uint8_t *file_page, *shm_zone;
#define SHM_SZ		(64 * KiB)

/* ---- randomness ---- */

/* Each worker's state of the tests' random source (tl_rand()). */
static __thread uint64_t rs;

static uint64_t rnd(void)
{
	return tl_rand(&rs);
}

static unsigned int rn(unsigned int n)
{
	return tl_rand_below(&rs, n);
}

static bool chance(unsigned int pct)
{
	return rn(100) < pct;
}

static uint64_t interesting64(void)
{
	static const uint64_t v[] = {
		0, 1, 2, 7, 8, 511, 512, 513, 4095, 4096, 65536, 0x7fffffff,
		0x80000000, 0xffffffff, 0x100000000ULL, 0x7fffffffffffffffULL,
		0x8000000000000000ULL, ~0ULL, ~0ULL - 1, DISK_SIZE,
		DISK_SIZE - 512, DISK_SIZE + 512, 64 * MiB, 64 * MiB + 1, 1025,
		4097,
	};

	if (chance(25))
		return rnd();
	if (chance(15))
		return rnd() & 0xffff;
	return v[rn(sizeof(v) / sizeof(v[0]))];
}

/* ---- the worker's world ---- */

struct ctxent {
	int fd;
	bool shared;		/* a descriptor of the keyed context */
	bool inherited;		/* the one all workers share: never closed */
	bool foreign;		/* the parent's (inherited, or a dup of it):
				 * SUBMIT, WAIT, COLLECT, REGISTER and
				 * UNREGISTER are EXDEV */
	int h[MAXH];		/* handles it opened */
	int nh;
	/*
	 * The first buffers its last successful REGISTER named (nfb 0:
	 * none, or unregistered), for DIO_REQ_FIXED requests.  A dup of it
	 * shares the registration but is tracked apart: the requests only
	 * aim at these ranges; the errno sets hold either way.
	 */
	struct dio_fixed_buf fb[4];
	int nfb;
};

static struct world {
	int id;
	struct wstats *st;
	int ctl;
	struct ctxent ctx[MAXCTX];
	int nctx;
	int fds[12];		/* descriptors OPEN may be given */
	int nfds;
	struct { int fd; uint64_t addr; } ring[RING];
	unsigned int ring_pos;
	/*
	 * valid_io()'s requests, as submitted: the memory of a request in
	 * flight is reused by later calls, and only its result is written
	 * back, so its length is known from here.
	 */
	struct { uint64_t addr, len; bool fixed; } sub[64];
	unsigned int sub_pos;
	size_t bump;		/* arena allocator for the current call */
} w;

static void bad(const char *fmt, ...)
{
	va_list ap;

	if (w.st->nbad < NBAD) {
		va_start(ap, fmt);
		vsnprintf(w.st->bad[w.st->nbad], sizeof(w.st->bad[0]), fmt, ap);
		va_end(ap);
	}
	w.st->nbad++;
}

/*
 * Scratch memory of this call, in the arena's first 192 KiB.  Requests
 * left there in flight get their results written back by later WAIT and
 * COLLECT calls, so what the test reads back after a call (COLLECT's
 * array) lives apart, in out_zone(): the next 64 KiB.
 */
#define SCRATCH_SZ	(192 * KiB)

static void *scratch(size_t len, size_t align)
{
	size_t off = (w.bump + align - 1) & ~(align - 1);

	if (off + len > SCRATCH_SZ)
		off = 0;
	w.bump = off + len;
	return arena + off;
}

static uint64_t *out_zone(void)
{
	return (uint64_t *)(arena + SCRATCH_SZ);
}

/* A data buffer: somewhere in the arena's last 768 KiB. */
static uint64_t data_buf(size_t len, bool aligned)
{
	size_t room = ARENA_SZ - 256 * KiB;
	size_t off;

	if (len > room)
		len = room;
	off = rn(room - len + 1);
	off = aligned ? off & ~(size_t)(chance(50) ? 4095 : 511) : off;
	return (uintptr_t)(arena + 256 * KiB + off);
}

/* A bad or odd pointer, for a struct of @len bytes. */
static uint64_t bad_ptr(size_t len, bool writes_back)
{
	switch (rn(writes_back ? 11 : 10)) {
	case 0: return 0;
	case 1: return 0x1000;				/* below mmap_min_addr */
	case 2: return 0x7ffffffff000ULL;		/* last user page */
	case 3: return 0x7ffffffffff8ULL;		/* straddles the end */
	case 4: return (uintptr_t)none_page + rn(PAGE);
	case 5: return 0xffffffff81000000ULL;		/* kernel text */
	case 6: return 0xffff888000000000ULL + (rnd() & 0xfffffff000ULL);
	case 7: return 0x8000000000000000ULL | rnd();	/* non-canonical */
	case 8: return (uintptr_t)arena + ARENA_SZ - 1 - rn(len ? len : 1);
	case 9: return (uintptr_t)flipz + rn(FLIP_SZ - 256);
	default: return (uintptr_t)ro_page + rn(PAGE - len);
	}
}

static bool in_mappings(uint64_t a)
{
	return (a >= (uintptr_t)arena && a < (uintptr_t)arena + ARENA_SZ) ||
	       (a >= (uintptr_t)flipz && a < (uintptr_t)flipz + FLIP_SZ) ||
	       (a >= (uintptr_t)shm_zone && a < (uintptr_t)shm_zone + SHM_SZ) ||
	       (a >= (uintptr_t)ro_page && a < (uintptr_t)ro_page + PAGE);
}

static bool in_arena(uint64_t a, size_t len)
{
	return a >= (uintptr_t)arena && a + len <= (uintptr_t)arena + ARENA_SZ;
}

/*
 * A pointer the kernel may write through (read buffers, COLLECT's array):
 * a random user address that might hit this process's own stack or heap
 * is made non-canonical, so that the fuzzer never corrupts itself.  Low
 * addresses (below mmap_min_addr) and our own mappings stay.
 */
static uint64_t tame(uint64_t a)
{
	if (a < 0x10000 || a >= 0x800000000000ULL || in_mappings(a))
		return a;
	return a | 0x8000000000000000ULL;
}

/* Copy @len bytes of @s to the read-only page (kept read-only). */
static void *ro_copy(const void *s, size_t len)
{
	mprotect(ro_page, PAGE, PROT_READ | PROT_WRITE);
	memcpy(ro_page, s, len);
	mprotect(ro_page, PAGE, PROT_READ);
	return ro_page;
}

static struct ctxent *pick_ctx(void)
{
	return &w.ctx[rn(w.nctx)];
}

static uint32_t pick_handle(struct ctxent *c)
{
	if (c->nh && chance(75))
		return c->h[rn(c->nh)];
	if (chance(50)) {
		struct ctxent *o = pick_ctx();

		if (o->nh)
			return o->h[rn(o->nh)];
	}
	return chance(50) ? rn(20) : (uint32_t)interesting64();
}

static int pick_fd(void)
{
	switch (rn(10)) {
	case 0: return -1;
	case 1: return 9999;
	case 2: return (int)interesting64();
	case 3: return w.ctl;
	case 4: return pick_ctx()->fd;
	default: return w.fds[rn(w.nfds)];
	}
}

static void ring_add(int fd, uint64_t addr)
{
	w.ring[w.ring_pos++ % RING].fd = fd;
	w.ring[(w.ring_pos - 1) % RING].addr = addr;
}

static uint64_t ring_pick(int fd)
{
	for (int i = 0; i < 8; i++) {
		unsigned int k = rn(RING);

		if (w.ring[k].fd == fd && w.ring[k].addr)
			return w.ring[k].addr;
	}
	return 0;
}

/* ---- argument builders ---- */

/* Overwrite @n bytes at a random offset of @p (of @len) with a value. */
static void mutate_bytes(void *p, size_t len)
{
	uint64_t v = interesting64();
	size_t widths[] = { 1, 2, 4, 8 };
	size_t wd = widths[rn(4)], off;

	if (len < wd)
		return;
	off = rn(len - wd + 1) & ~(wd - 1);
	memcpy((uint8_t *)p + off, &v, wd);
}

/*
 * The size field: mostly right; else 0, tiny, VER0 - 1, VER0, or larger
 * with a zero or non-zero tail (the tail is written after the struct).
 */
static uint32_t pick_size(size_t ksize, size_t ver0, size_t *tail, bool *tail_dirty)
{
	*tail = 0;
	*tail_dirty = false;
	switch (rn(14)) {
	case 0: return 0;
	case 1: return rn(8);
	case 2: return ver0 - 1;
	case 3: return ver0;
	case 4: return ver0 - 1 - rn(8);
	case 5: *tail = 8 + rn(64); return ksize + *tail;
	case 6: *tail = 8 + rn(64); *tail_dirty = true; return ksize + *tail;
	case 7: *tail = 4096; return ksize + *tail;
	case 8: return (uint32_t)interesting64();
	default: return ksize;
	}
}

/*
 * Place @len bytes of struct @s (with its size field @size) somewhere:
 * in the arena (maybe misaligned, maybe against the guard page), or at a
 * bad pointer.  Returns the address passed to the kernel.
 */
static uint64_t place(const void *s, size_t len, size_t tail, bool tail_dirty,
		      bool writes_back)
{
	uint8_t *p;

	if (chance(6))
		return bad_ptr(len, writes_back);
	if (chance(3))
		return (uintptr_t)ro_copy(s, len);
	if (chance(3)) {
		/* Against the guard page: the tail or the struct faults. */
		p = arena + ARENA_SZ - len - rn(tail + 1);
		if (p < arena + 256 * KiB)
			p = arena + 256 * KiB;
		memcpy(p, s, len);
		if (p + len + tail <= arena + ARENA_SZ)
			memset(p + len, tail_dirty ? 0xa5 : 0, tail);
		else
			memset(p + len, tail_dirty ? 0xa5 : 0, arena + ARENA_SZ - p - len);
		return (uintptr_t)p;
	}
	p = scratch(len + tail + 8, chance(90) ? 8 : 1);
	if (chance(5))
		p += 1 + rn(7);
	memcpy(p, s, len);
	memset(p + len, 0, tail);
	if (tail_dirty && tail)
		p[len + rn(tail)] = 1 + rn(255);
	return (uintptr_t)p;
}

/*
 * Where in registered buffer @b a request of *@len bytes goes whole: the
 * address (512-aligned, *@len shrunk to fit when it must), or 0 when the
 * buffer holds no aligned block.
 */
static uint64_t fixed_within(const struct dio_fixed_buf *b, uint64_t *len)
{
	uint64_t start = (b->addr + 511) & ~511ULL, end = b->addr + b->len;

	if (start + 512 > end)
		return 0;
	if (*len > end - start)
		*len = (end - start) & ~511ULL;
	return start + (uint64_t)rn((end - start - *len) / 512 + 1) * 512;
}

/*
 * DIO_REQ_FIXED on the read or write @r: a buffer index (mostly 0..3),
 * and the data within the registered buffer of that index (when this
 * descriptor registered one), straddling its end or its start, or left
 * where make_request() put it (within or not, by chance).
 */
static void make_fixed(struct ctxent *c, struct dio_request *r)
{
	const struct dio_fixed_buf *b;
	uint64_t len = r->len, a;

	r->flags |= DIO_REQ_FIXED;
	r->buf_index = chance(90) ? rn(4) : (uint32_t)interesting64();
	if (!c->nfb || chance(15))
		return;
	b = &c->fb[r->buf_index < (uint32_t)c->nfb ? r->buf_index : rn(c->nfb)];
	switch (rn(10)) {
	case 0:	/* Over the end of the buffer. */
		r->buf = ((b->addr + b->len) & ~511ULL) - (len / 1024) * 512;
		break;
	case 1:	/* Before its start. */
		r->buf = (b->addr & ~511ULL) - 512 * (1 + rn(2));
		break;
	default:
		a = fixed_within(b, &len);
		if (a) {
			r->buf = a;
			r->len = len;
		}
		break;
	}
}

/* A request, valid or mutated; returns its address (or a bad one). */
static uint64_t make_request(struct ctxent *c, bool for_flip)
{
	struct dio_request r;
	size_t tail = 0;
	bool dirty = false;
	uint32_t lbs = 512;
	unsigned int op = rn(10);
	uint8_t *p;

	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.handle = pick_handle(c);
	r.cookie = rnd();
	if (op < 4) {
		r.opcode = DIO_OP_READ;
	} else if (op < 9) {
		r.opcode = DIO_OP_WRITE;
		if (chance(15))
			r.flags = DIO_REQ_FUA;
	} else {
		r.opcode = DIO_OP_FLUSH;
	}
	if (r.opcode != DIO_OP_FLUSH) {
		size_t len = lbs * (1 + rn(chance(80) ? 16 : 128));

		r.offset = (uint64_t)rn(DISK_SIZE / lbs) * lbs;
		if (r.offset + len > DISK_SIZE)
			r.offset = DISK_SIZE - len;
		if (chance(20)) {
			/* An iovec array. */
			unsigned int n = 1 + rn(chance(80) ? 4 : 20), i;
			struct iovec *iov = scratch(n * sizeof(*iov), 8);

			for (i = 0; i < n; i++) {
				size_t l = lbs * (1 + rn(8));

				iov[i].iov_base = (void *)(uintptr_t)data_buf(l, chance(95));
				iov[i].iov_len = l;
				if (chance(3))
					iov[i].iov_len = interesting64();
				if (chance(3))
					iov[i].iov_base = (void *)(uintptr_t)bad_ptr(l, false);
			}
			r.flags |= DIO_REQ_IOVEC;
			r.buf = (uintptr_t)iov;
			r.len = n;
			if (chance(3))
				r.buf = bad_ptr(n * sizeof(*iov), false);
		} else {
			r.buf = data_buf(len, chance(95));
			r.len = len;
			if (chance(c->nfb ? 35 : 10))
				make_fixed(c, &r);
		}
	}
	if (chance(2)) {
		/* FIXED with IOVEC or on FLUSH, a buffer index without FIXED. */
		if (chance(50))
			r.flags |= DIO_REQ_FIXED;
		else
			r.buf_index = 1 + rn(4);
	}
	if (chance(25)) {
		/* One field wrong. */
		switch (rn(13)) {
		case 0: r.opcode = rn(256); break;
		case 1: r.flags = rnd(); break;
		case 2: r.pad0 = 1 + rn(255); break;
		case 3: r.len = interesting64(); break;
		case 4: r.offset = interesting64(); break;
		case 5: r.buf = chance(50) ? bad_ptr(r.len, r.opcode == DIO_OP_READ) :
				interesting64() | 0x8000000000000000ULL;
			break;
		case 6: r.handle = (uint32_t)interesting64(); break;
		case 7: r.pi_flags = rnd(); r.flags |= chance(50) ? DIO_REQ_PI : 0; break;
		case 8: r.pi_buf = data_buf(512, true); r.pi_len = 8 * (1 + rn(16));
			r.flags |= DIO_REQ_PI; break;
		case 9: r.app_tag = rnd(); r.app_tag_mask = rnd(); break;
		case 10: r.reserved[rn(2)] = 1 + rn(100); break;
		case 11: r.buf_index = chance(50) ? rn(8) : (uint32_t)interesting64(); break;
		default: mutate_bytes(&r, sizeof(r)); r.size = sizeof(r); break;
		}
	}
	if (chance(8))
		r.size = pick_size(sizeof(r), DIO_REQUEST_SIZE_VER0, &tail, &dirty);
	r.buf = tame(r.buf);
	r.pi_buf = tame(r.pi_buf);
	r.result = 0x5a5a5a5a;
	if (for_flip)
		return 0;
	if (chance(3))
		return bad_ptr(sizeof(r), true);
	/* Requests are 8-aligned in memory; sometimes not. */
	p = scratch(sizeof(r) + tail + 8, chance(95) ? 8 : 1);
	memcpy(p, &r, sizeof(r));
	memset(p + sizeof(r), 0, tail);
	if (dirty && tail)
		p[sizeof(r) + rn(tail)] = 1;
	return (uintptr_t)p;
}

/* An array of @n request addresses: valid, duplicated, garbage. */
static uint64_t make_req_array(struct ctxent *c, unsigned int n)
{
	uint64_t *a = scratch(n * sizeof(uint64_t), 8);
	unsigned int i;

	for (i = 0; i < n; i++) {
		unsigned int k = rn(100);

		if (i > 0 && k < 5)
			a[i] = a[rn(i)];			/* duplicate */
		else if (k < 8)
			a[i] = bad_ptr(sizeof(struct dio_request), true);
		else if (k < 10)
			a[i] = a[i > 0 ? i - 1 : 0] + 8;	/* overlapping */
		else if (k < 12)
			a[i] = (uintptr_t)flipz + (rn(FLIP_SZ / 128) * 128);
		else
			a[i] = make_request(c, false);
	}
	if (chance(3))
		return bad_ptr(n * 8, false);
	return (uintptr_t)a;
}

/*
 * One buffer for REGISTER that it must take (but for the flip zone,
 * whose pages come and go): anonymous memory of the data area (often
 * all of it, which every data_buf() lies in), the flip zone, shared
 * memory (a memfd).
 */
static void good_fixed(struct dio_fixed_buf *b)
{
	size_t len;

	switch (rn(8)) {
	case 0: case 1:
		b->addr = (uintptr_t)arena + 256 * KiB;
		b->len = ARENA_SZ - 256 * KiB;
		break;
	case 2:
		b->addr = (uintptr_t)shm_zone + rn(SHM_SZ / 2);
		b->len = 1 + rn(SHM_SZ / 2);
		break;
	case 3:
		b->addr = (uintptr_t)flipz + rn(FLIP_SZ / 2);
		b->len = 1 + rn(FLIP_SZ / 2);
		break;
	default:
		len = 512 * (1 + rn(chance(80) ? 32 : 1536));
		b->addr = data_buf(len, chance(80));
		b->len = len < ARENA_SZ - 256 * KiB ? len : ARENA_SZ - 256 * KiB;
		break;
	}
}

/*
 * One buffer REGISTER must refuse; returns true when it is sure to
 * (a length of 0 or above 1 GiB, a read-only or PROT_NONE page, a file's
 * mapping), false when the refusal depends (huge spans, bad addresses).
 */
static bool bad_fixed(struct dio_fixed_buf *b)
{
	switch (rn(9)) {
	case 0:
		b->addr = (uintptr_t)ro_page + rn(PAGE);
		b->len = 1 + rn(PAGE);
		return true;				/* EFAULT */
	case 1:
		b->addr = (uintptr_t)none_page + rn(PAGE);
		b->len = 1 + rn(PAGE);
		return true;				/* EFAULT */
	case 2:
		b->addr = (uintptr_t)file_page + rn(PAGE);
		b->len = 1 + rn(PAGE - (b->addr - (uintptr_t)file_page));
		return true;				/* EOPNOTSUPP */
	case 3:
		b->addr = data_buf(512, true);
		b->len = 0;
		return true;				/* EINVAL */
	case 4:
		b->addr = data_buf(512, true);
		b->len = chance(50) ? (1ULL << 30) + 1 + rn(1 << 20) : ~0ULL - rn(2);
		return true;				/* EINVAL */
	case 5:
		/* 1 GiB from the arena: EFAULT at its guard page, or ENOMEM. */
		b->addr = (uintptr_t)arena + 256 * KiB + rn(512 * KiB);
		b->len = 1ULL << 30;
		return false;
	case 6:
		/* Past the end of the address space, or of user space. */
		b->addr = chance(50) ? ~0ULL - rn(PAGE) : 0x7ffffffff000ULL - rn(PAGE);
		b->len = 1 + rn(2 * PAGE);
		return false;
	case 7:
		b->addr = bad_ptr(PAGE, true);
		b->len = 1 + rn(2 * PAGE);
		return false;
	default:
		b->addr = tame(interesting64());
		b->len = interesting64();
		return false;
	}
}

/*
 * An array of @n struct dio_fixed_buf for REGISTER: all of them good, or
 * some bad; *@sure_bad is the first entry REGISTER must refuse (or -1).
 */
static uint64_t make_fixed_array(unsigned int n, int *sure_bad)
{
	struct dio_fixed_buf *a = scratch(n * sizeof(*a), chance(95) ? 8 : 1);
	bool all_good = chance(50);
	unsigned int i;

	*sure_bad = -1;
	for (i = 0; i < n; i++) {
		if (all_good || chance(80))
			good_fixed(&a[i]);
		else if (bad_fixed(&a[i]) && *sure_bad < 0)
			*sure_bad = i;
	}
	if (chance(3)) {
		*sure_bad = -1;
		return bad_ptr(n * sizeof(*a), false);
	}
	return (uintptr_t)a;
}

/* ---- one call ---- */

static int64_t timeout_ns(void)
{
	switch (rn(8)) {
	case 0: return 0;
	case 1: return DIO_WAIT_FOREVER;	/* a timer signal ends it */
	case 2: return -2 - rn(1000);
	case 3: return (int64_t)interesting64();
	default: return rn(5) * 1000000LL;
	}
}

/* The commands only the process that created the descriptor may make. */
static bool owner_only(enum kind k)
{
	return k == K_SUBMIT || k == K_WAIT || k == K_COLLECT ||
	       k == K_REGISTER || k == K_UNREGISTER;
}

/*
 * The documented errnos of each command (uapi header, dioctl.h); EXDEV
 * for SUBMIT, WAIT, COLLECT, REGISTER and UNREGISTER on a descriptor
 * another process created.
 */
static bool allowed(int fdk, enum kind k, int e, bool foreign)
{
	static const int ctl_features[] = { EFAULT, EINVAL, E2BIG, 0 };
	static const int ctl_init[] = { EFAULT, EINVAL, E2BIG, ENOENT, EEXIST,
					EACCES, ENOMEM, EMFILE, 0 };
	/* EMFILE: 65536 opens of one handle by one descriptor (never here). */
	static const int open_[] = { EFAULT, EINVAL, E2BIG, EBADF, ENOTBLK,
				      EBUSY, ENOMEM, EMFILE, 0 };
	static const int close_query[] = { EFAULT, EINVAL, E2BIG, EBADF, 0 };
	static const int stat_[] = { EFAULT, EINVAL, E2BIG, 0 };
	/*
	 * EILSEQ: a write's PI refused before submission (random PI bytes).
	 * EPERM, ETXTBSY and the LSM's EACCES need a read-only or swap device
	 * or a policy, which the fuzzer never has.
	 */
	static const int submit[] = { EFAULT, EINVAL, E2BIG, EBADF, ENXIO, EBUSY,
				      EAGAIN, EOPNOTSUPP, EILSEQ, ENOMEM, 0 };
	static const int wait_[] = { EFAULT, EINVAL, E2BIG, EINTR, ENOENT, 0 };
	static const int collect[] = { EFAULT, EINVAL, E2BIG, EINTR, 0 };
	/*
	 * REGISTER: EBUSY (a set is registered), EFAULT (also a buffer not
	 * mapped, read-only, or past user space), EOPNOTSUPP (a file's
	 * mapping), ENOMEM (RLIMIT_MEMLOCK: uid 1000 is charged), EINTR.
	 */
	static const int register_[] = { EFAULT, EINVAL, E2BIG, EBUSY, EOPNOTSUPP,
					  ENOMEM, EINTR, 0 };
	static const int unregister[] = { EFAULT, EINVAL, E2BIG, ENXIO, 0 };
	static const int counters[] = { EFAULT, EINVAL, E2BIG, EBADF, 0 };
	static const int notty[] = { ENOTTY, 0 };
	const int *set = notty;

	if (fdk == FD_CTL) {
		if (k == K_FEATURES)
			set = ctl_features;
		else if (k == K_INIT)
			set = ctl_init;
	} else {
		switch (k) {
		case K_OPEN: set = open_; break;
		case K_CLOSE: case K_QUERY: set = close_query; break;
		case K_SUBMIT: set = submit; break;
		case K_WAIT: set = wait_; break;
		case K_COLLECT: set = collect; break;
		case K_STAT: set = stat_; break;
		case K_REGISTER: set = register_; break;
		case K_UNREGISTER: set = unregister; break;
		case K_COUNTERS: set = counters; break;
		default: break;
		}
		if (foreign && e == EXDEV && owner_only(k))
			return true;
	}
	for (; *set; set++)
		if (*set == e)
			return true;
	return false;
}

static void track_ctx(int fd, bool shared, bool foreign)
{
	if (w.nctx < MAXCTX) {
		w.ctx[w.nctx++] = (struct ctxent){ .fd = fd, .shared = shared,
						   .foreign = foreign };
		return;
	}
	close(fd);
}

static void one_call(void)
{
	union {
		struct dio_features f;
		struct dio_init in;
		struct dio_open o;
		struct dio_close c;
		struct dio_query q;
		struct dio_submit s;
		struct dio_wait wt;
		struct dio_stat st;
		struct dio_register rg;
		struct dio_counters ct;
		uint8_t raw[512];
	} u;
	struct ctxent *c = pick_ctx();
	int fdk = chance(15) ? FD_CTL : FD_CTX;
	int fd = fdk == FD_CTL ? w.ctl : c->fd;
	enum kind k = rn(K_UNKNOWN);
	unsigned long cmd;
	size_t ksize = 0, ver0 = 0, tail = 0;
	bool dirty = false, writes_back = true, mutated = false;
	uint32_t nr = 0;
	uint64_t arg, fixed_arr = 0;
	int ret, err, sure_bad = -1;

	w.bump = rn(64) * 8;
	memset(&u, 0, sizeof(u));
	/* A struct as a careful caller builds it. */
	switch (k) {
	case K_FEATURES:
		ksize = sizeof(u.f); ver0 = DIO_FEATURES_SIZE_VER0;
		break;
	case K_INIT:
		ksize = sizeof(u.in); ver0 = DIO_INIT_SIZE_VER0;
		switch (rn(5)) {
		case 0: u.in.flags = DIO_PRIVATE; break;
		case 1: u.in.key = SHARED_KEY; break;
		case 2: u.in.key = 0x100 + rn(4); u.in.flags = DIO_CREAT; break;
		case 3: u.in.key = 0x100 + rn(4); u.in.flags = DIO_CREAT | DIO_EXCL; break;
		default: u.in.key = 0x100 + rn(4); break;
		}
		u.in.mode = chance(50) ? 0 : rn(01000);
		break;
	case K_OPEN:
		ksize = sizeof(u.o); ver0 = DIO_OPEN_SIZE_VER0;
		u.o.fd = pick_fd();
		u.o.flags = chance(50) ? DIO_OPEN_NOCLAIM : 0;
		break;
	case K_CLOSE:
		ksize = sizeof(u.c); ver0 = DIO_CLOSE_SIZE_VER0;
		u.c.handle = pick_handle(c);
		writes_back = false;
		break;
	case K_QUERY:
		ksize = sizeof(u.q); ver0 = DIO_QUERY_SIZE_VER0;
		u.q.handle = pick_handle(c);
		break;
	case K_STAT:
		ksize = sizeof(u.st); ver0 = DIO_STAT_SIZE_VER0;
		break;
	case K_COUNTERS:
		ksize = sizeof(u.ct); ver0 = DIO_COUNTERS_SIZE_VER0;
		u.ct.handle = pick_handle(c);
		u.ct.flags = chance(50) ? DIO_COUNTERS_DEVICE : 0;
		break;
	case K_SUBMIT:
		ksize = sizeof(u.s); ver0 = DIO_SUBMIT_SIZE_VER0;
		nr = chance(90) ? 1 + rn(8) : (uint32_t)interesting64();
		u.s.nr = nr;
		u.s.reqs = make_req_array(c, nr <= 64 ? nr : 64);
		if (nr > 64 && chance(50))
			u.s.nr = nr = 4096 + rn(2);	/* the limit, and past it */
		writes_back = false;
		break;
	case K_REGISTER:
		ksize = sizeof(u.rg); ver0 = DIO_REGISTER_SIZE_VER0;
		nr = chance(85) ? 1 + rn(4) : chance(60) ? 1 + rn(64) :
		     chance(50) ? 1024 + rn(2) : (uint32_t)interesting64();
		u.rg.nr = nr;
		u.rg.bufs = fixed_arr = make_fixed_array(nr <= 1024 ? nr : 64, &sure_bad);
		writes_back = false;
		break;
	case K_UNREGISTER:
		ksize = sizeof(u.rg); ver0 = DIO_REGISTER_SIZE_VER0;
		writes_back = false;
		break;
	case K_WAIT:
	case K_COLLECT: {
		uint64_t *a;
		unsigned int i;

		ksize = sizeof(u.wt); ver0 = DIO_WAIT_SIZE_VER0;
		nr = chance(90) ? 1 + rn(16) : (uint32_t)interesting64();
		u.wt.nr = nr;
		a = k == K_COLLECT ? out_zone() : scratch(64 * 8, 8);
		for (i = 0; i < 64; i++) {
			uint64_t got = ring_pick(fd);

			a[i] = got && chance(85) ? got : make_request(c, false);
		}
		u.wt.reqs = chance(5) ? bad_ptr(nr * 8, k == K_COLLECT) : (uintptr_t)a;
		u.wt.min_nr = k == K_COLLECT ? rn(nr + 1 > 17 ? 17 : nr + 1) : 0;
		u.wt.timeout_ns = timeout_ns();
		writes_back = k == K_COLLECT;
		/* COLLECT writes up to nr (at most 4096) slots into its zone. */
		if (nr > 64 && u.wt.reqs == (uintptr_t)a && chance(70))
			u.wt.nr = nr = 64;
		break;
	}
	default:
		break;
	}
	u.f.size = ksize;

	/* One or two things wrong. */
	if (chance(45)) {
		int n = chance(25) ? 2 : 1;

		mutated = true;
		while (n--) {
			switch (rn(4)) {
			case 0:
				u.f.size = pick_size(ksize, ver0, &tail, &dirty);
				break;
			case 1: case 2:
				mutate_bytes(u.raw + 4, ksize > 4 ? ksize - 4 : 0);
				break;
			default:
				/* A random whole struct. */
				for (size_t i = 4; i < ksize; i++)
					u.raw[i] = rnd();
				break;
			}
		}
	}
	/* What the kernel will see, mutations included. */
	if (k == K_SUBMIT)
		nr = u.s.nr;
	if (k == K_WAIT || k == K_COLLECT)
		nr = u.wt.nr;
	if (k == K_COLLECT)
		u.wt.reqs = tame(u.wt.reqs);
	arg = place(&u, ksize ? ksize : 8, tail, dirty, writes_back);

	/* The command number. */
	cmd = k < K_UNKNOWN ? kind_cmd[k] : 0;
	switch (rn(20)) {
	case 0: {
		/* Same number and direction, another size: same command. */
		cmd = _IOC(_IOC_DIR(cmd), DIO_BATCH_IOC_MAGIC, _IOC_NR(cmd), rn(1 << 14));
		break;
	}
	case 1: {
		unsigned int dirs[] = { _IOC_NONE, _IOC_READ, _IOC_WRITE };
		unsigned int d = dirs[rn(3)];

		k = K_WRONGDIR;
		cmd = _IOC(d, DIO_BATCH_IOC_MAGIC,
			   IOC_NR_FIRST + rn(IOC_NR_LAST - IOC_NR_FIRST + 1), rn(1 << 14));
		break;
	}
	case 2: {
		unsigned int nrr = rn(256);

		if (nrr >= IOC_NR_FIRST && nrr <= IOC_NR_LAST)
			nrr = IOC_NR_LAST + 1 + rn(0xff - IOC_NR_LAST);
		k = K_UNKNOWN;
		cmd = _IOC(rn(4), DIO_BATCH_IOC_MAGIC, nrr, rn(1 << 14));
		if (chance(10))
			cmd = 0x5401;	/* TCGETS: reaches the driver */
		break;
	}
	default:
		break;
	}

	ret = ioctl(fd, cmd, (unsigned long)arg);
	err = ret < 0 ? errno : 0;
	w.st->calls++;
	if (err < NERR)
		w.st->hist[fdk][k][err]++;

	if (ret < 0) {
		if (!allowed(fdk, k, err, fdk == FD_CTX && c->foreign))
			bad("%s on %s (cmd %#lx%s): errno %d %s", kind_name[k],
			    fdk == FD_CTL ? "/dev/dio_batch" : "a context",
			    cmd, mutated ? ", mutated" : "", err, strerror(err));
		return;
	}
	/* Success: in the command's range, and its effects tracked. */
	if (k == K_UNKNOWN || k == K_WRONGDIR) {
		bad("%s cmd %#lx on %s succeeded: %d", kind_name[k], cmd,
		    fdk == FD_CTL ? "/dev/dio_batch" : "a context", ret);
		return;
	}
	if (fdk == FD_CTL && k != K_FEATURES && k != K_INIT) {
		bad("%s on /dev/dio_batch succeeded: %d", kind_name[k], ret);
		return;
	}
	if (fdk == FD_CTX && c->foreign && owner_only(k)) {
		bad("%s on the parent's descriptor succeeded: %d", kind_name[k], ret);
		return;
	}
	switch (k) {
	case K_FEATURES: case K_CLOSE: case K_QUERY: case K_STAT: case K_COUNTERS:
		if (ret != 0)
			bad("%s returned %d", kind_name[k], ret);
		break;
	case K_REGISTER:
		/* The kernel saw u.rg: the array (ours) and nr, mutated or not. */
		if (ret != 0) {
			bad("REGISTER returned %d", ret);
		} else if (u.rg.nr < 1 || u.rg.nr > 1024) {
			bad("REGISTER of %u buffers succeeded", u.rg.nr);
		} else if (sure_bad >= 0 && (uint32_t)sure_bad < u.rg.nr &&
			   u.rg.bufs == fixed_arr) {
			const struct dio_fixed_buf *b =
				(const struct dio_fixed_buf *)(uintptr_t)u.rg.bufs + sure_bad;

			bad("REGISTER took buffer %d: %#llx, %llu bytes", sure_bad,
			    (unsigned long long)b->addr, (unsigned long long)b->len);
		} else if (in_arena(u.rg.bufs, (u.rg.nr < 4 ? u.rg.nr : 4) *
					    sizeof(struct dio_fixed_buf))) {
			c->nfb = u.rg.nr < 4 ? u.rg.nr : 4;
			memcpy(c->fb, (const void *)(uintptr_t)u.rg.bufs,
			       c->nfb * sizeof(c->fb[0]));
		}
		break;
	case K_UNREGISTER:
		if (ret != 0)
			bad("UNREGISTER returned %d", ret);
		else
			c->nfb = 0;
		break;
	case K_INIT:
		if (ret < 3)
			bad("INIT returned %d", ret);
		else
			track_ctx(ret, false, false);
		break;
	case K_OPEN:
		if (ret < 1)
			bad("OPEN returned %d", ret);
		else if (c->nh < MAXH)
			c->h[c->nh++] = ret;
		break;
	case K_SUBMIT:
		if (ret < 1 || (uint32_t)ret > nr) {
			bad("SUBMIT of %u returned %d", nr, ret);
		} else {
			const uint64_t *a = (const uint64_t *)(uintptr_t)u.s.reqs;

			/* The array was readable: the kernel read it. */
			if (in_arena(u.s.reqs, ret * 8))
				for (int i = 0; i < ret && i < 64; i++)
					ring_add(fd, a[i]);
		}
		break;
	case K_WAIT:
		if ((uint32_t)ret > nr)
			bad("WAIT of %u returned %d", nr, ret);
		break;
	case K_COLLECT:
		if ((uint32_t)ret > nr) {
			bad("COLLECT of %u returned %d", nr, ret);
		} else if (u.wt.reqs == (uintptr_t)out_zone()) {
			const uint64_t *a = (const uint64_t *)(uintptr_t)u.wt.reqs;

			/* Only addresses of requests this process family submitted. */
			for (int i = 0; i < ret; i++)
				if (!in_mappings(a[i]))
					bad("COLLECT reported address %#llx",
					    (unsigned long long)a[i]);
		}
		break;
	default:
		break;
	}
}

/*
 * Some plain, valid I/O so completions keep flowing; into the registered
 * buffers too, when the descriptor has some.
 */
static void valid_io(void)
{
	struct ctxent *c = pick_ctx();
	struct dio_request *r[4], *got[16];
	unsigned int n = 1 + rn(4), i;
	int ret;

	if (!c->nh)
		return;
	for (i = 0; i < n; i++) {
		size_t len = 512 * (1 + rn(16));
		unsigned int bi = c->nfb ? rn(c->nfb) : 0;
		uint64_t flen = len, fa = c->nfb && chance(50) ?
					 fixed_within(&c->fb[bi], &flen) : 0;

		r[i] = scratch(sizeof(*r[i]), 128);
		if (fa && chance(50))
			dio_req_prep_read_fixed(r[i], c->h[rn(c->nh)],
						(void *)(uintptr_t)fa, flen,
						(uint64_t)rn(DISK_SIZE / 512 - 16) * 512, bi);
		else if (fa)
			dio_req_prep_write_fixed(r[i], c->h[rn(c->nh)],
						 (void *)(uintptr_t)fa, flen,
						 (uint64_t)rn(DISK_SIZE / 512 - 16) * 512, bi);
		else if (chance(50))
			dio_req_prep_read(r[i], c->h[rn(c->nh)],
					  (void *)(uintptr_t)data_buf(len, true), len,
					  (uint64_t)rn(DISK_SIZE / 512 - 16) * 512);
		else
			dio_req_prep_write(r[i], c->h[rn(c->nh)],
					   (void *)(uintptr_t)data_buf(len, true), len,
					   (uint64_t)rn(DISK_SIZE / 512 - 16) * 512);
	}
	ret = sys_dio_submit(c->fd, r, n);
	if (c->foreign && (ret != -1 || errno != EXDEV))
		bad("SUBMIT on the parent's descriptor: %d (%s), want EXDEV", ret,
		    ret < 0 ? strerror(errno) : "queued");
	if (ret > 0)
		for (i = 0; i < (unsigned int)ret; i++) {
			unsigned int k = w.sub_pos++ % 64;

			ring_add(c->fd, (uintptr_t)r[i]);
			w.sub[k].addr = (uintptr_t)r[i];
			w.sub[k].len = r[i]->len;
			w.sub[k].fixed = r[i]->flags & DIO_REQ_FIXED;
		}
	ret = sys_dio_collect(c->fd, got, 0, 16, &(struct timespec){ 0, 0 });
	if (c->foreign && (ret != -1 || errno != EXDEV))
		bad("COLLECT on the parent's descriptor: %d (%s), want EXDEV", ret,
		    ret < 0 ? strerror(errno) : "reported");
	/* Counted: this function's requests reported with their whole length. */
	for (i = 0; ret > 0 && i < (unsigned int)ret; i++) {
		if (!in_arena((uintptr_t)got[i], sizeof(*got[i])))
			continue;
		for (unsigned int k = 0; k < 64 && k < w.sub_pos; k++) {
			unsigned int s = (w.sub_pos - 1 - k) % 64;

			if (w.sub[s].addr != (uintptr_t)got[i])
				continue;
			if (got[i]->result > 0 && (uint64_t)got[i]->result == w.sub[s].len) {
				w.st->io_ok++;
				w.st->fixed_ok += w.sub[s].fixed;
			}
			w.sub[s].addr = 0;
			break;
		}
	}
}

/* Other things a program does to its descriptors. */
static void housekeeping(void)
{
	struct dio_init in = { .size = sizeof(in) };
	int i = rn(w.nctx), fd;

	switch (rn(8)) {
	case 0:
		/* Close one, requests in flight or not. */
		if (!w.ctx[i].inherited && w.nctx > 2) {
			close(w.ctx[i].fd);
			w.ctx[i] = w.ctx[--w.nctx];
		}
		break;
	case 1:
		fd = dup(w.ctx[i].fd);
		if (fd >= 0 && w.nctx < MAXCTX) {
			/* The same file: the same registered buffers. */
			track_ctx(fd, w.ctx[i].shared, w.ctx[i].foreign);
			memcpy(w.ctx[w.nctx - 1].fb, w.ctx[i].fb, sizeof(w.ctx[i].fb));
			w.ctx[w.nctx - 1].nfb = w.ctx[i].nfb;
		} else if (fd >= 0) {
			close(fd);
		}
		break;
	case 2:
		in.flags = DIO_PRIVATE;
		fd = ioctl(w.ctl, DIO_IOC_INIT, &in);
		if (fd >= 0)
			track_ctx(fd, false, false);
		break;
	case 3:
		in.key = SHARED_KEY;
		fd = ioctl(w.ctl, DIO_IOC_INIT, &in);
		if (fd >= 0)
			track_ctx(fd, true, false);
		break;
	default: {
		/* A handle on one of the disks. */
		struct dio_open o = { .size = sizeof(o), .fd = w.fds[rn(3)],
				      .flags = chance(70) ? DIO_OPEN_NOCLAIM : 0 };
		int h = ioctl(w.ctx[i].fd, DIO_IOC_OPEN, &o);

		if (h >= 1 && w.ctx[i].nh < MAXH)
			w.ctx[i].h[w.ctx[i].nh++] = h;
		break;
	}
	}
}

/* ---- the flipper: pages that come and go while the kernel reads them ---- */

static volatile int flip_stop;
static int flip_handle;

/* Valid requests, 128 bytes apart, in the page at @off of the flip zone. */
static void flip_fill(size_t off)
{
	for (size_t i = off / 128; i < (off + PAGE) / 128; i++) {
		struct dio_request *r = (struct dio_request *)(flipz + i * 128);

		dio_req_prep_read(r, flip_handle, flipz + (i % 16) * PAGE,
				  512 * (1 + i % 8), (uint64_t)i * 4096);
	}
}

static void *flipper(void *arg)
{
	uint64_t local = (uintptr_t)arg;

	rs = local;
	while (!flip_stop) {
		size_t off = rn(FLIP_SZ / PAGE) * PAGE;

		if (chance(50)) {
			mprotect(flipz + off, PAGE, PROT_NONE);
		} else {
			mprotect(flipz + off, PAGE, PROT_READ | PROT_WRITE);
			if (chance(5))
				madvise(flipz + off, PAGE, MADV_DONTNEED);
			if (chance(20))
				flip_fill(off);
		}
		usleep(rn(200));
	}
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void worker(int id, int inherited_fd, int hshared, int nfds, const int *fds,
		   uint64_t budget_ns, long max_calls, long min_calls)
{
	struct sigaction sa;
	struct itimerval it = { { 0, 20000 }, { 0, 20000 } };
	sigset_t set;
	pthread_t ft;
	uint64_t t0 = tl_now_ns();

	memset(&w, 0, sizeof(w));
	w.id = id;
	w.st = &ws[id];
	rs = seed * 0x100000001b3ULL + id;
	w.nfds = nfds;
	memcpy(w.fds, fds, nfds * sizeof(int));
	w.ctl = open("/dev/dio_batch", O_RDWR | O_CLOEXEC);
	if (w.ctl < 0) {
		bad("worker %d: /dev/dio_batch: %s", id, strerror(errno));
		_exit(2);
	}
	w.ctx[0] = (struct ctxent){ .fd = inherited_fd, .shared = true,
				    .inherited = true, .foreign = true,
				    .h = { hshared }, .nh = 1 };
	w.nctx = 1;
	{
		struct dio_init in = { .size = sizeof(in), .key = SHARED_KEY };
		int fd = ioctl(w.ctl, DIO_IOC_INIT, &in);

		if (fd < 0) {
			bad("worker %d: joining the shared context: %s", id,
			    strerror(errno));
			_exit(2);
		}
		track_ctx(fd, true, false);
	}
	if (id == NWORKERS - 1) {
		/* This one is not root: joins of root's 0600 contexts fail. */
		if (tl_drop_to(1000, 1000, 0)) {
			bad("worker %d: dropping to uid 1000: %s", id, strerror(errno));
			_exit(2);
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART: blocked waits end */
	sigaction(SIGALRM, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_create(&ft, NULL, flipper, (void *)(uintptr_t)(rnd() | 1));
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	setitimer(ITIMER_REAL, &it, NULL);

	/*
	 * The budget, and past it (up to four times) until this worker's
	 * share of the floor: the floor is an amount of work, not a speed.
	 */
	while (w.st->calls < max_calls &&
	       (tl_now_ns() - t0 < budget_ns ||
		(w.st->calls < min_calls && tl_now_ns() - t0 < 4 * budget_ns))) {
		unsigned int k = rn(100);

		if (k < 6)
			housekeeping();
		else if (k < 12)
			valid_io();
		else
			one_call();
	}

	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	flip_stop = 1;
	pthread_join(ft, NULL);
	/* Everything goes, requests in flight included. */
	for (int i = 0; i < w.nctx; i++)
		if (!w.ctx[i].inherited && close(w.ctx[i].fd))
			bad("worker %d: close: %s", id, strerror(errno));
	close(w.ctl);
	w.st->done = 1;
	_exit(0);
}

/* ---- the test ---- */

static int setup(void **state)
{
	char names[4][32];
	int n, i;

	if (tl_dio_load())
		return -1;
	if (tl_scsi_debug_load("dev_size_mb=16 max_luns=2 dif=1 dix=1 guard=0",
			       disks[0], sizeof(disks[0])))
		return -1;
	n = tl_scsi_debug_wait_disks(2, names, 4);
	if (n != 2) {
		fprintf(stderr, "fuzz: %d scsi_debug disks, want 2\n", n);
		return -1;
	}
	for (i = 0; i < 2; i++) {
		snprintf(disks[i], sizeof(disks[i]), "/dev/%.31s", names[i]);
		for (n = 0; n < 200 && access(disks[i], F_OK); n++)
			usleep(50000);
	}
	return 0;
}

static int teardown(void **state)
{
	return tl_scsi_debug_unload();
}

static long env_long(const char *name, long def)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 0) : def;
}

static void print_histogram(void)
{
	for (int fdk = 0; fdk < NFDK; fdk++) {
		for (int k = 0; k < NKIND; k++) {
			char line[1024];
			int n = 0;
			long total = 0;

			for (int e = 0; e < NERR; e++) {
				long c = 0;

				for (int i = 0; i < NWORKERS; i++)
					c += ws[i].hist[fdk][k][e];
				if (!c)
					continue;
				total += c;
				n += snprintf(line + n, sizeof(line) - n, " %s=%ld",
					      e ? strerrorname_np(e) ?: "?" : "ok", c);
			}
			if (total)
				print_message("#   %-15s %-9s %6ld:%s\n",
					      fdk == FD_CTL ? "/dev/dio_batch" : "context",
					      kind_name[k], total, line);
		}
	}
}

static void test_fuzz(void **state)
{
	bool debug = tl_debug_kernel() == 1;
	long seconds = env_long("DIO_FUZZ_SECONDS", debug ? 30 : 15);
	uint64_t budget = seconds * 1000000000ULL;
	long max_calls = env_long("DIO_FUZZ_CALLS", 200000);
	long min_calls = seconds * (debug ? FUZZ_MIN_RATE_DEBUG : FUZZ_MIN_RATE);
	int fds[12], nfds = 0, shared, hshared, p[2], i, st;
	long calls = 0, io_ok = 0, fixed_ok = 0, nbad = 0;
	struct rlimit ml;
	char failure[256] = "";
	pid_t pid[NWORKERS];
	uint64_t t0;

	seed = tl_seed("DIO_FUZZ_SEED");
	if (min_calls > NWORKERS * max_calls / 2)
		min_calls = NWORKERS * max_calls / 2;
	min_calls = env_long("DIO_FUZZ_MIN_CALLS", min_calls);
	print_message("# fuzz: the seed reproduces a worker's sequence; %d workers, "
		      "%.0f s or %ld calls each, at least %ld calls in all\n",
		      NWORKERS, budget / 1e9, max_calls, min_calls);

	/* The same addresses in every worker. */
	ws = mmap(NULL, NWORKERS * sizeof(*ws), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	arena = mmap(NULL, ARENA_SZ + PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	flipz = mmap(NULL, FLIP_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro_page = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	none_page = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(ws != MAP_FAILED && arena != MAP_FAILED && flipz != MAP_FAILED &&
		    ro_page != MAP_FAILED && none_page != MAP_FAILED);
	assert_int_equal(mprotect(arena, ARENA_SZ, PROT_READ | PROT_WRITE), 0);
	memset(arena, 0, ARENA_SZ);
	/* REGISTER's: a private writable mapping of a file, and a memfd's. */
	{
		int xfd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
		int mfd = memfd_create("fuzz-fixed", MFD_CLOEXEC);

		assert_true(xfd >= 0 && mfd >= 0);
		assert_int_equal(ftruncate(mfd, SHM_SZ), 0);
		file_page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, xfd, 0);
		shm_zone = mmap(NULL, SHM_SZ, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
		assert_true(file_page != MAP_FAILED && shm_zone != MAP_FAILED);
		close(xfd);
		close(mfd);
	}
	/* Worker 3 (uid 1000) registers against it; root is not charged. */
	assert_int_equal(getrlimit(RLIMIT_MEMLOCK, &ml), 0);
	print_message("# fuzz: RLIMIT_MEMLOCK %lld bytes (uid 1000's registrations)\n",
		      ml.rlim_cur == RLIM_INFINITY ? -1LL : (long long)ml.rlim_cur);
	memset(ws, 0, NWORKERS * sizeof(*ws));

	/* Descriptors OPEN may be given: disks RW and RO, odd ones. */
	for (i = 0; i < 2; i++) {
		fds[nfds++] = open(disks[i], O_RDWR | O_CLOEXEC);
		fds[nfds++] = open(disks[i], O_RDONLY | O_CLOEXEC);
	}
	fds[nfds++] = open(disks[0], O_PATH | O_CLOEXEC);
	fds[nfds++] = open("/dev/null", O_RDWR | O_CLOEXEC);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	fds[nfds++] = p[0];
	fds[nfds++] = open("/tmp/fuzz-regular", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	for (i = 0; i < nfds; i++)
		assert_true(fds[i] >= 0);
	/* Reorder: the first three are the ones housekeeping opens. */
	{
		int t = fds[1];

		fds[1] = fds[2];	/* disk 1 RW */
		fds[2] = t;		/* disk 0 RO */
	}

	/* The keyed context, with a claimed handle on disk 0. */
	shared = sys_dio_init(SHARED_KEY, DIO_CREAT | DIO_EXCL);
	assert_true(shared >= 0);
	hshared = sys_dio_open(shared, fds[0], 0);
	assert_true(hshared >= 1);
	/* The flip zone: valid requests on that handle, 128 bytes apart. */
	flip_handle = hshared;
	for (i = 0; i < (int)(FLIP_SZ / PAGE); i++)
		flip_fill(i * PAGE);

	t0 = tl_now_ns();
	for (i = 0; i < NWORKERS; i++) {
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0)
			worker(i, shared, hshared, nfds, fds, budget, max_calls,
			       (min_calls + NWORKERS - 1) / NWORKERS);
	}
	for (i = 0; i < NWORKERS; i++) {
		/* Workers run up to four budgets; then 120 s to close (a hang guard). */
		uint64_t limit = 4 * budget + 120000000000ULL;
		pid_t r;

		while ((r = waitpid(pid[i], &st, WNOHANG)) == 0 && tl_now_ns() - t0 < limit)
			usleep(100000);
		if (r == 0) {
			kill(pid[i], SIGKILL);
			waitpid(pid[i], &st, 0);
			snprintf(failure, sizeof(failure),
				 "worker %d did not finish in time", i);
		} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !ws[i].done) {
			snprintf(failure, sizeof(failure),
				 "worker %d ended with status %#x (signal %d)", i, st,
				 WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		}
		calls += ws[i].calls;
		io_ok += ws[i].io_ok;
		fixed_ok += ws[i].fixed_ok;
		nbad += ws[i].nbad;
		print_message("#   worker %d: %ld calls%s\n", i, ws[i].calls,
			      i == NWORKERS - 1 ? " (uid 1000)" : "");
	}
	print_message("# fuzz: %ld calls, %ld plain requests completed (%ld of them in "
		      "registered buffers), seed %llu, %.1f s\n", calls, io_ok, fixed_ok,
		      (unsigned long long)seed, (tl_now_ns() - t0) / 1e9);
	print_histogram();
	for (i = 0; i < NWORKERS; i++)
		for (int k = 0; k < ws[i].nbad && k < NBAD; k++)
			print_message("# worker %d: %s\n", i, ws[i].bad[k]);
	if (nbad && !failure[0])
		snprintf(failure, sizeof(failure),
			 "%ld calls outside their command's results (seed %llu)", nbad,
			 (unsigned long long)seed);
	if (calls < min_calls && !failure[0])
		snprintf(failure, sizeof(failure),
			 "%ld calls in all, fewer than the floor of %ld (%s kernel; "
			 "DIO_FUZZ_MIN_CALLS sets it)", calls, min_calls,
			 debug ? "debug" : "stock");
	if (failure[0]) {
		/* Leave nothing behind for the next test. */
		close(shared);
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		close(p[1]);
		fail_msg("%s", failure);
	}

	/* Everything closes and drains. */
	assert_int_equal(close(shared), 0);
	for (i = 0; i < nfds; i++)
		assert_int_equal(close(fds[i]), 0);
	close(p[1]);
	assert_true(tl_dio_caches_drained(30));
	assert_int_equal(tl_dio_refcnt(), 0);
	munmap(arena, ARENA_SZ + PAGE);
	munmap(flipz, FLIP_SZ);
	munmap(file_page, PAGE);
	munmap(shm_zone, SHM_SZ);
}

/* After the storm: plain I/O on both disks works and returns the data. */
static void test_io_still_works(void **state)
{
	struct dio_request r, *rp = &r;
	uint8_t *wb = NULL, *rb = NULL;

	assert_int_equal(posix_memalign((void **)&wb, 4096, 64 * KiB), 0);
	assert_int_equal(posix_memalign((void **)&rb, 4096, 64 * KiB), 0);
	for (int d = 0; d < 2; d++) {
		int ctx = sys_dio_init(0, DIO_PRIVATE), fd = open(disks[d], O_RDWR | O_CLOEXEC), h;

		assert_true(ctx >= 0 && fd >= 0);
		h = sys_dio_open(ctx, fd, 0);
		assert_true(h >= 1);
		for (size_t i = 0; i < 64 * KiB; i++)
			wb[i] = i * 7 + d;
		dio_req_prep_write(&r, h, wb, 64 * KiB, 1 * MiB);
		assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
		assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
		assert_int_equal(r.result, 64 * KiB);
		dio_req_prep_read(&r, h, rb, 64 * KiB, 1 * MiB);
		assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
		assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
		assert_int_equal(r.result, 64 * KiB);
		assert_memory_equal(wb, rb, 64 * KiB);
		close(ctx);
		close(fd);
	}
	free(wb);
	free(rb);
	assert_int_equal(tl_slab_wait("dio_handle", 0, 10), 0);
}

/*
 * Seconds user space takes to read @len bytes of a fresh zero mapping a
 * word at a time: the page faults and loads a kernel scan of them would
 * make, on this machine under its present load.
 */
static double zero_scan_seconds(size_t len)
{
	uint64_t *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			   -1, 0);
	const volatile uint64_t *v = m;
	uint64_t t0, any = 0;
	double sec;

	assert_true(m != MAP_FAILED);
	t0 = tl_now_ns();
	for (size_t i = 0; i < len / 8; i++)
		any |= v[i];
	sec = (tl_now_ns() - t0) / 1e9;
	assert_true(any == 0);
	munmap(m, len);
	return sec;
}

/*
 * A struct size of 1 GiB - 1 over memory that reads as zeros: the kernel
 * must not scan a gigabyte of user memory for a non-zero tail per struct
 * (clone3(), openat2() and sched_setattr() refuse sizes above a page with
 * E2BIG for this reason; sizes go up to 4 GiB - 1, and a SUBMIT takes 4096
 * requests).  One INIT, then one SUBMIT of four requests, each alone at
 * the start of a 1 GiB zero mapping: each call must return with E2BIG or
 * success, in about the time of an ordinary call, whatever the machine's
 * speed and load: at most 50 times the slowest of five plain INITs, plus
 * 50 ms, plus four times what reading 64 MiB of zeros takes user space
 * here and now (a quarter of what a scan of the gigabyte would take).
 * That last term absorbs a guest descheduled in the middle of a call,
 * which the 50 ms alone did not always; a scan of the gigabyte would still
 * take well over twice the whole bound (6.1 beside a kernel build: INIT
 * 63 us, 64 MiB of zeros 34 ms, bound 190 ms, a gigabyte about 540 ms;
 * the calls took under 5 ms).
 */
static void test_huge_size_is_bounded(void **state)
{
	enum { NREQ = 4 };
	const size_t map = 1ULL << 30;
	const uint32_t size = map - 1;
	uint8_t *m[NREQ];
	struct dio_request *rp[NREQ];
	int ctl = open("/dev/dio_batch", O_RDWR | O_CLOEXEC);
	int ctx = sys_dio_init(0, DIO_PRIVATE), fd = open(disks[0], O_RDWR | O_CLOEXEC);
	uint8_t *buf = NULL;
	char failure[256] = "";
	uint64_t t0;
	double sec, base = 0, bound, scan;
	int i, ret, h;

	assert_true(ctl >= 0 && ctx >= 0 && fd >= 0);
	h = sys_dio_open(ctx, fd, 0);
	assert_true(h >= 1);
	assert_int_equal(posix_memalign((void **)&buf, 4096, NREQ * 4096), 0);
	for (i = 0; i < NREQ; i++) {
		m[i] = mmap(NULL, map, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		assert_true(m[i] != MAP_FAILED);
	}

	for (i = 0; i < 5; i++) {
		struct dio_init in = { .size = sizeof(in), .flags = DIO_PRIVATE };

		t0 = tl_now_ns();
		ret = ioctl(ctl, DIO_IOC_INIT, &in);
		sec = (tl_now_ns() - t0) / 1e9;
		assert_true(ret >= 0);
		close(ret);
		if (sec > base)
			base = sec;
	}
	scan = zero_scan_seconds(64 << 20);
	bound = 0.05 + 50 * base + 4 * scan;
	print_message("# a plain INIT takes %.1f us, reading 64 MiB of zeros %.0f ms: bound %.0f ms\n",
		      base * 1e6, scan * 1e3, bound * 1e3);

	/* INIT: the size, DIO_PRIVATE, all else zero. */
	((struct dio_init *)m[0])->size = size;
	((struct dio_init *)m[0])->flags = DIO_PRIVATE;
	t0 = tl_now_ns();
	ret = ioctl(ctl, DIO_IOC_INIT, m[0]);
	sec = (tl_now_ns() - t0) / 1e9;
	print_message("# INIT of size 1 GiB - 1 over zeros: %d (%s) in %.2f s\n", ret,
		      ret < 0 ? strerror(errno) : "success", sec);
	if (ret >= 0)
		close(ret);
	else if (errno != E2BIG)
		snprintf(failure, sizeof(failure), "INIT: %s", strerror(errno));
	if (sec > bound)
		snprintf(failure, sizeof(failure),
			 "INIT scanned user memory for %.2f s", sec);

	/* SUBMIT: valid reads, each of that size. */
	for (i = 0; i < NREQ; i++) {
		rp[i] = (struct dio_request *)m[i];
		dio_req_prep_read(rp[i], h, buf + i * 4096, 4096, i * 4096);
		rp[i]->size = size;
	}
	t0 = tl_now_ns();
	ret = sys_dio_submit(ctx, rp, NREQ);
	sec = (tl_now_ns() - t0) / 1e9;
	print_message("# SUBMIT of %d requests of size 1 GiB - 1: %d (%s) in %.2f s\n",
		      NREQ, ret, ret < 0 ? strerror(errno) : "queued", sec);
	if (ret > 0)
		assert_int_equal(sys_dio_wait(ctx, rp, ret, NULL), ret);
	else if (errno != E2BIG && !failure[0])
		snprintf(failure, sizeof(failure), "SUBMIT: %s", strerror(errno));
	if (sec > bound && !failure[0])
		snprintf(failure, sizeof(failure), "SUBMIT stayed in the kernel "
			 "%.2f s scanning %d x 1 GiB of user memory", sec, NREQ);

	for (i = 0; i < NREQ; i++)
		munmap(m[i], map);
	free(buf);
	close(ctx);
	close(fd);
	close(ctl);
	if (failure[0])
		fail_msg("%s", failure);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_huge_size_is_bounded),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_io_still_works),
	};

	return cmocka_run_group_tests_name("fuzz", tests, setup, teardown);
}
