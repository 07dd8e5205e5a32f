#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# linerate against real containers of a real Docker engine (a private dockerd, scripts/lib-docker.sh).
#
#   ns lr-docker-dhost-PID (the Docker host: dockerd, its iptables, FORWARD policy DROP, ip_forward)
#   +--------------------------------------------------------------------------------------------+
#   | bridge lrdkN 198.18.240.1/24 (dockerd --bridge)                                              |
#   |   vethA <-> eth0 web  198.18.240.2     vethB <-> eth0 web2 198.18.240.3                      |
#   |   vethC <-> eth0 pub  (docker run -p 9000:7447/udp: DNAT + conntrack)                         |
#   |   halt (created, then stopped)                                                              |
#   | up0 198.18.241.1/24 <--veth--> eth0 198.18.241.2/24 [ns lr-docker-client-PID, default via .1]|
#   +--------------------------------------------------------------------------------------------+
#
# Checks:
#   - the engine starts (own data root, exec root, socket, pid file, bridge, 198.18.0.0/15 only),
#     a busybox-static image is imported (no registry), containers run on our bridge
#   - linerate veth container:web (run in the Docker host) names the host-side veth of web's eth0:
#     the interface whose ifindex is eth0's iflink, a port of our bridge; --json pid == docker's
#   - host -> container: send on that veth in the Docker host, recv --netns container:web --once:
#     exact (tx == rx == sent == COUNT, lost 0, settled), engines auto and live; in every exchange
#     the receiving eth0's rx_packets (the kernel's count) grew by at least COUNT
#   - container -> container: send --netns container:web to web2, no --dst-mac: exact, and the
#     Docker host's FORWARD chain (Docker's DOCKER-USER jump, through br_netfilter) saw >= COUNT
#   - published port: client -> 198.18.241.1:9000 -> DNAT -> pub:7447: exact, counted on port 7447
#     (so every frame was rewritten), the DNAT rule names pub's address
#   - a stopped container and an unknown one: veth, recv and send each exit 2 with one line on
#     stderr and nothing on stdout, and leave no XDP program on web's veth
#   - the engine stopped: no process, mount or file of it left, and the host (sysctls, iptables,
#     nft tables, br_netfilter, /etc/docker, /run/docker, /run/containerd) as it was before
#   - on a stand-in /sys/module and /proc (br_netfilter is built in on some hosts, a module on
#     others): the restore unloads br_netfilter only when it was absent before, is a loaded module
#     now, has no holder and no other dockerd, kubelet or crio runs
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=scripts/lib-docker.sh
. "$LR_REPO/scripts/lib-docker.sh"

COUNT=20000
RATE=20kpps
NET=198.18.240

lr_init
lr_require_cmds dockerd nsenter iptables-save nft tar
lr_netns_add DHOST dhost
lr_netns_add CLIENT client
lr_cleanup_first lr_dockerd_stop
BEFORE=$(lr_host_state)
FORWARD0=$(iptables -S FORWARD 2>/dev/null | head -n 1)

# ---------------------------------------------------------------------------------------------
lr_log "== br_netfilter: when the restore unloads it (stand-in /sys/module and /proc)"
# ours CASE WANT BEFORE INITSTATE REFCNT COMM: lr_br_netfilter_ours on a tree where the module's
# initstate and refcnt are as given ("-": no such file) and one process named COMM runs
ours()
{
	local t=$LR_TMP/brnf-$1 got=no

	mkdir -p "$t/sys/br_netfilter" "$t/proc/4242"
	printf 'module br_netfilter %s\n' "$3" >"$t/before"
	[[ $4 == - ]] || echo "$4" >"$t/sys/br_netfilter/initstate"
	[[ $5 == - ]] || echo "$5" >"$t/sys/br_netfilter/refcnt"
	echo "$6" >"$t/proc/4242/comm"
	lr_br_netfilter_ours "$t/before" "$t/sys" "$t/proc" && got=yes
	lr_check "br_netfilter: $1" "$got" == "$2"
}
ours "loaded by the engine: unloaded" yes absent live 0 bash
ours "loaded before: kept" no present live 0 bash
ours "built in (no initstate): kept" no absent - - bash
ours "still loading (initstate coming): kept" no absent coming 0 bash
ours "held (refcnt 1): kept" no absent live 1 bash
ours "another dockerd runs: kept" no absent live 0 dockerd
ours "a kubelet runs: kept" no absent live 0 kubelet

# ---------------------------------------------------------------------------------------------
lr_log "== private dockerd in $DHOST"
# Docker sets FORWARD to DROP only when it turns IPv4 forwarding on itself; a new namespace may
# inherit forwarding already on (net.core.devconf_inherit_init_net, or another engine's doing in
# the root namespace), and then Docker leaves the policy as it was: what the host was, not ours
FWD0=$(ip netns exec "$DHOST" sysctl -n net.ipv4.ip_forward)
POLICY0=$(ip netns exec "$DHOST" iptables -S FORWARD | head -n 1)
lr_dockerd_start "$DHOST" "$NET" || lr_die "dockerd did not start"
lr_check "dockerd answers on its own socket" "$(lr_docker info -f '{{.DockerRootDir}}')" == "$LR_DOCKERD_DIR/root"
lr_check "the root namespace's FORWARD policy is untouched" "$(iptables -S FORWARD 2>/dev/null | head -n 1)" == "$FORWARD0"
if [[ $FWD0 == 0 ]]; then
	lr_check "the Docker host's FORWARD policy is Docker's (DROP: it turned forwarding on)" \
		"$(ip netns exec "$DHOST" iptables -S FORWARD | head -n 1)" == "-P FORWARD DROP"
else
	lr_check "the Docker host's FORWARD policy as it was (forwarding was on before dockerd)" \
		"$(ip netns exec "$DHOST" iptables -S FORWARD | head -n 1)" == "$POLICY0"
fi
lr_check "the Docker host forwards IPv4 (dockerd's doing, or as it was)" \
	"$(ip netns exec "$DHOST" sysctl -n net.ipv4.ip_forward)" == 1
lr_docker_busybox_image lr-busybox:test || lr_die "docker import failed"
ip -n "$DHOST" link add up0 type veth peer name eth0 netns "$CLIENT"
lr_addr "$DHOST" up0 198.18.241.1/24
lr_addr "$CLIENT" eth0 198.18.241.2/24
ip -n "$CLIENT" route add default via 198.18.241.1
for c in web web2; do
	lr_docker run -d --name "$c" lr-busybox:test >/dev/null || lr_die "docker run $c failed"
done
lr_docker run -d --name pub -p 9000:7447/udp lr-busybox:test >/dev/null || lr_die "docker run pub failed"
lr_docker create --name halt lr-busybox:test >/dev/null
lr_docker start halt >/dev/null && lr_docker stop -t 1 halt >/dev/null
ip_of() { lr_docker inspect -f '{{.NetworkSettings.IPAddress}}' "$1"; }
lr_check "web is on our bridge's subnet" "$(ip_of web)" == "$NET.2"
lr_check "web2 is on our bridge's subnet" "$(ip_of web2)" == "$NET.3"
PUB=$(ip_of pub)

# ---------------------------------------------------------------------------------------------
lr_log "== linerate veth container:web"
VETH=$(ip netns exec "$DHOST" "$LINERATE" veth container:web 2>"$LR_TMP/veth.err") || true
IFLINK=$(lr_docker exec web cat /sys/class/net/eth0/iflink)
lr_check "veth container:web: the Docker host's interface with eth0's iflink" \
	"$(ip -n "$DHOST" -j link show | jq -r --argjson i "$IFLINK" '.[] | select(.ifindex == $i) | .ifname')" == "$VETH"
lr_check "$VETH is a port of the engine's bridge" \
	"$(ip -n "$DHOST" -j link show dev "$VETH" | jq -r '.[0].master')" == "$LR_DOCKERD_BRIDGE"
ip netns exec "$DHOST" "$LINERATE" veth container:web --json - >"$LR_TMP/veth.json" 2>/dev/null || true
lr_jvalid "$LR_TMP/veth.json"
lr_check "veth --json pid is docker's" "$(lr_jget "$LR_TMP/veth.json" .pid)" == "$(lr_docker inspect -f '{{.State.Pid}}' web)"
lr_check "veth --json peer_ifname" "$(lr_jget "$LR_TMP/veth.json" .peer_ifname)" == "$VETH"

# rx_packets container:NAME: the kernel's count of frames its eth0 received (the cross-check of
# what recv counted)
rx_packets()
{
	nsenter --net="/proc/$(lr_docker inspect -f '{{.State.Pid}}' "${1#container:}")/ns/net" \
		ip -s -j link show dev eth0 | jq '.[0].stats64.rx.packets'
}

# exchange NAME RECV_NETNS SEND_NETNS SEND_IF DST [send args...]: recv --once in RECV_NETNS, then
# send; exit codes in SEND_RC/RECV_RC, JSON in $LR_TMP/NAME.{send,recv}.json, the receiving eth0's
# rx_packets over it in RX_DELTA
exchange()
{
	local name=$1 rns=$2 sns=$3 sif=$4 dst=$5 pid before

	shift 5
	before=$(rx_packets "$rns")
	rm -f "$LR_TMP/ready"
	lr_spawn "$name.recv" timeout -k 5 45 "$LINERATE" recv -i eth0 --netns "$rns" --once --duration 30 \
		--json "$LR_TMP/$name.recv.json" --ready-file "$LR_TMP/ready"
	pid=$LR_LAST_PID
	lr_wait_for_file "$LR_TMP/ready" 15 "$pid" || lr_show_file "$LR_TMP/$name.recv.err"
	SEND_RC=0
	timeout -k 5 60 "$LINERATE" send -i "$sif" --netns "$sns" --dst-ip "$dst" --count "$COUNT" --rate "$RATE" \
		--json "$LR_TMP/$name.send.json" "$@" >"$LR_TMP/$name.send.out" 2>"$LR_TMP/$name.send.err" || SEND_RC=$?
	RECV_RC=0
	lr_wait_pid "$pid" 40 || RECV_RC=$?
	RX_DELTA=$(($(rx_packets "$rns") - before))
	lr_show_file "$LR_TMP/$name.send.out"
	lr_show_file "$LR_TMP/$name.send.err"
	lr_show_file "$LR_TMP/$name.recv.err"
}

# exact NAME: tx == rx == sent == COUNT, nothing lost, reordered or duplicated, tail settled, and
# the kernel saw at least that many arrive
exact()
{
	local s=$LR_TMP/$1.send.json r=$LR_TMP/$1.recv.json

	lr_check "$1: send exit code" "$SEND_RC" == 0
	lr_check "$1: recv exit code" "$RECV_RC" == 0
	lr_check "$1: tx.packets" "$(lr_jget "$s" .tx.packets)" == "$COUNT"
	lr_check "$1: rx.packets" "$(lr_jget "$r" .rx.packets)" == "$COUNT"
	lr_check "$1: rx.sent (markers)" "$(lr_jget "$r" .rx.sent)" == "$COUNT"
	lr_check "$1: rx.lost" "$(lr_jget "$r" .rx.lost)" == 0
	lr_check "$1: rx.reordered" "$(lr_jget "$r" .rx.reordered)" == 0
	lr_check "$1: rx.duplicates" "$(lr_jget "$r" .rx.duplicates)" == 0
	lr_check "$1: rx.tail_settled" "$(jq -r .rx.tail_settled "$r" 2>/dev/null)" == true
	lr_check "$1: the container's eth0 rx_packets (kernel) >= rx.packets" "$RX_DELTA" ">=" "$COUNT"
}

# ---------------------------------------------------------------------------------------------
for engine in auto live; do
	lr_log "== host -> container (engine $engine): $DHOST $VETH -> container:web eth0"
	exchange "h2c-$engine" container:web "$DHOST" "$VETH" "$NET.2" --engine "$engine"
	exact "h2c-$engine"
	[[ $engine == live ]] && lr_check "h2c-live: engine" "$(lr_jget "$LR_TMP/h2c-live.send.json" .engine)" == live
done

# ---------------------------------------------------------------------------------------------
lr_log "== container -> container: container:web eth0 -> web2, no --dst-mac"
fwd_packets()
{
	ip netns exec "$DHOST" iptables -t filter -L FORWARD -v -n -x | awk '$3 == "DOCKER-USER" { print $1; exit }'
}
F0=$(fwd_packets)
exchange c2c container:web2 container:web eth0 "$NET.3"
exact c2c
F1=$(fwd_packets)
lr_check "c2c: Docker's FORWARD chain (br_netfilter) saw every frame" "$((F1 - F0))" ">=" "$COUNT"
lr_check_cmd "c2c: the MAC came from ARP, not from an option" grep -q 'dst MAC from ARP' "$LR_TMP/c2c.send.err"

# ---------------------------------------------------------------------------------------------
lr_log "== published port: $CLIENT -> 198.18.241.1:9000 -> DNAT -> pub ($PUB):7447"
lr_check_cmd "Docker's DNAT rule for pub" bash -c \
	"ip netns exec '$DHOST' iptables -t nat -S DOCKER | grep -q -- '--dport 9000 -j DNAT --to-destination $PUB:7447'"
# the container asks for its gateway once, so the Docker host knows pub's MAC before the test
lr_docker exec pub ping -c 1 -W 2 "$NET.1" >/dev/null || true
exchange dnat container:pub "$CLIENT" eth0 198.18.241.1 --dst-port 9000
exact dnat
# recv counts test frames to UDP 7447 only (others are foreign): every counted frame was rewritten
lr_check "dnat: frames sent to port 9000 reached 7447, none foreign but ARP" "$(lr_jget "$LR_TMP/dnat.recv.json" .rx.foreign)" "<=" 10

# ---------------------------------------------------------------------------------------------
lr_log "== a stopped container and an unknown one"
# one_line NAME WANT CMD...: exit 2, one line on stderr matching WANT, nothing on stdout
one_line()
{
	local name=$1 want=$2 rc=0

	shift 2
	timeout -k 5 30 "$@" >"$LR_TMP/$name.out" 2>"$LR_TMP/$name.err" || rc=$?
	lr_check "$name: exit code" "$rc" == 2
	lr_check "$name: one line on stderr" "$(wc -l <"$LR_TMP/$name.err")" == 1
	lr_check "$name: nothing on stdout" "$(wc -c <"$LR_TMP/$name.out")" == 0
	lr_check_cmd "$name: the line says '$want'" grep -q -- "$want" "$LR_TMP/$name.err"
}
for c in halt nosuch; do
	if [[ $c == halt ]]; then want="container:halt is not running"; else want="No such container: nosuch"; fi
	one_line "veth-$c" "$want" ip netns exec "$DHOST" "$LINERATE" veth "container:$c"
	one_line "recv-$c" "$want" "$LINERATE" recv -i eth0 --netns "container:$c" --once --duration 5
	one_line "send-$c" "$want" "$LINERATE" send -i eth0 --netns "container:$c" --dst-ip "$NET.2" --count 10
done
lr_check "no XDP program left on web's eth0" \
	"$(nsenter --net="/proc/$(lr_docker inspect -f '{{.State.Pid}}' web)/ns/net" ip -d link show dev eth0 | grep -c xdp)" == 0

# ---------------------------------------------------------------------------------------------
lr_log "== the engine stopped, the host as before"
DIR=$LR_DOCKERD_DIR
DPID=$LR_DOCKERD_PID
lr_dockerd_stop
lr_check_cmd "dockerd is gone" bash -c "! kill -0 $DPID 2>/dev/null"
left=0
for f in /proc/[0-9]*/cmdline; do
	[[ $({ tr '\0' ' ' <"$f"; } 2>/dev/null) == *"$DIR/"* ]] && left=$((left + 1))
done
lr_check "no process runs from the engine's directory" "$left" == 0
lr_check "no mount under the engine's directory" "$(awk -v d="$DIR/" 'index($2, d) == 1' /proc/self/mounts | wc -l)" == 0
lr_check_cmd "the engine's directory is gone" test ! -e "$DIR"
AFTER=$(lr_host_state)
lr_check "host state (sysctls, iptables, nft tables, br_netfilter, docker paths) as before" \
	"$(diff <(echo "$BEFORE") <(echo "$AFTER") | wc -l)" == 0
diff <(echo "$BEFORE") <(echo "$AFTER") >&2 || true
lr_finish
