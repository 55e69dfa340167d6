#!/usr/bin/env bash
# Seed 002's decimal floating-point study on this machine: telco in its three arithmetic
# forms (Rust exact decimal, C _Decimal64 through the compiler's decimal library, C binary
# double rounded at each step), interleaved within each repetition, with gcc at -O2.
# Prints time per batch of 10^6 calls, CPU per call, the cells' noise, and the paired ratio
# of each form to rust-decimal (median and range over repetitions).
# Usage: bash scripts/bench-decimal.sh [REPS]   (default 5; needs a release build and gcc)
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-5}"
bin="${RACEHORSE_BIN:-${CARGO_TARGET_DIR:-target}/release/racehorse}"
[ -x "$bin" ] || { echo "no racehorse at $bin: cargo build --release, or set RACEHORSE_BIN" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT INT TERM
"$bin" --db "$tmp/rh.db" run compute -o case=telco -o arith=rust-decimal,c-decimal64,c-double \
  --cc gcc --reps "$reps" --quiet --no-drop-caches --label decimal >/dev/null
"$bin" --db "$tmp/rh.db" export decimal --format json >"$tmp/d.json"
python3 - "$tmp/d.json" <<'PY'
import json, statistics, sys
cells = [c for c in json.load(open(sys.argv[1]))["cells"] if c["status"] == "ok"]
by = {}
for c in cells:
    by.setdefault(c["params"]["arith"], {})[c["rep"]] = c
print("| arith | n | time per batch of 10^6 calls (median) | CPU per call (median) | noisy reps | paired ratio to rust-decimal: median (range) |")
print("|---|---|---|---|---|---|")
base = by.get("rust-decimal", {})
for form in ["rust-decimal", "c-decimal64", "c-double"]:
    reps = by.get(form, {})
    if not reps:
        continue
    t = statistics.median(c["extra"]["batch_s"] for c in reps.values()) * 1e3
    cpu = statistics.median(c["extra"]["cpu_ns_per_call"] for c in reps.values())
    noisy = sum(1 for c in reps.values() if c["quality"]["noisy"])
    ratios = [reps[r]["extra"]["batch_s"] / base[r]["extra"]["batch_s"] for r in reps if r in base]
    rr = f"{statistics.median(ratios):.3f} ({min(ratios):.2f}-{max(ratios):.2f})" if ratios else "-"
    print(f"| {form} | {len(reps)} | {t:.1f} ms | {cpu:.0f} ns | {noisy} | {rr} |")
PY
