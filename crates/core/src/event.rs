//! Events the runner emits to its sinks (progress bar, store writer, JSON-lines stream).

use crate::params::CellSpec;
use crate::result::{CellResult, RunStatus};
use crate::units::Nanos;
use serde::{Deserialize, Serialize};

/// Phase of a cell, as reported to sinks. The measured window follows the warmup inside the
/// engine's run, so `Warmup` covers both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellPhase {
    Prepare,
    Warmup,
    Cleanup,
}

/// One event of a run. Serialised with a `"event"` tag for the JSON-lines stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    RunStarted {
        run_id: i64,
        label: String,
        cells: usize,
        /// Estimated duration of the whole plan.
        eta: Nanos,
    },
    /// Something that may make the results less trustworthy (another busy process, a cell
    /// without its profile); shown as `warning: MESSAGE`.
    Warning {
        message: String,
    },
    /// What the run is doing or did for the user (waiting for the machine lock, restoring
    /// what a killed racehorse left, the memory limit); shown as the message itself.
    Notice {
        message: String,
    },
    CellStarted {
        index: usize,
        cells: usize,
        spec: CellSpec,
    },
    CellPhase {
        index: usize,
        phase: CellPhase,
    },
    CellFinished {
        index: usize,
        result: Box<CellResult>,
    },
    RunFinished {
        run_id: i64,
        status: RunStatus,
        ok: usize,
        failed: usize,
    },
}
