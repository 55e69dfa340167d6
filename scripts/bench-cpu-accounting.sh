#!/usr/bin/env bash
# How well /proc/stat's tick-sampled busy time measures CPU on this kernel, against the tasks'
# own run time and against the busy time implied by the precise idle counters.
#
# 1. A C program that spins BUSY µs and sleeps SLEEP µs for 5 s: its own CPU (getrusage),
#    /proc/stat's busy ticks (user+nice+system+irq+softirq) and "precise" busy (wall × CPUs −
#    idle − iowait − steal: on a NO_HZ kernel idle and iowait are kept in nanoseconds, the busy
#    fields are sampled at each tick) over the same 5 s.
# 2. diskio random 4k writes through io_uring, buffered at QD1 and QD32 and direct at QD1,
#    three 5 s windows each: machine CPU per I/O as racehorse stores it (ticks), precise busy
#    per I/O, and the workload's own CPU per I/O (its threads and io_uring workers).
# Usage: bash scripts/bench-cpu-accounting.sh   (about 2 minutes; run it on a quiet machine)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cc >/dev/null || { echo "bench-cpu-accounting: needs a C compiler (cc)" >&2; exit 2; }
work=$(mktemp -d "${DIR:-/var/tmp}/rh-cpu-acct.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
cargo build --release --quiet
bin=$PWD/target/release/racehorse
grep -E "CONFIG_(NO_HZ_IDLE|NO_HZ_FULL|TICK_CPU_ACCOUNTING|VIRT_CPU_ACCOUNTING_GEN|HZ)=" \
  <(zcat /proc/config.gz 2>/dev/null || cat "/boot/config-$(uname -r)" 2>/dev/null || true) || true

cat > "$work/burst.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/resource.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(int argc, char **argv) {
  double b = atof(argv[1]) / 1e6, s = atof(argv[2]) / 1e6, end = now() + atof(argv[3]);
  while (now() < end) {
    double until = now() + b; while (now() < until) ;
    struct timespec ts = { 0, (long)(s * 1e9) }; nanosleep(&ts, NULL);
  }
  struct rusage r; getrusage(RUSAGE_SELF, &r);
  printf("%f\n", r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6);
  return 0;
}
C
cc -O2 -o "$work/burst" "$work/burst.c"
echo "| busy µs | sleep µs | own CPU s | /proc/stat ticks s | precise busy s |"
echo "|---|---|---|---|---|"
for pair in "30 200" "30 2000" "300 300" "1000 3000"; do
  set -- $pair
  a=$(head -1 /proc/stat); t0=$(cut -d' ' -f1 /proc/uptime)
  own=$("$work/burst" "$1" "$2" 5)
  b=$(head -1 /proc/stat); t1=$(cut -d' ' -f1 /proc/uptime)
  python3 - "$a" "$b" "$t0" "$t1" "$own" "$1" "$2" <<'PY'
import os, sys
a, b = ([int(x) for x in s.split()[1:9]] for s in sys.argv[1:3])
d = [(y - x) / os.sysconf("SC_CLK_TCK") for x, y in zip(a, b)]
wall = float(sys.argv[4]) - float(sys.argv[3])
cpus = os.cpu_count()
ticks = d[0] + d[1] + d[2] + d[5] + d[6]
precise = wall * cpus - d[3] - d[4] - d[7]
print(f"| {sys.argv[6]} | {sys.argv[7]} | {float(sys.argv[5]):.3f} | {ticks:.3f} | {precise:.3f} |")
PY
done

echo
echo "| diskio row | IOPS | ticks µs/I/O | precise µs/I/O | own µs/I/O |"
echo "|---|---|---|---|---|"
row() {  # label direct iodepth
  "$bin" --db "$work/r.db" -q run diskio --reps 3 --runtime 5s --warmup 1s --label "$1" --dir "$work" \
    -o phase=randwrite -o bs=4k -o iodepth="$3" -o ioengine=io_uring -o direct="$2" -o size=512m \
    -o timed=true >/dev/null 2>&1
  "$bin" --db "$work/r.db" export "$1" --format json | python3 -c '
import json, statistics, sys
rows = []
for c in json.load(sys.stdin)["cells"]:
    ops, w, cpu, n = c["ops"], c["window_s"], c["cpu"], c["cpus_online"]
    precise = w * n - cpu["idle_s"] - cpu["iowait_s"] - cpu["steal_s"]
    rows.append((ops / w, cpu["total_s"] / ops * 1e6, precise / ops * 1e6, c["workload_cpu"]["total_s"] / ops * 1e6))
m = [statistics.median(col) for col in zip(*rows)]
print("| %s | %.0f | %.1f | %.1f | %.1f |" % (sys.argv[1], *m))' "$1"
}
row "randwrite 4k buffered QD1" false 1
row "randwrite 4k buffered QD32" false 32
row "randwrite 4k direct QD1" true 1
