//! Suites: what a run measures, and every rule about it in one place. A suite comes from a
//! file (`file`), a built-in preset (`presets`) or a workload's name (`what`); the command
//! line then changes it through [`Overrides`] and [`Suite::apply`] (`overrides`). Settings'
//! values (`values`: durations, CPUs, repetitions, memory limits) and the options every engine
//! takes from the harness (`harness`: `where`, pacing) have one rule each, used by files and
//! flags alike; variants (`variant`) are parsed with the suite.
//!
//! The files depend one way: `values`, `harness` and `variant` first, then `model` (the
//! types), then `file`, `presets`, `what` and `overrides`. This file only declares them.

mod file;
pub mod harness;
mod model;
mod overrides;
pub mod presets;
pub mod values;
pub mod variant;
mod what;

pub use model::{engine_names, line_col, Suite, SuiteError, WorkloadEntry};
pub use overrides::{OverrideError, Overrides};
pub use values::{mem_limit_value, Adaptive, MAX_REPS, MIN_MEM_LIMIT_BYTES, MIN_REPS};
pub use variant::{Order, Variant};
