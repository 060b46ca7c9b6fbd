// SPDX-License-Identifier: GPL-2.0
/*
 * dio_batch: the ABI's layout, checked when the module is compiled.
 *
 * abi_layout.h holds the size of every struct of the ABI header, its
 * *_SIZE_VER0, the offset and size of each of its fields and the number
 * of each command, as programs rely on them; tests/unit/test_abi.c and
 * tests/compat32.c check the same table against the header as 64- and
 * 32-bit programs compile it.  A module whose header differs from it does
 * not build.
 */
#include <linux/build_bug.h>
#include <linux/init.h>
#include <linux/limits.h>
#include <linux/stddef.h>

#include "dio_batch.h"

#define DIO_ABI_SIZE(type, size)					\
	BUILD_BUG_ON(sizeof(struct type) != (size))
#define DIO_ABI_CONST(name, value)					\
	BUILD_BUG_ON_MSG((name) != (value), #name " is not " #value)
#define DIO_ABI_FIELD(type, f, off, size)				\
	do {								\
		BUILD_BUG_ON(offsetof(struct type, f) != (off));	\
		BUILD_BUG_ON(sizeof_field(struct type, f) != (size));	\
	} while (0)
/* A command's number without its size bits, which the module ignores. */
#define DIO_IOC_NOSIZE(cmd)	((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))
#define DIO_ABI_IOC(cmd, nr)						\
	BUILD_BUG_ON_MSG(DIO_IOC_NOSIZE(cmd) !=				\
			 _IOC(_IOC_READ | _IOC_WRITE,			\
			      DIO_BATCH_IOC_MAGIC, nr, 0),		\
			 #cmd " is not _IOWR(DIO_BATCH_IOC_MAGIC, " #nr ")")

/**
 * dio_abi_check - the ABI header's layout is the one programs rely on
 *
 * Runs nothing: every check is a BUILD_BUG_ON().  Called from the module's
 * init so that it is compiled with the module.
 */
void __init dio_abi_check(void)
{
#include "abi_layout.h"

	/* Flags and opcodes fit the fields that carry them. */
	BUILD_BUG_ON(DIO_REQ_F_ALL > U16_MAX);
	BUILD_BUG_ON(DIO_PI_F_ALL > U16_MAX);
	BUILD_BUG_ON(DIO_PI_CHK_ALL & ~DIO_PI_F_ALL);
	BUILD_BUG_ON(DIO_OP_LAST >= 32);	/* dio_features.opcodes */
}
