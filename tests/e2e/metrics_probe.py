# SPDX-License-Identifier: MIT
"""The HTTP side of test_metrics.sh: the agent's metrics page, raw requests, idle connections, and
Prometheus's query API. Standard library only; every wait bounded.

  page URL BODYFILE            status, Content-Type and Content-Length of GET URL; the body to BODYFILE
  raw HOST PORT WHAT           the status of a hand-made request (WHAT: post, path, garbage, big, head);
                               "refused" when nothing listens
  until URL SERIES WANT SECONDS  the page every 100 ms until SERIES has the value WANT; the last value
  hold HOST PORT N             N idle connections held open; meanwhile a scrape's status and ms, then
                               how many idle ones the agent closed within 4 s
  watch URL SECONDS TESTS N    the page every 100 ms until linerate_agent_tests_total >= TESTS: whether
                               busy and running were seen at 1, and rx packets seen while running
                               strictly between 0 and N
  query PROM EXPR              an instant query's one value ("none": no series, "many": several)
  labels PROM EXPR             its one series' labels, as JSON
  await PROM EXPR WANT SECONDS  query until the value is WANT; the last value
"""
import json
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


def fetch(url, timeout=5):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def samples(text):
    """{series: value} of a metrics page, series as written (name and labels)."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith('#'):
            series, _, value = line.rpartition(' ')
            out[series] = value
    return out


def raw(host, port, data, timeout=3):
    try:
        s = socket.create_connection((host, int(port)), timeout=timeout)
    except ConnectionRefusedError:
        return 'refused'
    try:
        s.sendall(data)
        got = b''
        while True:
            try:
                chunk = s.recv(65536)
            except (socket.timeout, ConnectionResetError):
                break
            if not chunk:
                break
            got += chunk
    finally:
        s.close()
    first = got.split(b'\r\n', 1)[0].split(b' ')
    return first[1].decode() if len(first) > 1 else 'none'


def query(prom, expr):
    url = prom + '/api/v1/query?' + urllib.parse.urlencode({'query': expr})
    status, _, body = fetch(url)
    if status != 200:
        return None
    return json.loads(body)['data']['result']


def one(result):
    if result is None or not result:
        return 'none'
    if len(result) > 1:
        return 'many'
    return result[0]['value'][1]


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == 'page':
        status, headers, body = fetch(args[0])
        with open(args[1], 'wb') as f:
            f.write(body)
        print('%d\t%s\t%s' % (status, headers.get('Content-Type'), headers.get('Content-Length')))
    elif cmd == 'raw':
        host, port, what = args
        data = {
            'post': b'POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n',
            'path': b'GET /secrets HTTP/1.1\r\nHost: x\r\n\r\n',
            'garbage': b'\x16\x03\x01\x02\x00 hello\r\n\r\n',
            'big': b'GET /metrics HTTP/1.1\r\nX-Filler: ' + b'a' * 9000,
            'head': b'HEAD /metrics HTTP/1.1\r\nHost: x\r\n\r\n',
        }[what]
        print(raw(host, port, data))
    elif cmd == 'hold':
        host, port, n = args[0], int(args[1]), int(args[2])
        held = [socket.create_connection((host, port), timeout=5) for _ in range(n)]
        held[0].sendall(b'GET /metr')   # one that starts a request and never ends it
        t0 = time.monotonic()
        try:
            status, _, _ = fetch('http://%s:%d/metrics' % (host, port), timeout=3)
        except OSError:
            status = 'none'
        ms = int((time.monotonic() - t0) * 1000)
        closed = 0
        deadline = time.monotonic() + 4
        for s in held:
            s.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                if s.recv(1) == b'':
                    closed += 1
            except ConnectionResetError:
                closed += 1     # closed with its half request unread: a reset
            except OSError:
                pass
            s.close()
        print('%s %d %d' % (status, ms, closed))
    elif cmd == 'watch':
        url, seconds, tests, n = args[0], float(args[1]), int(args[2]), int(args[3])
        busy = running = False
        mid = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                s = samples(fetch(url, timeout=2)[2].decode())
            except OSError:
                time.sleep(0.1)
                continue
            busy = busy or s.get('linerate_agent_busy') == '1'
            if s.get('linerate_test_running') == '1':
                running = True
                rx = int(s.get('linerate_rx_packets_total', '0'))
                if 0 < rx < n:
                    mid.append(rx)
            if int(s.get('linerate_agent_tests_total', '0')) >= tests:
                break
            time.sleep(0.1)
        print('busy=%d running=%d mid=%d first_mid=%s' % (busy, running, len(mid), mid[0] if mid else 'none'))
    elif cmd == 'until':
        url, series, want, seconds = args[0], args[1], args[2], float(args[3])
        deadline = time.monotonic() + seconds
        value = 'none'
        while time.monotonic() < deadline:
            try:
                value = samples(fetch(url, timeout=2)[2].decode()).get(series, 'none')
            except OSError:
                value = 'none'
            if value == want:
                break
            time.sleep(0.1)
        print(value)
    elif cmd == 'query':
        print(one(query(args[0], args[1])))
    elif cmd == 'labels':
        r = query(args[0], args[1])
        print(json.dumps(r[0]['metric'], sort_keys=True) if r and len(r) == 1 else 'none')
    elif cmd == 'await':
        prom, expr, want, seconds = args[0], args[1], args[2], float(args[3])
        deadline = time.monotonic() + seconds
        value = 'none'
        while time.monotonic() < deadline:
            try:
                value = one(query(prom, expr))
            except OSError:
                value = 'none'
            if value == want:
                break
            time.sleep(0.2)
        print(value)
    else:
        sys.exit('unknown command ' + cmd)


if __name__ == '__main__':
    main()
