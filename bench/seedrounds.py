"""The harness B1 and B6 share: every tool downloads the whole site into an empty folder, round
after round, the order reversed every other round so that no tool always runs first or after the
same one; each run must leave every file. Then each tool's figures against the fastest peer."""
import os
import shutil
import statistics
import subprocess


def summary(samples):
    walls = [s[0] for s in samples]
    # Every run's wall time is kept in the JSON: on a noisy machine the spread says more than the median.
    return {"median": statistics.median(walls), "min": min(walls), "rss": max(s[1] for s in samples), "runs": len(walls),
            "walls": [round(w, 4) for w in walls]}


def run(tools, rounds, dest, expected, timed, count_files, before_each=None, after_each=None):
    """{tool: [(wall, rss) per round]}; before_each() and after_each(tool) run around each run."""
    results = {name: [] for name in tools}
    for r in range(rounds):
        order = list(tools.items())
        if r % 2:
            order.reverse()
        for name, cmd in order:
            shutil.rmtree(dest, ignore_errors=True)
            os.makedirs(dest)
            subprocess.run("sync", shell=True, check=True)
            if before_each:
                before_each()
            wall, rss, _ = timed(cmd)
            got = count_files(dest) - (1 if name.startswith("cenariusd") else 0)
            if got != expected:
                raise RuntimeError(f"{name}: {got} files, expected {expected}")
            results[name].append((wall, rss))
            if after_each:
                after_each(name)
    return results


def score(results, rounds):
    """(rows, the fastest peer's median): each tool's summary with its ratio to that median and
    its paired ratio."""
    rows = {name: summary(samples) for name, samples in results.items()}
    peers = [k for k in rows if not k.startswith("cenariusd")]
    best = min(rows[p]["median"] for p in peers)
    for name, row in rows.items():
        row["ratio"] = row["median"] / best
        # Each round against the fastest peer of the same round, seconds apart: on a machine
        # whose speed drifts (hypervisor steal), the median of these says more than a ratio of medians.
        row["paired_ratio"] = statistics.median(
            results[name][r][0] / min(results[p][r][0] for p in peers) for r in range(rounds))
    return rows, best
