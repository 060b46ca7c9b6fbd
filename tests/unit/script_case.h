/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * One case of a shell script of cases (install-cases.sh, docs-cases.sh):
 * "sh SCRIPT NAME", its output as TAP comments, a failed test unless it
 * exits 0.  For the host unit tests that include it after cmocka.h.
 */
#ifndef DIO_SCRIPT_CASE_H
#define DIO_SCRIPT_CASE_H

#include <stdio.h>
#include <sys/wait.h>

static void run_script_case(const char *script, const char *name)
{
	char cmd[256], line[512];
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "sh tests/unit/%s %s 2>&1", script, name);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		printf("# %s", line);
	st = pclose(p);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("%s %s: status %#x", script, name, st);
}

#endif
