#!/bin/sh
# Host unit tests: every build/tests/unit/* program (cmocka, TAP output).
# Records "passed failed" in BUILD/results/unit.counts.
B=${1:-build}
pass=0 fail=0 t0=$(date +%s)
mkdir -p "$B/results"
for t in "$B"/tests/unit/*; do
	[ -x "$t" ] || continue
	out=$B/results/$(basename "$t").out
	CMOCKA_MESSAGE_OUTPUT=TAP "$t" >"$out" 2>&1
	rc=$?
	cat "$out"
	p=$(grep -c '^ok ' "$out")
	f=$(grep -c '^not ok ' "$out")
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "FAILED: $t exited with $rc"
		f=1
	fi
	pass=$((pass + p)) fail=$((fail + f))
done
if [ $((pass + fail)) = 0 ]; then
	echo "FAILED: no unit test ran"
	fail=1
fi
echo "$pass $fail" >"$B/results/unit.counts"
printf 'unit tests\t%s\n' $(($(date +%s) - t0)) >>"$B/results/phases"
echo "unit: $pass passed, $fail failed"
[ "$fail" = 0 ]
