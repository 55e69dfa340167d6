//! The `sysbench` adapter: the real sysbench 1.0 (Debian package) running `oltp_read_write` or
//! `oltp_read_only` with the `oltp` engine's options against the same PostgreSQL (a DSN, or a
//! throw-away cluster with `pg=auto`); its report is stored in our form.
//!
//! `prepare` runs `sysbench … prepare` (sysbench's own tables). The measured run is
//! `--time=warmup+runtime --report-checkpoints=warmup`: sysbench resets its counters at the
//! checkpoint, so its final report covers exactly the window, which opens when sysbench
//! prints the checkpoint and closes when it exits. Units are sysbench's transactions; its
//! tps, qps, query counts, errors and latencies are kept as extras. The workload CPU is that
//! of the sysbench process; the server's is measured as in `oltp`.
//!
//! The options, the checked settings and the target are `oltp`'s, shared through
//! `crate::support::oltp_options`.

use crate::info::{shortcuts, EngineInfo, Tool};
use crate::support::oltp_options::{open_target, setup, Dist, Setup, Target, OPTIONS};
use crate::support::path;
use crate::support::proc_tree::tree_cpu;
use crate::{
    AreaRule, Caps, CellContext, Control, Engine, EngineError, Figure, Recorder, SummaryArea, Workload,
};
use racehorse_core::{CpuMethod, WorkUnit, WorkloadCpu};
use racehorse_pg::PgConfig;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub struct Sysbench;

/// The program this engine runs (checked before the run by `crate::ready`).
const TOOL: Tool = Tool {
    program: "sysbench",
    hint: "install it (Debian/Ubuntu: apt-get install sysbench) or use the built-in 'oltp' engine",
};

fn sysbench_path() -> Option<PathBuf> {
    path::find_file("sysbench")
}

/// sysbench's report, the figures we keep.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub reads: u64,
    pub writes: u64,
    pub other: u64,
    pub queries: u64,
    pub transactions: u64,
    pub tps: f64,
    pub qps: f64,
    pub ignored_errors: u64,
    pub reconnects: u64,
    pub total_time_s: f64,
    pub lat_min_ms: f64,
    pub lat_avg_ms: f64,
    pub lat_max_ms: f64,
    /// (percentile, ms)
    pub lat_pct_ms: Option<(u32, f64)>,
}

/// The number after `key:` on a line, and the "(X per sec.)" rate if any.
fn value_of(line: &str, key: &str) -> Option<(f64, Option<f64>)> {
    let rest = line.trim().strip_prefix(key)?.trim_start().strip_prefix(':')?.trim();
    let mut parts = rest.split_whitespace();
    let v: f64 = parts.next()?.trim_end_matches('s').parse().ok()?;
    let rate = rest.split_once('(').and_then(|(_, r)| r.split_whitespace().next()?.parse().ok());
    Some((v, rate))
}

/// Parses the last "SQL statistics" block of sysbench's output (the one after a checkpoint).
pub fn parse_report(text: &str) -> Result<Report, String> {
    let start = text.rfind("SQL statistics:").ok_or("sysbench printed no 'SQL statistics' report")?;
    let mut r = Report::default();
    let mut seen_tx = false;
    for line in text[start..].lines() {
        let l = line.trim();
        let num = |k: &str| value_of(l, k);
        if let Some((v, _)) = num("read") {
            r.reads = v as u64;
        } else if let Some((v, _)) = num("write") {
            r.writes = v as u64;
        } else if let Some((v, _)) = num("other") {
            r.other = v as u64;
        } else if let Some((v, rate)) = num("transactions") {
            (r.transactions, r.tps, seen_tx) = (v as u64, rate.unwrap_or(0.0), true);
        } else if let Some((v, rate)) = num("queries") {
            (r.queries, r.qps) = (v as u64, rate.unwrap_or(0.0));
        } else if let Some((v, _)) = num("ignored errors") {
            r.ignored_errors = v as u64;
        } else if let Some((v, _)) = num("reconnects") {
            r.reconnects = v as u64;
        } else if let Some((v, _)) = num("total time") {
            r.total_time_s = v;
        } else if let Some((v, _)) = num("min") {
            r.lat_min_ms = v;
        } else if let Some((v, _)) = num("avg") {
            r.lat_avg_ms = v;
        } else if let Some((v, _)) = num("max") {
            r.lat_max_ms = v;
        } else if let Some((p, rest)) = l.split_once("th percentile") {
            let pct = p
                .trim()
                .parse()
                .map_err(|_| format!("bad percentile line '{}'", crate::bounded_output(l)))?;
            let ms = rest
                .trim_start_matches(':')
                .trim()
                .parse()
                .map_err(|_| format!("bad percentile line '{}'", crate::bounded_output(l)))?;
            r.lat_pct_ms = Some((pct, ms));
        }
    }
    if !seen_tx || r.total_time_s <= 0.0 {
        return Err("sysbench's report has no transactions or total time".into());
    }
    Ok(r)
}

/// The common arguments: test, driver, connection and the mix options.
fn base_args(s: &Setup, cfg: &PgConfig) -> Vec<String> {
    let m = &s.mix;
    let test = if m.read_only { "oltp_read_only" } else { "oltp_read_write" };
    let dist = if m.dist == Dist::Uniform { "uniform" } else { "special" };
    vec![
        test.to_string(),
        "--db-driver=pgsql".into(),
        format!("--pgsql-host={}", cfg.host),
        format!("--pgsql-port={}", cfg.port),
        format!("--pgsql-user={}", cfg.user),
        format!("--pgsql-password={}", cfg.password.clone().unwrap_or_default()),
        format!("--pgsql-db={}", cfg.dbname),
        format!("--tables={}", m.tables),
        format!("--table-size={}", m.table_size),
        format!("--point_selects={}", m.point_selects),
        format!("--range_size={}", m.range_size),
        format!("--rand-type={dist}"),
        format!("--rand-seed={}", s.seed.max(1)),
    ]
}

/// The DSN's TLS settings for sysbench's libpq, which has no options for them but reads the
/// environment (a socket directory as host needs nothing: libpq takes it from --pgsql-host).
fn libpq_env(cfg: &PgConfig) -> Vec<(&'static str, String)> {
    let mut env = vec![("PGSSLMODE", cfg.sslmode.as_str().to_string())];
    if let Some(root) = &cfg.sslrootcert {
        env.push(("PGSSLROOTCERT", root.display().to_string()));
    }
    env
}

/// sysbench's own report and the client's and server's CPU.
const FIGURES: &[Figure] = &[
    Figure::info("reads", "read queries", "count"),
    Figure::info("writes", "write queries", "count"),
    Figure::info("other", "other queries", "count"),
    Figure::info("queries", "queries", "count"),
    Figure::info("errors", "ignored errors", "count"),
    Figure::info("reconnects", "reconnects", "count"),
    Figure::info("sysbench_tps", "sysbench's transactions per second", "tx/s"),
    Figure::info("sysbench_qps", "sysbench's queries per second", "queries/s"),
    Figure::info("sysbench_time_s", "sysbench's total time", "s"),
    Figure::info("lat_min_ms", "shortest latency", "ms"),
    Figure::info("lat_avg_ms", "mean latency", "ms"),
    Figure::info("lat_max_ms", "longest latency", "ms"),
    Figure::info("lat_p*_ms", "p* latency", "ms"),
    Figure::info("threads", "client threads", "threads"),
    Figure::info("n_transaction", "transactions", "count"),
    Figure::info("client_cpu_us_per_txn", "client CPU per transaction", "µs"),
    Figure::info("server_cpu_s", "server CPU", "cpu_s"),
    Figure::info("server_cpu_us_per_txn", "server CPU per transaction", "µs"),
];

/// What `Sysbench` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "sysbench",
    about:
        "the real sysbench 1.0 OLTP (pgsql driver) with oltp's options, against a DSN or a throw-away cluster",
    area: "Database",
    summary_area: AreaRule::Fixed(SummaryArea::DatabaseOltp),
    unit: WorkUnit::Transactions,
    caps: Caps { needs_disk: true, needs_peer: true, external_tool: Some(TOOL), ..Caps::NONE },
    options: OPTIONS,
    figures: FIGURES,
    shortcuts: &[shortcuts::THREADS, shortcuts::PG],
};

impl Engine for Sysbench {
    fn info(&self) -> &'static EngineInfo {
        &INFO
    }
    fn validate(&self, ctx: &CellContext) -> Result<(), EngineError> {
        let s = setup(ctx)?;
        if s.pg.is_none() {
            return Err(EngineError::Usage(
                "the sysbench adapter needs PostgreSQL: pass -o pg=auto or -o pg:=DSN (sysbench has no SQLite driver)".into(),
            ));
        }
        if s.pg.as_deref() == Some("auto") {
            racehorse_pg::bin_dir()?;
        }
        Ok(())
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        self.validate(ctx)?;
        let tool = sysbench_path().ok_or_else(|| TOOL.missing())?;
        let s = setup(ctx)?;
        let target = open_target(ctx, &s)?;
        let Target::Pg { config, .. } = &target else { unreachable!("validated: PostgreSQL") };
        let mut args = base_args(&s, config);
        args.push(format!("--threads={}", s.mix.tables.min(8)));
        args.push("prepare".into());
        let out = Command::new(&tool)
            .args(&args)
            .envs(libpq_env(config))
            .stdin(Stdio::null())
            .output()
            .map_err(|e| EngineError::io("cannot run sysbench", &tool, e))?;
        if !out.status.success() {
            return Err(EngineError::Failed(format!(
                "sysbench prepare failed ({}): {}{}",
                out.status,
                crate::bounded_output(String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or("")),
                crate::bounded_output(String::from_utf8_lossy(&out.stderr).trim())
            )));
        }
        Ok(Box::new(SbCell { tool, setup: s, target: Some(target) }))
    }
}

struct SbCell {
    tool: PathBuf,
    setup: Setup,
    target: Option<Target>,
}

impl Workload for SbCell {
    fn run(&mut self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        let Some(Target::Pg { config, cluster }) = &self.target else {
            unreachable!("prepared with PostgreSQL")
        };
        let server = cluster.as_ref().and_then(|c| c.postmaster_pid());
        let warm_s = ctl.warmup.as_secs_f64().ceil() as u64;
        let run_s = ctl.runtime.as_secs_f64().ceil().max(1.0) as u64;
        let mut running = self.spawn(&self.run_args(config, warm_s, run_s), &libpq_env(config))?;
        let opener = if warm_s > 0 { "Checkpoint report" } else { "Threads started" };
        let limit = Duration::from_secs(warm_s + run_s + 60);
        let edges = running.follow(ctl, opener, limit, server)?;
        let client1 = tree_cpu(running.pid);
        let status =
            running.child.wait().map_err(|e| EngineError::io("waiting for sysbench", &self.tool, e))?;
        let stderr = running.stderr.join().unwrap_or_default();
        let text = running.stdout.join().unwrap_or_default();
        if !status.success() || edges.client0.is_none() {
            ctl.stop();
            let last = |t: &str| crate::bounded_output(t.trim().lines().last().unwrap_or(""));
            return Err(EngineError::Failed(format!(
                "sysbench run failed ({status}): {} {}",
                last(&stderr),
                last(&text)
            )));
        }
        ctl.end_measure();
        let server1 = server.map(tree_cpu);
        let r = parse_report(&text).map_err(EngineError::Failed)?;
        store(rec, &r, &edges, client1, server1, self.setup.threads);
        Ok(())
    }

    fn cleanup(mut self: Box<Self>) -> Result<(), EngineError> {
        drop(self.target.take());
        Ok(())
    }
}

impl SbCell {
    /// The arguments of the measured run: `warm_s + run_s` seconds, a checkpoint (which resets
    /// sysbench's counters) after `warm_s`.
    fn run_args(&self, config: &PgConfig, warm_s: u64, run_s: u64) -> Vec<String> {
        let mut args = base_args(&self.setup, config);
        args.push(format!("--threads={}", self.setup.threads));
        args.push(format!("--time={}", warm_s + run_s));
        if warm_s > 0 {
            args.push(format!("--report-checkpoints={warm_s}"));
        }
        args.push("--percentile=95".into());
        args.push("run".into());
        args
    }

    /// Starts sysbench with `args`, its stdout and stderr read on threads of their own.
    fn spawn(&self, args: &[String], env: &[(&str, String)]) -> Result<Running, EngineError> {
        let mut child = Command::new(&self.tool)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| EngineError::io("cannot run sysbench", &self.tool, e))?;
        let pid = child.id() as i32;
        let out_pipe = child.stdout.take().expect("piped");
        let mut err_pipe = child.stderr.take().expect("piped");
        // Drained on its own thread so that a chatty sysbench never blocks on a full pipe.
        let stderr = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut err_pipe, &mut s);
            s
        });
        let (tx, lines) = mpsc::channel();
        let stdout = std::thread::spawn(move || {
            let mut all = String::new();
            for line in BufReader::new(out_pipe).lines().map_while(Result::ok) {
                let _ = tx.send(line.clone());
                all.push_str(&line);
                all.push('\n');
            }
            all
        });
        Ok(Running { child, pid, lines, stdout, stderr })
    }
}

/// A sysbench run under way: its stdout line by line as it comes, and its whole stdout and
/// stderr once it exits.
struct Running {
    child: std::process::Child,
    pid: i32,
    lines: mpsc::Receiver<String>,
    stdout: std::thread::JoinHandle<String>,
    stderr: std::thread::JoinHandle<String>,
}

impl Running {
    /// Reads stdout until sysbench closes it, opening the window at the first `opener` line.
    /// An abort or a run longer than `limit` kills sysbench and is an error.
    fn follow(
        &mut self,
        ctl: &Control,
        opener: &str,
        limit: Duration,
        server: Option<i32>,
    ) -> Result<Edges, EngineError> {
        let mut edges = Edges::default();
        let t0 = std::time::Instant::now();
        loop {
            if ctl.aborted() {
                self.kill();
                return Err(EngineError::Interrupted);
            }
            match self.lines.recv_timeout(Duration::from_millis(100)) {
                Ok(line) if line.contains(opener) && edges.client0.is_none() => {
                    edges.open(ctl, self.pid, server)
                }
                Ok(_) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(edges),
                Err(mpsc::RecvTimeoutError::Timeout) if t0.elapsed() > limit => {
                    self.kill();
                    return Err(EngineError::Failed(format!("sysbench did not finish within {limit:?}")));
                }
                Err(_) => {}
            }
        }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// CPU readings at the window's opening.
#[derive(Default)]
struct Edges {
    client0: Option<racehorse_machine::rusage::CpuTime>,
    server0: Option<racehorse_machine::rusage::CpuTime>,
}

impl Edges {
    fn open(&mut self, ctl: &Control, pid: i32, server: Option<i32>) {
        self.server0 = server.map(tree_cpu);
        self.client0 = Some(tree_cpu(pid));
        ctl.begin_measure();
    }
}

fn store(
    rec: &Recorder,
    r: &Report,
    e: &Edges,
    client1: racehorse_machine::rusage::CpuTime,
    server1: Option<racehorse_machine::rusage::CpuTime>,
    threads: u32,
) {
    let txns = r.transactions as f64;
    let client = client1.since(e.client0.unwrap_or_default());
    // sysbench's counts, submitted as one worker's; its process CPU replaces the threads'.
    rec.submit(crate::WorkerStats { units: txns, ops: r.queries, ..Default::default() });
    rec.set_workload_cpu(WorkloadCpu {
        user_s: client.user_s,
        kernel_s: client.kernel_s,
        method: CpuMethod::Children,
    });
    for (k, v) in [
        ("reads", r.reads as f64),
        ("writes", r.writes as f64),
        ("other", r.other as f64),
        ("queries", r.queries as f64),
        ("errors", r.ignored_errors as f64),
        ("reconnects", r.reconnects as f64),
        ("sysbench_tps", r.tps),
        ("sysbench_qps", r.qps),
        ("sysbench_time_s", r.total_time_s),
        ("lat_min_ms", r.lat_min_ms),
        ("lat_avg_ms", r.lat_avg_ms),
        ("lat_max_ms", r.lat_max_ms),
        ("threads", f64::from(threads)),
        ("n_transaction", txns),
    ] {
        rec.set_extra(k, v);
    }
    if let Some((p, ms)) = r.lat_pct_ms {
        rec.set_extra(&format!("lat_p{p}_ms"), ms);
    }
    if txns > 0.0 {
        rec.set_extra("client_cpu_us_per_txn", client.total_s() * 1e6 / txns);
        if let (Some(a), Some(b)) = (e.server0, server1) {
            rec.set_extra("server_cpu_s", b.since(a).total_s());
            rec.set_extra("server_cpu_us_per_txn", b.since(a).total_s() * 1e6 / txns);
        }
    }
}

#[cfg(test)]
#[path = "sysbench_tests.rs"]
mod tests;
