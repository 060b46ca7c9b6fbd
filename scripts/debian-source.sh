# shellcheck shell=bash
# Sourced by tests/vm/kernel.sh, scripts/fio-src.sh and bench/icount.sh:
# where this Debian 12 host gets its packages.  The caller defines die().
#
# The host's bookworm main-archive source: prints its URIs, then its Signed-By
# (a file name, or an empty line).
host_debian_source() {
	local f out line uri opts signed
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		out=$(awk '
		function flush() {
			if (!found && types ~ /(^|[ \t])deb([ \t]|$)/ && suites ~ /(^|[ \t])bookworm([ \t]|$)/ &&
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
	if [ -r /etc/apt/sources.list ]; then
		while read -r line; do
			[[ $line =~ ^deb[[:space:]]+(\[([^]]*)\][[:space:]]+)?([^[:space:]]+)[[:space:]]+bookworm[[:space:]] ]] || continue
			uri=${BASH_REMATCH[3]} opts=${BASH_REMATCH[2]} signed=
			[[ $opts =~ signed-by=([^[:space:],]+) ]] && signed=${BASH_REMATCH[1]}
			printf '%s\n%s\n' "$uri" "$signed"
			return 0
		done </etc/apt/sources.list
	fi
	die "no bookworm source found in /etc/apt/sources.list{,.d/*.sources}"
}

# debian_source_enable PACKAGE VERSION: make "apt-get source
# PACKAGE=VERSION" work (root): the host's bookworm main archive as a
# deb-src entry in /etc/apt/sources.list.d/dio_batch-src.sources, written
# and apt-get updated when the entry is not that one or the version is
# not known.  Status 1 when the host's source cannot be found.
debian_source_enable() {
	local pkg=$1 ver=$2 src uris signed want
	local list=/etc/apt/sources.list.d/dio_batch-src.sources

	src=$(host_debian_source) || return 1
	uris=$(sed -n 1p <<<"$src") signed=$(sed -n 2p <<<"$src")
	want=$(printf 'Types: deb-src\nURIs: %s\nSuites: bookworm bookworm-updates\nComponents: main\n%s' \
		"$uris" "${signed:+Signed-By: $signed
}")
	if [ "$(cat "$list" 2>/dev/null)" != "$want" ] ||
		! apt-cache showsrc "$pkg" 2>/dev/null | grep -q "^Version: $ver\$"; then
		echo "${0##*/}: adding $list ($uris)" >&2
		printf '%s\n' "$want" >"$list"
		apt-get update -q >&2
	fi
}
