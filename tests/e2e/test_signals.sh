#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# recv detaches its XDP program however it ends: SIGINT (clean summary) or SIGKILL (bpf_link).
#
#   ns lr-signals-a-PID                   ns lr-signals-b-PID
#   +-------------------------+          +------------------------------+
#   |   a0 198.18.0.1/30      |<-veth--->|   b0 198.18.0.2/30           |
#   +-------------------------+          |   linerate recv --duration 60|
#                                        +------------------------------+
#
# Checks (no traffic is sent):
#   1. recv --duration 60 --ready-file: ready file appears, `ip -d link show b0` shows XDP
#   2. SIGINT: recv exits within 10 s with code 0 and prints its summary (a line naming the
#      received frames, on stdout or stderr); no XDP program remains on b0
#   3. recv again; SIGKILL: no XDP program remains on b0 (the bpf_link died with the process,
#      allowed 2 s to settle)
#   4. (same for SIGTERM as for SIGINT: exit 0, summary, detached)
#   5. `linerate run` (a sweep of 1 s steps, a0 -> b0) interrupted in its second step by SIGINT:
#      exit 130 (SIGTERM: 143), one line saying which signal, during which step, and how many
#      finished; the finished step is in --json and --csv; no XDP program left on b0
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

lr_init
lr_netns_add NA a
lr_netns_add NB b
lr_veth "$NA" a0 "$NB" b0
lr_addr "$NA" a0 198.18.0.1/30
lr_addr "$NB" b0 198.18.0.2/30

# start_recv TAG: recv under `ip netns exec` (it execs, so the PID is linerate's own).
start_recv()
{
	rm -f "$LR_TMP/ready.$1"
	lr_spawn "recv.$1" ip netns exec "$NB" "$LINERATE" recv -i b0 --duration 60 \
		--ready-file "$LR_TMP/ready.$1"
	RPID=$LR_LAST_PID
	if ! lr_wait_for_file "$LR_TMP/ready.$1" 15 "$RPID"; then
		lr_show_file "$LR_TMP/recv.$1.err"
		lr_die "recv ($1) never became ready"
	fi
	lr_check_cmd "[$1] XDP program attached to b0 once ready" lr_xdp_attached "$NB" b0
	lr_log "[$1] $(ip -n "$NB" -d link show dev b0 | grep -E 'xdp' | head -2 | tr -s ' ' | tr '\n' '|')"
}

# detached_within TAG SECONDS
# shellcheck disable=SC2317 # called through lr_check_cmd
detached_within()
{
	local i

	for ((i = 0; i < $2 * 20; i++)); do
		lr_xdp_absent "$NB" b0 && return 0
		sleep 0.05
	done
	return 1
}

for sig in INT TERM; do
	start_recv "$sig"
	kill "-$sig" "$RPID"
	rc=0
	lr_wait_pid "$RPID" 10 || rc=$?
	lr_check "[$sig] recv exit code" "$rc" == 0
	lr_show_file "$LR_TMP/recv.$sig.out"
	lr_show_file "$LR_TMP/recv.$sig.err"
	lr_check "[$sig] summary lines naming received frames (stdout+stderr)" \
		"$(cat "$LR_TMP/recv.$sig.out" "$LR_TMP/recv.$sig.err" | grep -Eci 'received|frames|packets' || true)" ">" 0
	lr_check_cmd "[$sig] no XDP program left on b0" lr_xdp_absent "$NB" b0
done

start_recv KILL
rc=0
exec 3>&2 2>/dev/null	# bash reports "Killed" for the child it was told to kill: not news
kill -KILL "$RPID"
lr_wait_pid "$RPID" 10 || rc=$?
exec 2>&3 3>&-
lr_check "[KILL] recv exit status (128+9)" "$rc" == 137
lr_check_cmd "[KILL] no XDP program left on b0 (within 2 s)" detached_within KILL 2

cat >"$LR_TMP/sweep.ini" <<EOT
[test]
duration = 1s
warmup = 0
repeat = 6
[tx]
netns = $NA
interface = a0
dst_ip = 198.18.0.2
rate = 5k
[rx]
netns = $NB
interface = b0
EOT
for sig in INT TERM; do
	lr_log "== run interrupted by SIG$sig"
	lr_spawn "run.$sig" "$LINERATE" run "$LR_TMP/sweep.ini" --json "$LR_TMP/run.$sig.json" --csv "$LR_TMP/run.$sig.csv"
	PID=$LR_LAST_PID
	for _ in $(seq 200); do
		grep -q '^linerate run: step 1 ' "$LR_TMP/run.$sig.err" 2>/dev/null && break
		sleep 0.05
	done
	sleep 0.3
	kill "-$sig" "$PID"
	rc=0
	lr_wait_pid "$PID" 15 || rc=$?
	lr_show_file "$LR_TMP/run.$sig.err"
	want=$((128 + $(kill -l "$sig")))
	lr_check "[run $sig] exit code (128 + SIG$sig)" "$rc" == "$want"
	lr_check "[run $sig] one line says what was interrupted" \
		"$(grep -c "^linerate run: interrupted by SIG$sig during step 2 (64 B at 5.000 k pps); 1 finished step" \
			"$LR_TMP/run.$sig.err" || true)" == 1
	lr_jvalid "$LR_TMP/run.$sig.json"
	lr_check "[run $sig] the finished step is in the JSON" "$(jq '.steps | length' "$LR_TMP/run.$sig.json")" == 1
	lr_check "[run $sig] and in the CSV (header + 1)" "$(wc -l <"$LR_TMP/run.$sig.csv")" == 2
	lr_check_cmd "[run $sig] no XDP program left on b0" lr_xdp_absent "$NB" b0
done
lr_finish
