#!/usr/bin/env bash
# make bench-fio: the same fio jobs (bench/fio/rand.fio, the workloads of
# bench/fio/workloads: 4 KiB random read and write at QD 1/32/128 with
# batches 1/8/32, 128 KiB sequential) through ioengine=io_uring, libaio,
# psync and the dio_batch engine (build/fio/fio-dio_batch.so), in one QEMU
# guest, on null_blk (memory_backed=0 and =1), scsi_debug and NVMe
# namespace 1 (512+8, PI type 1).  Prints a table of IOPS, fio's clat p50
# and p99, CPU per I/O (fio's usr+sys over the I/Os), and IOPS and CPU per
# I/O relative to io_uring; keeps it in build/bench/fio-DATE.txt.
#   bench/run-fio.sh
# Environment (all optional):
#   FIO_RUNTIME    seconds per job (2)
#   FIO_DEVICES    which of "nullb0 nullb1 sd nvme" (all)
#   FIO_ENGINES    which of "io_uring libaio psync dio_batch" (all)
#   BENCH_SDEBUG   scsi_debug options ("dev_size_mb=256 dif=0 dix=0 delay=0")
#   BENCH_KERNEL   kernel flavour of tests/vm/kernel.sh (6.1)
#   VM_TIMEOUT     seconds before the guest is killed (3000)
# Not part of make check: numbers under TCG are indicative only.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
B=$top/build
res=$B/bench/vm-fio
flavour=${BENCH_KERNEL:-6.1}
: "${FIO_RUNTIME:=2}" "${FIO_DEVICES:=nullb0 nullb1 sd nvme}"
: "${FIO_ENGINES:=io_uring libaio psync dio_batch}"
: "${BENCH_SDEBUG:=dev_size_mb=256 dif=0 dix=0 delay=0}"
export VM_TIMEOUT=${VM_TIMEOUT:-3000}

lib_prog=bench-fio
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"

command -v fio >/dev/null || die "fio is not installed (make deps)"
bench_prepare "$flavour" "$res" fio-engine

# The guest's script (POSIX sh: /bin/sh is dash).  One line per run:
# "ROW device engine rw bs qd batch" and fio's JSON reduced by jq.
{
	printf "B='%s'\nKO='%s'\nexport DIO_MODDIR='%s'\n" "$B" "$res/ko/dio_batch.ko" "$MODDIR"
	printf "JOB='%s'\nWL='%s'\nRUNTIME='%s'\nDEVICES='%s'\nENGINES='%s'\nSDEBUG='%s'\n" \
		"$here/fio/rand.fio" "$here/fio/workloads" "$FIO_RUNTIME" "$FIO_DEVICES" \
		"$FIO_ENGINES" "$BENCH_SDEBUG"
	cat "$here/guest-devices.sh"
	cat <<'EOS'
kmod() { "$B/tests/kmodctl" "$@"; }
wait_blk() {
	i=0
	while [ $i -lt 100 ]; do
		[ -b "$1" ] && return 0
		sleep 0.2; i=$((i + 1))
	done
	return 1
}
rc=0
kmod insert "$KO" || { echo "bench-fio: cannot load dio_batch"; exit 1; }
echo "guest: $(uname -r), $(nproc) CPUs, $(fio --version)"
run_dev() { # NAME DEVICE
	name=$1 dev=$2
	# Every block of the region written once, with valid PI: reads of
	# blocks never written fail the PI check on QEMU's NVMe.
	fio --name=fill --filename="$dev" --ioengine=libaio --direct=1 --rw=write --bs=1m \
		--size=64m --iodepth=4 >/tmp/fill-$$.log 2>&1 ||
		{ echo "bench-fio: FAILED: filling $name:"; head -n 20 /tmp/fill-$$.log; }
	for eng in $ENGINES; do
		case $eng in
		dio_batch) ioe="external:$B/fio/fio-dio_batch.so" ;;
		*) ioe=$eng ;;
		esac
		grep -v '^#' "$WL" | while read -r rw bs qd batch; do
			[ -n "$rw" ] || continue
			if [ "$eng" = psync ]; then
				[ "$qd" = 1 ] || [ "$bs" = 128k ] || continue
				qd=1 batch=1
			fi
			out=/tmp/fio-$$.json
			if ! IOENGINE=$ioe DEV=$dev RW=$rw BS=$bs QD=$qd BATCH=$batch RUNTIME=$RUNTIME \
				SIZE=64m fio --output-format=json --output=$out "$JOB" >/tmp/fio-$$.err 2>&1; then
				echo "bench-fio: FAILED: $name $eng $rw $bs qd $qd batch $batch:"
				head -n 20 /tmp/fio-$$.err
				echo "ROW $name $eng $rw $bs $qd $batch FAILED"
				continue
			fi
			d=read
			case $rw in *write) d=write ;; esac
			v=$(sed -n '/^{/,$p' $out | jq -r --arg d $d '.jobs[0] as $j | $j[$d] as $x |
				[$x.iops, ($x.clat_ns.percentile["50.000000"] // 0), ($x.clat_ns.percentile["99.000000"] // 0),
				 $j.usr_cpu, $j.sys_cpu, $x.total_ios, $j.job_runtime, $j.error] | @tsv')
			echo "ROW $name $eng $rw $bs $qd $batch $v"
		done
	done
}
for name in $DEVICES; do
	case $name in
	nullb0|nullb1)
		mb=${name#nullb}
		kmod remove null_blk 2>/dev/null
		kmod probe null_blk "nr_devices=1 gb=1 memory_backed=$mb" && wait_blk /dev/nullb0 ||
			{ echo "bench-fio: no null_blk (memory_backed=$mb)"; rc=1; continue; }
		run_dev "null_blk-mb$mb" /dev/nullb0
		kmod remove null_blk
		;;
	sd)
		kmod probe sd_mod && kmod probe scsi_debug "$SDEBUG" ||
			{ echo "bench-fio: no scsi_debug"; rc=1; continue; }
		i=0; d=
		while [ -z "$d" ] && [ $i -lt 100 ]; do d=$(scsi_debug_disk | head -n 1); sleep 0.2; i=$((i + 1)); done
		[ -n "$d" ] && wait_blk "$d" || { echo "bench-fio: no scsi_debug disk"; rc=1; continue; }
		run_dev scsi_debug "$d"
		;;
	nvme)
		kmod probe nvme || { echo "bench-fio: no nvme"; rc=1; continue; }
		i=0; d=
		while [ -z "$d" ] && [ $i -lt 100 ]; do d=$(nvme_ns 1); sleep 0.2; i=$((i + 1)); done
		[ -n "$d" ] && wait_blk "$d" || { echo "bench-fio: no NVMe namespace 1"; rc=1; continue; }
		run_dev nvme-pi "$d"
		;;
	esac
done
if dmesg | grep -E 'BUG:|WARNING:|Oops|KASAN|refcount_t|list_add corruption|list_del corruption|general protection fault'; then
	echo "bench-fio: the kernel log has reports (above)"
	rc=1
fi
exit $rc
EOS
} >"$res/guest.sh"

echo "bench-fio: booting $KVER (TCG); $(wc -w <<<"$FIO_DEVICES") devices, $(wc -w <<<"$FIO_ENGINES") engines, ${FIO_RUNTIME}s per job" >&2
bench_boot bench-fio "$flavour" "$res" '^ROW ' >&2
rc=$?

out=$B/bench/fio-$(date +%Y%m%d-%H%M%S).txt
{
	bench_header "dio_batch fio engines" "$KVER, $(fio --version)"
	echo "command: FIO_RUNTIME=$FIO_RUNTIME FIO_DEVICES='$FIO_DEVICES' FIO_ENGINES='$FIO_ENGINES' make bench-fio"
	echo "Under TCG wall-clock figures are distorted: compare ratios, CPU per I/O above all."
	echo
	python3 - "$res/guest.log" <<'EOPY'
import sys
rows = []
for line in open(sys.argv[1], errors='replace'):
    f = line.split()
    if not f or f[0] != 'ROW':
        continue
    dev, eng, rw, bs, qd, batch = f[1:7]
    if f[7] == 'FAILED':
        rows.append((dev, eng, rw, bs, qd, batch, None))
        continue
    iops, p50, p99, usr, sys_, ios, rt, err = map(float, f[7:15])
    cpu = (usr + sys_) / 100.0 * rt * 1000.0 / ios if ios else 0.0   # us per I/O
    rows.append((dev, eng, rw, bs, qd, batch, (iops, p50 / 1000, p99 / 1000, cpu, int(err))))
base = {(r[0], r[2], r[3], r[4], r[5]): r[6] for r in rows if r[1] == 'io_uring' and r[6]}
hdr = '%-15s %-9s %-9s %5s %4s %5s %9s %9s %9s %8s %7s %7s' % (
    'device', 'engine', 'rw', 'bs', 'qd', 'batch', 'IOPS', 'p50 us', 'p99 us', 'cpu/io', 'xIOPS', 'xCPU')
print(hdr)
print('-' * len(hdr))
last = None
for dev, eng, rw, bs, qd, batch, v in rows:
    if last and last != dev:
        print()
    last = dev
    if v is None:
        print('%-15s %-9s %-9s %5s %4s %5s %9s' % (dev, eng, rw, bs, qd, batch, 'FAILED'))
        continue
    b = base.get((dev, rw, bs, qd, batch))
    rio = '%7.2f' % (v[0] / b[0]) if b and b[0] else '%7s' % '-'
    rcpu = '%7.2f' % (v[3] / b[3]) if b and b[3] else '%7s' % '-'
    print('%-15s %-9s %-9s %5s %4s %5s %9.0f %9.1f %9.1f %8.1f %s %s%s' % (
        dev, eng, rw, bs, qd, batch, v[0], v[1], v[2], v[3], rio, rcpu,
        '  ERROR %d' % v[4] if v[4] else ''))
print()
print('cpu/io: microseconds of CPU (fio usr+sys) per I/O; xIOPS, xCPU: relative to io_uring on the same row')
EOPY
	grep '^bench-fio: ' "$res/guest.log"
} >"$out"
cat "$out"
echo
grep -q 'FAILED' "$res/guest.log" && rc=1
echo "bench-fio: saved to $out (status $rc)"
[ $rc = 0 ]
