//! Command-line types of history: the run filters `list`, `history` and `alerts` share, and
//! the arguments of `history`, `alerts`, `ack` and `hide`.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Which runs to look at (every condition given must hold).
#[derive(Args, Debug, Clone, Default)]
pub struct RunFilterArgs {
    /// Only runs with this label
    #[arg(long, value_name = "LABEL")]
    pub label: Option<String>,
    /// Only runs with this tag (repeatable; all must match), e.g. --tag branch=main
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    /// Only runs started at or after this time: a date (2026-11-01), a time in ISO 8601, Unix
    /// seconds, or an age such as 30d, 12h, 2w
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only runs started before this time (same forms as --since)
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// Only runs of this host (its name, or its inventory name in a fleet)
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// Only the newest N runs of those that match
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
}

/// Examples at the end of `racehorse history --help`.
pub const HISTORY_EXAMPLES: &str = "Examples:
  racehorse history                                  every series with a change point, most significant first
  racehorse history fileserver -p clients=4 -p cpus=2   one point: throughput and CPU per unit over its runs
  racehorse history micro -p bench=pipe --figure cpu_kernel --order-by tag:commit
  racehorse history fileserver --figure p99:ReadX --since 30d -o fs.html
  racehorse history net --anchor 12                  also the cumulative change since run 12 (slow drift)
  racehorse history --csv results.csv --metric throughput --json   any series from a file

A change point is reported when the largest split of a series is rarer than --alpha among random
orders of its runs (per series, whatever its length); one within the last --min-segment runs is
pending. Noisy and below-resolution repetitions never count. docs/history.md explains the method.";

/// How a CSV metric is read: which way is better.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Better {
    Higher,
    Lower,
}

#[derive(Args, Debug)]
pub struct HistoryArgs {
    /// The workload of the point (every workload when omitted: then only series with a change
    /// point are listed)
    pub workload: Option<String>,
    /// A parameter of the point, NAME=VALUE as `show` prints it (repeatable), e.g. -p clients=4
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// The variant of the point
    #[arg(long, value_name = "NAME")]
    pub variant: Option<String>,
    /// The figure (repeatable): throughput, cpu, cpu_kernel, cpu_user, p50:OP, p90:OP, p99:OP,
    /// p99.9:OP or extra:KEY [default: throughput and cpu for one point, all four CPU and
    /// throughput figures for a scan]
    #[arg(long = "figure", value_name = "FIGURE")]
    pub figures: Vec<String>,
    #[command(flatten)]
    pub runs: RunFilterArgs,
    /// Order runs by a tag's values, in the order each value first appears (e.g. tag:commit);
    /// runs without the tag are left out [default: start time]
    #[arg(long, value_name = "tag:KEY")]
    pub order_by: Option<String>,
    /// Also report the cumulative change since this run (id or label), for slow drift
    #[arg(long, value_name = "RUN")]
    pub anchor: Option<String>,
    /// Chance that a series without a change reports one
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// A change with fewer runs after it is pending (shown, never alerted)
    #[arg(long, default_value_t = 5, value_name = "RUNS")]
    pub min_segment: usize,
    /// Most random orders per test (the smallest p-value is 1/(N+1))
    #[arg(long, default_value_t = 199, value_name = "N")]
    pub permutations: u32,
    /// Seed of the random orders (results are the same for the same store and seed)
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Do not write what was found into the change-point ledger
    #[arg(long)]
    pub no_ledger: bool,
    /// Print JSON (contract racehorse-history, docs/formats.md) and nothing else
    #[arg(long)]
    pub json: bool,
    /// Write the history to FILE: .html (a page with charts), .md or .txt
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Read the series from a CSV file instead of the store (a header row, a time column,
    /// attribute columns and numeric metric columns; rows with the same time and attributes
    /// are repetitions of one run)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["workload", "params", "variant", "figures", "order_by", "anchor", "no_ledger"])]
    pub csv: Option<PathBuf>,
    /// With --csv: the metric column
    #[arg(long, value_name = "NAME", requires = "csv")]
    pub metric: Option<String>,
    /// With --csv: the time column (Unix seconds or ISO 8601)
    #[arg(long, value_name = "NAME", default_value = "time", requires = "csv")]
    pub time_column: String,
    /// With --csv: a column that identifies runs though its values are numbers (a build
    /// number; repeatable)
    #[arg(long = "attribute", value_name = "NAME", requires = "csv")]
    pub attributes: Vec<String>,
    /// With --csv: which way the metric is better
    #[arg(long, value_enum, default_value_t = Better::Higher, requires = "csv")]
    pub better: Better,
}

#[derive(Args, Debug)]
pub struct AlertsArgs {
    #[command(flatten)]
    pub runs: RunFilterArgs,
    /// Exit 3 when there is a new confirmed change point (a CI gate over history)
    #[arg(long)]
    pub fail_on_new: bool,
    /// Only changes for the worse
    #[arg(long)]
    pub worse: bool,
    /// List every change point of the ledger, whatever its status
    #[arg(long)]
    pub all: bool,
    /// Chance that a series without a change reports one
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// A change with fewer runs after it is pending (not alerted)
    #[arg(long, default_value_t = 5, value_name = "RUNS")]
    pub min_segment: usize,
    /// Print JSON (contract racehorse-alerts, docs/formats.md) and nothing else
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct AckArgs {
    /// The change point's ledger id (from `racehorse alerts` or `history`)
    pub id: i64,
    /// Why it is accepted (kept in the ledger, shown by alerts --all)
    #[arg(long, value_name = "TEXT")]
    pub reason: String,
    /// A link to the cause (a commit, an issue)
    #[arg(long, value_name = "URL")]
    pub link: Option<String>,
}

#[derive(Args, Debug)]
pub struct HideArgs {
    /// The change point's ledger id
    pub id: i64,
    /// Why it is hidden
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
}
