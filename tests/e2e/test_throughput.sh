#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# RFC 2544 zero-loss throughput search (configs/rfc2544-throughput.ini) through a router namespace.
#
#   P-routed-host          P-routed-rtr (ip_forward=1)                   P-routed-c1
#   +----------------+     +-----------------------------------------+     +----------------+
#   | [tx] veth0     |<--->| eth0 198.18.5.254     eth1 198.18.6.254 |<--->| [rx] eth0      |
#   | 198.18.5.1/24  | veth|  nft forward: test data frames only:    |veth | 198.18.6.2/24  |
#   +----------------+     |   (1) limit rate over 50000/second drop |     +----------------+
#                          |   (2) numgen inc mod 50 == 0 drop       |
#                          +-----------------------------------------+
#   (P = lrtpPID: `scripts/lab up routed --prefix P`, the file's header command, builds it; the
#    test runs a copy of the file with lrlab- rewritten to P-, and the trap takes the lab down)
#
# Checks:
#   - with the 50 kpps policer, for 64 and 512 B: the search finds a zero-loss rate, within 10 %
#     below 50 kpps (45000..50000), reports its latency, and the JSON lists every trial, the
#     first at the 200 kpps upper bound (lossy), the found rate's trial with 0 lost
#   - with every 50th frame dropped, no rate is loss-free: found false, exit code 3, every trial lossy
#   - with no filter and a 100 Mpps upper bound no sender here reaches: the loss-free trial counts at
#     the rate really sent (rate_pps == that trial's tx.pps), not the offered 100 Mpps
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CONFIGS=$LR_REPO/configs
LAB=$LR_REPO/scripts/lab
PFX=lrtp$$
RTR=$PFX-routed-rtr
lr_init
lr_require_cmds nft sed flock

lr_lab_prefix "$PFX"
timeout -k 5 60 "$LAB" up routed --prefix "$PFX" >"$LR_TMP/lab.out" 2>&1 || {
	lr_show_file "$LR_TMP/lab.out"
	lr_die "scripts/lab up routed failed"
}

ip netns exec "$RTR" nft add table ip lrprobe 2>/dev/null || lr_kernel_lacks "nftables"
ip netns exec "$RTR" nft delete table ip lrprobe

# rules RULE: the router's only filter, on test data frames (magic 0x4c52) so markers always pass
rules()
{
	ip netns exec "$RTR" nft delete table ip lrtp 2>/dev/null || true
	ip netns exec "$RTR" nft -f - <<NFT || lr_die "the router's nftables rules did not load"
table ip lrtp {
	chain forward_lr {
		type filter hook forward priority filter; policy accept;
		udp dport 7447 @th,64,16 0x4c52 $1
	}
}
NFT
}

sed -e "s/lrlab-/$PFX-/g" "$CONFIGS/rfc2544-throughput.ini" >"$LR_TMP/tp.ini"
lr_check_cmd "rfc2544-throughput.ini: --check" "$LINERATE" run --check "$LR_TMP/tp.ini"

lr_log "== policer at 50 kpps"
rules "limit rate over 50000/second drop"
RC=0
timeout -k 5 150 "$LINERATE" run "$LR_TMP/tp.ini" --json "$LR_TMP/pol.json" -q >"$LR_TMP/pol.out" 2>"$LR_TMP/pol.err" || RC=$?
lr_show_file "$LR_TMP/pol.out"
lr_show_file "$LR_TMP/pol.err"
J=$LR_TMP/pol.json
lr_check "exit code" "$RC" == 0
lr_jvalid "$J"
lr_check "mode" "$(lr_jget "$J" .mode)" == throughput
lr_check "sizes searched" "$(jq -c '[.throughput[].size]' "$J")" == "[64,512]"
for i in 0 1; do
	size=$(jq ".throughput[$i].size" "$J")
	lr_check "$size B: found" "$(jq ".throughput[$i].found" "$J")" == true
	rate=$(jq ".throughput[$i].rate_pps" "$J")
	lr_check "$size B: rate >= 45000 (within 10 % below the policer)" "$rate" ">=" 45000
	lr_check "$size B: rate <= 50000 (not above the policer)" "$rate" "<=" 50000
	lr_check "$size B: latency p99 reported" "$(jq ".throughput[$i].latency_p99_ns" "$J")" ">" 0
	lr_check "$size B: first trial at the 200 kpps bound" "$(jq ".throughput[$i].trials[0].offered_pps" "$J")" == 200000
	lr_check "$size B: first trial lossy" "$(jq ".throughput[$i].trials[0].rx.lost > 0" "$J")" == true
	lr_check "$size B: the found rate's trial lost nothing" \
		"$(jq "[.throughput[$i].trials[] | select(.offered_pps == $(jq ".throughput[$i].offered_pps" "$J"))][0].rx.lost" "$J")" == 0
	lr_check "$size B: at most 10 trials" "$(jq ".throughput[$i].trials | length" "$J")" "<=" 10
done

lr_log "== every 50th frame dropped"
rules "numgen inc mod 50 == 0 drop"
sed -i -e 's/^sizes = .*/sizes = 64/' -e 's/^max_trials = .*/max_trials = 6/' "$LR_TMP/tp.ini"
RC=0
timeout -k 5 120 "$LINERATE" run "$LR_TMP/tp.ini" --json "$LR_TMP/drop.json" -q >"$LR_TMP/drop.out" 2>"$LR_TMP/drop.err" || RC=$?
lr_show_file "$LR_TMP/drop.out"
J=$LR_TMP/drop.json
lr_check "exit code (threshold missed)" "$RC" == 3
lr_jvalid "$J"
lr_check "found" "$(jq '.throughput[0].found' "$J")" == false
lr_check "rate_pps" "$(jq '.throughput[0].rate_pps' "$J")" == null
lr_check "trials run" "$(jq '.throughput[0].trials | length' "$J")" == 6
lr_check "every trial lost frames" "$(jq '[.throughput[0].trials[] | select(.rx.lost == 0)] | length' "$J")" == 0
lr_check_cmd "the table says no rate passed" grep -q "no rate passed" "$LR_TMP/drop.out"

lr_log "== an upper bound the sender cannot reach: the zero-loss rate is what it really sent"
rules "counter"
sed -i -e 's/^rates\{0,1\} = .*/rate = 100Mpps/' -e 's/^max_trials = .*/max_trials = 1/' "$LR_TMP/tp.ini"
RC=0
timeout -k 5 120 "$LINERATE" run "$LR_TMP/tp.ini" --json "$LR_TMP/short.json" -q >"$LR_TMP/short.out" 2>"$LR_TMP/short.err" || RC=$?
lr_show_file "$LR_TMP/short.out"
lr_show_file "$LR_TMP/short.err"
J=$LR_TMP/short.json
lr_check "short: exit code" "$RC" == 0
lr_check "short: first trial offered 100 Mpps" "$(jq '.throughput[0].trials[0].offered_pps' "$J")" == 100000000
lr_check "short: the trial lost nothing" "$(jq '.throughput[0].trials[0].rx.lost' "$J")" == 0
lr_check "short: found" "$(jq '.throughput[0].found' "$J")" == true
lr_check "short: offered_pps of the found rate" "$(jq '.throughput[0].offered_pps' "$J")" == 100000000
lr_check "short: rate_pps is the rate really sent (tx.pps, floored), not 100 Mpps" \
	"$(jq '.throughput[0].rate_pps' "$J")" == "$(jq '.throughput[0].trials[0].tx.pps | floor' "$J")"
lr_finish
