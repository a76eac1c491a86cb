"""B12 bundle: offline bundles (`cenariusd bundle` / `cenariusd import`) of B8's real release pairs.

For each pair OLD → NEW (the wheels' static folders B8 fetches, under bench/out/b8; smoke: the notebook
pair), both releases published with `publish --sign-key` into a fresh folder, then:
- a first-install bundle of NEW (`bundle --output`): its size against the solid pack plus the head and
  the compressed table, each as the published folder holds it (the bundle's manifest names them);
- a delta bundle from OLD (`bundle --from OLD --output`): its size against what the same release costs
  over the network, B8's bytes on the device's wire for this pair (this run's B8 when it ran, else
  its last figures, stamped);
- `import` of each bundle file (the first on an empty cache, the delta on a device left on OLD by
  importing OLD's first-install bundle), median of the runs, each on a fresh copy of the device, with
  the bundle cold (its pages evicted from the page cache first, as from a stick just plugged in),
  against the reference (docs/bundles.md): reading the bundle from disk, cold too (`cat FILE >
  /dev/null` after the same eviction), plus what the standard tools do to make the release's files and
  switch to them (bench/b12_reference.py, a whole process: the members read from the tar, libzstd's
  `zstd -d` and `--patch-from` into a fresh folder, each file checked against its MD5 as the import
  checks it, one syncfs, a rename and a symlink flip), on a fresh copy of a plain device (for the
  delta, one left on OLD by the same reference). Beside it, the same reference checking nothing, and
  the cold read plus `import` of the same bundle as a folder (`bundle --out-dir`), warm: what reading
  the tar in place costs over a folder. Wall and CPU times (user + system) both: on 2 cores shared
  with builds the wall times swing with the load. The devices live on an ext4 of their own in memory
  (loop-mounted when root: a syncfs on the shared disk waits for every build's writes).
The device's cache is verified (`verify`) after each import; every import must say `committed`.
"""
import json
import os
import resource
import shutil
import statistics
import subprocess
import time

import b12_reference
from devicefs import devices_filesystem, image_path
from b8 import PAIRS, SMOKE_PAIRS, fetch_site


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def wall(cmd):
    started = time.monotonic()
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return time.monotonic() - started, done


def cpu_wall(cmd):
    """Wall time, and the CPU time (user + system) of the process and its children: on 2 cores
    shared with builds the wall time swings with the load, the CPU time far less."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds, done = wall(cmd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return seconds, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done


def manifest(bundle):
    """The bundle's first member, read with tar (the format is POSIX tar: docs/bundles.md)."""
    return json.loads(run(["tar", "-xOf", bundle, "cenarius-bundle.json"]).stdout)


def device_flags(work, name, key):
    return ["--cache", os.path.join(work, name, "cache"), "--preset", os.path.join(work, name, "preset"),
            "--public-key", key, "--device-id", f"b12-{name}"]


def evict(path):
    """The file's pages out of the page cache (drop_caches is not writable here; this is the one file)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def warm(folder):
    for dirpath, _, names in os.walk(folder):
        for n in names:
            with open(os.path.join(dirpath, n), "rb") as f:
                while f.read(1 << 20):
                    pass


def fresh_device(bin_path, work, name, base, key):
    shutil.rmtree(os.path.join(work, name), ignore_errors=True)
    if base:
        shutil.copytree(os.path.join(work, base), os.path.join(work, name), symlinks=True)
    else:
        os.makedirs(os.path.join(work, name, "preset"))
    return device_flags(work, name, key)


def outcome(done):
    return json.loads(done.stdout).get("outcome") if done.returncode == 0 and done.stdout.strip() else f"exit {done.returncode}: {done.stderr.strip()[-200:]}"


def fresh_reference(work, name, base):
    path = os.path.join(work, name)
    shutil.rmtree(path, ignore_errors=True)
    if base:
        shutil.copytree(os.path.join(work, base), path, symlinks=True)
    else:
        os.makedirs(path)
    return path


def timed_imports(bin_path, devices, bundle, folder, base, key, runs):
    """Median of `runs` imports of the cold bundle file, each on a fresh copy of `base` (None: an empty
    device) under `devices`, against a cold read of it plus the standard tools' making of the release
    (b12_reference, on a fresh copy of the plain device `ref-` + base), and against the cold read plus
    the same import from its folder, warm. Each device is removed once measured and checked."""
    times, applies, reads, outcomes, verified = [], [], [], [], True
    standard, standard_ok, cpus, standard_cpus, verifying, verifying_cpus = [], True, [], [], [], []
    for n in range(runs):
        device = fresh_reference(devices, "ref-run", base and "ref-" + base)
        evict(bundle)
        read, read_cpu, _ = cpu_wall(["sh", "-c", f"cat '{bundle}' > /dev/null"])
        seconds, cpu, done = cpu_wall(["python3", "-S", b12_reference.__file__, bundle, device])
        standard.append(read + seconds)
        standard_cpus.append(read_cpu + cpu)
        standard_ok = standard_ok and done.returncode == 0 and b12_reference.check(os.path.realpath(os.path.join(device, "current")))
        # The same, verifying each file as it writes it (the import's checks but the signature's).
        device = fresh_reference(devices, "ref-run", base and "ref-" + base)
        evict(bundle)
        read, read_cpu, _ = cpu_wall(["sh", "-c", f"cat '{bundle}' > /dev/null"])
        seconds, cpu, done = cpu_wall(["python3", "-S", b12_reference.__file__, bundle, device, "--verify"])
        verifying.append(read + seconds)
        verifying_cpus.append(read_cpu + cpu)
        standard_ok = standard_ok and done.returncode == 0
        flags = fresh_device(bin_path, devices, "dev-run", base, key)
        evict(bundle)
        seconds, cpu, done = cpu_wall([bin_path, "import", bundle, "--json"] + flags)
        outcomes.append(outcome(done))
        times.append(seconds)
        cpus.append(cpu)
        verified = verified and subprocess.run([bin_path, "verify"] + flags, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
        applied = fresh_device(bin_path, devices, "dev-run", base, key)
        warm(folder)
        seconds, done = wall([bin_path, "import", folder, "--json", "--no-report"] + applied)
        outcomes.append(outcome(done))
        applies.append(seconds)
        evict(bundle)
        reads.append(wall(["sh", "-c", f"cat '{bundle}' > /dev/null"])[0])
        for name in ("ref-run", "dev-run"):
            shutil.rmtree(os.path.join(devices, name), ignore_errors=True)
    return {"seconds": statistics.median(times), "runs": times, "read": statistics.median(reads), "apply": statistics.median(applies),
            "applies": applies, "outcomes": outcomes, "verified": verified, "standard": statistics.median(standard), "standards": standard,
            "standard_ok": standard_ok, "cpu": statistics.median(cpus), "cpus": cpus, "standard_cpu": statistics.median(standard_cpus),
            "standard_cpus": standard_cpus, "verifying": statistics.median(verifying), "verifyings": verifying,
            "verifying_cpu": statistics.median(verifying_cpus), "verifying_cpus": verifying_cpus}


def b12(bin_path, out, smoke=False, b8_results=None, b8_measured=None, runs=None):
    b8_out = os.path.join(out, "b8")
    out = os.path.join(out, "b12")
    devices_root = os.path.join(out, "devices")
    if os.path.ismount(devices_root):
        subprocess.run(["umount", devices_root])
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    with devices_filesystem(devices_root, image_path(out, "cenarius-b12-devices")) as mounted:
        return pairs(bin_path, out, devices_root, mounted, smoke, b8_out, b8_results, b8_measured, runs or (1 if smoke else 5))


def pairs(bin_path, out, devices_root, mounted, smoke, b8_out, b8_results, b8_measured, runs):
    key = os.path.join(out, "k1")
    run([bin_path, "keygen", "--output", key])
    b8_pairs = {p["name"]: p for p in (b8_results or {}).get("pairs", [])}
    results = {"pairs": [], "b8_measured": b8_measured, "devices_filesystem": "an ext4 of their own in memory, loop-mounted" if mounted else "the bench's"}
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
        # The same bundles as folders (an import of one is the second reference).
        run([bin_path, "bundle", remote, "--out-dir", first + ".d"])
        run([bin_path, "bundle", remote, "--from", old_v, "--out-dir", delta + ".d"])
        members = manifest(first)["members"]
        # The reference: the members as the published folder holds them (the head, the table, the solid pack).
        reference = sum(os.path.getsize(os.path.join(remote, m["name"])) for m in members)
        packs = [m for m in members if m["name"].startswith("_cenarius/pack/")]
        network = (b8_pairs.get(name, {}).get("cenariusd") or {}).get("release", {}).get("wire")
        # The device left on OLD: OLD's first-install bundle imported once (and by the reference).
        devices = os.path.join(devices_root, package)
        base = "dev-base"
        os.makedirs(os.path.join(devices, base, "preset"))
        run([bin_path, "import", first_old, "--json", "--no-report"] + device_flags(devices, base, key + ".pub"))
        os.makedirs(os.path.join(devices, "ref-" + base))
        b12_reference.apply(first_old, os.path.join(devices, "ref-" + base))
        pair = {"name": name, "first_bytes": os.path.getsize(first), "first_ref": reference, "first_members": len(members), "first_packs": len(packs),
                "delta_bytes": os.path.getsize(delta), "delta_members": len(manifest(delta)["members"]), "network_release": network,
                "bundle_seconds": {"first": t_first, "delta": t_delta},
                "import_first": timed_imports(bin_path, devices, first, first + ".d", None, key + ".pub", runs),
                "import_delta": timed_imports(bin_path, devices, delta, delta + ".d", base, key + ".pub", runs)}
        results["pairs"].append(judge(pair))
        shutil.rmtree(devices)
    return results


def judge(pair):
    bars = {"first_bytes": [pair["first_bytes"], 1.02 * pair["first_ref"], pair["first_bytes"] <= 1.02 * pair["first_ref"]]}
    if pair["network_release"]:
        bar = 1.1 * pair["network_release"]
        bars["delta_bytes"] = [pair["delta_bytes"], bar, pair["delta_bytes"] <= bar]
    for step in ("first", "delta"):
        row = pair["import_" + step]
        # The bar: against the standard tools' cold read + making of the release, each file checked
        # against its hash as the import checks it, + switch. Beside it: the same checking nothing,
        # and the cold read + an import of the same bundle as a folder.
        bar = 1.2 * row["verifying"]
        bars[f"import_{step}_seconds"] = [row["seconds"], bar, row["seconds"] <= bar and row["standard_ok"]]
        bars[f"import_{step}_vs_unverified"] = [row["seconds"], 1.2 * row["standard"], row["seconds"] <= 1.2 * row["standard"]]
        bars[f"import_{step}_vs_folder"] = [row["seconds"], 1.2 * (row["read"] + row["apply"]), row["seconds"] <= 1.2 * (row["read"] + row["apply"])]
        bars[f"import_{step}_ok"] = [row["outcomes"], "committed", all(o == "committed" for o in row["outcomes"]) and row["verified"]]
    pair["bars"] = bars
    return pair


def markdown(result):
    lines = ["## B12 bundle: first-install and delta bundles of the real release pairs, and their import", "",
             "| release | first install: tar / (solid pack + head + table) | delta: tar / the release over the network (B8) | "
             "import of the first install: s / the standard tools, verifying (cold read, decode, check, write, sync, switch) | "
             "import of the delta: the same | against the standard tools checking nothing: first / delta | "
             "against the cold read + an import of the same bundle as a folder: first / delta | committed, verified |",
             "|---|---|---|---|---|---|---|---|"]
    mark = lambda ok: "✅" if ok else "❌"
    for p in result["pairs"]:
        if "verifying" not in p["import_first"]:
            continue  # measured before the standard-tools reference: run B12 again
        b = p["bars"]
        delta = (f"{p['delta_bytes']:,} B / {p['network_release']:,} B = **{p['delta_bytes'] / p['network_release']:.2f}×** {mark(b['delta_bytes'][2])}"
                 if "delta_bytes" in b else f"{p['delta_bytes']:,} B / (no B8 figure for this pair)")
        row = lambda s: p["import_" + s]
        imp = lambda s: (f"{row(s)['seconds']:.3f} s / {row(s)['verifying']:.3f} s = **{row(s)['seconds'] / row(s)['verifying']:.2f}×** "
                         f"{mark(b['import_' + s + '_seconds'][2])} (CPU {row(s)['cpu']:.3f} / {row(s)['verifying_cpu']:.3f} s)")
        bare = lambda s: f"{row(s)['seconds'] / row(s)['standard']:.2f}× (CPU {row(s)['cpu'] / row(s)['standard_cpu']:.2f}×)"
        folder = lambda s: f"{row(s)['seconds'] / (row(s)['read'] + row(s)['apply']):.2f}×"
        lines.append(f"| {p['name']} | {p['first_bytes']:,} B / {p['first_ref']:,} B = **{p['first_bytes'] / p['first_ref']:.3f}×** {mark(b['first_bytes'][2])} | "
                     f"{delta} | {imp('first')} | {imp('delta')} | {bare('first')} / {bare('delta')} | {folder('first')} / {folder('delta')} | "
                     f"{mark(b['import_first_ok'][2] and b['import_delta_ok'][2])} |")
    lines += ["", "Bars: a first-install bundle ≤ 1.02× the solid pack + head + table (the published folder's files the "
              "bundle's manifest names); a delta bundle ≤ 1.1× the bytes B8's device put on its wire for the same release"
              + (f" (B8 measured {result['b8_measured']})" if result.get("b8_measured") else "")
              + "; an import of the bundle file (whole `cenariusd import` process, median, the file's pages evicted first) ≤ 1.2× "
              "the standard tools' (bench/b12_reference.py, a whole process, median): `cat FILE > /dev/null` evicted the same way, "
              "then the members read from the tar, the table (or its patch) and the packs decoded by libzstd (`zstd -d`, "
              "`--patch-from` the file in force for a patch) into a fresh folder, each file checked against its MD5 in the table, "
              "written once and hard-linked where the release has it again or already had it, one `syncfs`, the folder renamed "
              "and `current` flipped. In brackets, the CPU time (user + system) of the processes, medians: what the load of other "
              "processes on the machine moves least. Beside it, the same reference checking nothing, and the import against the "
              "cold read plus an import of the same bundle as a folder, warm (what reading the tar in place costs). Devices: "
              + result.get("devices_filesystem", "the bench's folder") + "."]
    return lines
