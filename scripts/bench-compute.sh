#!/usr/bin/env bash
# The compute suite on this machine: per-case times (medians of REPS runs, each case in its
# own pinned process) and their coefficient of variation, in the quick and standard sizes;
# then the integer cases as Rust, as C built with gcc -O2 and with gcc -O3 -march=native,
# in one run (the three interleaved per repetition), with the C/Rust time ratios.
# Usage: bash scripts/bench-compute.sh [REPS] [SIZES]
#   REPS (default 5); SIZES "quick standard" (default; standard takes ~16 CPU-minutes per
#   5 reps for Rust and ~50 more for the C comparison); NO_C=1 skips the C comparison
# Needs a release build (cargo build --release) and gcc. Prints Markdown tables.
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-5}"
sizes="${2:-quick standard}"
bin="${RACEHORSE_BIN:-${CARGO_TARGET_DIR:-target}/release/racehorse}"
[ -x "$bin" ] || { echo "no racehorse at $bin: cargo build --release, or set RACEHORSE_BIN" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT INT TERM
db="$tmp/rh.db"
cc="$(command -v gcc || true)"

# Median, CV % of every time_s_<case> extra per workload label of a run (JSON export).
summarise() {
    python3 - "$1" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
groups = {}
for c in d["cells"]:
    if c["status"] != "ok":
        print(f"FAILED cell {c['match_key']}: {c.get('error')}", file=sys.stderr)
        continue
    p = c["params"]
    side = "rust" if not p.get("cc") else f"gcc {p.get('cflags')}"
    if "time_s" in c["extra"]:
        groups.setdefault(p["case"], {}).setdefault(side, []).append(c["extra"]["time_s"])
    for k, v in c["extra"].items():
        if k.startswith("time_s_"):
            groups.setdefault(k[7:], {}).setdefault(side, []).append(v)
        if k.startswith("score_geomean"):
            groups.setdefault(k, {}).setdefault(side, []).append(v)
sides = sorted({s for g in groups.values() for s in g}, key=lambda s: (s != "rust", s))
print("| case | " + " | ".join(f"{s} median s | CV %" for s in sides) + " | n |")
print("|---" * (2 * len(sides) + 2) + "|")
for case, g in groups.items():
    cells = []
    for s in sides:
        v = g.get(s, [])
        if len(v) >= 2:
            cells.append(f"{statistics.median(v):.4g} | {100 * statistics.stdev(v) / statistics.mean(v):.2f}")
        elif v:
            cells.append(f"{v[0]:.4g} | -")
        else:
            cells.append("- | -")
    n = max(len(v) for v in g.values())
    print(f"| {case} | " + " | ".join(cells) + f" | {n} |")
if len(sides) > 1:
    print()
    print("| case | " + " | ".join(f"{s} / rust (time)" for s in sides[1:]) + " |")
    print("|---" * len(sides) + "|")
    for case, g in groups.items():
        if case.startswith("score") or "rust" not in g:
            continue
        r = statistics.median(g["rust"])
        print(f"| {case} | " + " | ".join(f"{statistics.median(g[s]) / r:.3f}" if s in g else "-" for s in sides[1:]) + " |")
PY
}

for size in $sizes; do
    echo "## Rust kernels, size=$size, $reps reps"
    "$bin" --db "$db" run compute -o size="$size" --reps "$reps" --label "rust-$size" --quiet --no-drop-caches >/dev/null ||
        echo "(some cells failed; see below)"
    "$bin" --db "$db" export "rust-$size" --format json >"$tmp/rust-$size.json"
    summarise "$tmp/rust-$size.json"
    echo
done

if [ -n "${NO_C:-}" ]; then
    exit 0
fi
if [ -z "$cc" ]; then
    echo "gcc not found: the C comparison is skipped" >&2
    exit 0
fi
for size in $sizes; do
    cat >"$tmp/c-$size.toml" <<TOML
name = "compute-c-$size"
runtime = "1s"
warmup = "0s"
reps = $reps
drop_caches = false

[[workload]]
engine = "compute"
case = "int"
size = "$size"

[[workload]]
engine = "compute"
case = "int"
size = "$size"
cc = "$cc"
cflags = ["-O2", "-O3 -march=native"]
TOML
    echo "## Rust vs C ($("$cc" --version | head -1)), integer cases, size=$size, $reps reps"
    "$bin" --db "$db" run "$tmp/c-$size.toml" --label "c-$size" --quiet >/dev/null || echo "(some cells failed; see below)"
    "$bin" --db "$db" export "c-$size" --format json >"$tmp/c-$size.json"
    summarise "$tmp/c-$size.json"
    echo
done
