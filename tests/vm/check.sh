#!/usr/bin/env bash
# The guest suite on one kernel: prepare the kernel, build the module for
# it, boot, run tests/guest/run-suite.sh inside, and record the counts in
# build/results/FLAVOUR.counts ("passed failed").  Failures of the set-up
# itself (no kernel, module does not build, guest dies or times out, kernel
# log of the console has reports) count as failed tests: never as skips.
#   check.sh FLAVOUR        (TESTS="context io" to run a subset)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
flavour=$1
B=$top/build
# A subset run gets its own directory, so runs can go side by side.
tag=$flavour${TESTS:+-$(echo "$TESTS" | tr ' ' '_')}
res=$B/vm/$tag
counts=$B/results/$tag.counts
mkdir -p "$B/results"
bad='BUG:|WARNING:|Oops|KASAN|refcount_t|list_add corruption|list_del corruption|possible circular locking|sleeping function called from invalid context|general protection fault|Kernel panic|UBSAN'

fail_setup() {
	echo "check[$flavour]: FAILED: $*" >&2
	echo "0 1" >"$counts"
	exit 1
}

echo "check[$flavour]: preparing kernel" >&2
"$here/kernel.sh" prepare "$flavour" || fail_setup "kernel $flavour could not be prepared"
eval "$("$here/kernel.sh" env "$flavour")" || fail_setup "kernel.sh env $flavour"
rm -rf "$res" && mkdir -p "$res"
"$here/kernel.sh" build-module "$flavour" "$res/ko" >"$res/build.log" 2>&1 ||
	{ cat "$res/build.log" >&2; fail_setup "module does not build for $KVER"; }
if grep -iE 'warning' "$res/build.log" >&2; then
	fail_setup "module build for $KVER has warnings"
fi

cat >"$res/guest.sh" <<EOS
export DIO_BUILD='$B' DIO_KO='$res/ko/dio_batch.ko' DIO_MODDIR='$MODDIR'
export RESULTS=/tmp/results TESTS='${TESTS:-}' DIO_FLAVOUR='$flavour'
echo "guest: \$(uname -r)"
exec sh '$top/tests/guest/run-suite.sh'
EOS
echo "check[$flavour]: booting $KVER" >&2
start=$(date +%s)
"$here/run.sh" "$flavour" "$res"
rc=$?
echo "check[$flavour]: guest ran $(( $(date +%s) - start ))s, status $rc" >&2
[ -f "$res/guest.log" ] && cat "$res/guest.log"

if [ -s "$res/counts" ]; then
	read -r p f <"$res/counts"
else
	p=0 f=0
fi
if [ ! -s "$res/counts" ] || [ "$rc" -ge 124 ]; then
	echo "check[$flavour]: FAILED: guest did not finish (status $rc); console:" >&2
	tail -n 80 "$res/console.log" >&2
	f=$((f + 1))
fi
if grep -E "$bad" "$res/console.log" >/dev/null; then
	echo "check[$flavour]: FAILED: kernel reports on the console:" >&2
	grep -E -B2 -A30 "$bad" "$res/console.log" | head -n 120 >&2
	f=$((f + 1))
fi
echo "$p $f" >"$counts"
echo "check[$flavour]: $p passed, $f failed"
[ "$f" = 0 ]
