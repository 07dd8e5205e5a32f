#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/compare on a reduced matrix: every path (the lab's and Docker's), 64-byte frames, AF_PACKET,
# short steps; then one AF_XDP search.
#
#   veth-host    [P-veth-host] veth0 <--veth--> eth0 [P-veth-c1]
#   bridge-host  [P-bridge-host] br0 --- vc1 <--veth--> eth0 [P-bridge-c1]
#   bridge-c2c   [P-bridge-c1] eth0 <--veth--> vc1 -- br0 -- vc2 <--veth--> eth0 [P-bridge-c2]
#   overlay-c2c  [P-overlay-c1] eth0 -> br0 -> vx0 ==vxlan over ul0== vx0 -> br0 -> eth0 [P-overlay-c2]
#   macvlan-c2c  [P-macvlan-c1] eth0 -- macvlan bridge on mvp0 -- eth0 [P-macvlan-c2]
#   docker-host, docker-c2c, docker-published: a private dockerd in [P-docker-host] (scripts/compare)
#   (P = lrcmpt<pid>; scripts/lab builds and removes each topology, one at a time)
#
# Checks:
#   - scripts/compare exits 0 and prints the markdown table
#   - compare.md has one row per requested cell (path, 64, packet) with a number in every column
#   - compare.csv has the header and one row per cell: status ok, max_rx_pps > 0, 0 <= loss_pct <= 100,
#     a zero-loss rate found and no higher than the maximum the sender reached (plus the resolution)
#   - compare.json is an object with one cell per path
#   - compare.md has the "Docker vs the bare bridge" rows: docker-host vs bridge-host, docker-c2c vs
#     bridge-c2c, docker-published vs docker-host, each with Mpps, ns per packet (1/pps and measured
#     path cost) and a change in %;
#     no private dockerd directory is left
#   - compare.png is a real PNG (magic bytes) and compare.svg an SVG; compare.txt has a bar per cell
#   - the CPU cost per packet: compare.md has a row per cell with total, sender, path and receiver,
#     each "N ± E", and the path over veth-host; in compare.csv the parts add up to the total and each
#     has an error; a line per path says what it adds over the bare veth; cost.png and cost.svg
#   - bad usage (unknown path) exits 2 before any lab is made
#   - files written as root: as nobody, the test plants a symlink at /tmp/linerate-compare.lock (the
#     lock compare opened with ">" before) pointing at a victim file of the test's, and makes --out
#     candidates another user controls: a directory of nobody's, a world-writable one (no sticky
#     bit) and a symlink of nobody's to a directory of root's. Each --out is refused: exit 2, one
#     line on stderr naming --out, nothing written there, no lab made. Both compare runs below run
#     with the symlink in place, and the victim stays byte-identical (and the symlink untouched)
#   - veth-host with afxdp, --threaded-napi, --always-search and iperf3: exit 0, threaded NAPI in the
#     CSV, the zero-loss rate from a search of 1..6 trials and no higher than the maximum, a TCP
#     goodput and its ratio to the raw L1 figure in compare.md (without iperf3: compare.md says it
#     was left out, and the goodput is a skip, a failure under LINERATE_REQUIRE_E2E=1)
#   - no namespace with the prefix is left afterwards
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

lr_init
COMPARE=$LR_REPO/scripts/compare
[[ -x $LR_REPO/scripts/lab ]] || lr_die "no scripts/lab"
# gnuplot and iperf3 come from scripts/deps: gnuplot missing is a failure; iperf3 missing leaves its
# goodput out, a skip of that part that LINERATE_REQUIRE_E2E=1 makes a failure, said here at once
lr_require_cmds gnuplot flock od setpriv cmp
HAVE_IPERF3=0
if command -v iperf3 >/dev/null 2>&1; then
	HAVE_IPERF3=1
else
	lr_skip_check "iperf3 TCP goodput on veth-host" "iperf3 is not installed"
fi
PREFIX=lrcmpt$$
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
OLD_LOCK=/tmp/linerate-compare.lock
VICTIM=$LR_TMP/victim
# --out candidates another user controls (in /tmp: nobody cannot enter $LR_TMP)
FOREIGN_DIR=/tmp/$PREFIX-nobody-dir
WORLD_DIR=/tmp/$PREFIX-world-dir
FOREIGN_LINK=/tmp/$PREFIX-nobody-link

# What the test planted goes too, whatever way it ends; then lib.sh's cleanup.
# shellcheck disable=SC2317 # run by the trap
planted_cleanup()
{
	local rc=$?

	set +e
	[[ -L $OLD_LOCK && $(readlink "$OLD_LOCK") == "$VICTIM" ]] && rm -f "$OLD_LOCK"
	rm -rf "$FOREIGN_DIR" "$WORLD_DIR" "$FOREIGN_LINK"
	(exit "$rc")
	lr_cleanup
}
trap planted_cleanup EXIT
OUT=$LR_TMP/out
PATHS=(veth-host bridge-host bridge-c2c overlay-c2c macvlan-c2c docker-host docker-c2c docker-published)
RES_PCT=5

# The labs' namespaces (P-TOPOLOGY-ROLE) are scripts/lab's; lr_cleanup removes any that compare
# left, whatever way this test ends (deleting one that does not exist is harmless).
for t in veth bridge overlay macvlan; do
	for r in host c1 c2 h1 h2; do
		LR_NAMESPACES+=("$PREFIX-$t-$r")
	done
done
leftover()
{
	ip netns list 2>/dev/null | awk -v p="$PREFIX-" 'index($1, p) == 1 { print $1 }'
}

lr_log "== bad usage"
RC=0
"$COMPARE" --paths nowhere --prefix "$PREFIX" --out "$LR_TMP/bad" >"$LR_TMP/bad.out" 2>"$LR_TMP/bad.err" || RC=$?
lr_check "unknown path: exit code" "$RC" == 2
lr_check_cmd "unknown path: stderr names it" grep -q "nowhere" "$LR_TMP/bad.err"
lr_check "unknown path: no lab made" "$(leftover | wc -l)" == 0

lr_log "== as nobody: a symlink at the old lock path, and --out directories root must refuse"
printf 'a file of the test: compare must leave it byte-identical\n' >"$VICTIM"
cp "$VICTIM" "$LR_TMP/victim.orig"
if [[ -L $OLD_LOCK ]]; then
	rm -f "$OLD_LOCK"	# a symlink: what a test that was killed planted
elif [[ -e $OLD_LOCK ]]; then
	# the lock file an older scripts/compare made: unused now, unless such a run still holds it
	flock -n "$OLD_LOCK" true || lr_die "an older scripts/compare is running (it holds $OLD_LOCK)"
	lr_log "removing $OLD_LOCK, left by an older scripts/compare"
	rm -f "$OLD_LOCK"
fi
"${NOBODY[@]}" ln -s "$VICTIM" "$OLD_LOCK" || lr_die "nobody could not plant a symlink at $OLD_LOCK"
"${NOBODY[@]}" mkdir "$FOREIGN_DIR" || lr_die "nobody could not make $FOREIGN_DIR"
mkdir -m 0777 "$WORLD_DIR"
mkdir "$LR_TMP/roots"
"${NOBODY[@]}" ln -s "$LR_TMP/roots" "$FOREIGN_LINK" || lr_die "nobody could not plant $FOREIGN_LINK"
for o in "$FOREIGN_DIR:owned by nobody" "$WORLD_DIR:writable by all, no sticky bit" \
	"$FOREIGN_LINK:a symlink of nobody's to a directory of root's"; do
	dir=${o%%:*} what=${o#*:}
	RC=0
	timeout -k 5 90 "$COMPARE" --paths veth-host --sizes 64 --engines packet --seconds 0.2 --trial 0.2 \
		--max-trials 1 --no-iperf --prefix "$PREFIX" --out "$dir" >"$LR_TMP/foreign.out" 2>"$LR_TMP/foreign.err" || RC=$?
	lr_log "--out $what: $(head -c 300 "$LR_TMP/foreign.err")"
	lr_check "--out $what: exit code" "$RC" == 2
	lr_check "--out $what: one line on stderr" "$(wc -l <"$LR_TMP/foreign.err")" == 1
	lr_check_cmd "--out $what: the line names --out" grep -q -- '--out' "$LR_TMP/foreign.err"
	lr_check "--out $what: nothing written there" "$(find -L "$dir" -mindepth 1 | wc -l)" == 0
	lr_check "--out $what: no lab made" "$(leftover | wc -l)" == 0
done
lr_check_cmd "victim byte-identical after the refused runs" cmp -s "$VICTIM" "$LR_TMP/victim.orig"

lr_log "== scripts/compare --paths all --sizes 64 --engines packet --seconds 1 --trial 0.5"
START=$(date +%s)
RC=0
lr_spawn compare timeout -k 10 200 "$COMPARE" --paths all --sizes 64 --engines packet --seconds 1 --trial 0.5 \
	--resolution "$RES_PCT%" --max-trials 6 --no-iperf --prefix "$PREFIX" --out "$OUT"
lr_wait_pid "$LR_LAST_PID" 220 || RC=$?
lr_log "compare took $(($(date +%s) - START)) s"
lr_show_file "$LR_TMP/compare.err"
lr_check "exit code" "$RC" == 0
lr_check_cmd "the markdown table went to stdout" grep -q '^| path | size B | engine |' "$LR_TMP/compare.out"

MD=$OUT/compare.md CSV=$OUT/compare.csv
lr_check_cmd "compare.md exists" test -s "$MD"
for p in "${PATHS[@]}"; do
	lr_check "compare.md: rows for $p 64 B packet" \
		"$(grep -cE "^\| $p \| 64 \| packet( \([a-z0-9_]+\))? \| [0-9]+\.[0-9]+ \| [0-9]+\.[0-9]+ \| [0-9]+\.[0-9]+ \| [0-9.]+ / [0-9.]+ \| [0-9]+\.[0-9]+" "$MD")" == 1
done
# a cell whose max-rate step lost nothing says so in words, and its zero-loss figure is the max one
lr_check "compare.md: cells marked 'max step, no loss' (one per max-rate-step cell in the CSV)" \
	"$(grep -c '(max step, no loss) |$' "$MD")" == "$(grep -c ',"max-rate-step",' "$CSV")"
lr_check "compare.md: of those, cells whose zero-loss figure differs from the max Mpps" \
	"$(awk -F' [|] ' '/\(max step, no loss\) [|]$/ { split($8, z, " "); if (z[1] != $4) n++ } END { print n + 0 }' "$MD")" == 0

lr_check_cmd "compare.csv exists" test -s "$CSV"
lr_check "compare.csv: header + one row per cell" "$(wc -l <"$CSV")" == $((${#PATHS[@]} + 1))
lr_check_cmd "compare.csv: header names the columns" \
	grep -q '^path,topology,size,requested_size,engine,tx_mode,status,max_tx_pps,max_rx_pps,max_l1_gbps,loss_pct' "$CSV"
# columns by name, so the checks do not depend on their order
col()
{
	awk -F, -v want="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == want) c = i; next } { gsub(/"/, "", $c); print $c }' "$CSV"
}
for p in "${PATHS[@]}"; do
	row=$(grep -c "^\"$p\"," "$CSV" || true)
	lr_check "compare.csv: one row for $p" "$row" == 1
done
mapfile -t STATUS < <(col status)
mapfile -t MTX < <(col max_tx_pps)
mapfile -t MRX < <(col max_rx_pps)
mapfile -t LOSS < <(col loss_pct)
mapfile -t ZL < <(col zero_loss_pps)
mapfile -t PATHCOL < <(col path)
for i in "${!PATHCOL[@]}"; do
	p=${PATHCOL[$i]}
	lr_check "$p: status" "${STATUS[$i]}" == ok
	lr_check "$p: max_rx_pps > 0" "${MRX[$i]:-none}" ">" 0
	lr_check "$p: loss_pct >= 0" "${LOSS[$i]:-none}" ">=" 0
	lr_check "$p: loss_pct <= 100" "${LOSS[$i]:-none}" "<=" 100
	lr_check "$p: zero-loss rate found (> 0)" "${ZL[$i]:-none}" ">" 0
	lim=$(awk -v m="${MTX[$i]:-0}" -v r="$RES_PCT" 'BEGIN { printf "%.0f", m * (1 + r / 100) }')
	lr_check "$p: zero-loss rate <= the maximum the sender reached (+${RES_PCT} %)" "${ZL[$i]:-none}" "<=" "$lim"
done

lr_jvalid "$OUT/compare.json"
lr_check "compare.json: one cell per path" "$(jq '.cells | length' "$OUT/compare.json")" == ${#PATHS[@]}
lr_check "compare.json: no failure counted" "$(lr_jget "$OUT/compare.json" .failed)" == 0

lr_check "compare.png: PNG magic bytes" "$(od -An -tx1 -N8 "$OUT/compare.png" 2>/dev/null | tr -d ' \n')" == 89504e470d0a1a0a
lr_check_cmd "compare.svg: an SVG document" grep -q '<svg' "$OUT/compare.svg"
lr_check "compare.txt: one bar per cell" "$(grep -cE '^  [a-z0-9-]+( [0-9]+)? +packet +#+ +[0-9.]+$' "$OUT/compare.txt")" == ${#PATHS[@]}

lr_check "no lab namespace left (prefix $PREFIX)" "$(leftover | wc -l)" == 0
for w in "host → container: Docker's iptables \+ br_netfilter \| 64 \| packet \| [0-9.]+ \(bridge-host\)" \
	"container → container: Docker's FORWARD chain \+ br_netfilter \| 64 \| packet \| [0-9.]+ \(bridge-c2c\)" \
	"published port: a routed hop \+ DNAT \+ conntrack \| 64 \| packet \| [0-9.]+ \(docker-host\)"; do
	lr_check "compare.md: Docker vs bare row '${w%%:*}'" \
		"$(grep -cE "^\| $w \| [0-9.]+ \| -?[0-9]+ \| -?[0-9]+ ± [0-9]+ \| -?[0-9.]+ \|$" "$MD")" == 1
done

# The CPU per packet: a row per cell in compare.md, parts that add up to the total in the CSV,
# each with its error, and what each path adds over the bare veth.
lr_check_cmd "compare.md: the cost table's header" \
	grep -q '^| path | size B | engine | total ns | sender ns | path ns | receiver ns | path over veth-host ns |$' "$MD"
NUM='-?[0-9]+ ± [0-9]+'
for p in "${PATHS[@]}"; do
	lr_check "compare.md: one cost row for $p 64 B packet" \
		"$(grep -cE "^\| $p \| 64 \| packet \| $NUM \| $NUM \| $NUM \| $NUM \| ($NUM|\(baseline\)) \|$" "$MD")" == 1
done
mapfile -t CT < <(col cost_total_ns)
mapfile -t CS < <(col cost_sender_ns)
mapfile -t CP < <(col cost_path_ns)
mapfile -t CR < <(col cost_receiver_ns)
for e in total sender path receiver; do
	mapfile -t "ERR_$e" < <(col "cost_${e}_err_ns")
done
for i in "${!PATHCOL[@]}"; do
	p=${PATHCOL[$i]}
	lr_check "$p: cost total > 0" "${CT[$i]:-none}" ">" 0
	lr_check "$p: cost sender > 0" "${CS[$i]:-none}" ">" 0
	lr_check "$p: cost receiver > 0 (the program was timed)" "${CR[$i]:-none}" ">" 0
	# each part is rounded to 0.1 ns in the CSV
	lr_check "$p: sender + path + receiver = total (within rounding)" \
		"$(awk -v t="${CT[$i]:-0}" -v s="${CS[$i]:-0}" -v q="${CP[$i]:-0}" -v r="${CR[$i]:-0}" \
			'BEGIN { d = s + q + r - t; print (d < 0 ? -d : d) <= 0.2 ? "yes" : "no: " d }')" == yes
	for e in total sender path receiver; do
		v=ERR_$e"[$i]"
		lr_check "$p: the $e part has an error (>= 0)" "${!v:-none}" ">=" 0
	done
	[[ $p == veth-host ]] && continue
	lr_check "compare.md: what $p adds over the bare veth" \
		"$(grep -cE "^- 64 B, packet: the bare veth's path costs $NUM ns a packet; .*$p adds $NUM" "$MD")" == 1
done
lr_check "cost.png: PNG magic bytes" "$(od -An -tx1 -N8 "$OUT/cost.png" 2>/dev/null | tr -d ' \n')" == 89504e470d0a1a0a
lr_check_cmd "cost.svg: an SVG document" grep -q '<svg' "$OUT/cost.svg"
lr_check "no private dockerd left (its directory)" "$(find /tmp -maxdepth 1 -name 'lr-dockerd.*' -newer "$VICTIM" | wc -l)" == 0

lr_log "== veth-host, afxdp, threaded NAPI, --always-search, iperf3"
OUT2=$LR_TMP/out2
CSV=$OUT2/compare.csv
RC=0
lr_spawn compare2 timeout -k 10 90 "$COMPARE" --paths veth-host --sizes 64 --engines afxdp --seconds 1 --trial 0.5 \
	--resolution "$RES_PCT%" --max-trials 6 --always-search --threaded-napi --prefix "$PREFIX" --out "$OUT2"
lr_wait_pid "$LR_LAST_PID" 110 || RC=$?
lr_show_file "$LR_TMP/compare2.err"
lr_check "exit code" "$RC" == 0
lr_check "compare.csv: header + one row" "$(wc -l <"$CSV")" == 2
lr_check "engine" "$(col engine)" == afxdp
lr_check "status" "$(col status)" == ok
lr_check "threaded NAPI reported" "$(col threaded_napi)" == true
lr_check "the zero-loss rate came from a search" "$(col zero_loss_from)" == search
lr_check "search trials" "$(col zero_loss_trials)" ">=" 1
lr_check "search trials <= --max-trials" "$(col zero_loss_trials)" "<=" 6
lr_check "zero-loss rate > 0" "$(col zero_loss_pps)" ">" 0
lim=$(awk -v m="$(col max_tx_pps)" -v r="$RES_PCT" 'BEGIN { printf "%.0f", m * (1 + r / 100) }')
lr_check "zero-loss rate <= the maximum the sender reached (+${RES_PCT} %)" "$(col zero_loss_pps)" "<=" "$lim"
if ((HAVE_IPERF3)); then
	lr_check "iperf3 TCP goodput (Gbit/s) > 0" "$(jq '.iperf3[0].goodput_gbps // 0' "$OUT2/compare.json")" ">" 0
	lr_check_cmd "compare.md: the iperf3 table compares with the raw figure" \
		grep -qE '^\| veth-host \| [0-9.]+ \| [0-9]+ \| [0-9.]+× the 64-byte L1 figure' "$OUT2/compare.md"
else
	lr_check_cmd "compare.md: a note says iperf3 was left out" grep -q 'iperf3 is not installed' "$OUT2/compare.md"
fi
lr_check "no lab namespace left (prefix $PREFIX)" "$(leftover | wc -l)" == 0

lr_log "== after both runs, with nobody's symlink at $OLD_LOCK"
lr_check_cmd "victim byte-identical" cmp -s "$VICTIM" "$LR_TMP/victim.orig"
lr_check "$OLD_LOCK is still nobody's symlink to the victim" \
	"$(stat -c %u "$OLD_LOCK") $(readlink "$OLD_LOCK")" == "65534 $VICTIM"
lr_finish
