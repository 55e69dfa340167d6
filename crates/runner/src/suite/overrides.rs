//! What the command line may change in a suite ([`Overrides`]: `racehorse run`'s flags as
//! the user gave them) and the one place that applies it ([`Suite::apply`]), by the same
//! rules as suite files (`values`, `harness`). Each error names its flag.

use super::harness;
use super::model::{Suite, WorkloadEntry};
use super::values::{cpu_count_ok, max_reps_ok, mem_limit_value, reps_ok, target_ci_pct_ok};
use super::values::{Adaptive, MAX_REPS, MIN_REPS};
use super::variant::Order;
use crate::duration::parse_duration;
use racehorse_core::Value;
use racehorse_engines::find;
use std::path::PathBuf;
use std::time::Duration;

/// What the command line may change in a suite, as typed; see [`Suite::apply`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// Option values by name, raw (`--opt NAME=V1,V2`, the shortcut flags, the words after
    /// `--`): an engine's option goes to every workload whose engine has it, a harness option
    /// (`where`) to every workload.
    pub options: Vec<(String, Vec<String>)>,
    /// `--runtime` as typed, e.g. "20s"; replaces every workload's own.
    pub runtime: Option<String>,
    /// `--warmup` as typed; replaces every workload's own.
    pub warmup: Option<String>,
    /// `--reps N` or `--reps auto`; replaces every workload's own.
    pub reps: Option<String>,
    /// `--max-reps` (adaptive repetitions only).
    pub max_reps: Option<u32>,
    /// `--target-ci-pct` (adaptive repetitions only).
    pub target_ci_pct: Option<f64>,
    /// `--cpus`: the CPU-count axis (unchanged when empty); replaces every workload's own.
    pub cpus: Vec<u32>,
    /// `--mem-limit` as typed, e.g. "512M".
    pub mem_limit: Option<String>,
    /// `--dir`: where disk workloads write.
    pub dir: Option<PathBuf>,
    /// `--no-drop-caches`.
    pub no_drop_caches: bool,
    /// `--variant`: the variants to run (all when empty).
    pub variants: Vec<String>,
    /// `--order` as typed.
    pub order: Option<String>,
    /// `--seed` of the random order.
    pub seed: Option<u64>,
}

/// Why [`Suite::apply`] refused the overrides (a usage error).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OverrideError {
    /// An option value its engine (or the harness) refuses, or an option no workload takes.
    #[error("{0}")]
    Option(String),
    #[error("--{flag} '{text}': expected e.g. 20s, 500ms, 2m (at most 7 days)")]
    Duration { flag: &'static str, text: String },
    #[error("--reps {0}: use 1..{max} or auto", max = MAX_REPS)]
    Reps(String),
    #[error("--max-reps and --target-ci-pct need --reps auto")]
    NotAdaptive,
    #[error("--max-reps {0}: use {min}..{max}", min = MIN_REPS, max = MAX_REPS)]
    MaxReps(u32),
    #[error("--target-ci-pct {0}: use a percentage in (0, 100)")]
    TargetCi(f64),
    #[error("--cpus: a CPU count must be at least 1")]
    Cpus,
    #[error("--mem-limit: {0}")]
    MemLimit(String),
    #[error("runtime must be longer than 0 s")]
    ZeroRuntime,
    #[error("--variant {name}: the suite has no such variant (variants: {defined})")]
    Variant { name: String, defined: String },
    #[error("--order: {0}")]
    Order(String),
    #[error("--seed needs --order random (or order = \"random\" in the suite)")]
    SeedWithoutRandom,
}

fn duration(flag: &'static str, text: &Option<String>) -> Result<Option<Duration>, OverrideError> {
    text.as_deref()
        .map(|t| parse_duration(t).ok_or_else(|| OverrideError::Duration { flag, text: t.to_string() }))
        .transpose()
}

impl Suite {
    /// Applies the command line's overrides, in this order: options (then, in a preset, each
    /// workload the options made identical to an earlier one runs once), runtime, warmup,
    /// repetitions, CPUs, memory limit, directory, cache drops, variants, order and seed.
    pub fn apply(&mut self, o: &Overrides) -> Result<(), OverrideError> {
        self.apply_options(&o.options)?;
        if self.preset.is_some() {
            // `racehorse run net -o mode=rr -o request=1 -o response=1` picks one profile.
            let mut distinct: Vec<WorkloadEntry> = Vec::new();
            for w in std::mem::take(&mut self.workloads) {
                if !distinct.contains(&w) {
                    distinct.push(w);
                }
            }
            self.workloads = distinct;
        }
        if let Some(r) = duration("runtime", &o.runtime)? {
            self.runtime = r;
            self.workloads.iter_mut().for_each(|w| w.runtime = None);
        }
        if let Some(w) = duration("warmup", &o.warmup)? {
            self.warmup = w;
            self.workloads.iter_mut().for_each(|x| x.warmup = None);
        }
        self.apply_reps(o)?;
        if !o.cpus.is_empty() {
            if !o.cpus.iter().all(|&n| cpu_count_ok(n)) {
                return Err(OverrideError::Cpus);
            }
            self.cpus = o.cpus.clone();
            self.workloads.iter_mut().for_each(|x| x.cpus = None);
        }
        if let Some(m) = &o.mem_limit {
            self.mem_limit_bytes = Some(mem_limit_value(m).map_err(OverrideError::MemLimit)?);
        }
        if self.runtime.is_zero() {
            return Err(OverrideError::ZeroRuntime);
        }
        if let Some(d) = &o.dir {
            self.dir = Some(d.clone());
        }
        if o.no_drop_caches {
            self.drop_caches = false;
        }
        self.apply_variant_choice(o)
    }

    /// Option values to every workload that takes the option.
    fn apply_options(&mut self, opts: &[(String, Vec<String>)]) -> Result<(), OverrideError> {
        for (name, raw) in opts {
            let typed = raw.iter().map(|r| Value::Str(r.clone())).collect();
            if let Some(checked) = harness::every_engine_values(name, typed) {
                let vals = checked.map_err(OverrideError::Option)?;
                self.workloads.iter_mut().for_each(|w| {
                    w.axes.insert(name.clone(), vals.clone());
                });
                continue;
            }
            let mut used = false;
            for w in &mut self.workloads {
                let Some(spec) = find(&w.engine).and_then(|e| e.options().iter().find(|o| o.name == name))
                else {
                    continue;
                };
                let vals: Result<Vec<Value>, String> = raw.iter().map(|r| spec.parse_text(r)).collect();
                w.axes.insert(name.clone(), vals.map_err(OverrideError::Option)?);
                used = true;
            }
            if !used {
                let names: Vec<&str> = self.workloads.iter().map(|w| w.engine.as_str()).collect();
                let why = harness::refused_by_run(name, &names).unwrap_or_else(|| {
                    format!(
                        "no workload in this run has an option '{name}' (workloads: {}); see `racehorse \
                         workloads show NAME`",
                        names.join(", ")
                    )
                });
                return Err(OverrideError::Option(why));
            }
        }
        Ok(())
    }

    /// `reps` (a count or `auto`), then `max_reps` and `target_ci_pct`, which need adaptive
    /// repetitions (from `reps = auto` here or in the suite).
    fn apply_reps(&mut self, o: &Overrides) -> Result<(), OverrideError> {
        match o.reps.as_deref() {
            None => {}
            Some("auto") => {
                self.workloads.iter_mut().for_each(|x| x.reps = None);
                self.reps = MIN_REPS;
                self.adaptive = Some(Adaptive::default());
            }
            Some(text) => match text.parse::<u32>() {
                Ok(r) if reps_ok(r) => {
                    self.workloads.iter_mut().for_each(|x| x.reps = None);
                    self.reps = r;
                    self.adaptive = None;
                }
                _ => return Err(OverrideError::Reps(text.to_string())),
            },
        }
        if o.max_reps.is_none() && o.target_ci_pct.is_none() {
            return Ok(());
        }
        let Some(ad) = self.adaptive.as_mut() else {
            return Err(OverrideError::NotAdaptive);
        };
        if let Some(m) = o.max_reps {
            if !max_reps_ok(m) {
                return Err(OverrideError::MaxReps(m));
            }
            ad.max_reps = m;
        }
        if let Some(t) = o.target_ci_pct {
            if !target_ci_pct_ok(t) {
                return Err(OverrideError::TargetCi(t));
            }
            ad.target_half_width = t / 100.0;
        }
        Ok(())
    }

    /// The variants to run, their order and its seed.
    fn apply_variant_choice(&mut self, o: &Overrides) -> Result<(), OverrideError> {
        if !o.variants.is_empty() {
            let defined: Vec<String> = self.variants.iter().map(|v| v.name.clone()).collect();
            if let Some(bad) = o.variants.iter().find(|n| !defined.contains(n)) {
                let list = if defined.is_empty() { "none".to_string() } else { defined.join(", ") };
                return Err(OverrideError::Variant { name: bad.clone(), defined: list });
            }
            self.variants.retain(|v| o.variants.contains(&v.name));
            for w in &mut self.workloads {
                if let Some(names) = &mut w.variants {
                    names.retain(|n| o.variants.contains(n));
                }
            }
        }
        if let Some(text) = &o.order {
            self.order = Order::parse(text).map_err(OverrideError::Order)?;
        }
        if o.seed.is_some() {
            if self.order != Order::Random {
                return Err(OverrideError::SeedWithoutRandom);
            }
            self.seed = o.seed;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "overrides_tests.rs"]
mod tests;
