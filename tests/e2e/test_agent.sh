#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# linerate agent and send --peer, with namespaces as hosts: two hosts joined by an underlay (the
# lab's overlay topology), an agent on each, and a controller on a third reached over a management
# network of its own.
#
#   [P-overlay-c1] eth0 198.18.3.2 - vc1 [h1: br0, vx0] =vxlan= [h2: vx0, br0] vc2 - eth0 198.18.3.3 [P-overlay-c2]
#   [P-overlay-h1] ul0 198.19.0.1/24 <===== underlay (veth) =====> ul0 198.19.0.2/24 [P-overlay-h2]
#     agent A1 on mg 198.18.250.2 (--allow 'ul*')            agent A2 on mg 198.18.250.6
#            mg |                                                  | mg
#    198.18.250.1/30 m1 ------ [lr-agent-ctl-PID] controller ------ m2 198.18.250.5/30
#
# The controller runs `send --netns P-overlay-h1 ... --peer 198.18.250.6`: it reaches the agent from
# its own namespace, then sends from h1 over the underlay (or from c1 over the overlay to c2, whose
# namespace the agent on h2 enters). Every test has a bound in packets and time.
#
# Checks:
#   - refused at start (exit 2, one line): --listen without --token-file or --insecure, on a
#     non-loopback address and on loopback alike; a token file of mode 0644
#   - exact counts h1 -> h2 (the agent's receiver), h2 -> h1 with --reverse (the agent's sender, a
#     receiver here), h2 -> h1 through the other agent, and container c1 -> c2 over the overlay
#     with the far end in c2's namespace (--peer-netns, which agent A2's --allow-netns names;
#     test_agent_paths.sh refuses the others): both summaries printed, the JSON
#     document with "peer" {agent, host, result} as docs/json.md says, one clock (same boot id)
#   - the agent's policy: an interface outside its --allow refused (exit 2, one line naming it)
#   - a wrong token, no token: refused (exit 2, one line), logged by the agent, nothing done
#   - --clock estimate on one host: latency_ns.clock "estimated", |offset_ns| <= error_bound_ns
#   - round trips, send --peer --rtt h1 -> h2 (the agent's reflector on h2's ul0, this side's
#     receiver on h1's): 10000 frames at 20 kpps, forward and return received == 10000 and lost 0,
#     rtt_settled, rtt_ns.p50 > 0, the reflector's document under peer.result (reflect.packets ==
#     10000), its start line and a "peer reflector:" line printed; no XDP program left on either
#     ul0; a reflector outside the agent's --allow refused (exit 2, one line naming it)
#   - start at a given time (a relay of our own asks it): too far ahead refused (code 2); 300 ms
#     ahead, the agent's sender starts then and not before, and says how late
#   - busy: a second controller gets one line naming the running test (exit 1); the first passes
#   - controller SIGKILLed mid-test, the agent receiving (XDP), sending (live engine, its lrlive
#     tap) and reflecting (--rtt): within 2 s no XDP program and no tap in h2; the next test counts
#     exactly
#   - the management link cut mid-test, either way: the controller says the agent failed, keeps
#     its own counts and exits 1 within 5 s; the agent's dead-man timer ends the test (its
#     receiver's and its reflector's XDP program gone; its sender's end logged) within 3 s
#   - the agent SIGKILLed mid-test (alone: its session ends the test itself and says the agent's
#     main process died; with its session: a crash): the controller names the agent, exits 1
#     within 5 s
#   - SIGTERM mid-test: the controller is told the agent is stopping and exits 1 within 5 s, the
#     agent ends the test (no XDP program) and exits 0; an idle agent exits 0, its ready file removed
#   - the agents enter their host's namespace themselves (--netns)
#   - linerate run with [tx] agent and [rx] agent (this controller runs neither end): every step
#     exact, one clock; with only [rx] agent (the sender here, in h1's namespace) and clock =
#     estimate: exact, latency "estimated" with |offset_ns| within its bound; a [tx] agent without
#     its token_file: one line, exit 2
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COUNT=2000
PFX=lrag$$
A1_ADDR=198.18.250.2
A2_ADDR=198.18.250.6
A2=$A2_ADDR:7446

lr_init
lr_lab_prefix "$PFX"
lr_lab lab up overlay --prefix "$PFX"
((LAB_RC == 0)) || lr_die "scripts/lab up overlay failed: $(cat "$LR_TMP/lab.err")"
H1=$PFX-overlay-h1
H2=$PFX-overlay-h2
lr_netns_add CTL ctl
lr_veth "$CTL" m1 "$H1" mg
lr_veth "$CTL" m2 "$H2" mg
lr_addr "$CTL" m1 198.18.250.1/30
lr_addr "$H1" mg "$A1_ADDR/30"
lr_addr "$CTL" m2 198.18.250.5/30
lr_addr "$H2" mg "$A2_ADDR/30"
BOOT_ID=$(cat /proc/sys/kernel/random/boot_id)

TOKEN=$LR_TMP/token
WRONG=$LR_TMP/wrong
(
	umask 077
	echo "the token of this test $$" >"$TOKEN"
	echo "not the token" >"$WRONG"
)

# ---------------------------------------------------------------------------------------------
# Helpers.

# agent NAME NS ADDR [OPTIONS...]: an agent serving NS (--netns) listening on ADDR with the token;
# waits until it is ready. Its PID (from the ready file) in AGENT_PID, its log in $LR_TMP/NAME.err.
agent()
{
	local name=$1 ns=$2 addr=$3

	shift 3
	rm -f "$LR_TMP/$name.ready"
	lr_spawn "$name" "$LINERATE" agent --netns "$ns" --listen "$addr" --token-file "$TOKEN" \
		--ready-file "$LR_TMP/$name.ready" "$@"
	lr_wait_for_file "$LR_TMP/$name.ready" 10 "$LR_LAST_PID" || {
		lr_show_file "$LR_TMP/$name.err"
		lr_die "agent $name never became ready"
	}
	AGENT_PID=$(cat "$LR_TMP/$name.ready")
}

# ctl NAME ARGS...: linerate ARGS in the controller's namespace, bounded; RC, $LR_TMP/NAME.{out,err}.
ctl()
{
	local name=$1

	shift
	RC=0
	timeout -k 5 60 ip netns exec "$CTL" "$LINERATE" "$@" >"$LR_TMP/$name.out" 2>"$LR_TMP/$name.err" || RC=$?
}

# refused DESC RC WANT_RC ERRFILE TEXT: the exit code, one line on stderr, and what it says.
refused()
{
	local desc=$1 rc=$2 want=$3 file=$4 text=$5

	lr_check "$desc: exit code" "$rc" == "$want"
	lr_check "$desc: lines on stderr" "$(wc -l <"$file")" == 1
	if grep -qF -- "$text" "$file"; then
		lr_pass "$desc: says \"$text\""
	else
		lr_fail "$desc: says \"$text\"" "$(head -c 400 "$file")"
	fi
}


# wait_for_test NAME TIMEOUT_S: until agent NAME logs one more prepared test than TESTS_SEEN.
TESTS_SEEN=0
TEST_RE=': test (rx|tx|reflect) on ul0: '
wait_for_test()
{
	local deadline=$(($(lr_now_ns) + $2 * 1000000000)) n

	while :; do
		n=$(grep -cE "$TEST_RE" "$LR_TMP/$1.err" || true)
		if ((n > TESTS_SEEN)); then
			TESTS_SEEN=$n
			return 0
		fi
		(($(lr_now_ns) < deadline)) || return 1
		sleep 0.05
	done
}

# clean_within NS IF TIMEOUT_S: until no XDP program is on IF and no lrlive tap is in NS; the time it took in ms.
clean_within()
{
	local t0 deadline

	t0=$(lr_now_ns)
	deadline=$((t0 + $3 * 1000000000))
	# "cannot tell" (ip cannot show the interface) is not clean: it waits on, and times out
	until lr_xdp_absent "$1" "$2" && ! ip -n "$1" -o link show | grep -q lrlive; do
		(($(lr_now_ns) < deadline)) || return 1
		sleep 0.05
	done
	CLEAN_MS=$((($(lr_now_ns) - t0) / 1000000))
}

# exact DESC FILE TX RX AGENT: the checks of a loss-free exchange in JSON FILE, its tx result at TX
# and its rx result at RX ("" for the top, or .peer.result), the agent AGENT.
exact()
{
	local desc=$1 j=$2 tx=$3 rx=$4

	lr_jvalid "$j"
	lr_check "$desc: tx.packets" "$(lr_jget "$j" "$tx.tx.packets")" == "$COUNT"
	lr_check "$desc: rx.packets" "$(lr_jget "$j" "$rx.rx.packets")" == "$COUNT"
	lr_check "$desc: rx.sent (end-of-test markers)" "$(lr_jget "$j" "$rx.rx.sent")" == "$COUNT"
	lr_check "$desc: rx.lost" "$(lr_jget "$j" "$rx.rx.lost")" == 0
	lr_check "$desc: rx.reordered" "$(lr_jget "$j" "$rx.rx.reordered")" == 0
	lr_check "$desc: rx.duplicates" "$(lr_jget "$j" "$rx.rx.duplicates")" == 0
	lr_check "$desc: rx.tail_settled" "$(jq -r "$rx.rx.tail_settled" "$j")" == true
	lr_check "$desc: peer.agent" "$(lr_jget "$j" .peer.agent)" == "$5"
	lr_check "$desc: peer.host.boot_id (one host)" "$(lr_jget "$j" .peer.host.boot_id)" == "$BOOT_ID"
	lr_check "$desc: peer.error" "$(jq -r '.peer.error' "$j")" == null
}

# One clock on one host: latency exact and valid.
same_host()
{
	lr_check "$1: latency_ns.clock" "$(lr_jget "$2" "$3.latency_ns.clock")" == same_host
	lr_check "$1: latency_ns.valid" "$(jq -r "$3.latency_ns.valid" "$2")" == true
	lr_check "$1: latency_ns.p50" "$(lr_jget "$2" "$3.latency_ns.p50")" ">" 0
}

# forward NAME [ARGS...]: COUNT frames h1 -> h2 through A2; RC and NAME.json.
forward()
{
	local name=$1

	shift
	ctl "$name" send --netns "$H1" -i ul0 --dst-ip 198.19.0.2 --count "$COUNT" --rate 20k --peer "$A2" \
		--token-file "$TOKEN" --json "$LR_TMP/$name.json" "$@"
}

# background NAME ARGS...: a controller sending h1 -> h2 for up to 10 s at 1 kpps, not waited for;
# its PID (linerate's own: ip netns exec execs it) in BG_PID.
background()
{
	local name=$1

	shift
	lr_spawn "$name" ip netns exec "$CTL" "$LINERATE" send --netns "$H1" -i ul0 --dst-ip 198.19.0.2 \
		--duration 10s --rate 1k --peer "$A2" --token-file "$TOKEN" "$@"
	BG_PID=$LR_LAST_PID
}

# ---------------------------------------------------------------------------------------------
# Refused at start.

RC=0
ip netns exec "$H2" "$LINERATE" agent --listen "$A2_ADDR:7450" >"$LR_TMP/insecure.out" 2>"$LR_TMP/insecure.err" || RC=$?
refused "agent without --token-file or --insecure" "$RC" 2 "$LR_TMP/insecure.err" "give --token-file"
RC=0
ip netns exec "$H2" "$LINERATE" agent --listen 127.0.0.1:7450 >"$LR_TMP/insecure-lo.out" 2>"$LR_TMP/insecure-lo.err" || RC=$?
refused "agent on loopback without --token-file or --insecure" "$RC" 2 "$LR_TMP/insecure-lo.err" "or --insecure"
cp "$TOKEN" "$LR_TMP/open-token"
chmod 0644 "$LR_TMP/open-token"
RC=0
ip netns exec "$H2" "$LINERATE" agent --listen "$A2_ADDR:7450" --token-file "$LR_TMP/open-token" \
	>"$LR_TMP/mode.out" 2>"$LR_TMP/mode.err" || RC=$?
refused "agent with a token file of mode 0644" "$RC" 2 "$LR_TMP/mode.err" "has mode 0644"

agent a1 "$H1" "$A1_ADDR" --allow 'ul*'
A1_PID=$AGENT_PID
# c2's namespace, which the overlay case names (--peer-netns), and no other
agent a2 "$H2" "$A2_ADDR" --allow-netns "$PFX-overlay-c2"
A2_PID=$AGENT_PID

# ---------------------------------------------------------------------------------------------
# Exact counts, both directions, both agents.

forward fwd
lr_show_file "$LR_TMP/fwd.err"
lr_check "h1 -> h2: exit code" "$RC" == 0
exact "h1 -> h2" "$LR_TMP/fwd.json" "" .peer.result "$A2"
same_host "h1 -> h2" "$LR_TMP/fwd.json" .peer.result
lr_check "h1 -> h2: command" "$(lr_jget "$LR_TMP/fwd.json" .command)" == send
lr_check "h1 -> h2: peer.result.command" "$(lr_jget "$LR_TMP/fwd.json" .peer.result.command)" == recv
lr_check "h1 -> h2: peer.result.interface" "$(lr_jget "$LR_TMP/fwd.json" .peer.result.interface)" == ul0
lr_check "h1 -> h2: peer.host.interfaces name ul0" \
	"$(jq -r '[.peer.host.interfaces[] | select(.name == "ul0") | .addresses[]] | join(",")' "$LR_TMP/fwd.json")" \
	== 198.19.0.2/24
lr_check_cmd "h1 -> h2: the sender's summary" grep -q "^linerate send: .* on ul0, 1 worker" "$LR_TMP/fwd.err"
lr_check_cmd "h1 -> h2: the receiver's summary, the agent's" grep -q "^linerate recv: .* on ul0 (agent $A2)" "$LR_TMP/fwd.err"
lr_check_cmd "the agent logged the test and its end" grep -q "test rx on ul0 ended (quit): $COUNT frames received, 0 lost" \
	"$LR_TMP/a2.err"

forward rev --reverse
lr_show_file "$LR_TMP/rev.err"
lr_check "h2 -> h1 (--reverse): exit code" "$RC" == 0
exact "h2 -> h1 (--reverse)" "$LR_TMP/rev.json" .peer.result "" "$A2"
same_host "h2 -> h1 (--reverse)" "$LR_TMP/rev.json" ""
lr_check "--reverse: command (this side counted)" "$(lr_jget "$LR_TMP/rev.json" .command)" == recv
lr_check "--reverse: peer.result.command" "$(lr_jget "$LR_TMP/rev.json" .peer.result.command)" == send
lr_check_cmd "--reverse: the agent's sender summary" grep -q "^linerate send (agent $A2): .* on ul0" "$LR_TMP/rev.err"
lr_check_cmd "--reverse: this side's receiver summary" grep -q "^linerate recv: .* on ul0, " "$LR_TMP/rev.err"

ctl other send --netns "$H2" -i ul0 --dst-ip 198.19.0.1 --count "$COUNT" --rate 20k --peer "$A1_ADDR" \
	--token-file "$TOKEN" --json "$LR_TMP/other.json"
lr_show_file "$LR_TMP/other.err"
lr_check "h2 -> h1 through agent A1: exit code" "$RC" == 0
exact "h2 -> h1 through agent A1" "$LR_TMP/other.json" "" .peer.result "$A1_ADDR:7446"

# container to container across the two hosts, over the VXLAN overlay: the far end in c2's namespace
ctl overlay send --netns "$PFX-overlay-c1" -i eth0 --dst-ip 198.18.3.3 --count "$COUNT" --rate 20k \
	--peer "$A2" --peer-netns "$PFX-overlay-c2" --token-file "$TOKEN" --json "$LR_TMP/overlay.json"
lr_show_file "$LR_TMP/overlay.err"
lr_check "c1 -> c2 over the overlay (--peer-netns): exit code" "$RC" == 0
exact "c1 -> c2 over the overlay (--peer-netns)" "$LR_TMP/overlay.json" "" .peer.result "$A2"
lr_check "c1 -> c2: the agent counted on c2's eth0" "$(lr_jget "$LR_TMP/overlay.json" .peer.result.interface)" == eth0

# ---------------------------------------------------------------------------------------------
# Policy, tokens, clocks.

ctl policy send --netns "$H2" -i ul0 --dst-ip 198.19.0.1 --count 10 --peer "$A1_ADDR" --token-file "$TOKEN" \
	--peer-interface br0
refused "an interface outside the agent's --allow" "$RC" 2 "$LR_TMP/policy.err" \
	"interface br0 is not served here: it matches none of the agent's --allow patterns (ul*)"
lr_check_cmd "the agent logged the refusal" grep -q "refused rx on br0" "$LR_TMP/a1.err"

ctl wrong send --netns "$H1" -i ul0 --dst-ip 198.19.0.2 --count 10 --peer "$A2" --token-file "$WRONG"
refused "a wrong token" "$RC" 2 "$LR_TMP/wrong.err" "authentication failed: the agent at $A2 does not hold this token"
ctl none send --netns "$H1" -i ul0 --dst-ip 198.19.0.2 --count 10 --peer "$A2"
refused "no token" "$RC" 2 "$LR_TMP/none.err" "asks for a token: give --token-file"
lr_check_cmd "the agent logged both" lr_wait_log "$LR_TMP/a2.err" "left without authenticating" 2
lr_check "nothing was prepared for them" "$(grep -c ": test rx on ul0: " "$LR_TMP/a2.err")" == 1

forward clock --clock estimate
lr_show_file "$LR_TMP/clock.err"
lr_check "--clock estimate: exit code" "$RC" == 0
lr_check "--clock estimate: latency_ns.clock" "$(lr_jget "$LR_TMP/clock.json" .peer.result.latency_ns.clock)" == estimated
lr_check "--clock estimate: |offset_ns| <= error_bound_ns (the truth is 0)" \
	"$(jq -r '.peer.result.latency_ns | (if .offset_ns < 0 then -.offset_ns else .offset_ns end) <= .error_bound_ns' \
		"$LR_TMP/clock.json")" == true
lr_check "--clock estimate: error_bound_ns" "$(lr_jget "$LR_TMP/clock.json" .peer.result.latency_ns.error_bound_ns)" ">" 0

# ---------------------------------------------------------------------------------------------
# Round trips through the agent: send --peer --rtt, the agent's reflector on h2's ul0 sending the
# frames back to this side's receiver on h1's ul0.

RTT_COUNT=10000
ctl rtt send --netns "$H1" -i ul0 --dst-ip 198.19.0.2 --count "$RTT_COUNT" --rate 20k --rtt --peer "$A2" \
	--token-file "$TOKEN" --json "$LR_TMP/rtt.json"
lr_show_file "$LR_TMP/rtt.err"
R=$LR_TMP/rtt.json
lr_check "--rtt through the agent: exit code" "$RC" == 0
lr_jvalid "$R"
lr_check "--rtt: tx.packets" "$(lr_jget "$R" .tx.packets)" == "$RTT_COUNT"
lr_check "--rtt: forward.sent" "$(lr_jget "$R" .forward.sent)" == "$RTT_COUNT"
lr_check "--rtt: forward.received (reflected)" "$(lr_jget "$R" .forward.received)" == "$RTT_COUNT"
lr_check "--rtt: forward.lost" "$(lr_jget "$R" .forward.lost)" == 0
lr_check "--rtt: return.received" "$(lr_jget "$R" .return.received)" == "$RTT_COUNT"
lr_check "--rtt: return.lost" "$(lr_jget "$R" .return.lost)" == 0
lr_check "--rtt: rtt_settled" "$(jq -r .rtt_settled "$R")" == true
lr_check "--rtt: rtt_ns.p50" "$(lr_jget "$R" .rtt_ns.p50)" ">" 0
lr_check "--rtt: peer.agent" "$(lr_jget "$R" .peer.agent)" == "$A2"
lr_check "--rtt: peer.error" "$(jq -r .peer.error "$R")" == null
lr_check "--rtt: peer.result.command" "$(lr_jget "$R" .peer.result.command)" == reflect
lr_check "--rtt: peer.result.interface" "$(lr_jget "$R" .peer.result.interface)" == ul0
lr_check "--rtt: peer.result.reflect.packets" "$(lr_jget "$R" .peer.result.reflect.packets)" == "$RTT_COUNT"
lr_check "--rtt: peer.result.reflect.eot_markers (5 per flow)" "$(lr_jget "$R" .peer.result.reflect.eot_markers)" \
	== $(($(lr_jget "$R" .flows) * 5))
lr_check "--rtt: peer.result.reflect.forward.lost" "$(lr_jget "$R" .peer.result.reflect.forward.lost)" == 0
lr_check "--rtt: peer.result.reflect.tail_settled" "$(jq -r .peer.result.reflect.tail_settled "$R")" == true
lr_check_cmd "--rtt: the reflector's start line" \
	grep -q "^linerate send: reflector on ul0 (agent $A2): reflecting on ul0, XDP [a-z]* mode: " "$LR_TMP/rtt.err"
lr_check_cmd "--rtt: the peer reflector line" grep -qE "^  peer reflector: $RTT_COUNT frames and [0-9]+ markers \
reflected on ul0 \(agent $A2\), XDP [a-z]+; forward lost 0, reordered 0, duplicates 0 as it saw them; its device refused 0$" \
	"$LR_TMP/rtt.err"
lr_check_cmd "--rtt: no XDP program left on the agent's ul0 (h2)" lr_xdp_absent "$H2" ul0
lr_check_cmd "--rtt: no XDP program left on this side's ul0 (h1)" lr_xdp_absent "$H1" ul0
lr_check_cmd "--rtt: the agent logged the reflector's end" \
	grep -q "test reflect on ul0 ended (quit): $RTT_COUNT frames and [0-9]* markers reflected, forward 0 lost" \
	"$LR_TMP/a2.err"

ctl policy-rtt send --netns "$H2" -i ul0 --dst-ip 198.19.0.1 --count 10 --rtt --peer "$A1_ADDR" \
	--token-file "$TOKEN" --peer-interface br0
refused "a reflector outside the agent's --allow" "$RC" 2 "$LR_TMP/policy-rtt.err" \
	"interface br0 is not served here: it matches none of the agent's --allow patterns (ul*)"
lr_check_cmd "the agent logged the reflector's refusal" grep -q "refused reflect on br0" "$LR_TMP/a1.err"
lr_check_cmd "--rtt refused: nothing attached on h1's br0" lr_xdp_absent "$H1" br0

# ---------------------------------------------------------------------------------------------
# start at a given time, asked by a relay that speaks the protocol itself (tests/e2e/
# start_at_proxy.py): 5 s ahead refused; 300 ms ahead, the agent's sender starts then, not before.

lr_spawn proxy timeout -k 5 60 ip netns exec "$CTL" python3 "$(dirname "${BASH_SOURCE[0]}")/start_at_proxy.py" \
	7460 "$A2_ADDR" 7446 "$LR_TMP/proxy.ready" "$LR_TMP/proxy.json"
PROXY_PID=$LR_LAST_PID
if lr_wait_for_file "$LR_TMP/proxy.ready" 10 "$PROXY_PID"; then
	ctl at send --netns "$H1" -i ul0 --dst-ip 198.19.0.2 --count "$COUNT" --rate 20k --peer 127.0.0.1:7460 \
		--token-file "$TOKEN" --reverse --json "$LR_TMP/at.json"
	lr_show_file "$LR_TMP/at.err"
	lr_wait_pid "$PROXY_PID" 10 || true
	lr_check "start at a time: exit code" "$RC" == 0
	exact "start at a time (--reverse, through the relay)" "$LR_TMP/at.json" .peer.result "" 127.0.0.1:7460
	P=$LR_TMP/proxy.json
	lr_jvalid "$P"
	lr_check "start at a time: the relay saw no error" "$(jq -r .error "$P")" == null
	lr_check "start at a time: the relay replaced one start" "$(lr_jget "$P" .starts)" == 1
	lr_check "start 5 s ahead: an error" "$(lr_jget "$P" .far.type)" == error
	lr_check "start 5 s ahead: code 2" "$(lr_jget "$P" .far.code)" == 2
	lr_check "start 5 s ahead: says why" \
		"$(jq -r '.far.message | test("^start.at_ns: [45][.][0-9]{3} s ahead of this host.s clock: at most 1 s$")' "$P")" \
		== true
	lr_check "start 300 ms ahead: started" "$(lr_jget "$P" .reply.type)" == started
	lr_check "start 300 ms ahead: not before the time asked" \
		"$(jq -r '.reply.at_ns >= .asked_ns' "$P")" == true
	lr_check "start 300 ms ahead: late_ns = at_ns - the time asked" \
		"$(jq -r '.reply.late_ns == .reply.at_ns - .asked_ns' "$P")" == true
	# a bound far above a timer's lateness (tens of microseconds), for a loaded or sanitized run
	lr_check "start 300 ms ahead: late_ns" "$(lr_jget "$P" .reply.late_ns)" "<" 50000000
	lr_check "start 300 ms ahead: the reply came after the wait" "$(lr_jget "$P" .elapsed_ns)" ">" 250000000
	lr_check_cmd "start at a time: logged" grep -q "started, [0-9.]* us after the time asked" "$LR_TMP/a2.err"
else
	lr_fail "start at a time: the relay listens" "$(cat "$LR_TMP/proxy.err")"
fi

# ---------------------------------------------------------------------------------------------
# linerate run with its ends on agents: both remote (this controller runs neither), and only the
# receiver remote (the sender runs here, in h1's namespace, which run enters).

# run_cfg NAME TX_LINES RX_LINES [TEST_LINES]: a two-step sweep of COUNT/2-frame windows
# sender_limited = pass: a busy machine's sender may fall short of the paced rate; the verdict is
# tested in test_throughput and test_configs, not here
run_cfg()
{
	cat >"$LR_TMP/$1.ini" <<EOT
[test]
duration = 200ms
warmup = 0
repeat = 2
sender_limited = pass
${4:-}
[tx]
$2
interface = ul0
dst_ip = 198.19.0.2
rate = 5k
[rx]
$3
interface = ul0
EOT
}

run_checks()
{
	local desc=$1 j=$LR_TMP/$2.json

	lr_check "$desc: exit code" "$RC" == 0
	lr_jvalid "$j"
	lr_check "$desc: steps" "$(jq '.steps | length' "$j")" == 2
	lr_check "$desc: every step passed" "$(jq '[.steps[] | select(.pass | not)] | length' "$j")" == 0
	lr_check "$desc: rx.packets == tx.packets, > 0, in every step" \
		"$(jq '[.steps[] | select(.rx.packets != .tx.packets or .rx.packets == 0)] | length' "$j")" == 0
	lr_check "$desc: lost 0 and settled in every step" \
		"$(jq '[.steps[] | select(.rx.lost != 0 or (.rx.tail_settled | not))] | length' "$j")" == 0
}

run_cfg both "agent = $A1_ADDR
token_file = $TOKEN" "agent = $A2
token_file = $TOKEN"
ctl runboth run "$LR_TMP/both.ini" -q --json "$LR_TMP/both.json"
lr_show_file "$LR_TMP/runboth.err"
run_checks "run, both ends on agents" both
lr_check "run, both ends on agents: one clock (one host)" \
	"$(jq -r '[.steps[].latency_ns.clock] | unique | join(",")' "$LR_TMP/both.json")" == same_host
lr_check_cmd "run, both ends: agent A1 ran the senders" grep -q "test tx on ul0" "$LR_TMP/a1.err"

run_cfg rxonly "netns = $H1" "agent = $A2
token_file = $TOKEN" "clock = estimate"
ctl runrx run "$LR_TMP/rxonly.ini" -q --json "$LR_TMP/rxonly.json"
lr_show_file "$LR_TMP/runrx.err"
run_checks "run, the receiver on an agent" rxonly
lr_check "run, clock = estimate: latency_ns.clock" \
	"$(jq -r '[.steps[].latency_ns.clock] | unique | join(",")' "$LR_TMP/rxonly.json")" == estimated
lr_check "run, clock = estimate: |offset_ns| <= error_bound_ns in every step (the truth is 0)" \
	"$(jq '[.steps[].latency_ns | select((if .offset_ns < 0 then -.offset_ns else .offset_ns end) > .error_bound_ns)] | length' \
		"$LR_TMP/rxonly.json")" == 0

run_cfg badtx "agent = $A1_ADDR" "agent = $A2
token_file = $TOKEN"
ctl runbad run "$LR_TMP/badtx.ini" -q
refused "run, a [tx] agent without its token" "$RC" 2 "$LR_TMP/runbad.err" "[tx] agent: "

# ---------------------------------------------------------------------------------------------
# Busy.

TESTS_SEEN=$(grep -cE "$TEST_RE" "$LR_TMP/a2.err" || true)
background long --duration 4s --json "$LR_TMP/long.json"
LONG=$BG_PID
if wait_for_test a2 10; then
	ctl busy send --netns "$H1" -i ul0 --dst-ip 198.19.0.2 --count 10 --peer "$A2" --token-file "$TOKEN"
	refused "a second controller" "$RC" 1 "$LR_TMP/busy.err" "is busy with another test: rx on ul0 for 198.18.250.5"
	lr_check_cmd "the agent logged the refusal" grep -q "refused: busy with rx on ul0" "$LR_TMP/a2.err"
else
	lr_fail "the first test started" "$(tail -n 3 "$LR_TMP/a2.err")"
fi
RC=0
lr_wait_pid "$LONG" 20 || RC=$?
lr_check "the first controller: exit code" "$RC" == 0
lr_check "the first controller: no loss" "$(lr_jget "$LR_TMP/long.json" .peer.result.rx.lost)" == 0

# ---------------------------------------------------------------------------------------------
# The controller killed: the agent is clean within 2 s, and ready.

# kill_controller DESC ARGS...: a background controller, SIGKILLed once its test runs.
kill_controller()
{
	local desc=$1

	shift
	background "kill-$TESTS_SEEN" "$@"
	if ! wait_for_test a2 10; then
		lr_fail "$desc: the test started" "$(tail -n 3 "$LR_TMP/a2.err")"
		return
	fi
	sleep 0.5
	kill -KILL "$BG_PID"
	if clean_within "$H2" ul0 2; then
		lr_pass "$desc: no XDP program on ul0, no lrlive tap in h2 ${CLEAN_MS} ms after"
	else
		lr_fail "$desc: clean within 2 s" "$(ip -n "$H2" -d link show | grep -E 'xdp|lrlive' | head -3)"
	fi
	lr_check_cmd "$desc: the agent logged why" lr_wait_log "$LR_TMP/a2.err" "ended (the controller closed the connection)" 2
	wait "$BG_PID" 2>/dev/null || true
}

kill_controller "controller killed, the agent receiving"
kill_controller "controller killed, the agent sending (live)" --reverse --engine live
kill_controller "controller killed, the agent reflecting (--rtt)" --rtt
# the killed controller's own receiver stays attached in h1: its host is this test's to clean
ip -n "$H1" link set ul0 xdp off 2>/dev/null || true
forward next
lr_show_file "$LR_TMP/next.err"
lr_check "the next test: exit code" "$RC" == 0
exact "the next test" "$LR_TMP/next.json" "" .peer.result "$A2"

# ---------------------------------------------------------------------------------------------
# The link cut, the agent killed: the controller says so and exits 1 within 5 s.

# fails_within DESC TEXT: BG_PID exits 1 within 5 s of now, saying TEXT.
fails_within()
{
	local t0 rc=0 ms

	t0=$(lr_now_ns)
	lr_wait_pid "$BG_PID" 8 || rc=$?
	ms=$((($(lr_now_ns) - t0) / 1000000))
	lr_check "$1: the controller's exit code" "$rc" == 1
	lr_check "$1: the controller exited within 5000 ms" "$ms" "<=" 5000
	if grep -qF -- "$2" "$LR_TMP/$3.err"; then
		lr_pass "$1: the controller says \"$2\""
	else
		lr_fail "$1: the controller says \"$2\"" "$(tail -n 3 "$LR_TMP/$3.err")"
	fi
}

background cut
wait_for_test a2 10 || lr_fail "link cut: the test started" "$(tail -n 3 "$LR_TMP/a2.err")"
sleep 0.5
ip -n "$CTL" link set m2 down
fails_within "link cut" "the agent at $A2 failed" cut
if clean_within "$H2" ul0 3; then
	lr_pass "link cut: the agent's dead-man timer ended the test (no XDP on ul0) ${CLEAN_MS} ms after"
else
	lr_fail "link cut: the agent ended the test" "$(tail -n 2 "$LR_TMP/a2.err")"
fi
lr_check_cmd "link cut: the agent logged why" lr_wait_log "$LR_TMP/a2.err" "no message from the controller for 2000 ms" 2
ip -n "$CTL" link set m2 up
ip -n "$H1" link set ul0 xdp off 2>/dev/null || true

background cut-rtt --rtt
wait_for_test a2 10 || lr_fail "link cut, --rtt: the test started" "$(tail -n 3 "$LR_TMP/a2.err")"
sleep 0.5
ip -n "$CTL" link set m2 down
fails_within "link cut, --rtt" "the agent at $A2 failed" cut-rtt
if clean_within "$H2" ul0 3; then
	lr_pass "link cut, --rtt: the agent's dead-man timer detached the reflector (no XDP on ul0) ${CLEAN_MS} ms after"
else
	lr_fail "link cut, --rtt: the agent detached the reflector" "$(tail -n 2 "$LR_TMP/a2.err")"
fi
lr_check_cmd "link cut, --rtt: the agent logged why" \
	lr_wait_log "$LR_TMP/a2.err" "test reflect on ul0 ended (no message from the controller for 2000 ms)" 3
lr_check_cmd "link cut, --rtt: this side's counts are kept" grep -q "^  return " "$LR_TMP/cut-rtt.err"
ip -n "$CTL" link set m2 up
ip -n "$H1" link set ul0 xdp off 2>/dev/null || true

background cut-rev --reverse
wait_for_test a2 10 || lr_fail "link cut, --reverse: the test started" "$(tail -n 3 "$LR_TMP/a2.err")"
sleep 0.5
ip -n "$CTL" link set m2 down
fails_within "link cut, --reverse" "the agent at $A2 failed" cut-rev
lr_check_cmd "link cut, --reverse: the agent's dead-man timer ended its sender" \
	lr_wait_log "$LR_TMP/a2.err" "test tx on ul0 ended (no message from the controller for 2000 ms)" 3
lr_check_cmd "link cut, --reverse: this side's counts are kept" grep -q "^linerate recv: .* on ul0, " "$LR_TMP/cut-rev.err"
ip -n "$CTL" link set m2 up

background killed-agent
wait_for_test a2 10 || lr_fail "agent killed: the test started" "$(tail -n 3 "$LR_TMP/a2.err")"
sleep 0.5
kill -KILL "$A2_PID"
fails_within "agent SIGKILLed (its session ends the test)" \
	"--peer $A2: the agent ended the test: the agent's main process died" killed-agent
if clean_within "$H2" ul0 2; then
	lr_pass "agent SIGKILLed: its session detached everything ${CLEAN_MS} ms after"
else
	lr_fail "agent SIGKILLed: its session detached everything" "$(ip -n "$H2" -d link show ul0 | head -3)"
fi

agent a2b "$H2" "$A2_ADDR"
A2_PID=$AGENT_PID
background crash
TESTS_SEEN=0
if wait_for_test a2b 10; then
	sleep 0.5
	SESSION=$(ps -o pid= --ppid "$A2_PID" | tr -d ' ' | head -n 1)
	# the session first: killed after the agent, it could take the agent's death signal (its
	# PDEATHSIG, SIGTERM) in between and end the test in words, which is not a crash
	if [[ -n $SESSION ]]; then
		kill -KILL "$SESSION"
	fi
	kill -KILL "$A2_PID"
	fails_within "agent and session SIGKILLed (a crash)" "the agent at $A2 failed" crash
else
	lr_fail "crash: the test started" "$(tail -n 3 "$LR_TMP/a2b.err")"
fi
ip -n "$H2" link set ul0 xdp off 2>/dev/null || true
ip -n "$H1" link set ul0 xdp off 2>/dev/null || true

# ---------------------------------------------------------------------------------------------
# SIGTERM: an agent ends its running test first, tells the controller, exits 0; an idle agent
# exits 0 and removes its ready file.

# exits_within PID TIMEOUT_S: the agent PID (a child of ours) ends within TIMEOUT_S; its exit code in RC.
exits_within()
{
	RC=0
	lr_wait_pid "$1" "$2" || RC=$?
}

agent a2c "$H2" "$A2_ADDR"
A2_PID=$AGENT_PID
background term
TESTS_SEEN=0
if wait_for_test a2c 10; then
	sleep 0.5
	kill -TERM "$A2_PID"
	fails_within "agent SIGTERMed mid-test" "the agent is stopping (SIGTERM)" term
	exits_within "$A2_PID" 5
	lr_check "agent SIGTERMed mid-test: its exit code" "$RC" == 0
	if clean_within "$H2" ul0 1; then
		lr_pass "agent SIGTERMed mid-test: no XDP program on ul0"
	else
		lr_fail "agent SIGTERMed mid-test: no XDP program on ul0" "$(ip -n "$H2" -d link show ul0 | head -3)"
	fi
	lr_check_cmd "agent SIGTERMed mid-test: logged" grep -q "ending the running test first" "$LR_TMP/a2c.err"
else
	lr_fail "SIGTERM: the test started" "$(tail -n 3 "$LR_TMP/a2c.err")"
fi

kill -TERM "$A1_PID"
exits_within "$A1_PID" 5
lr_check "SIGTERM, idle: the agent's exit code" "$RC" == 0
lr_check_cmd "SIGTERM: logged" grep -q "linerate agent: stopped" "$LR_TMP/a1.err"
lr_check "SIGTERM: the ready file is gone" "$([[ -e $LR_TMP/a1.ready ]] && echo present || echo gone)" == gone

lr_finish
