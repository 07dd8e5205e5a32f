#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# linerate agent under a flood of idle TCP connections (issue 24, finding 2): connections that
# never say a word, held open and opened again as the agent closes them, must not lock a real
# controller out, nor may handshakes begun and never finished. The agent's namespace joins four
# client namespaces by veth; it listens on an address of its loopback that each reaches through
# its link.
#
#   [lr-agent_flood-one-PID]  fl0 198.18.60.2/24 ---- ag0 198.18.60.1/24 \
#     200 idle connections from one address                                \
#   [lr-agent_flood-many-PID] fl0 198.18.61.10..49/24 - ag1 198.18.61.1/24 -[lr-agent_flood-ag-PID]
#     5 idle connections from each of 40 addresses                         /  agent on lo 198.18.63.1:7446
#   [lr-agent_flood-ctl-PID]  c0 198.18.62.2/24 ------ ag2 198.18.62.1/24 /|  --metrics 198.18.63.1:9446
#     controllers, hello probes, scrapes                                   |   (its receiver on ag2)
#     and in round 3, 50 idle connections from the controllers' own address |
#   [lr-agent_flood-talk-PID] t0 198.18.64.10..159/24 - ag3 198.18.64.1/24 -/
#     in round 4, from each of 150 addresses a hello, then not a word
#
# Checks, in two rounds: the flood from one address alone, then both floods together:
#   - each flood is held: the agent closed its idle connections (the flood opened more than it
#     holds, again and again)
#   - 5 controllers in a row, each right after a hello probe: the probe's hello answered ("hello")
#     within 1 s of its connect, and `send --peer --count 2000 --rate 20k` exits 0 with the
#     agent's receiver counting exactly 2000 and lost 0
#   - busy, both floods on: a second controller while a test runs exits 1 within 1 s, its one line
#     naming the test; an unauthenticated hello meanwhile is answered "hello" within 1 s (busy is
#     said only after auth); the first controller's test exact
#   - the agent's metrics answer meanwhile, and count the dropped connections (refused, reason
#     full, > 0); the sessions total is exactly the controllers'
#   - the floods ended, 3 idle connections alone for 2.5 s: the agent closes them at the first
#     byte's deadline, counted (refused, reason timeout, 3 more at least)
#   - the agent's log names no flood address (at most one summary line per 10 s about them) and
#     the agent is still running at the end
# And in round 3, a flood from the controllers' own address 198.18.62.2 (the other two ended):
#   - it is held, and 5 controllers in a row from that address get in as above: a newcomer over
#     its address's share takes the place of one of that address's idle connections
# And in round 4, after the log's checks, 150 addresses each holding one connection that said
# hello and waits (the agent closes it 3 s on, unauthenticated; it comes back 200 ms later):
#   - it is held, and 5 controllers in a row get in as above, though every address in the full
#     table holds one connection and it spoke: the oldest is closed for a newcomer
# And in round 5, the agent's soft RLIMIT_NOFILE lowered (prlimit) to leave it no descriptor:
#   - a hello meanwhile is not answered, and the agent takes under 0.3 s of CPU in 3 s with that
#     connection queued (it does not spin on its readable listener); it says so in one line per
#     10 s at most
#   - with the limit as it was, a controller gets in as above
# And in round 6, the limit leaving it two descriptors: its controller's connection takes one, and
# the session's status pipe cannot be made after "ok" was said:
#   - the controller exits 1, its one line saying why; then, the limit as it was, one gets in
# Bounded: 400 connections at most at a time, each flood at most 90 s, 22 tests of 2000 frames and
# one of 40000.
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

AG_ADDR=198.18.63.1
PORT=7446
MPORT=9446
COUNT=2000
RUNS=5
PROBE=$LR_E2E_DIR/flood_probe.py

lr_init
lr_require_cmds python3 prlimit getconf
lr_netns_add AG ag
lr_netns_add ONE one
lr_netns_add MANY many
lr_netns_add CTL ctl
lr_netns_add TALK talk
lr_veth "$ONE" fl0 "$AG" ag0
lr_veth "$MANY" fl0 "$AG" ag1
lr_veth "$CTL" c0 "$AG" ag2
lr_veth "$TALK" t0 "$AG" ag3
lr_addr "$AG" ag0 198.18.60.1/24
lr_addr "$AG" ag1 198.18.61.1/24
lr_addr "$AG" ag2 198.18.62.1/24
lr_addr "$AG" ag3 198.18.64.1/24
ip -n "$AG" link set lo up
ip -n "$AG" addr add "$AG_ADDR/32" dev lo
lr_addr "$ONE" fl0 198.18.60.2/24
ip -n "$ONE" route add "$AG_ADDR/32" via 198.18.60.1
MANY_SRC=()
for i in $(seq 10 49); do
	ip -n "$MANY" addr add "198.18.61.$i/24" dev fl0
	MANY_SRC+=("198.18.61.$i")
done
ip -n "$MANY" link set fl0 up
ip -n "$MANY" route add "$AG_ADDR/32" via 198.18.61.1
lr_addr "$CTL" c0 198.18.62.2/24
ip -n "$CTL" route add "$AG_ADDR/32" via 198.18.62.1
TALK_SRC=()
for i in $(seq 10 159); do
	TALK_SRC+=("198.18.64.$i")
done
printf 'addr add %s/24 dev t0\n' "${TALK_SRC[@]}" | ip -n "$TALK" -batch -
ip -n "$TALK" link set t0 up
ip -n "$TALK" route add "$AG_ADDR/32" via 198.18.64.1

TOKEN=$LR_TMP/token
(
	umask 077
	echo "the flood test's token $$" >"$TOKEN"
)

lr_spawn agent ip netns exec "$AG" "$LINERATE" agent --listen "$AG_ADDR:$PORT" --token-file "$TOKEN" \
	--metrics "$AG_ADDR:$MPORT" --ready-file "$LR_TMP/agent.ready"
lr_wait_for_file "$LR_TMP/agent.ready" 10 "$LR_LAST_PID" || {
	lr_show_file "$LR_TMP/agent.err"
	lr_die "the agent never became ready"
}
AGENT_PID=$(cat "$LR_TMP/agent.ready")

# flood NAME NS hold|talk PER_SOURCE SRC...: connections held in the background, idle (hold) or
# each after a hello (talk); FLOOD_PID.
flood()
{
	local name=$1 ns=$2 how=$3 per=$4

	shift 4
	lr_spawn "$name" ip netns exec "$ns" python3 "$PROBE" "$how" "$AG_ADDR" "$PORT" "$per" 90 \
		"$LR_TMP/$name.stats" "$@"
	FLOOD_PID=$LR_LAST_PID
}

# flood_stop NAME PID: ends the flood, then checks the agent closed its connections again and again.
flood_stop()
{
	local name=$1 pid=$2 opened closed

	kill -TERM "$pid" 2>/dev/null || true
	lr_wait_pid "$pid" 10 || true
	read -r _ opened _ closed _ < <(cat "$LR_TMP/$name.stats" 2>/dev/null || echo "opened 0 closed_by_agent 0")
	lr_log "info: $name: $(cat "$LR_TMP/$name.stats" 2>/dev/null)"
	lr_check "$name: the flood was held (connections opened, again as the agent closed them)" "${opened:-0}" ">" "$3"
	lr_check "$name: the agent closed idle connections" "${closed:-0}" ">" "$3"
}

# nofile_leaving PID FREE: the soft RLIMIT_NOFILE under which PID can open FREE more descriptors.
nofile_leaving()
{
	local pid=$1 fd=0 free=0 open="" f

	for f in /proc/"$pid"/fd/*; do
		open+=" ${f##*/}"
	done
	open+=" "
	while :; do
		if [[ $open != *" $fd "* ]]; then
			((free == $2)) && break
			free=$((free + 1))
		fi
		fd=$((fd + 1))
	done
	echo "$fd"
}

# cpu_ticks PID: its user and system time so far, in clock ticks ("none": it is gone).
cpu_ticks()
{
	awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo none
}

# metric SERIES: its value on the agent's page, scraped from the controllers' namespace ("none").
metric()
{
	timeout -k 2 10 ip netns exec "$CTL" python3 -c '
import sys, urllib.request
page = urllib.request.urlopen("http://'"$AG_ADDR:$MPORT"'/metrics", timeout=2).read().decode()
for line in page.splitlines():
    if line.startswith(sys.argv[1] + " "):
        print(line.rsplit(" ", 1)[1]); break
else:
    print("none")' "$1" 2>/dev/null || echo none
}

SESSIONS=0

# controllers ROUND [N]: N (RUNS) times a hello probe, then a controller's exact test.
controllers()
{
	local round=$1 n=${2:-$RUNS} i ms kind rc j

	for ((i = 1; i <= n; i++)); do
		read -r ms kind < <(timeout -k 2 10 ip netns exec "$CTL" python3 "$PROBE" hello "$AG_ADDR" "$PORT" ||
			echo "9999 none")
		lr_check "$round, controller $i: hello answered" "$kind" == hello
		lr_check "$round, controller $i: hello answered within 1 s (ms)" "$ms" "<" 1000
		j=$LR_TMP/$round-$i.json
		rc=0
		timeout -k 5 60 ip netns exec "$CTL" "$LINERATE" send -i c0 --dst-ip 198.18.62.1 --count "$COUNT" \
			--rate 20k --peer "$AG_ADDR:$PORT" --token-file "$TOKEN" --json "$j" -q \
			>"$LR_TMP/$round-$i.out" 2>"$LR_TMP/$round-$i.err" || rc=$?
		lr_check "$round, controller $i: exit code" "$rc" == 0
		if ((rc != 0)); then
			lr_show_file "$LR_TMP/$round-$i.err"
		else
			SESSIONS=$((SESSIONS + 1))
		fi
		lr_check "$round, controller $i: the agent's receiver counted" \
			"$(jq -r '.peer.result.rx.packets // "none"' "$j" 2>/dev/null || echo none)" == "$COUNT"
		lr_check "$round, controller $i: lost" \
			"$(jq -r '.peer.result.rx.lost // "none"' "$j" 2>/dev/null || echo none)" == 0
	done
}

# ---------------------------------------------------------------------------------------------
# Round 1: 200 idle connections from one address.

flood one "$ONE" hold 200 198.18.60.2
ONE_PID=$FLOOD_PID
sleep 2
controllers one

# ---------------------------------------------------------------------------------------------
# Round 2: and 5 from each of 40 more addresses.

flood many "$MANY" hold 5 "${MANY_SRC[@]}"
MANY_PID=$FLOOD_PID
sleep 2
controllers many
# A second controller while a test runs, both floods on: told "busy" at once, but only once it
# authenticated; an unauthenticated hello meanwhile hears "hello", nothing of the test.
READY_BEFORE=$(grep -c ': test rx on ag2: ready' "$LR_TMP/agent.err" || true)
lr_spawn long ip netns exec "$CTL" timeout -k 5 60 "$LINERATE" send -i c0 --dst-ip 198.18.62.1 \
	--count $((COUNT * 20)) --rate 20k --peer "$AG_ADDR:$PORT" --token-file "$TOKEN" --json "$LR_TMP/long.json" -q
LONG_PID=$LR_LAST_PID
for _ in $(seq 100); do
	(($(grep -c ': test rx on ag2: ready' "$LR_TMP/agent.err" || true) > READY_BEFORE)) && break
	sleep 0.05
done
read -r ms kind < <(timeout -k 2 10 ip netns exec "$CTL" python3 "$PROBE" hello "$AG_ADDR" "$PORT" || echo "9999 none")
lr_check "busy: an unauthenticated hello meanwhile is answered hello, not busy" "$kind" == hello
lr_check "busy: that hello within 1 s (ms)" "$ms" "<" 1000
T0=$(lr_now_ns)
RC=0
timeout -k 5 60 ip netns exec "$CTL" "$LINERATE" send -i c0 --dst-ip 198.18.62.1 --count 10 --peer "$AG_ADDR:$PORT" \
	--token-file "$TOKEN" -q >"$LR_TMP/busy.out" 2>"$LR_TMP/busy.err" || RC=$?
BUSY_MS=$((($(lr_now_ns) - T0) / 1000000))
lr_check "busy: the second controller's exit code" "$RC" == 1
lr_check "busy: its one line names the running test" \
	"$(grep -c "the agent at $AG_ADDR:$PORT is busy with another test: rx on ag2" "$LR_TMP/busy.err" || true)" == 1
lr_check "busy: told within 1 s (ms)" "$BUSY_MS" "<" 1000
RC=0
lr_wait_pid "$LONG_PID" 30 || RC=$?
lr_check "busy: the first controller's exit code" "$RC" == 0
lr_check "busy: the first controller's test exact" "$(jq -r '.peer.result.rx.packets // "none"' "$LR_TMP/long.json" \
	2>/dev/null || echo none)" == $((COUNT * 20))
((RC == 0)) && SESSIONS=$((SESSIONS + 1))
lr_check "both floods: the agent's metrics answer (sessions)" "$(metric linerate_agent_sessions_total)" == "$SESSIONS"
lr_check "both floods: refused busy" "$(metric 'linerate_agent_sessions_refused_total{reason="busy"}')" == 1
FULL=$(metric 'linerate_agent_sessions_refused_total{reason="full"}')
lr_log "info: refused: full $FULL"
lr_check "the agent counted connections dropped over its cap" "$FULL" ">" 0
flood_stop many "$MANY_PID" 200
flood_stop one "$ONE_PID" 200
# A flood's idle connections make room for its newer ones, so few of them live to their deadline:
# the deadline is seen with 3 idle connections alone, for 2.5 s.
TIMEOUT0=$(metric 'linerate_agent_sessions_refused_total{reason="timeout"}')
timeout -k 2 10 ip netns exec "$CTL" python3 "$PROBE" hold "$AG_ADDR" "$PORT" 3 2.5 "$LR_TMP/quiet.stats" \
	198.18.62.2 || true
TIMEOUT=$(metric 'linerate_agent_sessions_refused_total{reason="timeout"}')
lr_log "info: quiet: $(cat "$LR_TMP/quiet.stats" 2>/dev/null); refused: timeout $TIMEOUT0, then $TIMEOUT"
DELTA=none
lr_is_num "$TIMEOUT0" && lr_is_num "$TIMEOUT" && DELTA=$((TIMEOUT - TIMEOUT0))
lr_check "the agent closed idle connections alone past the first byte's deadline (refused, timeout)" \
	"$DELTA" ">=" 3

# ---------------------------------------------------------------------------------------------
# Round 3: 50 idle connections from the controllers' own address, always at its share.

flood own "$CTL" hold 50 198.18.62.2
OWN_PID=$FLOOD_PID
sleep 2
controllers own
flood_stop own "$OWN_PID" 50

# ---------------------------------------------------------------------------------------------
# The agent's log: one line per event, none per flood connection.

LINES=$(wc -l <"$LR_TMP/agent.err")
SUMMARIES=$(grep -c 'unauthenticated connections closed in the last' "$LR_TMP/agent.err" || true)
lr_log "info: the agent's log: $LINES lines, $SUMMARIES summary lines"
lr_check "the agent's log: summary lines (one per 10 s at most)" "$SUMMARIES" "<=" $((SECONDS / 10 + 1))
lr_check "the agent's log: lines naming a flood address" "$(grep -cE '198\.18\.6[01]\.' "$LR_TMP/agent.err" || true)" == 0
lr_check "the agent's log: lines in all" "$LINES" "<" 200

# ---------------------------------------------------------------------------------------------
# Round 4: a full table of lone connections that spoke, from 150 addresses.

flood talk "$TALK" talk 1 "${TALK_SRC[@]}"
TALK_PID=$FLOOD_PID
sleep 4
controllers talk
flood_stop talk "$TALK_PID" 150

# ---------------------------------------------------------------------------------------------
# Round 5: the agent out of file descriptors, its soft RLIMIT_NOFILE lowered with prlimit so that
# it can open none, a connection queued for it; then the limit as it was.

read -r NOFILE_SOFT NOFILE_HARD < <(prlimit --pid "$AGENT_PID" --nofile --raw --noheadings --output SOFT,HARD)
HZ=$(getconf CLK_TCK)
sleep 1	# the floods' last connections closed
S0=$SECONDS
prlimit --pid "$AGENT_PID" --nofile="$(nofile_leaving "$AGENT_PID" 0):$NOFILE_HARD"
lr_spawn stuck ip netns exec "$CTL" python3 "$PROBE" hello "$AG_ADDR" "$PORT"
STUCK_PID=$LR_LAST_PID
sleep 0.5
T0=$(cpu_ticks "$AGENT_PID")
sleep 3
T1=$(cpu_ticks "$AGENT_PID")
lr_wait_pid "$STUCK_PID" 10 || true
lr_check "out of fds: a hello meanwhile is not answered" "$(awk '{ print $2 }' "$LR_TMP/stuck.out")" == none
CPU=none
lr_is_num "$T0" && lr_is_num "$T1" && CPU=$((T1 - T0))
lr_check "out of fds: the agent's CPU time over 3 s, a connection queued (ticks of 1/$HZ s)" \
	"$CPU" "<" $((HZ * 3 / 10))
ACCEPT_LINES=$(grep -c 'accept: Too many open files' "$LR_TMP/agent.err" || true)
lr_check "out of fds: the agent said so" "$ACCEPT_LINES" ">=" 1
prlimit --pid "$AGENT_PID" --nofile="$NOFILE_SOFT:$NOFILE_HARD"
lr_check "out of fds: the agent's lines about it (one per 10 s at most)" "$ACCEPT_LINES" "<=" \
	$(((SECONDS - S0) / 10 + 2))
controllers fds 1

# ---------------------------------------------------------------------------------------------
# Round 6: room for two descriptors, one for a controller's connection and one short of the
# status pipe its session needs, after the controller heard "ok".

prlimit --pid "$AGENT_PID" --nofile="$(nofile_leaving "$AGENT_PID" 2):$NOFILE_HARD"
RC=0
timeout -k 5 60 ip netns exec "$CTL" "$LINERATE" send -i c0 --dst-ip 198.18.62.1 --count 10 --peer "$AG_ADDR:$PORT" \
	--token-file "$TOKEN" -q >"$LR_TMP/nopipe.out" 2>"$LR_TMP/nopipe.err" || RC=$?
prlimit --pid "$AGENT_PID" --nofile="$NOFILE_SOFT:$NOFILE_HARD"
lr_check "no room for a session: the controller's exit code" "$RC" == 1
lr_check "no room for a session: its one line says why" \
	"$(grep -c 'cannot make a status pipe: Too many open files' "$LR_TMP/nopipe.err" || true)" == 1
controllers pipe 1
lr_check "the agent is still running" "$(kill -0 "$AGENT_PID" 2>/dev/null && echo yes || echo no)" == yes
lr_finish
