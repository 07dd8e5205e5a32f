#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Output files as root in directories other users can write: no file clobbered through a planted
# symlink, modes from the umask (captures 0600 at most), nothing half-written left behind.
#
#   ns lr-file_safety-snd-PID            ns lr-file_safety-rcv-PID
#   +-------------------------+          +------------------------------+
#   | linerate send           |          | linerate recv (XDP)          |
#   |   snd0 198.18.0.1/30    |<-veth--->|   rcv0 198.18.0.2/30         |
#   +-------------------------+          +------------------------------+
#
#   $LR_TMP/victim          a root-owned file the planted symlinks point at
#   $LR_TMP/sticky          root's, mode 1777 (like /tmp): followed only with fs.protected_symlinks=0
#   $LR_TMP/nobodys         owned by nobody, mode 1777: a symlink there is followed whatever the sysctl
#
# Checks, in each of the two directories:
#   - as nobody (setpriv), plant a symlink to the victim at every name a run could write: the
#     outputs of recv (--json, --ready-file, --pcap), send (--json, --pcap), run (--json, --csv,
#     [tx]/[rx] pcap) and probe (--json), and each of them with ".tmp" appended
#   - the root runs succeed; the victim is byte-identical afterwards; every output is a regular
#     file under its name (the symlink replaced, not followed) with valid contents
# Every JSON document names the release and git revision that `linerate --version` prints.
# And, in a root-only directory, under umask 022, 077 and 000: JSON files are 0666 & ~umask,
# pcap files 0600 & ~umask, and no temporary file is left beside any of them.
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

lr_init
lr_require_cmds setpriv sha256sum stat tcpdump
lr_pair_topology
chmod 0711 "$LR_TMP"	# nobody must reach its directories, not read ours
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
VICTIM=$LR_TMP/victim
printf 'precious %s\n' "$RANDOM$RANDOM" >"$VICTIM"
chmod 0644 "$VICTIM"
SUM=$(sha256sum <"$VICTIM")

mkdir -m 1777 "$LR_TMP/sticky"
mkdir -m 1777 "$LR_TMP/nobodys"
chown 65534:65534 "$LR_TMP/nobodys"

VERSION=$("$LINERATE" --version)
lr_log "version: $VERSION"
[[ $VERSION =~ ^linerate\ [0-9]+\.[0-9]+\.[0-9]+\ \(git\ [0-9a-f]{7,}(-dirty)?\)$|^linerate\ [0-9]+\.[0-9]+\.[0-9]+\ \(git\ unknown\)$ ]] ||
	lr_fail "--version prints 'linerate X.Y.Z (git REVISION)'" "$VERSION"
NAMES=(recv.json ready rx.pcap send.json tx.pcap run.json run.csv run-tx.pcap run-rx.pcap probe.json)

# run_all DIR: every command with every output in DIR; leaves exit codes in RC_*
run_all()
{
	local d=$1 pid

	rm -f "$LR_TMP/ready-seen"
	lr_spawn "recv.$2" ip netns exec "$RCV" "$LINERATE" recv -i rcv0 --once --duration 20 -q \
		--json "$d/recv.json" --ready-file "$d/ready" --pcap "$d/rx.pcap"
	pid=$LR_LAST_PID
	# the ready file replaces the symlink planted there: wait for a regular file
	for _ in $(seq 200); do
		[[ -f $d/ready && ! -L $d/ready ]] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	RC_SEND=0
	timeout -k 5 30 ip netns exec "$SND" "$LINERATE" send -i snd0 --dst-ip 198.18.0.2 --count 2000 \
		--rate 20k -q --json "$d/send.json" --pcap "$d/tx.pcap" >"$LR_TMP/send.$2.out" 2>&1 || RC_SEND=$?
	RC_RECV=0
	lr_wait_pid "$pid" 25 || RC_RECV=$?
	# sender_limited = pass: a busy machine's sender may fall short of the paced rate; the verdict is
	# tested in test_throughput and test_configs, not here
	cat >"$LR_TMP/run.$2.ini" <<EOF
[test]
duration = 300ms
warmup = 0
sender_limited = pass
[tx]
netns = $SND
interface = snd0
dst_ip = 198.18.0.2
rate = 10k
pcap = $d/run-tx.pcap
[rx]
netns = $RCV
interface = rcv0
pcap = $d/run-rx.pcap
EOF
	RC_RUN=0
	timeout -k 5 60 "$LINERATE" run "$LR_TMP/run.$2.ini" -q --json "$d/run.json" --csv "$d/run.csv" \
		>"$LR_TMP/run.$2.out" 2>&1 || RC_RUN=$?
	RC_PROBE=0
	timeout -k 5 30 "$LINERATE" probe -i rcv0 --netns "$RCV" --json "$d/probe.json" \
		>"$LR_TMP/probe.$2.out" 2>&1 || RC_PROBE=$?
}

for dir in sticky nobodys; do
	D=$LR_TMP/$dir
	lr_log "== symlinks planted by nobody in $dir"
	for n in "${NAMES[@]}"; do
		"${NOBODY[@]}" ln -s "$VICTIM" "$D/$n"
		"${NOBODY[@]}" ln -s "$VICTIM" "$D/$n.tmp"
	done
	lr_check "[$dir] symlinks planted" "$(find "$D" -type l | wc -l)" == $((2 * ${#NAMES[@]}))
	run_all "$D" "$dir"
	lr_show_file "$LR_TMP/send.$dir.out"
	lr_show_file "$LR_TMP/recv.$dir.err"
	lr_show_file "$LR_TMP/run.$dir.out"
	lr_check "[$dir] recv exit code" "$RC_RECV" == 0
	lr_check "[$dir] send exit code" "$RC_SEND" == 0
	lr_check "[$dir] run exit code" "$RC_RUN" == 0
	lr_check "[$dir] probe exit code" "$RC_PROBE" == 0
	lr_check "[$dir] the victim is byte-identical" "$(sha256sum <"$VICTIM")" == "$SUM"
	for n in "${NAMES[@]}"; do
		if [[ -f $D/$n && ! -L $D/$n ]]; then
			lr_pass "[$dir] $n is a regular file, not the symlink"
		else
			lr_fail "[$dir] $n is a regular file, not the symlink" "$(ls -l "$D/$n" 2>&1)"
		fi
		lr_check "[$dir] $n.tmp is still nobody's symlink" "$(stat -c '%F %u' "$D/$n.tmp")" == "symbolic link 65534"
	done
	for n in recv.json send.json run.json probe.json; do
		lr_jvalid "$D/$n"
		lr_check "[$dir] $n names the release and revision of --version" \
			"$(jq -r '"linerate \(.version.release) (git \(.version.revision))"' "$D/$n")" == "$VERSION"
	done
	lr_check "[$dir] recv counted every frame" "$(lr_jget "$D/recv.json" .rx.packets)" == 2000
	lr_check "[$dir] run.csv: header and one step" "$(wc -l <"$D/run.csv")" == 2
	lr_check "[$dir] the ready file holds recv's PID" "$(grep -Ec '^[0-9]+$' "$D/ready")" == 1
	for n in rx.pcap tx.pcap run-tx.pcap run-rx.pcap; do
		lr_check_cmd "[$dir] tcpdump reads $n" tcpdump -nn -r "$D/$n" -c 1
	done
	lr_check "[$dir] nothing else in the directory (no temporary file left)" \
		"$(find "$D" -mindepth 1 | wc -l)" == $((2 * ${#NAMES[@]}))
done

lr_log "== modes under three umasks"
for mask in 022 077 000; do
	D=$LR_TMP/mode$mask
	mkdir -m 0700 "$D"
	umask "$mask"
	run_all "$D" "mode$mask"
	umask 022
	lr_show_file "$LR_TMP/run.mode$mask.out"
	for n in recv.json send.json run.json run.csv probe.json ready; do
		lr_check "[umask $mask] $n mode" "$(stat -c %a "$D/$n")" == "$(printf '%o' $((0666 & ~8#$mask)))"
	done
	for n in rx.pcap tx.pcap run-tx.pcap run-rx.pcap; do
		lr_check "[umask $mask] $n mode (a capture: owner only)" "$(stat -c %a "$D/$n")" == \
			"$(printf '%o' $((0600 & ~8#$mask)))"
	done
	lr_check "[umask $mask] no temporary file left" "$(find "$D" -mindepth 1 | wc -l)" == ${#NAMES[@]}
done
lr_finish
