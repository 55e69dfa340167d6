#!/usr/bin/env bash
# net against uperf (request/response) and iperf3 (stream write) on loopback, side by side:
# each repetition runs every configuration with both tools in turn, so load from elsewhere
# hits both alike. Prints the medians and the ratios racehorse / reference.
#
# uperf is built from source outside the repo (not packaged in Debian), e.g.:
#   git clone https://github.com/uperf/uperf /tmp/uperf-src && cd /tmp/uperf-src &&
#   autoreconf -fi && ./configure --disable-sctp --disable-ssl && make
# iperf3: apt-get install iperf3.
# Usage: bash scripts/bench-net.sh [REPS]   (env: RUNTIME seconds [10], UPERF path)
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-5}"
runtime="${RUNTIME:-10}"
uperf="${UPERF:-/tmp/uperf-src/src/uperf}"
[ -x "$uperf" ] || { echo "uperf not found at $uperf (see the header of this script)" >&2; exit 2; }
command -v iperf3 >/dev/null || { echo "iperf3 is not installed (apt-get install iperf3)" >&2; exit 2; }
work="$(mktemp -d /tmp/rh-bench-net.XXXXXX)"
slave=""
cleanup() {
  [ -n "$slave" ] && kill -- "-$slave" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
cargo build --release --quiet
rh="$PWD/${CARGO_TARGET_DIR:-target}/release/racehorse"
[ -x "$rh" ] || rh="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/racehorse"
db="$work/rh.db"
results="$work/results.txt"

cat >"$work/rr.xml" <<'EOF'
<?xml version="1.0"?>
<profile name="rr1c">
  <group nthreads="$nthr">
    <transaction iterations="1">
      <flowop type="connect" options="remotehost=127.0.0.1 protocol=tcp tcp_nodelay"/>
    </transaction>
    <transaction duration="$dur">
      <flowop type="write" options="size=$req"/>
      <flowop type="read" options="size=$resp"/>
    </transaction>
    <transaction iterations="1">
      <flowop type="disconnect"/>
    </transaction>
  </group>
</profile>
EOF

# CPU seconds (user+system, reaped children included) of every process in session $1.
session_cpu() {
  python3 - "$1" <<'EOF'
import os, sys
sid, hz, total = int(sys.argv[1]), os.sysconf("SC_CLK_TCK"), 0
for p in os.listdir("/proc"):
    if not p.isdigit():
        continue
    try:
        f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        continue
    if int(f[3]) == sid:
        total += sum(int(x) for x in f[11:15])
print(total / hz)
EOF
}

# uperf rr: tx/s and CPU µs per tx of master + slave. uperf's Txn op/s counts flowops (a
# write and a read per transaction), so tx/s = op/s / 2.
uperf_rr() { # conns req resp
  local port=$((20000 + RANDOM % 20000))
  setsid "$uperf" -s -P "$port" >"$work/slave.log" 2>&1 &
  slave=$!
  sleep 0.5
  local c0; c0="$(session_cpu "$slave")"
  nthr=$1 req=$2 resp=$3 dur="${runtime}s" /usr/bin/time -f "MASTER %U %S" -o "$work/time.txt" \
    "$uperf" -m "$work/rr.xml" -P "$port" >"$work/master.log" 2>&1 || true
  local c1; c1="$(session_cpu "$slave")"
  kill -- "-$slave" 2>/dev/null || true
  wait "$slave" 2>/dev/null || true
  slave=""
  python3 - "$work/master.log" "$work/time.txt" "$c0" "$c1" "$1" <<'EOF'
import re, sys
log = open(sys.argv[1], errors="replace").read().replace("\r", "\n")
m = re.findall(r"Txn2\s+\S+\s*/\s*([\d.]+)\(s\)\s*=\s*\S+\s+(\d+)op/s", log)
if not m:
    print("uperf-failed"); sys.exit()
secs, opps = float(m[-1][0]), float(m[-1][1])
tx_s = opps / 2
u, s = open(sys.argv[2]).read().split("MASTER")[1].split()[:2]
master, slave = float(u) + float(s), float(sys.argv[4]) - float(sys.argv[3])
tx = tx_s * secs
print(f"uperf rr1x1 conns={sys.argv[5]} tx_s={tx_s:.0f} cpu_us_per_tx={(master + slave) * 1e6 / tx:.2f} "
      f"master_us={master * 1e6 / tx:.2f} slave_us={slave * 1e6 / tx:.2f}")
EOF
}

# The figures of one exported racehorse cell.
cat >"$work/cell.py" <<'EOF'
import json, sys
c = json.load(sys.stdin)["cells"][0]
x, lat = c["extra"], c.get("latencies", [])
p99 = lat[0]["p99_ns"] / 1e3 if lat else 0
cpu = x.get("client_cpu_us_per_tx", 0) + x.get("peer_cpu_us_per_tx", 0)
mbs = (c["bytes_read"] + c["bytes_written"]) / c["window_s"] / 1e6
cpu_mb = x.get("client_cpu_us_per_mb", 0) + x.get("peer_cpu_us_per_mb", 0)
print(f"{sys.argv[1]} {sys.argv[2]} tx_s={c['throughput_per_s']:.0f} cpu_us_per_tx={cpu:.2f} "
      f"client_us={x.get('client_cpu_us_per_tx', 0):.2f} peer_us={x.get('peer_cpu_us_per_tx', 0):.2f} "
      f"p99_us={p99:.1f} mb_s={mbs:.1f} cpu_us_per_mb={cpu_mb:.1f}")
EOF

# One racehorse cell; prints its figures from the JSON export.
ours() { # label engine opts...
  local label=$1 engine=$2
  shift 2
  local try
  for try in 1 2 3; do
    if "$rh" --db "$db" run "$engine" --label "$label" --runtime "${runtime}s" --warmup 2s --quiet --no-drop-caches \
      "$@" >/dev/null 2>"$work/err.txt"; then
      break
    fi
    echo "$label failed (try $try): $(tail -1 "$work/err.txt")" >&2
    # Another racehorse on this machine holds the guard's state file: wait for it.
    grep -q "restore state file" "$work/err.txt" && [ "$try" -lt 3 ] || return 0
    sleep 10
  done
  "$rh" --db "$db" export "$label" --format json | python3 "$work/cell.py" "$engine" "$label"
}

for rep in $(seq "$reps"); do
  for conns in 1 10; do
    ours "rr-$conns-$rep" net -o mode=rr -o request=1 -o response=1 -o "connections=$conns" | sed "s/^net /net rr1x1 conns=$conns rep=$rep /" | tee -a "$results"
    uperf_rr "$conns" 1 1 | sed "s/^uperf rr1x1 conns=$conns /&rep=$rep /" | tee -a "$results"
  done
  ours "sw-$rep" net -o mode=stream-write -o request=1 -o response=1 -o connections=1 | sed "s/^net /net stream-write rep=$rep /" | tee -a "$results"
  ours "sw3-$rep" iperf3 -o mode=stream-write -o request=1 -o response=1 -o connections=1 | sed "s/^iperf3 /iperf3 stream-write rep=$rep /" | tee -a "$results"
done
# 250 connections on this machine: ours and uperf once each, for tx/s and p99.
ours "rr-250" net -o mode=rr -o request=1 -o response=1 -o connections=250 | sed 's/^net /net rr1x1 conns=250 rep=1 /' | tee -a "$results"
uperf_rr 250 1 1 | sed 's/^uperf rr1x1 conns=250 /&rep=1 /' | tee -a "$results"

python3 - "$results" <<'EOF'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    w = line.split()
    if len(w) < 3 or "=" not in w[-1]:
        continue
    key = (w[0], w[1], w[2] if w[2].startswith("conns=") else "")
    vals = dict(x.split("=") for x in w if "=" in x and not x.startswith(("conns=", "rep=")))
    rep = next(int(x[4:]) for x in w if x.startswith("rep="))
    for k, v in vals.items():
        rows.setdefault(key, {}).setdefault(k, {})[rep] = float(v)
med = {k: {m: statistics.median(v.values()) for m, v in d.items()} for k, d in rows.items()}
def show(a, b, metric):
    if a in med and b in med and med[b].get(metric):
        # Repetition k of one tool ran right next to repetition k of the other.
        ra, rb = rows[a][metric], rows[b][metric]
        pairs = [ra[r] / rb[r] for r in sorted(ra) if rb.get(r)]
        each = " ".join(f"{r:.2f}" for r in pairs)
        return (f"{med[a][metric]:.4g} / {med[b][metric]:.4g} = {med[a][metric] / med[b][metric]:.3f} "
                f"(per repetition: {each})")
    return "n/a"
print("\nmedians (racehorse / reference = ratio), n =", {k: len(next(iter(d.values()))) for k, d in rows.items()})
for conns in ("conns=1", "conns=10", "conns=250"):
    a, b = ("net", "rr1x1", conns), ("uperf", "rr1x1", conns)
    print(f"rr 1x1 {conns:>9}: tx/s {show(a, b, 'tx_s')}; CPU us/tx {show(a, b, 'cpu_us_per_tx')}")
    if a in med:
        print(f"                   ours: client {med[a]['client_us']:.2f} + peer {med[a]['peer_us']:.2f} us/tx, p99 {med[a]['p99_us']:.1f} us")
a, b = ("net", "stream-write", ""), ("iperf3", "stream-write", "")
print(f"stream-write 30k, 1 conn: MB/s {show(a, b, 'mb_s')}; CPU us/MB {show(a, b, 'cpu_us_per_mb')}")
EOF
