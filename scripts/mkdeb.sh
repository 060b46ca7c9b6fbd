#!/usr/bin/env bash
# Build the Debian packages from the work tree, as a packager would:
# dpkg-buildpackage -us -uc -b in a copy of the tracked (and new, not
# ignored) files, or in a tree that is no git checkout (a release tarball)
# of all files but the ignored ones (scripts/tree-files.sh), then lintian,
# which must find no error.
#   scripts/mkdeb.sh [--root DIR] [OUTDIR]    (default build/deb; the .debs land there)
# --root DIR: build and run lintian in the Debian root DIR instead (chroot,
# the copy in its /build; the caller mounts its /proc and /dev):
# tests/vm/deb-check.sh trixie builds on Debian 13 so.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
root=
if [ "${1:-}" = --root ]; then
	root=$(cd "${2:?mkdeb: --root needs a directory}" && pwd)
	shift 2
fi
out=${1:-$top/build/deb}
mkdir -p "$out"
out=$(cd "$out" && pwd)
ver=$("$top/scripts/version.sh" --full)
# Where the build happens: $work as the host sees it, $in as the build does.
if [ -n "$root" ]; then
	in=/build work=$root/build
	inroot() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 "$@"; }
else
	# Nothing of the make that ran this (make deb B=DIR: MAKEFLAGS, or B in
	# the environment) reaches debian/rules: its make clean would remove
	# B, where the packages and this build's log go.
	in=$out work=$out
	inroot() { env -u B -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "$@"; }
fi
src=dio-batch-$ver

rm -rf "${work:?}/$src" "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
mkdir -p "$work/$src"
(cd "$top" && scripts/tree-files.sh | xargs -0 cp --parents -t "$work/$src")
# shellcheck disable=SC2016  # $1 is the inner shell's
inroot sh -c 'cd "$1" && dpkg-buildpackage -us -uc -b' sh "$in/$src" >"$out/build.log" 2>&1 || {
	tail -n 40 "$out/build.log" >&2
	echo "mkdeb: dpkg-buildpackage failed (all of it: $out/build.log)" >&2
	exit 1
}
changes=$(cd "$work" && ls dio-batch_"$ver"_*.changes)
# --fail-on error: warnings are listed, errors fail.  Run as root here;
# lintian says so and goes on.
inroot lintian --fail-on error --tag-display-limit 0 "$in/$changes" >"$out/lintian.log" 2>&1 || {
	cat "$out/lintian.log" >&2
	echo "mkdeb: lintian reports errors" >&2
	exit 1
}
cat "$out/lintian.log"
if [ -n "$root" ]; then
	# The .changes names the .debs and .buildinfo beside it.
	(cd "$work" && mv ./*.deb ./*.buildinfo ./*.changes "$out/")
fi
ls "$out"/*.deb
