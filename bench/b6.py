"""B6 real origin: B1 again over https with HTTP/2 from a loopback nginx (TLS 1.3, a test CA made
with openssl at bench time). `cenariusd seed` against `curl --parallel --parallel-max 16` and wget2
(16 threads), every tool given the same CA, alternating rounds; bar: cenariusd's median wall time
≤ the fastest peer's. The connections each tool opened come from nginx's log ($connection)."""
import json
import os
import shutil
import statistics

import seedrounds
from tlsorigin import HttpsNginx


def b6(timed, count_files, out, binary, www, site, rounds, dest, port):
    entries = json.load(open(os.path.join(site, "Routes.json")))
    nginx = HttpsNginx(out, www, port, name="nginx-b6")
    try:
        base = nginx.url(os.path.basename(site))
        ca = nginx.ca
        curl_cfg = os.path.join(out, "b6-curl.cfg")
        with open(curl_cfg, "w") as f:
            for e in entries:
                f.write(f'url = "{base}/{e["uri"]}"\noutput = "{dest}/{e["uri"]}"\n')
        wget_list = os.path.join(out, "b6-wget2.txt")
        with open(wget_list, "w") as f:
            for e in entries:
                f.write(f'{base}/{e["uri"]}\n')
        tools = {
            "cenariusd seed": [binary, "seed", "--remote", base, "--preset", dest, "--connections", "16", "--cacert", ca, "--json"],
            "curl --parallel (16)": ["curl", "-s", "--parallel", "--parallel-max", "16", "--create-dirs", "--cacert", ca, "-K", curl_cfg],
            "wget2 (16 threads)": ["wget2", "-q", "--max-threads=16", "-x", "-nH", "--cut-dirs=1", "-P", dest,
                                   "--ca-certificate", ca, "-i", wget_list],
        }
        connections = {name: [] for name in tools}
        results = seedrounds.run(tools, rounds, dest, len(entries), timed, count_files, before_each=nginx.reset_log,
                                 after_each=lambda name: connections[name].append(len({row["connection"] for row in nginx.lines()})))
    finally:
        nginx.stop()
    total = sum(os.path.getsize(os.path.join(site, e["uri"])) for e in entries)
    table, best = seedrounds.score(results, rounds)
    for name, row in table.items():
        row["connections"] = statistics.median(connections[name])
    shutil.rmtree(dest, ignore_errors=True)
    return {"files": len(entries), "bytes": total, "rounds": rounds, "rows": table,
            "met": table["cenariusd seed"]["median"] <= best}


def markdown(result):
    lines = [f"## B6 real origin: B1 over https/HTTP/2, TLS 1.3, a test CA: {result['files']} files, "
             f"{result['bytes'] / 2**20:.1f} MiB ({result['rounds']} rounds, alternating)", "",
             "| tool | median s | min s | peak RSS MiB | connections | ratio to best peer | paired ratio |",
             "|---|---|---|---|---|---|---|"]
    for name, v in sorted(result["rows"].items(), key=lambda kv: kv[1]["median"]):
        lines.append(f"| {name} | {v['median']:.3f} | {v['min']:.3f} | {v['rss']:.1f} | {v['connections']:.0f} | "
                     f"{v['ratio']:.2f} | {v['paired_ratio']:.2f} |")
    lines += ["", f"Bar (cenariusd's median ≤ the fastest peer's): {'met' if result['met'] else 'NOT met'}."]
    return lines
