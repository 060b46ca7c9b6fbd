#!/bin/sh
# PID 1 of the test guest after switch_root (see tests/vm/init): run
# /tmp/results/guest.sh, record its exit status and the kernel log, end the
# guest.
cd /tmp/results || exit 1
HOME=/tmp PATH=/usr/sbin:/usr/bin:/sbin:/bin sh ./guest.sh >guest.log 2>&1
echo $? >guest.rc
dmesg >dmesg.txt
sync
cd /
umount /tmp/results
echo "init: rebooting (QEMU's -no-reboot ends the guest)"
# A synchronous reboot, which -no-reboot turns into QEMU's exit: the debug
# kernel has no ACPI to power off with (tests/vm/guest.config).  PID 1 must
# never exit: sysrq as a fallback, then spin in the shell itself, since
# nothing may be exec'd once the root is gone.
/bin/busybox reboot -f
echo b >/proc/sysrq-trigger
while :; do :; done
