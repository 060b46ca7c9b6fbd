// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The Internet checksum (RFC 1071) of the kernel's T10 "IP" profile.
 *
 * Byte order.  The kernel's t10_pi_ip_fn() is ip_compute_csum(data, len):
 * the complement of the one's complement sum of the data's 16-bit words
 * loaded in host order (a __sum16), and t10_pi_generate() stores that value
 * raw, as it sits in a CPU register, into the tuple's guard bytes.  On
 * x86 (little-endian) the words are little-endian and the checksum is
 * written little-endian.  Because the one's complement sum commutes with
 * swapping the two bytes of every word (RFC 1071, section 2(B)), this is
 * byte for byte what a big-endian machine writes: the two guard bytes, read
 * as a big-endian 16-bit number, are the RFC 1071 checksum computed over
 * big-endian words.  dio_pi_ip_checksum() returns that number, so the
 * generator stores it big-endian like the CRC guards, on any host.
 *
 * The sum is accumulated in host order (the fast way: plain loads), in
 * 32-bit pieces: 2^16 == 1 (mod 0xffff), so adding 32-bit chunks and
 * folding gives the 16-bit word sum.  A correct one's complement sum with
 * end-around carry is 0 only for all-zero data, like the kernel's, which
 * then stores 0xffff.
 */
#include <endian.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "dioctl_pi.h"
#include "pi_internal.h"

/* Fold at most this much into one accumulator set: no overflow. */
#define IPSUM_CHUNK	(1UL << 30)

#define INLINE	inline __attribute__((always_inline))

static uint32_t (*ipsum_impl)(const void *buf, size_t len) = pi_ipsum_portable;
static uint32_t (*ipsum_copy_impl)(void *dst, const void *src, size_t len) = pi_ipsum_copy_portable;
static const char *ipsum_impl_name = "portable";

#ifdef PI_X86
#define AVX2	__attribute__((target("avx2")))
#define AVX512	__attribute__((target("avx512f,avx512bw,avx2")))

static int have_avx2, have_avx512;

__attribute__((constructor))
static void ipsum_init(void)
{
	/* Constructors may run before libgcc's: initialise the CPU model. */
	__builtin_cpu_init();
	have_avx2 = __builtin_cpu_supports("avx2");
	/* Byte-masked loads and stores for the tail: AVX512BW. */
	have_avx512 = have_avx2 && __builtin_cpu_supports("avx512f") &&
		      __builtin_cpu_supports("avx512bw");
	if (have_avx512) {
		ipsum_impl = pi_ipsum_avx512;
		ipsum_copy_impl = pi_ipsum_copy_avx512;
		ipsum_impl_name = "AVX-512";
	} else if (have_avx2) {
		ipsum_impl = pi_ipsum_avx2;
		ipsum_copy_impl = pi_ipsum_copy_avx2;
		ipsum_impl_name = "AVX2";
	}
}

int pi_ipsum_have_avx2(void)
{
	return have_avx2;
}

int pi_ipsum_have_avx512(void)
{
	return have_avx512;
}
#endif /* PI_X86 */

const char *pi_ipsum_dispatch_name(void)
{
	return ipsum_impl_name;
}

/*
 * To 16 bits with end-around carries: the high half of x + (x rotated by
 * half its width) is the one's complement sum of its two halves.  The
 * result is congruent to s modulo 0xffff, and 0 only if s is.
 */
static inline uint32_t fold64(uint64_t s)
{
	uint32_t t = (s + (s >> 32 | s << 32)) >> 32;

	return (t + (t >> 16 | t << 16)) >> 16;
}

/* Fewer than 8 bytes, starting at an even offset. */
static uint64_t ipsum_tail(const uint8_t *p, size_t len, uint64_t s)
{
	uint32_t w32;
	uint16_t w16 = 0;

	if (len >= 4) {
		memcpy(&w32, p, 4);
		s += w32;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		memcpy(&w16, p, 2);
		s += w16;
		p += 2;
		len -= 2;
	}
	if (len) {
		/* The odd byte is padded with a zero byte after it. */
		w16 = 0;
		memcpy(&w16, p, 1);
		s += w16;
	}
	return s;
}

static uint64_t ipsum_chunk_portable(const uint8_t *p, size_t len)
{
	uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, v, w;

	for (; len >= 16; p += 16, len -= 16) {
		memcpy(&v, p, 8);
		memcpy(&w, p + 8, 8);
		s0 += (uint32_t)v;
		s1 += v >> 32;
		s2 += (uint32_t)w;
		s3 += w >> 32;
	}
	if (len >= 8) {
		memcpy(&v, p, 8);
		s0 += (uint32_t)v;
		s1 += v >> 32;
		p += 8;
		len -= 8;
	}
	return ipsum_tail(p, len, s0 + s1 + s2 + s3);
}

uint32_t pi_ipsum_portable(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t sum = 0;

	for (; len > IPSUM_CHUNK; p += IPSUM_CHUNK, len -= IPSUM_CHUNK)
		sum = pi_ipsum_add(sum, fold64(ipsum_chunk_portable(p, IPSUM_CHUNK)));
	return pi_ipsum_add(sum, fold64(ipsum_chunk_portable(p, len)));
}

uint32_t pi_ipsum_copy_portable(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
	return pi_ipsum_portable(src, len);
}

#ifdef PI_X86
/* Fewer than 32 bytes, without a call to memcpy(): overlapping pieces. */
static INLINE void copy_small(uint8_t *d, const uint8_t *s, size_t n)
{
	uint64_t a, b;
	uint32_t x, y;

	if (n >= 16) {
		memcpy(&a, s, 8);
		memcpy(&b, s + 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + 8, &b, 8);
		memcpy(&a, s + n - 16, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d + n - 16, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 8) {
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4) {
		memcpy(&x, s, 4);
		memcpy(&y, s + n - 4, 4);
		memcpy(d, &x, 4);
		memcpy(d + n - 4, &y, 4);
	} else if (n) {
		d[0] = s[0];
		d[n / 2] = s[n / 2];
		d[n - 1] = s[n - 1];
	}
}

/* The scalar end of the AVX2 path, out of its way: fewer than 32 bytes. */
__attribute__((noinline))
static uint64_t ipsum_copy_tail(uint8_t *dst, const uint8_t *p, size_t len)
{
	if (dst)
		copy_small(dst, p, len);
	return ipsum_chunk_portable(p, len);
}

/*
 * The vector paths add whole 64-bit lanes, wrapping, into one set of
 * accumulators (a) and their high 32-bit halves into another (h).  Per
 * lane, a == sum(lo) + 2^32 sum(hi) mod 2^64 and h == sum(hi), so
 * a - (h << 32) is sum(lo) exactly (below 2^64 for fewer than 2^32 adds)
 * and a - (h << 32) + h the lane's sum of 32-bit halves: three operations
 * a register instead of mask, shift and two additions.  2^32 == 1 modulo
 * 0xffff, so folding the sum of 32-bit pieces gives the 16-bit word sum.
 * After 1 GiB (IPSUM_CHUNK) each lane's sum is below 2^58 and the sum of
 * the lanes below 2^61: nothing wraps.  The lanes are summed in registers:
 * the fixed cost matters at 512-byte intervals.
 *
 * With @dst (the _copy_ functions, for dio_pi_generate_copy()), each
 * register loaded is also stored there, with the same width: the copy and
 * the sum in one pass.  The cores are always inlined, so that each caller
 * gets its own loop, the plain one without the test of @dst.  They end
 * with VZEROUPPER themselves: GCC 12 does not always add it for a function
 * whose target attribute enables AVX (see pi_crc64_x86.c).
 */
/* Four 32-byte registers a round, then one at a time. */
AVX2 static INLINE uint64_t ipsum_avx2_core(uint8_t *dst, const uint8_t *p, size_t len)
{
	__m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
	__m256i h0 = a0, h1 = a0, h2 = a0, h3 = a0, v0, v1, v2, v3;
	__m128i x;
	uint64_t s;

	for (; len >= 128; p += 128, len -= 128) {
		v0 = _mm256_loadu_si256((const __m256i *)p);
		v1 = _mm256_loadu_si256((const __m256i *)(p + 32));
		v2 = _mm256_loadu_si256((const __m256i *)(p + 64));
		v3 = _mm256_loadu_si256((const __m256i *)(p + 96));
		if (dst) {
			_mm256_storeu_si256((__m256i *)dst, v0);
			_mm256_storeu_si256((__m256i *)(dst + 32), v1);
			_mm256_storeu_si256((__m256i *)(dst + 64), v2);
			_mm256_storeu_si256((__m256i *)(dst + 96), v3);
			dst += 128;
		}
		a0 = _mm256_add_epi64(a0, v0);
		h0 = _mm256_add_epi64(h0, _mm256_srli_epi64(v0, 32));
		a1 = _mm256_add_epi64(a1, v1);
		h1 = _mm256_add_epi64(h1, _mm256_srli_epi64(v1, 32));
		a2 = _mm256_add_epi64(a2, v2);
		h2 = _mm256_add_epi64(h2, _mm256_srli_epi64(v2, 32));
		a3 = _mm256_add_epi64(a3, v3);
		h3 = _mm256_add_epi64(h3, _mm256_srli_epi64(v3, 32));
	}
	a0 = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
	h0 = _mm256_add_epi64(_mm256_add_epi64(h0, h1), _mm256_add_epi64(h2, h3));
	for (; len >= 32; p += 32, len -= 32) {
		v0 = _mm256_loadu_si256((const __m256i *)p);
		if (dst) {
			_mm256_storeu_si256((__m256i *)dst, v0);
			dst += 32;
		}
		a0 = _mm256_add_epi64(a0, v0);
		h0 = _mm256_add_epi64(h0, _mm256_srli_epi64(v0, 32));
	}
	a0 = _mm256_add_epi64(_mm256_sub_epi64(a0, _mm256_slli_epi64(h0, 32)), h0);
	x = _mm_add_epi64(_mm256_castsi256_si128(a0), _mm256_extracti128_si256(a0, 1));
	x = _mm_add_epi64(x, _mm_unpackhi_epi64(x, x));
	s = (uint64_t)_mm_cvtsi128_si64(x);
	_mm256_zeroupper();
	if (len)
		s += ipsum_copy_tail(dst, p, len);
	return s;
}

/* Four 64-byte registers a round; the tail in one byte-masked register. */
AVX512 static INLINE uint64_t ipsum_avx512_core(uint8_t *dst, const uint8_t *p, size_t len)
{
	__m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
	__m512i h0 = a0, h1 = a0, h2 = a0, h3 = a0;
	__m512i v0, v1, v2, v3;
	uint64_t s;

	for (; len >= 256; p += 256, len -= 256) {
		v0 = _mm512_loadu_si512((const void *)p);
		v1 = _mm512_loadu_si512((const void *)(p + 64));
		v2 = _mm512_loadu_si512((const void *)(p + 128));
		v3 = _mm512_loadu_si512((const void *)(p + 192));
		if (dst) {
			_mm512_storeu_si512((void *)dst, v0);
			_mm512_storeu_si512((void *)(dst + 64), v1);
			_mm512_storeu_si512((void *)(dst + 128), v2);
			_mm512_storeu_si512((void *)(dst + 192), v3);
			dst += 256;
		}
		a0 = _mm512_add_epi64(a0, v0);
		h0 = _mm512_add_epi64(h0, _mm512_srli_epi64(v0, 32));
		a1 = _mm512_add_epi64(a1, v1);
		h1 = _mm512_add_epi64(h1, _mm512_srli_epi64(v1, 32));
		a2 = _mm512_add_epi64(a2, v2);
		h2 = _mm512_add_epi64(h2, _mm512_srli_epi64(v2, 32));
		a3 = _mm512_add_epi64(a3, v3);
		h3 = _mm512_add_epi64(h3, _mm512_srli_epi64(v3, 32));
	}
	a0 = _mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3));
	h0 = _mm512_add_epi64(_mm512_add_epi64(h0, h1), _mm512_add_epi64(h2, h3));
	for (; len >= 64; p += 64, len -= 64) {
		v0 = _mm512_loadu_si512((const void *)p);
		if (dst) {
			_mm512_storeu_si512((void *)dst, v0);
			dst += 64;
		}
		a0 = _mm512_add_epi64(a0, v0);
		h0 = _mm512_add_epi64(h0, _mm512_srli_epi64(v0, 32));
	}
	if (len) {
		/* Masked-off bytes read as zero: the odd byte's pad. */
		__mmask64 m = _cvtu64_mask64(((uint64_t)1 << len) - 1);

		v1 = _mm512_maskz_loadu_epi8(m, p);
		if (dst)
			_mm512_mask_storeu_epi8(dst, m, v1);
		a0 = _mm512_add_epi64(a0, v1);
		h0 = _mm512_add_epi64(h0, _mm512_srli_epi64(v1, 32));
	}
	a0 = _mm512_add_epi64(_mm512_sub_epi64(a0, _mm512_slli_epi64(h0, 32)), h0);
	s = (uint64_t)_mm512_reduce_add_epi64(a0);
	_mm256_zeroupper();
	return s;
}

/*
 * Past IPSUM_CHUNK bytes the callers below go piece by piece through
 * these, out of line, so that the usual case has no loop around the core
 * (and no stack frame).  Every piece starts at an even offset: their
 * folded sums add.
 */
__attribute__((noinline))
static uint32_t ipsum_pieces(uint32_t (*fn)(const void *, size_t), const uint8_t *p,
			     size_t len)
{
	uint32_t sum = 0;

	for (; len > IPSUM_CHUNK; p += IPSUM_CHUNK, len -= IPSUM_CHUNK)
		sum = pi_ipsum_add(sum, fn(p, IPSUM_CHUNK));
	return pi_ipsum_add(sum, fn(p, len));
}

__attribute__((noinline))
static uint32_t ipsum_copy_pieces(uint32_t (*fn)(void *, const void *, size_t), uint8_t *d,
				  const uint8_t *p, size_t len)
{
	uint32_t sum = 0;

	for (; len > IPSUM_CHUNK; p += IPSUM_CHUNK, d += IPSUM_CHUNK, len -= IPSUM_CHUNK)
		sum = pi_ipsum_add(sum, fn(d, p, IPSUM_CHUNK));
	return pi_ipsum_add(sum, fn(d, p, len));
}

AVX2 uint32_t pi_ipsum_avx2(const void *buf, size_t len)
{
	if (len > IPSUM_CHUNK)
		return ipsum_pieces(pi_ipsum_avx2, buf, len);
	return fold64(ipsum_avx2_core(NULL, buf, len));
}

AVX2 uint32_t pi_ipsum_copy_avx2(void *dst, const void *src, size_t len)
{
	if (!dst)	/* never: lets the compiler drop the core's tests of dst */
		__builtin_unreachable();
	if (len > IPSUM_CHUNK)
		return ipsum_copy_pieces(pi_ipsum_copy_avx2, dst, src, len);
	return fold64(ipsum_avx2_core(dst, src, len));
}

AVX512 uint32_t pi_ipsum_avx512(const void *buf, size_t len)
{
	if (len > IPSUM_CHUNK)
		return ipsum_pieces(pi_ipsum_avx512, buf, len);
	return fold64(ipsum_avx512_core(NULL, buf, len));
}

AVX512 uint32_t pi_ipsum_copy_avx512(void *dst, const void *src, size_t len)
{
	if (!dst)
		__builtin_unreachable();
	if (len > IPSUM_CHUNK)
		return ipsum_copy_pieces(pi_ipsum_copy_avx512, dst, src, len);
	return fold64(ipsum_avx512_core(dst, src, len));
}

#endif /* PI_X86 */

const struct pi_ipsum_path pi_ipsum_paths[] = {
#ifdef PI_X86
	{ "AVX-512", "avx512", pi_ipsum_avx512, pi_ipsum_copy_avx512, pi_ipsum_have_avx512 },
	{ "AVX2", "avx2", pi_ipsum_avx2, pi_ipsum_copy_avx2, pi_ipsum_have_avx2 },
#endif
	{ "portable", "portable", pi_ipsum_portable, pi_ipsum_copy_portable, NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

uint32_t pi_ipsum_copy(void *dst, const void *src, size_t len)
{
	return ipsum_copy_impl(dst, src, len);
}

uint32_t pi_ipsum(const void *buf, size_t len)
{
	return ipsum_impl(buf, len);
}

uint16_t pi_ipsum_to_guard(uint32_t sum)
{
	/* Complement (ip_compute_csum), then host word order to big-endian. */
	return be16toh((uint16_t)~sum);
}

uint16_t dio_pi_ip_checksum(const void *buf, size_t len)
{
	return pi_ipsum_to_guard(pi_ipsum(buf, len));
}
