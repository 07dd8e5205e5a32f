#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One stamping clock in a time namespace too: latency and pcap stamps stay right when the sender or
# the receiver runs with its CLOCK_MONOTONIC shifted (unshare --time --monotonic), which
# bpf_ktime_get_ns() never is.
#
#   ns lr-clock-snd-PID                       ns lr-clock-rcv-PID
#   +------------------------------+          +------------------------------+
#   | [unshare --time --monotonic] |          | [unshare --time --monotonic] |
#   | linerate send                |          | linerate recv                |
#   |   snd0 198.18.0.1/30         |<-veth--->|   rcv0 198.18.0.2/30         |
#   +------------------------------+          +------------------------------+
#
# Checks, each case a loss-free exchange of 20000 frames at 50 kpps (lr_check_exact):
#   1. send --engine afxdp in a time namespace 10^6 s ahead, recv (XDP) outside: latency p50 below
#      1 ms and no frame "from the future" (unfixed, every stamp would be 10^6 s ahead); send
#      --pcap's records are stamped within the send's wall-clock span
#   2. recv --engine packet in a time namespace half the uptime behind, send outside: the same
#      (its kernel receive stamps are moved onto the stamping clock, not CLOCK_MONOTONIC)
#   3. recv (XDP) --pcap in a time namespace 10^6 s ahead: its records within the wall-clock span
#   4. send --engine live --pcap in a time namespace 10^6 s ahead: records within the span
#   - each recv document: schema 8, latency_ns.clock "same_host", offset_ns, error_bound_ns and
#     drift_ppb 0, valid true
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COUNT=20000
AHEAD=1000000	# s: 11.6 days

lr_init
lr_require_cmds unshare tcpdump
unshare --time --monotonic 1 true 2>/dev/null || lr_kernel_lacks "time namespaces (Linux 5.6)"
UPTIME=$(cut -d. -f1 /proc/uptime)
BEHIND=-$((UPTIME / 2))	# a namespace's CLOCK_MONOTONIC cannot go below 0
lr_pair_topology

# linerate, with one subcommand ($TIMENS_CMD) started in a time namespace $TIMENS_OFFSET s off
REAL=$LINERATE
LINERATE=$LR_TMP/linerate-timens
cat >"$LINERATE" <<EOF
#!/usr/bin/env bash
if [[ \$1 == "\$TIMENS_CMD" ]]; then
	exec unshare --time --monotonic "\$TIMENS_OFFSET" "$REAL" "\$@"
fi
exec "$REAL" "\$@"
EOF
chmod +x "$LINERATE"
export TIMENS_CMD TIMENS_OFFSET

# first_ts FILE: seconds (epoch) of the first record.
first_ts()
{
	tcpdump -tt -nn -c 1 -r "$1" 2>/dev/null | awk '{ print int($1) }'
}

# in_span WHAT FILE T0 T1: the first record of FILE is stamped between T0 and T1 (epoch s).
in_span()
{
	local ts

	ts=$(first_ts "$2")
	lr_check "$1: first record's time (epoch s) >= the start" "$ts" ">=" "$3"
	lr_check "$1: first record's time (epoch s) <= the end" "$ts" "<=" "$4"
}

# latency_ok WHAT [EVERY]: recv.json's latency is measured, under 1 ms, from one clock, on one frame
# in EVERY (default 2: --latency-every's default at 50 kpps, which send.json must report) of the
# one flow: those whose sequence is a multiple of it.
latency_ok()
{
	local r=$LR_TMP/recv.json every=${2:-2}

	lr_check "$1: tx.latency_every" "$(lr_jget "$LR_TMP/send.json" .tx.latency_every)" == "$every"
	lr_check "$1: latency_ns.count" "$(lr_jget "$r" .latency_ns.count)" == $(((COUNT + every - 1) / every))
	lr_check "$1: latency_ns.future" "$(lr_jget "$r" .latency_ns.future)" == 0
	lr_check "$1: latency_ns.p50 < 1 ms" "$(lr_jget "$r" .latency_ns.p50)" "<" 1000000
	lr_check "$1: schema" "$(lr_jget "$r" .schema)" == 8
	lr_check "$1: latency_ns clock keys of a local receiver" \
		"$(jq -c '.latency_ns | [.clock, .offset_ns, .error_bound_ns, .drift_ppb, .valid]' "$r" 2>&1)" \
		== '["same_host",0,0,0,true]'
}

# exchange WHAT CMD OFFSET [send args...]: lr_exchange with CMD in a time namespace OFFSET s off.
exchange()
{
	local what=$1

	TIMENS_CMD=$2 TIMENS_OFFSET=$3
	shift 3
	lr_log "== $what"
	T0=$(date +%s)
	lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 "$COUNT" --rate 50kpps "$@"
	T1=$(date +%s)
	lr_check_exact "$COUNT" 1
	latency_ok "$what" "${EVERY:-}"
}

export LR_SEND_ENGINE=afxdp
exchange "afxdp sender ${AHEAD} s ahead" send "$AHEAD" --pcap "$LR_TMP/send.pcap"
in_span "send --pcap ${AHEAD} s ahead" "$LR_TMP/send.pcap" "$T0" "$T1"

LR_RECV_ENGINE=packet EVERY=1 exchange "packet receiver ${BEHIND} s off" recv "$BEHIND" --latency-every 1

LR_RECV_ARGS="--pcap $LR_TMP/recv.pcap" exchange "XDP receiver ${AHEAD} s ahead, --pcap" recv "$AHEAD"
in_span "recv --pcap ${AHEAD} s ahead" "$LR_TMP/recv.pcap" "$T0" "$T1"

LR_SEND_ENGINE=live exchange "live sender ${AHEAD} s ahead, --pcap" send "$AHEAD" --pcap "$LR_TMP/live.pcap"
in_span "live send --pcap ${AHEAD} s ahead" "$LR_TMP/live.pcap" "$T0" "$T1"
lr_finish
