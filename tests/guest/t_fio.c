// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fio through the dio_batch engine (build/fio/fio-dio_batch.so, or
 * DIO_FIO_ENGINE: the engine for another Debian suite's fio, in that
 * suite's root, make check-fio-suite): the job
 * files of fio/jobs/ run by /usr/bin/fio as a child, its JSON output
 * (--output-format=json) read with jq, its messages from its stderr.
 * Verify jobs (crc32c with verify_backlog, md5 on mixed reads and writes,
 * 64 jobs sharing one keyed context) on scsi_debug (DIF/DIX) and on NVMe
 * PI namespaces must report no verify error and no I/O error, with every
 * io counted; PI options (pi=1, md_per_io_size, pi_act, pi_chk, apptag);
 * a block corrupted behind the device fails the read with EILSEQ and the
 * module's block number; nocheck=1 as each kernel allows it; claims; a
 * path that is not a block device; fio's own example job files that fit a
 * block device (fio/examples.list); registered buffers (fixedbufs=1) with
 * each kind of I/O memory, shown in use by the fio job's VmPin and by a
 * job whose every io is too large for the pinned-memory ceiling that
 * requests without registered buffers are charged to, the RLIMIT_MEMLOCK
 * failure, a file mapping (EOPNOTSUPP) and io_submit_mode=offload refused.
 *
 * A fio start costs the TCG guest a second or more, more than most of
 * these jobs: the clean runs a test makes on several devices or with
 * several option sets are one fio each (run_parts(): a job per device or
 * set, stonewalled, each job's results checked from the JSON), and so are
 * the example files; each error path keeps its own run.  Sizes are what
 * the checks need (1 MiB verify jobs, 16 MiB disks where no job needs
 * more).
 */
#include <errno.h>
#include <dirent.h>
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"

#define FIO		"/usr/bin/fio"
#define OUT_JSON	"/tmp/t_fio.json"
#define OUT_ERR		"/tmp/t_fio.err"
#define EILSEQ_NR	84
#define U_USER		1000		/* fio run as this user (run_uid) */
#define PINNED_PARAM	"/sys/module/dio_batch/parameters/max_user_pinned_mb"

static char engine[PATH_MAX + 64], jobdir[PATH_MAX + 64], srcdir[PATH_MAX];

#define MAX_JOBS	80	/* jobs (and job processes) told apart in a result */

struct fio_res {
	int rc;			/* fio's exit status */
	int error;		/* largest "error" of the jobs (-1: no JSON) */
	int jobs;		/* jobs in the JSON */
	long r_ios, w_ios;	/* total_ios, summed over the jobs */
	long r_min, w_min;	/* the smallest per job */
	long vmpin_kb;		/* the largest VmPin of a fio process seen */
	/* each job of the JSON, in its order (the first MAX_JOBS) */
	struct {
		int error;
		long r_ios, w_ios;
	} job[MAX_JOBS];
	/*
	 * the job processes seen (fio processes whose parent is not
	 * timeout(1): not fio's main process), in the order first seen,
	 * with the largest VmPin each had
	 */
	int nprocs;
	struct {
		pid_t pid;
		long vmpin_kb;
	} proc[MAX_JOBS];
	char *err;		/* fio's stdout and stderr */
};

/* For the next run_fio(): its user (0: root) and RLIMIT_MEMLOCK (-1: as is). */
static uid_t run_uid;
static long long run_memlock = -1;
/*
 * For the fixedbufs tests: sample the fio processes' VmPin while fio runs
 * (a scan of /proc every 20 ms, which costs the TCG guest CPU time the
 * other tests need not spend).
 */
static bool run_vmpin;

/*
 * The VmPin (kB) of the processes named fio now: the largest goes to
 * @res->vmpin_kb, each job process's (one whose parent is not @main_ppid,
 * the timeout(1) that runs fio) to its own entry of @res->proc.
 */
static void fio_vmpin_sample(struct fio_res *res, pid_t main_ppid)
{
	char path[300], line[256];
	struct dirent *de;
	DIR *dir = opendir("/proc");

	if (!dir)
		return;
	while ((de = readdir(dir))) {
		bool is_fio = false;
		long kb = 0, ppid = 0;
		FILE *f;
		int i;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/status", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			if (!strncmp(line, "Name:", 5))
				is_fio = !strcmp(line + 5 + strspn(line + 5, " \t"), "fio\n");
			else if (!strncmp(line, "PPid:", 5))
				ppid = atol(line + 5);
			else if (!strncmp(line, "VmPin:", 6))
				kb = atol(line + 6);
		}
		fclose(f);
		if (!is_fio)
			continue;
		if (kb > res->vmpin_kb)
			res->vmpin_kb = kb;
		if (ppid == main_ppid)
			continue;
		for (i = 0; i < res->nprocs && res->proc[i].pid != atoi(de->d_name); i++)
			;
		if (i == MAX_JOBS)
			continue;
		if (i == res->nprocs) {
			res->proc[i].pid = atoi(de->d_name);
			res->proc[i].vmpin_kb = 0;
			res->nprocs++;
		}
		if (kb > res->proc[i].vmpin_kb)
			res->proc[i].vmpin_kb = kb;
	}
	closedir(dir);
}

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

/* The job files' variables (engine.inc) unless a test sets them. */
static const char *const defaults[] = {
	"KEY=0", "CLAIM=1", "PI=0", "MD=0", "PI_ACT=1", "PI_CHK=NONE",
	"APPTAG=0x1234", "NOCHECK=0", "BS=4k", "SIZE=4m", "OFFSET=0",
	"NJOBS=1", "FIXEDBUFS=1", "IOMEM=malloc", "SUBMIT_MODE=inline", "THREAD=0",
	"WRITEFUA=0", NULL,
};

/* @job: a file in fio/jobs/, or an absolute path. */
static void job_path(char *path, size_t len, const char *job)
{
	if (job[0] == '/')
		snprintf(path, len, "%s", job);
	else
		snprintf(path, len, "%s/%s", jobdir, job);
}

/*
 * A fio that hangs fails its test, not the whole program: @parts (job
 * files, or parts of run_parts()) of jobs of seconds get 50 s each, at
 * least 120 s.  Ten times what they took on a 6.1 guest beside three
 * others on two cores, and more: a fio of one job file 22 s at most (64
 * jobs in one keyed context), a part 2 s (a 1 MiB verify job), 4.3 s (a
 * registered-buffers job, held 1.3 s by scsi_debug's delay) or, for the
 * examples' files, 4.7 s on average.
 */
static unsigned int fio_guard_s(int parts)
{
	return parts * 50 > 120 ? parts * 50 : 120;
}

/*
 * Run one fio on @jobs (NULL ended: fio runs each file's jobs after the
 * previous file's, as if separated by stonewall) with the engine.inc
 * defaults, overridden by @env ("NAME=value" strings, NULL ended), within
 * @guard_s seconds.  Prints fio's messages (as "# " lines).
 */
static void run_fio_files(struct fio_res *res, const char *const *jobs, const char *const *env,
			  unsigned int guard_s)
{
	char guard[16];
	static char paths[16][2 * PATH_MAX + 64];
	const char *argv[32];
	char cmd[1024], line[512];
	const char *job = jobs[0];
	uint64_t t0;
	int status, argc = 0, nfiles, n;
	pid_t pid;
	FILE *p;

	memset(res, 0, sizeof(*res));
	res->error = -1;
	argv[argc++] = "timeout";
	argv[argc++] = "-k";
	argv[argc++] = "5";
	snprintf(guard, sizeof(guard), "%u", guard_s);
	argv[argc++] = guard;
	argv[argc++] = FIO;
	argv[argc++] = "--output-format=json";
	argv[argc++] = "--output=" OUT_JSON;
	for (nfiles = 0; jobs[nfiles]; nfiles++) {
		assert_true(nfiles < 16);
		job_path(paths[nfiles], sizeof(paths[nfiles]), jobs[nfiles]);
		argv[argc++] = paths[nfiles];
	}
	argv[argc] = NULL;
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
		if (run_memlock >= 0 &&
		    setrlimit(RLIMIT_MEMLOCK, &(struct rlimit){ run_memlock, run_memlock }))
			_exit(125);
		if (run_uid && tl_drop_to(run_uid, run_uid, 0))
			_exit(125);
		setenv("ENGINE", engine, 1);
		for (int i = 0; defaults[i]; i++)
			putenv((char *)defaults[i]);
		for (int i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		/* fio saves verify state files in its working directory */
		if (chdir("/tmp") < 0)
			_exit(126);
		/* within fio_guard_s() */
		execv("/usr/bin/timeout", (char *const *)argv);
		_exit(127);
	}
	/*
	 * the fio processes' pinned memory, every 20 ms while it runs: the
	 * fixedbufs tests make their jobs last long enough to be seen
	 * (sd_hold_ms())
	 */
	while (run_vmpin) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		assert_true(w == 0 || w == pid);
		if (w == pid)
			break;
		fio_vmpin_sample(res, pid);
		usleep(20000);
	}
	if (!run_vmpin)
		assert_int_equal(waitpid(pid, &status, 0), pid);
	res->rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	res->err = slurp(OUT_ERR);
	print_message("# fio %s%s (%s%s%s)%s: exit %d, %.1f s, VmPin up to %ld kB\n", job,
		      nfiles > 1 ? " and more" : "",
		      env && env[0] ? env[0] : "", env && env[0] && env[1] ? " " : "",
		      env && env[0] && env[1] ? env[1] : "", run_uid ? " as uid 1000" : "",
		      res->rc, (tl_now_ns() - t0) / 1e9, res->vmpin_kb);
	{
		/* fio's messages, at most 40 lines of them */
		char *s = res->err, *nl;
		int lines = 0;

		while (*s && lines < 40) {
			nl = strchr(s, '\n');
			print_message("#   %.*s\n", nl ? (int)(nl - s) : (int)strlen(s), s);
			lines++;
			if (!nl)
				break;
			s = nl + 1;
		}
	}
	/* the JSON, from its first line "{" on (fio may print before it): all jobs, then each */
	snprintf(cmd, sizeof(cmd),
		 "sed -n '/^{/,$p' %s | jq -r '([([.jobs[].error]|max), (.jobs|length), ([.jobs[].read.total_ios]|add),"
		 " ([.jobs[].write.total_ios]|add), ([.jobs[].read.total_ios]|min),"
		 " ([.jobs[].write.total_ios]|min)] | @tsv), (.jobs[] | [.error, .read.total_ios,"
		 " .write.total_ios, .jobname] | @tsv)' 2>/dev/null", OUT_JSON);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (fgets(line, sizeof(line), p) &&
	    sscanf(line, "%d %d %ld %ld %ld %ld", &res->error, &res->jobs, &res->r_ios,
		   &res->w_ios, &res->r_min, &res->w_min) != 6)
		res->error = -1;
	print_message("# json: error %d, %d jobs, read ios %ld (min %ld), write ios %ld (min %ld)\n",
		      res->error, res->jobs, res->r_ios, res->r_min, res->w_ios, res->w_min);
	for (n = 0; n < MAX_JOBS && fgets(line, sizeof(line), p); n++) {
		if (sscanf(line, "%d %ld %ld", &res->job[n].error, &res->job[n].r_ios,
			   &res->job[n].w_ios) != 3)
			res->job[n].error = -1;
		if (res->jobs > 1 && res->jobs <= 32)
			print_message("#   job %d: %s", n, line);
	}
	pclose(p);
	for (n = 0; n < res->nprocs && res->nprocs <= 16; n++)
		print_message("#   job process %d: VmPin up to %ld kB\n", n, res->proc[n].vmpin_kb);
}

static void run_fio(struct fio_res *res, const char *job, const char *const *env)
{
	run_fio_files(res, (const char *[]){ job, NULL }, env, fio_guard_s(1));
}

static bool has(const struct fio_res *r, const char *s)
{
	return r->err && strstr(r->err, s);
}

static char dev[64];

/*
 * One fio, several jobs: a fio start costs the guest a second or more
 * (more than most jobs here), so the clean runs of a test that differ in
 * their device or options go into one job file, each the job file it was
 * with its own variables (@dev, @env as run_fio()'s), in stonewalled
 * jobs: one after the other, as the separate fio runs were; each job's
 * results are in the JSON (fio_res.job).  The error paths stay runs of
 * their own.
 */
struct part {
	const char *job;	/* a file of fio/jobs/ */
	char dev[64];
	const char *env[10];	/* NULL ended */
};

#define PARTS_JOB	"/tmp/t_fio-parts.fio"

/* ${@name} (@len bytes) of @pt: its own, the defaults', or ENGINE. */
static const char *part_var(const struct part *pt, const char *name, size_t len)
{
	const char *const *lists[2] = { pt->env, defaults };

	if (len == 3 && !strncmp(name, "DEV", 3))
		return pt->dev;
	for (int l = 0; l < 2; l++)
		for (int i = 0; lists[l][i]; i++)
			if (!strncmp(lists[l][i], name, len) && lists[l][i][len] == '=')
				return lists[l][i] + len + 1;
	if (len == 6 && !strncmp(name, "ENGINE", 6))
		return engine;
	return NULL;
}

/* @line, each ${NAME} of it replaced by @pt's value, onto @out. */
static void part_expand(FILE *out, const char *line, const struct part *pt)
{
	const char *p = line, *v, *e, *val;

	while ((v = strstr(p, "${"))) {
		e = strchr(v, '}');
		assert_non_null(e);
		val = part_var(pt, v + 2, e - v - 2);
		if (!val)
			fail_msg("%s: no value for %.*s", pt->job, (int)(e - v - 2), v + 2);
		fprintf(out, "%.*s%s", (int)(v - p), p, val);
		p = e + 1;
	}
	fputs(p, out);
}

/*
 * @pt's job file onto @out: each job section as "[NAME-@idx]", stonewall,
 * the file's [global] options (engine.inc's included), its own options.
 * No [global] section: later ones would inherit what an earlier part's
 * set and theirs do not.
 */
static void part_write(FILE *out, const struct part *pt, int idx)
{
	char path[2 * PATH_MAX + 64], line[512], *glob = NULL;
	bool global = false;
	size_t glen = 0;
	FILE *f, *g, *inc;

	g = open_memstream(&glob, &glen);
	assert_non_null(g);
	for (int pass = 0; pass < 2; pass++) {
		global = false;
		job_path(path, sizeof(path), pt->job);
		f = fopen(path, "r");
		assert_non_null(f);
		while (fgets(line, sizeof(line), f)) {
			const char *l = line + strspn(line, " \t");

			if (*l == '#' || *l == ';' || *l == '\n' || !*l)
				continue;
			if (*l == '[') {
				global = !strncmp(l, "[global]", 8);
				if (pass && !global) {
					fflush(g);
					fprintf(out, "[%.*s-%d]\nstonewall\n%s", (int)strcspn(l + 1, "]"),
						l + 1, idx, glob);
				}
			} else if (!pass && global && !strncmp(l, "include ", 8)) {
				char name[256];

				snprintf(name, sizeof(name), "%.*s", (int)strcspn(l + 8, " \t\n"), l + 8);
				job_path(path, sizeof(path), name);
				inc = fopen(path, "r");
				assert_non_null(inc);
				while (fgets(line, sizeof(line), inc))
					if (line[0] != '#' && line[0] != ';' && line[0] != '\n')
						part_expand(g, line, pt);
				fclose(inc);
			} else if (!pass && global) {
				part_expand(g, l, pt);
			} else if (pass && !global) {
				part_expand(out, l, pt);
			}
		}
		fclose(f);
	}
	fclose(g);
	free(glob);
}

/* @pt: @job on the device now in dev, with @env (NULL ended, or NULL). */
static void part_set(struct part *pt, const char *job, const char *const *env)
{
	int n = 0;

	memset(pt, 0, sizeof(*pt));
	pt->job = job;
	snprintf(pt->dev, sizeof(pt->dev), "%s", dev);
	for (int i = 0; env && env[i]; i++) {
		assert_true(n < 9);
		pt->env[n++] = env[i];
	}
}

/* One fio on the @n parts @pt, in this order. */
static void run_parts(struct fio_res *res, const struct part *pt, int n)
{
	FILE *out = fopen(PARTS_JOB, "w");

	assert_non_null(out);
	for (int i = 0; i < n; i++) {
		char envs[512] = "";

		for (int k = 0; pt[i].env[k]; k++)
			snprintf(envs + strlen(envs), sizeof(envs) - strlen(envs), " %s",
				 pt[i].env[k]);
		print_message("# part %d: %s on %s:%s\n", i, pt[i].job, pt[i].dev, envs);
		part_write(out, &pt[i], i);
	}
	assert_int_equal(fclose(out), 0);
	run_fio_files(res, (const char *[]){ PARTS_JOB, NULL }, NULL, fio_guard_s(n));
}

/* Each job of @r: no error, @r_ios ios read and @w_ios written (-1: any). */
static void assert_each(const struct fio_res *r, long r_ios, long w_ios)
{
	for (int i = 0; i < r->jobs && i < MAX_JOBS; i++) {
		assert_int_equal(r->job[i].error, 0);
		if (r_ios >= 0)
			assert_int_equal(r->job[i].r_ios, r_ios);
		if (w_ios >= 0)
			assert_int_equal(r->job[i].w_ios, w_ios);
	}
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

static bool sd_loaded;
/* What the fixedbufs tests change, to put back */
static char pinned_saved[32], hugepages_saved[32];
static unsigned int ctl_mode;
static bool ctl_mode_saved;

static void sd_load(const char *opts)
{
	assert_int_equal(tl_scsi_debug_load(opts, dev, sizeof(dev)), 0);
	sd_loaded = true;
}

/*
 * scsi_debug holds every command @ms.  The fixedbufs tests read a job's
 * VmPin by sampling /proc every 20 ms while fio runs (run_fio()), so the
 * registered memory must stay long enough for several samples, on a fast
 * machine too: a job keeps at most iodepth ios in flight, so it lasts at
 * least its ios / iodepth x @ms, whatever the machine's speed.  With
 * 10 ms: the verify job (2048 ios at depth 16) 1.3 s, a shared-key job
 * (128 at depth 4) 320 ms, the time all eight of thread=1 hold theirs
 * together (registered before any starts); 150 ms for 32 ios of 2 MiB at
 * depth 16: 300 ms.  A sample takes milliseconds, tens on a loaded guest.
 */
static void sd_hold_ms(long ms)
{
	assert_int_equal(tl_scsi_debug_ndelay(ms * 1000000L), 0);
}

static int teardown(void **state)
{
	run_vmpin = false;
	run_uid = 0;
	run_memlock = -1;
	if (pinned_saved[0]) {
		tl_write_file(PINNED_PARAM, pinned_saved);
		pinned_saved[0] = 0;
	}
	if (hugepages_saved[0]) {
		tl_write_file("/proc/sys/vm/nr_hugepages", hugepages_saved);
		hugepages_saved[0] = 0;
	}
	if (ctl_mode_saved) {
		tl_dio_ctl_chmod(ctl_mode, &ctl_mode);
		ctl_mode_saved = false;
	}
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

/*
 * Random writes, verified with crc32c as they go (verify_backlog=32) and
 * at the end: 1 MiB in 4 KiB writes (256, each read back once by the
 * verify) in each job of @r.
 */
#define VR_SIZE		"SIZE=1m"
#define VR_IOS		256

static void assert_verify_randwrite(const struct fio_res *r, int jobs)
{
	assert_clean(r, jobs);
	assert_each(r, VR_IOS, VR_IOS);
	assert_int_equal(r->w_ios, jobs * VR_IOS);
	assert_int_equal(r->r_ios, jobs * VR_IOS);
}

static void test_verify_randwrite_sd(void **state)
{
	struct fio_res r;

	sd_load("dev_size_mb=16 dif=1 dix=1");
	run_fio(&r, "verify-randwrite.fio", (const char *[]){ dev_env(), VR_SIZE, NULL });
	assert_verify_randwrite(&r, 1);
	res_free(&r);
}

static void test_verify_randwrite_sd_4k_type3(void **state)
{
	struct fio_res r;

	sd_load("dev_size_mb=16 dif=3 dix=1 sector_size=4096");
	run_fio(&r, "verify-randwrite.fio", (const char *[]){ dev_env(), VR_SIZE, NULL });
	assert_verify_randwrite(&r, 1);
	res_free(&r);
}

/* Each NVMe namespace with PI in its own job, one after the other. */
static void test_verify_randwrite_nvme(void **state)
{
	struct part pt[4];
	struct fio_res r;

	for (int ns = 1; ns <= 4; ns++) {
		nvme(ns);
		part_set(&pt[ns - 1], "verify-randwrite.fio", (const char *[]){ VR_SIZE, NULL });
	}
	run_parts(&r, pt, 4);
	assert_verify_randwrite(&r, 4);
	res_free(&r);
}

/*
 * Mixed random reads and writes, md5-verified: 1 MiB in 4 KiB ios, half
 * of them writes, which the verify reads back, in each job of @r.
 */
static void assert_randrw(const struct fio_res *r, int jobs)
{
	assert_clean(r, jobs);
	for (int i = 0; i < jobs; i++) {
		assert_true(r->job[i].w_ios > 64);
		assert_true(r->job[i].r_ios > 64);
	}
}

static void test_randrw_sd(void **state)
{
	struct fio_res r;

	sd_load("dev_size_mb=16 dif=1 dix=1");
	run_fio(&r, "verify-randrw.fio", (const char *[]){ dev_env(), "SIZE=1m", NULL });
	assert_randrw(&r, 1);
	res_free(&r);
}

static void test_randrw_nvme(void **state)
{
	struct part pt[2];
	struct fio_res r;

	for (int ns = 1; ns <= 2; ns++) {
		nvme(ns);
		part_set(&pt[ns - 1], "verify-randrw.fio", (const char *[]){ "SIZE=1m", NULL });
	}
	run_parts(&r, pt, 2);
	assert_randrw(&r, 2);
	res_free(&r);
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
	sd_load("dev_size_mb=16 dif=1 dix=1");
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
	struct part pt[2];
	struct fio_res r;
	int ctx, fd, h;

	sd_load("dev_size_mb=16 dif=1 dix=1");
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
	/* claim=0 beside it, then in the context of its key: each job clean */
	part_set(&pt[0], "verify-randwrite.fio", (const char *[]){ VR_SIZE, "CLAIM=0", NULL });
	part_set(&pt[1], "verify-randwrite.fio", (const char *[]){ VR_SIZE, "KEY=0xc1a1", NULL });
	run_parts(&r, pt, 2);
	assert_verify_randwrite(&r, 2);
	res_free(&r);

	assert_int_equal(sys_dio_close(ctx, h), 0);
	close(fd);
	sys_dio_exit(ctx);
}

/*
 * PI from the engine (pi_act=0) checked on every tag, and from the
 * kernel: three parts on the device now in dev, from @pt on.
 */
#define PI_PARTS	3

static void pi_parts(struct part *pt)
{
	/* the engine generates PI on writes and verifies it on reads */
	part_set(&pt[0], "verify-randwrite.fio",
		 (const char *[]){ VR_SIZE, "PI=1", "PI_ACT=0", "PI_CHK=GUARD,REFTAG,APPTAG", NULL });
	/* the kernel generates, the module puts our app tag in and checks it */
	part_set(&pt[1], "verify-randwrite.fio",
		 (const char *[]){ VR_SIZE, "PI=1", "PI_ACT=1", "PI_CHK=GUARD,REFTAG,APPTAG",
				   "APPTAG=0x5a5a", NULL });
	/* md_per_io_size instead of pi=1 */
	part_set(&pt[2], "verify-randwrite.fio",
		 (const char *[]){ VR_SIZE, "MD=4096", "PI_ACT=0", "PI_CHK=GUARD,REFTAG", NULL });
}

static void test_pi_sd(void **state)
{
	struct part pt[PI_PARTS];
	struct fio_res r;

	sd_load("dev_size_mb=16 dif=1 dix=1");
	pi_parts(pt);
	run_parts(&r, pt, PI_PARTS);
	assert_verify_randwrite(&r, PI_PARTS);
	res_free(&r);
	/* md_per_io_size too small for a 4 KiB io (8 tuples of 8 bytes) */
	run_fio(&r, "verify-randwrite.fio", (const char *[]){ dev_env(), "MD=32", "PI_ACT=0", NULL });
	assert_int_not_equal(r.rc, 0);
	assert_true(has(&r, "md_per_io_size=32 is smaller than the 64 bytes of PI"));
	res_free(&r);
}

static void test_pi_nvme(void **state)
{
	struct part pt[4 * PI_PARTS];
	struct fio_res r;

	for (int ns = 1; ns <= 4; ns++) {
		nvme(ns);
		pi_parts(&pt[(ns - 1) * PI_PARTS]);
	}
	run_parts(&r, pt, 4 * PI_PARTS);
	assert_verify_randwrite(&r, 4 * PI_PARTS);
	res_free(&r);
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

/* 64 KiB at 1 MiB in one io, with the engine's PI. */
#define REGION_ENV	"OFFSET=1m", "SIZE=64k", "BS=64k", "PI=1", "PI_ACT=0"

/* Write the region with the engine's PI (and crc32c headers for read.fio). */
static void write_region(void)
{
	struct fio_res r;

	run_fio(&r, "write.fio", (const char *[]){ dev_env(), REGION_ENV, NULL });
	assert_clean(&r, 1);
	assert_int_equal(r.w_ios, 1);
	res_free(&r);
}

/* write_region() on NVMe namespaces 1 and 2, one job each. */
static void write_region_nvme12(void)
{
	struct part pt[2];
	struct fio_res r;

	for (int ns = 1; ns <= 2; ns++) {
		nvme(ns);
		part_set(&pt[ns - 1], "write.fio", (const char *[]){ REGION_ENV, NULL });
	}
	run_parts(&r, pt, 2);
	assert_clean(&r, 2);
	assert_each(&r, 0, 1);
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
	assert_true(has(&r, "found by device (EILSEQ)"));
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
	write_region_nvme12();
	for (int ns = 1; ns <= 2; ns++) {
		unsigned int iv = ns == 2 ? 4096 : 512;
		uint64_t at = (1 << 20) + 7 * iv + 100;
		char img[64];
		FILE *f;
		int c;

		nvme(ns);
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
	}
	/* repaired by writing them again */
	write_region_nvme12();
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

	sd_load("dev_size_mb=16 dif=1 dix=1");
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
	struct part pt[2];
	struct fio_res r;

	nvme(1);
	/* write_region(), then the raw read in a job after it */
	part_set(&pt[0], "write.fio", (const char *[]){ REGION_ENV, NULL });
	part_set(&pt[1], "read.fio",
		 (const char *[]){ "OFFSET=1m", "SIZE=64k", "BS=64k", "NOCHECK=1", NULL });
	run_parts(&r, pt, 2);
	/* Before 6.14 this read was EOPNOTSUPP: the passthrough makes it. */
	assert_clean(&r, 2);
	assert_int_equal(r.job[0].w_ios, 1);
	assert_int_equal(r.job[0].r_ios, 0);
	assert_int_equal(r.job[1].r_ios, 1);
	assert_int_equal(r.job[1].w_ios, 0);
	res_free(&r);
}

/*
 * fio's own example job files (from the source package's examples/,
 * copied into fio/examples/ with ioengine and filename taken from the
 * environment; fio/examples.list says which and why the others are not).
 */
/*
 * The jobs of the job file @path in fio's JSON: each section numjobs
 * times, or once with group_reporting (its clones reported together; no
 * example sets it in [global]).
 */
static int file_jobs(const char *path)
{
	bool global = false, in_job = false, grouped = false;
	int jobs = 0, global_nj = 1, nj = 0;
	char line[512];
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		const char *l = line + strspn(line, " \t");

		if (*l == '[') {
			if (in_job)
				jobs += grouped ? 1 : nj;
			global = !strncmp(l, "[global]", 8);
			in_job = !global;
			nj = global_nj;
			grouped = false;
		} else if (!strncmp(l, "group_reporting", 15)) {
			assert_false(global);
			grouped = true;
		} else if (!strncmp(l, "numjobs=", 8)) {
			if (global)
				global_nj = atoi(l + 8);
			else
				nj = atoi(l + 8);
		}
	}
	if (in_job)
		jobs += grouped ? 1 : nj;
	fclose(f);
	return jobs;
}

/*
 * All in one fio (a start of its own for each was most of their cost):
 * fio runs the files one after the other, and each of their jobs must
 * have done I/O without an error.
 */
static void test_examples(void **state)
{
	static char paths[16][PATH_MAX + 300];
	char list[PATH_MAX + 64], line[256];
	const char *files[16];
	int ran = 0, want = 0;
	struct fio_res r;
	FILE *f;

	sd_load("dev_size_mb=16 dif=1 dix=1");
	snprintf(list, sizeof(list), "%s/fio/examples.list", srcdir);
	f = fopen(list, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *name = strtok(line, " \t\n");

		if (!name || name[0] == '#')
			continue;
		assert_true(ran < 15);
		snprintf(paths[ran], sizeof(paths[ran]), "%s/fio/examples/%s", srcdir, name);
		want += file_jobs(paths[ran]);
		files[ran] = paths[ran];
		ran++;
	}
	fclose(f);
	files[ran] = NULL;
	print_message("# %d example job files, %d jobs\n", ran, want);
	assert_true(ran >= 5);
	run_fio_files(&r, files, (const char *[]){ dev_env(), "KEY=0xe1", NULL }, fio_guard_s(ran));
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.error, 0);
	assert_int_equal(r.jobs, want);
	for (int i = 0; i < r.jobs && i < MAX_JOBS; i++) {
		assert_int_equal(r.job[i].error, 0);
		assert_true(r.job[i].r_ios + r.job[i].w_ios > 0);
	}
	assert_false(has(&r, "verify failed"));
	assert_false(has(&r, "fio-dio_batch:"));
	res_free(&r);
}

#define RQ_ISSUE	"/sys/kernel/tracing/events/block/block_rq_issue/enable"

/*
 * Writes of the disk (MAJ,MIN as block_rq_issue prints it) that
 * block_rq_issue recorded since it was enabled, and how many of them
 * carried forced unit access (blk_fill_rwbs(): "W" then "F").
 */
static void issued_writes(const char *majmin, long *writes, long *fua)
{
	char line[512], want[64], rwbs[16], *p;
	FILE *f;

	assert_int_equal(tl_write_file(RQ_ISSUE, "0"), 0);
	f = fopen("/sys/kernel/tracing/trace", "r");
	assert_non_null(f);
	snprintf(want, sizeof(want), " block_rq_issue: %s ", majmin);
	*writes = *fua = 0;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, want);
		if (!p || sscanf(p + strlen(want), "%15s", rwbs) != 1 || rwbs[0] != 'W')
			continue;
		(*writes)++;
		*fua += rwbs[1] == 'F';
	}
	fclose(f);
}

/*
 * writefua=1 (io_uring_cmd's name): every write of the job reaches the
 * disk with forced unit access; writefua=0: none does.  64 writes of
 * 16 KiB each way, counted in the block layer's block_rq_issue events.
 */
static void test_writefua_sd(void **state)
{
	char majmin[32], env[2][16] = { "WRITEFUA=0", "WRITEFUA=1" };
	struct fio_res r;
	struct stat st;
	long writes, fua;

	sd_load("dev_size_mb=16 dif=1 dix=1");
	assert_int_equal(stat(dev, &st), 0);
	snprintf(majmin, sizeof(majmin), "%u,%u", major(st.st_rdev), minor(st.st_rdev));
	assert_int_equal(tl_sh("mountpoint -q /sys/kernel/tracing || "
			       "mount -t tracefs tracefs /sys/kernel/tracing"), 0);
	for (int on = 0; on <= 1; on++) {
		int fd = open("/sys/kernel/tracing/trace", O_WRONLY | O_TRUNC);

		assert_true(fd >= 0);
		close(fd);
		assert_int_equal(tl_write_file(RQ_ISSUE, "1"), 0);
		run_fio(&r, "writefua.fio", (const char *[]){ dev_env(), env[on], NULL });
		issued_writes(majmin, &writes, &fua);
		print_message("# %s: %ld writes at %s, %ld with FUA\n", env[on], writes, majmin, fua);
		assert_clean(&r, 1);
		assert_int_equal(r.w_ios, 64);
		assert_int_equal(writes, 64);
		assert_int_equal(fua, on ? 64 : 0);
		res_free(&r);
	}
}

/*
 * Registered buffers (fixedbufs=1): the verify job at iodepth 16, its
 * 16 io_u buffers of 4 KiB registered once (VmPin of the job's process:
 * exactly their 16 pages, and none without fixedbufs), with each kind of
 * anonymous or shared I/O memory; a file's mapping is EOPNOTSUPP, and
 * io_submit_mode=offload is refused.
 */

static char *read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_non_null(fgets(buf, (int)len, f));
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

#define FIXED_KINDS	7

static void test_fixedbufs_sd(void **state)
{
	static const char *const iomems[FIXED_KINDS] = {
		"IOMEM=malloc", "IOMEM=mmap", "IOMEM=mmapshared", "IOMEM=shm",
		"IOMEM=mmap:/tmp/t_fio.mmap", "IOMEM=shmhuge", "IOMEM=mmaphuge",
	};
	const char *map = "/tmp/results/t_fio.mmap";
	struct part pt[FIXED_KINDS + 1];
	char want[160];
	struct fio_res r;

	sd_load("dev_size_mb=16 dif=1 dix=1");
	sd_hold_ms(10);
	run_vmpin = true;
	/* huge pages (System V, anonymous mmap): a 2 MiB page each */
	read_line("/proc/sys/vm/nr_hugepages", hugepages_saved, sizeof(hugepages_saved));
	assert_int_equal(tl_write_file("/proc/sys/vm/nr_hugepages", "4"), 0);
	/*
	 * Each kind of memory in a job (a process) of its own, one after the
	 * other: each job process's VmPin is its own 64 KiB.  A file's
	 * mapping is shared memory when the file is on tmpfs.  Last, the same
	 * job without registered buffers pins nothing for long.
	 */
	for (int i = 0; i < (int)(sizeof(iomems) / sizeof(iomems[0])); i++)
		part_set(&pt[i], "fixed-verify.fio", (const char *[]){ iomems[i], NULL });
	part_set(&pt[FIXED_KINDS], "fixed-verify.fio", (const char *[]){ "FIXEDBUFS=0", NULL });
	run_parts(&r, pt, FIXED_KINDS + 1);
	assert_clean(&r, FIXED_KINDS + 1);
	/* 4 MiB in 4 KiB writes, each read back once by the verify */
	assert_each(&r, 1024, 1024);
	assert_int_equal(r.nprocs, FIXED_KINDS + 1);
	for (int i = 0; i < FIXED_KINDS; i++)
		assert_int_equal(r.proc[i].vmpin_kb, 64);
	assert_int_equal(r.proc[FIXED_KINDS].vmpin_kb, 0);
	res_free(&r);

	/*
	 * 8 jobs in one keyed context, each registering its 4 io_u buffers on
	 * its own descriptor: 16 KiB pinned by each process, or all 8 sets in
	 * the one process of thread=1
	 */
	for (int thread = 0; thread <= 1; thread++) {
		run_fio(&r, "fixed-shared-key.fio",
			(const char *[]){ dev_env(), thread ? "THREAD=1" : "THREAD=0", "KEY=0xf1d",
					  "NJOBS=8", "SIZE=256k", NULL });
		assert_clean(&r, 8);
		/* each job: 256 KiB in 4 KiB writes, each verified */
		assert_int_equal(r.w_min, 64);
		assert_int_equal(r.r_min, 64);
		assert_int_equal(r.w_ios, 8 * 64);
		assert_int_equal(r.r_ios, 8 * 64);
		assert_int_equal(r.vmpin_kb, thread ? 8 * 16 : 16);
		res_free(&r);
	}

	/* a mapping of a file that is not shared memory (9p) */
	snprintf(want, sizeof(want), "IOMEM=mmap:%s", map);
	run_fio(&r, "fixed-verify.fio", (const char *[]){ dev_env(), want, NULL });
	assert_int_not_equal(r.rc, 0);
	assert_int_equal(r.error, EOPNOTSUPP);
	snprintf(want, sizeof(want), "fio-dio_batch: fixedbufs=1: EOPNOTSUPP (Operation not supported): iomem=mmap:%s maps a file", map);
	assert_true(has(&r, want));
	assert_int_equal(r.w_ios, 0);
	res_free(&r);
	unlink(map);

	run_fio(&r, "fixed-verify.fio", (const char *[]){ dev_env(), "SUBMIT_MODE=offload", NULL });
	assert_int_not_equal(r.rc, 0);
	assert_true(has(&r, "fio-dio_batch: fixedbufs=1 does not go with io_submit_mode=offload"));
	assert_int_equal(r.w_ios + r.r_ios, 0);
	res_free(&r);
}

/*
 * A 2 MiB write of ordinary (not registered) memory, in a tl_run_as()
 * child: its errno.
 */
static int plain_2m_write(void *arg)
{
	struct dio_request req, *rp = &req;
	int ctx, fd, h, ret;
	void *buf;

	ctx = sys_dio_init(0, DIO_PRIVATE);
	fd = open(dev, O_RDWR);
	if (ctx < 0 || fd < 0 || posix_memalign(&buf, 4096, 2 << 20))
		return 101;
	h = sys_dio_open(ctx, fd, DIO_OPEN_NOCLAIM);
	if (h < 0)
		return 102;
	memset(buf, 0x5a, 2 << 20);
	dio_req_prep_write(&req, h, buf, 2 << 20, 0);
	ret = sys_dio_submit(ctx, &rp, 1);
	if (ret == 1)
		return sys_dio_wait(ctx, &rp, 1, NULL) == 1 && req.result == 2 << 20 ? 0 : 103;
	return errno < 100 ? errno : 104;
}

/*
 * fixedbufs=1 as a user who is not root (no CAP_IPC_LOCK): the io_u
 * memory is charged to RLIMIT_MEMLOCK, so a limit below it fails the job
 * at its start with ENOMEM and the advice to raise it.  With room, the
 * verify job runs 2 MiB ios at iodepth 16 under a pinned-memory ceiling
 * (max_user_pinned_mb) of 1 MiB, which refuses any 2 MiB request whose
 * pages are pinned for it (ENOMEM, shown first): every io used the
 * registered memory, 32 MiB of it in VmPin.
 */
static void test_fixedbufs_memlock(void **state)
{
	struct fio_res r;

	sd_load("dev_size_mb=32 dif=1 dix=1");
	sd_hold_ms(10);
	run_vmpin = true;
	assert_int_equal(tl_dio_ctl_chmod(0666, &ctl_mode), 0);
	ctl_mode_saved = true;
	assert_int_equal(chmod(dev, 0666), 0);

	run_uid = U_USER;
	/* 16 io_u buffers of 4 KiB: 64 KiB, over a limit of 32 KiB */
	run_memlock = 32 << 10;
	run_fio(&r, "fixed-verify.fio", (const char *[]){ dev_env(), NULL });
	assert_int_not_equal(r.rc, 0);
	assert_int_equal(r.error, ENOMEM);
	assert_true(has(&r, "fio-dio_batch: fixedbufs=1: registering the job's I/O memory (64 KiB in 1 buffer): ENOMEM (Cannot allocate memory): the pages are charged to RLIMIT_MEMLOCK, 32 KiB here"));
	assert_true(has(&r, "ulimit -l"));
	assert_int_equal(r.w_ios + r.r_ios, 0);
	assert_int_equal(r.vmpin_kb, 0);
	res_free(&r);

	/* exactly enough */
	run_memlock = 64 << 10;
	run_fio(&r, "fixed-verify.fio", (const char *[]){ dev_env(), NULL });
	assert_clean(&r, 1);
	assert_int_equal(r.w_ios, 1024);
	assert_int_equal(r.r_ios, 1024);
	assert_int_equal(r.vmpin_kb, 64);
	res_free(&r);

	read_line(PINNED_PARAM, pinned_saved, sizeof(pinned_saved));
	assert_int_equal(tl_write_file(PINNED_PARAM, "1"), 0);
	assert_int_equal(tl_run_as(U_USER, U_USER, 0, plain_2m_write, NULL), ENOMEM);
	run_memlock = 64 << 20;
	sd_hold_ms(150);
	run_fio(&r, "fixed-verify.fio", (const char *[]){ dev_env(), "BS=2m", "SIZE=32m", NULL });
	sd_hold_ms(10);
	assert_clean(&r, 1);
	assert_int_equal(r.w_ios, 16);
	assert_int_equal(r.r_ios, 16);
	assert_int_equal(r.vmpin_kb, 32 << 10);
	res_free(&r);

	/*
	 * The same ios without fixedbufs: each is refused alone (ENOMEM), the
	 * job fails with it at once, and fio ends.
	 */
	run_fio(&r, "fixed-verify.fio",
		(const char *[]){ dev_env(), "BS=2m", "SIZE=32m", "FIXEDBUFS=0", NULL });
	assert_int_not_equal(r.rc, 0);
	assert_true(has(&r, "larger than the per-user pinned-memory ceiling (dio_batch's max_user_pinned_mb)"));
	assert_true(has(&r, "io_u error on file"));
	assert_true(has(&r, "Cannot allocate memory: write offset="));
	assert_int_equal(r.vmpin_kb, 0);
	res_free(&r);
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
	/* An engine built elsewhere: for another fio (make check-fio-suite) */
	s = getenv("DIO_FIO_ENGINE");
	if (s && *s)
		snprintf(engine, sizeof(engine), "%s", s);
	else
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
	/* Which fio and engine the results are for */
	fflush(stdout);
	if (setenv("ENGINE_SO", engine, 1) ||
	    system("printf '# %s, engine %s\\n' \"$(" FIO " --version)\" \"$ENGINE_SO\""))
		return -1;
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
		T(test_writefua_sd),
		T(test_fixedbufs_sd),
		T(test_fixedbufs_memlock),
		T(test_examples),
	};

	return cmocka_run_group_tests_name("fio", tests, group_setup, group_teardown);
}
