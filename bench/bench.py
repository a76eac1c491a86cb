#!/usr/bin/env python3
"""bench/run's engine: runs the scenarios B1-B10 and F of the contract side by side with curl, aria2c,
wget2 and nginx, alternating tools round by round, and writes results.md and results.json.

Every process is timed as a whole with /usr/bin/time (wall seconds, peak RSS). Loopback only:
nginx listens on 127.0.0.1, every request loop is bounded in count and time.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

from events import EventClients, idle_cpu
import seedrounds
from seedrounds import summary
import b6 as real_origin
import fleet
import footprint
import b8 as release_bytes
import b9 as publish_bench
import b10 as fleet_logs
import b11 as lan
import b12 as bundles

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=isinstance(cmd, str), check=True, **kw)


def timed(cmd, env=None):
    """Runs cmd as a whole process; returns (wall seconds, peak RSS MiB, stdout).
    Wall time from a monotonic clock around fork/exec/wait; peak RSS from /usr/bin/time, which forks
    the command from its own small process: a child's peak RSS starts from its parent's at the fork
    (Linux keeps the high-water mark across exec), and this Python process is tens of MiB, so the
    rusage of a child of this one reported Python's size for any small command."""
    out_path = os.path.join(OUT, "stdout.txt")
    err_path = os.path.join(OUT, "stderr.txt")
    rss_path = os.path.join(OUT, "rss.txt")
    with open(out_path, "w") as out, open(err_path, "w") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss_path] + list(cmd), stdout=out, stderr=err, env=env)
        _, status, _ = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed ({proc.returncode}): {open(err_path).read()[-600:]}")
    return wall, int(open(rss_path).read().split()[-1]) / 1024, open(out_path).read()


def count_files(path):
    return sum(len([n for n in names if not n.startswith(".")]) for _, _, names in os.walk(path))


class Nginx:
    def __init__(self, root, port, name="nginx"):
        self.dir = os.path.join(OUT, name)
        os.makedirs(self.dir, exist_ok=True)
        self.port = port
        self.log = os.path.join(self.dir, "access.log")
        conf = f"""
worker_processes 2;
pid {self.dir}/nginx.pid;
error_log {self.dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  types {{ text/html html; text/css css; application/javascript js; application/json json; image/png png; }}
  default_type application/octet-stream;
  log_format bytes '$request_uri $status $body_bytes_sent';
  access_log {self.log} bytes;
  sendfile on; tcp_nopush on; tcp_nodelay on;
  keepalive_requests 1000000; keepalive_timeout 65;
  client_body_temp_path {self.dir}/body; proxy_temp_path {self.dir}/proxy; fastcgi_temp_path {self.dir}/fastcgi;
  uwsgi_temp_path {self.dir}/uwsgi; scgi_temp_path {self.dir}/scgi;
  server {{ listen 127.0.0.1:{port}; root {root}; etag on;
    # An OTLP/HTTP collector that takes every export and keeps nothing (B2's traced sync).
    location = /v1/traces {{ return 200; }} }}
}}
"""
        self.conf = os.path.join(self.dir, "nginx.conf")
        open(self.conf, "w").write(conf)
        sh(["nginx", "-c", self.conf, "-g", "user root;" if os.geteuid() == 0 else ""])
        time.sleep(0.3)

    def url(self, path):
        return f"http://127.0.0.1:{self.port}/{path}"

    def reset_log(self):
        open(self.log, "w").close()
        sh(["nginx", "-c", self.conf, "-s", "reopen"], stderr=subprocess.DEVNULL)
        time.sleep(0.2)

    def bytes_served(self, prefix):
        total = 0
        for line in open(self.log):
            parts = line.split()
            # The head, the table and its sidecars (.sig, .release, and what a device looks up under
            # _cenarius/: the table object, the index, a 404 body when there is none) are not files.
            if len(parts) == 3 and parts[0].startswith(prefix) and not os.path.basename(parts[0]).startswith(("Routes.json", "Routes.head")) \
                    and not any(f"/_cenarius/{kind}/" in parts[0] for kind in ("index", "t", "i")):
                total += int(parts[2])
        return total

    def stop(self):
        subprocess.run(["nginx", "-c", self.conf, "-s", "stop"], stderr=subprocess.DEVNULL)


def table_entries(path):
    return json.load(open(os.path.join(path, "Routes.json")))


def b1(nginx, rounds, dest):
    entries = table_entries(SITE)
    base = nginx.url("site")
    curl_cfg = os.path.join(OUT, "curl.cfg")
    with open(curl_cfg, "w") as f:
        for e in entries:
            f.write(f'url = "{base}/{e["uri"]}"\noutput = "{dest}/{e["uri"]}"\n')
    aria = os.path.join(OUT, "aria2.txt")
    aria_md5 = os.path.join(OUT, "aria2-md5.txt")
    with open(aria, "w") as f, open(aria_md5, "w") as g:
        for e in entries:
            f.write(f'{base}/{e["uri"]}\n  dir={dest}\n  out={e["uri"]}\n')
            g.write(f'{base}/{e["uri"]}\n  dir={dest}\n  out={e["uri"]}\n  checksum=md5={e["hash"]}\n')
    wget_list = os.path.join(OUT, "wget2.txt")
    with open(wget_list, "w") as f:
        for e in entries:
            f.write(f'{base}/{e["uri"]}\n')
    tools = {
        "cenariusd seed": [BIN, "seed", "--remote", base, "--preset", dest, "--connections", "16", "--json"],
        "curl --parallel (16)": ["curl", "-s", "--parallel", "--parallel-max", "16", "--create-dirs", "-K", curl_cfg],
        "aria2c -j16": ["aria2c", "-q", "-j16", "--allow-overwrite=true", "--auto-file-renaming=false", "-i", aria],
        "aria2c -j16 + md5": ["aria2c", "-q", "-j16", "--allow-overwrite=true", "--auto-file-renaming=false", "-i", aria_md5],
        "wget2 (16 threads)": ["wget2", "-q", "--max-threads=16", "-x", "-nH", "--cut-dirs=1", "-P", dest, "-i", wget_list],
    }
    total = sum(os.path.getsize(os.path.join(SITE, e["uri"])) for e in entries)
    rows, _ = seedrounds.score(seedrounds.run(tools, rounds, dest, len(entries), timed, count_files), rounds)
    for row in rows.values():
        row["bytes"] = total
    shutil.rmtree(dest, ignore_errors=True)
    return {"files": len(entries), "bytes": total, "rows": rows, "dest": dest}


def b2(nginx, rounds):
    cache = os.path.join(OUT, "cache-tiny")
    empty = os.path.join(OUT, "empty-preset")
    os.makedirs(empty, exist_ok=True)
    shutil.rmtree(cache, ignore_errors=True)
    remote = nginx.url("tiny")
    common = ["--remote", remote, "--cache", cache, "--preset", empty]
    timed([BIN, "sync"] + common)
    # A timer's sync runs long after the last one wrote anything: let the setup's 20,000 files
    # reach the disk first, so that their writeback does not land inside the measurement.
    os.sync()
    etag = subprocess.run(["curl", "-sI", remote + "/Routes.json"], capture_output=True, text=True).stdout
    etag = next((l.split(":", 1)[1].strip() for l in etag.splitlines() if l.lower().startswith("etag")), "")
    sync, curl, inside, traced = [], [], [], []
    outcomes = set()
    for _ in range(rounds * 20):  # millisecond figures: many alternating runs, so the medians hold still
        wall, rss, out = timed([BIN, "sync", "--json"] + common)
        report = json.loads(out)
        outcomes.add(report["outcome"])
        inside.append(report["seconds"])
        sync.append((wall, rss))
        curl.append(timed(["curl", "-s", "-o", "/dev/null", "-H", f"If-None-Match: {etag}", remote + "/Routes.json"])[:2])
        # The same sync traced (issue 59's bar: within 1 ms of the untraced one), its trace sent to
        # a collector on loopback before the command exits.
        traced.append(timed([BIN, "sync", "--json", "--otlp-endpoint", nginx.url("v1/traces")] + common)[:2])
    time.sleep(0.3)
    received = sum(1 for line in open(nginx.log) if line.startswith("/v1/traces 200"))
    rows = {"cenariusd sync (304)": summary(sync), "cenariusd sync (304), traced": summary(traced), "curl conditional GET": summary(curl)}
    return {"entries": len(table_entries(TINY)), "outcomes": sorted(outcomes), "rows": rows,
            "in_process_ms": statistics.median(inside) * 1000, "traces_received": received,
            "traced_extra_ms": (rows["cenariusd sync (304), traced"]["median"] - rows["cenariusd sync (304)"]["median"]) * 1000,
            "beyond_round_trip_ms": (rows["cenariusd sync (304)"]["median"] - rows["curl conditional GET"]["median"]) * 1000}


def b3(nginx, changed_files, changed_bytes):
    cache = os.path.join(OUT, "cache-site")
    empty = os.path.join(OUT, "empty-preset")
    shutil.rmtree(cache, ignore_errors=True)
    timed([BIN, "sync", "--remote", nginx.url("site"), "--cache", cache, "--preset", empty])
    nginx.reset_log()
    wall, rss, out = timed([BIN, "sync", "--json", "--remote", nginx.url("site2"), "--cache", cache, "--preset", empty])
    report = json.loads(out)
    time.sleep(0.3)
    served = nginx.bytes_served("/site2/")
    return {"changed_files": changed_files, "changed_bytes": changed_bytes, "downloaded_files": report["downloadedFiles"],
            "downloaded_bytes": report["downloadedBytes"], "origin_body_bytes": served, "wall": wall, "rss": rss,
            "exact": report["downloadedBytes"] == changed_bytes and served == changed_bytes}


def b4(runs):
    cache = os.path.join(OUT, "cache-tiny")
    empty = os.path.join(OUT, "empty-preset")
    uri = table_entries(TINY)[len(table_entries(TINY)) // 2]["uri"]
    export = os.path.join(OUT, "hyperfine.json")
    cmd = f"{BIN} resolve {uri} --offline --cache {cache} --preset {empty}"
    sh(["hyperfine", "-N", "--warmup", "5", "--runs", str(runs), "--export-json", export, cmd], stdout=subprocess.DEVNULL)
    sh(["hyperfine", "-N", "--warmup", "5", "--runs", str(runs), "--export-json", export + ".v", f"{BIN} --version"], stdout=subprocess.DEVNULL)
    result = json.load(open(export))["results"][0]
    startup = json.load(open(export + ".v"))["results"][0]
    wall, rss, _ = timed(cmd.split())
    return {"uri": uri, "median_ms": result["median"] * 1000, "min_ms": result["min"] * 1000, "rss": rss,
            "startup_ms": startup["median"] * 1000}


def b5(nginx, seconds, rounds, event_clients=0):
    cache = os.path.join(OUT, "cache-site")
    empty = os.path.join(OUT, "empty-preset")
    port = nginx.port + 1
    daemon = subprocess.Popen([BIN, "serve", "--port", str(port), "--remote", nginx.url("site"), "--cache", cache,
                               "--preset", empty, "--interval", "3600", "--log-level", "warning"])
    try:
        for _ in range(100):
            if subprocess.run(["curl", "-fs", f"http://127.0.0.1:{port}/health"], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        rows = {}
        # Every app page keeps an event stream open (G9 events): serving must not slow down for them.
        clients = EventClients(port, event_clients).__enter__()
        rows["event_streams"] = {"clients": event_clients, "connected": clients.open_streams(),
                                 "idle_cpu_seconds_per_10s": idle_cpu(daemon.pid, 10 if event_clients and seconds > 1 else 1)}
        for label, uri in [("small (2 KiB)", "bench/small.css"), ("1 MiB", "bench/one-mib.js")]:
            targets = {"cenariusd serve": f"http://127.0.0.1:{port}/{uri}", "nginx": nginx.url("site/" + uri)}
            samples = {k: [] for k in targets}
            for r in range(rounds):
                for name, url in (list(targets.items()) if r % 2 == 0 else list(reversed(targets.items()))):
                    out = subprocess.run(["wrk", "-t", "2", "-c", "32", "-d", f"{seconds}s", url], capture_output=True, text=True, timeout=seconds + 30).stdout
                    rps = float(next(l.split()[1] for l in out.splitlines() if l.startswith("Requests/sec")))
                    samples[name].append(rps)
            rows[label] = {k: {"median_rps": statistics.median(v), "max_rps": max(v)} for k, v in samples.items()}
            rows[label]["ratio"] = rows[label]["cenariusd serve"]["median_rps"] / rows[label]["nginx"]["median_rps"]
        rows["event_streams"]["still_connected"] = clients.open_streams()
        clients.__exit__(None, None, None)
        return rows
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=10)


def markdown(results, args):
    stamps = results.get("measured", {})
    scenarios = [k for k in sorted(results) if k != "measured"]
    measured = sorted({stamps.get(k, "earlier") for k in scenarios})
    when = measured[0] if len(measured) == 1 else "scenarios measured " + ", ".join(f"{k} {stamps.get(k, 'earlier')}" for k in scenarios)
    lines = [f"# bench results ({'smoke' if args.smoke else 'full'} run, {when})", "",
             f"Machine: {os.cpu_count()} cores; loopback nginx origin; `bench/run{' --smoke' if args.smoke else ''}`.", ""]
    b1r = results["B1"]
    lines += [f"## B1 cold seed: {b1r['files']} files, {b1r['bytes'] / 2**20:.1f} MiB ({args.rounds} rounds, alternating)", "",
              f"Files written to `{b1r.get('dest', 'bench/out/dest')}`.", "",
              "| tool | median s | min s | peak RSS MiB | ratio to best peer | paired ratio |", "|---|---|---|---|---|---|"]
    for name, v in sorted(b1r["rows"].items(), key=lambda kv: kv[1]["median"]):
        paired = f"{v['paired_ratio']:.2f}" if "paired_ratio" in v else "–"
        lines.append(f"| {name} | {v['median']:.3f} | {v['min']:.3f} | {v['rss']:.1f} | {v['ratio']:.2f} | {paired} |")
    lines += ["", "Ratio to best peer: this tool's median over the fastest peer's median. Paired ratio: the median, "
              "over rounds, of this tool's time over the fastest peer's time in the same round (seconds apart), "
              "which a machine whose speed drifts between rounds distorts less."]
    b2r = results["B2"]
    lines += ["", f"## B2 no-change sync: {b2r['entries']}-entry table (outcome: {', '.join(b2r['outcomes'])})", "",
              "| command | median s | min s | peak RSS MiB |", "|---|---|---|---|"]
    for name, v in b2r["rows"].items():
        lines.append(f"| {name} | {v['median']:.4f} | {v['min']:.4f} | {v['rss']:.1f} |")
    if "traced_extra_ms" in b2r:
        lines.append(f"\nTraced (`--otlp-endpoint`, the trace sent to a collector on loopback before the command exits, "
                     f"{b2r['traces_received']} exports received) minus untraced (median): {b2r['traced_extra_ms']:.2f} ms (bar: ≤ 1 ms).")
    lines.append(f"\nWhole process, cenariusd minus curl (median): {b2r['beyond_round_trip_ms']:.1f} ms. "
                 f"Inside cenariusd, the sync itself (lock, conditional request, 304, bookkeeping; the report's `seconds`): median {b2r.get('in_process_ms', float('nan')):.1f} ms")
    b3r = results["B3"]
    lines += ["", "## B3 incremental: 1% of files changed", "",
              f"changed: {b3r['changed_files']} files, {b3r['changed_bytes']} bytes; cenariusd downloaded {b3r['downloaded_files']} files, "
              f"{b3r['downloaded_bytes']} bytes; the origin sent {b3r['origin_body_bytes']} body bytes (the table and its sidecars excluded); "
              f"exact: {'yes' if b3r['exact'] else 'NO'}; {b3r['wall']:.3f} s, {b3r['rss']:.1f} MiB"]
    b4r = results["B4"]
    lines += ["", f"## B4 resolve, {b2r['entries']}-entry table", "",
              f"`cenariusd resolve --offline` as a whole process (hyperfine): median {b4r['median_ms']:.2f} ms, min {b4r['min_ms']:.2f} ms, peak RSS {b4r['rss']:.1f} MiB"]
    if "startup_ms" in b4r:
        lines.append(f"\nFor scale, the same binary's `--version` (process start, no lookup): median {b4r['startup_ms']:.2f} ms")
    lines += ["", "## B5 serve: wrk -t2 -c32, alternating", "", "| file | cenariusd req/s | nginx req/s | ratio |", "|---|---|---|---|"]
    for label, v in results["B5"].items():
        if label == "event_streams":
            continue
        lines.append(f"| {label} | {v['cenariusd serve']['median_rps']:.0f} | {v['nginx']['median_rps']:.0f} | {v['ratio']:.2f} |")
    streams = results["B5"].get("event_streams")
    if streams:
        lines.append(f"\nDuring these runs {streams['clients']} event streams (`GET /_cenarius/events`) were held open: "
                     f"{streams['connected']} connected before, {streams.get('still_connected', '?')} after; the daemon used "
                     f"{streams['idle_cpu_seconds_per_10s'] * 1000:.0f} ms of CPU in 10 s with them idle.")
    if "F" in results:
        lines.append(footprint.markdown(results["F"]))
    lines += [""] + real_origin.markdown(results["B6"]) if "B6" in results else []
    lines += [""] + fleet.markdown(results["B7"]) if "B7" in results else []
    lines += [""] + release_bytes.markdown(results["B8"]) if "B8" in results else []
    lines += [""] + publish_bench.markdown(results["B9"]) if "B9" in results else []
    lines += [""] + fleet_logs.markdown(results["B10"]) if "B10" in results else []
    lines += [""] + lan.markdown(results["B11"]) if "B11" in results else []
    lines += [""] + bundles.markdown(results["B12"]) if "B12" in results else []
    return "\n".join(lines) + "\n"


def main():
    global OUT, BIN, SITE, TINY
    p = argparse.ArgumentParser()
    p.add_argument("--smoke", action="store_true", help="tiny corpus, one round: proves the harness works")
    p.add_argument("--rounds", type=int, default=None)
    p.add_argument("--bin", default=os.path.join(ROOT, ".build/release/cenariusd"))
    p.add_argument("--port", type=int, default=18780)
    p.add_argument("--only", default=None, help="comma-separated scenarios to run (default: all; --smoke leaves out B11, "
                   "whose eight daemons in namespaces take minutes: --smoke --only B11 runs it with three)")
    p.add_argument("--event-clients", type=int, default=None, help="event streams held open during B5 (default 200, smoke 20)")
    # On a disk, B1's times mostly measured the kernel's writeback of the previous round's
    # 100 MiB (medians 2.5x the minimums, for every tool): tmpfs leaves the tools' own work.
    p.add_argument("--b1-dest", default="/dev/shm/cenarius-bench-dest" if os.access("/dev/shm", os.W_OK) else None,
                   help="where B1 writes the downloaded files (default: tmpfs when there is one)")
    args = p.parse_args()
    args.rounds = args.rounds or (1 if args.smoke else 5)
    args.only = args.only or ("B1,B2,B3,B4,B5,B6,B7,B8,B9,B10,B12,F" if args.smoke else "B1,B2,B3,B4,B5,B6,B7,B8,B9,B10,B11,B12,F")
    OUT = os.path.join(HERE, "out")
    BIN = args.bin
    os.makedirs(OUT, exist_ok=True)
    www = os.path.join(OUT, "www")
    SITE, TINY = os.path.join(www, "site"), os.path.join(www, "tiny")
    files, mib, tiny_files = (60, 3, 500) if args.smoke else (2000, 100, 20000)
    stamp = os.path.join(www, f".corpus-{files}-{mib}-{tiny_files}")
    if not os.path.exists(stamp):
        shutil.rmtree(www, ignore_errors=True)
        print(f"generating corpora: {files} files / {mib} MiB, {tiny_files} tiny files", flush=True)
        sh([sys.executable, os.path.join(HERE, "corpus.py"), "site", SITE, "--files", str(files), "--mib", str(mib)])
        sh([sys.executable, os.path.join(HERE, "corpus.py"), "tiny", TINY, "--files", str(tiny_files)])
        for d in (SITE, TINY):
            sh([BIN, "routes", d], stdout=subprocess.DEVNULL)
        open(stamp, "w").close()
    changed = subprocess.run([sys.executable, os.path.join(HERE, "corpus.py"), "change", SITE, os.path.join(www, "site2")],
                             capture_output=True, text=True, check=True).stdout.split()
    sh([BIN, "routes", os.path.join(www, "site2")], stdout=subprocess.DEVNULL)
    nginx = Nginx(www, args.port)
    try:
        only = set(args.only.split(","))
        name = "results-smoke" if args.smoke else "results"
        previous = os.path.join(HERE, name + ".json")
        results = json.load(open(previous)) if only != {"B1", "B2", "B3", "B4", "B5", "B6", "B7", "B8", "B9", "B10", "B11", "B12", "F"} and os.path.exists(previous) else {}
        if "B1" in only: print("B1 cold seed", flush=True); results["B1"] = b1(nginx, args.rounds, args.b1_dest or os.path.join(OUT, "dest"))
        if "B2" in only: print("B2 no-change sync", flush=True); results["B2"] = b2(nginx, args.rounds)
        if "B3" in only: print("B3 incremental", flush=True); results["B3"] = b3(nginx, int(changed[0]), int(changed[1]))
        if "B4" in only: print("B4 resolve", flush=True); results["B4"] = b4(20 if args.smoke else 100)
        if "B5" in only: print("B5 serve", flush=True); results["B5"] = b5(nginx, 1 if args.smoke else 5, args.rounds,
                                                                                 args.event_clients if args.event_clients is not None else (20 if args.smoke else 200))
        if "F" in only: print("F footprint", flush=True); results["F"] = footprint.run(
            BIN, OUT, nginx, www, os.path.join(ROOT, "www"), TINY, os.path.join(OUT, "empty-preset"), results.get("B1"), 20 if args.smoke else 100)
        if "B6" in only: print("B6 real origin", flush=True); results["B6"] = real_origin.b6(timed, count_files, OUT, BIN, www, SITE, args.rounds,
                                                                                          args.b1_dest or os.path.join(OUT, "dest"), args.port + 1110)
        # Smoke: 20 daemons, 15 s outages (about 1.5 minutes); full: 200 daemons (B7 asks for 100 or more: twice as many make a 1-s bucket's count less of a lottery), 60 s outages (about 6 minutes).
        if "B7" in only: print("B7 fleet", flush=True); results["B7"] = fleet.b7(BIN, OUT, www, args.port + 1120, *((20, 6, 15, 12, 3) if args.smoke else (200, 20, 60, 40, 10)))
        # Real release pairs from PyPI over an emulated 100 ms / 20 Mbit/s link (smoke: one pair).
        if "B8" in only: print("B8 release bytes", flush=True); results["B8"] = release_bytes.b8(BIN, OUT, args.smoke)
        # `publish` to a three-replica OpenStack Swift (scripts/object-store) with the same release pairs, then 20 killed
        # publishes while devices poll (smoke: one pair, 3 kills).
        if "B9" in only: print("B9 publish", flush=True); results["B9"] = publish_bench.b9(BIN, OUT, args.smoke)
        # `fleet` over generated nginx JSON logs against DuckDB's SQL and zcat (smoke: 10^5 lines, no 10^7 log).
        if "B10" in only: print("B10 fleet logs", flush=True); results["B10"] = fleet_logs.b10(BIN, OUT, timed, args.smoke, args.rounds)
        # 8 devices in network namespaces behind one 20 Mbit/s uplink, B8's notebook pair: alone, without peers,
        # with peers, behind nginx proxy_cache, with a hostile peer (smoke: 3 devices).
        if "B11" in only: print("B11 LAN", flush=True); results["B11"] = lan.b11(BIN, OUT, args.smoke)
        # Offline bundles of B8's pairs: their sizes against the solid pack and B8's release bytes, their import.
        if "B12" in only: print("B12 bundle", flush=True); results["B12"] = bundles.b12(
            BIN, OUT, args.smoke, results.get("B8"), "this run" if "B8" in only else results.get("measured", {}).get("B8"))
    finally:
        nginx.stop()
    # A partial run (--only) keeps the other scenarios' earlier figures; each says when it was measured.
    stamps = results.setdefault("measured", {})
    for key in only & set(results):
        stamps[key] = time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())
    json.dump(results, open(os.path.join(HERE, name + ".json"), "w"), indent=2)
    text = markdown(results, args)
    open(os.path.join(HERE, name + ".md"), "w").write(text)
    print(text)


if __name__ == "__main__":
    main()
