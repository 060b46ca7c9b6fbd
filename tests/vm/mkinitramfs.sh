#!/usr/bin/env bash
# Build the guest's initramfs: busybox, the modules needed to mount the host's
# root over virtio-9p (resolved from modules.dep, decompressed so busybox's
# insmod loads them on every kernel), and tests/vm/init.
#   mkinitramfs.sh MODDIR OUT.cpio.gz
set -euo pipefail
moddir=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
busybox=$(command -v busybox || echo /bin/busybox)
{ [ -x "$busybox" ] && file -L "$busybox" | grep -q 'statically linked'; } ||
	{ echo "mkinitramfs: need a static busybox (busybox-static)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"; [ -z "${tmp:-}" ] || rm -f "$tmp"' EXIT
mkdir -p "$work"/{bin,dev,proc,sys,newroot,mods}
cp "$busybox" "$work/bin/busybox"
for a in sh mount umount insmod mkdir cat echo sleep poweroff reboot chroot ls switch_root dmesg; do
	ln -s busybox "$work/bin/$a"
done
cp "$here/init" "$work/init"
chmod +x "$work/init"

# Depth-first over modules.dep: dependencies before the module.
declare -A seen=()
order=()
resolve() {
	local name=$1 line path deps d
	line=$(grep -E "(^|/)${name}\.ko(\.xz|\.zst|\.gz)?:" "$moddir/modules.dep" | head -n 1) || true
	if [ -z "$line" ]; then
		# Built in (modules.builtin) or absent: nothing to load.
		grep -qE "/${name}\.ko$" "$moddir/modules.builtin" 2>/dev/null && return 0
		echo "mkinitramfs: module $name neither in modules.dep nor built in" >&2
		return 1
	fi
	path=${line%%:*}
	[ -n "${seen[$path]:-}" ] && return 0
	seen[$path]=1
	deps=${line#*:}
	for d in $deps; do
		d=$(basename "$d"); d=${d%%.ko*}
		resolve "$d"
	done
	order+=("$path")
}
for m in virtio_pci 9pnet_virtio 9p; do
	resolve "$m"
done

: >"$work/mods/order"
for p in "${order[@]}"; do
	b=$(basename "$p"); b=${b%%.ko*}.ko
	case "$p" in
	*.xz) xz -dc "$moddir/$p" >"$work/mods/$b" ;;
	*.zst) zstd -qdc "$moddir/$p" >"$work/mods/$b" ;;
	*.gz) gzip -dc "$moddir/$p" >"$work/mods/$b" ;;
	*) cp "$moddir/$p" "$work/mods/$b" ;;
	esac
	echo "$b" >>"$work/mods/order"
done
# A temporary file of this build's own, then renamed: two guests of one
# kernel may build its initramfs at once (the 7.3 lane and the trixie
# package check, the debug kernel's two parts), and neither may boot the
# other's half-written file.
tmp=$(mktemp "$out.XXXXXX")
(cd "$work" && find . | cpio -o -H newc --quiet) | gzip -1 >"$tmp"
chmod 644 "$tmp"
mv "$tmp" "$out"
