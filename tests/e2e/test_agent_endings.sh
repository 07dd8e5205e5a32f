#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# How a test through an agent ends when the agent does not finish it: the controller exits 1, its
# JSON document's `error` (and `peer.error`) names the cause as it happened, and nothing is left
# attached on the agent's side.
#
#   [lr-agent_endings-ctl-PID]                              [lr-agent_endings-agt-PID]
#   controller: send --peer ... -i c0                        agent --listen 198.18.6.2:7446
#               c0 198.18.6.1/24 --- pc [sw-PID: br0] pa --- a0 198.18.6.2/24
#                                                  | pb      python3 http.server :7447
#                                                  |
#                             [lr-agent_endings-ag2-PID] b0 198.18.6.3/24: a second agent (the matrix)
#   (and, for send alone, s0 198.18.7.1/30 in ctl --- s1 198.18.7.2/30 in agt)
#
# The bridge carries the agent protocol and the test frames (20 kpps for 3 s at most).
#
# Checks:
#   - the agent's main process SIGTERMed, and SIGKILLed, at a random point 0.3..1.5 s into a test,
#     5 times each, in each of its roles: a receiver (send --peer), a sender (--reverse) and a
#     reflector (--rtt). Every time: the controller exits 1; its stderr, its JSON `error` and
#     `peer.error` say "--peer 198.18.6.2:7446: the agent ended the test: " and then "the agent
#     is stopping (SIGTERM)", or after the SIGKILL "the agent's main process died" (its session
#     ends the test, and says whose death it saw); the agent exits 0 (SIGTERM); no XDP program is
#     left on a0 within 3 s
#   - linerate run with [tx] agent and with [rx] agent, the agent SIGTERMed and SIGKILLed mid-step:
#     exit 1, "[tx] agent 198.18.6.2:7446: the agent ended the test: ..." on stderr and as the
#     document's error; no XDP program left on a0
#   - linerate matrix (two agents, one cell of 64-byte frames each way), the first cell's sender
#     SIGTERMed and SIGKILLed mid-cell: exit 1, cells[0].error names it as run does; no XDP
#     program left on either agent's interface
#   - the controller frozen (SIGSTOP) for 3 s, past the agent's 2 s dead-man timer, then SIGCONT,
#     receiving (--reverse) and sending: exit 1, "the agent ended the test: nothing from this side
#     for 2000 ms" in stderr and in `error`; the agent logged why and ended the test
#   - send alone, its interface deleted mid-test (afxdp, packet): exit 1, its JSON `error` names
#     the failed transmit
#   - an HTTP server where the agent should be: exit 2 and one line, "--peer: 198.18.6.2:7447 is
#     not a linerate agent (it answered '...')", at once (not after the 5 s hello timeout)
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ADDR=198.18.6.2
PEER=$ADDR:7446
ENDED="--peer $PEER: the agent ended the test: "
RUNS=${LR_ENDINGS_RUNS:-5}

lr_init
lr_require_cmds python3 ss
lr_netns_add CTL ctl
lr_netns_add AGT agt
lr_netns_add AG2 ag2
lr_netns_add SW sw
ip -n "$SW" link add br0 type bridge || lr_die "cannot make a bridge in $SW"
ip -n "$SW" link set br0 up
lr_veth "$CTL" c0 "$SW" pc
lr_veth "$AGT" a0 "$SW" pa
lr_veth "$AG2" b0 "$SW" pb
for p in pc pa pb; do
	ip -n "$SW" link set "$p" master br0 up
done
lr_addr "$CTL" c0 198.18.6.1/24
lr_addr "$AGT" a0 "$ADDR/24"
lr_addr "$AG2" b0 198.18.6.3/24

TOKEN=$LR_TMP/token
(
	umask 077
	echo "the token of test_agent_endings $$" >"$TOKEN"
)

# agent NAME: an agent in AGT, ready; its PID (its main process: from its ready file) in AGENT_PID.
agent()
{
	rm -f "$LR_TMP/$1.ready"
	lr_spawn "$1" "$LINERATE" agent --netns "$AGT" --listen "$PEER" --token-file "$TOKEN" \
		--ready-file "$LR_TMP/$1.ready"
	lr_wait_for_file "$LR_TMP/$1.ready" 10 "$LR_LAST_PID" || {
		lr_show_file "$LR_TMP/$1.err"
		lr_die "agent $1 never became ready"
	}
	AGENT_PID=$(cat "$LR_TMP/$1.ready")
	AGENT_LOG=$LR_TMP/$1.err
}

# controller NAME ARGS...: send --peer in the controller's namespace, in the background (ip netns
# exec execs linerate: CTL_PID is linerate's own); its JSON in NAME.json.
controller()
{
	local name=$1

	shift
	lr_spawn "$name" ip netns exec "$CTL" "$LINERATE" send -i c0 --dst-ip "$ADDR" --rate 20kpps \
		--peer "$PEER" --token-file "$TOKEN" --json "$LR_TMP/$name.json" "$@"
	CTL_PID=$LR_LAST_PID
}


# clean_within TIMEOUT_S: until no XDP program is on a0.
clean_within()
{
	local deadline=$(($(lr_now_ns) + $1 * 1000000000))

	while lr_xdp_attached "$AGT" a0; do
		(($(lr_now_ns) < deadline)) || return 1
		sleep 0.05
	done
}

# ended DESC NAME RC WANT: the controller NAME exited 1 (RC) and says WANT, on stderr and as its
# document's error (and peer.error).
ended()
{
	local desc=$1 name=$2 rc=$3 want=$4 j=$LR_TMP/$2.json

	lr_check "$desc: exit code" "$rc" == 1
	if grep -qxF -- "linerate send: $want" "$LR_TMP/$name.err"; then
		lr_pass "$desc: says \"$want\""
	else
		lr_fail "$desc: says \"$want\"" "$(grep -v '^  \|^peer tx\|^tx ' "$LR_TMP/$name.err" | tail -n 4)"
	fi
	lr_check "$desc: JSON error" "$(jq -r .error "$j" 2>&1)" == "$want"
	lr_check "$desc: JSON peer.error" "$(jq -r .peer.error "$j" 2>&1)" == "$want"
}

# ---------------------------------------------------------------------------------------------
# The agent stopped or killed mid-test, in each role.

# kill_agent ROLE SIGNAL I ARGS...: one test, the agent's main process sent SIGNAL mid-test.
kill_agent()
{
	local role=$1 sig=$2 i=$3 name desc ms rc=0 want

	shift 3
	name=$role-$sig-$i
	desc="$role, agent $sig #$i"
	agent "agent-$name"
	controller "$name" --duration 3s "$@"
	if ! lr_wait_log "$AGENT_LOG" ": test $role on a0" 10; then
		lr_fail "$desc: the test started" "$(tail -n 3 "$AGENT_LOG" "$LR_TMP/$name.err")"
		lr_wait_pid "$CTL_PID" 10 || true
		lr_wait_pid "$AGENT_PID" 1 || true
		return
	fi
	ms=$((300 + RANDOM % 1200))
	sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
	kill "-$sig" "$AGENT_PID"
	lr_wait_pid "$CTL_PID" 15 || rc=$?
	if [[ $sig == TERM ]]; then
		want="${ENDED}the agent is stopping (SIGTERM)"
	else
		want="${ENDED}the agent's main process died"
	fi
	ended "$desc (${ms} ms in)" "$name" "$rc" "$want"
	rc=0
	lr_wait_pid "$AGENT_PID" 8 || rc=$?
	[[ $sig == TERM ]] && lr_check "$desc: the agent's exit code" "$rc" == 0
	if clean_within 3; then
		lr_pass "$desc: no XDP program left on a0"
	else
		lr_fail "$desc: no XDP program left on a0" "$(ip -n "$AGT" -d link show a0 | grep -i xdp)"
		ip -n "$AGT" link set a0 xdp off 2>/dev/null || true
	fi
}

for sig in TERM KILL; do
	for ((i = 1; i <= RUNS; i++)); do
		kill_agent rx "$sig" "$i"
		kill_agent tx "$sig" "$i" --reverse
		kill_agent reflect "$sig" "$i" --rtt
	done
done

# ---------------------------------------------------------------------------------------------
# linerate run with an end on the agent: [tx] agent (the agent sends, run counts on c0) and
# [rx] agent (run sends from c0, the agent counts), the agent stopped or killed mid-step.

# run_cfg SIDE: a 3 s step with SIDE (tx or rx) on the agent, in $LR_TMP/run-SIDE.ini.
run_cfg()
{
	local agent_end="agent = $PEER
token_file = $TOKEN
interface = a0"

	if [[ $1 == tx ]]; then
		printf '[test]\nduration = 3s\nwarmup = 0\n[tx]\n%s\ndst_ip = 198.18.6.1\nrate = 20k\n[rx]\ninterface = c0\n' \
			"$agent_end" >"$LR_TMP/run-$1.ini"
	else
		printf '[test]\nduration = 3s\nwarmup = 0\n[tx]\ninterface = c0\ndst_ip = %s\nrate = 20k\n[rx]\n%s\n' \
			"$ADDR" "$agent_end" >"$LR_TMP/run-$1.ini"
	fi
}

for side in tx rx; do
	run_cfg "$side"
	for sig in TERM KILL; do
		name=run-$side-$sig
		desc="run, [$side] agent $sig"
		agent "agent-$name"
		lr_spawn "$name" ip netns exec "$CTL" "$LINERATE" run "$LR_TMP/run-$side.ini" --json "$LR_TMP/$name.json"
		CTL_PID=$LR_LAST_PID
		if ! lr_wait_log "$AGENT_LOG" ": test $side on a0" 10; then
			lr_fail "$desc: the test started" "$(tail -n 3 "$AGENT_LOG" "$LR_TMP/$name.err")"
			lr_wait_pid "$CTL_PID" 15 || true
			continue
		fi
		ms=$((300 + RANDOM % 1200))
		sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
		kill "-$sig" "$AGENT_PID"
		rc=0
		lr_wait_pid "$CTL_PID" 20 || rc=$?
		want="[$side] agent $PEER: the agent ended the test: the agent is stopping (SIGTERM)"
		[[ $sig == KILL ]] && want="[$side] agent $PEER: the agent ended the test: the agent's main process died"
		lr_check "$desc (${ms} ms in): exit code" "$rc" == 1
		lr_check_cmd "$desc: says \"$want\"" grep -qxF -- "linerate run: $want" "$LR_TMP/$name.err"
		lr_check "$desc: JSON error" "$(jq -r .error "$LR_TMP/$name.json" 2>&1)" == "$want"
		lr_wait_pid "$AGENT_PID" 8 || true
		lr_check_cmd "$desc: no XDP program left on a0" clean_within 3
	done
done

# ---------------------------------------------------------------------------------------------
# linerate matrix: the first cell's sender (198.18.6.2, the lower address) stopped or killed.

lr_spawn agent-ag2 "$LINERATE" agent --netns "$AG2" --listen 198.18.6.3:7446 --token-file "$TOKEN" \
	--ready-file "$LR_TMP/ag2.ready"
lr_wait_for_file "$LR_TMP/ag2.ready" 10 "$LR_LAST_PID" || lr_die "the second agent never became ready"
for sig in TERM KILL; do
	name=matrix-$sig
	desc="matrix, the first cell's sender $sig"
	agent "agent-$name"
	lr_spawn "$name" ip netns exec "$CTL" "$LINERATE" matrix --agents "$ADDR,198.18.6.3" --token-file "$TOKEN" \
		--sizes 64 --count 60000 --rate 20k --json "$LR_TMP/$name.json"
	CTL_PID=$LR_LAST_PID
	if ! lr_wait_log "$AGENT_LOG" ": test tx on a0" 10; then
		lr_fail "$desc: the cell started" "$(tail -n 3 "$AGENT_LOG" "$LR_TMP/$name.err")"
		lr_wait_pid "$CTL_PID" 30 || true
		continue
	fi
	ms=$((300 + RANDOM % 1200))
	sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
	kill "-$sig" "$AGENT_PID"
	rc=0
	lr_wait_pid "$CTL_PID" 60 || rc=$?
	want="[tx] agent $PEER: the agent ended the test: the agent is stopping (SIGTERM)"
	[[ $sig == KILL ]] && want="[tx] agent $PEER: the agent ended the test: the agent's main process died"
	lr_check "$desc (${ms} ms in): exit code" "$rc" == 1
	lr_check "$desc: cells[0].error" "$(jq -r '.cells[0].error' "$LR_TMP/$name.json" 2>&1)" == "$want"
	lr_wait_pid "$AGENT_PID" 8 || true
	lr_check_cmd "$desc: no XDP program left on a0" clean_within 3
	lr_check_cmd "$desc: nor on b0" lr_xdp_absent "$AG2" b0
done

# ---------------------------------------------------------------------------------------------
# The controller frozen past the dead-man timer: once it resumes, the agent's last word.

agent agent-frozen
for role in tx rx; do
	name=frozen-$role
	desc="controller frozen 3 s, the agent's $role"
	opts=()
	[[ $role == tx ]] && opts=(--reverse)
	controller "$name" --duration 5s "${opts[@]}"
	if lr_wait_log "$AGENT_LOG" ": test $role on a0" 10; then
		sleep 0.5
		kill -STOP "$CTL_PID"
		sleep 3
		kill -CONT "$CTL_PID"
		rc=0
		lr_wait_pid "$CTL_PID" 15 || rc=$?
		ended "$desc" "$name" "$rc" "${ENDED}nothing from this side for 2000 ms"
		lr_check_cmd "$desc: the agent logged why" \
			grep -qF "test $role on a0 ended (no message from the controller for 2000 ms)" "$AGENT_LOG"
		lr_check_cmd "$desc: no XDP program left on a0" clean_within 3
	else
		lr_fail "$desc: the test started" "$(tail -n 3 "$AGENT_LOG" "$LR_TMP/$name.err")"
		kill -CONT "$CTL_PID" 2>/dev/null || true
		lr_wait_pid "$CTL_PID" 15 || true
	fi
done

# ---------------------------------------------------------------------------------------------
# Not an agent: an HTTP server on the port.

lr_spawn http ip netns exec "$AGT" python3 -m http.server --bind "$ADDR" 7447
deadline=$(($(lr_now_ns) + 10000000000))
until [[ -n $(ip netns exec "$AGT" ss -Hltn "sport = :7447") ]]; do
	(($(lr_now_ns) < deadline)) || lr_die "the HTTP server never listened: $(cat "$LR_TMP/http.err")"
	sleep 0.05
done
rc=0
t0=$(lr_now_ns)
timeout -k 5 20 ip netns exec "$CTL" "$LINERATE" send -i c0 --dst-ip "$ADDR" --count 10 --peer "$ADDR:7447" \
	--token-file "$TOKEN" >"$LR_TMP/http-ctl.out" 2>"$LR_TMP/http-ctl.err" || rc=$?
ms=$((($(lr_now_ns) - t0) / 1000000))
lr_check "not an agent: exit code" "$rc" == 2
lr_check "not an agent: lines on stderr" "$(wc -l <"$LR_TMP/http-ctl.err")" == 1
lr_check_cmd "not an agent: says \"--peer: $ADDR:7447 is not a linerate agent (it answered '...')\"" \
	grep -qxE "linerate send: --peer: $ADDR:7447 is not a linerate agent \(it answered '.+'\)" "$LR_TMP/http-ctl.err"
lr_check "not an agent: said within 3000 ms (not after the hello's 5 s)" "$ms" "<=" 3000
lr_show_file "$LR_TMP/http-ctl.err"

# ---------------------------------------------------------------------------------------------
# send alone, its interface deleted mid-test: its document's error says why it stopped.

for engine in afxdp packet; do
	lr_veth "$CTL" s0 "$AGT" s1
	lr_addr "$CTL" s0 198.18.7.1/30
	lr_addr "$AGT" s1 198.18.7.2/30
	name=gone-$engine
	lr_spawn "$name" ip netns exec "$CTL" "$LINERATE" send -i s0 --dst-ip 198.18.7.2 --dst-mac 02:00:00:00:00:01 \
		--rate 20k --duration 5s --engine "$engine" --json "$LR_TMP/$name.json"
	pid=$LR_LAST_PID
	# sending (its engine line said, the test under way), however long a busy machine took to start;
	# the transmit then fails on a device going down (ENETDOWN) or gone (ENXIO, ENODEV): when the
	# deletion lands decides which
	lr_wait_log "$LR_TMP/$name.err" "engine $engine" 20 || lr_fail "send ($engine) never said its engine" \
		"$(tail -n 3 "$LR_TMP/$name.err")"
	sleep 0.3
	ip -n "$CTL" link del s0
	rc=0
	lr_wait_pid "$pid" 10 || rc=$?
	lr_check "send, its interface gone ($engine): exit code" "$rc" == 1
	if grep -qE '"error": ?"worker 0: '"$engine"': transmit on s0( queue 0)? failed: (Network is down|No such device( or address)?)"' "$LR_TMP/$name.json"; then
		lr_pass "send, its interface gone ($engine): JSON error names the failed transmit"
	else
		lr_fail "send, its interface gone ($engine): JSON error names the failed transmit" \
			"$(jq -r .error "$LR_TMP/$name.json" 2>&1; tail -n 3 "$LR_TMP/$name.err")"
	fi
done

lr_finish
