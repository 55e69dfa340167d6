//! `racehorse profile`'s command line.

use clap::Args;
use std::path::PathBuf;

/// Examples at the end of `racehorse profile --help`.
pub const PROFILE_EXAMPLES: &str = "Examples:
  racehorse profile 7                               the hottest frames of run 7's one profiled point
  racehorse profile 7 'clients=4'                   of the point with clients=4
  racehorse profile mine@base 'fileserver clients=4' --svg fs.svg   a standalone flame graph";

#[derive(Args, Debug)]
pub struct ProfileArgs {
    /// The run: id, label, or RUN@VARIANT
    pub run: String,
    /// The point, when the run profiled more than one: words that name it, each the workload,
    /// the variant or a parameter as `k=v` (e.g. 'clients=4 cpus=2'); the choices are listed
    /// when it is missing or ambiguous
    pub point: Option<String>,
    /// Write the point's flame graph as a standalone SVG file instead of listing its frames
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Frames listed
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub top: usize,
}
