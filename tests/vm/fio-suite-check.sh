#!/usr/bin/env bash
# make check-fio-suite: tests/guest/t_fio with the fio of another Debian
# suite, on the 7.3 kernel.  The engine's ABI is fio's internal structs,
# so each fio needs an engine built against its own source: here SUITE's
# fio (FIO_SUITE: trixie, fio 3.39; forky, fio 3.41) in its root (a copy
# of the 7.3 chroot with that fio installed, scripts/fio-src.sh --suite),
# the engine built in that root (make fio-engine-suite), the guest booted
# on that root (VM_ROOT) and t_fio told where the engine is
# (DIO_FIO_ENGINE).  Counts in build/results/7.3-SUITE-fio.counts.
#   tests/vm/fio-suite-check.sh SUITE
# Where the mirror has neither SUITE's fio source package nor its upstream
# tarball (trixie's fio 3.39 here), FIO_SRC names upstream's source of that
# version (a git repository of fio, a release tarball or a tree): see
# scripts/fio-src.sh.  Not part of make check for that reason.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
suite=${1:?usage: tests/vm/fio-suite-check.sh SUITE}
B=$top/build
counts=$B/results/7.3-$suite-fio.counts

fail_setup() {
	echo "fio-suite-check[$suite]: FAILED: $*" >&2
	mkdir -p "$B/results"
	echo "0 1" >"$counts"
	exit 1
}

make -C "$top" --no-print-directory fio-engine-suite FIO_SUITE="$suite" ||
	fail_setup "the engine for $suite's fio did not build (FIO_SRC=${FIO_SRC:-})"
root=$("$top/scripts/fio-src.sh" --suite "$suite" --dir)
engine=$B/fio-$suite/fio/fio-dio_batch.so
[ -f "$engine" ] || fail_setup "no $engine"
echo "fio-suite-check[$suite]: fio $(dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Version}' fio), engine built against $(cat "$B/fio-$suite/fio/fio-src")" >&2
grep -s . "$root$(cat "$B/fio-$suite/fio/fio-src")/.dio_batch-configured" | sed 's/^/fio-suite-check: source: /' >&2
VM_ROOT=$root VM_ROOT_NAME=$suite DIO_FIO_ENGINE=$engine TESTS=fio "$here/check.sh" 7.3
