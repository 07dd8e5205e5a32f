#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every shell block of README.md and docs/ runs as written, or says why it cannot run here.
# Each ```sh block has a marker on the line before it:
#
#   <!-- quickstart: NAME -->     README.md only: a quick start, run as written; this test knows
#                                 what each must print (a new one needs its expectations below)
#   <!-- test: run -->            run as written (it builds and removes any lab it uses)
#   <!-- test: lab TOPOLOGY [OPTIONS] -->
#                                 run in the lab scripts/lab up TOPOLOGY OPTIONS builds (prefix
#                                 lrlab, as the text names it); the test takes it down after
#   <!-- test: skip (REASON) -->  not run here (a second host, a cluster, a benchmark): counted
#                                 and printed with REASON
#   "; known bug (REASON)" after run or lab: the block fails today for REASON; it runs, and its
#   failure is printed, not counted; once it passes, the marker must go (that is a failure)
#
# Every other fence names its language (```text for output, ```json, ```yaml), so that no command
# hides in an unmarked block. The blocks run as root with no sudo on PATH (a fresh Debian 12 has
# none).
#
#   veth     [lrlab-veth-host] veth0 198.18.1.1 <--veth--> eth0 198.18.1.2 [lrlab-veth-c1]
#   bridge   [lrlab-bridge-c1] eth0 198.18.2.2 <--> vc1 -[br0 in lrlab-bridge-host]- vc2 <--> eth0 198.18.2.3 [lrlab-bridge-c2]
#   (scripts/lab builds them as the blocks say, with the default prefix lrlab as a user would: the
#    test refuses to run while any lrlab-* namespace exists, and its trap takes every lrlab lab down)
#
# Each block runs under `bash -e` in a directory laid out like the clone: build/linerate (and
# `linerate` on PATH) is the binary under test, build/linerate.1 its man page, scripts/ and
# configs/ are the clone's, deploy/ a copy of its tracked files. The docs show every command as
# root types it; a `sudo` on PATH is a stand-in that fails as "command not found" does, so a block
# that needs one fails here as it would on a fresh Debian 12. TMPDIR is a directory per block.
#
# Checks:
#   - every fence has a language; every ```sh block has a well-formed marker, every marker a ```sh
#     block; README.md has at least one quick start, no two share a name, each starts with
#     `./scripts/lab up TOPOLOGY` and ends with `./scripts/lab down TOPOLOGY`; no block (run or
#     skipped) runs sudo
#   - each block that runs exits 0 within 120 s, and leaves no lrlab-* namespace behind and no
#     file in the clone that git would show (what it writes goes to the directory it made with
#     mktemp -d); `git status --porcelain` of the repository is the same after the blocks as before
#   - every receiver a block starts prints its summary: as many "lost 0 reordered 0 duplicates 0"
#     lines as the block has `linerate recv` commands, and no other loss line
#   - host-to-container, container-to-container: the sender's summary says 50000 frames sent, the
#     receiver's 50000 received and 50000 announced by the markers of every flow (1, then 4)
#   - round-trip: send --rtt says 50000 sent, forward and return 50000 with 0 lost, an RTT p50 > 0;
#     the reflector (--once) reflected 50000 frames and 5 markers
#   - config: the sweep's 6 steps in $out/result.json, every one passed (or failed only as
#     sender-limited) with 0 lost; in any block, a run's exit code 3 counts as 0 when only
#     sender-limited steps failed (a busy machine's sender), and the test takes its lab down
#   - capture: $out/sent.pcap holds 1000 frames (the sender says so, tcpdump prints 3 of them as the
#     probe's 18-byte UDP payload); both receivers count 1000 frames, markers of 1/1 flows
#   - kubernetes.md's token recipe leaves the token mode 0600 in the git-ignored overlay
#   - docs/run.md's table of example files has one row for each file in configs/, with the lab
#     that file's "; topology:" line names
# At the end it prints how many blocks ran, and each one skipped or failing for a known bug, why.
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

lr_init
lr_require_cmds awk grep sed tcpdump flock env find comm man
MANPAGE=$(dirname "$LINERATE")/linerate.1
[[ -s $MANPAGE ]] || lr_die "no man page beside the binary ($MANPAGE): build the target man"

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
ln -s "$MANPAGE" "$CLONE/build/linerate.1"
ln -s "$LINERATE" "$LR_TMP/bin/linerate"
ln -s "$LR_REPO/scripts" "$CLONE/scripts"
ln -s "$LR_REPO/configs" "$CLONE/configs"
# A copy, since a block may write into it (kubernetes.md's token overlay); never a token of yours
cp -R "$LR_REPO/deploy" "$CLONE/deploy"
rm -rf "$CLONE/deploy/kubernetes/local"
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

# Extract the blocks of README.md and docs/**/*.md, in that order: block ID's lines in
# $LR_TMP/blocks/ID.sh, and a line "BLOCK<tab>ID<tab>FILE:LINE<tab>MARKER" per ```sh block;
# "ERROR<tab>FILE:LINE<tab>what" for a fence without a language, a ```sh block without a marker
# line before it, a marker before no ```sh block, or a block without its closing fence.
mapfile -t DOCS < <(cd "$LR_REPO" && find docs -name '*.md' | LC_ALL=C sort)
(cd "$LR_REPO" && awk -v dir="$LR_TMP/blocks" '
	function err(where, what) { printf "ERROR\t%s\t%s\n", where, what }
	FNR == 1 {
		if (state == 2) err(open, "no closing ``` line")
		state = 0
		marker = ""
	}
	state == 2 {
		if ($0 ~ /^```[ \t]*$/) {
			if (file != "") close(file)
			state = 0
		} else if (file != "") {
			print >>file
		}
		next
	}
	/^```/ {
		open = FILENAME ":" FNR
		lang = substr($0, 4)
		sub(/[ \t].*/, "", lang)
		file = ""
		if (lang == "")
			err(open, "a ``` fence without a language (sh for commands, text for output)")
		else if (lang == "sh" && marker == "")
			err(open, "a ```sh block without a <!-- test: ... --> line before it")
		else if (lang != "sh" && marker != "")
			err(mwhere, "a marker before a ```" lang " block: only sh blocks run")
		else if (lang == "sh") {
			if (marker ~ /^<!-- quickstart: [a-z0-9-]+ /) {
				id = marker
				sub(/^<!-- quickstart: /, "", id)
				sub(/ .*/, "", id)
			} else {
				id = "b" (++n)
			}
			file = dir "/" id ".sh"
			printf "" >file
			printf "BLOCK\t%s\t%s\t%s\n", id, open, marker
		}
		marker = ""
		state = 2
		next
	}
	/^<!-- *(test|quickstart):/ {
		if (marker != "") err(mwhere, "the marker is not followed by a ```sh line")
		marker = $0
		mwhere = FILENAME ":" FNR
		next
	}
	{
		if (marker != "") err(mwhere, "the marker is not followed by a ```sh line")
		marker = ""
	}
	END {
		if (state == 2) err(open, "no closing ``` line")
		if (marker != "") err(mwhere, "the marker is not followed by a ```sh line")
	}' README.md "${DOCS[@]}") >"$LR_TMP/manifest"
RE_KNOWN='^(.*); known bug \((.+)\) -->$'
RE_QUICK='^<!-- quickstart: ([a-z0-9-]+) -->$'
RE_LAB='^<!-- test: lab ([a-z]+( --[a-z-]+( [0-9]+)?)*) -->$'
RE_SKIP='^<!-- test: skip \((.+)\) -->$'
IDS=()
QUICK=0
declare -A WHERE=() KIND=() ARGS=() REASON=() KNOWN=() SEEN=() LABEL=()
while IFS=$'\t' read -r tag id where marker; do
	if [[ $tag == ERROR ]]; then
		lr_fail "$id: fences and markers" "$where"
		continue
	fi
	WHERE[$id]=$where
	known=
	if [[ $marker =~ $RE_KNOWN ]]; then
		known=${BASH_REMATCH[2]}
		marker="${BASH_REMATCH[1]} -->"
	fi
	if [[ $marker =~ $RE_QUICK && $where == README.md:* && -z $known ]]; then
		[[ -z ${SEEN[$id]:-} ]] || lr_fail "$where: quick-start names" "a second quick start named $id"
		SEEN[$id]=1
		KIND[$id]=quickstart
		QUICK=$((QUICK + 1))
	elif [[ $marker == "<!-- test: run -->" ]]; then
		KIND[$id]=run
	elif [[ $marker =~ $RE_LAB ]]; then
		KIND[$id]=lab
		ARGS[$id]=${BASH_REMATCH[1]}
	elif [[ $marker =~ $RE_SKIP && -z $known ]]; then
		KIND[$id]=skip
		REASON[$id]=${BASH_REMATCH[1]}
	else
		lr_fail "$where: marker" "malformed: $marker"
		continue
	fi
	KNOWN[$id]=$known
	IDS+=("$id")
done <"$LR_TMP/manifest"
lr_check "quick starts in README.md" "$QUICK" ">" 0
lr_check "sh blocks in README.md and docs/" "${#IDS[@]}" ">=" 20

# has ID REGEX [COUNT]: block ID's output has lines matching REGEX (COUNT of them, or at least one).
has()
{
	local n label=${LABEL[$1]:-$1}

	n=$(grep -Ec -- "$2" "$LR_TMP/$1.all" || true)
	if [[ -n ${3:-} ]]; then
		lr_check "$label: lines matching /$2/" "$n" == "$3"
	else
		lr_check "$label: lines matching /$2/" "$n" ">" 0
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
	has "$1" '^  reflected 50000 data frames and 5 markers on 1 flow ' 1
}

# out_file NAME FILE: FILE in the one directory the block made with mktemp -d ("" if none).
out_file()
{
	local d=("$LR_TMP/tmp-$1"/*/)

	if ((${#d[@]} == 1)) && [[ -d ${d[0]} ]]; then
		printf '%s\n' "${d[0]}$2"
	fi
}

# sender_limited_only ID: the run documents block ID wrote (JSON with steps[], in the directory
# it made with mktemp -d) exist, and every step that failed failed only as sender-limited.
sender_limited_only()
{
	local f docs=0

	while IFS= read -r -d '' f; do
		jq -e '.command == "run"' "$f" >/dev/null 2>&1 || continue
		docs=$((docs + 1))
		[[ $(jq '[.steps[] | select((.pass or .sender_limited) | not)] | length' "$f") == 0 ]] || return 1
	done < <(find "$LR_TMP/tmp-$1" -name '*.json' -print0)
	((docs > 0))
}

expect_config()
{
	local j

	j=$(out_file "$1" result.json)
	lr_check_cmd "config: result.json in the directory mktemp made" test -s "$j"
	lr_jvalid "$j"
	lr_check "config: steps in result.json" "$(lr_jget "$j" '.steps | length')" == 6
	lr_check "config: steps that passed (or fell short only as sender-limited)" \
		"$(lr_jget "$j" '[.steps[] | select(.pass or .sender_limited)] | length')" == 6
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

# run_block ID LABEL: the block in the clone, its output in $LR_TMP/ID.all; sets RC.
run_block()
{
	mkdir -m 0700 "$LR_TMP/tmp-$1"
	clone_files >"$LR_TMP/clone.before"
	lr_spawn "$1" env -C "$CLONE" PATH="$LR_TMP/bin:$PATH" TMPDIR="$LR_TMP/tmp-$1" \
		timeout -k 5 120 bash -e "$LR_TMP/blocks/$1.sh"
	RC=0
	lr_wait_pid "$LR_LAST_PID" 130 || RC=$?
	cat "$LR_TMP/$1.out" "$LR_TMP/$1.err" >"$LR_TMP/$1.all"
	lr_show_file "$LR_TMP/$1.all"
}

RAN=0
SKIPPED=()
BUGS=()
for id in "${IDS[@]}"; do
	f=$LR_TMP/blocks/$id.sh
	kind=${KIND[$id]}
	label=${WHERE[$id]}
	[[ $kind != quickstart ]] || label=$id
	LABEL[$id]=$label
	lr_check "$label: lines that run sudo" "$(grep -Ec '(^|[;&|(`[:space:]])sudo([[:space:]]|$)' "$f" || true)" == 0
	if [[ $kind == skip ]]; then
		SKIPPED+=("${WHERE[$id]}: ${REASON[$id]}")
		continue
	fi
	if [[ $kind == quickstart ]]; then
		lr_log "== ${WHERE[$id]}: quick start $id:"
	else
		lr_log "== ${WHERE[$id]} (test: $kind${ARGS[$id]:+ ${ARGS[$id]}}${KNOWN[$id]:+, known bug}):"
	fi
	sed 's/^/    /' "$f"
	if [[ $kind == quickstart ]]; then
		first=$(head -n 1 "$f")
		last=$(tail -n 1 "$f")
		lr_check_cmd "$id: starts with ./scripts/lab up TOPOLOGY" \
			grep -Eq '^\./scripts/lab up [a-z]+( |$)' <<<"$first"
		lr_check "$id: ends by taking its lab down" "$last" == "./scripts/lab down $(awk '{ print $3 }' <<<"$first")"
	fi
	if [[ $kind == lab ]]; then
		# shellcheck disable=SC2086 # the marker's words: a topology and its options
		if ! "$LR_LAB" up ${ARGS[$id]} >"$LR_TMP/$id.lab" 2>&1; then
			lr_show_file "$LR_TMP/$id.lab"
			lr_fail "$label: scripts/lab up ${ARGS[$id]}" "failed"
			continue
		fi
	fi
	run_block "$id"
	RAN=$((RAN + 1))
	# a block's linerate run exits 3 when a busy machine's sender fell short of a step's offered
	# rate (sender-limited, the default verdict, which test_configs tests): the commands worked,
	# and bash -e stopped the block before any lab down of its own, which this does instead
	if ((RC == 3)) && sender_limited_only "$id"; then
		lr_log "$label: exit code 3: only sender-limited steps failed here (a busy machine)"
		"$LR_LAB" down all >/dev/null || lr_fail "$label: scripts/lab down all" "failed"
		RC=0
	fi
	if [[ $kind == lab ]]; then
		"$LR_LAB" down "${ARGS[$id]%% *}" >/dev/null || lr_fail "$label: scripts/lab down" "failed"
	fi
	lr_check "$label: lrlab-* namespaces left" "$(lr_ns_list lrlab | wc -l)" == 0
	lr_check "$label: files left in the clone that git would show" "$(clone_new | paste -sd ' ' -)" == ""
	if [[ -n ${KNOWN[$id]} ]]; then
		if ((RC == 0)); then
			lr_fail "$label: known bug" "it runs now: take '; known bug (${KNOWN[$id]})' off its marker"
		else
			BUGS+=("${WHERE[$id]}: exit $RC, ${KNOWN[$id]}")
		fi
		continue
	fi
	lr_check "$label: exit code" "$RC" == 0
	# every receiver's summary, each loss-free
	recvs=$(grep -c 'linerate recv ' "$f" || true)
	if [[ $kind == quickstart ]] || ((recvs > 0)); then
		has "$id" '^  lost +0 +reordered 0 +duplicates 0' "$recvs"
		has "$id" '^  lost ' "$recvs"
	fi
	case $kind:$id in
	quickstart:host-to-container) expect_pair "$id" 1 ;;
	quickstart:container-to-container) expect_pair "$id" 4 ;;
	quickstart:round-trip) expect_rtt "$id" ;;
	quickstart:config) expect_config "$id" ;;
	quickstart:capture) expect_capture "$id" ;;
	quickstart:*) lr_fail "$id: a quick start this test knows" "unknown name (add its expectations to ${0##*/})" ;;
	esac
done
token=$CLONE/deploy/kubernetes/local/token
lr_check "kubernetes.md's token: mode" "$(stat -c %a "$token" 2>/dev/null || echo missing)" == 600
if [[ -n $GIT_BEFORE ]]; then
	lr_check "git status --porcelain of the repository, after the blocks" "$(git_status)" == "${GIT_BEFORE#x}"
fi
lr_log "sh blocks: $RAN ran, ${#SKIPPED[@]} skipped, ${#BUGS[@]} failed for a known bug"
for s in "${SKIPPED[@]}"; do
	lr_log "  skipped  $s"
done
for s in "${BUGS[@]}"; do
	lr_log "  known bug  $s"
done
lr_finish
