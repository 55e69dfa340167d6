//! The `jmh` adapter: runs one benchmark of a user's JMH benchmarks jar (`java -jar JAR`,
//! JMH 1.x from Maven Central) per cell and stores JMH's result in our form.
//!
//! A cell is one benchmark method (see `list`) with one parameter combination and one mode,
//! run as `java -jar JAR ^name$ -bm MODE -f FORKS -wi … -i … -w … -r … -t THREADS -foe true
//! -rf json -rff FILE`. The measured window is the measurement iterations of the last fork
//! (`process`): it opens when JMH reports the start of that fork's first measurement
//! iteration and closes when it reports the end of its last, so JVM start-up, warm-up and exit
//! are outside.
//! The workload CPU is that of the host JVM's process tree (the forked VM included) at those
//! two moments.
//!
//! Units are operations: for `thrpt`, `avgt` and `sample`, the measured fork's mean rate
//! (threads / mean time per operation for the time modes) × racehorse's window; for `ss`,
//! the invocations of the measured fork's iterations. JMH's own score, error (99.9% CI
//! half-width), unit and parameters are stored as extras and settings (`store`).

pub mod json;
mod list;
mod process;
mod store;
#[cfg(test)]
mod tests;

use crate::info::{shortcuts, EngineInfo};
use crate::support::proc_tree::tree_cpu;
use crate::{
    AreaRule, Caps, CellContext, Control, Engine, EngineError, Figure, OptKind, OptionSpec, Recorder,
    SummaryArea, Workload,
};
use json::Mode;
use process::{Edge, JmhRun, Out, Progress};
use racehorse_core::WorkUnit;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The `jmh` engine.
pub struct Jmh;

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "jar",
        kind: OptKind::Str,
        default: "",
        help: "the JMH benchmarks jar (an uber jar with JMH's Main, as the JMH archetype builds)",
    },
    OptionSpec {
        name: "benchmark",
        kind: OptKind::Str,
        default: "",
        help: "JMH's regex selecting ONE benchmark (Class.method); empty = the jar's only one; a list is an axis",
    },
    OptionSpec {
        name: "mode",
        kind: OptKind::Choice(Mode::NAMES),
        default: "thrpt",
        help: "JMH's benchmark mode (-bm): thrpt ops/time, avgt time/op, sample time/op sampled, ss single shot",
    },
    OptionSpec { name: "forks", kind: OptKind::Int { min: 1, max: 100 }, default: "1", help: "JMH's forks (-f); the last one is measured" },
    OptionSpec {
        name: "warmup_iterations",
        kind: OptKind::Int { min: 1, max: 10_000 },
        default: "3",
        help: "warm-up iterations per fork (-wi)",
    },
    OptionSpec {
        name: "warmup_time",
        kind: OptKind::Str,
        default: "",
        help: "time of one warm-up iteration (-w), e.g. 500ms, 2s; empty = iteration_time",
    },
    OptionSpec {
        name: "iterations",
        kind: OptKind::Int { min: 1, max: 10_000 },
        default: "5",
        help: "measurement iterations per fork (-i)",
    },
    OptionSpec {
        name: "iteration_time",
        kind: OptKind::Str,
        default: "1s",
        help: "time of one measurement iteration (-r), e.g. 500ms, 2s",
    },
    OptionSpec {
        name: "time_unit",
        kind: OptKind::Str,
        default: "",
        help: "JMH's output time unit (-tu): ns, us, ms, s or min; empty = the benchmark's @OutputTimeUnit, else s",
    },
    OptionSpec { name: "threads", kind: OptKind::Int { min: 1, max: 4096 }, default: "1", help: "benchmark threads (-t)" },
    OptionSpec {
        name: "params",
        kind: OptKind::Str,
        default: "",
        help: "@Param values, `name=value` separated by spaces or ';' (-p each); one value per name",
    },
    OptionSpec {
        name: "profilers",
        kind: OptKind::Str,
        default: "",
        help: "JMH profilers separated by spaces (-prof each), e.g. gc; their figures become extras jmh.<name>",
    },
    OptionSpec {
        name: "jvm_flags",
        kind: OptKind::Str,
        default: "",
        help: "flags for the forked JVM that runs the benchmark (-jvmArgsAppend), e.g. `-Xmx1g -XX:+UseParallelGC`",
    },
];

/// The `java` launcher of the JDK that `support::jdk` finds (JAVA_HOME first, then PATH;
/// its refusal names the package to install). The one place this adapter looks for a JDK.
pub(crate) fn find_java() -> Result<PathBuf, EngineError> {
    crate::support::jdk::Jdk::find().map(|jdk| jdk.java)
}

/// JMH's own score in one unit per direction (compared), its error and interval, the
/// settings it ran with, the percentiles of sample time and the secondary results.
const FIGURES: &[Figure] = &[
    Figure::higher("jmh_ops_per_s", "JMH score", "ops/s"),
    Figure::lower("jmh_ns_per_op", "JMH score", "ns/op"),
    Figure::info("jmh_score", "JMH score as printed", "JMH's unit"),
    Figure::info("jmh_score_error", "JMH score error", "JMH's unit"),
    Figure::info("jmh_score_ci_low", "JMH score interval, low", "JMH's unit"),
    Figure::info("jmh_score_ci_high", "JMH score interval, high", "JMH's unit"),
    Figure::info("jmh_fork_score", "last fork's score", "JMH's unit"),
    Figure::info("jmh_p*", "sample time p*", "JMH's unit"),
    Figure::info("jmh_threads", "JMH threads", "threads"),
    Figure::info("jmh_forks", "JMH forks", "forks"),
    Figure::info("jmh_iterations", "JMH measurement iterations", "count"),
    Figure::info("jmh_warmup_iterations", "JMH warmup iterations", "count"),
    Figure::info("jmh.*", "secondary result *", "JMH's unit"),
    Figure::info("cpu_us_per_op", "CPU per operation", "µs"),
];

/// What `Jmh` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "jmh",
    about: "a JMH benchmarks jar (needs a JDK), one benchmark per cell: ops/s and CPU per op over the last fork's \
            measurement iterations, JMH's score, error and unit as extras",
    area: "Java",
    summary_area: AreaRule::Fixed(SummaryArea::Java),
    unit: WorkUnit::Ops,
    caps: Caps { needs_disk: true, ..Caps::NONE },
    options: OPTIONS,
    figures: FIGURES,
    shortcuts: &[shortcuts::THREADS],
};

/// A duration as JMH's options take it: a whole number and ns, us, ms, s, min.
fn parse_time(option: &str, text: &str) -> Result<Duration, EngineError> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| bad_time(option, text))?;
    let d = match unit.trim() {
        "ns" => Duration::from_nanos(n),
        "us" => Duration::from_micros(n),
        "ms" => Duration::from_millis(n),
        "s" | "" => Duration::from_secs(n),
        "min" | "m" => Duration::from_secs(n.saturating_mul(60)),
        _ => return Err(bad_time(option, text)),
    };
    if d < Duration::from_millis(1) {
        return Err(EngineError::Usage(format!("option '{option}': {text} is shorter than JMH's 1 ms")));
    }
    Ok(d)
}

fn bad_time(option: &str, text: &str) -> EngineError {
    EngineError::Usage(format!("option '{option}': '{text}' is not a time such as 500ms, 2s or 1min"))
}

/// The cell's settings, read and checked.
#[derive(Debug, Clone)]
struct Setup {
    java: PathBuf,
    jar: PathBuf,
    /// The full name of the one benchmark the cell runs.
    benchmark: String,
    mode: Mode,
    forks: u32,
    warmups: u32,
    warmup_time: Duration,
    iterations: u32,
    iteration_time: Duration,
    threads: u32,
    /// JMH's `-tu`, when given.
    time_unit: Option<String>,
    params: Vec<(String, String)>,
    profilers: Vec<String>,
    jvm_flags: String,
}

/// The time units JMH's `-tu` takes.
const TIME_UNITS: &[&str] = &["ns", "us", "ms", "s", "min"];

fn time_unit(ctx: &CellContext) -> Result<Option<String>, EngineError> {
    match text(ctx, "time_unit")?.trim() {
        "" => Ok(None),
        t if TIME_UNITS.contains(&t) => Ok(Some(t.to_string())),
        t => Err(EngineError::Usage(format!("time_unit '{t}' is not one of {}", TIME_UNITS.join(", ")))),
    }
}

/// A text option, "" when it has no value (the options whose default is empty).
fn text<'a>(ctx: &'a CellContext, name: &str) -> Result<&'a str, EngineError> {
    match ctx.spec.params.get(name) {
        None => Ok(""),
        Some(_) => ctx.get_str(name),
    }
}

fn int(ctx: &CellContext, name: &str) -> Result<u32, EngineError> {
    u32::try_from(ctx.get_u64(name)?).map_err(|_| EngineError::Usage(format!("option '{name}' is too large")))
}

/// `a=1 b=2` or `a=1;b=2` → pairs.
fn parse_params(text: &str) -> Result<Vec<(String, String)>, EngineError> {
    let words = text.split(|c: char| c == ';' || c.is_whitespace()).filter(|w| !w.is_empty());
    words
        .map(|w| match w.split_once('=') {
            Some((k, v)) if !k.is_empty() && !v.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(EngineError::Usage(format!("params: '{w}' is not name=value"))),
        })
        .collect()
}

fn setup(ctx: &CellContext) -> Result<Setup, EngineError> {
    let java = find_java()?;
    let jar_text = text(ctx, "jar")?;
    if jar_text.trim().is_empty() {
        return Err(EngineError::Usage(
            "jmh needs a benchmarks jar: -o jar=path/to/benchmarks.jar (or jar = \"...\" in the suite)"
                .into(),
        ));
    }
    let jar =
        std::fs::canonicalize(jar_text).map_err(|e| EngineError::Usage(format!("jar {jar_text}: {e}")))?;
    let pattern = text(ctx, "benchmark")?.trim().to_string();
    let benchmark = list::pick(&list::list(&java, &jar, &pattern)?, &pattern, &jar)?;
    let mode_word = ctx.get_str("mode")?;
    let mode = Mode::parse(mode_word)
        .ok_or_else(|| EngineError::Usage(format!("mode '{mode_word}' is not a JMH mode")))?;
    let iteration_time = parse_time("iteration_time", ctx.get_str("iteration_time")?)?;
    let warm_text = text(ctx, "warmup_time")?;
    let warmup_time =
        if warm_text.trim().is_empty() { iteration_time } else { parse_time("warmup_time", warm_text)? };
    Ok(Setup {
        java,
        jar,
        benchmark,
        mode,
        forks: int(ctx, "forks")?,
        warmups: int(ctx, "warmup_iterations")?,
        warmup_time,
        iterations: int(ctx, "iterations")?,
        iteration_time,
        threads: int(ctx, "threads")?,
        time_unit: time_unit(ctx)?,
        params: parse_params(text(ctx, "params")?)?,
        profilers: text(ctx, "profilers")?.split_whitespace().map(String::from).collect(),
        jvm_flags: text(ctx, "jvm_flags")?.trim().to_string(),
    })
}

impl Setup {
    /// JMH's command line (after `java`), its JSON result written to `result`.
    fn args(&self, result: &Path) -> Vec<String> {
        let ms = |d: Duration| {
            if d.as_micros().is_multiple_of(1000) {
                format!("{}ms", d.as_millis())
            } else {
                format!("{}us", d.as_micros())
            }
        };
        let mut a: Vec<String> =
            vec!["-jar".into(), self.jar.display().to_string(), list::exact_pattern(&self.benchmark)];
        for (flag, value) in [
            ("-bm", self.mode.as_str().to_string()),
            ("-f", self.forks.to_string()),
            ("-wi", self.warmups.to_string()),
            ("-w", ms(self.warmup_time)),
            ("-i", self.iterations.to_string()),
            ("-r", ms(self.iteration_time)),
            ("-t", self.threads.to_string()),
            ("-foe", "true".into()),
            ("-rf", "json".into()),
            ("-rff", result.display().to_string()),
        ] {
            a.push(flag.into());
            a.push(value);
        }
        if let Some(tu) = &self.time_unit {
            a.push("-tu".into());
            a.push(tu.clone());
        }
        for (k, v) in &self.params {
            a.push("-p".into());
            a.push(format!("{k}={v}"));
        }
        for p in &self.profilers {
            a.push("-prof".into());
            a.push(p.clone());
        }
        if !self.jvm_flags.is_empty() {
            a.push("-jvmArgsAppend".into());
            a.push(self.jvm_flags.clone());
        }
        a
    }

    /// How long JMH may take before it is killed: three times its iterations, plus a
    /// minute per fork for JVM start-up and exit.
    fn limit(&self) -> Duration {
        let per_fork = self.warmup_time * self.warmups + self.iteration_time * self.iterations;
        (per_fork * 3 + Duration::from_secs(60)) * self.forks
    }
}

impl Engine for Jmh {
    fn info(&self) -> &'static EngineInfo {
        &INFO
    }
    fn check(&self) -> Result<(), EngineError> {
        find_java().map(|_| ())
    }
    fn validate(&self, ctx: &CellContext) -> Result<(), EngineError> {
        setup(ctx).map(|_| ())
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        Ok(Box::new(JmhCell { setup: setup(ctx)?, work_dir: ctx.work_dir.clone(), env: ctx.env.clone() }))
    }
}

struct JmhCell {
    setup: Setup,
    work_dir: PathBuf,
    env: std::collections::BTreeMap<String, String>,
}

impl JmhCell {
    fn run_cell(&self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        let s = &self.setup;
        let result = self.work_dir.join("jmh-result.json");
        let mut run = JmhRun::spawn(&s.java, &s.args(&result), &self.work_dir, &self.env)?;
        let deadline = Instant::now() + s.limit();
        let mut progress = Progress::new(s.forks, s.iterations);
        let (mut cpu0, mut cpu1) = (None, None);
        while let Some(out) = run.next_out(ctl, deadline)? {
            let edges = match out {
                Out::Line(line) => progress.on_line(&line),
                Out::Partial(text) => progress.on_partial(&text).into_iter().collect(),
            };
            for edge in edges {
                if edge == Edge::Open {
                    cpu0 = Some(tree_cpu(run.pid()));
                    ctl.begin_measure();
                } else {
                    ctl.end_measure();
                    cpu1 = Some(tree_cpu(run.pid()));
                }
            }
        }
        let (ok, stdout, stderr) = run.finish()?;
        if !ok {
            return Err(EngineError::Failed(format!("JMH failed: {}", process::tail(&stdout, &stderr))));
        }
        let (Some(c0), Some(c1)) = (cpu0, cpu1) else {
            return Err(EngineError::Failed(format!(
                "JMH ended without reporting its last fork's iterations: {}",
                process::tail(&stdout, &stderr)
            )));
        };
        let text = std::fs::read_to_string(&result)
            .map_err(|e| EngineError::io("cannot read JMH's JSON result", &result, e))?;
        let results = json::parse(&text).map_err(EngineError::Failed)?;
        let window_s = ctl.window().map(|w| w.as_secs_f64()).unwrap_or(0.0);
        store::store(rec, s, &results, window_s, c1.since(c0))
    }
}

impl Workload for JmhCell {
    fn run(&mut self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        let res = self.run_cell(ctl, rec);
        if res.is_err() {
            ctl.stop();
        }
        res
    }
}
