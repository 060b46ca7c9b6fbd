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

"$1"
