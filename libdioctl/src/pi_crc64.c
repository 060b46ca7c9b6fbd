// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * CRC-64/NVME (the kernel's crc64_rocksoft): polynomial 0xAD93D23594C93659,
 * reflected (LSB first), initial value and final XOR all ones.
 *
 * Debian's ISA-L 2.30 has no such CRC, so libdioctl has its own: folding
 * with carry-less multiplication, chosen at load time, best first
 * (pi_crc64_dispatch.c):
 *
 *  - x86-64, AVX-512 VPCLMULQDQ: four 512-bit registers, 256 bytes a round;
 *  - x86-64, VPCLMULQDQ on 256-bit registers with AVX2 only (AMD Zen 3):
 *    eight registers, 256 bytes a round;
 *  - x86-64, PCLMULQDQ (any x86-64 since 2010): eight 128-bit registers,
 *    128 bytes a round, as ISA-L's crc64_*_refl_by8 and the kernel's
 *    crc-pclmul template; VEX-encoded on CPUs with AVX, legacy SSE on
 *    the others;
 *  - AArch64 (little-endian), PMULL (the ARMv8 Crypto extension, HWCAP
 *    "pmull"): the same eight-lane rounds as PCLMULQDQ, as ISA-L's
 *    crc64_*_refl_pmull;
 *  - a portable slice-by-8 table version otherwise, on any CPU and byte
 *    order.
 *
 * One file per architecture, as the kernel's lib/crc: pi_crc64_x86.c
 * (PCLMULQDQ, VPCLMULQDQ), pi_crc64_arm64.c (PMULL), and this one: the
 * tables, the folding constants the others use (pi_crc64.h) and
 * slice-by-8.
 *
 * Each has a twin that also copies the data it reads to a destination
 * (pi_crc64_copy_*(), for dio_pi_generate_copy()): one pass over the data
 * instead of two; and several-interval versions of both
 * (pi_crc64_multi_*(), pi_crc64_copy_multi_*()) for the PI calls, whose
 * intervals (512 bytes, 4 KiB) are each a CRC of its own.
 *
 * At the sizes PI uses the end of a CRC weighs: ISA-L's kernels (2.31 has
 * crc64_rocksoft_refl_by8 and _by16_10 for this CRC) fold their lanes
 * onto one, then 128 to 64 bits, then Barrett: on 128-bit registers 17
 * products after the last round, four deep, on 512-bit ones three of
 * them 128-bit.  Here a length that is a multiple of the round ends with
 * each lane taken straight to the 128-bit remainder by its own constant
 * (kfin: 15 products, one deep) and a table step for the last 64 bits
 * (step8_of_t()); other lengths end their last 1 to 15 bytes with one
 * fold of two shuffled blocks, not a table lookup per byte
 * (fold_partial()).  The carry-less multiplier is what both wait for:
 * bench/README.md has the figures against ISA-L.
 *
 * Notation.  P = x^64 + P' is the polynomial.  In the reflected world a
 * 64-bit register word w stands for sum(w_i * x^(63-i)): the first byte in
 * memory holds the highest powers.  A 16-byte block loaded little-endian is
 * a 128-bit value whose low quadword holds the high 64 powers.  The CRC
 * register after a message M is M(x) * x^64 mod P; the initial register is
 * XORed into the first 8 bytes.  rev64(a) is a 64-bit polynomial a in
 * register form.
 */
#include "dioctl_pi.h"
#include "pi_crc64.h"

uint64_t pi_crc64_tab[8][256];
uint64_t pi_crc64_fold_k[17][2] __attribute__((aligned(16)));
uint64_t pi_crc64_k_mu;
uint64_t pi_crc64_kfin[16][2] __attribute__((aligned(64)));

static void crc64_init_tables(void)
{
	for (unsigned int b = 0; b < 256; b++) {
		uint64_t crc = b;

		for (int i = 0; i < 8; i++)
			crc = (crc & 1) ? (crc >> 1) ^ CRC64_POLY_REFL : crc >> 1;
		pi_crc64_tab[0][b] = crc;
	}
	for (int k = 1; k < 8; k++)
		for (unsigned int b = 0; b < 256; b++) {
			uint64_t prev = pi_crc64_tab[k - 1][b];

			pi_crc64_tab[k][b] = (prev >> 8) ^ pi_crc64_tab[0][prev & 0xff];
		}
}

static uint64_t rev64(uint64_t v)
{
	uint64_t r = 0;

	for (int i = 0; i < 64; i++, v >>= 1)
		r = r << 1 | (v & 1);
	return r;
}

/* x^n mod P in normal form (bit i: the coefficient of x^i). */
static uint64_t xpow_mod(unsigned int n)
{
	uint64_t r = 1;

	while (n--)
		r = (r >> 63) ? (r << 1) ^ CRC64_POLY : r << 1;
	return r;
}

/*
 * Folding.  A 128-bit block X = L*x^64 + H that is followed by D more bits
 * of message contributes X*x^D = L*x^(D+64) + H*x^D, which is congruent to
 * L*(x^(D+64) mod P) + H*(x^D mod P): two 64x64 carry-less products that
 * fit in 128 bits and can be XORed into the block D bits later.  In
 * reflected form PCLMULQDQ of two register words yields the product times
 * x (the 127-bit product lands one bit low), so the constants are one
 * power lower:
 *
 *	k.lo = rev64(x^(D+63) mod P)	multiplies L (the low quadword)
 *	k.hi = rev64(x^(D-1) mod P)	multiplies H (the high quadword)
 *
 * D = 1024 advances each of eight 16-byte lanes by a 128-byte stride,
 * D = 2048 each of sixteen by a 256-byte stride; D = 128..896 fold the
 * lanes onto the last one at the end.  E.g. k[1] = { rev64(x^191 mod P),
 * rev64(x^127 mod P) } = { 0xeadc41fd2ba3d420, 0x21e9761e252621ac }.
 *
 * Barrett (reduce128()): mu = floor(x^128 / P) = x^64 + mu', and K_MU =
 * rev64(mu') = 0x13f67d194d77cfbb.  The long division: x^64 = 1*P + P',
 * and each further power of x doubles quotient and remainder, the
 * remainder's carry out of x^63 (one more P) adding 1 to the quotient.
 *
 * test_pi recomputes the constants independently, and checks every path
 * against bit-at-a-time and slice-by-8 references.
 */
static void crc64_init_consts(void)
{
	uint64_t r = CRC64_POLY, q = 0;

	for (unsigned int d = 128; d <= 2048; d += 128) {
		if (d > 1024 && d < 2048)
			continue;
		pi_crc64_fold_k[d / 128][0] = rev64(xpow_mod(d + 63));
		pi_crc64_fold_k[d / 128][1] = rev64(xpow_mod(d - 1));
	}
	for (unsigned int e = 0; e < 16; e++) {
		unsigned int d = (15 - e) * 128 + 64;

		pi_crc64_kfin[e][0] = rev64(xpow_mod(d + 63));
		pi_crc64_kfin[e][1] = rev64(xpow_mod(d - 1));
	}
	for (int i = 0; i < 64; i++) {		/* x^65 .. x^128 */
		uint64_t carry = r >> 63;

		r = carry ? (r << 1) ^ CRC64_POLY : r << 1;
		q = q << 1 | carry;
	}
	pi_crc64_k_mu = rev64(q);
}

const uint64_t *pi_crc64_fold_consts(void)
{
	return &pi_crc64_fold_k[0][0];
}

uint64_t pi_crc64_barrett_mu(void)
{
	return pi_crc64_k_mu;
}

/* The tables and constants: pi_crc64_dispatch.c's constructor calls it first. */
void pi_crc64_init(void)
{
	crc64_init_tables();
	crc64_init_consts();
}

/* ---- slice-by-8 ---- */

/* Register in, register out: no inversions. */
uint64_t pi_crc64_reg_slice8(uint64_t reg, const uint8_t *p, size_t len)
{
	for (; len >= 8; len -= 8, p += 8)
		reg = crc64_step8(reg ^ load_le64(p));
	while (len--)
		reg = (reg >> 8) ^ pi_crc64_tab[0][(reg ^ *p++) & 0xff];
	return reg;
}

uint64_t pi_crc64_slice8(uint64_t crc, const void *buf, size_t len)
{
	return ~pi_crc64_reg_slice8(~crc, buf, len);
}

uint64_t pi_crc64_copy_slice8(uint64_t crc, void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
	return pi_crc64_slice8(crc, src, len);
}

void pi_crc64_copy_multi_slice8(void *dst, const void *src, size_t interval, size_t n,
				uint64_t *out)
{
	crc64_multi_each(pi_crc64_slice8, pi_crc64_copy_slice8, dst, src, interval, n, out);
}

void pi_crc64_multi_slice8(const void *src, size_t interval, size_t n, uint64_t *out)
{
	crc64_multi_each(pi_crc64_slice8, pi_crc64_copy_slice8, NULL, src, interval, n, out);
}
