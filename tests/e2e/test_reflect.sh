#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Round trips: linerate reflect sends send --rtt's frames back; the sender splits loss by direction.
#
# 1. Direct veth:  ns snd s0 198.18.0.1/30 <--veth--> c0 198.18.0.2/30 ns rcv (reflect -i c0)
#    - auto mode picks generic (the peer s0 runs no XDP yet, GRO off) and says why; send --rtt
#      --count 10000 --flows 4 --rate 20kpps: forward and return sent == received == 10000, lost 0,
#      reordered 0, duplicates 0, rtt_settled; rtt_ns.count == 10000 (every frame stamped at this
#      rate), 0 < p50 < 5 ms; the reflector's JSON: packets 10000, 20 markers (4 flows x 5), forward
#      lost 0, device tx_dropped 0; the reflector's device sent >= 10020 frames (ip -s link).
#    - --xdp-mode native with the live engine (the reflector's XDP makes s0 take XDP frames): the same
#      exact counts; mode "native", device tx_dropped 0.
#    - refusals counted: 1000 round-trip frames captured (send --rtt --pcap), then replayed (send
#      --replay: no receiver of ours on s0, GRO off on s0) to a reflector forced to native mode, so
#      the veth refuses every frame it sends back: the start line warns; reflect.packets 1000,
#      device tx_dropped 1000 and driver_drops 0 (a veth's are in tx_dropped: never twice), the
#      summary says "refused 1000"; c0's tx_dropped and s0's rx_dropped (ip -s link) grew by 1000.
#    - one reflector serving two tests (4 flows, 1000 frames then 2, so two flows carry none in
#      the second): each test exact both ways (the test id starts each flow's counts over);
#    - ping through the reflecting interface still answers; reflect killed with SIGKILL while a
#      program is attached to c0 leaves none.
# 2. Through a router (no XDP, GRO turned off on it: the reflector must pick generic, and does,
#    by its start line and its JSON):
#      ns snd s0 .1/30 <--> r0 .2/30 [ns rtr, ip_forward] r1 .5/30 <--> c0 .6/30 ns rcv
#    nft in the router drops every 50th round-trip data frame ("LT") going forward: forward.lost ==
#    the rule's drops (200), return.lost == 0; then every 50th reflected frame ("LB") coming back:
#    forward.lost == 0, return.lost == the rule's drops. Then GRO on at r1, still no XDP: c0
#    advertises ndo_xdp_xmit, but a veth does not wake a GRO-only peer for XDP_TX frames, so auto
#    must pick generic again, and the round trip is exact.
# 3. Container to container over a bridge: scripts/lab bridge, c1 -> c2 (reflect in c2): exact.
# 4. Bad input: unknown interface, an interface that already has XDP (drop.bpf.o, which must
#    attach: no silent skip; it is still there after the refusal), --rtt --replay: exit 2, one
#    line, nothing of ours attached.
# 5. linerate run over the direct veth: mode = rtt-throughput (upper bound 100 kpps, max_rtt_p99
#    5 ms) finds a rate > 0 whose trial is exact both ways with an RTT p99 within the threshold,
#    that p99 the found trial's own and > 0; the same search with max_rtt_p99 = 1us (upper bound
#    20 kpps) finds no rate (exit 3, found false, rate_pps null): all 4 trials fail, each settled,
#    lost 0 forward and 0 back, its p99 above 1 us; mode = rtt with max_rtt_p99 = 1us fails its
#    step on RTT alone (exit 3, forward and return lost 0 each).
# 6. IPv6 (2001:2::/48, the RFC 5180 benchmarking range) over a direct veth, 84-byte frames (the
#    smallest that carry the probe): exact both ways.
# The cases run in the order 1, 4, 5, 6, 2, 3.
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COUNT=10000
FLOWS=4
EVERY=50
lr_init
lr_require_cmds nft ping ethtool

# reflect_start NS IF [args...]: the reflector, ready (its ready file exists); its PID in RPID.
reflect_start()
{
	local ns=$1 ifc=$2

	shift 2
	rm -f "$LR_TMP/rready" "$LR_TMP/reflect.json"
	lr_spawn reflect timeout -k 5 60 "$LINERATE" reflect --netns "$ns" -i "$ifc" -q --duration 50 \
		--json "$LR_TMP/reflect.json" --ready-file "$LR_TMP/rready" "$@"
	RPID=$LR_LAST_PID
	if ! lr_wait_for_file "$LR_TMP/rready" 15 "$RPID"; then
		lr_show_file "$LR_TMP/reflect.err"
		lr_die "reflect never became ready"
	fi
}

# reflect_stop: SIGINT, and its exit code in RRC.
reflect_stop()
{
	RRC=0
	kill -INT "$RPID" 2>/dev/null || true
	lr_wait_pid "$RPID" 10 || RRC=$?
	lr_show_file "$LR_TMP/reflect.err"
}

# rtt_send NS IF DST [args...]: send --rtt, its exit code in SRC and its document in send.json.
rtt_send()
{
	local ns=$1 ifc=$2 dst=$3

	shift 3
	SRC=0
	rm -f "$LR_TMP/send.json"
	timeout -k 5 60 "$LINERATE" send --netns "$ns" -i "$ifc" --dst-ip "$dst" --rtt --count "$COUNT" \
		--flows "$FLOWS" --rate 20kpps -q --json "$LR_TMP/send.json" "$@" \
		>"$LR_TMP/send.out" 2>"$LR_TMP/send.err" || SRC=$?
	lr_show_file "$LR_TMP/send.err"
}

# check_dir NAME SENT RECEIVED LOST: one direction of send.json.
check_dir()
{
	local S=$LR_TMP/send.json

	lr_check "$1.sent" "$(lr_jget "$S" ".$1.sent")" == "$2"
	lr_check "$1.received" "$(lr_jget "$S" ".$1.received")" == "$3"
	lr_check "$1.lost" "$(lr_jget "$S" ".$1.lost")" == "$4"
	lr_check "$1.reordered" "$(lr_jget "$S" ".$1.reordered")" == 0
	lr_check "$1.duplicates" "$(lr_jget "$S" ".$1.duplicates")" == 0
}

# link_stat NS IF KEY: a stats64 counter of IF (ip -s link), e.g. tx.dropped.
link_stat()
{
	ip -n "$1" -s -j link show dev "$2" | jq -r ".[0].stats64.$3"
}

check_exact()
{
	local S=$LR_TMP/send.json

	lr_check "send --rtt exit code" "$SRC" == 0
	lr_jvalid "$S"
	lr_check "tx.packets" "$(lr_jget "$S" .tx.packets)" == "$COUNT"
	check_dir forward "$COUNT" "$COUNT" 0
	check_dir return "$COUNT" "$COUNT" 0
	lr_check "rtt_settled" "$(jq -r .rtt_settled "$S" 2>/dev/null)" == true
	lr_check "rtt_ns.p50 > 0" "$(lr_jget "$S" .rtt_ns.p50)" ">" 0
	lr_check "rtt_ns.p50 < 5 ms" "$(lr_jget "$S" .rtt_ns.p50)" "<" 5000000
}

# ---- 1. direct veth ----------------------------------------------------------------------------
lr_netns_add SND snd
lr_netns_add RCV rcv
lr_veth "$SND" s0 "$RCV" c0
lr_addr "$SND" s0 198.18.0.1/30
lr_addr "$RCV" c0 198.18.0.2/30

lr_log "== direct veth, auto mode"
TX0=$(link_stat "$RCV" c0 tx.packets)
RX0=$(lr_rx_packets "$SND" s0)
reflect_start "$RCV" c0
lr_check "the start line names generic mode and why" \
	"$(grep -c 'XDP generic mode: its veth peer runs no native XDP' "$LR_TMP/reflect.err")" == 1
lr_check_cmd "an XDP program is attached to c0" lr_xdp_attached "$RCV" c0
lr_check_cmd "ping through the reflecting interface" ip netns exec "$SND" ping -c 3 -i 0.2 -W 2 -q 198.18.0.2
rtt_send "$SND" s0 198.18.0.2
reflect_stop
check_exact
S=$LR_TMP/send.json
lr_check "rtt_ns.count (every frame stamped at 20 kpps)" "$(lr_jget "$S" .rtt_ns.count)" == "$COUNT"
lr_check "rtt_ns.min <= p50 <= p99 <= max" \
	"$(jq -r '[.rtt_ns.min <= .rtt_ns.p50, .rtt_ns.p50 <= .rtt_ns.p99, .rtt_ns.p99 <= .rtt_ns.max] | all' "$S")" == true
F=$LR_TMP/reflect.json
lr_check "reflect exit code" "$RRC" == 0
lr_jvalid "$F"
lr_check "reflect.mode" "$(lr_jget "$F" .reflect.mode)" == generic
lr_check "reflect.packets" "$(lr_jget "$F" .reflect.packets)" == "$COUNT"
lr_check "reflect.eot_markers (4 flows x 5 repeats)" "$(lr_jget "$F" .reflect.eot_markers)" == $((FLOWS * 5))
lr_check "reflect.forward.lost" "$(lr_jget "$F" .reflect.forward.lost)" == 0
lr_check "reflect.forward.sent (from the markers)" "$(lr_jget "$F" .reflect.forward.sent)" == "$COUNT"
lr_check "reflect.device.tx_dropped" "$(lr_jget "$F" .reflect.device.tx_dropped)" == 0
TX1=$(link_stat "$RCV" c0 tx.packets)
lr_check "c0 sent (ip -s link) >= frames and markers reflected" $((TX1 - TX0)) ">=" $((COUNT + FLOWS * 5))
# the return as the kernel saw it: s0 received the reflected frames and markers, and a few others
# (the ping's replies, ARP) at most
RX1=$(lr_rx_packets "$SND" s0)
lr_check "s0 received (ip -s link) >= return.received + reflected markers" $((RX1 - RX0)) ">=" \
	$(($(lr_jget "$S" .return.received) + FLOWS * 5))
lr_check "s0 received (ip -s link) <= that + 10" $((RX1 - RX0)) "<=" $(($(lr_jget "$S" .return.received) + FLOWS * 5 + 10))
lr_check_cmd "no XDP program left on c0 after SIGINT" lr_xdp_absent "$RCV" c0
lr_check_cmd "no XDP program left on s0 after send --rtt" lr_xdp_absent "$SND" s0

lr_log "== direct veth, native mode, live engine"
reflect_start "$RCV" c0 --xdp-mode native
rtt_send "$SND" s0 198.18.0.2 --engine live
reflect_stop
check_exact
lr_check "reflect.mode" "$(lr_jget "$F" .reflect.mode)" == native
lr_check "send engine" "$(lr_jget "$LR_TMP/send.json" .engine)" == live
lr_check "reflect.device.tx_dropped (native XDP_TX refusals: a veth counts them there)" \
	"$(lr_jget "$F" .reflect.device.tx_dropped)" == 0

lr_log "== native mode, nobody on s0 to take the frames back: every refusal counted"
# round-trip frames on file, captured through a working (generic) reflector
reflect_start "$RCV" c0
rtt_send "$SND" s0 198.18.0.2 --count 1000 --pcap "$LR_TMP/rtt.pcap" --pcap-count 1000
reflect_stop
lr_check "capture: send --rtt exit code" "$SRC" == 0
# replayed, they go out by AF_XDP with no receiver of ours: s0 runs no XDP, and its GRO is off, so
# nothing on s0 takes what c0 sends back with native XDP_TX
ip netns exec "$SND" ethtool -K s0 gro off || lr_die "ethtool -K s0 gro off failed"
lr_check_cmd "no XDP program on s0 before the replay" lr_xdp_absent "$SND" s0
C0D0=$(link_stat "$RCV" c0 tx.dropped)
S0D0=$(link_stat "$SND" s0 rx.dropped)
S0P0=$(link_stat "$SND" s0 rx.packets)
reflect_start "$RCV" c0 --xdp-mode native
lr_check "the start line says the frames sent back will be refused" \
	"$(grep -c 'frames sent back are dropped there (counted as refused: tx_dropped)' "$LR_TMP/reflect.err")" == 1
REPRC=0
timeout -k 5 60 "$LINERATE" send --netns "$SND" -i s0 --replay "$LR_TMP/rtt.pcap" --rate 20kpps -q \
	--json "$LR_TMP/replay.json" >"$LR_TMP/replay.out" 2>"$LR_TMP/replay.err" || REPRC=$?
lr_show_file "$LR_TMP/replay.err"
# the last frames through c0 before the reflector stops (bounded: the checks below say if not)
for ((i = 0; i < 50; i++)); do
	(($(link_stat "$RCV" c0 tx.dropped) - C0D0 >= 1000)) && break
	sleep 0.1
done
reflect_stop
lr_check "replay exit code" "$REPRC" == 0
lr_check "replay: the capture's 1000 frames sent" "$(lr_jget "$LR_TMP/replay.json" .tx.packets)" == 1000
lr_check "reflect exit code" "$RRC" == 0
lr_check "reflect.mode" "$(lr_jget "$F" .reflect.mode)" == native
lr_check "reflect.packets: every replayed frame turned back" "$(lr_jget "$F" .reflect.packets)" == 1000
lr_check "reflect.eot_markers (a replay without --stamp sends none)" "$(lr_jget "$F" .reflect.eot_markers)" == 0
lr_check "reflect.device.tx_dropped == the frames turned back" "$(lr_jget "$F" .reflect.device.tx_dropped)" == 1000
lr_check "reflect.device.driver_drops (a veth's are in tx_dropped: not counted twice)" \
	"$(lr_jget "$F" .reflect.device.driver_drops)" == 0
lr_check "the summary: refused == the frames turned back" \
	"$(grep -Ec '^  device    sent [0-9]+, refused 1000 \(tx_dropped 1000, driver drops/errors 0\)$' \
		"$LR_TMP/reflect.err")" == 1
lr_check "c0's tx_dropped (ip -s link)" $(($(link_stat "$RCV" c0 tx.dropped) - C0D0)) == 1000
lr_check "s0's rx_dropped: its side of the same frames" $(($(link_stat "$SND" s0 rx.dropped) - S0D0)) == 1000
lr_check "s0 received none of them (rx_packets: ARP and the like at most)" \
	$(($(link_stat "$SND" s0 rx.packets) - S0P0)) "<=" 10

lr_log "== one reflector, two tests: 1000 frames in 4 flows, then 2 (two flows carry none)"
reflect_start "$RCV" c0
rtt_send "$SND" s0 198.18.0.2 --count 1000
lr_check "first test: forward lost" "$(lr_jget "$LR_TMP/send.json" .forward.lost)" == 0
lr_check "first test: return lost" "$(lr_jget "$LR_TMP/send.json" .return.lost)" == 0
rtt_send "$SND" s0 198.18.0.2 --count 2
reflect_stop
check_dir forward 2 2 0
check_dir return 2 2 0
lr_check "second test: rtt_settled" "$(jq -r .rtt_settled "$LR_TMP/send.json" 2>/dev/null)" == true
lr_check "the reflector reflected both tests" "$(lr_jget "$F" .reflect.packets)" == 1002
lr_check "its forward view: the latest test on each flow" "$(lr_jget "$F" .reflect.forward.received)" == 2

lr_log "== SIGKILL leaves nothing attached"
reflect_start "$RCV" c0
# attached right before the kill, or "nothing left" after it would prove nothing
lr_check_cmd "an XDP program is attached to c0 right before the SIGKILL" lr_xdp_attached "$RCV" c0
# the ready file holds linerate's own PID (RPID is timeout's)
kill -KILL "$(cat "$LR_TMP/rready")"
lr_wait_pid "$RPID" 10 || true
lr_check_cmd "no XDP program left on c0 after SIGKILL" lr_xdp_absent "$RCV" c0

# ---- 4. bad input ------------------------------------------------------------------------------
# bad NAME WANT_RC CMD...: exit code, exactly one line on stderr, nothing attached to c0.
bad()
{
	local name=$1 rc=0

	shift
	"$@" >"$LR_TMP/bad.out" 2>"$LR_TMP/bad.err" || rc=$?
	lr_check "$name: exit code" "$rc" == 2
	lr_check "$name: one line on stderr" "$(wc -l <"$LR_TMP/bad.err")" == 1
	lr_show_file "$LR_TMP/bad.err"
}
bad "unknown interface" "$LINERATE" reflect --netns "$RCV" -i nosuch0 -d 1
# someone else's program on c0 (built with linerate): a failure to attach it is the test's, not a skip
DROP_OBJ=$(dirname "$LINERATE")/drop.bpf.o
ip -n "$RCV" link set dev c0 xdpgeneric obj "$DROP_OBJ" sec xdp ||
	lr_die "cannot attach $DROP_OBJ to c0 for the 'XDP already' case (see above)"
lr_check_cmd "drop.bpf.o is attached to c0" lr_xdp_attached "$RCV" c0
bad "an interface with XDP already" "$LINERATE" reflect --netns "$RCV" -i c0 -d 1
lr_check_cmd "the refusal left the other program on c0" lr_xdp_attached "$RCV" c0
ip -n "$RCV" link set dev c0 xdpgeneric off
lr_check_cmd "no XDP program on c0 after the refusals" lr_xdp_absent "$RCV" c0
printf 'x' >"$LR_TMP/x.pcap"
bad "--rtt --replay" "$LINERATE" send --netns "$SND" -i s0 --rtt --replay "$LR_TMP/x.pcap" -c 1
lr_check_cmd "no XDP program on s0 after the refusal" lr_xdp_absent "$SND" s0

# ---- 5. linerate run --------------------------------------------------------------------------
# run_rtt NAME MODE MAX_RTT_P99 RATES: a run file over the direct veth; exit code in RUNRC.
# sender_limited = pass: a busy machine's sender may fall short of the paced rate; the verdict is
# tested in test_throughput and test_configs, not here
run_rtt()
{
	cat >"$LR_TMP/$1.ini" <<INI
[test]
mode = $2
duration = 500ms
trial = 500ms
warmup = 100ms
max_rtt_p99 = $3
sender_limited = pass
resolution = 20%
max_trials = 4

[tx]
netns = $SND
interface = s0
dst_ip = 198.18.0.2
rates = $4
flows = 2

[rx]
netns = $RCV
interface = c0
INI
	RUNRC=0
	timeout -k 5 120 "$LINERATE" run "$LR_TMP/$1.ini" --json "$LR_TMP/$1.json" -q \
		>"$LR_TMP/$1.out" 2>"$LR_TMP/$1.err" || RUNRC=$?
	lr_show_file "$LR_TMP/$1.out"
	lr_show_file "$LR_TMP/$1.err"
}

# trials FILE COND: how many of the search's trials meet the jq condition COND.
trials()
{
	lr_jget "$1" "[.throughput[0].trials[] | select($2)] | length"
}

lr_log "== run, mode = rtt-throughput"
run_rtt search rtt-throughput 5ms 100k
J=$LR_TMP/search.json
lr_check "run rtt-throughput exit code" "$RUNRC" == 0
lr_check "run mode" "$(lr_jget "$J" .mode)" == rtt-throughput
lr_check "search found a rate" "$(lr_jget "$J" '.throughput[0].found')" == true
lr_check "found rate > 0" "$(lr_jget "$J" '.throughput[0].rate_pps')" ">" 0
lr_check "found trial's rtt p99 <= 5 ms" "$(lr_jget "$J" '.throughput[0].rtt_p99_ns')" "<=" 5000000
# 0 would pass the line above without a round trip timed: the figure is the found trial's own
FOUND_P99=$(jq -r '.throughput[0] as $t | [$t.trials[] | select(.pass and .offered_pps == $t.offered_pps)][0]
	| .rtt_ns.p99 // "missing"' "$J" 2>/dev/null || echo missing)
lr_check "the found trial's own rtt_ns.p99 > 0" "$FOUND_P99" ">" 0
lr_check "the search's rtt_p99_ns is the found trial's" "$(lr_jget "$J" '.throughput[0].rtt_p99_ns')" == "$FOUND_P99"
lr_check "passing trials exact both ways" \
	"$(jq '[.steps[] | select(.pass) | select(.rtt_settled != true or .forward.lost != 0 or .return.lost != 0
		or .forward.received != .forward.sent or .return.received != .forward.sent)] | length' "$J")" == 0
lr_check_cmd "no XDP program left on c0 after run" lr_xdp_absent "$RCV" c0
lr_check_cmd "no XDP program left on s0 after run" lr_xdp_absent "$SND" s0

lr_log "== run, mode = rtt-throughput, a threshold no round trip meets"
run_rtt nofound rtt-throughput 1us 20k
J=$LR_TMP/nofound.json
lr_check "run exit code (no rate passed)" "$RUNRC" == 3
lr_check "search found no rate" "$(jq -r '.throughput[0].found' "$J" 2>/dev/null)" == false
lr_check "its rate_pps is null" "$(jq -r '.throughput[0].rate_pps' "$J" 2>/dev/null)" == null
lr_check "trials (max_trials)" "$(trials "$J" true)" == 4
lr_check "trials that passed" "$(trials "$J" '.pass != false')" == 0
# on RTT alone: every trial settled and exact both ways, each p99 above the threshold
lr_check "trials not settled" "$(trials "$J" '.rtt_settled != true')" == 0
lr_check "trials that lost forward" "$(trials "$J" '.forward.lost != 0')" == 0
lr_check "trials that lost on the return" "$(trials "$J" '.return.lost != 0')" == 0
lr_check "trials with rtt p99 <= 1 us" "$(trials "$J" '(.rtt_ns.p99 // 0) <= 1000')" == 0
lr_check "the table says so" "$(grep -c 'no rate passed in 4 trials' "$LR_TMP/nofound.out")" == 1

lr_log "== run, mode = rtt, a threshold no round trip meets"
run_rtt thresh rtt 1us 20k
J=$LR_TMP/thresh.json
lr_check "run exit code (threshold missed)" "$RUNRC" == 3
lr_check "the step failed" "$(jq -r '.steps[0].pass' "$J" 2>/dev/null)" == false
# each on its own: a sum would let a +1 and a -1 cancel
lr_check "on RTT alone: nothing lost forward" "$(lr_jget "$J" '.steps[0].forward.lost')" == 0
lr_check "on RTT alone: nothing lost on the return" "$(lr_jget "$J" '.steps[0].return.lost')" == 0
lr_check "its rtt p99 is above 1 us" "$(lr_jget "$J" '.steps[0].rtt_ns.p99')" ">" 1000

# ---- 6. IPv6 ----------------------------------------------------------------------------------
lr_log "== IPv6, 84-byte frames"
lr_netns_add SND6 snd6
lr_netns_add RCV6 rcv6
lr_veth "$SND6" s0 "$RCV6" c0
ip netns exec "$SND6" sysctl -qw net.ipv6.conf.s0.disable_ipv6=0
ip netns exec "$RCV6" sysctl -qw net.ipv6.conf.c0.disable_ipv6=0
ip -n "$SND6" addr add 2001:2::1/64 dev s0 nodad
ip -n "$RCV6" addr add 2001:2::2/64 dev c0 nodad
ip -n "$SND6" link set s0 up
ip -n "$RCV6" link set c0 up
# a static neighbour each way: no frame waits for neighbour discovery
ip -n "$SND6" neigh replace 2001:2::2 lladdr "$(lr_mac "$RCV6" c0)" dev s0 nud permanent
ip -n "$RCV6" neigh replace 2001:2::1 lladdr "$(lr_mac "$SND6" s0)" dev c0 nud permanent
reflect_start "$RCV6" c0
rtt_send "$SND6" s0 2001:2::2 --size 84
reflect_stop
check_exact
lr_check "reflect.packets (IPv6)" "$(lr_jget "$F" .reflect.packets)" == "$COUNT"

# ---- 2. through a router -----------------------------------------------------------------------
lr_netns_add SND2 snd2
lr_netns_add RTR rtr
lr_netns_add RCV2 rcv2
lr_veth "$SND2" s0 "$RTR" r0
lr_veth "$RTR" r1 "$RCV2" c0
lr_addr "$SND2" s0 198.18.0.1/30
lr_addr "$RTR" r0 198.18.0.2/30
lr_addr "$RTR" r1 198.18.0.5/30
lr_addr "$RCV2" c0 198.18.0.6/30
ip -n "$SND2" route add 198.18.0.4/30 via 198.18.0.2
ip -n "$RCV2" route add 198.18.0.0/30 via 198.18.0.5
ip netns exec "$RTR" sysctl -qw net.ipv4.ip_forward=1
# GRO off on the router's veth ends, set rather than assumed: with it on, r1 would take native
# XDP_TX frames and the reflector would not have to choose generic
for r in r0 r1; do
	ip netns exec "$RTR" ethtool -K "$r" gro off || lr_die "ethtool -K $r gro off failed in the router"
done
# static neighbours both ways: no frame waits (or is dropped) in the router's ARP queue
ip -n "$RTR" neigh replace 198.18.0.6 lladdr "$(lr_mac "$RCV2" c0)" dev r1 nud permanent
ip -n "$RTR" neigh replace 198.18.0.1 lladdr "$(lr_mac "$SND2" s0)" dev r0 nud permanent

# load_rules MATCH: drop every 50th frame that MATCH selects, counting the ones it looks at and drops.
load_rules()
{
	ip netns exec "$RTR" nft delete table ip lrrtt 2>/dev/null || true
	ip netns exec "$RTR" nft -f - <<NFT || lr_die "loading the nftables ruleset failed (see above)"
table ip lrrtt {
	counter seen { }
	counter dropped { }
	chain forward_rtt {
		type filter hook forward priority filter; policy accept;
		$1 counter name "seen"
		$1 numgen inc mod $EVERY == 0 counter name "dropped" drop
	}
}
NFT
}

nft_count()
{
	ip netns exec "$RTR" nft -j list counter ip lrrtt "$1" |
		jq -r '[.nftables[] | select(.counter) | .counter.packets][0] // "missing"'
}

WANT=$(((COUNT + EVERY - 1) / EVERY))
lr_log "== router, every ${EVERY}th frame dropped on the way there"
load_rules 'udp dport 7447 @th,64,16 0x4c54'
reflect_start "$RCV2" c0
lr_check "behind a router the reflector picks generic mode" \
	"$(grep -c 'XDP generic mode' "$LR_TMP/reflect.err")" == 1
rtt_send "$SND2" s0 198.18.0.6
reflect_stop
lr_check "reflect.mode behind the router" "$(lr_jget "$F" .reflect.mode)" == generic
lr_check "send --rtt exit code" "$SRC" == 0
lr_check "nft saw every forward data frame" "$(nft_count seen)" == "$COUNT"
lr_check "nft dropped ceil($COUNT/$EVERY)" "$(nft_count dropped)" == "$WANT"
check_dir forward "$COUNT" $((COUNT - WANT)) "$(nft_count dropped)"
check_dir return $((COUNT - WANT)) $((COUNT - WANT)) 0
lr_check "rtt_settled" "$(jq -r .rtt_settled "$LR_TMP/send.json" 2>/dev/null)" == true
lr_check "reflect.forward.lost (the reflector's own view)" "$(lr_jget "$F" .reflect.forward.lost)" == "$WANT"

lr_log "== router, every ${EVERY}th frame dropped on the way back"
load_rules 'udp sport 7447 @th,64,16 0x4c42'
reflect_start "$RCV2" c0
rtt_send "$SND2" s0 198.18.0.6
reflect_stop
lr_check "send --rtt exit code" "$SRC" == 0
lr_check "nft saw every reflected data frame" "$(nft_count seen)" == "$COUNT"
lr_check "nft dropped ceil($COUNT/$EVERY)" "$(nft_count dropped)" == "$WANT"
check_dir forward "$COUNT" "$COUNT" 0
check_dir return "$COUNT" $((COUNT - WANT)) "$(nft_count dropped)"
lr_check "rtt_settled" "$(jq -r .rtt_settled "$LR_TMP/send.json" 2>/dev/null)" == true

# GRO on at r1 (the reflector's veth peer), still no XDP there: r1 now has NAPI, so c0 advertises
# ndo_xdp_xmit, but the veth wakes a peer's NAPI for XDP_TX frames only when the peer runs native
# XDP: native mode would leave them in r1's ring. auto must still pick generic, and all come back.
lr_log "== router with GRO on at the reflector's peer"
ip netns exec "$RTR" nft delete table ip lrrtt
ip netns exec "$RTR" ethtool -K r1 gro on || lr_die "ethtool -K r1 gro on failed in the router"
reflect_start "$RCV2" c0
lr_check "peer with GRO alone: the reflector picks generic mode" \
	"$(grep -c 'XDP generic mode' "$LR_TMP/reflect.err")" == 1
rtt_send "$SND2" s0 198.18.0.6
reflect_stop
lr_check "reflect.mode (peer with GRO alone)" "$(lr_jget "$F" .reflect.mode)" == generic
lr_check "send --rtt exit code" "$SRC" == 0
check_exact
ip netns exec "$RTR" ethtool -K r1 gro off || lr_die "ethtool -K r1 gro off failed in the router"

# ---- 3. container to container over a bridge ---------------------------------------------------
lr_log "== bridge lab: c1 -> c2"
P=lr-rfl-$$
lr_lab_prefix "$P"
lr_lab up up bridge --prefix "$P"
[[ $LAB_RC == 0 ]] || { lr_show_file "$LR_TMP/up.err"; lr_die "scripts/lab up bridge failed"; }
reflect_start "$P-bridge-c2" eth0
rtt_send "$P-bridge-c1" eth0 198.18.2.3
reflect_stop
check_exact
lr_check "reflect.packets" "$(lr_jget "$F" .reflect.packets)" == "$COUNT"
lr_check_cmd "no XDP program left on c2's eth0" lr_xdp_absent "$P-bridge-c2" eth0

lr_finish
