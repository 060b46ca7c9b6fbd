#!/bin/sh
# Sum the counts every suite of this run recorded, one line per suite with
# the kernel release it ran on (NAME.kver, written by tests/vm/check.sh),
# under it, for a guest suite with dioctl JSON validated on the host, how
# many of its cases are tests and how many that JSON, program by program,
# and the module coverage of the debug run (debug.coverage);
# then every guest boot run.sh tried again (boot-retries, written by
# tests/vm/boot-retried.sh: not a failed test, but said, with the console
# of the boot that failed);
# then what the run left out on this host and why (NAME.not-run);
# the last line, "N passed, N failed", is the one CI reads.  Exit 1 when
# anything failed or nothing ran.  The failures the lanes printed (TAP
# "not ok" lines and the runners' "FAILED:" lines) come above the table and
# again, with the suites that failed, just above the last line, so that
# even a short tail of a CI log names what failed (the phases' table is
# long); not run.sh's word that it boots a guest again ("vm: KERNEL FAILED
# IN BOOT ...; booting again"), which is no failure and is listed below
# the table, nor TAP comments ("# ..."), which say FAILED in verdict counts
# (t_powercut) and in unit tests' made-up runs (test_check).
dir=${1:-build/results}
pass=0 fail=0 failed_suites=
failures=$(cat "$dir"/lane-*.log "$dir"/*.out 2>/dev/null |
	grep -E '(^|[] ])not ok [0-9]|FAILED' |
	grep -v -E '# (TODO|SKIP)|(^|\] )vm: .*; booting again$|^(\[[^]]*\] )?[[:space:]]*#' | head -n 40)
if [ -n "$failures" ]; then
	echo "failures:"
	printf '%s\n' "$failures" | sed 's/^/  /'
fi
for c in "$dir"/*.counts; do
	[ -f "$c" ] || continue
	name=$(basename "$c" .counts)
	kver=
	[ -s "$dir/$name.kver" ] && read -r kver <"$dir/$name.kver"
	read -r p f <"$c"
	printf '  %-14s %-24s %4d passed, %d failed\n' "$name" "${kver:--}" "$p" "$f"
	# A guest suite's cases that are dioctl JSON documents validated on the
	# host (NAME.json-cases, tests/vm/json-cases.sh), not tests: how many,
	# and how many are tests, in the suite and in each program that kept JSON.
	[ -s "$dir/$name.json-cases" ] && awk -F '\t' -v p="$p" -v f="$f" '
		{ jp += $2; jf += $3; prog[NR] = $1; j[NR] = $2 " passed, " $3 " failed"; t[NR] = $4 " passed, " $5 " failed" }
		END {
			printf "    %-37s %4d passed, %d failed\n", "tests", p - jp, f - jf
			printf "    %-37s %4d passed, %d failed\n", "JSON documents validated on the host", jp, jf
			for (i = 1; i <= NR; i++)
				printf "      %s: tests %s; JSON on the host %s\n", prog[i], t[i], j[i]
		}' "$dir/$name.json-cases"
	pass=$((pass + p)) fail=$((fail + f))
	[ "$f" = 0 ] || failed_suites="$failed_suites $name"
done
# Guest boots that hung, or failed before the guest's user space, and were
# tried again (tests/vm/run.sh's boot_retry): no test had run, so none
# failed, but the run says so, and where the failed boot's console is.
if [ -s "$dir/boot-retries" ]; then
	echo "guest boots tried again (not counted as failed): $(wc -l <"$dir/boot-retries")"
	awk -F '\t' '{ printf "  %s: %s; its console: %s\n", $1, $4, $3 }' "$dir/boot-retries"
fi
# What this run left out and where it is had instead (NAME.not-run, one
# line each, written by the checks that leave it out): not a failure, but
# never unsaid.
if ls "$dir"/*.not-run >/dev/null 2>&1; then
	echo "left out of this run (not counted):"
	cat "$dir"/*.not-run | sed 's/^/  /'
fi
# How long each phase took (check-all.sh, check.sh, the runners), in the
# order they ended: what a run on a new machine spends its time on.
if [ -s "$dir/phases" ]; then
	echo "phases (seconds, in the order they ended):"
	awk -F '\t' '{ printf "  %6d  %s\n", $2, $1 }' "$dir/phases"
fi
# The debug run's module coverage (tests/vm/coverage.py), when it ran.
[ -s "$dir/debug.coverage" ] && sed 's/^/  /' "$dir/debug.coverage"
[ $((pass + fail)) = 0 ] && fail=1
if [ "$fail" != 0 ]; then
	echo "suites that failed:${failed_suites:- none recorded counts}"
	[ -z "$failures" ] || printf '%s\n' "$failures" | head -n 10 | sed 's/^/  /'
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
