//! A parser of JMH's JSON result file (`-rf json -rff FILE`, JMH 1.x) into what racehorse
//! keeps of each benchmark: its score, score error (the half-width of JMH's 99.9% confidence
//! interval, the figure JMH prints after "±"), unit, parameters, the raw per-fork iteration
//! scores and the secondary metrics (profilers' figures).
//!
//! JMH writes numbers it cannot compute (the error of a single iteration) as the strings
//! "NaN" or "Infinity"; they are read as absent. Anything else that is not the shape JMH
//! writes is an error that says where, never a panic.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// JMH's benchmark modes (`-bm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `thrpt`: operations per unit of time.
    Throughput,
    /// `avgt`: average time per operation.
    AverageTime,
    /// `sample`: sampled time per operation.
    SampleTime,
    /// `ss`: the time of one invocation (a batch) per iteration.
    SingleShot,
}

impl Mode {
    /// The short names JMH reads (`-bm`) and writes (`"mode"`).
    pub const NAMES: &'static [&'static str] = &["thrpt", "avgt", "sample", "ss"];

    pub fn parse(word: &str) -> Option<Mode> {
        Some(match word {
            "thrpt" => Mode::Throughput,
            "avgt" => Mode::AverageTime,
            "sample" => Mode::SampleTime,
            "ss" => Mode::SingleShot,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Throughput => "thrpt",
            Mode::AverageTime => "avgt",
            Mode::SampleTime => "sample",
            Mode::SingleShot => "ss",
        }
    }
}

/// `sample` mode's raw data: per fork, per iteration, (value, count) pairs.
pub type Histogram = Vec<Vec<Vec<(f64, u64)>>>;

/// One metric (the primary one or a secondary one).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metric {
    pub score: f64,
    /// JMH's "±" figure (99.9% CI half-width); None where JMH wrote NaN (one iteration).
    pub error: Option<f64>,
    /// JMH's 99.9% confidence interval.
    pub confidence: Option<(f64, f64)>,
    /// Percentile ("50.0", "99.0", …) → value, in the metric's unit.
    pub percentiles: BTreeMap<String, f64>,
    /// `ops/s`, `us/op`, `MB/sec` …
    pub unit: String,
    /// Per fork, the score of each measurement iteration.
    pub raw: Vec<Vec<f64>>,
    /// `sample` mode: per fork, per iteration, (value, count) pairs.
    pub histogram: Histogram,
}

impl Metric {
    /// The mean score of one fork's measurement iterations (sample mode: weighted by the
    /// sample counts); None when the result holds no raw data for it.
    pub fn fork_mean(&self, fork: usize) -> Option<f64> {
        if let Some(iters) = self.raw.get(fork).filter(|v| !v.is_empty()) {
            return Some(iters.iter().sum::<f64>() / iters.len() as f64);
        }
        let pairs = self.histogram.get(fork)?.iter().flatten();
        let (sum, n) = pairs.fold((0.0, 0u64), |(s, n), (v, c)| (s + v * *c as f64, n.saturating_add(*c)));
        (n > 0).then(|| sum / n as f64)
    }
}

/// One entry of JMH's result array: one benchmark method with one parameter combination.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchResult {
    /// The full name, `package.Class.method`.
    pub benchmark: String,
    pub mode: Mode,
    pub threads: u32,
    pub forks: u32,
    pub jmh_version: String,
    /// The forked VM's launcher and options.
    pub jvm: String,
    pub jvm_args: Vec<String>,
    pub jdk_version: String,
    pub vm_name: String,
    pub vm_version: String,
    pub warmup_iterations: u32,
    pub measurement_iterations: u32,
    pub measurement_batch_size: u64,
    /// `@Param` name → value.
    pub params: BTreeMap<String, String>,
    pub primary: Metric,
    /// Secondary metrics by JMH's name (`·gc.alloc.rate` …).
    pub secondary: BTreeMap<String, Metric>,
}

impl BenchResult {
    /// `a=1 b=x`, the parameters as JMH's `-p` would take them.
    pub fn params_text(&self) -> String {
        self.params.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
    }
}

/// A number as JMH writes it: a JSON number, or "NaN" / "Infinity" (read as None).
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64().filter(|f| f.is_finite()),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        _ => None,
    }
}

fn field<'a>(obj: &'a Map<String, Value>, key: &str, at: &str) -> Result<&'a Value, String> {
    obj.get(key).ok_or_else(|| format!("{at} has no \"{key}\""))
}

fn text(obj: &Map<String, Value>, key: &str) -> String {
    match obj.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(v @ Value::Number(_)) => v.to_string(),
        _ => String::new(),
    }
}

fn count(obj: &Map<String, Value>, key: &str) -> u64 {
    obj.get(key).and_then(Value::as_u64).unwrap_or(0)
}

fn small(obj: &Map<String, Value>, key: &str) -> u32 {
    u32::try_from(count(obj, key)).unwrap_or(u32::MAX)
}

/// `[[1.0, 2.0], [3.0]]`: per fork, per iteration.
fn raw_data(v: Option<&Value>, at: &str) -> Result<Vec<Vec<f64>>, String> {
    let Some(v) = v else { return Ok(Vec::new()) };
    let forks = v.as_array().ok_or_else(|| format!("{at}: rawData is not an array"))?;
    forks
        .iter()
        .map(|f| {
            let iters = f.as_array().ok_or_else(|| format!("{at}: a fork of rawData is not an array"))?;
            iters.iter().map(|x| number(x).ok_or_else(|| format!("{at}: rawData holds {x}"))).collect()
        })
        .collect()
}

/// `[[[[value, count], …] per iteration] per fork]` (sample mode).
fn histogram(v: Option<&Value>, at: &str) -> Result<Histogram, String> {
    let Some(v) = v else { return Ok(Vec::new()) };
    let bad = || format!("{at}: rawDataHistogram is not [fork][iteration][[value, count]]");
    let pair = |p: &Value| -> Result<(f64, u64), String> {
        match p.as_array().map(Vec::as_slice) {
            Some([v, c]) => Ok((number(v).ok_or_else(bad)?, c.as_u64().ok_or_else(bad)?)),
            _ => Err(bad()),
        }
    };
    let iteration = |i: &Value| i.as_array().ok_or_else(bad)?.iter().map(pair).collect();
    let fork = |f: &Value| f.as_array().ok_or_else(bad)?.iter().map(iteration).collect();
    v.as_array().ok_or_else(bad)?.iter().map(fork).collect()
}

fn metric(v: &Value, at: &str) -> Result<Metric, String> {
    let obj = v.as_object().ok_or_else(|| format!("{at} is not an object"))?;
    let score = field(obj, "score", at)?;
    let score = number(score).ok_or_else(|| format!("{at}: score {score} is not a number"))?;
    let unit = match field(obj, "scoreUnit", at)? {
        Value::String(s) if !s.trim().is_empty() => s.clone(),
        other => return Err(format!("{at}: scoreUnit {other} is not a unit")),
    };
    let confidence = match obj.get("scoreConfidence").and_then(Value::as_array).map(Vec::as_slice) {
        Some([lo, hi]) => number(lo).zip(number(hi)),
        _ => None,
    };
    let percentiles = obj
        .get("scorePercentiles")
        .and_then(Value::as_object)
        .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), number(v)?))).collect())
        .unwrap_or_default();
    Ok(Metric {
        score,
        error: obj.get("scoreError").and_then(number),
        confidence,
        percentiles,
        unit,
        raw: raw_data(obj.get("rawData"), at)?,
        histogram: histogram(obj.get("rawDataHistogram"), at)?,
    })
}

fn bench_result(v: &Value, index: usize) -> Result<BenchResult, String> {
    let at = format!("result #{}", index + 1);
    let obj = v.as_object().ok_or_else(|| format!("{at} is not an object"))?;
    let benchmark = match field(obj, "benchmark", &at)? {
        Value::String(s) if !s.is_empty() => s.clone(),
        other => return Err(format!("{at}: benchmark {other} is not a name")),
    };
    let at = format!("{at} ({benchmark})");
    let mode_word = text(obj, "mode");
    let mode = Mode::parse(&mode_word)
        .ok_or_else(|| format!("{at}: mode '{mode_word}' is not one of {}", Mode::NAMES.join(", ")))?;
    let params = obj
        .get("params")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), String::from)))
                .collect()
        })
        .unwrap_or_default();
    let secondary = obj
        .get("secondaryMetrics")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter().filter_map(|(k, v)| Some((k.clone(), metric(v, &format!("{at}: {k}")).ok()?))).collect()
        })
        .unwrap_or_default();
    let jvm_args = obj
        .get("jvmArgs")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect())
        .unwrap_or_default();
    Ok(BenchResult {
        mode,
        threads: small(obj, "threads").max(1),
        forks: small(obj, "forks"),
        jmh_version: text(obj, "jmhVersion"),
        jvm: text(obj, "jvm"),
        jvm_args,
        jdk_version: text(obj, "jdkVersion"),
        vm_name: text(obj, "vmName"),
        vm_version: text(obj, "vmVersion"),
        warmup_iterations: small(obj, "warmupIterations"),
        measurement_iterations: small(obj, "measurementIterations"),
        measurement_batch_size: count(obj, "measurementBatchSize").max(1),
        params,
        primary: metric(field(obj, "primaryMetric", &at)?, &format!("{at}: primaryMetric"))?,
        secondary,
        benchmark,
    })
}

/// Parses a whole result file: a JSON array with one entry per benchmark and parameter
/// combination (empty when JMH ran nothing).
pub fn parse(text: &str) -> Result<Vec<BenchResult>, String> {
    let doc: Value =
        serde_json::from_str(text).map_err(|e| format!("JMH's JSON result does not parse: {e}"))?;
    let items = doc.as_array().ok_or("JMH's JSON result is not an array of benchmark results")?;
    items.iter().enumerate().map(|(i, v)| bench_result(v, i)).collect()
}

/// Seconds in one of JMH's time-unit words (`ns`, `us`, `ms`, `s`, `min`, `hr`, `day`).
fn unit_seconds(word: &str) -> Option<f64> {
    Some(match word.trim() {
        "ns" => 1e-9,
        "us" | "µs" | "μs" => 1e-6,
        "ms" => 1e-3,
        "s" | "sec" => 1.0,
        "min" | "m" => 60.0,
        "hr" | "h" => 3600.0,
        "day" | "d" => 86400.0,
        _ => return None,
    })
}

/// A primary score in a fixed unit: operations per second (`thrpt`, unit `ops/T`) or
/// nanoseconds per operation (the time modes, unit `T/op`). None for another unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Normalised {
    OpsPerSecond(f64),
    NanosPerOp(f64),
}

/// `value` in `unit` (JMH's `scoreUnit`) in a fixed unit, by the unit's own form.
pub fn normalise(value: f64, unit: &str) -> Option<Normalised> {
    if let Some(t) = unit.strip_prefix("ops/") {
        return Some(Normalised::OpsPerSecond(value / unit_seconds(t)?));
    }
    let t = unit.strip_suffix("/op")?;
    Some(Normalised::NanosPerOp(value * unit_seconds(t)? * 1e9))
}

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;
