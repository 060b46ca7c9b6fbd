#!/usr/bin/env bash
# make bench-icount: guest instructions and TCG translation blocks executed
# per I/O, of the whole guest and by kernel function, for io_bench's
# engines in one QEMU guest on Debian 12's kernel (6.1, or another:
# BENCH_KERNEL), counted by a TCG plugin (bench/icount/icount.c), not sampled or timed.  Blocks executed
# follow what a guest's CPU time costs under TCG (what make bench-guest
# measures); instructions follow what it would cost on hardware.
#   bench/icount.sh
# Environment (all optional):
#   ICOUNT_SRC      checkout whose module/, uapi/ and user space are
#                   measured (default: this one)
#   ICOUNT_N, ICOUNT_N0  I/Os counted (20000), and of the baseline run
#                   subtracted from it (2000), as bench/counts.sh
#   ICOUNT_DEVS     nvme sd (NVMe namespace 1: 512+8, PI type 1; the
#                   scsi_debug disk without PI)
#   ICOUNT_WORKLOADS  randread randwrite
#   ICOUNT_ENGINES  dio_batch dio+fixed io_uring libaio (the last is the
#                   reference of the ratios; io_uring+pi or io_uring if
#                   there); io_uring+pi needs a 6.14+ kernel and nvme
#   ICOUNT_REF      the engine the ratios are relative to (as above)
#   ICOUNT_QDS      queue depths, each workload at each (32; e.g. "1 32")
#   BENCH_KERNEL    kernel flavour of tests/vm/kernel.sh (6.1; make
#                   bench-icount KERNEL=7.3)
#   ICOUNT_TOP      functions listed per workload (25)
#   ICOUNT_OUT      where to save the report (bench/results/icount-DATE.txt)
#   BENCH_CMDLINE   more guest kernel parameters ("tsc=reliable
#                   clocksource=tsc", as make bench-guest)
#   BENCH_SDEBUG    scsi_debug options (dev_size_mb=64 dif=0 dix=0 delay=0)
# The plugin needs QEMU's qemu-plugin.h of the installed QEMU: fetched once
# from Debian's source package into $DIO_CACHE/qemu/VERSION (root, a
# deb-src entry, as scripts/fio-src.sh).  About 5 minutes.
# Exit status: 0 when every run completed with all I/O verified.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
src=$(cd "${ICOUNT_SRC:-$top}" && pwd) || { echo "icount: no such ICOUNT_SRC" >&2; exit 1; }
res=$top/build/bench/icount
: "${ICOUNT_N:=20000}" "${ICOUNT_N0:=2000}" "${ICOUNT_DEVS:=nvme sd}" "${ICOUNT_WORKLOADS:=randread randwrite}"
: "${ICOUNT_ENGINES:=dio_batch dio+fixed io_uring libaio}" "${ICOUNT_TOP:=25}"
: "${ICOUNT_QDS:=32}" "${ICOUNT_REF:=}"
flavour=${BENCH_KERNEL:-6.1}
: "${BENCH_CMDLINE=tsc=reliable clocksource=tsc}" "${BENCH_SDEBUG:=dev_size_mb=64 dif=0 dix=0 delay=0}"
export VM_TIMEOUT=${VM_TIMEOUT:-1800} VM_CMDLINE=$BENCH_CMDLINE
CACHE=${DIO_CACHE:-/var/cache/dio_batch}/qemu

# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"

{ [ -f "$src/module/Makefile" ] && [ -x "$src/tests/vm/kernel.sh" ]; } || die "$src is not a dio_batch checkout"

# qemu-plugin.h of the QEMU that runs the guest.
ver=$(dpkg-query -W -f='${source:Version}' qemu-system-x86 2>/dev/null) || die "qemu-system-x86 is not installed (make deps)"
hdr=$CACHE/$ver
if [ ! -f "$hdr/qemu-plugin.h" ]; then
	[ "$(id -u)" = 0 ] || die "QEMU $ver's qemu-plugin.h is not in $CACHE: run as root once"
	# shellcheck source=scripts/debian-source.sh
	. "$top/scripts/debian-source.sh"
	debian_source_enable qemu "$ver" || die "no deb-src entry for qemu $ver"
	rm -rf "$hdr.tmp" && mkdir -p "$hdr.tmp"
	echo "icount: apt-get source qemu=$ver (for qemu-plugin.h)" >&2
	(cd "$hdr.tmp" && apt-get source -q --download-only "qemu=$ver" >&2) || die "apt-get source qemu=$ver failed"
	orig=
	for f in "$hdr.tmp"/qemu_*.orig.tar.*; do
		[ -f "$f" ] && orig=$f && break
	done
	[ -n "$orig" ] || die "no orig tarball of qemu $ver"
	tar -xf "$orig" -C "$hdr.tmp" --wildcards '*/include/qemu/qemu-plugin.h' || die "no qemu-plugin.h in $orig"
	find "$hdr.tmp" -name qemu-plugin.h -exec cp {} "$hdr.tmp/qemu-plugin.h" \; -quit
	[ -f "$hdr.tmp/qemu-plugin.h" ] || die "no qemu-plugin.h in $orig"
	rm -rf "$hdr" && mkdir -p "$hdr" && mv "$hdr.tmp/qemu-plugin.h" "$hdr/" && rm -rf "$hdr.tmp"
fi

commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?')
[ -n "$(git -C "$src" status --porcelain -- module uapi libdioctl bench/io_bench.c 2>/dev/null | head -n 1)" ] && commit="$commit+changes"
echo "icount: building libdioctl, io_bench and kmodctl in $src" >&2
make -C "$src" --no-print-directory lib build/bench/io_bench build/tests/kmodctl >&2 ||
	die "user-space build failed"
bench_kernel "$flavour"
rm -rf "$res" && mkdir -p "$res/bin"
echo "icount: building the plugin and dio_batch ($src/module, $commit) for $KVER" >&2
cc -O2 -Wall -shared -fPIC -I"$hdr" -o "$res/libicount.so" "$here/icount/icount.c" -lpthread ||
	die "the plugin does not build"
cc -O2 -Wall -o "$res/bin/mark" "$here/icount/mark.c" || die "mark does not build"
bench_module "$flavour" "$res" "$src"
cp "$src/build/bench/io_bench" "$src/build/tests/kmodctl" "$res/ko/dio_batch.ko" "$res/bin/" ||
	die "cannot copy the binaries"
cp "$here/guest-devices.sh" "$res/"

{
	printf "N='%s' N0='%s' DEVS='%s' WORKLOADS='%s' ENGINES='%s' SDEBUG='%s'\n" \
		"$ICOUNT_N" "$ICOUNT_N0" "$ICOUNT_DEVS" "$ICOUNT_WORKLOADS" "$ICOUNT_ENGINES" "$BENCH_SDEBUG"
	printf "QDS='%s'\nexport DIO_MODDIR='%s'\n" "$ICOUNT_QDS" "$MODDIR"
	cat <<'EOS'
B=/tmp/results
. $B/guest-devices.sh
$B/bin/kmodctl insert $B/bin/dio_batch.ko || exit 1
$B/bin/kmodctl probe sd_mod && $B/bin/kmodctl probe scsi_debug "$SDEBUG" && $B/bin/kmodctl probe nvme || exit 1
sd=$(wait_dev scsi_debug_disk) && ns1=$(wait_dev nvme_ns 1) || { echo "icount: devices missing"; exit 1; }
cp $B/bin/io_bench $B/bin/mark /tmp/ || exit 1
cat /proc/kallsyms > $B/kallsyms
echo "GUEST $(uname -r), $(nproc) CPUs" > $B/runs
echo "DEV sd $sd scsi_debug $SDEBUG" >> $B/runs
echo "DEV nvme $ns1 NVMe nsid 1, integrity $(cat /sys/block/${ns1#/dev/}/integrity/format)" >> $B/runs
sleep 3
i=0 rc=0
for dev in $DEVS; do
	if [ $dev = sd ]; then path=$sd; else path=$ns1; fi
	for qd in $QDS; do
	for wl0 in $WORKLOADS; do
		if [ $wl0 = randread ]; then mix=100; else mix=0; fi
		# The workload's name carries its queue depth unless that is 32 alone.
		if [ "$QDS" = 32 ]; then wl=$wl0; else wl=$wl0-qd$qd; fi
		for e in $ENGINES; do
			# The caller's PI needs a device with PI: not the scsi_debug disk.
			case $dev:$e in sd:*+pi) continue ;; esac
			io() { /tmp/io_bench -r 1 -C -q $qd -b 4096 -t 3600 -m $mix -e $e -n "$1" $path; }
			io 1000 >/dev/null 2>&1		# warm
			# Three dumps: the end of the N0 window starts the other.
			/tmp/mark || exit 1
			echo "DUMP $i $dev:$wl:$e:0:start $N0" >> $B/runs
			for k in 0 1; do
				if [ $k = 0 ]; then n=$N0; else n=$((N0 + N)); fi
				io $n > $B/out.$dev.$wl.$e.$k 2>&1 || { rc=1; echo "icount: $dev $wl $e -n $n failed"; cat $B/out.$dev.$wl.$e.$k; }
				/tmp/mark || exit 1
				i=$((i + 1))
				echo "DUMP $i $dev:$wl:$e:$k:end $n" >> $B/runs
				[ $k = 0 ] && echo "DUMP $i $dev:$wl:$e:1:start $((N0 + N))" >> $B/runs
			done
			i=$((i + 1))
			echo "icount: $dev $wl $e done"
		done
	done
	done
done
exit $rc
EOS
} >"$res/guest.sh"

echo "icount: booting $KVER (TCG, the plugin loaded); the guest's progress follows" >&2
VM_QEMU_ARGS="-plugin $res/libicount.so,out=$res/icount" bench_boot icount "$flavour" "$res"
rc=$?

out=${ICOUNT_OUT:-$top/bench/results/icount-$(date +%Y%m%d-%H%M%S).txt}
mkdir -p "$(dirname "$out")"
{
	echo "dio_batch guest instructions and TCG blocks per I/O (bench/icount.sh), $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "module, libdioctl and io_bench of commit $commit; guest: QEMU TCG, $KVER, 2 CPUs"
	echo "io_bench -r 1 -C -q ${ICOUNT_QDS// /|} -b 4096 -m 100|0 -e ENGINE -n N0|N0+N, N0 = $ICOUNT_N0, N = $ICOUNT_N"
	echo
	python3 "$here/icount-report.py" "$res" "$ICOUNT_TOP" ${ICOUNT_REF:+"$ICOUNT_REF"}
} >"$out" || rc=1
cat "$out"
echo
echo "icount: saved to $out (status $rc)"
[ "$rc" = 0 ]
