#!/bin/sh
# Runs inside the guest (tests/vm/run.sh boots it): every guest test
# program, one after another, like liburing's runner.  The kernel log of
# the boot, the log each program caused and the log of the teardown are
# saved ($RESULTS/dmesg-boot.txt, dmesg-NAME.txt, dmesg-teardown.txt) and
# checked for the reports in tests/vm/report-patterns (BUG, WARNING, Oops,
# KASAN, lockdep, refcount, list corruption, stalls, kmemleak ...).  On a
# kernel with kmemleak (always on the debug kernel) a scan after the suite
# is one more case.  Writes counts to $RESULTS/counts.
#   env: DIO_BUILD (build dir), DIO_KO, DIO_MODDIR, RESULTS, TESTS (optional
#   list of test names to run), TEST_TIMEOUT (seconds per program),
#   DIO_FLAVOUR (debug: kmemleak must be there), DIO_PART (1/2 or 2/2: one
#   half of the debug kernel's programs, see debug_part1 below)
set -u
# Per program, a hang guard: a program's own waits are hang guards of
# seconds to minutes (x tl_slow_factor() on the debug and kcsan kernels, see
# tests/lib/testlib.h); its time budgets are at most 30 s (t_fuzz,
# t_stress, t_unload) or 60 s (t_kfuzz), which the
# fuzzers stretch up to four times on a slow machine; t_faultinj's sweeps
# take up to 8 minutes on a loaded debug guest.  Room for five times a
# program's time in make check: on a machine loaded four times over (a
# flake hunt beside four more guests, 2026-12-06) t_dioctl and t_fio took
# 600 s each on 6.1 (155 and 220 in make check) and t_faultinj 646 s on
# the debug kernel (267): the old limits, 600 and 1,200 s, failed
# programs that were still making progress.
case "${DIO_FLAVOUR:-}" in
debug | kcsan) : "${TEST_TIMEOUT:=2400}" ;;
*) : "${TEST_TIMEOUT:=1200}" ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
patterns=$here/../vm/report-patterns
# One extended regular expression: the file's lines joined with '|'.
bad=$(sed -e '/^#/d' -e '/^[[:space:]]*$/d' "$patterns" | paste -s -d '|' -)
if [ -z "$bad" ]; then
	echo "FAILED: no report patterns in $patterns"
	echo "0 1" >"$RESULTS/counts"
	exit 1
fi
pass=0 fail=0
export DIO_KO DIO_MODDIR DIO_BUILD
# Which programs run where.  The programs that test user-space tools
# through the module (dioctl, the fio engine, the examples) run on the stock
# kernels; the debug kernel's run, the longest, keeps to the module's own
# tests (the same module paths, under KASAN, lockdep and kmemleak).  The
# coverage-guided fuzzer needs KCOV: the debug and kcsan kernels only.  The
# kcsan kernel (KCSAN, UBSAN) runs the programs with the most concurrency.
# make check on two cores runs the debug kernel's programs in two guests,
# one in each lane (DIO_PART=1/2 and 2/2, tests/vm/check-all.sh): part 1
# the programs below, part 2 the others, about half the time each (each
# program's time: build/results/debug-p*.times).  t_io (about 40 s, now
# the t_io_* programs) and t_fuzz (about 40 s) went to part 2 when part 1 had taken 982 s to part 2's 850 in
# a fresh make check; t_handle (about 110 s) to part 1 when t_faultinj's
# sweeps had lost half their points and t_stacks half its LIO data
# (part 1 then 612 s of QEMU CPU, part 2 about 790 by its programs' times).
tool_tests=" dioctl examples fio repair formats sqlite powercut "
# Where the tool programs run.  They drive the module through the same
# ioctls the module's own programs test on every kernel, so they run where
# the tools themselves meet a different kernel: all of them on 6.1 (Debian
# 12, whose fio the engine is built against), dioctl and the examples on
# 7.3 too (NVMe's own PI path from 6.14 on, which dioctl --raw takes), and
# on 6.12 only t_repair (dioctl scrub --repair-from, which issue 32
# wants on every stock kernel; one to two minutes): the others are a
# lane's third of its time, make check's budget.  t_sqlite runs on all
# three; t_powercut (SQLite through a replayed power cut, about 90 s) on
# 6.12, the shortest lane: what it tests is the VFS's and SQLite's order
# of writes and flushes, which no kernel changes.  t_formats (the NVMe
# format matrix, with dioctl and nvme-cli) runs on all three: what each
# kernel offers for each format differs, and issue 49's PI-last formats
# exist only from 6.12.
tools_on_61=" dioctl examples fio repair formats sqlite "
tools_on_612=" repair formats sqlite powercut "
tools_on_73=" dioctl examples repair formats sqlite "
# The programs that compare dio_batch with what a kernel itself offers,
# which exists only on the newest stock kernel: t_peer (upstream's user PI
# through io_uring, Linux 6.14; 6.1 and 6.12 would ignore the attribute)
# runs on 7.3 alone, never reported there as passed elsewhere.
only_on_73=" peer "
kcov_tests=" kfuzz "
kcsan_tests=" stress fuzz kfuzz io_faults "
debug_part1=" stacks bounds kfuzz pi handle "
case "${DIO_PART:-}" in
'' | 1/2 | 2/2) ;;
*)
	echo "run-suite: DIO_PART=$DIO_PART: 1/2 or 2/2"
	echo "0 1" >"$RESULTS/counts"
	exit 1
	;;
esac
tests=${TESTS:-$(for b in "$DIO_BUILD"/tests/guest/t_*; do
	[ -f "$b" ] || continue
	t=${b##*/t_}
	case "${DIO_PART:-}" in
	1/2) case "$debug_part1" in *" $t "*) ;; *) continue ;; esac ;;
	2/2) case "$debug_part1" in *" $t "*) continue ;; esac ;;
	esac
	case "$only_on_73" in *" $t "*) [ "${DIO_FLAVOUR:-}" = 7.3 ] || continue ;; esac
	case "${DIO_FLAVOUR:-}" in
	debug) case "$tool_tests" in *" $t "*) continue ;; esac ;;
	kcsan) case "$kcsan_tests" in *" $t "*) ;; *) continue ;; esac ;;
	*) case "$kcov_tests" in *" $t "*) continue ;; esac ;;
	esac
	case "${DIO_FLAVOUR:-}:$tool_tests" in
	6.1:*" $t "*) case "$tools_on_61" in *" $t "*) ;; *) continue ;; esac ;;
	6.12:*" $t "*) case "$tools_on_612" in *" $t "*) ;; *) continue ;; esac ;;
	7.3:*" $t "*) case "$tools_on_73" in *" $t "*) ;; *) continue ;; esac ;;
	*:*" $t "*) continue ;;
	esac
	echo "$t"
done)}
[ -z "${TESTS:-}" ] && case "${DIO_FLAVOUR:-}" in
debug) echo "debug kernel: the tool programs ($tool_tests) run on the stock kernels only,${only_on_73}on 7.3 only${DIO_PART:+; part $DIO_PART: $(printf '%s\n' "$tests" | tr '\n' ' ')}" ;;
kcsan) echo "kcsan kernel: runs$kcsan_tests only" ;;
*) echo "stock kernel: the KCOV programs ($kcov_tests) run on the debug and kcsan kernels only; the tool programs on 6.1 ($tools_on_61), 6.12 ($tools_on_612) and 7.3 ($tools_on_73);${only_on_73}on 7.3 only" ;;
esac

record() { # name ok|fail
	if [ "$2" = ok ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAILED: $1"; fi
}

# log_clean NAME: read and clear the kernel log into $RESULTS/dmesg-NAME.txt
# and record the case "NAME: kernel log clean".  Reports are shown with
# their context; the whole log stays in the file.
log_clean() {
	log=$RESULTS/dmesg-$1.txt
	dmesg --read-clear >"$log" 2>&1
	if grep -E "$bad" "$log" >/dev/null; then
		echo "kernel log ($1) has reports (all of it: dmesg-$1.txt):"
		grep -E -B5 -A40 "$bad" "$log" | head -n 400
		record "$1: kernel log clean" fail
	else
		record "$1: kernel log clean" ok
	fi
}

# uptime_cs: the guest's uptime in hundredths of a second.
uptime_cs() {
	read -r up _ </proc/uptime
	echo "${up%.*}${up#*.}" | sed 's/^0*//; s/^$/0/'
}

# case_times FILE: copies stdin to stdout, and writes each test case's
# time (from the line before its "ok"/"not ok" line) to FILE as
# "SECONDS<TAB>NAME", for finding what is slow inside a program.  A shell
# loop: read takes a pipe a line at a time, where mawk waits for a block.
case_times() {
	ct_t0=$(uptime_cs)
	: >"$1"
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case $line in
		"ok "*" - "* | "not ok "*" - "*)
			ct_now=$(uptime_cs)
			ct_d=$((ct_now - ct_t0))
			printf '%d.%02d\t%s\n' $((ct_d / 100)) $((ct_d % 100)) "${line#* - }" >>"$1"
			ct_t0=$ct_now
			;;
		esac
	done
}

# The boot's own log: reports there belong to no test, but fail the run.
log_clean boot
: >"$RESULTS/times"
for t in $tests; do
	bin=$DIO_BUILD/tests/guest/t_$t
	echo "=== $t"
	if [ ! -x "$bin" ]; then
		echo "missing test program $bin"
		record "$t" fail
		continue
	fi
	t0=$(uptime_cs)
	# Line-buffered, so that case_times sees each "ok" line as it is
	# printed; the status through a file, past the pipe.
	{
		CMOCKA_MESSAGE_OUTPUT=TAP timeout -k 10 "$TEST_TIMEOUT" stdbuf -oL "$bin" 2>&1
		echo $? >"$RESULTS/.rc-$t"
	} | case_times "$RESULTS/t_$t.case-times" >"$RESULTS/t_$t.out"
	rc=$(cat "$RESULTS/.rc-$t")
	rm -f "$RESULTS/.rc-$t"
	took=$(($(uptime_cs) - t0))
	cat "$RESULTS/t_$t.out"
	# Each program's wall time in the guest, for finding the slow ones
	# (the host's check.sh copies the list to build/results/TAG.times).
	printf 't_%s\t%d.%02d\n' "$t" $((took / 100)) $((took % 100)) >>"$RESULTS/times"
	p=$(grep -c '^ok ' "$RESULTS/t_$t.out")
	f=$(grep -c '^not ok ' "$RESULTS/t_$t.out")
	pass=$((pass + p)) fail=$((fail + f))
	failed=$f
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "t_$t exited with status $rc without a failed test (crash or timeout)"
		record "$t: exit status" fail
		failed=1
	fi
	if [ $((p + f)) = 0 ]; then
		record "$t: no test ran" fail
		failed=1
	fi
	log_clean "$t"
	if [ "$failed" != 0 ]; then
		echo "t_$t failed (status $rc); the kernel's side, tail of dmesg-$t.txt:"
		tail -n 60 "$RESULTS/dmesg-$t.txt"
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
# kmemleak_known FILE: of the reports in FILE (kmemleak's format), the
# known 6.1 bug's and the others: prints "ACCEPTED OTHER", the others'
# reports on stderr.  6.1's sysfs_slab_add() leaks a cache's kobject name
# when kobject_init_and_add() fails, which t_faultinj's sweep of the
# module's load makes happen for the caches the load creates.  Accepted,
# wherever in the run kmemleak comes to report it: a report whose
# backtrace has kobject_set_name_vargs() under sysfs_slab_add() and whose
# object is the name of one of the module's caches (dio_kreq, dio_ctx,
# dio_file, dio_handle) or of its bio set's ("bio-N").  Nothing else.
kmemleak_known() {
	awk '
	function flush() {
		if (!inrep) return
		if (slab && name && cache) acc++
		else { other++; printf "%s", rep > "/dev/stderr" }
	}
	/^unreferenced object/ { flush(); inrep = 1; rep = ""; slab = name = cache = 0 }
	{ rep = rep $0 "\n" }
	/sysfs_slab_add/ { slab = 1 }
	/kobject_set_name_vargs/ { name = 1 }
	/^    [0-9a-f][0-9a-f] .*  (dio_(kreq|ctx|file|handle)|bio-[0-9]+)\./ { cache = 1 }
	END { flush(); print acc + 0, other + 0 }' "$1"
}

# kmemleak reports only objects older than 5 s (MSECS_MIN_AGE) that two
# scans found unreferenced: scan, wait past that age, scan again.  The 6 s
# are a lower bound (sleep never ends early), safe however loaded the guest.
kml=/sys/kernel/debug/kmemleak
if [ "${DIO_FLAVOUR:-}" = debug ] || [ -e "$kml" ]; then
	why=
	if [ ! -e "$kml" ]; then
		why="$kml is missing (kmemleak not built in, or debugfs not mounted)"
	elif ! echo scan >"$kml"; then
		why="writing scan to $kml failed"
	else
		sleep 6
		if ! echo scan >"$kml"; then
			why="writing scan to $kml failed (second scan)"
		elif ! cat "$kml" >"$RESULTS/kmemleak.txt"; then
			why="reading $kml failed"
		else
			# shellcheck disable=SC2046 # two numbers
			set -- $(kmemleak_known "$RESULTS/kmemleak.txt" 2>"$RESULTS/kmemleak-other.txt")
			echo "# kmemleak: $1 leaks of sysfs_slab_add()'s kobject name for a cache" \
				"of the module (a 6.1 bug) accepted, $2 other reports"
			if [ "$2" != 0 ]; then
				echo "kmemleak reports:"; cat "$RESULTS/kmemleak-other.txt"
				why="kmemleak reports leaks"
			fi
		fi
	fi
	# A kmemleak that turned itself off (out of pool memory, an error)
	# reports nothing: that is not clean.
	off=$(dmesg | cat "$RESULTS"/dmesg-*.txt - | grep -E 'kmemleak: .*disabled')
	if [ -n "$off" ]; then
		echo "$off"
		why=${why:-kmemleak was disabled}
	fi
	if [ -n "$why" ]; then
		echo "kmemleak: $why"
		record "kmemleak clean" fail
	else
		record "kmemleak clean" ok
	fi
fi
# Coverage: on a kernel with gcov (the debug flavour; the module is built
# with DIO_BATCH_COVERAGE=1) the module's counters, which gcov keeps across
# its unloads, go to $RESULTS/gcov for the host's report (tests/vm/coverage.py).
gcov=/sys/kernel/debug/gcov
if [ -d "$gcov" ]; then
	mkdir -p "$RESULTS/gcov"
	n=0
	find "$gcov" -path '*/src/module/*.gcda' >"$RESULTS/gcov.list"
	while read -r f; do
		cat "$f" >"$RESULTS/gcov/${f##*/}" && n=$((n + 1))
	done <"$RESULTS/gcov.list"
	echo "gcov: $n counter files of the module copied"
	if [ "$n" -gt 0 ]; then record "gcov counters saved" ok; else record "gcov counters saved" fail; fi
elif [ "${DIO_FLAVOUR:-}" = debug ]; then
	echo "gcov: $gcov is missing on the debug kernel"
	record "gcov counters saved" fail
fi
log_clean teardown
echo "$pass $fail" >"$RESULTS/counts"
echo "guest: $pass passed, $fail failed"
[ "$fail" = 0 ]
