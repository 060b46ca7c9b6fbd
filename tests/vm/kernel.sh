#!/usr/bin/env bash
# Kernels the guest suite runs on.
#   kernel.sh prepare FLAVOUR       install/build what FLAVOUR needs (idempotent,
#                                   cached under $DIO_CACHE; needs root + apt)
#   kernel.sh env FLAVOUR           print KVER VMLINUZ MODDIR KDIR KCHROOT
#                                   KCMDLINE_EXTRA (shell); never installs, fails
#                                   with a hint when FLAVOUR is not prepared
#   kernel.sh build-module FLAVOUR OUTDIR   build module/ for it into OUTDIR
#   kernel.sh deps debug|kcsan      install only the Debian packages the build
#                                   of that flavour needs, so that make check
#                                   can start it before the rest of deps.sh
#   kernel.sh source-6.1            print the path of linux-source-6.1's
#                                   tarball (checkpatch.pl: tests/static-check.sh),
#                                   installing it where it comes from
#   kernel.sh make FLAVOUR ARGS...  make -C KDIR ARGS with FLAVOUR's compiler
#                                   (in its chroot, where M= is under the
#                                   checkout or the cache: tests/static-check.sh)
#   kernel.sh gcov FLAVOUR ARGS...  the gcov of the compiler that built
#                                   FLAVOUR's modules, run in the current
#                                   directory (tests/vm/coverage.py)
#   kernel.sh prepare-deb 7.3       prepare 7.3 and the layer over its chroot that
#                                   deb-check.sh trixie builds and installs the
#                                   packages on; print DEB_LOWER (shell: the
#                                   overlayfs lower directories of that root)
#   kernel.sh prepare-deb 6.1       the same over the bookworm chroot, for
#                                   deb-check.sh bookworm on a host that is
#                                   not Debian 12
#   kernel.sh prepare-demo 7.3      prepare 7.3 and the layer over its chroot that
#                                   demo-check.sh runs make demo in; print
#                                   DEMO_LOWER (the same for that root)
# FLAVOUR:
#   6.1    Debian 12's stock kernel (linux-image-amd64); on another release
#          (Debian 13) installed in a bookworm chroot at $DIO_CACHE/bookworm
#          (its headers need gcc-12), as 7.3 is in its trixie chroot below
#   6.12   on Debian 13 its own kernel (linux-image-amd64); on Debian 12
#          bookworm-backports' kernel, installed on the host (the suite is
#          added to apt's sources as bookworm-backports.sources)
#   7.3    trixie-backports' kernel, installed in a trixie chroot at
#          $DIO_CACHE/trixie (its headers need gcc-14): VMLINUZ/MODDIR/KDIR
#          point into the chroot (the guest sees the host's root, so the same
#          paths work there) and modules are built inside it.  KCHROOT is the
#          chroot; the path of KDIR inside it is ${KDIR#$KCHROOT}
#   debug  Debian's linux-source-6.1 built with tests/vm/guest.config and
#          tests/vm/debug.config (KASAN, kmemleak, lockdep, fault injection,
#          gcov and KCOV for the module) in $DIO_CACHE/debug; KDIR is its O=
#          build directory.  Rebuilt when the source package version or an
#          option in a fragment changes (docs/testing.md: how long).  On a
#          host that is not Debian 12 the source package, the compiler
#          (gcc-12) and the build come from the bookworm chroot of 6.1
#          (KCHROOT), with the cache and the checkout at their own paths
#          inside it (chroot_bound), so the build's paths are the host's
#   kcsan  the same source with guest.config and tests/vm/kcsan.config
#          (KCSAN, UBSAN, KCOV for the module) in $DIO_CACHE/kcsan
# Modules of kernels other than the host's own live outside /lib/modules:
# in the guest load them with `modprobe -d "${MODDIR%/lib/modules/*}" ...`.
# Progress goes to stderr; env prints only the assignments on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${DIO_CACHE:-/var/cache/dio_batch}
jobs=${DIO_JOBS:-3}
root73=$cache/trixie
root61=$cache/bookworm
# The flavours built from linux-source-6.1: their cache directory, fragments
# and release-name suffix.
srcdir_of() { echo "$cache/$1"; }
suffix_of() { case "$1" in debug) echo dbg ;; *) echo "$1" ;; esac; }

# shellcheck source=scripts/lib.sh
. "$top/scripts/lib.sh"
need_prepare() { die "flavour $1 is not prepared${2:+ ($2)}; run: $here/kernel.sh prepare $1"; }

# --- apt on the host --------------------------------------------------------
installed() { dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null | grep -q '^ii'; }
apt_get() { # dpkg_io: scripts/debian-source.sh
	mkdir -p "$cache"
	flock "$cache/.apt.lock" env DEBIAN_FRONTEND=noninteractive \
		apt-get -y -q -o DPkg::Lock::Timeout=600 "${dpkg_io[@]}" "$@" >&2
}
apt_install() { # install, refreshing the package lists once if that fails
	apt_get install --no-install-recommends "$@" ||
		{ apt_get update && apt_get install --no-install-recommends "$@"; }
}
need_pkgs() {
	local p missing=()
	for p; do installed "$p" || missing+=("$p"); done
	[ ${#missing[@]} = 0 ] && return 0
	log "installing ${missing[*]}"
	apt_install "${missing[@]}"
}

# host_debian_source: the host's bookworm main-archive source.
# shellcheck source=scripts/debian-source.sh
. "$top/scripts/debian-source.sh"

# Newest "KVER PACKAGE" among linux-image-SERIES.N+xxx-amd64[-unsigned]
# (bookworm's 6.1: linux-image-6.1.0-ABI-amd64) that
# apt can install together with linux-headers-KVER (the -unsigned image
# preferred: the signed one may lag behind); apt-cache runs through "$@"
# (e.g. chroot_in ROOT) when given.
pick_image() {
	local series=$1 re names heads cands name kver rank
	shift
	re="^linux-image-(${series//./\\.}\.[0-9]+(-[0-9]+|\+[a-z0-9.~]+)?-amd64)(-unsigned)?$"
	names=$("$@" apt-cache pkgnames "linux-image-$series." | grep -E "$re" || true)
	[ -n "$names" ] || return 0
	heads=$(sed -E 's/-unsigned$//; s/^linux-image-/linux-headers-/' <<<"$names" | sort -u)
	# shellcheck disable=SC2086
	cands=$("$@" apt-cache policy $names $heads |
		awk '/^[^ ]/ { p = $1; sub(/:$/, "", p) } /^  Candidate:/ && $2 != "(none)" { print p }')
	for name in $names; do
		kver=${name#linux-image-} kver=${kver%-unsigned}
		{ grep -qxF "$name" <<<"$cands" && grep -qxF "linux-headers-$kver" <<<"$cands"; } || continue
		rank=0; [ "$name" != "${name%-unsigned}" ] && rank=1
		printf '%s\t%s\t%s\n' "$kver" "$rank" "$name"
	done | sort -t "$(printf '\t')" -k1,1V -k2,2n | tail -n 1 | cut -f1,3 | tr '\t' ' '
}

describe_pkg() { # PACKAGE [PREFIX...]: "VERSION from ORIGIN" of its candidate
	local p=$1 cand
	shift
	cand=$("$@" apt-cache policy "$p" | sed -n 's/^ *Candidate: //p')
	echo "$cand from $("$@" apt-cache madison "$p" | awk -F' *[|] *' -v v="$cand" '$2 == v { print $3; exit }')"
}

# Newest KVER under ROOT/lib/modules matching SERIES.*-amd64 that has
# modules.dep, a vmlinuz and headers (only those are complete).
newest_installed() {
	local root=$1 series=$2 v
	for v in $(for d in "$root"/usr/lib/modules/"$series".*-amd64 "$root"/lib/modules/"$series".*-amd64; do
		if [ -e "$d" ]; then basename "$d"; fi
	done | sort -urV); do
		[ -s "$root/lib/modules/$v/modules.dep" ] || continue
		[ -e "$root/lib/modules/$v/build/Makefile" ] || [ -e "$root/usr/src/linux-headers-$v/Makefile" ] || continue
		[ -e "$root/boot/vmlinuz-$v" ] || [ -e "$root/usr/lib/modules/$v/vmlinuz" ] || continue
		echo "$v"
		return 0
	done
	return 1
}
vmlinuz_of() { # ROOT KVER
	if [ -e "$1/boot/vmlinuz-$2" ]; then echo "$1/boot/vmlinuz-$2"; else echo "$1/usr/lib/modules/$2/vmlinuz"; fi
}

# --- 6.1 and 6.12: Debian kernels installed on the host ----------------------
prepare_61() {
	if [ "$(host_suite)" != bookworm ]; then
		prepare_61_root
		return
	fi
	if KVER=$(newest_installed "" 6.1); then
		need_pkgs make
	else
		# bookworm's own meta packages (backports is not preferred by apt).
		need_pkgs make linux-image-amd64 linux-headers-amd64
		KVER=$(newest_installed "" 6.1) || die "linux-image-amd64 installed no 6.1 kernel"
	fi
	log "6.1: $KVER (linux-image-$KVER $(dpkg-query -W -f='${Version}' "linux-image-$KVER" 2>/dev/null || true))"
}

bpo_sources=/etc/apt/sources.list.d/bookworm-backports.sources
add_bookworm_backports() {
	local src uris signed
	if grep -sv '^[[:space:]]*#' /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources |
		grep -v "^$bpo_sources:" | grep -qE '(^|[[:space:]:])bookworm-backports([[:space:]]|$)'; then
		return 0 # somebody else already has it
	fi
	src=$(host_debian_source)
	uris=$(sed -n 1p <<<"$src") signed=$(sed -n 2p <<<"$src")
	local want
	want=$(printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\n%s' \
		"$uris" "${signed:+Signed-By: $signed
}")
	if [ "$(cat "$bpo_sources" 2>/dev/null)" != "$want" ]; then
		log "adding $bpo_sources ($uris)"
		printf '%s\n' "$want" >"$bpo_sources"
		apt_get update
	fi
}

prepare_612() {
	local pick kver pkg
	if KVER=$(newest_installed "" 6.12); then
		need_pkgs make
		log "6.12: $KVER (installed)"
		return 0
	fi
	if [ "$(host_suite)" = trixie ]; then
		# Debian 13's own meta packages: no apt source to add.
		need_pkgs make linux-image-amd64 linux-headers-amd64
		KVER=$(newest_installed "" 6.12) || die "linux-image-amd64 installed no 6.12 kernel"
		log "6.12: $KVER (linux-image-$KVER $(dpkg-query -W -f='${Version}' "linux-image-$KVER" 2>/dev/null || true))"
		return 0
	fi
	add_bookworm_backports
	pick=$(pick_image 6.12)
	[ -n "$pick" ] || { apt_get update; pick=$(pick_image 6.12); }
	[ -n "$pick" ] || die "6.12: no installable linux-image-6.12.*-amd64 with headers in apt's sources"
	read -r kver pkg <<<"$pick"
	log "6.12: installing $pkg and linux-headers-$kver ($(describe_pkg "$pkg"))"
	# INITRD=No: the guest boots our own initramfs, the host needs none.
	INITRD=No apt_install make "$pkg" "linux-headers-$kver"
	KVER=$(newest_installed "" 6.12) || die "6.12: $pkg did not install a complete kernel"
}

# --- 7.3 (and 6.1 on Debian 13): a kernel in a chroot of another release ----
chroot_in() { # ROOT COMMAND...: run a command in the chroot ROOT with a clean environment
	# /proc (apt, objtool need it) is mounted in a private mount namespace:
	# it vanishes with the command, concurrent callers cannot unmount it
	# under each other, and nothing is left mounted after a kill.
	# shellcheck disable=SC2016
	unshare --mount --propagation private -- sh -c 'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' \
		"$1" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "${@:2}"
}
# chroot_bound ROOT COMMAND...: as chroot_in, in a throwaway overlay of
# ROOT (a tmpfs its upper directory: nothing the command writes outside
# the binds stays), with the cache, the checkout and the current
# directory bound at their own paths inside it (the directory only when
# it is under /tmp, the cache or the checkout; else the command runs in
# /).  The kernels built from source in another release's chroot, and the
# modules and coverage reports for them (lcov runs gcov in a directory of
# its own under /tmp), see the paths the host sees.  The overlay, not
# ROOT itself, gets the mount points: a directory made in ROOT would be
# taken for the checkout by the roots made over it (deb-check.sh).
chroot_bound() {
	mkdir -p "$cache/.chroot-bound" || return 1
	# shellcheck disable=SC2016
	unshare --mount --propagation private -- sh -c '
		l=$0 c=$1 t=$2 w=$3 m=$1/.chroot-bound
		shift 3
		mount -t tmpfs tmpfs "$m" && mkdir "$m/upper" "$m/work" "$m/root" &&
			mount -t overlay overlay -o "lowerdir=$l,upperdir=$m/upper,workdir=$m/work" "$m/root" || exit 1
		r=$m/root
		mount -t proc proc "$r/proc" && mount -t tmpfs tmpfs "$r/tmp" || exit 1
		for d in "$c" "$t"; do
			mkdir -p "$r$d" && mount --bind "$d" "$r$d" || exit 1
		done
		case $w in
		"$c" | "$c"/* | "$t" | "$t"/*) ;;
		/tmp/*) mkdir -p "$r$w" && mount --bind "$w" "$r$w" || exit 1 ;;
		*) w=/ ;;
		esac
		exec chroot "$r" sh -c "cd \"\$0\" && exec \"\$@\"" "$w" "$@"' \
		"$1" "$cache" "$top" "$PWD" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "${@:2}"
}
# prepare_root SERIES ROOT SUITE CC SUITES [TARGET [SECURITY]]: SERIES's
# newest kernel, its headers, CC and make in a minbase SUITE chroot at
# ROOT, from the host's mirror (apt inside: SUITES; TARGET: apt-get -t;
# SECURITY: that suite too, from the host's security archive).
prepare_root() {
	local series=$1 root=$2 suite=$3 cc=$4 suites=$5 target=${6:-} security=${7:-}
	local src mirror signed pick kver pkg t0 keyring sec
	# Ready only when dpkg in the chroot has nothing half done: a run killed
	# during apt-get leaves packages unpacked but not configured, or files
	# missing, and dpkg --audit names them; the install below finishes them.
	if KVER=$(newest_installed "$root" "$series") && [ -x "$root/usr/bin/$cc" ] && [ -x "$root/usr/bin/make" ] &&
		[ -z "$(dpkg --root="$root" --audit 2>&1)" ]; then
		log "$series: $KVER (installed in $root)"
		return 0
	fi
	need_pkgs debootstrap
	src=$(host_debian_source)
	mirror=$(sed -n 1p <<<"$src" | awk '{print $1}') signed=$(sed -n 2p <<<"$src")
	if [ ! -x "$root/usr/bin/apt-get" ]; then
		t0=$SECONDS
		log "$series: debootstrap $suite into $root from $mirror"
		rm -rf "$root.new"
		mkdir -p "$cache"
		debootstrap --variant=minbase ${signed:+--keyring="$signed"} "$suite" "$root.new" "$mirror" \
			>"$cache/$suite-debootstrap.log" 2>&1 ||
			{ tail -n 20 "$cache/$suite-debootstrap.log" >&2; die "$series: debootstrap failed (log: $cache/$suite-debootstrap.log)"; }
		rm -rf "$root"
		mv "$root.new" "$root"
		log "$series: debootstrap took $((SECONDS - t0)) s"
	fi
	# apt inside: SUITES from the host's mirror; no recommends; no
	# services; snapshot mirrors' Valid-Until ignored as on the host.
	keyring=/usr/share/keyrings/debian-archive-keyring.pgp
	[ -e "$root$keyring" ] || keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	rm -f "$root/etc/apt/sources.list"
	printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
		"$mirror" "$suites" "$keyring" >"$root/etc/apt/sources.list.d/debian.sources"
	if [ -n "$security" ]; then
		# The host's security archive (debian-security beside its mirror
		# when it has none): Debian 12's kernel updates come from there.
		sec=$( (die() { return 1; } && host_debian_source "$(host_suite)-security") 2>/dev/null |
			sed -n 1p | awk '{print $1}') || sec=
		[ -n "$sec" ] || sec=${mirror%/debian}/debian-security
		printf '\nTypes: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
			"$sec" "$security" "$keyring" >>"$root/etc/apt/sources.list.d/debian.sources"
	fi
	printf 'APT::Install-Recommends "false";\nAcquire::Check-Valid-Until "false";\nAcquire::Languages "none";\nDpkg::Use-Pty "false";\n' \
		>"$root/etc/apt/apt.conf.d/99dio-batch"
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod +x "$root/usr/sbin/policy-rc.d"
	cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
	t0=$SECONDS
	chroot_in "$root" dpkg --configure -a >&2 # finish an interrupted earlier run
	chroot_in "$root" apt-get -q update >&2
	pick=$(pick_image "$series" chroot_in "$root")
	[ -n "$pick" ] || die "$series: no linux-image-$series.*-amd64 in $suites${security:+ $security}"
	read -r kver pkg <<<"$pick"
	log "$series: installing $pkg ($(describe_pkg "$pkg" chroot_in "$root")), linux-headers-$kver, $cc, make in the chroot"
	# -t: 7.3 needs backports' linux-base etc.  initramfs-tools named so
	# apt does not pick dracut, and INITRD=No so its kernel hook builds no
	# initramfs (the guest boots our own).
	chroot_in "$root" env INITRD=No apt-get -y -q ${target:+-t "$target"} install \
		"$cc" make initramfs-tools "$pkg" "linux-headers-$kver" >&2
	chroot_in "$root" apt-get -q clean >&2
	log "$series: packages took $((SECONDS - t0)) s"
	KVER=$(newest_installed "$root" "$series") || die "$series: $pkg did not install a complete kernel in $root"
}
# 7.3: trixie-backports' kernel in a trixie chroot (its headers need gcc-14).
prepare_73() {
	prepare_root 7.3 "$root73" trixie gcc-14 "trixie trixie-updates trixie-backports" trixie-backports
}
# 6.1 on a host that is not Debian 12: bookworm's kernel in a bookworm
# chroot, as 7.3 is on Debian 12 (its headers need gcc-12), with
# bookworm-security, where a Debian 12 host gets its kernel's updates
# (the point release's 6.1.0-50 lacks what the module links: free_uid);
# no apt source is written to the host.
# sparse as well: the static check's sparse builds the module for 6.1
# there (tests/static-check.sh, kernel.sh make).
prepare_61_root() {
	prepare_root 6.1 "$root61" bookworm gcc-12 "bookworm bookworm-updates" "" bookworm-security
	root61_install sparse
}
root61_install() { # PACKAGE...: install those missing in the 6.1 chroot (its lock held)
	local p missing=()
	for p; do
		dpkg-query --admindir="$root61/var/lib/dpkg" -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null |
			grep -q '^ii' || missing+=("$p")
	done
	[ ${#missing[@]} != 0 ] || return 0
	log "6.1: installing ${missing[*]} in $root61"
	chroot_in "$root61" apt-get -y -q install "${missing[@]}" >&2 ||
		{ chroot_in "$root61" apt-get -q update >&2 && chroot_in "$root61" apt-get -y -q install "${missing[@]}" >&2; } ||
		die "6.1: ${missing[*]} could not be installed in $root61"
	chroot_in "$root61" apt-get -q clean >&2
}

# --- the Debian packages in a chroot: a layer over it ------------------------
# tests/vm/deb-check.sh trixie builds dio-batch's packages in trixie,
# installs them there and boots 7.3 from that root; on a host that is not
# Debian 12, deb-check.sh bookworm does the same in the 6.1 chroot and
# boots 6.1.  What it needs beyond the chroot is installed once into an
# overlayfs upper directory over the chroot, $cache/trixie-deb/KEY/layer
# (bookworm-deb for 6.1), never into the chroot itself, which the lane of
# its kernel builds modules in and boots its kernel from meanwhile: the
# check mounts throwaway overlays with the layer and the chroot as their
# lower directories (DEB_LOWER, printed by prepare-deb).  An overlay's
# lower layers must not change under its upper one, so the layer is keyed
# on the chroot's dpkg database (a chroot installed again gets a new
# layer), debian/control and the list below, and its stamp is written
# last: an interrupted build is made again from nothing, never used.  A
# layer of another key (another tree's debian/control) is removed when a
# new one is made, unless handed out within the last day: a check of that
# tree may still have it mounted.
# debian/control's Build-Depends (read from it) and build-essential, which
# dpkg-buildpackage requires; lintian (scripts/mkdeb.sh); pkgconf (the
# examples); what the packages depend on, so that apt-get install ./*.deb
# finds it there and downloads nothing.
# Not trixie's own kernel's headers (linux-headers-amd64, 6.12), so DKMS
# builds for 7.3 alone: trixie's headers packages depend on their image,
# 125 MB to download and about 300 MB unpacked, once, and DKMS's build
# for 6.12 made every install of the packages 23 s of CPU longer (49 s
# against 26; measured 2026-12-07, where it built 6.12.117+deb13 cleanly),
# a fifth of the whole check's CPU, which make check's 45 minutes on a new
# machine have no room for.
deb_layer_pkgs=(build-essential lintian pkgconf dkms adduser)
deb_key() { # ROOT
	{ cat "$1/var/lib/dpkg/status" "$top/debian/control"; echo "${deb_layer_pkgs[*]}"; } | sha256sum | cut -c1-12
}
layer73() { layer_in "$root73" "$@"; }
layer_in() { # ROOT DIR COMMAND...: run as chroot_in does, in the chroot ROOT under DIR's layer (writable)
	# redirect_dir and metacopy off: the layer must be an upper directory
	# any later overlay reads as a plain lower one.  LAYER_TREE=1: a tmpfs
	# on the root's /tmp (nothing of it in the layer) with the checkout,
	# read only, at /tmp/dio_batch.
	# shellcheck disable=SC2016
	unshare --mount --propagation private -- sh -c '
		mount -t overlay overlay -o "redirect_dir=off,metacopy=off,lowerdir=$0,upperdir=$1/layer,workdir=$1/work" "$1/mnt" &&
			mount -t proc proc "$1/mnt/proc" || exit 1
		r=$1/mnt t=$1/mnt/tmp/dio_batch
		if [ -n "$2" ]; then
			mount -t tmpfs tmpfs "$r/tmp" && mkdir "$t" && mount --bind "$2" "$t" &&
				mount -o remount,bind,ro "$t" || exit 1
		fi
		shift 2
		exec chroot "$r" "$@"' "$1" "$2" "${LAYER_TREE:+$top}" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "${@:3}"
}
# old_layers BASE KEEP: remove BASE's layers but KEEP that were not handed
# out within the last day (a check of another tree may still have one mounted).
old_layers() {
	local d
	for d in "$1"/*/; do
		d=${d%/}
		{ [ -d "$d" ] && [ "$d" != "$2" ]; } || continue
		[ -z "$(find "$d/stamp" -mmin -1440 2>/dev/null)" ] || continue
		log "removing the layer $d (not this key's, not handed out for a day)"
		rm -rf "$d"
	done
}
prepare_deb_layer() { # SERIES ROOT BASE: sets DEB_LAYER, the layer's directory
	local series=$1 root=$2 base=$3 key t0 bd l
	key=$(deb_key "$root")
	l=$base/$key
	DEB_LAYER=$l/layer
	if [ -d "$l/layer" ] && [ "$(cat "$l/stamp" 2>/dev/null)" = "$key" ]; then
		touch "$l/stamp" # handed out now
		log "$series: the packages' layer is ready ($l)"
		return 0
	fi
	t0=$SECONDS
	bd=$(build_depends "$top/debian/control")
	[ -n "$bd" ] || die "no Build-Depends in $top/debian/control"
	old_layers "$base" "$l"
	log "$series: installing the packages' needs into $l/layer: $bd, ${deb_layer_pkgs[*]}"
	rm -rf "${l:?}"
	mkdir -p "$l/layer" "$l/work" "$l/mnt"
	# apt-get update only when the chroot's lists are too old to install
	# from (a package the mirror no longer has).  dpkg without an fsync
	# per file (a layer without its stamp is made again from nothing): one
	# sync before the stamp.
	local apt=(apt-get -y -q -o Dpkg::Options::=--force-unsafe-io satisfy "$bd" "${deb_layer_pkgs[@]}")
	layer_in "$root" "$l" "${apt[@]}" >&2 ||
		{ layer_in "$root" "$l" apt-get -q update >&2 && layer_in "$root" "$l" "${apt[@]}" >&2; } ||
		die "$series: the packages' layer could not be installed"
	layer_in "$root" "$l" apt-get -q clean >&2
	rm -rf "${l:?}/work" "${l:?}/mnt"
	sync
	echo "$key" >"$l/stamp"
	log "$series: the packages' layer took $((SECONDS - t0)) s ($(du -sh "$l/layer" | cut -f1))"
}

# --- make demo on Debian 13: another layer over the 7.3 chroot ---------------
# tests/vm/demo-check.sh runs make demo in a trixie root, as a user of
# Debian 13 would.  What make demo installs there (scripts/deps.sh --demo,
# run in the root itself: trixie's own 6.12 kernel and headers, QEMU, the
# compiler) goes once into a layer over the chroot, as the packages' layer
# does, keyed on the chroot's dpkg database and the scripts that choose
# and install the packages; the check mounts throwaway overlays over it
# (DEMO_LOWER, printed by prepare-demo), where make demo finds them
# installed.  INITRD=No: the guest boots our own initramfs.
demo73=$cache/trixie-demo
demo73_key() {
	cat "$root73/var/lib/dpkg/status" "$top/scripts/deps.sh" "$top/scripts/debian-source.sh" | sha256sum | cut -c1-12
}
prepare_demo73() { # sets DEMO_LAYER, the layer's directory
	local key t0 l
	key=$(demo73_key)
	l=$demo73/$key
	DEMO_LAYER=$l/layer
	if [ -d "$l/layer" ] && [ "$(cat "$l/stamp" 2>/dev/null)" = "$key" ]; then
		touch "$l/stamp" # handed out now
		log "7.3: the demo's layer is ready ($l)"
		return 0
	fi
	t0=$SECONDS
	old_layers "$demo73" "$l"
	log "7.3: installing make demo's packages (scripts/deps.sh --demo) into $l/layer"
	rm -rf "${l:?}"
	mkdir -p "$l/layer" "$l/work" "$l/mnt"
	LAYER_TREE=1 layer73 "$l" env INITRD=No DIO_DPKG_UNSAFE_IO=1 bash /tmp/dio_batch/scripts/deps.sh --demo >&2 ||
		die "7.3: the demo's layer could not be installed"
	layer73 "$l" apt-get -q clean >&2
	rm -rf "${l:?}/work" "${l:?}/mnt"
	sync
	echo "$key" >"$l/stamp"
	log "7.3: the demo's layer took $((SECONDS - t0)) s ($(du -sh "$l/layer" | cut -f1))"
}

# --- debug, kcsan: Debian's 6.1 source with tests/vm/guest.config + FLAVOUR.config
# and the fixes in tests/vm/linux-6.1-patches/*.patch (upstream fixes after
# 6.1 that the guests need; each patch says which and why).
patches=$here/linux-6.1-patches
patches_sum() { # sha256 of the patches, in the order they are applied
	cat "$patches"/*.patch | sha256sum | cut -c1-12
}
debug_src() { # unpack linux-source-6.1 under $cache/src, patched, if missing or stale
	local srcver=$1 dir=$cache/src/linux-source-6.1 stamp=$cache/src/linux-source-6.1.pkgver want tmp p
	# The stamp names the package version and the patches applied; a tree
	# without it (or with other patches) is unpacked again, never patched
	# twice.
	want="$srcver patches $(patches_sum)"
	if [ -f "$dir/Makefile" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
		return 0
	fi
	log "debug: unpacking linux-source-6.1 $srcver into $dir"
	rm -f "$stamp"
	tmp=$(mktemp -d "$cache/src/.unpack.XXXXXX")
	tar -C "$tmp" -xaf "$(src61_root)"/usr/src/linux-source-6.1.tar.*
	for p in "$patches"/*.patch; do
		log "debug: applying $(basename "$p")"
		patch -s -p1 -d "$tmp/linux-source-6.1" <"$p" ||
			die "$(basename "$p") does not apply to linux-source-6.1 $srcver"
	done
	rm -rf "$dir"
	mv "$tmp/linux-source-6.1" "$dir"
	rmdir "$tmp"
	echo "$want" >"$stamp"
}
built_key() { # FLAVOUR SRCVER: cache key = source version + sha256 of the fragments' options and of the patches
	local f
	# The options only, in order: a comment edited does not rebuild a kernel.
	f=$(grep -hE '^(CONFIG_|# CONFIG_[A-Za-z0-9_]+ is not set)' "$here/guest.config" "$here/$1.config" |
		sha256sum | cut -d' ' -f1)
	printf '%s\n%s\n%s\n%s\n' "$1" "$2" "$f" "$(patches_sum)" | sha256sum | cut -c1-12
}
verify_config() { # CONFIG FRAGMENT...: every line of the fragments took?
	local cfg=$1 l s bad=0
	shift
	while IFS= read -r l; do
		case "$l" in
		CONFIG_*=*)
			grep -qxF -- "$l" "$cfg" && continue
			s=${l%%=*}
			log "'$l' did not take; .config has: $(grep -E "^(# )?${s}[= ]" "$cfg" || echo '(nothing)')"
			bad=1
			;;
		"# CONFIG_"*" is not set")
			s=${l#\# } s=${s%% *}
			grep -q "^$s=" "$cfg" || continue
			log "'$l' did not take; .config has: $(grep "^$s=" "$cfg")"
			bad=1
			;;
		esac
	done < <(cat "$@")
	[ $bad = 0 ] || die "the config fragments did not apply (see above): $cfg"
}
# What building linux-source-6.1 needs (kernel.sh deps, prepare_built).
built_pkgs=(linux-source-6.1 make gcc bc bison flex libelf-dev libssl-dev cpio kmod xz-utils patch)
# Where linux-source-6.1 comes from: the host on Debian 12 (src61_root
# prints nothing), else the bookworm chroot of 6.1, which has Debian 12's
# compiler as well; the build runs there (kcmd), unpacking and patching
# on the host.
src61_root() { [ "$(host_suite)" = bookworm ] || echo "$root61"; }
src61_version() { # the installed linux-source-6.1's version, or nothing
	# shellcheck disable=SC2016 # dpkg-query's fields
	dpkg-query --admindir="$(src61_root)/var/lib/dpkg" -W -f='${db:Status-Abbrev} ${Version}' linux-source-6.1 \
		2>/dev/null | awk '$1 == "ii" { print $2 }'
}
kcmd() { # COMMAND...: run where linux-source-6.1 is built
	local r
	r=$(src61_root)
	if [ -n "$r" ]; then chroot_bound "$r" "$@"; else "$@"; fi
}
prepare_src61() { # PACKAGE...: install them where linux-source-6.1 comes from
	if [ "$(host_suite)" = bookworm ]; then
		need_pkgs "$@"
		return
	fi
	# The chroot is the 6.1 flavour's too: under its lock.
	mkdir -p "$cache"
	exec 8>"$cache/.prepare-6.1.lock"
	flock 8
	prepare_61_root
	root61_install "$@"
	exec 8>&-
	need_pkgs patch xz-utils # debug_src, on the host
}
prepare_built() { # FLAVOUR: configure and build linux-source-6.1 for it
	local fl=$1 srcver key src d b t0 kver resumed=
	d=$(srcdir_of "$fl") b=$(srcdir_of "$fl")/build
	prepare_src61 "${built_pkgs[@]}"
	srcver=$(src61_version)
	[ -n "$srcver" ] || die "$fl: linux-source-6.1 did not install$(src61_root | sed 's/^./ in &/')"
	key=$(built_key "$fl" "$srcver")
	if [ -f "$d/stamp" ] && [ "$(cut -d' ' -f1 "$d/stamp")" = "$key" ] &&
		[ -s "$d/vmlinuz" ] && [ -s "$d/mods/lib/modules/$(cut -d' ' -f2 "$d/stamp")/modules.dep" ]; then
		log "$fl: $(cut -d' ' -f2 "$d/stamp") up to date (linux-source-6.1 $srcver, key $key)"
		return 0
	fi
	mkdir -p "$cache/src" "$b"
	debug_src "$srcver"
	src=$cache/src/linux-source-6.1
	t0=$SECONDS
	# The stamp is written last, after the kernel and its modules are in
	# place; until then "building" says a build is under way.  A build that
	# was killed (a CI time limit, a full disk) is resumed from its objects,
	# and built again from nothing if resuming fails.
	rm -f "$d/stamp"
	if [ -e "$d/building" ]; then
		log "$fl: an earlier build did not finish ($(cat "$d/building")): resuming it"
		resumed=1
	fi
	echo "key $key, started $(date -u +%FT%TZ)" >"$d/building"
	thp_always
	if ! configure_and_build "$fl" "$key" "$srcver" "$src" "$d" "$b"; then
		[ -n "$resumed" ] || die "$fl: build failed (log: $d/build.log)"
		log "$fl: the resumed build failed; building from nothing"
		rm -rf "$b"
		mkdir -p "$b"
		configure_and_build "$fl" "$key" "$srcver" "$src" "$d" "$b" || die "$fl: build failed (log: $d/build.log)"
	fi
	kver=$(kcmd make -s -C "$src" O="$b" kernelrelease)
	rm -rf "$d/mods.new"
	kcmd make -C "$src" O="$b" modules_install INSTALL_MOD_PATH="$d/mods.new" >>"$d/build.log" 2>&1 ||
		die "$fl: modules_install failed (log: $d/build.log)"
	rm -rf "$d/mods"
	mv "$d/mods.new" "$d/mods"
	cp "$b/arch/x86/boot/bzImage" "$d/vmlinuz.new"
	mv "$d/vmlinuz.new" "$d/vmlinuz"
	echo "$key $kver $srcver" >"$d/stamp"
	rm -f "$d/building"
	log "$fl: built $kver in $((SECONDS - t0)) s"
}
# Transparent huge pages for every process while a kernel builds, then
# the setting as it was.  Debian's default, "madvise", leaves the
# compiler's memory in 4 KiB pages; on this project's 2-core VMs (nested
# paging, where a TLB miss walks two page tables) the same five large
# objects (mm/slub.o, kernel/sched/core.o, fs/namei.o, block/blk-mq.o,
# drivers/scsi/scsi_lib.o) compiled with "always" in 21.3 to 21.4 s of CPU
# against 24.5 to 28.8 s with "madvise", half the page faults (docs/testing.md,
# "How long a run takes").  QEMU asks for huge pages for guest memory
# itself, so the guests beside the build are not affected.
thp=/sys/kernel/mm/transparent_hugepage/enabled
thp_always() {
	local was
	[ -w "$thp" ] || return 0
	was=$(sed 's/.*\[\(.*\)\].*/\1/' "$thp")
	[ "$was" != always ] || return 0
	echo always >"$thp" 2>/dev/null || return 0
	# shellcheck disable=SC2064 # $was now, not at exit
	trap "echo $was >$thp 2>/dev/null || true" EXIT
	log "transparent huge pages: always while building (was $was)"
}
# configure_and_build FLAVOUR KEY SRCVER SRC D B: .config from allnoconfig
# and the fragments, checked, then bzImage and modules in B.
configure_and_build() {
	local fl=$1 key=$2 srcver=$3 src=$4 d=$5 b=$6
	log "$fl: configuring linux-source-6.1 $srcver in $b (key $key)"
	rm -f "$b/.config"
	{
		# A release name per cache key, so initramfs caches keyed on KVER follow.
		printf 'CONFIG_LOCALVERSION="-%s-%s"\n# CONFIG_LOCALVERSION_AUTO is not set\n' \
			"$(suffix_of "$fl")" "${key:0:8}" >"$b/dio-local.config"
		# Every option off that can be, except the fragments' (as
		# merge_config.sh -n does); later lines win.
		cat "$here/guest.config" "$here/$fl.config" "$b/dio-local.config" >"$b/dio-all.config"
		kcmd make -C "$src" O="$b" KCONFIG_ALLCONFIG="$b/dio-all.config" allnoconfig
		kcmd make -C "$src" O="$b" olddefconfig
	} >"$d/config.log" 2>&1 || { tail -n 30 "$d/config.log" >&2; log "$fl: configuration failed"; return 1; }
	verify_config "$b/.config" "$here/guest.config" "$here/$fl.config" "$b/dio-local.config"
	log "$fl: building bzImage and modules with -j$jobs (log: $d/build.log)"
	# Wall and CPU time: a build shares the cores with guests (make check).
	local TIMEFORMAT="%0R s, CPU %0U s user + %0S s system"
	if ! { time kcmd nice make -C "$src" O="$b" -j"$jobs" bzImage modules >"$d/build.log" 2>&1; } 2>"$d/build.time"; then
		grep -E 'error|Error' "$d/build.log" | tail -n 20 >&2
		return 1
	fi
	log "$fl: built in $(cat "$d/build.time")"
}

# --- env ---------------------------------------------------------------------
env_of() {
	KCHROOT='' KCMDLINE_EXTRA=''
	case "$1" in
	6.1)
		if [ "$(host_suite)" = bookworm ]; then
			KVER=$(newest_installed "" 6.1) || need_prepare 6.1 "no Debian 6.1 kernel with headers"
			VMLINUZ=/boot/vmlinuz-$KVER MODDIR=/lib/modules/$KVER KDIR=/lib/modules/$KVER/build
		else
			KVER=$(newest_installed "$root61" 6.1) || need_prepare 6.1 "no 6.1 kernel with headers in $root61"
			[ -x "$root61/usr/bin/gcc-12" ] || need_prepare 6.1 "no gcc-12 in $root61"
			VMLINUZ=$(vmlinuz_of "$root61" "$KVER") MODDIR=$root61/usr/lib/modules/$KVER
			KDIR=$root61/usr/src/linux-headers-$KVER KCHROOT=$root61
		fi
		;;
	6.12)
		KVER=$(newest_installed "" 6.12) || need_prepare 6.12 "no bookworm-backports 6.12 kernel with headers"
		VMLINUZ=/boot/vmlinuz-$KVER MODDIR=/lib/modules/$KVER KDIR=/lib/modules/$KVER/build
		;;
	7.3)
		KVER=$(newest_installed "$root73" 7.3) || need_prepare 7.3 "no 7.3 kernel with headers in $root73"
		[ -x "$root73/usr/bin/gcc-14" ] || need_prepare 7.3 "no gcc-14 in $root73"
		VMLINUZ=$(vmlinuz_of "$root73" "$KVER") MODDIR=$root73/usr/lib/modules/$KVER
		KDIR=$root73/usr/src/linux-headers-$KVER KCHROOT=$root73
		;;
	debug | kcsan)
		local key kver d srcver
		d=$(srcdir_of "$1")
		srcver=$(src61_version)
		[ -n "$srcver" ] || need_prepare "$1" "linux-source-6.1 not installed$(src61_root | sed 's/^./ in &/')"
		key=$(built_key "$1" "$srcver")
		read -r _ kver _ 2>/dev/null <"$d/stamp" || need_prepare "$1" "not built"
		[ "$(cut -d' ' -f1 "$d/stamp")" = "$key" ] || need_prepare "$1" "stale: source package, $1.config/guest.config or linux-6.1-patches changed"
		KVER=$kver VMLINUZ=$d/vmlinuz MODDIR=$d/mods/lib/modules/$kver KDIR=$d/build KCHROOT=$(src61_root)
		# debug.config keeps kmemleak on from boot.  slub_debug=: every
		# slab cache marked failslab but kmemleak's and debugobjects'
		# metadata caches, for t_faultinj's cache filter (its fail-nth
		# sweeps then skip the debug kernel's own bookkeeping); the mark
		# alone turns no slab debugging on.
		KCMDLINE_EXTRA=
		if [ "$1" = debug ]; then
			KCMDLINE_EXTRA='slub_debug=A;-,kmemleak_object,kmemleak_scan_area,debug_objects_cache'
		fi
		;;
	*)
		echo "kernel: unknown flavour '$1' (6.1, 6.12, 7.3, debug, kcsan)" >&2
		exit 2
		;;
	esac
}

main() {
	local cmd=${1:-} flavour=${2:-} out w cov inroot kdir
	case "$cmd" in
	prepare)
		[ "$(id -u)" = 0 ] || die "prepare needs root (apt, chroot)"
		case "$flavour" in 6.1 | 6.12 | 7.3 | debug | kcsan) ;; *) env_of "$flavour" ;; esac
		mkdir -p "$cache"
		exec 9>"$cache/.prepare-$flavour.lock"
		flock 9
		case "$flavour" in
		6.1) prepare_61 ;;
		6.12) prepare_612 ;;
		7.3) prepare_73 ;;
		debug | kcsan) prepare_built "$flavour" ;;
		esac
		env_of "$flavour"
		log "flavour $flavour ready: $KVER"
		;;
	deps)
		case "$flavour" in
		debug | kcsan) prepare_src61 "${built_pkgs[@]}" ;;
		*) die "deps: only the flavours built from source (debug, kcsan)" ;;
		esac
		;;
	source-6.1)
		# checkpatch.pl's source: installed as root, else only found.
		if [ -z "$(src61_version)" ]; then
			[ "$(id -u)" = 0 ] || die "linux-source-6.1 is not installed$(src61_root | sed 's/^./ in &/'); as root: $here/kernel.sh source-6.1"
			mkdir -p "$cache"
			prepare_src61 linux-source-6.1
		fi
		set -- "$(src61_root)"/usr/src/linux-source-6.1.tar.*
		[ -e "$1" ] || die "linux-source-6.1 has no tarball: $1"
		echo "$1"
		;;
	make)
		# make -C KDIR ARGS... with the flavour's compiler: on the host,
		# or in its chroot (OUTDIR, M=, under the checkout or the cache).
		shift 2
		env_of "$flavour"
		if [ -z "$KCHROOT" ]; then
			exec make -C "$KDIR" "$@"
		elif [ "${KDIR#"$KCHROOT"}" != "$KDIR" ]; then
			chroot_bound "$KCHROOT" make -C "${KDIR#"$KCHROOT"}" "$@"
		else
			chroot_bound "$KCHROOT" make -C "$KDIR" "$@"
		fi
		;;
	gcov)
		shift 2
		env_of "$flavour"
		if [ -n "$KCHROOT" ]; then
			chroot_bound "$KCHROOT" gcov "$@"
		else
			exec gcov "$@"
		fi
		;;
	prepare-deb)
		# The packages' root (deb-check.sh): the kernel's chroot and the
		# layer over it, made under the flavour's lock, so that neither
		# is changed while the other is made.  7.3: trixie's; 6.1:
		# bookworm's, on a host that is not Debian 12 (on Debian 12 the
		# check installs into the host's root).
		case "$flavour" in
		7.3) ;;
		6.1) [ "$(host_suite)" != bookworm ] || die "prepare-deb 6.1: Debian 12's packages go into the host's root here" ;;
		*) die "prepare-deb: only 7.3 (trixie) and 6.1 (bookworm) have a packages' layer" ;;
		esac
		[ "$(id -u)" = 0 ] || die "prepare-deb needs root (apt, chroot)"
		mkdir -p "$cache"
		exec 9>"$cache/.prepare-$flavour.lock"
		flock 9
		if [ "$flavour" = 7.3 ]; then
			prepare_73
			prepare_deb_layer 7.3 "$root73" "$cache/trixie-deb"
			printf 'DEB_LOWER=%q\n' "$DEB_LAYER:$root73"
		else
			prepare_61_root
			prepare_deb_layer 6.1 "$root61" "$cache/bookworm-deb"
			printf 'DEB_LOWER=%q\n' "$DEB_LAYER:$root61"
		fi
		;;
	prepare-demo)
		# The demo's trixie root (demo-check.sh), as prepare-deb does.
		[ "$flavour" = 7.3 ] || die "prepare-demo: only 7.3 (trixie) has a demo's layer"
		[ "$(id -u)" = 0 ] || die "prepare-demo needs root (apt, chroot)"
		mkdir -p "$cache"
		exec 9>"$cache/.prepare-7.3.lock"
		flock 9
		prepare_73
		prepare_demo73
		printf 'DEMO_LOWER=%q\n' "$DEMO_LAYER:$root73"
		;;
	env)
		env_of "$flavour"
		log "flavour $flavour = $KVER"
		printf 'KVER=%q VMLINUZ=%q MODDIR=%q KDIR=%q KCHROOT=%q KCMDLINE_EXTRA=%q\n' \
			"$KVER" "$VMLINUZ" "$MODDIR" "$KDIR" "$KCHROOT" "$KCMDLINE_EXTRA"
		;;
	build-module)
		[ -n "${3:-}" ] || die "usage: kernel.sh build-module FLAVOUR OUTDIR"
		env_of "$flavour"
		# The source-built flavours have gcov and KCOV for the module.
		case "$flavour" in debug | kcsan) cov=DIO_BATCH_COVERAGE=1 ;; *) cov= ;; esac
		out=$(mkdir -p "$3" && cd "$3" && pwd)
		# Build a copy, so builds for several kernels never share objects.
		rm -rf "$out/src"
		mkdir -p "$out/src"
		cp -r "$top/module" "$top/uapi" "$out/src/"
		# scripts/version.sh gives the module its version from the
		# changelog (module/Kbuild): both go along.
		mkdir -p "$out/src/debian" "$out/src/scripts"
		cp "$top/debian/changelog" "$out/src/debian/"
		cp "$top/scripts/version.sh" "$out/src/scripts/"
		# Objects of an in-tree build in module/ belong to another kernel.
		find "$out/src" \( -name '*.o' -o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' -o -name '.*.cmd' \
			-o -name Module.symvers -o -name modules.order -o -name '*.a' \) -delete
		case "$out" in
		*[!A-Za-z0-9_./-]*) w=1 ;; # Kbuild cannot build in a path with spaces, commas and the like
		*) w= ;;
		esac
		# A kernel in a chroot (7.3) is built for there, its KDIR
		# inside; one built from source in a chroot (debug on a host
		# that is not Debian 12) has its KDIR in the cache, which
		# chroot_bound shows there at the host's path, with the
		# checkout: OUTDIR in either is built in place.
		inroot=chroot_in kdir=$KDIR
		if [ -n "$KCHROOT" ]; then
			kdir=${KDIR#"$KCHROOT"}
			[ "$kdir" != "$KDIR" ] || inroot=chroot_bound
		fi
		case "$out/" in "$top"/* | "$cache"/*) ;; *) [ "$inroot" != chroot_bound ] || w=1 ;; esac
		if [ -z "$KCHROOT" ] && [ -z "$w" ]; then
			make -s -C "$KDIR" M="$out/src/module" $cov modules >&2
		elif [ "$inroot" = chroot_bound ] && [ -z "$w" ]; then
			chroot_bound "$KCHROOT" make -s -C "$KDIR" M="$out/src/module" $cov modules >&2
		else
			# The kernel's compiler lives in the chroot, or Kbuild cannot
			# build where OUTDIR is: build in a plain temporary directory,
			# copy back.
			# (chroot_bound's root is thrown away: a directory in the cache.)
			if [ "$inroot" = chroot_bound ]; then
				w=$(mktemp -d "$cache/dio-build.XXXXXX")
			else
				w=$(mktemp -d "$KCHROOT/var/tmp/dio-build.XXXXXX")
			fi
			cp -r "$out/src" "$w/"
			if [ -n "$KCHROOT" ]; then
				if [ "$inroot" = chroot_bound ]; then
					chroot_bound "$KCHROOT" make -s -C "$KDIR" M="$w/src/module" $cov modules >&2
				else
					chroot_in "$KCHROOT" make -s -C "$kdir" M="${w#"$KCHROOT"}/src/module" $cov modules >&2
				fi
			else
				make -s -C "$KDIR" M="$w/src/module" $cov modules >&2
			fi || { rm -rf "$w"; die "build-module: the build in $w failed"; }
			rm -rf "$out/src"
			cp -r "$w/src" "$out/"
			rm -rf "$w"
		fi
		cp "$out/src/module/dio_batch.ko" "$out/"
		;;
	*)
		echo "usage: kernel.sh prepare|prepare-deb|prepare-demo|env|build-module FLAVOUR [OUTDIR]" >&2
		exit 2
		;;
	esac
}
main "$@"; exit $?
