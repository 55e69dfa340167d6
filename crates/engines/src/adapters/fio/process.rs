//! Running one fio process: spawning it, learning when its jobs start and finish their I/O,
//! reaping it with its rusage, and killing the whole tree (`crate::support::proc_tree`).
//!
//! fio runs each job's `exec_prerun` command right before the job's clock starts and its
//! `exec_postrun` command right after its I/O (end_fsync included). The measured pass makes
//! both write one byte into a FIFO that a thread here reads, so the window can follow the
//! jobs' I/O rather than fio's start-up (clock calibration, a 100 ms start handshake) and exit.

use crate::support::proc_tree::kill_tree;
use crate::{Control, EngineError};
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

#[cfg(test)]
mod tests {
    use super::*;

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
