#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A TCP relay that holds every chunk it forwards for a while: a slow control link, for tests.

delay_relay.py LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT DELAY_MS READY_FILE

Takes connections on LISTEN_HOST:LISTEN_PORT and joins each to TARGET_HOST:TARGET_PORT, bytes
unchanged, both ways; each chunk read waits DELAY_MS before it goes on. A controller's clock
estimate over it sees a round trip of at least twice DELAY_MS, so its error bound is at least
DELAY_MS: far more than a veth's latency, whose figures then cannot be valid. Without netem
(sch_netem is often not built), this is how a test gets an estimate it knows is too coarse.
READY_FILE is written once it listens. Runs until killed.
"""
import socket
import sys
import threading
import time


def pump(src, dst, delay):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            time.sleep(delay)
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def main():
    host, port, thost, tport, delay_ms, ready = sys.argv[1:7]
    delay = int(delay_ms) / 1000.0
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind((host, int(port)))
    lsock.listen(8)
    with open(ready, "w") as f:
        f.write("ready\n")
    while True:
        client, _ = lsock.accept()
        try:
            server = socket.create_connection((thost, int(tport)), timeout=5)
        except OSError:
            client.close()
            continue
        server.settimeout(None)
        for a, b in ((client, server), (server, client)):
            a.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=pump, args=(a, b, delay), daemon=True).start()


if __name__ == "__main__":
    main()
