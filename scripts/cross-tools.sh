#!/usr/bin/env bash
# The Debian release's cross compiler, gcc-12, for ARCH (arm64, or s390x:
# big-endian; Debian 12 and 13 both ship it), and the ARCH builds of the
# libraries libdioctl and its unit tests link (ISA-L, cmocka), unpacked
# into a directory of their own, for tests/cross.sh:
#   scripts/cross-tools.sh ARCH        print that directory (fetching it once)
#   scripts/cross-tools.sh ARCH --dir  print where it would be, fetch nothing
# Cached under $DIO_CACHE/cross-ARCH/ (default /var/cache/dio_batch), never
# in the checkout.  Fetching needs root: apt-get update with ARCH added for
# that one command, apt-get download, dpkg-deb -x.
#
# Unpacked, not installed, because none of it can be installed beside what
# make deps installs: gcc-12-aarch64-linux-gnu (as every Debian cross gcc)
# Conflicts: gcc-multilib (tests/compat32 needs it), libisal2 and
# libisal-dev are not Multi-Arch: same (libisal-dev:arm64 would replace the
# amd64 one), and libcmocka-dev:arm64 would need "dpkg --add-architecture"
# on the machine for good.  The compiler is relocatable: tests/cross.sh
# runs it as DIR/usr/bin/TRIPLET-gcc-12 --sysroot=DIR, with DIR's host
# libraries (the cross binutils' libbfd) on LD_LIBRARY_PATH.  qemu-user,
# which runs the programs, is an ordinary package (scripts/deps.sh).
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=scripts/debian-source.sh
. "$(dirname "$0")/debian-source.sh"

arch=${1:-}
case $arch in
arm64) triplet=aarch64-linux-gnu ;;
s390x) triplet=s390x-linux-gnu ;;
*) die "usage: scripts/cross-tools.sh arm64|s390x [--dir]" ;;
esac
top=${DIO_CACHE:-/var/cache/dio_batch}
CACHE=$top/cross-$arch
# The cross compiler without its sanitizer and C++ runtimes, the ARCH C
# library, and the ARCH libraries (with their -dev packages).
CROSS=("binutils-$triplet" "cpp-12-$triplet" "gcc-12-$triplet"
	"libgcc-12-dev-$arch-cross" "libgcc-s1-$arch-cross" "libc6-$arch-cross"
	"libc6-dev-$arch-cross" "linux-libc-dev-$arch-cross")
LIBS=(libisal2 libisal-dev libcmocka0 libcmocka-dev)
# The set and the host's release, for the stamp: a new list means a new
# fetch, and so does another release (the cross binutils link the host's
# libraries: Debian 12's as, run on Debian 13, misses libsframe.so.0).
want="$(host_suite): ${CROSS[*]} ${LIBS[*]}"
dir=$CACHE/root

if [ "${2:-}" = --dir ]; then
	echo "$dir"
	exit 0
fi
if [ -x "$dir/usr/bin/$triplet-gcc-12" ] &&
   [ "$(cat "$dir/.dio_batch-packages" 2>/dev/null)" = "$want" ]; then
	echo "$dir"
	exit 0
fi
[ "$(id -u)" = 0 ] || die "no $arch tools in $CACHE: run as root once (sudo scripts/cross-tools.sh $arch)"
command -v apt-get >/dev/null || die "not a Debian system"

# ARCH for these two commands only: the machine's dpkg architectures stay
# as they are.  No sandbox user: the files land in a root-only directory.
# One apt at a time with the project's others (tests/vm/kernel.sh, which
# may be installing beside make check's first steps).
mkdir -p "$top"
apt=(flock "$top/.apt.lock" apt-get -q -o DPkg::Lock::Timeout=600
	-o APT::Architectures::="$(dpkg --print-architecture)"
	-o APT::Architectures::="$arch" -o APT::Sandbox::User=root)
rm -rf "$CACHE/tmp"
mkdir -p "$CACHE/tmp/debs"
log "fetching ${#CROSS[@]} cross and ${#LIBS[@]} $arch packages into $CACHE"
"${apt[@]}" update >&2
(cd "$CACHE/tmp/debs" && "${apt[@]}" download "${CROSS[@]}" "${LIBS[@]/%/:$arch}" >&2)
mkdir -p "$CACHE/tmp/root"
for deb in "$CACHE"/tmp/debs/*.deb; do
	dpkg-deb -x "$deb" "$CACHE/tmp/root"
done
[ -x "$CACHE/tmp/root/usr/bin/$triplet-gcc-12" ] || die "no compiler in the packages"
echo "$want" >"$CACHE/tmp/root/.dio_batch-packages"
rm -rf "$dir"
mv "$CACHE/tmp/root" "$dir"
rm -rf "$CACHE/tmp"
echo "$dir"
