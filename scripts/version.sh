#!/bin/sh
# The project's one version number: the upstream version of the first
# entry of debian/changelog (no epoch, no Debian revision), which the
# Makefile (VERSION), module/Kbuild (MODULE_VERSION) and
# scripts/dkms-install.sh use; --full adds the Debian revision, as the
# packages' file names have it (scripts/mkdeb.sh); --date prints that
# entry's date as YYYY-MM-DD, the release date the man pages show.
#   scripts/version.sh [--full | --date]
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
--date)
	# " -- Name <mail>  Sun, 06 Dec 2026 12:00:00 +0000" -> 2026-12-06
	# (the first trailer line: the first entry's).
	d=$(sed -n -e '/^ -- .*>  [A-Z][a-z][a-z], [0-9]* [A-Z][a-z][a-z] [0-9]\{4\} /{
s/^.*>  ...,  *\([0-9]*\) \(...\) \([0-9]*\) .*/\3-\2-\1/
s/-\([0-9]\)$/-0\1/
s/-Jan-/-01-/; s/-Feb-/-02-/; s/-Mar-/-03-/; s/-Apr-/-04-/
s/-May-/-05-/; s/-Jun-/-06-/; s/-Jul-/-07-/; s/-Aug-/-08-/
s/-Sep-/-09-/; s/-Oct-/-10-/; s/-Nov-/-11-/; s/-Dec-/-12-/
p
q
}' "$changelog")
	case $d in
	[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]) echo "$d"; exit 0 ;;
	esac
	echo "version.sh: no date on the first entry's trailer line of $changelog" >&2
	exit 1 ;;
--full) ;;
'') v=${v%-*} ;;
*) echo "usage: version.sh [--full | --date]" >&2; exit 2 ;;
esac
echo "$v"
