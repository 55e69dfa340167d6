//! The measurement loop: for each planned cell set the CPUs, drop caches, prepare the
//! workload, run warmup and the measured window while the sampler records, snapshot
//! /proc/stat exactly at the window's edges, clean up, and hand the result to the sinks.
//!
//! The files depend one way: `runner` (what a run is measured with), `host` (one cell on this
//! machine), `cell` (one cell here or in a guest, numbered and handed to the sinks), `ramp`
//! (a ramp of cells), `run` (the whole plan). This file only declares them.

mod cell;
mod host;
mod ramp;
mod run;
mod runner;

pub(crate) use cell::run_alone;
pub use run::execute;
pub(crate) use runner::{tell, Emit};
pub use runner::{RunOutcome, Runner};

#[cfg(test)]
pub(crate) mod tests;
