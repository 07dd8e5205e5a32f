#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CPU per packet: run's cost_ns_per_packet and recv --prog-stats, checked against the kernel's own
# counters.
#
#   ns lr-cost-snd-PID                     ns lr-cost-rcv-PID
#   +--------------------------+          +--------------------------+
#   | linerate run / send      |          | receiver / recv (XDP)    |
#   |   snd0 198.18.0.1/30     |<-veth--->|   rcv0 198.18.0.2/30     |
#   +--------------------------+          +--------------------------+
#
# Checks:
#   1. run, AF_XDP, one worker on CPU 0: a step at max rate and one paced at 50 kpps, 1 s each.
#      - every step has cost_ns_per_packet: total, sender, path, receiver and an error for each
#        (>= 0); the parts add up to the total; packets == rx.packets; no cost_note
#      - the receiver was timed: 0 < rx.prog.stat_runs < a fifth of the frames it saw (stats on a
#        short window at a time), 5 < receiver_ns_per_run < 5000, receiver > 0
#      - busy_cpu_s: at least 0.9 s of CPU in a 1 s step at max rate (the worker's core is full),
#        and no more than the test's own /proc/stat reading around the whole run shows (+ 2 ticks
#        a CPU); total = (busy CPU less stats' added cost) / packets
#      - the paced step: a paced worker spins on its core, so its time is about the window: the
#        sender part times the rate sent, and tx.cpu.thread_ns over window_s, are 0.5 to 1.2
#      - cost_ns_per_packet.paced false at max, true at 50 kpps; the report's cost line says so at
#        50 kpps ("sender N (+-E) with its pacing wait", "; paced: ...") and not at max
#      - tx.cpu.irq_time_accounting matches the kernel's config (/boot/config-RELEASE or
#        /proc/config.gz; without either a skip, a failure under LINERATE_REQUIRE_E2E=1)
#      - independent of the split's arithmetic: sender <= tx.cpu.thread_ns / packets, the receiver
#        part equals rx.prog.ns_per_run x the frames the program saw / packets
#   2. recv --prog-stats with a send of 100000 frames at 50 kpps: rx.prog's run_ns and stat_runs
#      equal what bpftool says of the program (run_time_ns, run_cnt) read after the send and
#      before recv ends; 0 < stat_runs < runs; the summary prints the program's ns per frame
#   2b. two streams' workers (AF_PACKET, one queue) on CPU 0: tx.cpu.softirq_ns is no more than CPU 0's softirq and irq time
#      over the window (each stream's own estimate took all of it; summed, it would be twice that)
#   2c. after linerate ended, stats are off for everyone: a receiver without --prog-stats, 2000 frames,
#      and bpftool counts no run of its program (the sysctl cannot tell: BPF_ENABLE_STATS holders
#      do not show there); the send exits 0 and the receiver's rx.packets is 2000, so the frames
#      did reach the program
#   3. [test] cost = no: cost_ns_per_packet null, cost_note "[test] cost = no", rx.prog null
#   4. cost = maybe: one line naming the key, exit 2
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

lr_init
lr_require_cmds bpftool jq
lr_pair_topology
[[ $(cat /proc/sys/kernel/bpf_stats_enabled) == 0 ]] ||
	lr_die "kernel.bpf_stats_enabled is 1 already: the test needs it off to see linerate turn stats on and off"

# busy CPU seconds of every CPU between two /proc/stat readings FILE1 FILE2 (all fields but idle,
# iowait and steal, in USER_HZ ticks)
busy_s()
{
	awk -v hz="$(getconf CLK_TCK)" 'FNR == 1 { f++ } /^cpu[0-9]/ {
		b = $2 + $3 + $4 + $7 + $8
		if (f == 1) a[$1] = b; else d += b - a[$1]
	} END { printf "%.3f", d / hz }' "$1" "$2"
}

J=$LR_TMP/run.json
# sender_limited = pass: a busy machine's sender may fall short of the paced rate; the verdict is
# tested in test_throughput and test_configs, not here
cat >"$LR_TMP/cost.ini" <<EOF
[test]
duration = 1s
warmup = 200ms
max_loss = 100
sender_limited = pass
[tx]
netns = $SND
interface = snd0
dst_ip = 198.18.0.2
engine = afxdp
queues = 0
cpus = 0
rates = max, 50k
[rx]
netns = $RCV
interface = rcv0
EOF
cat /proc/stat >"$LR_TMP/stat0"
RC=0
timeout -k 5 60 "$LINERATE" run "$LR_TMP/cost.ini" --json "$J" >"$LR_TMP/run.out" 2>"$LR_TMP/run.err" || RC=$?
cat /proc/stat >"$LR_TMP/stat1"
lr_show_file "$LR_TMP/run.err"
lr_show_file "$LR_TMP/run.out"
lr_check "run exit code" "$RC" == 0
lr_jvalid "$J"
WHOLE=$(busy_s "$LR_TMP/stat0" "$LR_TMP/stat1")
NCPU=$(grep -c '^cpu[0-9]' /proc/stat)
lr_check "two steps" "$(jq '.steps | length' "$J")" == 2
for i in 0 1; do
	s=".steps[$i]"
	c="$s.cost_ns_per_packet"
	what="step $((i + 1)) ($(jq -r "$s.offered_pps // \"max\"" "$J"))"
	for k in total sender path receiver; do
		lr_check "$what: cost $k is a number" "$(jq "$c.$k | type" "$J")" == '"number"'
		lr_check "$what: cost error.$k >= 0" "$(jq "$c.error.$k" "$J")" ">=" 0
	done
	lr_check "$what: no cost_note" "$(jq "$s.cost_note // \"none\"" "$J")" == '"none"'
	RUNS=$(jq "$s.rx | .packets + .eot_markers + .foreign + .bad_flow" "$J")
	lr_check "$what: sender + path + receiver = total" \
		"$(jq "$c | (.sender + .path + .receiver - .total) | fabs < 1e-6" "$J")" == true
	lr_check "$what: cost packets = rx.packets" "$(jq "$c.packets" "$J")" == "$(jq "$s.rx.packets" "$J")"
	lr_check "$what: total > 0" "$(jq "$c.total" "$J")" ">" 0
	lr_check "$what: sender > 0" "$(jq "$c.sender" "$J")" ">" 0
	lr_check "$what: receiver > 0" "$(jq "$c.receiver" "$J")" ">" 0
	lr_check "$what: the program's ns per frame > 5" "$(jq "$c.receiver_ns_per_run" "$J")" ">" 5
	lr_check "$what: the program's ns per frame < 5000" "$(jq "$c.receiver_ns_per_run" "$J")" "<" 5000
	lr_check "$what: bpf_stats counted some runs" "$(jq "$s.rx.prog.stat_runs" "$J")" ">" 0
	lr_check "$what: ... only a short window's (< a fifth of the frames)" \
		"$(jq "$s.rx.prog.stat_runs" "$J")" "<" "$(awk -v r="$RUNS" 'BEGIN { print r / 5 }')"
	# independent of the split's arithmetic: the sender's part is at most the workers' own time, the
	# receiver's is the program's figure in rx.prog times the frames it saw
	lr_check "$what: sender <= tx.cpu.thread_ns / packets" \
		"$(jq "$s | .cost_ns_per_packet.sender <= .tx.cpu.thread_ns / .cost_ns_per_packet.packets + 1e-6" "$J")" == true
	lr_check "$what: receiver_ns_per_run == rx.prog.ns_per_run" \
		"$(jq "$s | (.cost_ns_per_packet.receiver_ns_per_run - .rx.prog.ns_per_run) | fabs < 1e-6" "$J")" == true
	lr_check "$what: receiver == ns_per_run x frames seen / packets" \
		"$(jq "$s | ((.rx.prog.ns_per_run * $RUNS / .cost_ns_per_packet.packets) - .cost_ns_per_packet.receiver) | fabs < 1e-3" "$J")" == true
	lr_check "$what: the step's busy CPU <= the whole run's (/proc/stat around it, + 2 ticks a CPU)" \
		"$(jq "$c.busy_cpu_s" "$J")" "<=" "$(awk -v w="$WHOLE" -v n="$NCPU" 'BEGIN { print w + n * 0.02 }')"
	# the total is the busy time, less what stats added to every counted run, over the packets
	lr_check "$what: total = (busy - stats' added cost) / packets (within 0.1 %)" \
		"$(jq "$s as \$s | $c as \$c | ((\$c.busy_cpu_s * 1e9 - \$s.rx.prog.stats_added_ns * (\$s.rx.prog.stat_runs
			+ \$s.tx.cpu.prog_stat_runs)) / \$c.packets) as \$t | ((\$t - \$c.total) | fabs) <= 0.001 * \$t" "$J")" == true
done
lr_check "max rate: the worker's core was full: busy CPU >= 0.9 s in a 1 s step" "$(jq '.steps[0].cost_ns_per_packet.busy_cpu_s' "$J")" ">=" 0.9
# paced: the worker spins on its core between bursts, so its time is about the window (the markers
# add a few ms; on a quiet machine, as in CI, nothing else takes the core), and its part per packet
# about 1 / the rate it sent. (A test that holds a rate: labelled "rate" in ctest.)
lr_check "50 kpps: tx.cpu.thread_ns is 0.5 to 1.2 times the window" \
	"$(jq '.steps[1] | (.tx.cpu.thread_ns / 1e9 / .window_s) | . >= 0.5 and . <= 1.2' "$J")" == true
lr_check "50 kpps: sender x tx.pps is 0.5 to 1.2 s of CPU a second" \
	"$(jq '.steps[1] | (.cost_ns_per_packet.sender * .tx.pps / 1e9) | . >= 0.5 and . <= 1.2' "$J")" == true
# the kernel's config where linerate looks for it: /boot/config-RELEASE, else /proc/config.gz
KCONFIG=
if [[ -r /boot/config-$(uname -r) ]]; then
	KCONFIG=$(cat "/boot/config-$(uname -r)")
elif [[ -r /proc/config.gz ]]; then
	KCONFIG=$(zcat /proc/config.gz)
fi
if [[ -n $KCONFIG ]]; then
	want=no
	grep -q '^CONFIG_IRQ_TIME_ACCOUNTING=y' <<<"$KCONFIG" && want=yes
	grep -q 'tsc=noirqtime' /proc/cmdline && want=no
	lr_check "tx.cpu.irq_time_accounting as the kernel's config says" \
		"$(jq -r '.steps[0].tx.cpu.irq_time_accounting' "$J")" == "$want"
else
	lr_skip_check "tx.cpu.irq_time_accounting as the kernel's config says" \
		"no kernel config to read (/boot/config-$(uname -r), /proc/config.gz)"
fi
lr_check_cmd "the report has a cost line under each step" \
	test "$(grep -cE '^     cost [0-9]+ ns/packet \(\+-[0-9]+\): sender -?[0-9]+ \(\+-[0-9]+\)( with its pacing wait)?, path -?[0-9]+' \
		"$LR_TMP/run.out")" -eq 2
lr_check "max rate: cost not paced" "$(jq '.steps[0].cost_ns_per_packet.paced' "$J")" == false
lr_check "50 kpps: cost paced" "$(jq '.steps[1].cost_ns_per_packet.paced' "$J")" == true
COST_LINES=$(grep -E '^     cost [0-9]+ ns/packet' "$LR_TMP/run.out" || true)
lr_check "max rate: the cost line says nothing of pacing" "$(sed -n 1p <<<"$COST_LINES" | grep -c 'pacing\|paced' || true)" == 0
lr_check "50 kpps: the cost line says the sender's part holds its pacing wait" \
	"$(sed -n 2p <<<"$COST_LINES" | grep -cE 'sender -?[0-9]+ \(\+-[0-9]+\) with its pacing wait, .*; paced: the sender spins' || true)" == 1

lr_log "== recv --prog-stats against bpftool"
rm -f "$LR_TMP/ready"
lr_spawn recv timeout -k 5 40 "$LINERATE" recv --netns "$RCV" -i rcv0 --prog-stats --duration 30 -q \
	--json "$LR_TMP/recv.json" --ready-file "$LR_TMP/ready"
RPID=$LR_LAST_PID
lr_wait_for_file "$LR_TMP/ready" 15 "$RPID" || lr_die "recv never became ready"
SRC=0
timeout -k 5 30 "$LINERATE" send --netns "$SND" -i snd0 --dst-ip 198.18.0.2 --count 100000 --rate 50k -q \
	>/dev/null 2>"$LR_TMP/send.err" || SRC=$?
lr_check "send exit code" "$SRC" == 0
sleep 0.5
# our recv's program: the one attached to rcv0 (other receivers may run on the host)
PID_PROG=$(ip -n "$RCV" -d -j link show rcv0 | jq '.[0].xdp.prog.id // 0')
PROG=$(bpftool -j prog show id "$PID_PROG" 2>/dev/null || echo '{}')
kill -INT "$RPID" 2>/dev/null || true
RRC=0
lr_wait_pid "$RPID" 15 || RRC=$?
lr_show_file "$LR_TMP/recv.err"
lr_check "recv exit code" "$RRC" == 0
R=$LR_TMP/recv.json
lr_check "bpftool found the program" "$(jq -r '.name // "none"' <<<"$PROG")" == xdp_count
lr_check "rx.prog.stat_runs == bpftool's run_cnt" "$(jq '.rx.prog.stat_runs' "$R")" == "$(jq '.run_cnt // -1' <<<"$PROG")"
lr_check "rx.prog.run_ns == bpftool's run_time_ns" "$(jq '.rx.prog.run_ns' "$R")" == "$(jq '.run_time_ns // -1' <<<"$PROG")"
lr_check "stat_runs > 0" "$(jq '.rx.prog.stat_runs' "$R")" ">" 0
lr_check "stat_runs < the frames the program saw" "$(jq '.rx.prog.stat_runs' "$R")" "<" \
	"$(jq '.rx | .packets + .eot_markers + .foreign + .bad_flow' "$R")"
lr_check "rx.packets == 100000" "$(jq '.rx.packets' "$R")" == 100000
lr_check "stats calibrated: what they add > what they put in a run's time > 0" \
	"$(jq '.rx.prog | .stats_added_known and .stats_added_ns > .stats_reported_ns and .stats_reported_ns > 0' "$R")" == true
lr_check_cmd "the summary gives the program's ns per frame" grep -qE '^  program   [0-9.]+ ns per frame' "$LR_TMP/recv.err"

lr_log "== two streams on one CPU: its interrupt work taken off once"
cat >"$LR_TMP/two.ini" <<EOF
[test]
duration = 1s
warmup = 200ms
max_loss = 100
[tx]
netns = $SND
interface = snd0
engine = packet
rate = max
[stream a]
dst_ip = 198.18.0.2
size = 64
queues = 0
cpus = 0
[stream b]
dst_ip = 198.18.0.2
size = 64
queues = 0
cpus = 0
src_port = 56000
[rx]
netns = $RCV
interface = rcv0
EOF
RC=0
J=$LR_TMP/two.json
timeout -k 5 60 "$LINERATE" run "$LR_TMP/two.ini" -q --json "$J" >/dev/null 2>"$LR_TMP/run.err" || RC=$?
lr_show_file "$LR_TMP/run.err"
lr_check "two streams: exit code" "$RC" == 0
# what /proc/stat saw of softirq and irq on CPU 0 over the step, with its error: each stream's own
# estimate took all of it, so the two added up would come to about twice that
lr_check "two streams: tx.cpu.softirq_ns <= CPU 0's softirq + irq over the window (+ its error, + 50 ms)" \
	"$(jq '.steps[0] | .tx.cpu.softirq_ns <= (.cpu[0].softirq + .cpu[0].irq) / 100 * (.window_s + 0.05) * 1e9
		+ .tx.cpu.softirq_error_ns + 5e7' "$J")" == true
lr_check "two streams: sender > 0" "$(jq '.steps[0].cost_ns_per_packet.sender' "$J")" ">" 0

lr_log "== bpf_stats left off: a receiver without --prog-stats counts no run"
rm -f "$LR_TMP/ready"
lr_spawn recv2 timeout -k 5 40 "$LINERATE" recv --netns "$RCV" -i rcv0 --duration 30 -q \
	--json "$LR_TMP/recv2.json" --ready-file "$LR_TMP/ready"
RPID=$LR_LAST_PID
lr_wait_for_file "$LR_TMP/ready" 15 "$RPID" || lr_die "recv never became ready"
SRC=0
timeout -k 5 30 "$LINERATE" send --netns "$SND" -i snd0 --dst-ip 198.18.0.2 --count 2000 --rate 20k -q \
	>/dev/null 2>"$LR_TMP/send2.err" || SRC=$?
lr_show_file "$LR_TMP/send2.err"
lr_check "stats off: send exit code" "$SRC" == 0
sleep 0.2
ID=$(ip -n "$RCV" -d -j link show rcv0 | jq '.[0].xdp.prog.id // 0')
PROG=$(bpftool -j prog show id "$ID" 2>/dev/null || echo '{}')
lr_check "its program is there (bpftool sees it)" "$(jq -r '.name // "none"' <<<"$PROG")" == xdp_count
# (bpftool leaves run_cnt out while it is 0)
lr_check "bpf_stats counted none of its 2000 frames" "$(jq '.run_cnt // 0' <<<"$PROG")" == 0
kill -INT "$RPID" 2>/dev/null || true
RRC=0
lr_wait_pid "$RPID" 15 || RRC=$?
lr_check "stats off: recv exit code" "$RRC" == 0
# the frames did reach the program: its own count of them, which needs no bpf_stats
lr_check "stats off: the program counted the 2000 frames (rx.packets)" \
	"$(jq '.rx.packets // -1' "$LR_TMP/recv2.json" 2>/dev/null || echo none)" == 2000

lr_log "== [test] cost = no"
sed 's/^rates = max, 50k/rate = 50k/; s/^max_loss = 100/max_loss = 100\ncost = no/' "$LR_TMP/cost.ini" >"$LR_TMP/nocost.ini"
RC=0
J=$LR_TMP/nocost.json
timeout -k 5 60 "$LINERATE" run "$LR_TMP/nocost.ini" -q --json "$J" >/dev/null 2>"$LR_TMP/run.err" || RC=$?
lr_show_file "$LR_TMP/run.err"
lr_check "cost = no: exit code" "$RC" == 0
lr_check "cost = no: cost_ns_per_packet null" "$(jq '.steps[0].cost_ns_per_packet' "$J")" == null
lr_check "cost = no: cost_note" "$(jq -r '.steps[0].cost_note' "$J")" == "[test] cost = no"
lr_check "cost = no: rx.prog null" "$(jq '.steps[0].rx.prog' "$J")" == null

sed 's/^cost = no/cost = maybe/' "$LR_TMP/nocost.ini" >"$LR_TMP/bad.ini"
RC=0
"$LINERATE" run "$LR_TMP/bad.ini" -q >/dev/null 2>"$LR_TMP/bad.err" || RC=$?
lr_check "cost = maybe: exit 2" "$RC" == 2
lr_check "cost = maybe: one line" "$(wc -l <"$LR_TMP/bad.err")" == 1
lr_check_cmd "cost = maybe: the line names the key" grep -q 'cost' "$LR_TMP/bad.err"
lr_finish
