//! From JMH's result to the cell: units (operations in racehorse's window), the workload CPU,
//! and JMH's own figures as extras (numbers) and settings (words).
//!
//! Extras: `jmh_score`, `jmh_score_error` (absent where JMH has none: one iteration),
//! `jmh_score_ci_low` / `_high`, `jmh_fork_score` (the measured fork's mean, in the score's
//! unit), `jmh_ops_per_s` (`thrpt`) or `jmh_ns_per_op` (time modes), percentiles
//! `jmh_p50` … `jmh_p100` where JMH gives them (sample mode), `jmh_threads`, `jmh_forks`,
//! `jmh_iterations`, `jmh_warmup_iterations`, `cpu_us_per_op`, and each secondary metric as
//! `jmh.<name>`. Settings: `jmh_benchmark`, `jmh_mode`, `jmh_unit`, `jmh_params`,
//! `jmh_version`, `jmh_jvm`, `jmh_jvm_args`, `jmh_vm`.

use super::json::{normalise, BenchResult, Mode, Normalised};
use super::Setup;
use crate::{EngineError, Recorder};
use racehorse_core::{CpuMethod, WorkloadCpu};
use racehorse_machine::rusage::CpuTime;

/// The one result of a cell's JMH run (one benchmark, one parameter combination).
fn the_result<'a>(s: &Setup, results: &'a [BenchResult]) -> Result<&'a BenchResult, EngineError> {
    match results {
        [one] if one.benchmark == s.benchmark => Ok(one),
        [one] => {
            Err(EngineError::Failed(format!("JMH ran {} where {} was asked", one.benchmark, s.benchmark)))
        }
        [] => Err(EngineError::Failed(format!("JMH's JSON result holds no result for {}", s.benchmark))),
        many => {
            let combos: Vec<String> = many.iter().map(|r| format!("({})", r.params_text())).collect();
            Err(EngineError::Usage(format!(
                "JMH ran {} parameter combinations of {}: {}; a cell runs one: pin every @Param with \
                 -o params='name=value …' (a list is an axis)",
                many.len(),
                s.benchmark,
                crate::bounded_output(&combos.join(" "))
            )))
        }
    }
}

/// Operations in a window of `window_s` seconds of the measured fork (see the module docs of
/// `jmh`); None where the unit is not one JMH writes.
pub(super) fn units(r: &BenchResult, window_s: f64) -> Option<f64> {
    let fork = r.primary.fork_mean(r.primary.raw.len().max(r.primary.histogram.len()).saturating_sub(1));
    let mean = fork.unwrap_or(r.primary.score);
    match (r.mode, normalise(mean, &r.primary.unit)?) {
        (Mode::SingleShot, _) => {
            Some(f64::from(r.measurement_iterations) * r.measurement_batch_size as f64 * f64::from(r.threads))
        }
        (_, Normalised::OpsPerSecond(ops)) => Some(ops * window_s),
        (_, Normalised::NanosPerOp(ns)) if ns > 0.0 => Some(f64::from(r.threads) * window_s * 1e9 / ns),
        _ => None,
    }
}

/// A secondary metric's name as an extra's: `·gc.alloc.rate` → `jmh.gc.alloc.rate`.
fn extra_name(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '_' { c } else { '_' })
        .collect();
    format!("jmh.{}", clean.trim_matches(|c| c == '_' || c == '.'))
}

fn extras(rec: &Recorder, r: &BenchResult) {
    let p = &r.primary;
    rec.set_extra("jmh_score", p.score);
    if let Some(e) = p.error {
        rec.set_extra("jmh_score_error", e);
    }
    if let Some((lo, hi)) = p.confidence {
        rec.set_extra("jmh_score_ci_low", lo);
        rec.set_extra("jmh_score_ci_high", hi);
    }
    if let Some(m) = p.fork_mean(p.raw.len().max(p.histogram.len()).saturating_sub(1)) {
        rec.set_extra("jmh_fork_score", m);
    }
    match normalise(p.score, &p.unit) {
        Some(Normalised::OpsPerSecond(v)) => rec.set_extra("jmh_ops_per_s", v),
        Some(Normalised::NanosPerOp(v)) => rec.set_extra("jmh_ns_per_op", v),
        None => {}
    }
    if r.mode == Mode::SampleTime {
        for (q, v) in &p.percentiles {
            let q = q.trim_end_matches(".0").replace('.', "_");
            rec.set_extra(&format!("jmh_p{q}"), *v);
        }
    }
    for (k, v) in [
        ("jmh_threads", r.threads),
        ("jmh_forks", r.forks),
        ("jmh_iterations", r.measurement_iterations),
        ("jmh_warmup_iterations", r.warmup_iterations),
    ] {
        rec.set_extra(k, f64::from(v));
    }
    for (name, m) in &r.secondary {
        rec.set_extra(&extra_name(name), m.score);
    }
    rec.set_setting("jmh_benchmark", r.benchmark.as_str());
    rec.set_setting("jmh_mode", r.mode.as_str());
    rec.set_setting("jmh_unit", p.unit.as_str());
    rec.set_setting("jmh_params", r.params_text());
    rec.set_setting("jmh_version", r.jmh_version.as_str());
    rec.set_setting("jmh_jvm", r.jvm.as_str());
    rec.set_setting("jmh_jvm_args", r.jvm_args.join(" "));
    rec.set_setting("jmh_vm", format!("{} {} (JDK {})", r.vm_name, r.vm_version, r.jdk_version));
}

/// Stores the cell: units and ops, the window's workload CPU, JMH's figures.
pub(super) fn store(
    rec: &Recorder,
    s: &Setup,
    results: &[BenchResult],
    window_s: f64,
    cpu: CpuTime,
) -> Result<(), EngineError> {
    let r = the_result(s, results)?;
    let units = units(r, window_s).ok_or_else(|| {
        EngineError::Failed(format!("JMH's score unit '{}' is not ops/TIME or TIME/op", r.primary.unit))
    })?;
    rec.submit(crate::WorkerStats { units, ops: units.round() as u64, ..Default::default() });
    rec.set_workload_cpu(WorkloadCpu {
        user_s: cpu.user_s.max(0.0),
        kernel_s: cpu.kernel_s.max(0.0),
        method: CpuMethod::Children,
    });
    if units > 0.0 {
        rec.set_extra("cpu_us_per_op", cpu.total_s() * 1e6 / units);
    }
    extras(rec, r);
    Ok(())
}
