# shellcheck shell=bash
# Test cases in TAP for the host-side checks (deb-check.sh,
# anywhere-check.sh): source it, then count with ok/not_ok or run a command
# as one case with check; $pass, $fail and $n hold the counts.
pass=0 fail=0 n=0
ok() { n=$((n + 1)) pass=$((pass + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)) fail=$((fail + 1)); echo "not ok $n - $*"; }
# check DESCRIPTION COMMAND...: one test case, the tail of the command's
# output shown when it fails.
check() {
	local desc=$1 log
	shift
	log=$(mktemp)
	if "$@" >"$log" 2>&1; then
		ok "$desc"
	else
		not_ok "$desc (status $?)"
		tail -n 40 "$log" | sed 's/^/# /'
	fi
	rm -f "$log"
}
