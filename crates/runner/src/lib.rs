//! racehorse-runner: suite files, matrix expansion into a plan, the measurement loop around
//! each cell (machine control, warmup, measured window, sampler), and event sinks.

pub mod adaptive;
pub mod apply;
pub mod duration;
pub mod error;
pub mod exec;
pub mod guest;
mod guest_channel;
pub mod guest_init;
pub mod guest_vm;
pub mod leftovers;
pub mod lifecycle;
mod monitor;
pub mod plan;
pub mod profile;
pub mod profiling;
pub mod sinks;
pub mod suite;
pub mod volume;
pub mod window_check;

pub use error::RunError;
pub use exec::{execute, RunOutcome, Runner};
pub use plan::{EngineRef, Plan, PlannedCell};
pub use sinks::{JsonLinesSink, ProgressSink, Sink};
pub use suite::{Order, OverrideError, Overrides, Suite, SuiteError, Variant, WorkloadEntry};
