#!/bin/sh
# Inside the guest that deb-check.sh boots on its throwaway root (6.1 on
# bookworm's, 7.3 on trixie's), where the packages are installed: the
# boot-time pieces do their work
# (systemd-modules-load, udev's rule), and the examples built against the
# packages run against a DIF disk as a user in the dio_batch group, and
# fail for one who is not.  Writes "passed failed" to /tmp/results/counts.
#   env: KVER (the kernel DKMS built for)
# The check functions below run through check(): shellcheck cannot see it.
# shellcheck disable=SC2317
# shellcheck source=tests/vm/guest-tap.sh
. "$(dirname "$0")/guest-tap.sh"

# systemd's programs and units: under /usr/lib on trixie (merged /usr, and
# the packages built there install there), /lib on an unmerged bookworm.
sd=/usr/lib/systemd
[ -x "$sd/systemd-udevd" ] || sd=/lib/systemd
modules_loaded() { "$sd/systemd-modules-load" && [ -d /sys/module/dio_batch ]; }
check "systemd-modules-load loads dio_batch (modules-load.d)" modules_loaded
dkms_module() {
	p=$(modinfo -n dio_batch) || return 1
	echo "$p"
	case $p in
	/lib/modules/"$KVER"/updates/dkms/dio_batch.ko* | /usr/lib/modules/"$KVER"/updates/dkms/dio_batch.ko*) ;;
	*) return 1 ;;
	esac
}
check "the module loaded is the one DKMS built" dkms_module
[ -d /sys/module/dio_batch ] || finish

udev_up() {
	"$sd/systemd-udevd" --daemon &&
		udevadm trigger --action=add --subsystem-match=misc --subsystem-match=block &&
		udevadm settle --timeout=60
}
check "systemd-udevd starts and settles" udev_up
# The daemon this started exits with the script, before the guest unmounts
# the results share (its umount said "target is busy").
trap 'udevadm control --exit 2>/dev/null' EXIT
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

# The scheduled scrub (dioctl's dio-batch-scrub@.service and .timer).  The
# guest has no systemd as init: systemd-analyze checks the installed units
# offline, and run_unit starts the service's [Service] as systemd would,
# from the installed file: ExecStart with %f and %i, Environment=, each
# EnvironmentFile= in order (later files win), Nice=, IOSchedulingClass=,
# DynamicUser= (an unused uid) with SupplementaryGroups=, and the
# ConditionPathExists= of [Unit].  Any directive it does not know fails it,
# so the unit cannot gain one this check does not honour; the sandboxing
# ones (ProtectHome=, PrivateNetwork=) and the ordering ones are accepted
# and not reproduced.
unitdir=$sd/system
[ -e "$unitdir/dio-batch-scrub@.service" ] || unitdir=/lib/systemd/system
units_verify() {
	i=$(systemd-escape --path "$dev")
	systemd-analyze verify "$unitdir/dio-batch-scrub@$i.service" \
		"$unitdir/dio-batch-scrub@$i.timer" || return 1
	# Nothing printed: every warning counts.
	[ ! -s "$log" ] || { cat "$log"; return 1; }
	grep -qx 'OnCalendar=monthly' "$unitdir/dio-batch-scrub@.timer"
}
check "systemd-analyze verify: dio-batch-scrub@$(systemd-escape --path "$dev").service and .timer, monthly" units_verify
run_unit() { # INSTANCE: prints dioctl's output, returns its exit status
	inst=$1 f=$(systemd-escape --unescape --path "$1")
	envs='' files='' cmd='' nic=0 io='' dyn='' grps='' cond=''

	while IFS= read -r line; do
		case $line in '' | '#'* | '['*']') continue ;; esac
		key=${line%%=*} val=$(printf '%s' "${line#*=}" | sed "s|%f|$f|g; s|%i|$inst|g")
		case $key in
		Description | Documentation | After | Wants | ProtectHome | PrivateNetwork) ;;
		Type) [ "$val" = oneshot ] || { echo "run_unit: Type=$val"; return 99; } ;;
		ConditionPathExists) cond=$val ;;
		Environment) envs="$envs $val" ;;
		EnvironmentFile) files="$files $val" ;;
		ExecStart) cmd=$val ;;
		Nice) nic=$val ;;
		IOSchedulingClass)
			[ "$val" = idle ] || { echo "run_unit: $line"; return 99; }
			io="ionice -c 3"
			;;
		DynamicUser) dyn=$val ;;
		SupplementaryGroups) grps=$(echo "$val" | tr ' ' ,) ;;
		*) echo "run_unit: $line: not a directive this check knows"; return 99 ;;
		esac
	done <"$unitdir/dio-batch-scrub@.service"
	[ -e "$cond" ] || { echo "run_unit: ConditionPathExists=$cond: skipped"; return 0; }
	[ "$dyn" = yes ] || { echo "run_unit: not DynamicUser"; return 99; }
	(
		set -a
		for e in $envs; do eval "$e"; done
		for fl in $files; do
			case $fl in -*) fl=${fl#-}; [ -e "$fl" ] || continue ;; esac
			# shellcheck disable=SC1090 # the unit's files
			. "$fl"
		done
		set +a
		eval "set -- $cmd"
		# shellcheck disable=SC2086 # $io: the command and its options
		exec setpriv --reuid=61999 --regid=61999 --groups="$grps" -- nice -n "$nic" $io "$@"
	)
}
# (shellcheck takes $log, which guest-tap.sh sets, for one run_unit's
# subshell changed: it is not.)
# shellcheck disable=SC2031
scrub_unit_reports() {
	i=$(systemd-escape --path "$dev")
	dioctl write "$dev" -s 0 -l 16M --random 5 -a 0xd1 &&
		dioctl tag set "$dev" -L 2048 -n 1 -a 0xbeef || return 1
	# Every device at 8 MB/s; this one's blocks should carry app tag 0xd1.
	# The guest's root is read only: /etc/default a writable copy.
	cp -a /etc/default /tmp/etc-default && mount --bind /tmp/etc-default /etc/default ||
		return 1
	echo 'DIO_SCRUB_RATE=8' >/etc/default/dio-batch-scrub
	echo 'DIO_SCRUB_OPTIONS="-a 0xd1"' >"/etc/default/dio-batch-scrub@$i"
	run_unit "$i"
	st=$?
	umount /etc/default
	echo "exit status $st"
	[ "$st" = 4 ] || return 1
	grep -q '^1 PI failure' "$log" && grep -q 1048576 "$log" && grep -q 0xbeef "$log" &&
		grep -q 0xd1 "$log" || return 1
	# 16.8 MB at 8 MB/s: at least 2 s.
	s=$(sed -n 's/.* in \([0-9]*\)\.[0-9] s .*/\1/p' "$log" | head -n 1)
	[ -n "$s" ] && [ "$s" -ge 2 ]
}
check "dio-batch-scrub@ for $dev, as its unit runs (not root, idle I/O, its settings): the bad app tag of block 2048 reported, exit 4, 8 MB/s" scrub_unit_reports

rmmod scsi_debug
unload() { rmmod dio_batch; }
check "dio_batch unloads" unload
finish
