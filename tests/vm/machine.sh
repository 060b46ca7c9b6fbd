# shellcheck shell=bash
# The guests' machine and kernel command line, sourced by run.sh (every
# guest) and boot-loop.sh (boot flakes), so that both boot the same
# machine.  VM_MEM (2048) and VM_SMP (2) size it.
#
# -cpu max without la57: with 5-level paging the debug kernel's KASAN once
# reported a wild-memory-access in handle_edge_irq() during early boot
# (start_kernel, long before any test; the direct map at 0xff11...), an
# intermittent report in the kernel itself that the boot-log check turns
# into a failure.  Nothing here needs 5-level paging.
# init_on_alloc=0: Debian's kernels zero every allocation by default, which
# would hide a module that hands an uninitialised kernel buffer to a device
# or to user space (t_security_pi's stale-byte tests leave a pattern behind in
# freed buffers of the same size first).
# loglevel=7 for the boot, so that a boot that stops shows where on the
# console (a few hundred lines, once); tests/vm/init then lowers the
# console's level to 4 before any test: from there the console gets only
# messages of level err and above.  A 6.1 run logs about 1800 lines (130 KB) at all levels
# (I/O and PI errors the tests cause, scsi_debug and NVMe attach and detach
# messages; more with fault injection on the debug kernel), and every byte
# on the emulated UART is written synchronously by whoever printk()s, often
# in completion or atomic context: at 115200 baud that is seconds of stalls
# in the middle of timed tests, and a risk of false hung-task and RCU stall
# reports.  The reports that matter are not lost: the guest saves its whole
# kernel log (every level) after boot and after each program
# (dmesg-*.txt) and checks it there; check.sh greps the console (err and
# above: BUG, Oops, KASAN, panics, stalls, hung tasks) for a guest that died
# before it could save its log, and the log guest-init.sh saves last.
#
# One TCG thread for both vCPUs (thread=single), but for the kcsan kernel,
# whose data-race reports need vCPUs that really run at once.  Under
# multi-threaded TCG (QEMU 7.2) the kernel's live code patching fails now
# and then: text_poke_bp() puts an int3 in the instruction it changes,
# waits until every CPU has synced, and removes it, yet the other vCPU
# sometimes still executes the int3 afterwards, and the kernel dies of
# "int3: 0000 [#1]" (the stock 6.12 kernel once in its boot, in
# sched_clock_cpu(); the debug kernel once 97 s into a make check, in
# ttwu_do_wakeup(), whose sched_wakeup tracepoint the tracing in
# t_durability had just switched on, with the same patching).  Tests that
# switch tracepoints and static keys run on every kernel; no real CPU does
# this.  Two guests share the two cores in make check, each using about
# one core in the debug lanes (924 s of QEMU CPU in a 978 s part), so one
# thread a guest costs little there.
# VM_TCG_THREAD (single or multi) overrides it.
# edd=off: the kernel's real-mode setup asks the BIOS about every disk
# (Enhanced Disk Drive information, int 13h) before it starts, and
# SeaBIOS answers for NVMe namespaces through its own driver, which now
# and then never returns for the format matrix's namespaces (4096-byte
# blocks, 64 bytes of metadata with PI): three boots in five stopped at
# "Probing EDD (edd=off to disable)..." with no kernel output, until
# run.sh's boot guard gave up after ten minutes.  Nothing here reads EDD.
case "${flavour:-}" in
kcsan) vm_tcg_thread=${VM_TCG_THREAD:-multi} ;;
*) vm_tcg_thread=${VM_TCG_THREAD:-single} ;;
esac
# shellcheck disable=SC2034,SC2054 # used by the scripts that source this; QEMU's options hold commas
vm_machine=(-M q35 -cpu max,la57=off -smp "${VM_SMP:-2}" -m "${VM_MEM:-2048}"
	-accel "tcg,thread=$vm_tcg_thread" -nographic -no-reboot -nodefaults -serial stdio)
# shellcheck disable=SC2034 # used by the scripts that source this
vm_cmdline="console=ttyS0 panic=-1 loglevel=7 slab_nomerge init_on_alloc=0 edd=off"
