/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libdiosqlite: a SQLite VFS that keeps a database, its rollback journal
 * and its WAL on a block device with T10 protection information, through
 * dio_batch (libdioctl).  Every block is written with PI that the library
 * generated from the page SQLite gave it, with reference tags that are the
 * blocks' own and application tags that name the file and page it belongs
 * to; every block read is checked (guard and reference tag by the module
 * and the device, the application tag here).  A failed check reaches SQLite
 * as SQLITE_IOERR_DATA, never as data; the exact report goes to
 * sqlite3_log() and to the table-valued function dio_pi_failures.
 *
 * Error convention: these functions return SQLite result codes (SQLITE_OK
 * or an error code), as SQLite's own interfaces do; they do not set errno.
 *
 * Filenames are block devices or partitions (a URI, file:/dev/sdb?vfs=dio,
 * with these parameters):
 *   format=1        write a new, empty volume (everything on it is lost)
 *   mirror=PATH     a second device of the same size or larger: every write
 *                   goes to both, a block that fails PI on the first is read
 *                   from the second, returned and repaired on the first
 *   journal_size=N, wal_size=N  bytes of the journal's and WAL's regions
 *                   when the volume is formatted (default: an eighth of the
 *                   device each, at most 256 MiB)
 * See dio_sqlite(7).
 */
#ifndef _DIO_SQLITE_H
#define _DIO_SQLITE_H

#include <sqlite3.h>

#ifndef DIO_PUBLIC
#define DIO_PUBLIC __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/**
 * DIO_SQLITE_VFS_NAME: the name dio_sqlite_register() gives the VFS by
 * default.
 */
#define DIO_SQLITE_VFS_NAME	"dio"

/**
 * dio_sqlite_register:
 * @name: the VFS's name (NULL: DIO_SQLITE_VFS_NAME)
 * @make_default: non-zero to make it the process's default VFS
 *
 * Registers the VFS with sqlite3_vfs_register(), and dio_pi_failures
 * (the PI failures and repairs the process has seen) as an auto-extension,
 * so that every connection opened afterwards has it.  Calling it again
 * with the same name does nothing more.
 *
 * Returns: SQLITE_OK, SQLITE_NOMEM, or the error of sqlite3_vfs_register().
 * Since: 1.1
 */
DIO_PUBLIC int dio_sqlite_register(const char *name, int make_default);

/**
 * dio_sqlite_config_memory:
 *
 * Gives SQLite an allocator whose blocks of a page or more are aligned to
 * 4096 bytes, and turns off the page cache's bulk allocation, so that
 * every page buffer starts on a 4 KiB boundary: pages are then written and
 * read in place, without a copy (a page in an unaligned buffer is copied
 * through an aligned one, its PI generated in the same pass).  Call it
 * before sqlite3_initialize() (or any other SQLite call that initialises
 * the library, dio_sqlite_register() among them).
 *
 * Returns: SQLITE_OK, or SQLITE_MISUSE when SQLite is already initialised.
 * Since: 1.1
 */
DIO_PUBLIC int dio_sqlite_config_memory(void);

/**
 * sqlite3_diosqlite_init:
 * @db: the connection that loads the extension
 * @err: where an error message goes
 * @api: SQLite's routines (unused: the library links libsqlite3 itself)
 *
 * The loadable extension's entry point (.load libdiosqlite): registers the
 * VFS as dio_sqlite_register(NULL, 0) does and dio_pi_failures on @db.
 *
 * Returns: SQLITE_OK_LOAD_PERMANENTLY (the VFS outlives @db), or an error.
 * Since: 1.1
 */
DIO_PUBLIC int sqlite3_diosqlite_init(sqlite3 *db, char **err,
				      const void *api);

#ifdef __cplusplus
}
#endif

#endif /* _DIO_SQLITE_H */
