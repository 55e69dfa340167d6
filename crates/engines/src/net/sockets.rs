//! Socket and thread plumbing for the `net` engine: a TCP connect with socket buffers set
//! before the handshake and a deadline, socket buffer options, and a handle on another
//! thread's CPU clock (so the peer's CPU can be read at the window's edges).

use racehorse_machine::rusage::CpuTime;
use std::io::{Error, ErrorKind};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

fn setsockopt_int(fd: RawFd, level: i32, name: i32, value: i32) -> std::io::Result<()> {
    // SAFETY: setsockopt with a pointer to an int that lives across the call.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (&value as *const i32).cast(),
            std::mem::size_of::<i32>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(Error::last_os_error())
    }
}

/// Sets SO_SNDBUF / SO_RCVBUF (0 leaves the kernel's autotuning on). Setting them turns
/// autotuning off for that direction, as uperf's `wndsz` does.
pub fn set_buffers(fd: RawFd, sndbuf_bytes: u64, rcvbuf_bytes: u64) -> std::io::Result<()> {
    let clamp = |b: u64| i32::try_from(b).unwrap_or(i32::MAX);
    if sndbuf_bytes > 0 {
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, clamp(sndbuf_bytes))?;
    }
    if rcvbuf_bytes > 0 {
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, clamp(rcvbuf_bytes))?;
    }
    Ok(())
}

/// Sets SO_RCVLOWAT: a blocked read returns only once `bytes` are queued (or at the end
/// of the stream, or at the socket's timeout with what has come). Linux grows an autotuned
/// receive buffer to fit.
pub fn set_rcvlowat(fd: RawFd, bytes: usize) -> std::io::Result<()> {
    setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVLOWAT, i32::try_from(bytes).unwrap_or(i32::MAX))
}

/// The sockaddr of `addr` for connect(2).
fn raw_addr(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: an all-zero sockaddr_storage is valid; we fill in one family's struct.
    let mut ss: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
            unsafe { std::ptr::write((&mut ss as *mut libc::sockaddr_storage).cast(), sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr { s6_addr: a.ip().octets() },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in6.
            unsafe { std::ptr::write((&mut ss as *mut libc::sockaddr_storage).cast(), sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (ss, len as libc::socklen_t)
}

/// Connects to `addr` within `timeout`, with the socket buffers set before the handshake
/// (so the window scale fits them); returns a blocking stream.
pub fn connect(
    addr: &SocketAddr,
    timeout: Duration,
    sndbuf_bytes: u64,
    rcvbuf_bytes: u64,
) -> std::io::Result<TcpStream> {
    let family = if addr.is_ipv4() { libc::AF_INET } else { libc::AF_INET6 };
    // SAFETY: socket(2) with constant arguments; the fd is owned right away.
    let fd = unsafe { libc::socket(family, libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK, 0) };
    if fd < 0 {
        return Err(Error::last_os_error());
    }
    // SAFETY: fd is a fresh socket nobody else owns.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    set_buffers(fd, sndbuf_bytes, rcvbuf_bytes)?;
    let (ss, len) = raw_addr(addr);
    // SAFETY: connect with a sockaddr of the length computed for it.
    let rc = unsafe { libc::connect(fd, (&ss as *const libc::sockaddr_storage).cast(), len) };
    if rc != 0 {
        let e = Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(e);
        }
        wait_connected(fd, timeout)?;
    }
    let stream = TcpStream::from(owned);
    stream.set_nonblocking(false)?;
    Ok(stream)
}

/// Waits for a non-blocking connect to finish and returns its outcome.
fn wait_connected(fd: RawFd, timeout: Duration) -> std::io::Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Error::new(ErrorKind::TimedOut, format!("no answer within {timeout:?}")));
        }
        let mut pfd = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
        let ms = left.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: poll on one valid pollfd.
        let r = unsafe { libc::poll(&mut pfd, 1, ms) };
        if r < 0 {
            let e = Error::last_os_error();
            if e.kind() == ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if r == 0 {
            continue;
        }
        let mut err: i32 = 0;
        let mut len = std::mem::size_of::<i32>() as libc::socklen_t;
        // SAFETY: getsockopt SO_ERROR into an int we own.
        let rc = unsafe {
            libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_ERROR, (&mut err as *mut i32).cast(), &mut len)
        };
        if rc != 0 {
            return Err(Error::last_os_error());
        }
        return if err == 0 { Ok(()) } else { Err(Error::from_raw_os_error(err)) };
    }
}

/// Another thread's CPU clock, readable from any thread of this process while it lives.
#[derive(Debug, Clone, Copy)]
pub struct ThreadClock {
    tid: i32,
    clock: libc::clockid_t,
}

/// The calling thread's clock.
pub fn thread_clock() -> Option<ThreadClock> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: pthread_getcpuclockid on our own thread, writing one clockid_t.
    if unsafe { libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock) } != 0 {
        return None;
    }
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    Some(ThreadClock { tid, clock })
}

impl ThreadClock {
    /// The thread's CPU time so far: the total from its CPU clock (ns), split into user and
    /// kernel time in the ratio of its tick counts in /proc (all kernel while it has none).
    pub fn cpu(&self) -> CpuTime {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime writes one timespec; the clock belongs to a live thread.
        if unsafe { libc::clock_gettime(self.clock, &mut ts) } != 0 {
            return CpuTime::default();
        }
        let total = ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9;
        let (utime, stime) = task_ticks(self.tid).unwrap_or((0, 0));
        if utime + stime == 0 {
            return CpuTime { user_s: 0.0, kernel_s: total };
        }
        let user_share = utime as f64 / (utime + stime) as f64;
        CpuTime { user_s: total * user_share, kernel_s: total * (1.0 - user_share) }
    }
}

/// (utime, stime) ticks of one of our threads.
fn task_ticks(tid: i32) -> Option<(u64, u64)> {
    let s = racehorse_machine::pidstat::PidStat::read(std::path::Path::new(&format!(
        "/proc/self/task/{tid}/stat"
    )))?;
    Some((s.utime_ticks, s.stime_ticks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_threads_clock_counts_its_work() {
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let h = std::thread::spawn(move || {
            // Spin until this thread has used 30 ms of CPU (wall time varies on a busy machine).
            let mut x = 0u64;
            while racehorse_machine::rusage::thread_cpu().total_s() < 0.03 {
                for _ in 0..10_000 {
                    x = x.wrapping_mul(31).wrapping_add(1);
                }
            }
            tx.send((thread_clock().unwrap(), x)).unwrap();
            let _ = done_rx.recv();
        });
        let (clock, _) = rx.recv().unwrap();
        let cpu = clock.cpu();
        drop(done_tx);
        h.join().unwrap();
        // RUSAGE_THREAD is in µs, the clock in ns: allow for the rounding.
        assert!(cpu.total_s() >= 0.0299, "{cpu:?}");
    }

    #[test]
    fn refused_and_unroutable_connects_fail_fast() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let e = connect(&addr, Duration::from_secs(2), 0, 0).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ConnectionRefused);
        // A listener that never accepts still completes the handshake (backlog), so it connects.
        let l = std::net::TcpListener::bind("[::1]:0");
        if let Ok(l) = l {
            let s = connect(&l.local_addr().unwrap(), Duration::from_secs(2), 64 << 10, 64 << 10).unwrap();
            assert!(s.peer_addr().unwrap().is_ipv6());
        } else {
            eprintln!("skipping the IPv6 half: ::1 is not available here");
        }
    }
}
