#!/usr/bin/env python3
"""bench/ab.py [--rounds N] BINARY...: B1 (cold seed of the 2000-file corpus) for several cenariusd
builds and wget2, alternating round by round, so that they are compared in the same minutes.

On a machine whose speed drifts (hypervisor steal moved wget2's own median from 0.17 to 0.52 s
between runs here), only such same-period comparisons show what a change did. Prints, per tool, the
median and minimum wall time, the median CPU time (user + system of the process and its threads),
peak RSS, and the median over rounds of its time against wget2's in the same round.
Needs the corpus `bench/run` generates (bench/out/www/site)."""
import argparse
import os
import shutil
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("binaries", nargs="+")
    p.add_argument("--rounds", type=int, default=12)
    p.add_argument("--port", type=int, default=18781)
    p.add_argument("--dest", default="/dev/shm/cenarius-ab-dest")
    args = p.parse_args()
    bench.OUT = os.path.join(bench.HERE, "out")
    www = os.path.join(bench.OUT, "www")
    site = os.path.join(www, "site")
    if not os.path.exists(os.path.join(site, "Routes.json")):
        sys.exit("no corpus: run bench/run first (it generates bench/out/www/site)")
    entries = bench.table_entries(site)
    nginx = bench.Nginx(www, args.port, name="nginx-ab")  # its own pid and log: bench/run may be running
    try:
        base = nginx.url("site")
        urls = os.path.join(bench.OUT, "ab-wget2.txt")
        with open(urls, "w") as f:
            f.writelines(f"{base}/{e['uri']}\n" for e in entries)
        tools = {b: [b, "seed", "--remote", base, "--preset", args.dest, "--connections", "16"] for b in args.binaries}
        tools["wget2"] = ["wget2", "-q", "--max-threads=16", "-x", "-nH", "--cut-dirs=1", "-P", args.dest, "-i", urls]
        runs = {name: [] for name in tools}
        for r in range(args.rounds):
            order = list(tools.items())
            if r % 2:
                order.reverse()
            for name, cmd in order:
                shutil.rmtree(args.dest, ignore_errors=True)
                os.makedirs(args.dest)
                before = os.times()
                wall, rss, _ = bench.timed(cmd)
                after = os.times()
                cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
                runs[name].append((wall, cpu, rss))
        shutil.rmtree(args.dest, ignore_errors=True)
    finally:
        nginx.stop()
    print(f"B1 A/B, {args.rounds} alternating rounds, {len(entries)} files ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})")
    print(f"{'tool':40} {'median s':>9} {'min s':>7} {'CPU s':>7} {'RSS MiB':>8} {'vs wget2':>9}")
    for name, samples in runs.items():
        paired = statistics.median(samples[r][0] / runs["wget2"][r][0] for r in range(args.rounds))
        print(f"{name[-40:]:40} {statistics.median(s[0] for s in samples):9.3f} {min(s[0] for s in samples):7.3f} "
              f"{statistics.median(s[1] for s in samples):7.3f} {max(s[2] for s in samples):8.1f} {paired:9.2f}")


if __name__ == "__main__":
    main()
