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
#include <immintrin.h>

#include "dioctl_pi.h"
#include "pi_internal.h"

/* Fold at most this much into one accumulator set: no overflow. */
#define IPSUM_CHUNK	(1UL << 30)

static uint32_t (*ipsum_impl)(const void *buf, size_t len) = pi_ipsum_portable;
static int have_avx2;

__attribute__((constructor))
static void ipsum_init(void)
{
	__builtin_cpu_init();
	have_avx2 = __builtin_cpu_supports("avx2");
	if (have_avx2)
		ipsum_impl = pi_ipsum_avx2;
}

int pi_ipsum_have_avx2(void)
{
	return have_avx2;
}

static inline uint32_t fold64(uint64_t s)
{
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (s & 0xffff) + (s >> 16);
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

/*
 * AVX2: split every 64-bit lane into its two 32-bit halves and add them to
 * 64-bit accumulators; four accumulators for 64 bytes a round.  The lanes
 * are summed in registers: the fixed cost matters at 512-byte intervals.
 * With @dst (dio_pi_generate_copy()), each register loaded is also stored
 * there: the copy and the sum in one pass.  Always inlined, so that each
 * caller below gets its own loop, the plain one without the test of @dst.
 */
__attribute__((target("avx2"), always_inline))
static inline uint64_t ipsum_chunk_avx2_to(uint8_t *dst, const uint8_t *p, size_t len)
{
	const __m256i lo32 = _mm256_set1_epi64x(0xffffffff);
	__m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
	__m128i h;

	for (; len >= 64; p += 64, len -= 64) {
		__m256i v0 = _mm256_loadu_si256((const __m256i *)p);
		__m256i v1 = _mm256_loadu_si256((const __m256i *)(p + 32));

		if (dst) {
			_mm256_storeu_si256((__m256i *)dst, v0);
			_mm256_storeu_si256((__m256i *)(dst + 32), v1);
			dst += 64;
		}
		a0 = _mm256_add_epi64(a0, _mm256_and_si256(v0, lo32));
		a1 = _mm256_add_epi64(a1, _mm256_srli_epi64(v0, 32));
		a2 = _mm256_add_epi64(a2, _mm256_and_si256(v1, lo32));
		a3 = _mm256_add_epi64(a3, _mm256_srli_epi64(v1, 32));
	}
	/* Each lane is below 2^56 after 1 GiB: the sum of them cannot wrap. */
	a0 = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
	h = _mm_add_epi64(_mm256_castsi256_si128(a0), _mm256_extracti128_si256(a0, 1));
	h = _mm_add_epi64(h, _mm_unpackhi_epi64(h, h));
	if (dst && len)
		memcpy(dst, p, len);
	return (uint64_t)_mm_cvtsi128_si64(h) + (len ? ipsum_chunk_portable(p, len) : 0);
}

__attribute__((target("avx2")))
static uint64_t ipsum_chunk_avx2(const uint8_t *p, size_t len)
{
	return ipsum_chunk_avx2_to(NULL, p, len);
}

__attribute__((target("avx2")))
static uint64_t ipsum_copy_chunk_avx2(uint8_t *dst, const uint8_t *p, size_t len)
{
	return ipsum_chunk_avx2_to(dst, p, len);
}

__attribute__((target("avx2")))
uint32_t pi_ipsum_avx2(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t sum = 0;

	for (; len > IPSUM_CHUNK; p += IPSUM_CHUNK, len -= IPSUM_CHUNK)
		sum = pi_ipsum_add(sum, fold64(ipsum_chunk_avx2(p, IPSUM_CHUNK)));
	return pi_ipsum_add(sum, fold64(ipsum_chunk_avx2(p, len)));
}

uint32_t pi_ipsum_copy(void *dst, const void *src, size_t len)
{
	uint8_t *d = dst;
	const uint8_t *p = src;
	uint32_t sum = 0;

	if (!have_avx2) {
		memcpy(dst, src, len);
		return pi_ipsum(src, len);
	}
	for (; len > IPSUM_CHUNK; p += IPSUM_CHUNK, d += IPSUM_CHUNK, len -= IPSUM_CHUNK)
		sum = pi_ipsum_add(sum, fold64(ipsum_copy_chunk_avx2(d, p, IPSUM_CHUNK)));
	return pi_ipsum_add(sum, fold64(ipsum_copy_chunk_avx2(d, p, len)));
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
