#!/bin/sh
# gcov for the debug kernel's module (tests/vm/coverage.py, and lcov's
# --gcov-tool): the gcov of the compiler that built it, which on a host
# that is not Debian 12 is in the bookworm chroot (tests/vm/kernel.sh gcov).
exec "$(dirname "$0")/kernel.sh" gcov debug "$@"
