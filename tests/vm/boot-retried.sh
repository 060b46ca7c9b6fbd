#!/bin/sh
# Record a guest boot that run.sh tries again (boot_retry: hung, failed in
# the kernel's boot, QEMU crashed, all before the guest's user space was
# up): its console is kept as RES/console-boot-WHY.log, and a line
# "WHY<tab>console-boot-WHY.log<tab>MESSAGE" is added to RES/boot-retries
# (flakes.sh counts them run by run) and a line
# "LABEL<tab>WHY<tab>CONSOLE<tab>MESSAGE" to RESULTS/boot-retries, which
# tests/summary.sh prints: a retried boot is not a failed test, but the
# run says it happened, and where the console of the boot that failed is.
# LABEL is RES under build/vm/ (the suite's tag), CONSOLE the kept
# console's path; RESULTS is DIO_RESULTS, by default build/results.
#   boot-retried.sh RES WHY MESSAGE
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
res=$1 why=$2 msg=$3
results=${DIO_RESULTS:-$top/build/results}
console=console-boot-$why.log
mv "$res/console.log" "$res/$console"
printf '%s\t%s\t%s\n' "$why" "$console" "$msg" >>"$res/boot-retries"
mkdir -p "$results"
printf '%s\t%s\t%s\t%s\n' "${res#"$top/build/vm/"}" "$why" "$res/$console" "$msg" >>"$results/boot-retries"
