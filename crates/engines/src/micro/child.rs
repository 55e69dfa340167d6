//! The measuring process: like lmbench's benchmp, each benchmark runs in a forked child
//! ([`crate::support::forked`]). The child of a multi-threaded racehorse has one thread, so the kernel
//! takes the paths a single-threaded lmbench takes (no reference counting of a shared
//! descriptor table on every read, select or fstat).
//!
//! The fork benchmarks go further: they run in a freshly executed racehorse (when the binary
//! has enabled that, see [`forked::in_fresh_process`]). A child forked from the runner inherits
//! its heap, thread stacks and mappings (about 700 KiB of private pages in 49 mappings, against
//! about 400 KiB in 35 for a fresh process), and fork copies their page tables.

use super::record::Outcome;
use super::run::{measure, Setup};
use crate::support::forked;
use std::path::{Path, PathBuf};

/// The measuring child, as errors name it.
pub(crate) const WHO: &str = "the measuring process";

/// Runs `f` in a forked child ([`forked::in_child`]).
pub(crate) fn in_child(f: impl FnOnce() -> Result<Outcome, String>) -> Result<Outcome, String> {
    forked::in_child(WHO, f)
}

/// What a fresh measuring process is asked to do.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Job {
    setup: Setup,
    dir: PathBuf,
}

/// Benchmarks timed in a fresh process: those whose cost grows with the address space.
pub(crate) fn wants_fresh_process(bench: &str) -> bool {
    forked::fresh_process_enabled() && bench.starts_with("fork")
}

/// The kind of micro's jobs among the fresh-process jobs (`crate::registry`).
pub(crate) const FRESH_KIND: &str = "Micro";

/// The measurement of a fresh process ([`forked::fresh_process_entry`]).
pub(crate) fn run_job(job: &Job) -> Result<Outcome, String> {
    measure(&job.setup, &job.dir)
}

/// Serves a micro job in a fresh process (the registry's handler for [`FRESH_KIND`]).
pub(crate) fn serve_fresh(job: serde_json::Value) -> Vec<u8> {
    forked::serve(job, |job: Job| run_job(&job))
}

/// Measures `setup` in a freshly executed copy of this binary (pinned as the caller is).
pub(crate) fn in_fresh_process(setup: &Setup, dir: &Path) -> Result<Outcome, String> {
    let job = Job { setup: setup.clone(), dir: dir.to_path_buf() };
    forked::in_fresh_process(WHO, FRESH_KIND, &job)
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
    }
}
