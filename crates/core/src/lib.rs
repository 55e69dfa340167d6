//! racehorse-core: the vocabulary every other crate shares (units, cells, results, events).
//!
//! Nothing here does I/O; the types are plain data so that the runner, the store and the
//! renderers agree on what a measurement is.

pub mod environment;
pub mod envtuning;
pub mod event;
pub mod figure;
pub mod histogram;
pub mod params;
pub mod profile;
pub mod quality;
pub mod result;
pub mod rng;
pub mod shell;
pub mod text;
pub mod units;
pub mod virt;

pub use environment::Environment;
pub use event::Event;
pub use figure::{AreaRule, Figure, SummaryArea};
pub use histogram::{DenseHistogram, LatencyHistogram};
pub use params::{CellSpec, Params, Value};
pub use profile::{Counter, FoldedStack, Profile, ProfileEntry};
pub use quality::CellQuality;
pub use result::{CellResult, CellStatus, CpuMethod, CpuUsage, OpStats, RunStatus, SamplePoint, WorkloadCpu};
pub use units::{Bytes, Direction, Nanos, WorkUnit};
pub use virt::VirtCpu;
