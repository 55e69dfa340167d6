//! The few C library calls the profiler needs (signals, fifos, poll, effective uid), and
//! the parent-death signal that stops perf if racehorse itself is killed.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::RawFd;
use std::path::Path;
use std::time::Duration;

/// Interrupt: perf record stops, writes its data file and exits.
pub const SIGINT: i32 = libc::SIGINT;

/// For `pre_exec` in the child: SIGTERM it when the thread that started it ends (racehorse
/// starts perf from its main thread, so: when racehorse ends, even by SIGKILL), so that no
/// system-wide recording outlives the run.
pub fn die_with_parent() -> io::Result<()> {
    // SAFETY: prctl with PR_SET_PDEATHSIG takes plain integers; async-signal-safe.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong, 0, 0, 0) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Sends `sig` to process `pid`.
pub fn signal(pid: u32, sig: i32) -> io::Result<()> {
    let pid = i32::try_from(pid).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: kill takes plain integers and has no memory-safety preconditions.
    if unsafe { libc::kill(pid, sig) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Effective user id of this process.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Creates a named pipe at `path` with permissions `mode`.
pub fn make_fifo(path: &Path, mode: u32) -> io::Result<()> {
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))?;
    // SAFETY: c_path is a valid NUL-terminated string that outlives the call.
    if unsafe { libc::mkfifo(c_path.as_ptr(), mode as libc::mode_t) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Waits up to `timeout` until `fd` has data to read; Ok(false) on timeout or interruption.
pub fn wait_readable(fd: RawFd, timeout: Duration) -> io::Result<bool> {
    let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: pfd is a valid, exclusively borrowed pollfd array of length 1 for the call.
    let n = unsafe { libc::poll(&mut pfd, 1, ms) };
    if n < 0 {
        let err = io::Error::last_os_error();
        return if err.raw_os_error() == Some(libc::EINTR) { Ok(false) } else { Err(err) };
    }
    Ok(n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::io::AsRawFd;

    #[test]
    fn fifo_poll_roundtrip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        make_fifo(&path, 0o600).unwrap();
        assert!(make_fifo(&path, 0o600).is_err(), "second mkfifo must fail with EEXIST");
        let mut f = std::fs::OpenOptions::new().read(true).write(true).open(&path).unwrap();
        assert!(!wait_readable(f.as_raw_fd(), Duration::from_millis(10)).unwrap());
        f.write_all(b"x").unwrap();
        assert!(wait_readable(f.as_raw_fd(), Duration::from_millis(1000)).unwrap());
    }

    #[test]
    fn signal_zero_probes_existence() {
        signal(std::process::id(), 0).unwrap();
        assert!(signal(u32::MAX, 0).is_err());
    }
}
