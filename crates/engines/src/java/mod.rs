//! The `java` engine: seed 000's server-side Java benchmark and seed 002's JVM study in one
//! workload of our own. A warehouse-style transaction mix (new-order, payment, order-status,
//! delivery, stock-level over in-memory warehouses, districts, customers, orders and stock)
//! written in Java, shipped inside racehorse as source, compiled with the installed JDK's
//! `javac` into a cache and run in a JVM with one thread per warehouse. Warehouses are the
//! load axis (a ramp by default); heap size, collector, large pages and any other JVM flags
//! are options. Units are business transactions; the JVM's collections, pauses, heap after
//! collection and JIT time in the window are stored as extras, and large pages are verified
//! in the process's memory maps. The program checks its totals at the end.

mod build;
mod gclog;
mod jvm;
mod protocol;
mod run;
mod smaps;

use crate::info::{EngineInfo, Shortcut, ShortcutForm};
use crate::support::jdk::Jdk;
use crate::{
    AreaRule, Caps, CellContext, Engine, EngineError, Figure, OptKind, OptionSpec, RampPoint, SummaryArea,
    Workload,
};
use racehorse_core::{CellSpec, Params, Value, WorkUnit};

pub use build::cache_root;

pub struct Java;

/// The environment variable that makes the Java program corrupt one total before its
/// self-check (the tests' way to see the check fail a cell; the Java program reads it).
#[cfg(test)]
pub const FAULT_ENV: &str = "RACEHORSE_JAVA_INJECT_FAULT";

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "warehouses",
        kind: OptKind::Int { min: 0, max: 1024 },
        default: "0",
        help: "warehouses of the cell, one thread each (the load); 0 = a ramp 1, 2, 3 ... up to \
               max_warehouses, one cell per load (seed 000's chart)",
    },
    OptionSpec {
        name: "max_warehouses",
        kind: OptKind::Int { min: 0, max: 1024 },
        default: "0",
        help: "ramp: the highest load; 0 = twice the cell's CPUs",
    },
    OptionSpec {
        name: "heap",
        kind: OptKind::Size { min: 0, max: 1 << 40 },
        default: "512m",
        help: "the heap: -Xms and -Xmx both (a fixed heap), e.g. 256m, 2g; 0 = the JVM's own sizing",
    },
    OptionSpec {
        name: "gc",
        kind: OptKind::Choice(GC_CHOICES),
        default: "g1",
        help: "the garbage collector: serial, parallel, g1 or zgc (refused where the JDK has no ZGC)",
    },
    OptionSpec {
        name: "large_pages",
        kind: OptKind::Choice(&["none", "thp", "hugetlbfs"]),
        default: "none",
        help: "large pages for the heap: thp (-XX:+UseTransparentHugePages; THP enabled or madvise) or \
               hugetlbfs (-XX:+UseLargePages; pages reserved in vm.nr_hugepages, e.g. by a variant); the \
               cell fails unless the JVM's memory maps show them",
    },
    OptionSpec {
        name: "jvm_flags",
        kind: OptKind::Str,
        default: "",
        help: "other JVM flags, split at spaces and given after racehorse's own (so they win), e.g. \
               \"-XX:+AlwaysPreTouch -XX:TieredStopAtLevel=1\"",
    },
    OptionSpec {
        name: "seed",
        kind: OptKind::Int { min: 0, max: i64::MAX },
        default: "1",
        help: "seed of the data and of each warehouse thread's choices",
    },
];

/// The collectors of the `gc` option.
pub const GC_CHOICES: &[&str] = &["g1", "parallel", "serial", "zgc"];

/// The JVM flag that selects collector `gc`, and the name `-XX:+Use…GC` takes.
fn gc_flag(gc: &str) -> (&'static str, &'static str) {
    match gc {
        "parallel" => ("-XX:+UseParallelGC", "ParallelGC"),
        "serial" => ("-XX:+UseSerialGC", "SerialGC"),
        "zgc" => ("-XX:+UseZGC", "ZGC"),
        _ => ("-XX:+UseG1GC", "G1GC"),
    }
}

/// Large pages asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LargePages {
    None,
    Thp,
    Hugetlbfs,
}

/// A cell's settings, checked.
#[derive(Debug, Clone)]
pub(crate) struct Setup {
    pub warehouses: u32,
    pub heap_bytes: u64,
    pub gc: String,
    pub large_pages: LargePages,
    pub jvm_flags: Vec<String>,
    pub seed: u64,
}

impl Setup {
    fn of(ctx: &CellContext) -> Result<Setup, EngineError> {
        let heap_bytes = ctx.get_u64("heap")?;
        if heap_bytes > 0 && heap_bytes < 16 << 20 {
            return Err(EngineError::Usage(format!(
                "java: heap = {heap_bytes} bytes is too small for the warehouses' data; give at least 16m, or 0 \
                 for the JVM's own sizing"
            )));
        }
        let large_pages = match ctx.get_str("large_pages")? {
            "thp" => LargePages::Thp,
            "hugetlbfs" => LargePages::Hugetlbfs,
            _ => LargePages::None,
        };
        let jvm_flags = match ctx.spec.params.get("jvm_flags") {
            Some(Value::Str(s)) => s.split_whitespace().map(str::to_string).collect(),
            _ => Vec::new(),
        };
        Ok(Setup {
            // A ramp's planned cell (the run's warm-up runs it as it is) runs its first load.
            warehouses: u32::try_from(ctx.get_u64("warehouses")?.max(1)).unwrap_or(1),
            heap_bytes,
            gc: ctx.get_str("gc")?.to_string(),
            large_pages,
            jvm_flags,
            seed: ctx.get_u64("seed")?,
        })
    }

    /// The JVM's arguments: heap, collector, large pages, GC log, the user's flags, then the
    /// program and its arguments.
    fn jvm_args(&self, gc_log: &std::path::Path, classes: &std::path::Path) -> Vec<String> {
        let mut a = Vec::new();
        if self.heap_bytes > 0 {
            let kib = self.heap_bytes / 1024;
            a.push(format!("-Xms{kib}k"));
            a.push(format!("-Xmx{kib}k"));
        }
        a.push(gc_flag(&self.gc).0.to_string());
        match self.large_pages {
            LargePages::Thp => a.push("-XX:+UseTransparentHugePages".into()),
            LargePages::Hugetlbfs => a.push("-XX:+UseLargePages".into()),
            LargePages::None => {}
        }
        let log = gc_log.display().to_string();
        let file = if log.contains(':') { format!("\"{log}\"") } else { log };
        a.push(format!("-Xlog:gc,gc+phases:file={file}:uptimemillis,tags"));
        a.extend(self.jvm_flags.iter().cloned());
        a.push("-cp".into());
        a.push(classes.display().to_string());
        a.push(build::MAIN_CLASS.into());
        a.push(self.warehouses.to_string());
        a.push(self.seed.to_string());
        a
    }
}

/// `--warehouses 1,2,4`.
const WAREHOUSES_SHORTCUT: Shortcut = Shortcut {
    flag: "warehouses",
    option: "warehouses",
    form: ShortcutForm::List,
    value_name: "N,...",
    help: "Warehouses of the java engine (threads), e.g. 1,2,4 (a list is an axis; 0 = a ramp)",
};

/// The collector's and the JIT's figures in the window (compared), the transactions per
/// kind, the heap and its pages.
const FIGURES: &[Figure] = &[
    Figure::lower("gc_time_ms", "GC time in window", "ms"),
    Figure::lower("gc_pause_ms", "GC pause time", "ms"),
    Figure::lower("gc_pause_max_ms", "longest GC pause", "ms"),
    Figure::lower("gc_count", "collections", "GCs"),
    Figure::lower("gc_heap_after_mib", "heap after GC", "MiB"),
    Figure::lower("jit_ms", "JIT time in window", "ms"),
    Figure::info("jit_total_ms", "JIT time in the JVM's life", "ms"),
    Figure::info("gc_pauses", "GC pauses", "count"),
    Figure::info("tx_*", "* transactions", "count"),
    Figure::info("warehouses", "warehouses", "count"),
    Figure::info("heap_mib", "heap size", "MiB"),
    Figure::info("heap_used_mib", "heap used", "MiB"),
    Figure::info("large_pages_kib", "heap in large pages", "KiB"),
    Figure::info("anon_huge_kib", "anonymous huge pages", "KiB"),
    Figure::info("hugetlb_kib", "hugetlbfs pages mapped", "KiB"),
    Figure::info("jvm_build_ms", "JVM start and build", "ms"),
];

/// What `Java` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "java",
    about: "seed 000's server-side Java: a warehouse transaction mix (our own Java, compiled with the JDK's javac) \
            in a JVM, one thread per warehouse; transactions/s over a warehouse ramp, GC and JIT figures per cell",
    area: "Java",
    summary_area: AreaRule::Fixed(SummaryArea::Java),
    unit: WorkUnit::Transactions,
    caps: Caps { needs_disk: true, ..Caps::NONE },
    options: OPTIONS,
    figures: FIGURES,
    shortcuts: &[WAREHOUSES_SHORTCUT],
};

/// The highest load of a ramp: `max_warehouses`, else twice the cell's CPUs.
fn ramp_max(spec: &CellSpec) -> u64 {
    let get = |k: &str| spec.params.get(k).and_then(Value::as_u64).unwrap_or(0);
    match get("max_warehouses") {
        0 => 2 * get("cpus").max(1),
        n => n,
    }
}

/// Refuses collector `gc` (a usage error, before the run) where `jdk`'s JVM does not start
/// with it.
fn refuse_missing_gc(jdk: &Jdk, gc: &str) -> Result<(), EngineError> {
    let (flag, name) = gc_flag(gc);
    match jdk.lacks_gc(name) {
        None => Ok(()),
        Some(why) => Err(EngineError::Usage(format!(
            "java: gc={gc}, but the JVM {} ({}) does not start with {flag}: {why}; choose gc=g1, parallel or \
             serial, or a JDK with it (ZGC: 15 or later on x86-64 or aarch64) through JAVA_HOME",
            jdk.java.display(),
            jdk.describe()
        ))),
    }
}

impl Engine for Java {
    fn info(&self) -> &'static EngineInfo {
        &INFO
    }
    fn check(&self) -> Result<(), EngineError> {
        Jdk::find()?.javac().map(|_| ())
    }
    fn validate(&self, ctx: &CellContext) -> Result<(), EngineError> {
        let s = Setup::of(ctx)?;
        if s.gc == "zgc" {
            refuse_missing_gc(&Jdk::find()?, &s.gc)?;
        }
        Ok(())
    }
    fn ramp_next(&self, planned: &CellSpec, done: &[RampPoint]) -> Option<Params> {
        if planned.params.get("warehouses").and_then(Value::as_u64) != Some(0) {
            return None;
        }
        if done.last().is_some_and(|p| p.units_per_s.is_none()) {
            return None;
        }
        let next = done.len() as u64 + 1;
        if next > ramp_max(planned) {
            return None;
        }
        let mut params = planned.params.clone();
        params.insert("warehouses".into(), Value::Int(next as i64));
        Some(params)
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        let setup = Setup::of(ctx)?;
        let jdk = Jdk::find()?;
        let built = build::classes(&jdk, &cache_root())?;
        let gc_log = ctx.work_dir.join("gc.log");
        let args = setup.jvm_args(&gc_log, &built.classes);
        Ok(Box::new(run::JavaCell::new(setup, jdk, args, gc_log, ctx)))
    }
}

#[cfg(test)]
mod tests;
