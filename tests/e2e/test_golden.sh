#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The keys of the JSON linerate really writes, against tests/golden/json/*.keys: a refactor that
# adds, drops or renames a key fails here. Values differ from run to run; only key paths
# (scripts/golden --keys: tx.per_queue[].queue, arrays as []) are compared.
#
#   ns lr-golden-snd-PID                  ns lr-golden-rcv-PID
#   +---------------------------+         +------------------------------+
#   | send, send --rtt, run     |         | recv, reflect, run's receiver|
#   |   snd0 198.18.0.1/30      |<-veth-->|   rcv0 198.18.0.2/30         |
#   | an agent on its 127.0.0.1 |         | an agent on its 127.0.0.1    |
#   +---------------------------+         +------------------------------+
#
# Checks (each document's key paths equal the golden file's):
#   - send.keys, recv.keys: send --count 2000 --rate 20kpps --json to recv --once --json
#   - run.keys: a 200 ms sweep step at 20 kpps over the same pair (run --json)
#   - send-rtt.keys, reflect.keys: send --rtt --count 2000 --rate 20kpps to reflect --json
#   - agent-rx.keys, agent-tx.keys: an agent's replies to agent_client.py, each reply's type and
#     key paths in order (the waits answered before the test was complete left out): as receiver
#     (hello, prepare_rx, progress, wait, quit) of 2000 frames send delivers; as sender
#     (prepare_tx, start, progress, wait, quit) of 2000 frames to recv --once
# LR_GOLDEN_WRITE=1 writes the golden files instead, after an intended change of the keys.
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COUNT=2000
RATE=20kpps
GOLDEN=$LR_REPO/tests/golden/json
PY=/usr/bin/python3
lr_init
lr_require_cmds diff "$PY"
lr_pair_topology

# Keys a document holds or lacks by timing, left out of both sides: a run step's cost_note is there
# when a part of the cost is missing, e.g. when bpf_stats sampled too few runs in the step.
VARIABLE_KEYS='steps[].cost_note'

# golden NAME FILE: the key paths of the document FILE against $GOLDEN/NAME.keys (or written there).
golden()
{
	local name=$1 file=$2 got=$LR_TMP/$1.keys

	if ! jq -e 'type == "object"' "$file" >/dev/null 2>&1; then
		lr_fail "$name: a JSON document" "$(head -c 300 "$file" 2>/dev/null || echo '<no file>')"
		return 0
	fi
	"$LR_REPO/scripts/golden" --keys "$file" | { grep -vxF "$VARIABLE_KEYS" || true; } >"$got"
	if [[ ${LR_GOLDEN_WRITE:-0} == 1 ]]; then
		mkdir -p "$GOLDEN"
		cp "$got" "$GOLDEN/$name.keys"
		lr_pass "$name: wrote tests/golden/json/$name.keys ($(wc -l <"$got") paths)"
	elif diff -u "$GOLDEN/$name.keys" "$got" >"$LR_TMP/$name.diff" 2>&1; then
		lr_pass "$name: key paths as tests/golden/json/$name.keys ($(wc -l <"$got"))"
	else
		lr_fail "$name: key paths as tests/golden/json/$name.keys" "a difference (- golden, + now)"
		cat "$LR_TMP/$name.diff"
	fi
}

# ---- send and recv ------------------------------------------------------------------------------
lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 "$COUNT" --rate "$RATE"
lr_check "send exit code" "$SEND_RC" == 0
lr_check "recv --once exit code" "$RECV_RC" == 0
golden send "$LR_TMP/send.json"
golden recv "$LR_TMP/recv.json"

# ---- run ----------------------------------------------------------------------------------------
# sender_limited = pass: a busy machine's sender may fall short of the rate; only keys matter here
cat >"$LR_TMP/golden.ini" <<EOF
[test]
duration = 200ms
warmup = 0
sender_limited = pass
[tx]
netns = $SND
interface = snd0
dst_ip = 198.18.0.2
rate = 20k
[rx]
netns = $RCV
interface = rcv0
EOF
RC=0
timeout -k 5 60 "$LINERATE" run "$LR_TMP/golden.ini" -q --json "$LR_TMP/run.json" \
	>"$LR_TMP/run.out" 2>"$LR_TMP/run.err" || RC=$?
lr_show_file "$LR_TMP/run.err"
lr_check "run exit code" "$RC" == 0
golden run "$LR_TMP/run.json"

# ---- reflect and send --rtt ---------------------------------------------------------------------
rm -f "$LR_TMP/rready"
lr_spawn reflect timeout -k 5 60 "$LINERATE" reflect --netns "$RCV" -i rcv0 -q --duration 50 \
	--json "$LR_TMP/reflect.json" --ready-file "$LR_TMP/rready"
RPID=$LR_LAST_PID
lr_wait_for_file "$LR_TMP/rready" 15 "$RPID" || {
	lr_show_file "$LR_TMP/reflect.err"
	lr_die "reflect never became ready"
}
RC=0
timeout -k 5 60 "$LINERATE" send --netns "$SND" -i snd0 --dst-ip 198.18.0.2 --rtt --count "$COUNT" \
	--rate "$RATE" -q --json "$LR_TMP/send-rtt.json" >"$LR_TMP/send-rtt.out" 2>"$LR_TMP/send-rtt.err" || RC=$?
lr_show_file "$LR_TMP/send-rtt.err"
lr_check "send --rtt exit code" "$RC" == 0
kill -INT "$RPID" 2>/dev/null || true
RC=0
lr_wait_pid "$RPID" 10 || RC=$?
lr_show_file "$LR_TMP/reflect.err"
lr_check "reflect exit code (SIGINT)" "$RC" == 0
golden send-rtt "$LR_TMP/send-rtt.json"
golden reflect "$LR_TMP/reflect.json"

# ---- the agent's replies ------------------------------------------------------------------------
# An agent listens on its namespace's loopback, so no control traffic crosses the veth. The
# receiver is sent start (at_ns 0) too: its session once crashed at the end for it (no bye).
ip -n "$SND" link set lo up
ip -n "$RCV" link set lo up

# agent_up NS: an agent serving NS on its 127.0.0.1:7446, ready; its PID in APID.
agent_up()
{
	rm -f "$LR_TMP/agent.ready"
	lr_spawn agent "$LINERATE" agent --netns "$1" --listen 127.0.0.1:7446 --insecure \
		--ready-file "$LR_TMP/agent.ready"
	APID=$LR_LAST_PID
	lr_wait_for_file "$LR_TMP/agent.ready" 10 "$APID" || {
		lr_show_file "$LR_TMP/agent.err"
		lr_die "the agent never became ready"
	}
}

# agent_down: SIGTERM, and it exits 0.
agent_down()
{
	local rc=0

	kill -TERM "$APID" 2>/dev/null || true
	lr_wait_pid "$APID" 10 || rc=$?
	lr_check "agent exit code (SIGTERM)" "$rc" == 0
}

# client NS REQUEST...: agent_client.py in NS, in the background, its replies in client.out; then 10
# waits of 1 s at most (those after the test is complete are answered at once) and quit.
client()
{
	local ns=$1

	shift
	lr_spawn client timeout -k 5 30 ip netns exec "$ns" "$PY" "$LR_E2E_DIR/agent_client.py" \
		127.0.0.1 7446 "$@" "${WAITS[@]}"
	CPID=$LR_LAST_PID
}
WAITS=()
for _ in 1 2 3 4 5 6 7 8 9 10; do
	WAITS+=('{"type": "wait", "timeout_ms": 1000}')
done

# client_done NAME: the client's exit, a complete result, and the transcript against NAME.keys:
# each reply under "NN TYPE" in the order it came, the waits answered before the test was complete
# left out, and a run of one type (the waits after it was) kept once, so that the order of the
# types is in the key paths too.
client_done()
{
	local rc=0

	lr_wait_pid "$CPID" 25 || rc=$?
	lr_show_file "$LR_TMP/client.err"
	((rc == 0)) || lr_show_file "$LR_TMP/agent.err"
	lr_check "$1: agent_client.py exit code" "$rc" == 0
	lr_check "$1: a complete result" \
		"$(jq -rs '[.[] | select(.type == "result" and .complete)] | length > 0' "$LR_TMP/client.out")" == true
	jq -s '[.[] | select(.type != "result" or .complete)]
		| reduce .[] as $m ([]; if length > 0 and .[-1].type == $m.type then . else . + [$m] end)
		| to_entries | map({key: "\(if .key < 9 then "0" else "" end)\(.key + 1) \(.value.type)", value})
		| from_entries' "$LR_TMP/client.out" >"$LR_TMP/$1.json"
	golden "$1" "$LR_TMP/$1.json"
}

# The agent as receiver: hello, prepare_rx, start, progress, wait, quit; this side sends once it is ready.
agent_up "$RCV"
client "$RCV" --hello '{"type": "prepare_rx", "interface": "rcv0"}' '{"type": "start", "at_ns": 0}' \
	'{"type": "progress"}'
lr_wait_log "$LR_TMP/client.out" '"type": "ready"' 10 || {
	lr_show_file "$LR_TMP/client.out"
	lr_show_file "$LR_TMP/client.err"
	lr_show_file "$LR_TMP/agent.err"
	lr_die "the agent never answered prepare_rx with ready"
}
RC=0
timeout -k 5 60 "$LINERATE" send --netns "$SND" -i snd0 --dst-ip 198.18.0.2 --count "$COUNT" \
	--rate "$RATE" -q >"$LR_TMP/send-agent.out" 2>"$LR_TMP/send-agent.err" || RC=$?
lr_show_file "$LR_TMP/send-agent.err"
lr_check "send to the agent's receiver: exit code" "$RC" == 0
client_done agent-rx
agent_down

# The agent as sender: prepare_tx (every key, as linerate's controller sends them), start,
# progress, wait, quit; this side counts with recv --once.
rm -f "$LR_TMP/ready"
lr_spawn recv-agent timeout -k 5 45 "$LINERATE" recv --netns "$RCV" -i rcv0 --once --duration 30 -q \
	--ready-file "$LR_TMP/ready"
RPID=$LR_LAST_PID
lr_wait_for_file "$LR_TMP/ready" 15 "$RPID" || {
	lr_show_file "$LR_TMP/recv-agent.err"
	lr_die "recv never became ready"
}
agent_up "$SND"
TX_REQ=$(jq -cn --argjson count "$COUNT" '{type: "prepare_tx", interface: "snd0", netns: "", address: "",
	route: false, engine: "afxdp", xdp_mode: "auto", queues: [0], cpus: [], size: 64, flows: 1,
	rate: "20000pps", count: $count, duration_ns: 0, src_ip: "", dst_ip: "198.18.0.2", src_mac: "",
	dst_mac: "", src_port: 0, dst_port: 7447, batch: 64, latency_every: 0, prepare_peer: false}')
client "$SND" "$TX_REQ" '{"type": "start", "at_ns": 0}' '{"type": "progress"}'
client_done agent-tx
RC=0
lr_wait_pid "$RPID" 20 || RC=$?
lr_show_file "$LR_TMP/recv-agent.err"
lr_check "recv --once of the agent's frames: exit code" "$RC" == 0
agent_down
lr_check_cmd "no XDP program left on rcv0" lr_xdp_absent "$RCV" rcv0
lr_finish
