#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --latency-every: which frames carry a timestamp, and that counting does not care.
#
#   ns lr-latevery-snd-PID                ns lr-latevery-rcv-PID
#   +--------------------------+          +--------------------------+
#   | linerate send            |          | linerate recv --once     |
#   |   snd0 198.18.0.1/30     |<-veth--->|   rcv0 198.18.0.2/30     |
#   +--------------------------+          +--------------------------+
#
# Checks:
#   - live at --rate max, 4 flows, the default: tx.latency_every 64; counts exact; latency_ns.count
#     == 4 x ceil(16000 / 64) (lr_check_exact); the receiver's capture (recv --pcap, every frame)
#     shows a timestamp in exactly the frames whose sequence is a multiple of 64, 0 in the others,
#     and holds as many frames as recv says it wrote
#   - afxdp at 200 kpps, --latency-every 1: every frame stamped, latency_ns.count == frames;
#     rx.pps is rx.packets over the arrivals' span, and no more than 210 k
#   - 50 frames at --rate max (one stamped): the receive span still comes out (rx.pps > 0)
#   - packet at 100 kpps, 3 flows, the default for that rate: 4; latency_ns.count == 3 x 2500; the
#     capture (as many frames as recv wrote) has a timestamp exactly where seq % 4 == 0
#   - run, [tx] latency_every = 16: the step reports tx.latency_every 16 and about one sample in
#     16 frames (within one per flow)
#   - --latency-every 3, 0 and 131072: exit 2, one line naming the option
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

lr_init
lr_require_cmds python3
lr_pair_topology

# stamps_ok PCAP EVERY: in every captured test frame (untagged IPv4, probe at byte 42), the
# timestamp is non-zero exactly when the sequence is a multiple of EVERY. Prints "ok N" or why not.
stamps_ok()
{
	python3 - "$1" "$2" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
every = int(sys.argv[2])
magic = struct.unpack('<I', data[:4])[0]
if magic not in (0xa1b2c3d4, 0xa1b23c4d):
    print('not a little-endian pcap'); sys.exit()
off, n, stamped = 24, 0, 0
while off + 16 <= len(data):
    incl = struct.unpack('<IIII', data[off:off + 16])[2]
    f = data[off + 16:off + 16 + incl]
    off += 16 + incl
    if len(f) < 60 or f[42:44] != b'LR':
        continue
    seq = int.from_bytes(f[46:52], 'big')
    tail = int.from_bytes(f[52:60], 'big')
    if (tail != 0) != (seq % every == 0):
        print(f'flow {int.from_bytes(f[44:46], "big")} seq {seq}: timestamp {tail}'); sys.exit()
    n += 1
    stamped += tail != 0
print(f'ok {n} {stamped}')
PY
}

# capture_counts WHAT FRAMES STAMPED EVERY: the capture held frames, as many as recv says it
# wrote (rx... pcap.samples), and, once it holds a run of EVERY consecutive sequences of a flow
# (more than EVERY x 4 flows frames), stamped ones among them.
capture_counts()
{
	local what=$1 frames=${2:-0} stamped=${3:-0} every=$4

	lr_check "$what: frames in the capture" "$frames" ">" 0
	lr_check "$what: frames in the capture == the samples recv wrote" "$frames" == \
		"$(jq '.pcap.samples // .rx.pcap.samples' "$LR_TMP/recv.json")"
	if ((frames > every * 4)); then
		lr_check "$what: stamped frames in the capture" "$stamped" ">" 0
	fi
}

lr_log "== live, --rate max, 4 flows, the default"
LR_SEND_ENGINE=live LR_RECV_ARGS="--pcap $LR_TMP/live.pcap --pcap-max-bytes 16M" \
	lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 64000 --flows 4 --rate max
LR_SEND_ENGINE=live lr_check_exact 64000 4
lr_check "live --rate max: tx.latency_every" "$(lr_jget "$LR_TMP/send.json" .tx.latency_every)" == 64
lr_check_cmd "live: send's summary says one in 64" grep -q "one data frame in 64 of each flow" "$LR_TMP/send.err"
read -r verdict frames stamped <<<"$(stamps_ok "$LR_TMP/live.pcap" 64)"
lr_check "live: captured frames stamped iff seq % 64 == 0" "$verdict" == ok
# (an empty capture would say "ok" to the above; how many frames it keeps depends on the
# machine's load, as its ring may fill: every sample the receiver says it wrote is in the file)
capture_counts live "$frames" "$stamped" 64

lr_log "== afxdp, 200 kpps, --latency-every 1"
LR_SEND_ENGINE=afxdp lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 40000 --flows 2 --rate 200kpps \
	--latency-every 1
LR_SEND_ENGINE=afxdp lr_check_exact 40000 2
lr_check "afxdp --latency-every 1: tx.latency_every" "$(lr_jget "$LR_TMP/send.json" .tx.latency_every)" == 1
lr_check "afxdp --latency-every 1: a sample per frame" "$(lr_jget "$LR_TMP/recv.json" .latency_ns.count)" == 40000
# the receive rate is taken over the arrivals' span (rx.packets / active_s), never above the
# sender's pace (a busy machine may make it lower: no floor here)
lr_check "afxdp at 200 kpps: rx.pps == rx.packets / active_s (within 0.1 %)" \
	"$(jq '(.rx.pps - .rx.packets / .active_s) / .rx.pps | fabs < 0.001' "$LR_TMP/recv.json")" == true
lr_check "afxdp at 200 kpps: rx.pps <= 210 k" "$(jq '.rx.pps | floor' "$LR_TMP/recv.json")" "<=" 210000

lr_log "== afxdp, 50 frames at --rate max: a span from every frame's arrival"
LR_SEND_ENGINE=afxdp lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 50 --rate max
LR_SEND_ENGINE=afxdp lr_check_exact 50 1
lr_check "50 frames: tx.latency_every" "$(lr_jget "$LR_TMP/send.json" .tx.latency_every)" == 64
lr_check "50 frames: active_s > 0" "$(jq '.active_s > 0' "$LR_TMP/recv.json")" == true
lr_check "50 frames: rx.pps > 0" "$(jq '.rx.pps | floor' "$LR_TMP/recv.json")" ">" 0

lr_log "== packet, 100 kpps, 3 flows, the default"
LR_SEND_ENGINE=packet LR_RECV_ARGS="--pcap $LR_TMP/packet.pcap" \
	lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 30000 --flows 3 --rate 100kpps
LR_SEND_ENGINE=packet lr_check_exact 30000 3
lr_check "packet at 100 kpps: tx.latency_every" "$(lr_jget "$LR_TMP/send.json" .tx.latency_every)" == 4
lr_check "packet at 100 kpps: latency_ns.count" "$(lr_jget "$LR_TMP/recv.json" .latency_ns.count)" == 7500
read -r verdict frames stamped <<<"$(stamps_ok "$LR_TMP/packet.pcap" 4)"
lr_check "packet: captured frames stamped iff seq % 4 == 0" "$verdict" == ok
capture_counts packet "$frames" "$stamped" 4

lr_log "== run, [tx] latency_every = 16"
# sender_limited = pass: a busy machine's sender may fall short of the paced rate; the verdict is
# tested in test_throughput and test_configs, not here
cat >"$LR_TMP/every.ini" <<INI
[test]
duration = 1s
warmup = 200ms
sender_limited = pass
[tx]
interface = snd0
netns = /run/netns/$SND
dst_ip = 198.18.0.2
engine = afxdp
rates = 100kpps
sizes = 64
flows = 2
latency_every = 16
[rx]
interface = rcv0
netns = /run/netns/$RCV
INI
RC=0
timeout -k 5 60 "$LINERATE" run "$LR_TMP/every.ini" --json "$LR_TMP/run.json" -q >"$LR_TMP/run.out" 2>"$LR_TMP/run.err" ||
	RC=$?
lr_show_file "$LR_TMP/run.err"
lr_check "run exit code" "$RC" == 0
lr_check "run: step tx.latency_every" "$(lr_jget "$LR_TMP/run.json" '.steps[0].tx.latency_every')" == 16
lr_check "run: |rx.packets - 16 x latency_ns.count| < 16 x flows" \
	"$(jq '.steps[0] | (.rx.packets - 16 * .latency_ns.count) | if . < 0 then -. else . end' "$LR_TMP/run.json")" "<" 32
lr_check "run: some latency samples" "$(lr_jget "$LR_TMP/run.json" '.steps[0].latency_ns.count')" ">" 0

for bad in 3 0 131072; do
	RC=0
	ip netns exec "$SND" "$LINERATE" send -i snd0 --dst-ip 198.18.0.2 --count 10 --latency-every "$bad" \
		>"$LR_TMP/bad.out" 2>"$LR_TMP/bad.err" || RC=$?
	lr_check "--latency-every $bad: exit code" "$RC" == 2
	lr_check "--latency-every $bad: one line" "$(wc -l <"$LR_TMP/bad.err")" == 1
	lr_check_cmd "--latency-every $bad: names the option" grep -q -- "--latency-every: '$bad' is not a latency interval" \
		"$LR_TMP/bad.err"
done
lr_finish
