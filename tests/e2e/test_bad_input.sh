#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Usage, config and environment errors: exit 2, one line on stderr naming the culprit, nothing attached.
#
#   ns lr-bad_input-x-PID
#   +-------------------------------------------------------------+
#   |  x0 198.18.0.1/30 <--veth--> x1 198.18.0.2/30   (up, 1 queue) |
#   |  dn0               <--veth--> dn1                (left down)   |
#   +-------------------------------------------------------------+
#
# Checks, for each case: exit code exactly 2, exactly one line on stderr, that line matches
# the culprit (case-insensitive regex below), and no XDP program on any interface in the ns:
#   send -i nosuch0                      /nosuch0/
#   recv -i nosuch0                      /nosuch0/
#   send -i dn0 (link down)              /down/
#   recv -i dn0 (link down)              /down/
#   send --size 1600 (MTU 1500)          /1600|size|mtu/
#   send --rate "5 parsecs"              /parsecs|rate/
#   send --queues 3 (1-queue veth)       /queue/
#   recv --dst-port 0                    /port/
#   send without --dst-ip                /dst-ip/
#   recv / send as uid 65534 without capabilities (setpriv; skipped if setpriv is missing)
#                                        /permission|privilege|root|capabilit|CAP_|not permitted/
# Every command is bounded (--count 100 / --duration 2, and timeout 20 s) in case it does run.
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

lr_init
lr_netns_add NS x
lr_veth "$NS" x0 "$NS" x1
lr_addr "$NS" x0 198.18.0.1/30
lr_addr "$NS" x1 198.18.0.2/30
lr_veth "$NS" dn0 "$NS" dn1
lr_log "x0 mtu $(ip -n "$NS" -j link show dev x0 | jq -r '.[0].mtu'), rx queues $(ip netns exec "$NS" ls /sys/class/net/x0/queues | grep -c rx-)"

# expect_usage NAME REGEX CMD...: CMD runs inside the namespace.
expect_usage()
{
	local name=$1 re=$2 rc=0 lines err

	shift 2
	lr_log "case '$name': $*"
	timeout -k 5 20 ip netns exec "$NS" "$@" >"$LR_TMP/$name.out" 2>"$LR_TMP/$name.err" </dev/null || rc=$?
	err=$(head -c 500 "$LR_TMP/$name.err")
	lines=$(awk 'END { print NR }' "$LR_TMP/$name.err")
	lr_check "$name: exit code" "$rc" == 2
	lr_check "$name: stderr lines" "$lines" == 1
	if grep -Eiq -- "$re" "$LR_TMP/$name.err"; then
		lr_pass "$name: stderr names the culprit /$re/: $err"
	else
		lr_fail "$name: stderr names the culprit /$re/" "'$err'"
	fi
	lr_check_cmd "$name: no XDP program attached in the namespace" eval '! lr_xdp_attached "$NS"'
}

L=$LINERATE
SEND=(send --count 100 --duration 2)
expect_usage send-unknown-if 'nosuch0' "$L" "${SEND[@]}" -i nosuch0 --dst-ip 198.18.0.2
expect_usage recv-unknown-if 'nosuch0' "$L" recv -i nosuch0 --duration 2
expect_usage send-if-down 'down' "$L" "${SEND[@]}" -i dn0 --dst-ip 198.18.0.2
expect_usage recv-if-down 'down' "$L" recv -i dn0 --duration 2
expect_usage send-size-over-mtu '1600|size|mtu' "$L" "${SEND[@]}" -i x0 --dst-ip 198.18.0.2 --size 1600
expect_usage send-bad-rate-unit 'parsecs|rate' "$L" "${SEND[@]}" -i x0 --dst-ip 198.18.0.2 --rate "5 parsecs"
expect_usage send-queue-beyond-device 'queue' "$L" "${SEND[@]}" -i x0 --dst-ip 198.18.0.2 --queues 3
expect_usage recv-dst-port-zero 'port' "$L" recv -i x1 --duration 2 --dst-port 0
expect_usage send-missing-dst-ip 'dst-ip' "$L" "${SEND[@]}" -i x0

if command -v setpriv >/dev/null 2>&1; then
	NOPRIV=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
	PRIV_RE='permission|privilege|root|capabilit|CAP_|not permitted'
	expect_usage recv-unprivileged "$PRIV_RE" "${NOPRIV[@]}" "$L" recv -i x1 --duration 2
	expect_usage send-unprivileged "$PRIV_RE" "${NOPRIV[@]}" "$L" "${SEND[@]}" -i x0 --dst-ip 198.18.0.2
else
	lr_log "setpriv missing: unprivileged cases skipped"
fi
lr_finish
