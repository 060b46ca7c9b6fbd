// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The example programs (examples/, built into $DIO_BUILD/examples/), run
 * as a user who is not root and is a member of the group that
 * /dev/dio_batch belongs to: what the udev rule of the packages sets up.
 *
 * Set-up, as a site would do it: /dev/dio_batch is root:GID_DIO mode 0660
 * (restored by the group teardown), and each disk the user gets is a
 * device node of its own in WORKDIR, root:GID_DIO mode 0660 (the disks'
 * own nodes in /dev are not touched).  The examples run as uid UID_USER,
 * gid GID_USER, with GID_DIO as their one supplementary group.
 *
 *  - without the group, /dev/dio_batch is EACCES: the group is what grants;
 *  - pi_roundtrip on scsi_debug (T10 type 1 CRC 512, type 3 IP 4096, no PI),
 *    every NVMe namespace (type 1 CRC, CRC64, type 3, metadata beyond the
 *    PI) and a partition (ref tags of the whole disk): its exit status, its
 *    report lines, and what it left on the disk, read back by root through
 *    the whole disk and checked with libdioctl (data, app tag, ref tags);
 *  - async_poll with DEPTH requests in flight (scsi_debug delays each
 *    command), then a lost write it injects: the exact failure report,
 *    exit status 3, and the disk's content;
 *  - shared_context: two processes of the user, one keyed context and one
 *    handle; both records on the disk; the context gone afterwards.
 *
 * The data patterns and tags are the ones the examples document.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

#define CTL_PATH	"/dev/dio_batch"
#define WORKDIR		"/tmp/t_examples"
#define UID_USER	1000
#define GID_USER	1000
#define GID_DIO		4242		/* the dio_batch group */
#define EX_TIMEOUT	300		/* seconds per example run: a hang guard for seconds */
#define OUT_MAX		(64 * 1024)

/* The examples' constants. */
#define RT_LEN		(64 * 1024)	/* pi_roundtrip: bytes written */
#define RT_APP		0xd10b		/* pi_roundtrip: app tag */
#define SC_OWNER	0x0a01		/* shared_context: the owner's app tag */
#define SC_JOINER	0x0a02		/* shared_context: the joiner's */

#define PART_START	2048		/* sectors */

static struct {
	uid_t	uid;
	gid_t	gid;
	mode_t	mode;
	bool	saved;
} ctl;

static char out[OUT_MAX];

static int group_setup(void **state)
{
	struct stat st;

	if (tl_dio_load())
		return -1;
	if (mkdir(WORKDIR, 0755) && errno != EEXIST) {
		fprintf(stderr, "mkdir %s: %s\n", WORKDIR, strerror(errno));
		return -1;
	}
	if (stat(CTL_PATH, &st)) {
		fprintf(stderr, "%s: %s\n", CTL_PATH, strerror(errno));
		return -1;
	}
	ctl.uid = st.st_uid;
	ctl.gid = st.st_gid;
	ctl.mode = st.st_mode & 07777;
	ctl.saved = true;
	/* What the udev rule does: root:dio_batch 0660. */
	if (chown(CTL_PATH, 0, GID_DIO) || chmod(CTL_PATH, 0660)) {
		fprintf(stderr, "%s: %s\n", CTL_PATH, strerror(errno));
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	int ret = 0;

	if (ctl.saved && (chown(CTL_PATH, ctl.uid, ctl.gid) || chmod(CTL_PATH, ctl.mode))) {
		fprintf(stderr, "restoring %s: %s\n", CTL_PATH, strerror(errno));
		ret = -1;
	}
	if (tl_scsi_debug_unload())
		ret = -1;
	return ret;
}

static int teardown(void **state)
{
	tl_scsi_debug_ndelay(0);
	return tl_scsi_debug_unload();
}

/* ---- what the examples write ---- */

static void fill(void *buf, size_t len, uint64_t off, uint64_t tag)
{
	uint64_t *w = buf;

	for (size_t i = 0; i < len / 8; i++)
		w[i] = (off + 8 * i) * 0x9e3779b97f4a7c15ULL ^ tag;
}

/* Root's view of a disk: a private context and a handle. */
struct disk {
	int fd, ctx, h;
	struct dio_query q;
	struct dio_pi_profile p;
	bool pi;
};

static void disk_open(struct disk *d, const char *path)
{
	memset(d, 0, sizeof(*d));
	d->fd = open(path, O_RDWR | O_CLOEXEC);
	assert_true(d->fd >= 0);
	d->ctx = sys_dio_init(0, DIO_PRIVATE);
	assert_true(d->ctx >= 0);
	d->h = sys_dio_open(d->ctx, d->fd, 0);
	assert_true(d->h >= 1);
	assert_int_equal(sys_dio_query(d->ctx, d->h, &d->q), 0);
	d->pi = dio_pi_profile_from_query(&d->q, &d->p) == 0;
}

static void disk_close(struct disk *d)
{
	close(d->ctx);
	close(d->fd);
}

/*
 * Write (the PI the kernel's) or read (with the device's PI into @pi when
 * it is not NULL) @len bytes at @off, in pieces of CHUNK bytes.
 */
#define CHUNK	(128 * 1024)
static void disk_rw(struct disk *d, bool write, unsigned char *buf,
		    unsigned char *pi, size_t len, uint64_t off)
{
	struct dio_request r, *rp = &r;
	size_t done, n;

	for (done = 0; done < len; done += n) {
		n = len - done < CHUNK ? len - done : CHUNK;
		if (write)
			dio_req_prep_write(&r, d->h, buf + done, n, off + done);
		else
			dio_req_prep_read(&r, d->h, buf + done, n, off + done);
		if (pi)
			assert_int_equal(dio_req_set_pi(&r, pi + done / d->q.pi_interval *
							d->q.pi_md_size,
							n / d->q.pi_interval * d->q.pi_md_size,
							0, 0, 0), 0);
		assert_int_equal(tl_dio_submit(d->ctx, &rp, 1), 1);
		assert_int_equal(tl_dio_wait(d->ctx, &rp, 1, NULL), 1);
		assert_int_equal(r.result, n);
	}
}

/* Zeroes over @len bytes at @off, the PI the kernel's (or none). */
static void scrub(const char *path, uint64_t off, size_t len)
{
	unsigned char *zero = tl_xalloc(len, 0);
	struct disk d;

	disk_open(&d, path);
	disk_rw(&d, true, zero, NULL, len, off);
	disk_close(&d);
	free(zero);
}

/*
 * The @len bytes at @off of the whole disk @path hold the examples'
 * pattern for device offset @pat_off and tag @tag, and (when the disk has
 * PI) tuples with app tag @app and the disk's interval numbers as ref tags
 * (type 1), all checked by libdioctl on PI read raw from the device.
 */
static void check_disk(const char *path, uint64_t off, size_t len,
		       uint64_t pat_off, uint64_t tag, uint16_t app)
{
	unsigned char *data = tl_xalloc(len, 0xee), *want = tl_xalloc(len, 0);
	unsigned char *pi = NULL;
	struct dio_pi_error e;
	struct disk d;
	ssize_t pilen = 0;

	disk_open(&d, path);
	if (d.pi) {
		pilen = dio_pi_len(&d.p, len);
		assert_true(pilen > 0);
		pi = tl_xalloc(pilen, 0xee);
	}
	disk_rw(&d, false, data, pi, len, off);
	fill(want, len, pat_off, tag);
	if (memcmp(data, want, len)) {
		size_t i = 0;

		while (data[i] == want[i])
			i++;
		fail_msg("%s: %zu bytes at %llu: byte %zu is not the example's",
			 path, len, (unsigned long long)off, i);
	}
	if (d.pi) {
		int ret = dio_pi_verify(&d.p, data, len, pi,
					&(struct dio_pi_params){
						.seed = off / d.q.pi_interval,
						.app_tag = app, .app_mask = 0xffff,
						.chk_flags = DIO_PI_CHK_ALL }, &e);

		if (ret)
			print_message("# %s at %llu: interval %llu tag %u expected %#llx actual %#llx\n",
				      path, (unsigned long long)off,
				      (unsigned long long)e.interval, e.tag,
				      (unsigned long long)e.expected,
				      (unsigned long long)e.actual);
		assert_int_equal(ret, 0);
	}
	disk_close(&d);
	free(data);
	free(want);
	free(pi);
}

/* ---- running an example as the user ---- */

/*
 * A device node for @dev in WORKDIR, root:GID_DIO 0660, in @node: what a
 * site's udev rule gives the database's disks.
 */
static void user_node(const char *dev, char *node, size_t len)
{
	struct stat st;

	assert_int_equal(stat(dev, &st), 0);
	assert_true(S_ISBLK(st.st_mode));
	snprintf(node, len, "%s/%s", WORKDIR, tl_basename(dev));
	unlink(node);
	assert_int_equal(mknod(node, S_IFBLK | 0600, st.st_rdev), 0);
	assert_int_equal(chown(node, 0, GID_DIO), 0);
	assert_int_equal(chmod(node, 0660), 0);
}

/*
 * Run example @name (argv[1...] the NULL-terminated arguments) as
 * UID_USER, with GID_DIO as supplementary group when @in_group.  Its
 * stdout and stderr go to out[], printed as "# name: ..." lines.
 * Returns its exit status (128 + signal when killed).
 */
static int run_example(bool in_group, const char *name, ...)
{
	const char *build = getenv("DIO_BUILD");
	char path[512], *argv[16], outpath[] = WORKDIR "/out.txt";
	int argc = 0, fd, st;
	ssize_t n;
	va_list ap;
	pid_t pid;

	assert_non_null(build);
	snprintf(path, sizeof(path), "%s/examples/%s", build, name);
	if (access(path, X_OK))
		fail_msg("%s: %s", path, strerror(errno));
	argv[argc++] = (char *)name;
	va_start(ap, name);
	while (argc < 15 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	argv[argc] = NULL;

	fd = open(outpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(125);
		if (tl_drop_to(UID_USER, GID_USER, in_group ? GID_DIO : 0)) {
			perror("dropping privileges");
			_exit(125);
		}
		alarm(EX_TIMEOUT);
		execv(path, argv);
		perror(path);
		_exit(126);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	n = pread(fd, out, sizeof(out) - 1, 0);
	close(fd);
	assert_true(n >= 0);
	out[n] = 0;
	print_message("# $ %s", name);
	for (int i = 1; i < argc; i++)
		print_message(" %s", argv[i]);
	print_message("\n");
	for (char *line = out, *nl; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl) {
			print_message("# %s\n", line);
			break;
		}
		print_message("# %.*s\n", (int)(nl - line), line);
	}
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	print_message("# exit status %d\n", WEXITSTATUS(st));
	return WEXITSTATUS(st);
}

/* out[] has this line, whole. */
static void __attribute__((format(printf, 1, 2))) has_line(const char *fmt, ...)
{
	char want[1024];
	size_t l;
	va_list ap;
	char *p;

	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	l = strlen(want);
	for (p = out; (p = strstr(p, want)); p++)
		if ((p == out || p[-1] == '\n') && (p[l] == '\n' || !p[l]))
			return;
	fail_msg("the output has no line \"%s\"", want);
}

/* out[] has a line that starts with this. */
static void __attribute__((format(printf, 1, 2))) has_prefix(const char *fmt, ...)
{
	char want[1024];
	va_list ap;
	char *p;

	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	for (p = out; (p = strstr(p, want)); p++)
		if (p == out || p[-1] == '\n')
			return;
	fail_msg("the output has no line starting \"%s\"", want);
}

/* ---- pi_roundtrip ---- */

struct profile {
	const char	*name;		/* the kernel's profile, "" without PI */
	unsigned int	interval, type, md, tuple;
	const char	*guard;
};

/*
 * pi_roundtrip on @dev (whose whole disk is @disk, @start bytes before
 * it) at @off: exit 0, its report of the device's PI format, its OK line,
 * and the disk's content.
 */
static void roundtrip(const char *dev, const char *disk, uint64_t start,
		      uint64_t off, const struct profile *p)
{
	uint64_t seed = (start + off) / (p->interval ? p->interval : 1);
	char node[128], offs[32];

	user_node(dev, node, sizeof(node));
	scrub(disk, start + off, RT_LEN);
	snprintf(offs, sizeof(offs), "%llu", (unsigned long long)off);
	assert_int_equal(run_example(true, "pi_roundtrip", node, offs, NULL), 0);
	if (!p->interval) {
		has_line("PI: none; data only");
		has_line("OK: %u bytes at offset %llu written and read back", RT_LEN,
			 (unsigned long long)off);
		check_disk(disk, start + off, RT_LEN, off, RT_APP, 0);
		return;
	}
	has_line("PI: %s, %u-byte intervals, type %u, guard %s, %u bytes of metadata "
		 "per interval, the tuple (%u bytes) at 0", p->name, p->interval,
		 p->type, p->guard, p->md, p->tuple);
	if (p->type == 3)
		has_line("OK: %u bytes at offset %llu written and read back with PI: "
			 "%u intervals, no ref tags (type 3), app tag %#x, verified by "
			 "the module and by libdioctl", RT_LEN, (unsigned long long)off,
			 RT_LEN / p->interval, RT_APP);
	else
		has_line("OK: %u bytes at offset %llu written and read back with PI: "
			 "%u intervals, ref tags %llu to %llu, app tag %#x, verified by "
			 "the module and by libdioctl", RT_LEN, (unsigned long long)off,
			 RT_LEN / p->interval, (unsigned long long)seed,
			 (unsigned long long)(seed + RT_LEN / p->interval - 1), RT_APP);
	check_disk(disk, start + off, RT_LEN, off, RT_APP, RT_APP);
}

/* Without the group, the user cannot open /dev/dio_batch; with it, it can. */
static void test_group_grants(void **state)
{
	static const struct profile t1 = { "T10-DIF-TYPE1-CRC", 512, 1, 8, 8, "CRC16 T10-DIF" };
	char dev[64], node[128];

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1 guard=0 sector_size=512",
					    dev, sizeof(dev)), 0);
	user_node(dev, node, sizeof(node));
	assert_int_equal(run_example(false, "pi_roundtrip", node, NULL), 1);
	has_line("pi_roundtrip: /dev/dio_batch (module not loaded? not in its group?): "
		 "Permission denied");
	roundtrip(dev, dev, 0, 0, &t1);
}

static void test_roundtrip_scsi(void **state)
{
	static const struct {
		const char	*opts;
		struct profile	p;
	} t[] = {
		{ "dif=1 dix=1 guard=0 sector_size=512",
		  { "T10-DIF-TYPE1-CRC", 512, 1, 8, 8, "CRC16 T10-DIF" } },
		{ "dif=3 dix=1 guard=1 sector_size=4096",
		  { "T10-DIF-TYPE3-IP", 4096, 3, 8, 8, "IP checksum" } },
		{ "dif=0 dix=0", { "", 0, 0, 0, 0, NULL } },
	};
	char dev[64], opts[128];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(opts, sizeof(opts), "dev_size_mb=16 %s", t[i].opts);
		assert_int_equal(tl_scsi_debug_load(opts, dev, sizeof(dev)), 0);
		roundtrip(dev, dev, 0, 1024 * 1024, &t[i].p);
		assert_int_equal(tl_scsi_debug_unload(), 0);
	}
}

static void test_roundtrip_nvme(void **state)
{
	static const struct profile t[] = {
		[1] = { "T10-DIF-TYPE1-CRC", 512, 1, 8, 8, "CRC16 T10-DIF" },
		[2] = { "EXT-DIF-TYPE1-CRC64", 4096, 1, 16, 16, "CRC64 NVMe" },
		[3] = { "T10-DIF-TYPE3-CRC", 512, 3, 8, 8, "CRC16 T10-DIF" },
		[4] = { "T10-DIF-TYPE1-CRC", 512, 1, 16, 8, "CRC16 T10-DIF" },
	};
	char dev[64];

	for (int nsid = 1; nsid <= 4; nsid++) {
		assert_int_equal(tl_nvme_dev(nsid, dev, sizeof(dev)), 0);
		roundtrip(dev, dev, 0, 1024 * 1024, &t[nsid]);
	}
}

/*
 * Every example on a partition that starts PART_START sectors into the
 * disk: the reference tags they write are the whole disk's.
 */
static void test_partition(void **state)
{
	static const struct profile t1 = { "T10-DIF-TYPE1-CRC", 512, 1, 8, 8, "CRC16 T10-DIF" };
	const uint64_t start = PART_START * 512ULL;
	unsigned char mbr[512] = { 0 };
	char dev[64], part[72], node[128];
	uint64_t app;
	int fd, i;

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1 guard=0",
					    dev, sizeof(dev)), 0);
	mbr[446 + 4] = 0x83;
	*(uint32_t *)&mbr[446 + 8] = PART_START;	/* start LBA */
	*(uint32_t *)&mbr[446 + 12] = 16384;		/* sectors */
	mbr[510] = 0x55;
	mbr[511] = 0xaa;
	fd = open(dev, O_RDWR | O_SYNC);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, mbr, 512, 0), 512);
	assert_int_equal(fsync(fd), 0);
	assert_int_equal(ioctl(fd, BLKRRPART), 0);
	close(fd);
	snprintf(part, sizeof(part), "%s1", dev);
	/* BLKRRPART adds the node (devtmpfs): 5 s (x the factor), a hang guard. */
	for (i = 0; i < 100 * tl_slow_factor() && access(part, F_OK); i++)
		usleep(50000);
	assert_int_equal(access(part, F_OK), 0);

	roundtrip(part, dev, start, 4096, &t1);

	user_node(part, node, sizeof(node));
	assert_int_equal(run_example(true, "async_poll", "-q", "8", "-n", "16", "-o",
				     "131072", "-g", "3", node, NULL), 0);
	has_line("OK: 16 records written and verified, generation 3");
	for (i = 0; i < 16; i++)
		check_disk(dev, start + 131072 + i * 4096, 4096, 131072 + i * 4096, 3, 3);

	assert_int_equal(run_example(true, "shared_context", "-k", "0x5e0002", "-o",
				     "262144", node, NULL), 0);
	has_line("OK: two processes shared context 0x5e0002 and handle 1");
	for (i = 0; i < 2; i++) {
		app = i ? SC_JOINER : SC_OWNER;
		check_disk(dev, start + 262144 + i * 4096, 4096, 262144 + i * 4096, app, app);
	}
}

/* ---- async_poll ---- */

/*
 * async_poll on @dev (@interval-byte intervals): 256 records with 32 in
 * flight, generation 7; then generation 8 with record @stale left at 7,
 * which the read reports, found by @source.
 */
static void async_loop(const char *dev, unsigned int interval, int stale,
		       const char *source)
{
	const unsigned int rec = interval < 4096 ? 4096 : interval;
	uint64_t off = (uint64_t)stale * rec;
	char node[128], stales[16];

	user_node(dev, node, sizeof(node));
	scrub(dev, 0, 256 * rec);
	assert_int_equal(run_example(true, "async_poll", "-q", "32", "-n", "256", "-g", "7",
				     node, NULL), 0);
	has_prefix("write: 256 records of %u bytes, up to 32 in flight, ", rec);
	has_prefix("read: 256 records of %u bytes, up to 32 in flight, ", rec);
	has_line("OK: 256 records written and verified, generation 7");
	check_disk(dev, 0, 256 * rec, 0, 7, 7);

	snprintf(stales, sizeof(stales), "%d", stale);
	assert_int_equal(run_example(true, "async_poll", "-q", "32", "-n", "256", "-g", "8",
				     "-S", stales, node, NULL), 3);
	has_line("PI failure: read of record %d at offset %llu: interval %llu: app tag: "
		 "expected 0x8, found 0x7 (found by %s)", stale, (unsigned long long)off,
		 (unsigned long long)(off / interval), source);
	has_line("1 of 256 records failed");
	check_disk(dev, 0, off, 0, 8, 8);
	check_disk(dev, off, rec, off, 7, 7);
	check_disk(dev, off + rec, 255 * rec - off, off + rec, 8, 8);
}

static void test_async_scsi(void **state)
{
	char dev[64];

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1 guard=0 sector_size=512",
					    dev, sizeof(dev)), 0);
	/*
	 * 100 us per command: the requests wait in flight, poll sleeps (most
	 * of the time: no verdict depends on it).
	 */
	assert_int_equal(tl_scsi_debug_ndelay(100000), 0);
	async_loop(dev, 512, 17, "module");
}

static void test_async_nvme(void **state)
{
	char dev[64];

	/* Since 6.14 NVMe checks the app tag of a read itself. */
	assert_int_equal(tl_nvme_dev(2, dev, sizeof(dev)), 0);
	async_loop(dev, 4096, 5, tl_kernel_at_least(6, 14) ? "device" : "module");
}

/* ---- shared_context ---- */

static void shared(const char *dev, const char *key, unsigned int lbs)
{
	const unsigned int rec = lbs < 4096 ? 4096 : lbs;
	const uint64_t off = 65536;
	char node[128];
	uint64_t k = strtoull(key, NULL, 0);

	user_node(dev, node, sizeof(node));
	scrub(dev, off, 2 * rec);
	assert_int_equal(run_example(true, "shared_context", "-k", key, "-o", "65536",
				     node, NULL), 0);
	has_line("owner: context %s, %s is handle 1 (%s)", key, node,
		 lbs == 4096 ? "EXT-DIF-TYPE1-CRC64" : "T10-DIF-TYPE1-CRC");
	has_prefix("joiner: context %s: owner uid %d, created by pid ", key, UID_USER);
	assert_non_null(strstr(out, " (my parent), mode 0600, descriptors 2, handles 1\n"));
	has_line("joiner: the owner's record at %llu checked", (unsigned long long)off);
	has_line("joiner: my record written at %llu", (unsigned long long)(off + rec));
	has_line("owner: the joiner's record at %llu checked", (unsigned long long)(off + rec));
	has_line("OK: two processes shared context %s and handle 1", key);
	check_disk(dev, off, rec, off, SC_OWNER, SC_OWNER);
	check_disk(dev, off + rec, rec, off + rec, SC_JOINER, SC_JOINER);
	/* The context died with the owner's descriptor. */
	assert_int_equal(tl_errno(sys_dio_init(k, 0)), -ENOENT);
}

static void test_shared_scsi(void **state)
{
	char dev[64];

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1 guard=0 sector_size=512",
					    dev, sizeof(dev)), 0);
	shared(dev, "0x5e0001", 512);
}

static void test_shared_nvme(void **state)
{
	char dev[64];

	assert_int_equal(tl_nvme_dev(2, dev, sizeof(dev)), 0);
	shared(dev, "0x5e0003", 4096);
}

/* Nothing the examples did is left in the module. */
static void test_nothing_left(void **state)
{
	assert_true(tl_dio_caches_drained(10));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_group_grants, teardown),
		cmocka_unit_test_teardown(test_roundtrip_scsi, teardown),
		cmocka_unit_test_teardown(test_roundtrip_nvme, teardown),
		cmocka_unit_test_teardown(test_partition, teardown),
		cmocka_unit_test_teardown(test_async_scsi, teardown),
		cmocka_unit_test_teardown(test_async_nvme, teardown),
		cmocka_unit_test_teardown(test_shared_scsi, teardown),
		cmocka_unit_test_teardown(test_shared_nvme, teardown),
		cmocka_unit_test(test_nothing_left),
	};

	return cmocka_run_group_tests_name("examples", tests, group_setup, group_teardown);
}
