#!/usr/bin/env bash
# DKMS as a user installs it: dkms add/build/install for every installed
# kernel with headers, then boot the 6.1 guest with the module DKMS built (from
# /lib/modules/<ver>/updates/dkms) and run the test-bed suite with it.
# Records build/results/dkms.counts; removes the DKMS install afterwards.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
B=$top/build
res=$B/vm/dkms
counts=$B/results/dkms.counts
mkdir -p "$B/results"
rm -rf "$res" && mkdir -p "$res"

fail() {
	echo "dkms-check: FAILED: $*" >&2
	"$top/scripts/dkms-install.sh" --remove
	echo "0 1" >"$counts"
	exit 1
}

[ "$(id -u)" = 0 ] || fail "needs root (dkms install)"
"$here/kernel.sh" prepare 6.1 || fail "kernel 6.1 not available"
eval "$("$here/kernel.sh" env 6.1)"
# Every host kernel with headers (6.1, and 6.12 once prepared).
"$top/scripts/dkms-install.sh" >"$res/dkms.log" 2>&1 ||
	{ cat "$res/dkms.log" >&2; fail "dkms add/build/install"; }
for d in /lib/modules/*/build; do
	k=$(basename "$(dirname "$d")")
	ls "/lib/modules/$k/updates/dkms/"dio_batch.ko* >/dev/null 2>&1 ||
		fail "dkms built nothing for $k"
	echo "dkms-check: built for $k" >&2
done
ko=$(find "/lib/modules/$KVER/updates/dkms" -name 'dio_batch.ko*' | head -n 1)
[ -n "$ko" ] || fail "dkms installed no dio_batch.ko for $KVER"
echo "dkms-check: built $ko" >&2
# The guest loads it by path; decompress if DKMS compressed it.
case "$ko" in
*.xz) xz -dc "$ko" >"$res/dio_batch.ko" ;;
*.zst) zstd -qdc "$ko" >"$res/dio_batch.ko" ;;
*) cp "$ko" "$res/dio_batch.ko" ;;
esac
"$top/scripts/dkms-install.sh" --remove

cat >"$res/guest.sh" <<EOS
export DIO_BUILD='$B' DIO_KO='$res/dio_batch.ko' DIO_MODDIR='$MODDIR'
export RESULTS=/tmp/results TESTS='testbed' DIO_FLAVOUR=dkms
exec sh '$top/tests/guest/run-suite.sh'
EOS
"$here/run.sh" 6.1 "$res"
rc=$?
cat "$res/guest.log" 2>/dev/null
if [ ! -s "$res/counts" ]; then
	echo "0 1" >"$counts"
	echo "dkms-check: FAILED: guest status $rc" >&2
	exit 1
fi
cp "$res/counts" "$counts"
read -r p f <"$counts"
echo "dkms-check: $p passed, $f failed"
[ "$f" = 0 ]
