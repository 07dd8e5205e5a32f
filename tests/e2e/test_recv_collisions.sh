#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a receiver must notice rather than count wrong: a second receiver on its interface, two
# senders on its flows, and frames that reach its interface past its XDP hook.
#
#   1-3: ns ...-snd-PID                      ns ...-rcv-PID
#        +---------------------+             +-------------------------+
#        | linerate send (x2)  | snd0 - rcv0 | linerate recv (+ a 2nd) |
#        | 198.18.0.1          |    veth     | 198.18.0.2              |
#        +---------------------+             +-------------------------+
#   4:   ns ...-src-PID           ns ...-hop-PID                      ns ...-dst-PID
#        +---------------+        +-------------------------------+   +----------------+
#        | linerate send | s0--h1 | tc ingress on h1:             |   | linerate recv  |
#        | 198.18.0.5    |  veth  |  bpf_redirect_peer(h2) ------>|h2-c0 198.18.0.6 |
#        +---------------+        +-------------------------------+   +----------------+
#        The redirected frames enter c0 without passing its native XDP hook.
#
# Cases:
#   1. a second `recv` (auto) on rcv0 while one runs: exit 2, one line naming linerate's
#      receiver, its program id and the first receiver's pid; with --engine packet it runs (exit 0)
#   2. one sender (lr_exchange): rx.shared_flows null, no "two senders" line, rx.unseen below the
#      margin and no "did not see" line
#   3. two sends on the same 4 flows into one recv (xdp, then packet): the summary's "two senders use the same flows
#      (run ids A and B, on 4 flows)" line, rx.shared_flows {flows 4, run_id A, other_run_id B},
#      A != B, both non-zero
#   4. 3000 frames redirected past native XDP: rx.packets 0, rx.unseen >= 3000 and the summary's
#      "the interface received N frames that the XDP program did not see: ..." line with N ==
#      rx.unseen; again with --xdp-mode generic: rx.packets == 3000, no such line
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

lr_init
lr_require_cmds clang tc
lr_pair_topology

# ---- 1. a second receiver on an interface that has one
lr_log "== case 1: a second receiver"
rm -f "$LR_TMP/ready"
lr_spawn recv1 ip netns exec "$RCV" "$LINERATE" recv -i rcv0 --duration 20 --ready-file "$LR_TMP/ready"
R1=$LR_LAST_PID
lr_wait_for_file "$LR_TMP/ready" 15 "$R1" || lr_die "the first recv never became ready"
PROG_ID=$(ip -n "$RCV" -j link show dev rcv0 | jq -r '.[0].xdp.prog.id // .[0].xdp.attached[0].prog.id // empty')
lr_check "an XDP program id on rcv0" "${PROG_ID:-none}" ">" 0
RC=0
ip netns exec "$RCV" "$LINERATE" recv -i rcv0 --duration 1 >"$LR_TMP/r2.out" 2>"$LR_TMP/r2.err" || RC=$?
lr_show_file "$LR_TMP/r2.err"
lr_check "second recv (auto): exit code" "$RC" == 2
lr_check "second recv (auto): one line on stderr" "$(wc -l <"$LR_TMP/r2.err")" == 1
WANT="linerate recv: rcv0 already has an XDP program attached: linerate's receiver (program xdp_count, id $PROG_ID, pid $R1 linerate); detach it first (ip link set dev rcv0 xdp off): the packet engine would count only what that program passes on (--engine packet forces it)"
lr_check "second recv (auto): the message names the holder" "$(cat "$LR_TMP/r2.err")" == "$WANT"
RC=0
ip netns exec "$RCV" "$LINERATE" recv -i rcv0 --engine packet --duration 1 >"$LR_TMP/r3.out" 2>"$LR_TMP/r3.err" ||
	RC=$?
lr_check "second recv --engine packet: exit code" "$RC" == 0
lr_check_cmd "second recv --engine packet: it ran on the packet engine" \
	grep -q "^linerate recv: ready on rcv0, engine packet" "$LR_TMP/r3.err"
kill -INT "$R1"
lr_wait_pid "$R1" 10 || true

# ---- 2. one sender: nothing to warn of
lr_log "== case 2: one sender"
lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 4000 --flows 4 --rate 20kpps
R=$LR_TMP/recv.json
lr_check_exact 4000 4
lr_check "one sender: rx.shared_flows" "$(jq -r '.rx.shared_flows' "$R")" == null
lr_check "one sender: rx.unseen <= 16" "$(lr_jget "$R" .rx.unseen)" "<=" 16
lr_check_cmd "one sender: no 'two senders' line" bash -c "! grep -q 'two senders' '$LR_TMP/recv.err'"
lr_check_cmd "one sender: no 'did not see' line" bash -c "! grep -q 'did not see' '$LR_TMP/recv.err'"

# ---- 3. two senders, same flows (with each receive engine: the marker accounting is shared)
for ENG in xdp packet; do
	lr_log "== case 3: two senders on the same flows, recv --engine $ENG"
	rm -f "$LR_TMP/ready" "$R"
	lr_spawn "recv2-$ENG" ip netns exec "$RCV" "$LINERATE" recv -i rcv0 --engine "$ENG" --duration 4 --json "$R" \
		--ready-file "$LR_TMP/ready"
	R2=$LR_LAST_PID
	lr_wait_for_file "$LR_TMP/ready" 15 "$R2" || lr_die "recv never became ready"
	for i in 1 2; do
		lr_spawn "send$i" ip netns exec "$SND" "$LINERATE" send -i snd0 --engine packet --dst-ip 198.18.0.2 \
			--flows 4 --count 4000 --rate 10kpps --json "$LR_TMP/send$i.json"
		eval "S$i=\$LR_LAST_PID"
	done
	RC1=0
	RC2=0
	lr_wait_pid "$S1" 20 || RC1=$?
	lr_wait_pid "$S2" 20 || RC2=$?
	RC=0
	lr_wait_pid "$R2" 20 || RC=$?
	lr_show_file "$LR_TMP/recv2-$ENG.err"
	C="two senders [$ENG]"
	lr_check "$C: send exit codes" "$RC1$RC2" == 00
	lr_check "$C: recv exit code" "$RC" == 0
	lr_jvalid "$R"
	A=$(lr_jget "$R" .rx.shared_flows.run_id)
	B=$(lr_jget "$R" .rx.shared_flows.other_run_id)
	lr_check "$C: rx.shared_flows.flows" "$(lr_jget "$R" .rx.shared_flows.flows)" == 4
	lr_check "$C: run_id non-zero" "$A" ">" 0
	lr_check "$C: other_run_id non-zero" "$B" ">" 0
	lr_check "$C: two different run ids" "$(jq -r '.rx.shared_flows | .run_id != .other_run_id' "$R")" == true
	if lr_is_num "$A" && lr_is_num "$B"; then
		WANT=$(printf '  warning   two senders use the same flows (run ids %08x and %08x, on 4 flows): their sequences mix, so lost, reordered and duplicates do not describe either' "$A" "$B")
		lr_check "$C: the summary says so, with both run ids" \
			"$(grep 'two senders' "$LR_TMP/recv2-$ENG.err")" == "$WANT"
	fi
done

# ---- 4. frames redirected past the XDP hook
lr_log "== case 4: frames that bypass XDP"
lr_netns_add SRC src
lr_netns_add HOP hop
lr_netns_add DST dst
lr_veth "$SRC" s0 "$HOP" h1
lr_veth "$HOP" h2 "$DST" c0
lr_addr "$SRC" s0 198.18.0.5/30
lr_addr "$DST" c0 198.18.0.6/30
ip -n "$HOP" link set h1 up
ip -n "$HOP" link set h2 up
H2=$(ip -n "$HOP" -j link show dev h2 | jq -r '.[0].ifindex')
cat >"$LR_TMP/redir.c" <<EOF
// SPDX-License-Identifier: MIT
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

SEC("tc")
int redir(struct __sk_buff *skb)
{
	return bpf_redirect_peer($H2, 0);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
EOF
# the uapi headers' <asm/types.h> lives under the host's multiarch directory
MULTIARCH=$(cc -print-multiarch 2>/dev/null || true)
clang -O2 -g -target bpf ${MULTIARCH:+-idirafter "/usr/include/$MULTIARCH"} -c "$LR_TMP/redir.c" -o "$LR_TMP/redir.o" ||
	lr_die "cannot build the tc redirect program"
ip netns exec "$HOP" tc qdisc add dev h1 clsact
ip netns exec "$HOP" tc filter add dev h1 ingress bpf direct-action obj "$LR_TMP/redir.o" sec tc ||
	lr_kernel_lacks "tc BPF programs (clsact, direct-action)"
C0MAC=$(lr_mac "$DST" c0)
for MODE in native generic; do
	rm -f "$LR_TMP/ready" "$R"
	lr_spawn "recv-$MODE" ip netns exec "$DST" "$LINERATE" recv -i c0 --xdp-mode "$MODE" --duration 3 \
		--json "$R" --ready-file "$LR_TMP/ready"
	RP=$LR_LAST_PID
	lr_wait_for_file "$LR_TMP/ready" 15 "$RP" || lr_die "recv never became ready"
	RC=0
	ip netns exec "$SRC" "$LINERATE" send -i s0 --engine packet --dst-ip 198.18.0.6 --dst-mac "$C0MAC" \
		--count 3000 --rate 10kpps >"$LR_TMP/send4.out" 2>"$LR_TMP/send4.err" || RC=$?
	lr_check "[$MODE] send exit code" "$RC" == 0
	RC=0
	lr_wait_pid "$RP" 20 || RC=$?
	lr_show_file "$LR_TMP/recv-$MODE.err"
	lr_check "[$MODE] recv exit code" "$RC" == 0
	lr_jvalid "$R"
	U=$(lr_jget "$R" .rx.unseen)
	if [[ $MODE == native ]]; then
		lr_check "[native] rx.packets (the hook saw none)" "$(lr_jget "$R" .rx.packets)" == 0
		lr_check "[native] rx.unseen >= 3000" "$U" ">=" 3000
		lr_check "[native] rx.unseen <= rx.device.rx_packets" "$U" "<=" "$(lr_jget "$R" .rx.device.rx_packets)"
		WANT="  warning   the interface received $U frames that the XDP program did not see: another program runs before ours, or the frames bypass XDP (a tc redirect into this namespace); try --xdp-mode generic"
		lr_check "[native] the summary says so" "$(grep 'did not see' "$LR_TMP/recv-$MODE.err")" == "$WANT"
	else
		lr_check "[generic] rx.packets (generic XDP sees redirected frames)" "$(lr_jget "$R" .rx.packets)" == 3000
		lr_check "[generic] rx.unseen <= 16" "$U" "<=" 16
		lr_check_cmd "[generic] no 'did not see' line" \
			bash -c "! grep -q 'did not see' '$LR_TMP/recv-$MODE.err'"
	fi
done
lr_finish
