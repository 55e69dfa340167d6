//! Running JMH's host JVM and following its human-readable progress on stdout, as it comes,
//! to find the measured window: the measurement iterations of the last fork.
//!
//! JMH prints `# Fork: K of N` before it starts fork K; for each iteration, the forked VM
//! tells the host VM when it starts it (the host prints the label `Iteration   I: ` at once,
//! without a newline) and sends its result when it ends (the host completes the line). So in
//! the last fork the window opens when the label of measurement iteration 1 arrives and closes
//! when the line of the last measurement iteration is complete: both edges come the same way
//! (forked VM → host VM → pipe), so a delay on that path shifts both alike. Where the label
//! never came on its own (a stdout that is not flushed), the complete line of iteration 1
//! opens the window, late.

use crate::support::proc_tree::kill_tree;
use crate::{Control, EngineError};
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A window edge found in JMH's progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Edge {
    Open,
    Close,
}

/// Where JMH's run is, from its progress lines.
#[derive(Debug, Clone, Default)]
pub(super) struct Progress {
    forks: u32,
    iterations: u32,
    /// The fork under way (1-based), 0 before the first.
    fork: u32,
    opened: bool,
    closed: bool,
}

/// The number after `prefix` up to the next ':' (`Iteration   3: …` → 3).
fn numbered(line: &str, prefix: &str) -> Option<u32> {
    let rest = line.strip_prefix(prefix)?;
    rest.split_once(':')?.0.trim().parse().ok()
}

impl Progress {
    pub fn new(forks: u32, iterations: u32) -> Self {
        Progress { forks, iterations, ..Progress::default() }
    }

    fn in_last_fork(&self) -> bool {
        self.fork == self.forks
    }

    /// The edge that an incomplete line (what JMH printed so far) marks, if any.
    pub fn on_partial(&mut self, text: &str) -> Option<Edge> {
        if self.in_last_fork() && !self.opened && numbered(text, "Iteration") == Some(1) {
            self.opened = true;
            return Some(Edge::Open);
        }
        None
    }

    /// The edges this complete line of JMH's stdout marks (each edge comes once).
    pub fn on_line(&mut self, line: &str) -> Vec<Edge> {
        let mut edges = Vec::new();
        if let Some(rest) = line.strip_prefix("# Fork:") {
            self.fork = rest.split_whitespace().next().and_then(|k| k.parse().ok()).unwrap_or(0);
            return edges;
        }
        let Some(i) = numbered(line, "Iteration").filter(|_| self.in_last_fork()) else { return edges };
        if !self.opened && i == 1 {
            self.opened = true;
            edges.push(Edge::Open);
        }
        if self.opened && !self.closed && i == self.iterations {
            self.closed = true;
            edges.push(Edge::Close);
        }
        edges
    }
}

/// What the reader of JMH's stdout passes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Out {
    /// A complete line, without its newline.
    Line(String),
    /// The start of a line that is not complete yet (sent again as it grows).
    Partial(String),
}

/// Reads `out` to its end, sending complete lines and the growing incomplete one; returns
/// everything it read.
pub(super) fn read_stdout(mut out: impl Read, tx: Sender<Out>) -> String {
    let (mut all, mut pending, mut buf) = (Vec::new(), Vec::new(), [0u8; 8192]);
    loop {
        let n = match out.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        all.extend_from_slice(&buf[..n]);
        pending.extend_from_slice(&buf[..n]);
        while let Some(i) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=i).collect();
            let text = String::from_utf8_lossy(&line[..i]).trim_end_matches('\r').to_string();
            let _ = tx.send(Out::Line(text));
        }
        if !pending.is_empty() {
            let _ = tx.send(Out::Partial(String::from_utf8_lossy(&pending).into_owned()));
        }
    }
    if !pending.is_empty() {
        let _ = tx.send(Out::Line(String::from_utf8_lossy(&pending).into_owned()));
    }
    String::from_utf8_lossy(&all).into_owned()
}

/// JMH's host JVM, started with its stdout read line by line on a thread of its own (and
/// its stderr drained on another, so that neither pipe ever fills).
pub(super) struct JmhRun {
    child: Child,
    pid: i32,
    lines: Receiver<Out>,
    stdout: Option<JoinHandle<String>>,
    stderr: Option<JoinHandle<String>>,
    done: bool,
}

impl JmhRun {
    pub fn spawn(
        java: &Path,
        args: &[String],
        cwd: &Path,
        env: &std::collections::BTreeMap<String, String>,
    ) -> Result<JmhRun, EngineError> {
        let mut child = Command::new(java)
            .args(args)
            .current_dir(cwd)
            .envs(env)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| EngineError::io("cannot start java", java, e))?;
        let pid = i32::try_from(child.id())
            .map_err(|_| EngineError::Failed("java's pid is out of range".into()))?;
        let out = child.stdout.take().ok_or_else(|| EngineError::Failed("java has no stdout".into()))?;
        let mut err = child.stderr.take().ok_or_else(|| EngineError::Failed("java has no stderr".into()))?;
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        let (tx, lines) = channel();
        let stdout = std::thread::spawn(move || read_stdout(out, tx));
        Ok(JmhRun { child, pid, lines, stdout: Some(stdout), stderr: Some(stderr), done: false })
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The next piece of stdout; None once JMH closed it. An abort or `deadline` kills JMH
    /// (its forked VMs too) and is an error.
    pub fn next_out(&mut self, ctl: &Control, deadline: Instant) -> Result<Option<Out>, EngineError> {
        loop {
            if ctl.aborted() {
                self.kill();
                return Err(EngineError::Interrupted);
            }
            if Instant::now() > deadline {
                self.kill();
                return Err(EngineError::Failed("JMH did not finish in three times its planned time".into()));
            }
            match self.lines.recv_timeout(Duration::from_millis(50)) {
                Ok(out) => return Ok(Some(out)),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Ok(None),
            }
        }
    }

    /// Waits for JMH's exit: whether it succeeded, and its whole stdout and stderr.
    pub fn finish(&mut self) -> Result<(bool, String, String), EngineError> {
        let status = self.child.wait().map_err(|e| EngineError::io("waiting for java", "java", e))?;
        self.done = true;
        let join = |h: Option<JoinHandle<String>>| h.and_then(|h| h.join().ok()).unwrap_or_default();
        Ok((status.success(), join(self.stdout.take()), join(self.stderr.take())))
    }

    /// SIGKILLs the host VM and the forked VMs it started, and reaps the host.
    pub fn kill(&mut self) {
        if self.done {
            return;
        }
        kill_tree(self.pid);
        let _ = self.child.wait();
        self.done = true;
    }
}

impl Drop for JmhRun {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The last lines of JMH's output, bounded, for error messages.
pub(super) fn tail(stdout: &str, stderr: &str) -> String {
    let lines: Vec<&str> =
        stdout.lines().chain(stderr.lines()).map(str::trim).filter(|l| !l.is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(6)..].join(" | ");
    if tail.is_empty() {
        "(JMH printed nothing)".into()
    } else {
        crate::bounded_output(&tail)
    }
}
