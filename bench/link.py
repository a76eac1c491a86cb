#!/usr/bin/env python3
"""An emulated slow link for B8: 100 ms RTT and 20 Mbit/s, shared by every connection.

This kernel has no netem, so the link is built from parts that exist (PLATFORM-NOTES.md):

    ns b8dev (device)  --veth--  ns b8mid (the link)  --veth--  ns b8srv (origin)
      10.213.8.2                   tun delay line                 10.213.9.1

- The rate is the kernel's own: a `tbf` qdisc at 20 Mbit/s on each veth end of b8mid (one per direction),
  so every connection shares one bottleneck, with a queue as a real link has.
- The delay is a delay line: b8mid routes every packet it forwards into a TUN device (policy routing on the
  incoming veth); this process reads each packet and writes it back after half the RTT; packets coming
  back out of the TUN take the main table to the other veth. Packets are held, never reordered or dropped.

Every address lives in network namespaces this script creates and removes: nothing leaves the machine.
`python3 bench/link.py check` builds the link, measures it (ping, a timed download) and removes it.
"""
import fcntl
import os
import select
import struct
import subprocess
import sys
import time
from collections import deque

DEV, MID, SRV = "b8dev", "b8mid", "b8srv"
DEV_ADDR, SRV_ADDR = "10.213.8.2", "10.213.9.1"
TUNSETIFF, IFF_TUN, IFF_NO_PI = 0x400454CA, 0x0001, 0x1000


def ip(*args, ns=None, check=True):
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    return subprocess.run(cmd, check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def delay_line(delay):
    """Runs inside b8mid: reads each packet from the TUN device and writes it back `delay` seconds later."""
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", b"b8tun", IFF_TUN | IFF_NO_PI))
    held = deque()
    print("ready", flush=True)
    while True:
        now = time.monotonic()
        while held and held[0][0] <= now:
            os.write(fd, held.popleft()[1])
        timeout = max(0.0, held[0][0] - now) if held else 1.0
        ready, _, _ = select.select([fd], [], [], timeout)
        if ready:
            # Drain what is there now: one select per packet costs more than the link's rate allows.
            arrived = time.monotonic()
            for _ in range(256):
                try:
                    held.append((arrived + delay, os.read(fd, 65536)))
                except BlockingIOError:
                    break


class Link:
    """The three namespaces, the shaped veths and the delay line; a context manager that always cleans up."""

    def __init__(self, rtt_ms=100, rate_mbit=20):
        self.rtt_ms, self.rate_mbit = rtt_ms, rate_mbit
        self.line = None

    def __enter__(self):
        self.remove()
        try:
            self._build()
        except BaseException:
            self.remove()
            raise
        return self

    def __exit__(self, *exc):
        self.remove()

    def _build(self):
        for ns in (DEV, MID, SRV):
            ip("ip", "netns", "add", ns)
            ip("ip", "link", "set", "lo", "up", ns=ns)
        ip("ip", "link", "add", "b8d0", "netns", DEV, "type", "veth", "peer", "name", "b8m0", "netns", MID)
        ip("ip", "link", "add", "b8s0", "netns", SRV, "type", "veth", "peer", "name", "b8m1", "netns", MID)
        for ns, dev, addr in ((DEV, "b8d0", DEV_ADDR + "/24"), (MID, "b8m0", "10.213.8.1/24"),
                              (MID, "b8m1", "10.213.9.2/24"), (SRV, "b8s0", SRV_ADDR + "/24")):
            ip("ip", "addr", "add", addr, "dev", dev, ns=ns)
            ip("ip", "link", "set", dev, "up", ns=ns)
        ip("ip", "route", "add", "default", "via", "10.213.8.1", ns=DEV)
        ip("ip", "route", "add", "default", "via", "10.213.9.2", ns=SRV)
        for key in ("net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0"):
            ip("sysctl", "-q", "-w", key, ns=MID)
        # The rate: one tbf per direction, on the veth that leads out of the link. The burst covers one
        # 64 KiB GSO segment (tbf would otherwise drop it); at 20 Mbit/s that is 26 ms of line time.
        for dev in ("b8m0", "b8m1"):
            ip("tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", f"{self.rate_mbit}mbit",
               "burst", "64kb", "latency", "2s", ns=MID)
        self._start_delay_line()

    def _start_delay_line(self):
        # A persistent TUN device in b8mid, attached to by a delay-line process running inside b8mid.
        ip("ip", "tuntap", "add", "dev", "b8tun", "mode", "tun", ns=MID)
        ip("ip", "link", "set", "b8tun", "up", ns=MID)
        ip("sysctl", "-q", "-w", "net.ipv4.conf.b8tun.rp_filter=0", ns=MID)
        # What arrives on either veth goes into the delay line; what comes out of it takes the main table.
        ip("ip", "route", "add", "default", "dev", "b8tun", "table", "100", ns=MID)
        for dev in ("b8m0", "b8m1"):
            ip("ip", "rule", "add", "iif", dev, "lookup", "100", "priority", "100", ns=MID)
        self.line = subprocess.Popen(["ip", "netns", "exec", MID, sys.executable, os.path.abspath(__file__),
                                      "delay-line", str(self.rtt_ms / 2000.0)], stdout=subprocess.PIPE, text=True)
        if self.line.stdout.readline().strip() != "ready":
            raise RuntimeError("the delay line did not start")

    def remove(self):
        if self.line:
            self.line.terminate()
            self.line.wait()
            self.line = None
        for ns in (DEV, MID, SRV):
            ip("ip", "netns", "del", ns, check=False)

    @staticmethod
    def on_device(cmd):
        return ["ip", "netns", "exec", DEV] + list(cmd)

    @staticmethod
    def on_origin(cmd):
        return ["ip", "netns", "exec", SRV] + list(cmd)

    @staticmethod
    def device_bytes():
        """Bytes through the device's interface, both directions (IP, TCP and HTTP headers included)."""
        out = ip("cat", "/sys/class/net/b8d0/statistics/rx_bytes", "/sys/class/net/b8d0/statistics/tx_bytes", ns=DEV)
        rx, tx = (int(x) for x in out.stdout.split())
        return rx + tx


def check():
    """Builds the link and measures what it gives: RTT by ping, rate by a timed download."""
    import http.server
    import tempfile
    root = tempfile.mkdtemp(prefix="b8-link-")
    with open(os.path.join(root, "blob"), "wb") as f:
        f.write(os.urandom(5 * 1024 * 1024))
    with Link() as link:
        ping = ip("ping", "-c", "5", "-i", "0.2", SRV_ADDR, ns=DEV, check=False).stdout.strip().splitlines()[-1]
        server = subprocess.Popen(Link.on_origin([sys.executable, "-m", "http.server", "--bind", SRV_ADDR, "8080",
                                                  "--directory", root]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(0.5)
            start = time.monotonic()
            subprocess.run(Link.on_device(["curl", "-sS", "-o", "/dev/null", f"http://{SRV_ADDR}:8080/blob"]), check=True)
            seconds = time.monotonic() - start
        finally:
            server.terminate()
            server.wait()
        print(f"ping: {ping}")
        print(f"5 MiB in {seconds:.2f} s: {5 * 8 * 1.048576 / seconds:.1f} Mbit/s")


if __name__ == "__main__":
    if sys.argv[1:] == ["check"]:
        check()
    elif sys.argv[1:2] == ["delay-line"]:
        delay_line(float(sys.argv[2]))
    elif sys.argv[1:] == ["remove"]:
        Link().remove()
    else:
        sys.exit("usage: bench/link.py check|remove")
