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
#   - every document says "schema": 8
#   - one result codec on every path: `linerate run` over the same pair at the same rate (its
#     receiver in a child process, its result sent back as a JSON message) writes a step whose
#     rx, rx.device, rx.per_queue[], latency_ns, tx, tx.per_queue[] and tx.device have exactly
#     the keys of recv's and send's, and equal values where those are deterministic (lost,
#     duplicates, reordered, tail_settled, flows, markers, queues, pcap; the tx mode)
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COUNT=20000
lr_init
lr_pair_topology
lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 "$COUNT" --rate 50kpps
lr_check_exact "$COUNT" 1
lr_check_cmd "no XDP program left on rcv0 after recv exited" lr_xdp_absent "$RCV" rcv0

S=$LR_TMP/send.json
R=$LR_TMP/recv.json
J=$LR_TMP/run.json
# sender_limited = pass: a busy machine's sender may fall short of the paced rate; the verdict is
# tested in test_throughput and test_configs, not here
cat >"$LR_TMP/same.ini" <<EOF
[test]
duration = 400ms
warmup = 0
sender_limited = pass
[tx]
netns = $SND
interface = snd0
dst_ip = 198.18.0.2
rate = 50k
[rx]
netns = $RCV
interface = rcv0
EOF
RUN_RC=0
timeout -k 5 60 "$LINERATE" run "$LR_TMP/same.ini" -q --json "$J" >"$LR_TMP/run.out" 2>"$LR_TMP/run.err" || RUN_RC=$?
lr_show_file "$LR_TMP/run.err"
lr_check "run exit code" "$RUN_RC" == 0
lr_jvalid "$J"
for f in "$S" "$R" "$J"; do
	lr_check "$(basename "$f") schema" "$(lr_jget "$f" .schema)" == 8
done

# same_keys WHAT EXPR_A FILE_A EXPR_B FILE_B: the two objects have the same set of keys
same_keys()
{
	lr_check "$1: the same keys" "$(jq -c "$2 | keys" "$3" 2>&1)" == "$(jq -c "$4 | keys" "$5" 2>&1)"
}
same_keys "recv .rx, run step .rx" .rx "$R" '.steps[0].rx' "$J"
same_keys "recv .rx.device, run step" .rx.device "$R" '.steps[0].rx.device' "$J"
same_keys "recv .rx.per_queue[0], run step" '.rx.per_queue[0]' "$R" '.steps[0].rx.per_queue[0]' "$J"
same_keys "recv .latency_ns, run step" .latency_ns "$R" '.steps[0].latency_ns' "$J"
same_keys "send .tx, run step .tx" .tx "$S" '.steps[0].tx' "$J"
same_keys "send .tx.per_queue[0], run step" '.tx.per_queue[0]' "$S" '.steps[0].tx.per_queue[0]' "$J"
same_keys "send .tx.device, run step" .tx.device "$S" '.steps[0].tx.device' "$J"
lr_check "recv and run step: active_s is a number" \
	"$(jq -r '.active_s | type' "$R")/$(jq -r '.steps[0].active_s | type' "$J")" == number/number
DET='{lost, duplicates, reordered, tail_settled, flows, flows_eot, flows_announced, eot_markers, bad_flow,
	ring_drops, pcap, queues: [.per_queue[].queue], sent_all: (.sent == .packets)}'
lr_check "recv .rx, run step .rx: the deterministic values" \
	"$(jq -c ".steps[0].rx | $DET" "$J" 2>&1)" == "$(jq -c ".rx | $DET" "$R" 2>&1)"
TDET='{device_tx_dropped, eot_markers, queues: [.per_queue[].queue]}'
lr_check "send .tx, run step .tx: the deterministic values" \
	"$(jq -c ".steps[0].tx | $TDET" "$J" 2>&1)" == "$(jq -c ".tx | $TDET" "$S" 2>&1)"
lr_check "run step mode, send mode" "$(lr_jget "$J" '.steps[0].mode')" == "$(lr_jget "$S" .mode)"
lr_check "run tx_mode, its step's mode" "$(lr_jget "$J" .tx_mode)" == "$(lr_jget "$J" '.steps[0].mode')"
lr_check_cmd "no XDP program left on rcv0 after run exited" lr_xdp_absent "$RCV" rcv0
lr_finish
