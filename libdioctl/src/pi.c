// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * T10 protection information: profiles, generation and verification,
 * mirroring Linux 6.1 block/t10-pi.c (t10_pi_generate/t10_pi_verify and
 * ext_pi_crc64_generate/ext_pi_crc64_verify).
 *
 * A PI buffer holds md_size bytes of metadata per interval with the tuple
 * at pi_offset; only the tuples are read or written.
 *
 * Every entry point funnels into one loop over a cursor on an iovec list;
 * the contiguous calls pass a one-segment list.  An interval that lies in
 * one segment (always, for contiguous data) costs one guard call; one that
 * spans segments is summed piece by piece.  The loop is instantiated per
 * guard type so the guard call is direct.
 */
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "dioctl_pi.h"
#include "pi_internal.h"

#define REF_MASK32	0xffffffffULL
#define REF_MASK48	0xffffffffffffULL

/* ---- profiles ---- */

static int profile_valid(const struct dio_pi_profile *p)
{
	if (!p || p->interval < 512 || p->interval > 65536 ||
	    (p->interval & (p->interval - 1)) ||
	    p->pi_type < 1 || p->pi_type > 3)
		return 0;
	for (size_t i = 0; i < sizeof(p->reserved) / sizeof(p->reserved[0]); i++)
		if (p->reserved[i])
			return 0;
	switch (p->guard_type) {
	case DIO_GUARD_IP:
	case DIO_GUARD_CRC16:
		if (p->tuple_size != 8 || p->ref_tag_size != 4)
			return 0;
		break;
	case DIO_GUARD_CRC64:
		if (p->tuple_size != 16 || p->ref_tag_size != 6)
			return 0;
		break;
	default:
		return 0;
	}
	/* The tuple lies inside each interval's metadata. */
	return p->md_size >= p->tuple_size &&
	       p->pi_offset <= p->md_size - p->tuple_size;
}

int dio_pi_profile_init(struct dio_pi_profile *p, int guard_type,
			unsigned int interval, int pi_type)
{
	struct dio_pi_profile np = {
		.guard_type = guard_type,
		.tuple_size = guard_type == DIO_GUARD_CRC64 ? 16 : 8,
		.pi_type = pi_type,
		.ref_tag_size = guard_type == DIO_GUARD_CRC64 ? 6 : 4,
		.interval = interval,
		/* Metadata that is the tuple alone. */
		.md_size = guard_type == DIO_GUARD_CRC64 ? 16 : 8,
		.pi_offset = 0,
	};

	/* Range-check before the narrowing stores above could hide junk. */
	if (!p || guard_type < 0 || guard_type > 255 || pi_type < 0 ||
	    pi_type > 255 || !profile_valid(&np)) {
		errno = EINVAL;
		return -1;
	}
	*p = np;
	return 0;
}

int dio_pi_profile_from_query(const struct dio_query *q, struct dio_pi_profile *p)
{
	struct dio_pi_profile np;
	unsigned int md;

	if (!q || !p || q->size < DIO_QUERY_SIZE_VER0) {
		errno = EINVAL;
		return -1;
	}
	if (!q->pi_interval || !q->pi_type || q->pi_guard_type == DIO_GUARD_NONE ||
	    (q->pi_guard_type != DIO_GUARD_IP && q->pi_guard_type != DIO_GUARD_CRC16 &&
	     q->pi_guard_type != DIO_GUARD_CRC64) ||
	    q->pi_storage_tag_size) {
		errno = EOPNOTSUPP;
		return -1;
	}
	if (dio_pi_profile_init(&np, q->pi_guard_type, q->pi_interval, q->pi_type) ||
	    np.tuple_size != q->pi_tuple_size || np.ref_tag_size != q->pi_ref_tag_size ||
	    q->pi_app_tag_size != 2) {
		errno = EINVAL;
		return -1;
	}
	/* Metadata beyond the tuple: the tuple must fit at its offset. */
	md = q->pi_md_size ? q->pi_md_size : q->pi_tuple_size;
	if (md < np.tuple_size || q->pi_offset > md - np.tuple_size) {
		errno = EINVAL;
		return -1;
	}
	np.md_size = md;
	np.pi_offset = q->pi_offset;
	*p = np;
	return 0;
}

static unsigned int interval_shift(const struct dio_pi_profile *p)
{
	return __builtin_ctz(p->interval);
}

ssize_t dio_pi_len(const struct dio_pi_profile *p, size_t data_len)
{
	size_t len;

	if (!profile_valid(p) || (data_len & (p->interval - 1))) {
		errno = EINVAL;
		return -1;
	}
	if (__builtin_mul_overflow(data_len >> interval_shift(p), p->md_size, &len) ||
	    len > SSIZE_MAX) {
		errno = EOVERFLOW;
		return -1;
	}
	return len;
}

uint64_t dio_pi_seed(const struct dio_query *q, uint64_t offset)
{
	uint64_t start;

	if (!q || q->size < DIO_QUERY_SIZE_VER0) {
		errno = EINVAL;
		return UINT64_MAX;
	}
	if (!q->pi_interval || !q->pi_tuple_size || !q->pi_type) {
		errno = EOPNOTSUPP;
		return UINT64_MAX;
	}
	if (q->pi_interval & (q->pi_interval - 1)) {
		errno = EINVAL;
		return UINT64_MAX;
	}
	if (__builtin_add_overflow(q->part_start_bytes, offset, &start)) {
		errno = EOVERFLOW;
		return UINT64_MAX;
	}
	if (start & (q->pi_interval - 1)) {
		errno = EINVAL;
		return UINT64_MAX;
	}
	/* Types 1, 2 and 3 alike: type 3's tuples carry no ref tag at all. */
	return start >> __builtin_ctz(q->pi_interval);
}

/* ---- tuples ---- */

struct tuple {
	uint64_t	guard;
	uint64_t	ref;
	uint16_t	app;
};

static inline uint64_t load_be64(const uint8_t *b)
{
	uint64_t v;

	memcpy(&v, b, 8);
	return be64toh(v);
}

static inline void store_be64(uint8_t *b, uint64_t v)
{
	v = htobe64(v);
	memcpy(b, &v, 8);
}

/*
 * 8-byte tuple: guard(2) app(2) ref(4); 16-byte: guard(8) app(2) ref(6).
 * Read and written as big-endian 64-bit words: one or two moves a tuple.
 */
static inline void tuple_get(int wide, const uint8_t *t, struct tuple *tp)
{
	uint64_t w = load_be64(wide ? t + 8 : t);

	tp->guard = wide ? load_be64(t) : w >> 48;
	tp->app = w >> (wide ? 48 : 32);
	tp->ref = wide ? w & REF_MASK48 : w & REF_MASK32;
}

static inline void tuple_put(int wide, uint8_t *t, const struct tuple *tp)
{
	if (wide) {
		store_be64(t, tp->guard);
		store_be64(t + 8, (uint64_t)tp->app << 48 | (tp->ref & REF_MASK48));
	} else {
		store_be64(t, tp->guard << 48 | (uint64_t)tp->app << 32 |
			      (tp->ref & REF_MASK32));
	}
}

/* ---- guards over an iovec cursor ---- */

struct cursor {
	const struct iovec *iov;
	size_t off;		/* into iov->iov_base */
};

/* Guard of a whole interval in one piece. */
static inline uint64_t guard_flat(int gt, const void *p, size_t n)
{
	switch (gt) {
	case DIO_GUARD_CRC16:
		return dio_pi_crc16_t10dif(0, p, n);
	case DIO_GUARD_CRC64:
		return dio_pi_crc64_nvme(0, p, n);
	default:
		return dio_pi_ip_checksum(p, n);
	}
}

/*
 * Guard of an interval spread over segments.  CRCs chain; the IP sum of a
 * piece that starts at an odd offset of the interval has its bytes in the
 * other halves of the words, so its folded sum is byte-swapped.
 */
static uint64_t guard_split(int gt, struct cursor *c, size_t n)
{
	uint64_t v = 0;
	size_t done = 0;

	while (done < n) {
		const uint8_t *b = (const uint8_t *)c->iov->iov_base + c->off;
		size_t k = c->iov->iov_len - c->off;
		uint32_t s;

		if (k > n - done)
			k = n - done;
		switch (gt) {
		case DIO_GUARD_CRC16:
			v = dio_pi_crc16_t10dif(v, b, k);
			break;
		case DIO_GUARD_CRC64:
			v = dio_pi_crc64_nvme(v, b, k);
			break;
		default:
			s = pi_ipsum(b, k);
			if (done & 1)
				s = (uint16_t)(s << 8 | s >> 8);
			v = pi_ipsum_add(v, s);
		}
		done += k;
		c->off += k;
		if (c->off == c->iov->iov_len) {
			c->iov++;
			c->off = 0;
		}
	}
	return gt == DIO_GUARD_IP ? pi_ipsum_to_guard(v) : v;
}

/*
 * When the tuple is not the first bytes of an interval's metadata, the
 * guard covers the interval's data and then the metadata bytes before the
 * tuple (NVMe's end-to-end protection; Linux's t10_pi_generate() and
 * ext_pi_crc64_generate() since PI offsets, 6.10).  guard_md() carries
 * guard @g of the data on over those @off bytes at @md (@g itself when
 * @off is 0, the tuple first).  CRCs continue;
 * the IP sum is unfolded from its guard first (pi_ipsum_to_guard()'s
 * inverse).  The data is a whole interval, an even length, so the
 * metadata's words line up as if the two were one buffer.  No SCSI device
 * has metadata beyond its tuple, so an IP guard with an offset is the same
 * rule carried over, not a format seen in practice.
 */
static inline uint64_t guard_md(int gt, uint64_t g, const uint8_t *md, size_t off)
{
	if (!off)
		return g;
	switch (gt) {
	case DIO_GUARD_CRC16:
		return dio_pi_crc16_t10dif(g, md, off);
	case DIO_GUARD_CRC64:
		return dio_pi_crc64_nvme(g, md, off);
	default:
		return pi_ipsum_to_guard(pi_ipsum_add((uint16_t)~htobe16(g),
						      pi_ipsum(md, off)));
	}
}

/* Skip empty segments so that c->iov points at the next data byte. */
static inline void cursor_settle(struct cursor *c)
{
	while (c->off == c->iov->iov_len) {
		c->iov++;
		c->off = 0;
	}
}

/* Guard of the next n bytes; advances the cursor.  n > 0. */
static inline uint64_t guard_next(int gt, struct cursor *c, size_t n)
{
	cursor_settle(c);
	if (c->iov->iov_len - c->off >= n) {
		const uint8_t *b = (const uint8_t *)c->iov->iov_base + c->off;

		c->off += n;
		return guard_flat(gt, b, n);
	}
	return guard_split(gt, c, n);
}

/*
 * The CRC guards of up to GUARD_BATCH whole intervals that lie in the
 * cursor's segment (at most left of them), into g64 or g16, one call of
 * the several-interval CRC (pi_crc64_multi(), pi_crc16_multi()); advances
 * the cursor past them.  Returns how many: 0 when the next interval
 * spans segments (guard_next() sums it piece by piece).  One call per
 * interval paid, at 512 bytes, the serial end of each CRC and a call
 * through the dispatch every time; the several-interval loops end each
 * interval with one product per lane and a table step, straight-line
 * code the CPU runs beside the next interval's loads (pi_crc64_x86.c,
 * pi_crc64_arm64.c).
 */
#define GUARD_BATCH	16

static inline size_t guards_flat(int gt, struct cursor *c, size_t iv, uint64_t left,
				 uint64_t *g64, uint16_t *g16)
{
	const uint8_t *b;
	size_t k;

	cursor_settle(c);
	/* A power of two (profile_valid()): no division. */
	k = (c->iov->iov_len - c->off) >> __builtin_ctzl(iv);
	if (k > left)
		k = left;
	if (k > GUARD_BATCH)
		k = GUARD_BATCH;
	if (!k)
		return 0;
	b = (const uint8_t *)c->iov->iov_base + c->off;
	if (gt == DIO_GUARD_CRC64)
		pi_crc64_multi(b, iv, k, g64);
	else
		pi_crc16_multi(b, iv, k, g16);
	c->off += k * iv;
	return k;
}

/* Skip the next n bytes without reading them. */
static void cursor_skip(struct cursor *c, size_t n)
{
	while (n) {
		size_t k = c->iov->iov_len - c->off;

		if (k > n)
			k = n;
		c->off += k;
		n -= k;
		if (c->off == c->iov->iov_len && n) {
			c->iov++;
			c->off = 0;
		}
	}
}

/* ---- argument checks ---- */

/* The parameters: present, and nothing set that this version ignores. */
static int params_valid(const struct dio_pi_params *a)
{
	if (!a || a->flags || a->reserved0)
		return 0;
	for (size_t i = 0; i < sizeof(a->reserved) / sizeof(a->reserved[0]); i++)
		if (a->reserved[i])
			return 0;
	return 1;
}

/* Total of the segments in *total; EINVAL unless it suits the profile. */
static int check_args(const struct dio_pi_profile *p, const struct dio_pi_params *a,
		      const struct iovec *iov, int iovcnt, const void *pi,
		      size_t *total)
{
	size_t sum = 0;

	if (!profile_valid(p) || !params_valid(a) || iovcnt < 0 || (iovcnt && !iov))
		goto inval;
	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len && !iov[i].iov_base)
			goto inval;
		if (__builtin_add_overflow(sum, iov[i].iov_len, &sum))
			goto inval;
	}
	if ((sum & (p->interval - 1)) || (sum && !pi))
		goto inval;
	*total = sum;
	return 0;
inval:
	errno = EINVAL;
	return -1;
}

/* ---- generation ---- */

static inline __attribute__((always_inline)) void
generate_loop(int gt, const struct dio_pi_profile *p, struct cursor *c,
	      uint64_t n, uint8_t *pi, uint64_t seed, uint16_t app_tag)
{
	int wide = gt == DIO_GUARD_CRC64;
	/*
	 * The profile in locals: the tuple stores (bytes) may alias it, and
	 * the compiler would load it again for every tuple.  Type 3 has no
	 * reference tag: the kernel writes 0.
	 */
	uint64_t mask = p->pi_type == 3 ? 0 : wide ? REF_MASK48 : REF_MASK32;
	size_t iv = p->interval, md = p->md_size, off = p->pi_offset;
	struct tuple t = { .app = app_tag };

	/*
	 * Only the tuple of each interval's metadata is written; the bytes
	 * before it are read for the guard (guard_md()).
	 */
	for (uint64_t i = 0; i < n; ) {
		uint64_t g64[GUARD_BATCH];
		uint16_t g16[GUARD_BATCH];
		size_t k = gt == DIO_GUARD_IP ? 0 : guards_flat(gt, c, iv, n - i, g64, g16);

		if (!k) {
			t.guard = guard_next(gt, c, iv);
			t.guard = guard_md(gt, t.guard, pi, off);
			t.ref = (seed + i) & mask;
			tuple_put(wide, pi + off, &t);
			i++;
			pi += md;
			continue;
		}
		for (size_t j = 0; j < k; j++, i++, pi += md) {
			t.guard = wide ? g64[j] : g16[j];
			t.guard = guard_md(gt, t.guard, pi, off);
			t.ref = (seed + i) & mask;
			tuple_put(wide, pi + off, &t);
		}
	}
}

int dio_pi_generate_iov(const struct dio_pi_profile *p, const struct iovec *iov,
			int iovcnt, void *pi, const struct dio_pi_params *a)
{
	struct cursor c = { .iov = iov };
	uint64_t seed, n;
	uint16_t app_tag;
	size_t total;

	if (check_args(p, a, iov, iovcnt, pi, &total))
		return -1;
	seed = a->seed;
	app_tag = a->app_tag;
	n = total >> interval_shift(p);
	if (!n)
		return 0;
	switch (p->guard_type) {
	case DIO_GUARD_CRC16:
		generate_loop(DIO_GUARD_CRC16, p, &c, n, pi, seed, app_tag);
		break;
	case DIO_GUARD_CRC64:
		generate_loop(DIO_GUARD_CRC64, p, &c, n, pi, seed, app_tag);
		break;
	default:
		generate_loop(DIO_GUARD_IP, p, &c, n, pi, seed, app_tag);
	}
	return 0;
}

int dio_pi_generate(const struct dio_pi_profile *p, const void *data, size_t len,
		    void *pi, const struct dio_pi_params *a)
{
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };

	return dio_pi_generate_iov(p, &iov, 1, pi, a);
}

/* ---- generation while copying ---- */

/*
 * The CRCs go COPY_BATCH intervals a call (pi_crc16_copy_multi(),
 * pi_crc64_copy_multi()).  One call per interval paid a fixed cost each
 * time (the serial end of the CRC: lanes folded onto one another, then
 * Barrett or, for CRC16, a table finish; the calls through the dispatch)
 * that held 512-byte intervals near 0.6 of memcpy.  The several-interval
 * loops end each interval with one product per lane and one Barrett step,
 * straight-line code the CPU runs beside the next interval's loads.  The
 * IP sum has no such end: one call per interval.
 */
#define COPY_BATCH	16

static inline __attribute__((always_inline)) void
generate_copy_loop(int gt, const struct dio_pi_profile *p, uint8_t *dst,
		   const uint8_t *src, uint64_t n, uint8_t *pi, uint64_t seed,
		   uint16_t app_tag)
{
	int wide = gt == DIO_GUARD_CRC64;
	uint64_t mask = wide ? REF_MASK48 : REF_MASK32;
	struct tuple t = { .app = app_tag };
	size_t iv = p->interval, off = p->pi_offset;

	if (gt == DIO_GUARD_IP) {
		for (uint64_t i = 0; i < n; i++, pi += p->md_size) {
			/* The sum's loop stores what it loads (pi_ipcsum.c). */
			t.guard = pi_ipsum_to_guard(pi_ipsum_copy(dst, src, iv));
			t.guard = guard_md(gt, t.guard, pi, off);
			dst += iv;
			src += iv;
			t.ref = p->pi_type == 3 ? 0 : (seed + i) & mask;
			tuple_put(wide, pi + off, &t);
		}
		return;
	}
	for (uint64_t i = 0; i < n; ) {
		size_t k = n - i < COPY_BATCH ? n - i : COPY_BATCH;
		uint64_t g64[COPY_BATCH];
		uint16_t g16[COPY_BATCH];

		if (wide)
			pi_crc64_copy_multi(dst, src, iv, k, g64);
		else
			pi_crc16_copy_multi(dst, src, iv, k, g16);
		dst += k * iv;
		src += k * iv;
		for (size_t j = 0; j < k; j++, i++, pi += p->md_size) {
			t.guard = wide ? g64[j] : g16[j];
			t.guard = guard_md(gt, t.guard, pi, off);
			t.ref = p->pi_type == 3 ? 0 : (seed + i) & mask;
			tuple_put(wide, pi + off, &t);
		}
	}
}

int dio_pi_generate_copy(const struct dio_pi_profile *p, void *dst, const void *src,
			 size_t len, void *pi, const struct dio_pi_params *a)
{
	struct iovec iov = { .iov_base = (void *)src, .iov_len = len };
	uint64_t n;
	size_t total;

	if (check_args(p, a, &iov, 1, pi, &total))
		return -1;
	if (len && !dst) {
		errno = EINVAL;
		return -1;
	}
	n = total >> interval_shift(p);
	if (!n)
		return 0;
	switch (p->guard_type) {
	case DIO_GUARD_CRC16:
		generate_copy_loop(DIO_GUARD_CRC16, p, dst, src, n, pi, a->seed, a->app_tag);
		break;
	case DIO_GUARD_CRC64:
		generate_copy_loop(DIO_GUARD_CRC64, p, dst, src, n, pi, a->seed, a->app_tag);
		break;
	default:
		generate_copy_loop(DIO_GUARD_IP, p, dst, src, n, pi, a->seed, a->app_tag);
	}
	return 0;
}

/* ---- verification ---- */

struct verify_args {
	uint64_t	seed;
	uint16_t	app_tag;
	uint16_t	app_mask;
	unsigned int	chk;
	struct dio_pi_error *err;
	uint64_t	escaped;	/* tuples skipped so far */
};

static int pi_fail(const struct verify_args *a, uint64_t i, uint8_t tag,
		   uint64_t expected, uint64_t actual)
{
	if (a->err) {
		memset(a->err, 0, sizeof(*a->err));
		a->err->interval = i;
		a->err->ref = a->seed + i;
		a->err->expected = expected;
		a->err->actual = actual;
		a->err->tag = tag;
		a->err->escaped = a->escaped;
	}
	errno = EILSEQ;
	return -1;
}

/* The kernel's escapes: tuples it does not check at all. */
static inline int tuple_escaped(int type, const struct tuple *t, uint64_t mask)
{
	if (t->app != DIO_PI_APP_ESCAPE)
		return 0;
	return type != 3 || t->ref == mask;
}

/* Checks in the documented order: guard, app tag, ref tag. */
static inline __attribute__((always_inline)) int
verify_loop(int gt, const struct dio_pi_profile *p, struct cursor *c, uint64_t n,
	    const uint8_t *pi, struct verify_args *a)
{
	int wide = gt == DIO_GUARD_CRC64;
	uint64_t mask = wide ? REF_MASK48 : REF_MASK32;
	uint64_t g64[GUARD_BATCH];
	uint16_t g16[GUARD_BATCH];
	size_t have = 0, next = 0;	/* CRC guards computed ahead, the next one */
	size_t off = p->pi_offset;
	struct tuple t;

	for (uint64_t i = 0; i < n; i++, pi += p->md_size) {
		/*
		 * CRCs go several intervals a call (guards_flat()), escaped ones
		 * too: computed and not looked at, as a batch is cheaper than
		 * a call each.
		 */
		if ((a->chk & DIO_PI_CHK_GUARD) && gt != DIO_GUARD_IP && next == have) {
			have = guards_flat(gt, c, p->interval, n - i, g64, g16);
			next = 0;
		}
		tuple_get(wide, pi + off, &t);
		if (tuple_escaped(p->pi_type, &t, mask)) {
			a->escaped++;
			if (next < have)
				next++;
			else if (a->chk & DIO_PI_CHK_GUARD)
				cursor_skip(c, p->interval);
			continue;
		}
		if (a->chk & DIO_PI_CHK_GUARD) {
			uint64_t g;

			if (next < have) {
				g = wide ? g64[next] : g16[next];
				next++;
			} else {
				g = guard_next(gt, c, p->interval);
			}
			g = guard_md(gt, g, pi, off);
			if (g != t.guard)
				return pi_fail(a, i, DIO_PI_TAG_GUARD, g, t.guard);
		}
		if ((a->chk & DIO_PI_CHK_APPTAG) && ((t.app ^ a->app_tag) & a->app_mask))
			return pi_fail(a, i, DIO_PI_TAG_APP, a->app_tag, t.app);
		if ((a->chk & DIO_PI_CHK_REFTAG) && p->pi_type != 3 &&
		    t.ref != ((a->seed + i) & mask))
			return pi_fail(a, i, DIO_PI_TAG_REF, (a->seed + i) & mask, t.ref);
	}
	return 0;
}

int dio_pi_verify_iov(const struct dio_pi_profile *p, const struct iovec *iov,
		      int iovcnt, const void *pi, const struct dio_pi_params *prm,
		      struct dio_pi_error *err)
{
	struct verify_args a;
	struct cursor c = { .iov = iov };
	unsigned int chk_flags;
	size_t total;
	uint64_t n;
	int ret;

	if (check_args(p, prm, iov, iovcnt, pi, &total))
		return -1;
	chk_flags = prm->chk_flags;
	if (chk_flags & ~DIO_PI_CHK_ALL) {
		errno = EINVAL;
		return -1;
	}
	a = (struct verify_args){ prm->seed, prm->app_tag, prm->app_mask,
				  chk_flags, err, 0 };
	n = total >> interval_shift(p);
	if (!n || !chk_flags)
		ret = 0;
	else if (p->guard_type == DIO_GUARD_CRC16)
		ret = verify_loop(DIO_GUARD_CRC16, p, &c, n, pi, &a);
	else if (p->guard_type == DIO_GUARD_CRC64)
		ret = verify_loop(DIO_GUARD_CRC64, p, &c, n, pi, &a);
	else
		ret = verify_loop(DIO_GUARD_IP, p, &c, n, pi, &a);
	if (!ret && err) {
		memset(err, 0, sizeof(*err));
		err->escaped = a.escaped;
	}
	return ret;
}

int dio_pi_verify(const struct dio_pi_profile *p, const void *data, size_t len,
		  const void *pi, const struct dio_pi_params *a,
		  struct dio_pi_error *err)
{
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };

	return dio_pi_verify_iov(p, &iov, 1, pi, a, err);
}
