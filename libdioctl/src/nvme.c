// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * NVMe: raw reads by passthrough, and what a refused read's tag and
 * values were.
 *
 * Before Linux 6.14 the NVMe driver ignores the block layer's "do not
 * check" flags and loses the status the drive returned (guard 0x282, app
 * tag 0x283, ref tag 0x284) in a plain -EILSEQ, so the module can name the
 * refused interval but not its tag or values, and cannot read it raw
 * (DIO_PI_NOCHECK is -EOPNOTSUPP there).  The driver's passthrough can: a
 * Read (NVME_IOCTL_IO64_CMD) with PRINFO 0 asks the drive for data and
 * metadata with every check off.  From 6.2 a process without
 * CAP_SYS_ADMIN may send it on a descriptor of the whole namespace opened
 * for reading (the driver's command-effects rule); 6.1 wants CAP_SYS_ADMIN
 * for any passthrough, and no kernel lets an unprivileged process send one
 * on a partition.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/nvme_ioctl.h>

#include "dioctl.h"
#include "dioctl_pi.h"
#include "devinfo.h"

#define NVME_CMD_READ		0x02
/* Bytes per passthrough command: under every driver's max_hw_sectors. */
#define RAW_CHUNK		(128 * 1024)

/* The start of @fd's device on its disk, in bytes (a partition's offset). */
static int dev_start(int fd, uint64_t *start)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -1;
	if (!S_ISBLK(st.st_mode)) {
		errno = ENOTTY;
		return -1;
	}
	return dio__part_start(major(st.st_rdev), minor(st.st_rdev), start);
}

/*
 * Is @fd an NVMe namespace's block device (or a partition of one)?  Its
 * sysfs directory, or a partition's parent's, has the namespace's nsid.
 * A stacked device is not, even where its driver passes NVMe ioctls on to
 * the namespace below (device-mapper does, to CAP_SYS_RAWIO, for a table
 * that maps part of a disk): a passthrough there would address the
 * namespace's blocks, not the device's.
 */
static bool is_nvme_ns(int fd)
{
	char path[96];
	struct stat st;

	if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode))
		return false;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/nsid",
		 major(st.st_rdev), minor(st.st_rdev));
	if (access(path, F_OK) == 0)
		return true;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../nsid",
		 major(st.st_rdev), minor(st.st_rdev));
	return access(path, F_OK) == 0;
}

/* An NVMe status (the ioctl's positive return) as an errno. */
static int nvme_status_errno(int status)
{
	switch (status & 0x7ff) {
	case 0x0002:	/* Invalid Field in Command */
	case 0x0080:	/* LBA Out of Range */
		return EINVAL;
	case 0x0281:	/* Unrecovered Read Error */
	default:
		return EIO;
	}
}

/*
 * dio_pi_read_raw() at byte @disk_off of the namespace (a partition's start
 * included), @len and @disk_off already checked against the profile.
 */
static int read_raw_at(int fd, const struct dio_pi_profile *p, void *buf,
		       size_t len, void *md, uint64_t disk_off)
{
	struct nvme_passthru_cmd64 c;
	size_t done, n;
	uint64_t lba;
	int nsid, ret;

	if (!is_nvme_ns(fd)) {
		/* Not an NVMe namespace: the block layer's raw read is the way. */
		errno = ENOTTY;
		return -1;
	}
	nsid = ioctl(fd, NVME_IOCTL_ID);
	if (nsid < 0) {
		if (errno == EINVAL)
			errno = ENOTTY;
		return -1;
	}
	lba = disk_off / p->interval;
	for (done = 0; done < len; done += n, lba += n / p->interval) {
		n = len - done < RAW_CHUNK ? len - done : RAW_CHUNK;
		memset(&c, 0, sizeof(c));
		c.opcode = NVME_CMD_READ;
		c.nsid = nsid;
		c.addr = (uintptr_t)((char *)buf + done);
		c.data_len = n;
		c.metadata = (uintptr_t)((char *)md + done / p->interval * p->md_size);
		c.metadata_len = n / p->interval * p->md_size;
		c.cdw10 = (uint32_t)lba;
		c.cdw11 = (uint32_t)(lba >> 32);
		/* Number of blocks, 0's based; PRINFO (bits 29:26) 0: no check. */
		c.cdw12 = (uint32_t)(n / p->interval - 1);
		ret = ioctl(fd, NVME_IOCTL_IO64_CMD, &c);
		if (ret < 0)
			return -1;
		if (ret > 0) {
			errno = nvme_status_errno(ret);
			return -1;
		}
	}
	return 0;
}

int dio_pi_read_raw(int fd, const struct dio_pi_profile *p, void *buf,
		    size_t len, void *md, uint64_t offset)
{
	ssize_t mdlen;
	uint64_t start;

	mdlen = dio_pi_len(p, len);
	if (mdlen < 0)
		return -1;
	if (!buf || (mdlen && !md) || (offset & (p->interval - 1))) {
		errno = EINVAL;
		return -1;
	}
	if (dev_start(fd, &start) < 0)
		return -1;
	return read_raw_at(fd, p, buf, len, md, start + offset);
}

int dio_pi_explain_error(int fd, const struct dio_pi_profile *p,
			 const struct dio_request *r, struct dio_pi_error *err)
{
	struct dio_pi_params a = { 0 };
	struct dio_pi_error e;
	uint64_t start, off;
	void *data, *md;
	int ret, saved;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!r || r->opcode != DIO_OP_READ || r->result != -EILSEQ ||
	    r->pi_err_source != DIO_PI_SRC_DEVICE || r->pi_err_tag != DIO_PI_TAG_NONE ||
	    r->pi_err_interval == DIO_PI_INTERVAL_UNKNOWN || !p || !err) {
		errno = EINVAL;
		return -1;
	}
	if (dev_start(fd, &start) < 0)
		return -1;
	/* pi_err_interval counts from the start of the disk. */
	off = r->pi_err_interval * p->interval;
	if (off < start || dio_pi_len(p, p->interval) < 0) {
		errno = EINVAL;
		return -1;
	}
	data = aligned_alloc(4096, p->interval < 4096 ? 4096 : p->interval);
	md = calloc(1, p->md_size);
	if (!data || !md) {
		free(data);
		free(md);
		errno = ENOMEM;
		return -1;
	}
	ret = read_raw_at(fd, p, data, p->interval, md, off);
	if (ret == 0) {
		/*
		 * What the drive checked: the guard, the ref tag on types 1
		 * and 2, and the app tag where the request asked for it (and
		 * the kernel passed it on).  Checked in the drive's order.
		 */
		a.seed = r->pi_err_interval;
		a.chk_flags = DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG;
		if (r->pi_flags & DIO_PI_CHK_APPTAG) {
			a.chk_flags |= DIO_PI_CHK_APPTAG;
			a.app_tag = r->app_tag;
			a.app_mask = r->app_tag_mask;
		}
		if (dio_pi_verify(p, data, p->interval, md, &a, &e) == 0) {
			/* Good now: rewritten since, or not the medium's fault. */
			errno = ENODATA;
			ret = -1;
		} else if (errno != EILSEQ) {
			ret = -1;
		} else {
			/* One interval, seeded with its number: e.interval is 0. */
			err->interval = r->pi_err_interval;
			err->ref = e.ref;
			err->expected = e.expected;
			err->actual = e.actual;
			err->tag = e.tag;
		}
	}
	saved = errno;
	free(data);
	free(md);
	errno = saved;
	return ret;
}

/* Deprecated since 1.0.0: dio_pi_explain_error() into the request. */
int dio_pi_explain(int fd, const struct dio_pi_profile *p, struct dio_request *r)
{
	struct dio_pi_error e;

	if (dio_pi_explain_error(fd, p, r, &e) < 0)
		return -1;
	r->pi_err_tag = e.tag;
	r->pi_err_expected = e.expected;
	r->pi_err_actual = e.actual;
	return 0;
}
