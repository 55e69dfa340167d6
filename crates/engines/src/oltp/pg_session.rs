//! The PostgreSQL backend of the `oltp` engine: one connection per worker, every statement
//! prepared on the server once (as sysbench does), then one Bind/Execute/Sync round trip per
//! statement; BEGIN and COMMIT through the simple protocol. Deadlocks, serialization failures
//! and unique violations (two workers re-inserting one id) restart the transaction.

use super::mix::{Kind, Stmt, C_LEN};
use super::schema::{statements, stmt_name, table_sql, DbError, Session};
use racehorse_pg::{Param, PgConfig, PgConn, PgError};

/// SQLSTATEs sysbench's pgsql driver treats as retryable.
const RETRY_STATES: &[&str] = &["40P01", "40001", "23505"];

fn classify(e: PgError) -> DbError {
    match e.sqlstate() {
        Some(code) if RETRY_STATES.contains(&code) => DbError::Retry(e.to_string()),
        _ => DbError::Fatal(e.to_string()),
    }
}

/// Creates and fills the tables over one connection (outside the window), then ANALYZE.
pub fn load(cfg: &PgConfig, tables: u32, table_size: u64, seed: u64) -> Result<(), DbError> {
    let mut c = PgConn::connect(cfg).map_err(|e| DbError::Fatal(e.to_string()))?;
    for t in 1..=tables {
        table_sql(t, table_size, seed, |sql| c.execute(sql).map(|_| ()).map_err(classify))?;
    }
    c.execute("ANALYZE").map(|_| ()).map_err(classify)
}

/// Names of the prepared statements, indexed by (table - 1) * kinds + kind.
pub struct PgSession {
    conn: PgConn,
    names: Vec<String>,
}

impl PgSession {
    pub fn connect(cfg: &PgConfig, tables: u32) -> Result<Self, DbError> {
        let mut conn = PgConn::connect(cfg).map_err(|e| DbError::Fatal(e.to_string()))?;
        let mut names = Vec::new();
        for (kind, t, sql) in statements(tables) {
            let name = stmt_name(kind, t);
            conn.prepare(&name, &sql).map_err(|e| DbError::Fatal(e.to_string()))?;
            names.push(name);
        }
        Ok(PgSession { conn, names })
    }
}

impl Session for PgSession {
    fn begin(&mut self, _write: bool) -> Result<(), DbError> {
        self.conn.execute("BEGIN").map(|_| ()).map_err(classify)
    }
    fn commit(&mut self) -> Result<(), DbError> {
        self.conn.execute("COMMIT").map(|_| ()).map_err(classify)
    }
    fn rollback(&mut self) -> Result<(), DbError> {
        self.conn.execute("ROLLBACK").map(|_| ()).map_err(classify)
    }
    fn run(&mut self, s: &Stmt) -> Result<u64, DbError> {
        let name = &self.names[(s.table as usize - 1) * Kind::ALL.len() + s.kind as usize];
        let outcome = match s.kind {
            Kind::PointSelect | Kind::IndexUpdate | Kind::Delete => {
                self.conn.run_prepared(name, &[Param::Int(s.a)])
            }
            Kind::SimpleRange | Kind::SumRange | Kind::OrderRange | Kind::DistinctRange => {
                self.conn.run_prepared(name, &[Param::Int(s.a), Param::Int(s.b)])
            }
            Kind::NonIndexUpdate => self.conn.run_prepared(name, &[Param::Int(s.a), Param::Text(&s.text)]),
            Kind::Insert => {
                let (c, pad) = s.text.split_at(C_LEN);
                self.conn
                    .run_prepared(name, &[Param::Int(s.a), Param::Int(s.b), Param::Text(c), Param::Text(pad)])
            }
        }
        .map_err(classify)?;
        Ok(if s.kind.is_read() { outcome.rows } else { outcome.affected })
    }
}
