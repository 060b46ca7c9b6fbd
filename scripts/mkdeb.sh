#!/usr/bin/env bash
# Build the Debian packages from the work tree, as a packager would:
# dpkg-buildpackage -us -uc -b in a copy of the tracked (and new, not
# ignored) files, then lintian, which must find no error.
#   scripts/mkdeb.sh [OUTDIR]    (default build/deb; the .debs land there)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/deb}
mkdir -p "$out"
out=$(cd "$out" && pwd)
ver=$("$top/scripts/version.sh" --full)
src=$out/dio-batch-$ver

rm -rf "$src" "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
mkdir -p "$src"
(cd "$top" && git ls-files -co --exclude-standard -z | grep -zv '^build/' |
	xargs -0 cp --parents -t "$src")
(cd "$src" && dpkg-buildpackage -us -uc -b >"$out/build.log" 2>&1) || {
	tail -n 40 "$out/build.log" >&2
	echo "mkdeb: dpkg-buildpackage failed (all of it: $out/build.log)" >&2
	exit 1
}
changes=$(ls "$out"/dio-batch_"$ver"_*.changes)
# --fail-on error: warnings are listed, errors fail.  Run as root here;
# lintian says so and goes on.
lintian --fail-on error --tag-display-limit 0 "$changes" >"$out/lintian.log" 2>&1 || {
	cat "$out/lintian.log" >&2
	echo "mkdeb: lintian reports errors" >&2
	exit 1
}
cat "$out/lintian.log"
ls "$out"/*.deb
