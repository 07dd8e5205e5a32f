#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/layers fails on what it is there to catch. A copy of the tree (src/, include/, the debt
# list) must pass as the real one does; then, one case at a time on a fresh copy, a planted finding
# must fail the check, named in its output:
#   upward   src/util/ includes "opt/opts.h" (the core looking up at the CLI)
#   cycle    src/ctl/ includes "run/config.h" while run/ includes ctl/: ctl -> run -> ctl
#   dup      a second frame.c, in src/util/
#   long     a .c file over 800 lines
#   stale    a debt entry that no longer occurs
#   rules    src/LAYERS whose rules form a cycle (exit 2)
# Usage: test_layers.sh ROOT (the tree whose scripts/layers, src/ and tests/layers.debt to use).
set -euo pipefail
top=$(cd "${1:?usage: test_layers.sh ROOT}" && pwd)
name=test_layers
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

fail()
{
	printf '[%s] FAIL: %s\n' "$name" "$*" >&2
	failed=1
}

# fresh: a new copy of the tree in $tmp/t.
fresh()
{
	rm -rf "$tmp/t"
	mkdir -p "$tmp/t/tests"
	cp -r "$top/src" "$top/include" "$tmp/t/"
	cp "$top/tests/layers.debt" "$tmp/t/tests/"
}

# expect CASE RC PATTERN...: the check on the copy exits RC and prints lines matching each PATTERN.
expect()
{
	local case=$1 want=$2 rc=0 pat
	shift 2
	"$top/scripts/layers" --debt "$tmp/t/tests/layers.debt" "$tmp/t" >"$tmp/out" 2>&1 || rc=$?
	if ((rc != want)); then
		fail "$case: exit $rc, expected $want; output: $(tail -n 5 "$tmp/out")"
		return
	fi
	for pat in "$@"; do
		grep -qE -- "$pat" "$tmp/out" || fail "$case: no line matches '$pat'; output: $(tail -n 5 "$tmp/out")"
	done
}

fresh
expect copy 0 '^scripts/layers: OK$'

fresh
printf '#include "cmd/cmd.h"\n' >"$tmp/t/src/util/planted.c"
expect upward 1 '^src/util/planted\.c:1: new: "cmd/cmd\.h"; rule: util: ' \
	'^cycle: new: util -> cmd -> util; ' 'FAIL: 2 new findings, 0 stale'

fresh
printf '/* planted */\n#include "run/config.h"\n' >"$tmp/t/src/ctl/planted.h"
expect cycle 1 '^src/ctl/planted\.h:2: new: "run/config\.h"; rule: ctl: ' '^cycle: new: ctl -> run -> ctl; '

fresh
printf '/* planted */\n' >"$tmp/t/src/util/frame.c"
expect dup 1 '^dup: new: frame\.c: src/tx/frame\.c src/util/frame\.c$'

fresh
seq 801 | sed 's|.*|/* & */|' >"$tmp/t/src/util/planted.c"
expect long 1 '^src/util/planted\.c:801: new: 801 lines, over 800$'

fresh
echo 'src/util/units.c: cmd/opts.h' >>"$tmp/t/tests/layers.debt"
expect stale 1 '^fixed, remove from debt: src/util/units\.c: cmd/opts\.h$'

fresh
echo 'linerate: cmd' >"$tmp/t/src/LAYERS.new"
sed 's/^linerate:$//' "$tmp/t/src/LAYERS" >>"$tmp/t/src/LAYERS.new"
mv "$tmp/t/src/LAYERS.new" "$tmp/t/src/LAYERS"
expect rules 2 'the rules form a cycle'

if ((failed)); then
	exit 1
fi
echo "[$name] PASS"
