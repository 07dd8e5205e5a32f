#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The README's quick starts run as written: every block marked <!-- quickstart: NAME --> runs
# verbatim, as root, and prints what the README says it prints.
#
#   veth     [lrlab-veth-host] veth0 198.18.1.1 <--veth--> eth0 198.18.1.2 [lrlab-veth-c1]
#   bridge   [lrlab-bridge-c1] eth0 198.18.2.2 <--> vc1 -[br0 in lrlab-bridge-host]- vc2 <--> eth0 198.18.2.3 [lrlab-bridge-c2]
#   (scripts/lab builds them as the blocks say, with the default prefix lrlab as a user would: the
#    test refuses to run while any lrlab-* namespace exists, and its trap takes every lrlab lab down)
#
# Each block runs under `bash -e` in a directory laid out like the clone: build/linerate is the
# binary under test, scripts/ and configs/ are the clone's. `sudo` is the real one, or where there is
# none a stand-in that runs the command, as sudo does for root.
#
# Checks:
#   - README.md has at least one quick start; each marker is followed by a ```sh block; no two
#     blocks share a name; each block starts with `sudo ./scripts/lab up TOPOLOGY` and ends with
#     `sudo ./scripts/lab down TOPOLOGY`; this test knows what each block must print (a new block
#     needs its expectations below)
#   - each block exits 0 within 120 s, and leaves no lrlab-* namespace behind
#   - every receiver a block starts prints its summary: as many "lost 0 reordered 0 duplicates 0"
#     lines as the block has `linerate recv` commands, and no other loss line
#   - host-to-container, container-to-container: the sender's summary says 50000 frames sent, the
#     receiver's 50000 received and 50000 announced by the markers of every flow (1, then 4)
#   - round-trip: send --rtt says 50000 sent, forward and return 50000 with 0 lost, an RTT p50 > 0;
#     the reflector (--once) reflected 50000 frames and 5 markers
#   - config: the sweep's 6 steps in result.json, every one passed with 0 lost
#   - capture: sent.pcap holds 1000 frames (the sender says so, tcpdump prints 3 of them as the
#     probe's 18-byte UDP payload); both receivers count 1000 frames, markers of 1/1 flows
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

# A directory laid out like the clone.
CLONE=$LR_TMP/clone
mkdir -p "$CLONE/build" "$LR_TMP/bin" "$LR_TMP/blocks"
ln -s "$LINERATE" "$CLONE/build/linerate"
ln -s "$LR_REPO/scripts" "$CLONE/scripts"
ln -s "$LR_REPO/configs" "$CLONE/configs"
if ! command -v sudo >/dev/null 2>&1; then
	printf '#!/bin/sh\n# for root, sudo CMD runs CMD\nexec "$@"\n' >"$LR_TMP/bin/sudo"
	chmod 0755 "$LR_TMP/bin/sudo"
	lr_log "no sudo here: a stand-in runs each command as root"
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
	has "$1" '^  reflected 50000 data frames and 5 markers on 1 flow ' 1
}

expect_config()
{
	local j=$CLONE/result.json

	lr_jvalid "$j"
	lr_check "config: steps in result.json" "$(lr_jget "$j" '.steps | length')" == 6
	lr_check "config: steps that passed" "$(lr_jget "$j" '[.steps[] | select(.pass == true)] | length')" == 6
	lr_check "config: frames lost over all steps" "$(lr_jget "$j" '[.steps[].rx.lost] | add')" == 0
	has "$1" '^linerate run: step 6 ' 1
}

expect_capture()
{
	has "$1" 'pcap +sent\.pcap: 1000 frames written' 1
	has "$1" 'UDP, length 18$' 3
	has "$1" '^  received +1000 frames' 2
	has "$1" '^  sent +1000 frames \(end-of-test markers of 1/1 flows\)' 2
	lr_check_cmd "capture: sent.pcap is there" test -s "$CLONE/sent.pcap"
}

for name in "${BLOCKS[@]}"; do
	f=$LR_TMP/blocks/$name.sh
	lr_log "== quick start $name:"
	sed 's/^/    /' "$f"
	first=$(head -n 1 "$f")
	last=$(tail -n 1 "$f")
	lr_check_cmd "$name: starts with sudo ./scripts/lab up TOPOLOGY" \
		grep -Eq '^sudo \./scripts/lab up [a-z]+( |$)' <<<"$first"
	lr_check "$name: ends by taking its lab down" "$last" == "sudo ./scripts/lab down $(awk '{ print $4 }' <<<"$first")"
	lr_spawn "$name" env -C "$CLONE" PATH="$LR_TMP/bin:$PATH" timeout -k 5 120 bash -e "$f"
	rc=0
	lr_wait_pid "$LR_LAST_PID" 130 || rc=$?
	cat "$LR_TMP/$name.out" "$LR_TMP/$name.err" >"$LR_TMP/$name.all"
	lr_show_file "$LR_TMP/$name.all"
	lr_check "$name: exit code" "$rc" == 0
	lr_check "$name: lrlab-* namespaces left" "$(lr_ns_list lrlab | wc -l)" == 0
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
lr_finish
