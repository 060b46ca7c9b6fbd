#!/bin/sh
# libdioctl, dioctl and the PI and ABI unit tests built for another
# architecture with Debian's cross compiler (scripts/cross-tools.sh fetches
# it once), the tests run under qemu-user (no binfmt needed).  Records
# "passed failed" in BUILD/results/ARCH.counts.
#   tests/cross.sh [BUILD [ARCH]]          build in BUILD/ARCH, run the tests
#   tests/cross.sh BUILD ARCH --bench      also run pi_bench there (minutes,
#                                          1 MiB streams: every figure is emulated)
# ARCH: arm64 (the default; make check) or s390x (big-endian: the portable
# code's byte order; make check-cross ARCH=s390x).  On arm64 the CPU is
# qemu's "max", PMULL among its features, and test_pi is told the CRC64
# path it must find (PMULL): the machine path is tested, not skipped.
# test_install is not run: it checks the host's make install and links,
# nothing of the target.
B=${1:-build}
arch=${2:-arm64}
A=$B/$arch
pass=0 fail=0 t0=$(date +%s)
mkdir -p "$B/results"
out=$B/results/$arch.log
: >"$out"

finish() {
	if [ $((pass + fail)) = 0 ]; then
		echo "FAILED: no $arch test ran" | tee -a "$out"
		fail=1
	fi
	echo "$pass $fail" >"$B/results/$arch.counts"
	printf '%s cross build and tests\t%s\n' "$arch" $(($(date +%s) - t0)) >>"$B/results/phases"
	echo "$arch: $pass passed, $fail failed"
	[ "$fail" = 0 ]
	exit
}

case $arch in
arm64) triplet=aarch64-linux-gnu qemu=qemu-aarch64 elf='ARM aarch64' crc64=PMULL ;;
s390x) triplet=s390x-linux-gnu qemu=qemu-s390x elf='IBM S/390' crc64=slice-by-8 ;;
*)
	echo "FAILED: tests/cross.sh: no such architecture: $arch (arm64, s390x)" | tee -a "$out"
	fail=1
	finish
	;;
esac
if ! command -v $qemu >/dev/null; then
	echo "FAILED: no $qemu (make deps installs qemu-user)" | tee -a "$out"
	fail=1
	finish
fi
if ! T=$(scripts/cross-tools.sh "$arch" 2>>"$out"); then
	echo "FAILED: no $arch cross compiler (scripts/cross-tools.sh, $out)" | tee -a "$out"
	fail=1
	finish
fi

# The compiler and binutils are relocated: their own libbfd beside them.
LD_LIBRARY_PATH=$T/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
X=$T/usr/bin/$triplet
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
	echo "FAILED: the $arch build (make B=$A, $out)" | tee -a "$out"
	fail=1
	finish
fi
if ! file -L "$A/libdioctl.so.1" "$A/tools/dioctl" | grep -q "$elf"; then
	echo "FAILED: $A/libdioctl.so.1 or dioctl is not an $arch program" | tee -a "$out"
	fail=1
fi

# The emulated programs find the target's C library (-L) and ISA-L and
# cmocka (LD_LIBRARY_PATH inside the emulated process only).  test_abi
# dlopen()s build/libdioctl.so.1: run from a directory where that is the
# target's.  Under qemu-user an ioctl QEMU does not know fails with ENOSYS
# before the kernel: DIO_QEMU_USER tells test_abi.
emu() {
	$qemu -cpu max -L "$T/usr/$triplet" -E LD_LIBRARY_PATH="$T/usr/lib/$triplet" "$@"
}
abs=$(cd "$A" && pwd)
mkdir -p "$A/run"
ln -sfn "$abs" "$A/run/build"
# test_abi reads the headers (libdioctl/include) from its directory too.
ln -sfn "$(cd "$(dirname "$0")/.." && pwd)/libdioctl" "$A/run/libdioctl"
for t in $UNIT; do
	o=$B/results/$arch-$t.out
	(cd "$A/run" && CMOCKA_MESSAGE_OUTPUT=TAP DIO_PI_EXPECT_CRC64=$crc64 DIO_QEMU_USER=1 \
		emu "$abs/tests/unit/$t") >"$o" 2>&1
	rc=$?
	cat "$o" >>"$out"
	p=$(grep -c '^ok ' "$o")
	f=$(grep -c '^not ok ' "$o")
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "FAILED: $arch $t exited with $rc" | tee -a "$out"
		f=1
	fi
	grep -E '^not ok|not supported' "$o"
	pass=$((pass + p)) fail=$((fail + f))
done
# dioctl starts and knows its version.
if emu "$A/tools/dioctl" --version >>"$out" 2>&1; then
	pass=$((pass + 1))
else
	echo "FAILED: $arch dioctl --version" | tee -a "$out"
	fail=$((fail + 1))
fi
if [ "${3:-}" = --bench ]; then
	# 1 MiB streams: emulated, a 64 MiB pass takes seconds.
	PI_BENCH_STREAM_MIB=1 emu "$A/bench/pi_bench" | tee "$B/results/$arch-pi_bench.txt"
fi
finish
