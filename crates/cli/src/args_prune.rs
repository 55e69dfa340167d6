//! Command-line types of `racehorse prune`: which runs to remove from a store (SQLite, or the
//! central PostgreSQL database with --db postgres://…), and how.

use clap::Args;

/// Examples at the end of `racehorse prune --help`.
pub const PRUNE_EXAMPLES: &str = "Examples:
  racehorse prune --older-than 90d --dry-run        lists the runs started over 90 days ago
  racehorse prune --older-than 90d --keep-last 20 --yes   but keeps the newest 20 of each series
  racehorse prune 12 13 old-label --yes             these runs
  racehorse prune --tag branch=tmp --yes --vacuum   then shrinks the SQLite file
  racehorse prune --db postgres://rh@db/fleet --label scratch --host web-3 --yes

Every condition given must hold. A run the change-point ledger cites (the last run before or the
first run after a change), or that a bisect measured with, is kept and listed with the reason
unless --force; a run still being written is always kept. Without --yes, prune asks on a
terminal and refuses elsewhere. docs/cli.md has the details.";

#[derive(Args, Debug)]
pub struct PruneArgs {
    /// Runs to remove: an id, a label (its newest run) or a uuid prefix; with a central
    /// database HOST:RUN as `compare` takes it
    #[arg(value_name = "RUN")]
    pub runs: Vec<String>,
    /// Only runs with this label (all of them)
    #[arg(long, value_name = "LABEL")]
    pub label: Option<String>,
    /// Only runs with this tag (repeatable; all must match), e.g. --tag branch=tmp
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    /// Only runs of this host (its name, or its inventory name in a fleet)
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// Only runs started before this time: an age (90d, 12h, 2w, 45m), a date or time in ISO
    /// 8601, or Unix seconds (as list's --until)
    #[arg(long, value_name = "AGE|WHEN", allow_hyphen_values = true)]
    pub older_than: Option<String>,
    /// Keep the newest N runs of every series (each point a run measured, on its host; a run
    /// without cells: its label on its host), among the runs the other conditions select
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub keep_last: Option<String>,
    /// List what would be removed and kept, change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Also remove runs the change-point ledger or a bisect cites (the ledger keeps the point)
    #[arg(long)]
    pub force: bool,
    /// Remove without asking (needed when stdin is not a terminal)
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Afterwards shrink the SQLite file (VACUUM); alone, only that
    #[arg(long)]
    pub vacuum: bool,
}
