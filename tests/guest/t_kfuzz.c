// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A coverage-guided ioctl fuzzer (KCOV), in the style of syzkaller and AFL.
 *
 * An input is a program: up to MAXCALLS calls (FEATURES, INIT, OPEN, CLOSE,
 * QUERY, SUBMIT, WAIT, COLLECT, STAT, REGISTER, UNREGISTER, COUNTERS, and
 * close(2), dup(2), fork(2) of context descriptors) whose arguments refer to the
 * results of earlier calls (descriptors, handles, submitted requests) and
 * carry the mutations: struct sizes (0, too small, VER0, exact, larger
 * with a zero or non-zero tail, a page, above a page), pointers (NULL,
 * never mapped, PROT_NONE, read-only, misaligned, straddling an unmapped
 * page, kernel, non-canonical), one or two "pokes" (a value written over
 * any field), wrong command numbers, flags with unknown bits, request
 * arrays with duplicates and earlier requests, iovecs, PI buffers
 * (generated, bad guard or ref tag, short, long), registered buffers
 * (REGISTER of 0 to 255 ranges of the data area, one of them maybe
 * read-only, PROT_NONE, a file's mapping, shared memory, empty, huge,
 * wrapping, past user space; requests with DIO_REQ_FIXED and a buffer
 * index) and real I/O on four PI devices: two scsi_debug disks (dif=1
 * dix=1, CRC guard), NVMe nsid 2 (CRC64, 4 KiB blocks) and nsid 4 (16
 * bytes of metadata, 8 of PI).
 *
 * Execution: the supervisor (this cmocka program) forks an executor per
 * program.  It enables KCOV on its own task, runs the calls, collects the
 * requests still in flight on its descriptors (up to a second), closes
 * what the calls made (all of that is covered too) and exits, so that
 * programs do not meet each other's claims and completions; a FORK call forks a second
 * process (as root or as uid 1000) that runs the calls marked proc=1
 * concurrently with KCOV of its own: it inherits every descriptor (the
 * parent's are foreign there: SUBMIT, WAIT, COLLECT, REGISTER and
 * UNREGISTER are EXDEV) and may join a keyed context with INIT
 * (DIO_FOREIGN as uid 1000).  Each call must succeed (in its range) or
 * fail with an errno of its command's documented set (the same sets as
 * t_fuzz.c); a violation, a crash, a
 * program that does not finish in PROG_TIMEOUT seconds or a kernel report
 * (a line of tests/vm/report-patterns in /dev/kmsg after the program)
 * fails the test and prints the program, the seed and the iteration.
 *
 * Coverage: /sys/kernel/debug/kcov in KCOV_TRACE_PC mode, one buffer per
 * process, read per call; PCs outside the module's text sections (from
 * /sys/module/dio_batch/sections and /proc/modules) are ignored.  Edges
 * are AFL's (hash of the previous and the current PC, per call) in a
 * bitmap of MAPBITS bits.  A program that reaches edges the map does not
 * have runs a second time, and joins the corpus when both runs reached
 * some of them (syzkaller's triage: those are the edges the map takes).
 * The next program is a corpus entry (one of the newest eight, or the
 * less picked of two) mutated one to three times: an argument changed,
 * a call inserted, removed, duplicated, two swapped, or spliced with
 * another entry; sometimes a new random program.
 *
 * The text form (one call per line, "N: OP field=value ...", only fields
 * that are not zero; "ctx=N" is the descriptor call N made, "ctx=ctl"
 * /dev/dio_batch, "r1.h=N" the handle OPEN call N returned, "proc=1" a
 * call of the forked process; anything after ';' is a comment) is what a
 * failure prints (lines "# prog: ..."), what DIO_KFUZZ_CORPUS holds and
 * what DIO_KFUZZ_REPLAY runs.
 *
 * Environment:
 *   DIO_KFUZZ_SEED     the seed (default: time ^ pid; printed)
 *   DIO_KFUZZ_ITERS    programs run after the seeds (default: no bound; the
 *                      triage's second run of a program is not counted)
 *   DIO_KFUZZ_SECONDS  time bound (default 60: make check's; `make fuzz`
 *                      runs longer, with a corpus); the first bound
 *                      reached ends the run, but a run below the floor of
 *                      executions goes on (up to four times the bound)
 *   DIO_KFUZZ_CORPUS   a directory: every file in it is a seed program (text
 *                      form), and each new corpus entry is written there as
 *                      HASH.prog, so long runs (make fuzz) accumulate
 *   DIO_KFUZZ_MIN_EXECS the floor of executions (default 200, at most ITERS):
 *                      fewer fails the run
 *   DIO_KFUZZ_REPLAY   a file: run that program once, print every call's
 *                      result and fail on a violation (no fuzzing)
 * The built-in seeds (a valid INIT, OPEN, SUBMIT, WAIT, COLLECT, CLOSE flow
 * on each device, with and without PI; a keyed context shared with a uid
 * 1000 process) always run first, then the corpus directory's files.
 *
 * Reproducibility: the generator draws only from the seed (the built-in
 * seeds, then the corpus files in name order, run before it draws), and
 * a program's calls depend only on the program: a seed and an iteration
 * count give the same sequence of programs as long as the same programs
 * joined the corpus, i.e. as long as each program reached the same new
 * edges.  The module's paths mostly depend on the arguments and on the
 * state the program made, but not all: whether a request completed
 * before its WAIT or COLLECT looked (completions run in interrupt
 * context, which KCOV does not trace; the waits' paths differ), and how a
 * forked process interleaves with its parent, vary with timing.  The
 * triage keeps most of that noise out, not all: on the debug kernel under
 * TCG the seeds' edges differed by about 2% between two runs, and the
 * sequences of two runs with one seed parted after a few programs.  So a
 * failure prints the program itself, with each call's result: that is
 * what to replay (DIO_KFUZZ_REPLAY), and the seed and iteration say where
 * it came from.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
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
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/kcov.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

#define KiB		1024ULL
#define MiB		(1024 * KiB)
#define PAGE		4096UL
#define MAXCALLS	16
#define MAXREQ		4
#define NDEV		4
#define NFDS		16
#define REF_CTL		0xff		/* ctx: /dev/dio_batch itself */
#define RAW		0x80		/* handle refs: raw_handle[ref & 7] */
#define KCOV_WORDS	(1 << 18)	/* entries of each KCOV buffer */
#define MAPBITS		(1 << 16)	/* edge bitmap */
#define PCSET		(1 << 16)	/* distinct PCs kept */
/*
 * Seconds one program may take, a hang guard: a program is at most 16
 * calls, WAIT and COLLECT cut short by a timer signal, reads and writes of
 * at most a few MiB, and a teardown that drains for 200 ms at most per
 * descriptor; a second or two on the debug kernel under load.
 */
#define PROG_TIMEOUT	30
#define MIN_EXECS	200
#define KEY0		0xdbf0ULL

/* The arena every executor inherits (copy on write), and what lives where. */
#define A_ARGS		0			/* 16 x 8 KiB: argument structs */
#define A_REQS		(128 * KiB)		/* 64 x 8 KiB: requests */
#define A_ARR		(640 * KiB)		/* 16 x 8 KiB: request arrays */
#define A_IOV		(768 * KiB)		/* 64 x 1 KiB: iovec arrays */
#define A_PI		(832 * KiB)		/* 64 x 8 KiB: PI buffers */
#define A_RO		(1344 * KiB)		/* 96 read-only pages */
#define A_DATA		(2 * MiB)		/* 64 x 64 KiB: data */
#define ARENA_SZ	(8 * MiB)		/* then one PROT_NONE page */
#define SLOT(i, j)	((i) * MAXREQ + (j))

enum op {
	OP_FEATURES, OP_INIT, OP_OPEN, OP_CLOSE, OP_QUERY, OP_SUBMIT, OP_WAIT,
	OP_COLLECT, OP_STAT, OP_REGISTER, OP_UNREGISTER, OP_COUNTERS, OP_CLOSEFD,
	OP_DUP, OP_FORK, NOPS
};
#define OP_LASTIOC	OP_COUNTERS	/* the ioctls: OP_FEATURES to here */
/*
 * REGISTER's buffers: entry k is a range of the data area (k % 4: all of
 * it, its first half, its second half, 1 MiB from a misaligned address),
 * but for entry bent, which has the shape bshape (B_OK: the same).
 */
enum { B_OK, B_RO, B_NONE, B_FILE, B_SHM, B_ZERO, B_HUGE, B_GIG, B_WRAP, B_TOP,
       B_LOW, B_GUARD, NB };
enum { SZ_EXACT, SZ_ZERO, SZ_TINY, SZ_VER0M1, SZ_VER0, SZ_TAIL0, SZ_TAIL1,
       SZ_PAGE, SZ_PAGE1, SZ_HUGE, NSZ };
enum { P_OK, P_NULL, P_LOW, P_NONE, P_RO, P_MIS1, P_MIS4, P_GUARD, P_KERN,
       P_NONCANON, P_END, NPTR };
enum { CMD_OK, CMD_SIZE, CMD_DIR, CMD_UNKNOWN, NCMD };
enum { T_ZERO, T_1MS, T_10MS, T_NEG, T_FOREVER, T_HUGE, NTMO };
enum { PI_NONE, PI_GEN, PI_BADGUARD, PI_BADREF, PI_SHORT, PI_LONG, PI_ZERO,
       PI_PTR, NPI };
enum { E_NEW, E_PREV, E_DUP, NEK };	/* entries of SUBMIT and WAIT arrays */

static const char *const op_names[] = {
	"FEATURES", "INIT", "OPEN", "CLOSE", "QUERY", "SUBMIT", "WAIT",
	"COLLECT", "STAT", "REGISTER", "UNREGISTER", "COUNTERS", "CLOSEFD", "DUP",
	"FORK", NULL };
static const char *const sz_names[] = {
	"exact", "zero", "tiny", "ver0-1", "ver0", "tail0", "tail1", "page",
	"page+1", "huge", NULL };
static const char *const ptr_names[] = {
	"ok", "null", "low", "none", "ro", "mis1", "mis4", "guard", "kernel",
	"noncanon", "end", NULL };
static const char *const cmd_names[] = { "ok", "size", "dir", "unknown", NULL };
static const char *const tmo_names[] = {
	"0", "1ms", "10ms", "neg", "forever", "huge", NULL };
static const char *const pi_names[] = {
	"none", "gen", "badguard", "badref", "short", "long", "zero", "ptr", NULL };
static const char *const ek_names[] = { "new", "prev", "dup", NULL };
static const char *const opc_names[] = { "read", "write", "flush", NULL };
static const char *const b_names[] = {
	"ok", "ro", "none", "file", "shm", "zero", "huge", "gig", "wrap", "top",
	"low", "guard", NULL };

struct poke {			/* @width bytes of @val at byte @off; width 0: none */
	uint16_t off;
	uint8_t width;
	uint8_t pad[5];
	uint64_t val;
};

struct req {
	uint8_t kind;		/* E_* */
	uint8_t ref;		/* E_PREV: the SUBMIT call; E_DUP: the entry */
	uint8_t idx;		/* E_PREV: its request */
	uint8_t opcode;
	uint16_t flags;		/* DIO_REQ_* */
	uint16_t pi_flags;
	uint8_t h;		/* the OPEN call whose handle, or RAW | n */
	uint8_t rptr;		/* P_* of the request */
	uint8_t buf;		/* P_* of the data (of the iovec array with IOVEC) */
	uint8_t pi;		/* PI_* */
	uint8_t nseg;		/* iovecs; 0x80: one misaligned, 0x40: one unmapped */
	uint8_t size;		/* SZ_* */
	uint16_t app_tag, app_mask;
	uint16_t blocks;	/* data length in logical blocks */
	uint16_t bidx;		/* buf_index (DIO_REQ_FIXED) */
	uint16_t pad;
	uint32_t lba;		/* offset in logical blocks */
	uint32_t pad2;
	struct poke poke;
};

struct call {
	uint8_t op;
	uint8_t proc;		/* 1: runs in the process FORK made */
	uint8_t ctx;		/* the INIT or DUP call whose descriptor, or REF_CTL */
	uint8_t ref;		/* OPEN: descriptor table; CLOSE, QUERY: handle ref;
				 * FORK: 1 = the process is uid 1000 */
	uint8_t size, ptr, cmd, tmo, aptr;	/* aptr: P_* of the request array */
	uint8_t nr;		/* SUBMIT, WAIT: entries (<= MAXREQ); COLLECT: room;
				 * REGISTER: buffers */
	uint8_t bshape;		/* REGISTER: B_* of entry bent */
	uint8_t bent;
	uint32_t flags;		/* INIT, OPEN: flags; COLLECT: min_nr */
	uint32_t mode;		/* INIT */
	uint32_t pad2;
	uint64_t key;		/* INIT */
	struct poke poke[2];
	struct req req[MAXREQ];
};

struct prog {
	uint32_t n;
	uint32_t pad;
	struct call c[MAXCALLS];
};

/* ---- the text form: one table of fields for printing and parsing ---- */

struct field {
	const char *name;
	uint16_t off;
	uint8_t size;
	uint8_t ref;		/* 255 prints as "ctl" */
	const char *const *names;
};

#define CF(f, nm, tbl) { nm, offsetof(struct call, f), sizeof(((struct call *)0)->f), 0, tbl }
#define RF(f, nm, tbl) { nm, offsetof(struct req, f), sizeof(((struct req *)0)->f), 0, tbl }
static const struct field call_fields[] = {
	CF(proc, "proc", NULL), { "ctx", offsetof(struct call, ctx), 1, 1, NULL },
	CF(ref, "ref", NULL), CF(size, "size", sz_names), CF(ptr, "ptr", ptr_names),
	CF(cmd, "cmd", cmd_names), CF(tmo, "tmo", tmo_names), CF(aptr, "aptr", ptr_names),
	CF(nr, "nr", NULL), CF(flags, "flags", NULL), CF(mode, "mode", NULL),
	CF(key, "key", NULL), CF(bshape, "bshape", b_names), CF(bent, "bent", NULL),
	CF(poke[0].off, "p0off", NULL), CF(poke[0].width, "p0w", NULL),
	CF(poke[0].val, "p0val", NULL), CF(poke[1].off, "p1off", NULL),
	CF(poke[1].width, "p1w", NULL), CF(poke[1].val, "p1val", NULL),
};
static const struct field req_fields[] = {
	RF(kind, "kind", ek_names), RF(ref, "ref", NULL), RF(idx, "idx", NULL),
	RF(opcode, "op", opc_names), RF(flags, "flags", NULL), RF(pi_flags, "piflags", NULL),
	RF(h, "h", NULL), RF(rptr, "rptr", ptr_names), RF(buf, "buf", ptr_names),
	RF(pi, "pi", pi_names), RF(nseg, "nseg", NULL), RF(size, "size", sz_names),
	RF(app_tag, "tag", NULL), RF(app_mask, "mask", NULL), RF(blocks, "blocks", NULL),
	RF(lba, "lba", NULL), RF(bidx, "bidx", NULL), RF(poke.off, "poff", NULL),
	RF(poke.width, "pw", NULL),
	RF(poke.val, "pval", NULL),
};
#define NCF (sizeof(call_fields) / sizeof(call_fields[0]))
#define NRF (sizeof(req_fields) / sizeof(req_fields[0]))

static uint64_t fget(const void *s, const struct field *f)
{
	uint64_t v = 0;

	memcpy(&v, (const uint8_t *)s + f->off, f->size);
	return v;
}

static int fmt_field(char *b, size_t len, const char *pfx, const void *s,
		     const struct field *f)
{
	uint64_t v = fget(s, f);
	size_t k = 0;

	if (!v)
		return 0;
	if (f->names)
		while (f->names[k] && k < v)
			k++;
	if (f->names && f->names[k] && k == v)
		return snprintf(b, len, " %s%s=%s", pfx, f->name, f->names[v]);
	if (f->ref && v == REF_CTL)
		return snprintf(b, len, " %s%s=ctl", pfx, f->name);
	return snprintf(b, len, v > 9 ? " %s%s=%#llx" : " %s%s=%llu", pfx, f->name,
			(unsigned long long)v);
}

static bool has_reqs(const struct call *c)
{
	return c->op == OP_SUBMIT || c->op == OP_WAIT;
}

/* Call @i of @p as one line (no newline). */
static void fmt_call(char *b, size_t len, const struct prog *p, unsigned int i)
{
	const struct call *c = &p->c[i];
	size_t n = snprintf(b, len, "%u: %s", i, op_names[c->op]);

	for (size_t f = 0; f < NCF && n < len; f++)
		n += fmt_field(b + n, len - n, "", c, &call_fields[f]);
	for (int j = 0; has_reqs(c) && j < c->nr && j < MAXREQ; j++) {
		char pfx[8];

		snprintf(pfx, sizeof(pfx), "r%d.", j & 3);
		for (size_t f = 0; f < NRF && n < len; f++)
			n += fmt_field(b + n, len - n, pfx, &c->req[j], &req_fields[f]);
	}
}

static int parse_value(const struct field *f, const char *v, uint64_t *out)
{
	char *end;

	for (int k = 0; f->names && f->names[k]; k++)
		if (!strcmp(v, f->names[k])) {
			*out = k;
			return 0;
		}
	if (f->ref && !strcmp(v, "ctl")) {
		*out = REF_CTL;
		return 0;
	}
	errno = 0;
	*out = strtoull(v, &end, 0);
	return errno || *end || end == v ? -1 : 0;
}

/* The text form back into a program; -1 and @err on a bad line. */
static int parse_prog(const char *text, struct prog *p, char *err, size_t errlen)
{
	char *copy = strdup(text), *save = NULL, *line;
	int lineno = 0, ret = 0;

	memset(p, 0, sizeof(*p));
	for (line = strtok_r(copy, "\n", &save); line && !ret;
	     line = strtok_r(NULL, "\n", &save)) {
		char *semi = strchr(line, ';'), *s2 = NULL, *tok;
		struct call *c = NULL;

		lineno++;
		if (semi)
			*semi = 0;
		line += strspn(line, " \t");
		if (!strncmp(line, "# prog:", 7))
			line += 7;
		else if (*line == '#')
			continue;
		for (tok = strtok_r(line, " \t\r", &s2); tok && !ret;
		     tok = strtok_r(NULL, " \t\r", &s2)) {
			const struct field *tbl = call_fields, *f = NULL;
			size_t ntbl = NCF;
			char *eq = strchr(tok, '=');
			void *s;
			uint64_t v;

			if (!c && tok[strlen(tok) - 1] == ':')
				continue;	/* "N:" */
			if (!c) {
				int k;

				for (k = 0; op_names[k] && strcmp(op_names[k], tok); k++)
					;
				if (!op_names[k] || p->n >= MAXCALLS) {
					snprintf(err, errlen, "line %d: %s", lineno,
						 op_names[k] ? "too many calls" : "unknown call");
					ret = -1;
					break;
				}
				c = &p->c[p->n++];
				c->op = k;
				continue;
			}
			s = c;
			if (tok[0] == 'r' && tok[1] >= '0' && tok[1] < '0' + MAXREQ &&
			    tok[2] == '.') {
				s = &c->req[tok[1] - '0'];
				tbl = req_fields;
				ntbl = NRF;
				tok += 3;
			}
			if (eq) {
				*eq = 0;
				for (size_t k = 0; k < ntbl && !f; k++)
					if (!strcmp(tbl[k].name, tok))
						f = &tbl[k];
			}
			if (!f || parse_value(f, eq + 1, &v)) {
				snprintf(err, errlen, "line %d: bad field %s", lineno, tok);
				ret = -1;
				break;
			}
			memcpy((uint8_t *)s + f->off, &v, f->size);
		}
	}
	free(copy);
	if (!ret && !p->n) {
		snprintf(err, errlen, "no calls");
		ret = -1;
	}
	return ret;
}

/* ---- randomness (the supervisor's only: programs come from the seed) ---- */

/* The state of the tests' random source (tl_rand()). */
static uint64_t rs;

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
		0, 1, 2, 7, 8, 511, 512, 513, 4095, 4096, 4097, 65536, 0x7fffffff,
		0x80000000, 0xffffffff, 0x100000000ULL, 0x7fffffffffffffffULL,
		0x8000000000000000ULL, ~0ULL, 16 * MiB, 64 * MiB, 0xffff,
	};

	if (chance(20))
		return rnd();
	if (chance(15))
		return 1ULL << rn(64);
	return v[rn(sizeof(v) / sizeof(v[0]))];
}

/* ---- the test bed: devices and descriptors (made before any fork) ---- */

struct dev {
	char path[64];
	uint32_t lbs;
	uint64_t blocks;
	bool pi;
	struct dio_pi_profile p;
};

static struct dev devs[NDEV];
static int fdtab[NFDS];		/* what OPEN may be given (ref) */
static int fddev[NFDS];		/* its device, or -1 */
static int ctl = -1, kcov_fd[2] = { -1, -1 }, pipefd[2] = { -1, -1 };
static uint64_t *area[2];	/* KCOV buffers: [0] executor, [1] its child */
static uint8_t *arena;
/* REGISTER's B_FILE (a private mapping of a file: EOPNOTSUPP), B_SHM (a memfd). */
static uint8_t *file_page, *shm_page;
static const uint32_t raw_handle[8] = { 0, 1, 2, 3, 64, 255, 65535, 0xffffffff };

/* ---- the executor's side ---- */

struct xres {
	int64_t ret[MAXCALLS];
	int32_t err[MAXCALLS];
	uint8_t ran[MAXCALLS];		/* 1 parent, 2 child */
	uint32_t nseq[2];		/* calls run per process, teardown included */
	uint8_t seq[2][MAXCALLS + 1];	/* which (MAXCALLS: the teardown) */
	uint64_t end[2][MAXCALLS + 1];	/* KCOV position after it */
	int32_t child_status;		/* -1: no child */
	int32_t nbad;
	char bad[4][320];
	int64_t io_ok;			/* requests reported with a result > 0 */
	int32_t drain_short;		/* teardown COLLECTs that timed out */
};

struct shm {
	struct prog prog;
	struct xres r;
};

static struct shm *shm;

static struct {
	int fd[MAXCALLS];		/* descriptor call i made */
	bool ctlkind[MAXCALLS];		/* it is /dev/dio_batch (a dup of ctl) */
	pid_t owner[MAXCALLS];		/* process whose descriptor it is */
	uint32_t h[MAXCALLS];		/* handle OPEN call i returned */
	uint64_t raddr[MAXCALLS][MAXREQ];	/* requests SUBMIT call i gave */
	int8_t file[MAXCALLS];		/* its open file: the INIT call (dups share) */
	int inflight[MAXCALLS];		/* requests queued and not reported, per file */
	int proc;			/* 0: executor, 1: its child */
	pid_t child;
} xs;

static void xbad(int i, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void xbad(int i, const char *fmt, ...)
{
	int k = __atomic_fetch_add(&shm->r.nbad, 1, __ATOMIC_RELAXED);
	va_list ap;
	int n;

	if (k >= 4)
		return;
	n = snprintf(shm->r.bad[k], sizeof(shm->r.bad[k]), "call %d (%s): ", i,
		     xs.proc ? "forked process" : "executor");
	va_start(ap, fmt);
	vsnprintf(shm->r.bad[k] + n, sizeof(shm->r.bad[k]) - n, fmt, ap);
	va_end(ap);
}

/* The documented errnos of each command (as t_fuzz.c has them). */
static const int errsets[OP_LASTIOC + 1][11] = {
	[OP_FEATURES] = { EFAULT, EINVAL, E2BIG },
	[OP_INIT] = { EFAULT, EINVAL, E2BIG, ENOENT, EEXIST, EACCES, ENOMEM, EMFILE },
	[OP_OPEN] = { EFAULT, EINVAL, E2BIG, EBADF, ENOTBLK, EBUSY, ENOMEM, EMFILE },
	[OP_CLOSE] = { EFAULT, EINVAL, E2BIG, EBADF },
	[OP_QUERY] = { EFAULT, EINVAL, E2BIG, EBADF },
	[OP_SUBMIT] = { EFAULT, EINVAL, E2BIG, EBADF, ENXIO, EBUSY, EAGAIN, EOPNOTSUPP,
			EILSEQ, ENOMEM },
	[OP_WAIT] = { EFAULT, EINVAL, E2BIG, EINTR, ENOENT },
	[OP_COLLECT] = { EFAULT, EINVAL, E2BIG, EINTR },
	[OP_STAT] = { EFAULT, EINVAL, E2BIG },
	[OP_REGISTER] = { EFAULT, EINVAL, E2BIG, EBUSY, EOPNOTSUPP, ENOMEM, EINTR },
	[OP_UNREGISTER] = { EFAULT, EINVAL, E2BIG, ENXIO },
	[OP_COUNTERS] = { EFAULT, EINVAL, E2BIG, EBADF },
};

static const unsigned long cmds[OP_LASTIOC + 1] = {
	DIO_IOC_FEATURES, DIO_IOC_INIT, DIO_IOC_OPEN, DIO_IOC_CLOSE, DIO_IOC_QUERY,
	DIO_IOC_SUBMIT, DIO_IOC_WAIT, DIO_IOC_COLLECT, DIO_IOC_STAT,
	DIO_IOC_REGISTER, DIO_IOC_UNREGISTER, DIO_IOC_COUNTERS,
};

/* Only the process that made the descriptor may: EXDEV for the others. */
static bool owner_only(int op)
{
	return op == OP_SUBMIT || op == OP_WAIT || op == OP_COLLECT ||
	       op == OP_REGISTER || op == OP_UNREGISTER;
}

static uint64_t bad_addr(int pk)
{
	switch (pk) {
	case P_LOW: return 0x1000;			/* below mmap_min_addr */
	case P_NONE: return (uintptr_t)arena + ARENA_SZ;	/* PROT_NONE */
	case P_KERN: return 0xffffffff81000000ULL;
	case P_NONCANON: return 0x8000000000001000ULL;
	case P_END: return 0x7ffffffff000ULL;		/* last user page */
	default: return 0;
	}
}

/* A random user address the kernel may write through is made non-canonical. */
static uint64_t tame(uint64_t a)
{
	if (a < 0x10000 || a >= 0x800000000000ULL ||
	    (a >= (uintptr_t)arena && a <= (uintptr_t)arena + ARENA_SZ + PAGE))
		return a;
	return a | 0x8000000000000000ULL;
}

static bool in_arena(uint64_t a, size_t len)
{
	return a >= (uintptr_t)arena && a + len <= (uintptr_t)arena + ARENA_SZ;
}

/*
 * @len bytes of @s (and a tail of @tail bytes: zero, or with a non-zero
 * byte when @dirty) at the place pointer kind @pk says: @slot, read-only
 * page @ro, against the unmapped page after the arena, or a bad address.
 */
static uint64_t put(const void *s, size_t len, size_t tail, bool dirty, int pk,
		    uint8_t *slot, int ro)
{
	uint8_t *p, *rop = arena + A_RO + ro * PAGE;
	size_t room;

	switch (pk) {
	case P_OK: p = slot; break;
	case P_MIS1: p = slot + 1; break;
	case P_MIS4: p = slot + 4; break;
	case P_RO:
		mprotect(rop, PAGE, PROT_READ | PROT_WRITE);
		if (len)
			memcpy(rop, s, len < PAGE ? len : PAGE);
		mprotect(rop, PAGE, PROT_READ);
		return (uintptr_t)rop;
	case P_GUARD:
		p = arena + ARENA_SZ - ((len + tail) / 2 & ~7UL) - 8;
		break;
	default:
		return bad_addr(pk);
	}
	room = arena + ARENA_SZ - p;
	if (len)
		memcpy(p, s, len < room ? len : room);
	if (len + tail <= room) {
		memset(p + len, 0, tail);
		if (dirty && tail)
			p[len + tail / 2] = 0xa5;
	}
	return (uintptr_t)p;
}

/* The size field a size mode gives; the tail to lay after the struct. */
static uint32_t size_of(int mode, size_t ksize, size_t ver0, size_t *tail, bool *dirty)
{
	*tail = 0;
	*dirty = false;
	switch (mode) {
	case SZ_ZERO: return 0;
	case SZ_TINY: return 4;
	case SZ_VER0M1: return ver0 - 1;
	case SZ_VER0: return ver0;
	case SZ_TAIL1: *dirty = true; /* fall through */
	case SZ_TAIL0: *tail = 64; return ksize + 64;
	case SZ_PAGE: *tail = PAGE - ksize; return PAGE;
	case SZ_PAGE1: return PAGE + 1;
	case SZ_HUGE: return 0xffffffff;
	default: return ksize;
	}
}

static void apply_poke(void *s, size_t len, const struct poke *pk)
{
	if (pk->width && pk->width <= 8 && pk->off + pk->width <= len)
		memcpy((uint8_t *)s + pk->off, &pk->val, pk->width);
}

/* The device behind handle reference @h: its OPEN call's descriptor. */
static int hdev(const struct prog *p, uint8_t h)
{
	if (h >= MAXCALLS || p->c[h].op != OP_OPEN)
		return -1;
	return fddev[p->c[h].ref % NFDS];
}

static uint32_t handle_of(uint8_t h)
{
	if (h & RAW)
		return raw_handle[h & 7];
	return h < MAXCALLS ? xs.h[h] : 0;
}

/* Request @j of call @i, laid out in the arena; returns the address given. */
static uint64_t build_req(const struct prog *p, int i, int j)
{
	const struct req *q = &p->c[i].req[j];
	int d = hdev(p, q->h), s = SLOT(i, j);
	const struct dev *dv = d >= 0 ? &devs[d] : NULL;
	uint32_t lbs = dv ? dv->lbs : 512;
	uint64_t len = (uint64_t)q->blocks * lbs;
	uint8_t *data = arena + A_DATA + s * 64 * KiB, *pib = arena + A_PI + s * 8 * KiB;
	bool fits = data + len <= arena + ARENA_SZ;
	struct dio_request r;
	size_t tail;
	bool dirty;

	memset(&r, 0, sizeof(r));
	r.opcode = q->opcode;
	r.flags = q->flags;
	r.handle = handle_of(q->h);
	r.offset = (uint64_t)q->lba * lbs;
	r.cookie = s;
	r.pi_flags = q->pi_flags;
	r.app_tag = q->app_tag;
	r.app_tag_mask = q->app_mask;
	r.buf_index = q->bidx;
	if (q->opcode == DIO_OP_WRITE && q->buf == P_OK && fits)
		tl_fill(data, len, s + 1);
	if (q->flags & DIO_REQ_IOVEC) {
		unsigned int n = q->nseg & 0x3f, k;
		struct iovec iov[64];
		uint64_t per = n ? q->blocks / n : 0, off = 0;

		for (k = 0; k < n; k++) {
			uint64_t l = (k + 1 == n ? q->blocks - per * k : per) * lbs;

			iov[k].iov_base = data + off;
			iov[k].iov_len = l;
			off += l;
		}
		if (n && (q->nseg & 0x80))
			iov[0].iov_base = (uint8_t *)iov[0].iov_base + 1;
		if (n && (q->nseg & 0x40))
			iov[n - 1].iov_base = (void *)(uintptr_t)bad_addr(P_NONE);
		r.buf = put(iov, n * sizeof(iov[0]), 0, false, q->buf,
			    arena + A_IOV + s * KiB, 16 + s);
		r.len = n;
	} else {
		r.buf = put(NULL, 0, 0, false, q->buf, data, 16 + s);
		r.len = len;
	}
	if (q->pi != PI_NONE) {
		uint64_t nint = dv && dv->pi ? len / dv->p.interval : 0;
		uint32_t md = dv && dv->pi ? dv->p.md_size : 8;
		uint64_t plen = nint * md;

		r.pi_buf = (uintptr_t)pib;
		if (q->pi <= PI_BADREF && plen <= 8 * KiB && dv && dv->pi && fits &&
		    q->opcode == DIO_OP_WRITE) {
			struct dio_pi_params a = { .seed = r.offset / dv->p.interval,
						   .app_tag = q->app_tag };

			dio_pi_generate(&dv->p, data, len, pib, &a);
			if (q->pi == PI_BADGUARD)
				pib[dv->p.pi_offset] ^= 1;
			if (q->pi == PI_BADREF)
				pib[dv->p.pi_offset + dv->p.tuple_size - 1] ^= 1;
		}
		if (q->pi == PI_SHORT)
			plen = plen >= md ? plen - md : 1;
		else if (q->pi == PI_LONG)
			plen += md;
		else if (q->pi == PI_ZERO)
			plen = 0;
		else if (q->pi == PI_PTR)
			r.pi_buf = q->opcode == DIO_OP_READ ? (uintptr_t)(arena + A_RO) :
				   bad_addr(P_NONE);
		r.pi_len = plen;
	}
	r.size = size_of(q->size, sizeof(r), DIO_REQUEST_SIZE_VER0, &tail, &dirty);
	apply_poke(&r, sizeof(r), &q->poke);
	r.buf = tame(r.buf);
	r.pi_buf = tame(r.pi_buf);
	r.result = 0x5a5a5a5a;
	return put(&r, sizeof(r), tail, dirty, q->rptr, arena + A_REQS + s * 8 * KiB, 16 + s);
}

/*
 * REGISTER call @i's array of struct dio_fixed_buf, at the pointer kind
 * aptr says.  *@sure_bad: an entry REGISTER must refuse is among the nr.
 */
static uint64_t build_fixed(const struct call *c, int i, bool *sure_bad)
{
	struct dio_fixed_buf b[255];
	uint8_t *data = arena + A_DATA;
	unsigned int n = c->nr, k;

	for (k = 0; k < n; k++) {
		switch (k % 4) {
		case 0: b[k] = (struct dio_fixed_buf){ (uintptr_t)data, 4 * MiB }; break;
		case 1: b[k] = (struct dio_fixed_buf){ (uintptr_t)data, 2 * MiB }; break;
		case 2: b[k] = (struct dio_fixed_buf){ (uintptr_t)data + 2 * MiB, 2 * MiB }; break;
		default: b[k] = (struct dio_fixed_buf){ (uintptr_t)data + 4 * KiB + 1, MiB }; break;
		}
	}
	*sure_bad = c->bshape != B_OK && c->bshape != B_SHM && c->bshape != B_GIG &&
		    c->bent < n;
	if (c->bent < n) {
		struct dio_fixed_buf *e = &b[c->bent];

		switch (c->bshape) {
		case B_RO: *e = (struct dio_fixed_buf){ (uintptr_t)arena + A_RO + 8, 100 }; break;
		case B_NONE: e->addr = (uintptr_t)arena + ARENA_SZ; e->len = PAGE; break;
		case B_FILE: e->addr = (uintptr_t)file_page; e->len = PAGE; break;
		case B_SHM: e->addr = (uintptr_t)shm_page + 512; e->len = 8 * KiB; break;
		case B_ZERO: e->len = 0; break;
		case B_HUGE: e->len = (1ULL << 30) + 1; break;
		case B_GIG: e->len = 1ULL << 30; break;	/* EFAULT, or ENOMEM */
		case B_WRAP: e->addr = ~0ULL - 4095; e->len = 2 * PAGE; break;
		case B_TOP: e->addr = 0x7ffffffff000ULL - PAGE; e->len = 3 * PAGE; break;
		case B_LOW: e->addr = 0x1000; e->len = PAGE; break;
		case B_GUARD:
			e->addr = (uintptr_t)arena + ARENA_SZ - PAGE - 512;
			e->len = 2 * PAGE;
			break;
		default: break;
		}
	}
	return put(b, n * sizeof(b[0]), 0, false, c->aptr, arena + A_ARR + i * 8 * KiB,
		   80 + i);
}

/* A request reported by WAIT or COLLECT: its result must make sense. */
static void check_result(int i, uint64_t a)
{
	const struct dio_request *r = (const struct dio_request *)(uintptr_t)a;

	if (!in_arena(a, sizeof(*r)))
		return;
	if (r->result < -4095 || r->result == 0x5a5a5a5a ||
	    (r->result > 0 && !(r->flags & DIO_REQ_IOVEC) && (uint64_t)r->result > r->len))
		xbad(i, "request %#llx reported with result %lld (len %llu)",
		     (unsigned long long)a, (long long)r->result,
		     (unsigned long long)r->len);
	else if (r->result > 0)
		__atomic_fetch_add(&shm->r.io_ok, 1, __ATOMIC_RELAXED);
}

static void on_alarm(int sig)
{
	(void)sig;
}

static int64_t timeout_of(int t)
{
	static const int64_t v[NTMO] = { 0, 1000000, 10000000, -2,
					 DIO_WAIT_FOREVER, INT64_MAX };

	return v[t % NTMO];
}

/* One ioctl call (FEATURES ... STAT): build, place, call, check. */
static void do_ioctl(const struct prog *p, int i)
{
	const struct call *c = &p->c[i];
	union {
		struct dio_features f;
		struct dio_init in;
		struct dio_open o;
		struct dio_close cl;
		struct dio_query q;
		struct dio_submit s;
		struct dio_wait w;
		struct dio_stat st;
		struct dio_register rg;
		struct dio_counters ct;
		uint8_t raw[256];
	} u;
	uint64_t arr[256];
	size_t ks = 0, v0 = 0, tail;
	bool dirty, isctl, foreign, notty, sure_bad = false;
	int fd, nent = 0, ret, err, k, file = -1;
	unsigned long cmd;
	uint64_t arg;
	struct itimerval it = { { 0, 0 }, { 0, 100000 } };

	if (c->ctx == REF_CTL) {
		fd = ctl;
		isctl = true;
		foreign = false;
	} else if (c->ctx < MAXCALLS && xs.fd[c->ctx] >= 0) {
		fd = xs.fd[c->ctx];
		isctl = xs.ctlkind[c->ctx];
		foreign = xs.owner[c->ctx] != getpid();
		file = xs.file[c->ctx];
	} else {
		shm->r.ret[i] = -1;	/* no such descriptor: not called */
		return;
	}
	memset(&u, 0, sizeof(u));
	memset(arr, 0, sizeof(arr));
	switch (c->op) {
	case OP_FEATURES: ks = sizeof(u.f); v0 = DIO_FEATURES_SIZE_VER0; break;
	case OP_INIT:
		ks = sizeof(u.in); v0 = DIO_INIT_SIZE_VER0;
		u.in.flags = c->flags;
		u.in.key = c->key;
		u.in.mode = c->mode;
		break;
	case OP_OPEN:
		ks = sizeof(u.o); v0 = DIO_OPEN_SIZE_VER0;
		u.o.flags = c->flags;
		u.o.fd = fdtab[c->ref % NFDS];
		break;
	case OP_CLOSE:
		ks = sizeof(u.cl); v0 = DIO_CLOSE_SIZE_VER0;
		u.cl.handle = handle_of(c->ref);
		break;
	case OP_QUERY:
		ks = sizeof(u.q); v0 = DIO_QUERY_SIZE_VER0;
		u.q.handle = handle_of(c->ref);
		break;
	case OP_STAT: ks = sizeof(u.st); v0 = DIO_STAT_SIZE_VER0; break;
	case OP_REGISTER:
		ks = sizeof(u.rg); v0 = DIO_REGISTER_SIZE_VER0;
		u.rg.nr = c->nr;
		u.rg.bufs = build_fixed(c, i, &sure_bad);
		break;
	case OP_UNREGISTER: ks = sizeof(u.rg); v0 = DIO_REGISTER_SIZE_VER0; break;
	case OP_COUNTERS:
		ks = sizeof(u.ct); v0 = DIO_COUNTERS_SIZE_VER0;
		u.ct.flags = c->flags;
		u.ct.handle = handle_of(c->ref);
		break;
	case OP_SUBMIT:
	case OP_WAIT:
		nent = c->nr < MAXREQ ? c->nr : MAXREQ;
		for (k = 0; k < nent; k++) {
			const struct req *q = &c->req[k];

			if (q->kind == E_PREV)
				arr[k] = q->ref < MAXCALLS && q->idx < MAXREQ ?
					 xs.raddr[q->ref][q->idx] : 0;
			else if (q->kind == E_DUP)
				arr[k] = k ? arr[q->ref % k] : 0;
			else
				arr[k] = build_req(p, i, k);
			if (c->op == OP_SUBMIT)
				xs.raddr[i][k] = arr[k];
		}
		if (c->op == OP_SUBMIT) {
			ks = sizeof(u.s); v0 = DIO_SUBMIT_SIZE_VER0;
			u.s.nr = c->nr;
			u.s.reqs = put(arr, nent * 8, 0, false, c->aptr,
				       arena + A_ARR + i * 8 * KiB, 80 + i);
			break;
		}
		/* fall through */
	case OP_COLLECT:
		ks = sizeof(u.w); v0 = DIO_WAIT_SIZE_VER0;
		u.w.nr = c->nr;
		u.w.reqs = put(arr, c->op == OP_WAIT ? nent * 8 : 0, 0, false, c->aptr,
			       arena + A_ARR + i * 8 * KiB, 80 + i);
		u.w.min_nr = c->op == OP_COLLECT ? c->flags : 0;
		u.w.timeout_ns = timeout_of(c->tmo);
		break;
	default:
		return;
	}
	u.f.size = size_of(c->size, ks, v0, &tail, &dirty);
	apply_poke(&u, ks, &c->poke[0]);
	apply_poke(&u, ks, &c->poke[1]);
	if (c->op == OP_SUBMIT || c->op == OP_WAIT || c->op == OP_COLLECT)
		u.s.reqs = tame(u.s.reqs);	/* same offset in dio_wait */
	arg = put(&u, ks, tail, dirty, c->ptr, arena + A_ARGS + i * 8 * KiB, i);

	cmd = cmds[c->op];
	if (c->cmd == CMD_SIZE)
		cmd = _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd),
			   (_IOC_SIZE(cmd) + 8) & _IOC_SIZEMASK);
	else if (c->cmd == CMD_DIR)
		cmd = _IOC(_IOC_READ, _IOC_TYPE(cmd), _IOC_NR(cmd), _IOC_SIZE(cmd));
	else if (c->cmd == CMD_UNKNOWN)
		cmd = _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(TL_IOC_LAST) + 1 + c->op,
			   _IOC_SIZE(cmd));

	if (c->op == OP_WAIT || c->op == OP_COLLECT)
		setitimer(ITIMER_REAL, &it, NULL);	/* ends a wait forever */
	ret = ioctl(fd, cmd, (unsigned long)arg);
	err = ret < 0 ? errno : 0;
	if (c->op == OP_WAIT || c->op == OP_COLLECT) {
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_REAL, &it, NULL);
	}
	shm->r.ret[i] = ret;
	shm->r.err[i] = err;

	/* The command this descriptor does not have: ENOTTY, nothing else. */
	notty = c->cmd == CMD_DIR || c->cmd == CMD_UNKNOWN ||
		isctl != (c->op == OP_FEATURES || c->op == OP_INIT);
	if (ret < 0) {
		bool ok = false;

		if (notty)
			ok = err == ENOTTY;
		else if (foreign && err == EXDEV)
			ok = owner_only(c->op);
		else
			for (k = 0; k < 11 && errsets[c->op][k]; k++)
				ok |= errsets[c->op][k] == err;
		if (!ok)
			xbad(i, "%s%s: errno %d %s, not in its set", op_names[c->op],
			     notty ? " (a command this descriptor does not have)" : "",
			     err, strerror(err));
		return;
	}
	if (notty) {
		xbad(i, "%s succeeded (%d) where ENOTTY was due", op_names[c->op], ret);
		return;
	}
	if (foreign && owner_only(c->op)) {
		xbad(i, "%s on another process's descriptor succeeded (%d)",
		     op_names[c->op], ret);
		return;
	}
	switch (c->op) {
	case OP_INIT:
		if (ret < 3) {
			xbad(i, "INIT returned %d", ret);
			break;
		}
		xs.fd[i] = ret;
		xs.owner[i] = getpid();
		xs.file[i] = i;
		break;
	case OP_OPEN:
		if (ret < 1)
			xbad(i, "OPEN returned %d", ret);
		xs.h[i] = ret;
		break;
	case OP_REGISTER:
		/* Without pokes the kernel read our array and nr. */
		if (ret != 0)
			xbad(i, "REGISTER returned %d", ret);
		else if (sure_bad && !c->poke[0].width && !c->poke[1].width)
			xbad(i, "REGISTER took buffer %u of shape %s", c->bent,
			     b_names[c->bshape]);
		break;
	case OP_SUBMIT:
		if (ret < 1 || (uint32_t)ret > u.s.nr)
			xbad(i, "SUBMIT of %u returned %d", u.s.nr, ret);
		else if (file >= 0)
			xs.inflight[file] += ret;
		break;
	case OP_WAIT:
	case OP_COLLECT:
		if ((uint32_t)ret > u.w.nr) {
			xbad(i, "%s of %u returned %d", op_names[c->op], u.w.nr, ret);
			break;
		}
		if (file >= 0)
			xs.inflight[file] -= ret;
		if (!in_arena(u.w.reqs, (size_t)ret * 8))
			break;
		for (k = 0; k < ret; k++) {
			uint64_t a = ((const uint64_t *)(uintptr_t)u.w.reqs)[k];

			if (c->op == OP_COLLECT && !in_arena(a, 1))
				xbad(i, "COLLECT reported address %#llx",
				     (unsigned long long)a);
			check_result(i, a);
		}
		break;
	default:
		if (ret != 0)
			xbad(i, "%s returned %d", op_names[c->op], ret);
		break;
	}
}

static void mark(int i)
{
	int p = xs.proc;
	uint32_t k = shm->r.nseq[p];

	if (k <= MAXCALLS) {
		shm->r.seq[p][k] = i;
		shm->r.end[p][k] = __atomic_load_n(&area[p][0], __ATOMIC_RELAXED);
		shm->r.nseq[p] = k + 1;
	}
}

static void run_calls(const struct prog *p, int from);

/* FORK: a second process runs the calls marked proc=1 from here on. */
static void do_fork(const struct prog *p, int i)
{
	const struct call *c = &p->c[i];
	pid_t pid;

	if (xs.proc || xs.child) {
		shm->r.ret[i] = -1;
		return;
	}
	pid = fork();
	if (pid < 0) {
		xbad(i, "fork: %s", strerror(errno));
		return;
	}
	if (pid) {
		xs.child = pid;
		shm->r.ret[i] = pid;
		return;
	}
	xs.proc = 1;
	if (c->ref & 1) {
		/* Not root: joins of root's contexts need mode and DIO_FOREIGN. */
		if (tl_drop_to(1000, 1000, 0)) {
			xbad(i, "dropping to uid 1000: %s", strerror(errno));
			_exit(2);
		}
	}
	if (ioctl(kcov_fd[1], KCOV_ENABLE, KCOV_TRACE_PC)) {
		xbad(i, "KCOV_ENABLE in the forked process: %s", strerror(errno));
		_exit(2);
	}
	run_calls(p, i + 1);
	ioctl(kcov_fd[1], KCOV_DISABLE, 0);
	_exit(0);
}

static void run_calls(const struct prog *p, int from)
{
	int fork_at = -1, i;

	for (i = 0; i < (int)p->n && fork_at < 0; i++)
		if (p->c[i].op == OP_FORK)
			fork_at = i;
	for (i = from; i < (int)p->n; i++) {
		const struct call *c = &p->c[i];
		int proc = fork_at >= 0 && i > fork_at && c->proc;

		if (proc != xs.proc)
			continue;
		shm->r.ran[i] = 1 + xs.proc;
		switch (c->op) {
		case OP_CLOSEFD:
			if (c->ctx < MAXCALLS && xs.fd[c->ctx] >= 0) {
				shm->r.ret[i] = close(xs.fd[c->ctx]);
				shm->r.err[i] = shm->r.ret[i] ? errno : 0;
				if (shm->r.ret[i])
					xbad(i, "close: %s", strerror(errno));
				xs.fd[c->ctx] = -1;
			} else {
				shm->r.ret[i] = -1;
			}
			break;
		case OP_DUP: {
			int src = c->ctx == REF_CTL ? ctl :
				  c->ctx < MAXCALLS ? xs.fd[c->ctx] : -1;

			shm->r.ret[i] = src >= 0 ? dup(src) : -1;
			if (shm->r.ret[i] >= 0) {
				xs.fd[i] = shm->r.ret[i];
				xs.file[i] = c->ctx == REF_CTL ? -1 : xs.file[c->ctx];
				xs.ctlkind[i] = c->ctx == REF_CTL || xs.ctlkind[c->ctx];
				xs.owner[i] = c->ctx == REF_CTL ? getpid() : xs.owner[c->ctx];
			}
			break;
		}
		case OP_FORK:
			do_fork(p, i);
			break;
		default:
			do_ioctl(p, i);
			break;
		}
		mark(i);
	}
	/* The teardown: the descriptors this process holds for the program. */
	if (!xs.proc && xs.child) {
		int st;

		waitpid(xs.child, &st, 0);
		shm->r.child_status = st;
	}
	/*
	 * Requests still in flight on this process's descriptors are
	 * collected first (up to 200 ms), so that the next program does
	 * not meet this one's claims and completions: programs stay
	 * independent of each other's timing.
	 */
	for (i = 0; i < MAXCALLS; i++) {
		int f = xs.file[i];
		uint64_t got[256];

		while (xs.fd[i] >= 0 && f >= 0 && xs.owner[i] == getpid() &&
		       xs.inflight[f] > 0) {
			struct dio_wait w = { .size = sizeof(w), .reqs = (uintptr_t)got,
					      .timeout_ns = 200000000 };
			int n;

			w.nr = w.min_nr = xs.inflight[f] < 256 ? xs.inflight[f] : 256;
			n = ioctl(xs.fd[i], DIO_IOC_COLLECT, &w);
			if (n < (int)w.min_nr)
				__atomic_fetch_add(&shm->r.drain_short, 1, __ATOMIC_RELAXED);
			if (n <= 0)
				break;
			xs.inflight[f] -= n;
		}
	}
	for (i = 0; i < MAXCALLS; i++)
		if (xs.fd[i] >= 0)
			close(xs.fd[i]);
	mark(MAXCALLS);
}

static void executor(void)
{
	struct sigaction sa;

	setpgid(0, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART: a blocked wait ends */
	sigaction(SIGALRM, &sa, NULL);
	for (int i = 0; i < MAXCALLS; i++)
		xs.fd[i] = xs.file[i] = -1;
	if (ioctl(kcov_fd[0], KCOV_ENABLE, KCOV_TRACE_PC)) {
		xbad(-1, "KCOV_ENABLE: %s", strerror(errno));
		_exit(2);
	}
	run_calls(&shm->prog, 0);
	ioctl(kcov_fd[0], KCOV_DISABLE, 0);
	_exit(0);
}

/* ---- the supervisor: coverage ---- */

struct range {
	uint64_t start, end;
};

static struct range mtext[16];
static int ntext;
static uint8_t edges[MAPBITS / 8];
static uint64_t *pcset;
static long nedges, npcs, outside;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The module's text: every section under /sys/module/dio_batch/sections
 * named .text* (.init.text, .exit.text too), each up to the next section's
 * start, the last up to the module's end in /proc/modules.
 */
static int module_text(void)
{
	const char *dir = "/sys/module/dio_batch/sections";
	uint64_t starts[128], base = 0, size = 0;
	struct { char name[64]; uint64_t a; } sec[128];
	int nsec = 0, nst = 0;
	struct dirent *de;
	char line[512];
	DIR *d = opendir(dir);
	FILE *f;

	if (!d)
		return -errno;
	while ((de = readdir(d)) && nsec < 128) {
		char path[512];
		char *v;

		if (de->d_name[0] == '.' && (!de->d_name[1] ||
					     (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		v = tl_sysfs_read("%s", path);
		if (!v)
			continue;
		snprintf(sec[nsec].name, sizeof(sec[nsec].name), "%.63s", de->d_name);
		sec[nsec].a = strtoull(v, NULL, 16);
		free(v);
		if (sec[nsec].a)
			starts[nst++] = sec[nsec++].a;
	}
	closedir(d);
	f = fopen("/proc/modules", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char name[64], state[32], deps[256];
		unsigned long long sz, addr;
		int refs;

		if (sscanf(line, "%63s %llu %d %255s %31s %llx", name, &sz, &refs, deps,
			   state, &addr) == 6 && !strcmp(name, "dio_batch")) {
			base = addr;
			size = sz;
		}
	}
	if (f)
		fclose(f);
	qsort(starts, nst, sizeof(starts[0]), cmp_u64);
	ntext = 0;
	for (int i = 0; i < nsec && ntext < 16; i++) {
		uint64_t end = 0;

		if (strncmp(sec[i].name, ".text", 5) && strcmp(sec[i].name, ".init.text") &&
		    strcmp(sec[i].name, ".exit.text"))
			continue;
		for (int k = 0; k < nst && !end; k++)
			if (starts[k] > sec[i].a)
				end = starts[k];
		if (!end || (base && sec[i].a >= base && sec[i].a < base + size &&
			     end > base + size))
			end = base && sec[i].a >= base && sec[i].a < base + size ?
			      base + size : sec[i].a + 1 * MiB;
		mtext[ntext++] = (struct range){ sec[i].a, end };
		print_message("# kfuzz: module text %s %#llx-%#llx\n", sec[i].name,
			      (unsigned long long)sec[i].a, (unsigned long long)end);
	}
	return ntext;
}

static bool module_pc(uint64_t pc)
{
	for (int i = 0; i < ntext; i++)
		if (pc >= mtext[i].start && pc < mtext[i].end)
			return true;
	return false;
}

static void pc_add(uint64_t pc)
{
	uint64_t k = tl_mix(pc) & (PCSET - 1);

	for (int n = 0; n < PCSET; n++, k = (k + 1) & (PCSET - 1)) {
		if (pcset[k] == pc)
			return;
		if (!pcset[k]) {
			pcset[k] = pc;
			npcs++;
			return;
		}
	}
}

/*
 * The last execution's PCs into the PC set; the edges it reached that the
 * map does not have yet into @fresh (each once); returns how many.
 */
static uint8_t seen[MAPBITS / 8];

static int cover(uint32_t *fresh)
{
	int nfresh = 0;

	for (int p = 0; p < 2; p++) {
		uint64_t n = __atomic_load_n(&area[p][0], __ATOMIC_RELAXED), pos = 0;

		if (n > KCOV_WORDS - 1)
			n = KCOV_WORDS - 1;
		for (uint32_t k = 0; k < shm->r.nseq[p] && k <= MAXCALLS; k++) {
			uint64_t end = shm->r.end[p][k] < n ? shm->r.end[p][k] : n;
			uint32_t prev = 0;

			for (; pos < end; pos++) {
				uint64_t pc = area[p][pos + 1];
				uint32_t h = (uint32_t)tl_mix(pc), e;

				if (!module_pc(pc)) {
					outside++;
					continue;
				}
				pc_add(pc);
				e = (h ^ prev) & (MAPBITS - 1);
				prev = h >> 1;
				if (!(edges[e / 8] & (1 << (e % 8))) &&
				    !(seen[e / 8] & (1 << (e % 8)))) {
					seen[e / 8] |= 1 << (e % 8);
					fresh[nfresh++] = e;
				}
			}
		}
	}
	for (int k = 0; k < nfresh; k++)
		seen[fresh[k] / 8] &= ~(1 << (fresh[k] % 8));
	return nfresh;
}

/* ---- the supervisor: running one program ---- */

enum { XR_OK, XR_BAD, XR_CRASH, XR_HANG, XR_REPORT, XR_SETUP };

/*
 * Kernel reports, attributed to the program that caused them: after each
 * program the supervisor reads what the kernel logged since the last one
 * (/dev/kmsg, opened at the end of the log) and matches it against
 * tests/vm/report-patterns, the runner's own list.  A match fails the run
 * and prints the program beside the report's first lines.
 */
static int kmsg_fd = -1;
static regex_t report_re;
static bool report_re_ok;

static void reports_open(void)
{
	const char *b = getenv("DIO_BUILD");
	char path[512], line[256], re[4096] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/../tests/vm/report-patterns", b ? b : ".");
	f = fopen(path, "r");
	if (!f) {
		print_message("# kfuzz: %s: %s; kernel reports are not attributed\n",
			      path, strerror(errno));
	} else {
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			if (!line[0] || line[0] == '#')
				continue;
			if (re[0])
				strncat(re, "|", sizeof(re) - strlen(re) - 1);
			strncat(re, line, sizeof(re) - strlen(re) - 1);
		}
		fclose(f);
		report_re_ok = re[0] && !regcomp(&report_re, re, REG_EXTENDED | REG_NOSUB);
	}
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg_fd >= 0)
		lseek(kmsg_fd, 0, SEEK_END);
}

/* Reports the kernel logged since the last call; prints up to 20 lines. */
static int reports_new(void)
{
	char rec[2048];
	int found = 0, shown = 0;
	ssize_t n;

	if (kmsg_fd < 0 || !report_re_ok)
		return 0;
	for (;;) {
		n = read(kmsg_fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)	/* overwritten: go on */
			continue;
		if (n <= 0)
			break;
		rec[n] = 0;
		/* "prio,seq,time,flags;message": after a report, show context. */
		if (!found && regexec(&report_re, rec, 0, NULL, 0))
			continue;
		found = 1;
		if (shown++ < 20)
			print_message("# kfuzz: kernel: %s", strchr(rec, ';') ? strchr(rec, ';') + 1 : rec);
	}
	return found;
}

static void print_prog(const struct prog *p, bool results)
{
	char line[1024];

	for (unsigned int i = 0; i < p->n; i++) {
		size_t n;

		fmt_call(line, sizeof(line), p, i);
		n = strlen(line);
		if (results && shm->r.ran[i] && n < sizeof(line) && shm->r.ret[i] == -1 &&
		    !shm->r.err[i])
			snprintf(line + n, sizeof(line) - n, " ; %snot run (no descriptor, "
				 "or a second FORK)", shm->r.ran[i] == 2 ? "forked process: " : "");
		else if (results && shm->r.ran[i] && n < sizeof(line))
			snprintf(line + n, sizeof(line) - n, " ; %s-> %lld %s",
				 shm->r.ran[i] == 2 ? "forked process " : "",
				 (long long)shm->r.ret[i],
				 shm->r.err[i] ? strerrorname_np(shm->r.err[i]) ?: "?" : "");
		print_message("# prog: %s\n", line);
	}
}

#define NERR 140
static long hist[NOPS][NERR];	/* [0]: success */
static long nruns;		/* executions, the triage's second runs included */
static long ndrain_short;	/* programs whose teardown waited in vain */

static int execute(const struct prog *p, uint32_t *fresh, int *nfresh)
{
	struct pollfd pfd;
	int st = 0, r, ret = XR_OK;
	pid_t pid;

	nruns++;
	memcpy(&shm->prog, p, sizeof(*p));
	memset(&shm->r, 0, sizeof(shm->r));
	shm->r.child_status = -1;
	area[0][0] = area[1][0] = 0;
	pid = fork();
	if (pid < 0)
		return XR_SETUP;
	if (pid == 0)
		executor();
	setpgid(pid, pid);
	pfd.fd = syscall(SYS_pidfd_open, pid, 0);
	pfd.events = POLLIN;
	if (pfd.fd < 0) {
		waitpid(pid, &st, 0);
	} else {
		r = poll(&pfd, 1, PROG_TIMEOUT * 1000);
		if (r == 0)
			ret = XR_HANG;
		kill(-pid, SIGKILL);
		/* Killed, it must go: one stuck in the kernel is left behind. */
		if (r == 0 && poll(&pfd, 1, 10000) == 0)
			print_message("# kfuzz: executor %d does not die (stuck in the "
				      "kernel)\n", pid);
		else
			waitpid(pid, &st, 0);
		close(pfd.fd);
	}
	/* A forked process left behind (its executor died): ours, as subreaper. */
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	*nfresh = cover(fresh);
	ndrain_short += shm->r.drain_short > 0;
	for (unsigned int i = 0; i < p->n; i++)
		if (shm->r.ran[i] && (shm->r.ret[i] >= 0 || shm->r.err[i]) &&
		    shm->r.err[i] < NERR)
			hist[p->c[i].op][shm->r.err[i]]++;
	if (ret == XR_OK && (!WIFEXITED(st) || WEXITSTATUS(st)))
		ret = XR_CRASH;
	if (ret == XR_OK && shm->r.child_status != -1 &&
	    (!WIFEXITED(shm->r.child_status) || WEXITSTATUS(shm->r.child_status)))
		ret = XR_CRASH;
	if (ret == XR_OK && shm->r.nbad)
		ret = XR_BAD;
	if (reports_new() && ret == XR_OK)
		ret = XR_REPORT;
	if (ret != XR_OK) {
		static const char *const what[] = { "", "a call outside its results",
			"a crash", "a hang", "a kernel report", "" };

		print_message("# kfuzz: %s: executor status %#x, forked process %#x\n",
			      what[ret], st, shm->r.child_status);
		for (int k = 0; k < shm->r.nbad && k < 4; k++)
			print_message("# kfuzz: %s\n", shm->r.bad[k]);
		print_prog(p, true);
	}
	return ret;
}

/*
 * Runs @p; when it reached edges the map does not have, runs it again and
 * takes into the map those both runs reached (syzkaller's triage: an edge
 * that timing alone gave is not a reason to keep a program).  Returns the
 * result of the runs, the edges taken in *@fresh.
 */
static int learn(const struct prog *p, long *fresh)
{
	static uint32_t a[MAPBITS], b[MAPBITS];
	int na, nb, r = execute(p, a, &na);

	*fresh = 0;
	if (r != XR_OK || !na)
		return r;
	r = execute(p, b, &nb);
	for (int k = 0; k < nb; k++)
		seen[b[k] / 8] |= 1 << (b[k] % 8);
	for (int k = 0; k < na; k++)
		if (seen[a[k] / 8] & (1 << (a[k] % 8))) {
			edges[a[k] / 8] |= 1 << (a[k] % 8);
			nedges++;
			(*fresh)++;
		}
	for (int k = 0; k < nb; k++)
		seen[b[k] / 8] &= ~(1 << (b[k] % 8));
	return r;
}

/* ---- the supervisor: generating and mutating programs ---- */

static int pick_ref(const struct prog *p, int pos, int op1, int op2)
{
	int cand[MAXCALLS], n = 0;

	for (int i = 0; i < pos; i++)
		if (p->c[i].op == op1 || p->c[i].op == op2)
			cand[n++] = i;
	return n ? cand[rn(n)] : -1;
}

static uint8_t pick_ctx(const struct prog *p, int pos)
{
	int r = pick_ref(p, pos, OP_INIT, OP_DUP);

	if (r < 0 || chance(4))
		return chance(50) ? REF_CTL : rn(MAXCALLS);
	return r;
}

static uint8_t pick_handle(const struct prog *p, int pos)
{
	int r = pick_ref(p, pos, OP_OPEN, OP_OPEN);

	return r < 0 || chance(6) ? RAW | rn(8) : (unsigned int)r;
}

static uint8_t pick_size(void)
{
	return chance(85) ? SZ_EXACT : rn(NSZ);
}

static void random_poke(struct poke *pk, size_t len)
{
	static const uint8_t widths[] = { 1, 2, 4, 8 };

	pk->width = widths[rn(4)];
	pk->off = rn(len - pk->width + 1) & ~(pk->width - 1);
	pk->val = interesting64();
}

static const size_t op_size[OP_LASTIOC + 1] = {
	sizeof(struct dio_features), sizeof(struct dio_init), sizeof(struct dio_open),
	sizeof(struct dio_close), sizeof(struct dio_query), sizeof(struct dio_submit),
	sizeof(struct dio_wait), sizeof(struct dio_wait), sizeof(struct dio_stat),
	sizeof(struct dio_register), sizeof(struct dio_register),
	sizeof(struct dio_counters),
};

static void gen_req(const struct prog *p, int pos, struct req *q, int field)
{
	int d;

	switch (field) {
	case -1:
		memset(q, 0, sizeof(*q));
		q->h = pick_handle(p, pos);
		q->opcode = chance(10) ? DIO_OP_FLUSH : rn(2);
		d = hdev(p, q->h);
		q->blocks = q->opcode == DIO_OP_FLUSH ? 0 :
			    chance(85) ? 1 + rn(16) : 1 + rn(chance(80) ? 256 : 65535);
		q->lba = q->opcode == DIO_OP_FLUSH ? 0 : d >= 0 && devs[d].blocks > q->blocks ?
			 rn(devs[d].blocks - q->blocks + 1) : rn(1 << 20);
		if (q->opcode == DIO_OP_WRITE && chance(10))
			q->flags |= DIO_REQ_FUA;
		if (q->opcode == DIO_OP_FLUSH)
			return;
		if (chance(15)) {
			q->flags |= DIO_REQ_IOVEC;
			q->nseg = 1 + rn(chance(80) ? 4 : 63);
		} else if (chance(20)) {
			/* A registered buffer, of REGISTER's standard layout. */
			q->flags |= DIO_REQ_FIXED;
			q->bidx = chance(90) ? rn(4) : rnd();
		}
		if (chance(60)) {
			q->flags |= DIO_REQ_PI;
			q->pi = chance(85) ? PI_GEN : 1 + rn(NPI - 1);
		}
		/* PI flags as the rules of dio_batch.h allow them, mostly. */
		if (chance(50)) {
			if (q->opcode == DIO_OP_READ)
				q->pi_flags = rn(8) | (chance(10) ? DIO_PI_NOCHECK : 0);
			else if (q->flags & DIO_REQ_PI)
				q->pi_flags = rn(8) | (chance(50) ? DIO_PI_VERIFY_USER : 0);
			else
				q->pi_flags = DIO_PI_GEN_APPTAG;
		}
		if (q->pi_flags & (DIO_PI_CHK_APPTAG | DIO_PI_GEN_APPTAG)) {
			q->app_tag = rn(0xffff);
			q->app_mask = chance(70) ? 0xffff : rnd();
		}
		if (chance(3))
			q->pi_flags = rnd();
		return;
	case 0: q->kind = rn(NEK); q->ref = rn(MAXCALLS); q->idx = rn(MAXREQ); return;
	case 1: q->opcode = chance(90) ? rn(3) : rnd(); return;
	case 2: q->flags ^= chance(80) ? 1 << rn(4) : 1 << rn(16); return;
	case 3: q->pi_flags ^= chance(80) ? 1 << rn(6) : 1 << rn(16); return;
	case 4: q->h = pick_handle(p, pos); return;
	case 5: q->rptr = rn(NPTR); return;
	case 6: q->buf = rn(NPTR); return;
	case 7: q->pi = rn(NPI); q->flags |= chance(80) ? DIO_REQ_PI : 0; return;
	case 8: q->nseg = rnd(); return;
	case 9: q->size = rn(NSZ); return;
	case 10: q->app_tag = rnd(); q->app_mask = chance(50) ? 0xffff : rnd(); return;
	case 11: q->blocks = chance(50) ? q->blocks + 1 - rn(3) : interesting64(); return;
	case 12: q->lba = chance(50) ? q->lba + 1 - rn(3) : interesting64(); return;
	case 13: q->bidx = chance(70) ? rn(5) : rnd(); return;
	default: random_poke(&q->poke, sizeof(struct dio_request)); return;
	}
}

/* Field @field of call @pos (-1: a whole new call of op @op). */
static void gen_call(struct prog *p, int pos, int op, int field)
{
	struct call *c = &p->c[pos];
	int k;

	if (field < 0) {
		static const uint32_t init_flags[] = {
			DIO_PRIVATE, DIO_CREAT, DIO_CREAT | DIO_EXCL, 0, DIO_FOREIGN,
			DIO_CREAT | DIO_FOREIGN,
		};
		static const uint32_t modes[] = { 0, 0600, 0666, 0660, 0644, 0606 };

		memset(c, 0, sizeof(*c));
		c->op = op;
		c->ctx = op == OP_FEATURES || op == OP_INIT ? REF_CTL : pick_ctx(p, pos);
		c->proc = pick_ref(p, pos, OP_FORK, OP_FORK) >= 0 && chance(50);
		switch (op) {
		case OP_INIT:
			c->flags = init_flags[rn(6)];
			c->key = c->flags & DIO_PRIVATE ? 0 : KEY0 + rn(3);
			c->mode = modes[rn(6)];
			break;
		case OP_OPEN:
			c->ref = chance(75) ? rn(4) : rn(NFDS);
			c->flags = chance(50) ? DIO_OPEN_NOCLAIM : 0;
			break;
		case OP_CLOSE: case OP_QUERY: c->ref = pick_handle(p, pos); break;
		case OP_COUNTERS:
			c->ref = pick_handle(p, pos);
			c->flags = chance(50) ? DIO_COUNTERS_DEVICE : 0;
			break;
		case OP_SUBMIT:
		case OP_WAIT:
			c->nr = 1 + rn(MAXREQ);
			for (k = 0; k < c->nr; k++) {
				int s = pick_ref(p, pos, OP_SUBMIT, OP_SUBMIT);

				gen_req(p, pos, &c->req[k], -1);
				if (op == OP_WAIT && s >= 0 && chance(90)) {
					c->req[k].kind = E_PREV;
					c->req[k].ref = s;
					c->req[k].idx = rn(p->c[s].nr ? p->c[s].nr : 1);
				}
			}
			c->tmo = chance(70) ? T_FOREVER : rn(NTMO);
			break;
		case OP_COLLECT:
			c->nr = 1 + rn(16);
			c->flags = rn(3);
			c->tmo = chance(50) ? T_10MS : rn(NTMO);
			break;
		case OP_REGISTER:
			c->nr = chance(85) ? 1 + rn(4) : rn(256);
			if (chance(40)) {
				c->bshape = 1 + rn(NB - 1);
				c->bent = rn(c->nr ? c->nr : 1);
			}
			break;
		case OP_FORK: c->ref = rn(2); break;
		default: break;
		}
		return;
	}
	switch (field) {
	case 0: c->ctx = pick_ctx(p, pos); break;
	case 1: c->proc ^= 1; break;
	case 2: c->size = pick_size(); if (c->size == SZ_EXACT) c->size = rn(NSZ); break;
	case 3: c->ptr = rn(NPTR); break;
	case 4: c->cmd = rn(NCMD); break;
	case 5: c->tmo = rn(NTMO); break;
	case 6: c->aptr = rn(NPTR); break;
	case 7:
		if (c->op <= OP_LASTIOC)
			random_poke(&c->poke[rn(2)], op_size[c->op]);
		break;
	case 8:
		if (c->op == OP_INIT)
			c->flags ^= chance(80) ? 1U << rn(4) : 1U << rn(32);
		else if (c->op == OP_OPEN)
			c->flags ^= chance(70) ? 1U : 1U << rn(32);
		else if (c->op == OP_COLLECT)
			c->flags = chance(70) ? rn(c->nr + 2) : interesting64();
		else if (c->op == OP_FORK)
			c->ref ^= 1;
		else if (c->op == OP_REGISTER)
			c->bshape = rn(NB);
		break;
	case 9:
		if (c->op == OP_INIT) {
			c->key = chance(70) ? KEY0 + rn(3) : interesting64();
			c->mode = chance(70) ? rn(01000) : rnd();
		} else if (c->op == OP_CLOSE || c->op == OP_QUERY || c->op == OP_COUNTERS) {
			c->ref = pick_handle(p, pos);
		} else if (c->op == OP_OPEN) {
			c->ref = rn(NFDS);
		} else if (c->op == OP_REGISTER) {
			c->bent = chance(80) ? rn(c->nr ? c->nr : 1) : rnd();
		}
		break;
	case 10:
		if (c->op == OP_REGISTER)
			c->nr = chance(70) ? 1 + rn(4) : rn(256);
		if (has_reqs(c) || c->op == OP_COLLECT)
			c->nr = chance(70) ? 1 + rn(has_reqs(c) ? MAXREQ : 32) : rn(256);
		if (has_reqs(c) && c->nr > MAXREQ)
			c->nr = chance(50) ? 0 : MAXREQ;
		break;
	default:
		if (has_reqs(c) && c->nr)
			gen_req(p, pos, &c->req[rn(c->nr < MAXREQ ? c->nr : MAXREQ)],
				rn(15));
		break;
	}
}

static int random_op(void)
{
	static const uint8_t w[NOPS] = { 3, 10, 12, 6, 6, 20, 10, 10, 4, 6, 4, 4, 4, 4, 3 };
	unsigned int x = rn(106), i;

	for (i = 0; i < NOPS - 1 && x >= w[i]; i++)
		x -= w[i];
	return i;
}

/* Every reference of call @c to an earlier call, through @fn. */
static void each_ref(struct call *c, void (*fn)(uint8_t *r, int a, int b), int a, int b)
{
	if (c->ctx < MAXCALLS)
		fn(&c->ctx, a, b);
	if ((c->op == OP_CLOSE || c->op == OP_QUERY || c->op == OP_COUNTERS) &&
	    c->ref < MAXCALLS)
		fn(&c->ref, a, b);
	for (int j = 0; has_reqs(c) && j < MAXREQ; j++) {
		if (c->req[j].h < MAXCALLS)
			fn(&c->req[j].h, a, b);
		if (c->req[j].kind == E_PREV && c->req[j].ref < MAXCALLS)
			fn(&c->req[j].ref, a, b);
	}
}

static void ref_shift(uint8_t *r, int at, int delta)
{
	if (*r >= at)
		*r = *r + delta < MAXCALLS && *r + delta >= 0 ? *r + delta : MAXCALLS;
}

static void ref_swap(uint8_t *r, int a, int b)
{
	if (*r == a)
		*r = b;
	else if (*r == b)
		*r = a;
}

static void insert_at(struct prog *p, int pos)
{
	memmove(&p->c[pos + 1], &p->c[pos], (p->n - pos) * sizeof(p->c[0]));
	p->n++;
	for (unsigned int i = pos + 1; i < p->n; i++)
		each_ref(&p->c[i], ref_shift, pos, 1);
}

static void remove_at(struct prog *p, int pos)
{
	memmove(&p->c[pos], &p->c[pos + 1], (p->n - pos - 1) * sizeof(p->c[0]));
	p->n--;
	for (unsigned int i = pos; i < p->n; i++)
		each_ref(&p->c[i], ref_shift, pos + 1, -1);
}

/*
 * After a mutation, references that no longer name a call of the right
 * kind are pointed at one that does, mostly (some stay dangling: the
 * calls then go to a descriptor that does not exist, or handle 0).
 */
static bool ref_is(const struct prog *p, int i, uint8_t r, int op1, int op2)
{
	return r < i && (p->c[r].op == op1 || p->c[r].op == op2);
}

static void repair(struct prog *p)
{
	for (int i = 0; i < (int)p->n; i++) {
		struct call *c = &p->c[i];

		if (c->ctx != REF_CTL && !ref_is(p, i, c->ctx, OP_INIT, OP_DUP) && chance(90))
			c->ctx = pick_ctx(p, i);
		if ((c->op == OP_CLOSE || c->op == OP_QUERY || c->op == OP_COUNTERS) &&
		    !(c->ref & RAW) &&
		    !ref_is(p, i, c->ref, OP_OPEN, OP_OPEN) && chance(90))
			c->ref = pick_handle(p, i);
		for (int j = 0; has_reqs(c) && j < MAXREQ; j++) {
			struct req *q = &c->req[j];

			if (!(q->h & RAW) && !ref_is(p, i, q->h, OP_OPEN, OP_OPEN) && chance(90))
				q->h = pick_handle(p, i);
			if (q->kind == E_PREV && !ref_is(p, i, q->ref, OP_SUBMIT, OP_SUBMIT) &&
			    chance(90)) {
				int r = pick_ref(p, i, OP_SUBMIT, OP_SUBMIT);

				if (r >= 0)
					q->ref = r;
			}
		}
	}
}

static void random_prog(struct prog *p)
{
	int n = 3 + rn(8);

	memset(p, 0, sizeof(*p));
	gen_call(p, 0, OP_INIT, -1);
	gen_call(p, 1, OP_OPEN, -1);
	p->n = 2;
	while ((int)p->n < n) {
		gen_call(p, p->n, random_op(), -1);
		p->n++;
	}
}

struct entry {
	struct prog p;
	uint32_t picks;
};

static struct entry *corpus;
static int ncorpus, capcorpus;

static void mutate(struct prog *p)
{
	int n = 1 + rn(3);

	while (n--) {
		int pos = rn(p->n), k = rn(12);

		if (k < 5) {
			gen_call(p, pos, p->c[pos].op, rn(12));
		} else if (k < 7 && p->n < MAXCALLS) {
			pos = rn(p->n + 1);
			insert_at(p, pos);
			gen_call(p, pos, random_op(), -1);
		} else if (k == 7 && p->n > 1) {
			remove_at(p, pos);
		} else if (k == 8 && p->n < MAXCALLS) {
			insert_at(p, pos + 1);
			p->c[pos + 1] = p->c[pos];
		} else if (k == 9 && pos + 1 < (int)p->n) {
			struct call t = p->c[pos];

			p->c[pos] = p->c[pos + 1];
			p->c[pos + 1] = t;
			for (unsigned int i = 0; i < p->n; i++)
				each_ref(&p->c[i], ref_swap, pos, pos + 1);
		} else if (k >= 10 && ncorpus) {
			/* Splice: this one's head, another's tail. */
			const struct prog *q = &corpus[rn(ncorpus)].p;
			int a = rn(p->n + 1), b = rn(q->n);

			while (a < MAXCALLS && b < (int)q->n) {
				p->c[a] = q->c[b];
				each_ref(&p->c[a], ref_shift, 0, a - b);
				a++, b++;
			}
			p->n = a;
		}
	}
	if (!p->n)
		random_prog(p);
	repair(p);
}

static void next_prog(struct prog *p)
{
	struct entry *e;

	if (!ncorpus || chance(5)) {
		random_prog(p);
		return;
	}
	if (chance(40)) {
		e = &corpus[ncorpus - 1 - rn(ncorpus < 8 ? ncorpus : 8)];
	} else {
		struct entry *x = &corpus[rn(ncorpus)], *y = &corpus[rn(ncorpus)];

		e = x->picks <= y->picks ? x : y;
	}
	e->picks++;
	*p = e->p;
	mutate(p);
}

static const char *corpus_dir;

static void corpus_add(const struct prog *p)
{
	if (ncorpus == capcorpus) {
		capcorpus = capcorpus ? 2 * capcorpus : 256;
		corpus = realloc(corpus, capcorpus * sizeof(*corpus));
		assert_non_null(corpus);
	}
	corpus[ncorpus].p = *p;
	corpus[ncorpus++].picks = 0;
	if (corpus_dir) {
		char path[512], line[1024];
		FILE *f;

		const uint8_t *b = (const uint8_t *)p;
		uint64_t h = 0xcbf29ce484222325ULL;

		/* Named by content (FNV-1a): the same program is one file. */
		for (size_t k = 0; k < offsetof(struct prog, c) + p->n * sizeof(p->c[0]); k++)
			h = (h ^ b[k]) * 0x100000001b3ULL;
		snprintf(path, sizeof(path), "%s/%016llx.prog", corpus_dir,
			 (unsigned long long)h);
		f = fopen(path, "w");
		for (unsigned int i = 0; f && i < p->n; i++) {
			fmt_call(line, sizeof(line), p, i);
			fprintf(f, "%s\n", line);
		}
		if (f)
			fclose(f);
	}
}

/* ---- the built-in seeds ---- */

static void seed_io(struct prog *p, int dev, bool pi)
{
	struct call *c = p->c;

	memset(p, 0, sizeof(*p));
	c[0] = (struct call){ .op = OP_INIT, .ctx = REF_CTL, .flags = DIO_PRIVATE };
	c[1] = (struct call){ .op = OP_OPEN, .ctx = 0, .ref = dev };
	c[2] = (struct call){ .op = OP_QUERY, .ctx = 0, .ref = 1 };
	c[3] = (struct call){ .op = OP_SUBMIT, .ctx = 0, .nr = 2 };
	for (int j = 0; j < 2; j++)
		c[3].req[j] = (struct req){ .opcode = DIO_OP_WRITE, .h = 1, .blocks = 8,
					    .lba = 64 + 8 * j,
					    .flags = pi ? DIO_REQ_PI : 0,
					    .pi = pi ? PI_GEN : PI_NONE };
	c[4] = (struct call){ .op = OP_WAIT, .ctx = 0, .nr = 2, .tmo = T_FOREVER };
	for (int j = 0; j < 2; j++)
		c[4].req[j] = (struct req){ .kind = E_PREV, .ref = 3, .idx = j };
	c[5] = c[3];
	for (int j = 0; j < 2; j++) {
		c[5].req[j].opcode = DIO_OP_READ;
		c[5].req[j].pi_flags = pi ? DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG : 0;
	}
	c[6] = (struct call){ .op = OP_COLLECT, .ctx = 0, .nr = 4, .flags = 2,
			      .tmo = T_FOREVER };
	c[7] = (struct call){ .op = OP_COUNTERS, .ctx = 0, .ref = 1,
			      .flags = pi ? DIO_COUNTERS_DEVICE : 0 };
	c[8] = (struct call){ .op = OP_CLOSE, .ctx = 0, .ref = 1 };
	p->n = 9;
}

/*
 * Registered buffers: writes and reads into buffers 0 and 1, a read whose
 * data lies outside buffer 2 (EFAULT: SUBMIT queues 2), UNREGISTER twice
 * (ENXIO), a REGISTER of a file's mapping (EOPNOTSUPP).
 */
static void seed_fixed(struct prog *p, int dev)
{
	struct call *c = p->c;

	memset(p, 0, sizeof(*p));
	c[0] = (struct call){ .op = OP_INIT, .ctx = REF_CTL, .flags = DIO_PRIVATE };
	c[1] = (struct call){ .op = OP_OPEN, .ctx = 0, .ref = dev };
	c[2] = (struct call){ .op = OP_REGISTER, .ctx = 0, .nr = 4 };
	c[3] = (struct call){ .op = OP_SUBMIT, .ctx = 0, .nr = 2 };
	for (int j = 0; j < 2; j++)
		c[3].req[j] = (struct req){ .opcode = DIO_OP_WRITE, .h = 1, .blocks = 8,
					    .lba = 128 + 8 * j, .flags = DIO_REQ_FIXED,
					    .bidx = j };
	c[4] = (struct call){ .op = OP_WAIT, .ctx = 0, .nr = 2, .tmo = T_FOREVER };
	for (int j = 0; j < 2; j++)
		c[4].req[j] = (struct req){ .kind = E_PREV, .ref = 3, .idx = j };
	c[5] = c[3];
	c[5].nr = 3;
	c[5].req[2] = c[5].req[1];
	c[5].req[2].bidx = 2;
	for (int j = 0; j < 3; j++)
		c[5].req[j].opcode = DIO_OP_READ;
	c[6] = (struct call){ .op = OP_COLLECT, .ctx = 0, .nr = 4, .flags = 2,
			      .tmo = T_FOREVER };
	c[7] = (struct call){ .op = OP_UNREGISTER, .ctx = 0 };
	c[8] = c[7];
	c[9] = (struct call){ .op = OP_REGISTER, .ctx = 0, .nr = 2, .bshape = B_FILE,
			      .bent = 1 };
	p->n = 10;
}

/* A keyed context shared with a uid 1000 process that joins it. */
static void seed_shared(struct prog *p)
{
	struct call *c = p->c;

	memset(p, 0, sizeof(*p));
	c[0] = (struct call){ .op = OP_INIT, .ctx = REF_CTL, .flags = DIO_CREAT,
			      .key = KEY0, .mode = 0666 };
	c[1] = (struct call){ .op = OP_OPEN, .ctx = 0, .ref = 0 };
	c[2] = (struct call){ .op = OP_FORK, .ref = 1 };
	c[3] = (struct call){ .op = OP_INIT, .proc = 1, .ctx = REF_CTL,
			      .flags = DIO_FOREIGN, .key = KEY0 };
	c[4] = (struct call){ .op = OP_STAT, .proc = 1, .ctx = 3 };
	c[5] = (struct call){ .op = OP_SUBMIT, .proc = 1, .ctx = 3, .nr = 1 };
	c[5].req[0] = (struct req){ .opcode = DIO_OP_READ, .h = 1, .blocks = 4,
				    .lba = 256 };
	c[6] = (struct call){ .op = OP_COLLECT, .proc = 1, .ctx = 3, .nr = 4, .flags = 1,
			      .tmo = T_FOREVER };
	c[7] = c[5];
	c[7].ctx = 0;			/* the parent's descriptor: EXDEV */
	c[8] = (struct call){ .op = OP_SUBMIT, .ctx = 0, .nr = 1 };
	c[8].req[0] = (struct req){ .opcode = DIO_OP_WRITE, .h = 1, .blocks = 4,
				    .lba = 512 };
	c[9] = (struct call){ .op = OP_WAIT, .ctx = 0, .nr = 1, .tmo = T_FOREVER };
	c[9].req[0] = (struct req){ .kind = E_PREV, .ref = 8 };
	c[10] = (struct call){ .op = OP_FEATURES, .ctx = REF_CTL };
	c[11] = (struct call){ .op = OP_DUP, .ctx = 0 };
	c[12] = (struct call){ .op = OP_CLOSEFD, .ctx = 0 };
	c[13] = (struct call){ .op = OP_STAT, .ctx = 11 };
	p->n = 14;
}

/* ---- the tests ---- */

static struct {
	uint64_t seed;
	long execs, seed_edges, seed_execs, seed_failed, io_ok;
	bool kcov_ok, failed;
} st;

static long env_long(const char *name, long def)
{
	const char *v = getenv(name);

	return v && *v ? strtol(v, NULL, 0) : def;
}

static int setup(void **state)
{
	char names[4][32], nv[2][64];
	int n, i, p[2];

	if (tl_dio_load())
		return -1;
	if (tl_scsi_debug_load("dev_size_mb=16 max_luns=2 dif=1 dix=1 guard=0",
			       devs[0].path, sizeof(devs[0].path)))
		return -1;
	n = tl_scsi_debug_wait_disks(2, names, 4);
	if (n != 2) {
		fprintf(stderr, "kfuzz: %d scsi_debug disks, want 2\n", n);
		return -1;
	}
	if (tl_nvme_dev(2, nv[0], sizeof(nv[0])) || tl_nvme_dev(4, nv[1], sizeof(nv[1])))
		return -1;
	for (i = 0; i < 2; i++)
		snprintf(devs[i].path, sizeof(devs[i].path), "/dev/%.31s", names[i]);
	snprintf(devs[2].path, sizeof(devs[2].path), "%s", nv[0]);
	snprintf(devs[3].path, sizeof(devs[3].path), "%s", nv[1]);

	/* OPEN's descriptors: each device RW, RO; odd ones. */
	ctl = open("/dev/dio_batch", O_RDWR | O_CLOEXEC);
	if (ctl < 0 || pipe2(p, O_CLOEXEC))
		return -1;
	pipefd[0] = p[0];
	pipefd[1] = p[1];
	for (i = 0; i < NFDS; i++)
		fddev[i] = -1;
	for (i = 0; i < NDEV; i++) {
		for (n = 0; n < 200 && access(devs[i].path, F_OK); n++)
			usleep(50000);
		fdtab[i] = open(devs[i].path, O_RDWR | O_CLOEXEC);
		fdtab[4 + i] = open(devs[i].path, O_RDONLY | O_CLOEXEC);
		fddev[i] = fddev[4 + i] = i;
	}
	fdtab[8] = open(devs[0].path, O_WRONLY | O_CLOEXEC);
	fddev[8] = 0;
	fdtab[9] = open(devs[0].path, O_PATH | O_CLOEXEC);
	fdtab[10] = open("/dev/null", O_RDWR | O_CLOEXEC);
	fdtab[11] = p[0];
	fdtab[12] = open("/tmp/kfuzz-regular", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	fdtab[13] = ctl;
	fdtab[14] = -1;
	fdtab[15] = 1000;
	for (i = 0; i < 14; i++)
		if (fdtab[i] < 0) {
			fprintf(stderr, "kfuzz: descriptor %d: %s\n", i, strerror(errno));
			return -1;
		}

	/* Each device's geometry and PI profile. */
	for (i = 0; i < NDEV; i++) {
		struct dio_query q;
		int ctx = sys_dio_init(0, DIO_PRIVATE), h;

		h = ctx < 0 ? -1 : sys_dio_open(ctx, fdtab[i], DIO_OPEN_NOCLAIM);
		if (h < 1 || sys_dio_query(ctx, h, &q)) {
			fprintf(stderr, "kfuzz: %s: %s\n", devs[i].path, strerror(errno));
			return -1;
		}
		close(ctx);
		devs[i].lbs = q.logical_block_size;
		devs[i].blocks = q.capacity / q.logical_block_size;
		devs[i].pi = q.pi_interval && !dio_pi_profile_from_query(&q, &devs[i].p);
		if (!devs[i].pi) {
			fprintf(stderr, "kfuzz: %s has no PI\n", devs[i].path);
			return -1;
		}
	}

	/* The arena (then a PROT_NONE page), the results shared with executors. */
	arena = mmap(NULL, ARENA_SZ + PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pcset = calloc(PCSET, sizeof(*pcset));
	if (arena == MAP_FAILED || shm == MAP_FAILED || !pcset)
		return -1;
	{
		int xfd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
		int mfd = memfd_create("kfuzz-fixed", MFD_CLOEXEC);

		if (xfd < 0 || mfd < 0 || ftruncate(mfd, 64 * KiB))
			return -1;
		file_page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, xfd, 0);
		shm_page = mmap(NULL, 64 * KiB, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
		close(xfd);
		close(mfd);
		if (file_page == MAP_FAILED || shm_page == MAP_FAILED)
			return -1;
	}
	mprotect(arena + ARENA_SZ, PAGE, PROT_NONE);
	mprotect(arena + A_RO, 96 * PAGE, PROT_READ);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	return 0;
}

static int teardown(void **state)
{
	for (int i = 0; i < NFDS; i++)
		if (fdtab[i] >= 0 && fdtab[i] != ctl && i != 15)
			close(fdtab[i]);
	if (ctl >= 0)
		close(ctl);
	close(pipefd[1]);
	return tl_scsi_debug_unload();
}

/* Runs @p as a seed: joins the corpus when it reaches something new. */
static int run_seed(const struct prog *p, const char *what)
{
	long fresh;
	int r = learn(p, &fresh);

	st.io_ok += shm->r.io_ok;
	st.seed_execs++;
	if (r != XR_OK) {
		print_message("# kfuzz: the seed program %s failed (above)\n", what);
		st.seed_failed++;
		return -1;
	}
	if (fresh)
		corpus_add(p);
	return 0;
}

/* The corpus directory's files, in name order (the same order every run). */
static void load_corpus(void)
{
	struct dirent **names;
	int loaded = 0, bad = 0, nn = scandir(corpus_dir, &names, NULL, alphasort);

	if (nn < 0) {
		if (mkdir(corpus_dir, 0755) && errno != EEXIST)
			print_message("# kfuzz: corpus %s: %s\n", corpus_dir, strerror(errno));
		return;
	}
	for (int i = 0; i < nn; i++) {
		struct dirent *de = names[i];
		char path[512], buf[16384], err[128];
		struct prog p;
		size_t n;
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%.255s", corpus_dir, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = 0;
		if (parse_prog(buf, &p, err, sizeof(err))) {
			print_message("# kfuzz: corpus file %s: %s\n", de->d_name, err);
			bad++;
			continue;
		}
		/* Not written again: it is in the directory already. */
		corpus_dir = NULL;
		run_seed(&p, de->d_name);
		corpus_dir = getenv("DIO_KFUZZ_CORPUS");
		loaded++;
	}
	for (int i = 0; i < nn; i++)
		free(names[i]);
	free(names);
	print_message("# kfuzz: %d programs from %s (%d unreadable)\n", loaded, corpus_dir, bad);
}

/* (1) KCOV is there, the module's text is found and the seeds reach it. */
static void test_kcov(void **state)
{
	struct prog p;
	int i;

	st.seed = tl_seed("DIO_KFUZZ_SEED");
	rs = st.seed;
	print_message("# kfuzz: the seed draws the same programs while they reach the same "
		      "edges\n");
	reports_open();
	if (!report_re_ok || kmsg_fd < 0)
		fail_msg("kernel reports cannot be attributed to programs (report-patterns, "
			 "/dev/kmsg)");
	for (i = 0; i < 2; i++) {
		kcov_fd[i] = open("/sys/kernel/debug/kcov", O_RDWR | O_CLOEXEC);
		if (kcov_fd[i] < 0)
			fail_msg("/sys/kernel/debug/kcov: %s (this program runs on KCOV "
				 "kernels only: the debug and kcsan flavours)", strerror(errno));
		if (ioctl(kcov_fd[i], KCOV_INIT_TRACE, (unsigned long)KCOV_WORDS))
			fail_msg("KCOV_INIT_TRACE: %s", strerror(errno));
		area[i] = mmap(NULL, KCOV_WORDS * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			       MAP_SHARED, kcov_fd[i], 0);
		if (area[i] == MAP_FAILED)
			fail_msg("mmap of the KCOV buffer: %s", strerror(errno));
	}
	if (module_text() <= 0)
		fail_msg("no .text sections of dio_batch under /sys/module/dio_batch/sections");
	st.kcov_ok = true;

	for (i = 0; i < NDEV; i++) {
		seed_io(&p, i, false);
		run_seed(&p, "I/O without PI");
		seed_io(&p, i, true);
		run_seed(&p, "I/O with PI");
	}
	seed_shared(&p);
	run_seed(&p, "shared keyed context");
	seed_fixed(&p, 0);
	run_seed(&p, "registered buffers (scsi_debug)");
	seed_fixed(&p, 2);
	run_seed(&p, "registered buffers (NVMe, 4 KiB blocks)");
	corpus_dir = getenv("DIO_KFUZZ_CORPUS");
	if (corpus_dir && *corpus_dir)
		load_corpus();
	else
		corpus_dir = NULL;
	st.seed_edges = nedges;
	print_message("# kfuzz: seeds: %ld programs, %ld module edges, %ld module PCs, "
		      "%ld PCs outside the module, %d corpus entries, %ld requests "
		      "completed\n", st.seed_execs, nedges, npcs, outside, ncorpus, st.io_ok);
	if (st.seed_failed)
		fail_msg("%ld seed programs failed (above)", st.seed_failed);
	if (!npcs)
		fail_msg("the seed programs reached no PC of the module's text "
			 "(module not built with KCOV_INSTRUMENT?)");
	if (!st.io_ok)
		fail_msg("the seed programs completed no request");
}

static void replay(const char *path)
{
	char text[16384], err[128];
	struct prog p;
	long fresh;
	size_t n;
	FILE *f = fopen(path, "r");
	int r;

	if (!f)
		fail_msg("DIO_KFUZZ_REPLAY %s: %s", path, strerror(errno));
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	if (parse_prog(text, &p, err, sizeof(err)))
		fail_msg("DIO_KFUZZ_REPLAY %s: %s", path, err);
	r = learn(&p, &fresh);
	if (r == XR_OK)
		print_prog(&p, true);
	print_message("# kfuzz: replay of %s: %ld new edges, %ld module edges\n", path,
		      fresh, nedges);
	if (r != XR_OK)
		fail_msg("replay of %s failed", path);
}

/* (2) The fuzzing: no violation, enough executions, coverage grows. */
static void test_fuzz(void **state)
{
	long seconds, iters, min_execs, last_report = 0;
	uint64_t t0 = tl_now_ns(), now;
	struct prog p;

	if (!st.kcov_ok)
		fail_msg("no KCOV (see the first test)");
	if (getenv("DIO_KFUZZ_REPLAY")) {
		replay(getenv("DIO_KFUZZ_REPLAY"));
		return;
	}
	seconds = env_long("DIO_KFUZZ_SECONDS", 60);
	iters = env_long("DIO_KFUZZ_ITERS", -1);
	min_execs = env_long("DIO_KFUZZ_MIN_EXECS",
			     iters >= 0 && iters < MIN_EXECS ? iters : MIN_EXECS);
	print_message("# kfuzz: %ld s or %ld executions, at least %ld\n", seconds, iters,
		      min_execs);
	for (st.execs = 0; iters < 0 || st.execs < iters; st.execs++) {
		long fresh;
		int r;

		/*
		 * The floor is an amount of work, not a speed: a slower
		 * machine runs past the time bound until it is reached, up
		 * to four times the bound.
		 */
		now = tl_now_ns();
		if (now - t0 >= (uint64_t)seconds * 1000000000ULL &&
		    (st.execs >= min_execs ||
		     now - t0 >= 4 * (uint64_t)seconds * 1000000000ULL))
			break;
		if ((long)((now - t0) / 10000000000ULL) > last_report) {
			last_report = (now - t0) / 10000000000ULL;
			print_message("# kfuzz: %3ld s: %ld executions, %ld module edges, "
				      "%ld module PCs, %d corpus entries\n",
				      last_report * 10, st.execs, nedges, npcs, ncorpus);
		}
		next_prog(&p);
		r = learn(&p, &fresh);
		st.io_ok += shm->r.io_ok;
		if (r != XR_OK) {
			st.failed = true;
			fail_msg("program %ld failed (above: the program, replayable with "
				 "DIO_KFUZZ_REPLAY; seed %llu, iteration %ld)", st.execs,
				 (unsigned long long)st.seed, st.execs);
		}
		if (fresh)
			corpus_add(&p);
	}
	print_message("# kfuzz: seed %llu, %ld executions, %ld module edges, %ld module PCs, "
		      "%d corpus entries, %.0f s (%ld edges after the seeds, %ld runs with "
		      "the triage's, %ld requests completed, %ld PCs outside the module, "
		      "%ld teardowns waited 200 ms in vain)\n",
		      (unsigned long long)st.seed, st.execs, nedges, npcs, ncorpus,
		      (tl_now_ns() - t0) / 1e9, st.seed_edges, nruns, st.io_ok, outside,
		      ndrain_short);
	for (int op = 0; op < NOPS; op++)
		tl_print_hist(op_names[op], hist[op], NERR);
	if (st.execs < min_execs)
		fail_msg("%ld executions, fewer than the floor of %ld (DIO_KFUZZ_MIN_EXECS)",
			 st.execs, min_execs);
	if (nedges <= st.seed_edges)
		fail_msg("no edge beyond the seeds' %ld: the coverage feedback does not work",
			 st.seed_edges);
}

/* (3) Afterwards: everything closes and drains, and I/O still works. */
static void test_after(void **state)
{
	struct dio_request r, *rp = &r;
	uint8_t *wb = tl_xalloc(64 * KiB, 0), *rb = tl_xalloc(64 * KiB, 0);

	for (int i = 0; i < 2; i++) {
		if (area[i] && area[i] != MAP_FAILED)
			munmap(area[i], KCOV_WORDS * sizeof(uint64_t));
		if (kcov_fd[i] >= 0)
			close(kcov_fd[i]);
	}
	/* No executor left. */
	for (int i = 0; i < 100 && waitpid(-1, NULL, WNOHANG) >= 0; i++)
		usleep(100000);
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	for (int d = 0; d < NDEV; d++) {
		int ctx = sys_dio_init(0, DIO_PRIVATE), h;

		assert_true(ctx >= 0);
		h = sys_dio_open(ctx, fdtab[d], 0);
		assert_true(h >= 1);
		tl_fill(wb, 64 * KiB, d + 77);
		dio_req_prep_write(&r, h, wb, 64 * KiB, 1 * MiB);
		assert_int_equal(tl_dio_submit(ctx, &rp, 1), 1);
		assert_int_equal(tl_dio_wait(ctx, &rp, 1, NULL), 1);
		assert_int_equal(r.result, 64 * KiB);
		dio_req_prep_read(&r, h, rb, 64 * KiB, 1 * MiB);
		assert_int_equal(tl_dio_submit(ctx, &rp, 1), 1);
		assert_int_equal(tl_dio_wait(ctx, &rp, 1, NULL), 1);
		assert_int_equal(r.result, 64 * KiB);
		assert_memory_equal(wb, rb, 64 * KiB);
		assert_int_equal(close(ctx), 0);
	}
	free(wb);
	free(rb);
	for (int i = 0; i < NFDS; i++)
		if (fdtab[i] >= 0 && fdtab[i] != ctl && i != 15) {
			assert_int_equal(close(fdtab[i]), 0);
			fdtab[i] = -1;
		}
	assert_int_equal(close(ctl), 0);
	ctl = -1;
	assert_true(tl_dio_caches_drained(30));
	assert_int_equal(tl_dio_refcnt(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		{ "kcov present and module text found", test_kcov, NULL, NULL, NULL },
		{ "coverage-guided fuzzing", test_fuzz, NULL, NULL, NULL },
		{ "afterwards: everything drains and I/O works", test_after, NULL, NULL, NULL },
	};

	return cmocka_run_group_tests_name("kfuzz", tests, setup, teardown);
}
