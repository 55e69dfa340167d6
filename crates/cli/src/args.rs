//! Command-line types (clap derive). Only this crate knows about clap.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// The exit codes, shown at the end of `racehorse --help` (docs/cli.md's table, the one the
/// other docs link, lists the same; crates/runner/src/error.rs `RunError::exit_code` decides
/// them for a run).
pub const EXIT_CODES: &str = "Exit codes:
  0        success (a run: every cell ok)
  1        failure: a run finished with failed cells, or an error (store, machine, engine)
  2        usage error: bad flag, suite file, option value, or a missing tool; the message
           says what to do
  3        `compare --fail-on-regression PCT` found a significant regression of at least PCT
  4        a run could not put the machine back as it found it: run `racehorse restore`
  75       another racehorse (a run or plugd) holds the machine: try again, or `run --wait`
  128+N    stopped by signal N after restoring the machine: 130 SIGINT (Ctrl-C), 143
           SIGTERM, 129 SIGHUP; later signals wait for the restore";

/// Examples at the end of `racehorse run --help`.
pub const RUN_EXAMPLES: &str = "Examples:
  racehorse run quick                               a tour of every area (~3 min), then a per-area table
  racehorse run quick --dry-run                     the plan and its estimated duration
  racehorse run fileserver --clients 1,4 --cpus 1,2 --runtime 10s --reps 3
  racehorse run micro -o bench=null --label before
  racehorse run command -o 'regex:=score: ([\\d.]+)' --label mine -- ./mybench -t 4
  racehorse run suite.toml --variant base,ra-1m --order random
  racehorse run standard --format json > events.jsonl   JSON lines only on stdout
  racehorse run diskio --reps auto --dir /mnt/scratch --wait";

#[derive(Parser, Debug)]
#[command(
    name = "racehorse",
    version,
    about = "A Linux performance-evaluation lab: run workloads, measure throughput and CPU per unit of work, store and compare",
    long_about = "racehorse runs workloads on this machine, scales them over CPUs and processes, and measures \
                  throughput and processor consumption per unit of work (total, kernel, user). Every result is \
                  stored in SQLite.\n\nStart with `racehorse run quick` (a tour of every area, about 3 minutes), then `racehorse show LABEL`.",
    after_help = EXIT_CODES
)]
pub struct Cli {
    /// SQLite database (default: $XDG_DATA_HOME/racehorse/racehorse.db), or for `load`,
    /// `list`, `show`, `export`, `compare`, `report`, `profile` and `prune` a central PostgreSQL database:
    /// postgres://USER[:PASSWORD]@HOST:PORT/DB[?sslmode=require] (password also from PGPASSWORD)
    #[arg(long, global = true, env = "RACEHORSE_DB")]
    pub db: Option<PathBuf>,
    /// Less on stderr: no progress bar (results, warnings and errors still print)
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// More on stderr: `run` prints a line per finished cell, `plugd` logs every decision
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a preset (quick, standard), a workload by name, or a suite file (TOML)
    #[command(after_help = RUN_EXAMPLES)]
    Run(Box<RunArgs>),
    /// List stored runs: id, label, date, status, host, cells
    List(ListArgs),
    /// Show a run's cells: throughput and CPU per unit of work (total, kernel, user)
    Show(ShowArgs),
    /// Export a run as JSON or CSV (versioned contract in docs/formats.md)
    Export(ExportArgs),
    /// Show the captured environment of a run, or of this machine now (grouped keys; a setting
    /// the machine lacks reads "not available"; the keys are in docs/compare.md)
    Env(EnvArgs),
    /// List workload engines, or show one engine's options
    Workloads(WorkloadsArgs),
    /// Compare runs with a base run: tables scaled to base, significance, summary, env diff
    Compare(CompareArgs),
    /// One figure of one point over many runs: when it changed, by how much, and is it real
    #[command(after_help = crate::args_history::HISTORY_EXAMPLES)]
    History(Box<crate::args_history::HistoryArgs>),
    /// Which change did it: a noise-aware bisection over commits (or values) that names the
    /// culprit with its comparison
    #[command(after_help = crate::args_bisect::BISECT_EXAMPLES)]
    Bisect(Box<crate::args_bisect::BisectArgs>),
    /// New confirmed change points of the stored series (exit 3 with --fail-on-new: a CI gate)
    Alerts(crate::args_history::AlertsArgs),
    /// Acknowledge a change point of the ledger, with a reason (and a link)
    Ack(crate::args_history::AckArgs),
    /// Hide a change point of the ledger
    Hide(crate::args_history::HideArgs),
    /// Report one run: every workload with tables and charts, and the environment
    Report(ReportArgs),
    /// One profiled point's call stacks: its hottest frames with their callers, or a
    /// standalone flame graph (--svg FILE)
    #[command(after_help = crate::args_profile::PROFILE_EXAMPLES)]
    Profile(crate::args_profile::ProfileArgs),
    /// Load a run's JSON export (from this or another store) as a new run, or cells that a run
    /// kept outside the store (the store could not be written) back in
    Import(ImportArgs),
    /// Load JSON exports and SQLite stores into a central PostgreSQL database (--db
    /// postgres://…): idempotent, only new runs and cells are added
    #[command(after_help = LOAD_EXAMPLES)]
    Load(LoadArgs),
    /// Remove runs from the store (or the central database) by id, label, tag, host, age or
    /// count per series; --dry-run lists them; runs the change-point ledger cites stay
    #[command(after_help = crate::args_prune::PRUNE_EXAMPLES)]
    Prune(crate::args_prune::PruneArgs),
    /// Restore CPUs and sysctls left changed by a racehorse (run or plugd) that was killed
    Restore,
    /// CPU/memory hotplug daemon speaking cpuplugd's config language (run, check, record, replay)
    Plugd(crate::args_plugd::PlugdArgs),
    /// Serve as the peer of the `net` workload run from another host (benchmark protocol only)
    Serve(ServeArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    #[command(
        after_help = "Examples:\n  racehorse completions bash > ~/.local/share/bash-completion/completions/racehorse\n  \
                            racehorse completions zsh > ~/.zfunc/_racehorse   (with fpath+=~/.zfunc)\n  \
                            racehorse completions fish > ~/.config/fish/completions/racehorse.fish"
    )]
    Completions(CompletionsArgs),
    /// Print the man page (racehorse.1), or write one page per command into a directory
    #[command(
        after_help = "Examples:\n  racehorse man | man -l -\n  racehorse man --dir /usr/local/share/man/man1"
    )]
    Man(ManArgs),
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write racehorse.1 and one page per subcommand (racehorse-run.1 …) into DIR instead of
    /// printing racehorse.1
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// Print JSON (contract `racehorse-runs`, docs/formats.md)
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub filter: crate::args_history::RunFilterArgs,
    /// With a central database (--db postgres://…): only this campaign's runs, and the hosts
    /// of its manifest that have no run (unreachable, failed)
    #[arg(long, value_name = "ID")]
    pub campaign: Option<String>,
}

/// Examples at the end of `racehorse load --help`.
pub const LOAD_EXAMPLES: &str = "Examples:
  racehorse load --db postgres://rh@db.example:5432/fleet?sslmode=verify-full web-1.json web-2.json
  racehorse load --db postgres://rh@db:5432/fleet --campaign-manifest campaign.json exports/*.json
  racehorse load --db postgres://rh@db:5432/fleet ~/.local/share/racehorse/racehorse.db   (every run of a store)
Loading the same files again changes nothing; a later export of a run adds its new cells.
The password comes from the URL or PGPASSWORD; messages never show it.";

#[derive(Args, Debug)]
pub struct LoadArgs {
    /// The campaign manifest the fleet's collect play wrote (format racehorse-campaign):
    /// records each host's outcome, so that `list --campaign` shows hosts without runs
    #[arg(long, value_name = "FILE")]
    pub campaign_manifest: Option<PathBuf>,
    /// JSON exports (`racehorse export RUN --format json`) and SQLite stores (every run in them)
    #[arg(value_name = "PATH", required_unless_present = "campaign_manifest")]
    pub paths: Vec<PathBuf>,
    /// Connections writing at once (default: the number of CPUs, at most 4)
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub jobs: Option<u32>,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  racehorse serve                                  (loopback, 127.0.0.1:7420)\n  \
                        RACEHORSE_TOKEN=s3cret racehorse serve --listen 0.0.0.0:7420\n  \
                        then elsewhere: RACEHORSE_TOKEN=s3cret racehorse run net --peer HOST:7420"
)]
pub struct ServeArgs {
    /// Address and port to listen on, e.g. 0.0.0.0:7420 or [::]:7420; anything but loopback
    /// needs a token
    #[arg(long, default_value = "127.0.0.1:7420", value_name = "ADDR")]
    pub listen: String,
    /// Shared token every client must present (required unless listening on loopback)
    #[arg(long, env = "RACEHORSE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Most connections served at once; more are told the peer is busy
    #[arg(long, default_value_t = 1024)]
    pub max_connections: usize,
    /// Seconds a served client may stay silent (or not read) before it is dropped
    #[arg(long, default_value_t = 30)]
    pub timeout_s: u64,
    /// SO_SNDBUF of accepted connections in bytes (0 = the kernel's autotuning)
    #[arg(long, default_value_t = 0)]
    pub sndbuf: u64,
    /// SO_RCVBUF of accepted connections in bytes (0 = the kernel's autotuning)
    #[arg(long, default_value_t = 0)]
    pub rcvbuf: u64,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// Aligned tables for the terminal
    Text,
    /// GitHub-flavoured markdown tables
    Md,
    /// One line per (point, metric), base units (docs/formats.md)
    Csv,
    /// Versioned JSON document (docs/formats.md)
    Json,
    /// One self-contained HTML page with SVG charts (works offline)
    Html,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum CiMethodArg {
    /// Delta method on the log ratio with Welch–Satterthwaite degrees of freedom
    Welch,
    /// Percentile bootstrap of the ratio of means (2000 resamples, seeded)
    Bootstrap,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  racehorse compare old new\n  racehorse compare 3 4 5 --absolute --ci\n  \
                        racehorse compare 7@default 7@nosmt\n  racehorse compare 7                      (its variants, the first as base)\n  \
                        racehorse compare 7 --by ipc=none        (run 7's cells by their value of ipc, none as base)\n  \
                        racehorse compare o0 o3 --by cflags      (two runs that differ in --cflags)\n  \
                        racehorse compare old.db:3 5             (run 3 of another store file against run 5)\n  \
                        racehorse compare --db postgres://rh@db/fleet web-1:base web-2:base   (two hosts' runs)\n  \
                        racehorse compare base new --fail-on-regression 5   (exit 3 on a significant loss of 5% or more)\n  \
                        racehorse compare old new --format html -o report.html"
)]
pub struct CompareArgs {
    /// Base run (id or label), optionally narrowed to one variant: RUN@VARIANT; a run of
    /// another store file: FILE:RUN. With a central database (--db postgres://…): HOST:RUN,
    /// HOST an inventory name and RUN a label, the run's id on that host, a uuid (prefix) or
    /// latest; FILE:RUN still names a SQLite file when FILE exists (an existing file wins)
    pub base: String,
    /// One or more new runs (id or label, or RUN@VARIANT, or FILE:RUN); none: compare the
    /// variants of BASE (or with --by, its values of that parameter), the first one being the base
    pub new: Vec<String>,
    /// Compare along this parameter (cflags, ipc …): cells are matched on everything else;
    /// NAME=VALUE makes VALUE the base (default: the base run's only value, or with one run
    /// the first value that ran). `workload` compares engines run with the same parameters
    /// (`--by workload=fio`: diskio scaled to fio)
    #[arg(long, value_name = "NAME[=BASE]")]
    pub by: Option<String>,
    /// Exit with code 3 when any point got significantly worse by PCT percent or more in any
    /// metric (throughput or CPU per unit); 0 otherwise. Noisy points and figures below
    /// resolution never count
    #[arg(long, value_name = "PCT")]
    pub fail_on_regression: Option<f64>,
    /// Output format (default: html when -o ends in .html, else text)
    #[arg(long, short = 'f', value_enum)]
    pub format: Option<ReportFormat>,
    /// Write to this file instead of stdout
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
    /// Also show base and new means in display units
    #[arg(long)]
    pub absolute: bool,
    /// Also show each ratio's confidence interval
    #[arg(long)]
    pub ci: bool,
    /// Confidence level of the intervals, e.g. 0.95
    #[arg(long, default_value_t = 0.95)]
    pub level: f64,
    /// How intervals of the ratio are computed
    #[arg(long, value_enum, default_value_t = CiMethodArg::Welch)]
    pub ci_method: CiMethodArg,
    /// Flag cells whose coefficient of variation exceeds this many percent as noisy (~)
    #[arg(long, default_value_t = 5.0)]
    pub noisy_cv_pct: f64,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// `racehorse export RUN --format json` files (each becomes a new run; a run already in
    /// the store is not loaded twice, a later export of it adds its new cells and status), or
    /// files named by a run's error ("the measured cell is kept in FILE"). Every file is
    /// checked before anything is written
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Run id or label, optionally RUN@VARIANT
    pub run: String,
    /// Output format (default: html when -o ends in .html, else text)
    #[arg(long, short = 'f', value_enum)]
    pub format: Option<ReportFormat>,
    /// Write to this file instead of stdout
    #[arg(long, short = 'o')]
    pub output: Option<PathBuf>,
    /// Flag cells whose coefficient of variation exceeds this many percent as noisy
    #[arg(long, default_value_t = 5.0)]
    pub noisy_cv_pct: f64,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum RunFormat {
    /// Progress bar and a summary table
    Text,
    /// JSON lines of events on stdout (nothing else on stdout)
    Json,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// What to run: a preset, a workload or a suite .toml file (the lists are generated from
    /// the presets and the registry, see `shortcuts::what_help`)
    pub what: String,
    /// Label for the run, used by show/compare (default: the preset, workload or file name)
    #[arg(long)]
    pub label: Option<String>,
    /// A tag kept with the run, e.g. --tag commit=3f2a9c1 --tag build=812 (repeatable): runs
    /// with tags form the series of `racehorse history` (kernel and racehorse are added)
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    /// Online-CPU counts to scale over, e.g. 1,2 (default: all online CPUs)
    #[arg(long, value_delimiter = ',')]
    pub cpus: Vec<u32>,
    /// Any workload option, NAME=V1[,V2...] (a list is an axis); NAME:=VALUE takes VALUE whole,
    /// commas included (regular expressions, command lines); repeat for several (see
    /// `racehorse workloads show NAME`)
    #[arg(long = "opt", short = 'o', value_name = "NAME=VALUES")]
    pub opts: Vec<String>,
    /// Measured window per cell, e.g. 20s, 2m
    #[arg(long)]
    pub runtime: Option<String>,
    /// Unmeasured warm-up before each window, e.g. 4s
    #[arg(long)]
    pub warmup: Option<String>,
    /// Repetitions of every cell, or `auto`: at least 3, then more for the points whose 95%
    /// interval of throughput is wider than ±--target-ci-pct, up to --max-reps
    #[arg(long, value_name = "N|auto")]
    pub reps: Option<String>,
    /// With --reps auto: the most repetitions of any point [default: 10]
    #[arg(long)]
    pub max_reps: Option<u32>,
    /// With --reps auto: the half-width (in %) of the 95% interval to reach [default: 2]
    #[arg(long)]
    pub target_ci_pct: Option<f64>,
    /// Directory where disk workloads write (default: the system temp dir)
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Do not sync and drop the page cache before each cell
    #[arg(long)]
    pub no_drop_caches: bool,
    /// Limit the memory of the whole run (workload threads and harness) with a cgroup, e.g.
    /// 512M; root only; restored afterwards (seed 004's setup for cold disk reads)
    #[arg(long, value_name = "SIZE")]
    pub mem_limit: Option<String>,
    /// Run only these of the suite's variants, e.g. base,ra-1m (in the suite's order)
    #[arg(long = "variant", value_delimiter = ',', value_name = "NAMES")]
    pub variants: Vec<String>,
    /// Order of the cells of several variants: interleaved (each repetition runs every
    /// variant in turn), grouped (one variant after the other) or random (shuffled within each
    /// repetition, seeded) [default: the suite's, else interleaved]
    #[arg(long, value_name = "ORDER")]
    pub order: Option<String>,
    /// Seed of --order random (default: chosen at start and recorded with the run)
    #[arg(long)]
    pub seed: Option<u64>,
    /// Print the plan and its estimated duration, run nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Output: text, or JSON lines of events (stdout carries JSON only)
    #[arg(long, value_enum, default_value_t = RunFormat::Text)]
    pub format: RunFormat,
    /// Sampler period in milliseconds (0 disables the monitor time series)
    #[arg(long, default_value_t = 1000)]
    pub sample_ms: u64,
    /// Record where the CPU time goes during each cell's measured window (system-wide perf
    /// samples with call chains, cpu-clock event, and perf stat counters) and store the top
    /// images and symbols, the folded call stacks and the counts; `show` lists them and
    /// `compare` shows what grew or shrank. Settings: `--profile=callgraph=fp|dwarf|lbr|none`
    /// (default fp, frame pointers) and `freq=HZ` (default 999), comma-separated; the next
    /// word is taken as settings only when it starts with `callgraph=` or `freq=`
    #[arg(long, value_name = "SETTINGS", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub profile: Option<String>,
    /// With --profile: keep each cell's perf.data in DIR, named
    /// `run<ID>-cell<INDEX>-<LABEL>.perf.data` (open it with `perf report -i FILE`)
    #[arg(long, value_name = "DIR")]
    pub keep_profile: Option<PathBuf>,
    /// When another racehorse run (or `racehorse plugd`) holds the machine, wait for it to
    /// finish instead of failing with exit code 75. Only one racehorse changes a machine at a time.
    #[arg(long)]
    pub wait: bool,
    /// Other processes' CPU (plus steal), in percent of one CPU averaged over a window, above
    /// which a cell is marked noisy and kept out of significant verdicts
    #[arg(long, value_name = "PCT", default_value_t = 5.0, value_parser = percent_of_a_cpu)]
    pub noise_threshold: f64,
    /// Do not run the first cell once, unmeasured, before the first measured window
    #[arg(long)]
    pub no_warm_up: bool,
    /// Wait until this time (Unix seconds, fractions allowed) before the first cell, so that a
    /// campaign's hosts start their measured windows together; needs clocks in sync (chrony,
    /// within a few ms; docs/fleet.md)
    #[arg(long, value_name = "UNIX_S")]
    pub start_at: Option<f64>,
    /// This host's name in the fleet's inventory, kept with the run (export, `load`, and
    /// `compare HOST:RUN` on a central database) [default: the host name]
    #[arg(long, env = "RACEHORSE_INVENTORY_NAME", value_name = "NAME")]
    pub inventory_name: Option<String>,
    /// The campaign this run belongs to (a fleet's runs of one suite), kept with the run
    #[arg(long, env = "RACEHORSE_CAMPAIGN", value_name = "ID")]
    pub campaign: Option<String>,
    /// Words after -- for workloads that run a program (help generated from the engines)
    #[arg(last = true, value_name = "PROGRAM ARGS")]
    pub program: Vec<String>,
    /// Engine options set by the shortcut flags (`--clients`, `--pg` …), which are generated
    /// from the engines' descriptions and read after parsing (`shortcuts::values`)
    #[arg(skip)]
    pub shortcut_values: crate::shortcuts::OptionValues,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Run id or label (the newest run with that label)
    pub run: String,
    /// Also list every repetition, not only the per-cell medians
    #[arg(long)]
    pub reps: bool,
    /// Also list latency percentiles (p50, p90, p99, max) per point and operation
    #[arg(long)]
    pub latency: bool,
    /// Print the run as one JSON document (format racehorse-show, docs/formats.md) and nothing else
    #[arg(long, conflicts_with_all = ["reps", "latency"])]
    pub json: bool,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Json,
    Csv,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Run id or label
    pub run: String,
    #[arg(long, value_enum, default_value_t = ExportFormat::Json)]
    pub format: ExportFormat,
    /// Write to this file instead of stdout
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct EnvArgs {
    /// Run id or label; without it, capture this machine now
    pub run: Option<String>,
    /// Print JSON (the environment with `format` `racehorse-env`, docs/formats.md)
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct WorkloadsArgs {
    /// Print the overview as the markdown table of docs/workloads/README.md
    #[arg(long)]
    pub markdown: bool,
    /// Print JSON (contract `racehorse-workloads`, docs/formats.md); also after `show NAME`
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub sub: Option<WorkloadsSub>,
}

#[derive(Subcommand, Debug)]
pub enum WorkloadsSub {
    /// Show one engine's options: name, kind, default, help
    Show { name: String },
}

/// `--noise-threshold PCT`: a number in (0, 100], checked when the command line is parsed so
/// that `--dry-run` refuses NaN and infinities too (issue 47, case 8).
fn percent_of_a_cpu(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 100.0 => Ok(p),
        _ => Err(format!("{text}: use a percentage in (0, 100], e.g. 5")),
    }
}
