//! Built-in suites users can run by name (`racehorse run quick`): one TOML file each in
//! crates/runner/presets/, built into the binary and parsed like any suite file, then fitted
//! to the machine.
//!
//! The files are static. Where a preset depends on the machine, its file holds the value for
//! a reference machine ([`REFERENCE_CPUS`] CPUs; L1, L2 and L3 caches) and says so in its
//! header, and `fit` replaces that value after parsing, one adjustment per preset:
//! - `quick`: `cpus` = N (N = online CPUs); without root the cells that change the machine
//!   (paging's memory cgroup) are left out, with a note;
//! - `quick-fileserver`, `reaim`: `cpus` = 1 and N; `reaim`'s `max_users` = 64 per CPU;
//! - `standard`: `cpus` = 1..N;
//! - `hotplug`: seed 003's client counts and plugd settings scaled by N/16 (see hotplug.toml);
//! - `lmbench`: `level` = the cache levels sysfs lists, then main memory;
//! - `java-heap-gc`: `warehouses` = N, `heap` = 32m + 48m per warehouse (tight) and four times
//!   that (roomy).
//!
//! The others are the same on every machine.

use super::model::{Suite, SuiteError};
use racehorse_core::Value;

/// Names and one-line descriptions of the presets.
pub const PRESETS: &[(&str, &str)] = &[
    (
        "quick",
        "a tour of every built-in area, one short cell each (file server, kernel micro-benchmarks, disk, \
         network, compute, mix, OLTP on SQLite, paging as root), ending in the per-area table; 1 rep (~3 min)",
    ),
    ("quick-fileserver", "fileserver at 1 and 4 clients on 1 and all CPUs, 10 s windows, 2 reps (~2-3 min)"),
    ("standard", "fileserver at 1, 4, 8 and 16 clients on 1..all CPUs, 30 s windows, 3 reps"),
    (
        "disk-configs",
        "seed 004: diskio sequential write/rewrite/read and random write/read, 8k and 64k records, 1/8/32 \
         processes, direct and page cache, 2 GiB per cell under a 512 MiB memory limit (root), 3 reps",
    ),
    (
        "disk-regression",
        "seed 001: IOzone write, rewrite, read, reread and overall, 64k records, a 512 MiB file four times \
         the 128 MiB memory limit (root, the seed's ballast rule), 3 reps; add targets with --opt target=/a,/b",
    ),
    (
        "hotplug",
        "seed 003: fileserver with ipc=mq_procs over 10 client counts (scaled to the machine), without hotplug \
         and under racehorse plugd with two settings (cpu_min, cpu_max, update); 30 s windows, 2 reps (root)",
    ),
    (
        "lmbench",
        "seed 000's lmbench table with the micro engine: kernel latencies, select over 10-500 descriptors, bandwidths and \
         the memory chase inside each cache level and main memory, the cache sweep; 1 rep (about 70 s)",
    ),
    (
        "net",
        "seed 000's uperf suite with the net engine on a loopback peer: rr 1x1, 200x1000, 200x30k and \
         30k streams (read, write) at 1, 10, 50 and 250 connections; 20 s windows, 1 rep (~9 min); \
         --peer HOST:PORT for a `racehorse serve` elsewhere",
    ),
    (
        "reaim",
        "seed 000's re-aim study, quick: mix ramps of fserver and compute (re-aim 7's mixes) from 1 user until \
         throughput drops after its peak, on 1 and all CPUs; small disk files; 1 rep (< 10 min on 2 CPUs)",
    ),
    (
        "compute",
        "seed 000's compute-intense suite, quick sizes (< 2 s per case): the integer and floating-point suites and \
         telco, each case in its own pinned process, self-checked; scores and their geometric means; 5 reps (~2 min)",
    ),
    (
        "compute-standard",
        "the compute suite in its standard sizes (5-30 s per case); 3 reps (~30 min)",
    ),
    (
        "java-heap-gc",
        "seed 002's JVM study, small: the java warehouse mix at one warehouse per CPU under a tight and a roomy \
         heap and two collectors (g1, parallel); 10 s windows after 5 s warm-up, 3 reps (~4 min on 2 CPUs)",
    ),
];

/// The CPU count the machine-dependent values in the preset files are written for (seed
/// 003's machine): on such a machine every preset but `lmbench` is its file as written.
pub const REFERENCE_CPUS: u32 = 16;

/// Each preset's file, in the order of [`PRESETS`].
const FILES: &[(&str, &str)] = &[
    ("quick", include_str!("../../presets/quick.toml")),
    ("quick-fileserver", include_str!("../../presets/quick-fileserver.toml")),
    ("standard", include_str!("../../presets/standard.toml")),
    ("disk-configs", include_str!("../../presets/disk-configs.toml")),
    ("disk-regression", include_str!("../../presets/disk-regression.toml")),
    ("hotplug", include_str!("../../presets/hotplug.toml")),
    ("lmbench", include_str!("../../presets/lmbench.toml")),
    ("net", include_str!("../../presets/net.toml")),
    ("reaim", include_str!("../../presets/reaim.toml")),
    ("compute", include_str!("../../presets/compute.toml")),
    ("compute-standard", include_str!("../../presets/compute-standard.toml")),
    ("java-heap-gc", include_str!("../../presets/java-heap-gc.toml")),
];

/// `java-heap-gc`'s tight heap: this much plus [`JAVA_HEAP_PER_WAREHOUSE_MIB`] per warehouse,
/// about twice the program's live data (10 MiB of items and about 25 MiB per warehouse: 36 MiB
/// after a full collection at one warehouse); the roomy heap is four times the tight one.
const JAVA_HEAP_BASE_MIB: i64 = 32;
const JAVA_HEAP_PER_WAREHOUSE_MIB: i64 = 48;

/// re-aim's ramp goes up to this many users per CPU (`reaim`'s `max_users`).
const REAIM_USERS_PER_CPU: u32 = 64;

/// The file of preset `name` as written (the reference machine's values).
pub fn preset_file(name: &str) -> Option<&'static str> {
    FILES.iter().find(|(n, _)| *n == name).map(|(_, text)| *text)
}

/// The suite text of preset `name` for a machine with `all_cpus` CPUs: its file, followed by
/// comment lines giving the values that replace the file's on this machine, if any.
pub fn preset_text(name: &str, all_cpus: u32) -> Option<String> {
    let text = preset_file(name)?;
    let notes = load(name, text, all_cpus).map(|(_, notes)| notes).unwrap_or_default();
    if notes.is_empty() {
        return Some(text.to_string());
    }
    let mut out = format!("{text}\n# Fitted to this machine ({all_cpus} CPUs) when loaded:\n");
    for n in notes {
        out.push_str(&format!("#   {n}\n"));
    }
    Some(out)
}

/// The parsed preset, fitted to a machine with `all_cpus` CPUs and marked as the preset
/// ([`Suite::preset`]).
pub fn preset(name: &str, all_cpus: u32) -> Option<Result<Suite, SuiteError>> {
    let text = preset_file(name)?;
    let fitted = load(name, text, all_cpus);
    Some(fitted.map(|(suite, _)| Suite { preset: Some(name.to_string()), ..suite }))
}

/// What fitting preset `name` to this machine left out and why (`[[workload]] 8 (paging)
/// left out: needs root`), for the user to be told before the run.
pub fn left_out(name: &str, all_cpus: u32) -> Vec<String> {
    let Some(text) = preset_file(name) else { return Vec::new() };
    let notes = load(name, text, all_cpus).map(|(_, notes)| notes).unwrap_or_default();
    notes.into_iter().filter(|n| n.contains(" left out: ")).collect()
}

/// Parses preset `name`'s file `text` and fits it to the machine; returns the suite and one
/// line (TOML-like) for each value replaced.
fn load(name: &str, text: &str, all_cpus: u32) -> Result<(Suite, Vec<String>), SuiteError> {
    load_as(name, text, all_cpus, is_root())
}

/// [`load`] for a process that is root or not.
fn load_as(name: &str, text: &str, all_cpus: u32, root: bool) -> Result<(Suite, Vec<String>), SuiteError> {
    let suite = Suite::parse(&format!("<preset {name}>"), text)?;
    let mut f = Fit::new(suite, text);
    fit(name, &mut f, all_cpus.max(1))?;
    if name == "quick" && !root {
        f.drop_machine_changers("needs root");
    }
    Ok((f.suite, f.notes))
}

/// The machine-dependent part of each preset (see the module's documentation and each file's
/// header), for a machine with `all` (≥ 1) CPUs.
fn fit(name: &str, f: &mut Fit, all: u32) -> Result<(), SuiteError> {
    match name {
        "quick" => f.set_cpus(vec![all]),
        "quick-fileserver" => f.set_cpus(one_and_all(all)),
        "standard" => f.set_cpus((1..=all).collect()),
        "reaim" => {
            f.set_cpus(one_and_all(all));
            let users = i64::from(REAIM_USERS_PER_CPU * all);
            f.map_axis("max_users", |_| vec![Value::Int(users)])?;
        }
        "hotplug" => fit_hotplug(f, all)?,
        "java-heap-gc" => {
            f.map_axis("warehouses", |_| vec![Value::Int(i64::from(all))])?;
            let tight_mib = JAVA_HEAP_BASE_MIB + JAVA_HEAP_PER_WAREHOUSE_MIB * i64::from(all);
            let heaps = [tight_mib, 4 * tight_mib].map(|m| Value::Str(format!("{m}m")));
            f.map_axis("heap", |_| heaps.to_vec())?;
        }
        "lmbench" => {
            let levels: Vec<Value> = micro_levels().into_iter().map(Value::Str).collect();
            f.map_axis("level", |_| levels.clone())?;
        }
        _ => {}
    }
    Ok(())
}

/// `hotplug`: seed 003's values for 16 CPUs scaled to `all` CPUs: client counts by all/16 (at
/// least a quarter), rounded, at least 1, distinct; each plugd variant's `cpu_min` rounded down
/// (at least 1) and a `cpu_max` other than 0 (all CPUs) rounded up (at least `cpu_min`), its
/// name rebuilt from them.
fn fit_hotplug(f: &mut Fit, all: u32) -> Result<(), SuiteError> {
    let factor = (f64::from(all) / f64::from(REFERENCE_CPUS)).max(0.25);
    f.map_axis("clients", |seed| {
        let mut v: Vec<Value> = seed
            .iter()
            .filter_map(Value::as_f64)
            .map(|c| Value::Int(((c * factor).round() as i64).max(1)))
            .collect();
        v.dedup();
        v
    })?;
    for (i, v) in f.suite.variants.iter_mut().enumerate() {
        let Some(p) = v.plugd.as_mut().filter(|p| p.cpu_min.is_some()) else { continue };
        let min = (p.cpu_min.unwrap_or(1) * all / REFERENCE_CPUS).max(1);
        let max = match p.cpu_max.unwrap_or(0) {
            0 => 0,
            m => (m * all).div_ceil(REFERENCE_CPUS).max(min),
        };
        let update = p.update.unwrap_or(1);
        (p.cpu_min, p.cpu_max) = (Some(min), Some(max));
        let max_label = if max == 0 { "all".to_string() } else { max.to_string() };
        v.name = format!("plugd-{min}-{max_label}-{update}s");
        f.notes.push(format!(
            "[[variant]] {}: name = \"{}\", plugd = {{ cpu_min = {min}, cpu_max = {max}, update = {update} }}",
            i + 1,
            v.name
        ));
    }
    Ok(())
}

/// The cache levels of this machine (sysfs) as `level` values, then main memory.
fn micro_levels() -> Vec<String> {
    let found = racehorse_engines::micro::caches::from_sysfs(&racehorse_machine::SysRoot::host(), 0)
        .unwrap_or_default();
    let mut v: Vec<String> = found.iter().map(|l| format!("l{}", l.level)).collect();
    v.dedup();
    v.push("mem".into());
    v
}

/// Whether this process runs as root (effective user id 0).
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// 1 and `all`, once each.
fn one_and_all(all: u32) -> Vec<u32> {
    let mut v = vec![1, all];
    v.dedup();
    v
}

/// A parsed preset being fitted to the machine, noting each value it replaces.
struct Fit {
    suite: Suite,
    /// For each `[[workload]]` of the file, the keys it sets.
    written: Vec<Vec<String>>,
    notes: Vec<String>,
}

impl Fit {
    fn new(suite: Suite, text: &str) -> Fit {
        let table: toml::Table = toml::from_str(text).unwrap_or_default();
        let tables = table.get("workload").and_then(toml::Value::as_array).cloned().unwrap_or_default();
        let written = tables
            .iter()
            .map(|t| t.as_table().map(|t| t.keys().cloned().collect()).unwrap_or_default())
            .collect();
        Fit { suite, written, notes: Vec::new() }
    }

    fn set_cpus(&mut self, cpus: Vec<u32>) {
        self.notes.push(format!("cpus = {cpus:?}"));
        self.suite.cpus = cpus;
    }

    /// Leaves out the workloads whose engine changes the machine (a cgroup, a sysctl), with
    /// a note saying `why`. Later workloads keep their place in error messages: their origins
    /// move down with them.
    fn drop_machine_changers(&mut self, why: &str) {
        let changes =
            |engine: &str| racehorse_engines::find(engine).is_some_and(|e| e.info().caps.changes_machine);
        let mut kept = 0;
        let workloads = std::mem::take(&mut self.suite.workloads);
        for (i, w) in workloads.into_iter().enumerate() {
            if changes(&w.engine) {
                self.notes.push(format!("[[workload]] {} ({}) left out: {why}", i + 1, w.engine));
                continue;
            }
            if kept != i {
                if let Some(o) = self.suite.origins.remove(&format!("workload.{i}")) {
                    self.suite.origins.insert(format!("workload.{kept}"), o);
                }
                self.written.swap(kept, i);
            }
            self.suite.workloads.push(w);
            kept += 1;
        }
        self.written.truncate(kept);
    }

    /// Replaces option `name` of every workload whose table in the file sets it with
    /// `new(values in the file)`, checked against the engine's option table.
    fn map_axis(&mut self, name: &str, new: impl Fn(&[Value]) -> Vec<Value>) -> Result<(), SuiteError> {
        for (i, w) in self.suite.workloads.iter_mut().enumerate() {
            if !self.written.get(i).is_some_and(|keys| keys.iter().any(|k| k == name)) {
                continue;
            }
            let origin = self.suite.origins.get(&format!("workload.{i}"));
            let err = |msg: String| SuiteError::with_origin(origin, msg);
            let spec = racehorse_engines::find(&w.engine)
                .and_then(|e| e.options().iter().find(|o| o.name == name))
                .ok_or_else(|| err(format!("workload '{}' has no option '{name}'", w.engine)))?;
            let values = new(w.axes.get(name).map_or(&[][..], Vec::as_slice));
            let checked: Result<Vec<Value>, String> = values.into_iter().map(|v| spec.check(v)).collect();
            let checked = checked.map_err(err)?;
            self.notes.push(format!(
                "[[workload]] {} ({}): {name} = {}",
                i + 1,
                w.engine,
                toml_values(&checked)
            ));
            w.axes.insert(name.to_string(), checked);
        }
        Ok(())
    }
}

/// Values as TOML writes them: one value, or a list.
fn toml_values(values: &[Value]) -> String {
    let one = |v: &Value| match v {
        Value::Str(s) => format!("{s:?}"),
        other => other.to_string(),
    };
    match values {
        [v] => one(v),
        _ => format!("[{}]", values.iter().map(one).collect::<Vec<_>>().join(", ")),
    }
}

#[cfg(test)]
#[path = "presets_tests.rs"]
mod tests;
