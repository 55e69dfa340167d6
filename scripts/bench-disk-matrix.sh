#!/usr/bin/env bash
# diskio against fio 3.x, side by side in one racehorse run per target: every block size,
# direction, queue depth and cache mode, on a file in the working filesystem and on a block
# device (a loop device with direct I/O over an image on that filesystem), both tools
# alternating within each round. Prints one row per configuration: median IOPS and CPU per
# I/O of each tool over the rounds, their ratios, the rounds' spread, and a verdict from
# `racehorse compare RUN --by workload=fio` (Welch intervals; Benjamini-Hochberg over all
# rows and both metrics): behind, level or ahead.
#
# Root only (losetup, cache drops). Usage:
#   bash scripts/bench-disk-matrix.sh [ROUNDS]                      the whole matrix (hours)
#   BS="4k" PHASES="randread randwrite" QDS="32" MODES="direct" TARGETS="file" \
#     bash scripts/bench-disk-matrix.sh 3                           a slice of it
#   ROWS="read:64k:4:direct randwrite:16k:32:cached" bash scripts/bench-disk-matrix.sh 5
#                                                                   chosen rows only
# Environment: BS (4k 16k 64k 1m), PHASES (read write randread randwrite), QDS (1 4 32),
# MODES (direct cached), ROWS (PHASE:BS:QD:MODE ..., instead of the four lists),
# TARGETS (file device), SIZE (1g), WINDOW (3s; use 6s for buffered rows, whose writeback
# cycles every 5 s, and 14s for 1m direct rows, where diskio's CPU per window is too few clock
# ticks to resolve in less: such rows say "n/a (CPU below resolution ...)"), WARMUP (1s),
# DIR (the working filesystem's directory for files and the image; default /var/tmp),
# FIO_IOMEM_ALIGN (e.g. 4k: fio's buffers start on a page boundary, as diskio's do; unset
# keeps fio's default, unaligned for buffered I/O),
# PIN (a CPU list for taskset, e.g. 1: racehorse, diskio's workers and fio all run there, so
# the scheduler cannot place the two tools differently; unset leaves placement to it),
# KEEP (set: keep the run's store and JSON exports, for a second look at the cells).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
bs_list="${BS:-4k 16k 64k 1m}"
phases="${PHASES:-read write randread randwrite}"
qds="${QDS:-1 4 32}"
modes="${MODES:-direct cached}"
targets="${TARGETS:-file device}"
size="${SIZE:-1g}"
work="$(mktemp -d "${DIR:-/var/tmp}/rh-disk-matrix.XXXXXX")"
dev=""
cleanup() {
  [ -n "$dev" ] && losetup -d "$dev" 2>/dev/null || true
  if [ -n "${KEEP:-}" ]; then
    rm -rf "$work/files" "$work/disk.img"
    echo "kept the store and exports in $work" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT INT TERM

# One suite: for every configuration a diskio workload then a fio workload with the same
# options; `reps` rounds, each running every workload in order (so the tools alternate).
write_suite() { # $1 = target (directory or device), $2 = suite file
  {
    printf 'name = "diskio vs fio matrix on %s"\nruntime = "%s"\nwarmup = "%s"\nreps = %s\n' \
      "$1" "${WINDOW:-3s}" "${WARMUP:-1s}" "$rounds"
    for row in $(rows); do
      IFS=: read -r phase bs qd mode <<<"$row"
      direct=false
      [ "$mode" = direct ] && direct=true
      for tool in diskio fio; do
        printf '\n[[workload]]\nengine = "%s"\nphase = "%s"\nbs = "%s"\nsize = "%s"\n' "$tool" "$phase" "$bs" "$size"
        printf 'direct = %s\ntimed = true\nioengine = "io_uring"\niodepth = %s\ntarget = "%s"\n' "$direct" "$qd" "$1"
        if [ -b "$1" ]; then printf 'destructive = true\n'; fi
        if [ "$tool" = fio ] && [ -n "${FIO_IOMEM_ALIGN:-}" ]; then
          printf 'iomem_align = "%s"\n' "$FIO_IOMEM_ALIGN"
        fi
      done
    done
  } >"$2"
}

# The configurations as PHASE:BS:QD:MODE words: ROWS when given, else the cross product.
rows() {
  if [ -n "${ROWS:-}" ]; then
    for row in $ROWS; do
      case "$row" in
        *:*:*:direct | *:*:*:cached) echo "$row" ;;
        *) echo "bad row '$row' in ROWS (want PHASE:BS:QD:direct|cached)" >&2; exit 2 ;;
      esac
    done
    return
  fi
  for bs in $bs_list; do for phase in $phases; do for qd in $qds; do for mode in $modes; do
    echo "$phase:$bs:$qd:$mode"
  done; done; done; done
}

summarize() { # $1 = exported JSON, $2 = `racehorse compare --by workload=fio` JSON
  python3 - "$1" "$2" <<'EOF'
import json, statistics, sys
cells = json.load(open(sys.argv[1]))["cells"]
records = json.load(open(sys.argv[2]))["records"]
def key_of(p):
    return (p["phase"], p["bs"], p["iodepth"], "direct" if p["direct"] else "cached")
rows = {}
for c in cells:
    if c["status"] != "ok" or not c["ops"]:
        continue
    iops = c["ops"] / c["window_s"]
    cpu = c["cpu"]["total_s"] / c["ops"] * 1e6
    rows.setdefault(key_of(c["params"]), {}).setdefault(c["workload"], []).append((iops, cpu, c["quality"]["noisy"]))
# compare's Welch interval and p-value per row and metric (diskio scaled to fio), then
# Benjamini-Hochberg over every row and both metrics, noisy rows included, so that the
# matrix is judged once on this run: "behind" = significantly fewer IOPS or more CPU per I/O.
tests = {(key_of(r["params"]), r["metric"]): r for r in records
         if r["metric"] in ("throughput", "cpu_total_per_unit") and r["p_value"] is not None
         and key_of(r["params"]) in rows}  # not compare's "overall" row of read+write
# metrics compare refused because a cell's figure was below its resolution (too few clock
# ticks of CPU in a short window): such a row gets no verdict and says why.
unresolved = {(key_of(r["params"]), r["metric"]) for r in records if r.get("below_resolution")}
order = sorted(tests, key=lambda k: tests[k]["p_value"])
q, m, run_min = {}, len(order), 1.0
for i, k in reversed(list(enumerate(order))):
    run_min = min(run_min, tests[k]["p_value"] * m / (i + 1))
    q[k] = run_min
def judged(key):
    t, c = tests.get((key, "throughput")), tests.get((key, "cpu_total_per_unit"))
    if t is None or c is None:
        short = [n for n, m2 in (("IOPS", "throughput"), ("CPU", "cpu_total_per_unit"))
                 if (key, m2) in unresolved]
        why = f" ({' and '.join(short)} below resolution: lengthen WINDOW)" if short else ""
        return "n/a" + why, "", ""
    sig = lambda k2: q[(key, k2)] <= 0.05
    worse = (t["ratio"] < 1 and sig("throughput")) or (c["ratio"] > 1 and sig("cpu_total_per_unit"))
    better = (t["ratio"] > 1 and sig("throughput")) or (c["ratio"] < 1 and sig("cpu_total_per_unit"))
    word = "**behind**" if worse else "ahead" if better else "level"
    ci = lambda r, k2: f"{r['ci_lo']:.2f}–{r['ci_hi']:.2f} q={q[(key, k2)]:.2f}"
    return word + (" ?" if t["noisy_window"] else ""), ci(t, "throughput"), ci(c, "cpu_total_per_unit")
print("| phase | bs | QD | mode | diskio IOPS | fio IOPS | IOPS ratio (rounds min–max) | 95% CI, q "
      "| diskio µs CPU/IO | fio µs CPU/IO | CPU ratio (min–max) | 95% CI, q | verdict | noisy cells |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
def kib(b): return f"{b // 1024}k" if b < 1 << 20 else f"{b >> 20}m"
counts = {}
for key in sorted(rows, key=lambda k: (k[1], k[0], k[2], k[3])):
    d, f = rows[key].get("diskio", []), rows[key].get("fio", [])
    if not d or not f:
        print(f"| {key[0]} | {kib(key[1])} | {key[2]} | {key[3]} | missing | | | | | | | | | |")
        continue
    med = lambda xs, i: statistics.median(x[i] for x in xs)
    ratios = [a[0] / b[0] for a, b in zip(d, f)]
    cpu_ratios = [a[1] / b[1] for a, b in zip(d, f)]
    noisy = sum(x[2] for x in d + f)
    verdict, ci_t, ci_c = judged(key)
    counts[verdict.split()[0]] = counts.get(verdict.split()[0], 0) + 1
    print(f"| {key[0]} | {kib(key[1])} | {key[2]} | {key[3]} | {med(d,0):,.0f} | {med(f,0):,.0f} | "
          f"**{med(d,0)/med(f,0):.2f}** ({min(ratios):.2f}–{max(ratios):.2f}) | {ci_t} | {med(d,1):.1f} | "
          f"{med(f,1):.1f} | {med(d,1)/med(f,1):.2f} ({min(cpu_ratios):.2f}–{max(cpu_ratios):.2f}) | {ci_c} | "
          f"{verdict} | {noisy} |")
print()
print("Verdicts (Benjamini-Hochberg over %d tests, q <= 0.05; ? = a noisy round in the row): %s"
      % (m, ", ".join(f"{v} {n}" for v, n in sorted(counts.items()))))
EOF
}

rows >/dev/null # a bad ROWS word exits 2 here, before anything is built or written
if [ -n "${PIN:-}" ] && ! taskset -c "$PIN" true 2>/dev/null; then
  echo "PIN='$PIN' is not a CPU list taskset accepts on this machine (online: $(cat /sys/devices/system/cpu/online))" >&2
  exit 2
fi
cargo build --release --quiet
db="$work/matrix.db"
for target in $targets; do
  case "$target" in
    file) where="$work/files"; mkdir -p "$where" ;;
    device)
      # An image of random bytes behind a loop device with direct I/O (no guest page cache
      # under the device); the whole size written first, so neither tool reads holes.
      dd if=/dev/urandom of="$work/disk.img" bs=1M count=$(( $(numfmt --from=iec "${size^^}") / 1048576 + 64 )) \
        status=none conv=fsync
      dev="$(losetup -f --show --direct-io=on "$work/disk.img")"
      where="$dev" ;;
    *) echo "unknown target '$target' (file or device)" >&2; exit 2 ;;
  esac
  write_suite "$where" "$work/$target.toml"
  echo "== $target: $where, $rounds rounds"
  ${PIN:+taskset -c "$PIN"} ./target/release/racehorse --db "$db" run "$work/$target.toml" --label "matrix-$target" --quiet \
    --dir "$work" --sample-ms 0 >/dev/null
  ./target/release/racehorse --db "$db" export "matrix-$target" --format json -o "$work/$target.json"
  ./target/release/racehorse --db "$db" compare "matrix-$target" --by workload=fio --format json --quiet \
    -o "$work/$target-compare.json"
  summarize "$work/$target.json" "$work/$target-compare.json"
done
