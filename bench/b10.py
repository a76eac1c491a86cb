"""B10 fleet: `cenariusd fleet` over generated nginx JSON access logs (the documented `log_format`,
the header devices send today, `native` and `why` included), side by side with DuckDB's SQL doing
the same count on the same file in the same run, rounds alternating.

  rate      10^6 lines from 20,000 devices: lines/s (whole process), and DuckDB's query
  large     10^7 lines from 20,000 devices: lines/s and peak RSS
  forged    10^6 lines from 10^6 different (forged) device ids: peak RSS
  gzip      the 10^6-line file gzip-compressed: `cenariusd fleet` against `zcat` alone

Bars (CONTRACT B10): >= 2x10^6 lines/s and >= 3x faster than DuckDB; the large log at the same rate
with peak RSS <= 64 MiB; forged ids <= 64 MiB; gzip within 1.2x of zcat. The logs are generated
under bench/out/b10 (never committed) and kept for the next run. Peak RSS from /usr/bin/time.
"""
import json
import os
import random
import statistics
import subprocess
import sys
import time

RELEASES = ["2026.10-c", "2026.11-a", "2026.11-b"]
WHYS = ["current", "held-back", "deferred-moment", "origin-unreachable"]


def device_id(rng):
    return "%016x" % rng.getrandbits(64)


def header(device, release, state, failed, why):
    text = f'device="{device}", release="{release}", state={state}'
    if failed:
        text += f', failed=("{failed}")'
    return text + f', native="2.3.0", why={why}'


def generate(path, lines, devices, forged=False, seed=7):
    """nginx JSON lines, in time order, one poll per line; each device moves from 2026.11-a to
    2026.11-b at a moment of its own, and one in twenty rolls 2026.11-b back (failed, held-back)."""
    rng = random.Random(seed)
    tmp = path + ".tmp"
    t0 = 1764000000.0
    with open(tmp, "w") as out:
        if forged:
            batch = []
            for n in range(lines):
                report = header(device_id(rng), RELEASES[n % 3], "confirmed", None, "current").replace('"', '\\"')
                batch.append('{"time":"%.3f","report":"%s"}\n' % (t0 + n * 0.001, report))
                if len(batch) == 10000:
                    out.write("".join(batch))
                    batch.clear()
            out.write("".join(batch))
        else:
            ids = [device_id(rng) for _ in range(devices)]
            switch = [rng.random() for _ in range(devices)]
            rolled = [rng.random() < 0.05 for _ in range(devices)]
            # Each device's report in each phase, escaped once: the log repeats them.
            before = [header(d, "2026.11-a", "confirmed", None, "deferred-moment").replace('"', '\\"') for d in ids]
            trial = [header(d, "2026.11-b", "trial", None, "trial").replace('"', '\\"') for d in ids]
            after = [header(d, "2026.11-a", "confirmed", "2026.11-b", "held-back").replace('"', '\\"') if rolled[i]
                     else header(d, "2026.11-b", "confirmed", None, "current").replace('"', '\\"') for i, d in enumerate(ids)]
            batch = []
            for n in range(lines):
                i = rng.randrange(devices)
                progress = n / lines
                if progress < switch[i] * 0.8:
                    report = before[i]
                elif progress < switch[i] * 0.8 + 0.02:
                    report = trial[i]
                else:
                    report = after[i]
                batch.append('{"time":"%.3f","report":"%s"}\n' % (t0 + n * 0.001, report))
                if len(batch) == 10000:
                    out.write("".join(batch))
                    batch.clear()
            out.write("".join(batch))
    os.replace(tmp, path)


def ensure(out, name, lines, devices, forged=False):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        print(f"  generating {name}: {lines} lines", flush=True)
        generate(path, lines, devices, forged)
    return path


DUCKDB_QUERY = r"""
WITH lines AS (
  SELECT CAST("time" AS DOUBLE) AS t, report
  FROM read_json('{path}', format = 'newline_delimited', columns = {{"time": 'VARCHAR', report: 'VARCHAR'}})
  WHERE report IS NOT NULL AND report <> '' AND report <> '-'
), reports AS (
  SELECT t,
         regexp_extract(report, 'device="([^"]*)"', 1) AS device,
         regexp_extract(report, 'release="([^"]*)"', 1) AS release,
         regexp_extract(report, 'state=([a-z]+)', 1) AS state,
         regexp_extract(report, 'failed=\(([^)]*)\)', 1) AS failed
  FROM lines
), latest AS (
  SELECT device, arg_max(release, t) AS release, arg_max(state, t) AS state, arg_max(failed, t) AS failed
  FROM reports GROUP BY device
), runs AS (
  SELECT release, count(*) AS devices, count(*) FILTER (WHERE state = 'confirmed') AS confirmed,
         count(*) FILTER (WHERE state = 'trial') AS trial, count(*) FILTER (WHERE state = 'deferred') AS deferred,
         count(*) FILTER (WHERE state = 'held') AS held
  FROM latest GROUP BY release
), gave_up AS (
  SELECT trim(name, '"') AS release, count(*) AS failed
  FROM (SELECT device, release AS current, unnest(string_split(failed, ' ')) AS name FROM latest WHERE failed <> '')
  WHERE trim(name, '"') <> current GROUP BY 1
)
SELECT coalesce(runs.release, gave_up.release) AS release, coalesce(devices, 0), coalesce(confirmed, 0), coalesce(trial, 0),
       coalesce(deferred, 0), coalesce(held, 0), coalesce(failed, 0)
FROM runs FULL OUTER JOIN gave_up ON runs.release = gave_up.release ORDER BY 1
"""

DUCKDB_SCRIPT = """
import duckdb, json, sys
rows = duckdb.connect().execute(sys.argv[2]).fetchall()
json.dump([list(r) for r in rows], open(sys.argv[1], "w"))
"""


def duckdb_available():
    return subprocess.run([sys.executable, "-c", "import duckdb"], capture_output=True).returncode == 0


def fleet_rows(report):
    return sorted([r["release"], r["devices"], r["confirmed"], r["trial"], r["deferred"], r["held"], r["failed"]]
                  for r in report["releases"])


def b10(binary, out, timed, smoke, rounds):
    """`timed(cmd)` runs a whole process: (wall s, peak RSS MiB, stdout)."""
    data = os.path.join(out, "b10")
    os.makedirs(data, exist_ok=True)
    scale = 10 if smoke else 1
    base_lines, large_lines, forged_lines = 10**6 // scale, 10**7 // (scale * 10 if smoke else 1), 10**6 // scale
    rate_log = ensure(data, f"fleet-{base_lines}.log", base_lines, 20000)
    forged_log = ensure(data, f"forged-{forged_lines}.log", forged_lines, 0, forged=True)
    gz_log = rate_log + ".gz"
    if not os.path.exists(gz_log):
        subprocess.run(f"gzip -6 -c {rate_log} > {gz_log}.tmp && mv {gz_log}.tmp {gz_log}", shell=True, check=True)
    large_log = None if smoke else ensure(data, f"fleet-{large_lines}.log", large_lines, 20000)
    have_duckdb = duckdb_available()
    duck_script = os.path.join(data, "duck.py")
    open(duck_script, "w").write(DUCKDB_SCRIPT)
    duck_out = os.path.join(data, "duck.json")

    def fleet(log):
        wall, rss, stdout = timed([binary, "fleet", log, "--json"])
        return wall, rss, json.loads(stdout)

    samples = {k: [] for k in ("rate", "duckdb", "gzip", "zcat", "forged", "large")}
    # This machine is shared and its speed drifts: each comparison is also taken pair by pair, in
    # the same seconds (the median over pairs of cenariusd's time over the other's).
    paired = {"duckdb": [], "zcat": []}
    agree = None
    for r in range(rounds):
        # Alternate who goes first, so neither always runs on a warmer cache.
        order = ["fleet", "duck"] if r % 2 == 0 else ["duck", "fleet"]
        for who in order:
            if who == "fleet":
                wall, rss, report = fleet(rate_log)
                samples["rate"].append((wall, rss))
                ours = fleet_rows(report)
            elif have_duckdb:
                wall, rss, _ = timed([sys.executable, duck_script, duck_out, DUCKDB_QUERY.format(path=rate_log)])
                samples["duckdb"].append((wall, rss))
                theirs = sorted(json.load(open(duck_out)))
        if have_duckdb:
            paired["duckdb"].append(samples["duckdb"][-1][0] / samples["rate"][-1][0])
            agree = ours == theirs if agree is None else (agree and ours == theirs)
        # Three pairs a round: each run is short.
        for pair in range(3):
            for who in (["gzip", "zcat"] if (r + pair) % 2 == 0 else ["zcat", "gzip"]):
                if who == "gzip":
                    wall, rss, _ = fleet(gz_log)
                else:
                    wall, rss, _ = timed(["sh", "-c", f"zcat {gz_log} > /dev/null"])
                samples[who].append((wall, rss))
            paired["zcat"].append(samples["gzip"][-1][0] / samples["zcat"][-1][0])
        wall, rss, report = fleet(forged_log)
        samples["forged"].append((wall, rss))
        forged_devices = report["devices"]
        if large_log and r < max(1, rounds // 2 + 1):
            wall, rss, report = fleet(large_log)
            samples["large"].append((wall, rss))
            large_lines_read = report["lines"]

    def med(key):
        walls = [w for w, _ in samples[key]]
        return {"median_s": statistics.median(walls), "min_s": min(walls), "runs": walls,
                "peak_rss_mib": max(m for _, m in samples[key])} if walls else None

    result = {"lines": base_lines, "devices": 20000, "rounds": rounds, "fleet": med("rate"), "duckdb": med("duckdb"),
              "gzip": med("gzip"), "zcat": med("zcat"), "forged": med("forged"), "forged_lines": forged_lines,
              "forged_devices": forged_devices, "large": med("large"), "large_lines": large_lines if large_log else None,
              "counts_agree": agree, "release_rows": ours}
    result["lines_per_s"] = base_lines / result["fleet"]["median_s"]
    if result["duckdb"]:
        result["duckdb_over_fleet"] = result["duckdb"]["median_s"] / result["fleet"]["median_s"]
        result["duckdb_over_fleet_paired"] = statistics.median(paired["duckdb"])
    result["gzip_over_zcat"] = result["gzip"]["median_s"] / result["zcat"]["median_s"]
    result["gzip_over_zcat_paired"] = statistics.median(paired["zcat"])
    result["load_average"] = os.getloadavg()[0]
    if result["large"]:
        result["large_lines_per_s"] = large_lines / result["large"]["median_s"]
    return result


def markdown(r):
    met = lambda ok: "met" if ok else "NOT met"
    f = r["fleet"]
    lines = [f"## B10 fleet: nginx JSON access logs ({r['rounds']} rounds, alternating)", "",
             *([f"(A smoke run: {r['lines']:,} lines, where the process's start counts for much; the bars are the full run's.)", ""]
               if r["lines"] < 10**6 else []),
             "| work (same run) | median s | min s | peak RSS MiB | figure | bar |", "|---|---|---|---|---|---|",
             f"| `cenariusd fleet` on {r['lines']:,} lines from {r['devices']:,} devices | {f['median_s']:.3f} | {f['min_s']:.3f} | "
             f"{f['peak_rss_mib']:.1f} | {r['lines_per_s'] / 1e6:.2f}×10⁶ lines/s | ≥ 2×10⁶: {met(r['lines_per_s'] >= 2e6)} |"]
    if r.get("duckdb"):
        d = r["duckdb"]
        lines.append(f"| DuckDB, the same count in SQL (`read_json`, `regexp_extract`, `arg_max`) | {d['median_s']:.3f} | {d['min_s']:.3f} | "
                     f"{d['peak_rss_mib']:.1f} | {r['duckdb_over_fleet']:.1f}× cenariusd's time (paired {r['duckdb_over_fleet_paired']:.1f}×) | "
                     f"≥ 3×: {met(r['duckdb_over_fleet'] >= 3)} |")
    else:
        lines.append("| DuckDB | – | – | – | not installed (`pip install duckdb`): not measured | – |")
    if r.get("large"):
        g = r["large"]
        lines.append(f"| `cenariusd fleet` on {r['large_lines']:,} lines from {r['devices']:,} devices | {g['median_s']:.3f} | {g['min_s']:.3f} | "
                     f"{g['peak_rss_mib']:.1f} | {r['large_lines_per_s'] / 1e6:.2f}×10⁶ lines/s | ≥ 2×10⁶ and ≤ 64 MiB: "
                     f"{met(r['large_lines_per_s'] >= 2e6 and g['peak_rss_mib'] <= 64)} |")
    o = r["forged"]
    lines.append(f"| `cenariusd fleet` on {r['forged_lines']:,} lines from as many forged ids ({r['forged_devices']:,} counted) | "
                 f"{o['median_s']:.3f} | {o['min_s']:.3f} | {o['peak_rss_mib']:.1f} | | ≤ 64 MiB: {met(o['peak_rss_mib'] <= 64)} |")
    z, g = r["zcat"], r["gzip"]
    lines.append(f"| `zcat` alone, the {r['lines']:,}-line log gzip-compressed | {z['median_s']:.3f} | {z['min_s']:.3f} | {z['peak_rss_mib']:.1f} | | |")
    lines.append(f"| `cenariusd fleet` on that .gz | {g['median_s']:.3f} | {g['min_s']:.3f} | {g['peak_rss_mib']:.1f} | "
                 f"{r['gzip_over_zcat']:.2f}× zcat (paired {r['gzip_over_zcat_paired']:.2f}×) | ≤ 1.2×: {met(r['gzip_over_zcat'] <= 1.2)} |")
    lines += ["", "Paired: the median over rounds of the ratio of the two times taken seconds apart, which a machine whose "
              f"speed drifts distorts less. Load average at the end: {r.get('load_average', float('nan')):.1f} (2 cores; other builds ran)."]
    if r.get("counts_agree") is not None:
        lines += ["", f"Per-release counts from cenariusd and from DuckDB: {'identical' if r['counts_agree'] else 'DIFFERENT'} "
                      f"({', '.join(f'{row[0]}: {row[1]} on it, {row[6]} gave it up' for row in r['release_rows'])})."]
    return lines
