// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * A volume: a block device with PI (and optionally its mirror) laid out
 * for one SQLite database.
 *
 *   0 and 4 KiB      superblock slots 0 and 1, one protection interval each;
 *                    a write goes to the slot after the last one, so a torn
 *                    write (which PI catches) leaves the other one whole
 *   1 MiB            the database's region, then the journal's, the WAL's
 *
 * The superblock holds the regions and the files' sizes as they were
 * when last made durable (xSync, xDelete).  The current sizes, which every
 * process with the volume open must see at once, as a file system's inode
 * shows them, live in a sidecar file in /dev/shm named after the volume
 * and device, mapped shared; the first process to open it (the one that
 * gets the write lock of its "in use" byte) loads it from the superblock.
 * The sidecar also carries the database's locks (OFD locks, as the unix
 * VFS's locks on the database file).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* Bytes of the sidecar: the "in use" lock and the superblock writers'. */
#define DSQ_LOCK_INUSE		0x30000000
#define DSQ_LOCK_SUPER		0x30000001

static pthread_mutex_t vols_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dsq_vol *vols;

const char *dsq_file_name(int file)
{
	static const char *const names[] = { "super", "main", "journal", "wal" };

	return file >= 0 && file < DSQ_NFILES ? names[file] : "?";
}

/*
 * An OFD lock of @type on [@start, @start + @len) of @fd, waiting for it
 * when @wait: 0, or -1 with errno (fcntl(2)).  Held by the open file
 * description, so that each connection's locks are its own, also within
 * one process.
 */
int dsq_ofd_lock(int fd, int type, off_t start, off_t len, int wait)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
			    .l_start = start, .l_len = len };

	return fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl);
}

static void dev_close(struct dsq_dev *d)
{
	if (d->ctx >= 0)
		sys_dio_exit(d->ctx);
	if (d->fd >= 0)
		close(d->fd);
	free(d->path);
	d->path = NULL;
	d->fd = d->ctx = -1;
}

/*
 * Open @path through dio_batch: a context shared by the user's processes
 * that use the same device (so that they share its claim), a handle, and
 * the device's PI profile.
 */
static int dev_open(struct dsq_dev *d, const char *path, char **why)
{
	struct stat st;
	uint64_t key;

	d->fd = d->ctx = -1;
	d->path = strdup(path);
	if (!d->path)
		return SQLITE_NOMEM;
	d->fd = open(path, O_RDWR | O_CLOEXEC);
	if (d->fd < 0 || fstat(d->fd, &st)) {
		*why = sqlite3_mprintf("%s: %s", path, strerror(errno));
		return SQLITE_CANTOPEN;
	}
	if (!S_ISBLK(st.st_mode)) {
		*why = sqlite3_mprintf("%s is not a block device", path);
		return SQLITE_CANTOPEN;
	}
	d->rdev = st.st_rdev;
	key = 0x44534c5100000000ULL ^ (uint64_t)st.st_rdev;
	d->ctx = sys_dio_init(key, DIO_CREAT);
	if (d->ctx < 0) {
		*why = sqlite3_mprintf("%s: dio_batch context: %s", path,
				       strerror(errno));
		return SQLITE_CANTOPEN;
	}
	d->handle = sys_dio_open(d->ctx, d->fd, 0);
	if (d->handle < 0) {
		*why = sqlite3_mprintf("%s: dio_batch open: %s%s", path,
				       strerror(errno),
				       errno == EBUSY ? " (mounted or in use)" : "");
		return errno == EBUSY ? SQLITE_BUSY : SQLITE_CANTOPEN;
	}
	memset(&d->q, 0, sizeof(d->q));
	d->q.size = sizeof(d->q);
	if (sys_dio_query(d->ctx, d->handle, &d->q)) {
		*why = sqlite3_mprintf("%s: query: %s", path, strerror(errno));
		return SQLITE_CANTOPEN;
	}
	if (dio_pi_profile_from_query(&d->q, &d->p)) {
		*why = sqlite3_mprintf("%s has no protection information this library handles",
				       path);
		return SQLITE_CANTOPEN;
	}
	return SQLITE_OK;
}

/* The superblock slot @slot of device @d into @s: 0, or -errno. */
static int super_read(struct dsq_vol *v, int d, int slot, struct dsq_super *s,
		      int *blank)
{
	struct dsq_failure f;
	unsigned char *buf;
	int ret;

	if (posix_memalign((void **)&buf, 4096, v->interval))
		return -ENOMEM;
	ret = dsq_super_read(v, d, buf, (uint64_t)slot * DSQ_SLOT_STRIDE, &f);
	if (ret == -EILSEQ)
		dsq_report(&f);
	if (!ret) {
		*blank = 1;
		for (uint32_t i = 0; i < v->interval; i++)
			if (buf[i])
				*blank = 0;
		memcpy(s, buf, sizeof(*s));
		if (memcmp(s->magic, DSQ_MAGIC, 8) || s->version != DSQ_VERSION ||
		    s->interval != v->interval)
			ret = -ENOENT;
	}
	free(buf);
	return ret;
}

static int super_write(struct dsq_vol *v, const struct dsq_super *s, int slot)
{
	unsigned char *buf;
	int ret = 0;

	if (posix_memalign((void **)&buf, 4096, v->interval))
		return -ENOMEM;
	memset(buf, 0, v->interval);
	memcpy(buf, s, sizeof(*s));
	for (int d = 0; d < v->ndev && !ret; d++)
		ret = dsq_super_write(v, d, buf, (uint64_t)slot * DSQ_SLOT_STRIDE);
	free(buf);
	return ret;
}

/* The superblock of the shared state's durable sizes, written. */
static int super_commit(struct dsq_vol *v)
{
	struct dsq_shared *sh = v->shared;
	struct dsq_super s;
	int ret;

	memset(&s, 0, sizeof(s));
	memcpy(s.magic, DSQ_MAGIC, 8);
	s.version = DSQ_VERSION;
	s.interval = v->interval;
	s.volume_id = sh->volume_id;
	s.generation = sh->generation + 1;
	for (int i = 1; i < DSQ_NFILES; i++) {
		s.file[i] = v->region[i];
		s.file[i].size = sh->durable_size[i];
		s.file[i].exists = sh->durable_exists[i];
	}
	ret = super_write(v, &s, (int)(s.generation & 1));
	if (!ret)
		sh->generation = s.generation;
	return ret;
}

/* A new volume's superblock: regions sized from the device. */
static int format(struct dsq_vol *v, uint64_t jsz, uint64_t wsz,
		  struct dsq_super *s, char **why)
{
	uint64_t cap = v->dev[0].q.capacity, dflt, mib = 1 << 20;
	int ret;

	dflt = cap / 8 / mib * mib;
	if (dflt > 256 * mib)
		dflt = 256 * mib;
	jsz = jsz ? (jsz + mib - 1) / mib * mib : dflt;
	wsz = wsz ? (wsz + mib - 1) / mib * mib : dflt;
	if (cap < DSQ_DATA_START + jsz + wsz + 2 * mib || !jsz || !wsz) {
		*why = sqlite3_mprintf("%s is too small (%llu bytes) for a volume",
				       v->dev[0].path, (unsigned long long)cap);
		return SQLITE_CANTOPEN;
	}
	for (int d = 1; d < v->ndev; d++)
		if (v->dev[d].q.capacity < cap || v->dev[d].p.interval != v->interval) {
			*why = sqlite3_mprintf("mirror %s must be as large as %s, with the same protection interval",
					       v->dev[d].path, v->dev[0].path);
			return SQLITE_CANTOPEN;
		}
	memset(s, 0, sizeof(*s));
	memcpy(s->magic, DSQ_MAGIC, 8);
	s->version = DSQ_VERSION;
	s->interval = v->interval;
	if (getrandom(&s->volume_id, sizeof(s->volume_id), 0) != sizeof(s->volume_id))
		s->volume_id = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	s->file[DSQ_MAIN].start = DSQ_DATA_START;
	s->file[DSQ_MAIN].length = cap - DSQ_DATA_START - jsz - wsz;
	s->file[DSQ_MAIN].length -= s->file[DSQ_MAIN].length % mib;
	s->file[DSQ_MAIN].exists = 1;
	s->file[DSQ_JOURNAL].start = DSQ_DATA_START + s->file[DSQ_MAIN].length;
	s->file[DSQ_JOURNAL].length = jsz;
	s->file[DSQ_WAL].start = s->file[DSQ_JOURNAL].start + jsz;
	s->file[DSQ_WAL].length = wsz;
	/* Slot 1 first, generation 1; then slot 0, generation 2. */
	s->generation = 1;
	ret = super_write(v, s, 1);
	s->generation = 2;
	if (!ret)
		ret = super_write(v, s, 0);
	if (!ret)
		ret = dsq_flush(v) == SQLITE_OK ? 0 : -EIO;
	if (ret) {
		*why = sqlite3_mprintf("formatting %s: %s", v->dev[0].path,
				       strerror(-ret));
		return SQLITE_IOERR_WRITE;
	}
	return SQLITE_OK;
}

/* Find the volume's superblock, or make one: an SQLite code. */
static int load(struct dsq_vol *v, int want_format, uint64_t jsz, uint64_t wsz,
		struct dsq_super *out, char **why)
{
	struct dsq_super s[2];
	int ok[2], blank[2] = { 0, 0 }, best = -1;
	struct dio_stat st = { .size = sizeof(st) };

	for (int i = 0; i < 2; i++) {
		ok[i] = !super_read(v, 0, i, &s[i], &blank[i]);
		if (ok[i] && (best < 0 || s[i].generation > s[best].generation))
			best = i;
	}
	if (want_format || (best < 0 && blank[0] && blank[1])) {
		/* Never under another process's feet. */
		if (!sys_dio_stat(v->dev[0].ctx, &st) && st.nr_descriptors > 1) {
			*why = sqlite3_mprintf("%s is in use by another process: not formatted",
					       v->dev[0].path);
			return SQLITE_BUSY;
		}
		return format(v, jsz, wsz, out, why);
	}
	if (best < 0) {
		*why = sqlite3_mprintf("%s holds no dio_sqlite volume (open it with format=1 to make one; everything on it is lost)",
				       v->dev[0].path);
		return SQLITE_CANTOPEN;
	}
	*out = s[best];
	return SQLITE_OK;
}

/* Map the sidecar; load it from @s when this process is its first user. */
static int sidecar(struct dsq_vol *v, const struct dsq_super *s, char **why)
{
	struct dsq_shared *sh;
	int first;

	v->sidecar = sqlite3_mprintf("/dev/shm/dio_sqlite-%016llx-%u_%u",
				     (unsigned long long)s->volume_id,
				     major(v->dev[0].rdev), minor(v->dev[0].rdev));
	if (!v->sidecar)
		return SQLITE_NOMEM;
	v->side_fd = open(v->sidecar, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (v->side_fd < 0 || ftruncate(v->side_fd, 4096)) {
		*why = sqlite3_mprintf("%s: %s", v->sidecar, strerror(errno));
		return SQLITE_CANTOPEN;
	}
	sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, v->side_fd, 0);
	if (sh == MAP_FAILED) {
		*why = sqlite3_mprintf("%s: mmap: %s", v->sidecar, strerror(errno));
		return SQLITE_CANTOPEN;
	}
	v->shared = sh;
	first = !dsq_ofd_lock(v->side_fd, F_WRLCK, DSQ_LOCK_INUSE, 1, 0);
	if (first) {
		memset(sh, 0, sizeof(*sh));
		sh->volume_id = s->volume_id;
		sh->generation = s->generation;
		for (int i = 1; i < DSQ_NFILES; i++) {
			sh->size[i] = sh->durable_size[i] = s->file[i].size;
			sh->exists[i] = sh->durable_exists[i] = s->file[i].exists;
		}
	}
	/* Shared "in use" (waits for a first user still loading it). */
	if (dsq_ofd_lock(v->side_fd, F_RDLCK, DSQ_LOCK_INUSE, 1, 1)) {
		*why = sqlite3_mprintf("%s: lock: %s", v->sidecar, strerror(errno));
		return SQLITE_CANTOPEN;
	}
	return SQLITE_OK;
}

static void vol_free(struct dsq_vol *v)
{
	if (v->shared)
		munmap(v->shared, 4096);
	if (v->side_fd >= 0)
		close(v->side_fd);
	sqlite3_free(v->sidecar);
	for (int d = 0; d < 2; d++)
		if (v->dev[d].path)
			dev_close(&v->dev[d]);
	pthread_mutex_destroy(&v->lock);
	free(v);
}

int dsq_vol_get(const char *path, const char *mirror, int want_format,
		uint64_t jsz, uint64_t wsz, struct dsq_vol **out, char **why)
{
	struct dsq_super s;
	struct dsq_vol *v;
	struct stat st;
	int rc;

	*why = NULL;
	if (stat(path, &st)) {
		*why = sqlite3_mprintf("%s: %s", path, strerror(errno));
		return SQLITE_CANTOPEN;
	}
	pthread_mutex_lock(&vols_lock);
	for (v = vols; v; v = v->next)
		if (v->dev[0].rdev == st.st_rdev && v->pid == getpid())
			break;
	if (v) {
		if (want_format) {
			pthread_mutex_unlock(&vols_lock);
			*why = sqlite3_mprintf("%s is open: not formatted", path);
			return SQLITE_BUSY;
		}
		v->refs++;
		pthread_mutex_unlock(&vols_lock);
		*out = v;
		return SQLITE_OK;
	}
	v = calloc(1, sizeof(*v));
	if (!v) {
		pthread_mutex_unlock(&vols_lock);
		return SQLITE_NOMEM;
	}
	pthread_mutex_init(&v->lock, NULL);
	v->side_fd = -1;
	v->dev[0].fd = v->dev[0].ctx = v->dev[1].fd = v->dev[1].ctx = -1;
	v->pid = getpid();
	v->refs = 1;
	v->ndev = 1;
	rc = dev_open(&v->dev[0], path, why);
	if (rc == SQLITE_OK && mirror) {
		v->ndev = 2;
		rc = dev_open(&v->dev[1], mirror, why);
	}
	if (rc != SQLITE_OK)
		goto fail;
	v->interval = v->dev[0].p.interval;
	if (v->ndev == 2 && v->dev[1].p.interval != v->interval) {
		*why = sqlite3_mprintf("mirror %s has another protection interval than %s",
				       mirror, path);
		rc = SQLITE_CANTOPEN;
		goto fail;
	}
	rc = load(v, want_format, jsz, wsz, &s, why);
	if (rc != SQLITE_OK)
		goto fail;
	for (int i = 1; i < DSQ_NFILES; i++)
		v->region[i] = s.file[i];
	if (v->ndev == 2 &&
	    v->dev[1].q.capacity < s.file[DSQ_WAL].start + s.file[DSQ_WAL].length) {
		*why = sqlite3_mprintf("mirror %s is smaller than the volume on %s",
				       mirror, path);
		rc = SQLITE_CANTOPEN;
		goto fail;
	}
	rc = sidecar(v, &s, why);
	if (rc != SQLITE_OK)
		goto fail;
	v->next = vols;
	vols = v;
	pthread_mutex_unlock(&vols_lock);
	*out = v;
	return SQLITE_OK;
fail:
	pthread_mutex_unlock(&vols_lock);
	vol_free(v);
	return rc;
}

/* The volume this process has open on @path, with a new reference. */
struct dsq_vol *dsq_vol_find(const char *path)
{
	struct dsq_vol *v;
	struct stat st;

	if (stat(path, &st))
		return NULL;
	pthread_mutex_lock(&vols_lock);
	for (v = vols; v; v = v->next)
		if (v->dev[0].rdev == st.st_rdev && v->pid == getpid()) {
			v->refs++;
			break;
		}
	pthread_mutex_unlock(&vols_lock);
	return v;
}

void dsq_vol_put(struct dsq_vol *v)
{
	struct dsq_vol **pp;

	pthread_mutex_lock(&vols_lock);
	if (--v->refs) {
		pthread_mutex_unlock(&vols_lock);
		return;
	}
	for (pp = &vols; *pp; pp = &(*pp)->next)
		if (*pp == v) {
			*pp = v->next;
			break;
		}
	pthread_mutex_unlock(&vols_lock);
	vol_free(v);
}

/*
 * Make the superblock say what the shared state says of @file, under the
 * sidecar's writers' lock (one writer of the superblock at a time, in
 * every process).
 */
static int commit_file(struct dsq_vol *v, int file)
{
	struct dsq_shared *sh = v->shared;
	int ret = 0;

	pthread_mutex_lock(&v->lock);
	if (dsq_ofd_lock(v->side_fd, F_WRLCK, DSQ_LOCK_SUPER, 1, 1)) {
		pthread_mutex_unlock(&v->lock);
		return SQLITE_IOERR_LOCK;
	}
	if (sh->durable_size[file] != sh->size[file] ||
	    sh->durable_exists[file] != sh->exists[file]) {
		sh->durable_size[file] = sh->size[file];
		sh->durable_exists[file] = sh->exists[file];
		ret = super_commit(v);
	}
	dsq_ofd_lock(v->side_fd, F_UNLCK, DSQ_LOCK_SUPER, 1, 0);
	pthread_mutex_unlock(&v->lock);
	if (ret) {
		sqlite3_log(SQLITE_IOERR_FSYNC, "dio_sqlite: superblock of %s: %s",
			    v->dev[0].path, strerror(-ret));
		return SQLITE_IOERR_FSYNC;
	}
	return SQLITE_OK;
}

/*
 * xSync: the file's data is flushed to the medium, then its size is made
 * durable in the superblock (a FUA write).
 */
int dsq_vol_sync(struct dsq_vol *v, int file)
{
	int rc = dsq_flush(v);

	if (rc != SQLITE_OK)
		return rc;
	return commit_file(v, file);
}

int dsq_vol_delete(struct dsq_vol *v, int file)
{
	__atomic_store_n(&v->shared->size[file], 0, __ATOMIC_RELEASE);
	v->shared->exists[file] = 0;
	return commit_file(v, file);
}
