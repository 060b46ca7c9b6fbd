// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dioctl's JSON output: a small writer of one document on stdout, pretty
 * printed two spaces an indent level, members in the order they are added;
 * and the error document die() prints in its place when the command fails
 * before its document is done (dioctl(1), JSON OUTPUT; the schema:
 * tools/dioctl.schema.json).
 */
#include <inttypes.h>
#include <stdio.h>

#include "dioctl_tool.h"

#define MAX_DEPTH 16

static int depth;
static bool has_members[MAX_DEPTH];
static char closer[MAX_DEPTH];		/* '}' or ']' of each open level */
static bool doc_done;			/* a whole document is on stdout */

/* What die() puts in the error document. */
static struct {
	bool		on;
	const char	*command, *device;
} ctx;

void j_set_mode(bool on) { ctx.on = on; }
bool j_mode(void) { return ctx.on; }
void j_set_command(const char *command) { ctx.command = command; }
void j_set_device(const char *device) { ctx.device = device; }

static void indent(void)
{
	for (int i = 0; i < depth; i++)
		fputs("  ", stdout);
}

static void put_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c == '\n')
			fputs("\\n", stdout);
		else if (c == '\t')
			fputs("\\t", stdout);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* Start a member (or an array element when @key is NULL). */
static void member(const char *key)
{
	if (depth > 0) {
		if (has_members[depth])
			putchar(',');
		putchar('\n');
		has_members[depth] = true;
		indent();
	}
	if (key) {
		put_string(key);
		fputs(": ", stdout);
	}
}

static void open_(const char *key, char c)
{
	member(key);
	putchar(c);
	if (depth + 1 < MAX_DEPTH)
		depth++;
	has_members[depth] = false;
	closer[depth] = c == '{' ? '}' : ']';
}

static void close_(char c)
{
	bool had = has_members[depth];

	if (depth > 0)
		depth--;
	if (had) {
		putchar('\n');
		indent();
	}
	putchar(c);
}

void j_begin(const char *key) { open_(key, '{'); }
void j_end(void) { close_('}'); }
void j_abegin(const char *key) { open_(key, '['); }
void j_aend(void) { close_(']'); }

void j_str(const char *key, const char *v)
{
	member(key);
	put_string(v ? v : "");
}

void j_u64(const char *key, uint64_t v)
{
	member(key);
	printf("%" PRIu64, v);
}

void j_i64(const char *key, int64_t v)
{
	member(key);
	printf("%" PRId64, v);
}

void j_dbl(const char *key, double v)
{
	member(key);
	printf("%.3f", v);
}

void j_bool(const char *key, bool v)
{
	member(key);
	fputs(v ? "true" : "false", stdout);
}

void j_null(const char *key)
{
	member(key);
	fputs("null", stdout);
}

void j_hex(const char *key, uint64_t v)
{
	member(key);
	printf("\"0x%" PRIx64 "\"", v);
}

void j_done(void)
{
	putchar('\n');
	fflush(stdout);
	doc_done = true;
}

const char *status_name(int code)
{
	switch (code) {
	case EXIT_OK:		return "ok";
	case EXIT_USAGE:	return "usage-error";
	case EXIT_OPEN:		return "unreachable";
	case EXIT_IO:		return "io-error";
	case EXIT_PI:		return "pi-failure";
	case EXIT_NOTSUP:	return "not-supported";
	case EXIT_INTR:		return "interrupted";
	}
	return "error";
}

static void error_members(const char *error, const char *msg)
{
	if (error)
		j_str("error", error);
	else
		j_null("error");
	j_str("message", msg);
}

void j_fail(int code, const char *error, const char *msg)
{
	if (!ctx.on || doc_done)
		return;
	if (depth > 0) {
		/*
		 * A document under way (tag get's list of tuples): close what
		 * is open, and end it with how the command ended.
		 */
		while (depth > 1)
			close_(closer[depth]);
		j_str("status", status_name(code));
		j_u64("exit_code", code);
		error_members(error, msg);
		j_end();
		j_done();
		return;
	}
	j_begin(NULL);
	if (ctx.command)
		j_str("command", ctx.command);
	else
		j_null("command");
	if (ctx.device)
		j_str("device", ctx.device);
	else
		j_null("device");
	j_str("status", "error");
	j_u64("exit_code", code);
	error_members(error, msg);
	j_end();
	j_done();
}
