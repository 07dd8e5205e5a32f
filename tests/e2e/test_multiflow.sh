#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sixteen flows over one veth pair, with linerate entering the namespaces itself (--netns).
#
#   ns lr-multiflow-snd-PID               ns lr-multiflow-rcv-PID
#   +--------------------------+          +--------------------------+
#   | linerate send --netns    |          | linerate recv --netns    |
#   |   --flows 16             |          |   --once                 |
#   |   snd0 198.18.0.1/30     |<-veth--->|   rcv0 198.18.0.2/30     |
#   +--------------------------+          +--------------------------+
#
# Checks:
#   - send/recv run from the root namespace with --netns NS and find their interfaces there
#   - send --count 20000 --flows 16 --rate 50kpps: tx.packets == 20000, JSON flows == 16
#   - rx.packets == rx.sent == 20000, lost 0, duplicates 0, reordered 0, tail_settled true,
#     rx.flows == 16 (end-of-test markers for all 16 flows arrived), latency p50 > 0
#   - rcv0's rx_packets delta >= rx.packets; 3 foreign UDP datagrams reach the stack
#     and count as foreign, test frames do not
#   - no XDP program remains on rcv0 after recv exits
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COUNT=20000
FLOWS=16
lr_init
lr_pair_topology
LR_USE_NETNS_OPT=1
lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 "$COUNT" --flows "$FLOWS" --rate 50kpps
lr_check_exact "$COUNT" "$FLOWS"
lr_check_cmd "no XDP program left on rcv0 after recv exited" lr_xdp_absent "$RCV" rcv0
lr_finish
