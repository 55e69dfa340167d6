//! The `iperf3` adapter: the streams of the `net` engine run by the real iperf3 (3.x), stored
//! in the same form (payload bytes in the stream's direction, CPU of both ends when the
//! server runs here, extras under the same names).
//!
//! For loopback the adapter starts `iperf3 -s -1` on a free port of 127.0.0.1 (or ::1) and
//! stops it afterwards; `peer = "HOST:PORT"` uses an `iperf3 -s` elsewhere. The client runs
//! with `-O` = the warmup (whole seconds), `-t` = the runtime and 0.1 s reports flushed as they
//! happen: the window opens at the first report that is not omitted (iperf3 resets its
//! counters when the omitted time is over; that report comes at most one 0.1 s interval
//! later) and closes at the first summary line (the test is over). Units are iperf3's own
//! summary rate (sender side for stream-write, receiver side for stream-read) times that
//! window, so racehorse's bytes/s is iperf3's figure; the rate is kept as `iperf3_bits_per_s`.
//!
//! The options (and reading them) are `net`'s, shared through `crate::support::net_options`.

use crate::info::{EngineInfo, Tool};
use crate::support::net_options::{config, Target, OPTIONS, PEER_SHORTCUT};
use crate::support::proc_tree::tree_cpu;
use crate::{
    AreaRule, Caps, CellContext, Control, Engine, EngineError, Figure, Recorder, SummaryArea, Workload,
};
use racehorse_core::{CpuMethod, WorkUnit, WorkloadCpu};
use racehorse_machine::rusage::CpuTime;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

pub struct Iperf3;

/// The program this engine runs (checked before the run by `crate::ready`).
const TOOL: Tool = Tool {
    program: "iperf3",
    hint: "install it (Debian/Ubuntu: apt-get install iperf3) or use the built-in 'net'",
};

fn iperf3_path() -> Option<PathBuf> {
    crate::support::path::find_file("iperf3")
}

/// One report line of iperf3's text output that matters here.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// An interval report: its end (seconds) and whether it was omitted (warm-up).
    Interval {
        end_s: f64,
        omitted: bool,
    },
    /// A summary line: the rate in bits/s and which end counted it.
    Summary {
        bits_per_s: f64,
        sender: bool,
    },
    Other,
}

/// Parses one line of `iperf3 -f k` output. Per-stream lines and `[SUM]` lines both parse;
/// the caller prefers `[SUM]` when there are several streams.
pub fn parse_line(line: &str) -> (bool, Line) {
    let sum = line.starts_with("[SUM]");
    let Some(rest) = line.find(']').map(|i| &line[i + 1..]) else { return (sum, Line::Other) };
    let words: Vec<&str> = rest.split_whitespace().collect();
    let Some(interval) = words.first().filter(|w| w.contains('-')) else { return (sum, Line::Other) };
    let Some(end_s) = interval.split('-').nth(1).and_then(|e| e.parse::<f64>().ok()) else {
        return (sum, Line::Other);
    };
    let Some(rate_at) = words.iter().position(|w| *w == "Kbits/sec") else { return (sum, Line::Other) };
    let Some(rate) = rate_at.checked_sub(1).and_then(|i| words[i].parse::<f64>().ok()) else {
        return (sum, Line::Other);
    };
    let last = words.last().copied().unwrap_or("");
    let line = match last {
        "sender" | "receiver" => Line::Summary { bits_per_s: rate * 1000.0, sender: last == "sender" },
        _ => Line::Interval { end_s, omitted: rest.contains("(omitted)") },
    };
    (sum, line)
}

/// iperf3's own rate, each end's CPU per MB and bytes/s each way.
const FIGURES: &[Figure] = &[
    Figure::info("n_mb", "MB moved", "MB"),
    Figure::info("iperf3_bits_per_s", "iperf3's own rate", "bits/s"),
    Figure::info("client_cpu_us_per_mb", "client CPU per MB", "µs"),
    Figure::info("peer_cpu_us_per_mb", "peer CPU per MB", "µs"),
    Figure::info("client_to_peer_bytes_per_s", "client to peer", "bytes/s"),
    Figure::info("peer_to_client_bytes_per_s", "peer to client", "bytes/s"),
];

/// What `Iperf3` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "iperf3",
    about: "the real iperf3 running net's streams (stream-write, stream-read): bytes/s and CPU per MB",
    area: "Network",
    summary_area: AreaRule::Fixed(SummaryArea::Networking),
    unit: WorkUnit::Bytes,
    caps: Caps { needs_peer: true, external_tool: Some(TOOL), ..Caps::NONE },
    options: OPTIONS,
    figures: FIGURES,
    shortcuts: &[PEER_SHORTCUT],
};

impl Engine for Iperf3 {
    fn info(&self) -> &'static EngineInfo {
        &INFO
    }
    fn validate(&self, ctx: &CellContext) -> Result<(), EngineError> {
        if ctx.get_str("mode")? == "rr" {
            return Err(EngineError::Usage(
                "iperf3 runs streams only: use mode=stream-write or stream-read (the built-in 'net' runs rr)"
                    .into(),
            ));
        }
        config(ctx).map(|_| ())
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        self.validate(ctx)?;
        let exe = iperf3_path().ok_or_else(|| TOOL.missing())?;
        let cfg = config(ctx)?;
        let reverse = ctx.get_str("mode")? == "stream-read";
        let message = ctx.get_u64("message")?;
        let s = &cfg.setup;
        let mut args = vec!["-f".to_string(), "k".into(), "-i".into(), "0.1".into(), "--forceflush".into()];
        args.extend(["-P".into(), s.connections.to_string(), "-l".into(), message.to_string()]);
        if reverse {
            args.push("-R".into());
        }
        if s.nodelay {
            args.push("-N".into());
        }
        // iperf3 has one window option for both buffers.
        let window = s.sndbuf_bytes.max(s.rcvbuf_bytes);
        if window > 0 {
            args.extend(["-w".into(), window.to_string()]);
        }
        let server = match &cfg.target {
            Target::Loopback { v6 } => Some(start_server(&exe, *v6, &ctx.env)?),
            Target::Remote { .. } => None,
        };
        let (host, port) = match (&cfg.target, &server) {
            (_, Some(srv)) => (srv.host.clone(), srv.port),
            (Target::Remote { addr, .. }, None) => (addr.ip().to_string(), addr.port()),
            _ => unreachable!("a loopback target always has a server"),
        };
        args.extend(["-c".into(), host, "-p".into(), port.to_string()]);
        Ok(Box::new(Iperf3Cell { exe, args, reverse, server, env: ctx.env.clone(), timeout: s.timeout }))
    }
}

/// An `iperf3 -s -1` this adapter started.
struct Server {
    child: Child,
    host: String,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts a one-off iperf3 server on a free loopback port and waits until it listens.
fn start_server(
    exe: &PathBuf,
    v6: bool,
    env: &std::collections::BTreeMap<String, String>,
) -> Result<Server, EngineError> {
    let host = if v6 { "::1" } else { "127.0.0.1" };
    let probe = std::net::TcpListener::bind((host, 0))
        .map_err(|e| EngineError::Failed(format!("iperf3: no free port on {host}: {e}")))?;
    let port = probe.local_addr().map_err(|e| EngineError::Failed(e.to_string()))?.port();
    drop(probe);
    let args = ["-s", "-1", "--forceflush", "-B", host, "-p", &port.to_string()];
    let mut child = Command::new(exe)
        .args(args)
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| EngineError::io("cannot start the iperf3 server", exe, e))?;
    let lines = read_lines(child.stdout.take());
    let server = Server { child, host: host.to_string(), port };
    let limit = Instant::now() + Duration::from_secs(5);
    loop {
        match lines.recv_timeout(limit.saturating_duration_since(Instant::now())) {
            Ok(l) if l.contains("Server listening") => return Ok(server),
            Ok(_) => {}
            Err(_) => {
                return Err(EngineError::Failed(format!(
                    "iperf3 -s did not start listening on {host}:{port}"
                )))
            }
        }
    }
}

/// A thread forwarding a pipe's lines (drained to its end so the writer never blocks).
fn read_lines(pipe: Option<impl std::io::Read + Send + 'static>) -> Receiver<String> {
    let (tx, rx) = channel();
    if let Some(p) = pipe {
        std::thread::spawn(move || {
            for line in BufReader::new(p).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
    }
    rx
}

struct Iperf3Cell {
    exe: PathBuf,
    args: Vec<String>,
    reverse: bool,
    server: Option<Server>,
    env: std::collections::BTreeMap<String, String>,
    timeout: Duration,
}

/// What the client's output said, and the CPU of both ends over the window.
struct Outcome {
    bits_per_s: f64,
    client: CpuTime,
    server: Option<CpuTime>,
    tail: Vec<String>,
}

impl Iperf3Cell {
    fn cpu(&self, client: i32) -> (CpuTime, Option<CpuTime>) {
        (tree_cpu(client), self.server.as_ref().map(|s| tree_cpu(s.child.id() as i32)))
    }

    fn run_client(&self, ctl: &Control) -> Result<Outcome, EngineError> {
        let omit_s = ctl.warmup.as_secs_f64().ceil() as u64;
        let time_s = ctl.runtime.as_secs_f64().ceil().max(1.0) as u64;
        let mut child = Command::new(&self.exe)
            .args(&self.args)
            .args(["-O", &omit_s.to_string(), "-t", &time_s.to_string()])
            .envs(&self.env)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| EngineError::io("cannot start iperf3", &self.exe, e))?;
        let lines = read_lines(child.stdout.take());
        let errors = read_lines(child.stderr.take());
        let pid = child.id() as i32;
        let res = self.follow(ctl, pid, omit_s as f64, &lines);
        if res.is_err() {
            let _ = child.kill();
        }
        let status = child.wait().map_err(|e| EngineError::io("waiting for iperf3", &self.exe, e))?;
        let mut out = res?;
        out.tail.extend(errors.try_iter());
        if !status.success() || out.bits_per_s <= 0.0 {
            return Err(EngineError::Failed(format!("iperf3 failed ({status}): {}", tail(&out.tail))));
        }
        Ok(out)
    }

    /// Reads the client's reports, opening and closing the window at the right lines.
    fn follow(
        &self,
        ctl: &Control,
        pid: i32,
        omit_s: f64,
        lines: &Receiver<String>,
    ) -> Result<Outcome, EngineError> {
        let limit = Instant::now() + ctl.warmup + ctl.runtime + self.timeout + Duration::from_secs(5);
        let (mut start, mut end) = (None, None);
        let mut out = Outcome { bits_per_s: 0.0, client: CpuTime::default(), server: None, tail: Vec::new() };
        let (mut best_sum, mut seen_streams) = (false, 0);
        loop {
            if ctl.aborted() {
                return Err(EngineError::Interrupted);
            }
            let line = match lines.recv_timeout(Duration::from_millis(50)) {
                Ok(l) => l,
                Err(RecvTimeoutError::Timeout) if Instant::now() < limit => continue,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(EngineError::Failed(format!("iperf3 did not finish: {}", tail(&out.tail))))
                }
                Err(RecvTimeoutError::Disconnected) => break,
            };
            let (sum, parsed) = parse_line(&line);
            let opens = match parsed {
                // iperf3 resets its counters when the omitted time is over; the first report
                // after that arrives within one 0.1 s interval of the reset.
                Line::Interval { omitted, .. } => !omitted,
                _ => false,
            };
            // Without an omitted warm-up the test starts as the streams connect.
            let connected = omit_s == 0.0 && line.contains(" connected to ");
            if start.is_none() && (connected || opens) {
                start = Some(self.cpu(pid));
                ctl.begin_measure();
            }
            if let Line::Summary { bits_per_s, sender } = parsed {
                if end.is_none() && start.is_some() {
                    ctl.end_measure();
                    end = Some(self.cpu(pid));
                }
                // Stream-read counts what the client received, stream-write what it sent.
                if sender != self.reverse && (sum || !best_sum) {
                    seen_streams += 1;
                    out.bits_per_s =
                        if sum || seen_streams == 1 { bits_per_s } else { out.bits_per_s + bits_per_s };
                    best_sum |= sum;
                }
            }
            out.tail.push(line);
            if out.tail.len() > 8 {
                out.tail.remove(0);
            }
        }
        match (start, end) {
            (Some((c0, s0)), Some((c1, s1))) => {
                out.client = c1.since(c0);
                out.server = s1.zip(s0).map(|(b, a)| b.since(a));
                Ok(out)
            }
            _ => {
                ctl.stop();
                Err(EngineError::Failed(format!("iperf3 ended before its test: {}", tail(&out.tail))))
            }
        }
    }
}

fn tail(lines: &[String]) -> String {
    let t: Vec<&str> = lines.iter().map(|l| l.trim()).filter(|l| !l.is_empty()).collect();
    if t.is_empty() {
        "(iperf3 printed nothing)".into()
    } else {
        crate::bounded_output(&t.join(" | "))
    }
}

impl Workload for Iperf3Cell {
    fn run(&mut self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        let out = self.run_client(ctl).inspect_err(|_| ctl.stop())?;
        let window_s = ctl.window().map(|w| w.0 as f64 / 1e9).unwrap_or(0.0);
        let bytes = (out.bits_per_s / 8.0 * window_s).round() as u64;
        let (read, written) = if self.reverse { (bytes, 0) } else { (0, bytes) };
        rec.submit(crate::WorkerStats {
            units: bytes as f64,
            bytes_read: read,
            bytes_written: written,
            ..Default::default()
        });
        let both = out.server.map(|s| CpuTime {
            user_s: out.client.user_s + s.user_s,
            kernel_s: out.client.kernel_s + s.kernel_s,
        });
        let total = both.unwrap_or(out.client);
        rec.set_workload_cpu(WorkloadCpu {
            user_s: total.user_s,
            kernel_s: total.kernel_s,
            method: CpuMethod::Children,
        });
        let mb = bytes as f64 / 1e6;
        rec.set_extra("n_mb", mb);
        rec.set_extra("iperf3_bits_per_s", out.bits_per_s);
        if mb > 0.0 {
            rec.set_extra("client_cpu_us_per_mb", out.client.total_s() * 1e6 / mb);
            if let Some(s) = out.server {
                rec.set_extra("peer_cpu_us_per_mb", s.total_s() * 1e6 / mb);
            }
        }
        if window_s > 0.0 {
            rec.set_extra("client_to_peer_bytes_per_s", written as f64 / window_s);
            rec.set_extra("peer_to_client_bytes_per_s", read as f64 / window_s);
        }
        Ok(())
    }

    fn cleanup(mut self: Box<Self>) -> Result<(), EngineError> {
        drop(self.server.take());
        Ok(())
    }
}

#[cfg(test)]
#[path = "iperf3_tests.rs"]
mod tests;
