#!/usr/bin/env bash
# oltp against sysbench 1.0.20 side by side in one racehorse run: both drive PostgreSQL
# through `pg = "auto"` (each cell a fresh throw-away cluster from the same binaries and
# settings), read-only and read-write at 8 and 32 threads, sysbench's default 'special'
# distribution pinned for both; then the SQLite backend at 1, 2, 4 and 8 threads.
# Ends with the paired ratios oltp / sysbench per cell (the form of BENCHMARKS.md).
# Usage: bash scripts/bench-oltp.sh [REPS]   (see BENCHMARKS.md); PG_ONLY=1 leaves out SQLite,
# LABEL=NAME stores the run under NAME (default oltp-bench)
set -euo pipefail
cd "$(dirname "$0")/.."
reps="${1:-3}"
work="$(mktemp -d /var/tmp/rh-bench-oltp.XXXXXX)"
chmod 711 "$work" # pg=auto runs the server as user postgres, which must reach the cells' dirs
trap 'rm -rf "$work"' EXIT INT TERM
suite="$work/suite.toml"
cat >"$suite" <<TOML
name = "oltp vs sysbench 1.0.20 on PostgreSQL, SQLite scaling"
runtime = "10s"
warmup = "2s"
reps = $reps

[[workload]]
engine = "oltp"
pg = "auto"
mode = ["read_only", "read_write"]
threads = [8, 32]
tables = 2
table_size = 50000
rand_type = "special"

[[workload]]
engine = "sysbench"
pg = "auto"
mode = ["read_only", "read_write"]
threads = [8, 32]
tables = 2
table_size = 50000
rand_type = "special"

TOML
if [ -z "${PG_ONLY:-}" ]; then
  cat >>"$suite" <<TOML

[[workload]]
engine = "oltp"
mode = ["read_only", "read_write"]
threads = [1, 2, 4, 8]
tables = 2
table_size = 50000
rand_type = "special"
TOML
fi
cargo build --release --quiet
"${CARGO_TARGET_DIR:-target}"/release/racehorse run "$suite" --label "${LABEL:-oltp-bench}" --quiet --no-drop-caches --dir "$work"
"${CARGO_TARGET_DIR:-target}"/release/racehorse show "${LABEL:-oltp-bench}"
# The paired ratios oltp / sysbench: each repetition's oltp cell against the sysbench cell
# of the same repetition (they ran next to each other), and the median over repetitions.
"${CARGO_TARGET_DIR:-target}"/release/racehorse export "${LABEL:-oltp-bench}" --format json >"$work/run.json"
python3 - "$work/run.json" <<'EOF'
import json, statistics, sys
cells = {}
for c in json.load(open(sys.argv[1]))["cells"]:
    p, x = c["params"], c["extra"]
    if p.get("pg") != "auto" or c["status"] != "ok":
        continue
    key = (p["mode"], int(p["threads"]))
    cells.setdefault(key, {}).setdefault(c["workload"], {})[c["rep"]] = (
        c["throughput_per_s"], x.get("client_cpu_us_per_txn"), x.get("server_cpu_us_per_txn"))
print("\npaired ratios oltp / sysbench (median over repetitions, then each repetition)")
for (mode, threads), by in sorted(cells.items()):
    o, s = by.get("oltp", {}), by.get("sysbench", {})
    reps = sorted(set(o) & set(s))
    ratio = lambda i: [o[r][i] / s[r][i] for r in reps if o[r][i] and s[r][i]]
    tx, client, server = ratio(0), ratio(1), ratio(2)
    if not tx:
        continue
    med = lambda v: f"{statistics.median(v):.3f}" if v else "-"
    print(f"{mode:10} {threads:3} threads: tx/s {med(tx)} ({', '.join(f'{v:.2f}' for v in tx)}); "
          f"client CPU/tx {med(client)}; server CPU/tx {med(server)}")
EOF
