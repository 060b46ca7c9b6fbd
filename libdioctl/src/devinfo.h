/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * devinfo.h - what sysfs and the device tell about a block device that the
 * module's query does not.  Internal: not part of the ABI.
 */
#ifndef _DIOCTL_DEVINFO_H
#define _DIOCTL_DEVINFO_H

#include <stdint.h>

/*
 * The T10 protection type of block device MAJOR:MINOR (1, 2 or 3), as the
 * disk itself says: SCSI's protection_type in sysfs, NVMe's Identify
 * Namespace (DPS).  0 when it cannot be learnt (no such attribute, the
 * kernel refuses the Identify, not SCSI or NVMe).
 */
int dio__pi_type_of(unsigned int major, unsigned int minor);

/*
 * Where block device MAJOR:MINOR starts on its whole disk, in bytes, from
 * sysfs (/sys/dev/block/MAJOR:MINOR/start, in 512-byte sectors): the
 * library's one reading of it, for modules older than ABI 4 (no
 * DIO_FEAT_PART_START), whose query leaves part_start_bytes 0, and for
 * the NVMe passthrough, which has a descriptor and no query.  0 with
 * *@bytes set (0 when there is no such attribute: a whole disk, or no
 * sysfs), or -1 with errno EIO when the attribute cannot be parsed.
 */
int dio__part_start(unsigned int major, unsigned int minor, uint64_t *bytes);

#endif /* _DIOCTL_DEVINFO_H */
