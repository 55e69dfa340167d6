//! The measuring process: like lmbench's benchmp, each benchmark runs in a forked child
//! ([`crate::forked`]). The child of a multi-threaded racehorse has one thread, so the kernel
//! takes the paths a single-threaded lmbench takes (no reference counting of a shared
//! descriptor table on every read, select or fstat).
//!
//! The fork benchmarks go further: they run in a freshly executed racehorse (when the binary
//! has enabled that with [`enable_fresh_process`]). A child forked from the runner inherits
//! its heap, thread stacks and mappings (about 700 KiB of private pages in 49 mappings, against
//! about 400 KiB in 35 for a fresh process), and fork copies their page tables.

use super::record::Outcome;
use super::run::{measure, Setup};
use crate::forked;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// The measuring child, as errors name it.
pub(crate) const WHO: &str = "the measuring process";

/// Runs `f` in a forked child ([`forked::in_child`]).
pub(crate) fn in_child(f: impl FnOnce() -> Result<Outcome, String>) -> Result<Outcome, String> {
    forked::in_child(WHO, f)
}

/// The environment variable that turns a racehorse process into a measuring child.
const CHILD_ENV: &str = "RACEHORSE_MICRO_CHILD";

/// Set by the racehorse binary: it checks [`fresh_process_entry`] first thing in `main`.
static FRESH_ENABLED: AtomicBool = AtomicBool::new(false);

/// What a fresh measuring process is asked to do.
#[derive(serde::Serialize, serde::Deserialize)]
struct Job {
    setup: Setup,
    dir: PathBuf,
}

/// Called by a binary whose `main` calls [`fresh_process_entry`] first.
pub fn enable_fresh_process() {
    FRESH_ENABLED.store(true, Ordering::Relaxed);
}

/// Benchmarks timed in a fresh process: those whose cost grows with the address space.
pub(crate) fn wants_fresh_process(bench: &str) -> bool {
    FRESH_ENABLED.load(Ordering::Relaxed) && bench.starts_with("fork")
}

/// In a process started by [`in_fresh_process`]: measures, writes the reply to stdout and
/// returns the exit code; `None` in any other process.
pub fn fresh_process_entry() -> Option<i32> {
    let text = std::env::var(CHILD_ENV).ok()?;
    let reply: Result<Outcome, String> = match serde_json::from_str::<Job>(&text) {
        Ok(job) => std::panic::catch_unwind(|| measure(&job.setup, &job.dir))
            .unwrap_or_else(|_| Err("the measurement panicked".into())),
        Err(e) => Err(format!("bad job in {CHILD_ENV}: {e}")),
    };
    forked::write_all(1, &serde_json::to_vec(&reply).unwrap_or_default());
    Some(0)
}

/// Measures `setup` in a freshly executed copy of this binary (pinned as the caller is).
pub(crate) fn in_fresh_process(setup: &Setup, dir: &Path) -> Result<Outcome, String> {
    let job = serde_json::to_string(&Job { setup: setup.clone(), dir: dir.to_path_buf() })
        .map_err(|e| format!("encoding the job: {e}"))?;
    let out = std::process::Command::new("/proc/self/exe")
        .env(CHILD_ENV, job)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("starting the measuring process: {e}"))?;
    let signal = std::os::unix::process::ExitStatusExt::signal(&out.status);
    forked::parse_reply(WHO, &out.stdout, out.status.code(), signal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_and_deaths_are_told_apart() {
        let o: Outcome =
            serde_json::from_str(r#"{"per_s": 2.0, "extra": {"latency_us": 0.5}}"#).expect("outcome");
        let done = serde_json::to_vec(&Ok::<_, String>(o.clone())).expect("json");
        assert_eq!(forked::parse_reply::<Outcome>(WHO, &done, Some(0), None).expect("done"), o);
        let failed = serde_json::to_vec(&Err::<Outcome, _>("no loopback".to_string())).expect("json");
        assert_eq!(
            forked::parse_reply::<Outcome>(WHO, &failed, Some(0), None).expect_err("failed"),
            "no loopback"
        );
        assert!(forked::parse_reply::<Outcome>(WHO, b"", None, Some(9))
            .expect_err("killed")
            .contains("signal 9"));
        assert!(forked::parse_reply::<Outcome>(WHO, b"{", Some(1), None)
            .expect_err("garbage")
            .contains("exit Some(1)"));
    }

    #[test]
    fn only_the_fork_benchmarks_want_a_fresh_process_and_only_when_enabled() {
        // The test binary has no entry hook: nothing is sent to a fresh process here.
        assert!(!wants_fresh_process("fork"));
        assert!(fresh_process_entry().is_none());
    }
}
