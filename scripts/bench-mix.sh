#!/usr/bin/env bash
# racehorse's mix engine beside re-aim 7 on this machine. Each round runs, in turn, our
# ramp and re-aim's of two mixes, both tools reading re-aim's own workfiles: compute, and
# fserver without its signal_test line (re-aim's signal_test child hangs here until re-aim's
# 110 s alarm kills it, so re-aim's full fserver cannot run). Same settings: start at 1 user, step 1 with the
# adaptive increment, 100 jobs per user, FILESIZE 10k, POOLSIZE 100k, stop by the "max jobs"
# rule: racehorse stop=peak, re-aim -g; re-aim with -y, no sync during disk tasks), on all
# CPUs. Then per mix the medians over the rounds: peak jobs/min, the load at the peak, the
# loads run and the highest load reached, CPU per job, the ramp's wall time, and the ratios.
# Finally one `racehorse run reaim` (the quick preset: both mixes on 1 and all CPUs) is timed.
# re-aim must be built from source beforehand in a temporary folder (never committed):
#   git clone https://github.com/davidlohr/areaim /tmp/areaim && cd /tmp/areaim/osdl-aim-7 &&
#   touch AUTHORS ChangeLog NEWS README && sh Support_scripts/bootstrap && ./configure &&
#   make CFLAGS="-O2 -fcommon -w -D_GNU_SOURCE -I$PWD/include" LIBS="-lm /usr/lib/x86_64-linux-gnu/libaio.so.1"
# REAIM_DIR points at that osdl-aim-7 folder (default /tmp/areaim/osdl-aim-7).
# Usage: bash scripts/bench-mix.sh [ROUNDS]   (about 2 min per round, plus 1-2 min for the preset)
#        bash scripts/bench-mix.sh calibrate  (each task of the three mixes alone, one user, 20
#        runs, in both tools: the users' CPU seconds, which the task sizes were fitted to)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-2}"
reaim_dir="${REAIM_DIR:-/tmp/areaim/osdl-aim-7}"
[ -x "$reaim_dir/src/reaim" ] || { echo "re-aim not built in $reaim_dir (see the header)" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT INT TERM
cargo build --release --bin racehorse >/dev/null
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$(pwd)/$target_dir" ;; esac
rh="$target_dir/release/racehorse"
mkdir -p "$tmp/reaim/data" "$tmp/reaim/disk" "$tmp/work"
cp "$reaim_dir/data/fakeh.tgz" "$tmp/reaim/data/"
printf "FILESIZE 10k\nPOOLSIZE 100k\nDISKDIR %s\n" "$tmp/reaim/disk" >"$tmp/reaim/reaim.config"
if [ "$rounds" = calibrate ]; then
  echo "| task | re-aim CPU s / 20 runs | racehorse CPU s / 20 runs |"
  echo "|---|---|---|"
  for t in $(cat "$reaim_dir"/data/workfile.{fserver,compute,new_dbase} | grep -v '^#' | awk 'NF==2{print $2}' |
    sort -u | grep -v signal_test); do
    printf "1 %s\n" "$t" >"$tmp/wf.$t"
    theirs=$(cd "$tmp/reaim" && timeout 120 "$reaim_dir/src/reaim" -s1 -e1 -i1 -j20 -f "$tmp/wf.$t" -c reaim.config -y \
      -l "$tmp/reaim/log" 2>&1 | awk '$1=="1" && NF==9 {print $3+$4}')
    "$rh" --db "$tmp/rh.db" run mix --label "$t" -o "workfile=$tmp/wf.$t" -o users=1 -o jobs=20 -o poolsize=100k \
      --quiet --no-drop-caches --dir "$tmp/work" >/dev/null 2>&1
    ours=$("$rh" --db "$tmp/rh.db" export "$t" --format json |
      python3 -c "import json,sys; print('%.3f' % json.load(sys.stdin)['cells'][0]['workload_cpu']['total_s'])")
    echo "| $t | $theirs | $ours |"
  done
  exit 0
fi
cp "$reaim_dir/data/workfile.compute" "$tmp/workfile.compute"
grep -v signal_test "$reaim_dir/data/workfile.fserver" >"$tmp/workfile.fserver_nosig"
for i in $(seq 1 "$rounds"); do
  for wf in fserver_nosig compute; do
    s=$(date +%s.%N)
    "$rh" --db "$tmp/rh.db" run mix --label "$wf-$i" -o "workfile=$tmp/workfile.$wf" -o poolsize=100k -o filesize=10k \
      -o max_users=512 --quiet --no-drop-caches --dir "$tmp/work" >/dev/null
    echo "racehorse $wf $i $(echo "$(date +%s.%N) - $s" | bc)" >>"$tmp/walls"
    "$rh" --db "$tmp/rh.db" export "$wf-$i" --format json >"$tmp/rh-$wf-$i.json"
    s=$(date +%s.%N)
    (cd "$tmp/reaim" && "$reaim_dir/src/reaim" -s1 -e512 -i1 -j100 -g -y -f "$tmp/workfile.$wf" \
      -c reaim.config -l "$tmp/reaim/log" >"$tmp/reaim-$wf-$i.txt" 2>&1)
    echo "reaim $wf $i $(echo "$(date +%s.%N) - $s" | bc)" >>"$tmp/walls"
  done
done
s=$(date +%s.%N)
"$rh" --db "$tmp/rh.db" run reaim --label preset --quiet --dir "$tmp/work" >/dev/null
preset_s=$(echo "$(date +%s.%N) - $s" | bc)
"$rh" --db "$tmp/rh.db" show preset >"$tmp/preset.txt"
grep -q "alarm timeout" "$tmp"/reaim-*.txt && echo "warning: a re-aim child exceeded its alarm timeout" >&2
python3 - "$tmp" "$rounds" "$preset_s" <<'PY'
import json, statistics, sys
tmp, rounds, preset_s = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
walls = {}
for line in open(f"{tmp}/walls"):
    tool, wf, i, s = line.split()
    walls.setdefault((tool, wf), []).append(float(s))

def ours(wf, i):
    cells = [c for c in json.load(open(f"{tmp}/rh-{wf}-{i}.json"))["cells"] if c["status"] == "ok"]
    peak = max(cells, key=lambda c: c["throughput_per_s"])
    return {"jpm": peak["extra"]["jpm"], "at": peak["params"]["users"], "loads": len(cells),
            "reached": max(c["params"]["users"] for c in cells),
            "child_ms": peak["workload_cpu"]["total_s"] / peak["units"] * 1e3,
            "cpu_ms": peak["cpu_per_unit"]["total_s"] * 1e3, "kernel_ms": peak["cpu_per_unit"]["kernel_s"] * 1e3,
            "user_ms": peak["cpu_per_unit"]["user_s"] * 1e3}

def theirs(wf, i):
    rows = []
    for line in open(f"{tmp}/reaim-{wf}-{i}.txt"):
        f = line.split()
        if len(f) == 9 and f[0].isdigit() and "nan" not in line:
            users, real, sys_s, user_s, jpm = int(f[0]), float(f[1]), float(f[2]), float(f[3]), float(f[4])
            rows.append((users, jpm, sys_s + user_s, real))
    peak = max(rows, key=lambda r: r[1])
    jobs = peak[1] * peak[3] / 60.0
    return {"jpm": peak[1], "at": peak[0], "loads": len(rows), "reached": max(r[0] for r in rows),
            "child_ms": peak[2] / jobs * 1e3}

med = lambda rs, k: statistics.median(r[k] for r in rs)
print(f"rounds: {rounds}; `racehorse run reaim` (quick preset) took {preset_s:.0f} s")
for line in open(f"{tmp}/preset.txt"):
    if line.startswith("ramp "):
        print(line.rstrip())
print("| mix | tool | peak jobs/min | at users | loads run | reached users | users' CPU ms/job (wait4/times) | "
      "system CPU ms/job total / kernel / user | ramp wall s |")
print("|---|---|---|---|---|---|---|---|---|")
for wf in ["fserver_nosig", "compute"]:
    a = [ours(wf, i) for i in range(1, rounds + 1)]
    b = [theirs(wf, i) for i in range(1, rounds + 1)]
    for tool, rs, extra in [("racehorse mix", a, True), ("re-aim 7", b, False)]:
        key = "racehorse" if extra else "reaim"
        cpu = f"{med(rs,'cpu_ms'):.2f} / {med(rs,'kernel_ms'):.2f} / {med(rs,'user_ms'):.2f}" if extra else "-"
        each = ", ".join("%.0f@%d" % (r["jpm"], r["at"]) for r in rs)
        print(f"| {wf} | {tool} | {med(rs,'jpm'):.0f} ({each}) | {med(rs,'at'):.0f} | {med(rs,'loads'):.0f} | "
              f"{med(rs,'reached'):.0f} | {med(rs,'child_ms'):.2f} | {cpu} | {statistics.median(walls[(key, wf)]):.0f} |")
    print(f"| {wf} | ratio ours/re-aim | {med(a,'jpm')/med(b,'jpm'):.2f} |  |  |  | "
          f"{med(a,'child_ms')/med(b,'child_ms'):.2f} |  | "
          f"{statistics.median(walls[('racehorse', wf)])/statistics.median(walls[('reaim', wf)]):.2f} |")
PY
