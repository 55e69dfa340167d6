//! sysbench's tables and how they are filled (oltp_common.lua `prepare`): `sbtest1..N` with
//! `id` primary key, `k` (secondary index `k_N`, created after the rows), `c` CHAR(120) and
//! `pad` CHAR(60); ids 1..table_size, `k` uniform in [1, table_size], rows bulk-inserted.
//! The same SQL serves SQLite and PostgreSQL; the backends differ in how they talk, not here.

use super::mix::{Dist, Draw, Kind, Stmt};

/// Where a statement fails: retryable conflicts (deadlock, unique violation, busy) restart
/// the transaction as sysbench does; anything else fails the cell.
#[derive(Debug, Clone, PartialEq)]
pub enum DbError {
    Retry(String),
    Fatal(String),
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbError::Retry(m) | DbError::Fatal(m) => f.write_str(m),
        }
    }
}

/// One connection's view of the database, as the workers use it.
pub trait Session: Send {
    /// BEGIN (`write` says the transaction will write: SQLite takes the write lock at once).
    fn begin(&mut self, write: bool) -> Result<(), DbError>;
    fn commit(&mut self) -> Result<(), DbError>;
    fn rollback(&mut self) -> Result<(), DbError>;
    /// Runs one statement; returns the rows it returned or touched.
    fn run(&mut self, s: &Stmt) -> Result<u64, DbError>;
}

/// Rows per INSERT statement while loading.
const BATCH_ROWS: u64 = 1000;

/// The DDL and batched INSERTs that create and fill table `t`, in order; the index last.
pub fn table_sql(
    t: u32,
    table_size: u64,
    seed: u64,
    mut emit: impl FnMut(&str) -> Result<(), DbError>,
) -> Result<(), DbError> {
    emit(&format!("DROP TABLE IF EXISTS sbtest{t}"))?;
    emit(&format!(
        "CREATE TABLE sbtest{t} (id INTEGER NOT NULL, k INTEGER NOT NULL DEFAULT 0, \
         c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id))"
    ))?;
    let mut d = Draw::new(seed ^ u64::from(t), Dist::Uniform);
    let mut sql = String::new();
    let mut id = 1;
    while id <= table_size {
        sql.clear();
        sql.push_str(&format!("INSERT INTO sbtest{t} (id, k, c, pad) VALUES "));
        let last = (id + BATCH_ROWS - 1).min(table_size);
        for i in id..=last {
            if i > id {
                sql.push(',');
            }
            sql.push_str(&format!("({i},{},'", d.uniform(1, table_size)));
            d.digits(10, &mut sql);
            sql.push_str("','");
            d.digits(5, &mut sql);
            sql.push_str("')");
        }
        emit(&sql)?;
        id = last + 1;
    }
    emit(&format!("CREATE INDEX k_{t} ON sbtest{t}(k)"))
}

/// The SQL of every (kind, table) statement a worker prepares.
pub fn statements(tables: u32) -> Vec<(Kind, u32, String)> {
    (1..=tables).flat_map(|t| Kind::ALL.iter().map(move |&k| (k, t, k.sql(t)))).collect()
}

/// The name of a prepared statement on the server.
pub fn stmt_name(kind: Kind, t: u32) -> String {
    format!("{}_{t}", kind as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_sql_covers_every_id_once_in_batches() {
        let mut stmts = Vec::new();
        table_sql(2, 2500, 1, |s| {
            stmts.push(s.to_string());
            Ok(())
        })
        .unwrap();
        assert!(stmts[1].starts_with("CREATE TABLE sbtest2"));
        assert_eq!(stmts.last().unwrap(), "CREATE INDEX k_2 ON sbtest2(k)");
        let inserts: Vec<_> = stmts.iter().filter(|s| s.starts_with("INSERT")).collect();
        assert_eq!(inserts.len(), 3);
        let rows: usize = inserts.iter().map(|s| s.matches("),(").count() + 1).sum();
        assert_eq!(rows, 2500);
        assert!(inserts[2].contains("(2500,"));
        assert_eq!(statements(3).len(), 27);
    }
}
