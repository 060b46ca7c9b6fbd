#!/usr/bin/env bash
# Hunt flaky tests: run the guest suite of chosen lanes several times,
# optionally with the machine's CPUs loaded, and print a table of every
# test that failed at least once, with how often, and of every guest boot
# run.sh tried again (hung, or failed before the guest's user space:
# tests/vm/boot-retried.sh), how often, by why.
#   flakes.sh                 (env: LANES="debug 6.1", RUNS=3, LOAD=0|N,
#                              PARALLEL=0|1, TESTS="..." to run some programs only)
# LANES="debug@1 debug@2 6.1" PARALLEL=1 is make check's debug and 6.1
# lanes: the debug kernel's programs in two guests (DIO_PART), and 6.1.
# LOAD=N runs N busy loops (one per core: LOAD=$(nproc)) for the whole
# hunt, so that every time bound in the suite is tried on a slow machine.
# Each run's results stay in build/flakes/LANE-RUN/ (guest.log, the
# programs' TAP output, the kernel logs, the console of a boot tried again).
# Exit status 0 when nothing failed: a boot tried again is in the table,
# but fails no run, as it fails no make check.  A flaky test gets a root
# cause and a fix, never a retry.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
: "${LANES:=debug 6.1}" "${RUNS:=3}" "${LOAD:=0}"
out=$top/build/flakes
mkdir -p "$out"
fails=$out/failures.txt retries=$out/retries.txt
: >"$fails"
: >"$retries"

loads=()
# shellcheck disable=SC2317 # called by the EXIT trap
stop_load() {
	[ ${#loads[@]} = 0 ] || kill "${loads[@]}" 2>/dev/null
}
trap stop_load EXIT
trap 'exit 130' INT TERM
for ((i = 0; i < LOAD; i++)); do
	# shellcheck disable=SC2016 # the loop is the inner shell's
	sh -c 'while :; do :; done' &
	loads+=($!)
done
echo "flakes: lanes '$LANES'$([ "${PARALLEL:-0}" = 1 ] && echo ' side by side'), $RUNS runs each, $LOAD busy loops${TESTS:+, TESTS="$TESTS"}"

# A lane is a kernel (6.1, debug, ...) or one part of the debug kernel's
# programs, as make check runs them in two guests: debug@1, debug@2.
tag_of() {
	case $1 in
	debug@*) echo "debug-p${1#debug@}" ;;
	*) echo "$1${TESTS:+-$(echo "$TESTS" | tr ' ' '_')}" ;;
	esac
}
check_lane() {
	case $1 in
	debug@*) DIO_PART=${1#debug@}/2 "$here/check.sh" debug ;;
	*) "$here/check.sh" "$1" ;;
	esac
}

# lane_runs LANE FIRST LAST: the lane's suite, runs FIRST to LAST; its
# failures, one per line ("LANE<tab>test"), added to $out/failures-LANE.txt,
# its boots tried again ("LANE<tab>boot tried again (WHY)") to
# $out/retries-LANE.txt.
lane_runs() {
	local lane=$1 run t0 rc tag lf=$out/failures-$1.txt rf=$out/retries-$1.txt
	for ((run = $2; run <= $3; run++)); do
		t0=$SECONDS
		check_lane "$lane" >"$out/check-$lane-$run.log" 2>&1
		rc=$?
		tag=$(tag_of "$lane")
		rm -rf "$out/$lane-$run"
		cp -r "$top/build/vm/$tag" "$out/$lane-$run" 2>/dev/null
		rm -f "$out/$lane-$run"/*.img
		# Failed cases: cmocka's "not ok", the runner's "FAILED: ...",
		# and check.sh's own set-up verdicts.
		{
			grep -h '^not ok [0-9]' "$out/$lane-$run"/t_*.out 2>/dev/null |
				sed 's/^not ok [0-9]* - //'
			grep -h '^FAILED: ' "$out/$lane-$run/guest.log" 2>/dev/null | sed 's/^FAILED: //'
			grep -h '^check\[.*\]: FAILED: ' "$out/check-$lane-$run.log" | sed 's/^check\[[^]]*\]: FAILED: //'
		} | sort -u | sed "s/^/$lane\t/" | tee -a "$lf" | sed 's/^/flakes: failed: /'
		# Boots run.sh tried again: "WHY<tab>CONSOLE<tab>MESSAGE" each.
		if [ -s "$out/$lane-$run/boot-retries" ]; then
			awk -F '\t' -v lane="$lane" '{ printf "%s\tboot tried again (%s)\n", lane, $1 }' \
				"$out/$lane-$run/boot-retries" >>"$rf"
			awk -F '\t' -v d="$out/$lane-$run" '{ printf "flakes: boot tried again: %s; its console: %s/%s\n", $3, d, $2 }' \
				"$out/$lane-$run/boot-retries"
		fi
		echo "flakes: $lane run $run: $(tail -n 1 "$out/check-$lane-$run.log") ($((SECONDS - t0)) s, status $rc)"
	done
}

# lane_runs_beside LANE: in PARALLEL mode, the lane's suite RUNS times,
# and then again as long as another lane has not finished its RUNS, so
# that the slowest lane's runs too have a guest beside them.
lane_runs_beside() {
	local lane=$1 run=0 l all
	while :; do
		run=$((run + 1))
		lane_runs "$lane" "$run" "$run"
		echo "$run" >"$out/runs-$lane"
		[ "$run" -ge "$RUNS" ] || continue
		all=1
		for l in $LANES; do
			[ "$(cat "$out/runs-$l" 2>/dev/null || echo 0)" -ge "$RUNS" ] || all=0
		done
		[ $all = 0 ] || break
	done
}

# PARALLEL=1: the lanes side by side (two guests at once: the load of a
# make check), each at least RUNS times; otherwise one after the other.
for lane in $LANES; do
	: >"$out/failures-$lane.txt"
	: >"$out/retries-$lane.txt"
	echo 0 >"$out/runs-$lane"
done
if [ "${PARALLEL:-0}" = 1 ]; then
	pids=()
	for lane in $LANES; do
		lane_runs_beside "$lane" &
		pids+=($!)
	done
	wait "${pids[@]}"
else
	for ((r = 1; r <= RUNS; r++)); do
		for lane in $LANES; do
			lane_runs "$lane" "$r" "$r"
			echo "$r" >"$out/runs-$lane"
		done
	done
fi
for lane in $LANES; do
	cat "$out/failures-$lane.txt" 2>/dev/null
done >"$fails"
for lane in $LANES; do
	cat "$out/retries-$lane.txt" 2>/dev/null
done >"$retries"

echo
echo "flakes: every test that failed at least once, and every boot tried again (LOAD=$LOAD, PARALLEL=${PARALLEL:-0}; runs:$(for l in $LANES; do printf ' %s %s' "$l" "$(cat "$out/runs-$l")"; done)):"
if [ ! -s "$fails" ] && [ ! -s "$retries" ]; then
	echo "  none"
	exit 0
fi
printf '  %-8s %-6s %s\n' lane count test
sort "$fails" "$retries" | uniq -c | sort -rn | while read -r n lane name; do
	printf '  %-8s %-6s %s\n' "$lane" "$n" "$name"
done
[ ! -s "$fails" ]
