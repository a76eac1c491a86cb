#!/usr/bin/env python3
"""Deterministic corpora for bench/run.

  corpus.py site DIR --files 2000 --mib 100 --seed 1      a web build: log-normal sizes, nested folders
  corpus.py change SRC DST --percent 1 --seed 2           a copy of SRC with N% of its files rewritten
  corpus.py tiny DIR --files 20000 --seed 3               many small files (for 20,000-entry tables)

Sizes follow a log-normal distribution like a real web build (many small scripts and styles, a few
large images and bundles), scaled so the total is the requested size. Content is pseudo-random, so
neither compression nor deduplication flatters any tool.
"""
import argparse
import math
import os
import random
import shutil

EXTS = [("js", 30), ("css", 10), ("png", 20), ("jpg", 10), ("html", 5), ("json", 5), ("woff2", 5), ("svg", 10), ("webp", 5)]


def pick_ext(rng):
    total = sum(w for _, w in EXTS)
    r = rng.uniform(0, total)
    for ext, w in EXTS:
        r -= w
        if r <= 0:
            return ext
    return EXTS[-1][0]


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def site(args):
    rng = random.Random(args.seed)
    target = args.mib * 1024 * 1024
    raw = [min(rng.lognormvariate(10.0, 1.1), 8 * 1024 * 1024) for _ in range(args.files)]
    scale = target / sum(raw)
    sizes = [max(64, int(s * scale)) for s in raw]
    for i, size in enumerate(sizes):
        depth = rng.randint(0, 3)
        folders = "/".join(f"d{rng.randint(0, 12)}" for _ in range(depth))
        name = f"f{i:05d}.{pick_ext(rng)}"
        rel = f"assets/{folders}/{name}" if folders else f"assets/{name}"
        write(os.path.join(args.dir, rel), rng.randbytes(size))
    write(os.path.join(args.dir, "index.html"), b"<!doctype html><title>bench</title>\n")
    # Fixed files for the serving benchmark (B5): a small stylesheet and a 1 MiB bundle.
    write(os.path.join(args.dir, "bench/small.css"), (b"body{margin:0;padding:0}\n" * 80)[:2048])
    write(os.path.join(args.dir, "bench/one-mib.js"), rng.randbytes(1024 * 1024))


def change(args):
    rng = random.Random(args.seed)
    if os.path.exists(args.dst):
        shutil.rmtree(args.dst)
    shutil.copytree(args.src, args.dst, symlinks=False)
    files = []
    for root, _, names in os.walk(args.dst):
        for n in names:
            if n.startswith(".") or n in ("Routes.json", "Routes.json.sig"):
                continue
            files.append(os.path.join(root, n))
    files.sort()
    count = max(1, math.ceil(len(files) * args.percent / 100))
    changed = 0
    for path in rng.sample(files, count):
        size = os.path.getsize(path)
        write(path, rng.randbytes(size))
        changed += size
    print(f"{count} {changed}")


def tiny(args):
    rng = random.Random(args.seed)
    for i in range(args.files):
        write(os.path.join(args.dir, f"t/d{i % 100}/f{i:05d}.js"), rng.randbytes(rng.randint(40, 400)))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("site"); s.add_argument("dir"); s.add_argument("--files", type=int, default=2000)
    s.add_argument("--mib", type=int, default=100); s.add_argument("--seed", type=int, default=1)
    c = sub.add_parser("change"); c.add_argument("src"); c.add_argument("dst")
    c.add_argument("--percent", type=float, default=1); c.add_argument("--seed", type=int, default=2)
    t = sub.add_parser("tiny"); t.add_argument("dir"); t.add_argument("--files", type=int, default=20000)
    t.add_argument("--seed", type=int, default=3)
    args = p.parse_args()
    {"site": site, "change": change, "tiny": tiny}[args.cmd](args)


if __name__ == "__main__":
    main()
