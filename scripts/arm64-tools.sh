#!/usr/bin/env bash
# Debian bookworm's arm64 cross compiler and the arm64 builds of the
# libraries libdioctl and its unit tests link (ISA-L, cmocka), unpacked into
# a directory of their own, for tests/cross-arm64.sh:
#   scripts/arm64-tools.sh        print that directory (fetching it once)
#   scripts/arm64-tools.sh --dir  print where it would be, fetch nothing
# Cached under $DIO_CACHE/arm64/ (default /var/cache/dio_batch), never in the
# checkout.  Fetching needs root: apt-get update with arm64 added for that
# one command, apt-get download, dpkg-deb -x.
#
# Unpacked, not installed, because none of it can be installed beside what
# make deps installs: gcc-12-aarch64-linux-gnu Conflicts: gcc-multilib
# (tests/compat32 needs it), libisal2 and libisal-dev are not Multi-Arch:
# same (libisal-dev:arm64 would replace the amd64 one), and libcmocka-dev:arm64
# would need "dpkg --add-architecture arm64" on the machine for good.  The
# compiler is relocatable: tests/cross-arm64.sh runs it as
# DIR/usr/bin/aarch64-linux-gnu-gcc-12 --sysroot=DIR, with DIR's host
# libraries (the arm64 binutils' libbfd) on LD_LIBRARY_PATH.  qemu-user, which
# runs the programs, is an ordinary package (scripts/deps.sh).
set -euo pipefail

CACHE=${DIO_CACHE:-/var/cache/dio_batch}/arm64
log() { echo "arm64-tools: $*" >&2; }
die() { log "$*"; exit 1; }

# The cross compiler without its sanitizer and C++ runtimes, the arm64
# C library, and the arm64 libraries (with their -dev packages).
CROSS=(binutils-aarch64-linux-gnu cpp-12-aarch64-linux-gnu gcc-12-aarch64-linux-gnu
	libgcc-12-dev-arm64-cross libgcc-s1-arm64-cross libc6-arm64-cross
	libc6-dev-arm64-cross linux-libc-dev-arm64-cross)
ARM64=(libisal2 libisal-dev libcmocka0 libcmocka-dev)
# The set, for the stamp: a new list means a new fetch.
want="${CROSS[*]} ${ARM64[*]}"
dir=$CACHE/root

if [ "${1:-}" = --dir ]; then
	echo "$dir"
	exit 0
fi
if [ -x "$dir/usr/bin/aarch64-linux-gnu-gcc-12" ] &&
   [ "$(cat "$dir/.dio_batch-packages" 2>/dev/null)" = "$want" ]; then
	echo "$dir"
	exit 0
fi
[ "$(id -u)" = 0 ] || die "no arm64 tools in $CACHE: run as root once (sudo scripts/arm64-tools.sh)"
command -v apt-get >/dev/null || die "not a Debian system"

# arm64 for these two commands only: the machine's dpkg architectures stay
# as they are.  No sandbox user: the files land in a root-only directory.
apt=(apt-get -q -o APT::Architectures::=amd64 -o APT::Architectures::=arm64
	-o APT::Sandbox::User=root)
rm -rf "$CACHE/tmp"
mkdir -p "$CACHE/tmp/debs"
log "fetching ${#CROSS[@]} cross and ${#ARM64[@]} arm64 packages into $CACHE"
"${apt[@]}" update >&2
(cd "$CACHE/tmp/debs" && "${apt[@]}" download "${CROSS[@]}" "${ARM64[@]/%/:arm64}" >&2)
mkdir -p "$CACHE/tmp/root"
for deb in "$CACHE"/tmp/debs/*.deb; do
	dpkg-deb -x "$deb" "$CACHE/tmp/root"
done
[ -x "$CACHE/tmp/root/usr/bin/aarch64-linux-gnu-gcc-12" ] || die "no compiler in the packages"
echo "$want" >"$CACHE/tmp/root/.dio_batch-packages"
rm -rf "$dir"
mv "$CACHE/tmp/root" "$dir"
rm -rf "$CACHE/tmp"
echo "$dir"
