#!/usr/bin/env bash
# A checkout works wherever it is cloned: the tracked (and new, not
# ignored) files (scripts/tree-files.sh) are copied to a path under /var/tmp with spaces in it,
# whose parent directory is read only (a read-only bind mount, in a private
# mount namespace: root would write through a mode of 0555), and there
# `make userspace`, `make demo` and `make module` (for the release's own
# kernel: 6.1 on Debian 12, 6.12 on Debian 13) run as a user would run
# them (the demo boots that kernel's guest).  The checks the rest of
# make check runs from the checkout wherever it is (CI clones into /tmp).
# Records build/results/anywhere.counts ("passed failed").
#   anywhere-check.sh
# The check functions below run through check(): shellcheck cannot see it.
# shellcheck disable=SC2317
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
B=$top/build
counts=$B/results/anywhere.counts
mkdir -p "$B/results"

if [ -z "${ANYWHERE_NS:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "anywhere-check: needs root" >&2; echo "0 1" >"$counts"; exit 1; }
	ANYWHERE_NS=1 exec unshare -m --propagation private "$0" "$@"
fi

# shellcheck source=tests/vm/tap.sh
. "$here/tap.sh"

work=$(mktemp -d /var/tmp/dio-anywhere.XXXXXX)
parent="$work/read-only parent"
co="$parent/dio batch, checkout"
trap 'umount -R "$parent" 2>/dev/null; umount "$co" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$co"
(cd "$top" && scripts/tree-files.sh | xargs -0 cp --parents -t "$co")
# The checkout a mount of its own, then the parent (with it) bound again
# and made read only: the read-only flag is the parent mount's alone.
if ! { mount --bind "$co" "$co" && mount --rbind "$parent" "$parent" &&
	mount -o remount,bind,ro "$parent"; }; then
	not_ok "set-up: read-only bind mount of $parent"
	echo "0 1" >"$counts"
	exit 1
fi

parent_is_ro() { ! touch "$parent/x" 2>/dev/null; }
apt_sources() { find /etc/apt -name '*.list' -o -name '*.sources' | sort | xargs -r sha256sum; }
# make demo builds what the demo runs and nothing else: not the fio engine
# (whose source it would fetch with a deb-src entry), the tests or the
# benchmarks; and it writes no apt source.
demo_built_only_its_own() {
	local f ok=0
	for f in build/fio build/bench build/tests/guest build/tests/unit build/examples; do
		[ ! -e "$co/$f" ] || { echo "make demo built $f"; ok=1; }
	done
	[ "$(apt_sources)" = "$sources" ] || { echo "make demo changed apt's sources"; ok=1; }
	return $ok
}
check "the parent directory is read only" parent_is_ro
sources=$(apt_sources)
check "make demo in '$co'" make -C "$co" --no-print-directory demo
check "make demo built only the demo's programs, and left apt's sources alone" demo_built_only_its_own
check "make userspace in '$co'" make -C "$co" --no-print-directory userspace
# make module, whose Kbuild cannot take this path itself (scripts/build-module.sh),
# for the kernel the host's release ships (the others are in chroots).
# shellcheck source=scripts/debian-source.sh
. "$top/scripts/debian-source.sh"
own=$(host_kernel) || own="(none: this release has no kernel of the project's)"
module_built() {
	local env
	env=$("$here/kernel.sh" env "$own") || return 1
	eval "$env"
	make -C "$co" --no-print-directory module KDIR="$KDIR" || return 1
	modinfo -F vermagic "$co/module/dio_batch.ko" | grep -q "^$KVER " ||
		{ echo "module/dio_batch.ko is not a module for $KVER"; return 1; }
}
check "make module in '$co' for $own" module_built
echo "$pass $fail" >"$counts"
echo "anywhere-check: $pass passed, $fail failed (${SECONDS}s)"
[ "$fail" = 0 ]
