#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two TX queues, two pinned workers, two RX queues: per-queue accounting on both sides.
#
#   ns lr-two_queues-snd-PID                  ns lr-two_queues-rcv-PID
#   +------------------------------+          +------------------------------+
#   | linerate send                |          | linerate recv (XDP)          |
#   |  worker 0: queue 0, CPU 0 ---|--txq0--->|--- rxq0                      |
#   |  worker 1: queue 1, CPU 1 ---|--txq1--->|--- rxq1                      |
#   |  snd0 198.18.0.1/30          |   veth   |  rcv0 198.18.0.2/30          |
#   +------------------------------+          +------------------------------+
#   (veth made with numtxqueues 2 numrxqueues 2 on both ends; veth delivers a frame sent on
#    TX queue N to the peer's RX queue N)
#
# Checks, once with --flows 4 and once without --flows (docs/engines.md's first example: the
# default is one flow per worker, so two):
#   - send --queues 0-1 --cpus 0-1 [--flows 4] --count 20000 --rate 50kpps exits 0
#   - exact counts as in test_veth_basic (tx == rx == sent == 20000, no loss/dup/reorder,
#     tail settled, flows 4, or 2 without --flows)
#   - tx.per_queue has exactly two entries (queues 0 and 1), each with packets > 0,
#     and their packets sum to tx.packets
#   - rx.per_queue shows packets > 0 on two distinct queues, summing to rx.packets
#   - without --flows: each worker's flow has its marker in (rx.flows_eot and flows_announced 2)
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COUNT=20000
lr_init
lr_pair_topology_opts numtxqueues 2 numrxqueues 2
lr_log "rcv0 queues: $(ip netns exec "$RCV" ls /sys/class/net/rcv0/queues | tr '\n' ' ')"

# two_queues FLOWS [--flows N]: one exchange over both queues, and its checks.
two_queues()
{
	local flows=$1 S=$LR_TMP/send.json R=$LR_TMP/recv.json

	shift
	lr_log "== two queues, ${*:-no --flows}"
	lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 "$COUNT" "$@" --rate 50kpps --queues 0-1 --cpus 0-1
	lr_check_exact "$COUNT" "$flows"
	lr_log "tx.per_queue: $(jq -c '.tx.per_queue' "$S" 2>/dev/null || echo missing)"
	lr_log "rx.per_queue: $(jq -c '.rx.per_queue' "$R" 2>/dev/null || echo missing)"
	lr_check "tx.per_queue entries" "$(jq -r '.tx.per_queue | length' "$S" 2>/dev/null || echo missing)" == 2
	lr_check "tx.per_queue queue ids" \
		"$(jq -r '[.tx.per_queue[].queue] | sort | map(tostring) | join(",")' "$S" 2>/dev/null || echo missing)" == "0,1"
	lr_check "tx.per_queue entries with packets > 0" \
		"$(jq -r '[.tx.per_queue[] | select(.packets > 0)] | length' "$S" 2>/dev/null || echo missing)" == 2
	lr_check "sum of tx.per_queue packets" \
		"$(jq -r '[.tx.per_queue[].packets] | add' "$S" 2>/dev/null || echo missing)" == "$(lr_jget "$S" .tx.packets)"
	lr_check "rx.per_queue distinct queues with packets > 0" \
		"$(jq -r '[.rx.per_queue[] | select(.packets > 0) | .queue] | unique | length' "$R" 2>/dev/null || echo missing)" == 2
	lr_check "sum of rx.per_queue packets" \
		"$(jq -r '[.rx.per_queue[].packets] | add' "$R" 2>/dev/null || echo missing)" == "$(lr_jget "$R" .rx.packets)"
	lr_check "rx.flows_eot (every flow's marker in)" "$(lr_jget "$R" .rx.flows_eot)" == "$flows"
	lr_check "rx.flows_announced" "$(lr_jget "$R" .rx.flows_announced)" == "$flows"
}

two_queues 4 --flows 4
two_queues 2
lr_finish
