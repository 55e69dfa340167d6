//! racehorse-engines: the Engine contract, the registry, the native engines and the adapters.
//!
//! An engine is fio's ioengine idea in Rust: a name, capability flags, a static option table
//! that drives parsing, help and docs, and a lifecycle `prepare → run → cleanup`. Engines count
//! units of work and record latencies; they never print.

// The contract: the traits below, options, control, recorder, errors.
pub mod control;
pub mod error;
pub mod info;
pub mod options;
pub mod recorder;

// Shared support: what more than one engine (or the runner) needs.
pub(crate) mod support;

// The native engines; none imports another (see `layers`). Other crates reach an engine
// through the registry; the few modules still public hold what they use by path: `command`,
// `fileserver` and `micro` parsers and tables (fuzz targets, presets), `net`'s peer (serve).
pub(crate) mod analytics;
pub mod command;
pub(crate) mod compute;
pub(crate) mod diskio;
pub mod fileserver;
pub(crate) mod java;
pub mod micro;
pub(crate) mod mix;
pub mod net;
pub(crate) mod null;
pub(crate) mod oltp;
pub(crate) mod paging;
pub(crate) mod smallread;

// Adapters for external tools (public for the fuzz targets of their report parsers).
pub mod adapters;

// What the engines' tests share.
#[cfg(test)]
mod testutil;

// The list of engines and of the jobs they run in fresh processes.
pub(crate) mod registry;

#[cfg(test)]
mod layers;

pub use control::{Clock, Control, FakeClock, Phase, RealClock, WindowHooks};
pub(crate) use error::bounded_output;
pub use error::EngineError;
pub use info::{Caps, EngineInfo, Shortcut, ShortcutForm, Tool};
pub use options::{OptKind, OptionSpec};
pub use racehorse_core::{AreaRule, Figure, SummaryArea};
pub use recorder::{Recorder, Totals, WorkerMeter, WorkerStats};
pub use registry::{find, fresh_process_entry, pace_options, paced_engines, ready, registry};
pub use support::forked::enable_fresh_process;

use racehorse_core::{CellSpec, Params, Value, WorkUnit};
use std::path::PathBuf;

/// A memory limit a cell runs under (the paging engine's): the runner puts the racehorse
/// process in a memory cgroup of `bytes` for the cell and removes it afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryLimit {
    pub bytes: u64,
    /// Pages over the limit may go to swap (anonymous memory); else swap is limited too.
    pub allow_swap: bool,
    /// A zram swap device of this many bytes for the cell (set up before the limit, removed
    /// after it; root).
    pub zram_bytes: Option<u64>,
}

/// One finished point of a load ramp (see [`Engine::ramp_next`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RampPoint {
    /// The point's parameters (the load included).
    pub params: Params,
    /// Its throughput in units per second; None when the cell failed.
    pub units_per_s: Option<f64>,
    /// Its measured window in seconds.
    pub window_s: f64,
}

/// Everything an engine gets to prepare one cell.
#[derive(Debug, Clone)]
pub struct CellContext {
    /// The cell; `spec.params` holds every engine option (defaults filled in) and the axes.
    pub spec: CellSpec,
    /// A fresh, empty directory for this cell (removed by the runner afterwards).
    pub work_dir: PathBuf,
    /// Number of CPUs the cell may use.
    pub cpus: u32,
    /// Environment variables (from the cell's variant) for programs the workload starts.
    pub env: std::collections::BTreeMap<String, String>,
}

impl CellContext {
    fn param(&self, name: &str) -> Result<&Value, EngineError> {
        self.spec.params.get(name).ok_or_else(|| EngineError::Usage(format!("option '{name}' has no value")))
    }
    pub fn get_u64(&self, name: &str) -> Result<u64, EngineError> {
        self.param(name)?
            .as_u64()
            .ok_or_else(|| EngineError::Usage(format!("option '{name}' must be a non-negative integer")))
    }
    pub fn get_f64(&self, name: &str) -> Result<f64, EngineError> {
        self.param(name)?
            .as_f64()
            .ok_or_else(|| EngineError::Usage(format!("option '{name}' must be a number")))
    }
    pub fn get_str(&self, name: &str) -> Result<&str, EngineError> {
        self.param(name)?
            .as_str()
            .ok_or_else(|| EngineError::Usage(format!("option '{name}' must be a string")))
    }
    pub fn get_bool(&self, name: &str) -> Result<bool, EngineError> {
        self.param(name)?
            .as_bool()
            .ok_or_else(|| EngineError::Usage(format!("option '{name}' must be true or false")))
    }
}

/// A workload type. Implementations are stateless; per-cell state lives in [`Workload`].
pub trait Engine: Send + Sync {
    /// The engine's static description (name, about, area, unit, capabilities, options,
    /// shortcuts): one `static` per engine.
    fn info(&self) -> &'static EngineInfo;
    /// The unit of one cell, for engines whose cells count different things (micro: bytes for
    /// bandwidths, operations for latencies); `info().unit` by default.
    fn unit_for(&self, _spec: &CellSpec) -> WorkUnit {
        self.info().unit
    }
    /// Checks, beyond the generic ones its capabilities drive (see [`ready`]), that the
    /// engine can run here (e.g. a memory cgroup exists).
    fn check(&self) -> Result<(), EngineError> {
        Ok(())
    }
    /// Checks one planned cell before the run starts, writing nothing: parameters that
    /// cannot work together, a target that cannot hold the files. `ctx.work_dir` is the
    /// run's work root. Errors here stop the run before its first cell (exit 2).
    fn validate(&self, _ctx: &CellContext) -> Result<(), EngineError> {
        Ok(())
    }
    /// The memory limit the cell must run under, if any (set before `prepare`, removed after
    /// `cleanup`, on every path).
    fn memory_limit(&self, _ctx: &CellContext) -> Result<Option<MemoryLimit>, EngineError> {
        Ok(None)
    }
    /// Engines whose load grows from cell to cell until a stop rule holds (mix, as re-aim
    /// ramps its users): `planned` is the cell as planned and `done` the points of this ramp
    /// run so far, oldest first. Returns the parameters of the next point, or None to end the
    /// ramp. With `done` empty, Some says that the planned cell is a ramp and gives its first
    /// point; None (the default) makes it an ordinary cell.
    fn ramp_next(&self, _planned: &CellSpec, _done: &[RampPoint]) -> Option<Params> {
        None
    }
    /// Removes from a planned cell's parameters the options that do not apply to it (compute:
    /// a compiler for a cell that compiles nothing), so that its label and key say only what
    /// runs. Called once per cell at planning; the default keeps every option.
    fn drop_unused(&self, _params: &mut Params) {}
    /// Sets up one cell (create files, parse loadfiles) outside the measured window.
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError>;
}

/// The description's fields, read through the engine (not overridable: the description is
/// the one source).
impl dyn Engine + '_ {
    pub fn name(&self) -> &'static str {
        self.info().name
    }
    pub fn about(&self) -> &'static str {
        self.info().about
    }
    pub fn unit(&self) -> WorkUnit {
        self.info().unit
    }
    pub fn area(&self) -> &'static str {
        self.info().area
    }
    pub fn caps(&self) -> Caps {
        self.info().caps
    }
    pub fn options(&self) -> &'static [OptionSpec] {
        self.info().options
    }
}

/// One prepared cell.
pub trait Workload: Send {
    /// Runs the cell. Native engines start their workers and call [`Control::drive_window`];
    /// adapters call [`Control::begin_measure`] / [`Control::end_measure`] as their tool's
    /// own window opens and closes. Counts go to `rec`; only the measured window counts.
    fn run(&mut self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError>;
    /// Removes what `prepare` and `run` left behind (the runner also removes the work dir).
    fn cleanup(self: Box<Self>) -> Result<(), EngineError> {
        Ok(())
    }
}
