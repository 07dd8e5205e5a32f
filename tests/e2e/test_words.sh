#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What the summaries say, word for word where the words depend on the numbers: a count of one is
# in the singular ("1 frame", "1 flow"), every other in the plural. And no message cut short.
#
#   ns lr-words-snd-PID                     ns lr-words-rcv-PID
#   +-----------------------------+         +-------------------------------+
#   | linerate send               |         | linerate recv --once --pcap   |
#   |   snd0 198.18.0.1/30        |<-veth-->|   (or linerate reflect --once)|
#   +-----------------------------+         |   rcv0 198.18.0.2/30          |
#                                           +-------------------------------+
#
# Checks:
#   - send --count 1 --pcap F, recv --once --pcap G: send says "1 worker", "1 flow", "sent 1 frame
#     in", "1 frame written"; recv says "1 flow", "received 1 frame,", "sent 1 frame (end-of-test",
#     "1 sample written" and "(every data frame;"; no count of one with a plural anywhere
#   - send --count 2000 --flows 2 --pcap-every 10, recv --pcap-every 10: "2 flows", "2000 frames",
#     "one in 10 data frames"
#   - send --rtt --count 1, reflect --once: "reflected 1 data frame and 5 markers on 1 flow (1 with
#     markers)", send's "(1 sample)"
#   - on a second pair whose sending end has a 15-character name (sndfifteenchars <-> rcv1), with
#     nothing on the peer: a default send (--rate max: auto tries live first) and send --rtt print
#     live's hint whole, to its last words "or start linerate recv on the peer))"
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

lr_init
lr_pair_topology

# has FILE REGEX: PASS when a line of FILE matches.
has()
{
	lr_check_cmd "$(basename "$1"): /$2/" grep -Eq -- "$2" "$1"
}

# no_plural_of_one FILE: no "1 <noun>s" (1 frames, 1 flows, one in 1 data frames) in FILE; a ratio
# ("markers of 1/1 flows") is not a count of one.
no_plural_of_one()
{
	local bad

	bad=$(grep -Eo '(^|[^0-9./])1 (data |test |other )?(frames|flows|workers|samples|markers|trials|bytes|runs|queues|CPUs)\b|one in 1 ' \
		"$1" || true)
	lr_check "$(basename "$1"): counts of one in the plural" "${bad:-none}" == none
}

# pair NAME SEND-ARGS... -- RECV-ARGS...: recv --once, then send; their stderr in NAME.{send,recv}.err.
pair()
{
	local name=$1 pid rc=0
	local -a sargs=() rargs=()

	shift
	while (($#)) && [[ $1 != -- ]]; do
		sargs+=("$1")
		shift
	done
	(($#)) && shift
	rargs=("$@")
	rm -f "$LR_TMP/ready"
	lr_spawn "$name.recv" ip netns exec "$RCV" "$LINERATE" recv -i rcv0 --once --idle-timeout 10s \
		--ready-file "$LR_TMP/ready" "${rargs[@]}"
	pid=$LR_LAST_PID
	lr_wait_for_file "$LR_TMP/ready" 15 "$pid" || lr_die "$name: recv never became ready"
	ip netns exec "$SND" timeout -k 5 60 "$LINERATE" send -i snd0 --dst-ip 198.18.0.2 -q "${sargs[@]}" \
		>"$LR_TMP/$name.send.out" 2>"$LR_TMP/$name.send.err" || rc=$?
	lr_check "$name: send exit code" "$rc" == 0
	rc=0
	lr_wait_pid "$pid" 30 || rc=$?
	lr_check "$name: recv exit code" "$rc" == 0
	lr_show_file "$LR_TMP/$name.send.err"
	lr_show_file "$LR_TMP/$name.recv.err"
}

lr_log "== one frame"
pair one --count 1 --rate 1k --pcap "$LR_TMP/one-tx.pcap" -- -q --pcap "$LR_TMP/one-rx.pcap"
S=$LR_TMP/one.send.err
R=$LR_TMP/one.recv.err
has "$S" ', 1 worker, .*, 1 flow, '
has "$S" '^  sent +1 frame in '
has "$S" ': 1 frame written, '
has "$R" ', 1 flow$'
has "$R" '^  received +1 frame, '
has "$R" '^  sent +1 frame \(end-of-test markers of 1/1 flows\)'
has "$R" '^  pcap +1 sample written to .* \(every data frame; snaplen '
no_plural_of_one "$S"
no_plural_of_one "$R"

lr_log "== many frames"
pair many --count 2000 --flows 2 --rate 20k -- -q --pcap "$LR_TMP/many-rx.pcap" --pcap-every 10
S=$LR_TMP/many.send.err
R=$LR_TMP/many.recv.err
has "$S" ', 1 worker, .*, 2 flows, '
has "$S" '^  sent +2000 frames in '
has "$R" ', 2 flows$'
has "$R" '^  received +2000 frames, '
has "$R" '^  pcap +200 samples written to .* \(one in 10 data frames; snaplen '

lr_log "== one round trip"
rm -f "$LR_TMP/ready"
lr_spawn reflect ip netns exec "$RCV" "$LINERATE" reflect -i rcv0 --once --idle-timeout 10s -q \
	--ready-file "$LR_TMP/ready"
PID=$LR_LAST_PID
lr_wait_for_file "$LR_TMP/ready" 15 "$PID" || lr_die "reflect never became ready"
RC=0
ip netns exec "$SND" timeout -k 5 60 "$LINERATE" send -i snd0 --dst-ip 198.18.0.2 --rtt --count 1 --rate 1k -q \
	>"$LR_TMP/rtt.send.out" 2>"$LR_TMP/rtt.send.err" || RC=$?
lr_check "rtt: send exit code" "$RC" == 0
RC=0
lr_wait_pid "$PID" 30 || RC=$?
lr_check "rtt: reflect exit code" "$RC" == 0
lr_show_file "$LR_TMP/rtt.send.err"
lr_show_file "$LR_TMP/reflect.err"
has "$LR_TMP/reflect.err" '^  reflected 1 data frame and 5 markers on 1 flow \(1 with markers\); passed [0-9]+ other frames?$'
has "$LR_TMP/rtt.send.err" '^  rtt +min .* ns \(1 sample\)$'
no_plural_of_one "$LR_TMP/reflect.err"
no_plural_of_one "$LR_TMP/rtt.send.err"

lr_log "== live's hint, whole"
lr_veth "$SND" sndfifteenchars "$RCV" rcv1
lr_addr "$SND" sndfifteenchars 198.18.0.5/30
lr_addr "$RCV" rcv1 198.18.0.6/30
HINT='live not usable \(live: sndfifteenchars cannot take XDP frames until its veth peer runs XDP or GRO \(add '
HINT+='--prepare-peer, or prepare_peer = yes in a run file, to switch GRO on there for the test; or start '
HINT+='linerate recv on the peer\)\)$'
for how in default rtt; do
	args=()
	[[ $how == rtt ]] && args=(--rtt)
	RC=0
	ip netns exec "$SND" timeout -k 5 60 "$LINERATE" send -i sndfifteenchars --dst-ip 198.18.0.6 --count 100 -q \
		"${args[@]}" >"$LR_TMP/hint-$how.out" 2>"$LR_TMP/hint-$how.err" || RC=$?
	lr_show_file "$LR_TMP/hint-$how.err"
	lr_check "hint, $how: send exit code" "$RC" == 0
	has "$LR_TMP/hint-$how.err" "^linerate send: engine afxdp, .*; $HINT"
done
lr_finish
