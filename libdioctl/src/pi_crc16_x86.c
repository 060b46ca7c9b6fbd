// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * CRC-16/T10-DIF on x86-64: the copying paths folding on 512- or 256-bit
 * VPCLMULQDQ registers, and their several-interval twins; pi_crc16.c
 * chooses them by the CPU's feature bits.  Empty elsewhere.
 */
#include "pi_internal.h"

#ifdef PI_X86
#include <immintrin.h>
#include <string.h>

#include "pi_crc16.h"

/*
 * Folding, MSB first.  A 16-byte block, its bytes reversed (PSHUFB), is a
 * 128-bit value V = H*x^64 + L whose bit i is the coefficient of x^i
 * (the first byte's top bit the highest).  Followed by D more bits of
 * message it contributes V*x^D == H*(x^(D+64) mod P) + L*(x^D mod P):
 * two carry-less products of a 64-bit half by a constant of degree < 16,
 * at most 79 bits, XORed into the block D bits later.  No bit offset here
 * (nothing is reflected), and no Barrett at the end: folding keeps the
 * message's residue mod P, so once one block X is left, the CRC of the
 * bytes of X followed by the unfolded tail is the CRC of the message
 * (initial value 0, no final XOR).  X is first folded to at most 80 bits
 * (H * (x^64 mod P) + L), whose 10 bytes the tables finish.  That finish
 * is a chain of dependent loads, a fixed cost per call that weighs at
 * 512 bytes: the several-interval paths (pi_crc16_copy_multi_*(), for
 * dio_pi_generate_copy()) end with a Barrett step in registers instead.
 *
 * k16[d / 128] = { x^d mod P, x^(d+64) mod P }, computed at load time
 * from P for every d = 0..2048 in steps of 128; used: d = 128 (the next
 * block), 256..512 (lanes onto the last), 1024 (lanes 128 bytes apart) and
 * 2048 (256 bytes apart); k16[0].hi = x^64 mod P for the last step.
 */
static uint64_t k16[17][2] __attribute__((aligned(16)));
/*
 * The several-interval paths end differently (pi_crc16_copy_multi_*()):
 * each lane X, with D bits of its interval after it, goes straight to
 * X * x^(D+16) mod P's 80-bit representative, H * (x^(D+80) mod P) +
 * L * (x^(D+16) mod P), kfin16[e] = { x^(D+16) mod P, x^(D+80) mod P } for
 * D = (15 - e) * 128 (the last lane too: D = 0).  Their XOR T (< 80 bits)
 * is the message times x^16, whose residue mod P is the CRC: one Barrett
 * step (crc16_barrett()) with k16b = { mu', P' }, floor(x^80 / P) = x^64 +
 * mu'.  Entries 4j..4j+3 are the lanes of the j-th of four 512-bit
 * registers, 8+2j and 9+2j of the j-th of four 256-bit ones.
 */
static uint64_t kfin16[16][2] __attribute__((aligned(64)));
static uint64_t k16b[2] __attribute__((aligned(16)));

/* x^n mod P in normal form, P = x^16 + 0x8BB7. */
static uint64_t xpow_mod16(unsigned int n)
{
	uint32_t r = 1;

	while (n--) {
		r <<= 1;
		if (r & 0x10000)
			r ^= 0x10000 | CRC16_POLY;
	}
	return r;
}

/* mu' = floor(x^80 / P) - x^64, by long division. */
static uint64_t crc16_mu(void)
{
	uint64_t q = 0;
	uint32_t r = 0;

	for (int b = 80; b >= 0; b--) {
		r = r << 1 | (b == 80);
		if (r & 0x10000) {
			r ^= 0x10000 | CRC16_POLY;
			if (b < 64)
				q |= 1ULL << b;
		}
	}
	return q;
}

/* The constants, computed from P: pi_crc16.c's constructor calls it first. */
void pi_crc16_x86_init(void)
{
	for (unsigned int d = 0; d <= 2048; d += 128) {
		k16[d / 128][0] = xpow_mod16(d);
		k16[d / 128][1] = xpow_mod16(d + 64);
	}
	for (unsigned int e = 0; e < 16; e++) {
		kfin16[e][0] = xpow_mod16((15 - e) * 128 + 16);
		kfin16[e][1] = xpow_mod16((15 - e) * 128 + 80);
	}
	k16b[0] = crc16_mu();
	k16b[1] = CRC16_POLY;
}

#define VPCLMUL256 __attribute__((target("vpclmulqdq,pclmul,avx2,sse4.1")))
#define VPCLMUL512 __attribute__((target("vpclmulqdq,pclmul,avx512f,avx512bw,avx2,sse4.1")))
#define INLINE inline __attribute__((always_inline))

VPCLMUL256 static INLINE __m128i k16load(unsigned int d)
{
	return _mm_load_si128((const __m128i *)k16[d / 128]);
}

/* Reverses the bytes of each 128-bit lane. */
#define BSWAP128_BYTES	15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0

VPCLMUL256 static INLINE __m128i fold128(__m128i x, __m128i k, __m128i data)
{
	return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
					   _mm_clmulepi64_si128(x, k, 0x11)), data);
}

/* The CRC of (the last block x, reversed, then src[i..len)), from crc 0. */
VPCLMUL256 static INLINE uint16_t crc16_finish(__m128i x, uint8_t *dst, const uint8_t *src,
					       size_t i, size_t len)
{
	const __m128i rev = _mm_setr_epi8(BSWAP128_BYTES);
	uint8_t b[16];
	uint16_t crc;

	for (; len - i >= 16; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(src + i));

		_mm_storeu_si128((__m128i *)(dst + i), v);
		x = fold128(x, k16load(128), _mm_shuffle_epi8(v, rev));
	}
	/* H * (x^64 mod P) + L: at most 80 bits, the last 10 bytes. */
	x = _mm_xor_si128(_mm_clmulepi64_si128(x, k16load(0), 0x11),
			  _mm_and_si128(x, _mm_set_epi64x(0, -1)));
	_mm_storeu_si128((__m128i *)b, _mm_shuffle_epi8(x, rev));
	crc = pi_crc16_slice8(0, b + 6, 10);
	memcpy(dst + i, src + i, len - i);
	return pi_crc16_slice8(crc, src + i, len - i);
}

/*
 * T mod P for T < x^80 (see kfin16): q = floor(T / P) =
 * floor((T >> 16) * (x^64 + mu') / x^64), exact for polynomials, and
 * T mod P = low16(T) ^ low16(q * P').
 */
VPCLMUL256 static INLINE uint16_t crc16_barrett(__m128i t)
{
	const __m128i c = _mm_load_si128((const __m128i *)k16b);
	__m128i a = _mm_srli_si128(t, 2), q;

	q = _mm_clmulepi64_si128(a, c, 0x00);
	q = _mm_xor_si128(_mm_srli_si128(q, 8), a);
	q = _mm_clmulepi64_si128(q, c, 0x10);
	return _mm_cvtsi128_si32(_mm_xor_si128(q, t));
}

VPCLMUL256 static INLINE __m256i fold256(__m256i x, __m256i k, __m256i data)
{
	return _mm256_xor_si256(_mm256_xor_si256(_mm256_clmulepi64_epi128(x, k, 0x00),
						 _mm256_clmulepi64_epi128(x, k, 0x11)),
				data);
}

VPCLMUL256 static INLINE __m256i k16load256(unsigned int d)
{
	return _mm256_broadcastsi128_si256(k16load(d));
}

/*
 * Loads 32 bytes, stores them at dst (unless dst is NULL: the several-
 * interval functions without the copy), returns them lane-reversed.
 */
VPCLMUL256 static INLINE __m256i ldc256(uint8_t *dst, const uint8_t *src, size_t i)
{
	const __m256i rev = _mm256_setr_epi8(BSWAP128_BYTES, BSWAP128_BYTES);
	__m256i v = _mm256_loadu_si256((const __m256i *)(src + i));

	if (dst)
		_mm256_storeu_si256((__m256i *)(dst + i), v);
	return _mm256_shuffle_epi8(v, rev);
}

/*
 * 256-bit registers: four of them, 128 bytes a round (D = 1024), then
 * 4 -> 1 register and 2 -> 1 lane.
 */
VPCLMUL256 uint16_t pi_crc16_copy_vpclmul256(uint16_t crc, void *dstv, const void *srcv,
					     size_t len)
{
	uint8_t *dst = pi_copy_dst(dstv);
	const uint8_t *src = srcv;
	__m256i y0, y1, y2, y3, k;
	__m128i x;
	size_t i;

	if (len < 128)
		return pi_crc16_copy_isal(crc, dst, src, len);
	/* The initial CRC enters as the XOR of the first two bytes. */
	y0 = _mm256_xor_si256(ldc256(dst, src, 0),
			      _mm256_zextsi128_si256(_mm_slli_si128(_mm_cvtsi32_si128(crc), 14)));
	y1 = ldc256(dst, src, 32);
	y2 = ldc256(dst, src, 64);
	y3 = ldc256(dst, src, 96);
	k = k16load256(1024);
	for (i = 128; len - i >= 128; i += 128) {
		y0 = fold256(y0, k, ldc256(dst, src, i));
		y1 = fold256(y1, k, ldc256(dst, src, i + 32));
		y2 = fold256(y2, k, ldc256(dst, src, i + 64));
		y3 = fold256(y3, k, ldc256(dst, src, i + 96));
	}
	k = k16load256(512);
	y2 = fold256(y0, k, y2);
	y3 = fold256(y1, k, y3);
	y3 = fold256(y2, k16load256(256), y3);
	x = fold128(_mm256_castsi256_si128(y3), k16load(128), _mm256_extracti128_si256(y3, 1));
	_mm256_zeroupper();	/* see pi_crc64_x86.c */
	return crc16_finish(x, dst, src, i, len);
}

VPCLMUL512 static INLINE __m512i fold512(__m512i x, __m512i k, __m512i data)
{
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
					 _mm512_clmulepi64_epi128(x, k, 0x11),
					 data, 0x96);
}

VPCLMUL512 static INLINE __m512i k16load512(unsigned int d)
{
	return _mm512_broadcast_i32x4(k16load(d));
}

VPCLMUL512 static INLINE __m512i ldc512(uint8_t *dst, const uint8_t *src, size_t i)
{
	const __m512i rev = _mm512_broadcast_i32x4(_mm_setr_epi8(BSWAP128_BYTES));
	__m512i v = _mm512_loadu_si512((const void *)(src + i));

	if (dst)
		_mm512_storeu_si512((void *)(dst + i), v);
	return _mm512_shuffle_epi8(v, rev);
}

/*
 * AVX-512: four registers, 256 bytes a round (D = 2048), then 4 -> 1
 * register, 64-byte rounds, 4 -> 1 lane.
 */
VPCLMUL512 uint16_t pi_crc16_copy_vpclmul512(uint16_t crc, void *dstv, const void *srcv,
					     size_t len)
{
	uint8_t *dst = pi_copy_dst(dstv);
	const uint8_t *src = srcv;
	__m512i z0, z1, z2, z3, k, kl;
	__m256i y;
	__m128i x;
	size_t i = 64;

	if (len < 64)
		return pi_crc16_copy_isal(crc, dst, src, len);
	z0 = _mm512_xor_si512(ldc512(dst, src, 0),
			      _mm512_zextsi128_si512(_mm_slli_si128(_mm_cvtsi32_si128(crc), 14)));
	if (len >= 256) {
		z1 = ldc512(dst, src, 64);
		z2 = ldc512(dst, src, 128);
		z3 = ldc512(dst, src, 192);
		k = k16load512(2048);
		for (i = 256; len - i >= 256; i += 256) {
			z0 = fold512(z0, k, ldc512(dst, src, i));
			z1 = fold512(z1, k, ldc512(dst, src, i + 64));
			z2 = fold512(z2, k, ldc512(dst, src, i + 128));
			z3 = fold512(z3, k, ldc512(dst, src, i + 192));
		}
		k = k16load512(1024);
		z2 = fold512(z0, k, z2);
		z3 = fold512(z1, k, z3);
		z0 = fold512(z2, k16load512(512), z3);
	}
	k = k16load512(512);
	for (; len - i >= 64; i += 64)
		z0 = fold512(z0, k, ldc512(dst, src, i));
	/* Lanes 0..2 are 3..1 blocks before lane 3. */
	kl = _mm512_inserti32x4(_mm512_castsi128_si512(k16load(384)), k16load(256), 1);
	kl = _mm512_inserti32x4(kl, k16load(128), 2);
	kl = _mm512_inserti32x4(kl, _mm_setzero_si128(), 3);
	z0 = fold512(z0, kl, _mm512_maskz_mov_epi64(0xc0, z0));
	y = _mm256_xor_si256(_mm512_castsi512_si256(z0), _mm512_extracti64x4_epi64(z0, 1));
	x = _mm_xor_si128(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));
	_mm256_zeroupper();
	return crc16_finish(x, dst, src, i, len);
}

/* Each lane of x folded by its own constant in k, no data added. */
VPCLMUL256 static INLINE __m256i fold256_lanes(__m256i x, __m256i k)
{
	return _mm256_xor_si256(_mm256_clmulepi64_epi128(x, k, 0x00),
				_mm256_clmulepi64_epi128(x, k, 0x11));
}

/*
 * Several intervals, four 256-bit registers, 128 bytes a round; copied
 * unless dst is NULL.
 */
VPCLMUL256 static INLINE void crc16_multi_vpclmul256_core(uint8_t *dst, const uint8_t *src,
							  size_t interval, size_t n,
							  uint16_t *out)
{
	const __m256i k = k16load256(1024);
	const __m256i kf0 = _mm256_load_si256((const __m256i *)kfin16[8]);
	const __m256i kf1 = _mm256_load_si256((const __m256i *)kfin16[10]);
	const __m256i kf2 = _mm256_load_si256((const __m256i *)kfin16[12]);
	const __m256i kf3 = _mm256_load_si256((const __m256i *)kfin16[14]);

	for (size_t m = 0, o = 0; m < n; m++, o += interval) {
		__m256i y0, y1, y2, y3;
		__m128i x;

		y0 = ldc256(dst, src, o);
		y1 = ldc256(dst, src, o + 32);
		y2 = ldc256(dst, src, o + 64);
		y3 = ldc256(dst, src, o + 96);
		for (size_t i = o + 128; i < o + interval; i += 128) {
			y0 = fold256(y0, k, ldc256(dst, src, i));
			y1 = fold256(y1, k, ldc256(dst, src, i + 32));
			y2 = fold256(y2, k, ldc256(dst, src, i + 64));
			y3 = fold256(y3, k, ldc256(dst, src, i + 96));
		}
		y0 = _mm256_xor_si256(fold256_lanes(y0, kf0), fold256_lanes(y1, kf1));
		y2 = _mm256_xor_si256(fold256_lanes(y2, kf2), fold256_lanes(y3, kf3));
		y0 = _mm256_xor_si256(y0, y2);
		x = _mm_xor_si128(_mm256_castsi256_si128(y0), _mm256_extracti128_si256(y0, 1));
		out[m] = crc16_barrett(x);
	}
	_mm256_zeroupper();
}

VPCLMUL256 void pi_crc16_copy_multi_vpclmul256(void *dst, const void *src, size_t interval,
					       size_t n, uint16_t *out)
{
	if (!interval || interval % 128)
		crc16_multi_each(pi_crc16_copy_vpclmul256, dst, src, interval, n, out);
	else
		crc16_multi_vpclmul256_core(pi_copy_dst(dst), src, interval, n, out);
}

VPCLMUL256 void pi_crc16_multi_vpclmul256(const void *src, size_t interval, size_t n,
					  uint16_t *out)
{
	if (!interval || interval % 128)
		crc16_multi_each(pi_crc16_copy_vpclmul256, NULL, src, interval, n, out);
	else
		crc16_multi_vpclmul256_core(NULL, src, interval, n, out);
}

/*
 * T of one interval of the several-interval AVX-512 path, at src + o
 * (copied to dst + o unless dst is NULL): sixteen lanes, each taken to
 * its share of T by its own constant (kf0..kf3), then their XOR.  Inlined
 * with interval a constant for 512-byte intervals: straight-line code, no
 * inner loop.
 */
VPCLMUL512 static INLINE __m128i crc16_interval512_t(uint8_t *dst, const uint8_t *src,
						    size_t o, size_t interval, __m512i k,
						    __m512i kf0, __m512i kf1, __m512i kf2,
						    __m512i kf3)
{
	__m512i z0, z1, z2, z3, a, b;
	__m256i y;

	z0 = ldc512(dst, src, o);
	z1 = ldc512(dst, src, o + 64);
	z2 = ldc512(dst, src, o + 128);
	z3 = ldc512(dst, src, o + 192);
	for (size_t i = o + 256; i < o + interval; i += 256) {
		z0 = fold512(z0, k, ldc512(dst, src, i));
		z1 = fold512(z1, k, ldc512(dst, src, i + 64));
		z2 = fold512(z2, k, ldc512(dst, src, i + 128));
		z3 = fold512(z3, k, ldc512(dst, src, i + 192));
	}
	/* Sixteen lanes, sixteen constants, three-way XORs. */
	a = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z0, kf0, 0x00),
				      _mm512_clmulepi64_epi128(z0, kf0, 0x11),
				      _mm512_clmulepi64_epi128(z1, kf1, 0x00), 0x96);
	b = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z1, kf1, 0x11),
				      _mm512_clmulepi64_epi128(z2, kf2, 0x00),
				      _mm512_clmulepi64_epi128(z2, kf2, 0x11), 0x96);
	a = _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(z3, kf3, 0x00),
				      _mm512_clmulepi64_epi128(z3, kf3, 0x11), a, 0x96);
	a = _mm512_xor_si512(a, b);
	y = _mm256_xor_si256(_mm512_castsi512_si256(a), _mm512_extracti64x4_epi64(a, 1));
	return _mm_xor_si128(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));
}

/*
 * crc16_barrett() of four intervals' T at once, one in each lane of t,
 * into out[0..3]: two 512-bit products for the four instead of two
 * 128-bit ones each (the products are what these loops wait for, as in
 * pi_crc64_x86.c's barrett4_512()).
 */
VPCLMUL512 static INLINE void crc16_barrett4_512(__m512i t, uint16_t *out)
{
	const __m512i c = _mm512_broadcast_i32x4(_mm_load_si128((const __m128i *)k16b));
	const __m512i even = _mm512_set_epi64(0, 0, 0, 0, 6, 4, 2, 0);
	__m512i a = _mm512_bsrli_epi128(t, 2), q;

	q = _mm512_clmulepi64_epi128(a, c, 0x00);
	q = _mm512_xor_si512(_mm512_bsrli_epi128(q, 8), a);
	q = _mm512_clmulepi64_epi128(q, c, 0x10);
	q = _mm512_permutexvar_epi64(even, _mm512_xor_si512(q, t));
	_mm_storel_epi64((__m128i *)out, _mm512_cvtepi64_epi16(q));
}

/*
 * Several intervals, four 512-bit registers, 256 bytes a round; without
 * the copy, four intervals' Barrett steps together.
 */
VPCLMUL512 static INLINE void crc16_multi_vpclmul512_loop(uint8_t *dst, const uint8_t *src,
							  size_t interval, size_t n,
							  uint16_t *out)
{
	const __m512i k = k16load512(2048);
	const __m512i kf0 = _mm512_load_si512((const void *)kfin16[0]);
	const __m512i kf1 = _mm512_load_si512((const void *)kfin16[4]);
	const __m512i kf2 = _mm512_load_si512((const void *)kfin16[8]);
	const __m512i kf3 = _mm512_load_si512((const void *)kfin16[12]);
	size_t m = 0;

#define T(j)	crc16_interval512_t(dst, src, (m + (j)) * interval, interval, k, kf0, kf1, kf2, kf3)
	/* Copying: Barrett each, as pi_crc64_x86.c's loop and for the same reason. */
	if (dst) {
		for (; m < n; m++, dst += interval, src += interval)
			out[m] = crc16_barrett(crc16_interval512_t(dst, src, 0, interval, k, kf0,
								   kf1, kf2, kf3));
		_mm256_zeroupper();
		return;
	}
	for (; m + 4 <= n; m += 4) {
		__m512i t = _mm512_castsi128_si512(T(0));

		t = _mm512_inserti32x4(t, T(1), 1);
		t = _mm512_inserti32x4(t, T(2), 2);
		t = _mm512_inserti32x4(t, T(3), 3);
		crc16_barrett4_512(t, out + m);
	}
	for (; m < n; m++)
		out[m] = crc16_barrett(T(0));
#undef T
	_mm256_zeroupper();
}

VPCLMUL512 static INLINE void crc16_multi_vpclmul512_core(uint8_t *dst, const uint8_t *src,
							  size_t interval, size_t n,
							  uint16_t *out)
{
	/* 512-byte intervals: interval a constant, no inner loop. */
	if (interval == 512)
		crc16_multi_vpclmul512_loop(dst, src, 512, n, out);
	else
		crc16_multi_vpclmul512_loop(dst, src, interval, n, out);
}

VPCLMUL512 void pi_crc16_copy_multi_vpclmul512(void *dst, const void *src, size_t interval,
					       size_t n, uint16_t *out)
{
	if (!interval || interval % 256)
		crc16_multi_each(pi_crc16_copy_vpclmul512, dst, src, interval, n, out);
	else
		crc16_multi_vpclmul512_core(pi_copy_dst(dst), src, interval, n, out);
}

VPCLMUL512 void pi_crc16_multi_vpclmul512(const void *src, size_t interval, size_t n,
					  uint16_t *out)
{
	if (!interval || interval % 256)
		crc16_multi_each(pi_crc16_copy_vpclmul512, NULL, src, interval, n, out);
	else
		crc16_multi_vpclmul512_core(NULL, src, interval, n, out);
}
#endif /* PI_X86 */
