#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The live-frames engine: exact counts at full speed, IPv4 and IPv6, 1 and 2 queues; its prerequisite.
#
#   ns lr-live-snd-PID                          ns lr-live-rcv-PID
#   +-----------------------------------+      +-----------------------------------+
#   | linerate send --engine live       |      | linerate recv (XDP: the peer then |
#   |  BPF_PROG_RUN live frames ->      |      |  takes redirected XDP frames)     |
#   |  bpf_redirect(snd0)               |      |                                   |
#   |   snd0 198.18.0.1/30, 2001:2::1/64|<---->|   rcv0 198.18.0.2/30, 2001:2::2/64|
#   +-----------------------------------+ veth +-----------------------------------+
#   (a second pair, with numtxqueues/numrxqueues 2, for the 2-queue case)
#
# Checks:
#   - --engine live --count 200000 at full rate, 4 flows: rx.packets == tx.packets == 200000,
#     lost 0, markers settle the tail; the same over IPv6 (84-byte frames); and with 2 queues
#     on 2 CPUs (both receive queues see traffic)
#   - auto at full rate picks live (the start line says so)
#   - --rate 20k for 3 s: sent and received rates within 2 % of it, nothing lost
#   - with a receiver that runs no XDP (AF_PACKET), live cannot send: --engine live exits 2 with
#     one line saying what to do, and auto falls back to AF_XDP, naming live's reason
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

lr_init
lr_pair_topology
ip netns exec "$SND" sysctl -qw net.ipv6.conf.snd0.disable_ipv6=0
ip netns exec "$RCV" sysctl -qw net.ipv6.conf.rcv0.disable_ipv6=0
ip -n "$SND" addr add 2001:2::1/64 dev snd0 nodad
ip -n "$RCV" addr add 2001:2::2/64 dev rcv0 nodad

live_case()
{
	local what=$1 count=$2
	shift 2

	lr_log "== $what"
	export LR_SEND_ENGINE=live LR_RECV_ENGINE=xdp
	lr_exchange "$@"
	lr_check "$what: send exit code" "$SEND_RC" == 0
	lr_check "$what: recv exit code" "$RECV_RC" == 0
	lr_check "$what: send engine" "$(lr_jget "$LR_TMP/send.json" .engine)" == live
	lr_check "$what: tx.packets" "$(lr_jget "$LR_TMP/send.json" .tx.packets)" == "$count"
	lr_check "$what: rx.packets" "$(lr_jget "$LR_TMP/recv.json" .rx.packets)" == "$count"
	lr_check "$what: rx.sent (markers)" "$(lr_jget "$LR_TMP/recv.json" .rx.sent)" == "$count"
	lr_check "$what: rx.lost" "$(lr_jget "$LR_TMP/recv.json" .rx.lost)" == 0
	lr_check "$what: tail settled" "$(jq -r .rx.tail_settled "$LR_TMP/recv.json")" == true
}

live_case "IPv4, full rate" 200000 "$SND" snd0 "$RCV" rcv0 198.18.0.2 200000 --flows 4 --rate max
live_case "IPv6, full rate" 100000 "$SND" snd0 "$RCV" rcv0 2001:2::2 100000 --flows 4 --size 84 --rate max

lr_log "== auto at full rate"
unset LR_SEND_ENGINE LR_RECV_ENGINE
export LR_EXPECT_SEND=live
lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 50000 --flows 2 --rate max
lr_check "auto: engine" "$(lr_jget "$LR_TMP/send.json" .engine)" == live
lr_check_cmd "auto: the start line names live" grep -q "engine live" "$LR_TMP/send.err"
unset LR_EXPECT_SEND

lr_log "== 2 queues"
lr_netns_add SND2 snd2
lr_netns_add RCV2 rcv2
lr_veth "$SND2" s2 "$RCV2" r2 numtxqueues 2 numrxqueues 2
lr_addr "$SND2" s2 198.18.0.5/30
lr_addr "$RCV2" r2 198.18.0.6/30
live_case "2 queues" 200000 "$SND2" s2 "$RCV2" r2 198.18.0.6 200000 --flows 4 --queues 0-1 --cpus 0-1 --rate max
lr_check "2 queues: both receive queues saw frames" "$(jq '.rx.per_queue | length' "$LR_TMP/recv.json")" == 2

lr_log "== pacing: --rate 20k for 3 s"
export LR_SEND_ENGINE=live LR_RECV_ENGINE=xdp
lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 1000000 --flows 2 --rate 20k --duration 3
lr_check "paced: send exit code" "$SEND_RC" == 0
lr_check "paced: sent rate within 2 % of 20k (>= 19600)" "$(jq '.tx.pps | floor' "$LR_TMP/send.json")" ">=" 19600
lr_check "paced: sent rate within 2 % of 20k (<= 20400)" "$(jq '.tx.pps | floor' "$LR_TMP/send.json")" "<=" 20400
lr_check "paced: received rate within 2 % of 20k (>= 19600)" "$(jq '.rx.pps | floor' "$LR_TMP/recv.json")" ">=" 19600
lr_check "paced: received rate within 2 % of 20k (<= 20400)" "$(jq '.rx.pps | floor' "$LR_TMP/recv.json")" "<=" 20400
lr_check "paced: nothing lost" "$(lr_jget "$LR_TMP/recv.json" .rx.lost)" == 0

unset LR_SEND_ENGINE LR_RECV_ENGINE

lr_log "== no XDP on the peer"
rm -f "$LR_TMP/ready"
lr_spawn pk ip netns exec "$RCV" "$LINERATE" recv -i rcv0 --engine packet --duration 20 --ready-file "$LR_TMP/ready" -q
PK=$LR_LAST_PID
lr_wait_for_file "$LR_TMP/ready" 15 "$PK" || lr_die "recv never became ready"
RC=0
ip netns exec "$SND" "$LINERATE" send -i snd0 --dst-ip 198.18.0.2 --count 100 --engine live \
	>"$LR_TMP/l.out" 2>"$LR_TMP/l.err" || RC=$?
lr_check "--engine live without XDP on the peer: exit code" "$RC" == 2
lr_check "--engine live without XDP on the peer: one line" "$(wc -l <"$LR_TMP/l.err")" == 1
lr_check_cmd "it says what to do" grep -q "veth peer runs XDP or GRO" "$LR_TMP/l.err"
RC=0
ip netns exec "$SND" "$LINERATE" send -i snd0 --dst-ip 198.18.0.2 --count 1000 -q --json "$LR_TMP/a.json" \
	>"$LR_TMP/a.out" 2>"$LR_TMP/a.err" || RC=$?
lr_check "auto falls back: exit code" "$RC" == 0
lr_check "auto falls back: engine" "$(lr_jget "$LR_TMP/a.json" .engine)" == afxdp
lr_check_cmd "auto falls back: says why live was not usable" grep -q "live not usable" "$LR_TMP/a.err"
kill -INT "$PK"
lr_wait_pid "$PK" 15 || true
lr_finish
