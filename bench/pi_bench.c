// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pi_bench: throughput of libdioctl's PI helpers, one thread.
 *
 * Prints GB/s (10^9 bytes of data per second) on a hot 4 KiB block and
 * streaming over a 64 MiB buffer for each guard implementation, then for
 * dio_pi_generate()/dio_pi_verify() on 1 MiB at 512- and 4096-byte
 * intervals.  A plain AVX2 read loop is the memory-bandwidth yardstick.
 * Each figure is the best of several timed trials; the whole run is
 * bounded to well under 20 seconds.  Not a test: it checks nothing but
 * that verification succeeds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <immintrin.h>

#include "dioctl_pi.h"
#include "../libdioctl/src/pi_internal.h"

#define HOT_LEN		4096
#define STREAM_LEN	(64UL << 20)
#define GENVER_LEN	(1UL << 20)
#define TRIALS		7

typedef uint64_t (*sum_fn)(const void *buf, size_t len);

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- the functions measured, all as sum_fn ---- */

static uint64_t f_crc16_isal(const void *b, size_t n) { return dio_pi_crc16_t10dif(0, b, n); }
static uint64_t f_crc16_slice8(const void *b, size_t n) { return pi_crc16_slice8(0, b, n); }
static uint64_t f_crc16_byte(const void *b, size_t n) { return pi_crc16_bytewise(0, b, n); }
static uint64_t f_crc64_pclmul(const void *b, size_t n) { return pi_crc64_pclmul(0, b, n); }
static uint64_t f_crc64_v512(const void *b, size_t n) { return pi_crc64_vpclmul512(0, b, n); }
static uint64_t f_crc64_slice8(const void *b, size_t n) { return pi_crc64_slice8(0, b, n); }
static uint64_t f_ip_avx2(const void *b, size_t n) { return pi_ipsum_avx2(b, n); }
static uint64_t f_ip_portable(const void *b, size_t n) { return pi_ipsum_portable(b, n); }
static uint64_t f_ip_public(const void *b, size_t n) { return dio_pi_ip_checksum(b, n); }

/* Memory read bandwidth: touch every byte, do next to nothing with it. */
__attribute__((target("avx2")))
static uint64_t f_read_avx2(const void *buf, size_t n)
{
	const __m256i *p = buf;
	__m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
	uint64_t out[4];

	for (size_t i = 0; i < n / 32; i += 4) {
		a = _mm256_or_si256(a, _mm256_loadu_si256(p + i));
		b = _mm256_or_si256(b, _mm256_loadu_si256(p + i + 1));
		c = _mm256_or_si256(c, _mm256_loadu_si256(p + i + 2));
		d = _mm256_or_si256(d, _mm256_loadu_si256(p + i + 3));
	}
	a = _mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, d));
	_mm256_storeu_si256((__m256i *)out, a);
	return out[0] | out[1] | out[2] | out[3];
}

/* ---- timing ---- */

/* Best rate in GB/s of fn over buf[0..len), within about budget seconds. */
static double measure(sum_fn fn, const void *buf, size_t len, double budget)
{
	double t0, t, best = 1e30, start = now();
	size_t reps = 1;

	sink ^= fn(buf, len);		/* warm up caches and branch predictors */
	for (;;) {			/* reps so that one trial takes budget/TRIALS */
		t0 = now();
		for (size_t r = 0; r < reps; r++)
			sink ^= fn(buf, len);
		t = now() - t0;
		if (t >= budget / TRIALS / 2)
			break;
		reps *= 2;
	}
	best = t / reps;
	for (int i = 0; i < TRIALS && now() - start < budget; i++) {
		t0 = now();
		for (size_t r = 0; r < reps; r++)
			sink ^= fn(buf, len);
		t = (now() - t0) / reps;
		if (t < best)
			best = t;
	}
	return len / best / 1e9;
}

struct row {
	const char *name;
	sum_fn fn;
	int (*usable)(void);
};

static int always(void) { return 1; }

static void guard_table(const uint8_t *stream)
{
	static const struct row rows[] = {
		{ "memory read (AVX2)", f_read_avx2, pi_ipsum_have_avx2 },
		{ "CRC16 T10-DIF ISA-L", f_crc16_isal, always },
		{ "CRC16 T10-DIF slice-by-8", f_crc16_slice8, always },
		{ "CRC16 T10-DIF byte table", f_crc16_byte, always },
		{ "CRC64 NVMe AVX-512 VPCLMUL", f_crc64_v512, pi_crc64_have_vpclmul512 },
		{ "CRC64 NVMe PCLMULQDQ", f_crc64_pclmul, pi_crc64_have_pclmul },
		{ "CRC64 NVMe slice-by-8", f_crc64_slice8, always },
		{ "IP checksum (public)", f_ip_public, always },
		{ "IP checksum AVX2", f_ip_avx2, pi_ipsum_have_avx2 },
		{ "IP checksum portable", f_ip_portable, always },
	};
	/* A hot block in the middle of the (already faulted-in) buffer. */
	const uint8_t *hot = stream + 12345 * 64;

	printf("%-28s %12s %14s\n", "guard", "hot 4 KiB", "stream 64 MiB");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (!rows[i].usable()) {
			printf("%-28s %12s %14s\n", rows[i].name, "n/a", "n/a");
			continue;
		}
		printf("%-28s %9.2f GB/s", rows[i].name,
		       measure(rows[i].fn, hot, HOT_LEN, 0.2));
		fflush(stdout);
		printf(" %9.2f GB/s\n", measure(rows[i].fn, stream, STREAM_LEN, 0.5));
	}
}

/* ---- generate / verify ---- */

static struct dio_pi_profile cur;
static uint8_t *cur_pi;

static uint64_t f_generate(const void *b, size_t n)
{
	return dio_pi_generate(&cur, b, n, cur_pi,
			       &(struct dio_pi_params){ .seed = 1000, .app_tag = 0x1234 });
}

static uint64_t f_verify(const void *b, size_t n)
{
	struct dio_pi_error err;

	if (dio_pi_verify(&cur, b, n, cur_pi,
			  &(struct dio_pi_params){ .seed = 1000, .app_tag = 0x1234,
						   .app_mask = 0xffff, .chk_flags = DIO_PI_CHK_ALL },
			  &err)) {
		fprintf(stderr, "verify failed at interval %llu\n",
			(unsigned long long)err.interval);
		exit(1);
	}
	return 0;
}

static void genver_table(const uint8_t *data)
{
	static const struct { int gt; const char *name; } g[] = {
		{ DIO_GUARD_CRC16, "CRC16" }, { DIO_GUARD_CRC64, "CRC64" },
		{ DIO_GUARD_IP, "IP" },
	};
	static const unsigned int iv[] = { 512, 4096 };

	printf("\n%-28s %12s %14s %10s\n", "1 MiB, type 1", "generate", "verify",
	       "ns/tuple");
	cur_pi = malloc(GENVER_LEN / 512 * 16);
	for (size_t i = 0; i < 3; i++)
		for (size_t j = 0; j < 2; j++) {
			double gen, ver;

			dio_pi_profile_init(&cur, g[i].gt, iv[j], 1);
			gen = measure(f_generate, data, GENVER_LEN, 0.25);
			ver = measure(f_verify, data, GENVER_LEN, 0.25);
			printf("%-5s interval %-13u %7.2f GB/s %9.2f GB/s %10.1f\n",
			       g[i].name, iv[j], gen, ver, iv[j] / ver);
		}
	free(cur_pi);
}

int main(void)
{
	uint8_t *buf = aligned_alloc(4096, STREAM_LEN);
	double start = now();

	if (!buf)
		return 1;
	for (size_t i = 0; i < STREAM_LEN; i += 8)	/* fault in, not zero pages */
		memcpy(buf + i, &(uint64_t){ i * 0x9e3779b97f4a7c15ULL }, 8);
	printf("pi_bench: one thread, best of %d trials, GB/s = 1e9 bytes/s\n\n", TRIALS);
	guard_table(buf);
	genver_table(buf);
	printf("\ntotal %.1f s\n", now() - start);
	free(buf);
	return 0;
}
