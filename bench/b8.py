"""B8 release bytes: real consecutive releases of open-source web front-ends, fetched through an emulated
link of 100 ms RTT and 20 Mbit/s (bench/link.py), from a plain nginx with no compression configured.

The releases are the static folders that Python packages' wheels ship, fetched from PyPI at bench time
into bench/out/b8/wheels (never committed). For each pair OLD → NEW:
- references, computed with the zstd and gzip tools in the same run: the patch reference (the sum over
  NEW's changed files of min(`zstd -19 --long --patch-from BASE`, `zstd -19`), plus `zstd -19` of the
  table) and the gzip reference (`gzip -6` of every file and the table);
- "today": `routes` without --compress, a first install of OLD then the release to NEW;
- cenariusd: OLD published with `routes --compress`, NEW with `routes --delta-from OLD`, the same two syncs.
Bytes are counted on the device's interface, both directions (TCP/IP and HTTP included); times and peak RSS
are those of the whole `cenariusd sync` process; every file of the cache is hashed against the table.
"""
import gzip
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
import zipfile

from link import Link, SRV_ADDR

# (package, old, new, folder inside the wheel): consecutive releases, each a real web front-end.
PAIRS = [
    ("jupyterlab", "4.6.5", "4.6.6", "jupyterlab/static"),
    ("notebook", "7.6.4", "7.6.5", "notebook/static"),
    ("streamlit", "1.66.1", "1.67.0", "streamlit/static"),
]
SMOKE_PAIRS = PAIRS[1:2]
RTT_S, RATE_BPS = 0.100, 20e6
PORT = 8080


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def fetch_site(out, package, version, folder):
    """The release's static folder, from its wheel on PyPI (downloaded once, kept under bench/out)."""
    site = os.path.join(out, "sites", f"{package}-{version}")
    if os.path.exists(os.path.join(site, ".complete")):
        return site
    wheels = os.path.join(out, "wheels")
    os.makedirs(wheels, exist_ok=True)
    run(["python3", "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", wheels, f"{package}=={version}"])
    wheel = next(os.path.join(wheels, n) for n in os.listdir(wheels)
                 if n.startswith(f"{package}-{version}-") and n.endswith(".whl"))
    shutil.rmtree(site, ignore_errors=True)
    prefix = folder.rstrip("/") + "/"
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.startswith(prefix) and not name.endswith("/"):
                dest = os.path.join(site, name[len(prefix):])
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                with z.open(name) as src, open(dest, "wb") as dst:
                    shutil.copyfileobj(src, dst)
    open(os.path.join(site, ".complete"), "w").close()
    return site


def files_of(site):
    """The site's own files: not the table, its head and sidecars, nor the store `routes` writes beside them."""
    found = {}
    for dirpath, dirs, names in os.walk(site):
        if dirpath == site:
            dirs[:] = [d for d in dirs if d != "_cenarius"]
        for n in names:
            if n.startswith(".") or (dirpath == site and n.startswith("Routes.")):
                continue
            path = os.path.join(dirpath, n)
            found[os.path.relpath(path, site)] = path
    return found


def md5(path):
    h = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def is_content_hash(part):
    """webpack's hex hashes (`9bfb4adb517c70a6`) and vite's 8-character base64url ones (`Cx986IdX`)."""
    if re.fullmatch(r"[0-9a-f]{8,}", part):
        return any(c.isdigit() for c in part)
    return bool(re.fullmatch(r"[A-Za-z0-9_-]{8}", part)) and part != part.lower()


def stem(uri):
    """The uri with content hashes taken out of its file name: `main.1a2b3c4d.js` ~ `main.9f8e7d6c.js`."""
    folder, _, name = uri.rpartition("/")
    parts = name.split(".")
    kept = parts[:1] + [p for p in parts[1:-1] if not is_content_hash(p)] + parts[1:][-1:]
    return (folder + "/" if folder else "") + ".".join(kept)


def zstd_size(path, base=None):
    with tempfile.NamedTemporaryFile() as out:
        cmd = ["zstd", "-q", "-f", "-19", "--long=27", path, "-o", out.name]
        if base:
            cmd[4:4] = [f"--patch-from={base}"]
        run(cmd)
        return os.path.getsize(out.name)


def references(old, new, table):
    """The patch and gzip references of B8 for one pair, with the tools' own command lines."""
    old_files, new_files = files_of(old), files_of(new)
    old_hashes = {md5(p) for p in old_files.values()}
    by_stem = {}
    for uri, path in old_files.items():
        by_stem.setdefault(stem(uri), path)
    patch, changed, changed_bytes = 0, 0, 0
    for uri, path in sorted(new_files.items()):
        if md5(path) in old_hashes:
            continue
        changed += 1
        changed_bytes += os.path.getsize(path)
        base = old_files.get(uri) or by_stem.get(stem(uri))
        alone = zstd_size(path)
        patch += min(alone, zstd_size(path, base)) if base else alone
    table_ref = zstd_size(table)
    patch += table_ref
    gz = 0
    for path in list(new_files.values()) + [table]:
        with open(path, "rb") as f:
            gz += len(gzip.compress(f.read(), compresslevel=6))
    return {"changed_files": changed, "changed_bytes": changed_bytes, "patch_ref": patch, "table_ref": table_ref, "gzip_ref": gz,
            "pack_ref": pack_size(new, sorted(new_files) + [os.path.relpath(table, new)]),
            "files": len(new_files), "site_bytes": sum(os.path.getsize(p) for p in new_files.values())}


def pack_size(root, names):
    """B8 v2's first-install reference: one cross-file `tar | zstd -19 --long` pack of the site and its table."""
    with tempfile.NamedTemporaryFile() as listing:
        listing.write("\n".join(names).encode() + b"\n")
        listing.flush()
        tar = subprocess.run(["tar", "-C", root, "-cf", "-", "--no-recursion", "-T", listing.name], capture_output=True, check=True).stdout
    return len(subprocess.run(["zstd", "-q", "-19", "--long=27", "-c"], input=tar, capture_output=True, check=True).stdout)


def nginx_conf(folder, http):
    """An nginx.conf of one worker whose pid, logs and temporary files stay in `folder`, with `http` the http block's body."""
    return f"""
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  client_body_temp_path {folder}/body; proxy_temp_path {folder}/proxy; fastcgi_temp_path {folder}/fastcgi;
  uwsgi_temp_path {folder}/uwsgi; scgi_temp_path {folder}/scgi;{http}}}
"""


class Origin:
    """A plain nginx in the link's origin namespace: no gzip, default ETags, root = a symlink we swap."""

    def __init__(self, out):
        self.dir = os.path.join(out, "nginx")
        os.makedirs(self.dir, exist_ok=True)
        self.root = os.path.join(self.dir, "current")
        self.conf = os.path.join(self.dir, "nginx.conf")
        open(self.conf, "w").write(nginx_conf(self.dir, f"""
  types {{ text/html html; text/css css; application/javascript js; application/json json; image/png png; }}
  default_type application/octet-stream;
  access_log {self.dir}/access.log;
  sendfile on; tcp_nopush on; tcp_nodelay on; keepalive_timeout 65; gzip off;
  server {{ listen {SRV_ADDR}:{PORT}; root {self.root}; etag on; }}
"""))

    def publish(self, folder):
        tmp = self.root + ".next"
        if os.path.lexists(tmp):
            os.unlink(tmp)
        os.symlink(folder, tmp)
        os.replace(tmp, self.root)

    def __enter__(self):
        run(Link.on_origin(["nginx", "-c", self.conf, "-g", "user root;"]))
        time.sleep(0.3)
        return self

    def __exit__(self, *exc):
        subprocess.run(Link.on_origin(["nginx", "-c", self.conf, "-s", "stop"]), stderr=subprocess.DEVNULL)


def timed_on_device(cmd):
    """Runs cmd in the device's namespace; wall seconds, peak RSS MiB, bytes on the device's wire, stdout."""
    before = Link.device_bytes()
    rss = tempfile.NamedTemporaryFile()
    start = time.perf_counter()
    # /usr/bin/time forks cenariusd from its own small process: a child's peak RSS starts from its
    # parent's at the fork (Linux keeps it across exec), and this Python process is tens of MiB.
    proc = subprocess.Popen(Link.on_device(["/usr/bin/time", "-f", "%M", "-o", rss.name] + list(cmd)),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, _ = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stdout, stderr = proc.stdout.read(), proc.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd[:2])} failed ({os.waitstatus_to_exitcode(status)}): {stderr[-800:]}")
    time.sleep(0.3)  # the last ACKs and FINs cross the link
    peak = int(open(rss.name).read().split()[-1]) / 1024
    rss.close()
    return wall, peak, Link.device_bytes() - before, stdout


def verified(bin_path, cache, preset, table):
    """Every uri of the table resolves, offline, to a file whose MD5/SHA-256 is the table's, and `verify` agrees."""
    run([bin_path, "verify", "--cache", cache, "--preset", preset])
    for entry in json.load(open(table)):
        uri = entry.get("uri") or entry.get("file")
        answer = json.loads(run([bin_path, "resolve", uri, "--json", "--offline", "--cache", cache, "--preset", preset]).stdout)
        path = answer["path"]
        digest = md5(path) if len(entry["hash"]) == 32 else hashlib.sha256(open(path, "rb").read()).hexdigest()
        if digest != entry["hash"] or answer.get("stale"):
            return False
    return True


def supports_compress(bin_path):
    return "--compress" in run([bin_path, "routes", "--help"]).stdout


def measure(bin_path, work, origin, old_pub, new_pub, new_table):
    """A first install of OLD on a fresh device, then the release to NEW; both as `cenariusd sync`."""
    cache, preset = os.path.join(work, "cache"), os.path.join(work, "preset")
    shutil.rmtree(cache, ignore_errors=True)
    os.makedirs(preset, exist_ok=True)
    common = ["sync", "--json", "--remote", f"http://{SRV_ADDR}:{PORT}", "--cache", cache, "--preset", preset,
              "--timeout", "120"]
    origin.publish(old_pub)
    first = timed_on_device([bin_path] + common)
    origin.publish(new_pub)
    release = timed_on_device([bin_path] + common)
    ok = verified(bin_path, cache, preset, new_table)
    row = {}
    for name, (wall, rss, wire, out) in (("first", first), ("release", release)):
        report = json.loads(out)
        row[name] = {"seconds": wall, "rss": rss, "wire": wire, "fetched": report.get("bytesFetched"),
                     "held": report.get("bytesHeld", report.get("downloadedBytes"))}
    row["verified"] = ok
    return row


def median_run(runs):
    """One row from several runs of `measure`: each time the median, peak RSS the largest, the rest the first run's."""
    row = json.loads(json.dumps(runs[0]))
    for step in ("first", "release"):
        row[step]["seconds"] = statistics.median(run[step]["seconds"] for run in runs)
        row[step]["rss"] = max(run[step]["rss"] for run in runs)
        row[step]["runs"] = [round(run[step]["seconds"], 3) for run in runs]
    row["verified"] = all(run["verified"] for run in runs)
    return row


def largest_objects(pub):
    """The solid pack (a first install's bulk) and the delta pack (a release's) the head of `pub` names."""
    head = json.load(open(os.path.join(pub, "Routes.head")))
    index = json.load(open(os.path.join(pub, "_cenarius", "i", head["index"] + ".json")))
    solid = (index.get("solidPack") or index.get("pack") or {}).get("form")
    delta = next((d["form"] for d in index.get("deltaPacks", [])), None)
    return [f"_cenarius/pack/{name}.pack" if name else None for name in (solid, delta)]


def curl_floor(origin, pub, path, rounds=2):
    """What one curl GET of `path` takes on a fresh connection over the link (the best of `rounds`):
    the floor the link gives one request in practice, TCP's slow start included, which the bars'
    '2 RTT + bytes over the bandwidth' leaves out."""
    if not path:
        return None
    origin.publish(pub)
    url = f"http://{SRV_ADDR}:{PORT}/{path}"
    return min(timed_on_device(["curl", "-sS", "-o", "/dev/null", url])[0] for _ in range(rounds))


def publish(bin_path, site, dest, extra, age=0):
    """A copy of `site` published with `routes`; every file dated `age` seconds ago, since nginx's ETag
    is mtime and size, and two tables of one size written in the same second would look the same."""
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(site, dest, ignore=shutil.ignore_patterns(".complete"))
    run([bin_path, "routes", dest] + extra)
    stamp = time.time() - age
    for dirpath, _, names in os.walk(dest):
        for name in names:
            os.utime(os.path.join(dirpath, name), (stamp, stamp))
    return dest


def b8(bin_path, out, smoke=False):
    out = os.path.join(out, "b8")
    os.makedirs(out, exist_ok=True)
    compress = supports_compress(bin_path)
    results = {"pairs": [], "rtt_ms": RTT_S * 1000, "rate_mbit": RATE_BPS / 1e6, "compress": compress}
    with Link() as _, Origin(out) as origin:
        for package, old_v, new_v, folder in (SMOKE_PAIRS if smoke else PAIRS):
            print(f"  B8 {package} {old_v} → {new_v}", flush=True)
            old_site = fetch_site(out, package, old_v, folder)
            new_site = fetch_site(out, package, new_v, folder)
            pair_dir = os.path.join(out, "pub", package)
            plain_old = publish(bin_path, old_site, os.path.join(pair_dir, "plain-old"), [], age=3600)
            plain_new = publish(bin_path, new_site, os.path.join(pair_dir, "plain-new"), [])
            refs = references(plain_old, plain_new, os.path.join(plain_new, "Routes.json"))
            old_refs = references(plain_new, plain_old, os.path.join(plain_old, "Routes.json"))
            pair = {"name": f"{package} {old_v} → {new_v}", **refs, "first_gzip_ref": old_refs["gzip_ref"], "first_pack_ref": old_refs["pack_ref"],
                    "first_site_bytes": old_refs["site_bytes"], "first_files": old_refs["files"]}
            pair["today"] = measure(bin_path, os.path.join(pair_dir, "device-plain"), origin, plain_old, plain_new,
                                    os.path.join(plain_new, "Routes.json"))
            if compress:
                old_pub = publish(bin_path, old_site, os.path.join(pair_dir, "old"), ["--compress"], age=3600)
                new_pub = publish(bin_path, new_site, os.path.join(pair_dir, "new"), ["--delta-from", old_pub])
                # Times on this link spread by about 0.1 s between runs: the median of three (each a new
                # device), with the largest peak RSS and the bytes of the first (they do not vary).
                runs = [measure(bin_path, os.path.join(pair_dir, "device"), origin, old_pub, new_pub,
                                os.path.join(new_pub, "Routes.json")) for _ in range(1 if smoke else 3)]
                pair["cenariusd"] = median_run(runs)
                pair["curl_first_s"] = curl_floor(origin, old_pub, largest_objects(old_pub)[0])
                pair["curl_release_s"] = curl_floor(origin, new_pub, largest_objects(new_pub)[1])
            results["pairs"].append(judge(pair))
    return results


def judge(pair):
    """B8's bars for one pair, on the cenariusd row (the 'today' row when there is no --compress yet)."""
    row = pair.get("cenariusd") or pair["today"]
    release_bar_bytes = 1.25 * pair["patch_ref"] + 16 * 1024
    first_bar_bytes = 1.05 * pair["first_gzip_ref"]
    release_bar_s = 6 * RTT_S + 1.25 * pair["patch_ref"] * 8 / RATE_BPS
    first_bar_s = 6 * RTT_S + 1.1 * pair["first_gzip_ref"] * 8 / RATE_BPS
    pair["bars"] = {
        "release_bytes": [row["release"]["wire"], release_bar_bytes, row["release"]["wire"] <= release_bar_bytes],
        "first_bytes": [row["first"]["wire"], first_bar_bytes, row["first"]["wire"] <= first_bar_bytes],
        "release_seconds": [row["release"]["seconds"], release_bar_s, row["release"]["seconds"] <= release_bar_s],
        "first_seconds": [row["first"]["seconds"], first_bar_s, row["first"]["seconds"] <= first_bar_s],
        "rss": [max(row["first"]["rss"], row["release"]["rss"]), 64, max(row["first"]["rss"], row["release"]["rss"]) <= 64],
        "verified": [row["verified"], True, row["verified"]],
    }
    # B8 v2 (the head and the store): half the patch reference where the table is more than half of
    # it, else the reference; 3 round trips plus 1.1x the bytes; a first install at one cross-file
    # pack's size, in 1.15x the link's floor (2 round trips plus the pack over the bandwidth).
    if "cenariusd" in pair:
        share = 0.5 if pair["table_ref"] > 0.5 * pair["patch_ref"] else 1.0
        release_v2 = share * pair["patch_ref"]
        # "After the connection": the sync's first round trip is the TCP handshake, which the bar leaves out.
        release_v2_s = 4 * RTT_S + 1.1 * row["release"]["wire"] * 8 / RATE_BPS
        first_v2 = pair["first_pack_ref"]
        first_v2_s = 1.15 * (2 * RTT_S + first_v2 * 8 / RATE_BPS)
        # Bytes against bytes: the reference is a file, so the install's HTTP bodies (`bytesFetched`),
        # not its wire, which adds some 6% of TCP/IP headers and ACKs that no file carries.
        first_fetched = row["first"]["fetched"] or row["first"]["wire"]
        pair["bars_v2"] = {
            "release_bytes": [row["release"]["wire"], release_v2, row["release"]["wire"] <= release_v2],
            "release_seconds": [row["release"]["seconds"], release_v2_s, row["release"]["seconds"] <= release_v2_s],
            "first_bytes": [first_fetched, first_v2, first_fetched <= first_v2],
            "first_seconds": [row["first"]["seconds"], first_v2_s, row["first"]["seconds"] <= first_v2_s],
        }
    return pair


def markdown(result):
    mb = lambda n: f"{n / 1e6:.2f} MB" if n >= 1e5 else f"{n / 1e3:.1f} KB"
    lines = [f"## B8 release bytes: real release pairs over {result['rtt_ms']:.0f} ms RTT, {result['rate_mbit']:.0f} Mbit/s", ""]
    if not result.get("compress"):
        lines += ["This binary has no `routes --compress`: only today's whole-file figures.", ""]
    lines += ["| pair | release today | release cenariusd | zstd patch ref | first install today | first install cenariusd | gzip -6 ref |",
              "|---|---|---|---|---|---|---|"]
    for p in result["pairs"]:
        t, c = p["today"], p.get("cenariusd")
        cr = f"{mb(c['release']['wire'])} ({c['release']['seconds']:.2f} s)" if c else "–"
        cf = f"{mb(c['first']['wire'])} ({c['first']['seconds']:.2f} s)" if c else "–"
        lines.append(f"| {p['name']} | {mb(t['release']['wire'])} ({t['release']['seconds']:.2f} s) | {cr} | {mb(p['patch_ref'])} | "
                     f"{mb(t['first']['wire'])} ({t['first']['seconds']:.2f} s) | {cf} | {mb(p['first_gzip_ref'])} |")
    lines += ["", "Bytes on the device's interface, both directions, TCP/IP and HTTP included; times of the whole `sync` process.",
              "", "| pair | changed files | release ≤ 1.25× ref + 16 KiB | first ≤ 1.05× gzip | release time | first time | peak RSS ≤ 64 MiB | verified |",
              "|---|---|---|---|---|---|---|---|"]
    for p in result["pairs"]:
        b = p["bars"]
        cell = lambda k, fmt: f"{fmt(b[k][0])} / {fmt(b[k][1])} {'✓' if b[k][2] else '✗'}"
        lines.append(f"| {p['name']} | {p['changed_files']} of {p['files']} | {cell('release_bytes', mb)} | {cell('first_bytes', mb)} | "
                     f"{cell('release_seconds', lambda s: f'{s:.2f} s')} | {cell('first_seconds', lambda s: f'{s:.2f} s')} | "
                     f"{cell('rss', lambda m: f'{m:.1f}')} | {'yes' if b['verified'][2] else 'NO'} |")
    v2 = [p for p in result["pairs"] if "bars_v2" in p]
    secs = lambda v: f"{v:.2f} s" if v is not None else "–"
    if v2:
        lines += ["", "B8 v2 (head and store): a release ≤ 0.5× the patch reference where the table is more than half of it, else ≤ 1.0×, "
                  "in ≤ 3 RTT after the connection (the process's time less one RTT for the TCP handshake) + 1.1× its bytes over the link; "
                  "a first install's bodies ≤ 1.0× one `tar | zstd -19 --long` pack, in ≤ 1.15× the link's floor.", "",
                  "| pair | table's share of the ref | release / bar | release time / bar | first install's bodies / pack ref | first install time / bar "
                  "| curl, one GET: delta pack / solid pack |",
                  "|---|---|---|---|---|---|---|"]
        for p in v2:
            b = p["bars_v2"]
            cell = lambda k, fmt: f"{fmt(b[k][0])} / {fmt(b[k][1])} {'✓' if b[k][2] else '✗'}"
            lines.append(f"| {p['name']} | {p['table_ref'] / p['patch_ref']:.0%} | {cell('release_bytes', mb)} | {cell('release_seconds', lambda s: f'{s:.2f} s')} | "
                         f"{cell('first_bytes', mb)} | {cell('first_seconds', lambda s: f'{s:.2f} s')} | "
                         f"{secs(p.get('curl_release_s'))} / {secs(p.get('curl_first_s'))} |")
        lines += ["", "curl, one GET: the largest object of the release (its delta pack) and of the first install (the solid "
                  "pack) fetched alone by curl on a fresh connection over the same link, best of two. It is what the link gives "
                  "one request in practice: the time bars' floor (round trips plus bytes over the bandwidth) leaves out TCP's "
                  "slow start from ten segments, which costs a fresh connection about 0.3 s here (docs/release-bytes.md).",
                  "", "cenariusd's times are the median of " + ("one run" if len(v2[0]["cenariusd"]["first"].get("runs", [0])) == 1 else "three runs, each a new device") + ": "
                  + "; ".join(f"{p['name']}: first install " + " / ".join(f"{s:.2f}" for s in p["cenariusd"]["first"].get("runs", []))
                              + " s, release " + " / ".join(f"{s:.2f}" for s in p["cenariusd"]["release"].get("runs", [])) + " s" for p in v2) + "."]
    return lines
