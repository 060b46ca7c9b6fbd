#!/usr/bin/env bash
# Install what dio_batch needs to build and test, idempotently.
#   scripts/deps.sh          install missing Debian packages (needs root)
#   scripts/deps.sh --check  exit 0 when everything is present, 1 otherwise
#   scripts/deps.sh --list   print the package list (for other distributions)
set -euo pipefail

PKGS=(
	build-essential gcc-multilib make pkg-config
	linux-image-amd64 linux-headers-amd64 linux-source-6.1
	bc bison flex libelf-dev libssl-dev dwarves xz-utils zstd rsync
	patch			# tests/vm/linux-6.1-patches: fixes for the debug kernels
	qemu-system-x86 busybox-static cpio kmod libkmod-dev dkms debootstrap
	e2fsprogs dmsetup libc6-dev-i386
	mdadm			# t_stacks: md RAID1 and RAID5 in the guest
	apparmor		# apparmor_parser: t_security loads a profile in the guest
	libcmocka-dev libisal-dev liburing-dev libaio-dev
	sparse shellcheck	# tests/static-check.sh (checkpatch.pl: linux-source-6.1)
	dpkg-dev debhelper dh-dkms fakeroot lintian	# make deb, tests/vm/deb-check.sh
	jq python3		# JSON output checks in the guest
	python3-jsonschema	# tests/vm/json-check.py: dioctl's JSON against its schema
	lcov			# tests/vm/coverage.py: the HTML report (gcov itself comes with gcc)
	fio			# fio/ engine, t_fio, make bench-fio (scripts/fio-src.sh: its source)
	qemu-user		# tests/cross.sh runs the arm64 build under qemu-aarch64
)
# The arm64 cross compiler and arm64 libraries are not in the list: they
# cannot be installed beside it (gcc-12-aarch64-linux-gnu Conflicts:
# gcc-multilib; libisal-dev is not Multi-Arch: same).  tests/cross.sh has
# scripts/cross-tools.sh fetch and unpack them once into the cache.

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
	[ -z "$(missing)" ]
	exit
	;;
esac

if ! command -v apt-get >/dev/null || ! command -v dpkg-query >/dev/null; then
	echo "deps: not a Debian system; install the equivalents of:" >&2
	printf '  %s\n' "${PKGS[@]}" >&2
	exit 1
fi

mapfile -t todo < <(missing)
if [ ${#todo[@]} = 0 ]; then
	echo "deps: all packages present"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages (run 'sudo make deps'):" "${todo[@]}" >&2
	exit 1
fi
echo "deps: installing:" "${todo[@]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${todo[@]}"
