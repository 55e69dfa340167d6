//! Benchmark driver for the `fileserver` engine, to compare it with the real dbench:
//! runs N clients for T seconds (after a warmup, default T/5 like dbench) in a fresh
//! directory and prints MB/s (10^6 bytes) and process CPU seconds per MB.
//!
//! `cargo run --release -p racehorse-engines --example fileserver_bench -- \
//!     --clients 4 --time 20 --dir /var/tmp/fsb --loadfile /usr/share/dbench/client.txt`

use racehorse_core::{CellSpec, Params, Value};
use racehorse_engines::{CellContext, Control, Engine, RealClock, Recorder};
use racehorse_machine::rusage::process_cpu;
use std::sync::Arc;
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let get = |flag: &str, default: &str| -> String {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
            .unwrap_or_else(|| default.into())
    };
    let clients: i64 = get("--clients", "1").parse().expect("--clients N");
    let secs: f64 = get("--time", "20").parse().expect("--time SECONDS");
    let warmup: f64 = get("--warmup", &(secs / 5.0).to_string()).parse().expect("--warmup SECONDS");
    let dir = std::path::PathBuf::from(get("--dir", "/var/tmp/fileserver-bench"));
    let work = dir.join(format!("run-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("create --dir");

    let mut params = Params::new();
    params.insert("clients".into(), Value::Int(clients));
    params.insert("loadfile".into(), Value::Str(get("--loadfile", "")));
    params.insert("ipc".into(), Value::Str(get("--ipc", "none")));
    for b in ["sync_open", "fsync_dirs", "fsync_writes"] {
        params.insert(b.into(), Value::Bool(args.iter().any(|a| a == &format!("--{b}"))));
    }
    let ctx = CellContext {
        spec: CellSpec { workload: "fileserver".into(), params, variant: String::new(), rep: 1 },
        work_dir: work.clone(),
        cpus: 0,
        env: Default::default(),
    };
    let cpu0 = process_cpu();
    let mut cell = racehorse_engines::fileserver::FileServer.prepare(&ctx).expect("prepare");
    let ctl = Control::simple(
        Duration::from_secs_f64(warmup),
        Duration::from_secs_f64(secs),
        Arc::new(RealClock::default()),
    );
    let rec = Recorder::new();
    cell.run(&ctl, &rec).expect("run");
    cell.cleanup().expect("cleanup");
    let cpu = process_cpu().since(cpu0);
    let _ = std::fs::remove_dir_all(&work);
    let t = rec.totals();
    let window = ctl.window().map(|w| w.as_secs_f64()).unwrap_or(secs);
    let mb = t.units / 1e6;
    println!(
        "clients {clients} window {window:.2}s MB {mb:.1} MB/s {:.2} cpu_s {:.2} (user {:.2} sys {:.2}) cpu_s_per_MB {:.5} window_thread_cpu_s_per_MB {:.5} errors {}",
        mb / window,
        cpu.total_s(),
        cpu.user_s,
        cpu.kernel_s,
        cpu.total_s() / mb,
        (t.workload_cpu.user_s + t.workload_cpu.kernel_s) / mb,
        t.extra.get("errors").copied().unwrap_or(0.0),
    );
}
