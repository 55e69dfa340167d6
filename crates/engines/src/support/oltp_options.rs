//! What the native `oltp` engine and the `sysbench` adapter share, so one suite runs both on
//! the same cells: the option table, the shape of the transaction mix it sets ([`MixSpec`],
//! [`Dist`]), reading a cell's options into its checked [`Setup`], and making the cell's
//! target (the SQLite file, a PostgreSQL DSN, or a throw-away cluster for `pg=auto`).

use crate::support::pg_server::PgServer;
use crate::{CellContext, EngineError, OptKind, OptionSpec};
use racehorse_pg::{ClusterOptions, PgConfig};
use std::path::PathBuf;

/// How ids are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dist {
    Uniform,
    /// sysbench 1.0's default: 75% of the draws uniform in (the upper three quarters of) the
    /// middle 1% of the ids, 25% from the mean of 12 uniforms over the whole range (bell-shaped).
    Special,
}

impl Dist {
    pub const NAMES: &'static [&'static str] = &["special", "uniform"];
    pub fn parse(s: &str) -> Option<Dist> {
        match s {
            "uniform" => Some(Dist::Uniform),
            "special" => Some(Dist::Special),
            _ => None,
        }
    }
}

/// The shape of one transaction (sysbench's option names).
#[derive(Debug, Clone, PartialEq)]
pub struct MixSpec {
    pub tables: u32,
    pub table_size: u64,
    pub read_only: bool,
    pub point_selects: u32,
    pub range_size: u64,
    pub dist: Dist,
}

impl MixSpec {
    /// Queries one transaction sends (BEGIN and COMMIT included): 16 read-only, 20 read-write
    /// with the defaults. (The tests check oltp's mix against it.)
    #[cfg(test)]
    pub fn queries_per_txn(&self) -> u64 {
        u64::from(self.point_selects) + 4 + if self.read_only { 0 } else { 4 } + 2
    }
}

/// The options of an `oltp` or `sysbench` cell.
pub const OPTIONS: &[OptionSpec] = &[
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
    Pg { config: Box<PgConfig>, cluster: Option<Box<PgServer>> },
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

/// Reads and checks a cell's options.
pub fn setup(ctx: &CellContext) -> Result<Setup, EngineError> {
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
pub fn open_target(ctx: &CellContext, s: &Setup) -> Result<Target, EngineError> {
    match s.pg.as_deref() {
        None => Ok(Target::Sqlite(ctx.work_dir.join("oltp.sqlite"))),
        Some("auto") => {
            let opts = ClusterOptions {
                shared_buffers_bytes: s.shared_buffers_bytes,
                max_connections: s.threads + 10,
                settings: Vec::new(),
                ..ClusterOptions::default()
            };
            let limit = (s.server_mem_bytes > 0).then_some(s.server_mem_bytes);
            let server = PgServer::start(&ctx.work_dir, &opts, limit)?;
            Ok(Target::Pg { config: Box::new(server.config().clone()), cluster: Some(Box::new(server)) })
        }
        Some(dsn) => Ok(Target::Pg {
            config: Box::new(PgConfig::parse(dsn).map_err(|e| EngineError::Usage(e.to_string()))?),
            cluster: None,
        }),
    }
}
