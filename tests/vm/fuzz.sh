#!/usr/bin/env bash
# A long run of the coverage-guided ioctl fuzzer (tests/guest/t_kfuzz.c) on
# the debug kernel, for before a release (`make fuzz DURATION=...`).  The
# corpus lives outside the checkout and grows from run to run.
#   env: DURATION (seconds, default 3600), FLAVOUR (debug or kcsan),
#        KFUZZ_CORPUS (default $DIO_CACHE/kfuzz-corpus), DIO_KFUZZ_SEED
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${DURATION:=3600}" "${FLAVOUR:=debug}"
: "${KFUZZ_CORPUS:=${DIO_CACHE:-/var/cache/dio_batch}/kfuzz-corpus}"
case "$DURATION" in '' | *[!0-9]*) echo "fuzz: DURATION must be seconds" >&2; exit 2 ;; esac
export KFUZZ_CORPUS DIO_KFUZZ_SECONDS=$DURATION TESTS=kfuzz
# The program's and the guest's timeouts follow the duration.
export TEST_TIMEOUT=$((DURATION + 600)) VM_TIMEOUT=$((DURATION + 1200))
echo "fuzz: $FLAVOUR kernel, $DURATION s, corpus $KFUZZ_CORPUS" >&2
exec "$here/check.sh" "$FLAVOUR"
