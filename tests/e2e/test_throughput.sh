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
# Checks (what the search must satisfy whatever the machine's load; no rate is asserted here):
#   - with the 50 kpps policer and sender_limited = pass (a busy machine's sender falls short even
#     of 1 kpps), for 64 and 512 B: the search finds a zero-loss rate, not capped; the first trial,
#     at the 10 Mpps upper bound, failed; some trial lost frames (the policer); the found rate's
#     trial passed with 0 lost; every trial offered above it failed; the search stopped with the
#     lowest failing rate within the 5 % resolution, at max_trials, or on a short sender; latency
#     reported; the JSON lists every trial
#   - with every 50th frame dropped, no rate is loss-free: found false, exit code 3, every trial lossy
#   - an upper bound of 1 kpps on the bare router (sender_limited = pass: a busy machine's sender
#     may fall short even of that): the first trial passes, so one trial, capped, and the table
#     says "at least ... the upper bound passed"
#   - a 100 Mpps bound no sender here reaches: with sender_limited = fail (the default), a sweep step
#     and a search trial fail as sender-limited (the table's pass column says so), exit code 3; with
#     sender_limited = pass, a loss-free trial counts at the rate really sent (rate_pps == tx.pps)
#   - in every step of every run above that lost nothing, |rx pps - tx pps| <= 0.5 % of tx pps:
#     both rates are over the sender's window (an identity, not a rate floor)
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

# identical J...: in every settled step that lost nothing, rx pps and tx pps agree within 0.5 %
identical()
{
	local n bad

	read -r n bad < <(jq -rs '[.[].steps[] | select(.rx.lost == 0 and .rx.tail_settled and .tx.pps > 0)]
		| [length, ([.[] | select((.rx.pps - .tx.pps | if . < 0 then -. else . end) > 0.005 * .tx.pps)
			| "\(.rx.pps) vs \(.tx.pps)"] | join(", "))] | @tsv' "$@") || n=missing
	lr_check "loss-free steps to compare rx pps with tx pps" "$n" ">" 0
	lr_check "loss-free steps where |rx pps - tx pps| > 0.5 % of tx pps" "${bad:-none}" == none
}

lr_log "== policer at 50 kpps"
rules "limit rate over 50000/second drop"
# sender_limited = pass: on a busy machine the sender falls short even of 1 kpps, and with the
# default every trial would fail on that alone; a short passing trial then ends the search
sed -e 's/^\[test\]$/[test]\nsender_limited = pass/' "$LR_TMP/tp.ini" >"$LR_TMP/pol.ini"
RC=0
timeout -k 5 240 "$LINERATE" run "$LR_TMP/pol.ini" --json "$LR_TMP/pol.json" -q >"$LR_TMP/pol.out" 2>"$LR_TMP/pol.err" || RC=$?
lr_show_file "$LR_TMP/pol.out"
lr_show_file "$LR_TMP/pol.err"
J=$LR_TMP/pol.json
lr_check "exit code" "$RC" == 0
lr_jvalid "$J"
lr_check "mode" "$(lr_jget "$J" .mode)" == throughput
lr_check "sizes searched" "$(jq -c '[.throughput[].size]' "$J")" == "[64,512]"
for i in 0 1; do
	T=".throughput[$i]"
	size=$(jq "$T.size" "$J")
	lr_log "$size B: found $(jq "$T.rate_pps" "$J") pps in $(jq "$T.trials | length" "$J") trials (a 50 kpps policer)"
	lr_check "$size B: found" "$(jq "$T.found" "$J")" == true
	lr_check "$size B: not capped" "$(jq "$T.capped" "$J")" == false
	lr_check "$size B: first trial at the 10 Mpps bound" "$(jq "$T.trials[0].offered_pps" "$J")" == 10000000
	lr_check "$size B: first trial failed" "$(jq "$T.trials[0].pass" "$J")" == false
	lr_check "$size B: trials that lost frames (the policer)" "$(jq "[$T.trials[] | select(.rx.lost > 0)] | length" "$J")" ">" 0
	lr_check "$size B: the found rate's trial passed and lost nothing" \
		"$(jq -c "$T as \$t | [\$t.trials[] | select(.offered_pps == \$t.offered_pps) | [.pass, .rx.lost]][0]" "$J")" == "[true,0]"
	# (a passing trial offered above it whose sender fell short tested a lower rate: not counted)
	lr_check "$size B: trials offered above the found rate that passed at the rate offered" \
		"$(jq "$T as \$t | [\$t.trials[] | select(.offered_pps > \$t.offered_pps and .pass and
			(.sender_limited | not))] | length" "$J")" == 0
	# why it stopped: the lowest failing rate above the found one within 5 % of it, no trials left,
	# or the found trial's sender fell short (higher offers would only repeat it)
	lr_check "$size B: stopped within the resolution, at max_trials (12) or on a short sender" "$(jq "$T as \$t
		| ([\$t.trials[] | select(.offered_pps > \$t.offered_pps) | .offered_pps] | min) as \$hi
		| (\$hi != null and \$hi - \$t.offered_pps <= 0.05 * \$hi) or (\$t.trials | length) == 12
		  or ([\$t.trials[] | select(.offered_pps == \$t.offered_pps)][0].sender_limited)" "$J")" == true
	lr_check "$size B: latency p99 reported" "$(jq "$T.latency_p99_ns" "$J")" ">" 0
	lr_check "$size B: at most 12 trials" "$(jq "$T.trials | length" "$J")" "<=" 12
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
lr_check "capped" "$(jq '.throughput[0].capped' "$J")" == false
lr_check "rate_pps" "$(jq '.throughput[0].rate_pps' "$J")" == null
lr_check "trials run" "$(jq '.throughput[0].trials | length' "$J")" == 6
lr_check "every trial lost frames" "$(jq '[.throughput[0].trials[] | select(.rx.lost == 0)] | length' "$J")" == 0
lr_check_cmd "the table says no rate passed" grep -q "no rate passed" "$LR_TMP/drop.out"

lr_log "== an upper bound the path passes: capped, said as 'at least'"
rules "counter"
# sender_limited = pass: a busy machine's sender may fall 2 % short even of 1 kpps; the path does not
sed -e 's/^rates\{0,1\} = .*/rate = 1k/' -e 's/^\[test\]$/[test]\nsender_limited = pass/' "$LR_TMP/tp.ini" >"$LR_TMP/cap.ini"
RC=0
timeout -k 5 120 "$LINERATE" run "$LR_TMP/cap.ini" --json "$LR_TMP/cap.json" -q >"$LR_TMP/cap.out" 2>"$LR_TMP/cap.err" || RC=$?
lr_show_file "$LR_TMP/cap.out"
lr_show_file "$LR_TMP/cap.err"
J=$LR_TMP/cap.json
lr_check "capped: exit code" "$RC" == 0
lr_check "capped: one trial, at the bound" "$(jq -c '[.throughput[0].trials[].offered_pps]' "$J")" == "[1000]"
lr_check "capped: found" "$(jq '.throughput[0].found' "$J")" == true
lr_check "capped: throughput[].capped" "$(jq '.throughput[0].capped' "$J")" == true
lr_check_cmd "capped: the table says 'at least ...: the upper bound passed'" \
	grep -Eq "64 B: at least [0-9.]+( k)? pps .*: the upper bound passed" "$LR_TMP/cap.out"

lr_log "== a bound no sender here reaches, sender_limited = fail (the default): the steps fail"
sed -i -e 's/^rates\{0,1\} = .*/rate = 100Mpps/' -e 's/^max_trials = .*/max_trials = 1/' "$LR_TMP/tp.ini"
sed -e 's/^mode = .*/mode = sweep/' "$LR_TMP/tp.ini" >"$LR_TMP/sweep.ini"
RC=0
timeout -k 5 120 "$LINERATE" run "$LR_TMP/sweep.ini" --json "$LR_TMP/sweep.json" -q >"$LR_TMP/sweep.out" 2>"$LR_TMP/sweep.err" || RC=$?
lr_show_file "$LR_TMP/sweep.out"
J=$LR_TMP/sweep.json
lr_check "sweep: exit code (threshold missed)" "$RC" == 3
lr_check "sweep: the step is sender_limited" "$(jq '.steps[0].sender_limited' "$J")" == true
lr_check "sweep: the step did not pass" "$(jq '.steps[0].pass' "$J")" == false
# the pass column: what follows the last run of spaces on step 1's line (the path may lose frames too)
lr_check "sweep: the table's pass column" \
	"$(sed -nE 's/^1 +64 .*  ([^ ].*)$/\1/p' "$LR_TMP/sweep.out" | sed 's/^NO, //')" == sender-limited
RC=0
timeout -k 5 120 "$LINERATE" run "$LR_TMP/tp.ini" --json "$LR_TMP/limited.json" -q >"$LR_TMP/limited.out" 2>"$LR_TMP/limited.err" || RC=$?
lr_show_file "$LR_TMP/limited.out"
J=$LR_TMP/limited.json
lr_check "search: exit code (no rate passed)" "$RC" == 3
lr_check "search: the trial is sender_limited and failed" "$(jq -c '.throughput[0].trials[0] | [.sender_limited, .pass]' "$J")" == "[true,false]"
lr_check "search: found" "$(jq '.throughput[0].found' "$J")" == false

lr_log "== the same bound, sender_limited = pass: the zero-loss rate is what the sender really sent"
sed -i -e 's/^\[test\]$/[test]\nsender_limited = pass/' "$LR_TMP/tp.ini"
RC=0
timeout -k 5 120 "$LINERATE" run "$LR_TMP/tp.ini" --json "$LR_TMP/short.json" -q >"$LR_TMP/short.out" 2>"$LR_TMP/short.err" || RC=$?
lr_show_file "$LR_TMP/short.out"
lr_show_file "$LR_TMP/short.err"
J=$LR_TMP/short.json
lr_check "short: first trial offered 100 Mpps" "$(jq '.throughput[0].trials[0].offered_pps' "$J")" == 100000000
lr_check "short: the trial is sender_limited" "$(jq '.throughput[0].trials[0].sender_limited' "$J")" == true
# whether the path lost frames at the sender's maximum is the machine's; what follows from it is not
if [[ $(jq '.throughput[0].trials[0].rx.lost' "$J") == 0 ]]; then
	lr_check "short: exit code" "$RC" == 0
	lr_check "short: found" "$(jq '.throughput[0].found' "$J")" == true
	lr_check "short: capped" "$(jq '.throughput[0].capped' "$J")" == true
	lr_check "short: offered_pps of the found rate" "$(jq '.throughput[0].offered_pps' "$J")" == 100000000
	lr_check "short: rate_pps is the rate really sent (tx.pps, floored), not 100 Mpps" \
		"$(jq '.throughput[0].rate_pps' "$J")" == "$(jq '.throughput[0].trials[0].tx.pps | floor' "$J")"
	lr_check_cmd "short: the table says the sender fell short of the bound" \
		grep -q "the upper bound passed, its sender short of the 100.000 M offered" "$LR_TMP/short.out"
else
	lr_log "short: the path lost frames at the sender's maximum; the trial fails on its loss"
	lr_check "short: exit code (no rate passed)" "$RC" == 3
	lr_check "short: found" "$(jq '.throughput[0].found' "$J")" == false
fi

lr_log "== one window for both rates"
identical "$LR_TMP"/pol.json "$LR_TMP"/drop.json "$LR_TMP"/cap.json "$LR_TMP"/sweep.json "$LR_TMP"/limited.json "$LR_TMP"/short.json
lr_finish
