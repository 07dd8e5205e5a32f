#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A raw client of the agent protocol (docs/protocol.md), for requests linerate itself never sends.

agent_client.py HOST PORT [--token FILE|-] [--hello] REQUEST...

Connects, sends hello (and auth with --token, - for stdin: the proofs computed here, BLAKE2b-256 key and
HMAC-SHA-512-256, with hashlib), then each REQUEST (a JSON object; a prepare_rx gets the keys it
lacks from a receiver's defaults), then quit. Prints every reply after hello as one JSON line on
stdout (with --hello, the hello reply too, first). Exit 0 when the exchange went through (whatever the replies said), 1 otherwise.
A second, independent reading of the framing and the auth.
"""
import hashlib
import hmac
import json
import os
import socket
import struct
import sys

VERSION = 7
LIMIT = 1 << 20
RX_DEFAULTS = {
    "interface": "", "netns": "", "engine": "auto", "xdp_mode": "auto", "workers": 1,
    "dst_port": 7447, "pcap": "", "pcap_every": 1, "snaplen": 128, "prog_stats": False,
    "address": "", "clock_offset_ns": 0,
}


def read_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ValueError("the agent closed the stream")
        buf += chunk
    return buf


def call(sock, msg):
    msg.setdefault("v", VERSION)
    body = json.dumps(msg).encode()
    sock.sendall(struct.pack(">I", len(body)) + body)
    (n,) = struct.unpack(">I", read_exact(sock, 4))
    if n > LIMIT:
        raise ValueError("a reply of %d bytes" % n)
    return json.loads(read_exact(sock, n))


def proof(key, role, first, second):
    text = ("linerate-v1 %s %s%s" % (role, first, second)).encode()
    return hmac.new(key, text, hashlib.sha512).digest()[:32].hex()


def main(argv):
    args = argv[1:]
    token = None
    if len(args) >= 4 and args[2] == "--token":
        if args[3] == "-":
            token = sys.stdin.buffer.read().rstrip(b" \t\r\n")
        else:
            with open(args[3], "rb") as f:
                token = f.read().rstrip(b" \t\r\n")
        del args[2:4]
    show_hello = len(args) >= 3 and args[2] == "--hello"
    if show_hello:
        del args[2]
    if len(args) < 2:
        sys.stderr.write(__doc__)
        return 2
    host, port, requests = args[0], int(args[1]), [json.loads(r) for r in args[2:]]
    sock = socket.create_connection((host, port), timeout=10)
    nonce_c = os.urandom(32).hex()
    hello = call(sock, {"type": "hello", "version": {"release": "agent_client", "revision": "0"},
                        "nonce": nonce_c})
    if hello.get("type") != "hello" or show_hello:
        print(json.dumps(hello), flush=True)
    if hello.get("type") != "hello":
        return 1
    if hello.get("auth") != "none":
        if token is None:
            raise ValueError("the agent asks for a token")
        key = hashlib.blake2b(token, digest_size=32).digest()
        nonce_e = hello["nonce"]
        if not hmac.compare_digest(hello["proof"], proof(key, "agent", nonce_c, nonce_e)):
            raise ValueError("the agent's proof does not match the token")
        rep = call(sock, {"type": "auth", "proof": proof(key, "controller", nonce_e, nonce_c)})
        print(json.dumps(rep), flush=True)
        if rep.get("type") != "ok":
            return 1
    for req in requests:
        if req.get("type") == "prepare_rx":
            req = dict(RX_DEFAULTS, **req)
        print(json.dumps(call(sock, req)), flush=True)
    print(json.dumps(call(sock, {"type": "quit"})), flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (OSError, ValueError) as e:
        print("agent_client.py: %s" % e, file=sys.stderr)
        sys.exit(1)
