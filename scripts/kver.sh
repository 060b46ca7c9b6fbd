#!/bin/sh
# Print the kernel version to build the module for: the running kernel when
# its headers are installed, otherwise the newest installed Debian kernel
# that has headers (the machines here run a kernel without either).
r=$(uname -r)
if [ -d "/lib/modules/$r/build" ]; then
	echo "$r"
	exit 0
fi
v=$(ls -d /lib/modules/*/build 2>/dev/null | awk -F/ '{print $4}' | sort -V | tail -n 1)
[ -n "$v" ] || { echo "kver: no kernel headers found; run 'make deps'" >&2; exit 1; }
echo "$v"
