#!/usr/bin/env bash
# make bench-fio-pi: fio 3.41's io_uring engine, which drives upstream's
# user PI itself (an io_uring read or write with a PI attribute, Linux
# 6.14+; the layout from FS_IOC_GETLBMD_CAP, 6.17+), against the dio_batch
# engine, with the same PI job (bench/fio/pi.fio: md_per_io_size, pi_act=0,
# pi_chk=GUARD,REFTAG,APPTAG, apptag), on the 7.3 kernel and NVMe
# namespace 1 (512+8, T10 PI type 1, CRC16).  fio 3.41 is Debian's, from
# FIO_SUITE (forky), in a root of its own over the 7.3 chroot
# (scripts/fio-src.sh --suite); the engine is built there against that
# fio's source (make fio-engine-suite), and the guest boots on that root
# (VM_ROOT).  In one guest:
#   1. checks, each a PASS or FAIL line: what one engine writes with PI the
#      other reads back with every tag checked (and a wrong app tag
#      refused); a block changed behind the namespace (its backing file,
#      nvme1.img) is refused by both, fio's io_uring with EILSEQ, dio_batch
#      with its block report; a verified-data job (verify=crc32c) with PI
#      through each engine;
#   2. the bench: 4 KiB random reads and writes at QD 1 and 32 through
#      io_uring, dio_batch (pi_act=0, as io_uring) and dio_batch with
#      pi_act=1 (the kernel generates the tuples of writes), FIO_REPS
#      rounds, the engines taking turns in each; IOPS, CPU per I/O (fio's
#      usr+sys over the I/Os) and each round's ratio to io_uring.
# Prints the checks and a table, keeps them in build/bench/fio-pi-DATE.txt.
#   bench/run-fio-pi.sh
# Environment (all optional):
#   FIO_SUITE      the Debian suite fio comes from (forky)
#   FIO_RUNTIME    seconds per bench job (3)
#   FIO_REPS       rounds (3)
#   FIO_ENGINES    which of "io_uring dio_batch dio_batch-act1" (all)
#   BENCH_CMDLINE  more guest kernel parameters ("tsc=reliable
#                  clocksource=tsc", as make bench-guest)
#   VM_TIMEOUT     seconds before the guest is killed (3000)
# Not part of make check: numbers under TCG are indicative only.  Exit
# status 0 when every check passed and every job ran.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
B=$top/build
res=$B/bench/vm-fio-pi
suite=${FIO_SUITE:-forky}
: "${FIO_RUNTIME:=3}" "${FIO_REPS:=3}" "${FIO_ENGINES:=io_uring dio_batch dio_batch-act1}"
: "${BENCH_CMDLINE=tsc=reliable clocksource=tsc}"
export VM_TIMEOUT=${VM_TIMEOUT:-3000} VM_CMDLINE=$BENCH_CMDLINE

lib_prog=bench-fio-pi
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"

bench_kernel 7.3
echo "bench-fio-pi: fio from $suite in its root, and the engine built there" >&2
make -C "$top" --no-print-directory fio-engine-suite FIO_SUITE="$suite" >&2 || die "the engine for $suite's fio did not build"
root=$("$top/scripts/fio-src.sh" --suite "$suite" --dir)
engine=$B/fio-$suite/fio/fio-dio_batch.so
[ -f "$engine" ] || die "no $engine"
rm -rf "$res" && mkdir -p "$res"
bench_module 7.3 "$res"
# The guest's init mounts the checkout at its own path, which must exist
# in the read-only root (under /tmp the guest has a tmpfs).
case $top in /tmp/*) ;; *) mkdir -p "$root$top" ;; esac

# The guest's script (POSIX sh: the root's /bin/sh is dash).  Checks print
# "PASS: ..." or "FAIL: ..."; bench jobs "ROW round engine rw qd batch"
# and fio's JSON reduced by jq.
{
	printf "KO='%s'\nENGINE='%s'\nJOB='%s'\n" "$res/ko/dio_batch.ko" "$engine" "$here/fio/pi.fio"
	printf "RUNTIME='%s'\nREPS='%s'\nENGINES='%s'\n" "$FIO_RUNTIME" "$FIO_REPS" "$FIO_ENGINES"
	cat "$here/guest-devices.sh"
	cat <<'EOS'
IMG=/tmp/results/nvme1.img
rc=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; rc=1; }
insmod "$KO" || { echo "bench-fio-pi: cannot load dio_batch"; exit 1; }
modprobe nvme || { echo "bench-fio-pi: cannot load nvme"; exit 1; }
ns=$(wait_dev nvme_ns 1) || { echo "bench-fio-pi: no NVMe namespace 1"; exit 1; }
echo "guest: $(uname -r), $(nproc) CPUs, $(fio --version) ($(dpkg-query -W -f='${Version}' fio)), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
sys=/sys/block/${ns#/dev/}
echo "device: $ns, $(cat "$sys/queue/logical_block_size")-byte blocks, $(cat "$sys/integrity/format"), $(($(cat "$sys/size") / 2048)) MiB"

# ioe ENGINE: fio's ioengine= for one of FIO_ENGINES; its PI options.
ioe() {
	case $1 in
	io_uring) echo io_uring ;;
	dio_batch*) echo "external:$ENGINE" ;;
	esac
}
act() { case $1 in *-act1) echo 1 ;; *) echo 0 ;; esac; }

# pio ENGINE NAME RW OFFSET SIZE BS APPTAG PI_CHK [FIO OPTIONS...]: one
# fio job over a region, PI as the bench job has it (pi_act=0), its output
# and errors in /tmp/NAME.log, fio's status returned.
pio() {
	e=$1 n=$2 rw=$3 off=$4 size=$5 bs=$6 tag=$7 chk=$8
	shift 8
	fio --name="$n" --ioengine="$(ioe "$e")" --filename="$ns" --direct=1 --thread \
		--rw="$rw" --offset="$off" --size="$size" --bs="$bs" --iodepth=8 \
		--md_per_io_size=$((${bs%k} * 1024 * 8 / 512)) \
		--pi_act="$(act "$e")" --pi_chk="$chk" --apptag="$tag" "$@" >"/tmp/$n.log" 2>&1
}
# eilseq LOG: fio reported EILSEQ (error=84) for its job.
eilseq() { grep -qE 'err= *84|error=84|Invalid or incomplete multibyte' "$1"; }
show() { sed 's/^/    /' "$1" | grep -E 'error|err=|fio-dio_batch|PI' | head -n 6; }

# --- 1. checks ----------------------------------------------------------------
# Regions of the namespace (63 MiB): the bench's [0, 32M), the checks'
# [40M, 48M), the verify jobs' [48M, 56M).
ALL=GUARD,REFTAG,APPTAG
if pio io_uring fill write 0 32m 128k 0x1234 $ALL; then
	pass "io_uring (pi_act=0) wrote the bench's 32 MiB with fio's PI (guard, ref tags, app tag 0x1234)"
else
	fail "io_uring (pi_act=0) writing 32 MiB with PI:"; show /tmp/fill.log
fi
if pio dio_batch r-of-uring read 0 32m 128k 0x1234 $ALL; then
	pass "dio_batch (pi_act=0, pi_chk=$ALL) read io_uring's 32 MiB back: every tuple checked by the device and verified by the engine"
else
	fail "dio_batch reading io_uring's PI back:"; show /tmp/r-of-uring.log
fi
pio dio_batch r-wrongtag read 0 64k 64k 0x4321 APPTAG
if eilseq /tmp/r-wrongtag.log && grep -q 'app tag, expected 0x4321, actual 0x1234' /tmp/r-wrongtag.log; then
	pass "dio_batch refuses io_uring's blocks for app tag 0x4321: $(grep -o 'block [0-9]*, app tag, expected 0x4321, actual 0x1234, found by [a-z_-]*' /tmp/r-wrongtag.log | head -n 1)"
else
	fail "dio_batch with the wrong app tag on io_uring's blocks:"; show /tmp/r-wrongtag.log
fi
if pio dio_batch w-check write 40m 4m 64k 0x5a5a $ALL; then
	pass "dio_batch (pi_act=0) wrote [40M, 44M) with the engine's PI (app tag 0x5a5a)"
else
	fail "dio_batch writing [40M, 44M):"; show /tmp/w-check.log
fi
if pio io_uring r-of-dio read 40m 4m 64k 0x5a5a $ALL; then
	pass "io_uring (pi_act=0, pi_chk=$ALL) read dio_batch's [40M, 44M) back, every tuple checked by the device"
else
	fail "io_uring reading dio_batch's PI back:"; show /tmp/r-of-dio.log
fi
pio io_uring r-uring-wrongtag read 40m 64k 64k 0x1234 APPTAG
if eilseq /tmp/r-uring-wrongtag.log; then
	pass "io_uring refuses dio_batch's blocks for app tag 0x1234: EILSEQ (fio error=84)"
else
	fail "io_uring with the wrong app tag on dio_batch's blocks:"; show /tmp/r-uring-wrongtag.log
fi
# A block changed behind the device: byte 100 of block LBA in the backing
# file (QEMU keeps the data first, the tuples after all of it).
corrupt() {
	o=$(($1 * 512 + 100))
	v=$(dd if="$IMG" bs=1 skip=$o count=1 2>/dev/null | od -An -tu1 | tr -d ' ')
	# shellcheck disable=SC2059 # the octal escape is the format
	printf "$(printf '\\%03o' $((v ^ 255)))" | dd of="$IMG" bs=1 seek=$o count=1 conv=notrunc 2>/dev/null
}
bad=$((40 * 2048 + 7))
corrupt $bad
pio io_uring r-corrupt-uring read 40m 64k 64k 0x5a5a GUARD,REFTAG
if eilseq /tmp/r-corrupt-uring.log; then
	pass "io_uring refuses the changed block $bad: EILSEQ (fio error=84), the block not named: $(grep -o 'io_u error on file.*' /tmp/r-corrupt-uring.log | head -n 1)"
else
	fail "io_uring reading the changed block $bad:"; show /tmp/r-corrupt-uring.log
fi
pio dio_batch r-corrupt-dio read 40m 64k 64k 0x5a5a GUARD,REFTAG
if eilseq /tmp/r-corrupt-dio.log && grep -q "block $bad, guard tag" /tmp/r-corrupt-dio.log; then
	pass "dio_batch refuses the changed block: $(grep -o "block $bad, guard tag.*found by [a-z_-]*" /tmp/r-corrupt-dio.log | head -n 1)"
else
	fail "dio_batch reading the changed block $bad:"; show /tmp/r-corrupt-dio.log
fi
# Not run: fio's default, pi_act=1, through io_uring (fio makes no tuples
# and sends its metadata buffer as malloc left it): on 7.3.4 one such
# 64 KiB write with pi_chk=GUARD took the guest down, an Oops in
# blk_integrity_remap() (bench/README.md).
# Verified data with PI: random writes, then fio reads every block back
# and compares (verify=crc32c), PI checked on the way.
for e in $ENGINES; do
	if pio "$e" "verify-$e" randwrite 48m 8m 4k 0x1234 $ALL --iodepth=32 --verify=crc32c \
		--do_verify=1 --verify_fatal=1 --output-format=json --output="/tmp/verify-$e.json"; then
		v=$(sed -n '/^{/,$p' "/tmp/verify-$e.json" | jq -r '.jobs[0] as $j |
			[$j.write.iops, $j.read.iops, $j.write.total_ios, $j.read.total_ios, $j.usr_cpu, $j.sys_cpu, $j.job_runtime, $j.error] | @tsv')
		echo "VROW $e $v"
		pass "$e: 8 MiB of 4 KiB random writes with PI (pi_act=$(act "$e")), every block read back and verified (crc32c), no error"
	else
		fail "$e: verify=crc32c with PI:"; show "/tmp/verify-$e.log"
	fi
done

# --- 2. the bench -------------------------------------------------------------
round=1
while [ $round -le "$REPS" ]; do
	for wl in "randread 1 1" "randwrite 1 1" "randread 32 8" "randwrite 32 8"; do
		set -- $wl
		rw=$1 qd=$2 batch=$3
		# The engines take turns, each round starting with the next.
		order=$ENGINES
		i=1
		while [ $i -lt "$round" ]; do
			case $order in *" "*) order="${order#* } ${order%% *}" ;; esac
			i=$((i + 1))
		done
		for e in $order; do
			out=/tmp/pi-$e.json
			if ! IOENGINE=$(ioe "$e") DEV=$ns RW=$rw BS=4k QD=$qd BATCH=$batch RUNTIME=$RUNTIME \
				SIZE=32m MD=64 PI_ACT=$(act "$e") PI_CHK=$ALL APPTAG=0x1234 \
				fio --output-format=json --output="$out" "$JOB" >/tmp/pi.err 2>&1; then
				echo "bench-fio-pi: FAILED: $e $rw qd $qd:"
				head -n 20 /tmp/pi.err
				echo "ROW $round $e $rw $qd $batch FAILED"
				rc=1
				continue
			fi
			d=read
			case $rw in *write) d=write ;; esac
			v=$(sed -n '/^{/,$p' "$out" | jq -r --arg d $d '.jobs[0] as $j | $j[$d] as $x |
				[$x.iops, ($x.clat_ns.percentile["50.000000"] // 0), ($x.clat_ns.percentile["99.000000"] // 0),
				 $j.usr_cpu, $j.sys_cpu, $x.total_ios, $j.job_runtime, $j.error] | @tsv')
			echo "ROW $round $e $rw $qd $batch $v"
		done
	done
	round=$((round + 1))
done
# Lost completions (the NVMe driver aborts a command after 30 s and resets
# the controller after 60): the job they fall in ran long.
dmesg | grep -E 'nvme.*(timeout|Abort status|reset)' | sed 's/^/bench-fio-pi: dmesg: /'
if dmesg | grep -E 'BUG:|WARNING:|Oops|KASAN|refcount_t|list_add corruption|list_del corruption|general protection fault'; then
	echo "bench-fio-pi: the kernel log has reports (above)"
	rc=1
fi
exit $rc
EOS
} >"$res/guest.sh"

echo "bench-fio-pi: booting $KVER (TCG) on $root; engines $FIO_ENGINES, ${FIO_RUNTIME}s per job, $FIO_REPS rounds" >&2
VM_ROOT=$root bench_boot bench-fio-pi 7.3 "$res" '^V?ROW ' >&2
rc=$?

out=$B/bench/fio-pi-$(date +%Y%m%d-%H%M%S).txt
{
	bench_header "fio's io_uring PI against the dio_batch engine" "$(grep -m1 '^guest: ' "$res/guest.log" | cut -d' ' -f2-)"
	grep -m1 '^device: ' "$res/guest.log"
	echo "command: FIO_SUITE=$suite FIO_RUNTIME=$FIO_RUNTIME FIO_REPS=$FIO_REPS FIO_ENGINES='$FIO_ENGINES' make bench-fio-pi"
	echo "job: bench/fio/pi.fio, md_per_io_size=64 pi_chk=GUARD,REFTAG,APPTAG apptag=0x1234, pi_act=0 (dio_batch-act1: pi_act=1)"
	echo
	grep -E '^(PASS|FAIL): ' "$res/guest.log"
	echo
	python3 - "$res/guest.log" "$FIO_RUNTIME" <<'EOPY'
import statistics as st
import sys
# A job that ran more than twice its runtime (a stall: lost completions)
# is left out of the medians and ratios, and named.
limit = 2000.0 * float(sys.argv[2])
rows, vrows, stalled = {}, [], []
for line in open(sys.argv[1], errors='replace'):
    f = line.split()
    if f and f[0] == 'VROW':
        e = f[1]
        wi, ri, wn, rn, usr, sys_, rt, err = map(float, f[2:10])
        cpu = (usr + sys_) / 100.0 * rt * 1000.0 / (wn + rn) if wn + rn else 0.0
        vrows.append((e, wi, ri, cpu, int(err)))
    if not f or f[0] != 'ROW':
        continue
    rnd, eng, rw, qd = f[1], f[2], f[3], int(f[4])
    if f[6] == 'FAILED':
        rows.setdefault((rw, qd), {}).setdefault(eng, {})[rnd] = None
        continue
    iops, p50, p99, usr, sys_, ios, rt, err = map(float, f[6:14])
    cpu = (usr + sys_) / 100.0 * rt * 1000.0 / ios if ios else 0.0   # us per I/O
    if rt > limit:
        stalled.append('round %s %s %s QD %d: ran %.1f s, %.0f IOPS' % (rnd, eng, rw, qd, rt / 1000, iops))
        continue
    rows.setdefault((rw, qd), {}).setdefault(eng, {})[rnd] = (iops, cpu, p50 / 1000, p99 / 1000, int(err))
def rng(v):
    return '%.2f (%.2f-%.2f)' % (st.median(v), min(v), max(v)) if v else '-'
hdr = '%-15s %-15s %9s %9s %9s %9s   %-18s %-18s' % (
    'workload', 'engine', 'IOPS', 'cpu/io us', 'p50 us', 'p99 us', 'xIOPS med (range)', 'xCPU med (range)')
print(hdr)
print('-' * len(hdr))
for (rw, qd) in sorted(rows, key=lambda k: (k[1], k[0])):
    by = rows[(rw, qd)]
    base = by.get('io_uring', {})
    for eng in by:
        runs = {r: v for r, v in by[eng].items() if v}
        fails = sum(1 for v in by[eng].values() if v is None)
        if not runs:
            print('%-15s %-15s %9s' % ('%s QD %d' % (rw, qd), eng, 'FAILED'))
            continue
        xi = [v[0] / base[r][0] for r, v in runs.items() if base.get(r) and base[r][0]]
        xc = [v[1] / base[r][1] for r, v in runs.items() if base.get(r) and base[r][1]]
        med = lambda i: st.median(v[i] for v in runs.values())
        errs = sum(v[4] for v in runs.values())
        print('%-15s %-15s %9.0f %9.1f %9.1f %9.1f   %-18s %-18s%s%s' % (
            '%s QD %d' % (rw, qd), eng, med(0), med(1), med(2), med(3),
            rng(xi) if eng != 'io_uring' else '', rng(xc) if eng != 'io_uring' else '',
            '  %d rounds FAILED' % fails if fails else '', '  ERRORS %d' % errs if errs else ''))
    print()
print('IOPS, cpu/io (microseconds of fio usr+sys CPU per I/O), p50/p99 (clat): medians over the rounds;')
print('xIOPS, xCPU: the engine over io_uring in the same round, median and range over the rounds')
for x in stalled:
    print('left out, it stalled (more than twice the runtime): ' + x)
if vrows:
    print()
    print('verify=crc32c with PI, 8 MiB of 4 KiB random writes at QD 32, then every block read back:')
    b = {e: v for e, *v in [(r[0], r[1], r[2], r[3]) for r in vrows]}
    for e, wi, ri, cpu, err in vrows:
        x = b.get('io_uring')
        rel = '  x io_uring: write IOPS %.2f, verify IOPS %.2f, CPU %.2f' % (wi / x[0], ri / x[1], cpu / x[2]) if x and e != 'io_uring' and x[0] and x[1] and x[2] else ''
        print('  %-15s write %6.0f IOPS, verify reads %6.0f IOPS, %5.1f us CPU per I/O%s%s' % (
            e, wi, ri, cpu, rel, '  ERROR %d' % err if err else ''))
EOPY
	grep '^bench-fio-pi: ' "$res/guest.log"
	echo
	echo "raw: ROW round engine rw qd batch IOPS clat-p50-ns clat-p99-ns usr% sys% ios runtime-ms error;"
	echo "VROW engine write-IOPS read-IOPS writes reads usr% sys% runtime-ms error"
	grep -E '^V?ROW ' "$res/guest.log"
} >"$out"
cat "$out"
echo
grep -qE '^FAIL: |FAILED' "$res/guest.log" && rc=1
echo "bench-fio-pi: saved to $out (status $rc)"
[ $rc = 0 ]
