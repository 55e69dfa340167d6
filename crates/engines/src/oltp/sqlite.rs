//! The embedded SQLite backend: one database file in the cell directory, WAL mode, one
//! connection per worker with every statement prepared once. SQLite has a single writer, so
//! read-write transactions start with BEGIN IMMEDIATE (the write lock up front; a deferred
//! BEGIN would fail its lock upgrade instead of waiting) and a busy timeout lets them queue.

use super::mix::{Kind, Stmt, C_LEN};
use super::schema::{table_sql, DbError, Session};
use rusqlite::{params, Connection, ErrorCode};
use std::path::Path;

fn fatal(context: &str) -> impl Fn(rusqlite::Error) -> DbError + '_ {
    move |e| DbError::Fatal(format!("SQLite {context}: {e}"))
}

/// Busy/locked errors restart the transaction; the rest are fatal.
fn classify(e: rusqlite::Error) -> DbError {
    match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked | ErrorCode::ConstraintViolation) => {
            DbError::Retry(format!("SQLite: {e}"))
        }
        _ => DbError::Fatal(format!("SQLite: {e}")),
    }
}

/// Opens a connection with the workload's settings (`crate::support::sqlite::open`).
pub fn open(path: &Path) -> Result<Connection, DbError> {
    crate::support::sqlite::open(path).map_err(DbError::Fatal)
}

/// Creates and fills the tables (outside the window).
pub fn load(path: &Path, tables: u32, table_size: u64, seed: u64) -> Result<(), DbError> {
    let c = open(path)?;
    for t in 1..=tables {
        c.execute_batch("BEGIN").map_err(fatal("load"))?;
        table_sql(t, table_size, seed, |sql| c.execute_batch(sql).map_err(fatal("load")))?;
        c.execute_batch("COMMIT").map_err(fatal("load"))?;
    }
    Ok(())
}

/// One worker's connection.
pub struct SqliteSession {
    conn: Connection,
}

impl SqliteSession {
    pub fn open(path: &Path, tables: u32) -> Result<Self, DbError> {
        let conn = open(path)?;
        conn.set_prepared_statement_cache_capacity(tables as usize * Kind::ALL.len() + 8);
        Ok(SqliteSession { conn })
    }

    fn rows(&mut self, sql: &str, a: i64, b: i64) -> Result<u64, DbError> {
        let mut st = self.conn.prepare_cached(sql).map_err(classify)?;
        let mut rows = st.query(params![a, b]).map_err(classify)?;
        let mut n = 0;
        while rows.next().map_err(classify)?.is_some() {
            n += 1;
        }
        Ok(n)
    }
}

/// SQLite's placeholders are `?N`, PostgreSQL's `$N`.
fn sqlite_sql(kind: Kind, t: u32) -> String {
    kind.sql(t).replace('$', "?")
}

impl Session for SqliteSession {
    fn begin(&mut self, write: bool) -> Result<(), DbError> {
        self.conn.execute_batch(if write { "BEGIN IMMEDIATE" } else { "BEGIN" }).map_err(classify)
    }
    fn commit(&mut self) -> Result<(), DbError> {
        self.conn.execute_batch("COMMIT").map_err(classify)
    }
    fn rollback(&mut self) -> Result<(), DbError> {
        if self.conn.is_autocommit() {
            return Ok(());
        }
        self.conn.execute_batch("ROLLBACK").map_err(classify)
    }
    fn run(&mut self, s: &Stmt) -> Result<u64, DbError> {
        let sql = sqlite_sql(s.kind, s.table);
        match s.kind {
            Kind::PointSelect => {
                let mut st = self.conn.prepare_cached(&sql).map_err(classify)?;
                let mut rows = st.query(params![s.a]).map_err(classify)?;
                Ok(u64::from(rows.next().map_err(classify)?.is_some()))
            }
            Kind::SimpleRange | Kind::SumRange | Kind::OrderRange | Kind::DistinctRange => {
                self.rows(&sql, s.a, s.b)
            }
            Kind::IndexUpdate | Kind::Delete => {
                let mut st = self.conn.prepare_cached(&sql).map_err(classify)?;
                st.execute(params![s.a]).map(|n| n as u64).map_err(classify)
            }
            Kind::NonIndexUpdate => {
                let mut st = self.conn.prepare_cached(&sql).map_err(classify)?;
                st.execute(params![s.a, s.text]).map(|n| n as u64).map_err(classify)
            }
            Kind::Insert => {
                let (c, pad) = s.text.split_at(C_LEN);
                let mut st = self.conn.prepare_cached(&sql).map_err(classify)?;
                st.execute(params![s.a, s.b, c, pad]).map(|n| n as u64).map_err(classify)
            }
        }
    }
}
