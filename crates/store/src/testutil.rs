//! Test fixtures shared by the store's unit tests: a fully populated cell and a new run.

use crate::store::NewRun;
use racehorse_core::{
    CellResult, CellSpec, CellStatus, CpuMethod, CpuUsage, LatencyHistogram, Nanos, OpStats, Params,
    SamplePoint, Value, WorkUnit, WorkloadCpu,
};

pub fn new_run(label: &str) -> NewRun {
    NewRun {
        label: label.to_owned(),
        host: "testhost".into(),
        command: "racehorse run --suite quick".into(),
        suite_json: r#"{"name":"quick"}"#.into(),
        env_json: r#"{"kernel":"6.8.0","cpus":4}"#.into(),
        exclusivity_json: r#"{"load1":0.1,"warnings":[]}"#.into(),
        racehorse_version: "0.1.0".into(),
        cpu_method: "affinity".into(),
        inventory_name: String::new(),
        campaign: None,
        tags: Vec::new(),
    }
}

/// A cell with every field set: params of every `Value` type, samples, latencies and extra.
pub fn full_cell(rep: u32) -> CellResult {
    let mut params = Params::new();
    params.insert("cpus".into(), Value::Int(4));
    params.insert("direct".into(), Value::Bool(true));
    params.insert("ratio".into(), Value::Float(0.75));
    params.insert("whole".into(), Value::Float(3.0));
    params.insert("target".into(), Value::Str("/mnt/a b,\"c\"".into()));
    let spec = CellSpec { workload: "diskio".into(), params, variant: "plugd-on".into(), rep };
    let mut cell = CellResult::empty(spec, WorkUnit::Bytes);
    cell.units = 1.5e9;
    cell.window = Nanos(10_000_000_123);
    cell.ops = 366_211;
    cell.bytes_read = 1_000_000_000;
    cell.bytes_written = 500_000_000;
    cell.cpu = CpuUsage { user_s: 1.25, kernel_s: 7.5, steal_s: 0.01, iowait_s: 3.0, idle_s: 28.2 };
    cell.workload_cpu = WorkloadCpu { user_s: 1.0, kernel_s: 7.0, method: CpuMethod::Threads };
    cell.harness_cpu_s = 0.02;
    cell.cpus_online = 4;
    cell.extra.insert("fio_bw_kib_per_s".into(), 146_484.375);
    cell.extra.insert("tiny".into(), 1e-300);
    cell.settings.insert("sysctl vm.swappiness".into(), "10".into());
    cell.settings.insert("env LANG".into(), "C \"quoted\"".into());
    cell.profile = Some(racehorse_core::Profile {
        event: "cpu-clock".into(),
        samples: 2_000,
        images: vec![racehorse_core::ProfileEntry {
            image: "[kernel.kallsyms]".into(),
            symbol: None,
            share_pct: 61.5,
        }],
        symbols: vec![racehorse_core::ProfileEntry {
            image: "libc.so.6".into(),
            symbol: Some("<core::str::Chars as Iterator>::next".into()),
            share_pct: 7.25,
        }],
        callgraph: Some("fp".into()),
        frequency_hz: 997,
        stacks: vec![racehorse_core::FoldedStack { stack: "app;main;work;memcpy".into(), samples: 1_500 }],
        stacks_dropped_samples: 12,
        counters: vec![
            racehorse_core::Counter { event: "context-switches".into(), count: Some(4_321.0) },
            racehorse_core::Counter { event: "cycles".into(), count: None },
        ],
    });
    let mut read = LatencyHistogram::new();
    let mut write = LatencyHistogram::new();
    for v in [900u64, 1_200, 15_000, 16_000, 2_000_000, 7] {
        read.record(v);
        write.record(v * 3);
    }
    cell.latencies =
        vec![OpStats { op: "read".into(), latency: read }, OpStats { op: "write".into(), latency: write }];
    cell.samples = (0..3u32)
        .map(|i| SamplePoint {
            t_ms: u64::from(i) * 1000,
            cpu_user_pct: 12.5 + f64::from(i),
            cpu_kernel_pct: 40.0,
            cpu_iowait_pct: 5.0,
            cpu_steal_pct: 0.1,
            cpu_idle_pct: 42.4,
            run_queue: 3 + i,
            blocked: i,
            mem_free_bytes: 8 << 30,
            mem_cached_bytes: 2 << 30,
            mem_dirty_bytes: 1 << 20,
            pgpgin_per_s: 1000.5,
            pgpgout_per_s: 20.0,
            pswpin_per_s: 0.0,
            pswpout_per_s: 0.0,
            disk_read_bytes_per_s: 1.5e8,
            disk_write_bytes_per_s: 5e7,
            ctxt_per_s: 12_345.0,
        })
        .collect();
    cell
}

/// A failed cell with an awkward error message.
pub fn failed_cell() -> CellResult {
    let mut cell = full_cell(2);
    cell.status = CellStatus::Failed;
    cell.error = Some("fio exited 1: \"bad, option\"\nsecond line".into());
    cell
}
