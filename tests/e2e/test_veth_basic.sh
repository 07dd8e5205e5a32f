#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One sender, one receiver, one veth pair: every frame sent is counted once, nothing lost.
#
#   ns lr-veth_basic-snd-PID              ns lr-veth_basic-rcv-PID
#   +-------------------------+          +-------------------------+
#   | linerate send (AF_XDP)  |          | linerate recv (XDP)     |
#   |   snd0 198.18.0.1/30    |<-veth--->|   rcv0 198.18.0.2/30    |
#   +-------------------------+          +-------------------------+
#
# Checks:
#   - recv --once --ready-file: the ready file appears, an XDP program is attached to rcv0
#   - send --count 20000 --rate 50kpps exits 0; recv --once exits 0 by itself
#   - tx.packets == 20000; rx.packets == 20000, rx.sent == 20000, lost 0, duplicates 0,
#     reordered 0, tail_settled true, flows 1; latency p50 > 0 and min <= p50 <= max
#   - rcv0's rx_packets delta (ip -s -j link) >= rx.packets
#   - 3 UDP datagrams to port 9 sent while recv is attached pass through XDP to the stack (Udp
#     NoPorts +3) and are counted as foreign; test frames are not: 3 <= foreign <= 10 and
#     delta - packets - foreign >= flows (end-of-test markers)
#   - no XDP program remains on rcv0 after recv exits
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COUNT=20000
lr_init
lr_pair_topology
lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 "$COUNT" --rate 50kpps
lr_check_exact "$COUNT" 1
lr_check_cmd "no XDP program left on rcv0 after recv exited" eval '! lr_xdp_attached "$RCV" rcv0'
lr_finish
