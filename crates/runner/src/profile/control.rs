//! A perf process (`perf record` or `perf stat`) started with its events disabled and switched
//! on and off through perf's control fifo (`--control fifo:ctl,ack`), so that only the
//! measured window counts. Both tools speak the same protocol since perf 5.10.

use super::error::PerfError;
use super::sys;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::io::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long perf may take to set up (it synthesizes every running task's mappings first).
const START_TIMEOUT: Duration = Duration::from_secs(20);
/// How long an "enable"/"disable" may wait for perf's acknowledgement.
const ACK_TIMEOUT: Duration = Duration::from_secs(3);
/// How long perf may take to write its output after SIGINT.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);
/// Granularity of the liveness checks while waiting for perf.
const POLL_SLICE: Duration = Duration::from_millis(20);
/// perf acknowledges each command with "ack\n" (followed by a NUL byte, which is skipped).
const ACK: &[u8] = b"ack\n";

/// The files of one controlled perf inside its directory, distinct per tool so that a
/// recording and a count can share a directory.
#[derive(Debug, Clone, Copy)]
pub struct Tool {
    /// For messages: "perf record", "perf stat".
    pub name: &'static str,
    pub ctl: &'static str,
    pub ack: &'static str,
    pub log: &'static str,
}

/// A running perf whose events start disabled. Dropping it kills and reaps perf and removes
/// its fifos.
pub struct Controlled {
    tool: Tool,
    child: Child,
    /// Set once perf has exited and been reaped.
    status: Option<ExitStatus>,
    ctl: File,
    ack: File,
    /// Bytes read from the ack fifo not yet matched to a command.
    pending: Vec<u8>,
    dir: PathBuf,
}

/// `--control fifo:<dir>/<ctl>,<dir>/<ack>` as one argument.
pub fn control_arg(dir: &Path, tool: &Tool) -> OsString {
    let mut control = OsString::from("fifo:");
    control.push(dir.join(tool.ctl));
    control.push(",");
    control.push(dir.join(tool.ack));
    control
}

impl Controlled {
    /// Starts `perf ARGS` (which must hold `-D -1` and [`control_arg`]) with its output in
    /// `<dir>/<tool.log>`, and waits until perf answers on the control fifo.
    pub fn start(perf: &Path, dir: &Path, tool: Tool, args: Vec<OsString>) -> Result<Controlled, PerfError> {
        fs::create_dir_all(dir).map_err(|e| PerfError::io(format!("create {}", dir.display()), e))?;
        let ctl = open_fifo(&dir.join(tool.ctl))?;
        let ack = open_fifo(&dir.join(tool.ack))?;
        let log_path = dir.join(tool.log);
        let log = File::create(&log_path)
            .map_err(|e| PerfError::io(format!("create {}", log_path.display()), e))?;
        let log2 = log.try_clone().map_err(|e| PerfError::io("duplicate the log handle", e))?;
        let mut cmd = Command::new(perf);
        // SAFETY: the hook only calls prctl, which is async-signal-safe.
        unsafe { cmd.pre_exec(sys::die_with_parent) };
        let spawned = cmd
            .args(args)
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            // Own process group: a Ctrl-C on the terminal must not stop the recording early.
            .process_group(0)
            .spawn();
        let child = match spawned {
            Ok(child) => child,
            Err(e) => {
                remove_fifos(dir, &tool);
                return Err(PerfError::io(format!("start {}", perf.display()), e));
            }
        };
        let mut c =
            Controlled { tool, child, status: None, ctl, ack, pending: Vec::new(), dir: dir.to_path_buf() };
        // Events are already off (-D -1); the answer to "disable" shows perf is ready.
        c.command("disable", START_TIMEOUT)
            .map_err(|e| PerfError::NotStarted { tool: tool.name, source: Box::new(e) })?;
        Ok(c)
    }

    /// Turns the events on.
    pub fn enable(&mut self) -> Result<(), PerfError> {
        self.command("enable", ACK_TIMEOUT)
    }

    /// Turns the events off.
    pub fn disable(&mut self) -> Result<(), PerfError> {
        self.command("disable", ACK_TIMEOUT)
    }

    /// perf's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The path of perf's output log.
    pub fn log_path(&self) -> PathBuf {
        self.dir.join(self.tool.log)
    }

    /// Stops perf (SIGINT; SIGKILL if it has not finished within 30 s) and checks that it
    /// ended as perf does after SIGINT.
    pub fn stop(&mut self) -> Result<(), PerfError> {
        let name = self.tool.name;
        if let Some(status) = self.poll_exit() {
            return Err(PerfError::perf(name, format!("exited early ({status})"), self.log_tail()));
        }
        sys::signal(self.pid(), sys::SIGINT).map_err(|e| PerfError::io(format!("interrupt {name}"), e))?;
        let deadline = Instant::now() + STOP_TIMEOUT;
        let status = loop {
            if let Some(status) = self.poll_exit() {
                break status;
            }
            if Instant::now() >= deadline {
                self.kill();
                let what =
                    format!("did not stop within {} s of SIGINT and was killed", STOP_TIMEOUT.as_secs());
                return Err(PerfError::perf(name, what, self.log_tail()));
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        // perf re-raises SIGINT after writing its output, so that is its normal way to end.
        if !(status.success() || status.signal() == Some(sys::SIGINT) || status.code() == Some(130)) {
            return Err(PerfError::perf(name, format!("failed ({status})"), self.log_tail()));
        }
        Ok(())
    }

    /// Sends one control command and waits for perf's acknowledgement.
    fn command(&mut self, cmd: &str, timeout: Duration) -> Result<(), PerfError> {
        let name = self.tool.name;
        let started = Instant::now();
        if let Some(status) = self.poll_exit() {
            return Err(PerfError::perf(name, format!("has exited ({status})"), self.log_tail()));
        }
        self.ctl
            .write_all(format!("{cmd}\n").as_bytes())
            .map_err(|e| PerfError::io(format!("write '{cmd}' to {name}'s control fifo"), e))?;
        loop {
            if take_ack(&mut self.pending) {
                return Ok(());
            }
            if let Some(status) = self.poll_exit() {
                let what = format!("exited ({status}) before acknowledging '{cmd}'");
                return Err(PerfError::perf(name, what, self.log_tail()));
            }
            let left = timeout.saturating_sub(started.elapsed());
            if left.is_zero() {
                let what = format!("did not acknowledge '{cmd}' within {:.1} s", timeout.as_secs_f64());
                return Err(PerfError::perf(name, what, self.log_tail()));
            }
            let readable = sys::wait_readable(self.ack.as_raw_fd(), left.min(POLL_SLICE))
                .map_err(|e| PerfError::io(format!("wait for {name}'s acknowledgement"), e))?;
            if readable {
                let mut buf = [0u8; 256];
                let n = self
                    .ack
                    .read(&mut buf)
                    .map_err(|e| PerfError::io(format!("read {name}'s acknowledgement"), e))?;
                self.pending.extend_from_slice(&buf[..n]);
            }
        }
    }

    /// perf's exit status if it has exited (reaping it).
    fn poll_exit(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }

    /// Kills and reaps perf unless it has already exited.
    fn kill(&mut self) {
        if self.poll_exit().is_none() {
            let _ = self.child.kill();
            self.status = self.child.wait().ok();
        }
    }

    /// The last lines of perf's log, formatted to end an error message.
    pub fn log_tail(&self) -> String {
        let text = fs::read_to_string(self.log_path()).unwrap_or_default();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(8)..].join(" | ");
        if tail.is_empty() {
            String::new()
        } else {
            format!("; perf said: {tail}")
        }
    }
}

impl Drop for Controlled {
    fn drop(&mut self) {
        self.kill();
        remove_fifos(&self.dir, &self.tool);
    }
}

fn remove_fifos(dir: &Path, tool: &Tool) {
    for name in [tool.ctl, tool.ack] {
        let _ = fs::remove_file(dir.join(name));
    }
}

/// Creates a fresh fifo at `path` and opens it read-write (which never blocks).
fn open_fifo(path: &Path) -> Result<File, PerfError> {
    match fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(PerfError::io(format!("remove the stale {}", path.display()), e)),
    }
    sys::make_fifo(path, 0o600)
        .map_err(|e| PerfError::io(format!("create the fifo {}", path.display()), e))?;
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| PerfError::io(format!("open {}", path.display()), e))
}

/// Removes the first acknowledgement from `pending`; false if there is none yet.
fn take_ack(pending: &mut Vec<u8>) -> bool {
    pending.retain(|&b| b != 0);
    match pending.windows(ACK.len()).position(|w| w == ACK) {
        Some(at) => {
            pending.drain(..at + ACK.len());
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOL: Tool = Tool { name: "perf test", ctl: "t.ctl", ack: "t.ack", log: "t.log" };

    #[test]
    fn acks_are_matched_one_at_a_time() {
        let mut p = b"ack\n\0ac".to_vec();
        assert!(take_ack(&mut p));
        assert!(!take_ack(&mut p));
        p.extend_from_slice(b"k\n\0");
        assert!(take_ack(&mut p));
        assert!(p.is_empty());
    }

    #[test]
    fn start_fails_clearly_when_perf_exits_early() {
        let dir = tempfile::tempdir().unwrap();
        // `false` exits at once, as a perf without --control support would.
        let err =
            Controlled::start(Path::new("/bin/false"), dir.path(), TOOL, vec![]).err().unwrap().to_string();
        assert!(err.contains("perf test did not start") && err.contains("exited"), "{err}");
        assert!(!dir.path().join(TOOL.ctl).exists(), "fifos are cleaned up");
        let err = Controlled::start(Path::new("/nonexistent/perf"), dir.path(), TOOL, vec![])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("cannot start /nonexistent/perf"), "{err}");
        assert!(!dir.path().join(TOOL.ack).exists(), "fifos are cleaned up");
    }

    #[test]
    fn control_argument_names_both_fifos() {
        let arg = control_arg(Path::new("/w"), &TOOL);
        assert_eq!(arg.to_string_lossy(), "fifo:/w/t.ctl,/w/t.ack");
    }
}
