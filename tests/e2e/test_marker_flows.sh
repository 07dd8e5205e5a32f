#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# End-of-test markers for every flow, whatever the flow count and engine, through a lossy router.
#
#   ns ...-snd-PID          ns ...-rtr-PID (ip_forward=1)              ns ...-rcv-PID
#   +----------------+      +-----------------------------------+      +----------------+
#   | linerate send  |      | nft forward: udp dport 7447,      |      | linerate recv  |
#   |  --engine E    |      |  probe magic 0x4c52 (data only):  |      |  --once (XDP)  |
#   |  --flows F     |      |  numgen inc mod 97 == 0 drop      |      |                |
#   | s0 198.18.0.1  |<---->| r0 198.18.0.2      r1 198.18.0.5  |<---->| c0 198.18.0.6  |
#   +----------------+ veth +-----------------------------------+ veth +----------------+
#   snd: 198.18.0.4/30 via 198.18.0.2     rcv: 198.18.0.0/30 via 198.18.0.5
#
# A worker's marker burst holds one marker per flow it owns: more than an AF_XDP TX ring's 2048
# slots past 2048 flows, whose all-or-nothing reservation once sent none of them (and exited 0).
# Markers (magic 0x4c45) are never dropped, so every flow must settle.
#
# Cases: flows 1, 2047, 2048, 2049, 4096, 65536 x engines live, afxdp, packet. Each checks:
#   - send exits 0 and tx.packets == COUNT; tx.eot_markers >= flows (one round at least)
#   - nft drop counter == ceil(COUNT/97), rx.lost == that counter exactly
#   - rx.sent == tx.packets, rx.tail_settled true, rx.flows == flows (every flow's marker came)
#   - rx.flows_eot == flows, rx.reordered == 0, rx.duplicates == 0
#   - recv --once ends on the last flow's marker, before its --duration 30 (65536 flows are
#     announced as 0 in the marker's 16 bits: read as none, recv waited for the duration)
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

EVERY=97
FLOW_CASES=${LR_MARKER_FLOWS:-"1 2047 2048 2049 4096 65536"}
ENGINES=${LR_MARKER_ENGINES:-"live afxdp packet"}
lr_init
lr_require_cmds nft ethtool
lr_router_topology
# live sends XDP frames, which a veth takes only when its peer runs XDP or GRO
ip netns exec "$RTR" ethtool -K r0 gro on >/dev/null || lr_die "cannot switch GRO on for r0"

S=$LR_TMP/send.json
R=$LR_TMP/recv.json
export LR_RECV_ENGINE=xdp
for LR_SEND_ENGINE in $ENGINES; do
	export LR_SEND_ENGINE
	for FLOWS in $FLOW_CASES; do
		# a few frames per flow, at least 3000 in all: bounded time, losses in every case
		COUNT=$((FLOWS * 2 > 3000 ? FLOWS * 2 : 3000))
		lr_log "== send --engine $LR_SEND_ENGINE --flows $FLOWS --count $COUNT"
		lr_router_drop "$EVERY"
		lr_exchange "$SND" s0 "$RCV" c0 198.18.0.6 "$COUNT" --flows "$FLOWS" --rate 50kpps
		WANT=$(((COUNT + EVERY - 1) / EVERY))
		DROPPED=$(lr_router_count lr_drop)
		C="[$LR_SEND_ENGINE, $FLOWS flows]"
		lr_log "nft counters: data $(lr_router_count lr_data), dropped $DROPPED, eot $(lr_router_count lr_eot)"
		lr_check "$C send exit code" "$SEND_RC" == 0
		lr_check "$C recv --once exit code" "$RECV_RC" == 0
		lr_jvalid "$S"
		lr_jvalid "$R"
		TXP=$(lr_jget "$S" .tx.packets)
		lr_check "$C send JSON engine" "$(lr_jget "$S" .engine)" == "$LR_SEND_ENGINE"
		lr_check "$C tx.packets" "$TXP" == "$COUNT"
		lr_check "$C tx.eot_markers >= flows" "$(lr_jget "$S" .tx.eot_markers)" ">=" "$FLOWS"
		lr_check "$C nft drop counter == ceil($COUNT/$EVERY)" "$DROPPED" == "$WANT"
		lr_check "$C rx.lost == nft drop counter" "$(lr_jget "$R" .rx.lost)" == "$DROPPED"
		lr_check "$C rx.sent == tx.packets" "$(lr_jget "$R" .rx.sent)" == "$TXP"
		lr_check "$C rx.tail_settled" "$(jq -r '.rx.tail_settled' "$R" 2>/dev/null)" == true
		lr_check "$C rx.flows" "$(lr_jget "$R" .rx.flows)" == "$FLOWS"
		lr_check "$C rx.flows_eot (flows whose marker came)" "$(lr_jget "$R" .rx.flows_eot)" == "$FLOWS"
		lr_check "$C rx.reordered" "$(lr_jget "$R" .rx.reordered)" == 0
		lr_check "$C rx.duplicates" "$(lr_jget "$R" .rx.duplicates)" == 0
		# --once ends when every announced flow has its marker, not at --duration 30
		lr_check "$C recv --once ended before its 30 s duration" \
			"$(jq -r '.duration_s < 25' "$R" 2>/dev/null)" == true
	done
done
lr_finish
