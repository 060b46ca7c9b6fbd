// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * CRC-64/NVME on x86-64: PCLMULQDQ folding on 128-bit registers (legacy
 * SSE and VEX-encoded), VPCLMULQDQ on 256-bit registers with AVX2 and on
 * 512-bit ones with AVX-512, each with its copying and several-interval
 * twins.  pi_crc64.c has the method and the notation; pi_crc64_dispatch.c
 * chooses among them by the CPU's feature bits.  Empty elsewhere.
 */
#include "pi_internal.h"

#ifdef PI_X86
#include <immintrin.h>

#include "pi_crc64.h"

/*
 * ---- PCLMULQDQ, 128-bit ----
 *
 * The cores take the destination of the copy, or NULL; they are inlined
 * into the plain and the copying entry points, where the NULL is a
 * constant, so that the plain ones have no trace of the copy.
 *
 * Two builds of the same C code: legacy SSE (PCLMUL) for CPUs without
 * AVX, and VEX-encoded (PCLMUL_AVX: three operands, no register copies)
 * for CPUs with AVX but no VPCLMULQDQ.  A legacy SSE instruction that
 * writes an XMM register keeps the register's upper bits, so when
 * someone left them dirty (256- or 512-bit code returning without
 * VZEROUPPER: ISA-L's own AVX-512 CRC kernels do) every such write waits
 * for the register's previous value: GCC's code, which copies each lane
 * through one scratch register before its two products, then runs its
 * eight lanes one after another, at half speed or less (bench/README.md,
 * "Dirty upper halves").  A VEX write clears the upper bits instead and
 * waits for nothing.
 */
#define PCLMUL __attribute__((target("pclmul,sse4.1")))
#define PCLMUL_AVX __attribute__((target("pclmul,avx,sse4.1")))

PCLMUL static INLINE __m128i kload(unsigned int d)
{
	return _mm_load_si128((const __m128i *)pi_crc64_fold_k[d / 128]);
}

PCLMUL static INLINE __m128i kfinload(unsigned int e)
{
	return _mm_load_si128((const __m128i *)pi_crc64_kfin[e]);
}

/* x folded forward by the constant's distance (no data added). */
PCLMUL static INLINE __m128i fold(__m128i x, __m128i k)
{
	return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
			     _mm_clmulepi64_si128(x, k, 0x11));
}

/* x folded forward onto data. */
PCLMUL static INLINE __m128i fold_onto(__m128i x, __m128i k, __m128i data)
{
	return _mm_xor_si128(fold(x, k), data);
}

/* The 16 bytes at src + i, also stored at dst + i when copying. */
PCLMUL static INLINE __m128i ld128(uint8_t *dst, const uint8_t *src, size_t i)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(src + i));

	if (dst)
		_mm_storeu_si128((__m128i *)(dst + i), v);
	return v;
}

/*
 * The register for a 128-bit state X, i.e. X*x^64 mod P.  First
 * X*x^64 = L*x^128 + H*x^64 == T = T1*x^64 + T0 (one product by
 * rev64(x^127 mod P) = fold_k[1].hi), then T mod P = (T1*x^64 mod P) + T0.
 * T1*x^64 mod P is the register after eight zero bytes from register T1:
 * one slice-by-8 step, eight independent table loads.  That replaces
 * Barrett's two dependent products (q = floor(T1*x^64 / P) = T1 +
 * floor(T1*mu' / x^64), T1*x^64 mod P = low64(q*P'), which the PMULL
 * path still does): the carry-less multiplier is what every path here
 * waits for (ISA-L's kernels as much: the same number of folds), and the
 * table step takes two of its products off each CRC, 3% of those of a
 * 512-byte interval on 128-bit registers, 11% on 512-bit ones, in loads
 * the multiplier does not wait for.  step8_of_t() is the second step
 * alone, T (T1 the low quadword) to the register.
 */
PCLMUL static INLINE uint64_t step8_of_t(__m128i t)
{
	return crc64_step8(_mm_cvtsi128_si64(t)) ^ (uint64_t)_mm_extract_epi64(t, 1);
}

/*
 * The same by Barrett, for the AVX-512 copying several-interval loop
 * (see there): q = T1 ^ (T1*mu' >> 64), T1*x^64 mod P = low64(q*P'), the
 * shifts undoing the one-bit offset of reflected products.
 */
PCLMUL static INLINE uint64_t barrett64(__m128i t)
{
	__m128i v, w;
	uint64_t lo, hi;

	v = _mm_clmulepi64_si128(t, _mm_cvtsi64_si128(pi_crc64_k_mu), 0x00);
	v = _mm_xor_si128(t, _mm_slli_epi64(v, 1));		/* q */
	w = _mm_clmulepi64_si128(v, _mm_cvtsi64_si128(CRC64_POLY_REFL), 0x00);
	lo = _mm_cvtsi128_si64(w);
	hi = _mm_extract_epi64(w, 1);
	return ((hi << 1) | (lo >> 63)) ^ _mm_extract_epi64(t, 1);
}

PCLMUL static INLINE uint64_t reduce128(__m128i x)
{
	__m128i t = _mm_clmulepi64_si128(x, kload(128), 0x10);	/* L * k.hi */

	return step8_of_t(_mm_xor_si128(t, _mm_srli_si128(x, 8)));
}

/*
 * The last t = len - i bytes (1 to 15) after the state x, which stands
 * for the 16 bytes before src + i: x's first t bytes become a block of
 * their own (zeros before them change nothing), folded by 16 bytes onto
 * x's other 16 - t bytes followed by the t new ones.  Those are the
 * buffer's last 16 bytes, loaded at once, their first 16 - t (already in
 * x) replaced by x's.  One fold and three byte shuffles instead of a
 * table lookup per byte (ISA-L's ending).  Needs i >= 16.  When copying,
 * the 16 bytes are stored back at the same place: the first 16 - t of
 * them were already copied, with the same values.
 *
 * shuf_tab[t..t+15] is the shuffle that moves x's first t bytes to the
 * top (the high bit set: a zero byte); XORed with 0x80 it moves x's
 * other bytes to the bottom and its high bits select the loaded ones.
 */
static const uint8_t shuf_tab[32] __attribute__((aligned(16))) = {
	0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
	0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x8f,
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
};

PCLMUL static INLINE __m128i fold_partial(__m128i x, uint8_t *dst, const uint8_t *src,
					  size_t i, size_t len)
{
	__m128i b = _mm_loadu_si128((const __m128i *)(src + len - 16));
	__m128i mh = _mm_loadu_si128((const __m128i *)(shuf_tab + (len - i)));
	__m128i ml = _mm_xor_si128(mh, _mm_set1_epi8((char)0x80));

	if (dst)
		_mm_storeu_si128((__m128i *)(dst + len - 16), b);
	return fold_onto(_mm_shuffle_epi8(x, mh), kload(128),
			 _mm_blendv_epi8(_mm_shuffle_epi8(x, ml), b, ml));
}

/* 16-byte blocks from src + i on, one at a time, then the tail. */
PCLMUL static INLINE uint64_t crc64_finish128(__m128i x, uint8_t *dst, const uint8_t *src,
					      size_t i, size_t len)
{
	__m128i k = kload(128);

	for (; len - i >= 16; i += 16)
		x = fold_onto(x, k, ld128(dst, src, i));
	if (i != len)
		x = fold_partial(x, dst, src, i, len);
	return ~reduce128(x);
}

/*
 * Eight lanes that end the message (its last 128 bytes), each straight to
 * its share of T by its own constant (kfin[8..15]), then Barrett: one
 * product deep, where folding the lanes onto the last one and reducing
 * that (reduce128()) is two.  The last lane's high half needs no product:
 * kfin[15].hi = rev64(x^63 mod P) = 1, so its share is the half itself,
 * moved down (as in reduce128()); fifteen products, as many as ISA-L's
 * eight-to-one folds and its 128-to-64-bit step.
 */
PCLMUL static INLINE __m128i last_lane(__m128i x7, __m128i kf15)
{
	return _mm_xor_si128(_mm_clmulepi64_si128(x7, kf15, 0x00), _mm_srli_si128(x7, 8));
}

PCLMUL static INLINE uint64_t lanes8_reg(__m128i x0, __m128i x1, __m128i x2, __m128i x3,
					 __m128i x4, __m128i x5, __m128i x6, __m128i x7)
{
	x0 = _mm_xor_si128(fold(x0, kfinload(8)), fold(x1, kfinload(9)));
	x2 = _mm_xor_si128(fold(x2, kfinload(10)), fold(x3, kfinload(11)));
	x4 = _mm_xor_si128(fold(x4, kfinload(12)), fold(x5, kfinload(13)));
	x6 = _mm_xor_si128(fold(x6, kfinload(14)), last_lane(x7, kfinload(15)));
	return step8_of_t(_mm_xor_si128(_mm_xor_si128(x0, x2), _mm_xor_si128(x4, x6)));
}

PCLMUL static INLINE uint64_t crc64_pclmul_core(uint64_t crc, uint8_t *dst,
						const uint8_t *src, size_t len)
{
	__m128i x0, x1, x2, x3, x4, x5, x6, x7, k;
	size_t i;

	if (len < 16)
		return crc64_tail(~crc, dst, src, 0, len);
	/* The initial register enters as the first 8 bytes' XOR. */
	x0 = _mm_xor_si128(ld128(dst, src, 0), _mm_cvtsi64_si128(~crc));
	if (len < 128)
		return crc64_finish128(x0, dst, src, 16, len);
	/*
	 * Eight lanes, lane j on the blocks at 16 * j modulo 128: each round
	 * folds every lane forward by 128 bytes (D = 1024) onto the block
	 * there.  Sixteen independent products a round keep the multiplier
	 * busy while each one's latency passes.
	 */
	x1 = ld128(dst, src, 16);
	x2 = ld128(dst, src, 32);
	x3 = ld128(dst, src, 48);
	x4 = ld128(dst, src, 64);
	x5 = ld128(dst, src, 80);
	x6 = ld128(dst, src, 96);
	x7 = ld128(dst, src, 112);
	k = kload(1024);
	for (i = 128; len - i >= 128; i += 128) {
		x0 = fold_onto(x0, k, ld128(dst, src, i));
		x1 = fold_onto(x1, k, ld128(dst, src, i + 16));
		x2 = fold_onto(x2, k, ld128(dst, src, i + 32));
		x3 = fold_onto(x3, k, ld128(dst, src, i + 48));
		x4 = fold_onto(x4, k, ld128(dst, src, i + 64));
		x5 = fold_onto(x5, k, ld128(dst, src, i + 80));
		x6 = fold_onto(x6, k, ld128(dst, src, i + 96));
		x7 = fold_onto(x7, k, ld128(dst, src, i + 112));
	}
	/* A multiple of 128 bytes (every PI interval): the lanes end it. */
	if (i == len)
		return ~lanes8_reg(x0, x1, x2, x3, x4, x5, x6, x7);
	/* 8 -> 1: lane j is 7 - j blocks before lane 7; independent folds. */
	x0 = _mm_xor_si128(fold(x0, kload(896)), fold(x1, kload(768)));
	x2 = _mm_xor_si128(fold(x2, kload(640)), fold(x3, kload(512)));
	x4 = _mm_xor_si128(fold(x4, kload(384)), fold(x5, kload(256)));
	x6 = fold_onto(x6, kload(128), x7);
	x0 = _mm_xor_si128(_mm_xor_si128(x0, x2), _mm_xor_si128(x4, x6));
	return crc64_finish128(x0, dst, src, i, len);
}

PCLMUL uint64_t pi_crc64_pclmul(uint64_t crc, const void *buf, size_t len)
{
	return crc64_pclmul_core(crc, NULL, buf, len);
}

PCLMUL uint64_t pi_crc64_copy_pclmul(uint64_t crc, void *dst, const void *src, size_t len)
{
	return crc64_pclmul_core(crc, pi_copy_dst(dst), src, len);
}

PCLMUL_AVX uint64_t pi_crc64_pclmul_avx(uint64_t crc, const void *buf, size_t len)
{
	return crc64_pclmul_core(crc, NULL, buf, len);
}

PCLMUL_AVX uint64_t pi_crc64_copy_pclmul_avx(uint64_t crc, void *dst, const void *src,
					     size_t len)
{
	return crc64_pclmul_core(crc, pi_copy_dst(dst), src, len);
}

/*
 * ---- several intervals, PCLMULQDQ ----
 *
 * pi_crc64_multi_*() and pi_crc64_copy_multi_*(): the CRC of each of n
 * intervals (from 0, as dio_pi_crc64_nvme(0, ...)), copying them or not:
 * dio_pi_generate_copy()'s loop, and dio_pi_generate()'s and
 * dio_pi_verify()'s on contiguous data.  Per interval, the same rounds as
 * the path's single-buffer loop; at the end every lane goes straight to
 * its share of T with its own constant (kfin), the shares are XORed
 * together and one Barrett step makes the register: one product deep
 * instead of a chain of folds, no table, no call, no branch but the
 * loops'.  The intervals are independent, so the CPU overlaps one
 * interval's end with the next one's loads.  An interval that is not a
 * multiple of the path's round goes through its plain or copying
 * function, one call each.
 */
PCLMUL static INLINE void crc64_multi_pclmul_core(uint8_t *dst, const uint8_t *src,
						  size_t interval, size_t n, uint64_t *out)
{
	const __m128i k = kload(1024), init = _mm_cvtsi64_si128(-1);

	for (size_t m = 0, o = 0; m < n; m++, o += interval) {
		__m128i x0, x1, x2, x3, x4, x5, x6, x7;

		x0 = _mm_xor_si128(ld128(dst, src, o), init);
		x1 = ld128(dst, src, o + 16);
		x2 = ld128(dst, src, o + 32);
		x3 = ld128(dst, src, o + 48);
		x4 = ld128(dst, src, o + 64);
		x5 = ld128(dst, src, o + 80);
		x6 = ld128(dst, src, o + 96);
		x7 = ld128(dst, src, o + 112);
		for (size_t i = o + 128; i < o + interval; i += 128) {
			x0 = fold_onto(x0, k, ld128(dst, src, i));
			x1 = fold_onto(x1, k, ld128(dst, src, i + 16));
			x2 = fold_onto(x2, k, ld128(dst, src, i + 32));
			x3 = fold_onto(x3, k, ld128(dst, src, i + 48));
			x4 = fold_onto(x4, k, ld128(dst, src, i + 64));
			x5 = fold_onto(x5, k, ld128(dst, src, i + 80));
			x6 = fold_onto(x6, k, ld128(dst, src, i + 96));
			x7 = fold_onto(x7, k, ld128(dst, src, i + 112));
		}
		out[m] = ~lanes8_reg(x0, x1, x2, x3, x4, x5, x6, x7);
	}
}

PCLMUL void pi_crc64_copy_multi_pclmul(void *dst, const void *src, size_t interval,
				       size_t n, uint64_t *out)
{
	if (!interval || interval % 128)
		crc64_multi_each(pi_crc64_pclmul, pi_crc64_copy_pclmul, dst, src, interval, n, out);
	else
		crc64_multi_pclmul_core(pi_copy_dst(dst), src, interval, n, out);
}

PCLMUL void pi_crc64_multi_pclmul(const void *src, size_t interval, size_t n, uint64_t *out)
{
	if (!interval || interval % 128)
		crc64_multi_each(pi_crc64_pclmul, pi_crc64_copy_pclmul, NULL, src, interval, n, out);
	else
		crc64_multi_pclmul_core(NULL, src, interval, n, out);
}

PCLMUL_AVX void pi_crc64_copy_multi_pclmul_avx(void *dst, const void *src, size_t interval,
					       size_t n, uint64_t *out)
{
	if (!interval || interval % 128)
		crc64_multi_each(pi_crc64_pclmul_avx, pi_crc64_copy_pclmul_avx, dst, src,
				 interval, n, out);
	else
		crc64_multi_pclmul_core(pi_copy_dst(dst), src, interval, n, out);
}

PCLMUL_AVX void pi_crc64_multi_pclmul_avx(const void *src, size_t interval, size_t n,
					  uint64_t *out)
{
	if (!interval || interval % 128)
		crc64_multi_each(pi_crc64_pclmul_avx, pi_crc64_copy_pclmul_avx, NULL, src,
				 interval, n, out);
	else
		crc64_multi_pclmul_core(NULL, src, interval, n, out);
}

/*
 * ---- VPCLMULQDQ on 256-bit registers, AVX2 ----
 *
 * The same folds on two 128-bit lanes per register, eight registers: 256
 * bytes a round (D = 2048), then 8 -> 4 registers (D = 1024), 128-byte
 * rounds while they last, 4 -> 1 register and 2 -> 1 lane.  No AVX-512
 * instruction: for CPUs that have VPCLMULQDQ without it (AMD Zen 3).
 */
#define VPCLMUL256 __attribute__((target("vpclmulqdq,pclmul,avx2,sse4.1")))

VPCLMUL256 static INLINE __m256i kload256(unsigned int d)
{
	return _mm256_broadcastsi128_si256(kload(d));
}

/* kfin[e] and kfin[e + 1], the constants of a register's two lanes. */
VPCLMUL256 static INLINE __m256i kfin256(unsigned int e)
{
	return _mm256_load_si256((const __m256i *)pi_crc64_kfin[e]);
}

VPCLMUL256 static INLINE __m256i fold256(__m256i x, __m256i k, __m256i data)
{
	return _mm256_xor_si256(_mm256_xor_si256(_mm256_clmulepi64_epi128(x, k, 0x00),
						 _mm256_clmulepi64_epi128(x, k, 0x11)),
				data);
}

/* Each lane of x folded by its own constant in k, no data added. */
VPCLMUL256 static INLINE __m256i fold256_lanes(__m256i x, __m256i k)
{
	return _mm256_xor_si256(_mm256_clmulepi64_epi128(x, k, 0x00),
				_mm256_clmulepi64_epi128(x, k, 0x11));
}

VPCLMUL256 static INLINE __m256i ld256(uint8_t *dst, const uint8_t *src, size_t i)
{
	__m256i v = _mm256_loadu_si256((const __m256i *)(src + i));

	if (dst)
		_mm256_storeu_si256((__m256i *)(dst + i), v);
	return v;
}

/* The XOR of a register's two lanes. */
VPCLMUL256 static INLINE __m128i xor_lanes256(__m256i y)
{
	return _mm_xor_si128(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));
}

/*
 * T of the four registers (eight lanes) that end the message, each lane by
 * its own constant (kfin[8..15]); of the eight (sixteen lanes) that end
 * it, by kfin[0..15].  The caller clears the upper halves and does Barrett.
 */
VPCLMUL256 static INLINE __m128i lanes8_t256(__m256i y0, __m256i y1, __m256i y2, __m256i y3)
{
	y0 = _mm256_xor_si256(fold256_lanes(y0, kfin256(8)), fold256_lanes(y1, kfin256(10)));
	y2 = _mm256_xor_si256(fold256_lanes(y2, kfin256(12)), fold256_lanes(y3, kfin256(14)));
	return xor_lanes256(_mm256_xor_si256(y0, y2));
}

VPCLMUL256 static INLINE __m128i lanes16_t256(__m256i y0, __m256i y1, __m256i y2, __m256i y3,
					      __m256i y4, __m256i y5, __m256i y6, __m256i y7)
{
	y0 = _mm256_xor_si256(fold256_lanes(y0, kfin256(0)), fold256_lanes(y1, kfin256(2)));
	y2 = _mm256_xor_si256(fold256_lanes(y2, kfin256(4)), fold256_lanes(y3, kfin256(6)));
	y4 = _mm256_xor_si256(fold256_lanes(y4, kfin256(8)), fold256_lanes(y5, kfin256(10)));
	y6 = _mm256_xor_si256(fold256_lanes(y6, kfin256(12)), fold256_lanes(y7, kfin256(14)));
	return xor_lanes256(_mm256_xor_si256(_mm256_xor_si256(y0, y2), _mm256_xor_si256(y4, y6)));
}

VPCLMUL256 static INLINE uint64_t crc64_vpclmul256_core(uint64_t crc, uint8_t *dst,
							const uint8_t *src, size_t len)
{
	__m256i y0, y1, y2, y3, y4, y5, y6, y7, k;
	__m128i x;
	size_t i = 128;

	if (len < 128)
		return crc64_pclmul_core(crc, dst, src, len);
	y0 = _mm256_xor_si256(ld256(dst, src, 0),
			      _mm256_zextsi128_si256(_mm_cvtsi64_si128(~crc)));
	y1 = ld256(dst, src, 32);
	y2 = ld256(dst, src, 64);
	y3 = ld256(dst, src, 96);
	if (len >= 256) {
		y4 = ld256(dst, src, 128);
		y5 = ld256(dst, src, 160);
		y6 = ld256(dst, src, 192);
		y7 = ld256(dst, src, 224);
		k = kload256(2048);
		for (i = 256; len - i >= 256; i += 256) {
			y0 = fold256(y0, k, ld256(dst, src, i));
			y1 = fold256(y1, k, ld256(dst, src, i + 32));
			y2 = fold256(y2, k, ld256(dst, src, i + 64));
			y3 = fold256(y3, k, ld256(dst, src, i + 96));
			y4 = fold256(y4, k, ld256(dst, src, i + 128));
			y5 = fold256(y5, k, ld256(dst, src, i + 160));
			y6 = fold256(y6, k, ld256(dst, src, i + 192));
			y7 = fold256(y7, k, ld256(dst, src, i + 224));
		}
		/* A multiple of 256 bytes: the sixteen lanes end it. */
		if (i == len) {
			x = lanes16_t256(y0, y1, y2, y3, y4, y5, y6, y7);
			_mm256_zeroupper();	/* as below */
			return ~step8_of_t(x);
		}
		/* y0..y3 are 128 bytes before y4..y7. */
		k = kload256(1024);
		y0 = fold256(y0, k, y4);
		y1 = fold256(y1, k, y5);
		y2 = fold256(y2, k, y6);
		y3 = fold256(y3, k, y7);
	}
	k = kload256(1024);
	for (; len - i >= 128; i += 128) {
		y0 = fold256(y0, k, ld256(dst, src, i));
		y1 = fold256(y1, k, ld256(dst, src, i + 32));
		y2 = fold256(y2, k, ld256(dst, src, i + 64));
		y3 = fold256(y3, k, ld256(dst, src, i + 96));
	}
	if (i == len) {
		x = lanes8_t256(y0, y1, y2, y3);
		_mm256_zeroupper();
		return ~step8_of_t(x);
	}
	/* y0, y1 are 64 bytes before y2, y3; then y2 32 bytes before y3. */
	k = kload256(512);
	y2 = fold256(y0, k, y2);
	y3 = fold256(y1, k, y3);
	y3 = fold256(y2, kload256(256), y3);
	/* The low lane is 16 bytes before the high one. */
	x = fold_onto(_mm256_castsi256_si128(y3), kload(128), _mm256_extracti128_si256(y3, 1));
	/*
	 * Clean upper halves before anything else runs: GCC 12 does not add
	 * the VZEROUPPER for a function whose target attribute enables AVX,
	 * and legacy SSE code after dirty ones runs at half speed (the
	 * PCLMULQDQ path measured 6.5 instead of 13 GB/s after this one).
	 */
	_mm256_zeroupper();
	return crc64_finish128(x, dst, src, i, len);
}

VPCLMUL256 uint64_t pi_crc64_vpclmul256(uint64_t crc, const void *buf, size_t len)
{
	return crc64_vpclmul256_core(crc, NULL, buf, len);
}

VPCLMUL256 uint64_t pi_crc64_copy_vpclmul256(uint64_t crc, void *dst, const void *src,
					     size_t len)
{
	return crc64_vpclmul256_core(crc, pi_copy_dst(dst), src, len);
}

/* Several intervals: four registers, 128 bytes a round, as above. */
VPCLMUL256 static INLINE void crc64_multi_vpclmul256_core(uint8_t *dst, const uint8_t *src,
							  size_t interval, size_t n,
							  uint64_t *out)
{
	const __m256i k = kload256(1024);
	const __m256i init = _mm256_zextsi128_si256(_mm_cvtsi64_si128(-1));

	for (size_t m = 0, o = 0; m < n; m++, o += interval) {
		__m256i y0, y1, y2, y3;

		y0 = _mm256_xor_si256(ld256(dst, src, o), init);
		y1 = ld256(dst, src, o + 32);
		y2 = ld256(dst, src, o + 64);
		y3 = ld256(dst, src, o + 96);
		for (size_t i = o + 128; i < o + interval; i += 128) {
			y0 = fold256(y0, k, ld256(dst, src, i));
			y1 = fold256(y1, k, ld256(dst, src, i + 32));
			y2 = fold256(y2, k, ld256(dst, src, i + 64));
			y3 = fold256(y3, k, ld256(dst, src, i + 96));
		}
		out[m] = ~step8_of_t(lanes8_t256(y0, y1, y2, y3));
	}
	_mm256_zeroupper();
}

VPCLMUL256 void pi_crc64_copy_multi_vpclmul256(void *dst, const void *src, size_t interval,
					       size_t n, uint64_t *out)
{
	if (!interval || interval % 128)
		crc64_multi_each(pi_crc64_vpclmul256, pi_crc64_copy_vpclmul256, dst, src,
				 interval, n, out);
	else
		crc64_multi_vpclmul256_core(pi_copy_dst(dst), src, interval, n, out);
}

VPCLMUL256 void pi_crc64_multi_vpclmul256(const void *src, size_t interval, size_t n,
					  uint64_t *out)
{
	if (!interval || interval % 128)
		crc64_multi_each(pi_crc64_vpclmul256, pi_crc64_copy_vpclmul256, NULL, src,
				 interval, n, out);
	else
		crc64_multi_vpclmul256_core(NULL, src, interval, n, out);
}

/*
 * ---- AVX-512 VPCLMULQDQ ----
 *
 * The same folds on four 128-bit lanes per register, four registers, 256
 * bytes a round (ISA-L's "by16" layout).
 */
#define VPCLMUL512 __attribute__((target("vpclmulqdq,pclmul,avx512f,avx2,sse4.1")))

VPCLMUL512 static INLINE __m512i kload512(unsigned int d)
{
	return _mm512_broadcast_i32x4(kload(d));
}

/* kfin[e..e + 3], the constants of a register's four lanes. */
VPCLMUL512 static INLINE __m512i kfin512(unsigned int e)
{
	return _mm512_load_si512((const void *)pi_crc64_kfin[e]);
}

VPCLMUL512 static INLINE __m512i fold512(__m512i x, __m512i k, __m512i data)
{
	/* 0x96: three-way XOR. */
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
					 _mm512_clmulepi64_epi128(x, k, 0x11),
					 data, 0x96);
}

VPCLMUL512 static INLINE __m512i ld512(uint8_t *dst, const uint8_t *src, size_t i)
{
	__m512i v = _mm512_loadu_si512((const void *)(src + i));

	if (dst)
		_mm512_storeu_si512((void *)(dst + i), v);
	return v;
}

/* The XOR of a register's four lanes. */
VPCLMUL512 static INLINE __m128i xor_lanes512(__m512i z)
{
	__m256i y = _mm256_xor_si256(_mm512_castsi512_si256(z), _mm512_extracti64x4_epi64(z, 1));

	return _mm_xor_si128(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));
}

/*
 * T of the four registers (sixteen lanes) that end the message, each lane
 * by its own constant (kf0..kf3: kfin[0..15]), three-way XORs.  The
 * caller clears the upper halves and does Barrett.
 */
VPCLMUL512 static INLINE __m128i lanes16_t512(__m512i z0, __m512i z1, __m512i z2, __m512i z3,
					      __m512i kf0, __m512i kf1, __m512i kf2,
					      __m512i kf3)
{
	__m512i a, b;

	a = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z0, kf0, 0x00),
				      _mm512_clmulepi64_epi128(z0, kf0, 0x11),
				      _mm512_clmulepi64_epi128(z1, kf1, 0x00), 0x96);
	b = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z1, kf1, 0x11),
				      _mm512_clmulepi64_epi128(z2, kf2, 0x00),
				      _mm512_clmulepi64_epi128(z2, kf2, 0x11), 0x96);
	a = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z3, kf3, 0x00),
				      _mm512_clmulepi64_epi128(z3, kf3, 0x11), a, 0x96);
	return xor_lanes512(_mm512_xor_si512(a, b));
}

/*
 * T to the register at the end of the AVX-512 single-buffer path: the
 * table step (step8_of_t()), or Barrett when copying: at these speeds the
 * copy's loads and stores, not the multiplier, are the limit, and the
 * table's eight loads cost more than two products (an A/B harness: 1 MiB
 * in 512-byte pieces copied in 24.6 us with Barrett, 26.0 with the table,
 * 28.0 before either ending; in 4096-byte pieces 22.4, 22.6, 22.7).
 */
VPCLMUL512 static INLINE uint64_t reg512_of_t(const uint8_t *dst, __m128i t)
{
	return dst ? barrett64(t) : step8_of_t(t);
}

VPCLMUL512 static INLINE uint64_t crc64_vpclmul512_core(uint64_t crc, uint8_t *dst,
							const uint8_t *src, size_t len)
{
	__m512i z0, z1, z2, z3, k, kl;
	__m128i x;
	size_t i = 64;

	if (len < 64)
		return crc64_pclmul_core(crc, dst, src, len);
	z0 = _mm512_xor_si512(ld512(dst, src, 0),
			      _mm512_zextsi128_si512(_mm_cvtsi64_si128(~crc)));
	if (len >= 256) {
		/* Sixteen lanes down to the four of one register. */
		z1 = ld512(dst, src, 64);
		z2 = ld512(dst, src, 128);
		z3 = ld512(dst, src, 192);
		k = kload512(2048);
		for (i = 256; len - i >= 256; i += 256) {
			z0 = fold512(z0, k, ld512(dst, src, i));
			z1 = fold512(z1, k, ld512(dst, src, i + 64));
			z2 = fold512(z2, k, ld512(dst, src, i + 128));
			z3 = fold512(z3, k, ld512(dst, src, i + 192));
		}
		/* A multiple of 256 bytes (every PI interval): the lanes end it. */
		if (i == len) {
			x = lanes16_t512(z0, z1, z2, z3, kfin512(0), kfin512(4), kfin512(8),
					 kfin512(12));
			_mm256_zeroupper();	/* as in the 256-bit path */
			return ~reg512_of_t(dst, x);
		}
		k = kload512(1024);
		z2 = fold512(z0, k, z2);
		z3 = fold512(z1, k, z3);
		z0 = fold512(z2, kload512(512), z3);
	}
	k = kload512(512);
	for (; len - i >= 64; i += 64)
		z0 = fold512(z0, k, ld512(dst, src, i));
	if (i == len) {
		/* The last 64 bytes' four lanes, by kfin[12..15]. */
		kl = kfin512(12);
		x = xor_lanes512(_mm512_xor_si512(_mm512_clmulepi64_epi128(z0, kl, 0x00),
						  _mm512_clmulepi64_epi128(z0, kl, 0x11)));
		_mm256_zeroupper();
		return ~reg512_of_t(dst, x);
	}
	/* Lanes 0..2 are 3..1 blocks before lane 3: fold them onto it. */
	kl = _mm512_inserti32x4(_mm512_castsi128_si512(kload(384)), kload(256), 1);
	kl = _mm512_inserti32x4(kl, kload(128), 2);
	kl = _mm512_inserti32x4(kl, _mm_setzero_si128(), 3);
	z0 = fold512(z0, kl, _mm512_maskz_mov_epi64(0xc0, z0));
	x = xor_lanes512(z0);
	_mm256_zeroupper();	/* as in the 256-bit path */
	return crc64_finish128(x, dst, src, i, len);
}

VPCLMUL512 uint64_t pi_crc64_vpclmul512(uint64_t crc, const void *buf, size_t len)
{
	return crc64_vpclmul512_core(crc, NULL, buf, len);
}

VPCLMUL512 uint64_t pi_crc64_copy_vpclmul512(uint64_t crc, void *dst, const void *src,
					     size_t len)
{
	return crc64_vpclmul512_core(crc, pi_copy_dst(dst), src, len);
}

/*
 * T of one interval of the several-interval AVX-512 path, at src + o:
 * sixteen lanes, each taken to its share of T by its own constant
 * (kf0..kf3).  Inlined with interval a constant for 512-byte intervals:
 * straight-line code, no inner loop.
 */
VPCLMUL512 static INLINE __m128i crc64_interval512_t(uint8_t *dst, const uint8_t *src,
						     size_t o, size_t interval, __m512i k,
						     __m512i kf0, __m512i kf1, __m512i kf2,
						     __m512i kf3)
{
	const __m512i init = _mm512_zextsi128_si512(_mm_cvtsi64_si128(-1));
	__m512i z0, z1, z2, z3;

	z0 = _mm512_xor_si512(ld512(dst, src, o), init);
	z1 = ld512(dst, src, o + 64);
	z2 = ld512(dst, src, o + 128);
	z3 = ld512(dst, src, o + 192);
	for (size_t i = o + 256; i < o + interval; i += 256) {
		z0 = fold512(z0, k, ld512(dst, src, i));
		z1 = fold512(z1, k, ld512(dst, src, i + 64));
		z2 = fold512(z2, k, ld512(dst, src, i + 128));
		z3 = fold512(z3, k, ld512(dst, src, i + 192));
	}
	return lanes16_t512(z0, z1, z2, z3, kf0, kf1, kf2, kf3);
}

/*
 * The registers of four intervals at once, their T in the four lanes of
 * t, into out[0..3], finished (inverted).  One table step each
 * (step8_of_t()) would be some thirty scalar instructions an interval;
 * Barrett on all four lanes together is two 512-bit products and a few
 * shifts for the four: q = T1 ^ (T1*mu' >> 64), T1*x^64 mod P =
 * low64(q*P'), the one-bit offset of reflected products undone in each
 * lane as in the PMULL path's pm_barrett64().  The results are the high
 * quadwords; one permutation gathers them for a 256-bit store.
 */
VPCLMUL512 static INLINE void barrett4_512(__m512i t, uint64_t *out)
{
	const __m512i mu = _mm512_set1_epi64((long long)pi_crc64_k_mu);
	const __m512i poly = _mm512_set1_epi64((long long)CRC64_POLY_REFL);
	const __m512i hi = _mm512_set_epi64(0, 0, 0, 0, 7, 5, 3, 1);
	__m512i v, w;

	v = _mm512_clmulepi64_epi128(t, mu, 0x00);
	v = _mm512_xor_si512(t, _mm512_slli_epi64(v, 1));	/* q */
	w = _mm512_clmulepi64_epi128(v, poly, 0x00);
	/* (w.hi << 1 | w.lo >> 63) ^ t.hi, inverted: in the high quadwords. */
	w = _mm512_ternarylogic_epi64(_mm512_slli_epi64(w, 1),
				      _mm512_unpacklo_epi64(_mm512_setzero_si512(),
							    _mm512_srli_epi64(w, 63)), t, 0x69);
	_mm256_storeu_si256((__m256i *)out,
			    _mm512_castsi512_si256(_mm512_permutexvar_epi64(hi, w)));
}

/*
 * Several intervals: four registers, 256 bytes a round, as above.  How
 * each interval's T becomes its register was measured (an A/B harness,
 * the variants in one process, turn about, on the shared 2-vCPU host):
 * plain, four intervals together (barrett4_512()) were as fast as a table
 * step each with the other vCPU idle (72 ns per 4 KiB at 512-byte
 * intervals, Barrett each 78) and far faster with it busy (77-80 ns
 * against 74-112); the intervals left over take a table step each.
 * Copying, where the loop also stores 64 bytes a load, Barrett each is the
 * one that held: the table step 3% faster idle, a fifth slower busy, the
 * groups of four 4-5% slower idle.
 */
VPCLMUL512 static INLINE void crc64_multi_vpclmul512_loop(uint8_t *dst, const uint8_t *src,
							  size_t interval, size_t n,
							  uint64_t *out)
{
	const __m512i k = kload512(2048);
	const __m512i kf0 = kfin512(0), kf1 = kfin512(4), kf2 = kfin512(8), kf3 = kfin512(12);
	size_t m = 0;

#define T(j)	crc64_interval512_t(dst, src, (m + (j)) * interval, interval, k, kf0, kf1, kf2, kf3)
	if (dst) {
		for (; m < n; m++, dst += interval, src += interval)
			out[m] = ~barrett64(crc64_interval512_t(dst, src, 0, interval, k, kf0, kf1,
								kf2, kf3));
	} else {
		for (; m + 4 <= n; m += 4) {
			__m512i t = _mm512_castsi128_si512(T(0));

			t = _mm512_inserti32x4(t, T(1), 1);
			t = _mm512_inserti32x4(t, T(2), 2);
			t = _mm512_inserti32x4(t, T(3), 3);
			barrett4_512(t, out + m);
		}
		for (; m < n; m++)
			out[m] = ~step8_of_t(T(0));
	}
#undef T
	_mm256_zeroupper();
}

VPCLMUL512 static INLINE void crc64_multi_vpclmul512_core(uint8_t *dst, const uint8_t *src,
							  size_t interval, size_t n,
							  uint64_t *out)
{
	/* 512-byte intervals: interval a constant, no inner loop. */
	if (interval == 512)
		crc64_multi_vpclmul512_loop(dst, src, 512, n, out);
	else
		crc64_multi_vpclmul512_loop(dst, src, interval, n, out);
}

VPCLMUL512 void pi_crc64_copy_multi_vpclmul512(void *dst, const void *src, size_t interval,
					       size_t n, uint64_t *out)
{
	if (!interval || interval % 256)
		crc64_multi_each(pi_crc64_vpclmul512, pi_crc64_copy_vpclmul512, dst, src,
				 interval, n, out);
	else
		crc64_multi_vpclmul512_core(pi_copy_dst(dst), src, interval, n, out);
}

VPCLMUL512 void pi_crc64_multi_vpclmul512(const void *src, size_t interval, size_t n,
					  uint64_t *out)
{
	if (!interval || interval % 256)
		crc64_multi_each(pi_crc64_vpclmul512, pi_crc64_copy_vpclmul512, NULL, src,
				 interval, n, out);
	else
		crc64_multi_vpclmul512_core(NULL, src, interval, n, out);
}

#endif /* PI_X86 */
