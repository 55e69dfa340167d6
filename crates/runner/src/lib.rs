//! racehorse-runner: suite files, matrix expansion into a plan, the measurement loop around
//! each cell (machine control, warmup, measured window, sampler), and event sinks.

pub mod adaptive;
pub mod apply;
pub mod duration;
pub mod error;
pub mod exec;
pub mod guest;
pub mod guest_init;
pub mod guest_vm;
pub mod leftovers;
pub mod lifecycle;
mod monitor;
pub mod plan;
pub mod presets;
pub mod profile;
pub mod profiling;
mod ramp;
pub mod sinks;
pub mod suite;
pub mod variant;
pub mod volume;
pub mod window_check;

pub use error::RunError;
pub use exec::{execute, RunOutcome, Runner};
pub use plan::{EngineRef, Plan, PlannedCell};
pub use sinks::{JsonLinesSink, ProgressSink, Sink};
pub use suite::{Suite, SuiteError, WorkloadEntry};
pub use variant::{Order, Variant};
