//! Running one fio process: spawning it, learning when its jobs start and finish their I/O,
//! reaping it with its rusage, measuring its process tree's CPU, and killing the whole tree.
//!
//! fio runs each job's `exec_prerun` command right before the job's clock starts and its
//! `exec_postrun` command right after its I/O (end_fsync included). The measured pass makes
//! both write one byte into a FIFO that a thread here reads, so the window can follow the
//! jobs' I/O rather than fio's start-up (clock calibration, a 100 ms start handshake) and exit.

use crate::{Control, EngineError};
use racehorse_machine::procstat::user_hz;
use racehorse_machine::rusage::CpuTime;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// How a reaped fio main process ended, with its rusage (its own and its reaped children's).
#[derive(Debug, Clone, Copy)]
pub(super) struct Exit {
    /// The raw wait status.
    pub status: i32,
    pub cpu: CpuTime,
}

impl Exit {
    pub fn success(&self) -> bool {
        libc::WIFEXITED(self.status) && libc::WEXITSTATUS(self.status) == 0
    }

    pub fn describe(&self) -> String {
        if libc::WIFEXITED(self.status) {
            format!("exit code {}", libc::WEXITSTATUS(self.status))
        } else if libc::WIFSIGNALED(self.status) {
            format!("signal {}", libc::WTERMSIG(self.status))
        } else {
            format!("wait status {}", self.status)
        }
    }
}

/// Something that happened to a running fio.
#[derive(Debug)]
pub(super) enum Event {
    /// A job ran its prerun command: its I/O starts now.
    JobStarted,
    /// A job ran its postrun command: its I/O is over.
    JobDone,
    /// fio's main process exited and was reaped.
    Exited(Result<Exit, String>),
}

/// A running fio. Dropping it kills fio's whole process tree.
pub(super) struct FioRun {
    pid: i32,
    events: Receiver<Event>,
    done: bool,
    /// Our own write end of the marker FIFO, to stop the reader thread.
    marker: Option<File>,
}

impl FioRun {
    /// Starts `exe args` in `cwd` with stdout and stderr to `log`; with `fifo`, a thread
    /// turns the bytes written into it into [`Event::JobStarted`] / [`Event::JobDone`].
    pub fn spawn(
        exe: &Path,
        args: &[String],
        cwd: &Path,
        env: &std::collections::BTreeMap<String, String>,
        log: &Path,
        fifo: Option<&Path>,
    ) -> Result<FioRun, EngineError> {
        let (tx, events) = channel();
        let marker = match fifo {
            Some(path) => Some(start_marker_reader(path, tx.clone())?),
            None => None,
        };
        let out = File::create(log).map_err(|e| EngineError::io("cannot create fio's log", log, e))?;
        let err = out.try_clone().map_err(|e| EngineError::io("cannot create fio's log", log, e))?;
        let child = Command::new(exe)
            .args(args)
            .current_dir(cwd)
            .envs(env)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .spawn()
            .map_err(|e| EngineError::io("cannot start fio", exe, e))?;
        // The std Child is never waited on: the reaper thread below owns the reaping.
        let pid =
            i32::try_from(child.id()).map_err(|_| EngineError::Failed("fio's pid is out of range".into()))?;
        std::thread::spawn(move || {
            let _ = tx.send(Event::Exited(reap(pid)));
        });
        Ok(FioRun { pid, events, done: false, marker })
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The next event, or None once `deadline` has passed. An abort kills fio and returns
    /// `Interrupted`.
    pub fn next_event(
        &mut self,
        ctl: &Control,
        deadline: Option<Instant>,
    ) -> Result<Option<Event>, EngineError> {
        loop {
            if ctl.aborted() {
                self.kill();
                return Err(EngineError::Interrupted);
            }
            let mut step = Duration::from_millis(20);
            if let Some(d) = deadline {
                let left = d.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Ok(None);
                }
                step = step.min(left);
            }
            match self.events.recv_timeout(step) {
                Ok(ev) => {
                    if matches!(ev, Event::Exited(_)) {
                        self.done = true;
                    }
                    return Ok(Some(ev));
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    self.done = true;
                    return Ok(Some(Event::Exited(Err("lost track of the fio process".into()))));
                }
            }
        }
    }

    /// Waits (abort-aware, no deadline) until fio exits, skipping markers.
    pub fn wait_exit(&mut self, ctl: &Control) -> Result<Exit, EngineError> {
        loop {
            if let Some(Event::Exited(res)) = self.next_event(ctl, None)? {
                return res.map_err(EngineError::Failed);
            }
        }
    }

    /// SIGKILLs fio and every process it started, then waits for the reaper.
    pub fn kill(&mut self) {
        if self.done {
            return;
        }
        kill_tree(self.pid);
        let limit = Instant::now() + Duration::from_secs(2);
        while Instant::now() < limit {
            match self.events.recv_timeout(Duration::from_millis(50)) {
                Ok(Event::Exited(_)) | Err(RecvTimeoutError::Disconnected) => break,
                _ => {}
            }
        }
        self.done = true;
    }
}

impl Drop for FioRun {
    fn drop(&mut self) {
        self.kill();
        if let Some(f) = self.marker.as_mut() {
            let _ = f.write_all(b"q");
        }
    }
}

/// Creates the FIFO the measured pass's prerun/postrun commands write to.
pub(super) fn make_fifo(path: &Path) -> Result<(), EngineError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(EngineError::io("cannot remove an old FIFO", path, e))
        }
        _ => {}
    }
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| EngineError::Usage(format!("bad path {}", path.display())))?;
    // SAFETY: mkfifo with a valid NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(EngineError::io("cannot create a FIFO", path, std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Opens the FIFO read-write (so opening never blocks and EOF never comes) and starts a
/// thread that forwards 'b' and 'e' bytes as events until it reads 'q'.
fn start_marker_reader(path: &Path, tx: Sender<Event>) -> Result<File, EngineError> {
    let mut reader = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| EngineError::io("cannot open the marker FIFO", path, e))?;
    let writer = reader.try_clone().map_err(|e| EngineError::io("cannot open the marker FIFO", path, e))?;
    std::thread::spawn(move || {
        let mut buf = [0u8; 64];
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            };
            for b in &buf[..n] {
                let ev = match b {
                    b'b' => Event::JobStarted,
                    b'e' => Event::JobDone,
                    b'q' => return,
                    _ => continue,
                };
                if tx.send(ev).is_err() {
                    return;
                }
            }
        }
    });
    Ok(writer)
}

/// Blocks until `pid` exits and reaps it, returning its status and rusage.
fn reap(pid: i32) -> Result<Exit, String> {
    loop {
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value of this plain C struct.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: wait4 on our own child with valid pointers to locals.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
            return Ok(Exit {
                status,
                cpu: CpuTime { user_s: secs(ru.ru_utime), kernel_s: secs(ru.ru_stime) },
            });
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("waiting for fio: {e}"));
        }
    }
}

/// One process from /proc/PID/stat: parent, own (utime, stime) and reaped children's
/// (cutime, cstime), in clock ticks.
struct ProcStat {
    pid: i32,
    ppid: i32,
    own: (u64, u64),
    reaped: (u64, u64),
}

fn read_stat(pid: i32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = text.get(text.rfind(')')? + 2..)?;
    // After the state: ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
    // utime stime cutime cstime.
    let f: Vec<u64> = rest.split_whitespace().skip(1).take(14).map(|w| w.parse().unwrap_or(0)).collect();
    let get = |i: usize| f.get(i).copied().unwrap_or(0);
    Some(ProcStat {
        pid,
        ppid: i32::try_from(get(0)).ok()?,
        own: (get(10), get(11)),
        reaped: (get(12), get(13)),
    })
}

/// `root` and all its live descendants (fio's job processes call setsid(), so the process
/// group does not find them; the parent links do). Follows /proc/PID/task/TID/children when
/// the kernel has them (fast), else scans every process.
fn tree(root: i32) -> Vec<ProcStat> {
    tree_via(root, Path::new(&format!("/proc/{root}/task/{root}/children")).exists())
}

fn tree_via(root: i32, has_children_files: bool) -> Vec<ProcStat> {
    let Some(first) = read_stat(root) else { return Vec::new() };
    let mut all: Vec<ProcStat> = if has_children_files { Vec::new() } else { all_procs() };
    let mut members = vec![first];
    let mut i = 0;
    while i < members.len() {
        let parent = members[i].pid;
        if has_children_files {
            members.extend(children(parent).into_iter().filter_map(read_stat));
        } else {
            let (kids, rest): (Vec<_>, Vec<_>) = all.into_iter().partition(|p| p.ppid == parent);
            all = rest;
            members.extend(kids);
        }
        i += 1;
    }
    members
}

/// The children of every thread of `pid`, from /proc/PID/task/*/children.
fn children(pid: i32) -> Vec<i32> {
    let mut kids = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            if let Ok(text) = std::fs::read_to_string(t.path().join("children")) {
                kids.extend(text.split_whitespace().filter_map(|w| w.parse::<i32>().ok()));
            }
        }
    }
    kids
}

fn all_procs() -> Vec<ProcStat> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()).and_then(read_stat))
        .collect()
}

/// CPU of fio's process tree so far: the live processes plus the children they reaped, the
/// same quantity wait4() reports for the main process once everything has exited.
///
/// /proc/PID/stat counts in clock ticks (10 ms), too coarse for a short cell, so a live
/// process's total comes from its CPU clock (ns) and is split into user and kernel time in
/// the ratio of its tick counts (all kernel while it has none). Reaped children stay in ticks.
pub(crate) fn tree_cpu(root: i32) -> CpuTime {
    let hz = user_hz().max(1) as f64;
    let mut cpu = CpuTime::default();
    for p in tree(root) {
        let (tu, ts) = (p.own.0 as f64 / hz, p.own.1 as f64 / hz);
        let (user, kernel) = match process_cpu_clock(p.pid) {
            Some(total) if tu + ts > 0.0 => (total * tu / (tu + ts), total * ts / (tu + ts)),
            Some(total) => (0.0, total),
            None => (tu, ts),
        };
        cpu.user_s += user + p.reaped.0 as f64 / hz;
        cpu.kernel_s += kernel + p.reaped.1 as f64 / hz;
    }
    cpu
}

/// The CPU time of all threads of process `pid` so far, in seconds.
fn process_cpu_clock(pid: i32) -> Option<f64> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: clock_getcpuclockid writes one clockid_t to a valid pointer.
    if unsafe { libc::clock_getcpuclockid(pid, &mut clock) } != 0 {
        return None;
    }
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec to a valid pointer.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return None;
    }
    Some(ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9)
}

/// Stops the main process (no new forks), SIGKILLs its descendants, then SIGKILLs it.
fn kill_tree(root: i32) {
    // SAFETY: kill(2) on our child, which is not reaped yet (the reaper has not reported).
    unsafe { libc::kill(root, libc::SIGSTOP) };
    for p in tree(root).iter().skip(1) {
        // SAFETY: kill(2) on fio's live descendants just read from /proc.
        unsafe { libc::kill(p.pid, libc::SIGKILL) };
    }
    // SAFETY: as the first call.
    unsafe { libc::kill(root, libc::SIGKILL) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_of_self_includes_self_and_nonnegative_cpu() {
        let me = std::process::id() as i32;
        let t = tree(me);
        assert_eq!(t.first().map(|p| p.pid), Some(me));
        let c = tree_cpu(me);
        assert!(c.user_s >= 0.0 && c.kernel_s >= 0.0);
        let own = process_cpu_clock(me).unwrap();
        assert!(own > 0.0 && own <= c.user_s + c.kernel_s + 1e-3, "{own} vs {c:?}");
    }

    #[test]
    fn both_ways_of_finding_descendants_agree() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let me = std::process::id() as i32;
        let pids = |v: Vec<ProcStat>| {
            let mut p: Vec<i32> = v.into_iter().map(|p| p.pid).collect();
            p.sort_unstable();
            p
        };
        let fast = pids(tree_via(me, true));
        let slow = pids(tree_via(me, false));
        let _ = child.kill();
        let _ = child.wait();
        assert!(slow.contains(&(child.id() as i32)), "{slow:?}");
        assert!(fast.contains(&(child.id() as i32)), "{fast:?}");
        assert!(tree_via(-5, false).is_empty());
    }

    #[test]
    fn exit_status_is_described() {
        let ok = Exit { status: 0, cpu: CpuTime::default() };
        assert!(ok.success());
        assert_eq!(ok.describe(), "exit code 0");
        let failed = Exit { status: 1 << 8, cpu: CpuTime::default() };
        assert!(!failed.success());
        assert_eq!(failed.describe(), "exit code 1");
        assert_eq!(Exit { status: 9, cpu: CpuTime::default() }.describe(), "signal 9");
    }

    #[test]
    fn markers_and_exit_arrive_as_events() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("m.fifo");
        make_fifo(&fifo).unwrap();
        let script = format!(
            "printf b > '{0}'; printf e > '{0}'; echo \"$RH_VARIANT_ENV\"; sleep 0.2; exit 3",
            fifo.display()
        );
        let args = vec!["-c".to_string(), script];
        let ctl = Control::simple(
            Duration::ZERO,
            Duration::from_secs(1),
            std::sync::Arc::new(crate::control::RealClock::default()),
        );
        let log = dir.path().join("log");
        let env = [("RH_VARIANT_ENV".to_string(), "from-the-variant".to_string())].into();
        let mut run =
            FioRun::spawn(Path::new("/bin/sh"), &args, dir.path(), &env, &log, Some(&fifo)).unwrap();
        let mut seen = Vec::new();
        loop {
            match run.next_event(&ctl, Some(Instant::now() + Duration::from_secs(10))).unwrap() {
                Some(Event::JobStarted) => seen.push('b'),
                Some(Event::JobDone) => seen.push('e'),
                Some(Event::Exited(r)) => {
                    assert_eq!(r.unwrap().describe(), "exit code 3");
                    break;
                }
                None => panic!("no exit"),
            }
        }
        assert_eq!(seen, ['b', 'e']);
        let out = std::fs::read_to_string(&log).unwrap();
        assert_eq!(out.trim(), "from-the-variant", "the variant's environment reaches the program");
    }
}
