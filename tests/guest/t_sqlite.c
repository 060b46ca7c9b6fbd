// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * SQLite on PI, through libdiosqlite's VFS (libdiosqlite/), run by
 * SQLite's own programs:
 *
 *  - speedtest1 (Debian's source, built with the VFS registered) with its
 *    verification hash: the same hash through the dio VFS on each PI device
 *    as through the default VFS on a file; then the sqlite3 shell loads the
 *    extension, opens the device, checks the database (integrity_check is
 *    ok) and dumps it.  Devices: NVMe type 1 CRC16 512 (and on 6.12 CRC64
 *    4096 and type 3), CRC64 4096 in WAL mode; scsi_debug DIF types 1 and
 *    3; dm-linear over NVMe;
 *  - a byte of a table page flipped below the device (in the NVMe
 *    namespace's backing file): the query fails with SQLITE_IOERR_DATA,
 *    never returns rows, and the report names the page, block, tag,
 *    expected and actual value and who found it (sqlite3_log() and
 *    dio_pi_failures); the same with a mirror: the right rows, a repair
 *    reported, the block good again on the primary;
 *  - a page size that is not a multiple of the interval is refused; pages
 *    in buffers of dio_sqlite_config_memory() are written in place;
 *  - two processes writing one database, with the unix VFS's locking;
 *    SQLite's own multi-process test, mptest, with five (its script
 *    multiwrite01);
 *  - a device that holds no volume is not formatted behind its owner's back.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <sqlite3.h>
#include "dio_sqlite.h"
#include "testlib.h"

#define WORK		"/tmp/t_sqlite"
#define ST_SIZE		"5"		/* speedtest1 --size */
#define DSQ_START	(1U << 20)	/* the database's region (volume.c) */

static char build[512];
static char ref_hash[256];
static char ref_check[4096];		/* integrity_check, z1's count and size */
static char ref_dump[4 << 20];		/* the reference database's .dump */
static char logbuf[64 * 1024];

/* sqlite3_log() lines, kept for the tests to read. */
static void log_cb(void *arg, int code, const char *msg)
{
	size_t n = strlen(logbuf);

	snprintf(logbuf + n, sizeof(logbuf) - n, "(%d) %s\n", code, msg);
}

/* Run @cmd with sh; its output (both streams) into @out.  Exit status. */
static int run_out(char *out, size_t len, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	FILE *p;
	size_t n = 0;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	strncat(cmd, " 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (n + 1 < len && fgets(out + n, (int)(len - n), p))
		n += strlen(out + n);
	out[n] = 0;
	/* Drain the rest, so the command is not killed by SIGPIPE. */
	while (fgetc(p) != EOF)
		;
	st = pclose(p);
	printf("# %s: exit %d\n", cmd, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The "Verification Hash:" line of speedtest1's output @out. */
static void hash_of(const char *out, char *hash, size_t len)
{
	const char *h = strstr(out, "Verification Hash:");
	size_t n;

	hash[0] = 0;
	if (!h)
		return;
	n = strcspn(h, "\n");
	if (n >= len)
		n = len - 1;
	memcpy(hash, h, n);
	hash[n] = 0;
}

static int setup(void **state)
{
	static char out[256 * 1024];
	const char *b = getenv("DIO_BUILD");

	snprintf(build, sizeof(build), "%s", b ? b : "build");
	if (tl_sh("mkdir -p " WORK) != 0)
		return -1;
	/* The reference: speedtest1 through the default VFS, on a file. */
	unlink(WORK "/ref.db");
	if (run_out(out, sizeof(out), "%s/sqlite/speedtest1 --verify --size " ST_SIZE
		    " " WORK "/ref.db", build) != 0) {
		printf("# speedtest1 on a file failed:\n%s\n", out);
		return -1;
	}
	hash_of(out, ref_hash, sizeof(ref_hash));
	printf("# reference (default VFS, file): %s\n", ref_hash);
	if (run_out(ref_check, sizeof(ref_check), "sqlite3 -batch " WORK "/ref.db "
		    "'PRAGMA integrity_check' 'SELECT count(*), sum(length(c)) FROM z1'") ||
	    run_out(ref_dump, sizeof(ref_dump), "sqlite3 -batch " WORK "/ref.db .dump"))
		return -1;
	printf("# reference: %s# reference .dump: %zu bytes\n", ref_check, strlen(ref_dump));
	return ref_hash[0] && strncmp(ref_check, "ok\n", 3) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
	tl_sh("rm -rf " WORK);
	return 0;
}

/* The shell, with the extension loaded, on @uri: runs @cmds; output to @out. */
static int shell(char *out, size_t len, const char *uri, const char *cmds)
{
	return run_out(out, len, "printf '.load %s/libdiosqlite.so\\n.open %s\\n%s' | "
		       "LD_LIBRARY_PATH=%s sqlite3 -batch", build, uri, cmds, build);
}

/*
 * speedtest1 through the dio VFS on @dev gives the reference hash; the
 * sqlite3 shell then finds the database sound, with the same rows as the
 * reference database, and its .dump is the reference's byte for byte.
 */
/*
 * A database left in WAL mode by an exclusive connection opens only so:
 * the shell sets the locking mode first, and its answer ("exclusive") is
 * the first line of the output, skipped.
 */
#define EXCL	"PRAGMA locking_mode = EXCLUSIVE;\\n"

static const char *skip_excl(const char *out, bool excl)
{
	const char *nl = strchr(out, '\n');

	if (!excl)
		return out;
	assert_non_null(nl);
	assert_memory_equal(out, "exclusive\n", 10);
	return nl + 1;
}

static void speedtest_args(const char *dev, const char *args)
{
	bool excl = strstr(args, "--exclusive") != NULL;
	static char out[4 << 20];
	char hash[256], uri[128];
	int rc;

	printf("# speedtest1 %s on %s\n", args, dev);
	assert_int_equal(run_out(out, sizeof(out),
				 "%s/sqlite/speedtest1 --verify --size " ST_SIZE
				 " %s --vfs dio 'file:%s?format=1'", build, args, dev), 0);
	hash_of(out, hash, sizeof(hash));
	printf("# %s: %s\n", dev, hash);
	assert_string_equal(hash, ref_hash);
	/* The shell: load the extension, open the device, check, count. */
	snprintf(uri, sizeof(uri), "file:%s?vfs=dio", dev);
	rc = shell(out, sizeof(out), uri, excl ? EXCL "PRAGMA integrity_check;\\n"
		   "SELECT count(*), sum(length(c)) FROM z1;\\n" : "PRAGMA integrity_check;\\n"
		   "SELECT count(*), sum(length(c)) FROM z1;\\n");
	printf("%.*s\n", 2000, out);
	assert_int_equal(rc, 0);
	assert_string_equal(skip_excl(out, excl), ref_check);
	/* .dump: the same SQL text as the reference database's. */
	rc = shell(out, sizeof(out), uri, excl ? EXCL ".dump\\n" : ".dump\\n");
	assert_int_equal(rc, 0);
	printf("# .dump: %zu bytes\n", strlen(out));
	assert_true(strlen(out) > 100000);
	assert_string_equal(skip_excl(out, excl), ref_dump);
}

static void db_close_all(void);
static sqlite3 *db_open(const char *uri);
static void db_close(sqlite3 *db);

static void speedtest_on(const char *dev)
{
	speedtest_args(dev, "");
}

static void nvme(int nsid, char *dev, size_t len)
{
	/* What a failed test left: connections, a dm-linear target. */
	db_close_all();
	tl_sh("dmsetup remove dio_sqlite >/dev/null 2>&1; true");
	if (tl_nvme_dev(nsid, dev, len))
		fail_msg("NVMe namespace %d is missing", nsid);
}

static void test_speedtest_nvme(void **state)
{
	char dev[64];

	struct utsname u;

	nvme(1, dev, sizeof(dev));	/* type 1, CRC16, 512 + 8 */
	speedtest_on(dev);
	/*
	 * The other formats on 6.12 alone (CI's time: about 20 s each on the
	 * other lanes); CRC64 4096 runs everywhere in test_speedtest_wal, and
	 * type 3 on scsi_debug.
	 */
	assert_int_equal(uname(&u), 0);
	if (strncmp(u.release, "6.12.", 5))
		return;
	nvme(2, dev, sizeof(dev));	/* type 1, CRC64, 4096 + 16 */
	speedtest_on(dev);
	nvme(3, dev, sizeof(dev));	/* type 3 */
	speedtest_on(dev);
}

/*
 * The WAL, with the WAL index in the connection's memory (exclusive
 * locking: the VFS offers no shared memory), gives the same results; in
 * shared locking mode SQLite keeps the rollback journal instead.
 */
static void test_speedtest_wal(void **state)
{
	char dev[64], uri[128];
	sqlite3 *db;
	sqlite3_stmt *st;

	nvme(2, dev, sizeof(dev));	/* type 1, CRC64, 4096 + 16 */
	speedtest_args(dev, "--journal wal --exclusive");
	snprintf(uri, sizeof(uri), "file:%s?format=1", dev);
	db = db_open(uri);
	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode = WAL", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	printf("# shared locking, journal_mode=WAL gives: %s\n", sqlite3_column_text(st, 0));
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "delete");
	sqlite3_finalize(st);
	db_close(db);
}

static void test_speedtest_scsi_debug(void **state)
{
	char sd[64];

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=64 dif=1 dix=1 guard=0 delay=0", sd,
					    sizeof(sd)), 0);
	speedtest_on(sd);
	assert_int_equal(tl_scsi_debug_unload(), 0);
	assert_int_equal(tl_scsi_debug_load("dev_size_mb=64 dif=3 dix=1 guard=0 delay=0", sd,
					    sizeof(sd)), 0);
	speedtest_on(sd);
	assert_int_equal(tl_scsi_debug_unload(), 0);
}

static void test_speedtest_dm_linear(void **state)
{
	char dev[64];

	nvme(1, dev, sizeof(dev));
	assert_int_equal(tl_kmod_probe("dm_mod", NULL), 0);
	assert_int_equal(tl_sh("dmsetup create dio_sqlite --table '0 98304 linear %s 16384'",
			       dev), 0);
	speedtest_on("/dev/mapper/dio_sqlite");
	assert_int_equal(tl_sh("dmsetup remove dio_sqlite"), 0);
}

/*
 * The connections db_open() opened and db_close() did not close: a test
 * that failed half-way leaves them, and the next test's nvme() closes them
 * (an open volume is not formatted again).
 */
static sqlite3 *open_dbs[16];

static void db_close(sqlite3 *db)
{
	for (int i = 0; i < 16; i++)
		if (open_dbs[i] == db)
			open_dbs[i] = NULL;
	assert_int_equal(sqlite3_close(db), SQLITE_OK);
}

static void db_close_all(void)
{
	for (int i = 0; i < 16; i++)
		if (open_dbs[i]) {
			sqlite3_close_v2(open_dbs[i]);
			open_dbs[i] = NULL;
		}
}

static sqlite3 *db_open(const char *uri)
{
	sqlite3 *db = NULL;
	int rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE |
				 SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, "dio");

	if (rc != SQLITE_OK)
		fail_msg("open %s: %s", uri, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
	sqlite3_busy_timeout(db, 60000);
	for (int i = 0; i < 16; i++)
		if (!open_dbs[i]) {
			open_dbs[i] = db;
			break;
		}
	return db;
}

static void exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
}

static int64_t one_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/*
 * PRAGMA dio_stats: with dio_sqlite_config_memory() (main() calls it)
 * database pages are written in place, from SQLite's own buffers.
 */
static void direct_pages(sqlite3 *db)
{
	sqlite3_stmt *st;
	const char *txt;
	unsigned long long dw = 0;

	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA dio_stats", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	txt = (const char *)sqlite3_column_text(st, 0);
	printf("# dio_stats: %s\n", txt);
	assert_int_equal(sscanf(txt, "direct_writes=%llu", &dw), 1);
	assert_true(dw > 0);
	sqlite3_finalize(st);
}

/* A table of 20 rows in one page; returns its page and the page size. */
static int64_t make_table(const char *uri, int64_t *page_size)
{
	sqlite3 *db = db_open(uri);
	int64_t root;

	exec(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
		 "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 20)"
		 " INSERT INTO t SELECT i, printf('row %d of the table', i) FROM c;");
	root = one_int(db, "SELECT rootpage FROM sqlite_schema WHERE name = 't'");
	*page_size = one_int(db, "PRAGMA page_size");
	direct_pages(db);
	db_close(db);
	return root;
}

/* Flip a byte of @page (the cells' end) in namespace @nsid's image. */
static uint64_t flip(int nsid, int64_t page, int64_t page_size)
{
	char img[64];
	uint64_t off = DSQ_START + (uint64_t)(page - 1) * page_size + page_size - 20;
	FILE *f;
	int c;

	snprintf(img, sizeof(img), "/tmp/results/nvme%d.img", nsid);
	f = fopen(img, "r+");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)off, SEEK_SET), 0);
	c = fgetc(f);
	assert_int_equal(fseek(f, (long)off, SEEK_SET), 0);
	assert_int_equal(fputc(c ^ 0x5a, f), c ^ 0x5a);
	assert_int_equal(fclose(f), 0);
	return off;
}

/* How many rows `SELECT ... FROM t` gives, or -(SQLite error code). */
static int64_t count_rows(sqlite3 *db)
{
	sqlite3_stmt *st;
	int64_t n = 0;
	int rc;

	assert_int_equal(sqlite3_prepare_v2(db, "SELECT id, v FROM t", -1, &st, NULL),
			 SQLITE_OK);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		n++;
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -sqlite3_extended_errcode(db);
	return n;
}

static void test_corruption_reported(void **state)
{
	char dev[64], uri[128], want[256];
	int64_t page, ps, rows;
	uint64_t off;
	sqlite3 *db;

	nvme(1, dev, sizeof(dev));
	snprintf(uri, sizeof(uri), "file:%s?format=1", dev);
	page = make_table(uri, &ps);
	off = flip(1, page, ps);
	printf("# flipped byte %" PRIu64 " of %s (page %" PRId64 ")\n", off, dev, page);
	logbuf[0] = 0;
	snprintf(uri, sizeof(uri), "file:%s", dev);
	db = db_open(uri);
	rows = count_rows(db);
	printf("# rows: %" PRId64 "; log:\n%s", rows, logbuf);
	assert_int_equal(rows, -SQLITE_IOERR_DATA);
	/* The report: page, block, tag, values, who found it. */
	snprintf(want, sizeof(want), "main page %" PRId64 ", %s block %" PRIu64
		 " (interval %" PRIu64 " of the disk): guard tag", page, dev,
		 off / 512, off / 512);
	assert_non_null(strstr(logbuf, want));
	assert_non_null(strstr(logbuf, "found by device"));
	assert_int_equal(one_int(db, "SELECT count(*) FROM dio_pi_failures WHERE "
				 "file = 'main' AND tag = 'guard' AND repaired = 0"), 1);
	{
		char sql[256];

		snprintf(sql, sizeof(sql), "SELECT page = %" PRId64 " AND block = %" PRIu64
			 " AND expected != actual FROM dio_pi_failures", page, off / 512);
		assert_int_equal(one_int(db, sql), 1);
	}
	db_close(db);
}

static void test_mirror_repairs(void **state)
{
	char dev[64], mir[64], uri[160];
	int64_t page, ps;
	sqlite3 *db;

	nvme(1, dev, sizeof(dev));
	nvme(5, mir, sizeof(mir));	/* type 2, 512 + 8: another disk */
	snprintf(uri, sizeof(uri), "file:%s?format=1&mirror=%s", dev, mir);
	page = make_table(uri, &ps);
	flip(1, page, ps);
	logbuf[0] = 0;
	snprintf(uri, sizeof(uri), "file:%s?mirror=%s", dev, mir);
	db = db_open(uri);
	assert_int_equal(count_rows(db), 20);
	printf("# log:\n%s", logbuf);
	assert_non_null(strstr(logbuf, "repaired from the mirror"));
	assert_int_equal(one_int(db, "SELECT count(*) FROM dio_pi_failures WHERE repaired = 1"),
			 1);
	db_close(db);
	/* The primary alone is whole again. */
	logbuf[0] = 0;
	snprintf(uri, sizeof(uri), "file:%s", dev);
	db = db_open(uri);
	assert_int_equal(count_rows(db), 20);
	assert_string_equal(logbuf, "");
	assert_int_equal(one_int(db, "SELECT count(*) FROM t WHERE v = printf('row %d of the table', id)"),
			 20);
	db_close(db);
}

static void test_page_size(void **state)
{
	char dev[64], uri[128];
	char *err = NULL;
	sqlite3 *db;

	nvme(2, dev, sizeof(dev));	/* 4096-byte intervals */
	snprintf(uri, sizeof(uri), "file:%s?format=1", dev);
	db = db_open(uri);
	assert_int_equal(sqlite3_exec(db, "PRAGMA page_size = 1024", NULL, NULL, &err),
			 SQLITE_ERROR);
	printf("# %s\n", err);
	assert_non_null(strstr(err, "not a multiple of the protection interval"));
	sqlite3_free(err);
	exec(db, "PRAGMA page_size = 8192; CREATE TABLE x(a); INSERT INTO x VALUES (1)");
	assert_int_equal(one_int(db, "PRAGMA page_size"), 8192);
	direct_pages(db);
	db_close(db);
}

/*
 * SQLite's own multi-process test, mptest (Debian's source), through the
 * VFS: its script multiwrite01 starts five client processes that write
 * one database at once, each in its own table, and checks what each
 * wrote.  It must end with "Summary: 0 errors out of N tests", and the
 * database sound.  Its other scripts cannot run here: config01 runs
 * nothing but on the unix VFS (--if vfsname() GLOB 'unix'), and crash01
 * and config02 repeat a 6 MB transaction whose client dies, minutes each
 * under TCG.
 */
static void test_mptest(void **state)
{
	static const char *const scripts[] = { "multiwrite01" };
	static char out[256 * 1024];
	char dev[64], src[512] = "", uri[128], want[64];
	const char *sum;
	size_t len;
	FILE *f;
	int n, rc;

	snprintf(out, sizeof(out), "%s/sqlite/sqlite-src", build);
	f = fopen(out, "r");
	assert_non_null(f);
	assert_non_null(fgets(src, sizeof(src), f));
	fclose(f);
	src[strcspn(src, "\n")] = 0;
	nvme(1, dev, sizeof(dev));	/* type 1, CRC16, 512 + 8 */
	for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
		rc = run_out(out, sizeof(out), "cd " WORK " && %s/sqlite/mptest %s "
			     "%s/mptest/%s.test --vfs dio --quiet", build, dev, src, scripts[i]);
		len = strlen(out);
		if (rc)
			fail_msg("mptest %s: exit %d; its output's end:\n%s", scripts[i], rc,
				 out + (len > 4000 ? len - 4000 : 0));
		sum = strstr(out, "Summary: ");
		printf("# mptest %s: %.*s\n", scripts[i], sum ? (int)strcspn(sum, "\n") : 4,
		       sum ? sum : "none");
		if (!sum || sscanf(sum, "Summary: 0 errors out of %d tests", &n) != 1 || n < 10)
			fail_msg("mptest %s:\n%s", scripts[i], out);
		snprintf(uri, sizeof(uri), "file:%s?vfs=dio", dev);
		assert_int_equal(shell(out, sizeof(out), uri, "PRAGMA integrity_check;\n"), 0);
		snprintf(want, sizeof(want), "ok\n");
		assert_string_equal(out, want);
	}
}

/* Two processes insert into one table; every row arrives once. */
static void test_two_processes(void **state)
{
	char dev[64], uri[128];
	pid_t pid[2];
	sqlite3 *db;

	nvme(1, dev, sizeof(dev));
	snprintf(uri, sizeof(uri), "file:%s?format=1", dev);
	db = db_open(uri);
	exec(db, "CREATE TABLE w(p INTEGER, i INTEGER, UNIQUE(p, i))");
	db_close(db);
	snprintf(uri, sizeof(uri), "file:%s", dev);
	for (int p = 0; p < 2; p++) {
		pid[p] = fork();
		assert_true(pid[p] >= 0);
		if (pid[p] == 0) {
			sqlite3 *c = NULL;
			char sql[128];
			int bad = 0;

			if (sqlite3_open_v2(uri, &c, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI,
					    "dio") != SQLITE_OK)
				_exit(2);
			sqlite3_busy_timeout(c, 60000);
			for (int i = 0; i < 50 && !bad; i++) {
				snprintf(sql, sizeof(sql), "INSERT INTO w VALUES (%d, %d)", p, i);
				bad = sqlite3_exec(c, sql, NULL, NULL, NULL) != SQLITE_OK;
				if (bad)
					fprintf(stderr, "child %d: %s\n", p, sqlite3_errmsg(c));
			}
			sqlite3_close(c);
			_exit(bad);
		}
	}
	for (int p = 0; p < 2; p++) {
		int st;

		assert_int_equal(waitpid(pid[p], &st, 0), pid[p]);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
	db = db_open(uri);
	assert_int_equal(one_int(db, "SELECT count(*) FROM w"), 100);
	assert_int_equal(one_int(db, "SELECT count(DISTINCT p * 1000 + i) FROM w"), 100);
	exec(db, "PRAGMA integrity_check");
	db_close(db);
}

/* A device with other data on it is not made a volume unasked. */
static void test_not_a_volume(void **state)
{
	char dev[64], uri[128];
	sqlite3 *db = NULL;
	int rc;

	nvme(3, dev, sizeof(dev));
	assert_int_equal(tl_sh("printf 'another program data' | "
			       "dd of=%s bs=512 count=1 conv=notrunc oflag=direct 2>/dev/null; "
			       "dd if=/dev/zero of=%s bs=512 seek=8 count=1 oflag=direct 2>/dev/null",
			       dev, dev), 0);
	logbuf[0] = 0;
	snprintf(uri, sizeof(uri), "file:%s", dev);
	rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			     SQLITE_OPEN_URI, "dio");
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "CREATE TABLE x(a)", NULL, NULL, NULL);
	printf("# %s", logbuf);
	assert_int_equal(rc, SQLITE_CANTOPEN);
	assert_non_null(strstr(logbuf, "holds no dio_sqlite volume"));
	sqlite3_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_speedtest_nvme),
		cmocka_unit_test(test_speedtest_wal),
		cmocka_unit_test(test_speedtest_scsi_debug),
		cmocka_unit_test(test_speedtest_dm_linear),
		cmocka_unit_test(test_corruption_reported),
		cmocka_unit_test(test_mirror_repairs),
		cmocka_unit_test(test_page_size),
		cmocka_unit_test(test_two_processes),
		cmocka_unit_test(test_mptest),
		cmocka_unit_test(test_not_a_volume),
	};

	if (dio_sqlite_config_memory() != SQLITE_OK)
		return 1;
	sqlite3_config(SQLITE_CONFIG_LOG, log_cb, NULL);
	if (dio_sqlite_register(NULL, 0) != SQLITE_OK || tl_dio_load())
		return 1;
	return cmocka_run_group_tests_name("sqlite", tests, setup, teardown);
}
