#!/usr/bin/env bash
# make demo: boot one guest on the release's own kernel (Debian 12: 6.1;
# Debian 13: 6.12), or on DEMO_KERNEL's, and show dio_batch at work with
# dioctl: features, queries of a scsi_debug DIF/DIX disk and three QEMU
# NVMe namespaces with PI, then a data block corrupted behind the device's
# back and found again, block and tag.
#   demo.sh            (after `make tools build/tests/kmodctl`, as make demo does; results in build/demo)
#   demo.sh --kernel   print the kernel it would boot and where it comes from
# DEMO_KERNEL (make demo DEMO_KERNEL=...): 6.1, 6.12 or 7.3.  On Debian 12
# 6.12 comes from bookworm-backports, which tests/vm/kernel.sh adds to
# apt's sources, and 7.3 from trixie-backports in a trixie root of the
# project's own, in /var/cache/dio_batch; on Debian 13, 7.3 from that
# root too and 6.1 from a bookworm root beside it: no apt source is
# written to the system.
# Exit status: 0 when every step did what it should, 1 otherwise.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
B=$top/build
res=$B/demo

say() { printf '\n=== %s\n' "$*"; }
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
# shellcheck source=scripts/debian-source.sh
. "$top/scripts/debian-source.sh"

# The kernel: DEMO_KERNEL's, else the release's own (/etc/os-release).
suite=$(host_suite)
own=$(host_kernel) ||
	die "$suite is neither Debian 12 (bookworm) nor Debian 13 (trixie): no kernel of its own to show"
case "$suite" in
bookworm) release="Debian 12" ;;
trixie) release="Debian 13" ;;
esac
offered="6.1, 6.12 or 7.3"
flavour=${DEMO_KERNEL:-$own}
case "$suite $flavour" in
"bookworm 6.1" | "trixie 6.12") what="$release's kernel ($flavour)" ;;
"bookworm 6.12") what="bookworm-backports' kernel (6.12)" ;;
"trixie 6.1") what="Debian 12's kernel (6.1)" ;;
*" 7.3") what="trixie-backports' kernel (7.3)" ;;
*) die "DEMO_KERNEL=$flavour: on $release the demo boots $offered" ;;
esac
if [ "${1:-}" = --kernel ]; then
	echo "$flavour $what"
	exit 0
fi

for f in "$B/tools/dioctl" "$B/tests/kmodctl"; do
	[ -x "$f" ] || die "$f is missing: run 'make demo'"
done

say "Preparing $what and building dio_batch for it"
"$here/kernel.sh" prepare "$flavour" || die "kernel $flavour could not be prepared"
eval "$("$here/kernel.sh" env "$flavour")" || die "kernel.sh env $flavour failed"
rm -rf "$res" && mkdir -p "$res"
if ! "$here/kernel.sh" build-module "$flavour" "$res/ko" >"$res/build.log" 2>&1; then
	cat "$res/build.log" >&2
	die "dio_batch does not build for $KVER"
fi

# The script the guest runs (POSIX sh: /bin/sh is dash).  The NVMe
# namespaces' backing files are in the results share, /tmp/results.
{
	printf "B='%s'\nKO='%s'\nexport DIO_MODDIR='%s'\n" "$B" "$res/ko/dio_batch.ko" "$MODDIR"
	cat <<'EOS'
export PATH="$B/tools:$PATH"
OFF=1048576		# where the story happens: 1 MiB into the device
LEN=65536		# 64 KiB: 128 blocks of 512 bytes
BAD=5			# the block we corrupt
nok=0 nbad=0 failed=

say() { echo; echo "=== $*"; }
tell() { echo "    $*"; }
pass() { nok=$((nok + 1)); }
flunk() { nbad=$((nbad + 1)); failed="$failed
  - $*"; echo "  >>> step FAILED: $*"; }
# try CMD...: show the command and its output; $out and $rc keep them.
try() {
	echo "\$ $*"
	out=$("$@" 2>&1); rc=$?
	[ -z "$out" ] || echo "$out" | sed 's/^/  /'
	return $rc
}
# expect_ok TITLE CMD...
expect_ok() { t=$1; shift; if try "$@"; then pass; else flunk "$t"; fi; }

kmod() { "$B/tests/kmodctl" "$@"; }
scsi_debug_disk() {
	for b in /sys/block/sd*; do
		grep -qs '^scsi_debug' "$b/device/model" && echo "/dev/${b##*/}"
	done
}
nvme_ns() { # NSID: names are not stable across kernels, nsids are
	for b in /sys/block/nvme0n*; do
		[ "$(cat "$b/nsid" 2>/dev/null)" = "$1" ] && echo "/dev/${b##*/}"
	done
}
wait_dev() { # FUNCTION ARG: poll up to 20 s for a block device
	i=0
	while [ $i -lt 100 ]; do
		d=$("$@" | head -n 1)
		[ -n "$d" ] && [ -b "$d" ] && { echo "$d"; return 0; }
		sleep 0.2; i=$((i + 1))
	done
	return 1
}
byte_at() { od -An -tu1 -j "$2" -N1 "$1" | tr -d ' '; }
flip_byte() { # FILE POS WHAT: invert one byte in place
	old=$(byte_at "$1" "$2")
	new=$((old ^ 255))
	printf "\\$(printf %o $new)" | dd of="$1" bs=1 seek="$2" count=1 conv=notrunc 2>/dev/null
	printf '$ dd of=%s bs=1 seek=%d count=1 conv=notrunc    # %s: 0x%02x -> 0x%02x\n' \
		"$1" "$2" "$3" "$old" "$(byte_at "$1" "$2")"
	if [ "$(byte_at "$1" "$2")" = $new ]; then pass; else flunk "corrupting $3"; fi
}
# raw_capable DEVICE: yes when the device can be read without its PI checks
raw_capable() {
	if dioctl query "$1" | grep -q '^pi caps.* nocheck'; then echo yes; else echo no; fi
}

say "Loading dio_batch, scsi_debug (DIF type 1 + DIX) and the NVMe driver"
echo "guest kernel: $(uname -r)"
expect_ok "load dio_batch" kmod insert "$KO"
expect_ok "load sd_mod" kmod probe sd_mod
expect_ok "load scsi_debug" kmod probe scsi_debug "dev_size_mb=16 dif=1 dix=1"
expect_ok "load nvme" kmod probe nvme
sd=$(wait_dev scsi_debug_disk) || { flunk "no scsi_debug disk appeared"; sd=; }
ns1=$(wait_dev nvme_ns 1) || { flunk "NVMe namespace 1 did not appear"; ns1=; }
ns2=$(wait_dev nvme_ns 2) || flunk "NVMe namespace 2 did not appear"
ns3=$(wait_dev nvme_ns 3) || flunk "NVMe namespace 3 did not appear"
tell "scsi_debug disk: ${sd:-none}; NVMe namespaces 1-3: ${ns1:-none} ${ns2:-none} ${ns3:-none}"

say "What the loaded module supports"
expect_ok "dioctl features" dioctl features

say "What each device tells an application before I/O"
tell "scsi_debug: 512-byte blocks with an 8-byte T10 tuple (CRC16 guard, type 1)."
tell "NVMe nsid 1: 512+8, CRC16, type 1; nsid 2: 4096+16, CRC64 guard (NVMe"
tell "extended PI), type 1; nsid 3: 512+8, CRC16, type 3 (no reference tag)."
for d in $sd $ns1 $ns2 $ns3; do
	expect_ok "dioctl query $d" dioctl query "$d"
done

if [ -n "$ns1" ]; then
	NS=${ns1#/dev/}
	IMG=/tmp/results/nvme1.img
	LBS=$(cat "/sys/block/$NS/queue/logical_block_size")
	NLBAS=$(( $(cat "/sys/block/$NS/size") * 512 / LBS ))
	MS=8
	LBA=$((OFF / LBS + BAD))

	say "1. Write 64 KiB with PI generated in user space, to NVMe namespace 1"
	tell "dioctl computes one 8-byte tuple per 512-byte block with libdioctl"
	tell "(guard = CRC16 of the data, app tag 0x00d1, ref tag = the block's LBA)"
	tell "and hands data and PI to the module in one request; the device checks both."
	expect_ok "write with PI" dioctl write "$ns1" --offset $OFF --length $LEN --random 42 --pi --app-tag 0xd1

	say "2. Read it back with its PI, and verify every tuple in user space"
	expect_ok "verified read" dioctl read "$ns1" --offset $OFF --length $LEN --verify --app-tag 0xd1

	say "3. Where QEMU keeps block $BAD (LBA $LBA) in the namespace's backing file"
	tell "QEMU stores a namespace's data first (LBA n at n * $LBS) and, with mset=0,"
	tell "the metadata after all $NLBAS blocks of data (LBA n's at $NLBAS * $LBS + n * $MS)."
	tell "Checked here: the block as the device reads it equals those file bytes,"
	tell "and the tuple dioctl fetches equals the 8 bytes of the metadata region."
	try dioctl read "$ns1" --offset $((OFF + BAD * LBS)) --length $LBS --dump
	want=$(echo "$out" | sed -n 's/.*guard \([0-9a-f]*\)  app \([0-9a-f]*\)  ref \([0-9a-f]*\).*/\1\2\3/p')
	got=$(od -An -tx1 -j $((NLBAS * LBS + LBA * MS)) -N $MS "$IMG" | tr -d ' \n')
	dd if="$ns1" of=/tmp/blk.dev bs="$LBS" skip="$LBA" count=1 iflag=direct 2>/dev/null
	dd if="$IMG" of=/tmp/blk.img bs="$LBS" skip="$LBA" count=1 2>/dev/null
	echo "  tuple from the device: $want; from nvme1.img at byte $((NLBAS * LBS + LBA * MS)): $got"
	if [ $rc = 0 ] && [ -n "$want" ] && [ "$want" = "$got" ] && cmp -s /tmp/blk.dev /tmp/blk.img; then
		echo "  data of LBA $LBA = bytes $((LBA * LBS))..$(((LBA + 1) * LBS - 1)) of nvme1.img: layout confirmed"
		pass
	else
		flunk "backing file layout (data at LBA * $LBS, metadata after the data) not confirmed"
	fi

	say "4. Corrupt one data byte of block $BAD behind the device's back"
	flip_byte "$IMG" $((LBA * LBS + 100)) "byte 100 of block $BAD"
	tell "Nothing else changes: the stored PI still describes the old data."

	say "5. Read the 64 KiB again: the corruption is found"
	try dioctl read "$ns1" --offset $OFF --length $LEN --verify --app-tag 0xd1
	if [ $rc = 4 ] && echo "$out" | grep -q "block $BAD of this I/O" &&
		echo "$out" | grep -Eq 'tag: +guard'; then
		if [ "$(raw_capable "$ns1")" = no ]; then
			tell "The device refused block $BAD with a guard check error (sc 0x82 in the"
			tell "kernel log below), but Linux $(uname -r | cut -d- -f1) passes only 'protection error' up:"
			tell "the module names the block, and libdioctl's dio_pi_explain_error() read it raw"
			tell "by NVMe passthrough (the drive's checks off) for the tag and both values."
		fi
		pass
	else
		flunk "NVMe: corruption of block $BAD not reported with its tag and values"
	fi
	tell "The same read without a PI buffer (the kernel's PI), still reported exactly:"
	try dioctl read "$ns1" --offset $OFF --length $LEN
	if [ $rc = 4 ] && echo "$out" | grep -q "block $BAD of this I/O"; then
		pass
	else
		flunk "NVMe plain read: corruption of block $BAD not reported"
	fi

	say "6. A raw read of the bad NVMe block: its data and tuple as stored"
	try dioctl read "$ns1" --offset $((OFF + BAD * LBS)) --length "$LBS" --raw --dump --verify --app-tag 0xd1
	if [ $rc = 4 ] && echo "$out" | grep -q 'verify FAILED: block 0 .*guard'; then
		if [ "$(raw_capable "$ns1")" = no ]; then
			tell "DIO_PI_NOCHECK is refused by NVMe before Linux 6.14 (no BIP_CHECK flags);"
			tell "dioctl read it by NVMe passthrough (dio_pi_read_raw) instead."
		fi
		pass
	else
		flunk "NVMe raw read: the stored tuple did not come back"
	fi

	say "7. Repair block $BAD from our own copy of the data, and check again"
	tell "(as 4 requests of 16 KiB in one batch, with forced unit access)"
	expect_ok "NVMe repair write" dioctl write "$ns1" --offset $OFF --length $LEN --random 42 --pi --app-tag 0xd1 --batch 4 --fua
	expect_ok "NVMe verified read after repair" dioctl read "$ns1" --offset $OFF --length $LEN --verify --app-tag 0xd1
fi

if [ -n "$sd" ]; then
	SD=${sd#/dev/}
	LBA=$((OFF / 512 + BAD))
	say "8. The same story on SCSI (scsi_debug, DIF type 1 + DIX), where raw reads work"
	expect_ok "SCSI write with PI" dioctl write "$sd" --offset $OFF --length $LEN --random 42 --pi --app-tag 0xd1
	tell "scsi_debug has no backing file; the same damage is done by a write that"
	tell "bypasses PI: with $SD's integrity/write_generate off, dd's plain write of"
	tell "block $BAD (one byte changed) carries no PI, and the disk keeps the old tuple."
	dd if="$sd" of=/tmp/blk bs=512 skip=$LBA count=1 iflag=direct 2>/dev/null
	flip_byte /tmp/blk 100 "byte 100 of a copy of block $BAD"
	echo 0 >"/sys/block/$SD/integrity/write_generate"
	if dd if=/tmp/blk of="$sd" bs=512 seek=$LBA count=1 oflag=direct conv=notrunc 2>/dev/null; then
		echo "\$ dd if=/tmp/blk of=$sd bs=512 seek=$LBA count=1 oflag=direct conv=notrunc    # no PI"
		pass
	else
		flunk "SCSI: the write without PI failed"
	fi
	echo 1 >"/sys/block/$SD/integrity/write_generate"
	tell "Reading the 64 KiB: the disk refuses it; the module reads the request"
	tell "again block by block, raw, and checks each against its stored tuple:"
	try dioctl read "$sd" --offset $OFF --length $LEN --verify --app-tag 0xd1
	if [ $rc = 4 ] && echo "$out" | grep -q "block $BAD of this I/O" &&
	   echo "$out" | grep -Eq 'tag: +guard'; then
		pass
	else
		flunk "SCSI: corruption of block $BAD not reported as a guard tag failure"
	fi
	tell "A raw read of block $BAD (DIO_PI_NOCHECK): data and stored tuple as they are,"
	tell "checked by dioctl with libdioctl's dio_pi_verify():"
	try dioctl read "$sd" --offset $((OFF + BAD * 512)) --length 512 --raw --dump --verify --app-tag 0xd1
	if [ $rc = 4 ] && echo "$out" | grep -q 'verify FAILED: block 0 .*guard tag'; then
		pass
	else
		flunk "SCSI raw read of block $BAD did not show the bad guard"
	fi
	expect_ok "SCSI repair write" dioctl write "$sd" --offset $OFF --length $LEN --random 42 --pi --app-tag 0xd1
	expect_ok "SCSI verified read after repair" dioctl read "$sd" --offset $OFF --length $LEN --verify --app-tag 0xd1
fi

say "Kernel log"
bad='BUG:|WARNING:|Oops|KASAN|refcount_t|list_add corruption|list_del corruption|general protection fault|UBSAN'
if dmesg | grep -E "$bad"; then
	flunk "the kernel log has reports (above)"
else
	echo "  no BUG, WARNING or Oops"; pass
fi
dmesg | grep -E 'protection error|Cmd\(0x[12]\).*Error|dio_batch' | sed 's/^/  /' | tail -n 12

say "Summary: $nok steps did what they should, $nbad did not"
if [ $nbad != 0 ]; then
	echo "failed steps:$failed"
	exit 1
fi
echo "demo: all good"
EOS
} >"$res/guest.sh"

say "Booting a QEMU guest on $KVER (TCG: about a minute); its output follows"
"$here/run.sh" "$flavour" "$res" &
vm=$!
# Show the guest's log as it is written (it lives in the results share).
tail -n +1 -s 0.5 -F --pid=$vm "$res/guest.log" 2>/dev/null
wait $vm
rc=$?
echo
if [ $rc -ge 124 ]; then
	echo "demo: the guest did not finish (status $rc); end of its console:"
	tail -n 40 "$res/console.log"
fi
if grep -E 'BUG:|WARNING:|Oops|Kernel panic' "$res/console.log" >/dev/null; then
	echo "demo: kernel reports on the console (see $res/console.log)"
	rc=1
fi
echo "demo: guest status $rc; logs in $res"
[ $rc = 0 ]
