"""Event-stream clients for B5: N connections to GET /_cenarius/events held open (as N app pages
would) while wrk measures file serving, and the daemon's CPU while the streams sit idle."""
import json
import os
import select
import socket
import threading
import time
import urllib.request


class EventClients:
    """Opens `count` SSE streams to the daemon on `port` and drains them on one thread."""

    def __init__(self, port, count):
        self.port, self.count = port, count
        self.socks, self.received, self._stop = [], 0, threading.Event()
        self._thread = threading.Thread(target=self._drain, daemon=True)

    def __enter__(self):
        for _ in range(self.count):
            s = socket.create_connection(("127.0.0.1", self.port))
            s.sendall(b"GET /_cenarius/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
            s.setblocking(False)
            self.socks.append(s)
        self._thread.start()
        return self

    def _drain(self):
        while not self._stop.is_set():
            ready, _, _ = select.select(self.socks, [], [], 0.2)
            for s in ready:
                try:
                    data = s.recv(65536)
                    self.received += len(data)
                except BlockingIOError:
                    pass

    def open_streams(self):
        """The daemon's own count of connected event streams."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_cenarius/status", timeout=5) as reply:
            return json.load(reply).get("eventStreams", -1)

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=2)
        for s in self.socks:
            s.close()


def cpu_seconds(pid):
    """utime + stime of a process, from /proc."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def idle_cpu(pid, seconds):
    """CPU seconds the process used over `seconds` of wall time with nothing asked of it."""
    before = cpu_seconds(pid)
    time.sleep(seconds)
    return cpu_seconds(pid) - before
