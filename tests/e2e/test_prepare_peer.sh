#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# send --prepare-peer and run's prepare_peer: live on the lab's bridge and overlay paths, the peer's
# GRO switched on for the test and always put back.
#
#   bridge   [P-bridge-c1] eth0 198.18.2.2 <--veth--> vc1 -[br0 in P-bridge-host]- vc2 <--veth--> eth0 198.18.2.3 [P-bridge-c2]
#   overlay  [P-overlay-c1] eth0 198.18.3.2 <--veth--> vc1 -[br0, vx0 in P-overlay-h1]= vxlan =[h2]- vc2 <--> eth0 198.18.3.3 [P-overlay-c2]
#            linerate send on c1's eth0; recv --once on c2's eth0; the guardian acts on vc1 (GRO off, as
#            the lab leaves it), the first hop's veth peer, in P-bridge-host or P-overlay-h1
#   hidden   [lr-prepare_peer-a-PID] a0 <--veth--> b0 [a namespace no /run/netns name, /proc entry or
#            /run/docker/netns file names: bind-mounted under the test's temp dir only]
#   (P = lrpp<pid>; scripts/lab builds and removes both labs)
#
# Checks, on each of the bridge and overlay paths:
#   - without the option --engine live is refused: exit 2, one line naming --prepare-peer; vc1's
#     GRO untouched
#   - --engine live --prepare-peer at 50 kpps, 20000 frames: exact (rx.packets == rx.sent == 20000,
#     lost 0); the start line says GRO was switched on at vc1 in its namespace, the summary that it
#     was put back; the JSON's prepare_peer says switched_on, restored; vc1's GRO off again and the
#     records under /run/linerate/peer-gro gone
#   - --engine auto --prepare-peer at --rate max picks live (its start line), and received + lost
#     == sent from the markers == 20000
#   - SIGINT mid-test (GRO seen on first): send exits 0, GRO off right after; the same for SIGTERM
#   - SIGKILL mid-test: GRO off again within 5 s (the guardian), which says so on the sender's
#     stderr; no record left
# On the bridge path only:
#   - a peer whose GRO the user had on: "nothing to do", action none, left on
#   - while a send --prepare-peer holds vc1, --engine live without the option is refused (exit 2,
#     one line naming vc1 and --prepare-peer): that GRO goes off when the holder ends; --engine
#     auto takes AF_XDP instead
#   - two sends sharing vc1, both long: once the second has started (its start line), the first is
#     ended by SIGINT and leaves GRO on (left_on_for 1, not restored) while the second still runs;
#     the second (joined), ended the same way, puts it back
#   - a run SIGKILLed together with its guardian: GRO stays on and its record stays; the next run
#     on vc1 takes the record's "off" as the user's setting and puts it back
#   - the same, then vc1 renamed: the record, of another name, is dropped; the next run takes the
#     device as it is (GRO on: nothing to do) and removes the record
#   - the guardian alone SIGKILLed mid-test: GRO stays on until the sender lets go; then (SIGINT)
#     send is not killed by SIGPIPE (exit 0, its JSON written), one line says the guardian died
#     and a new one put GRO back, the summary says so too; GRO off, no record left
#   - vc1's mutex (its state file's LOCK_EX) held by another process: the guardian gives up
#     waiting within its bound, before the sender's 10 s: exit 1, one line saying so, GRO off
#   - linerate run with [tx] prepare_peer = yes, engine live, two rates: every step exact, the JSON's
#     prepare_peer restored, the table says it, GRO off after
#   - an agent in c1 (on c1's loopback) as the sender: send --peer --reverse --prepare-peer counts
#     exactly, the agent's send document (peer.result) says GRO was switched on and put back; run
#     with [tx] agent and prepare_peer = yes: exact steps, the agent holds it per phase (its log
#     says each hold and end), GRO off after
#   - a user not root: exit 2, one line saying root is needed, vc1's GRO untouched
#   - the records' directory writable by its group: exit 1 (the host's fault, not the input's),
#     one line, vc1's GRO untouched
#   - the agent's sender (send --peer --reverse) with --size past its eth0's MTU: exit 2, the
#     agent's refusal names the size, vc1's GRO never switched
#   - the same run with [tx] pcap, under strace: run's process forks the guardian before it makes
#     any thread (the sampler's among them)
#   - prepare_peer = maybe: run --check exits 2 with one line naming FILE:LINE and the key
#   - --size past eth0's MTU with --prepare-peer: exit 2, the size's line alone, and vc1's GRO never
#     switched (ethtool --monitor in the host namespace sees no feature change of vc1)
#   - a veth whose peer's namespace cannot be found: exit 2, one line, the peer's GRO unchanged
#   - the peer replaced mid-test (x0 <-> y0 deleted while the sender is stopped; a new veth y0 <-> y1,
#     GRO on, at y0's old ifindex): at the end the new y0 is left alone (GRO still on), the summary
#     says y0 is gone, no record is left
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COUNT=20000
RECORDS=/run/linerate/peer-gro
lr_init
lr_require_cmds ethtool mount umount stat nsenter flock stdbuf strace setpriv
PFX=lrpp$$
lr_lab_prefix "$PFX"

# gro NS IF: "on" or "off"
gro()
{
	ip netns exec "$1" ethtool -k "$2" | awk '$1 == "generic-receive-offload:" { print $2 }'
}

# records_key NS IF: the name the guardian's records of IF in NS have (namespace dev and inode, ifindex)
records_key()
{
	local dev ino idx

	read -r dev ino < <(stat -c '%d %i' "/run/netns/$1")
	idx=$(ip -n "$1" -j link show dev "$2" | jq -r '.[0].ifindex')
	printf 'ns-%x-%x-if-%d\n' "$dev" "$ino" "$idx"
}

# records_gone KEY: no state or users file of KEY is left
# shellcheck disable=SC2317 # called through lr_check_cmd
records_gone()
{
	[[ ! -e $RECORDS/$1.state && ! -e $RECORDS/$1.users ]]
}

# wait_line FILE PATTERN SECS PID: until FILE has a line matching PATTERN (or PID exits, or SECS pass)
wait_line()
{
	local deadline

	deadline=$(($(lr_now_ns) + $3 * 1000000000))
	until grep -q -- "$2" "$1" 2>/dev/null; do
		kill -0 "$4" 2>/dev/null || return 1
		(($(lr_now_ns) < deadline)) || return 1
		sleep 0.05
	done
}

# wait_gro NS IF STATE SECS: until IF's GRO is STATE, polled; false when SECS pass first
# shellcheck disable=SC2317 # called through lr_check_cmd
wait_gro()
{
	local deadline

	deadline=$(($(lr_now_ns) + $4 * 1000000000))
	until [[ $(gro "$1" "$2") == "$3" ]]; do
		(($(lr_now_ns) < deadline)) || return 1
		sleep 0.05
	done
}

# exchange NAME NS_SND NS_RCV DST SEND_ARGS...: recv --once on NS_RCV's eth0 (ready first), then
# send from NS_SND's eth0; leaves NAME.{send,recv}.json, NAME.send.err, SEND_RC, RECV_RC
exchange()
{
	local name=$1 nss=$2 nsr=$3 dst=$4 pid

	shift 4
	rm -f "$LR_TMP/$name.ready"
	lr_spawn "$name.recv" timeout -k 5 45 ip netns exec "$nsr" "$LINERATE" recv -i eth0 --once --duration 30 -q \
		--json "$LR_TMP/$name.recv.json" --ready-file "$LR_TMP/$name.ready"
	pid=$LR_LAST_PID
	lr_wait_for_file "$LR_TMP/$name.ready" 15 "$pid" || lr_die "$name: recv never became ready"
	SEND_RC=0
	timeout -k 5 60 ip netns exec "$nss" "$LINERATE" send -i eth0 --dst-ip "$dst" --count "$COUNT" -q "$@" \
		--json "$LR_TMP/$name.send.json" >"$LR_TMP/$name.send.out" 2>"$LR_TMP/$name.send.err" || SEND_RC=$?
	RECV_RC=0
	lr_wait_pid "$pid" 40 || RECV_RC=$?
	lr_show_file "$LR_TMP/$name.send.err"
}

# path_cases TOPO HOSTNS DST: every case of one path, c1 -> c2, the peer vc1 in HOSTNS
path_cases()
{
	local topo=$1 hns=$PFX-$1-$2 dst=$3 c1=$PFX-$1-c1 c2=$PFX-$1-c2 key s r rc pid what

	key=$(records_key "$hns" vc1)
	lr_log "== $topo: the peer vc1 in $hns, GRO $(gro "$hns" vc1); records $key"
	lr_check "$topo: vc1's GRO is off, as the lab leaves it" "$(gro "$hns" vc1)" == off

	what="$topo: --engine live without --prepare-peer"
	rc=0
	ip netns exec "$c1" "$LINERATE" send -i eth0 --dst-ip "$dst" --count 100 --engine live \
		>"$LR_TMP/refuse.out" 2>"$LR_TMP/refuse.err" || rc=$?
	lr_check "$what: exit code" "$rc" == 2
	lr_check "$what: one line" "$(wc -l <"$LR_TMP/refuse.err")" == 1
	lr_check_cmd "$what: the line names the veth peer and --prepare-peer" \
		grep -q "veth peer runs XDP or GRO (add --prepare-peer" "$LR_TMP/refuse.err"
	lr_check "$what: vc1's GRO untouched" "$(gro "$hns" vc1)" == off

	what="$topo: --engine live --prepare-peer"
	exchange live "$c1" "$c2" "$dst" --engine live --rate 50k --prepare-peer
	s=$LR_TMP/live.send.json r=$LR_TMP/live.recv.json
	lr_check "$what: send exit code" "$SEND_RC" == 0
	lr_check "$what: recv exit code" "$RECV_RC" == 0
	lr_check "$what: engine" "$(lr_jget "$s" .engine)" == live
	lr_check "$what: rx.packets" "$(lr_jget "$r" .rx.packets)" == "$COUNT"
	lr_check "$what: rx.sent (markers)" "$(lr_jget "$r" .rx.sent)" == "$COUNT"
	lr_check "$what: rx.lost" "$(lr_jget "$r" .rx.lost)" == 0
	lr_check_cmd "$what: the start line says GRO was switched on at vc1 in $hns" \
		grep -q "^linerate send: --prepare-peer: GRO switched on at vc1 (netns $hns), the first hop's veth peer, for this test; it was off$" \
		"$LR_TMP/live.send.err"
	lr_check_cmd "$what: the summary says it was put back" \
		grep -q "^  prepare   GRO put back off at vc1 (netns $hns)$" "$LR_TMP/live.send.err"
	lr_check "$what: JSON prepare_peer" \
		"$(jq -c '.prepare_peer | [.action, .device, .netns, .gro_before, .switched_on, .released, .restored, .error]' "$s")" \
		== "[\"switched_on\",\"vc1\",\"$hns\",false,true,true,true,null]"
	lr_check "$what: vc1's GRO off again" "$(gro "$hns" vc1)" == off
	lr_check_cmd "$what: no record left" records_gone "$key"

	what="$topo: --engine auto --prepare-peer at --rate max"
	exchange auto "$c1" "$c2" "$dst" --prepare-peer
	s=$LR_TMP/auto.send.json r=$LR_TMP/auto.recv.json
	lr_check "$what: send exit code" "$SEND_RC" == 0
	lr_check "$what: engine" "$(lr_jget "$s" .engine)" == live
	lr_check_cmd "$what: the start line says live" grep -q "^linerate send: engine live, prog_run mode on eth0" \
		"$LR_TMP/auto.send.err"
	lr_check "$what: rx.sent (markers)" "$(lr_jget "$r" .rx.sent)" == "$COUNT"
	lr_check "$what: received + lost == sent" "$(jq '.rx.packets + .rx.lost' "$r")" == "$COUNT"
	lr_check "$what: vc1's GRO off again" "$(gro "$hns" vc1)" == off

	what="$topo: SIGINT mid-test"
	lr_spawn int ip netns exec "$c1" "$LINERATE" send -i eth0 --dst-ip "$dst" --engine live --rate 50k \
		--duration 20s -q --prepare-peer
	pid=$LR_LAST_PID
	wait_line "$LR_TMP/int.err" "engine live" 15 "$pid" || lr_die "$what: the sender never started"
	lr_check "$what: vc1's GRO on while it sends" "$(gro "$hns" vc1)" == on
	kill -INT "$pid"
	rc=0
	lr_wait_pid "$pid" 15 || rc=$?
	lr_check "$what: send exit code" "$rc" == 0
	lr_check "$what: vc1's GRO off right after" "$(gro "$hns" vc1)" == off
	lr_check_cmd "$what: no record left" records_gone "$key"

	what="$topo: SIGTERM mid-test"
	lr_spawn term ip netns exec "$c1" "$LINERATE" send -i eth0 --dst-ip "$dst" --engine live --rate 50k \
		--duration 20s -q --prepare-peer
	pid=$LR_LAST_PID
	wait_line "$LR_TMP/term.err" "engine live" 15 "$pid" || lr_die "$what: the sender never started"
	lr_check "$what: vc1's GRO on while it sends" "$(gro "$hns" vc1)" == on
	kill -TERM "$pid"
	rc=0
	lr_wait_pid "$pid" 15 || rc=$?
	lr_check "$what: send exit code" "$rc" == 0
	lr_check_cmd "$what: the summary says it was put back" \
		grep -q "^  prepare   GRO put back off at vc1 (netns $hns)$" "$LR_TMP/term.err"
	lr_check "$what: vc1's GRO off right after" "$(gro "$hns" vc1)" == off
	lr_check_cmd "$what: no record left" records_gone "$key"

	what="$topo: SIGKILL mid-test"
	lr_spawn kill ip netns exec "$c1" "$LINERATE" send -i eth0 --dst-ip "$dst" --engine live --rate 50k \
		--duration 20s -q --prepare-peer
	pid=$LR_LAST_PID
	wait_line "$LR_TMP/kill.err" "engine live" 15 "$pid" || lr_die "$what: the sender never started"
	lr_check "$what: vc1's GRO on while it sends" "$(gro "$hns" vc1)" == on
	kill -KILL "$pid"
	lr_wait_pid "$pid" 5 || true
	lr_check_cmd "$what: vc1's GRO off within 5 s" wait_gro "$hns" vc1 off 5
	lr_check_cmd "$what: the guardian says it put it back" wait_line "$LR_TMP/kill.err" \
		"^linerate: --prepare-peer: the run on eth0 ended without letting go: GRO put back off at vc1" 5 $$
	lr_check_cmd "$what: no record left" records_gone "$key"
}

lr_lab lab up bridge --prefix "$PFX"
((LAB_RC == 0)) || lr_die "scripts/lab up bridge failed: $(cat "$LR_TMP/lab.err")"
lr_lab lab up overlay --prefix "$PFX"
((LAB_RC == 0)) || lr_die "scripts/lab up overlay failed: $(cat "$LR_TMP/lab.err")"

path_cases bridge host 198.18.2.3
path_cases overlay h1 198.18.3.3

HNS=$PFX-bridge-host C1=$PFX-bridge-c1 C2=$PFX-bridge-c2
KEY=$(records_key "$HNS" vc1)

lr_log "== a peer whose user had GRO on"
ip netns exec "$HNS" ethtool -K vc1 gro on
exchange own "$C1" "$C2" 198.18.2.3 --engine live --rate 50k --prepare-peer
lr_check "GRO on already: send exit code" "$SEND_RC" == 0
lr_check "GRO on already: rx.packets" "$(lr_jget "$LR_TMP/own.recv.json" .rx.packets)" == "$COUNT"
lr_check_cmd "GRO on already: the start line says there is nothing to do" \
	grep -q "^linerate send: --prepare-peer: nothing to do: vc1 (netns $HNS), the first hop's veth peer, has GRO on already; left as it is$" \
	"$LR_TMP/own.send.err"
lr_check "GRO on already: JSON action, switched_on, restored" \
	"$(jq -c '.prepare_peer | [.action, .gro_before, .switched_on, .restored]' "$LR_TMP/own.send.json")" == '["none",true,false,false]'
lr_check "GRO on already: left on" "$(gro "$HNS" vc1)" == on
lr_check_cmd "GRO on already: no record made" records_gone "$KEY"
ip netns exec "$HNS" ethtool -K vc1 gro off

lr_log "== live without --prepare-peer while another run holds vc1"
lr_spawn holder ip netns exec "$C1" "$LINERATE" send -i eth0 --dst-ip 198.18.2.3 --engine live --rate 20k \
	--duration 60s -q --prepare-peer
P1=$LR_LAST_PID
wait_line "$LR_TMP/holder.err" "engine live" 15 "$P1" || lr_die "the holding sender never started"
RC=0
ip netns exec "$C1" "$LINERATE" send -i eth0 --dst-ip 198.18.2.3 --count 100 --engine live \
	>"$LR_TMP/unheld.out" 2>"$LR_TMP/unheld.err" || RC=$?
lr_show_file "$LR_TMP/unheld.err"
lr_check "held by another run: --engine live: exit code" "$RC" == 2
lr_check "held by another run: --engine live: one line" "$(wc -l <"$LR_TMP/unheld.err")" == 1
lr_check_cmd "held by another run: --engine live: the line names vc1 and --prepare-peer" \
	grep -q "^linerate send: live: GRO on at vc1 (netns $HNS) is held on only for another linerate run: add --prepare-peer$" \
	"$LR_TMP/unheld.err"
RC=0
ip netns exec "$C1" "$LINERATE" send -i eth0 --dst-ip 198.18.2.3 --count 100 \
	>"$LR_TMP/unheld-auto.out" 2>"$LR_TMP/unheld-auto.err" || RC=$?
lr_check "held by another run: --engine auto: exit code" "$RC" == 0
lr_check_cmd "held by another run: --engine auto takes AF_XDP" grep -q "^linerate send: engine afxdp" \
	"$LR_TMP/unheld-auto.err"
kill -INT "$P1"
RC=0
lr_wait_pid "$P1" 15 || RC=$?
lr_check "held by another run: the holder's exit code" "$RC" == 0
lr_check "held by another run: vc1's GRO off after the holder" "$(gro "$HNS" vc1)" == off

lr_log "== two sends sharing vc1"
lr_spawn first ip netns exec "$C1" "$LINERATE" send -i eth0 --dst-ip 198.18.2.3 --engine live --rate 20k \
	--duration 60s -q --prepare-peer --json "$LR_TMP/first.json"
P1=$LR_LAST_PID
wait_line "$LR_TMP/first.err" "engine live" 15 "$P1" || lr_die "the first sender never started"
lr_spawn second ip netns exec "$C1" "$LINERATE" send -i eth0 --dst-ip 198.18.2.3 --engine live --rate 20k \
	--duration 60s -q --prepare-peer --json "$LR_TMP/second.json"
P2=$LR_LAST_PID
# its start line: it holds vc1 too from here on
wait_line "$LR_TMP/second.err" "engine live" 15 "$P2" || lr_die "the second sender never started"
kill -INT "$P1"
RC=0
lr_wait_pid "$P1" 15 || RC=$?
lr_check "first: exit code" "$RC" == 0
lr_check "first: the second still runs" "$(kill -0 "$P2" 2>/dev/null && echo yes || echo no)" == yes
lr_check "first ended: vc1's GRO still on for the second" "$(gro "$HNS" vc1)" == on
lr_check "first: JSON action, restored, left_on_for" \
	"$(jq -c '.prepare_peer | [.action, .restored, .left_on_for]' "$LR_TMP/first.json")" == '["switched_on",false,1]'
lr_check_cmd "first: its summary says GRO is left on for the other run" \
	grep -q "^  prepare   GRO left on at vc1 (netns $HNS) for 1 other linerate run" "$LR_TMP/first.err"
lr_check_cmd "second: its start line says it joined" grep -q "is on for another linerate run already" \
	"$LR_TMP/second.err"
kill -INT "$P2"
RC=0
lr_wait_pid "$P2" 15 || RC=$?
lr_check "second: exit code" "$RC" == 0
lr_check "second: JSON action, gro_before, restored" \
	"$(jq -c '.prepare_peer | [.action, .gro_before, .restored]' "$LR_TMP/second.json")" == '["joined",false,true]'
lr_check "second ended: vc1's GRO off" "$(gro "$HNS" vc1)" == off
lr_check_cmd "second ended: no record left" records_gone "$KEY"
lr_show_file "$LR_TMP/first.err"
lr_show_file "$LR_TMP/second.err"

lr_log "== the guardian killed with its run"
lr_spawn dead ip netns exec "$C1" "$LINERATE" send -i eth0 --dst-ip 198.18.2.3 --engine live --rate 20k \
	--duration 20s -q --prepare-peer
P1=$LR_LAST_PID
wait_line "$LR_TMP/dead.err" "engine live" 15 "$P1" || lr_die "the sender never started"
GUARDIAN=$(ps -o pid= --ppid "$P1" | tr -d ' ')
lr_check "the sender has one child, its guardian" "$(wc -w <<<"$GUARDIAN")" == 1
kill -KILL "$GUARDIAN" "$P1"
lr_wait_pid "$P1" 5 || true
lr_check "both killed: vc1's GRO stays on (no one is left to put it back)" "$(gro "$HNS" vc1)" == on
lr_check_cmd "both killed: the record stays" test -s "$RECORDS/$KEY.state"
exchange next "$C1" "$C2" 198.18.2.3 --engine live --rate 50k --prepare-peer
lr_check "the next run: exit code" "$SEND_RC" == 0
lr_check "the next run: rx.packets" "$(lr_jget "$LR_TMP/next.recv.json" .rx.packets)" == "$COUNT"
lr_check "the next run: JSON action, gro_before (from the record), restored" \
	"$(jq -c '.prepare_peer | [.action, .gro_before, .restored]' "$LR_TMP/next.send.json")" == '["switched_on",false,true]'
lr_check "the next run: vc1's GRO off, as its user had it" "$(gro "$HNS" vc1)" == off
lr_check_cmd "the next run: no record left" records_gone "$KEY"

lr_log "== a dead run's record, and the device renamed since"
lr_spawn dead2 ip netns exec "$C1" "$LINERATE" send -i eth0 --dst-ip 198.18.2.3 --engine live --rate 20k \
	--duration 60s -q --prepare-peer
P1=$LR_LAST_PID
wait_line "$LR_TMP/dead2.err" "engine live" 15 "$P1" || lr_die "the sender never started"
GUARDIAN=$(ps -o pid= --ppid "$P1" | tr -d ' ')
lr_check "renamed: the sender has one child, its guardian" "$(wc -w <<<"$GUARDIAN")" == 1
kill -KILL "$GUARDIAN" "$P1"
lr_wait_pid "$P1" 5 || true
lr_check_cmd "renamed: the dead run's record stays" test -s "$RECORDS/$KEY.state"
ip -n "$HNS" link set vc1 down
ip -n "$HNS" link set vc1 name vcx
ip -n "$HNS" link set vcx up
exchange renamed "$C1" "$C2" 198.18.2.3 --engine live --rate 50k --prepare-peer
lr_check "renamed: exit code" "$SEND_RC" == 0
lr_check "renamed: JSON action, device, gro_before (the device as it is, the record dropped)" \
	"$(jq -c '.prepare_peer | [.action, .device, .gro_before]' "$LR_TMP/renamed.send.json")" == '["none","vcx",true]'
lr_check_cmd "renamed: the record went" records_gone "$KEY"
ip -n "$HNS" link set vcx down
ip -n "$HNS" link set vcx name vc1
ip -n "$HNS" link set vc1 up
ip netns exec "$HNS" ethtool -K vc1 gro off

lr_log "== the guardian alone killed mid-test"
lr_spawn orphan ip netns exec "$C1" "$LINERATE" send -i eth0 --dst-ip 198.18.2.3 --engine live --rate 20k \
	--duration 60s -q --prepare-peer --json "$LR_TMP/orphan.json"
P1=$LR_LAST_PID
wait_line "$LR_TMP/orphan.err" "engine live" 15 "$P1" || lr_die "the sender never started"
GUARDIAN=$(ps -o pid= --ppid "$P1" | tr -d ' ')
lr_check "guardian alone: the sender has one child, its guardian" "$(wc -w <<<"$GUARDIAN")" == 1
kill -KILL "$GUARDIAN"
sleep 0.5
lr_check "guardian alone: the sender still runs" "$(kill -0 "$P1" 2>/dev/null && echo yes || echo no)" == yes
lr_check "guardian alone: vc1's GRO still on (the sender has not let go)" "$(gro "$HNS" vc1)" == on
kill -INT "$P1"
RC=0
lr_wait_pid "$P1" 15 || RC=$?
lr_show_file "$LR_TMP/orphan.err"
lr_check "guardian alone: send exit code (0, not 141: no SIGPIPE)" "$RC" == 0
lr_check "guardian alone: JSON action, released, restored, error" \
	"$(jq -c '.prepare_peer | [.action, .released, .restored, .error]' "$LR_TMP/orphan.json")" == '["switched_on",true,true,null]'
lr_check_cmd "guardian alone: one line says it died and a new one put GRO back" \
	grep -q "^linerate: --prepare-peer: the guardian (PID $GUARDIAN) holding GRO on for the run on eth0 died before the end: GRO put back off at vc1 (netns $HNS)$" \
	"$LR_TMP/orphan.err"
lr_check_cmd "guardian alone: the summary says it was put back" \
	grep -q "^  prepare   GRO put back off at vc1 (netns $HNS)$" "$LR_TMP/orphan.err"
lr_check "guardian alone: vc1's GRO off" "$(gro "$HNS" vc1)" == off
lr_check_cmd "guardian alone: no record left" records_gone "$KEY"

lr_log "== vc1's mutex held by another process"
# held by this shell itself: nothing left running, and the lock goes with the descriptor
mkdir -p "$RECORDS"
exec {LOCKFD}>>"$RECORDS/$KEY.state"
flock -x "$LOCKFD"
RC=0
ip netns exec "$C1" "$LINERATE" send -i eth0 --dst-ip 198.18.2.3 --count 100 --engine live --prepare-peer \
	>"$LR_TMP/lock.out" 2>"$LR_TMP/lock.err" || RC=$?
exec {LOCKFD}>&-
lr_show_file "$LR_TMP/lock.err"
lr_check "mutex held: exit code (runtime)" "$RC" == 1
lr_check "mutex held: one line" "$(wc -l <"$LR_TMP/lock.err")" == 1
lr_check_cmd "mutex held: the guardian's own line, not the sender's 10 s timeout" \
	grep -q "^linerate send: --prepare-peer: cannot lock $RECORDS/$KEY.state: another process held it too long; nothing changed$" \
	"$LR_TMP/lock.err"
lr_check "mutex held: vc1's GRO untouched" "$(gro "$HNS" vc1)" == off
# the empty state file this shell made
rm -f "$RECORDS/$KEY.state"

lr_log "== linerate run, [tx] prepare_peer = yes"
# sender_limited = pass: a busy machine's sender may fall short of the paced rate; the verdict is
# tested in test_throughput and test_configs, not here
cat >"$LR_TMP/pp.ini" <<EOF
[test]
duration = 500ms
warmup = 100ms
sender_limited = pass
[tx]
interface = eth0
netns = $C1
engine = live
rates = 20k, 40k
dst_ip = 198.18.2.3
prepare_peer = yes
[rx]
interface = eth0
netns = $C2
EOF
RC=0
timeout -k 5 120 "$LINERATE" run "$LR_TMP/pp.ini" --json "$LR_TMP/run.json" >"$LR_TMP/run.out" 2>"$LR_TMP/run.err" || RC=$?
lr_show_file "$LR_TMP/run.err"
lr_check "run: exit code" "$RC" == 0
lr_check "run: engine" "$(lr_jget "$LR_TMP/run.json" .engine)" == live
lr_check "run: steps" "$(jq '.steps | length' "$LR_TMP/run.json")" == 2
lr_check "run: every step exact (received == sent, lost 0)" \
	"$(jq '[.steps[] | select(.rx.lost == 0 and .rx.packets == .rx.sent and .rx.packets > 0)] | length' "$LR_TMP/run.json")" == 2
lr_check "run: JSON prepare_peer" \
	"$(jq -c '.prepare_peer | [.action, .device, .netns, .restored]' "$LR_TMP/run.json")" == "[\"switched_on\",\"vc1\",\"$HNS\",true]"
lr_check "run: one hold for the whole run (one start line)" "$(grep -c "GRO switched on at vc1" "$LR_TMP/run.err")" == 1
lr_check_cmd "run: the table says so" grep -q "^--prepare-peer: GRO switched on at vc1 (netns $HNS).*(at the end: GRO put back off" \
	"$LR_TMP/run.out"
lr_check "run: vc1's GRO off after" "$(gro "$HNS" vc1)" == off
lr_check_cmd "run: no record left" records_gone "$KEY"

# clone() calls of run's own process: none that forks (no CLONE_THREAD) after one that made a thread
sed "/^\[tx\]$/a pcap = $LR_TMP/tx.pcap" "$LR_TMP/pp.ini" >"$LR_TMP/pcap.ini"
RC=0
# a sanitizer build (scripts/sanitize): LeakSanitizer cannot run under ptrace, and at exit it would
# clone a tracer of its own, after the threads; the leak check is for the other runs
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	timeout -k 5 120 strace -f -qq -e trace=clone,clone3,setsid -o "$LR_TMP/run.strace" "$LINERATE" run "$LR_TMP/pcap.ini" \
	>"$LR_TMP/pcap.out" 2>"$LR_TMP/pcap.err" || RC=$?
lr_check "run with [tx] pcap: exit code" "$RC" == 0
lr_check_cmd "run with [tx] pcap: the capture has frames" test -s "$LR_TMP/tx.pcap"
MAIN=$(awk 'NR == 1 { print $1 }' "$LR_TMP/run.strace")
lr_check "run with [tx] pcap: a guardian ran (setsid)" "$(grep -c ' setsid()' "$LR_TMP/run.strace")" == 1
lr_check "run with [tx] pcap: threads made (the sampler, the workers)" \
	"$(awk -v m="$MAIN" '$1 == m && /flags=/ && /CLONE_THREAD/' "$LR_TMP/run.strace" | wc -l)" ">" 0
lr_check "run with [tx] pcap: no fork after the first thread (the guardian is forked before any)" \
	"$(awk -v m="$MAIN" '$1 == m && /flags=/ { if (/CLONE_THREAD/) t = 1; else if (t) n++ } END { print n + 0 }' \
		"$LR_TMP/run.strace")" == 0
lr_check "run with [tx] pcap: vc1's GRO off after" "$(gro "$HNS" vc1)" == off

lr_log "== bad input"
sed 's/^prepare_peer = yes$/prepare_peer = maybe/' "$LR_TMP/pp.ini" >"$LR_TMP/bad.ini"
RC=0
"$LINERATE" run --check "$LR_TMP/bad.ini" >"$LR_TMP/bad.out" 2>"$LR_TMP/bad.err" || RC=$?
lr_check "prepare_peer = maybe: exit code" "$RC" == 2
lr_check "prepare_peer = maybe: one line" "$(wc -l <"$LR_TMP/bad.err")" == 1
lr_check_cmd "prepare_peer = maybe: the line names the file, the line and the key" \
	grep -q "bad.ini:11: \[tx\] prepare_peer: 'maybe' is not one of no, yes" "$LR_TMP/bad.err"

lr_log "== bad input with --prepare-peer: checked before the peer is touched"
lr_spawn mon ip netns exec "$HNS" stdbuf -oL ethtool --monitor
MON=$LR_LAST_PID
wait_line "$LR_TMP/mon.out" "listening" 10 "$MON" || lr_die "ethtool --monitor never listened"
RC=0
ip netns exec "$C1" "$LINERATE" send -i eth0 --dst-ip 198.18.2.3 --count 100 --size 9000 --engine live --prepare-peer \
	>"$LR_TMP/size.out" 2>"$LR_TMP/size.err" || RC=$?
sleep 0.5
kill "$MON"
lr_wait_pid "$MON" 5 || true
lr_show_file "$LR_TMP/size.err"
lr_check "--size too large: exit code" "$RC" == 2
lr_check "--size too large: one line" "$(wc -l <"$LR_TMP/size.err")" == 1
lr_check_cmd "--size too large: the line is the size's" \
	grep -q "^linerate send: --size 9000 is larger than eth0's MTU 1500 allows" "$LR_TMP/size.err"
lr_check "--size too large: vc1's features never changed" "$(grep -c '^Features for vc1:' "$LR_TMP/mon.out" || true)" == 0
lr_check "--size too large: vc1's GRO off" "$(gro "$HNS" vc1)" == off

lr_log "== not root, and a records' directory others can write"
RC=0
ip netns exec "$C1" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$LINERATE" send -i eth0 --dst-ip 198.18.2.3 --dst-mac 02:00:00:00:00:02 --count 100 --engine live --prepare-peer \
	>"$LR_TMP/nobody.out" 2>"$LR_TMP/nobody.err" || RC=$?
lr_show_file "$LR_TMP/nobody.err"
lr_check "not root: exit code" "$RC" == 2
lr_check "not root: one line" "$(wc -l <"$LR_TMP/nobody.err")" == 1
lr_check_cmd "not root: the line says root is needed" \
	grep -q "^linerate send: --prepare-peer needs root: it switches GRO at eth0's veth peer and keeps its records in $RECORDS; nothing changed$" \
	"$LR_TMP/nobody.err"
lr_check "not root: vc1's GRO untouched" "$(gro "$HNS" vc1)" == off
# shellcheck disable=SC2317 # run by the exit trap too
records_private()
{
	chmod 0700 "$RECORDS"
}
lr_cleanup_first records_private
chmod 0770 "$RECORDS"
RC=0
ip netns exec "$C1" "$LINERATE" send -i eth0 --dst-ip 198.18.2.3 --count 100 --engine live --prepare-peer \
	>"$LR_TMP/opendir.out" 2>"$LR_TMP/opendir.err" || RC=$?
records_private
lr_show_file "$LR_TMP/opendir.err"
lr_check "records' directory group-writable: exit code (runtime)" "$RC" == 1
lr_check "records' directory group-writable: one line" "$(wc -l <"$LR_TMP/opendir.err")" == 1
lr_check_cmd "records' directory group-writable: the line says why" \
	grep -q "^linerate send: --prepare-peer: $RECORDS must be a directory of root's that no one else can write; nothing changed$" \
	"$LR_TMP/opendir.err"
lr_check "records' directory group-writable: vc1's GRO untouched" "$(gro "$HNS" vc1)" == off

lr_log "== an agent's sender: send --peer --reverse, and run with [tx] agent"
# every agent has a token, loopback included
TOKEN=$LR_TMP/token
(umask 077 && echo "the token of test_prepare_peer $$" >"$TOKEN")
lr_spawn agent ip netns exec "$C1" "$LINERATE" agent --listen 127.0.0.1:7546 --token-file "$TOKEN" \
	--ready-file "$LR_TMP/agent.ready"
AGENT=$LR_LAST_PID
lr_wait_for_file "$LR_TMP/agent.ready" 15 "$AGENT" || lr_die "the agent never became ready"
lr_spawn mon2 ip netns exec "$HNS" stdbuf -oL ethtool --monitor
MON=$LR_LAST_PID
wait_line "$LR_TMP/mon2.out" "listening" 10 "$MON" || lr_die "ethtool --monitor never listened"
RC=0
timeout -k 5 60 ip netns exec "$C1" "$LINERATE" send --netns "$C2" -i eth0 --dst-ip 198.18.2.2 --peer 127.0.0.1:7546 \
	--token-file "$TOKEN" --reverse --engine live --prepare-peer --count 100 --size 9000 -q >"$LR_TMP/rsize.out" 2>"$LR_TMP/rsize.err" || RC=$?
sleep 0.5
kill "$MON"
lr_wait_pid "$MON" 5 || true
lr_show_file "$LR_TMP/rsize.err"
lr_check "the agent's sender, --size too large: exit code" "$RC" == 2
lr_check_cmd "the agent's sender, --size too large: the agent's refusal is the size's" \
	grep -q "size 9000 is larger than eth0's MTU 1500 allows" "$LR_TMP/rsize.err"
lr_check "the agent's sender, --size too large: vc1's features never changed" \
	"$(grep -c '^Features for vc1:' "$LR_TMP/mon2.out" || true)" == 0
RC=0
timeout -k 5 60 ip netns exec "$C1" "$LINERATE" send --netns "$C2" -i eth0 --dst-ip 198.18.2.2 --peer 127.0.0.1:7546 \
	--token-file "$TOKEN" --reverse --engine live --prepare-peer --count "$COUNT" --rate 50k -q --json "$LR_TMP/rev.json" \
	>"$LR_TMP/rev.out" 2>"$LR_TMP/rev.err" || RC=$?
lr_show_file "$LR_TMP/rev.err"
lr_check "--reverse: exit code" "$RC" == 0
lr_check "--reverse: rx.packets (here)" "$(lr_jget "$LR_TMP/rev.json" .rx.packets)" == "$COUNT"
lr_check "--reverse: rx.lost" "$(lr_jget "$LR_TMP/rev.json" .rx.lost)" == 0
lr_check "--reverse: the agent's document says it switched GRO on and put it back" \
	"$(jq -c '.peer.result | [.engine, .prepare_peer.action, .prepare_peer.netns, .prepare_peer.restored]' "$LR_TMP/rev.json")" \
	== "[\"live\",\"switched_on\",\"$HNS\",true]"
lr_check_cmd "--reverse: the agent's summary says so" grep -q "^  prepare   GRO put back off at vc1" "$LR_TMP/rev.err"
lr_check "--reverse: vc1's GRO off after" "$(gro "$HNS" vc1)" == off
sed -e '/^netns = .*c1$/d' -e '/^\[tx\]$/a agent = 127.0.0.1:7546\ntoken_file = '"$TOKEN" "$LR_TMP/pp.ini" >"$LR_TMP/agent.ini"
RC=0
timeout -k 5 120 ip netns exec "$C1" "$LINERATE" run "$LR_TMP/agent.ini" --json "$LR_TMP/arun.json" \
	>"$LR_TMP/arun.out" 2>"$LR_TMP/arun.err" || RC=$?
lr_show_file "$LR_TMP/arun.err"
lr_check "run with [tx] agent: exit code" "$RC" == 0
lr_check "run with [tx] agent: every step exact" \
	"$(jq '[.steps[] | select(.rx.lost == 0 and .rx.packets == .rx.sent and .rx.packets > 0)] | length' "$LR_TMP/arun.json")" == 2
lr_check "run with [tx] agent: JSON prepare_peer (the last phase's)" \
	"$(jq -c '.prepare_peer | [.action, .device, .restored]' "$LR_TMP/arun.json")" == '["switched_on","vc1",true]'
lr_check "run with [tx] agent: vc1's GRO off after" "$(gro "$HNS" vc1)" == off
kill -TERM "$AGENT"
lr_wait_pid "$AGENT" 10 || true
lr_check "the agent logged each hold and its end" \
	"$(grep -c -e "--prepare-peer: GRO switched on at vc1" -e "--prepare-peer: GRO put back off at vc1" "$LR_TMP/agent.err")" \
	== 10
lr_check_cmd "no record left" records_gone "$KEY"

lr_log "== a peer in a namespace nothing names"
lr_netns_add NSA a
lr_netns_add NSB b
lr_veth "$NSA" a0 "$NSB" b0
lr_addr "$NSA" a0 198.18.7.1/30
ip -n "$NSB" link set b0 up
touch "$LR_TMP/hidden"
mount --bind "/run/netns/$NSB" "$LR_TMP/hidden"
# shellcheck disable=SC2317 # run by the exit trap
unhide()
{
	umount "$LR_TMP/hidden" 2>/dev/null || true
}
lr_cleanup_first unhide
ip netns del "$NSB"
HIDDEN_GRO=$(nsenter --net="$LR_TMP/hidden" ethtool -k b0 | awk '$1 == "generic-receive-offload:" { print $2 }')
RC=0
ip netns exec "$NSA" "$LINERATE" send -i a0 --dst-ip 198.18.7.2 --dst-mac 02:00:00:00:00:02 --count 100 \
	--engine live --prepare-peer >"$LR_TMP/hid.out" 2>"$LR_TMP/hid.err" || RC=$?
lr_show_file "$LR_TMP/hid.err"
lr_check "hidden peer: exit code" "$RC" == 2
lr_check "hidden peer: one line" "$(wc -l <"$LR_TMP/hid.err")" == 1
lr_check_cmd "hidden peer: the line says its namespace was not found and nothing changed" \
	grep -q "^linerate send: --prepare-peer: the network namespace of a0's veth peer .* is none that .*; nothing changed$" \
	"$LR_TMP/hid.err"
lr_check "hidden peer: its GRO unchanged" \
	"$(nsenter --net="$LR_TMP/hidden" ethtool -k b0 | awk '$1 == "generic-receive-offload:" { print $2 }')" == "$HIDDEN_GRO"

lr_log "== the peer replaced mid-test by another veth at its ifindex, under its name"
lr_netns_add NSX x
lr_netns_add NSY y
lr_veth "$NSX" x0 "$NSY" y0
lr_addr "$NSX" x0 198.18.8.1/30
ip -n "$NSY" link set y0 up
IDX=$(ip -n "$NSY" -j link show dev y0 | jq -r '.[0].ifindex')
YKEY=$(records_key "$NSY" y0)
lr_spawn swap ip netns exec "$NSX" "$LINERATE" send -i x0 --dst-ip 198.18.8.2 --dst-mac 02:00:00:00:00:02 \
	--engine live --rate 20k --duration 60s -q --prepare-peer
P1=$LR_LAST_PID
wait_line "$LR_TMP/swap.err" "engine live" 15 "$P1" || lr_die "the sender on x0 never started"
lr_check "replaced: y0's GRO on while it sends" "$(gro "$NSY" y0)" == on
kill -STOP "$P1"
ip -n "$NSY" link del y0
ip -n "$NSY" link add y0 index "$IDX" type veth peer name y1
ip netns exec "$NSY" ethtool -K y0 gro on
kill -CONT "$P1"
kill -INT "$P1"
lr_wait_pid "$P1" 15 || true
lr_show_file "$LR_TMP/swap.err"
lr_check "replaced: the new y0 at ifindex $IDX" "$(ip -n "$NSY" -j link show dev y0 | jq -r '.[0].ifindex')" == "$IDX"
lr_check "replaced: the new y0's GRO left alone (on)" "$(gro "$NSY" y0)" == on
lr_check_cmd "replaced: the summary says y0 is gone and nothing was switched off" \
	grep -q "^  prepare   GRO at y0 (netns $NSY) may still be on: y0 is gone: ifindex $IDX is y0 now, no veth peer of ours; nothing switched off$" \
	"$LR_TMP/swap.err"
lr_check_cmd "replaced: no record left" records_gone "$YKEY"
lr_finish
