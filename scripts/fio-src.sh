#!/usr/bin/env bash
# The source of the installed fio, configured (config-host.h only), for the
# external ioengine in fio/: fio's engine ABI is its internal structs, so the
# engine is built against exactly the fio that runs it.
#   scripts/fio-src.sh        print the configured source directory
#                             (fetching and configuring it once)
#   scripts/fio-src.sh --dir  print where it would be, fetch nothing
# Cached under $DIO_CACHE/fio/VERSION/ (default /var/cache/dio_batch), never
# in the checkout.  Fetching needs root (a deb-src entry for the host's
# Debian source is added to /etc/apt/sources.list.d/dio_batch-src.sources).
set -euo pipefail

CACHE=${DIO_CACHE:-/var/cache/dio_batch}/fio
log() { echo "fio-src: $*" >&2; }
die() { log "$*"; exit 1; }

ver=$(dpkg-query -W -f='${Version}' fio 2>/dev/null || true)
[ -n "$ver" ] || die "fio is not installed (make deps)"
upstream=${ver#*:}
upstream=${upstream%-*}
top=$CACHE/$ver
dir=$top/fio-$upstream

if [ "${1:-}" = --dir ]; then
	echo "$dir"
	exit 0
fi
if [ -f "$dir/.dio_batch-configured" ]; then
	echo "$dir"
	exit 0
fi
[ "$(id -u)" = 0 ] || die "the source of fio $ver is not in $CACHE: run as root once (sudo scripts/fio-src.sh)"

# debian_source_enable: the host's bookworm main-archive source as a
# deb-src entry, as tests/vm/kernel.sh finds it.
# shellcheck source=scripts/debian-source.sh
. "$(dirname "$0")/debian-source.sh"
debian_source_enable fio "$ver" || die "no deb-src entry for fio $ver"

rm -rf "$top.tmp"
mkdir -p "$top.tmp"
log "apt-get source fio=$ver into $top"
(cd "$top.tmp" && apt-get source -q --download-only "fio=$ver" >&2 &&
	dpkg-source -x ./fio_"${ver#*:}".dsc "fio-$upstream" >&2)
# Only config-host.h (and what configure writes beside it): fio itself is
# not built.  The options match Debian's build where they change structs
# the engine sees (none of fio's public structs depend on the optional
# libraries).
(cd "$top.tmp/fio-$upstream" && ./configure --disable-native >&2)
[ -f "$top.tmp/fio-$upstream/config-host.h" ] || die "configure wrote no config-host.h"
touch "$top.tmp/fio-$upstream/.dio_batch-configured"
rm -rf "$top"
mv "$top.tmp" "$top"
echo "$dir"
