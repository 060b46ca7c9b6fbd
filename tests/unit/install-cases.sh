#!/bin/sh
# The cases of test_install, one shell function each, run from the top of
# the checkout: what make install, make uninstall and the installed files
# promise a user.  They build in DIO_INSTALL_B (test_install shares one
# among its cases), or in a directory of their own.
#   tests/unit/install-cases.sh CASE
set -eu
top=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
B=${DIO_INSTALL_B:-$tmp/build}
export B
mk() { make -s --no-print-directory -C "$top" B="$B" "$@"; }
multiarch=$(cc -print-multiarch)

# The API and nothing else: every global symbol the static archive defines
# is one libdioctl.map exports.
static_exports() {
	mk lib
	sed -n '/^LIBDIOCTL_/,/local:/p' libdioctl/libdioctl.map |
		sed -n 's/^[[:space:]]*\([a-z_0-9]*\);$/\1/p' | sort >"$tmp/api"
	nm -g --defined-only "$B/libdioctl.a" | awk 'NF == 3 { print $3 }' | sort >"$tmp/defined"
	[ -s "$tmp/api" ] || { echo "no symbols read from libdioctl.map"; return 1; }
	diff -u "$tmp/api" "$tmp/defined"
}

# A program with functions named like libdioctl's internals links the
# static library and gets the right guards.
static_no_clash() {
	mk lib
	cat >"$tmp/clash.c" <<'EOC'
#include <stdio.h>
#include <stdint.h>
#include <stddef.h>
#include <dioctl.h>
/* The names libdioctl's internals had before they were made local. */
uint32_t pi_ipsum(const void *b, size_t l) { (void)b; return (uint32_t)l; }
uint16_t pi_crc16_slice8(uint16_t c, const void *b, size_t l) { (void)b; (void)l; return c; }
uint64_t pi_crc64_slice8(uint64_t c, const void *b, size_t l) { (void)b; (void)l; return c; }
int main(void)
{
	static const char s[] = "123456789";
	if (dio_pi_crc16_t10dif(0, s, 9) != 0xd0db ||
	    dio_pi_crc64_nvme(0, s, 9) != 0xae8b14860a799888ULL ||
	    pi_ipsum(s, 9) != 9)
		return 1;
	puts("ok");
	return 0;
}
EOC
	cc -Wall -Werror -I"$top/libdioctl/include" -I"$top/uapi" -o "$tmp/clash" "$tmp/clash.c" \
		"$B/libdioctl.a" -lisal
	[ "$("$tmp/clash")" = ok ]
}

# dioctl.h (with dioctl_pi.h and linux/dio_batch.h) compiles without a
# warning as C99, C11 and C++ with -Wpedantic.
headers_clean() {
	printf '#include <dioctl.h>\nint main(void) { return sys_dio_exit(-1) == 0; }\n' >"$tmp/h.c"
	cp "$tmp/h.c" "$tmp/h.cc"
	for std in c99 c11 gnu17; do
		cc -std=$std -Wall -Wextra -Wpedantic -Werror -I libdioctl/include -I uapi -c -o "$tmp/h.o" "$tmp/h.c"
	done
	for std in c++11 c++17; do
		c++ -std=$std -Wall -Wextra -Wpedantic -Werror -I libdioctl/include -I uapi -c -o "$tmp/h.o" "$tmp/h.cc"
	done
}

# make install honours DESTDIR, PREFIX and LIBDIR, and the .pc file says
# where things went, also when an earlier build used another PREFIX.
install_pc() {
	mk lib tools man
	mk install DESTDIR="$tmp/a" PREFIX=/opt/one >/dev/null
	mk install DESTDIR="$tmp/b" PREFIX=/usr >/dev/null
	pc=$tmp/b/usr/lib/$multiarch/pkgconfig/libdioctl.pc
	[ -f "$pc" ] || { echo "no $pc"; find "$tmp/b" -name '*.pc'; return 1; }
	if ! grep -qx 'prefix=/usr' "$pc" || ! grep -qx "libdir=/usr/lib/$multiarch" "$pc" ||
		! grep -qx 'includedir=/usr/include' "$pc"; then
		cat "$pc"
		return 1
	fi
	grep -qx 'prefix=/opt/one' "$tmp/a/opt/one/lib/$multiarch/pkgconfig/libdioctl.pc"
	mk install DESTDIR="$tmp/c" PREFIX=/usr LIBDIR=/usr/lib64 >/dev/null
	grep -qx 'libdir=/usr/lib64' "$tmp/c/usr/lib64/pkgconfig/libdioctl.pc"
	# A program built with what pkg-config says, against the DESTDIR tree.
	# shellcheck disable=SC2016  # $1 and $(...) are the inner shell's
	PKG_CONFIG_SYSROOT_DIR=$tmp/b PKG_CONFIG_LIBDIR=$tmp/b/usr/lib/$multiarch/pkgconfig \
		sh -c 'cc -Wall -Werror -o "$1" examples/pi_roundtrip.c $(pkg-config --cflags --libs libdioctl)' \
		sh "$tmp/ex"
	out=$(LD_LIBRARY_PATH=$tmp/b/usr/lib/$multiarch "$tmp/ex" 2>&1 || true)
	case $out in
	*usage*) ;;
	*) echo "$out"; return 1 ;;
	esac
}

# dioctl links libdioctl.so.1 (the Makefile says why): the one in the build
# tree runs from there, also when the tree is moved, through RUNPATH
# $ORIGIN/.. and nothing else; the one make install installs has no
# RUNPATH and finds the installed library.  DIOCTL_STATIC=1 links
# libdioctl.a into the one binary, run in place and installed alike, and
# switching back links the shared one again.
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
runpath() { readelf -d "$1" | sed -n 's/.*(\(RPATH\|RUNPATH\)).*\[\(.*\)\]/\1 \2/p'; }
runs() { # BIN [VAR=VALUE...]: dioctl --version, in an empty environment
	b=$1
	shift
	env -i "$@" "$b" --version | grep -qx "dioctl $(scripts/version.sh) .*" ||
		{ echo "$b does not run: $(env -i "$@" "$b" --version 2>&1)"; return 1; }
}
dioctl_linkage() {
	lb=$tmp/lb
	lmk() { make -s --no-print-directory -C "$top" B="$lb" "$@"; }
	lmk lib tools man
	needed "$lb/tools/dioctl" | grep -qx libdioctl.so.1 || { echo "in-tree dioctl: no libdioctl.so.1"; return 1; }
	# shellcheck disable=SC2016  # $ORIGIN is ld.so's
	[ "$(runpath "$lb/tools/dioctl")" = 'RUNPATH $ORIGIN/..' ] ||
		{ echo "in-tree dioctl: runpath '$(runpath "$lb/tools/dioctl")'"; return 1; }
	runs "$lb/tools/dioctl"
	cp -a "$lb" "$tmp/moved"
	mv "$lb" "$tmp/away"
	runs "$tmp/moved/tools/dioctl"
	mv "$tmp/away" "$lb"
	lmk install DESTDIR="$tmp/i" PREFIX=/usr >/dev/null
	d=$tmp/i/usr/bin/dioctl
	needed "$d" | grep -qx libdioctl.so.1 || { echo "installed dioctl: no libdioctl.so.1"; return 1; }
	[ -z "$(runpath "$d")" ] || { echo "installed dioctl: $(runpath "$d")"; return 1; }
	runs "$d" LD_LIBRARY_PATH="$tmp/i/usr/lib/$multiarch"
	lmk tools DIOCTL_STATIC=1
	lmk install DESTDIR="$tmp/s" PREFIX=/usr DIOCTL_STATIC=1 >/dev/null
	for b in "$lb/tools/dioctl" "$tmp/s/usr/bin/dioctl"; do
		! needed "$b" | grep -q libdioctl || { echo "DIOCTL_STATIC=1: $b needs libdioctl"; return 1; }
		[ -z "$(runpath "$b")" ] || { echo "DIOCTL_STATIC=1: $b: $(runpath "$b")"; return 1; }
		runs "$b"
	done
	lmk tools
	needed "$lb/tools/dioctl" | grep -qx libdioctl.so.1 ||
		{ echo "back from DIOCTL_STATIC=1: dioctl was not linked again"; return 1; }
}

# make uninstall removes exactly what make install put there.
uninstall_all() {
	mk lib tools man
	mk install DESTDIR="$tmp/d" PREFIX=/usr >/dev/null
	[ -n "$(find "$tmp/d" -type f)" ]
	[ -f "$tmp/d/usr/share/bash-completion/completions/dioctl" ] ||
		{ echo "no bash completion installed"; return 1; }
	cmp "$top/tools/dioctl.schema.json" "$tmp/d/usr/share/dioctl/dioctl.schema.json" ||
		{ echo "no JSON Schema installed in /usr/share/dioctl"; return 1; }
	mk uninstall DESTDIR="$tmp/d" PREFIX=/usr >/dev/null
	left=$(find "$tmp/d" -type f -o -type l)
	[ -z "$left" ] || { echo "left after uninstall:"; echo "$left"; return 1; }
	[ ! -d "$tmp/d/usr/share/dioctl" ] || { echo "usr/share/dioctl left after uninstall"; return 1; }
}

# Installed into the running system (no DESTDIR), the library is found at
# once, by a program and by dioctl: make install runs ldconfig.  In a mount namespace, with /usr/local
# and /etc on throwaway layers, so the host is not touched.
install_ldconfig() {
	mk lib tools man
	# shellcheck disable=SC2016  # $1, $2 and $(...) are the inner shell's
	unshare -m --propagation private sh -eu -c '
		tmp=$1 B=$2
		mount -t tmpfs tmpfs /usr/local
		mkdir -p "$tmp/etc-up" "$tmp/etc-work"
		mount -t overlay overlay -o "lowerdir=/etc,upperdir=$tmp/etc-up,workdir=$tmp/etc-work" /etc
		make -s --no-print-directory B="$B" install >/dev/null
		cc -o "$tmp/prog" examples/pi_roundtrip.c $(pkg-config --cflags --libs libdioctl)
		out=$("$tmp/prog" 2>&1) || true
		echo "$out"
		case $out in *"cannot open shared object"*) exit 1 ;; esac
		case $out in *usage*) ;; *) exit 1 ;; esac
		/usr/local/bin/dioctl --version
		make -s --no-print-directory B="$B" uninstall >/dev/null
		[ -z "$(find /usr/local -type f)" ]
	' sh "$tmp" "$B"
}

# A release is a tarball, not a git checkout: in a tree exported without
# .git (what git archive or a release tarball gives), scripts/tree-files.sh
# lists the same files as in the checkout, from .gitignore's patterns, and
# make deb (scripts/mkdeb.sh) copies exactly those for dpkg-buildpackage,
# which runs without the variables of the make that ran make deb.
# A stand-in dpkg-buildpackage lists what it was given: the real one and
# lintian take about a minute of CPU, too long for the unit tests.
exported_tree() {
	x=$tmp/export
	mkdir "$x"
	scripts/tree-files.sh | tar --null -T - -cf - | tar -x -C "$x"
	if [ -e "$x/.git" ] || [ ! -f "$x/Makefile" ]; then
		echo "no exported tree in $x"
		return 1
	fi
	if git -C "$x" rev-parse --show-toplevel 2>/dev/null | grep -qx "$x"; then
		echo "$x is a git checkout"
		return 1
	fi
	# Files .gitignore names, as a build leaves them: neither lists them.
	mkdir -p "$x/build/lib" "$x/module/.tmp_versions"
	for f in build/lib/x.o module/.tmp_versions/x.mod module/x.o module/.x.o.cmd module/Module.symvers; do
		: >"$x/$f"
	done
	scripts/tree-files.sh | tr '\0' '\n' | LC_ALL=C sort >"$tmp/here"
	"$x/scripts/tree-files.sh" | tr '\0' '\n' | LC_ALL=C sort >"$tmp/there"
	[ "$(wc -l <"$tmp/here")" -ge 100 ] || { echo "only $(wc -l <"$tmp/here") files listed"; return 1; }
	diff -u --label checkout --label exported "$tmp/here" "$tmp/there"
	mkdir "$tmp/bin"
	cat >"$tmp/bin/dpkg-buildpackage" <<-EOF
		#!/bin/sh
		find . -type f -printf '%P\\n' | LC_ALL=C sort >"$tmp/copied"
		env | grep -E '^(B|MAKEFLAGS|MAKELEVEL)=' >"$tmp/leaked"
		v=\${PWD##*/dio-batch-}
		: >"../dio-batch_\${v}_amd64.changes"
		: >"../dioctl_\${v}_amd64.deb"
	EOF
	printf '#!/bin/sh\n' >"$tmp/bin/lintian"
	chmod +x "$tmp/bin/dpkg-buildpackage" "$tmp/bin/lintian"
	if ! PATH=$tmp/bin:$PATH make -s --no-print-directory -C "$x" B="$x/build" deb >"$tmp/deb.log" 2>&1; then
		cat "$tmp/deb.log"
		return 1
	fi
	[ -s "$tmp/copied" ] || { echo "make deb ran no dpkg-buildpackage"; cat "$tmp/deb.log"; return 1; }
	diff -u --label "the tree's files" --label "make deb's copy" "$tmp/here" "$tmp/copied"
	# B (here in the environment and on make's command line) would have
	# debian/rules' make clean remove the packages' own directory.
	if [ -s "$tmp/leaked" ]; then
		echo "dpkg-buildpackage ran with the outer make's variables:"
		cat "$tmp/leaked"
		return 1
	fi
}

"$1"
