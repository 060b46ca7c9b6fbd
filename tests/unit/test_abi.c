// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The ABI's layout: sizes and offsets that 32- and 64-bit programs and
 * every module version must agree on.  A change here breaks binaries.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <linux/dio_batch.h>
#include "dioctl.h"

#define OFF(t, f) offsetof(struct t, f)

/*
 * The fields of a struct, in the table's order, tile it: each starts where
 * the one before it ends (padding is explicit), or is the same place under
 * another name (a union), and the last ends where the struct does.  So a
 * field the table has no row for, or a hole, is found.
 */
struct layout_walk {
	const char	*type;
	size_t		size;
	size_t		off;	/* of the last field */
	size_t		end;	/* of the last field */
};

static void walk_done(struct layout_walk *w)
{
	if (w->type && w->end != w->size)
		fail_msg("struct %s: its table rows end at byte %zu, the struct at %zu",
			 w->type, w->end, w->size);
}

static void walk_struct(struct layout_walk *w, const char *type, size_t size)
{
	walk_done(w);
	*w = (struct layout_walk){ .type = type, .size = size };
}

static void walk_field(struct layout_walk *w, const char *type, const char *f,
		       size_t off, size_t size)
{
	if (!w->type || strcmp(w->type, type))
		fail_msg("%s.%s: not under its struct's DIO_ABI_SIZE row", type, f);
	if (w->end && off == w->off && off + size == w->end)
		return;		/* a union's other name */
	if (off != w->end)
		fail_msg("%s.%s at byte %zu: the field before it ends at %zu",
			 type, f, off, w->end);
	w->off = off;
	w->end = off + size;
}

/*
 * The table the module compiles into BUILD_BUG_ON()s (module/abi_layout.h:
 * every struct's size, its *_SIZE_VER0, every field's offset and size,
 * every command's number), checked against the header as a program
 * compiles it.  One table, so the module and programs cannot disagree;
 * tests/compat32.c checks it as a 32-bit program compiles the header.
 */
static void test_layout(void **state)
{
	struct layout_walk w = { 0 };

#define DIO_ABI_SIZE(type, size)						\
	do {									\
		assert_int_equal(sizeof(struct type), size);			\
		walk_struct(&w, #type, size);					\
	} while (0)
#define DIO_ABI_CONST(name, value)	assert_int_equal(name, value)
#define DIO_ABI_FIELD(type, f, off, size)					\
	do {									\
		assert_int_equal(offsetof(struct type, f), off);		\
		assert_int_equal(sizeof(((struct type *)0)->f), size);		\
		walk_field(&w, #type, #f, off, size);				\
	} while (0)
#define DIO_ABI_IOC(cmd, nr)							\
	do {									\
		assert_int_equal(_IOC_TYPE(cmd), DIO_BATCH_IOC_MAGIC);		\
		assert_int_equal(_IOC_NR(cmd), nr);				\
		assert_int_equal(_IOC_DIR(cmd), _IOC_READ | _IOC_WRITE);	\
	} while (0)
#include "../../module/abi_layout.h"
#undef DIO_ABI_SIZE
#undef DIO_ABI_CONST
#undef DIO_ABI_FIELD
#undef DIO_ABI_IOC
	walk_done(&w);
	/* 64-bit fields are naturally aligned: one layout on i386 too. */
	assert_int_equal(OFF(dio_request, result) % 8, 0);
	assert_int_equal(OFF(dio_stat, key) % 8, 0);
}

/* ioctl numbers and constants: fixed once published. */
static void test_constants(void **state)
{
	assert_int_equal(DIO_BATCH_ABI_VERSION, 4);
	assert_int_equal(_IOC_TYPE(DIO_IOC_STAT), 0xDB);
	assert_int_equal(_IOC_NR(DIO_IOC_STAT), 0x48);
	assert_int_equal(_IOC_DIR(DIO_IOC_STAT), _IOC_READ | _IOC_WRITE);
	assert_int_equal(_IOC_SIZE(DIO_IOC_STAT), DIO_STAT_SIZE_VER0);
	assert_int_equal(_IOC_NR(DIO_IOC_FEATURES), 0x40);
	assert_int_equal(_IOC_NR(DIO_IOC_INIT), 0x41);
	assert_int_equal(_IOC_NR(DIO_IOC_OPEN), 0x42);
	assert_int_equal(_IOC_NR(DIO_IOC_CLOSE), 0x43);
	assert_int_equal(_IOC_NR(DIO_IOC_QUERY), 0x44);
	assert_int_equal(_IOC_NR(DIO_IOC_SUBMIT), 0x45);
	assert_int_equal(_IOC_NR(DIO_IOC_WAIT), 0x46);
	assert_int_equal(_IOC_NR(DIO_IOC_COLLECT), 0x47);
	/* ABI 3. */
	assert_int_equal(_IOC_TYPE(DIO_IOC_REGISTER), 0xDB);
	assert_int_equal(_IOC_NR(DIO_IOC_REGISTER), 0x49);
	assert_int_equal(_IOC_DIR(DIO_IOC_REGISTER), _IOC_READ | _IOC_WRITE);
	assert_int_equal(_IOC_SIZE(DIO_IOC_REGISTER), DIO_REGISTER_SIZE_VER0);
	assert_int_equal(_IOC_TYPE(DIO_IOC_UNREGISTER), 0xDB);
	assert_int_equal(_IOC_NR(DIO_IOC_UNREGISTER), 0x4A);
	assert_int_equal(_IOC_DIR(DIO_IOC_UNREGISTER), _IOC_READ | _IOC_WRITE);
	assert_int_equal(_IOC_SIZE(DIO_IOC_UNREGISTER), DIO_REGISTER_SIZE_VER0);
	assert_int_equal(DIO_FEAT_FIXED_BUFS, 1ULL << 6);
	assert_true(DIO_FEAT_ALL & DIO_FEAT_FIXED_BUFS);
	assert_int_equal(DIO_REQ_FIXED, 1U << 3);
	assert_int_equal(DIO_REQ_F_ALL,
			 DIO_REQ_FUA | DIO_REQ_IOVEC | DIO_REQ_PI | DIO_REQ_FIXED);
	/* It fits the 16-bit request flags. */
	assert_true(DIO_REQ_F_ALL <= UINT16_MAX);
	assert_int_equal(DIO_FOREIGN, 1U << 3);
	assert_true(DIO_INIT_F_ALL & DIO_FOREIGN);
	assert_int_equal(DIO_INIT_F_ALL,
			 DIO_CREAT | DIO_EXCL | DIO_PRIVATE | DIO_FOREIGN);
	assert_true(DIO_FEAT_ALL & DIO_FEAT_STAT);
	assert_true(DIO_FEAT_ALL & DIO_FEAT_PIN_LIMIT);
	/* ABI 4: the partition's start, where reserved[0] was. */
	assert_int_equal(DIO_FEAT_PART_START, 1ULL << 7);
	assert_true(DIO_FEAT_ALL & DIO_FEAT_PART_START);
	assert_int_equal(DIO_STAT_PRIVATE, 1U << 0);
	assert_int_equal(DIO_PI_INTERVAL_UNKNOWN, ~0ULL);
	/* Upstream's IO_INTEGRITY_CHK_* and T10_PI_APP_ESCAPE. */
	assert_int_equal(DIO_PI_CHK_ALL, 0x7);
	assert_int_equal(DIO_PI_APP_ESCAPE, 0xffff);
	/* It fits the field it is reported in. */
	assert_true((__typeof__(((struct dio_request *)0)->pi_err_interval))
		    DIO_PI_INTERVAL_UNKNOWN == ~0ULL);
}

/*
 * The LIBDIOCTL_1.2 request helpers fill what the ABI says a registered
 * buffer's request holds, and nothing else differs from the plain ones.
 */
static void test_fixed_helpers(void **state)
{
	static char buf[8192];
	struct dio_request r, plain;

	memset(&r, 0xa5, sizeof(r));
	dio_req_prep_read_fixed(&r, 7, buf + 4096, 4096, 1 << 20, 5);
	assert_int_equal(r.size, sizeof(r));
	assert_int_equal(r.opcode, DIO_OP_READ);
	assert_int_equal(r.flags, DIO_REQ_FIXED);
	assert_int_equal(r.handle, 7);
	assert_int_equal(r.buf_index, 5);
	assert_int_equal(r.buf, (uintptr_t)(buf + 4096));
	assert_int_equal(r.len, 4096);
	assert_int_equal(r.offset, 1 << 20);
	/* The rest is what dio_req_prep_read() leaves: zero. */
	dio_req_prep_read(&plain, 7, buf + 4096, 4096, 1 << 20);
	plain.flags = DIO_REQ_FIXED;
	plain.buf_index = 5;
	assert_memory_equal(&r, &plain, sizeof(r));

	memset(&r, 0x5a, sizeof(r));
	dio_req_prep_write_fixed(&r, 3, buf, 8192, 4096, 0xfffffffe);
	dio_req_prep_write(&plain, 3, buf, 8192, 4096);
	assert_int_equal(r.opcode, DIO_OP_WRITE);
	assert_int_equal(r.buf_index, 0xfffffffe);
	plain.flags = DIO_REQ_FIXED;
	plain.buf_index = 0xfffffffe;
	assert_memory_equal(&r, &plain, sizeof(r));
	/* PI goes on top, as on any request. */
	assert_int_equal(dio_req_set_pi(&r, buf, 8, 0, 0, 0), 0);
	assert_int_equal(r.flags, DIO_REQ_FIXED | DIO_REQ_PI);
	assert_int_equal(r.buf_index, 0xfffffffe);
}

/*
 * sys_dio_register_buffers() refuses no buffers without a system call: on
 * descriptor -1 a call would fail with EBADF instead.
 */
static void test_register_args(void **state)
{
	static struct iovec many[100];	/* more than fit on the stack */
	struct iovec iov = { .iov_base = NULL, .iov_len = 4096 };

	errno = 0;
	assert_int_equal(sys_dio_register_buffers(-1, NULL, 1), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(sys_dio_register_buffers(-1, &iov, 0), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(sys_dio_register_buffers(-1, NULL, 0), -1);
	assert_int_equal(errno, EINVAL);
	/* Anything else is the kernel's to judge. */
	errno = 0;
	assert_int_equal(sys_dio_register_buffers(-1, &iov, 1), -1);
	assert_int_equal(errno, EBADF);
	errno = 0;
	assert_int_equal(sys_dio_register_buffers(-1, many, 100), -1);
	assert_int_equal(errno, EBADF);
	/* Not even read: the module refuses such a count. */
	errno = 0;
	assert_int_equal(sys_dio_register_buffers(-1, &iov, UINT32_MAX), -1);
	assert_int_equal(errno, EBADF);
	errno = 0;
	assert_int_equal(sys_dio_unregister_buffers(-1), -1);
	assert_int_equal(errno, EBADF);
}

/* libdioctl's own structs: fixed once the library is released. */
static void test_library_structs(void **state)
{
	assert_int_equal(sizeof(struct dio_pi_profile), 32);
	assert_int_equal(offsetof(struct dio_pi_profile, interval), 4);
	assert_int_equal(offsetof(struct dio_pi_profile, md_size), 8);
	assert_int_equal(offsetof(struct dio_pi_profile, pi_offset), 10);
	assert_int_equal(offsetof(struct dio_pi_profile, reserved), 12);
	/* Parameters of generation and verification: reserved room. */
	assert_int_equal(sizeof(struct dio_pi_params), 48);
	assert_int_equal(offsetof(struct dio_pi_params, seed), 0);
	assert_int_equal(offsetof(struct dio_pi_params, app_tag), 8);
	assert_int_equal(offsetof(struct dio_pi_params, app_mask), 10);
	assert_int_equal(offsetof(struct dio_pi_params, chk_flags), 12);
	assert_int_equal(offsetof(struct dio_pi_params, flags), 16);
	assert_int_equal(offsetof(struct dio_pi_params, reserved0), 20);
	assert_int_equal(offsetof(struct dio_pi_params, reserved), 24);
	/* The failure report: output only, with reserved room too. */
	assert_int_equal(sizeof(struct dio_pi_error), 64);
	assert_int_equal(offsetof(struct dio_pi_error, tag), 32);
	assert_int_equal(offsetof(struct dio_pi_error, pad), 33);
	assert_int_equal(offsetof(struct dio_pi_error, reserved), 40);
}

/* Released symbols stay in their version node (libdioctl.map). */
static void test_symbol_versions(void **state)
{
	static const char *const v1_0[] = {
		"dio_pi_crc16_t10dif",
		"dio_pi_crc64_nvme",
		"dio_pi_explain",
		"dio_pi_generate",
		"dio_pi_generate_iov",
		"dio_pi_ip_checksum",
		"dio_pi_len",
		"dio_pi_profile_from_query",
		"dio_pi_profile_init",
		"dio_pi_read_raw",
		"dio_pi_verify",
		"dio_pi_verify_iov",
		"dio_req_prep_flush",
		"dio_req_prep_read",
		"dio_req_prep_readv",
		"dio_req_prep_write",
		"dio_req_prep_writev",
		"dio_req_set_pi",
		"sys_dio_close",
		"sys_dio_collect",
		"sys_dio_exit",
		"sys_dio_features",
		"sys_dio_init",
		"sys_dio_init_mode",
		"sys_dio_open",
		"sys_dio_query",
		"sys_dio_stat",
		"sys_dio_submit",
		"sys_dio_wait",
	};
	static const char *const v1_2[] = {
		"dio_req_prep_read_fixed",
		"dio_req_prep_write_fixed",
		"sys_dio_register_buffers",
		"sys_dio_unregister_buffers",
	};
	/* LIBDIOCTL_1.3: libdioctl 1.0.0. */
	static const char *const v1_3[] = {
		"dio_pi_seed",
	};
	void *so = dlopen("build/libdioctl.so.1", RTLD_NOW);
	size_t i;

	assert_non_null(so);
	for (i = 0; i < sizeof(v1_0) / sizeof(v1_0[0]); i++) {
		if (!dlvsym(so, v1_0[i], "LIBDIOCTL_1.0"))
			fail_msg("%s@LIBDIOCTL_1.0 missing", v1_0[i]);
	}
	/* LIBDIOCTL_1.1 (libdioctl 0.2): there, and only there. */
	if (!dlvsym(so, "dio_pi_generate_copy", "LIBDIOCTL_1.1"))
		fail_msg("dio_pi_generate_copy@LIBDIOCTL_1.1 missing");
	assert_null(dlvsym(so, "dio_pi_generate_copy", "LIBDIOCTL_1.0"));
	/* LIBDIOCTL_1.2 (libdioctl 0.3): registered buffers. */
	for (i = 0; i < sizeof(v1_2) / sizeof(v1_2[0]); i++) {
		if (!dlvsym(so, v1_2[i], "LIBDIOCTL_1.2"))
			fail_msg("%s@LIBDIOCTL_1.2 missing", v1_2[i]);
		assert_null(dlvsym(so, v1_2[i], "LIBDIOCTL_1.1"));
		assert_null(dlvsym(so, v1_2[i], "LIBDIOCTL_1.0"));
	}
	assert_null(dlvsym(so, "dio_pi_generate_copy", "LIBDIOCTL_1.2"));
	/* LIBDIOCTL_1.3 (libdioctl 1.0.0). */
	for (i = 0; i < sizeof(v1_3) / sizeof(v1_3[0]); i++) {
		if (!dlvsym(so, v1_3[i], "LIBDIOCTL_1.3"))
			fail_msg("%s@LIBDIOCTL_1.3 missing", v1_3[i]);
		assert_null(dlvsym(so, v1_3[i], "LIBDIOCTL_1.2"));
		assert_null(dlvsym(so, v1_3[i], "LIBDIOCTL_1.1"));
		assert_null(dlvsym(so, v1_3[i], "LIBDIOCTL_1.0"));
	}
	/* Internal helpers are not exported. */
	assert_null(dlsym(so, "pi_crc64_copy"));
	assert_null(dlsym(so, "pi_crc64_vpclmul256"));
	assert_null(dlsym(so, "pi_crc64_paths"));
	assert_null(dlsym(so, "dio_pi_crc16_portable"));
	dlclose(so);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_constants),
		cmocka_unit_test(test_fixed_helpers),
		cmocka_unit_test(test_register_args),
		cmocka_unit_test(test_library_structs),
		cmocka_unit_test(test_symbol_versions),
	};

	return cmocka_run_group_tests_name("abi", tests, NULL, NULL);
}
