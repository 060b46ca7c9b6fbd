#!/usr/bin/env bash
# The calls between the module's files: for each module/*.c, the other
# files whose non-static functions it names (calls, or takes the address
# of, as a command table does), found in the sources with their comments
# and strings removed.  Prints one line per file, "FILE: CALLEE ...", and
# fails when the files call each other in a loop that does not close
# through the one call allowed to go back up: io.c's dio_file_put() in
# file.c, which the last request of a descriptor makes to free it (file.c
# reaps the requests and runs the commands that make them, so that loop is
# inherent).  It fails too when the graph written at the top of main.c
# ("FILE: CALLEE ..." lines, "none" for a file that calls no other) is not
# the sources'.  The static checks run it (tests/static-check.sh).
#   tests/module-graph.sh [MODULE_DIR]      (default: module/ of the tree)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$top/module}
# The one edge a loop may close through: FROM TO.
allowed='io.c file.c'

files=()
for f in "$dir"/*.c; do
	case $f in *.mod.c) continue ;; esac
	files+=("$f")
done
[ "${#files[@]}" -gt 0 ] || { echo "module-graph: no .c file in $dir" >&2; exit 1; }

# Each file's text without comments, strings and character constants,
# one "FILE<TAB>TEXT" record per file (newlines kept as spaces).
strip() {
	perl -0777 -ne '
		s{/\*.*?\*/}{ }gs;
		s{//[^\n]*}{}g;
		s{"(?:\\.|[^"\\\n])*"}{""}g;
		s{'"'"'(?:\\.|[^'"'"'\\\n])*'"'"'}{0}g;
		print;
	' "$1"
}

# Non-static function definitions: a line at column 0 that is not static,
# whose first identifier followed by "(" is the name, and whose parameter
# list is followed by "{" (not ";": a declaration or a macro's use).
defs() {
	strip "$1" | perl -0777 -ne '
		while (/^(?!static\b|typedef\b|extern\b|#)[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*\([^;{}]*\)\s*\{/mg) {
			print "$1\n";
		}
	'
}

declare -A owner
for f in "${files[@]}"; do
	b=${f##*/}
	while read -r fn; do
		[ -n "$fn" ] || continue
		if [ -n "${owner[$fn]:-}" ] && [ "${owner[$fn]}" != "$b" ]; then
			echo "module-graph: $fn is defined in ${owner[$fn]} and $b" >&2
			exit 1
		fi
		owner[$fn]=$b
	done < <(defs "$f")
done

# Edges: "FROM TO FUNCTION" for every other file's function a file names.
edges=$(for f in "${files[@]}"; do
	b=${f##*/}
	strip "$f" | grep -oE '\b[A-Za-z_][A-Za-z0-9_]*\b' | sort -u |
		while read -r id; do
			o=${owner[$id]:-}
			if [ -n "$o" ] && [ "$o" != "$b" ]; then
				echo "$b $o $id"
			fi
		done
done)

# The graph main.c's comment writes down, as "FILE: CALLEE..." sorted.
written() {
	awk '
	/^ \* Which files call which others/ { on = 1; next }
	on && /^ \*\/$|^ \* The one call/ { on = 0 }
	!on { next }
	/^ \*   [A-Za-z0-9_]+\.c:/ {
		f = $2
		sub(/:$/, "", f)
		order[++n] = f
		for (i = 3; i <= NF; i++)
			dep[f] = dep[f] " " $i
		next
	}
	/^ \*      +[A-Za-z0-9_]+\.c/ && f != "" { for (i = 2; i <= NF; i++) dep[f] = dep[f] " " $i; next }
	END {
		for (i = 1; i <= n; i++) {
			k = split(dep[order[i]], d, " ")
			out = ""
			for (j = 1; j <= k; j++)
				if (d[j] != "none")
					out = out " " d[j]
			print order[i] ":" out
		}
	}' "$dir/main.c" | sort_deps
}
# Each "FILE: CALLEE..." line with its callees sorted, the lines sorted.
sort_deps() {
	while IFS=: read -r f deps; do
		# shellcheck disable=SC2086  # the callees, one word each
		printf '%s:%s\n' "$f" "$(printf ' %s' $deps | tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//; s/^./ &/')"
	done | sort
}

# The graph, then its loops: a depth-first search over the edges less the
# allowed one; an edge to a file on the current path closes a loop.
names=$(for f in "${files[@]}"; do echo "${f##*/}"; done)
rc=0
report=$(awk -v allowed="$allowed" -v names="$names" '
BEGIN {
	k = split(names, m, "\n")
	for (i = 1; i <= k; i++)
		node[m[i]] = 1
}
NF == 3 {
	if (!(($1 " " $2) in seen)) {
		seen[$1 " " $2] = 1
		out[$1] = out[$1] " " $2
		if (($1 " " $2) != allowed)
			adj[$1] = adj[$1] " " $2
	}
	why[$1 " " $2] = why[$1 " " $2] (why[$1 " " $2] == "" ? "" : ",") $3
	node[$1] = 1
	node[$2] = 1
}
function dfs(n,    k, i, m, c, p, s) {
	state[n] = 1
	path[++depth] = n
	k = split(adj[n], m, " ")
	for (i = 1; i <= k; i++) {
		c = m[i]
		if (state[c] == 1) {
			s = ""
			for (p = depth; path[p] != c; p--)
				s = path[p] " -> " s
			print "loop: " c " -> " s c
			for (p = depth; path[p] != c; p--)
				;
			for (; p <= depth; p++)
				printf "  %s -> %s: %s\n", path[p], (p < depth ? path[p + 1] : c), why[path[p] " " (p < depth ? path[p + 1] : c)]
			loops++
		} else if (!state[c]) {
			dfs(c)
		}
	}
	depth--
	state[n] = 2
}
END {
	for (n in node)
		print n ":" out[n] | "sort"
	close("sort")
	for (n in node)
		if (!state[n])
			dfs(n)
	split(allowed, a, " ")
	if (loops) {
		printf "module-graph: %d loop(s) not closed by %s -> %s\n", loops, a[1], a[2]
		exit 1
	}
	printf "note: the module'"'"'s files call each other in no loop but through %s -> %s (%s)\n", a[1], a[2], why[allowed]
}' <<<"$edges") || rc=1
echo "$report"

# The graph at the top of main.c must be this one.
if ! d=$(diff <(written) <(grep -E '^[^ ]+\.c:' <<<"$report" | sort_deps)); then
	echo "module-graph: the graph written in $dir/main.c is not the sources' (< written, > found):"
	echo "$d"
	rc=1
fi
exit $rc
