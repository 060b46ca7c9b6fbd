# shellcheck shell=bash
# Sourced by tests/vm/kernel.sh and scripts/fio-src.sh: where this Debian 12
# host gets its packages.  The caller defines die().
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
