//! A case's times: the kernel runs in a forked child ([`crate::forked::in_child`]: a single
//! thread and its own heap), timed there by both clocks; a child that dies (a crash in a
//! kernel) fails the case, not racehorse.

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
