/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * pi_crc16.h - what the CRC-16/T10-DIF files share: pi_crc16.c (tables,
 * the portable versions, ISA-L's, and the choice of a path for the CPU)
 * and pi_crc16_x86.c (VPCLMULQDQ).  Internal to libdioctl.
 */
#ifndef _DIOCTL_PI_CRC16_H
#define _DIOCTL_PI_CRC16_H

#include <stddef.h>
#include <stdint.h>
#include <isa-l/crc.h>

#include "pi_internal.h"

#define CRC16_POLY	0x8bb7

#ifdef PI_X86
/* pi_crc16_x86.c's folding constants, computed at load time. */
void pi_crc16_x86_init(void);
#endif

/*
 * n intervals, one call each: of copy when dst is not NULL, else of
 * ISA-L's crc16_t10dif() (the plain CRC every path here shares).
 */
static inline void crc16_multi_each(uint16_t (*copy)(uint16_t, void *, const void *, size_t),
				    uint8_t *dst, const uint8_t *src, size_t interval,
				    size_t n, uint16_t *out)
{
	for (size_t m = 0, o = 0; m < n; m++, o += interval)
		out[m] = dst ? copy(0, dst + o, src + o, interval) :
			       crc16_t10dif(0, src + o, interval);
}

#endif
