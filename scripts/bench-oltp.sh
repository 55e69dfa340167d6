#!/usr/bin/env bash
# oltp against sysbench 1.0.20 side by side in one racehorse run: both drive PostgreSQL
# through `pg = "auto"` (each cell a fresh throw-away cluster from the same binaries and
# settings), read-only and read-write at 8 and 32 threads, sysbench's default 'special'
# distribution pinned for both; then the SQLite backend at 1, 2, 4 and 8 threads.
# Usage: bash scripts/bench-oltp.sh [REPS]   (see BENCHMARKS.md); PG_ONLY=1 leaves out SQLite
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
