"""B11 LAN: 8 devices behind one 20 Mbit/s uplink installing a real site at once, then a release.

The network (all in namespaces this scenario makes and removes; nothing leaves the machine):

    origin ns (nginx)  --  link ns (tbf 20 Mbit/s each way + 50 ms each way delay line)  --  LAN ns (a bridge)
                                                                                             |-- b11d1 .. b11d8 (devices)

bench/link.py's three namespaces are the origin, the uplink and the LAN's switch: its device namespace
holds a bridge with the uplink's veth and one veth per device namespace (10.213.8.11-18). Each device
runs the real daemon (`serve`, release build) on a cache of its own. Five runs, each on fresh caches,
each a first install of OLD (every daemon started at the same moment) and then the release to NEW
(every daemon told at the same moment, SIGHUP):

- one device alone (the reference: its time and the origin's bytes for it);
- 8 devices without peers (the uplink's bytes 8×);
- 8 devices with peers: every daemon `--peer-listen`s on its address and is given the same eight `--peer`s,
  itself among them (its share of each release: docs/peers.md);
- 8 devices behind nginx `proxy_cache` (`proxy_cache_lock on`) in the LAN's namespace: the box a site
  with infrastructure would install, the baseline peers must beat without one;
- 7 devices with peers and a hostile eighth that answers every object with wrong bytes of the right length.

The origin's bytes are its access log's `$body_bytes_sent` for the run; a device's time is from the
moment its daemon was started (or signalled) to the moment its cache's `current` names the new
generation. After each run every device's cache is verified (`verify`): a wrong byte kept fails it.
"""
import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from b8 import PAIRS, SMOKE_PAIRS, PORT, Origin, fetch_site, nginx_conf, publish, run
from devicefs import own_filesystems, image_path
from link import DEV, Link, SRV_ADDR, ip

N = 8
LAN = "10.213.8."
PEER_PORT = 8701
PROXY_PORT = 8081
FAST_RATE = 12 << 20


def device_addr(i):
    return f"{LAN}{10 + i}"


def weight(obj, peer):
    """PeerChoice.weight (Sources/ResourceCache/Peers/PeerHealth.swift): FNV-1a of the two, then SplitMix64's finish."""
    m = (1 << 64) - 1
    h = 0xcbf29ce484222325
    for b in obj.encode():
        h = ((h ^ b) * 0x100000001b3) & m
    h = ((h ^ 0x2f) * 0x100000001b3) & m
    for b in peer.encode():
        h = ((h ^ b) * 0x100000001b3) & m
    h = ((h ^ (h >> 30)) * 0xbf58476d1ce4e5b9) & m
    h = ((h ^ (h >> 27)) * 0x94d049bb133111eb) & m
    return h ^ (h >> 31)


SLACK = 1.1


def shares(entries, peers):
    """PeerShares (Sources/ResourceCache/Peers/PeerShares.swift): each object's owner, by rendezvous bounded
    by bytes: largest first, to the first of its ranking whose share stays within SLACK times an even one."""
    sizes = {}
    for h, size in entries:
        sizes.setdefault(h, max(size or 1, 1))
    bound = SLACK * sum(sizes.values()) / len(peers)
    load = {p: 0 for p in peers}
    owners = {}
    for h, b in sorted(sizes.items(), key=lambda item: (-item[1], item[0])):
        ranked = sorted(peers, key=lambda p: (weight(h, p), p), reverse=True)
        o = next((p for p in ranked if load[p] + b <= bound), None) or min(ranked, key=lambda p: load[p])
        load[o] += b
        owners[h] = o
    return owners


def form_bytes(pub):
    """ReleaseIndex.formBytes: each file's smallest patch, else its compressed form, as the index of the
    table published in `pub` gives them (what PeerShares weighs objects by)."""
    table_bytes = open(os.path.join(pub, "Routes.json"), "rb").read()
    try:
        index = json.load(open(os.path.join(pub, "_cenarius", "index", hashlib.sha256(table_bytes).hexdigest() + ".json")))
    except (OSError, ValueError):
        return {}
    seen, order = set(), []
    for e in sorted(json.loads(table_bytes), key=lambda e: e["uri"].encode()):
        if e["hash"] not in seen:
            seen.add(e["hash"])
            order.append(e["hash"])
    sizes = {}
    if len(index.get("formSizes", [])) == len(order):
        sizes = {h: n for h, n in zip(order, index["formSizes"]) if n > 0}
    patches = index.get("patches", [])
    if len(index.get("patchSizes", [])) == len(patches):
        for (target, _), n in zip(patches, index.get("patchSizes", [])):
            if n > 0 and n < sizes.get(target, float("inf")):
                sizes[target] = n
    return sizes


class Lan:
    """A bridge in the link's device namespace with `n` device namespaces on it."""

    def __init__(self, n):
        self.n = n

    def __enter__(self):
        self.remove()
        ip("ip", "link", "add", "b11br", "type", "bridge", ns=DEV)
        ip("ip", "addr", "del", LAN + "2/24", "dev", "b8d0", ns=DEV)
        ip("ip", "link", "set", "b8d0", "master", "b11br", ns=DEV)
        ip("ip", "addr", "add", LAN + "2/24", "dev", "b11br", ns=DEV)
        ip("ip", "link", "set", "b11br", "up", ns=DEV)
        ip("ip", "route", "replace", "default", "via", LAN + "1", ns=DEV)
        for i in range(1, self.n + 1):
            ns = f"b11d{i}"
            ip("ip", "netns", "add", ns)
            ip("ip", "link", "set", "lo", "up", ns=ns)
            ip("ip", "link", "add", f"b11p{i}", "netns", DEV, "type", "veth", "peer", "name", "eth0", "netns", ns)
            ip("ip", "link", "set", f"b11p{i}", "master", "b11br", ns=DEV)
            ip("ip", "link", "set", f"b11p{i}", "up", ns=DEV)
            ip("ip", "addr", "add", device_addr(i) + "/24", "dev", "eth0", ns=ns)
            ip("ip", "link", "set", "eth0", "up", ns=ns)
            ip("ip", "route", "add", "default", "via", LAN + "1", ns=ns)
        return self

    def __exit__(self, *exc):
        self.remove()

    def remove(self):
        for i in range(1, N + 1):
            ip("ip", "netns", "del", f"b11d{i}", check=False)


class Proxy:
    """nginx proxy_cache in the LAN's namespace: `_cenarius/` (immutable names) cached, the rest passed on."""

    def __init__(self, out):
        self.dir = os.path.join(out, "proxy")
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.conf = os.path.join(self.dir, "nginx.conf")
        open(self.conf, "w").write(nginx_conf(self.dir, f"""
  access_log off;
  proxy_cache_path {self.dir}/cache levels=1:2 keys_zone=b11:10m max_size=2g inactive=1h use_temp_path=off;
  server {{
    listen {LAN}2:{PROXY_PORT};
    location /_cenarius/ {{
      proxy_pass http://{SRV_ADDR}:{PORT};
      proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_cache b11; proxy_cache_valid 200 1h; proxy_cache_lock on; proxy_cache_lock_timeout 60s;
    }}
    location / {{ proxy_pass http://{SRV_ADDR}:{PORT}; proxy_http_version 1.1; proxy_set_header Connection ""; }}
  }}
"""))

    def __enter__(self):
        run(["ip", "netns", "exec", DEV, "nginx", "-c", self.conf, "-g", "user root;"])
        time.sleep(0.3)
        return self

    def __exit__(self, *exc):
        subprocess.run(["ip", "netns", "exec", DEV, "nginx", "-c", self.conf, "-s", "stop"], stderr=subprocess.DEVNULL)


def hostile_peer(ns, addr, tables):
    """A peer that answers every object with bytes of the right length that are not the object: started
    inside `ns` as this script with `hostile ADDR PORT TABLE...`; the lengths are the tables' sizes."""
    return subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, os.path.abspath(__file__), "hostile", addr, str(PEER_PORT)] + tables,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Hostile(BaseHTTPRequestHandler):
    sizes = {}

    def do_GET(self):
        # Wrong bytes of the object's own length: only its hash tells them from the real ones.
        body = os.urandom(self.sizes.get(self.path.rsplit("/", 1)[-1], 64 << 10))
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def origin_bytes(log, start):
    """`$body_bytes_sent` of the origin's access log lines past `start` (combined format)."""
    total = 0
    with open(log) as f:
        f.seek(start)
        for line in f:
            parts = line.split('"')
            if len(parts) > 2:
                fields = parts[2].split()
                if len(fields) >= 2 and fields[1].isdigit():
                    total += int(fields[1])
    return total


def current(cache):
    try:
        return os.readlink(os.path.join(cache, "current"))
    except OSError:
        return None


class Devices:
    """`count` daemons in device namespaces 1..count, started at once; `wait` for a new generation in each."""

    def __init__(self, bin_path, work, count, remote, peers=None, hostile=None, tables=(), extra=()):
        """`work`: the scenario's folder on each device's file system (bench/devicefs.py), by device, and
        where the daemons' logs are kept afterwards."""
        (work, self.logs), self.bin, self.count, self.peers = work, bin_path, count, peers
        self.procs, self.hostile = [], None
        self.dirs = [os.path.join(work[i - 1], f"d{i}") for i in range(1, count + 1)]
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)
        self.caches = [os.path.join(d, "cache") for d in self.dirs]
        self.commands = []
        for i in range(1, count + 1):
            os.makedirs(os.path.join(self.dirs[i - 1], "preset"))
            cmd = ["ip", "netns", "exec", f"b11d{i}", bin_path, "serve", "--remote", remote, "--cache", self.caches[i - 1],
                   "--preset", os.path.join(self.dirs[i - 1], "preset"), "--bind", "127.0.0.1", "--port", "0",
                   "--start-jitter", "0", "--interval", "3600", "--timeout", "120"] + list(extra)
            if peers:
                cmd += ["--peer-listen", f"{device_addr(i)}:{PEER_PORT}"]
                for p in range(1, peers + 1):
                    cmd += ["--peer", f"http://{device_addr(p)}:{PEER_PORT}"]
            self.commands.append(cmd)
        if hostile:
            self.hostile = hostile_peer(f"b11d{hostile}", device_addr(hostile), list(tables))

    def start(self):
        self.started = time.monotonic()
        self.wall = time.time()
        for i, cmd in enumerate(self.commands):
            log = open(os.path.join(self.dirs[i], "log"), "w")
            self.procs.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT))
        return self.wait([None] * self.count)

    def release(self):
        before = [current(c) for c in self.caches]
        self.started = time.monotonic()
        self.wall = time.time()
        for p in self.procs:
            p.send_signal(signal.SIGHUP)
        return self.wait(before)

    def wait(self, before, limit=120):
        done = [None] * self.count
        while None in done and time.monotonic() - self.started < limit:
            for i, cache in enumerate(self.caches):
                if done[i] is None and current(cache) not in (None, before[i]):
                    done[i] = time.monotonic() - self.started
            time.sleep(0.02)
        return done, [self.synced(c) for c in self.caches]

    def cpu_seconds(self):
        """User and system CPU seconds the daemons have used so far (/proc/PID/stat; `ip netns exec` execs the daemon)."""
        total = 0.0
        for p in self.procs:
            try:
                fields = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            except (OSError, IndexError, ValueError):
                pass
        return total

    def timeline(self, forms=None, entries=()):
        """Per device, seconds from the phase's start: its own share's last kept form (peer-forms/, of the
        files it owns by rendezvous over the run's peers: when its downloads from the origin ended; it also
        keeps the forms it took from its peers), its first and last new object (a file's last write), and
        when it had the file of the largest form in the folder `forms` (the object's write: that form's
        fan-out over the LAN)."""
        peers = [f"http://{device_addr(p)}:{PEER_PORT}" for p in range(1, (self.peers or 0) + 1)]
        largest = None
        if forms and os.path.isdir(forms):
            names = os.listdir(forms)
            largest = max(names, key=lambda n: os.path.getsize(os.path.join(forms, n))).split("-")[0].split(".")[0] if names else None
        def named(folder, keep=lambda name: True):
            found = {}
            for root, _, names in os.walk(folder):
                for n in names:
                    if not keep(n):
                        continue
                    try:
                        info = os.stat(os.path.join(root, n))
                    except OSError:
                        continue
                    if info.st_mtime - self.wall >= 0:
                        found[n.split("-")[0].split(".")[0]] = (info.st_mtime - self.wall, info.st_size)
            return found
        kept = [named(os.path.join(cache, "peer-forms")) for cache in self.caches]
        owners = shares(entries, peers) if peers else {}
        rows = []
        for i, cache in enumerate(self.caches):
            me = f"http://{device_addr(i + 1)}:{PEER_PORT}"
            mine = lambda name: not peers or owners.get(name.split("-")[0].split(".")[0]) == me
            found = named(os.path.join(cache, "objects"))
            objects = [t for t, _ in found.values()]
            forms = [t for t, _ in named(os.path.join(cache, "peer-forms"), mine).values()]
            big = [found[largest][0]] if largest in found else []
            # The last objects to arrive: when, how large, whose share, and when that owner had kept its form.
            tail = []
            for name, (t, size) in sorted(found.items(), key=lambda item: -item[1][0])[:5]:
                o = owners.get(name)
                at = peers.index(o) if o in peers else None
                tail.append({"t": round(t, 2), "bytes": size, "owner": at + 1 if at is not None else None,
                             "owner_kept": round(kept[at][name][0], 2) if at is not None and at < len(kept) and name in kept[at] else None})
            objects.sort()
            rows.append({"objects": len(objects), "first_object": round(objects[0], 2) if objects else None,
                         "p90_object": round(objects[int(len(objects) * 0.9)], 2) if objects else None,
                         "last_object": round(objects[-1], 2) if objects else None,
                         "own_forms": len(forms), "last_own_form": round(max(forms), 2) if forms else None,
                         "largest": round(big[0], 2) if big else None, "tail": tail})
        return rows

    def synced(self, cache):
        """`status --json`'s `sync` (asked in the device's namespace, where its daemon answers): bytes from
        peers and from the origin since the daemon started."""
        ns = "b11d" + os.path.basename(os.path.dirname(cache))[1:]
        done = subprocess.run(["ip", "netns", "exec", ns, self.bin, "status", "--json", "--cache", cache, "--preset", os.path.join(os.path.dirname(cache), "preset")],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            return json.loads(done.stdout).get("sync") or {}
        except ValueError:
            return {}

    def verified(self):
        return all(subprocess.run([self.bin, "verify", "--cache", c, "--preset", os.path.join(os.path.dirname(c), "preset")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0 for c in self.caches)

    def stop(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        if self.hostile:
            self.hostile.terminate()
            self.hostile.wait()
        # The daemons' logs outlive the devices' file systems (bench/devicefs.py), for a look afterwards.
        shutil.rmtree(self.logs, ignore_errors=True)
        os.makedirs(self.logs)
        for i in range(len(self.procs)):
            with contextlib.suppress(OSError):
                shutil.copy(os.path.join(self.dirs[i], "log"), os.path.join(self.logs, f"d{i + 1}.log"))
        # Each scenario's caches (two releases a device: some 50 MB) are done with: the next ones need the room.
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)


def peer_bytes(reports, key):
    return sum(int(r.get(key) or 0) for r in reports)


def scenario(bin_path, disks, origin, old_pub, new_pub, name, count, remote, peers=None, hostile=None, extra=()):
    """`disks`: the devices' file systems (bench/devicefs.py) and where their logs are kept."""
    print(f"  B11 {name}", flush=True)
    roots, logs = disks
    slug = name.replace(" ", "-").replace("/", "-")
    devices = Devices(bin_path, ([os.path.join(root, slug) for root in roots], os.path.join(logs, slug)), count, remote, peers, hostile,
                      [os.path.join(p, "Routes.json") for p in (old_pub, new_pub)], extra)
    row = {"name": name, "devices": count}
    try:
        time.sleep(0.5)
        tables = [{e["hash"]: e.get("size") for e in json.load(open(os.path.join(p, "Routes.json")))} for p in (old_pub, new_pub)]
        for phase, pub in (("first", old_pub), ("release", new_pub)):
            # What each device fetches: the whole first table, then what the release adds to it.
            wanted = tables[0] if phase == "first" else {h: size for h, size in tables[1].items() if h not in tables[0]}
            weighed = form_bytes(pub)
            wanted = {h: weighed.get(h, size) for h, size in wanted.items()}
            origin.publish(pub)
            start = os.path.getsize(origin.log) if os.path.exists(origin.log) else 0
            done, reports = devices.start() if phase == "first" else devices.release()
            time.sleep(0.3)
            cpu = devices.cpu_seconds()
            # The daemons' counts run since they started: the release's are the difference.
            before = row.get("first", {}) if phase == "release" else {}
            row[phase] = {"origin_bytes": origin_bytes(origin.log, start), "seconds": done,
                          "last": max((d for d in done if d is not None), default=None), "finished": sum(d is not None for d in done),
                          "from_peers": peer_bytes(reports, "bytesFromPeers") - before.get("peers_total", 0),
                          "peers_total": peer_bytes(reports, "bytesFromPeers"), "load": os.getloadavg(),
                          "cpu_seconds": round(cpu - (row.get("first", {}).get("cpu_total", 0) if phase == "release" else 0), 2),
                          "cpu_total": cpu, "timeline": devices.timeline(os.path.join(pub, "_cenarius", "z" if phase == "first" else "p"), wanted.items())}
        row["verified"] = devices.verified()
    finally:
        devices.stop()
    return row


def b11(bin_path, out, smoke=False, only=()):
    out = os.path.join(out, "b11")
    os.makedirs(out, exist_ok=True)
    # Full: streamlit, whose release is 2 MB (B8): the release bar means something. Smoke: notebook.
    package, old_v, new_v, folder = SMOKE_PAIRS[0] if smoke else PAIRS[2]
    b8_out = os.path.join(os.path.dirname(out), "b8")
    old_site = fetch_site(b8_out, package, old_v, folder)
    new_site = fetch_site(b8_out, package, new_v, folder)
    old_pub = publish(bin_path, old_site, os.path.join(out, "pub", "old"), ["--compress"], age=3600)
    new_pub = publish(bin_path, new_site, os.path.join(out, "pub", "new"), ["--delta-from", old_pub])
    n = 3 if smoke else N
    results = {"pair": f"{package} {old_v} → {new_v}", "devices": n, "uplink": "20 Mbit/s each way, 50 ms each way (100 ms RTT)", "runs": []}
    direct = f"http://{SRV_ADDR}:{PORT}"
    results["devices_filesystem"] = "an ext4 each in memory, loop-mounted"
    with own_filesystems(os.path.join(out, "devices"), n, image_path(out, "cenarius-b11-device")) as (roots, mounted), \
            Link(rtt_ms=100, rate_mbit=20) as _, Lan(n) as _, Origin(out) as origin, Proxy(out) as _:
        if not mounted:
            results["devices_filesystem"] = "the bench's"
        origin.log = os.path.join(origin.dir, "access.log")
        # The peers' default rate cap (4 MiB/s a device) and one a LAN of 100 Mbit/s or more leaves room for.
        fast = ["--peer-max-rate", str(FAST_RATE)]
        runs = [("one device alone", 1, direct, None, None, ()), (f"{n} without peers", n, direct, None, None, ()),
                (f"{n} with peers", n, direct, n, None, ()), (f"{n} with peers, --peer-max-rate 12 MiB/s", n, direct, n, None, fast),
                (f"{n} behind nginx proxy_cache", n, f"http://{LAN}2:{PROXY_PORT}", None, None, ()),
                (f"{n - 1} with peers and a hostile one", n - 1, direct, n, n, ())]
        for name, count, remote, peers, hostile, extra in runs:
            if only and name != runs[0][0] and not any(o in name for o in only):
                continue
            results["runs"].append(scenario(bin_path, (roots, os.path.join(out, "logs")), origin, old_pub, new_pub, name, count, remote, peers, hostile, extra))
    return judge(results)


def judge(results):
    """B11's bars for each run with peers, against one device alone in the same run."""
    runs = results["runs"]
    alone = runs[0]
    bars = {}
    for r in [r for r in runs if "with peers" in r["name"]]:
        hostile = "hostile" in r["name"]
        for phase in ("first", "release"):
            ref_bytes, ref_s = alone[phase]["origin_bytes"], alone[phase]["last"] or float("inf")
            last = r[phase]["last"] if r[phase]["finished"] == r["devices"] else float("inf")
            if not hostile:
                bars[f"{r['name']}: {phase} origin bytes"] = (r[phase]["origin_bytes"], 1.25 * ref_bytes, r[phase]["origin_bytes"] <= 1.25 * ref_bytes)
            factor = 2 if hostile else 1.5
            bars[f"{r['name']}: {phase} last done s"] = (last, factor * ref_s, last <= factor * ref_s)
        if hostile:
            bars[f"{r['name']}: every cache verified"] = (r["verified"], True, r["verified"])
    results["bars"] = bars
    return results


def markdown(result):
    mark = lambda ok: "✅" if ok else "❌"
    fmt = lambda s: "—" if s is None else f"{s:.2f} s"
    lines = [f"## B11 LAN: {result['devices']} devices behind one uplink ({result['uplink']}), {result['pair']}", "",
             "| run | first install: origin sent | last device done | release: origin sent | last device done | from peers (first + release) | daemons' CPU s (first / release) | load | verified |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in result["runs"]:
        f, rel = r["first"], r["release"]
        note = lambda p: "" if p["finished"] == r["devices"] else f" ({p['finished']}/{r['devices']} done)"
        lines.append(f"| {r['name']} | {f['origin_bytes']:,} B | {fmt(f['last'])}{note(f)} | {rel['origin_bytes']:,} B | {fmt(rel['last'])}{note(rel)} | "
                     f"{f['from_peers']:,} B + {rel['from_peers']:,} B | {f.get('cpu_seconds', 0):.1f} / {rel.get('cpu_seconds', 0):.1f} | "
                     f"{f.get('load', [0])[0]:.1f} | {mark(r['verified'])} |")
    b = result["bars"]
    lines += ["", "Bars (against one device alone, same run: origin bytes ≤ 1.25×, last device done ≤ 1.5×, with a hostile peer ≤ 2× "
              "and every cache verified):", ""]
    for k, v in b.items():
        lines.append(f"- {k}: {mark(v[2])}" if isinstance(v[0], bool) else f"- {k}: {v[0]:,.2f} ≤ {v[1]:,.2f} {mark(v[2])}")
    lines += [
        "", "Origin bytes are nginx's `$body_bytes_sent` for the run (heads, tables and objects); a device's time runs from its "
        "daemon's start (first install) or its SIGHUP (release) until its cache's `current` names the new generation. "
        f"The devices' caches: {result.get('devices_filesystem', 'the bench folder')} (bench/devicefs.py says why)."]
    return lines


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "hostile":
        for table in sys.argv[4:]:
            Hostile.sizes.update({e["hash"]: int(e.get("size") or 0) for e in json.load(open(table)) if "hash" in e})
        ThreadingHTTPServer((sys.argv[2], int(sys.argv[3])), Hostile).serve_forever()
    else:
        import argparse
        p = argparse.ArgumentParser()
        p.add_argument("--bin", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".build", "release", "cenariusd"))
        p.add_argument("--smoke", action="store_true")
        p.add_argument("--only", action="append", default=[], help="runs whose name holds this (one device alone always runs)")
        args = p.parse_args()
        result = b11(os.path.abspath(args.bin), os.path.join(os.path.dirname(os.path.abspath(__file__)), "out"), args.smoke, args.only)
        json.dump(result, open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "out", "b11.json"), "w"), indent=2)
        print("\n".join(markdown(result)))
