#!/bin/sh
# Kernel events per I/O of io_bench's engines, counted by ftrace (POSIX sh:
# the guest's /bin/sh is dash).  bench/counts.sh runs it in a 6.1 guest:
#   counts-guest.sh run     count (environment below); raw counts to $RAW
#   counts-guest.sh report RAWFILE
#                           the tables from a raw file (anywhere, awk only)
# Environment of "run" (counts.sh sets it):
#   BIN      directory with io_bench, kmodctl, dio_batch.ko, kcount.ko
#   RAW      file the raw counts go to
#   SDEBUG   scsi_debug options ("dev_size_mb=64 dif=0 dix=0 delay=0")
#   N0, N    the baseline run does N0 I/Os, the measured one N0 + N
#   IOARGS   io_bench options of every run ("-r 1 -C -q 32 -b 4096 -t 3600")
#   IDLE     seconds of the idle baseline's longer sleep (10; the shorter: 1)
#   REPS     runs of each size (2); the report takes the smallest count
#   ENGINES_SD, ENGINES_NVME  engines per device
#   DEVS     devices measured ("sd nvme")
#   WORKLOADS  workloads measured ("randread randwrite")
#   EXTRA    1: also count the events of extra_kprobes and
#            extra_tracepoints (TLB flushes, IPIs, page faults, timers,
#            plugs, NVMe queueing and interrupts, PI buffers), reported
#            per I/O in a table of their own
#
# What counts.  Tracepoints: a hist trigger each (keys=common_cpu; the
# system calls keyed by number, only io_bench's threads; the work items by
# function).  Kernel functions: kcount.ko (built by counts.sh), plain
# kprobes with per-CPU counters, since Debian's 6.1 kprobe_events refuses
# functions without an ftrace call site (_copy_from_user, copy_user_*,
# __get_user_*, iov_iter_get_pages2); it also counts the calls made in
# io_bench's own task context.  Nothing is ever cleared: a measurement is
# the difference of two snapshots (one awk run over the hist files,
# /proc/kcount and the ring buffer's stats), before and after the command.
#
# How a figure is made.  Each engine and workload runs with N0 and with
# N0 + N I/Os (REPS times each, taking each event's smallest count, since
# background work only adds events), and a figure per I/O is
#   (count(N0 + N) - count(N0) - idle rate * (wall(N0 + N) - wall(N0))) / N
# so io_bench's set-up (start, the pattern written over the region, the
# engine's context or ring, the read-back of 64 written blocks, exit) and
# the snapshots' own cost cancel out; the idle rate, per second, is itself
# the difference of an idle window of IDLE + 1 s and one of 1 s.
# Exactness: a hist map that overflows counts "Dropped"; an event that falls
# back to the ring buffer and finds it full counts an overrun or dropped
# event in per_cpu/cpu*/stats; a kprobe that fires while another probe's
# handler runs on its CPU (an interrupt) is not handled but counted in its
# nmissed, which kcount adds to the calls (exact), but the length of a
# missed copy is lost.  Any hist drop, ring-buffer loss or missed copy makes
# the raw file say LOST and the report fail.
set -u
T=/sys/kernel/tracing

# die: scripts/lib.sh of the tree; in the guest, where this is a copy in
# the results share, the tree counts.sh names in DIO_TOP (mounted at
# the same path).
lib_prog=counts
# shellcheck source=scripts/lib.sh
. "${DIO_TOP:-$(dirname "$0")/..}/scripts/lib.sh"

# ---- events ----------------------------------------------------------------
# Functions, counted by kcount (kprobes): "NAME SYMBOL [BITS]"; BITS: also
# sum the third argument (the length of a copy).
kprobes() {
	cat <<'EOK'
cfu _copy_from_user 64
ctu _copy_to_user 64
cuefs copy_user_enhanced_fast_string 32
cugs copy_user_generic_string 32
cugu copy_user_generic_unrolled 32
gu1 __get_user_1
gu2 __get_user_2
gu4 __get_user_4
gu8 __get_user_8
gun1 __get_user_nocheck_1
gun2 __get_user_nocheck_2
gun4 __get_user_nocheck_4
gun8 __get_user_nocheck_8
pu1 __put_user_1
pu2 __put_user_2
pu4 __put_user_4
pu8 __put_user_8
pun1 __put_user_nocheck_1
pun2 __put_user_nocheck_2
pun4 __put_user_nocheck_4
pun8 __put_user_nocheck_8
sl _raw_spin_lock
slirq _raw_spin_lock_irq
slsave _raw_spin_lock_irqsave
slbh _raw_spin_lock_bh
mutex mutex_lock
pupf pin_user_pages_fast
gupf get_user_pages_fast
gupfo get_user_pages_fast_only
iogp2 iov_iter_get_pages2
iogpa2 iov_iter_get_pages_alloc2
biogp bio_iov_iter_get_pages
crc16 crc_t10dif_update
crc64 crc64_rocksoft_update
ipcsum ip_compute_csum
EOK
	[ "${EXTRA:-0}" = 1 ] && extra_kprobes
}
# With EXTRA=1: events that cost much more under TCG than on hardware
# (TLB flushes, IPIs, timer programming, page faults, emulated device
# accesses) and the steps of a PI read, named x_*.
extra_kprobes() {
	cat <<'EOK'
x_tlbflush flush_tlb_mm_range
x_fpu kernel_fpu_begin_mask
x_sched schedule
x_ttwu try_to_wake_up
x_resched native_smp_send_reschedule
x_ipi1 native_send_call_func_single_ipi
x_hrstart hrtimer_start_range_ns
x_clockev clockevents_program_event
x_ktime ktime_get
x_mmfault handle_mm_fault
x_kfree kfree
x_kcfree kmem_cache_free
x_submit_bio submit_bio
x_flushplug blk_mq_flush_plug_list
x_endio bio_endio
x_rqend blk_mq_end_request
x_rqendb blk_mq_end_request_batch
x_bip_alloc bio_integrity_alloc
x_bip_addpg bio_integrity_add_page
x_bip_prep bio_integrity_prep
x_bip_free bio_integrity_free
x_t10prep t10_pi_type1_prepare
x_t10cmpl t10_pi_type1_complete
x_nvme_qrq nvme_queue_rq
x_nvme_qrqs nvme_queue_rqs
x_nvme_commit nvme_commit_rqs
x_nvme_irq nvme_irq
x_nvme_setup nvme_setup_cmd
x_dma_map dma_map_page_attrs
x_dma_sg dma_map_sg_attrs
x_dio_pialloc dio_pi_alloc
x_dio_piattach dio_pi_attach
x_dio_piprep dio_pi_prepare
x_dio_picmpl dio_pi_complete
x_dio_pifree dio_pi_free
x_dio_cwork dio_file_complete_work
x_dio_submit dio_submit_ioctl
x_dio_collect dio_collect_ioctl
EOK
}
# Tracepoints, counted by hist triggers: "NAME GROUP/EVENT [COMM]"; with
# COMM only that command's threads; the system calls by number too.
tracepoints() {
	cat <<'EOT'
sys raw_syscalls/sys_enter io_bench
kmalloc kmem/kmalloc
kmalloc_node kmem/kmalloc_node
kmca kmem/kmem_cache_alloc
kmca_node kmem/kmem_cache_alloc_node
page kmem/mm_page_alloc
wakeup sched/sched_wakeup
switch sched/sched_switch
work workqueue/workqueue_queue_work
irq irq/irq_handler_entry
EOT
	[ "${EXTRA:-0}" = 1 ] && cat <<'EOT'
x_pf_user exceptions/page_fault_user
x_pf_kernel exceptions/page_fault_kernel
x_tlb tlb/tlb_flush
x_ipi_cfs irq_vectors/call_function_single_entry
x_ipi_cf irq_vectors/call_function_entry
x_ipi_resched irq_vectors/reschedule_entry
x_lapic_timer irq_vectors/local_timer_entry
x_hrtimer timer/hrtimer_start
x_plug block/block_plug
x_unplug block/block_unplug
x_rq_issue block/block_rq_issue
x_idle power/cpu_idle
EOT
}

# Arm everything that exists; an NA line for what does not.
setup_events() {
	[ -e $T/events ] || mount -t tracefs nodev $T || die "no tracefs"
	echo 1 >$T/tracing_on || die "cannot turn tracing on"
	echo 1 >$T/options/overwrite || die "cannot set the ring buffer to overwrite"
	echo nop >$T/current_tracer
	: >"$EVLIST"
	: >"$KPLIST"
	params=
	while read -r name sym bits; do
		# A module's symbol (crc_t10dif_update on Debian) ends "\t[module]".
		if ! grep -qE " [tT] $sym(\$|[[:space:]])" /proc/kallsyms; then
			echo "NA $name $sym: not in /proc/kallsyms (inlined or absent in $(uname -r))" >>"$RAW"
			continue
		fi
		params="$params${params:+,}$sym${bits:+:$bits}"
		echo "$name $sym" >>"$KPLIST"
	done <<EOF
$(kprobes)
EOF
	"$BIN/kmodctl" insert "$BIN/kcount.ko" "syms=$params" || die "cannot load kcount"
	while read -r sym h _ _ err; do
		[ "$h" = - ] || continue
		echo "NA $(awk -v s="$sym" '$2 == s { print $1 }' "$KPLIST") $sym: register_kprobe: error $err" >>"$RAW"
	done </proc/kcount
	while read -r name ev only; do
		d=$T/events/$ev
		if [ ! -d "$d" ]; then
			echo "NA $name $ev: no such tracepoint in $(uname -r)" >>"$RAW"
			continue
		fi
		s='hist:keys=common_cpu:vals=hitcount'
		[ "$name" = sys ] && s='hist:keys=id.syscall:vals=hitcount'
		[ "$name" = work ] && s='hist:keys=function.sym:vals=hitcount'
		[ -n "${only:-}" ] && s="$s if comm == \"$only\""
		echo "$s" >"$d/trigger" || die "cannot install '$s' on $ev"
		echo "$name $d $ev" >>"$EVLIST"
	done <<EOF
$(tracepoints)
EOF
	echo "EVENTS $(awk '{ printf "%s=%s ", $1, $2 }' "$KPLIST")$(awk '{ printf "%s=%s ", $1, $3 }' "$EVLIST")" >>"$RAW"
}

# One snapshot, "NAME COUNT SUM DROPPED" a line: every event, the system
# calls by name (sys:NAME), the work items by function (work:FUNCTION),
# the kprobed calls in io_bench's task context (NAME_own), then the loss counters: _lenmiss (missed calls
# of the length-summing probes), _kmissed (all missed kprobe calls,
# counted), _rb_lost (ring buffer overruns and dropped events).
snapshot() {
	# shellcheck disable=SC2046  # event directories: no spaces
	awk -v list="$EVLIST" -v kplist="$KPLIST" '
	BEGIN {
		while ((getline l < list) > 0) { split(l, f, " "); ev[f[2] "/hist"] = f[1] }
		while ((getline l < kplist) > 0) { split(l, f, " "); kp[f[2]] = f[1] }
	}
	function add(n, c, s, d) {
		if (!(n in h)) { h[n] = 0; sm[n] = 0; dr[n] = 0; order[++k] = n }
		h[n] += c; sm[n] += s; dr[n] += d
	}
	FILENAME ~ /\/hist$/ {
		n = ev[FILENAME]
		add(n, 0, 0, 0)
		if ($1 == "{") for (i = 1; i < NF; i++) if ($i == "hitcount:") {
			add(n, $(i + 1), 0, 0)
			if (n == "sys") add("sys:" $3, $(i + 1), 0, 0)
			if (n == "work") add("work:" $4, $(i + 1), 0, 0)
		}
		if ($1 == "Dropped:") add(n, 0, 0, $2)
		next
	}
	FILENAME == "/proc/kcount" {
		if ($2 == "-") next
		add(kp[$1], $2 + $3, $4, 0)
		add(kp[$1] "_own", $5, 0, 0)
		kmiss += $3
		if ($1 ~ /copy/) lenmiss += $3
		next
	}
	/^overrun:/ { rb += $2 }
	/^commit overrun:/ { rb += $3 }
	/^dropped events:/ { rb += $3 }
	END {
		for (i = 1; i <= k; i++) printf "%s %d %d %d\n", order[i], h[order[i]], sm[order[i]], dr[order[i]]
		printf "_lenmiss %d 0 0\n_kmissed %d 0 0\n_rb_lost %d 0 0\n", lenmiss, kmiss, rb
	}' $(awk '{ print $2 "/hist" }' "$EVLIST") /proc/kcount $T/per_cpu/cpu*/stats
}

# measure LABEL N COMMAND...: RUN and CNT lines in $RAW, status of COMMAND.
measure() {
	label=$1 n=$2
	shift 2
	snapshot >"$WORK/before"
	t0=$(cut -d' ' -f1 /proc/uptime)
	"$@" >"$WORK/out" 2>&1
	rc=$?
	t1=$(cut -d' ' -f1 /proc/uptime)
	snapshot >"$WORK/after"
	echo "RUN $label $n $(echo "$t1 $t0" | awk '{ printf "%.2f", $1 - $2 }') $rc" >>"$RAW"
	awk -v l="$label" 'NR == FNR { h[$1] = $2; s[$1] = $3; d[$1] = $4; next }
		{ printf "CNT %s %s %d %d\n", l, $1, $2 - h[$1], $3 - s[$1]
		  if ($4 != d[$1]) printf "LOST %s %s hist dropped %d\n", l, $1, $4 - d[$1]
		  if (($1 == "_lenmiss" || $1 == "_rb_lost") && $2 != h[$1])
			printf "LOST %s %s %d\n", l, $1, $2 - h[$1] }' \
		"$WORK/before" "$WORK/after" >>"$RAW"
	if [ $rc != 0 ]; then
		echo "counts: $label: status $rc" >&2
		sed 's/^/    /' "$WORK/out" >&2
	fi
	return $rc
}

# ---- devices: scsi_debug_disk, nvme_ns, wait_dev ----------------------------
# shellcheck source=bench/guest-devices.sh
. "$(dirname "$0")/guest-devices.sh"

run() {
	: "${BIN:?}" "${RAW:?}" "${SDEBUG:=dev_size_mb=64 dif=0 dix=0 delay=0}" "${N0:=2000}" "${N:=20000}"
	: "${IOARGS:=-r 1 -C -q 32 -b 4096 -t 3600}" "${IDLE:=10}" "${REPS:=2}"
	: "${ENGINES_SD:=dio_batch dio+fixed io_uring libaio psync}" "${ENGINES_NVME:=dio_batch dio+pi dio+fixed io_uring libaio psync}"
	: "${DEVS:=sd nvme}" "${WORKLOADS:=randread randwrite}"
	WORK=$(mktemp -d) EVLIST=$(mktemp) KPLIST=$(mktemp)
	: >"$RAW"
	status=0
	"$BIN/kmodctl" insert "$BIN/dio_batch.ko" || die "cannot load dio_batch"
	{ "$BIN/kmodctl" probe sd_mod && "$BIN/kmodctl" probe scsi_debug "$SDEBUG" && "$BIN/kmodctl" probe nvme; } ||
		die "cannot load sd_mod, scsi_debug or nvme"
	sd=$(wait_dev scsi_debug_disk) || die "no scsi_debug disk"
	ns1=$(wait_dev nvme_ns 1) || die "no NVMe namespace 1"
	{
		echo "GUEST $(uname -r), $(nproc) CPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
		echo "DEV sd $sd scsi_debug $SDEBUG"
		echo "DEV nvme $ns1 NVMe nsid 1, integrity $(cat "/sys/block/${ns1#/dev/}/integrity/format" 2>/dev/null)"
	} >>"$RAW"
	cp "$BIN/io_bench" "$WORK/" || die "cannot copy io_bench to $WORK"	# tmpfs, not 9p
	setup_events
	echo "counts: $(wc -l <"$EVLIST") events armed; idle baseline (1 s and $((IDLE + 1)) s)"
	sleep 5	# let the module loads and udev settle
	measure 'idle-short#1' 0 sleep 1
	measure 'idle-long#1' 0 sleep $((IDLE + 1))
	for dev in $DEVS; do
		if [ "$dev" = sd ]; then path=$sd engines=$ENGINES_SD; else path=$ns1 engines=$ENGINES_NVME; fi
		for wl in $WORKLOADS; do
			if [ "$wl" = randread ]; then mix=100; else mix=0; fi
			for e in $engines; do
				r=1
				while [ $r -le "$REPS" ]; do
					for k in 0 1; do
						if [ $k = 0 ]; then n=$N0; else n=$((N0 + N)); fi
						echo "counts: $dev $wl $e -n $n (#$r)"
						# shellcheck disable=SC2086
						measure "$dev:$wl:$e:$k#$r" $n "$WORK/io_bench" $IOARGS -m $mix -e "$e" -n $n "$path" ||
							status=1
					done
					r=$((r + 1))
				done
			done
		done
	done
	measure 'idle-short#2' 0 sleep 1
	measure 'idle-long#2' 0 sleep $((IDLE + 1))
	rm -rf "$WORK" "$EVLIST" "$KPLIST"
	return $status
}

# ---- report ------------------------------------------------------------------
report() {
	awk '
	function val(l, e) { return ((l SUBSEP e) in c) ? c[l, e] : 0 }
	function bytes(l, e) { return ((l SUBSEP e) in b) ? b[l, e] : 0 }
	function sum(l, list,   a, i, n, t) { n = split(list, a, ","); t = 0
		for (i = 1; i <= n; i++) t += val(l, a[i]); return t }
	function bsum(l, list,   a, i, n, t) { n = split(list, a, ","); t = 0
		for (i = 1; i <= n; i++) t += bytes(l, a[i]); return t }
	# per I/O of a group of events: measured minus baseline minus idle
	function per(key, list,   d) {
		d = sum(key ":1", list) - sum(key ":0", list) - idlerate(list) * (wall[key ":1"] - wall[key ":0"])
		return d / (n[key ":1"] - n[key ":0"])
	}
	function bper(key, list) {
		return (bsum(key ":1", list) - bsum(key ":0", list)) / (n[key ":1"] - n[key ":0"])
	}
	function idlerate(list) {
		return (sum("idle-long", list) - sum("idle-short", list)) / (wall["idle-long"] - wall["idle-short"])
	}
	function rawidle(r, e) {
		return (rc["idle-long#" r, e] - rc["idle-short#" r, e]) / (rawwall["idle-long#" r] - rawwall["idle-short#" r])
	}
	# the repetitions of run l, comma-separated: count of event e, or wall time
	function reps(l, e, w,   r, o) { o = ""
		for (r = 1; r <= nrep; r++) o = o (r > 1 ? "," : "") (w ? rawwall[l "#" r] : rc[l "#" r, e] + 0)
		return o }
	function fmt(v) { return (v < 1 && v > -1) ? sprintf("%.2f", v) : sprintf("%.1f", v) }
	function has(e) { return e in armed }
	function lst(list,   a, i, k, out) { k = split(list, a, ","); out = ""
		for (i = 1; i <= k; i++) if (has(a[i])) out = out (out == "" ? "" : ",") a[i]; return out }
	$1 == "GUEST" { guest = $0; sub(/^GUEST /, "", guest) }
	$1 == "DEV" { d = $0; sub(/^DEV [a-z]+ /, "", d); dev[$2] = d }
	$1 == "NA" { na[$2] = $0; sub(/^NA [^ ]+ /, "", na[$2]); nalist = nalist "\n- `" na[$2] "`" }
	$1 == "EVENTS" { for (i = 2; i <= NF; i++) { split($i, p, "="); armed[p[1]] = p[2]; aorder[++narmed] = p[1] } }
	# Each count: the smallest of the repetitions (background work only adds).
	$1 == "RUN" { l = $2; sub(/#.*/, "", l); r = $2; sub(/.*#/, "", r); r += 0; if (r > nrep) nrep = r
		n[l] = $3; rawwall[$2] = $4; if (!(l in wall) || $4 < wall[l]) wall[l] = $4
		if ($5 != 0) { bad = bad " " $2; status = 1 }
		if (l !~ /^idle/) { split(l, q, ":"); k = q[1] ":" q[2] ":" q[3]
			if (!(k in seen)) { seen[k] = 1; keys[++nk] = k } } }
	$1 == "CNT" { l = $2; sub(/#.*/, "", l); rc[$2, $3] = $4
		if (!((l SUBSEP $3) in c) || $4 < c[l, $3]) c[l, $3] = $4
		if (!((l SUBSEP $3) in b) || $5 < b[l, $3]) b[l, $3] = $5
		if ($3 ~ /^sys:/ && !($3 in sysname)) { sysname[$3] = 1; sysorder[++nsys] = $3 }
		if ($3 ~ /^work:/ && !($3 in wname)) { wname[$3] = 1; worder[++nwork] = $3 } }
	$1 == "LOST" { lost = lost "\n" $0; status = 1 }
	END {
		SYS = "sys"
		CPY = lst("cfu,ctu")
		# __put_user_N falls through into __put_user_nocheck_N: pun counts every put_user
		GPU = lst("gu1,gu2,gu4,gu8,gun1,gun2,gun4,gun8,pun1,pun2,pun4,pun8")
		RAWC = lst("cuefs,cugs,cugu")
		SLAB = lst("kmalloc,kmalloc_node,kmca,kmca_node")
		PAGE = lst("page")
		LOCK = lst("sl,slirq,slsave,slbh,mutex")
		LOCKOWN = LOCK; gsub(/,/, "_own,", LOCKOWN); if (LOCKOWN != "") LOCKOWN = LOCKOWN "_own"
		GUP = lst("pupf,gupf,gupfo")
		WAKE = "wakeup"; SW = "switch"; WQ = "work"; IRQ = "irq"
		GUARD = lst("crc16,crc64,ipcsum")
		printf "Guest: %s\n", guest
		for (x in dev) printf "Device %s: %s\n", x, dev[x]
		printf "Per I/O: (count(N0 + N) - count(N0) - idle rate x extra wall time) / N; wall times in s.\n"
		printf "Columns: syscalls of io_bench; copy_from/to_user = _copy_from_user + _copy_to_user calls / bytes;\n"
		printf "get/put_user = out-of-line __get_user_N + __get_user_nocheck_N + __put_user_nocheck_N calls\n"
		printf "(__put_user_N falls through into __put_user_nocheck_N, which so counts every put_user); all copies = every\n"
		printf "raw user copy (copy_user_enhanced_fast_string & co.: copy_*_user, iov_iter copies) calls / bytes;\n"
		printf "slab = kmalloc + kmem_cache_alloc; locks = _raw_spin_lock{,_irq,_irqsave,_bh} + mutex_lock, all\n"
		printf "contexts (in brackets: of which in io_bench task context, not subject to the idle subtraction);\n"
		printf "GUP = get_user_pages_fast + pin_user_pages_fast (+ _fast_only); irqs = irq_handler_entry.\n"
		printf "Atomic operations are inline instructions, not functions or events: ftrace cannot count them.\n"
		printf "guards = PI guard computations in the kernel (crc_t10dif_update + crc64_rocksoft_update +\n"
		printf "ip_compute_csum calls, by the block layer and by the module alike): a 4 KiB I/O on NVMe nsid 1 has 8 intervals.\n"
		prev = ""
		for (i = 1; i <= nk; i++) {
			split(keys[i], q, ":")
			t = q[1] ", " q[2]
			if (t != prev) {
				printf "\n### %s (%s)\n\n", t, dev[q[1]]
				printf "| engine | syscalls | copy_from/to_user calls / bytes | get/put_user | all user copies calls / bytes | slab allocs | page allocs | lock round trips (in io_bench) | GUP calls | wake-ups | context switches | work items | irqs | guards |\n"
				printf "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
				prev = t
			}
			k = keys[i]
			printf "| %s | %s | %s / %s | %s | %s / %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", q[3],
				fmt(per(k, SYS)), fmt(per(k, CPY)), fmt(bper(k, CPY)), fmt(per(k, GPU)),
				fmt(per(k, RAWC)), fmt(bper(k, RAWC)), fmt(per(k, SLAB)), fmt(per(k, PAGE)),
				fmt(per(k, LOCK)) " (" fmt(per(k, LOCKOWN)) ")", fmt(per(k, GUP)), fmt(per(k, WAKE)), fmt(per(k, SW)),
				fmt(per(k, WQ)), fmt(per(k, IRQ)), fmt(per(k, GUARD))
		}
		nx = 0
		for (j = 1; j <= narmed; j++) if (aorder[j] ~ /^x_/) xev[++nx] = aorder[j]
		if (nx) {
			printf "\n### Extra events per I/O (EXTRA=1)\n"
			prev = ""
			for (i = 1; i <= nk; i++) {
				split(keys[i], q, ":")
				t = q[1] ", " q[2]
				if (t != prev) {
					printf "\n%s\n\n| event |", t
					for (m = i; m <= nk; m++) { split(keys[m], r2, ":"); if (r2[1] ", " r2[2] != t) break
						printf " %s |", r2[3] }
					printf "\n|---|"
					for (m2 = i; m2 < m; m2++) printf "---:|"
					printf "\n"
					for (j = 1; j <= nx; j++) {
						printf "| %s (%s) |", substr(xev[j], 3), armed[xev[j]]
						for (m2 = i; m2 < m; m2++) printf " %s |", fmt(per(keys[m2], xev[j]))
						printf "\n"
					}
					prev = t
				}
			}
		}
		printf "\n### Idle guest, events per second (subtracted; at the start / at the end / from the smaller counts)\n\n"
		nev = split("sys,cfu,ctu,cuefs,kmalloc,kmca,page,sl,slirq,slsave,slbh,mutex,gupf,pupf,wakeup,switch,work,irq", ev, ",")
		for (j = 1; j <= nev; j++) if (has(ev[j]))
			printf "%s %.1f / %.1f / %.1f\n", ev[j], rawidle(1, ev[j]), rawidle(2, ev[j]), idlerate(ev[j])
		printf "\n### Raw totals: event count(N0) count(N0+N) [bytes(N0) bytes(N0+N)], each run in turn\n"
		for (i = 1; i <= nk; i++) {
			k = keys[i]
			printf "\n%s: N0 = %d in %s s, N0+N = %d in %s s, N = %d\n", k, n[k ":0"], reps(k ":0", "", 1), n[k ":1"], reps(k ":1", "", 1), n[k ":1"] - n[k ":0"]
			printf " system calls per I/O:"
			for (j = 1; j <= nsys; j++) {
				v = per(k, sysorder[j])
				if (v >= 0.005) printf " %s %s", substr(sysorder[j], 9), fmt(v)
			}
			printf "\n"
			if (nwork) printf " work items per I/O:"
			for (j = 1; j <= nwork; j++) {
				v = per(k, worder[j])
				if (v >= 0.005) printf " %s %s", substr(worder[j], 6), fmt(v)
			}
			printf "%s ", nwork ? "\n" : ""
			col = 0
			for (j = 1; j <= narmed; j++) {
				e = aorder[j]
				if (val(k ":0", e) == 0 && val(k ":1", e) == 0) continue
				s = sprintf(" %s %s %s", e, reps(k ":0", e), reps(k ":1", e))
				if (bytes(k ":0", e) || bytes(k ":1", e)) s = s sprintf(" [%d %d]", bytes(k ":0", e), bytes(k ":1", e))
				printf "%s", s; col += length(s)
				if (col > 90) { printf "\n "; col = 0 }
			}
			printf "\n"
		}
		printf "\nevents:"; for (j = 1; j <= narmed; j++) printf " %s=%s", aorder[j], armed[aorder[j]]; printf "\n"
		if (nalist != "") printf "not counted:%s\n", nalist
		if (bad != "") printf "\nFAILED runs (io_bench status != 0):%s\n", bad
		if (lost != "") printf "\nEVENTS LOST: the counts are not exact:%s\n", lost
		exit status
	}' "$1"
}

case "${1:-}" in
run) run ;;
report) report "${2:?usage: counts-guest.sh report RAWFILE}" ;;
*) die "usage: counts-guest.sh run | report RAWFILE" ;;
esac
