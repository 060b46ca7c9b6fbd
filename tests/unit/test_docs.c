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
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "script_case.h"

static void run_case(const char *name)
{
	run_script_case("docs-cases.sh", name);
}

/* Every struct a man page's SYNOPSIS shows is the headers' struct. */
static void test_man_structs(void **state)
{
	run_case("man_structs");
}

/* Every function libdioctl.map exports has its man page, and no other. */
static void test_man_symbols(void **state)
{
	run_case("man_symbols");
}

/* README.md's NVMe namespaces and the kernels make check tests are so. */
static void test_readme_claims(void **state)
{
	run_case("readme_claims");
}

/* make man dates every page with the changelog's first entry. */
static void test_man_date(void **state)
{
	run_case("man_date");
}

/* The bash completion parses; shellcheck finds nothing in it. */
static void test_completion_syntax(void **state)
{
	run_case("completion_syntax");
}

/* dioctl sc<TAB> is scrub, dioctl scrub --<TAB> has --json, DEVICE /dev's. */
static void test_completion_replies(void **state)
{
	run_case("completion_replies");
}

/* Each command completes exactly the options its --help lists. */
static void test_completion_options(void **state)
{
	run_case("completion_options");
}

/*
 * dioctl's JSON Schema is valid, and the man page's examples and the
 * host's error documents validate against it.
 */
static void test_json_valid(void **state)
{
	run_case("json_valid");
}

/*
 * A directory of documents without index.tsv, or a document it does not
 * list, fails: their exit statuses are never left uncompared.
 */
static void test_json_index(void **state)
{
	run_case("json_index");
}

/* Documents broken on purpose fail the validation. */
static void test_json_rejects(void **state)
{
	run_case("json_rejects");
}

int main(int argc, char **argv)
{
	char dioctl[4096], *slash;
	int i;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_man_structs),
		cmocka_unit_test(test_man_symbols),
		cmocka_unit_test(test_readme_claims),
		cmocka_unit_test(test_man_date),
		cmocka_unit_test(test_completion_syntax),
		cmocka_unit_test(test_completion_replies),
		cmocka_unit_test(test_completion_options),
		cmocka_unit_test(test_json_valid),
		cmocka_unit_test(test_json_index),
		cmocka_unit_test(test_json_rejects),
	};

	/* BUILD/tests/unit/test_docs: BUILD/tools/dioctl, of the same build. */
	snprintf(dioctl, sizeof(dioctl), "%s", argc > 0 ? argv[0] : "");
	for (i = 0; i < 3; i++) {
		slash = strrchr(dioctl, '/');
		if (!slash) {
			fprintf(stderr, "test_docs: run it as BUILD/tests/unit/test_docs\n");
			return 1;
		}
		*slash = '\0';
	}
	strncat(dioctl, "/tools/dioctl", sizeof(dioctl) - strlen(dioctl) - 1);
	setenv("DIO_DIOCTL", dioctl, 1);
	return cmocka_run_group_tests_name("docs", tests, NULL, NULL);
}
