#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# send finds the next hop's MAC by itself: neighbour table, veth peer, else the kernel resolves it now.
#
#   P = lrnPID (lab namespaces are P-TOPOLOGY-ROLE; lib.sh does not know them, so the trap runs lab down)
#
#   bridge   [P-bridge-c1] eth0 198.18.2.2 -- vc1 [P-bridge-host br0] vc2 -- eth0 198.18.2.3 [P-bridge-c2]
#   overlay  [P-overlay-c1] eth0 198.18.3.2 -- vc1 [h1 br0] vx0 ==vxlan 42 over ul0== vx0 [h2 br0] vc2 --
#              eth0 198.18.3.3 [P-overlay-c2]
#   IPv6     [lr-neigh-snd-PID] eth0 2001:2::1/64 -- p1 [lr-neigh-br-PID br0] p2 -- eth0 2001:2::2/64
#              [lr-neigh-rcv-PID]   (IPv6 on in snd and rcv, no DAD, no static neighbours)
#
# In every case the sender's neighbour entries are removed first (the lab installs permanent ones),
# and its veth peer is a bridge port, so neither the table nor the veth-peer rule knows the MAC:
# the kernel has to resolve it (ARP, neighbour discovery) while send prepares.
#
# Checks:
#   - bridge and overlay, c1 -> c2 without --dst-mac: the sender has no entry for c2 beforehand;
#     send exits 0, recv --once exits 0, tx.packets == rx.packets == rx.sent == COUNT, lost 0;
#     the summary says "dst MAC from ARP (resolved now)"; afterwards c1's neighbour table holds c2's
#     real MAC in a valid state
#   - bridge, a destination behind a gateway (a route via c2): the summary names ARP and the
#     gateway, the frames reach c2 exactly, and c1's table holds c2's MAC for the gateway address
#   - bridge, a destination on the subnet that nobody answers for: exit 2 within 2.5 s, one line
#     on stderr naming the address, the interface and the next hop and that no ARP answer came,
#     nothing on stdout, no XDP program attached in c1, no neighbour entry left for the address
#   - IPv6 over a bridge: send without --dst-mac exits 0 and counts exactly, the summary says
#     "dst MAC from neighbour discovery (resolved now)", the sender's table holds the receiver's MAC
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COUNT=3000
RATE=20kpps
LAB=$LR_REPO/scripts/lab
PFX=lrn$$

lr_init
lr_require_cmds bridge flock

lr_lab_prefix "$PFX"

lab_up()
{
	timeout -k 5 60 "$LAB" up "$1" --prefix "$PFX" >"$LR_TMP/lab-$1.out" 2>"$LR_TMP/lab-$1.err" || {
		lr_show_file "$LR_TMP/lab-$1.err"
		lr_die "lab up $1 failed"
	}
}

lines()
{
	if [[ -s $1 ]]; then wc -l <"$1"; else echo 0; fi
}

# neigh_of NS IF ADDR: "STATE LLADDR" of the entry, "none" when there is none.
neigh_of()
{
	local out

	out=$(ip -n "$1" -j neigh show to "$3" dev "$2" | jq -r '.[0] // empty | "\(.state[0]) \(.lladdr // "-")"')
	printf '%s\n' "${out:-none}"
}

# Removes every neighbour entry of IF in NS, permanent ones included, and checks that none is left.
neigh_clear()
{
	ip -n "$1" neigh flush dev "$2" nud all
	lr_check "$1 $2: no neighbour entries left to find the MAC in" \
		"$(ip -n "$1" -j neigh show dev "$2" | jq length)" == 0
}

# exchange WHAT NS_SND IF_SND NS_RCV IF_RCV DST [send args...]: recv --once in NS_RCV, send without
# --dst-mac from NS_SND. No foreign traffic before the send (as lr_exchange sends): any datagram of
# the sender's own stack would have the kernel resolve the MAC before linerate is asked to.
exchange()
{
	local what=$1 nss=$2 ifs=$3 nsr=$4 ifr=$5 dst=$6 pid

	shift 6
	rm -f "$LR_TMP/ready" "$LR_TMP/recv.json" "$LR_TMP/send.json"
	lr_log "== $what: recv in $nsr $ifr, send from $nss $ifs to $dst without --dst-mac"
	lr_spawn recv timeout -k 5 45 ip netns exec "$nsr" "$LINERATE" recv -i "$ifr" --once --duration 30 \
		--json "$LR_TMP/recv.json" --ready-file "$LR_TMP/ready"
	pid=$LR_LAST_PID
	if ! lr_wait_for_file "$LR_TMP/ready" 15 "$pid"; then
		lr_show_file "$LR_TMP/recv.err"
		lr_die "recv never became ready"
	fi
	SEND_RC=0
	timeout -k 5 60 ip netns exec "$nss" "$LINERATE" send -i "$ifs" --dst-ip "$dst" --count "$COUNT" \
		--rate "$RATE" --json "$LR_TMP/send.json" "$@" >"$LR_TMP/send.out" 2>"$LR_TMP/send.err" || SEND_RC=$?
	# No end-of-test marker will come: stop recv now rather than after its 30 s
	((SEND_RC == 0)) || kill -TERM "$pid" 2>/dev/null || true
	RECV_RC=0
	lr_wait_pid "$pid" 40 || RECV_RC=$?
	lr_show_file "$LR_TMP/send.err"
	lr_show_file "$LR_TMP/recv.err"
	lr_check "$what: send exit code" "$SEND_RC" == 0
	lr_check "$what: recv --once exit code" "$RECV_RC" == 0
	lr_check "$what: tx.packets" "$(lr_jget "$LR_TMP/send.json" .tx.packets)" == "$COUNT"
	lr_check "$what: rx.packets" "$(lr_jget "$LR_TMP/recv.json" .rx.packets)" == "$COUNT"
	lr_check "$what: rx.sent (end-of-test markers)" "$(lr_jget "$LR_TMP/recv.json" .rx.sent)" == "$COUNT"
	lr_check "$what: rx.lost" "$(lr_jget "$LR_TMP/recv.json" .rx.lost)" == 0
}

# resolved WHAT NS IF ADDR MAC HOW: the summary says how, and the table now holds MAC for ADDR.
resolved()
{
	local what=$1 ns=$2 ifn=$3 addr=$4 mac=$5 how=$6 state lladdr

	lr_check_cmd "$what: the summary says \"dst MAC from $how\"" grep -qF "dst MAC from $how" "$LR_TMP/send.err"
	read -r state lladdr <<<"$(neigh_of "$ns" "$ifn" "$addr")"
	lr_check "$what: $ns's neighbour entry for $addr holds the receiver's MAC" "$lladdr" == "$mac"
	lr_check_cmd "$what: and its state is a valid one ($state)" \
		grep -qxE 'REACHABLE|STALE|DELAY|PROBE' <<<"$state"
}

# container_to_container TOPO: c1 -> c2 of a lab topology, the MAC resolved by ARP.
container_to_container()
{
	local topo=$1 c1=$PFX-$1-c1 c2=$PFX-$1-c2 ip2 mac2

	lab_up "$topo"
	ip2=$(ip -n "$c2" -j -4 addr show dev eth0 | jq -r '.[0].addr_info[0].local')
	mac2=$(lr_mac "$c2" eth0)
	neigh_clear "$c1" eth0
	lr_check "$topo: $c1 has no entry for c2 ($ip2) before send" "$(neigh_of "$c1" eth0 "$ip2")" == none
	exchange "$topo c1 -> c2" "$c1" eth0 "$c2" eth0 "$ip2"
	resolved "$topo c1 -> c2" "$c1" eth0 "$ip2" "$mac2" "ARP (resolved now)"
}

# ---------------------------------------------------------------------------------------------
container_to_container bridge

C1=$PFX-bridge-c1
C2=$PFX-bridge-c2
MAC2=$(lr_mac "$C2" eth0)

lr_log "== bridge: a destination behind a gateway (c2)"
neigh_clear "$C1" eth0
ip -n "$C1" route add 198.18.200.0/24 via 198.18.2.3 dev eth0
exchange "gateway" "$C1" eth0 "$C2" eth0 198.18.200.5
resolved "gateway" "$C1" eth0 198.18.2.3 "$MAC2" "ARP (resolved now), gateway 198.18.2.3"

lr_log "== bridge: nobody answers for 198.18.2.9"
neigh_clear "$C1" eth0
RC=0
T0=$(date +%s%N)
timeout -k 2 10 ip netns exec "$C1" "$LINERATE" send -i eth0 --dst-ip 198.18.2.9 --count "$COUNT" --rate "$RATE" \
	>"$LR_TMP/nobody.out" 2>"$LR_TMP/nobody.err" || RC=$?
MS=$((($(date +%s%N) - T0) / 1000000))
lr_show_file "$LR_TMP/nobody.err"
lr_log "info: send gave up after $MS ms"
lr_check "unanswered: exit code" "$RC" == 2
lr_check "unanswered: milliseconds until send gave up" "$MS" "<" 2500
lr_check "unanswered: one line on stderr" "$(lines "$LR_TMP/nobody.err")" == 1
lr_check "unanswered: nothing on stdout" "$(lines "$LR_TMP/nobody.out")" == 0
lr_check_cmd "unanswered: the line names the address, the interface and the next hop" \
	grep -qF "cannot resolve the MAC address of 198.18.2.9 on eth0 (on-link; no ARP answer within 1 s)" \
	"$LR_TMP/nobody.err"
lr_check_cmd "unanswered: the line says --dst-mac skips resolution" grep -qF "give --dst-mac" "$LR_TMP/nobody.err"
lr_check_cmd "unanswered: no XDP program attached in $C1" lr_xdp_absent "$C1"
lr_check "unanswered: no neighbour entry left behind for 198.18.2.9" "$(neigh_of "$C1" eth0 198.18.2.9)" == none
timeout -k 5 60 "$LAB" down bridge --prefix "$PFX" >/dev/null

# ---------------------------------------------------------------------------------------------
container_to_container overlay
timeout -k 5 60 "$LAB" down overlay --prefix "$PFX" >/dev/null

# ---------------------------------------------------------------------------------------------
lr_log "== IPv6 over a bridge"
lr_netns_add SND snd
lr_netns_add BR br
lr_netns_add RCV rcv
for ns in "$SND" "$RCV"; do
	# lr_netns_add turned IPv6 off; on again before the devices exist, so that they inherit it.
	# No DAD (addresses usable at once), no router solicitations (fewer foreign frames).
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0 \
		net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
		net.ipv6.conf.default.router_solicitations=0
done
# A bridge, not a direct pair: the veth-peer rule would otherwise answer before any resolution.
ip -n "$BR" link add br0 type bridge stp_state 0 forward_delay 0 mcast_snooping 0
ip -n "$BR" link set br0 up
lr_veth "$SND" eth0 "$BR" p1
lr_veth "$RCV" eth0 "$BR" p2
for p in p1 p2; do
	ip -n "$BR" link set "$p" master br0
	ip -n "$BR" link set "$p" up
done
ip -n "$SND" addr add 2001:2::1/64 dev eth0 nodad
ip -n "$RCV" addr add 2001:2::2/64 dev eth0 nodad
ip -n "$SND" link set eth0 up
ip -n "$RCV" link set eth0 up
lr_check "IPv6: $SND has no entry for 2001:2::2 before send" "$(neigh_of "$SND" eth0 2001:2::2)" == none
exchange "IPv6" "$SND" eth0 "$RCV" eth0 2001:2::2 --size 84
resolved "IPv6" "$SND" eth0 2001:2::2 "$(lr_mac "$RCV" eth0)" "neighbour discovery (resolved now)"

lr_finish
