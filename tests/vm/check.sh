#!/usr/bin/env bash
# The guest suite on one kernel: prepare the kernel, build the module for
# it, boot, run tests/guest/run-suite.sh inside, and record the counts in
# build/results/FLAVOUR.counts ("passed failed") and the kernel release in
# build/results/FLAVOUR.kver.  Failures of the set-up itself (no kernel,
# module does not build, guest dies or times out, reports of
# tests/vm/report-patterns on the serial console or in the kernel log the
# guest saved last) count as failed tests: never as skips.
#   check.sh FLAVOUR        (TESTS="context io_data" to run a subset;
#                            DIO_PART=1/2 or 2/2: one half of the debug
#                            kernel's programs, results in build/vm/debug-pN;
#                            check-all.sh then reports their coverage as one;
#                            VM_ROOT=DIR VM_ROOT_NAME=NAME: the guest boots
#                            on DIR, not the host's root, results in
#                            build/vm/FLAVOUR-NAME...; DIO_FIO_ENGINE: the
#                            engine t_fio loads, make check-fio-suite)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
flavour=$1
B=$top/build
# Lines and branches of module/*.c a whole debug run must execute (percent).
: "${COVERAGE_TARGET:=95,85}"
# A subset run gets its own directory, so runs can go side by side.
[ -z "${VM_ROOT:-}" ] || [ -n "${VM_ROOT_NAME:-}" ] || { echo "check[$flavour]: VM_ROOT without VM_ROOT_NAME" >&2; exit 2; }
tag=$flavour${VM_ROOT:+-$VM_ROOT_NAME}${TESTS:+-$(echo "$TESTS" | tr ' ' '_')}${DIO_PART:+-p${DIO_PART%/*}}
res=$B/vm/$tag
counts=$B/results/$tag.counts
mkdir -p "$B/results"
rm -f "$B/results/$tag.kver" "$B/results/$tag.json-cases"
# The same reports as the guest's run-suite.sh looks for.
bad=$(sed -e '/^#/d' -e '/^[[:space:]]*$/d' "$here/report-patterns" | paste -s -d '|' -)

# phase NAME T0: how long NAME took since T0 ($SECONDS), for the summary.
phase() { printf '%s\t%s\n' "$1" $((SECONDS - $2)) >>"$B/results/phases"; }

fail_setup() {
	echo "check[$flavour]: FAILED: $*" >&2
	echo "0 1" >"$counts"
	exit 1
}
[ -n "$bad" ] || fail_setup "no report patterns in $here/report-patterns"

echo "check[$flavour]: preparing kernel" >&2
t0=$SECONDS
# Its last word says why it failed (kernel.sh's die: a build, apt, or a
# kernel this release does not have), for the summary's failures.
if ! "$here/kernel.sh" prepare "$flavour" 2>&1 | tee "$B/results/.prepare-$tag" >&2; then
	why=$(tail -n 1 "$B/results/.prepare-$tag")
	rm -f "$B/results/.prepare-$tag"
	fail_setup "kernel $flavour could not be prepared ($why)"
fi
rm -f "$B/results/.prepare-$tag"
phase "kernel $flavour (install or build)" $t0
eval "$("$here/kernel.sh" env "$flavour")" || fail_setup "kernel.sh env $flavour"
echo "$KVER" >"$B/results/$tag.kver"
rm -rf "$res" && mkdir -p "$res"
build_module() {
	"$here/kernel.sh" build-module "$flavour" "$res/ko" >"$res/build.log" 2>&1 ||
		{ cat "$res/build.log" >&2; fail_setup "module does not build for $KVER"; }
}
t0=$SECONDS
build_module
# Once (of some thirty debug builds) objtool warned of indirect calls in a
# retpoline build: the objects had been compiled without the retpoline
# flags, which Kbuild adds only when its compiler probe succeeds.  Say so,
# with the objects concerned, and build once more; a warning that stays
# fails the run.
if grep -q 'indirect call found in RETPOLINE build' "$res/build.log"; then
	norp=$(grep -L -e '-mindirect-branch=' "$res"/ko/src/module/.*.o.cmd 2>/dev/null | xargs -r -n1 basename)
	echo "check[$flavour]: objtool: indirect calls in a retpoline build; objects compiled without -mindirect-branch: ${norp:-none}" >&2
	cat "$res/build.log" >&2
	echo "check[$flavour]: building the module once more" >&2
	build_module
fi
if grep -iE 'warning' "$res/build.log" >&2; then
	fail_setup "module build for $KVER has warnings"
fi
phase "module for $flavour" $t0

# The fuzzers' knobs (DIO_FUZZ_*, DIO_KFUZZ_*), the other programs' seed
# (DIO_SEED: tests/lib/testlib.h's tl_seed()), TEST_TIMEOUT and
# DIO_FIO_ENGINE reach the guest.  KFUZZ_CORPUS (a host directory, tests/vm/fuzz.sh): the coverage-
# guided fuzzer's corpus goes in through the results share and comes back.
passenv=$(env | grep -E '^(DIO_FUZZ_|DIO_KFUZZ_|DIO_SEED=|TEST_TIMEOUT=|DIO_FIO_ENGINE=)' | sed -e "s/'/'\\\\''/g" -e "s/=\(.*\)/='\1'/" -e 's/^/export /')
if [ -n "${KFUZZ_CORPUS:-}" ]; then
	mkdir -p "$KFUZZ_CORPUS" "$res/corpus"
	cp -r "$KFUZZ_CORPUS/." "$res/corpus/"
	passenv="$passenv
export DIO_KFUZZ_CORPUS=/tmp/results/corpus"
fi
# The kernel's modules where the guest's root has them.
guest_moddir=$MODDIR
if [ -n "${VM_ROOT:-}" ]; then
	guest_moddir=/usr/lib/modules/$KVER
	[ -d "$VM_ROOT$guest_moddir" ] || fail_setup "no $guest_moddir in $VM_ROOT"
	case $top in /tmp/*) ;; *) mkdir -p "$VM_ROOT$top" ;; esac # the guest mounts the checkout there
fi
cat >"$res/guest.sh" <<EOS
export DIO_BUILD='$B' DIO_KO='$res/ko/dio_batch.ko' DIO_MODDIR='$guest_moddir'
export RESULTS=/tmp/results TESTS='${TESTS:-}' DIO_FLAVOUR='$flavour' DIO_PART='${DIO_PART:-}'
$passenv
echo "guest: \$(uname -r)"
exec sh '$top/tests/guest/run-suite.sh'
EOS
echo "check[$flavour]: booting $KVER" >&2
t0=$SECONDS
"$here/run.sh" "$flavour" "$res"
rc=$?
echo "check[$flavour]: guest ran $((SECONDS - t0))s, status $rc" >&2
phase "guest $tag" $t0
[ -s "$res/qemu-cpu" ] && printf '%s\t%s\n' "guest $tag, QEMU's CPU time" "$(cat "$res/qemu-cpu")" >>"$B/results/phases"
[ -s "$res/times" ] && cp "$res/times" "$B/results/$tag.times"
# Each test case's time, program by program (run-suite.sh's case_times).
for f in "$res"/t_*.case-times; do
	[ -s "$f" ] && sed "s/^/$(basename "$f" .case-times)\t/" "$f"
done >"$B/results/$tag.case-times" 2>/dev/null
if [ -n "${KFUZZ_CORPUS:-}" ] && [ -d "$res/corpus" ]; then
	cp -r "$res/corpus/." "$KFUZZ_CORPUS/"
	echo "check[$flavour]: corpus: $(find "$KFUZZ_CORPUS" -type f | wc -l) entries in $KFUZZ_CORPUS" >&2
fi
[ -f "$res/guest.log" ] && cat "$res/guest.log"

if [ -s "$res/counts" ]; then
	read -r p f <"$res/counts"
else
	p=0 f=0
fi
if [ ! -s "$res/counts" ] || [ "$rc" -ge 124 ]; then
	echo "check[$flavour]: FAILED: guest did not finish (status $rc); console:" >&2
	tail -n 80 "$res/console.log" >&2
	f=$((f + 1))
fi
# The console shows only messages of level err and above (loglevel=4, see
# run.sh): it catches what a guest that died could not save.  Everything
# the suite ran is checked at every level in the guest (dmesg-*.txt);
# dmesg.txt, which guest-init.sh saves after the suite, here.
for log in "$res/console.log" "$res/dmesg.txt"; do
	[ -f "$log" ] || continue
	if grep -E "$bad" "$log" >/dev/null; then
		echo "check[$flavour]: FAILED: kernel reports in $(basename "$log"):" >&2
		grep -E -B2 -A30 "$bad" "$log" | head -n 120 >&2
		f=$((f + 1))
	fi
done
# Module coverage (the debug flavour: gcov): reported for every run; a run
# of the whole suite must meet the target (tests/vm/coverage.py).  Of a
# part (DIO_PART), check-all.sh reports it with the other part's.
if [ "$flavour" = debug ] && [ -d "$res/gcov" ] && [ -z "${DIO_PART:-}" ]; then
	cov_args=(--html "$B/coverage" --json "$B/results/coverage.json")
	[ -z "${TESTS:-}" ] && cov_args+=(--target "$COVERAGE_TARGET")
	if python3 "$here/coverage.py" "$res" "${cov_args[@]}" | tee "$res/coverage.txt"; then
		[ -z "${TESTS:-}" ] && p=$((p + 1))
	else
		echo "check[$flavour]: FAILED: module coverage (see above)" >&2
		f=$((f + 1))
	fi
	grep '^coverage: module' "$res/coverage.txt" >"$B/results/$tag.coverage"
fi
# The dioctl JSON documents the programs kept (tests/lib/dioctl_run.h),
# validated against tools/dioctl.schema.json: json-cases.sh adds
# json-check.py's cases to the counts, and says program by program in
# TAG.json-cases how many they are, for the summary.
read -r jp jf < <("$here/json-cases.sh" "$res" "$B/results/$tag.json-cases")
p=$((p + ${jp:-0})) f=$((f + ${jf:-1}))
echo "$p $f" >"$counts"
echo "check[$flavour]: $p passed, $f failed"
[ "$f" = 0 ]
