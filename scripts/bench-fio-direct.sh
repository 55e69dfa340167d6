#!/usr/bin/env bash
# diskio against fio run directly, as its users run it, at fio's own defaults: for each row
# (rw:bs:iodepth), alternating in every round, `fio --rw=… --direct=1 --ioengine=io_uring` on a
# new file and `racehorse run diskio -o phase=… -o direct=true -o ioengine=io_uring` at its
# defaults (layout = auto: fio's new, fallocated file), same size, block size, depth, window
# and warm-up, one process each, on a file in DIR (default /var/tmp: the working filesystem).
# Prints per row the median IOPS of each tool, the median of the per-round ratios
# (diskio / fio) with its range, and the median CPU per I/O of each (issue 46; BENCHMARKS.md,
# "diskio vs fio run directly"):
#   fio:         its job's own CPU, (usr_cpu + sys_cpu) % of job_runtime, over its total_ios
#                (read + write), from its JSON output: the I/O process alone, ramp excluded;
#   diskio own:  the workload's own CPU (`workload_cpu.total_s`) over its I/Os: the same scope;
#   diskio total: the whole machine's CPU per I/O over the window (`cpu_per_unit.total_s`),
#                which also counts interrupts and kernel threads working for either tool.
# Usage: bash scripts/bench-fio-direct.sh [ROUNDS]     (default $ROUNDS, else 3)
#   ROUNDS=3 ROWS="randwrite:4k:32 randwrite:16k:4 randwrite:64k:1" SIZE=512m WINDOW=3 WARMUP=1
#   DIR=/var/tmp DIRECT=1 (0: buffered, no --direct)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-${ROUNDS:-3}}
case $rounds in
  '' | *[!0-9]* | 0) echo "bench-fio-direct: ROUNDS '$rounds' must be a whole number >= 1" >&2; exit 2 ;;
esac
rows=${ROWS:-"randwrite:4k:32 randwrite:16k:4 randwrite:64k:1"}
size=${SIZE:-512m}
window=${WINDOW:-3}
warmup=${WARMUP:-1}
direct=${DIRECT:-1}
command -v fio >/dev/null || { echo "bench-fio-direct: fio is not installed (apt-get install fio)" >&2; exit 2; }
work=$(mktemp -d "${DIR:-/var/tmp}/rh-fio-direct.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
cargo build --release --quiet
bin=$PWD/target/release/racehorse
db=$work/runs.db
out=$work/results.tsv
: >"$out"
dflag=(); dopt=false
if [ "$direct" = 1 ]; then dflag=(--direct=1); dopt=true; fi

one_fio() {  # rw bs qd → "IOPS cpu_per_io_us"
  rm -f "$work/fio.dat"
  fio --name=rh --filename="$work/fio.dat" --rw="$1" --bs="$2" --iodepth="$3" --ioengine=io_uring \
    "${dflag[@]}" --size="$size" --time_based --runtime="$window" --ramp_time="$warmup" \
    --output-format=json 2>/dev/null |
    python3 -c '
import json,sys
j=json.load(sys.stdin)["jobs"][0]
ios=j["read"]["total_ios"]+j["write"]["total_ios"]
# usr_cpu and sys_cpu are percent of the job'"'"'s runtime in ms (job_runtime; older fio: per direction).
runtime_ms=j.get("job_runtime") or max(j["read"]["runtime"], j["write"]["runtime"])
cpu_s=(j["usr_cpu"]+j["sys_cpu"])/100*runtime_ms/1000
print(j["read"]["iops"]+j["write"]["iops"], cpu_s/ios*1e6 if ios else float("nan"))'
}

one_diskio() {  # rw bs qd label → "IOPS cpu_per_io_us own_cpu_per_io_us"
  "$bin" --db "$db" -q run diskio --reps 1 --runtime "${window}s" --warmup "${warmup}s" --label "$4" \
    --dir "$work" -o phase="$1" -o bs="$2" -o iodepth="$3" -o ioengine=io_uring -o direct="$dopt" \
    -o size="$size" -o timed=true >/dev/null 2>&1
  "$bin" --db "$db" export "$4" --format json | python3 -c '
import json,sys
c=json.load(sys.stdin)["cells"][0]
cpu=c["cpu_per_unit"]["total_s"]*c["units"]/c["ops"]*1e6 if c["cpu_per_unit"] else float("nan")
w=c.get("workload_cpu") or {}
own=w["total_s"]/c["ops"]*1e6 if w.get("method","none")!="none" and c["ops"] else float("nan")
print(c["ops"]/c["window_s"], cpu, own)'
}

echo "bench-fio-direct: $rounds alternating rounds of: $rows"
uptime
for r in $(seq 1 "$rounds"); do
  for row in $rows; do
    IFS=: read -r rw bs qd <<<"$row"
    # Alternate which tool goes first, so neither always follows the other's writes.
    if [ $((r % 2)) = 1 ]; then
      f=$(one_fio "$rw" "$bs" "$qd"); d=$(one_diskio "$rw" "$bs" "$qd" "r$r-${row//:/-}")
    else
      d=$(one_diskio "$rw" "$bs" "$qd" "r$r-${row//:/-}"); f=$(one_fio "$rw" "$bs" "$qd")
    fi
    printf '%s\t%s\t%s\t%s\n' "$row" "$r" "$f" "$d" >>"$out"
  done
done
uptime
python3 - "$out" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    row, r, f, d = line.rstrip("\n").split("\t")
    fio_iops, fio_cpu = (float(x) for x in f.split())
    iops, cpu, own = (float(x) for x in d.split())
    rows.setdefault(row, []).append(dict(fio=fio_iops, d=iops, fio_cpu=fio_cpu, cpu=cpu, own=own))

def med(v, key):
    xs = [x[key] for x in v if x[key] == x[key]]  # NaN (not measured) left out
    return f"{statistics.median(xs):.1f}" if xs else "-"

print("| rw:bs:QD | fio IOPS (median) | diskio IOPS (median) | ratio, median of rounds (range) "
      "| fio CPU per I/O µs (own) | diskio CPU per I/O µs (own) | diskio CPU per I/O µs (machine) |")
print("|---|---|---|---|---|---|---|")
for row, v in rows.items():
    ratios = [x["d"] / x["fio"] for x in v]
    print(f"| {row} | {statistics.median(x['fio'] for x in v):,.0f} | {statistics.median(x['d'] for x in v):,.0f} | "
          f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) | "
          f"{med(v, 'fio_cpu')} | {med(v, 'own')} | {med(v, 'cpu')} |")
EOF
