//! The JVM of one cell: started with the cell's flags and the compiled program, spoken to
//! over its stdin and stdout (the protocol of `jsrc/RhJava.java`), its stderr kept for error
//! messages, and killed on every path that does not end with its own exit.

use super::protocol::Snapshot;
use crate::{Control, EngineError};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Bytes of the JVM's stderr kept (the end: the reason comes last).
const STDERR_KEEP: usize = 64 << 10;

pub struct Jvm {
    child: Child,
    pub pid: i32,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    stderr: Option<JoinHandle<String>>,
    /// Lines the JVM printed on stdout that are not the protocol's (its own warnings).
    pub other: Vec<String>,
    exited: bool,
}

impl Jvm {
    /// Starts `java args` in `dir` with `env` added.
    pub fn start(
        java: &Path,
        args: &[String],
        dir: &Path,
        env: &BTreeMap<String, String>,
    ) -> Result<Jvm, EngineError> {
        let mut child = Command::new(java)
            .args(args)
            .current_dir(dir)
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| EngineError::io("cannot start the JVM", java, e))?;
        let pid = child.id() as i32;
        let (out, mut err) = match (child.stdout.take(), child.stderr.take()) {
            (Some(o), Some(e)) => (o, e),
            _ => return Err(EngineError::Failed("java: the JVM's output pipes are missing".into())),
        };
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut kept: Vec<u8> = Vec::new();
            let mut buf = [0u8; 8192];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > 2 * STDERR_KEEP {
                    kept.drain(..kept.len() - STDERR_KEEP);
                }
            }
            String::from_utf8_lossy(&kept).into_owned()
        });
        let stdin = child.stdin.take();
        Ok(Jvm { child, pid, stdin, lines, stderr: Some(stderr), other: Vec::new(), exited: false })
    }

    /// Waits for the JVM's `RH READY` line; the milliseconds it took to build its data.
    pub fn ready(&mut self, ctl: &Control, limit: Duration) -> Result<u64, EngineError> {
        let got = self.until(ctl, "RH READY", limit, "starting")?;
        let line = got.last().map(String::as_str).unwrap_or("");
        Ok(line.split_whitespace().nth(3).and_then(|w| w.parse().ok()).unwrap_or(0))
    }

    /// Asks for a snapshot of the counters and reads it.
    pub fn snapshot(&mut self, ctl: &Control, limit: Duration) -> Result<Snapshot, EngineError> {
        self.send("SNAP")?;
        let got = self.until(ctl, "RH END", limit, "taking a snapshot")?;
        let from = got.iter().rposition(|l| l.starts_with("RH SNAP")).unwrap_or(0);
        Snapshot::parse(&got[from..]).map_err(|e| EngineError::Failed(format!("java: {e}")))
    }

    /// Stops the threads and waits for the self-check: its `RH CHECK OK` line, or the
    /// reason it failed as the error.
    pub fn stop(&mut self, ctl: &Control, limit: Duration) -> Result<String, EngineError> {
        self.send("STOP")?;
        let got = self.until(ctl, "RH CHECK OK", limit, "checking its totals")?;
        let status =
            self.child.wait().map_err(|e| EngineError::Failed(format!("java: waiting for the JVM: {e}")))?;
        self.exited = true;
        if !status.success() {
            return Err(EngineError::Failed(format!("java: the JVM exited with {status} after its check")));
        }
        Ok(got.last().cloned().unwrap_or_default())
    }

    fn send(&mut self, line: &str) -> Result<(), EngineError> {
        let sent = match self.stdin.as_mut() {
            Some(s) => s.write_all(format!("{line}\n").as_bytes()).and_then(|()| s.flush()),
            None => Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe)),
        };
        sent.map_err(|_| self.failure(&format!("before it was sent {line}"), None))
    }

    /// The protocol lines up to and including the first that starts with `want`.
    fn until(
        &mut self,
        ctl: &Control,
        want: &str,
        limit: Duration,
        what: &str,
    ) -> Result<Vec<String>, EngineError> {
        let start = Instant::now();
        let mut got = Vec::new();
        loop {
            if ctl.aborted() {
                self.kill();
                return Err(EngineError::Interrupted);
            }
            match self.lines.recv_timeout(Duration::from_millis(100)) {
                Ok(line) if line.starts_with("RH CHECK FAILED") => {
                    let why = line.trim_start_matches("RH CHECK FAILED").trim();
                    self.kill();
                    return Err(EngineError::Failed(format!("java: SELF-CHECK FAILED: {why}")));
                }
                Ok(line) if line.starts_with("RH FAILED") => return Err(self.failure(what, Some(&line))),
                Ok(line) if line.starts_with("RH ") => {
                    let last = line.starts_with(want);
                    got.push(line);
                    if last {
                        return Ok(got);
                    }
                }
                Ok(line) => self.other.push(line),
                Err(RecvTimeoutError::Disconnected) => return Err(self.failure(what, None)),
                Err(RecvTimeoutError::Timeout) if start.elapsed() > limit => {
                    self.kill();
                    return Err(EngineError::Failed(format!(
                        "java: the JVM did not finish {what} within {} s",
                        limit.as_secs()
                    )));
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// The error of a JVM that went away (or failed) while `what`: its exit status, the
    /// line it failed with, its stderr.
    fn failure(&mut self, what: &str, said: Option<&str>) -> EngineError {
        self.kill();
        let status = self.child.try_wait().ok().flatten().map(|s| s.to_string()).unwrap_or_default();
        let stderr = self.stderr.take().and_then(|h| h.join().ok()).unwrap_or_default();
        let mut msg = format!("java: the JVM failed while {what}");
        if !status.is_empty() {
            msg.push_str(&format!(" ({status})"));
        }
        for text in said.into_iter().chain(self.other.iter().map(String::as_str)).chain([stderr.trim()]) {
            if !text.trim().is_empty() {
                msg.push_str(&format!("\n{}", crate::bounded_output(text.trim())));
            }
        }
        EngineError::Failed(msg)
    }

    /// What the JVM printed besides the protocol (its warnings: unified logging's go to
    /// stdout, the VM's to stderr); the whole of it once the JVM has exited.
    pub fn said(&mut self) -> String {
        let mut text = self.other.join("\n");
        if self.exited {
            if let Some(err) = self.stderr.take().and_then(|h| h.join().ok()) {
                text.push('\n');
                text.push_str(err.trim());
            }
        }
        text.trim().to_string()
    }

    fn kill(&mut self) {
        if !self.exited {
            let _ = self.child.kill();
            let _ = self.child.wait();
            self.exited = true;
        }
    }
}

impl Drop for Jvm {
    fn drop(&mut self) {
        self.kill();
    }
}
