#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The built manual page: it renders without a warning, it installs, and it agrees with --help.
#
#   (no topology: the binary and build/linerate.1 only; no namespace, no interface)
#
# Checks:
#   - linerate.1 sits beside the binary (the build makes it from the option tables)
#   - man -l renders it with nothing on stderr; groff -man -Tutf8 -ww and mandoc -Tlint find
#     nothing to say (without mandoc its lint is a skip, a failure under LINERATE_REQUIRE_E2E=1)
#   - for each command in 'linerate help': the long options of 'linerate CMD --help' are exactly
#     the options of the page's subsection for CMD
#   - cmake --install into a temporary prefix puts it in share/man/man1
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

lr_init
lr_require_cmds man groff sed awk sort cmake
BUILD=$(cd "$(dirname "$LINERATE")" && pwd)
MAN=$BUILD/linerate.1
lr_check_cmd "linerate.1 is built beside the binary" test -s "$MAN"

man -l "$MAN" >"$LR_TMP/man.txt" 2>"$LR_TMP/man.err" </dev/null || true
lr_check "man -l: lines rendered" "$(wc -l <"$LR_TMP/man.txt")" ">" 200
lr_check "man -l: nothing on stderr" "$(head -c 300 "$LR_TMP/man.err")" == ""
lr_check "groff -ww: no warning" "$(groff -man -Tutf8 -ww -z "$MAN" 2>&1 | head -c 300)" == ""
if command -v mandoc >/dev/null 2>&1; then
	lr_check "mandoc -Tlint: nothing to say" "$(mandoc -Tlint "$MAN" 2>&1 | head -c 300)" == ""
else
	lr_skip_check "mandoc -Tlint" "mandoc is not installed"
fi
for section in NAME SYNOPSIS DESCRIPTION COMMANDS "RUN FILES" "EXIT STATUS" FILES EXAMPLES "SEE ALSO"; do
	lr_check_cmd "section $section" grep -qx "$section" "$LR_TMP/man.txt"
done

# help_opts CMD: the long options 'linerate CMD --help' lists
help_opts()
{
	"$LINERATE" "$1" --help | sed -nE 's/^  (-[a-zA-Z], |    )--([a-z][a-z-]*).*/\2/p' | sort
}

# man_opts CMD: the long options in the tags of the .TP paragraphs of the subsection for CMD
man_opts()
{
	awk -v head=".SS \"linerate $1\"" '
		$0 == head { on = 1; next }
		on && /^\.S[SH]/ { on = 0 }
		on && tag && match($0, /\\fB\\-\\-[^\\ ]*(\\-[^\\ ]*)*/) {
			s = substr($0, RSTART + 7, RLENGTH - 7)
			gsub(/\\-/, "-", s)
			print s
		}
		{ tag = on && $0 == ".TP" }' "$MAN" | sort
}

CMDS=$("$LINERATE" help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]+ / && $1 != "help" { print $1 }')
lr_check "commands in 'linerate help'" "$(wc -w <<<"$CMDS")" ">=" 5
for cmd in $CMDS; do
	h=$(help_opts "$cmd")
	m=$(man_opts "$cmd")
	lr_check "$cmd: options in --help" "$(wc -l <<<"$h")" ">=" 4
	lr_check "$cmd: --help and the man page list the same options" "$(diff <(echo "$h") <(echo "$m") | tr '\n' ' ')" == ""
done

cmake --install "$BUILD" --prefix "$LR_TMP/prefix" >"$LR_TMP/install.log" 2>&1 || lr_show_file "$LR_TMP/install.log"
lr_check_cmd "cmake --install puts it in share/man/man1" cmp -s "$MAN" "$LR_TMP/prefix/share/man/man1/linerate.1"
lr_finish
