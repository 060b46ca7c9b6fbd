#!/usr/bin/env bash
# make bench-sqlite: SQLite's speedtest1 through the dio VFS (libdiosqlite)
# against SQLite's default (unix) VFS on ext4, on the same NVMe namespace,
# in one QEMU guest (Debian 13's kernel, 6.12, or BENCH_KERNEL):
#   dio        the dio VFS on namespace 1 (512+8, T10 PI type 1, CRC16;
#              format=1): libdiosqlite generates the PI of every write,
#              the device checks it, the module verifies every read;
#   ext4       the unix VFS on ext4 made on the same namespace, the host
#              doing no PI (integrity/write_generate and read_verify 0: the
#              NVMe driver sets PRACT, the device makes and strips the PI);
#              the reference every ratio is taken against;
#   ext4+pi    the same with the kernel's own PI (write_generate and
#              read_verify 1, the default: the block layer generates and
#              verifies a CRC16 per 512 bytes);
#   ext4-nopi  the unix VFS on ext4 on the namespace with metadata but no
#              PI (nsid 17: 512-byte blocks, 16 bytes of metadata, pi=0),
#              where the kernel gives it capacity (6.1, 6.12 and 7.3 do;
#              elsewhere a line says it is left out);
#   dio-nopi   the dio VFS on that namespace, once: libdiosqlite refuses
#              it, and its message (from the sqlite3 shell's log) is the
#              result.
# QEMU's namespaces here all have metadata: none has namespace 1's
# geometry without any, so the reference is namespace 1 itself with the
# host's PI turned off (the device the dio row runs on), and ext4-nopi is
# the nearest namespace without PI (16 bytes of metadata, not 8).  SQLITE_REPS rounds, the
# configurations taking turns in each; each run's CPU time (user + system
# of speedtest1, by wait4()), the whole guest's busy time (/proc/stat),
# wall time and the namespace's reads and writes (requests and sectors);
# and in each round, after its dio run, pi_page (bench/pi_page.c): the
# CPU cost of libdioctl's PI generation and verification per 4 KiB page.
# The host reduces it all (bench/sqlite-report.py): medians, each round's
# ratio to ext4, and PI's share of the dio run's CPU time.
# Prints the table, keeps it and the guest's lines in
# build/bench/sqlite-DATE.txt.
#   bench/run-sqlite.sh
# Environment (all optional):
#   BENCH_KERNEL   kernel flavour of tests/vm/kernel.sh (6.12; make
#                  bench-sqlite KERNEL=7.3)
#   SQLITE_SIZE    speedtest1 --size (10)
#   SQLITE_REPS    rounds (5)
#   SQLITE_NSID    the PI namespace (1); SQLITE_NOPI_NSID the one without
#                  PI (17)
#   BENCH_CMDLINE  more guest kernel parameters ("tsc=reliable
#                  clocksource=tsc", as make bench-guest)
#   VM_TIMEOUT     seconds before the guest is killed (900)
# Not part of make check: numbers under TCG are indicative only.  Exit
# status 0 when every run but dio-nopi succeeded with speedtest1's
# verification hash the same in all of them.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
B=$top/build
res=$B/bench/vm-sqlite
flavour=${BENCH_KERNEL:-6.12}
: "${SQLITE_SIZE:=10}" "${SQLITE_REPS:=5}" "${SQLITE_NSID:=1}" "${SQLITE_NOPI_NSID:=17}"
: "${BENCH_CMDLINE=tsc=reliable clocksource=tsc}"
export VM_TIMEOUT=${VM_TIMEOUT:-900} VM_CMDLINE=$BENCH_CMDLINE

lib_prog=bench-sqlite
# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"

bench_prepare "$flavour" "$res" sqlite build/bench/pi_page

# The guest's script (POSIX sh: /bin/sh is dash).  Each run prints one
# "RUN cfg=... key=value ..." line, pi_page its "PI_PAGE ..." lines.
{
	printf "B='%s'\nKO='%s'\nexport DIO_MODDIR='%s'\n" "$B" "$res/ko/dio_batch.ko" "$MODDIR"
	printf "SIZE='%s'\nREPS='%s'\nNSID='%s'\nNOPI_NSID='%s'\n" \
		"$SQLITE_SIZE" "$SQLITE_REPS" "$SQLITE_NSID" "$SQLITE_NOPI_NSID"
	cat "$here/guest-devices.sh"
	cat <<'EOS'
kmod() { "$B/tests/kmodctl" "$@"; }
MNT=/tmp/bench-sqlite
rc=0
kmod insert "$KO" || { echo "bench-sqlite: cannot load dio_batch"; exit 1; }
kmod probe nvme && kmod probe ext4 || { echo "bench-sqlite: cannot load nvme or ext4"; exit 1; }
ns=$(wait_dev nvme_ns "$NSID") || { echo "bench-sqlite: no NVMe namespace $NSID"; exit 1; }
nopi=$(wait_dev nvme_ns "$NOPI_NSID") || { echo "bench-sqlite: no NVMe namespace $NOPI_NSID"; exit 1; }
sys=/sys/block/${ns#/dev/}
echo "guest: $(uname -r), $(nproc) CPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource), USER_HZ $(getconf CLK_TCK), SQLite $(sqlite3 --version | cut -d' ' -f1)"
for d in "$ns" "$nopi"; do
	s=/sys/block/${d#/dev/}
	echo "device: $d (nsid $(cat "$s/nsid")), $(cat "$s/queue/logical_block_size")-byte blocks, integrity $(cat "$s/integrity/format" 2>/dev/null || echo none), $(($(cat "$s/size") / 2048)) MiB"
done
echo "speedtest1 --size $SIZE, $REPS rounds"

# The host's PI on the namespace: 1 (the kernel generates and verifies)
# or 0 (it does neither; the device does, by PRACT).
host_pi() {
	echo "$1" >"$sys/integrity/write_generate" && echo "$1" >"$sys/integrity/read_verify" &&
		[ "$(cat "$sys/integrity/write_generate")$(cat "$sys/integrity/read_verify")" = "$1$1" ] ||
		{ echo "bench-sqlite: cannot set $sys/integrity/{write_generate,read_verify} to $1"; rc=1; }
}
busy() { awk '/^cpu /{ print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }

# run CONFIG ROUND DEVICE ARGS...: speedtest1 on DEVICE's counters, with
# ARGS after its own; its RUN line.
run() {
	cfg=$1 round=$2 dev=$3
	shift 3
	sync
	echo 3 >/proc/sys/vm/drop_caches
	s0=$(awk '{ print $1, $3, $5, $7 }' "/sys/block/${dev#/dev/}/stat") b0=$(busy) t0=$(date +%s%N)
	/usr/bin/time -f '%U %S' -o /tmp/st.time "$B/sqlite/speedtest1" --verify --size "$SIZE" "$@" >/tmp/st.out 2>&1
	st=$?
	t1=$(date +%s%N) b1=$(busy) s1=$(awk '{ print $1, $3, $5, $7 }' "/sys/block/${dev#/dev/}/stat")
	# time's user and system, then the counters before and after.
	set -- $(tail -n 1 /tmp/st.time) $s0 $s1
	echo "RUN cfg=$cfg round=$round status=$st user=$1 sys=$2 wall_ms=$(((t1 - t0) / 1000000))" \
		"guest_busy_ticks=$((b1 - b0)) rd_ios=$(($7 - $3)) rd_sectors=$(($8 - $4))" \
		"wr_ios=$(($9 - $5)) wr_sectors=$((${10} - $6))" \
		"hash=$(sed -n 's/^Verification Hash: *//p' /tmp/st.out | tr ' ' '/')"
	if [ "$st" != 0 ]; then
		sed 's/^/    /' /tmp/st.out | tail -n 8
		[ "$cfg" = dio-nopi ] || rc=1
	fi
}
# mkfs_mount DEVICE: a new ext4 on DEVICE at MNT, its inode tables and
# journal written by mkfs (no lazy initialisation thread beside the runs).
mkfs_mount() {
	mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=0,lazy_journal_init=0,nodiscard "$1" >/tmp/mkfs.log 2>&1 &&
		mkdir -p "$MNT" && mount -t ext4 "$1" "$MNT" && return 0
	echo "bench-sqlite: ext4 on $1:"
	cat /tmp/mkfs.log
	rc=1
	return 1
}
ext4_run() { # CONFIG ROUND [DEVICE]
	rm -f "$MNT/st.db" "$MNT/st.db-journal"
	case $1 in ext4) host_pi 0 ;; ext4+pi) host_pi 1 ;; esac
	run "$1" "$2" "${3:-$ns}" "$MNT/st.db"
}
nopi_cap=$(cat "/sys/block/${nopi#/dev/}/size")
[ "$nopi_cap" -gt 0 ] ||
	echo "ext4-nopi: left out: $nopi has no capacity on this kernel (metadata without PI)"

r=1
while [ "$r" -le "$REPS" ]; do
	# A new filesystem each round.
	host_pi 1
	mkfs_mount "$ns" || break
	if [ $((r % 2)) = 1 ]; then
		ext4_run ext4 "$r"; ext4_run ext4+pi "$r"
	else
		ext4_run ext4+pi "$r"; ext4_run ext4 "$r"
	fi
	umount "$MNT" || { echo "bench-sqlite: cannot unmount $MNT"; rc=1; break; }
	host_pi 1
	run dio "$r" "$ns" --vfs dio "file:$ns?format=1"
	# PI's cost per page in this round, beside its dio run.
	PI_PAGE_MS=300 "$B/bench/pi_page" >/tmp/pi.out || rc=1
	sed "s/^PI_PAGE /PI_PAGE round=$r /" /tmp/pi.out
	if [ "$nopi_cap" -gt 0 ]; then
		mkfs_mount "$nopi" || break
		ext4_run ext4-nopi "$r" "$nopi"
		umount "$MNT" || { echo "bench-sqlite: cannot unmount $MNT"; rc=1; break; }
	fi
	r=$((r + 1))
done
# The dio VFS on a namespace without PI: what it says is the result,
# speedtest1's and the VFS's own (sqlite3_log(), which the shell prints).
run dio-nopi 1 "$nopi" --vfs dio "file:$nopi?format=1"
printf '.log stderr\n.load %s/libdiosqlite.so\n.open file:%s?vfs=dio&format=1\n' "$B" "$nopi" |
	LD_LIBRARY_PATH=$B sqlite3 -batch >/tmp/nopi.out 2>&1
echo "dio-nopi: the sqlite3 shell (status $?):"
sed 's/^/    /' /tmp/nopi.out | head -n 8
if dmesg | grep -E 'BUG:|WARNING:|Oops|KASAN|refcount_t|list_add corruption|list_del corruption|general protection fault'; then
	echo "bench-sqlite: the kernel log has reports (above)"
	rc=1
fi
exit $rc
EOS
} >"$res/guest.sh"

echo "bench-sqlite: booting $KVER (TCG; 3 to 4 minutes); the guest's output follows" >&2
bench_boot bench-sqlite "$flavour" "$res"
rc=$?

out=$B/bench/sqlite-$(date +%Y%m%d-%H%M%S).txt
{
	bench_header "dio_batch bench-sqlite (speedtest1 --size $SQLITE_SIZE)" "$KVER"
	echo "Under TCG absolute times are distorted: compare the ratios."
	echo
	python3 "$here/sqlite-report.py" "$res/guest.log" || rc=1
	echo
	echo "The guest's lines:"
	cat "$res/guest.log"
} >"$out"
echo
sed -n '/^The guest/q;p' "$out"
echo "bench-sqlite: saved to $out (status $rc)"
[ $rc = 0 ]
