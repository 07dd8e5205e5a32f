#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A receiver whose interface disappears says so within a second, writes what it counted and exits 1.
#
#   ns lr-iface_gone-snd-PID             ns lr-iface_gone-rcv-PID
#   +-------------------------+          +------------------------------+
#   | linerate send           |          | linerate recv (xdp | packet) |
#   |   snd0 198.18.0.1/30    |<-veth--->|   rcv0 198.18.0.2/30         |
#   +-------------------------+          +------------------------------+
#   (the pair is made again for each case)
#
# Cases: `ip link del rcv0` under recv --duration 30; the same with --once (no duration, so it
# would wait forever); the sender's namespace deleted (which takes the veth pair with it); each
# with the xdp and the packet engine. Checks for each:
#   - recv exits with code 1 within 10 s of the deletion (not at the end of --duration 30)
#   - its last stderr line says the interface disappeared; its JSON is valid, has an "error"
#     naming the interface, and counts the frames a sender sent before it was killed (so no
#     end-of-test marker came, and --once would wait forever): more than none, no more than
#     rcv0's kernel counter read after the sender stopped, as many as its summary says
# And `linerate run` whose receiving interface is deleted in the middle of a sweep: exit 1, one
# line naming the interface, the finished steps written.
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

lr_init
lr_require_cmds date

# case_gone NAME ENGINE HOW [recv args...]: HOW is "link" (ip link del rcv0) or "netns" (delete SND)
case_gone()
{
	local name=$1 engine=$2 how=$3 pid spid t0 t1 rc ms kern j=$LR_TMP/$1.json

	shift 3
	lr_pair_topology
	lr_log "== $name: recv -e $engine $*, then the interface goes ($how)"
	rm -f "$LR_TMP/ready.$name"
	lr_spawn "recv.$name" ip netns exec "$RCV" "$LINERATE" recv -i rcv0 -e "$engine" -q --json "$j" \
		--ready-file "$LR_TMP/ready.$name" "$@"
	pid=$LR_LAST_PID
	lr_wait_for_file "$LR_TMP/ready.$name" 15 "$pid" || lr_die "$name: recv never became ready"
	lr_spawn "send.$name" ip netns exec "$SND" "$LINERATE" send -i snd0 --dst-ip 198.18.0.2 --duration 20 \
		--rate 5k -q
	spid=$LR_LAST_PID
	sleep 0.8
	# killed, so no end-of-test marker ever comes (--once would wait forever), and nothing of
	# ours holds the sender's namespace open any more: deleting it destroys the veth pair
	exec 3>&2 2>/dev/null
	kill -KILL "$spid"
	lr_wait_pid "$spid" 10 || true
	exec 2>&3 3>&-
	# what the kernel counted on rcv0, the traffic stopped: recv cannot have counted more frames
	sleep 0.2
	kern=$(ip -n "$RCV" -j -s link show rcv0 | jq '.[0].stats64.rx.packets')
	t0=$(date +%s%N)
	if [[ $how == link ]]; then
		ip -n "$RCV" link del rcv0
	else
		ip netns del "$SND"
	fi
	rc=0
	lr_wait_pid "$pid" 10 || rc=$?
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
	lr_show_file "$LR_TMP/recv.$name.err"
	lr_check "$name: recv exit code" "$rc" == 1
	# promptly, not at the end of --duration 30 (or never, with --once); 10 s leaves room for a busy machine
	lr_check "$name: recv noticed within 10 s (ms)" "$ms" "<" 10000
	lr_check_cmd "$name: the last stderr line says the interface disappeared" \
		grep -q 'rcv0 disappeared' <(tail -n 1 "$LR_TMP/recv.$name.err")
	lr_jvalid "$j"
	lr_check_cmd "$name: JSON error names the interface" grep -q 'rcv0 disappeared' <(jq -r .error "$j")
	# what came before: some frames (not a blank document), no more than the kernel saw
	# (no rate is assumed: on a busy machine 0.8 s at 5 kpps may be far fewer than 4000 frames)
	lr_check "$name: JSON counts what came before (> 0 frames)" "$(lr_jget "$j" .rx.packets)" ">" 0
	lr_check "$name: JSON counts no more than rcv0's kernel counter ($kern)" "$(lr_jget "$j" .rx.packets)" "<=" "${kern:-0}"
	lr_check "$name: JSON rx.packets == the summary's received" "$(lr_jget "$j" .rx.packets)" == \
		"$(sed -n 's/^  received  \([0-9]*\) frames.*/\1/p' "$LR_TMP/recv.$name.err")"
	ip netns del "$RCV" 2>/dev/null || true
	ip netns del "$SND" 2>/dev/null || true
}

case_gone xdp-link-duration xdp link --duration 30
case_gone xdp-link-once xdp link --once
case_gone xdp-peer-netns xdp netns --once
case_gone packet-link-duration packet link --duration 30
case_gone packet-peer-netns packet netns --once

lr_log "== run: the receiving interface goes in the middle of a sweep"
lr_pair_topology
cat >"$LR_TMP/gone.ini" <<EOF
[test]
duration = 1s
warmup = 0
repeat = 4
[tx]
netns = $SND
interface = snd0
dst_ip = 198.18.0.2
rate = 5k
[rx]
netns = $RCV
interface = rcv0
EOF
lr_spawn run "$LINERATE" run "$LR_TMP/gone.ini" --json "$LR_TMP/run.json"
PID=$LR_LAST_PID
# the first step measured (its progress line), then the interface goes, whenever that is
lr_wait_log "$LR_TMP/run.err" "linerate run: step 1" 30 || lr_die "run's first step never finished"
ip -n "$RCV" link del rcv0
RC=0
lr_wait_pid "$PID" 20 || RC=$?
lr_show_file "$LR_TMP/run.out"
lr_show_file "$LR_TMP/run.err"
lr_check "run exit code" "$RC" == 1
# rcv0's, or snd0's (its veth peer, gone with it) when the sender's next step starts first
lr_check "run: one line names the vanished interface" \
	"$(grep -cE '^linerate run: \[(rx\] interface rcv0|tx\] interface snd0) disappeared' "$LR_TMP/run.err")" == 1
lr_jvalid "$LR_TMP/run.json"
lr_check "run: the finished step is written" "$(jq '.steps | length' "$LR_TMP/run.json")" ">=" 1
lr_finish
