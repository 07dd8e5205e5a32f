#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Deterministic loss: a router drops every 50th test data frame; recv must count exactly those.
#
#   ns ...-snd-PID          ns ...-rtr-PID (ip_forward=1)              ns ...-rcv-PID
#   +----------------+      +-----------------------------------+      +----------------+
#   | linerate send  |      | nft forward: udp dport 7447,      |      | linerate recv  |
#   |  --flows 4     |      |  probe magic 0x4c52 (data only):  |      |  --once        |
#   |                |      |  numgen inc mod 50 == 0 drop      |      |                |
#   | s0 198.18.0.1  |<---->| r0 198.18.0.2      r1 198.18.0.5  |<---->| c0 198.18.0.6  |
#   +----------------+ veth +-----------------------------------+ veth +----------------+
#   snd: 198.18.0.4/30 via 198.18.0.2     rcv: 198.18.0.0/30 via 198.18.0.5
#   End-of-test markers (magic 0x4c45) are never dropped, so the tail is always settled.
#
# Checks:
#   - send --count 10000 --flows 4 --rate 20kpps to 198.18.0.6 exits 0, tx.packets == 10000
#     (default dst MAC = the veth peer, i.e. the router's r0)
#   - the router forwarded all 10000 data frames (nft counter before the drop rule)
#   - nft drop counter == 200 == ceil(10000/50)
#   - rx.lost == 200 == nft drop counter; tx.packets - rx.packets == rx.lost
#   - rx.reordered == 0, rx.duplicates == 0, rx.sent == 10000, rx.tail_settled true, flows 4
#   - at least one end-of-test marker per flow crossed the router
#   - all of the above with the XDP receiver and again with the AF_PACKET receiver
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COUNT=10000
FLOWS=4
EVERY=50
lr_init
lr_require_cmds nft
lr_router_topology

# The XDP receiver drops what it counts; the AF_PACKET one only watches. Both must count the same.
for LR_RECV_ENGINE in xdp packet; do
	export LR_RECV_ENGINE
	lr_log "== recv --engine $LR_RECV_ENGINE"
	lr_router_drop "$EVERY"
	lr_exchange "$SND" s0 "$RCV" c0 198.18.0.6 "$COUNT" --flows "$FLOWS" --rate 20kpps

	S=$LR_TMP/send.json
	R=$LR_TMP/recv.json
	WANT=$(((COUNT + EVERY - 1) / EVERY))
	DROPPED=$(lr_router_count lr_drop)
	lr_log "nft counters: data $(lr_router_count lr_data), dropped $DROPPED, eot $(lr_router_count lr_eot)"
	lr_log "router r0 stats: $(ip -n "$RTR" -s -j link show dev r0 | jq -c '.[0].stats64.rx')"
	lr_check "send exit code" "$SEND_RC" == 0
	lr_check "recv --once exit code" "$RECV_RC" == 0
	lr_jvalid "$S"
	lr_jvalid "$R"
	TXP=$(lr_jget "$S" .tx.packets)
	RXP=$(lr_jget "$R" .rx.packets)
	LOST=$(lr_jget "$R" .rx.lost)
	lr_check "tx.packets" "$TXP" == "$COUNT"
	lr_check "data frames forwarded to the drop rule (nft counter)" "$(lr_router_count lr_data)" == "$COUNT"
	lr_check "nft drop counter == ceil($COUNT/$EVERY)" "$DROPPED" == "$WANT"
	lr_check "rx.lost == nft drop counter" "$LOST" == "$DROPPED"
	lr_check "rx.packets" "$RXP" == $((COUNT - WANT))
	if lr_is_num "$TXP" && lr_is_num "$RXP"; then
		lr_check "tx.packets - rx.packets == rx.lost" $((TXP - RXP)) == "$LOST"
	fi
	lr_check "rx.reordered" "$(lr_jget "$R" .rx.reordered)" == 0
	lr_check "rx.duplicates" "$(lr_jget "$R" .rx.duplicates)" == 0
	lr_check "rx.sent (from end-of-test markers)" "$(lr_jget "$R" .rx.sent)" == "$COUNT"
	lr_check "rx.tail_settled" "$(jq -r '.rx.tail_settled' "$R" 2>/dev/null)" == true
	lr_check "rx.flows" "$(lr_jget "$R" .rx.flows)" == "$FLOWS"
	lr_check "end-of-test markers forwarded (nft counter) >= flows" "$(lr_router_count lr_eot)" ">=" "$FLOWS"
done
lr_finish
