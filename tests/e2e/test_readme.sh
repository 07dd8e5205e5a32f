#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's quick starts run as written: every block marked <!-- quickstart: NAME --> runs
# verbatim, as root with no sudo on PATH (a fresh Debian 12 has none), and prints what the README
# says it prints.
#
#   veth     [lrlab-veth-host] veth0 198.18.1.1 <--veth--> eth0 198.18.1.2 [lrlab-veth-c1]
#   bridge   [lrlab-bridge-c1] eth0 198.18.2.2 <--> vc1 -[br0 in lrlab-bridge-host]- vc2 <--> eth0 198.18.2.3 [lrlab-bridge-c2]
#   (scripts/lab builds them as the blocks say, with the default prefix lrlab as a user would: the
#    test refuses to run while any lrlab-* namespace exists, and its trap takes every lrlab lab down)
#
# Each block runs under `bash -e` in a directory laid out like the clone: build/linerate is the
# binary under test, scripts/ and configs/ are the clone's. The README shows every command as root
# types it; a `sudo` on PATH is a stand-in that fails as "command not found" does, so a block that
# needs one fails here as it would on a fresh Debian 12.
#
# Checks:
#   - README.md has at least one quick start; each marker is followed by a ```sh block; no two
#     blocks share a name; each block starts with `./scripts/lab up TOPOLOGY` and ends with
#     `./scripts/lab down TOPOLOGY`; no block runs sudo; this test knows what each block must print
#     (a new block needs its expectations below)
#   - each block exits 0 within 120 s, and leaves no lrlab-* namespace behind and no file in the
#     clone that git would show (what it writes goes to the directory it made with mktemp -d);
#     `git status --porcelain` of the repository is the same after the blocks as before
#   - every receiver a block starts prints its summary: as many "lost 0 reordered 0 duplicates 0"
#     lines as the block has `linerate recv` commands, and no other loss line
#   - host-to-container, container-to-container: the sender's summary says 50000 frames sent, the
#     receiver's 50000 received and 50000 announced by the markers of every flow (1, then 4)
#   - round-trip: send --rtt says 50000 sent, forward and return 50000 with 0 lost, an RTT p50 > 0;
#     the reflector (--once) reflected 50000 frames and 5 markers
#   - config: the sweep's 6 steps in $out/result.json, every one passed with 0 lost
#   - capture: $out/sent.pcap holds 1000 frames (the sender says so, tcpdump prints 3 of them as the
#     probe's 18-byte UDP payload); both receivers count 1000 frames, markers of 1/1 flows
#   - docs/run.md's table of example files has one row for each file in configs/, with the lab
#     that file's "; topology:" line names
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

README=$LR_REPO/README.md

lr_init
lr_require_cmds awk grep sed tcpdump flock env

# The blocks use the lab's default prefix: a lab of the user's must not be rebuilt or removed.
if [[ -n $(lr_ns_list lrlab) ]]; then
	lr_die "namespaces of a lab with the default prefix lrlab exist ($(lr_ns_list lrlab | paste -sd ' ' -)):" \
		"the quick starts build and remove those labs; take yours down first (scripts/lab down all)"
fi
lr_lab_prefix lrlab

# docs/run.md's table of example files: a row per file in configs/, whose lab column is the
# file's own "; topology:" line, and no row for a file that is not there.
for f in "$LR_REPO"/configs/*.ini; do
	printf '%s\t%s\n' "${f##*/}" "$(sed -n 's/^; topology: //p' "$f")"
done | sort >"$LR_TMP/configs.files"
# shellcheck disable=SC2016 # the backquotes are Markdown's, not the shell's
sed -nE 's/^\| `([a-z0-9-]+\.ini)` \|.*\| `([^`]+)` \|$/\1\t\2/p' "$LR_REPO/docs/run.md" | sort >"$LR_TMP/configs.table"
lr_check "run.md's table: files in configs/ without their row (or lab)" \
	"$(comm -23 "$LR_TMP/configs.files" "$LR_TMP/configs.table" | cut -f1 | paste -sd ' ' -)" == ""
lr_check "run.md's table: rows for no file in configs/ (or with another lab)" \
	"$(comm -13 "$LR_TMP/configs.files" "$LR_TMP/configs.table" | cut -f1 | paste -sd ' ' -)" == ""

# A directory laid out like the clone.
CLONE=$LR_TMP/clone
mkdir -p "$CLONE/build" "$LR_TMP/bin" "$LR_TMP/blocks"
ln -s "$LINERATE" "$CLONE/build/linerate"
ln -s "$LR_REPO/scripts" "$CLONE/scripts"
ln -s "$LR_REPO/configs" "$CLONE/configs"
# First on PATH: a sudo that is not there, as on a fresh Debian 12 (bash says 127 then)
printf '#!/bin/sh\necho "sudo: command not found (a fresh Debian 12 has none: show commands as root)" >&2\nexit 127\n' \
	>"$LR_TMP/bin/sudo"
chmod 0755 "$LR_TMP/bin/sudo"

# The clone's files (symlinks not followed: writes through scripts/ or configs/ land in the repo,
# which git_status sees), and those new since clone.before that git would not ignore.
clone_files()
{
	(cd "$CLONE" && find . -mindepth 1 -not -type d | sort)
}

clone_new()
{
	local rel

	clone_files | comm -13 "$LR_TMP/clone.before" - | while read -r rel; do
		repo_git check-ignore -q --no-index "${rel#./}" 2>/dev/null || printf '%s\n' "${rel#./}"
	done
}

# Root may run this in a clone another user owns: name it safe for these commands only.
repo_git()
{
	git -c safe.directory="$LR_REPO" -C "$LR_REPO" "$@"
}

# The repository's own status: the blocks must leave it as it was (a user's clone stays clean).
git_status()
{
	repo_git status --porcelain --untracked-files=all
}

GIT_BEFORE=
if command -v git >/dev/null 2>&1 && git_status >/dev/null 2>&1; then
	GIT_BEFORE=x$(git_status)
else
	lr_skip_check "git status of the repository" "no git, or $LR_REPO is not a git work tree"
fi

# Extract the blocks: one file per name in $LR_TMP/blocks, the names in order on stdout; "ERROR:"
# lines for a marker without its fence, a block without its end, or a name used twice.
awk -v dir="$LR_TMP/blocks" '
	/quickstart:/ && !/^<!-- quickstart: [a-z0-9-]+ -->$/ { print "ERROR: malformed marker: " $0; next }
	/^<!-- quickstart: / {
		name = $3
		if (name in seen) print "ERROR: two quick starts named " name
		seen[name] = 1
		state = 1
		next
	}
	state == 1 {
		if ($0 != "```sh") { print "ERROR: " name ": the marker is not followed by a ```sh line"; state = 0; next }
		file = dir "/" name ".sh"
		printf "" >file
		state = 2
		next
	}
	state == 2 {
		if ($0 == "```") { close(file); print name; state = 0; next }
		print >>file
	}
	END { if (state == 2) print "ERROR: " name ": no closing ``` line" }' "$README" >"$LR_TMP/names"
BLOCKS=()
while read -r line; do
	if [[ $line == ERROR:* ]]; then
		lr_fail "README.md quick-start markers" "${line#ERROR: }"
	else
		BLOCKS+=("$line")
	fi
done <"$LR_TMP/names"
lr_check "quick starts in README.md" "${#BLOCKS[@]}" ">" 0

# has NAME REGEX [COUNT]: the block's output has lines matching REGEX (COUNT of them, or at least one).
has()
{
	local n

	n=$(grep -Ec -- "$2" "$LR_TMP/$1.all" || true)
	if [[ -n ${3:-} ]]; then
		lr_check "$1: lines matching /$2/" "$n" == "$3"
	else
		lr_check "$1: lines matching /$2/" "$n" ">" 0
	fi
}

# expect_pair NAME FLOWS: one send of 50000 frames in FLOWS flows, one receiver.
expect_pair()
{
	has "$1" '^  sent +50000 frames in .*accepted by the device' 1
	has "$1" '^  received +50000 frames' 1
	has "$1" "^  sent +50000 frames \\(end-of-test markers of $2/$2 flows\\)" 1
}

# expect_rtt NAME: 50000 round trips, nothing lost either way, and the reflector's own summary.
expect_rtt()
{
	has "$1" '^  sent +50000 frames in .*accepted by the device' 1
	has "$1" '^  forward +sent 50000  reflected 50000  lost 0  reordered 0  duplicates 0$' 1
	has "$1" '^  return +sent 50000  received 50000  lost 0  reordered 0  duplicates 0$' 1
	has "$1" '^  rtt +min [0-9]+  p50 [1-9][0-9]*  ' 1
	has "$1" '^  reflected 50000 data frames and 5 markers on 1 flows' 1
}

# out_file NAME FILE: FILE in the one directory the block made with mktemp -d ("" if none).
out_file()
{
	local d=("$LR_TMP/tmp-$1"/*/)

	if ((${#d[@]} == 1)) && [[ -d ${d[0]} ]]; then
		printf '%s\n' "${d[0]}$2"
	fi
}

expect_config()
{
	local j

	j=$(out_file "$1" result.json)
	lr_check_cmd "config: result.json in the directory mktemp made" test -s "$j"
	lr_jvalid "$j"
	lr_check "config: steps in result.json" "$(lr_jget "$j" '.steps | length')" == 6
	lr_check "config: steps that passed" "$(lr_jget "$j" '[.steps[] | select(.pass == true)] | length')" == 6
	lr_check "config: frames lost over all steps" "$(lr_jget "$j" '[.steps[].rx.lost] | add')" == 0
	has "$1" '^linerate run: step 6 ' 1
}

expect_capture()
{
	has "$1" 'pcap +/.*/sent\.pcap: 1000 frames written' 1
	has "$1" 'UDP, length 18$' 3
	has "$1" '^  received +1000 frames' 2
	has "$1" '^  sent +1000 frames \(end-of-test markers of 1/1 flows\)' 2
	lr_check_cmd "capture: sent.pcap in the directory mktemp made" test -s "$(out_file "$1" sent.pcap)"
}

for name in "${BLOCKS[@]}"; do
	f=$LR_TMP/blocks/$name.sh
	lr_log "== quick start $name:"
	sed 's/^/    /' "$f"
	first=$(head -n 1 "$f")
	last=$(tail -n 1 "$f")
	lr_check_cmd "$name: starts with ./scripts/lab up TOPOLOGY" \
		grep -Eq '^\./scripts/lab up [a-z]+( |$)' <<<"$first"
	lr_check "$name: ends by taking its lab down" "$last" == "./scripts/lab down $(awk '{ print $3 }' <<<"$first")"
	lr_check "$name: lines that run sudo" "$(grep -Ec '(^|[;&|(`[:space:]])sudo([[:space:]]|$)' "$f" || true)" == 0
	mkdir -m 0700 "$LR_TMP/tmp-$name"
	clone_files >"$LR_TMP/clone.before"
	lr_spawn "$name" env -C "$CLONE" PATH="$LR_TMP/bin:$PATH" TMPDIR="$LR_TMP/tmp-$name" \
		timeout -k 5 120 bash -e "$f"
	rc=0
	lr_wait_pid "$LR_LAST_PID" 130 || rc=$?
	cat "$LR_TMP/$name.out" "$LR_TMP/$name.err" >"$LR_TMP/$name.all"
	lr_show_file "$LR_TMP/$name.all"
	lr_check "$name: exit code" "$rc" == 0
	lr_check "$name: lrlab-* namespaces left" "$(lr_ns_list lrlab | wc -l)" == 0
	lr_check "$name: files left in the clone that git would show" "$(clone_new | paste -sd ' ' -)" == ""
	# every receiver's summary, each loss-free
	recvs=$(grep -c 'linerate recv ' "$f" || true)
	has "$name" '^  lost +0 +reordered 0 +duplicates 0' "$recvs"
	has "$name" '^  lost ' "$recvs"
	case $name in
	host-to-container) expect_pair "$name" 1 ;;
	container-to-container) expect_pair "$name" 4 ;;
	round-trip) expect_rtt "$name" ;;
	config) expect_config "$name" ;;
	capture) expect_capture "$name" ;;
	*) lr_fail "$name: a quick start this test knows" "unknown name (add its expectations to ${0##*/})" ;;
	esac
done
if [[ -n $GIT_BEFORE ]]; then
	lr_check "git status --porcelain of the repository, after the blocks" "$(git_status)" == "${GIT_BEFORE#x}"
fi
lr_finish
