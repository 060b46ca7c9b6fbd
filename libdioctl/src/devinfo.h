/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * devinfo.h - what sysfs and the device tell about a block device that the
 * module's query does not.  Internal: not part of the ABI.
 */
#ifndef _DIOCTL_DEVINFO_H
#define _DIOCTL_DEVINFO_H

/*
 * The T10 protection type of block device MAJOR:MINOR (1, 2 or 3), as the
 * disk itself says: SCSI's protection_type in sysfs, NVMe's Identify
 * Namespace (DPS).  0 when it cannot be learnt (no such attribute, the
 * kernel refuses the Identify, not SCSI or NVMe).
 */
int dio__pi_type_of(unsigned int major, unsigned int minor);

#endif /* _DIOCTL_DEVINFO_H */
