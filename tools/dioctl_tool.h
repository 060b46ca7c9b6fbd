/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * dioctl: what its source files share.  The commands call the helpers,
 * never the other way round:
 *
 *   dioctl.c         main, the command line, help; features, stat, query,
 *                    read, write, tag
 *   dioctl_scrub.c   scrub
 *   dioctl_repair.c  scrub --repair-from (called by dioctl_scrub.c only)
 *   -- the helpers --
 *   dioctl_dev.c     features, devices, request sizes, failures' reports
 *   dioctl_util.c    messages and exit statuses, numbers, time, buffers
 *   dioctl_json.c    JSON output (calls nothing of the tool)
 *
 * Each helper file calls only those listed below it.
 */
#ifndef DIOCTL_TOOL_H
#define DIOCTL_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dioctl.h"

#ifndef DIO_BATCH_VERSION
#define DIO_BATCH_VERSION "unknown"
#endif

/* Exit status, documented in dioctl(1). */
enum {
	EXIT_OK		= 0,
	EXIT_USAGE	= 1,	/* bad command line */
	EXIT_OPEN	= 2,	/* module or device cannot be reached or opened */
	EXIT_IO		= 3,	/* an I/O error (device, input or output file) */
	EXIT_PI		= 4,	/* an integrity (PI) failure was found */
	EXIT_NOTSUP	= 5,	/* module or device cannot do what was asked */
	EXIT_INTR	= 130,	/* scrub interrupted (no failure found so far) */
};

/* ---- dioctl_util.c ---- */

/* "dioctl: WHAT: TEXT (ENAME)" on stderr (no errno part when @e is 0), exit @code. */
void __attribute__((noreturn, format(printf, 3, 4)))
die(int code, int e, const char *fmt, ...);
/* die() with the exit status that errno @e stands for (EILSEQ: 4, ...). */
#define die_errno(e, ...) die(exit_code_of(e), (e), __VA_ARGS__)
int exit_code_of(int e);
#define usage_error(...) die(EXIT_USAGE, 0, __VA_ARGS__)
const char *err_text(int e);
const char *err_name(int e);
/*
 * @path refused this process (EACCES, EPERM): exit 2 saying who may open
 * it (its group and mode) and what to do.  @what: what failed ("open /dev/sdb").
 */
void __attribute__((noreturn)) die_access(int e, const char *path, const char *what);
/* /dev/dio_batch could not be opened: errno @e of @what, exit 2. */
void __attribute__((noreturn)) die_ctl(int e, const char *what);

uint64_t parse_num(const char *s, const char *what);
double now_s(void);
void *xalloc(size_t len);

/* ---- dioctl_dev.c ---- */

/* dio_pi_source_name(), and "dioctl", "unknown" for DIO_PI_SRC_NONE. */
const char *source_name(unsigned int s);
const char *source_text(unsigned int s);	/* long, for text reports */
/* "N blocks NOT checked: ..." of @n escaped tuples, without a newline. */
void print_unchecked(FILE *out, uint64_t n);
#define DIO_PI_SRC_DIOCTL 100			/* this tool's own verification */

struct dev {
	const char		*path;
	int			fd, ctx, h;
	struct dio_query	q;
	struct dio_pi_profile	p;
	bool			has_pi;		/* @p is valid */
	uint64_t		start;		/* partition start, bytes (@q's) */
};
void get_features(struct dio_features *f);
void dev_open(struct dev *d, const char *path, bool writable);
void dev_close(struct dev *d);

/* The options of every command (each takes its own subset). */
struct opts {
	const char	*cmd;
	bool		json;
	bool		write;
	uint64_t	offset, length;
	bool		have_offset, have_length;
	bool		random, have_data;
	uint64_t	seed;
	unsigned char	pattern;
	bool		pi, verify, raw, dump, fua;
	int		app_tag;	/* -1: none */
	unsigned int	app_mask;
	unsigned int	batch, depth;
	uint64_t	req_size;	/* 0: automatic */
	const char	*input, *output;
	uint64_t	range_start, range_end;
	bool		have_range, range_to_end;
	double		rate;		/* MB/s, 0: unlimited */
	uint64_t	lba, count;
	bool		have_lba, have_count;
	unsigned int	max_report;
	const char	*repair_from;	/* scrub --repair-from; NULL: none */
	bool		dry_run;	/* scrub --dry-run */
};

/*
 * Size of the requests for @o on @d: a multiple of @unit within the
 * device's and the module's limits (PI bytes included when @pi).
 */
uint64_t pick_req_size(const struct dev *d, const struct dio_features *f,
		       const struct opts *o, uint64_t unit, bool pi);

/*
 * One failing block (or a failed request the module could not narrow
 * down), for reports.  @offset is in bytes from the start of the device
 * given (a partition's own start); @interval counts from the whole disk's.
 */
struct failure {
	uint64_t	offset, length;
	uint64_t	interval;	/* DIO_PI_INTERVAL_UNKNOWN: not located */
	int		tag;		/* DIO_PI_TAG_*; NONE: not known */
	uint64_t	expected, actual;
	int		source;		/* DIO_PI_SRC_* or DIO_PI_SRC_DIOCTL */
	int		err;		/* EILSEQ, or an I/O error's errno */
	int		explain_err;	/* tag NONE: why dio_pi_explain_error() failed */
};
/*
 * The tag and values of the PI failure @r reports, into @e: the module's,
 * or for a read the device refused without a tag (NVMe before Linux 6.14)
 * dio_pi_explain_error()'s (NVMe passthrough).  Returns 0, or the errno
 * that says why the tag stays unknown (@e->tag DIO_PI_TAG_NONE).
 */
int dev_explain(const struct dev *d, const struct dio_request *r,
		struct dio_pi_error *e);
/* Why a refusal stays without its tag, as text, for dev_explain()'s @e. */
const char *explain_text(int e);
/* The failure @r (completed, result not its length) reports. */
void failure_from_req(const struct dev *d, const struct dio_request *r,
		      uint64_t off, uint64_t len, struct failure *f);
/* What a failure's report adds: NULL, or why its tag or block is not known. */
const char *failure_note(const struct failure *f);
void failure_json(const struct failure *f);		/* one of failures[] */
void failure_json_members(const struct failure *f);	/* the same, no braces */

/* ---- dioctl_scrub.c ---- */

int cmd_scrub(const char *path, const struct opts *o);

/* ---- dioctl_repair.c ---- */

/* scrub --repair-from SOURCE, one failing block at a time. */
enum {
	REPAIR_NONE,
	REPAIR_DONE,		/* written with FUA, read back verified */
	REPAIR_WOULD,		/* --dry-run: the copy verified, nothing written */
	REPAIR_COPY_BAD,	/* the copy does not verify: nothing written */
	REPAIR_SOURCE_ERROR,	/* the copy could not be read */
	REPAIR_WRITE_FAILED,
	REPAIR_READBACK_FAILED,
	REPAIR_NOT_TRIED,	/* the scrub was interrupted or stopped */
};
struct repair_result {
	int		outcome;	/* REPAIR_* */
	int		err;		/* errno, 0: none */
	char		why[320];	/* "": nothing to add */
};
struct source;
/*
 * Open SOURCE @path for repairs of @d (exits 2 when it cannot be opened),
 * read with PI when @pi and it has the same interval @unit; failures of at
 * most @max bytes; a stream starts at device byte @start, is drained to @end.
 */
struct source *source_open(const char *path, const struct dev *d, bool pi, uint64_t unit,
			   uint64_t max, uint64_t start, uint64_t end);
const char *source_kind(const struct source *src);	/* "device", "file", "stream" */
void repair_one(struct source *src, const struct dev *d, bool pi, const struct opts *o,
		const struct failure *f, struct repair_result *res);
/* Close @src; a stream (@drain: the scrub ran to its end) read up to END first. */
void source_close(struct source *src, bool drain);
const char *repair_outcome_name(int outcome);		/* JSON */
const char *repair_outcome_text(int outcome);		/* text */
void repair_json(const struct repair_result *r);	/* the member "repair" */

/* ---- dioctl_json.c ---- */

/*
 * JSON on stdout: one document, members added in order.  With --json,
 * die() prints the error document (j_fail()) unless a whole document is
 * out already: it ends a document under way with status, exit_code,
 * error and message, or prints one of its own, "status": "error".
 */
void j_set_mode(bool on);		/* --json given */
bool j_mode(void);
void j_set_command(const char *command);	/* NULL: not known */
void j_set_device(const char *device);
void j_fail(int code, const char *error, const char *msg);	/* error: an errno's name, or NULL */
const char *status_name(int code);	/* "ok", "io-error", ... of an exit status */
void j_begin(const char *key);		/* object; key NULL in arrays/top */
void j_end(void);
void j_abegin(const char *key);		/* array */
void j_aend(void);
void j_str(const char *key, const char *v);
void j_u64(const char *key, uint64_t v);
void j_i64(const char *key, int64_t v);
void j_dbl(const char *key, double v);
void j_bool(const char *key, bool v);
void j_null(const char *key);
void j_hex(const char *key, uint64_t v);	/* "0x..." string: exact for 64 bits */
void j_done(void);			/* final newline */

#endif
