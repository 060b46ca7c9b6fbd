// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fio through the dio_batch engine (build/fio/fio-dio_batch.so): the job
 * files of fio/jobs/ run by /usr/bin/fio as a child, its JSON output
 * (--output-format=json) read with jq, its messages from its stderr.
 * Verify jobs (crc32c with verify_backlog, md5 on mixed reads and writes,
 * 64 jobs sharing one keyed context) on scsi_debug (DIF/DIX) and on NVMe
 * PI namespaces must report no verify error and no I/O error, with every
 * io counted; PI options (pi=1, md_per_io_size, pi_act, pi_chk, apptag);
 * a block corrupted behind the device fails the read with EILSEQ and the
 * module's block number; nocheck=1 as each kernel allows it; claims; a
 * path that is not a block device; fio's own example job files that fit a
 * block device (fio/examples.list).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

#define FIO		"/usr/bin/fio"
#define OUT_JSON	"/tmp/t_fio.json"
#define OUT_ERR		"/tmp/t_fio.err"
#define EILSEQ_NR	84

static char engine[PATH_MAX + 64], jobdir[PATH_MAX + 64], srcdir[PATH_MAX];

struct fio_res {
	int rc;			/* fio's exit status */
	int error;		/* largest "error" of the jobs (-1: no JSON) */
	int jobs;		/* jobs in the JSON */
	long r_ios, w_ios;	/* total_ios, summed over the jobs */
	long r_min, w_min;	/* the smallest per job */
	char *err;		/* fio's stdout and stderr */
};

static void res_free(struct fio_res *r)
{
	free(r->err);
	r->err = NULL;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return strdup("");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, n + 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n)
		buf[0] = 0;
	fclose(f);
	return buf ? buf : strdup("");
}

/*
 * Run fio on @job (a file in fio/jobs/, or an absolute path) with the
 * engine.inc defaults, overridden by @env ("NAME=value" strings, NULL
 * ended).  Prints fio's messages (as "# " lines).
 */
static void run_fio(struct fio_res *res, const char *job, const char *const *env)
{
	static const char *const defaults[] = {
		"KEY=0", "CLAIM=1", "PI=0", "MD=0", "PI_ACT=1", "PI_CHK=NONE",
		"APPTAG=0x1234", "NOCHECK=0", "BS=4k", "SIZE=4m", "OFFSET=0",
		"NJOBS=1", NULL,
	};
	char path[2 * PATH_MAX + 64], cmd[1024], line[512];
	uint64_t t0;
	int status;
	pid_t pid;
	FILE *p;

	memset(res, 0, sizeof(*res));
	res->error = -1;
	if (job[0] == '/')
		snprintf(path, sizeof(path), "%s", job);
	else
		snprintf(path, sizeof(path), "%s/%s", jobdir, job);
	unlink(OUT_JSON);
	t0 = tl_now_ns();
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(OUT_ERR, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0)
			_exit(126);
		dup2(fd, 1);
		dup2(fd, 2);
		setenv("ENGINE", engine, 1);
		for (int i = 0; defaults[i]; i++)
			putenv((char *)defaults[i]);
		for (int i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		/* fio saves verify state files in its working directory */
		if (chdir("/tmp") < 0)
			_exit(126);
		/* a fio that hangs fails its test, not the whole program */
		execl("/usr/bin/timeout", "timeout", "-k", "5", "120", FIO, "--output-format=json",
		      "--output=" OUT_JSON, path, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	res->rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	res->err = slurp(OUT_ERR);
	print_message("# fio %s (%s%s%s): exit %d, %.1f s\n", job, env && env[0] ? env[0] : "",
		      env && env[0] && env[1] ? " " : "", env && env[0] && env[1] ? env[1] : "",
		      res->rc, (tl_now_ns() - t0) / 1e9);
	{
		/* fio's messages, at most 40 lines of them */
		char *s = res->err, *nl;
		int n = 0;

		while (*s && n < 40) {
			nl = strchr(s, '\n');
			print_message("#   %.*s\n", nl ? (int)(nl - s) : (int)strlen(s), s);
			n++;
			if (!nl)
				break;
			s = nl + 1;
		}
	}
	/* the JSON, from its first line "{" on (fio may print before it) */
	snprintf(cmd, sizeof(cmd),
		 "sed -n '/^{/,$p' %s | jq -r '[([.jobs[].error]|max), (.jobs|length), ([.jobs[].read.total_ios]|add),"
		 " ([.jobs[].write.total_ios]|add), ([.jobs[].read.total_ios]|min),"
		 " ([.jobs[].write.total_ios]|min)] | @tsv' 2>/dev/null", OUT_JSON);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (fgets(line, sizeof(line), p) &&
	    sscanf(line, "%d %d %ld %ld %ld %ld", &res->error, &res->jobs, &res->r_ios,
		   &res->w_ios, &res->r_min, &res->w_min) != 6)
		res->error = -1;
	pclose(p);
	print_message("# json: error %d, %d jobs, read ios %ld (min %ld), write ios %ld (min %ld)\n",
		      res->error, res->jobs, res->r_ios, res->r_min, res->w_ios, res->w_min);
}

static bool has(const struct fio_res *r, const char *s)
{
	return r->err && strstr(r->err, s);
}

/* No I/O error, no verify error, nothing the engine complained about. */
static void assert_clean(const struct fio_res *r, int jobs)
{
	assert_int_equal(r->rc, 0);
	assert_int_equal(r->error, 0);
	assert_int_equal(r->jobs, jobs);
	assert_false(has(r, "verify failed"));
	assert_false(has(r, "bad magic"));
	assert_false(has(r, "io_u error"));
	assert_false(has(r, "fio-dio_batch:"));
}

static char dev[64];
static bool sd_loaded;

static void sd_load(const char *opts)
{
	assert_int_equal(tl_scsi_debug_load(opts, dev, sizeof(dev)), 0);
	sd_loaded = true;
}

static int teardown(void **state)
{
	if (sd_loaded) {
		tl_scsi_debug_unload();
		sd_loaded = false;
	}
	return 0;
}

static void nvme(int nsid)
{
	assert_int_equal(tl_nvme_dev(nsid, dev, sizeof(dev)), 0);
}

static char env_dev[96];

static const char *dev_env(void)
{
	snprintf(env_dev, sizeof(env_dev), "DEV=%s", dev);
	return env_dev;
}

/* The engine's own checks: not a block device, unknown options. */
static void test_not_block_device(void **state)
{
	struct fio_res r;
	int fd = open("/tmp/t_fio.img", O_RDWR | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 16 << 20), 0);
	close(fd);
	run_fio(&r, "verify-randwrite.fio", (const char *[]){ "DEV=/tmp/t_fio.img", NULL });
	assert_int_not_equal(r.rc, 0);
	assert_true(has(&r, "fio-dio_batch: /tmp/t_fio.img is not a block device"));
	res_free(&r);
	run_fio(&r, "verify-randwrite.fio", (const char *[]){ "DEV=/dev/no-such-disk", NULL });
	assert_int_not_equal(r.rc, 0);
	assert_true(has(&r, "fio-dio_batch: /dev/no-such-disk: no such block device"));
	res_free(&r);
	nvme(1);
	run_fio(&r, "verify-randwrite.fio", (const char *[]){ dev_env(), "PI_CHK=GUARD,BOGUS", "PI=1", NULL });
	assert_int_not_equal(r.rc, 0);
	assert_true(has(&r, "pi_chk: unknown check 'BOGUS'"));
	res_free(&r);
	run_fio(&r, "verify-randwrite.fio", (const char *[]){ dev_env(), "PI_ACT=0", NULL });
	assert_int_not_equal(r.rc, 0);
	assert_true(has(&r, "pi_act=0 needs PI buffers"));
	res_free(&r);
	unlink("/tmp/t_fio.img");
}

/* Random writes, verified with crc32c as they go and at the end. */
static void verify_randwrite(int mb, const char *const *extra)
{
	const char *env[8] = { dev_env(), mb == 4 ? "SIZE=4m" : "SIZE=2m" };
	struct fio_res r;
	int n = 2;

	for (int i = 0; extra && extra[i]; i++)
		env[n++] = extra[i];
	env[n] = NULL;
	run_fio(&r, "verify-randwrite.fio", env);
	assert_clean(&r, 1);
	/* in 4 KiB writes, each read back once by the verify */
	assert_int_equal(r.w_ios, mb * 256);
	assert_int_equal(r.r_ios, mb * 256);
	res_free(&r);
}

static void test_verify_randwrite_sd(void **state)
{
	sd_load("dev_size_mb=64 dif=1 dix=1");
	verify_randwrite(4, NULL);
}

static void test_verify_randwrite_sd_4k_type3(void **state)
{
	sd_load("dev_size_mb=64 dif=3 dix=1 sector_size=4096");
	verify_randwrite(4, NULL);
}

static void test_verify_randwrite_nvme(void **state)
{
	for (int ns = 1; ns <= 4; ns++) {
		nvme(ns);
		verify_randwrite(4, NULL);
	}
}

/* Mixed random reads and writes, md5-verified. */
static void randrw(void)
{
	struct fio_res r;

	run_fio(&r, "verify-randrw.fio", (const char *[]){ dev_env(), "SIZE=2m", NULL });
	assert_clean(&r, 1);
	assert_true(r.w_ios > 64);
	assert_true(r.r_ios > 64);
	res_free(&r);
}

static void test_randrw_sd(void **state)
{
	sd_load("dev_size_mb=64 dif=1 dix=1");
	randrw();
}

static void test_randrw_nvme(void **state)
{
	nvme(1);
	randrw();
	nvme(2);
	randrw();
}

/*
 * 64 jobs (processes) join one keyed context and share its claim of the
 * device: a context of their own each would get EBUSY from the second on.
 */
#define NJOBS		64
#define NJOBS_S		"64"

static void shared_key(void)
{
	struct fio_res r;

	run_fio(&r, "shared-key.fio",
		(const char *[]){ dev_env(), "KEY=0xf10", "NJOBS=" NJOBS_S, "SIZE=64k", NULL });
	assert_clean(&r, NJOBS);
	/* each job: 64 KiB in 4 KiB writes, each verified */
	assert_int_equal(r.w_min, 16);
	assert_int_equal(r.r_min, 16);
	assert_int_equal(r.w_ios, NJOBS * 16);
	assert_int_equal(r.r_ios, NJOBS * 16);
	res_free(&r);
}

static void test_shared_key_sd(void **state)
{
	sd_load("dev_size_mb=64 dif=1 dix=1");
	shared_key();
}

static void test_shared_key_nvme(void **state)
{
	nvme(1);
	shared_key();
}

/*
 * Claims: a disk another context claimed is EBUSY with a clear message;
 * claim=0 (DIO_OPEN_NOCLAIM) runs beside it; the same key shares it.
 */
static void test_claims(void **state)
{
	struct fio_res r;
	int ctx, fd, h;

	sd_load("dev_size_mb=64 dif=1 dix=1");
	ctx = sys_dio_init(0xc1a1, DIO_CREAT);
	assert_true(ctx >= 0);
	fd = open(dev, O_RDWR);
	assert_true(fd >= 0);
	h = sys_dio_open(ctx, fd, 0);
	assert_true(h > 0);

	run_fio(&r, "verify-randwrite.fio", (const char *[]){ dev_env(), NULL });
	assert_int_not_equal(r.rc, 0);
	assert_true(has(&r, "claimed elsewhere"));
	res_free(&r);
	run_fio(&r, "verify-randwrite.fio", (const char *[]){ dev_env(), "CLAIM=0", NULL });
	assert_clean(&r, 1);
	res_free(&r);
	run_fio(&r, "verify-randwrite.fio", (const char *[]){ dev_env(), "KEY=0xc1a1", NULL });
	assert_clean(&r, 1);
	res_free(&r);

	assert_int_equal(sys_dio_close(ctx, h), 0);
	close(fd);
	sys_dio_exit(ctx);
}

/* PI from the engine (pi_act=0) checked on every tag, and from the kernel. */
static void pi_jobs(void)
{
	/* the engine generates PI on writes and verifies it on reads */
	verify_randwrite(2, (const char *[]){ "PI=1", "PI_ACT=0", "PI_CHK=GUARD,REFTAG,APPTAG", NULL });
	/* the kernel generates, the module puts our app tag in and checks it */
	verify_randwrite(2, (const char *[]){ "PI=1", "PI_ACT=1", "PI_CHK=GUARD,REFTAG,APPTAG",
					   "APPTAG=0x5a5a", NULL });
	/* md_per_io_size instead of pi=1 */
	verify_randwrite(2, (const char *[]){ "MD=4096", "PI_ACT=0", "PI_CHK=GUARD,REFTAG", NULL });
}

static void test_pi_sd(void **state)
{
	struct fio_res r;

	sd_load("dev_size_mb=64 dif=1 dix=1");
	pi_jobs();
	/* md_per_io_size too small for a 4 KiB io (8 tuples of 8 bytes) */
	run_fio(&r, "verify-randwrite.fio", (const char *[]){ dev_env(), "MD=32", "PI_ACT=0", NULL });
	assert_int_not_equal(r.rc, 0);
	assert_true(has(&r, "md_per_io_size=32 is smaller than the 64 bytes of PI"));
	res_free(&r);
}

static void test_pi_nvme(void **state)
{
	for (int ns = 1; ns <= 4; ns++) {
		nvme(ns);
		pi_jobs();
	}
}

/* An app tag other than the one written: EILSEQ, app tag, the block. */
static void test_apptag_mismatch(void **state)
{
	struct fio_res r;
	char want[128];

	nvme(1);
	run_fio(&r, "write.fio", (const char *[]){ dev_env(), "OFFSET=1m", "SIZE=64k", "BS=64k",
						   "PI=1", "PI_ACT=0", "APPTAG=0x1111", NULL });
	assert_clean(&r, 1);
	res_free(&r);
	run_fio(&r, "read.fio", (const char *[]){ dev_env(), "OFFSET=1m", "SIZE=64k", "BS=64k",
						  "PI=1", "PI_ACT=0", "PI_CHK=APPTAG", "APPTAG=0x2222",
						  NULL });
	assert_int_not_equal(r.rc, 0);
	assert_int_equal(r.error, EILSEQ_NR);
	/* the first block of the read: 1 MiB / 512 */
	snprintf(want, sizeof(want), "block %d, app tag, expected 0x2222, actual 0x1111", (1 << 20) / 512);
	assert_true(has(&r, want));
	assert_false(has(&r, "verify failed"));
	res_free(&r);
}

/* Write 64 KiB at 1 MiB with the engine's PI, then check it reads clean. */
static void write_region(void)
{
	struct fio_res r;

	run_fio(&r, "write.fio", (const char *[]){ dev_env(), "OFFSET=1m", "SIZE=64k", "BS=64k",
						   "PI=1", "PI_ACT=0", NULL });
	assert_clean(&r, 1);
	assert_int_equal(r.w_ios, 1);
	res_free(&r);
}

static void read_region_fails(uint64_t block, const char *tag)
{
	struct fio_res r;
	char want[128];

	run_fio(&r, "read.fio", (const char *[]){ dev_env(), "OFFSET=1m", "SIZE=64k", "BS=64k",
						  "PI=1", "PI_ACT=0", "PI_CHK=GUARD,REFTAG,APPTAG", NULL });
	assert_int_not_equal(r.rc, 0);
	assert_int_equal(r.error, EILSEQ_NR);
	assert_true(has(&r, "fio-dio_batch: PI error on "));
	snprintf(want, sizeof(want), "block %llu, %s tag", (unsigned long long)block, tag);
	assert_true(has(&r, want));
	assert_true(has(&r, "found by the device (EILSEQ)"));
	/* fio's own verify never saw the data: the read failed first */
	assert_false(has(&r, "verify failed"));
	res_free(&r);
}

/*
 * A data byte flipped in the namespace's backing file (the results share):
 * the read fails with EILSEQ and the module's block.  NVMe gives the tag
 * and values from 6.14 only (a raw re-read); before, the block alone.
 */
static void test_corrupt_nvme(void **state)
{
	for (int ns = 1; ns <= 2; ns++) {
		unsigned int iv = ns == 2 ? 4096 : 512;
		uint64_t at = (1 << 20) + 7 * iv + 100;
		char img[64];
		FILE *f;
		int c;

		nvme(ns);
		write_region();
		snprintf(img, sizeof(img), "/tmp/results/nvme%d.img", ns);
		f = fopen(img, "r+");
		assert_non_null(f);
		assert_int_equal(fseek(f, (long)at, SEEK_SET), 0);
		c = fgetc(f);
		assert_true(c != EOF);
		assert_int_equal(fseek(f, (long)at, SEEK_SET), 0);
		assert_int_equal(fputc(c ^ 0xff, f), c ^ 0xff);
		fclose(f);
		read_region_fails((1 << 20) / iv + 7, tl_kernel_at_least(6, 14) ? "guard" : "none");
		/* repaired by writing it again */
		write_region();
	}
}

/*
 * SCSI: data rewritten behind its PI (the kernel's generation switched
 * off), so the disk keeps the old tuple: EILSEQ, guard, the block; a raw
 * read (nocheck=1) hands the bad data to fio, whose verify then fails.
 */
static void test_corrupt_sd(void **state)
{
	uint64_t off = (1 << 20) + 5 * 512;
	static unsigned char blk[512] __attribute__((aligned(4096)));
	struct fio_res r;
	int fd;

	sd_load("dev_size_mb=64 dif=1 dix=1");
	write_region();
	fd = open(dev, O_RDWR | O_DIRECT);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, blk, 512, off), 512);
	blk[100] ^= 0xff;
	assert_int_equal(tl_sh("echo 0 > /sys/block/%s/integrity/write_generate", tl_basename(dev)), 0);
	assert_int_equal(pwrite(fd, blk, 512, off), 512);
	close(fd);
	assert_int_equal(tl_sh("echo 1 > /sys/block/%s/integrity/write_generate", tl_basename(dev)), 0);
	read_region_fails((1 << 20) / 512 + 5, "guard");

	run_fio(&r, "read.fio", (const char *[]){ dev_env(), "OFFSET=1m", "SIZE=64k", "BS=64k",
						  "NOCHECK=1", NULL });
	assert_int_not_equal(r.rc, 0);
	assert_int_equal(r.error, EILSEQ_NR);
	assert_true(has(&r, "crc32c: verify failed"));
	assert_false(has(&r, "fio-dio_batch: PI error"));
	res_free(&r);
	write_region();
}

/*
 * nocheck=1 on NVMe: a raw read on every kernel (the data reads and
 * verifies): the module's from 6.14, NVMe passthrough (dio_pi_read_raw())
 * before, which the engine says.
 */
static void test_nocheck_nvme(void **state)
{
	struct fio_res r;

	nvme(1);
	write_region();
	run_fio(&r, "read.fio", (const char *[]){ dev_env(), "OFFSET=1m", "SIZE=64k", "BS=64k",
						  "NOCHECK=1", NULL });
	/* Before 6.14 this read was EOPNOTSUPP: the passthrough makes it. */
	assert_clean(&r, 1);
	assert_int_equal(r.r_ios, 1);
	res_free(&r);
}

/*
 * fio's own example job files (from the source package's examples/,
 * copied into fio/examples/ with ioengine and filename taken from the
 * environment; fio/examples.list says which and why the others are not).
 */
static void test_examples(void **state)
{
	char list[PATH_MAX + 64], line[256], path[PATH_MAX + 300];
	int ran = 0;
	FILE *f;

	sd_load("dev_size_mb=32 dif=1 dix=1");
	snprintf(list, sizeof(list), "%s/fio/examples.list", srcdir);
	f = fopen(list, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		struct fio_res r;
		char *name = strtok(line, " \t\n");

		if (!name || name[0] == '#')
			continue;
		snprintf(path, sizeof(path), "%s/fio/examples/%s", srcdir, name);
		run_fio(&r, path, (const char *[]){ dev_env(), "KEY=0xe1", NULL });
		assert_int_equal(r.rc, 0);
		assert_int_equal(r.error, 0);
		assert_true(r.jobs > 0);
		assert_true(r.r_ios + r.w_ios > 0);
		assert_false(has(&r, "verify failed"));
		assert_false(has(&r, "fio-dio_batch:"));
		res_free(&r);
		ran++;
	}
	fclose(f);
	print_message("# %d example job files ran\n", ran);
	assert_true(ran >= 5);
}

static int group_setup(void **state)
{
	const char *b = getenv("DIO_BUILD");
	char exe[PATH_MAX], *s;
	ssize_t n;

	if (tl_dio_load())
		return -1;
	if (b && *b) {
		if (!realpath(b, exe))
			return -1;
	} else {
		/* build/tests/guest/t_fio -> build */
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0)
			return -1;
		exe[n] = 0;
		for (int i = 0; i < 3 && (s = strrchr(exe, '/')); i++)
			*s = 0;
	}
	snprintf(engine, sizeof(engine), "%s/fio/fio-dio_batch.so", exe);
	s = strrchr(exe, '/');
	if (!s)
		return -1;
	*s = 0;
	snprintf(srcdir, sizeof(srcdir), "%s", exe);
	snprintf(jobdir, sizeof(jobdir), "%s/fio/jobs", srcdir);
	if (access(FIO, X_OK) || access(engine, R_OK) || access(jobdir, R_OK)) {
		fprintf(stderr, "t_fio: need %s, %s and %s (make userspace; fio: make deps)\n",
			FIO, engine, jobdir);
		return -1;
	}
	if (system("jq --version >/dev/null 2>&1")) {
		fprintf(stderr, "t_fio: jq is missing (make deps)\n");
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	teardown(state);
	return tl_dio_unload();
}

#define T(f) cmocka_unit_test_teardown(f, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_not_block_device),
		T(test_verify_randwrite_sd),
		T(test_verify_randwrite_sd_4k_type3),
		T(test_verify_randwrite_nvme),
		T(test_randrw_sd),
		T(test_randrw_nvme),
		T(test_shared_key_sd),
		T(test_shared_key_nvme),
		T(test_claims),
		T(test_pi_sd),
		T(test_pi_nvme),
		T(test_apptag_mismatch),
		T(test_corrupt_nvme),
		T(test_corrupt_sd),
		T(test_nocheck_nvme),
		T(test_examples),
	};

	return cmocka_run_group_tests_name("fio", tests, group_setup, group_teardown);
}
