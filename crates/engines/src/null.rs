//! The `null` engine: does no real work and counts a fixed rate of units per second of its
//! window, so the whole pipeline (runner, store, reports) can be tested without noise.

use crate::info::{shortcuts, EngineInfo};
use crate::{
    AreaRule, Caps, CellContext, Control, Engine, EngineError, OptKind, OptionSpec, Recorder, SummaryArea,
    WorkerStats, Workload,
};
use racehorse_core::WorkUnit;

pub struct Null;

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "rate",
        kind: OptKind::Float,
        default: "1000",
        help: "units of work counted per second of window",
    },
    OptionSpec {
        name: "clients",
        kind: OptKind::Int { min: 1, max: 4096 },
        default: "1",
        help: "nominal number of clients (an axis for tests)",
    },
    OptionSpec {
        name: "fail",
        kind: OptKind::Bool,
        default: "false",
        help: "fail in run(), to test error paths",
    },
    OptionSpec {
        name: "mark",
        kind: OptKind::Str,
        default: "",
        help: "a file to which each run appends one line (tests count the runs, warm-ups included)",
    },
];

/// What `Null` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "null",
    about: "no work: counts `rate` units per second (pipeline tests)",
    area: "Harness",
    summary_area: AreaRule::Fixed(SummaryArea::Harness),
    unit: WorkUnit::Ops,
    caps: Caps::NONE,
    options: OPTIONS,
    figures: &[],
    shortcuts: &[shortcuts::CLIENTS],
};

impl Engine for Null {
    fn info(&self) -> &'static EngineInfo {
        &INFO
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        let rate = ctx.get_f64("rate")?;
        if !(rate >= 0.0 && rate.is_finite()) {
            return Err(EngineError::Usage(format!("option 'rate': {rate} must be a finite number >= 0")));
        }
        let mark = ctx.spec.params.get("mark").and_then(|v| v.as_str()).filter(|m| !m.is_empty());
        let mark = mark.map(std::path::PathBuf::from);
        Ok(Box::new(NullCell { rate, fail: ctx.get_bool("fail")?, mark }))
    }
}

struct NullCell {
    rate: f64,
    fail: bool,
    mark: Option<std::path::PathBuf>,
}

impl Workload for NullCell {
    fn run(&mut self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        if let Some(path) = &self.mark {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| EngineError::io("cannot append to the mark file", path, e))?;
            f.write_all(b"run\n").map_err(|e| EngineError::io("cannot append to the mark file", path, e))?;
        }
        if self.fail {
            return Err(EngineError::Failed("null engine asked to fail (fail = true)".into()));
        }
        ctl.drive_window()?;
        let secs = ctl.window().map(|w| w.as_secs_f64()).unwrap_or(0.0);
        let units = (self.rate * secs).round();
        rec.submit(WorkerStats { units, ops: units as u64, ..Default::default() });
        Ok(())
    }
}
