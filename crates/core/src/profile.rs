//! Where the CPU time went during a cell's measured window: system-wide samples grouped by
//! image (executable, library, kernel) and by symbol, as `opreport` and `opreport -l` list them.

use serde::{Deserialize, Serialize};

/// One line of a profile: an image, or a symbol inside an image, and its share of the samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileEntry {
    /// The image (perf's "shared object"): "[kernel.kallsyms]", "libc.so.6", "racehorse" …
    pub image: String,
    /// The symbol, for symbol lines; None for image lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// Percent of all samples in the window (0–100).
    pub share_pct: f64,
}

/// The profile of one cell's measured window.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Profile {
    /// The sampling event, e.g. "cpu-clock".
    pub event: String,
    /// Samples taken in the window (all CPUs).
    pub samples: u64,
    /// Images by share, largest first (the top ones only).
    pub images: Vec<ProfileEntry>,
    /// Symbols by share, largest first (the top ones only).
    pub symbols: Vec<ProfileEntry>,
    /// How call chains were recorded ("fp", "dwarf", "lbr"); None when they were not (and for
    /// profiles stored before call graphs existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callgraph: Option<String>,
    /// The sampling frequency in Hz (samples per CPU-second busy), 0 when unknown (older rows).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub frequency_hz: u32,
    /// Folded call stacks of the window, most samples first, those at or above the kept share.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stacks: Vec<FoldedStack>,
    /// Samples whose stacks were dropped for being below the kept share (counted in `samples`).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub stacks_dropped_samples: u64,
    /// Counters over the same window (hardware where the PMU allows, software everywhere).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<Counter>,
}

/// One call stack folded as FlameGraph's `stackcollapse` scripts write it: frames from the
/// root (outermost caller) to the leaf, joined by ';', with the samples taken in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoldedStack {
    /// "comm;caller;…;leaf": the process name first, then the frames outermost first.
    pub stack: String,
    /// Samples taken with exactly this stack.
    pub samples: u64,
}

/// One counter over the measured window, e.g. "instructions" or "context-switches".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counter {
    /// The perf event name as given to `perf stat -e`.
    pub event: String,
    /// The count over the window (all CPUs); None when the machine does not support the event.
    pub count: Option<f64>,
}

fn is_zero(v: &u32) -> bool {
    *v == 0
}

fn is_zero_u64(v: &u64) -> bool {
    *v == 0
}
