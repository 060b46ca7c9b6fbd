// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mark: execute one instruction at 0x13370000, the address the icount
 * plugin dumps its counts at (bench/icount/icount.c).  Status 1 when the
 * page cannot be mapped there.
 */
#include <stdio.h>
#include <sys/mman.h>

#define MARK_ADDR	0x13370000UL

int main(void)
{
	unsigned char *p = mmap((void *)MARK_ADDR, 4096,
				PROT_READ | PROT_WRITE | PROT_EXEC,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
				-1, 0);

	if (p == MAP_FAILED || p != (unsigned char *)MARK_ADDR) {
		perror("mark: mmap at 0x13370000");
		return 1;
	}
	p[0] = 0xc3;	/* ret */
	((void (*)(void))p)();
	return 0;
}
