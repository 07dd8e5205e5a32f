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
#     temporary file beside it, tcpdump reads every record the summary reported (more than none)
#   - send --replay F (no --stamp) to recv --pcap: the receiver counts every replayed frame, and
#     its capture holds the same bytes as F, frame for frame; --replay --stamp --loops 2 gives an
#     exact count with the end-of-test markers settling loss at 0
#   - the live engine (frames made and stamped in the kernel, sampled there to a BPF ring buffer),
#     with recv's XDP on rcv0 so the veth takes its frames: --count 20000 --pcap F writes exactly
#     the first 1000 data frames, 'UDP, length 18' 198.18.0.1.55000 > 198.18.0.2.7447, sequences
#     0..999 in order read from the probe in the records, UDP checksums right, no end-of-test
#     marker among them; each record's time is the probe's own tx stamp moved to CLOCK_REALTIME
#     (one offset for all, within the send's wall-clock span); --pcap-every 10 of 10000 gives
#     1000 records, sequences 0, 10, 20...; --flows 2 gives each flow's first 500; the summary's
#     written count equals the file's records, none dropped; --flows 3 --pcap-every 7 picks the
#     very frames (flow, sequence) afxdp picks for the same send; `linerate run` with [tx]
#     engine = live and pcap (its sampler comes after the engine opened, in measured windows
#     only): the file holds the measured window's first 1000 frames (all of them, if it sent
#     fewer), each of 2 flows' first, in order
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
WRITTEN=$(sed -n 's/.*: \([0-9]*\) frames\? written.*/\1/p' "$LR_TMP/sendint.err")
lr_check "records in the file == frames written in the summary" "$(udp_lines "$LR_TMP/d.pcap")" == "${WRITTEN:-none}"
# (how many a second at 10k gives depends on the machine's load: some, not a rate)
lr_check "frames were written before the signal" "${WRITTEN:-0}" ">" 0

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

# live_records FILE: one line per record of a pcap of 60-byte frames (nanosecond, little-endian):
# flow, sequence, magic, pcap time (ns, CLOCK_REALTIME) less the probe's tx stamp, pcap seconds,
# the tx stamp (0 in the frames --latency-every leaves unstamped).
live_records()
{
	local flow seq magic sec nsec hi lo

	[[ $(od -An -tx1 -N4 "$1" | tr -d ' ') == 4d3cb2a1 ]] || return 0
	# 76 bytes a record: 16 of header, then the frame, its probe at 42 (magic, flow, seq[6], tx_ns[8])
	od -An -v -tu1 -w76 -j24 "$1" | awk 'NF == 76 && $9 == 60 && $13 == 60 {
		printf "%d %.0f %d %.0f %d %.0f %.0f\n", $61 * 256 + $62,
			(($63 * 256 + $64) * 256 + $65) * 16777216 + ($66 * 256 + $67) * 256 + $68,
			$59 * 256 + $60, $1 + $2 * 256 + $3 * 65536 + $4 * 16777216,
			$5 + $6 * 256 + $7 * 65536 + $8 * 16777216,
			(($69 * 256 + $70) * 256 + $71) * 256 + $72, (($73 * 256 + $74) * 256 + $75) * 256 + $76 }' |
		while read -r flow seq magic sec nsec hi lo; do
			echo "$flow $seq $magic $((sec * 1000000000 + nsec - (hi << 32) - lo)) $sec $(((hi << 32) + lo))"
		done
}

# live_send NAME ARGS...: send --engine live into the receiver; its summary in $LR_TMP/NAME.err.
live_send()
{
	local name=$1 rc=0

	shift
	timeout -k 5 60 "${S[@]}" --engine live -q --pcap "$LR_TMP/$name.pcap" "$@" 2>"$LR_TMP/$name.err" || rc=$?
	lr_check "live $name: send exit code" "$rc" == 0
	[[ $rc == 0 ]] || lr_show_file "$LR_TMP/$name.err"
	live_records "$LR_TMP/$name.pcap" >"$LR_TMP/$name.rec"
}

# live_summary NAME N: the file holds N records of test frames, as many as the summary says were written.
live_summary()
{
	local name=$1 n=$2

	lr_check "live $name: UDP test frames in the file" "$(udp_lines "$LR_TMP/$name.pcap")" == "$n"
	lr_check "live $name: every record is one of them" "$(tcpdump -nn -r "$LR_TMP/$name.pcap" 2>/dev/null | wc -l)" == "$n"
	lr_check "live $name: records parsed from the file" "$(wc -l <"$LR_TMP/$name.rec")" == "$n"
	lr_check "live $name: frames written in the summary == records in the file" \
		"$(sed -n 's/.*: \([0-9]*\) frames\? written.*/\1/p' "$LR_TMP/$name.err")" == "$n"
	lr_check "live $name: none dropped" "$(sed -n 's/.*, \([0-9]*\) dropped (sample ring full).*/\1/p' "$LR_TMP/$name.err")" == 0
	lr_check "live $name: data frames only (magic LR), no end-of-test marker" \
		"$(awk '$3 == 19538' "$LR_TMP/$name.rec" | wc -l)" == "$n"
}

lr_log "== live engine: samples taken in the kernel"
rm -f "$LR_TMP/ready"
lr_spawn lrecv ip netns exec "$RCV" "$LINERATE" recv -i rcv0 --duration 60 --ready-file "$LR_TMP/ready" -q
LPID=$LR_LAST_PID
lr_wait_for_file "$LR_TMP/ready" 15 "$LPID" || lr_die "recv never became ready"

T0=$(date +%s)
live_send la --count 20000
T1=$(date +%s)
live_summary la 1000
lr_check_cmd "live la: the summary names the live engine" grep -q "live (prog_run)" "$LR_TMP/la.err"
lr_check "live la: one flow, source port 55000" \
	"$(tcpdump -nn -r "$LR_TMP/la.pcap" 2>/dev/null | grep -c '198\.18\.0\.1\.55000 > 198\.18\.0\.2\.7447: UDP, length 18$')" == 1000
lr_check "live la: every UDP checksum right (the frames as stamped)" \
	"$(tcpdump -vv -nn -r "$LR_TMP/la.pcap" 2>/dev/null | grep -c 'udp sum ok')" == 1000
lr_check "live la: sequences 0..999, in order" "$(awk '$1 == 0 && $2 == NR - 1' "$LR_TMP/la.rec" | wc -l)" == 1000
# --rate max: a tx stamp in one frame in 64 (--latency-every), the sequences 0, 64 ... 960
lr_check "live la: a tx stamp in the records with seq % 64 == 0, 0 in the others" \
	"$(awk '($2 % 64 == 0) != ($6 != 0)' "$LR_TMP/la.rec" | wc -l)" == 0
lr_check "live la: stamped records" "$(awk '$6 != 0' "$LR_TMP/la.rec" | wc -l)" == 16
lr_check "live la: pcap time - probe tx stamp: one offset for every stamped record" \
	"$(awk '$6 != 0 { print $4 }' "$LR_TMP/la.rec" | sort -u | wc -l)" == 1
FIRST=$(awk 'NR == 1 { print $5 }' "$LR_TMP/la.rec")
lr_check "live la: first record on the wall clock, not before the send" "${FIRST:-0}" ">=" "$T0"
lr_check "live la: first record on the wall clock, not after the send" "${FIRST:-0}" "<=" "$T1"

live_send lb --count 10000 --pcap-every 10
live_summary lb 1000
lr_check "live lb: sequences 0, 10, 20 ... 9990" "$(awk '$1 == 0 && $2 == 10 * (NR - 1)' "$LR_TMP/lb.rec" | wc -l)" == 1000

live_send lc --count 20000 --flows 2
live_summary lc 1000
lr_check "live lc: 500 samples of flow 0" "$(awk '$1 == 0' "$LR_TMP/lc.rec" | wc -l)" == 500
lr_check "live lc: 500 samples of flow 1" "$(awk '$1 == 1' "$LR_TMP/lc.rec" | wc -l)" == 500
lr_check "live lc: each flow's first 500, in order" "$(awk '$2 == n[$1]++' "$LR_TMP/lc.rec" | wc -l)" == 1000

live_send ld --count 7000 --flows 3 --pcap-every 7
live_summary ld 1000
"${S[@]}" --engine afxdp --rate 50k --count 7000 --flows 3 --pcap-every 7 -q --pcap "$LR_TMP/xd.pcap" 2>/dev/null
live_records "$LR_TMP/xd.pcap" >"$LR_TMP/xd.rec"
lr_check "afxdp, same send: 1000 records" "$(wc -l <"$LR_TMP/xd.rec")" == 1000
lr_check_cmd "live ld: the same frames (flow, sequence) as afxdp samples" \
	cmp -s <(awk '{ print $1, $2 }' "$LR_TMP/ld.rec") <(awk '{ print $1, $2 }' "$LR_TMP/xd.rec")
kill -INT "$LPID"
lr_wait_pid "$LPID" 15 || true

lr_log "== live engine under linerate run, [tx] pcap"
# sender_limited = pass: a busy machine's sender may fall short of the paced rate; the verdict is
# tested in test_throughput and test_configs, not here
cat >"$LR_TMP/run.ini" <<INI
[test]
mode = sweep
duration = 500ms
warmup = 200ms
sender_limited = pass

[tx]
netns = $SND
interface = snd0
src_ip = 198.18.0.1
dst_ip = 198.18.0.2
engine = live
sizes = 64
rates = 20k
flows = 2
pcap = $LR_TMP/run.pcap

[rx]
netns = $RCV
interface = rcv0
INI
RC=0
timeout -k 5 60 "$LINERATE" run "$LR_TMP/run.ini" -q --json "$LR_TMP/run.json" >"$LR_TMP/run.out" \
	2>"$LR_TMP/run.err" || RC=$?
lr_check "run: exit code" "$RC" == 0
[[ $RC == 0 ]] || lr_show_file "$LR_TMP/run.err"
live_records "$LR_TMP/run.pcap" >"$LR_TMP/run.rec"
# the window's first 1000 frames, or all of them if a busy machine sent fewer in its 500 ms
WANT=$(jq '[.steps[0].tx.packets, 1000] | min' "$LR_TMP/run.json" 2>/dev/null || echo 1000)
lr_check "run: frames sent in the measured window" "$WANT" ">" 0
lr_check "run: records in the file (the measured window's first $WANT frames)" "$(wc -l <"$LR_TMP/run.rec")" == "$WANT"
lr_check "run: data frames only" "$(awk '$3 == 19538' "$LR_TMP/run.rec" | wc -l)" == "$WANT"
lr_check "run: each flow's first frames, in order" "$(awk '$2 == n[$1]++ && $1 < 2' "$LR_TMP/run.rec" | wc -l)" == "$WANT"

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
lr_check "nothing written in the missing directory" "$(find /nonexistent-dir -mindepth 1 2>/dev/null | wc -l)" == 0
lr_finish
