//! A system-wide `perf record` whose sampling is switched on and off through perf's control
//! fifo (`--control fifo:ctl,ack`), so that only the measured window is sampled.

use super::sys;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::io::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The sampling event: a software timer, available without hardware counters (VMs).
pub const EVENT: &str = "cpu-clock";

/// How long perf may take to set up (it synthesizes every running task's mappings first).
const START_TIMEOUT: Duration = Duration::from_secs(20);
/// How long an "enable"/"disable" may wait for perf's acknowledgement.
const ACK_TIMEOUT: Duration = Duration::from_secs(3);
/// How long perf may take to write its data file after SIGINT.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);
/// Granularity of the liveness checks while waiting for perf.
const POLL_SLICE: Duration = Duration::from_millis(20);
/// perf acknowledges each command with "ack\n" (followed by a NUL byte, which is skipped).
const ACK: &[u8] = b"ack\n";

/// File names inside the recording directory.
pub const DATA_FILE: &str = "perf.data";
pub const LOG_FILE: &str = "perf.log";
const CTL_FIFO: &str = "perf.ctl";
const ACK_FIFO: &str = "perf.ack";

/// A system-wide perf recording started before the warm-up with its events disabled, switched
/// on and off exactly at the measured window's edges. Dropping it kills and reaps perf.
pub struct Recording {
    child: Child,
    /// Set once perf has exited and been reaped.
    status: Option<ExitStatus>,
    ctl: File,
    ack: File,
    /// Bytes read from the ack fifo not yet matched to a command.
    pending: Vec<u8>,
    dir: PathBuf,
}

impl Recording {
    /// Starts `perf record -a -e cpu-clock -F <freq_hz> -D -1 --control fifo:<ctl>,<ack>
    /// -o <dir>/perf.data` with its output in `<dir>/perf.log`, and waits until perf answers
    /// on the control fifo. Sampling stays off until [`Recording::enable`].
    pub fn start(perf: &Path, dir: &Path, freq_hz: u32) -> Result<Recording, String> {
        if freq_hz == 0 {
            return Err("the sampling frequency must be at least 1 Hz".to_string());
        }
        fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let ctl = open_fifo(&dir.join(CTL_FIFO))?;
        let ack = open_fifo(&dir.join(ACK_FIFO))?;
        let log_path = dir.join(LOG_FILE);
        let log =
            File::create(&log_path).map_err(|e| format!("cannot create {}: {e}", log_path.display()))?;
        let log2 = log.try_clone().map_err(|e| format!("cannot duplicate the log handle: {e}"))?;
        let mut cmd = Command::new(perf);
        // SAFETY: the hook only calls prctl, which is async-signal-safe.
        unsafe { cmd.pre_exec(sys::die_with_parent) };
        let child = cmd
            .args(record_args(dir, freq_hz))
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            // Own process group: a Ctrl-C on the terminal must not stop the recording early.
            .process_group(0)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", perf.display()))?;
        let mut rec =
            Recording { child, status: None, ctl, ack, pending: Vec::new(), dir: dir.to_path_buf() };
        // Events are already off (-D -1); the answer to "disable" shows perf is ready.
        rec.command("disable", START_TIMEOUT).map_err(|e| format!("perf record did not start: {e}"))?;
        Ok(rec)
    }

    /// Turns sampling on; call it at the measured window's start.
    pub fn enable(&mut self) -> Result<(), String> {
        self.command("enable", ACK_TIMEOUT)
    }

    /// Turns sampling off; call it at the measured window's end.
    pub fn disable(&mut self) -> Result<(), String> {
        self.command("disable", ACK_TIMEOUT)
    }

    /// perf's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The path of perf's output log.
    pub fn log_path(&self) -> PathBuf {
        self.dir.join(LOG_FILE)
    }

    /// Stops perf (SIGINT; SIGKILL if it has not finished within 30 s) and returns the path of
    /// the data file it wrote (typically within 0.1 s).
    pub fn finish(mut self) -> Result<PathBuf, String> {
        if let Some(status) = self.poll_exit() {
            return Err(format!("perf record exited early ({status}){}", self.log_tail()));
        }
        sys::signal(self.pid(), sys::SIGINT).map_err(|e| format!("cannot interrupt perf record: {e}"))?;
        let deadline = Instant::now() + STOP_TIMEOUT;
        let status = loop {
            if let Some(status) = self.poll_exit() {
                break status;
            }
            if Instant::now() >= deadline {
                self.kill();
                return Err(format!(
                    "perf record did not stop within {} s of SIGINT and was killed{}",
                    STOP_TIMEOUT.as_secs(),
                    self.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        // perf re-raises SIGINT after writing the file, so that is its normal way to end.
        if !(status.success() || status.signal() == Some(sys::SIGINT) || status.code() == Some(130)) {
            return Err(format!("perf record failed ({status}){}", self.log_tail()));
        }
        let data = self.dir.join(DATA_FILE);
        match fs::metadata(&data) {
            Ok(m) if m.len() > 0 => Ok(data),
            _ => Err(format!("perf record wrote no {}{}", data.display(), self.log_tail())),
        }
    }

    /// Sends one control command and waits for perf's acknowledgement.
    fn command(&mut self, cmd: &str, timeout: Duration) -> Result<(), String> {
        let started = Instant::now();
        if let Some(status) = self.poll_exit() {
            return Err(format!("perf record has exited ({status}){}", self.log_tail()));
        }
        self.ctl
            .write_all(format!("{cmd}\n").as_bytes())
            .map_err(|e| format!("cannot write '{cmd}' to perf's control fifo: {e}"))?;
        loop {
            if take_ack(&mut self.pending) {
                return Ok(());
            }
            if let Some(status) = self.poll_exit() {
                return Err(format!(
                    "perf record exited ({status}) before acknowledging '{cmd}'{}",
                    self.log_tail()
                ));
            }
            let left = timeout.saturating_sub(started.elapsed());
            if left.is_zero() {
                return Err(format!(
                    "perf record did not acknowledge '{cmd}' within {:.1} s{}",
                    timeout.as_secs_f64(),
                    self.log_tail()
                ));
            }
            let readable = sys::wait_readable(self.ack.as_raw_fd(), left.min(POLL_SLICE))
                .map_err(|e| format!("cannot wait for perf's acknowledgement: {e}"))?;
            if readable {
                let mut buf = [0u8; 256];
                let n = self
                    .ack
                    .read(&mut buf)
                    .map_err(|e| format!("cannot read perf's acknowledgement: {e}"))?;
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
    fn log_tail(&self) -> String {
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

impl Drop for Recording {
    fn drop(&mut self) {
        self.kill();
        for name in [CTL_FIFO, ACK_FIFO] {
            let _ = fs::remove_file(self.dir.join(name));
        }
    }
}

/// The arguments of `perf record` for a recording in `dir`.
pub fn record_args(dir: &Path, freq_hz: u32) -> Vec<OsString> {
    let mut control = OsString::from("fifo:");
    control.push(dir.join(CTL_FIFO));
    control.push(",");
    control.push(dir.join(ACK_FIFO));
    let mut args: Vec<OsString> = ["record", "-a", "-e", EVENT, "-F"].map(OsString::from).to_vec();
    args.push(freq_hz.to_string().into());
    // -D -1: start with events disabled; -N: do not copy binaries into ~/.debug;
    // --no-bpf-event: no side-band thread, whose 1 s poll would delay every stop by ~0.9 s
    // (the price: samples in BPF programs stay unresolved addresses).
    args.extend(["-D", "-1", "-N", "--no-bpf-event", "--control"].map(OsString::from));
    args.push(control);
    args.push("-o".into());
    args.push(dir.join(DATA_FILE).into());
    args
}

/// Creates a fresh fifo at `path` and opens it read-write (which never blocks).
fn open_fifo(path: &Path) -> Result<File, String> {
    match fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot remove the stale {}: {e}", path.display())),
    }
    sys::make_fifo(path, 0o600).map_err(|e| format!("cannot create the fifo {}: {e}", path.display()))?;
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))
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
    fn record_command_line() {
        let args = record_args(Path::new("/w/cell"), 999);
        let args: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(
            args.join(" "),
            "record -a -e cpu-clock -F 999 -D -1 -N --no-bpf-event --control fifo:/w/cell/perf.ctl,/w/cell/perf.ack \
             -o /w/cell/perf.data"
        );
    }

    #[test]
    fn start_fails_clearly_when_perf_exits_early() {
        let dir = tempfile::tempdir().unwrap();
        // `false` exits at once, as a perf without --control support would.
        let err = Recording::start(Path::new("/bin/false"), dir.path(), 999).err().unwrap();
        assert!(err.contains("exited"), "{err}");
        assert!(!dir.path().join(CTL_FIFO).exists(), "fifos are cleaned up");
    }

    #[test]
    fn start_reports_perf_output() {
        let dir = tempfile::tempdir().unwrap();
        // `ls record -a -e ...` rejects `-e` on stderr and exits, standing in for a perf that
        // rejects an option; its words must reach the error.
        let err = Recording::start(Path::new("/bin/ls"), &dir.path().join("rec"), 999).err().unwrap();
        assert!(err.contains("perf said: /bin/ls: invalid option"), "{err}");
        assert!(Recording::start(Path::new("/bin/ls"), dir.path(), 0).is_err());
    }
}
