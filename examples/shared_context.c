// SPDX-License-Identifier: MIT
/*
 * shared_context: two processes, one keyed context, one handle.
 *
 * The use case of the 2011 sys_dio_* design: a database opens its disks
 * once, in one process, and its other processes do I/O on them through the
 * handles of a shared context, without opening the devices themselves.
 *
 * The owner creates a keyed context (sys_dio_init_mode with DIO_CREAT and
 * DIO_EXCL, mode 0600: only its user may join), opens DEVICE as handle H,
 * writes its record with PI, and starts the second process: this same
 * program, run again (fork and exec) with nothing but the key, the handle
 * number and two offsets on its command line; every dio_batch descriptor
 * is close-on-exec, so it inherits none.  That process joins the context
 * by its key, checks with sys_dio_stat() who created it, queries handle H,
 * reads the owner's record and checks its PI and data, and writes a record
 * of its own through the same handle.  The owner then reads that record
 * back and checks it.
 *
 * Each process submits, waits and collects on its own descriptor: a
 * descriptor's I/O belongs to the process that created it (another one
 * gets EXDEV), the context and its handles are shared.
 *
 *   usage: shared_context [-k KEY] [-o OFFSET] DEVICE
 *          shared_context --join KEY HANDLE OFFSET   (the second process)
 *
 * KEY defaults to 0x64696f65; OFFSET (default 0) must be a multiple of the
 * logical block size.  THE DATA THERE IS OVERWRITTEN: two records of 4 KiB
 * (or one block each when blocks are larger) from OFFSET, the owner's
 * first.  Every 8 bytes of a record hold their own byte offset in DEVICE
 * multiplied by 0x9e3779b97f4a7c15 (mod 2^64) and xored with the record's
 * app tag (OWNER_TAG, JOINER_TAG), in the machine's byte order.
 *
 * Exit status: 0 when both processes checked out, 1 when a call failed, 2
 * for bad arguments, 3 when a record came back wrong.
 *
 * Build: cc -O2 -o shared_context shared_context.c $(pkg-config --cflags --libs libdioctl)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dioctl.h>

#define DEFAULT_KEY	0x64696f65ULL	/* "dioe" */
#define OWNER_TAG	0x0a01
#define JOINER_TAG	0x0a02

/* What both processes know of the device, from sys_dio_query(). */
struct dev {
	int			ctx, h;
	struct dio_query	q;
	struct dio_pi_profile	p;
	size_t			rec;
	size_t			pi_len;
	unsigned char		*data, *pi;
};

static void fill(void *buf, size_t len, uint64_t off, uint64_t tag)
{
	uint64_t *w = buf;

	for (size_t i = 0; i < len / 8; i++)
		w[i] = (off + 8 * i) * 0x9e3779b97f4a7c15ULL ^ tag;
}

static uint64_t number(const char *s, const char *what)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-')
		errx(2, "bad %s '%s'", what, s);
	return v;
}

/* Query the handle and allocate one record's buffers. */
static void dev_setup(struct dev *d)
{
	ssize_t n;
	size_t align;

	if (sys_dio_query(d->ctx, d->h, &d->q))
		err(1, "sys_dio_query of handle %d", d->h);
	if (dio_pi_profile_from_query(&d->q, &d->p))
		err(1, "handle %d: no protection information", d->h);
	d->rec = d->q.logical_block_size < 4096 ? 4096 : d->q.logical_block_size;
	n = dio_pi_len(&d->p, d->rec);
	if (n < 0)
		err(1, "dio_pi_len");
	d->pi_len = n;
	align = d->q.dma_alignment > 4096 ? d->q.dma_alignment : 4096;
	if (posix_memalign((void **)&d->data, align, d->rec))
		errx(1, "out of memory");
	d->pi = calloc(1, d->pi_len);
	if (!d->pi)
		errx(1, "out of memory");
}

/* One request on this process's own descriptor: submit, wait, check. */
static int run(struct dev *d, struct dio_request *r, const char *what)
{
	struct dio_request *rp = r;

	if (sys_dio_submit(d->ctx, &rp, 1) != 1)
		err(1, "%s: sys_dio_submit", what);
	if (sys_dio_wait(d->ctx, &rp, 1, NULL) != 1)
		err(1, "%s: sys_dio_wait", what);
	if (r->result == -EILSEQ) {
		printf("%s: PI check failed: interval %" PRIu64 ": %s tag: expected %#"
		       PRIx64 ", found %#" PRIx64 "\n", what,
		       (uint64_t)r->pi_err_interval, dio_pi_tag_name(r->pi_err_tag),
		       (uint64_t)r->pi_err_expected, (uint64_t)r->pi_err_actual);
		return -1;
	}
	if (r->result != (int64_t)d->rec)
		errx(1, "%s: %s", what, r->result < 0 ? strerror((int)-r->result) :
		     "short transfer");
	return 0;
}

static void write_record(struct dev *d, uint64_t off, uint16_t tag)
{
	struct dio_request r;

	fill(d->data, d->rec, off, tag);
	memset(d->pi, 0, d->pi_len);
	if (dio_pi_generate(&d->p, d->data, d->rec, d->pi,
			    &(struct dio_pi_params){
				    .seed = dio_pi_seed(&d->q, off),
				    .app_tag = tag }))
		err(1, "dio_pi_generate");
	dio_req_prep_write(&r, d->h, d->data, d->rec, off);
	dio_req_set_pi(&r, d->pi, d->pi_len, DIO_PI_VERIFY_USER, 0, 0);
	if (run(d, &r, "write"))
		exit(3);
}

/* Read the record at @off: the module checks its PI, we check its data. */
static int check_record(struct dev *d, uint64_t off, uint16_t tag, const char *whose)
{
	unsigned char *want = malloc(d->rec);
	struct dio_request r;
	int ret = 0;

	if (!want)
		errx(1, "out of memory");
	memset(d->data, 0, d->rec);
	dio_req_prep_read(&r, d->h, d->data, d->rec, off);
	dio_req_set_pi(&r, d->pi, d->pi_len,
		       DIO_PI_CHK_GUARD | DIO_PI_CHK_APPTAG |
		       (d->q.pi_type == 3 ? 0 : DIO_PI_CHK_REFTAG), tag, 0xffff);
	if (run(d, &r, whose))
		ret = -1;
	fill(want, d->rec, off, tag);
	if (!ret && memcmp(want, d->data, d->rec)) {
		printf("%s: the data differs\n", whose);
		ret = -1;
	}
	free(want);
	return ret;
}

/*
 * The second process: joins by key and uses the owner's handle.  It never
 * opens the device: the handle's query tells all it needs, where a
 * partition starts on its disk (for the reference tags) included.
 */
static int joiner(uint64_t key, int h, uint64_t off)
{
	struct dio_stat st = { .size = sizeof(st) };
	struct dev d = { .h = h };

	/*
	 * No DIO_CREAT: the context must exist.  Another user's context would
	 * need DIO_FOREIGN (EACCES without it), so a key someone else took is
	 * never joined by mistake.
	 */
	d.ctx = sys_dio_init(key, 0);
	if (d.ctx < 0)
		err(1, "sys_dio_init key %#" PRIx64, key);
	if (sys_dio_stat(d.ctx, &st))
		err(1, "sys_dio_stat");
	printf("joiner: context %#" PRIx64 ": owner uid %u, created by pid %d%s, "
	       "mode %04o, descriptors %u, handles %u\n", (uint64_t)st.key, st.uid,
	       st.cpid, st.cpid == getppid() ? " (my parent)" : "", st.mode,
	       st.nr_descriptors, st.nr_handles);
	if (st.cpid != getppid())
		errx(1, "context %#" PRIx64 " was not created by my parent", key);
	dev_setup(&d);
	printf("joiner: handle %d: %s, %zu-byte records\n", h, d.q.profile, d.rec);

	if (check_record(&d, off, OWNER_TAG, "joiner: the owner's record"))
		return 3;
	printf("joiner: the owner's record at %" PRIu64 " checked\n", off);
	write_record(&d, off + d.rec, JOINER_TAG);
	printf("joiner: my record written at %" PRIu64 "\n", off + d.rec);
	sys_dio_exit(d.ctx);
	return 0;
}

int main(int argc, char **argv)
{
	char keys[32], hs[16], offs[32];
	struct dev d = { .ctx = -1 };
	uint64_t key = DEFAULT_KEY, off = 0;
	int fd, opt, status;
	pid_t pid;

	if (argc == 5 && !strcmp(argv[1], "--join"))
		return joiner(number(argv[2], "key"), (int)number(argv[3], "handle"),
			      number(argv[4], "offset"));

	while ((opt = getopt(argc, argv, "k:o:")) != -1) {
		switch (opt) {
		case 'k':
			key = number(optarg, "key");
			break;
		case 'o':
			off = number(optarg, "offset");
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1 || !key)
		goto usage;

	/*
	 * The context, under its key, new (DIO_EXCL: EEXIST if someone has
	 * it), mode 0600: read and write permission are both needed to join.
	 */
	d.ctx = sys_dio_init_mode(key, DIO_CREAT | DIO_EXCL, 0600);
	if (d.ctx < 0)
		err(1, "sys_dio_init_mode key %#" PRIx64 "%s", key,
		    errno == EEXIST ? " (in use: choose another with -k)" : "");
	fd = open(argv[optind], O_RDWR | O_CLOEXEC);
	if (fd < 0)
		err(1, "%s", argv[optind]);
	d.h = sys_dio_open(d.ctx, fd, 0);
	if (d.h < 0)
		err(1, "sys_dio_open %s", argv[optind]);
	dev_setup(&d);
	if (off % d.q.logical_block_size || off > d.q.capacity ||
	    2 * d.rec > d.q.capacity - off)
		errx(2, "offset %" PRIu64 ": not a multiple of %u, or too close "
		     "to the end", off, d.q.logical_block_size);
	printf("owner: context %#" PRIx64 ", %s is handle %d (%s)\n", key,
	       argv[optind], d.h, d.q.profile);

	write_record(&d, off, OWNER_TAG);
	printf("owner: my record written at %" PRIu64 "\n", off);

	/* The second process: this program again, given key, handle, offset. */
	snprintf(keys, sizeof(keys), "%#" PRIx64, key);
	snprintf(hs, sizeof(hs), "%d", d.h);
	snprintf(offs, sizeof(offs), "%" PRIu64, off);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		err(1, "fork");
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "--join", keys, hs, offs, (char *)NULL);
		err(1, "exec /proc/self/exe");
	}
	if (waitpid(pid, &status, 0) != pid)
		err(1, "waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("owner: the joiner failed (%s %d)\n",
		       WIFEXITED(status) ? "status" : "signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return WIFEXITED(status) && WEXITSTATUS(status) == 3 ? 3 : 1;
	}
	if (check_record(&d, off + d.rec, JOINER_TAG, "owner: the joiner's record"))
		return 3;
	printf("owner: the joiner's record at %" PRIu64 " checked\n", off + d.rec);
	printf("OK: two processes shared context %#" PRIx64 " and handle %d\n", key, d.h);
	sys_dio_exit(d.ctx);
	close(fd);
	return 0;

usage:
	fprintf(stderr, "usage: shared_context [-k KEY] [-o OFFSET] DEVICE\n");
	return 2;
}
