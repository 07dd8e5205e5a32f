#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# configs/reference.ini documents every key `linerate run` accepts, in the section that takes it.
#
#   (no topology: src/opt/opttab.c and configs/reference.ini only; no namespace, no interface)
#
# The keys come from the option table, the one place where run's keys are defined: every entry
# with INI("key", SECTIONS), and its .alias. So a key added there without a line in reference.ini
# fails here.
#
# Checks:
#   - the table yields at least 40 (section, key) pairs (the extraction itself works)
#   - each pair has a "key = value" line in that section of reference.ini, commented out (';')
#     or not; [stream NAME] keys under the commented ";[stream NAME]" example
#   - each alias is named in the comments of that section
#   - each key line in reference.ini is one the table accepts in that section (no stale key)
#   - linerate run --check accepts reference.ini as it is
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

TABLE=$LR_REPO/src/opt/opttab.c
REF=$LR_REPO/configs/reference.ini

lr_init
lr_require_cmds awk sort comm

# "section key" per accepted pair, then "alias section name" per alias. An entry of the table
# runs from its "[LR_O_...] = {" to the next; INI() and .alias may sit on any of its lines.
awk '
	function flush(   secs, n, i, s, a) {
		if (key == "")
			return
		n = split(where, secs, /[ |]+/)
		for (i = 1; i <= n; i++) {
			s = tolower(secs[i])
			if (s == "")
				continue
			print s, key
			if (alias != "")
				print "alias", s, alias
		}
		key = alias = where = ""
	}
	/^\t\[LR_O_[A-Z0-9_]+\] = \{/ { flush() }
	/^};/ { flush() }
	match($0, /INI\("[a-z0-9_]+", [A-Z |]+\)/) {
		s = substr($0, RSTART + 5, RLENGTH - 6)
		key = s; sub(/".*/, "", key)
		where = s; sub(/^[^"]*", /, "", where)
	}
	match($0, /\.alias = "[a-z0-9_]+"/) {
		alias = substr($0, RSTART + 10, RLENGTH - 11)
	}' "$TABLE" | sort -u >"$LR_TMP/table.all"
grep -v '^alias ' "$LR_TMP/table.all" >"$LR_TMP/table" || true
grep '^alias ' "$LR_TMP/table.all" | cut -d' ' -f2- >"$LR_TMP/aliases" || true
lr_check "(section, key) pairs in the option table" "$(wc -l <"$LR_TMP/table")" ">=" 40
lr_check "aliases in the option table" "$(wc -l <"$LR_TMP/aliases")" ">=" 2
for s in test tx rx stream; do
	lr_check "table: keys of [$s]" "$(grep -c "^$s " "$LR_TMP/table" || true)" ">" 0
done

# "section key" per key line of reference.ini, commented or not; "section word" for every word of
# every comment, to find the aliases in.
awk '
	/^;?\[stream [A-Za-z0-9_-]+\]$/ { sec = "stream"; next }
	/^\[[a-z]+\]$/ { sec = substr($0, 2, length($0) - 2); next }
	match($0, /^;?[a-z0-9_]+ = /) {
		k = substr($0, 1, RLENGTH - 3); sub(/^;/, "", k)
		print sec, k > keys
		next
	}
	/^[;#]/ { n = split($0, w, /[^a-z0-9_]+/); for (i = 1; i <= n; i++) if (w[i] != "") print sec, w[i] > words }
	' keys="$LR_TMP/ref" words="$LR_TMP/words.raw" "$REF"
sort -u "$LR_TMP/ref" -o "$LR_TMP/ref"
sort -u "$LR_TMP/words.raw" >"$LR_TMP/words"

missing=$(comm -23 "$LR_TMP/table" "$LR_TMP/ref" | sed 's/^\([a-z]*\) /[\1] /' | paste -sd ',' - | sed 's/,/, /g')
lr_check "keys linerate accepts that reference.ini leaves out" "${missing:-none}" == none
stale=$(comm -13 "$LR_TMP/table" "$LR_TMP/ref" | sed 's/^\([a-z]*\) /[\1] /' | paste -sd ',' - | sed 's/,/, /g')
lr_check "keys in reference.ini that linerate does not accept" "${stale:-none}" == none
while read -r s a; do
	lr_check_cmd "alias $a is named in [$s]'s comments" grep -qx "$s $a" "$LR_TMP/words"
done <"$LR_TMP/aliases"
lr_check_cmd "linerate run --check reference.ini" "$LINERATE" run --check "$REF"
lr_finish
