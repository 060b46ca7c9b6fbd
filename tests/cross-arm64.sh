#!/bin/sh
# libdioctl, dioctl and the PI and ABI unit tests built for arm64 with
# Debian's cross compiler (scripts/arm64-tools.sh fetches it once), the
# tests run under qemu-user's emulated AArch64 CPU (qemu-aarch64, no
# binfmt needed).  Records "passed failed" in BUILD/results/arm64.counts.
#   tests/cross-arm64.sh [BUILD]          build in BUILD/arm64, run the tests
#   tests/cross-arm64.sh [BUILD] --bench  also run pi_bench there (minutes,
#                                         1 MiB streams: every figure is emulated)
# test_install is not run: it checks the host's make install and links,
# nothing of the target.  The CPU is qemu's "max" (PMULL among its
# features), and test_pi is told the CRC64 path it must find (PMULL):
# the machine path is tested, not skipped.
B=${1:-build}
A=$B/arm64
pass=0 fail=0 t0=$(date +%s)
mkdir -p "$B/results"
out=$B/results/arm64.log
: >"$out"

finish() {
	if [ $((pass + fail)) = 0 ]; then
		echo "FAILED: no arm64 test ran" | tee -a "$out"
		fail=1
	fi
	echo "$pass $fail" >"$B/results/arm64.counts"
	printf 'arm64 cross build and tests\t%s\n' $(($(date +%s) - t0)) >>"$B/results/phases"
	echo "arm64: $pass passed, $fail failed"
	[ "$fail" = 0 ]
	exit
}

if ! command -v qemu-aarch64 >/dev/null; then
	echo "FAILED: no qemu-aarch64 (make deps installs qemu-user)" | tee -a "$out"
	fail=1
	finish
fi
if ! T=$(scripts/arm64-tools.sh 2>>"$out"); then
	echo "FAILED: no arm64 cross compiler (scripts/arm64-tools.sh, $out)" | tee -a "$out"
	fail=1
	finish
fi

# The compiler and binutils are relocated: their own libbfd beside them.
LD_LIBRARY_PATH=$T/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
X=$T/usr/bin/aarch64-linux-gnu
UNIT="test_pi test_abi"
targets="lib tools $A/bench/pi_bench"
for t in $UNIT; do
	targets="$targets $A/tests/unit/$t"
done
# $targets: one word each; UNIT_LIBS: make's variables, for make to expand.
# shellcheck disable=SC2086,SC2016
if ! make --no-print-directory -j"$(nproc)" B="$A" CC="$X-gcc-12 --sysroot=$T" \
	LD="$X-ld" AR="$X-ar" OBJCOPY="$X-objcopy" \
	UNIT_TESTLIB= UNIT_LIBS='$(LIB_INTERNAL_A) $(LIB_LIBS) -lcmocka -lpthread' \
	BENCH_LIBS=-lpthread $targets >>"$out" 2>&1; then
	tail -n 20 "$out"
	echo "FAILED: the arm64 build (make B=$A, $out)" | tee -a "$out"
	fail=1
	finish
fi
if ! file -L "$A/libdioctl.so.1" "$A/tools/dioctl" | grep -q 'ARM aarch64'; then
	echo "FAILED: $A/libdioctl.so.1 or dioctl is not an arm64 program" | tee -a "$out"
	fail=1
fi

# The emulated programs find the arm64 C library (-L) and ISA-L and cmocka
# (LD_LIBRARY_PATH inside the emulated process only).  test_abi dlopen()s
# build/libdioctl.so.1: run from a directory where that is the arm64 one.
qemu() {
	qemu-aarch64 -cpu max -L "$T/usr/aarch64-linux-gnu" \
		-E LD_LIBRARY_PATH="$T/usr/lib/aarch64-linux-gnu" "$@"
}
mkdir -p "$A/run"
ln -sfn "$(cd "$A" && pwd)" "$A/run/build"
abs=$(cd "$A" && pwd)
for t in $UNIT; do
	o=$B/results/arm64-$t.out
	(cd "$A/run" && CMOCKA_MESSAGE_OUTPUT=TAP DIO_PI_EXPECT_CRC64=PMULL DIO_QEMU_USER=1 \
		qemu "$abs/tests/unit/$t") >"$o" 2>&1
	rc=$?
	cat "$o" >>"$out"
	p=$(grep -c '^ok ' "$o")
	f=$(grep -c '^not ok ' "$o")
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "FAILED: arm64 $t exited with $rc" | tee -a "$out"
		f=1
	fi
	grep -E '^not ok|not supported' "$o"
	pass=$((pass + p)) fail=$((fail + f))
done
# dioctl starts and knows its version.
if qemu "$A/tools/dioctl" --version >>"$out" 2>&1; then
	pass=$((pass + 1))
else
	echo "FAILED: arm64 dioctl --version" | tee -a "$out"
	fail=$((fail + 1))
fi
if [ "${2:-}" = --bench ]; then
	# 1 MiB streams: emulated, a 64 MiB pass takes seconds.
	PI_BENCH_STREAM_MIB=1 qemu "$A/bench/pi_bench" | tee "$B/results/arm64-pi_bench.txt"
fi
finish
