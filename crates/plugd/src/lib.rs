//! racehorse-plugd: a cpuplugd-compatible CPU and memory hotplug daemon (config and rules from
//! racehorse-rules), its sampling and history, decisions, backends (sysfs, cpuset, replay),
//! lifecycle (lock, pid file, signals, reload) and the trace recorder.

pub mod check;
pub mod cpus;
pub mod daemon;
pub mod decide;
pub mod detach;
pub mod lifecycle;
pub mod log;
pub mod memory;
pub mod replay;
pub mod sample;
pub mod values;

pub use daemon::{load, run, Backend, Exit, Flags, MemoryMode, Options};
pub use lifecycle::Paths;
