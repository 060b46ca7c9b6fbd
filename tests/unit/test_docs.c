// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * test_docs: what the documentation the packages ship promises.  Each case
 * is a function of tests/unit/docs-cases.sh (run from the top of the
 * checkout), whose output is shown when it fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cmocka.h>

static void run_case(const char *name)
{
	char cmd[256], line[512];
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "sh tests/unit/docs-cases.sh %s 2>&1", name);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		printf("# %s", line);
	st = pclose(p);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("docs-cases.sh %s: status %#x", name, st);
}

/* Every struct a man page's SYNOPSIS shows is the headers' struct. */
static void test_man_structs(void **state)
{
	run_case("man_structs");
}

/* make man dates every page with the changelog's first entry. */
static void test_man_date(void **state)
{
	run_case("man_date");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_man_structs),
		cmocka_unit_test(test_man_date),
	};

	return cmocka_run_group_tests_name("docs", tests, NULL, NULL);
}
