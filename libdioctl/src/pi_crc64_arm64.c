// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * CRC-64/NVME on little-endian AArch64: PMULL folding (the ARMv8 Crypto
 * extension), with its copying and several-interval twins.  pi_crc64.c
 * has the method and the notation; pi_crc64_dispatch.c chooses it by the
 * kernel's HWCAP.  Empty elsewhere.
 */
#include "pi_internal.h"

#ifdef PI_ARM64
#include <arm_neon.h>

#include "pi_crc64.h"

/*
 * ---- PMULL, 128-bit (AArch64) ----
 *
 * The PCLMULQDQ path's rounds, word for word, on NEON registers: a 16-byte
 * block loaded little-endian has the same two 64-bit lanes as on x86,
 * PMULL (vmull_p64) multiplies the low lanes and PMULL2
 * (vmull_high_p64) the high ones, so the constants and the Barrett step
 * are the same.  Eight lanes of 16 bytes, 128 bytes a round; the
 * several-interval function ends each interval with the kfin constants.
 */
#define PMULL __attribute__((target("+crypto")))

PMULL static INLINE uint64x2_t pm_load(const uint64_t k[2])
{
	return vld1q_u64(k);
}

/* a.lo * b.lo and a.hi * b.hi, carry-less, 128 bits each. */
PMULL static INLINE uint64x2_t pm_lo(uint64x2_t a, uint64x2_t b)
{
	return vreinterpretq_u64_p128(vmull_p64(vgetq_lane_p64(vreinterpretq_p64_u64(a), 0),
						vgetq_lane_p64(vreinterpretq_p64_u64(b), 0)));
}

PMULL static INLINE uint64x2_t pm_hi(uint64x2_t a, uint64x2_t b)
{
	return vreinterpretq_u64_p128(vmull_high_p64(vreinterpretq_p64_u64(a),
						     vreinterpretq_p64_u64(b)));
}

PMULL static INLINE uint64x2_t pm_fold(uint64x2_t x, uint64x2_t k)
{
	return veorq_u64(pm_lo(x, k), pm_hi(x, k));
}

PMULL static INLINE uint64x2_t pm_fold_onto(uint64x2_t x, uint64x2_t k, uint64x2_t data)
{
	return veorq_u64(pm_fold(x, k), data);
}

/* The 16 bytes at src + i, also stored at dst + i when copying. */
PMULL static INLINE uint64x2_t pm_ld(uint8_t *dst, const uint8_t *src, size_t i)
{
	uint8x16_t v = vld1q_u8(src + i);

	if (dst)
		vst1q_u8(dst + i, v);
	return vreinterpretq_u64_u8(v);
}

/* Barrett, T (T1 the low lane) to the register (see step8_of_t()). */
PMULL static INLINE uint64_t pm_barrett64(uint64x2_t t)
{
	uint64x2_t v, w;
	uint64_t lo, hi;

	v = pm_lo(t, vdupq_n_u64(pi_crc64_k_mu));
	v = veorq_u64(t, vshlq_n_u64(v, 1));			/* q */
	w = pm_lo(v, vdupq_n_u64(CRC64_POLY_REFL));
	lo = vgetq_lane_u64(w, 0);
	hi = vgetq_lane_u64(w, 1);
	return ((hi << 1) | (lo >> 63)) ^ vgetq_lane_u64(t, 1);
}

PMULL static INLINE uint64_t pm_reduce128(uint64x2_t x)
{
	/* L * k.hi, then the high lane moved down onto it. */
	uint64x2_t k = pm_load(pi_crc64_fold_k[1]);
	uint64x2_t t = vreinterpretq_u64_p128(vmull_p64(vgetq_lane_p64(vreinterpretq_p64_u64(x), 0),
							vgetq_lane_p64(vreinterpretq_p64_u64(k), 1)));

	return pm_barrett64(veorq_u64(t, vextq_u64(x, vdupq_n_u64(0), 1)));
}

/* Eight lanes that end the message to the register, as lanes8_reg(). */
PMULL static INLINE uint64_t pm_lanes8_reg(uint64x2_t x0, uint64x2_t x1, uint64x2_t x2,
					   uint64x2_t x3, uint64x2_t x4, uint64x2_t x5,
					   uint64x2_t x6, uint64x2_t x7)
{
	x0 = veorq_u64(pm_fold(x0, pm_load(pi_crc64_kfin[8])), pm_fold(x1, pm_load(pi_crc64_kfin[9])));
	x2 = veorq_u64(pm_fold(x2, pm_load(pi_crc64_kfin[10])), pm_fold(x3, pm_load(pi_crc64_kfin[11])));
	x4 = veorq_u64(pm_fold(x4, pm_load(pi_crc64_kfin[12])), pm_fold(x5, pm_load(pi_crc64_kfin[13])));
	/* The last lane's high half: no product, as in lanes8_reg(). */
	x6 = veorq_u64(pm_fold(x6, pm_load(pi_crc64_kfin[14])),
		       veorq_u64(pm_lo(x7, pm_load(pi_crc64_kfin[15])), vextq_u64(x7, vdupq_n_u64(0), 1)));
	return pm_barrett64(veorq_u64(veorq_u64(x0, x2), veorq_u64(x4, x6)));
}

PMULL static INLINE uint64_t crc64_finish_pmull(uint64x2_t x, uint8_t *dst, const uint8_t *src,
						size_t i, size_t len)
{
	uint64x2_t k = pm_load(pi_crc64_fold_k[1]);

	for (; len - i >= 16; i += 16)
		x = pm_fold_onto(x, k, pm_ld(dst, src, i));
	return crc64_tail(pm_reduce128(x), dst, src, i, len);
}

PMULL static INLINE uint64_t crc64_pmull_core(uint64_t crc, uint8_t *dst,
					      const uint8_t *src, size_t len)
{
	uint64x2_t x0, x1, x2, x3, x4, x5, x6, x7, k;
	size_t i;

	if (len < 16)
		return crc64_tail(~crc, dst, src, 0, len);
	x0 = veorq_u64(pm_ld(dst, src, 0), vsetq_lane_u64(~crc, vdupq_n_u64(0), 0));
	if (len < 128)
		return crc64_finish_pmull(x0, dst, src, 16, len);
	x1 = pm_ld(dst, src, 16);
	x2 = pm_ld(dst, src, 32);
	x3 = pm_ld(dst, src, 48);
	x4 = pm_ld(dst, src, 64);
	x5 = pm_ld(dst, src, 80);
	x6 = pm_ld(dst, src, 96);
	x7 = pm_ld(dst, src, 112);
	k = pm_load(pi_crc64_fold_k[8]);
	for (i = 128; len - i >= 128; i += 128) {
		x0 = pm_fold_onto(x0, k, pm_ld(dst, src, i));
		x1 = pm_fold_onto(x1, k, pm_ld(dst, src, i + 16));
		x2 = pm_fold_onto(x2, k, pm_ld(dst, src, i + 32));
		x3 = pm_fold_onto(x3, k, pm_ld(dst, src, i + 48));
		x4 = pm_fold_onto(x4, k, pm_ld(dst, src, i + 64));
		x5 = pm_fold_onto(x5, k, pm_ld(dst, src, i + 80));
		x6 = pm_fold_onto(x6, k, pm_ld(dst, src, i + 96));
		x7 = pm_fold_onto(x7, k, pm_ld(dst, src, i + 112));
	}
	if (i == len)
		return ~pm_lanes8_reg(x0, x1, x2, x3, x4, x5, x6, x7);
	/* 8 -> 1, as in the PCLMULQDQ path. */
	x0 = veorq_u64(pm_fold(x0, pm_load(pi_crc64_fold_k[7])), pm_fold(x1, pm_load(pi_crc64_fold_k[6])));
	x2 = veorq_u64(pm_fold(x2, pm_load(pi_crc64_fold_k[5])), pm_fold(x3, pm_load(pi_crc64_fold_k[4])));
	x4 = veorq_u64(pm_fold(x4, pm_load(pi_crc64_fold_k[3])), pm_fold(x5, pm_load(pi_crc64_fold_k[2])));
	x6 = pm_fold_onto(x6, pm_load(pi_crc64_fold_k[1]), x7);
	x0 = veorq_u64(veorq_u64(x0, x2), veorq_u64(x4, x6));
	return crc64_finish_pmull(x0, dst, src, i, len);
}

PMULL uint64_t pi_crc64_pmull(uint64_t crc, const void *buf, size_t len)
{
	return crc64_pmull_core(crc, NULL, buf, len);
}

PMULL uint64_t pi_crc64_copy_pmull(uint64_t crc, void *dst, const void *src, size_t len)
{
	return crc64_pmull_core(crc, pi_copy_dst(dst), src, len);
}

PMULL static INLINE void crc64_multi_pmull_core(uint8_t *dst, const uint8_t *src,
						size_t interval, size_t n, uint64_t *out)
{
	const uint64x2_t k = pm_load(pi_crc64_fold_k[8]);
	const uint64x2_t init = vsetq_lane_u64(~0ULL, vdupq_n_u64(0), 0);

	for (size_t m = 0, o = 0; m < n; m++, o += interval) {
		uint64x2_t x0, x1, x2, x3, x4, x5, x6, x7;

		x0 = veorq_u64(pm_ld(dst, src, o), init);
		x1 = pm_ld(dst, src, o + 16);
		x2 = pm_ld(dst, src, o + 32);
		x3 = pm_ld(dst, src, o + 48);
		x4 = pm_ld(dst, src, o + 64);
		x5 = pm_ld(dst, src, o + 80);
		x6 = pm_ld(dst, src, o + 96);
		x7 = pm_ld(dst, src, o + 112);
		for (size_t i = o + 128; i < o + interval; i += 128) {
			x0 = pm_fold_onto(x0, k, pm_ld(dst, src, i));
			x1 = pm_fold_onto(x1, k, pm_ld(dst, src, i + 16));
			x2 = pm_fold_onto(x2, k, pm_ld(dst, src, i + 32));
			x3 = pm_fold_onto(x3, k, pm_ld(dst, src, i + 48));
			x4 = pm_fold_onto(x4, k, pm_ld(dst, src, i + 64));
			x5 = pm_fold_onto(x5, k, pm_ld(dst, src, i + 80));
			x6 = pm_fold_onto(x6, k, pm_ld(dst, src, i + 96));
			x7 = pm_fold_onto(x7, k, pm_ld(dst, src, i + 112));
		}
		out[m] = ~pm_lanes8_reg(x0, x1, x2, x3, x4, x5, x6, x7);
	}
}

PMULL void pi_crc64_copy_multi_pmull(void *dst, const void *src, size_t interval,
				     size_t n, uint64_t *out)
{
	if (!interval || interval % 128)
		crc64_multi_each(pi_crc64_pmull, pi_crc64_copy_pmull, dst, src, interval, n, out);
	else
		crc64_multi_pmull_core(pi_copy_dst(dst), src, interval, n, out);
}

PMULL void pi_crc64_multi_pmull(const void *src, size_t interval, size_t n, uint64_t *out)
{
	if (!interval || interval % 128)
		crc64_multi_each(pi_crc64_pmull, pi_crc64_copy_pmull, NULL, src, interval, n, out);
	else
		crc64_multi_pmull_core(NULL, src, interval, n, out);
}
#endif /* PI_ARM64 */
