/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * pi_crc64.h - what the CRC-64/NVME files share: the polynomial, the
 * tables and folding constants pi_crc64.c computes at load time, and the
 * table steps the folding paths end with.  pi_crc64.c: the tables, the
 * constants and slice-by-8; pi_crc64_x86.c: PCLMULQDQ and VPCLMULQDQ;
 * pi_crc64_arm64.c: PMULL; pi_crc64_dispatch.c: the choice of a path for
 * the CPU, and the dispatched entry points.  Internal to libdioctl.
 */
#ifndef _DIOCTL_PI_CRC64_H
#define _DIOCTL_PI_CRC64_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pi_internal.h"

#define CRC64_POLY	0xad93d23594c93659ULL	/* P', normal form */
#define CRC64_POLY_REFL	0x9a6c9329ac4bc9b5ULL	/* rev64(P') */

#define INLINE inline __attribute__((always_inline))

typedef uint64_t (*crc64_fn)(uint64_t crc, const void *buf, size_t len);
typedef uint64_t (*crc64_copy_fn)(uint64_t crc, void *dst, const void *src, size_t len);
typedef void (*crc64_copy_multi_fn)(void *dst, const void *src, size_t interval, size_t n,
				    uint64_t *out);
typedef void (*crc64_multi_fn)(const void *src, size_t interval, size_t n, uint64_t *out);

/*
 * The tables and constants, filled in by pi_crc64_init() (pi_crc64.c),
 * which pi_crc64_dispatch.c's constructor calls before it chooses a path.
 * The comments of the paths call them crc64_tab, fold_k, kfin and k_mu.
 *
 * pi_crc64_tab[k][b]: the CRC register after byte b followed by k zero
 * bytes.
 */
extern uint64_t pi_crc64_tab[8][256];
/*
 * Folding constants: pi_crc64_fold_k[d / 128] for a fold forward by d
 * bits, d = 128..1024 in steps of 128, and 2048; pi_crc64_k_mu for the
 * Barrett reduction.
 */
extern uint64_t pi_crc64_fold_k[17][2] __attribute__((aligned(16)));
extern uint64_t pi_crc64_k_mu;
/*
 * The end of the multi-interval paths (pi_crc64_copy_multi_*()):
 * kfin[e] takes a 16-byte block with (15 - e) * 16 bytes after it in its
 * interval straight to its share of reduce128()'s T, X * x^64 moved
 * to the end: the fold constants for D = (15 - e) * 128 + 64.  Entries
 * 4j..4j+3 are the lanes of the j-th of four 512-bit registers, 8+2j and
 * 9+2j of the j-th of four 256-bit ones, 8+j of eight 128-bit ones.
 */
extern uint64_t pi_crc64_kfin[16][2] __attribute__((aligned(64)));
void pi_crc64_init(void);

static inline uint64_t load_le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

/* One slice-by-8 step: the register after 8 more bytes (v = reg ^ data). */
static inline uint64_t crc64_step8(uint64_t v)
{
	return pi_crc64_tab[7][v & 0xff] ^ pi_crc64_tab[6][(v >> 8) & 0xff] ^
	       pi_crc64_tab[5][(v >> 16) & 0xff] ^ pi_crc64_tab[4][(v >> 24) & 0xff] ^
	       pi_crc64_tab[3][(v >> 32) & 0xff] ^ pi_crc64_tab[2][(v >> 40) & 0xff] ^
	       pi_crc64_tab[1][(v >> 48) & 0xff] ^ pi_crc64_tab[0][v >> 56];
}

/* Slice-by-8, register in, register out: no inversions (pi_crc64.c). */
uint64_t pi_crc64_reg_slice8(uint64_t reg, const uint8_t *p, size_t len);

/*
 * Bytes src[i..len) by table, copied first when there is a destination:
 * a buffer shorter than 16 bytes, and the PMULL path's last 1 to 15.
 */
static inline uint64_t crc64_tail(uint64_t reg, uint8_t *dst, const uint8_t *src,
				  size_t i, size_t len)
{
	if (dst)
		memcpy(dst + i, src + i, len - i);
	return ~pi_crc64_reg_slice8(reg, src + i, len - i);
}

/*
 * n intervals one call each, copying when dst is not NULL; the multi
 * paths' fallback for an interval that is not a multiple of their round.
 */
static inline void crc64_multi_each(crc64_fn fn, crc64_copy_fn copy, uint8_t *dst,
				    const uint8_t *src, size_t interval, size_t n,
				    uint64_t *out)
{
	for (size_t m = 0, off = 0; m < n; m++, off += interval)
		out[m] = dst ? copy(0, dst + off, src + off, interval) :
			       fn(0, src + off, interval);
}

#endif
