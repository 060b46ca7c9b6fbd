// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The trust boundary (ABI 2), attacked by users who are not root: writes
 * obey the kernel's own rules.  A read-only device (BLKROSET: EROFS at
 * OPEN, EPERM at SUBMIT, also when flipped mid-run), an active swap device
 * (EBUSY, ETXTBSY, EBADF), the LSM (AppArmor: EACCES, as pwrite(2) gets),
 * and the fsnotify events pwrite and pread raise.  Tools from the host's
 * root: mkswap (util-linux) and apparmor_parser (package apparmor, in
 * scripts/deps.sh).
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
	int ctx = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE)), fd = open_disk(disk, O_RDWR);
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
	int ctx = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE)), rw = open_disk(disk, O_RDWR | O_DIRECT);
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
	int in = tl_fd_keep(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
	int ctx = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE)), fd = open_disk(disk, O_RDWR | O_DIRECT);
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
	tl_fd_close(ctx);
	m = inotify_events(in);
	if (m != IN_MODIFY)
		fail_msg("after closing with a write unreported: events %#x, want IN_MODIFY (%#x)",
			 m, IN_MODIFY);
	/* A write refused at SUBMIT (read-only handle): no event. */
	other = tl_fd_keep(sys_dio_init(0, DIO_PRIVATE));
	hro = want_ok(sys_dio_open(other, ro, DIO_OPEN_NOCLAIM), "OPEN O_RDONLY");
	dio_req_prep_write(&r, hro, b, BLK, OFF_NOTIFY);
	want_err(sys_dio_submit(other, &rp, 1), EBADF, "write through a read-only handle");
	m = inotify_events(in);
	if (m)
		fail_msg("after a refused write: events %#x, want none", m);
	free(b);
}

/* sec_cleanup(), then the AppArmor profiles unloaded. */
static int cleanup(void **state)
{
	int ret = sec_cleanup(state);

	aa_unload();
	return ret;
}

/* Nothing of any test is left: requests, descriptors, handles, contexts. */
static void test_nothing_left(void **state)
{
	assert_true(tl_dio_caches_drained(20));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_readonly_device_open, cleanup),
		cmocka_unit_test_teardown(test_readonly_after_open, cleanup),
		cmocka_unit_test_teardown(test_readonly_flip_midrun, cleanup),
		cmocka_unit_test_teardown(test_swap_device, cleanup),
		cmocka_unit_test_teardown(test_lsm_denies_write_submit, cleanup),
		cmocka_unit_test_teardown(test_fsnotify_events, cleanup),
		cmocka_unit_test_teardown(test_nothing_left, cleanup),
	};

	return SEC_RUN("security_writes", tests);
}
