#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A receiver started with --once gives up when its sender fails: the README's quick starts, each
# with a sender that fails, end on their own and leave no XDP program behind.
#
#   veth     [P-veth-host] veth0 198.18.1.1 <--veth--> eth0 198.18.1.2 [P-veth-c1]
#   bridge   [P-bridge-c1] eth0 198.18.2.2 <--> vc1 -[br0 in P-bridge-host]- vc2 <--> eth0 198.18.2.3 [P-bridge-c2]
#   pair     [lr-idle-snd-PID] snd0 198.18.0.1/30 <--veth--> rcv0 198.18.0.2/30 [lr-idle-rcv-PID]
#   (scripts/lab builds the first two with a prefix P of this test's own)
#
# Every README quick start that starts `recv --once` or `reflect --once` runs as written but for
# three things: the lab's prefix is this test's, every `linerate send` is refused (--size 1, bad
# input: exit 2 before a frame goes out), and the last line (the lab down) runs after the checks.
# host-to-container keeps the default idle limit (60 s before the first frame); the others pass
# --idle-timeout 3s to keep the test short.
#
# Checks:
#   - README.md has a quick start with `--once`, and host-to-container is one of them
#   - each block ends within 70 s (the default's 60 s and a few to attach); every receiver in it
#     exits 1, and prints as its last line why it stopped: no test frame or marker since the start
#   - with the default, the receiver waited at least 60 s (it did not give up early)
#   - no XDP program on any interface a receiver of the block used, before the lab goes down
# Then a sender killed mid-test (frames came, no marker ever will), recv --once --idle-timeout 2s
# --json: exit 1 within 1.5..15 s of the kill; the last line says "after the last one"; the JSON has
# "stopped": "idle", an error saying the same, the frames that came; no XDP program on rcv0. And
# the same sender's markers in time (--idle-timeout 10s): "stopped": "markers", error null, exit 0.
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

README=$LR_REPO/README.md
PFX=lri$$

lr_init
lr_require_cmds awk grep sed date env
lr_lab_prefix "$PFX"

# A directory laid out like the clone, as test_readme makes it.
CLONE=$LR_TMP/clone
mkdir -p "$CLONE/build" "$LR_TMP/bin" "$LR_TMP/blocks"
ln -s "$LINERATE" "$CLONE/build/linerate"
ln -s "$LR_REPO/scripts" "$CLONE/scripts"
ln -s "$LR_REPO/configs" "$CLONE/configs"
if ! command -v sudo >/dev/null 2>&1; then
	printf '#!/bin/sh\n# for root, sudo CMD runs CMD\nexec "$@"\n' >"$LR_TMP/bin/sudo"
	chmod 0755 "$LR_TMP/bin/sudo"
fi

# The quick starts: one file per name in $LR_TMP/blocks, the names on stdout (test_readme checks
# their markers; here a block is what follows its marker up to the closing fence).
awk -v dir="$LR_TMP/blocks" '
	/^<!-- quickstart: [a-z0-9-]+ -->$/ { name = $3; state = 1; next }
	state == 1 { file = dir "/" name ".sh"; printf "" >file; state = 2; next }
	state == 2 && $0 == "```" { close(file); print name; state = 0; next }
	state == 2 { print >>file }' "$README" >"$LR_TMP/names"

# failing NAME SHORT: the block NAME rewritten into $LR_TMP/NAME.run (all but its last line) and
# $LR_TMP/NAME.down (its last line); with SHORT, every receiver gets --idle-timeout 3s.
failing()
{
	local f=$LR_TMP/blocks/$1.sh short=$2

	# shellcheck disable=SC2016 # $! and $? are the block's
	sed -e "s/lrlab-/$PFX-/g" \
		-e "s#^\(sudo \)\?\(\./scripts/lab \(up\|down\) [a-z]*\)#\1\2 --prefix $PFX#" \
		-e '/linerate send /s/$/ --size 1/' \
		-e 's/^wait$/wait $!; echo "receiver exit code $?"/' \
		${short:+-e 's/ --once / --once --idle-timeout 3s /'} "$f" >"$LR_TMP/$1.all.sh"
	head -n -1 "$LR_TMP/$1.all.sh" >"$LR_TMP/$1.run"
	tail -n 1 "$LR_TMP/$1.all.sh" >"$LR_TMP/$1.down"
}

NAMES=()
while read -r name; do
	grep -Eq 'linerate (recv|reflect) .*--once' "$LR_TMP/blocks/$name.sh" && NAMES+=("$name")
done <"$LR_TMP/names"
lr_check "quick starts with --once in README.md" "${#NAMES[@]}" ">" 0
lr_check_cmd "host-to-container is one of them (the default's case)" \
	grep -qx host-to-container <(printf '%s\n' "${NAMES[@]}")

for name in "${NAMES[@]}"; do
	short=1
	[[ $name == host-to-container ]] && short=
	failing "$name" "$short"
	lr_log "== quick start $name, its sender refused${short:+, --idle-timeout 3s}:"
	sed 's/^/    /' "$LR_TMP/$name.run"
	t0=$(date +%s%N)
	lr_spawn "$name" env -C "$CLONE" PATH="$LR_TMP/bin:$PATH" timeout -k 5 120 bash "$LR_TMP/$name.run"
	rc=0
	lr_wait_pid "$LR_LAST_PID" 130 || rc=$?
	secs=$((($(date +%s%N) - t0) / 1000000000))
	cat "$LR_TMP/$name.out" "$LR_TMP/$name.err" >"$LR_TMP/$name.log"
	lr_show_file "$LR_TMP/$name.log"
	lr_check "$name: the block ended on its own (timeout's 124 otherwise)" "$rc" != 124
	lr_check "$name: seconds the block took" "$secs" "<=" 70
	rcvs=$(grep -Ec 'linerate (recv|reflect) .*--once' "$LR_TMP/$name.run")
	lr_check "$name: receivers that exited 1" "$(grep -c '^receiver exit code 1$' "$LR_TMP/$name.log" || true)" \
		== "$rcvs"
	lr_check "$name: receivers that said they gave up waiting for the first frame" \
		"$(grep -Ec '^linerate (recv|reflect): no test frame or end-of-test marker in the [0-9.]+ s since the start' \
			"$LR_TMP/$name.log" || true)" == "$rcvs"
	if [[ -z $short ]]; then
		lr_check "$name: the default waited 60 s before giving up (seconds)" "$secs" ">=" 60
		lr_check_cmd "$name: and says 60.0 s" grep -q 'in the 60.0 s since the start' "$LR_TMP/$name.log"
	fi
	# every receiver's namespace and interface, from its command line
	while read -r ns ifname; do
		lr_check_cmd "$name: no XDP program left on $ifname in $ns" lr_xdp_absent "$ns" "$ifname"
	done < <(grep -E 'linerate (recv|reflect) .*--once' "$LR_TMP/$name.run" |
		sed -E 's/.* -i ([^ ]+) .*--netns ([^ ]+).*/\2 \1/' | sort -u)
	env -C "$CLONE" PATH="$LR_TMP/bin:$PATH" timeout -k 5 60 bash "$LR_TMP/$name.down" >/dev/null ||
		lr_fail "$name: the lab went down" "$(cat "$LR_TMP/$name.down")"
done

# mid_test NAME KILL IDLE: a sender of 10000 frames at 5 kpps (2 s) and recv --once --idle-timeout IDLE; with
# KILL the sender is killed once frames arrive, so the markers never come.
lr_pair_topology
mid_test()
{
	local name=$1 kill=$2 idle=$3 j=$LR_TMP/$1.json pid spid t0 rc ms

	if [[ -n $kill ]]; then
		lr_log "== $name: recv --once --idle-timeout $idle, the sender killed once frames arrive"
	else
		lr_log "== $name: recv --once --idle-timeout $idle, the sender runs to its end"
	fi
	rm -f "$LR_TMP/ready.$name"
	lr_spawn "recv.$name" ip netns exec "$RCV" "$LINERATE" recv -i rcv0 --once --idle-timeout "$idle" -q \
		--json "$j" --ready-file "$LR_TMP/ready.$name"
	pid=$LR_LAST_PID
	lr_wait_for_file "$LR_TMP/ready.$name" 15 "$pid" || lr_die "$name: recv never became ready"
	lr_spawn "send.$name" ip netns exec "$SND" "$LINERATE" send -i snd0 --dst-ip 198.18.0.2 --count 10000 \
		--rate 5k -q
	spid=$LR_LAST_PID
	if [[ -n $kill ]]; then
		# frames arriving (rcv0's own counter), however long a busy machine took to start the sender
		local deadline=$(($(lr_now_ns) + 20000000000))
		until (($(ip -n "$RCV" -j -s link show rcv0 | jq '.[0].stats64.rx.packets') > 0)); do
			(($(lr_now_ns) < deadline)) || break
			sleep 0.05
		done
		sleep 0.3
		exec 3>&2 2>/dev/null
		kill -KILL "$spid"
		lr_wait_pid "$spid" 10 || true
		exec 2>&3 3>&-
	else
		lr_wait_pid "$spid" 20 || lr_fail "$name: the sender exit code" "$?"
	fi
	t0=$(date +%s%N)
	rc=0
	lr_wait_pid "$pid" 30 || rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	lr_show_file "$LR_TMP/recv.$name.err"
	lr_jvalid "$j"
	lr_check_cmd "$name: no XDP program left on rcv0" lr_xdp_absent "$RCV" rcv0
	if [[ -n $kill ]]; then
		lr_check "$name: recv exit code" "$rc" == 1
		lr_check "$name: ms from the kill to the exit" "$ms" ">=" 1500
		lr_check "$name: ms from the kill to the exit (2 s, and room for a busy machine)" "$ms" "<" 15000
		lr_check_cmd "$name: the last stderr line says why it stopped" \
			grep -q '^linerate recv: no test frame or end-of-test marker for 2.0 s after the last one' \
			<(tail -n 1 "$LR_TMP/recv.$name.err")
		lr_check "$name: JSON stopped" "$(lr_jget "$j" .stopped)" == idle
		lr_check_cmd "$name: JSON error says the same" grep -q 'after the last one' <(jq -r .error "$j")
		lr_check "$name: JSON counts what came before (some frames; no rate assumed)" "$(lr_jget "$j" .rx.packets)" ">" 0
	else
		lr_check "$name: recv exit code" "$rc" == 0
		lr_check "$name: JSON stopped" "$(lr_jget "$j" .stopped)" == markers
		lr_check "$name: JSON error" "$(jq -r .error "$j")" == null
		lr_check "$name: JSON frames" "$(lr_jget "$j" .rx.packets)" == 10000
		lr_check "$name: JSON frames the markers announced" "$(lr_jget "$j" .rx.sent)" == 10000
	fi
}
mid_test killed 1 2s
# (the limit holds before the first frame too: 10 s, for a sender a busy machine starts slowly)
mid_test complete "" 10s
lr_finish
