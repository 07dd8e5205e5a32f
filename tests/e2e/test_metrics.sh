#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# linerate agent --metrics, scraped by a real Prometheus: the totals Prometheus stores after a test
# are the totals of the controller's JSON result, exactly.
#
#   [lr-metrics-ctl-PID]                                  [lr-metrics-ag-PID]
#   controller (send --peer), Prometheus                  agent --listen 198.18.0.2 --metrics 198.18.0.2:9446
#   (web on 127.0.0.1:9090, scrapes every 1 s)            (--allow 'd*', a token)
#        m1 198.18.0.1/30 ----------- management ----------- m2 198.18.0.2/30
#        d1 198.18.1.1/30 ----------- test frames ---------- d2 198.18.1.2/30
#
# Checks:
#   - refused at start, exit 2 and one line naming --metrics, nothing left behind (no ready file,
#     the --listen port free again): no port, a port out of range, a name, --listen's own address
#     and port, an address no interface holds, a port another agent's metrics listener holds
#   - the page: GET /metrics is 200 with Content-Type "text/plain; version=0.0.4; charset=utf-8",
#     promtool check metrics finds nothing, every family has HELP and TYPE, the idle agent's state
#     (busy 0, no test yet, no rx sent sample); HEAD 200; another path 404, POST 405, garbage 400, a head over 4 KiB 431;
#     the token appears nowhere on it
#   - a slow scraper: 12 idle connections (one with half a request) held open while a real scrape
#     is answered 200 within 1 s, and every idle one closed by the agent within 4 s
#   - Prometheus (its own TSDB in the test's temp dir) scrapes the agent: up == 1
#   - forward, send --peer (the agent's receiver, 60000 frames at 20 kpps): while it runs the page
#     says busy 1 and running 1 and shows rx packets between 0 and 60000 (read once a second); a
#     second controller meanwhile is refused busy; afterwards Prometheus's linerate_rx_packets_total
#     == peer.result.rx.packets == 60000, rx bytes, lost, reordered, duplicates, the latency count
#     and p50 equal the JSON's; rx sent (the markers') == peer.result.rx.sent == 60000; one
#     rx per-queue series per peer.result.rx.per_queue entry, each equal to it, adding up to
#     rx packets; test_info names role rx, d2, xdp; the page says the same
#   - reverse (the agent's sender, 30000 frames): linerate_tx_packets_total == peer.result.tx.packets
#     == 30000 == this side's rx.packets; tx bytes equal; the per-queue series add up to it; the
#     receiver's series of the test before are gone (no rx sent, no rx per-queue series)
#   - round trip (the agent's reflector, 20000 frames): linerate_reflect_packets_total ==
#     peer.result.reflect.packets == 20000, bytes equal
#   - the agent's own counters: 3 sessions, 1 refused busy, 3 tests ended, busy 0 at the end
#   - SIGTERM: the agent exits 0 and its metrics port is closed
set -euo pipefail
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FWD_COUNT=60000
REV_COUNT=30000
RTT_COUNT=20000
AG_ADDR=198.18.0.2
METRICS=$AG_ADDR:9446
PROM=http://127.0.0.1:9090

lr_init
lr_require_cmds prometheus promtool python3 grep
# the system's interpreter starts in a fraction of a version manager's shim's time
PY=python3
[[ -x /usr/bin/python3 ]] && PY=/usr/bin/python3
PROBE=$LR_E2E_DIR/metrics_probe.py

lr_netns_add CTL ctl
lr_netns_add AG ag
lr_veth "$CTL" m1 "$AG" m2
lr_addr "$CTL" m1 198.18.0.1/30
lr_addr "$AG" m2 "$AG_ADDR/30"
lr_veth "$CTL" d1 "$AG" d2
lr_addr "$CTL" d1 198.18.1.1/30
lr_addr "$AG" d2 198.18.1.2/30

TOKEN=$LR_TMP/token
(
	umask 077
	echo "metrics test token $$" >"$TOKEN"
)

# probe ARGS...: metrics_probe.py in the controller's namespace, bounded.
probe()
{
	timeout -k 5 30 ip netns exec "$CTL" "$PY" "$PROBE" "$@"
}

# prom EXPR: Prometheus's current value of EXPR ("none" without a series).
prom()
{
	probe query "$PROM" "$1"
}

# value SERIES FILE: the value of a sample line of a saved page ("missing" without it).
value()
{
	awk -v s="$1" '$1 == s { print $2; found = 1 } END { if (!found) print "missing" }' "$2"
}

# ns SECONDS: seconds as a whole number of nanoseconds, rounded ("none" stays).
ns()
{
	if lr_is_num "$1"; then awk -v v="$1" 'BEGIN { printf "%.0f\n", v * 1e9 }'; else echo "$1"; fi
}

# refused DESC ERRFILE TEXT RC: exit 2, one line on stderr that says TEXT.
refused()
{
	lr_check "$1: exit code" "$4" == 2
	lr_check "$1: lines on stderr" "$(wc -l <"$2")" == 1
	if grep -qF -- "$3" "$2"; then
		lr_pass "$1: says \"$3\""
	else
		lr_fail "$1: says \"$3\"" "$(head -c 400 "$2")"
	fi
}

# bad NAME METRICS_VALUE TEXT [LISTEN]: an agent started with it is refused, leaving nothing behind.
bad()
{
	local name=$1 rc=0

	timeout -k 5 20 ip netns exec "$AG" "$LINERATE" agent --listen "${4:-$AG_ADDR:7447}" --token-file "$TOKEN" \
		--metrics "$2" --ready-file "$LR_TMP/$name.ready" >"$LR_TMP/$name.out" 2>"$LR_TMP/$name.err" || rc=$?
	refused "--metrics $2" "$LR_TMP/$name.err" "$3" "$rc"
	lr_check "--metrics $2: the line names --metrics" "$(grep -c -- '--metrics' "$LR_TMP/$name.err")" == 1
	lr_check_cmd "--metrics $2: no ready file left" test ! -e "$LR_TMP/$name.ready"
}

# ---------------------------------------------------------------------------------------------
# Refused at start.

bad nop "$AG_ADDR" "has no port"
bad range "$AG_ADDR:70000" "is not a port"
bad name "metrics.example:9446" "is not an IPv4 or IPv6 address"
bad same "$AG_ADDR:7447" "is --listen's own address and port"
bad absent 198.18.9.9:9446 "cannot listen on 198.18.9.9:9446"
# the --listen port it had taken is free again: an agent takes it at once
lr_spawn probe-listen ip netns exec "$AG" "$LINERATE" agent --listen "$AG_ADDR:7447" --token-file "$TOKEN" \
	--ready-file "$LR_TMP/probe-listen.ready"
if lr_wait_for_file "$LR_TMP/probe-listen.ready" 10 "$LR_LAST_PID"; then
	lr_pass "after a refused --metrics, its --listen port is free"
else
	lr_fail "after a refused --metrics, its --listen port is free" "$(head -c 300 "$LR_TMP/probe-listen.err")"
fi
kill -TERM "$LR_LAST_PID"
lr_wait_pid "$LR_LAST_PID" 10 || true

# The agent under test.
lr_spawn agent ip netns exec "$AG" "$LINERATE" agent --listen "$AG_ADDR" --token-file "$TOKEN" --allow 'd*' \
	--metrics "$METRICS" --ready-file "$LR_TMP/agent.ready"
AGENT_PID=$LR_LAST_PID
lr_wait_for_file "$LR_TMP/agent.ready" 10 "$AGENT_PID" || {
	lr_show_file "$LR_TMP/agent.err"
	lr_die "the agent never became ready"
}
lr_check_cmd "the agent logs where its metrics are" grep -q "metrics on http://$METRICS/metrics" "$LR_TMP/agent.err"
# a second agent whose metrics port is taken
bad taken "$METRICS" "Address already in use" "$AG_ADDR:7448"

# ---------------------------------------------------------------------------------------------
# The page itself.

PAGE=$LR_TMP/idle.txt
read -r STATUS CTYPE < <(probe page "http://$METRICS/metrics" "$PAGE" | awk -F'\t' '{ print $1, $2 }')
lr_check "GET /metrics: status" "$STATUS" == 200
lr_check "GET /metrics: Content-Type" "$CTYPE" == "text/plain; version=0.0.4; charset=utf-8"
if promtool check metrics <"$PAGE" >"$LR_TMP/promtool.out" 2>&1; then
	lr_pass "promtool check metrics: nothing to say"
else
	lr_fail "promtool check metrics: nothing to say" "$(head -c 600 "$LR_TMP/promtool.out")"
fi
# every family: a HELP line, then its TYPE line
# shellcheck disable=SC2016 # awk's fields
lr_check "families with HELP and TYPE" "$(awk '/^# HELP / { h[$3] = 1 } /^# TYPE / { if (h[$3]) n++; else bad++ }
	END { print (bad ? "TYPE without HELP" : n) }' "$PAGE")" == 27
# shellcheck disable=SC2016
lr_check "samples of undeclared families" "$(awk '/^# TYPE / { t[$3] = 1; next } /^#/ { next }
	{ n = $1; sub(/\{.*/, "", n); b = n; sub(/_(sum|count)$/, "", b); if (!t[n] && !t[b]) print n }' "$PAGE" | wc -l)" == 0
lr_check "idle: linerate_cost_seconds_per_packet{part=\"sender\"} (unknown)" \
	"$(value 'linerate_cost_seconds_per_packet{part="sender"}' "$PAGE")" == NaN
lr_check "idle: linerate_agent_busy" "$(value linerate_agent_busy "$PAGE")" == 0
lr_check "idle: linerate_test_id" "$(value linerate_test_id "$PAGE")" == 0
lr_check "idle: linerate_agent_tests_total" "$(value linerate_agent_tests_total "$PAGE")" == 0
lr_check "idle: no linerate_test_info sample" "$(grep -c '^linerate_test_info{' "$PAGE" || true)" == 0
lr_check "idle: no rx sent sample (no marker yet)" "$(grep -c '^linerate_rx_sent_packets_total ' "$PAGE" || true)" == 0
lr_check "the token is nowhere on the page" "$(grep -cF "metrics test token" "$PAGE" || true)" == 0
lr_check "HEAD /metrics" "$(probe raw "$AG_ADDR" 9446 head)" == 200
lr_check "GET /secrets: 404" "$(probe raw "$AG_ADDR" 9446 path)" == 404
lr_check "POST /metrics: 405" "$(probe raw "$AG_ADDR" 9446 post)" == 405
lr_check "garbage: 400" "$(probe raw "$AG_ADDR" 9446 garbage)" == 400
lr_check "a head over 4 KiB: 431" "$(probe raw "$AG_ADDR" 9446 big)" == 431

read -r STATUS MS CLOSED < <(probe hold "$AG_ADDR" 9446 12)
lr_check "12 idle connections held: a scrape meanwhile" "$STATUS" == 200
lr_check "12 idle connections held: the scrape's time (ms)" "$MS" "<" 1000
lr_check "idle connections the agent closed within 4 s" "$CLOSED" == 12
lr_check "the agent is still running" "$(kill -0 "$AGENT_PID" 2>/dev/null && echo yes || echo no)" == yes

# ---------------------------------------------------------------------------------------------
# Prometheus, in the controller's namespace.

cat >"$LR_TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: linerate
    static_configs:
      - targets: ['$METRICS']
EOF
mkdir "$LR_TMP/tsdb"
lr_spawn prometheus ip netns exec "$CTL" prometheus --config.file="$LR_TMP/prometheus.yml" \
	--storage.tsdb.path="$LR_TMP/tsdb" --web.listen-address=127.0.0.1:9090 --log.level=warn
PROM_PID=$LR_LAST_PID
# shellcheck disable=SC2016 # the inner shell's
if ! timeout 30 ip netns exec "$CTL" "$PY" -c 'import sys, time, urllib.request
for _ in range(300):
    try:
        if urllib.request.urlopen(sys.argv[1] + "/-/ready", timeout=1).status == 200:
            sys.exit(0)
    except OSError:
        pass
    time.sleep(0.1)
sys.exit(1)' "$PROM"; then
	lr_show_file "$LR_TMP/prometheus.err"
	lr_die "Prometheus never became ready"
fi
lr_check "Prometheus (PID $PROM_PID) scrapes the agent: up" "$(probe await "$PROM" 'up{job="linerate"}' 1 20)" == 1

# ---------------------------------------------------------------------------------------------
# Forward: the agent's receiver.

lr_spawn watch ip netns exec "$CTL" "$PY" "$PROBE" watch "http://$METRICS/metrics" 30 1 "$FWD_COUNT"
WATCH_PID=$LR_LAST_PID
lr_spawn fwd timeout -k 5 60 ip netns exec "$CTL" "$LINERATE" send -i d1 --dst-ip 198.18.1.2 --count "$FWD_COUNT" \
	--rate 20k --peer "$AG_ADDR" --token-file "$TOKEN" --json "$LR_TMP/fwd.json"
FWD_PID=$LR_LAST_PID
# a second controller while the test runs
lr_check "forward: the page says running" "$(probe until "http://$METRICS/metrics" linerate_test_running 1 10)" == 1
RC=0
timeout -k 5 20 ip netns exec "$CTL" "$LINERATE" send -i d1 --dst-ip 198.18.1.2 --count 10 --peer "$AG_ADDR" \
	--token-file "$TOKEN" >"$LR_TMP/busy.out" 2>"$LR_TMP/busy.err" || RC=$?
lr_check "a second controller meanwhile: exit code" "$RC" == 1
lr_check_cmd "a second controller meanwhile: told busy" grep -q "busy" "$LR_TMP/busy.err"
RC=0
lr_wait_pid "$FWD_PID" 60 || RC=$?
lr_show_file "$LR_TMP/fwd.err"
lr_check "forward: exit code" "$RC" == 0
lr_wait_pid "$WATCH_PID" 40 || true
read -r W_BUSY W_RUNNING W_MID W_FIRST <"$LR_TMP/watch.out" || true
lr_check "forward: the page said busy during the test" "$W_BUSY" == busy=1
lr_check "forward: the page said running during the test" "$W_RUNNING" == running=1
lr_log "info: rx packets seen mid-test: $W_MID, the first $W_FIRST"
lr_check "forward: the page showed rx packets between 0 and $FWD_COUNT mid-test" "${W_MID#mid=}" ">=" 1

J=$LR_TMP/fwd.json
lr_check "forward: JSON tx.packets" "$(lr_jget "$J" .tx.packets)" == "$FWD_COUNT"
lr_check "forward: JSON peer.result.rx.packets" "$(lr_jget "$J" .peer.result.rx.packets)" == "$FWD_COUNT"
# the agent's tests_total moves only once the result is published: that scrape has the totals
lr_check "forward: Prometheus scraped after the end (tests_total)" \
	"$(probe await "$PROM" linerate_agent_tests_total 1 15)" == 1
lr_check "forward: Prometheus linerate_test_running" "$(prom linerate_test_running)" == 0
RXP=$(prom linerate_rx_packets_total)
lr_log "info: forward: Prometheus rx_packets_total $RXP, JSON peer.result.rx.packets $(lr_jget "$J" .peer.result.rx.packets)"
lr_check "forward: Prometheus rx_packets_total == JSON peer.result.rx.packets" "$RXP" == \
	"$(lr_jget "$J" .peer.result.rx.packets)"
lr_check "forward: Prometheus rx_packets_total == the count sent" "$RXP" == "$FWD_COUNT"
lr_check "forward: Prometheus rx_bytes_total == JSON peer.result.rx.bytes" "$(prom linerate_rx_bytes_total)" == \
	"$(lr_jget "$J" .peer.result.rx.bytes)"
lr_check "forward: Prometheus rx_lost_packets == JSON peer.result.rx.lost" "$(prom linerate_rx_lost_packets)" == \
	"$(lr_jget "$J" .peer.result.rx.lost)"
lr_check "forward: Prometheus rx_reordered == JSON" "$(prom linerate_rx_reordered_packets_total)" == \
	"$(lr_jget "$J" .peer.result.rx.reordered)"
lr_check "forward: Prometheus rx_duplicates == JSON" "$(prom linerate_rx_duplicate_packets_total)" == \
	"$(lr_jget "$J" .peer.result.rx.duplicates)"
lr_check "forward: Prometheus latency count == JSON latency_ns.count" "$(prom linerate_rx_latency_seconds_count)" == \
	"$(lr_jget "$J" .peer.result.latency_ns.count)"
lr_check "forward: Prometheus latency p50 == JSON latency_ns.p50 (ns)" \
	"$(ns "$(prom 'linerate_rx_latency_seconds{quantile="0.5"}')")" == "$(lr_jget "$J" .peer.result.latency_ns.p50)"
lr_check "forward: Prometheus latency max == JSON latency_ns.max (ns)" \
	"$(ns "$(prom 'linerate_rx_latency_seconds{quantile="1"}')")" == "$(lr_jget "$J" .peer.result.latency_ns.max)"
lr_check "forward: Prometheus rx_sent_packets_total == JSON peer.result.rx.sent" \
	"$(prom linerate_rx_sent_packets_total)" == "$(lr_jget "$J" .peer.result.rx.sent)"
lr_check "forward: Prometheus rx_sent_packets_total == the count sent" "$(prom linerate_rx_sent_packets_total)" == \
	"$FWD_COUNT"
NQ=$(jq '.peer.result.rx.per_queue | length' "$J")
lr_check "forward: JSON peer.result.rx.per_queue has entries" "$NQ" ">=" 1
lr_check "forward: Prometheus rx per-queue series == JSON per_queue entries" \
	"$(prom 'count(linerate_rx_queue_packets_total)')" == "$NQ"
lr_check "forward: Prometheus rx per-queue series add up to rx_packets_total" \
	"$(prom 'sum(linerate_rx_queue_packets_total)')" == "$RXP"
while read -r Q QP; do
	lr_check "forward: Prometheus rx queue $Q == JSON per_queue" \
		"$(prom "linerate_rx_queue_packets_total{queue=\"$Q\"}")" == "$QP"
done < <(jq -r '.peer.result.rx.per_queue[] | "\(.queue) \(.packets)"' "$J")
lr_check "forward: Prometheus test_info" "$(probe labels "$PROM" linerate_test_info)" == \
	'{"__name__": "linerate_test_info", "engine": "xdp", "instance": "'"$METRICS"'", "interface": "d2", "job": "linerate", "role": "rx", "test": "rx on d2"}'
lr_check "forward: Prometheus test_id" "$(prom linerate_test_id)" == 1
PAGE=$LR_TMP/fwd.txt
probe page "http://$METRICS/metrics" "$PAGE" >/dev/null
lr_check "forward: the page's rx_packets_total, after the test" "$(value linerate_rx_packets_total "$PAGE")" == "$FWD_COUNT"
lr_check "forward: the page's busy, after the test" "$(value linerate_agent_busy "$PAGE")" == 0

# ---------------------------------------------------------------------------------------------
# Reverse: the agent's sender.

RC=0
timeout -k 5 60 ip netns exec "$CTL" "$LINERATE" send -i d1 --dst-ip 198.18.1.2 --count "$REV_COUNT" --rate 20k \
	--peer "$AG_ADDR" --token-file "$TOKEN" --reverse --json "$LR_TMP/rev.json" >"$LR_TMP/rev.out" \
	2>"$LR_TMP/rev.err" || RC=$?
lr_show_file "$LR_TMP/rev.err"
lr_check "reverse: exit code" "$RC" == 0
J=$LR_TMP/rev.json
lr_check "reverse: JSON peer.result.tx.packets" "$(lr_jget "$J" .peer.result.tx.packets)" == "$REV_COUNT"
lr_check "reverse: JSON rx.packets (this side)" "$(lr_jget "$J" .rx.packets)" == "$REV_COUNT"
lr_check "reverse: Prometheus scraped after the end (tests_total)" \
	"$(probe await "$PROM" linerate_agent_tests_total 2 15)" == 2
TXP=$(prom linerate_tx_packets_total)
lr_log "info: reverse: Prometheus tx_packets_total $TXP, JSON peer.result.tx.packets $(lr_jget "$J" .peer.result.tx.packets)"
lr_check "reverse: Prometheus tx_packets_total == JSON peer.result.tx.packets" "$TXP" == \
	"$(lr_jget "$J" .peer.result.tx.packets)"
lr_check "reverse: Prometheus tx_packets_total == this side's rx.packets" "$TXP" == "$(lr_jget "$J" .rx.packets)"
lr_check "reverse: Prometheus tx_bytes_total == JSON peer.result.tx.bytes" "$(prom linerate_tx_bytes_total)" == \
	"$(lr_jget "$J" .peer.result.tx.bytes)"
lr_check "reverse: Prometheus per-queue series add up" "$(prom 'sum(linerate_tx_queue_packets_total)')" == "$TXP"
lr_check "reverse: Prometheus per-queue series == JSON per_queue" \
	"$(prom 'count(linerate_tx_queue_packets_total)')" == "$(jq '.peer.result.tx.per_queue | length' "$J")"
lr_check "reverse: Prometheus rx_packets_total back to 0 (a new test)" "$(prom linerate_rx_packets_total)" == 0
lr_check "reverse: no rx_sent_packets_total series (no marker in this test)" \
	"$(prom linerate_rx_sent_packets_total)" == none
lr_check "reverse: no rx per-queue series" "$(prom 'count(linerate_rx_queue_packets_total)')" == none
lr_check "reverse: Prometheus test_info" "$(probe labels "$PROM" linerate_test_info)" == \
	'{"__name__": "linerate_test_info", "engine": "'"$(lr_jget "$J" .peer.result.engine)"'", "instance": "'"$METRICS"'", "interface": "d2", "job": "linerate", "role": "tx", "test": "tx on d2"}'

# ---------------------------------------------------------------------------------------------
# Round trip: the agent's reflector.

RC=0
timeout -k 5 60 ip netns exec "$CTL" "$LINERATE" send -i d1 --dst-ip 198.18.1.2 --count "$RTT_COUNT" --rate 20k \
	--peer "$AG_ADDR" --token-file "$TOKEN" --rtt --json "$LR_TMP/rtt.json" >"$LR_TMP/rtt.out" \
	2>"$LR_TMP/rtt.err" || RC=$?
lr_show_file "$LR_TMP/rtt.err"
lr_check "round trip: exit code" "$RC" == 0
J=$LR_TMP/rtt.json
lr_check "round trip: JSON peer.result.reflect.packets" "$(lr_jget "$J" .peer.result.reflect.packets)" == "$RTT_COUNT"
lr_check "round trip: Prometheus scraped after the end (tests_total)" \
	"$(probe await "$PROM" linerate_agent_tests_total 3 15)" == 3
lr_check "round trip: Prometheus reflect_packets_total == JSON peer.result.reflect.packets" \
	"$(prom linerate_reflect_packets_total)" == "$(lr_jget "$J" .peer.result.reflect.packets)"
lr_check "round trip: Prometheus reflect_bytes_total == JSON peer.result.reflect.bytes" \
	"$(prom linerate_reflect_bytes_total)" == "$(lr_jget "$J" .peer.result.reflect.bytes)"

# ---------------------------------------------------------------------------------------------
# The agent's own counts, and its end.

lr_check "Prometheus linerate_agent_sessions_total" "$(prom linerate_agent_sessions_total)" == 3
lr_check "Prometheus sessions refused busy" "$(prom 'linerate_agent_sessions_refused_total{reason="busy"}')" == 1
lr_check "Prometheus linerate_agent_busy at the end" "$(probe await "$PROM" linerate_agent_busy 0 10)" == 0
lr_check "Prometheus linerate_test_id" "$(prom linerate_test_id)" == 3
kill -TERM "$AGENT_PID"
RC=0
lr_wait_pid "$AGENT_PID" 10 || RC=$?
lr_check "SIGTERM: the agent's exit code" "$RC" == 0
lr_check "SIGTERM: its metrics port closed" "$(probe raw "$AG_ADDR" 9446 head)" == refused
lr_show_file "$LR_TMP/agent.err"

lr_finish
