// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The ABI's layout: sizes and offsets that 32- and 64-bit programs and
 * every module version must agree on.  A change here breaks binaries.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
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
	assert_int_equal(DIO_BATCH_ABI_VERSION, 5);
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
	/* ABI 5: counters. */
	assert_int_equal(_IOC_TYPE(DIO_IOC_COUNTERS), 0xDB);
	assert_int_equal(_IOC_NR(DIO_IOC_COUNTERS), 0x4B);
	assert_int_equal(_IOC_DIR(DIO_IOC_COUNTERS), _IOC_READ | _IOC_WRITE);
	assert_int_equal(_IOC_SIZE(DIO_IOC_COUNTERS), DIO_COUNTERS_SIZE_VER0);
	assert_int_equal(DIO_FEAT_COUNTERS, 1ULL << 8);
	assert_true(DIO_FEAT_ALL & DIO_FEAT_COUNTERS);
	assert_int_equal(DIO_COUNTERS_DEVICE, 1U << 0);
	assert_int_equal(DIO_COUNTERS_F_ALL, DIO_COUNTERS_DEVICE);
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
	/*
	 * Anything else is the kernel's to judge.  Not under qemu-user
	 * (tests/cross.sh sets DIO_QEMU_USER): it fails an ioctl it
	 * does not know with ENOSYS and never passes it on.
	 */
	if (getenv("DIO_QEMU_USER")) {
		print_message("# qemu-user: the kernel's cases not run\n");
		return;
	}
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
	/* libdioctl 1.1 gave the first reserved word a meaning. */
	assert_int_equal(offsetof(struct dio_pi_error, escaped), 40);
	assert_int_equal(offsetof(struct dio_pi_error, reserved), 48);
}

/*
 * Every exported symbol and the node it is in (libdioctl.map): released
 * nodes (1.0: dio-batch 0.1.0, 1.1: 0.2.0, 1.2: 0.3.0, 1.3: 1.0.0) never
 * change; LIBDIOCTL_1.4 is libdioctl 1.1.0's.  debian/libdioctl1.symbols lists
 * the same.
 */
static const struct abi_sym {
	const char	*name;
	const char	*node;
} abi_syms[] = {
	{ "dio_pi_crc16_t10dif",	"LIBDIOCTL_1.0" },
	{ "dio_pi_crc64_nvme",		"LIBDIOCTL_1.0" },
	{ "dio_pi_explain",		"LIBDIOCTL_1.0" },
	{ "dio_pi_generate",		"LIBDIOCTL_1.0" },
	{ "dio_pi_generate_iov",	"LIBDIOCTL_1.0" },
	{ "dio_pi_ip_checksum",		"LIBDIOCTL_1.0" },
	{ "dio_pi_len",			"LIBDIOCTL_1.0" },
	{ "dio_pi_profile_from_query",	"LIBDIOCTL_1.0" },
	{ "dio_pi_profile_init",	"LIBDIOCTL_1.0" },
	{ "dio_pi_read_raw",		"LIBDIOCTL_1.0" },
	{ "dio_pi_verify",		"LIBDIOCTL_1.0" },
	{ "dio_pi_verify_iov",		"LIBDIOCTL_1.0" },
	{ "dio_req_prep_flush",		"LIBDIOCTL_1.0" },
	{ "dio_req_prep_read",		"LIBDIOCTL_1.0" },
	{ "dio_req_prep_readv",		"LIBDIOCTL_1.0" },
	{ "dio_req_prep_write",		"LIBDIOCTL_1.0" },
	{ "dio_req_prep_writev",	"LIBDIOCTL_1.0" },
	{ "dio_req_set_pi",		"LIBDIOCTL_1.0" },
	{ "sys_dio_close",		"LIBDIOCTL_1.0" },
	{ "sys_dio_collect",		"LIBDIOCTL_1.0" },
	{ "sys_dio_exit",		"LIBDIOCTL_1.0" },
	{ "sys_dio_features",		"LIBDIOCTL_1.0" },
	{ "sys_dio_init",		"LIBDIOCTL_1.0" },
	{ "sys_dio_init_mode",		"LIBDIOCTL_1.0" },
	{ "sys_dio_open",		"LIBDIOCTL_1.0" },
	{ "sys_dio_query",		"LIBDIOCTL_1.0" },
	{ "sys_dio_stat",		"LIBDIOCTL_1.0" },
	{ "sys_dio_submit",		"LIBDIOCTL_1.0" },
	{ "sys_dio_wait",		"LIBDIOCTL_1.0" },
	/* libdioctl 0.2 */
	{ "dio_pi_generate_copy",	"LIBDIOCTL_1.1" },
	/* libdioctl 0.3: registered buffers */
	{ "dio_req_prep_read_fixed",	"LIBDIOCTL_1.2" },
	{ "dio_req_prep_write_fixed",	"LIBDIOCTL_1.2" },
	{ "sys_dio_register_buffers",	"LIBDIOCTL_1.2" },
	{ "sys_dio_unregister_buffers",	"LIBDIOCTL_1.2" },
	/* libdioctl 1.0.0 */
	{ "dio_pi_explain_error",	"LIBDIOCTL_1.3" },
	{ "dio_pi_seed",		"LIBDIOCTL_1.3" },
	{ "dio_pi_source_name",		"LIBDIOCTL_1.3" },
	{ "dio_pi_tag_name",		"LIBDIOCTL_1.3" },
	/* libdioctl 1.1.0: counters */
	{ "sys_dio_counters",		"LIBDIOCTL_1.4" },
};
#define ABI_NSYMS (sizeof(abi_syms) / sizeof(abi_syms[0]))

static const char *const abi_nodes[] = {
	"LIBDIOCTL_1.0", "LIBDIOCTL_1.1", "LIBDIOCTL_1.2", "LIBDIOCTL_1.3",
	"LIBDIOCTL_1.4",
};
#define ABI_NNODES (sizeof(abi_nodes) / sizeof(abi_nodes[0]))

static const struct abi_sym *abi_find(const char *name)
{
	for (size_t i = 0; i < ABI_NSYMS; i++)
		if (!strcmp(abi_syms[i].name, name))
			return &abi_syms[i];
	return NULL;
}

/* Released symbols stay in their version node (libdioctl.map). */
static void test_symbol_versions(void **state)
{
	void *so = dlopen("build/libdioctl.so.1", RTLD_NOW);
	size_t i, n;

	assert_non_null(so);
	for (i = 0; i < ABI_NSYMS; i++) {
		if (!dlvsym(so, abi_syms[i].name, abi_syms[i].node))
			fail_msg("%s@%s missing", abi_syms[i].name, abi_syms[i].node);
		/* There, and only there. */
		for (n = 0; n < ABI_NNODES; n++)
			if (strcmp(abi_nodes[n], abi_syms[i].node) &&
			    dlvsym(so, abi_syms[i].name, abi_nodes[n]))
				fail_msg("%s also in %s", abi_syms[i].name, abi_nodes[n]);
	}
	/* Internal helpers are not exported. */
	assert_null(dlsym(so, "pi_crc64_copy"));
	assert_null(dlsym(so, "pi_crc64_vpclmul256"));
	assert_null(dlsym(so, "pi_crc64_paths"));
	assert_null(dlsym(so, "dio_pi_crc16_portable"));
	dlclose(so);
}

/* The section of type @type, or NULL. */
static const ElfW(Shdr) *elf_section(const ElfW(Ehdr) *eh, unsigned int type)
{
	const ElfW(Shdr) *sh = (const void *)((const char *)eh + eh->e_shoff);

	for (unsigned int i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == type)
			return &sh[i];
	return NULL;
}

/*
 * The library exports exactly the table's symbols, each in its node: read
 * from build/libdioctl.so.1's dynamic symbol table and version sections,
 * so a function left out of libdioctl.map (not exported), put in another
 * node, or exported without a row here fails.
 */
static void test_exports_exactly(void **state)
{
	const ElfW(Shdr) *sh, *dynsym, *versym, *verdef;
	const char *base, *dynstr;
	unsigned int seen[ABI_NSYMS] = { 0 };
	const ElfW(Ehdr) *eh;
	struct stat st;
	size_t nsym, i;
	int fd;

	fd = open("build/libdioctl.so.1", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	base = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(base != MAP_FAILED);
	close(fd);
	eh = (const void *)base;
	assert_memory_equal(eh->e_ident, ELFMAG, SELFMAG);
	sh = (const void *)(base + eh->e_shoff);
	dynsym = elf_section(eh, SHT_DYNSYM);
	versym = elf_section(eh, SHT_GNU_versym);
	verdef = elf_section(eh, SHT_GNU_verdef);
	assert_non_null(dynsym);
	assert_non_null(versym);
	assert_non_null(verdef);
	dynstr = base + sh[dynsym->sh_link].sh_offset;
	nsym = dynsym->sh_size / sizeof(ElfW(Sym));
	for (i = 1; i < nsym; i++) {
		const ElfW(Sym) *sym = (const ElfW(Sym) *)(base + dynsym->sh_offset) + i;
		ElfW(Half) v = ((const ElfW(Half) *)(base + versym->sh_offset))[i] & 0x7fff;
		const char *name = dynstr + sym->st_name, *node = NULL;
		const char *vd = base + verdef->sh_offset;
		const struct abi_sym *want;

		if (sym->st_shndx == SHN_UNDEF || ELF64_ST_BIND(sym->st_info) == STB_LOCAL)
			continue;
		/* The node each version index names. */
		for (;;) {
			const ElfW(Verdef) *d = (const void *)vd;
			const ElfW(Verdaux) *a = (const void *)(vd + d->vd_aux);

			if (d->vd_ndx == v) {
				node = dynstr + a->vda_name;
				break;
			}
			if (!d->vd_next)
				break;
			vd += d->vd_next;
		}
		assert_non_null(node);
		/* A node's own symbol (LIBDIOCTL_1.0@@LIBDIOCTL_1.0). */
		if (!strcmp(name, node))
			continue;
		want = abi_find(name);
		if (!want)
			fail_msg("%s@%s is exported, but test_abi has no row for it", name, node);
		if (strcmp(want->node, node))
			fail_msg("%s is in %s, not in %s", name, node, want->node);
		seen[want - abi_syms]++;
	}
	for (i = 0; i < ABI_NSYMS; i++)
		if (seen[i] != 1)
			fail_msg("%s@%s exported %u times (libdioctl.map)", abi_syms[i].name,
				 abi_syms[i].node, seen[i]);
	munmap((void *)base, st.st_size);
}

/*
 * Every function the headers declare DIO_PUBLIC has a row, so a new one
 * cannot be left out of both libdioctl.map and this test.
 */
static void test_headers_declare_table(void **state)
{
	static const char *const headers[] = {
		"libdioctl/include/dioctl.h", "libdioctl/include/dioctl_pi.h",
	};
	unsigned int found = 0;

	for (size_t h = 0; h < 2; h++) {
		char *text = NULL, *p;
		size_t cap = 0;
		FILE *f = fopen(headers[h], "r");
		ssize_t len;

		assert_non_null(f);
		len = getdelim(&text, &cap, '\0', f);
		fclose(f);
		assert_true(len > 0);
		for (p = text; (p = strstr(p, "DIO_PUBLIC")); p += 10) {
			char *paren = strchr(p, '('), *end, *start, name[64];

			/* Not the macro's own #ifndef / #define. */
			if (p > text && p[-1] != '\n')
				continue;
			assert_non_null(paren);
			for (end = paren; end > p && end[-1] == ' '; end--)
				;
			for (start = end; start > p && (start[-1] == '_' ||
			     (start[-1] >= 'a' && start[-1] <= 'z') ||
			     (start[-1] >= '0' && start[-1] <= '9')); start--)
				;
			assert_true(end - start > 0 && (size_t)(end - start) < sizeof(name));
			memcpy(name, start, end - start);
			name[end - start] = '\0';
			if (!abi_find(name))
				fail_msg("%s: DIO_PUBLIC %s has no row in test_abi (and libdioctl.map?)",
					 headers[h], name);
			found++;
		}
		free(text);
	}
	/* Every row is declared: one declaration each. */
	assert_int_equal(found, ABI_NSYMS);
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
		cmocka_unit_test(test_exports_exactly),
		cmocka_unit_test(test_headers_declare_table),
	};

	return cmocka_run_group_tests_name("abi", tests, NULL, NULL);
}
