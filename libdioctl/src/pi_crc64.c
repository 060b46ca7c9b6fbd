// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * CRC-64/NVME (the kernel's crc64_rocksoft): polynomial 0xAD93D23594C93659,
 * reflected (LSB first), initial value and final XOR all ones.
 *
 * Debian's ISA-L 2.30 has no such CRC, so this file has its own: folding
 * with carry-less multiplication, on 512-bit registers (AVX-512 VPCLMULQDQ)
 * or 128-bit ones (PCLMULQDQ) as the CPU allows, chosen at load time, and
 * a portable slice-by-8 table version otherwise.
 *
 * Notation.  P = x^64 + P' is the polynomial.  In the reflected world a
 * 64-bit register word w stands for sum(w_i * x^(63-i)): the first byte in
 * memory holds the highest powers.  A 16-byte block loaded little-endian is
 * a 128-bit value whose low quadword holds the high 64 powers.  The CRC
 * register after a message M is M(x) * x^64 mod P; the initial register is
 * XORed into the first 8 bytes.  rev64(a) is a 64-bit polynomial a in
 * register form.
 */
#include <string.h>
#include <immintrin.h>

#include "dioctl_pi.h"
#include "pi_internal.h"

#define CRC64_POLY_REFL	0x9a6c9329ac4bc9b5ULL	/* rev64(P') */

/* crc64_tab[k][b]: CRC register after byte b followed by k zero bytes. */
static uint64_t crc64_tab[8][256];
static uint64_t (*crc64_impl)(uint64_t crc, const void *buf, size_t len) =
	pi_crc64_slice8;
static int have_pclmul, have_vpclmul512;

static void crc64_init_tables(void)
{
	for (unsigned int b = 0; b < 256; b++) {
		uint64_t crc = b;

		for (int i = 0; i < 8; i++)
			crc = (crc & 1) ? (crc >> 1) ^ CRC64_POLY_REFL : crc >> 1;
		crc64_tab[0][b] = crc;
	}
	for (int k = 1; k < 8; k++)
		for (unsigned int b = 0; b < 256; b++) {
			uint64_t prev = crc64_tab[k - 1][b];

			crc64_tab[k][b] = (prev >> 8) ^ crc64_tab[0][prev & 0xff];
		}
}

__attribute__((constructor))
static void crc64_init(void)
{
	crc64_init_tables();
	/* Constructors may run before libgcc's: initialise the CPU model. */
	__builtin_cpu_init();
	have_pclmul = __builtin_cpu_supports("pclmul") &&
		      __builtin_cpu_supports("sse4.1");
	have_vpclmul512 = have_pclmul && __builtin_cpu_supports("vpclmulqdq") &&
			  __builtin_cpu_supports("avx512f");
	if (have_vpclmul512)
		crc64_impl = pi_crc64_vpclmul512;
	else if (have_pclmul)
		crc64_impl = pi_crc64_pclmul;
}

static inline uint64_t load_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

/* One slice-by-8 step: the register after 8 more bytes (v = reg ^ data). */
static inline uint64_t crc64_step8(uint64_t v)
{
	return crc64_tab[7][v & 0xff] ^ crc64_tab[6][(v >> 8) & 0xff] ^
	       crc64_tab[5][(v >> 16) & 0xff] ^ crc64_tab[4][(v >> 24) & 0xff] ^
	       crc64_tab[3][(v >> 32) & 0xff] ^ crc64_tab[2][(v >> 40) & 0xff] ^
	       crc64_tab[1][(v >> 48) & 0xff] ^ crc64_tab[0][v >> 56];
}

/* Register in, register out: no inversions. */
static uint64_t crc64_reg_slice8(uint64_t reg, const uint8_t *p, size_t len)
{
	for (; len >= 8; len -= 8, p += 8)
		reg = crc64_step8(reg ^ load_le64(p));
	while (len--)
		reg = (reg >> 8) ^ crc64_tab[0][(reg ^ *p++) & 0xff];
	return reg;
}

uint64_t pi_crc64_slice8(uint64_t crc, const void *buf, size_t len)
{
	return ~crc64_reg_slice8(~crc, buf, len);
}

uint64_t dio_pi_crc64_nvme(uint64_t crc, const void *buf, size_t len)
{
	return crc64_impl(crc, buf, len);
}

int pi_crc64_have_pclmul(void)
{
	return have_pclmul;
}

int pi_crc64_have_vpclmul512(void)
{
	return have_vpclmul512;
}

/*
 * Folding.  A 128-bit block X = L*x^64 + H that is followed by D more bits
 * of message contributes X*x^D = L*x^(D+64) + H*x^D, which is congruent to
 * L*(x^(D+64) mod P) + H*(x^D mod P): two 64x64 carry-less products that
 * fit in 128 bits.  In reflected form PCLMULQDQ of two register words yields
 * the product times x (the 127-bit product lands one bit low), so the
 * constants are one power lower:
 *
 *	k.lo = rev64(x^(D+63) mod P)	multiplies L (the low quadword)
 *	k.hi = rev64(x^(D-1) mod P)	multiplies H (the high quadword)
 *
 * The values come from a polynomial-arithmetic script; test_pi recomputes
 * them from P and compares, and checks every length against slice-by-8.
 */
#define FOLD_K(d, lo, hi)	[d / 128] = { lo, hi }
static const uint64_t fold_k[17][2] __attribute__((aligned(16))) = {
	FOLD_K(128,  0xeadc41fd2ba3d420ULL, 0x21e9761e252621acULL),
	FOLD_K(256,  0xb0bc2e589204f500ULL, 0xe1e0bb9d45d7a44cULL),
	FOLD_K(384,  0xbdd7ac0ee1a4a0f0ULL, 0xa3ffdc1fe8e82a8bULL),
	FOLD_K(512,  0x0c32cdb31e18a84aULL, 0x62242240ace5045aULL),
	FOLD_K(640,  0x7b0ab10dd0f809feULL, 0x03363823e6e791e5ULL),
	FOLD_K(768,  0x3c255f5ebc414423ULL, 0x34f5a24e22d66e90ULL),
	FOLD_K(896,  0xd083dd594d96319dULL, 0x946588403d4adcbcULL),
	FOLD_K(1024, 0xa1ca681e733f9c40ULL, 0x5f852fb61e8d92dcULL),
	FOLD_K(2048, 0x37ccd3e14069cabcULL, 0xa043808c0f782663ULL),
};
/* rev64(x^127 mod P): multiplies L by x^128 in the final reduction. */
#define K_X127		0x21e9761e252621acULL
/* rev64(mu'), mu = floor(x^128 / P) = x^64 + mu': the Barrett constant. */
#define K_MU		0x13f67d194d77cfbbULL

const uint64_t *pi_crc64_fold_consts(void)
{
	return &fold_k[0][0];
}

#define PCLMUL __attribute__((target("pclmul,sse4.1")))

PCLMUL static inline __m128i kload(unsigned int d)
{
	return _mm_load_si128((const __m128i *)fold_k[d / 128]);
}

PCLMUL static inline __m128i fold(__m128i x, __m128i k)
{
	return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00),
			     _mm_clmulepi64_si128(x, k, 0x11));
}

PCLMUL static inline __m128i load128(const uint8_t *p)
{
	return _mm_loadu_si128((const __m128i *)p);
}

/*
 * The register for a 128-bit state X, i.e. X*x^64 mod P.  First
 * X*x^64 = L*x^128 + H*x^64 == T = T1*x^64 + T0 (one product), then
 * T mod P = (T1*x^64 mod P) + T0 by Barrett: q = floor(T1*x^64 / P) =
 * T1 + floor(T1*mu' / x^64), and T1*x^64 mod P = low64(q*P').  The
 * shifts undo the one-bit offset of reflected products.
 */
PCLMUL static inline uint64_t reduce128(__m128i x)
{
	__m128i t, v, w;
	uint64_t lo, hi;

	t = _mm_clmulepi64_si128(x, _mm_cvtsi64_si128(K_X127), 0x00);
	t = _mm_xor_si128(t, _mm_srli_si128(x, 8));
	v = _mm_clmulepi64_si128(t, _mm_cvtsi64_si128(K_MU), 0x00);
	v = _mm_xor_si128(t, _mm_slli_epi64(v, 1));		/* q */
	w = _mm_clmulepi64_si128(v, _mm_cvtsi64_si128(CRC64_POLY_REFL), 0x00);
	lo = _mm_cvtsi128_si64(w);
	hi = _mm_extract_epi64(w, 1);
	return ((hi << 1) | (lo >> 63)) ^ _mm_extract_epi64(t, 1);
}

/* Eight 16-byte lanes, 128 bytes a round: keeps the multipliers busy. */
PCLMUL static __m128i fold_by8(__m128i first, const uint8_t **pp, size_t *lenp)
{
	const uint8_t *p = *pp;
	size_t len = *lenp;
	__m128i x[8], k = kload(1024), acc;

	x[0] = first;
	for (int i = 1; i < 8; i++)
		x[i] = load128(p + 16 * i);
	for (p += 128, len -= 128; len >= 128; p += 128, len -= 128)
		for (int i = 0; i < 8; i++)
			x[i] = _mm_xor_si128(fold(x[i], k), load128(p + 16 * i));
	/* Lane i is 7 - i blocks before lane 7: fold them all onto it. */
	acc = x[7];
	for (int i = 0; i < 7; i++)
		acc = _mm_xor_si128(acc, fold(x[i], kload(128 * (7 - i))));
	*pp = p;
	*lenp = len;
	return acc;
}

PCLMUL uint64_t pi_crc64_pclmul(uint64_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t reg = ~crc;
	__m128i x;

	if (len < 16)
		return ~crc64_reg_slice8(reg, p, len);
	x = _mm_xor_si128(load128(p), _mm_cvtsi64_si128(reg));
	if (len >= 128) {
		x = fold_by8(x, &p, &len);
	} else {
		p += 16;
		len -= 16;
	}
	for (; len >= 16; p += 16, len -= 16)
		x = _mm_xor_si128(fold(x, kload(128)), load128(p));
	return ~crc64_reg_slice8(reduce128(x), p, len);
}

/*
 * AVX-512 with VPCLMULQDQ: the same folds on four 128-bit lanes per
 * register, four registers, 256 bytes a round (ISA-L's "by16" layout).
 */
#define VPCLMUL512 __attribute__((target("vpclmulqdq,pclmul,avx512f,sse4.1")))

VPCLMUL512 static inline __m512i kload512(unsigned int d)
{
	return _mm512_broadcast_i32x4(kload(d));
}

VPCLMUL512 static inline __m512i fold512(__m512i x, __m512i k, __m512i data)
{
	/* 0x96: three-way XOR. */
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
					 _mm512_clmulepi64_epi128(x, k, 0x11),
					 data, 0x96);
}

VPCLMUL512 static inline __m512i load512(const uint8_t *p)
{
	return _mm512_loadu_si512((const void *)p);
}

/* 256 bytes or more: sixteen lanes down to the four of one register. */
VPCLMUL512 static __m512i fold_by16(__m512i first, const uint8_t **pp, size_t *lenp)
{
	const uint8_t *p = *pp;
	size_t len = *lenp;
	__m512i z0 = first, z1 = load512(p + 64), z2 = load512(p + 128),
		z3 = load512(p + 192), k = kload512(2048);

	for (p += 256, len -= 256; len >= 256; p += 256, len -= 256) {
		z0 = fold512(z0, k, load512(p));
		z1 = fold512(z1, k, load512(p + 64));
		z2 = fold512(z2, k, load512(p + 128));
		z3 = fold512(z3, k, load512(p + 192));
	}
	k = kload512(1024);
	z2 = fold512(z0, k, z2);
	z3 = fold512(z1, k, z3);
	*pp = p;
	*lenp = len;
	return fold512(z2, kload512(512), z3);
}

VPCLMUL512 uint64_t pi_crc64_vpclmul512(uint64_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t reg = ~crc;
	__m512i z, kl;
	__m256i y;
	__m128i x;

	if (len < 64)
		return pi_crc64_pclmul(crc, buf, len);
	z = _mm512_xor_si512(load512(p), _mm512_zextsi128_si512(_mm_cvtsi64_si128(reg)));
	if (len >= 256) {
		z = fold_by16(z, &p, &len);
	} else {
		p += 64;
		len -= 64;
	}
	for (; len >= 64; p += 64, len -= 64)
		z = fold512(z, kload512(512), load512(p));
	/* Lanes 0..2 are 3..1 blocks before lane 3: fold them onto it. */
	kl = _mm512_inserti32x4(_mm512_castsi128_si512(kload(384)), kload(256), 1);
	kl = _mm512_inserti32x4(kl, kload(128), 2);
	kl = _mm512_inserti32x4(kl, _mm_setzero_si128(), 3);
	z = fold512(z, kl, _mm512_maskz_mov_epi64(0xc0, z));
	y = _mm256_xor_si256(_mm512_castsi512_si256(z), _mm512_extracti64x4_epi64(z, 1));
	x = _mm_xor_si128(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));
	for (; len >= 16; p += 16, len -= 16)
		x = _mm_xor_si128(fold(x, kload(128)), load128(p));
	return ~crc64_reg_slice8(reduce128(x), p, len);
}
