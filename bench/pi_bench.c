// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * pi_bench: throughput of libdioctl's PI helpers, one thread.
 *
 * Prints GB/s (10^9 bytes of data per second) on a hot 4 KiB block and
 * streaming over a 64 MiB buffer for each guard implementation, every
 * CRC64 path whatever the CPU's dispatch would pick (a path the CPU cannot
 * execute is reported, not run), with ISA-L's own PCLMULQDQ and VPCLMULQDQ
 * entry points beside them and the ratios ours / ISA-L; then the guards
 * at the sizes PI uses (512 bytes, 4 KiB, 4 KiB at 512-byte intervals)
 * against ISA-L's CRC-64/NVME where an ISA-L with it is there
 * (sizes_table(); "pi_bench sizes" runs it alone); then
 * dio_pi_generate()/dio_pi_verify() on 1 MiB at 512- and 4096-byte
 * intervals; then dio_pi_generate_copy() against memcpy() of the same
 * 1 MiB, and each several-interval copying CRC path (the loop under
 * dio_pi_generate_copy()) at 512- and 4096-byte intervals.  A plain AVX2
 * read loop (a 64-bit C one off x86-64) is the memory-bandwidth yardstick.
 * "pi_bench copy" runs the copy section alone.  PI_BENCH_STREAM_MIB=N (1 to
 * 64) streams over N MiB instead: an emulated CPU (make bench-arm64) would
 * spend minutes on each 64 MiB pass.  On AArch64 the machine rows
 * are our PMULL CRC64 path and ISA-L's PMULL kernels; on every CPU the
 * dispatched guards are also timed turn about against the portable C ones
 * (the ratios "... / ... slice-by-8" and "... / IP portable").
 * Each figure is the best of several timed trials; the whole run takes
 * about half a minute.  Every CRC path's result (plain and copying) is
 * checked against slice-by-8 on the buffers it is timed on, every IP sum
 * path's against the portable one, and so is dio_pi_generate_copy()
 * against memcpy() + dio_pi_generate(); a mismatch, or a failed
 * verification, exits with status 1.  The IP sum paths too are each run
 * whatever the dispatch picks, plain and copying.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "dioctl_pi.h"
#include "../libdioctl/src/pi_internal.h"

#define HOT_LEN		4096
#define STREAM_LEN	(64UL << 20)	/* at most; see stream_len */
#define GENVER_LEN	(1UL << 20)
#define TRIALS		7
#define COPY_IV		4096

#ifdef PI_X86
/*
 * ISA-L's own kernels, behind its dispatched crc16_t10dif() and crc64_*()
 * (exported by libisal.so, not declared in its headers): the 128-bit
 * PCLMULQDQ ones (_01, _by4: fold by 4 or 8; crc64 _by8: fold by 8) and
 * the AVX-512 VPCLMULQDQ ones (_by16_10).  crc64_jones_refl is a reflected
 * 64-bit CRC like CRC-64/NVME, folded the same way with other constants.
 */
uint16_t crc16_t10dif_01(uint16_t crc, const unsigned char *buf, uint64_t len);
uint16_t crc16_t10dif_by4(uint16_t crc, const unsigned char *buf, uint64_t len);
uint16_t crc16_t10dif_by16_10(uint16_t crc, const unsigned char *buf, uint64_t len);
uint64_t crc64_jones_refl_by8(uint64_t crc, const unsigned char *buf, uint64_t len);
uint64_t crc64_ecma_refl_by8(uint64_t crc, const unsigned char *buf, uint64_t len);
uint64_t crc64_jones_refl_by16_10(uint64_t crc, const unsigned char *buf, uint64_t len);
#endif
#ifdef PI_ARM64
/* ISA-L's AArch64 kernels behind the same dispatchers (exported, not declared). */
uint16_t crc16_t10dif_pmull(uint16_t crc, const unsigned char *buf, uint64_t len);
uint64_t crc64_jones_refl_pmull(uint64_t crc, const unsigned char *buf, uint64_t len);
#endif
/* ISA-L's table versions, on every CPU. */
uint16_t crc16_t10dif_base(uint16_t crc, const unsigned char *buf, uint64_t len);
uint64_t crc64_jones_refl_base(uint64_t crc, const unsigned char *buf, uint64_t len);

typedef uint64_t (*sum_fn)(const void *buf, size_t len);
typedef uint64_t (*crc64_copy_t)(uint64_t crc, void *dst, const void *src, size_t len);

static volatile uint64_t sink;
/* The streaming buffer's length: STREAM_LEN, or PI_BENCH_STREAM_MIB. */
static size_t stream_len = STREAM_LEN;
static unsigned int stream_mib = STREAM_LEN >> 20;

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
static uint64_t f_crc16_isalbase(const void *b, size_t n) { return crc16_t10dif_base(0, b, n); }
static uint64_t f_crc64_public(const void *b, size_t n) { return dio_pi_crc64_nvme(0, b, n); }
static uint64_t f_crc64_slice8(const void *b, size_t n) { return pi_crc64_slice8(0, b, n); }
static uint64_t f_c64_jonesbase(const void *b, size_t n) { return crc64_jones_refl_base(0, b, n); }
static uint64_t f_ip_portable(const void *b, size_t n) { return pi_ipsum_portable(b, n); }
static uint64_t f_ip_public(const void *b, size_t n) { return dio_pi_ip_checksum(b, n); }
static uint64_t f_ip_dispatched(const void *b, size_t n) { return pi_ipsum(b, n); }
#ifdef PI_X86
static uint64_t f_crc16_isal01(const void *b, size_t n) { return crc16_t10dif_01(0, b, n); }
static uint64_t f_crc16_isalby4(const void *b, size_t n) { return crc16_t10dif_by4(0, b, n); }
static uint64_t f_crc16_isal16(const void *b, size_t n) { return crc16_t10dif_by16_10(0, b, n); }
static uint64_t f_crc64_v512(const void *b, size_t n) { return pi_crc64_vpclmul512(0, b, n); }
static uint64_t f_crc64_v256(const void *b, size_t n) { return pi_crc64_vpclmul256(0, b, n); }
static uint64_t f_crc64_pclmul(const void *b, size_t n) { return pi_crc64_pclmul(0, b, n); }
static uint64_t f_crc64_pclavx(const void *b, size_t n) { return pi_crc64_pclmul_avx(0, b, n); }
static uint64_t f_c64_jones8(const void *b, size_t n) { return crc64_jones_refl_by8(0, b, n); }
static uint64_t f_c64_ecma8(const void *b, size_t n) { return crc64_ecma_refl_by8(0, b, n); }
static uint64_t f_c64_jones16(const void *b, size_t n) { return crc64_jones_refl_by16_10(0, b, n); }
static uint64_t f_ip_avx512(const void *b, size_t n) { return pi_ipsum_avx512(b, n); }
static uint64_t f_ip_avx2(const void *b, size_t n) { return pi_ipsum_avx2(b, n); }
#endif
#ifdef PI_ARM64
static uint64_t f_crc16_pmull(const void *b, size_t n) { return crc16_t10dif_pmull(0, b, n); }
static uint64_t f_crc64_pmull(const void *b, size_t n) { return pi_crc64_pmull(0, b, n); }
static uint64_t f_c64_jonespmull(const void *b, size_t n) { return crc64_jones_refl_pmull(0, b, n); }
#endif

/* Memory read bandwidth: touch every byte, do next to nothing with it. */
#ifdef PI_X86
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
#else
static uint64_t f_read_c(const void *buf, size_t n)
{
	const uint64_t *p = buf;
	uint64_t a = 0, b = 0, c = 0, d = 0;

	for (size_t i = 0; i < n / 8; i += 4) {
		a |= p[i];
		b |= p[i + 1];
		c |= p[i + 2];
		d |= p[i + 3];
	}
	return a | b | c | d;
}
#endif

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

/*
 * Clean upper register halves before a timing: ISA-L's AVX-512 kernels
 * (_by16_10) return without VZEROUPPER, and legacy SSE code after them,
 * its own 128-bit kernels and ours alike, then runs at a fraction of its
 * speed on this CPU (see bench/README.md).  Each pair starts from the
 * state a program that uses only one of them would be in.
 */
#ifdef PI_X86
__attribute__((target("avx")))
static void clean_upper_avx(void)
{
	_mm256_zeroupper();
}
#endif

static void clean_upper(void)
{
#ifdef PI_X86
	if (__builtin_cpu_supports("avx"))
		clean_upper_avx();
#endif
}

/*
 * Two functions timed turn about, in short trials (about a millisecond,
 * less than a scheduler time slice) until the budget is spent, the best
 * of each kept: on a machine shared with other work, both get the same
 * chances at a quiet moment, and their ratio is what this run can say.
 * Rates in GB/s into *ra and *rb.
 */
static void measure_pair(sum_fn fa, sum_fn fb, const void *buf, size_t len,
			 double budget, double *ra, double *rb, int dirty)
{
	double t0, t, best_a = 1e30, best_b = 1e30, start = now();
	size_t reps = 1;

	clean_upper();
#ifdef PI_X86
	/* Or as after ISA-L's AVX-512 CRC (which needs AVX-512: isal_has_by16()). */
	if (dirty)
		sink ^= crc64_jones_refl_by16_10(0, buf, len);
#endif
	sink ^= fa(buf, len) ^ fb(buf, len);
	for (;;) {
		t0 = now();
		for (size_t r = 0; r < reps; r++)
			sink ^= fa(buf, len);
		t = now() - t0;
		if (t >= 1e-3)
			break;
		reps *= 2;
	}
	for (int i = 0; i < 2 * TRIALS || now() - start < budget; i++) {
		t0 = now();
		for (size_t r = 0; r < reps; r++)
			sink ^= fa(buf, len);
		t = (now() - t0) / reps;
		if (t < best_a)
			best_a = t;
		t0 = now();
		for (size_t r = 0; r < reps; r++)
			sink ^= fb(buf, len);
		t = (now() - t0) / reps;
		if (t < best_b)
			best_b = t;
	}
	*ra = len / best_a / 1e9;
	*rb = len / best_b / 1e9;
}

struct row {
	const char *name;
	sum_fn fn;
	int (*usable)(void);
	int crc64;		/* one of our CRC64 paths: checked */
};


static int always(void) { return 1; }
#ifdef PI_X86
static int have_pclmul(void)
{
	return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}
/* What ISA-L 2.30's dispatch asks for its _by16_10 kernels. */
static int isal_has_by16(void)
{
	return have_pclmul() && __builtin_cpu_supports("vpclmulqdq") &&
	       __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
	       __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
	       __builtin_cpu_supports("avx512cd");
}
#endif

/* The ratios printed, ours / theirs, each measured turn about. */
static const struct pair {
	const char *a, *b;
	sum_fn fa, fb;
	int (*usable)(void);	/* both can run */
} pairs[] = {
#ifdef PI_X86
	{ "crc64 avx pclmul fold8", "isal crc64_jones_refl_by8",
	  f_crc64_pclavx, f_c64_jones8, pi_crc64_have_pclmul_avx },
	{ "crc64 pclmul fold8", "isal crc64_jones_refl_by8",
	  f_crc64_pclmul, f_c64_jones8, have_pclmul },
	{ "crc64 vpclmul256", "isal crc64_jones_refl_by8",
	  f_crc64_v256, f_c64_jones8, pi_crc64_have_vpclmul256 },
	{ "crc64 vpclmul256", "crc64 pclmul fold8",
	  f_crc64_v256, f_crc64_pclmul, pi_crc64_have_vpclmul256 },
	{ "crc64 vpclmul512", "isal crc64_jones_refl_by16_10",
	  f_crc64_v512, f_c64_jones16, isal_has_by16 },
#endif
#ifdef PI_ARM64
	{ "crc64 pmull fold8", "isal crc64_jones_refl_pmull",
	  f_crc64_pmull, f_c64_jonespmull, pi_crc64_have_pmull },
	{ "isal crc16_t10dif_pmull", "isal crc16_t10dif_base",
	  f_crc16_pmull, f_crc16_isalbase, pi_crc64_have_pmull },
#endif
	/* The dispatched guards against the portable C code, on any CPU. */
	{ "crc16 ISA-L dispatched", "crc16 slice-by-8", f_crc16_isal, f_crc16_slice8, always },
	{ "crc64 dispatched", "crc64 slice-by-8", f_crc64_public, f_crc64_slice8, always },
	{ "IP dispatched", "IP portable", f_ip_dispatched, f_ip_portable, always },
};

/*
 * An IP sum path ("IP checksum " + its pi_ipsum_paths name, or the public
 * one and the dispatched copy) must give the portable one's result, plain
 * and copying.
 */
static void check_ip(const char *name, sum_fn fn, const void *buf, size_t len)
{
	const struct pi_ipsum_path *p;
	uint32_t (*copy_fn)(void *dst, const void *src, size_t len) = pi_ipsum_copy;
	uint32_t want = pi_ipsum_portable(buf, len);
	uint64_t got = fn(buf, len);
	uint8_t *copy = malloc(len);

	if (fn == f_ip_public)		/* the guard, not the sum */
		got = got == pi_ipsum_to_guard(want) ? want : ~want;
	for (p = pi_ipsum_paths; p->name; p++)
		if (!strcmp(name + strlen("IP checksum "), p->name))
			copy_fn = p->copy;
	if (!copy || got != want || copy_fn(copy, buf, len) != want ||
	    memcmp(copy, buf, len)) {
		fprintf(stderr, "pi_bench: %s: wrong sum over %zu bytes\n", name, len);
		exit(1);
	}
	free(copy);
}

/* A CRC64 path must give slice-by-8's result, plain and copying. */
static void check_crc64(const char *name, sum_fn fn, const void *buf, size_t len)
{
	const struct pi_crc64_path *p;
	crc64_copy_t copy_fn = pi_crc64_copy;	/* the public one's twin */
	uint64_t want = pi_crc64_slice8(0, buf, len);
	uint8_t *copy;

	if (fn(buf, len) != want) {
		fprintf(stderr, "pi_bench: %s: wrong CRC over %zu bytes\n", name, len);
		exit(1);
	}
	for (p = pi_crc64_paths; p->name; p++)
		if (!strcmp(p->name, name))
			copy_fn = p->copy;
	copy = malloc(len);
	if (!copy || copy_fn(0, copy, buf, len) != want || memcmp(copy, buf, len)) {
		fprintf(stderr, "pi_bench: %s: wrong copy or CRC over %zu bytes\n", name, len);
		exit(1);
	}
	free(copy);
}

static void guard_table(const uint8_t *stream)
{
	/* Our CRC64 paths carry the names pi_crc64_paths gives them. */
	static const struct row rows[] = {
#ifdef PI_X86
		{ "memory read (AVX2)", f_read_avx2, pi_ipsum_have_avx2, 0 },
#else
		{ "memory read (C, 64-bit)", f_read_c, always, 0 },
#endif
		{ "CRC16 T10-DIF ISA-L", f_crc16_isal, always, 0 },
#ifdef PI_X86
		{ "isal crc16_t10dif_01", f_crc16_isal01, have_pclmul, 0 },
		{ "isal crc16_t10dif_by4", f_crc16_isalby4, have_pclmul, 0 },
		{ "isal crc16_t10dif_by16_10", f_crc16_isal16, isal_has_by16, 0 },
#endif
#ifdef PI_ARM64
		{ "isal crc16_t10dif_pmull", f_crc16_pmull, pi_crc64_have_pmull, 0 },
#endif
		{ "isal crc16_t10dif_base", f_crc16_isalbase, always, 0 },
		{ "CRC16 T10-DIF slice-by-8", f_crc16_slice8, always, 0 },
		{ "CRC16 T10-DIF byte table", f_crc16_byte, always, 0 },
		{ "CRC64 NVMe (public)", f_crc64_public, always, 1 },
#ifdef PI_X86
		{ "AVX-512 VPCLMULQDQ", f_crc64_v512, pi_crc64_have_vpclmul512, 1 },
		{ "VPCLMULQDQ AVX2", f_crc64_v256, pi_crc64_have_vpclmul256, 1 },
		{ "AVX PCLMULQDQ fold8", f_crc64_pclavx, pi_crc64_have_pclmul_avx, 1 },
		{ "PCLMULQDQ fold8", f_crc64_pclmul, pi_crc64_have_pclmul, 1 },
#endif
#ifdef PI_ARM64
		{ "PMULL fold8", f_crc64_pmull, pi_crc64_have_pmull, 1 },
#endif
		{ "slice-by-8", f_crc64_slice8, always, 1 },
#ifdef PI_X86
		{ "isal crc64_jones_refl_by8", f_c64_jones8, have_pclmul, 0 },
		{ "isal crc64_ecma_refl_by8", f_c64_ecma8, have_pclmul, 0 },
		{ "isal crc64_jones_refl_by16_10", f_c64_jones16, isal_has_by16, 0 },
#endif
#ifdef PI_ARM64
		{ "isal crc64_jones_refl_pmull", f_c64_jonespmull, pi_crc64_have_pmull, 0 },
#endif
		{ "isal crc64_jones_refl_base", f_c64_jonesbase, always, 0 },
		{ "IP checksum (public)", f_ip_public, always, 0 },
#ifdef PI_X86
		{ "IP checksum AVX-512", f_ip_avx512, pi_ipsum_have_avx512, 0 },
		{ "IP checksum AVX2", f_ip_avx2, pi_ipsum_have_avx2, 0 },
#endif
		{ "IP checksum portable", f_ip_portable, always, 0 },
	};
	enum { N = sizeof(rows) / sizeof(rows[0]) };
	/* A hot block in the middle of the (already faulted-in) buffer. */
	const uint8_t *hot = stream + 12345 * 64;
	char head[32];

	printf("CRC64 dispatch on this CPU: %s\n", pi_crc64_dispatch_name());
	printf("IP sum dispatch on this CPU: %s\n\n", pi_ipsum_dispatch_name());
	snprintf(head, sizeof(head), "stream %u MiB", stream_mib);
	printf("%-30s %12s %14s\n", "guard", "hot 4 KiB", head);
	for (size_t i = 0; i < N; i++) {
		const char *name = rows[i].name;
		char label[64];

		if (rows[i].crc64 && rows[i].fn != f_crc64_public) {
			snprintf(label, sizeof(label), "CRC64 %s", name);
			name = label;
		}
		if (!rows[i].usable()) {
			printf("%-30s not supported by this CPU\n", name);
			continue;
		}
		if (rows[i].crc64) {
			check_crc64(rows[i].name, rows[i].fn, hot, HOT_LEN);
			check_crc64(rows[i].name, rows[i].fn, stream, stream_len);
		}
		if (!strncmp(rows[i].name, "IP checksum ", strlen("IP checksum "))) {
			check_ip(rows[i].name, rows[i].fn, hot, HOT_LEN);
			check_ip(rows[i].name, rows[i].fn, stream, stream_len);
		}
		printf("%-30s %9.2f GB/s", name, measure(rows[i].fn, hot, HOT_LEN, 0.2));
		fflush(stdout);
		printf(" %9.2f GB/s\n", measure(rows[i].fn, stream, stream_len, 0.5));
	}
}

static void ratio_table(const uint8_t *stream)
{
	const uint8_t *hot = stream + 12345 * 64;

	printf("\nours / ISA-L (and dispatched / portable), timed turn about"
	       " (hot 4 KiB, then stream %u MiB):\n", stream_mib);
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		const struct pair *r = &pairs[i];
		double a, b, sa, sb;

		if (!r->usable()) {
			printf("ratio %s / %s: not supported by this CPU\n", r->a, r->b);
			continue;
		}
		measure_pair(r->fa, r->fb, hot, HOT_LEN, 0.6, &a, &b, 0);
		measure_pair(r->fa, r->fb, stream, stream_len, 1.5, &sa, &sb, 0);
		printf("ratio %s / %s: %.2f\n", r->a, r->b, a / b);
		printf("  (%.2f vs %.2f GB/s; stream %u MiB: %.2f vs %.2f GB/s, ratio %.2f)\n",
		       a, b, stream_mib, sa, sb, sa / sb);
	}
}


/*
 * ---- the sizes PI uses, against ISA-L's CRC-64/NVME ("pi_bench sizes") ----
 *
 * One 512-byte interval is the common case (SCSI); 4 KiB the other.  Each
 * row times ours against ISA-L's peer turn about (measure_pair()) on a hot
 * buffer, in PI_BENCH_ROUNDS rounds (default 5) over all rows, and prints
 * the median ratio (ours / ISA-L, speed over speed: above 1 is faster) with
 * the lowest and highest.  Single buffers at 512 bytes and 4 KiB; then
 * 4 KiB at 512-byte intervals, the library's own calls (dio_pi_generate(),
 * dio_pi_verify(): eight guards and tuples) against eight calls of ISA-L.
 *
 * ISA-L has CRC-64/NVME from 2.31 on (crc64_rocksoft_refl(), with the
 * same conventions as dio_pi_crc64_nvme(): the seed and the result are
 * finished CRCs, all ones in and out inside); Debian 12's 2.30 lacks it.
 * The rows take it from the ISA-L pi_bench runs with if that has it, else
 * from the library PI_BENCH_ISAL names (make bench-isal: trixie's 2.31,
 * loaded beside the host's own with dlopen()), else they say so.  The
 * rows against 2.30's crc64_jones_refl kernels (the same folding with
 * another polynomial) stay for comparison with earlier figures.  The
 * loaded functions must give the test vectors of the NVM Command Set
 * specification and the library's results, or pi_bench exits with 1.
 */
typedef uint64_t (*isal64_fn)(uint64_t crc, const unsigned char *buf, uint64_t len);
typedef uint16_t (*isal16_fn)(uint16_t crc, const unsigned char *buf, uint64_t len);

static struct {
	const char *where;		/* "linked" or the path */
	isal64_fn rs;			/* crc64_rocksoft_refl, dispatched */
	isal64_fn rs8, rs16;		/* _by8, _by16_10 (x86-64) */
	isal64_fn rspmull;		/* _pmull (AArch64) */
	isal16_fn crc16;		/* crc16_t10dif of the same library */
	char version[32];
} rk;

static uint64_t f_rs(const void *b, size_t n) { return rk.rs(0, b, n); }
#ifdef PI_X86
static uint64_t f_rs8(const void *b, size_t n) { return rk.rs8(0, b, n); }
static uint64_t f_rs16(const void *b, size_t n) { return rk.rs16(0, b, n); }
#endif
#ifdef PI_ARM64
static uint64_t f_rspmull(const void *b, size_t n) { return rk.rspmull(0, b, n); }
#endif
static uint64_t f_rk_crc16(const void *b, size_t n) { return rk.crc16(0, b, n); }
static uint64_t f_crc16_public(const void *b, size_t n) { return dio_pi_crc16_t10dif(0, b, n); }

/* Eight (n / 512) calls of one function, 512 bytes each: what ISA-L offers. */
#define SIZES_IV	512
#define EACH512(name, call)						\
	static uint64_t name(const void *b, size_t n)			\
	{								\
		const uint8_t *p = b;					\
		uint64_t s = 0;						\
									\
		for (size_t i = 0; i < n; i += SIZES_IV)		\
			s ^= call(0, p + i, SIZES_IV);			\
		return s;						\
	}
EACH512(f_rs_each, rk.rs)
EACH512(f_rk_crc16_each, rk.crc16)
/* One several-interval call, 512-byte intervals: what the library makes. */
#define MULTI512(name, fn)						\
	static uint64_t name(const void *b, size_t n)			\
	{								\
		uint64_t out[4096 / SIZES_IV], s = 0;			\
									\
		fn(b, SIZES_IV, n / SIZES_IV, out);			\
		for (size_t i = 0; i < n / SIZES_IV; i++)		\
			s ^= out[i];					\
		return s;						\
	}
MULTI512(f_multi, pi_crc64_multi)

static uint64_t f_multi16(const void *b, size_t n)
{
	uint16_t out[4096 / SIZES_IV];
	uint64_t s = 0;

	pi_crc16_multi(b, SIZES_IV, n / SIZES_IV, out);
	for (size_t i = 0; i < n / SIZES_IV; i++)
		s ^= out[i];
	return s;
}
#ifdef PI_X86
MULTI512(f_multi_v512, pi_crc64_multi_vpclmul512)
MULTI512(f_multi_v256, pi_crc64_multi_vpclmul256)
MULTI512(f_multi_pclavx, pi_crc64_multi_pclmul_avx)
MULTI512(f_multi_pclmul, pi_crc64_multi_pclmul)
#endif
#ifdef PI_ARM64
MULTI512(f_multi_pmull, pi_crc64_multi_pmull)
#endif
#ifdef PI_X86
EACH512(f_rs8_each, rk.rs8)
EACH512(f_rs16_each, rk.rs16)
EACH512(f_jones8_each, crc64_jones_refl_by8)
EACH512(f_jones16_each, crc64_jones_refl_by16_10)
#endif
#ifdef PI_ARM64
EACH512(f_rspmull_each, rk.rspmull)
#endif

/* The library's calls over 4 KiB at 512-byte intervals, type 1. */
static struct dio_pi_profile sz_p16, sz_p64;
static uint8_t sz_pi[4096 / SIZES_IV * 16];

static uint64_t sz_generate(const struct dio_pi_profile *p, const void *b, size_t n)
{
	dio_pi_generate(p, b, n, sz_pi,
			&(struct dio_pi_params){ .seed = 1000, .app_tag = 0x1234 });
	return sz_pi[0];
}

static uint64_t sz_verify(const struct dio_pi_profile *p, const void *b, size_t n)
{
	if (dio_pi_verify(p, b, n, sz_pi,
			  &(struct dio_pi_params){ .seed = 1000, .app_tag = 0x1234,
						   .app_mask = 0xffff,
						   .chk_flags = DIO_PI_CHK_ALL }, NULL)) {
		fprintf(stderr, "pi_bench: dio_pi_verify failed\n");
		exit(1);
	}
	return 0;
}

static uint64_t f_gen64(const void *b, size_t n) { return sz_generate(&sz_p64, b, n); }
static uint64_t f_ver64(const void *b, size_t n) { return sz_verify(&sz_p64, b, n); }
static uint64_t f_gen16(const void *b, size_t n) { return sz_generate(&sz_p16, b, n); }
static uint64_t f_ver16(const void *b, size_t n) { return sz_verify(&sz_p16, b, n); }

static int have_rk(void) { return rk.rs != NULL; }
#ifdef PI_X86
static int have_rk8(void) { return rk.rs8 && have_pclmul(); }
static int have_rk8_avx(void) { return rk.rs8 && pi_crc64_have_pclmul_avx(); }
static int have_rk8_v256(void) { return rk.rs8 && pi_crc64_have_vpclmul256(); }
static int have_rk16(void) { return rk.rs16 && isal_has_by16(); }
static int have_jones16(void) { return isal_has_by16(); }
static int have_rk8_dirty(void) { return have_rk8() && isal_has_by16(); }
static int have_rk8_avx_dirty(void) { return have_rk8_avx() && isal_has_by16(); }
#endif
#ifdef PI_ARM64
static int have_rkpmull(void) { return rk.rspmull && pi_crc64_have_pmull(); }
#endif

/* Look for ISA-L's CRC-64/NVME: linked, or PI_BENCH_ISAL's; check it. */
static void rk_load(void)
{
	static const char vec[] = "123456789";
	const char *path = getenv("PI_BENCH_ISAL");
	void *h = RTLD_DEFAULT;
	uint8_t *b = malloc(4096);
	isal64_fn *fns[] = { &rk.rs, &rk.rs8, &rk.rs16, &rk.rspmull };

	rk.where = "linked";
	if (!dlsym(RTLD_DEFAULT, "crc64_rocksoft_refl") && path && *path) {
		/* Its own symbols first: the host's ISA-L is loaded too. */
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
		if (!h) {
			fprintf(stderr, "pi_bench: PI_BENCH_ISAL: %s\n", dlerror());
			exit(1);
		}
		rk.where = path;
	}
	rk.rs = (isal64_fn)dlsym(h, "crc64_rocksoft_refl");
	if (!rk.rs)
		return;
	rk.rs8 = (isal64_fn)dlsym(h, "crc64_rocksoft_refl_by8");
	rk.rs16 = (isal64_fn)dlsym(h, "crc64_rocksoft_refl_by16_10");
	rk.rspmull = (isal64_fn)dlsym(h, "crc64_rocksoft_refl_pmull");
	rk.crc16 = (isal16_fn)dlsym(h, "crc16_t10dif");
	snprintf(rk.version, sizeof(rk.version), "unknown version");
	{
		/* isa-l.h's ISAL_VERSION is not exported; the soname's file is. */
		Dl_info di;

		if (dladdr((void *)rk.rs, &di) && di.dli_fname) {
			char real[4096];
			const char *v;

			if (realpath(di.dli_fname, real) && (v = strstr(real, ".so.")))
				snprintf(rk.version, sizeof(rk.version), "%s", v + 4);
		}
	}
	if (!b)
		exit(1);
	for (size_t f = 0; f < sizeof(fns) / sizeof(fns[0]); f++) {
		isal64_fn fn = *fns[f];

		if (!fn)
			continue;
		/* The NVM Command Set's examples, and the library's results. */
		memset(b, 0, 4096);
		if (fn(0, (const unsigned char *)vec, 9) != 0xae8b14860a799888ULL ||
		    fn(0, b, 4096) != 0x6482d367eb22b64eULL)
			goto bad;
		for (size_t i = 0; i < 4096; i++)
			b[i] = i * 0x9e3779b1u >> 13;
		for (size_t len = 0; len <= 4096; len += len < 64 ? 1 : 61)
			if (fn(0, b, len) != pi_crc64_slice8(0, b, len) ||
			    fn(0x1234, b, len) != pi_crc64_slice8(0x1234, b, len))
				goto bad;
	}
	if (rk.crc16 && rk.crc16(0, (const unsigned char *)vec, 9) != 0xd0db)
		goto bad;
	free(b);
	return;
bad:
	fprintf(stderr, "pi_bench: ISA-L's crc64_rocksoft_refl (%s) differs from CRC-64/NVME\n",
		rk.where);
	exit(1);
}

struct size_row {
	const char *a, *b;
	sum_fn fa, fb;
	size_t len;
	int (*usable)(void);
	int dirty;	/* timed after an ISA-L AVX-512 kernel, upper halves dirty */
};

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static void sizes_table(const uint8_t *stream)
{
	static const struct size_row rows[] = {
		{ "crc64 public", "isal crc64_rocksoft_refl", f_crc64_public, f_rs, 512, have_rk, 0 },
		{ "crc64 public", "isal crc64_rocksoft_refl", f_crc64_public, f_rs, 4096, have_rk, 0 },
#ifdef PI_X86
		{ "crc64 vpclmul512", "isal crc64_rocksoft_refl_by16_10", f_crc64_v512, f_rs16,
		  512, have_rk16, 0 },
		{ "crc64 vpclmul512", "isal crc64_rocksoft_refl_by16_10", f_crc64_v512, f_rs16,
		  4096, have_rk16, 0 },
		{ "crc64 vpclmul256", "isal crc64_rocksoft_refl_by8", f_crc64_v256, f_rs8,
		  512, have_rk8_v256, 0 },
		{ "crc64 vpclmul256", "isal crc64_rocksoft_refl_by8", f_crc64_v256, f_rs8,
		  4096, have_rk8_v256, 0 },
		{ "crc64 avx pclmul fold8", "isal crc64_rocksoft_refl_by8", f_crc64_pclavx, f_rs8,
		  512, have_rk8_avx, 0 },
		{ "crc64 avx pclmul fold8", "isal crc64_rocksoft_refl_by8", f_crc64_pclavx, f_rs8,
		  4096, have_rk8_avx, 0 },
		{ "crc64 pclmul fold8", "isal crc64_rocksoft_refl_by8", f_crc64_pclmul, f_rs8,
		  512, have_rk8, 0 },
		{ "crc64 pclmul fold8", "isal crc64_rocksoft_refl_by8", f_crc64_pclmul, f_rs8,
		  4096, have_rk8, 0 },
		{ "crc64 avx pclmul fold8", "isal crc64_rocksoft_refl_by8", f_crc64_pclavx, f_rs8,
		  512, have_rk8_avx_dirty, 1 },
		{ "crc64 avx pclmul fold8", "isal crc64_rocksoft_refl_by8", f_crc64_pclavx, f_rs8,
		  4096, have_rk8_avx_dirty, 1 },
		{ "crc64 pclmul fold8", "isal crc64_rocksoft_refl_by8", f_crc64_pclmul, f_rs8,
		  512, have_rk8_dirty, 1 },
		{ "crc64 pclmul fold8", "isal crc64_rocksoft_refl_by8", f_crc64_pclmul, f_rs8,
		  4096, have_rk8_dirty, 1 },
		{ "crc64 vpclmul512", "isal 2.30 crc64_jones_refl_by16_10", f_crc64_v512,
		  f_c64_jones16, 512, have_jones16, 0 },
		{ "crc64 vpclmul512", "isal 2.30 crc64_jones_refl_by16_10", f_crc64_v512,
		  f_c64_jones16, 4096, have_jones16, 0 },
		{ "crc64 pclmul fold8", "isal 2.30 crc64_jones_refl_by8", f_crc64_pclmul,
		  f_c64_jones8, 512, have_pclmul, 0 },
		{ "crc64 pclmul fold8", "isal 2.30 crc64_jones_refl_by8", f_crc64_pclmul,
		  f_c64_jones8, 4096, have_pclmul, 0 },
#endif
#ifdef PI_ARM64
		{ "crc64 pmull fold8", "isal crc64_rocksoft_refl_pmull", f_crc64_pmull, f_rspmull,
		  512, have_rkpmull, 0 },
		{ "crc64 pmull fold8", "isal crc64_rocksoft_refl_pmull", f_crc64_pmull, f_rspmull,
		  4096, have_rkpmull, 0 },
#endif
		{ "crc16 public", "isal crc16_t10dif", f_crc16_public, f_rk_crc16, 512, have_rk, 0 },
		{ "crc16 public", "isal crc16_t10dif", f_crc16_public, f_rk_crc16, 4096, have_rk,
		  0 },
		/* 4 KiB at 512-byte intervals: eight guards. */
		{ "dio_pi_generate CRC64", "8 x isal crc64_rocksoft_refl", f_gen64, f_rs_each,
		  0, have_rk, 0 },
		{ "dio_pi_verify CRC64", "8 x isal crc64_rocksoft_refl", f_ver64, f_rs_each,
		  0, have_rk, 0 },
		{ "crc64 multi (dispatched)", "8 x isal crc64_rocksoft_refl", f_multi, f_rs_each,
		  0, have_rk, 0 },
#ifdef PI_X86
		{ "crc64 multi vpclmul512", "8 x isal crc64_rocksoft_refl_by16_10", f_multi_v512,
		  f_rs16_each, 0, have_rk16, 0 },
		{ "crc64 multi vpclmul256", "8 x isal crc64_rocksoft_refl_by8", f_multi_v256,
		  f_rs8_each, 0, have_rk8_v256, 0 },
		{ "crc64 multi avx pclmul", "8 x isal crc64_rocksoft_refl_by8", f_multi_pclavx,
		  f_rs8_each, 0, have_rk8_avx, 0 },
		{ "crc64 multi pclmul", "8 x isal crc64_rocksoft_refl_by8", f_multi_pclmul,
		  f_rs8_each, 0, have_rk8, 0 },
		{ "crc64 multi vpclmul512", "8 x isal 2.30 crc64_jones_refl_by16_10", f_multi_v512,
		  f_jones16_each, 0, have_jones16, 0 },
		{ "crc64 multi pclmul", "8 x isal 2.30 crc64_jones_refl_by8", f_multi_pclmul,
		  f_jones8_each, 0, have_pclmul, 0 },
#endif
#ifdef PI_ARM64
		{ "crc64 multi pmull", "8 x isal crc64_rocksoft_refl_pmull", f_multi_pmull,
		  f_rspmull_each, 0, have_rkpmull, 0 },
#endif
		{ "crc16 multi (dispatched)", "8 x isal crc16_t10dif", f_multi16, f_rk_crc16_each,
		  0, have_rk, 0 },
		{ "dio_pi_generate CRC16", "8 x isal crc16_t10dif", f_gen16, f_rk_crc16_each,
		  0, have_rk, 0 },
		{ "dio_pi_verify CRC16", "8 x isal crc16_t10dif", f_ver16, f_rk_crc16_each,
		  0, have_rk, 0 },
	};
	enum { N = sizeof(rows) / sizeof(rows[0]), MAXR = 99 };
	const char *env = getenv("PI_BENCH_ROUNDS");
	int rounds = env ? atoi(env) : 5;
	static double ratio[N][MAXR], ra[N][MAXR], rb[N][MAXR];
	const uint8_t *hot = stream + 12345 * 64;

	if (rounds < 1 || rounds > MAXR) {
		fprintf(stderr, "pi_bench: PI_BENCH_ROUNDS: 1 to %d\n", MAXR);
		exit(2);
	}
	rk_load();
	/* Ours on the buffers they are timed on: every path, plain and several-interval. */
	for (const struct pi_crc64_path *cp = pi_crc64_paths; cp->name; cp++) {
		uint64_t out[4096 / SIZES_IV];

		if (cp->supported && !cp->supported())
			continue;
		cp->multi(hot, SIZES_IV, 4096 / SIZES_IV, out);
		for (size_t i = 0; i < 4096 / SIZES_IV; i++)
			if (out[i] != pi_crc64_slice8(0, hot + i * SIZES_IV, SIZES_IV) ||
			    cp->crc(0, hot + i * SIZES_IV, SIZES_IV) != out[i] ||
			    cp->crc(0, hot, 4096) != pi_crc64_slice8(0, hot, 4096)) {
				fprintf(stderr, "pi_bench: CRC64 %s: wrong at 512 bytes or 4 KiB\n",
					cp->name);
				exit(1);
			}
	}
	{
		uint16_t out[4096 / SIZES_IV];

		pi_crc16_multi(hot, SIZES_IV, 4096 / SIZES_IV, out);
		for (size_t i = 0; i < 4096 / SIZES_IV; i++)
			if (out[i] != pi_crc16_slice8(0, hot + i * SIZES_IV, SIZES_IV)) {
				fprintf(stderr, "pi_bench: CRC16 several-interval: wrong\n");
				exit(1);
			}
	}
	dio_pi_profile_init(&sz_p16, DIO_GUARD_CRC16, SIZES_IV, 1);
	dio_pi_profile_init(&sz_p64, DIO_GUARD_CRC64, SIZES_IV, 1);
	printf("\nthe sizes PI uses, ours / ISA-L, hot buffers, turn about, median of %d"
	       " rounds [lowest, highest]\n", rounds);
	if (rk.rs)
		printf("ISA-L with crc64_rocksoft_refl: %s (%s)\n", rk.where, rk.version);
	else
		printf("ISA-L with crc64_rocksoft_refl: none (the linked one is older than 2.31;"
		       " PI_BENCH_ISAL=path/libisal.so.2, or make bench-isal)\n");
	printf("CRC64 dispatch: %s; 4 KiB at 512-byte intervals: 8 guards a call\n",
	       pi_crc64_dispatch_name());
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < N; i++) {
			size_t len = rows[i].len ? rows[i].len : 4096;

			if (!rows[i].usable())
				continue;
			/* The library's calls first compute the tuples verify checks. */
			f_gen16(hot, 4096);
			if (rows[i].fa == f_ver64)
				f_gen64(hot, 4096);
			measure_pair(rows[i].fa, rows[i].fb, hot, len, 0.15, &ra[i][r], &rb[i][r],
				     rows[i].dirty);
			ratio[i][r] = ra[i][r] / rb[i][r];
		}
	for (size_t i = 0; i < N; i++) {
		double sorted[MAXR];
		char where[48];
		int mid;

		if (rows[i].len)
			snprintf(where, sizeof(where), "%zu bytes%s", rows[i].len,
				 rows[i].dirty ? ", dirty upper" : "");
		else
			snprintf(where, sizeof(where), "4 KiB at 512");
		if (!rows[i].usable()) {
			printf("ratio %s / %s, %s: not available here\n", rows[i].a, rows[i].b, where);
			continue;
		}
		memcpy(sorted, ratio[i], rounds * sizeof(double));
		qsort(sorted, rounds, sizeof(double), cmp_double);
		for (mid = 0; ratio[i][mid] != sorted[rounds / 2]; mid++)
			;
		printf("ratio %s / %s, %s: %.3f [%.3f, %.3f] (%.2f vs %.2f GB/s)\n", rows[i].a,
		       rows[i].b, where, sorted[rounds / 2], sorted[0], sorted[rounds - 1],
		       ra[i][mid], rb[i][mid]);
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

/* ---- dio_pi_generate_copy() against memcpy() ---- */

static uint8_t *copy_dst;
static crc64_copy_t copy_path;

static uint64_t f_memcpy(const void *b, size_t n)
{
	memcpy(copy_dst, b, n);
	return copy_dst[n - 1];
}

static uint64_t f_generate_copy(const void *b, size_t n)
{
	return dio_pi_generate_copy(&cur, copy_dst, b, n, cur_pi,
				    &(struct dio_pi_params){ .seed = 1000, .app_tag = 0x1234 });
}

/* memcpy, then dio_pi_generate() over the copy: two passes. */
static uint64_t f_copy_then_generate(const void *b, size_t n)
{
	memcpy(copy_dst, b, n);
	return dio_pi_generate(&cur, copy_dst, n, cur_pi,
			       &(struct dio_pi_params){ .seed = 1000, .app_tag = 0x1234 });
}

static uint16_t (*copy16_path)(uint16_t crc, void *dst, const void *src, size_t len);

/* One CRC16 path's copying function, interval by interval. */
static uint64_t f_crc16_copy_path(const void *b, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i += COPY_IV)
		s ^= copy16_path(0, copy_dst + i, (const uint8_t *)b + i, COPY_IV);
	return s;
}

static uint32_t (*ip_copy_path)(void *dst, const void *src, size_t len);
static size_t ip_copy_iv;

/* One IP sum path's copying function, interval by interval. */
static uint64_t f_ip_copy_path(const void *b, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i += ip_copy_iv)
		s ^= ip_copy_path(copy_dst + i, (const uint8_t *)b + i, ip_copy_iv);
	return s;
}

/* One CRC64 path's copying function, interval by interval. */
static uint64_t f_crc64_copy_path(const void *b, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i += COPY_IV)
		s ^= copy_path(0, copy_dst + i, (const uint8_t *)b + i, COPY_IV);
	return s;
}

/* One several-interval copying path (CRC16 or CRC64) over the buffer. */
static void (*multi16_path)(void *dst, const void *src, size_t interval, size_t n,
			    uint16_t *out);
static void (*multi64_path)(void *dst, const void *src, size_t interval, size_t n,
			    uint64_t *out);
static size_t multi_iv;

/* As dio_pi_generate_copy() calls them: 16 intervals a call. */
static uint64_t f_multi_path(const void *b, size_t n)
{
	uint64_t s = 0, o64[16];
	uint16_t o16[16];
	size_t step = 16 * multi_iv;

	for (size_t i = 0; i < n; i += step) {
		size_t k = (n - i < step ? n - i : step) / multi_iv;

		if (multi16_path) {
			multi16_path(copy_dst + i, (const uint8_t *)b + i, multi_iv, k, o16);
			s ^= o16[0];
		} else {
			multi64_path(copy_dst + i, (const uint8_t *)b + i, multi_iv, k, o64);
			s ^= o64[0];
		}
	}
	return s;
}

/* Every interval's CRC as slice-by-8's, and the bytes copied. */
static void check_multi(const char *name, const uint8_t *data, size_t len)
{
	size_t n = len / multi_iv;
	uint64_t *o64 = malloc(n * sizeof(*o64));
	uint16_t *o16 = malloc(n * sizeof(*o16));
	int bad = !o64 || !o16;

	memset(copy_dst, 0, len);
	if (!bad && multi16_path)
		multi16_path(copy_dst, data, multi_iv, n, o16);
	else if (!bad)
		multi64_path(copy_dst, data, multi_iv, n, o64);
	for (size_t m = 0; !bad && m < n; m++)
		bad = multi16_path ? o16[m] != pi_crc16_slice8(0, data + m * multi_iv, multi_iv) :
			o64[m] != pi_crc64_slice8(0, data + m * multi_iv, multi_iv);
	if (bad || memcmp(copy_dst, data, len)) {
		fprintf(stderr, "pi_bench: %s several-interval copy at %zu: wrong\n", name,
			multi_iv);
		exit(1);
	}
	free(o64);
	free(o16);
}

static void multi_table(const uint8_t *data)
{
	double mc, gc;

	printf("\nCRC16 several-interval copying paths, 512- and 4096-byte intervals of 1 MiB"
	       " (vs memcpy, turn about):\n");
	for (const struct pi_crc16_path *p = pi_crc16_paths; p->name; p++) {
		if (p->supported && !p->supported()) {
			printf("%-28s not supported by this CPU\n", p->name);
			continue;
		}
		multi16_path = p->copy_multi;
		multi64_path = NULL;
		for (multi_iv = 512; multi_iv <= 4096; multi_iv *= 8) {
			check_multi(p->name, data, GENVER_LEN);
			measure_pair(f_memcpy, f_multi_path, data, GENVER_LEN, 0.4, &mc, &gc, 0);
			printf("%-23s %4zu bytes %7.2f GB/s (memcpy %.2f GB/s, ratio %.2f)\n",
			       p->name, multi_iv, gc, mc, gc / mc);
		}
	}
	printf("\nCRC64 several-interval copying paths, 512- and 4096-byte intervals of 1 MiB"
	       " (vs memcpy, turn about):\n");
	for (const struct pi_crc64_path *p = pi_crc64_paths; p->name; p++) {
		if (p->supported && !p->supported()) {
			printf("%-28s not supported by this CPU\n", p->name);
			continue;
		}
		multi16_path = NULL;
		multi64_path = p->copy_multi;
		for (multi_iv = 512; multi_iv <= 4096; multi_iv *= 8) {
			check_multi(p->name, data, GENVER_LEN);
			measure_pair(f_memcpy, f_multi_path, data, GENVER_LEN, 0.4, &mc, &gc, 0);
			printf("%-23s %4zu bytes %7.2f GB/s (memcpy %.2f GB/s, ratio %.2f)\n",
			       p->name, multi_iv, gc, mc, gc / mc);
		}
	}
}

static void copy_table(const uint8_t *data)
{
	static const struct { int gt; const char *name; } g[] = {
		{ DIO_GUARD_CRC16, "CRC16" }, { DIO_GUARD_CRC64, "CRC64" },
		{ DIO_GUARD_IP, "IP" },
	};
	static const unsigned int iv[] = { 512, 4096 };
	uint8_t *check_pi = malloc(GENVER_LEN / 512 * 16);
	double mc, gc, cg;

	copy_dst = aligned_alloc(4096, GENVER_LEN);
	cur_pi = malloc(GENVER_LEN / 512 * 16);
	if (!copy_dst || !cur_pi || !check_pi)
		exit(1);
	printf("\n%-28s %12s %14s %14s\n", "1 MiB copy, type 1", "memcpy",
	       "generate_copy", "memcpy+generate");
	for (size_t i = 0; i < 3; i++)
		for (size_t j = 0; j < 2; j++) {
			dio_pi_profile_init(&cur, g[i].gt, iv[j], 1);
			/* Same bytes and tuples as memcpy + dio_pi_generate(). */
			memset(copy_dst, 0, GENVER_LEN);
			f_generate_copy(data, GENVER_LEN);
			memcpy(check_pi, cur_pi, dio_pi_len(&cur, GENVER_LEN));
			f_copy_then_generate(data, GENVER_LEN);
			if (memcmp(copy_dst, data, GENVER_LEN) ||
			    memcmp(check_pi, cur_pi, dio_pi_len(&cur, GENVER_LEN))) {
				fprintf(stderr, "pi_bench: dio_pi_generate_copy differs\n");
				exit(1);
			}
			measure_pair(f_memcpy, f_generate_copy, data, GENVER_LEN, 0.5, &mc, &gc, 0);
			cg = measure(f_copy_then_generate, data, GENVER_LEN, 0.25);
			printf("%-5s interval %-13u %7.2f GB/s %9.2f GB/s %9.2f GB/s\n",
			       g[i].name, iv[j], mc, gc, cg);
			printf("ratio generate_copy %s %u / memcpy: %.2f\n", g[i].name, iv[j],
			       gc / mc);
		}

	printf("\nCRC16 copying paths, %u-byte pieces of 1 MiB (vs memcpy, turn about):\n",
	       COPY_IV);
	for (const struct pi_crc16_path *p = pi_crc16_paths; p->name; p++) {
		if (p->supported && !p->supported()) {
			printf("%-28s not supported by this CPU\n", p->name);
			continue;
		}
		copy16_path = p->copy;
		memset(copy_dst, 0, GENVER_LEN);
		if (copy16_path(0, copy_dst, data, GENVER_LEN) != pi_crc16_slice8(0, data, GENVER_LEN) ||
		    memcmp(copy_dst, data, GENVER_LEN)) {
			fprintf(stderr, "pi_bench: CRC16 copy %s: wrong\n", p->name);
			exit(1);
		}
		measure_pair(f_memcpy, f_crc16_copy_path, data, GENVER_LEN, 0.4, &mc, &gc, 0);
		printf("%-28s %7.2f GB/s (memcpy %.2f GB/s, ratio %.2f)\n", p->name, gc, mc,
		       gc / mc);
	}
	printf("\nCRC64 copying paths, %u-byte pieces of 1 MiB (vs memcpy, turn about):\n",
	       COPY_IV);
	for (const struct pi_crc64_path *p = pi_crc64_paths; p->name; p++) {
		if (p->supported && !p->supported()) {
			printf("%-28s not supported by this CPU\n", p->name);
			continue;
		}
		copy_path = p->copy;
		memset(copy_dst, 0, GENVER_LEN);
		if (copy_path(0, copy_dst, data, GENVER_LEN) != pi_crc64_slice8(0, data, GENVER_LEN) ||
		    memcmp(copy_dst, data, GENVER_LEN)) {
			fprintf(stderr, "pi_bench: CRC64 copy %s: wrong\n", p->name);
			exit(1);
		}
		measure_pair(f_memcpy, f_crc64_copy_path, data, GENVER_LEN, 0.4, &mc, &gc, 0);
		printf("%-28s %7.2f GB/s (memcpy %.2f GB/s, ratio %.2f)\n", p->name, gc, mc,
		       gc / mc);
	}
	multi_table(data);
	printf("\nIP sum copying paths, 512- and 4096-byte pieces of 1 MiB"
	       " (vs memcpy, turn about):\n");
	for (const struct pi_ipsum_path *p = pi_ipsum_paths; p->name; p++) {
		if (p->supported && !p->supported()) {
			printf("%-28s not supported by this CPU\n", p->name);
			continue;
		}
		ip_copy_path = p->copy;
		memset(copy_dst, 0, GENVER_LEN);
		if (ip_copy_path(copy_dst, data, GENVER_LEN) != pi_ipsum_portable(data, GENVER_LEN) ||
		    memcmp(copy_dst, data, GENVER_LEN)) {
			fprintf(stderr, "pi_bench: IP sum copy %s: wrong\n", p->name);
			exit(1);
		}
		for (ip_copy_iv = 512; ip_copy_iv <= 4096; ip_copy_iv *= 8) {
			measure_pair(f_memcpy, f_ip_copy_path, data, GENVER_LEN, 0.4, &mc, &gc, 0);
			printf("%-17s %4zu bytes %7.2f GB/s (memcpy %.2f GB/s, ratio %.2f)\n", p->name,
			       ip_copy_iv, gc, mc, gc / mc);
		}
	}
	free(check_pi);
	free(cur_pi);
	free(copy_dst);
}

int main(int argc, char **argv)
{
	const char *mib = getenv("PI_BENCH_STREAM_MIB");
	uint8_t *buf;
	double start = now();
	/*
	 * "pi_bench copy": the copy-and-generate section alone; "pi_bench
	 * sizes": the one against ISA-L at 512 bytes and 4 KiB alone.
	 */
	int copy_only = argc > 1 && !strcmp(argv[1], "copy");
	int sizes_only = argc > 1 && !strcmp(argv[1], "sizes");

	if (argc > 2 || (argc > 1 && !copy_only && !sizes_only)) {
		fprintf(stderr, "usage: pi_bench [copy|sizes]\n");
		return 2;
	}
	if (mib) {
		stream_mib = atoi(mib);
		if (stream_mib < 1 || stream_mib > STREAM_LEN >> 20) {
			fprintf(stderr, "pi_bench: PI_BENCH_STREAM_MIB: 1 to %lu\n", STREAM_LEN >> 20);
			return 2;
		}
		stream_len = (size_t)stream_mib << 20;
	}
	buf = aligned_alloc(4096, stream_len);
	if (!buf)
		return 1;
	for (size_t i = 0; i < stream_len; i += 8)	/* fault in, not zero pages */
		memcpy(buf + i, &(uint64_t){ i * 0x9e3779b97f4a7c15ULL }, 8);
	printf("pi_bench: one thread, best of %d trials, GB/s = 1e9 bytes/s\n\n", TRIALS);
	if (sizes_only) {
		sizes_table(buf);
	} else {
		if (!copy_only) {
			guard_table(buf);
			ratio_table(buf);
			sizes_table(buf);
			genver_table(buf);
		}
		copy_table(buf);
	}
	printf("\ntotal %.1f s\n", now() - start);
	free(buf);
	return 0;
}
