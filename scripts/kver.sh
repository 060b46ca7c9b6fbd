#!/bin/sh
# Print the kernel version to build the module for: the running kernel when
# its headers are installed, otherwise the newest installed Debian kernel
# that has headers (the machines here run a kernel without either).  A
# build directory counts only when it holds a Makefile: /lib/modules/*/build
# is a symbolic link that dangles once the headers package is removed.
r=$(uname -r)
if [ -f "/lib/modules/$r/build/Makefile" ]; then
	echo "$r"
	exit 0
fi
v=$(for d in /lib/modules/*/build; do
	[ -f "$d/Makefile" ] && basename "$(dirname "$d")"
done | sort -V | tail -n 1)
[ -n "$v" ] || { echo "kver: no kernel headers found; run 'make deps'" >&2; exit 1; }
echo "$v"
