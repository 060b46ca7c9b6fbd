#!/usr/bin/env bash
# Boot a guest on a stock kernel and run a script inside it.
#   run.sh FLAVOUR RESULTS_DIR
# RESULTS_DIR must hold guest.sh; the guest sees it at /tmp/results and
# leaves guest.log, guest.rc and dmesg.txt there; the serial console goes to
# RESULTS_DIR/console.log.  NVMe PI namespaces are attached (nsid 1-19, see
# tests/README.md).  Exit status: guest.sh's, or 124 on time-out, 125 when
# the guest died without one.  VM_ROOT (default /) is the directory the
# guest takes as its root filesystem (deb-check.sh: a throwaway root).
# VM_CMDLINE: more kernel parameters (bench/run-guest.sh: the clocksource).
# VM_MEM, VM_SMP: the guest's memory in MiB (2048) and vCPUs (2): machine.sh.
# VM_QEMU_ARGS: more QEMU options, split at spaces (bench/icount.sh: a TCG
# plugin).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
flavour=$1 res=$(cd "$2" && pwd)
# The whole suite under TCG: about 14 minutes on a stock kernel, 20 to 30
# on the debug one (KASAN, lockdep, kmemleak, the fuzzers, the module-load
# sweep).  The limit catches a guest that hangs, and leaves room for a
# loaded machine: a 6.1 guest beside a debug lane and three more guests
# (2026-12-06) reached its last program, t_stacks, after 19.5 minutes, and
# the debug guest beside it took 41 minutes (2,483 s).  Later the same
# day a flake hunt beside four more guests and their builds (load 15 to
# 20 on two cores) slowed a 6.1 guest four times: t_dioctl and t_fio ran
# 600 s each, where make check gives them 155 and 220, and the guest hit
# the 1,800 s it had then, while every program was still making
# progress.  A hang guard only says how long a hang takes to be reported,
# so it has room for five times a make check's time: 3,600 s for a stock
# guest, 7,200 s for a debug or kcsan guest running the whole suite.
case "$flavour" in debug | kcsan) : "${VM_TIMEOUT:=7200}" ;; *) : "${VM_TIMEOUT:=3600}" ;; esac
# The boot guard: the guest's kernel and init must reach "init: guest user
# space up" within VM_BOOT_TIMEOUT seconds.  A debug guest gets there in
# about 45 s beside another guest (a stock one in 10 to 20 s); at the four
# times slower of a loaded flake hunt, 180 s.  Debug guests used to stop
# in about one boot in 23 with both vCPUs idle (6.1's RCU-tasks self-test
# deadlock, now patched: tests/vm/linux-6.1-patches/), and would have sat
# until VM_TIMEOUT and CI's time limit.  A boot past the guard is stopped
# and tried once more (below); no test has run by then, and the module is
# not loaded.
: "${VM_BOOT_TIMEOUT:=600}"

eval "$("$here/kernel.sh" env "$flavour")"
cache=${DIO_CACHE:-/var/cache/dio_batch}/initramfs
mkdir -p "$cache"
initrd=$cache/$KVER.cpio.gz
if [ ! -s "$initrd" ] || [ "$here/init" -nt "$initrd" ] || [ "$here/mkinitramfs.sh" -nt "$initrd" ]; then
	"$here/mkinitramfs.sh" "$MODDIR" "$initrd"
fi

# NVMe namespaces with PI; sparse backing files the host (and the guest,
# through the results share) can corrupt behind the device's back.
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19; do
	truncate -s 64M "$res/nvme$i.img"
done
# The power cut's pair (tests/guest/t_powercut.c): 2048 blocks of 4096
# bytes with 8 bytes of PI each, the metadata after the data in the file,
# as QEMU keeps it (8 MiB, then 16 KiB).  nsid 18 is written through
# QEMU's blklogwrites driver, which records every write (data and metadata
# apart, in the order QEMU issues them) and flush in dm-log-writes' format
# in nvme18.log; nsid 19 is where the guest replays that record.
pc_size=$((2048 * (4096 + 8)))
truncate -s 0 "$res/nvme18.img" "$res/nvme19.img" "$res/nvme18.log"
truncate -s "$pc_size" "$res/nvme18.img" "$res/nvme19.img"
# The controller is in a subsystem, so that a namespace can be detached
# (Namespace Attachment) while it stays up; the guest boots with
# nvme_core.multipath=N, so the namespaces are plain nvme0nX as without it.
# QEMU's option syntax doubles a comma inside a value (the path).
qres=${res//,/,,}
# shellcheck disable=SC2054  # the commas separate QEMU's suboptions
nvme=(
	-device nvme-subsys,id=nvmesubsys0,nqn=diobatch
	-device nvme,id=nvme0,serial=diobatch0,subsys=nvmesubsys0
	-drive file="$qres/nvme1.img",if=none,id=nvm1,format=raw,cache=writeback
	-device nvme-ns,drive=nvm1,bus=nvme0,nsid=1,ms=8,mset=0,pi=1
	-drive file="$qres/nvme2.img",if=none,id=nvm2,format=raw,cache=writeback
	-device nvme-ns,drive=nvm2,bus=nvme0,nsid=2,logical_block_size=4096,physical_block_size=4096,ms=16,mset=0,pi=1,pif=2
	-drive file="$qres/nvme3.img",if=none,id=nvm3,format=raw,cache=writeback
	-device nvme-ns,drive=nvm3,bus=nvme0,nsid=3,ms=8,mset=0,pi=3
	# Metadata larger than PI: 16 bytes, the T10 type 1 CRC16 tuple in the
	# first 8 (pil=1; Linux 6.1 takes PI only first, or as all of the
	# metadata), 8 bytes the kernel does not interpret.
	-drive file="$qres/nvme4.img",if=none,id=nvm4,format=raw,cache=writeback
	-device nvme-ns,drive=nvm4,bus=nvme0,nsid=4,ms=16,mset=0,pi=1,pil=1
	# Type 2: the kernel's profile is type 1's; libdioctl asks Identify.
	-drive file="$qres/nvme5.img",if=none,id=nvm5,format=raw,cache=writeback
	-device nvme-ns,drive=nvm5,bus=nvme0,nsid=5,ms=8,mset=0,pi=2
)
# The format matrix (tests/guest/t_formats.c): metadata of 8, 16 and 64
# bytes, the PI first (pil=1) and last (pil=0, NVMe's default, where the
# guard also covers the metadata bytes before the tuple), 16-bit (CRC16)
# and 64-bit (pif=2, CRC64) guards, types 1, 2 and 3, 512- and 4096-byte
# blocks, in a separate buffer (mset=0); then the layouts no kernel offers
# PI for: metadata inline with the data (extended LBAs, mset=1), which
# Linux's PCIe driver cannot transfer, and metadata without PI.  Linux 6.1
# offers no PI for a tuple that is neither first nor all of the metadata;
# 6.12 and 7.3 do.  t_formats learns each format by Identify Namespace,
# not from this list.
lb4k=logical_block_size=4096,physical_block_size=4096
matrix=(
	"mset=0,ms=16,pi=1,pil=0"
	"mset=0,$lb4k,ms=64,pi=1,pil=0"
	"mset=0,$lb4k,ms=64,pi=1,pil=1"
	"mset=0,$lb4k,ms=64,pi=3,pil=0"
	"mset=0,$lb4k,ms=64,pi=2,pif=2,pil=0"
	"mset=0,ms=16,pi=1,pif=2"
	"mset=0,$lb4k,ms=8,pi=1"
	"mset=0,ms=64,pi=3,pif=2,pil=1"
	"mset=0,$lb4k,ms=16,pi=2,pil=0"
	"mset=1,ms=8,pi=1"
	"mset=1,$lb4k,ms=64,pi=1,pil=0"
	"mset=0,ms=16,pi=0"
)
for i in "${!matrix[@]}"; do
	n=$((i + 6))
	nvme+=(-drive "file=$qres/nvme$n.img,if=none,id=nvm$n,format=raw,cache=writeback"
		-device "nvme-ns,drive=nvm$n,bus=nvme0,nsid=$n,${matrix[$i]}")
done
# shellcheck disable=SC2054  # the commas separate QEMU's suboptions
nvme+=(
	-blockdev "driver=file,node-name=pcdata,filename=$qres/nvme18.img"
	-blockdev "driver=file,node-name=pclog,filename=$qres/nvme18.log"
	-blockdev driver=blklogwrites,node-name=nvm18,file=pcdata,log=pclog,log-sector-size=512
	-device "nvme-ns,drive=nvm18,bus=nvme0,nsid=18,$lb4k,ms=8,mset=0,pi=1"
	-drive "file=$qres/nvme19.img,if=none,id=nvm19,format=raw,cache=writeback"
	-device "nvme-ns,drive=nvm19,bus=nvme0,nsid=19,$lb4k,ms=8,mset=0,pi=1"
)
rm -f "$res/guest.rc" "$res/guest.log" "$res/dmesg.txt" "$res/boot-retries" "$res"/console-boot-*.log
# Where the checkout is, for the guest's init (in the results share, not on
# the kernel command line: the path may hold spaces).
printf '%s\n' "$top" >"$res/.top"
# The machine and the kernel's command line: machine.sh.
# shellcheck source=tests/vm/machine.sh
. "$here/machine.sh"
# VM_QEMU_ARGS, one option or value a word.
read -r -a qemu_args <<<"${VM_QEMU_ARGS:-}"
# QEMU runs in the background and is waited for, so that a run killed
# (Ctrl-C, CI's time limit) takes its guest with it: bash runs a trap only
# after a foreground command ends.  timeout passes the TERM on to QEMU.
qpid=
# shellcheck disable=SC2317 # called by the traps
stop_guest() {
	[ -z "$qpid" ] || kill "$qpid" 2>/dev/null
	qpid=
}
trap stop_guest EXIT
trap 'stop_guest; exit 130' INT
trap 'stop_guest; exit 143' TERM
boot() {
	timeout -k 10 "$VM_TIMEOUT" qemu-system-x86_64 "${vm_machine[@]}" \
		-kernel "$VMLINUZ" -initrd "$initrd" \
		-append "$vm_cmdline nvme_core.multipath=N ${KCMDLINE_EXTRA:-} ${VM_CMDLINE:-}" \
		-virtfs local,path="${VM_ROOT:-/}",mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs local,path="${top//,/,,}",mount_tag=srctree,security_model=none,readonly=on,multidevs=remap \
		-virtfs local,path="$qres",mount_tag=results,security_model=none,multidevs=remap \
		"${nvme[@]}" "${qemu_args[@]}" </dev/null >"$res/console.log" 2>&1 &
	qpid=$!
	# The boot guard: stop a guest whose user space is not up in time.
	rm -f "$res/.boot-hung"
	(
		for ((i = 0; i < VM_BOOT_TIMEOUT; i++)); do
			sleep 1
			grep -qs 'init: guest user space up' "$res/console.log" && exit 0
			kill -0 "$qpid" 2>/dev/null || exit 0
		done
		: >"$res/.boot-hung"
		kill "$qpid" 2>/dev/null
	) &
	local wpid=$! rc
	wait "$qpid"
	rc=$?
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
	qpid=
	return $rc
}
boot_hung() { [ -e "$res/.boot-hung" ]; }
# A kernel that fails in its boot, before user space: the stock 6.12 kernel
# once took "Oops: int3" in sched_clock_cpu() 2.6 s into its boot (not
# tainted, no module of ours loaded; most likely the breakpoint x86 puts
# in code it patches, met by the other vCPU under QEMU's multi-threaded
# TCG, not analysed further).  Such a
# boot is tried once more, as a hung one is; a second failure fails the
# guest, and a report once user space is up always does.
boot_fault='Kernel panic|Oops|BUG:|general protection fault'
# QEMU itself has crashed (SIGSEGV, once in a make check) while the guest
# was still in its firmware: a fault of the host's emulator, not of the
# guest.  Such a boot, dead of a signal other than timeout's before the
# guest's user space said it was up, is tried once more; its console is
# kept as console-boot-qemu-crash.log.
set +e
# boot_retry: why the boot that just ended should be tried again (its
# console kept under a name that says why), or nothing; only a boot that
# never reached the guest's user space qualifies.
boot_retry() {
	grep -qs 'init: guest user space up' "$res/console.log" && return 0
	if boot_hung; then
		echo "hung BOOT HUNG: the guest's user space was not up after ${VM_BOOT_TIMEOUT}s"
	elif grep -qsE "$boot_fault" "$res/console.log"; then
		echo "failed KERNEL FAILED IN BOOT, before user space and before any test:" \
			"$(grep -m1 -oE "($boot_fault).*" "$res/console.log")"
	elif [ "$qrc" -gt 128 ] && [ "$qrc" != 137 ]; then
		echo "qemu-crash qemu died (exit $qrc) before the guest's user space was up"
	fi
}
for attempt in 1 2; do
	boot
	qrc=$?
	[ $attempt = 1 ] || break
	why=$(boot_retry)
	[ -n "$why" ] || break
	echo "vm: ${why#* } (console kept as console-boot-${why%% *}.log); booting again" >&2
	# Not a failed test, but the summary and make flakes say it happened.
	"$here/boot-retried.sh" "$res" "${why%% *}" "${why#* }"
done
set -e
# The CPU time QEMU used (user + system, in seconds; its children are this
# script's only ones), for check.sh's phases: on a machine with fewer
# cores than guests and builds, CPU, not wall time, says what a lane costs.
# times runs in this shell, not in a pipeline's subshell (no children).
times >"$res/qemu-cpu.times"
awk 'NR == 2 {
	n = 0
	for (i = 1; i <= 2; i++) {
		split($i, t, "m")
		n += t[1] * 60 + t[2]
	}
	printf "%d\n", n
}' "$res/qemu-cpu.times" >"$res/qemu-cpu"
rm -f "$res/qemu-cpu.times"
rm -f "$res"/nvme?.img "$res"/nvme??.img "$res"/nvme18.log
if boot_hung; then
	echo "vm: the guest's user space was not up after ${VM_BOOT_TIMEOUT}s, twice" >&2
	rm -f "$res/.boot-hung"
	exit 124
fi
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	echo "vm: guest timed out after ${VM_TIMEOUT}s" >&2
	exit 124
fi
if [ ! -s "$res/guest.rc" ]; then
	echo "vm: guest died without a result (qemu exit $qrc)" >&2
	exit 125
fi
exit "$(cat "$res/guest.rc")"
