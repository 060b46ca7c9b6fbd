#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# make install and make uninstall: what the Makefile built (in B), put into
# or taken out of DESTDIR with the Makefile's directories, each command
# printed before it runs, as make prints a recipe's (not with QUIET=1:
# make -s).  Run from the top of the tree by the Makefile, which passes
# its variables in the environment:
#   B SOVERSION DESTDIR LIBDIR INCLUDEDIR BINDIR MANDIR BASHCOMPDIR
#   DIOCTLDATADIR INSTALL_TOOLS (the dioctl to install) MAN_PAGES (built)
#   scripts/install.sh install|uninstall
# Installed straight into the running system (no DESTDIR), both run
# ldconfig, whose failure is ignored.
set -eu
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

run() {
	[ "${QUIET:-}" = 1 ] || echo "$*"
	"$@"
}

# The man pages of section $1 among MAN_PAGES.
pages_of() {
	for m in $MAN_PAGES; do
		case $m in *."$1") echo "$m" ;; esac
	done
}

ldconfig_system() {
	[ -z "$DESTDIR" ] || return 0
	run ldconfig || log "ldconfig failed ($?), ignored"
}

install_all() {
	lib=$DESTDIR$LIBDIR man=$DESTDIR$MANDIR
	run install -d "$lib/pkgconfig" "$DESTDIR$INCLUDEDIR/linux" "$DESTDIR$BINDIR" \
		"$man/man1" "$man/man3" "$man/man7" "$DESTDIR$BASHCOMPDIR" "$DESTDIR$DIOCTLDATADIR"
	run install -m 644 "$B/libdioctl.a" "$lib/"
	run install -m 644 "$B/libdioctl.so.$SOVERSION.0.0" "$lib/"
	run ln -sf "libdioctl.so.$SOVERSION.0.0" "$lib/libdioctl.so.$SOVERSION"
	run ln -sf "libdioctl.so.$SOVERSION" "$lib/libdioctl.so"
	run install -m 644 "$B/libdioctl.pc" "$lib/pkgconfig/"
	run install -m 644 "$B/libdiosqlite.so.1.0.0" "$lib/"
	run ln -sf libdiosqlite.so.1.0.0 "$lib/libdiosqlite.so.1"
	run ln -sf libdiosqlite.so.1 "$lib/libdiosqlite.so"
	run install -m 644 "$B/libdiosqlite.pc" "$lib/pkgconfig/"
	run install -m 644 libdioctl/include/*.h libdiosqlite/include/*.h "$DESTDIR$INCLUDEDIR/"
	run install -m 644 uapi/linux/dio_batch.h "$DESTDIR$INCLUDEDIR/linux/"
	# shellcheck disable=SC2086 # one path, or none
	run install -m 755 $INSTALL_TOOLS "$DESTDIR$BINDIR/"
	run install -m 644 tools/dioctl.bash-completion "$DESTDIR$BASHCOMPDIR/dioctl"
	run install -m 644 tools/dioctl.schema.json "$DESTDIR$DIOCTLDATADIR/"
	for s in 1 3 7; do
		pages=$(pages_of $s)
		# shellcheck disable=SC2086 # paths without spaces, as make's
		[ -z "$pages" ] || run install -m 644 $pages "$man/man$s/"
	done
	ldconfig_system
}

uninstall_all() {
	lib=$DESTDIR$LIBDIR
	set -- "$lib/libdioctl.a" "$lib"/libdioctl.so* "$lib/pkgconfig/libdioctl.pc" \
		"$lib"/libdiosqlite.so* "$lib/pkgconfig/libdiosqlite.pc"
	for h in libdioctl/include/*.h libdiosqlite/include/*.h; do
		set -- "$@" "$DESTDIR$INCLUDEDIR/${h##*/}"
	done
	set -- "$@" "$DESTDIR$INCLUDEDIR/linux/dio_batch.h"
	for t in $INSTALL_TOOLS; do
		set -- "$@" "$DESTDIR$BINDIR/${t##*/}"
	done
	set -- "$@" "$DESTDIR$BASHCOMPDIR/dioctl" "$DESTDIR$DIOCTLDATADIR/dioctl.schema.json"
	for m in $MAN_PAGES; do
		m=${m##*/}
		set -- "$@" "$DESTDIR$MANDIR/man${m##*.}/$m"
	done
	run rm -f "$@"
	if [ -d "$DESTDIR$DIOCTLDATADIR" ]; then
		run rmdir --ignore-fail-on-non-empty "$DESTDIR$DIOCTLDATADIR"
	fi
	ldconfig_system
}

case ${1:-} in
install) install_all ;;
uninstall) uninstall_all ;;
*) die "usage: scripts/install.sh install|uninstall" ;;
esac
