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
#   (a second pair, with numtxqueues/numrxqueues 2, for the 2-queue case, and a third, 198.18.0.8/30,
#   whose receiving veth has threaded NAPI, for the overload case)
#
# Checks:
#   - --engine live --count 200000 at full rate, 4 flows: rx.packets == tx.packets == 200000,
#     lost 0, markers settle the tail; the same over IPv6 (84-byte frames); and with 2 queues
#     on 2 CPUs (both receive queues see traffic)
#   - overload (full rate for 2 s on CPU 0 into a slower receiver: threaded NAPI, --pass to the
#     stack, so the peer's ring overflows): device_tx_dropped > 0, rx.packets == tx.packets,
#     tx.packets + device_tx_dropped == queued, rx.lost == device_tx_dropped == the receiving
#     veth's rx_dropped delta less the markers it turned away (drops at the full peer ring counted
#     once, and not as sent; markers' drops are not data drops)
#   - auto at full rate picks live (the start line says so) and counts exactly
#   - --rate 20k for 3 s: sent and received rates within 2 % of it, nothing lost
#   - through a router whose nftables rule drops every 50th data frame (linerate recv --pass on the
#     router's veth so it takes XDP frames; the router rewrites frames in place): rx.lost == nft
#     drops == 200 of 10000
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

lr_log "== overload: full rate for 2 s into a slower receiver on its own NAPI thread"
# Whatever the peer's ring had no room for must show as dropped by the
# device, frame for frame what the receiver finds missing, and must not
# be in the sender's count (veth counts these drops in two places: once only).
# Its own pair: the threaded setting outlives the receiver's NAPI and would slow later cases.
rx_dropped() { ip -n "$1" -j -s link show "$2" | jq '.[0].stats64.rx.dropped'; }
lr_netns_add SND3 snd3
lr_netns_add RCV3 rcv3
lr_veth "$SND3" s3 "$RCV3" r3
lr_addr "$SND3" s3 198.18.0.9/30
lr_addr "$RCV3" r3 198.18.0.10/30
drop0=$(rx_dropped "$RCV3" r3)
export LR_SEND_ENGINE=live LR_RECV_ENGINE=xdp
# The receiving veth's NAPI on its own thread (threaded once recv's XDP program made it exist), and
# --pass so it hands every frame to the stack: slower than the sender, so the peer's ring must overflow.
# shellcheck disable=SC2016 # lr_exchange evaluates it
LR_RECV_ARGS=--pass LR_AFTER_READY='ip netns exec "$RCV3" sh -c "echo 1 > /sys/class/net/r3/threaded"' \
	lr_exchange "$SND3" s3 "$RCV3" r3 198.18.0.10 100000000 --flows 4 --rate max --duration 2 --cpus 0
drop1=$(rx_dropped "$RCV3" r3)
s=$LR_TMP/send.json r=$LR_TMP/recv.json
lr_check "overload: send exit code" "$SEND_RC" == 0
lr_check "overload: recv exit code" "$RECV_RC" == 0
lr_check "overload: rx.packets == tx.packets (frames the device accepted)" \
	"$(lr_jget "$r" .rx.packets)" == "$(lr_jget "$s" .tx.packets)"
lr_check "overload: tx.packets + device_tx_dropped == tx.queued" \
	"$(jq '.tx.packets + .tx.device_tx_dropped' "$s")" == "$(lr_jget "$s" .tx.queued)"
lr_check "overload: rx.lost == device_tx_dropped" "$(lr_jget "$r" .rx.lost)" == "$(lr_jget "$s" .tx.device_tx_dropped)"
# the veth's rx_dropped also counts end-of-test markers the full ring turned away (not data)
lr_check "overload: receiving veth's rx_dropped delta >= rx.lost" "$((drop1 - drop0))" ">=" "$(lr_jget "$r" .rx.lost)"
lr_check "overload: receiving veth's rx_dropped delta <= rx.lost + markers" "$((drop1 - drop0))" "<=" \
	"$(($(lr_jget "$r" .rx.lost) + $(lr_jget "$s" .tx.eot_markers)))"
lr_check "overload: the ring did overflow (device_tx_dropped > 0)" "$(lr_jget "$s" .tx.device_tx_dropped)" ">" 0

lr_log "== auto at full rate"
unset LR_SEND_ENGINE LR_RECV_ENGINE
export LR_EXPECT_SEND=live
lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 50000 --flows 2 --rate max
lr_check_exact 50000 2
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

lr_log "== router dropping every 50th data frame"
lr_netns_add S3 s3
lr_netns_add RTR rtr
lr_netns_add R3 r3
lr_veth "$S3" s3 "$RTR" rs
lr_veth "$RTR" rr "$R3" r3
lr_addr "$S3" s3 198.18.0.9/30
lr_addr "$RTR" rs 198.18.0.10/30
lr_addr "$RTR" rr 198.18.0.13/30
lr_addr "$R3" r3 198.18.0.14/30
ip -n "$S3" route add 198.18.0.12/30 via 198.18.0.10
ip netns exec "$RTR" sysctl -qw net.ipv4.ip_forward=1
ip -n "$RTR" neigh replace 198.18.0.14 lladdr "$(lr_mac "$R3" r3)" dev rr nud permanent
# Live frames need a peer that takes XDP frames: linerate recv --pass on the router's side counts
# and passes them on. The router then rewrites each frame in place (MACs, TTL) before the page goes
# back to the live-frames pool: the engine must restore the headers of every frame it sends.
rm -f "$LR_TMP/rready"
lr_spawn rtrrecv ip netns exec "$RTR" "$LINERATE" recv -i rs --pass --duration 60 --ready-file "$LR_TMP/rready" -q
lr_wait_for_file "$LR_TMP/rready" 15 "$LR_LAST_PID" || lr_die "the router's recv never became ready"
ip netns exec "$RTR" nft add table ip lrprobe 2>/dev/null || lr_kernel_lacks "nftables"
ip netns exec "$RTR" nft delete table ip lrprobe
ip netns exec "$RTR" nft -f - <<'NFT' || lr_die "the router's nftables rules did not load"
table ip lrlive {
	counter lr_drop { }
	chain forward_lr {
		type filter hook forward priority filter; policy accept;
		udp dport 7447 @th,64,16 0x4c52 numgen inc mod 50 == 0 counter name "lr_drop" drop
	}
}
NFT
export LR_SEND_ENGINE=live LR_RECV_ENGINE=xdp
lr_exchange "$S3" s3 "$R3" r3 198.18.0.14 10000 --flows 4 --rate 20k
DROPPED=$(ip netns exec "$RTR" nft -j list counter ip lrlive lr_drop | jq '[.nftables[] | select(.counter) | .counter.packets][0]')
lr_check "router: send exit code" "$SEND_RC" == 0
lr_check "router: tx.packets" "$(lr_jget "$LR_TMP/send.json" .tx.packets)" == 10000
lr_check "router: nft dropped ceil(10000/50)" "$DROPPED" == 200
lr_check "router: rx.lost == nft drops" "$(lr_jget "$LR_TMP/recv.json" .rx.lost)" == 200
lr_check "router: rx.packets" "$(lr_jget "$LR_TMP/recv.json" .rx.packets)" == 9800
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
