# shellcheck shell=sh
# What the project's shell scripts share: log and die.  Sourced, not run:
#   . "$top/scripts/lib.sh"
# POSIX sh, so that a /bin/sh script can source it as a bash one can
# (bench/counts-guest.sh does, in the guest, from the tree mounted at
# the same path).  The scripts that source it: scripts/cross-tools.sh,
# deps.sh, fio-src.sh, install.sh, isal-trixie.sh, sqlite-src.sh;
# tests/vm/demo.sh,
# kernel.sh; bench/counts.sh, counts-guest.sh, icount.sh, run-fio.sh,
# run-fio-pi.sh, run-guest.sh.

# The name log and die print first: the script's file name without .sh,
# or what the script set lib_prog to before it sourced this file.
lib_prog=${lib_prog:-$(basename "$0" .sh)}

# log TEXT...: "NAME: TEXT" on stderr.
log() { echo "$lib_prog: $*" >&2; }
# die TEXT...: log, then exit 1.
die() { log "$*"; exit 1; }
