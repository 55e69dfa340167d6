#!/usr/bin/env python3
"""Scores change-point detectors on the synthetic series of history_bench (scripts/bench-history.sh).

  bench_history.py racehorse DIR RACEHORSE_BIN OUT.json   run `racehorse history --csv` on every file
  bench_history.py otava DIR P OUT.json                   run Apache Otava (its library) on run means
  bench_history.py score DIR A.json [B.json ...]          markdown tables: false alarms, detection, speed

Each OUT.json holds, per file, the indices of the first run after each reported change point
(confirmed ones only for racehorse; pending ones are not change points) and the CPU seconds spent.
"""
import csv
import json
import math
import os
import resource
import subprocess
import sys
import time


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_racehorse(d, binary, out):
    truth = json.load(open(os.path.join(d, "truth.json")))
    found = {}
    start = children_cpu()
    for t in truth:
        path = os.path.join(d, t["file"])
        p = subprocess.run([binary, "history", "--csv", path, "--metric", "value", "--json"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"{path}: racehorse exited {p.returncode}: {p.stderr}")
        doc = json.loads(p.stdout)
        cps = doc["series"][0]["change_points"]
        found[t["file"]] = [c["index"] for c in cps if not c["pending"]]
    cpu = children_cpu() - start
    json.dump({"detector": "racehorse history --csv (a process per series)", "setting": "alpha 0.05 (default)",
               "cpu_s": cpu, "found": found}, open(out, "w"))


def run_means(path):
    runs, order = {}, []
    with open(path) as f:
        for row in csv.DictReader(f):
            key = row["time"]
            if key not in runs:
                runs[key] = []
                order.append(key)
            runs[key].append(float(row["value"]))
    return [sum(runs[k]) / len(runs[k]) for k in order]


def run_otava(d, p, out):
    from otava.analysis import compute_change_points
    truth = json.load(open(os.path.join(d, "truth.json")))
    series = {t["file"]: run_means(os.path.join(d, t["file"])) for t in truth}
    found, cpu = {}, 0.0
    for name, values in series.items():
        t0 = time.process_time()
        cps, _ = compute_change_points(values, window_len=50, max_pvalue=float(p), min_magnitude=0.0)
        cpu += time.process_time() - t0
        found[name] = sorted(int(c.index) for c in cps)
    json.dump({"detector": "otava 0.8.0", "setting": f"p {p}", "cpu_s": cpu, "found": found}, open(out, "w"))


def wilson(k, n, z=1.96):
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def score(d, results):
    truth = json.load(open(os.path.join(d, "truth.json")))
    print("### False alarms: null series (no change planted)\n")
    print("| detector | setting | series | with any change point | share (95% interval) |")
    print("|---|---|---|---|---|")
    for r in results:
        null = [t for t in truth if t["kind"] == "null"]
        k = sum(1 for t in null if r["found"][t["file"]])
        lo, hi = wilson(k, len(null))
        print(f"| {r['detector']} | {r['setting']} | {len(null)} | {k} | {100*k/len(null):.1f}% ({100*lo:.1f}-{100*hi:.1f}%) |")
    print("\n### Detection of planted steps (a hit is within ±1 run)\n")
    print("| detector | setting | step | noise (within/between cv) | series | recall | precision | F1 | mean location error (runs) |")
    print("|---|---|---|---|---|---|---|---|---|")
    noise_text = {"low": "1% / 1.5%", "high": "3% / 4%"}
    for r in results:
        for size in sorted({t["size"] for t in truth if t["kind"] == "step"}):
            for noise in ["low", "high"]:
                group = [t for t in truth if t["kind"] == "step" and t["size"] == size and t["noise"] == noise]
                tp = fp = fn = 0
                errors = []
                for t in group:
                    found = list(r["found"][t["file"]])
                    for s in t["steps"]:
                        near = [f for f in found if abs(f - s) <= 1]
                        if near:
                            tp += 1
                            found.remove(near[0])
                        else:
                            fn += 1
                        if r["found"][t["file"]]:
                            errors.append(min(abs(f - s) for f in r["found"][t["file"]]))
                    fp += len(found)
                rec = tp / (tp + fn) if tp + fn else float("nan")
                prec = tp / (tp + fp) if tp + fp else float("nan")
                f1 = 2 * rec * prec / (rec + prec) if rec + prec else 0.0
                err = sum(errors) / len(errors) if errors else float("nan")
                print(f"| {r['detector']} | {r['setting']} | {100*size:.0f}% | {noise_text[noise]} | {len(group)} | {rec:.2f} | {prec:.2f} | {f1:.2f} | {err:.2f} |")
    print("\n### All planted steps together (1-10%, both noise levels)\n")
    print("| detector | setting | false alarms (null series) | recall | precision | F1 |")
    print("|---|---|---|---|---|---|")
    for r in results:
        tp = fp = fn = 0
        for t in truth:
            if t["kind"] != "step":
                continue
            found = list(r["found"][t["file"]])
            for s in t["steps"]:
                near = [f for f in found if abs(f - s) <= 1]
                if near:
                    tp += 1
                    found.remove(near[0])
                else:
                    fn += 1
            fp += len(found)
        null = [t for t in truth if t["kind"] == "null"]
        k = sum(1 for t in null if r["found"][t["file"]])
        rec, prec = tp / (tp + fn), (tp / (tp + fp) if tp + fp else float("nan"))
        f1 = 2 * rec * prec / (rec + prec) if rec + prec else 0.0
        print(f"| {r['detector']} | {r['setting']} | {100*k/len(null):.1f}% | {rec:.3f} | {prec:.3f} | {f1:.3f} |")
    print("\n### Other shapes: series with any change point\n")
    print("| detector | setting | variance x3 | spike (one run, 6 between-run sd) | drift 5% over the series |")
    print("|---|---|---|---|---|")
    for r in results:
        cells = []
        for kind in ["variance", "spike", "drift"]:
            group = [t for t in truth if t["kind"] == kind]
            k = sum(1 for t in group if r["found"][t["file"]])
            cells.append(f"{k}/{len(group)}")
        print(f"| {r['detector']} | {r['setting']} | " + " | ".join(cells) + " |")
    print("\n### CPU time over all series\n")
    print("| detector | setting | series | CPU s | per series |")
    print("|---|---|---|---|---|")
    for r in results:
        n = len(r["found"])
        print(f"| {r['detector']} | {r['setting']} | {n} | {r['cpu_s']:.1f} | {1000*r['cpu_s']/n:.2f} ms |")


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "racehorse":
        run_racehorse(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "otava":
        run_otava(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "score":
        score(sys.argv[2], [json.load(open(p)) for p in sys.argv[3:]])
    else:
        print(__doc__)
        sys.exit(2)
