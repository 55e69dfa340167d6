//! Simulated users as forked processes, started together: each child reports ready on a
//! pipe, then blocks reading a second pipe until the parent closes it (the start signal),
//! runs its job list and `_exit`s. The parent takes the wall time from the start signal to
//! the last child's exit and each child's user and system time from `wait4`.

use super::tasks::{self, TaskEnv};
use crate::support::rng::SplitMix64;
use crate::{Control, EngineError};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long the parent waits for every user to be ready.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How often the watchdog looks at the abort flag and the deadline.
const WATCH_SLICE: Duration = Duration::from_millis(50);

/// One user's setup: its directory and job list (task indices in run order).
pub struct UserPlan {
    pub dir: PathBuf,
    pub jobs: Vec<usize>,
    pub seed: u64,
}

/// What a load point measured.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LoadResult {
    /// From the start signal to the last user's exit, in seconds.
    pub real_s: f64,
    pub user_s: f64,
    pub sys_s: f64,
}

fn pipe() -> Result<(OwnedFd, OwnedFd), EngineError> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(EngineError::Failed(format!("pipe: {}", std::io::Error::last_os_error())));
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The pipes shared by the parent and its users.
struct Pipes {
    ready: (OwnedFd, OwnedFd),
    go: (OwnedFd, OwnedFd),
    errors: (OwnedFd, OwnedFd),
}

/// In the child: wait for the start, run the jobs, exit. Never returns.
fn child_main(p: &Pipes, user: &UserPlan, shared_file: &std::path::Path, disk_blocks: u64) -> ! {
    let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut env = TaskEnv {
            dir: user.dir.clone(),
            shared_file: shared_file.to_path_buf(),
            disk_blocks,
            rng: SplitMix64::new(user.seed),
            sink: 0,
        };
        let mut byte = [1u8];
        // SAFETY: reads and writes on pipe descriptors this process holds. Our copy of the
        // start pipe's write end is closed first (the process exits without dropping it),
        // so that the parent's close is the last one and the read sees end-of-file.
        unsafe {
            libc::close(p.go.1.as_raw_fd());
            libc::write(p.ready.1.as_raw_fd(), byte.as_ptr().cast(), 1);
            while libc::read(p.go.0.as_raw_fd(), byte.as_mut_ptr().cast(), 1) < 0 {}
        }
        for &task in &user.jobs {
            if let Err(e) = tasks::run(task, &mut env) {
                let msg = format!("{e}\n");
                let msg = &msg.as_bytes()[..msg.len().min(libc::PIPE_BUF - 1)];
                // SAFETY: one write below PIPE_BUF on our error pipe (atomic).
                unsafe { libc::write(p.errors.1.as_raw_fd(), msg.as_ptr().cast(), msg.len()) };
                return 1;
            }
        }
        std::hint::black_box(env.sink);
        0
    }))
    .unwrap_or(2);
    // SAFETY: leaves the forked child without running the parent's destructors.
    unsafe { libc::_exit(code) }
}

/// Kills and reaps children already started (error paths).
fn kill_all(pids: &[libc::pid_t]) {
    for &pid in pids {
        // SAFETY: signals and reaps our own children.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
    }
}

/// Reads `n` ready bytes, with a deadline; gives up when the run is aborted.
fn await_ready(fd: &OwnedFd, n: usize, ctl: &Control) -> Result<(), String> {
    let deadline = Instant::now() + READY_TIMEOUT;
    let mut got = 0usize;
    let mut buf = [0u8; 256];
    while got < n {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(format!("only {got} of {n} users became ready within {READY_TIMEOUT:?}"));
        }
        if ctl.aborted() {
            return Err("interrupted while the users got ready".into());
        }
        let mut pfd = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: polls and reads one descriptor we own into a local buffer.
        let r = unsafe { libc::poll(&mut pfd, 1, left.as_millis().min(1000) as i32) };
        if r > 0 {
            let k = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len().min(n - got)) };
            if k <= 0 {
                return Err(format!("a user exited before it was ready ({got} of {n} ready)"));
            }
            got += k as usize;
        }
    }
    Ok(())
}

fn forked(users: &[UserPlan], p: &Pipes, shared: &std::path::Path, blocks: u64) -> Result<Vec<i32>, String> {
    let mut pids = Vec::with_capacity(users.len());
    for user in users {
        // SAFETY: the child runs only its job list and `_exit`s (see child_main).
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            let e = std::io::Error::last_os_error();
            kill_all(&pids);
            return Err(format!("fork of user {} failed: {e}", pids.len() + 1));
        }
        if pid == 0 {
            child_main(p, user, shared, blocks);
        }
        pids.push(pid);
    }
    Ok(pids)
}

/// Runs one load point: every user in `users` at once. Opens and closes the measured
/// window around the run (start signal to last exit). Fails if a user fails, the run is
/// interrupted, or it exceeds `timeout`.
pub fn run_load(
    users: &[UserPlan],
    shared_file: &std::path::Path,
    disk_blocks: u64,
    ctl: &Control,
    timeout: Duration,
) -> Result<LoadResult, EngineError> {
    let p = Pipes { ready: pipe()?, go: pipe()?, errors: pipe()? };
    let pids = forked(users, &p, shared_file, disk_blocks).map_err(EngineError::Failed)?;
    let Pipes { ready, go, errors } = p;
    drop((ready.1, go.0, errors.1));
    if let Err(e) = await_ready(&ready.0, pids.len(), ctl) {
        kill_all(&pids);
        return Err(if ctl.aborted() { EngineError::Interrupted } else { EngineError::Failed(e) });
    }
    ctl.begin_measure();
    let t0 = Instant::now();
    drop(go.1); // the start signal: every user's read returns end-of-file
    let reaped: Vec<AtomicBool> = pids.iter().map(|_| AtomicBool::new(false)).collect();
    let stop_watch = AtomicBool::new(false);
    let killed = AtomicBool::new(false);
    let mut out = LoadResult::default();
    let mut bad_exits = 0usize;
    std::thread::scope(|s| {
        s.spawn(|| {
            while !stop_watch.load(Ordering::Acquire) {
                if ctl.aborted() || t0.elapsed() > timeout {
                    killed.store(true, Ordering::Release);
                    for (pid, done) in pids.iter().zip(&reaped) {
                        if !done.load(Ordering::Acquire) {
                            // SAFETY: signals a child of ours that has not been reaped.
                            unsafe { libc::kill(*pid, libc::SIGKILL) };
                        }
                    }
                    return;
                }
                std::thread::sleep(WATCH_SLICE);
            }
        });
        for (pid, done) in pids.iter().zip(&reaped) {
            let mut status = 0;
            // SAFETY: zeroed rusage is a valid out-parameter for wait4.
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: waits for our own child.
            let r = unsafe { libc::wait4(*pid, &mut status, 0, &mut ru) };
            done.store(true, Ordering::Release);
            if r != *pid || !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
                bad_exits += 1;
            }
            out.user_s += ru.ru_utime.tv_sec as f64 + ru.ru_utime.tv_usec as f64 * 1e-6;
            out.sys_s += ru.ru_stime.tv_sec as f64 + ru.ru_stime.tv_usec as f64 * 1e-6;
        }
        out.real_s = t0.elapsed().as_secs_f64();
        // The window closes here, not once the watchdog has seen the flag (up to a slice).
        ctl.end_measure();
        stop_watch.store(true, Ordering::Release);
    });
    if ctl.aborted() {
        return Err(EngineError::Interrupted);
    }
    if killed.load(Ordering::Acquire) {
        return Err(EngineError::Failed(format!(
            "{} users did not finish within the timeout of {} s; raise `timeout` or lower the load",
            pids.len(),
            timeout.as_secs()
        )));
    }
    if bad_exits > 0 {
        let text = read_all(errors.0);
        let first = text.lines().next().unwrap_or("no message (the user was killed or panicked)");
        return Err(EngineError::Failed(format!(
            "{bad_exits} of {} users failed; first: {first}",
            pids.len()
        )));
    }
    Ok(out)
}

fn read_all(fd: OwnedFd) -> String {
    let mut s = String::new();
    let _ = std::io::Read::read_to_string(&mut std::fs::File::from(fd), &mut s);
    s
}
