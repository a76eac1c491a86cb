#!/usr/bin/env python3
"""Bytes on the wire per unchanged https poll of a daemon (B7), both directions, TCP and TLS included.

A `cenariusd serve` polls an unchanged table on a loopback nginx (TLS 1.3, a test CA); tcpdump on lo
captures the origin's port while the daemon is made to poll K times (POST /_cenarius/sync, so the
count is exact). Two cases:
  kept     polls closer together than nginx's keepalive_timeout: one connection carries them all
  resumed  polls further apart than it: each poll a new connection with an abbreviated handshake,
           and the close of the last one (nginx's close_notify and FIN, the client's) counted too
The default interval (300 s) is longer than nginx's default keepalive (75 s): "resumed" is the
default case. nginx's keepalive is shortened here so that the case takes seconds, not minutes.

  wire.py --bin .build/debug/cenariusd [--polls 10]
"""
import argparse
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tlsorigin import HttpsNginx  # noqa: E402

# What a device polls: the head where the remote publishes one (a first install asks for it first), else the table.
POLLED = ("Routes.head", "Routes.json")


def pcap_frames(path):
    """(frame bytes as on the wire incl. the 14-byte Ethernet header, IP bytes) of each captured packet."""
    frames = []
    with open(path, "rb") as f:
        header = f.read(24)
        if len(header) < 24:
            return frames
        endian = "<" if header[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
        link = struct.unpack(endian + "I", header[20:24])[0]
        link_header = 14 if link == 1 else 16 if link == 113 else 0
        while True:
            record = f.read(16)
            if len(record) < 16:
                break
            _, _, included, original = struct.unpack(endian + "IIII", record)
            f.read(included)
            frames.append((original - link_header + 14, original - link_header))
    return frames


class Capture:
    """tcpdump on lo for one TCP port, from __enter__ to __exit__."""

    def __init__(self, out, port, name):
        self.path = os.path.join(out, f"wire-{port}-{name}.pcap")
        self.port = port

    def __enter__(self):
        self.proc = subprocess.Popen(["tcpdump", "-i", "lo", "-U", "-s", "128", "-w", self.path, f"tcp port {self.port}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # tcpdump says "listening on lo" once its filter is in place.
        self.proc.stderr.readline()
        time.sleep(0.3)
        return self

    def __exit__(self, *exc):
        time.sleep(0.3)
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=10)
        frames = pcap_frames(self.path)
        self.packets = len(frames)
        self.frame_bytes = sum(f[0] for f in frames)
        self.ip_bytes = sum(f[1] for f in frames)


def post_sync(port):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/_cenarius/sync", method="POST", data=b"")
    receipt = json.load(urllib.request.urlopen(request, timeout=10))["id"]
    deadline = time.time() + 30
    while time.time() < deadline:
        status = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/_cenarius/sync/{receipt}", timeout=10))
        if status.get("status") in ("SUCCEED", "FAILED"):
            if status["status"] != "SUCCEED":
                raise RuntimeError(f"sync failed: {status}")
            return
        time.sleep(0.05)
    raise RuntimeError("sync did not finish")


def wait_serving(port, daemon):
    for _ in range(200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
            return
        except urllib.error.HTTPError:
            return  # serving, if not healthy yet
        except OSError:
            if daemon.poll() is not None:
                raise RuntimeError("the daemon exited")
            time.sleep(0.05)
    raise RuntimeError("the daemon did not start")


def measure(binary, out, site, port, case, polls, sessions="tickets"):
    """One case: bytes per unchanged poll, with the nginx log's view of the polls."""
    # "long": nginx's default keepalive and polls further apart than libcurl reuses a connection
    # (118 s): the daemon closes each poll's connection at once instead of leaving it to nginx.
    keepalive = {"kept": 75, "resumed": 1, "long": 75}[case]
    gap = {"kept": 0.5, "resumed": keepalive + 1.0, "long": 125.0}[case]
    nginx = HttpsNginx(out, os.path.dirname(site), port, keepalive=keepalive, sessions=sessions, name=f"nginx-wire-{case}")
    cache = os.path.join(out, f"wire-cache-{case}")
    shutil.rmtree(cache, ignore_errors=True)
    empty = os.path.join(out, "empty-preset")
    os.makedirs(empty, exist_ok=True)
    daemon_port = port + 1
    daemon = subprocess.Popen([binary, "serve", "--port", str(daemon_port), "--remote", nginx.url(os.path.basename(site)),
                               "--cacert", nginx.ca, "--cache", cache, "--preset", empty, "--interval", "3600",
                               "--log-level", "warning"])
    try:
        wait_serving(daemon_port, daemon)
        post_sync(daemon_port)  # the first sync: the table and files, a full handshake
        post_sync(daemon_port)  # and one unchanged poll, so that the measured ones are all alike
        time.sleep(gap)
        nginx.reset_log()
        with Capture(out, port, case) as capture:
            for _ in range(polls):
                post_sync(daemon_port)
                time.sleep(gap)
        rows = [r for r in nginx.lines() if r["uri"].endswith(POLLED)]
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=10)
        nginx.stop()
    if len(rows) != polls or any(r["status"] != "304" for r in rows):
        raise RuntimeError(f"{case}: expected {polls} 304s, the origin logged {[(r['uri'], r['status']) for r in rows]}")
    return {"polls": polls, "bytes_per_poll": capture.frame_bytes / polls, "ip_bytes_per_poll": capture.ip_bytes / polls,
            "packets_per_poll": capture.packets / polls, "connections": len({r["connection"] for r in rows}),
            "resumed": sum(r["reused"] == "r" for r in rows), "http_sent": sum(int(r["sent"]) for r in rows) / polls,
            "http_request": sum(int(r["request"]) for r in rows) / polls}


def bytes_per_poll(binary, out, site, port, polls=10, cases=("kept", "resumed"), sessions="tickets"):
    """The cases, and what a device sends and receives a day at the default interval (300 s,
    longer than nginx's default keepalive: each poll a resumed new connection)."""
    result = {case: measure(binary, out, site, port, case, polls if case != "long" else 3, sessions) for case in cases}
    new = result.get("long", result.get("resumed"))
    if new:
        result["per_device_per_day_default_interval"] = new["bytes_per_poll"] * 86400 / 300
    return result


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=os.path.join(os.path.dirname(HERE), ".build/debug/cenariusd"))
    p.add_argument("--polls", type=int, default=10)
    p.add_argument("--port", type=int, default=18790)
    p.add_argument("--cases", default="kept,resumed", help="kept, resumed, long (polls 125 s apart: 7 minutes)")
    p.add_argument("--sessions", default="tickets", help="nginx's TLS sessions: tickets (its default) or cache (stateful)")
    args = p.parse_args()
    out = os.path.join(HERE, "out")
    site = os.path.join(out, "wire-www", "site")
    if not os.path.exists(os.path.join(site, "Routes.json")):
        os.makedirs(site, exist_ok=True)
        for i in range(20):
            with open(os.path.join(site, f"f{i}.js"), "w") as f:
                f.write(f"console.log({i});\n" * 50)
        subprocess.run([args.bin, "routes", site], check=True, stdout=subprocess.DEVNULL)
    print(json.dumps(bytes_per_poll(args.bin, out, site, args.port, args.polls, tuple(args.cases.split(",")), args.sessions), indent=2))


if __name__ == "__main__":
    main()
