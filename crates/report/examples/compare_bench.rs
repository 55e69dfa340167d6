//! Benchmark (not a test): compares two synthetic runs of 10,000 cells each and renders
//! every format, timing each step over several repetitions; prints medians.
//!
//! `cargo run --release -p racehorse-report --example compare_bench [REPS]`
//!
//! With `benchstat` on PATH (`go install golang.org/x/perf/cmd/benchstat@latest`) and the
//! release binary built (`cargo build --release`), it also times, alternating, the whole
//! `racehorse compare base new` command against `benchstat base.txt new.txt` on the same
//! data (four metrics per point, same repetitions), end to end as processes.

use racehorse_report::synth::{synthetic_side, Shape};
use racehorse_report::{compare, compare_html, compare_json, compare_text, CompareOptions, Side, View};
use racehorse_store::{NewRun, Store};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

fn median_ms(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Stores both runs in a temporary SQLite file, then times reading them back, and reading
/// plus comparing plus rendering HTML (what `racehorse compare A B -o x.html` does): the
/// medians of reading with latencies (as compare reads), without them, and the whole.
fn through_store(base: &Side, new: &Side, reps: usize) -> (f64, f64, f64, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("rh-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let store = Store::open(&dir.join("bench.db")).expect("store");
    let ids: Vec<i64> = [base, new]
        .iter()
        .map(|s| {
            let id =
                store.create_run(&NewRun { label: s.run.label.clone(), ..NewRun::default() }).expect("run");
            for (i, c) in s.cells.iter().enumerate() {
                store.insert_cell(id, i, c).expect("cell");
            }
            id
        })
        .collect();
    let area = |_: &str| "Synthetic".to_string();
    let (mut load, mut end, mut light) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        let t = Instant::now();
        let sides: Vec<Side> = ids
            .iter()
            .map(|id| {
                Side::whole(
                    store.run(*id).expect("read").expect("run exists"),
                    store.run_cells_with_latencies(*id).expect("cells"),
                )
            })
            .collect();
        load.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        for id in &ids {
            std::hint::black_box(store.run_cells_without_series(*id).expect("cells"));
        }
        light.push(t.elapsed().as_secs_f64() * 1e3);
        let c = compare(&sides[0], &sides[1..], &CompareOptions::default(), &area).expect("compare");
        std::hint::black_box(compare_html(&c, View::default()));
        end.push(t.elapsed().as_secs_f64() * 1e3);
    }
    (median_ms(load), median_ms(light), median_ms(end), dir)
}

/// The side's cells in Go benchmark format: one line per repetition, four metrics.
fn benchstat_text(side: &Side) -> String {
    let mut out = String::from("goos: linux\npkg: racehorse/synthetic\n");
    for c in &side.cells {
        let name: Vec<String> = c.spec.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let per = |v: Option<f64>| v.unwrap_or(0.0);
        out.push_str(&format!(
            "Benchmark{}/{} 1 {} bytes/s {} cpu-s/byte {} kcpu-s/byte {} ucpu-s/byte\n",
            c.spec.workload,
            name.join("/"),
            c.throughput(),
            per(c.cpu_total_per_unit()),
            per(c.cpu_kernel_per_unit()),
            per(c.cpu_user_per_unit())
        ));
    }
    out
}

fn time_command(cmd: &mut Command) -> Option<f64> {
    let t = Instant::now();
    let ok = cmd.stdout(Stdio::null()).stderr(Stdio::null()).status().ok()?.success();
    ok.then(|| t.elapsed().as_secs_f64() * 1e3)
}

/// Alternates the two whole commands `reps` times each; prints medians and the ratio.
fn vs_benchstat(dir: &Path, base: &Side, new: &Side, reps: usize) {
    let bin = std::env::var("RACEHORSE_BIN").unwrap_or_else(|_| "target/release/racehorse".into());
    let (b, n) = (dir.join("base.txt"), dir.join("new.txt"));
    if std::fs::write(&b, benchstat_text(base)).is_err() || std::fs::write(&n, benchstat_text(new)).is_err() {
        return;
    }
    let db = dir.join("bench.db");
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        let rh = time_command(Command::new(&bin).arg("--db").arg(&db).args(["compare", "base", "new"]));
        let bs = time_command(Command::new("benchstat").arg(&b).arg(&n));
        match (rh, bs) {
            (Some(r), Some(s)) => {
                ours.push(r);
                theirs.push(s);
            }
            _ => {
                println!("side by side skipped: needs {bin} (cargo build --release) and benchstat on PATH");
                return;
            }
        }
    }
    let (r, s) = (median_ms(ours), median_ms(theirs));
    println!("side by side, whole commands: racehorse compare {r:.0} ms, benchstat {s:.0} ms, ratio racehorse/benchstat {:.2}", r / s);
}

fn main() {
    let reps: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(7);
    // 10 workloads × 10 client counts × 20 CPU counts × 5 repetitions = 10,000 cells a side.
    let shape = Shape {
        workloads: 10,
        clients: (1..=10).collect(),
        cpus: (1..=20).collect(),
        reps: 5,
        noise: 0.02,
        ..Shape::default()
    };
    let base = synthetic_side(1, "base", &shape);
    let new = synthetic_side(2, "new", &Shape { speed: 1.1, cpu_cost: 0.9, seed: 3, ..shape });
    println!("cells: base {}, new {}", base.cells.len(), new.cells.len());
    let area = |_: &str| "Synthetic".to_string();
    let opts = CompareOptions::default();
    let mut t_cmp = Vec::new();
    let mut t_html = Vec::new();
    let mut t_text = Vec::new();
    let mut t_json = Vec::new();
    let mut html_len = 0;
    for _ in 0..reps {
        let t = Instant::now();
        let c = compare(&base, std::slice::from_ref(&new), &opts, &area).expect("compare");
        t_cmp.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let html = compare_html(&c, View::default());
        t_html.push(t.elapsed().as_secs_f64() * 1e3);
        html_len = html.len();
        let t = Instant::now();
        let text = compare_text(&c, View { absolute: true, ci: true });
        t_text.push(t.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(text);
        let t = Instant::now();
        std::hint::black_box(compare_json(&c));
        t_json.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let (t_load, t_light, t_end, dir) = through_store(&base, &new, reps);
    vs_benchstat(&dir, &base, &new, reps);
    let _ = std::fs::remove_dir_all(&dir);
    println!("repetitions: {reps} (medians)");
    println!(
        "load both runs from SQLite with latencies (as compare reads them): {t_load:.1} ms \
         (without: {t_light:.1} ms); load + compare + html: {t_end:.1} ms"
    );
    println!("compare (match, stats, summary): {:.1} ms", median_ms(t_cmp));
    println!("render html ({} KiB): {:.1} ms", html_len / 1024, median_ms(t_html));
    println!("render text (--absolute --ci): {:.1} ms", median_ms(t_text));
    println!("render json: {:.1} ms", median_ms(t_json));
}
