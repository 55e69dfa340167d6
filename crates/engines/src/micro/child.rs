//! The measuring process: like lmbench's benchmp, each benchmark runs in a forked child.
//! The child of a multi-threaded racehorse has one thread, so the kernel takes the paths a
//! single-threaded lmbench takes (no reference counting of a shared descriptor table on
//! every read, select or fstat; a small address space to fork). The result comes back as
//! JSON over a pipe.

use super::record::Outcome;
use std::io::Read;
use std::os::fd::FromRawFd;

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
    match serde_json::from_slice::<Reply>(&text) {
        Ok(Reply::Done(o)) => Ok(o),
        Ok(Reply::Failed(e)) => Err(e),
        Err(_) if libc::WIFSIGNALED(status) => {
            Err(format!("the measuring process died of signal {}", libc::WTERMSIG(status)))
        }
        Err(e) => Err(format!("the measuring process sent no result ({e})")),
    }
}
