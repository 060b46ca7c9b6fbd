#!/usr/bin/env bash
# Debian trixie's ISA-L (libisal2 and libisal-dev, 2.31 or later: the first
# with crc64_rocksoft_refl(), CRC-64/NVME), unpacked into a directory of its
# own for pi_bench's comparison (make bench-isal, bench/README.md):
#   scripts/isal-trixie.sh         print that directory (fetching it once)
#   scripts/isal-trixie.sh --dir   print where it would be, fetch nothing
#   scripts/isal-trixie.sh --lib   print the path of its libisal.so.2
# Cached under $DIO_CACHE/isal-trixie/ (default /var/cache/dio_batch), never
# in the checkout.  The packages come through the trixie chroot's apt
# (tests/vm/kernel.sh prepare 7.3 makes it; its signed package lists), are
# downloaded, not installed, and unpacked with dpkg-deb -x: nothing on the
# host or in the chroot changes.  Fetching needs root.  pi_bench loads the
# library with dlopen() beside the host's own ISA-L (bookworm: 2.30), so
# both are timed in one run.
set -euo pipefail

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${DIO_CACHE:-/var/cache/dio_batch}
CACHE=$cache/isal-trixie
PKGS=(libisal2 libisal-dev)
dir=$CACHE/root
lib=$dir/usr/lib/x86_64-linux-gnu/libisal.so.2

case ${1:-} in
--dir) echo "$dir"; exit 0 ;;
--lib) ;;
'') ;;
*) die "usage: scripts/isal-trixie.sh [--dir|--lib]" ;;
esac
[ "$(uname -m)" = x86_64 ] || die "x86-64 only (the chroot is amd64)"
if [ ! -e "$lib" ] || [ ! -s "$dir/.dio_batch-packages" ]; then
	[ "$(id -u)" = 0 ] || die "no trixie ISA-L in $CACHE: run as root once (sudo scripts/isal-trixie.sh)"
	"$top/tests/vm/kernel.sh" prepare 7.3 >&2
	root73=$cache/trixie
	rm -rf "$CACHE/tmp" "$root73/var/tmp/isal-debs"
	mkdir -p "$CACHE/tmp/root" "$root73/var/tmp/isal-debs"
	log "downloading ${PKGS[*]} from trixie into $CACHE"
	# As tests/vm/kernel.sh's chroot_in: /proc in a private mount namespace.
	# shellcheck disable=SC2016
	flock "$cache/.apt.lock" unshare --mount --propagation private -- \
		sh -c 'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$root73" \
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
		sh -c 'cd /var/tmp/isal-debs && a="apt-get -q -o APT::Sandbox::User=root" &&
			{ $a download "$@" || { $a update && $a download "$@"; }; }' sh "${PKGS[@]}" >&2
	for deb in "$root73"/var/tmp/isal-debs/*.deb; do
		dpkg-deb -x "$deb" "$CACHE/tmp/root"
		# shellcheck disable=SC2016 # dpkg-deb's own ${...}
		dpkg-deb -W --showformat='${Package} ${Version}\n' "$deb" >>"$CACHE/tmp/root/.dio_batch-packages"
	done
	rm -rf "$root73/var/tmp/isal-debs"
	[ -e "$CACHE/tmp/root/usr/lib/x86_64-linux-gnu/libisal.so.2" ] || die "no libisal.so.2 in the packages"
	rm -rf "$dir"
	mv "$CACHE/tmp/root" "$dir"
	rm -rf "$CACHE/tmp"
	log "$(paste -sd';' "$dir/.dio_batch-packages")"
fi
if [ "${1:-}" = --lib ]; then echo "$lib"; else echo "$dir"; fi
