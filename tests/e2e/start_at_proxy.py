#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A relay between one linerate controller and one agent that speaks the protocol itself.

start_at_proxy.py LISTEN_PORT AGENT_HOST AGENT_PORT READY_FILE REPORT_FILE

Listens on 127.0.0.1:LISTEN_PORT for one controller and relays its requests to the agent and the
replies back, frame by frame (docs/protocol.md). When the controller asks `start {at_ns: 0}`, the
relay asks the agent's clock itself and sends instead, in turn:
  - start {at_ns: 5 s ahead}: must be refused (an error, code 2);
  - start {at_ns: 300 ms ahead}: the sender must start then, not before;
and hands the second reply to the controller. What it saw goes to REPORT_FILE as one JSON object.
A second, independent reading of the framing: a mistake shared by both ends of linerate shows here.
"""
import json
import socket
import struct
import sys
import time

LIMIT = 1 << 20


def read_frame(sock):
    head = read_exact(sock, 4)
    if head is None:
        return None
    (n,) = struct.unpack(">I", head)
    if n > LIMIT:
        raise ValueError("frame of %d bytes" % n)
    body = read_exact(sock, n)
    if body is None:
        raise ValueError("truncated frame")
    return json.loads(body)


def read_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            if buf:
                raise ValueError("truncated frame")
            return None
        buf += chunk
    return buf


def write_frame(sock, msg):
    body = json.dumps(msg).encode()
    sock.sendall(struct.pack(">I", len(body)) + body)


def call(agent, msg):
    write_frame(agent, msg)
    rep = read_frame(agent)
    if rep is None:
        raise ValueError("the agent closed the stream after '%s'" % msg["type"])
    return rep


def agent_now(agent):
    rep = call(agent, {"type": "clock", "v": 7, "t1": 1})
    if rep.get("type") != "clock":
        raise ValueError("clock: got %r" % rep)
    return rep["t3"]


def start_at(agent, report):
    ahead = call(agent, {"type": "start", "v": 7, "at_ns": agent_now(agent) + 5_000_000_000})
    report["far"] = {"type": ahead.get("type"), "code": ahead.get("code"), "message": ahead.get("message")}
    asked = agent_now(agent) + 300_000_000
    t0 = time.monotonic_ns()
    rep = call(agent, {"type": "start", "v": 7, "at_ns": asked})
    report["elapsed_ns"] = time.monotonic_ns() - t0
    report["asked_ns"] = asked
    report["reply"] = rep
    return rep


def main():
    port, host, aport, ready, out = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
    report = {"starts": 0}
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("127.0.0.1", port))
    lsock.listen(1)
    lsock.settimeout(30)
    with open(ready, "w") as f:
        f.write("ready\n")
    ctl, _ = lsock.accept()
    ctl.settimeout(30)
    agent = socket.create_connection((host, aport), timeout=30)
    try:
        while True:
            req = read_frame(ctl)
            if req is None:
                break
            if req.get("type") == "start" and req.get("at_ns") == 0:
                report["starts"] += 1
                rep = start_at(agent, report)
            else:
                rep = call(agent, req)
            write_frame(ctl, rep)
    except (ValueError, OSError) as e:
        report["error"] = str(e)
    finally:
        with open(out, "w") as f:
            json.dump(report, f)
        ctl.close()
        agent.close()


if __name__ == "__main__":
    main()
