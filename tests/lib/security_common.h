/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The test bed of the t_security_* programs (security_common.c): the
 * devices, the disk's regions, the spare users, forked children checked
 * without cmocka, and agents (processes of other users driven over a
 * socket).  Linked only into the guest programs that include this header.
 *
 * Device access of the unprivileged processes: sec_setup() makes
 * /dev/dio_batch mode 0666 (sec_teardown() restores it), so that they
 * create and join contexts themselves.  Block devices stay root's 0660:
 * root opens them BEFORE the other process drops its privileges, and
 * hands the descriptor over (inherited through fork, or sent with
 * SCM_RIGHTS to an "agent" that dropped them long before), as a
 * privileged site would.
 *
 * Devices: a scsi_debug disk (16 MiB, DIF type 1, DIX, CRC guard, 512-byte
 * sectors), NVMe namespaces 1 (type 1) and 3 (type 3); a program that
 * needs another opens it itself.
 */
#ifndef SECURITY_COMMON_H
#define SECURITY_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "dioctl.h"

#define KiB		1024ULL
#define MiB		(1024 * KiB)
#define BLK		4096
#define DISK_MB		16
#define KEY_BASE	0x5ec00000ULL
#define CTL_PATH	"/dev/dio_batch"

/* The spare users the attacks run as. */
#define U_ALICE		1000
#define U_BOB		1001
#define U_EVE		2000

/*
 * Disk regions, one per test, so that a test never sees another's data.
 * The swap test owns the first MiB (mkswap writes there).
 */
#define OFF_MM		(1 * MiB)
#define OFF_ACCESS	(2 * MiB)
#define OFF_RO		(3 * MiB)
#define OFF_FLIP	(4 * MiB)	/* FLIP_MAX blocks */
#define OFF_LSM		(8 * MiB)
#define OFF_NOTIFY	(9 * MiB)
#define OFF_APPTAG	(10 * MiB)
#define OFF_PI		(11 * MiB)

extern char disk[64], nvme1[64], nvme3[64];
extern int dfd;			/* root's O_DIRECT descriptor of the disk */

/*
 * Memory every process of the test has at the same address: mapped
 * (private) before the first fork, so a child or an agent has its own copy
 * there.  Requests and buffers of the memory tests live in it, and a
 * process that must not be written to fills its copy with a pattern.
 */
#define ARENA_SZ	(1 * MiB)
#define ARENA_REQS	0		/* request structs */
#define ARENA_BUFS	(512 * KiB)	/* data buffers */
extern uint8_t *arena;

/* A forked child's first failed check, for the parent to report. */
struct child_report {
	char msg[512];
};
extern struct child_report *crep;

/* ---- errno helpers ---- */

/* errno's name ("EXDEV"), "0" for 0. */
const char *en(int e);
/* @ret must be -1 with errno @want (errno read first thing). */
void want_err(long ret, int want, const char *what);
/* @ret must be >= 0; returns it. */
long want_ok(long ret, const char *what);
/* DIO_IOC_STAT on @ctx into @st. */
int dio_stat(int ctx, struct dio_stat *st);
/* Index of the first byte of @p that is not @byte, -1 when none. */
long first_diff(const void *p, size_t len, int byte);

/* ---- what a test leaves for its teardown ---- */

/*
 * Descriptors are kept with tl_fd_keep() (testlib.h) and closed by
 * sec_cleanup(); forked children with track_pid() (child_fork() does it),
 * killed there; ro_set and swap_on are undone there.
 */
extern bool ro_set, swap_on;
void track_pid(pid_t pid);
void forget_pid(pid_t pid);
/* open(@path, @flags | O_CLOEXEC), kept; fails the test when it fails. */
int open_disk(const char *path, int flags);

/* ---- the disk, seen through root's O_DIRECT descriptor ---- */

void disk_fill(uint64_t off, size_t len, int byte);
void disk_read(void *buf, size_t len, uint64_t off);
/* The disk holds @byte everywhere in [off, off + len). */
void disk_is(uint64_t off, size_t len, int byte, const char *what);
/* BLKROSET on the disk. */
void set_ro(int on);

/* ---- forked children: checks without cmocka ---- */

void child_fail(int line, const char *cond, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
#define CHILD_CHECK(cond, ...)						\
	do {								\
		if (!(cond))						\
			child_fail(__LINE__, #cond, __VA_ARGS__);	\
	} while (0)
/* fork(), the child tracked for sec_cleanup(). */
pid_t child_fork(void);
/* Wait for a child; its failed check fails the test. */
void child_done(pid_t pid, const char *what);

/* ---- agents: processes of other users, driven over a socket ---- */

enum aop {
	A_PING = 1,	/* ret: euid */
	A_RECVFD,	/* ret: the agent's number of the descriptor sent along */
	A_SENDFD,	/* send descriptor .fd back */
	A_INIT,		/* sys_dio_init_mode(.key, .flags, .mode) */
	A_OPEN,		/* sys_dio_open(.ctx, .fd, .flags) */
	A_CLOSEH,	/* sys_dio_close(.ctx, .h) */
	A_CLOSEFD,	/* close(.fd) */
	A_QUERY,	/* sys_dio_query(.ctx, .h) */
	A_STAT,		/* DIO_IOC_STAT on .ctx, into .st */
	A_IO,		/* one request of .len at .off: submit, wait */
	A_PWRITE,	/* pwrite(.fd) of .len bytes of .fill at .off */
	A_COLLECT,	/* COLLECT on .ctx into the arena filled with .fill */
	A_WAIT,		/* WAIT for .nr requests at arena + .aoff, arena filled */
	A_SUBMIT_ARENA,	/* .nr reads of .len from .off, requests in the arena */
	A_EXIT,		/* _exit(0) after the answer */
};

struct amsg {
	int op;
	int ctx, fd, h;
	unsigned int flags, mode;
	uint64_t key, off;
	uint32_t len, nr, min_nr, aoff;
	int opcode;
	int fill;
	int timeout_ms;
};

struct arep {
	int64_t ret;
	int err;
	int64_t result;		/* A_IO: the request's result */
	long diff;		/* A_IO read: first byte not .fill, -1 none;
				 * A_COLLECT, A_WAIT: first arena byte changed */
	struct dio_stat st;
};

struct agent {
	pid_t pid;
	int sock;
	uid_t uid;
};

#define NAGENTS	6
extern struct agent agents[NAGENTS];

struct timespec ms_ts(int ms);
struct arep agent_call(struct agent *a, struct amsg m, int fd_out, int *fd_in);
#define ACALL(a, ...)	agent_call((a), (struct amsg){ __VA_ARGS__ }, -1, NULL)
/* Started and confirmed to run as @uid. */
struct agent *agent(uid_t uid);
/* Send @fd to @a; returns the agent's number for it. */
int agent_give(struct agent *a, int fd);
/* The agent's descriptor @afd, as a descriptor of ours (SCM_RIGHTS). */
int agent_take(struct agent *a, int afd);
void agent_exit(struct agent *a);
void rep_ok(struct arep r, const char *what);
void rep_err(struct arep r, int want, const char *what);
/* An agent's A_IO that went through: submitted, reported, @len done. */
void rep_io_ok(struct arep r, uint32_t len, const char *what);
struct arep a_io(struct agent *a, int ctx, int h, int opcode, uint64_t off,
		 int fill);

/* ---- setup and teardown ---- */

/* The group's: the module, /dev/dio_batch 0666, the devices, dfd. */
int sec_setup(void **state);
int sec_teardown(void **state);
/*
 * After every test, passed or failed: no process of it left, the device
 * read-write and not swap, scsi_debug at full speed, its descriptors
 * closed.
 */
int sec_cleanup(void **state);

struct CMUnitTest;
/*
 * A program's main(): maps the arena and the child report before any
 * fork (every process of the test has them), then runs @tests as the
 * group @name between sec_setup() and sec_teardown().
 */
int sec_run(const char *name, const struct CMUnitTest *tests, size_t n);
#define SEC_RUN(name, tests) sec_run((name), (tests), sizeof(tests) / sizeof((tests)[0]))

#endif
