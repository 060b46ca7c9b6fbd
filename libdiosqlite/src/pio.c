// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * PI block I/O of a volume: every write carries PI generated here, every
 * read is checked (guard and reference tag by the module and the device,
 * the application tag here), and a block that fails on the primary is
 * served from the mirror and rewritten.
 *
 * Application tags: the top two bits name the file (DSQ_SUPER, DSQ_MAIN,
 * DSQ_JOURNAL, DSQ_WAL), the low fourteen the page it belongs to, modulo
 * 16384: the SQLite page number for the database (page 1 is at offset 0),
 * the 4 KiB unit of the file for the journal and the WAL, the slot for a
 * superblock.  So a page read from the wrong place fails even where its
 * guard is right (and on type 3, which has no reference tag to check).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

uint16_t dsq_app_tag(int file, uint64_t unit)
{
	return (uint16_t)((file << 14) | (unit & 0x3fff));
}

/*
 * The page (main) or unit (journal, WAL) of the file byte @x, or the slot
 * of a superblock at volume byte @off.
 */
static uint64_t unit_of(const struct dsq_vol *v, int file, uint64_t x,
			uint64_t off)
{
	if (file == DSQ_SUPER)
		return off / DSQ_SLOT_STRIDE;
	if (file == DSQ_MAIN)
		return v->main_page_size ? x / v->main_page_size + 1 : 1;
	return x / DSQ_LOG_UNIT;
}

/* Submit @r on @d and wait for it: 0, or -errno of the calls. */
static int dev_run(struct dsq_dev *d, struct dio_request *r)
{
	struct dio_request *rp = r;
	int tries = 0;

	while (sys_dio_submit(d->ctx, &rp, 1) != 1) {
		/* EILSEQ at submission: our own PI failed its check. */
		if (errno == EILSEQ)
			return 0;
		if (errno != EAGAIN || ++tries > 1000)
			return -errno;
		usleep(1000);
	}
	while (sys_dio_wait(d->ctx, &rp, 1, NULL) != 1) {
		if (errno != EINTR)
			return -errno;
	}
	return 0;
}

static size_t pi_bytes(const struct dsq_dev *d, size_t len)
{
	return len / d->p.interval * d->p.md_size;
}

/*
 * Generate the PI of @len bytes at @data, written at volume byte @off of
 * @file (@foff in the file) on device @d: one call per run of intervals
 * that share an app tag.
 */
static int gen_pi(struct dsq_vol *v, struct dsq_dev *d, int file,
		  const unsigned char *data, size_t len, uint64_t off,
		  uint64_t foff, unsigned char *pi)
{
	uint32_t iv = d->p.interval;
	size_t done = 0;

	while (done < len) {
		uint64_t unit = unit_of(v, file, foff + done, off + done);
		size_t run = iv;
		struct dio_pi_params a = { 0 };

		while (done + run < len &&
		       unit_of(v, file, foff + done + run, off + done + run) == unit)
			run += iv;
		a.seed = dio_pi_seed(&d->q, off + done);
		a.app_tag = dsq_app_tag(file, unit);
		if (dio_pi_generate(&d->p, data + done, run,
				    pi + pi_bytes(d, done), &a))
			return -errno;
		done += run;
	}
	return 0;
}

/* A failure report of @file on device @d, its other fields zero. */
static void failure_init(struct dsq_failure *f, int file,
			 const struct dsq_dev *d)
{
	memset(f, 0, sizeof(*f));
	f->when = time(NULL);
	f->file = dsq_file_name(file);
	snprintf(f->device, sizeof(f->device), "%s", d->path);
}

/* Describe device @d's failure of request @r (at volume byte @off). */
static void fill_failure(struct dsq_vol *v, struct dsq_dev *d, int file,
			 uint64_t off, uint64_t foff,
			 const struct dio_request *r, struct dsq_failure *f)
{
	uint64_t iv = d->p.interval, start = d->q.part_start_bytes, x;

	failure_init(f, file, d);
	f->interval = r->pi_err_interval;
	f->expected = r->pi_err_expected;
	f->actual = r->pi_err_actual;
	f->tag = r->pi_err_tag ? dio_pi_tag_name(r->pi_err_tag) : "unknown";
	f->source = dio_pi_source_name(r->pi_err_source);
	if (r->pi_err_interval == DIO_PI_INTERVAL_UNKNOWN) {
		/* The device refused the request; name its first block. */
		f->block = off / d->q.logical_block_size;
		f->page = (int64_t)unit_of(v, file, foff, off);
		return;
	}
	if (!r->pi_err_tag && r->pi_err_source == DIO_PI_SRC_DEVICE) {
		/*
		 * NVMe before Linux 6.14: the module found the interval but
		 * cannot read it raw; libdioctl reads it by passthrough and
		 * checks it as the drive did.
		 */
		struct dio_pi_error e;

		if (!dio_pi_explain_error(d->fd, &d->p, r, &e)) {
			f->tag = dio_pi_tag_name(e.tag);
			f->expected = e.expected;
			f->actual = e.actual;
		}
	}
	x = r->pi_err_interval * iv - start;	/* byte of the device */
	f->block = x / d->q.logical_block_size;
	f->page = (int64_t)unit_of(v, file, foff + (x - off), x);
}

/*
 * Read @len bytes (whole intervals, @buf aligned) at volume byte @off
 * from device @d, and check every tuple: 0, -EILSEQ with @f filled, or
 * another -errno.
 */
static int dev_read(struct dsq_vol *v, struct dsq_dev *d, int file,
		    void *buf, size_t len, uint64_t off, uint64_t foff,
		    struct dsq_failure *f)
{
	size_t plen = pi_bytes(d, len);
	unsigned char *pi = calloc(1, plen);
	unsigned int chk = DIO_PI_CHK_GUARD;
	struct dio_request r;
	uint32_t iv = d->p.interval;
	int ret;

	if (!pi)
		return -ENOMEM;
	if (d->q.pi_type != 3)
		chk |= DIO_PI_CHK_REFTAG;
	dio_req_prep_read(&r, d->handle, buf, len, off);
	dio_req_set_pi(&r, pi, plen, chk, 0, 0);
	ret = dev_run(d, &r);
	if (ret)
		goto out;
	if (r.result == -EILSEQ) {
		fill_failure(v, d, file, off, foff, &r, f);
		ret = -EILSEQ;
		goto out;
	}
	if (r.result < 0) {
		ret = (int)r.result;
		goto out;
	}
	if ((uint64_t)r.result != len) {
		ret = -EIO;
		goto out;
	}
	/* The app tags: the file and page each interval belongs to. */
	for (size_t done = 0; done < len; done += iv) {
		struct dio_pi_params a = { 0 };
		struct dio_pi_error e;
		uint64_t unit = unit_of(v, file, foff + done, off + done);

		a.seed = dio_pi_seed(&d->q, off + done);
		a.app_tag = dsq_app_tag(file, unit);
		a.app_mask = 0xffff;
		a.chk_flags = DIO_PI_CHK_APPTAG;
		if (!dio_pi_verify(&d->p, (unsigned char *)buf + done, iv,
				   pi + pi_bytes(d, done), &a, &e))
			continue;
		failure_init(f, file, d);
		f->interval = a.seed;
		f->block = (off + done) / d->q.logical_block_size;
		f->page = (int64_t)unit;
		f->tag = "app";
		f->expected = e.expected;
		f->actual = e.actual;
		f->source = "dio_sqlite";
		ret = -EILSEQ;
		goto out;
	}
	ret = 0;
out:
	free(pi);
	return ret;
}

/* Write @len bytes at volume byte @off of device @d with PI. */
static int dev_write(struct dsq_vol *v, struct dsq_dev *d, int file,
		     const void *buf, size_t len, uint64_t off, uint64_t foff,
		     int fua)
{
	size_t plen = pi_bytes(d, len);
	unsigned char *pi = calloc(1, plen);
	struct dio_request r;
	int ret;

	if (!pi)
		return -ENOMEM;
	ret = gen_pi(v, d, file, buf, len, off, foff, pi);
	if (ret)
		goto out;
	dio_req_prep_write(&r, d->handle, buf, len, off);
	if (fua)
		r.flags |= DIO_REQ_FUA;
	dio_req_set_pi(&r, pi, plen, 0, 0, 0);
	ret = dev_run(d, &r);
	if (!ret && r.result < 0)
		ret = (int)r.result;
	else if (!ret && (uint64_t)r.result != len)
		ret = -EIO;
out:
	free(pi);
	return ret;
}

/*
 * A checked read of whole intervals into the aligned @buf: from the
 * primary, or, when the primary's copy fails PI and there is a mirror,
 * from the mirror, whose good copy then repairs the primary.  Every
 * failure is reported.  Returns an SQLite code.
 */
static int read_checked(struct dsq_vol *v, int file, void *buf, size_t len,
			uint64_t off, uint64_t foff)
{
	struct dsq_failure f, fm;
	int ret;

	ret = dev_read(v, &v->dev[0], file, buf, len, off, foff, &f);
	if (!ret)
		return SQLITE_OK;
	if (ret != -EILSEQ) {
		sqlite3_log(SQLITE_IOERR_READ, "dio_sqlite: reading %s at %llu of %s: %s",
			    dsq_file_name(file), (unsigned long long)foff,
			    v->dev[0].path, strerror(-ret));
		return SQLITE_IOERR_READ;
	}
	if (v->ndev < 2) {
		dsq_report(&f);
		return SQLITE_IOERR_DATA;
	}
	ret = dev_read(v, &v->dev[1], file, buf, len, off, foff, &fm);
	if (ret) {
		dsq_report(&f);
		if (ret == -EILSEQ)
			dsq_report(&fm);
		return SQLITE_IOERR_DATA;
	}
	/* The mirror's copy is good: it repairs the primary. */
	ret = dev_write(v, &v->dev[0], file, buf, len, off, foff, 0);
	f.repaired = !ret;
	dsq_report(&f);
	return SQLITE_OK;
}

/* A superblock slot (one interval at @off) of device @d, checked. */
int dsq_super_read(struct dsq_vol *v, int d, void *buf, uint64_t off,
		   struct dsq_failure *f)
{
	return dev_read(v, &v->dev[d], DSQ_SUPER, buf, v->interval, off, 0, f);
}

/* A superblock slot of device @d, written with FUA. */
int dsq_super_write(struct dsq_vol *v, int d, const void *buf, uint64_t off)
{
	return dev_write(v, &v->dev[d], DSQ_SUPER, buf, v->interval, off, 0, 1);
}

static int aligned(const struct dsq_vol *v, const void *p)
{
	uintptr_t a = v->interval;

	if (v->dev[0].q.dma_alignment > a)
		a = v->dev[0].q.dma_alignment;
	return ((uintptr_t)p & (a - 1)) == 0;
}

/* The page size a database header (its first 18 bytes or more) gives. */
static uint32_t header_page_size(const unsigned char *h)
{
	uint32_t ps = (uint32_t)h[16] << 8 | h[17];

	return ps == 1 ? 65536 : ps;
}

int dsq_pread(struct dsq_vol *v, int file, void *buf, int amt, int64_t off)
{
	struct dsq_region *rg = &v->region[file];
	uint64_t size = __atomic_load_n(&v->shared->size[file], __ATOMIC_ACQUIRE);
	uint64_t iv = v->interval, a, b, n = amt;
	unsigned char *bounce;
	int short_read = 0, rc;

	if (off < 0 || (uint64_t)off >= size) {
		memset(buf, 0, amt);
		return SQLITE_IOERR_SHORT_READ;
	}
	if (off + n > size) {
		n = size - off;
		memset((char *)buf + n, 0, amt - n);
		short_read = 1;
	}
	a = off / iv * iv;
	b = (off + n + iv - 1) / iv * iv;
	if (a == (uint64_t)off && b == off + n && aligned(v, buf)) {
		rc = read_checked(v, file, buf, n, rg->start + a, a);
		v->direct_reads++;
	} else {
		if (posix_memalign((void **)&bounce, 4096, b - a))
			return SQLITE_IOERR_NOMEM;
		rc = read_checked(v, file, bounce, b - a, rg->start + a, a);
		if (rc == SQLITE_OK)
			memcpy(buf, bounce + (off - a), n);
		free(bounce);
		v->bounced_reads++;
	}
	if (rc != SQLITE_OK)
		return rc;
	/* The page size, from the database header whenever it is read. */
	if (file == DSQ_MAIN && off == 0 && n >= 18) {
		uint32_t ps = header_page_size(buf);

		if (ps >= 512 && !(ps & (ps - 1)))
			v->main_page_size = ps;
	}
	return short_read ? SQLITE_IOERR_SHORT_READ : SQLITE_OK;
}

/* Write [a, b) of the file from the aligned @blk to every device. */
static int write_all(struct dsq_vol *v, int file, const void *blk,
		     uint64_t a, uint64_t b)
{
	for (int d = 0; d < v->ndev; d++) {
		int ret = dev_write(v, &v->dev[d], file, blk, b - a,
				    v->region[file].start + a, a, 0);

		if (ret) {
			sqlite3_log(SQLITE_IOERR_WRITE,
				    "dio_sqlite: writing %s at %llu of %s: %s",
				    dsq_file_name(file), (unsigned long long)a,
				    v->dev[d].path, strerror(-ret));
			return SQLITE_IOERR_WRITE;
		}
	}
	return SQLITE_OK;
}

int dsq_pwrite(struct dsq_vol *v, int file, const void *buf, int amt,
	       int64_t off)
{
	struct dsq_region *rg = &v->region[file];
	uint64_t size = __atomic_load_n(&v->shared->size[file], __ATOMIC_ACQUIRE);
	uint64_t iv = v->interval, a, b, end = off + amt;
	unsigned char *bounce;
	int rc;

	if (off < 0 || end > rg->length) {
		sqlite3_log(SQLITE_FULL, "dio_sqlite: %s of %s is full (%llu bytes)",
			    dsq_file_name(file), v->dev[0].path,
			    (unsigned long long)rg->length);
		return SQLITE_FULL;
	}
	if (file == DSQ_MAIN && off == 0 && amt >= 18) {
		uint32_t ps = header_page_size(buf);

		if (ps % iv) {
			sqlite3_log(SQLITE_IOERR_WRITE,
				    "dio_sqlite: page size %u is not a multiple of %s's protection interval (%llu bytes)",
				    ps, v->dev[0].path, (unsigned long long)iv);
			return SQLITE_IOERR_WRITE;
		}
		v->main_page_size = ps;
	}
	a = off / iv * iv;
	b = (end + iv - 1) / iv * iv;
	if (a == (uint64_t)off && b == end && aligned(v, buf)) {
		/* In place: the PI is generated from the caller's page. */
		rc = write_all(v, file, buf, a, b);
		v->direct_writes++;
	} else {
		if (posix_memalign((void **)&bounce, 4096, b - a))
			return SQLITE_IOERR_NOMEM;
		memset(bounce, 0, b - a);
		rc = SQLITE_OK;
		/* The head and tail intervals keep what the file has there. */
		if (a < (uint64_t)off && a < size)
			rc = read_checked(v, file, bounce, iv, rg->start + a, a);
		if (rc == SQLITE_OK && b > end && b - iv < size &&
		    (b - iv > a || a == (uint64_t)off))
			rc = read_checked(v, file, bounce + (b - iv - a), iv,
					  rg->start + b - iv, b - iv);
		if (rc == SQLITE_OK) {
			memcpy(bounce + (off - a), buf, amt);
			rc = write_all(v, file, bounce, a, b);
		}
		free(bounce);
		v->bounced_writes++;
	}
	if (rc != SQLITE_OK)
		return rc;
	if (end > size)
		__atomic_store_n(&v->shared->size[file], end, __ATOMIC_RELEASE);
	return SQLITE_OK;
}

int dsq_flush(struct dsq_vol *v)
{
	for (int d = 0; d < v->ndev; d++) {
		struct dio_request r;
		int ret;

		dio_req_prep_flush(&r, v->dev[d].handle);
		ret = dev_run(&v->dev[d], &r);
		if (!ret && r.result < 0)
			ret = (int)r.result;
		if (ret) {
			sqlite3_log(SQLITE_IOERR_FSYNC, "dio_sqlite: flushing %s: %s",
				    v->dev[d].path, strerror(-ret));
			return SQLITE_IOERR_FSYNC;
		}
	}
	return SQLITE_OK;
}
