// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit tests for libdioctl's PI helpers: checksum vectors, fast paths
 * against portable and naive references, generation and verification for
 * every profile, iovec splits, exact failure reports, escapes, check flags,
 * argument errors, the names of tags and sources, and what
 * dio_pi_explain_error() refuses on the host.
 *
 * Random data comes from a fixed-seed generator; DIO_TEST_SEED overrides it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "../../libdioctl/src/pi_internal.h"

/* ---- helpers ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static void fill_random(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len--)
		*p++ = rnd();
}

static int setup_rng(void **state)
{
	const char *s = getenv("DIO_TEST_SEED");

	rng_state = s ? strtoull(s, NULL, 0) : 0x9e3779b97f4a7c15ULL;
	if (!rng_state)
		rng_state = 1;
	return 0;
}

static void fill_pattern(uint8_t *b, size_t len, int pat)
{
	for (size_t i = 0; i < len; i++)
		b[i] = pat == 0 ? 0x00 : pat == 1 ? 0xff :
		       pat == 2 ? (uint8_t)i : (uint8_t)(0xff - i);
}

/* Bit-at-a-time references, independent of the library's tables. */
static uint16_t ref_crc16(const uint8_t *p, size_t len)
{
	uint16_t crc = 0;

	while (len--) {
		crc ^= (uint16_t)(*p++ << 8);
		for (int i = 0; i < 8; i++)
			crc = (crc & 0x8000) ? (crc << 1) ^ 0x8bb7 : crc << 1;
	}
	return crc;
}

static uint64_t ref_crc64(const uint8_t *p, size_t len)
{
	uint64_t crc = ~0ULL;

	while (len--) {
		crc ^= *p++;
		for (int i = 0; i < 8; i++)
			crc = (crc & 1) ? (crc >> 1) ^ 0x9a6c9329ac4bc9b5ULL : crc >> 1;
	}
	return ~crc;
}

/* RFC 1071 over big-endian words, the textbook way. */
static uint16_t ref_ip_be(const uint8_t *p, size_t len)
{
	uint64_t sum = 0;	/* no overflow up to 2^48 words */

	for (size_t i = 0; i < len; i += 2)
		sum += (uint32_t)p[i] << 8 | (i + 1 < len ? p[i + 1] : 0);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * What Linux on x86 puts in the guard bytes: ip_compute_csum() sums
 * little-endian words and the __sum16 is stored raw (little-endian).
 */
static void ref_ip_kernel_x86_bytes(const uint8_t *p, size_t len, uint8_t out[2])
{
	uint64_t sum = 0;	/* no overflow up to 2^48 words */
	uint16_t csum;

	for (size_t i = 0; i < len; i += 2)
		sum += p[i] | (uint32_t)(i + 1 < len ? p[i + 1] : 0) << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	csum = (uint16_t)~sum;
	out[0] = csum & 0xff;
	out[1] = csum >> 8;
}

static uint64_t ref_guard(int gt, const uint8_t *p, size_t len)
{
	switch (gt) {
	case DIO_GUARD_CRC16:
		return ref_crc16(p, len);
	case DIO_GUARD_CRC64:
		return ref_crc64(p, len);
	default:
		return ref_ip_be(p, len);
	}
}

/*
 * The guard of one interval whose tuple sits @off bytes into its metadata
 * @md: the reference guard over the data and those @off bytes as one
 * buffer (NVMe's rule, Linux's since PI offsets), computed apart from the
 * library's chaining.
 */
static uint64_t ref_guard_md(int gt, const uint8_t *data, size_t iv,
			     const uint8_t *md, size_t off)
{
	uint8_t *cat = malloc(iv + off + 1);
	uint64_t g;

	assert_non_null(cat);
	memcpy(cat, data, iv);
	memcpy(cat + iv, md, off);
	g = ref_guard(gt, cat, iv + off);
	free(cat);
	return g;
}

static uint64_t get_be(const uint8_t *b, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | b[i];
	return v;
}

static void put_be(uint8_t *b, int n, uint64_t v)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		b[i] = v;
}

/* Field offsets and sizes in a tuple. */
struct layout {
	int guard_off, guard_len, app_off, ref_off, ref_len;
};

static struct layout layout_of(const struct dio_pi_profile *p)
{
	if (p->tuple_size == 16)
		return (struct layout){ 0, 8, 8, 10, 6 };
	return (struct layout){ 0, 2, 2, 4, 4 };
}

static const int guards[] = { DIO_GUARD_IP, DIO_GUARD_CRC16, DIO_GUARD_CRC64 };
static const unsigned int intervals[] = { 512, 4096 };
static const int types[] = { 1, 2, 3 };

#define FOR_EACH_PROFILE(p)						\
	for (size_t gi_ = 0; gi_ < 3; gi_++)				\
	for (size_t ii_ = 0; ii_ < 2; ii_++)				\
	for (size_t ti_ = 0; ti_ < 3; ti_++)				\
	for (int once_ = (assert_int_equal(dio_pi_profile_init(&(p),	\
			guards[gi_], intervals[ii_], types[ti_]), 0), 1); \
	     once_; once_ = 0)

/* ---- checksum vectors ---- */

static const char check_str[] = "123456789";

static void test_crc16_vectors(void **state)
{
	static const uint16_t want[4] = { 0x0000, 0x8b5d, 0x8f6d, 0x0430 };
	static uint8_t b[4096];

	assert_int_equal(dio_pi_crc16_t10dif(0, check_str, 9), 0xd0db);
	assert_int_equal(pi_crc16_slice8(0, check_str, 9), 0xd0db);
	assert_int_equal(pi_crc16_bytewise(0, check_str, 9), 0xd0db);
	assert_int_equal(ref_crc16((const uint8_t *)check_str, 9), 0xd0db);
	for (int pat = 0; pat < 4; pat++) {
		fill_pattern(b, sizeof(b), pat);
		assert_int_equal(dio_pi_crc16_t10dif(0, b, sizeof(b)), want[pat]);
		assert_int_equal(pi_crc16_slice8(0, b, sizeof(b)), want[pat]);
		assert_int_equal(pi_crc16_bytewise(0, b, sizeof(b)), want[pat]);
	}
}

static void test_crc64_vectors(void **state)
{
	static const uint64_t want[4] = {
		0x6482d367eb22b64eULL, 0xc0ddba7302eca3acULL,
		0x3e729f5f6750449cULL, 0x9a2df64b8e9e517eULL,
	};
	static uint8_t b[4096];

	assert_int_equal(dio_pi_crc64_nvme(0, check_str, 9), 0xae8b14860a799888ULL);
	assert_int_equal(pi_crc64_slice8(0, check_str, 9), 0xae8b14860a799888ULL);
	assert_int_equal(ref_crc64((const uint8_t *)check_str, 9), 0xae8b14860a799888ULL);
	for (int pat = 0; pat < 4; pat++) {
		fill_pattern(b, sizeof(b), pat);
		assert_int_equal(dio_pi_crc64_nvme(0, b, sizeof(b)), want[pat]);
		assert_int_equal(pi_crc64_slice8(0, b, sizeof(b)), want[pat]);
		for (const struct pi_crc64_path *cp = pi_crc64_paths; cp->name; cp++)
			if (!cp->supported || cp->supported())
				assert_int_equal(cp->crc(0, b, sizeof(b)), want[pat]);
	}
}

/* x^n mod P for P = x^64 + 0xAD93D23594C93659 (normal form). */
static uint64_t xpow_mod(unsigned int n)
{
	uint64_t r = 1;

	while (n--)
		r = (r & (1ULL << 63)) ? (r << 1) ^ 0xad93d23594c93659ULL : r << 1;
	return r;
}

static uint64_t rev64(uint64_t v)
{
	uint64_t r = 0;

	for (int i = 0; i < 64; i++, v >>= 1)
		r = r << 1 | (v & 1);
	return r;
}

static void test_crc64_fold_constants(void **state)
{
	const uint64_t *k = pi_crc64_fold_consts();

	for (unsigned int d = 128; d <= 2048; d += 128) {
		if (d > 1024 && d < 2048)
			continue;
		assert_int_equal(k[d / 128 * 2], rev64(xpow_mod(d + 63)));
		assert_int_equal(k[d / 128 * 2 + 1], rev64(xpow_mod(d - 1)));
	}
	/* The library computes them at load time: these are the values. */
	assert_int_equal(k[2], 0xeadc41fd2ba3d420ULL);
	assert_int_equal(k[3], 0x21e9761e252621acULL);
	assert_int_equal(k[16], 0xa1ca681e733f9c40ULL);
	assert_int_equal(k[17], 0x5f852fb61e8d92dcULL);
	assert_int_equal(k[32], 0x37ccd3e14069cabcULL);
	assert_int_equal(k[33], 0xa043808c0f782663ULL);
	/* rev64(mu'), floor(x^128 / P) = x^64 + mu'. */
	assert_int_equal(pi_crc64_barrett_mu(), 0x13f67d194d77cfbbULL);
}

static void test_ip_vectors(void **state)
{
	/* RFC 1071 section 3: the words sum to 0xddf2. */
	static const uint8_t rfc[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	static uint8_t b[4096];

	assert_int_equal(dio_pi_ip_checksum(rfc, sizeof(rfc)), 0xffff & ~0xddf2);
	memset(b, 0, sizeof(b));
	assert_int_equal(dio_pi_ip_checksum(b, sizeof(b)), 0xffff);
	assert_int_equal(dio_pi_ip_checksum(b, 0), 0xffff);
	memset(b, 0xff, sizeof(b));
	assert_int_equal(dio_pi_ip_checksum(b, sizeof(b)), 0x0000);
	/* Odd length: the last byte is the high half of a big-endian word. */
	b[0] = 0x12;
	assert_int_equal(dio_pi_ip_checksum(b, 1), 0xffff & ~0x1200);
}

/* ---- fast paths against portable ones ---- */

#define BIG	(1 << 20)

static void test_crc16_fast_vs_portable(void **state)
{
	uint8_t *b = malloc(BIG + 64);

	assert_non_null(b);
	fill_random(b, BIG + 64);
	for (size_t len = 0; len <= 300; len++) {
		size_t off = rnd() % 64;
		uint16_t want = ref_crc16(b + off, len);

		assert_int_equal(dio_pi_crc16_t10dif(0, b + off, len), want);
		assert_int_equal(pi_crc16_slice8(0, b + off, len), want);
		assert_int_equal(pi_crc16_bytewise(0, b + off, len), want);
	}
	for (int i = 0; i < 40; i++) {
		size_t off = rnd() % 64, len = rnd() % BIG, cut = len ? rnd() % len : 0;
		uint16_t want = pi_crc16_slice8(0, b + off, len);

		assert_int_equal(dio_pi_crc16_t10dif(0, b + off, len), want);
		/* Incremental equals one-shot. */
		assert_int_equal(dio_pi_crc16_t10dif(dio_pi_crc16_t10dif(0, b + off, cut),
						     b + off + cut, len - cut), want);
		assert_int_equal(pi_crc16_slice8(pi_crc16_slice8(0, b + off, cut),
						 b + off + cut, len - cut), want);
	}
	free(b);
}

static int path_ok(const struct pi_crc64_path *cp)
{
	if (cp->supported && !cp->supported()) {
		fprintf(stderr, "# CRC64 %s: not supported by this CPU, not tested\n", cp->name);
		return 0;
	}
	return 1;
}

static void test_crc64_fast_vs_portable(void **state)
{
	uint8_t *b = malloc(BIG + 64);

	assert_non_null(b);
	fill_random(b, BIG + 64);
	/* The dispatch picks the best path this CPU has. */
#if defined(PI_X86)
	assert_string_equal(pi_crc64_dispatch_name(),
			    pi_crc64_have_vpclmul512() ? "AVX-512 VPCLMULQDQ" :
			    pi_crc64_have_vpclmul256() ? "VPCLMULQDQ AVX2" :
			    pi_crc64_have_pclmul_avx() ? "AVX PCLMULQDQ" :
			    pi_crc64_have_pclmul() ? "PCLMULQDQ" : "slice-by-8");
#elif defined(PI_ARM64)
	assert_string_equal(pi_crc64_dispatch_name(),
			    pi_crc64_have_pmull() ? "PMULL" : "slice-by-8");
#else
	assert_string_equal(pi_crc64_dispatch_name(), "slice-by-8");
#endif
	for (const struct pi_crc64_path *cp = pi_crc64_paths; cp->name; cp++) {
		if (!path_ok(cp))
			continue;
		/* Past 2 * 256 + 128 + 64 + 3 * 16 + 15: every loop of every path. */
		for (size_t len = 0; len <= 700; len++) {
			for (size_t off = 0; off < 16; off++) {
				uint64_t want = ref_crc64(b + off, len);
				uint64_t seed = rnd();

				assert_int_equal(cp->crc(0, b + off, len), want);
				/* A non-zero starting CRC exercises the initial XOR. */
				assert_int_equal(cp->crc(seed, b + off, len),
						 pi_crc64_slice8(seed, b + off, len));
			}
		}
		for (int i = 0; i < 40; i++) {
			size_t off = rnd() % 64, len = rnd() % BIG, cut = len ? rnd() % len : 0;
			uint64_t want = pi_crc64_slice8(0, b + off, len);

			assert_int_equal(cp->crc(0, b + off, len), want);
			assert_int_equal(cp->crc(cp->crc(0, b + off, cut), b + off + cut,
						 len - cut), want);
		}
	}
	for (int i = 0; i < 40; i++) {
		size_t off = rnd() % 64, len = rnd() % BIG, cut = len ? rnd() % len : 0;
		uint64_t want = pi_crc64_slice8(0, b + off, len);

		assert_int_equal(dio_pi_crc64_nvme(0, b + off, len), want);
		assert_int_equal(dio_pi_crc64_nvme(dio_pi_crc64_nvme(0, b + off, cut),
						   b + off + cut, len - cut), want);
		assert_int_equal(pi_crc64_slice8(pi_crc64_slice8(0, b + off, cut),
						 b + off + cut, len - cut), want);
	}
	free(b);
}

/*
 * The copying CRCs: the same CRC, the exact bytes copied, nothing
 * written before or after the destination, at odd lengths and any
 * alignment of either buffer.
 */
static void test_copy_paths(void **state)
{
	enum { MAXLEN = 5000 };
	uint8_t *src = malloc(MAXLEN + 64), *dst = malloc(MAXLEN + 128);

	assert_non_null(src);
	assert_non_null(dst);
	fill_random(src, MAXLEN + 64);
	for (const struct pi_crc64_path *cp = pi_crc64_paths; cp->name; cp++) {
		if (!path_ok(cp))
			continue;
		for (size_t len = 0; len <= MAXLEN; len = len < 700 ? len + 1 : len * 5 / 4) {
			size_t so = rnd() % 64, dof = 1 + rnd() % 63;
			uint64_t seed = len & 1 ? rnd() : 0;

			memset(dst, 0x5a, MAXLEN + 128);
			assert_int_equal(cp->copy(seed, dst + dof, src + so, len),
					 pi_crc64_slice8(seed, src + so, len));
			assert_memory_equal(dst + dof, src + so, len);
			assert_int_equal(dst[dof - 1], 0x5a);
			assert_int_equal(dst[dof + len], 0x5a);
		}
	}
	/* The dispatched one is one of them. */
	memset(dst, 0, MAXLEN);
	assert_int_equal(pi_crc64_copy(0, dst + 3, src + 1, 4096), ref_crc64(src + 1, 4096));
	assert_memory_equal(dst + 3, src + 1, 4096);
	/* And CRC16's: each path, then (the NULL name) the dispatched one. */
	for (const struct pi_crc16_path *hp = pi_crc16_paths;; hp++) {
		uint16_t (*fn)(uint16_t, void *, const void *, size_t) =
			hp->name ? hp->copy : pi_crc16_copy;

		if (hp->name && hp->supported && !hp->supported()) {
			fprintf(stderr, "# CRC16 copy %s: not supported by this CPU\n", hp->name);
			continue;
		}
		for (size_t len = 0; len <= MAXLEN; len = len < 700 ? len + 1 : len * 5 / 4) {
			size_t so = rnd() % 64, dof = 1 + rnd() % 63;
			uint16_t seed = len & 1 ? rnd() : 0;

			memset(dst, 0x5a, MAXLEN + 128);
			assert_int_equal(fn(seed, dst + dof, src + so, len),
					 pi_crc16_slice8(seed, src + so, len));
			if (!seed)
				assert_int_equal(fn(0, dst + dof, src + so, len),
						 ref_crc16(src + so, len));
			assert_memory_equal(dst + dof, src + so, len);
			assert_int_equal(dst[dof - 1], 0x5a);
			assert_int_equal(dst[dof + len], 0x5a);
		}
		if (!hp->name)
			break;
	}
	free(src);
	free(dst);
}

/*
 * The several-interval copying CRCs (dio_pi_generate_copy()'s loop): each
 * interval's CRC equal to slice-by-8's, the exact bytes copied, nothing
 * written around the destination or past out[n - 1], for every path
 * whatever the dispatch picks, at the PI intervals, at intervals that are
 * not a multiple of a path's round (its fallback), odd interval counts
 * and any alignment of either buffer (counts past 4 and 8: the four
 * intervals AVX-512 ends together, and the ones left).  The plain ones
 * (pi_crc64_multi(), pi_crc16_multi(), under dio_pi_generate() and
 * dio_pi_verify()) go through the same checks, their copy a memcpy()
 * beside them.
 */
static const size_t multi_intervals[] = { 512, 4096, 128, 256, 384, 640, 100, 1000 };
static const size_t multi_counts[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17 };

typedef void (*multi16_fn)(void *, const void *, size_t, size_t, uint16_t *);
typedef void (*multi64_fn)(void *, const void *, size_t, size_t, uint64_t *);
typedef void (*plain_multi64_fn)(const void *, size_t, size_t, uint64_t *);

typedef void (*plain_multi16_fn)(const void *, size_t, size_t, uint16_t *);

/* A plain several-interval CRC as a copying one, for check_multi(). */
static plain_multi64_fn plain64;
static plain_multi16_fn plain16;

static void plain64_copy(void *dst, const void *src, size_t iv, size_t n, uint64_t *out)
{
	plain64(src, iv, n, out);
	memcpy(dst, src, iv * n);	/* what check_multi() checks besides */
}

static void plain16_copy(void *dst, const void *src, size_t iv, size_t n, uint16_t *out)
{
	plain16(src, iv, n, out);
	memcpy(dst, src, iv * n);
}

static void check_multi(multi16_fn f16, multi64_fn f64, const uint8_t *src0, uint8_t *dst0)
{
	for (size_t ii = 0; ii < sizeof(multi_intervals) / sizeof(multi_intervals[0]); ii++) {
		for (size_t ci = 0; ci < sizeof(multi_counts) / sizeof(multi_counts[0]); ci++) {
			size_t iv = multi_intervals[ii], n = multi_counts[ci], len = iv * n;
			size_t so = rnd() % 64, dof = 1 + rnd() % 63;
			const uint8_t *src = src0 + so;
			uint8_t *dst = dst0 + dof;
			uint64_t o64[18];
			uint16_t o16[18];

			memset(dst0, 0x5a, 17 * 4096 + 128);
			memset(o64, 0xa5, sizeof(o64));
			memset(o16, 0xa5, sizeof(o16));
			if (f16)
				f16(dst, src, iv, n, o16);
			else
				f64(dst, src, iv, n, o64);
			for (size_t m = 0; m < n; m++) {
				const uint8_t *in = src + m * iv;

				if (f16)
					assert_int_equal(o16[m], pi_crc16_slice8(0, in, iv));
				else
					assert_int_equal(o64[m], pi_crc64_slice8(0, in, iv));
			}
			if (f16)
				assert_int_equal(o16[n], 0xa5a5);
			else
				assert_int_equal(o64[n], 0xa5a5a5a5a5a5a5a5ULL);
			assert_memory_equal(dst, src, len);
			assert_int_equal(dst[-1], 0x5a);
			assert_int_equal(dst[len], 0x5a);
		}
	}
	/* And against the bit-at-a-time references, once per path. */
	if (f16) {
		uint16_t o[3];

		f16(dst0, src0 + 5, 512, 3, o);
		for (int m = 0; m < 3; m++)
			assert_int_equal(o[m], ref_crc16(src0 + 5 + m * 512, 512));
	} else {
		uint64_t o[3];

		f64(dst0, src0 + 5, 512, 3, o);
		for (int m = 0; m < 3; m++)
			assert_int_equal(o[m], ref_crc64(src0 + 5 + m * 512, 512));
	}
}

static void test_copy_multi_paths(void **state)
{
	enum { MAXLEN = 17 * 4096 };
	uint8_t *src = malloc(MAXLEN + 64), *dst = malloc(MAXLEN + 128);

	assert_non_null(src);
	assert_non_null(dst);
	fill_random(src, MAXLEN + 64);
	for (const struct pi_crc64_path *cp = pi_crc64_paths; cp->name; cp++) {
		assert_non_null(cp->copy_multi);
		assert_non_null(cp->multi);
		if (path_ok(cp)) {
			check_multi(NULL, cp->copy_multi, src, dst);
			plain64 = cp->multi;
			check_multi(NULL, plain64_copy, src, dst);
		}
	}
	check_multi(NULL, pi_crc64_copy_multi, src, dst);
	plain64 = pi_crc64_multi;
	check_multi(NULL, plain64_copy, src, dst);
	for (const struct pi_crc16_path *hp = pi_crc16_paths; hp->name; hp++) {
		assert_non_null(hp->copy_multi);
		assert_non_null(hp->multi);
		if (hp->supported && !hp->supported()) {
			fprintf(stderr, "# CRC16 multi %s: not supported by this CPU\n", hp->name);
			continue;
		}
		check_multi(hp->copy_multi, NULL, src, dst);
		plain16 = hp->multi;
		check_multi(plain16_copy, NULL, src, dst);
	}
	check_multi(pi_crc16_copy_multi, NULL, src, dst);
	plain16 = pi_crc16_multi;
	check_multi(plain16_copy, NULL, src, dst);
	/* Data that makes every lane's high half non-zero: all ones. */
	memset(src, 0xff, MAXLEN + 64);
	for (const struct pi_crc64_path *cp = pi_crc64_paths; cp->name; cp++) {
		uint64_t o[2];

		if (!path_ok(cp))
			continue;
		cp->copy_multi(dst, src, 4096, 2, o);
		assert_int_equal(o[0], ref_crc64(src, 4096));
		assert_int_equal(o[1], o[0]);
		cp->multi(src, 512, 2, o);
		assert_int_equal(o[0], ref_crc64(src, 512));
		assert_int_equal(o[1], o[0]);
	}
	for (const struct pi_crc16_path *hp = pi_crc16_paths; hp->name; hp++) {
		uint16_t o[2];

		if (hp->supported && !hp->supported())
			continue;
		hp->copy_multi(dst, src, 512, 2, o);
		assert_int_equal(o[0], ref_crc16(src, 512));
		assert_int_equal(o[1], o[0]);
		hp->multi(src, 4096, 2, o);
		assert_int_equal(o[0], ref_crc16(src, 4096));
		assert_int_equal(o[1], o[0]);
	}
	free(src);
	free(dst);
}

/*
 * Each dispatch chose a path of its table that this CPU runs, the CRC16
 * one the first (best) such.  DIO_PI_EXPECT_CRC64 (set by
 * tests/cross.sh, whose emulated arm64 CPU has PMULL) names the path the
 * CRC64 dispatch must have chosen: a machine path silently not taken
 * fails there instead of being skipped.
 */
static void test_dispatch(void **state)
{
	const struct pi_crc16_path *hp = pi_crc16_paths;
	const struct pi_crc64_path *cp;
	const struct pi_ipsum_path *ip;
	const char *want = getenv("DIO_PI_EXPECT_CRC64");

	while (hp->name && hp->supported && !hp->supported())
		hp++;
	assert_non_null(hp->name);
	assert_string_equal(pi_crc16_dispatch_name(), hp->name);
	for (cp = pi_crc64_paths; cp->name; cp++)
		if (!strncmp(cp->name, pi_crc64_dispatch_name(), strlen(pi_crc64_dispatch_name())))
			break;
	assert_non_null(cp->name);
	assert_true(!cp->supported || cp->supported());
	for (ip = pi_ipsum_paths; ip->name; ip++)
		if (!strcmp(ip->name, pi_ipsum_dispatch_name()))
			break;
	assert_non_null(ip->name);
	assert_true(!ip->supported || ip->supported());
	if (want && *want)
		assert_string_equal(pi_crc64_dispatch_name(), want);
#ifdef PI_ARM64
	/* The PMULL path is in the table, and chosen wherever the CPU has it. */
	assert_string_equal(pi_crc64_paths[0].id, "pmull");
#endif
}

static void test_ip_fast_vs_reference(void **state)
{
	uint8_t *b = malloc(BIG + 64);
	/* The vector path beside the portable one, where the CPU has it. */
	uint32_t (*vec)(const void *buf, size_t len) = NULL;

#ifdef PI_X86
	if (pi_ipsum_have_avx2())
		vec = pi_ipsum_avx2;
#endif

	assert_non_null(b);
	fill_random(b, BIG + 64);
	for (size_t len = 0; len <= 300; len++) {
		for (size_t off = 0; off < 8; off++) {
			uint16_t want = ref_ip_be(b + off, len);
			uint32_t port = pi_ipsum_portable(b + off, len);

			assert_int_equal(dio_pi_ip_checksum(b + off, len), want);
			assert_int_equal(pi_ipsum_to_guard(port), want);
			if (vec)
				assert_int_equal(vec(b + off, len), port);
		}
	}
	for (int i = 0; i < 40; i++) {
		size_t off = rnd() % 64, len = rnd() % BIG;
		uint16_t want = ref_ip_be(b + off, len);

		assert_int_equal(dio_pi_ip_checksum(b + off, len), want);
		assert_int_equal(pi_ipsum_to_guard(pi_ipsum_portable(b + off, len)), want);
		if (vec)
			assert_int_equal(pi_ipsum_to_guard(vec(b + off, len)), want);
	}
	/* Words that sum to exactly 0xffff (+0 vs -0 in one's complement). */
	memset(b, 0, 64);
	b[0] = 0xff;
	b[1] = 0xff;
	assert_int_equal(dio_pi_ip_checksum(b, 64), 0x0000);
	b[0] = 0x80;
	b[1] = 0x00;
	b[2] = 0x7f;
	b[3] = 0xff;
	assert_int_equal(dio_pi_ip_checksum(b, 64), 0x0000);
	free(b);
}

/*
 * Every IP sum path, plain and copying, forced whatever the dispatch picks
 * (where the CPU has it), against the reference: lengths past
 * 256 + 3 * 64 + 63 (every loop and the byte-masked tail of the AVX-512
 * path) at every alignment of both buffers, the exact bytes copied and
 * nothing written around them; all-ones data, the largest lane sums.
 */
static void test_ip_paths(void **state)
{
	enum { MAXLEN = 5000, ONES = 1 << 20 };
	uint8_t *src = malloc(ONES + 64), *dst = malloc(ONES + 128);
	const struct pi_ipsum_path *ip;
	int ran = 0;

	assert_non_null(src);
	assert_non_null(dst);
	for (ip = pi_ipsum_paths; ip->name; ip++) {
		if (ip->supported && !ip->supported()) {
			fprintf(stderr, "# IP sum %s: not supported by this CPU, not tested\n",
				ip->name);
			continue;
		}
		ran++;
		fill_random(src, MAXLEN + 64);
		for (size_t len = 0; len <= MAXLEN; len = len < 700 ? len + 1 : len * 5 / 4) {
			size_t so = len < 700 ? len % 64 : rnd() % 64, dof = 1 + rnd() % 63;
			uint16_t want = ref_ip_be(src + so, len);
			uint32_t sum = ip->sum(src + so, len);

			assert_int_equal(pi_ipsum_to_guard(sum), want);
			assert_int_equal(sum, pi_ipsum_portable(src + so, len));
			memset(dst, 0x5a, MAXLEN + 128);
			assert_int_equal(ip->copy(dst + dof, src + so, len), sum);
			assert_memory_equal(dst + dof, src + so, len);
			assert_int_equal(dst[dof - 1], 0x5a);
			assert_int_equal(dst[dof + len], 0x5a);
		}
		/* All ones: every 16-bit word 0xffff, the sum 0xffff. */
		memset(src, 0xff, ONES + 64);
		for (size_t len = 2; len <= ONES; len *= 4) {
			assert_int_equal(ip->sum(src + 2, len), 0xffff);
			assert_int_equal(ip->copy(dst + 6, src + 2, len), 0xffff);
			assert_int_equal(pi_ipsum_to_guard(ip->sum(src, len + 1)),
					 ref_ip_be(src, len + 1));
		}
		/* Words summing to 0xffff are -0, not +0: only zeros give 0. */
		memset(src, 0, 512);
		assert_int_equal(ip->sum(src, 512), 0);
		assert_int_equal(ip->copy(dst, src, 511), 0);
		src[300] = 0x80;
		src[302] = 0x7f;
		src[303] = 0xff;
		assert_int_equal(ip->sum(src, 512), 0xffff);
		assert_int_equal(ip->copy(dst, src, 512), 0xffff);
	}
	/* The portable path always, and a vector one wherever there is AVX2. */
#ifdef PI_X86
	assert_true(ran >= (pi_ipsum_have_avx2() ? 2 : 1));
#else
	assert_true(ran >= 1);
#endif
	/* The dispatched ones are among them. */
	fill_random(src, MAXLEN + 64);
	assert_int_equal(pi_ipsum_copy(dst + 3, src + 1, 4096), pi_ipsum_portable(src + 1, 4096));
	assert_memory_equal(dst + 3, src + 1, 4096);
	assert_int_equal(pi_ipsum(src + 1, 4095), pi_ipsum_portable(src + 1, 4095));
	for (ip = pi_ipsum_paths; ip->name; ip++)
		if (!strcmp(ip->name, pi_ipsum_dispatch_name()))
			break;
	assert_non_null(ip->name);
	free(src);
	free(dst);
}

/* ---- generation and verification ---- */

struct bufs {
	uint8_t *data;
	uint8_t *pi;
	size_t len, pi_len;
};

static void bufs_alloc(struct bufs *b, const struct dio_pi_profile *p, size_t n)
{
	ssize_t pl;

	b->len = n * p->interval;
	pl = dio_pi_len(p, b->len);
	assert_int_equal(pl, (ssize_t)(n * p->tuple_size));
	b->pi_len = pl;
	b->data = malloc(b->len);
	b->pi = malloc(b->pi_len + 1);
	assert_non_null(b->data);
	assert_non_null(b->pi);
	fill_random(b->data, b->len);
}

static void bufs_free(struct bufs *b)
{
	free(b->data);
	free(b->pi);
}

static void test_generate_all_profiles(void **state)
{
	struct dio_pi_profile p;

	FOR_EACH_PROFILE(p) {
		struct layout l = layout_of(&p);
		uint64_t refmask = p.tuple_size == 16 ? 0xffffffffffffULL : 0xffffffffULL;
		/* Seed just below the wrap of the ref tag. */
		uint64_t seed = refmask - 2 + ((rnd() & 0xff) << 48);
		uint16_t app = rnd();
		struct dio_pi_error err;
		struct bufs b;

		bufs_alloc(&b, &p, 6);
		b.pi[b.pi_len] = 0xa5;
		assert_int_equal(dio_pi_generate(&p, b.data, b.len, b.pi,
						 &(struct dio_pi_params){ .seed = seed,
									  .app_tag = app }), 0);
		assert_int_equal(b.pi[b.pi_len], 0xa5);	/* no overrun */
		for (size_t i = 0; i < 6; i++) {
			const uint8_t *t = b.pi + i * p.tuple_size;
			uint64_t ref = p.pi_type == 3 ? 0 : (seed + i) & refmask;

			assert_int_equal(get_be(t + l.guard_off, l.guard_len),
					 ref_guard(p.guard_type, b.data + i * p.interval, p.interval));
			assert_int_equal(get_be(t + l.app_off, 2), app);
			assert_int_equal(get_be(t + l.ref_off, l.ref_len), ref);
		}
		memset(&err, 0xee, sizeof(err));
		assert_int_equal(dio_pi_verify(&p, b.data, b.len, b.pi,
					       &(struct dio_pi_params){ .seed = seed,
									.app_tag = app,
									.app_mask = 0xffff,
									.chk_flags = DIO_PI_CHK_ALL },
					       &err), 0);
		assert_int_equal(err.tag, DIO_PI_TAG_NONE);
		/* Only the low bits of the seed make the ref tag. */
		assert_int_equal(dio_pi_verify(&p, b.data, b.len, b.pi,
					       &(struct dio_pi_params){ .seed = seed & refmask,
									.app_tag = app,
									.app_mask = 0xffff,
									.chk_flags = DIO_PI_CHK_ALL },
					       NULL), 0);
		bufs_free(&b);
	}
}

/*
 * dio_pi_generate_copy() is memcpy() + dio_pi_generate() over the copy:
 * the same bytes, the same PI buffer (other metadata bytes kept), for
 * every profile, odd alignments of both buffers, metadata beyond the PI.
 */
static void test_generate_copy(void **state)
{
	struct dio_pi_profile p;

	FOR_EACH_PROFILE(p) {
		for (int md = 0; md < 2; md++) {
			size_t n = 1 + rnd() % 7, len = n * p.interval;
			size_t so = rnd() % 64, dof = rnd() % 64, pi_len;
			uint8_t *src = malloc(len + 64), *dst = malloc(len + 128);
			uint8_t *want = malloc(len), *pi, *pi_want;
			struct dio_pi_params a = { .seed = rnd(), .app_tag = rnd() };

			if (md) {		/* 8 bytes of opaque metadata before the tuple */
				p.md_size = p.tuple_size + 16;
				p.pi_offset = 8;
			}
			pi_len = dio_pi_len(&p, len);
			pi = malloc(pi_len + 1);
			pi_want = malloc(pi_len);
			assert_non_null(src);
			assert_non_null(dst);
			assert_non_null(want);
			assert_non_null(pi);
			assert_non_null(pi_want);
			fill_random(src, len + 64);
			fill_random(pi, pi_len);
			memcpy(pi_want, pi, pi_len);
			pi[pi_len] = 0xa5;
			memset(dst, 0x5a, len + 128);

			memcpy(want, src + so, len);
			assert_int_equal(dio_pi_generate(&p, want, len, pi_want, &a), 0);
			assert_int_equal(dio_pi_generate_copy(&p, dst + dof, src + so, len, pi, &a), 0);
			assert_memory_equal(dst + dof, src + so, len);
			assert_memory_equal(pi, pi_want, pi_len);
			assert_int_equal(pi[pi_len], 0xa5);
			if (dof)
				assert_int_equal(dst[dof - 1], 0x5a);
			assert_int_equal(dst[dof + len], 0x5a);
			/* And it verifies. */
			assert_int_equal(dio_pi_verify(&p, dst + dof, len, pi,
						       &(struct dio_pi_params){
							.seed = a.seed, .app_tag = a.app_tag,
							.app_mask = 0xffff,
							.chk_flags = DIO_PI_CHK_ALL }, NULL), 0);
			free(src);
			free(dst);
			free(want);
			free(pi);
			free(pi_want);
		}
	}
}

/*
 * dio_pi_generate_copy() against memcpy() + dio_pi_generate() at given
 * interval counts: 1 to past two batches of the CRCs' several-interval
 * loop (16 intervals a call), every guard, PI type and interval size.
 */
static void test_generate_copy_counts(void **state)
{
	static const size_t counts[] = { 1, 2, 3, 5, 7, 15, 16, 17, 33 };
	struct dio_pi_profile p;

	FOR_EACH_PROFILE(p) {
		for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
			size_t n = counts[ci], len = n * p.interval, pi_len;
			size_t so = 1 + rnd() % 63, dof = 1 + rnd() % 63;
			uint8_t *src = malloc(len + 64), *dst = malloc(len + 128);
			uint8_t *pi, *pi_want;
			struct dio_pi_params a = { .seed = rnd(), .app_tag = rnd() };

			pi_len = dio_pi_len(&p, len);
			pi = malloc(pi_len + 1);
			pi_want = malloc(pi_len);
			assert_non_null(src);
			assert_non_null(dst);
			assert_non_null(pi);
			assert_non_null(pi_want);
			fill_random(src, len + 64);
			memset(dst, 0x5a, len + 128);
			pi[pi_len] = 0xa5;
			assert_int_equal(dio_pi_generate(&p, src + so, len, pi_want, &a), 0);
			assert_int_equal(dio_pi_generate_copy(&p, dst + dof, src + so, len, pi, &a), 0);
			assert_memory_equal(dst + dof, src + so, len);
			assert_memory_equal(pi, pi_want, pi_len);
			assert_int_equal(pi[pi_len], 0xa5);
			assert_int_equal(dst[dof - 1], 0x5a);
			assert_int_equal(dst[dof + len], 0x5a);
			/* The guards against the bit-at-a-time references. */
			for (size_t m = 0; m < n; m++) {
				struct layout l = layout_of(&p);

				assert_int_equal(get_be(pi + m * p.tuple_size + l.guard_off, l.guard_len),
						 ref_guard(p.guard_type, src + so + m * p.interval,
							   p.interval));
			}
			free(src);
			free(dst);
			free(pi);
			free(pi_want);
		}
	}
}

static void test_ip_guard_matches_kernel_bytes(void **state)
{
	struct dio_pi_profile p;
	uint8_t want[2];
	struct bufs b;

	assert_int_equal(dio_pi_profile_init(&p, DIO_GUARD_IP, 512, 1), 0);
	bufs_alloc(&b, &p, 16);
	assert_int_equal(dio_pi_generate(&p, b.data, b.len, b.pi, &(struct dio_pi_params){ 0 }), 0);
	for (int i = 0; i < 16; i++) {
		ref_ip_kernel_x86_bytes(b.data + i * 512, 512, want);
		assert_memory_equal(b.pi + i * 8, want, 2);
	}
	bufs_free(&b);
}

/* Random segment lengths (some empty, many odd) summing to len. */
static int random_iov(uint8_t *data, size_t len, struct iovec *iov, int max)
{
	size_t off = 0;
	int n = 0;

	while (off < len && n < max - 1) {
		size_t k = rnd() % 4 == 0 ? 0 : 1 + rnd() % (rnd() % 2 ? 7 : 1500);

		if (k > len - off)
			k = len - off;
		iov[n].iov_base = data + off;
		iov[n++].iov_len = k;
		off += k;
	}
	iov[n].iov_base = data + off;
	iov[n++].iov_len = len - off;
	return n;
}

static void test_iov_equals_contiguous(void **state)
{
	static struct iovec iov[4096];
	struct dio_pi_profile p;

	FOR_EACH_PROFILE(p) {
		struct bufs b;
		uint8_t *pi2;
		uint64_t seed = rnd();

		bufs_alloc(&b, &p, 8);
		pi2 = malloc(b.pi_len);
		assert_non_null(pi2);
		assert_int_equal(dio_pi_generate(&p, b.data, b.len, b.pi,
						 &(struct dio_pi_params){ .seed = seed,
									  .app_tag = 0x1234 }), 0);
		for (int round = 0; round < 20; round++) {
			int n = random_iov(b.data, b.len, iov, 4096);

			memset(pi2, 0, b.pi_len);
			assert_int_equal(dio_pi_generate_iov(&p, iov, n, pi2,
							     &(struct dio_pi_params){ .seed = seed,
										      .app_tag = 0x1234 }), 0);
			assert_memory_equal(pi2, b.pi, b.pi_len);
			assert_int_equal(dio_pi_verify_iov(&p, iov, n, pi2,
							   &(struct dio_pi_params){ .seed = seed,
										    .app_tag = 0x1234,
										    .app_mask = 0xffff,
										    .chk_flags = DIO_PI_CHK_ALL },
							   NULL), 0);
		}
		free(pi2);
		bufs_free(&b);
	}
}

/* Both forms report the same failure. */
static void verify_both(const struct dio_pi_profile *p, const struct bufs *b,
			uint64_t seed, uint16_t app, uint16_t mask, unsigned int chk,
			struct dio_pi_error *err)
{
	static struct iovec iov[4096];
	struct dio_pi_error e2;
	int n = random_iov(b->data, b->len, iov, 4096);

	errno = 0;
	assert_int_equal(dio_pi_verify(p, b->data, b->len, b->pi,
				       &(struct dio_pi_params){ .seed = seed, .app_tag = app,
								.app_mask = mask, .chk_flags = chk },
				       err), -1);
	assert_int_equal(errno, EILSEQ);
	errno = 0;
	assert_int_equal(dio_pi_verify_iov(p, iov, n, b->pi,
					   &(struct dio_pi_params){ .seed = seed, .app_tag = app,
								    .app_mask = mask,
								    .chk_flags = chk },
					   &e2), -1);
	assert_int_equal(errno, EILSEQ);
	assert_memory_equal(err, &e2, sizeof(e2));
}

/*
 * dio_pi_generate() and dio_pi_verify() take whole intervals that lie in
 * one segment several at a time (guards_flat() in pi.c): segments of many
 * intervals, cut anywhere, the same tuples as contiguous data; escaped
 * tuples with wrong guards among them pass, and a wrong guard elsewhere is
 * reported at its interval, batched or not.
 */
static void test_batches_and_escapes(void **state)
{
	static struct iovec iov[256];
	struct dio_pi_profile p;

	FOR_EACH_PROFILE(p) {
		struct layout l = layout_of(&p);
		uint64_t ones = p.tuple_size == 16 ? 0xffffffffffffULL : 0xffffffffULL;
		uint64_t seed = rnd();
		size_t nv = 40, off = 0;
		struct dio_pi_error err;
		struct bufs b;
		uint8_t *pi2;
		int n = 0;

		bufs_alloc(&b, &p, nv);
		pi2 = malloc(b.pi_len);
		assert_non_null(pi2);
		while (off < b.len) {
			size_t k = (rnd() % 20) * p.interval + (rnd() % 2 ? rnd() % p.interval : 0);

			if (k > b.len - off)
				k = b.len - off;
			iov[n].iov_base = b.data + off;
			iov[n++].iov_len = k;
			off += k;
		}
		assert_int_equal(dio_pi_generate(&p, b.data, b.len, b.pi,
						 &(struct dio_pi_params){ .seed = seed }), 0);
		assert_int_equal(dio_pi_generate_iov(&p, iov, n, pi2,
						     &(struct dio_pi_params){ .seed = seed }), 0);
		assert_memory_equal(pi2, b.pi, b.pi_len);
		/* Every third tuple escaped, its guard wrong. */
		for (size_t i = 0; i < nv; i += 3) {
			uint8_t *t = b.pi + i * p.tuple_size;

			put_be(t + l.guard_off, l.guard_len, ~get_be(t + l.guard_off, l.guard_len));
			put_be(t + l.app_off, 2, 0xffff);
			put_be(t + l.ref_off, l.ref_len, ones);
		}
		for (int pass = 0; pass < 2; pass++) {
			const struct dio_pi_params prm = { .seed = seed, .app_mask = 0xffff,
							   .chk_flags = DIO_PI_CHK_ALL };

			if (pass) {
				/* And a wrong guard where no escape is. */
				uint8_t *t = b.pi + 29 * p.tuple_size;

				put_be(t + l.guard_off, l.guard_len,
				       get_be(t + l.guard_off, l.guard_len) ^ 1);
			}
			for (int contig = 0; contig < 2; contig++) {
				int ret = contig ? dio_pi_verify(&p, b.data, b.len, b.pi, &prm, &err) :
						   dio_pi_verify_iov(&p, iov, n, b.pi, &prm, &err);

				assert_int_equal(ret, pass ? -1 : 0);
				if (pass) {
					assert_int_equal(err.tag, DIO_PI_TAG_GUARD);
					assert_int_equal(err.interval, 29);
				}
			}
		}
		free(pi2);
		bufs_free(&b);
	}
}

static void test_corruptions_reported_exactly(void **state)
{
	struct dio_pi_profile p;

	FOR_EACH_PROFILE(p) {
		struct layout l = layout_of(&p);
		uint64_t refmask = p.tuple_size == 16 ? 0xffffffffffffULL : 0xffffffffULL;
		uint64_t seed = rnd(), stored;
		struct dio_pi_error err;
		struct bufs b;
		size_t k = 2 + rnd() % 5, byte = rnd() % p.interval;
		uint8_t *t = NULL;

		bufs_alloc(&b, &p, 8);
		assert_int_equal(dio_pi_generate(&p, b.data, b.len, b.pi,
						 &(struct dio_pi_params){ .seed = seed,
									  .app_tag = 0x5aa5 }), 0);
		t = b.pi + k * p.tuple_size;

		/* A flipped data bit: guard failure with the recomputed guard. */
		b.data[k * p.interval + byte] ^= 1 << (rnd() % 8);
		verify_both(&p, &b, seed, 0x5aa5, 0xffff, DIO_PI_CHK_ALL, &err);
		assert_int_equal(err.tag, DIO_PI_TAG_GUARD);
		assert_int_equal(err.interval, k);
		assert_int_equal(err.ref, seed + k);
		assert_int_equal(err.expected, ref_guard(p.guard_type, b.data + k * p.interval,
							   p.interval));
		assert_int_equal(err.actual, get_be(t + l.guard_off, l.guard_len));
		assert_int_not_equal(err.expected, err.actual);
		/* Two bad tuples: the first one is reported. */
		b.data[(k + 1) * p.interval] ^= 0x80;
		verify_both(&p, &b, seed, 0x5aa5, 0xffff, DIO_PI_CHK_ALL, &err);
		assert_int_equal(err.interval, k);
		b.data[(k + 1) * p.interval] ^= 0x80;
		b.data[k * p.interval + byte] ^= 0xff;	/* another bad guard */
		verify_both(&p, &b, seed, 0x5aa5, 0xffff, DIO_PI_CHK_ALL, &err);
		assert_int_equal(err.tag, DIO_PI_TAG_GUARD);
		assert_int_equal(err.interval, k);
		/* Guard wins over app and ref in the same tuple. */
		put_be(t + l.app_off, 2, 0x0001);
		put_be(t + l.ref_off, l.ref_len, 7);
		verify_both(&p, &b, seed, 0x5aa5, 0xffff, DIO_PI_CHK_ALL, &err);
		assert_int_equal(err.tag, DIO_PI_TAG_GUARD);
		assert_int_equal(dio_pi_generate(&p, b.data, b.len, b.pi,
						 &(struct dio_pi_params){ .seed = seed,
									  .app_tag = 0x5aa5 }), 0);

		/* App tag: expected and actual unmasked; app wins over ref. */
		put_be(t + l.app_off, 2, 0x5aa4);
		put_be(t + l.ref_off, l.ref_len, 7);
		verify_both(&p, &b, seed, 0x5aa5, 0xffff, DIO_PI_CHK_ALL, &err);
		assert_int_equal(err.tag, DIO_PI_TAG_APP);
		assert_int_equal(err.interval, k);
		assert_int_equal(err.expected, 0x5aa5);
		assert_int_equal(err.actual, 0x5aa4);
		put_be(t + l.app_off, 2, 0x5aa5);

		/* Ref tag: types 1 and 2 only. */
		stored = get_be(t + l.ref_off, l.ref_len);
		if (p.pi_type != 3) {
			verify_both(&p, &b, seed, 0x5aa5, 0xffff, DIO_PI_CHK_ALL, &err);
			assert_int_equal(err.tag, DIO_PI_TAG_REF);
			assert_int_equal(err.interval, k);
			assert_int_equal(err.ref, seed + k);
			assert_int_equal(err.expected, ((seed + k) & refmask));
			assert_int_equal(err.actual, 7);
			/* A wrong seed is a ref failure at interval 0. */
			put_be(t + l.ref_off, l.ref_len, (seed + k) & refmask);
			verify_both(&p, &b, seed + 1, 0x5aa5, 0xffff, DIO_PI_CHK_ALL, &err);
			assert_int_equal(err.tag, DIO_PI_TAG_REF);
			assert_int_equal(err.interval, 0);
			assert_int_equal(err.actual, (seed & refmask));
		} else {
			assert_int_equal(stored, 7);
			assert_int_equal(dio_pi_verify(&p, b.data, b.len, b.pi,
						       &(struct dio_pi_params){ .seed = seed,
										.app_tag = 0x5aa5,
										.app_mask = 0xffff,
										.chk_flags = DIO_PI_CHK_ALL },
						       NULL), 0);
		}
		bufs_free(&b);
	}
}

static void test_escapes(void **state)
{
	struct dio_pi_profile p;

	FOR_EACH_PROFILE(p) {
		struct layout l = layout_of(&p);
		uint64_t ones = p.tuple_size == 16 ? 0xffffffffffffULL : 0xffffffffULL;
		uint64_t seed = rnd();
		struct dio_pi_error err;
		struct bufs b;
		uint8_t *t;

		bufs_alloc(&b, &p, 4);
		assert_int_equal(dio_pi_generate(&p, b.data, b.len, b.pi,
						 &(struct dio_pi_params){ .seed = seed }), 0);
		t = b.pi + p.tuple_size;
		/* Tuple 1: bad guard, escape app tag, ref all ones. */
		put_be(t + l.guard_off, l.guard_len, ~get_be(t + l.guard_off, l.guard_len));
		put_be(t + l.app_off, 2, 0xffff);
		put_be(t + l.ref_off, l.ref_len, ones);
		memset(&err, 0x5a, sizeof(err));
		assert_int_equal(dio_pi_verify(&p, b.data, b.len, b.pi,
					       &(struct dio_pi_params){ .seed = seed,
									.app_mask = 0xffff,
									.chk_flags = DIO_PI_CHK_ALL },
					       &err), 0);
		/* Counted as skipped, the rest of the report zeroed. */
		assert_int_equal(err.escaped, 1);
		assert_int_equal(err.tag, DIO_PI_TAG_NONE);
		assert_int_equal(err.interval, 0);
		/* A failure after it counts the escapes before it only. */
		b.data[3 * p.interval] ^= 1;
		verify_both(&p, &b, seed, 0, 0xffff, DIO_PI_CHK_ALL, &err);
		assert_int_equal(err.interval, 3);
		assert_int_equal(err.escaped, 1);
		b.data[3 * p.interval] ^= 1;
		/* Nothing checked, nothing counted. */
		assert_int_equal(dio_pi_verify(&p, b.data, b.len, b.pi,
					       &(struct dio_pi_params){ .seed = seed }, &err), 0);
		assert_int_equal(err.escaped, 0);
		/* Escape app tag with a ref that is not all ones. */
		put_be(t + l.ref_off, l.ref_len, ones - 1);
		if (p.pi_type == 3) {
			/* Type 3 needs both: the guard is checked. */
			verify_both(&p, &b, seed, 0, 0xffff, DIO_PI_CHK_ALL, &err);
			assert_int_equal(err.tag, DIO_PI_TAG_GUARD);
			assert_int_equal(err.interval, 1);
		} else {
			/* Types 1 and 2: the app tag alone skips the tuple. */
			assert_int_equal(dio_pi_verify(&p, b.data, b.len, b.pi,
						       &(struct dio_pi_params){ .seed = seed,
										.app_mask = 0xffff,
										.chk_flags = DIO_PI_CHK_ALL },
						       NULL), 0);
		}
		/* Ref all ones without the app escape is no escape. */
		put_be(t + l.app_off, 2, 0);
		put_be(t + l.ref_off, l.ref_len, ones);
		verify_both(&p, &b, seed, 0, 0xffff, DIO_PI_CHK_ALL, &err);
		assert_int_equal(err.tag, DIO_PI_TAG_GUARD);
		assert_int_equal(err.interval, 1);
		bufs_free(&b);
	}
}

static void test_chk_flags(void **state)
{
	struct dio_pi_profile p;

	FOR_EACH_PROFILE(p) {
		struct layout l = layout_of(&p);
		uint64_t seed = rnd();
		struct dio_pi_error err;
		struct bufs b;
		uint8_t *t;

		bufs_alloc(&b, &p, 3);
		assert_int_equal(dio_pi_generate(&p, b.data, b.len, b.pi,
						 &(struct dio_pi_params){ .seed = seed,
									  .app_tag = 0xab00 }), 0);
		t = b.pi + 2 * p.tuple_size;
		b.data[0] ^= 4;				/* bad guard in tuple 0 */
		put_be(t + l.app_off, 2, 0xab0f);	/* app differs in low bits */
		put_be(t + l.ref_off, l.ref_len, 3);	/* bad ref in tuple 2 */

		assert_int_equal(dio_pi_verify(&p, b.data, b.len, b.pi,
					       &(struct dio_pi_params){ .seed = seed,
									.app_tag = 0xab00,
									.app_mask = 0xffff },
					       NULL), 0);
		verify_both(&p, &b, seed, 0xab00, 0xffff, DIO_PI_CHK_GUARD, &err);
		assert_int_equal(err.tag, DIO_PI_TAG_GUARD);
		assert_int_equal(err.interval, 0);
		/* Without the guard check: app tag in tuple 2, unless masked. */
		verify_both(&p, &b, seed, 0xab00, 0xffff,
			    DIO_PI_CHK_APPTAG | DIO_PI_CHK_REFTAG, &err);
		assert_int_equal(err.tag, DIO_PI_TAG_APP);
		assert_int_equal(err.interval, 2);
		assert_int_equal(err.expected, 0xab00);
		assert_int_equal(err.actual, 0xab0f);
		assert_int_equal(dio_pi_verify(&p, b.data, b.len, b.pi,
					       &(struct dio_pi_params){ .seed = seed,
									.app_tag = 0xab00,
									.app_mask = 0xfff0,
									.chk_flags = DIO_PI_CHK_APPTAG },
					       NULL), 0);
		if (p.pi_type == 3) {
			assert_int_equal(dio_pi_verify(&p, b.data, b.len, b.pi,
						       &(struct dio_pi_params){ .seed = seed,
										.app_tag = 0xab00,
										.app_mask = 0xfff0,
										.chk_flags = DIO_PI_CHK_APPTAG | DIO_PI_CHK_REFTAG },
						       NULL), 0);
		} else {
			verify_both(&p, &b, seed, 0xab00, 0xfff0,
				    DIO_PI_CHK_APPTAG | DIO_PI_CHK_REFTAG, &err);
			assert_int_equal(err.tag, DIO_PI_TAG_REF);
			assert_int_equal(err.interval, 2);
		}
		/* Flags outside DIO_PI_CHK_ALL. */
		errno = 0;
		assert_int_equal(dio_pi_verify(&p, b.data, b.len, b.pi,
					       &(struct dio_pi_params){ .seed = seed,
									.chk_flags = DIO_PI_VERIFY_USER },
					       NULL), -1);
		assert_int_equal(errno, EINVAL);
		bufs_free(&b);
	}
}

/* ---- metadata larger than the tuple ---- */

/*
 * Metadata of @md bytes per interval with the tuple at @off: what a device
 * with more metadata than PI has (dio_query's pi_md_size, pi_offset).
 */
static void md_profile(struct dio_pi_profile *p, int gt, unsigned int iv,
		       int type, unsigned int md, unsigned int off)
{
	assert_int_equal(dio_pi_profile_init(p, gt, iv, type), 0);
	p->md_size = md;
	p->pi_offset = off;
}

/*
 * Verification of @b fails at interval @k, its guard, whose expected value
 * is the reference guard over its data and the metadata before its tuple.
 */
static void guard_fails_at(const struct dio_pi_profile *p, const struct bufs *b,
			   uint64_t seed, size_t k, struct dio_pi_error *err)
{
	verify_both(p, b, seed, 0x1234, 0xffff, DIO_PI_CHK_ALL, err);
	assert_int_equal(err->tag, DIO_PI_TAG_GUARD);
	assert_int_equal(err->interval, k);
	assert_int_equal(err->expected,
			 ref_guard_md(p->guard_type, b->data + k * p->interval, p->interval,
				      b->pi + k * p->md_size, p->pi_offset));
}

/*
 * Generation and verification with 16 bytes of metadata per interval (32
 * with CRC64's 16-byte tuples), the tuple first, last and in the middle:
 * tuples where they belong, app and ref tags equal to the packed ones,
 * guards over the data and the metadata bytes before the tuple (the
 * packed guard when the tuple is first), every other byte of the buffer as
 * the caller left it, a changed byte before the tuple failing the guard
 * and one after it not, failures at the right interval.
 */
static void test_metadata_beyond_pi(void **state)
{
	static struct iovec iov[4096];
	enum { N = 8 };

	for (size_t gi = 0; gi < 3; gi++)
	for (size_t ii = 0; ii < 2; ii++)
	for (size_t ti = 0; ti < 3; ti++) {
		struct dio_pi_profile packed, p;
		unsigned int ts, md, offs[3];

		assert_int_equal(dio_pi_profile_init(&packed, guards[gi], intervals[ii],
						     types[ti]), 0);
		ts = packed.tuple_size;
		md = ts == 16 ? 32 : 16;
		offs[0] = 0;
		offs[1] = md - ts;
		offs[2] = ts == 16 ? 6 : 4;	/* not 8-byte aligned */
		for (size_t oi = 0; oi < 3; oi++) {
			struct layout l = layout_of(&packed);
			uint64_t refmask = ts == 16 ? 0xffffffffffffULL : 0xffffffffULL;
			uint64_t seed = rnd();
			size_t k = 1 + rnd() % (N - 2);
			struct dio_pi_error err;
			uint8_t *data, *tuples, *pi, *opaque, *t;
			size_t len = N * packed.interval, pilen = N * md;
			int n;

			md_profile(&p, guards[gi], intervals[ii], types[ti], md, offs[oi]);
			assert_int_equal(dio_pi_len(&p, len), (ssize_t)pilen);
			data = malloc(len);
			tuples = malloc(N * ts);
			pi = malloc(pilen + 1);
			opaque = malloc(pilen);
			assert_non_null(data);
			assert_non_null(tuples);
			assert_non_null(pi);
			assert_non_null(opaque);
			fill_random(data, len);
			fill_random(pi, pilen);
			pi[pilen] = 0xa5;
			memcpy(opaque, pi, pilen);

			/*
			 * Each tuple in place, the same as packed but for a guard
			 * that covers the bytes before it; nothing else written.
			 */
			assert_int_equal(dio_pi_generate(&packed, data, len, tuples,
							 &(struct dio_pi_params){ .seed = seed,
										  .app_tag = 0x1234 }), 0);
			assert_int_equal(dio_pi_generate(&p, data, len, pi,
							 &(struct dio_pi_params){ .seed = seed,
										  .app_tag = 0x1234 }), 0);
			assert_int_equal(pi[pilen], 0xa5);
			for (size_t i = 0; i < N; i++) {
				uint8_t *m = pi + i * md, *o = opaque + i * md;

				assert_memory_equal(m + p.pi_offset + l.guard_len,
						    tuples + i * ts + l.guard_len,
						    ts - l.guard_len);
				assert_int_equal(get_be(m + p.pi_offset + l.guard_off, l.guard_len),
						 ref_guard_md(p.guard_type, data + i * p.interval,
							      p.interval, o, p.pi_offset));
				if (!p.pi_offset)
					assert_memory_equal(m, tuples + i * ts, ts);
				if (p.pi_offset)
					assert_memory_equal(m, o, p.pi_offset);
				if (p.pi_offset + ts < md)
					assert_memory_equal(m + p.pi_offset + ts,
							    o + p.pi_offset + ts,
							    md - p.pi_offset - ts);
			}
			/* The iovec form writes the same, and only that. */
			memcpy(t = malloc(pilen), opaque, pilen);
			assert_non_null(t);
			n = random_iov(data, len, iov, 4096);
			assert_int_equal(dio_pi_generate_iov(&p, iov, n, t,
							     &(struct dio_pi_params){ .seed = seed,
										      .app_tag = 0x1234 }), 0);
			assert_memory_equal(t, pi, pilen);
			free(t);

			/*
			 * Verification reads the tuples and the bytes before
			 * them: a byte after a tuple may change, one before it
			 * fails that interval's guard.
			 */
			assert_int_equal(dio_pi_verify(&p, data, len, pi,
						       &(struct dio_pi_params){ .seed = seed,
										.app_tag = 0x1234,
										.app_mask = 0xffff,
										.chk_flags = DIO_PI_CHK_ALL },
						       NULL), 0);
			for (size_t i = 0; i < N; i++) {
				uint8_t *m = pi + i * md;

				for (unsigned int b = p.pi_offset + ts; b < md; b++)
					m[b] = ~m[b];
			}
			assert_int_equal(dio_pi_verify_iov(&p, iov, n, pi,
							   &(struct dio_pi_params){ .seed = seed,
										    .app_tag = 0x1234,
										    .app_mask = 0xffff,
										    .chk_flags = DIO_PI_CHK_ALL },
							   NULL), 0);
			if (p.pi_offset) {
				uint8_t *m = pi + k * md + rnd() % p.pi_offset;
				struct bufs b = { data, pi, len, pilen };

				*m ^= 0x01;
				guard_fails_at(&p, &b, seed, k, &err);
				*m ^= 0x01;
			}

			/* Failures name interval k. */
			t = pi + k * md + p.pi_offset;
			data[k * p.interval + rnd() % p.interval] ^= 0x10;
			{
				struct bufs b = { data, pi, len, pilen };

				guard_fails_at(&p, &b, seed, k, &err);
				assert_int_equal(err.actual, get_be(t + l.guard_off, l.guard_len));
				assert_int_equal(dio_pi_generate(&p, data, len, pi,
								 &(struct dio_pi_params){ .seed = seed,
											  .app_tag = 0x1234 }), 0);
				put_be(t + l.app_off, 2, 0x1235);
				verify_both(&p, &b, seed, 0x1234, 0xffff, DIO_PI_CHK_ALL, &err);
				assert_int_equal(err.tag, DIO_PI_TAG_APP);
				assert_int_equal(err.interval, k);
				assert_int_equal(err.actual, 0x1235);
				put_be(t + l.app_off, 2, 0x1234);
				put_be(t + l.ref_off, l.ref_len, (seed + k + 1) & refmask);
				if (p.pi_type != 3) {
					verify_both(&p, &b, seed, 0x1234, 0xffff,
						    DIO_PI_CHK_ALL, &err);
					assert_int_equal(err.tag, DIO_PI_TAG_REF);
					assert_int_equal(err.interval, k);
					assert_int_equal(err.expected, ((seed + k) & refmask));
					assert_int_equal(err.actual, ((seed + k + 1) & refmask));
				} else {
					assert_int_equal(dio_pi_verify(&p, data, len, pi,
								       &(struct dio_pi_params){ .seed = seed,
												.app_tag = 0x1234,
												.app_mask = 0xffff,
												.chk_flags = DIO_PI_CHK_ALL },
								       NULL), 0);
				}
				/* An escaped tuple is skipped where it lies. */
				put_be(t + l.guard_off, l.guard_len, 0);
				put_be(t + l.app_off, 2, 0xffff);
				put_be(t + l.ref_off, l.ref_len, refmask);
				assert_int_equal(dio_pi_verify(&p, data, len, pi,
							       &(struct dio_pi_params){ .seed = seed,
											.app_tag = 0x1234,
											.app_mask = 0xffff,
											.chk_flags = DIO_PI_CHK_ALL },
							       NULL), 0);
			}
			free(data);
			free(tuples);
			free(pi);
			free(opaque);
		}
	}
}

/* ---- argument errors ---- */

#define ASSERT_EINVAL(expr)				\
	do {						\
		errno = 0;				\
		assert_int_equal((expr), -1);		\
		assert_int_equal(errno, EINVAL);	\
	} while (0)

static void test_profile_init(void **state)
{
	struct dio_pi_profile p, keep;

	static const struct dio_pi_profile zero;

	assert_int_equal(dio_pi_profile_init(&p, DIO_GUARD_CRC64, 4096, 1), 0);
	assert_int_equal(p.tuple_size, 16);
	assert_int_equal(p.ref_tag_size, 6);
	assert_int_equal(p.interval, 4096);
	/* Metadata that is the tuple alone. */
	assert_int_equal(p.md_size, 16);
	assert_int_equal(p.pi_offset, 0);
	assert_memory_equal(p.reserved, zero.reserved, sizeof(p.reserved));
	assert_int_equal(dio_pi_profile_init(&p, DIO_GUARD_IP, 512, 3), 0);
	assert_int_equal(p.tuple_size, 8);
	assert_int_equal(p.ref_tag_size, 4);
	assert_int_equal(p.md_size, 8);
	assert_int_equal(p.pi_offset, 0);
	keep = p;
	ASSERT_EINVAL(dio_pi_profile_init(&p, DIO_GUARD_NONE, 512, 1));
	ASSERT_EINVAL(dio_pi_profile_init(&p, 3, 512, 1));
	ASSERT_EINVAL(dio_pi_profile_init(&p, DIO_GUARD_CRC16 + 256, 512, 1));
	ASSERT_EINVAL(dio_pi_profile_init(&p, DIO_GUARD_CRC16, 256, 1));
	ASSERT_EINVAL(dio_pi_profile_init(&p, DIO_GUARD_CRC16, 1000, 1));
	ASSERT_EINVAL(dio_pi_profile_init(&p, DIO_GUARD_CRC16, 131072, 1));
	ASSERT_EINVAL(dio_pi_profile_init(&p, DIO_GUARD_CRC16, 512, 0));
	ASSERT_EINVAL(dio_pi_profile_init(&p, DIO_GUARD_CRC16, 512, 4));
	ASSERT_EINVAL(dio_pi_profile_init(&p, DIO_GUARD_CRC16, 512, 257));
	ASSERT_EINVAL(dio_pi_profile_init(NULL, DIO_GUARD_CRC16, 512, 1));
	assert_memory_equal(&p, &keep, sizeof(p));
	assert_int_equal(dio_pi_profile_init(&p, DIO_GUARD_CRC16, 65536, 2), 0);
}

static void test_profile_from_query(void **state)
{
	struct dio_query q = {
		.size = sizeof(q), .pi_interval = 4096, .pi_tuple_size = 16,
		.pi_guard_type = DIO_GUARD_CRC64, .pi_type = 1,
		.pi_app_tag_size = 2, .pi_ref_tag_size = 6,
	}, bad;
	struct dio_pi_profile p;

	assert_int_equal(dio_pi_profile_from_query(&q, &p), 0);
	assert_int_equal(p.guard_type, DIO_GUARD_CRC64);
	assert_int_equal(p.interval, 4096);
	assert_int_equal(p.tuple_size, 16);
	assert_int_equal(p.pi_type, 1);
	/* pi_md_size 0: the tuple alone. */
	assert_int_equal(p.md_size, 16);
	assert_int_equal(p.pi_offset, 0);

	bad = q;
	bad.pi_interval = 0;
	bad.pi_type = 0;
	bad.pi_guard_type = DIO_GUARD_NONE;
	errno = 0;
	assert_int_equal(dio_pi_profile_from_query(&bad, &p), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	bad = q;
	bad.pi_guard_type = 3;		/* the kernel's internal CRC64 value */
	errno = 0;
	assert_int_equal(dio_pi_profile_from_query(&bad, &p), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	/* Metadata equal to the tuple, and more than it, PI first or last. */
	bad = q;
	bad.pi_md_size = 16;
	assert_int_equal(dio_pi_profile_from_query(&bad, &p), 0);
	assert_int_equal(p.md_size, 16);
	bad.pi_md_size = 64;
	bad.pi_opaque_size = 48;
	bad.pi_opaque_offset = 16;
	assert_int_equal(dio_pi_profile_from_query(&bad, &p), 0);
	assert_int_equal(p.md_size, 64);
	assert_int_equal(p.pi_offset, 0);
	assert_int_equal(p.tuple_size, 16);
	bad.pi_offset = 48;
	bad.pi_opaque_offset = 0;
	assert_int_equal(dio_pi_profile_from_query(&bad, &p), 0);
	assert_int_equal(p.md_size, 64);
	assert_int_equal(p.pi_offset, 48);
	/* nsid 4 of the test bed: CRC16, 16 bytes, PI first. */
	{
		struct dio_query q4 = {
			.size = sizeof(q4), .pi_interval = 512, .pi_tuple_size = 8,
			.pi_guard_type = DIO_GUARD_CRC16, .pi_type = 1,
			.pi_app_tag_size = 2, .pi_ref_tag_size = 4, .pi_md_size = 16,
			.pi_opaque_size = 8, .pi_opaque_offset = 8,
		};

		assert_int_equal(dio_pi_profile_from_query(&q4, &p), 0);
		assert_int_equal(p.md_size, 16);
		assert_int_equal(p.pi_offset, 0);
		assert_int_equal(p.tuple_size, 8);
		assert_int_equal(dio_pi_len(&p, 4096), 128);
	}
	/* A tuple that does not fit in the metadata at its offset. */
	bad.pi_offset = 49;
	ASSERT_EINVAL(dio_pi_profile_from_query(&bad, &p));
	bad = q;
	bad.pi_offset = 8;		/* metadata is the tuple alone */
	ASSERT_EINVAL(dio_pi_profile_from_query(&bad, &p));
	bad = q;
	bad.pi_md_size = 8;		/* smaller than the tuple */
	ASSERT_EINVAL(dio_pi_profile_from_query(&bad, &p));
	/* Storage tags are not handled. */
	bad = q;
	bad.pi_storage_tag_size = 2;
	errno = 0;
	assert_int_equal(dio_pi_profile_from_query(&bad, &p), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	bad = q;
	bad.pi_tuple_size = 8;
	ASSERT_EINVAL(dio_pi_profile_from_query(&bad, &p));
	bad = q;
	bad.pi_interval = 1000;
	ASSERT_EINVAL(dio_pi_profile_from_query(&bad, &p));
	bad = q;
	bad.size = DIO_QUERY_SIZE_VER0 - 8;
	ASSERT_EINVAL(dio_pi_profile_from_query(&bad, &p));
	ASSERT_EINVAL(dio_pi_profile_from_query(NULL, &p));
	ASSERT_EINVAL(dio_pi_profile_from_query(&q, NULL));
}

/* dio_pi_seed() refuses @q's fields with @err: UINT64_MAX and errno. */
#define ASSERT_SEED_ERR(q, off, err)					\
	do {								\
		errno = 0;						\
		assert_true(dio_pi_seed((q), (off)) == UINT64_MAX);	\
		assert_int_equal(errno, (err));				\
	} while (0)

/*
 * dio_pi_seed(): the interval number from the start of the whole disk,
 * for every profile (interval, guard, type), a partition's start added
 * in bytes; what the tuples then carry; and the arguments it refuses.
 */
static void test_seed(void **state)
{
	/* 2048 sectors (1 MiB), and a start beyond 2^32 intervals of 512. */
	static const uint64_t starts[] = { 0, 1 << 20, (1ULL << 41) + 5 * 4096 };
	uint8_t data[2 * 4096], pi[2 * 16];
	struct dio_pi_profile p;
	struct dio_pi_error e;
	struct dio_query q;
	struct layout l;
	uint64_t seed, want;
	size_t si;

	fill_random(data, sizeof(data));
	FOR_EACH_PROFILE(p) {
		l = layout_of(&p);
		for (si = 0; si < sizeof(starts) / sizeof(starts[0]); si++) {
			q = (struct dio_query){
				.size = sizeof(q), .pi_interval = p.interval,
				.pi_tuple_size = p.tuple_size,
				.pi_guard_type = p.guard_type, .pi_type = p.pi_type,
				.pi_app_tag_size = 2, .pi_ref_tag_size = p.ref_tag_size,
				.part_start_bytes = starts[si],
			};
			want = (starts[si] + 3 * p.interval) / p.interval;
			seed = dio_pi_seed(&q, 3 * p.interval);
			assert_int_equal(seed, want);
			/* Type 3 too: the same number (its tuples carry none). */
			assert_int_equal(dio_pi_seed(&q, 0), starts[si] / p.interval);
			/* What the tuples carry with it: the low 32 (48) bits, type 3 0. */
			assert_int_equal(dio_pi_generate(&p, data, 2 * p.interval, pi,
							 &(struct dio_pi_params){ .seed = seed }), 0);
			assert_int_equal(get_be(pi + p.tuple_size + l.ref_off, l.ref_len),
					 p.pi_type == 3 ? 0 :
					 (seed + 1) & (l.ref_len == 4 ? 0xffffffffULL :
						       0xffffffffffffULL));
			/* A failure's ref is the interval on the disk, every type. */
			data[p.interval] ^= 1;
			errno = 0;
			assert_int_equal(dio_pi_verify(&p, data, 2 * p.interval, pi,
						       &(struct dio_pi_params){ .seed = seed,
									.chk_flags = DIO_PI_CHK_ALL },
						       &e), -1);
			assert_int_equal(errno, EILSEQ);
			data[p.interval] ^= 1;
			assert_int_equal(e.interval, 1);
			assert_int_equal(e.ref, want + 1);
			assert_int_equal(e.tag, DIO_PI_TAG_GUARD);
		}
	}

	/* The interval, not the 512-byte sector: 1 MiB is seed 2048 or 256. */
	q = (struct dio_query){
		.size = DIO_QUERY_SIZE_VER0, .pi_interval = 512, .pi_tuple_size = 8,
		.pi_guard_type = DIO_GUARD_CRC16, .pi_type = 1,
		.part_start_bytes = 2048 * 512,
	};
	assert_int_equal(dio_pi_seed(&q, 0), 2048);
	assert_int_equal(dio_pi_seed(&q, 8 * 512), 2056);
	q.pi_interval = 4096;
	assert_int_equal(dio_pi_seed(&q, 0), 256);
	assert_int_equal(dio_pi_seed(&q, 8 * 4096), 264);
	/* A whole disk (or an older module's raw query): the offset alone. */
	q.part_start_bytes = 0;
	assert_int_equal(dio_pi_seed(&q, 8 * 4096), 8);
	/* The largest seed there is, far below UINT64_MAX. */
	q.pi_interval = 512;
	assert_true(dio_pi_seed(&q, UINT64_MAX - 511) == (1ULL << 55) - 1);

	/* Refused. */
	ASSERT_SEED_ERR(NULL, 0, EINVAL);
	q.size = DIO_QUERY_SIZE_VER0 - 1;
	ASSERT_SEED_ERR(&q, 0, EINVAL);
	q.size = sizeof(q);
	/* Not a multiple of the interval: the offset, or the start with it. */
	ASSERT_SEED_ERR(&q, 100, EINVAL);
	q.pi_interval = 4096;
	q.part_start_bytes = 63 * 512;		/* an old DOS partition */
	ASSERT_SEED_ERR(&q, 0, EINVAL);
	assert_int_equal(dio_pi_seed(&q, 512), 8);	/* 32 KiB into the disk */
	q.pi_interval = 1000;
	q.part_start_bytes = 0;
	ASSERT_SEED_ERR(&q, 0, EINVAL);
	q.pi_interval = 512;
	q.part_start_bytes = UINT64_MAX - 511;
	ASSERT_SEED_ERR(&q, 512, EOVERFLOW);
	q.part_start_bytes = 0;
	/* No PI: no interval, metadata without PI, no type. */
	q.pi_interval = 0;
	ASSERT_SEED_ERR(&q, 0, EOPNOTSUPP);
	q.pi_interval = 512;
	q.pi_tuple_size = 0;
	ASSERT_SEED_ERR(&q, 0, EOPNOTSUPP);
	q.pi_tuple_size = 8;
	q.pi_type = 0;
	ASSERT_SEED_ERR(&q, 0, EOPNOTSUPP);
	q.pi_type = 1;
	assert_int_equal(dio_pi_seed(&q, 512), 1);
}

static void test_bad_arguments(void **state)
{
	struct dio_pi_profile p, bad;
	uint8_t data[1024] = { 0 }, pi[32];
	struct iovec iov[2] = { { data, 512 }, { data + 512, 511 } };

	assert_int_equal(dio_pi_profile_init(&p, DIO_GUARD_CRC16, 512, 1), 0);
	assert_int_equal(dio_pi_len(&p, 0), 0);
	assert_int_equal(dio_pi_len(&p, 1024), 16);
	ASSERT_EINVAL(dio_pi_len(&p, 1000));
	ASSERT_EINVAL(dio_pi_len(NULL, 512));

	ASSERT_EINVAL(dio_pi_generate(&p, data, 1000, pi, &(struct dio_pi_params){ 0 }));
	ASSERT_EINVAL(dio_pi_generate(&p, data, 511, pi, &(struct dio_pi_params){ 0 }));
	ASSERT_EINVAL(dio_pi_generate(&p, NULL, 512, pi, &(struct dio_pi_params){ 0 }));
	ASSERT_EINVAL(dio_pi_generate(&p, data, 512, NULL, &(struct dio_pi_params){ 0 }));
	ASSERT_EINVAL(dio_pi_verify(&p, data, 1000, pi,
				    &(struct dio_pi_params){ .chk_flags = DIO_PI_CHK_ALL }, NULL));
	ASSERT_EINVAL(dio_pi_generate_iov(&p, iov, 2, pi, &(struct dio_pi_params){ 0 }));
	ASSERT_EINVAL(dio_pi_verify_iov(&p, iov, 2, pi,
					&(struct dio_pi_params){ .chk_flags = DIO_PI_CHK_ALL },
					NULL));
	ASSERT_EINVAL(dio_pi_generate_iov(&p, iov, -1, pi, &(struct dio_pi_params){ 0 }));
	ASSERT_EINVAL(dio_pi_generate_iov(&p, NULL, 1, pi, &(struct dio_pi_params){ 0 }));
	iov[1].iov_len = SIZE_MAX - 511;	/* total wraps to 0 */
	ASSERT_EINVAL(dio_pi_generate_iov(&p, iov, 2, pi, &(struct dio_pi_params){ 0 }));

	/* Profiles that dio_pi_profile_init() would never produce. */
	bad = p;
	bad.tuple_size = 16;
	ASSERT_EINVAL(dio_pi_generate(&bad, data, 512, pi, &(struct dio_pi_params){ 0 }));
	bad = p;
	bad.interval = 768;
	ASSERT_EINVAL(dio_pi_verify(&bad, data, 768, pi, &(struct dio_pi_params){ 0 }, NULL));
	bad = p;
	bad.pi_type = 0;
	ASSERT_EINVAL(dio_pi_generate(&bad, data, 512, pi, &(struct dio_pi_params){ 0 }));
	ASSERT_EINVAL(dio_pi_generate(NULL, data, 512, pi, &(struct dio_pi_params){ 0 }));
	/* Metadata smaller than the tuple, a tuple past its end, reserved. */
	bad = p;
	bad.md_size = 0;
	ASSERT_EINVAL(dio_pi_generate(&bad, data, 512, pi, &(struct dio_pi_params){ 0 }));
	ASSERT_EINVAL(dio_pi_len(&bad, 512));
	bad.md_size = 7;
	ASSERT_EINVAL(dio_pi_verify(&bad, data, 512, pi,
				    &(struct dio_pi_params){ .chk_flags = DIO_PI_CHK_ALL }, NULL));
	bad.md_size = 16;
	bad.pi_offset = 9;
	ASSERT_EINVAL(dio_pi_generate(&bad, data, 512, pi, &(struct dio_pi_params){ 0 }));
	bad.pi_offset = 8;
	assert_int_equal(dio_pi_generate(&bad, data, 512, pi, &(struct dio_pi_params){ 0 }), 0);
	bad.reserved[4] = 1;
	ASSERT_EINVAL(dio_pi_generate(&bad, data, 512, pi, &(struct dio_pi_params){ 0 }));
	/* dio_pi_profile_init() fills every field, the reserved ones too. */
	assert_int_equal(dio_pi_profile_init(&bad, DIO_GUARD_CRC16, 512, 1), 0);
	assert_memory_equal(&bad, &p, sizeof(p));
	/* A PI length that does not fit in a ssize_t. */
	bad = p;
	bad.md_size = 65535;
	errno = 0;
	assert_int_equal(dio_pi_len(&bad, SIZE_MAX & ~(size_t)511), -1);
	assert_int_equal(errno, EOVERFLOW);

	/* dio_pi_generate_copy(): dio_pi_generate()'s errors, and a NULL dst. */
	{
		uint8_t dst[1024], pi0[32];
		struct dio_pi_params prm = { 0 };

		memset(dst, 0x77, sizeof(dst));
		memset(pi, 0x66, sizeof(pi));
		memcpy(pi0, pi, sizeof(pi));
		ASSERT_EINVAL(dio_pi_generate_copy(&p, dst, data, 1000, pi, &prm));
		ASSERT_EINVAL(dio_pi_generate_copy(&p, dst, data, 511, pi, &prm));
		ASSERT_EINVAL(dio_pi_generate_copy(&p, dst, NULL, 512, pi, &prm));
		ASSERT_EINVAL(dio_pi_generate_copy(&p, NULL, data, 512, pi, &prm));
		ASSERT_EINVAL(dio_pi_generate_copy(&p, dst, data, 512, NULL, &prm));
		ASSERT_EINVAL(dio_pi_generate_copy(&p, dst, data, 512, pi, NULL));
		ASSERT_EINVAL(dio_pi_generate_copy(NULL, dst, data, 512, pi, &prm));
		bad = p;
		bad.pi_type = 0;
		ASSERT_EINVAL(dio_pi_generate_copy(&bad, dst, data, 512, pi, &prm));
		bad = p;
		bad.md_size = 16;
		bad.pi_offset = 9;
		ASSERT_EINVAL(dio_pi_generate_copy(&bad, dst, data, 512, pi, &prm));
		prm.flags = 1;
		ASSERT_EINVAL(dio_pi_generate_copy(&p, dst, data, 512, pi, &prm));
		prm = (struct dio_pi_params){ .reserved0 = 1 };
		ASSERT_EINVAL(dio_pi_generate_copy(&p, dst, data, 512, pi, &prm));
		prm = (struct dio_pi_params){ .reserved[2] = 1 };
		ASSERT_EINVAL(dio_pi_generate_copy(&p, dst, data, 512, pi, &prm));
		/* Nothing written on failure. */
		for (size_t i = 0; i < sizeof(dst); i++)
			assert_int_equal(dst[i], 0x77);
		assert_memory_equal(pi, pi0, sizeof(pi));
		/* Empty is fine, even with NULL buffers. */
		assert_int_equal(dio_pi_generate_copy(&p, NULL, NULL, 0, NULL,
						      &(struct dio_pi_params){ 0 }), 0);
	}

	/* Empty is fine, even with NULL buffers. */
	assert_int_equal(dio_pi_generate(&p, NULL, 0, NULL, &(struct dio_pi_params){ 0 }), 0);
	assert_int_equal(dio_pi_verify(&p, NULL, 0, NULL,
				       &(struct dio_pi_params){ .chk_flags = DIO_PI_CHK_ALL },
				       NULL), 0);
	assert_int_equal(dio_pi_generate_iov(&p, NULL, 0, NULL, &(struct dio_pi_params){ 0 }), 0);
}

/*
 * struct dio_pi_params: what is not defined yet must be zero, so that a
 * later option is refused by older libraries instead of ignored.
 */
static void test_params(void **state)
{
	const struct dio_pi_params ok = { .seed = 5, .app_tag = 0x77,
					  .app_mask = 0xffff,
					  .chk_flags = DIO_PI_CHK_ALL };
	struct dio_pi_params a;
	struct dio_pi_profile p;
	struct dio_pi_error err;
	struct iovec iov;
	struct bufs b;
	uint8_t *pi2;

	assert_int_equal(dio_pi_profile_init(&p, DIO_GUARD_CRC16, 512, 1), 0);
	bufs_alloc(&b, &p, 4);
	iov = (struct iovec){ b.data, b.len };
	pi2 = malloc(b.pi_len);
	assert_non_null(pi2);

	/* NULL, flags, reserved0 and each reserved word: EINVAL, nothing written. */
	memset(b.pi, 0x5c, b.pi_len);
	memcpy(pi2, b.pi, b.pi_len);
	ASSERT_EINVAL(dio_pi_generate(&p, b.data, b.len, b.pi, NULL));
	ASSERT_EINVAL(dio_pi_verify(&p, b.data, b.len, b.pi, NULL, NULL));
	ASSERT_EINVAL(dio_pi_generate_iov(&p, &iov, 1, b.pi, NULL));
	ASSERT_EINVAL(dio_pi_verify_iov(&p, &iov, 1, b.pi, NULL, NULL));
	for (int i = -2; i < 3; i++) {
		a = ok;
		if (i == -2)
			a.flags = 1;
		else if (i == -1)
			a.reserved0 = 1U << 31;
		else
			a.reserved[i] = 1;
		ASSERT_EINVAL(dio_pi_generate(&p, b.data, b.len, b.pi, &a));
		ASSERT_EINVAL(dio_pi_generate_iov(&p, &iov, 1, b.pi, &a));
		ASSERT_EINVAL(dio_pi_verify(&p, b.data, b.len, b.pi, &a, NULL));
		ASSERT_EINVAL(dio_pi_verify_iov(&p, &iov, 1, b.pi, &a, NULL));
		/* Also with nothing to cover. */
		ASSERT_EINVAL(dio_pi_generate(&p, NULL, 0, NULL, &a));
	}
	assert_memory_equal(b.pi, pi2, b.pi_len);

	/* Generation ignores app_mask and chk_flags: one struct serves both. */
	a = (struct dio_pi_params){ .seed = 5, .app_tag = 0x77 };
	assert_int_equal(dio_pi_generate(&p, b.data, b.len, pi2, &a), 0);
	assert_int_equal(dio_pi_generate(&p, b.data, b.len, b.pi, &ok), 0);
	assert_memory_equal(b.pi, pi2, b.pi_len);

	/* The report is written whole: zeroed on success, reserved on failure. */
	memset(&err, 0xee, sizeof(err));
	assert_int_equal(dio_pi_verify(&p, b.data, b.len, b.pi, &ok, &err), 0);
	for (size_t i = 0; i < sizeof(err); i++)
		assert_int_equal(((uint8_t *)&err)[i], 0);
	b.data[3 * 512] ^= 1;
	memset(&err, 0xee, sizeof(err));
	errno = 0;
	assert_int_equal(dio_pi_verify(&p, b.data, b.len, b.pi, &ok, &err), -1);
	assert_int_equal(errno, EILSEQ);
	assert_int_equal(err.tag, DIO_PI_TAG_GUARD);
	assert_int_equal(err.interval, 3);
	assert_int_equal(err.ref, 8);
	for (size_t i = 0; i < sizeof(err.pad); i++)
		assert_int_equal(err.pad[i], 0);
	for (size_t i = 0; i < sizeof(err.reserved) / sizeof(err.reserved[0]); i++)
		assert_int_equal(err.reserved[i], 0);
	free(pi2);
	bufs_free(&b);
}

/* dio_req_set_pi(): pi_flags is 16 bits wide; what does not fit is refused. */
static void test_req_set_pi(void **state)
{
	struct dio_request r, before;
	uint8_t pi[64];

	dio_req_prep_read(&r, 1, NULL, 0, 0);
	before = r;
	ASSERT_EINVAL(dio_req_set_pi(&r, pi, sizeof(pi), 1U << 16, 1, 2));
	ASSERT_EINVAL(dio_req_set_pi(&r, pi, sizeof(pi), 0x10000 | DIO_PI_CHK_GUARD, 1, 2));
	ASSERT_EINVAL(dio_req_set_pi(&r, pi, sizeof(pi), ~0U, 1, 2));
	assert_memory_equal(&r, &before, sizeof(r));
	ASSERT_EINVAL(dio_req_set_pi(NULL, pi, sizeof(pi), 0, 0, 0));

	assert_int_equal(dio_req_set_pi(&r, pi, sizeof(pi), DIO_PI_CHK_ALL, 0x1234, 0xff00), 0);
	assert_int_equal(r.flags, DIO_REQ_PI);
	assert_int_equal(r.pi_buf, (uintptr_t)pi);
	assert_int_equal(r.pi_len, sizeof(pi));
	assert_int_equal(r.pi_flags, DIO_PI_CHK_ALL);
	assert_int_equal(r.app_tag, 0x1234);
	assert_int_equal(r.app_tag_mask, 0xff00);
	/* Every bit of the field still goes through (the module judges them). */
	assert_int_equal(dio_req_set_pi(&r, pi, sizeof(pi), 0xffff, 0, 0), 0);
	assert_int_equal(r.pi_flags, 0xffff);
}

/*
 * dio_pi_tag_name(), dio_pi_source_name(): every defined value has its own
 * name, not "unknown", and exactly the word dioctl's JSON has always
 * carried for it; any other value is "unknown", never NULL.
 */
struct named {
	unsigned int	value;
	const char	*name;
};

static void check_names(const char *(*fn)(unsigned int), const struct named *n, size_t nr)
{
	static const unsigned int others[] = {
		4, 5, 99, 100, 127, 128, 255, 256, 0x10000, INT32_MAX, UINT32_MAX,
	};

	for (size_t i = 0; i < nr; i++) {
		const char *got = fn(n[i].value);

		assert_non_null(got);
		assert_string_equal(got, n[i].name);
		assert_string_not_equal(got, "unknown");
		for (size_t j = 0; j < i; j++)
			assert_string_not_equal(got, fn(n[j].value));
	}
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		assert_non_null(fn(others[i]));
		assert_string_equal(fn(others[i]), "unknown");
	}
}

static void test_tag_names(void **state)
{
	static const struct named tags[] = {
		{ DIO_PI_TAG_NONE, "none" }, { DIO_PI_TAG_GUARD, "guard" },
		{ DIO_PI_TAG_APP, "app" }, { DIO_PI_TAG_REF, "ref" },
	};

	check_names(dio_pi_tag_name, tags, sizeof(tags) / sizeof(tags[0]));
	/* The uapi has four tag values: 0 to 3. */
	assert_int_equal(DIO_PI_TAG_REF, 3);
}

static void test_source_names(void **state)
{
	static const struct named srcs[] = {
		{ DIO_PI_SRC_NONE, "none" }, { DIO_PI_SRC_USER, "user" },
		{ DIO_PI_SRC_MODULE, "module" }, { DIO_PI_SRC_DEVICE, "device" },
	};

	check_names(dio_pi_source_name, srcs, sizeof(srcs) / sizeof(srcs[0]));
	assert_int_equal(DIO_PI_SRC_DEVICE, 3);
}

/*
 * dio_pi_explain_error() on a fabricated refusal, on the host: it leaves
 * the request alone, zeroes the report whenever it fails, and refuses
 * whatever is not a read the device refused without a tag before it
 * touches the descriptor.  (A real explanation needs an NVMe namespace:
 * t_pi's nvme_corruption().)
 */
static void test_explain_error(void **state)
{
	struct dio_request r, before, x;
	struct dio_pi_profile p;
	struct dio_pi_error e, zero = { 0 };
	char path[] = "/tmp/test_pi.XXXXXX";
	int fd;

	assert_int_equal(dio_pi_profile_init(&p, DIO_GUARD_CRC16, 512, 1), 0);
	dio_req_prep_read(&r, 1, NULL, 4096, 8 * 512);
	r.result = -EILSEQ;
	r.pi_err_source = DIO_PI_SRC_DEVICE;
	r.pi_err_tag = DIO_PI_TAG_NONE;
	r.pi_err_interval = 10;
	before = r;

	/* Not a block device: the raw read's ENOTTY. */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	memset(&e, 0xa5, sizeof(e));
	errno = 0;
	assert_int_equal(dio_pi_explain_error(fd, &p, &r, &e), -1);
	assert_int_equal(errno, ENOTTY);
	assert_memory_equal(&e, &zero, sizeof(e));
	assert_memory_equal(&r, &before, sizeof(r));
	/* A closed descriptor: fstat's EBADF. */
	close(fd);
	errno = 0;
	assert_int_equal(dio_pi_explain_error(fd, &p, &r, &e), -1);
	assert_int_equal(errno, EBADF);

	/* Each thing that makes it no refusal without a tag: EINVAL. */
	for (int c = 0; c < 8; c++) {
		x = before;
		switch (c) {
		case 0: x.opcode = DIO_OP_WRITE; break;
		case 1: x.result = -EIO; break;
		case 2: x.result = 4096; break;
		case 3: x.pi_err_source = DIO_PI_SRC_MODULE; break;
		case 4: x.pi_err_source = DIO_PI_SRC_USER; break;
		case 5: x.pi_err_tag = DIO_PI_TAG_GUARD; break;
		case 6: x.pi_err_interval = DIO_PI_INTERVAL_UNKNOWN; break;
		case 7: x.pi_err_source = DIO_PI_SRC_NONE; break;
		}
		memset(&e, 0xa5, sizeof(e));
		ASSERT_EINVAL(dio_pi_explain_error(-1, &p, &x, &e));
		assert_memory_equal(&e, &zero, sizeof(e));
	}
	memset(&e, 0xa5, sizeof(e));
	ASSERT_EINVAL(dio_pi_explain_error(-1, NULL, &r, &e));
	assert_memory_equal(&e, &zero, sizeof(e));
	ASSERT_EINVAL(dio_pi_explain_error(-1, &p, NULL, &e));
	ASSERT_EINVAL(dio_pi_explain_error(-1, &p, &r, NULL));
	assert_memory_equal(&r, &before, sizeof(r));

	/* The deprecated wrapper fails alike and leaves the request alone. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	errno = 0;
	assert_int_equal(dio_pi_explain(-1, &p, &r), -1);
	assert_int_equal(errno, EBADF);
	assert_memory_equal(&r, &before, sizeof(r));
	x = before;
	x.pi_err_tag = DIO_PI_TAG_REF;
	ASSERT_EINVAL(dio_pi_explain(-1, &p, &x));
	ASSERT_EINVAL(dio_pi_explain(-1, &p, NULL));
#pragma GCC diagnostic pop
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc16_vectors),
		cmocka_unit_test(test_crc64_vectors),
		cmocka_unit_test(test_crc64_fold_constants),
		cmocka_unit_test(test_ip_vectors),
		cmocka_unit_test(test_crc16_fast_vs_portable),
		cmocka_unit_test(test_crc64_fast_vs_portable),
		cmocka_unit_test(test_copy_paths),
		cmocka_unit_test(test_copy_multi_paths),
		cmocka_unit_test(test_dispatch),
		cmocka_unit_test(test_ip_fast_vs_reference),
		cmocka_unit_test(test_ip_paths),
		cmocka_unit_test(test_generate_all_profiles),
		cmocka_unit_test(test_generate_copy),
		cmocka_unit_test(test_generate_copy_counts),
		cmocka_unit_test(test_ip_guard_matches_kernel_bytes),
		cmocka_unit_test(test_iov_equals_contiguous),
		cmocka_unit_test(test_batches_and_escapes),
		cmocka_unit_test(test_corruptions_reported_exactly),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_chk_flags),
		cmocka_unit_test(test_metadata_beyond_pi),
		cmocka_unit_test(test_profile_init),
		cmocka_unit_test(test_profile_from_query),
		cmocka_unit_test(test_seed),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_req_set_pi),
		cmocka_unit_test(test_tag_names),
		cmocka_unit_test(test_source_names),
		cmocka_unit_test(test_explain_error),
	};

	return cmocka_run_group_tests_name("pi", tests, setup_rng, NULL);
}
