#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Automatic engine choice: the best engine on veth, the fallback when it is unavailable, and why.
#
#   ns lr-engine_auto-snd-PID                   ns lr-engine_auto-rcv-PID
#   +-------------------------------+          +-------------------------------+
#   | linerate send (--engine auto) |          | linerate recv (--engine auto) |
#   |   snd0 198.18.0.1/30          |<-veth--->|   rcv0 198.18.0.2/30          |
#   +-------------------------------+          +-------------------------------+
#
# Checks:
#   - auto on veth: send picks afxdp in copy mode and its start line says zero-copy is unsupported;
#     recv picks xdp in native mode; counts exact
#   - with AF_XDP and XDP made unavailable (the test-only LINERATE_TEST_DISABLE=afxdp,xdp), auto
#     falls back to packet on both sides, the start lines say why each better engine was not
#     usable, the JSON says packet, and the counts are still exact
#   - asking for a disabled engine explicitly fails with exit 2 and one line naming it
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

COUNT=3000
lr_init
lr_pair_topology

lr_log "== auto, everything available"
lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 "$COUNT" --rate 20kpps
lr_check_exact "$COUNT" 1
lr_check_cmd "send start line names afxdp copy mode and why not zero-copy" \
	grep -q "engine afxdp, copy mode on snd0.*zero-copy unsupported" "$LR_TMP/send.err"
lr_check_cmd "recv start line names xdp native" grep -q "engine xdp (native)" "$LR_TMP/recv.err"

lr_log "== auto, AF_XDP and XDP disabled"
export LINERATE_TEST_DISABLE=afxdp,xdp
export LR_EXPECT_SEND=packet LR_EXPECT_RECV=packet
lr_exchange "$SND" snd0 "$RCV" rcv0 198.18.0.2 "$COUNT" --rate 20kpps
lr_check_exact "$COUNT" 1
lr_check_cmd "send start line says packet and why not afxdp" \
	grep -q "engine packet, tpacket_v2 mode.*afxdp not usable (disabled by LINERATE_TEST_DISABLE)" "$LR_TMP/send.err"
lr_check_cmd "recv start line says packet and why not xdp" \
	grep -q "engine packet (tpacket_v3).*xdp not usable (disabled by LINERATE_TEST_DISABLE)" "$LR_TMP/recv.err"

lr_log "== explicit engine that is disabled"
RC=0
ip netns exec "$SND" "$LINERATE" send -i snd0 --dst-ip 198.18.0.2 --count 10 --engine afxdp \
	>"$LR_TMP/x.out" 2>"$LR_TMP/x.err" || RC=$?
lr_check "send --engine afxdp while disabled: exit code" "$RC" == 2
lr_check "send --engine afxdp while disabled: one line on stderr" "$(wc -l <"$LR_TMP/x.err")" == 1
lr_check_cmd "send --engine afxdp while disabled: the line says why" grep -q "disabled by LINERATE_TEST_DISABLE" "$LR_TMP/x.err"
RC=0
ip netns exec "$RCV" "$LINERATE" recv -i rcv0 --duration 1 --engine xdp >"$LR_TMP/y.out" 2>"$LR_TMP/y.err" || RC=$?
lr_check "recv --engine xdp while disabled: exit code" "$RC" == 2
lr_check "recv --engine xdp while disabled: one line on stderr" "$(wc -l <"$LR_TMP/y.err")" == 1
lr_check_cmd "no XDP program left on rcv0" lr_xdp_absent "$RCV" rcv0
unset LINERATE_TEST_DISABLE
lr_finish
