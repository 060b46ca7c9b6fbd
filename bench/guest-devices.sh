# shellcheck shell=sh
# The benchmarks' test devices in a guest (POSIX sh: /bin/sh is dash),
# shared by bench/run-guest.sh and bench/run-fio.sh (which put this file
# into the scripts they write for the guest) and bench/counts-guest.sh
# (which sources it).

# The scsi_debug disks, /dev/sdX a line.
scsi_debug_disk() {
	for b in /sys/block/sd*; do
		grep -qs '^scsi_debug' "$b/device/model" && echo "/dev/${b##*/}"
	done
}

# The NVMe namespace with nsid $1 of controller 0.
nvme_ns() {
	for b in /sys/block/nvme0n*; do
		[ "$(cat "$b/nsid" 2>/dev/null)" = "$1" ] && echo "/dev/${b##*/}"
	done
}

# The first device the command "$@" names once it is a block device
# (20 s at most); status 1 when none came.
wait_dev() {
	i=0
	while [ $i -lt 100 ]; do
		d=$("$@" | head -n 1)
		[ -n "$d" ] && [ -b "$d" ] && { echo "$d"; return 0; }
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}
