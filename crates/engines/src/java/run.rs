//! One java cell: the JVM started and its data built (outside the window), the warm-up, the
//! window between two snapshots of the JVM's counters taken at the runner's edges, the
//! JVM's process tree CPU over the same edges, its memory maps before it stops, the
//! self-check, and what is stored: transactions with their latencies, the GC log's and the
//! management beans' figures, large pages (verified), the JDK.

use super::gclog::{self, GcSummary};
use super::jvm::Jvm;
use super::protocol::{histogram, Window};
use super::smaps::{self, LargePages as Maps};
use super::{LargePages, Setup};
use crate::support::jdk::Jdk;
use crate::support::proc_tree::tree_cpu;
use crate::{CellContext, Control, EngineError, Recorder, WorkerStats, Workload};
use racehorse_core::{CpuMethod, WorkloadCpu};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// How long the JVM may take to answer a snapshot (a long collection holds every thread).
const SNAPSHOT_LIMIT: Duration = Duration::from_secs(120);

pub(crate) struct JavaCell {
    setup: Setup,
    jdk: Jdk,
    args: Vec<String>,
    gc_log: PathBuf,
    dir: PathBuf,
    env: BTreeMap<String, String>,
    jvm: Option<Jvm>,
}

impl JavaCell {
    pub fn new(setup: Setup, jdk: Jdk, args: Vec<String>, gc_log: PathBuf, ctx: &CellContext) -> JavaCell {
        JavaCell { setup, jdk, args, gc_log, dir: ctx.work_dir.clone(), env: ctx.env.clone(), jvm: None }
    }
}

/// What the window measured, gathered for [`record`].
struct Measured {
    window: Window,
    cpu: racehorse_machine::rusage::CpuTime,
    gc: GcSummary,
    maps: Maps,
    build_ms: u64,
    heap_used_bytes: u64,
    jit_total_ms: Option<u64>,
}

impl Workload for JavaCell {
    fn run(&mut self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        let result = self.measure(ctl);
        if result.is_err() {
            ctl.stop();
        }
        let (m, collector) = result?;
        let jvm = self.jvm.as_mut().ok_or_else(|| EngineError::Failed("java: no JVM".into()))?;
        let said = jvm.said();
        verify_large_pages(self.setup.large_pages, &m.maps, &said)?;
        record(rec, &self.setup, &self.jdk, &self.args, &m, collector);
        Ok(())
    }

    fn cleanup(mut self: Box<Self>) -> Result<(), EngineError> {
        drop(self.jvm.take());
        Ok(())
    }
}

impl JavaCell {
    /// Starts the JVM, runs warm-up and window, stops it; the figures and the collector.
    fn measure(&mut self, ctl: &Control) -> Result<(Measured, Option<String>), EngineError> {
        let jvm = self.jvm.insert(Jvm::start(&self.jdk.java, &self.args, &self.dir, &self.env)?);
        let ready_limit = Duration::from_secs(120 + 5 * u64::from(self.setup.warehouses));
        let build_ms = jvm.ready(ctl, ready_limit)?;
        ctl.sleep_checked(ctl.warmup)?;
        ctl.begin_measure();
        let s0 = jvm.snapshot(ctl, SNAPSHOT_LIMIT)?;
        let cpu0 = tree_cpu(jvm.pid);
        ctl.sleep_checked(ctl.runtime)?;
        ctl.end_measure();
        let s1 = jvm.snapshot(ctl, SNAPSHOT_LIMIT)?;
        let cpu1 = tree_cpu(jvm.pid);
        let maps = smaps::of_process(jvm.pid).map_err(|e| EngineError::Failed(format!("java: {e}")))?;
        jvm.stop(ctl, SNAPSHOT_LIMIT)?;
        let text = std::fs::read_to_string(&self.gc_log)
            .map_err(|e| EngineError::io("java: cannot read the JVM's GC log", &self.gc_log, e))?;
        let log = gclog::parse(&text);
        let window = s1.since(&s0);
        let gc = log.window(window.uptime_ms.0 as f64, window.uptime_ms.1 as f64);
        let m = Measured {
            window,
            cpu: cpu1.since(cpu0),
            gc,
            maps,
            build_ms,
            heap_used_bytes: s1.heap_used_bytes,
            jit_total_ms: s1.jit_ms,
        };
        Ok((m, log.collector))
    }
}

/// Fails the cell when large pages were asked for and the JVM's memory maps show none.
fn verify_large_pages(asked: LargePages, maps: &Maps, said: &str) -> Result<(), EngineError> {
    let jvm_said = if said.is_empty() {
        String::new()
    } else {
        format!("; the JVM said: {}", crate::bounded_output(said))
    };
    match asked {
        LargePages::Thp if maps.anon_huge_kib == 0 => {
            let thp =
                std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
            Err(EngineError::Failed(format!(
                "java: large_pages=thp, but the JVM's memory maps (/proc/PID/smaps) show no transparent huge pages \
                 (AnonHugePages 0 kB); /sys/kernel/mm/transparent_hugepage/enabled is '{}': it must select always \
                 or madvise (a variant with thp = \"madvise\"){jvm_said}",
                thp.trim()
            )))
        }
        LargePages::Hugetlbfs if maps.hugetlb_mapped_kib == 0 => {
            let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
            let field = |k: &str| {
                meminfo.lines().find(|l| l.starts_with(k)).map(|l| l.trim().to_string()).unwrap_or_default()
            };
            Err(EngineError::Failed(format!(
                "java: large_pages=hugetlbfs, but the JVM's memory maps (/proc/PID/smaps) show no hugetlb pages \
                 ({}, {}): reserve huge pages for the heap first, e.g. a variant with sysctl = {{ \
                 \"vm.nr_hugepages\" = N }} where N x the huge page size covers the heap{jvm_said}",
                field("HugePages_Total"),
                field("HugePages_Free")
            )))
        }
        _ => Ok(()),
    }
}

/// Stores the window: transactions and latencies per type, CPU of the JVM's process tree,
/// GC and JIT figures, large pages, the JDK and the JVM's flags.
fn record(rec: &Recorder, s: &Setup, jdk: &Jdk, args: &[String], m: &Measured, collector: Option<String>) {
    let w = &m.window;
    let total = w.transactions();
    let latencies =
        w.tx.iter().filter(|(_, t)| t.count > 0).map(|(n, t)| (n.clone(), histogram(t))).collect();
    rec.submit(WorkerStats { units: total as f64, ops: total, latencies, ..Default::default() });
    rec.set_workload_cpu(WorkloadCpu {
        user_s: m.cpu.user_s,
        kernel_s: m.cpu.kernel_s,
        method: CpuMethod::Children,
    });
    for (name, t) in &w.tx {
        rec.set_extra(&format!("tx_{name}"), t.count as f64);
    }
    let large = match s.large_pages {
        LargePages::Thp => m.maps.anon_huge_kib,
        LargePages::Hugetlbfs => m.maps.hugetlb_mapped_kib,
        LargePages::None => m.maps.anon_huge_kib + m.maps.hugetlb_mapped_kib,
    };
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    for (k, v) in [
        ("warehouses", f64::from(s.warehouses)),
        ("gc_count", w.gc_count as f64),
        ("gc_time_ms", w.gc_ms as f64),
        ("gc_pauses", m.gc.pauses as f64),
        ("gc_pause_ms", m.gc.pause_ms),
        ("gc_pause_max_ms", m.gc.longest_pause_ms),
        ("heap_mib", mib(s.heap_bytes)),
        ("heap_used_mib", mib(m.heap_used_bytes)),
        ("large_pages_kib", large as f64),
        ("anon_huge_kib", m.maps.anon_huge_kib as f64),
        ("hugetlb_kib", m.maps.hugetlb_mapped_kib as f64),
        ("jvm_build_ms", m.build_ms as f64),
    ] {
        rec.set_extra(k, v);
    }
    if let Some(h) = m.gc.heap_after_mib {
        rec.set_extra("gc_heap_after_mib", h);
    }
    if let Some(j) = w.jit_ms {
        rec.set_extra("jit_ms", j as f64);
    }
    if let Some(j) = m.jit_total_ms {
        rec.set_extra("jit_total_ms", j as f64);
    }
    rec.set_setting("jdk", jdk.java.display().to_string());
    rec.set_setting("jdk version", jdk.version.clone());
    rec.set_setting("jdk vendor", jdk.vendor.clone());
    rec.set_setting("jvm", jdk.vm.clone());
    if let Some(c) = collector {
        rec.set_setting("jvm collector", c);
    }
    let flags: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .take_while(|a| *a != "-cp")
        .filter(|a| !a.starts_with("-Xlog:gc,"))
        .collect();
    rec.set_setting("jvm flags", flags.join(" "));
}
