#!/usr/bin/env bash
# The tree's files, NUL-terminated, relative to its top: what a copy of the
# tree holds (scripts/mkdeb.sh, tests/vm/anywhere-check.sh), never build/.
# In a git checkout, the tracked files and the new ones git does not ignore
# (git ls-files); in a tree that is not one (a release tarball, git
# archive's export), every file but those .gitignore's patterns name, read
# as git reads them: "DIR/" a directory of that name anywhere, a pattern
# with a slash a path from the top, any other a file name anywhere.
#   scripts/tree-files.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
if command -v git >/dev/null && [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$top" ]; then
	git ls-files -co --exclude-standard -z | grep -zv '^build/'
	exit 0
fi
# find's expression: ( -name .git -o -path ./build -o PATTERN-AS-DIR ... ) -prune
# -o ( -type f -o -type l ) ! ( PATTERN-AS-FILE ... ) -print0
dirs=(-name .git -o -path ./build)
files=(-false)
if [ -f .gitignore ]; then
	while IFS= read -r p || [ -n "$p" ]; do
		case $p in
		'' | '#'*) continue ;;
		'!'*)
			echo "tree-files: .gitignore's negation '$p' is not understood" >&2
			exit 1
			;;
		*/) p=${p%/} && case $p in
			*/*) dirs+=(-o -path "./${p#/}") ;;
			*) dirs+=(-o -name "$p") ;;
			esac ;;
		*/*) files+=(-o -path "./${p#/}") ;;
		*) files+=(-o -name "$p") ;;
		esac
	done <.gitignore
fi
find . \( "${dirs[@]}" \) -prune -o \( -type f -o -type l \) ! \( "${files[@]}" \) -printf '%P\0' |
	sort -z
