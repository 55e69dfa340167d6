//! One process per test case: the kernel runs in a forked child (which has a single thread
//! and its own fresh heap use), and only its result and seconds come back over a pipe; a child
//! that dies (a crash in a kernel) fails the case, not racehorse.

use std::io::Read;
use std::os::fd::FromRawFd;

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

fn write_all(fd: libc::c_int, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: our pipe's write end and a live buffer.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n <= 0 {
            return;
        }
        bytes = &bytes[n as usize..];
    }
}

/// Runs `f` in a forked child and returns its times, or why it failed.
pub(crate) fn in_child(f: impl FnOnce() -> Result<Times, String>) -> Result<Times, String> {
    let mut fds = [0; 2];
    // SAFETY: a two-element array for pipe to fill.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: the child only computes and writes to the pipe, then _exits without running
    // the parent's destructors or atexit handlers.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: the read end is the parent's.
        unsafe { libc::close(fds[0]) };
        let reply: Result<Times, String> = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
            Ok(r) => r,
            Err(_) => Err("the kernel panicked".into()),
        };
        write_all(fds[1], &serde_json::to_vec(&reply).unwrap_or_default());
        // SAFETY: leaving the child at once.
        unsafe { libc::_exit(0) };
    }
    // SAFETY: the write end is the child's.
    unsafe { libc::close(fds[1]) };
    if pid < 0 {
        // SAFETY: our read end.
        unsafe { libc::close(fds[0]) };
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: the read end we own from here on.
    let mut pipe = unsafe { std::fs::File::from_raw_fd(fds[0]) };
    let mut text = Vec::new();
    let read = pipe.read_to_end(&mut text);
    let mut status = 0;
    // SAFETY: reaping our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    read.map_err(|e| format!("reading the kernel's result: {e}"))?;
    match serde_json::from_slice::<Result<Times, String>>(&text) {
        Ok(r) => r,
        Err(_) if libc::WIFSIGNALED(status) => {
            Err(format!("the kernel's process died of signal {}", libc::WTERMSIG(status)))
        }
        Err(e) => Err(format!("the kernel's process sent no result ({e})")),
    }
}
