//! The measuring process: like lmbench's benchmp, each benchmark runs in a forked child.
//! The child of a multi-threaded racehorse has one thread, so the kernel takes the paths a
//! single-threaded lmbench takes (no reference counting of a shared descriptor table on
//! every read, select or fstat; a small address space to fork). The result comes back as
//! JSON over a pipe.
//!
//! The fork benchmarks go further: they run in a freshly executed racehorse (when the binary
//! has enabled that with [`enable_fresh_process`]). A child forked from the runner inherits
//! its heap, thread stacks and mappings (about 700 KiB of private pages in 49 mappings, against
//! about 400 KiB in 35 for a fresh process), and fork copies their page tables.

use super::record::Outcome;
use super::run::{measure, Setup};
use std::io::Read;
use std::os::fd::FromRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

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
    let reply = match serde_json::from_str::<Job>(&text) {
        Ok(job) => match std::panic::catch_unwind(|| measure(&job.setup, &job.dir)) {
            Ok(Ok(o)) => Reply::Done(o),
            Ok(Err(e)) => Reply::Failed(e),
            Err(_) => Reply::Failed("the measurement panicked".into()),
        },
        Err(e) => Reply::Failed(format!("bad job in {CHILD_ENV}: {e}")),
    };
    write_all(1, &serde_json::to_vec(&reply).unwrap_or_default());
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
    parse_reply(&out.stdout, out.status.code(), std::os::unix::process::ExitStatusExt::signal(&out.status))
}

fn parse_reply(text: &[u8], code: Option<i32>, signal: Option<i32>) -> Result<Outcome, String> {
    match serde_json::from_slice::<Reply>(text) {
        Ok(Reply::Done(o)) => Ok(o),
        Ok(Reply::Failed(e)) => Err(e),
        Err(_) if signal.is_some() => {
            Err(format!("the measuring process died of signal {}", signal.unwrap_or(0)))
        }
        Err(e) => Err(format!("the measuring process sent no result (exit {code:?}: {e})")),
    }
}

/// What the child sends: the outcome or why it could not measure.
#[derive(serde::Serialize, serde::Deserialize)]
enum Reply {
    Done(Outcome),
    Failed(String),
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

/// Runs `f` in a forked child and returns its result; a child that dies says how.
pub(crate) fn in_child(f: impl FnOnce() -> Result<Outcome, String>) -> Result<Outcome, String> {
    let mut fds = [0; 2];
    // SAFETY: a two-element array for pipe to fill.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: the child only computes and writes to the pipe, then _exits without running
    // the parent's destructors or atexit handlers (glibc's malloc is usable after fork).
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: the read end is the parent's.
        unsafe { libc::close(fds[0]) };
        let reply = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
            Ok(Ok(o)) => Reply::Done(o),
            Ok(Err(e)) => Reply::Failed(e),
            Err(_) => Reply::Failed("the measurement panicked".into()),
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
    read.map_err(|e| format!("reading the measurement: {e}"))?;
    let signal = libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status));
    parse_reply(&text, libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)), signal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_and_deaths_are_told_apart() {
        let o: Outcome =
            serde_json::from_str(r#"{"per_s": 2.0, "extra": {"latency_us": 0.5}}"#).expect("outcome");
        let done = serde_json::to_vec(&Reply::Done(o.clone())).expect("json");
        assert_eq!(parse_reply(&done, Some(0), None).expect("done"), o);
        let failed = serde_json::to_vec(&Reply::Failed("no loopback".into())).expect("json");
        assert_eq!(parse_reply(&failed, Some(0), None).expect_err("failed"), "no loopback");
        assert!(parse_reply(b"", None, Some(9)).expect_err("killed").contains("signal 9"));
        assert!(parse_reply(b"{", Some(1), None).expect_err("garbage").contains("exit Some(1)"));
    }

    #[test]
    fn only_the_fork_benchmarks_want_a_fresh_process_and_only_when_enabled() {
        // The test binary has no entry hook: nothing is sent to a fresh process here.
        assert!(!wants_fresh_process("fork"));
        assert!(fresh_process_entry().is_none());
    }
}
