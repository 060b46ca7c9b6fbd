// SPDX-License-Identifier: MIT
/*
 * SQLite's speedtest1 (Debian's source, test/speedtest1.c) with the dio
 * VFS registered: speedtest1 calls sqlite3_register_cksumvfs() first thing
 * when built with SQLITE_CKSUMVFS_STATIC; the Makefile renames that call to
 * this function.  The aligned page allocator goes first (it must precede
 * SQLite's initialisation), so the database's pages reach the device
 * without a copy.  The same binary runs the default VFS's reference run
 * (no --vfs), so both runs differ in the VFS alone.  sqlite3_log()'s
 * messages, the VFS's reports among them, go to standard error: speedtest1
 * itself installs no log callback, and says only "cannot open" of a
 * device the VFS refused.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dio_sqlite.h"

int dio_speedtest1_register(const char *unused);

static void log_to_stderr(void *arg, int code, const char *msg)
{
	fprintf(stderr, "speedtest1: sqlite3_log: (%d) %s\n", code, msg);
}

int dio_speedtest1_register(const char *unused)
{
	int rc = dio_sqlite_config_memory();

	if (rc == SQLITE_OK)
		rc = sqlite3_config(SQLITE_CONFIG_LOG, log_to_stderr, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_config(SQLITE_CONFIG_URI, 1);
	if (rc == SQLITE_OK)
		rc = dio_sqlite_register(NULL, 0);
	if (rc != SQLITE_OK) {
		fprintf(stderr, "speedtest1: dio_sqlite: %s\n", sqlite3_errstr(rc));
		exit(1);
	}
	return SQLITE_OK;
}
