//! Work in a forked child, as lmbench's benchmp does: the child of a multi-threaded racehorse
//! has one thread and its own copy of the heap, its result comes back as JSON over a pipe,
//! and a child that crashes fails the work, not racehorse. Also the CPU pinning the measuring
//! engines (micro, compute) apply around it.

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::io::Read;
use std::os::fd::FromRawFd;

/// Writes all of `bytes` to `fd` (a pipe), giving up on an error.
pub(crate) fn write_all(fd: libc::c_int, mut bytes: &[u8]) {
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
pub(crate) fn parse_reply<T: DeserializeOwned>(
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
pub(crate) fn in_child<T: Serialize + DeserializeOwned>(
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
pub(crate) struct Pinned(Option<libc::cpu_set_t>);

impl Pinned {
    pub(crate) fn to_last_cpu() -> Pinned {
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
}
