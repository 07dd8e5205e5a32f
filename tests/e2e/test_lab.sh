#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/lab: each container-network topology is built, reported, carries exact traffic, and goes away.
#
#   P = lrtPID (lab namespaces are P-TOPOLOGY-ROLE; lib.sh does not know them, so the trap runs lab down)
#
#   veth     [P-veth-host] veth0 198.18.1.1 <--veth--> 198.18.1.2 eth0 [P-veth-c1]
#   bridge   [P-bridge-host] br0 198.18.2.1, ports vc1, vc2
#              vc1 <--veth--> eth0 198.18.2.2 [P-bridge-c1]   vc2 <--veth--> eth0 198.18.2.3 [P-bridge-c2]
#   overlay  [P-overlay-c1] eth0 198.18.3.2 -- vc1 [h1 br0] vx0 ==vxlan 42 over ul0 198.19.0.1 <-> .2==
#              vx0 [h2 br0] vc2 -- eth0 198.18.3.3 [P-overlay-c2]            (containers MTU 1450)
#   macvlan  [P-macvlan-host] mvp0 (veth parent) <- macvlan bridge: eth0 198.18.4.2 [c1], eth0 198.18.4.3 [c2]
#
# Checks:
#   - usage: --help exits 0; unknown topology, bad option, bad --queues exit 2 with one line on stderr;
#     a non-root user gets exit 2; status of a lab that is not up exits 1 with one line
#   - for each topology: up exits 0, up again exits 0 (rebuilds); the status table names every
#     endpoint's namespace and address; status --json is valid with up true, the topology, prefix,
#     queues 1, threaded_napi false, the expected endpoints (netns, ifname, ipv4, mac, kind, mtu)
#     and paths (name, label, from, to)
#   - for each path in the JSON: the sender's namespace holds a permanent neighbour entry for the
#     receiver's address with its MAC, and send --count 20000 --rate 20kpps over the path counts
#     exactly (lr_check_exact: tx == rx == sent == 20000, lost 0, ...), with linerate entering the
#     namespaces itself (--netns)
#   - bridge: send on vc1, c1's host-side veth (a bridge port without an address, as the host side of
#     a Docker container's veth is): exact as well, the source address taken from br0
#   - every lab namespace that holds a bridge has bridge-nf-call-{iptables,ip6tables,arptables} 0
#   - down exits 0, removes every P-TOPOLOGY-* namespace (ip netns list, ip -all netns exec ip
#     link), down again exits 0
#   - up veth --queues 2 --threaded-napi: 2 RX and 2 TX queues on both ends, threaded 1 on the
#     receiving end, its napi/eth0-* kthreads pinned to the last CPU, exact traffic still
#   - down with another prefix leaves our lab up
#   - up that fails halfway (a `bridge` command that fails, first on PATH) exits 1 and leaves no
#     namespace behind
#   - at the end: no namespace with our prefix, and the root namespace has the same links and
#     IPv4 addresses as at the start
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COUNT=20000
LAB=$LR_REPO/scripts/lab
PFX=lrt$$
OTHER=lro$$
export LR_USE_NETNS_OPT=1

lr_init
lr_require_cmds ethtool taskset flock setpriv comm

lr_lab_prefix "$PFX"
lr_lab_prefix "$OTHER"

root_links()
{
	ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort
}

root_addrs()
{
	ip -o -4 addr show | awk '{ print $2, $4 }' | sort
}

ROOT_LINKS=$(root_links)
ROOT_ADDRS=$(root_addrs)

lines()
{
	if [[ -s $1 ]]; then wc -l <"$1"; else echo 0; fi
}

our_namespaces()
{
	ip netns list | awk -v p="$1-" 'index($1, p) == 1 { print $1 }'
}

# ---------------------------------------------------------------------------------------------
lr_log "== usage"
lr_lab help --help
lr_check "--help exit code" "$LAB_RC" == 0
lr_check_cmd "--help shows the usage line" grep -q '^Usage: scripts/lab up|down|status TOPOLOGY' "$LR_TMP/help.out"
for bad in "up nosuch" "up veth --bogus" "up veth --queues 0" "status" "frobnicate veth" "status veth --queues 2"; do
	# shellcheck disable=SC2086 # the words are the arguments
	lr_lab bad $bad --prefix "$PFX"
	lr_check "lab $bad: exit code" "$LAB_RC" == 2
	lr_check "lab $bad: one line on stderr" "$(lines "$LR_TMP/bad.err")" == 1
	lr_check "lab $bad: nothing on stdout" "$(lines "$LR_TMP/bad.out")" == 0
	lr_log "lab $bad: $(cat "$LR_TMP/bad.err")"
done
LAB_RC=0
setpriv --reuid=65534 --regid=65534 --clear-groups "$LAB" up veth --prefix "$PFX" \
	>"$LR_TMP/nonroot.out" 2>"$LR_TMP/nonroot.err" || LAB_RC=$?
lr_check "non-root: exit code" "$LAB_RC" == 2
lr_check_cmd "non-root: the line says root is needed" grep -q 'needs root' "$LR_TMP/nonroot.err"
lr_lab notup status veth --prefix "$PFX"
lr_check "status of a lab that is not up: exit code" "$LAB_RC" == 1
lr_check_cmd "status of a lab that is not up: says so" grep -q 'is not up' "$LR_TMP/notup.err"
lr_lab downnone down bridge --prefix "$PFX"
lr_check "down when nothing is up: exit code" "$LAB_RC" == 0

# ---------------------------------------------------------------------------------------------
# check_path DOC PATH: neighbour entry and an exact exchange from the path's "from" to its "to".
check_path()
{
	local doc=$1 path=$2 fns fif tns tif tip tmac what

	fns=$(jq -r --arg p "$path" '(.paths[] | select(.name == $p).from) as $f | .endpoints[] | select(.name == $f).netns' "$doc")
	fif=$(jq -r --arg p "$path" '(.paths[] | select(.name == $p).from) as $f | .endpoints[] | select(.name == $f).ifname' "$doc")
	read -r tns tif tip tmac < <(jq -r --arg p "$path" '(.paths[] | select(.name == $p).to) as $t |
		.endpoints[] | select(.name == $t) | "\(.netns) \(.ifname) \(.ipv4) \(.mac)"' "$doc")
	what="$(jq -r .topology "$doc") $path ($fns $fif -> $tns $tif $tip)"
	lr_log "== $what"
	lr_check "$what: permanent neighbour entry for the receiver in the sender's namespace" \
		"$(ip -n "$fns" -j neigh show to "$tip" dev "$fif" | jq -r '.[0] | "\(.state[0]) \(.lladdr)"')" \
		== "PERMANENT $tmac"
	lr_exchange "$fns" "$fif" "$tns" "$tif" "$tip" "$COUNT" --rate 20kpps
	lr_check_exact "$COUNT" 1
}

# check_topology TOPO "NAME:IFNAME:IPV4:KIND:MTU ..." "PATH:FROM:TO ..." LABEL...
check_topology()
{
	local topo=$1 eps=$2 paths=$3 doc=$LR_TMP/$1.json e n i a k m p ns names t0
	local -a labels

	shift 3
	labels=("$@")
	lr_log "== $topo"
	t0=$(date +%s%N)
	lr_lab up up "$topo" --prefix "$PFX"
	lr_check "$topo: up exit code" "$LAB_RC" == 0
	[[ $LAB_RC == 0 ]] || lr_show_file "$LR_TMP/up.err"
	lr_log "$topo: up took $((($(date +%s%N) - t0) / 1000000)) ms"
	lr_lab up2 up "$topo" --prefix "$PFX"
	lr_check "$topo: up again exit code" "$LAB_RC" == 0
	lr_check_cmd "$topo: up again says it rebuilt the lab" grep -q 'already up' "$LR_TMP/up2.out"

	lr_lab table status "$topo" --prefix "$PFX"
	lr_check "$topo: status exit code" "$LAB_RC" == 0
	lr_lab json status "$topo" --prefix "$PFX" --json
	lr_check "$topo: status --json exit code" "$LAB_RC" == 0
	cp "$LR_TMP/json.out" "$doc"
	lr_jvalid "$doc"
	lr_check "$topo: .up" "$(jq -r .up "$doc")" == true
	lr_check "$topo: .topology" "$(jq -r .topology "$doc")" == "$topo"
	lr_check "$topo: .prefix" "$(jq -r .prefix "$doc")" == "$PFX"
	lr_check "$topo: .queues" "$(jq -r .queues "$doc")" == 1
	lr_check "$topo: .threaded_napi" "$(jq -r .threaded_napi "$doc")" == false
	names=
	for e in $eps; do
		IFS=: read -r n i a k m <<<"$e"
		ns=$PFX-$topo-$n
		names+="${names:+ }$n"
		lr_check "$topo: endpoint $n" \
			"$(jq -r --arg n "$n" '.endpoints[] | select(.name == $n) | [.netns, .ifname, .ipv4, .kind, .mtu] | join(" ")' "$doc")" \
			== "$ns $i $a $k $m"
		lr_check "$topo: endpoint $n mac is $i's" \
			"$(jq -r --arg n "$n" '.endpoints[] | select(.name == $n).mac' "$doc")" == "$(lr_mac "$ns" "$i")"
		lr_check_cmd "$topo: status table names $ns and $a" \
			grep -Eq "^$n +$ns +$i +$k +$a " "$LR_TMP/table.out"
	done
	lr_check "$topo: endpoint names" "$(jq -r '[.endpoints[].name] | join(" ")' "$doc")" == "$names"
	lr_check "$topo: paths" "$(jq -r '[.paths[] | "\(.name):\(.from):\(.to)"] | join(" ")' "$doc")" == "$paths"
	lr_check "$topo: path labels" "$(jq -r '[.paths[].label] | join(",")' "$doc")" == "$(IFS=,; echo "${labels[*]}")"
	for p in $paths; do
		p=${p%%:*}
		check_path "$doc" "$p"
	done
	# Bare bridges, whatever br_netfilter's defaults: every namespace holding a bridge skips netfilter
	if [[ -e /proc/sys/net/bridge/bridge-nf-call-iptables ]]; then
		for n in $(ip netns list | awk -v p="$PFX-$topo-" 'index($1, p) == 1 { print $1 }'); do
			[[ -n $(ip -n "$n" -o link show type bridge) ]] || continue
			for k in iptables ip6tables arptables; do
				lr_check "$topo: $n bridge-nf-call-$k" \
					"$(ip netns exec "$n" sysctl -n "net.bridge.bridge-nf-call-$k")" == 0
			done
		done
	fi
	if [[ $topo == bridge ]]; then
		# As against a real Docker container: send on the host side of c1's veth, a bridge port
		# with no address of its own; the source address comes from its bridge, br0.
		lr_log "== bridge: send on vc1 (c1's host-side veth, a port of br0, no address)"
		lr_exchange "$PFX-bridge-host" vc1 "$PFX-bridge-c1" eth0 198.18.2.2 "$COUNT" --rate 20kpps
		lr_check_exact "$COUNT" 1
	fi

	lr_lab down down "$topo" --prefix "$PFX"
	lr_check "$topo: down exit code" "$LAB_RC" == 0
	lr_check "$topo: namespaces left (ip netns list)" "$(our_namespaces "$PFX-$topo" | wc -l)" == 0
	lr_check "$topo: namespaces left (ip -all netns exec ip link)" \
		"$(ip -all netns exec ip -o link show 2>/dev/null | grep -c "^netns: $PFX-$topo-" || true)" == 0
	lr_lab down2 down "$topo" --prefix "$PFX"
	lr_check "$topo: down again exit code" "$LAB_RC" == 0
	lr_check_cmd "$topo: down again says there was nothing" grep -q 'nothing to remove' "$LR_TMP/down2.out"
}

check_topology veth "host:veth0:198.18.1.1:veth:1500 c1:eth0:198.18.1.2:veth:1500" \
	"host-to-container:host:c1" "host→container (veth)"
check_topology bridge "host:br0:198.18.2.1:bridge:1500 c1:eth0:198.18.2.2:veth:1500 c2:eth0:198.18.2.3:veth:1500" \
	"host-to-container:host:c1 container-to-container:c1:c2" "host→container (bridge)" "container→container (bridge)"
check_topology overlay \
	"h1:ul0:198.19.0.1:veth:1500 h2:ul0:198.19.0.2:veth:1500 c1:eth0:198.18.3.2:veth:1450 c2:eth0:198.18.3.3:veth:1450" \
	"container-to-container:c1:c2" "container→container (overlay)"
check_topology macvlan "c1:eth0:198.18.4.2:macvlan:1500 c2:eth0:198.18.4.3:macvlan:1500" \
	"container-to-container:c1:c2" "container→container (macvlan)"

# ---------------------------------------------------------------------------------------------
lr_log "== veth --queues 2 --threaded-napi"
lr_lab upq up veth --prefix "$PFX" --queues 2 --threaded-napi
lr_check "--queues 2 --threaded-napi: up exit code" "$LAB_RC" == 0
lr_show_file "$LR_TMP/upq.out"
HOST=$PFX-veth-host
C1=$PFX-veth-c1
for e in "$HOST veth0" "$C1 eth0"; do
	read -r ns i <<<"$e"
	lr_check "$ns $i: RX queues" "$(ip netns exec "$ns" ls "/sys/class/net/$i/queues" | grep -c '^rx-')" == 2
	lr_check "$ns $i: TX queues" "$(ip netns exec "$ns" ls "/sys/class/net/$i/queues" | grep -c '^tx-')" == 2
done
lr_lab jsonq status veth --prefix "$PFX" --json
lr_check "status --json .queues" "$(jq -r .queues "$LR_TMP/jsonq.out")" == 2
lr_check "status --json endpoint queues" "$(jq -r '[.endpoints[].queues] | join(" ")' "$LR_TMP/jsonq.out")" == "2 2"
lr_check "status --json .threaded_napi" "$(jq -r .threaded_napi "$LR_TMP/jsonq.out")" == true
lr_check "threaded NAPI on the receiving end ($C1 eth0)" "$(ip netns exec "$C1" cat /sys/class/net/eth0/threaded)" == 1
LAST_CPU=$(awk -F'[,-]' '{ print $NF }' /sys/devices/system/cpu/online)
KTHREADS=$(grep -o '(PID [0-9]*)' "$LR_TMP/upq.out" | tr -dc '0-9\n')
lr_check "napi kthreads reported (one per RX queue)" "$(wc -w <<<"$KTHREADS")" == 2
for pid in $KTHREADS; do
	lr_check "kthread $pid is a napi/eth0-* thread" "$(ps -o comm= -p "$pid" | grep -c '^napi/eth0-')" == 1
	lr_check "kthread $pid pinned to the last CPU" "$(taskset -pc "$pid" | awk '{ print $NF }')" == "$LAST_CPU"
done
check_path "$LR_TMP/jsonq.out" host-to-container

lr_log "== down with another prefix"
lr_lab other down veth --prefix "$OTHER"
lr_check "down veth --prefix $OTHER: exit code" "$LAB_RC" == 0
lr_lab other down all --prefix "$OTHER"
lr_check "down all --prefix $OTHER: exit code" "$LAB_RC" == 0
lr_lab still status veth --prefix "$PFX"
lr_check "our veth lab is still up" "$LAB_RC" == 0
lr_check "our veth namespaces are still there" "$(our_namespaces "$PFX-veth" | wc -l)" == 2
lr_lab down down veth --prefix "$PFX"
lr_check "down veth: exit code" "$LAB_RC" == 0

lr_log "== up that fails halfway"
mkdir -p "$LR_TMP/shim"
printf '#!/bin/sh\necho "bridge: refused for the test" >&2\nexit 1\n' >"$LR_TMP/shim/bridge"
chmod +x "$LR_TMP/shim/bridge"
LAB_RC=0
PATH=$LR_TMP/shim:$PATH timeout -k 5 60 "$LAB" up bridge --prefix "$PFX" >"$LR_TMP/fail.out" 2>"$LR_TMP/fail.err" ||
	LAB_RC=$?
lr_show_file "$LR_TMP/fail.err"
lr_check "failed up: exit code" "$LAB_RC" == 1
lr_check "failed up: namespaces left" "$(our_namespaces "$PFX" | wc -l)" == 0

lr_log "== nothing left"
lr_check "namespaces with prefix $PFX" "$(our_namespaces "$PFX" | wc -l)" == 0
# e2e tests run one at a time (RUN_SERIAL): any new link here, a live sender's tap included, is a leak.
NEW_LINKS=$(comm -13 <(printf '%s\n' "$ROOT_LINKS") <(root_links) | tr '\n' ' ' || true)
lr_check "new links in the root namespace" "${NEW_LINKS:-none}" == none
NEW_ADDRS=$(comm -13 <(printf '%s\n' "$ROOT_ADDRS") <(root_addrs) | tr '\n' ' ' || true)
lr_check "new IPv4 addresses in the root namespace" "${NEW_ADDRS:-none}" == none
lr_finish
