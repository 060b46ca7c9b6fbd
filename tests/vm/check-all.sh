#!/usr/bin/env bash
# The guest suite on every kernel in KERNELS, then (DKMS_CHECK=1) the DKMS
# check, (DEB_CHECK=1) the Debian packages' check on bookworm and on
# trixie, (ANYWHERE_CHECK=1)
# make demo and make userspace from a checkout at an awkward path
# (anywhere-check.sh) and (DEMO_CHECK=1) make demo in a trixie root
# (demo-check.sh), in CHECK_LANES lanes
# (two on two cores) that take jobs from one queue.  Guests spend much of
# their time waiting (delayed scsi_debug
# commands, timeouts), so two share the machine's cores well.  Each lane's
# output goes to build/results/lane-*.log and, line by line with the
# flavour in front, to stdout.  Counts land in build/results/*.counts as
# check.sh and dkms-check.sh write them; tests/summary.sh adds them up.
# A run has a budget: CHECK_BUDGET seconds (default 5100, 85 minutes: CI
# stops a run at 90 and then prints nothing of it) counted from
# DIO_CHECK_START (.ci/run's start, else make check's).  At the budget the
# jobs still running are stopped and counted as failed, with their names,
# the ones never started and the phases so far in the summary, so that a
# run too slow for CI says where its time went.  CHECK_BUDGET=0: none.
#   check-all.sh            (env: KERNELS, DKMS_CHECK, DEB_CHECK, ANYWHERE_CHECK, DEMO_CHECK, CHECK_LANES=1|2,
#                            DEBUG_PARTS=1|2, CHECK_BUDGET, DIO_CHECK_START)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$top/build/results
: "${KERNELS:=6.1 6.12 7.3 debug}" "${DKMS_CHECK:=1}" "${DEB_CHECK:=1}" "${ANYWHERE_CHECK:=1}" "${DEMO_CHECK:=1}"
: "${CHECK_LANES:=$([ "$(nproc)" -ge 2 ] && echo 2 || echo 1)}"
mkdir -p "$out"
rm -f "$out"/.running-* "$out/over-budget.out" "$out/budget.counts"

# The jobs.  First the stock kernels (longest first) and the DKMS, package
# and checkout-anywhere checks as one job (they share the host's DKMS and
# /lib/modules, so never side by side), then the trixie package check, a
# job of its own (deb-trixie: it shares neither, and reads the trixie
# chroot, which the 7.3 job ahead of it prepares on a new machine; were it
# first, its lane would wait on kernel.sh's lock), then make demo in a
# trixie root (demo-trixie: the same chroot, for the same reason); last
# the kernels built from source
# (debug, kcsan), whose build (tests/vm/kernel.sh, niced) make check starts
# at once and which takes the cores the guests leave idle until the other
# jobs are done.  The debug kernel's programs run in DEBUG_PARTS guests
# (two on two lanes: DIO_PART=1/2 and 2/2, about half the time each,
# tests/guest/run-suite.sh), so that both lanes end together; their
# coverage is reported as one run's below.  Each lane takes the next job
# from the queue when it is free.
: "${DEBUG_PARTS:=$([ "$CHECK_LANES" -ge 2 ] && echo 2 || echo 1)}"
[ -n "${TESTS:-}" ] && DEBUG_PARTS=1
queue=$out/.jobs
: >"$queue"
for k in 7.3 6.12 6.1; do
	case " $KERNELS " in *" $k "*) echo "$k" >>"$queue" ;; esac
done
for k in $KERNELS; do
	case $k in debug | kcsan | 7.3 | 6.12 | 6.1) ;; *) echo "$k" >>"$queue" ;; esac
done
pkgjob=
[ "$DKMS_CHECK" = 1 ] && pkgjob=dkms
[ "$DEB_CHECK" = 1 ] && pkgjob="${pkgjob:+$pkgjob }deb"
[ "$ANYWHERE_CHECK" = 1 ] && pkgjob="${pkgjob:+$pkgjob }anywhere"
[ -n "$pkgjob" ] && echo "$pkgjob" >>"$queue"
[ "$DEB_CHECK" = 1 ] && echo deb-trixie >>"$queue"
[ "$DEMO_CHECK" = 1 ] && echo demo-trixie >>"$queue"
for k in $KERNELS; do
	case $k in
	debug)
		if [ "$DEBUG_PARTS" = 2 ]; then
			printf 'debug@1\ndebug@2\n' >>"$queue"
		else
			echo debug >>"$queue"
		fi
		;;
	kcsan) echo kcsan >>"$queue" ;;
	esac
done
mapfile -t jobs <"$queue"

# next_job: the first line of the queue, taken out of it (empty: none left).
next_job() {
	# shellcheck disable=SC2016  # $1 is the inner shell's
	flock "$queue.lock" sh -c 'head -n 1 "$1"; sed -i 1d "$1"' sh "$queue"
}

# kill_tree PID: TERM to PID and every process below it (twice, for those
# started meanwhile).  Not a process group: a lane's jobs stay in make's
# group, so that Ctrl-C reaches them.
descendants() {
	local c
	for c in $(pgrep -P "$1"); do
		echo "$c"
		descendants "$c"
	done
}
kill_tree() {
	for _ in 1 2; do
		# shellcheck disable=SC2046  # a list of PIDs
		kill -TERM "$1" $(descendants "$1") 2>/dev/null
		sleep 1
	done
}

# lane NAME: jobs from the queue until it is empty, prefixed output.  The
# job's PID and name are in .running-NAME while it runs (for the budget).
lane() {
	local job k t0 cmd
	while job=$(next_job) && [ -n "$job" ]; do
		for k in $job; do
			t0=$SECONDS
			case $k in
			dkms) cmd=("$here/dkms-check.sh") ;;
			deb) cmd=("$here/deb-check.sh") ;;
			deb-trixie) cmd=("$here/deb-check.sh" trixie) ;;
			anywhere) cmd=("$here/anywhere-check.sh") ;;
			demo-trixie) cmd=("$here/demo-check.sh") ;;
			debug@*) cmd=(env "DIO_PART=${k#debug@}/$DEBUG_PARTS" "$here/check.sh" debug) ;;
			*) cmd=("$here/check.sh" "$k") ;;
			esac
			{
				"${cmd[@]}" &
				echo "$! $k" >"$out/.running-$1"
				wait $!
			} 2>&1 | sed -u "s/^/[$k] /"
			rm -f "$out/.running-$1"
			printf '%s\t%s\n' "lane $1: $k, in all" $((SECONDS - t0)) >>"$out/phases"
			[ -e "$out/over-budget.out" ] && break 2
		done
	done | tee "$out/lane-$1.log"
}

# budget: at DIO_CHECK_START + CHECK_BUDGET, empty the queue, stop the
# running jobs (and the debug kernel's build ahead, whose PID make check
# leaves in .ahead-pid) and say so where tests/summary.sh finds it.
: "${CHECK_BUDGET:=5100}" "${DIO_CHECK_START:=$(date +%s)}"
budget() {
	local left r pid k
	left=$((DIO_CHECK_START + CHECK_BUDGET - $(date +%s)))
	[ "$left" -gt 0 ] && sleep "$left"
	{
		echo "check-all: FAILED: the run reached its budget, $CHECK_BUDGET s after its start (CHECK_BUDGET)"
		for r in "$out"/.running-*; do
			[ -e "$r" ] || continue
			read -r pid k <"$r"
			echo "check-all: stopped at the budget: $k, $(($(date +%s) - $(stat -c %Y "$r"))) s after it started"
		done
		# shellcheck disable=SC2016  # $1 is the inner shell's
		flock "$queue.lock" sh -c 'for j in $(cat "$1"); do echo "check-all: never started: $j"; done; : >"$1"' sh "$queue"
	} >"$out/over-budget.out"
	echo "0 1" >"$out/budget.counts"
	cat "$out/over-budget.out" >&2
	for r in "$out"/.running-* "$out"/.ahead-pid; do
		[ -e "$r" ] || continue
		read -r pid _ <"$r"
		kill_tree "$pid"
	done
}
watch=
if [ "$CHECK_BUDGET" -gt 0 ]; then
	budget &
	watch=$!
fi

pids=()
for ((l = 1; l < CHECK_LANES; l++)); do
	lane "$l" &
	pids+=($!)
done
lane "$CHECK_LANES"
for p in "${pids[@]}"; do
	wait "$p"
done
[ -z "$watch" ] || kill_tree "$watch"

# The debug parts' module coverage, as one run's: it must meet the target
# as a whole debug run does (tests/vm/check.sh, tests/vm/coverage.py).
if [ "$DEBUG_PARTS" = 2 ] && [[ " ${jobs[*]} " == *" debug@1 "* ]] &&
	[ ! -e "$out/over-budget.out" ]; then
	B=$top/build
	# Its report in debug-coverage.out, where tests/summary.sh finds a
	# FAILED line.
	echo "check-all: module coverage of the debug kernel's two parts"
	if python3 "$here/coverage.py" "$B/vm/debug-p1" "$B/vm/debug-p2" \
		--target "${COVERAGE_TARGET:-95,85}" --html "$B/coverage" \
		--json "$out/coverage.json" >"$out/debug-coverage.out" 2>&1; then
		echo "1 0" >"$out/debug-coverage.counts"
	else
		echo "check-all: FAILED: module coverage of the debug parts" >>"$out/debug-coverage.out"
		echo "0 1" >"$out/debug-coverage.counts"
	fi
	cat "$out/debug-coverage.out"
	grep '^coverage: module' "$out/debug-coverage.out" >"$out/debug.coverage"
fi

# A suite that left no counts behind failed.
for job in "${jobs[@]}"; do
	for k in $job; do
		case $k in
		dkms | deb | deb-trixie | anywhere | demo-trixie) ;;
		debug@*) k=debug-p${k#debug@} ;;
		*) k=$k${TESTS:+-$(echo "$TESTS" | tr ' ' '_')} ;;
		esac
		if [ ! -s "$out/$k.counts" ]; then
			echo "check-all: $k recorded no counts" >&2
			echo "0 1" >"$out/$k.counts"
		fi
	done
done
exit 0
