//! Detaching from the terminal (without -f): fork, the child starts a new session with null
//! stdio and reports through a pipe whether it started; the parent exits with that status,
//! so a service manager sees startup errors (systemd Type=forking).

use std::io::{Read, Write};
use std::os::unix::io::FromRawFd;

/// The child's end of the startup pipe.
pub struct Ready(Option<std::fs::File>);

impl Ready {
    /// Nothing to report (foreground).
    pub fn none() -> Ready {
        Ready(None)
    }

    /// Tells the waiting parent how startup went (once).
    pub fn report(&mut self, r: Result<(), String>) {
        if let Some(mut f) = self.0.take() {
            let msg = match r {
                Ok(()) => "ok".to_string(),
                Err(e) => e,
            };
            let _ = f.write_all(msg.as_bytes());
        }
    }
}

/// Forks. In the parent this never returns: it waits for the child's report and exits 0 or 1
/// (printing the error). Must be called before any thread is started.
pub fn detach() -> Result<Ready, String> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe writes two descriptors into the array.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: the process is single-threaded here (documented precondition).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid > 0 {
        // SAFETY: fds[0] is the read end we own; fds[1] belongs to the child.
        unsafe { libc::close(fds[1]) };
        let mut f = unsafe { std::fs::File::from_raw_fd(fds[0]) };
        let mut msg = String::new();
        let _ = f.read_to_string(&mut msg);
        if msg == "ok" {
            std::process::exit(0);
        }
        let msg = if msg.is_empty() { "the daemon exited during startup".to_string() } else { msg };
        eprintln!("error: {msg}");
        std::process::exit(1);
    }
    // SAFETY: child side: close the read end, start a session, point stdio at /dev/null.
    unsafe {
        libc::close(fds[0]);
        libc::setsid();
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
            if null > 2 {
                libc::close(null);
            }
        }
    }
    // SAFETY: fds[1] is the write end, owned by this child from now on.
    Ok(Ready(Some(unsafe { std::fs::File::from_raw_fd(fds[1]) })))
}
