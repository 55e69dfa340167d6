#!/usr/bin/env bash
# History's detector side by side with Apache Otava 0.8.0 on the same synthetic CSV series
# (docs/history.md; BENCHMARKS.md "History"). Writes 2,800 seeded series with
# crates/report/examples/history_bench.rs (2,000 null series of 20-200 runs; 1-10% steps at two
# noise levels; variance changes, spikes, drift), runs `racehorse history --csv` on each (the CPU
# time of every process is counted), installs Otava from PyPI into a throw-away virtual
# environment (never a project dependency) and runs it on the run means at its default p 0.001
# and at OTAVA_P (default 0.0005, the setting that matched racehorse's false-alarm rate on these
# series), then scores them: false alarms per series, recall/precision/F1 within ±1 run,
# location error, and the CPU time of the detection alone (racehorse's in process, as Otava's
# is measured; the CPU time of the `racehorse history --csv` processes is listed too).
# Then the speed figures: history of one point over 1,000 runs from SQLite, and detection over
# 10,000 series of 200 runs on one CPU.
# Usage: bash scripts/bench-history.sh [OUT_DIR]   (about 20 minutes on 2 CPUs, most of it Otava)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d /tmp/rh-history-bench.XXXXXX)}
seed=${SEED:-1}
otava_p=${OTAVA_P:-0.0005}
mkdir -p "$out"
cargo build --release --quiet
cargo build --release --quiet -p racehorse-report --example history_bench
bin=target/release/racehorse
ex=target/release/examples/history_bench
"$ex" csv "$out/series" "$seed"
python3 scripts/bench_history.py racehorse "$out/series" "$bin" "$out/racehorse.json"
"$ex" eval "$out/series" "$out/racehorse-inproc.json"
if [ ! -x "$out/venv/bin/python" ]; then
  python3 -m venv "$out/venv"
  "$out/venv/bin/pip" install --quiet apache-otava==0.8.0
fi
"$out/venv/bin/python" scripts/bench_history.py otava "$out/series" 0.001 "$out/otava-default.json"
"$out/venv/bin/python" scripts/bench_history.py otava "$out/series" "$otava_p" "$out/otava-matched.json"
python3 scripts/bench_history.py score "$out/series" "$out/racehorse-inproc.json" "$out/racehorse.json" \
  "$out/otava-default.json" "$out/otava-matched.json" | tee "$out/score.md"
echo
echo "### Speed"
echo
"$ex" store "$out/runs1000.db" 1000 >/dev/null
TIMEFORMAT=%R
echo "history of one point over 1,000 runs (SQLite), wall seconds of 5 tries:"
for _ in 1 2 3 4 5; do
  { time "$bin" --db "$out/runs1000.db" history fileserver --figure throughput --no-ledger >/dev/null; } 2>&1
done
taskset -c 0 "$ex" speed 10000 200
echo "outputs in $out"
