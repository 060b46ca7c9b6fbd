#!/usr/bin/env bash
# The source of a fio, configured (config-host.h only), for the external
# ioengine in fio/: fio's engine ABI is its internal structs, so the engine
# is built against exactly the fio that runs it.
#   scripts/fio-src.sh        print the configured source directory of the
#                             installed fio (fetching and configuring it once)
#   scripts/fio-src.sh --dir  print where it would be, fetch nothing
# Cached under $DIO_CACHE/fio/VERSION/ (default /var/cache/dio_batch), never
# in the checkout.  Fetching needs root (a deb-src entry for the system's
# Debian source, in the project's own apt configuration, $DIO_CACHE/apt-src:
# scripts/debian-source.sh).
# The source package comes from the running system's suite, or FIO_SUITE's.
# Where the mirror has neither the source package nor its upstream tarball,
# FIO_SRC names upstream's source of the same version instead: a git
# repository of fio (its tag fio-VERSION is taken), a release tarball or
# an unpacked tree; its FIO-VERSION-GEN must name that version.
#
# fio from a newer Debian suite, for the 7.3 guest (bench/run-fio-pi.sh):
#   scripts/fio-src.sh --suite SUITE               prepare its root, print it
#   scripts/fio-src.sh --suite SUITE --dir         print where it would be
#   scripts/fio-src.sh --suite SUITE --run CMD...  run CMD in that root
# The root is a copy of the 7.3 chroot (tests/vm/kernel.sh prepare 7.3:
# trixie) in $DIO_CACHE/fio/SUITE/root, with SUITE (forky) in its apt
# sources at priority 100 and fio alone installed from it (pinned at 990;
# its dependencies from trixie), busybox and jq for the guest's scripts, and
# libisal-dev, libc6-dev and dpkg-dev to build the engine, libcmocka0 for
# tests/guest/t_fio (make check-fio-suite).  SUITE may be trixie itself
# (the chroot's own suite: no source or pin is added).  This script
# then runs inside it as above (FIO_SUITE=SUITE): the source of that fio
# is configured with the root's own compiler and libc in the root's
# /var/cache/dio_batch/fio/VERSION/, where `make fio-engine` run in the
# root (make fio-engine-suite) finds it.  The root is made once and kept
# while its stamp ($DIO_CACHE/fio/SUITE/stamp, written last) says the same
# 7.3 kernel and recipe; it names the fio version installed.  --run
# mounts /proc and the checkout at its own path in a private mount
# namespace: nothing stays mounted.  A copy, not an overlay over the
# chroot: the 7.3 lane keeps building modules in the chroot meanwhile, and
# the guest boots on the root (VM_ROOT) as a plain directory.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
cache=${DIO_CACHE:-/var/cache/dio_batch}
CACHE=$cache/fio
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

# debian_source_enable, host_suite: the system's Debian source as a
# deb-src entry, as tests/vm/kernel.sh finds it.
# shellcheck source=scripts/debian-source.sh
. "$here/debian-source.sh"

# fio_src_export SRC UPSTREAM TAR: upstream's source of fio UPSTREAM from
# SRC (a git repository of fio: its tag fio-UPSTREAM; a tarball; a tree)
# as the tar file TAR, its files under fio-UPSTREAM/, after checking that
# its FIO-VERSION-GEN says fio-UPSTREAM.  FIO_SRC_WHAT says what it was.
fio_src_export() {
	local src=$1 up=$2 tar=$3 tmp commit
	tmp=$(mktemp -d)
	if [ -d "$src" ] && git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
		commit=$(git -C "$src" rev-parse -q --verify "refs/tags/fio-$up^{commit}") ||
			{ log "$src: no tag fio-$up"; rm -rf "$tmp"; return 1; }
		git -C "$src" archive --format=tar --prefix="fio-$up/" "$commit" | tar -x -C "$tmp" || { rm -rf "$tmp"; return 1; }
		FIO_SRC_WHAT="git tag fio-$up (commit $commit) of $src"
	elif [ -d "$src" ]; then
		if ! { mkdir -p "$tmp/fio-$up" && cp -a "$src/." "$tmp/fio-$up/"; }; then
			rm -rf "$tmp"
			return 1
		fi
		FIO_SRC_WHAT="the tree $src"
	elif [ -f "$src" ]; then
		if ! { mkdir -p "$tmp/fio-$up" && tar -xaf "$src" -C "$tmp/fio-$up" --strip-components=1; }; then
			rm -rf "$tmp"
			return 1
		fi
		FIO_SRC_WHAT=${FIO_SRC_WHAT:-the tarball $src ($(sha256sum "$src" | cut -d' ' -f1))}
	else
		log "FIO_SRC=$src: no such file or directory"
		rm -rf "$tmp"
		return 1
	fi
	if ! grep -qx "DEF_VER=fio-$up" "$tmp/fio-$up/FIO-VERSION-GEN" 2>/dev/null; then
		log "$src: not fio $up (FIO-VERSION-GEN: $(grep -s '^DEF_VER=' "$tmp/fio-$up/FIO-VERSION-GEN" || echo none))"
		rm -rf "$tmp"
		return 1
	fi
	mkdir -p "$(dirname "$tar")"
	tar -C "$tmp" -cf "$tar" "fio-$up" || { rm -rf "$tmp"; return 1; }
	rm -rf "$tmp"
}

# --- a root of its own for fio from SUITE -----------------------------------
# What the root needs beyond the chroot; a change here makes it again.
ROOT_PKGS=(busybox jq libisal-dev libc6-dev dpkg-dev libcmocka0)

root_run() { # ROOT COMMAND...: in ROOT with /proc and the checkout at its path
	# shellcheck disable=SC2016
	unshare --mount --propagation private -- sh -c '
		r=$1 t=$2
		shift 2
		mount -t proc proc "$r/proc" && mkdir -p "$r$t" && mount --bind "$t" "$r$t" || exit 1
		exec chroot "$r" "$@"' sh "$1" "$top" \
		env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "${@:2}"
}

suite_key() { # SUITE KVER: what the root is made from
	echo "suite $1 kernel $2 packages fio ${ROOT_PKGS[*]}" | sha256sum | cut -c1-12
}

prepare_root() { # SUITE DIR KVER CHROOT
	local suite=$1 dir=$2 kver=$3 chroot=$4 key new mirror keyring ver sources up srcenv
	key=$(suite_key "$suite" "$kver")
	if [ -f "$dir/stamp" ] && [ "$(cut -d' ' -f1 "$dir/stamp")" = "$key" ] && [ -d "$dir/root" ]; then
		return 0
	fi
	[ "$(id -u)" = 0 ] || die "no fio root for $suite in $dir: run as root once (sudo scripts/fio-src.sh --suite $suite)"
	new=$dir.new
	rm -rf "$new"
	mkdir -p "$new/root"
	log "$suite: copying the 7.3 chroot ($chroot) to $dir/root"
	# Under the chroot's prepare lock: a copy never sees apt half done in it.
	# Its scratch directories (module builds of the 7.3 lane) stay behind.
	flock "$cache/.prepare-7.3.lock" tar -C "$chroot" --exclude=./var/tmp/* --exclude=./proc/* \
		--exclude=./var/cache/apt/archives/*.deb -cf - . | tar -C "$new/root" -xpf - ||
		die "$suite: copying $chroot failed"
	# SUITE beside trixie, from the same mirror, below trixie's priority
	# but for fio: fio comes from SUITE, what it needs from trixie (apt's
	# fio/SUITE would take its dependencies from SUITE as well, glibc too).
	sources=$new/root/etc/apt/sources.list.d/debian.sources
	mirror=$(sed -n 's/^URIs: *//p' "$sources" | head -n 1)
	keyring=$(sed -n 's/^Signed-By: *//p' "$sources" | head -n 1)
	[ -n "$mirror" ] || die "$suite: no mirror in the chroot's debian.sources"
	if ! sed -n 's/^Suites: *//p' "$sources" | tr ' ' '\n' | grep -qx "$suite"; then
		printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\n%s\n' "$mirror" "$suite" \
			"${keyring:+Signed-By: $keyring}" >"$new/root/etc/apt/sources.list.d/$suite.sources"
		printf 'Package: fio\nPin: release n=%s\nPin-Priority: 990\n\nPackage: *\nPin: release n=%s\nPin-Priority: 100\n' \
			"$suite" "$suite" >"$new/root/etc/apt/preferences.d/$suite"
	fi
	root_run "$new/root" apt-get -q update >&2 || die "$suite: apt-get update in the root failed"
	root_run "$new/root" apt-get -y -q -o Dpkg::Options::=--force-unsafe-io install \
		fio "${ROOT_PKGS[@]}" >&2 ||
		die "$suite: fio from $suite does not install in the trixie root (its dependencies?)"
	root_run "$new/root" apt-get -q clean >&2
	ver=$(dpkg-query --admindir="$new/root/var/lib/dpkg" -W -f='${Version}' fio)
	grep -qE "^ *fio *[|] *$ver *[|].* $suite/main " <<<"$(root_run "$new/root" apt-cache madison fio)" ||
		die "$suite: the fio installed ($ver) is not $suite's"
	log "$suite: fio $ver installed; its source, configured in the root"
	# FIO_SRC, where the root sees it: a tarball of that version in it.
	srcenv=()
	if [ -n "${FIO_SRC:-}" ]; then
		up=${ver#*:}
		fio_src_export "$FIO_SRC" "${up%-*}" "$new/root/var/tmp/fio-src.tar" ||
			die "$suite: FIO_SRC=$FIO_SRC has no source of fio ${up%-*}"
		srcenv=(FIO_SRC=/var/tmp/fio-src.tar FIO_SRC_WHAT="$FIO_SRC_WHAT")
	fi
	root_run "$new/root" env FIO_SUITE="$suite" CC=gcc-14 "${srcenv[@]}" bash "$top/scripts/fio-src.sh" >/dev/null ||
		die "$suite: the source of fio $ver could not be fetched or configured"
	rm -f "$new/root/var/tmp/fio-src.tar"
	sync
	echo "$key fio=$ver kernel=$kver" >"$new/stamp"
	rm -rf "$dir"
	mv "$new" "$dir"
	log "$suite: $dir ready: $(cut -d' ' -f2- "$dir/stamp") ($(du -sh "$dir/root" | cut -f1))"
}

if [ "${1:-}" = --suite ]; then
	suite=${2:?usage: scripts/fio-src.sh --suite SUITE [--dir | --run COMMAND...]}
	shift 2
	dir=$CACHE/$suite
	case ${1:-} in
	--dir)
		echo "$dir/root"
		exit 0
		;;
	--run | '') ;;
	*) die "usage: scripts/fio-src.sh --suite SUITE [--dir | --run COMMAND...]" ;;
	esac
	[ "$(uname -m)" = x86_64 ] || die "--suite: x86-64 only (the 7.3 chroot is amd64)"
	if [ "$(id -u)" = 0 ]; then
		"$top/tests/vm/kernel.sh" prepare 7.3 >&2 || die "the 7.3 chroot could not be prepared"
	fi
	KVER='' KCHROOT=''
	eval "$("$top/tests/vm/kernel.sh" env 7.3 2>/dev/null)" || die "no 7.3 chroot (tests/vm/kernel.sh prepare 7.3)"
	if [ "$(id -u)" = 0 ]; then
		mkdir -p "$CACHE"
		exec 8>"$CACHE/.$suite.lock"
		flock 8
	fi
	prepare_root "$suite" "$dir" "$KVER" "$KCHROOT"
	exec 8>&-
	if [ "${1:-}" = --run ]; then
		shift
		[ $# -gt 0 ] || die "--run: no command"
		root_run "$dir/root" "$@"
		exit
	fi
	echo "$dir/root"
	exit 0
fi

# --- the source of the installed fio ----------------------------------------
ver=$(dpkg-query -W -f='${Version}' fio 2>/dev/null || true)
[ -n "$ver" ] || die "fio is not installed (make deps)"
upstream=${ver#*:}
upstream=${upstream%-*}
top_dir=$CACHE/$ver
dir=$top_dir/fio-$upstream

if [ "${1:-}" = --dir ]; then
	echo "$dir"
	exit 0
fi
if [ -f "$dir/.dio_batch-configured" ]; then
	echo "$dir"
	exit 0
fi
[ "$(id -u)" = 0 ] || die "the source of fio $ver is not in $CACHE: run as root once (sudo scripts/fio-src.sh)"

suite=${FIO_SUITE:-$(host_suite)}
debian_source_enable fio "$ver" "$suite" || die "no deb-src entry for fio $ver ($suite)"

# fetch_orig_only: apt-get source needs every file of the source package;
# a mirror may lack the .dsc or the Debian tarball (404) and still have
# the upstream tarball.  That one alone, with the SHA256 the signed
# Sources index gives it (apt-helper checks it), unpacked as the source:
# Debian's patches are missing then, and .dio_batch-configured says so
# (bookworm's fio 3.33-3 has three, all about the build, none about the
# code: the Makefile's hardening flags, the man page path, configure's
# log).
fetch_orig_only() {
	local uris line url file hash n=0
	uris=$(apt-get source -q --print-uris "fio=$ver" 2>/dev/null | grep "^'") || return 1
	while read -r line; do
		url=$(cut -d"'" -f2 <<<"$line")
		read -r file _ hash <<<"$(cut -d"'" -f3- <<<"$line")"
		case $file in
		*.asc) continue ;;
		fio_"$upstream".orig.tar.*) ;;
		*) continue ;;
		esac
		log "apt-get source failed: fetching $file alone ($hash)"
		/usr/lib/apt/apt-helper -q download-file "$url" "$PWD/$file" "$hash" >&2 || return 1
		mkdir -p "fio-$upstream"
		tar -xaf "$file" -C "fio-$upstream" --strip-components=1 || return 1
		n=1
	done <<<"$uris"
	[ $n = 1 ]
}

rm -rf "$top_dir.tmp"
mkdir -p "$top_dir.tmp"
log "apt-get source fio=$ver ($suite) into $top_dir"
how="apt-get source fio=$ver"
(cd "$top_dir.tmp" && apt-get source -q --download-only "fio=$ver" >&2 &&
	dpkg-source -x ./fio_"${ver#*:}".dsc "fio-$upstream" >&2) ||
	{
		how="fio_$upstream.orig.tar.* alone (the mirror had not the whole source package), SHA256 checked"
		rm -rf "${top_dir:?}.tmp"/* && (cd "$top_dir.tmp" && fetch_orig_only)
	} || {
		[ -n "${FIO_SRC:-}" ] || die "the source of fio $ver could not be fetched (FIO_SRC: upstream's source of $upstream)"
		log "no source of fio $ver from the mirror: upstream's from FIO_SRC=$FIO_SRC"
		rm -rf "${top_dir:?}.tmp"/* && fio_src_export "$FIO_SRC" "$upstream" "$top_dir.tmp/fio-src.tar" &&
			tar -xf "$top_dir.tmp/fio-src.tar" -C "$top_dir.tmp" && rm -f "$top_dir.tmp/fio-src.tar" &&
			how="upstream's fio $upstream, not Debian's source package (the mirror had neither it nor its tarball): $FIO_SRC_WHAT; Debian's patches missing"
	} || die "the source of fio $ver could not be fetched, nor taken from FIO_SRC=$FIO_SRC"
# Only config-host.h (and what configure writes beside it): fio itself is
# not built.  The options match Debian's build where they change structs
# the engine sees (none of fio's public structs depend on the optional
# libraries).
(cd "$top_dir.tmp/fio-$upstream" && ./configure --disable-native >&2)
[ -f "$top_dir.tmp/fio-$upstream/config-host.h" ] || die "configure wrote no config-host.h"
echo "$how" >"$top_dir.tmp/fio-$upstream/.dio_batch-configured"
rm -rf "$top_dir"
mv "$top_dir.tmp" "$top_dir"
echo "$dir"
