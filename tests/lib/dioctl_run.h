/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * dioctl, the command-line tool, run by the guest programs that test it
 * as people run it: a child process with arguments, its exit status, its
 * stdout in DIOCTL_OUT and stderr in DIOCTL_ERR, checked with cmocka (a
 * failed check fails the test, showing what dioctl printed as "# " lines,
 * which run-suite.sh never counts as a test case's result).  The names
 * are these programs' own vocabulary, unprefixed: the Makefile links
 * dioctl_run.o into the guest programs that include this header, and into
 * no other.
 *
 * JSON documents: jq reads them (expect_jq()), without a shell.  A program
 * that names a directory (dioctl_run_init()) has every document dioctl
 * prints kept for the host: $RESULTS/DIR/NNN.json, and DIR/index.tsv
 * ("NNN.json<TAB>EXIT<TAB>ARGS" a line; EXIT "-" when not known), which
 * tests/vm/check.sh validates against tools/dioctl.schema.json after the
 * guest (tests/vm/json-check.py: a test case per document, in the suite's
 * counts).  A document is kept once: the runs of run() and run_in() whose
 * arguments ask for JSON (-j, --json, -o json), those a test reports with
 * dioctl_ran(), and one a dioctl run through a shell left in DIOCTL_OUT,
 * when jq reads it; a document the same as the last one kept is not kept
 * again (query -o json is query -j's, byte for byte).
 */
#ifndef DIO_DIOCTL_RUN_H
#define DIO_DIOCTL_RUN_H

#define DIOCTL_OUT	"/tmp/dioctl.out"
#define DIOCTL_ERR	"/tmp/dioctl.err"

/* dioctl_run_init()'s flags. */
/*
 * Every document jq reads is parsed by python3's json module too, a second
 * parser, strict where jq is lenient: in one python3 when json_check()
 * runs (a teardown) or 32 documents wait (a python3 start costs a loaded
 * TCG guest seconds, more than most dioctl runs).
 */
#define DIOCTL_RUN_PY_PARSE	0x1

/*
 * The dioctl to run: $DIO_BUILD/tools/dioctl (build/tools/dioctl without
 * $DIO_BUILD), as "%s" in the tests' own command lines.
 */
extern char dioctl[512];

/*
 * Find dioctl and, with @json_subdir (NULL: none), keep the documents in
 * $RESULTS/@json_subdir, made here (nothing kept without $RESULTS).
 * @flags: DIOCTL_RUN_*.  0, or -1 said on stderr (main() returns 1).
 */
int dioctl_run_init(const char *json_subdir, unsigned int flags);

/* A shell command line's exit status (128 + signal when killed). */
int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A whole file, NUL-terminated (malloc'd). */
char *slurp(const char *path);

/*
 * [PREFIX]dioctl ARGS >DIOCTL_OUT 2>DIOCTL_ERR through a shell; its exit
 * status.  @prefix: a command line whose stdout is dioctl's stdin
 * ("producer | "), "" for none.  Says what ran, its status and time.
 */
int run_in(const char *prefix, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define run(...)	run_in("", __VA_ARGS__)
/*
 * dioctl @args ran, some other way than run(), and exited with @st: the
 * status jq's keeping knows, and DIOCTL_OUT kept when @args ask for JSON.
 */
void dioctl_ran(int st, const char *args);
/* run(), failing unless it exits @want (showing what dioctl printed). */
void dioctl_expect(int want, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Fail, showing DIOCTL_OUT and DIOCTL_ERR, unless @got is @want (an exit status). */
void expect_exit(int got, int want);
/* @needle is (is not) in the file @path; shows the file when the check fails. */
void expect_in(const char *path, const char *needle);
void expect_not_in(const char *path, const char *needle);
/* DIOCTL_OUT and DIOCTL_ERR as "# " lines. */
void show_output(void);

/* jq -r FILTER DIOCTL_OUT, without its last newline (malloc'd); jq must succeed. */
char *jq(const char *filter);
/* jq() is @want, or the test fails showing both and the document. */
void expect_jq(const char *filter, const char *want);
void expect_jqf(const char *filter, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The filter (a printf format) prints true, exactly (jq -e would take any but false and null). */
void expect_jq_true(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * DIOCTL_RUN_PY_PARSE: python3 parses the documents waiting; 0, or -1
 * (and why, printed) when one does not parse.  0 without the flag.
 */
int json_check(void);

/* The sectors @dev ("/dev/sdb") has read so far (its stat's third field). */
unsigned long long sectors_read(const char *dev);

#endif
