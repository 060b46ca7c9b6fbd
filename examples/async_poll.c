// SPDX-License-Identifier: MIT
/*
 * async_poll: an asynchronous I/O loop on one dio_batch context.
 *
 * Writes COUNT records with PI (one record = 4 KiB, or one block when
 * blocks are larger), keeping up to DEPTH requests in flight: it submits
 * as many as there is room for in one sys_dio_submit() call, sleeps in
 * poll() on the context descriptor until completions wait, reaps them with
 * sys_dio_collect() and refills.  Then it reads the records back the same
 * way, the module checking each one's PI (guard, reference tag, and the
 * app tag, which holds the records' generation), and checks the data.
 * A PI failure is printed with everything the module reports: which
 * interval of the disk, which tag, the values expected and found, and who
 * found it.
 *
 *   usage: async_poll [-q DEPTH] [-n COUNT] [-o OFFSET] [-g GEN] [-S RECORD] DEVICE
 *
 *   -q DEPTH   requests in flight at most (default 32)
 *   -n COUNT   records (default 256)
 *   -o OFFSET  byte offset of the first record (default 0)
 *   -g GEN     the generation: the app tag of every record, 0 to 0xfffe
 *              (default 1)
 *   -S RECORD  write record RECORD as an older generation left it (data and
 *              app tag of GEN - 1): a lost write, which the read finds
 *
 * THE DATA THERE IS OVERWRITTEN.  Record i is at OFFSET + i * record size;
 * every 8 bytes of it hold their own byte offset in DEVICE multiplied by
 * 0x9e3779b97f4a7c15 (mod 2^64) and xored with its generation, in the
 * machine's byte order.
 *
 * Exit status: 0 when every record came back right, 1 when a call failed,
 * 2 for bad arguments, 3 when a record failed its PI check or its data
 * differed (each one is printed).
 *
 * Build: cc -O2 -o async_poll async_poll.c $(pkg-config --cflags --libs libdioctl)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dioctl.h>

/* One request slot: a request and its buffers, reused as records go. */
struct slot {
	struct dio_request	req;
	unsigned char		*data;
	unsigned char		*pi;
	uint64_t		record;
};

static struct {
	int			ctx, h;
	struct dio_query	q;
	struct dio_pi_profile	p;
	size_t			rec;		/* bytes per record */
	size_t			pi_len;		/* PI bytes per record */
	uint64_t		off;		/* of record 0 */
	uint64_t		count;
	unsigned int		depth;
	uint16_t		gen;
	int64_t			stale;		/* -1: none */
	struct slot		*slots;
	struct slot		**free_slots;
	unsigned int		nr_free;
	struct dio_request	**batch;	/* depth pointers */
	unsigned int		failures;
} j = { .depth = 32, .count = 256, .gen = 1, .stale = -1 };

/* The phase's statistics. */
static struct {
	unsigned int	submits, polls, collects, max_inflight;
} st;

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

/* Prepare @s for record @i of the phase (@write or read). */
static void prep(struct slot *s, uint64_t i, bool write)
{
	uint64_t off = j.off + i * j.rec;
	uint16_t gen = j.gen;
	unsigned int chk;

	s->record = i;
	if (write) {
		if ((int64_t)i == j.stale)
			gen = j.gen - 1;	/* what an older version left */
		fill(s->data, j.rec, off, gen);
		/* The tuples: guard, the generation, the disk's interval numbers. */
		if (dio_pi_generate(&j.p, s->data, j.rec, s->pi,
				    &(struct dio_pi_params){
					    .seed = dio_pi_seed(&j.q, off),
					    .app_tag = gen }))
			err(1, "dio_pi_generate");
		dio_req_prep_write(&s->req, j.h, s->data, j.rec, off);
		dio_req_set_pi(&s->req, s->pi, j.pi_len, 0, 0, 0);
	} else {
		chk = DIO_PI_CHK_GUARD | DIO_PI_CHK_APPTAG |
		      (j.q.pi_type == 3 ? 0 : DIO_PI_CHK_REFTAG);
		dio_req_prep_read(&s->req, j.h, s->data, j.rec, off);
		dio_req_set_pi(&s->req, s->pi, j.pi_len, chk, j.gen, 0xffff);
	}
	/* Returned untouched with the completion: which slot it was. */
	s->req.cookie = (uint64_t)(s - j.slots);
}

/* A completion: check it, and give its slot back. */
static void complete(struct dio_request *r, bool write)
{
	struct slot *s = &j.slots[r->cookie];
	uint64_t off = j.off + s->record * j.rec;
	const char *what = write ? "write" : "read";

	j.free_slots[j.nr_free++] = s;
	if (r->result == -EILSEQ) {
		j.failures++;
		printf("PI failure: %s of record %" PRIu64 " at offset %" PRIu64 ": ",
		       what, s->record, off);
		if (r->pi_err_interval == DIO_PI_INTERVAL_UNKNOWN)
			printf("the device refused it, block not found");
		else
			printf("interval %" PRIu64 ": %s tag: expected %#" PRIx64
			       ", found %#" PRIx64, (uint64_t)r->pi_err_interval,
			       dio_pi_tag_name(r->pi_err_tag), (uint64_t)r->pi_err_expected,
			       (uint64_t)r->pi_err_actual);
		printf(" (found by %s)\n", dio_pi_source_name(r->pi_err_source));
		return;
	}
	if (r->result < 0)
		errx(1, "%s of record %" PRIu64 ": %s", what, s->record,
		     strerror((int)-r->result));
	if (r->result != (int64_t)j.rec)
		errx(1, "%s of record %" PRIu64 ": %lld bytes", what, s->record,
		     (long long)r->result);
	if (!write) {
		unsigned char *want = malloc(j.rec);

		if (!want)
			errx(1, "out of memory");
		fill(want, j.rec, off, j.gen);
		if (memcmp(want, s->data, j.rec)) {
			j.failures++;
			printf("data differs: record %" PRIu64 " at offset %" PRIu64 "\n",
			       s->record, off);
		}
		free(want);
	}
}

/* Every record once: writes or reads, DEPTH in flight. */
static void phase(bool write)
{
	struct pollfd pfd = { .fd = j.ctx, .events = POLLIN };
	const struct timespec now = { 0, 0 };
	uint64_t next = 0, done = 0;
	unsigned int inflight = 0, n;
	int ret;

	memset(&st, 0, sizeof(st));
	while (done < j.count) {
		/* Fill the queue: one call submits the whole batch. */
		n = 0;
		while (j.nr_free && next + n < j.count) {
			struct slot *s = j.free_slots[--j.nr_free];

			prep(s, next + n, write);
			j.batch[n++] = &s->req;
		}
		if (n) {
			ret = sys_dio_submit(j.ctx, j.batch, n);
			if (ret < 0 && errno == EAGAIN && inflight)
				ret = 0;	/* full: reap first, then again */
			else if (ret < 0)
				err(1, "sys_dio_submit (record %" PRIu64 ")", next);
			st.submits++;
			/* Those not queued go back, to be prepared again. */
			for (unsigned int i = n; i-- > (unsigned int)ret;)
				j.free_slots[j.nr_free++] =
					&j.slots[j.batch[i]->cookie];
			next += ret;
			inflight += ret;
			if (inflight > st.max_inflight)
				st.max_inflight = inflight;
		}
		/* Sleep until completions wait: the descriptor is readable. */
		ret = poll(&pfd, 1, 30000);
		if (ret < 0)
			err(1, "poll");
		if (ret == 0)
			errx(1, "no completion in 30 seconds (%u in flight)", inflight);
		st.polls++;
		/* Reap what is there, without waiting. */
		ret = sys_dio_collect(j.ctx, j.batch, 0, j.depth, &now);
		if (ret < 0)
			err(1, "sys_dio_collect");
		st.collects++;
		for (int i = 0; i < ret; i++)
			complete(j.batch[i], write);
		inflight -= ret;
		done += ret;
	}
	printf("%s: %" PRIu64 " records of %zu bytes, up to %u in flight, "
	       "%u submit, %u poll and %u collect calls\n",
	       write ? "write" : "read", j.count, j.rec, st.max_inflight,
	       st.submits, st.polls, st.collects);
}

int main(int argc, char **argv)
{
	struct dio_features f = { .size = sizeof(f) };
	ssize_t pi_len;
	size_t align;
	int fd, opt;
	uint64_t v;

	while ((opt = getopt(argc, argv, "q:n:o:g:S:")) != -1) {
		switch (opt) {
		case 'q':
			v = number(optarg, "depth");
			if (v < 1 || v > 65536)
				errx(2, "depth: 1 to 65536");
			j.depth = v;
			break;
		case 'n':
			j.count = number(optarg, "count");
			break;
		case 'o':
			j.off = number(optarg, "offset");
			break;
		case 'g':
			v = number(optarg, "generation");
			if (v > 0xfffe)	/* 0xffff would turn the checks off */
				errx(2, "generation: 0 to 0xfffe");
			j.gen = v;
			break;
		case 'S':
			j.stale = number(optarg, "record");
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1)
		goto usage;
	if (j.stale >= 0 && (uint64_t)j.stale >= j.count)
		errx(2, "-S %" PRId64 ": there are %" PRIu64 " records", j.stale, j.count);
	if (j.stale >= 0 && j.gen == 0)
		errx(2, "-S needs a generation above 0");

	if (sys_dio_features(&f))
		err(1, "/dev/dio_batch (module not loaded? not in its group?)");
	/* One call takes at most max_batch requests; a descriptor max_inflight. */
	if (j.depth > f.max_batch)
		j.depth = f.max_batch;
	if (j.depth > f.max_inflight)
		j.depth = f.max_inflight;

	fd = open(argv[optind], O_RDWR | O_CLOEXEC);
	if (fd < 0)
		err(1, "%s", argv[optind]);
	j.ctx = sys_dio_init(0, DIO_PRIVATE);
	if (j.ctx < 0)
		err(1, "sys_dio_init");
	j.h = sys_dio_open(j.ctx, fd, 0);
	if (j.h < 0)
		err(1, "sys_dio_open %s", argv[optind]);
	if (sys_dio_query(j.ctx, j.h, &j.q))
		err(1, "sys_dio_query");
	if (dio_pi_profile_from_query(&j.q, &j.p))
		err(1, "%s: no protection information", argv[optind]);
	close(fd);	/* the handle keeps the device */

	j.rec = j.q.logical_block_size < 4096 ? 4096 : j.q.logical_block_size;
	if (j.off % j.q.logical_block_size)
		errx(2, "offset %" PRIu64 " is not a multiple of %u", j.off,
		     j.q.logical_block_size);
	if (j.off > j.q.capacity || j.count > (j.q.capacity - j.off) / j.rec)
		errx(2, "%" PRIu64 " records of %zu bytes do not fit after offset %" PRIu64,
		     j.count, j.rec, j.off);
	if (j.count < j.depth)
		j.depth = j.count ? j.count : 1;
	pi_len = dio_pi_len(&j.p, j.rec);
	if (pi_len < 0)
		err(1, "dio_pi_len");
	j.pi_len = pi_len;
	printf("%s: %s, %u-byte intervals; %" PRIu64 " records, %u in flight\n",
	       argv[optind], j.q.profile, j.q.pi_interval, j.count, j.depth);

	/* The slots, all free; page-aligned buffers (see pi_roundtrip.c). */
	align = j.q.dma_alignment > 4096 ? j.q.dma_alignment : 4096;
	j.slots = calloc(j.depth, sizeof(*j.slots));
	j.free_slots = calloc(j.depth, sizeof(*j.free_slots));
	j.batch = calloc(j.depth, sizeof(*j.batch));
	if (!j.slots || !j.free_slots || !j.batch)
		errx(1, "out of memory");
	for (unsigned int i = 0; i < j.depth; i++) {
		if (posix_memalign((void **)&j.slots[i].data, align, j.rec))
			errx(1, "out of memory");
		/* Metadata beyond the PI, if the device has some: ours, zero. */
		j.slots[i].pi = calloc(1, j.pi_len);
		if (!j.slots[i].pi)
			errx(1, "out of memory");
		j.free_slots[j.nr_free++] = &j.slots[i];
	}

	phase(true);
	phase(false);

	sys_dio_exit(j.ctx);
	if (j.failures) {
		printf("%u of %" PRIu64 " records failed\n", j.failures, j.count);
		return 3;
	}
	printf("OK: %" PRIu64 " records written and verified, generation %u\n",
	       j.count, j.gen);
	return 0;

usage:
	fprintf(stderr, "usage: async_poll [-q DEPTH] [-n COUNT] [-o OFFSET] [-g GEN] "
		"[-S RECORD] DEVICE\n");
	return 2;
}
