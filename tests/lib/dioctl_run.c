// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dioctl run by the guest tests and what it printed checked: see
 * dioctl_run.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl_run.h"
#include "testlib.h"

#define JQ_OUT		"/tmp/dioctl.jq"
/* DIOCTL_RUN_PY_PARSE: the documents python3 parses next. */
#define JSON_DOC	"/tmp/dioctl.doc.%d"
#define JSON_DOCS	32

char dioctl[512];
static unsigned int run_flags;

static char json_dir[256];	/* "": not kept */
static int json_kept;
static char *kept_last;		/* the last document kept */
static int last_exit = -1;	/* the exit status of the last dioctl run, -1: not known */

static char *py_last;		/* the last document waiting for python3 */
static int py_docs;		/* waiting since the last json_check() */

int dioctl_run_init(const char *json_subdir, unsigned int flags)
{
	const char *b = getenv("DIO_BUILD");

	run_flags = flags;
	snprintf(dioctl, sizeof(dioctl), "%s/tools/dioctl", b ? b : "build");
	if (json_subdir && getenv("RESULTS")) {
		snprintf(json_dir, sizeof(json_dir), "%s/%s", getenv("RESULTS"), json_subdir);
		if (mkdir(json_dir, 0755) && errno != EEXIST) {
			perror(json_dir);
			return -1;
		}
	}
	if (access(dioctl, X_OK)) {
		fprintf(stderr, "no dioctl at %s\n", dioctl);
		return -1;
	}
	return 0;
}

int sh(const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	int st;

	va_start(ap, fmt);
	assert_true(vasprintf(&cmd, fmt, ap) > 0);
	va_end(ap);
	st = system(cmd);
	free(cmd);
	assert_true(st != -1);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	ssize_t n;

	assert_non_null(f);
	n = getdelim(&buf, &len, 0, f);
	assert_true(n >= 0 || feof(f));
	fclose(f);
	/* An empty file: getdelim() may have allocated, but wrote nothing. */
	if (!buf)
		buf = strdup("");
	else if (n < 0)
		buf[0] = '\0';
	assert_non_null(buf);
	return buf;
}

/* @text as "# " lines under "# @what:" (no line of it can pass for a TAP result). */
static void show_text(const char *what, const char *text)
{
	const char *p = text, *nl;

	print_message("# %s:\n", what);
	while (*p) {
		nl = strchr(p, '\n');
		if (!nl) {
			print_message("# %s\n", p);
			break;
		}
		print_message("# %.*s\n", (int)(nl - p), p);
		p = nl + 1;
	}
}

static void show_file(const char *what, const char *path)
{
	char *s = slurp(path);

	show_text(what, s);
	free(s);
}

void show_output(void)
{
	show_file("stdout", DIOCTL_OUT);
	show_file("stderr", DIOCTL_ERR);
}

/* Keep DIOCTL_OUT, which dioctl @args (exit status @st, -1: not known) printed. */
static void keep_doc(int st, const char *args)
{
	char path[512], *doc;
	FILE *f;

	if (!json_dir[0])
		return;
	doc = slurp(DIOCTL_OUT);
	if (kept_last && !strcmp(doc, kept_last)) {
		free(doc);
		return;
	}
	snprintf(path, sizeof(path), "%s/%03d.json", json_dir, json_kept);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(doc, f) >= 0 && !fclose(f), 1);
	snprintf(path, sizeof(path), "%s/index.tsv", json_dir);
	f = fopen(path, "a");
	assert_non_null(f);
	if (st < 0)
		fprintf(f, "%03d.json\t-\t%s\n", json_kept, args);
	else
		fprintf(f, "%03d.json\t%d\t%s\n", json_kept, st, args);
	assert_int_equal(fclose(f), 0);
	json_kept++;
	free(kept_last);
	kept_last = doc;
}

/* Whether dioctl @args prints JSON: -j, --json, -o json (the last -j or -o wins). */
static bool json_args(const char *args)
{
	char *copy = strdup(args), *save = NULL, *w, *prev = NULL;
	bool json = false;

	assert_non_null(copy);
	for (w = strtok_r(copy, " ", &save); w; prev = w, w = strtok_r(NULL, " ", &save)) {
		if (!strcmp(w, "-j") || !strcmp(w, "--json"))
			json = true;
		else if (!strncmp(w, "-o", 2) && w[2])
			json = !strcmp(w + 2, "json");
		else if (!strncmp(w, "--output-format=", 16))
			json = !strcmp(w + 16, "json");
		else if (prev && (!strcmp(prev, "-o") || !strcmp(prev, "--output-format")))
			json = !strcmp(w, "json");
	}
	free(copy);
	return json;
}

void dioctl_ran(int st, const char *args)
{
	last_exit = st;
	if (json_args(args))
		keep_doc(st, args);
}

int run_in(const char *prefix, const char *fmt, ...)
{
	char *args;
	uint64_t t0;
	va_list ap;
	int ret;

	va_start(ap, fmt);
	assert_true(vasprintf(&args, fmt, ap) >= 0);
	va_end(ap);
	t0 = tl_now_ns();
	ret = sh("%s%s %s >" DIOCTL_OUT " 2>" DIOCTL_ERR, prefix, dioctl, args);
	print_message("# %sdioctl %s: exit %d, %.1f s\n", prefix, args, ret,
		      (tl_now_ns() - t0) / 1e9);
	dioctl_ran(ret, args);
	free(args);
	return ret;
}

void expect_exit(int got, int want)
{
	last_exit = got;
	if (got != want)
		show_output();
	assert_int_equal(got, want);
}

void dioctl_expect(int want, const char *fmt, ...)
{
	char *args;
	va_list ap;

	va_start(ap, fmt);
	assert_true(vasprintf(&args, fmt, ap) >= 0);
	va_end(ap);
	expect_exit(run("%s", args), want);
	free(args);
}

void expect_in(const char *path, const char *needle)
{
	char *s = slurp(path);

	if (!strstr(s, needle)) {
		print_message("# '%s' not in %s\n", needle, path);
		show_text(path, s);
	}
	assert_non_null(strstr(s, needle));
	free(s);
}

void expect_not_in(const char *path, const char *needle)
{
	char *s = slurp(path);

	if (strstr(s, needle)) {
		print_message("# '%s' in %s\n", needle, path);
		show_text(path, s);
	}
	assert_null(strstr(s, needle));
	free(s);
}

int json_check(void)
{
	char cmd[4096];
	int i, n, ret;

	if (!py_docs)
		return 0;
	n = snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c 'import json, sys\n"
		     "bad = 0\n"
		     "for f in sys.argv[1:]:\n"
		     "    try:\n"
		     "        json.load(open(f))\n"
		     "    except ValueError as e:\n"
		     "        print(\"# %%s: %%s\" %% (f, e))\n"
		     "        print(\"\".join(\"# \" + l for l in open(f)))\n"
		     "        bad = 1\n"
		     "sys.exit(bad)'");
	for (i = 0; i < py_docs; i++)
		n += snprintf(cmd + n, sizeof(cmd) - n, " " JSON_DOC, i);
	py_docs = 0;
	free(py_last);
	py_last = NULL;
	if (n >= (int)sizeof(cmd))
		return -1;
	ret = system(cmd);
	if (ret)
		print_message("# python3 did not parse every JSON document (status %d)\n", ret);
	return ret ? -1 : 0;
}

/* DIOCTL_RUN_PY_PARSE: @doc waits for python3 (once: the same bytes parse the same way). */
static void py_parse_later(char *doc)
{
	char path[64];
	FILE *f;

	if (py_last && !strcmp(doc, py_last)) {
		free(doc);
		return;
	}
	if (py_docs == JSON_DOCS)
		assert_int_equal(json_check(), 0);
	snprintf(path, sizeof(path), JSON_DOC, py_docs++);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(doc, f) >= 0 && !fclose(f), 1);
	free(py_last);
	py_last = doc;
}

char *jq(const char *filter)
{
	char *s;
	size_t n;
	pid_t pid;
	int st;

	/* A document of a dioctl run through a shell (run() keeps its own). */
	keep_doc(last_exit, "(through a shell)");
	if (run_flags & DIOCTL_RUN_PY_PARSE)
		py_parse_later(slurp(DIOCTL_OUT));
	/* jq -r FILTER DIOCTL_OUT >JQ_OUT, without a shell between */
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int fd = open(JQ_OUT, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(126);
		execlp("jq", "jq", "-r", filter, DIOCTL_OUT, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st)) {
		print_message("# jq '%s' exited with %d\n", filter, WEXITSTATUS(st));
		show_file("the document", DIOCTL_OUT);
	}
	assert_int_equal(WEXITSTATUS(st), 0);
	s = slurp(JQ_OUT);
	n = strlen(s);
	if (n && s[n - 1] == '\n')
		s[n - 1] = 0;
	return s;
}

void expect_jq(const char *filter, const char *want)
{
	char *got = jq(filter);

	if (strcmp(got, want)) {
		print_message("# jq '%s'\n", filter);
		show_text("got", got);
		show_text("want", want);
		show_file("the document", DIOCTL_OUT);
	}
	assert_string_equal(got, want);
	free(got);
}

void expect_jqf(const char *filter, const char *fmt, ...)
{
	char *want;
	va_list ap;

	va_start(ap, fmt);
	assert_true(vasprintf(&want, fmt, ap) > 0);
	va_end(ap);
	expect_jq(filter, want);
	free(want);
}

void expect_jq_true(const char *fmt, ...)
{
	char *filter;
	va_list ap;

	va_start(ap, fmt);
	assert_true(vasprintf(&filter, fmt, ap) > 0);
	va_end(ap);
	expect_jq(filter, "true");
	free(filter);
}

unsigned long long sectors_read(const char *dev)
{
	char *v = tl_sysfs_read("/sys/block/%s/stat", tl_basename(dev));
	unsigned long long ios = 0, merges = 0, sectors = 0;

	assert_non_null(v);
	assert_int_equal(sscanf(v, "%llu %llu %llu", &ios, &merges, &sectors), 3);
	free(v);
	return sectors;
}
