#!/bin/sh
# PID 1 of the test guest after switch_root (see tests/vm/init): run
# /tmp/results/guest.sh, record its exit status and the kernel log, power off.
cd /tmp/results || exit 1
HOME=/tmp PATH=/usr/sbin:/usr/bin:/sbin:/bin sh ./guest.sh >guest.log 2>&1
echo $? >guest.rc
dmesg >dmesg.txt
sync
cd /
umount /tmp/results
echo "init: powering off"
# Synchronous power-off (PID 1 must never exit); sysrq as a fallback (and
# on a root without busybox: deb-check.sh trixie's), then spin in the shell
# itself: nothing may be exec'd once the root is gone.
[ ! -x /bin/busybox ] || /bin/busybox poweroff -f
echo o >/proc/sysrq-trigger
while :; do :; done
