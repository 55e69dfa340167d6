//! A case's times: the kernel runs in a process of its own, timed there by both clocks; a
//! process that dies (a crash in a kernel) fails the case, not racehorse. That process is a
//! freshly executed racehorse ([`crate::support::forked::in_fresh_process`]) when the binary allows
//! it, so that every run of a case starts from the same heap and mappings; else (tests) a
//! forked child ([`crate::support::forked::in_child`]: a single thread and its own copy of the heap).

use super::{telco, Kernel};

/// A case's elapsed and CPU seconds (the CPU time of its process, which is what one case on
/// one CPU costs whatever else the machine runs).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Times {
    pub wall_s: f64,
    pub cpu_s: f64,
}

/// The CPU time of this process in seconds.
pub fn process_cpu_s() -> f64 {
    // SAFETY: a zeroed timespec for clock_gettime to fill.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid clock id and a live timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// Times `f` by both clocks.
pub fn timed(f: impl FnOnce() -> Result<(), String>) -> Result<Times, String> {
    let (t, c) = (std::time::Instant::now(), process_cpu_s());
    f()?;
    Ok(Times { cpu_s: process_cpu_s() - c, wall_s: t.elapsed().as_secs_f64() })
}

/// What a fresh process runs: one case's kernel, `reps` times.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Job {
    pub case: String,
    pub reps: u64,
    pub telco: Option<telco::Prepared>,
}

/// The kind of compute's jobs among the fresh-process jobs (`crate::registry`).
pub(crate) const FRESH_KIND: &str = "Compute";

/// Serves a compute job in a fresh process (the registry's handler for [`FRESH_KIND`]).
pub(crate) fn serve_fresh(job: serde_json::Value) -> Vec<u8> {
    crate::support::forked::serve(job, |job: Job| run_job(&job))
}

/// The times of a fresh process's job ([`crate::support::forked::fresh_process_entry`]).
pub(crate) fn run_job(job: &Job) -> Result<Times, String> {
    let c = super::CASES
        .iter()
        .find(|c| c.name == job.case)
        .ok_or_else(|| format!("compute has no case '{}'", job.case))?;
    run_kernel(c.kernel, job.reps, job.telco.as_ref())
}

/// Runs `kernel` `reps` times in this process, timed.
pub(crate) fn run_kernel(
    kernel: Kernel,
    reps: u64,
    telco: Option<&telco::Prepared>,
) -> Result<Times, String> {
    timed(|| match kernel {
        Kernel::Int(f) => f(reps).map(|_| ()),
        Kernel::Fp(f) => f(reps).map(|_| ()),
        Kernel::Telco => match telco {
            Some(p) => telco::run(p, reps).map(|_| ()),
            None => Err("telco was not prepared".into()),
        },
    })
}
