# shellcheck shell=bash
# What the bench scripts that boot a QEMU guest share: the kernel and the
# module for it (bench_kernel, bench_module; both with the build, bench_prepare), booting it, following its
# output and checking what it left (bench_boot), and the first two lines
# of a results file (bench_header).  Sourced (not run) by
# bench/run-guest.sh, bench/run-fio.sh, bench/run-fio-pi.sh,
# bench/run-sqlite.sh, bench/counts.sh and bench/icount.sh: bash, with
# set -uo pipefail.
bench_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# bench_kernel FLAVOUR: tests/vm/kernel.sh's kernel FLAVOUR prepared, and
# its variables (KVER, VMLINUZ, MODDIR, KDIR, ...) set for the caller;
# the caller's die() when either fails.
bench_kernel() {
	"$bench_top/tests/vm/kernel.sh" prepare "$1" || die "kernel $1 could not be prepared"
	eval "$("$bench_top/tests/vm/kernel.sh" env "$1")" || die "kernel.sh env $1 failed"
}

# bench_module FLAVOUR RES [SRC]: dio_batch of the checkout SRC (default
# this one) built for FLAVOUR's kernel (bench_kernel first) into RES/ko,
# its log in RES/build.log, shown before the caller's die() when it fails.
bench_module() {
	"${3:-$bench_top}/tests/vm/kernel.sh" build-module "$1" "$2/ko" >"$2/build.log" 2>&1 ||
		{ cat "$2/build.log" >&2; die "dio_batch does not build for $KVER"; }
}

# bench_prepare FLAVOUR RES TARGET...: make's TARGETs (and kmodctl, which
# every guest script loads the module with) built in this checkout, the
# kernel FLAVOUR prepared (bench_kernel), RES made empty, and dio_batch
# built for the kernel into RES/ko (bench_module); the caller's die() on
# any failure.
bench_prepare() {
	local fl=$1 r=$2
	shift 2
	echo "${lib_prog:-bench}: building $*" >&2
	make -C "$bench_top" --no-print-directory "$@" build/tests/kmodctl >&2 ||
		die "user-space build failed"
	bench_kernel "$fl"
	rm -rf "$r" && mkdir -p "$r"
	echo "${lib_prog:-bench}: building dio_batch for $KVER" >&2
	bench_module "$fl" "$r"
}

# bench_boot LABEL FLAVOUR RES [FILTER]: tests/vm/run.sh FLAVOUR RES (the
# guest runs RES/guest.sh) in the background, the guest's log on stdout as
# it grows, less the lines FILTER (an extended regular expression) matches;
# then "LABEL: guest ran N s, status RC" on stderr.  With no guest log (the
# guest did not get as far as its script) the console's last 40 lines and
# "LABEL: no guest log" go to stderr and the caller exits 1.  Returns
# run.sh's status, or 1 when the console has kernel reports
# (bench_console_reports).  run.sh's knobs come from the environment, and
# a prefix passes one to run.sh alone: VM_ROOT=DIR bench_boot ...
bench_boot() {
	local label=$1 flavour=$2 res=$3 filter=${4:-} start vm rc
	start=$(date +%s)
	"$bench_top/tests/vm/run.sh" "$flavour" "$res" &
	vm=$!
	if [ -n "$filter" ]; then
		tail -n +1 -s 1 -F --pid=$vm "$res/guest.log" 2>/dev/null | grep --line-buffered -v -E "$filter"
	else
		tail -n +1 -s 1 -F --pid=$vm "$res/guest.log" 2>/dev/null
	fi
	wait $vm
	rc=$?
	echo "$label: guest ran $(($(date +%s) - start)) s, status $rc" >&2
	bench_need "$label" "$res" guest.log "no guest log"
	bench_console_reports "$label" "$res" && rc=1
	return $rc
}

# bench_need LABEL RES FILE WHAT: unless RES/FILE is there and not empty,
# the console's last 40 lines and "LABEL: WHAT" on stderr, and exit 1.
bench_need() {
	[ -s "$2/$3" ] && return 0
	tail -n 40 "$2/console.log" >&2
	echo "$1: $4" >&2
	exit 1
}

# bench_console_reports LABEL RES: true when the guest's console (RES/
# console.log) has kernel reports (a BUG, WARNING, Oops or panic), after
# the first 10 and a line that says so on stderr.  The guests' scripts
# check dmesg themselves; the console also has what came after that, up
# to a panic.
bench_console_reports() {
	grep -m 10 -E 'BUG:|WARNING:|Oops|Kernel panic' "$2/console.log" >&2 || return 1
	echo "$1: kernel reports on the console (see $2/console.log)" >&2
}

# bench_header TITLE GUEST: a results file's first two lines: TITLE, the
# date and the commit; the host's CPUs and load, and GUEST.  For
# run-guest.sh, run-fio.sh and run-fio-pi.sh; counts.sh and icount.sh name
# the commit measured (COUNTS_SRC, ICOUNT_SRC) and leave out the load,
# which exact counts do not depend on.
bench_header() {
	echo "$1, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$bench_top" rev-parse --short HEAD 2>/dev/null || echo '?')"
	echo "host: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; guest: QEMU TCG, $2"
}
