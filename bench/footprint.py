"""F footprint (docs/guarantees.md): the size of the binary the README installs, the daemon's
resident memory once idle after syncing the sample site and the B1 site, B1's peak RSS, and
`resolve` on every path (cache, preset before any sync, develop), each next to its bar.

Idle RSS is read from /proc/<pid>/status (VmRSS) a few seconds after the daemon's first sync,
with no request made; the figure after serving requests is reported beside it, because pages
of code a request runs come back when it runs.
"""
import json
import os
import shutil
import subprocess
import time
import urllib.request

BARS = {"binary_mb": 25, "idle_sample_mib": 16, "idle_b1_mib": 24, "b1_peak_mib": 40, "resolve_ms": 5}


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def health(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
            return json.loads(r.read())
    except Exception:
        return None


def idle_daemon(bin_path, remote, cache, preset, port, settle=4.0):
    """Starts `serve`, waits for its first sync to commit, lets it settle; (idle KiB, after requests KiB)."""
    shutil.rmtree(cache, ignore_errors=True)
    daemon = subprocess.Popen([bin_path, "serve", "--port", str(port), "--remote", remote, "--cache", cache,
                               "--preset", preset, "--interval", "3600", "--log-level", "warning"])
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            h = health(port)
            if h and h.get("generation"):
                break
            time.sleep(0.1)
        else:
            raise RuntimeError(f"the daemon did not sync {remote} within 120 s")
        time.sleep(settle)
        idle = rss_kib(daemon.pid)
        for _ in range(10):
            for path in ("index.html", "health", "_cenarius/status"):
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/{path}", timeout=2).read()
                except Exception:
                    pass
        return idle, rss_kib(daemon.pid)
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)


def resolve_ms(bin_path, args, runs, out):
    export = os.path.join(out, "hyperfine-f.json")
    subprocess.run(["hyperfine", "-N", "--warmup", "5", "--runs", str(runs), "--export-json", export,
                    " ".join([bin_path, "resolve"] + args)], check=True, stdout=subprocess.DEVNULL)
    return json.load(open(export))["results"][0]["median"] * 1000


def run(bin_path, out, nginx, www, sample_root, tiny, empty, b1, runs):
    """www: nginx's root; sample_root: the repository's www/, copied there as `sample`; tiny: the
    20,000-entry corpus (with its Routes.json); b1: results["B1"] of the same run, or None."""
    shutil.rmtree(os.path.join(www, "sample"), ignore_errors=True)
    shutil.copytree(sample_root, os.path.join(www, "sample"))
    port = nginx.port + 2
    idle_sample, served_sample = idle_daemon(bin_path, nginx.url("sample"), os.path.join(out, "cache-f-sample"), empty, port)
    idle_b1, served_b1 = idle_daemon(bin_path, nginx.url("site"), os.path.join(out, "cache-f-site"), empty, port)
    uri = json.load(open(os.path.join(tiny, "Routes.json")))[-1]["uri"]
    os.makedirs(empty, exist_ok=True)
    tiny_cache = os.path.join(out, "cache-tiny")
    if not os.path.exists(os.path.join(tiny_cache, "current")):  # B2 makes it; `--only F` may not have run B2
        subprocess.run([bin_path, "sync", "--remote", nginx.url("tiny"), "--cache", tiny_cache, "--preset", empty],
                       check=True, stdout=subprocess.DEVNULL)
    preset_cache = os.path.join(out, "cache-f-preset")
    shutil.rmtree(preset_cache, ignore_errors=True)
    resolve = {
        "cache": resolve_ms(bin_path, [uri, "--offline", "--cache", tiny_cache, "--preset", empty], runs, out),
        "preset before any sync": resolve_ms(bin_path, [uri, "--offline", "--cache", preset_cache, "--preset", tiny], runs, out),
        "develop": resolve_ms(bin_path, [uri, "--develop", "--develop-dir", tiny], runs, out),
    }
    seed = (b1 or {}).get("rows", {}).get("cenariusd seed")
    return {
        "binary_bytes": os.path.getsize(bin_path),
        "stripped": "not stripped" not in subprocess.run(["file", "-L", bin_path], capture_output=True, text=True).stdout,
        "idle_sample_kib": idle_sample, "served_sample_kib": served_sample,
        "idle_b1_kib": idle_b1, "served_b1_kib": served_b1,
        "b1_peak_mib": seed["rss"] if seed else None,
        "resolve_ms": resolve, "resolve_entries": len(json.load(open(os.path.join(tiny, "Routes.json")))),
    }


def markdown(f):
    def row(name, value, bar, unit, fmt="{:.1f}"):
        ok = value is not None and value <= bar
        shown = fmt.format(value) if value is not None else "–"
        return f"| {name} | {shown} {unit} | ≤ {bar} {unit} | {'met' if ok else 'MISSED'} |"
    lines = ["", "## F footprint (the release build `make release` makes and `make install` installs)", "",
             "| figure | measured | bar | |", "|---|---|---|---|",
             row(f"binary ({'stripped' if f['stripped'] else 'NOT stripped'})", f["binary_bytes"] / 1e6, BARS["binary_mb"], "MB"),
             row("daemon idle after syncing the sample site", f["idle_sample_kib"] / 1024, BARS["idle_sample_mib"], "MiB"),
             row("daemon idle after syncing the B1 site", f["idle_b1_kib"] / 1024, BARS["idle_b1_mib"], "MiB"),
             row("B1 seed peak RSS (B1's rounds, the highest)", f["b1_peak_mib"], BARS["b1_peak_mib"], "MiB")]
    for path, ms in f["resolve_ms"].items():
        lines.append(row(f"`resolve` median, {path} ({f['resolve_entries']} entries)", ms, BARS["resolve_ms"], "ms", "{:.2f}"))
    lines.append(f"\nAfter serving 30 requests the same daemons held {f['served_sample_kib'] / 1024:.1f} MiB (sample site) and "
                 f"{f['served_b1_kib'] / 1024:.1f} MiB (B1 site): a request brings back the code it runs, which the idle "
                 "daemon hands back to the kernel (MADV_PAGEOUT) once a sync has settled.")
    return "\n".join(lines) + "\n"
