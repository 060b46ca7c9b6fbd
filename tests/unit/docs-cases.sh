#!/bin/sh
# The cases of test_docs, one shell function each, run from the top of the
# checkout: what the documentation the packages ship promises.
#   tests/unit/docs-cases.sh CASE
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A struct's members, one a line, "TYPE NAME", comments and spacing gone;
# an anonymous union is "union {", its members, "}".
# From a header: the lines between "struct NAME {" and "};".
header_struct() { # NAME FILE...
	name=$1
	shift
	sed -n "/^struct $name {\$/,/^};/p" "$@" | sed -e '1d;$d' -e 's|/\*.*\*/||; s|//.*||' \
		-e 's/__extension__//' | normalize
}
# From a man page: the .B lines of the SYNOPSIS from ".B struct NAME {"
# to ".B };", each member a quoted string.
man_struct() { # NAME FILE
	sed -n '/^\.SH SYNOPSIS/,/^\.SH/p' "$2" | sed -n "/^\\.B struct $1 {\$/,/^\\.B };/p" |
		sed -e '1d;$d' -e 's/^\.B "\(.*\)"$/\1/' -e 's/\\-/-/g' -e 's|/\*.*\*/||' | normalize
}
normalize() {
	sed -e 's/[[:space:]][[:space:]]*/ /g; s/^ //; s/ *;* *$//; s/ *\[/[/' | grep -v '^$' || true
}

# Every struct a man page's SYNOPSIS shows is the struct the headers
# (uapi/linux/dio_batch.h, libdioctl/include/*.h) define: the same members,
# of the same types, in the same order.
man_structs() {
	n=0 bad=0
	for page in libdioctl/man/*.[37]; do
		sed -n '/^\.SH SYNOPSIS/,/^\.SH/p' "$page" |
			sed -n 's/^\.B struct \([a-z_0-9]*\) {$/\1/p' >"$tmp/names"
		while read -r s; do
			n=$((n + 1))
			header_struct "$s" uapi/linux/dio_batch.h libdioctl/include/*.h >"$tmp/h"
			man_struct "$s" "$page" >"$tmp/m"
			if [ ! -s "$tmp/h" ]; then
				echo "$page: struct $s: no header defines it"
				bad=$((bad + 1))
			elif ! diff -u --label "headers: struct $s" --label "$page" "$tmp/h" "$tmp/m"; then
				bad=$((bad + 1))
			fi
		done <"$tmp/names"
	done
	echo "$n struct(s) in man page synopses, $bad differ from the headers"
	[ "$n" -gt 0 ] && [ "$bad" = 0 ]
}

# Every function libdioctl and libdiosqlite export (LIB/LIB.map, the
# version script the library is linked with) has its man page,
# LIB/man/NAME.3, or a ".so" link to the page that documents it with
# others; that page names it under NAME and declares it in its SYNOPSIS.
# And every section 3 page is of an exported function.
man_symbols_of() { # LIB MIN
	local lib=$1 min=$2 n bad=0 s page to
	# Its comments gone: those on one line, then those on several.
	sed -e 's|/\*.*\*/||' -e '/\/\*/,/\*\//d' "$lib/$lib.map" |
		sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z_0-9]*\);$/\1/p' | sort -u >"$tmp/syms"
	n=$(wc -l <"$tmp/syms")
	[ "$n" -ge "$min" ] || { echo "only $n symbols read from $lib.map"; return 1; }
	while read -r s; do
		page=$lib/man/$s.3
		if [ ! -f "$page" ]; then
			echo "$s: exported ($lib.map), but there is no $page"
			bad=$((bad + 1))
			continue
		fi
		to=$(sed -n "1s|^\.so man3/\(.*\)\$|$lib/man/\1|p" "$page")
		if [ -n "$to" ]; then
			[ -f "$to" ] || { echo "$page: .so names $to, which is not there"; bad=$((bad + 1)); continue; }
			page=$to
		fi
		sed -n '/^\.SH NAME/,/^\.SH SYNOPSIS/p' "$page" | grep -qw -- "$s" ||
			{ echo "$page: NAME does not name $s"; bad=$((bad + 1)); }
		sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$page" | grep -q "[ *]$s(" ||
			{ echo "$page: SYNOPSIS does not declare $s"; bad=$((bad + 1)); }
	done <"$tmp/syms"
	for page in "$lib"/man/*.3; do
		grep -qx "$(basename "$page" .3)" "$tmp/syms" ||
			{ echo "$page: $(basename "$page" .3) is not exported ($lib.map)"; bad=$((bad + 1)); }
	done
	echo "$lib: $n symbols exported, $bad problem(s) with their man pages"
	[ "$bad" = 0 ]
}
man_symbols() {
	local st=0
	man_symbols_of libdioctl 30 || st=1
	man_symbols_of libdiosqlite 3 || st=1
	return $st
}

# The documentation's claims about what make check tests hold: README.md
# and docs/*.md (docs/testing.md says it) name as many QEMU NVMe namespaces
# as tests/vm/run.sh attaches (the loop that makes a backing file for
# each), and docs/kernels.md's Kernels table says "yes" under "tested by
# make check" for exactly the kernels the Makefile's KERNELS has by default.
readme_claims() {
	bad=0
	n=$(awk '/truncate .*nvme\$i\.img/ && prev ~ /^for i in [0-9 ]*; do$/ {
		sub(/^for i in /, "", prev); sub(/; do$/, "", prev); print split(prev, a, " ") }
		{ prev = $0 }' tests/vm/run.sh)
	[ "${n:-0}" -gt 0 ] || { echo "tests/vm/run.sh: no loop over the namespaces' backing files read"; return 1; }
	set -- zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen \
		fifteen sixteen seventeen eighteen nineteen twenty
	[ "$n" -lt $# ] || { echo "run.sh attaches $n namespaces, a number without a word here"; return 1; }
	shift "$n"
	for doc in README.md docs/*.md; do
		tr '\n' ' ' <"$doc" | tr -s ' ' | grep -o '[A-Za-z0-9]* QEMU NVMe namespaces' |
			sed "s|^|$doc |" || true
	done >"$tmp/ns"
	[ -s "$tmp/ns" ] || { echo "README.md and docs/ name no number of QEMU NVMe namespaces"; bad=$((bad + 1)); }
	while read -r doc said _; do
		[ "$said" = "$1" ] || [ "$said" = "$n" ] ||
			{ echo "$doc: $said QEMU NVMe namespaces; run.sh attaches $n"; bad=$((bad + 1)); }
	done <"$tmp/ns"
	kernels=" $(sed -n 's/^KERNELS[[:space:]]*?=[[:space:]]*//p' Makefile) "
	[ "$kernels" != "  " ] || { echo "no KERNELS default in the Makefile"; return 1; }
	awk '/^#+ Kernels$/ { k = 1; next } k && /^\| kernel \|/ { t = 1; next }
		t && !/^\|/ { exit } t && !/^\| ---/ { print }' docs/kernels.md |
		awk -F ' [|] ' '{ print $1 "\t" $3 }' >"$tmp/rows"
	[ "$(wc -l <"$tmp/rows")" -ge 5 ] || { echo "docs/kernels.md: no Kernels table read"; return 1; }
	while IFS='	' read -r kernel tested; do
		case $kernel in
		*"debug build"*) f=debug ;;
		*"kcsan build"*) f=kcsan ;;
		*) f=${kernel#| } f=${f%% *} ;;
		esac
		case $kernels in *" $f "*) want=yes ;; *) want=no ;; esac
		case $tested in
		"$want"*) ;;
		*)
			echo "docs/kernels.md, Kernels: $f: tested by make check '$tested'; KERNELS ($kernels) says $want"
			bad=$((bad + 1))
			;;
		esac
	done <"$tmp/rows"
	echo "$(wc -l <"$tmp/ns") namespace count(s) and $(wc -l <"$tmp/rows") kernels read, $bad wrong"
	[ "$bad" = 0 ]
}

# Every man page make man builds (but .so links) is dated the changelog's first entry
# (dpkg-parsechangelog's reading of it), and keeps no @PLACEHOLDER@.
man_date() {
	want=$(date -u -d "$(dpkg-parsechangelog -l debian/changelog -S Date)" +%F)
	make -s --no-print-directory B="$tmp/build" man
	n=0 bad=0
	for page in "$tmp"/build/man/*; do
		# ".so man3/dio_pi_profile_init.3": the page it names has the date.
		head -1 "$page" | grep -q '^\.so ' && continue
		n=$((n + 1))
		got=$(sed -n '1s/^\.TH [^ ]* [0-9] \([^ ]*\) .*/\1/p' "$page")
		if [ "$got" != "$want" ]; then
			echo "${page##*/}: dated '$got', the changelog's first entry $want"
			bad=$((bad + 1))
		fi
		if grep -n '@[A-Z_]*@' "$page"; then
			echo "${page##*/}: a placeholder left"
			bad=$((bad + 1))
		fi
	done
	echo "$n man page(s), $bad wrong"
	[ "$n" -gt 0 ] && [ "$bad" = 0 ]
}

# The bash completion (tools/dioctl.bash-completion): COMPREPLY for the
# words of a command line, the last one being completed, one a line.
complete_words() { # WORD...
	bash -c '. tools/dioctl.bash-completion
		COMP_WORDS=("$@") COMP_CWORD=$(($# - 1)) COMPREPLY=()
		_dioctl dioctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}"' complete_words "$@"
}

# It parses, and shellcheck finds nothing in it.
completion_syntax() {
	bash -n tools/dioctl.bash-completion
	shellcheck -s bash tools/dioctl.bash-completion
}

# A few command lines complete as a user expects.
completion_replies() {
	bad=0
	expect() { # WANT WORD...: WANT among the replies
		want=$1
		shift
		out=$(complete_words dioctl "$@")
		if ! printf '%s\n' "$out" | grep -qx -- "$want"; then
			echo "dioctl $*<TAB>: no '$want' in: $(printf '%s\n' "$out" | tr '\n' ' ')"
			bad=$((bad + 1))
		fi
	}
	expect scrub sc
	expect tag t
	expect get tag ''
	expect set tag s
	expect --json scrub --
	expect --range scrub /dev/x --r
	expect --raw read /dev/x --r
	expect --fua write --f
	expect json read /dev/x -o ''
	[ "$(complete_words dioctl sc)" = scrub ] || { echo "dioctl sc<TAB>: not scrub alone"; bad=$((bad + 1)); }
	# DEVICE: the block devices under /dev, nothing else.
	out=$(complete_words dioctl query /dev/)
	for d in $out; do
		[ -b "$d" ] || { echo "dioctl query /dev/<TAB>: $d is no block device"; bad=$((bad + 1)); }
	done
	for d in /dev/*; do
		[ -b "$d" ] || continue
		printf '%s\n' "$out" | grep -qx -- "$d" ||
			{ echo "dioctl query /dev/<TAB>: no $d"; bad=$((bad + 1)); }
	done
	# No second DEVICE, nor one after an option's value.
	[ -z "$(complete_words dioctl query /dev/x /dev/)" ] ||
		{ echo "dioctl query /dev/x /dev/<TAB>: a second device offered"; bad=$((bad + 1)); }
	[ "$bad" = 0 ]
}

# Every command's options are those its --help lists, long and short.
completion_options() {
	dioctl=${DIO_DIOCTL:-build/tools/dioctl}
	bad=0
	for c in features query read write scrub "tag get"; do
		# shellcheck disable=SC2086  # "tag get": two words
		"$dioctl" $c --help | sed -n 's/^  \(-[A-Za-z]\)\?,\? *\(--[a-z-]*\).*/\1\n\2/p' |
			grep . | sort >"$tmp/help"
		# shellcheck disable=SC2086
		complete_words dioctl $c /dev/x - | sort >"$tmp/comp"
		[ -s "$tmp/help" ] || { echo "$c --help: no option read"; bad=$((bad + 1)); }
		diff -u --label "dioctl $c --help" --label "completion" "$tmp/help" "$tmp/comp" ||
			bad=$((bad + 1))
	done
	[ "$bad" = 0 ]
}

# The JSON documents of dioctl(1)'s JSON OUTPUT (its .nf blocks that
# are objects), one file each in DIR, "\-" and "\e" unescaped.
man_json() { # DIR
	awk -v dir="$1" '
		/^\.nf$/ { nf = 1; next }
		/^\.fi$/ { if (out) close(out); nf = 0; out = ""; next }
		nf && !out && /^\{$/ { out = sprintf("%s/man-%d.json", dir, ++n) }
		out { gsub(/\\-/, "-"); gsub(/\\e/, "\\"); print > out }
	' tools/dioctl.1
}

# dioctl's JSON Schema (tools/dioctl.schema.json) is a valid draft 2020-12
# schema, and tests/vm/json-check.py finds valid the documents dioctl(1)
# shows and every document the host's dioctl prints without a device: the
# error document of each command's bad command line, of a device that is
# not there, of a module that is not loaded (or, where it is, features).
json_valid() {
	dioctl=${DIO_DIOCTL:-build/tools/dioctl}
	d=$tmp/docs
	mkdir "$d" "$tmp/man"
	# The man page's examples are files of their own: no dioctl run
	# printed them, so index.tsv has no exit status for them.
	man_json "$tmp/man"
	[ "$(find "$tmp/man" -name 'man-*.json' | wc -l)" -ge 2 ] || { echo "dioctl.1: no JSON example found"; return 1; }
	i=0
	while IFS= read -r args; do
		i=$((i + 1))
		st=0
		# shellcheck disable=SC2086  # ARGS: words
		"$dioctl" $args >"$d/$i.json" 2>/dev/null || st=$?
		printf '%s.json\t%s\t%s\n' "$i" "$st" "$args" >>"$d/index.tsv"
	done <<-EOF
		features -j
		features extra --json
		query -j
		query /dev/dio-no-such-disk -j
		stat /dev/dio-no-such-disk -j
		read /dev/dio-no-such-disk -o json -l 4K
		write /dev/dio-no-such-disk -l 1Q -j
		read /dev/null -O - --json
		scrub /dev/dio-no-such-disk -r 8:4 -j
		scrub /dev/dio-no-such-disk --output-format=json
		tag get /dev/dio-no-such-disk -L 0 -n 1 -j
		tag set -j
		tag frob -j
		frob -j
		--json
	EOF
	tests/vm/json-check.py --require scrub,error "$d" "$tmp"/man/man-*.json >"$tmp/counts"
	read -r p f <"$tmp/counts"
	echo "$p valid, $f not"
	[ "$f" = 0 ] && [ "$p" -ge 18 ]
}

# A directory's exit statuses are compared, never skipped: json-check.py
# fails a directory without index.tsv and a document index.tsv does not
# list, and passes the same documents listed with dioctl's exit status.
json_index() {
	man_json "$tmp"
	error=$(grep -l '"status": "error"' "$tmp"/man-*.json | head -n 1)
	[ -f "$error" ] || { echo "dioctl.1: no error example"; return 1; }
	st=$(jq .exit_code "$error")
	d=$tmp/dir
	mkdir "$d"
	cp "$error" "$d/001.json"
	cp "$error" "$d/002.json"
	bad=0
	run() { # WANT: json-check.py's "PASSED FAILED" and status for $d
		out=$(tests/vm/json-check.py "$d" 2>"$tmp/tap") && rc=0 || rc=$?
		case $1 in
		ok) [ "$rc" = 0 ] && [ "$out" = "3 0" ] ;;
		*) [ "$rc" != 0 ] && [ "${out#* }" -ge 1 ] ;;
		esac || {
			echo "$2: json-check.py said '$out', status $rc, wanted $1:"
			sed 's/^/  /' "$tmp/tap"
			bad=$((bad + 1))
		}
	}
	run fail "no index.tsv"
	printf '001.json\t%s\tfrob -j\n' "$st" >"$d/index.tsv"
	run fail "002.json not in index.tsv"
	printf '002.json\t%s\tfrob --json\n' "$st" >>"$d/index.tsv"
	run ok "both listed"
	printf '001.json\t%s\tfrob -j\n002.json\t%s\tfrob --json\n' "$st" $((st + 1)) >"$d/index.tsv"
	run fail "002.json listed with another exit status"
	[ "$bad" = 0 ]
}

# The schema rejects what it must: each of these documents, broken from
# dioctl(1)'s scrub example or error document, fails json-check.py.
json_rejects() {
	man_json "$tmp"
	scrub=$tmp/man-$(grep -l '"command": "scrub"' "$tmp"/man-*.json | sed 's/.*man-\([0-9]*\)\.json/\1/')
	error=$(grep -l '"status": "error"' "$tmp"/man-*.json)
	if [ ! -f "$scrub.json" ] || [ ! -f "$error" ]; then
		echo "dioctl.1: no scrub or error example"
		return 1
	fi
	n=0
	bad() { # NAME JQ-FILTER [FILE]: the document FILE (scrub's) changed by FILTER
		n=$((n + 1))
		jq "$2" "${3:-$scrub.json}" >"$tmp/bad-$n-$1.json"
	}
	bad app-tag-as-tag-value '.app_tag = "0xbeef"'
	bad tag-value-as-number '.failures[0].expected = 27675'
	bad tag-value-upper-case '.failures[0].actual = "0x8F2E"'
	bad tag-value-leading-zero '.failures[0].actual = "0x08f2e"'
	bad interval-number-as-string '.failures[0].interval = "1000"'
	bad no-interval-size 'del(.interval_size)'
	bad status-not-exit-code '.status = "ok"'
	bad unknown-key '.intervalsize = 512'
	bad no-command 'del(.command)'
	bad unknown-command '.command = "verify"'
	bad failure-without-error 'del(.failures[1].error)'
	bad error-without-message 'del(.message)' "$error"
	bad error-exit-0 '.exit_code = 0' "$error"
	bad error-errno-text '.error = "No such file or directory"' "$error"
	bad error-with-result '.capacity = 0' "$error"
	# scrub --repair-from: a block's repair without the run's, an outcome
	# dioctl has not, a dry run that wrote, a repaired block with a reason.
	repair='.repair = {"source": "/dev/sdc", "source_type": "device", "dry_run": false, "repaired": 2, "would_repair": 0, "not_repaired": 0} | .failures[].repair = {"outcome": "repaired", "reason": null, "error": null}'
	bad repair-of-a-block-only '.failures[0].repair = {"outcome": "repaired", "reason": null, "error": null}'
	bad repair-outcome-unknown "$repair"' | .failures[1].repair.outcome = "fixed"'
	bad repair-dry-run-wrote "$repair"' | .repair.dry_run = true'
	bad repair-done-with-reason "$repair"' | .failures[0].repair.reason = "copied"'
	n=$((n + 1))
	cat "$scrub.json" "$scrub.json" >"$tmp/bad-$n-two-documents.json"
	n=$((n + 1))
	sed '0,/"pi": true,/s//"pi": true,\n  "pi": false,/' "$scrub.json" >"$tmp/bad-$n-duplicate-key.json"
	n=$((n + 1))
	: >"$tmp/bad-$n-nothing.json"
	missed=0
	for b in "$tmp"/bad-*.json; do
		out=$(tests/vm/json-check.py "$b" 2>"$tmp/why") || true
		if [ "$out" != "1 1" ]; then
			echo "${b##*/}: not rejected ($out)"
			missed=$((missed + 1))
		else
			echo "${b##*/}: rejected: $(sed -n 's/^#   //p' "$tmp/why" | head -n 1)"
		fi
	done
	# The same documents unbroken pass, and the scrub's with its repairs.
	jq "$repair"' | .status = "ok" | .exit_code = 0' "$scrub.json" >"$tmp/good-repair.json"
	[ "$(tests/vm/json-check.py "$scrub.json" "$error" "$tmp/good-repair.json" 2>&1 >/dev/null |
		grep -c '^ok ')" = 4 ] ||
		{ echo "the unbroken examples do not validate"; missed=$((missed + 1)); }
	echo "$n broken documents, $missed not rejected"
	[ "$missed" = 0 ]
}

"$1"
