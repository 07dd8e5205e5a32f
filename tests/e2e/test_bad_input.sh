#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Usage, config and environment errors: exit 2, one line on stderr naming the culprit, nothing attached.
#
#   ns lr-bad_input-x-PID
#   +-------------------------------------------------------------+
#   |  x0 198.18.0.1/30 <--veth--> x1 198.18.0.2/30   (up, 1 queue) |
#   |  dn0               <--veth--> dn1                (left down)   |
#   +-------------------------------------------------------------+
#
# Checks, for each case: exit code exactly 2, exactly one line on stderr, that line matches
# the culprit (case-insensitive regex below), and no XDP program on any interface in the ns:
#   send -i nosuch0                      /nosuch0/
#   recv -i nosuch0                      /nosuch0/
#   send -i dn0 (link down)              /down/
#   recv -i dn0 (link down)              /down/
#   send --size 1600 (MTU 1500)          /1600|size|mtu/
#   send --rate "5 parsecs"              /parsecs|rate/
#   send --queues 3 (1-queue veth)       /queue/
#   recv --dst-port 0                    /port/
#   send without --dst-ip                /dst-ip/
#   recv / send as uid 65534 without capabilities (setpriv; without it a skip, which
#   LINERATE_REQUIRE_E2E=1 makes a failure)
#                                        /permission|privilege|root|capabilit|CAP_|not permitted/
# Numbers beyond their bounds (once they wrapped or stalled the pacer):
#   send --rate 1844674407400            /1 Gpps/
#   send --duration 4159006706811470109h /year/
#   run FILE with duration / warmup of 4159006706811470109h   /duration/
# Outputs and CPUs checked before any interface is touched (once found only after the test):
#   send/recv/run/probe --json DIR, send/recv --pcap DIR, run --csv DIR, recv --ready-file DIR or
#   in a missing directory, --json DEVICE-NODE, send --cpus N (N not ours), run [tx] cpus = N
# Special files refused at once, without blocking (once they hung forever):
#   send/recv --netns FIFO, --netns /dev/zero, run FIFO, run --check FIFO, send --replay FIFO
# Contradictions: recv -e xdp --workers 4; recv -e packet --xdp-mode native
# Replays of frames shorter than an Ethernet header (0 and 5 bytes)   /frame 2/
# run with [rx] interface = nosuch0    /nosuch0/ (its receiver child frees what it allocated: ASan)
# Control characters in the input are escaped: --rate $'100k\n' is still one line
# Every command is bounded (--count 100 / --duration 2, and timeout 20 s) in case it does run.
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

lr_init
lr_netns_add NS x
lr_veth "$NS" x0 "$NS" x1
lr_addr "$NS" x0 198.18.0.1/30
lr_addr "$NS" x1 198.18.0.2/30
lr_veth "$NS" dn0 "$NS" dn1
lr_log "x0 mtu $(ip -n "$NS" -j link show dev x0 | jq -r '.[0].mtu'), rx queues $(ip netns exec "$NS" ls /sys/class/net/x0/queues | grep -c rx-)"

# expect_usage NAME REGEX CMD...: CMD runs inside the namespace.
expect_usage()
{
	local name=$1 re=$2 rc=0 lines err

	shift 2
	lr_log "case '$name': $*"
	timeout -k 5 20 ip netns exec "$NS" "$@" >"$LR_TMP/$name.out" 2>"$LR_TMP/$name.err" </dev/null || rc=$?
	err=$(head -c 500 "$LR_TMP/$name.err")
	lines=$(awk 'END { print NR }' "$LR_TMP/$name.err")
	lr_check "$name: exit code" "$rc" == 2
	lr_check "$name: stderr lines" "$lines" == 1
	if grep -Eiq -- "$re" "$LR_TMP/$name.err"; then
		lr_pass "$name: stderr names the culprit /$re/: $err"
	else
		lr_fail "$name: stderr names the culprit /$re/" "'$err'"
	fi
	lr_check_cmd "$name: no XDP program attached in the namespace" lr_xdp_absent "$NS"
}

L=$LINERATE
SEND=(send --count 100 --duration 2)
expect_usage send-unknown-if 'nosuch0' "$L" "${SEND[@]}" -i nosuch0 --dst-ip 198.18.0.2
expect_usage recv-unknown-if 'nosuch0' "$L" recv -i nosuch0 --duration 2
expect_usage send-if-down 'down' "$L" "${SEND[@]}" -i dn0 --dst-ip 198.18.0.2
expect_usage recv-if-down 'down' "$L" recv -i dn0 --duration 2
expect_usage send-size-over-mtu '1600|size|mtu' "$L" "${SEND[@]}" -i x0 --dst-ip 198.18.0.2 --size 1600
expect_usage send-bad-rate-unit 'parsecs|rate' "$L" "${SEND[@]}" -i x0 --dst-ip 198.18.0.2 --rate "5 parsecs"
expect_usage send-queue-beyond-device 'queue' "$L" "${SEND[@]}" -i x0 --dst-ip 198.18.0.2 --queues 3
expect_usage recv-dst-port-zero 'port' "$L" recv -i x1 --duration 2 --dst-port 0
expect_usage send-missing-dst-ip 'dst-ip' "$L" "${SEND[@]}" -i x0

if command -v setpriv >/dev/null 2>&1; then
	NOPRIV=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
	PRIV_RE='permission|privilege|root|capabilit|CAP_|not permitted'
	expect_usage recv-unprivileged "$PRIV_RE" "${NOPRIV[@]}" "$L" recv -i x1 --duration 2
	expect_usage send-unprivileged "$PRIV_RE" "${NOPRIV[@]}" "$L" "${SEND[@]}" -i x0 --dst-ip 198.18.0.2
else
	lr_skip_check recv-unprivileged "setpriv is not installed"
	lr_skip_check send-unprivileged "setpriv is not installed"
fi

lr_log "== numbers beyond their bounds"
expect_usage send-rate-past-1gpps '1 Gpps' "$L" "${SEND[@]}" -i x0 --dst-ip 198.18.0.2 --rate 1844674407400
expect_usage send-duration-wraps 'year' "$L" send -i x0 --dst-ip 198.18.0.2 --duration 4159006706811470109h
# run_file NAME TEXT: an INI file for run, in the test's directory
run_file()
{
	printf '%s' "$2" >"$LR_TMP/$1.ini"
}
INI_TX=$'[tx]\ninterface = x0\ndst_ip = 198.18.0.2\nrate = 10k\n[rx]\ninterface = x1\n'
run_file dur $'[test]\nduration = 4159006706811470109h\n'"$INI_TX"
run_file warm $'[test]\nduration = 1s\nwarmup = 4159006706811470109h\n'"$INI_TX"
expect_usage run-duration-wraps 'dur.ini:2: .*duration' "$L" run "$LR_TMP/dur.ini"
expect_usage run-warmup-wraps 'warm.ini:3: .*warmup' "$L" run "$LR_TMP/warm.ini"

lr_log "== outputs and CPUs checked before anything is touched"
mkdir "$LR_TMP/adir"
D=$LR_TMP/adir
run_file ok $'[test]\nduration = 200ms\nwarmup = 0\n'"$INI_TX"
NCPU=$(nproc)
BADCPU=$((NCPU + 3))
expect_usage send-json-dir 'json.*directory' "$L" "${SEND[@]}" -i x0 --dst-ip 198.18.0.2 --json "$D"
# a device node of the test's own (a null device): were the check to fail, the rename would replace
# this node, never the system's /dev/null (which a version without the check did replace)
mknod -m 0666 "$LR_TMP/null" c 1 3
expect_usage send-json-device 'json.*regular file' "$L" "${SEND[@]}" -i x0 --dst-ip 198.18.0.2 --json "$LR_TMP/null"
lr_check "the device node given as --json is still a character device" "$(stat -c %F "$LR_TMP/null")" == \
	"character special file"
expect_usage send-pcap-dir 'pcap.*directory' "$L" "${SEND[@]}" -i x0 --dst-ip 198.18.0.2 --pcap "$D"
expect_usage recv-json-dir 'json.*directory' "$L" recv -i x1 --duration 2 --json "$D"
expect_usage recv-pcap-dir 'pcap.*directory' "$L" recv -i x1 --duration 2 --pcap "$D"
expect_usage recv-ready-dir 'ready-file.*directory' "$L" recv -i x1 --duration 2 --ready-file "$D"
expect_usage recv-ready-nodir 'ready-file.*No such file' "$L" recv -i x1 --duration 2 --ready-file "$D/no/ready"
expect_usage run-json-dir 'json.*directory' "$L" run "$LR_TMP/ok.ini" --json "$D"
expect_usage run-csv-dir 'csv.*directory' "$L" run "$LR_TMP/ok.ini" --csv "$D"
expect_usage probe-json-dir 'json.*directory' "$L" probe -i x1 --json "$D"
expect_usage send-cpu-not-ours "cpus: CPU $BADCPU" "$L" "${SEND[@]}" -i x0 --dst-ip 198.18.0.2 --cpus "$BADCPU"
run_file cpus $'[test]\nduration = 200ms\n[tx]\ninterface = x0\ndst_ip = 198.18.0.2\ncpus = '"$BADCPU"$'\n[rx]\ninterface = x1\n'
expect_usage run-cpu-not-ours "cpus.ini:3: .*CPU $BADCPU" "$L" run "$LR_TMP/cpus.ini"
lr_check "no file was created in the directory given as an output" "$(find "$D" -mindepth 1 | wc -l)" == 0

lr_log "== special files are refused without blocking"
mkfifo "$LR_TMP/fifo"
expect_usage send-netns-fifo 'not a network namespace' "$L" "${SEND[@]}" -i x0 --dst-ip 198.18.0.2 \
	--netns "$LR_TMP/fifo"
expect_usage recv-netns-fifo 'not a network namespace' "$L" recv -i x1 --duration 2 --netns "$LR_TMP/fifo"
expect_usage recv-netns-devzero 'not a network namespace' "$L" recv -i x1 --duration 2 --netns /dev/zero
expect_usage run-fifo 'fifo.*not a regular file' "$L" run "$LR_TMP/fifo"
expect_usage run-check-fifo 'fifo.*not a regular file' "$L" run --check "$LR_TMP/fifo"
expect_usage run-devzero 'not a regular file' "$L" run /dev/zero
expect_usage send-replay-fifo 'replay.*not a regular file' "$L" "${SEND[@]}" -i x0 --replay "$LR_TMP/fifo"

lr_log "== contradictions"
expect_usage recv-workers-with-xdp 'workers.*xdp' "$L" recv -i x1 --duration 2 -e xdp --workers 4
expect_usage recv-xdp-mode-with-packet 'xdp-mode.*packet' "$L" recv -i x1 --duration 2 -e packet --xdp-mode native

lr_log "== replay of frames shorter than an Ethernet header"
# pcap (microseconds, Ethernet): a 60-byte frame, then a 5-byte one, then an empty one
{
	printf '\xd4\xc3\xb2\xa1\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x00\x00\x01\x00\x00\x00'
	printf '\x01\x00\x00\x00\x00\x00\x00\x00\x3c\x00\x00\x00\x3c\x00\x00\x00'
	head -c 60 /dev/zero
	printf '\x01\x00\x00\x00\x01\x00\x00\x00\x05\x00\x00\x00\x05\x00\x00\x00\x02\x02\x02\x02\x02'
	printf '\x01\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00'
} >"$LR_TMP/short.pcap"
expect_usage send-replay-short-frame 'frame 2 is 5 bytes' "$L" "${SEND[@]}" -i x0 --replay "$LR_TMP/short.pcap"

lr_log "== the receiver child of run, failing"
run_file norx $'[test]\nduration = 200ms\n'$'[tx]\ninterface = x0\ndst_ip = 198.18.0.2\n[rx]\ninterface = nosuch0\n'
expect_usage run-rx-unknown-if 'nosuch0' "$L" run "$LR_TMP/norx.ini"

lr_log "== control characters in the input"
expect_usage send-rate-newline 'rate: .100k\\n. is not a rate' "$L" "${SEND[@]}" -i x0 --dst-ip 198.18.0.2 \
	--rate $'100k\n'
expect_usage send-iface-escape 'nosuch\\x1b' "$L" "${SEND[@]}" -i $'nosuch\e' --dst-ip 198.18.0.2
lr_finish
