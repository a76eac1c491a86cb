"""B12 bundle: offline bundles (`cenariusd bundle` / `cenariusd import`) of B8's real release pairs.

For each pair OLD → NEW (the wheels' static folders B8 fetches, under bench/out/b8; smoke: the notebook
pair), both releases published with `publish --sign-key` into a fresh folder, then:
- a first-install bundle of NEW (`bundle --output`): its size against the solid pack plus the head and
  the compressed table, each as the published folder holds it (the bundle's manifest names them);
- a delta bundle from OLD (`bundle --from OLD --output`): its size against what the same release costs
  over the network, B8's bytes on the device's wire for this pair (this run's B8 when it ran, else
  its last figures, stamped);
- `import` of each (the first on an empty cache, the delta on a device left on OLD by importing OLD's
  first-install bundle), median of three whole processes, each on a fresh copy of the device, against
  reading the bundle from disk (`cat FILE > /dev/null`, the page cache warm in both: the import reads
  the bundle once before it is timed too) plus the switch (`cenariusd switch` right after the import:
  a process that takes the cache's lock and finds the release in force, the floor of any switch).
The device's cache is verified (`verify`) after each import; every import must say `committed`.
"""
import json
import os
import shutil
import statistics
import subprocess
import time

from b8 import PAIRS, SMOKE_PAIRS, fetch_site


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def wall(cmd):
    started = time.monotonic()
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return time.monotonic() - started, done


def manifest(bundle):
    """The bundle's first member, read with tar (the format is POSIX tar: docs/bundles.md)."""
    return json.loads(run(["tar", "-xOf", bundle, "cenarius-bundle.json"]).stdout)


def device_flags(work, name, key):
    return ["--cache", os.path.join(work, name, "cache"), "--preset", os.path.join(work, name, "preset"),
            "--public-key", key, "--device-id", f"b12-{name}"]


def timed_imports(bin_path, work, bundle, base, key, runs):
    """Median of `runs` imports, each on a fresh copy of `base` (None: an empty device); the switch after."""
    times, switches, outcomes, verified = [], [], [], True
    for n in range(runs):
        name = f"dev-{os.path.basename(bundle)}-{n}"
        shutil.rmtree(os.path.join(work, name), ignore_errors=True)
        if base:
            shutil.copytree(os.path.join(work, base), os.path.join(work, name), symlinks=True)
        else:
            os.makedirs(os.path.join(work, name, "preset"))
        flags = device_flags(work, name, key)
        subprocess.run(["cat", bundle], stdout=subprocess.DEVNULL, check=True)
        seconds, done = wall([bin_path, "import", bundle, "--json"] + flags)
        outcomes.append(json.loads(done.stdout).get("outcome") if done.returncode == 0 and done.stdout.strip() else f"exit {done.returncode}: {done.stderr.strip()[-200:]}")
        times.append(seconds)
        switches.append(wall([bin_path, "switch", "--json"] + flags)[0])
        verified = verified and subprocess.run([bin_path, "verify"] + flags, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    reads = []
    for _ in range(runs):
        reads.append(wall(["sh", "-c", f"cat '{bundle}' > /dev/null"])[0])
    return {"seconds": statistics.median(times), "runs": times, "read": statistics.median(reads), "switch": statistics.median(switches),
            "outcomes": outcomes, "verified": verified}


def b12(bin_path, out, smoke=False, b8_results=None, b8_measured=None):
    b8_out = os.path.join(out, "b8")
    out = os.path.join(out, "b12")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    key = os.path.join(out, "k1")
    run([bin_path, "keygen", "--output", key])
    b8_pairs = {p["name"]: p for p in (b8_results or {}).get("pairs", [])}
    results = {"pairs": [], "b8_measured": b8_measured}
    runs = 1 if smoke else 3
    for package, old_v, new_v, folder in (SMOKE_PAIRS if smoke else PAIRS):
        name = f"{package} {old_v} → {new_v}"
        print(f"  B12 {name}", flush=True)
        old_site, new_site = fetch_site(b8_out, package, old_v, folder), fetch_site(b8_out, package, new_v, folder)
        work = os.path.join(out, package)
        remote = os.path.join(work, "remote")
        os.makedirs(work)
        for version, site in ((old_v, old_site), (new_v, new_site)):
            build = os.path.join(work, "build-" + version)
            shutil.copytree(site, build, ignore=shutil.ignore_patterns(".complete"))
            run([bin_path, "publish", build, "--to", remote, "--sign-key", key + ".key", "--release", version])
        first_old, first, delta = (os.path.join(work, n) for n in ("first-old.tar", "first.tar", "delta.tar"))
        run([bin_path, "bundle", remote, "--release", old_v, "--output", first_old])
        t_first, _ = wall([bin_path, "bundle", remote, "--output", first])
        t_delta, _ = wall([bin_path, "bundle", remote, "--from", old_v, "--output", delta])
        members = manifest(first)["members"]
        # The reference: the members as the published folder holds them (the head, the table, the solid pack).
        reference = sum(os.path.getsize(os.path.join(remote, m["name"])) for m in members)
        packs = [m for m in members if m["name"].startswith("_cenarius/pack/")]
        network = (b8_pairs.get(name, {}).get("cenariusd") or {}).get("release", {}).get("wire")
        # The device left on OLD: OLD's first-install bundle imported once.
        base = "dev-base"
        os.makedirs(os.path.join(work, base, "preset"))
        run([bin_path, "import", first_old, "--json"] + device_flags(work, base, key + ".pub"))
        pair = {"name": name, "first_bytes": os.path.getsize(first), "first_ref": reference, "first_members": len(members), "first_packs": len(packs),
                "delta_bytes": os.path.getsize(delta), "delta_members": len(manifest(delta)["members"]), "network_release": network,
                "bundle_seconds": {"first": t_first, "delta": t_delta},
                "import_first": timed_imports(bin_path, work, first, None, key + ".pub", runs),
                "import_delta": timed_imports(bin_path, work, delta, base, key + ".pub", runs)}
        results["pairs"].append(judge(pair))
    return results


def judge(pair):
    bars = {"first_bytes": [pair["first_bytes"], 1.02 * pair["first_ref"], pair["first_bytes"] <= 1.02 * pair["first_ref"]]}
    if pair["network_release"]:
        bar = 1.1 * pair["network_release"]
        bars["delta_bytes"] = [pair["delta_bytes"], bar, pair["delta_bytes"] <= bar]
    for step in ("first", "delta"):
        row = pair["import_" + step]
        bar = 1.2 * (row["read"] + row["switch"])
        bars[f"import_{step}_seconds"] = [row["seconds"], bar, row["seconds"] <= bar]
        bars[f"import_{step}_ok"] = [row["outcomes"], "committed", all(o == "committed" for o in row["outcomes"]) and row["verified"]]
    pair["bars"] = bars
    return pair


def markdown(result):
    lines = ["## B12 bundle: first-install and delta bundles of the real release pairs, and their import", "",
             "| release | first install: tar / (solid pack + head + table) | delta: tar / the release over the network (B8) | "
             "import of the first install: s / 1.2× (read + switch) | import of the delta: s / 1.2× (read + switch) | committed, verified |",
             "|---|---|---|---|---|---|"]
    mark = lambda ok: "✅" if ok else "❌"
    for p in result["pairs"]:
        b = p["bars"]
        delta = (f"{p['delta_bytes']:,} B / {p['network_release']:,} B = **{p['delta_bytes'] / p['network_release']:.2f}×** {mark(b['delta_bytes'][2])}"
                 if "delta_bytes" in b else f"{p['delta_bytes']:,} B / (no B8 figure for this pair)")
        imp = lambda s: (f"{p['import_' + s]['seconds']:.3f} s / 1.2 × ({p['import_' + s]['read']:.3f} + {p['import_' + s]['switch']:.3f}) s = "
                         f"**{p['import_' + s]['seconds'] / (p['import_' + s]['read'] + p['import_' + s]['switch']):.1f}×** {mark(b['import_' + s + '_seconds'][2])}")
        lines.append(f"| {p['name']} | {p['first_bytes']:,} B / {p['first_ref']:,} B = **{p['first_bytes'] / p['first_ref']:.3f}×** {mark(b['first_bytes'][2])} | "
                     f"{delta} | {imp('first')} | {imp('delta')} | {mark(b['import_first_ok'][2] and b['import_delta_ok'][2])} |")
    lines += ["", "Bars: a first-install bundle ≤ 1.02× the solid pack + head + table (the published folder's files the "
              "bundle's manifest names); a delta bundle ≤ 1.1× the bytes B8's device put on its wire for the same release"
              + (f" (B8 measured {result['b8_measured']})" if result.get("b8_measured") else "")
              + "; an import (whole `cenariusd import` process, median) ≤ 1.2× reading the bundle (`cat FILE > /dev/null`, "
              "page cache warm: the import's read is warm too) plus the switch (a `cenariusd switch` process right after, "
              "the release already in force: process start, the cache's lock, the check)."]
    return lines
