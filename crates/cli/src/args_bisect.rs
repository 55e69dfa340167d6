//! Command-line types of `racehorse bisect`.

use clap::Args;
use std::path::PathBuf;

/// Examples at the end of `racehorse bisect --help`.
pub const BISECT_EXAMPLES: &str = "Examples:
  racehorse bisect --repo ~/src/app --good v1.2 --bad main --build 'make -C {worktree}' -- \\
      command --reps 3 -o 'regex:=ops: (\\d+)' -- {worktree}/bench
  racehorse bisect --repo . --good HEAD~64 --bad HEAD --build 'cargo build --release' --worse cpu -- micro -o bench=pipe
  racehorse bisect --values 1.2.0,1.3.0,1.4.0 -- command -o 'regex:=ops: (\\d+)' -- /opt/app-{value}/bench
  racehorse bisect --resume 3                        go on after Ctrl-C, a reboot or a kill
  racehorse bisect --list                            the stored bisects and their answers

Each step checks the commit out in a worktree of its own (your working tree, index and HEAD are
never touched), runs the build there ({worktree} is its path; exit 125 skips the commit, as in
`git bisect run`), then runs `racehorse run RUN-ARGS` as a normal stored run tagged commit=SHA
and bisect=ID. Endpoints first; then every pair of measured commits that differs is split until
each difference sits between neighbours. docs/bisect.md explains the verdicts and their error rates.";

#[derive(Args, Debug)]
pub struct BisectArgs {
    /// The git repository (left untouched: each step checks out a worktree of its own)
    #[arg(long, value_name = "DIR", conflicts_with = "values")]
    pub repo: Option<PathBuf>,
    /// The revision where the figure was as it should be
    #[arg(long, value_name = "REV")]
    pub good: Option<String>,
    /// The revision where it changed
    #[arg(long, value_name = "REV")]
    pub bad: Option<String>,
    /// The build command, run by /bin/sh in the worktree ({worktree} is its path); exit 125
    /// skips the commit, any other failure stops the bisect
    #[arg(long, value_name = "CMD", requires = "repo")]
    pub build: Option<String>,
    /// Bisect an ordered list of values instead of commits ({value} in the run's arguments);
    /// good and bad default to the first and the last
    #[arg(long, value_name = "V1,V2,...", value_delimiter = ',')]
    pub values: Vec<String>,
    /// Which figure, and that only a change for the worse counts: throughput, cpu,
    /// cpu_kernel, cpu_user, pNN:OP or extra:KEY [default: any significant change of --figure]
    #[arg(long, value_name = "FIGURE", conflicts_with = "figure")]
    pub worse: Option<String>,
    /// The figure to bisect on, any direction [default: throughput]
    #[arg(long, value_name = "FIGURE")]
    pub figure: Option<String>,
    /// A parameter of the point to follow when the run has several, NAME=VALUE (repeatable)
    #[arg(short = 'p', long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Most usable repetitions per commit before an unknown verdict is left undecided
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub max_reps: usize,
    /// The smallest change looked for between neighbouring commits, in % [default: a quarter
    /// of the endpoints' change]
    #[arg(long, value_name = "PCT")]
    pub min_change: Option<f64>,
    /// Also profile the culprit and its parent and show where the CPU time moved
    #[arg(long)]
    pub profile: bool,
    /// Go on with a stored bisect after Ctrl-C, a reboot or a killed process
    #[arg(long, value_name = "ID", conflicts_with_all = ["repo", "values", "good", "bad", "build"])]
    pub resume: Option<i64>,
    /// List the stored bisects
    #[arg(long, conflicts_with_all = ["repo", "values", "resume"])]
    pub list: bool,
    /// Print the answer as JSON (contract racehorse-bisect, docs/formats.md) and nothing else
    #[arg(long)]
    pub json: bool,
    /// The arguments of `racehorse run` for each step: a preset, workload or suite file and
    /// its flags ({worktree} and {value} are replaced)
    #[arg(last = true, value_name = "RUN-ARGS")]
    pub run_args: Vec<String>,
}
