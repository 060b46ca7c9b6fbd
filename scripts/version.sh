#!/bin/sh
# The project's one version number: the upstream version of the first
# entry of debian/changelog (no epoch, no Debian revision), which the
# Makefile (VERSION), module/Kbuild (MODULE_VERSION) and
# scripts/dkms-install.sh use; --full adds the Debian revision, as the
# packages' file names have it (scripts/mkdeb.sh).
#   scripts/version.sh [--full]
# It reads the changelog beside the scripts/ directory it is in (a copy of
# module/ with scripts/ and debian/changelog beside it works the same:
# tests/vm/kernel.sh build-module).  POSIX sh and sed only: Kbuild runs it,
# also in the trixie chroot that builds for 7.3.
set -eu
changelog=$(dirname "$0")/../debian/changelog
[ -r "$changelog" ] || { echo "version.sh: no $changelog" >&2; exit 1; }
# "dio-batch (1:0.3.0-2) unstable; urgency=medium" -> 0.3.0-2, then 0.3.0.
v=$(sed -n -e '1s/^[^ ]* (\([^)]*\)).*/\1/p' "$changelog" | sed -e 's/^[0-9]*://')
[ -n "$v" ] || { echo "version.sh: no version on the first line of $changelog" >&2; exit 1; }
case ${1:-} in
--full) ;;
'') v=${v%-*} ;;
*) echo "usage: version.sh [--full]" >&2; exit 2 ;;
esac
echo "$v"
