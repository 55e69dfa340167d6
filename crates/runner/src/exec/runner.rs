//! What a run is measured with ([`Runner`]: the machine, the clock, the stop flag, the
//! sampler, profiling and the noise threshold), how it ended ([`RunOutcome`]), and how
//! events reach the sinks ([`Emit`], [`tell`]).

use crate::adaptive::AdaptiveSummary;
use crate::error::RunError;
use crate::profiling::ProfileSettings;
use racehorse_core::{Event, RunStatus};
use racehorse_engines::Clock;
use racehorse_machine::SysRoot;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// How to run a plan.
#[derive(Clone)]
pub struct Runner {
    pub root: SysRoot,
    pub clock: Arc<dyn Clock>,
    /// Set by SIGINT/SIGTERM; checked between cells and inside windows.
    pub abort: Arc<AtomicBool>,
    /// Parent of the per-cell work directories.
    pub work_root: PathBuf,
    /// Sampler period; None disables the sampler (fake-clock tests).
    pub sample_interval: Option<Duration>,
    pub drop_caches: bool,
    /// `run --profile`: record where the CPU time goes in each window.
    pub profile: Option<ProfileSettings>,
    /// Share of one CPU other tenants may use in a window before its cell is noisy.
    pub noise_threshold: f64,
    /// Run the first cell once, unmeasured and unstored, before the first window: the
    /// first measured cell of a run is otherwise often a cold outlier.
    pub warm_up: bool,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    pub status: RunStatus,
    pub ok: usize,
    pub failed: usize,
    /// How adaptive repetitions ended, when the suite asked for them.
    pub adaptive: Option<AdaptiveSummary>,
}

/// Hands an event to every sink; an error (a sink that cannot take it) stops the run.
pub(crate) type Emit<'a> = dyn FnMut(Event) -> Result<(), RunError> + 'a;

/// Hands a phase, warning or notice to the sinks: one a sink cannot show stops nothing.
pub(crate) fn tell(emit: &mut Emit, e: Event) {
    let _ = emit(e);
}
