#!/bin/sh
# Runs inside the guest (tests/vm/run.sh boots it): every guest test
# program, one after another, like liburing's runner: after each one the
# kernel log it caused is checked for BUG, WARNING, Oops, KASAN, lockdep,
# refcount and list corruption reports.  Writes counts to $RESULTS/counts.
#   env: DIO_BUILD (build dir), DIO_KO, DIO_MODDIR, RESULTS, TESTS (optional
#   list of test names to run), TEST_TIMEOUT (seconds per program)
set -u
: "${TEST_TIMEOUT:=600}"
bad='BUG:|WARNING:|Oops|KASAN|refcount_t|list_add corruption|list_del corruption|possible circular locking|sleeping function called from invalid context|general protection fault|kernel BUG|INFO: task .* blocked|unreferenced object|UBSAN'
pass=0 fail=0
export DIO_KO DIO_MODDIR DIO_BUILD
tests=${TESTS:-$(ls "$DIO_BUILD"/tests/guest/ | grep '^t_' | sed 's/^t_//')}

record() { # name ok|fail
	if [ "$2" = ok ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAILED: $1"; fi
}

dmesg --clear
for t in $tests; do
	bin=$DIO_BUILD/tests/guest/t_$t
	echo "=== $t"
	if [ ! -x "$bin" ]; then
		echo "missing test program $bin"
		record "$t" fail
		continue
	fi
	CMOCKA_MESSAGE_OUTPUT=TAP timeout -k 10 "$TEST_TIMEOUT" "$bin" >"$RESULTS/t_$t.out" 2>&1
	rc=$?
	cat "$RESULTS/t_$t.out"
	p=$(grep -c '^ok ' "$RESULTS/t_$t.out")
	f=$(grep -c '^not ok ' "$RESULTS/t_$t.out")
	pass=$((pass + p)) fail=$((fail + f))
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "t_$t exited with status $rc without a failed test (crash or timeout)"
		record "$t: exit status" fail
	fi
	if [ $((p + f)) = 0 ]; then
		record "$t: no test ran" fail
	fi
	dmesg --read-clear >"$RESULTS/dmesg-$t.txt" 2>&1
	if grep -E "$bad" "$RESULTS/dmesg-$t.txt" >/dev/null; then
		echo "kernel log after t_$t has reports:"
		cat "$RESULTS/dmesg-$t.txt"
		record "$t: kernel log clean" fail
	else
		record "$t: kernel log clean" ok
	fi
done

# Last: everything unloads, and (on the debug kernel) nothing leaked.
echo "=== teardown"
"$DIO_BUILD/tests/kmodctl" remove scsi_debug >/dev/null 2>&1
if [ -d /sys/module/dio_batch ]; then
	if "$DIO_BUILD/tests/kmodctl" remove dio_batch; then
		record "unload dio_batch" ok
	else
		record "unload dio_batch" fail
	fi
fi
if [ -e /sys/kernel/debug/kmemleak ]; then
	echo scan >/sys/kernel/debug/kmemleak; sleep 1
	echo scan >/sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak >"$RESULTS/kmemleak.txt"
	if [ -s "$RESULTS/kmemleak.txt" ]; then
		echo "kmemleak reports:"; cat "$RESULTS/kmemleak.txt"
		record "kmemleak clean" fail
	else
		record "kmemleak clean" ok
	fi
fi
dmesg --read-clear >"$RESULTS/dmesg-teardown.txt" 2>&1
if grep -E "$bad" "$RESULTS/dmesg-teardown.txt" >/dev/null; then
	cat "$RESULTS/dmesg-teardown.txt"
	record "teardown: kernel log clean" fail
else
	record "teardown: kernel log clean" ok
fi
echo "$pass $fail" >"$RESULTS/counts"
echo "guest: $pass passed, $fail failed"
[ "$fail" = 0 ]
