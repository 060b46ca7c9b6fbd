#!/usr/bin/env bash
# The dioctl JSON documents the guest programs kept (tests/lib/dioctl_run.h)
# in the results directory RES, validated on the host against
# tools/dioctl.schema.json by json-check.py: its cases (one a document, the
# schema's, and the kinds the options require seen) are test cases of the
# suite.  Prints "PASSED FAILED" of them all; writes OUT, one line a program
# that kept a directory, "PROGRAM<TAB>JSON-PASSED<TAB>JSON-FAILED<TAB>
# PASSED<TAB>FAILED" (the last two: the program's own test cases in the
# guest, from RES/PROGRAM.out), for tests/summary.sh, which says how many of
# a suite's cases are tests and how many JSON validated on the host.
#   json-cases.sh RES OUT          (tests/vm/check.sh)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
res=${1:?json-cases: RES}
out=${2:?json-cases: OUT}
p=0 f=0
: >"$out"
# PROGRAM DIR OPTION...: json-check.py's cases for RES/DIR, if it was kept.
# A json-check.py that printed no counts is one failed case.
cases() {
	local prog=$1 dir=$res/$2 jp jf tp tf
	shift 2
	[ -d "$dir" ] || return 0
	read -r jp jf < <("$here/json-check.py" "$@" "$dir" | tail -n 1)
	jp=${jp:-0} jf=${jf:-1}
	tp=$(grep -c '^ok ' "$res/$prog.out" 2>/dev/null) || true
	tf=$(grep -c '^not ok ' "$res/$prog.out" 2>/dev/null) || true
	printf '%s\t%d\t%d\t%d\t%d\n' "$prog" "$jp" "$jf" "${tp:-0}" "${tf:-0}" >>"$out"
	p=$((p + jp)) f=$((f + jf))
}
cases t_dioctl dioctl-json --every-kind
cases t_repair repair-json --require scrub,error
cases t_counters counters-json --require stat		# dioctl stat
cases t_stacks stacks-json --require query,read,write,scrub	# LIO, device-mapper, multipath, md
cases t_formats formats-json --require query,read,scrub	# the NVMe format matrix
echo "$p $f"
