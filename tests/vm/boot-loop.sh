#!/usr/bin/env bash
# Hunt boot flakes: boot a guest kernel again and again, as run.sh boots it
# (same machine, CPU model, vCPUs, memory and command line) but with no
# initramfs, and count the boots that did not get to the end of the
# kernel's own start-up.
#   boot-loop.sh FLAVOUR          (env: RUNS=100, PARALLEL=2, BOOT_LIMIT=120,
#                                  LOAD=0|N busy loops beside the guests)
# A boot has ended well when the kernel, done with every initcall, finds no
# root to mount ("VFS: Unable to mount root fs": there is no initramfs).
# A boot with a kernel report before that (a line of report-patterns, as
# the suite's) failed; one that printed nothing more for BOOT_LIMIT seconds
# hung, and is left running for PEEK seconds (default 0) with its QEMU
# monitor and gdb stub (the port printed) so that it can be looked at.
# Consoles of failed and hung boots are kept in build/boot-loop/FLAVOUR/.
# This is how the debug kernel's RCU-tasks self-test deadlock
# (tests/vm/linux-6.1-patches/) was found: 9 hangs in 204 boots.
# Exit status 0 when every boot ended well.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
flavour=${1:?usage: boot-loop.sh FLAVOUR (6.1, 6.12, 7.3, debug, kcsan)}
: "${RUNS:=100}" "${PARALLEL:=2}" "${BOOT_LIMIT:=120}" "${LOAD:=0}" "${PEEK:=0}"
eval "$("$here/kernel.sh" env "$flavour")" || exit 1
# shellcheck source=tests/vm/machine.sh
. "$here/machine.sh"
out=$top/build/boot-loop/$flavour
rm -rf "$out"
mkdir -p "$out"
done_mark='VFS: Unable to mount root fs'
# A kernel report: the suite's own list (report-patterns), as check.sh reads it.
fault=$(sed -e '/^#/d' -e '/^[[:space:]]*$/d' "$here/report-patterns" | paste -s -d '|' -)
[ -n "$fault" ] || { echo "boot-loop: no report patterns in $here/report-patterns" >&2; exit 1; }

pids=()
# shellcheck disable=SC2317 # called by the traps
stop_all() {
	[ ${#pids[@]} = 0 ] || kill "${pids[@]}" 2>/dev/null
}
trap stop_all EXIT
trap 'exit 130' INT TERM
for ((i = 0; i < LOAD; i++)); do
	sh -c 'while :; do :; done' &
	pids+=($!)
done

# boot_one N: one boot; prints "N ok SECONDS", "N failed LINE" or "N hung".
boot_one() {
	local n=$1 d=$out/$1 q t0 port=$((4400 + $1 % 1000)) verdict con report
	mkdir -p "$d"
	qemu-system-x86_64 "${vm_machine[@]}" -kernel "$VMLINUZ" \
		-append "$vm_cmdline ${KCMDLINE_EXTRA:-}" \
		-monitor "unix:$d/monitor,server,nowait" -gdb "tcp:127.0.0.1:$port" \
		</dev/null >"$d/console.log" 2>&1 &
	q=$!
	t0=$SECONDS
	while :; do
		sleep 1
		# One look at the console for both checks: the end of the boot
		# is itself a panic line ("Kernel panic - not syncing: VFS: ...").
		con=$(cat "$d/console.log")
		report=$(grep -E "$fault" <<<"$con" | grep -v "$done_mark" | grep -m1 -oE "($fault).*")
		if [ -n "$report" ]; then
			verdict="failed $report"
			break
		fi
		if grep -q "$done_mark" <<<"$con"; then
			verdict="ok $((SECONDS - t0))"
			break
		fi
		if ! kill -0 "$q" 2>/dev/null; then
			verdict="failed QEMU exited before the end of the boot"
			break
		fi
		# Hung: nothing new on the console for BOOT_LIMIT seconds.
		if [ $(($(date +%s) - $(stat -c %Y "$d/console.log"))) -ge "$BOOT_LIMIT" ]; then
			verdict="hung (last line: $(tail -n 1 "$d/console.log" | tr -d '\r'))"
			if [ "$PEEK" -gt 0 ]; then
				echo "boot-loop: boot $n hung: monitor $d/monitor, gdb stub 127.0.0.1:$port, for ${PEEK}s" >&2
				sleep "$PEEK"
			fi
			break
		fi
	done
	kill "$q" 2>/dev/null
	wait "$q" 2>/dev/null
	case $verdict in ok*) rm -rf "$d" ;; esac
	echo "$n $verdict"
}

echo "boot-loop: $flavour ($KVER), $RUNS boots, $PARALLEL at a time, $LOAD busy loops"
results=$out/results.txt
: >"$results"
for ((i = 1; i <= RUNS; i += PARALLEL)); do
	batch=()
	for ((j = i; j < i + PARALLEL && j <= RUNS; j++)); do
		boot_one "$j" >>"$results" &
		batch+=($!)
	done
	wait "${batch[@]}"
done
sort -n "$results" -o "$results"
ok=$(grep -c ' ok ' "$results")
bad=$((RUNS - ok))
grep -v ' ok ' "$results" | sed 's/^/boot-loop: boot /'
echo "boot-loop: $flavour: $ok of $RUNS boots ended well, $bad did not (consoles: $out)"
[ "$bad" = 0 ]
