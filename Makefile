# dio_batch: top-level build.
#   make            module (against KDIR), libdioctl (shared, static, .pc), tools, tests, bench
#   make lib tools  libdioctl and dioctl only (what make install installs)
#   make tools DIOCTL_STATIC=1  dioctl linked with libdioctl.a, not libdioctl.so.1
#   make deps       install the Debian packages the project needs
#   make check      host unit tests, static checks, the guest suite on every kernel in KERNELS
#   make check-static  sparse, checkpatch.pl and shellcheck only (tests/static-check.sh)
#   make check-arm64   libdioctl, dioctl and the PI/ABI unit tests cross-built for
#                      arm64, run under qemu-user (tests/cross.sh); make check too
#   make check-cross CROSS_ARCH=s390x  the same on big-endian s390x (not in check)
#   make bench-arm64   the same, then pi_bench under qemu-user (emulated figures)
#   make bench-isal    pi_bench's guards at 512 bytes and 4 KiB against trixie's
#                      ISA-L 2.31 (CRC-64/NVME), fetched once into DIO_CACHE
#   make bench-sqlite  speedtest1 through the dio VFS against the unix VFS on ext4,
#                      same NVMe namespace, with and without PI (6.12; KERNEL=)
#   make check-debug   the guest suite on the debug kernel; prints the module's coverage
#   make check-deb     the Debian packages built, installed and booted on bookworm
#                      (SUITE=trixie, or make check-deb-trixie: on trixie, with 7.3)
#   make check-fio-suite FIO_SUITE=trixie  t_fio on 7.3 with that suite's fio, its
#                      engine built in its root (FIO_SRC: upstream's source of it)
#   make check-kcsan   the stress and fuzz programs on the KCSAN+UBSAN kernel
#   make fuzz DURATION=3600  the coverage-guided ioctl fuzzer, corpus kept between runs
#   make flakes LANES="debug 6.1" RUNS=3 LOAD=2  lanes run again and again: a table of failures
#   make boot-loop FLAVOUR=debug RUNS=100  boot a kernel again and again: hangs and faults in its boot
#   make demo       boot a guest and show the project at work (DEMO_KERNEL=7.3: on that kernel)
# See README.md.

# The project's one version number is debian/changelog's upstream version,
# as scripts/version.sh prints it: the library, the .pc file, the man pages,
# dkms.conf (#MODULE_VERSION#), dioctl --version and the module's
# MODULE_VERSION (module/Kbuild, which runs the same script) all take it
# from there.
VERSION		:= $(shell scripts/version.sh)
ifeq ($(VERSION),)
$(error scripts/version.sh found no version in debian/changelog)
endif
# The man pages' date (.TH @DATE@): the release date, that of the
# changelog's first entry, so it moves with the version.
MAN_DATE	:= $(shell scripts/version.sh --date)
ifeq ($(MAN_DATE),)
$(error scripts/version.sh --date found no date in debian/changelog)
endif
SOVERSION	:= 1
# scripts/kver.sh runs once, on first use (empty when no headers are installed).
KVER		?= $(eval KVER := $(shell scripts/kver.sh))$(KVER)
KDIR		?= /lib/modules/$(KVER)/build
KERNELS		?= 6.1 6.12 7.3 debug
DKMS_CHECK	?= 1
DEB_CHECK	?= 1
ANYWHERE_CHECK	?= 1
DEMO_CHECK	?= 1
PREFIX		?= /usr/local
# Debian's multiarch library directory where the compiler names one
# (x86_64-linux-gnu), as for the distribution's own libraries.
MULTIARCH	:= $(shell $(CC) -print-multiarch 2>/dev/null)
LIBDIR		?= $(PREFIX)/lib$(if $(MULTIARCH),/$(MULTIARCH))
INCLUDEDIR	?= $(PREFIX)/include
BINDIR		?= $(PREFIX)/bin
MANDIR		?= $(PREFIX)/share/man
BASHCOMPDIR	?= $(PREFIX)/share/bash-completion/completions
# dioctl's data: the JSON Schema of its --json documents.
DIOCTLDATADIR	?= $(PREFIX)/share/dioctl

CC		?= cc
OBJCOPY		?= objcopy
CFLAGS		?= -O2 -g
WARN		:= -Wall -Wextra -Wno-unused-parameter -Wshadow -Wmissing-prototypes -Werror=implicit-function-declaration
CPPFLAGS	+= -Iuapi -Ilibdioctl/include -D_GNU_SOURCE -DDIO_BATCH_VERSION='"$(VERSION)"'
B		?= build

LIB_SRCS	:= $(wildcard libdioctl/src/*.c)
LIB_OBJS	:= $(LIB_SRCS:libdioctl/src/%.c=$(B)/lib/%.o)
LIB_PIC_OBJS	:= $(LIB_SRCS:libdioctl/src/%.c=$(B)/lib/%.pic.o)
LIB_A		:= $(B)/libdioctl.a
# The same objects, internal names still global: for the unit tests and
# benchmarks that call the PI internals (pi_internal.h).  Never installed.
LIB_INTERNAL_A	:= $(B)/lib/libdioctl-internal.a
LIB_SO		:= $(B)/libdioctl.so.$(SOVERSION).0.0
LIB_LIBS	:= -lisal

# The test helpers (tests/lib), linked into every test program but the
# guest programs' own test beds, each linked only into the guest programs
# that include its header: dioctl_run.c (the runner of dioctl and the checks
# of what it printed, with the short names of the programs that run the
# tool), security_common.c (the t_security_* programs') and io_common.c
# (the t_io_* programs').
GUEST_HELPERS	:= dioctl_run security_common io_common
GUEST_HELPER_OBJS := $(GUEST_HELPERS:%=$(B)/tests/lib/%.o)
TESTLIB_SRCS	:= $(filter-out $(GUEST_HELPERS:%=tests/lib/%.c),$(wildcard tests/lib/*.c))
TESTLIB_OBJS	:= $(TESTLIB_SRCS:tests/lib/%.c=$(B)/tests/lib/%.o)
UNIT_BINS	:= $(patsubst tests/unit/%.c,$(B)/tests/unit/%,$(wildcard tests/unit/*.c))
GUEST_BINS	:= $(patsubst tests/guest/%.c,$(B)/tests/guest/%,$(wildcard tests/guest/*.c))
# dioctl: tools/dioctl.c, plus any tools/dioctl_*.c linked in.
DIOCTL_SRCS	:= tools/dioctl.c $(wildcard tools/dioctl_*.c)
DIOCTL_OBJS	:= $(DIOCTL_SRCS:tools/%.c=$(B)/tools/%.o)
# dioctl links libdioctl.so.1, as a distribution's tools link their own
# library (nvme-cli libnvme.so.1): a fixed libdioctl1 package reaches it,
# the dioctl package depends on libdioctl1 (${shlibs:Depends}, from
# debian/libdioctl1.symbols), and every build proves libdioctl.map exports
# all dioctl calls.  The same objects are linked twice:
#   build/tools/dioctl          runs from the build tree without make install
#                               (the guest tests and make demo run it): its
#                               RUNPATH $ORIGIN/.. finds build/libdioctl.so.1
#                               wherever the tree is, copied or moved
#   build/tools/install/dioctl  what make install and the package install: no
#                               RUNPATH (Debian policy, lintian), ld.so finds
#                               the library installed beside it in LIBDIR
# The in-tree one is not static: it would leave the shared linkage, the
# one users get, untested by every guest test that runs dioctl.
# DIOCTL_STATIC=1 links libdioctl.a instead (ISA-L and libc stay shared),
# one binary run in place and installed alike: a dioctl that needs no
# libdioctl.so.1 where it runs.
DIOCTL_STATIC	?= 0
ifeq ($(DIOCTL_STATIC),1)
DIOCTL_LIB	:= $(LIB_A) $(LIB_LIBS)
DIOCTL_DEP	:= $(LIB_A)
TOOL_BINS	:= $(B)/tools/dioctl
INSTALL_TOOLS	:= $(B)/tools/dioctl
else
DIOCTL_LIB	:= $(LIB_SO)
DIOCTL_DEP	:= $(LIB_SO)
TOOL_BINS	:= $(B)/tools/dioctl $(B)/tools/install/dioctl
INSTALL_TOOLS	:= $(B)/tools/install/dioctl
endif
# libdiosqlite: the SQLite VFS on libdioctl (libdiosqlite/), a shared
# library that is also SQLite's loadable extension (.load libdiosqlite).
DSQ_SRCS	:= $(wildcard libdiosqlite/src/*.c)
DSQ_OBJS	:= $(DSQ_SRCS:libdiosqlite/src/%.c=$(B)/libdiosqlite/%.pic.o)
DSQ_SO		:= $(B)/libdiosqlite.so.1.0.0
SQLITE_TESTS	:= $(B)/sqlite/speedtest1 $(B)/sqlite/mptest
BENCH_BINS	:= $(patsubst bench/%.c,$(B)/bench/%,$(wildcard bench/*.c))
EXAMPLE_BINS	:= $(patsubst examples/%.c,$(B)/examples/%,$(wildcard examples/*.c))
MAN_PAGES	:= $(patsubst %,$(B)/man/%,$(notdir $(wildcard libdioctl/man/*.[37] libdiosqlite/man/*.[37] tools/*.1)))
TEST_LIBS	:= $(LIB_INTERNAL_A) $(LIB_LIBS) -lcmocka -lkmod -lpthread
# What the unit tests and the benchmarks link beyond that:
# tests/cross.sh links them with neither the test helpers (libkmod) nor
# liburing and libaio, which its cross tree does not have.
UNIT_TESTLIB	?= $(TESTLIB_OBJS)
UNIT_LIBS	?= $(TEST_LIBS)
BENCH_LIBS	?= -luring -laio -lpthread

.PHONY: all module userspace lib libdiosqlite sqlite tools tests bench examples man bench-guest bench-counts bench-icount bench-isal bench-sqlite deps check check-debug \
	check-unit check-static check-arm64 check-cross bench-arm64 check-dkms check-deb check-deb-trixie check-demo-trixie check-fio-suite check-kcsan fuzz flakes boot-loop dkms-install deb demo \
	install uninstall clean FORCE
.DELETE_ON_ERROR:
# The test helpers are kept between builds (make would delete them as
# intermediates of the test programs).
.SECONDARY: $(TESTLIB_OBJS) $(GUEST_HELPER_OBJS)

all: module userspace
userspace: lib sqlite tools tests bench examples man fio-engine

module:
	scripts/build-module.sh '$(KDIR)'

lib: $(LIB_A) $(LIB_SO) $(B)/libdioctl.pc
libdiosqlite: $(DSQ_SO) $(B)/libdiosqlite.pc
sqlite: libdiosqlite $(SQLITE_TESTS)
tools: $(TOOL_BINS)
examples: $(EXAMPLE_BINS)
man: $(MAN_PAGES)
tests: $(UNIT_BINS) $(GUEST_BINS) $(B)/tests/kmodctl $(B)/tests/compat32
bench: $(BENCH_BINS)

$(B)/lib/%.o: libdioctl/src/%.c $(wildcard libdioctl/src/*.h libdioctl/include/*.h uapi/linux/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -fvisibility=hidden -c -o $@ $<
$(B)/lib/%.pic.o: libdioctl/src/%.c $(wildcard libdioctl/src/*.h libdioctl/include/*.h uapi/linux/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -fvisibility=hidden -fPIC -c -o $@ $<
# libdioctl.a is one relocatable object whose hidden symbols (everything
# but the API, which dioctl.h marks DIO_PUBLIC) are made local, so a
# program may have its own pi_ipsum() and still link libdioctl statically.
$(B)/lib/libdioctl.o: $(LIB_OBJS)
	$(LD) -r -o $@ $^
	$(OBJCOPY) --localize-hidden $@
$(LIB_A): $(B)/lib/libdioctl.o
	rm -f $@ && $(AR) rcs $@ $^
$(LIB_INTERNAL_A): $(LIB_OBJS)
	rm -f $@ && $(AR) rcs $@ $^
$(LIB_SO): $(LIB_PIC_OBJS) libdioctl/libdioctl.map
	$(CC) -shared $(LDFLAGS) -Wl,-soname,libdioctl.so.$(SOVERSION) \
		-Wl,--version-script=libdioctl/libdioctl.map \
		-Wl,-z,defs -o $@ $(LIB_PIC_OBJS) $(LIB_LIBS)
	ln -sf libdioctl.so.$(SOVERSION).0.0 $(B)/libdioctl.so.$(SOVERSION)
	ln -sf libdioctl.so.$(SOVERSION) $(B)/libdioctl.so
# The .pc file says where make install puts things: it is remade whenever
# PREFIX, LIBDIR, INCLUDEDIR or VERSION differ from the last build's.
PC_VARS		:= $(PREFIX)|$(LIBDIR)|$(INCLUDEDIR)|$(VERSION)
$(B)/pc-vars: FORCE
	@mkdir -p $(@D)
	@[ "$$(cat $@ 2>/dev/null)" = '$(PC_VARS)' ] || echo '$(PC_VARS)' >$@
$(B)/libdioctl.pc: libdioctl/libdioctl.pc.in $(B)/pc-vars
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|' $< >$@
$(B)/libdiosqlite/%.pic.o: libdiosqlite/src/%.c $(wildcard libdiosqlite/src/*.h libdiosqlite/include/*.h libdioctl/include/*.h uapi/linux/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Ilibdiosqlite/include $(CFLAGS) $(WARN) -fvisibility=hidden -fPIC -c -o $@ $<
# Linked to libdioctl.so.1 as dioctl is, with no RUNPATH (what make install
# and the package install): the programs that load it from the build tree
# carry an RPATH (not a RUNPATH: an RPATH serves their libraries' own
# dependencies too) that finds both.
$(DSQ_SO): $(DSQ_OBJS) $(LIB_SO) libdiosqlite/libdiosqlite.map
	$(CC) -shared $(LDFLAGS) -Wl,-soname,libdiosqlite.so.1 \
		-Wl,--version-script=libdiosqlite/libdiosqlite.map \
		-Wl,-z,defs -o $@ $(DSQ_OBJS) $(LIB_SO) -lsqlite3 -lpthread
	ln -sf libdiosqlite.so.1.0.0 $(B)/libdiosqlite.so.1
	ln -sf libdiosqlite.so.1 $(B)/libdiosqlite.so
# SQLite's speedtest1 from Debian's source of the installed SQLite
# (scripts/sqlite-src.sh, cached in DIO_CACHE), with the dio VFS
# registered (tests/sqlite/speedtest1_dio.c); t_sqlite runs it.
$(B)/sqlite/sqlite-src: FORCE
	@mkdir -p $(@D)
	@d=$$(scripts/sqlite-src.sh) && [ -f "$$d/test/speedtest1.c" ] && \
		{ [ "$$(cat $@ 2>/dev/null)" = "$$d" ] || echo "$$d" >$@; }
$(B)/sqlite/speedtest1: tests/sqlite/speedtest1_dio.c $(B)/sqlite/sqlite-src $(DSQ_SO)
	@mkdir -p $(@D)
	src=$$(cat $(B)/sqlite/sqlite-src) && \
	$(CC) $(CPPFLAGS) -Ilibdiosqlite/include $(CFLAGS) -DSQLITE_CKSUMVFS_STATIC \
		-Dsqlite3_register_cksumvfs=dio_speedtest1_register \
		-Wl,--disable-new-dtags,-rpath,'$$ORIGIN/..',-rpath-link,$(B) \
		-o $@ "$$src/test/speedtest1.c" tests/sqlite/speedtest1_dio.c $(DSQ_SO) -lsqlite3 -lm
# SQLite's multi-process test, mptest, from the same source, with the VFS
# registered (tests/sqlite/mptest_dio.c); t_sqlite runs its scripts.  Its
# busy timeout and its scripts' default wait for their clients, 10 s each
# and fixed, are made 60 s: under TCG a client of multiwrite01 took longer
# now and then ("timeout waiting for all clients").  Both must be found.
$(B)/sqlite/mptest: tests/sqlite/mptest_dio.c $(B)/sqlite/sqlite-src $(DSQ_SO)
	@mkdir -p $(@D)
	src=$$(cat $(B)/sqlite/sqlite-src) && \
	sed -e 's/^#define DEFAULT_TIMEOUT 10000$$/#define DEFAULT_TIMEOUT 60000/' \
		-e 's/atoi(azArg\[1\]) : 10000;/atoi(azArg[1]) : DEFAULT_TIMEOUT;/' \
		"$$src/mptest/mptest.c" >$(B)/sqlite/mptest.c && \
	[ "$$(grep -c -e '^#define DEFAULT_TIMEOUT 60000$$' -e 'atoi(azArg\[1\]) : DEFAULT_TIMEOUT;' $(B)/sqlite/mptest.c)" = 2 ] && \
	$(CC) $(CPPFLAGS) -Ilibdiosqlite/include -I"$$src/mptest" $(CFLAGS) -DHAVE_USLEEP -w \
		-Dmain=mptest_main -Dunlink=dio_mptest_unlink -c -o $(B)/sqlite/mptest.o $(B)/sqlite/mptest.c && \
	$(CC) $(CPPFLAGS) -Ilibdiosqlite/include $(CFLAGS) $(WARN) \
		-Wl,--disable-new-dtags,-rpath,'$$ORIGIN/..',-rpath-link,$(B) \
		-o $@ $(B)/sqlite/mptest.o tests/sqlite/mptest_dio.c $(DSQ_SO) -lsqlite3
$(B)/libdiosqlite.pc: libdiosqlite/libdiosqlite.pc.in $(B)/pc-vars
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|' $< >$@
$(B)/man/%: libdioctl/man/% debian/changelog
	@mkdir -p $(@D)
	sed -e 's|@VERSION@|$(VERSION)|; s|@DATE@|$(MAN_DATE)|' $< >$@
$(B)/man/%: libdiosqlite/man/% debian/changelog
	@mkdir -p $(@D)
	sed -e 's|@VERSION@|$(VERSION)|; s|@DATE@|$(MAN_DATE)|' $< >$@
$(B)/man/%: tools/% debian/changelog
	@mkdir -p $(@D)
	sed -e 's|@VERSION@|$(VERSION)|; s|@DATE@|$(MAN_DATE)|' $< >$@
FORCE:

$(B)/tests/lib/%.o: tests/lib/%.c $(wildcard tests/lib/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/lib $(CFLAGS) $(WARN) -c -o $@ $<
$(B)/tests/unit/%: tests/unit/%.c $(LIB_A) $(LIB_INTERNAL_A) $(UNIT_TESTLIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/lib $(CFLAGS) $(WARN) -o $@ $< $(UNIT_TESTLIB) $(UNIT_LIBS)
$(B)/tests/guest/%: tests/guest/%.c $(LIB_INTERNAL_A) $(TESTLIB_OBJS)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/lib $(CFLAGS) $(WARN) -o $@ $< $(GUEST_OBJS) $(TESTLIB_OBJS) $(TEST_LIBS)
# guest_helper NAME: the programs that include NAME.h link NAME.o.
define guest_helper
$(patsubst tests/guest/%.c,$(B)/tests/guest/%,$(shell grep -l 'include "$(1).h"' tests/guest/*.c)): $(B)/tests/lib/$(1).o
$(patsubst tests/guest/%.c,$(B)/tests/guest/%,$(shell grep -l 'include "$(1).h"' tests/guest/*.c)): private GUEST_OBJS += $(B)/tests/lib/$(1).o
endef
$(foreach h,$(GUEST_HELPERS),$(eval $(call guest_helper,$(h))))
# testlib.o alone: testcheck.o needs cmocka and libdioctl.
$(B)/tests/kmodctl: tests/kmodctl.c $(B)/tests/lib/testlib.o
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/lib $(CFLAGS) $(WARN) -o $@ $< $(B)/tests/lib/testlib.o -lkmod
# t_abi's table (tests/lib/abi_rules.h) must have a row for every command,
# struct version and flag mask the header defines: their names, listed here.
$(B)/tests/abi_names.h: uapi/linux/dio_batch.h
	@mkdir -p $(@D)
	sed -n -E -e 's/^#[[:space:]]*define[[:space:]]+(DIO_IOC_[A-Za-z0-9_]+)[[:space:]].*/ABI_IOC(\1)/p' \
		-e 's/^#[[:space:]]*define[[:space:]]+(DIO_[A-Za-z0-9_]+_SIZE_VER0)[[:space:]].*/ABI_SIZE(\1)/p' \
		-e 's/^#[[:space:]]*define[[:space:]]+(DIO_[A-Za-z0-9_]+_F_ALL)[[:space:]].*/ABI_FLAGS(\1)/p' $< >$@
$(B)/tests/guest/t_abi: $(B)/tests/abi_names.h
# The ABI's layout table, which the module compiles in too.
$(B)/tests/unit/test_abi: module/abi_layout.h
$(B)/tests/guest/t_abi: private CPPFLAGS += -I$(B)/tests
# t_peer drives upstream's user PI through io_uring (liburing, as io_bench).
$(B)/tests/guest/t_peer: private TEST_LIBS += -luring
# t_sqlite drives SQLite through libdiosqlite (and runs speedtest1).
$(B)/tests/guest/t_sqlite: $(DSQ_SO) $(SQLITE_TESTS)
$(B)/tests/guest/t_sqlite: private CPPFLAGS += -Ilibdiosqlite/include
$(B)/tests/guest/t_sqlite: private TEST_LIBS += $(DSQ_SO) -lsqlite3 -Wl,--disable-new-dtags,-rpath,'$$ORIGIN/../..',-rpath-link,$(B)
# t_powercut: SQLite through libdiosqlite, through a replayed power cut.
$(B)/tests/guest/t_powercut: $(DSQ_SO)
$(B)/tests/guest/t_powercut: private CPPFLAGS += -Ilibdiosqlite/include
$(B)/tests/guest/t_powercut: private TEST_LIBS += $(DSQ_SO) -lsqlite3 -Wl,--disable-new-dtags,-rpath,'$$ORIGIN/../..',-rpath-link,$(B)
# A 32-bit program, for the compat_ioctl path (needs gcc-multilib).
$(B)/tests/compat32: tests/compat32.c libdioctl/src/sys_dio.c libdioctl/src/devinfo.c \
		libdioctl/include/dioctl.h uapi/linux/dio_batch.h tests/lib/abi_rules.h module/abi_layout.h
	@mkdir -p $(@D)
	$(CC) -m32 -static $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ tests/compat32.c libdioctl/src/sys_dio.c \
		libdioctl/src/devinfo.c
$(B)/tools/%.o: tools/%.c $(wildcard tools/*.h libdioctl/include/*.h uapi/linux/*.h)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itools $(CFLAGS) $(WARN) -c -o $@ $<
# Relinked when DIOCTL_STATIC changes.
$(B)/tools/link-vars: FORCE
	@mkdir -p $(@D)
	@[ "$$(cat $@ 2>/dev/null)" = '$(DIOCTL_STATIC)' ] || echo '$(DIOCTL_STATIC)' >$@
$(B)/tools/dioctl: $(DIOCTL_OBJS) $(DIOCTL_DEP) $(B)/tools/link-vars
	$(CC) $(CFLAGS) $(LDFLAGS) $(if $(filter 1,$(DIOCTL_STATIC)),,-Wl,-rpath,'$$ORIGIN/..') \
		-o $@ $(DIOCTL_OBJS) $(DIOCTL_LIB) -lm
$(B)/tools/install/dioctl: $(DIOCTL_OBJS) $(DIOCTL_DEP) $(B)/tools/link-vars
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(DIOCTL_OBJS) $(DIOCTL_LIB) -lm
# The examples build as a user's program would, against the headers and
# the static library (the package test builds them with pkg-config).
$(B)/examples/%: examples/%.c $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $< $(LIB_A) $(LIB_LIBS)
$(B)/bench/%: bench/%.c $(LIB_INTERNAL_A) tests/lib/uring_pi.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $< $(LIB_INTERNAL_A) $(LIB_LIBS) $(BENCH_LIBS)

# fio engine: build/fio/fio-dio_batch.so, an external fio ioengine
# (fio/README.md).  fio's engine ABI is its internal structs, so the engine
# is built against the source of exactly the fio installed:
# scripts/fio-src.sh fetches and configures it once, into
# $(DIO_CACHE)/fio (default /var/cache/dio_batch/fio), and prints where.
# make bench-fio runs bench/run-fio.sh in a guest (not a test).
FIO_ENGINE	:= $(B)/fio/fio-dio_batch.so
FIO_SRCS	:= $(wildcard fio/*.c)
FIO_CPPFLAGS	= -D_LARGEFILE_SOURCE -D_FILE_OFFSET_BITS=64 -DFIO_INC_DEBUG
.PHONY: fio-engine bench-fio fio-engine-suite bench-fio-pi
fio-engine: $(FIO_ENGINE)
$(B)/fio/fio-src: FORCE
	@mkdir -p $(@D)
	@d=$$(scripts/fio-src.sh) && [ -f "$$d/config-host.h" ] && \
		{ [ "$$(cat $@ 2>/dev/null)" = "$$d" ] || echo "$$d" >$@; }
$(FIO_ENGINE): $(FIO_SRCS) $(wildcard fio/*.h) $(LIB_PIC_OBJS) $(B)/fio/fio-src
	@mkdir -p $(@D)
	src=$$(cat $(B)/fio/fio-src) && \
	$(CC) $(CPPFLAGS) $(FIO_CPPFLAGS) -isystem "$$src" -include "$$src/config-host.h" \
		-DDIO_FIO_VERSION="\"fio-$${src##*/fio-}\"" $(CFLAGS) $(WARN) -fPIC -fvisibility=hidden \
		-shared -o $@ $(FIO_SRCS) $(LIB_PIC_OBJS) $(LIB_LIBS) -ldl \
		-Wl,--unresolved-symbols=ignore-in-object-files # fio's own symbols: from the fio binary
bench-fio:
	@scripts/deps.sh --check || scripts/deps.sh
	@$(MAKE) --no-print-directory userspace
	@bench/run-fio.sh

# The engine for the fio of another Debian suite (FIO_SUITE, default forky:
# fio 3.41, whose io_uring engine drives the kernel's own user PI), for the
# 7.3 guest: scripts/fio-src.sh --suite makes a root of its own from the
# 7.3 chroot with that fio installed and its source configured (once,
# in $(DIO_CACHE)/fio/SUITE; root and the network the first time), and
# the engine is built in that root, by its gcc-14 against its libc and
# that source, libdioctl's objects compiled in as always:
# $(B)/fio-SUITE/fio/fio-dio_batch.so.  make bench-fio-pi boots the 7.3
# guest on that root and runs the same PI job through fio's io_uring and
# this engine (bench/run-fio-pi.sh; not a test).
FIO_SUITE	?= forky
fio-engine-suite:
	@scripts/fio-src.sh --suite '$(FIO_SUITE)' --run make -C '$(CURDIR)' --no-print-directory \
		CC=gcc-14 B='$(B)/fio-$(FIO_SUITE)' fio-engine
bench-fio-pi:
	@scripts/deps.sh --check || scripts/deps.sh
	@FIO_SUITE='$(FIO_SUITE)' bench/run-fio-pi.sh

deps:
	scripts/deps.sh

# The tests: host unit tests, the arm64 cross build and its unit tests under
# qemu-user (tests/cross.sh), the static checks (sparse, checkpatch.pl,
# shellcheck: tests/static-check.sh), then the guest suite on each kernel
# in KERNELS (and the DKMS check), then one line that counts every test case.
# A failed build counts as one failed test, and nothing else runs (the
# programs would be missing, or older than the sources).  The run has a
# budget (CHECK_BUDGET, tests/vm/check-all.sh): at it, what still runs is
# stopped and counted as failed.  The debug kernel,
# the longest job, is prepared (built, on a new machine) from the start:
# the packages its build needs are installed first, then it builds beside
# the rest of the packages' installation (scripts/deps.sh), the userspace
# build and the host checks; its lane waits for it.  All of it is
# tests/make-check.sh, a line that does not name $(MAKE): make -n check
# prints it and runs nothing (make runs a line naming $(MAKE) even then).
check:
	@rm -rf $(B)/results && mkdir -p $(B)/results
	@KERNELS="$(KERNELS)" DKMS_CHECK="$(DKMS_CHECK)" DEB_CHECK="$(DEB_CHECK)" \
		ANYWHERE_CHECK="$(ANYWHERE_CHECK)" DEMO_CHECK="$(DEMO_CHECK)" tests/make-check.sh '$(B)'
	@tests/summary.sh $(B)/results

# The guest suite on the debug kernel only (KASAN, kmemleak, lockdep,
# fault injection); make check runs it too.
check-debug:
	@$(MAKE) --no-print-directory check KERNELS=debug DKMS_CHECK=0 DEB_CHECK=0 ANYWHERE_CHECK=0 DEMO_CHECK=0

# Hunt flaky tests: LANES (default "debug 6.1") RUNS times each (3), with
# LOAD busy loops beside them (0; LOAD=$$(nproc) loads every core), side by
# side with PARALLEL=1, then a table of every test that failed at least
# once (tests/vm/flakes.sh).
flakes: userspace
	@LANES="$(LANES)" RUNS="$(RUNS)" LOAD="$(LOAD)" PARALLEL="$(PARALLEL)" tests/vm/flakes.sh

# Hunt boot flakes: FLAVOUR's kernel (default debug) booted RUNS times (100),
# PARALLEL at a time (2), with no initramfs, each to the end of the
# kernel's own start-up; hangs and kernel reports counted, their consoles
# kept (tests/vm/boot-loop.sh).
boot-loop:
	@tests/vm/kernel.sh prepare $(or $(FLAVOUR),debug)
	@RUNS="$(RUNS)" PARALLEL="$(PARALLEL)" LOAD="$(LOAD)" tests/vm/boot-loop.sh $(or $(FLAVOUR),debug)

# The stress and fuzz programs on the KCSAN+UBSAN kernel.  Not in make
# check's KERNELS yet: a second kernel built from source would push a fresh
# machine's CI past its time budget (tests/README.md has the numbers).
check-kcsan:
	@$(MAKE) --no-print-directory check KERNELS=kcsan DKMS_CHECK=0 DEB_CHECK=0 ANYWHERE_CHECK=0 DEMO_CHECK=0

# The coverage-guided ioctl fuzzer for DURATION seconds (default 3600) on the
# debug kernel, its corpus kept in /var/cache/dio_batch/kfuzz-corpus; not
# part of check, which runs it for two minutes (tests/vm/fuzz.sh).
fuzz: userspace
	@rm -rf $(B)/results && mkdir -p $(B)/results
	@DURATION="$(DURATION)" tests/vm/fuzz.sh || true
	@tests/summary.sh $(B)/results

# The Debian packages' check (tests/vm/deb-check.sh) alone, on SUITE:
# bookworm (the default) or trixie.
check-deb: userspace
	@rm -rf $(B)/results && mkdir -p $(B)/results
	@tests/vm/deb-check.sh $(or $(SUITE),bookworm) || true
	@tests/summary.sh $(B)/results

check-deb-trixie:
	@$(MAKE) --no-print-directory check-deb SUITE=trixie

# make demo in a trixie root, as on Debian 13 (tests/vm/demo-check.sh),
# alone; make check runs it too (DEMO_CHECK=0 leaves it out).
check-demo-trixie:
	@rm -rf $(B)/results && mkdir -p $(B)/results
	@tests/vm/demo-check.sh || true
	@tests/summary.sh $(B)/results

# t_fio with the fio of FIO_SUITE (trixie: 3.39; forky: 3.41) on 7.3, the
# guest booted on that fio's root and the engine built there
# (tests/vm/fio-suite-check.sh).  FIO_SRC: upstream's source of that fio
# where the mirror has not Debian's (scripts/fio-src.sh).  Not in make
# check: this mirror has trixie's fio 3.39 in neither form.
check-fio-suite: userspace
	@rm -rf $(B)/results && mkdir -p $(B)/results
	@tests/vm/fio-suite-check.sh '$(FIO_SUITE)' || true
	@tests/summary.sh $(B)/results

check-dkms: userspace
	@rm -rf $(B)/results && mkdir -p $(B)/results
	@tests/vm/dkms-check.sh || true
	@tests/summary.sh $(B)/results

dkms-install:
	scripts/dkms-install.sh

# The Debian packages (dio-batch-dkms, libdioctl1, libdioctl-dev, dioctl)
# in build/deb, checked by lintian; make check also installs and tests them
# (tests/vm/deb-check.sh).
deb:
	scripts/mkdeb.sh $(B)/deb

check-unit: userspace
	@rm -rf $(B)/results && mkdir -p $(B)/results
	@tests/run-unit.sh $(B) || true
	@tests/summary.sh $(B)/results

# The arm64 build and its unit tests under qemu-user alone (make check runs
# them too); check-cross does it for CROSS_ARCH (arm64, or s390x: a
# big-endian CPU, not in make check); bench-arm64 adds pi_bench there,
# minutes of emulated figures (bench/README.md).  None needs the host build.
CROSS_ARCH	?= arm64
check-arm64:
	@$(MAKE) --no-print-directory check-cross CROSS_ARCH=arm64

check-cross:
	@scripts/deps.sh --check || scripts/deps.sh
	@rm -rf $(B)/results && mkdir -p $(B)/results
	@tests/cross.sh $(B) $(CROSS_ARCH) || true
	@tests/summary.sh $(B)/results

bench-arm64:
	@scripts/deps.sh --check || scripts/deps.sh
	@mkdir -p $(B)/results
	@tests/cross.sh $(B) arm64 --bench

# pi_bench's guards at the sizes PI uses (512 bytes, 4 KiB, 4 KiB at
# 512-byte intervals) against ISA-L's CRC-64/NVME, which Debian 12's ISA-L
# (2.30) lacks: trixie's libisal2 (2.31), unpacked once into
# $(DIO_CACHE)/isal-trixie by scripts/isal-trixie.sh (root, the trixie
# chroot's apt), loaded beside the host's; PI_BENCH_ROUNDS rounds (5).
bench-isal: lib $(B)/bench/pi_bench
	@lib=$$(scripts/isal-trixie.sh --lib) && PI_BENCH_ISAL="$$lib" $(B)/bench/pi_bench sizes

# The static checks alone (make check runs them too).
check-static:
	@scripts/deps.sh --check || scripts/deps.sh
	@rm -rf $(B)/results && mkdir -p $(B)/results
	@tests/static-check.sh $(B) || true
	@tests/summary.sh $(B)/results

# io_bench in a 6.1 guest; not part of check (bench/README.md).
# KERNEL=7.3 (a flavour of tests/vm/kernel.sh) boots another kernel: for
# bench-guest and bench-icount it is their BENCH_KERNEL.
BENCH_KERNEL_ENV = $(if $(KERNEL),BENCH_KERNEL='$(KERNEL)' )
bench-guest:
	@scripts/deps.sh --check || scripts/deps.sh
	@$(MAKE) --no-print-directory userspace
	@$(BENCH_KERNEL_ENV)bench/run-guest.sh

# speedtest1 through the dio VFS against the unix VFS on ext4, on the same
# NVMe namespace with and without the host's PI, in one 6.12 guest (KERNEL=
# another flavour), and PI's CPU cost per page (bench/README.md).
bench-sqlite:
	@scripts/deps.sh --check || scripts/deps.sh
	@BENCH_KERNEL='$(or $(KERNEL),6.12)' bench/run-sqlite.sh

# Kernel events per I/O (system calls, user copies, allocations, locks,
# GUP, wake-ups, work items, PI guards) of io_bench's engines in a 6.1
# guest, exact counts by kprobes and ftrace (bench/README.md).
bench-counts:
	@scripts/deps.sh --check || scripts/deps.sh
	@$(MAKE) --no-print-directory userspace
	@bench/counts.sh

# Guest instructions and TCG blocks executed per I/O, whole guest and by
# kernel function, counted by a QEMU plugin (bench/README.md).
bench-icount:
	@scripts/deps.sh --check || scripts/deps.sh
	@$(MAKE) --no-print-directory userspace
	@$(BENCH_KERNEL_ENV)bench/icount.sh

# The demo needs dioctl and kmodctl only: no fio engine (which would fetch
# fio's source), no tests, no benchmarks; and of the packages only its own
# (scripts/deps.sh --demo).  It boots the release's own kernel (Debian 12:
# 6.1; Debian 13: 6.12), or DEMO_KERNEL's (tests/vm/demo.sh).
demo:
	@scripts/deps.sh --demo --check || scripts/deps.sh --demo
	@$(MAKE) --no-print-directory tools $(B)/tests/kmodctl
	@DEMO_KERNEL="$(DEMO_KERNEL)" tests/vm/demo.sh

# make install [DESTDIR=] [PREFIX=/usr/local] [LIBDIR=$(PREFIX)/lib] ...
# installs libdioctl (shared, static, .pc), libdiosqlite (shared, .pc),
# their headers and the uapi
# header, dioctl (build/tools/install/dioctl, which needs the libdioctl.so.1
# installed with it; with DIOCTL_STATIC=1 the one static build), its bash
# completion (BASHCOMPDIR), the JSON Schema of its --json documents
# (DIOCTLDATADIR/dioctl.schema.json) and the man pages.  Installed straight into the
# running system (no DESTDIR), it runs ldconfig so the new library is found.
# make uninstall removes exactly what make install put there (same DESTDIR,
# PREFIX, ...).  scripts/install.sh does both, with these variables, and
# prints what it runs as a recipe would (QUIET=1: make -s).
INSTALL_ENV	= B='$(B)' SOVERSION='$(SOVERSION)' DESTDIR='$(DESTDIR)' LIBDIR='$(LIBDIR)' \
		  INCLUDEDIR='$(INCLUDEDIR)' BINDIR='$(BINDIR)' MANDIR='$(MANDIR)' \
		  BASHCOMPDIR='$(BASHCOMPDIR)' DIOCTLDATADIR='$(DIOCTLDATADIR)' \
		  INSTALL_TOOLS='$(INSTALL_TOOLS)' MAN_PAGES='$(MAN_PAGES)' \
		  QUIET=$(if $(findstring s,$(firstword -$(MAKEFLAGS))),1,0)
install: lib libdiosqlite tools man
	@$(INSTALL_ENV) scripts/install.sh install
uninstall:
	@$(INSTALL_ENV) scripts/install.sh uninstall

clean:
	rm -rf $(B)
	$(if $(wildcard $(KDIR)/Makefile),-$(MAKE) -C $(KDIR) M=$(CURDIR)/module clean)
