/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * pi_internal.h - libdioctl PI internals, shared with the unit tests and the
 * benchmark (they link the static library, where hidden symbols still link).
 * Nothing here is part of the ABI.
 */
#ifndef _DIOCTL_PI_INTERNAL_H
#define _DIOCTL_PI_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/*
 * The copying CRC entry points pass their destination through pi_copy_dst():
 * their cores, shared with the plain ones, test dst (NULL: no copy) at
 * every load, and with this the compiler knows it is not NULL and drops
 * the tests from the copying loops.  A NULL destination is the caller's
 * error, as for memcpy().
 */
static inline __attribute__((always_inline)) void *pi_copy_dst(void *dst)
{
	if (!dst)
		__builtin_unreachable();
	return dst;
}

/* CRC-16/T10-DIF, same convention as dio_pi_crc16_t10dif(). */
uint16_t pi_crc16_bytewise(uint16_t crc, const void *buf, size_t len);
uint16_t pi_crc16_slice8(uint16_t crc, const void *buf, size_t len);

/*
 * The machine-specific paths exist only where their instructions do:
 * PI_X86 on x86-64 (PCLMULQDQ, VPCLMULQDQ, AVX2, AVX-512, each chosen at
 * run time by the CPU's feature bits), PI_ARM64 on little-endian AArch64
 * (PMULL, chosen by the kernel's HWCAP).  Everywhere else, and on any CPU
 * without them, the portable C paths (table-driven CRCs, a 64-bit IP sum;
 * ISA-L's own dispatch for CRC16) do the work.
 */
#if defined(__x86_64__)
#define PI_X86 1
#endif
#if defined(__aarch64__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PI_ARM64 1
#endif

/*
 * CRC-16/T10-DIF of src while copying it to dst; the buffers must not
 * overlap.  pi_crc16_copy() is the best for the CPU: folding on 512- or
 * 256-bit VPCLMULQDQ registers (x86-64, only where pi_crc16_have_*()),
 * else ISA-L's crc16_t10dif_copy() (pi_crc16_copy_isal(); PCLMULQDQ on
 * x86-64, PMULL on AArch64, a table elsewhere).
 */
uint16_t pi_crc16_copy(uint16_t crc, void *dst, const void *src, size_t len);
uint16_t pi_crc16_copy_isal(uint16_t crc, void *dst, const void *src, size_t len);
#ifdef PI_X86
uint16_t pi_crc16_copy_vpclmul256(uint16_t crc, void *dst, const void *src, size_t len);
int pi_crc16_have_vpclmul256(void);
uint16_t pi_crc16_copy_vpclmul512(uint16_t crc, void *dst, const void *src, size_t len);
int pi_crc16_have_vpclmul512(void);
#endif

/*
 * The CRC-16/T10-DIF of each of n intervals of interval bytes at src (from
 * 0, as dio_pi_crc16_t10dif(0, ...)) into out[0..n), copying the n *
 * interval bytes to dst (no overlap): dio_pi_generate_copy()'s loop.
 * pi_crc16_copy_multi() is the best for the CPU; the VPCLMULQDQ ones
 * (only where pi_crc16_have_*()) fold each interval with one Barrett step
 * at its end, when interval is a multiple of 256 (AVX-512) or 128 (256-bit)
 * bytes, else they call their single-buffer function per interval; the
 * ISA-L one calls crc16_t10dif_copy() per interval.
 */
void pi_crc16_copy_multi(void *dst, const void *src, size_t interval, size_t n,
			 uint16_t *out);
void pi_crc16_copy_multi_isal(void *dst, const void *src, size_t interval, size_t n,
			      uint16_t *out);
#ifdef PI_X86
void pi_crc16_copy_multi_vpclmul256(void *dst, const void *src, size_t interval, size_t n,
				    uint16_t *out);
void pi_crc16_copy_multi_vpclmul512(void *dst, const void *src, size_t interval, size_t n,
				    uint16_t *out);
#endif
/*
 * The same without the copy (dio_pi_generate()'s and dio_pi_verify()'s
 * loops on contiguous data); the ISA-L one calls crc16_t10dif() per
 * interval.
 */
void pi_crc16_multi(const void *src, size_t interval, size_t n, uint16_t *out);
void pi_crc16_multi_isal(const void *src, size_t interval, size_t n, uint16_t *out);
#ifdef PI_X86
void pi_crc16_multi_vpclmul256(const void *src, size_t interval, size_t n, uint16_t *out);
void pi_crc16_multi_vpclmul512(const void *src, size_t interval, size_t n, uint16_t *out);
#endif
/* The name of the copying path the dispatch chose for this CPU. */
const char *pi_crc16_dispatch_name(void);

/* Every CRC16 copying path this build has, best first, ended by a NULL name. */
struct pi_crc16_path {
	const char *name;	/* for people */
	const char *id;		/* short, for scripts */
	uint16_t (*copy)(uint16_t crc, void *dst, const void *src, size_t len);
	int (*supported)(void);	/* NULL: everywhere */
	void (*copy_multi)(void *dst, const void *src, size_t interval, size_t n,
			   uint16_t *out);
	void (*multi)(const void *src, size_t interval, size_t n, uint16_t *out);
};
extern const struct pi_crc16_path pi_crc16_paths[];

/*
 * CRC-64/NVME, same convention as dio_pi_crc64_nvme(), one function per
 * path.  The _copy_ ones also copy len bytes from src to dst (which must
 * not overlap) in the same pass, and return the CRC of them.  A path
 * other than slice-by-8 only where its pi_crc64_have_*() says so.
 */
uint64_t pi_crc64_slice8(uint64_t crc, const void *buf, size_t len);
uint64_t pi_crc64_copy_slice8(uint64_t crc, void *dst, const void *src, size_t len);
#ifdef PI_X86
/* PCLMULQDQ folding, 128-bit registers, legacy SSE (CPUs without AVX). */
uint64_t pi_crc64_pclmul(uint64_t crc, const void *buf, size_t len);
uint64_t pi_crc64_copy_pclmul(uint64_t crc, void *dst, const void *src, size_t len);
int pi_crc64_have_pclmul(void);
/* The same, VEX-encoded (CPUs with AVX, without VPCLMULQDQ). */
uint64_t pi_crc64_pclmul_avx(uint64_t crc, const void *buf, size_t len);
uint64_t pi_crc64_copy_pclmul_avx(uint64_t crc, void *dst, const void *src, size_t len);
int pi_crc64_have_pclmul_avx(void);
/* VPCLMULQDQ folding on 256-bit registers, AVX2 (no AVX-512). */
uint64_t pi_crc64_vpclmul256(uint64_t crc, const void *buf, size_t len);
uint64_t pi_crc64_copy_vpclmul256(uint64_t crc, void *dst, const void *src, size_t len);
int pi_crc64_have_vpclmul256(void);
/* AVX-512 VPCLMULQDQ folding. */
uint64_t pi_crc64_vpclmul512(uint64_t crc, const void *buf, size_t len);
uint64_t pi_crc64_copy_vpclmul512(uint64_t crc, void *dst, const void *src, size_t len);
int pi_crc64_have_vpclmul512(void);
#endif
#ifdef PI_ARM64
/* PMULL folding, 128-bit registers: the PCLMULQDQ path's rounds. */
uint64_t pi_crc64_pmull(uint64_t crc, const void *buf, size_t len);
uint64_t pi_crc64_copy_pmull(uint64_t crc, void *dst, const void *src, size_t len);
int pi_crc64_have_pmull(void);
#endif
/* The dispatched copying one (dio_pi_crc64_nvme() is the plain one). */
uint64_t pi_crc64_copy(uint64_t crc, void *dst, const void *src, size_t len);
/*
 * The CRC-64/NVME of each of n intervals of interval bytes at src (from 0,
 * as dio_pi_crc64_nvme(0, ...)) into out[0..n), copying the n * interval
 * bytes to dst (no overlap): dio_pi_generate_copy()'s loop; pi_crc64_multi()
 * and its paths the same without the copy (dio_pi_generate()'s and
 * dio_pi_verify()'s on contiguous data).  The folding paths end each
 * interval with one Barrett step when interval is a multiple of their
 * round (256 bytes for AVX-512, else 128), and call their single-buffer
 * function per interval otherwise; slice-by-8 always does.
 */
void pi_crc64_copy_multi(void *dst, const void *src, size_t interval, size_t n,
			 uint64_t *out);
void pi_crc64_multi(const void *src, size_t interval, size_t n, uint64_t *out);
#ifdef PI_X86
void pi_crc64_copy_multi_vpclmul512(void *dst, const void *src, size_t interval, size_t n,
				    uint64_t *out);
void pi_crc64_copy_multi_vpclmul256(void *dst, const void *src, size_t interval, size_t n,
				    uint64_t *out);
void pi_crc64_copy_multi_pclmul_avx(void *dst, const void *src, size_t interval, size_t n,
				    uint64_t *out);
void pi_crc64_copy_multi_pclmul(void *dst, const void *src, size_t interval, size_t n,
				uint64_t *out);
void pi_crc64_multi_vpclmul512(const void *src, size_t interval, size_t n, uint64_t *out);
void pi_crc64_multi_vpclmul256(const void *src, size_t interval, size_t n, uint64_t *out);
void pi_crc64_multi_pclmul_avx(const void *src, size_t interval, size_t n, uint64_t *out);
void pi_crc64_multi_pclmul(const void *src, size_t interval, size_t n, uint64_t *out);
#endif
#ifdef PI_ARM64
void pi_crc64_copy_multi_pmull(void *dst, const void *src, size_t interval, size_t n,
			       uint64_t *out);
void pi_crc64_multi_pmull(const void *src, size_t interval, size_t n, uint64_t *out);
#endif
void pi_crc64_copy_multi_slice8(void *dst, const void *src, size_t interval, size_t n,
				uint64_t *out);
void pi_crc64_multi_slice8(const void *src, size_t interval, size_t n, uint64_t *out);
/* The name of the path the dispatch chose for this CPU. */
const char *pi_crc64_dispatch_name(void);

/* Every path, best first, ended by a NULL name. */
struct pi_crc64_path {
	const char *name;	/* for people */
	const char *id;		/* short, for scripts */
	uint64_t (*crc)(uint64_t crc, const void *buf, size_t len);
	uint64_t (*copy)(uint64_t crc, void *dst, const void *src, size_t len);
	int (*supported)(void);	/* NULL: everywhere */
	void (*copy_multi)(void *dst, const void *src, size_t interval, size_t n,
			   uint64_t *out);
	void (*multi)(const void *src, size_t interval, size_t n, uint64_t *out);
};
extern const struct pi_crc64_path pi_crc64_paths[];

/*
 * The folding constants, [d / 128][0..1] for a fold forward by d bits
 * (d = 128..1024 in steps of 128, and 2048): rev64(x^(d+63) mod P),
 * rev64(x^(d-1) mod P); and the Barrett constant rev64(mu'), where
 * floor(x^128 / P) = x^64 + mu'.
 */
const uint64_t *pi_crc64_fold_consts(void);
uint64_t pi_crc64_barrett_mu(void);

/*
 * Internet checksum pieces.  pi_ipsum_*() return the one's complement sum of
 * the buffer's 16-bit words in host byte order, folded to 16 bits (0 only
 * for all-zero data), as if the buffer started at an even offset.
 */
uint32_t pi_ipsum_portable(const void *buf, size_t len);
#ifdef PI_X86
/* Only where pi_ipsum_have_avx2(). */
uint32_t pi_ipsum_avx2(const void *buf, size_t len);
int pi_ipsum_have_avx2(void);
#endif
/* The dispatched one. */
uint32_t pi_ipsum(const void *buf, size_t len);
/* The same, of src while copying it to dst (no overlap), in one pass. */
uint32_t pi_ipsum_copy(void *dst, const void *src, size_t len);

/*
 * Every IP sum path, plain and copying (src to dst, no overlap, in one
 * pass where the path can), best first, ended by a NULL name; a path
 * other than the portable one only where its pi_ipsum_have_*() says so.
 * AVX-512 needs AVX512F and AVX512BW (the byte-masked tail).
 */
uint32_t pi_ipsum_copy_portable(void *dst, const void *src, size_t len);
#ifdef PI_X86
uint32_t pi_ipsum_copy_avx2(void *dst, const void *src, size_t len);
uint32_t pi_ipsum_avx512(const void *buf, size_t len);
uint32_t pi_ipsum_copy_avx512(void *dst, const void *src, size_t len);
int pi_ipsum_have_avx512(void);
#endif
/* The name of the path the dispatch chose for this CPU. */
const char *pi_ipsum_dispatch_name(void);

struct pi_ipsum_path {
	const char *name;	/* for people */
	const char *id;		/* short, for scripts */
	uint32_t (*sum)(const void *buf, size_t len);
	uint32_t (*copy)(void *dst, const void *src, size_t len);
	int (*supported)(void);	/* NULL: everywhere */
};
extern const struct pi_ipsum_path pi_ipsum_paths[];

/* One's complement addition of two folded 16-bit sums. */
static inline uint32_t pi_ipsum_add(uint32_t a, uint32_t b)
{
	a += b;
	return (a & 0xffff) + (a >> 16);
}

/*
 * The guard value for a finished sum: complement, then convert from host
 * word order to the big-endian value the tuple stores (see pi_ipcsum.c).
 */
uint16_t pi_ipsum_to_guard(uint32_t sum);

#endif /* _DIOCTL_PI_INTERNAL_H */
