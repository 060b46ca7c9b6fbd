// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The trust boundary (ABI 2), attacked by users who are not root:
 * contexts and handles.  The module announces ABI 2's trust boundary;
 * keys live in IPC namespaces; another user's key is joined only with
 * DIO_FOREIGN; DIO_IOC_STAT says whose context it is; a handle's access
 * follows the descriptors that hold it open, and an OPEN that fails leaves
 * it as it was; OPEN does not touch user memory under the context's lock
 * (userfaultfd).
 *
 * The attacks run in processes that dropped to spare uids (1000, 1001,
 * 2000: setgroups, setresgid, setresuid after fork) or in namespaces of
 * their own (unshare); what only root can set up runs as root.  Each test
 * asserts the exact documented errno and that nothing leaked: the bytes on
 * the disk, the bytes of the attacker's and the victim's memory, the
 * requests in the module's slab caches.  The test bed (devices, agents,
 * children, cleanup) is tests/lib/security_common.h's.  A device, a tool
 * or a kernel feature that is missing fails the test that needs it, with
 * a message.
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
#include "security_common.h"


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
	p = tl_fd_keep(sys_dio_init_mode(key, DIO_CREAT | DIO_EXCL, 0666));
	want_ok(p, "INIT in the first IPC namespace");
	want_err(sys_dio_init(key, DIO_CREAT | DIO_EXCL), EEXIST,
		 "INIT CREAT|EXCL again in the same namespace");
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	tl_fd_keep(ready[0]); tl_fd_keep(ready[1]); tl_fd_keep(go[0]); tl_fd_keep(go[1]);
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
	tl_fd_close(ready[1]);
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
	j = tl_fd_keep(sys_dio_init(key, DIO_FOREIGN));
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
	j2 = tl_fd_keep(sys_dio_init(key2, DIO_FOREIGN));
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
	int ctx = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE)), ctl;
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
	ctl = tl_fd_keep(open(CTL_PATH, O_RDWR | O_CLOEXEC));
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
	int ctx = tl_fd_keep(sys_dio_init_mode(key, DIO_CREAT | DIO_EXCL, 0666));
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
	int a = tl_fd_keep(sys_dio_init(key, DIO_CREAT | DIO_EXCL)), b = tl_fd_keep(sys_dio_init(key, 0));
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
	int ctx = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE)), fd1 = open_disk(disk, O_RDWR);
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

/* sec_cleanup(), the userfaultfd test's pages released first. */
static int cleanup(void **state)
{
	uffd_release();
	return sec_cleanup(state);
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
		cmocka_unit_test_teardown(test_keys_live_in_ipc_namespaces, cleanup),
		cmocka_unit_test_teardown(test_key_squatting_needs_foreign, cleanup),
		cmocka_unit_test_teardown(test_stat_private_and_bad_args, cleanup),
		cmocka_unit_test_teardown(test_handle_access_follows_openers, cleanup),
		cmocka_unit_test_teardown(test_failed_open_does_not_widen, cleanup),
		cmocka_unit_test_teardown(test_no_user_memory_under_context_lock, cleanup),
		cmocka_unit_test_teardown(test_nothing_left, cleanup),
	};

	return SEC_RUN("security_context", tests);
}
