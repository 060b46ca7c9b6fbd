# shellcheck shell=bash
# Sourced by tests/vm/kernel.sh, scripts/deps.sh, scripts/fio-src.sh and
# bench/icount.sh: where this Debian host gets its packages, and what
# building ours needs.  The caller sources scripts/lib.sh (die).

# build_depends CONTROL: the Build-Depends of a debian/control file, its
# continuation lines joined (for apt-get satisfy).
build_depends() {
	awk '/^Build-Depends:/ { f = 1; sub(/^Build-Depends:[ \t]*/, ""); printf "%s", $0; next }
		f && /^[ \t]/ { printf " %s", $0; next } { f = 0 }' "$1" | tr -s ' \t' ' '
}

# dpkg_io: apt-get's options for dpkg's I/O.  DIO_DPKG_UNSAFE_IO=1 (.ci/run:
# a machine that is thrown away) drops dpkg's fsync()s, as the project's
# chroots are installed: make check installs the host's packages beside the
# debug kernel's build, whose writes every fsync() on ext4 waits behind.
# shellcheck disable=SC2034 # used by deps.sh and kernel.sh
dpkg_io=()
# shellcheck disable=SC2034
[ "${DIO_DPKG_UNSAFE_IO:-0}" != 1 ] || dpkg_io=(-o Dpkg::Options::=--force-unsafe-io)

# host_suite: the running system's Debian release (bookworm, trixie, ...),
# from /etc/os-release (DIO_OS_RELEASE: another file, for
# tests/unit/check-cases.sh); bookworm when it does not say.
host_suite() {
	(
		# shellcheck disable=SC1090,SC1091 # the system's, not ours
		. "${DIO_OS_RELEASE:-/etc/os-release}" 2>/dev/null || true
		echo "${VERSION_CODENAME:-bookworm}"
	)
}

# host_kernel: the flavour of the kernel the running release ships
# (tests/vm/kernel.sh): 6.1 on Debian 12, 6.12 on Debian 13; status 1 on
# another release, which has none of the project's kernels as its own.
host_kernel() {
	case "$(host_suite)" in
	bookworm) echo 6.1 ;;
	trixie) echo 6.12 ;;
	*) return 1 ;;
	esac
}

# host_debian_source [SUITE]: the main-archive source of SUITE (default:
# the running system's, host_suite) in apt's sources, in the deb822
# .sources or the one-line .list format: prints its URIs, then its
# Signed-By (a file name, or an empty line).
host_debian_source() {
	local suite=${1:-$(host_suite)} f out line uri opts signed
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		out=$(awk -v suite="$suite" '
		function flush() {
			if (!found && types ~ /(^|[ \t])deb([ \t]|$)/ && (" " suites " ") ~ ("[ \t]" suite "[ \t]") &&
			    enabled != "no" && uris != "") {
				if (signed !~ /^\//) signed = ""
				print uris; print signed; found = 1
			}
			types = suites = uris = signed = enabled = ""
		}
		/^#/ { next }
		/^[ \t]*$/ { flush(); next }
		/^[ \t]/ { next }
		{
			k = tolower($1); sub(/:$/, "", k); v = $0; sub(/^[^:]*:[ \t]*/, "", v); sub(/[ \t]+$/, "", v)
			if (k == "types") types = v; else if (k == "suites") suites = v
			else if (k == "uris") uris = v; else if (k == "signed-by") signed = v
			else if (k == "enabled") enabled = tolower(v)
		}
		END { flush() }' "$f")
		[ -n "$out" ] && { echo "$out"; return 0; }
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		while read -r line; do
			[[ $line =~ ^deb[[:space:]]+(\[([^]]*)\][[:space:]]+)?([^[:space:]]+)[[:space:]]+([^[:space:]]+)[[:space:]] ]] || continue
			[ "${BASH_REMATCH[4]}" = "$suite" ] || continue
			uri=${BASH_REMATCH[3]} opts=${BASH_REMATCH[2]} signed=
			[[ $opts =~ signed-by=([^[:space:],]+) ]] && signed=${BASH_REMATCH[1]}
			printf '%s\n%s\n' "$uri" "$signed"
			return 0
		done <"$f"
	done
	die "no $suite source found in /etc/apt/sources.list{,.d/*.sources,.d/*.list}"
}

# debian_source_enable PACKAGE VERSION [SUITE]: make "apt-get source
# PACKAGE=VERSION" work (root) without touching the system's apt sources:
# the main archive of SUITE (default: the running system's) and of
# SUITE-updates where apt has a deb entry for it (testing and unstable
# have none) as a deb-src entry in an apt configuration of the project's
# own, $DIO_CACHE/apt-src (its sources, its package lists, no package
# cache), which APT_CONFIG, exported, names to the caller's later apt
# commands; written and apt-get updated when the entry is not that one or
# the version is not known.  The system's own apt configuration is still
# read (proxies, keyrings).  Status 1 when no deb entry for SUITE can be
# found.
debian_source_enable() {
	local pkg=$1 ver=$2 suite=${3:-} src uris signed want suites
	local dir=${DIO_CACHE:-/var/cache/dio_batch}/apt-src
	local old=/etc/apt/sources.list.d/dio_batch-src.sources

	[ -n "$suite" ] || suite=$(host_suite)
	src=$(host_debian_source "$suite") || return 1
	uris=$(sed -n 1p <<<"$src") signed=$(sed -n 2p <<<"$src")
	suites=$suite
	# (die, the caller's, ends host_debian_source's search there: the
	# subshell keeps it from ending the caller.)
	if (die() { return 1; } && host_debian_source "$suite-updates") >/dev/null 2>&1; then
		suites="$suite $suite-updates"
	fi
	want=$(printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\n%s' \
		"$uris" "$suites" "${signed:+Signed-By: $signed
}")
	# Earlier versions of this function wrote their entry into the
	# system's sources: that file is the project's, and goes.
	if [ -e "$old" ] && grep -qx 'Types: deb-src' "$old"; then
		echo "${0##*/}: removing $old (the project's, from an earlier version: its sources are in $dir now)" >&2
		rm -f "$old"
	fi
	mkdir -p "$dir/sources.list.d" "$dir/lists/partial"
	printf 'Dir::Etc::SourceList "/dev/null";\nDir::Etc::SourceParts "%s/sources.list.d";\nDir::State::Lists "%s/lists";\nDir::Cache::pkgcache "";\nDir::Cache::srcpkgcache "";\n' \
		"$dir" "$dir" >"$dir/apt.conf"
	export APT_CONFIG=$dir/apt.conf
	if [ "$(cat "$dir/sources.list.d/debian-src.sources" 2>/dev/null)" != "$want" ] ||
		! apt-cache showsrc "$pkg" 2>/dev/null | grep -q "^Version: $ver\$"; then
		echo "${0##*/}: deb-src $uris $suites in $dir" >&2
		printf '%s\n' "$want" >"$dir/sources.list.d/debian-src.sources"
		apt-get update -q >&2
	fi
}
