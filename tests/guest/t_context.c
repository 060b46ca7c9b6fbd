// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Contexts: keys, DIO_CREAT/DIO_EXCL, private contexts, permissions like
 * System V IPC (another user's context joined only with DIO_FOREIGN),
 * keys per IPC namespace, and the argument rules every ioctl shares (size
 * field, reserved fields, unknown flags and commands).  The t_security_*
 * programs attack the same rules as users who are not root.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

static int ctl_fd = -1;

static int setup(void **state)
{
	if (tl_dio_load())
		return -1;
	ctl_fd = open("/dev/dio_batch", O_RDWR | O_CLOEXEC);
	return ctl_fd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	close(ctl_fd);
	return 0;
}

static int init_raw(uint64_t key, unsigned int flags, unsigned int mode)
{
	struct dio_init in = { .size = sizeof(in), .flags = flags,
			       .key = key, .mode = mode };

	return tl_ioctl(ctl_fd, DIO_IOC_INIT, &in);
}

static void test_private_context(void **state)
{
	int a = sys_dio_init(0, DIO_PRIVATE), b;

	assert_true(a >= 0);
	assert_int_equal(fcntl(a, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	b = sys_dio_init(0, DIO_PRIVATE);
	assert_true(b >= 0);
	assert_int_not_equal(a, b);
	/* A private context takes no key and no other flag. */
	assert_int_equal(init_raw(7, DIO_PRIVATE, 0), -EINVAL);
	assert_int_equal(init_raw(0, DIO_PRIVATE | DIO_CREAT, 0), -EINVAL);
	assert_int_equal(sys_dio_exit(a), 0);
	assert_int_equal(sys_dio_exit(b), 0);
}

static void test_creat_excl_enoent(void **state)
{
	const uint64_t key = 0x1000;
	int a, b;

	assert_int_equal(sys_dio_init(key, 0), -1);
	assert_int_equal(errno, ENOENT);
	a = sys_dio_init(key, DIO_CREAT | DIO_EXCL);
	assert_true(a >= 0);
	assert_int_equal(sys_dio_init(key, DIO_CREAT | DIO_EXCL), -1);
	assert_int_equal(errno, EEXIST);
	b = sys_dio_init(key, 0);		/* join */
	assert_true(b >= 0);
	assert_int_equal(sys_dio_exit(a), 0);
	/* Still alive through b. */
	a = sys_dio_init(key, 0);
	assert_true(a >= 0);
	assert_int_equal(sys_dio_exit(a), 0);
	assert_int_equal(sys_dio_exit(b), 0);
	/* Gone with its last descriptor. */
	assert_int_equal(sys_dio_init(key, 0), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_init_bad_args(void **state)
{
	struct {
		struct dio_init in;
		uint64_t tail[2];
	} big;
	struct dio_init in;
	void *unmapped;

	assert_int_equal(init_raw(0, DIO_CREAT, 0), -EINVAL);	/* key 0 */
	assert_int_equal(init_raw(1, 1U << 20, 0), -EINVAL);	/* flags */
	assert_int_equal(init_raw(1, DIO_EXCL, 0), -EINVAL);	/* no CREAT */
	assert_int_equal(init_raw(1, DIO_CREAT, 01000), -EINVAL); /* mode */

	memset(&in, 0, sizeof(in));
	in.size = sizeof(in);
	in.flags = DIO_PRIVATE;
	in.reserved[1] = 1;
	assert_int_equal(tl_ioctl(ctl_fd, DIO_IOC_INIT, &in), -EINVAL);
	in.reserved[1] = 0;
	in.reserved0 = 1;
	assert_int_equal(tl_ioctl(ctl_fd, DIO_IOC_INIT, &in), -EINVAL);
	in.reserved0 = 0;
	in.size = DIO_INIT_SIZE_VER0 - 8;
	assert_int_equal(tl_ioctl(ctl_fd, DIO_IOC_INIT, &in), -EINVAL);

	/* A newer, larger struct: a zero tail is fine, a non-zero one is not. */
	memset(&big, 0, sizeof(big));
	big.in.size = sizeof(big);
	big.in.flags = DIO_PRIVATE;
	int fd = tl_ioctl(ctl_fd, DIO_IOC_INIT, &big);
	assert_true(fd >= 0);
	close(fd);
	big.tail[1] = 1;
	assert_int_equal(tl_ioctl(ctl_fd, DIO_IOC_INIT, &big), -E2BIG);

	assert_int_equal(tl_ioctl(ctl_fd, DIO_IOC_INIT, NULL), -EFAULT);
	unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(unmapped != MAP_FAILED);
	assert_int_equal(tl_ioctl(ctl_fd, DIO_IOC_INIT, unmapped), -EFAULT);
	/* A kernel address is not user memory either. */
	assert_int_equal(tl_ioctl(ctl_fd, DIO_IOC_INIT,
				  (void *)0xffffffff81000000UL), -EFAULT);
	munmap(unmapped, 4096);
}

static void test_unknown_commands(void **state)
{
	int ctx = sys_dio_init(0, DIO_PRIVATE);
	struct dio_features f = { .size = sizeof(f) };
	char buf[64] = { 0 };

	assert_true(ctx >= 0);
	assert_int_equal(tl_ioctl(ctl_fd, _IOWR(DIO_BATCH_IOC_MAGIC, 0x7f, buf), buf), -ENOTTY);
	assert_int_equal(tl_ioctl(ctx, _IOWR(DIO_BATCH_IOC_MAGIC, 0x7f, buf), buf), -ENOTTY);
	/* Context commands on the control device and vice versa. */
	assert_int_equal(tl_ioctl(ctl_fd, DIO_IOC_SUBMIT, buf), -ENOTTY);
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_INIT, buf), -ENOTTY);
	assert_int_equal(tl_ioctl(ctx, DIO_IOC_FEATURES, &f), -ENOTTY);
	assert_int_equal(tl_ioctl(ctl_fd, 0x5401 /* TCGETS */, buf), -ENOTTY);
	/* FEATURES: only the size is read; too small is EINVAL. */
	f.size = 8;
	assert_int_equal(tl_ioctl(ctl_fd, DIO_IOC_FEATURES, &f), -EINVAL);
	close(ctx);
}

/* Join key 0x2000 as another user would, with DIO_FOREIGN: 0 or the errno. */
static int join_key_0x2000(void *arg)
{
	int fd = init_raw(0x2000, DIO_FOREIGN, 0);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return -fd;
}

/* The same without DIO_FOREIGN. */
static int join_key_0x2000_plain(void *arg)
{
	int fd = init_raw(0x2000, 0, 0);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return -fd;
}

static void test_permissions(void **state)
{
	int ctx;

	/* Owner root, mode 0600: another uid may not join. */
	ctx = init_raw(0x2000, DIO_CREAT | DIO_EXCL, 0600);
	assert_true(ctx >= 0);
	assert_int_equal(tl_run_as(1000, 1000, 0, join_key_0x2000, NULL), EACCES);
	close(ctx);

	/*
	 * Mode 0666: another uid joins only with DIO_FOREIGN (ABI 2), so that
	 * a key someone else created is never joined by mistake.
	 */
	ctx = init_raw(0x2000, DIO_CREAT | DIO_EXCL, 0666);
	assert_true(ctx >= 0);
	assert_int_equal(tl_run_as(1000, 1000, 0, join_key_0x2000_plain, NULL), EACCES);
	assert_int_equal(tl_run_as(1000, 1000, 0, join_key_0x2000, NULL), 0);
	close(ctx);

	/* Mode 0606: others may. */
	ctx = init_raw(0x2000, DIO_CREAT | DIO_EXCL, 0606);
	assert_true(ctx >= 0);
	assert_int_equal(tl_run_as(1000, 1000, 0, join_key_0x2000, NULL), 0);
	close(ctx);

	/* Mode 0660 with the group: gid 0 may, gid 1000 may not. */
	ctx = init_raw(0x2000, DIO_CREAT | DIO_EXCL, 0660);
	assert_true(ctx >= 0);
	assert_int_equal(tl_run_as(1000, 0, 0, join_key_0x2000, NULL), 0);
	assert_int_equal(tl_run_as(1000, 1000, 0, join_key_0x2000, NULL), EACCES);
	/* Read permission alone is not enough. */
	close(ctx);
	ctx = init_raw(0x2000, DIO_CREAT | DIO_EXCL, 0604);
	assert_true(ctx >= 0);
	assert_int_equal(tl_run_as(1000, 1000, 0, join_key_0x2000, NULL), EACCES);
	close(ctx);
}

/* unshare(@flags), then join key 0x3000; 0 or the errno. */
static int join_after_unshare(int flags)
{
	int fd;

	if (unshare(flags))
		return 98;
	fd = init_raw(0x3000, 0, 0);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return -fd;
}

static int fork_join(int flags)
{
	pid_t pid = fork();
	int st;

	if (pid == 0)
		_exit(join_after_unshare(flags));
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void test_keys_per_ipc_namespace(void **state)
{
	int ctx = init_raw(0x3000, DIO_CREAT | DIO_EXCL, 0666);

	assert_true(ctx >= 0);
	/*
	 * Keys live in the IPC namespace (ABI 2): a new user namespace alone
	 * keeps it, so the key is visible there, and joined (the caller is
	 * the same kernel uid as the owner).
	 */
	assert_int_equal(fork_join(CLONE_NEWUSER), 0);
	/* Another IPC namespace does not see it, with or without a userns. */
	assert_int_equal(fork_join(CLONE_NEWIPC), ENOENT);
	assert_int_equal(fork_join(CLONE_NEWUSER | CLONE_NEWIPC), ENOENT);
	close(ctx);
}

/*
 * fork, then exec /bin/sh -c @cmd in the child, after clearing FD_CLOEXEC
 * of @keep_fd when it is not -1; returns the shell's exit status.
 */
static int exec_sh(const char *cmd, int keep_fd)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		if (keep_fd >= 0 && fcntl(keep_fd, F_SETFD, 0))
			_exit(126);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void test_descriptor_survives_fork_and_exec_closes(void **state)
{
	int ctx = sys_dio_init(0x4000, DIO_CREAT | DIO_EXCL);
	char cmd[128];
	pid_t pid;
	int st;

	assert_true(ctx >= 0);
	pid = fork();
	if (pid == 0) {
		/* The inherited descriptor works in the child. */
		struct dio_query q;

		_exit(sys_dio_query(ctx, 1, &q) == -1 && errno == EBADF ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);

	/* exec in a forked child: the descriptor is gone in the new program. */
	snprintf(cmd, sizeof(cmd), "test ! -e /proc/self/fd/%d", ctx);
	assert_int_equal(exec_sh(cmd, -1), 0);
	/*
	 * The same check sees a descriptor that does survive exec: ours,
	 * once the child clears its FD_CLOEXEC.
	 */
	snprintf(cmd, sizeof(cmd), "test -e /proc/self/fd/%d", ctx);
	assert_int_equal(exec_sh(cmd, ctx), 0);
	snprintf(cmd, sizeof(cmd),
		 "test \"$(readlink /proc/self/fd/%d)\" = 'anon_inode:[dio_batch]'",
		 ctx);
	assert_int_equal(exec_sh(cmd, ctx), 0);
	assert_int_equal(exec_sh(cmd, -1), 1);
	/* The parent's stays close-on-exec. */
	assert_int_equal(fcntl(ctx, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);

	assert_int_equal(sys_dio_exit(ctx), 0);
	assert_int_equal(sys_dio_exit(ctx), -1);
	assert_int_equal(errno, EBADF);
}

static void test_slab_back_to_zero(void **state)
{
	assert_int_equal(tl_slab_wait("dio_ctx", 0, 5), 0);
	assert_int_equal(tl_slab_wait("dio_file", 0, 5), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_private_context),
		cmocka_unit_test(test_creat_excl_enoent),
		cmocka_unit_test(test_init_bad_args),
		cmocka_unit_test(test_unknown_commands),
		cmocka_unit_test(test_permissions),
		cmocka_unit_test(test_keys_per_ipc_namespace),
		cmocka_unit_test(test_descriptor_survives_fork_and_exec_closes),
		cmocka_unit_test(test_slab_back_to_zero),
	};

	return cmocka_run_group_tests_name("context", tests, setup, teardown);
}
