#!/usr/bin/env bash
# make bench-counts: kernel events per I/O of io_bench's engines, counted
# exactly by ftrace (hist triggers on tracepoints and kprobes) in one QEMU
# guest on Debian 12's kernel (6.1): system calls, user copies (calls and
# bytes), slab and page allocations, spin lock and mutex round trips, GUP
# calls, wake-ups, context switches, work items, interrupts; on a scsi_debug
# disk without PI and on NVMe namespace 1 (512+8, PI type 1), randread and
# randwrite, one engine at a time.  Prints markdown tables and keeps them in
# bench/results/counts-DATE.txt (the raw counts in build/bench/counts/).
#   bench/counts.sh
# Environment (all optional):
#   COUNTS_SRC     checkout whose module/, uapi/ and user space are measured
#                  (default: this one), e.g. a worktree of an older commit:
#                    git worktree add /tmp/before COMMIT
#                    COUNTS_SRC=/tmp/before bench/counts.sh
#   COUNTS_N       I/Os counted per engine and workload (20000)
#   COUNTS_N0      I/Os of the baseline run subtracted from it (2000; at
#                  least 1024, so that both read back 64 written blocks)
#   COUNTS_ARGS    io_bench options of every run (-r 1 -C -q 32 -b 4096 -t 3600)
#   COUNTS_IDLE    seconds of the idle baseline (10)
#   COUNTS_REPS    runs of each size; the smallest count is taken (2)
#   COUNTS_ENGINES_SD, COUNTS_ENGINES_NVME  engines, space-separated
#                  (dio_batch dio+fixed io_uring libaio psync; NVMe also dio+pi)
#   COUNTS_DEVS    devices measured: sd nvme (both)
#   COUNTS_WORKLOADS  randread randwrite (both)
#   COUNTS_EXTRA   1: also count TLB flushes, IPIs, page faults, timers,
#                  plugs, NVMe queueing and the PI read's steps (a table of
#                  their own; counts-guest.sh extra_kprobes)
#   COUNTS_OUT     where to save the tables (bench/results/counts-DATE.txt)
#   BENCH_SDEBUG   scsi_debug options (dev_size_mb=64 dif=0 dix=0 delay=0)
#   BENCH_CMDLINE  more guest kernel parameters, as make bench-guest's
#                  ("tsc=reliable clocksource=tsc"; empty: the HPET)
#   VM_TIMEOUT     seconds before the guest is killed (3000)
# How each figure is made: bench/counts-guest.sh (top comment).
# Exit status: 0 when every run completed with all I/O verified and no
# event was lost.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
src=$(cd "${COUNTS_SRC:-$top}" && pwd) || { echo "counts: no such COUNTS_SRC" >&2; exit 1; }
res=$top/build/bench/counts
: "${COUNTS_N:=20000}" "${COUNTS_N0:=2000}" "${COUNTS_IDLE:=10}" "${COUNTS_REPS:=2}" "${BENCH_SDEBUG:=dev_size_mb=64 dif=0 dix=0 delay=0}"
: "${COUNTS_ARGS:=-r 1 -C -q 32 -b 4096 -t 3600}"
: "${BENCH_CMDLINE=tsc=reliable clocksource=tsc}"
export VM_TIMEOUT=${VM_TIMEOUT:-3000} VM_CMDLINE=$BENCH_CMDLINE

# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"

{ [ -f "$src/module/Makefile" ] && [ -x "$src/tests/vm/kernel.sh" ]; } || die "$src is not a dio_batch checkout"
{ [ "$COUNTS_N0" -ge 1024 ] && [ "$COUNTS_N" -gt 0 ]; } || die "COUNTS_N0 must be at least 1024, COUNTS_N positive"
commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?')
dirty=$(git -C "$src" status --porcelain -- module uapi libdioctl bench/io_bench.c 2>/dev/null | head -n 1)
[ -n "$dirty" ] && commit="$commit+changes"
echo "counts: building libdioctl, io_bench and kmodctl in $src" >&2
make -C "$src" --no-print-directory lib build/bench/io_bench build/tests/kmodctl >&2 ||
	die "user-space build failed"
bench_kernel 6.1
rm -rf "$res" && mkdir -p "$res/bin"
echo "counts: building dio_batch ($src/module, $commit) for $KVER" >&2
bench_module 6.1 "$res" "$src"
# kcount: call counts of kernel functions by plain kprobes.  Debian's 6.1
# has no CONFIG_KPROBE_EVENTS_ON_NOTRACE: kprobe_events refuses functions
# without an ftrace call site (_copy_from_user, copy_user_*, __get_user_*,
# iov_iter_get_pages2), register_kprobe() does not.  A probe that fires while
# another probe's handler runs on its CPU (an interrupt) is not handled but
# counted in nmissed: calls = hits + nmissed, exact; only the length sum of a
# missed call is lost, and the guest then reports the counts inexact.
# Its source is bench/kcount/; built in a copy, as the module is.
rm -rf "$res/kcount"
cp -r "$here/kcount" "$res/kcount" || die "cannot copy bench/kcount"
make -s -C "$KDIR" M="$res/kcount" modules >"$res/kcount/build.log" 2>&1 ||
	{ cat "$res/kcount/build.log" >&2; die "kcount does not build for $KVER"; }
# The guest has its own /tmp: it gets the binaries in the results share.
cp "$src/build/bench/io_bench" "$src/build/tests/kmodctl" "$res/ko/dio_batch.ko" \
	"$res/kcount/kcount.ko" "$res/bin/" || die "cannot copy the binaries"
cp "$here/counts-guest.sh" "$here/guest-devices.sh" "$res/"

{
	printf "export BIN=/tmp/results/bin RAW=/tmp/results/counts.raw DIO_MODDIR='%s'\n" "$MODDIR"
	# counts-guest.sh's scripts/lib.sh: in the tree, mounted at the same path.
	printf "export DIO_TOP='%s'\n" "$top"
	printf "export N='%s' N0='%s' IDLE='%s' REPS='%s' IOARGS='%s' SDEBUG='%s'\n" \
		"$COUNTS_N" "$COUNTS_N0" "$COUNTS_IDLE" "$COUNTS_REPS" "$COUNTS_ARGS" "$BENCH_SDEBUG"
	[ -n "${COUNTS_ENGINES_SD:-}" ] && printf "export ENGINES_SD='%s'\n" "$COUNTS_ENGINES_SD"
	[ -n "${COUNTS_ENGINES_NVME:-}" ] && printf "export ENGINES_NVME='%s'\n" "$COUNTS_ENGINES_NVME"
	printf "export DEVS='%s' WORKLOADS='%s' EXTRA='%s'\n" "${COUNTS_DEVS:-sd nvme}" \
		"${COUNTS_WORKLOADS:-randread randwrite}" "${COUNTS_EXTRA:-0}"
	cat <<'EOS'
sh /tmp/results/counts-guest.sh run
rc=$?
if dmesg | grep -E 'BUG:|WARNING:|Oops|KASAN|refcount_t|list_add corruption|list_del corruption|general protection fault'; then
	echo "counts: the kernel log has reports (above)"
	rc=1
fi
exit $rc
EOS
} >"$res/guest.sh"

echo "counts: booting $KVER (TCG; 10 to 20 minutes); the guest's progress follows" >&2
bench_boot counts 6.1 "$res"
rc=$?
bench_need counts "$res" counts.raw "no counts from the guest"

out=${COUNTS_OUT:-$top/bench/results/counts-$(date +%Y%m%d-%H%M%S).txt}
mkdir -p "$(dirname "$out")"
{
	echo "dio_batch kernel events per I/O (bench/counts.sh), $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "module, libdioctl and io_bench of commit $commit; guest: QEMU TCG, $KVER, 2 CPUs"
	echo "io_bench $COUNTS_ARGS -m 100|0 -e ENGINE -n N0|N0+N, N0 = $COUNTS_N0, N = $COUNTS_N"
	echo
	sh "$here/counts-guest.sh" report "$res/counts.raw"
} >"$out"
r=$?
[ $r = 0 ] || rc=1
cat "$out"
echo
echo "counts: saved to $out (status $rc)"
[ $rc = 0 ]
