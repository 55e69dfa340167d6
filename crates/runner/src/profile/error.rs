//! The profiler's two error types: [`ProfileError`], why `run --profile` cannot work here
//! (found before anything changes, a usage error but for its scratch directory), and
//! [`PerfError`], what went wrong with one perf process during a cell (the cell fails).
//!
//! The fields carry plain values (paths, statuses, perf's last words) so that this file
//! depends on no other module of the profiler.

use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;

/// Why `run --profile` (or `--keep-profile`) cannot work on this machine. Every case but
/// [`ProfileError::TempDir`] is a usage error (exit 2): the message says what to install,
/// allow or write instead ([`crate::RunError::exit_code`] decides).
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// `--profile`'s settings do not parse: the setting and what to use instead.
    #[error("--profile: {0}")]
    Settings(String),
    /// No perf in PATH nor in the usual system directories; how to install it.
    #[error("--profile: perf was not found in PATH; {hint}")]
    PerfMissing { hint: String },
    /// `perf --version` could not be run at all.
    #[error("--profile: cannot run {}: {source}", .perf.display())]
    PerfUnrunnable { perf: PathBuf, source: io::Error },
    /// `perf --version` ran and failed (a distribution's wrapper without the kernel's perf).
    #[error("--profile: {} --version failed ({status}): {said}; {hint}", .perf.display())]
    PerfBroken { perf: PathBuf, status: ExitStatus, said: String, hint: String },
    /// perf is older than the version with `record --control`.
    #[error(
        "--profile: {} is perf {}.{}; profiling needs perf >= {}.{} (record --control); {hint}",
        .perf.display(), .found.0, .found.1, .needed.0, .needed.1
    )]
    PerfTooOld { perf: PathBuf, found: (u32, u32), needed: (u32, u32), hint: String },
    /// The kernel has no perf events (`file`, perf_event_paranoid, cannot be read).
    #[error(
        "--profile: {file} is missing or unreadable: this kernel seems to lack perf events \
         (CONFIG_PERF_EVENTS), so nothing can be profiled"
    )]
    NoPerfEvents { file: &'static str },
    /// System-wide sampling is not allowed to an unprivileged user at this paranoid level.
    #[error(
        "--profile: system-wide sampling (perf record -a) is not allowed: kernel.perf_event_paranoid \
         is {paranoid} and we are not root (nor have CAP_PERFMON); run as root, or allow it with \
         `sysctl kernel.perf_event_paranoid=0` (-1 also lifts the other limits)"
    )]
    NotPermitted { paranoid: i32 },
    /// The probe recording with the mode's call chains failed: the mode, perf's status and
    /// last words, and which mode to use instead.
    #[error(
        "--profile: perf cannot record call chains with callgraph={mode} on this machine ({status}): \
         {said}; {advice}"
    )]
    CallChains { mode: &'static str, status: ExitStatus, said: String, advice: &'static str },
    /// perf could not be run for the probe recording.
    #[error("--profile: {0}")]
    Probe(PerfError),
    /// `--keep-profile DIR` cannot be used: the directory, what failed ("", "cannot create it: ",
    /// "cannot write there: ") and why.
    #[error(
        "--keep-profile {}: {problem}{source}; choose a directory you can write with --keep-profile DIR",
        .dir.display()
    )]
    KeepDir { dir: PathBuf, problem: &'static str, source: io::Error },
    /// A cell's data file could not be kept (a warning: the profile itself is stored).
    #[error("--keep-profile: cannot write {}: {source}", .to.display())]
    Keep { to: PathBuf, source: io::Error },
    /// The scratch directory of the probes could not be made: not a usage error (exit 1).
    #[error("cannot create a temporary directory: {0}")]
    TempDir(io::Error),
}

/// What went wrong with one perf process (`perf record`, `perf stat`, `perf report`, `perf
/// script`), in words that end with what perf itself said.
#[derive(Debug, thiserror::Error)]
pub enum PerfError {
    /// A step on perf's files or process failed: "cannot {doing}: {source}".
    #[error("cannot {doing}: {source}")]
    Io { doing: String, source: io::Error },
    /// perf ended, failed or did not answer: which perf ("perf record", "perf report -i
    /// FILE"), what happened, and the end of what it said with its separator (or nothing).
    #[error("{tool} {what}{said}")]
    Perf { tool: String, what: String, said: String },
    /// perf did not answer on its control fifo when it was started.
    #[error("{tool} did not start: {source}")]
    NotStarted { tool: &'static str, source: Box<PerfError> },
    /// perf's output did not read as expected: the parser's message, naming the line.
    #[error("{0}")]
    Output(String),
    /// A recording was asked for 0 samples per second.
    #[error("the sampling frequency must be at least 1 Hz")]
    ZeroFrequency,
    /// The cell's recording was gone when the cell ended.
    #[error("profile: the recording was lost")]
    Lost,
}

impl PerfError {
    /// An I/O step on perf's files or process: "cannot {doing}: {source}".
    pub fn io(doing: impl Into<String>, source: io::Error) -> PerfError {
        PerfError::Io { doing: doing.into(), source }
    }

    /// perf (`tool`) misbehaved: `what` happened, and `said` ends the message.
    pub fn perf(tool: impl Into<String>, what: impl Into<String>, said: impl Into<String>) -> PerfError {
        PerfError::Perf { tool: tool.into(), what: what.into(), said: said.into() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_keep_their_words() {
        let e = PerfError::perf("perf record", "exited early (exit status: 1)", "; perf said: no");
        assert_eq!(e.to_string(), "perf record exited early (exit status: 1); perf said: no");
        let e = PerfError::NotStarted { tool: "perf stat", source: Box::new(e) };
        assert!(e.to_string().starts_with("perf stat did not start: perf record exited early"), "{e}");
        let e = PerfError::io("start /x/perf", io::Error::from(io::ErrorKind::NotFound));
        assert!(e.to_string().starts_with("cannot start /x/perf: "), "{e}");
        let e = ProfileError::NotPermitted { paranoid: 2 };
        assert!(e.to_string().contains("kernel.perf_event_paranoid is 2 and we are not root"), "{e}");
        let e = ProfileError::KeepDir {
            dir: PathBuf::from("/k"),
            problem: "cannot create it: ",
            source: io::Error::from(io::ErrorKind::PermissionDenied),
        };
        assert!(e.to_string().starts_with("--keep-profile /k: cannot create it: "), "{e}");
        assert!(e.to_string().ends_with("; choose a directory you can write with --keep-profile DIR"));
    }
}
