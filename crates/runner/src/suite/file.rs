//! Suite files (TOML): workloads with their options as axes (lists), variants, runtime,
//! warmup and repetitions. Every mistake is reported with file:line:col and what is valid.

use super::model::{engine_names, Suite, SuiteError, WorkloadEntry};
use super::values::{cpus_value, duration_value, max_reps_ok, mem_limit_value, reps_value, target_ci_pct_ok};
use super::values::{Adaptive, MAX_REPS, MIN_REPS};
use super::variant::{Order, RawVariant, Variant};
use racehorse_core::Value;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use toml::Spanned;

/// Keys of a `[[workload]]` table that belong to the runner, not the engine.
const RUNNER_KEYS: &[&str] = &["engine", "runtime", "warmup", "reps", "cpus", "variants"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSuite {
    name: Option<String>,
    runtime: Option<Spanned<toml::Value>>,
    warmup: Option<Spanned<toml::Value>>,
    reps: Option<Spanned<toml::Value>>,
    max_reps: Option<Spanned<i64>>,
    target_ci_pct: Option<Spanned<f64>>,
    cpus: Option<Spanned<toml::Value>>,
    dir: Option<String>,
    drop_caches: Option<bool>,
    mem_limit: Option<Spanned<String>>,
    #[serde(default)]
    workload: Vec<Spanned<toml::Table>>,
    #[serde(default)]
    variant: Vec<Spanned<RawVariant>>,
    order: Option<Spanned<String>>,
    seed: Option<Spanned<i64>>,
}

/// Converts a TOML scalar to a parameter value.
fn toml_scalar(v: &toml::Value) -> Option<Value> {
    Some(match v {
        toml::Value::Integer(i) => Value::Int(*i),
        toml::Value::Float(f) => Value::Float(*f),
        toml::Value::String(s) => Value::Str(s.clone()),
        toml::Value::Boolean(b) => Value::Bool(*b),
        _ => return None,
    })
}

// Leaf parser: `Suite::parse` places its message at the table's file:line:col.
fn workload_from_table(t: &toml::Table) -> Result<WorkloadEntry, String> {
    let engine = t
        .get("engine")
        .and_then(|v| v.as_str())
        .ok_or_else(|| format!("a [[workload]] needs `engine = \"NAME\"`; valid: {}", engine_names()))?;
    let mut values = BTreeMap::new();
    for (k, v) in t.iter().filter(|(k, _)| !RUNNER_KEYS.contains(&k.as_str())) {
        let items: Vec<&toml::Value> = match v {
            toml::Value::Array(a) => a.iter().collect(),
            one => vec![one],
        };
        let vals: Result<Vec<Value>, String> = items
            .into_iter()
            .map(|i| toml_scalar(i).ok_or_else(|| format!("option '{k}': {i} is not a plain value")))
            .collect();
        values.insert(k.clone(), vals?);
    }
    let mut w = WorkloadEntry::new(engine, values)?;
    let dur = |key: &str| t.get(key).map(duration_value).transpose().map_err(|e| format!("{key}: {e}"));
    w.runtime = dur("runtime")?;
    w.warmup = dur("warmup")?;
    w.reps = t.get("reps").map(reps_value).transpose()?;
    w.cpus = t.get("cpus").map(cpus_value).transpose()?;
    w.variants = t.get("variants").map(variant_names).transpose()?;
    Ok(w)
}

// Leaf parser: `Suite::parse` places its message at the table's file:line:col.
fn variant_names(v: &toml::Value) -> Result<Vec<String>, String> {
    let names: Option<Vec<String>> = match v {
        toml::Value::Array(a) => a.iter().map(|i| i.as_str().map(str::to_string)).collect(),
        toml::Value::String(s) => Some(vec![s.clone()]),
        _ => None,
    };
    match names {
        Some(n) if !n.is_empty() => Ok(n),
        _ => Err(format!("variants: {v} is not a list of variant names")),
    }
}

impl Suite {
    /// Parses suite text; `file` names it in error messages.
    pub fn parse(file: &str, text: &str) -> Result<Suite, SuiteError> {
        let raw: RawSuite = toml::from_str(text).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            SuiteError::at(file, text, offset, e.message().to_string())
        })?;
        let at = |offset: usize, msg: String| SuiteError::at(file, text, offset, msg);
        let mut suite = Suite { name: raw.name.unwrap_or_else(|| "suite".into()), ..Suite::default() };
        if let Some(v) = raw.runtime {
            suite.runtime =
                duration_value(v.get_ref()).map_err(|e| at(v.span().start, format!("runtime: {e}")))?;
            if suite.runtime.is_zero() {
                return Err(at(v.span().start, "runtime: must be longer than 0 s (e.g. \"20s\")".into()));
            }
        }
        if let Some(v) = raw.warmup {
            suite.warmup =
                duration_value(v.get_ref()).map_err(|e| at(v.span().start, format!("warmup: {e}")))?;
        }
        if let Some(v) = raw.reps {
            if v.get_ref().as_str() == Some("auto") {
                suite.reps = MIN_REPS;
                suite.adaptive = Some(Adaptive::default());
            } else {
                suite.reps = reps_value(v.get_ref()).map_err(|e| at(v.span().start, e))?;
            }
        }
        if let Some(a) = suite.adaptive.as_mut() {
            if let Some(m) = raw.max_reps {
                a.max_reps = u32::try_from(*m.get_ref())
                    .ok()
                    .filter(|n| max_reps_ok(*n))
                    .ok_or_else(|| at(m.span().start, format!("max_reps: use {MIN_REPS}..{MAX_REPS}")))?;
            }
            if let Some(t) = raw.target_ci_pct {
                let pct = *t.get_ref();
                if !target_ci_pct_ok(pct) {
                    return Err(at(t.span().start, format!("target_ci_pct: {pct} is not in (0, 100)")));
                }
                a.target_half_width = pct / 100.0;
            }
        } else if let Some(m) = raw
            .max_reps
            .as_ref()
            .map(|m| m.span().start)
            .or(raw.target_ci_pct.as_ref().map(|t| t.span().start))
        {
            return Err(at(m, "max_reps and target_ci_pct need reps = \"auto\"".into()));
        }
        if let Some(v) = raw.cpus {
            suite.cpus = cpus_value(v.get_ref()).map_err(|e| at(v.span().start, e))?;
            suite.origins.insert("cpus".into(), at(v.span().start, String::new()).origin);
        }
        suite.dir = raw.dir.map(PathBuf::from);
        suite.drop_caches = raw.drop_caches.unwrap_or(true);
        if let Some(v) = raw.mem_limit {
            suite.mem_limit_bytes = Some(
                mem_limit_value(v.get_ref()).map_err(|e| at(v.span().start, format!("mem_limit: {e}")))?,
            );
        }
        for (i, w) in raw.workload.iter().enumerate() {
            suite.workloads.push(workload_from_table(w.get_ref()).map_err(|e| at(w.span().start, e))?);
            suite.origins.insert(format!("workload.{i}"), at(w.span().start, String::new()).origin);
        }
        if suite.workloads.is_empty() {
            return Err(at(0, format!("the suite has no [[workload]]; add one, e.g. [[workload]] engine = \"fileserver\" (valid: {})", engine_names())));
        }
        suite.variants = parse_variants(raw.variant, &at)?;
        check_workload_variants(&suite, &raw.workload, &at)?;
        if let Some(o) = raw.order {
            suite.order = Order::parse(o.get_ref()).map_err(|e| at(o.span().start, e))?;
        }
        if let Some(seed) = raw.seed {
            suite.seed = Some(
                u64::try_from(*seed.get_ref())
                    .map_err(|_| at(seed.span().start, "seed: use an integer >= 0".into()))?,
            );
        }
        Ok(suite)
    }
}

fn parse_variants(
    raw: Vec<Spanned<RawVariant>>,
    at: &dyn Fn(usize, String) -> SuiteError,
) -> Result<Vec<Variant>, SuiteError> {
    let mut out: Vec<Variant> = Vec::new();
    for v in raw {
        let span = v.span().start;
        let variant = v.into_inner().into_variant().map_err(|e| at(span, e))?;
        if out.iter().any(|x| x.name == variant.name) {
            return Err(at(span, format!("variant '{}' is defined twice", variant.name)));
        }
        out.push(variant);
    }
    Ok(out)
}

/// Every name in a workload's `variants` list must be a defined variant.
fn check_workload_variants(
    suite: &Suite,
    tables: &[Spanned<toml::Table>],
    at: &dyn Fn(usize, String) -> SuiteError,
) -> Result<(), SuiteError> {
    let defined: Vec<&str> = suite.variants.iter().map(|v| v.name.as_str()).collect();
    for (w, t) in suite.workloads.iter().zip(tables) {
        for name in w.variants.iter().flatten() {
            if !defined.contains(&name.as_str()) {
                let list = if defined.is_empty() { "none".to_string() } else { defined.join(", ") };
                return Err(at(
                    t.span().start,
                    format!(
                        "workload '{}': variants names '{name}', which is not defined (variants: {list})",
                        w.engine
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const GOOD: &str = r#"
name = "demo"
runtime = "2s"
warmup = "500ms"
reps = 3
cpus = [1, 2]

[[workload]]
engine = "null"
clients = [1, 4, 8]
rate = 50.0

[[variant]]
name = "lowswap"
sysctl = { "vm.swappiness" = 10 }
"#;

    #[test]
    fn parses_a_full_suite() {
        let s = Suite::parse("s.toml", GOOD).unwrap();
        assert_eq!(s.name, "demo");
        assert_eq!(s.runtime, Duration::from_secs(2));
        assert_eq!(s.warmup, Duration::from_millis(500));
        assert_eq!((s.reps, s.cpus.clone()), (3, vec![1, 2]));
        let w = &s.workloads[0];
        assert_eq!(w.axes["clients"], vec![Value::Int(1), Value::Int(4), Value::Int(8)]);
        assert_eq!(w.axes["fail"], vec![Value::Bool(false)], "defaults are filled in");
        assert_eq!(s.variants[0].sysctl["vm.swappiness"], "10");
    }

    #[test]
    fn syntax_error_has_line_and_column() {
        let e = Suite::parse("bad.toml", "name = \"x\"\nreps = = 3\n").unwrap_err();
        assert!(e.to_string().starts_with("bad.toml:2:"), "{e}");
    }

    #[test]
    fn unknown_option_lists_valid_ones() {
        let e = Suite::parse("s.toml", "[[workload]]\nengine = \"null\"\nclinets = 4\n").unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("s.toml:1:1: "), "{msg}");
        assert!(msg.contains("no option 'clinets'") && msg.contains("clients"), "{msg}");
    }

    #[test]
    fn unknown_engine_lists_valid_ones() {
        let e = Suite::parse("s.toml", "[[workload]]\nengine = \"dbnech\"\n").unwrap_err();
        assert!(e.to_string().contains("unknown workload 'dbnech'") && e.to_string().contains("fileserver"));
    }

    #[test]
    fn impossible_values_are_refused() {
        for (text, needle) in [
            ("reps = 0\n[[workload]]\nengine=\"null\"", "reps"),
            ("cpus = [0]\n[[workload]]\nengine=\"null\"", "cpus"),
            ("runtime = \"fast\"\n[[workload]]\nengine=\"null\"", "runtime"),
            ("runtime = \"0s\"\n[[workload]]\nengine=\"null\"", "runtime: must be longer"),
            ("runtime = 1e300\n[[workload]]\nengine=\"null\"", "at most 7 days"),
            ("warmup = \"99999999999999999h\"\n[[workload]]\nengine=\"null\"", "warmup"),
            ("[[workload]]\nengine=\"null\"\nclients = 0", "outside"),
            ("bogus = 1\n[[workload]]\nengine=\"null\"", "bogus"),
            ("name = \"x\"", "no [[workload]]"),
            ("mem_limit = \"1M\"\n[[workload]]\nengine=\"null\"", "smallest limit"),
            ("mem_limit = \"lots\"\n[[workload]]\nengine=\"null\"", "not a size"),
        ] {
            let e = Suite::parse("s.toml", text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text:?} gave {e}");
            assert!(e.starts_with("s.toml:"), "{e}");
        }
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
            if let Err(e) = Suite::parse("f.toml", &text) {
                proptest::prop_assert!(e.to_string().starts_with("f.toml:"));
            }
        }

        #[test]
        fn suite_like_text_never_panics(
            key in "(engine|clients|runtime|reps|cpus|rate|fail|warmup)",
            val in "(\"[a-z0-9]{0,6}\"|-?[0-9]{1,4}|\\[[0-9, ]{0,8}\\]|true|1\\.5)",
        ) {
            let text = format!("[[workload]]\nengine = \"null\"\n{key} = {val}\n");
            let _ = Suite::parse("f.toml", &text);
        }
    }

    /// Issue 23: every numeric and duration field of a suite, at the top level and in a
    /// workload, at its extremes: a located error or a plan, never a panic.
    #[test]
    fn numeric_and_duration_fields_at_their_extremes_never_panic() {
        let keys = ["runtime", "warmup", "reps", "cpus", "max_reps", "target_ci_pct", "mem_limit", "seed"];
        let values = [
            "0",
            "-1",
            "1",
            "9223372036854775807",
            "-9223372036854775808",
            "1e300",
            "-1e300",
            "inf",
            "-inf",
            "nan",
            "0.0",
            "1e-300",
            "\"99999999999999999h\"",
            "\"1e400s\"",
            "\"\"",
            "\"0s\"",
            "\"auto\"",
            "[9223372036854775807]",
            "[]",
            "\"18446744073709551615\"",
        ];
        for key in keys {
            for val in values {
                let top = format!("{key} = {val}\n[[workload]]\nengine = \"null\"\n");
                let inner = format!(
                    "[[workload]]\nengine = \"null\"\n{key} = {val}\nrate = {val}\nclients = {val}\n"
                );
                for text in [top, inner] {
                    match Suite::parse("x.toml", &text) {
                        Ok(suite) => {
                            if let Ok(plan) = crate::plan::Plan::expand(&suite, 2, 2) {
                                let _ = plan.eta();
                            }
                        }
                        Err(e) => assert!(e.to_string().starts_with("x.toml:"), "{text}: {e}"),
                    }
                }
            }
        }
    }

    #[test]
    fn reps_auto_sets_adaptive_repetitions() {
        let s = Suite::parse(
            "s.toml",
            "reps = \"auto\"\nmax_reps = 6\ntarget_ci_pct = 1.5\n[[workload]]\nengine=\"null\"",
        )
        .unwrap();
        let a = s.adaptive.expect("adaptive");
        assert_eq!((s.reps, a.max_reps), (3, 6));
        assert!((a.target_half_width - 0.015).abs() < 1e-12);
        for (text, needle) in [
            ("max_reps = 5\n[[workload]]\nengine=\"null\"", "need reps = \"auto\""),
            ("reps = \"auto\"\nmax_reps = 2\n[[workload]]\nengine=\"null\"", "max_reps"),
            ("reps = \"auto\"\ntarget_ci_pct = 0.0\n[[workload]]\nengine=\"null\"", "target_ci_pct"),
            ("reps = \"often\"\n[[workload]]\nengine=\"null\"", "auto"),
        ] {
            let e = Suite::parse("s.toml", text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text:?} gave {e}");
        }
    }

    #[test]
    fn mem_limit_is_read_in_bytes() {
        let s = Suite::parse("s.toml", "mem_limit = \"512M\"\n[[workload]]\nengine=\"null\"").unwrap();
        assert_eq!(s.mem_limit_bytes, Some(512 << 20));
        assert_eq!(Suite::parse("s.toml", "[[workload]]\nengine=\"null\"").unwrap().mem_limit_bytes, None);
    }
}
