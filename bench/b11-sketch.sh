#!/bin/bash
# A first sketch towards B11 (issue 56, docs/peers.md "Measured"), not part of bench/run: an origin
# (`cenariusd origin`) in one network namespace behind a 20 Mbit/s tbf both ways, N devices as processes
# in another; one device alone, N at once without peers, then one device and N-1 at once from it.
# Root and ip netns needed. Usage: N=8 B=.build/debug/cenariusd bench/b11-sketch.sh
set -u
B=$(realpath ${B:-.build/debug/cenariusd})
T=$(printf '%04x' $RANDOM)
O=cb11o$T; L=cb11l$T
N=${N:-4}
W=$(mktemp -d); rm -rf $W; mkdir -p $W/site
cleanup() { kill $(cat $W/pids 2>/dev/null) 2>/dev/null; ip netns del $O 2>/dev/null; ip netns del $L 2>/dev/null; rm -rf $W; }
trap cleanup EXIT
python3 - <<PY
import os, random
r = random.Random(5)
for i in range(40):
    os.makedirs("$W/site/assets", exist_ok=True)
    open(f"$W/site/assets/f{i}.bin", "wb").write(bytes(r.getrandbits(8) for _ in range(60000)))
open("$W/site/index.html", "w").write("<h1>b11</h1>")
PY
$B routes $W/site --compress >/dev/null
ip netns add $O; ip netns add $L
ip link add cb${T}o type veth peer name cb${T}l
ip link set cb${T}o netns $O; ip link set cb${T}l netns $L
ip -n $O addr add 10.91.0.1/24 dev cb${T}o; ip -n $L addr add 10.91.0.2/24 dev cb${T}l
ip -n $O link set cb${T}o up; ip -n $L link set cb${T}l up; ip -n $O link set lo up; ip -n $L link set lo up
ip netns exec $O tc qdisc add dev cb${T}o root tbf rate 20mbit burst 32kbit latency 400ms
ip netns exec $L tc qdisc add dev cb${T}l root tbf rate 20mbit burst 32kbit latency 400ms
ip netns exec $O $B origin $W/site --port 8801 --bind 0.0.0.0 >/dev/null 2>&1 & echo $! >> $W/pids
sleep 1
R=http://10.91.0.1:8801
dev() { echo "--remote $R --cache $W/d$1/cache --preset $W/d$1/preset"; }
t() { date +%s.%N; }
echo "site: $(du -sb $W/site | cut -f1) bytes, $N devices"
# 1. one device alone
s=$(t); ip netns exec $L $B sync --json $(dev solo) | python3 -c "import json,sys; j=json.load(sys.stdin); print('alone: origin', j['bytesFromOrigin'])"; e=$(t); echo "alone: $(echo "$e - $s" | bc) s"
# 2. N devices at once, no peers
s=$(t); P=""; for i in $(seq 1 $N); do ip netns exec $L $B sync --json $(dev n$i) > $W/n$i.json & P="$P $!"; done; wait $P; e=$(t)
echo "no peers, $N at once: $(echo "$e - $s" | bc) s, origin $(cat $W/n*.json | python3 -c "import json,sys; print(sum(json.loads(l)['bytesFromOrigin'] for l in sys.stdin))") bytes"
# 3. device p1 first, serving; then N-1 at once with --peer
ip netns exec $L $B sync --json $(dev p1) > /dev/null
ip netns exec $L $B serve --port 0 --start-jitter 0 --peer-listen 10.91.0.2:8701 $(dev p1) >/dev/null 2>&1 & echo $! >> $W/pids
sleep 1.5
s=$(t); P=""; for i in $(seq 2 $N); do ip netns exec $L $B sync --json --peer http://10.91.0.2:8701 $(dev p$i) > $W/p$i.json & P="$P $!"; done; wait $P; e=$(t)
echo "peers, $((N-1)) at once after one: $(echo "$e - $s" | bc) s, origin $(cat $W/p[2-9]*.json | python3 -c "import json,sys; print(sum(json.loads(l)['bytesFromOrigin'] for l in sys.stdin))") bytes, peers $(cat $W/p[2-9]*.json | python3 -c "import json,sys; print(sum(json.loads(l)['bytesFromPeers'] for l in sys.stdin))") bytes"
