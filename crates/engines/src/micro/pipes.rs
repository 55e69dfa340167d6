//! lat_pipe and lat_ctx: a word bounced between this process and a forked echo child over
//! two pipes (one round trip = two context switches when both are on one CPU), and the cost
//! of a pipe write + read inside one process, which lat_ctx subtracts.

use super::syscalls::Body;
use std::hint::black_box;

fn pipe() -> Result<[libc::c_int; 2], String> {
    let mut fds = [0; 2];
    // SAFETY: a two-element array for the kernel to fill.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    Ok(fds)
}

fn close_all(fds: &[libc::c_int]) {
    for fd in fds {
        // SAFETY: descriptors we opened and own.
        unsafe { libc::close(*fd) };
    }
}

/// The echo child and the parent's ends; the child ends when its input closes.
struct Echo {
    pid: libc::pid_t,
    to_child: libc::c_int,
    from_child: libc::c_int,
}

impl Echo {
    fn start() -> Result<Echo, String> {
        let (a, b) = (pipe()?, pipe()?);
        // SAFETY: the child only reads, writes and exits (async-signal-safe).
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            close_all(&[a[0], a[1], b[0], b[1]]);
            return Err(format!("fork: {}", std::io::Error::last_os_error()));
        }
        if pid == 0 {
            // SAFETY: in the child: echo words until end of input.
            unsafe {
                libc::close(a[1]);
                libc::close(b[0]);
                let mut w = 0u64;
                let p: *mut libc::c_void = (&mut w as *mut u64).cast();
                while libc::read(a[0], p, 8) == 8 {
                    if libc::write(b[1], p, 8) != 8 {
                        break;
                    }
                }
                libc::_exit(0);
            }
        }
        close_all(&[a[0], b[1]]);
        Ok(Echo { pid, to_child: a[1], from_child: b[0] })
    }

    fn round_trip(&self, w: &mut u64) {
        let p: *mut libc::c_void = (w as *mut u64).cast();
        // SAFETY: an 8-byte word we own and our pipe ends.
        unsafe {
            libc::write(self.to_child, p, 8);
            libc::read(self.from_child, p, 8);
        }
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        close_all(&[self.to_child, self.from_child]);
        let mut status = 0;
        // SAFETY: reaping our own child, which exits on end of input.
        unsafe { libc::waitpid(self.pid, &mut status, 0) };
    }
}

/// pipe: one round trip of a word to the echo child and back.
pub fn round_trip() -> Result<Body, String> {
    let echo = Echo::start()?;
    Ok(Box::new(move |n| {
        let mut w = 0u64;
        for _ in 0..n {
            echo.round_trip(&mut w);
        }
        black_box(w);
    }))
}

/// A pipe written and read back by this process, closed on drop.
struct Loopback([libc::c_int; 2]);

impl Drop for Loopback {
    fn drop(&mut self) {
        close_all(&self.0);
    }
}

/// The pipe's own cost without a switch: write a word and read it back in one process.
pub fn write_read() -> Result<Body, String> {
    let fds = Loopback(pipe()?);
    Ok(Box::new(move |n| {
        let fds = &fds;
        let mut w = 0u64;
        let p: *mut libc::c_void = (&mut w as *mut u64).cast();
        for _ in 0..n {
            // SAFETY: our own pipe and word; the read finds the word just written.
            unsafe {
                libc::write(fds.0[1], p, 8);
                libc::read(fds.0[0], p, 8);
            }
        }
        black_box(w);
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_echo_child_answers_and_is_reaped() {
        let mut rt = round_trip().expect("pipe");
        rt(100);
        drop(rt);
        let mut wr = write_read().expect("loopback");
        wr(100);
    }
}
