#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# container:NAME: --netns container:NAME, config `netns = container:NAME`, and `linerate veth`.
#
# A stand-in `docker` (a bash script the test writes, first on PATH) answers
# `container inspect --format '{{.State.Pid}} {{.State.Running}}' NAME`:
#   web      "PID true", PID of a `sleep` the test started inside ns ctr
#   stopped  "0 false"
#   gone     "PID true", PID of a process that has already exited
#   hang     never answers (exec sleep 60): linerate must stop it after 10 s
#   hangwrap never answers, and is a wrapper: it starts `sleep 60` and waits for it; linerate
#            must stop both, the wrapper and what it started (its process group)
#   garbage  "<no value> <no value>" (what a template gives an object without those fields)
#   twolines "PID true" twice
#   binary   "PID true" with terminal escapes and control bytes in it, then 300 kB of 'x'
#   empty    nothing at all, exit 0
#   errgarb  exit 1, two lines on stderr, the first with terminal escapes and a bell in it
#   other    "Error: No such object: NAME" on stderr, exit 1
#   (every answer but hang's and hangwrap's first writes the CLI's PID to cli-NAME.pid)
#
#   ns lr-container-host-PID          ns lr-container-ctr-PID ("container web")      ns lr-container-third-PID
#   +--------------------------+      +----------------------------------------+   +-----------------------+
#   | vethHEX 198.18.0.1/30    |<---->| eth0 198.18.0.2/30 (veth)              |   |                       |
#   |  (linerate veth, send)   | veth | eth1 (veth) <--------------------------+-->| vethHEXt              |
#   +--------------------------+      | in0 <--veth--> in1 (both inside)       |   +-----------------------+
#                                     | mv0 (macvlan on in1), br0 (bridge)     |
#                                     | sleep 300 (the "container's" process)  |
#                                     +----------------------------------------+
#
# Checks:
#   - ip netns exec HOST linerate veth container:web  prints vethHEX (one line, nothing on stderr);
#     container:web:eth0 the same; --json - gives container, pid, netns, ifname, ifindex,
#     peer_ifname, peer_ifindex (matching ip's view); --netns HOST from the root namespace the same;
#     --netns THIRD container:web:eth1 prints vethHEXt; LINERATE_DOCKER=/path/to/stand-in with no
#     docker on PATH; LINERATE_DOCKER=NAME found on PATH; podman as the fallback CLI
#   - the stand-in was called as `container inspect --format '{{.State.Pid}} {{.State.Running}}' NAME`
#   - probe -i eth0 --netns container:web --json -: link.ifindex is eth0's in ctr, its veth peer is vethHEX
#   - recv --netns container:web -i eth0 --once, then send from HOST -i $(linerate veth container:web)
#     at 10 kpps: 5000 frames counted exactly (tx 5000, rx 5000, lost 0, settled), tx.pps <= 10500
#   - linerate run with `[rx] netns = container:web`: one sweep step, rx == tx, no loss
#   - errors, each exit 2, exactly one line on stderr, nothing on stdout: no docker/podman on PATH
#     (the line names LINERATE_DOCKER), LINERATE_DOCKER not executable, unknown container (the
#     CLI's own line passed on), stopped container, process gone, CLI hangs (stopped after 10 s,
#     its PID gone), CLI wrapper that hangs (the wrapper and its child both gone), no CLI but in
#     relative PATH entries (".", "rel", and the empty entry: never searched), unknown interface, macvlan ("is a macvlan, not a veth"), bridge, loopback, peer inside
#     the container, peer in a third namespace (named), peer not in the root namespace, bad specs;
#     the same errors through --netns container:NAME for probe, recv and send
#   - garbage answers (garbage, twolines, binary, empty, errgarb) to veth, recv and send: exit 2,
#     one line saying what the CLI answered, in printable ASCII only, nothing on stdout, no --json
#     or --ready-file written, the CLI's process ended
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

lr_init
lr_require_cmds stat readlink env
lr_netns_add HOST host
lr_netns_add CTR ctr
lr_netns_add THIRD third

HOSTIF=$(printf 'veth%x' $(($$ & 0xfffffff)))
THIRDIF=${HOSTIF}t
lr_veth "$CTR" eth0 "$HOST" "$HOSTIF"
lr_addr "$CTR" eth0 198.18.0.2/30
lr_addr "$HOST" "$HOSTIF" 198.18.0.1/30
lr_veth "$CTR" eth1 "$THIRD" "$THIRDIF"
ip -n "$CTR" link set eth1 up
ip -n "$THIRD" link set "$THIRDIF" up
lr_veth "$CTR" in0 "$CTR" in1
ip -n "$CTR" link add mv0 link in1 type macvlan mode bridge || lr_kernel_lacks "macvlan"
ip -n "$CTR" link add br0 type bridge || lr_kernel_lacks "bridges"

# The "container": a process that lives in ns ctr. `ip netns exec` execs sleep in place, so $! is
# sleep's PID; wait until it has switched namespaces before anyone reads /proc/PID/ns/net.
lr_spawn web-sleep ip netns exec "$CTR" sleep 300
WEB_PID=$LR_LAST_PID
CTR_INO=$(stat -L -c %i "/run/netns/$CTR")
for ((i = 0; i < 100; i++)); do
	[[ $(readlink "/proc/$WEB_PID/ns/net" 2>/dev/null) == "net:[$CTR_INO]" ]] && break
	sleep 0.05
done
[[ $(readlink "/proc/$WEB_PID/ns/net") == "net:[$CTR_INO]" ]] || lr_die "the container's sleep never entered $CTR"
# A PID whose process has exited (and been reaped) for the "gone" container.
true &
GONE_PID=$!
wait "$GONE_PID"

# The stand-in CLI. Its arguments are logged, checked, then answered.
BIN=$LR_TMP/bin
mkdir -p "$BIN" "$LR_TMP/empty" "$LR_TMP/podman-only"
cat >"$BIN/docker" <<EOF
#!/bin/bash
# stand-in docker for test_container.sh
printf '%s\n' "\$*" >>"$LR_TMP/docker.log"
if [[ \$# != 5 || \$1 != container || \$2 != inspect || \$3 != --format ||
      \$4 != '{{.State.Pid}} {{.State.Running}}' ]]; then
	echo "stand-in docker: unexpected arguments: \$*" >&2
	exit 64
fi
case \$5 in
hang | hangwrap) ;;
*) echo \$\$ >"$LR_TMP/cli-\$5.pid" ;;
esac
case \$5 in
web) echo "$WEB_PID true" ;;
stopped) echo "0 false" ;;
gone) echo "$GONE_PID true" ;;
hang) echo \$\$ >"$LR_TMP/hang.pid"; exec sleep 60 ;;
hangwrap) echo \$\$ >"$LR_TMP/hangwrap.pid"; sleep 60 & echo \$! >"$LR_TMP/hangchild.pid"; wait ;;
garbage) echo '<no value> <no value>' ;;
twolines) printf '%s true\n%s true\n' "$WEB_PID" "$WEB_PID" ;;
binary) printf '\033[31m%s\001true\033[0m\n' "$WEB_PID"; head -c 300000 /dev/zero | tr '\0' x ;;
empty) ;;
errgarb) printf '\033[1;31mError\033[0m: daemon\a gone\nsecond line\n' >&2; exit 1 ;;
*) echo "Error: No such object: \$5" >&2; exit 1 ;;
esac
EOF
chmod +x "$BIN/docker"
cp "$BIN/docker" "$LR_TMP/podman-only/podman"
cp "$BIN/docker" "$LR_TMP/mydocker"
chmod -x "$LR_TMP/mydocker"
# The real PATH for ip, env and friends, but neither a docker nor a podman from the system.
SYS_PATH=$LR_TMP/empty
for d in /usr/sbin /usr/bin /sbin /bin; do
	[[ -x $d/docker || -x $d/podman ]] || SYS_PATH+=:$d
done
export PATH=$BIN:$PATH
unset LINERATE_DOCKER

HOST_IDX=$(ip -n "$HOST" -j link show dev "$HOSTIF" | jq -r '.[0].ifindex')
CTR_IDX=$(ip -n "$CTR" -j link show dev eth0 | jq -r '.[0].ifindex')
lr_log "container web: PID $WEB_PID in $CTR; eth0 ifindex $CTR_IDX <-> $HOSTIF ifindex $HOST_IDX in $HOST"

# ok DESC WANT_STDOUT CMD...: exit 0, stdout exactly WANT_STDOUT, stderr empty.
ok()
{
	local desc=$1 want=$2 rc=0

	shift 2
	timeout -k 5 30 "$@" >"$LR_TMP/ok.out" 2>"$LR_TMP/ok.err" </dev/null || rc=$?
	lr_check "$desc: exit code" "$rc" == 0
	lr_check "$desc: stdout" "$(cat "$LR_TMP/ok.out")" == "$want"
	lr_check "$desc: stdout lines" "$(awk 'END { print NR }' "$LR_TMP/ok.out")" == 1
	lr_check "$desc: stderr bytes" "$(wc -c <"$LR_TMP/ok.err")" == 0
	lr_show_file "$LR_TMP/ok.err"
}

# bad DESC WANT_RC REGEX CMD...: exit WANT_RC, exactly one line on stderr matching REGEX, empty stdout.
bad()
{
	local desc=$1 want=$2 re=$3 rc=0 line

	shift 3
	timeout -k 5 30 "$@" >"$LR_TMP/bad.out" 2>"$LR_TMP/bad.err" </dev/null || rc=$?
	line=$(head -n 1 "$LR_TMP/bad.err")
	lr_log "$desc: $line"
	lr_check "$desc: exit code" "$rc" == "$want"
	lr_check "$desc: stderr lines" "$(awk 'END { print NR }' "$LR_TMP/bad.err")" == 1
	lr_check "$desc: stdout bytes" "$(wc -c <"$LR_TMP/bad.out")" == 0
	if [[ $line =~ $re ]]; then
		lr_pass "$desc: message matches /$re/"
	else
		lr_fail "$desc: message matches /$re/" "'$line'"
	fi
}

IN_HOST=(ip netns exec "$HOST")
lr_log "== linerate veth"
ok "veth container:web" "$HOSTIF" "${IN_HOST[@]}" "$LINERATE" veth container:web
ok "veth container:web:eth0" "$HOSTIF" "${IN_HOST[@]}" "$LINERATE" veth container:web:eth0
ok "veth --netns HOST container:web (from the root namespace)" "$HOSTIF" "$LINERATE" veth --netns "$HOST" container:web
ok "veth --netns THIRD container:web:eth1" "$THIRDIF" "$LINERATE" veth -n "$THIRD" container:web:eth1
lr_check "the stand-in was asked: container inspect --format '{{.State.Pid}} {{.State.Running}}' web" \
	"$(head -n 1 "$LR_TMP/docker.log")" == 'container inspect --format {{.State.Pid}} {{.State.Running}} web'

J=$LR_TMP/veth.json
RC=0
"${IN_HOST[@]}" "$LINERATE" veth --json - container:web >"$J" 2>"$LR_TMP/veth.err" || RC=$?
lr_show_file "$J"
lr_check "veth --json -: exit code" "$RC" == 0
lr_jvalid "$J"
lr_check "veth JSON command" "$(lr_jget "$J" .command)" == veth
lr_check "veth JSON container" "$(lr_jget "$J" .container)" == web
lr_check "veth JSON cli" "$(lr_jget "$J" .cli)" == "$BIN/docker"
lr_check "veth JSON pid" "$(lr_jget "$J" .pid)" == "$WEB_PID"
lr_check "veth JSON netns" "$(lr_jget "$J" .netns)" == "/proc/$WEB_PID/ns/net"
lr_check "veth JSON ifname" "$(lr_jget "$J" .ifname)" == eth0
lr_check "veth JSON ifindex" "$(lr_jget "$J" .ifindex)" == "$CTR_IDX"
lr_check "veth JSON peer_ifname" "$(lr_jget "$J" .peer_ifname)" == "$HOSTIF"
lr_check "veth JSON peer_ifindex" "$(lr_jget "$J" .peer_ifindex)" == "$HOST_IDX"
lr_check "veth --json -: stderr bytes" "$(wc -c <"$LR_TMP/veth.err")" == 0

lr_log "== which CLI"
ok "LINERATE_DOCKER=/path/to/stand-in, no docker on PATH" "$HOSTIF" \
	"${IN_HOST[@]}" env PATH="$SYS_PATH" LINERATE_DOCKER="$BIN/docker" "$LINERATE" veth container:web
ok "LINERATE_DOCKER=docker (a name looked up on PATH)" "$HOSTIF" \
	"${IN_HOST[@]}" env PATH="$SYS_PATH:$BIN" LINERATE_DOCKER=docker "$LINERATE" veth container:web
ok "podman when there is no docker" "$HOSTIF" \
	"${IN_HOST[@]}" env PATH="$SYS_PATH:$LR_TMP/podman-only" "$LINERATE" veth container:web
bad "no docker or podman on PATH" 2 \
	'^linerate veth: container:web: no docker or podman on PATH \(set LINERATE_DOCKER to a docker-compatible CLI\)$' \
	"${IN_HOST[@]}" env -u LINERATE_DOCKER PATH="$SYS_PATH" "$LINERATE" veth container:web
bad "LINERATE_DOCKER not executable" 2 \
	"^linerate veth: container:web: LINERATE_DOCKER='$LR_TMP/mydocker' is not an executable file\$" \
	"${IN_HOST[@]}" env LINERATE_DOCKER="$LR_TMP/mydocker" "$LINERATE" veth container:web

lr_log "== containers the CLI cannot give a namespace for"
bad "unknown container" 2 '^linerate veth: container:nosuch: docker: Error: No such object: nosuch$' \
	"${IN_HOST[@]}" "$LINERATE" veth container:nosuch
bad "stopped container" 2 '^linerate veth: container:stopped is not running$' \
	"${IN_HOST[@]}" "$LINERATE" veth container:stopped
bad "container whose process is gone" 2 "^linerate veth: container:gone: its process $GONE_PID is gone" \
	"${IN_HOST[@]}" "$LINERATE" veth container:gone
T0=$(date +%s%N)
bad "CLI that never answers" 2 '^linerate veth: container:hang: docker did not answer within 10 s' \
	"${IN_HOST[@]}" "$LINERATE" veth container:hang
T1=$(date +%s%N)
lr_check "CLI that never answers: given up after ~10 s (ms)" $(((T1 - T0) / 1000000)) "<" 13000
lr_check "CLI that never answers: given up after ~10 s (ms)" $(((T1 - T0) / 1000000)) ">=" 9900
HANG_PID=$(cat "$LR_TMP/hang.pid" 2>/dev/null || echo none)
# shellcheck disable=SC2016 # eval expands it
lr_check_cmd "CLI that never answers: its process ($HANG_PID) was stopped" \
	eval '[[ $HANG_PID =~ ^[0-9]+$ ]] && ! kill -0 "$HANG_PID" 2>/dev/null'
# should it have survived, it is ours to end (by PID)
if [[ $HANG_PID =~ ^[0-9]+$ ]]; then
	kill "$HANG_PID" 2>/dev/null || true
fi
bad "CLI wrapper that never answers" 2 '^linerate veth: container:hangwrap: docker did not answer within 10 s' \
	"${IN_HOST[@]}" "$LINERATE" veth container:hangwrap
WRAP_PID=$(cat "$LR_TMP/hangwrap.pid" 2>/dev/null || echo none)
CHILD_PID=$(cat "$LR_TMP/hangchild.pid" 2>/dev/null || echo none)
# ended: gone, or a zombie its new parent has not reaped yet (give that up to 2 s)
# shellcheck disable=SC2317 # called through lr_check_cmd
ended()
{
	local i st

	[[ $1 =~ ^[0-9]+$ ]] || return 1
	for ((i = 0; i < 40; i++)); do
		st=$(ps -o stat= -p "$1" 2>/dev/null | tr -d ' ')
		[[ -z $st || $st == Z* ]] && return 0
		sleep 0.05
	done
	return 1
}
lr_check_cmd "CLI wrapper that never answers: the wrapper ($WRAP_PID) was stopped" ended "$WRAP_PID"
lr_check_cmd "CLI wrapper that never answers: the process it started ($CHILD_PID) was stopped too" ended "$CHILD_PID"
for p in "$WRAP_PID" "$CHILD_PID"; do
	if [[ $p =~ ^[0-9]+$ ]]; then
		kill "$p" 2>/dev/null || true
	fi
done
lr_log "== garbage answers"
# garbage NAME REGEX: veth, recv and send with container:NAME each exit 2 with one line of
# printable ASCII, "linerate CMD: container:NAME: " and REGEX, write nothing, and end the CLI
garbage()
{
	local c=$1 re=$2 cmd pid
	local -a args

	for cmd in veth recv send; do
		rm -f "$LR_TMP/cli-$c.pid" "$LR_TMP/garbage.json" "$LR_TMP/garbage.ready"
		case $cmd in
		veth) args=(veth "container:$c") ;;
		recv) args=(recv -i eth0 --netns "container:$c" --duration 1s --json "$LR_TMP/garbage.json"
			--ready-file "$LR_TMP/garbage.ready") ;;
		send) args=(send -i eth0 --netns "container:$c" --dst-ip 198.18.0.1 --count 1
			--json "$LR_TMP/garbage.json") ;;
		esac
		bad "$c: $cmd" 2 "^linerate $cmd: container:$c: $re" "${IN_HOST[@]}" "$LINERATE" "${args[@]}"
		lr_check "$c: $cmd: bytes on stderr outside printable ASCII" \
			"$(LC_ALL=C tr -d '[:print:]\n' <"$LR_TMP/bad.err" | wc -c)" == 0
		lr_check_cmd "$c: $cmd: no --json file" test ! -e "$LR_TMP/garbage.json"
		lr_check_cmd "$c: $cmd: no --ready-file" test ! -e "$LR_TMP/garbage.ready"
		pid=$(cat "$LR_TMP/cli-$c.pid" 2>/dev/null || echo none)
		lr_check_cmd "$c: $cmd: the CLI ($pid) was asked and has ended" ended "$pid"
	done
}
garbage garbage "cannot read a PID from the container CLI's answer '<no value> <no value>' \\(want \"PID true\"\\)\$"
garbage twolines "cannot read a PID from the container CLI's answer '$WEB_PID true'"
garbage binary "cannot read a PID from the container CLI's answer '\\?\\[31m$WEB_PID\\?true\\?\\[0m'"
garbage empty "the container CLI answered nothing to inspect\$"
garbage errgarb "docker: \\?\\[1;31mError\\?\\[0m: daemon\\? gone\$"

# A docker in the working directory, or in a relative PATH entry, is never picked up.
mkdir -p "$LR_TMP/rel"
cp "$BIN/docker" "$LR_TMP/docker"
cp "$BIN/docker" "$LR_TMP/rel/docker"
bad "docker only in relative PATH entries" 2 '^linerate veth: container:web: no docker or podman on PATH' \
	env -C "$LR_TMP" PATH=".:rel::$SYS_PATH" "${IN_HOST[@]}" "$LINERATE" veth container:web
rm -f "$LR_TMP/docker" "$LR_TMP/rel/docker"

lr_log "== interfaces that are not the container's veth to us"
bad "unknown interface" 2 "^linerate veth: container:web has no interface 'nosuch0'\$" \
	"${IN_HOST[@]}" "$LINERATE" veth container:web:nosuch0
bad "macvlan" 2 '^linerate veth: container:web:mv0 is a macvlan, not a veth$' \
	"${IN_HOST[@]}" "$LINERATE" veth container:web:mv0
bad "bridge" 2 '^linerate veth: container:web:br0 is a bridge, not a veth$' \
	"${IN_HOST[@]}" "$LINERATE" veth container:web:br0
bad "loopback" 2 "^linerate veth: container:web:lo is not a veth \\((it has )?no link kind" \
	"${IN_HOST[@]}" "$LINERATE" veth container:web:lo
bad "peer inside the container" 2 '^linerate veth: container:web:in0: its peer \(ifindex [0-9]+\) is inside the container too' \
	"${IN_HOST[@]}" "$LINERATE" veth container:web:in0
bad "peer in a third namespace" 2 \
	"^linerate veth: container:web:eth1: its peer \\(ifindex [0-9]+\\) is in network namespace '$THIRD', not in this one" \
	"${IN_HOST[@]}" "$LINERATE" veth container:web:eth1
bad "peer not in the root namespace" 2 \
	"^linerate veth: container:web:eth0: its peer \\(ifindex $HOST_IDX\\) is in network namespace '$HOST', not in this one" \
	"$LINERATE" veth container:web
bad "bad spec: container:" 2 "^linerate veth: 'container:' names no container" "$LINERATE" veth container:
bad "bad spec: no prefix" 2 "^linerate veth: 'web' is not container:NAME" "$LINERATE" veth web
bad "bad spec: option-like name" 2 "^linerate veth: '-x' is not a container name" "$LINERATE" veth container:-x
bad "veth without an argument" 2 "^linerate veth: missing container:NAME" "$LINERATE" veth
RC=0
"$LINERATE" veth --help >"$LR_TMP/help.out" 2>&1 || RC=$?
lr_check "veth --help: exit code" "$RC" == 0
lr_check_cmd "veth --help: usage line" grep -q '^Usage: linerate veth container:NAME\[:IFNAME\]' "$LR_TMP/help.out"
# shellcheck disable=SC2016 # eval expands it
lr_check_cmd "linerate help lists veth" eval '"$LINERATE" help | grep -q "^  veth "'

lr_log "== --netns container:NAME"
J=$LR_TMP/probe.json
RC=0
timeout -k 5 30 "$LINERATE" probe -i eth0 --netns container:web --json - >"$J" 2>"$LR_TMP/probe.err" || RC=$?
lr_check "probe --netns container:web: exit code" "$RC" == 0
lr_jvalid "$J"
lr_check "probe --netns container:web: link.ifindex is the container's eth0" "$(lr_jget "$J" .link.ifindex)" == "$CTR_IDX"
lr_check "probe --netns container:web: link.mac is the container's eth0" "$(lr_jget "$J" .link.mac)" == \
	"$(lr_mac "$CTR" eth0)"
lr_check "probe --netns container:web: link.veth_peer_ifindex is $HOSTIF" \
	"$(lr_jget "$J" .link.veth_peer_ifindex)" == "$HOST_IDX"
bad "probe --netns container:stopped" 2 '^linerate probe: container:stopped is not running$' \
	"$LINERATE" probe -i eth0 --netns container:stopped
bad "probe --netns container:nosuch" 2 '^linerate probe: container:nosuch: docker: Error: No such object: nosuch$' \
	"$LINERATE" probe -i eth0 --netns container:nosuch
bad "probe --netns container:web, no CLI" 2 '^linerate probe: container:web: no docker or podman on PATH' \
	env -u LINERATE_DOCKER PATH="$SYS_PATH" "$LINERATE" probe -i eth0 --netns container:web
bad "probe --netns container:web:eth0" 2 "^linerate probe: --netns: 'container:web:eth0': a network namespace is container:NAME" \
	"$LINERATE" probe -i eth0 --netns container:web:eth0
bad "recv --netns container:nosuch" 2 '^linerate recv: container:nosuch: docker: Error: No such object: nosuch$' \
	"${IN_HOST[@]}" "$LINERATE" recv -i eth0 --netns container:nosuch --duration 1s
bad "send --netns container:stopped" 2 '^linerate send: container:stopped is not running$' \
	"${IN_HOST[@]}" "$LINERATE" send -i eth0 --netns container:stopped --dst-ip 198.18.0.1 --count 1

lr_log "== 5000 frames at 10 kpps into the container, the sender on \$(linerate veth container:web)"
SEND_IF=$("${IN_HOST[@]}" "$LINERATE" veth container:web)
rm -f "$LR_TMP/ready"
lr_spawn recv timeout -k 5 45 "$LINERATE" recv --netns container:web -i eth0 --once --duration 30 \
	--json "$LR_TMP/recv.json" --ready-file "$LR_TMP/ready"
RECV_PID=$LR_LAST_PID
if ! lr_wait_for_file "$LR_TMP/ready" 15 "$RECV_PID"; then
	lr_show_file "$LR_TMP/recv.out"
	lr_show_file "$LR_TMP/recv.err"
	lr_die "recv --netns container:web never became ready"
fi
lr_check_cmd "an XDP program is on the container's eth0 once recv is ready" lr_xdp_attached "$CTR" eth0
SEND_RC=0
timeout -k 5 60 "${IN_HOST[@]}" "$LINERATE" send -i "$SEND_IF" --dst-ip 198.18.0.2 --rate 10kpps --count 5000 \
	--json "$LR_TMP/send.json" >"$LR_TMP/send.out" 2>"$LR_TMP/send.err" || SEND_RC=$?
RECV_RC=0
lr_wait_pid "$RECV_PID" 40 || RECV_RC=$?
lr_show_file "$LR_TMP/send.out"
lr_show_file "$LR_TMP/send.err"
lr_show_file "$LR_TMP/recv.out"
lr_show_file "$LR_TMP/recv.err"
S=$LR_TMP/send.json R=$LR_TMP/recv.json
lr_check "send exit code" "$SEND_RC" == 0
lr_check "recv --once exit code" "$RECV_RC" == 0
lr_jvalid "$S"
lr_jvalid "$R"
lr_check "send JSON interface" "$(lr_jget "$S" .interface)" == "$HOSTIF"
lr_check "tx.packets" "$(lr_jget "$S" .tx.packets)" == 5000
# Paced, not blasted. No lower bound: on a busy 2-core host the sender may fall behind 10k.
lr_log "info: sent at $(lr_jget "$S" .tx.pps) pps (asked for 10k)"
lr_check "tx.pps paced at 10k (<= 10500)" "$(lr_jget "$S" .tx.pps)" "<=" 10500
lr_check "recv JSON interface" "$(lr_jget "$R" .interface)" == eth0
lr_check "rx.packets" "$(lr_jget "$R" .rx.packets)" == 5000
lr_check "rx.lost" "$(lr_jget "$R" .rx.lost)" == 0
lr_check "rx.duplicates" "$(lr_jget "$R" .rx.duplicates)" == 0
lr_check "rx.reordered" "$(lr_jget "$R" .rx.reordered)" == 0
lr_check "rx.sent (from end-of-test markers)" "$(lr_jget "$R" .rx.sent)" == 5000
lr_check "rx.tail_settled" "$(jq -r '.rx.tail_settled' "$R" 2>/dev/null)" == true
lr_check_cmd "no XDP program left on the container's eth0" lr_xdp_absent "$CTR" eth0

lr_log "== linerate run with [rx] netns = container:web"
# sender_limited = pass: a busy machine's sender may fall short of the paced rate; the verdict is
# tested in test_throughput and test_configs, not here
cat >"$LR_TMP/ctr.ini" <<EOF
[test]
mode = sweep
duration = 1s
warmup = 200ms
max_loss = 0
sender_limited = pass

[tx]
netns = $HOST
interface = $SEND_IF
src_ip = 198.18.0.1
dst_ip = 198.18.0.2
sizes = 64
rates = 10k
flows = 1

[rx]
netns = container:web
interface = eth0
EOF
RC=0
"$LINERATE" run --check "$LR_TMP/ctr.ini" >"$LR_TMP/check.out" 2>&1 || RC=$?
lr_check "run --check with netns = container:web: exit code" "$RC" == 0
RC=0
timeout -k 5 60 "$LINERATE" run "$LR_TMP/ctr.ini" --json "$LR_TMP/run.json" -q >"$LR_TMP/run.out" \
	2>"$LR_TMP/run.err" || RC=$?
lr_show_file "$LR_TMP/run.out"
lr_show_file "$LR_TMP/run.err"
lr_check "run: exit code" "$RC" == 0
lr_jvalid "$LR_TMP/run.json"
lr_check "run: steps" "$(jq '.steps | length' "$LR_TMP/run.json")" == 1
lr_check "run: rx.packets == tx.packets > 0" \
	"$(jq '[.steps[] | select(.rx.packets != .tx.packets or .tx.packets == 0)] | length' "$LR_TMP/run.json")" == 0
lr_check "run: lost 0" "$(jq '[.steps[] | select(.rx.lost != 0)] | length' "$LR_TMP/run.json")" == 0
sed -i 's/^netns = container:web$/netns = container:stopped/' "$LR_TMP/ctr.ini"
RC=0
timeout -k 5 60 "$LINERATE" run "$LR_TMP/ctr.ini" -q >"$LR_TMP/run2.out" 2>"$LR_TMP/run2.err" || RC=$?
lr_show_file "$LR_TMP/run2.err"
lr_check "run with netns = container:stopped: exit code" "$RC" == 2
lr_check_cmd "run with netns = container:stopped: says so" grep -q 'container:stopped is not running' "$LR_TMP/run2.err"

lr_finish
