#!/usr/bin/env bash
# make demo on Debian 13, as a user of it runs the command: the tree copied
# into a throwaway trixie root (an overlay, in a private mount namespace,
# of the trixie chroot and the layer kernel.sh prepare-demo keeps over it
# with what scripts/deps.sh --demo installs there), and `make demo` run in
# it as root.  There make demo finds its packages (deps.sh --demo --check),
# builds dioctl and kmodctl with trixie's compiler, takes trixie's own
# kernel, 6.12, builds the module for it and boots it with trixie's QEMU,
# the guest's root that trixie root; the demo's steps all pass.  Checked
# too: the root is Debian 13, the guest ran trixie's 6.12 (not the
# chroot's 7.3), and make demo left the root's apt sources as they were.
# Records build/results/demo-trixie.counts ("passed failed") and .kver;
# the demo's output (demo.log) and logs in build/vm/demo-trixie.
#   demo-check.sh
# The check functions below run through check(): shellcheck cannot see it.
# shellcheck disable=SC2317
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
B=$top/build
out=$B/vm/demo-trixie
counts=$B/results/demo-trixie.counts
mkdir -p "$B/results"

# Everything below runs in its own mount namespace: the overlay and the
# chroot's mounts go away with it.
if [ -z "${DEMO_CHECK_NS:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "demo-check: needs root" >&2; echo "0 1" >"$counts"; exit 1; }
	DEMO_CHECK_NS=1 exec unshare -m --propagation private "$0" "$@"
fi

# shellcheck source=tests/vm/tap.sh
. "$here/tap.sh"
phase() { printf '%s\t%s\n' "$1" $((SECONDS - $2)) >>"$B/results/phases"; }
finish() {
	echo "$pass $fail" >"$counts"
	echo "demo-check: $pass passed, $fail failed (${SECONDS}s)"
	phase "demo in a trixie root, in all" 0
	[ "$fail" = 0 ]
	exit
}
fail_setup() {
	not_ok "set-up: $*"
	finish
}

rm -rf "$out" && mkdir -p "$out"
t0=$SECONDS
env=$("$here/kernel.sh" prepare-demo 7.3 2>"$out/kernel.log") ||
	fail_setup "the trixie root (kernel.sh prepare-demo 7.3: $out/kernel.log)"
eval "$env"
phase "demo in a trixie root: the root and its layer (kernel.sh prepare-demo)" $t0

# The root: the layer and the chroot under a tmpfs, with /proc, /sys,
# /dev and /tmp; the tree copied to /root/dio_batch, as a clone would be
# (never the host's checkout: make demo builds in it).
root=$out/root
mkdir -p "$root.ovl" "$root"
{ mount -t tmpfs -o size=4g tmpfs "$root.ovl" && mkdir -p "$root.ovl/upper" "$root.ovl/work" &&
	mount -t overlay overlay -o "lowerdir=$DEMO_LOWER,upperdir=$root.ovl/upper,workdir=$root.ovl/work" "$root"; } ||
	fail_setup "overlay over $DEMO_LOWER"
{ mount -t proc proc "$root/proc" && mount --rbind /sys "$root/sys" &&
	mount --rbind /dev "$root/dev" && mount -t tmpfs tmpfs "$root/tmp"; } ||
	fail_setup "the root's /proc, /sys, /dev, /tmp"
co=/root/dio_batch
mkdir -p "$root$co"
(cd "$top" && scripts/tree-files.sh | xargs -0 cp --parents -t "$root$co") || fail_setup "copying the tree"
inroot() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 "$@"; }

is_trixie() { grep -x 'VERSION_CODENAME=trixie' "$root/etc/os-release"; }
check "the root is Debian 13 (/etc/os-release: trixie)" is_trixie
apt_sources() { (cd "$root" && find etc/apt -name '*.list' -o -name '*.sources' | sort | xargs -r sha256sum); }
sources=$(apt_sources)

# make demo, its output in demo.log, its end shown when it fails: not in
# the lane's log, where the demo's own words for the corruption it finds
# ("verify FAILED: block 0 ...") would be taken for failures.
t0=$SECONDS
inroot make -C "$co" --no-print-directory demo >"$out/demo.log" 2>&1
rc=$?
phase "demo in a trixie root: make demo" $t0
for f in guest.log console.log build.log; do
	cp "$root$co/build/demo/$f" "$out/" 2>/dev/null
done
demo_ok() {
	grep -E '^=== (Preparing|Summary)' "$out/demo.log"
	[ "$rc" = 0 ] && grep -x 'demo: all good' "$out/guest.log" && return 0
	tail -n 40 "$out/demo.log"
	return 1
}
check "make demo in a trixie root: every step of the demo did what it should (status $rc; $out/demo.log)" demo_ok
# The kernel the guest ran: trixie's own 6.12, as its package names it.
kver=$(sed -n 's/^guest kernel: //p' "$out/guest.log" 2>/dev/null)
echo "${kver:--}" >"$B/results/demo-trixie.kver"
trixie_612() {
	echo "guest kernel: ${kver:-none}"
	case $kver in 6.12.*+deb13-amd64) ;; *) return 1 ;; esac
	# shellcheck disable=SC2016  # ${Version} is dpkg-query's
	inroot dpkg-query -W -f='${Version}\n' "linux-image-$kver"
}
check "the guest booted trixie's own 6.12 (linux-image-amd64)" trixie_612
same_sources() { [ "$(apt_sources)" = "$sources" ]; }
check "make demo left the root's apt sources as they were" same_sources
finish
