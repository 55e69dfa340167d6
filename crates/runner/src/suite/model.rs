//! What a suite is once read: its settings, its workloads (each checked against its engine's
//! option table and the harness's options, defaults filled in) and its variants, with the
//! error type that locates a problem in its file.

use super::harness;
use super::values::Adaptive;
use super::variant::{Order, Variant};
use racehorse_core::Value;
use racehorse_engines::{find, registry, OptionSpec};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// A suite problem, located in its file when it comes from one.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{origin}{msg}")]
pub struct SuiteError {
    /// "file:line:col: " or "" for command-line input.
    pub origin: String,
    pub msg: String,
}

impl SuiteError {
    pub fn usage(msg: impl Into<String>) -> Self {
        SuiteError { origin: String::new(), msg: msg.into() }
    }
    /// An error at a place recorded in [`Suite::origins`] ("" when unknown).
    pub fn with_origin(origin: Option<&String>, msg: impl Into<String>) -> Self {
        SuiteError { origin: origin.cloned().unwrap_or_default(), msg: msg.into() }
    }
    pub(crate) fn at(file: &str, text: &str, offset: usize, msg: impl Into<String>) -> Self {
        let (line, col) = line_col(text, offset);
        SuiteError { origin: format!("{file}:{line}:{col}: "), msg: msg.into() }
    }
}

/// 1-based line and column of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(before.chars().count(), |i| before[i + 1..].chars().count()) + 1;
    (line, col)
}

/// One workload of a suite, validated against its engine's option table. Every engine
/// option has at least one value (defaults filled in); more than one makes it an axis.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadEntry {
    pub engine: String,
    pub axes: BTreeMap<String, Vec<Value>>,
    pub runtime: Option<Duration>,
    pub warmup: Option<Duration>,
    pub reps: Option<u32>,
    pub cpus: Option<Vec<u32>>,
    /// The variants this workload runs under; None = all of the suite's.
    pub variants: Option<Vec<String>>,
}

/// A whole suite, ready for planning.
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    pub name: String,
    pub runtime: Duration,
    pub warmup: Duration,
    pub reps: u32,
    /// Online-CPU axis; empty means "all CPUs online now".
    pub cpus: Vec<u32>,
    /// Where disk workloads write; None = the system temp dir.
    pub dir: Option<PathBuf>,
    pub drop_caches: bool,
    /// Memory limit for the whole run (cgroup), in bytes; None = no limit.
    pub mem_limit_bytes: Option<u64>,
    /// `reps = "auto"`: repeat points until their interval is narrow enough.
    pub adaptive: Option<Adaptive>,
    pub workloads: Vec<WorkloadEntry>,
    pub variants: Vec<Variant>,
    /// How cells of several variants are ordered.
    pub order: Order,
    /// Seed of the random order; None = chosen when the plan is made (and recorded).
    pub seed: Option<u64>,
    /// Where the suite's own `cpus` and each `[[workload]]` stand in its file
    /// ("file:line:col: "; keys `cpus` and `workload.N`), for errors found when planning.
    pub origins: BTreeMap<String, String>,
    /// The built-in preset the suite is, if it is one: command-line options that make two of
    /// its workloads identical run that workload once ([`Suite::apply`]).
    pub preset: Option<String>,
}

impl Default for Suite {
    fn default() -> Self {
        Suite {
            name: "custom".into(),
            runtime: Duration::from_secs(20),
            warmup: Duration::from_secs(4),
            reps: 1,
            cpus: Vec::new(),
            dir: None,
            drop_caches: true,
            mem_limit_bytes: None,
            adaptive: None,
            workloads: Vec::new(),
            variants: Vec::new(),
            order: Order::default(),
            seed: None,
            origins: Default::default(),
            preset: None,
        }
    }
}

/// Valid engine names, for error messages.
pub fn engine_names() -> String {
    registry().iter().map(|e| e.name()).collect::<Vec<_>>().join(", ")
}

impl WorkloadEntry {
    /// Validates `values` (option name → one or more values) against the engine's option
    /// table and fills in defaults.
    /// Leaf: `Suite::parse` places its message at file:line:col, `Suite::from_what` makes it a
    /// [`SuiteError`].
    pub fn new(engine: &str, values: BTreeMap<String, Vec<Value>>) -> Result<Self, String> {
        let eng = find(engine)
            .ok_or_else(|| format!("unknown workload '{engine}'; valid workloads: {}", engine_names()))?;
        let table = eng.options();
        let mut axes = BTreeMap::new();
        for (name, vals) in values {
            if let Some(checked) = harness::every_engine_values(&name, vals.clone()) {
                axes.insert(name, checked?);
                continue;
            }
            let spec =
                table.iter().find(|o| o.name == name).ok_or_else(|| unknown_option(engine, &name, table))?;
            if vals.is_empty() {
                return Err(format!("option '{name}': the list is empty"));
            }
            let checked: Result<Vec<Value>, String> = vals.into_iter().map(|v| spec.check(v)).collect();
            axes.insert(name, checked?);
        }
        for o in table {
            if !axes.contains_key(o.name) {
                if let Some(d) = o.default_value() {
                    axes.insert(o.name.to_string(), vec![d]);
                }
            }
        }
        Ok(WorkloadEntry {
            engine: engine.to_string(),
            axes,
            runtime: None,
            warmup: None,
            reps: None,
            cpus: None,
            variants: None,
        })
    }
}

fn unknown_option(engine: &str, name: &str, table: &[OptionSpec]) -> String {
    if let Some(refused) = harness::refused_by(engine, name) {
        return refused;
    }
    let valid: Vec<&str> = table.iter().map(|o| o.name).collect();
    format!(
        "workload '{engine}' has no option '{name}'; valid options: {} (and runtime, warmup, reps, cpus, where)",
        valid.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }

    #[test]
    fn a_workload_takes_where_from_the_harness_and_refuses_pacing_it_cannot_do() {
        let w = |k: &str, v: Value| WorkloadEntry::new("micro", BTreeMap::from([(k.to_string(), vec![v])]));
        assert_eq!(
            w("where", Value::Str("guest".into())).unwrap().axes["where"],
            [Value::Str("guest".into())]
        );
        assert!(w("where", Value::Str("moon".into())).unwrap_err().contains("host or guest"));
        assert!(w("rate", Value::Float(5.0)).unwrap_err().contains("cannot run paced"));
        let e = w("clinets", Value::Int(4)).unwrap_err();
        assert!(
            e.contains("has no option 'clinets'") && e.contains("(and runtime, warmup, reps, cpus, where)"),
            "{e}"
        );
    }
}
