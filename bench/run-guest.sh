#!/usr/bin/env bash
# make bench-guest: io_bench in one QEMU guest on Debian 12's kernel (6.1,
# or another, BENCH_KERNEL), on a scsi_debug disk without PI and on NVMe
# namespace 1 (512+8, PI type 1).  On NVMe dio+pi runs too, and on a guest
# kernel of 6.14 or later io_uring+pi, its peer (io_bench -U).
# Prints the tables and keeps them in build/bench/results-DATE.txt.
#   bench/run-guest.sh
# Environment (all optional):
#   BENCH_ARGS     more io_bench options for both devices (e.g. "-t 3 -j 2")
#   BENCH_SDEBUG   scsi_debug options ("dev_size_mb=64 dif=0 dix=0 delay=0":
#                  a RAM disk that completes in the submitting thread)
#   BENCH_DIAG_ARGS  when set, a second io_bench run on both devices with
#                  these options (e.g. "-C -T -r 1 -t 2": time the calls)
#   BENCH_KERNEL   kernel flavour of tests/vm/kernel.sh (6.1; make
#                  bench-guest KERNEL=7.3)
#   BENCH_DEVS     sd nvme (the scsi_debug disk; NVMe namespace 1)
#   BENCH_QDS      queue depths, a run of each device at each (empty:
#                  io_bench's own, 32; e.g. "1 32")
#   BENCH_CMDLINE  more guest kernel parameters ("tsc=reliable
#                  clocksource=tsc": see bench/README.md; set it empty
#                  for the HPET the guest picks on its own)
#   VM_TIMEOUT     seconds before the guest is killed (600)
# Not part of make check: numbers under TCG are indicative only (docs/testing.md).
# Exit status: 0 when both runs completed with all I/O verified.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
B=$top/build
res=$B/bench/vm
flavour=${BENCH_KERNEL:-6.1}
: "${BENCH_ARGS:=}" "${BENCH_DIAG_ARGS:=}" "${BENCH_SDEBUG:=dev_size_mb=64 dif=0 dix=0 delay=0}"
: "${BENCH_DEVS:=sd nvme}" "${BENCH_QDS:=}"
: "${BENCH_CMDLINE=tsc=reliable clocksource=tsc}"
export VM_TIMEOUT=${VM_TIMEOUT:-600} VM_CMDLINE=$BENCH_CMDLINE

lib_prog=bench
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"

bench_prepare "$flavour" "$res" lib build/bench/io_bench

# The guest's script (POSIX sh: /bin/sh is dash).
{
	printf "B='%s'\nKO='%s'\nexport DIO_MODDIR='%s'\n" "$B" "$res/ko/dio_batch.ko" "$MODDIR"
	printf "ARGS='%s'\nDIAG='%s'\nSDEBUG='%s'\n" "$BENCH_ARGS" "$BENCH_DIAG_ARGS" "$BENCH_SDEBUG"
	printf "DEVS='%s'\nQDS='%s'\n" "$BENCH_DEVS" "$BENCH_QDS"
	cat "$here/guest-devices.sh"
	cat <<'EOS'
kmod() { "$B/tests/kmodctl" "$@"; }
rc=0
kmod insert "$KO" || { echo "bench: cannot load dio_batch"; exit 1; }
kmod probe sd_mod && kmod probe scsi_debug "$SDEBUG" && kmod probe nvme ||
	{ echo "bench: cannot load sd_mod, scsi_debug or nvme"; exit 1; }
sd=$(wait_dev scsi_debug_disk) || { echo "bench: no scsi_debug disk"; rc=1; }
ns1=$(wait_dev nvme_ns 1) || { echo "bench: no NVMe namespace 1"; rc=1; }
echo "guest: $(uname -r), $(nproc) CPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo "scsi_debug: $SDEBUG"
# Upstream's user PI through io_uring: Linux 6.14 and later.
rel=$(uname -r)
maj=${rel%%.*} min=${rel#*.}
min=${min%%[!0-9]*}
uring_pi=
if [ "$maj" -gt 6 ] || { [ "$maj" = 6 ] && [ "$min" -ge 14 ]; }; then
	uring_pi=-U
fi
devs=
for d in $DEVS; do
	case $d in
	sd) devs="$devs $sd" ;;
	nvme) devs="$devs $ns1" ;;
	*) echo "bench: unknown device '$d' in BENCH_DEVS"; rc=1 ;;
	esac
done
bench() { # DEVICE OPTIONS...
	dev=$1
	shift
	# dio+pi (and io_uring+pi) as well: the namespace has PI
	[ "$dev" = "$ns1" ] && set -- "$@" -P $uring_pi
	set -- "$@" -F				# dio+fixed: registered buffers
	echo
	echo "\$ io_bench $* $dev"
	"$B/bench/io_bench" "$@" "$dev" 2>&1 || rc=1
}
runs() { # OPTIONS...: each device at each queue depth
	for q in ${QDS:-default}; do
		for d in $devs; do
			if [ "$q" = default ]; then
				bench "$d" "$@"
			else
				bench "$d" "$@" -q "$q"
			fi
		done
	done
}
# shellcheck disable=SC2086
runs $ARGS
if [ -n "$DIAG" ]; then
	echo
	echo "=== diagnostic runs: $DIAG"
	# shellcheck disable=SC2086
	runs $DIAG
fi
if dmesg | grep -E 'BUG:|WARNING:|Oops|KASAN|refcount_t|list_add corruption|list_del corruption|general protection fault'; then
	echo "bench: the kernel log has reports (above)"
	rc=1
fi
exit $rc
EOS
} >"$res/guest.sh"

echo "bench: booting $KVER (TCG; about 2 minutes, more with BENCH_DIAG_ARGS); the guest's output follows" >&2
bench_boot bench "$flavour" "$res"
rc=$?

out=$B/bench/results-$(date +%Y%m%d-%H%M%S).txt
{
	bench_header "dio_batch io_bench" "$KVER"
	echo "Under TCG wall-clock figures are distorted: compare ratios, CPU per I/O above all."
	echo
	cat "$res/guest.log"
} >"$out"
echo
echo "bench: saved to $out (status $rc)"
[ $rc = 0 ]
