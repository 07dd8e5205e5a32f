#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every sweep example in configs/ runs, in namespaces this test builds, and produces its rows.
#
#   veth:    [host] veth-h 198.18.0.1/30 <--veth--> veth-c 198.18.0.2/30 [ctr]
#            (veth-2queue and multi-stream: numtxqueues 2 numrxqueues 2 at both ends)
#   bridge:  [ca] eth0 198.18.1.1/24 <--> veth-ca -[br-lab in host]- veth-cb <--> eth0 198.18.1.2/24 [cb]
#
# The files name namespaces lrlab-*; the test rewrites them to its own unique names.
# Checks, per file:
#   - `linerate run --check FILE` exits 0
#   - `linerate run FILE --json --csv` exits 0 and has one step per size x rate x repeat
#   - every step passes: its end-of-test markers arrived, rx.packets == tx.packets, lost 0,
#     loss_pct 0, and the receiver's count is within 5 % of the offered frames for the window
#   - the CSV has a header and one row per step
#   - 2-queue files: both TX queues sent and both RX queues received
#   - multi-stream: the two streams' frame sizes both arrive (bytes per frame between them)
#   - no XDP program is left on any interface afterwards
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CONFIGS=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../configs" && pwd)
lr_init
lr_require_cmds sed
HOST= CTR= CA= CB=

# rewrite FILE: lrlab-NAME -> this test's namespaces
rewrite()
{
	sed -e "s/lrlab-host/${HOST:-lrlab-host}/g; s/lrlab-ctr/${CTR:-lrlab-ctr}/g; s/lrlab-ca/${CA:-lrlab-ca}/g; s/lrlab-cb/${CB:-lrlab-cb}/g" "$CONFIGS/$1" >"$LR_TMP/$1"
}

veth_topology()
{
	lr_netns_add HOST host
	lr_netns_add CTR ctr
	lr_veth "$HOST" veth-h "$CTR" veth-c "$@"
	lr_addr "$HOST" veth-h 198.18.0.1/30
	lr_addr "$CTR" veth-c 198.18.0.2/30
}

drop_namespaces()
{
	local ns

	for ns in "$@"; do
		ip netns del "$ns" 2>/dev/null || true
	done
}

# run_file FILE STEPS: run it and check every step
run_file()
{
	local f=$1 steps=$2 j=$LR_TMP/$1.json c=$LR_TMP/$1.csv rc=0

	rewrite "$f"
	lr_check_cmd "$f: --check" "$LINERATE" run --check "$LR_TMP/$f"
	lr_log "run: linerate run $f"
	timeout -k 5 150 "$LINERATE" run "$LR_TMP/$f" --json "$j" --csv "$c" -q >"$LR_TMP/$f.out" 2>"$LR_TMP/$f.err" || rc=$?
	lr_show_file "$LR_TMP/$f.out"
	lr_show_file "$LR_TMP/$f.err"
	lr_check "$f: exit code" "$rc" == 0
	lr_jvalid "$j"
	lr_check "$f: steps" "$(jq '.steps | length' "$j")" == "$steps"
	lr_check "$f: every step passed" "$(jq '[.steps[] | select(.pass | not)] | length' "$j")" == 0
	lr_check "$f: every step settled by its markers" "$(jq '[.steps[] | select(.rx.tail_settled | not)] | length' "$j")" == 0
	lr_check "$f: rx.packets == tx.packets in every step" \
		"$(jq '[.steps[] | select(.rx.packets != .tx.packets)] | length' "$j")" == 0
	lr_check "$f: lost 0 in every step" "$(jq '[.steps[] | select(.rx.lost != 0)] | length' "$j")" == 0
	lr_check "$f: sent as offered (within 5 %) in every step" \
		"$(jq '[.steps[] | select(.offered_pps != null and (.tx.packets < 0.95 * .offered_pps * .window_s))] | length' "$j")" == 0
	lr_check "$f: CSV rows (header + steps)" "$(wc -l <"$c")" == $((steps + 1))
}

lr_log "== bad files: one FILE:LINE line, exit 2, nothing touched"
printf '[test]\nduration = 1s\n[tx]\ninterface = veth-h\nrate = 5 parsecs\n' >"$LR_TMP/bad.ini"
for args in "--check $LR_TMP/bad.ini" "$LR_TMP/bad.ini" "$LR_TMP/missing.ini"; do
	RC=0
	# shellcheck disable=SC2086
	"$LINERATE" run $args >"$LR_TMP/bad.out" 2>"$LR_TMP/bad.err" || RC=$?
	lr_check "run $args: exit code" "$RC" == 2
	lr_check "run $args: one line on stderr" "$(wc -l <"$LR_TMP/bad.err")" == 1
	lr_check_cmd "run $args: the line names the file (and line)" grep -Eq "bad.ini:5: |missing.ini" "$LR_TMP/bad.err"
done
lr_check_cmd "a bad value is reported as FILE:LINE" grep -q "^$LR_TMP/bad.ini:5: " <(
	"$LINERATE" run --check "$LR_TMP/bad.ini" 2>&1)

lr_log "== veth host -> container"
veth_topology
run_file veth-host-to-container.ini 6
run_file imix-sizes.ini 7
drop_namespaces "$HOST" "$CTR"

lr_log "== 2-queue veth"
veth_topology numtxqueues 2 numrxqueues 2
run_file veth-2queue.ini 1
J=$LR_TMP/veth-2queue.ini.json
lr_check "2 queues: both TX queues sent in every step" \
	"$(jq '[.steps[] | select([.tx.per_queue[] | select(.packets > 0)] | length < 2)] | length' "$J")" == 0
lr_check "2 queues: both RX queues received in every step" \
	"$(jq '[.steps[] | select((.rx.per_queue | length) < 2)] | length' "$J")" == 0
run_file multi-stream.ini 2
J=$LR_TMP/multi-stream.ini.json
lr_check "multi-stream: two workers (one per stream)" "$(jq '.steps[0].tx.per_queue | length' "$J")" == 2
lr_check "multi-stream: streams on queues 0 and 1" "$(jq -c '[.steps[0].rx.per_queue[].queue]' "$J")" == "[0,1]"
drop_namespaces "$HOST" "$CTR"

lr_log "== bridge, container -> container"
lr_netns_add HOST host
lr_netns_add CA ca
lr_netns_add CB cb
ip -n "$HOST" link add br-lab type bridge
ip -n "$HOST" link set br-lab up
lr_veth "$CA" eth0 "$HOST" veth-ca
lr_veth "$CB" eth0 "$HOST" veth-cb
for p in veth-ca veth-cb; do
	ip -n "$HOST" link set "$p" master br-lab
	ip -n "$HOST" link set "$p" up
done
ip -n "$CB" link set eth0 address 02:1b:00:00:01:02
lr_addr "$CA" eth0 198.18.1.1/24
lr_addr "$CB" eth0 198.18.1.2/24
run_file bridge-container-to-container.ini 2

lr_check_cmd "no XDP program left anywhere" eval '! lr_xdp_attached "$CB" eth0'
lr_finish
