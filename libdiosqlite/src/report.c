// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * PI failures: each one goes to sqlite3_log() as one line and into the
 * process's list (the last DSQ_KEEP), which the table-valued function
 * dio_pi_failures shows:
 *
 *   SELECT file, page, block, tag, expected, actual, found_by, repaired
 *     FROM dio_pi_failures;
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define DSQ_KEEP	1024

static pthread_mutex_t failures_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dsq_failure failures[DSQ_KEEP];
static uint64_t nr_failures;	/* ever reported; the last DSQ_KEEP kept */

void dsq_report(const struct dsq_failure *f)
{
	sqlite3_log(SQLITE_IOERR_DATA,
		    "dio_sqlite: PI check failed: %s page %lld, %s block %llu (interval %llu of the disk): %s tag expected %#llx, found %#llx, found by %s%s",
		    f->file, (long long)f->page, f->device,
		    (unsigned long long)f->block,
		    (unsigned long long)f->interval, f->tag,
		    (unsigned long long)f->expected,
		    (unsigned long long)f->actual, f->source,
		    f->repaired ? "; repaired from the mirror" : "");
	pthread_mutex_lock(&failures_lock);
	failures[nr_failures % DSQ_KEEP] = *f;
	nr_failures++;
	pthread_mutex_unlock(&failures_lock);
}

/* The virtual table: a snapshot of the list, taken when a scan starts. */
struct fail_cursor {
	sqlite3_vtab_cursor	base;
	struct dsq_failure	*rows;
	uint64_t		n, i;
};

enum { COL_TIME, COL_FILE, COL_PAGE, COL_DEVICE, COL_BLOCK, COL_INTERVAL,
       COL_TAG, COL_EXPECTED, COL_ACTUAL, COL_FOUND_BY, COL_REPAIRED };

static int f_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
		     sqlite3_vtab **out, char **err)
{
	sqlite3_vtab *t;
	int rc = sqlite3_declare_vtab(db,
		"CREATE TABLE x(time INTEGER, file TEXT, page INTEGER, device TEXT, "
		"block INTEGER, interval INTEGER, tag TEXT, expected INTEGER, "
		"actual INTEGER, found_by TEXT, repaired INTEGER)");

	if (rc != SQLITE_OK)
		return rc;
	t = sqlite3_malloc(sizeof(*t));
	if (!t)
		return SQLITE_NOMEM;
	memset(t, 0, sizeof(*t));
	*out = t;
	return SQLITE_OK;
}

static int f_disconnect(sqlite3_vtab *t)
{
	sqlite3_free(t);
	return SQLITE_OK;
}

static int f_best_index(sqlite3_vtab *t, sqlite3_index_info *info)
{
	info->estimatedCost = 10;
	info->estimatedRows = 10;
	return SQLITE_OK;
}

static int f_open(sqlite3_vtab *t, sqlite3_vtab_cursor **out)
{
	struct fail_cursor *c = sqlite3_malloc(sizeof(*c));

	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

static int f_close(sqlite3_vtab_cursor *cur)
{
	struct fail_cursor *c = (struct fail_cursor *)cur;

	free(c->rows);
	sqlite3_free(c);
	return SQLITE_OK;
}

static int f_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxs,
		    int argc, sqlite3_value **argv)
{
	struct fail_cursor *c = (struct fail_cursor *)cur;
	uint64_t first;

	free(c->rows);
	pthread_mutex_lock(&failures_lock);
	c->n = nr_failures < DSQ_KEEP ? nr_failures : DSQ_KEEP;
	first = nr_failures - c->n;
	c->rows = calloc(c->n ? c->n : 1, sizeof(*c->rows));
	for (uint64_t i = 0; c->rows && i < c->n; i++)
		c->rows[i] = failures[(first + i) % DSQ_KEEP];
	pthread_mutex_unlock(&failures_lock);
	c->i = 0;
	return c->rows ? SQLITE_OK : SQLITE_NOMEM;
}

static int f_next(sqlite3_vtab_cursor *cur)
{
	((struct fail_cursor *)cur)->i++;
	return SQLITE_OK;
}

static int f_eof(sqlite3_vtab_cursor *cur)
{
	struct fail_cursor *c = (struct fail_cursor *)cur;

	return c->i >= c->n;
}

static int f_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	struct fail_cursor *c = (struct fail_cursor *)cur;
	const struct dsq_failure *f = &c->rows[c->i];

	switch (col) {
	case COL_TIME:
		sqlite3_result_int64(ctx, f->when);
		break;
	case COL_FILE:
		sqlite3_result_text(ctx, f->file, -1, SQLITE_STATIC);
		break;
	case COL_PAGE:
		sqlite3_result_int64(ctx, f->page);
		break;
	case COL_DEVICE:
		sqlite3_result_text(ctx, f->device, -1, SQLITE_TRANSIENT);
		break;
	case COL_BLOCK:
		sqlite3_result_int64(ctx, (sqlite3_int64)f->block);
		break;
	case COL_INTERVAL:
		if (f->interval == DIO_PI_INTERVAL_UNKNOWN)
			sqlite3_result_null(ctx);
		else
			sqlite3_result_int64(ctx, (sqlite3_int64)f->interval);
		break;
	case COL_TAG:
		sqlite3_result_text(ctx, f->tag, -1, SQLITE_STATIC);
		break;
	case COL_EXPECTED:
		sqlite3_result_int64(ctx, (sqlite3_int64)f->expected);
		break;
	case COL_ACTUAL:
		sqlite3_result_int64(ctx, (sqlite3_int64)f->actual);
		break;
	case COL_FOUND_BY:
		sqlite3_result_text(ctx, f->source, -1, SQLITE_STATIC);
		break;
	case COL_REPAIRED:
		sqlite3_result_int(ctx, f->repaired);
		break;
	}
	return SQLITE_OK;
}

static int f_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = (sqlite3_int64)((struct fail_cursor *)cur)->i + 1;
	return SQLITE_OK;
}

static const sqlite3_module failures_module = {
	.iVersion = 0,
	.xCreate = NULL,	/* eponymous only: SELECT ... FROM dio_pi_failures */
	.xConnect = f_connect,
	.xBestIndex = f_best_index,
	.xDisconnect = f_disconnect,
	.xDestroy = f_disconnect,
	.xOpen = f_open,
	.xClose = f_close,
	.xFilter = f_filter,
	.xNext = f_next,
	.xEof = f_eof,
	.xColumn = f_column,
	.xRowid = f_rowid,
};

int dsq_failures_register(sqlite3 *db)
{
	return sqlite3_create_module(db, "dio_pi_failures", &failures_module, NULL);
}

static int auto_init(sqlite3 *db, char **err, const void *api)
{
	return dsq_failures_register(db);
}

int dsq_failures_auto(void)
{
	return sqlite3_auto_extension((void (*)(void))auto_init);
}
