#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# make module: build module/ against the kernel tree KDIR, leaving
# module/dio_batch.ko in the checkout.
#   scripts/build-module.sh KDIR [KBUILD ARGUMENTS...]
# Kbuild cannot build in a directory whose path holds a space, a comma or
# the like (M= is split into words): a checkout at such a path is built in
# a copy under ${TMPDIR:-/var/tmp} (module/, uapi/ and what the version
# comes from), whose dio_batch.ko is copied back.
set -eu
[ $# -ge 1 ] || { echo "usage: build-module.sh KDIR [ARGS...]" >&2; exit 2; }
kdir=$1
shift
# The Makefile's KDIR when scripts/kver.sh found no headers.
if [ -z "$kdir" ] || [ "$kdir" = /lib/modules//build ]; then
	echo "make module: no kernel headers: run make deps, or set KDIR" >&2
	exit 1
elif [ ! -f "$kdir/Makefile" ]; then
	echo "make module: $kdir holds no kernel build tree (no Makefile):" \
		"install the kernel's headers, or set KDIR" >&2
	exit 1
fi
top=$(cd "$(dirname "$0")/.." && pwd)
case "$top" in
*[!A-Za-z0-9_./+-]*) ;;
*) exec make -C "$kdir" M="$top/module" "$@" modules ;;
esac
w=$(mktemp -d "${TMPDIR:-/var/tmp}/dio-module.XXXXXX")
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/debian" "$w/scripts"
cp -r "$top/module" "$top/uapi" "$w/"
cp "$top/debian/changelog" "$w/debian/"
cp "$top/scripts/version.sh" "$w/scripts/"
echo "build-module: '$top' cannot be a Kbuild path: building in $w" >&2
make -C "$kdir" M="$w/module" "$@" modules
cp "$w/module/dio_batch.ko" "$top/module/dio_batch.ko"
