#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# recv --pcap: samples of the frames received, from the XDP ring buffer and the AF_PACKET sampler.
#
#   ns lr-pcap_recv-snd-PID               ns lr-pcap_recv-rcv-PID
#   +--------------------------+          +-------------------------------+
#   | linerate send --flows 2  |          | linerate recv --pcap FILE     |
#   |   snd0 198.18.0.1/30     |<-veth--->|   rcv0 198.18.0.2/30          |
#   +--------------------------+          +-------------------------------+
#
# Checks, for each receive engine (xdp, packet):
#   1. --pcap F (every data frame): the exchange is loss-free as without capture; samples written
#      == exactly the 2000 data frames (end-of-test markers are counted, never sampled), none
#      dropped or capped; tcpdump -r
#      reads F; its UDP records to 198.18.0.2.7447 come from .55000 and .55001 and number exactly
#      the samples; nothing foreign is in it; pcap magic is the nanosecond one, snaplen 128,
#      a 64-byte frame is kept whole (caplen = len = 60); stamps are wall-clock (within a minute)
#   2. --pcap-every 10 --pcap-foreign: exactly 200 data frames (one CPU counts them), and every foreign
#      frame (rx.foreign of them, the 3 UDP datagrams to port 9 among them)
#   3. --snaplen 64 --pcap-max-bytes 10k with 128-byte frames: header snaplen 64, records keep
#      caplen 64 and len 124; F stays within 10000 bytes; written + capped == the 500 data frames
#   4. SIGINT while traffic flows: exit 0, F under its final name, no temporary file beside it,
#      tcpdump reads it, and it holds the samples the JSON reports
# Then: --pcap /nonexistent/dir/x.pcap exits 2 with one line and never attaches XDP; bad values
# of --snaplen / --pcap-every, and pcap options without --pcap, exit 2 with one line.
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COUNT=2000
FLOWS=2
lr_init
lr_require_cmds tcpdump od stat
lr_pair_topology

# u32 FILE OFFSET: little-endian 32-bit word of FILE at OFFSET (pcap is written in host order).
u32()
{
	od -A n -t u4 -j "$2" -N 4 "$1" | tr -d ' '
}

# lines FILE [FILTER]: records tcpdump prints for FILE, matching the BPF FILTER.
lines()
{
	local f=$1

	shift
	tcpdump -nn -r "$f" "$@" 2>/dev/null | wc -l
}

# tcpdump_reads FILE: tcpdump reads the whole file without an error.
# shellcheck disable=SC2317 # called through lr_check_cmd
tcpdump_reads()
{
	tcpdump -nn -r "$1" >/dev/null 2>"$LR_TMP/tcpdump.err" || {
		cat "$LR_TMP/tcpdump.err"
		return 1
	}
}

# first_ts FILE: seconds (epoch) of the first record.
first_ts()
{
	tcpdump -tt -nn -c 1 -r "$1" 2>/dev/null | awk '{ print int($1) }'
}

for eng in xdp packet; do
	LR_RECV_ENGINE=$eng
	r=$LR_TMP/recv.json

	# 1. every test frame
	f=$LR_TMP/$eng-all.pcap
	LR_RECV_ARGS="--pcap $f"
	lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 "$COUNT" --flows "$FLOWS" --rate 20kpps
	lr_check_exact "$COUNT" "$FLOWS"
	samples=$(lr_jget "$r" .rx.pcap.samples)
	eot=$(lr_jget "$r" .rx.eot_markers)
	lr_log "[$eng] every frame: $samples samples, $eot end-of-test markers"
	lr_check "[$eng] JSON rx.pcap.file" "$(lr_jget "$r" .rx.pcap.file)" == "$f"
	lr_check "[$eng] end-of-test markers counted (not sampled)" "$eot" ">=" "$FLOWS"
	lr_check "[$eng] samples == data frames" "$samples" == "$COUNT"
	lr_check "[$eng] samples dropped (ring full)" "$(lr_jget "$r" .rx.pcap.dropped)" == 0
	lr_check "[$eng] samples skipped by the size cap" "$(lr_jget "$r" .rx.pcap.capped)" == 0
	lr_check "[$eng] summary line on samples dropped" \
		"$(grep -c 'samples dropped: 0 (ring buffer full)' "$LR_TMP/recv.err" || true)" == 1
	lr_check_cmd "[$eng] tcpdump -r reads the capture" tcpdump_reads "$f"
	lr_check "[$eng] UDP records to 198.18.0.2.7447 == samples" "$(lines "$f" udp dst port 7447)" == "$samples"
	lr_check "[$eng] records from 198.18.0.1.55000 and .55001 == samples" \
		"$(tcpdump -nn -r "$f" 2>/dev/null | grep -Ec ' IP 198\.18\.0\.1\.5500[01] > 198\.18\.0\.2\.7447: UDP, length 18$' || true)" \
		== "$samples"
	lr_check "[$eng] records of flow 0 (port 55000)" "$(lines "$f" udp src port 55000)" == $((COUNT / 2))
	lr_check "[$eng] records of flow 1 (port 55001)" "$(lines "$f" udp src port 55001)" == $((COUNT / 2))
	lr_check "[$eng] no foreign frame without --pcap-foreign" "$(lines "$f" not udp dst port 7447)" == 0
	lr_check "[$eng] pcap magic (nanosecond)" "$(od -A n -t x4 -j 0 -N 4 "$f" | tr -d ' ')" == a1b23c4d
	lr_check "[$eng] pcap header snaplen" "$(u32 "$f" 16)" == 128
	lr_check "[$eng] first record caplen (a 64-byte frame kept whole)" "$(u32 "$f" 32)" == 60
	lr_check "[$eng] first record len" "$(u32 "$f" 36)" == 60
	age=$(($(date +%s) - $(first_ts "$f")))
	lr_check "[$eng] first record's stamp is wall-clock time: seconds ago" "$age" "<" 60
	lr_check "[$eng] first record's stamp is not in the future: seconds ago" "$age" ">=" 0

	# 2. one data frame in 10, every marker and every foreign frame
	f=$LR_TMP/$eng-every10.pcap
	LR_RECV_ARGS="--pcap $f --pcap-every 10 --pcap-foreign"
	lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 "$COUNT" --flows "$FLOWS" --rate 20kpps
	lr_check "[$eng/10] recv exit code" "$RECV_RC" == 0
	lr_check "[$eng/10] rx.packets" "$(lr_jget "$r" .rx.packets)" == "$COUNT"
	samples=$(lr_jget "$r" .rx.pcap.samples)
	eot=$(lr_jget "$r" .rx.eot_markers)
	foreign=$(lr_jget "$r" .rx.foreign)
	lr_log "[$eng/10] $samples samples: markers $eot, foreign $foreign"
	lr_check_cmd "[$eng/10] tcpdump -r reads the capture" tcpdump_reads "$f"
	lr_check "[$eng/10] test records == 2000/10" "$(lines "$f" udp dst port 7447)" == "$((COUNT / 10))"
	lr_check "[$eng/10] foreign records == rx.foreign" "$(lines "$f" not udp dst port 7447)" == "$foreign"
	lr_check "[$eng/10] the 3 foreign datagrams to port 9 are in it" "$(lines "$f" udp dst port 9)" == 3
	lr_check "[$eng/10] samples == test + foreign records" "$samples" == "$((COUNT / 10 + foreign))"
	lr_check "[$eng/10] samples dropped" "$(lr_jget "$r" .rx.pcap.dropped)" == 0

	# 3. short snap length and a size cap, on 128-byte frames
	f=$LR_TMP/$eng-snap.pcap
	LR_RECV_ARGS="--pcap $f --snaplen 64 --pcap-max-bytes 10k"
	lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 500 --flows "$FLOWS" --rate 20kpps --size 128
	lr_check "[$eng/snap] recv exit code" "$RECV_RC" == 0
	lr_check "[$eng/snap] rx.packets" "$(lr_jget "$r" .rx.packets)" == 500
	samples=$(lr_jget "$r" .rx.pcap.samples)
	capped=$(lr_jget "$r" .rx.pcap.capped)
	eot=$(lr_jget "$r" .rx.eot_markers)
	lr_log "[$eng/snap] $samples samples written, $capped capped, $eot markers"
	lr_check_cmd "[$eng/snap] tcpdump -r reads the capture" tcpdump_reads "$f"
	lr_check "[$eng/snap] pcap header snaplen" "$(u32 "$f" 16)" == 64
	lr_check "[$eng/snap] first record caplen" "$(u32 "$f" 32)" == 64
	lr_check "[$eng/snap] first record len (the whole frame)" "$(u32 "$f" 36)" == 124
	lr_check "[$eng/snap] file size within --pcap-max-bytes" "$(stat -c %s "$f")" "<=" 10000
	lr_check "[$eng/snap] records == samples" "$(lines "$f")" == "$samples"
	lr_check "[$eng/snap] some samples skipped by the cap" "$capped" ">" 0
	lr_check "[$eng/snap] written + capped == data frames" "$((samples + capped))" == 500

	# 4. SIGINT while frames arrive
	f=$LR_TMP/$eng-sigint.pcap
	rm -f "$LR_TMP/ready"
	lr_spawn "recv-int-$eng" ip netns exec "$RCV" "$LINERATE" recv -i rcv0 --engine "$eng" --duration 30 -q \
		--pcap "$f" --json "$LR_TMP/int.json" --ready-file "$LR_TMP/ready"
	rpid=$LR_LAST_PID
	lr_wait_for_file "$LR_TMP/ready" 15 "$rpid" || lr_die "recv ($eng, SIGINT) never became ready"
	lr_spawn "send-int-$eng" timeout -k 5 20 ip netns exec "$SND" "$LINERATE" send -i snd0 --dst-ip 198.18.0.2 \
		--flows "$FLOWS" --rate 2kpps --duration 3s -q
	spid=$LR_LAST_PID
	sleep 1
	lr_check_cmd "[$eng/INT] the sender is still sending when recv gets SIGINT" kill -0 "$spid"
	kill -INT "$rpid"
	rc=0
	lr_wait_pid "$rpid" 10 || rc=$?
	lr_show_file "$LR_TMP/recv-int-$eng.err"
	lr_check "[$eng/INT] recv exit code" "$rc" == 0
	lr_check_cmd "[$eng/INT] capture under its final name" test -s "$f"
	lr_check "[$eng/INT] temporary files beside it" "$(compgen -G "$f.*" | wc -l)" == 0
	lr_check_cmd "[$eng/INT] tcpdump -r reads it" tcpdump_reads "$f"
	samples=$(lr_jget "$LR_TMP/int.json" .rx.pcap.samples)
	lr_check "[$eng/INT] samples written before the signal" "$samples" ">" 0
	lr_check "[$eng/INT] records == samples in the JSON" "$(lines "$f")" == "$samples"
	rc=0
	lr_wait_pid "$spid" 15 || rc=$?
	lr_check "[$eng/INT] sender exit code" "$rc" == 0
done
unset LR_RECV_ENGINE LR_RECV_ARGS

# An unwritable path: a usage error before anything is attached.
rc=0
ip netns exec "$RCV" "$LINERATE" recv -i rcv0 --engine xdp --duration 5 --pcap /nonexistent/dir/x.pcap \
	--ready-file "$LR_TMP/ready.bad" >"$LR_TMP/bad.out" 2>"$LR_TMP/bad.err" || rc=$?
lr_show_file "$LR_TMP/bad.err"
lr_check "unwritable --pcap: exit code" "$rc" == 2
lr_check "unwritable --pcap: lines of output" "$(cat "$LR_TMP/bad.out" "$LR_TMP/bad.err" | wc -l)" == 1
lr_check_cmd "unwritable --pcap: never ready" test ! -e "$LR_TMP/ready.bad"
lr_check_cmd "unwritable --pcap: no XDP program on rcv0" lr_xdp_absent "$RCV" rcv0

# Bad values: one line naming the option, exit 2 (in the receiver's namespace, where rcv0 exists,
# so an unknown interface cannot pass for the error).
bad_args()
{
	local rc=0 want=$1

	shift
	ip netns exec "$RCV" "$LINERATE" recv -i rcv0 "$@" >"$LR_TMP/arg.out" 2>"$LR_TMP/arg.err" || rc=$?
	lr_check "recv $* : exit code" "$rc" == 2
	lr_check "recv $* : lines of output" "$(cat "$LR_TMP/arg.out" "$LR_TMP/arg.err" | wc -l)" == 1
	lr_check_cmd "recv $* : the line names $want" grep -q -- "$want" "$LR_TMP/arg.err"
}
bad_args --snaplen --pcap "$LR_TMP/x.pcap" --snaplen 63
bad_args --snaplen --pcap "$LR_TMP/x.pcap" --snaplen 9019
bad_args --pcap-every --pcap "$LR_TMP/x.pcap" --pcap-every 0
bad_args --pcap-max-bytes --pcap "$LR_TMP/x.pcap" --pcap-max-bytes lots
bad_args --pcap-every --pcap-every 10
lr_check_cmd "no XDP program on rcv0 after the bad arguments" lr_xdp_absent "$RCV" rcv0
lr_finish
