// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * dioctl's helpers, below every command: messages and exit statuses
 * (die(), the errno names, the refusal of a device this user may not
 * open), numbers from the command line, the clock and buffers.  They call
 * only dioctl_json.c (the error document of --json).
 */
#include <errno.h>
#include <grp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dioctl_tool.h"

/* ---- messages ---- */

const char *err_text(int e)
{
	/* glibc's text for EILSEQ is about multibyte characters. */
	return e == EILSEQ ? "protection information check failed" : strerror(e);
}

const char *err_name(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "?";
}

int exit_code_of(int e)
{
	switch (e) {
	case EILSEQ:
		return EXIT_PI;
	case EOPNOTSUPP:
		return EXIT_NOTSUP;
	}
	return EXIT_IO;
}

/* Exit @code with @msg on stderr, and with --json the error document. */
static void __attribute__((noreturn)) die_msg(int code, int e, const char *msg)
{
	/* --json: one document on stdout whatever happens (dioctl(1)). */
	j_fail(code, e ? err_name(e) : NULL, msg);
	fflush(stdout);
	fprintf(stderr, "dioctl: %s\n", msg);
	exit(code);
}

void die(int code, int e, const char *fmt, ...)
{
	char msg[2048];
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = strlen(msg);
	if (e)
		snprintf(msg + n, sizeof(msg) - n, ": %s (%s)", err_text(e), err_name(e));
	die_msg(code, e, msg);
}

/* Whether the process has group @gid (effective or supplementary). */
static bool in_group(gid_t gid)
{
	gid_t groups[256];
	int n = getgroups(256, groups);

	if (getegid() == gid)
		return true;
	for (int i = 0; i < n; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/*
 * @path refused this process (EACCES, EPERM): exit 2 saying who may open
 * it (its group and mode) and what to do, not blaming a missing module.
 * @what: what failed ("open /dev/sdb").
 */
void die_access(int e, const char *path, const char *what)
{
	char msg[2048], grp[64], mode[11];
	const struct group *g;
	struct stat st;
	int n;

	n = snprintf(msg, sizeof(msg), "%s: %s (%s)", what, err_text(e), err_name(e));
	if (stat(path, &st))
		die_msg(EXIT_OPEN, e, msg);
	g = getgrgid(st.st_gid);
	if (g)
		snprintf(grp, sizeof(grp), "%s", g->gr_name);
	else
		snprintf(grp, sizeof(grp), "%u", (unsigned int)st.st_gid);
	snprintf(mode, sizeof(mode), "%c%c%c%c%c%c%c%c%c%c",
		 S_ISCHR(st.st_mode) ? 'c' : S_ISBLK(st.st_mode) ? 'b' : '-',
		 st.st_mode & S_IRUSR ? 'r' : '-', st.st_mode & S_IWUSR ? 'w' : '-',
		 st.st_mode & S_IXUSR ? 'x' : '-', st.st_mode & S_IRGRP ? 'r' : '-',
		 st.st_mode & S_IWGRP ? 'w' : '-', st.st_mode & S_IXGRP ? 'x' : '-',
		 st.st_mode & S_IROTH ? 'r' : '-', st.st_mode & S_IWOTH ? 'w' : '-',
		 st.st_mode & S_IXOTH ? 'x' : '-');
	n += snprintf(msg + n, sizeof(msg) - n, "; %s is group %s%s, mode %04o (%s)", path,
		      grp, g ? "" : " (a group with no name)",
		      (unsigned int)(st.st_mode & 07777), mode);
	if ((st.st_mode & (S_IRGRP | S_IWGRP)) != (S_IRGRP | S_IWGRP))
		snprintf(msg + n, sizeof(msg) - n, ", which lets no group member open it%s",
			 strcmp(path, "/dev/" DIO_BATCH_DEVNAME) ? "" :
			 " (the dio-batch-dkms package's udev rule makes it group "
			 DIO_BATCH_DEVNAME ", mode 0660); run dioctl as root or give "
			 "the device that group and mode");
	else if (!in_group(st.st_gid))
		snprintf(msg + n, sizeof(msg) - n, ": this user (uid %u) is not in group %s; "
			 "add it to that group (usermod -aG %s USER, then log in again) "
			 "or run dioctl as root", (unsigned int)geteuid(), grp, grp);
	else
		snprintf(msg + n, sizeof(msg) - n, ": this user is in group %s, yet the open "
			 "was refused (a security module, or a group added after this "
			 "login?)", grp);
	die_msg(EXIT_OPEN, e, msg);
}

/*
 * The control device refused this process (EACCES, EPERM: exit 2 naming
 * its group and mode), or is not there (exit 2, the module not loaded?):
 * errno @e of @what.
 */
void die_ctl(int e, const char *what)
{
	if (e == EACCES || e == EPERM)
		die_access(e, "/dev/" DIO_BATCH_DEVNAME, "cannot open /dev/" DIO_BATCH_DEVNAME);
	die(EXIT_OPEN, e, "%s (is the dio_batch module loaded?)", what);
}

/* ---- numbers, time and memory ---- */

/* "64K", "0x1000", "2M": bytes; a usage error on garbage and overflow. */
uint64_t parse_num(const char *s, const char *what)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *s == '-')
		usage_error("bad %s '%s'", what, s);
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (shift && !strcmp(end, "iB"))
		end += 2;
	if (*end || (v << shift) >> shift != v)
		usage_error("bad %s '%s'", what, s);
	return v << shift;
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void *xalloc(size_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len ? len : 1))
		die(EXIT_IO, ENOMEM, "allocating %zu bytes", len);
	memset(p, 0, len);
	return p;
}
