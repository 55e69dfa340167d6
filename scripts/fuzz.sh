#!/usr/bin/env bash
# Runs every fuzz target in fuzz/ for SECONDS each (default 600), PARALLEL targets at a time
# (default 1), keeps and minimises each corpus in fuzz/corpus/TARGET, and prints one line per
# target: runs, seconds, crashes. Exits 1 when any target crashed (its input is then in
# fuzz/artifacts/TARGET/; make it a regression test). Needs the nightly toolchain (the
# machine image has it) and cargo-fuzz (installed from crates.io when missing).
# Usage: bash scripts/fuzz.sh [SECONDS] [PARALLEL] [TARGET...]   e.g. `bash scripts/fuzz.sh 15 2` in CI
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
secs=${1:-600}
parallel=${2:-1}
shift $(( $# < 2 ? $# : 2 ))
if ! rustup toolchain list | grep -q '^nightly'; then
  echo "fuzz: cargo fuzz needs the nightly toolchain (rustup toolchain install nightly)" >&2
  exit 2
fi
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked --quiet
targets=${*:-$(cargo +nightly fuzz list)}
mkdir -p logs
cargo +nightly fuzz build > logs/build.log 2>&1 || { tail -20 logs/build.log >&2; exit 1; }
run_one() {
  local t=$1
  mkdir -p "corpus/$t"
  # -rss_limit_mb guards against runaway inputs; -max_len keeps inputs file-sized.
  if cargo +nightly fuzz run "$t" "corpus/$t" -- -max_total_time="$secs" -max_len=4096 -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 > "logs/$t.log" 2>&1; then
    cargo +nightly fuzz cmin "$t" "corpus/$t" > "logs/$t.cmin.log" 2>&1 || true
  fi
}
active=0
for t in $targets; do
  run_one "$t" &
  active=$((active + 1))
  if [ "$active" -ge "$parallel" ]; then
    wait -n || true
    active=$((active - 1))
  fi
done
wait || true
crashed=0
printf '%-10s %14s %8s %8s %8s\n' target runs seconds corpus crashes
for t in $targets; do
  # The last "Done N runs in S second(s)" line of the target's log.
  done_line=$(grep -a -o 'Done [0-9]* runs in [0-9]* second' "logs/$t.log" | tail -n 1 || true)
  runs=$(echo "$done_line" | awk '{print $2}')
  took=$(echo "$done_line" | awk '{print $5}')
  n=$(find "corpus/$t" -type f | wc -l)
  bad=$(find "artifacts/$t" -type f 2>/dev/null | wc -l)
  if [ "$bad" -gt 0 ]; then crashed=1; fi
  printf '%-10s %14s %8s %8s %8s\n' "$t" "${runs:-?}" "${took:-?}" "$n" "$bad"
done
exit $crashed
