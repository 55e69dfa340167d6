//! The `command` engine: any program as a workload. The program runs under `/bin/sh -c` with
//! the cell's parameters substituted into its command line; its figure is taken from its
//! output by a regular expression or a JSON path; the unit and the direction come from the
//! suite. The measured window is the program's run, with the runner's usual CPU accounting.

mod child;
pub mod extract;
pub mod pattern;

use crate::info::{shortcuts, EngineInfo, Shortcut, ShortcutForm, Tool};
use crate::{
    bounded_output, AreaRule, Caps, CellContext, Control, Engine, EngineError, Figure, OptKind, OptionSpec,
    Recorder, SummaryArea, Workload,
};
use extract::{Extractor, JsonPath};
use pattern::Pattern;
use racehorse_core::{CpuMethod, Value, WorkUnit, WorkloadCpu};
use std::time::{Duration, Instant};

pub struct CommandEngine;

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "cmd",
        kind: OptKind::Str,
        default: "",
        help: "the command line, run by /bin/sh -c in the cell's work directory; {name} is replaced by \
               the cell's value of option name, and by {cpus}, {runtime} (whole seconds), {workdir}, {rep}",
    },
    OptionSpec {
        name: "regex",
        kind: OptKind::Str,
        default: "",
        help: "where the figure is in stdout then stderr, in the last match: group (?P<value>…), else the \
               first group that took part, else the whole match",
    },
    OptionSpec {
        name: "json",
        kind: OptKind::Str,
        default: "",
        help: "or: a JSON path into stdout (or its last JSON line), e.g. $.result.score",
    },
    OptionSpec {
        name: "unit",
        kind: OptKind::Str,
        default: "units",
        help: "what the figure counts, shown with it (e.g. jOPS, requests/s, s)",
    },
    OptionSpec {
        name: "direction",
        kind: OptKind::Choice(&["higher", "lower"]),
        default: "higher",
        help: "higher: the figure is a rate (or a count, see count) and more is better; lower: it is a \
               cost per unit of work (seconds, latency), and throughput is its inverse",
    },
    OptionSpec {
        name: "count",
        kind: OptKind::Bool,
        default: "false",
        help: "with direction=higher: the figure is units done in the run, not units per second",
    },
    OptionSpec {
        name: "clients",
        kind: OptKind::Int { min: 1, max: 1 << 20 },
        default: "1",
        help: "a number to substitute as {clients} (an axis: threads, users, connections)",
    },
    OptionSpec {
        name: "arg",
        kind: OptKind::Str,
        default: "",
        help: "free text to substitute as {arg} (an axis: heap sizes, modes, input files)",
    },
    OptionSpec {
        name: "timeout",
        kind: OptKind::Int { min: 0, max: 1 << 31 },
        default: "0",
        help: "seconds after which the program is killed and the cell fails; 0: none (Ctrl-C still stops it)",
    },
];

/// One cell's settings, checked.
#[derive(Debug, Clone)]
struct Setup {
    script: String,
    extractor: Extractor,
    lower_is_better: bool,
    count: bool,
    timeout: Option<Duration>,
}

/// The value put in place of `{name}`.
fn placeholder(ctx: &CellContext, name: &str) -> Option<String> {
    match name {
        "cpus" => Some(ctx.cpus.to_string()),
        "workdir" => Some(ctx.work_dir.display().to_string()),
        "rep" => Some(ctx.spec.rep.to_string()),
        _ => match ctx.spec.params.get(name) {
            Some(Value::Str(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
            // An option of ours left unset (e.g. arg) is empty text.
            None => OPTIONS.iter().any(|o| o.name == name).then(String::new),
        },
    }
}

/// A text option, "" when unset (the optional ones have no default).
fn text<'a>(ctx: &'a CellContext, name: &str) -> Result<&'a str, EngineError> {
    match ctx.spec.params.get(name) {
        None => Ok(""),
        Some(_) => ctx.get_str(name),
    }
}

/// The name of a `{name}` placeholder at the start of `tail` and its length in bytes, if it is
/// one: an identifier in braces.
fn placeholder_at(tail: &str) -> Option<(&str, usize)> {
    let inner = tail.strip_prefix('{')?;
    let end = inner.find('}')?;
    let name = &inner[..end];
    let ident = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    ident.then_some((name, end + 2))
}

/// `template` with every `{name}` (an identifier in braces, not after `$`: shell `${VAR}`
/// stays) replaced; `{{name}}` stands for `{name}` itself; other braces are kept as they are
/// (JSON in the command). `runtime_s` fills `{runtime}`. An unknown name is an error
/// listing the known ones.
fn substitute(template: &str, ctx: &CellContext, runtime_s: u64) -> Result<String, EngineError> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some((name, len)) = tail.strip_prefix('{').and_then(placeholder_at) {
            if tail[1 + len..].starts_with('}') {
                // `{{name}}`: the placeholder written out, not replaced.
                out.push_str(&format!("{{{name}}}"));
                rest = &tail[len + 2..];
                continue;
            }
        }
        let Some((name, len)) = placeholder_at(tail).filter(|_| !out.ends_with('$')) else {
            out.push_str(&tail[..1]);
            rest = &tail[1..];
            continue;
        };
        let value = if name == "runtime" { Some(runtime_s.to_string()) } else { placeholder(ctx, name) };
        let value = value.ok_or_else(|| {
            let known: Vec<&str> = ctx.spec.params.keys().map(String::as_str).collect();
            EngineError::Usage(format!(
                "cmd: no value for {{{name}}}; known: cpus, runtime, workdir, rep, {} (write {{{{{name}}}}} to keep it)",
                known.join(", ")
            ))
        })?;
        out.push_str(&value);
        rest = &tail[len..];
    }
    out.push_str(rest);
    Ok(out)
}

fn setup(ctx: &CellContext, runtime_s: u64) -> Result<Setup, EngineError> {
    let usage = EngineError::Usage;
    let cmd = text(ctx, "cmd")?;
    if cmd.trim().is_empty() {
        return Err(usage(
            "command needs a program: `racehorse run command -o 'regex:=score: ([0-9.]+)' -- PROGRAM ARGS`, \
             or cmd = \"...\" in the suite"
                .into(),
        ));
    }
    let extractor = match (text(ctx, "regex")?, text(ctx, "json")?) {
        ("", "") => return Err(usage("command: give regex or json to find the figure in the output".into())),
        (r, "") => Extractor::Regex(Pattern::new(r).map_err(|e| usage(format!("regex: {e}")))?),
        ("", j) => Extractor::JsonPath(JsonPath::new(j).map_err(|e| usage(format!("json: {e}")))?),
        _ => return Err(usage("command: give regex or json, not both".into())),
    };
    let timeout = ctx.get_u64("timeout")?;
    Ok(Setup {
        script: substitute(cmd, ctx, runtime_s)?,
        extractor,
        lower_is_better: ctx.get_str("direction")? == "lower",
        count: ctx.get_bool("count")?,
        timeout: (timeout > 0).then(|| Duration::from_secs(timeout)),
    })
}

/// The command is run by /bin/sh.
const TOOL: Tool = Tool { program: "sh", hint: "a POSIX shell is needed to run the command" };

/// `racehorse run command -- PROGRAM ARGS` sets `cmd`.
const CMD_SHORTCUT: Shortcut = Shortcut {
    flag: "",
    option: "cmd",
    form: ShortcutForm::Trailing,
    value_name: "PROGRAM ARGS",
    help: "The program to run, after --, e.g. `racehorse run command -- make -j{clients}`",
};

/// The figure the command printed (its pattern's capture).
const FIGURES: &[Figure] = &[Figure::info("figure", "the command's figure", "as printed")];

/// What `CommandEngine` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "command",
    about:
        "any program as a workload: its figure from its output (regex or JSON path), CPU per unit as usual",
    area: "Other",
    summary_area: AreaRule::Fixed(SummaryArea::Other),
    unit: WorkUnit::Ops,
    caps: Caps { needs_disk: true, external_tool: Some(TOOL), ..Caps::NONE },
    options: OPTIONS,
    figures: FIGURES,
    shortcuts: &[shortcuts::CLIENTS, CMD_SHORTCUT],
};

impl Engine for CommandEngine {
    fn info(&self) -> &'static EngineInfo {
        &INFO
    }
    fn validate(&self, ctx: &CellContext) -> Result<(), EngineError> {
        setup(ctx, 1).map(|_| ())
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        Ok(Box::new(Cell { ctx: ctx.clone() }))
    }
}

struct Cell {
    ctx: CellContext,
}

/// Units of work in a window of `window_s` seconds from the program's figure.
fn units_of(figure: f64, s: &Setup, window_s: f64) -> Result<f64, EngineError> {
    if s.lower_is_better {
        if figure <= 0.0 {
            return Err(EngineError::Failed(format!("the figure {figure} is not a positive cost")));
        }
        return Ok(window_s / figure);
    }
    Ok(if s.count { figure } else { figure * window_s })
}

impl Workload for Cell {
    fn run(&mut self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        let s = setup(&self.ctx, ctl.runtime.as_secs_f64().ceil().max(1.0) as u64)?;
        ctl.begin_measure();
        let started = child::start(&s.script, &self.ctx.work_dir, &self.ctx.env);
        let running = started.inspect_err(|_| ctl.stop())?;
        let deadline = s.timeout.map(|t| Instant::now() + t);
        let finished = running.wait(deadline, &|| ctl.aborted());
        let f = match finished {
            Ok(f) => {
                ctl.end_measure();
                f
            }
            Err(stop) => {
                ctl.stop();
                return Err(match stop {
                    child::Stop::Interrupted => EngineError::Interrupted,
                    child::Stop::TimedOut => EngineError::Failed(format!(
                        "the command ran past its timeout of {} s and was killed",
                        s.timeout.map(|t| t.as_secs()).unwrap_or(0)
                    )),
                });
            }
        };
        if f.code != 0 {
            return Err(EngineError::Failed(format!(
                "the command exited with code {}; last output: {}",
                f.code,
                bounded_output(&f.tail(5))
            )));
        }
        let output = format!("{}\n{}", f.stdout, f.stderr);
        let text = if matches!(s.extractor, Extractor::JsonPath(_)) { &f.stdout } else { &output };
        let figure = s
            .extractor
            .extract(text)
            .map_err(|e| EngineError::Failed(format!("{e}; last output: {}", bounded_output(&f.tail(5)))))?;
        let window_s = ctl.window().map(|w| w.as_secs_f64()).unwrap_or(0.0);
        rec.submit(crate::WorkerStats {
            units: units_of(figure, &s, window_s)?,
            ops: 1,
            ..Default::default()
        });
        rec.set_workload_cpu(WorkloadCpu {
            user_s: f.cpu.user_s,
            kernel_s: f.cpu.kernel_s,
            method: CpuMethod::Children,
        });
        rec.set_extra("figure", figure);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
