//! `ipc = "mq_procs"`, racehorse's side: seed 003's modified dbench with two processes per
//! client. Forks an executor and a reader process per client (joined by two POSIX message
//! queues, see procs_child.rs), opens the gate once all are ready, drives the window through
//! a shared page (reading the processes' CPU at its edges), then collects their reports and
//! reaps them. The children die with racehorse (PR_SET_PDEATHSIG) and the queues' names are
//! unlinked as soon as they are created, so nothing outlives a run, even a killed one.

use super::client::Shared;
use super::mq::Queue;
use super::procs_child::{child_main, executor, reader, ChildReport, Page, MEASURE, STOP_PHASE, WARMUP};
use crate::control::Phase;
use crate::recorder::WorkerStats;
use crate::support::proc_tree::tree_cpu;
use crate::{Control, EngineError, Recorder};
use racehorse_core::{CpuMethod, WorkloadCpu};
use racehorse_machine::rusage::CpuTime;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long the client processes may take to get ready, and to finish after the window.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
const GRACE: Duration = Duration::from_secs(20);
/// How often the window's watcher looks for client processes that ended.
const WATCH_SLICE: Duration = Duration::from_millis(100);

/// The page shared with the client processes (anonymous, MAP_SHARED, so forks share it).
struct SharedPage(NonNull<Page>);

impl SharedPage {
    fn new() -> Result<SharedPage, EngineError> {
        // SAFETY: a fresh anonymous mapping; zeroed memory is a valid Page (atomics at 0).
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                std::mem::size_of::<Page>(),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            let e = std::io::Error::last_os_error();
            return Err(EngineError::io(
                "cannot map the page shared with the client processes",
                "/dev/zero",
                e,
            ));
        }
        NonNull::new(p.cast::<Page>())
            .map(SharedPage)
            .ok_or_else(|| EngineError::Failed("mmap gave null".into()))
    }

    fn get(&self) -> &Page {
        // SAFETY: mapped in `new`, unmapped only on drop; Page holds only atomics.
        unsafe { self.0.as_ref() }
    }
}

impl Drop for SharedPage {
    fn drop(&mut self) {
        // SAFETY: unmaps the mapping this value owns.
        unsafe { libc::munmap(self.0.as_ptr().cast(), std::mem::size_of::<Page>()) };
    }
}

/// Which half of a client a process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Reader,
    Executor,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Reader => "reader",
            Role::Executor => "executor",
        }
    }
}

struct Child {
    client: usize,
    role: Role,
    pid: i32,
    out: OwnedFd,
}

/// A reaped client process: its report (None if it sent none) and wait status.
#[derive(Debug)]
pub struct Finished {
    pub client: usize,
    pub role: Role,
    pub pid: i32,
    pub report: Option<ChildReport>,
    pub status: i32,
}

fn pipe() -> Result<(OwnedFd, OwnedFd), EngineError> {
    let mut fds = [0; 2];
    // SAFETY: a two-element array for pipe2 to fill.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(EngineError::io("pipe", "/proc/self/fd", std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors were just created and are owned here.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Forks one client process running `body`; its report comes back over a fresh pipe.
fn fork_child(client: usize, role: Role, body: impl FnOnce() -> ChildReport) -> Result<Child, EngineError> {
    let (r, w) = pipe()?;
    // SAFETY: getpid cannot fail.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the child runs only the client's loop (syscalls, its own buffers, glibc
    // malloc, which is usable after fork) and `_exit`s in child_main, never returning here.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        drop(r);
        child_main(parent, w.as_raw_fd(), body);
    }
    drop(w);
    if pid < 0 {
        let e = std::io::Error::last_os_error();
        return Err(EngineError::io("cannot fork a client process (ipc = \"mq_procs\")", "/proc/self", e));
    }
    Ok(Child { client, role, pid, out: r })
}

/// Forks the executor and the reader of every client; the queues are closed here after.
fn spawn_all(sh: &Shared, clients: usize, page: &Page, kids: &mut Vec<Child>) -> Result<(), EngineError> {
    for id in 0..clients {
        let q = (Queue::create(id, "req")?, Queue::create(id, "rep")?);
        kids.push(fork_child(id, Role::Executor, || executor(page, &sh.lf, &sh.root, id, sh.cfg, &q))?);
        kids.push(fork_child(id, Role::Reader, || reader(page, &sh.lf, &q))?);
    }
    Ok(())
}

/// True if process `pid` has exited (it is not reaped here).
fn has_exited(pid: i32) -> bool {
    // SAFETY: siginfo_t is plain data; waitid with WNOWAIT leaves the child unreaped.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        r != 0 || info.si_pid() != 0
    }
}

/// Waits until every client process is at the gate.
fn wait_ready(page: &Page, kids: &[Child], ctl: &Control) -> Result<(), EngineError> {
    let limit = Instant::now() + READY_TIMEOUT;
    while (page.ready.load(Ordering::Acquire) as usize) < kids.len() {
        if ctl.aborted() {
            return Err(EngineError::Interrupted);
        }
        if let Some(k) = kids.iter().find(|k| has_exited(k.pid)) {
            return Err(EngineError::Failed(format!(
                "fileserver: the {} process of client {} ended before the start",
                k.role.name(),
                k.client
            )));
        }
        if Instant::now() > limit {
            return Err(EngineError::Failed(format!(
                "fileserver: the client processes were not ready within {READY_TIMEOUT:?}"
            )));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

/// Reads every child's report until its pipe closes, kills those still running after
/// `grace`, and reaps them all.
fn collect(kids: Vec<Child>, grace: Duration) -> Vec<Finished> {
    let mut bufs: Vec<Vec<u8>> = vec![Vec::new(); kids.len()];
    let mut open: Vec<bool> = vec![true; kids.len()];
    let deadline = Instant::now() + grace;
    let mut chunk = vec![0u8; 64 << 10];
    while open.iter().any(|o| *o) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let idx: Vec<usize> = (0..kids.len()).filter(|i| open[*i]).collect();
        let mut pfds: Vec<libc::pollfd> = idx
            .iter()
            .map(|i| libc::pollfd { fd: kids[*i].out.as_raw_fd(), events: libc::POLLIN, revents: 0 })
            .collect();
        // SAFETY: polls descriptors we own, listed in a live vector.
        let r = unsafe {
            libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, left.as_millis().min(1000) as i32)
        };
        if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break;
        }
        for (p, &i) in pfds.iter().zip(&idx) {
            if p.revents == 0 {
                continue;
            }
            // SAFETY: reads into a buffer we own from a descriptor we own.
            let k = unsafe { libc::read(p.fd, chunk.as_mut_ptr().cast(), chunk.len()) };
            if k > 0 {
                bufs[i].extend_from_slice(&chunk[..k as usize]);
            } else if k == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                open[i] = false;
            }
        }
    }
    kids.into_iter()
        .zip(bufs)
        .zip(open)
        .map(|((k, buf), still_open)| {
            if still_open {
                // SAFETY: our child, not reaped yet.
                unsafe { libc::kill(k.pid, libc::SIGKILL) };
            }
            let mut status = 0;
            // SAFETY: reaps our own child.
            unsafe { libc::waitpid(k.pid, &mut status, 0) };
            let report = serde_json::from_slice::<ChildReport>(&buf).ok();
            Finished { client: k.client, role: k.role, pid: k.pid, report, status }
        })
        .collect()
}

/// During the window: a client process that ends (killed, crashed) raises `failed`, so the
/// window ends and the processes waiting for it give up.
fn watch(pg: &Page, kids: &[Child], done: &AtomicBool) {
    while !done.load(Ordering::Acquire) {
        if pg.phase.load(Ordering::Acquire) != STOP_PHASE && kids.iter().any(|k| has_exited(k.pid)) {
            pg.failed.store(true, Ordering::Release);
            return;
        }
        std::thread::sleep(WATCH_SLICE);
    }
}

/// The CPU of all client processes so far.
fn kids_cpu(kids: &[Child]) -> CpuTime {
    kids.iter().fold(CpuTime::default(), |mut acc, k| {
        let c = tree_cpu(k.pid);
        acc.user_s += c.user_s;
        acc.kernel_s += c.kernel_s;
        acc
    })
}

/// Runs the clients as processes: returns how the window went, the reaped processes and
/// their CPU over the window (None if the window did not close).
pub fn run_processes(
    sh: &Shared,
    clients: usize,
    ctl: &Control,
) -> (Result<(), EngineError>, Vec<Finished>, Option<CpuTime>) {
    let page = match SharedPage::new() {
        Ok(p) => p,
        Err(e) => return (Err(e), Vec::new(), None),
    };
    let pg = page.get();
    let mut kids = Vec::with_capacity(2 * clients);
    let started = spawn_all(sh, clients, pg, &mut kids).and_then(|()| wait_ready(pg, &kids, ctl));
    if let Err(e) = started {
        ctl.stop();
        pg.phase.store(STOP_PHASE, Ordering::Release);
        for k in &kids {
            // SAFETY: our children, not reaped yet.
            unsafe { libc::kill(k.pid, libc::SIGKILL) };
        }
        // Reaped, not reported: their deaths by our SIGKILL would hide the real error.
        collect(kids, GRACE);
        return (Err(e), Vec::new(), None);
    }
    pg.phase.store(WARMUP, Ordering::Release);
    let (mut cpu0, mut cpu1) = (None, None);
    let done = AtomicBool::new(false);
    let res = std::thread::scope(|s| {
        s.spawn(|| watch(pg, &kids, &done));
        let res = ctl.drive_window_observed(&pg.failed, &mut |phase| match phase {
            Phase::Measure => {
                cpu0 = Some(kids_cpu(&kids));
                pg.phase.store(MEASURE, Ordering::Release);
            }
            _ => {
                pg.phase.store(STOP_PHASE, Ordering::Release);
                cpu1 = Some(kids_cpu(&kids));
            }
        });
        pg.phase.store(STOP_PHASE, Ordering::Release);
        done.store(true, Ordering::Release);
        res
    });
    let cpu = match (cpu0, cpu1) {
        (Some(a), Some(b)) => Some(b.since(a)),
        _ => None,
    };
    (res, collect(kids, GRACE), cpu)
}

/// Why a process that sent no report ended.
fn death(f: &Finished) -> EngineError {
    let how = if libc::WIFSIGNALED(f.status) {
        format!("died of signal {}", libc::WTERMSIG(f.status))
    } else {
        format!("exited with status {} and no report", libc::WEXITSTATUS(f.status))
    };
    EngineError::Failed(format!("fileserver: the {} process of client {} {how}", f.role.name(), f.client))
}

/// Keeps the error of lowest rank: a process's death, then an executor's fatal error, then
/// a reader's, then that of a process that gave up because another one failed.
fn keep(slot: &mut Option<(u8, EngineError)>, rank: u8, e: EngineError) {
    if slot.as_ref().is_none_or(|(r, _)| rank < *r) {
        *slot = Some((rank, e));
    }
}

/// Adds the processes' counts to `rec` (units, latencies; workload CPU = the processes'
/// CPU over the window) and returns the error that ended the run, if any.
pub fn record(finished: Vec<Finished>, cpu: Option<CpuTime>, rec: &Recorder) -> Option<EngineError> {
    let (mut errors, mut pids) = (0u64, Vec::new());
    let own = std::process::id() as i32;
    let mut worst = None;
    for f in finished {
        let Some(r) = f.report else {
            keep(&mut worst, 0, death(&f));
            continue;
        };
        errors += r.errors;
        if r.pid == f.pid && r.pid != own {
            pids.push(r.pid);
        }
        if let Some(fatal) = r.fatal {
            let rank = match (fatal.gave_up(), f.role) {
                (true, _) => 3,
                (false, Role::Executor) => 1,
                (false, Role::Reader) => 2,
            };
            keep(&mut worst, rank, fatal.into_engine());
        }
        if f.role == Role::Reader {
            let w = WorkerStats {
                units: r.units,
                ops: r.ops,
                bytes_read: r.bytes_read,
                bytes_written: r.bytes_written,
                latencies: r.latencies,
                cpu: CpuTime::default(),
            };
            rec.submit(w);
        }
    }
    if let Some(c) = cpu {
        rec.set_workload_cpu(WorkloadCpu {
            user_s: c.user_s,
            kernel_s: c.kernel_s,
            method: CpuMethod::Children,
        });
    }
    pids.sort_unstable();
    pids.dedup();
    rec.set_extra("errors", errors as f64);
    // Processes that reported from a pid of their own (the one racehorse forked).
    rec.set_extra("client_processes", pids.len() as f64);
    worst.map(|(_, e)| e)
}
