"""B9 publish: `cenariusd publish` to a three-replica S3-compatible object store on loopback
(OpenStack Swift with its S3 API, started by scripts/object-store in bench/out/object-store).

For each pair of consecutive real releases that B8 fetches (b8.PAIRS, smoke: b8.SMOKE_PAIRS), in a fresh bucket:
- OLD is published, then NEW: for NEW's publish, the bytes and objects it uploaded (its --json summary,
  checked against the proxy's access log: every request `cenariusd-publish` made between two marker
  requests, PUT/POST/COPY/DELETE counted as writes, their request bodies summed), the store objects it
  added (keys under `_cenarius/` the bucket lists after and not before: every one is written once), the
  head and the layout's changed files (every other key that is new or whose ETag changed), its wall time;
  bar: bytes ≤ 1.1 × (store objects added + head + layout's changed files), write requests ≤ the objects
  it adds (store objects and the layout's new or changed files: one PUT each) + 10, the lock's lease
  writes (written, renewed every 10 s, deleted) counted apart; the store objects alone + 10 is reported
  beside it;
- NEW is published again, unchanged: bar: 0 objects uploaded, 0 write requests.
Kill test (on the first pair, in a bucket of its own, signed with a key made by `keygen`): releases that
alternate between OLD and NEW, each with a comment line appended to one of its .js files (another file
each round, so every round is a release of its own), are published and SIGKILLed at a random instant
between 0 and the time NEW's publish took (every 3rd and 4th of 4 rounds: once the proxy has logged its k-th write, k drawn up to
the writes of the previous rerun, since a publish computes before it uploads), then published again to completion, while a device runs
`cenariusd sync --public-key` against the bucket's public URL every 200 ms. Bar: no device sync fails
(exit status ≠ 0, or an outcome other than committed/unchanged/not-modified), every rerun exits 0, and
the device ends on the last release, verified.
After the kills, `prune --keep 1 --min-age 0` (dry run, run, run again) and a new device's install
check that the store holds nothing prune would keep or delete wrongly.
"""
import json
import os
import random
import shutil
import statistics
import tempfile
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

import b8

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
STORE_SCRIPT = os.path.join(ROOT, "scripts", "object-store")
PREFIX = "app"
WRITES = {"PUT", "POST", "COPY", "DELETE"}
GOOD_OUTCOMES = {"committed", "unchanged", "not-modified"}
POLL_S = 0.2
LOCK_KEY = ".cenarius-publish.lock"
ONE_FILE_ROUNDS = 5


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


class Store:
    """scripts/object-store in DIR: started fresh (the previous run's buckets removed), stopped on exit."""

    def __init__(self, path, replicas=3):
        self.dir, self.replicas = path, replicas

    def __enter__(self):
        subprocess.run([STORE_SCRIPT, "stop", self.dir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)
        out = run([STORE_SCRIPT, "start", self.dir, "--replicas", str(self.replicas)]).stdout
        line = [l for l in out.splitlines() if l.startswith("export ")][-1]
        self.env = dict(kv.split("=", 1) for kv in line[len("export "):].split())
        self.endpoint = self.env["CENARIUS_S3_ENDPOINT"]
        self.log = os.path.join(self.dir, "log", "proxy.log")
        return self

    def __exit__(self, *exc):
        subprocess.run([STORE_SCRIPT, "stop", self.dir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def bucket(self, name):
        """A public-read bucket; its public base URL."""
        return run([STORE_SCRIPT, "bucket", self.dir, name]).stdout.strip().splitlines()[-1]

    def child_env(self):
        env = dict(os.environ)
        env.update({k: v for k, v in self.env.items() if k.startswith("AWS_")})
        return env

    def listing(self, public, prefix=PREFIX + "/"):
        """key → (bytes, md5) of every object under prefix, from the bucket's anonymous Swift listing."""
        found, marker = {}, ""
        while True:
            query = urllib.parse.urlencode({"format": "json", "prefix": prefix, "marker": marker})
            with urllib.request.urlopen(f"{public}?{query}", timeout=30) as r:
                page = json.load(r)
            if not page:
                return found
            for o in page:
                found[o["name"]] = (o["bytes"], o["hash"])
            marker = page[-1]["name"]

    def mark(self, public):
        """A marker request in the proxy's log (a 404 GET with a unique name); returns once it is logged,
        so every request answered before it is logged above it. Returns the marker's name."""
        time.sleep(0.3)  # the proxy logs a request once its reply is out: give the last ones time to be written
        name = f"_b9_marker_{uuid.uuid4().hex}"
        req = urllib.request.Request(f"{public}/{name}", headers={"User-Agent": "b9-marker"})
        try:
            urllib.request.urlopen(req, timeout=10).read()
        except urllib.error.HTTPError:
            pass
        deadline = time.time() + 15
        while time.time() < deadline:
            if name in open(self.log, errors="replace").read():
                return name
            time.sleep(0.05)
        raise RuntimeError(f"marker {name} never reached {self.log}")

    def requests_between(self, first, second, agent="cenariusd-publish"):
        """(method, unquoted path, bytes received, status, start, end) of agent's requests logged between two markers.
        A proxy-logging line: 'proxy: client remote date METHOD path proto status referer agent token
        bytes_recvd bytes_sent etag txid headers time ...' (fields quoted, so no spaces inside one)."""
        lines = open(self.log, errors="replace").read().splitlines()
        start = next(i for i, l in enumerate(lines) if first in l)
        end = next(i for i, l in enumerate(lines) if second in l)
        found = []
        for line in lines[start + 1:end]:
            f = line.split()
            if len(f) < 13 or f[0] != "proxy:" or urllib.parse.unquote(f[9]) != agent:
                continue
            # ... start_time end_time policy_index: the request's own times, on this machine's clock.
            found.append((f[4], urllib.parse.unquote(f[5]), 0 if f[11] == "-" else int(f[11]), f[7], float(f[-3]), float(f[-2])))
        return found


def is_store_object(key):
    """Under _cenarius/: written once (an earlier version's `_cenarius/Routes.json.zst` is not, and
    publish removes it)."""
    rel = key.split("/", 1)[1] if key.startswith(PREFIX + "/") else key
    return rel.startswith("_cenarius/") and rel != "_cenarius/Routes.json.zst"


def publish(bin_path, store, build, bucket, extra=(), timeout=1800):
    """`cenariusd publish BUILD --to s3://BUCKET/app --json`: (wall seconds, peak RSS MiB, summary)."""
    cmd = [bin_path, "publish", build, "--to", f"s3://{bucket}/{PREFIX}", "--endpoint", store.endpoint, "--json", *extra]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=store.child_env())
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise RuntimeError(f"publish {build} took over {timeout} s")
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"publish {build} failed ({proc.returncode}): {err[-800:]}")
    return wall, json.loads(out)


def copy_site(site, dest):
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(site, dest, ignore=shutil.ignore_patterns(".complete"))
    return dest


def changed_site_files(old, new):
    old_files = b8.files_of(old)
    return sum(1 for uri, path in b8.files_of(new).items()
               if uri not in old_files or b8.md5(path) != b8.md5(old_files[uri]))


def measure_pair(bin_path, store, work, name, old_site, new_site, index):
    bucket = f"b9-{index}-{name.split()[0].lower()}"
    public = store.bucket(bucket)
    old = copy_site(old_site, os.path.join(work, "old"))
    new = copy_site(new_site, os.path.join(work, "new"))
    old_wall, old_summary = publish(bin_path, store, old, bucket)
    before = store.listing(public)
    m1 = store.mark(public)
    wall, summary = publish(bin_path, store, new, bucket)
    m2 = store.mark(public)
    after = store.listing(public)
    requests = store.requests_between(m1, m2)
    # The publish lock's lease (written, renewed every 10 s, deleted) is not part of the release: its
    # writes and their bytes are counted apart from the release's, which compare with `aws s3 sync`'s
    # (a sync tool takes no lock; a long publish renews its lease more often).
    lock_writes = [r for r in requests if r[0] in WRITES and r[1].endswith("/" + LOCK_KEY)]
    writes = [r for r in requests if r[0] in WRITES and r not in lock_writes]
    added = {k: v for k, v in after.items() if is_store_object(k) and k not in before}
    layout = {k: v for k, v in after.items() if not is_store_object(k) and before.get(k) != v}
    head_key = f"{PREFIX}/Routes.head"
    head_bytes = after.get(head_key, (0, ""))[0] if head_key in layout else 0
    # Unchanged republish.
    m3 = store.mark(public)
    again_wall, again = publish(bin_path, store, new, bucket)
    m4 = store.mark(public)
    again_writes = [r for r in store.requests_between(m3, m4) if r[0] in WRITES]
    store_keys_written = {p for m, p, *_ in writes if m == "PUT" and is_store_object(p.split("/", 2)[-1])}
    one_file = one_file_release(bin_path, store, work, new, bucket, public)
    row = {
        "name": name, "bucket": bucket, "files": len(b8.files_of(new)),
        "changed_files": changed_site_files(old, new),
        "old_publish": {"seconds": old_wall, "uploaded": old_summary["uploaded"], "uploadedBytes": old_summary["uploadedBytes"]},
        "seconds": wall, "summary_seconds": summary.get("seconds"),
        "uploaded": summary["uploaded"], "uploaded_bytes": summary["uploadedBytes"],
        "skipped": summary.get("skipped"), "skipped_bytes": summary.get("skippedBytes"),
        "base_bytes_read": summary.get("baseBytesRead"),
        "log_write_requests": len(writes), "log_write_bytes": sum(r[2] for r in writes),
        "log_lock_writes": len(lock_writes), "log_lock_bytes": sum(r[2] for r in lock_writes),
        "log_read_requests": len(requests) - len(writes),
        "log_failed_writes": sum(1 for r in writes if not r[3].startswith("2")),
        "store_objects_added": len(added), "store_bytes_added": sum(v[0] for v in added.values()),
        "store_keys_written": len(store_keys_written),
        "layout_changed": len(layout), "layout_changed_bytes": sum(v[0] for v in layout.values()),
        "head_bytes": head_bytes,
        "republish": {"seconds": again_wall, "uploaded": again["uploaded"], "uploaded_bytes": again["uploadedBytes"],
                      "unchanged": again.get("unchanged"), "write_requests": len(again_writes)},
        "one_file": one_file,
    }
    return row, public, bucket


def judge(row):
    ref = row["store_bytes_added"] + row["layout_changed_bytes"]
    bytes_bar = 1.1 * ref
    # "write requests ≤ the objects it adds + 10": the objects a publish adds are its store objects and the
    # layout's new or changed files (one PUT each at the least); the store objects alone + 10 is kept beside it.
    writes_bar = row["store_objects_added"] + row["layout_changed"] + 10
    rp = row["republish"]
    row["bars"] = {
        "bytes": [row["uploaded_bytes"], bytes_bar, row["uploaded_bytes"] <= bytes_bar],
        # The summary's bytes and the store's own count of the bytes it received agree.
        "bytes_logged": [row["log_write_bytes"], row["uploaded_bytes"], row["log_write_bytes"] == row["uploaded_bytes"]],
        "writes": [row["log_write_requests"], writes_bar, row["log_write_requests"] <= writes_bar],
        "writes_store_only": [row["log_write_requests"], row["store_objects_added"] + 10,
                              row["log_write_requests"] <= row["store_objects_added"] + 10],
        "republish": [rp["uploaded"] + rp["write_requests"], 0, rp["uploaded"] == 0 and rp["write_requests"] == 0],
    }
    return row


class LogTail:
    """The proxy log's lines from now on, read as they come: counts `cenariusd-publish`'s writes."""

    def __init__(self, path):
        self.file = open(path, errors="replace")
        self.file.seek(0, os.SEEK_END)
        self.rest = ""

    def writes(self):
        self.rest += self.file.read()
        *lines, self.rest = self.rest.split("\n")
        return sum(1 for l in lines if len(l.split()) > 9 and l.split()[4] in WRITES and l.split()[9] == "cenariusd-publish")


class Device(threading.Thread):
    """`cenariusd sync` against the bucket's public URL every 200 ms (start to start), each result kept."""

    def __init__(self, bin_path, remote, work, public_key, fresh=False):
        super().__init__(daemon=True)
        self.fresh = fresh  # a new device at every sync: its cache emptied first (a first install each time)
        self.cache, self.preset = os.path.join(work, "cache"), os.path.join(work, "preset")
        shutil.rmtree(self.cache, ignore_errors=True)
        os.makedirs(self.preset, exist_ok=True)
        self.cmd = [bin_path, "sync", "--json", "--remote", remote, "--cache", self.cache, "--preset", self.preset,
                    "--public-key", public_key, "--timeout", "30"]
        self.results, self.stop, self.phase, self.not_started = [], threading.Event(), "start", []
        self.lock = threading.Lock()

    def sync_once(self):
        if self.fresh:
            shutil.rmtree(self.cache, ignore_errors=True)
        start = time.time()
        try:
            p = subprocess.run(self.cmd, capture_output=True, text=True, timeout=120)
            rc, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired:
            rc, out, err = "timeout", "", ""
        except OSError as e:  # the binary could not be started (being rebuilt): no sync was attempted
            with self.lock:
                self.not_started.append(f"{e}")
            return {"ok": True}
        try:
            outcome = json.loads(out).get("outcome") if out.strip() else None
        except ValueError:
            outcome = None
        ok = rc == 0 and outcome in GOOD_OUTCOMES
        result = {"at": start, "seconds": time.time() - start, "phase": self.phase, "rc": rc, "outcome": outcome, "ok": ok}
        if not ok:
            result["stderr"] = err[-1500:]
            result["stdout"] = out[-500:]
        with self.lock:
            self.results.append(result)
        return result

    def holds(self, uri, path):
        """Whether this device's cache serves uri with path's bytes (offline resolve)."""
        answer = subprocess.run([self.cmd[0], "resolve", uri, "--json", "--offline", "--cache", self.cache, "--preset", self.preset],
                                capture_output=True, text=True)
        return answer.returncode == 0 and b8.md5(json.loads(answer.stdout)["path"]) == b8.md5(path)

    def count(self):
        with self.lock:
            return len(self.results)

    def run(self):
        while not self.stop.is_set():
            start = time.perf_counter()
            self.sync_once()
            self.stop.wait(max(0.0, POLL_S - (time.perf_counter() - start)))


def fetch(url):
    req = urllib.request.Request(url, headers={"User-Agent": "b9-layout-check", "Cache-Control": "no-cache"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.read()
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return None
        raise


def layout_state(base):
    """What the remote holds at base: the table the head names, Routes.json's SHA-256, the table its .sig
    covers, that no compressed table of an earlier version is left at `_cenarius/Routes.json.zst`
    (publish writes none and removes one), and how many files at their uris are not what Routes.json
    says. `whole`: all of them agree."""
    import concurrent.futures
    import hashlib
    head = json.loads(fetch(f"{base}/Routes.head") or b"{}")
    table = fetch(f"{base}/Routes.json") or b""
    sig = json.loads(fetch(f"{base}/Routes.json.sig") or b"{}")
    zst = fetch(f"{base}/_cenarius/Routes.json.zst")
    unpacked = subprocess.run(["zstd", "-dqc"], input=zst, capture_output=True).stdout if zst else b""
    entries = json.loads(table) if table else []

    def wrong(entry):
        body = fetch(f"{base}/{urllib.parse.quote(entry['uri'])}")
        if body is None:
            return True
        digest = hashlib.md5(body) if len(entry["hash"]) == 32 else hashlib.sha256(body)
        return digest.hexdigest() != entry["hash"]

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        mismatched = sum(pool.map(wrong, entries))
    state = {"head": (head.get("table") or {}).get("sha256"), "table": hashlib.sha256(table).hexdigest(),
             "sig": (sig.get("covers") or {}).get("table") or sig.get("table"), "zst": zst is None or unpacked[:len(table)] == table,
             "files": len(entries), "files_mismatched": mismatched}
    state["whole"] = (state["head"] == state["table"] == state["sig"] and state["zst"] and not mismatched)
    return state


def modified_release(site, dest, round_no):
    """A copy of site with one comment line appended to one of its .js files (another one each round)."""
    copy_site(site, dest)
    scripts = sorted(uri for uri in b8.files_of(dest) if uri.endswith(".js"))
    uri = scripts[round_no % len(scripts)]
    with open(os.path.join(dest, uri), "a") as f:
        f.write(f"\n// b9 round {round_no}\n")
    return dest, uri


def kill_test(bin_path, store, work, name, old_site, new_site, kill_window, rounds, seed=9):
    bucket = "b9-kills"
    public = store.bucket(bucket)
    keys = os.path.join(work, "keys")
    os.makedirs(keys, exist_ok=True)
    key = os.path.join(keys, "release")
    if not os.path.exists(key + ".key"):
        run([bin_path, "keygen", "--output", key])
    sign = ["--sign-key", key + ".key"]
    publish(bin_path, store, copy_site(old_site, os.path.join(work, "base-old")), bucket, sign)
    _, base_summary = publish(bin_path, store, copy_site(new_site, os.path.join(work, "base-new")), bucket, sign)
    previous = base_summary["table"]
    device = Device(bin_path, f"{public}/{PREFIX}", os.path.join(work, "device"), key + ".pub")
    # Beside it, a new device at every poll (an empty cache, so a first install each time): it reads what
    # the head first, as every first install does.
    newcomer = Device(bin_path, f"{public}/{PREFIX}", os.path.join(work, "new-device"), key + ".pub", fresh=True)
    devices = (device, newcomer)
    # And one more new device that syncs once right after each kill, on exactly what the kill left.
    probe = Device(bin_path, f"{public}/{PREFIX}", os.path.join(work, "probe-device"), key + ".pub", fresh=True)

    def phase(text):
        for d in devices:
            d.phase = text
    first = device.sync_once()
    if not first["ok"]:
        raise RuntimeError(f"the device's first sync failed: {first}")
    rng = random.Random(seed)
    result = {"pair": name, "rounds": [], "kill_window": kill_window, "seed": seed}
    for d in devices:
        d.start()
    last_uri = last_release = None
    writes_of = {}
    try:
        for i in range(rounds):
            release, uri = modified_release(old_site if i % 2 == 0 else new_site, os.path.join(work, f"release-{i % 2}"), i)
            # Half the rounds (the 3rd and 4th of every 4) aim at the upload phase, which a publish spends little
            # of its time in (forms and patches are computed first): killed once the proxy has logged the k-th of
            # its writes, k drawn between 1 and the writes of the previous rerun.
            # The others: at an instant drawn between 0 and kill_window.
            aim = writes_of.get("last") if i % 4 >= 2 else None
            target = rng.randint(1, aim) if aim else None
            delay = None if aim else rng.uniform(0, kill_window)
            cmd = [bin_path, "publish", release, "--to", f"s3://{bucket}/{PREFIX}", "--endpoint", store.endpoint, "--json", *sign]
            phase(f"round {i}: publish to be killed")
            m1 = store.mark(public)
            tail = LogTail(store.log)
            start = time.perf_counter()
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=store.child_env())
            if target is None:
                try:
                    proc.wait(timeout=delay)
                except subprocess.TimeoutExpired:
                    pass
            else:
                logged, deadline = 0, time.time() + 20 * kill_window + 60
                while proc.poll() is None and logged < target and time.time() < deadline:
                    logged += tail.writes()
                    time.sleep(0.005)
            killed = proc.poll() is None
            if killed:
                proc.kill()
            proc.wait()
            ran = time.perf_counter() - start
            writes = [r for r in store.requests_between(m1, store.mark(public)) if r[0] in WRITES]
            head = f"/{bucket}/{PREFIX}/Routes.head"
            stage = ("after the head" if any(r[1] == head for r in writes) else
                     "during the layout" if any(not is_store_object(r[1].split("/", 2)[-1]) for r in writes) else
                     "during the store objects" if writes else "before any upload")
            # What the kill left: the layout, read back, and a first install on it.
            phase(f"round {i}: after the kill")
            layout = layout_state(f"{public}/{PREFIX}")
            layout["on"] = "previous" if layout["head"] == previous else "new"
            probe.phase = f"round {i}: after the kill (probe)"
            probed = probe.sync_once()
            if probed["ok"]:
                # Which release the new device installed (the one being published, or the one the head names),
                # and where its next poll takes it.
                probed["on"] = "new" if probe.holds(uri, os.path.join(release, uri)) else "previous"
                probe.fresh = False
                again = probe.sync_once()
                probe.fresh = True
                probed["next"] = again["outcome"] if again["ok"] else f"FAILED ({again['rc']})"
                if again["ok"]:
                    probed["next_on"] = "new" if probe.holds(uri, os.path.join(release, uri)) else "previous"
            # Let the device poll the state the kill left, twice, before the rerun.
            seen = device.count()
            deadline = time.time() + 30
            while device.count() < seen + 2 and time.time() < deadline:
                time.sleep(0.05)
            phase(f"round {i}: rerun")
            m3 = store.mark(public)
            began = time.time()
            try:
                wall, summary = publish(bin_path, store, release, bucket, sign)
                rerun = {"rc": 0, "seconds": wall, "uploaded": summary["uploaded"], "uploaded_bytes": summary["uploadedBytes"],
                         "unchanged": summary.get("unchanged")}
            except RuntimeError as e:
                rerun = {"rc": 1, "error": str(e)[-800:]}
            if rerun["rc"] == 0:
                previous = summary["table"]
            rerun_writes = [r for r in store.requests_between(m3, store.mark(public)) if r[0] in WRITES]
            rerun["write_requests"] = len(rerun_writes)
            if rerun_writes:
                rerun["upload_phase"] = [min(r[4] for r in rerun_writes) - began, max(r[5] for r in rerun_writes) - began]
                writes_of["last"] = len(rerun_writes)
            result["rounds"].append({"round": i, "kill_at": delay, "kill_after_writes": target, "aimed": bool(aim), "killed": killed, "ran": ran, "file": uri,
                                    "writes_before_kill": len(writes), "stage": stage, "layout": layout,
                                    "probe": {k: probed.get(k) for k in ("ok", "rc", "outcome", "stderr", "on", "next", "next_on") if k in probed},
                                    "rerun": rerun})
            print(f"    B9 kill round {i}: {'killed' if killed else 'finished'} at {ran:.2f} s{f' (aimed at write {target})' if aim else ''} ({stage}, {len(writes)} writes; layout {'whole' if layout['whole'] else 'NOT whole'} on the {layout['on']} release, "
                  f"{layout['files_mismatched']} files at their uris not the table's; probe {'ok, on the ' + probed['on'] + ' release, then ' + probed['next'] + ' (' + probed.get('next_on', '?') + ')' if probed['ok'] else 'FAILED'}), rerun "
                  f"{'ok' if rerun['rc'] == 0 else 'FAILED'} ({rerun.get('uploaded', '?')} objects), "
                  f"device syncs so far {device.count()} ({sum(not r['ok'] for r in device.results)} failed), "
                  f"new device {newcomer.count()} ({sum(not r['ok'] for r in newcomer.results)} failed)", flush=True)
            last_uri, last_release = uri, release
    finally:
        phase("end")
        for d in devices:
            d.stop.set()
        for d in devices:
            d.join(timeout=180)
    # The device ends on the last release, whole: one more sync, `verify`, and the appended file's bytes.
    final = device.sync_once()
    verified = final["ok"]
    if verified:
        verified = subprocess.run([bin_path, "verify", "--cache", device.cache, "--preset", device.preset],
                                  capture_output=True).returncode == 0
    if verified and last_uri:
        answer = subprocess.run([bin_path, "resolve", last_uri, "--json", "--offline", "--cache", device.cache,
                                 "--preset", device.preset], capture_output=True, text=True)
        verified = answer.returncode == 0 and b8.md5(json.loads(answer.stdout)["path"]) == b8.md5(os.path.join(last_release, last_uri))
    syncs = device.results
    outcomes = {}
    for s in syncs:
        outcomes[str(s["outcome"])] = outcomes.get(str(s["outcome"]), 0) + 1
    newcomer.results += probe.results
    newcomer.not_started += probe.not_started
    new_outcomes = {}
    for s in newcomer.results:
        new_outcomes[str(s["outcome"])] = new_outcomes.get(str(s["outcome"]), 0) + 1
    result["new_device"] = {"syncs": len(newcomer.results), "not_started": len(newcomer.not_started),
                            "failed": [s for s in newcomer.results if not s["ok"]], "outcomes": new_outcomes}
    result.update({
        "syncs": len(syncs), "not_started": len(device.not_started), "failed": [s for s in syncs if not s["ok"]], "outcomes": outcomes,
        "killed": sum(1 for r in result["rounds"] if r["killed"]),
        "reruns_ok": sum(1 for r in result["rounds"] if r["rerun"]["rc"] == 0),
        "final_verified": verified,
        "layout_whole": sum(1 for r in result["rounds"] if r["layout"]["whole"]),
        # A new device that installed the release being published while the head still named the previous one.
        "probe_on_killed_release": sum(1 for r in result["rounds"] if r["probe"].get("on") == "new" and r["layout"]["on"] == "previous"),
        "stages": {st: sum(1 for r in result["rounds"] if r["stage"] == st) for st in {r["stage"] for r in result["rounds"]}},
    })
    result["prune"] = prune_check(bin_path, store, bucket, public, work, key + ".pub")
    result["bars"] = {
        "prune": [result["prune"]["ok"], True, result["prune"]["ok"]],
        "device_failures": [len(result["failed"]), 0, not result["failed"]],
        "new_device_failures": [len(result["new_device"]["failed"]), 0, not result["new_device"]["failed"]],
        "reruns": [result["reruns_ok"], rounds, result["reruns_ok"] == rounds],
        "final": [verified, True, bool(verified)],
    }
    return result


def prune_check(bin_path, store, bucket, public, work, public_key):
    """After the kills: `prune --keep 1 --min-age 0` deletes only what no kept release needs. Its dry
    run's list is what it deletes, a second prune finds nothing, and a new device installs the
    current release from what is left (a store object prune kept or deleted wrongly would show)."""
    base = [bin_path, "prune", f"s3://{bucket}/{PREFIX}", "--endpoint", store.endpoint, "--keep", "1", "--min-age", "0", "--json"]
    def prune(extra=()):
        proc = subprocess.run(base + list(extra), capture_output=True, text=True, env=store.child_env())
        if proc.returncode != 0:
            raise RuntimeError(f"prune failed ({proc.returncode}): {proc.stderr[-600:]}")
        return json.loads(proc.stdout)
    try:
        planned = prune(["--dry-run"])
        done = prune()
        again = prune()
    except RuntimeError as e:
        return {"ok": False, "error": str(e)}
    fresh = Device(bin_path, f"{public}/{PREFIX}", os.path.join(work, "after-prune"), public_key, fresh=True)
    installed = fresh.sync_once()
    ok = sorted(planned["deleted"]) == sorted(done["deleted"]) and not again["deleted"] and installed["ok"]
    return {"ok": ok, "deleted": len(done["deleted"]), "deleted_bytes": done["deletedBytes"], "kept": done["referenced"],
            "second_prune": len(again["deleted"]), "install_after": installed.get("outcome")}


def synthetic_site(folder, files=3000, size=4000, seed=7):
    """FILES small text files (about SIZE bytes each, 12 MB in all by default): words drawn from a
    fixed vocabulary, so that they compress as web text does."""
    rng = random.Random(seed)
    words = ["".join(rng.choice("abcdefghijklmnop") for _ in range(rng.randint(3, 10))) for _ in range(4000)]
    for i in range(files):
        path = os.path.join(folder, f"assets/{i % 30}/file-{i}.js")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        text, n = [], 0
        while n < size:
            w = rng.choice(words)
            text.append(w)
            n += len(w) + 1
        with open(path, "w") as f:
            f.write(" ".join(text))
    with open(os.path.join(folder, "index.html"), "w") as f:
        f.write("<h1>release 1</h1>\n")


def one_file_release(bin_path, store, work, site, bucket, public):
    """B9 v2 on a real site: a comment line appended to one .js file of SITE (published last), published
    by `cenariusd publish` and by `aws s3 sync` (to a bucket already holding SITE); bytes against what
    devices need of it (needed_bytes), seconds against aws's."""
    changed, uri = modified_release(site, os.path.join(work, "one-file"), 0)
    row = {"uri": uri}
    before = store.listing(public)
    row["seconds"], summary = publish(bin_path, store, changed, bucket)
    row.update(uploaded=summary["uploaded"], uploaded_bytes=summary["uploadedBytes"], copied=summary.get("copied", 0),
               **needed_bytes(before, store.listing(public)))
    if shutil.which("aws"):
        theirs = f"{bucket}-aws"
        store.bucket(theirs)
        aws_sync(store, site, theirs)
        row["aws_seconds"] = aws_sync(store, changed, theirs)
    return row


def needed_bytes(before, after):
    """B9 v2's reference for a one-file release, what devices need of it: the new delta packs and file
    forms (pack/, z/, p/, f/ objects added), the head and the layout's changed files (Routes.json among
    them); and, as "table_forms", the changed table's own forms (t/*.zst, what a first install fetches,
    and t/*.patch, what a device on a release fetches). The table's store copy (t/*.json: copied on the
    store when the destination can), the index and the release record are the publish's overhead."""
    needed = table_forms = 0
    for key, (size, etag) in after.items():
        rel = key.split("/", 1)[1] if key.startswith(PREFIX + "/") else key
        if not is_store_object(key):
            needed += size if before.get(key) != (size, etag) else 0
        elif key not in before and rel.split("/")[1] in ("pack", "z", "p", "f"):
            needed += size
        elif key not in before and rel.startswith("_cenarius/t/") and not rel.endswith(".json"):
            table_forms += size
    return {"needed": needed, "table_forms": table_forms}


def aws_sync(store, folder, bucket):
    """`aws s3 sync FOLDER s3://BUCKET/app` to the same store: wall seconds."""
    env = store.child_env()
    env.setdefault("AWS_DEFAULT_REGION", env.get("AWS_REGION", "us-east-1"))
    start = time.perf_counter()
    run(["aws", "s3", "sync", folder, f"s3://{bucket}/{PREFIX}", "--endpoint-url", store.endpoint, "--only-show-errors"], env=env)
    return time.perf_counter() - start


def synthetic(bin_path, store, work, files=3000):
    """B9 v2 on a synthetic site: a first publish and a one-file release, by `cenariusd publish` and by
    `aws s3 sync` (when awscli is installed) into buckets of their own on the same store, alternating."""
    site = os.path.join(work, "site")
    shutil.rmtree(work, ignore_errors=True)
    synthetic_site(site, files)
    tag = uuid.uuid4().hex[:6]
    ours, theirs = f"b9s-c-{tag}", f"b9s-a-{tag}"
    public = store.bucket(ours)
    store.bucket(theirs)
    has_aws = shutil.which("aws") is not None
    row = {"files": files + 1, "bytes": sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(site) for f in fs)}
    seconds, summary = publish(bin_path, store, site, ours)
    row["first"] = {"seconds": seconds, "uploaded": summary["uploaded"], "uploaded_bytes": summary["uploadedBytes"], "pack": summary.get("pack")}
    if has_aws:
        row["first"]["aws_seconds"] = aws_sync(store, site, theirs)
    # One-file releases, alternating with aws: a second on this machine swings with its load. The medians are the figures.
    rounds = []
    for n in range(ONE_FILE_ROUNDS):
        with open(os.path.join(site, "index.html"), "w") as f:
            f.write(f"<h1>release {n + 2}</h1>\n")
        before = store.listing(public)
        seconds, summary = publish(bin_path, store, site, ours)
        rounds.append({"seconds": seconds, "uploaded": summary["uploaded"], "uploaded_bytes": summary["uploadedBytes"], "pack": summary.get("pack"),
                       "copied": summary.get("copied", 0), **needed_bytes(before, store.listing(public))})
        if has_aws:
            rounds[-1]["aws_seconds"] = aws_sync(store, site, theirs)
    row["one_file"] = dict(rounds[len(rounds) // 2], rounds=rounds, seconds=statistics.median(r["seconds"] for r in rounds))
    if has_aws:
        row["one_file"]["aws_seconds"] = statistics.median(r["aws_seconds"] for r in rounds)
        row["one_file"]["ratios"] = [r["seconds"] / r["aws_seconds"] for r in rounds]
    with open(os.path.join(site, "index.html"), "w") as f:
        f.write(f"<h1>release {ONE_FILE_ROUNDS + 2}</h1>\n")
    # A new device's first install while the pack is carried (ONE_FILE_ROUNDS releases of delta chain), then right after the repack.
    row["install_carried"] = first_install(bin_path, public, site, os.path.join(work, "device"))
    seconds, summary = publish(bin_path, store, site, ours, extra=["--repack"])
    row["repack"] = {"seconds": seconds, "uploaded": summary["uploaded"], "uploaded_bytes": summary["uploadedBytes"], "pack": summary.get("pack")}
    row["install_repacked"] = first_install(bin_path, public, site, os.path.join(work, "device"))
    return row


def first_install(bin_path, public, site, work):
    """B8 v2's first-install bar on the published site: a new device's `sync` (empty cache) from the bucket's
    public URL, its HTTP bodies (`bytesFetched`: head, table, index and packs) against one cross-file
    `tar | zstd -19 --long` pack of the site's files and the published table (b8.pack_size); the cache verified."""
    shutil.rmtree(work, ignore_errors=True)
    cache, preset = os.path.join(work, "cache"), os.path.join(work, "preset")
    os.makedirs(preset)
    done = subprocess.run([bin_path, "sync", "--json", "--remote", f"{public}/{PREFIX}", "--cache", cache, "--preset", preset, "--timeout", "60"],
                          capture_output=True, text=True, timeout=300)
    report = json.loads(done.stdout) if done.stdout.strip() else {}
    verified = subprocess.run([bin_path, "verify", "--cache", cache, "--preset", preset], capture_output=True).returncode == 0
    # The reference packs the table the device installed beside the site's files, as B8's does.
    table = os.path.join(work, "Routes.json")
    with urllib.request.urlopen(f"{public}/{PREFIX}/Routes.json", timeout=30) as r, open(table, "wb") as f:
        f.write(r.read())
    names = sorted(os.path.relpath(os.path.join(d, n), site) for d, _, ns in os.walk(site) for n in ns)
    with tempfile.TemporaryDirectory() as both:
        for name in names:
            os.makedirs(os.path.dirname(os.path.join(both, name)), exist_ok=True)
            os.symlink(os.path.join(site, name), os.path.join(both, name))
        shutil.copy(table, os.path.join(both, "Routes.json"))
        tar = subprocess.run(["tar", "-C", both, "-h", "-cf", "-", "--no-recursion"] + names + ["Routes.json"], capture_output=True, check=True).stdout
    ref = len(subprocess.run(["zstd", "-q", "-19", "--long=27", "-c"], input=tar, capture_output=True, check=True).stdout)
    fetched = int(report.get("bytesFetched") or 0)
    shutil.rmtree(work, ignore_errors=True)
    return {"outcome": report.get("outcome"), "exit": done.returncode, "fetched": fetched, "pack_ref": ref,
            "ratio": fetched / ref if ref else None, "verified": verified}


def b9(bin_path, out, smoke=False):
    work = os.path.join(out, "b9")
    os.makedirs(work, exist_ok=True)
    fetched = os.path.join(out, "b8")  # the same downloads as B8's
    results = {"pairs": [], "replicas": 3}
    with Store(os.path.join(out, "object-store")) as store:
        kill_input = None
        for index, (package, old_v, new_v, folder) in enumerate(b8.SMOKE_PAIRS if smoke else b8.PAIRS):
            name = f"{package} {old_v} → {new_v}"
            print(f"  B9 {name}", flush=True)
            old_site = b8.fetch_site(fetched, package, old_v, folder)
            new_site = b8.fetch_site(fetched, package, new_v, folder)
            row, _, _ = measure_pair(bin_path, store, os.path.join(work, package), name, old_site, new_site, index)
            results["pairs"].append(judge(row))
            if kill_input is None:
                kill_input = (name, old_site, new_site, row["seconds"])
        print("  B9 v2: a synthetic site, cenariusd publish beside aws s3 sync", flush=True)
        results["synthetic"] = synthetic(bin_path, store, os.path.join(work, "synthetic"), 300 if smoke else 3000)
        rounds = 3 if smoke else 20
        name, old_site, new_site, window = kill_input
        print(f"  B9 kill test: {rounds} publishes of {name} killed within {window:.2f} s", flush=True)
        results["kills"] = kill_test(bin_path, store, os.path.join(work, "kills"), name, old_site, new_site, window, rounds)
    return results


def markdown(result):
    mb = lambda n: f"{n / 1e6:.2f} MB" if n >= 1e5 else f"{n / 1e3:.1f} KB"
    ok = lambda b: "✓" if b else "✗"
    lines = [f"## B9 publish: real release pairs to a {result['replicas']}-replica S3-compatible store (OpenStack Swift, loopback)", "",
             "| pair | changed files | uploaded (summary / store log) | store objects added | head + layout's changed files | bytes ≤ 1.1× | write requests ≤ objects added + 10 | time | unchanged republish |",
             "|---|---|---|---|---|---|---|---|---|"]
    for p in result["pairs"]:
        b, rp = p["bars"], p["republish"]
        lines.append(
            f"| {p['name']} | {p['changed_files']} of {p['files']} | {p['uploaded']} objects, {mb(p['uploaded_bytes'])} / "
            f"{p['log_write_requests']} writes (and {p.get('log_lock_writes', 0)} of the lock's lease), {mb(p['log_write_bytes'])} {ok(b['bytes_logged'][2])} | "
            f"{p['store_objects_added']}, {mb(p['store_bytes_added'])} | {p['layout_changed']}, {mb(p['layout_changed_bytes'])} "
            f"(head {p['head_bytes']} B) | {mb(b['bytes'][0])} / {mb(b['bytes'][1])} {ok(b['bytes'][2])} | "
            f"{b['writes'][0]} / {b['writes'][1]} {ok(b['writes'][2])} (store objects alone + 10: {b['writes_store_only'][1]} "
            f"{ok(b['writes_store_only'][2])}) | {p['seconds']:.2f} s | "
            f"{rp['uploaded']} objects, {rp['write_requests']} writes, {rp['seconds']:.2f} s {ok(b['republish'][2])} |")
    lines += ["", "Uploaded: `publish --json`'s objects and bytes, and the writes (PUT/POST/COPY/DELETE) the proxy logged for "
              "`cenariusd-publish` with the request bytes it received (the publish lock's lease writes counted apart: "
              "they are not the release's, and `aws s3 sync` takes no lock). Store objects added: keys under `_cenarius/` "
              "the bucket lists after the publish and not before (each written once); "
              "the layout's changed files: every other key that is new or whose ETag changed (the head among them). "
              "Objects added, for the write requests' bar: both (each needs one PUT); the store objects alone beside it."]
    ones = [(p["name"], p["one_file"]) for p in result["pairs"] if p.get("one_file")]
    if ones:
        lines += ["", "B9 v2 on the real sites: a comment line appended to one `.js` file of NEW, published by `cenariusd publish` "
                  "and by `aws s3 sync` (to a bucket already holding NEW). Bytes against what devices need of the release: "
                  "the delta packs, the changed files' forms, the head and the layout's changed files (`Routes.json` among them), "
                  "plus the changed table's own forms (its compressed form, what a first install fetches, and its patch; bar "
                  "≤ 1.25×), and without those beside it; seconds against aws's (bar ≤ 2×):", "",
                  "| site | uploaded | devices need (+ the table's forms) | ratio (without the table's forms) | seconds | aws s3 sync | ratio |",
                  "|---|---|---|---|---|---|---|"]
        for name, o in ones:
            aws, need = o.get("aws_seconds"), o["needed"] + o.get("table_forms", 0)
            lines.append(f"| {name.split(' →')[0].split()[0]} {name.split('→ ')[-1]} | {o['uploaded']} objects ({o['copied']} copied), "
                         f"{mb(o['uploaded_bytes'])} | {mb(o['needed'])} (+ {mb(o.get('table_forms', 0))}) | {o['uploaded_bytes'] / need:.2f}× "
                         f"{ok(o['uploaded_bytes'] <= 1.25 * need)} ({o['uploaded_bytes'] / o['needed']:.2f}×) | {o['seconds']:.2f} | "
                         + (f"{aws:.2f} s | {o['seconds'] / aws:.2f}× {ok(o['seconds'] <= 2 * aws)} |" if aws else "– | – |"))
    syn = result.get("synthetic")
    if syn:
        lines += ["", f"B9 v2, a synthetic site ({syn['files']} files, {mb(syn['bytes'])}), `cenariusd publish` beside `aws s3 sync` "
                  "of the same folder to the same store:", "", "| publish | objects | bytes | seconds | aws s3 sync | ratio |", "|---|---|---|---|---|---|"]
        one = syn.get("one_file") or {}
        if one.get("ratios"):
            lines[-4] = lines[-4].rstrip(":") + f"; a one-file release {len(one['rounds'])} times, alternating, medians (ratios " + \
                ", ".join(f"{x:.2f}×" for x in one["ratios"]) + "):"
        for key, label in [("first", "first"), ("one_file", "one file changed"), ("repack", "one file changed, `--repack`")]:
            r = syn.get(key)
            if not r:
                continue
            aws = r.get("aws_seconds")
            lines.append(f"| {label} (pack {r['pack']}) | {r['uploaded']} | {mb(r['uploaded_bytes'])} | {r['seconds']:.2f} | "
                         + (f"{aws:.2f} s | {r['seconds'] / aws:.2f}× |" if aws else "– | – |"))
        if one.get("needed"):
            need = lambda r: r["needed"] + r.get("table_forms", 0)
            ratios = [r["uploaded_bytes"] / need(r) for r in one["rounds"] if r.get("needed")]
            strict = [r["uploaded_bytes"] / r["needed"] for r in one["rounds"] if r.get("needed")]
            lines += ["", f"One file changed: uploaded {mb(one['uploaded_bytes'])} ({one.get('copied', 0)} objects copied on the store) "
                      f"where devices need {mb(one['needed'])} (the delta pack, changed forms, head and layout's changed files, "
                      f"`Routes.json` among them) and the changed table's forms {mb(one.get('table_forms', 0))}: "
                      f"{statistics.median(ratios):.2f}× (rounds " + ", ".join(f"{x:.2f}×" for x in ratios)
                      + f"; bar ≤ 1.25× {ok(max(ratios) <= 1.25)}); without the table's forms {statistics.median(strict):.2f}×."]
    installs = [(label, syn[key], bar) for key, label, bar in [("install_carried", f"while the pack is carried ({ONE_FILE_ROUNDS} releases of delta chain)", 1.05),
                                                               ("install_repacked", "right after the repack", 1.0)] if syn and syn.get(key)]
    if installs:
        lines += ["", "B8 v2's first install on the synthetic site: a new device's `sync` from the bucket's public URL, its HTTP bodies "
                  "(head, table, index, packs) against one cross-file `tar | zstd -19 --long` pack of the site's files and its table:", "",
                  "| first install | outcome | bodies | pack ref | ratio | bar |", "|---|---|---|---|---|---|"]
        for label, r, bar in installs:
            good = r["ratio"] is not None and r["ratio"] <= bar and r["verified"]
            lines.append(f"| {label} | {r['outcome']}{', verified' if r['verified'] else ', NOT verified'} | {mb(r['fetched'])} | "
                         f"{mb(r['pack_ref'])} | {r['ratio']:.3f}× | ≤ {bar:.2f}× {ok(good)} |")
    k = result.get("kills")
    if k:
        b, n = k["bars"], k.get("new_device") or {"syncs": 0, "failed": [], "outcomes": {}}
        rounds = len(k["rounds"])
        outcomes = lambda o: ", ".join(f"{v} {name}" for name, v in sorted(o.items()))
        lines += ["", f"Kill test ({k['pair']}, signed, {rounds} publishes): releases alternating between OLD and NEW, each with a "
                  f"comment line appended to one .js file, SIGKILLed at a random instant within {k['kill_window']:.2f} s (NEW's "
                  "publish time), every 3rd and 4th of 4 once the proxy had logged its k-th write (k drawn up to the previous "
                  "rerun's writes: a publish computes for most of its time and uploads last), then run again to completion; "
                  "devices synced from the bucket's public URL meanwhile.", "",
                  "| | measured | bar |", "|---|---|---|",
                  f"| publishes killed while running | {k['killed']} of {rounds} (" +
                  ", ".join(f"{v} {st}" for st, v in sorted(k["stages"].items())) + ") | |",
                  f"| reruns completed (exit 0) | {k['reruns_ok']} of {rounds} | all {ok(b['reruns'][2])} |",
                  f"| a device, every 200 ms: syncs failed | {len(k['failed'])} of {k['syncs']} ({outcomes(k['outcomes'])}) | "
                  f"0 {ok(b['device_failures'][2])} |"]
        if "new_device_failures" in b:
            lines.append(f"| a new device (empty cache) at every poll, and one right after each kill (and its next poll): syncs failed | "
                         f"{len(n['failed'])} of {n['syncs']} ({outcomes(n['outcomes'])}) | 0 {ok(b['new_device_failures'][2])} |")
        lines.append(f"| the device ends on the last release, verified | {'yes' if k['final_verified'] else 'NO'} | {ok(b['final'][2])} |")
        if "layout_whole" in k:
            lines += [f"| the remote whole right after a kill (the head, `Routes.json`, the table its `.sig` covers, "
                      f"no `_cenarius/Routes.json.zst`, every file at its uri agree) | {k['layout_whole']} of {rounds} | "
                      "contract, not a B9 bar |",
                      f"| a new device installed the release being published while the head named the previous one | "
                      f"after {k['probe_on_killed_release']} of {rounds} kills | contract, not a B9 bar |"]
        for who, f in [("device", f) for f in k["failed"][:5]] + [("new device", f) for f in n["failed"][:5]]:
            lines.append(f"- failed sync of the {who} ({f['phase']}): exit {f['rc']}, outcome {f['outcome']}: "
                         f"`{((f.get('stderr') or '').strip().splitlines() or [''])[-1][:300]}`")
    pruned = (result.get("kills") or {}).get("prune")
    if pruned:
        lines += ["", f"Prune after the kills (`prune --keep 1 --min-age 0`): {'ok' if pruned['ok'] else 'FAILED'} — "
                  f"{pruned.get('deleted', '?')} objects deleted ({pruned.get('deleted_bytes', '?')} B), {pruned.get('kept', '?')} kept, "
                  f"a second prune deleted {pruned.get('second_prune', '?')}, a new device's install after it: {pruned.get('install_after', pruned.get('error'))}."]
    return lines
