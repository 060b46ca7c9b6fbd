// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The ABI rules of uapi/linux/dio_batch.h's preamble, every one for every
 * command of both descriptors, with the errno the header promises: sizes
 * below *_SIZE_VER0, larger structs with a zero and a non-zero tail, sizes
 * above the page size, each reserved and padding byte, each flag bit
 * outside *_F_ALL, output fields, the number with other size bits, another
 * direction, another magic, on the other descriptor, and every number no
 * command has.  The table and the cases are tests/lib/abi_rules.h; this
 * program runs them as a 64-bit program and has build/tests/compat32 run
 * them as a 32-bit one (compat_ioctl).
 *
 * The first test holds the table to the header: abi_names.h, which the
 * Makefile makes from the header's #defines, lists every DIO_IOC_*,
 * *_SIZE_VER0 and *_F_ALL, and each must have its row (and each row its
 * definition), so a command added to the header without a row fails here.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "testlib.h"
#include "abi_rules.h"

struct abi_name {
	const char *name;
	unsigned long long value;
};

#define ABI_IOC(n)	{ #n, n },
#define ABI_SIZE(n)
#define ABI_FLAGS(n)
static const struct abi_name header_cmds[] = {
#include "abi_names.h"
};
#undef ABI_IOC
#undef ABI_SIZE
#undef ABI_FLAGS

#define ABI_IOC(n)
#define ABI_SIZE(n)	{ #n, n },
#define ABI_FLAGS(n)
static const struct abi_name header_sizes[] = {
#include "abi_names.h"
};
#undef ABI_IOC
#undef ABI_SIZE
#undef ABI_FLAGS

#define ABI_IOC(n)
#define ABI_SIZE(n)
#define ABI_FLAGS(n)	{ #n, n },
static const struct abi_name header_flags[] = {
#include "abi_names.h"
};
#undef ABI_IOC
#undef ABI_SIZE
#undef ABI_FLAGS

#define NR(a)	(sizeof(a) / sizeof((a)[0]))

static char dev[64];
static struct abi_env env;

static bool header_has(const struct abi_name *list, size_t n, const char *name,
		       unsigned long long value)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(list[i].name, name) && list[i].value == value)
			return true;
	return false;
}

/* Every command, struct version and flag mask of the header has its row. */
static void test_table_covers_header(void **state)
{
	const struct abi_subject *s;
	const struct abi_flag *fl;
	unsigned int bad = 0;
	size_t i, j;
	bool found;

	print_message("# the header defines %zu commands, %zu struct versions, %zu flag masks\n",
		      NR(header_cmds), NR(header_sizes), NR(header_flags));
	for (i = 0; i < NR(header_cmds); i++) {
		found = false;
		for (j = 0; j < ABI_NR_SUBJECTS; j++)
			found |= abi_subjects[j].cmd == header_cmds[i].value &&
				 !strcmp(abi_subjects[j].name, header_cmds[i].name);
		if (!found) {
			print_message("# %s (0x%llx): no row in tests/lib/abi_rules.h\n",
				      header_cmds[i].name, header_cmds[i].value);
			bad++;
		}
	}
	for (i = 0; i < NR(header_sizes); i++) {
		found = false;
		for (j = 0; j < ABI_NR_SUBJECTS; j++)
			found |= abi_subjects[j].ver0 == header_sizes[i].value &&
				 !strcmp(abi_subjects[j].ver0_name, header_sizes[i].name);
		if (!found) {
			print_message("# %s: no row of that struct in tests/lib/abi_rules.h\n",
				      header_sizes[i].name);
			bad++;
		}
	}
	for (i = 0; i < NR(header_flags); i++) {
		found = false;
		for (j = 0; j < ABI_NR_SUBJECTS; j++)
			for (fl = abi_subjects[j].flags; fl->name; fl++)
				found |= fl->mask_name && fl->all == header_flags[i].value &&
					 !strcmp(fl->mask_name, header_flags[i].name);
		if (!found) {
			print_message("# %s: no flags field of tests/lib/abi_rules.h has it\n",
				      header_flags[i].name);
			bad++;
		}
	}
	/* And the other way: every row is the header's (so the list is not empty). */
	for (j = 0; j < ABI_NR_SUBJECTS; j++) {
		s = &abi_subjects[j];
		if (abi_subject_find(s->name) != s) {
			print_message("# row %s: another row has its name\n", s->name);
			bad++;
		}
		if ((s->cmd && !header_has(header_cmds, NR(header_cmds), s->name, s->cmd)) ||
		    !header_has(header_sizes, NR(header_sizes), s->ver0_name, s->ver0)) {
			print_message("# row %s: not in the list made from the header\n", s->name);
			bad++;
		}
		for (fl = s->flags; fl->name; fl++) {
			if (fl->mask_name &&
			    !header_has(header_flags, NR(header_flags), fl->mask_name, fl->all)) {
				print_message("# row %s: %s is not in the list made from the header\n",
					      s->name, fl->mask_name);
				bad++;
			}
		}
	}
	assert_int_equal(bad, 0);
}

static int env_setup(void **state)
{
	return abi_env_open(&env, "abi64", dev) ? -1 : 0;
}

static int env_teardown(void **state)
{
	abi_env_close(&env);
	return 0;
}

static void test_subject64(void **state)
{
	assert_non_null(*state);
	assert_int_equal(abi_run_subject(&env, *state), 0);
}

static void test_sweep64(void **state)
{
	assert_int_equal(abi_sweep(&env), 0);
}

/* The same row from build/tests/compat32 (-m32, compat_ioctl). */
static void test_subject32(void **state)
{
	const char *name = *state ? ((const struct abi_subject *)*state)->name : "sweep";

	fflush(stdout);
	assert_int_equal(tl_sh("%s/tests/compat32 --abi %s %s", getenv("DIO_BUILD"),
			       dev, name), 0);
}

static int group_setup(void **state)
{
	if (!getenv("DIO_BUILD"))
		return -1;
	return tl_scsi_debug_load("dev_size_mb=8 dif=1 dix=1", dev, sizeof(dev)) ? -1 : 0;
}

static int group_teardown(void **state)
{
	return tl_scsi_debug_unload() ? -1 : 0;
}

int main(void)
{
	struct CMUnitTest tests[2 * (ABI_NR_SUBJECTS + 1) + 1];
	static char names[2 * (ABI_NR_SUBJECTS + 1)][64];
	size_t i, n = 0;

	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_table_covers_header);
	for (i = 0; i <= ABI_NR_SUBJECTS; i++) {
		const struct abi_subject *s = i < ABI_NR_SUBJECTS ? &abi_subjects[i] : NULL;

		snprintf(names[2 * i], sizeof(names[0]), "64-bit: %s", s ? s->name : "unknown numbers");
		snprintf(names[2 * i + 1], sizeof(names[0]), "32-bit: %s",
			 s ? s->name : "unknown numbers");
		tests[n++] = (struct CMUnitTest){
			.name = names[2 * i],
			.test_func = s ? test_subject64 : test_sweep64,
			.setup_func = env_setup,
			.teardown_func = env_teardown,
			.initial_state = (void *)s,
		};
	}
	for (i = 0; i <= ABI_NR_SUBJECTS; i++) {
		tests[n++] = (struct CMUnitTest){
			.name = names[2 * i + 1],
			.test_func = test_subject32,
			.initial_state = i < ABI_NR_SUBJECTS ? (void *)&abi_subjects[i] : NULL,
		};
	}
	if (tl_dio_load())
		return 1;
	return _cmocka_run_group_tests("abi", tests, n, group_setup, group_teardown);
}
