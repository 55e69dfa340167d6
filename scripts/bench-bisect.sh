#!/usr/bin/env bash
# racehorse bisect against `git bisect run` with one run per step and a fixed threshold, side by
# side on the same seeded repositories (docs/bisect.md).
#
# Each repository holds 64 commits of a small C program whose unit of work (a fixed loop of
# integer arithmetic) gets SLOW percent slower at one commit chosen by the seed; a step builds it
# with cc -O2 and measures it with the command engine on one CPU (--cpus 1): units of work over a
# run of about WINDOW seconds (default 1), three repetitions a run. Then, for the same repository:
#   racehorse bisect --repo R --good FIRST --bad LAST --build 'cc -O2 -o bench bench.c' -- …
#   git bisect run: one `racehorse run --reps 1` per step, "bad" when its throughput is more
#   than THRESHOLD percent (default 2.5) below the good commit's single run.
# Prints, per slowdown, how many bisects named exactly the planted commit, and the runs and wall
# time each spent; keeps each racehorse answer (answer-SLOW-SEED.json) and, per line of
# rh-SLOW.txt, what it said (status:first bad commits) for the wrong ones.
# Usage: bash scripts/bench-bisect.sh [REPOS] [SLOWDOWNS]   e.g. bash scripts/bench-bisect.sh 20 "5 2"
# Long: about 90 minutes for 20 repositories and two slowdowns on 2 CPUs; run it on a quiet
# machine, once.
set -euo pipefail
cd "$(dirname "$0")/.."
repos=${1:-20}
slowdowns=${2:-"5 2"}
window=${WINDOW:-1}
threshold=${THRESHOLD:-2.5}
out=${OUT:-$(mktemp -d /tmp/rh-bisect-bench.XXXXXX)}
mkdir -p "$out"
cargo build --release --quiet
bin=$PWD/target/release/racehorse
command -v cc >/dev/null || { echo "bench-bisect: needs a C compiler (cc)" >&2; exit 2; }

# The program: units of work for about $window seconds at the good level; the work per unit is
# multiplied by (100 + slow) / 100 from the planted commit on. It prints the units done.
make_repo() {  # dir seed slow
  local dir=$1 seed=$2 slow=$3 at
  at=$(( 2 + (seed * 37) % 61 ))
  rm -rf "$dir"; mkdir -p "$dir"; git -C "$dir" init -q
  git -C "$dir" config user.email bench@example.org; git -C "$dir" config user.name bench
  for c in $(seq 1 64); do
    local work=100000
    [ "$c" -ge "$at" ] && work=$(( 100000 * (100 + slow) / 100 ))
    cat > "$dir/bench.c" <<EOF
/* commit $c */
#include <stdio.h>
#include <time.h>
int main(void) {
  volatile unsigned long x = 1; long units = 0; struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (;;) {
    for (long i = 0; i < $work; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
    units++;
    clock_gettime(CLOCK_MONOTONIC, &b);
    if ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 >= $window) break;
  }
  printf("units: %ld\n", units);
  return 0;
}
EOF
    git -C "$dir" add -A; git -C "$dir" commit -qm "change $c"
  done
  echo "$at"
}

run_args=(command --cpus 1 --reps 3 --warmup 0s --no-warm-up -o 'regex:=units: (\d+)' -o count=true -- '{worktree}/bench')

one_racehorse() {  # repo db planted answer-file → "exact|wrong runs seconds what-it-said"
  local repo=$1 db=$2 planted=$3 keep=$4 t0 t1 first runs said
  t0=$(date +%s)
  "$bin" --db "$db" -q bisect --repo "$repo" --good HEAD~63 --bad HEAD --build 'cc -O2 -o bench bench.c' --json -- "${run_args[@]}" >"$keep" 2>/dev/null || true
  t1=$(date +%s)
  first=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); c=d.get("changes") or []; print(c[0]["first_bad"]["commit"]["subject"] if len(c)==1 else "none")' "$keep" 2>/dev/null || echo none)
  runs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["spent"]["runs"])' "$keep" 2>/dev/null || echo 0)
  # What a wrong answer was: the status, and the first bad commits it named.
  said=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["status"] + ":" + ",".join(c["first_bad"]["commit"]["subject"].split()[-1] for c in d.get("changes") or []))' "$keep" 2>/dev/null || echo failed)
  [ "$first" = "change $planted" ] && echo "exact $runs $((t1 - t0)) $said" || echo "wrong $runs $((t1 - t0)) $said"
}

one_git() {  # repo db planted → "exact|wrong runs seconds"
  local repo=$1 db=$2 planted=$3 t0 t1 first good
  cat > "$repo/.step.sh" <<EOF
#!/usr/bin/env bash
cc -O2 -o bench bench.c || exit 125
tput=\$("$bin" --db "$db" -q run command --cpus 1 --reps 1 --warmup 0s --no-warm-up --label step -o 'regex:=units: (\\d+)' -o count=true -- "\$PWD/bench" >/dev/null 2>&1; "$bin" --db "$db" export step --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["cells"][0]["throughput_per_s"])')
echo "\$tput" >> "$db.tputs"
python3 -c "import sys; sys.exit(0 if \$tput >= float(open('$db.good').read()) * (1 - $threshold / 100) else 1)"
EOF
  chmod +x "$repo/.step.sh"
  echo .step.sh > "$repo/.git/info/exclude"
  t0=$(date +%s)
  local tip; tip=$(git -C "$repo" rev-parse HEAD)
  git -C "$repo" checkout -q HEAD~63 && (cd "$repo" && cc -O2 -o bench bench.c)
  "$bin" --db "$db" -q run command --cpus 1 --reps 1 --warmup 0s --no-warm-up --label good -o 'regex:=units: (\d+)' -o count=true -- "$repo/bench" >/dev/null 2>&1
  "$bin" --db "$db" export good --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["cells"][0]["throughput_per_s"])' > "$db.good"
  git -C "$repo" checkout -q "$tip"
  git -C "$repo" bisect start HEAD HEAD~63 >/dev/null
  git -C "$repo" bisect run ./.step.sh > "$db.log" 2>&1 || true
  first=$(grep -o 'change [0-9]*' <(git -C "$repo" log -1 --format=%s refs/bisect/bad) | head -1)
  git -C "$repo" bisect reset >/dev/null 2>&1 || true
  t1=$(date +%s)
  local runs=$(( $(wc -l < "$db.tputs" 2>/dev/null || echo 0) + 1 ))
  [ "$first" = "change $planted" ] && echo "exact $runs $((t1 - t0))" || echo "wrong $runs $((t1 - t0))"
}

echo "| slowdown | tool | exact culprit | runs per bisect (median) | wall s per bisect (median) |"
echo "|---|---|---|---|---|"
for slow in $slowdowns; do
  : > "$out/rh-$slow.txt"; : > "$out/git-$slow.txt"
  for seed in $(seq 1 "$repos"); do
    planted=$(make_repo "$out/repo" "$seed" "$slow")
    rm -f "$out"/db*
    one_racehorse "$out/repo" "$out/db-rh.db" "$planted" "$out/answer-$slow-$seed.json" >> "$out/rh-$slow.txt"
    one_git "$out/repo" "$out/db-git.db" "$planted" >> "$out/git-$slow.txt"
  done
  for tool in rh git; do
    python3 - "$out/$tool-$slow.txt" "$slow" "$tool" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
exact = sum(1 for r in rows if r[0] == "exact")
name = "racehorse bisect" if sys.argv[3] == "rh" else "git bisect run, one run a step, fixed 2.5%"
print(f"| {sys.argv[2]}% | {name} | {exact} of {len(rows)} | {statistics.median(int(r[1]) for r in rows):.0f} | {statistics.median(int(r[2]) for r in rows):.0f} |")
EOF
  done
done
for slow in $slowdowns; do
  echo "racehorse's wrong answers at $slow% (runs, seconds, status:first bad):"
  grep '^wrong' "$out/rh-$slow.txt" | cut -d' ' -f2- | sed 's/^/  /' || echo "  none"
done
echo "outputs in $out"
