//! Work in a forked child, as lmbench's benchmp does: the child of a multi-threaded racehorse
//! has one thread and its own copy of the heap, its result comes back as JSON over a pipe,
//! and a child that crashes fails the work, not racehorse. Also the CPU pinning the measuring
//! engines (micro, compute) apply around it.
//!
//! Some work runs in a freshly executed racehorse instead ([`in_fresh_process`]), when the
//! binary enabled it ([`enable_fresh_process`]) and checks [`fresh_process_entry`] first thing
//! in `main`. A job names its kind; the kinds and their handlers are the registry's table
//! (`crate::registry`), so this module knows none of the engines that use it. A child forked from the runner inherits its heap, its malloc state and its
//! mappings: fork copies their page tables, the child's first writes to them take copy-on-write
//! faults, and where the child's buffers land (their alignment, whether they reuse the
//! parent's freed memory) depends on what the runner did before. A fresh process starts the
//! same way every time.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::io::Read;
use std::os::fd::FromRawFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// The environment variable that carries a fresh process's job.
const FRESH_ENV: &str = "RACEHORSE_FRESH_CHILD";

/// Set by the racehorse binary, whose `main` checks [`fresh_process_entry`] first.
static FRESH_ENABLED: AtomicBool = AtomicBool::new(false);

/// Serves one kind of job in a fresh process: takes the job as sent (JSON) and returns the
/// encoded reply (see [`serve`]).
pub type FreshHandler = fn(Value) -> Vec<u8>;

/// Called by a binary whose `main` calls [`crate::fresh_process_entry`] first.
pub fn enable_fresh_process() {
    FRESH_ENABLED.store(true, Ordering::Relaxed);
}

/// Whether [`in_fresh_process`] can be used (the binary enabled it).
pub fn fresh_process_enabled() -> bool {
    FRESH_ENABLED.load(Ordering::Relaxed)
}

fn reply_of<T: Serialize>(f: impl FnOnce() -> Result<T, String>) -> Vec<u8> {
    let reply = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err("the measurement panicked".into()));
    serde_json::to_vec(&reply).unwrap_or_default()
}

/// In a process started by [`in_fresh_process`]: does the job with the handler of its kind
/// among `kinds`, writes the reply to stdout and returns the exit code; `None` in any other
/// process.
pub fn fresh_process_entry(kinds: &[(&str, FreshHandler)]) -> Option<i32> {
    let text = std::env::var(FRESH_ENV).ok()?;
    let reply = match decode_job(&text, kinds) {
        Ok((handler, job)) => handler(job),
        Err(e) => reply_of::<()>(|| Err(e)),
    };
    write_all(1, &reply);
    Some(0)
}

/// A job as sent, `{"<kind>": <job>}`, and the handler of its kind.
fn decode_job(text: &str, kinds: &[(&str, FreshHandler)]) -> Result<(FreshHandler, Value), String> {
    let bad = |what: String| format!("bad job in {FRESH_ENV}: {what}");
    let map: serde_json::Map<String, Value> = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    let mut entries = map.into_iter();
    let (Some((kind, job)), None) = (entries.next(), entries.next()) else {
        return Err(bad("expected one kind of job".into()));
    };
    let handler = kinds.iter().find(|(name, _)| *name == kind).map(|(_, h)| *h);
    handler.map(|h| (h, job)).ok_or_else(|| bad(format!("no handler for jobs of kind '{kind}'")))
}

/// The body of a [`FreshHandler`]: decodes the job as `J`, runs `f` on it and encodes its
/// result (a panic is a failure).
pub fn serve<J: DeserializeOwned, T: Serialize>(
    job: Value,
    f: impl FnOnce(J) -> Result<T, String>,
) -> Vec<u8> {
    reply_of(|| f(serde_json::from_value(job).map_err(|e| format!("bad job in {FRESH_ENV}: {e}"))?))
}

/// Does `job`, of kind `kind` (a kind of the registry's table), in a freshly executed copy
/// of this binary (pinned as the caller is) and returns its reply; `who` names the process
/// in errors.
pub fn in_fresh_process<J: Serialize, T: DeserializeOwned>(
    who: &str,
    kind: &str,
    job: &J,
) -> Result<T, String> {
    let encoded = serde_json::to_value(job).map_err(|e| format!("encoding the job: {e}"))?;
    let text = Value::Object(std::iter::once((kind.to_string(), encoded)).collect()).to_string();
    let out = std::process::Command::new("/proc/self/exe")
        .env(FRESH_ENV, text)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("starting {who}: {e}"))?;
    let signal = std::os::unix::process::ExitStatusExt::signal(&out.status);
    parse_reply(who, &out.stdout, out.status.code(), signal)
}

/// Writes all of `bytes` to `fd` (a pipe), giving up on an error.
pub fn write_all(fd: libc::c_int, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: the caller's open descriptor and a live buffer.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n <= 0 {
            return;
        }
        bytes = &bytes[n as usize..];
    }
}

/// The child's reply as sent: `Ok(value)` or why it failed; a child that sent nothing
/// readable is described by its exit `code` or `signal`. `who` names the process in errors.
pub fn parse_reply<T: DeserializeOwned>(
    who: &str,
    text: &[u8],
    code: Option<i32>,
    signal: Option<i32>,
) -> Result<T, String> {
    match serde_json::from_slice::<Result<T, String>>(text) {
        Ok(r) => r,
        Err(_) if signal.is_some() => Err(format!("{who} died of signal {}", signal.unwrap_or(0))),
        Err(e) => Err(format!("{who} sent no result (exit {code:?}: {e})")),
    }
}

/// Runs `f` in a forked child and returns its result; a child that dies says how. `who`
/// names the child in errors ("the measuring process").
pub fn in_child<T: Serialize + DeserializeOwned>(
    who: &str,
    f: impl FnOnce() -> Result<T, String>,
) -> Result<T, String> {
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
        let reply = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
            .unwrap_or_else(|_| Err(format!("{who} panicked")));
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
    read.map_err(|e| format!("reading the result of {who}: {e}"))?;
    let signal = libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status));
    parse_reply(who, &text, libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)), signal)
}

/// Pins this thread (and the processes it starts) to the last CPU it may use; the old mask
/// comes back on drop.
pub struct Pinned(Option<libc::cpu_set_t>);

impl Pinned {
    pub fn to_last_cpu() -> Pinned {
        // SAFETY: cpu_set_t is plain data; the calls only read and write it.
        unsafe {
            let mut old: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut old) != 0 {
                return Pinned(None);
            }
            let Some(cpu) = (0..libc::CPU_SETSIZE as usize).rev().find(|c| libc::CPU_ISSET(*c, &old)) else {
                return Pinned(None);
            };
            let mut one: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut one);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &one);
            Pinned(Some(old))
        }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        if let Some(old) = &self.0 {
            // SAFETY: the mask read at pinning.
            unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), old) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_failures_and_deaths_come_back_told_apart() {
        assert_eq!(in_child("the child", || Ok(41 + 1)), Ok(42));
        assert_eq!(in_child::<u32>("the child", || Err("no loopback".into())), Err("no loopback".into()));
        let e = in_child::<u32>("the child", || panic!("boom")).expect_err("panicked");
        assert_eq!(e, "the child panicked");
        let e = in_child::<u32>("the child", || {
            // SAFETY: ends this forked child by a signal, as a crashing kernel would.
            unsafe { libc::raise(libc::SIGKILL) };
            Ok(0)
        })
        .expect_err("killed");
        assert!(e.contains("died of signal 9"), "{e}");
        assert!(parse_reply::<u32>("x", b"{", Some(1), None).expect_err("garbage").contains("exit Some(1)"));
    }

    #[test]
    fn the_test_binary_has_no_fresh_process_entry() {
        // Nothing enables fresh processes here and no job is in the environment.
        assert!(!fresh_process_enabled());
        assert!(fresh_process_entry(&[]).is_none());
    }

    fn double(job: Value) -> Vec<u8> {
        serve(job, |n: u32| if n > 100 { Err(format!("{n} is too big")) } else { Ok(2 * n) })
    }

    #[test]
    fn jobs_reach_the_handler_of_their_kind() {
        let kinds: &[(&str, FreshHandler)] = &[("Double", double)];
        let (handler, job) = decode_job(r#"{"Double": 21}"#, kinds).expect("a known kind");
        assert_eq!(parse_reply::<u32>("x", &handler(job), Some(0), None), Ok(42));
        let (handler, job) = decode_job(r#"{"Double": 200}"#, kinds).expect("a known kind");
        assert_eq!(parse_reply::<u32>("x", &handler(job), Some(0), None), Err("200 is too big".into()));
        let (handler, job) = decode_job(r#"{"Double": "x"}"#, kinds).expect("a known kind");
        let e = parse_reply::<u32>("x", &handler(job), Some(0), None).expect_err("not a number");
        assert!(e.starts_with("bad job in RACEHORSE_FRESH_CHILD"), "{e}");
        let e = decode_job(r#"{"Triple": 1}"#, kinds).expect_err("unknown kind");
        assert!(e.contains("no handler for jobs of kind 'Triple'"), "{e}");
        assert!(decode_job(r#"{"Double": 1, "Other": 2}"#, kinds).is_err(), "one job at a time");
        assert!(decode_job("[", kinds).is_err());
    }
}
