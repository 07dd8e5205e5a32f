#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `linerate probe` on a veth: capabilities and interface facts, table and JSON, bad input.
#
#   ns lr-probe-x-PID
#   +------------------------------------------------------------------+
#   |  p0 198.18.0.1/30 <--veth--> p1 198.18.0.2/30                      |
#   |  (both ends: numtxqueues 2 numrxqueues 2, mtu 1400, up)             |
#   +------------------------------------------------------------------+
#
# Checks:
#   - probe -i p0 --json - (under ip netns exec) exits 0 and prints one JSON object, nothing on stderr
#   - command/interface keys; link: driver veth, kind veth, virtual, oper up, mtu 1400,
#     tx/rx queues 2, channels max 2, veth_peer_ifindex == p1's ifindex, mac == p0's MAC
#   - capabilities: afxdp_socket yes, afxdp_copy yes, afxdp_zerocopy no (EOPNOTSUPP),
#     afxdp_need_wakeup yes, xdp_native yes, xdp_generic yes, af_packet yes, every state valid
#   - xdp_features.flags contains "basic"
#   - probe --netns NS -i p0 --json - finds the same ifindex
#   - the human table (no --json) has the "AF_XDP copy mode ... yes" row; -v lists rx_queue_1_* counters
#   - no XDP program is attached to p0 or p1 afterwards
#   - probe -i nosuch0: exit 2, one line on stderr "linerate probe: interface 'nosuch0' not found",
#     nothing on stdout
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

lr_init
lr_netns_add NS x
lr_veth "$NS" p0 "$NS" p1 numtxqueues 2 numrxqueues 2 mtu 1400
lr_addr "$NS" p0 198.18.0.1/30
lr_addr "$NS" p1 198.18.0.2/30

J=$LR_TMP/probe.json
P1_RX0=$(lr_rx_packets "$NS" p1)
RC=0
lr_log "run: ip netns exec $NS linerate probe -i p0 --json -"
timeout -k 5 30 ip netns exec "$NS" "$LINERATE" probe -i p0 --json - >"$J" 2>"$LR_TMP/probe.err" || RC=$?
lr_show_file "$J"
lr_show_file "$LR_TMP/probe.err"

# Gates: only a kernel without the feature may skip.
[[ $(lr_jget "$J" .capabilities.afxdp_socket.error) == EAFNOSUPPORT ]] && lr_kernel_lacks "AF_XDP sockets"
[[ $(jq -r '.xdp_features' "$J" 2>/dev/null) == null ]] &&
	lr_kernel_lacks "the netdev netlink family that reports XDP features (Linux >= 6.3)"

lr_check "probe exit code" "$RC" == 0
lr_jvalid "$J"
lr_check "stderr lines" "$(awk 'END { print NR }' "$LR_TMP/probe.err")" == 0
lr_check "command" "$(lr_jget "$J" .command)" == probe
lr_check "interface" "$(lr_jget "$J" .interface)" == p0

P0=$(ip -n "$NS" -j link show dev p0)
P1_IFINDEX=$(ip -n "$NS" -j link show dev p1 | jq -r '.[0].ifindex')
lr_check "link.ifindex" "$(lr_jget "$J" .link.ifindex)" == "$(jq -r '.[0].ifindex' <<<"$P0")"
lr_check "link.driver" "$(lr_jget "$J" .link.driver)" == veth
lr_check "link.kind" "$(lr_jget "$J" .link.kind)" == veth
lr_check "link.physical" "$(jq -r '.link.physical' "$J")" == false
lr_check "link.admin_up" "$(jq -r '.link.admin_up' "$J")" == true
lr_check "link.oper_state" "$(lr_jget "$J" .link.oper_state)" == up
lr_check "link.mtu" "$(lr_jget "$J" .link.mtu)" == 1400
lr_check "link.mac" "$(lr_jget "$J" .link.mac)" == "$(jq -r '.[0].address' <<<"$P0")"
lr_check "link.tx_queues" "$(lr_jget "$J" .link.tx_queues)" == 2
lr_check "link.rx_queues" "$(lr_jget "$J" .link.rx_queues)" == 2
lr_check "link.channels.max_tx" "$(lr_jget "$J" .link.channels.max_tx)" == 2
lr_check "link.channels.max_rx" "$(lr_jget "$J" .link.channels.max_rx)" == 2
lr_check "link.veth_peer_ifindex (p1)" "$(lr_jget "$J" .link.veth_peer_ifindex)" == "$P1_IFINDEX"

for cap in afxdp_socket afxdp_copy afxdp_need_wakeup xdp_native xdp_generic af_packet; do
	lr_check "capabilities.$cap.state ($(lr_jget "$J" ".capabilities.$cap.detail"))" \
		"$(lr_jget "$J" ".capabilities.$cap.state")" == yes
done
lr_check "capabilities.afxdp_zerocopy.state (veth has no zero-copy)" \
	"$(lr_jget "$J" .capabilities.afxdp_zerocopy.state)" == no
lr_check "capabilities.afxdp_zerocopy.error" "$(lr_jget "$J" .capabilities.afxdp_zerocopy.error)" == EOPNOTSUPP
lr_check "capabilities.xsk_zerocopy_advertised.state" \
	"$(lr_jget "$J" .capabilities.xsk_zerocopy_advertised.state)" == no
lr_check "every capability state is yes/no/likely/unknown" \
	"$(jq -r '[.capabilities[].state | select(. != "yes" and . != "no" and . != "likely" and . != "unknown")] | length' "$J")" == 0
# live frames: tried for real, on a frame the program drops; p1 runs no XDP, so p0 takes no frames yet
[[ $(lr_jget "$J" .capabilities.live_frames.error) == EINVAL ]] && lr_kernel_lacks "XDP live frames (Linux >= 5.18)"
lr_check "capabilities.live_frames.state ($(lr_jget "$J" .capabilities.live_frames.detail))" \
	"$(lr_jget "$J" .capabilities.live_frames.state)" == yes
lr_check_cmd "capabilities.live_frames.detail says p0 does not take the frames yet" \
	grep -q 'does not take the frames yet' <<<"$(lr_jget "$J" .capabilities.live_frames.detail)"
lr_check "the probe sent nothing: p1 rx_packets unchanged" "$(lr_rx_packets "$NS" p1)" == "$P1_RX0"
lr_check "capability count" "$(jq -r '.capabilities | length' "$J")" == 10
lr_check "xdp_features.flags has basic" "$(jq -r '.xdp_features.flags | index("basic") != null' "$J")" == true
lr_log "info: xdp_ndo_xmit: $(lr_jget "$J" .capabilities.xdp_ndo_xmit.state) ($(lr_jget "$J" .capabilities.xdp_ndo_xmit.detail))"

RC=0
timeout -k 5 30 "$LINERATE" probe --netns "$NS" -i p0 --json - >"$LR_TMP/netns.json" 2>"$LR_TMP/netns.err" || RC=$?
lr_check "probe --netns exit code" "$RC" == 0
lr_check "probe --netns finds the same ifindex" "$(lr_jget "$LR_TMP/netns.json" .link.ifindex)" == \
	"$(lr_jget "$J" .link.ifindex)"

RC=0
timeout -k 5 30 ip netns exec "$NS" "$LINERATE" probe -i p0 -v >"$LR_TMP/table.out" 2>"$LR_TMP/table.err" || RC=$?
lr_show_file "$LR_TMP/table.out"
lr_check "probe -v (table) exit code" "$RC" == 0
lr_check_cmd "table row: AF_XDP copy mode yes" grep -Eq '^AF_XDP copy mode +yes ' "$LR_TMP/table.out"
lr_check_cmd "table row: AF_XDP zero-copy no" grep -Eq '^AF_XDP zero-copy +no ' "$LR_TMP/table.out"
lr_check_cmd "-v lists queue 1 counters" grep -Eq '^ +rx_queue_1_[a-z_]+ +[0-9]+$' "$LR_TMP/table.out"

lr_check_cmd "no XDP program attached in the namespace after probing" lr_xdp_absent "$NS"

RC=0
timeout -k 5 30 ip netns exec "$NS" "$LINERATE" probe -i nosuch0 >"$LR_TMP/bad.out" 2>"$LR_TMP/bad.err" </dev/null ||
	RC=$?
lr_check "unknown interface: exit code" "$RC" == 2
lr_check "unknown interface: stderr lines" "$(awk 'END { print NR }' "$LR_TMP/bad.err")" == 1
lr_check "unknown interface: message" "$(cat "$LR_TMP/bad.err")" == "linerate probe: interface 'nosuch0' not found"
lr_check "unknown interface: stdout bytes" "$(wc -c <"$LR_TMP/bad.out")" == 0
lr_finish
