#!/bin/sh
# The cases of test_check, one shell function each, run from the top of the
# checkout: what make check's own machinery promises, tried on the host
# without a guest (a results directory made up for the purpose, a copy of
# the tree whose scripts only record that they ran).
#   tests/unit/check-cases.sh CASE
set -eu
top=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The summary says how many of a guest suite's cases are tests and how
# many the dioctl JSON validated on the host (tests/vm/json-cases.sh, as
# tests/vm/check.sh runs it), in all and program by program, and its last
# line is still the sum of every suite's counts as "N passed, N failed".
# The results directory is made up: t_dioctl kept two error documents
# (valid; --every-kind fails, as they are of one kind), t_stacks one
# (valid; the kinds it requires missing), t_repair none; a suite without
# JSON beside it.
summary_split() {
	man=$tmp/man
	mkdir "$man"
	# dioctl(1)'s error example: its JSON examples one a file, "\-" unescaped.
	awk -v dir="$man" '
		/^\.nf$/ { nf = 1; next }
		/^\.fi$/ { if (out) close(out); nf = 0; out = ""; next }
		nf && !out && /^\{$/ { out = sprintf("%s/man-%d.json", dir, ++n) }
		out { gsub(/\\-/, "-"); gsub(/\\e/, "\\"); print > out }
	' tools/dioctl.1
	error=$(grep -l '"status": "error"' "$man"/man-*.json | head -n 1)
	st=$(jq .exit_code "$error") || { echo "dioctl.1: no error example"; return 1; }
	res=$tmp/vm/6.1
	out=$tmp/results
	mkdir -p "$res/dioctl-json" "$res/stacks-json" "$out"
	cp "$error" "$res/dioctl-json/000.json"
	cp "$error" "$res/dioctl-json/001.json"
	printf '000.json\t%s\tfrob -j\n001.json\t%s\tfrob --json\n' "$st" "$st" >"$res/dioctl-json/index.tsv"
	cp "$error" "$res/stacks-json/000.json"
	printf '000.json\t%s\tquery /dev/x -j\n' "$st" >"$res/stacks-json/index.tsv"
	printf 'ok 1 - a\nok 2 - b\nnot ok 3 - c\nok 4 - d\n' >"$res/t_dioctl.out"
	printf 'ok 1 - a\nok 2 - b\n' >"$res/t_stacks.out"
	read -r jp jf <<-EOF
		$(tests/vm/json-cases.sh "$res" "$out/6.1.json-cases" 2>"$tmp/tap")
	EOF
	# json-check.py: the schema, each document, the kinds.
	if [ "$jp $jf" != "5 2" ]; then
		echo "json-cases.sh counted '$jp $jf', not '5 2':"
		cat "$tmp/tap"
		return 1
	fi
	# The guest's own counts (10 passed, 1 failed) and the JSON's, as check.sh adds them.
	echo "$((10 + jp)) $((1 + jf))" >"$out/6.1.counts"
	echo "6.1.0-test-amd64" >"$out/6.1.kver"
	echo "7 0" >"$out/unit.counts"
	tests/summary.sh "$out" >"$tmp/summary" && { echo "summary.sh: status 0 with failures"; return 1; }
	cat "$tmp/summary"
	bad=0
	has() { # LINE: the summary has it, spacing aside
		sed 's/  */ /g; s/^ //' "$tmp/summary" | grep -qxF -- "$1" ||
			{ echo "no line '$1' in the summary"; bad=$((bad + 1)); }
	}
	has "6.1 6.1.0-test-amd64 15 passed, 3 failed"
	has "tests 10 passed, 1 failed"
	has "JSON documents validated on the host 5 passed, 2 failed"
	has "t_dioctl: tests 3 passed, 1 failed; JSON on the host 3 passed, 1 failed"
	has "t_stacks: tests 2 passed, 0 failed; JSON on the host 2 passed, 1 failed"
	has "unit - 7 passed, 0 failed"
	[ "$(tail -n 1 "$tmp/summary")" = "22 passed, 3 failed" ] ||
		{ echo "last line '$(tail -n 1 "$tmp/summary")', not '22 passed, 3 failed'"; bad=$((bad + 1)); }
	! grep -q t_repair "$tmp/summary" || { echo "t_repair kept no JSON, but the summary names it"; bad=$((bad + 1)); }
	[ "$bad" = 0 ]
}

# A guest boot run.sh tried again (hung, or failed before the guest's user
# space) fails no test but is said: tests/vm/boot-retried.sh, as run.sh
# calls it, keeps the console and records the boot; the summary prints it
# with the console's path and its last line is unchanged, and make flakes'
# table counts it by why.  flakes.sh runs from a copy of tests/vm whose
# check.sh makes up the results of three runs of lane 6.1: a boot that
# failed in runs 1 and 3, one that hung in run 3, a failed test in run 2.
boot_retries() {
	res=$tmp/vm/6.12
	out=$tmp/results
	mkdir -p "$res" "$out"
	echo "[    2.6] Oops: int3" >"$res/console.log"
	DIO_RESULTS=$out tests/vm/boot-retried.sh "$res" failed \
		"KERNEL FAILED IN BOOT, before user space and before any test: Oops: int3"
	if [ ! -f "$res/console-boot-failed.log" ] || [ -e "$res/console.log" ]; then
		echo "the console was not kept as console-boot-failed.log"
		return 1
	fi
	echo "9 0" >"$out/6.12.counts"
	echo "4 0" >"$out/unit.counts"
	# A lane's log as check-all.sh keeps it: run.sh's word is no failure,
	# nor is a TAP comment that says FAILED (t_powercut's verdicts; a unit
	# test's output about made-up runs, as this one's).
	printf '%s\n' "[6.12] vm: KERNEL FAILED IN BOOT, before user space and before any test: Oops: int3 (console kept as console-boot-failed.log); booting again" \
		"[6.12] # 156 points: all committed transactions there 49; FAILED 0;" \
		"[6.12] check[6.12]: 9 passed, 0 failed" >"$out/lane-1.log"
	printf '%s\n' "ok 2 - test_boot_retries" "#   flakes: boot tried again: KERNEL FAILED IN BOOT: Oops" >"$out/test_check.out"
	# What a host leaves out is said, not counted.
	echo "dkms: 6.1 is not this host's kernel" >"$out/dkms.not-run"
	rc=0
	tests/summary.sh "$out" >"$tmp/summary" || rc=$?
	cat "$tmp/summary"
	bad=0
	[ "$rc" = 0 ] || { echo "summary.sh: status $rc, with nothing failed but a boot tried again"; bad=$((bad + 1)); }
	! grep -q '^failures:' "$tmp/summary" || { echo "the summary lists the boot tried again as a failure"; bad=$((bad + 1)); }
	grep -A1 -xF "left out of this run (not counted):" "$tmp/summary" | grep -qxF "  dkms: 6.1 is not this host's kernel" ||
		{ echo "the summary does not say what the run left out"; bad=$((bad + 1)); }
	grep -qxF "guest boots tried again (not counted as failed): 1" "$tmp/summary" ||
		{ echo "the summary does not count the boot tried again"; bad=$((bad + 1)); }
	grep -qxF "  $res: KERNEL FAILED IN BOOT, before user space and before any test: Oops: int3; its console: $res/console-boot-failed.log" "$tmp/summary" ||
		{ echo "the summary does not name the boot tried again and its console"; bad=$((bad + 1)); }
	[ "$(tail -n 1 "$tmp/summary")" = "13 passed, 0 failed" ] ||
		{ echo "last line '$(tail -n 1 "$tmp/summary")', not '13 passed, 0 failed'"; bad=$((bad + 1)); }

	fl=$tmp/fl
	mkdir -p "$fl/tests/vm"
	cp tests/vm/flakes.sh tests/vm/boot-retried.sh "$fl/tests/vm/"
	cat >"$fl/tests/vm/check.sh" <<-'EOF'
		#!/bin/sh
		# A made-up run: build/vm/6.1 as run.sh and the guest leave it.
		here=$(dirname "$0") vm=$(dirname "$0")/../../build/vm/6.1
		n=$(($(cat "$here/n" 2>/dev/null || echo 0) + 1))
		echo "$n" >"$here/n"
		rm -rf "$vm" && mkdir -p "$vm"
		echo "ok 1 - a" >"$vm/t_x.out"
		if [ "$n" != 2 ]; then
			echo "Oops" >"$vm/console.log"
			DIO_RESULTS=$vm/results "$here/boot-retried.sh" "$vm" failed "KERNEL FAILED IN BOOT: Oops"
		else
			echo "not ok 2 - b" >>"$vm/t_x.out"
		fi
		if [ "$n" = 3 ]; then
			echo "..." >"$vm/console.log"
			DIO_RESULTS=$vm/results "$here/boot-retried.sh" "$vm" hung "BOOT HUNG"
		fi
		echo "check[6.1]: 1 passed, 0 failed"
	EOF
	chmod +x "$fl/tests/vm/check.sh"
	rc=0
	LANES=6.1 RUNS=3 "$fl/tests/vm/flakes.sh" >"$tmp/flakes" 2>&1 || rc=$?
	cat "$tmp/flakes"
	[ "$rc" = 1 ] || { echo "flakes.sh: status $rc with a test failed, not 1"; bad=$((bad + 1)); }
	row() { # LANE COUNT NAME: the table has the row, spacing aside
		sed 's/  */ /g; s/^ //' "$tmp/flakes" | grep -qxF -- "$1 $2 $3" ||
			{ echo "no row '$1 $2 $3' in flakes.sh's table"; bad=$((bad + 1)); }
	}
	row 6.1 2 "boot tried again (failed)"
	row 6.1 1 "boot tried again (hung)"
	row 6.1 1 "b"
	[ -f "$fl/build/flakes/6.1-3/console-boot-hung.log" ] ||
		{ echo "run 3's console of the boot that hung is not in build/flakes/6.1-3"; bad=$((bad + 1)); }
	grep -qF "its console: $fl/build/flakes/6.1-1/console-boot-failed.log" "$tmp/flakes" ||
		{ echo "flakes.sh does not name run 1's console of the failed boot"; bad=$((bad + 1)); }
	# Boots tried again and no test failed: in the table, status 0.
	echo 0 >"$fl/tests/vm/n"
	# shellcheck disable=SC2016 # the made-up check.sh's $n
	sed -i 's/"$n" != 2/"$n" != 0/' "$fl/tests/vm/check.sh"
	rc=0
	LANES=6.1 RUNS=2 "$fl/tests/vm/flakes.sh" >"$tmp/flakes" 2>&1 || rc=$?
	cat "$tmp/flakes"
	[ "$rc" = 0 ] || { echo "flakes.sh: status $rc with boots tried again and no test failed, not 0"; bad=$((bad + 1)); }
	row 6.1 2 "boot tried again (failed)"
	[ "$bad" = 0 ]
}

# make -n prints what the check targets would do and runs none of it: make
# runs a recipe line naming $(MAKE) even with -n, so make check's run must
# not be on such a line.  In a copy of the tree whose every script (but
# scripts/version.sh and scripts/kver.sh, which the Makefile reads as it
# parses) only records that it ran, make -n of each target must finish
# within a minute, print something, record nothing and make no build/.
make_dry_run() {
	copy=$tmp/tree
	mkdir "$copy"
	tar -C "$top" --exclude=./build --exclude=./.git -cf - . | tar -C "$copy" -xf -
	ran=$tmp/ran
	find "$copy" -type f \( -name '*.sh' -o -name '*.py' -o -perm -u+x \) \
		! -path "$copy/scripts/version.sh" ! -path "$copy/scripts/kver.sh" >"$tmp/scripts"
	[ "$(wc -l <"$tmp/scripts")" -ge 20 ] || { echo "only $(wc -l <"$tmp/scripts") scripts found"; return 1; }
	while IFS= read -r s; do
		printf '#!/bin/sh\necho "%s $*" >>"%s"\n' "${s#"$copy"/}" "$ran" >"$s"
		chmod +x "$s"
	done <"$tmp/scripts"
	bad=0
	for t in check check-debug check-kcsan; do
		rc=0
		timeout -k 5 60 make -n -C "$copy" --no-print-directory "$t" >"$tmp/out" 2>&1 || rc=$?
		if [ "$rc" != 0 ]; then
			echo "make -n $t: status $rc"
			bad=$((bad + 1))
		fi
		grep -q 'tests/summary.sh' "$tmp/out" ||
			{ echo "make -n $t did not print the summary's command"; bad=$((bad + 1)); }
		if [ -s "$ran" ]; then
			echo "make -n $t ran:"
			sed 's/^/  /' "$ran"
			bad=$((bad + 1))
			: >"$ran"
		fi
		if [ -e "$copy/build" ]; then
			echo "make -n $t made $(find "$copy/build" | head -n 5 | tr '\n' ' ')"
			bad=$((bad + 1))
			rm -rf "$copy/build"
		fi
		[ "$rc" = 0 ] || sed 's/^/  /' "$tmp/out" | tail -n 20
	done
	[ "$bad" = 0 ]
}

# make demo boots the release's own kernel, read from /etc/os-release
# (DIO_OS_RELEASE stands in for it): 6.1 on Debian 12, 6.12 on Debian 13,
# DEMO_KERNEL's where the user asks for one the release can have, and
# refuses, naming what it can boot, a kernel or a release it cannot.
demo_kernel() {
	bad=0
	osr() { printf 'PRETTY_NAME="Debian GNU/Linux"\nID=debian\n%s\n' "$1" >"$tmp/os-release"; }
	want() { # WANT [DEMO_KERNEL]: what demo.sh --kernel prints
		got=$(DIO_OS_RELEASE=$tmp/os-release DEMO_KERNEL=${2:-} tests/vm/demo.sh --kernel 2>&1) || got="failed: $got"
		[ "$got" = "$1" ] || { echo "$(tail -n 1 "$tmp/os-release"), DEMO_KERNEL='${2:-}': '$got', not '$1'"; bad=$((bad + 1)); }
	}
	osr VERSION_CODENAME=bookworm
	want "6.1 Debian 12's kernel (6.1)"
	want "6.12 bookworm-backports' kernel (6.12)" 6.12
	want "7.3 trixie-backports' kernel (7.3)" 7.3
	osr VERSION_CODENAME=trixie
	want "6.12 Debian 13's kernel (6.12)"
	want "7.3 trixie-backports' kernel (7.3)" 7.3
	want "6.1 Debian 12's kernel (6.1)" 6.1
	want "failed: demo: DEMO_KERNEL=6.6: on Debian 13 the demo boots 6.1, 6.12 or 7.3" 6.6
	osr VERSION_CODENAME=forky
	want "failed: demo: forky is neither Debian 12 (bookworm) nor Debian 13 (trixie): no kernel of its own to show"
	# No codename: Debian 12, as scripts/deps.sh takes it.
	osr VERSION_ID=12
	want "6.1 Debian 12's kernel (6.1)"
	[ "$bad" = 0 ]
}

# make demo installs only its own packages (scripts/deps.sh --demo), all
# of them in the whole list that make check installs, on either release.
demo_packages() {
	bad=0
	for r in bookworm trixie; do
		printf 'VERSION_CODENAME=%s\n' "$r" >"$tmp/os-release"
		DIO_OS_RELEASE=$tmp/os-release scripts/deps.sh --list | sort >"$tmp/all"
		DIO_OS_RELEASE=$tmp/os-release scripts/deps.sh --demo --list | sort >"$tmp/demo"
		[ "$(wc -l <"$tmp/demo")" -ge 5 ] || { echo "$r: only $(wc -l <"$tmp/demo") demo packages"; bad=$((bad + 1)); }
		extra=$(comm -23 "$tmp/demo" "$tmp/all" | paste -s -d ' ' -)
		[ -z "$extra" ] || { echo "$r: demo packages not in the whole list: $extra"; bad=$((bad + 1)); }
		cmp -s "$tmp/demo" "$tmp/all" && { echo "$r: the demo's list is the whole list"; bad=$((bad + 1)); }
	done
	[ "$bad" = 0 ]
}

"$1"
