// SPDX-License-Identifier: MIT
/*
 * SQLite's multi-process test, mptest (Debian's source, mptest/mptest.c),
 * with the dio VFS registered: the Makefile renames mptest's main() to
 * mptest_main() and its unlink() to dio_mptest_unlink(), both here.
 * mptest starts its client processes as itself, so each registers the VFS
 * too; run it with --vfs dio.
 *
 * mptest's first process deletes the database before it starts, so that
 * every run begins with none.  A database on a block device is not
 * deleted: its volume is formatted anew instead (format=1), which leaves
 * an empty database, as a deleted file would.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dio_sqlite.h"

int mptest_main(int argc, char **argv);
int dio_mptest_unlink(const char *path);

int dio_mptest_unlink(const char *path)
{
	struct stat st;
	sqlite3 *db;
	char *uri;
	int rc;

	if (stat(path, &st) || !S_ISBLK(st.st_mode))
		return unlink(path);
	uri = sqlite3_mprintf("file:%s?format=1", path);
	if (!uri) {
		errno = ENOMEM;
		return -1;
	}
	rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			     SQLITE_OPEN_URI, DIO_SQLITE_VFS_NAME);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "PRAGMA user_version", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		fprintf(stderr, "mptest: formatting %s: %s\n", path,
			db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
	sqlite3_close(db);
	sqlite3_free(uri);
	if (rc == SQLITE_OK)
		return 0;
	errno = rc == SQLITE_BUSY ? EBUSY : EIO;
	return -1;
}

int main(int argc, char **argv)
{
	int rc = dio_sqlite_config_memory();

	if (rc == SQLITE_OK)
		rc = dio_sqlite_register(NULL, 0);
	if (rc != SQLITE_OK) {
		fprintf(stderr, "mptest: dio_sqlite: %s\n", sqlite3_errstr(rc));
		return 1;
	}
	return mptest_main(argc, argv);
}
