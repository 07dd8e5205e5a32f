#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sender-side capture and replay: send --pcap files tcpdump reads, replay arrives byte for byte.
#
#   ns lr-pcap_send-snd-PID              ns lr-pcap_send-rcv-PID
#   +-------------------------+          +------------------------------+
#   | linerate send --pcap    |          | linerate recv (XDP) [--pcap] |
#   |  | --replay FILE        |          |                              |
#   |   snd0 198.18.0.1/30    |<-veth--->|   rcv0 198.18.0.2/30         |
#   +-------------------------+          +------------------------------+
#
# Checks:
#   - send --count 5000 --pcap F (default: the first 1000 frames): tcpdump -nn -r reads F, shows
#     exactly 1000 UDP frames 198.18.0.1.5500x > 198.18.0.2.7447 of 18-byte payload, shown as plain
#     'UDP, length 18' (the default ports are ones no tcpdump decoder claims); --pcap-every 10
#     gives 500; --pcap-max-bytes keeps the file under the cap and valid
#   - SIGINT in the middle of a send with --pcap: exit 0, the file is there under its name, no
#     temporary file beside it, tcpdump reads every record the summary reported
#   - send --replay F (no --stamp) to recv --pcap: the receiver counts every replayed frame, and
#     its capture holds the same bytes as F, frame for frame; --replay --stamp --loops 2 gives an
#     exact count with the end-of-test markers settling loss at 0
#   - bad input, exit 2 and one line each, no file written: --pcap in a missing directory,
#     --replay of a missing, truncated, non-pcap and non-Ethernet (DLT_RAW) file
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

lr_init
lr_require_cmds tcpdump od
lr_pair_topology
S=(ip netns exec "$SND" "$LINERATE" send -i snd0 --dst-ip 198.18.0.2)

udp_lines()
{
	tcpdump -nn -r "$1" 2>/dev/null | grep -cE 'IP 198\.18\.0\.1\.5500[0-9] > 198\.18\.0\.2\.7447: UDP, length 18$' || true
}

lr_log "== --pcap, first 1000 frames"
"${S[@]}" --count 5000 --rate 50k --flows 2 -q --pcap "$LR_TMP/a.pcap" 2>"$LR_TMP/a.err"
lr_check_cmd "tcpdump reads it" tcpdump -nn -r "$LR_TMP/a.pcap" -c 1
lr_check "UDP test frames in the file" "$(udp_lines "$LR_TMP/a.pcap")" == 1000
lr_check "every record is one of them" "$(tcpdump -nn -r "$LR_TMP/a.pcap" 2>/dev/null | wc -l)" == 1000
lr_check_cmd "the summary says 1000 written" grep -q "1000 frames written" "$LR_TMP/a.err"

lr_log "== --pcap-every 10"
"${S[@]}" --count 5000 --rate 50k -q --pcap "$LR_TMP/b.pcap" --pcap-every 10 2>/dev/null
lr_check "one in ten" "$(udp_lines "$LR_TMP/b.pcap")" == 500

lr_log "== --pcap-max-bytes 16k"
"${S[@]}" --count 5000 --rate 50k -q --pcap "$LR_TMP/c.pcap" --pcap-every 1 --pcap-max-bytes 16k 2>/dev/null
SIZE=$(stat -c %s "$LR_TMP/c.pcap")
lr_check "file size under the cap" "$SIZE" "<=" 16000
lr_check "records fill the cap: 24 + n * (16 + 60) bytes" "$SIZE" == $((24 + $(udp_lines "$LR_TMP/c.pcap") * 76))
lr_check_cmd "tcpdump reads the capped file" tcpdump -nn -r "$LR_TMP/c.pcap" -c 1

lr_log "== SIGINT in the middle"
lr_spawn sendint ip netns exec "$SND" "$LINERATE" send -i snd0 --dst-ip 198.18.0.2 --duration 20 --rate 10k \
	--pcap "$LR_TMP/d.pcap" --pcap-every 1
PID=$LR_LAST_PID
for _ in $(seq 100); do grep -q "engine" "$LR_TMP/sendint.err" 2>/dev/null && break; sleep 0.05; done
sleep 1
kill -INT "$PID"
RC=0
lr_wait_pid "$PID" 15 || RC=$?
lr_check "send exit code after SIGINT" "$RC" == 0
lr_check_cmd "the file is there" test -s "$LR_TMP/d.pcap"
lr_check "no temporary file left" "$(find "$LR_TMP" -name 'd.pcap.*' | wc -l)" == 0
WRITTEN=$(sed -n 's/.*: \([0-9]*\) frames written.*/\1/p' "$LR_TMP/sendint.err")
lr_check "records in the file == frames written in the summary" "$(udp_lines "$LR_TMP/d.pcap")" == "${WRITTEN:-none}"
lr_check "about a second of frames at 10k (5000..15000)" "${WRITTEN:-0}" ">=" 5000

lr_log "== replay, byte for byte"
rm -f "$LR_TMP/ready"
lr_spawn recv ip netns exec "$RCV" "$LINERATE" recv -i rcv0 --duration 20 --json "$LR_TMP/r.json" \
	--ready-file "$LR_TMP/ready" --pcap "$LR_TMP/rx.pcap" --snaplen 1500 -q
RPID=$LR_LAST_PID
lr_wait_for_file "$LR_TMP/ready" 15 "$RPID" || lr_die "recv never became ready"
"${S[@]}" --replay "$LR_TMP/a.pcap" --rate 20k -q 2>"$LR_TMP/replay.err" || lr_show_file "$LR_TMP/replay.err"
sleep 0.5
kill -INT "$RPID"
lr_wait_pid "$RPID" 15 || true
lr_check "recv counted every replayed frame" "$(lr_jget "$LR_TMP/r.json" .rx.packets)" == 1000
tcpdump -nn -x -r "$LR_TMP/a.pcap" 2>/dev/null | grep -E '^\s+0x' >"$LR_TMP/a.hex"
tcpdump -nn -x -r "$LR_TMP/rx.pcap" 2>/dev/null | grep -E '^\s+0x' >"$LR_TMP/rx.hex"
lr_check "hex lines captured at the receiver" "$(wc -l <"$LR_TMP/rx.hex")" == "$(wc -l <"$LR_TMP/a.hex")"
lr_check_cmd "the receiver's capture holds the replayed bytes, frame for frame" cmp -s "$LR_TMP/a.hex" "$LR_TMP/rx.hex"

lr_log "== replay --stamp --loops 2"
lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 2000 --replay "$LR_TMP/a.pcap" --stamp --loops 2 --rate 20k
lr_check "send exit code" "$SEND_RC" == 0
lr_check "rx.packets" "$(lr_jget "$LR_TMP/recv.json" .rx.packets)" == 2000
lr_check "rx.sent (markers)" "$(lr_jget "$LR_TMP/recv.json" .rx.sent)" == 2000
lr_check "rx.lost" "$(lr_jget "$LR_TMP/recv.json" .rx.lost)" == 0

lr_log "== bad input"
head -c 130 "$LR_TMP/a.pcap" >"$LR_TMP/trunc.pcap"
echo "not a capture at all" >"$LR_TMP/junk.pcap"
# a pcap global header with link type 101 (raw IP) and one 20-byte record
printf '\xd4\xc3\xb2\xa1\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x00\x00\x65\x00\x00\x00' >"$LR_TMP/raw.pcap"
printf '\x00\x00\x00\x00\x00\x00\x00\x00\x14\x00\x00\x00\x14\x00\x00\x00' >>"$LR_TMP/raw.pcap"
head -c 20 /dev/zero >>"$LR_TMP/raw.pcap"
for args in "--pcap /nonexistent-dir/x.pcap --count 10" "--replay $LR_TMP/missing.pcap" \
	"--replay $LR_TMP/trunc.pcap" "--replay $LR_TMP/junk.pcap" "--replay $LR_TMP/raw.pcap"; do
	RC=0
	# shellcheck disable=SC2086
	"${S[@]}" $args >"$LR_TMP/bad.out" 2>"$LR_TMP/bad.err" || RC=$?
	lr_check "send $args: exit code" "$RC" == 2
	lr_check "send $args: one line on stderr" "$(wc -l <"$LR_TMP/bad.err")" == 1
done
lr_check_cmd "the non-Ethernet file is named as such" grep -qi "ethernet" "$LR_TMP/bad.err"
lr_check "nothing written in the missing directory" "$(ls /nonexistent-dir 2>/dev/null | wc -l)" == 0
lr_finish
