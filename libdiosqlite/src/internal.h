/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libdiosqlite's internals: the volume (a device's layout and shared
 * state), its PI block I/O, and the failure log.
 */
#ifndef _DIOSQLITE_INTERNAL_H
#define _DIOSQLITE_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <sqlite3.h>
#include <dioctl.h>

#define DSQ_MAGIC		"DIOSQLv1"
#define DSQ_VERSION		1
/* The files of a volume; also the top two bits of every app tag. */
#define DSQ_SUPER		0
#define DSQ_MAIN		1
#define DSQ_JOURNAL		2
#define DSQ_WAL			3
#define DSQ_NFILES		4
/* The unit a journal's or WAL's app tag counts: 4 KiB of the file. */
#define DSQ_LOG_UNIT		4096
/* Where the files' regions start: the superblocks' slots lie before. */
#define DSQ_DATA_START		(1U << 20)
/* Superblock slot k is at k * DSQ_SLOT_STRIDE (at least the interval). */
#define DSQ_SLOT_STRIDE		4096

/* One region of the device: a file of the volume. */
struct dsq_region {
	uint64_t	start;
	uint64_t	length;
	uint64_t	size;
	uint32_t	exists;
	uint32_t	pad;
};

/*
 * The superblock, in the first bytes of slot 0 or 1 (the one with the
 * higher generation that passes its PI check wins), little-endian.
 */
struct dsq_super {
	char		magic[8];
	uint32_t	version;
	uint32_t	interval;
	uint64_t	generation;
	uint64_t	volume_id;
	struct dsq_region file[DSQ_NFILES];	/* [DSQ_SUPER] unused */
};

/*
 * What every process with the volume open shares, in the sidecar file's
 * first page (mapped): the files' current sizes (as a file system's inode
 * has them) and what the superblock last made durable.
 */
struct dsq_shared {
	uint64_t	volume_id;
	uint64_t	generation;	/* of the last superblock written */
	uint64_t	size[DSQ_NFILES];
	uint32_t	exists[DSQ_NFILES];
	uint64_t	durable_size[DSQ_NFILES];
	uint32_t	durable_exists[DSQ_NFILES];
};

/* One device of a volume: the primary, or its mirror. */
struct dsq_dev {
	char		*path;
	int		fd;
	int		ctx;
	int		handle;
	struct dio_query q;
	struct dio_pi_profile p;
	dev_t		rdev;
};

/* A volume open in this process: one per primary device, refcounted. */
struct dsq_vol {
	struct dsq_vol	*next;
	int		refs;
	pid_t		pid;
	struct dsq_dev	dev[2];		/* [1]: the mirror, when dev[1].path */
	int		ndev;
	uint32_t	interval;
	struct dsq_region region[DSQ_NFILES];
	char		*sidecar;	/* its path */
	int		side_fd;	/* holds the shared lock of "in use" */
	struct dsq_shared *shared;
	pthread_mutex_t	lock;		/* the superblock's writes */
	/* Pages written and read in place, and through a bounce buffer. */
	uint64_t	direct_writes, bounced_writes;
	uint64_t	direct_reads, bounced_reads;
	uint32_t	main_page_size;	/* from the database header; 0 unknown */
};

/* What a PI failure report says (report.c keeps them). */
struct dsq_failure {
	int64_t		when;		/* unix time */
	const char	*file;		/* "main", "journal", "wal", "super" */
	int64_t		page;		/* SQLite page (main) or unit */
	char		device[64];
	uint64_t	block;		/* logical block of the device */
	uint64_t	interval;	/* protection interval of the disk */
	const char	*tag;		/* "guard", "app", "ref", "unknown" */
	uint64_t	expected;
	uint64_t	actual;
	const char	*source;	/* "device", "module", "dio_sqlite" */
	int		repaired;	/* served from the mirror and rewritten */
};

/* volume.c */
int dsq_vol_get(const char *path, const char *mirror, int format,
		uint64_t journal_size, uint64_t wal_size, struct dsq_vol **out,
		char **why);
void dsq_vol_put(struct dsq_vol *v);
struct dsq_vol *dsq_vol_find(const char *path);
int dsq_vol_sync(struct dsq_vol *v, int file);
int dsq_vol_delete(struct dsq_vol *v, int file);
const char *dsq_file_name(int file);
int dsq_ofd_lock(int fd, int type, off_t start, off_t len, int wait);

/* pio.c */
int dsq_pread(struct dsq_vol *v, int file, void *buf, int amt, int64_t off);
int dsq_pwrite(struct dsq_vol *v, int file, const void *buf, int amt,
	       int64_t off);
int dsq_flush(struct dsq_vol *v);
int dsq_super_write(struct dsq_vol *v, int d, const void *buf, uint64_t off);
int dsq_super_read(struct dsq_vol *v, int d, void *buf, uint64_t off,
		   struct dsq_failure *f);
uint16_t dsq_app_tag(int file, uint64_t unit);

/* report.c */
void dsq_report(const struct dsq_failure *f);
int dsq_failures_register(sqlite3 *db);
int dsq_failures_auto(void);

#endif /* _DIOSQLITE_INTERNAL_H */
