#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# linerate matrix: three "nodes" (namespaces), an agent on each, a controller that finds them by
# one name, as a Kubernetes Job finds a DaemonSet's pods through a headless Service.
#
#   [lr-matrix-n1-PID]        [lr-matrix-n2-PID]        [lr-matrix-n3-PID]        [lr-matrix-ctl-PID]
#   dm0 198.18.30.1/24        dm0 198.18.30.2/24        dm0 198.18.30.3/24     (dm0 <-> dm1: a veth
#   eth0 198.18.10.1/24       eth0 198.18.10.2/24       eth0 198.18.10.3/24      pair in the node)
#                                                                                 eth0 198.18.10.100/24
#   agent on 198.18.10.1      agent on 198.18.10.2      agent on 198.18.10.3      linerate matrix
#        |                         |                         |                         |
#   +----+------------------------ br0 (bridge) ------------+-------------------------+----+
#   |                          [lr-matrix-sw-PID]   nft bridge forward (loss case only)    |
#   +--------------------------------------------------------------------------------------+
#
# The controller runs under `ip netns exec CTL`, which puts /etc/netns/CTL/hosts over /etc/hosts:
# there "agents.lrmx" is the three nodes' addresses (out of order), "n1.lrmx" .. "n3.lrmx" one
# each. 198.18.10.9 is on the bridge's subnet and nobody holds it. dm0, an interface of each node
# created before eth0, is what a sender must not pick: the route to the far end leaves by eth0. Every send is bounded (--count 2000 at 20 kpps, 0.1 s a cell) and every command by timeout.
#
# Checks:
#   - glibc's getaddrinfo() gives all three addresses of the name from the hosts file (else the
#     test cannot say it found agents by name: a failure, not a skip)
#   - the whole matrix by name, sizes 64 and 1518: exit 0; 3 agents (sorted, each with its host
#     facts), 3 pairs, 12 cells = the 6 ordered pairs x 2 sizes, in order; in every cell
#     tx.packets == rx.packets == 2000, rx.lost 0, tail settled, sent from eth0 and counted on eth0,
#     latency valid (one host); the table on stdout has a row per cell, the CSV 12 rows; with
#     --json - stdout is the JSON alone and the table goes to stderr
#   - --pairs with one pair (by name): 2 x 2 sizes = 4 cells, both ways, exact
#   - an unreachable agent (198.18.10.9) in the list: exit 1, each of its 6 cells reported on
#     stderr and in the JSON with an error naming it, the other 6 cells exact; no retry of it
#   - loss: an nft rule on the bridge drops every 50th test frame from n1 to n2: with
#     --max-loss 1 that cell loses exactly 40 of 2000 (2 %) and fails, n2 -> n1 passes: exit 3
#   - bad input (exit 2, one line on stderr, nothing on stdout, no agent asked): an unknown
#     --family, a bad --rate, one agent only, a name that does not resolve, a --pairs file with a
#     bad line (named as FILE:LINE), a pair of an agent with itself, --sizes 63
#   - the agents log no refusal, and stay up throughout
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COUNT=2000
RATE=20k
NAME=agents.lrmx
GONE=198.18.10.9

lr_init
lr_require_cmds nft getent
lr_netns_add SW sw
lr_netns_add N1 n1
lr_netns_add N2 n2
lr_netns_add N3 n3
lr_netns_add CTL ctl
NODES=("$N1" "$N2" "$N3")
ADDRS=(198.18.10.1 198.18.10.2 198.18.10.3)

# /etc/netns/CTL is this test's own (its namespace's name holds our PID); it goes with the rest.
# shellcheck disable=SC2317 # run by the trap
matrix_cleanup()
{
	local rc=$?

	set +e
	[[ -n ${CTL:-} ]] && rm -rf "/etc/netns/$CTL"
	# /etc/netns itself, when this test made it and nobody else put anything there since
	((${MADE_ETC_NETNS:-0})) && rmdir /etc/netns 2>/dev/null
	(exit "$rc")
	lr_cleanup
}
trap matrix_cleanup EXIT

ip -n "$SW" link add br0 type bridge || lr_die "cannot make a bridge in $SW"
ip -n "$SW" link set br0 up
for i in 0 1 2; do
	lr_veth "${NODES[$i]}" dm0 "${NODES[$i]}" dm1
	lr_addr "${NODES[$i]}" dm0 "198.18.30.$((i + 1))/24"
	lr_veth "${NODES[$i]}" eth0 "$SW" "p$((i + 1))"
	lr_addr "${NODES[$i]}" eth0 "${ADDRS[$i]}/24"
	ip -n "$SW" link set "p$((i + 1))" master br0 up
done
lr_veth "$CTL" eth0 "$SW" pc
lr_addr "$CTL" eth0 198.18.10.100/24
ip -n "$SW" link set pc master br0 up

MADE_ETC_NETNS=0
[[ -d /etc/netns ]] || MADE_ETC_NETNS=1
mkdir -p "/etc/netns/$CTL"
cat >"/etc/netns/$CTL/hosts" <<EOF
127.0.0.1 localhost
198.18.10.3 $NAME
198.18.10.1 $NAME
198.18.10.2 $NAME
198.18.10.1 n1.lrmx
198.18.10.2 n2.lrmx
198.18.10.3 n3.lrmx
EOF
got=$(ip netns exec "$CTL" getent ahostsv4 "$NAME" | awk '$2 == "STREAM" { print $1 }' | sort | tr '\n' ' ')
[[ $got == "198.18.10.1 198.18.10.2 198.18.10.3 " ]] ||
	lr_die "getaddrinfo($NAME) in $CTL gives '$got', not the three addresses of /etc/netns/$CTL/hosts"
lr_pass "getaddrinfo($NAME) gives all three addresses of the hosts file"

TOKEN=$LR_TMP/token
(
	umask 077
	echo "the token of this matrix $$" >"$TOKEN"
)

AGENT_PIDS=()
for i in 0 1 2; do
	lr_spawn "agent$((i + 1))" ip netns exec "${NODES[$i]}" "$LINERATE" agent --listen "${ADDRS[$i]}" \
		--token-file "$TOKEN" --ready-file "$LR_TMP/agent$((i + 1)).ready"
	lr_wait_for_file "$LR_TMP/agent$((i + 1)).ready" 10 "$LR_LAST_PID" || {
		lr_show_file "$LR_TMP/agent$((i + 1)).err"
		lr_die "agent $((i + 1)) never became ready"
	}
	AGENT_PIDS+=("$LR_LAST_PID")
done

# matrix NAME ARGS...: linerate matrix ARGS in the controller's namespace, bounded; RC, NAME.{out,err}.
matrix()
{
	local name=$1

	shift
	RC=0
	lr_log "run: matrix $*"
	timeout -k 5 120 ip netns exec "$CTL" "$LINERATE" matrix "$@" >"$LR_TMP/$name.out" 2>"$LR_TMP/$name.err" ||
		RC=$?
}

# exact JSON DESC JQ-SELECT: every cell the selection picks sent and received exactly COUNT.
exact()
{
	local j=$1 desc=$2 sel=$3

	lr_check "$desc: cells whose tx.packets != $COUNT" \
		"$(jq "[$sel | select(.tx.packets != $COUNT)] | length" "$j")" == 0
	lr_check "$desc: cells whose rx.packets != $COUNT" \
		"$(jq "[$sel | select(.rx.packets != $COUNT)] | length" "$j")" == 0
	lr_check "$desc: cells with a loss, a duplicate or an open tail" \
		"$(jq "[$sel | select(.rx.lost != 0 or .rx.duplicates != 0 or .rx.tail_settled != true)] | length" "$j")" == 0
	lr_check "$desc: cells not sent from eth0 or not counted on eth0" \
		"$(jq "[$sel | select(.tx_interface != \"eth0\" or .rx_interface != \"eth0\")] | length" "$j")" == 0
	lr_check "$desc: cells without a valid latency" \
		"$(jq "[$sel | select(.latency_ns.valid != true or .latency_ns.p50 <= 0)] | length" "$j")" == 0
}

# ---------------------------------------------------------------------------------------------
# The whole matrix, found by name.

RX_BEFORE=()
for i in 0 1 2; do
	RX_BEFORE+=("$(lr_rx_packets "${NODES[$i]}" eth0)")
done
matrix full --agents "$NAME" --token-file "$TOKEN" --sizes 64,1518 --count "$COUNT" --rate "$RATE" \
	--json "$LR_TMP/full.json" --csv "$LR_TMP/full.csv"
J=$LR_TMP/full.json
# the kernel's count on each node's eth0 against what the cells counted there
for i in 0 1 2; do
	lr_check "full: node $((i + 1)) eth0 rx_packets (kernel) >= the rx.packets of its cells" \
		"$(($(lr_rx_packets "${NODES[$i]}" eth0) - RX_BEFORE[i]))" ">=" \
		"$(jq --arg a "${ADDRS[$i]}:7446" '[.cells[] | select(.rx_agent == $a) | .rx.packets] | add // "none"' "$J")"
done
lr_show_file "$LR_TMP/full.out"
lr_show_file "$LR_TMP/full.err"
lr_check "full: exit code" "$RC" == 0
lr_jvalid "$J"
lr_check "full: command" "$(lr_jget "$J" .command)" == matrix
lr_check "full: schema" "$(lr_jget "$J" .schema)" == 8
lr_check "full: agents, sorted" "$(jq -r '[.agents[].agent] | join(" ")' "$J")" == \
	"198.18.10.1:7446 198.18.10.2:7446 198.18.10.3:7446"
lr_check "full: every agent reached, its host facts kept" \
	"$(jq '[.agents[] | select(.error == null and .entry == "'"$NAME"'" and (.host.boot_id | length) == 36)] | length' "$J")" == 3
lr_check "full: pairs" "$(jq -c '.pairs' "$J")" == \
	'[["198.18.10.1:7446","198.18.10.2:7446"],["198.18.10.1:7446","198.18.10.3:7446"],["198.18.10.2:7446","198.18.10.3:7446"]]'
lr_check "full: cells" "$(jq '.cells | length' "$J")" == 12
lr_check "full: the 6 ordered pairs, each at 64 and 1518" \
	"$(jq -r '[.cells[] | "\(.tx_agent)>\(.rx_agent)"] | group_by(.) | map("\(.[0])x\(length)") | join(" ")' "$J")" == \
	"198.18.10.1:7446>198.18.10.2:7446x2 198.18.10.1:7446>198.18.10.3:7446x2 198.18.10.2:7446>198.18.10.1:7446x2 198.18.10.2:7446>198.18.10.3:7446x2 198.18.10.3:7446>198.18.10.1:7446x2 198.18.10.3:7446>198.18.10.2:7446x2"
lr_check "full: cell order (pair, then each way, then size)" \
	"$(jq -r '[.cells[0:4][] | "\(.tx_agent|split(":")[0]|split(".")[3])\(.rx_agent|split(":")[0]|split(".")[3])/\(.size)"] | join(" ")' "$J")" == \
	"12/64 12/1518 21/64 21/1518"
lr_check "full: cells with an error" "$(jq '[.cells[] | select(.error != null)] | length' "$J")" == 0
exact "$J" full '.cells[]'
lr_check "full: every cell passes" "$(jq '[.cells[] | select(.pass != true)] | length' "$J")" == 0
lr_check "full: summary" "$(jq -c '.summary' "$J")" == '{"cells":12,"passed":12,"failed":0,"errors":0}'
lr_check "full: 1518-byte cells carried 1514-byte frames" \
	"$(jq '[.cells[] | select(.size == 1518 and .rx.bytes != 2000 * 1514)] | length' "$J")" == 0
lr_check "full: L1 and L2 rates in every cell" \
	"$(jq '[.cells[] | select(.rx.bps_l1 > .rx.bps_l2 and .rx.bps_l2 > 0 and .tx.bps_l1 > 0)] | length' "$J")" == 12
lr_check "full: a table row per cell on stdout" \
	"$(grep -cE '^[0-9]+ +198\.18\.10\.[123]:7446 +198\.18\.10\.[123]:7446 +(64|1518) +2000 +2000 +0 ' "$LR_TMP/full.out")" == 12
lr_check "full: CSV rows" "$(wc -l <"$LR_TMP/full.csv")" == 13
lr_check "full: CSV rows of 2000 and 2000" "$(awk -F, 'NR > 1 && $8 == 2000 && $9 == 2000 && $10 == 0' "$LR_TMP/full.csv" | wc -l)" == 12

# --json -: stdout is the document alone, the table on stderr
matrix stdout --agents "$NAME" --token-file "$TOKEN" --count "$COUNT" --rate "$RATE" --json - --quiet
lr_check "--json -: exit code" "$RC" == 0
lr_check "--json -: stdout is one JSON document with 6 cells" "$(jq '.cells | length' "$LR_TMP/stdout.out" 2>&1)" == 6
lr_check "--json -: the table on stderr" "$(grep -c '^cell ' "$LR_TMP/stdout.err")" == 1
exact "$LR_TMP/stdout.out" "--json -" '.cells[]'

# ---------------------------------------------------------------------------------------------
# A pairs file: one pair, both ways.

printf '# one pair\n\nn3.lrmx   n1.lrmx   # by name\n' >"$LR_TMP/one.pairs"
matrix pairs --agents "$NAME" --token-file "$TOKEN" --pairs "$LR_TMP/one.pairs" --sizes 64,1518 \
	--count "$COUNT" --rate "$RATE" --json "$LR_TMP/pairs.json"
J=$LR_TMP/pairs.json
lr_show_file "$LR_TMP/pairs.err"
lr_check "pairs: exit code" "$RC" == 0
lr_check "pairs: pairs" "$(jq -c '.pairs' "$J")" == '[["198.18.10.3:7446","198.18.10.1:7446"]]'
lr_check "pairs: cells (2 ways x 2 sizes)" \
	"$(jq -r '[.cells[] | "\(.tx_agent|split(":")[0]|split(".")[3])\(.rx_agent|split(":")[0]|split(".")[3])/\(.size)"] | join(" ")' "$J")" == \
	"31/64 31/1518 13/64 13/1518"
exact "$J" pairs '.cells[]'

# ---------------------------------------------------------------------------------------------
# An agent nobody answers for: its cells are errors, the others run.

t0=$(lr_now_ns)
matrix gone --agents "$NAME,$GONE" --token-file "$TOKEN" --count "$COUNT" --rate "$RATE" --json "$LR_TMP/gone.json"
secs=$((($(lr_now_ns) - t0) / 1000000000))
J=$LR_TMP/gone.json
lr_show_file "$LR_TMP/gone.err"
lr_check "unreachable agent: exit code" "$RC" == 1
lr_check "unreachable agent: cells" "$(jq '.cells | length' "$J")" == 12
lr_check "unreachable agent: its cells are errors naming it" \
	"$(jq '[.cells[] | select(.error != null and (.error | contains("'"$GONE"':7446")) and .tx == null and .pass == false)] | length' "$J")" == 6
lr_check "unreachable agent: only its cells" \
	"$(jq '[.cells[] | select(.error != null and .tx_agent != "'"$GONE"':7446" and .rx_agent != "'"$GONE"':7446")] | length' "$J")" == 0
lr_check "unreachable agent: the agent list says why" \
	"$(jq -r '.agents[] | select(.agent == "'"$GONE"':7446") | .error | length > 0' "$J")" == true
exact "$J" "unreachable agent, the other cells" '.cells[] | select(.error == null)'
lr_check "unreachable agent: a line per failed cell, naming it" \
	"$(grep -cE "^linerate matrix: cell [0-9]+/12, .*$GONE.*: not run: " "$LR_TMP/gone.err")" == 6
lr_check "unreachable agent: summary" "$(jq -c '.summary' "$J")" == '{"cells":12,"passed":6,"failed":0,"errors":6}'
lr_check "unreachable agent: tried once, not once per cell (seconds)" "$secs" "<" 30

# ---------------------------------------------------------------------------------------------
# Loss on one way of one pair: every 50th test frame from n1 to n2 dropped on the bridge.

ip netns exec "$SW" nft add table bridge lrprobe 2>/dev/null || lr_kernel_lacks "nftables in the bridge family"
ip netns exec "$SW" nft delete table bridge lrprobe
# data frames only ("LR", include/linerate/probe.h): the end-of-test markers all pass, so the loss is exact
ip netns exec "$SW" nft -f - <<NFT || lr_die "loading the nftables ruleset failed (see above)"
table bridge lrmx {
	chain forward_lr {
		type filter hook forward priority filter; policy accept;
		ip saddr 198.18.10.1 ip daddr 198.18.10.2 udp dport 7447 @th,64,16 0x4c52 numgen inc mod 50 == 0 counter drop
	}
}
NFT
printf 'n1.lrmx n2.lrmx\n' >"$LR_TMP/loss.pairs"
matrix loss --agents "$NAME" --token-file "$TOKEN" --pairs "$LR_TMP/loss.pairs" --count "$COUNT" --rate "$RATE" \
	--max-loss 1 --json "$LR_TMP/loss.json"
ip netns exec "$SW" nft delete table bridge lrmx
J=$LR_TMP/loss.json
lr_show_file "$LR_TMP/loss.out"
lr_show_file "$LR_TMP/loss.err"
lr_check "loss: exit code" "$RC" == 3
lr_check "loss: n1 -> n2 lost every 50th frame" \
	"$(jq '.cells[] | select(.tx_agent == "198.18.10.1:7446") | .rx.lost' "$J")" == $((COUNT / 50))
lr_check "loss: n1 -> n2 loss %" "$(jq '.cells[] | select(.tx_agent == "198.18.10.1:7446") | .loss_pct' "$J")" == 2
lr_check "loss: n1 -> n2 fails, saying why" \
	"$(jq -r '.cells[] | select(.tx_agent == "198.18.10.1:7446") | "\(.pass) \(.fail_reason)"' "$J")" == \
	"false loss 2.000% > 1%"
lr_check "loss: n2 -> n1 passes" \
	"$(jq -r '.cells[] | select(.tx_agent == "198.18.10.2:7446") | "\(.pass) \(.rx.lost) \(.rx.packets)"' "$J")" == \
	"true 0 $COUNT"
lr_check "loss: the thresholds in the document" "$(jq -c '.thresholds' "$J")" == '{"max_loss_pct":1,"min_pps":null}'
lr_check "loss: the table says NO" "$(grep -c ' NO: loss 2.000% > 1%$' "$LR_TMP/loss.out")" == 1

# ---------------------------------------------------------------------------------------------
# Bad input: exit 2, one line, nothing else, before any agent is asked.

printf 'n1.lrmx n2.lrmx\nn1.lrmx n2.lrmx n3.lrmx\n' >"$LR_TMP/bad.pairs"
printf 'n1.lrmx 198.18.10.1:7446\n' >"$LR_TMP/self.pairs"
# usage NAME REGEX ARGS...
usage()
{
	local name=$1 re=$2

	shift 2
	matrix "$name" "$@"
	lr_check "$name: exit code" "$RC" == 2
	lr_check "$name: lines on stderr" "$(awk 'END { print NR }' "$LR_TMP/$name.err")" == 1
	lr_check "$name: nothing on stdout" "$(wc -c <"$LR_TMP/$name.out")" == 0
	if grep -qE -- "$re" "$LR_TMP/$name.err"; then
		lr_pass "$name: says /$re/"
	else
		lr_fail "$name: says /$re/" "$(head -c 300 "$LR_TMP/$name.err")"
	fi
}
usage bad_family "^linerate matrix: --family: 'ipv5' is not one of auto, ipv4, ipv6" \
	--agents "$NAME" --family ipv5 --count 10
usage bad_rate "^linerate matrix: --rate: '5 parsecs' is not a rate" --agents "$NAME" --rate "5 parsecs" --count 10
usage one_agent "^linerate matrix: --agents: one agent only; a pair needs two agents" --agents n1.lrmx --count 10
usage one_agent_twice "one agent only" --agents n1.lrmx,198.18.10.1 --count 10
usage no_such_name "^linerate matrix: --agents: 'nosuch.lrmx': " --agents "$NAME,nosuch.lrmx" --count 10
usage bad_pairs "^linerate matrix: $LR_TMP/bad.pairs:2: 3 agents where a pair names two" \
	--agents "$NAME" --pairs "$LR_TMP/bad.pairs" --token-file "$TOKEN" --count 10
usage self_pair "self.pairs:1: 'n1.lrmx' and '198.18.10.1:7446' are one agent" \
	--agents "$NAME" --pairs "$LR_TMP/self.pairs" --token-file "$TOKEN" --count 10
usage small_size "^linerate matrix: --sizes: '63' is not a frame size" --agents "$NAME" --sizes 64,63 --count 10

# ---------------------------------------------------------------------------------------------
# The agents: up throughout, and they refused nothing.

for i in 0 1 2; do
	lr_check_cmd "agent $((i + 1)) still running" kill -0 "${AGENT_PIDS[$i]}"
	lr_check "agent $((i + 1)): refusals logged" "$(grep -c 'refused' "$LR_TMP/agent$((i + 1)).err" || true)" == 0
	lr_check "agent $((i + 1)): tests on eth0 logged" \
		"$(grep -cE ': test (tx|rx) on eth0: ' "$LR_TMP/agent$((i + 1)).err" || true)" ">" 0
	lr_check_cmd "node $((i + 1)): no XDP program left" lr_xdp_absent "${NODES[$i]}"
done
lr_finish
