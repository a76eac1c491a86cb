"""Where a one-file release's time goes (B9 v2): `python3 bench/b9_timeline.py --bin B [--bin B2 ...]
[--pairs streamlit,jupyterlab] [--rounds 3]`.

For each of B8's release pairs named, on a three-replica store of its own (scripts/object-store, as B9's):
each binary publishes OLD then NEW into a bucket of its own, and `aws s3 sync` puts NEW into another; then,
ROUNDS times, a comment line appended to one .js file of NEW (another each round) is published by every
binary in turn and synced by `aws s3 sync`, alternating. Each publish runs with `CENARIUS_TEST_TRACE=1`
(TestPause: `cenarius-trace <Unix seconds> <step>` on stderr at each step) and between two marker requests
in the proxy's log, so its timeline is its steps and its requests (start and end, on this machine's clock),
in seconds from the process's start. Prints the median round's timeline of each binary and writes every
round to bench/out/b9-timeline.json.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import b8  # noqa: E402
import b9  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "out")


def traced_publish(bin_path, store, build, bucket):
    """One publish with its trace: (seconds, summary, [(t, step)], start) with t from the process's start."""
    env = store.child_env()
    env["CENARIUS_TEST_TRACE"] = "1"
    cmd = [bin_path, "publish", build, "--to", f"s3://{bucket}/{b9.PREFIX}", "--endpoint", store.endpoint, "--json"]
    start = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    seconds = time.time() - start
    if proc.returncode != 0:
        raise RuntimeError(f"publish failed ({proc.returncode}): {proc.stderr[-800:]}")
    steps = []
    for line in proc.stderr.splitlines():
        f = line.split()
        if len(f) == 3 and f[0] == "cenarius-trace":
            steps.append((float(f[1]) - start, f[2]))
    return seconds, json.loads(proc.stdout), steps, start


def requests_of(store, first, second, start):
    """The publish's requests between the markers, from its start: (t0, t1, method, what, status)."""
    found = []
    for method, path, _, status, t0, t1 in store.requests_between(first, second):
        key = path.split("?")[0].split(f"/{b9.PREFIX}/", 1)[-1] if f"/{b9.PREFIX}/" in path else urllib.parse.urlparse(path).query[:40] or path
        found.append((t0 - start, t1 - start, method, key, status))
    return sorted(found)


def one_round(bin_path, store, public, build, bucket):
    m1 = store.mark(public)
    seconds, summary, steps, start = traced_publish(bin_path, store, build, bucket)
    m2 = store.mark(public)
    return {"seconds": seconds, "uploaded": summary["uploaded"], "uploaded_bytes": summary["uploadedBytes"],
            "restaged": summary.get("restaged"), "steps": steps, "requests": requests_of(store, m1, m2, start)}


def render(row):
    events = [(t, t, "·", step, "") for t, step in row["steps"]] + [(a, b, m, k, s) for a, b, m, k, s in row["requests"]]
    lines = []
    for a, b, m, k, s in sorted(events):
        lines.append(f"  {a:6.3f}  {step_or_request(a, b, m, k, s)}")
    return "\n".join(lines)


def step_or_request(a, b, m, k, s):
    return f"— {k}" if m == "·" else f"{m:6s} {k[:70]} {s} ({(b - a) * 1000:.0f} ms)"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", action="append", required=True)
    parser.add_argument("--pairs", default="streamlit,jupyterlab")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fetched", default=os.path.join(OUT, "b8"), help="where B8's sites are (bench/out/b8)")
    args = parser.parse_args()
    wanted = args.pairs.split(",")
    results = {"load": os.getloadavg(), "pairs": {}}
    work = os.path.join(OUT, "b9-timeline")
    with b9.Store(os.path.join(OUT, "object-store-timeline")) as store:
        for index, (package, old_v, new_v, folder) in enumerate(p for p in b8.PAIRS if p[0] in wanted):
            old_site = b8.fetch_site(args.fetched, package, old_v, folder)
            new_site = b8.fetch_site(args.fetched, package, new_v, folder)
            buckets = []
            for k, bin_path in enumerate(args.bin):
                bucket = f"tl-{index}-{k}-{package}"
                public = store.bucket(bucket)
                b9.publish(bin_path, store, old_site, bucket)
                b9.publish(bin_path, store, new_site, bucket)
                buckets.append((bin_path, bucket, public))
            theirs = f"tl-{index}-aws-{package}"
            store.bucket(theirs)
            b9.aws_sync(store, new_site, theirs)
            rounds = []
            for r in range(args.rounds):
                changed, uri = b9.modified_release(new_site, os.path.join(work, package, "one-file"), r)
                row = {"uri": uri, "load": os.getloadavg()[0], "bins": []}
                for bin_path, bucket, public in buckets:
                    row["bins"].append(one_round(bin_path, store, public, changed, bucket))
                row["aws_seconds"] = b9.aws_sync(store, changed, theirs)
                rounds.append(row)
                print(f"{package} round {r}: " + ", ".join(f"{b['seconds']:.2f} s" for b in row["bins"])
                      + f"; aws {row['aws_seconds']:.2f} s; load {row['load']:.1f}", flush=True)
            results["pairs"][package] = rounds
            aws = statistics.median(r["aws_seconds"] for r in rounds)
            for k, bin_path in enumerate(args.bin):
                times = [r["bins"][k]["seconds"] for r in rounds]
                median = sorted(rounds, key=lambda r: r["bins"][k]["seconds"])[len(rounds) // 2]["bins"][k]
                print(f"\n{package}, {bin_path}: median {statistics.median(times):.2f} s (rounds "
                      + ", ".join(f"{t:.2f}" for t in times) + f"), aws s3 sync {aws:.2f} s: {statistics.median(times) / aws:.2f}×; "
                      f"{median['uploaded']} objects, {median['uploaded_bytes']} B")
                print(render(median))
    with open(os.path.join(OUT, "b9-timeline.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
