// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * What sysfs and the device tell about a block device that the module's
 * query does not: the T10 protection type of a type 2 device, which the
 * kernel's integrity profiles (and so the module) report as type 1; and,
 * for modules older than ABI 4, where a partition starts on its disk.
 *
 * SCSI disks show it in sysfs (scsi_disk/H:C:T:L/protection_type).  NVMe
 * namespaces do not: the Identify Namespace data does (DPS, byte 29, bits
 * 2:0), which an unprivileged process may ask for from Linux 6.2 on a
 * descriptor of the namespace; 6.1 wants CAP_SYS_ADMIN.  A partition's
 * answers are its disk's.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/nvme_ioctl.h>

#include "devinfo.h"

#define NVME_ADMIN_IDENTIFY	0x06
#define NVME_ID_NS_DPS		29

static int read_uint(const char *path, unsigned int *v)
{
	FILE *f = fopen(path, "re");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "%u", v);
	fclose(f);
	return n == 1 ? 0 : -1;
}

/* The sysfs directory of MAJOR:MINOR's whole disk into @dir. */
static int disk_dir(unsigned int major, unsigned int minor, char *dir, size_t len)
{
	char path[128];
	unsigned int part;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/partition", major, minor);
	if (read_uint(path, &part) == 0)
		snprintf(dir, len, "/sys/dev/block/%u:%u/..", major, minor);
	else
		snprintf(dir, len, "/sys/dev/block/%u:%u", major, minor);
	return access(dir, F_OK);
}

static int scsi_pi_type(const char *dir)
{
	char pattern[192];
	unsigned int type;
	glob_t g;
	int ret = 0;

	snprintf(pattern, sizeof(pattern), "%s/device/scsi_disk/*/protection_type", dir);
	if (glob(pattern, 0, NULL, &g) != 0)
		return 0;
	if (g.gl_pathc == 1 && read_uint(g.gl_pathv[0], &type) == 0 && type >= 1 && type <= 3)
		ret = (int)type;
	globfree(&g);
	return ret;
}

static int nvme_pi_type(const char *dir)
{
	char path[192], name[64] = "", line[128];
	struct nvme_passthru_cmd c;
	unsigned int nsid;
	uint8_t id[4096];
	FILE *f;
	int fd, ret;

	snprintf(path, sizeof(path), "%s/nsid", dir);
	if (read_uint(path, &nsid) < 0)
		return 0;
	snprintf(path, sizeof(path), "%s/uevent", dir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "DEVNAME=%63s", name) == 1)
			break;
	fclose(f);
	if (!name[0])
		return 0;
	snprintf(path, sizeof(path), "/dev/%s", name);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	memset(&c, 0, sizeof(c));
	c.opcode = NVME_ADMIN_IDENTIFY;
	c.nsid = nsid;
	c.addr = (uintptr_t)id;
	c.data_len = sizeof(id);
	c.cdw10 = 0;		/* CNS 0: Identify Namespace */
	ret = ioctl(fd, NVME_IOCTL_ADMIN_CMD, &c);
	close(fd);
	if (ret != 0)
		return 0;
	ret = id[NVME_ID_NS_DPS] & 7;
	return ret >= 1 && ret <= 3 ? ret : 0;
}

int dio__pi_type_of(unsigned int major, unsigned int minor)
{
	char dir[96];
	int saved = errno, type;

	if (disk_dir(major, minor, dir, sizeof(dir)) < 0) {
		errno = saved;
		return 0;
	}
	type = scsi_pi_type(dir);
	if (!type)
		type = nvme_pi_type(dir);
	errno = saved;
	return type;
}

int dio__part_start(unsigned int major, unsigned int minor, uint64_t *bytes)
{
	unsigned long long sectors;
	char path[64];
	FILE *f;
	int n;

	*bytes = 0;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/start", major, minor);
	f = fopen(path, "re");
	if (!f)
		return 0;	/* a whole disk has no start attribute */
	n = fscanf(f, "%llu", &sectors);
	fclose(f);
	if (n != 1 || sectors > UINT64_MAX / 512) {
		errno = EIO;
		return -1;
	}
	*bytes = (uint64_t)sectors * 512;	/* sysfs counts 512-byte sectors */
	return 0;
}
