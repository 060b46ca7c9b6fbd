// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The VFS: SQLite's files (the database, its rollback journal, its WAL)
 * mapped onto a volume's regions; locks as the unix VFS takes them, on the
 * volume's sidecar with OFD locks (per connection, so that connections in
 * one process exclude each other as processes do).  Temporary files and
 * everything that is not one of those three go to the default VFS.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dio_sqlite.h"
#include "internal.h"

/* The unix VFS's lock bytes. */
#define PENDING_BYTE	0x40000000
#define RESERVED_BYTE	(PENDING_BYTE + 1)
#define SHARED_FIRST	(PENDING_BYTE + 2)
#define SHARED_SIZE	510

struct dsq_file {
	sqlite3_file	base;
	struct dsq_vol	*vol;
	int		file;		/* DSQ_MAIN, DSQ_JOURNAL, DSQ_WAL */
	int		lock_fd;	/* main: this connection's OFD locks */
	int		level;		/* SQLITE_LOCK_* held */
};

static sqlite3_vfs dsq_vfs;
static sqlite3_vfs *base_vfs;	/* the default VFS when we registered */

static int lk(struct dsq_file *f, int type, off_t start, off_t len)
{
	return dsq_ofd_lock(f->lock_fd, type, start, len, 0);
}

static int x_close(sqlite3_file *pf)
{
	struct dsq_file *f = (struct dsq_file *)pf;

	if (f->lock_fd >= 0)
		close(f->lock_fd);
	dsq_vol_put(f->vol);
	return SQLITE_OK;
}

static int x_read(sqlite3_file *pf, void *buf, int amt, sqlite3_int64 off)
{
	struct dsq_file *f = (struct dsq_file *)pf;

	return dsq_pread(f->vol, f->file, buf, amt, off);
}

static int x_write(sqlite3_file *pf, const void *buf, int amt,
		   sqlite3_int64 off)
{
	struct dsq_file *f = (struct dsq_file *)pf;

	return dsq_pwrite(f->vol, f->file, buf, amt, off);
}

static int x_truncate(sqlite3_file *pf, sqlite3_int64 size)
{
	struct dsq_file *f = (struct dsq_file *)pf;
	uint64_t *p = &f->vol->shared->size[f->file];

	if (size < 0 || (uint64_t)size > f->vol->region[f->file].length)
		return SQLITE_IOERR_TRUNCATE;
	if ((uint64_t)size < __atomic_load_n(p, __ATOMIC_ACQUIRE))
		__atomic_store_n(p, (uint64_t)size, __ATOMIC_RELEASE);
	return SQLITE_OK;
}

static int x_sync(sqlite3_file *pf, int flags)
{
	struct dsq_file *f = (struct dsq_file *)pf;

	return dsq_vol_sync(f->vol, f->file);
}

static int x_file_size(sqlite3_file *pf, sqlite3_int64 *size)
{
	struct dsq_file *f = (struct dsq_file *)pf;

	*size = (sqlite3_int64)__atomic_load_n(&f->vol->shared->size[f->file],
					       __ATOMIC_ACQUIRE);
	return SQLITE_OK;
}

/* The unix VFS's locking protocol (unixLock()), on OFD locks. */
static int x_lock(sqlite3_file *pf, int level)
{
	struct dsq_file *f = (struct dsq_file *)pf;

	if (f->file != DSQ_MAIN || f->level >= level)
		return SQLITE_OK;
	if (level == SQLITE_LOCK_SHARED) {
		if (lk(f, F_RDLCK, PENDING_BYTE, 1))
			return SQLITE_BUSY;
		if (lk(f, F_RDLCK, SHARED_FIRST, SHARED_SIZE)) {
			lk(f, F_UNLCK, PENDING_BYTE, 1);
			return SQLITE_BUSY;
		}
		lk(f, F_UNLCK, PENDING_BYTE, 1);
		f->level = SQLITE_LOCK_SHARED;
		return SQLITE_OK;
	}
	if (level == SQLITE_LOCK_RESERVED) {
		if (lk(f, F_WRLCK, RESERVED_BYTE, 1))
			return SQLITE_BUSY;
		f->level = SQLITE_LOCK_RESERVED;
		return SQLITE_OK;
	}
	/* EXCLUSIVE, through PENDING: no new readers while we wait. */
	if (f->level < SQLITE_LOCK_PENDING) {
		if (lk(f, F_WRLCK, PENDING_BYTE, 1))
			return SQLITE_BUSY;
		f->level = SQLITE_LOCK_PENDING;
	}
	if (level == SQLITE_LOCK_PENDING)
		return SQLITE_OK;
	if (lk(f, F_WRLCK, SHARED_FIRST, SHARED_SIZE))
		return SQLITE_BUSY;
	f->level = SQLITE_LOCK_EXCLUSIVE;
	return SQLITE_OK;
}

static int x_unlock(sqlite3_file *pf, int level)
{
	struct dsq_file *f = (struct dsq_file *)pf;

	if (f->file != DSQ_MAIN || f->level <= level)
		return SQLITE_OK;
	if (level == SQLITE_LOCK_SHARED) {
		if (f->level >= SQLITE_LOCK_EXCLUSIVE &&
		    lk(f, F_RDLCK, SHARED_FIRST, SHARED_SIZE))
			return SQLITE_IOERR_RDLOCK;
		lk(f, F_UNLCK, PENDING_BYTE, 2);	/* PENDING, RESERVED */
		f->level = SQLITE_LOCK_SHARED;
		return SQLITE_OK;
	}
	lk(f, F_UNLCK, PENDING_BYTE, 2 + SHARED_SIZE);
	f->level = SQLITE_LOCK_NONE;
	return SQLITE_OK;
}

static int x_check_reserved(sqlite3_file *pf, int *out)
{
	struct dsq_file *f = (struct dsq_file *)pf;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = RESERVED_BYTE, .l_len = 1 };

	*out = 0;
	if (f->file != DSQ_MAIN)
		return SQLITE_OK;
	if (f->level >= SQLITE_LOCK_RESERVED) {
		*out = 1;
		return SQLITE_OK;
	}
	if (fcntl(f->lock_fd, F_OFD_GETLK, &fl))
		return SQLITE_IOERR_CHECKRESERVEDLOCK;
	*out = fl.l_type != F_UNLCK;
	return SQLITE_OK;
}

/*
 * PRAGMA page_size=N refuses a size that is not a multiple of the
 * protection interval; PRAGMA dio_stats tells how many pages went in
 * place and how many through a bounce buffer.
 */
static int fcntl_pragma(struct dsq_file *f, char **a)
{
	struct dsq_vol *v = f->vol;

	if (!sqlite3_stricmp(a[1], "page_size") && a[2]) {
		long ps = strtol(a[2], NULL, 10);

		if (ps > 0 && ps % v->interval) {
			a[0] = sqlite3_mprintf("dio_sqlite: page size %ld is not a multiple of the protection interval of %s (%u bytes)",
					       ps, v->dev[0].path, v->interval);
			return SQLITE_ERROR;
		}
		return SQLITE_NOTFOUND;
	}
	if (!sqlite3_stricmp(a[1], "dio_stats")) {
		a[0] = sqlite3_mprintf("direct_writes=%llu bounced_writes=%llu direct_reads=%llu bounced_reads=%llu interval=%u devices=%d",
				       (unsigned long long)v->direct_writes,
				       (unsigned long long)v->bounced_writes,
				       (unsigned long long)v->direct_reads,
				       (unsigned long long)v->bounced_reads,
				       v->interval, v->ndev);
		return SQLITE_OK;
	}
	return SQLITE_NOTFOUND;
}

static int x_file_control(sqlite3_file *pf, int op, void *arg)
{
	struct dsq_file *f = (struct dsq_file *)pf;

	switch (op) {
	case SQLITE_FCNTL_PRAGMA:
		return fcntl_pragma(f, arg);
	case SQLITE_FCNTL_VFSNAME:
		*(char **)arg = sqlite3_mprintf("%s", dsq_vfs.zName);
		return SQLITE_OK;
	case SQLITE_FCNTL_LOCKSTATE:
		*(int *)arg = f->level;
		return SQLITE_OK;
	}
	return SQLITE_NOTFOUND;
}

static int x_sector_size(sqlite3_file *pf)
{
	return (int)((struct dsq_file *)pf)->vol->interval;
}

static int x_device_characteristics(sqlite3_file *pf)
{
	/*
	 * SAFE_APPEND: a file's size becomes durable only in the superblock
	 * that xSync writes after flushing the file's data, so after a power
	 * cut a file never covers data that did not reach the medium.  With
	 * it SQLite does not go back to a journal's header to write the
	 * number of its records between two syncs: a write into an interval
	 * already made durable, which a power cut could leave torn (the new
	 * data under the old PI, or the other way round), and SQLite could
	 * then not read the hot journal it needs (tests/guest/t_powercut.c
	 * found it).  It finds the records by their checksums instead.
	 * Not POWERSAFE_OVERWRITE: a write of part of an interval rewrites
	 * the interval (its PI covers all of it), so SQLite should pad what
	 * it can to the sector size, the interval.
	 */
	return SQLITE_IOCAP_SAFE_APPEND;
}

static const sqlite3_io_methods dsq_io = {
	.iVersion = 1,
	.xClose = x_close,
	.xRead = x_read,
	.xWrite = x_write,
	.xTruncate = x_truncate,
	.xSync = x_sync,
	.xFileSize = x_file_size,
	.xLock = x_lock,
	.xUnlock = x_unlock,
	.xCheckReservedLock = x_check_reserved,
	.xFileControl = x_file_control,
	.xSectorSize = x_sector_size,
	.xDeviceCharacteristics = x_device_characteristics,
};

/*
 * Which of a volume's files @name is: DSQ_MAIN for a block device,
 * DSQ_JOURNAL or DSQ_WAL for one with "-journal" or "-wal" appended (the
 * device's path is then copied to @dev), -1 for anything else.
 */
static int which(const char *name, char *dev, size_t devlen)
{
	static const struct { const char *sfx; int file; } sfx[] = {
		{ "-journal", DSQ_JOURNAL }, { "-wal", DSQ_WAL },
	};
	struct stat st;
	size_t n;

	if (!name)
		return -1;
	n = strlen(name);
	for (unsigned int i = 0; i < 2; i++) {
		size_t k = strlen(sfx[i].sfx);

		if (n > k && n - k < devlen && !strcmp(name + n - k, sfx[i].sfx)) {
			memcpy(dev, name, n - k);
			dev[n - k] = 0;
			if (!stat(dev, &st) && S_ISBLK(st.st_mode))
				return sfx[i].file;
		}
	}
	if (n < devlen && !stat(name, &st) && S_ISBLK(st.st_mode)) {
		memcpy(dev, name, n + 1);
		return DSQ_MAIN;
	}
	return -1;
}

static int x_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *pf,
		  int flags, int *out_flags)
{
	struct dsq_file *f = (struct dsq_file *)pf;
	const char *mirror = NULL;
	char dev[4096], *why = NULL;
	int file = which(name, dev, sizeof(dev)), fmt = 0, rc;
	sqlite3_int64 jsz = 0, wsz = 0;

	memset(f, 0, sizeof(*f));
	f->lock_fd = -1;
	if (file < 0 || !(flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_MAIN_JOURNAL |
				   SQLITE_OPEN_WAL)))
		return base_vfs->xOpen(base_vfs, name, pf, flags, out_flags);
	if (file == DSQ_MAIN) {
		mirror = sqlite3_uri_parameter(name, "mirror");
		fmt = sqlite3_uri_boolean(name, "format", 0);
		jsz = sqlite3_uri_int64(name, "journal_size", 0);
		wsz = sqlite3_uri_int64(name, "wal_size", 0);
	}
	rc = dsq_vol_get(dev, mirror, fmt, (uint64_t)jsz, (uint64_t)wsz,
			 &f->vol, &why);
	if (rc != SQLITE_OK) {
		sqlite3_log(rc, "dio_sqlite: %s", why ? why : "cannot open");
		sqlite3_free(why);
		return rc;
	}
	f->file = file;
	if (file == DSQ_MAIN) {
		f->lock_fd = open(f->vol->sidecar, O_RDWR | O_CLOEXEC);
		if (f->lock_fd < 0) {
			dsq_vol_put(f->vol);
			return SQLITE_CANTOPEN;
		}
	}
	if (flags & SQLITE_OPEN_CREATE)
		f->vol->shared->exists[file] = 1;
	f->base.pMethods = &dsq_io;
	if (out_flags)
		*out_flags = flags;
	return SQLITE_OK;
}

/* The volume of this process on @dev, with a reference, or NULL. */
static struct dsq_vol *find_vol(const char *dev)
{
	return dsq_vol_find(dev);
}

static int x_delete(sqlite3_vfs *vfs, const char *name, int sync_dir)
{
	char dev[4096];
	int file = which(name, dev, sizeof(dev)), rc;
	struct dsq_vol *v;

	if (file < 0)
		return base_vfs->xDelete(base_vfs, name, sync_dir);
	v = find_vol(dev);
	if (!v)
		return SQLITE_IOERR_DELETE_NOENT;
	rc = dsq_vol_delete(v, file);
	dsq_vol_put(v);
	return rc;
}

static int x_access(sqlite3_vfs *vfs, const char *name, int flags, int *out)
{
	char dev[4096];
	int file = which(name, dev, sizeof(dev));
	struct dsq_vol *v;

	if (file < 0)
		return base_vfs->xAccess(base_vfs, name, flags, out);
	if (file == DSQ_MAIN || flags == SQLITE_ACCESS_READWRITE) {
		*out = !access(dev, flags == SQLITE_ACCESS_READWRITE ?
			       R_OK | W_OK : F_OK);
		return SQLITE_OK;
	}
	v = find_vol(dev);
	*out = v && v->shared->exists[file];
	if (v)
		dsq_vol_put(v);
	return SQLITE_OK;
}

static int x_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	char dev[4096];

	if (which(name, dev, sizeof(dev)) == DSQ_MAIN) {
		sqlite3_snprintf(n, out, "%s", name);
		return SQLITE_OK;
	}
	return base_vfs->xFullPathname(base_vfs, name, n, out);
}

static void *x_dlopen(sqlite3_vfs *vfs, const char *name)
{
	return base_vfs->xDlOpen(base_vfs, name);
}

static void x_dlerror(sqlite3_vfs *vfs, int n, char *msg)
{
	base_vfs->xDlError(base_vfs, n, msg);
}

static void (*x_dlsym(sqlite3_vfs *vfs, void *h, const char *sym))(void)
{
	return base_vfs->xDlSym(base_vfs, h, sym);
}

static void x_dlclose(sqlite3_vfs *vfs, void *h)
{
	base_vfs->xDlClose(base_vfs, h);
}

static int x_randomness(sqlite3_vfs *vfs, int n, char *out)
{
	return base_vfs->xRandomness(base_vfs, n, out);
}

static int x_sleep(sqlite3_vfs *vfs, int us)
{
	return base_vfs->xSleep(base_vfs, us);
}

static int x_current_time(sqlite3_vfs *vfs, double *t)
{
	return base_vfs->xCurrentTime(base_vfs, t);
}

static int x_last_error(sqlite3_vfs *vfs, int n, char *msg)
{
	return base_vfs->xGetLastError ? base_vfs->xGetLastError(base_vfs, n, msg) : 0;
}

static int x_current_time64(sqlite3_vfs *vfs, sqlite3_int64 *t)
{
	return base_vfs->xCurrentTimeInt64(base_vfs, t);
}

static sqlite3_vfs dsq_vfs = {
	.iVersion = 2,
	.szOsFile = 0,		/* set at registration */
	.mxPathname = 4096,
	.zName = DIO_SQLITE_VFS_NAME,
	.xOpen = x_open,
	.xDelete = x_delete,
	.xAccess = x_access,
	.xFullPathname = x_full_pathname,
	.xDlOpen = x_dlopen,
	.xDlError = x_dlerror,
	.xDlSym = x_dlsym,
	.xDlClose = x_dlclose,
	.xRandomness = x_randomness,
	.xSleep = x_sleep,
	.xCurrentTime = x_current_time,
	.xGetLastError = x_last_error,
	.xCurrentTimeInt64 = x_current_time64,
};

int dio_sqlite_register(const char *name, int make_default)
{
	static pthread_mutex_t once = PTHREAD_MUTEX_INITIALIZER;
	int rc = SQLITE_OK;

	pthread_mutex_lock(&once);
	if (base_vfs) {
		pthread_mutex_unlock(&once);
		return SQLITE_OK;
	}
	base_vfs = sqlite3_vfs_find(NULL);
	if (!base_vfs) {
		pthread_mutex_unlock(&once);
		return SQLITE_ERROR;
	}
	if (name) {
		dsq_vfs.zName = strdup(name);
		if (!dsq_vfs.zName)
			rc = SQLITE_NOMEM;
	}
	dsq_vfs.szOsFile = base_vfs->szOsFile > (int)sizeof(struct dsq_file) ?
		base_vfs->szOsFile : (int)sizeof(struct dsq_file);
	if (rc == SQLITE_OK)
		rc = sqlite3_vfs_register(&dsq_vfs, make_default);
	if (rc == SQLITE_OK)
		rc = dsq_failures_auto();
	if (rc != SQLITE_OK)
		base_vfs = NULL;
	pthread_mutex_unlock(&once);
	return rc;
}

/* dio_sqlite_config_memory(): page-sized blocks aligned to 4 KiB. */
static void *am_malloc(int n)
{
	void *p;

	if (n < 512)
		return malloc(n);
	if (posix_memalign(&p, n < 4096 ? 512 : 4096, n))
		return NULL;
	return p;
}

static void am_free(void *p)
{
	free(p);
}

static int am_size(void *p)
{
	return p ? (int)malloc_usable_size(p) : 0;
}

static void *am_realloc(void *p, int n)
{
	void *q;
	int old;

	if (n < 512)
		return realloc(p, n);
	q = am_malloc(n);
	if (!q)
		return NULL;
	old = am_size(p);
	if (p)
		memcpy(q, p, old < n ? old : n);
	free(p);
	return q;
}

static int am_roundup(int n)
{
	return (n + 7) & ~7;
}

static int am_init(void *unused)
{
	return SQLITE_OK;
}

static void am_shutdown(void *unused)
{
}

int dio_sqlite_config_memory(void)
{
	static const sqlite3_mem_methods m = {
		am_malloc, am_free, am_realloc, am_size, am_roundup,
		am_init, am_shutdown, NULL,
	};
	int rc = sqlite3_config(SQLITE_CONFIG_MALLOC, &m);

	if (rc != SQLITE_OK)
		return rc;
	/* No bulk page allocation: each page its own (aligned) block. */
	return sqlite3_config(SQLITE_CONFIG_PAGECACHE, NULL, 0, 0);
}

int sqlite3_diosqlite_init(sqlite3 *db, char **err, const void *api)
{
	int rc = dio_sqlite_register(NULL, 0);

	if (rc == SQLITE_OK)
		rc = dsq_failures_register(db);
	if (rc != SQLITE_OK) {
		if (err)
			*err = sqlite3_mprintf("dio_sqlite: %s", sqlite3_errstr(rc));
		return rc;
	}
	return SQLITE_OK_LOAD_PERMANENTLY;
}
