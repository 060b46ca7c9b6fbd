// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_check: what make check's own machinery promises, on the host.  Each
 * case is a function of tests/unit/check-cases.sh (run from the top of the
 * checkout), whose output is shown when it fails.
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
	run_script_case("check-cases.sh", name);
}

/*
 * The summary splits a guest suite's cases into tests and dioctl JSON
 * validated on the host, program by program; its last line is unchanged.
 */
static void test_summary_split(void **state)
{
	run_case("summary_split");
}

/*
 * A guest boot tried again fails nothing, but the summary says it happened
 * and where its console is, and make flakes' table counts it.
 */
static void test_boot_retries(void **state)
{
	run_case("boot_retries");
}

/* make -n check (check-debug, check-kcsan) prints and runs nothing. */
static void test_make_dry_run(void **state)
{
	run_case("make_dry_run");
}

/*
 * make demo boots the release's own kernel (Debian 12: 6.1; Debian 13:
 * 6.12) or DEMO_KERNEL's, and refuses what the release cannot have.
 */
static void test_demo_kernel(void **state)
{
	run_case("demo_kernel");
}

/* make demo's packages are a part of make check's, on either release. */
static void test_demo_packages(void **state)
{
	run_case("demo_packages");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_split),
		cmocka_unit_test(test_boot_retries),
		cmocka_unit_test(test_make_dry_run),
		cmocka_unit_test(test_demo_kernel),
		cmocka_unit_test(test_demo_packages),
	};

	return cmocka_run_group_tests_name("check", tests, NULL, NULL);
}
