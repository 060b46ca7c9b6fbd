// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pi_page: the CPU cost of PI for one database page, as libdiosqlite pays
 * it: dio_pi_generate() (a write) and dio_pi_verify() with every check (a
 * read) of one page in a tight loop, for each format make bench-sqlite's
 * guest has (bench/run-sqlite.sh): CRC16 type 1 at 512-byte intervals
 * (NVMe namespace 1) and CRC64 at 4096 (namespace 2).
 *
 *   pi_page [PAGE_SIZE...]      (default 4096: SQLite's default page size)
 *
 * One line a format and page size:
 *
 *   PI_PAGE guard=crc16 interval=512 page=4096 gen_ns=N verify_ns=N iters=N
 *
 * ns per page of the process's CPU time (CLOCK_PROCESS_CPUTIME_ID), each
 * loop run until it has used PI_PAGE_MS milliseconds of CPU (default 500),
 * the page hot in the cache.  Exits 1 when a generated page does not
 * verify.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dioctl_pi.h"
#include "../libdioctl/src/pi_internal.h"

static double cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static volatile int sink;

/*
 * ns of CPU per call of generate (@verify 0) or verify (1) on @len bytes,
 * repeated until @budget_ns has passed; the number of calls in @iters.
 */
static double per_call(const struct dio_pi_profile *p, const unsigned char *data,
		       size_t len, unsigned char *pi, int verify, double budget_ns,
		       unsigned long *iters)
{
	struct dio_pi_params a = { .seed = 2048, .app_tag = 0x0102, .app_mask = 0xffff,
				   .chk_flags = DIO_PI_CHK_ALL };
	struct dio_pi_error e;
	unsigned long n = 0, batch = 64;
	double t0 = cpu_ns(), t;

	/* The same page each time: its PI stays valid for the verify loop. */
	do {
		for (unsigned long i = 0; i < batch; i++) {
			sink += verify ? dio_pi_verify(p, data, len, pi, &a, &e) :
					 dio_pi_generate(p, data, len, pi, &a);
		}
		n += batch;
		t = cpu_ns() - t0;
	} while (t < budget_ns);
	*iters = n;
	return t / n;
}

static int one(int guard, const char *gname, unsigned int interval, size_t page,
	       double budget_ns)
{
	struct dio_pi_profile p;
	struct dio_pi_params a = { .seed = 2048, .app_tag = 0x0102, .app_mask = 0xffff,
				   .chk_flags = DIO_PI_CHK_ALL };
	struct dio_pi_error e;
	unsigned char *data, *pi;
	unsigned long gi, vi;
	double g, v;

	if (dio_pi_profile_init(&p, guard, interval, 1)) {
		perror("pi_page: dio_pi_profile_init");
		return 1;
	}
	data = aligned_alloc(4096, page);
	pi = calloc(1, dio_pi_len(&p, page));
	if (!data || !pi) {
		perror("pi_page");
		return 1;
	}
	for (size_t i = 0; i < page; i++)
		data[i] = (unsigned char)(i * 131 + 7);
	if (dio_pi_generate(&p, data, page, pi, &a) || dio_pi_verify(&p, data, page, pi, &a, &e)) {
		fprintf(stderr, "pi_page: %s %u: a generated page does not verify: %s\n",
			gname, interval, strerror(errno));
		return 1;
	}
	g = per_call(&p, data, page, pi, 0, budget_ns, &gi);
	v = per_call(&p, data, page, pi, 1, budget_ns, &vi);
	if (sink) {
		fprintf(stderr, "pi_page: %s %u: a call failed in the loop\n", gname, interval);
		return 1;
	}
	printf("PI_PAGE guard=%s interval=%u page=%zu gen_ns=%.0f verify_ns=%.0f iters=%lu/%lu\n",
	       gname, interval, page, g, v, gi, vi);
	free(data);
	free(pi);
	return 0;
}

int main(int argc, char **argv)
{
	const char *ms = getenv("PI_PAGE_MS");
	double budget_ns = (ms ? atof(ms) : 500) * 1e6;
	int rc = 0;

	printf("# pi_page: CRC64 path %s; CRC16 through ISA-L's dispatch\n",
	       pi_crc64_dispatch_name());
	for (int i = 1; i < argc || i == 1; i++) {
		size_t page = argc > 1 ? strtoul(argv[i], NULL, 0) : 4096;

		if (page < 4096 || page % 4096) {
			fprintf(stderr, "pi_page: page size %zu: a multiple of 4096 expected\n", page);
			return 2;
		}
		rc |= one(DIO_GUARD_CRC16, "crc16", 512, page, budget_ns);
		rc |= one(DIO_GUARD_CRC64, "crc64", 4096, page, budget_ns);
	}
	return rc;
}
