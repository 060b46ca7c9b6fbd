#!/usr/bin/env bash
# make check's run, in a script of its own so that `make -n check` only
# prints it: make runs a recipe line that names $(MAKE) even with -n, and
# this run builds userspace with make.  In order: the debug kernel's build
# packages and, in the background, its build (when KERNELS has debug); the
# packages (scripts/deps.sh); make userspace; the host unit tests, the
# arm64 build and its tests, the static checks; the guest suites and the
# package checks (tests/vm/check-all.sh).  A step that fails before the
# tests is one failed test (BUILD/results/deps.counts or userspace.counts),
# and nothing after it runs.  The Makefile's check target empties
# BUILD/results before and prints tests/summary.sh's summary after.
#   tests/make-check.sh BUILD     (env: KERNELS, DKMS_CHECK, DEB_CHECK,
#                                  ANYWHERE_CHECK, DEMO_CHECK, DIO_CHECK_START; the
#                                  make command line's variables reach
#                                  make userspace through MAKEFLAGS)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
B=${1:?make-check: BUILD}
: "${KERNELS:=6.1 6.12 7.3 debug}"
# check-all.sh's budget counts from .ci/run's start, else from here.
: "${DIO_CHECK_START:=$(date +%s)}"
export DIO_CHECK_START KERNELS
mkdir -p "$B/results"

# The debug kernel, the longest job, is prepared (built, on a new machine)
# from the start: the packages its build needs first, then its build
# beside the rest of the packages' installation, the userspace build and
# the host checks; its lane waits for it (.ahead-pid, check-all.sh).
ahead=
case " $KERNELS " in
*" debug "*)
	if tests/vm/kernel.sh deps debug; then
		{
			s=$(date +%s)
			tests/vm/kernel.sh prepare debug >"$B/results/kernel-debug-ahead.log" 2>&1
			printf 'kernel debug, prepared ahead (kernel-debug-ahead.log)\t%s\n' $(($(date +%s) - s)) \
				>>"$B/results/phases"
			rm -f "$B/results/.ahead-pid"
		} &
		ahead=$!
		echo "$ahead" >"$B/results/.ahead-pid"
	fi
	;;
esac

# make userspace as the make check command line would have run it: its
# variables are in MAKEFLAGS; its jobserver is not (make passes it only to
# the recipe lines it runs even with -n), so the inner make keeps -j and
# makes a jobserver of its own.
MAKEFLAGS=$(printf '%s' "${MAKEFLAGS:-}" | sed -E 's/ ?--jobserver-(auth|fds)=[^ ]*//g')
export MAKEFLAGS
t0=$(date +%s)
if ! { scripts/deps.sh --check || scripts/deps.sh; }; then
	echo "make check: scripts/deps.sh failed; no test ran" >&2
	echo "0 1" >"$B/results/deps.counts"
elif printf 'packages (scripts/deps.sh)\t%s\n' $(($(date +%s) - t0)) >>"$B/results/phases"
	t0=$(date +%s)
	make --no-print-directory userspace; then
	printf 'make userspace\t%s\n' $(($(date +%s) - t0)) >>"$B/results/phases"
	tests/run-unit.sh "$B" || true
	tests/cross.sh "$B" arm64 || true
	tests/static-check.sh "$B" || true
	DKMS_CHECK="${DKMS_CHECK:-1}" DEB_CHECK="${DEB_CHECK:-1}" \
		ANYWHERE_CHECK="${ANYWHERE_CHECK:-1}" DEMO_CHECK="${DEMO_CHECK:-1}" tests/vm/check-all.sh
else
	echo "make check: make userspace failed; no test ran" >&2
	echo "0 1" >"$B/results/userspace.counts"
fi
[ -z "$ahead" ] || wait "$ahead" || true
