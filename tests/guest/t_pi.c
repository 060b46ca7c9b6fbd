// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Protection information end to end, on every profile the guest offers:
 * user PI written and read back, kernel-generated PI cross-checked with
 * libdioctl, app tags, exact failure reports (wrong guard, ref and app
 * tags refused by the device; data corrupted behind an NVMe namespace's
 * back), DIO_PI_VERIFY_USER, raw reads, partitions, and bad PI input.
 * NVMe nsid 4 has more metadata than PI (16 bytes, the tuple first): its
 * other 8 bytes per block are the caller's, stored and returned as they
 * are, and zero where the kernel or the module generates the PI.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "testlib.h"
#include "tl_dev.h"

#define LEN	(64 * 1024)

/* The random source of the devices' data (tl_rand()), seeded in main(). */
static uint64_t rs;

/*
 * The descriptors of the devices open now (tl_fd_track()).  A failed
 * assertion leaves its test at once; teardown() then closes what it left
 * open (tl_fd_close_all()) and unloads scsi_debug, so that the next test
 * starts on a clean guest and reports its own result.
 */
static int teardown(void **state)
{
	tl_fd_close_all();
	return tl_scsi_debug_unload();
}

/*
 * @path in a private context of its own (tl_dev_open()): random data, and
 * random metadata that is not PI (none unless pi_md_size > the tuple),
 * bytes of the caller's, which libdioctl's generation leaves alone and the
 * device must store and return untouched.
 */
static void dev_open_random(struct tl_dev *d, const char *path)
{
	tl_dev_open(d, -1, path, 0, LEN);
	for (size_t i = 0; i < LEN; i++)
		d->data[i] = (unsigned char)tl_rand(&rs);
	for (size_t i = 0; i < d->pilen; i++)
		d->pi[i] = (unsigned char)tl_rand(&rs);
}

static uint64_t seed_of(struct tl_dev *d, uint64_t off)
{
	return off / d->q.pi_interval;
}

static void write_pi(struct tl_dev *d, uint64_t off, uint16_t app, unsigned int flags,
		     struct dio_request *r)
{
	dio_req_prep_write(r, d->h, d->data, LEN, off);
	dio_req_set_pi(r, d->pi, d->pilen, flags, 0, 0);
	if (flags & DIO_PI_CHK_APPTAG) {
		r->app_tag = app;
		r->app_tag_mask = 0xffff;
	}
}

static void read_pi(struct tl_dev *d, uint64_t off, unsigned int flags,
		    uint16_t app, uint16_t mask, struct dio_request *r)
{
	memset(d->back, 0, LEN);
	memset(d->pi2, 0xee, d->pilen);
	dio_req_prep_read(r, d->h, d->back, LEN, off);
	dio_req_set_pi(r, d->pi2, d->pilen, flags, app, mask);
}

/* Is byte @b of an interval's metadata outside the PI tuple? */
static int opaque_byte(const struct dio_query *q, unsigned int b)
{
	return b < q->pi_offset || b >= q->pi_offset + q->pi_tuple_size;
}

/*
 * The metadata bytes that are not PI in the @len bytes of PI buffer @pi:
 * 1 when each equals the same byte of @ref (or @byte, when @ref is NULL).
 * Prints the first one that differs.
 */
static int opaque_equal(const struct dio_query *q, const unsigned char *pi,
			const unsigned char *ref, int byte, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		int want = ref ? ref[i] : byte;

		if (opaque_byte(q, i % q->pi_md_size) && pi[i] != want) {
			print_message("# metadata byte %zu (interval %zu, byte %zu): %#x, want %#x\n",
				      i, i / q->pi_md_size, i % q->pi_md_size, pi[i], want);
			return 0;
		}
	}
	return 1;
}

/* Big-endian field of @n bytes. */
static uint64_t be_get(const unsigned char *p, int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | *p++;
	return v;
}

/* Bytes of guard in a tuple: 8 for CRC64, 2 otherwise. */
static int guard_size(const struct tl_dev *d)
{
	return d->q.pi_guard_type == DIO_GUARD_CRC64 ? 8 : 2;
}

/* The tags of tuple @t, as the module reports them. */
static uint64_t tuple_guard(const struct tl_dev *d, const unsigned char *t)
{
	return be_get(t, guard_size(d));
}

static uint64_t tuple_ref(const struct tl_dev *d, const unsigned char *t)
{
	return be_get(t + guard_size(d) + 2, d->q.pi_ref_tag_size);
}

static void tuple_set_app(const struct tl_dev *d, unsigned char *t, uint16_t app)
{
	t[guard_size(d)] = app >> 8;
	t[guard_size(d) + 1] = app & 0xff;
}

/*
 * The guard of one interval of @data, computed with libdioctl: what the
 * module must report as expected when a stored or supplied guard is wrong.
 */
static uint64_t guard_of(const struct tl_dev *d, const void *data)
{
	switch (d->q.pi_guard_type) {
	case DIO_GUARD_CRC16:
		return dio_pi_crc16_t10dif(0, data, d->q.pi_interval);
	case DIO_GUARD_IP:
		return dio_pi_ip_checksum(data, d->q.pi_interval);
	case DIO_GUARD_CRC64:
		return dio_pi_crc64_nvme(0, data, d->q.pi_interval);
	}
	fail_msg("unknown guard type %u", d->q.pi_guard_type);
	return 0;
}

static int is_nvme(const struct tl_dev *d)
{
	return !strncmp(d->path, "/dev/nvme", 9);
}

/*
 * Who reports a wrong app tag the caller asked the module to check on a
 * read: since 6.14 NVMe checks it itself and refuses the read first (the
 * module then finds the block reading raw); the SCSI disks here never
 * check app tags, so the module's own verification finds it.
 */
static int app_src(const struct tl_dev *d)
{
	return is_nvme(d) && tl_kernel_at_least(6, 14) ? DIO_PI_SRC_DEVICE :
							 DIO_PI_SRC_MODULE;
}

/*
 * @r failed on PI with exactly this report.  The whole report is printed
 * first when any field differs, so a failure shows what came back.
 */
static void assert_pi_err(const char *what, const struct dio_request *r,
			  int source, uint64_t sector, int tag,
			  uint64_t expected, uint64_t actual)
{
	if (r->result != -EILSEQ || r->pi_err_source != source ||
	    r->pi_err_interval != sector || r->pi_err_tag != tag ||
	    r->pi_err_expected != expected || r->pi_err_actual != actual)
		print_message("# %s: result %lld source %u sector %llu tag %u expected %#llx actual %#llx; "
			      "want -EILSEQ source %d sector %llu tag %d expected %#llx actual %#llx\n",
			      what, (long long)r->result, r->pi_err_source,
			      (unsigned long long)r->pi_err_interval, r->pi_err_tag,
			      (unsigned long long)r->pi_err_expected,
			      (unsigned long long)r->pi_err_actual, source,
			      (unsigned long long)sector, tag,
			      (unsigned long long)expected,
			      (unsigned long long)actual);
	assert_int_equal(r->result, -EILSEQ);
	assert_int_equal(r->pi_err_source, source);
	assert_int_equal(r->pi_err_interval, sector);
	assert_int_equal(r->pi_err_tag, tag);
	assert_int_equal(r->pi_err_expected, expected);
	assert_int_equal(r->pi_err_actual, actual);
}

/*
 * Submit @r, which DIO_PI_VERIFY_USER must refuse before any I/O: SUBMIT
 * fails with EILSEQ and the report is in @r.
 */
static void assert_refused(const char *what, struct tl_dev *d, struct dio_request *r,
			   uint64_t sector, int tag, uint64_t expected,
			   uint64_t actual)
{
	struct dio_request *rp = r;

	assert_int_equal(sys_dio_submit(d->ctx, &rp, 1), -1);
	assert_int_equal(errno, EILSEQ);
	assert_pi_err(what, r, DIO_PI_SRC_USER, sector, tag, expected, actual);
}

/*
 * Every PI feature on one device, whose format must be @profile with
 * @interval-byte protection intervals of T10 type @type.
 */
static void check_profile(const char *path, const char *profile,
			  unsigned int interval, int type)
{
	struct dio_request r;
	struct dio_pi_error e;
	uint64_t off = 8 * LEN, seed;
	struct tl_dev d;
	unsigned char *t;
	int type1;

	dev_open_random(&d, path);
	print_message("# %s: %s, %u-byte intervals\n", path, d.q.profile,
		      d.q.pi_interval);
	assert_string_equal(d.q.profile, profile);
	assert_int_equal(d.q.pi_interval, interval);
	assert_int_equal(d.q.logical_block_size, interval);
	assert_int_equal(d.q.pi_type, type);
	type1 = d.q.pi_type != 3;	/* types 1 and 2 */
	seed = seed_of(&d, off);

	/*
	 * 1. User PI round trip; the metadata beyond the PI, where there is
	 * some, is random and comes back as it was written.
	 */
	memcpy(d.pi2, d.pi, d.pilen);
	assert_int_equal(dio_pi_generate(&d.p, d.data, LEN, d.pi,
					 &(struct dio_pi_params){ .seed = seed, .app_tag = 0x1234 }), 0);
	assert_true(opaque_equal(&d.q, d.pi, d.pi2, 0, d.pilen));
	write_pi(&d, off, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	read_pi(&d, off, DIO_PI_CHK_GUARD | (type1 ? DIO_PI_CHK_REFTAG : 0) | DIO_PI_CHK_APPTAG,
		0x1234, 0xffff, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	assert_memory_equal(d.back, d.data, LEN);
	assert_memory_equal(d.pi2, d.pi, d.pilen);
	if (d.q.pi_md_size > d.q.pi_tuple_size) {
		/*
		 * 1b. The bytes beyond the PI are nobody's business but the
		 * caller's: other ones, the same tuples, pass the caller's
		 * verification and the device's, and come back.
		 */
		for (size_t i = 0; i < d.pilen; i++)
			if (opaque_byte(&d.q, i % d.q.pi_md_size))
				d.pi[i] ^= 0x5a;
		write_pi(&d, off, 0, DIO_PI_VERIFY_USER, &r);
		assert_int_equal(tl_dev_run(&d, &r), 0);
		assert_int_equal(r.result, LEN);
		read_pi(&d, off, DIO_PI_CHK_GUARD | (type1 ? DIO_PI_CHK_REFTAG : 0),
			0, 0, &r);
		assert_int_equal(tl_dev_run(&d, &r), 0);
		assert_int_equal(r.result, LEN);
		assert_memory_equal(d.pi2, d.pi, d.pilen);
		assert_int_equal(dio_pi_verify(&d.p, d.back, LEN, d.pi2,
					       &(struct dio_pi_params){ .seed = seed,
									.app_tag = 0x1234,
									.app_mask = 0xffff,
									.chk_flags = DIO_PI_CHK_ALL & ~(type1 ? 0 : DIO_PI_CHK_REFTAG) },
					       &e), 0);
	}

	/* 2. The app tag is checked: a wrong one is reported at the first block. */
	read_pi(&d, off, DIO_PI_CHK_APPTAG, 0x4321, 0xffff, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_pi_err("app tag, every block", &r, app_src(&d), seed, DIO_PI_TAG_APP,
		      0x4321, 0x1234);
	/* ... under its mask. */
	read_pi(&d, off, DIO_PI_CHK_APPTAG, 0x1299, 0xff00, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);

	/*
	 * 2b. One tuple, not the first, with another app tag.  No device
	 * checks app tags on a write that does not ask for it, so it is
	 * stored; a read checking the app tag names that block, the tag
	 * asked for and the one stored.
	 */
	assert_int_equal(dio_pi_generate(&d.p, d.data, LEN, d.pi,
					 &(struct dio_pi_params){ .seed = seed, .app_tag = 0x1234 }), 0);
	tuple_set_app(&d, tl_dev_tuple(&d, d.pi, 6), 0x1234 ^ 0x0808);
	write_pi(&d, off, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	read_pi(&d, off, DIO_PI_CHK_APPTAG, 0x1234, 0xffff, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_pi_err("app tag, block 6", &r, app_src(&d), seed + 6, DIO_PI_TAG_APP,
		      0x1234, 0x1234 ^ 0x0808);
	/* ... and the same PI refused before submission by DIO_PI_VERIFY_USER. */
	write_pi(&d, off, 0x1234, DIO_PI_VERIFY_USER | DIO_PI_CHK_APPTAG, &r);
	assert_refused("verify user, app tag", &d, &r, seed + 6, DIO_PI_TAG_APP,
		       0x1234, 0x1234 ^ 0x0808);
	/*
	 * DIO_PI_CHK_APPTAG alone on a write is never ignored: the drives
	 * of these kernels do not check app tags, so the module does, before
	 * submission, and refuses the same way.
	 */
	write_pi(&d, off, 0x1234, DIO_PI_CHK_APPTAG, &r);
	assert_refused("write, app tag check", &d, &r, seed + 6, DIO_PI_TAG_APP,
		       0x1234, 0x1234 ^ 0x0808);
	/* A write without a PI buffer has nothing of the caller's to check. */
	dio_req_prep_write(&r, d.h, d.data, LEN, off);
	r.pi_flags = DIO_PI_CHK_GUARD;
	assert_int_equal(tl_dev_run(&d, &r), -EINVAL);
	r.pi_flags = DIO_PI_GEN_APPTAG | DIO_PI_CHK_APPTAG;
	r.app_tag = 0x1234;
	r.app_tag_mask = 0xffff;
	assert_int_equal(tl_dev_run(&d, &r), -EINVAL);

	/*
	 * 3. Kernel-generated PI, fetched and verified with libdioctl; the
	 * block layer zeroes the metadata beyond the PI (it never sends
	 * what its buffer held before).
	 */
	dio_req_prep_write(&r, d.h, d.data, LEN, off);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	read_pi(&d, off, 0, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	assert_memory_equal(d.back, d.data, LEN);
	assert_int_equal(dio_pi_verify(&d.p, d.back, LEN, d.pi2,
				       &(struct dio_pi_params){ .seed = seed,
								.chk_flags = DIO_PI_CHK_GUARD | (type1 ? DIO_PI_CHK_REFTAG : 0) },
				       &e), 0);
	assert_true(opaque_equal(&d.q, d.pi2, NULL, 0, d.pilen));

	/*
	 * 4. App tag generated by the module for a write without PI.  Right
	 * after a write of the caller's PI (random bytes beyond the tuples),
	 * so that a PI buffer the module does not clear would likely be that
	 * one again, and those bytes would show.
	 */
	assert_int_equal(dio_pi_generate(&d.p, d.data, LEN, d.pi,
					 &(struct dio_pi_params){ .seed = seed, .app_tag = 0x1234 }), 0);
	write_pi(&d, off, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	dio_req_prep_write(&r, d.h, d.data, LEN, off);
	r.pi_flags = DIO_PI_GEN_APPTAG;
	r.app_tag = 0x5555;
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	read_pi(&d, off, 0, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	assert_memory_equal(d.back, d.data, LEN);
	assert_int_equal(dio_pi_verify(&d.p, d.back, LEN, d.pi2,
				       &(struct dio_pi_params){ .seed = seed, .app_tag = 0x5555,
								.app_mask = 0xffff,
								.chk_flags = DIO_PI_CHK_ALL & ~(type1 ? 0 : DIO_PI_CHK_REFTAG) },
				       &e), 0);
	/* The module's own PI buffer: no kernel memory beyond the tuples. */
	assert_true(opaque_equal(&d.q, d.pi2, NULL, 0, d.pilen));

	/*
	 * 5. A wrong guard in block 3: the device refuses, the module says
	 * where, with the guard of the data (expected) and the one sent.
	 */
	assert_int_equal(dio_pi_generate(&d.p, d.data, LEN, d.pi,
					 &(struct dio_pi_params){ .seed = seed }), 0);
	t = tl_dev_tuple(&d, d.pi, 3);
	t[0] ^= 0x01;
	assert_int_equal(tuple_guard(&d, t) ^ guard_of(&d, d.data + 3 * interval),
			 d.q.pi_guard_type == DIO_GUARD_CRC64 ? 1ULL << 56 : 0x100);
	write_pi(&d, off, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_pi_err("guard, block 3", &r, DIO_PI_SRC_DEVICE, seed + 3, DIO_PI_TAG_GUARD,
		      guard_of(&d, d.data + 3 * interval), tuple_guard(&d, t));

	/* 6. The same, caught before submission by DIO_PI_VERIFY_USER. */
	write_pi(&d, off, 0, DIO_PI_VERIFY_USER | DIO_PI_CHK_GUARD, &r);
	assert_refused("verify user, guard", &d, &r, seed + 3, DIO_PI_TAG_GUARD,
		       guard_of(&d, d.data + 3 * interval), tuple_guard(&d, t));

	/* 7. A wrong ref tag in block 5 (type 1 only: type 3 has none). */
	if (type1) {
		assert_int_equal(dio_pi_generate(&d.p, d.data, LEN, d.pi,
						 &(struct dio_pi_params){ .seed = seed }), 0);
		t = tl_dev_tuple(&d, d.pi, 5);
		t[d.q.pi_tuple_size - 1] ^= 0x40;
		assert_int_equal(tuple_ref(&d, t), (seed + 5) ^ 0x40);
		write_pi(&d, off, 0, 0, &r);
		assert_int_equal(tl_dev_run(&d, &r), 0);
		assert_pi_err("ref tag, block 5", &r, DIO_PI_SRC_DEVICE, seed + 5,
			      DIO_PI_TAG_REF, seed + 5, (seed + 5) ^ 0x40);
		/* DIO_PI_VERIFY_USER checks guard and ref tag by default. */
		write_pi(&d, off, 0, DIO_PI_VERIFY_USER, &r);
		assert_refused("verify user, ref tag", &d, &r, seed + 5, DIO_PI_TAG_REF,
			       seed + 5, (seed + 5) ^ 0x40);
	}

	/* 8. Bad PI input. */
	write_pi(&d, off, 0, 0, &r);
	r.pi_len -= d.q.pi_md_size;
	assert_int_equal(tl_dev_run(&d, &r), -EINVAL);
	r.pi_len += 2 * d.q.pi_md_size;
	assert_int_equal(tl_dev_run(&d, &r), -EINVAL);
	r.pi_len = d.pilen;
	r.pi_buf += 4;
	assert_int_equal(tl_dev_run(&d, &r), -EINVAL);
	r.pi_buf = (uintptr_t)mmap(NULL, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_int_equal(tl_dev_run(&d, &r), -EFAULT);
	read_pi(&d, off, 0, 0, 0, &r);
	r.pi_buf = (uintptr_t)mmap(NULL, 1 << 20, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_int_equal(tl_dev_run(&d, &r), -EFAULT);
	write_pi(&d, off, 0, 1U << 9, &r);
	assert_int_equal(tl_dev_run(&d, &r), -EINVAL);
	write_pi(&d, off, 0, DIO_PI_NOCHECK, &r);
	assert_int_equal(tl_dev_run(&d, &r), -EINVAL);
	write_pi(&d, off, 0, 0, &r);
	r.app_tag = 7;		/* no flag uses it */
	assert_int_equal(tl_dev_run(&d, &r), -EINVAL);
	if (!type1) {
		read_pi(&d, off, DIO_PI_CHK_REFTAG, 0, 0, &r);
		assert_int_equal(tl_dev_run(&d, &r), -EOPNOTSUPP);
	}
	tl_dev_close(&d);
}

/*
 * Each scsi_debug format at both sector sizes: types 1 and 3 with CRC and
 * IP guards (dif=2 is type 2, which the kernel and the query report as
 * type 1).
 */
static void test_scsi_debug_profiles(void **state)
{
	static const struct {
		const char *opts, *profile;
		unsigned int interval;
		int type;
	} prof[] = {
		{ "dif=1 dix=1 guard=0", "T10-DIF-TYPE1-CRC", 512, 1 },
		{ "dif=1 dix=1 guard=0 sector_size=4096", "T10-DIF-TYPE1-CRC", 4096, 1 },
		/* Type 2: the kernel says type 1, libdioctl asks sysfs. */
		{ "dif=2 dix=1 guard=0 sector_size=4096", "T10-DIF-TYPE1-CRC", 4096, 2 },
		{ "dif=1 dix=1 guard=1", "T10-DIF-TYPE1-IP", 512, 1 },
		{ "dif=1 dix=1 guard=1 sector_size=4096", "T10-DIF-TYPE1-IP", 4096, 1 },
		{ "dif=3 dix=1 guard=0", "T10-DIF-TYPE3-CRC", 512, 3 },
		{ "dif=3 dix=1 guard=0 sector_size=4096", "T10-DIF-TYPE3-CRC", 4096, 3 },
		{ "dif=3 dix=1 guard=1", "T10-DIF-TYPE3-IP", 512, 3 },
		{ "dif=3 dix=1 guard=1 sector_size=4096", "T10-DIF-TYPE3-IP", 4096, 3 },
	};
	char o[128], dev[64];
	size_t i;

	for (i = 0; i < sizeof(prof) / sizeof(prof[0]); i++) {
		snprintf(o, sizeof(o), "dev_size_mb=16 %s", prof[i].opts);
		print_message("# scsi_debug %s\n", o);
		assert_int_equal(tl_scsi_debug_load(o, dev, sizeof(dev)), 0);
		check_profile(dev, prof[i].profile, prof[i].interval, prof[i].type);
		assert_int_equal(tl_scsi_debug_unload(), 0);
	}
}

/* The guest's NVMe namespaces, by nsid (see tests/README.md). */
static const struct {
	const char *profile;
	unsigned int interval;
	int type;
} nvme_ns[] = {
	[1] = { "T10-DIF-TYPE1-CRC", 512, 1 },
	[2] = { "EXT-DIF-TYPE1-CRC64", 4096, 1 },
	[3] = { "T10-DIF-TYPE3-CRC", 512, 3 },
	[4] = { "T10-DIF-TYPE1-CRC", 512, 1 },	/* 16-byte metadata, PI first */
	[5] = { "T10-DIF-TYPE1-CRC", 512, 2 },	/* type 2: libdioctl asks Identify */
};
#define NVME_NS_LAST	5

static void test_nvme_profiles(void **state)
{
	char dev[64];
	int ns;

	for (ns = 1; ns <= NVME_NS_LAST; ns++) {
		assert_int_equal(tl_nvme_dev(ns, dev, sizeof(dev)), 0);
		check_profile(dev, nvme_ns[ns].profile, nvme_ns[ns].interval,
			      nvme_ns[ns].type);
	}
}

/*
 * Requests larger than one bio: the module builds bios of at most 256
 * segments (about 1 MiB of small pages), and the block layer splits them
 * further to the driver's limits.  Each bio carries its slice of the request's PI, so a tuple in
 * a later bio must still be reported at its own interval.
 */
#define BIG_OFF	(4ULL << 20)
#define BIG_APP	0x2468

struct big {
	size_t len, n, pilen;		/* data bytes, intervals, PI bytes */
	unsigned char *data;		/* the data, contiguous */
	unsigned char *back, *pi, *pi2;	/* read back; PI written; PI read */
	unsigned char *pool;		/* with @iov: the segments' memory */
	size_t poollen;
	struct iovec *iov;		/* NULL: one buffer, @data itself */
	int iovcnt;
};

static void *big_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	/*
	 * Small pages, so that a bio holds at most 1 MiB of them; a kernel
	 * without transparent huge pages (the debug build) has only those
	 * and refuses the advice with EINVAL.
	 */
	if (madvise(p, len, MADV_NOHUGEPAGE))
		assert_int_equal(errno, EINVAL);
	return p;
}

/*
 * @len bytes for @d; with @iovec, as an iovec of segments whose lengths
 * alternate between 8 KiB minus and plus one interval, each at its own
 * page-aligned address with a page of hole after it: no two segments are
 * contiguous, and with 512-byte intervals none ends on a page boundary.
 */
static void big_init(struct tl_dev *d, struct big *b, size_t len, int iovec)
{
	const size_t iv = d->q.pi_interval, stride = 16384;
	size_t pos = 0;
	int i;

	memset(b, 0, sizeof(*b));
	b->len = len;
	b->n = len / iv;
	b->pilen = b->n * d->q.pi_md_size;
	assert_true(b->pilen <= 64 * 1024);	/* max_pi_bytes */
	b->data = big_alloc(len);
	b->back = big_alloc(len);
	b->pi = big_alloc(b->pilen);
	b->pi2 = big_alloc(b->pilen);
	tl_fill(b->data, len, len ^ iv);
	/* Random metadata beyond the PI, where the device has some. */
	tl_fill(b->pi, b->pilen, ~len);
	if (!iovec)
		return;
	b->iovcnt = len / 8192;
	assert_true(b->iovcnt <= 1024);		/* UIO_MAXIOV */
	b->iov = calloc(b->iovcnt, sizeof(*b->iov));
	assert_non_null(b->iov);
	b->poollen = b->iovcnt * stride;
	b->pool = big_alloc(b->poollen);
	for (i = 0; i < b->iovcnt; i++) {
		b->iov[i].iov_base = b->pool + i * stride;
		b->iov[i].iov_len = i % 2 ? 8192 + iv : 8192 - iv;
		memcpy(b->iov[i].iov_base, b->data + pos, b->iov[i].iov_len);
		pos += b->iov[i].iov_len;
	}
	assert_int_equal(pos, len);
}

static void big_free(struct big *b)
{
	munmap(b->data, b->len);
	munmap(b->back, b->len);
	munmap(b->pi, b->pilen);
	munmap(b->pi2, b->pilen);
	if (b->iov) {
		munmap(b->pool, b->poollen);
		free(b->iov);
	}
}

/* A write of @b's data (through its iovec, if it has one) with its PI. */
static void big_write(struct tl_dev *d, struct big *b, unsigned int flags,
		      struct dio_request *r)
{
	if (b->iov)
		dio_req_prep_writev(r, d->h, b->iov, b->iovcnt, BIG_OFF);
	else
		dio_req_prep_write(r, d->h, b->data, b->len, BIG_OFF);
	dio_req_set_pi(r, b->pi, b->pilen, flags, 0, 0);
}

/* A read into @b->back (or into the cleared segments) and @b->pi2. */
static void big_read(struct tl_dev *d, struct big *b, int into_iov,
		     unsigned int flags, uint16_t app, uint16_t mask,
		     struct dio_request *r)
{
	int i;

	memset(b->pi2, 0xee, b->pilen);
	if (into_iov) {
		for (i = 0; i < b->iovcnt; i++)
			memset(b->iov[i].iov_base, 0, b->iov[i].iov_len);
		dio_req_prep_readv(r, d->h, b->iov, b->iovcnt, BIG_OFF);
	} else {
		memset(b->back, 0, b->len);
		dio_req_prep_read(r, d->h, b->back, b->len, BIG_OFF);
	}
	dio_req_set_pi(r, b->pi2, b->pilen, flags, app, mask);
}

static void check_big(struct tl_dev *d, struct big *b)
{
	const uint64_t seed = seed_of(d, BIG_OFF);
	/*
	 * In the last quarter: past the first bio, which holds at most 256
	 * segments (the iovec's 512 segments take at least two bios).
	 */
	const size_t k = b->n / 2 + b->n / 4 + 3;
	const unsigned int iv = d->q.pi_interval;
	unsigned int chk = DIO_PI_CHK_GUARD | DIO_PI_CHK_APPTAG |
			   (d->q.pi_type != 3 ? DIO_PI_CHK_REFTAG : 0);
	struct dio_request r;
	unsigned char *t;
	size_t pos = 0;
	int i;

	print_message("# %s: %zu bytes%s, bad tuple %zu of %zu\n", d->path, b->len,
		      b->iov ? " in an iovec" : "", k, b->n);

	/*
	 * 1. Round trip: user PI written, read back with every check the
	 * format has, data and PI compared byte for byte.
	 */
	assert_int_equal(dio_pi_generate(&d->p, b->data, b->len, b->pi,
					 &(struct dio_pi_params){ .seed = seed, .app_tag = BIG_APP }), 0);
	big_write(d, b, 0, &r);
	assert_int_equal(tl_dev_run(d, &r), 0);
	assert_int_equal(r.result, b->len);
	big_read(d, b, 0, chk, BIG_APP, 0xffff, &r);
	assert_int_equal(tl_dev_run(d, &r), 0);
	assert_int_equal(r.result, b->len);
	assert_memory_equal(b->back, b->data, b->len);
	assert_memory_equal(b->pi2, b->pi, b->pilen);
	if (b->iov) {
		/* ... and read back into the segments. */
		big_read(d, b, 1, chk, BIG_APP, 0xffff, &r);
		assert_int_equal(tl_dev_run(d, &r), 0);
		assert_int_equal(r.result, b->len);
		for (i = 0; i < b->iovcnt; pos += b->iov[i++].iov_len)
			assert_memory_equal(b->iov[i].iov_base, b->data + pos,
					    b->iov[i].iov_len);
		assert_memory_equal(b->pi2, b->pi, b->pilen);
	}

	/*
	 * 2. One wrong guard, at interval k: the device refuses the bio
	 * holding it, and the module names interval k, the guard of its data
	 * and the one sent.
	 */
	t = tl_dev_tuple(d, b->pi, k);
	t[0] ^= 0x01;
	big_write(d, b, 0, &r);
	assert_int_equal(tl_dev_run(d, &r), 0);
	assert_pi_err("big write, guard", &r, DIO_PI_SRC_DEVICE, seed + k, DIO_PI_TAG_GUARD,
		      guard_of(d, b->data + k * iv), tuple_guard(d, t));
	/* 3. The same refused by DIO_PI_VERIFY_USER before any I/O. */
	big_write(d, b, DIO_PI_VERIFY_USER, &r);
	assert_refused("big write, verify user", d, &r, seed + k, DIO_PI_TAG_GUARD,
		       guard_of(d, b->data + k * iv), tuple_guard(d, t));
	t[0] ^= 0x01;

	/*
	 * 4. A wrong app tag at interval k, stored (not checked on a write),
	 * found by a read that checks app tags.
	 */
	tuple_set_app(d, t, BIG_APP ^ 0x0101);
	big_write(d, b, 0, &r);
	assert_int_equal(tl_dev_run(d, &r), 0);
	assert_int_equal(r.result, b->len);
	big_read(d, b, 0, DIO_PI_CHK_APPTAG, BIG_APP, 0xffff, &r);
	assert_int_equal(tl_dev_run(d, &r), 0);
	assert_pi_err("big read, app tag", &r, app_src(d), seed + k, DIO_PI_TAG_APP,
		      BIG_APP, BIG_APP ^ 0x0101);
}

/*
 * 2 and 4 MiB in one buffer, 4 MiB in an iovec; each at most what
 * max_pi_bytes of PI cover (2 MiB with 16 bytes of metadata per 512).
 */
static void check_multi_bio(const char *path)
{
	const size_t lens[] = { 2 << 20, 4 << 20 };
	size_t cap, len, last = 0;
	struct dio_features f;
	struct tl_dev d;
	struct big b;

	assert_int_equal(sys_dio_features(&f), 0);
	dev_open_random(&d, path);
	cap = f.max_pi_bytes / d.q.pi_md_size * d.q.pi_interval;
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		len = lens[i] < cap ? lens[i] : cap;
		if (len == last)
			continue;
		big_init(&d, &b, len, 0);
		check_big(&d, &b);
		big_free(&b);
		last = len;
	}
	big_init(&d, &b, (4 << 20) < cap ? 4 << 20 : cap, 1);
	check_big(&d, &b);
	big_free(&b);
	tl_dev_close(&d);
}

static void test_scsi_multi_bio(void **state)
{
	static const char *const opts[] = {
		"dev_size_mb=16 dif=1 dix=1 guard=0",
		"dev_size_mb=16 dif=3 dix=1 guard=1 sector_size=4096",
	};
	char dev[64];
	size_t i;

	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		assert_int_equal(tl_scsi_debug_load(opts[i], dev, sizeof(dev)), 0);
		check_multi_bio(dev);
		assert_int_equal(tl_scsi_debug_unload(), 0);
	}
}

static void test_nvme_multi_bio(void **state)
{
	char dev[64];
	int ns;

	for (ns = 1; ns <= NVME_NS_LAST; ns++) {
		assert_int_equal(tl_nvme_dev(ns, dev, sizeof(dev)), 0);
		check_multi_bio(dev);
	}
}

/*
 * Corrupt a data byte behind the device's back (the namespace's backing
 * file is the results share): reads report the exact block and, where
 * the kernel lets the module read raw, the tag and values.
 */
static void nvme_corruption(int ns)
{
	struct dio_request r;
	uint64_t off = 32 * LEN, seed;
	unsigned char *blk;
	unsigned int iv;
	char dev[64], img[64];
	struct tl_dev d;
	size_t at;
	FILE *f;

	assert_int_equal(tl_nvme_dev(ns, dev, sizeof(dev)), 0);
	dev_open_random(&d, dev);
	print_message("# nsid %d (%s): %s\n", ns, dev, d.q.profile);
	assert_string_equal(d.q.profile, nvme_ns[ns].profile);
	iv = d.q.pi_interval;
	seed = seed_of(&d, off);
	assert_int_equal(dio_pi_generate(&d.p, d.data, LEN, d.pi,
					 &(struct dio_pi_params){ .seed = seed }), 0);
	write_pi(&d, off, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);

	/*
	 * QEMU keeps a namespace's data first in its file (metadata after
	 * all blocks, mset=0): flip byte 100 of block 7.  @blk is the block
	 * as now stored, whose guard the module computes on a raw read.
	 */
	at = 7 * iv + 100;
	blk = tl_alloc(iv, 0);
	assert_non_null(blk);
	memcpy(blk, d.data + 7 * iv, iv);
	blk[100] ^= 0xff;
	snprintf(img, sizeof(img), "/tmp/results/nvme%d.img", ns);
	f = fopen(img, "r+");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)(off + at), SEEK_SET), 0);
	assert_int_equal(fputc(blk[100], f), blk[100]);
	fclose(f);

	/*
	 * The device refuses the read; the module finds the block by reading
	 * again an interval at a time.  Since 6.14 it can read it raw, so it
	 * also knows the tag and values: the guard of the corrupted data and
	 * the one stored, which is the one we wrote.  Before, NVMe cannot skip
	 * its checks: the module names the block, DIO_PI_TAG_NONE and no
	 * values, and dio_pi_explain_error() learns the rest by passthrough
	 * (into a struct dio_pi_error: the request stays as the kernel wrote
	 * it); the deprecated dio_pi_explain() writes the same into the
	 * request.
	 */
	for (int pass = 0; pass < 2; pass++) {
		const char *what = pass ? "corrupted, PI buffer" : "corrupted, plain read";

		if (pass == 0) {
			memset(d.back, 0, LEN);
			dio_req_prep_read(&r, d.h, d.back, LEN, off);
		} else {
			read_pi(&d, off, DIO_PI_CHK_GUARD, 0, 0, &r);
		}
		assert_int_equal(tl_dev_run(&d, &r), 0);
		print_message("# corrupted block: sector %llu tag %u expected %#llx actual %#llx\n",
			      (unsigned long long)r.pi_err_interval, r.pi_err_tag,
			      (unsigned long long)r.pi_err_expected,
			      (unsigned long long)r.pi_err_actual);
		if (!tl_kernel_at_least(6, 14)) {
			struct dio_request as_reported;
			struct dio_pi_error e;

			assert_pi_err(what, &r, DIO_PI_SRC_DEVICE, seed + 7, DIO_PI_TAG_NONE, 0, 0);
			as_reported = r;
			memset(&e, 0xa5, sizeof(e));
			assert_int_equal(dio_pi_explain_error(d.fd, &d.p, &r, &e), 0);
			print_message("# explained: tag %u expected %#llx actual %#llx\n", e.tag,
				      (unsigned long long)e.expected,
				      (unsigned long long)e.actual);
			assert_memory_equal(&r, &as_reported, sizeof(r));
			assert_int_equal(e.interval, seed + 7);
			assert_int_equal(e.ref, seed + 7);
			assert_int_equal(e.tag, DIO_PI_TAG_GUARD);
			assert_int_equal(e.expected, guard_of(&d, blk));
			assert_int_equal(e.actual, tuple_guard(&d, tl_dev_tuple(&d, d.pi, 7)));
			for (size_t i = 0; i < sizeof(e.pad); i++)
				assert_int_equal(e.pad[i], 0);
			assert_int_equal(e.escaped, 0);
			for (size_t i = 0; i < sizeof(e.reserved) / sizeof(e.reserved[0]); i++)
				assert_int_equal(e.reserved[i], 0);
			/* The same again: the request is still the refusal it was. */
			assert_int_equal(dio_pi_explain_error(d.fd, &d.p, &r, &e), 0);
			assert_int_equal(e.tag, DIO_PI_TAG_GUARD);
			/* The deprecated call: the same values, written into @r. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
			assert_int_equal(dio_pi_explain(d.fd, &d.p, &r), 0);
			/* Explained once: not a refusal without a tag any more. */
			assert_int_equal(tl_errno(dio_pi_explain(d.fd, &d.p, &r)), -EINVAL);
#pragma GCC diagnostic pop
			memset(&e, 0xa5, sizeof(e));
			assert_int_equal(tl_errno(dio_pi_explain_error(d.fd, &d.p, &r, &e)), -EINVAL);
			assert_int_equal(e.tag, DIO_PI_TAG_NONE);
			assert_int_equal(e.expected, 0);
		}
		assert_pi_err(what, &r, DIO_PI_SRC_DEVICE, seed + 7, DIO_PI_TAG_GUARD,
			      guard_of(&d, blk), tuple_guard(&d, tl_dev_tuple(&d, d.pi, 7)));
	}

	/*
	 * A raw read fetches the bad block and its PI: the module where the
	 * kernel can, passthrough (dio_pi_read_raw()) before 6.14.
	 */
	memset(d.back, 0, LEN);
	memset(d.pi2, 0, d.pilen);
	read_pi(&d, off, DIO_PI_NOCHECK, 0, 0, &r);
	if (tl_kernel_at_least(6, 14)) {
		assert_int_equal(tl_dev_run(&d, &r), 0);
		assert_int_equal(r.result, LEN);
	} else {
		assert_int_equal(tl_dev_run(&d, &r), -EOPNOTSUPP);
		assert_int_equal(dio_pi_read_raw(d.fd, &d.p, d.back, LEN, d.pi2, off), 0);
	}
	assert_memory_equal(d.back + 7 * iv, blk, iv);
	assert_memory_equal(d.back, d.data, 7 * iv);
	assert_memory_equal(d.pi2, d.pi, d.pilen);
	/* Repair from our own copy. */
	write_pi(&d, off, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	read_pi(&d, off, DIO_PI_CHK_GUARD, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	assert_memory_equal(d.back, d.data, LEN);
	free(blk);
	tl_dev_close(&d);
}

/*
 * On every namespace: T10 CRC type 1, CRC64 with 16-byte tuples, type 3,
 * and type 1 with metadata beyond the PI.
 */
static void test_nvme_corruption_detected(void **state)
{
	int ns;

	for (ns = 1; ns <= NVME_NS_LAST; ns++)
		nvme_corruption(ns);
}

/* What raw_read_child() reads, and where. */
struct raw_args {
	struct tl_dev *d;
	int fd;			/* root's, O_RDONLY */
	uint64_t off;
};

/*
 * test_nvme_raw_unprivileged()'s tl_run_as() child: 10 when the data and
 * the PI come back as written, 11 for EACCES, 12 for another error, 13
 * for other bytes.
 */
static int raw_read_child(void *arg)
{
	const struct raw_args *a = arg;
	struct tl_dev *d = a->d;

	memset(d->back, 0, LEN);
	if (dio_pi_read_raw(a->fd, &d->p, d->back, LEN, d->pi2, a->off) < 0) {
		printf("# dio_pi_read_raw as uid 1000: %s\n", strerror(errno));
		return errno == EACCES ? 11 : 12;
	}
	return memcmp(d->back, d->data, LEN) || memcmp(d->pi2, d->pi, d->pilen) ? 13 : 10;
}

/*
 * dio_pi_read_raw() as a user who is not root, on a descriptor root opened
 * for reading (as a database gets its disks): Linux 6.1 lets only
 * CAP_SYS_ADMIN send NVMe passthrough, so EACCES there; from 6.2 the
 * driver allows a read on a descriptor open for reading.  The data comes
 * back as root wrote it.
 */
static void test_nvme_raw_unprivileged(void **state)
{
	struct raw_args a = { .off = 40 * LEN };
	struct dio_request r;
	struct tl_dev d;
	char dev[64];
	int st;

	assert_int_equal(tl_nvme_dev(1, dev, sizeof(dev)), 0);
	dev_open_random(&d, dev);
	assert_int_equal(dio_pi_generate(&d.p, d.data, LEN, d.pi,
					 &(struct dio_pi_params){ .seed = seed_of(&d, a.off) }), 0);
	write_pi(&d, a.off, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	a.d = &d;
	a.fd = open(dev, O_RDONLY | O_CLOEXEC);
	assert_true(a.fd >= 0);
	st = tl_run_as(1000, 1000, 0, raw_read_child, &a);
	close(a.fd);
	assert_int_equal(st, tl_kernel_at_least(6, 2) ? 10 : 11);
	tl_dev_close(&d);
}

/* Not NVMe: ENOTTY, the block layer's DIO_PI_NOCHECK is the way there. */
static void test_raw_read_not_nvme(void **state)
{
	struct tl_dev d;
	char dev[64];

	assert_int_equal(tl_scsi_debug_load("dif=1 dix=1 guard=0 sector_size=512 dev_size_mb=16",
					    dev, sizeof(dev)), 0);
	dev_open_random(&d, dev);
	assert_int_equal(tl_errno(dio_pi_read_raw(d.fd, &d.p, d.back, LEN, d.pi2, 0)), -ENOTTY);
	assert_int_equal(tl_errno(dio_pi_read_raw(d.fd, &d.p, d.back, LEN - 1, d.pi2, 0)), -EINVAL);
	tl_dev_close(&d);
}

static void test_scsi_raw_read(void **state)
{
	struct dio_request r;
	char dev[64];
	struct tl_dev d;

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1", dev, sizeof(dev)), 0);
	dev_open_random(&d, dev);
	assert_true(d.q.pi_caps & DIO_PI_CAP_NOCHECK);
	assert_int_equal(dio_pi_generate(&d.p, d.data, LEN, d.pi, &(struct dio_pi_params){ 0 }), 0);
	write_pi(&d, 0, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	read_pi(&d, 0, DIO_PI_NOCHECK, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	assert_memory_equal(d.back, d.data, LEN);
	assert_memory_equal(d.pi2, d.pi, d.pilen);
	tl_dev_close(&d);
	assert_int_equal(tl_scsi_debug_unload(), 0);
}

static void sd_param(const char *name, const char *value)
{
	assert_int_equal(tl_sh("echo %s > /sys/bus/pseudo/drivers/scsi_debug/%s",
			       value, name), 0);
}

/*
 * A scsi_debug disk with DIF and DIX, @d open on it (its path in @dev),
 * LEN bytes of @d's data written at @off with their PI, and sector @bad
 * (from the start of the disk, inside them) changed behind its PI:
 * rewritten with the kernel's PI generation switched off, so the disk
 * keeps the old tuple.  Returns the sector's new data (512 bytes; the
 * caller frees it).
 */
static void *scsi_stale_sector(struct tl_dev *d, char *dev, size_t devlen, uint64_t off,
			       uint64_t bad)
{
	struct dio_request r;
	void *blk = NULL;
	int fd;

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1", dev, devlen), 0);
	dev_open_random(d, dev);
	assert_int_equal(dio_pi_generate(&d->p, d->data, LEN, d->pi,
					 &(struct dio_pi_params){ .seed = seed_of(d, off) }), 0);
	write_pi(d, off, 0, 0, &r);
	assert_int_equal(tl_dev_run(d, &r), 0);
	assert_int_equal(r.result, LEN);

	assert_int_equal(posix_memalign(&blk, 4096, 512), 0);
	memcpy(blk, d->data + (bad * 512 - off), 512);
	((unsigned char *)blk)[100] ^= 0xff;
	assert_int_equal(tl_sh("echo 0 > /sys/block/%s/integrity/write_generate",
			       tl_basename(dev)), 0);
	fd = open(dev, O_RDWR | O_DIRECT);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, blk, 512, bad * 512), 512);
	close(fd);
	assert_int_equal(tl_sh("echo 1 > /sys/block/%s/integrity/write_generate",
			       tl_basename(dev)), 0);
	return blk;
}

/*
 * A SCSI block whose data changed behind its PI (scsi_stale_sector()).
 * The device refuses the read; the module reads raw and reports exactly.
 */
static void test_scsi_corruption_detected(void **state)
{
	struct dio_request r;
	uint64_t off = 16 * LEN;
	char dev[64];
	struct tl_dev d;
	void *blk;

	blk = scsi_stale_sector(&d, dev, sizeof(dev), off, off / 512 + 5);
	memset(d.back, 0, LEN);
	dio_req_prep_read(&r, d.h, d.back, LEN, off);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, -EILSEQ);
	assert_int_equal(r.pi_err_source, DIO_PI_SRC_DEVICE);
	assert_int_equal(r.pi_err_interval, seed_of(&d, off) + 5);
	assert_int_equal(r.pi_err_tag, DIO_PI_TAG_GUARD);
	assert_int_equal(r.pi_err_expected, dio_pi_crc16_t10dif(0, blk, 512));
	assert_int_equal(r.pi_err_actual, (uint64_t)tl_dev_tuple(&d, d.pi, 5)[0] << 8 |
					  tl_dev_tuple(&d, d.pi, 5)[1]);
	/* The raw read hands over the bad block and its old PI. */
	read_pi(&d, off, DIO_PI_NOCHECK, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	assert_memory_equal(d.back + 5 * 512, blk, 512);
	assert_memory_equal(d.pi2, d.pi, d.pilen);
	/* Raw without a PI buffer: the data alone, as stored, unchecked. */
	memset(d.back, 0, LEN);
	dio_req_prep_read(&r, d.h, d.back, LEN, off);
	r.pi_flags = DIO_PI_NOCHECK;
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	assert_memory_equal(d.back + 5 * 512, blk, 512);
	assert_memory_equal(d.back, d.data, 5 * 512);
	free(blk);
	tl_dev_close(&d);
	assert_int_equal(tl_scsi_debug_unload(), 0);
}

/*
 * Neighbours of a refused read are not refused with it.  Sixteen adjacent
 * reads of 4 KiB in one batch, the tenth over a block whose data changed
 * behind its PI: only that one fails, named to the block; the others
 * return their data.  The block layer merges adjacent bios under one plug
 * into one command where the queue takes integrity segments enough (SCSI
 * with DIX; NVMe where the driver maps metadata in several segments: 7.3
 * under Debian 13's QEMU), and a device refuses a command whole: each request is its own command
 * (REQ_NOMERGE, submit.c).  Once with the kernel's PI (no PI buffer), once
 * with the caller's, checked.
 */
#define NB_N	16
#define NB_REC	4096
#define NB_BAD	9

static void test_merged_neighbours(void **state)
{
	struct dio_request r[NB_N], *rp[NB_N];
	uint64_t off = 16 * LEN, sect = off / 512 + NB_BAD * 8 + 5;
	size_t pil;
	char dev[64];
	struct tl_dev d;
	void *blk;

	/* Sector 5 of record NB_BAD changed behind its PI. */
	blk = scsi_stale_sector(&d, dev, sizeof(dev), off, sect);
	pil = NB_REC / 512 * d.q.pi_md_size;
	for (int pass = 0; pass < 2; pass++) {
		memset(d.back, 0, LEN);
		for (int i = 0; i < NB_N; i++) {
			dio_req_prep_read(&r[i], d.h, d.back + i * NB_REC, NB_REC,
					  off + i * NB_REC);
			if (pass) {
				dio_req_set_pi(&r[i], d.pi2 + i * pil, pil,
					       DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG, 0, 0);
			}
			rp[i] = &r[i];
		}
		assert_int_equal(sys_dio_submit(d.ctx, rp, NB_N), NB_N);
		assert_int_equal(sys_dio_wait(d.ctx, rp, NB_N, NULL), NB_N);
		for (int i = 0; i < NB_N; i++) {
			if (i == NB_BAD) {
				assert_int_equal(r[i].result, -EILSEQ);
				assert_int_equal(r[i].pi_err_source, DIO_PI_SRC_DEVICE);
				assert_int_equal(r[i].pi_err_interval, sect);
				continue;
			}
			if (r[i].result != NB_REC)
				fail_msg("pass %d: read %d of %d: result %lld, interval %lld",
					 pass, i, NB_N, (long long)r[i].result,
					 (long long)r[i].pi_err_interval);
			assert_memory_equal(d.back + i * NB_REC, d.data + i * NB_REC, NB_REC);
		}
	}
	free(blk);
	tl_dev_close(&d);
	assert_int_equal(tl_scsi_debug_unload(), 0);
}

/* scsi_debug's own DIF and DIX error injection, on every command. */
static void test_scsi_debug_error_injection(void **state)
{
	static const char *const kinds[] = { "32" /* DIF */, "64" /* DIX */ };
	struct dio_request r;
	char dev[64];
	struct tl_dev d;
	size_t k;

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1", dev, sizeof(dev)), 0);
	dev_open_random(&d, dev);
	assert_int_equal(dio_pi_generate(&d.p, d.data, LEN, d.pi, &(struct dio_pi_params){ 0 }), 0);
	write_pi(&d, 0, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	for (k = 0; k < 2; k++) {
		sd_param("every_nth", "1");
		sd_param("opts", kinds[k]);
		read_pi(&d, 0, DIO_PI_CHK_GUARD, 0, 0, &r);
		assert_int_equal(tl_dev_run(&d, &r), 0);
		sd_param("opts", "0");
		sd_param("every_nth", "0");
		assert_int_equal(r.result, -EILSEQ);
		assert_int_equal(r.pi_err_source, DIO_PI_SRC_DEVICE);
		/* Every probe fails too: the first block is the one named. */
		assert_int_equal(r.pi_err_interval, 0);
		/* Injection off: the same read succeeds. */
		read_pi(&d, 0, DIO_PI_CHK_GUARD, 0, 0, &r);
		assert_int_equal(tl_dev_run(&d, &r), 0);
		assert_int_equal(r.result, LEN);
		assert_memory_equal(d.back, d.data, LEN);
	}
	tl_dev_close(&d);
	assert_int_equal(tl_scsi_debug_unload(), 0);
}

static void test_no_pi_device_refuses_pi(void **state)
{
	struct dio_request r;
	char dev[64];
	struct tl_dev d;

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=0 dix=0", dev, sizeof(dev)), 0);
	memset(&d, 0, sizeof(d));
	d.ctx = sys_dio_init(0, DIO_PRIVATE);
	assert_true(d.ctx >= 0);
	tl_fd_track(d.ctx);
	d.fd = open(dev, O_RDWR);
	assert_true(d.fd >= 0);
	tl_fd_track(d.fd);
	d.h = sys_dio_open(d.ctx, d.fd, 0);
	assert_true(d.h >= 1);
	assert_int_equal(posix_memalign((void **)&d.data, 4096, LEN), 0);
	assert_int_equal(posix_memalign((void **)&d.pi, 4096, 1024), 0);
	dio_req_prep_write(&r, d.h, d.data, LEN, 0);
	dio_req_set_pi(&r, d.pi, 1024, 0, 0, 0);
	assert_int_equal(tl_dev_run(&d, &r), -EOPNOTSUPP);
	dio_req_prep_read(&r, d.h, d.data, LEN, 0);
	r.pi_flags = DIO_PI_CHK_GUARD;
	assert_int_equal(tl_dev_run(&d, &r), -EOPNOTSUPP);
	tl_fd_close(d.fd);
	tl_fd_close(d.ctx);
	free(d.data);
	free(d.pi);
	assert_int_equal(tl_scsi_debug_unload(), 0);
}

/*
 * One interval of @d's data at byte @off, with user PI whose first tuple
 * is generated for @seed; returns the request's result.
 */
static long long write_one(struct tl_dev *d, uint64_t off, uint64_t seed)
{
	struct dio_request r;

	assert_int_equal(dio_pi_generate(&d->p, d->data, d->q.pi_interval, d->pi,
					 &(struct dio_pi_params){ .seed = seed }), 0);
	dio_req_prep_write(&r, d->h, d->data, d->q.pi_interval, off);
	dio_req_set_pi(&r, d->pi, d->q.pi_md_size, 0, 0, 0);
	assert_int_equal(tl_dev_run(d, &r), 0);
	return r.result;
}

/*
 * A partition: ref tags are the whole disk's LBAs.  It starts at sector
 * PART_START, so through it the ref tag of interval k of the partition is
 * PART_START + k (512-byte intervals).  The disk is 1 GiB over a 16 MiB
 * store (virtual_gb): LBA x + STORE_SECTORS is stored where LBA x is, PI
 * included, which is how a block gets a wrong ref tag on disk.
 */
#define PART_START	2048
#define STORE_SECTORS	(16 * 2048)

static void test_partition(void **state)
{
	const uint64_t seed = PART_START + 8, bad = seed + 3;
	struct dio_request r;
	char dev[64], part[72];
	struct tl_dev d, whole;

	assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 virtual_gb=1 dif=1 dix=1",
					    dev, sizeof(dev)), 0);
	assert_int_equal(tl_partition_make(dev, PART_START, 16384, part, sizeof(part)), 0);
	dev_open_random(&d, part);
	assert_int_equal(d.q.capacity, 16384ULL * 512);
	assert_int_equal(d.q.pi_interval, 512);
	/*
	 * Seeds count from the start of the disk: the query's partition
	 * start, which dio_pi_seed() adds, is the module's (ABI 4).
	 */
	assert_int_equal(d.q.part_start_bytes, PART_START * 512ULL);
	assert_int_equal(dio_pi_seed(&d.q, 8 * 512), seed);
	assert_int_equal(dio_pi_generate(&d.p, d.data, LEN, d.pi,
					 &(struct dio_pi_params){
						 .seed = dio_pi_seed(&d.q, 8 * 512) }), 0);
	write_pi(&d, 8 * 512, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	/*
	 * Partition-relative ref tags are refused, at the request's first
	 * interval: the disk's LBA expected, the partition's found.
	 */
	assert_int_equal(dio_pi_generate(&d.p, d.data, LEN, d.pi,
					 &(struct dio_pi_params){ .seed = 8 }), 0);
	write_pi(&d, 8 * 512, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_pi_err("partition-relative ref tags", &r, DIO_PI_SRC_DEVICE, seed,
		      DIO_PI_TAG_REF, seed, 8);
	/* Put the good data back. */
	assert_int_equal(dio_pi_generate(&d.p, d.data, LEN, d.pi,
					 &(struct dio_pi_params){ .seed = seed }), 0);
	write_pi(&d, 8 * 512, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	tl_dev_close(&d);

	/*
	 * Read through the whole disk (its own claim: the partition's handle
	 * is closed), then store a block with a wrong ref tag: interval 3 of
	 * the range, written at its alias one store further on with that
	 * LBA's (correct) ref tag, which the device accepts.
	 */
	dev_open_random(&whole, dev);
	read_pi(&whole, seed * 512, DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG, 0, 0, &r);
	assert_int_equal(tl_dev_run(&whole, &r), 0);
	assert_int_equal(r.result, LEN);
	assert_int_equal(dio_pi_verify(&whole.p, whole.back, LEN, whole.pi2,
				       &(struct dio_pi_params){ .seed = seed,
								.chk_flags = DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG },
				       NULL), 0);
	memcpy(whole.data, whole.back + 3 * 512, 512);
	assert_int_equal(write_one(&whole, (bad + STORE_SECTORS) * 512, bad + STORE_SECTORS), 512);
	tl_dev_close(&whole);

	/*
	 * Through the partition, a read by default (the module verifies) and
	 * one with a PI buffer and DIO_PI_CHK_REFTAG: the device refuses it,
	 * and the module names the disk's LBA of the block, the ref tag it
	 * should have and the one stored.
	 */
	dev_open_random(&d, part);
	memset(d.back, 0, LEN);
	dio_req_prep_read(&r, d.h, d.back, LEN, 8 * 512);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_pi_err("partition read, default check", &r, DIO_PI_SRC_DEVICE, bad,
		      DIO_PI_TAG_REF, bad, bad + STORE_SECTORS);
	read_pi(&d, 8 * 512, DIO_PI_CHK_REFTAG, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_pi_err("partition read, DIO_PI_CHK_REFTAG", &r, DIO_PI_SRC_DEVICE, bad,
		      DIO_PI_TAG_REF, bad, bad + STORE_SECTORS);
	/* The raw read hands over the stored tuple. */
	read_pi(&d, 8 * 512, DIO_PI_NOCHECK, 0, 0, &r);
	assert_int_equal(tl_dev_run(&d, &r), 0);
	assert_int_equal(r.result, LEN);
	assert_int_equal(tuple_ref(&d, tl_dev_tuple(&d, d.pi2, 3)), bad + STORE_SECTORS);
	assert_int_equal(tuple_ref(&d, tl_dev_tuple(&d, d.pi2, 4)), bad + 1);
	tl_dev_close(&d);
	assert_int_equal(tl_scsi_debug_unload(), 0);
}

/*
 * The devices the three tests below run on: a 512-byte scsi_debug DIF
 * disk and NVMe nsid 2 (CRC64, 4096-byte intervals).  @i picks one;
 * returns its path in @dev.
 */
#define EDGE_DEVS	2

static void edge_dev(int i, char *dev, size_t len)
{
	if (i == 0)
		assert_int_equal(tl_scsi_debug_load("dev_size_mb=16 dif=1 dix=1", dev, len), 0);
	else
		assert_int_equal(tl_nvme_dev(2, dev, len), 0);
}

static void edge_dev_done(int i)
{
	if (i == 0)
		assert_int_equal(tl_scsi_debug_unload(), 0);
}

/*
 * A protection interval never straddles a page or an iovec segment: the
 * module raises the DMA alignment it asks of buffers to the interval
 * (QUERY's dma_alignment), and every segment is whole logical blocks, so
 * a read whose intervals would cross a page is refused before any I/O
 * (EINVAL).  The layouts it accepts that come nearest (a buffer one
 * interval into a page, so that intervals end on page boundaries; an
 * iovec of one-interval segments, each ending its page) verify in the
 * module, intact data and a bad app tag at the interval after a page
 * boundary alike.
 */
static void test_pi_interval_layouts(void **state)
{
	for (int i = 0; i < EDGE_DEVS; i++) {
		const uint64_t off = 20 * LEN;
		unsigned char *pg, *pi;
		struct iovec iov[4];
		struct dio_request r;
		unsigned int iv;
		uint64_t seed;
		char dev[64];
		struct tl_dev d;
		size_t n, k, pos;

		edge_dev(i, dev, sizeof(dev));
		dev_open_random(&d, dev);
		iv = d.q.pi_interval;
		seed = seed_of(&d, off);
		print_message("# %s: %s, dma_alignment %u\n", dev, d.q.profile,
			      d.q.dma_alignment);
		assert_int_equal(d.q.dma_alignment, iv);
		/* Intervals of the write: app tag 0x1234, 0x12ab at k. */
		n = 4;
		k = 4096 / iv;	/* the first interval of the second page */
		assert_int_equal(dio_pi_generate(&d.p, d.data, LEN, d.pi,
						 &(struct dio_pi_params){ .seed = seed, .app_tag = 0x1234 }), 0);
		tuple_set_app(&d, tl_dev_tuple(&d, d.pi, k), 0x12ab);
		write_pi(&d, off, 0, 0, &r);
		assert_int_equal(tl_dev_run(&d, &r), 0);
		assert_int_equal(r.result, LEN);

		pg = tl_xalloc(16 * 4096, 0);
		pi = tl_xalloc(4096, 0);
		/* Half an interval (or 512 bytes) into a page: refused. */
		dio_req_prep_read(&r, d.h, pg + (iv < 4096 ? iv / 2 : 512), 4 * iv, off);
		dio_req_set_pi(&r, pi, 4 * d.q.pi_md_size, DIO_PI_CHK_GUARD, 0, 0);
		assert_int_equal(tl_dev_run(&d, &r), -EINVAL);
		dio_req_prep_read(&r, d.h, pg + (iv < 4096 ? iv / 2 : 512), 4 * iv, off);
		assert_int_equal(tl_dev_run(&d, &r), -EINVAL);
		/* An interval split over two segments: refused. */
		iov[0].iov_base = pg + 4096 - iv / 2;
		iov[0].iov_len = iv / 2;
		iov[1].iov_base = pg + 3 * 4096;
		iov[1].iov_len = iv / 2;
		dio_req_prep_readv(&r, d.h, iov, 2, off);
		assert_int_equal(tl_dev_run(&d, &r), -EINVAL);
		dio_req_prep_readv(&r, d.h, iov, 2, off);
		dio_req_set_pi(&r, pi, d.q.pi_md_size, DIO_PI_CHK_GUARD, 0, 0);
		assert_int_equal(tl_dev_run(&d, &r), -EINVAL);

		/*
		 * The nearest accepted: intervals 1..n+k at one interval's
		 * distance below a page boundary (512-byte intervals) or page
		 * by page (4096), checked by the module: intact, every check.
		 */
		n = k + 4;
		memset(pg, 0, 16 * 4096);
		memset(pi, 0xee, 4096);
		dio_req_prep_read(&r, d.h, pg + (iv < 4096 ? 4096 - iv : 0), n * iv, off);
		dio_req_set_pi(&r, pi, n * d.q.pi_md_size,
			       DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG | DIO_PI_CHK_APPTAG, 0x1234, 0xff00);
		assert_int_equal(tl_dev_run(&d, &r), 0);
		assert_int_equal(r.result, n * iv);
		assert_memory_equal(pg + (iv < 4096 ? 4096 - iv : 0), d.data, n * iv);
		assert_memory_equal(pi, d.pi, n * d.q.pi_md_size);
		/* ... and the app tag of interval k, after a page boundary. */
		dio_req_prep_read(&r, d.h, pg + (iv < 4096 ? 4096 - iv : 0), n * iv, off);
		dio_req_set_pi(&r, pi, n * d.q.pi_md_size,
			       DIO_PI_CHK_GUARD | DIO_PI_CHK_APPTAG, 0x1234, 0xffff);
		assert_int_equal(tl_dev_run(&d, &r), 0);
		assert_pi_err("app tag after a page boundary", &r, app_src(&d), seed + k,
			      DIO_PI_TAG_APP, 0x1234, 0x12ab);

		/*
		 * An iovec of one-interval segments, each ending its page
		 * (k + 1 of them: the bad interval is in the last), without
		 * a PI buffer: the module checks the app tag it is asked to.
		 */
		memset(pg, 0, 16 * 4096);
		{
			struct iovec *v = calloc(k + 1, sizeof(*v));

			assert_non_null(v);
			for (pos = 0; pos <= k; pos++) {
				v[pos].iov_base = pg + pos * 4096 + 4096 - iv;
				v[pos].iov_len = iv;
			}
			dio_req_prep_readv(&r, d.h, v, k + 1, off);
			r.pi_flags = DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG | DIO_PI_CHK_APPTAG;
			r.app_tag = 0x1234;
			r.app_tag_mask = 0xff00;
			assert_int_equal(tl_dev_run(&d, &r), 0);
			assert_int_equal(r.result, (k + 1) * iv);
			for (pos = 0; pos <= k; pos++)
				assert_memory_equal(v[pos].iov_base, d.data + pos * iv, iv);
			dio_req_prep_readv(&r, d.h, v, k + 1, off);
			r.pi_flags = DIO_PI_CHK_GUARD | DIO_PI_CHK_APPTAG;
			r.app_tag = 0x1234;
			r.app_tag_mask = 0xffff;
			assert_int_equal(tl_dev_run(&d, &r), 0);
			assert_pi_err("app tag, iovec", &r, app_src(&d), seed + k,
				      DIO_PI_TAG_APP, 0x1234, 0x12ab);
			free(v);
		}
		free(pg);
		free(pi);
		tl_dev_close(&d);
		edge_dev_done(i);
	}
}

/*
 * A read's PI buffer that cannot be written when the read is reported:
 * the data arrived, but the PI the caller asked for did not, so the
 * result is -EFAULT (the report itself succeeds).  Unmapped before WAIT;
 * read-only before COLLECT, which leaves it untouched.  Writable again,
 * the same read succeeds.
 */
static void test_pi_report_efault(void **state)
{
	for (int i = 0; i < EDGE_DEVS; i++) {
		const uint64_t off = 24 * LEN;
		size_t maplen;
		struct dio_request r, *rp = &r, *got = NULL;
		unsigned char *pi;
		char dev[64];
		struct tl_dev d;

		edge_dev(i, dev, sizeof(dev));
		dev_open_random(&d, dev);
		maplen = (d.pilen + 4095) & ~(size_t)4095;
		assert_int_equal(dio_pi_generate(&d.p, d.data, LEN, d.pi,
						 &(struct dio_pi_params){ .seed = seed_of(&d, off) }), 0);
		write_pi(&d, off, 0, 0, &r);
		assert_int_equal(tl_dev_run(&d, &r), 0);
		assert_int_equal(r.result, LEN);

		/* Unmapped after SUBMIT, before WAIT. */
		pi = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		assert_true(pi != MAP_FAILED);
		memset(d.back, 0, LEN);
		dio_req_prep_read(&r, d.h, d.back, LEN, off);
		dio_req_set_pi(&r, pi, d.pilen, 0, 0, 0);
		assert_int_equal(tl_dio_submit(d.ctx, &rp, 1), 1);
		assert_int_equal(munmap(pi, maplen), 0);
		assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, NULL), 1);
		assert_int_equal(r.result, -EFAULT);
		assert_memory_equal(d.back, d.data, LEN);

		/* Read-only after SUBMIT, before COLLECT. */
		pi = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		assert_true(pi != MAP_FAILED);
		memset(pi, 0xee, maplen);
		memset(d.back, 0, LEN);
		dio_req_prep_read(&r, d.h, d.back, LEN, off);
		dio_req_set_pi(&r, pi, d.pilen, DIO_PI_CHK_GUARD, 0, 0);
		assert_int_equal(tl_dio_submit(d.ctx, &rp, 1), 1);
		assert_int_equal(mprotect(pi, maplen, PROT_READ), 0);
		assert_int_equal(tl_dio_collect(d.ctx, &got, 1, 1, NULL), 1);
		assert_ptr_equal(got, &r);
		assert_int_equal(r.result, -EFAULT);
		assert_memory_equal(d.back, d.data, LEN);
		/*
		 * Nothing of the device's PI: SUBMIT's fault-in (the kernel's
		 * fault_in_writeable()) stored a 0 in the first byte, and the
		 * rest is as it was.
		 */
		assert_true(pi[0] == 0 || pi[0] == 0xee);
		for (size_t b = 1; b < maplen; b++)
			if (pi[b] != 0xee)
				fail_msg("PI buffer byte %zu: %#x, want 0xee", b, pi[b]);

		/* Writable: the same read, and its PI. */
		assert_int_equal(mprotect(pi, maplen, PROT_READ | PROT_WRITE), 0);
		memset(d.back, 0, LEN);
		dio_req_prep_read(&r, d.h, d.back, LEN, off);
		dio_req_set_pi(&r, pi, d.pilen, DIO_PI_CHK_GUARD, 0, 0);
		assert_int_equal(tl_dev_run(&d, &r), 0);
		assert_int_equal(r.result, LEN);
		assert_memory_equal(d.back, d.data, LEN);
		assert_memory_equal(pi, d.pi, d.pilen);
		assert_int_equal(munmap(pi, maplen), 0);
		tl_dev_close(&d);
		edge_dev_done(i);
	}
}

/*
 * A write refused before submission (DIO_PI_VERIFY_USER, a bad guard)
 * whose struct dio_request is in a read-only page: the module reads it,
 * but cannot write its report back, so SUBMIT fails with EFAULT instead
 * of EILSEQ; the struct is untouched, nothing is in flight (WAIT:
 * ENOENT), nothing was written.  Writable again, the same request gets
 * its EILSEQ report.
 */
static void test_pi_refuse_efault(void **state)
{
	for (int i = 0; i < EDGE_DEVS; i++) {
		const uint64_t off = 28 * LEN;
		struct dio_request r, copy, *rq, *rp;
		struct timespec ts = { 0, 0 };
		unsigned char *orig, *t;
		char dev[64];
		struct tl_dev d;
		uint64_t seed;
		unsigned int iv;

		edge_dev(i, dev, sizeof(dev));
		dev_open_random(&d, dev);
		iv = d.q.pi_interval;
		seed = seed_of(&d, off);
		assert_int_equal(dio_pi_generate(&d.p, d.data, LEN, d.pi,
						 &(struct dio_pi_params){ .seed = seed }), 0);
		write_pi(&d, off, 0, 0, &r);
		assert_int_equal(tl_dev_run(&d, &r), 0);
		assert_int_equal(r.result, LEN);
		orig = tl_xalloc(LEN, 0);
		memcpy(orig, d.data, LEN);

		/* Other data, its PI with a wrong guard in interval 3. */
		for (size_t b = 0; b < LEN; b++)
			d.data[b] ^= 0xa5;
		assert_int_equal(dio_pi_generate(&d.p, d.data, LEN, d.pi,
						 &(struct dio_pi_params){ .seed = seed }), 0);
		t = tl_dev_tuple(&d, d.pi, 3);
		t[0] ^= 0x01;

		rq = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		assert_true(rq != MAP_FAILED);
		write_pi(&d, off, 0, DIO_PI_VERIFY_USER, rq);
		rq->result = 0x5a5a;
		memcpy(&copy, rq, sizeof(copy));
		assert_int_equal(mprotect(rq, 4096, PROT_READ), 0);
		rp = rq;
		assert_int_equal(tl_dio_submit(d.ctx, &rp, 1), -EFAULT);
		assert_memory_equal(rq, &copy, sizeof(copy));
		assert_int_equal(tl_dio_wait(d.ctx, &rp, 1, &ts), -ENOENT);

		/* Nothing reached the disk. */
		memset(d.back, 0, LEN);
		dio_req_prep_read(&r, d.h, d.back, LEN, off);
		r.pi_flags = DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG;
		assert_int_equal(tl_dev_run(&d, &r), 0);
		assert_int_equal(r.result, LEN);
		assert_memory_equal(d.back, orig, LEN);

		/* Writable: the report, as assert_refused() knows it. */
		assert_int_equal(mprotect(rq, 4096, PROT_READ | PROT_WRITE), 0);
		assert_refused("verify user, guard (writable again)", &d, rq, seed + 3,
			       DIO_PI_TAG_GUARD, guard_of(&d, d.data + 3 * iv), tuple_guard(&d, t));
		assert_int_equal(munmap(rq, 4096), 0);
		free(orig);
		tl_dev_close(&d);
		edge_dev_done(i);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_scsi_debug_profiles, teardown),
		cmocka_unit_test_teardown(test_nvme_profiles, teardown),
		cmocka_unit_test_teardown(test_scsi_multi_bio, teardown),
		cmocka_unit_test_teardown(test_nvme_multi_bio, teardown),
		cmocka_unit_test_teardown(test_nvme_corruption_detected, teardown),
		cmocka_unit_test_teardown(test_nvme_raw_unprivileged, teardown),
		cmocka_unit_test_teardown(test_raw_read_not_nvme, teardown),
		cmocka_unit_test_teardown(test_scsi_raw_read, teardown),
		cmocka_unit_test_teardown(test_scsi_corruption_detected, teardown),
		cmocka_unit_test_teardown(test_merged_neighbours, teardown),
		cmocka_unit_test_teardown(test_scsi_debug_error_injection, teardown),
		cmocka_unit_test_teardown(test_no_pi_device_refuses_pi, teardown),
		cmocka_unit_test_teardown(test_partition, teardown),
		cmocka_unit_test_teardown(test_pi_interval_layouts, teardown),
		cmocka_unit_test_teardown(test_pi_report_efault, teardown),
		cmocka_unit_test_teardown(test_pi_refuse_efault, teardown),
	};

	rs = tl_seed("DIO_SEED");
	if (tl_dio_load())
		return 1;
	return cmocka_run_group_tests_name("pi", tests, NULL, NULL);
}
