#!/usr/bin/env bash
# Install what dio_batch needs to build and test, idempotently.
#   scripts/deps.sh          install missing Debian packages (needs root)
#   scripts/deps.sh --check  exit 0 when everything is present, 1 otherwise
#   scripts/deps.sh --list   print the package list (for other distributions)
#   scripts/deps.sh --demo [--check|--list]
#                            the same for make demo's packages alone
set -euo pipefail
demo=
[ "${1:-}" != --demo ] || { demo=1; shift; }

PKGS=(
	build-essential gcc-multilib make pkg-config
	linux-image-amd64 linux-headers-amd64
	bc bison flex libelf-dev libssl-dev dwarves xz-utils zstd rsync
	patch			# tests/vm/linux-6.1-patches: fixes for the debug kernels
	qemu-system-x86 busybox-static cpio kmod libkmod-dev dkms debootstrap
	file			# tests/vm/mkinitramfs.sh: busybox must be static
	e2fsprogs dmsetup libc6-dev-i386
	mdadm			# t_stacks: md RAID1 and RAID5 in the guest
	apparmor		# apparmor_parser: t_security_writes loads a profile in the guest
	systemd udev		# tests/vm/deb-check.sh boots the host's root with udev, and with systemd as init
	libcmocka-dev libisal-dev liburing-dev libaio-dev
	sparse shellcheck	# tests/static-check.sh (checkpatch.pl: linux-source-6.1)
	dpkg-dev debhelper dh-dkms fakeroot lintian	# make deb, tests/vm/deb-check.sh
	jq python3		# JSON output checks in the guest
	python3-jsonschema	# tests/vm/json-check.py: dioctl's JSON against its schema
	lcov			# tests/vm/coverage.py: the HTML report (gcov itself comes with gcc)
	fio			# fio/ engine, t_fio, make bench-fio (scripts/fio-src.sh: its source)
	nvme-cli		# t_formats: nvme read and write against what libdioctl writes and reads
	libsqlite3-dev sqlite3	# libdiosqlite; t_sqlite (scripts/sqlite-src.sh: speedtest1's source)
	qemu-user		# tests/cross.sh runs the arm64 build under qemu-aarch64
)
# make demo's own (tests/vm/demo.sh): dioctl and kmodctl built, the
# module built for the release's kernel (linux-image-amd64: 6.1 on Debian
# 12, 6.12 on Debian 13), the guest's initramfs (mkinitramfs.sh: busybox,
# file, the modules decompressed) and QEMU.  A part of the list above:
# a new machine's first command installs what it runs, not everything
# make check needs.
DEMO_PKGS=(
	build-essential make pkg-config
	linux-image-amd64 linux-headers-amd64
	libisal-dev libkmod-dev
	qemu-system-x86 busybox-static cpio kmod file xz-utils zstd
)
# Debian 12's kernel source: the debug and kcsan kernels (tests/vm/kernel.sh)
# and checkpatch.pl (tests/static-check.sh) are built from it.  Later
# releases do not have it: there make check's kernel builds cannot run (make
# check runs on Debian 12), while make, make deb, the fio engine and the
# package checks need nothing of it.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"
# shellcheck source=scripts/debian-source.sh
. "$here/debian-source.sh"
suite=$(host_suite)
[ "$suite" = bookworm ] && PKGS+=(linux-source-6.1)
[ -z "$demo" ] || PKGS=("${DEMO_PKGS[@]}")
# The arm64 cross compiler and arm64 libraries are not in the list: they
# cannot be installed beside it (gcc-12-aarch64-linux-gnu Conflicts:
# gcc-multilib; libisal-dev is not Multi-Arch: same).  tests/cross.sh has
# scripts/cross-tools.sh fetch and unpack them once into the cache.

# The package build's own needs (make deb, the package checks): debian/
# control's Build-Depends, whatever satisfies them on this release
# (systemd-dev, or on bookworm systemd), met when dpkg-checkbuilddeps says
# so.
control=$here/../debian/control
build_deps_met() {
	[ -z "$demo" ] || return 0 # the demo builds no package
	command -v dpkg-checkbuilddeps >/dev/null && dpkg-checkbuilddeps "$control" 2>/dev/null
}

missing() {
	local p
	for p in "${PKGS[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
			echo "$p"
	done
}

case "${1:-}" in
--list)
	printf '%s\n' "${PKGS[@]}"
	exit 0
	;;
--check)
	command -v dpkg-query >/dev/null || exit 1
	[ -z "$(missing)" ] && build_deps_met
	exit
	;;
esac

if ! command -v apt-get >/dev/null || ! command -v dpkg-query >/dev/null; then
	echo "deps: not a Debian system; install the equivalents of:" >&2
	printf '  %s\n' "${PKGS[@]}" >&2
	exit 1
fi

mapfile -t todo < <(missing)
bd=()
build_deps_met || bd=("(and what debian/control's Build-Depends need)")
if [ ${#todo[@]} = 0 ] && [ ${#bd[@]} = 0 ]; then
	echo "deps: all packages present"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages (run 'sudo make deps'):" "${todo[@]}" "${bd[@]}" >&2
	exit 1
fi
echo "deps: installing:" "${todo[@]}" "${bd[@]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# A system running a backports kernel has some libraries from backports
# (trixie's 7.3: libelf1t64 for its linux-kbuild), which the release's
# -dev package of the same library cannot go with ("libelf-dev : Depends:
# libelf1t64 (= 0.192-4) but 0.196-1~bpo13+2 is to be installed"): such a
# package is taken from SUITE-backports instead, one at a time as apt
# names them.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
ok=
for _ in 1 2 3 4 5 6 7 8; do
	if [ ${#todo[@]} = 0 ] ||
		apt-get install -y -q --no-install-recommends "${dpkg_io[@]}" "${todo[@]}" 2>&1 | tee "$log"; then
		ok=1
		break
	fi
	bp=$(sed -n 's/^ *\([a-z0-9][a-z0-9.+-]*\) : Depends: .* (= [^)]*) but [^ ]*~bpo[^ ]* is to be installed$/\1/p' "$log" | head -n 1)
	if [ -z "$bp" ] || ! (die() { return 1; } && host_debian_source "$suite-backports") >/dev/null 2>&1; then
		exit 1
	fi
	echo "deps: $bp from $suite-backports (what it must go with is installed from there)"
	for i in "${!todo[@]}"; do
		[ "${todo[$i]}" = "$bp" ] && todo[i]=$bp/$suite-backports
	done
	[[ " ${todo[*]} " == *" $bp/$suite-backports "* ]] || todo+=("$bp/$suite-backports")
done
[ -n "$ok" ] || exit 1
build_deps_met || apt-get satisfy -y -q --no-install-recommends "${dpkg_io[@]}" "$(build_depends "$control")"
