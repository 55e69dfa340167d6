//! lat_syscall and lat_select: the simplest kernel entries, each as a loop of `n` calls
//! (null = getppid, read/write one byte of /dev/zero and /dev/null, stat, fstat, open+close)
//! and select() over N descriptors (dups of a file, or of a loopback TCP socket).

use std::ffi::CString;
use std::hint::black_box;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A benchmark body: `run(n)` does the operation `n` times.
pub type Body = Box<dyn FnMut(u64) + Send>;

fn open(path: &Path, flags: libc::c_int) -> Result<OwnedFd, String> {
    let f = std::fs::OpenOptions::new()
        .read(flags & libc::O_ACCMODE != libc::O_WRONLY)
        .write(flags & libc::O_ACCMODE != libc::O_RDONLY)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    Ok(f.into())
}

pub(crate) fn c_path(path: &Path) -> Result<CString, String> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| format!("{} has a NUL byte", path.display()))
}

/// null: getppid(), which always enters the kernel.
pub fn null() -> Body {
    Box::new(|n| {
        for _ in 0..n {
            // SAFETY: no arguments, cannot fail.
            black_box(unsafe { libc::getppid() });
        }
    })
}

/// read: one byte from /dev/zero; write: one byte to /dev/null.
pub fn read_write(write: bool) -> Result<Body, String> {
    let path = Path::new(if write { "/dev/null" } else { "/dev/zero" });
    let fd = open(path, if write { libc::O_WRONLY } else { libc::O_RDONLY })?;
    Ok(Box::new(move |n| {
        let mut byte = [0u8; 1];
        for _ in 0..n {
            // SAFETY: a one-byte buffer we own and an open descriptor.
            let r = unsafe {
                if write {
                    libc::write(fd.as_raw_fd(), byte.as_ptr().cast(), 1)
                } else {
                    libc::read(fd.as_raw_fd(), byte.as_mut_ptr().cast(), 1)
                }
            };
            black_box(r);
        }
        black_box(&mut byte);
    }))
}

/// stat of `file`, or fstat of it open.
pub fn stat(file: &Path, by_fd: bool) -> Result<Body, String> {
    let name = c_path(file)?;
    let fd = open(file, libc::O_RDONLY)?;
    Ok(Box::new(move |n| {
        // SAFETY: a zeroed stat buffer is valid for the kernel to fill.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        for _ in 0..n {
            // SAFETY: valid path / descriptor and buffer.
            let r = unsafe {
                if by_fd {
                    libc::fstat(fd.as_raw_fd(), &mut st)
                } else {
                    libc::stat(name.as_ptr(), &mut st)
                }
            };
            black_box(r);
        }
    }))
}

/// open + close of `file`.
pub fn open_close(file: &Path) -> Result<Body, String> {
    let name = c_path(file)?;
    open(file, libc::O_RDONLY)?;
    Ok(Box::new(move |n| {
        for _ in 0..n {
            // SAFETY: a valid path; the descriptor is closed at once.
            unsafe {
                let fd = libc::open(name.as_ptr(), libc::O_RDONLY);
                if fd >= 0 {
                    libc::close(fd);
                }
            }
        }
    }))
}

/// `fds` descriptors: `fds - 1` dups of `first`, which is kept too.
fn dups(first: OwnedFd, fds: usize) -> Result<Vec<OwnedFd>, String> {
    let mut all = vec![first];
    while all.len() < fds {
        all.push(all[0].try_clone().map_err(|e| format!("dup: {e} (raise ulimit -n)"))?);
    }
    Ok(all)
}

/// select() for writability over `fds` descriptors with a zero timeout: dups of `file`, or
/// with `tcp` of a socket connected to a loopback listener.
pub fn select(fds: usize, file: &Path, tcp: bool) -> Result<Body, String> {
    let (first, keep): (OwnedFd, Vec<OwnedFd>) = if tcp {
        let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("loopback listener: {e}"))?;
        let c = std::net::TcpStream::connect(l.local_addr().map_err(|e| e.to_string())?)
            .map_err(|e| format!("loopback connect: {e}"))?;
        let (server, _) = l.accept().map_err(|e| format!("accept: {e}"))?;
        (c.into(), vec![l.into(), server.into()])
    } else {
        (open(file, libc::O_RDONLY)?, Vec::new())
    };
    let all = dups(first, fds)?;
    let max = all.iter().map(|f| f.as_raw_fd()).max().unwrap_or(0);
    if max >= libc::FD_SETSIZE as i32 {
        return Err(format!("descriptor {max} is beyond select's limit of {}", libc::FD_SETSIZE));
    }
    // lmbench copies a prebuilt set into the call's argument each time (select overwrites it).
    // SAFETY: a zeroed fd_set is valid; every descriptor is below FD_SETSIZE (checked above).
    let mut set: libc::fd_set = unsafe { std::mem::zeroed() };
    for f in &all {
        // SAFETY: as above.
        unsafe { libc::FD_SET(f.as_raw_fd(), &mut set) };
    }
    Ok(Box::new(move |n| {
        let _keep = (&keep, &all);
        for _ in 0..n {
            let mut arg = set;
            let mut tv = libc::timeval { tv_sec: 0, tv_usec: 0 };
            // SAFETY: an fd_set of open descriptors and a zero timeout.
            black_box(unsafe {
                libc::select(max + 1, std::ptr::null_mut(), &mut arg, std::ptr::null_mut(), &mut tv)
            });
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_body_runs_and_selects_see_every_descriptor() {
        let dir = tempfile::tempdir().expect("tmp");
        let file = dir.path().join("f");
        std::fs::write(&file, "x").expect("file");
        let mut bodies: Vec<Body> = vec![
            null(),
            read_write(false).expect("read"),
            read_write(true).expect("write"),
            stat(&file, false).expect("stat"),
            stat(&file, true).expect("fstat"),
            open_close(&file).expect("open"),
            select(10, &file, false).expect("select file"),
            select(100, &file, true).expect("select tcp"),
        ];
        for b in &mut bodies {
            b(3);
        }
        assert!(stat(&dir.path().join("missing"), false).is_err());
        assert!(select(5000, &file, false).is_err(), "beyond FD_SETSIZE or ulimit");
    }
}
