// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * CRC-16/T10-DIF: polynomial 0x8BB7, initial value 0, MSB first (not
 * reflected), no final XOR.
 *
 * The public function is ISA-L's crc16_t10dif(), which picks a folding
 * kernel for the CPU at run time (PCLMULQDQ on x86-64, PMULL on AArch64,
 * a table elsewhere).  The byte-table and slice-by-8
 * versions here are the portable reference the tests compare it with and
 * the baselines the benchmark measures.  This file also chooses the
 * copying path for the CPU (pi_crc16_copy() and its several-interval
 * twins); the x86-64 one is pi_crc16_x86.c's.
 */
#include <string.h>
#include <isa-l/crc.h>

#include "dioctl_pi.h"
#include "pi_crc16.h"

/* crc16_tab[k][b]: CRC register after byte b followed by k zero bytes. */
static uint16_t crc16_tab[8][256];

__attribute__((constructor))
static void crc16_init_tables(void)
{
	for (unsigned int b = 0; b < 256; b++) {
		uint16_t crc = b << 8;

		for (int i = 0; i < 8; i++)
			crc = (crc & 0x8000) ? (crc << 1) ^ CRC16_POLY : crc << 1;
		crc16_tab[0][b] = crc;
	}
	for (int k = 1; k < 8; k++)
		for (unsigned int b = 0; b < 256; b++) {
			uint16_t prev = crc16_tab[k - 1][b];

			crc16_tab[k][b] = (prev << 8) ^ crc16_tab[0][prev >> 8];
		}
}

uint16_t dio_pi_crc16_t10dif(uint16_t crc, const void *buf, size_t len)
{
	return crc16_t10dif(crc, buf, len);
}

uint16_t pi_crc16_bytewise(uint16_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len--)
		crc = (crc << 8) ^ crc16_tab[0][(crc >> 8) ^ *p++];
	return crc;
}

uint16_t pi_crc16_slice8(uint16_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	for (; len >= 8; len -= 8, p += 8)
		crc = crc16_tab[7][(crc >> 8) ^ p[0]] ^
		      crc16_tab[6][(crc & 0xff) ^ p[1]] ^
		      crc16_tab[5][p[2]] ^ crc16_tab[4][p[3]] ^
		      crc16_tab[3][p[4]] ^ crc16_tab[2][p[5]] ^
		      crc16_tab[1][p[6]] ^ crc16_tab[0][p[7]];
	return pi_crc16_bytewise(crc, p, len);
}

/*
 * ---- CRC and copy ----
 *
 * ISA-L 2.30's crc16_t10dif_copy() has 128-bit PCLMULQDQ kernels only
 * (fold by 4) on x86-64: about 9 GB/s, a fifth of memcpy on a CPU with
 * VPCLMULQDQ.  There, pi_crc16_x86.c's folding, on 512- or 256-bit
 * registers, computes the CRC with the copy in the same loop; elsewhere ISA-L's
 * stitched version (on AArch64 its PMULL kernel, crc16_t10dif_copy_pmull;
 * a table on other CPUs).
 */
static uint16_t (*crc16_copy_impl)(uint16_t crc, void *dst, const void *src,
				   size_t len) = pi_crc16_copy_isal;
static void (*crc16_copy_multi_impl)(void *dst, const void *src, size_t interval, size_t n,
				     uint16_t *out) = pi_crc16_copy_multi_isal;
static void (*crc16_multi_impl)(const void *src, size_t interval, size_t n,
				uint16_t *out) = pi_crc16_multi_isal;
static const char *crc16_impl_name = "ISA-L crc16_t10dif_copy";

#ifdef PI_X86
static int have_vpclmul256, have_vpclmul512;

__attribute__((constructor))
static void crc16_init_copy(void)
{
	pi_crc16_x86_init();
	__builtin_cpu_init();
	have_vpclmul256 = __builtin_cpu_supports("pclmul") &&
			  __builtin_cpu_supports("vpclmulqdq") &&
			  __builtin_cpu_supports("avx2");
	have_vpclmul512 = have_vpclmul256 && __builtin_cpu_supports("avx512f") &&
			  __builtin_cpu_supports("avx512bw");
	if (have_vpclmul512) {
		crc16_copy_impl = pi_crc16_copy_vpclmul512;
		crc16_copy_multi_impl = pi_crc16_copy_multi_vpclmul512;
		crc16_multi_impl = pi_crc16_multi_vpclmul512;
		crc16_impl_name = "AVX-512 VPCLMULQDQ";
	} else if (have_vpclmul256) {
		crc16_copy_impl = pi_crc16_copy_vpclmul256;
		crc16_copy_multi_impl = pi_crc16_copy_multi_vpclmul256;
		crc16_multi_impl = pi_crc16_multi_vpclmul256;
		crc16_impl_name = "VPCLMULQDQ AVX2";
	}
}

int pi_crc16_have_vpclmul256(void)
{
	return have_vpclmul256;
}

int pi_crc16_have_vpclmul512(void)
{
	return have_vpclmul512;
}

#endif /* PI_X86 */

const char *pi_crc16_dispatch_name(void)
{
	return crc16_impl_name;
}

uint16_t pi_crc16_copy(uint16_t crc, void *dst, const void *src, size_t len)
{
	return crc16_copy_impl(crc, dst, src, len);
}

uint16_t pi_crc16_copy_isal(uint16_t crc, void *dst, const void *src, size_t len)
{
	/* ISA-L's prototype lacks the const; it only reads src. */
	return crc16_t10dif_copy(crc, dst, (uint8_t *)src, len);
}

void pi_crc16_copy_multi(void *dst, const void *src, size_t interval, size_t n,
			 uint16_t *out)
{
	crc16_copy_multi_impl(dst, src, interval, n, out);
}

void pi_crc16_multi(const void *src, size_t interval, size_t n, uint16_t *out)
{
	crc16_multi_impl(src, interval, n, out);
}

void pi_crc16_copy_multi_isal(void *dst, const void *src, size_t interval, size_t n,
			      uint16_t *out)
{
	crc16_multi_each(pi_crc16_copy_isal, dst, src, interval, n, out);
}

void pi_crc16_multi_isal(const void *src, size_t interval, size_t n, uint16_t *out)
{
	crc16_multi_each(pi_crc16_copy_isal, NULL, src, interval, n, out);
}

/* ---- the paths, for the tests and the benchmark ---- */

const struct pi_crc16_path pi_crc16_paths[] = {
#ifdef PI_X86
	{ "AVX-512 VPCLMULQDQ", "vpclmul512", pi_crc16_copy_vpclmul512,
	  pi_crc16_have_vpclmul512, pi_crc16_copy_multi_vpclmul512, pi_crc16_multi_vpclmul512 },
	{ "VPCLMULQDQ AVX2", "vpclmul256", pi_crc16_copy_vpclmul256,
	  pi_crc16_have_vpclmul256, pi_crc16_copy_multi_vpclmul256, pi_crc16_multi_vpclmul256 },
#endif
	{ "ISA-L crc16_t10dif_copy", "isal", pi_crc16_copy_isal, NULL,
	  pi_crc16_copy_multi_isal, pi_crc16_multi_isal },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};
