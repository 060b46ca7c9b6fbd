#!/usr/bin/env bash
# DKMS as a distribution uses it: the source is added with `dkms add`, and
# `dkms autoinstall -k KVER` (what the kernel packages' postinst hook runs
# when a kernel arrives) builds and installs it for every host kernel with
# headers.  Then the guest of the host's own kernel (Debian 12: 6.1, and
# 6.12 when bookworm-backports' kernel is prepared; Debian 13: 6.12; the
# other kernels live in chroots, where the package checks run DKMS:
# tests/vm/deb-check.sh) boots with the module DKMS built (from
# /lib/modules/<ver>/updates/dkms) and runs the test-bed suite with it.
# Records build/results/dkms.counts; removes the DKMS install afterwards.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
B=$top/build
out=$B/vm/dkms
counts=$B/results/dkms.counts
mkdir -p "$B/results"
rm -f "$B/results/dkms.not-run"
rm -rf "$out" && mkdir -p "$out"

fail() {
	echo "dkms-check: FAILED: $*" >&2
	"$top/scripts/dkms-install.sh" --remove
	echo "0 1" >"$counts"
	exit 1
}

[ "$(id -u)" = 0 ] || fail "needs root (dkms install)"
# shellcheck source=scripts/debian-source.sh
. "$top/scripts/debian-source.sh"
own=$(host_kernel) || fail "$(host_suite) ships none of the project's kernels as its own"
"$here/kernel.sh" prepare "$own" || fail "kernel $own not available"
flavours=$own
if [ "$own" = 6.1 ]; then
	"$here/kernel.sh" env 6.12 >/dev/null 2>&1 && flavours="6.1 6.12"
else
	echo "dkms: 6.1 is not this host's kernel; DKMS builds for it in the bookworm package check (deb)" \
		>"$B/results/dkms.not-run"
fi

"$top/scripts/dkms-install.sh" --add >"$out/dkms.log" 2>&1 ||
	{ cat "$out/dkms.log" >&2; fail "dkms add"; }
for d in /lib/modules/*/build; do
	[ -e "$d/Makefile" ] || continue
	k=$(basename "$(dirname "$d")")
	dkms autoinstall -k "$k" >>"$out/dkms.log" 2>&1 ||
		{ cat "$out/dkms.log" >&2; fail "dkms autoinstall -k $k"; }
	ls "/lib/modules/$k/updates/dkms/"dio_batch.ko* >/dev/null 2>&1 ||
		{ cat "$out/dkms.log" >&2; fail "dkms autoinstall built nothing for $k"; }
	echo "dkms-check: autoinstall built for $k" >&2
done

# The guests load the module by path; decompress if DKMS compressed it.
for fl in $flavours; do
	eval "$("$here/kernel.sh" env "$fl")"
	ko=$(find "/lib/modules/$KVER/updates/dkms" -name 'dio_batch.ko*' | head -n 1)
	[ -n "$ko" ] || fail "dkms installed no dio_batch.ko for $KVER"
	mkdir -p "$out/$fl"
	case "$ko" in
	*.xz) xz -dc "$ko" >"$out/$fl/dio_batch.ko" ;;
	*.zst) zstd -qdc "$ko" >"$out/$fl/dio_batch.ko" ;;
	*) cp "$ko" "$out/$fl/dio_batch.ko" ;;
	esac
	echo "dkms-check: $fl: $ko" >&2
done
"$top/scripts/dkms-install.sh" --remove

tp=0 tf=0
for fl in $flavours; do
	eval "$("$here/kernel.sh" env "$fl")"
	res=$out/$fl
	cat >"$res/guest.sh" <<EOS
export DIO_BUILD='$B' DIO_KO='$res/dio_batch.ko' DIO_MODDIR='$MODDIR'
export RESULTS=/tmp/results TESTS='testbed' DIO_FLAVOUR=dkms
exec sh '$top/tests/guest/run-suite.sh'
EOS
	"$here/run.sh" "$fl" "$res"
	rc=$?
	sed "s/^/$fl: /" "$res/guest.log" 2>/dev/null
	if [ -s "$res/counts" ]; then
		read -r p f <"$res/counts"
	else
		echo "dkms-check: FAILED: $fl guest status $rc" >&2
		p=0 f=1
	fi
	tp=$((tp + p)) tf=$((tf + f))
done
echo "$tp $tf" >"$counts"
echo "dkms-check: $tp passed, $tf failed"
[ "$tf" = 0 ]
