# SPDX-License-Identifier: MIT
"""The raw TCP side of test_agent_flood.sh: idle connections held against an agent, and a
controller's hello timed. Standard library only; every wait bounded.

  hold HOST PORT N SECONDS STATS SRC...  N idle connections to HOST:PORT from each SRC address
                               (bound to it), none sending a byte; one the agent closes (or never
                               lets connect) is opened again 200 ms later. Ends after SECONDS or on
                               SIGTERM, then writes "opened N closed_by_agent M open K" to STATS
  talk HOST PORT N SECONDS STATS SRC...  as hold, but each connection sends a hello at once, takes
                               the reply and then says nothing more (a handshake never finished)
  hello HOST PORT              connects, sends a hello and waits up to 3 s for the reply: prints
                               the milliseconds from the connect's start to the reply whole, and
                               the reply's type ("none" when nothing came)
"""
import json
import os
import selectors
import signal
import socket
import struct
import sys
import time

REOPEN_S = 0.2


def hello_frame():
    msg = json.dumps({'type': 'hello', 'v': 7, 'version': {'release': 'probe', 'revision': 'probe'},
                      'nonce': os.urandom(32).hex()}).encode()
    return struct.pack('>I', len(msg)) + msg


def hold(host, port, per_src, seconds, stats, srcs, talk=False):
    sel = selectors.DefaultSelector()
    slots = [(src, i) for src in srcs for i in range(per_src)]
    socks = {}  # slot -> socket
    due = {slot: 0.0 for slot in slots}  # slot -> when to open it again
    opened = closed = 0
    stop = [False]

    def on_term(_sig, _frm):
        stop[0] = True

    signal.signal(signal.SIGTERM, on_term)
    end = time.monotonic() + seconds
    while not stop[0] and time.monotonic() < end:
        now = time.monotonic()
        for slot in slots:
            if slot in socks or due[slot] > now:
                continue
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.bind((slot[0], 0))
                s.connect_ex((host, port))
            except OSError:
                s.close()
                due[slot] = now + REOPEN_S
                continue
            socks[slot] = s
            # a talker's hello goes once the connect is through
            sel.register(s, selectors.EVENT_WRITE if talk else selectors.EVENT_READ, slot)
            opened += 1
        for key, events in sel.select(timeout=0.05):
            slot = key.data
            s = socks[slot]
            data = b''
            if events & selectors.EVENT_WRITE:
                try:
                    if not s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                        s.send(hello_frame())
                        sel.modify(s, selectors.EVENT_READ, slot)
                        continue
                except OSError:
                    pass
            else:
                try:
                    data = s.recv(4096)
                except OSError:
                    pass
            if data and talk:
                continue  # the hello reply: a talker stays, silent from now on
            # an idle connection is only ever closed (or reset) by the agent, never answered
            closed += not data
            del socks[slot]
            sel.unregister(s)
            s.close()
            due[slot] = time.monotonic() + REOPEN_S
    with open(stats, 'w') as f:
        f.write('opened %d closed_by_agent %d open %d\n' % (opened, closed, len(socks)))
    for s in socks.values():
        s.close()


def recv_exact(s, n, end):
    buf = b''
    while len(buf) < n:
        left = end - time.monotonic()
        if left <= 0:
            return None
        s.settimeout(left)
        try:
            chunk = s.recv(n - len(buf))
        except OSError:
            return None
        if not chunk:
            return None
        buf += chunk
    return buf


def hello(host, port):
    t0 = time.monotonic()
    end = t0 + 3
    kind = 'none'
    try:
        s = socket.create_connection((host, port), timeout=3)
    except OSError:
        print('%d none' % ((time.monotonic() - t0) * 1000))
        return
    try:
        s.sendall(hello_frame())
        hdr = recv_exact(s, 4, end)
        if hdr:
            body = recv_exact(s, struct.unpack('>I', hdr)[0], end)
            if body:
                kind = json.loads(body).get('type', 'none')
    finally:
        ms = (time.monotonic() - t0) * 1000
        s.close()
    print('%d %s' % (ms, kind))


def main():
    cmd = sys.argv[1]
    if cmd in ('hold', 'talk'):
        hold(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6], sys.argv[7:],
             cmd == 'talk')
    elif cmd == 'hello':
        hello(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit('unknown command ' + cmd)


if __name__ == '__main__':
    main()
