// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Helpers for the guest tests; see testlib.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libkmod.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <linux/fs.h>
#include <linux/nvme_ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

static void tl_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static struct kmod_ctx *tl_kmod(void)
{
	static struct kmod_ctx *ctx;

	if (!ctx) {
		ctx = kmod_new(getenv("DIO_MODDIR"), NULL);
		if (!ctx) {
			fprintf(stderr, "testlib: kmod_new(%s) failed\n",
				getenv("DIO_MODDIR") ?: "default");
			return NULL;
		}
		if (kmod_load_resources(ctx) < 0)
			fprintf(stderr, "testlib: kmod_load_resources failed\n");
	}
	return ctx;
}

static int tl_kmod_load_depends(struct kmod_module *mod)
{
	struct kmod_list *info = NULL, *l;
	int ret = 0;

	if (kmod_module_get_info(mod, &info) < 0)
		return 0;
	kmod_list_foreach(l, info) {
		char *deps, *dep, *save;

		if (strcmp(kmod_module_info_get_key(l), "depends"))
			continue;
		deps = strdup(kmod_module_info_get_value(l));
		for (dep = strtok_r(deps, ",", &save); dep && !ret;
		     dep = strtok_r(NULL, ",", &save))
			ret = tl_kmod_probe(dep, NULL);
		free(deps);
	}
	kmod_module_info_free_list(info);
	return ret;
}

int tl_kmod_insert_path(const char *path, const char *opts)
{
	struct kmod_ctx *ctx = tl_kmod();
	struct kmod_module *mod;
	int ret;

	if (!ctx)
		return -ENOMEM;
	ret = kmod_module_new_from_path(ctx, path, &mod);
	if (ret < 0) {
		fprintf(stderr, "testlib: %s: %s\n", path, strerror(-ret));
		return ret;
	}
	/* A module file's dependencies (modinfo "depends") are ours to load. */
	ret = tl_kmod_load_depends(mod);
	if (ret < 0) {
		kmod_module_unref(mod);
		return ret;
	}
	ret = kmod_module_insert_module(mod, 0, opts);
	if (ret < 0)
		fprintf(stderr, "testlib: insert %s: %s\n", path, strerror(-ret));
	kmod_module_unref(mod);
	return ret;
}

int tl_kmod_probe(const char *name, const char *opts)
{
	struct kmod_ctx *ctx = tl_kmod();
	struct kmod_list *list = NULL, *l;
	int ret;

	if (!ctx)
		return -ENOMEM;
	ret = kmod_module_new_from_lookup(ctx, name, &list);
	if (ret < 0 || !list) {
		fprintf(stderr, "testlib: module %s not found in %s\n", name,
			getenv("DIO_MODDIR") ?: "default dir");
		return ret < 0 ? ret : -ENOENT;
	}
	kmod_list_foreach(l, list) {
		struct kmod_module *mod = kmod_module_get_module(l);

		ret = kmod_module_probe_insert_module(mod,
				0, opts, NULL, NULL,
				NULL);
		if (ret < 0)
			fprintf(stderr, "testlib: probe %s: %s\n", name,
				strerror(-ret));
		kmod_module_unref(mod);
		if (ret < 0)
			break;
	}
	kmod_module_unref_list(list);
	return ret < 0 ? ret : 0;
}

static int tl_kmod_remove_now(const char *name)
{
	struct kmod_ctx *ctx = tl_kmod();
	struct kmod_module *mod;
	int ret, i;

	if (!ctx)
		return -ENOMEM;
	ret = kmod_module_new_from_name(ctx, name, &mod);
	if (ret < 0)
		return ret;
	/*
	 * A disk that was just closed may be held by udev-less probing
	 * briefly, a module by the last references of its objects: up to
	 * 5 s (x tl_slow_factor()) for what takes milliseconds.
	 */
	for (i = 0; i < 50 * tl_slow_factor(); i++) {
		ret = kmod_module_remove_module(mod, 0);
		if (ret != -EBUSY && ret != -EAGAIN)
			break;
		usleep(100000);
	}
	if (ret < 0)
		fprintf(stderr, "testlib: remove %s: %s\n", name, strerror(-ret));
	kmod_module_unref(mod);
	return ret;
}

/* scsi_debug goes as tl_scsi_debug_unload() takes it out (kmodctl remove too). */
int tl_kmod_remove(const char *name)
{
	if (!strcmp(name, "scsi_debug") && tl_module_loaded(name))
		return tl_scsi_debug_unload();
	return tl_kmod_remove_now(name);
}

int tl_module_loaded(const char *name)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return stat(path, &st) == 0;
}

int tl_dio_load(void)
{
	const char *ko = getenv("DIO_KO");

	if (tl_module_loaded("dio_batch"))
		return 0;
	if (!ko) {
		fprintf(stderr, "testlib: DIO_KO is not set\n");
		return -EINVAL;
	}
	return tl_kmod_insert_path(ko, NULL);
}

int tl_dio_unload(void)
{
	return tl_kmod_remove("dio_batch");
}

char *tl_sysfs_read(const char *fmt, ...)
{
	char path[512], buf[512];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return strdup(buf);
}

const char *tl_basename(const char *dev)
{
	const char *s = strrchr(dev, '/');

	return s ? s + 1 : dev;
}

static int tl_is_scsi_debug(const char *name)
{
	char *model = tl_sysfs_read("/sys/block/%s/device/model", name);
	int yes = model && !strncmp(model, "scsi_debug", 10);

	free(model);
	return yes;
}

int tl_scsi_debug_disks(char names[][32], int max)
{
	struct dirent *de;
	int n = 0;
	DIR *d;

	d = opendir("/sys/block");
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		if (strncmp(de->d_name, "sd", 2) || !tl_is_scsi_debug(de->d_name))
			continue;
		snprintf(names[n++], 32, "%.31s", de->d_name);
	}
	closedir(d);
	return n;
}

int tl_scsi_debug_wait_disks(int want, char names[][32], int max)
{
	int n = 0, i;

	for (i = 0; i < 200 * tl_slow_factor(); i++) {
		n = tl_scsi_debug_disks(names, max);
		if (n == want)
			break;
		usleep(50000);
	}
	return n;
}

static int tl_wait_path(const char *path, int seconds)
{
	struct stat st;
	int i;

	for (i = 0; i < seconds * 20 * tl_slow_factor(); i++) {
		if (stat(path, &st) == 0)
			return 0;
		usleep(50000);
	}
	return -ETIMEDOUT;
}

int tl_scsi_debug_load(const char *opts, char *dev, size_t devlen)
{
	char names[8][32];
	int ret, i;

	if (tl_module_loaded("scsi_debug")) {
		ret = tl_scsi_debug_unload();
		if (ret)
			return ret;
	}
	/* sd_mod is not pulled in by scsi_debug on every kernel. */
	ret = tl_kmod_probe("sd_mod", NULL);
	if (ret)
		return ret;
	ret = tl_kmod_probe("scsi_debug", opts);
	if (ret)
		return ret;
	/*
	 * Disks appear while the module loads, or a moment after (the scan
	 * is asynchronous): 10 s (x tl_slow_factor()) for what takes well
	 * under a second, t_bounds' thousand disks aside (it waits itself).
	 */
	for (i = 0; i < 200 * tl_slow_factor(); i++) {
		if (tl_scsi_debug_disks(names, 8) > 0)
			break;
		usleep(50000);
	}
	if (i == 200 * tl_slow_factor()) {
		fprintf(stderr, "testlib: no scsi_debug disk appeared (%s)\n", opts);
		return -ENODEV;
	}
	snprintf(dev, devlen, "/dev/%s", names[0]);
	ret = tl_wait_path(dev, 10);
	if (ret)
		fprintf(stderr, "testlib: %s did not appear\n", dev);
	return ret;
}

/*
 * Bytes zeroed at the start of a disk before its MBR goes in: what the
 * kernel's partition parsers read there (page by page: sector 0's page,
 * the Amiga RDB's first 16 sectors, Ultrix's sector 31, ...) must read
 * back with valid PI, which a block of a fresh QEMU NVMe namespace with PI
 * does not (its ref tag check fails): otherwise sector 0's page is
 * unreadable, and so is the partition table.
 */
#define TL_MBR_ZERO	(1 << 20)

/* One MBR partition entry (or none, @blocks 0), then BLKRRPART. */
static int tl_write_mbr(const char *dev, uint32_t start, uint32_t blocks)
{
	unsigned char mbr[512] = { 0 }, *zero;
	int fd, ret = 0, i;

	if (blocks) {
		mbr[446 + 4] = 0x83;	/* Linux */
		for (i = 0; i < 4; i++) {
			/* Little-endian: first block, then the count. */
			mbr[446 + 8 + i] = start >> (8 * i);
			mbr[446 + 12 + i] = blocks >> (8 * i);
		}
		mbr[510] = 0x55;
		mbr[511] = 0xaa;
	}
	zero = calloc(1, TL_MBR_ZERO);
	if (!zero)
		return -ENOMEM;
	fd = open(dev, O_RDWR | O_SYNC | O_CLOEXEC);
	if (fd < 0) {
		free(zero);
		return -errno;
	}
	/* Buffered: the kernel generates the PI. */
	errno = 0;
	if (pwrite(fd, zero, TL_MBR_ZERO, 0) != TL_MBR_ZERO ||
	    pwrite(fd, mbr, sizeof(mbr), 0) != sizeof(mbr) || fsync(fd) ||
	    ioctl(fd, BLKRRPART))
		ret = errno ? -errno : -EIO;
	close(fd);
	free(zero);
	if (ret)
		fprintf(stderr, "testlib: partition table of %s: %s\n", dev,
			strerror(-ret));
	return ret;
}

int tl_partition_make(const char *dev, uint32_t start, uint32_t blocks,
		      char *part, size_t partlen)
{
	size_t n = strlen(dev);
	int ret;

	/* A disk whose name ends in a digit (nvme0n1) numbers them p1. */
	snprintf(part, partlen, "%s%s1", dev,
		 n && dev[n - 1] >= '0' && dev[n - 1] <= '9' ? "p" : "");
	ret = tl_write_mbr(dev, start, blocks);
	if (ret)
		return ret;
	/* BLKRRPART adds the node (devtmpfs). */
	ret = tl_wait_path(part, 5);
	if (ret)
		fprintf(stderr, "testlib: %s did not appear\n", part);
	return ret;
}

int tl_partition_remove(const char *dev, const char *part)
{
	struct stat st;
	int ret = tl_write_mbr(dev, 0, 0), i;

	if (ret)
		return ret;
	for (i = 0; i < 100 * tl_slow_factor(); i++) {
		if (stat(part, &st) < 0)
			return 0;
		usleep(50000);
	}
	fprintf(stderr, "testlib: %s did not go\n", part);
	return -ETIMEDOUT;
}

#define SD_DRV "/sys/bus/pseudo/drivers/scsi_debug/"
/* Since 6.8 scsi_debug gives each target a debugfs directory there. */
#define SD_DEBUGFS "/sys/kernel/debug/scsi_debug"

/*
 * The names of scsi_debug's per-target debugfs directories ("targetH:C:T"),
 * each followed by a space, after a leading space (" target0:0:0 "), or NULL
 * when there is no such directory; with @hidden only those of targets that
 * sysfs does not show: a host's pseudo target (7.3, below) and targets on
 * their way out.
 */
static char *tl_sd_target_dirs(bool hidden)
{
	struct dirent *de;
	char path[320];
	struct stat st;
	size_t len;
	char *s;
	FILE *f;
	DIR *d;

	d = opendir(SD_DEBUGFS);
	if (!d)
		return NULL;
	f = open_memstream(&s, &len);
	if (!f) {
		closedir(d);
		return NULL;
	}
	fputc(' ', f);
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "target", 6))
			continue;
		snprintf(path, sizeof(path), "/sys/bus/scsi/devices/%s", de->d_name);
		if (hidden && stat(path, &st) == 0)
			continue;
		fprintf(f, "%s ", de->d_name);
	}
	closedir(d);
	fclose(f);
	return s;
}

/* Is @name one of tl_sd_target_dirs()' @dirs? */
static bool tl_sd_listed(const char *dirs, const char *name)
{
	char key[72];

	snprintf(key, sizeof(key), " %.63s ", name);
	return dirs && strstr(dirs, key);
}

/* The number of scsi_debug's only host, or -1. */
static int tl_sd_only_host(void)
{
	struct dirent *de;
	char path[320];
	int host = -1;
	DIR *d, *a;

	d = opendir(SD_DRV);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "adapter", 7))
			continue;
		snprintf(path, sizeof(path), SD_DRV "%s", de->d_name);
		a = opendir(path);
		while (a && (de = readdir(a)))
			if (sscanf(de->d_name, "host%d", &host) == 1)
				break;
		if (a)
			closedir(a);
		break;
	}
	closedir(d);
	return host;
}

/*
 * Makes scsi_debug's module exit safe to run (nothing to do on 6.1, whose
 * scsi_debug has no per-target debugfs directories).
 *
 * Since 6.8 each target has a debugfs directory under SD_DEBUGFS, and
 * sdebug_target_destroy(), called under the host lock, leaves removing it
 * to an async work item in scsi_debug's own exclusive domain:
 * sdebug_tartget_cleanup_async() does debugfs_remove() and kfree().  The
 * only wait for that domain is in sdebug_target_alloc(), before it creates
 * a target's directory (upstream's "scsi: scsi_debug: Fix create target
 * debugfs failure", 6.10).  The module exit (7.3's and 6.12's, read from
 * their disassembly) removes its hosts, which destroys their targets and
 * queues that work, and then removes the root directory without waiting
 * for it: work that runs after that calls debugfs_remove() on a directory
 * already gone (a NULL dereference in a kworker, seen on 7.3 under load),
 * or runs after the module's code was freed.  No upstream fix of the exit
 * was found (searched: the patch above and an upstream scsi_debug.c with
 * atomic writes, 6.11 or later; 7.3's exit still has none).
 *
 * So the hosts go first, here (add_host=-N destroys their targets and
 * queues the work before the write returns), and then the module exit,
 * with no host left, queues no work and removes the root; in between, this
 * waits until no work is left:
 *  - 7.3 (and any kernel whose hosts have a pseudo device, for internal
 *    commands): scsi_add_host() allocates the pseudo device on a target of
 *    its own, so sdebug_target_alloc() runs, and waits for the domain,
 *    before the write that adds a host returns.  That pseudo target is
 *    never destroyed (7.3's scsi_get_pseudo_sdev() keeps the reap count it
 *    starts with, so it stays at one when scsi_forget_host() removes the
 *    pseudo device): its directory stays until the module exit removes the
 *    root, and it queues no work.  It is also why waiting for every target
 *    directory to go never ended on 7.3 (it is the one directory that
 *    sysfs does not show, as targetH:0:T, T the host's max_id).  So a
 *    host with no targets (num_tgts=0) is added and removed: once its
 *    pseudo target's directory, new, is there, the domain was empty, and
 *    nothing was queued after.  That costs a host's addition and removal,
 *    without disks.
 *  - otherwise (6.12, or no new directory appeared): every target directory
 *    must go, for at most 2 s (x tl_slow_factor()); the work takes
 *    milliseconds, or a few hundred on a loaded 2-vCPU guest whose busy
 *    CPUs starve it.  What is left is the work's last instructions after
 *    its directory went, if the unload (milliseconds more) overtakes them.
 */
static void tl_scsi_debug_quiesce(void)
{
	char *hidden, *before, *now, *v, arg[16], name[32];
	bool synced = false;
	int hosts, host, i;

	hidden = tl_sd_target_dirs(true);
	if (!hidden)
		return;
	v = tl_sysfs_read(SD_DRV "add_host");
	hosts = v ? atoi(v) : 0;
	free(v);
	snprintf(arg, sizeof(arg), "-%d", hosts);
	if (hosts > 0 && tl_write_file(SD_DRV "add_host", arg))
		fprintf(stderr, "testlib: scsi_debug: add_host=%s failed\n", arg);
	/* A pseudo target (7.3), or a target on its way out (6.12). */
	if (strcmp(hidden, " ")) {
		before = tl_sd_target_dirs(false);
		if (!tl_write_file(SD_DRV "num_tgts", "0") &&
		    !tl_write_file(SD_DRV "add_host", "1")) {
			host = tl_sd_only_host();
			snprintf(name, sizeof(name), "target%d:0:0", host);
			now = tl_sd_target_dirs(false);
			synced = host >= 0 && !tl_sd_listed(before, name) &&
				 tl_sd_listed(now, name);
			free(now);
			tl_write_file(SD_DRV "add_host", "-1");
		}
		free(before);
	}
	for (i = 0; !synced && i < 200 * tl_slow_factor(); i++) {
		now = tl_sd_target_dirs(false);
		synced = !now || !strcmp(now, " ");
		free(now);
		if (!synced)
			usleep(10000);
	}
	if (!synced)
		fprintf(stderr, "testlib: scsi_debug: target directories still there\n");
	free(hidden);
}

/*
 * Up to 5 s (x tl_slow_factor()) for the module's last references (a disk
 * just closed) to go: its hosts may go only when nothing uses them.
 */
static bool tl_scsi_debug_unused(void)
{
	char *v;
	int i, n;

	for (i = 0; i < 50 * tl_slow_factor(); i++) {
		v = tl_sysfs_read("/sys/module/scsi_debug/refcnt");
		n = v ? atoi(v) : -1;
		free(v);
		if (n == 0)
			return true;
		if (n < 0)
			return false;
		usleep(100000);
	}
	return false;
}

int tl_scsi_debug_unload(void)
{
	if (!tl_module_loaded("scsi_debug"))
		return 0;
	if (tl_scsi_debug_unused())
		tl_scsi_debug_quiesce();
	return tl_kmod_remove_now("scsi_debug");
}

/* Namespace names are not stable across kernels: match them by nsid. */
static int tl_nvme_find(int nsid, char *dev, size_t devlen)
{
	struct dirent *de;
	int found = 0;
	char *v;
	DIR *d;

	d = opendir("/sys/block");
	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		if (strncmp(de->d_name, "nvme0n", 6))
			continue;
		v = tl_sysfs_read("/sys/block/%s/nsid", de->d_name);
		if (v && atoi(v) == nsid) {
			snprintf(dev, devlen, "/dev/%.32s", de->d_name);
			found = 1;
		}
		free(v);
	}
	closedir(d);
	return found;
}

bool tl_nvme_present(int nsid, char *dev, size_t devlen)
{
	return tl_nvme_find(nsid, dev, devlen);
}

/* One Identify command (admin opcode 06h) into @buf (4096 bytes). */
static int tl_nvme_identify(int fd, int nsid, int cns, void *buf)
{
	struct nvme_admin_cmd c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.opcode = 0x06;
	c.nsid = nsid;
	c.addr = (uintptr_t)buf;
	c.data_len = 4096;
	c.cdw10 = cns;		/* CNS; CSI (cdw11 31:24) 0: NVM */
	ret = ioctl(fd, NVME_IOCTL_ADMIN_CMD, &c);
	return ret < 0 ? -errno : ret;	/* > 0: the NVMe status */
}

int tl_nvme_format(int nsid, struct tl_nvme_format *f)
{
	uint8_t *id = NULL;
	unsigned int lbaf;
	int fd, ret;

	memset(f, 0, sizeof(*f));
	if (posix_memalign((void **)&id, 4096, 4096))
		return -ENOMEM;
	fd = open("/dev/nvme0", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		free(id);
		return ret;
	}
	/* Identify Namespace (CNS 00h): FLBAS at 26, DPS at 29, LBAF at 128. */
	ret = tl_nvme_identify(fd, nsid, 0x00, id);
	if (ret)
		goto out;
	lbaf = (id[26] & 0xf) | ((id[26] >> 5) & 3) << 4;
	f->ext = id[26] & 0x10;
	f->pi_type = id[29] & 7;
	f->pi_first = id[29] & 8;
	f->ms = id[128 + 4 * lbaf] | id[128 + 4 * lbaf + 1] << 8;
	f->lba_size = 1U << id[128 + 4 * lbaf + 2];
	/* The NVM command set's (CNS 05h): ELBAF at 12, PIF in bits 8:7. */
	ret = tl_nvme_identify(fd, nsid, 0x05, id);
	if (ret)
		goto out;
	f->pif = (id[12 + 4 * lbaf] | id[12 + 4 * lbaf + 1] << 8) >> 7 & 3;
out:
	if (ret)
		fprintf(stderr, "testlib: Identify of NVMe namespace %d: %d\n", nsid, ret);
	close(fd);
	free(id);
	return ret;
}

int tl_nvme_dev(int nsid, char *dev, size_t devlen)
{
	int ret = tl_kmod_probe("nvme", NULL), i;

	if (ret)
		return ret;
	/*
	 * A controller bound again (t_devloss) resets and scans its
	 * namespaces in the background: seconds under TCG; 20 s (x
	 * tl_slow_factor()).
	 */
	for (i = 0; i < 400 * tl_slow_factor() && !tl_nvme_find(nsid, dev, devlen); i++)
		usleep(50000);
	if (i == 400 * tl_slow_factor()) {
		fprintf(stderr, "testlib: NVMe namespace %d did not appear\n", nsid);
		return -ENODEV;
	}
	ret = tl_wait_path(dev, 10);
	if (ret)
		fprintf(stderr, "testlib: %s did not appear\n", dev);
	return ret;
}

long tl_slab_active(const char *cache)
{
	char path[256];
	char *v;
	long n;
	FILE *f;

	/*
	 * /proc/slabinfo counts SLUB's per-CPU slabs as fully used; flush
	 * them first, then read the objects in use (guests boot with
	 * slab_nomerge, so each cache has its own entry).
	 */
	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", cache);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs("1", f);
	fclose(f);
	v = tl_sysfs_read("/sys/kernel/slab/%s/objects", cache);
	if (!v)
		return -1;
	n = strtol(v, NULL, 10);
	free(v);
	if (strcmp(cache, "dio_kreq"))
		return n;
	/*
	 * Descriptors keep up to 64 freed request structs for reuse: the
	 * requests alive are the objects less those.  No count (debugfs not
	 * mounted, or a module without the cache) is a failure, not a zero.
	 */
	v = tl_sysfs_read("/sys/kernel/debug/dio_batch/kept_kreqs");
	if (!v) {
		fprintf(stderr, "tl_slab_active: no /sys/kernel/debug/dio_batch/kept_kreqs\n");
		return -1;
	}
	n -= strtol(v, NULL, 10);
	free(v);
	return n;
}

long tl_slab_wait(const char *cache, long want, int seconds)
{
	long n = tl_slab_active(cache);
	int i;

	for (i = 0; n != want && i < seconds * 10 * tl_slow_factor(); i++) {
		usleep(100000);
		n = tl_slab_active(cache);
	}
	return n;
}

int tl_slab_reaches(const char *cache, long want, int seconds)
{
	long n = tl_slab_wait(cache, want, seconds);

	if (n != want)
		fprintf(stderr, "testlib: %s: %ld objects, want %ld\n", cache,
			n, want);
	return n == want;
}

int tl_write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/*
 * Write @val to scsi_debug's parameter @param, which it refuses (EBUSY)
 * while commands are queued: retried for 4 s (x tl_slow_factor()), time
 * for the commands of the tests' delays (at most 2 s, x the factor) to
 * complete.
 */
static int tl_scsi_debug_param(const char *param, const char *val)
{
	char path[128];
	int i, ret = 0;

	snprintf(path, sizeof(path), SD_DRV "%s", param);
	for (i = 0; i < 200 * tl_slow_factor(); i++) {
		ret = tl_write_file(path, val);
		if (ret != -EBUSY)
			break;
		usleep(20000);
	}
	return ret;
}

int tl_scsi_debug_ndelay(long ns)
{
	char v[32];
	int ret;

	snprintf(v, sizeof(v), "%ld", ns);
	ret = tl_scsi_debug_param("ndelay", v);
	/*
	 * ndelay 0 gives back the default delay of one jiffy only when an
	 * ndelay was set; after a delay in jiffies (tl_scsi_debug_delay_ms())
	 * that delay stays unless it is set back too.
	 */
	if (!ret && !ns)
		ret = tl_scsi_debug_param("delay", "1");
	return ret;
}

int tl_scsi_debug_delay_ms(long ms)
{
	char v[32];
	int hz;

	if (ms < 1000)
		return tl_scsi_debug_ndelay(ms * 1000000L);
	hz = tl_kernel_hz();
	if (hz < 0)
		return -EIO;
	/* Writing "delay" sets ndelay to 0. */
	snprintf(v, sizeof(v), "%ld", ms * hz / 1000);
	return tl_scsi_debug_param("delay", v);
}

/* The jiffies of the first "jiffies:" line of /proc/timer_list, or -1. */
static long long tl_timer_list_jiffies(void)
{
	FILE *f = fopen("/proc/timer_list", "r");
	long long j = -1;
	char line[256];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "jiffies: %lld", &j) == 1)
			break;
	fclose(f);
	return j;
}

int tl_kernel_hz(void)
{
	/* Not 300: no kernel here uses it, and it lies too near 250. */
	static const int hzs[] = { 100, 250, 1000 };
	static int hz;
	long long j0, j1;
	uint64_t t0, t1;
	double rate;
	int best = 0;

	if (hz)
		return hz;
	t0 = tl_now_ns();
	j0 = tl_timer_list_jiffies();
	usleep(200000);
	t1 = tl_now_ns();
	j1 = tl_timer_list_jiffies();
	if (j0 < 0 || j1 < 0) {
		fprintf(stderr, "testlib: no jiffies in /proc/timer_list\n");
		return -1;
	}
	/*
	 * Jiffies and the monotonic clock advance together, also while the
	 * guest is descheduled; a rate off by 30% (a read of /proc/timer_list
	 * slower than the other by 60 ms) still rounds to the right HZ.
	 */
	rate = (double)(j1 - j0) * 1e9 / (double)(t1 - t0);
	for (int i = 1; i < 3; i++)
		if ((rate - hzs[i]) * (rate - hzs[i]) <
		    (rate - hzs[best]) * (rate - hzs[best]))
			best = i;
	hz = hzs[best];
	tl_say("# HZ %d (%.0f jiffies a second measured)\n", hz, rate);
	return hz;
}

int tl_link_name(const char *path, char *out, size_t len)
{
	char link[512];
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	const char *s;

	out[0] = 0;
	if (n <= 0)
		return n < 0 ? -errno : -ENOENT;
	link[n] = 0;
	s = strrchr(link, '/');
	snprintf(out, len, "%s", s ? s + 1 : link);
	return 0;
}

void tl_scsi_hctl(const char *name, char *out, size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/block/%s/device", name);
	tl_link_name(path, out, len);
}

long tl_dio_refcnt(void)
{
	char *v = tl_sysfs_read("/sys/module/dio_batch/refcnt");
	long n = v ? strtol(v, NULL, 10) : -1;

	free(v);
	return n;
}

/*
 * What cmocka's print_message() does (testlib does not link cmocka): at
 * most 1023 characters, on stdout, flushed.
 */
static void tl_say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("%s", buf);
	fflush(stdout);
}

int tl_dio_caches_drained(int seconds)
{
	static const char *const caches[] = {
		"dio_kreq", "dio_file", "dio_handle", "dio_ctx",
	};
	int ok = 1;

	for (size_t i = 0; i < sizeof(caches) / sizeof(caches[0]); i++) {
		long n = tl_slab_wait(caches[i], 0, seconds);

		if (n != 0) {
			tl_say("# %s: %ld objects left\n", caches[i], n);
			ok = 0;
		}
	}
	return ok;
}

void tl_print_hist(const char *what, const long *hist, int nerr)
{
	char line[1024];
	int n = 0;

	for (int e = 0; e < nerr && n < (int)sizeof(line); e++)
		if (hist[e])
			n += snprintf(line + n, sizeof(line) - n, " %s=%ld",
				      e ? strerror(e) : "ok", hist[e]);
	tl_say("# %s:%s\n", what, n ? line : " none");
}

uint64_t tl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void *tl_alloc(size_t len, int byte)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, len))
		return NULL;
	memset(p, byte, len);
	return p;
}

uint64_t tl_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

uint64_t tl_seed(const char *env)
{
	const char *v = getenv(env);
	uint64_t seed = v && *v ? strtoull(v, NULL, 0) : tl_now_ns() ^ (uint64_t)getpid() << 32;

	printf("# seed %llu (%s=%llu replays it)\n", (unsigned long long)seed, env,
	       (unsigned long long)seed);
	fflush(stdout);
	return seed;
}

uint64_t tl_rand(uint64_t *state)
{
	return tl_mix(*state += 0x9e3779b97f4a7c15ULL);
}

unsigned int tl_rand_below(uint64_t *state, unsigned int n)
{
	return n ? tl_rand(state) % n : 0;
}

void tl_fill(void *buf, size_t len, uint64_t tag)
{
	uint64_t *p = buf;

	for (size_t i = 0; i < len / 8; i++)
		p[i] = tl_mix(tag * 0x100000001b3ULL + i);
}

int tl_slow_factor(void)
{
	static int factor;

	if (!factor) {
		const char *fl = getenv("DIO_FLAVOUR");

		factor = fl && strcmp(fl, "debug") && strcmp(fl, "kcsan") ? 1 : 4;
	}
	return factor;
}

int tl_debug_kernel(void)
{
	const char *fl = getenv("DIO_FLAVOUR");

	if (!fl) {
		fprintf(stderr, "DIO_FLAVOUR is not set (tests/vm/check.sh sets it)\n");
		return -1;
	}
	/* Both sanitizer kernels are slow: time budgets follow "debug". */
	return !strcmp(fl, "debug") || !strcmp(fl, "kcsan");
}

int tl_kernel_at_least(int maj, int min)
{
	struct utsname u;
	int a = 0, b = 0;

	uname(&u);
	sscanf(u.release, "%d.%d", &a, &b);
	return a > maj || (a == maj && b >= min);
}

int tl_sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int tl_dio_ctl_chmod(unsigned int mode, unsigned int *old)
{
	const char *path = "/dev/dio_batch";
	struct stat st;

	if (stat(path, &st)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -errno;
	}
	*old = st.st_mode & 07777;
	if (chmod(path, mode)) {
		fprintf(stderr, "chmod %s %o: %s\n", path, mode, strerror(errno));
		return -errno;
	}
	return 0;
}

int tl_node_give(const char *path, gid_t gid, unsigned int mode,
		 struct tl_node_saved *old)
{
	struct stat st;

	if (stat(path, &st)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -errno;
	}
	*old = (struct tl_node_saved){
		.uid = st.st_uid, .gid = st.st_gid, .mode = st.st_mode & 07777,
		.saved = true,
	};
	if (chown(path, 0, gid) || chmod(path, mode)) {
		fprintf(stderr, "%s: root:%d %o: %s\n", path, (int)gid, mode,
			strerror(errno));
		return -errno;
	}
	return 0;
}

int tl_node_restore(const char *path, struct tl_node_saved *old)
{
	if (!old->saved)
		return 0;
	if (chown(path, old->uid, old->gid) || chmod(path, old->mode)) {
		fprintf(stderr, "restoring %s: %s\n", path, strerror(errno));
		return -errno;
	}
	old->saved = false;
	return 0;
}

int tl_drop_to(uid_t uid, gid_t gid, gid_t group)
{
	if (setgroups(group ? 1 : 0, &group) || setresgid(gid, gid, gid) ||
	    setresuid(uid, uid, uid))
		return -errno;
	return 0;
}

int tl_run_as(uid_t uid, gid_t gid, gid_t group, int (*fn)(void *arg),
	      void *arg)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		if (tl_drop_to(uid, gid, group)) {
			printf("# cannot become %d/%d: %s\n", (int)uid, (int)gid,
			       strerror(errno));
			fflush(stdout);
			_exit(125);
		}
		st = fn(arg);
		fflush(NULL);
		_exit(st);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void tl_child_fail(const char *file, int line, const char *cond,
		   const char *fmt, ...)
{
	const char *name = errno ? strerrorname_np(errno) : "0";
	va_list ap;

	printf("# %s:%d: %s: ", tl_basename(file), line, cond);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" (errno %s)\n", name ? name : "?");
	fflush(NULL);
	_exit(1);
}
