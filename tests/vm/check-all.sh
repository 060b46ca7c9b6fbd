#!/usr/bin/env bash
# The guest suite on every kernel in KERNELS, then (DKMS_CHECK=1) the DKMS
# check and (DEB_CHECK=1) the Debian packages' check, in two lanes at
# once: the debug kernel (whose build, the first
# time, and whose run are the longest) in one, the stock kernels and DKMS in
# the other.  Guests spend much of their time waiting (delayed scsi_debug
# commands, timeouts), so two share the machine's cores well.  Each lane's
# output goes to build/results/lane-*.log and, line by line with the
# flavour in front, to stdout.  Counts land in build/results/*.counts as
# check.sh and dkms-check.sh write them; tests/summary.sh adds them up.
#   check-all.sh            (env: KERNELS, DKMS_CHECK, DEB_CHECK, CHECK_LANES=1|2)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$top/build/results
: "${KERNELS:=6.1 6.12 7.3 debug}" "${DKMS_CHECK:=1}" "${DEB_CHECK:=1}"
: "${CHECK_LANES:=$([ "$(nproc)" -ge 2 ] && echo 2 || echo 1)}"
mkdir -p "$out"

# run_lane NAME KERNEL... [dkms]: one after another, prefixed output.
run_lane() {
	local name=$1 k
	shift
	for k in "$@"; do
		if [ "$k" = dkms ]; then
			"$here/dkms-check.sh"
		elif [ "$k" = deb ]; then
			"$here/deb-check.sh"
		else
			"$here/check.sh" "$k"
		fi 2>&1 | sed -u "s/^/[$k] /"
	done | tee "$out/lane-$name.log"
}

slow=() fast=()
for k in $KERNELS; do
	if [ "$k" = debug ] && [ "$CHECK_LANES" -ge 2 ]; then
		slow+=("$k")
	else
		fast+=("$k")
	fi
done
[ "$DKMS_CHECK" = 1 ] && fast+=(dkms)
[ "$DEB_CHECK" = 1 ] && fast+=(deb)

if [ ${#slow[@]} -gt 0 ]; then
	run_lane slow "${slow[@]}" &
	pid=$!
fi
[ ${#fast[@]} -gt 0 ] && run_lane fast "${fast[@]}"
[ ${#slow[@]} -gt 0 ] && wait "$pid"

# A suite that left no counts behind failed.
for k in "${slow[@]}" "${fast[@]}"; do
	[ "$k" = dkms ] || [ "$k" = deb ] || k=$k${TESTS:+-$(echo "$TESTS" | tr ' ' '_')}
	if [ ! -s "$out/$k.counts" ]; then
		echo "check-all: $k recorded no counts" >&2
		echo "0 1" >"$out/$k.counts"
	fi
done
exit 0
