#!/usr/bin/env bash
# `make run`: the built-in default. `cenariusd origin` serves the bundled www/ as a remote,
# and `cenariusd serve` syncs it into a fresh cache and serves the site on loopback.
# Ctrl-C stops both. RUN_SECONDS=N stops them after N seconds (used by CI's smoke run).
# Every release after the first is on trial for CONFIRM_TIMEOUT seconds (default 60): the page
# confirms the generation it loaded, and a release that does not is rolled back by the daemon.
set -euo pipefail
bin=$1 www=$2 demo=$3 origin_port=$4 daemon_port=$5
rm -rf "$demo" && mkdir -p "$demo/preset"
"$bin" routes "$www" --check >/dev/null 2>&1 || "$bin" routes "$www"

"$bin" origin "$www" --port "$origin_port" >"$demo/origin.log" 2>&1 &
origin=$!
daemon=""
cleanup() { [ -n "$daemon" ] && kill "$daemon" 2>/dev/null; kill "$origin" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM
for _ in $(seq 100); do grep -q serving "$demo/origin.log" 2>/dev/null && break; sleep 0.1; done
cat "$demo/origin.log"

"$bin" serve --remote "http://127.0.0.1:$origin_port" --cache "$demo/cache" --preset "$demo/preset" \
  --port "$daemon_port" --interval 10 --start-jitter 0 --confirm-timeout "${CONFIRM_TIMEOUT:-60}" \
  --on-switch 'echo "cenariusd: switched to generation $CENARIUS_GENERATION (from ${CENARIUS_PREVIOUS:-none}, $CENARIUS_REASON)" >&2' &
daemon=$!
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$daemon_port/health" >/dev/null 2>&1 && break; sleep 0.1; done
url="http://127.0.0.1:$daemon_port/index.html"
echo
echo "  The sample site is served by cenariusd at:  $url"
echo "  Status:   curl -s http://127.0.0.1:$daemon_port/_cenarius/status"
echo "  Publish:  edit www/js/app.js, run '$bin routes www', then wait 10 s or"
echo "            curl -X POST http://127.0.0.1:$daemon_port/_cenarius/sync"
echo "            The open page offers the new version; after a reload it confirms it."
echo "  Break it: remove the Cenarius.ready() call from www/js/app.js and publish: nothing confirms"
echo "            the release, and ${CONFIRM_TIMEOUT:-60} s later the daemon rolls it back by itself."
echo "  Events:   curl -N http://127.0.0.1:$daemon_port/_cenarius/events"
echo
curl -fsS -o /dev/null -w "  self-check: GET /index.html -> %{http_code}, %{size_download} bytes\n" "$url"
curl -fsS "http://127.0.0.1:$daemon_port/_cenarius/resolve?uri=js/app.js"
echo
if [ -n "${RUN_SECONDS:-}" ]; then sleep "$RUN_SECONDS"; else wait "$daemon"; fi
