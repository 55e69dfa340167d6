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
}
