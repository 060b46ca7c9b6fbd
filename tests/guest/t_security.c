// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The trust boundary (ABI 2), attacked by users who are not root.
 *
 * The attacks run in processes that dropped to spare uids (1000, 1001,
 * 2000: setgroups, setresgid, setresuid after fork) or in namespaces of
 * their own (unshare); what only root can set up (BLKROSET, swapon,
 * AppArmor profiles, the checks of PI bytes) runs as root.  Each test
 * asserts the exact documented errno and that nothing leaked: the bytes on
 * the disk, the bytes of the attacker's and the victim's memory, the
 * requests in the module's slab caches.
 *
 *  - I/O belongs to the process that created the descriptor: a fork()ed
 *    child, a receiver through SCM_RIGHTS and the holder of a descriptor
 *    whose submitter died get EXDEV from SUBMIT, WAIT and COLLECT, and no
 *    result is ever written into their memory;
 *  - keys live in IPC namespaces; another user's key is joined only with
 *    DIO_FOREIGN; DIO_IOC_STAT says whose context it is;
 *  - a handle's access follows the descriptors that hold it open, and an
 *    OPEN that fails leaves it as it was; OPEN does not touch user memory
 *    under the context's lock (userfaultfd);
 *  - writes obey the kernel's own rules: a read-only device (EROFS at
 *    OPEN, EPERM at SUBMIT, also when flipped mid-run), an active swap
 *    device (EBUSY, ETXTBSY, EBADF), the LSM (AppArmor: EACCES, as
 *    pwrite(2) gets), and they raise the fsnotify events pwrite and pread
 *    raise;
 *  - DIO_PI_GEN_APPTAG refuses the escape app tag on type 1; no kernel
 *    memory reaches the disk or the caller through PI or through the
 *    metadata bytes beyond the PI (NVMe namespace 4: 16 bytes of metadata,
 *    8 of PI first).
 *
 * Device access of the unprivileged processes: the group setup makes
 * /dev/dio_batch mode 0666 (restored by the group teardown), so that they
 * create and join contexts themselves.  Block devices stay root's 0660:
 * root opens them BEFORE the other process drops its privileges, and
 * hands the descriptor over (inherited through fork, or sent with
 * SCM_RIGHTS to an "agent" that dropped them long before), as a
 * privileged site would.
 *
 * Devices: a scsi_debug disk (16 MiB, DIF type 1, DIX, CRC guard, 512-byte
 * sectors), NVMe namespaces 1 (type 1), 3 (type 3) and 4 (metadata beyond
 * the PI).  Tools from the host's root: mkswap (util-linux) and
 * apparmor_parser (package apparmor, in scripts/deps.sh).  A device, a
 * tool or a kernel feature (userfaultfd, AppArmor) that is missing fails
 * the test that needs it, with a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

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

static char disk[64], nvme1[64], nvme3[64];
static int dfd = -1;		/* root's O_DIRECT descriptor of the disk */
static unsigned int ctl_mode;	/* /dev/dio_batch's mode before the setup */
static bool ctl_mode_saved;

/*
 * Memory every process of the test has at the same address: mapped
 * (private) before the first fork, so a child or an agent has its own copy
 * there.  Requests and buffers of the memory tests live in it, and a
 * process that must not be written to fills its copy with a pattern.
 */
#define ARENA_SZ	(1 * MiB)
#define ARENA_REQS	0		/* request structs */
#define ARENA_BUFS	(512 * KiB)	/* data buffers */
static uint8_t *arena;

/* A forked child's first failed check, for the parent to report. */
static struct child_report {
	char msg[512];
} *crep;

/* ---- errno helpers ---- */

static const char *en(int e)
{
	const char *s = e ? strerrorname_np(e) : "0";

	return s ? s : "?";
}

/* @ret must be -1 with errno @want (errno read first thing). */
static void want_err(long ret, int want, const char *what)
{
	int e = errno;

	if (ret != -1 || e != want)
		fail_msg("%s: returned %ld%s%s, want -1/%s", what, ret,
			 ret == -1 ? "/" : "", ret == -1 ? en(e) : "", en(want));
}

/* @ret must be >= 0. */
static long want_ok(long ret, const char *what)
{
	int e = errno;

	if (ret < 0)
		fail_msg("%s: returned %ld/%s, want success", what, ret, en(e));
	return ret;
}

static int dio_stat(int ctx, struct dio_stat *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return ioctl(ctx, DIO_IOC_STAT, st);
}

/* Index of the first byte of @p that is not @byte, -1 when none. */
static long first_diff(const void *p, size_t len, int byte)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i] != (uint8_t)byte)
			return (long)i;
	return -1;
}

/* ---- what a test leaves for its teardown ---- */

#define NKEPT	16
static int kept[NKEPT];
static pid_t pids[8];
static bool ro_set, swap_on;

static int keep(int fd)
{
	for (int i = 0; i < NKEPT; i++)
		if (kept[i] < 0) {
			kept[i] = fd;
			break;
		}
	return fd;
}

static void unkeep_close(int fd)
{
	for (int i = 0; i < NKEPT; i++)
		if (kept[i] == fd)
			kept[i] = -1;
	close(fd);
}

static void track_pid(pid_t pid)
{
	for (int i = 0; i < 8; i++)
		if (pids[i] <= 0) {
			pids[i] = pid;
			return;
		}
}

static void forget_pid(pid_t pid)
{
	for (int i = 0; i < 8; i++)
		if (pids[i] == pid)
			pids[i] = 0;
}

static int open_disk(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd < 0)
		fail_msg("open %s: %s", path, strerror(errno));
	return keep(fd);
}

/* ---- the disk, seen through root's O_DIRECT descriptor ---- */

static void disk_fill(uint64_t off, size_t len, int byte)
{
	uint8_t *b = tl_alloc(len, byte);

	assert_non_null(b);
	assert_int_equal(pwrite(dfd, b, len, off), (ssize_t)len);
	free(b);
}

static void disk_read(void *buf, size_t len, uint64_t off)
{
	assert_int_equal(pread(dfd, buf, len, off), (ssize_t)len);
}

/* The disk holds @byte everywhere in [off, off + len). */
static void disk_is(uint64_t off, size_t len, int byte, const char *what)
{
	uint8_t *b = tl_alloc(len, 0);
	long i;

	assert_non_null(b);
	disk_read(b, len, off);
	i = first_diff(b, len, byte);
	if (i >= 0) {
		int got = b[i];

		free(b);
		fail_msg("%s: disk byte %llu is %#x, want %#x", what,
			 (unsigned long long)(off + i), got, byte);
	}
	free(b);
}

static void set_ro(int on)
{
	assert_int_equal(ioctl(dfd, BLKROSET, &on), 0);
	ro_set = on;
}

/* ---- forked children: checks without cmocka ---- */

static void child_fail(int line, const char *cond, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
static void child_fail(int line, const char *cond, const char *fmt, ...)
{
	int e = errno, n;
	va_list ap;

	n = snprintf(crep->msg, sizeof(crep->msg), "line %d: %s (errno %s): ", line,
		     cond, en(e));
	va_start(ap, fmt);
	vsnprintf(crep->msg + n, sizeof(crep->msg) - n, fmt, ap);
	va_end(ap);
	_exit(1);
}

#define CHILD_CHECK(cond, ...)						\
	do {								\
		if (!(cond))						\
			child_fail(__LINE__, #cond, __VA_ARGS__);	\
	} while (0)

static pid_t child_fork(void)
{
	pid_t pid;

	crep->msg[0] = 0;
	pid = fork();
	assert_true(pid >= 0);
	if (pid > 0)
		track_pid(pid);
	return pid;
}

/* Wait for a child; its failed check fails the test. */
static void child_done(pid_t pid, const char *what)
{
	int st;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	forget_pid(pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("%s: child %s %d: %s", what,
			 WIFEXITED(st) ? "exited with status" : "killed by signal",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
			 crep->msg[0] ? crep->msg : "(no message)");
}

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
static struct agent agents[NAGENTS];

static int send_fd_msg(int sock, const void *buf, size_t len, int fd)
{
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.b;
		mh.msg_controllen = sizeof(u.b);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

static ssize_t recv_fd_msg(int sock, void *buf, size_t len, int *fd)
{
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.b, .msg_controllen = sizeof(u.b) };
	struct cmsghdr *c;
	ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);

	*fd = -1;
	if (n < 0)
		return n;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(c), sizeof(int));
	return n;
}

static struct timespec ms_ts(int ms)
{
	return (struct timespec){ ms / 1000, (ms % 1000) * 1000000L };
}

static void agent_io(const struct amsg *m, struct arep *r)
{
	struct dio_request q, *qp = &q;
	/*
	 * A hang guard (one read or write of a few KiB: milliseconds, or
	 * the 500 ms of a test's delay), as are the 10 s of the tests' own
	 * WAITs and polls below.
	 */
	struct timespec to = ms_ts(10000 * tl_slow_factor());
	uint8_t *buf = tl_alloc(m->len, m->opcode == DIO_OP_WRITE ? m->fill : 0);

	r->diff = -1;
	if (!buf) {
		r->ret = -1;
		r->err = ENOMEM;
		return;
	}
	if (m->opcode == DIO_OP_WRITE)
		dio_req_prep_write(&q, m->h, buf, m->len, m->off);
	else
		dio_req_prep_read(&q, m->h, buf, m->len, m->off);
	q.result = 0x5a5a;
	r->ret = sys_dio_submit(m->ctx, &qp, 1);
	r->err = r->ret < 0 ? errno : 0;
	if (r->ret == 1) {
		if (sys_dio_wait(m->ctx, &qp, 1, &to) != 1)
			r->ret = 0;	/* not reported in 10 s */
		r->result = q.result;
		if (m->opcode == DIO_OP_READ)
			r->diff = first_diff(buf, m->len, m->fill);
	}
	free(buf);
}

static void agent_loop(int sock)
{
	for (;;) {
		struct amsg m;
		struct arep r;
		struct dio_query q;
		struct dio_request *got[64], *rp[64];
		struct timespec to;
		int fd, outfd = -1;
		uint8_t *b;

		if (recv_fd_msg(sock, &m, sizeof(m), &fd) != sizeof(m))
			_exit(0);	/* the test is gone */
		memset(&r, 0, sizeof(r));
		errno = 0;
		switch (m.op) {
		case A_PING:
			r.ret = geteuid();
			break;
		case A_RECVFD:
			r.ret = fd;
			fd = -1;
			break;
		case A_SENDFD:
			outfd = m.fd;
			break;
		case A_INIT:
			r.ret = sys_dio_init_mode(m.key, m.flags, m.mode);
			break;
		case A_OPEN:
			r.ret = sys_dio_open(m.ctx, m.fd, m.flags);
			break;
		case A_CLOSEH:
			r.ret = sys_dio_close(m.ctx, m.h);
			break;
		case A_CLOSEFD:
			r.ret = close(m.fd);
			break;
		case A_QUERY:
			r.ret = sys_dio_query(m.ctx, m.h, &q);
			break;
		case A_STAT:
			r.ret = dio_stat(m.ctx, &r.st);
			break;
		case A_IO:
			agent_io(&m, &r);
			break;
		case A_PWRITE:
			b = tl_alloc(m.len, m.fill);
			r.ret = b ? pwrite(m.fd, b, m.len, m.off) : -1;
			r.err = r.ret < 0 ? errno : 0;
			free(b);
			break;
		case A_COLLECT:
			/* Whatever the kernel writes lands in the arena or got[]. */
			memset(arena, m.fill, ARENA_SZ);
			memset(got, m.fill, sizeof(got));
			to = ms_ts(m.timeout_ms);
			r.ret = sys_dio_collect(m.ctx, got, m.min_nr, m.nr > 64 ? 64 : m.nr, &to);
			r.err = r.ret < 0 ? errno : 0;
			r.diff = first_diff(arena, ARENA_SZ, m.fill);
			if (r.diff < 0 && first_diff(got, sizeof(got), m.fill) >= 0)
				r.diff = ARENA_SZ;	/* "past the arena": got[] */
			break;
		case A_WAIT:
			memset(arena, m.fill, ARENA_SZ);
			for (uint32_t i = 0; i < m.nr && i < 64; i++)
				rp[i] = (struct dio_request *)(arena + m.aoff) + i;
			to = ms_ts(m.timeout_ms);
			r.ret = sys_dio_wait(m.ctx, rp, m.nr > 64 ? 64 : m.nr, &to);
			r.err = r.ret < 0 ? errno : 0;
			r.diff = first_diff(arena, ARENA_SZ, m.fill);
			break;
		case A_SUBMIT_ARENA:
			for (uint32_t i = 0; i < m.nr && i < 64; i++) {
				struct dio_request *rq = (struct dio_request *)(arena + m.aoff) + i;

				dio_req_prep_read(rq, m.h, arena + ARENA_BUFS + i * m.len,
						  m.len, m.off + i * m.len);
				rp[i] = rq;
			}
			r.ret = sys_dio_submit(m.ctx, rp, m.nr > 64 ? 64 : m.nr);
			break;
		case A_EXIT:
			send_fd_msg(sock, &r, sizeof(r), -1);
			_exit(0);
		default:
			r.ret = -1;
			errno = ENOSYS;
			break;
		}
		if (r.ret < 0 && !r.err)
			r.err = errno;
		if (fd >= 0)
			close(fd);
		send_fd_msg(sock, &r, sizeof(r), outfd);
	}
}

/*
 * A process of @uid/@gid, forked now, with no descriptor but its socket
 * (the test's descriptors are closed in it): it gets block devices and
 * contexts only through SCM_RIGHTS.
 */
static struct agent *agent_start(uid_t uid, gid_t gid)
{
	struct timeval tv = { 30, 0 };
	struct agent *a = NULL;
	int sv[2], i;
	pid_t pid;

	for (i = 0; i < NAGENTS && !a; i++)
		if (agents[i].pid <= 0)
			a = &agents[i];
	assert_non_null(a);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	crep->msg[0] = 0;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (sv[1] > 3)
			close_range(3, sv[1] - 1, 0);
		close_range(sv[1] + 1, ~0U, 0);
		if ((uid || gid) && tl_drop_to(uid, gid, 0))
			child_fail(__LINE__, "drop privileges", "to %d/%d", (int)uid, (int)gid);
		agent_loop(sv[1]);
	}
	close(sv[1]);
	setsockopt(sv[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	*a = (struct agent){ .pid = pid, .sock = sv[0], .uid = uid };
	return a;
}

static struct arep agent_call(struct agent *a, struct amsg m, int fd_out, int *fd_in)
{
	struct arep r;
	int fd = -1;

	if (send_fd_msg(a->sock, &m, sizeof(m), fd_out))
		fail_msg("agent uid %d: cannot send op %d: %s", (int)a->uid, m.op,
			 strerror(errno));
	if (recv_fd_msg(a->sock, &r, sizeof(r), &fd) != sizeof(r))
		fail_msg("agent uid %d: no answer to op %d (%s)%s%s", (int)a->uid, m.op,
			 strerror(errno), crep->msg[0] ? ": " : "", crep->msg);
	if (fd_in)
		*fd_in = fd;
	else if (fd >= 0)
		close(fd);
	errno = r.err;
	return r;
}

#define ACALL(a, ...)	agent_call((a), (struct amsg){ __VA_ARGS__ }, -1, NULL)

/* Started and confirmed to run as @uid. */
static struct agent *agent(uid_t uid)
{
	struct agent *a = agent_start(uid, uid);
	struct arep r = ACALL(a, .op = A_PING);

	assert_int_equal(r.ret, uid);
	return a;
}

/* Send @fd to @a; returns the agent's number for it. */
static int agent_give(struct agent *a, int fd)
{
	struct arep r = agent_call(a, (struct amsg){ .op = A_RECVFD }, fd, NULL);

	assert_true(r.ret >= 0);
	return (int)r.ret;
}

/* The agent's descriptor @afd, as a descriptor of ours (SCM_RIGHTS). */
static int agent_take(struct agent *a, int afd)
{
	int fd = -1;

	agent_call(a, (struct amsg){ .op = A_SENDFD, .fd = afd }, -1, &fd);
	assert_true(fd >= 0);
	return keep(fd);
}

static void agent_exit(struct agent *a)
{
	int st;

	ACALL(a, .op = A_EXIT);
	assert_int_equal(waitpid(a->pid, &st, 0), a->pid);
	close(a->sock);
	a->pid = 0;
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void rep_ok(struct arep r, const char *what)
{
	if (r.ret < 0)
		fail_msg("%s: -1/%s, want success", what, en(r.err));
}

static void rep_err(struct arep r, int want, const char *what)
{
	if (r.ret != -1 || r.err != want)
		fail_msg("%s: %lld%s%s, want -1/%s", what, (long long)r.ret,
			 r.ret == -1 ? "/" : "", r.ret == -1 ? en(r.err) : "", en(want));
}

/* An agent's A_IO that went through: submitted, reported, @len done. */
static void rep_io_ok(struct arep r, uint32_t len, const char *what)
{
	if (r.ret != 1 || r.result != len)
		fail_msg("%s: submit %lld/%s, result %lld; want %u bytes", what,
			 (long long)r.ret, en(r.err), (long long)r.result, len);
}

static struct arep a_io(struct agent *a, int ctx, int h, int opcode, uint64_t off,
			int fill)
{
	return ACALL(a, .op = A_IO, .ctx = ctx, .h = h, .opcode = opcode, .off = off,
		     .len = BLK, .fill = fill);
}

/* ---- setup and teardown ---- */

static int setup(void **state)
{
	int fd;

	for (int i = 0; i < NKEPT; i++)
		kept[i] = -1;
	if (tl_dio_load())
		return -1;
	/* Every user may create contexts: what a udev rule for a group does. */
	if (tl_dio_ctl_chmod(0666, &ctl_mode))
		return -1;
	ctl_mode_saved = true;
	if (tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1 guard=0 sector_size=512",
			       disk, sizeof(disk)))
		return -1;
	if (tl_nvme_dev(1, nvme1, sizeof(nvme1)) || tl_nvme_dev(3, nvme3, sizeof(nvme3)))
		return -1;
	fd = open(disk, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s\n", disk, strerror(errno));
		return -1;
	}
	dfd = fd;
	print_message("# disk %s, NVMe %s (type 1), %s (type 3)\n", disk, nvme1, nvme3);
	return 0;
}

static int teardown(void **state)
{
	int ret = 0;

	if (swap_on && swapoff(disk) == 0)
		swap_on = false;
	if (dfd >= 0) {
		int zero = 0;

		ioctl(dfd, BLKROSET, &zero);
		close(dfd);
		dfd = -1;
	}
	if (tl_scsi_debug_unload())
		ret = -1;
	if (ctl_mode_saved && chmod(CTL_PATH, ctl_mode)) {
		fprintf(stderr, "restoring %s mode %o: %s\n", CTL_PATH, ctl_mode,
			strerror(errno));
		ret = -1;
	}
	return ret;
}

static void uffd_release(void);
static void aa_unload(void);

/*
 * After every test, passed or failed: no process of it left, the device
 * read-write and not swap, scsi_debug at full speed, its descriptors
 * closed.
 */
static int cleanup(void **state)
{
	int ret = 0, st;

	uffd_release();
	for (int i = 0; i < NAGENTS; i++)
		if (agents[i].pid > 0) {
			kill(agents[i].pid, SIGKILL);
			waitpid(agents[i].pid, &st, 0);
			close(agents[i].sock);
			agents[i].pid = 0;
		}
	for (int i = 0; i < 8; i++)
		if (pids[i] > 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], &st, 0);
			pids[i] = 0;
		}
	if (swap_on) {
		if (swapoff(disk)) {
			fprintf(stderr, "swapoff %s: %s\n", disk, strerror(errno));
			ret = -1;
		} else {
			swap_on = false;
		}
	}
	if (ro_set) {
		int zero = 0;

		if (ioctl(dfd, BLKROSET, &zero))
			ret = -1;
		else
			ro_set = false;
	}
	aa_unload();
	for (int i = 0; i < NKEPT; i++)
		if (kept[i] >= 0) {
			close(kept[i]);
			kept[i] = -1;
		}
	if (tl_scsi_debug_ndelay(0))
		ret = -1;
	return ret;
}

/* ------------------------------------------------------------------ */

/*
 * The module has ABI 2's trust boundary (DIO_IOC_STAT, DIO_FOREIGN, the
 * pin ceiling); ABI 3 added registered buffers (t_fixed) and kept it.
 */
static void test_abi2_announced(void **state)
{
	struct dio_features f;

	assert_int_equal(sys_dio_features(&f), 0);
	assert_true(f.abi_version >= 3);
	assert_true(f.features & DIO_FEAT_STAT);
	assert_true(f.features & DIO_FEAT_PIN_LIMIT);
	assert_true(f.init_flags & DIO_FOREIGN);
}

/* ---- 1. A descriptor's I/O belongs to the process that created it ---- */

/* Root's context and a handle there, inherited by a tl_run_as() child. */
struct inherited {
	int ctx, h;
	struct dio_request **rp;	/* reap_child()'s: REAP_NR in flight there */
};

#define REAP_NR		4		/* test_forked_child_cannot_reap()'s requests */

/* test_forked_child_cannot_reap()'s child: COLLECT and WAIT of root's requests. */
static int reap_child(void *arg)
{
	const struct inherited *in = arg;
	struct dio_request *got[REAP_NR];
	struct timespec cto = ms_ts(2000);
	int ret;

	memset(arena, 0xc3, ARENA_SZ);
	memset(got, 0xc3, sizeof(got));
	ret = sys_dio_collect(in->ctx, got, 1, REAP_NR, &cto);
	TL_CHILD_CHECK(ret == -1 && errno == EXDEV, "COLLECT returned %d", ret);
	ret = sys_dio_wait(in->ctx, in->rp, REAP_NR, &cto);
	TL_CHILD_CHECK(ret == -1 && errno == EXDEV, "WAIT returned %d", ret);
	ret = sys_dio_collect(in->ctx, got, 0, REAP_NR, &(struct timespec){ 0, 0 });
	TL_CHILD_CHECK(ret == -1 && errno == EXDEV, "COLLECT (no wait) returned %d", ret);
	TL_CHILD_CHECK(first_diff(arena, ARENA_SZ, 0xc3) < 0,
		       "the child's memory changed at arena byte %ld",
		       first_diff(arena, ARENA_SZ, 0xc3));
	TL_CHILD_CHECK(first_diff(got, sizeof(got), 0xc3) < 0,
		       "COLLECT wrote into the child's array");
	return 0;
}

/*
 * The parent submits reads into its buffers and does not reap them; a
 * fork()ed child, now uid 1000, calls COLLECT and WAIT (on the parent's
 * request addresses) on the inherited descriptor: EXDEV, and its own copy
 * of the requests, the buffers and COLLECT's array, filled with 0xc3,
 * is unchanged byte for byte.  The parent then reaps all of them, with
 * the data of the disk.
 */
static void test_forked_child_cannot_reap(void **state)
{
	enum { N = REAP_NR };
	struct dio_request *r = (struct dio_request *)(arena + ARENA_REQS), *rp[N];
	uint8_t *buf = arena + ARENA_BUFS, *want = tl_alloc(N * BLK, 0);
	struct timespec to = ms_ts(10000);
	int ctx = keep(sys_dio_init(0, DIO_PRIVATE)), fd = open_disk(disk, O_RDWR), h;

	assert_true(ctx >= 0);
	h = want_ok(sys_dio_open(ctx, fd, 0), "OPEN");
	tl_fill(want, N * BLK, 101);
	assert_int_equal(pwrite(dfd, want, N * BLK, OFF_MM), N * BLK);
	memset(arena, 0x77, ARENA_SZ);
	for (int i = 0; i < N; i++) {
		dio_req_prep_read(&r[i], h, buf + i * BLK, BLK, OFF_MM + i * BLK);
		r[i].result = 0x5a5a;
		rp[i] = &r[i];
	}
	/*
	 * In flight for a while: the child acts before or after completion,
	 * and its calls are refused either way (no verdict depends on when).
	 */
	assert_int_equal(tl_scsi_debug_ndelay(200000000), 0);
	assert_int_equal(sys_dio_submit(ctx, rp, N), N);
	assert_int_equal(tl_run_as(U_ALICE, U_ALICE, 0, reap_child,
				   &(struct inherited){ .ctx = ctx, .rp = rp }), 0);
	/* The parent's requests were waiting for it alone. */
	assert_int_equal(sys_dio_wait(ctx, rp, N, &to), N);
	for (int i = 0; i < N; i++)
		assert_int_equal(r[i].result, BLK);
	assert_memory_equal(buf, want, N * BLK);
	free(want);
}

/* test_forked_child_cannot_submit()'s child: a write and a read on root's handle. */
static int submit_child(void *arg)
{
	const struct inherited *in = arg;
	struct dio_request w, rd, *p;
	uint8_t *b = arena + ARENA_BUFS;
	int ret;

	memset(b, 0xee, 2 * BLK);
	dio_req_prep_write(&w, in->h, b, BLK, OFF_MM + 64 * KiB);
	p = &w;
	ret = sys_dio_submit(in->ctx, &p, 1);
	TL_CHILD_CHECK(ret == -1 && errno == EXDEV, "write SUBMIT returned %d", ret);
	dio_req_prep_read(&rd, in->h, b + BLK, BLK, OFF_MM + 64 * KiB);
	p = &rd;
	ret = sys_dio_submit(in->ctx, &p, 1);
	TL_CHILD_CHECK(ret == -1 && errno == EXDEV, "read SUBMIT returned %d", ret);
	TL_CHILD_CHECK(first_diff(b + BLK, BLK, 0xee) < 0, "the read landed");
	return 0;
}

/*
 * A fork()ed child, now uid 1001, submits a write and a read on the
 * inherited descriptor: EXDEV for both, nothing queued (the parent
 * collects nothing, no request object exists) and nothing written.  The
 * parent's own I/O on the descriptor still works.
 */
static void test_forked_child_cannot_submit(void **state)
{
	struct dio_request *got[4], r, *rp = &r;
	int ctx = keep(sys_dio_init(0, DIO_PRIVATE)), fd = open_disk(disk, O_RDWR), h;

	assert_true(ctx >= 0);
	h = want_ok(sys_dio_open(ctx, fd, 0), "OPEN");
	disk_fill(OFF_MM + 64 * KiB, BLK, 0x31);
	assert_int_equal(tl_slab_wait("dio_kreq", 0, 5), 0);
	assert_int_equal(tl_run_as(U_BOB, U_BOB, 0, submit_child,
				   &(struct inherited){ .ctx = ctx, .h = h }), 0);
	assert_int_equal(sys_dio_collect(ctx, got, 0, 4, &(struct timespec){ 1, 0 }), 0);
	assert_int_equal(tl_slab_active("dio_kreq"), 0);
	disk_is(OFF_MM + 64 * KiB, BLK, 0x31, "after the child's write");
	dio_req_prep_read(&r, h, arena + ARENA_BUFS, BLK, OFF_MM + 64 * KiB);
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, BLK);
	assert_int_equal(first_diff(arena + ARENA_BUFS, BLK, 0x31), -1);
}

/*
 * SCM_RIGHTS to a process that forked before the context existed (its
 * memory has nothing to do with the sender's) and runs as uid 1000:
 * SUBMIT, WAIT and COLLECT are EXDEV, and nothing is written into its
 * memory; OPEN, CLOSE, QUERY and STAT work.  The sender reaps its own.
 */
static void test_scm_rights_receiver_cannot_do_io(void **state)
{
	enum { N = 4 };
	struct agent *a = agent(U_ALICE);
	struct dio_request *r = (struct dio_request *)(arena + ARENA_REQS), *rp[N];
	struct timespec to = ms_ts(10000);
	int ctx = keep(sys_dio_init(0, DIO_PRIVATE)), fd = open_disk(disk, O_RDWR);
	int ro = open_disk(disk, O_RDONLY), actx, aro, h;
	struct arep ar;

	assert_true(ctx >= 0);
	h = want_ok(sys_dio_open(ctx, fd, 0), "OPEN");
	disk_fill(OFF_MM + 128 * KiB, N * BLK, 0x42);
	memset(arena, 0x77, ARENA_SZ);
	for (int i = 0; i < N; i++) {
		dio_req_prep_read(&r[i], h, arena + ARENA_BUFS + i * BLK, BLK,
				  OFF_MM + 128 * KiB + i * BLK);
		rp[i] = &r[i];
	}
	assert_int_equal(tl_scsi_debug_ndelay(200000000), 0);
	assert_int_equal(sys_dio_submit(ctx, rp, N), N);
	actx = agent_give(a, ctx);
	aro = agent_give(a, ro);

	ar = ACALL(a, .op = A_COLLECT, .ctx = actx, .min_nr = 1, .nr = N, .fill = 0x5c,
		   .timeout_ms = 2000);
	rep_err(ar, EXDEV, "COLLECT by the receiver");
	assert_int_equal(ar.diff, -1);
	ar = ACALL(a, .op = A_WAIT, .ctx = actx, .nr = N, .aoff = ARENA_REQS, .fill = 0x5c,
		   .timeout_ms = 2000);
	rep_err(ar, EXDEV, "WAIT by the receiver");
	assert_int_equal(ar.diff, -1);
	ar = a_io(a, actx, h, DIO_OP_READ, OFF_MM + 128 * KiB, 0x42);
	rep_err(ar, EXDEV, "read SUBMIT by the receiver");
	ar = a_io(a, actx, h, DIO_OP_WRITE, OFF_MM + 128 * KiB, 0xee);
	rep_err(ar, EXDEV, "write SUBMIT by the receiver");
	/* What any holder of the descriptor may do. */
	rep_ok(ACALL(a, .op = A_QUERY, .ctx = actx, .h = h), "QUERY by the receiver");
	ar = ACALL(a, .op = A_STAT, .ctx = actx);
	rep_ok(ar, "STAT by the receiver");
	assert_int_equal(ar.st.flags, DIO_STAT_PRIVATE);
	assert_int_equal(ar.st.nr_handles, 1);
	ar = ACALL(a, .op = A_OPEN, .ctx = actx, .fd = aro);
	rep_ok(ar, "OPEN by the receiver");
	assert_int_equal(ar.ret, h);
	rep_ok(ACALL(a, .op = A_CLOSEH, .ctx = actx, .h = h), "CLOSE by the receiver");

	/* The sender's requests are all there, for the sender. */
	assert_int_equal(sys_dio_wait(ctx, rp, N, &to), N);
	for (int i = 0; i < N; i++)
		assert_int_equal(r[i].result, BLK);
	assert_int_equal(first_diff(arena + ARENA_BUFS, N * BLK, 0x42), -1);
	disk_is(OFF_MM + 128 * KiB, N * BLK, 0x42, "after the receiver's write");
	assert_int_equal(tl_slab_wait("dio_kreq", 0, 5), 0);
}

/*
 * The submitter (uid 1000) exits with reads in flight while another
 * process (root, which got the descriptor by SCM_RIGHTS) holds it: that
 * process's COLLECT and WAIT are EXDEV and write nothing into its memory
 * at the requests' addresses; closing the descriptor frees everything.
 */
static void test_submitter_exits_with_io_in_flight(void **state)
{
	enum { N = 8 };
	struct agent *s;
	struct dio_request *got[N], *rp[N];
	int fd = open_disk(disk, O_RDWR), sctx, sfd, h, ctx, ret;
	struct arep ar;

	assert_true(tl_dio_caches_drained(10));
	s = agent(U_ALICE);
	sfd = agent_give(s, fd);
	unkeep_close(fd);
	ar = ACALL(s, .op = A_INIT, .flags = DIO_PRIVATE);
	rep_ok(ar, "INIT by uid 1000");
	sctx = (int)ar.ret;
	ar = ACALL(s, .op = A_OPEN, .ctx = sctx, .fd = sfd);
	rep_ok(ar, "OPEN by uid 1000");
	h = (int)ar.ret;
	ctx = agent_take(s, sctx);
	assert_int_equal(tl_scsi_debug_ndelay(500000000), 0);	/* 500 ms */
	ar = ACALL(s, .op = A_SUBMIT_ARENA, .ctx = sctx, .h = h, .nr = N, .len = BLK,
		   .off = OFF_MM, .aoff = ARENA_REQS);
	assert_int_equal(ar.ret, N);
	agent_exit(s);

	/* Our copy of the arena is where the kernel would write results. */
	memset(arena, 0x5c, ARENA_SZ);
	memset(got, 0x5c, sizeof(got));
	ret = sys_dio_collect(ctx, got, 1, N, &(struct timespec){ 3, 0 });
	want_err(ret, EXDEV, "COLLECT of the dead submitter's requests");
	for (int i = 0; i < N; i++)
		rp[i] = (struct dio_request *)(arena + ARENA_REQS) + i;
	ret = sys_dio_wait(ctx, rp, N, &(struct timespec){ 3, 0 });
	want_err(ret, EXDEV, "WAIT for the dead submitter's requests");
	assert_int_equal(first_diff(arena, ARENA_SZ, 0x5c), -1);
	assert_int_equal(first_diff(got, sizeof(got), 0x5c), -1);
	/* Closing the last descriptor frees the requests, handle, context. */
	unkeep_close(ctx);
	assert_true(tl_dio_caches_drained(20));
}

/* ---- 2. Contexts: keys, owners, handles ---- */

static long overflowuid(void)
{
	char *v = tl_sysfs_read("/proc/sys/kernel/overflowuid");
	long u = v ? strtol(v, NULL, 10) : -1;

	free(v);
	return u;
}

/*
 * Keys live in the IPC namespace.  Two root children, each in an IPC
 * namespace of its own, create the same key exclusively: both succeed,
 * and each context has one descriptor (three contexts, the parent's
 * too); in one namespace the second creation is EEXIST.  A new user
 * namespace alone keeps the IPC namespace: the key is visible there and
 * joined (the same kernel uid), and STAT tells the owner as the overflow
 * uid (no mapping); a new user and IPC namespace does not see it.
 */
static void test_keys_live_in_ipc_namespaces(void **state)
{
	const uint64_t key = KEY_BASE + 0x10;
	int ready[2], go[2], p, i;
	long ouid = overflowuid();
	pid_t pid[2], cpid;
	struct dio_stat st;
	char c;

	assert_true(ouid > 0);
	p = keep(sys_dio_init_mode(key, DIO_CREAT | DIO_EXCL, 0666));
	want_ok(p, "INIT in the first IPC namespace");
	want_err(sys_dio_init(key, DIO_CREAT | DIO_EXCL), EEXIST,
		 "INIT CREAT|EXCL again in the same namespace");
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	keep(ready[0]); keep(ready[1]); keep(go[0]); keep(go[1]);
	for (i = 0; i < 2; i++) {
		pid[i] = child_fork();
		if (pid[i] == 0) {
			int fd, ret;

			CHILD_CHECK(unshare(CLONE_NEWIPC) == 0, "unshare(CLONE_NEWIPC)");
			ret = sys_dio_init(key, 0);
			CHILD_CHECK(ret == -1 && errno == ENOENT,
				    "joining from a new IPC namespace returned %d", ret);
			fd = sys_dio_init(key, DIO_CREAT | DIO_EXCL);
			CHILD_CHECK(fd >= 0, "CREAT|EXCL in a new IPC namespace");
			ret = sys_dio_init(key, DIO_CREAT | DIO_EXCL);
			CHILD_CHECK(ret == -1 && errno == EEXIST,
				    "CREAT|EXCL again in that namespace returned %d", ret);
			CHILD_CHECK(write(ready[1], "r", 1) == 1, "pipe");
			CHILD_CHECK(read(go[0], &c, 1) == 1, "pipe");
			/* Both siblings hold theirs now: neither sees the other. */
			CHILD_CHECK(dio_stat(fd, &st) == 0, "STAT");
			CHILD_CHECK(st.key == key && st.nr_descriptors == 1 &&
				    st.cpid == getpid(),
				    "key %#llx, %u descriptors, cpid %d",
				    (unsigned long long)st.key, st.nr_descriptors, st.cpid);
			_exit(0);
		}
	}
	/* Ours closed: a child that died early ends the read. */
	unkeep_close(ready[1]);
	for (i = 0; i < 2; i++)
		if (read(ready[0], &c, 1) != 1)
			break;
	assert_int_equal(write(go[1], "gg", 2), 2);
	child_done(pid[0], "first IPC namespace");
	child_done(pid[1], "second IPC namespace");
	want_ok(dio_stat(p, &st), "STAT of the parent's context");
	assert_int_equal(st.nr_descriptors, 1);
	assert_int_equal(st.uid, 0);

	/* A new user namespace, same IPC namespace: visible, and joined. */
	cpid = child_fork();
	if (cpid == 0) {
		int fd;

		CHILD_CHECK(unshare(CLONE_NEWUSER) == 0, "unshare(CLONE_NEWUSER)");
		fd = sys_dio_init(key, 0);
		CHILD_CHECK(fd >= 0, "joining from a new user namespace");
		CHILD_CHECK(dio_stat(fd, &st) == 0, "STAT");
		CHILD_CHECK(st.nr_descriptors == 2, "%u descriptors", st.nr_descriptors);
		CHILD_CHECK((long)st.uid == ouid && (long)st.cuid == ouid,
			    "owner %u, creator %u, want the overflow uid %ld", st.uid,
			    st.cuid, ouid);
		_exit(0);
	}
	child_done(cpid, "new user namespace");
	/* New user and IPC namespaces: not visible. */
	cpid = child_fork();
	if (cpid == 0) {
		int ret;

		CHILD_CHECK(unshare(CLONE_NEWUSER | CLONE_NEWIPC) == 0, "unshare");
		ret = sys_dio_init(key, 0);
		CHILD_CHECK(ret == -1 && errno == ENOENT, "joining returned %d", ret);
		_exit(0);
	}
	child_done(cpid, "new user and IPC namespaces");
}

static void check_stat(const struct dio_stat *st, unsigned int flags, uint64_t key,
		       unsigned int uid, unsigned int mode, pid_t cpid,
		       unsigned int nd, unsigned int nh)
{
	if (st->flags != flags || st->key != key || st->uid != uid || st->gid != uid ||
	    st->cuid != uid || st->cgid != uid || st->mode != mode ||
	    st->cpid != cpid || st->nr_descriptors != nd || st->nr_handles != nh)
		fail_msg("STAT: flags %#x key %#llx uid %u gid %u cuid %u cgid %u mode %#o "
			 "cpid %d descriptors %u handles %u; want flags %#x key %#llx "
			 "uid/gid %u mode %#o cpid %d descriptors %u handles %u",
			 st->flags, (unsigned long long)st->key, st->uid, st->gid,
			 st->cuid, st->cgid, st->mode, st->cpid, st->nr_descriptors,
			 st->nr_handles, flags, (unsigned long long)key, uid, mode,
			 (int)cpid, nd, nh);
}

/*
 * Key squatting: uid 1000 creates the key a root daemon uses, mode 0666.
 * Root's plain INIT, with or without DIO_CREAT, is EACCES (never a silent
 * join of someone else's context); DIO_FOREIGN joins it, and STAT says
 * whose it is.  DIO_FOREIGN goes with neither DIO_PRIVATE nor DIO_EXCL.
 * The owner's uid joins without DIO_FOREIGN; another uid needs it, and
 * the mode still applies to it (0600: EACCES) while CAP_IPC_OWNER
 * overrides it.
 */
static void test_key_squatting_needs_foreign(void **state)
{
	const uint64_t key = KEY_BASE + 0x20, key2 = KEY_BASE + 0x21;
	struct agent *alice = agent(U_ALICE), *alice2 = agent(U_ALICE), *bob = agent(U_BOB);
	int fd = open_disk(disk, O_RDWR), j, j2, h;
	struct dio_stat st;
	struct arep ar;

	rep_ok(ACALL(alice, .op = A_INIT, .key = key, .flags = DIO_CREAT | DIO_EXCL,
		     .mode = 0666), "uid 1000 creates the key");
	want_err(sys_dio_init(key, DIO_CREAT), EACCES, "root's INIT CREAT of the squatted key");
	want_err(sys_dio_init(key, 0), EACCES, "root's INIT of the squatted key");
	want_err(sys_dio_init_mode(key, DIO_CREAT, 0600), EACCES,
		 "root's INIT CREAT 0600 of the squatted key");
	want_err(sys_dio_init(key, DIO_FOREIGN | DIO_EXCL), EINVAL, "FOREIGN|EXCL");
	want_err(sys_dio_init(key, DIO_FOREIGN | DIO_CREAT | DIO_EXCL), EINVAL,
		 "FOREIGN|CREAT|EXCL");
	want_err(sys_dio_init(0, DIO_FOREIGN | DIO_PRIVATE), EINVAL, "FOREIGN|PRIVATE");
	j = keep(sys_dio_init(key, DIO_FOREIGN));
	want_ok(j, "root's INIT FOREIGN");
	want_ok(dio_stat(j, &st), "STAT");
	check_stat(&st, 0, key, U_ALICE, 0666, alice->pid, 2, 0);
	h = want_ok(sys_dio_open(j, fd, 0), "OPEN through the joined context");
	want_ok(dio_stat(j, &st), "STAT");
	check_stat(&st, 0, key, U_ALICE, 0666, alice->pid, 2, 1);
	assert_int_equal(sys_dio_close(j, h), 0);

	/* Its owner's uid joins as before; another uid needs DIO_FOREIGN. */
	rep_ok(ACALL(alice2, .op = A_INIT, .key = key), "uid 1000 joins its own key");
	rep_err(ACALL(bob, .op = A_INIT, .key = key), EACCES, "uid 1001 joins without FOREIGN");
	ar = ACALL(bob, .op = A_INIT, .key = key, .flags = DIO_FOREIGN);
	rep_ok(ar, "uid 1001 joins a 0666 context with FOREIGN");
	ar = ACALL(bob, .op = A_STAT, .ctx = (int)ar.ret);
	rep_ok(ar, "STAT by uid 1001");
	check_stat(&ar.st, 0, key, U_ALICE, 0666, alice->pid, 4, 0);

	/* Mode 0600: DIO_FOREIGN is no key to it; CAP_IPC_OWNER is. */
	rep_ok(ACALL(alice, .op = A_INIT, .key = key2, .flags = DIO_CREAT | DIO_EXCL,
		     .mode = 0600), "uid 1000 creates a 0600 key");
	rep_err(ACALL(bob, .op = A_INIT, .key = key2, .flags = DIO_FOREIGN), EACCES,
		"uid 1001 joins a 0600 context with FOREIGN");
	j2 = keep(sys_dio_init(key2, DIO_FOREIGN));
	want_ok(j2, "root joins a 0600 context with FOREIGN");
	want_ok(dio_stat(j2, &st), "STAT");
	check_stat(&st, 0, key2, U_ALICE, 0600, alice->pid, 2, 0);
}

/*
 * DIO_IOC_STAT on a private context, and its argument rules: only size
 * and the reserved fields are read (the output fields may hold anything);
 * non-zero reserved is EINVAL, a size below DIO_STAT_SIZE_VER0 EINVAL, an
 * unknown non-zero tail or a size above the page E2BIG.
 */
static void test_stat_private_and_bad_args(void **state)
{
	int ctx = keep(sys_dio_init(0, DIO_PRIVATE)), ctl;
	struct {
		struct dio_stat st;
		uint64_t tail[2];
	} big;
	struct dio_stat st;

	assert_true(ctx >= 0);
	memset(&st, 0xff, sizeof(st));
	st.size = sizeof(st);
	memset(st.reserved, 0, sizeof(st.reserved));
	want_ok(ioctl(ctx, DIO_IOC_STAT, &st), "STAT with garbage in its output fields");
	check_stat(&st, DIO_STAT_PRIVATE, 0, 0, st.mode, getpid(), 1, 0);

	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	st.reserved[0] = 1;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_STAT, &st), -EINVAL);
	st.reserved[0] = 0;
	st.reserved[3] = 1ULL << 63;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_STAT, &st), -EINVAL);
	st.reserved[3] = 0;
	st.size = DIO_STAT_SIZE_VER0 - 8;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_STAT, &st), -EINVAL);
	st.size = 0;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_STAT, &st), -EINVAL);

	memset(&big, 0, sizeof(big));
	big.st.size = sizeof(big);
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_STAT, &big), 0);
	assert_int_equal(big.st.nr_descriptors, 1);
	assert_int_equal(big.tail[0] | big.tail[1], 0);	/* beyond its struct */
	big.st.size = sizeof(big);	/* the reply may have set the kernel's */
	big.tail[1] = 1;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_STAT, &big), -E2BIG);
	big.tail[1] = 0;
	big.st.size = 4097;
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_STAT, &big), -E2BIG);
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_STAT, NULL), -EFAULT);
	/* A context command: not on the control device. */
	ctl = keep(open(CTL_PATH, O_RDWR | O_CLOEXEC));
	assert_true(ctl >= 0);
	st.size = sizeof(st);
	assert_int_equal(tl_ioctl(ctl, DIO_IOC_STAT, &st), -ENOTTY);
}

/*
 * A handle's access follows the descriptors that hold it open.  Root's
 * context (mode 0666); uid 2000 opens the disk through an O_RDWR
 * descriptor, uid 1000 the same device through an O_RDONLY one (both
 * given by root): one handle, and uid 1000's writes go through while the
 * writer holds it.  When the writer closes its reference, writes through
 * uid 1000's descriptor, or root's, which never opened it, are EBADF and
 * reads work; the writer opens again and writes work; the writer's
 * process exits without closing and writes are EBADF again.
 */
static void test_handle_access_follows_openers(void **state)
{
	const uint64_t key = KEY_BASE + 0x30, off = OFF_ACCESS;
	struct agent *wr = agent(U_EVE), *rd = agent(U_ALICE);
	int ctx = keep(sys_dio_init_mode(key, DIO_CREAT | DIO_EXCL, 0666));
	int rw = open_disk(disk, O_RDWR), ro = open_disk(disk, O_RDONLY);
	int wctx, rctx, wfd, rfd, h;
	struct dio_request r, *rp = &r;
	uint8_t *buf = tl_alloc(BLK, 0x99);
	struct arep ar;

	assert_true(ctx >= 0 && buf);
	disk_fill(off, BLK, 0x10);
	wfd = agent_give(wr, rw);
	rfd = agent_give(rd, ro);
	ar = ACALL(wr, .op = A_INIT, .key = key, .flags = DIO_FOREIGN);
	rep_ok(ar, "uid 2000 joins");
	wctx = (int)ar.ret;
	ar = ACALL(rd, .op = A_INIT, .key = key, .flags = DIO_FOREIGN);
	rep_ok(ar, "uid 1000 joins");
	rctx = (int)ar.ret;
	ar = ACALL(wr, .op = A_OPEN, .ctx = wctx, .fd = wfd);
	rep_ok(ar, "OPEN through O_RDWR");
	h = (int)ar.ret;
	ar = ACALL(rd, .op = A_OPEN, .ctx = rctx, .fd = rfd);
	rep_ok(ar, "OPEN through O_RDONLY");
	assert_int_equal(ar.ret, h);

	rep_io_ok(a_io(rd, rctx, h, DIO_OP_WRITE, off, 0x11), BLK,
		  "write while the writer holds the handle");
	disk_is(off, BLK, 0x11, "the write while the writer holds it");

	rep_ok(ACALL(wr, .op = A_CLOSEH, .ctx = wctx, .h = h), "the writer's CLOSE");
	rep_err(a_io(rd, rctx, h, DIO_OP_WRITE, off, 0x22), EBADF,
		"write after the writer closed");
	dio_req_prep_write(&r, h, buf, BLK, off);
	want_err(sys_dio_submit(ctx, &rp, 1), EBADF,
		 "write through a descriptor that never opened the handle");
	ar = a_io(rd, rctx, h, DIO_OP_READ, off, 0x11);
	rep_io_ok(ar, BLK, "read after the writer closed");
	assert_int_equal(ar.diff, -1);
	disk_is(off, BLK, 0x11, "after the refused writes");

	ar = ACALL(wr, .op = A_OPEN, .ctx = wctx, .fd = wfd);
	rep_ok(ar, "the writer opens again");
	assert_int_equal(ar.ret, h);
	rep_io_ok(a_io(rd, rctx, h, DIO_OP_WRITE, off, 0x33), BLK,
		  "write after the writer opened again");
	disk_is(off, BLK, 0x33, "the write after the writer opened again");

	agent_exit(wr);
	rep_err(a_io(rd, rctx, h, DIO_OP_WRITE, off, 0x44), EBADF,
		"write after the writer's process exited");
	want_err(sys_dio_submit(ctx, &rp, 1), EBADF,
		 "root's write after the writer's process exited");
	ar = a_io(rd, rctx, h, DIO_OP_READ, off, 0x33);
	rep_io_ok(ar, BLK, "read after the writer's process exited");
	assert_int_equal(ar.diff, -1);
	disk_is(off, BLK, 0x33, "after the writer's process exited");
	rep_ok(ACALL(rd, .op = A_CLOSEH, .ctx = rctx, .h = h), "the reader's CLOSE");
	free(buf);
}

/*
 * An OPEN that fails after it would have widened the handle leaves it as
 * it was: A holds the disk read-only; B's OPEN through an O_RDWR
 * descriptor, with a struct it can read but not write back (EFAULT),
 * neither makes the handle writable nor leaves B a reference.
 */
static void test_failed_open_does_not_widen(void **state)
{
	const uint64_t key = KEY_BASE + 0x40;
	int a = keep(sys_dio_init(key, DIO_CREAT | DIO_EXCL)), b = keep(sys_dio_init(key, 0));
	int ro = open_disk(disk, O_RDONLY), rw = open_disk(disk, O_RDWR), h;
	struct dio_request r, *rp = &r;
	uint8_t *buf = tl_alloc(BLK, 0x99);
	struct dio_query q;
	struct dio_open *o;

	assert_true(a >= 0 && b >= 0 && buf);
	h = want_ok(sys_dio_open(a, ro, 0), "A's read-only OPEN");
	dio_req_prep_write(&r, h, buf, BLK, OFF_ACCESS + BLK);
	want_err(sys_dio_submit(a, &rp, 1), EBADF, "write through the read-only handle");
	o = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(o != MAP_FAILED);
	o->size = sizeof(*o);
	o->fd = rw;
	assert_int_equal(mprotect(o, 4096, PROT_READ), 0);
	assert_int_equal(tl_ioctl(b, DIO_IOC_OPEN, o), -EFAULT);
	want_err(sys_dio_submit(a, &rp, 1), EBADF, "A's write after B's failed OPEN");
	want_err(sys_dio_submit(b, &rp, 1), EBADF, "B's write after its failed OPEN");
	want_err(sys_dio_close(b, h), EBADF, "B's CLOSE after its failed OPEN");
	assert_int_equal(sys_dio_close(a, h), 0);
	/* A's was the only reference: revoked. */
	want_err(sys_dio_query(a, h, &q), EBADF, "QUERY after A's CLOSE");
	munmap(o, 4096);
	free(buf);
}

/* userfaultfd state, so that a failed test never leaves a thread blocked. */
static struct {
	int uffd;
	void *page;
	pthread_t t1, t2;
	bool t1_on, t2_on;
} uf = { .uffd = -1 };

struct opener {
	int ctx;
	void *arg;		/* the struct dio_open (t1) */
	int fd;			/* the other device (t2) */
	int ret, err;
	int h, qret, cret;
	volatile int done;
	uint64_t ns;
};

static struct opener o1, o2;

static void *blocked_open(void *arg)
{
	struct opener *o = arg;

	o->ret = ioctl(o->ctx, DIO_IOC_OPEN, o->arg);
	o->err = errno;
	o->done = 1;
	return NULL;
}

static void *other_device(void *arg)
{
	struct opener *o = arg;
	struct dio_query q;
	uint64_t t0 = tl_now_ns();

	o->h = sys_dio_open(o->ctx, o->fd, 0);
	o->err = errno;
	o->qret = o->h >= 1 ? sys_dio_query(o->ctx, o->h, &q) : -1;
	o->cret = o->h >= 1 ? sys_dio_close(o->ctx, o->h) : -1;
	o->ns = tl_now_ns() - t0;
	o->done = 1;
	return NULL;
}

static void uffd_unprotect(void)
{
	struct uffdio_writeprotect wp = {
		.range = { (uintptr_t)uf.page, 4096 }, .mode = 0,
	};

	if (uf.uffd >= 0)
		ioctl(uf.uffd, UFFDIO_WRITEPROTECT, &wp);
}

static void uffd_release(void)
{
	uffd_unprotect();
	if (uf.t1_on)
		pthread_join(uf.t1, NULL);
	if (uf.t2_on)
		pthread_join(uf.t2, NULL);
	uf.t1_on = uf.t2_on = false;
	if (uf.uffd >= 0)
		close(uf.uffd);
	uf.uffd = -1;
	if (uf.page)
		munmap(uf.page, 4096);
	uf.page = NULL;
}

/*
 * No user memory is touched under the context's lock: a thread's OPEN
 * whose struct lies in a page write-protected with userfaultfd blocks in
 * the fault when it writes the handle back; meanwhile another thread's
 * OPEN, QUERY and CLOSE of another device in the same context complete
 * within 10 s (x tl_slow_factor()): they take milliseconds, and would
 * otherwise never end while the fault stays unresolved, so the bound only
 * has to be long enough (it was 2 s).  Resolved, the first OPEN returns
 * its handle.
 */
static void test_no_user_memory_under_context_lock(void **state)
{
	int ctx = keep(sys_dio_init(0, DIO_PRIVATE)), fd1 = open_disk(disk, O_RDWR);
	int fd2 = open_disk(nvme1, O_RDWR);
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct uffdio_writeprotect wp;
	struct uffd_msg msg;
	struct pollfd pfd;
	struct dio_open *o;
	uint64_t t0;

	assert_true(ctx >= 0);
	uf.uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uf.uffd < 0)
		fail_msg("userfaultfd: %s (the kernel needs CONFIG_USERFAULTFD)",
			 strerror(errno));
	if (ioctl(uf.uffd, UFFDIO_API, &api))
		fail_msg("UFFDIO_API: %s", strerror(errno));
	uf.page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(uf.page != MAP_FAILED);
	o = uf.page;
	memset(o, 0, sizeof(*o));		/* populated: present and writable */
	o->size = sizeof(*o);
	o->fd = fd1;
	reg = (struct uffdio_register){ .range = { (uintptr_t)uf.page, 4096 },
					.mode = UFFDIO_REGISTER_MODE_WP };
	if (ioctl(uf.uffd, UFFDIO_REGISTER, &reg))
		fail_msg("UFFDIO_REGISTER (write-protect mode): %s", strerror(errno));
	if (!(reg.ioctls & (1ULL << _UFFDIO_WRITEPROTECT)))
		fail_msg("no UFFDIO_WRITEPROTECT on anonymous memory");
	wp = (struct uffdio_writeprotect){ .range = { (uintptr_t)uf.page, 4096 },
					   .mode = UFFDIO_WRITEPROTECT_MODE_WP };
	if (ioctl(uf.uffd, UFFDIO_WRITEPROTECT, &wp))
		fail_msg("UFFDIO_WRITEPROTECT: %s", strerror(errno));

	o1 = (struct opener){ .ctx = ctx, .arg = o };
	assert_int_equal(pthread_create(&uf.t1, NULL, blocked_open, &o1), 0);
	uf.t1_on = true;
	pfd = (struct pollfd){ .fd = uf.uffd, .events = POLLIN };
	if (poll(&pfd, 1, 10000) != 1)
		fail_msg("OPEN never wrote its handle back (no write-protect fault in 10 s; "
			 "OPEN returned %d/%s)", o1.done ? o1.ret : 0,
			 o1.done ? en(o1.err) : "still running");
	assert_int_equal(read(uf.uffd, &msg, sizeof(msg)), sizeof(msg));
	assert_int_equal(msg.event, UFFD_EVENT_PAGEFAULT);
	assert_true(msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP);
	assert_true(msg.arg.pagefault.address - (uintptr_t)uf.page < 4096);
	assert_false(o1.done);

	/* The context is not wedged: another device, same context. */
	o2 = (struct opener){ .ctx = ctx, .fd = fd2 };
	assert_int_equal(pthread_create(&uf.t2, NULL, other_device, &o2), 0);
	uf.t2_on = true;
	t0 = tl_now_ns();
	while (!o2.done && tl_now_ns() - t0 < 10000000000ULL * tl_slow_factor())
		usleep(10000);
	if (!o2.done) {
		uffd_release();		/* lets both threads finish */
		fail_msg("OPEN/QUERY/CLOSE of another device waited for a blocked "
			 "OPEN's user memory access (it took %.1f s once released)",
			 o2.ns / 1e9);
	}
	assert_false(o1.done);
	if (o2.h < 1 || o2.qret || o2.cret)
		fail_msg("other device: OPEN %d/%s, QUERY %d, CLOSE %d", o2.h, en(o2.err),
			 o2.qret, o2.cret);
	/* Resolve the fault: the first OPEN completes with its handle. */
	uffd_unprotect();
	pthread_join(uf.t1, NULL);
	uf.t1_on = false;
	pthread_join(uf.t2, NULL);
	uf.t2_on = false;
	if (o1.ret < 1)
		fail_msg("the blocked OPEN returned %d/%s", o1.ret, en(o1.err));
	assert_int_equal(o->handle, o1.ret);
	assert_int_equal(sys_dio_close(ctx, o1.ret), 0);
	uffd_release();
}

/* ---- 3. Writes obey the kernel's rules ---- */

/*
 * A read-only device (BLKROSET, what blockdev --setro does): OPEN through
 * an O_RDWR or O_WRONLY descriptor is EROFS, claimed or not; O_RDONLY
 * works, and reads.  Read-write again, the O_RDWR descriptor widens the
 * handle and writes work.  The OPENs run as uid 1000 with descriptors
 * root opened.
 */
static void test_readonly_device_open(void **state)
{
	struct agent *a = agent(U_ALICE);
	int rw, wo, ro, arw, awo, aro, actx, h;
	struct arep ar;

	disk_fill(OFF_RO, BLK, 0x51);
	set_ro(1);
	/* The block layer lets root open it for writing; writes are EPERM. */
	rw = open_disk(disk, O_RDWR | O_DIRECT);
	wo = open_disk(disk, O_WRONLY | O_DIRECT);
	ro = open_disk(disk, O_RDONLY | O_DIRECT);
	arw = agent_give(a, rw);
	awo = agent_give(a, wo);
	aro = agent_give(a, ro);
	ar = ACALL(a, .op = A_INIT, .flags = DIO_PRIVATE);
	rep_ok(ar, "INIT");
	actx = (int)ar.ret;
	rep_err(ACALL(a, .op = A_PWRITE, .fd = arw, .off = OFF_RO, .len = BLK, .fill = 0x52),
		EPERM, "pwrite(2) on the read-only device (the kernel's own rule)");
	rep_err(ACALL(a, .op = A_OPEN, .ctx = actx, .fd = arw), EROFS, "OPEN O_RDWR");
	rep_err(ACALL(a, .op = A_OPEN, .ctx = actx, .fd = awo), EROFS, "OPEN O_WRONLY");
	rep_err(ACALL(a, .op = A_OPEN, .ctx = actx, .fd = arw, .flags = DIO_OPEN_NOCLAIM),
		EROFS, "OPEN O_RDWR NOCLAIM");
	ar = ACALL(a, .op = A_OPEN, .ctx = actx, .fd = aro);
	rep_ok(ar, "OPEN O_RDONLY");
	h = (int)ar.ret;
	ar = a_io(a, actx, h, DIO_OP_READ, OFF_RO, 0x51);
	rep_io_ok(ar, BLK, "read");
	assert_int_equal(ar.diff, -1);
	rep_err(a_io(a, actx, h, DIO_OP_WRITE, OFF_RO, 0x53), EBADF, "write, read-only handle");
	set_ro(0);
	ar = ACALL(a, .op = A_OPEN, .ctx = actx, .fd = arw);
	rep_ok(ar, "OPEN O_RDWR, the device read-write again");
	assert_int_equal(ar.ret, h);
	rep_io_ok(a_io(a, actx, h, DIO_OP_WRITE, OFF_RO, 0x54), BLK, "write");
	disk_is(OFF_RO, BLK, 0x54, "the write, read-write again");
}

/*
 * Made read-only after OPEN (the handle is writable): uid 1000's write
 * SUBMIT is EPERM, as its pwrite(2) is; nothing is queued and nothing
 * written; reads work.  Read-write again: writes work.
 */
static void test_readonly_after_open(void **state)
{
	struct agent *a = agent(U_ALICE);
	int rw = open_disk(disk, O_RDWR | O_DIRECT), arw, actx, h;
	struct arep ar;

	disk_fill(OFF_RO + BLK, BLK, 0x5a);
	arw = agent_give(a, rw);
	ar = ACALL(a, .op = A_INIT, .flags = DIO_PRIVATE);
	rep_ok(ar, "INIT");
	actx = (int)ar.ret;
	ar = ACALL(a, .op = A_OPEN, .ctx = actx, .fd = arw);
	rep_ok(ar, "OPEN O_RDWR");
	h = (int)ar.ret;
	rep_io_ok(a_io(a, actx, h, DIO_OP_WRITE, OFF_RO + BLK, 0x61), BLK, "write");
	set_ro(1);
	rep_err(a_io(a, actx, h, DIO_OP_WRITE, OFF_RO + BLK, 0x62), EPERM,
		"write SUBMIT, the device now read-only");
	assert_int_equal(tl_slab_active("dio_kreq"), 0);
	rep_err(ACALL(a, .op = A_PWRITE, .fd = arw, .off = OFF_RO + BLK, .len = BLK,
		      .fill = 0x63), EPERM, "pwrite(2), the device now read-only");
	ar = a_io(a, actx, h, DIO_OP_READ, OFF_RO + BLK, 0x61);
	rep_io_ok(ar, BLK, "read, the device read-only");
	assert_int_equal(ar.diff, -1);
	disk_is(OFF_RO + BLK, BLK, 0x61, "after the refused writes");
	set_ro(0);
	rep_io_ok(a_io(a, actx, h, DIO_OP_WRITE, OFF_RO + BLK, 0x64), BLK,
		  "write, read-write again");
	disk_is(OFF_RO + BLK, BLK, 0x64, "the write, read-write again");
}

/* The mid-run flip: a writer thread against a thread that sets it read-only. */
#define FLIP_MAX	512
static struct flip {
	int ctx, h;
	uint8_t *buf;
	int n;				/* writes tried */
	int64_t res[FLIP_MAX];		/* result, or -errno of SUBMIT */
	uint64_t t_submit[FLIP_MAX];	/* when SUBMIT was called */
	volatile uint64_t t_flip;	/* after BLKROSET returned */
	volatile int stop;
} fl;

/*
 * The writer stops 20 writes after the flip.  It must not run out of
 * writes before the flip comes: the flipper sleeps in 1 ms steps until
 * the 16th write, and a writer at full speed (fractions of a millisecond
 * a write) on another vCPU could otherwise reach FLIP_MAX first when the
 * flipper's vCPU is descheduled.  Past FLIP_MAX - 64 writes it waits for
 * the flip instead (up to 30 s, x tl_slow_factor(): a hang guard).
 */
static void *flip_writer(void *arg)
{
	int after = 0;

	for (int i = 0; i < FLIP_MAX && !fl.stop; i++) {
		struct dio_request r, *rp = &r;
		uint8_t *b = fl.buf + (size_t)i * BLK;

		for (int w = 0; i == FLIP_MAX - 64 && !fl.t_flip &&
		     w < 30000 * tl_slow_factor(); w++)
			usleep(1000);
		tl_fill(b, BLK, 7000 + i);
		dio_req_prep_write(&r, fl.h, b, BLK, OFF_FLIP + (uint64_t)i * BLK);
		fl.t_submit[i] = tl_now_ns();
		if (sys_dio_submit(fl.ctx, &rp, 1) == 1) {
			fl.res[i] = sys_dio_wait(fl.ctx, &rp, 1, NULL) == 1 ? r.result : -ETIME;
		} else {
			fl.res[i] = -errno;
		}
		fl.n = i + 1;
		if (fl.t_flip && fl.t_submit[i] > fl.t_flip && ++after >= 20)
			break;
	}
	return NULL;
}

static void *flipper(void *arg)
{
	int one = 1;

	while (fl.n < 16 && !fl.stop)
		usleep(1000);
	if (ioctl(dfd, BLKROSET, &one) == 0) {
		ro_set = true;
		fl.t_flip = tl_now_ns();
	}
	return NULL;
}

/*
 * Read-only mid-run: while a thread writes block after block, another
 * sets the device read-only.  A write submitted after the flip fails with
 * EPERM at SUBMIT; one submitted before completes; once refused, never
 * again accepted.  The blocks of refused writes hold what they held.
 */
static void test_readonly_flip_midrun(void **state)
{
	int ctx = keep(sys_dio_init(0, DIO_PRIVATE)), fd = open_disk(disk, O_RDWR);
	uint8_t *want = tl_alloc(BLK, 0), *got = tl_alloc(FLIP_MAX * BLK, 0);
	int ok = 0, refused = 0, first_refused = -1;
	pthread_t tw, tf;

	assert_true(ctx >= 0 && want && got);
	memset(&fl, 0, sizeof(fl));
	fl.ctx = ctx;
	fl.h = want_ok(sys_dio_open(ctx, fd, 0), "OPEN");
	fl.buf = tl_alloc(FLIP_MAX * BLK, 0);
	assert_non_null(fl.buf);
	disk_fill(OFF_FLIP, FLIP_MAX * BLK, 0x5b);
	assert_int_equal(pthread_create(&tw, NULL, flip_writer, NULL), 0);
	assert_int_equal(pthread_create(&tf, NULL, flipper, NULL), 0);
	pthread_join(tf, NULL);
	pthread_join(tw, NULL);
	assert_true(fl.t_flip != 0);
	disk_read(got, FLIP_MAX * BLK, OFF_FLIP);
	for (int i = 0; i < fl.n; i++) {
		bool after = fl.t_submit[i] > fl.t_flip;

		if (fl.res[i] == BLK) {
			if (after || first_refused >= 0)
				fail_msg("write %d (%s the flip) was accepted%s", i,
					 after ? "submitted after" : "before",
					 first_refused >= 0 ? " after a refused one" : "");
			tl_fill(want, BLK, 7000 + i);
			if (memcmp(got + (size_t)i * BLK, want, BLK))
				fail_msg("write %d completed but the disk does not hold it", i);
			ok++;
		} else if (fl.res[i] == -EPERM) {
			if (first_refused < 0)
				first_refused = i;
			if (first_diff(got + (size_t)i * BLK, BLK, 0x5b) >= 0)
				fail_msg("write %d was refused but the disk changed", i);
			refused++;
		} else {
			fail_msg("write %d (%s the flip): %lld, want %d or -EPERM", i,
				 after ? "after" : "before", (long long)fl.res[i], BLK);
		}
	}
	print_message("# %d writes completed, %d refused (EPERM) after the flip\n", ok,
		      refused);
	assert_true(ok >= 16);
	assert_true(refused >= 20);
	free(fl.buf);
	free(want);
	free(got);
}

/*
 * An active swap device (mkswap, swapon(2)): OPEN with a claim through
 * O_RDONLY is EBUSY (swap claims the device); through O_RDWR, claimed or
 * not, ETXTBSY; unclaimed through O_RDONLY it works, reads return the
 * swap header, writes are EBADF.  A
 * writable handle from before swapon: its write SUBMIT is ETXTBSY, as
 * pwrite(2) is.  swapoff, and the swap signature is intact.
 */
static void test_swap_device(void **state)
{
	int ctx = keep(sys_dio_init(0, DIO_PRIVATE)), rw = open_disk(disk, O_RDWR | O_DIRECT);
	int ro = open_disk(disk, O_RDONLY), old, h, claimed_rw, claimed_rw_err;
	uint8_t *hdr = tl_alloc(BLK, 0), *b = tl_alloc(BLK, 0xee), *after = tl_alloc(BLK, 0);
	struct dio_request r, *rp = &r;

	assert_true(ctx >= 0 && hdr && b && after);
	if (tl_sh("mkswap -f %s >/dev/null 2>&1", disk))
		fail_msg("mkswap %s failed (util-linux's mkswap in the host root?)", disk);
	disk_read(hdr, BLK, 0);
	assert_memory_equal(hdr + BLK - 10, "SWAPSPACE2", 10);
	/* A writable, unclaimed handle from before swapon. */
	old = want_ok(sys_dio_open(ctx, rw, DIO_OPEN_NOCLAIM), "OPEN NOCLAIM before swapon");
	if (swapon(disk, 0))
		fail_msg("swapon %s: %s", disk, strerror(errno));
	swap_on = true;

	want_err(pwrite(rw, b, BLK, 0), ETXTBSY, "pwrite(2) on the swap device");
	dio_req_prep_write(&r, old, b, BLK, 0);
	want_err(sys_dio_submit(ctx, &rp, 1), ETXTBSY, "write SUBMIT, the device now swap");
	assert_int_equal(sys_dio_close(ctx, old), 0);

	want_err(sys_dio_open(ctx, ro, 0), EBUSY, "claimed OPEN O_RDONLY");
	want_err(sys_dio_open(ctx, rw, DIO_OPEN_NOCLAIM), ETXTBSY, "OPEN O_RDWR NOCLAIM");
	h = want_ok(sys_dio_open(ctx, ro, DIO_OPEN_NOCLAIM), "OPEN O_RDONLY NOCLAIM");
	memset(after, 0, BLK);
	dio_req_prep_read(&r, h, after, BLK, 0);
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, BLK);
	assert_memory_equal(after, hdr, BLK);
	dio_req_prep_write(&r, h, b, BLK, 0);
	want_err(sys_dio_submit(ctx, &rp, 1), EBADF, "write through the read-only handle");
	assert_int_equal(sys_dio_close(ctx, h), 0);
	/*
	 * Claimed through a writable descriptor: both rules apply, and the
	 * write policy is checked first (as open(2) of an active swap file
	 * for writing is ETXTBSY), before the claim.  Checked last, after the
	 * signature.
	 */
	claimed_rw = sys_dio_open(ctx, rw, 0);
	claimed_rw_err = errno;

	assert_int_equal(swapoff(disk), 0);
	swap_on = false;
	disk_read(after, BLK, 0);
	assert_memory_equal(after, hdr, BLK);
	free(hdr);
	free(b);
	free(after);
	errno = claimed_rw_err;
	want_err(claimed_rw, ETXTBSY, "claimed OPEN O_RDWR of the swap device");
}

/* ---- AppArmor ---- */

#define AA_RW		"dio_batch_test_rw"
#define AA_NOWRITE	"dio_batch_test_nowrite"
#define AA_PROFILE	"/tmp/dio_batch_test.aa"
static bool aa_loaded, sfs_mounted;

static void aa_unload(void)
{
	if (aa_loaded && tl_sh("apparmor_parser -K -R %s >/dev/null 2>&1", AA_PROFILE) == 0)
		aa_loaded = false;
	if (sfs_mounted && umount("/sys/kernel/security") == 0)
		sfs_mounted = false;
}

/* Load the two profiles; every failure says why. */
static void aa_load(void)
{
	char *en_ = tl_sysfs_read("/sys/module/apparmor/parameters/enabled");
	bool on = en_ && en_[0] == 'Y';
	FILE *f;

	free(en_);
	if (!on)
		fail_msg("AppArmor is not enabled in this kernel "
			 "(/sys/module/apparmor/parameters/enabled)");
	if (access("/sys/kernel/security/apparmor", F_OK)) {
		if (mount("securityfs", "/sys/kernel/security", "securityfs", 0, NULL))
			fail_msg("mount securityfs: %s", strerror(errno));
		sfs_mounted = true;
		if (access("/sys/kernel/security/apparmor", F_OK))
			fail_msg("no /sys/kernel/security/apparmor after mounting securityfs");
	}
	if (access("/sbin/apparmor_parser", X_OK) && access("/usr/sbin/apparmor_parser", X_OK))
		fail_msg("apparmor_parser is missing (Debian package apparmor, "
			 "scripts/deps.sh installs it on the host)");
	f = fopen(AA_PROFILE, "w");
	assert_non_null(f);
	/*
	 * Two profiles that allow everything this process does.  The first
	 * may change to the second, which may not write the disk's node.
	 * AppArmor revalidates a file opened by a confined task when the task
	 * changes profile (a file opened unconfined never is), so the disk
	 * is opened under the first.
	 */
	fprintf(f,
		"profile %s {\n"
		"  file,\n  capability,\n  network,\n  unix,\n  signal,\n  ptrace,\n"
		"  mount,\n  umount,\n  pivot_root,\n"
		"  change_profile -> %s,\n"
		"}\n"
		"profile %s {\n"
		"  file,\n  capability,\n  network,\n  unix,\n  signal,\n  ptrace,\n"
		"  mount,\n  umount,\n  pivot_root,\n"
		"  deny %s w,\n"
		"}\n", AA_RW, AA_NOWRITE, AA_NOWRITE, disk);
	fclose(f);
	if (tl_sh("apparmor_parser -K -r %s", AA_PROFILE))
		fail_msg("apparmor_parser -r %s failed", AA_PROFILE);
	aa_loaded = true;
}

/* change_profile for this thread (what aa_change_profile() writes). */
static int aa_change(const char *name)
{
	char cmd[128];
	int fd = open("/proc/thread-self/attr/apparmor/current", O_WRONLY | O_CLOEXEC), n;

	if (fd < 0)
		fd = open("/proc/thread-self/attr/current", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = snprintf(cmd, sizeof(cmd), "changeprofile %s", name);
	n = write(fd, cmd, n) == n ? 0 : -1;
	close(fd);
	return n;
}

/*
 * The LSM is asked for every SUBMIT: a process opens the disk and its
 * handle under a profile that may write it, then changes to one that may
 * not.  pwrite(2) on its descriptor is now EACCES (the kernel's own path),
 * and so is a write SUBMIT, before any I/O; reads work both ways.
 */
static void test_lsm_denies_write_submit(void **state)
{
	pid_t pid;

	aa_load();
	disk_fill(OFF_LSM, 2 * BLK, 0x10);
	pid = child_fork();
	if (pid == 0) {
		struct dio_request r, *rp = &r;
		uint8_t *b = tl_alloc(BLK, 0x21);
		int fd, ctx, h, ret;

		CHILD_CHECK(aa_change(AA_RW) == 0, "change_profile %s", AA_RW);
		fd = open(disk, O_RDWR | O_DIRECT);
		CHILD_CHECK(fd >= 0, "open %s under %s", disk, AA_RW);
		ctx = sys_dio_init(0, DIO_PRIVATE);
		CHILD_CHECK(ctx >= 0, "INIT");
		h = sys_dio_open(ctx, fd, 0);
		CHILD_CHECK(h >= 1, "OPEN");
		dio_req_prep_write(&r, h, b, BLK, OFF_LSM);
		ret = sys_dio_submit(ctx, &rp, 1);
		CHILD_CHECK(ret == 1 && sys_dio_wait(ctx, &rp, 1, NULL) == 1 &&
			    r.result == BLK, "write under %s: %d, result %lld", AA_RW,
			    ret, (long long)r.result);
		memset(b, 0x22, BLK);
		CHILD_CHECK(pwrite(fd, b, BLK, OFF_LSM + BLK) == BLK, "pwrite under %s",
			    AA_RW);

		CHILD_CHECK(aa_change(AA_NOWRITE) == 0, "change_profile %s", AA_NOWRITE);
		memset(b, 0x33, BLK);
		ret = pwrite(fd, b, BLK, OFF_LSM + BLK);
		CHILD_CHECK(ret == -1 && errno == EACCES,
			    "pwrite(2) under %s returned %d (AppArmor did not deny it: "
			    "the set-up is broken)", AA_NOWRITE, ret);
		memset(b, 0x44, BLK);
		dio_req_prep_write(&r, h, b, BLK, OFF_LSM);
		ret = sys_dio_submit(ctx, &rp, 1);
		CHILD_CHECK(ret == -1 && errno == EACCES, "write SUBMIT under %s returned %d",
			    AA_NOWRITE, ret);
		dio_req_prep_read(&r, h, b, BLK, OFF_LSM);
		ret = sys_dio_submit(ctx, &rp, 1);
		CHILD_CHECK(ret == 1 && sys_dio_wait(ctx, &rp, 1, NULL) == 1 &&
			    r.result == BLK && first_diff(b, BLK, 0x21) < 0,
			    "read SUBMIT under %s: %d, result %lld", AA_NOWRITE, ret,
			    (long long)r.result);
		CHILD_CHECK(pread(fd, b, BLK, OFF_LSM + BLK) == BLK &&
			    first_diff(b, BLK, 0x22) < 0, "pread under %s", AA_NOWRITE);
		_exit(0);
	}
	child_done(pid, "AppArmor");
	disk_is(OFF_LSM, BLK, 0x21, "after the denied write SUBMIT");
	disk_is(OFF_LSM + BLK, BLK, 0x22, "after the denied pwrite");
	aa_unload();
	assert_false(aa_loaded);
}

/* ---- fsnotify ---- */

/*
 * The union of the events of the next 300 ms (2 s for the first).  The
 * events the tests expect are queued before this is called (by pwrite,
 * pread, WAIT and close() themselves, in this process), so no verdict
 * waits for a late one: the times only bound how long a test looks for
 * an event that should not be there.
 */
static uint32_t inotify_events(int in)
{
	union {
		struct inotify_event ev;
		char b[4096];
	} u;
	struct pollfd p = { .fd = in, .events = POLLIN };
	uint32_t mask = 0;
	int timeout = 2000;

	while (poll(&p, 1, timeout) == 1) {
		ssize_t n = read(in, u.b, sizeof(u.b));

		for (ssize_t o = 0; o < n;) {
			struct inotify_event *e = (struct inotify_event *)(u.b + o);

			mask |= e->mask;
			o += sizeof(*e) + e->len;
		}
		timeout = 300;
	}
	return mask;
}

/*
 * A watch on the disk's node sees IN_MODIFY after a write through
 * dio_batch and IN_ACCESS after a read, as after pwrite and pread; a
 * refused write raises nothing.
 */
static void test_fsnotify_events(void **state)
{
	int in = keep(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
	int ctx = keep(sys_dio_init(0, DIO_PRIVATE)), fd = open_disk(disk, O_RDWR | O_DIRECT);
	int ro = open_disk(disk, O_RDONLY), h, hro, other;
	uint8_t *b = tl_alloc(2 * BLK, 0x71);
	struct dio_request r, *rp = &r;
	uint32_t m;

	assert_true(in >= 0 && ctx >= 0 && b);
	assert_true(inotify_add_watch(in, disk, IN_MODIFY | IN_ACCESS) >= 0);
	/* The kernel's own path first: what the watch sees of pwrite, pread. */
	assert_int_equal(pwrite(fd, b, BLK, OFF_NOTIFY), BLK);
	assert_int_equal(inotify_events(in), IN_MODIFY);
	assert_int_equal(pread(fd, b, BLK, OFF_NOTIFY), BLK);
	assert_int_equal(inotify_events(in), IN_ACCESS);

	h = want_ok(sys_dio_open(ctx, fd, 0), "OPEN");
	dio_req_prep_write(&r, h, b, 2 * BLK, OFF_NOTIFY);
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, 2 * BLK);
	m = inotify_events(in);
	if (m != IN_MODIFY)
		fail_msg("after a write: events %#x, want IN_MODIFY (%#x)", m, IN_MODIFY);
	dio_req_prep_read(&r, h, b, 2 * BLK, OFF_NOTIFY);
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
	assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
	assert_int_equal(r.result, 2 * BLK);
	m = inotify_events(in);
	if (m != IN_ACCESS)
		fail_msg("after a read: events %#x, want IN_ACCESS (%#x)", m, IN_ACCESS);
	/*
	 * The event is sent when the request is reported, from the
	 * submitter: a write done but not reported has raised nothing yet,
	 * and closing the descriptor that never reports it raises it then.
	 */
	dio_req_prep_write(&r, h, b, BLK, OFF_NOTIFY);
	assert_int_equal(sys_dio_submit(ctx, &rp, 1), 1);
	{
		struct pollfd p = { .fd = ctx, .events = POLLIN };

		assert_int_equal(poll(&p, 1, 10000), 1);
	}
	m = inotify_events(in);
	if (m)
		fail_msg("a write done, not reported: events %#x, want none", m);
	unkeep_close(ctx);
	m = inotify_events(in);
	if (m != IN_MODIFY)
		fail_msg("after closing with a write unreported: events %#x, want IN_MODIFY (%#x)",
			 m, IN_MODIFY);
	/* A write refused at SUBMIT (read-only handle): no event. */
	other = keep(sys_dio_init(0, DIO_PRIVATE));
	hro = want_ok(sys_dio_open(other, ro, DIO_OPEN_NOCLAIM), "OPEN O_RDONLY");
	dio_req_prep_write(&r, hro, b, BLK, OFF_NOTIFY);
	want_err(sys_dio_submit(other, &rp, 1), EBADF, "write through a read-only handle");
	m = inotify_events(in);
	if (m)
		fail_msg("after a refused write: events %#x, want none", m);
	free(b);
}

/* ---- 4. PI: no escapes, no stale bytes ---- */

static int open_handle(int ctx, const char *dev, struct dio_query *q)
{
	int fd = open_disk(dev, O_RDWR), h = want_ok(sys_dio_open(ctx, fd, 0), dev);

	assert_int_equal(sys_dio_query(ctx, h, q), 0);
	return h;
}

/*
 * DIO_PI_GEN_APPTAG on a write without a PI buffer (dio_req_set_pi()
 * would set DIO_REQ_PI, which GEN_APPTAG refuses).
 */
static void gen_apptag(struct dio_request *r, uint16_t app)
{
	r->pi_flags = DIO_PI_GEN_APPTAG;
	r->app_tag = app;
}

/* One request, submitted and waited for; returns SUBMIT's errno or 0. */
static int run1(int ctx, struct dio_request *r)
{
	struct dio_request *rp = r;

	if (sys_dio_submit(ctx, &rp, 1) != 1)
		return errno;
	assert_int_equal(sys_dio_wait(ctx, &rp, 1, NULL), 1);
	return 0;
}

/*
 * DIO_PI_GEN_APPTAG with the escape app tag 0xffff: EINVAL on type 1
 * (scsi_debug and NVMe namespace 1), nothing written; 0xfffe is fine
 * there; on type 3 (NVMe namespace 3) 0xffff is accepted.
 */
static void test_gen_apptag_escape(void **state)
{
	const char *devs[] = { disk, nvme1, nvme3 };
	int ctx = keep(sys_dio_init(0, DIO_PRIVATE));

	assert_true(ctx >= 0);
	for (int i = 0; i < 3; i++) {
		struct dio_query q;
		int h = open_handle(ctx, devs[i], &q);
		uint32_t len = 8 * q.logical_block_size;
		uint8_t *b = tl_alloc(len, 0x3d), *back = tl_alloc(len, 0);
		uint64_t off = i == 0 ? OFF_APPTAG : 1 * MiB;
		struct dio_request r;
		char what[128];
		int e;

		assert_true(b && back);
		print_message("# %s: %s, type %u\n", devs[i], q.profile, q.pi_type);
		assert_true(q.pi_caps & DIO_PI_CAP_INTEGRITY);
		dio_req_prep_write(&r, h, b, len, off);
		assert_int_equal(run1(ctx, &r), 0);
		assert_int_equal(r.result, len);
		memset(b, 0x3e, len);
		dio_req_prep_write(&r, h, b, len, off);
		gen_apptag(&r, 0xffff);
		e = run1(ctx, &r);
		snprintf(what, sizeof(what), "%s (type %u): GEN_APPTAG 0xffff", devs[i], q.pi_type);
		if (q.pi_type == 1) {
			if (e != EINVAL)
				fail_msg("%s: SUBMIT errno %s, want EINVAL", what, en(e));
			dio_req_prep_read(&r, h, back, len, off);
			assert_int_equal(run1(ctx, &r), 0);
			assert_int_equal(r.result, len);
			assert_int_equal(first_diff(back, len, 0x3d), -1);
			dio_req_prep_write(&r, h, b, len, off);
			gen_apptag(&r, 0xfffe);
			assert_int_equal(run1(ctx, &r), 0);
			assert_int_equal(r.result, len);
		} else {
			assert_int_equal(q.pi_type, 3);
			if (e || r.result != len)
				fail_msg("%s: SUBMIT errno %s, result %lld; want accepted",
					 what, en(e), (long long)r.result);
		}
		free(b);
		free(back);
	}
}

/*
 * Read @n intervals at @off with DIO_REQ_PI into a buffer filled with
 * 0xee, data into @data; the PI buffer must equal @want byte for byte.
 */
static void read_pi_exact(int ctx, int h, const struct dio_query *q, uint64_t off,
			  uint32_t n, const uint8_t *data, const uint8_t *want,
			  const char *what)
{
	uint32_t len = n * q->pi_interval, plen = n * q->pi_md_size;
	uint8_t *b = tl_alloc(len, 0), *pi = tl_alloc(plen, 0xee);
	struct dio_request r;

	assert_true(b && pi);
	dio_req_prep_read(&r, h, b, len, off);
	dio_req_set_pi(&r, pi, plen, 0, 0, 0);
	assert_int_equal(run1(ctx, &r), 0);
	if (r.result != len)
		fail_msg("%s: read result %lld", what, (long long)r.result);
	assert_memory_equal(b, data, len);
	for (uint32_t i = 0; i < plen; i++)
		if (pi[i] != want[i])
			fail_msg("%s: PI byte %u (interval %u, byte %u of %u) is %#x, want %#x",
				 what, i, i / q->pi_md_size, i % q->pi_md_size,
				 q->pi_md_size, pi[i], want[i]);
	free(b);
	free(pi);
}

/*
 * Write @n intervals of data tagged @tag at @off: with the module's PI
 * (DIO_PI_GEN_APPTAG, @app), the kernel's (no PI flags, app tag 0), or
 * the caller's (@own, DIO_REQ_PI); then read the metadata back and
 * compare it with what it must be: the tuples, and every other metadata
 * byte zero (or the caller's).
 */
enum pi_src { PI_MODULE, PI_KERNEL, PI_OWN };

/*
 * Writes and reads of @n intervals at @off with the caller's metadata,
 * every byte beyond the tuples 0xab: kernel buffers of the size the next
 * request needs are freed holding 0xab, so that one reused without being
 * cleared shows.
 */
static void prime_md_buffers(int ctx, int h, const struct dio_query *q, uint64_t off,
			     uint32_t n)
{
	uint32_t len = n * q->pi_interval, plen = n * q->pi_md_size;
	uint8_t *data = tl_alloc(len, 0x5e), *pi = tl_alloc(plen, 0xab);
	struct dio_pi_profile p;
	struct dio_request r;

	assert_true(data && pi);
	assert_int_equal(dio_pi_profile_from_query(q, &p), 0);
	assert_int_equal(dio_pi_generate(&p, data, len, pi,
					 &(struct dio_pi_params){ .seed = off / q->pi_interval }), 0);
	for (int i = 0; i < 16; i++) {
		dio_req_prep_write(&r, h, data, len, off);
		dio_req_set_pi(&r, pi, plen, 0, 0, 0);
		assert_int_equal(run1(ctx, &r), 0);
		assert_int_equal(r.result, len);
		dio_req_prep_read(&r, h, data, len, off);	/* no PI: the kernel's */
		assert_int_equal(run1(ctx, &r), 0);
		assert_int_equal(r.result, len);
	}
	free(data);
	free(pi);
}

static void write_and_check_md(int ctx, int h, const struct dio_query *q, uint64_t off,
			       uint32_t n, enum pi_src src, uint16_t app, int own_fill,
			       const char *what)
{
	uint32_t len = n * q->pi_interval, plen = n * q->pi_md_size;
	uint8_t *data = tl_alloc(len, 0), *want = tl_alloc(plen, 0);
	struct dio_pi_profile p;
	struct dio_request r;

	assert_true(data && want);
	assert_int_equal(dio_pi_profile_from_query(q, &p), 0);
	tl_fill(data, len, off ^ src);
	if (src == PI_OWN)
		memset(want, own_fill, plen);
	else if (q->pi_md_size > q->pi_tuple_size)
		prime_md_buffers(ctx, h, q, 192 * KiB, n);
	assert_int_equal(dio_pi_generate(&p, data, len, want,
					 &(struct dio_pi_params){ .seed = off / q->pi_interval,
								  .app_tag = src == PI_KERNEL ? 0 : app }), 0);
	dio_req_prep_write(&r, h, data, len, off);
	if (src == PI_MODULE)
		gen_apptag(&r, app);
	else if (src == PI_OWN)
		dio_req_set_pi(&r, want, plen, 0, 0, 0);
	assert_int_equal(run1(ctx, &r), 0);
	if (r.result != len)
		fail_msg("%s: write result %lld", what, (long long)r.result);
	read_pi_exact(ctx, h, q, off, n, data, want, what);
	free(data);
	free(want);
}

/*
 * scsi_debug, type 1: the PI a write with DIO_PI_GEN_APPTAG put on the
 * disk, and the kernel's, read back with DIO_REQ_PI: every tuple exactly
 * guard, app tag and ref tag, no byte left over from anything else.
 */
static void test_scsi_pi_exact(void **state)
{
	int ctx = keep(sys_dio_init(0, DIO_PRIVATE)), h;
	struct dio_query q;

	assert_true(ctx >= 0);
	h = open_handle(ctx, disk, &q);
	assert_int_equal(q.pi_md_size, 8);
	write_and_check_md(ctx, h, &q, OFF_PI, 16, PI_MODULE, 0x1234, 0,
			   "scsi_debug, module-generated PI");
	write_and_check_md(ctx, h, &q, OFF_PI + 64 * KiB, 16, PI_KERNEL, 0, 0,
			   "scsi_debug, kernel-generated PI");
}

/*
 * NVMe namespace 4: 16 bytes of metadata per block, the 8-byte PI tuple
 * first.  The caller's own bytes there (0xab) come back exactly;
 * module-generated and kernel-generated PI leave bytes 8..15 of every
 * entry zero (no kernel memory reaches the disk, nor the reader), also
 * right after buffers of the same size held 0xab there.  Debian's stock
 * kernels zero every allocation (init_on_alloc=1): there a buffer that is
 * not cleared still holds zeros, and only the debug kernel (or a guest
 * booted with init_on_alloc=0) can show one.
 */
static void test_nvme_metadata_beyond_pi(void **state)
{
	int ctx = keep(sys_dio_init(0, DIO_PRIVATE)), h;
	struct dio_query q;
	char ns4[64];

	assert_true(ctx >= 0);
	if (tl_nvme_dev(4, ns4, sizeof(ns4)))
		fail_msg("NVMe namespace 4 (16 bytes of metadata, PI first) is not in the "
			 "test bed");
	h = open_handle(ctx, ns4, &q);
	print_message("# %s: %s, type %u, %u-byte blocks, metadata %u (PI %u at %u, "
		      "opaque %u at %u)\n", ns4, q.profile, q.pi_type, q.logical_block_size,
		      q.pi_md_size, q.pi_tuple_size, q.pi_offset, q.pi_opaque_size,
		      q.pi_opaque_offset);
	assert_int_equal(q.pi_md_size, 16);
	assert_int_equal(q.pi_tuple_size, 8);
	assert_int_equal(q.pi_offset, 0);
	assert_int_equal(q.pi_opaque_size, 8);
	assert_int_equal(q.pi_opaque_offset, 8);
	write_and_check_md(ctx, h, &q, 128 * KiB, 8, PI_OWN, 0x0abc, 0xab,
			   "namespace 4, the caller's metadata");
	write_and_check_md(ctx, h, &q, 0, 8, PI_MODULE, 0x4242, 0,
			   "namespace 4, module-generated PI");
	write_and_check_md(ctx, h, &q, 64 * KiB, 8, PI_KERNEL, 0, 0,
			   "namespace 4, kernel-generated PI");
}

/* Nothing of any test is left: requests, descriptors, handles, contexts. */
static void test_nothing_left(void **state)
{
	assert_true(tl_dio_caches_drained(20));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_abi2_announced, cleanup),
		cmocka_unit_test_teardown(test_forked_child_cannot_reap, cleanup),
		cmocka_unit_test_teardown(test_forked_child_cannot_submit, cleanup),
		cmocka_unit_test_teardown(test_scm_rights_receiver_cannot_do_io, cleanup),
		cmocka_unit_test_teardown(test_submitter_exits_with_io_in_flight, cleanup),
		cmocka_unit_test_teardown(test_keys_live_in_ipc_namespaces, cleanup),
		cmocka_unit_test_teardown(test_key_squatting_needs_foreign, cleanup),
		cmocka_unit_test_teardown(test_stat_private_and_bad_args, cleanup),
		cmocka_unit_test_teardown(test_handle_access_follows_openers, cleanup),
		cmocka_unit_test_teardown(test_failed_open_does_not_widen, cleanup),
		cmocka_unit_test_teardown(test_no_user_memory_under_context_lock, cleanup),
		cmocka_unit_test_teardown(test_readonly_device_open, cleanup),
		cmocka_unit_test_teardown(test_readonly_after_open, cleanup),
		cmocka_unit_test_teardown(test_readonly_flip_midrun, cleanup),
		cmocka_unit_test_teardown(test_swap_device, cleanup),
		cmocka_unit_test_teardown(test_lsm_denies_write_submit, cleanup),
		cmocka_unit_test_teardown(test_fsnotify_events, cleanup),
		cmocka_unit_test_teardown(test_gen_apptag_escape, cleanup),
		cmocka_unit_test_teardown(test_scsi_pi_exact, cleanup),
		cmocka_unit_test_teardown(test_nvme_metadata_beyond_pi, cleanup),
		cmocka_unit_test_teardown(test_nothing_left, cleanup),
	};

	/* Before any fork: every process of the test has these. */
	arena = mmap(NULL, ARENA_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	crep = mmap(NULL, sizeof(*crep), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		    -1, 0);
	if (arena == MAP_FAILED || crep == MAP_FAILED)
		return 1;
	return cmocka_run_group_tests_name("security", tests, setup, teardown);
}
