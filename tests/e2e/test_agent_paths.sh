#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a controller may ask an agent for (docs/protocol.md, "What a controller may ask for"): no
# path on the agent's host, no namespace the agent did not allow, no agent without a token. A raw
# client of our own (agent_client.py, run as nobody inside the namespace) asks what linerate's
# controller never would.
#
#   [lr-agent_paths-ag-PID]  lo 127.0.0.1: agents on ports 7601..7604, their clients (nobody)
#     a0 198.18.40.2/30 (the receivers' interface)
#      |
#   [lr-agent_paths-tx-PID]  t0 198.18.40.1/30: run's sender ([tx] netns)
#   [lr-agent_paths-other-PID]  p0 - p1 (a namespace only --allow-netns names; no traffic)
#
#   $LR_TMP/host/etc/victim.conf   an existing file outside the capture directory
#   $LR_TMP/host/run/agent         the agents' working directory (for relative names)
#   $LR_TMP/cap                    --capture-dir (0700), holding existing.pcap and a symlink
#                                  link.pcap -> the victim
#
# Checks:
#   - with a token, hello's reply holds no host facts (host null); auth's ok holds them (the boot
#     id, the served namespace's interfaces)
#   - the issue's reproduction, an agent --listen 127.0.0.1:PORT without --capture-dir, a client
#     (nobody, holding the token) sending hello, prepare_rx with pcap = the victim's absolute
#     path, then quit; and the same with a relative path, '..' names, a new file outside: each
#     refused (error code 2, one line, naming --capture-dir); the victim byte-identical, nothing
#     created or changed anywhere under host/ and cap/
#   - an agent with --capture-dir: absolute, relative and '..' names, '.', '..', a hidden name, an
#     over-long name, an existing file of the directory, a symlink in it, a new file outside:
#     each refused (code 2, one line, naming prepare_rx.pcap); victim and directory unchanged
#   - a bare name there works: linerate run with [rx] agent and pcap = NAME (200 frames): exit 0,
#     NAME in the directory, mode 0600, a pcap tcpdump reads with 200 frames; run with a path
#     for [rx] pcap through an agent: exit 2, one line naming --capture-dir, before any request
#   - without --capture-dir, run with [rx] agent and pcap = NAME: exit 2, one line naming
#     --capture-dir, nothing written
#   - the agent refuses to start (exit 2, one line naming --capture-dir) with a capture directory
#     that is group-writable, world-writable (1777), owned by another user, or a symlink; and
#     without --token-file and without --insecure (one line naming both)
#   - namespaces: without --allow-netns a request naming any (a name, pid:1, /proc/1/ns/net) is
#     refused (one line naming --allow-netns); with --allow-netns 'lr-agent_paths-other-*' that
#     namespace is served, and pid:1, /proc/1/ns/net, another name, and a '..' path that leads to
#     the allowed one are refused; a path allowed by pattern that is no namespace (/dev/null) is
#     refused without being opened for reading
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CLIENT=$LR_E2E_DIR/agent_client.py
PY=/usr/bin/python3	# not a per-user shim: the client runs as nobody

lr_init
lr_require_cmds setpriv tcpdump cmp find "$PY"
lr_netns_add AG ag
lr_netns_add TX tx
lr_netns_add OTHER other
ip -n "$AG" link set lo up
lr_veth "$TX" t0 "$AG" a0
lr_addr "$TX" t0 198.18.40.1/30
lr_addr "$AG" a0 198.18.40.2/30
ip -n "$OTHER" link add p0 type veth peer name p1
ip -n "$OTHER" link set p0 up
ip -n "$OTHER" link set p1 up

TOKEN=$LR_TMP/token
(umask 077 && echo "the token of test_agent_paths $$" >"$TOKEN")
HOST=$LR_TMP/host
CAP=$LR_TMP/cap
mkdir -p "$HOST/etc" "$HOST/run/agent"
mkdir -m 0700 "$CAP"
printf 'root:x:0:0:a victim of %s\n' "$$" >"$HOST/etc/victim.conf"
cp "$HOST/etc/victim.conf" "$LR_TMP/victim.orig"
printf 'kept\n' >"$CAP/existing.pcap"
ln -s "$HOST/etc/victim.conf" "$CAP/link.pcap"

# everything under host/ and cap/: names, types, sizes, modes, link targets
tree()
{
	find "$HOST" "$CAP" -printf '%p %y %s %m %l\n' | sort
}

# agent NAME PORT [OPTIONS...]: an agent in AG on 127.0.0.1:PORT, working in host/run/agent; waits
# until it is ready.
agent()
{
	local name=$1 port=$2

	shift 2
	rm -f "$LR_TMP/$name.ready"
	(cd "$HOST/run/agent" && exec ip netns exec "$AG" "$LINERATE" agent --listen "127.0.0.1:$port" \
		--ready-file "$LR_TMP/$name.ready" "$@") >"$LR_TMP/$name.out" 2>"$LR_TMP/$name.err" &
	LR_PIDS+=("$!")
	lr_wait_for_file "$LR_TMP/$name.ready" 10 "$!" || {
		lr_show_file "$LR_TMP/$name.err"
		lr_die "agent $name never became ready"
	}
}

# ask PORT OUT JSON...: the raw client as nobody in AG, holding the token (on its stdin); the
# replies, one JSON line each, in OUT. Its exit code in RC.
ask()
{
	local port=$1 out=$2

	shift 2
	RC=0
	timeout -k 5 20 ip netns exec "$AG" setpriv --reuid nobody --regid nogroup --clear-groups \
		"$PY" "$CLIENT" 127.0.0.1 "$port" --token - "$@" <"$TOKEN" >"$out" 2>"$out.err" || RC=$?
}

# refused_rx DESC PORT FIELD VALUE WANT: prepare_rx with FIELD = VALUE answered by an error of
# code 2, one line, holding WANT; then bye.
refused_rx()
{
	local desc=$1 port=$2 field=$3 value=$4 want=$5 out req

	out=$LR_TMP/ask.$((++ASKS))
	req=$(jq -cn --arg f "$field" --arg v "$value" '{type: "prepare_rx", interface: "a0"} + {($f): $v}')
	ask "$port" "$out" "$req"
	lr_show_file "$out.err"
	lr_check "$desc: the client's exchange" "$RC" == 0
	lr_check "$desc: error, code 2" "$(jq -sr '.[1] | "\(.type) \(.code)"' "$out")" == "error 2"
	lr_check "$desc: one line" "$(jq -sr '.[1].message | split("\n") | length' "$out")" == 1
	lr_check_cmd "$desc: says \"$want\"" says "$out" "$want"
	lr_check "$desc: then bye" "$(jq -sr '.[2].type' "$out")" == bye
}
ASKS=0

# says OUT WANT: the reply to the prepare holds WANT
# shellcheck disable=SC2317 # called through lr_check_cmd
says()
{
	jq -se --arg w "$2" '.[1].message | contains($w)' "$1" >/dev/null
}

# no_harm DESC: the victim byte-identical, the trees as before (tree.before)
no_harm()
{
	lr_check_cmd "$1: the victim is byte-identical" cmp -s "$LR_TMP/victim.orig" "$HOST/etc/victim.conf"
	tree >"$LR_TMP/tree.after"
	lr_check_cmd "$1: nothing created or changed under host/ and cap/" diff -u "$LR_TMP/tree.before" "$LR_TMP/tree.after"
}

tree >"$LR_TMP/tree.before"
LONG=$(printf 'a%.0s' {1..129})

lr_log "== the reproduction: an agent on loopback without --capture-dir"
agent bare 7601 --token-file "$TOKEN"

# the host's facts (its name, kernel, interfaces, addresses) only for whoever proved to hold the token
ask 7601 "$LR_TMP/hello.out" --hello
lr_check "hello: the exchange went through" "$RC" == 0
lr_check "hello before auth: host is null" "$(sed -n 1p "$LR_TMP/hello.out" | jq -c '.host')" == null
lr_check "auth's ok: the host's boot id" "$(sed -n 2p "$LR_TMP/hello.out" | jq -r '.type + " " + .host.boot_id')" == \
	"ok $(cat /proc/sys/kernel/random/boot_id)"
lr_check "auth's ok: the namespace's interfaces (a0 among them)" \
	"$(sed -n 2p "$LR_TMP/hello.out" | jq '[.host.interfaces[].name] | index("a0") != null')" == true
for p in "$HOST/etc/victim.conf" ../../etc/victim.conf victim.conf "$HOST/etc/new.conf" ../../etc/new.conf new.pcap; do
	refused_rx "no --capture-dir, pcap = $p" 7601 pcap "$p" "start it with --capture-dir DIR"
done
no_harm "no --capture-dir"
lr_check_cmd "no --capture-dir: the agent says at start that it captures nothing" \
	grep -q "requests may capture nothing (no --capture-dir)" "$LR_TMP/bare.err"

lr_log "== an agent with --capture-dir"
agent cap 7602 --token-file "$TOKEN" --capture-dir "$CAP"
for p in "$HOST/etc/victim.conf" ../../etc/victim.conf ../victim.conf .. . .hidden.pcap "$LONG" \
	"$HOST/etc/new.conf" ../../etc/new.conf "$CAP/new.pcap" sub/new.pcap; do
	refused_rx "--capture-dir, pcap = ${p:0:40}" 7602 pcap "$p" "prepare_rx.pcap: "
done
refused_rx "--capture-dir, pcap = an existing file there" 7602 pcap existing.pcap "exists already"
refused_rx "--capture-dir, pcap = a symlink there" 7602 pcap link.pcap "exists already"
no_harm "--capture-dir"
lr_check "--capture-dir: existing.pcap untouched" "$(cat "$CAP/existing.pcap")" == kept
lr_check "--capture-dir: link.pcap still the symlink" "$(readlink "$CAP/link.pcap")" == "$HOST/etc/victim.conf"

# run_cfg NAME PCAP PORT: a run file, the sender here in TX, the receiver on the agent at PORT
# sender_limited = pass: a busy machine's sender may fall short of the paced rate; the verdict is
# tested in test_throughput and test_configs, not here
run_cfg()
{
	cat >"$LR_TMP/$1.ini" <<EOT
[test]
duration = 200ms
warmup = 0
repeat = 1
sender_limited = pass
[tx]
netns = $TX
interface = t0
dst_ip = 198.18.40.2
rate = 1k
[rx]
agent = 127.0.0.1:$3
token_file = $TOKEN
interface = a0
pcap = $2
EOT
}

# run_it NAME: linerate run NAME.ini, its controller in AG; RC
run_it()
{
	RC=0
	timeout -k 5 60 ip netns exec "$AG" "$LINERATE" run "$LR_TMP/$1.ini" -q --json "$LR_TMP/$1.json" \
		>"$LR_TMP/$1.out" 2>"$LR_TMP/$1.err" || RC=$?
}

run_cfg good ok.pcap 7602
run_it good
lr_show_file "$LR_TMP/good.err"
lr_check "run, [rx] pcap = ok.pcap into --capture-dir: exit code" "$RC" == 0
lr_check "run, [rx] pcap = ok.pcap: the file, mode 0600" "$(stat -c %a "$CAP/ok.pcap" 2>/dev/null)" == 600
FRAMES=$(jq '.steps[0].rx.packets' "$LR_TMP/good.json")
lr_check "run: every frame sent received, > 0" "$(jq '.steps[0] | .rx.packets == .tx.packets and .rx.packets > 0' \
	"$LR_TMP/good.json")" == true
lr_check "run: a pcap tcpdump reads, one record a data frame" \
	"$(tcpdump -nr "$CAP/ok.pcap" 2>/dev/null | grep -c 'UDP')" == "$FRAMES"
lr_check "run: no temporary file left in --capture-dir" "$(find "$CAP" -name '.*' | wc -l)" == 0
run_cfg again ok.pcap 7602
run_it again
lr_check "run, ok.pcap again: exit code" "$RC" == 2
lr_check "run, ok.pcap again: one line" "$(wc -l <"$LR_TMP/again.err")" == 1
lr_check_cmd "run, ok.pcap again: never over a file" grep -q "exists already" "$LR_TMP/again.err"
tree >"$LR_TMP/tree.before"
SESSIONS=$(grep -c connected "$LR_TMP/cap.err")
run_cfg abs "$HOST/etc/victim.conf" 7602
run_it abs
lr_check "run, [rx] pcap = a path through an agent: exit code" "$RC" == 2
lr_check "run, [rx] pcap = a path: one line" "$(wc -l <"$LR_TMP/abs.err")" == 1
lr_check_cmd "run, [rx] pcap = a path: names --capture-dir" grep -q -- "--capture-dir" "$LR_TMP/abs.err"
lr_check "run, [rx] pcap = a path: refused before the agent is asked" "$(grep -c connected "$LR_TMP/cap.err")" \
	== "$SESSIONS"
run_cfg nodir ok2.pcap 7601
run_it nodir
lr_show_file "$LR_TMP/nodir.err"
lr_check "run without --capture-dir, [rx] pcap = a name: exit code" "$RC" == 2
lr_check "run without --capture-dir: one line" "$(wc -l <"$LR_TMP/nodir.err")" == 1
lr_check_cmd "run without --capture-dir: names it" grep -q -- "start it with --capture-dir DIR" "$LR_TMP/nodir.err"
lr_check "run without --capture-dir: nothing written" "$(find "$HOST" "$CAP" -name '*ok2*' | wc -l)" == 0
lr_check_cmd "the victim is still byte-identical" cmp -s "$LR_TMP/victim.orig" "$HOST/etc/victim.conf"

lr_log "== refused at start"
# start_refused DESC WANT ARGS...: the agent exits 2 at once with one line holding WANT
start_refused()
{
	local desc=$1 want=$2 err=$LR_TMP/start.$((++ASKS)).err

	shift 2
	RC=0
	timeout -k 5 10 ip netns exec "$AG" "$LINERATE" agent --listen 127.0.0.1:7609 "$@" >/dev/null 2>"$err" || RC=$?
	lr_check "$desc: exit code" "$RC" == 2
	lr_check "$desc: one line" "$(wc -l <"$err")" == 1
	lr_check_cmd "$desc: says \"$want\"" grep -qF -- "$want" "$err"
}
for m in 0770 0730 1777 0707; do
	mkdir -m "$m" "$LR_TMP/dir$m"
	chmod "$m" "$LR_TMP/dir$m"
	start_refused "--capture-dir of mode $m" "--capture-dir: '$LR_TMP/dir$m' has mode $m: others can write it" \
		--token-file "$TOKEN" --capture-dir "$LR_TMP/dir$m"
done
mkdir -m 0700 "$LR_TMP/theirs"
chown nobody "$LR_TMP/theirs"
start_refused "--capture-dir owned by nobody" "is owned by uid $(id -u nobody), not by this agent's user" \
	--token-file "$TOKEN" --capture-dir "$LR_TMP/theirs"
ln -s "$CAP" "$LR_TMP/caplink"
start_refused "--capture-dir a symlink" "is a symlink" --token-file "$TOKEN" --capture-dir "$LR_TMP/caplink"
start_refused "--capture-dir a file" "is not a directory" --token-file "$TOKEN" --capture-dir "$HOST/etc/victim.conf"
start_refused "no --token-file nor --insecure, on loopback" "give --token-file FILE" --capture-dir "$CAP"
start_refused "no --token-file nor --insecure: names --insecure" "or --insecure" --capture-dir "$CAP"
start_refused "--token-file with --insecure" "--insecure and --token-file: give one" --token-file "$TOKEN" --insecure

lr_log "== namespaces"
for n in "$OTHER" pid:1 /proc/1/ns/net "/run/netns/$OTHER"; do
	refused_rx "no --allow-netns, netns = $n" 7602 netns "$n" "this agent tests only in its own namespace"
done
agent ns 7603 --token-file "$TOKEN" --allow-netns "lr-agent_paths-other-*,/run/netns/lr-agent_paths-other-*,/dev/*"
out=$LR_TMP/ns.ok
ask 7603 "$out" "$(jq -cn --arg n "$OTHER" '{type: "prepare_rx", interface: "p0", netns: $n}')"
lr_show_file "$out.err"
lr_check "--allow-netns: the namespace it names is served" "$(jq -sr '.[1].type' "$out")" == ready
ask 7603 "$out" "$(jq -cn --arg n "/run/netns/$OTHER" '{type: "prepare_rx", interface: "p0", netns: $n}')"
lr_check "--allow-netns: and by its path" "$(jq -sr '.[1].type' "$out")" == ready
for n in pid:1 /proc/1/ns/net "$TX" "/run/netns/$TX"; do
	refused_rx "--allow-netns, netns = $n" 7603 netns "$n" "matches none of the agent's --allow-netns patterns"
done
refused_rx "--allow-netns, a '..' path to the allowed one" 7603 netns "/run/netns/$OTHER/../$OTHER" \
	"not a plain absolute path"
refused_rx "--allow-netns, a '..' path out of an allowed directory" 7603 netns "/run/netns/lr-agent_paths-other-x/../../../proc/1/ns/net" \
	"not a plain absolute path"
refused_rx "--allow-netns, /dev/null (allowed, not a namespace)" 7603 netns /dev/null "is not a network namespace"
no_harm "after every case"

lr_finish
