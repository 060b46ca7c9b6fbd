#!/usr/bin/env bash
# Static checks, five test cases named after what they check (run at once):
#  - sparse: the module built for 6.1 with C=2 (every file checked), in a
#    copy under BUILD/static (no objects land in module/): no warning
#  - checkpatch: checkpatch.pl --strict on module/ and uapi/: no finding but
#    those tests/checkpatch-exceptions accepts
#  - shellcheck: the shell scripts: no finding
#  - fuzz: every command of the uapi header is one the fuzzers know
#  - module_graph: the module's files call each other in no loop but the
#    inherent one, through io.c's call of file.c, as the graph at the top
#    of module/main.c says (tests/module-graph.sh)
# Records "passed failed" in BUILD/results/static.counts; each tool's whole
# output is in BUILD/results/static-TOOL.log.
#   tests/static-check.sh [BUILD]        (default build; env: DIO_CACHE)
# checkpatch.pl (with spelling.txt and const_structs.checkpatch) comes from
# the unpacked linux-source-6.1 of the debug kernel ($DIO_CACHE/src) when it
# is there, else it is extracted once from linux-source-6.1's tarball (the
# host's, or on a host that is not Debian 12 the bookworm chroot's:
# tests/vm/kernel.sh source-6.1) into $DIO_CACHE/checkpatch
# (BUILD/static/checkpatch when that is not writable).  The sparse check
# builds for 6.1 with its compiler (tests/vm/kernel.sh make): on a host
# that is not Debian 12, in that chroot, with the chroot's sparse.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-build}
case $B in /*) ;; *) B=$top/$B ;; esac
cache=${DIO_CACHE:-/var/cache/dio_batch}
res=$B/results
work=$B/static
exceptions=$top/tests/checkpatch-exceptions
mkdir -p "$res" "$work"
cd "$top" || exit 1

# ---- sparse ----------------------------------------------------------------
check_sparse() {
	local env KCHROOT='' out=$work/src
	if ! env=$(tests/vm/kernel.sh env 6.1 2>&1); then
		echo "sparse: no 6.1 kernel build tree: $env"
		return 1
	fi
	eval "$(grep '^KVER=' <<<"$env")"
	# The 6.1 chroot (a host that is not Debian 12) has its own sparse.
	[ -n "$KCHROOT" ] || command -v sparse >/dev/null || { echo "sparse: not installed (make deps)"; return 1; }
	# A copy that keeps its objects (rsync keeps the times): after the first
	# run only the checker runs.
	mkdir -p "$out"
	rsync -a --delete --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' \
		--exclude='*.mod' --exclude='*.mod.c' --exclude=Module.symvers \
		--exclude=modules.order --exclude='*.a' module uapi "$out/" || return 1
	tests/vm/kernel.sh make 6.1 -s -j"$(nproc)" M="$out/module" C=2 modules >"$work/sparse.out" 2>&1
	local rc=$?
	# Anything it says but the BTF notice is a finding (sparse or compiler).
	if grep -v '^Skipping BTF generation' "$work/sparse.out" | sed "s|$out/||g" | grep .; then
		return 1
	fi
	[ "$rc" = 0 ] || { echo "sparse: the build failed ($rc)"; return 1; }
}

# ---- checkpatch ------------------------------------------------------------
find_checkpatch() {
	local c=$cache/src/linux-source-6.1/scripts/checkpatch.pl dir stamp tarball
	if [ -f "$c" ] && [ -f "${c%/*}/spelling.txt" ]; then
		echo "$c"
		return 0
	fi
	tarball=$(tests/vm/kernel.sh source-6.1) || { echo "checkpatch: no checkpatch.pl and no linux-source-6.1" >&2; return 1; }
	dir=$cache/checkpatch
	mkdir -p "$dir" 2>/dev/null && [ -w "$dir" ] || dir=$work/checkpatch
	stamp=$(stat -c '%s %Y' "$tarball")
	if [ "$(cat "$dir/stamp" 2>/dev/null)" != "$stamp" ]; then
		echo "checkpatch: extracting checkpatch.pl from $tarball" >&2
		rm -rf "$dir/scripts" && mkdir -p "$dir" &&
			tar -xJf "$tarball" -C "$dir" --strip-components=1 \
				linux-source-6.1/scripts/checkpatch.pl \
				linux-source-6.1/scripts/spelling.txt \
				linux-source-6.1/scripts/const_structs.checkpatch >&2 &&
			echo "$stamp" >"$dir/stamp" || return 1
	fi
	echo "$dir/scripts/checkpatch.pl"
}

check_checkpatch() {
	local cp files out=$work/checkpatch.out
	cp=$(find_checkpatch) || return 1
	# The sources, never build output: an in-tree `make` leaves
	# module/dio_batch.mod.c behind, which is Kbuild's, not ours.
	files=()
	for f in module/*.c module/*.h uapi/linux/*.h; do
		case $f in *.mod.c) continue ;; esac
		files+=("$f")
	done
	echo "checkpatch: $cp"
	# One file per run, in parallel.  checkpatch.pl exits 1 on findings;
	# more is its own failure.
	# shellcheck disable=SC2016  # $0 and $1 are the inner shell's
	printf '%s\n' "${files[@]}" |
		xargs -P"$(nproc)" -n1 sh -c 'perl "$0" --strict --no-tree --terse --show-types -f "$1"
			rc=$?; [ $rc -le 1 ] || echo "checkpatch: failed on $1 (exit $rc)"' "$cp" \
		>"$out" 2>&1
	if grep '^checkpatch: failed' "$out"; then
		return 1
	fi
	# FILE:LINE: LEVEL:TYPE: message, less the accepted (TYPE, FILE) pairs.
	awk -v exc="$exceptions" '
	BEGIN {
		# "TYPE FILE  # reason" lines
		while ((getline l <exc) > 0) {
			sub(/#.*/, "", l)
			gsub(/^[ \t]+|[ \t]+$/, "", l)
			if (l == "")
				continue
			split(l, f, /[ \t]+/)
			ok[f[1] " " f[2]] = 1
		}
	}
	/^total: / { next }
	{
		file = $1; sub(/:[0-9]+:$/, "", file)
		type = $2; sub(/^[A-Z]+:/, "", type); sub(/:$/, "", type)
		if ((type " " file) in ok) {
			used[type " " file] = 1
			next
		}
		print
		bad++
	}
	END {
		for (k in ok)
			if (!(k in used))
				print "note: tests/checkpatch-exceptions: " k " matches nothing now"
		exit (bad > 0)
	}' "$out"
}

# ---- shellcheck ------------------------------------------------------------
check_shellcheck() {
	command -v shellcheck >/dev/null || { echo "shellcheck: not installed (make deps)"; return 1; }
	shellcheck -f gcc tests/vm/*.sh tests/vm/init tests/guest/run-suite.sh \
		tests/*.sh tests/unit/*.sh scripts/*.sh bench/*.sh .ci/run \
		debian/*.postinst
}

# ---- the fuzzers know every command ---------------------------------------
# A command added to the uapi header must be fuzzed: t_fuzz and t_kfuzz name
# every DIO_IOC_* of it, and TL_IOC_LAST (tests/lib/testlib.h), past which
# both make their unknown commands, is the highest-numbered one.
check_fuzz() {
	local h=uapi/linux/dio_batch.h cmds last c f bad=0
	cmds=$(sed -n 's/^#define[[:space:]]\{1,\}\(DIO_IOC_[A-Z0-9_]*\)[[:space:]]\{1,\}_IO[RW]*([A-Z_]*, *\(0x[0-9A-Fa-f]*\),.*/\2 \1/p' "$h" |
		while read -r nr c; do printf '%d %s\n' "$nr" "$c"; done | sort -n)
	[ -n "$cmds" ] || { echo "$h: no DIO_IOC_* commands found"; return 1; }
	last=$(tail -n 1 <<<"$cmds" | cut -d' ' -f2)
	while read -r _ c; do
		for f in tests/guest/t_fuzz.c tests/guest/t_kfuzz.c; do
			grep -qw "$c" "$f" || { echo "$f: does not fuzz $c ($h)"; bad=1; }
		done
	done <<<"$cmds"
	grep -Eq "^#define[[:space:]]+TL_IOC_LAST[[:space:]]+$last\$" tests/lib/testlib.h ||
		{ echo "tests/lib/testlib.h: TL_IOC_LAST is not $last, the highest-numbered command of $h"; bad=1; }
	echo "note: the fuzzers know the $(wc -l <<<"$cmds") commands of $h, the last $last"
	return $bad
}

# ---- the module's files call each other in no loop ------------------------
check_module_graph() {
	tests/module-graph.sh
}

# ---- run them --------------------------------------------------------------
t0=$(date +%s)
names=(sparse checkpatch shellcheck fuzz module_graph)
declare -A pid
for n in "${names[@]}"; do
	"check_$n" >"$res/static-$n.log" 2>&1 &
	pid[$n]=$!
done
pass=0 fail=0
for n in "${names[@]}"; do
	if wait "${pid[$n]}"; then
		echo "ok - $n"
		grep '^note: ' "$res/static-$n.log" | sed 's/^/  /'
		pass=$((pass + 1))
	else
		echo "not ok - $n ($res/static-$n.log):"
		sed 's/^/  /' "$res/static-$n.log"
		fail=$((fail + 1))
	fi
done
echo "$pass $fail" >"$res/static.counts"
printf 'static checks\t%s\n' $(($(date +%s) - t0)) >>"$res/phases"
echo "static: $pass passed, $fail failed ($(($(date +%s) - t0)) s)"
[ "$fail" = 0 ]
