#!/usr/bin/env bash
# The guest suite on every kernel in KERNELS, then (DKMS_CHECK=1) the DKMS
# check, (DEB_CHECK=1) the Debian packages' check and (ANYWHERE_CHECK=1)
# make demo and make userspace from a checkout at an awkward path
# (anywhere-check.sh), in CHECK_LANES lanes
# (two on two cores) that take jobs from one queue.  Guests spend much of
# their time waiting (delayed scsi_debug
# commands, timeouts), so two share the machine's cores well.  Each lane's
# output goes to build/results/lane-*.log and, line by line with the
# flavour in front, to stdout.  Counts land in build/results/*.counts as
# check.sh and dkms-check.sh write them; tests/summary.sh adds them up.
#   check-all.sh            (env: KERNELS, DKMS_CHECK, DEB_CHECK, ANYWHERE_CHECK, CHECK_LANES=1|2)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$top/build/results
: "${KERNELS:=6.1 6.12 7.3 debug}" "${DKMS_CHECK:=1}" "${DEB_CHECK:=1}" "${ANYWHERE_CHECK:=1}"
: "${CHECK_LANES:=$([ "$(nproc)" -ge 2 ] && echo 2 || echo 1)}"
mkdir -p "$out"

# The jobs, longest first: the kernels built from source (debug, kcsan: each
# built the first time), the stock kernels, then the DKMS and package checks as one job (both use the
# host's DKMS and /lib/modules, so never side by side).  Each lane takes
# the next job from the queue when it is free, so the lanes stay busy
# whatever a machine has cached: on a warm one the debug suite and 7.3 in
# one lane, 6.1, 6.12 and the packages in the other.
queue=$out/.jobs
: >"$queue"
for k in $KERNELS; do
	case $k in debug | kcsan) echo "$k" >>"$queue" ;; esac
done
for k in $KERNELS; do
	case $k in debug | kcsan) ;; *) echo "$k" >>"$queue" ;; esac
done
pkgjob=
[ "$DKMS_CHECK" = 1 ] && pkgjob=dkms
[ "$DEB_CHECK" = 1 ] && pkgjob="${pkgjob:+$pkgjob }deb"
[ "$ANYWHERE_CHECK" = 1 ] && pkgjob="${pkgjob:+$pkgjob }anywhere"
[ -n "$pkgjob" ] && echo "$pkgjob" >>"$queue"
mapfile -t jobs <"$queue"

# next_job: the first line of the queue, taken out of it (empty: none left).
next_job() {
	# shellcheck disable=SC2016  # $1 is the inner shell's
	flock "$queue.lock" sh -c 'head -n 1 "$1"; sed -i 1d "$1"' sh "$queue"
}

# lane NAME: jobs from the queue until it is empty, prefixed output.
lane() {
	local job k t0
	while job=$(next_job) && [ -n "$job" ]; do
		for k in $job; do
			t0=$SECONDS
			case $k in
			dkms) "$here/dkms-check.sh" ;;
			deb) "$here/deb-check.sh" ;;
			anywhere) "$here/anywhere-check.sh" ;;
			*) "$here/check.sh" "$k" ;;
			esac 2>&1 | sed -u "s/^/[$k] /"
			printf '%s\t%s\n' "lane $1: $k, in all" $((SECONDS - t0)) >>"$out/phases"
		done
	done | tee "$out/lane-$1.log"
}

pids=()
for ((l = 1; l < CHECK_LANES; l++)); do
	lane "$l" &
	pids+=($!)
done
lane "$CHECK_LANES"
for p in "${pids[@]}"; do
	wait "$p"
done

# A suite that left no counts behind failed.
for job in "${jobs[@]}"; do
	for k in $job; do
		case $k in dkms | deb | anywhere) ;; *) k=$k${TESTS:+-$(echo "$TESTS" | tr ' ' '_')} ;; esac
		if [ ! -s "$out/$k.counts" ]; then
			echo "check-all: $k recorded no counts" >&2
			echo "0 1" >"$out/$k.counts"
		fi
	done
done
exit 0
