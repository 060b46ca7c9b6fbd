// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The test bed of the t_security_* programs: see security_common.h.
 */
#include <errno.h>
#include <fcntl.h>
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
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"
#include "security_common.h"

char disk[64], nvme1[64], nvme3[64];
int dfd = -1;		/* root's O_DIRECT descriptor of the disk */
static unsigned int ctl_mode;	/* /dev/dio_batch's mode before the setup */
static bool ctl_mode_saved;

uint8_t *arena;

struct child_report *crep;

/* ---- errno helpers ---- */

const char *en(int e)
{
	const char *s = e ? strerrorname_np(e) : "0";

	return s ? s : "?";
}

/* @ret must be -1 with errno @want (errno read first thing). */
void want_err(long ret, int want, const char *what)
{
	int e = errno;

	if (ret != -1 || e != want)
		fail_msg("%s: returned %ld%s%s, want -1/%s", what, ret,
			 ret == -1 ? "/" : "", ret == -1 ? en(e) : "", en(want));
}

/* @ret must be >= 0. */
long want_ok(long ret, const char *what)
{
	int e = errno;

	if (ret < 0)
		fail_msg("%s: returned %ld/%s, want success", what, ret, en(e));
	return ret;
}

int dio_stat(int ctx, struct dio_stat *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return ioctl(ctx, DIO_IOC_STAT, st);
}

/* Index of the first byte of @p that is not @byte, -1 when none. */
long first_diff(const void *p, size_t len, int byte)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i] != (uint8_t)byte)
			return (long)i;
	return -1;
}

/* ---- what a test leaves for its teardown ---- */

pid_t pids[8];
bool ro_set, swap_on;

void track_pid(pid_t pid)
{
	for (int i = 0; i < 8; i++)
		if (pids[i] <= 0) {
			pids[i] = pid;
			return;
		}
}

void forget_pid(pid_t pid)
{
	for (int i = 0; i < 8; i++)
		if (pids[i] == pid)
			pids[i] = 0;
}

int open_disk(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd < 0)
		fail_msg("open %s: %s", path, strerror(errno));
	return tl_fd_keep(fd);
}

/* ---- the disk, seen through root's O_DIRECT descriptor ---- */

void disk_fill(uint64_t off, size_t len, int byte)
{
	uint8_t *b = tl_alloc(len, byte);

	assert_non_null(b);
	assert_int_equal(pwrite(dfd, b, len, off), (ssize_t)len);
	free(b);
}

void disk_read(void *buf, size_t len, uint64_t off)
{
	assert_int_equal(pread(dfd, buf, len, off), (ssize_t)len);
}

/* The disk holds @byte everywhere in [off, off + len). */
void disk_is(uint64_t off, size_t len, int byte, const char *what)
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

void set_ro(int on)
{
	assert_int_equal(ioctl(dfd, BLKROSET, &on), 0);
	ro_set = on;
}

/* ---- forked children: checks without cmocka ---- */

void child_fail(int line, const char *cond, const char *fmt, ...)
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


pid_t child_fork(void)
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
void child_done(pid_t pid, const char *what)
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


struct agent agents[NAGENTS];

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

struct timespec ms_ts(int ms)
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

struct arep agent_call(struct agent *a, struct amsg m, int fd_out, int *fd_in)
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


/* Started and confirmed to run as @uid. */
struct agent *agent(uid_t uid)
{
	struct agent *a = agent_start(uid, uid);
	struct arep r = ACALL(a, .op = A_PING);

	assert_int_equal(r.ret, uid);
	return a;
}

/* Send @fd to @a; returns the agent's number for it. */
int agent_give(struct agent *a, int fd)
{
	struct arep r = agent_call(a, (struct amsg){ .op = A_RECVFD }, fd, NULL);

	assert_true(r.ret >= 0);
	return (int)r.ret;
}

/* The agent's descriptor @afd, as a descriptor of ours (SCM_RIGHTS). */
int agent_take(struct agent *a, int afd)
{
	int fd = -1;

	agent_call(a, (struct amsg){ .op = A_SENDFD, .fd = afd }, -1, &fd);
	assert_true(fd >= 0);
	return tl_fd_keep(fd);
}

void agent_exit(struct agent *a)
{
	int st;

	ACALL(a, .op = A_EXIT);
	assert_int_equal(waitpid(a->pid, &st, 0), a->pid);
	close(a->sock);
	a->pid = 0;
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

void rep_ok(struct arep r, const char *what)
{
	if (r.ret < 0)
		fail_msg("%s: -1/%s, want success", what, en(r.err));
}

void rep_err(struct arep r, int want, const char *what)
{
	if (r.ret != -1 || r.err != want)
		fail_msg("%s: %lld%s%s, want -1/%s", what, (long long)r.ret,
			 r.ret == -1 ? "/" : "", r.ret == -1 ? en(r.err) : "", en(want));
}

/* An agent's A_IO that went through: submitted, reported, @len done. */
void rep_io_ok(struct arep r, uint32_t len, const char *what)
{
	if (r.ret != 1 || r.result != len)
		fail_msg("%s: submit %lld/%s, result %lld; want %u bytes", what,
			 (long long)r.ret, en(r.err), (long long)r.result, len);
}

struct arep a_io(struct agent *a, int ctx, int h, int opcode, uint64_t off,
			int fill)
{
	return ACALL(a, .op = A_IO, .ctx = ctx, .h = h, .opcode = opcode, .off = off,
		     .len = BLK, .fill = fill);
}

/* ---- setup and teardown ---- */

int sec_setup(void **state)
{
	int fd;

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

int sec_teardown(void **state)
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

/*
 * After every test, passed or failed: no process of it left, the device
 * read-write and not swap, scsi_debug at full speed, its descriptors
 * closed.
 */
int sec_cleanup(void **state)
{
	int ret = 0, st;

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
	tl_fd_close_all();
	if (tl_scsi_debug_ndelay(0))
		ret = -1;
	return ret;
}

int sec_run(const char *name, const struct CMUnitTest *tests, size_t n)
{
	/* Before any fork: every process of the test has these. */
	arena = mmap(NULL, ARENA_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	crep = mmap(NULL, sizeof(*crep), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		    -1, 0);
	if (arena == MAP_FAILED || crep == MAP_FAILED)
		return 1;
	return _cmocka_run_group_tests(name, tests, n, sec_setup, sec_teardown);
}
