# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# The end-to-end tests' helpers: gates, the cleanup trap, checks and the send/recv exchange. The
# processes, waits, namespaces and veth pairs come from scripts/lib.sh, shared with the scripts.
#
# Source it right after `set -euo pipefail`, then call lr_init. A test only ever touches
# namespaces it made with lr_netns_add (named lr-<test>-<name>-<pid>) or through scripts/lab with
# a prefix of its own (lr_lab_prefix), veth pairs created directly inside them (never in the root
# namespace), addresses from 198.18.0.0/15, and processes it started with lr_spawn. lr_init
# installs the EXIT trap that ends those processes by PID and deletes those namespaces, whatever
# way the test ends.

LR_E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LR_REPO=$(cd "$LR_E2E_DIR/../.." && pwd)
# shellcheck source=scripts/lib.sh
. "$LR_REPO/scripts/lib.sh"
LINERATE=${LINERATE:-$LR_REPO/build/linerate}
LR_TEST=$(basename "$0" .sh)
LR_TEST=${LR_TEST#test_}
LR_TAG=$LR_TEST
LR_FAILS=0
LR_CHECKS=0
LR_TMP=
LR_LAB=$LR_REPO/scripts/lab
LR_LAB_PREFIXES=()
LR_CLEANUP_FIRST=()
LAB_RC=0

# Whether CI demands that every e2e test runs (LINERATE_REQUIRE_E2E=1, set by .ci/run): then a
# skip, of a whole test (lr_skip) or of a part (lr_skip_check), is a failure. Nothing else asks.
lr_e2e_required()
{
	[[ ${LINERATE_REQUIRE_E2E:-0} == 1 ]]
}

# Exit 77 (skip), or fail when CI demands that every e2e test runs.
lr_skip()
{
	if lr_e2e_required; then
		printf '[%s] FAIL: cannot run: %s (LINERATE_REQUIRE_E2E=1 makes this a failure)\n' \
			"$LR_TEST" "$*" >&2
		exit 1
	fi
	printf '[%s] SKIP: %s\n' "$LR_TEST" "$*"
	exit 77
}

# lr_skip_check NAME REASON: a part of a test that cannot run here (a tool or a file is missing),
# while the rest can. A SKIP line, or, when CI demands that every e2e test runs, a failed check
# (LINERATE_REQUIRE_E2E=1: the test goes on and fails at lr_finish). No test says "skipped" otherwise.
lr_skip_check()
{
	if lr_e2e_required; then
		LR_CHECKS=$((LR_CHECKS + 1))
		LR_FAILS=$((LR_FAILS + 1))
		printf '[%s] FAIL: %s: cannot run: %s (LINERATE_REQUIRE_E2E=1 makes this a failure)\n' \
			"$LR_TEST" "$1" "$2"
		return 0
	fi
	printf '[%s] SKIP: %s: %s\n' "$LR_TEST" "$1" "$2"
}

# Setup problems that are neither "not root" nor "old kernel" are failures, never skips.
lr_die()
{
	printf '[%s] FAIL: %s\n' "$LR_TEST" "$*" >&2
	exit 1
}

lr_require_root()
{
	[[ $(id -u) == 0 ]] || lr_skip "needs root (network namespaces, XDP, AF_XDP)"
}

lr_kernel_lacks()
{
	lr_skip "kernel lacks $*"
}

lr_require_cmds()
{
	local c

	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || lr_die "missing tool '$c' (install it; this is not a skip)"
	done
}

lr_cleanup()
{
	local rc=$? p

	set +e
	trap - EXIT INT TERM
	for p in "${LR_CLEANUP_FIRST[@]}"; do
		$p
	done
	lr_stop_children 3
	# labs first: their namespaces are scripts/lab's to remove, by prefix
	for p in "${LR_LAB_PREFIXES[@]}"; do
		timeout -k 5 60 "$LR_LAB" down all --prefix "$p" >/dev/null 2>&1
	done
	lr_ns_del_all
	[[ -n $LR_TMP && -d $LR_TMP ]] && rm -rf "$LR_TMP"
	exit "$rc"
}

# Gates, temp dir and the cleanup trap. Every test calls it first.
lr_init()
{
	lr_require_root
	lr_require_cmds ip jq timeout ps awk
	[[ -x $LINERATE ]] || lr_die "no linerate binary at '$LINERATE' (build it, or set LINERATE)"
	ip netns list >/dev/null 2>&1 || lr_kernel_lacks "network namespaces"
	LR_TMP=$(mktemp -d "/tmp/lr-e2e-$LR_TEST.XXXXXX")
	trap lr_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	lr_log "binary: $LINERATE"
}

# lr_cleanup_first FUNCTION: the exit trap calls FUNCTION before it ends processes and removes
# namespaces (a private dockerd stops its containers while their namespaces still exist).
lr_cleanup_first()
{
	LR_CLEANUP_FIRST+=("$1")
}

# lr_netns_add VAR SHORT: make namespace lr-<test>-<SHORT>-<pid>, store its name in VAR.
# IPv6 is turned off inside so that no router solicitation or MLD report lands in the counts.
lr_netns_add()
{
	local var=$1 ns="lr-$LR_TEST-$2-$$"

	lr_ns_add "$ns" || lr_kernel_lacks "network namespaces (ip netns add failed)"
	printf -v "$var" '%s' "$ns"
}

# lr_lab_prefix P: labs this test makes with scripts/lab --prefix P (namespaces P-TOPOLOGY-ROLE);
# the cleanup trap takes every one of them down, whatever way the test ends.
lr_lab_prefix()
{
	LR_LAB_PREFIXES+=("$1")
}

# lr_lab NAME ARGS...: scripts/lab ARGS, bounded; its exit code in LAB_RC, its output in
# $LR_TMP/NAME.{out,err}. Must not run in a subshell (LAB_RC).
# shellcheck disable=SC2034 # LAB_RC is read by the tests
lr_lab()
{
	local name=$1

	shift
	LAB_RC=0
	timeout -k 5 60 "$LR_LAB" "$@" >"$LR_TMP/$name.out" 2>"$LR_TMP/$name.err" || LAB_RC=$?
}

# lr_veth NS1 IF1 NS2 IF2 [link options for both ends, e.g. numtxqueues 2 numrxqueues 2]: as
# lr_veth_add, and a kernel without veth is a skip.
lr_veth()
{
	lr_veth_add "$@" || lr_kernel_lacks "veth"
}

# Udp NoPorts of NS: datagrams its stack received for a port nobody listens on.
# shellcheck disable=SC2016 # awk's fields
lr_udp_noports()
{
	ip netns exec "$1" awk '$1 == "Udp:" { if (!n) { for (i = 2; i <= NF; i++) if ($i == "NoPorts") c = i; n = 1 }
		else print $c }' /proc/net/snmp
}

# lr_xdp_state NS [IF]: 0 when an XDP program is attached to IF in NS (or to any interface when IF
# is empty), 1 when none is, 2 (and a line on stderr) when ip cannot tell: the namespace or the
# interface is not there, so neither answer would mean anything.
lr_xdp_state()
{
	local out

	if ! out=$(ip -n "$1" -d link show ${2:+dev "$2"} 2>&1); then
		printf '[%s] cannot tell whether XDP is attached to %s in %s: ip says: %s\n' "$LR_TEST" \
			"${2:-any interface}" "$1" "$out" >&2
		return 2
	fi
	grep -Eq 'prog/xdp|[[:space:]]xdp(generic|drv|offload|multi)?[[:space:]/]' <<<"$out" && return 0
	return 1
}

# lr_xdp_absent NS [IF]: true when no XDP program is attached there; false, and said why, when ip
# cannot show the interface (a vanished namespace is no proof of a clean detach).
lr_xdp_absent()
{
	local rc=0

	lr_xdp_state "$@" || rc=$?
	[[ $rc == 1 ]]
}

# lr_xdp_attached NS [IF]: true when an XDP program is attached there. Never negate it to mean
# "detached": it is false when ip cannot tell too; that is lr_xdp_absent's question.
lr_xdp_attached()
{
	lr_xdp_state "$@"
}

# lr_jvalid FILE: PASS/FAIL on "FILE holds one JSON object".
lr_jvalid()
{
	if [[ -s $1 ]] && jq -e 'type == "object"' "$1" >/dev/null 2>&1; then
		lr_pass "$(basename "$1") is a JSON object"
	else
		lr_fail "$(basename "$1") is a JSON object" "$(head -c 300 "$1" 2>/dev/null || echo '<no file>')"
	fi
}

lr_pass()
{
	LR_CHECKS=$((LR_CHECKS + 1))
	printf '[%s] PASS: %s\n' "$LR_TEST" "$1"
}

lr_fail()
{
	LR_CHECKS=$((LR_CHECKS + 1))
	LR_FAILS=$((LR_FAILS + 1))
	printf '[%s] FAIL: %s: got %s\n' "$LR_TEST" "$1" "$2"
}

lr_is_num()
{
	[[ $1 =~ ^-?[0-9]+([.][0-9]+)?([eE][-+]?[0-9]+)?$ ]]
}

# lr_check DESC GOT OP WANT: numeric comparison (OP: == != > >= < <=), or string equality for ==/!=.
lr_check()
{
	local desc=$1 got=$2 op=$3 want=$4 ok

	if lr_is_num "$got" && lr_is_num "$want"; then
		ok=$(awk -v a="$got" -v b="$want" -v op="$op" 'BEGIN {
			a += 0; b += 0; r = 0
			if (op == "==") r = a == b; else if (op == "!=") r = a != b
			else if (op == ">") r = a > b; else if (op == ">=") r = a >= b
			else if (op == "<") r = a < b; else if (op == "<=") r = a <= b
			print r }')
	elif [[ $op == "==" ]]; then
		[[ $got == "$want" ]] && ok=1 || ok=0
	elif [[ $op == "!=" ]]; then
		[[ $got != "$want" ]] && ok=1 || ok=0
	else
		ok=0
	fi
	if [[ $ok == 1 ]]; then
		lr_pass "$desc: $got $op $want"
	else
		lr_fail "$desc (want $op $want)" "$got"
	fi
}

# lr_check_cmd DESC CMD...: PASS when CMD succeeds.
lr_check_cmd()
{
	local desc=$1

	shift
	if "$@"; then
		lr_pass "$desc"
	else
		lr_fail "$desc" "command failed: $*"
	fi
}

lr_show_file()
{
	[[ -s $1 ]] || return 0
	printf '[%s] --- %s ---\n' "$LR_TEST" "$(basename "$1")"
	head -c 4000 "$1"
	printf '\n'
}

lr_finish()
{
	if ((LR_FAILS > 0)); then
		printf '[%s] RESULT: FAIL (%d of %d checks failed)\n' "$LR_TEST" "$LR_FAILS" "$LR_CHECKS"
		exit 1
	fi
	printf '[%s] RESULT: PASS (%d checks)\n' "$LR_TEST" "$LR_CHECKS"
	exit 0
}

# ---------------------------------------------------------------------------------------------
# The send/recv exchange shared by the veth tests.

# lr_pair_topology: namespaces SND and RCV joined by snd0 <-> rcv0, 198.18.0.1/30 and .2/30.
lr_pair_topology()
{
	# shellcheck disable=SC2119 # no link options: veth's defaults
	lr_pair_topology_opts
}

# lr_pair_topology_opts LINK OPTIONS...: the same, the options (numtxqueues 2 numrxqueues 2) for
# both veth ends.
# shellcheck disable=SC2120 # called with options by test_two_queues
lr_pair_topology_opts()
{
	lr_netns_add SND snd
	lr_netns_add RCV rcv
	lr_veth "$SND" snd0 "$RCV" rcv0 "$@"
	lr_addr "$SND" snd0 198.18.0.1/30
	lr_addr "$RCV" rcv0 198.18.0.2/30
}

# lr_exchange NS_SND IF_SND NS_RCV IF_RCV DST_IP COUNT [extra send args...]
# Runs `recv --once` in NS_RCV, sends 3 foreign UDP datagrams to DST_IP, runs `send`,
# waits for recv. Leaves recv.json, send.json, the processes' outputs, RX_DELTA (veth rx_packets
# delta on IF_RCV), SEND_RC, RECV_RC and FOREIGN_STACK. Set LR_USE_NETNS_OPT=1 to have linerate enter
# the namespaces itself (--netns) instead of running under `ip netns exec`. LR_SEND_ENGINE and
# LR_RECV_ENGINE, when set, are passed as --engine; lr_check_exact expects them in the JSON unless
# LR_EXPECT_SEND / LR_EXPECT_RECV say otherwise (for auto choice). LR_RECV_ARGS, when set, holds extra
# recv arguments, split on whitespace (e.g. "--pcap /tmp/x.pcap --snaplen 64").
lr_exchange()
{
	local nss=$1 ifs=$2 nsr=$3 ifr=$4 dst=$5 count=$6 before after pid noports
	local -a rpre spre

	shift 6
	if [[ ${LR_USE_NETNS_OPT:-0} == 1 ]]; then
		rpre=("$LINERATE" recv --netns "$nsr")
		spre=("$LINERATE" send --netns "$nss")
	else
		rpre=(ip netns exec "$nsr" "$LINERATE" recv)
		spre=(ip netns exec "$nss" "$LINERATE" send)
	fi
	[[ -n ${LR_RECV_ENGINE:-} ]] && rpre+=(--engine "$LR_RECV_ENGINE")
	# shellcheck disable=SC2206 # word splitting is the interface
	[[ -n ${LR_RECV_ARGS:-} ]] && rpre+=(${LR_RECV_ARGS})
	[[ -n ${LR_SEND_ENGINE:-} ]] && spre+=(--engine "$LR_SEND_ENGINE")
	rm -f "$LR_TMP/ready" "$LR_TMP/recv.json" "$LR_TMP/send.json"
	before=$(lr_rx_packets "$nsr" "$ifr")
	lr_log "run: ${rpre[*]} -i $ifr --once --duration 30 --json recv.json --ready-file ready"
	lr_spawn recv timeout -k 5 45 "${rpre[@]}" -i "$ifr" --once --duration 30 \
		--json "$LR_TMP/recv.json" --ready-file "$LR_TMP/ready"
	pid=$LR_LAST_PID
	if ! lr_wait_for_file "$LR_TMP/ready" 15 "$pid"; then
		lr_show_file "$LR_TMP/recv.out"
		lr_show_file "$LR_TMP/recv.err"
		lr_die "recv never became ready"
	fi
	# LR_AFTER_READY: a command run once the receiver is ready, before anything is sent
	if [[ -n ${LR_AFTER_READY:-} ]]; then
		eval "$LR_AFTER_READY" || lr_die "LR_AFTER_READY failed: $LR_AFTER_READY"
	fi
	if [[ ${LR_EXPECT_RECV:-${LR_RECV_ENGINE:-xdp}} == xdp ]]; then
		lr_check_cmd "an XDP program is attached to $ifr once the ready file exists" lr_xdp_attached "$nsr" "$ifr"
	else
		lr_check_cmd "no XDP program on $ifr with a non-XDP receiver" lr_xdp_absent "$nsr" "$ifr"
	fi
	# Known foreign traffic while recv is attached: 3 UDP datagrams to the discard port. The
	# receiving stack counts them in Udp NoPorts, which proves XDP passed them on.
	noports=$(lr_udp_noports "$nsr")
	# shellcheck disable=SC2016 # $1 is the inner shell's
	ip netns exec "$nss" bash -c 'for i in 1 2 3; do echo "lr-foreign-$i" >"/dev/udp/$1/9"; sleep 0.05; done' \
		_ "$dst" || true
	sleep 0.2
	FOREIGN_STACK=$(($(lr_udp_noports "$nsr") - noports))
	lr_log "run: ${spre[*]} -i $ifs --dst-ip $dst --count $count $* --json send.json"
	SEND_RC=0
	timeout -k 5 60 "${spre[@]}" -i "$ifs" --dst-ip "$dst" --count "$count" "$@" \
		--json "$LR_TMP/send.json" >"$LR_TMP/send.out" 2>"$LR_TMP/send.err" || SEND_RC=$?
	RECV_RC=0
	lr_wait_pid "$pid" 40 || RECV_RC=$?
	after=$(lr_rx_packets "$nsr" "$ifr")
	RX_DELTA=$((after - before))
	lr_show_file "$LR_TMP/send.out"
	lr_show_file "$LR_TMP/send.err"
	lr_show_file "$LR_TMP/recv.out"
	lr_show_file "$LR_TMP/recv.err"
}

# lr_check_exact COUNT FLOWS: the checks every loss-free exchange must pass.
lr_check_exact()
{
	local count=$1 flows=$2 r=$LR_TMP/recv.json s=$LR_TMP/send.json
	local rxp foreign rest

	lr_check "send exit code" "$SEND_RC" == 0
	lr_check "recv --once exit code" "$RECV_RC" == 0
	lr_jvalid "$s"
	lr_jvalid "$r"
	lr_check "send JSON command" "$(lr_jget "$s" .command)" == send
	lr_check "send JSON engine" "$(lr_jget "$s" .engine)" == "${LR_EXPECT_SEND:-${LR_SEND_ENGINE:-afxdp}}"
	lr_check "send JSON frame_size" "$(lr_jget "$s" .frame_size)" == 64
	lr_check "send JSON flows" "$(lr_jget "$s" .flows)" == "$flows"
	lr_check "tx.packets (frames the device completed)" "$(lr_jget "$s" .tx.packets)" == "$count"
	lr_check "recv JSON command" "$(lr_jget "$r" .command)" == recv
	lr_check "recv JSON engine" "$(lr_jget "$r" .engine)" == "${LR_EXPECT_RECV:-${LR_RECV_ENGINE:-xdp}}"
	rxp=$(lr_jget "$r" .rx.packets)
	lr_check "rx.packets" "$rxp" == "$count"
	lr_check "rx.lost" "$(lr_jget "$r" .rx.lost)" == 0
	lr_check "rx.duplicates" "$(lr_jget "$r" .rx.duplicates)" == 0
	lr_check "rx.reordered" "$(lr_jget "$r" .rx.reordered)" == 0
	lr_check "rx.sent (from end-of-test markers)" "$(lr_jget "$r" .rx.sent)" == "$count"
	lr_check "rx.tail_settled" "$(jq -r '.rx.tail_settled' "$r" 2>/dev/null)" == true
	lr_check "rx.flows" "$(lr_jget "$r" .rx.flows)" == "$flows"
	lr_check "latency_ns.p50" "$(lr_jget "$r" .latency_ns.p50)" ">" 0
	lr_check "latency_ns.min <= p50 <= max" \
		"$(jq -r '(.latency_ns.min <= .latency_ns.p50 and .latency_ns.p50 <= .latency_ns.max)' "$r" 2>/dev/null)" \
		== true
	# --latency-every N: the frames of each flow whose sequence is a multiple of N carry a timestamp
	local every
	every=$(lr_jget "$s" .tx.latency_every)
	# (each flow's frames known only when they split evenly over flows and flows over workers)
	local workers
	workers=$(jq '.tx.per_queue | length' "$s" 2>/dev/null || echo 0)
	if lr_is_num "$every" && lr_is_num "$workers" && ((every > 0 && workers > 0 && count % flows == 0 &&
		flows % workers == 0)); then
		lr_check "latency_ns.count == flows x ceil(frames per flow / tx.latency_every $every)" \
			"$(lr_jget "$r" .latency_ns.count)" == $((flows * ((count / flows + every - 1) / every)))
	else
		lr_check "tx.latency_every is a positive number" "$every" ">" 0
	fi
	lr_check "receiving veth rx_packets delta >= rx.packets" "$RX_DELTA" ">=" "$rxp"
	# Known foreign traffic: 3 UDP datagrams to port 9 (+ a few ARP frames) while recv was attached.
	lr_check "foreign UDP datagrams that reached the receiving stack through XDP (Udp NoPorts)" \
		"$FOREIGN_STACK" == 3
	foreign=$(lr_jget "$r" .rx.foreign)
	lr_check "rx.foreign counts the 3 foreign datagrams" "$foreign" ">=" 3
	lr_check "rx.foreign counts only non-test traffic (3 datagrams + ARP)" "$foreign" "<=" 10
	if lr_is_num "$rxp" && lr_is_num "$foreign"; then
		rest=$((RX_DELTA - rxp - foreign))
		lr_log "info: veth delta $RX_DELTA = rx.packets $rxp + foreign $foreign + $rest other (end-of-test markers)"
		lr_check "veth delta - rx.packets - foreign (end-of-test markers) >= flows" "$rest" ">=" "$flows"
	fi
}

# lr_router_topology: namespaces SND, RTR, RCV (the variables set) joined by veths s0-r0 and
# r1-c0, the sender at 198.18.0.1/30 and the receiver at 198.18.0.6/30, routed through RTR with a
# static neighbour, so no frame waits (or is dropped) in its ARP queue. What tests of loss on a
# path use, with lr_router_drop's rule at the router.
lr_router_topology()
{
	lr_netns_add SND snd
	lr_netns_add RTR rtr
	lr_netns_add RCV rcv
	lr_veth "$SND" s0 "$RTR" r0
	lr_veth "$RTR" r1 "$RCV" c0
	lr_addr "$SND" s0 198.18.0.1/30
	lr_addr "$RTR" r0 198.18.0.2/30
	lr_addr "$RTR" r1 198.18.0.5/30
	lr_addr "$RCV" c0 198.18.0.6/30
	ip -n "$SND" route add 198.18.0.4/30 via 198.18.0.2
	ip -n "$RCV" route add 198.18.0.0/30 via 198.18.0.5
	ip netns exec "$RTR" sysctl -qw net.ipv4.ip_forward=1
	ip -n "$RTR" neigh replace 198.18.0.6 lladdr "$(lr_mac "$RCV" c0)" dev r1 nud permanent
	ip netns exec "$RTR" nft add table ip lrprobe 2>/dev/null || lr_kernel_lacks "nftables"
	ip netns exec "$RTR" nft delete table ip lrprobe
}

# lr_router_drop EVERY: (re)loads the router's table lrdrop, so numgen and the counters start from
# zero: every EVERY-th data frame to the test port (probe magic 0x4c52) dropped, end-of-test
# markers (0x4c45) never; counters lr_data, lr_drop and lr_eot (lr_router_count).
lr_router_drop()
{
	ip netns exec "$RTR" nft delete table ip lrdrop 2>/dev/null || true
	ip netns exec "$RTR" nft -f - <<NFT || lr_die "loading the nftables ruleset failed (see above)"
table ip lrdrop {
	counter lr_data { }
	counter lr_eot { }
	counter lr_drop { }
	chain forward_lr {
		type filter hook forward priority filter; policy accept;
		udp dport 7447 @th,64,16 0x4c45 counter name "lr_eot"
		udp dport 7447 @th,64,16 0x4c52 counter name "lr_data"
		udp dport 7447 @th,64,16 0x4c52 numgen inc mod $1 == 0 counter name "lr_drop" drop
	}
}
NFT
}

# lr_router_count NAME: the packets of lr_router_drop's counter NAME ("missing" if there is none).
lr_router_count()
{
	ip netns exec "$RTR" nft -j list counter ip lrdrop "$1" |
		jq -r '[.nftables[] | select(.counter) | .counter.packets][0] // "missing"'
}

# lr_wait_log FILE TEXT TIMEOUT_S: until FILE holds TEXT (a fixed string); false past TIMEOUT_S.
# shellcheck disable=SC2317 # also called through lr_check_cmd
lr_wait_log()
{
	local deadline=$(($(lr_now_ns) + $3 * 1000000000))

	until grep -qF -- "$2" "$1" 2>/dev/null; do
		(($(lr_now_ns) < deadline)) || return 1
		sleep 0.05
	done
}
