#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every send engine against every receive engine: exact counts, nothing lost, on one veth pair.
#
#   ns lr-engine_matrix-snd-PID                 ns lr-engine_matrix-rcv-PID
#   +-------------------------------+          +-------------------------------+
#   | linerate send                 |          | linerate recv                 |
#   |   --engine afxdp | packet     |          |   --engine xdp | packet       |
#   |   snd0 198.18.0.1/30          |<-veth--->|   rcv0 198.18.0.2/30          |
#   +-------------------------------+          +-------------------------------+
#
# Checks, for each of afxdp->xdp, afxdp->packet, packet->xdp, packet->packet:
#   - send --count 5000 --flows 3 --rate 20kpps and recv --once both exit 0
#   - the JSON names the engines asked for; tx.packets == rx.packets == rx.sent == 5000,
#     lost 0, duplicates 0, reordered 0, tail_settled, 3 flows, latency p50 > 0
#   - an XDP program is attached during the run with the xdp receiver, none with the packet one
#   - the veth's rx_packets delta covers the test frames, foreign traffic passes untouched
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COUNT=5000
FLOWS=3
lr_init
lr_pair_topology
for LR_SEND_ENGINE in afxdp packet; do
	for LR_RECV_ENGINE in xdp packet; do
		export LR_SEND_ENGINE LR_RECV_ENGINE
		lr_log "== send --engine $LR_SEND_ENGINE, recv --engine $LR_RECV_ENGINE"
		lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 "$COUNT" --flows "$FLOWS" --rate 20kpps
		lr_check_exact "$COUNT" "$FLOWS"
		lr_check "send mode for $LR_SEND_ENGINE" "$(lr_jget "$LR_TMP/send.json" .mode)" == \
			"$([[ $LR_SEND_ENGINE == afxdp ]] && echo copy || echo tpacket_v2)"
		lr_check "recv mode for $LR_RECV_ENGINE" "$(lr_jget "$LR_TMP/recv.json" .mode)" == \
			"$([[ $LR_RECV_ENGINE == xdp ]] && echo native || echo tpacket_v3)"
	done
done
lr_finish
