//! Benchmark helper (not a test) for history's detector, driven by scripts/bench-history.sh:
//!
//! - `csv DIR [SEED]`: writes seeded synthetic series as CSV files (`time,run,value`, three to
//!   five repetitions per run) with planted changes, and `DIR/truth.json` naming each file's
//!   kind, size, noise and the runs where steps start: null series of 20-200 runs, steps of
//!   1-10% at two noise levels, a variance change, a spike, slow drift.
//! - `store DB RUNS`: a SQLite store of RUNS runs of one point (three repetitions each),
//!   for timing `racehorse history` over it.
//! - `speed SERIES RUNS`: detection over SERIES synthetic series of RUNS runs in this
//!   process, on one thread; prints wall and CPU seconds.
//! - `eval DIR OUT.json`: reads every CSV file of `DIR/truth.json` as `history --csv` does and
//!   runs the detector on it in this process, timing the detection alone (as the script times
//!   Otava's); writes the confirmed change points per file.
//!
//! `cargo run --release -p racehorse-report --example history_bench -- csv /tmp/series`

use racehorse_report::history::{analyse, HistoryOptions, Series};
use racehorse_stats::changepoint::synth::{generate, Plant, Spec};
use serde_json::json;
use std::io::Write;
use std::path::Path;

/// Within-run and between-run spreads (coefficients of variation) of the two noise levels.
const NOISE: [(&str, f64, f64); 2] = [("low", 0.01, 0.015), ("high", 0.03, 0.04)];

struct Case {
    name: String,
    kind: &'static str,
    size: f64,
    noise: &'static str,
    spec: Spec,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for i in 0..2000 {
        let (noise, w, b) = NOISE[i % 2];
        let runs = 20 + (i * 37) % 181;
        let reps = 3 + i % 3;
        let spec = Spec::null(runs, reps, w, b);
        out.push(Case { name: format!("null-{i:04}"), kind: "null", size: 0.0, noise, spec });
    }
    for (s, size) in [0.01, 0.02, 0.03, 0.05, 0.10].into_iter().enumerate() {
        for (n, &(noise, w, b)) in NOISE.iter().enumerate() {
            for i in 0..50 {
                let runs = 20 + ((i + 7 * s + 3 * n) * 29) % 101;
                let at = 5 + ((i + s) * 13) % (runs - 10);
                let ratio = if i % 2 == 0 { 1.0 - size } else { 1.0 + size };
                let spec = Spec::null(runs, 3 + i % 3, w, b).with(Plant::Step { at, ratio });
                out.push(Case {
                    name: format!("step{}-{noise}-{i:02}", (size * 100.0) as u32),
                    kind: "step",
                    size,
                    noise,
                    spec,
                });
            }
        }
    }
    for i in 0..100 {
        let (noise, w, b) = NOISE[i % 2];
        let runs = 40 + (i * 11) % 81;
        let base = Spec::null(runs, 3, w, b);
        let variance = base.clone().with(Plant::Variance { at: runs / 2, factor: 3.0 });
        let spike = base.clone().with(Plant::Spike { at: runs / 3, ratio: 1.0 + 6.0 * b });
        let drift = base.with(Plant::Drift { total_ratio: 0.95 });
        out.push(Case {
            name: format!("variance-{i:03}"),
            kind: "variance",
            size: 3.0,
            noise,
            spec: variance,
        });
        out.push(Case { name: format!("spike-{i:03}"), kind: "spike", size: 6.0 * b, noise, spec: spike });
        out.push(Case { name: format!("drift-{i:03}"), kind: "drift", size: 0.05, noise, spec: drift });
    }
    out
}

fn write_csv(path: &Path, runs: &[Vec<f64>]) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(f, "time,run,value")?;
    for (i, reps) in runs.iter().enumerate() {
        for v in reps {
            writeln!(f, "{},r{i},{v:.6}", 1_790_000_000 + i as u64 * 3600)?;
        }
    }
    f.flush()
}

fn csv(dir: &Path, seed: u64) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut truth = Vec::new();
    for (i, c) in cases().into_iter().enumerate() {
        let runs = generate(&c.spec, seed.wrapping_mul(1_000_003).wrapping_add(i as u64));
        write_csv(&dir.join(format!("{}.csv", c.name)), &runs)?;
        truth.push(json!({
            "file": format!("{}.csv", c.name), "kind": c.kind, "size": c.size, "noise": c.noise,
            "runs": c.spec.runs, "reps": c.spec.reps, "steps": c.spec.step_indices(),
        }));
    }
    std::fs::write(dir.join("truth.json"), serde_json::to_vec_pretty(&truth)?)?;
    println!("wrote {} series to {}", truth.len(), dir.display());
    Ok(())
}

fn store(db: &Path, runs: usize) -> Result<(), Box<dyn std::error::Error>> {
    use racehorse_core::{CellResult, CellSpec, CpuUsage, Nanos, Params, Value, WorkUnit};
    let store = racehorse_store::Store::open(db)?;
    let values =
        generate(&Spec::null(runs, 3, 0.01, 0.015).with(Plant::Step { at: runs / 2, ratio: 0.95 }), 7);
    for (i, reps) in values.iter().enumerate() {
        let new = racehorse_store::NewRun {
            label: "nightly".into(),
            host: "bench".into(),
            tags: vec![("commit".into(), format!("c{i}"))],
            ..Default::default()
        };
        let id = store.create_run(&new)?;
        for (r, v) in reps.iter().enumerate() {
            let mut params = Params::new();
            params.insert("clients".into(), Value::Int(4));
            let spec = CellSpec {
                workload: "fileserver".into(),
                params,
                variant: "default".into(),
                rep: r as u32 + 1,
            };
            let mut c = CellResult::empty(spec, WorkUnit::Bytes);
            c.window = Nanos(10_000_000_000);
            c.units = v * 1e7;
            c.cpu = CpuUsage { user_s: 3.0, kernel_s: 5.0, steal_s: 0.0, iowait_s: 0.0, idle_s: 10.0 };
            c.cpus_online = 2;
            store.insert_cell(id, r, &c)?;
        }
        store.finish_run(id, racehorse_core::RunStatus::Complete)?;
    }
    println!("wrote {runs} runs to {}", db.display());
    Ok(())
}

/// This process's user + system CPU seconds, from /proc/self/stat (clock ticks of 1/100 s).
fn cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(") ").map_or("", |(_, rest)| rest);
    let f: Vec<f64> = after.split_whitespace().filter_map(|x| x.parse().ok()).collect();
    // Fields 14 and 15 of the line (utime, stime) are the 12th and 13th after the name.
    match (f.get(10), f.get(11)) {
        (Some(u), Some(s)) => (u + s) / 100.0,
        _ => f64::NAN,
    }
}

fn speed(series: usize, runs: usize) {
    let data: Vec<Vec<Vec<f64>>> = (0..series)
        .map(|i| {
            let spec = Spec::null(runs, 3, 0.01, 0.015);
            let spec = if i % 10 == 0 { spec.with(Plant::Step { at: runs / 2, ratio: 0.95 }) } else { spec };
            generate(&spec, i as u64)
        })
        .collect();
    let (t0, c0) = (std::time::Instant::now(), cpu_s());
    let mut found = 0;
    for (i, runs) in data.iter().enumerate() {
        let csv = racehorse_report::history::csv::CsvSeries {
            metric: "v".into(),
            time_column: "time".into(),
            runs: runs
                .iter()
                .enumerate()
                .map(|(j, v)| racehorse_report::history::csv::CsvRun {
                    time_text: j.to_string(),
                    time_s: j as f64,
                    attributes: Vec::new(),
                    values: v.clone(),
                    line: j + 2,
                })
                .collect(),
            empty_cells: 0,
        };
        let s = Series::from_csv(&csv, &format!("s{i}"), racehorse_core::Direction::HigherIsBetter);
        found += analyse(s, &HistoryOptions::default()).map_or(0, |a| a.confirmed().count());
    }
    let (wall, cpu) = (t0.elapsed().as_secs_f64(), cpu_s() - c0);
    println!("speed: {series} series x {runs} runs: {wall:.2} s wall, {cpu:.2} s CPU, {found} change points");
}

fn eval(dir: &Path, out: &Path) -> Result<(), Box<dyn std::error::Error>> {
    use racehorse_report::history::csv::{parse, CsvRequest};
    let truth: Vec<serde_json::Value> = serde_json::from_slice(&std::fs::read(dir.join("truth.json"))?)?;
    let mut series = Vec::new();
    for t in &truth {
        let file = t["file"].as_str().unwrap_or_default().to_string();
        let text = std::fs::read_to_string(dir.join(&file))?;
        let csv = parse(&text, &CsvRequest { metric: "value", time_column: Some("time"), attributes: &[] })?;
        series.push((file.clone(), Series::from_csv(&csv, &file, racehorse_core::Direction::HigherIsBetter)));
    }
    let mut found = serde_json::Map::new();
    let c0 = cpu_s();
    for (file, s) in series {
        let a = analyse(s, &HistoryOptions::default());
        let at: Vec<usize> = a.map(|a| a.confirmed().map(|c| c.after).collect()).unwrap_or_default();
        found.insert(file, json!(at));
    }
    let cpu = cpu_s() - c0;
    let doc = json!({ "detector": "racehorse (in process)", "setting": "alpha 0.05 (default)", "cpu_s": cpu, "found": found });
    std::fs::write(out, serde_json::to_vec(&doc)?)?;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).cloned().unwrap_or_default();
    match arg(0).as_str() {
        "csv" => csv(Path::new(&arg(1)), arg(2).parse().unwrap_or(1))?,
        "store" => store(Path::new(&arg(1)), arg(2).parse().unwrap_or(1000))?,
        "speed" => speed(arg(1).parse().unwrap_or(10_000), arg(2).parse().unwrap_or(200)),
        "eval" => eval(Path::new(&arg(1)), Path::new(&arg(2)))?,
        _ => {
            eprintln!(
                "usage: history_bench csv DIR [SEED] | store DB RUNS | speed SERIES RUNS | eval DIR OUT.json"
            );
            std::process::exit(2);
        }
    }
    Ok(())
}
