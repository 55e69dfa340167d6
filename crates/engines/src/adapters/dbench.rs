//! The `dbench` adapter: runs the real dbench 4.0 and stores its results like ours. The
//! measured window opens at dbench's first "execute" line and closes at its "cleanup" line;
//! the CPU of dbench's process tree is read from /proc at those two moments
//! (`crate::support::proc_tree`).

use crate::info::{shortcuts, EngineInfo, Tool};
use crate::support::proc_tree::tree_cpu;
use crate::{
    AreaRule, Caps, CellContext, Control, Engine, EngineError, Figure, OptKind, OptionSpec, Recorder,
    SummaryArea, Workload,
};
use racehorse_core::{CpuMethod, WorkUnit, WorkloadCpu};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

pub struct Dbench;

const DEFAULT_LOADFILE: &str = "/usr/share/dbench/client.txt";

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "clients",
        kind: OptKind::Int { min: 1, max: 4096 },
        default: "1",
        help: "number of dbench clients (its N argument)",
    },
    OptionSpec {
        name: "loadfile",
        kind: OptKind::Str,
        default: DEFAULT_LOADFILE,
        help: "dbench loadfile (-c)",
    },
];

/// The program this engine runs (checked before the run by `crate::ready`).
const TOOL: Tool = Tool {
    program: "dbench",
    hint: "install it (Debian/Ubuntu: apt-get install dbench) or use the built-in 'fileserver'",
};

/// Finds `dbench` on PATH.
fn dbench_path() -> Option<PathBuf> {
    crate::support::path::find_file("dbench")
}

/// dbench's own figures, per operation of its loadfile (`ReadX.count` …).
const FIGURES: &[Figure] = &[
    Figure::info("dbench_throughput_mb_s", "dbench's own throughput", "MB/s"),
    Figure::info("*.count", "* operations", "count"),
    Figure::info("*.avg_lat_ms", "* mean latency", "ms"),
    Figure::info("*.max_lat_ms", "* longest latency", "ms"),
];

/// What `Dbench` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "dbench",
    about: "the real dbench 4.0 (Debian package), stored like fileserver: MB/s and CPU per MB",
    area: "File server",
    summary_area: AreaRule::Fixed(SummaryArea::ScalingCpuAndProcesses),
    unit: WorkUnit::Bytes,
    caps: Caps { needs_disk: true, external_tool: Some(TOOL), ..Caps::NONE },
    options: OPTIONS,
    figures: FIGURES,
    shortcuts: &[shortcuts::CLIENTS],
};

impl Engine for Dbench {
    fn info(&self) -> &'static EngineInfo {
        &INFO
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        dbench_path().ok_or_else(|| TOOL.missing())?;
        let loadfile = PathBuf::from(ctx.get_str("loadfile")?);
        if !loadfile.is_file() {
            return Err(EngineError::Usage(format!("loadfile {} does not exist", loadfile.display())));
        }
        Ok(Box::new(DbenchCell {
            clients: ctx.get_u64("clients")?,
            loadfile,
            dir: ctx.work_dir.clone(),
            env: ctx.env.clone(),
        }))
    }
}

struct DbenchCell {
    clients: u64,
    loadfile: PathBuf,
    dir: PathBuf,
    env: std::collections::BTreeMap<String, String>,
}

/// What dbench printed that we keep.
#[derive(Debug, Default, PartialEq)]
struct DbenchReport {
    throughput_mb_s: Option<f64>,
    /// (op, count, avg ms, max ms)
    ops: Vec<(String, u64, f64, f64)>,
}

/// Classifies one line of dbench output.
#[derive(Debug, PartialEq)]
enum Line {
    Execute,
    Cleanup,
    Other,
}

fn classify(line: &str) -> Line {
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.len() >= 5 && words.contains(&"execute") && words.contains(&"MB/sec") {
        Line::Execute
    } else if words.get(1) == Some(&"cleanup") {
        Line::Cleanup
    } else {
        Line::Other
    }
}

fn parse_report(lines: &[String]) -> DbenchReport {
    let mut r = DbenchReport::default();
    for l in lines {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.first() == Some(&"Throughput") {
            r.throughput_mb_s = w.get(1).and_then(|v| v.parse().ok());
        } else if w.len() == 4 && w[0].chars().all(|c| c.is_ascii_alphabetic()) {
            if let (Ok(c), Ok(a), Ok(m)) = (w[1].parse(), w[2].parse(), w[3].parse()) {
                r.ops.push((w[0].to_string(), c, a, m));
            }
        }
    }
    r
}

fn spawn(cell: &DbenchCell, runtime_s: u64) -> Result<(Child, Receiver<String>), EngineError> {
    let exe = dbench_path().ok_or_else(|| TOOL.missing())?;
    let mut child = Command::new(exe)
        .arg("-c")
        .arg(&cell.loadfile)
        .arg("-D")
        .arg(&cell.dir)
        .arg("-t")
        .arg(runtime_s.to_string())
        .arg(cell.clients.to_string())
        .envs(&cell.env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| EngineError::io("cannot start dbench", Path::new("dbench"), e))?;
    let out = child.stdout.take().ok_or_else(|| EngineError::Failed("dbench has no stdout".into()))?;
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Ok((child, rx))
}

fn kill(child: &mut Child) {
    // SAFETY: kill(2) on our own child's pid; SIGINT lets dbench clean up its clients.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(2) {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

impl Workload for DbenchCell {
    fn run(&mut self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        let runtime_s = ctl.runtime.as_secs().max(2);
        let (mut child, rx) = spawn(self, runtime_s)?;
        let pid = child.id() as i32;
        let deadline = Instant::now() + Duration::from_secs(runtime_s * 3 + 60);
        let (mut lines, mut cpu0, mut cpu1) = (Vec::new(), None, None);
        loop {
            if ctl.aborted() || Instant::now() > deadline {
                kill(&mut child);
                ctl.stop();
                return Err(if ctl.aborted() {
                    EngineError::Interrupted
                } else {
                    EngineError::Failed("dbench did not finish in time".into())
                });
            }
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(line) => {
                    match classify(&line) {
                        Line::Execute if cpu0.is_none() => {
                            cpu0 = Some(tree_cpu(pid));
                            ctl.begin_measure();
                        }
                        Line::Cleanup if cpu0.is_some() && cpu1.is_none() => {
                            ctl.end_measure();
                            cpu1 = Some(tree_cpu(pid));
                        }
                        _ => {}
                    }
                    lines.push(line);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        let status = child.wait().map_err(|e| EngineError::io("waiting for dbench", &self.dir, e))?;
        let report = parse_report(&lines);
        let (Some(c0), Some(c1), Some(mb_s)) = (cpu0, cpu1, report.throughput_mb_s) else {
            ctl.stop();
            let tail = lines.iter().rev().take(5).rev().cloned().collect::<Vec<_>>().join(" | ");
            return Err(EngineError::Failed(format!(
                "dbench exited with {status} without a result; last output: {}",
                crate::bounded_output(&tail)
            )));
        };
        let window_s = ctl.window().map(|w| w.as_secs_f64()).unwrap_or(0.0);
        let cpu = c1.since(c0);
        let units = mb_s * 1e6 * window_s;
        let total_ops: u64 = report.ops.iter().map(|o| o.1).sum();
        let scale = window_s / runtime_s as f64;
        rec.submit(crate::WorkerStats {
            units,
            ops: (total_ops as f64 * scale) as u64,
            ..Default::default()
        });
        rec.set_workload_cpu(WorkloadCpu {
            user_s: cpu.user_s,
            kernel_s: cpu.kernel_s,
            method: CpuMethod::Children,
        });
        rec.set_extra("dbench_throughput_mb_s", mb_s);
        for (op, count, avg, max) in &report.ops {
            rec.set_extra(&format!("{op}.count"), *count as f64);
            rec.set_extra(&format!("{op}.avg_lat_ms"), *avg);
            rec.set_extra(&format!("{op}.max_lat_ms"), *max);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "\
Running for 5 seconds with load '/usr/share/dbench/client.txt' and minimum warmup 1 secs
releasing clients
   2    100316   570.31 MB/sec  execute   1 sec  latency 146.312 ms
   2    254005   556.79 MB/sec  execute   4 sec  latency 4.871 ms
   2  cleanup   5 sec
   0  cleanup   5 sec

 Operation      Count    AvgLat    MaxLat
 ----------------------------------------
 NTCreateX      89445     0.019     4.738
 ReadX         140031     0.003     2.360

Throughput 556.794 MB/sec  2 clients  2 procs  max_latency=146.312 ms";

    #[test]
    fn classifies_window_edges() {
        let kinds: Vec<Line> = OUTPUT.lines().map(classify).collect();
        assert_eq!(kinds[2], Line::Execute);
        assert_eq!(kinds[4], Line::Cleanup);
        assert_eq!(kinds.iter().filter(|k| **k == Line::Execute).count(), 2);
        assert_eq!(classify("   2    1000   5.00 MB/sec  warmup   1 sec  latency 1 ms"), Line::Other);
    }

    #[test]
    fn parses_throughput_and_ops() {
        let lines: Vec<String> = OUTPUT.lines().map(String::from).collect();
        let r = parse_report(&lines);
        assert_eq!(r.throughput_mb_s, Some(556.794));
        assert_eq!(r.ops.len(), 2);
        assert_eq!(r.ops[1], ("ReadX".to_string(), 140031, 0.003, 2.360));
    }
}
