#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run's table shows latency only where it is valid: with [rx] agent and clock = estimate over a
# control link too slow for the estimate to hold, p50 and p99 say "n/a" and one line under the
# table says why; on one clock the same figures are printed, as the JSON has them.
#
#   ns lr-run_latency-snd-PID                  ns lr-run_latency-rcv-PID
#   +----------------------------------+       +-------------------------------+
#   | linerate run (the sender)        |       | linerate agent (the receiver) |
#   |   snd0 198.18.0.1/30 ------------|-veth--|-- rcv0 198.18.0.2/30          |
#   |   delay_relay.py 127.0.0.1:17446 |       |                               |
#   |     -> m0 198.18.0.5/30 ---------|-veth--|-- m1 198.18.0.6/30 :7446      |
#   +----------------------------------+       +-------------------------------+
#
# The relay holds every chunk of the control connection 10 ms (no netem needed), so the clock
# estimate's error bound is at least 10 ms, and a veth's latency (microseconds) cannot be valid
# against it: the forced invalid estimate.
#
# Checks:
#   1. clock = estimate through the relay, 2 steps: exit 0; every step's latency_ns clock
#      "estimated", valid false, error_bound_ns >= 10 ms; the table's p50 and p99 are "n/a" in
#      every step, and the CSV's p50_ns and p99_ns empty; one line under the table, "latency n/a in step 1, 2: not valid: ..." in the
#      clock's own words (lr_clock_describe()), naming step 1's error_bound_ns
#   2. the same without clock = estimate (one host, one clock): valid true, and the table's p50 and
#      p99 are the JSON's latency_ns.p50 and .p99 in us to the printed digit, the CSV's in ns; no
#      "latency n/a" line
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

lr_init
lr_require_cmds python3
lr_pair_topology
lr_veth "$SND" m0 "$RCV" m1
lr_addr "$SND" m0 198.18.0.5/30
lr_addr "$RCV" m1 198.18.0.6/30
ip -n "$SND" link set lo up

TOKEN=$LR_TMP/token
(
	umask 077
	echo "the token of this test $$" >"$TOKEN"
)
lr_spawn agent "$LINERATE" agent --netns "$RCV" --listen 198.18.0.6:7446 --token-file "$TOKEN" \
	--ready-file "$LR_TMP/agent.ready"
lr_wait_for_file "$LR_TMP/agent.ready" 10 "$LR_LAST_PID" || {
	lr_show_file "$LR_TMP/agent.err"
	lr_die "the agent never became ready"
}
lr_spawn relay ip netns exec "$SND" python3 "$LR_E2E_DIR/delay_relay.py" 127.0.0.1 17446 198.18.0.6 7446 10 \
	"$LR_TMP/relay.ready"
lr_wait_for_file "$LR_TMP/relay.ready" 10 "$LR_LAST_PID" || {
	lr_show_file "$LR_TMP/relay.err"
	lr_die "the relay never became ready"
}

# cfg NAME [TEST KEYS...]: a sweep of 2 steps at 5 kpps, the receiver on the agent through the relay.
# sender_limited = pass: a busy machine's sender may fall short of the paced rate; the verdict is
# tested in test_throughput and test_configs, not here
cfg()
{
	local name=$1

	shift
	{
		printf '[test]\nname = %s\nduration = 500ms\nrepeat = 2\ncost = no\nsender_limited = pass\n' "$name"
		printf '%s\n' "$@"
		printf '[tx]\ninterface = snd0\ndst_ip = 198.18.0.2\nrate = 5k\n'
		printf '[rx]\nagent = 127.0.0.1:17446\ntoken_file = %s\ninterface = rcv0\n' "$TOKEN"
	} >"$LR_TMP/$name.ini"
}

# run NAME: linerate run NAME.ini in the sender's namespace; RC, NAME.{out,err,json,csv}.
run()
{
	RC=0
	timeout -k 5 90 ip netns exec "$SND" "$LINERATE" run "$LR_TMP/$1.ini" -q --json "$LR_TMP/$1.json" \
		--csv "$LR_TMP/$1.csv" >"$LR_TMP/$1.out" 2>"$LR_TMP/$1.err" || RC=$?
	lr_show_file "$LR_TMP/$1.out"
	lr_show_file "$LR_TMP/$1.err"
}

# cols FILE: "STEP P50 P99" for each row of the table (fixed columns: see print_steps() in run_report.c).
cols()
{
	awk '/^step +size/ { t = 1; next }
		t && /^[0-9]+ / { a = substr($0, 76, 8); b = substr($0, 85, 8); gsub(/ /, "", a); gsub(/ /, "", b)
			print $1, a, b; next }
		{ t = 0 }' "$1"
}

# csv_lat FILE: "STEP P50_NS P99_NS" of each CSV row, "-" for an empty field (by the header's names).
csv_lat()
{
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ a = $c["p50_ns"]; b = $c["p99_ns"]; print $c["step"], a == "" ? "-" : a, b == "" ? "-" : b }' "$1"
}

lr_log "== clock = estimate over a slow control link: latency not valid, shown as n/a"
cfg est "clock = estimate"
run est
J=$LR_TMP/est.json
lr_check "estimate: exit code" "$RC" == 0
lr_jvalid "$J"
lr_check "estimate: steps" "$(jq '.steps | length' "$J")" == 2
lr_check "estimate: every step's clock is estimated" \
	"$(jq -r '[.steps[].latency_ns.clock] | unique | join(",")' "$J")" == estimated
lr_check "estimate: every step's latency not valid" "$(jq '[.steps[].latency_ns.valid] | unique' -c "$J")" == '[false]'
lr_check "estimate: error_bound_ns >= 10 ms (the relay's delay)" \
	"$(jq '[.steps[].latency_ns.error_bound_ns] | min' "$J")" ">=" 10000000
lr_check "estimate: table rows with p50 and p99 n/a" "$(cols "$LR_TMP/est.out" | grep -c ' n/a n/a$' || true)" == 2
lr_check "estimate: table rows" "$(cols "$LR_TMP/est.out" | wc -l)" == 2
lr_check "estimate: the CSV's p50_ns and p99_ns are empty in every row" "$(csv_lat "$LR_TMP/est.csv" | tr '\n' ' ')" \
	== "1 - - 2 - - "
BOUND=$(jq '.steps[0].latency_ns.error_bound_ns' "$J")
lr_check "estimate: one line says why, under the table" \
	"$(grep -c "^latency n/a in step 1, 2: not valid: .*known to $BOUND ns" "$LR_TMP/est.out" || true)" == 1

lr_log "== one host, one clock (no estimate asked): the figures, as the JSON has them"
cfg same
run same
J=$LR_TMP/same.json
lr_check "one clock: exit code" "$RC" == 0
lr_jvalid "$J"
lr_check "one clock: every step's clock is same_host" \
	"$(jq -r '[.steps[].latency_ns.clock] | unique | join(",")' "$J")" == same_host
lr_check "one clock: every step's latency valid" "$(jq '[.steps[].latency_ns.valid] | unique' -c "$J")" == '[true]'
WANT=$(jq -r '.steps | to_entries[] | "\(.key + 1) \(.value.latency_ns.p50) \(.value.latency_ns.p99)"' "$J" |
	awk '{ printf "%d %.1f %.1f\n", $1, $2 / 1e3, $3 / 1e3 }')
GOT=$(cols "$LR_TMP/same.out" | awk '{ printf "%d %s %s\n", $1, $2, $3 }')
lr_check "one clock: the table's p50 and p99 are the JSON's, in us" "$GOT" == "$WANT"
lr_check "one clock: the CSV's p50_ns and p99_ns are the JSON's" "$(csv_lat "$LR_TMP/same.csv")" == \
	"$(jq -r '.steps | to_entries[] | "\(.key + 1) \(.value.latency_ns.p50) \(.value.latency_ns.p99)"' "$J")"
lr_check "one clock: no 'latency n/a' line" "$(grep -c '^latency n/a' "$LR_TMP/same.out" || true)" == 0
lr_finish
