// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_install: what a user gets from make install and the static library.
 * Each case is a function of tests/unit/install-cases.sh (run from the top
 * of the checkout, building in a directory of its own), whose output is
 * shown when it fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "script_case.h"

static void run_case(const char *name)
{
	run_script_case("install-cases.sh", name);
}

/* libdioctl.a defines, globally, exactly the symbols libdioctl.map exports. */
static void test_static_exports(void **state)
{
	run_case("static_exports");
}

/* A program with its own pi_ipsum() and pi_crc16_slice8() links it statically. */
static void test_static_no_clash(void **state)
{
	run_case("static_no_clash");
}

/* dioctl.h: no warning as C99, C11 and C++ with -Wpedantic. */
static void test_headers_clean(void **state)
{
	run_case("headers_clean");
}

/* DESTDIR, PREFIX and LIBDIR honoured; the .pc always says where. */
static void test_install_pc(void **state)
{
	run_case("install_pc");
}

/*
 * dioctl links libdioctl.so.1: in the build tree through RUNPATH $ORIGIN/..,
 * installed without; DIOCTL_STATIC=1 links libdioctl.a.
 */
static void test_dioctl_linkage(void **state)
{
	run_case("dioctl_linkage");
}

/* make uninstall leaves nothing of make install behind. */
static void test_uninstall(void **state)
{
	run_case("uninstall_all");
}

/* make install into the system runs ldconfig: the library is found, by dioctl too. */
static void test_install_ldconfig(void **state)
{
	run_case("install_ldconfig");
}

/* make deb works in an exported tree, not a git checkout, as a release is. */
static void test_exported_tree(void **state)
{
	run_case("exported_tree");
}

int main(void)
{
	char dir[] = "/tmp/test_install.XXXXXX", cmd[64];
	int ret;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_static_exports),
		cmocka_unit_test(test_static_no_clash),
		cmocka_unit_test(test_headers_clean),
		cmocka_unit_test(test_install_pc),
		cmocka_unit_test(test_dioctl_linkage),
		cmocka_unit_test(test_uninstall),
		cmocka_unit_test(test_install_ldconfig),
		cmocka_unit_test(test_exported_tree),
	};

	/* One build directory for every case, away from build/. */
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	setenv("DIO_INSTALL_B", dir, 1);
	ret = cmocka_run_group_tests_name("install", tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		return 1;
	return ret;
}
