//! The `micro` engine: seed 000's lmbench table with lmbench3's method. One cell is one
//! benchmark (`bench`), timed by `timing` (self-calibrated intervals, warm-up, median of
//! 11, or minimum for the pointer chase; clock and loop overhead subtracted) on one pinned
//! CPU. Latencies count operations (µs per op in the extra `latency_us`), bandwidths count
//! bytes (MB/s, MB = 10^6, in `mb_per_s`); working sets follow the cache levels from sysfs.
//! A latency whose overhead subtraction leaves less than its noise is stored as below
//! resolution, never as a number (see `record.rs`).

pub mod caches;
pub(crate) mod chase;
pub(crate) mod child;
mod files;
pub(crate) mod mem;
mod pipes;
mod procs;
mod record;
mod run;
mod syscalls;
pub(crate) mod timing;

use crate::info::EngineInfo;
use crate::{
    AreaRule, Caps, CellContext, Engine, EngineError, Figure, OptKind, OptionSpec, SummaryArea, Workload,
};
use racehorse_core::{CellSpec, Value, WorkUnit};

pub struct Micro;

/// Every benchmark, in the order of seed 000's table.
pub const BENCHES: &[&str] = &[
    "null",
    "read",
    "write",
    "stat",
    "fstat",
    "open_close",
    "select_file",
    "select_tcp",
    "sig_install",
    "sig_catch",
    "prot_fault",
    "fork",
    "fork_exec",
    "fork_sh",
    "pipe",
    "ctx",
    "mmap",
    "bw_rd",
    "bw_wr",
    "bw_rdwr",
    "bw_cp",
    "bw_frd",
    "bw_fwr",
    "bw_fcp",
    "bw_bzero",
    "bw_bcopy",
    "bw_bcopy_aligned",
    "bw_ubcopy",
    "bw_ubcopy_aligned",
    "file_rd",
    "file_rd_o2c",
    "mmap_rd",
    "mmap_rd_o2c",
    "chase",
    "chase_rand",
    "caches",
];

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "bench",
        kind: OptKind::Choice(BENCHES),
        default: "null",
        help: "the benchmark (see docs/workloads/micro.md); an axis of several makes the table",
    },
    OptionSpec {
        name: "level",
        kind: OptKind::Choice(&["l1", "l2", "l3", "l4", "mem", "size"]),
        default: "l1",
        help: "working set of bandwidth and chase benchmarks: inside this cache level (sizes from sysfs; \
               a copy's two buffers share it), main memory, or `size` (per buffer, as bw_mem)",
    },
    OptionSpec {
        name: "size",
        kind: OptKind::Size { min: 512, max: 1 << 40 },
        default: "4m",
        help: "bytes for level=size, for mmap (the mapping) and the largest size of `caches`",
    },
    OptionSpec {
        name: "fds",
        kind: OptKind::Int { min: 1, max: 1000 },
        default: "100",
        help: "descriptors watched by select_file and select_tcp (lmbench: 10, 100, 250, 500)",
    },
    OptionSpec {
        name: "stride",
        kind: OptKind::Int { min: 8, max: 1 << 20 },
        default: "64",
        help: "bytes between the chase's consecutive loads (chase_rand: 16 by lmbench's script)",
    },
    OptionSpec {
        name: "tries",
        kind: OptKind::Int { min: 1, max: 101 },
        default: "11",
        help: "timed intervals; the median is reported (the minimum for chase and caches)",
    },
    OptionSpec {
        name: "enough_ms",
        kind: OptKind::Int { min: 1, max: 10_000 },
        default: "5",
        help: "least length of one timed interval in ms (lmbench's ENOUGH)",
    },
    OptionSpec {
        name: "min_window_ms",
        kind: OptKind::Int { min: 0, max: 60_000 },
        default: "400",
        help: "the tries of the reported figure (and of each baseline) last at least this long \
               together, intervals stretched beyond enough_ms, so that the window (about 0.5 s) spans \
               many CPU ticks (not for caches; 0: enough_ms alone)",
    },
];

/// What a benchmark measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Latency,
    Bandwidth,
    Chase,
}

pub(crate) fn kind_of(bench: &str) -> Kind {
    if bench.starts_with("bw_") || bench.starts_with("file_rd") || bench.starts_with("mmap_rd") {
        Kind::Bandwidth
    } else if bench.starts_with("chase") || bench == "caches" {
        Kind::Chase
    } else {
        Kind::Latency
    }
}

fn bench_of(spec: &CellSpec) -> &str {
    match spec.params.get("bench") {
        Some(Value::Str(s)) => s,
        _ => "null",
    }
}

/// The figures of a benchmark's timings (`record.rs`): the net result, the gross time and
/// what was taken off it, and the cache curve of `bench=caches`.
const FIGURES: &[Figure] = &[
    Figure::info("latency_us", "latency", "µs"),
    Figure::info("latency_ns", "latency per dependent load", "ns"),
    Figure::info("mb_per_s", "bandwidth", "MB/s"),
    Figure::info("size_bytes", "size", "bytes"),
    Figure::info("iterations", "iterations timed", "count"),
    Figure::info("gross_us", "gross time per operation", "µs"),
    Figure::info("gross_ns", "gross time per operation", "ns"),
    Figure::info("overhead_ns", "baselines taken off per operation", "ns"),
    Figure::info("noise_ns", "timing noise per operation", "ns"),
    Figure::info("loop_ns", "empty loop per iteration", "ns"),
    Figure::info("baseline*_us", "baseline * per operation", "µs"),
    Figure::info("chase_ns_*k", "load latency at * KiB", "ns"),
    Figure::info("sysfs_l*_bytes", "L* cache size in sysfs", "bytes"),
    Figure::info("detected_*_bytes", "cache boundary * found", "bytes"),
    Figure::info("disagreements", "boundaries that disagree with sysfs", "count"),
];

/// What `Micro` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "micro",
    about: "lmbench3-like kernel and memory micro-benchmarks (latency µs/op, bandwidth MB/s per cache level)",
    area: "Kernel functions",
    summary_area: AreaRule::Fixed(SummaryArea::KernelFunctions),
    unit: WorkUnit::Ops,
    caps: Caps { needs_disk: true, ..Caps::NONE },
    options: OPTIONS,
    figures: FIGURES,
    shortcuts: &[],
};

impl Engine for Micro {
    fn info(&self) -> &'static EngineInfo {
        &INFO
    }
    fn unit_for(&self, spec: &CellSpec) -> WorkUnit {
        match kind_of(bench_of(spec)) {
            Kind::Bandwidth => WorkUnit::Bytes,
            _ => WorkUnit::Ops,
        }
    }
    fn validate(&self, ctx: &CellContext) -> Result<(), EngineError> {
        run::Setup::of(ctx).map(|_| ())
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        Ok(Box::new(run::Cell::new(run::Setup::of(ctx)?, ctx.work_dir.clone())))
    }
}

#[cfg(test)]
mod tests;
