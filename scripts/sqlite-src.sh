#!/usr/bin/env bash
# Debian's source of the installed SQLite (the sqlite3 source package of
# libsqlite3-dev's version), for SQLite's own test programs (speedtest1)
# that make check runs through libdiosqlite.
#   scripts/sqlite-src.sh        print the unpacked source directory,
#                                fetching it once (root: a deb-src entry)
#   scripts/sqlite-src.sh --dir  print where it would be, fetch nothing
# Cached under $DIO_CACHE/sqlite/VERSION/ (default /var/cache/dio_batch),
# never in the checkout.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${DIO_CACHE:-/var/cache/dio_batch}/sqlite
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"
# shellcheck source=scripts/debian-source.sh
. "$here/debian-source.sh"

ver=$(dpkg-query -W -f='${Version}' libsqlite3-dev 2>/dev/null || true)
[ -n "$ver" ] || die "libsqlite3-dev is not installed (make deps)"
top_dir=$cache/$ver
dir=$top_dir/sqlite3
if [ "${1:-}" = --dir ] || [ -f "$dir/.dio_batch-unpacked" ]; then
	echo "$dir"
	exit 0
fi
[ "$(id -u)" = 0 ] || die "the source of sqlite3 $ver is not in $cache: run as root once (sudo scripts/sqlite-src.sh)"
debian_source_enable sqlite3 "$ver" || die "no deb-src entry for sqlite3 $ver"
rm -rf "$top_dir.tmp"
mkdir -p "$top_dir.tmp"
log "apt-get source sqlite3=$ver into $top_dir"
(cd "$top_dir.tmp" && apt-get source -q --download-only "sqlite3=$ver" >&2 &&
	dpkg-source -x ./sqlite3_"${ver#*:}".dsc sqlite3 >&2) ||
	die "the source of sqlite3 $ver could not be fetched"
[ -f "$top_dir.tmp/sqlite3/test/speedtest1.c" ] || die "no test/speedtest1.c in sqlite3 $ver"
echo "apt-get source sqlite3=$ver" >"$top_dir.tmp/sqlite3/.dio_batch-unpacked"
rm -rf "$top_dir"
mv "$top_dir.tmp" "$top_dir"
echo "$dir"
