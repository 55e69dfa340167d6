//! The `oltp` engine: sysbench's OLTP transaction mix (see [`mix`]) on embedded SQLite (the
//! default; WAL mode, no server) or on PostgreSQL over the wire (`pg=DSN`, or `pg=auto` for a
//! throw-away cluster made for the cell; see [`crate::support::pg::cluster`]).
//!
//! Tables are created and filled in `prepare` (outside the window) and every worker opens its
//! connection and prepares its statements there too. Units are transactions; ops are queries
//! (BEGIN and COMMIT included, as sysbench counts them). A conflict (deadlock, unique
//! violation, SQLite busy) rolls the transaction back and starts a new one, counted in
//! `errors`; any other error fails the cell. Extras: `queries`, `reads`, `writes`, `other`,
//! `errors`, `n_transaction` (the runner derives the system's `cpu_us_per_transaction`),
//! `client_cpu_us_per_txn` and, for `pg=auto`, `server_cpu_us_per_txn` (postmaster and
//! backends, from /proc at the window's edges).

pub mod mix;
pub mod pg_session;
pub mod schema;
pub mod sqlite;
pub mod sysbench;
#[cfg(test)]
mod tests;

use crate::info::{shortcuts, EngineInfo};
use crate::support::pg::client::PgConfig;
use crate::support::pg::cluster::{self, Cluster, ClusterOptions};
use crate::support::proc_tree::tree_cpu;
use crate::{
    Caps, CellContext, Control, Engine, EngineError, OptKind, OptionSpec, Phase, Recorder, WorkerMeter,
    Workload,
};
use mix::{Dist, Draw, MixSpec, Stmt};
use racehorse_core::WorkUnit;
use schema::{DbError, Session};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

pub struct Oltp;

pub(crate) const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "mode",
        kind: OptKind::Choice(&["read_write", "read_only"]),
        default: "read_write",
        help: "sysbench's oltp_read_write (20 queries per transaction) or oltp_read_only (16)",
    },
    OptionSpec { name: "threads", kind: OptKind::Int { min: 1, max: 1024 }, default: "1", help: "client threads, one connection each" },
    OptionSpec { name: "tables", kind: OptKind::Int { min: 1, max: 1000 }, default: "1", help: "tables sbtest1..N" },
    OptionSpec {
        name: "table_size",
        kind: OptKind::Int { min: 100, max: 1_000_000_000 },
        default: "10000",
        help: "rows per table (ids 1..table_size)",
    },
    OptionSpec {
        name: "rand_type",
        kind: OptKind::Choice(Dist::NAMES),
        default: "special",
        help: "id distribution: sysbench 1.0's 'special' (75% in the middle 1% of ids) or uniform",
    },
    OptionSpec { name: "point_selects", kind: OptKind::Int { min: 0, max: 1000 }, default: "10", help: "point selects per transaction" },
    OptionSpec { name: "range_size", kind: OptKind::Int { min: 1, max: 100_000 }, default: "100", help: "ids per range query" },
    OptionSpec {
        name: "pg",
        kind: OptKind::Str,
        default: "",
        help: "PostgreSQL instead of SQLite: a DSN (postgres://user:pw@127.0.0.1:5432/db or host=… port=…), or 'auto' \
               for a throw-away cluster made with the installed PostgreSQL binaries",
    },
    OptionSpec {
        name: "shared_buffers",
        kind: OptKind::Size { min: 128 << 10, max: 1 << 40 },
        default: "128m",
        help: "pg=auto: the server's buffer pool (high hit: the tables fit it; see server_mem for low hit)",
    },
    OptionSpec {
        name: "server_mem",
        kind: OptKind::Size { min: 0, max: 1 << 50 },
        default: "0",
        help: "pg=auto, root: a memory cgroup limit for the server alone (0: none); tables larger than it give the \
               low-hit case",
    },
    OptionSpec { name: "seed", kind: OptKind::Int { min: 0, max: i64::MAX }, default: "1", help: "random seed of the data and the draws" },
];

/// Where the tables live.
pub enum Target {
    Sqlite(PathBuf),
    Pg { config: Box<PgConfig>, cluster: Option<Box<Cluster>> },
}

/// One cell's settings, checked.
#[derive(Debug, Clone)]
pub struct Setup {
    pub mix: MixSpec,
    pub threads: u32,
    pub pg: Option<String>,
    pub shared_buffers_bytes: u64,
    pub server_mem_bytes: u64,
    pub seed: u64,
}

pub(crate) fn setup(ctx: &CellContext) -> Result<Setup, EngineError> {
    let dist_word = ctx.get_str("rand_type")?;
    let dist = Dist::parse(dist_word).ok_or_else(|| {
        EngineError::Usage(format!("rand_type '{dist_word}' is not one of {:?}", Dist::NAMES))
    })?;
    let mix = MixSpec {
        tables: ctx.get_u64("tables")? as u32,
        table_size: ctx.get_u64("table_size")?,
        read_only: ctx.get_str("mode")? == "read_only",
        point_selects: ctx.get_u64("point_selects")? as u32,
        range_size: ctx.get_u64("range_size")?,
        dist,
    };
    if mix.range_size > mix.table_size {
        return Err(EngineError::Usage(format!(
            "range_size {} is larger than table_size {}; ranges must fit in the table",
            mix.range_size, mix.table_size
        )));
    }
    let pg = ctx.spec.params.get("pg").and_then(|v| v.as_str()).filter(|s| !s.is_empty()).map(str::to_string);
    if let Some(dsn) = pg.as_deref().filter(|d| *d != "auto") {
        PgConfig::parse(dsn).map_err(|e| {
            EngineError::Usage(format!(
                "{e}; pass pg=auto or a DSN such as postgres://user:pw@127.0.0.1:5432/db"
            ))
        })?;
    }
    let s = Setup {
        mix,
        threads: ctx.get_u64("threads")? as u32,
        pg,
        shared_buffers_bytes: ctx.get_u64("shared_buffers")?,
        server_mem_bytes: ctx.get_u64("server_mem")?,
        seed: ctx.get_u64("seed")?,
    };
    if s.server_mem_bytes > 0 {
        if s.pg.as_deref() != Some("auto") {
            return Err(EngineError::Usage(
                "server_mem limits the throw-away server: it needs pg=auto".into(),
            ));
        }
        let floor = s.shared_buffers_bytes + (32 << 20);
        if s.server_mem_bytes < floor {
            return Err(EngineError::Usage(format!(
                "server_mem {} bytes cannot hold shared_buffers ({} bytes) plus 32 MiB for the server's processes; \
                 raise server_mem or lower shared_buffers",
                s.server_mem_bytes, s.shared_buffers_bytes
            )));
        }
    }
    Ok(s)
}

/// Makes the target of a cell: the SQLite file, a DSN, or a new cluster (`pg=auto`).
pub(crate) fn open_target(ctx: &CellContext, s: &Setup) -> Result<Target, EngineError> {
    match s.pg.as_deref() {
        None => Ok(Target::Sqlite(ctx.work_dir.join("oltp.sqlite"))),
        Some("auto") => {
            let opts = ClusterOptions {
                shared_buffers_bytes: s.shared_buffers_bytes,
                max_connections: s.threads + 10,
                settings: Vec::new(),
                memory_limit_bytes: (s.server_mem_bytes > 0).then_some(s.server_mem_bytes),
            };
            let cluster = Cluster::start(&ctx.work_dir, &opts)?;
            Ok(Target::Pg { config: Box::new(cluster.config.clone()), cluster: Some(Box::new(cluster)) })
        }
        Some(dsn) => Ok(Target::Pg {
            config: Box::new(PgConfig::parse(dsn).map_err(|e| EngineError::Usage(e.to_string()))?),
            cluster: None,
        }),
    }
}

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

/// What `Oltp` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "oltp",
    about: "sysbench's OLTP mix (read-only/read-write) on SQLite or PostgreSQL (DSN or a throw-away cluster); transactions/s",
    area: "Database",
    unit: WorkUnit::Transactions,
    caps: Caps { needs_disk: true, needs_peer: true, ..Caps::NONE },
    options: OPTIONS,
    shortcuts: &[shortcuts::THREADS, shortcuts::PG],
};

impl Engine for Oltp {
    fn info(&self) -> &'static EngineInfo {
        &INFO
    }
    fn validate(&self, ctx: &CellContext) -> Result<(), EngineError> {
        let s = setup(ctx)?;
        if s.pg.as_deref() == Some("auto") {
            cluster::bin_dir()?;
        }
        Ok(())
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        let setup = setup(ctx)?;
        let target = open_target(ctx, &setup)?;
        // On an error the target (and a cluster with it) is dropped: stopped and removed.
        let sessions = sessions(&target, &setup)?;
        Ok(Box::new(Cell { setup, target: Some(target), sessions }))
    }
}

struct Cell {
    setup: Setup,
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

fn worker(
    sess: &mut dyn Session,
    s: &Setup,
    seed: u64,
    ctl: &Control,
    meter: &mut WorkerMeter,
    totals: &mut Counts,
) -> Result<(), EngineError> {
    let mut draw = Draw::new(seed, s.mix.dist);
    let mut stmts = Vec::with_capacity(32);
    while meter.tick(ctl) {
        stmts.clear();
        mix::transaction(&s.mix, &mut draw, &mut stmts);
        let t0 = Instant::now();
        let outcome = run_txn(sess, &s.mix, &stmts);
        let inside = meter.measuring() && ctl.measuring();
        match outcome {
            Ok(c) => {
                meter.count(ctl, "transaction", t0.elapsed().as_nanos() as u64, 1.0, 0, 0);
                if inside {
                    totals.reads += c.reads;
                    totals.writes += c.writes;
                    totals.other += c.other;
                }
            }
            Err(DbError::Retry(_)) => {
                sess.rollback().map_err(failed)?;
                totals.errors += u64::from(inside);
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
        let s = &self.setup;
        let driven = std::thread::scope(|scope| {
            for (i, sess) in self.sessions.iter_mut().enumerate() {
                let (stop, error, counts) = (&stop, &error, &counts);
                scope.spawn(move || {
                    let mut meter = WorkerMeter::new();
                    let mut mine = Counts::default();
                    let seed = s.seed.wrapping_mul(0x9E37_79B9).wrapping_add(i as u64 + 1);
                    if let Err(e) = worker(sess.as_mut(), s, seed, ctl, &mut meter, &mut mine) {
                        stop.store(true, Ordering::Relaxed);
                        error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                    }
                    meter.finish(rec);
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
        Ok(())
    }

    fn cleanup(mut self: Box<Self>) -> Result<(), EngineError> {
        // Connections close before the server stops; the cluster removes its files on drop.
        self.sessions.clear();
        drop(self.target.take());
        Ok(())
    }
}
