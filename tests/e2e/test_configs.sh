#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every file in configs/ runs as shipped: the lab its header names, then `linerate run FILE`.
#
#   veth     [P-veth-host] veth0 198.18.1.1 <--veth--> eth0 198.18.1.2 [P-veth-c1]
#            (--queues 2: two TX and two RX queues at both ends)
#   bridge   [P-bridge-c1] eth0 198.18.2.2 <--> vc1 -[br0 in P-bridge-host]- vc2 <--> eth0 198.18.2.3 [P-bridge-c2]
#   routed   [P-routed-host] veth0 198.18.5.1 <--> eth0 [P-routed-rtr, ip_forward] eth1 <--> eth0 198.18.6.2 [P-routed-c1]
#   (P = lrcfgPID; scripts/lab builds each one as its header draws it, and takes it down again)
#
# Each file says in one header line, before its first section, the one command that prepares its
# topology: "; topology: scripts/lab up TOPOLOGY [--queues N] [--threaded-napi]". The test does what
# a user does: that command, `linerate run FILE`, `scripts/lab down TOPOLOGY`. The one difference
# from a user's run: the lab runs with --prefix P and the test runs a copy of FILE with "lrlab-"
# rewritten to "P-", so it never touches a user's lab (prefix lrlab). The trap takes every lab with
# prefix P down, whatever way the test ends.
#
# Checks:
#   - bad files: one FILE:LINE line, exit 2, nothing touched
#   - configs/ holds at least 8 files; each has exactly one "; topology:" line, in its header, in
#     the form above (a file without one fails the test)
#   - `linerate run --check FILE` exits 0; the lab command exits 0 and `scripts/lab status --json`
#     says up; [tx] and [rx] (netns, interface) are the ends of one of the lab's paths, and every
#     src_ip, dst_ip, src_mac, dst_mac in [tx] and the [stream] sections is that path's
#   - `linerate run FILE --json --csv -q` exits 0; the CSV has a header and one row per step
#   - every figure of the text report equals the JSON's to the printed digits (run_table.py: each
#     step's row but its pass column, the counts of "where the frames went", the cost line, each
#     search's found rate, L1 rate and latency); each step's sizes[] adds up to tx.completed, and a
#     step of one size has size == sizes[0].size
#   - sweep files: one step per size x rate x repeat; every step passes (or fails only as
#     sender-limited, a busy machine's sender: then exit code 3 counts as 0), is settled by its
#     end-of-test markers, rx.packets == tx.packets, lost 0, and sent as offered (within 5 %) or
#     says it did not (sender_limited: how fast a busy machine's sender is, not a fault)
#   - round-trip files (mode = rtt): as sweeps, and every step rtt_settled with forward and return
#     lost 0, forward.sent == tx.queued, received == sent both ways, an RTT p50 > 0
#   - search files (mode = throughput): one search per size, each found a rate > 0 and no higher
#     than offered, in at most max_trials trials; the found rate's trial passed with lost 0, settled
#     and rx.packets == tx.packets; one step per trial
#   - 2-queue files: both TX queues sent and both RX queues received
#   - multi-stream: one worker per stream, on queues 0 and 1; bytes per frame between the two sizes;
#     every step's size null and sizes[] 1518 and 64, and the table's size column "mixed"
#   - no XDP program left on the receiving interface; `scripts/lab down` exits 0 and leaves no
#     namespace of that lab; none with prefix P at the end
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CONFIGS=$LR_REPO/configs
LAB=$LR_REPO/scripts/lab
PFX=lrcfg$$
HEADER_RE='^; topology: scripts/lab up [a-z]+( --queues [1-9][0-9]?| --threaded-napi)*$'

lr_init
lr_require_cmds sed grep flock python3
[[ -x $LAB ]] || lr_die "no scripts/lab at $LAB"

lr_lab_prefix "$PFX"

our_namespaces()
{
	ip netns list | awk -v p="$1-" 'index($1, p) == 1 { print $1 }'
}

# ini FILE: one "SECTION<TAB>KEY<TAB>VALUE" line per key (comments and blanks dropped).
ini()
{
	awk '
		/^[[:space:]]*([;#]|$)/ { next }
		/^[[:space:]]*\[/ { s = $0; gsub(/^[[:space:]]*\[|\][[:space:]]*$/, "", s); next }
		{
			line = $0
			sub(/[[:space:]];.*$/, "", line)
			k = line; sub(/=.*/, "", k); gsub(/[[:space:]]/, "", k)
			v = line; sub(/^[^=]*=/, "", v); gsub(/^[[:space:]]+|[[:space:]]+$/, "", v)
			print s "\t" k "\t" v
		}' "$1"
}

# ini_get FILE SECTION KEY [DEFAULT]
ini_get()
{
	local v

	v=$(ini "$1" | awk -F'\t' -v s="$2" -v k="$3" '$1 == s && $2 == k { print $3; exit }')
	printf '%s\n' "${v:-${4:-}}"
}

# lab_matches F CFG STATUS: the file's namespaces, interfaces, addresses and MACs are the lab's.
lab_matches()
{
	local f=$1 cfg=$2 st=$3 ends sec key val want sip smac dip dmac
	local -A end=()

	ends=$(jq -r --arg tns "$(ini_get "$cfg" tx netns)" --arg tif "$(ini_get "$cfg" tx interface)" \
		--arg rns "$(ini_get "$cfg" rx netns)" --arg rif "$(ini_get "$cfg" rx interface)" '
		.endpoints as $e | [.paths[] as $p
			| ($e[] | select(.name == $p.from)) as $f | ($e[] | select(.name == $p.to)) as $t
			| select($f.netns == $tns and $f.ifname == $tif and $t.netns == $rns and $t.ifname == $rif)
			| "\($p.name) \($f.ipv4) \($f.mac) \($t.ipv4) \($t.mac)"] | first // "none"' "$st" 2>/dev/null) ||
		ends=none
	lr_check "$f: [tx] and [rx] are the two ends of a lab path" "${ends%% *}" != none
	[[ $ends != none ]] || return 0
	read -r _ sip smac dip dmac <<<"$ends"
	end=([src_ip]=$sip [src_mac]=$smac [dst_ip]=$dip [dst_mac]=$dmac)
	while IFS=$'\t' read -r sec key val; do
		[[ $sec == tx || $sec == stream\ * ]] || continue
		want=${end[$key]:-}
		[[ -n $want ]] || continue
		lr_check "$f: [$sec] $key is the lab's" "${val,,}" == "${want,,}"
	done < <(ini "$cfg")
}

# check_rtt F JSON: round-trip steps, each split into both directions, exact and loss-free.
check_rtt()
{
	local f=$1 j=$2 bad

	bad=$(jq '[.steps[] | select(.rtt_settled != true or .forward.lost != 0 or .return.lost != 0
		or .forward.sent != .tx.queued or .forward.received != .forward.sent
		or .return.received != .return.sent or .return.received != .rx.packets
		or (.rtt_ns.p50 // 0) <= 0 or .rtt_ns.count != .latency_ns.count)] | length' "$j" 2>/dev/null || echo missing)
	lr_check "$f: round-trip steps not exact both ways (or without an RTT)" "$bad" == 0
}

# check_sweep F JSON CSV CHECKLINE CFG
check_sweep()
{
	local f=$1 j=$2 c=$3 line=$4 cfg=$5 sizes rates repeat steps n failed unsettled uneven lost short

	sizes=$(sed -nE 's/.* ([0-9]+) sizes?, .*/\1/p' <<<"$line")
	rates=$(sed -nE 's/.* ([0-9]+) rates?, .*/\1/p' <<<"$line")
	repeat=$(ini_get "$cfg" test repeat 1)
	steps=$((${sizes:-0} * ${rates:-0} * repeat))
	# one jq for every count (jq takes tens of milliseconds to start)
	read -r n failed unsettled uneven lost short < <(jq -r '.steps | [length,
		([.[] | select((.pass or .sender_limited) | not)] | length),
		([.[] | select(.rx.tail_settled | not)] | length),
		([.[] | select(.rx.packets != .tx.packets)] | length),
		([.[] | select(.rx.lost != 0)] | length),
		([.[] | select(.offered_pps != null and (.tx.packets < 0.95 * .offered_pps * .window_s) and
			(.sender_limited | not))] | length)]
		| @tsv' "$j" 2>/dev/null || echo missing)
	lr_check "$f: steps (sizes x rates x repeat)" "$n" == "$steps"
	lr_check "$f: steps that failed (other than sender-limited)" "${failed:-missing}" == 0
	lr_check "$f: steps not settled by their markers" "${unsettled:-missing}" == 0
	lr_check "$f: steps where rx.packets != tx.packets" "${uneven:-missing}" == 0
	lr_check "$f: steps that lost frames" "${lost:-missing}" == 0
	lr_check "$f: steps that sent less than 95 % of the offered frames, not said sender-limited" "${short:-missing}" == 0
	lr_check "$f: CSV rows (header + steps)" "$(wc -l <"$c")" == $((steps + 1))
}

# check_search F JSON CSV CHECKLINE CFG
check_search()
{
	local f=$1 j=$2 c=$3 line=$4 cfg=$5 sizes max_trials searches notfound badrate long notclean trials steps

	sizes=$(sed -nE 's/.* ([0-9]+) sizes?, .*/\1/p' <<<"$line")
	max_trials=$(ini_get "$cfg" test max_trials 16)
	read -r searches notfound badrate long notclean trials steps < <(jq -r --argjson m "$max_trials" '[
		(.throughput | length),
		([.throughput[] | select(.found | not)] | length),
		([.throughput[] | select((.rate_pps // 0) <= 0 or .rate_pps > .offered_pps)] | length),
		([.throughput[] | select((.trials | length) > $m)] | length),
		# the found rate: a trial at that offered rate that passed, lost nothing, settled
		([.throughput[] | . as $t | [.trials[] | select(.offered_pps == $t.offered_pps and .pass
			and .rx.lost == 0 and .rx.tail_settled and .rx.packets == .tx.packets)] | select(length == 0)] | length),
		([.throughput[].trials | length] | add // 0),
		(.steps | length)] | @tsv' "$j" 2>/dev/null || echo missing)
	lr_log "$f: found $(jq -r '[.throughput[] | "\(.size) B: \(.rate_pps // "none") pps in \(.trials | length) trial(s)"]
		| join("; ")' "$j" 2>/dev/null)"
	lr_check "$f: searches (one per size)" "$searches" == "${sizes:-0}"
	lr_check "$f: searches that found no rate" "${notfound:-missing}" == 0
	lr_check "$f: found rates <= 0 or above the offered rate" "${badrate:-missing}" == 0
	lr_check "$f: searches with more than max_trials ($max_trials) trials" "${long:-missing}" == 0
	lr_check "$f: found rates without a clean trial (passed, lost 0, settled, rx == tx)" "${notclean:-missing}" == 0
	lr_check "$f: steps (one per trial)" "${steps:-missing}" == "${trials:-0}"
	lr_check "$f: CSV rows (header + steps)" "$(wc -l <"$c")" == $((${trials:-0} + 1))
}

# run_file F: the whole user's sequence for configs/F.
run_file()
{
	local f=$1 src=$CONFIGS/$1 cfg=$LR_TMP/$1 j=$LR_TMP/$1.json c=$LR_TMP/$1.csv hdr n first line rc=0 mode topo t0 tr
	local -a lab

	lr_log "== $f"
	t0=$(date +%s%N)
	n=$(grep -c '^; topology:' "$src" || true)
	lr_check "$f: '; topology:' header lines" "$n" == 1
	((n == 1)) || return 0
	hdr=$(grep -m1 -n '^; topology:' "$src")
	first=$(grep -m1 -n '^[[:space:]]*\[' "$src" | cut -d: -f1)
	lr_check "$f: the topology line comes before the first section" "${hdr%%:*}" "<" "${first:-1}"
	hdr=${hdr#*:}
	if ! [[ $hdr =~ $HEADER_RE ]]; then
		lr_fail "$f: topology line is '; topology: scripts/lab up TOPOLOGY [--queues N] [--threaded-napi]'" "$hdr"
		return 0
	fi
	lr_pass "$f: $hdr"
	read -ra lab <<<"${hdr#; topology: scripts/lab }"
	topo=${lab[1]}

	sed -e "s/lrlab-/$PFX-/g" "$src" >"$cfg"
	line=$("$LINERATE" run --check "$cfg" 2>&1) || rc=$?
	lr_check "$f: --check exit code" "$rc" == 0
	lr_log "$f: $line"

	lr_log "run: scripts/lab ${lab[*]} --prefix $PFX"
	lr_lab up "${lab[@]}" --prefix "$PFX"
	lr_check "$f: scripts/lab ${lab[*]}: exit code" "$LAB_RC" == 0
	if ((LAB_RC != 0)); then
		lr_show_file "$LR_TMP/up.err"
		return 0
	fi
	lr_lab status status "$topo" --prefix "$PFX" --json
	lr_check "$f: the lab is up" "$(jq -r .up "$LR_TMP/status.out" 2>/dev/null)" == true
	lab_matches "$f" "$cfg" "$LR_TMP/status.out"

	lr_log "run: linerate run $f --json --csv -q"
	rc=0
	tr=$(date +%s%N)
	timeout -k 5 150 "$LINERATE" run "$cfg" --json "$j" --csv "$c" -q >"$LR_TMP/$f.out" 2>"$LR_TMP/$f.err" || rc=$?
	lr_log "$f: linerate run took $((($(date +%s%N) - tr) / 1000000)) ms"
	lr_show_file "$LR_TMP/$f.out"
	lr_show_file "$LR_TMP/$f.err"
	# 3 where only sender-limited steps failed: how fast this machine's sender is, not a fault of
	# the file or of run; the checks below hold every step to the rest
	if ((rc == 3)) && [[ $(jq '[.steps[] | select((.pass or .sender_limited) | not)] | length' "$j" 2>/dev/null) == 0 ]]; then
		lr_log "$f: exit code 3: $(jq '[.steps[] | select(.sender_limited)] | length' "$j") step(s) sender-limited here"
		rc=0
	fi
	lr_check "$f: exit code" "$rc" == 0
	lr_jvalid "$j"
	rc=0
	python3 "$LR_E2E_DIR/run_table.py" "$LR_TMP/$f.out" "$j" >"$LR_TMP/$f.table" 2>&1 || rc=$?
	lr_show_file "$LR_TMP/$f.table"
	lr_check "$f: every figure of the report is the JSON's (run_table.py exit code)" "$rc" == 0
	lr_check "$f: steps whose sizes[] packets do not add up to tx.completed" \
		"$(jq '[.steps[] | select(([.sizes[].packets] | add) != .tx.completed)] | length' "$j" 2>&1)" == 0
	lr_check "$f: single-size steps whose size is not sizes[0].size" \
		"$(jq '[.steps[] | select((.sizes | length) == 1 and .size != .sizes[0].size)] | length' "$j" 2>&1)" == 0
	mode=$(lr_jget "$j" .mode)
	case $mode in
	sweep) check_sweep "$f" "$j" "$c" "$line" "$cfg" ;;
	throughput) check_search "$f" "$j" "$c" "$line" "$cfg" ;;
	rtt)
		check_sweep "$f" "$j" "$c" "$line" "$cfg"
		check_rtt "$f" "$j"
		;;
	*) lr_fail "$f: mode sweep, throughput or rtt" "$mode" ;;
	esac
	case $f in
	veth-2queue.ini)
		lr_check "2 queues: both TX queues sent in every step" \
			"$(jq '[.steps[] | select([.tx.per_queue[] | select(.packets > 0)] | length < 2)] | length' "$j")" == 0
		lr_check "2 queues: both RX queues received in every step" \
			"$(jq '[.steps[] | select((.rx.per_queue | length) < 2)] | length' "$j")" == 0
		;;
	multi-stream.ini)
		lr_check "multi-stream: two workers (one per stream)" "$(jq '.steps[0].tx.per_queue | length' "$j")" == 2
		lr_check "multi-stream: streams on queues 0 and 1" "$(jq -c '[.steps[0].rx.per_queue[].queue]' "$j")" == "[0,1]"
		lr_check "multi-stream: bytes per frame between the two sizes (64 and 1518) in every step" \
			"$(jq '[.steps[] | (.rx.bps_l1 / 8 / .rx.pps - 20) | select(. < 200 or . > 1400)] | length' "$j")" == 0
		lr_check "multi-stream: every step's size null and sizes[] 1518 and 64" \
			"$(jq -c '[.steps[] | [.size, [.sizes[].size]]] | unique' "$j")" == '[[null,[1518,64]]]'
		lr_check "multi-stream: the table's size column says mixed in every step" \
			"$(grep -cE '^[0-9]+ +mixed ' "$LR_TMP/$f.out" || true)" == "$(jq '.steps | length' "$j")"
		;;
	esac
	lr_check_cmd "$f: no XDP program left on the receiving interface" \
		lr_xdp_absent "$(ini_get "$cfg" rx netns)" "$(ini_get "$cfg" rx interface)"

	lr_lab down down "$topo" --prefix "$PFX"
	lr_check "$f: scripts/lab down $topo: exit code" "$LAB_RC" == 0
	lr_check "$f: namespaces of the $topo lab left" "$(our_namespaces "$PFX-$topo" | wc -l)" == 0
	lr_log "$f: took $((($(date +%s%N) - t0) / 1000000)) ms"
}

lr_log "== bad files: one FILE:LINE line, exit 2, nothing touched"
printf '[test]\nduration = 1s\n[tx]\ninterface = veth0\nrate = 5 parsecs\n' >"$LR_TMP/bad.ini"
for args in "--check $LR_TMP/bad.ini" "$LR_TMP/bad.ini" "$LR_TMP/missing.ini"; do
	RC=0
	# shellcheck disable=SC2086
	"$LINERATE" run $args >"$LR_TMP/bad.out" 2>"$LR_TMP/bad.err" || RC=$?
	lr_check "run $args: exit code" "$RC" == 2
	lr_check "run $args: one line on stderr" "$(wc -l <"$LR_TMP/bad.err")" == 1
	lr_check_cmd "run $args: the line names the file (and line)" grep -Eq "bad.ini:5: |missing.ini" "$LR_TMP/bad.err"
done
lr_check_cmd "a bad value is reported as FILE:LINE" grep -q "^$LR_TMP/bad.ini:5: " <(
	"$LINERATE" run --check "$LR_TMP/bad.ini" 2>&1)

FILES=()
for p in "$CONFIGS"/*.ini; do
	[[ -e $p ]] && FILES+=("$(basename "$p")")
done
lr_check "files in configs/" "${#FILES[@]}" ">=" 8
for f in "${FILES[@]}"; do
	run_file "$f"
done

lr_check "namespaces with prefix $PFX left" "$(our_namespaces "$PFX" | wc -l)" == 0
lr_finish
