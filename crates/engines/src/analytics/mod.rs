//! The `analytics` engine, seed 000's "complex BI queries" in warm state: ten analytical
//! queries (see [`queries`]) over a generated star schema (see [`data`]) of a chosen scale,
//! on embedded SQLite (default) or PostgreSQL (`pg=DSN` or `pg=auto`).
//!
//! `prepare` creates and fills the tables (and ANALYZEs them). `run` makes one unmeasured pass
//! over the ten queries (caches and plans warm), then the measured pass: the window opens
//! before the first query and closes after the last, so the window is the total run time.
//! Units are queries; each query's time is its own latency entry and the extras `qNN_ms`
//! (with `qNN_rows`, the rows it returned) and `total_ms`.

pub mod data;
pub mod queries;
#[cfg(test)]
mod tests;

use crate::info::{shortcuts, EngineInfo};
use crate::{
    AreaRule, Caps, CellContext, Control, Engine, EngineError, Figure, OptKind, OptionSpec, Recorder,
    SummaryArea, WorkerMeter, Workload,
};
use racehorse_core::WorkUnit;
use racehorse_pg::{Cluster, ClusterOptions, PgConfig, PgConn};
use std::time::{Duration, Instant};

pub struct Analytics;

const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "scale",
        kind: OptKind::Int { min: 1, max: 10_000 },
        default: "1",
        help: "data set size: 100,000 sales rows and 5,000 customers per unit",
    },
    OptionSpec {
        name: "pg",
        kind: OptKind::Str,
        default: "",
        help: "PostgreSQL instead of SQLite: a DSN, or 'auto' for a throw-away cluster",
    },
    OptionSpec {
        name: "shared_buffers",
        kind: OptKind::Size { min: 128 << 10, max: 1 << 40 },
        default: "128m",
        help: "pg=auto: the server's buffer pool",
    },
    OptionSpec {
        name: "seed",
        kind: OptKind::Int { min: 0, max: i64::MAX },
        default: "1",
        help: "random seed of the data",
    },
];

/// Longest a single query may take on PostgreSQL before the cell fails.
const QUERY_TIMEOUT: Duration = Duration::from_secs(3600);

enum Db {
    Sqlite(rusqlite::Connection),
    Pg { conn: Box<PgConn>, _cluster: Option<Box<Cluster>> },
}

impl Db {
    fn exec(&mut self, sql: &str) -> Result<(), String> {
        match self {
            Db::Sqlite(c) => c.execute_batch(sql).map_err(|e| format!("SQLite: {e}")),
            Db::Pg { conn, .. } => conn.execute(sql).map(|_| ()).map_err(|e| e.to_string()),
        }
    }

    /// Runs a query to the end; the number of rows it returned.
    fn rows(&mut self, sql: &str) -> Result<u64, String> {
        match self {
            Db::Sqlite(c) => {
                let mut st = c.prepare_cached(sql).map_err(|e| format!("SQLite: {e}"))?;
                let mut rows = st.query([]).map_err(|e| format!("SQLite: {e}"))?;
                let mut n = 0;
                while rows.next().map_err(|e| format!("SQLite: {e}"))?.is_some() {
                    n += 1;
                }
                Ok(n)
            }
            Db::Pg { conn, .. } => conn.execute(sql).map(|o| o.rows).map_err(|e| e.to_string()),
        }
    }

    /// Rows as text (for the cross-backend check).
    #[cfg(test)]
    fn text_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, String> {
        match self {
            Db::Sqlite(c) => {
                let mut st = c.prepare(sql).map_err(|e| e.to_string())?;
                let n = st.column_count();
                let rows = st
                    .query_map([], |r| {
                        (0..n)
                            .map(|i| {
                                r.get_ref(i).map(|v| match v {
                                    rusqlite::types::ValueRef::Null => None,
                                    rusqlite::types::ValueRef::Integer(i) => Some(i.to_string()),
                                    rusqlite::types::ValueRef::Real(f) => Some(f.to_string()),
                                    rusqlite::types::ValueRef::Text(t) => {
                                        Some(String::from_utf8_lossy(t).into_owned())
                                    }
                                    rusqlite::types::ValueRef::Blob(_) => Some("<blob>".into()),
                                })
                            })
                            .collect()
                    })
                    .map_err(|e| e.to_string())?;
                rows.collect::<Result<_, _>>().map_err(|e| e.to_string())
            }
            Db::Pg { conn, .. } => conn.query_rows(sql).map_err(|e| e.to_string()),
        }
    }
}

/// Opens the backend of a cell and loads the data set.
fn open_and_load(ctx: &CellContext) -> Result<Db, EngineError> {
    let pg = ctx.spec.params.get("pg").and_then(|v| v.as_str()).unwrap_or("").to_string();
    let mut db = match pg.as_str() {
        "" => {
            let path = ctx.work_dir.join("analytics.sqlite");
            let c = crate::support::sqlite::open(&path).map_err(EngineError::Failed)?;
            Db::Sqlite(c)
        }
        "auto" => {
            let opts = ClusterOptions {
                shared_buffers_bytes: ctx.get_u64("shared_buffers")?,
                ..ClusterOptions::default()
            };
            let cluster = Cluster::start(&ctx.work_dir, &opts)?;
            let cfg = PgConfig { io_timeout: QUERY_TIMEOUT, ..cluster.config.clone() };
            let conn = PgConn::connect(&cfg).map_err(|e| EngineError::Failed(e.to_string()))?;
            Db::Pg { conn: Box::new(conn), _cluster: Some(Box::new(cluster)) }
        }
        dsn => {
            let cfg = PgConfig {
                io_timeout: QUERY_TIMEOUT,
                ..PgConfig::parse(dsn).map_err(|e| EngineError::Usage(e.to_string()))?
            };
            let conn = PgConn::connect(&cfg).map_err(|e| EngineError::Failed(e.to_string()))?;
            Db::Pg { conn: Box::new(conn), _cluster: None }
        }
    };
    let fail = |e: String| EngineError::Failed(format!("loading the star schema: {e}"));
    for t in ["sales", "customers", "products", "stores", "dates"] {
        db.exec(&format!("DROP TABLE IF EXISTS {t}")).map_err(fail)?;
    }
    let in_txn = matches!(db, Db::Sqlite(_));
    if in_txn {
        db.exec("BEGIN").map_err(fail)?;
    }
    data::generate(ctx.get_u64("scale")?, ctx.get_u64("seed")?, &mut |sql| db.exec(sql)).map_err(fail)?;
    if in_txn {
        db.exec("COMMIT").map_err(fail)?;
    }
    db.exec("ANALYZE").map_err(fail)?;
    Ok(db)
}

/// Each query's time (compared) and rows, and the time of them all.
const FIGURES: &[Figure] = &[
    Figure::info("total_ms", "all queries", "ms"),
    Figure::lower("*_ms", "* time", "ms"),
    Figure::info("*_rows", "* rows", "rows"),
];

/// What `Analytics` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "analytics",
    about: "seed 000's BI queries: ten analytical queries over a star schema on SQLite or PostgreSQL; warm run time",
    area: "Database",
    summary_area: AreaRule::Fixed(SummaryArea::LargeDbBi),
    unit: WorkUnit::Ops,
    caps: Caps { needs_disk: true, needs_peer: true, ..Caps::NONE },
    options: OPTIONS,
    figures: FIGURES,
    shortcuts: &[shortcuts::PG],
};

impl Engine for Analytics {
    fn info(&self) -> &'static EngineInfo {
        &INFO
    }
    fn validate(&self, ctx: &CellContext) -> Result<(), EngineError> {
        match ctx.spec.params.get("pg").and_then(|v| v.as_str()).unwrap_or("") {
            "" => Ok(()),
            "auto" => racehorse_pg::bin_dir().map(|_| ()).map_err(EngineError::from),
            dsn => PgConfig::parse(dsn)
                .map(|_| ())
                .map_err(|e| EngineError::Usage(format!("{e}; pass pg=auto or a DSN"))),
        }
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        Ok(Box::new(Cell { db: Some(open_and_load(ctx)?) }))
    }
}

struct Cell {
    db: Option<Db>,
}

impl Workload for Cell {
    fn run(&mut self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        let db = self.db.as_mut().expect("prepared");
        let failed = |name: &str, e: String| EngineError::Failed(format!("query {name}: {e}"));
        for (name, _, sql) in queries::QUERIES {
            if ctl.aborted() {
                return Err(EngineError::Interrupted);
            }
            db.rows(sql).map_err(|e| failed(name, e))?;
        }
        let mut meter = WorkerMeter::new();
        ctl.begin_measure();
        meter.tick(ctl);
        let mut total_ns = 0u64;
        for (name, _, sql) in queries::QUERIES {
            if ctl.aborted() {
                ctl.stop();
                return Err(EngineError::Interrupted);
            }
            let t0 = Instant::now();
            let rows = db.rows(sql).map_err(|e| {
                ctl.stop();
                failed(name, e)
            })?;
            let ns = t0.elapsed().as_nanos() as u64;
            total_ns += ns;
            meter.count(ctl, name, ns, 1.0, 0, 0);
            rec.set_extra(&format!("{name}_ms"), ns as f64 / 1e6);
            rec.set_extra(&format!("{name}_rows"), rows as f64);
        }
        ctl.end_measure();
        meter.tick(ctl);
        meter.finish(rec);
        rec.set_extra("total_ms", total_ns as f64 / 1e6);
        Ok(())
    }

    fn cleanup(mut self: Box<Self>) -> Result<(), EngineError> {
        // The connection closes first; a throw-away cluster then stops and goes.
        drop(self.db.take());
        Ok(())
    }
}
