// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The NVMe format matrix (tests/vm/run.sh: namespaces 6 to 17): metadata
 * of 8, 16 and 64 bytes, the PI tuple first and last in it, 16- and
 * 64-bit guards, types 1, 2 and 3, 512- and 4096-byte blocks, and the
 * layouts no kernel offers PI for: metadata inline with the data
 * (extended LBAs) and metadata without PI.  Each namespace's format comes
 * from Identify Namespace, and for each:
 *
 * - what the kernel offers: PI wherever the tuple is first or all of the
 *   metadata in a separate buffer, and from Linux 6.12 (Debian 13's
 *   kernel) also where it is last; on 6.1 a tuple that is last in larger
 *   metadata gets no PI ("nop"), nor does any kernel's PCIe driver give
 *   extended LBAs or metadata without PI any, and dio_batch refuses PI
 *   there with EOPNOTSUPP (dioctl with exit status 5);
 * - data the kernel wrote (its own PI) verifies in libdioctl;
 * - PI libdioctl generated, with opaque metadata bytes of the caller's
 *   around the tuple, is accepted by the device, verified by the kernel
 *   on a plain read, and read back byte for byte, opaque bytes included;
 * - nvme-cli reads what libdioctl wrote, data and metadata, with the
 *   drive checking it, and writes what libdioctl generated, which the
 *   library then reads and verifies;
 * - a write whose PI is wrong for one block (a guard, or an opaque byte
 *   the guard covers) names that block, tag and values;
 * - a guard, an app tag, a ref tag and an opaque byte corrupted on the
 *   medium (the namespace's image edited behind the device) are each
 *   reported by dioctl scrub with block, tag, expected and actual values
 *   and who found them;
 * - fio through the dio_batch engine writes with PI the library generates
 *   and reads it back verified;
 * - a user who is not root writes and reads back verified PI on each;
 * - tuples that carry the escape tags are counted: dioctl read
 *   --verify says how many it did not check, and "verified" only of the
 *   others.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "dioctl.h"
#include "dioctl_run.h"
#include "testlib.h"

#define OUT	DIOCTL_OUT
#define ERR	DIOCTL_ERR
#define FIRST_NSID	6
#define NFORMATS	12
/* Blocks each step writes: a few, at a place of its own. */
#define NBLK		8
#define APP		0x1234

struct fmt {
	int			nsid;
	char			dev[64];
	struct tl_nvme_format	f;
	unsigned int		tuple;		/* 8, or 16 for a 64-bit guard */
	bool			pi;		/* does this kernel offer PI? */
	int			ctx, fd, h;
	struct dio_query	q;
	struct dio_pi_profile	p;
};

static struct fmt fmts[NFORMATS];

static const char *where(const struct fmt *m)
{
	static char s[128];

	if (!m->f.pi_type)
		snprintf(s, sizeof(s), "nsid %d (%u+%u, no PI)", m->nsid, m->f.lba_size,
			 m->f.ms);
	else
		snprintf(s, sizeof(s), "nsid %d (%u+%u%s, type %d, %s guard, PI %s)", m->nsid,
			 m->f.lba_size, m->f.ms, m->f.ext ? " inline" : "", m->f.pi_type,
			 m->f.pif == 2 ? "64-bit" : "16-bit",
			 m->f.ms == m->tuple ? "only" : m->f.pi_first ? "first" : "last");
	return s;
}

/*
 * Linux offers PI where the tuple is first or all of the metadata, and
 * from 6.12 (6.10 upstream) wherever it is; never for metadata inline
 * with the data (extended LBAs), which its PCIe driver cannot transfer.
 */
static bool kernel_offers_pi(const struct tl_nvme_format *f, unsigned int tuple)
{
	return f->pi_type && !f->ext &&
	       (f->pi_first || f->ms == tuple || tl_kernel_at_least(6, 12));
}

/*
 * Claim @m's namespace in a private context of its own.  The claim is
 * exclusive: dioctl and nvme-cli (whose writes open the device O_EXCL)
 * run only while no namespace is held (release()).
 */
static int hold(struct fmt *m)
{
	m->ctx = sys_dio_init(0, DIO_PRIVATE);
	m->fd = open(m->dev, O_RDWR);
	if (m->ctx < 0 || m->fd < 0)
		return -1;
	m->h = sys_dio_open(m->ctx, m->fd, 0);
	return m->h < 1 ? -1 : 0;
}

static void release(struct fmt *m)
{
	if (m->fd > 0)
		close(m->fd);
	if (m->ctx > 0)
		close(m->ctx);
	m->fd = m->ctx = -1;
}

static int setup(void **state)
{
	for (int i = 0; i < NFORMATS; i++) {
		struct fmt *m = &fmts[i];

		m->nsid = FIRST_NSID + i;
		m->fd = m->ctx = -1;
		if (tl_nvme_dev(m->nsid, m->dev, sizeof(m->dev)) ||
		    tl_nvme_format(m->nsid, &m->f)) {
			fprintf(stderr, "t_formats: NVMe namespace %d is missing\n", m->nsid);
			return -1;
		}
		m->tuple = m->f.pif == 2 ? 16 : 8;
		m->pi = kernel_offers_pi(&m->f, m->tuple);
		if (hold(m) || sys_dio_query(m->ctx, m->h, &m->q))
			return -1;
		release(m);
		if (m->pi && dio_pi_profile_from_query(&m->q, &m->p))
			return -1;
		printf("# %s: %s, pi md size %u, pi offset %u\n", where(m), m->q.profile,
		       m->q.pi_md_size, m->q.pi_offset);
	}
	return 0;
}

/* After a failed test: nothing held for the next one. */
static int teardown(void **state)
{
	for (int i = 0; i < NFORMATS; i++)
		release(&fmts[i]);
	return 0;
}

/* One request, submitted and waited for; its result. */
static int64_t io1(struct fmt *m, struct dio_request *r)
{
	struct dio_request *rp = r;

	assert_int_equal(tl_dio_submit(m->ctx, &rp, 1), 1);
	assert_int_equal(tl_dio_wait(m->ctx, &rp, 1, NULL), 1);
	return r->result;
}

static uint64_t blk_off(const struct fmt *m, uint64_t lba)
{
	return lba * m->f.lba_size;
}

/*
 * Write @n blocks at @lba with the caller's PI buffer @md, the namespace
 * held for the request alone; the result.
 */
static int64_t write_pi(struct fmt *m, uint64_t lba, const void *data, void *md,
			unsigned int n, struct dio_request *r)
{
	int64_t ret;

	assert_int_equal(hold(m), 0);
	dio_req_prep_write(r, m->h, data, (size_t)n * m->f.lba_size, blk_off(m, lba));
	assert_int_equal(dio_req_set_pi(r, md, n * m->f.ms, 0, 0, 0), 0);
	ret = io1(m, r);
	release(m);
	return ret;
}

/* Read @n blocks at @lba with their metadata into @md; asserts success. */
static void read_pi(struct fmt *m, uint64_t lba, void *data, void *md, unsigned int n)
{
	struct dio_request r;

	assert_int_equal(hold(m), 0);
	dio_req_prep_read(&r, m->h, data, (size_t)n * m->f.lba_size, blk_off(m, lba));
	assert_int_equal(dio_req_set_pi(&r, md, n * m->f.ms, 0, 0, 0), 0);
	assert_int_equal(io1(m, &r), (int64_t)n * m->f.lba_size);
	release(m);
}

/* A step's buffers: data and metadata to write, and to read them back into. */
struct bufs {
	uint8_t	*data, *back, *md, *mdback;
	size_t	len, mlen;
};

static void bufs_alloc(const struct fmt *m, unsigned int n, struct bufs *b)
{
	b->len = (size_t)n * m->f.lba_size;
	b->mlen = (size_t)n * m->f.ms;
	b->data = tl_xalloc(b->len, 0);
	b->back = tl_xalloc(b->len, 0);
	b->md = tl_xalloc(b->mlen, 0);
	b->mdback = tl_xalloc(b->mlen, 0);
}

static void bufs_free(struct bufs *b)
{
	free(b->data);
	free(b->back);
	free(b->md);
	free(b->mdback);
}

/* Random data, and metadata every byte of which is random: opaque bytes too. */
static void gen(struct fmt *m, uint64_t lba, uint8_t *data, uint8_t *md, unsigned int n,
		uint64_t tag)
{
	tl_fill(data, (size_t)n * m->f.lba_size, tag);
	tl_fill(md, (size_t)n * m->f.ms, ~tag);
	assert_int_equal(dio_pi_generate(&m->p, data, (size_t)n * m->f.lba_size, md,
					 &(struct dio_pi_params){ .seed = lba, .app_tag = APP }),
			 0);
}

static int verify(struct fmt *m, uint64_t lba, const void *data, const void *md,
		  unsigned int n, unsigned int chk, struct dio_pi_error *e)
{
	return dio_pi_verify(&m->p, data, (size_t)n * m->f.lba_size, md,
			     &(struct dio_pi_params){ .seed = lba, .app_tag = APP,
						      .app_mask = 0xffff, .chk_flags = chk },
			     e);
}

/* What each kernel offers, and dio_batch's query of it. */
static void test_formats_offered(void **state)
{
	uint8_t *data = tl_xalloc(4096, 0), *md = tl_xalloc(64, 0);

	for (int i = 0; i < NFORMATS; i++) {
		struct fmt *m = &fmts[i];
		struct dio_request r;

		assert_true(m->f.pi_type >= 0 && m->f.pi_type <= 3);
		assert_int_equal(m->q.logical_block_size, m->f.lba_size);
		if (!m->pi) {
			/*
			 * Linux 6.1 with PI last, extended LBAs, metadata
			 * without PI: no PI, and PI requests refused.
			 */
			print_message("# %s: no PI on this kernel (%s), capacity %llu\n", where(m),
				      m->q.profile, (unsigned long long)m->q.capacity);
			assert_int_equal(m->q.pi_type, 0);
			assert_int_equal(m->q.pi_tuple_size, 0);
			assert_int_equal(hold(m), 0);
			dio_req_prep_write(&r, m->h, data, m->f.lba_size, 0);
			assert_int_equal(dio_req_set_pi(&r, md, m->f.ms, 0, 0, 0), 0);
			{
				struct dio_request *rp = &r;

				/*
				 * A namespace whose metadata the PCIe driver can
				 * transfer neither inline nor by PRACT alone has
				 * no capacity at all: the request lies beyond it.
				 */
				assert_int_equal(tl_dio_submit(m->ctx, &rp, 1),
						 m->q.capacity ? -EOPNOTSUPP : -ENXIO);
			}
			release(m);
			expect_exit(run("write %s -l %u --random 1 --pi", m->dev, m->f.lba_size), 5);
			expect_in(ERR, "no protection information this tool can");
			continue;
		}
		assert_int_equal(m->q.pi_interval, m->f.lba_size);
		assert_int_equal(m->q.pi_md_size, m->f.ms);
		assert_int_equal(m->q.pi_tuple_size, m->tuple);
		assert_int_equal(m->q.pi_offset, m->f.pi_first ? 0 : m->f.ms - m->tuple);
		assert_int_equal(m->q.pi_guard_type,
				 m->f.pif == 2 ? DIO_GUARD_CRC64 : DIO_GUARD_CRC16);
		assert_int_equal(m->q.pi_type, m->f.pi_type);
		assert_int_equal(m->p.md_size, m->f.ms);
		assert_int_equal(m->p.pi_offset, m->q.pi_offset);
		expect_exit(run("query %s -j", m->dev), 0);
		expect_jqf("[.pi_md_size, .pi_offset] | @tsv", "%u\t%u", m->f.ms, m->q.pi_offset);
	}
	free(data);
	free(md);
}

/* Blocks the kernel wrote, with the PI it generated, verify in the library. */
static void test_kernel_writes_library_verifies(void **state)
{
	for (int i = 0; i < NFORMATS; i++) {
		struct fmt *m = &fmts[i];
		struct bufs b;
		struct dio_pi_error e;
		uint64_t lba = 16;
		int fd;

		if (!m->pi)
			continue;
		bufs_alloc(m, NBLK, &b);
		tl_fill(b.data, b.len, 100 + i);
		fd = tl_fd_track(open(m->dev, O_RDWR | O_DIRECT));
		assert_int_equal(pwrite(fd, b.data, b.len, blk_off(m, lba)), (ssize_t)b.len);
		tl_fd_close(fd);
		read_pi(m, lba, b.back, b.md, NBLK);
		assert_memory_equal(b.back, b.data, b.len);
		/* The kernel writes app tag 0: the app tag is not checked. */
		assert_int_equal(verify(m, lba, b.back, b.md, NBLK,
					DIO_PI_CHK_GUARD | DIO_PI_CHK_REFTAG, &e), 0);
		assert_int_equal(e.escaped, 0);
		print_message("# %s: %d blocks the kernel wrote verified by libdioctl\n",
			      where(m), NBLK);
		/* dioctl says the same. */
		expect_exit(run("read %s -s %llu -l %zu --verify", m->dev,
				(unsigned long long)blk_off(m, lba), b.len), 0);
		expect_in(OUT, "blocks verified");
		expect_not_in(OUT, "NOT checked");
		bufs_free(&b);
	}
}

/*
 * PI the library generated, around opaque bytes of the caller's: the
 * device takes it, the kernel's own verification passes it, and every
 * metadata byte reads back as written (the image holds it too).
 */
static void test_library_writes_kernel_verifies(void **state)
{
	for (int i = 0; i < NFORMATS; i++) {
		struct fmt *m = &fmts[i];
		struct bufs b;
		struct dio_request r;
		struct dio_pi_error e;
		uint64_t lba = 32;
		char img[64];
		char *rv;
		FILE *f;
		int fd;

		if (!m->pi)
			continue;
		bufs_alloc(m, NBLK, &b);
		gen(m, lba, b.data, b.md, NBLK, 200 + i);
		assert_int_equal(write_pi(m, lba, b.data, b.md, NBLK, &r), (int64_t)b.len);
		/* A plain read: the kernel verifies what the library made. */
		rv = tl_sysfs_read("/sys/block/%s/integrity/read_verify", tl_basename(m->dev));
		assert_non_null(rv);
		assert_int_equal(atoi(rv), 1);
		free(rv);
		fd = tl_fd_track(open(m->dev, O_RDONLY | O_DIRECT));
		assert_int_equal(pread(fd, b.back, b.len, blk_off(m, lba)), (ssize_t)b.len);
		tl_fd_close(fd);
		assert_memory_equal(b.back, b.data, b.len);
		/* Every metadata byte as written: the opaque ones are carried. */
		read_pi(m, lba, b.back, b.mdback, NBLK);
		assert_memory_equal(b.mdback, b.md, b.mlen);
		assert_int_equal(verify(m, lba, b.back, b.mdback, NBLK, DIO_PI_CHK_ALL, &e), 0);
		/* QEMU keeps the metadata after the data in the image (mset=0). */
		snprintf(img, sizeof(img), "/tmp/results/nvme%d.img", m->nsid);
		f = fopen(img, "r");
		assert_non_null(f);
		assert_int_equal(fseek(f, (long)(m->q.capacity + lba * m->f.ms), SEEK_SET), 0);
		assert_int_equal(fread(b.mdback, 1, b.mlen, f), b.mlen);
		fclose(f);
		assert_memory_equal(b.mdback, b.md, b.mlen);
		print_message("# %s: %d blocks the library wrote taken and verified by the "
			      "kernel\n", where(m), NBLK);
		bufs_free(&b);
	}
}

/* nvme-cli's prinfo: the drive checks guard, app tag and (types 1, 2) ref tag. */
static unsigned int prinfo(const struct fmt *m)
{
	return m->f.pi_type == 3 ? 0x6 : 0x7;
}

static void put_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void get_file(const char *path, void *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_int_equal(fread(buf, 1, len, f), len);
	fclose(f);
}

/*
 * nvme-cli's read or write (@op) of the NBLK blocks at @lba, the data in
 * /tmp/f.data and the metadata in /tmp/f.md, the drive checking every
 * tag; its exit status, what it printed shown when it is not 0 and @show.
 */
static int nvme_cli(const struct fmt *m, const char *op, uint64_t lba, bool show)
{
	return tl_sh("nvme %s %s -s %llu -c %d -z %zu -y %zu -d /tmp/f.data -M /tmp/f.md "
		     "-p %u -r %llu -a %u -m 0xffff >/tmp/f.log 2>&1 || { %s false; }", op,
		     m->dev, (unsigned long long)lba, NBLK - 1, (size_t)NBLK * m->f.lba_size,
		     (size_t)NBLK * m->f.ms, prinfo(m), (unsigned long long)lba, APP,
		     show ? "cat /tmp/f.log;" : "");
}

/* nvme-cli and libdioctl read and write each other's blocks. */
static void test_nvme_cli_interop(void **state)
{
	for (int i = 0; i < NFORMATS; i++) {
		struct fmt *m = &fmts[i];
		struct bufs b;
		struct dio_request r;
		struct dio_pi_error e;
		uint64_t lba = 48;

		if (!m->pi)
			continue;
		bufs_alloc(m, NBLK, &b);
		/* nvme-cli reads what the library wrote, the drive checking it. */
		gen(m, lba, b.data, b.md, NBLK, 300 + i);
		assert_int_equal(write_pi(m, lba, b.data, b.md, NBLK, &r), (int64_t)b.len);
		assert_int_equal(nvme_cli(m, "read", lba, true), 0);
		get_file("/tmp/f.data", b.back, b.len);
		get_file("/tmp/f.md", b.mdback, b.mlen);
		assert_memory_equal(b.back, b.data, b.len);
		assert_memory_equal(b.mdback, b.md, b.mlen);
		/* The library reads and verifies what nvme-cli wrote. */
		lba += NBLK;
		gen(m, lba, b.data, b.md, NBLK, 400 + i);
		put_file("/tmp/f.data", b.data, b.len);
		put_file("/tmp/f.md", b.md, b.mlen);
		assert_int_equal(nvme_cli(m, "write", lba, true), 0);
		read_pi(m, lba, b.back, b.mdback, NBLK);
		assert_memory_equal(b.back, b.data, b.len);
		assert_memory_equal(b.mdback, b.md, b.mlen);
		assert_int_equal(verify(m, lba, b.back, b.mdback, NBLK, DIO_PI_CHK_ALL, &e), 0);
		/* nvme-cli's write of a bad guard is refused by the drive too. */
		b.md[m->q.pi_offset] ^= 0x01;
		put_file("/tmp/f.md", b.md, b.mlen);
		assert_int_not_equal(nvme_cli(m, "write", lba, false), 0);
		print_message("# %s: nvme-cli and libdioctl read each other's blocks\n",
			      where(m));
		bufs_free(&b);
	}
}

/* The guard of one stored block: data, then the metadata before the tuple. */
static uint64_t guard_of(struct fmt *m, const uint8_t *data, const uint8_t *md)
{
	uint8_t *t = tl_xalloc(m->f.ms, 0);
	uint64_t g = 0;

	memcpy(t, md, m->f.ms);
	assert_int_equal(dio_pi_generate(&m->p, data, m->f.lba_size, t,
					 &(struct dio_pi_params){ .seed = 0 }), 0);
	for (unsigned int b = 0; b < (m->tuple == 16 ? 8U : 2U); b++)
		g = g << 8 | t[m->q.pi_offset + b];
	free(t);
	return g;
}

static uint64_t be_at(const uint8_t *p, int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | *p++;
	return v;
}

/*
 * A write whose PI is wrong for one block is refused by the device, and
 * the module names that block, its tag and values: a guard changed, and
 * (PI last) an opaque byte before the tuple, which the guard covers.
 */
static void test_refused_write_names_block(void **state)
{
	for (int i = 0; i < NFORMATS; i++) {
		struct fmt *m = &fmts[i];
		size_t len = (size_t)NBLK * m->f.lba_size, mlen = NBLK * m->f.ms;
		uint8_t *data, *md;
		struct dio_request r;
		uint64_t lba = 80, want, got;
		int glen = m->tuple == 16 ? 8 : 2;
		unsigned int k = 3;

		if (!m->pi)
			continue;
		data = tl_xalloc(len, 0);
		md = tl_xalloc(mlen, 0);
		for (int opaque = 0; opaque < (m->q.pi_offset ? 2 : 1); opaque++) {
			gen(m, lba, data, md, NBLK, 500 + i);
			if (opaque)
				md[k * m->f.ms] ^= 0x80;
			else
				md[k * m->f.ms + m->q.pi_offset + glen - 1] ^= 0x01;
			want = guard_of(m, data + k * m->f.lba_size, md + k * m->f.ms);
			got = be_at(md + k * m->f.ms + m->q.pi_offset, glen);
			assert_int_equal(write_pi(m, lba, data, md, NBLK, &r), -EILSEQ);
			print_message("# %s: refused write (%s): interval %llu tag %s "
				      "expected %#llx actual %#llx by %s\n", where(m),
				      opaque ? "opaque byte" : "guard",
				      (unsigned long long)r.pi_err_interval,
				      dio_pi_tag_name(r.pi_err_tag),
				      (unsigned long long)r.pi_err_expected,
				      (unsigned long long)r.pi_err_actual,
				      dio_pi_source_name(r.pi_err_source));
			assert_int_equal(r.pi_err_interval, lba + k);
			assert_int_equal(r.pi_err_tag, DIO_PI_TAG_GUARD);
			assert_int_equal(r.pi_err_expected, want);
			assert_int_equal(r.pi_err_actual, got);
			assert_int_equal(r.pi_err_source, DIO_PI_SRC_DEVICE);
		}
		free(data);
		free(md);
	}
}

/*
 * Four blocks corrupted on the medium, behind the device: a data byte
 * (guard), the app tag, the ref tag (types 1 and 2; type 3 has none to
 * check) and, with the tuple last, an opaque byte before it (guard).
 * dioctl scrub reports each with block, tag, expected and actual values,
 * and who found it.
 */
static void test_corruption_reported(void **state)
{
	for (int i = 0; i < NFORMATS; i++) {
		struct fmt *m = &fmts[i];
		size_t len = (size_t)NBLK * m->f.lba_size, mlen = NBLK * m->f.ms;
		int glen = m->tuple == 16 ? 8 : 2, rlen = m->tuple == 16 ? 6 : 4;
		unsigned int ao = glen, ro = glen + 2;	/* app and ref tag in the tuple */
		uint8_t *data, *md, *t;
		char img[64], want[4096];
		struct dio_request r;
		uint64_t lba = 96, base, g;
		FILE *f;

		if (!m->pi)
			continue;
		data = tl_xalloc(len, 0);
		md = tl_xalloc(mlen, 0);
		gen(m, lba, data, md, NBLK, 600 + i);
		assert_int_equal(write_pi(m, lba, data, md, NBLK, &r), (int64_t)len);
		expect_exit(run("scrub %s -r %llu:%llu --app-tag %#x -j", m->dev,
				(unsigned long long)blk_off(m, lba),
				(unsigned long long)blk_off(m, lba + NBLK), APP), 0);
		snprintf(img, sizeof(img), "/tmp/results/nvme%d.img", m->nsid);
		f = fopen(img, "r+");
		assert_non_null(f);
		base = m->q.capacity + lba * m->f.ms;
		want[0] = 0;
		/* Block 1: a data byte; the guard no longer matches. */
		data[1 * m->f.lba_size + 100] ^= 0x5a;
		assert_int_equal(fseek(f, (long)(blk_off(m, lba + 1) + 100), SEEK_SET), 0);
		assert_int_equal(fputc(data[1 * m->f.lba_size + 100], f),
				 data[1 * m->f.lba_size + 100]);
		g = guard_of(m, data + m->f.lba_size, md + m->f.ms);
		snprintf(want + strlen(want), sizeof(want) - strlen(want),
			 "%llu guard 0x%llx 0x%llx device\n", (unsigned long long)(lba + 1),
			 (unsigned long long)g,
			 (unsigned long long)be_at(md + m->f.ms + m->q.pi_offset, glen));
		/* Block 3: the app tag. */
		t = md + 3 * m->f.ms + m->q.pi_offset;
		t[ao + 1] ^= 0x01;
		assert_int_equal(fseek(f, (long)(base + 3 * m->f.ms + m->q.pi_offset + ao + 1),
				       SEEK_SET), 0);
		assert_int_equal(fputc(t[ao + 1], f), t[ao + 1]);
		/* scrub's reads ask nobody else to check app tags: dioctl does. */
		snprintf(want + strlen(want), sizeof(want) - strlen(want),
			 "%llu app 0x%x 0x%x dioctl\n", (unsigned long long)(lba + 3), APP,
			 APP ^ 1);
		/* Block 5: the ref tag, where there is one. */
		if (m->f.pi_type != 3) {
			t = md + 5 * m->f.ms + m->q.pi_offset;
			t[ro + rlen - 1] ^= 0x40;
			assert_int_equal(fseek(f, (long)(base + 5 * m->f.ms + m->q.pi_offset +
							 ro + rlen - 1), SEEK_SET), 0);
			assert_int_equal(fputc(t[ro + rlen - 1], f), t[ro + rlen - 1]);
			snprintf(want + strlen(want), sizeof(want) - strlen(want),
				 "%llu ref 0x%llx 0x%llx device\n", (unsigned long long)(lba + 5),
				 (unsigned long long)(lba + 5),
				 (unsigned long long)be_at(t + ro, rlen));
		}
		/* Block 6, the tuple last: an opaque byte the guard covers. */
		if (m->q.pi_offset) {
			uint8_t *o = md + 6 * m->f.ms;

			o[0] ^= 0x21;
			assert_int_equal(fseek(f, (long)(base + 6 * m->f.ms), SEEK_SET), 0);
			assert_int_equal(fputc(o[0], f), o[0]);
			g = guard_of(m, data + 6 * m->f.lba_size, o);
			snprintf(want + strlen(want), sizeof(want) - strlen(want),
				 "%llu guard 0x%llx 0x%llx device\n", (unsigned long long)(lba + 6),
				 (unsigned long long)g,
				 (unsigned long long)be_at(o + m->q.pi_offset, glen));
		}
		assert_int_equal(fclose(f), 0);
		expect_exit(run("scrub %s -r %llu:%llu --app-tag %#x -j", m->dev,
				(unsigned long long)blk_off(m, lba),
				(unsigned long long)blk_off(m, lba + NBLK), APP), 4);
		print_message("# %s: expecting\n%s", where(m), want);
		/* The last newline is jq's to drop. */
		want[strlen(want) - 1] = 0;
		expect_jq(".failures[] | \"\\(.interval) \\(.tag) \\(.expected) \\(.actual) "
			  "\\(.found_by)\"", want);
		free(data);
		free(md);
	}
}

/*
 * fio through the dio_batch engine (fio/): PI the engine generates with
 * libdioctl (pi_act=0) on random writes, checked by libdioctl on every tag
 * when fio reads them back and verifies its own crc32c, and by the device
 * and dioctl scrub afterwards.
 */
static void test_fio_engine(void **state)
{
	const char *build = getenv("DIO_BUILD");
	char engine[512];

	snprintf(engine, sizeof(engine), "%s/fio/fio-dio_batch.so", build ? build : "build");
	assert_int_equal(access(engine, R_OK), 0);
	for (int i = 0; i < NFORMATS; i++) {
		struct fmt *m = &fmts[i];
		unsigned long long off = 1ULL << 20, len = 256 << 10;

		if (!m->pi)
			continue;
		assert_int_equal(tl_sh("fio --output-format=json --output=/tmp/f.json --name=pi "
				       "--ioengine=external:%s --filename=%s --rw=randwrite "
				       "--bs=4k --offset=%llu --size=%llu --iodepth=8 --randrepeat=1 "
				       "--pi=1 --pi_act=0 --pi_chk=GUARD,REFTAG,APPTAG "
				       "--apptag=0x%x --verify=crc32c --do_verify=1 --verify_fatal=1 "
				       ">/tmp/f.log 2>&1 || { cat /tmp/f.log /tmp/f.json; false; }",
				       engine, m->dev, off, len, APP), 0);
		assert_int_equal(tl_sh("jq -e '.jobs[0].error == 0 and .jobs[0].write.io_bytes == "
				       "%llu and .jobs[0].read.io_bytes == %llu' /tmp/f.json "
				       ">/dev/null", len, len), 0);
		expect_exit(run("scrub %s -r %llu:%llu --app-tag 0x%x -j", m->dev, off, off + len,
				APP), 0);
		expect_jq("[.pi_failures, .unchecked_blocks, .bytes_scrubbed] | @tsv",
			  "0\t0\t262144");
		print_message("# %s: fio's writes with the engine's PI verified\n", where(m));
	}
}

/*
 * Tuples that carry the escape (app tag 0xffff; for type 3 also a ref tag
 * of all ones), as drives return blocks they formatted or deallocated so:
 * nobody checks them, and dioctl read --verify says how many it did not
 * check, and "verified" only of the others.
 */
static void test_escapes_counted(void **state)
{
	for (int i = 0; i < NFORMATS; i++) {
		struct fmt *m = &fmts[i];
		size_t len = 4 * (size_t)m->f.lba_size;
		unsigned long long off;
		struct dio_request r;
		uint8_t *data, *md;
		uint64_t lba = 112;

		if (!m->pi)
			continue;
		off = blk_off(m, lba);
		data = tl_xalloc(len, 0);
		md = tl_xalloc(4 * m->f.ms, 0);
		gen(m, lba, data, md, 4, 700 + i);
		for (int k = 0; k < 4; k++) {
			uint8_t *t = md + k * m->f.ms + m->q.pi_offset;
			int glen = m->tuple == 16 ? 8 : 2;

			t[glen] = t[glen + 1] = 0xff;
			if (m->f.pi_type == 3)
				memset(t + glen + 2, 0xff, m->tuple - glen - 2);
		}
		assert_int_equal(write_pi(m, lba, data, md, 4, &r), (int64_t)len);
		expect_exit(run("read %s -s %llu -l %zu --verify --app-tag 0x55", m->dev, off,
				len), 0);
		expect_in(OUT, "4 blocks NOT checked");
		expect_not_in(OUT, "verified");
		expect_exit(run("read %s -s %llu -l %zu --verify --app-tag 0x55 -j", m->dev, off,
				len), 0);
		expect_jq("[.checked_blocks, .unchecked_blocks, .status] | @tsv", "0\t4\tok");
		expect_exit(run("scrub %s -r %llu:%llu -j", m->dev, off, off + len), 0);
		expect_jq("[.unchecked_blocks, .pi_failures] | @tsv", "4\t0");
		/* Two of them written with PI: two verified, two not checked. */
		expect_exit(run("write %s -s %llu -l %u --random 7 --pi --app-tag 0x55", m->dev,
				off, 2 * m->f.lba_size), 0);
		expect_exit(run("read %s -s %llu -l %zu --verify --app-tag 0x55", m->dev, off,
				len), 0);
		expect_in(OUT, "2 blocks verified with app tag 0x0055; 2 blocks NOT checked");
		print_message("# %s: escaped tuples counted as not checked\n", where(m));
		free(data);
		free(md);
	}
}

/*
 * The same paths for a user who is not root: uid 1000, given
 * /dev/dio_batch and the namespace by their modes (as a udev rule gives
 * them to a group), writes with PI generated by libdioctl on every format
 * the kernel offers, and reads it back verified with its app tag.
 */
static void test_unprivileged(void **state)
{
	for (int i = 0; i < NFORMATS; i++) {
		struct fmt *m = &fmts[i];
		unsigned long long off = 2ULL << 20;
		int st;

		if (!m->pi)
			continue;
		assert_int_equal(sh("chmod 0666 /dev/dio_batch %s", m->dev), 0);
		st = sh("setpriv --reuid=1000 --regid=1000 --clear-groups %s write %s -s %llu "
			"-l 64K --random 5 --pi --app-tag 0x77 >" OUT " 2>" ERR " && "
			"setpriv --reuid=1000 --regid=1000 --clear-groups %s read %s -s %llu "
			"-l 64K --verify --app-tag 0x77 >" OUT " 2>" ERR, dioctl, m->dev, off,
			dioctl, m->dev, off);
		assert_int_equal(sh("chmod 0600 /dev/dio_batch %s", m->dev), 0);
		expect_exit(st, 0);
		expect_in(OUT, "verified with app tag 0x0077");
		expect_not_in(OUT, "NOT checked");
		print_message("# %s: written and verified as uid 1000\n", where(m));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formats_offered),
		cmocka_unit_test(test_kernel_writes_library_verifies),
		cmocka_unit_test(test_library_writes_kernel_verifies),
		cmocka_unit_test(test_nvme_cli_interop),
		cmocka_unit_test(test_refused_write_names_block),
		cmocka_unit_test(test_corruption_reported),
		cmocka_unit_test(test_fio_engine),
		cmocka_unit_test(test_escapes_counted),
		cmocka_unit_test(test_unprivileged),
	};

	if (dioctl_run_init("formats-json", DIOCTL_RUN_PY_PARSE) || tl_dio_load())
		return 1;
	return cmocka_run_group_tests_name("formats", tests, setup, teardown);
}
