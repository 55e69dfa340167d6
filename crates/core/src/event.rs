//! Events the runner emits to its sinks (progress bar, store writer, JSON-lines stream).

use crate::params::CellSpec;
use crate::result::{CellResult, RunStatus};
use crate::units::Nanos;
use serde::{Deserialize, Serialize};

/// Phase of a cell, as reported to sinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellPhase {
    Prepare,
    Warmup,
    Measure,
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
    Warning {
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
