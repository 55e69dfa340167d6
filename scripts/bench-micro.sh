#!/usr/bin/env bash
# racehorse's micro engine beside lmbench3 on this machine, ROUNDS times in turn (ours,
# then lmbench's), both pinned to CPU 1, then the median of each figure and the ratio.
# lmbench3 must be built from source beforehand in a temporary folder (see the header of
# scripts/lmbench-ref.sh); LMBENCH_BIN points at its binaries.
# Usage: bash scripts/bench-micro.sh [ROUNDS]   (root; see BENCHMARKS.md, about 10 min)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-2}"
sizes="16k 128k 256k 4m 64m"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT INT TERM
lat='"null", "read", "write", "stat", "fstat", "open_close", "sig_install", "sig_catch", "prot_fault",
  "fork", "fork_exec", "fork_sh", "pipe", "ctx", "mmap"'
bw='"bw_rd", "bw_wr", "bw_rdwr", "bw_cp", "bw_frd", "bw_fwr", "bw_fcp", "bw_bzero", "bw_bcopy",
  "file_rd", "file_rd_o2c", "mmap_rd", "mmap_rd_o2c"'
cat >"$tmp/micro.toml" <<TOML
name = "micro-vs-lmbench"
reps = 1
drop_caches = false

[[workload]]
engine = "micro"
bench = [$lat]

[[workload]]
engine = "micro"
bench = ["select_file", "select_tcp"]
fds = [10, 100, 250, 500]

[[workload]]
engine = "micro"
bench = [$bw]
level = "size"
size = ["16k", "128k", "256k", "4m", "64m"]

[[workload]]
engine = "micro"
bench = ["chase", "chase_rand"]
level = "size"
size = ["16k", "128k", "256k", "4m", "64m"]
TOML
cargo build --release --quiet
for r in $(seq "$rounds"); do
  echo "round $r: racehorse" >&2
  ./target/release/racehorse --db "$tmp/m.db" run "$tmp/micro.toml" --label "r$r" --quiet --dir "$tmp" >/dev/null
  ./target/release/racehorse --db "$tmp/m.db" export "r$r" --format json >"$tmp/ours-$r.json"
  echo "round $r: lmbench3" >&2
  SIZES="$sizes" LAT_MB=64 bash scripts/lmbench-ref.sh >"$tmp/ref-$r.txt" 2>"$tmp/ref-$r.log" || true
done
python3 - "$tmp" "$rounds" <<'PY'
import json, statistics as st, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])
def name(c):
    p, e = c["params"], c["extra"]
    b = p["bench"]
    size = {16384: "16k", 131072: "128k", 262144: "256k", 4194304: "4m", 67108864: "64m"}.get(p.get("size"), "")
    if b.startswith("select"): return f"{b}_{p['fds']}", e["latency_us"]
    if b == "ctx": return "ctx_2p_0k", e["latency_us"]
    if b == "mmap": return "mmap_4m", e["latency_us"]
    if "latency_us" in e: return b, e["latency_us"]
    if b.startswith("chase"):
        kib = p["size"] // 1024
        return (f"chase_64_{kib}k" if b == "chase" else f"chase_rand_{kib}k"), e["latency_ns"]
    return f"{b}_{size}", e["mb_per_s"]
ours, ref = {}, {}
for r in range(1, rounds + 1):
    for c in json.load(open(f"{tmp}/ours-{r}.json"))["cells"]:
        if c["status"] == "ok":
            k, v = name(c); ours.setdefault(k, []).append(v)
    for line in open(f"{tmp}/ref-{r}.txt"):
        k, v, _ = line.rstrip("\n").split("\t"); ref.setdefault(k, []).append(float(v))
print(f"{'benchmark':<22} {'racehorse':>11} {'lmbench3':>11} {'ratio':>7}")
for k in ours:
    if k in ref:
        a, b = st.median(ours[k]), st.median(ref[k])
        print(f"{k:<22} {a:>11.4g} {b:>11.4g} {a / b if b else float('nan'):>7.3f}")
PY
