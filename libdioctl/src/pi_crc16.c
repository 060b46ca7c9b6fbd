// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * CRC-16/T10-DIF: polynomial 0x8BB7, initial value 0, MSB first (not
 * reflected), no final XOR.
 *
 * The public function is ISA-L's crc16_t10dif(), which picks a PCLMULQDQ
 * folding kernel for the CPU at run time.  The byte-table and slice-by-8
 * versions here are the portable reference the tests compare it with and
 * the baselines the benchmark measures.
 */
#include <string.h>
#include <isa-l/crc.h>

#include "dioctl_pi.h"
#include "pi_internal.h"

#define CRC16_POLY	0x8bb7

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
