//! Synthetic runs for tests and the compare benchmark: workloads × parameter points ×
//! repetitions with deterministic pseudo-random noise, a chosen speed-up and CPU factor.

use crate::model::Side;
use racehorse_core::rng::SplitMix64;
use racehorse_core::{
    CellResult, CellSpec, CpuUsage, Nanos, Params, RunStatus, SamplePoint, Value, WorkUnit,
};
use racehorse_store::RunInfo;

/// How a synthetic run is shaped.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    pub workloads: usize,
    /// Values of `clients` per workload (× `cpus` values gives the points).
    pub clients: Vec<i64>,
    pub cpus: Vec<i64>,
    pub reps: u32,
    /// Multiplies throughput (1.2 = 20% faster than 1.0).
    pub speed: f64,
    /// Multiplies CPU per unit.
    pub cpu_cost: f64,
    /// Relative noise amplitude (0.02 = ±2%).
    pub noise: f64,
    pub seed: u64,
    /// Give each cell latency histograms of two operations, `read` and `write`, about
    /// 100 µs × clients / speed (p99 about twice p50).
    pub latencies: bool,
}

impl Default for Shape {
    fn default() -> Self {
        Shape {
            workloads: 2,
            clients: vec![1, 2, 4, 8],
            cpus: vec![1, 2],
            reps: 3,
            speed: 1.0,
            cpu_cost: 1.0,
            noise: 0.01,
            seed: 1,
            latencies: false,
        }
    }
}

/// Deterministic noise in [-1, 1) from the shared generator.
fn noise(rng: &mut SplitMix64) -> f64 {
    rng.unit_f64() * 2.0 - 1.0
}

/// A stored-looking run record.
pub fn run_info(id: i64, label: &str) -> RunInfo {
    RunInfo {
        id,
        label: label.into(),
        started_at_unix_s: 1_795_000_000 + id * 3600,
        finished_at_unix_s: Some(1_795_000_000 + id * 3600 + 600),
        status: RunStatus::Complete,
        host: "synthetic".into(),
        command: "racehorse run synthetic".into(),
        suite_json: String::new(),
        env_json: String::new(),
        exclusivity_json: String::new(),
        racehorse_version: "0.1.0".into(),
        cpu_method: "hotplug".into(),
        cells_ok: 0,
        cells_failed: 0,
        uuid: format!("00000000-0000-4000-8000-{id:012}"),
        inventory_name: "synthetic".into(),
        campaign: None,
    }
}

fn cell(
    workload: &str,
    clients: i64,
    cpus: i64,
    rep: u32,
    shape: &Shape,
    rng: &mut SplitMix64,
) -> CellResult {
    let mut params = Params::new();
    params.insert("clients".into(), Value::Int(clients));
    params.insert("cpus".into(), Value::Int(cpus));
    let spec = CellSpec { workload: workload.into(), params, variant: "default".into(), rep };
    let mut c = CellResult::empty(spec, WorkUnit::Bytes);
    // Throughput grows with min(clients, cpus) and saturates; 50 MB/s per busy CPU.
    let busy = clients.min(cpus) as f64;
    let tput = 50e6 * busy * shape.speed * (1.0 + shape.noise * noise(rng));
    c.window = Nanos(10_000_000_000);
    c.units = tput * 10.0;
    let cpu_s = c.units * 2e-9 * shape.cpu_cost * (1.0 + shape.noise * noise(rng));
    c.cpu = CpuUsage { user_s: cpu_s * 0.3, kernel_s: cpu_s * 0.7, steal_s: 0.0, iowait_s: 0.1, idle_s: 1.0 };
    c.cpus_online = cpus as u32;
    if shape.latencies {
        c.latencies = ["read", "write"]
            .iter()
            .enumerate()
            .map(|(k, op)| {
                let mut h = racehorse_core::LatencyHistogram::new();
                let typical = 100_000.0 * clients as f64 * (1.0 + k as f64) / shape.speed;
                for i in 0..200 {
                    let tail = if i % 50 == 0 { 2.5 } else { 1.0 + f64::from(i % 10) / 20.0 };
                    h.record((typical * tail * (1.0 + shape.noise * noise(rng))) as u64);
                }
                racehorse_core::OpStats { op: op.to_string(), latency: h }
            })
            .collect();
    }
    c.samples = (1..=3)
        .map(|t| SamplePoint {
            t_ms: t * 1000,
            cpu_user_pct: 30.0,
            cpu_kernel_pct: 60.0,
            ..Default::default()
        })
        .collect();
    c
}

/// A run of `shape`: reps outermost, then workloads `w0`, `w1` …, clients, cpus.
pub fn synthetic_side(id: i64, label: &str, shape: &Shape) -> Side {
    let mut rng = SplitMix64::new(shape.seed);
    let mut cells = Vec::new();
    for rep in 1..=shape.reps {
        for w in 0..shape.workloads {
            for &clients in &shape.clients {
                for &cpus in &shape.cpus {
                    cells.push(cell(&format!("w{w}"), clients, cpus, rep, shape, &mut rng));
                }
            }
        }
    }
    Side::whole(run_info(id, label), cells)
}
