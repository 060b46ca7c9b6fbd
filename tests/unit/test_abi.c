// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The ABI's layout: sizes and offsets that 32- and 64-bit programs and
 * every module version must agree on.  A change here breaks binaries.
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <linux/dio_batch.h>

#define OFF(t, f) offsetof(struct t, f)

static void test_sizes_match_ver0(void **state)
{
	assert_int_equal(sizeof(struct dio_features), DIO_FEATURES_SIZE_VER0);
	assert_int_equal(sizeof(struct dio_init), DIO_INIT_SIZE_VER0);
	assert_int_equal(sizeof(struct dio_open), DIO_OPEN_SIZE_VER0);
	assert_int_equal(sizeof(struct dio_close), DIO_CLOSE_SIZE_VER0);
	assert_int_equal(sizeof(struct dio_query), DIO_QUERY_SIZE_VER0);
	assert_int_equal(sizeof(struct dio_request), DIO_REQUEST_SIZE_VER0);
	assert_int_equal(sizeof(struct dio_submit), DIO_SUBMIT_SIZE_VER0);
	assert_int_equal(sizeof(struct dio_wait), DIO_WAIT_SIZE_VER0);
}

static void test_size_field_first(void **state)
{
	assert_int_equal(OFF(dio_features, size), 0);
	assert_int_equal(OFF(dio_init, size), 0);
	assert_int_equal(OFF(dio_open, size), 0);
	assert_int_equal(OFF(dio_close, size), 0);
	assert_int_equal(OFF(dio_query, size), 0);
	assert_int_equal(OFF(dio_request, size), 0);
	assert_int_equal(OFF(dio_submit, size), 0);
	assert_int_equal(OFF(dio_wait, size), 0);
}

static void test_request_layout(void **state)
{
	assert_int_equal(OFF(dio_request, opcode), 4);
	assert_int_equal(OFF(dio_request, flags), 6);
	assert_int_equal(OFF(dio_request, handle), 8);
	assert_int_equal(OFF(dio_request, buf), 16);
	assert_int_equal(OFF(dio_request, len), 24);
	assert_int_equal(OFF(dio_request, offset), 32);
	assert_int_equal(OFF(dio_request, cookie), 40);
	assert_int_equal(OFF(dio_request, pi_buf), 48);
	assert_int_equal(OFF(dio_request, pi_len), 56);
	assert_int_equal(OFF(dio_request, pi_flags), 60);
	assert_int_equal(OFF(dio_request, app_tag), 62);
	assert_int_equal(OFF(dio_request, app_tag_mask), 64);
	assert_int_equal(OFF(dio_request, result), 72);
	assert_int_equal(OFF(dio_request, pi_err_sector), 80);
	assert_int_equal(OFF(dio_request, pi_err_expected), 88);
	assert_int_equal(OFF(dio_request, pi_err_actual), 96);
	assert_int_equal(OFF(dio_request, pi_err_tag), 104);
	assert_int_equal(OFF(dio_request, pi_err_source), 105);
	assert_int_equal(OFF(dio_request, reserved), 112);
	/* 64-bit fields are naturally aligned: same layout on i386. */
	assert_int_equal(OFF(dio_request, result) % 8, 0);
}

static void test_query_layout(void **state)
{
	assert_int_equal(OFF(dio_query, capacity), 24);
	assert_int_equal(OFF(dio_query, pi_caps), 40);
	assert_int_equal(OFF(dio_query, pi_interval), 44);
	assert_int_equal(OFF(dio_query, pi_tuple_size), 46);
	assert_int_equal(OFF(dio_query, pi_guard_type), 47);
	assert_int_equal(OFF(dio_query, pi_md_size), 53);
	assert_int_equal(OFF(dio_query, pi_opaque_size), 54);
	assert_int_equal(OFF(dio_query, pi_opaque_offset), 55);
	assert_int_equal(OFF(dio_query, profile), 56);
	assert_int_equal(OFF(dio_query, reserved), 88);
}


/* Released symbols stay in their version node (libdioctl.map). */
static void test_symbol_versions(void **state)
{
	static const char *const v1_0[] = {
		"dio_pi_crc16_t10dif",
		"dio_pi_crc64_nvme",
		"dio_pi_generate",
		"dio_pi_generate_iov",
		"dio_pi_ip_checksum",
		"dio_pi_len",
		"dio_pi_profile_from_query",
		"dio_pi_profile_init",
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
		"sys_dio_submit",
		"sys_dio_wait",
	};
	void *so = dlopen("build/libdioctl.so.1", RTLD_NOW);
	size_t i;

	assert_non_null(so);
	for (i = 0; i < sizeof(v1_0) / sizeof(v1_0[0]); i++) {
		if (!dlvsym(so, v1_0[i], "LIBDIOCTL_1.0"))
			fail_msg("%s@LIBDIOCTL_1.0 missing", v1_0[i]);
	}
	/* Internal helpers are not exported. */
	assert_null(dlsym(so, "dio_pi_crc16_portable"));
	dlclose(so);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes_match_ver0),
		cmocka_unit_test(test_size_field_first),
		cmocka_unit_test(test_request_layout),
		cmocka_unit_test(test_query_layout),
		cmocka_unit_test(test_symbol_versions),
	};

	return cmocka_run_group_tests_name("abi", tests, NULL, NULL);
}
