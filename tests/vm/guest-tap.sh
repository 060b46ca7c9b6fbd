# shellcheck shell=sh
# Test cases in TAP for the scripts that run inside a guest under /bin/sh
# (deb-guest.sh, deb-systemd.sh): source it, then count with ok/not_ok or
# run a command as one case with check; finish writes "passed failed" to
# $counts (default /tmp/results/counts) and exits.
pass=0 fail=0 n=0
: "${counts:=/tmp/results/counts}"
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $*"; }
# check DESCRIPTION COMMAND...: one case; the output is kept in $log, where
# the command's own checks may read it afterwards.
log=/tmp/check.log
check() {
	desc=$1
	shift
	if "$@" >"$log" 2>&1; then
		ok "$desc"
	else
		not_ok "$desc (status $?)"
		tail -n 30 "$log" | sed 's/^/# /'
	fi
}
finish() {
	echo "$pass $fail" >"$counts"
	exit 0
}
# as USER COMMAND...: run as a user who is not root, with the groups
# /etc/group gives them, as a login would.
as() {
	u=$1
	shift
	setpriv --reuid="$u" --regid=users --init-groups --reset-env -- "$@"
}
