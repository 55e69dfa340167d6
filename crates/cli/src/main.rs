//! The `racehorse` binary: parses the command line (clap types live here only) and calls
//! the libraries. Exit codes (`args::EXIT_CODES`, shown by `--help`): 0 success, 1 run
//! finished with failed cells or an error, 2 usage error (bad flag, suite file, parameter,
//! missing tool), 3 `compare --fail-on-regression` found a significant regression, 4 a run
//! could not restore the machine (`racehorse restore`), 75 another racehorse holds the
//! machine (try again, or `run --wait`), 128 + signal when stopped by SIGINT (130), SIGTERM
//! (143) or SIGHUP (129) and restored.

// The doc comments of the clap types are the command line's help text, where brackets are
// literal (`USER[:PASSWORD]`, `[::]:7420`), not links.
#![allow(rustdoc::broken_intra_doc_links)]

mod args;
mod args_bisect;
mod args_history;
mod args_plugd;
mod args_profile;
mod args_prune;
mod bisect_answer;
mod bisect_profile;
mod bisect_step;
mod catalogue;
mod cmd_bisect;
mod cmd_central;
mod cmd_compare;
mod cmd_docs;
mod cmd_history;
mod cmd_import;
mod cmd_plugd;
mod cmd_profile;
mod cmd_prune;
mod cmd_run;
mod cmd_serve;
mod cmd_show;
mod cmd_workloads;
mod json_out;
mod profile_words;
mod shortcuts;

use args::{Cli, Command};
use clap::{CommandFactory, FromArgMatches};
use std::process::ExitCode;

/// An error with the exit code it deserves.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub error: anyhow::Error,
}

impl Failure {
    pub fn usage(msg: impl std::fmt::Display) -> Self {
        Failure { code: 2, error: anyhow::anyhow!("{msg}") }
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Self {
        Failure { code: 1, error }
    }
}

/// A run error carries its exit code ([`racehorse_runner::RunError::exit_code`]).
impl From<racehorse_runner::RunError> for Failure {
    fn from(e: racehorse_runner::RunError) -> Self {
        Failure { code: e.exit_code(), error: anyhow::anyhow!("{e}") }
    }
}

pub type CmdResult = Result<u8, Failure>;

/// Commands that only print die quietly when their reader goes away (`racehorse list | head`),
/// as Unix tools do. A run that changes the machine keeps SIGPIPE ignored, so that a closed
/// pipe is an error it survives and the Guard restores the machine. The network peer
/// (`serve`) keeps it ignored too: a client that goes away must not kill it.
fn quiet_on_closed_pipe(cmd: &Command) {
    let changes_machine = matches!(cmd, Command::Run(a) if !a.dry_run)
        || matches!(cmd, Command::Restore | Command::Plugd(_) | Command::Serve(_));
    if !changes_machine {
        // SAFETY: setting a signal disposition to SIG_DFL has no preconditions.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
}

/// The whole command line: the clap definitions with `run`'s shortcut flags and help
/// generated from the engines. Parsing, completions and man pages all use this one.
pub fn full_command() -> clap::Command {
    let engines = racehorse_engines::registry();
    let presets: Vec<&str> = racehorse_runner::suite::presets::PRESETS.iter().map(|p| p.0).collect();
    Cli::command().mut_subcommand("run", |run| shortcuts::augment(run, engines, &presets))
}

/// The parsed command line (see [`full_command`]).
fn parse_command_line() -> Cli {
    let engines = racehorse_engines::registry();
    let matches = full_command().get_matches_from(profile_words::join_profile_settings(std::env::args_os()));
    let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let (Command::Run(a), Some(("run", m))) = (&mut cli.command, matches.subcommand()) {
        a.shortcut_values = shortcuts::values(m, engines);
    }
    cli
}

fn main() -> ExitCode {
    // A measuring child (a fresh process: micro's fork benchmarks, compute's kernels) does
    // only that.
    if let Some(code) = racehorse_engines::fresh_process_entry() {
        std::process::exit(code);
    }
    racehorse_engines::enable_fresh_process();
    // Process 1 of a KVM guest racehorse started (kernel command line `-- guest-init`).
    if std::env::args().nth(1).as_deref() == Some("guest-init") {
        std::process::exit(racehorse_runner::guest_init::main());
    }
    let cli = parse_command_line();
    quiet_on_closed_pipe(&cli.command);
    let result = match &cli.command {
        Command::Run(a) => cmd_run::run(&cli, a),
        Command::List(a) => cmd_show::list(&cli, a),
        Command::Show(a) => cmd_show::show(&cli, a),
        Command::Export(a) => cmd_show::export(&cli, a),
        Command::Env(a) => cmd_show::env(&cli, a),
        Command::Workloads(a) => cmd_workloads::workloads(a),
        Command::Completions(a) => cmd_docs::completions(a),
        Command::Man(a) => cmd_docs::man(a),
        Command::Compare(a) => cmd_compare::compare(&cli, a),
        Command::Report(a) => cmd_compare::report(&cli, a),
        Command::Profile(a) => cmd_profile::profile(&cli, a),
        Command::History(a) => cmd_history::history(&cli, a),
        Command::Bisect(a) => cmd_bisect::bisect(&cli, a),
        Command::Alerts(a) => cmd_history::alerts(&cli, a),
        Command::Ack(a) => cmd_history::ack(&cli, a),
        Command::Hide(a) => cmd_history::hide(&cli, a),
        Command::Import(a) => cmd_import::import(&cli, a),
        Command::Load(a) => cmd_central::load(&cli, a),
        Command::Prune(a) => cmd_prune::prune(&cli, a),
        Command::Restore => cmd_run::restore(),
        Command::Plugd(a) => cmd_plugd::plugd(a, cli.verbose > 0),
        Command::Serve(a) => cmd_serve::serve(a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            eprintln!("error: {:#}", f.error);
            ExitCode::from(f.code)
        }
    }
}
