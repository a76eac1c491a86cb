"""B7 fleet: N `cenariusd serve` daemons (each its own cache folder and loopback port, a preset
table in force) polling one loopback nginx over https. Table requests per 1-second bucket, from
nginx's access log (msec timestamps) and, while nginx is down, from tcpdump's count of the
connection attempts it refuses:

  start     the daemons launched together; their first syncs spread by the start jitter
  steady    the polls that follow
  refused   60 s with nginx stopped: every poll meets a refused connection
  recovery  nginx back
  503       60 s of nginx answering 503 to everything
  recovery  nginx back

Bars (CONTRACT B7): no bucket above 3x the mean at start and in steady state; each outage sends at
most 3x the table requests of a normal 60 s; after it no bucket above 3x the steady mean. Plus the
bytes on the wire per unchanged https poll (wire.py) and the fleet's memory.
"""
import os
import shutil
import signal
import statistics
import subprocess
import time

from tlsorigin import HttpsNginx
import wire

# What a device polls: the head where the remote publishes one (a first install asks for it first), else the table.
POLLED = ("Routes.head", "Routes.json")


class Fleet:
    def __init__(self, binary, out, url, ca, preset, count, interval):
        self.root = os.path.join(out, "fleet")
        shutil.rmtree(self.root, ignore_errors=True)
        os.makedirs(self.root)
        self.procs = []
        self.launched = time.time()
        for i in range(count):
            log = open(os.path.join(self.root, f"d{i}.log"), "w")
            self.procs.append(subprocess.Popen(
                [binary, "serve", "--port", "0", "--remote", url, "--cacert", ca, "--cache", os.path.join(self.root, f"c{i}"),
                 "--preset", preset, "--interval", str(interval), "--log-level", "warning"],
                stdout=subprocess.DEVNULL, stderr=log))
            log.close()
        self.ready = time.time()

    def rss_mib(self):
        """Each running daemon's resident memory, MiB."""
        sizes = []
        for proc in self.procs:
            try:
                for line in open(f"/proc/{proc.pid}/status"):
                    if line.startswith("VmRSS:"):
                        sizes.append(int(line.split()[1]) / 1024)
            except OSError:
                pass
        return sizes

    def alive(self):
        return sum(proc.poll() is None for proc in self.procs)

    def stop(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class SynCounter:
    """The connection attempts to a port (SYNs), with their times: what the daemons send while
    nginx is down and the kernel refuses them."""

    def __init__(self, out, port):
        self.path = os.path.join(out, "fleet-syns.txt")
        self.file = open(self.path, "w")
        self.proc = subprocess.Popen(["tcpdump", "-i", "lo", "-nn", "-tt", "-l",
                                      f"tcp dst port {port} and tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn"],
                                     stdout=self.file, stderr=subprocess.PIPE)
        self.proc.stderr.readline()
        time.sleep(0.3)

    def times(self):
        self.file.flush()
        out = []
        for line in open(self.path):
            try:
                out.append(float(line.split()[0]))
            except (ValueError, IndexError):
                pass
        return out

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=10)
        self.file.close()


def buckets(times, start, end):
    """Requests per whole second in [start, end)."""
    counts = [0] * max(1, int(end - start))
    for t in times:
        if start <= t < start + len(counts):
            counts[int(t - start)] += 1
    return counts


def window(counts, reference=None):
    mean = statistics.mean(counts)
    ref = reference if reference is not None else mean
    peak = max(counts)
    return {"seconds": len(counts), "requests": sum(counts), "mean_per_s": round(mean, 3), "max_bucket": peak,
            "max_over_mean": round(peak / ref, 2) if ref else None, "met": peak <= 3 * ref}


def fleet_site(binary, www):
    """A small published site: the origin's folder and every daemon's preset (a table in force)."""
    site = os.path.join(www, "fleet")
    if not os.path.exists(os.path.join(site, "Routes.json")):
        os.makedirs(site, exist_ok=True)
        for i in range(20):
            with open(os.path.join(site, f"f{i}.js"), "w") as f:
                f.write(f"console.log({i});\n" * 100)
        subprocess.run([binary, "routes", site], check=True, stdout=subprocess.DEVNULL)
    return site


def b7(binary, out, www, port, count, interval, outage, settle, wire_polls):
    site = fleet_site(binary, www)
    nginx = HttpsNginx(out, www, port, name="nginx-b7", workers=2)
    url = nginx.url(os.path.basename(site))
    table = lambda rows: [r["msec"] for r in rows if r["uri"].endswith(POLLED)]
    syns = SynCounter(out, port)
    fleet = None
    try:
        nginx.reset_log()
        fleet = Fleet(binary, out, url, nginx.ca, site, count, interval)
        t0 = fleet.launched
        # The start: the launch and one start-jitter window (min(interval, 60) by default).
        start_end = fleet.ready + min(interval, 60)
        steady_end = start_end + 3 * interval
        time.sleep(max(0, steady_end - time.time()))
        rss = fleet.rss_mib()
        rows = nginx.lines()
        start = window(buckets(table(rows), t0, start_end))
        steady_counts = buckets(table(rows), start_end, steady_end)
        steady = window(steady_counts)
        normal_60 = steady["mean_per_s"] * 60

        # Refused connections: nginx stopped.
        nginx.stop()
        refused_start = time.time()
        time.sleep(outage)
        refused_end = time.time()
        nginx.start()
        refused = buckets(syns.times(), refused_start, refused_end)
        time.sleep(settle)
        recovery1_end = time.time()

        # 503s: nginx up, answering every request with 503.
        nginx.set_outage(True)
        unavailable_start = time.time()
        time.sleep(outage)
        unavailable_end = time.time()
        nginx.set_outage(False)
        time.sleep(settle)
        recovery2_end = time.time()
        rows = nginx.lines()
        unavailable = buckets([r["msec"] for r in rows if r["uri"].endswith(POLLED) and r["status"] == "503"],
                              unavailable_start, unavailable_end)
        recovery1 = buckets(table(rows), refused_end, recovery1_end)
        recovery2 = buckets(table(rows), unavailable_end, recovery2_end)
        alive = fleet.alive()
    finally:
        if fleet:
            fleet.stop()
        syns.stop()
        nginx.stop()

    def outage_row(counts):
        scaled = sum(counts) * 60 / len(counts)
        return {"seconds": len(counts), "requests": sum(counts), "per_60s": round(scaled, 1),
                "over_normal_60s": round(scaled / normal_60, 2) if normal_60 else None,
                "max_bucket": max(counts), "met": scaled <= 3 * normal_60}

    result = {"daemons": count, "interval": interval, "alive_at_end": alive,
              "rss_mib": {"total": round(sum(rss), 1), "max": round(max(rss), 1) if rss else 0,
                          "median": round(statistics.median(rss), 1) if rss else 0},
              "start": start, "steady": steady, "normal_60s": round(normal_60, 1),
              "outage_refused": outage_row(refused), "recovery_after_refused": window(recovery1, steady["mean_per_s"]),
              "outage_503": outage_row(unavailable), "recovery_after_503": window(recovery2, steady["mean_per_s"])}
    if wire_polls:
        result["bytes_per_poll"] = wire.bytes_per_poll(binary, out, site, port + 2, wire_polls)
    return result


def markdown(result):
    r = result
    lines = [f"## B7 fleet: {r['daemons']} daemons, --interval {r['interval']}, one loopback nginx over https", "",
             *([f"(A smoke run: with {r['daemons']} daemons a 1-s bucket holds a handful of requests, and the bars say little.)", ""]
               if r["daemons"] < 100 else []),
             f"Memory: {r['rss_mib']['total']:.0f} MiB for the fleet, {r['rss_mib']['median']:.1f} MiB median, "
             f"{r['rss_mib']['max']:.1f} MiB max per daemon; {r['alive_at_end']} of {r['daemons']} still running at the end.", "",
             "| phase | seconds | table requests | mean/s | max in a 1-s bucket | max/mean | bar |", "|---|---|---|---|---|---|---|"]
    for key, label in [("start", "start (start jitter)"), ("steady", "steady state"),
                       ("recovery_after_refused", "after refused connections"), ("recovery_after_503", "after 503s")]:
        w = r[key]
        ref = "" if key in ("start", "steady") else " (of the steady mean)"
        lines.append(f"| {label} | {w['seconds']} | {w['requests']} | {w['mean_per_s']:.2f} | {w['max_bucket']} | "
                     f"{w['max_over_mean']}{ref} | {'met' if w['met'] else 'NOT met'} |")
    lines += ["", f"A normal 60 s: {r['normal_60s']:.0f} table requests.", "",
              "| outage (60 s) | table requests | per 60 s | over a normal 60 s | bar (≤ 3×) |", "|---|---|---|---|---|"]
    for key, label in [("outage_refused", "refused connections (counted as SYNs)"), ("outage_503", "503 answers")]:
        o = r[key]
        lines.append(f"| {label} | {o['requests']} | {o['per_60s']:.0f} | {o['over_normal_60s']} | {'met' if o['met'] else 'NOT met'} |")
    wire_result = r.get("bytes_per_poll")
    if wire_result:
        lines += ["", "Bytes on the wire per unchanged https poll (tcpdump on lo, both directions, Ethernet/IP/TCP/TLS headers included):", "",
                  "| connection | bytes per poll | IP bytes | packets | TLS session resumed | bar (≤ 1536) | B8 v2 bar (kept: ≤ 600 IP bytes) |",
                  "|---|---|---|---|---|---|---|"]
        for case, label in [("kept", "kept from the last poll"), ("resumed", "new, TLS session resumed (origin closed the last)"),
                            ("long", "new, resumed, closed at once (polls > 118 s apart)")]:
            if case in wire_result:
                w = wire_result[case]
                lines.append(f"| {label} | {w['bytes_per_poll']:.0f} | {w['ip_bytes_per_poll']:.0f} | {w['packets_per_poll']:.1f} | "
                             f"{w['resumed']} of {w['polls']} | {'met' if w['bytes_per_poll'] <= 1536 else 'NOT met'} | "
                             + (f"{'met' if w['ip_bytes_per_poll'] <= 600 else 'NOT met'} |" if case == "kept" else "— |"))
        lines.append(f"\nThe fleet above polls every {r['interval']} s, within nginx's 75 s keepalive: its polls are the first row. "
                     "A new connection cannot come under 1.5 KiB whatever the client does (the TCP handshake and close, ~480 B; a "
                     "ClientHello carrying nginx's session ticket, ~680 B; the new ticket nginx sends on every resumption, ~350 B): "
                     "see docs/fleet-transport.md. B8 v2's bar counts IP bytes (TCP, TLS and HTTP included): loopback has no link "
                     "framing, and a real link's (Ethernet's 38 B a frame with preamble and gap, Wi-Fi's more) is not the device's to choose.")
        if "per_device_per_day_default_interval" in wire_result:
            closed = "long" in wire_result
            lines.append(f"\nPer device per day at the default interval (300 s, each poll a new connection with nginx's 75 s keepalive): "
                         f"{wire_result['per_device_per_day_default_interval'] / 1000:.0f} KB"
                         + ("." if closed else " at most (from the second row; polls that far apart close their connection at once, "
                                               "which `bench/wire.py --cases long` measures in 7 minutes)."))
    return lines
