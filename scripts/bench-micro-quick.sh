#!/usr/bin/env bash
# The micro figures that differed from lmbench3, re-measured side by side: sig_install, fork,
# select over 10 and 500 descriptors, and the copies and reads at 128 KiB and 256 KiB; ROUNDS
# interleaved rounds (ours, then lmbench3's), both pinned to CPU 1, then medians and ratios.
# lmbench3 must be built beforehand (see scripts/lmbench-ref.sh); LMBENCH_BIN points at it.
# Usage: bash scripts/bench-micro-quick.sh [ROUNDS]   (root; about 2 min for 3 rounds)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
L="${LMBENCH_BIN:-/tmp/lmbench-src/bin/x86_64-linux-gnu}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT INT TERM
cargo build --release --quiet
R=./target/release/racehorse
ours() { # bench [-o opts...]: lmbench's figure of one cell
  local b="$1"; shift
  $R --db "$tmp/m.db" run micro -o "bench=$b" "$@" --quiet --label x >/dev/null 2>&1
  $R --db "$tmp/m.db" export x --format json | python3 -c '
import json, sys
e = json.load(sys.stdin)["cells"][0]["extra"]
print(e.get("latency_us", e.get("mb_per_s")))'
  rm -f "$tmp/m.db"
}
lm() { taskset -c 1 "$L/$1" "${@:2}" 2>&1; }
for r in $(seq "$rounds"); do
  echo "ours sig_install $(ours sig_install)"
  echo "lm sig_install $(lm lat_sig -P 1 install | awk '{print $(NF-1)}')"
  echo "ours fork $(ours fork)"
  echo "lm fork $(lm lat_proc -P 1 fork | awk '{print $(NF-1)}')"
  for n in 10 500; do for k in file tcp; do
    echo "ours select_${k}_$n $(ours "select_$k" -o "fds=$n")"
    echo "lm select_${k}_$n $(lm lat_select -n "$n" -P 1 "$k" | awk '{print $(NF-1)}')"
  done; done
  for op in cp bcopy rd; do for s in 128k 256k; do
    echo "ours bw_${op}_$s $(ours "bw_$op" -o level=size -o "size=$s")"
    echo "lm bw_${op}_$s $(lm bw_mem -P 1 "$s" "$op" | awk '{print $2}')"
  done; done
done >"$tmp/all.txt"
python3 - "$tmp/all.txt" <<'PY'
import collections, statistics as st, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    who, name, value = line.split()
    d[(who, name)].append(float(value))
print(f"{'benchmark':<18} {'racehorse':>11} {'lmbench3':>11} {'ratio':>7}")
for name in dict.fromkeys(n for _, n in d):
    a, b = st.median(d[("ours", name)]), st.median(d[("lm", name)])
    print(f"{name:<18} {a:>11.4g} {b:>11.4g} {a / b:>7.3f}")
PY
