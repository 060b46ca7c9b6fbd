// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * CRC-64/NVME: the choice of a path for the CPU, at load time (best first,
 * pi_crc64.c says which), and the dispatched entry points; the paths
 * themselves are in pi_crc64.c (slice-by-8), pi_crc64_x86.c and
 * pi_crc64_arm64.c.
 */
#if defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <sys/auxv.h>
#endif

#include "dioctl_pi.h"
#include "pi_crc64.h"

static crc64_fn crc64_impl = pi_crc64_slice8;
static crc64_copy_fn crc64_copy_impl = pi_crc64_copy_slice8;
static crc64_copy_multi_fn crc64_copy_multi_impl = pi_crc64_copy_multi_slice8;
static crc64_multi_fn crc64_multi_impl = pi_crc64_multi_slice8;
static const char *crc64_impl_name = "slice-by-8";
#ifdef PI_X86
static int have_pclmul, have_pclmul_avx, have_vpclmul256, have_vpclmul512;
#endif
#ifdef PI_ARM64
static int have_pmull;
#endif

__attribute__((constructor))
static void crc64_init(void)
{
	pi_crc64_init();
#ifdef PI_X86
	/* Constructors may run before libgcc's: initialise the CPU model. */
	__builtin_cpu_init();
	have_pclmul = __builtin_cpu_supports("pclmul") &&
		      __builtin_cpu_supports("sse4.1");
	have_pclmul_avx = have_pclmul && __builtin_cpu_supports("avx");
	have_vpclmul256 = have_pclmul && __builtin_cpu_supports("vpclmulqdq") &&
			  __builtin_cpu_supports("avx2");
	have_vpclmul512 = have_vpclmul256 && __builtin_cpu_supports("avx512f");
	if (have_vpclmul512) {
		crc64_impl = pi_crc64_vpclmul512;
		crc64_copy_impl = pi_crc64_copy_vpclmul512;
		crc64_copy_multi_impl = pi_crc64_copy_multi_vpclmul512;
		crc64_multi_impl = pi_crc64_multi_vpclmul512;
		crc64_impl_name = "AVX-512 VPCLMULQDQ";
	} else if (have_vpclmul256) {
		crc64_impl = pi_crc64_vpclmul256;
		crc64_copy_impl = pi_crc64_copy_vpclmul256;
		crc64_copy_multi_impl = pi_crc64_copy_multi_vpclmul256;
		crc64_multi_impl = pi_crc64_multi_vpclmul256;
		crc64_impl_name = "VPCLMULQDQ AVX2";
	} else if (have_pclmul_avx) {
		crc64_impl = pi_crc64_pclmul_avx;
		crc64_copy_impl = pi_crc64_copy_pclmul_avx;
		crc64_copy_multi_impl = pi_crc64_copy_multi_pclmul_avx;
		crc64_multi_impl = pi_crc64_multi_pclmul_avx;
		crc64_impl_name = "AVX PCLMULQDQ";
	} else if (have_pclmul) {
		crc64_impl = pi_crc64_pclmul;
		crc64_copy_impl = pi_crc64_copy_pclmul;
		crc64_copy_multi_impl = pi_crc64_copy_multi_pclmul;
		crc64_multi_impl = pi_crc64_multi_pclmul;
		crc64_impl_name = "PCLMULQDQ";
	}
#endif
#ifdef PI_ARM64
	have_pmull = !!(getauxval(AT_HWCAP) & HWCAP_PMULL);
	if (have_pmull) {
		crc64_impl = pi_crc64_pmull;
		crc64_copy_impl = pi_crc64_copy_pmull;
		crc64_copy_multi_impl = pi_crc64_copy_multi_pmull;
		crc64_multi_impl = pi_crc64_multi_pmull;
		crc64_impl_name = "PMULL";
	}
#endif
}

#ifdef PI_X86
int pi_crc64_have_pclmul(void)
{
	return have_pclmul;
}

int pi_crc64_have_pclmul_avx(void)
{
	return have_pclmul_avx;
}

int pi_crc64_have_vpclmul256(void)
{
	return have_vpclmul256;
}

int pi_crc64_have_vpclmul512(void)
{
	return have_vpclmul512;
}
#endif

#ifdef PI_ARM64
int pi_crc64_have_pmull(void)
{
	return have_pmull;
}
#endif

const char *pi_crc64_dispatch_name(void)
{
	return crc64_impl_name;
}

uint64_t dio_pi_crc64_nvme(uint64_t crc, const void *buf, size_t len)
{
	return crc64_impl(crc, buf, len);
}

uint64_t pi_crc64_copy(uint64_t crc, void *dst, const void *src, size_t len)
{
	return crc64_copy_impl(crc, dst, src, len);
}

void pi_crc64_copy_multi(void *dst, const void *src, size_t interval, size_t n, uint64_t *out)
{
	crc64_copy_multi_impl(dst, src, interval, n, out);
}

void pi_crc64_multi(const void *src, size_t interval, size_t n, uint64_t *out)
{
	crc64_multi_impl(src, interval, n, out);
}
/* ---- the paths, for the tests and the benchmark ---- */

const struct pi_crc64_path pi_crc64_paths[] = {
#ifdef PI_X86
	{ "AVX-512 VPCLMULQDQ", "vpclmul512", pi_crc64_vpclmul512,
	  pi_crc64_copy_vpclmul512, pi_crc64_have_vpclmul512,
	  pi_crc64_copy_multi_vpclmul512, pi_crc64_multi_vpclmul512 },
	{ "VPCLMULQDQ AVX2", "vpclmul256", pi_crc64_vpclmul256,
	  pi_crc64_copy_vpclmul256, pi_crc64_have_vpclmul256,
	  pi_crc64_copy_multi_vpclmul256, pi_crc64_multi_vpclmul256 },
	{ "AVX PCLMULQDQ fold8", "pclmul_avx", pi_crc64_pclmul_avx,
	  pi_crc64_copy_pclmul_avx, pi_crc64_have_pclmul_avx,
	  pi_crc64_copy_multi_pclmul_avx, pi_crc64_multi_pclmul_avx },
	{ "PCLMULQDQ fold8", "pclmul", pi_crc64_pclmul,
	  pi_crc64_copy_pclmul, pi_crc64_have_pclmul, pi_crc64_copy_multi_pclmul,
	  pi_crc64_multi_pclmul },
#endif
#ifdef PI_ARM64
	{ "PMULL fold8", "pmull", pi_crc64_pmull,
	  pi_crc64_copy_pmull, pi_crc64_have_pmull, pi_crc64_copy_multi_pmull,
	  pi_crc64_multi_pmull },
#endif
	{ "slice-by-8", "slice8", pi_crc64_slice8,
	  pi_crc64_copy_slice8, NULL, pi_crc64_copy_multi_slice8, pi_crc64_multi_slice8 },
	{ NULL, NULL, NULL, NULL, NULL, NULL, NULL },
};
