#!/usr/bin/env python3
"""A fleet adopting a release with a staged rollout (G10), against a loopback nginx.

  bench/rollout_sim.py [--devices 1000] [--duration 3600] [--poll 600] [--halt-at 1800] [--bin PATH]

Each simulated device is its own cache (with the shared preset of release 1) and its own id. A
device polls every --poll seconds of rollout time from a random phase, as `cenariusd sync` with
the test hook CENARIUS_CLOCK_OFFSET setting its clock to that moment of the rollout, so an hour
of rollout runs in about a minute. nginx logs which simulated minute every request belongs to
(the User-Agent names it), so the origin's bytes per minute are measured where they are served.

Two releases are rolled out over the same fleet: release 2 runs its whole course; release 3 is
halted at --halt-at seconds, after which no further device may adopt it. Checks (exit 1 if one
fails): at every ten minutes the adopted fraction is within 4 points of the schedule (two standard deviations of sampling 1,000 places) (a device
learns of the release at its first poll and, as the daemon does, syncs again at its own moment;
a device whose first poll comes after its moment adopts then), no minute serves more than 3x the
mean bytes per minute of the rollout, and nothing is adopted after the halt.
Writes bench/rollout-results.md, bench/rollout-results.json and bench/rollout-curve.svg.
"""
import argparse
import concurrent.futures
import heapq
import json
import os
import random
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out", "rollout")


def nginx_start(root, port):
    conf = f"""
worker_processes 2;
pid {OUT}/nginx.pid;
error_log {OUT}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  default_type application/octet-stream;
  log_format sim '$http_user_agent $request_uri $status $body_bytes_sent';
  access_log {OUT}/access.log sim;
  client_body_temp_path {OUT}/body; proxy_temp_path {OUT}/proxy; fastcgi_temp_path {OUT}/fastcgi;
  uwsgi_temp_path {OUT}/uwsgi; scgi_temp_path {OUT}/scgi;
  server {{ listen 127.0.0.1:{port}; root {root}; etag on; }}
}}
"""
    path = os.path.join(OUT, "nginx.conf")
    open(path, "w").write(conf)
    subprocess.run(["nginx", "-c", path, "-g", "user root;" if os.geteuid() == 0 else ""], check=True)
    time.sleep(0.3)
    return path


def make_site(path, files, seed):
    rng = random.Random(seed)
    os.makedirs(path, exist_ok=True)
    for i in range(files):
        size = int(rng.lognormvariate(9, 1.0))  # a few KiB to a few hundred KiB
        with open(os.path.join(path, f"asset-{i:03}.js"), "wb") as f:
            f.write(rng.randbytes(size))


def change_site(src, dst, percent, seed):
    rng = random.Random(seed)
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("Routes.json*"))
    names = sorted(n for n in os.listdir(dst))
    changed = rng.sample(names, max(1, len(names) * percent // 100))
    for name in changed:
        with open(os.path.join(dst, name), "ab") as f:
            f.write(rng.randbytes(64))
    return sum(os.path.getsize(os.path.join(dst, n)) for n in changed)


def rollout(args, release, start, halt_at, devices, remote_url):
    """Polls every device until it adopts `release` or the rollout (plus one poll) is over. Like
    the daemon, a device told to wait for its moment (`deferred.at`) syncs again at that moment.
    Returns the simulated second of each device's adoption (None: never)."""
    adopted = [None] * len(devices)
    end = args.duration + args.poll
    polls = []
    for index, (device, phase) in enumerate(devices):
        t = phase - args.poll
        while t <= end:
            polls.append((t, index))
            t += args.poll
    heapq.heapify(polls)
    halted = False
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs)
    # Rounds of one simulated minute: the manifest may change between them (the halt).
    minute = polls[0][0] // 60
    while polls:
        if halt_at is not None and not halted and minute * 60 >= halt_at:
            subprocess.run([args.bin, "routes", os.path.join(OUT, "remote"), "--release", release, "--rollout-start", str(int(start)),
                            "--rollout-duration", str(args.duration), "--halted"], check=True, stdout=subprocess.DEVNULL)
            halted = True
        batch = []
        while polls and polls[0][0] // 60 <= minute:
            batch.append(heapq.heappop(polls))
        jobs = []
        for t, index in batch:
            if adopted[index] is not None:
                continue
            device, _ = devices[index]
            env = dict(os.environ, CENARIUS_CLOCK_OFFSET=str(start + t - time.time()))
            cmd = [args.bin, "sync", "--json", "--remote", remote_url, "--cache", os.path.join(OUT, "devices", device),
                   "--preset", os.path.join(OUT, "preset"), "--device-id", device, "--user-agent", f"{release}-minute-{int(t // 60)}"]
            jobs.append((t, index, pool.submit(subprocess.run, cmd, env=env, capture_output=True, text=True)))
        for t, index, job in jobs:
            result = job.result()
            if result.returncode != 0:
                sys.exit(f"sync failed for {devices[index][0]}: {result.stderr}")
            report = json.loads(result.stdout)
            if report["outcome"] == "committed":
                adopted[index] = t
            deferred = report.get("deferred") or {}
            if deferred.get("reason") == "time" and deferred.get("at"):
                moment = deferred["at"] - start
                if t < moment <= end:
                    heapq.heappush(polls, (moment + 0.001, index))
        minute += 1
    pool.shutdown()
    return adopted


def bytes_per_minute(release):
    served = {}
    for line in open(os.path.join(OUT, "access.log")):
        parts = line.split()
        if len(parts) != 4 or not parts[0].startswith(release + "-minute-") or "Routes.json" in parts[1]:
            continue
        minute = int(parts[0].rsplit("-", 1)[1])
        served[minute] = served.get(minute, 0) + int(parts[3])
    return served


def svg(curves, path, duration):
    """Adoption (percent of the fleet) over the rollout, one polyline per release, no dependencies."""
    width, height, pad = 640, 320, 40
    x = lambda t: pad + (width - 2 * pad) * t / duration
    y = lambda p: height - pad - (height - 2 * pad) * p / 100
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<line x1="{pad}" y1="{y(0)}" x2="{width - pad}" y2="{y(0)}" stroke="black"/>',
             f'<line x1="{pad}" y1="{y(0)}" x2="{pad}" y2="{y(100)}" stroke="black"/>',
             f'<line x1="{x(0)}" y1="{y(0)}" x2="{x(duration)}" y2="{y(100)}" stroke="#999" stroke-dasharray="4 4"/>',
             f'<text x="{pad}" y="20">adopted % of the fleet over the rollout (dashed: the schedule)</text>',
             f'<text x="{width - pad - 60}" y="{height - 10}">{duration // 60} min</text>']
    colors = ["#2d6a4f", "#c0392b"]
    for (label, points), color in zip(curves.items(), colors):
        line = " ".join(f"{x(t):.1f},{y(p):.1f}" for t, p in points)
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{line}"/>')
        parts.append(f'<text x="{pad + 10}" y="{40 + 16 * list(curves).index(label)}" fill="{color}">{label}</text>')
    parts.append("</svg>")
    open(path, "w").write("\n".join(parts) + "\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--devices", type=int, default=1000)
    p.add_argument("--duration", type=int, default=3600, help="rollout duration, seconds")
    p.add_argument("--poll", type=int, default=600, help="each device's poll interval, seconds of rollout time")
    p.add_argument("--halt-at", type=int, default=1800, help="release 3 is halted this many seconds into its rollout")
    p.add_argument("--files", type=int, default=50)
    p.add_argument("--jobs", type=int, default=4)
    p.add_argument("--port", type=int, default=18790)
    p.add_argument("--bin", default=os.path.join(ROOT, ".build/release/cenariusd"))
    args = p.parse_args()
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(os.path.join(OUT, "devices"))
    preset, remote = os.path.join(OUT, "preset"), os.path.join(OUT, "remote")
    make_site(preset, args.files, 1)
    subprocess.run([args.bin, "routes", preset], check=True, stdout=subprocess.DEVNULL)
    conf = nginx_start(remote, args.port)
    url = f"http://127.0.0.1:{args.port}"
    rng = random.Random(7)
    devices = [(f"device-{i:04}", rng.uniform(0, args.poll)) for i in range(args.devices)]
    results, curves, ok = {}, {}, True
    began = time.time()
    try:
        previous = preset
        for release, halt_at, seed in [("r2", None, 2), ("r3", args.halt_at, 3)]:
            changed = change_site(previous, remote, 10, seed)
            start = time.time() + 3600
            subprocess.run([args.bin, "routes", remote, "--release", release, "--rollout-start", str(int(start)),
                            "--rollout-duration", str(args.duration)], check=True, stdout=subprocess.DEVNULL)
            adopted = rollout(args, release, start, halt_at, devices, url)
            served = bytes_per_minute(release)
            minutes = range(0, (args.duration + args.poll) // 60 + 1)
            # The rollout's own minutes: until it ends (plus one poll), or until the halt.
            active = range(0, (min(args.duration + args.poll, halt_at if halt_at is not None else args.duration + args.poll)) // 60)
            window = [served.get(m, 0) for m in active]
            mean = sum(window) / len(window)
            checkpoints = []
            for t in range(0, args.duration + 1, 600):
                fraction = sum(1 for a in adopted if a is not None and a <= t) / len(adopted)
                expected = min(t, halt_at if halt_at is not None else t) / args.duration
                checkpoints.append({"minute": t // 60, "adopted": fraction, "schedule": expected})
                # Only devices whose first poll of the release came after their moment lag behind.
                if not (expected - 0.04 <= fraction <= expected + 0.04) and t > args.poll:
                    ok = False
            after_halt = sum(1 for a in adopted if a is not None and halt_at is not None and a >= halt_at)
            peak = max(window)
            results[release] = {
                "devices": args.devices, "changed_bytes_per_device": changed, "adopted": sum(a is not None for a in adopted),
                "bytes_per_minute": {str(m): served.get(m, 0) for m in minutes}, "mean_bytes_per_minute": mean,
                "peak_bytes_per_minute": peak, "peak_over_mean": peak / mean if mean else 0, "checkpoints": checkpoints,
                "halt_at_minute": None if halt_at is None else halt_at // 60, "adopted_after_halt": after_halt,
            }
            if peak > 3 * mean or after_halt:
                ok = False
            points = [(t, 100 * sum(1 for a in adopted if a is not None and a <= t) / len(adopted)) for t in range(0, args.duration + 1, 60)]
            curves[f"{release}" + (f" (halted at {halt_at // 60} min)" if halt_at is not None else "")] = points
            previous = remote + "-" + release
            shutil.rmtree(previous, ignore_errors=True)
            shutil.copytree(remote, previous)
    finally:
        subprocess.run(["nginx", "-c", conf, "-s", "stop"], stderr=subprocess.DEVNULL)
    results["seconds"] = time.time() - began
    results["ok"] = ok
    json.dump(results, open(os.path.join(HERE, "rollout-results.json"), "w"), indent=2)
    svg(curves, os.path.join(HERE, "rollout-curve.svg"), args.duration)
    lines = [f"# Staged rollout simulation: {args.devices} devices, {args.duration // 60}-minute rollout, polls every {args.poll // 60} min",
             "", f"`bench/rollout_sim.py` ({results['seconds']:.0f} s of real time). Curve: `bench/rollout-curve.svg`.", ""]
    for release in ("r2", "r3"):
        r = results[release]
        lines += [f"## {release}" + (f", halted at minute {r['halt_at_minute']}" if r["halt_at_minute"] is not None else ""), "",
                  f"{r['adopted']} of {r['devices']} devices adopted; the origin served a mean of {r['mean_bytes_per_minute'] / 1024:.0f} KiB "
                  f"of files per minute, peak {r['peak_bytes_per_minute'] / 1024:.0f} KiB ({r['peak_over_mean']:.2f}x the mean; bar 3x); "
                  f"adopted after the halt: {r['adopted_after_halt']}.", "",
                  "| minute | adopted | schedule |", "|---|---|---|"]
        lines += [f"| {c['minute']} | {100 * c['adopted']:.1f}% | {100 * c['schedule']:.1f}% |" for c in r["checkpoints"]]
        per_minute = r["bytes_per_minute"]
        lines += ["", "KiB served per minute: " + " ".join(f"{per_minute[m] // 1024}" for m in sorted(per_minute, key=int)), ""]
    lines.append(f"All checks: {'met' if ok else 'NOT MET'}")
    open(os.path.join(HERE, "rollout-results.md"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
