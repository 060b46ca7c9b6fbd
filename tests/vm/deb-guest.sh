#!/bin/sh
# Inside the 6.1 guest that deb-check.sh boots on its throwaway root, where
# the packages are installed: the boot-time pieces do their work
# (systemd-modules-load, udev's rule), and the examples built against the
# packages run against a DIF disk as a user in the dio_batch group, and
# fail for one who is not.  Writes "passed failed" to /tmp/results/counts.
#   env: KVER (the kernel DKMS built for)
# The check functions below run through check(): shellcheck cannot see it.
# shellcheck disable=SC2317
pass=0 fail=0 n=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $*"; }
# check DESCRIPTION COMMAND...: one case; the output is kept in $log.
log=/tmp/check.log
check() {
	desc=$1
	shift
	if "$@" >"$log" 2>&1; then
		ok "$desc"
	else
		not_ok "$desc (status $?)"
		tail -n 30 "$log" | sed 's/^/# /'
	fi
}
finish() {
	echo "$pass $fail" >/tmp/results/counts
	exit 0
}
# as USER COMMAND...: run as a user who is not root, with the groups
# /etc/group gives them, as a login would.
as() {
	u=$1
	shift
	setpriv --reuid="$u" --regid=users --init-groups --reset-env -- "$@"
}

modules_loaded() { /lib/systemd/systemd-modules-load && [ -d /sys/module/dio_batch ]; }
check "systemd-modules-load loads dio_batch (modules-load.d)" modules_loaded
dkms_module() {
	p=$(modinfo -n dio_batch) || return 1
	echo "$p"
	case $p in
	/lib/modules/"$KVER"/updates/dkms/dio_batch.ko*) ;;
	*) return 1 ;;
	esac
}
check "the module loaded is the one DKMS built" dkms_module
[ -d /sys/module/dio_batch ] || finish

udev_up() {
	/lib/systemd/systemd-udevd --daemon &&
		udevadm trigger --action=add --subsystem-match=misc --subsystem-match=block &&
		udevadm settle --timeout=60
}
check "systemd-udevd starts and settles" udev_up
node_mode() {
	m=$(stat -c '%a %U %G' /dev/dio_batch)
	echo "/dev/dio_batch: $m"
	[ "$m" = "660 root dio_batch" ]
}
check "udev: /dev/dio_batch is 0660 root:dio_batch" node_mode

# A DIF disk (type 1, DIX), given to the disk group by udev.
modprobe scsi_debug dif=1 dix=1 dev_size_mb=16 sector_size=512
udevadm settle --timeout=60
dev=
for b in /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*/block/*; do
	[ -e "$b" ] && dev=/dev/${b##*/}
done
disk_ready() { [ -n "$dev" ] && [ -b "$dev" ] && stat -c '%n %a %G' "$dev" && [ "$(stat -c %G "$dev")" = disk ]; }
check "scsi_debug DIF disk $dev, group disk" disk_ready
[ -n "$dev" ] || finish

ex=/opt/dio-examples
roundtrip() {
	as dbuser "$ex/pi_roundtrip" "$dev" 0 || return 1
	grep -q '^OK: .* verified by the module and by libdioctl' "$log"
}
check "pi_roundtrip as dbuser (group dio_batch): written and read back with PI" roundtrip
async_ok() { as dbuser "$ex/async_poll" -n 512 -q 32 -g 7 -o 1048576 "$dev" && grep -q '^OK: 512 records' "$log"; }
check "async_poll as dbuser: 512 records, 32 in flight, verified" async_ok
async_fail() {
	as dbuser "$ex/async_poll" -n 64 -q 16 -g 9 -S 5 -o 1048576 "$dev"
	[ $? = 3 ] || return 1
	grep -q '^PI failure: .*record 5 .*app' "$log" && grep -q 'expected 0x9' "$log"
}
check "async_poll as dbuser: a lost write is reported (record 5, app tag, expected 0x9), exit 3" async_fail
shared_ok() { as dbuser "$ex/shared_context" -o 4194304 "$dev"; }
check "shared_context as dbuser: two processes, one keyed context and handle" shared_ok
outsider_refused() {
	as outsider "$ex/pi_roundtrip" "$dev" 0
	[ $? = 1 ] && grep -q 'Permission denied' "$log"
}
check "pi_roundtrip as a user not in the group: /dev/dio_batch: Permission denied, exit 1" outsider_refused
dioctl_ok() { as dbuser dioctl features; }
check "dioctl features as dbuser" dioctl_ok

rmmod scsi_debug
unload() { rmmod dio_batch; }
check "dio_batch unloads" unload
finish
