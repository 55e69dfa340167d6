//! The `oltp` engine: sysbench's OLTP transaction mix (see [`mix`]) on embedded SQLite (the
//! default; WAL mode, no server) or on PostgreSQL over the wire (`pg=DSN`, or `pg=auto` for a
//! throw-away cluster made for the cell; see [`racehorse_pg::Cluster`]).
//!
//! Tables are created and filled in `prepare` (outside the window) and every worker opens its
//! connection and prepares its statements there too. Units are transactions; ops are queries
//! (BEGIN and COMMIT included, as sysbench counts them). A conflict (deadlock, unique
//! violation, SQLite busy) rolls the transaction back and starts a new one, counted in
//! `errors`; any other error fails the cell. Extras: `queries`, `reads`, `writes`, `other`,
//! `errors`, `n_transaction` (the runner derives the system's `cpu_us_per_transaction`),
//! `client_cpu_us_per_txn` and, for `pg=auto`, `server_cpu_us_per_txn` (postmaster and
//! backends, from /proc at the window's edges).
//!
//! The option table, a cell's checked settings and its target (the SQLite file or the
//! PostgreSQL server) are shared with the `sysbench` adapter (`crate::support::oltp_options`).

pub mod mix;
pub mod pg_session;
pub mod schema;
pub mod sqlite;
#[cfg(test)]
mod tests;

use crate::info::{shortcuts, EngineInfo};
use crate::support::oltp_options::{open_target, setup, Setup, Target, OPTIONS};
use crate::support::pace::{self, PaceSpec, PaceTally, Pacer};
use crate::support::proc_tree::tree_cpu;
use crate::{
    AreaRule, Caps, CellContext, Control, Engine, EngineError, Figure, OptionSpec, Phase, Recorder,
    SummaryArea, WorkerMeter, Workload,
};
use mix::{Draw, MixSpec, Stmt};
use racehorse_core::WorkUnit;
use schema::{DbError, Session};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

pub struct Oltp;

fn failed(e: DbError) -> EngineError {
    EngineError::Failed(e.to_string())
}

/// Loads the tables and opens one session per thread.
fn sessions(target: &Target, s: &Setup) -> Result<Vec<Box<dyn Session>>, EngineError> {
    let m = &s.mix;
    let mut out: Vec<Box<dyn Session>> = Vec::new();
    match target {
        Target::Sqlite(path) => {
            sqlite::load(path, m.tables, m.table_size, s.seed).map_err(failed)?;
            for _ in 0..s.threads {
                out.push(Box::new(sqlite::SqliteSession::open(path, m.tables).map_err(failed)?));
            }
        }
        Target::Pg { config, .. } => {
            pg_session::load(config, m.tables, m.table_size, s.seed).map_err(failed)?;
            for _ in 0..s.threads {
                out.push(Box::new(pg_session::PgSession::connect(config, m.tables).map_err(failed)?));
            }
        }
    }
    Ok(out)
}

/// The shared option table with `rate` and `qos` (transactions can be paced).
static OLTP_OPTIONS: [OptionSpec; OPTIONS.len() + 2] = pace::with_pace_options(OPTIONS);

/// The mix's counts and the client's and server's CPU, then pace's figures.
const OWN_FIGURES: &[Figure] = &[
    Figure::info("reads", "read statements", "count"),
    Figure::info("writes", "write statements", "count"),
    Figure::info("other", "other statements", "count"),
    Figure::info("queries", "statements", "count"),
    Figure::info("errors", "errors retried", "count"),
    Figure::info("threads", "client threads", "threads"),
    Figure::info("n_transaction", "transactions", "count"),
    Figure::info("client_cpu_us_per_txn", "client CPU per transaction", "µs"),
    Figure::info("server_cpu_s", "server CPU", "cpu_s"),
    Figure::info("server_cpu_us_per_txn", "server CPU per transaction", "µs"),
    Figure::info("server_mem_limit_bytes", "server memory limit", "bytes"),
    Figure::info("server_mem_peak_bytes", "server memory peak", "bytes"),
];

static FIGURES: [Figure; OWN_FIGURES.len() + pace::FIGURES.len()] = pace::with_pace_figures(OWN_FIGURES);

/// What `Oltp` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "oltp",
    about: "sysbench's OLTP mix (read-only/read-write) on SQLite or PostgreSQL (DSN or a throw-away cluster); transactions/s",
    area: "Database",
    summary_area: AreaRule::Fixed(SummaryArea::DatabaseOltp),
    unit: WorkUnit::Transactions,
    caps: Caps { needs_disk: true, needs_peer: true, paced: true, ..Caps::NONE },
    options: &OLTP_OPTIONS,
    figures: &FIGURES,
    shortcuts: &[shortcuts::THREADS, shortcuts::PG],
};

impl Engine for Oltp {
    fn info(&self) -> &'static EngineInfo {
        &INFO
    }
    fn validate(&self, ctx: &CellContext) -> Result<(), EngineError> {
        let s = setup(ctx)?;
        PaceSpec::of(ctx)?;
        if s.pg.as_deref() == Some("auto") {
            racehorse_pg::bin_dir()?;
        }
        Ok(())
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        let setup = setup(ctx)?;
        let pace = PaceSpec::of(ctx)?;
        let target = open_target(ctx, &setup)?;
        // On an error the target (and a cluster with it) is dropped: stopped and removed.
        let sessions = sessions(&target, &setup)?;
        Ok(Box::new(Cell { setup, pace, tally: PaceTally::default(), target: Some(target), sessions }))
    }
}

struct Cell {
    setup: Setup,
    pace: PaceSpec,
    tally: PaceTally,
    target: Option<Target>,
    sessions: Vec<Box<dyn Session>>,
}

/// Counts of one worker, kept only inside the window.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    reads: u64,
    writes: u64,
    other: u64,
    errors: u64,
}

/// Runs one transaction; returns its (reads, writes, other) query counts.
fn run_txn(sess: &mut dyn Session, mix: &MixSpec, stmts: &[Stmt]) -> Result<Counts, DbError> {
    let mut c = Counts { other: 2, ..Counts::default() };
    sess.begin(!mix.read_only)?;
    for st in stmts {
        let n = sess.run(st)?;
        if st.kind.is_read() {
            c.reads += 1;
        } else if n > 0 {
            c.writes += 1;
        } else {
            c.other += 1;
        }
    }
    sess.commit()?;
    Ok(c)
}

/// One worker's transactions until the window closes; each starts when `pacer` says (a
/// transaction rolled back on a conflict is retried in its slot, its latency counted from it).
fn worker(
    sess: &mut dyn Session,
    s: &Setup,
    seed: u64,
    ctl: &Control,
    (meter, pacer): (&mut WorkerMeter, &mut Pacer),
    totals: &mut Counts,
) -> Result<(), EngineError> {
    let mut draw = Draw::new(seed, s.mix.dist);
    let mut stmts = Vec::with_capacity(32);
    let mut retry = None;
    while meter.tick(ctl) {
        stmts.clear();
        mix::transaction(&s.mix, &mut draw, &mut stmts);
        let Some(t0) = retry.take().or_else(|| pacer.next(ctl, meter)) else { continue };
        let outcome = run_txn(sess, &s.mix, &stmts);
        let inside = meter.measuring() && ctl.measuring();
        match outcome {
            Ok(c) => {
                let ns = pacer.done(ctl, meter, t0);
                meter.count(ctl, "transaction", ns, 1.0, 0, 0);
                if inside {
                    totals.reads += c.reads;
                    totals.writes += c.writes;
                    totals.other += c.other;
                }
            }
            Err(DbError::Retry(_)) => {
                sess.rollback().map_err(failed)?;
                totals.errors += u64::from(inside);
                retry = Some(t0);
            }
            Err(e) => return Err(failed(e)),
        }
    }
    Ok(())
}

impl Cell {
    fn server_pid(&self) -> Option<i32> {
        match &self.target {
            Some(Target::Pg { cluster: Some(c), .. }) => c.postmaster_pid(),
            _ => None,
        }
    }
}

impl Workload for Cell {
    fn run(&mut self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        let stop = AtomicBool::new(false);
        let error = Mutex::new(None);
        let counts = Mutex::new(Counts::default());
        let server = self.server_pid();
        let server_cpu = Mutex::new((None, None));
        let (s, pace, tally) = (&self.setup, &self.pace, &self.tally);
        let workers = self.sessions.len();
        let driven = std::thread::scope(|scope| {
            for (i, sess) in self.sessions.iter_mut().enumerate() {
                let (stop, error, counts) = (&stop, &error, &counts);
                scope.spawn(move || {
                    let mut meter = WorkerMeter::new();
                    let mut pacer = Pacer::new(pace, i, workers, ctl);
                    let mut mine = Counts::default();
                    let seed = s.seed.wrapping_mul(0x9E37_79B9).wrapping_add(i as u64 + 1);
                    if let Err(e) = worker(sess.as_mut(), s, seed, ctl, (&mut meter, &mut pacer), &mut mine) {
                        stop.store(true, Ordering::Relaxed);
                        error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                    }
                    meter.finish(rec);
                    pacer.finish(tally);
                    let mut c = counts.lock().unwrap_or_else(|p| p.into_inner());
                    c.reads += mine.reads;
                    c.writes += mine.writes;
                    c.other += mine.other;
                    c.errors += mine.errors;
                });
            }
            ctl.drive_window_observed(&stop, &mut |phase| {
                if let Some(pid) = server {
                    let cpu = tree_cpu(pid);
                    let mut w = server_cpu.lock().unwrap_or_else(|p| p.into_inner());
                    if phase == Phase::Measure {
                        w.0 = Some(cpu);
                    } else {
                        w.1 = Some(cpu);
                    }
                }
            })
        });
        if let Some(e) = error.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(e);
        }
        driven?;
        let c = counts.into_inner().unwrap_or_else(|p| p.into_inner());
        let t = rec.totals();
        let txns = t.units;
        rec.set_extra("reads", c.reads as f64);
        rec.set_extra("writes", c.writes as f64);
        rec.set_extra("other", c.other as f64);
        rec.set_extra("queries", (c.reads + c.writes + c.other) as f64);
        rec.set_extra("errors", c.errors as f64);
        rec.set_extra("threads", f64::from(s.threads));
        rec.set_extra("n_transaction", txns);
        if txns > 0.0 {
            rec.set_extra("client_cpu_us_per_txn", t.workload_cpu.total_s() * 1e6 / txns);
        }
        if let Some(Target::Pg { cluster: Some(c), .. }) = &self.target {
            if let Some(limit) = c.memory_limit_bytes() {
                rec.set_extra("server_mem_limit_bytes", limit as f64);
            }
            if let Some(peak) = c.memory_peak_bytes() {
                rec.set_extra("server_mem_peak_bytes", peak as f64);
            }
        }
        if let (Some(a), Some(b)) = server_cpu.into_inner().unwrap_or_else(|p| p.into_inner()) {
            let cpu = b.since(a);
            rec.set_extra("server_cpu_s", cpu.total_s());
            if txns > 0.0 {
                rec.set_extra("server_cpu_us_per_txn", cpu.total_s() * 1e6 / txns);
            }
        }
        pace::record(rec, &self.pace, &self.tally, ctl);
        Ok(())
    }

    fn cleanup(mut self: Box<Self>) -> Result<(), EngineError> {
        // Connections close before the server stops; the cluster removes its files on drop.
        self.sessions.clear();
        drop(self.target.take());
        Ok(())
    }
}
