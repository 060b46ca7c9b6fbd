// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * SQLite on PI through a power cut at every point.
 *
 * A transaction workload runs through libdiosqlite's VFS on NVMe
 * namespace 18, which QEMU writes through its blklogwrites driver
 * (tests/vm/run.sh): every write the device model makes to the image, the
 * data and the PI metadata apart (data first), and every flush, recorded in
 * dm-log-writes' format in /tmp/results/nvme18.log.  After each COMMIT
 * returns, the test notes how long the record is: everything up to there
 * is that transaction's.
 *
 * Then the record is replayed into namespace 19's image (same geometry),
 * up to each flush in turn: the state a power cut just before that flush
 * can leave.  At each point the database is opened there and must hold
 * every transaction whose COMMIT had returned (the one in flight may be
 * there or not, whole), with every row's value right and
 * PRAGMA integrity_check "ok".  Between two flushes the device may have
 * made any of the writes: for each such stretch two torn points more, a
 * block's data without its PI (the record up to a data write, not the
 * metadata write after it), and its PI without its data.  There the same
 * must hold, and the torn block is never returned silently: either the
 * recovery rewrote it (it verifies), or reading it with PI checked fails.
 * The number of points and the verdict at each are printed.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <sqlite3.h>
#include "dio_sqlite.h"
#include "testlib.h"

#define REC_NSID	18
#define REPLAY_NSID	19
#define LOG_PATH	"/tmp/results/nvme18.log"
#define IMG_PATH	"/tmp/results/nvme19.img"
#define LBS		4096ULL
#define MS		8ULL
#define NLB		2048ULL			/* tests/vm/run.sh's pc_size */
#define MOFF		(NLB * LBS)		/* the metadata, after the data */
#define IMG_SIZE	(NLB * (LBS + MS))
#define LOG_SECTOR	512ULL
#define NTXN		24			/* transactions after the schema's */

/* dm-log-writes' format (drivers/md/dm-log-writes.c), little-endian. */
#define LOG_FLUSH	(1 << 0)
#define LOG_FUA		(1 << 1)
#define LOG_DISCARD	(1 << 2)
#define LOG_MARK	(1 << 3)
#define LOG_MAGIC	0x6a736677736872ULL

struct log_entry_disk {
	uint64_t sector, nr_sectors, flags, data_len;
};

/* One recorded operation. */
struct op {
	uint64_t at;		/* the entry's byte offset in the record */
	uint64_t off, len;	/* in the image; len 0 for a flush */
	uint64_t flags;
	const unsigned char *data;
};

static unsigned char *rec;	/* the record, read whole */
static size_t rec_len;
static struct op *ops;
static size_t nops;
/* commit_at[k]: the record's length when transaction k's COMMIT returned. */
static uint64_t commit_at[NTXN + 1];
static char build[512];
static char rdev[64];

/* Row @id's value as transaction @gen wrote it: from 40 to 3,640 bytes. */
static void value_of(int id, int gen, char *out, size_t *len)
{
	size_t n = 40 + (size_t)((id * 37) % 10) * 400, i;
	char unit[32];
	int u = snprintf(unit, sizeof(unit), "%d:%d;", id, gen);

	for (i = 0; i < n; i++)
		out[i] = unit[i % (size_t)u];
	*len = n;
}

/*
 * Transaction k inserts row k and rewrites row k / 2, so row j holds, once
 * transaction k is in, the value of the last of j, 2j and 2j + 1 up to k.
 */
static int gen_of(int id, int k)
{
	if (2 * id + 1 <= k)
		return 2 * id + 1;
	return 2 * id <= k ? 2 * id : id;
}

static void exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err ? err : "?");
}

static uint64_t record_length(void)
{
	struct stat st;

	assert_int_equal(stat(LOG_PATH, &st), 0);
	return (uint64_t)st.st_size;
}

/* The workload on @dev, noting the record's length after each COMMIT. */
static void workload(const char *dev)
{
	static char v[4096];
	char uri[128];
	sqlite3 *db;
	sqlite3_stmt *ins, *upd;
	size_t n;

	snprintf(uri, sizeof(uri), "file:%s?format=1", dev);
	assert_int_equal(sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE |
					 SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, "dio"),
			 SQLITE_OK);
	exec(db, "PRAGMA journal_mode = DELETE; PRAGMA synchronous = FULL;"
		 "CREATE TABLE t(id INTEGER PRIMARY KEY, gen INTEGER, v TEXT)");
	commit_at[0] = record_length();
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?1, ?1, ?2)",
					    -1, &ins, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "UPDATE t SET gen = ?2, v = ?3 WHERE id = ?1",
					    -1, &upd, NULL), SQLITE_OK);
	for (int k = 1; k <= NTXN; k++) {
		exec(db, "BEGIN");
		value_of(k, k, v, &n);
		sqlite3_bind_int(ins, 1, k);
		sqlite3_bind_text(ins, 2, v, (int)n, SQLITE_STATIC);
		assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
		sqlite3_reset(ins);
		if (k >= 2) {
			value_of(k / 2, k, v, &n);
			sqlite3_bind_int(upd, 1, k / 2);
			sqlite3_bind_int(upd, 2, k);
			sqlite3_bind_text(upd, 3, v, (int)n, SQLITE_STATIC);
			assert_int_equal(sqlite3_step(upd), SQLITE_DONE);
			sqlite3_reset(upd);
		}
		exec(db, "COMMIT");
		commit_at[k] = record_length();
	}
	sqlite3_finalize(ins);
	sqlite3_finalize(upd);
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

/* The record, read and cut into operations. */
static void parse_record(void)
{
	const struct log_entry_disk *e;
	uint64_t pos = LOG_SECTOR, size;
	int fd = open(LOG_PATH, O_RDONLY);
	struct stat st;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	rec_len = (size_t)st.st_size;
	rec = tl_xalloc(rec_len + LOG_SECTOR, 0);
	assert_int_equal(pread(fd, rec, rec_len, 0), (ssize_t)rec_len);
	close(fd);
	assert_true(rec_len >= LOG_SECTOR);
	assert_int_equal(*(uint64_t *)rec, LOG_MAGIC);
	ops = tl_xalloc(sizeof(*ops) * (rec_len / LOG_SECTOR), 0);
	while (pos + LOG_SECTOR <= rec_len) {
		e = (const void *)(rec + pos);
		if (!e->sector && !e->nr_sectors && !e->flags && !e->data_len)
			break;
		assert_int_equal(e->flags & ~(uint64_t)(LOG_FLUSH | LOG_FUA | LOG_DISCARD | LOG_MARK), 0);
		size = e->flags & LOG_DISCARD ? 0 : e->nr_sectors * LOG_SECTOR;
		assert_true(pos + LOG_SECTOR + size <= rec_len);
		ops[nops] = (struct op){ .at = pos, .off = e->sector * LOG_SECTOR,
					 .len = e->nr_sectors * LOG_SECTOR,
					 .flags = e->flags, .data = rec + pos + LOG_SECTOR };
		assert_true(ops[nops].off + ops[nops].len <= IMG_SIZE);
		nops++;
		pos += LOG_SECTOR + size;
	}
}

static void apply(unsigned char *img, const struct op *o)
{
	if (o->flags & LOG_DISCARD)
		memset(img + o->off, 0, o->len);
	else
		memcpy(img + o->off, o->data, o->len);
}

/* The transactions whose COMMIT had returned before record offset @at. */
static int committed_before(uint64_t at)
{
	int k = -1;

	for (int i = 0; i <= NTXN; i++)
		if (commit_at[i] <= at)
			k = i;
	return k;
}

/* What a point must show, and what it showed. */
struct point {
	const char *kind;
	size_t upto;		/* operations applied: [0, upto) ... */
	ssize_t extra;		/* ... and this one (the torn PI), or -1 */
	ssize_t torn;		/* the torn data write's operation, or -1 */
	int need;		/* transactions that must be there (-1: none) */
};

/* A point's verdict: what it showed, or that it failed. */
enum {
	V_NOTHING,		/* no volume or no table, nothing committed */
	V_COMMITTED,		/* every committed transaction there */
	V_REWRITTEN,		/* the torn block rewritten by the recovery */
	V_REPORTED,		/* the torn block fails a verified read */
	V_UNTORN,		/* the "torn" write left the same bytes */
	V_DEALLOCATED,		/* zero data under PI: read as deallocated */
	V_FAILED,
};
static int verdict_fail;
static int verdicts[V_FAILED + 1];
static const char *const verdict_name[] = {
	"nothing committed yet (no volume or no table)",
	"all committed transactions there",
	"torn block rewritten by the recovery",
	"torn block reported by PI",
	"torn block never torn (same bytes)",
	"torn block's data never written: read as deallocated",
	"FAILED",
};

static unsigned char *base;	/* the image after base_n operations */
static size_t base_n;

/* The image after the first @n operations, in @img (points go forward). */
static void state_at(size_t n, unsigned char *img)
{
	assert_true(n >= base_n);
	for (; base_n < n; base_n++)
		apply(base, &ops[base_n]);
	memcpy(img, base, IMG_SIZE);
}

/* The image of @p in namespace 19's backing file (and in @img). */
static void replay(const struct point *p, unsigned char *img)
{
	int fd;

	state_at(p->upto, img);
	if (p->extra >= 0)
		apply(img, &ops[p->extra]);
	fd = open(IMG_PATH, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, img, IMG_SIZE, 0), (ssize_t)IMG_SIZE);
	assert_int_equal(close(fd), 0);
}

/* The database at a point: -1 no volume, else its last transaction. */
static int check_db(char *why, size_t len)
{
	static char want[4096];
	int gens[NTXN + 2];	/* row id's transaction, as read */
	char uri[128];
	sqlite3 *db;
	sqlite3_stmt *st;
	int rc, last = 0, id, gen, k;
	size_t n;
	glob_t g;

	/* No sizes kept from the last point's volume. */
	if (glob("/dev/shm/dio_sqlite-*", 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			unlink(g.gl_pathv[i]);
		globfree(&g);
	}
	snprintf(uri, sizeof(uri), "file:%s", rdev);
	rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, "dio");
	if (rc == SQLITE_CANTOPEN) {
		snprintf(why, len, "%s", sqlite3_errmsg(db));
		sqlite3_close(db);
		return -1;
	}
	if (rc != SQLITE_OK) {
		snprintf(why, len, "open: %s", sqlite3_errmsg(db));
		sqlite3_close(db);
		return -2;
	}
	rc = sqlite3_prepare_v2(db, "SELECT id, gen, v FROM t ORDER BY id", -1, &st, NULL);
	if (rc != SQLITE_OK) {
		snprintf(why, len, "%s", sqlite3_errmsg(db));
		rc = strstr(why, "no such table") ? -1 : -2;
		sqlite3_close(db);
		return rc;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		id = sqlite3_column_int(st, 0);
		gen = sqlite3_column_int(st, 1);
		if (id != last + 1 || id > NTXN) {
			snprintf(why, len, "row %d after row %d", id, last);
			break;
		}
		last = id;
		gens[id] = gen;
		value_of(id, gen, want, &n);
		if ((size_t)sqlite3_column_bytes(st, 2) != n ||
		    memcmp(sqlite3_column_text(st, 2), want, n)) {
			snprintf(why, len, "row %d: not transaction %d's value", id, gen);
			break;
		}
	}
	if (rc != SQLITE_DONE) {
		if (rc != SQLITE_ROW)
			snprintf(why, len, "reading t: %s", sqlite3_errmsg(db));
		sqlite3_finalize(st);
		sqlite3_close(db);
		return -2;
	}
	sqlite3_finalize(st);
	/* Every row as the last transaction there left it. */
	k = last;
	for (id = 1; id <= last; id++)
		if (gens[id] != gen_of(id, last)) {
			snprintf(why, len, "row %d: transaction %d's value, not %d's",
				 id, gens[id], gen_of(id, last));
			k = -2;
		}
	if (k >= 0) {
		assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL),
				 SQLITE_OK);
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW || strcmp((const char *)sqlite3_column_text(st, 0), "ok")) {
			snprintf(why, len, "integrity_check: %s",
				 rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) :
				 sqlite3_errmsg(db));
			k = -2;
		}
		sqlite3_finalize(st);
	}
	if (sqlite3_close(db) != SQLITE_OK && k >= 0) {
		snprintf(why, len, "close: busy");
		k = -2;
	}
	return k;
}

/*
 * dioctl's verified read of data write @o's blocks: 0 they verify, 4 a PI
 * failure (dioctl(1)'s exit status).
 */
static int read_verified(const struct op *o)
{
	return tl_sh("%s/tools/dioctl read %s -s %" PRIu64 " -l %" PRIu64 " -v >/dev/null 2>&1",
		     build, rdev, o->off, o->len);
}

/* The operations around operation @at, from the flush before it to the one after. */
static void print_ops(size_t at)
{
	size_t a = at < nops ? at : nops - 1, b = a;

	while (a > 0 && !(ops[a - 1].flags & LOG_FLUSH))
		a--;
	while (b + 1 < nops && !(ops[b].flags & LOG_FLUSH))
		b++;
	for (size_t i = a; i <= b; i++)
		printf("#   operation %zu: %s %" PRIu64 " +%" PRIu64 " (block %" PRIu64 ")\n",
		       i, ops[i].flags & LOG_FLUSH ? "flush" : ops[i].off < MOFF ? "data" : "metadata",
		       ops[i].off, ops[i].len,
		       (uint64_t)(ops[i].off < MOFF ? ops[i].off / LBS : (ops[i].off - MOFF) / MS));
}

static bool all_zero(const unsigned char *p, uint64_t len)
{
	for (uint64_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* Do @a and @b hold the same data and PI for data write @o's blocks? */
static bool same_blocks(const unsigned char *a, const unsigned char *b, const struct op *o)
{
	uint64_t md = MOFF + o->off / LBS * MS, mdlen = o->len / LBS * MS;

	return !memcmp(a + o->off, b + o->off, o->len) && !memcmp(a + md, b + md, mdlen);
}

/* Data write @o's blocks, data and PI, from the image file into @now. */
static void read_blocks(unsigned char *now, const struct op *o)
{
	uint64_t md = MOFF + o->off / LBS * MS, mdlen = o->len / LBS * MS;
	int fd = open(IMG_PATH, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, now + o->off, o->len, (off_t)o->off), (ssize_t)o->len);
	assert_int_equal(pread(fd, now + md, mdlen, (off_t)md), (ssize_t)mdlen);
	close(fd);
}

/* @img, @pre and @now: image-sized buffers of the caller's. */
static void run_point(int no, int total, const struct point *p, unsigned char *img,
		      unsigned char *pre, unsigned char *now)
{
	char why[512] = "";
	int got, v, st;

	if (p->torn >= 0)	/* the blocks before the torn write */
		state_at((size_t)p->torn, pre);
	replay(p, img);
	got = check_db(why, sizeof(why));
	if (got == -2 || got < p->need || got > p->need + 1 ||
	    (got == -1 && p->need >= 0))
		v = V_FAILED;
	else
		v = got == -1 ? V_NOTHING : V_COMMITTED;
	printf("# point %d/%d, %s (the record's first %zu operations%s): ", no, total,
	       p->kind, p->upto, p->extra >= 0 ? " and the PI write" : "");
	if (p->need >= 0)
		printf("transactions 0-%d committed, ", p->need);
	else
		printf("nothing committed, ");
	if (got >= 0)
		printf("0-%d there", got);
	else
		printf("nothing there");
	if (why[0])
		printf(" (%s)", why);
	if (p->torn >= 0) {
		const struct op *o = &ops[p->torn];
		bool still, torn;

		read_blocks(now, o);
		/* Still the blocks the point left there, and were they torn? */
		still = same_blocks(now, img, o);
		torn = !same_blocks(img, pre, o);
		st = read_verified(o);
		/*
		 * A block whose data was never written, under PI that was:
		 * QEMU returns the escape tags for blocks it finds
		 * deallocated, as NVMe lets a device do (it does for zeros
		 * at the file's first block), and nothing is checked.  The
		 * data are zeros, never another block's.
		 */
		if (v == V_FAILED)
			;
		else if (!still)
			v = st == 0 ? V_REWRITTEN : V_FAILED;
		else if (!torn)
			v = st == 0 ? V_UNTORN : V_FAILED;
		else if (st == 4)
			v = V_REPORTED;
		else
			v = st == 0 && all_zero(img + o->off, o->len) ? V_DEALLOCATED : V_FAILED;
		printf("; blocks %" PRIu64 "-%" PRIu64 " %s, %s, dioctl read -v exit %d",
		       (uint64_t)(o->off / LBS), (uint64_t)((o->off + o->len) / LBS - 1),
		       torn ? "torn" : "not torn (the same bytes)",
		       still ? "left so" : "rewritten since", st);
	}
	printf(": %s\n", verdict_name[v]);
	verdicts[v]++;
	if (v == V_FAILED) {
		verdict_fail++;
		print_ops(p->upto);
	}
}

/* The metadata write after data write @d in [@d, @end) that holds its PI. */
static ssize_t pi_write_of(size_t d, size_t end)
{
	uint64_t md = MOFF + ops[d].off / LBS * MS;

	for (size_t i = d + 1; i < end; i++)
		if (!(ops[i].flags & LOG_FLUSH) && ops[i].off >= MOFF &&
		    ops[i].off <= md && md < ops[i].off + ops[i].len)
			return (ssize_t)i;
	return -1;
}

static void test_power_cut(void **state)
{
	static struct point pts[4096];
	unsigned char *img = tl_xalloc(IMG_SIZE, 0), *pre = tl_xalloc(IMG_SIZE, 0);
	unsigned char *now = tl_xalloc(IMG_SIZE, 0);
	char dev[64];
	size_t prev = 0, flushes = 0, np = 0;

	(void)state;
	assert_int_equal(tl_nvme_dev(REC_NSID, dev, sizeof(dev)), 0);
	assert_int_equal(tl_nvme_dev(REPLAY_NSID, rdev, sizeof(rdev)), 0);
	base = tl_xalloc(IMG_SIZE, 0);
	workload(dev);
	parse_record();
	printf("# the record: %zu operations, %zu bytes; the COMMITs returned at", nops, rec_len);
	for (int k = 0; k <= NTXN; k++)
		printf(" %" PRIu64, commit_at[k]);
	printf("\n");
	for (size_t i = 0; i <= nops; i++) {
		ssize_t d = -1, m = -1;

		if (i < nops && !(ops[i].flags & LOG_FLUSH))
			continue;
		/* The stretch [prev, i) since the last flush: its last data write
		 * whose PI write follows in it. */
		for (size_t j = i; j-- > prev;)
			if (!(ops[j].flags & LOG_FLUSH) && ops[j].off < MOFF &&
			    (m = pi_write_of(j, i)) >= 0) {
				d = (ssize_t)j;
				break;
			}
		if (d >= 0) {
			pts[np++] = (struct point){ "PI without its data", (size_t)d, m, d,
						    committed_before(ops[d].at) };
			pts[np++] = (struct point){ "data without its PI", (size_t)d + 1, -1, d,
						    committed_before(ops[d].at) };
		}
		pts[np++] = (struct point){ i < nops ? "before a flush" : "the end",
					    i, -1, -1,
					    committed_before(i < nops ? ops[i].at : rec_len) };
		flushes += i < nops;
		prev = i + 1;
		assert_true(np + 3 < sizeof(pts) / sizeof(pts[0]));
	}
	printf("# %zu flushes recorded: %zu replay points\n", flushes, np);
	assert_true(flushes >= NTXN);
	for (size_t i = 0; i < np; i++)
		run_point((int)i + 1, (int)np, &pts[i], img, pre, now);
	printf("# %zu points:", np);
	for (int v = 0; v <= V_FAILED; v++)
		printf(" %s %d;", verdict_name[v], verdicts[v]);
	printf("\n");
	free(img);
	free(pre);
	free(now);
	assert_int_equal(verdict_fail, 0);
	/* The end holds every transaction, and torn blocks were met. */
	assert_true(verdicts[V_REPORTED] > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_power_cut),
	};
	const char *b = getenv("DIO_BUILD");

	snprintf(build, sizeof(build), "%s", b ? b : "build");
	if (dio_sqlite_config_memory() != SQLITE_OK)
		return 1;
	if (dio_sqlite_register(NULL, 0) != SQLITE_OK || tl_dio_load())
		return 1;
	return cmocka_run_group_tests_name("powercut", tests, NULL, NULL);
}
