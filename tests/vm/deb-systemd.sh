#!/bin/sh
# Inside the guest that deb-check.sh boots a second time on its throwaway
# root (6.1 on bookworm's, 7.3 on trixie's), now with systemd as init (tests/vm/init starts it): run by
# dio-batch-check.service, the last unit of dio-batch-check.target, which
# the kernel command line names.  deb-check.sh has enabled the dioctl
# package's dio-batch-scrub@dev-sda.timer as its header says (systemctl
# enable), with its last run two months back, so the monthly timer
# (Persistent=true) catches up at this boot; a scsi_debug DIF disk is
# loaded at boot (modules-load.d) and given data with app tag 0xd1 and one
# block with 0xbeef by dio-batch-check-disk.service before the scrub may
# start.  Here: the boot-time pieces did their work (systemd-modules-load,
# udev), the timer started the scrub, which logged the bad block to the
# journal as a user of its own and failed with exit status 4; the timer
# waits for the first of next month; a second scrub, slowed, loses its disk
# in the middle (deleted) and ends on its own with what it found so far;
# a scrub of a disk that is not there is skipped.  Then the journal and
# the kernel log are saved, "passed failed" goes to /tmp/results/counts,
# guest.rc is written and the guest powered off.
# The check functions below run through check(): shellcheck cannot see it.
# shellcheck disable=SC2317
cd /tmp/results || exit 1
exec >guest.log 2>&1
# shellcheck source=tests/vm/guest-tap.sh
. "$(dirname "$0")/guest-tap.sh"

dev=/dev/sda
unit=dio-batch-scrub@dev-sda
# prop UNIT PROPERTY: one property's value, as systemctl show gives it.
prop() { systemctl show -P "$2" "$1"; }
# wait_done UNIT SECONDS: until UNIT's main process has exited once
# (ExecMainExitTimestampMonotonic set), or SECONDS passed.
wait_done() {
	i=0
	while [ "$(prop "$1" ExecMainExitTimestampMonotonic)" = 0 ]; do
		[ "$i" -lt $(($2 * 5)) ] || return 1
		sleep 0.2
		i=$((i + 1))
	done
}

end() {
	systemctl list-units --failed --no-pager --plain >units-failed.txt 2>&1
	journalctl -b --no-pager -o short-monotonic >journal.txt 2>&1
	dmesg >dmesg.txt
	echo "$pass $fail" >"$counts"
	echo 0 >guest.rc
	sync
	echo "init: powering off"
	systemctl poweroff --force --force
	exit 0
}

booted() {
	timeout 120 systemctl is-system-running --wait >/dev/null 2>&1
	# Running or degraded: the boot is over (a host-root unit that fails
	# in a guest, say timesyncd without a network, degrades it).
	s=$(systemctl is-system-running)
	echo "system: $s; pid 1: $(cat /proc/1/comm)"
	[ "$(cat /proc/1/comm)" = systemd ] || return 1
	case $s in running | degraded | starting) ;; *) return 1 ;; esac
}
check "systemd is PID 1 and the boot got this far" booted
modules_at_boot() {
	[ "$(prop systemd-modules-load.service Result)" = success ] &&
		[ -d /sys/module/dio_batch ] && [ -d /sys/module/scsi_debug ]
}
check "systemd-modules-load.service loaded dio_batch (modules-load.d) at boot" modules_at_boot
udev_node() {
	m=$(stat -c '%a %U %G' /dev/dio_batch)
	echo "/dev/dio_batch: $m; dev-dio_batch.device: $(prop dev-dio_batch.device ActiveState)"
	[ "$m" = "660 root dio_batch" ] && [ "$(prop dev-dio_batch.device ActiveState)" = active ]
}
check "udev: /dev/dio_batch 0660 root:dio_batch, and a systemd device unit (TAG+=systemd)" udev_node
disk_ready() {
	echo "dio-batch-check-disk.service: $(prop dio-batch-check-disk.service Result)"
	[ -b "$dev" ] && grep -q '^scsi_debug' /sys/block/sda/device/model &&
		[ "$(prop dio-batch-check-disk.service Result)" = success ]
}
check "$dev is the scsi_debug DIF disk, written with app tag 0xd1 and one block with 0xbeef" disk_ready

enabled() {
	echo "$unit.timer: $(systemctl is-enabled "$unit.timer"), $(systemctl is-active "$unit.timer")"
	[ "$(systemctl is-enabled "$unit.timer")" = enabled ] &&
		[ "$(systemctl is-active "$unit.timer")" = active ]
}
check "$unit.timer is enabled and active" enabled
fired() {
	wait_done "$unit.service" 300 || { systemctl status --no-pager "$unit.service"; return 1; }
	t=$(prop "$unit.timer" LastTriggerUSecMonotonic)
	echo "timer last trigger: $(prop "$unit.timer" LastTriggerUSec) (monotonic $t)"
	echo "service: Result=$(prop "$unit.service" Result)" \
		"ExecMainStatus=$(prop "$unit.service" ExecMainStatus)"
	# Triggered at this boot (not never, not only by the stamp).
	[ -n "$t" ] && [ "$t" != 0 ] || return 1
	[ "$(prop "$unit.service" Result)" = exit-code ] &&
		[ "$(prop "$unit.service" ExecMainStatus)" = 4 ]
}
check "the missed monthly run happened at boot: the timer started "$unit.service", which failed with exit status 4 (PI failures)" fired
journal_report() {
	journalctl -b -u "$unit.service" --no-pager -o cat >/tmp/scrub.journal
	cat /tmp/scrub.journal
	grep -q '^1 PI failure' /tmp/scrub.journal &&
		grep -q 'block at byte 1048576 (interval 2048): app tag, expected 0xd1, actual 0xbeef' \
			/tmp/scrub.journal && grep -q "^scrub $dev: 16777216 of 16777216 bytes" /tmp/scrub.journal
}
check "the journal has the scrub's report: the whole disk, 1 PI failure, block 2048's app tag (0xbeef, expected 0xd1)" journal_report
not_root() {
	# The uid of dioctl's lines in the journal: DynamicUser=, 61184-65519.
	u=$(journalctl -b -u "$unit.service" -o verbose --no-pager |
		sed -n 's/^ *_UID=//p' | sort -u | grep -vx 0)
	echo "dioctl ran as uid(s): $u"
	[ -n "$u" ] && [ "$u" -ge 61184 ] && [ "$u" -le 65519 ]
}
check "the scrub ran as a user of its own (DynamicUser=)" not_root
next_month() {
	next=$(prop "$unit.timer" NextElapseUSecRealtime)
	echo "next elapse: $next"
	# The drop-in of deb-check.sh took the random hour away: the first
	# of a month at midnight, after today.
	d=$(date -d "$next" +%d.%H:%M:%S) || return 1
	[ "$d" = 01.00:00:00 ] && [ "$(date -d "$next" +%s)" -gt "$(date +%s)" ]
}
check "the timer waits for the first of next month, 00:00 (OnCalendar=monthly)" next_month

# A second scrub at 1 MB/s (a runtime drop-in, as an administrator might
# write one; the settings files would win over Environment=, so the drop-in
# empties EnvironmentFile= first); the disk is deleted 4 s in.
mkdir -p /run/systemd/system/$unit.service.d
printf '[Service]\nEnvironmentFile=\nEnvironment=DIO_SCRUB_RATE=1 "DIO_SCRUB_OPTIONS=-a 0xd1"\n' \
	>/run/systemd/system/$unit.service.d/slow.conf
systemctl daemon-reload
disk_gone() {
	systemctl reset-failed "$unit.service"
	t0=$(prop "$unit.service" ExecMainExitTimestampMonotonic)
	systemctl start --no-block "$unit.service"
	i=0
	while [ "$(prop "$unit.service" ActiveState)" != activating ]; do
		[ "$i" -lt 100 ] || { echo "the service did not start"; return 1; }
		sleep 0.1
		i=$((i + 1))
	done
	sleep 4
	echo 1 >/sys/block/sda/device/delete
	gone=$(date +%s)
	# Until this run's main process has exited: the exit time is the last
	# run's before this one spawns its process, and 0 from then until it
	# exits (systemd's exec_status_start()).  The scrub's next read after
	# the delete fails (ENXIO) and it stops with its report so far, in
	# under a second; had it gone on, the rest of the disk at 1 MB/s
	# would take 12 s.  A hang guard of 120 s, ten times the longer: that
	# the scrub stopped because its disk went, and short of the disk's
	# end, is what its report says, below, not how long it took.
	while t=$(prop "$unit.service" ExecMainExitTimestampMonotonic) && { [ "$t" = "$t0" ] || [ "$t" = 0 ]; }; do
		[ $(($(date +%s) - gone)) -lt 120 ] || { echo "still running 120 s after the delete"; return 1; }
		sleep 0.2
	done
	echo "ended $(($(date +%s) - gone)) s after the delete:" \
		"Result=$(prop "$unit.service" Result) ExecMainStatus=$(prop "$unit.service" ExecMainStatus)"
	journalctl -b -u "$unit.service" --no-pager -o cat --since "@$((gone - 10))" >/tmp/gone.journal
	cat /tmp/gone.journal
	# The bytes it checked before it stopped: fewer than the disk's 16 MiB.
	n=$(sed -n "s|^scrub $dev: \([0-9]*\) of 16777216 bytes .*: STOPPED, the report so far\$|\1|p" /tmp/gone.journal)
	echo "checked before it stopped: ${n:-?} of 16777216 bytes"
	[ "$(prop "$unit.service" ExecMainStatus)" = 3 ] &&
		[ -n "$n" ] && [ "$n" -lt 16777216 ] &&
		grep -q 'STOPPED, the report so far' /tmp/gone.journal &&
		grep -q 'block at byte 1048576 (interval 2048): app tag' /tmp/gone.journal &&
		grep -q "scrub of $dev stopped: No such device or address (ENXIO)" /tmp/gone.journal
}
check "a disk deleted in the middle of a scrub: the run ends on its own, short of the disk's end, exit status 3, its report so far (block 2048) and why in the journal" disk_gone
skipped() {
	systemctl reset-failed "$unit.service"
	systemctl start "$unit.service" || return 1
	echo "ConditionResult=$(prop "$unit.service" ConditionResult)" \
		"ActiveState=$(prop "$unit.service" ActiveState)"
	[ "$(prop "$unit.service" ConditionResult)" = no ] &&
		[ "$(prop "$unit.service" ActiveState)" = inactive ]
}
check "a scrub of a disk that is not there is skipped (ConditionPathExists=), not failed" skipped
end
