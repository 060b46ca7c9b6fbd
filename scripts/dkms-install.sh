#!/usr/bin/env bash
# Install the module's source for DKMS and build it for kernel(s).
#   scripts/dkms-install.sh [KVER...]   (default: every kernel with headers)
#   scripts/dkms-install.sh --add       only put the source in place and
#                                       dkms add it (a kernel package's
#                                       hook, dkms autoinstall, builds it)
#   scripts/dkms-install.sh --remove
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
name=dio_batch
ver=$("$top/scripts/version.sh")
src=/usr/src/$name-$ver

if [ "${1:-}" = --remove ]; then
	dkms remove "$name/$ver" --all >/dev/null 2>&1 || true
	rm -rf "$src"
	exit 0
fi
dkms remove "$name/$ver" --all >/dev/null 2>&1 || true
rm -rf "$src"
mkdir -p "$src"
cp -r "$top/module" "$top/uapi" "$src/"
sed "s/#MODULE_VERSION#/$ver/" "$top/dkms.conf" >"$src/dkms.conf"
find "$src" \( -name '*.o' -o -name '*.ko' -o -name '.*.cmd' -o -name '*.mod*' \
	-o -name Module.symvers -o -name modules.order \) -delete
dkms add "$name/$ver"
[ "${1:-}" = --add ] && exit 0
kvers=("$@")
if [ ${#kvers[@]} = 0 ]; then
	for d in /lib/modules/*/build; do
		[ -e "$d" ] && kvers+=("$(basename "$(dirname "$d")")")
	done
fi
for k in "${kvers[@]}"; do
	# 77: dkms.conf's BUILD_EXCLUSIVE_KERNEL leaves this kernel out (6.5-6.8).
	rc=0
	dkms build "$name/$ver" -k "$k" || rc=$?
	case $rc in
	0) dkms install "$name/$ver" -k "$k" --force ;;
	77) echo "dkms-install: $k is not supported (6.5 to 6.8); not built for it" >&2 ;;
	*) exit "$rc" ;;
	esac
done
dkms status "$name"
