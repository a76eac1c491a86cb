#!/usr/bin/env bash
# The built-in default: serve the bundled www/ with `cenariusd origin`, then sync a fresh
# cache from it and resolve every uri of the table, printing what happened at each step.
set -euo pipefail
bin=$1 www=$2 demo=$3 port=$4
rm -rf "$demo" && mkdir -p "$demo"
cp -r "$www" "$demo/remote"
"$bin" routes "$demo/remote" >/dev/null

"$bin" origin "$demo/remote" --port "$port" >"$demo/origin.log" 2>&1 &
origin=$!
trap 'kill $origin 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q serving "$demo/origin.log" 2>/dev/null && break; sleep 0.1; done
cat "$demo/origin.log"

common=(--remote "http://127.0.0.1:$port" --cache "$demo/cache" --preset "$demo/preset")
echo "== first sync (empty cache, no preset): everything is downloaded"
"$bin" sync "${common[@]}"
echo "== second sync: the table is fetched with If-None-Match and the origin answers 304"
"$bin" sync "${common[@]}"
echo "== resolve every uri of the table"
sed -n 's/.*"uri": "\([^"]*\)".*/\1/p' "$demo/remote/Routes.json" | while read -r uri; do
  "$bin" resolve "$uri" --json "${common[@]}"
done
echo "== publish a change: edit js/app.js on the remote, regenerate its Routes.json, sync again"
sed -i 's/var release = "[^"]*"/var release = "1.0.1"/' "$demo/remote/js/app.js"
"$bin" routes "$demo/remote"
"$bin" sync "${common[@]}"
"$bin" resolve js/app.js "${common[@]}" | xargs grep -H 'var release'
echo "== verify and status"
"$bin" verify "${common[@]}"
"$bin" status "${common[@]}"
