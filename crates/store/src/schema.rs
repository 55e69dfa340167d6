//! The store's schema as an ordered list of migrations; `PRAGMA user_version` records how
//! many have been applied, so an old database is brought forward and a newer one refused.

use crate::error::{Result, StoreError};
use rusqlite::{Connection, TransactionBehavior};

/// Migration steps in order. Step `i` moves the schema from version `i` to `i + 1`.
/// Never edit a released step: append a new one (see docs/formats.md).
const MIGRATIONS: &[&str] = &[V1, V2, V3, V4, V5, V6, V7, V8];

/// The schema version this binary writes and understands.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

const V1: &str = "
CREATE TABLE runs (
    id                 INTEGER PRIMARY KEY,
    label              TEXT    NOT NULL,
    started_at_unix_s  INTEGER NOT NULL,
    finished_at_unix_s INTEGER,
    status             TEXT    NOT NULL
                       CHECK (status IN ('running', 'complete', 'partial', 'interrupted')),
    host               TEXT    NOT NULL,
    command            TEXT    NOT NULL,
    suite_json         TEXT    NOT NULL,
    env_json           TEXT    NOT NULL,
    exclusivity_json   TEXT    NOT NULL,
    racehorse_version  TEXT    NOT NULL,
    cpu_method         TEXT    NOT NULL,
    pid                INTEGER
);
CREATE INDEX runs_label ON runs(label);

CREATE TABLE cells (
    id                 INTEGER PRIMARY KEY,
    run_id             INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx                INTEGER NOT NULL,
    workload           TEXT    NOT NULL,
    variant            TEXT    NOT NULL,
    rep                INTEGER NOT NULL,
    params_json        TEXT    NOT NULL,
    match_key          TEXT    NOT NULL,
    status             TEXT    NOT NULL,
    error              TEXT,
    unit               TEXT    NOT NULL,
    units              REAL,
    window_ns          INTEGER NOT NULL,
    ops                INTEGER NOT NULL,
    bytes_read         INTEGER NOT NULL,
    bytes_written      INTEGER NOT NULL,
    cpu_user_s         REAL,
    cpu_kernel_s       REAL,
    cpu_steal_s        REAL,
    cpu_iowait_s       REAL,
    cpu_idle_s         REAL,
    wl_cpu_user_s      REAL,
    wl_cpu_kernel_s    REAL,
    wl_cpu_method      TEXT    NOT NULL,
    harness_cpu_s      REAL,
    cpus_online        INTEGER NOT NULL,
    extra_json         TEXT    NOT NULL,
    finished_at_unix_s INTEGER NOT NULL
);
CREATE INDEX cells_run_id ON cells(run_id);
CREATE INDEX cells_match_key ON cells(match_key);

CREATE TABLE samples (
    cell_id                INTEGER NOT NULL REFERENCES cells(id) ON DELETE CASCADE,
    t_ms                   INTEGER NOT NULL,
    cpu_user_pct           REAL,
    cpu_kernel_pct         REAL,
    cpu_iowait_pct         REAL,
    cpu_steal_pct          REAL,
    cpu_idle_pct           REAL,
    run_queue_tasks        INTEGER NOT NULL,
    blocked_tasks          INTEGER NOT NULL,
    mem_free_bytes         INTEGER NOT NULL,
    mem_cached_bytes       INTEGER NOT NULL,
    mem_dirty_bytes        INTEGER NOT NULL,
    pgpgin_per_s           REAL,
    pgpgout_per_s          REAL,
    pswpin_per_s           REAL,
    pswpout_per_s          REAL,
    disk_read_bytes_per_s  REAL,
    disk_write_bytes_per_s REAL,
    ctxt_per_s             REAL
);
CREATE INDEX samples_cell_id ON samples(cell_id);

CREATE TABLE latencies (
    cell_id        INTEGER NOT NULL REFERENCES cells(id) ON DELETE CASCADE,
    op             TEXT    NOT NULL,
    count          INTEGER NOT NULL,
    mean_ns        REAL    NOT NULL,
    p50_ns         INTEGER NOT NULL,
    p90_ns         INTEGER NOT NULL,
    p99_ns         INTEGER NOT NULL,
    max_ns         INTEGER NOT NULL,
    histogram_json TEXT    NOT NULL
);
CREATE INDEX latencies_cell_id ON latencies(cell_id);
";

/// Version 2: what each cell's variant set on the machine (setting → value, JSON object).
const V2: &str = "ALTER TABLE cells ADD COLUMN settings_json TEXT NOT NULL DEFAULT '{}';";

/// Version 3: the cell's profile (`run --profile`: top images and symbols, JSON), or NULL.
const V3: &str = "ALTER TABLE cells ADD COLUMN profile_json TEXT;";

/// Version 4: how far the cell can be trusted (issue 21): the CPU other processes and kernel
/// threads used in its window, racehorse's own CPU at sub-tick precision, why it is noisy
/// (NULL: quiet), and which figures were below their resolution (JSON object name → why).
const V4: &str = "
ALTER TABLE cells ADD COLUMN outside_cpu_s REAL;
ALTER TABLE cells ADD COLUMN kthread_cpu_s REAL;
ALTER TABLE cells ADD COLUMN own_cpu_s REAL;
ALTER TABLE cells ADD COLUMN noisy TEXT;
ALTER TABLE cells ADD COLUMN below_resolution_json TEXT NOT NULL DEFAULT '{}';
";

/// Version 6: fleet identity (issue 30): a globally unique id per run (a random UUID; runs
/// stored before get a fresh one here, every `randomblob` drawn per row), the host's name in
/// the inventory (before: the host name) and an optional campaign id.
const V6: &str = "
ALTER TABLE runs ADD COLUMN uuid TEXT;
ALTER TABLE runs ADD COLUMN inventory_name TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN campaign TEXT;
UPDATE runs SET inventory_name = host,
    uuid = lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2)
        || '-' || substr('89ab', 1 + abs(random() % 4), 1) || substr(hex(randomblob(2)), 2) || '-'
        || hex(randomblob(6)));
CREATE UNIQUE INDEX runs_uuid ON runs(uuid);
CREATE INDEX runs_campaign ON runs(campaign);
";

/// Version 5: a cell run inside a KVM guest: its CPU split into Total, Guest and Hypervisor
/// (`CellResult::virt` as JSON; NULL on bare metal).
const V5: &str = "ALTER TABLE cells ADD COLUMN virt_json TEXT;";

/// Version 7: history (issue 41): a run's tags (`run --tag KEY=VALUE`, and the automatic
/// `kernel` and `racehorse` tags), the ledger of change points, and an index that finds a
/// workload's cells across runs.
const V7: &str = "
CREATE TABLE run_tags (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    key    TEXT    NOT NULL,
    value  TEXT    NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE INDEX run_tags_key_value ON run_tags(key, value);
CREATE INDEX cells_workload ON cells(workload);
CREATE TABLE change_points (
    id                 INTEGER PRIMARY KEY,
    uuid               TEXT    NOT NULL UNIQUE,
    series_key         TEXT    NOT NULL,
    host               TEXT    NOT NULL,
    workload           TEXT    NOT NULL,
    variant            TEXT    NOT NULL,
    params_json        TEXT    NOT NULL,
    figure             TEXT    NOT NULL,
    unit               TEXT    NOT NULL,
    before_run_uuid    TEXT    NOT NULL,
    after_run_uuid     TEXT    NOT NULL,
    level_before       REAL    NOT NULL,
    level_after        REAL    NOT NULL,
    ratio              REAL    NOT NULL,
    ratio_lo           REAL,
    ratio_hi           REAL,
    p_value            REAL    NOT NULL,
    direction          TEXT    NOT NULL CHECK (direction IN ('better', 'worse')),
    status             TEXT    NOT NULL CHECK (status IN ('new', 'acknowledged', 'hidden', 'reverted')),
    reason             TEXT,
    link               TEXT,
    detected_at_unix_s INTEGER NOT NULL,
    updated_at_unix_s  INTEGER NOT NULL
);
CREATE INDEX change_points_series ON change_points(series_key);
CREATE INDEX change_points_status ON change_points(status);
";

/// Version 8: bisects (issue 42): each bisect's definition and state, and its steps (a run
/// of a candidate, or a candidate whose build was skipped), so that `bisect --resume` goes on
/// where it stopped.
const V8: &str = "
CREATE TABLE bisects (
    id                INTEGER PRIMARY KEY,
    uuid              TEXT    NOT NULL UNIQUE,
    repo              TEXT,
    good              TEXT    NOT NULL,
    bad               TEXT    NOT NULL,
    candidates_json   TEXT    NOT NULL,
    build             TEXT,
    run_args_json     TEXT    NOT NULL,
    options_json      TEXT    NOT NULL,
    status            TEXT    NOT NULL
                      CHECK (status IN ('running', 'found', 'no-difference', 'undecided', 'unmeasurable', 'failed', 'interrupted')),
    result_json       TEXT,
    started_at_unix_s INTEGER NOT NULL,
    updated_at_unix_s INTEGER NOT NULL
);
CREATE TABLE bisect_steps (
    id         INTEGER PRIMARY KEY,
    bisect_id  INTEGER NOT NULL REFERENCES bisects(id) ON DELETE CASCADE,
    candidate  INTEGER NOT NULL,
    run_id     INTEGER REFERENCES runs(id) ON DELETE SET NULL,
    skipped    INTEGER NOT NULL DEFAULT 0,
    at_unix_s  INTEGER NOT NULL
);
CREATE INDEX bisect_steps_bisect ON bisect_steps(bisect_id);
";

/// The schema version recorded in the database.
pub fn user_version(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("PRAGMA user_version", [], |row| row.get(0))?)
}

/// Brings the database at `path` (used in messages) to [`SCHEMA_VERSION`], one transaction
/// per step, or refuses a database from a newer racehorse. Each step takes the write lock
/// first (an immediate transaction, waiting up to the busy timeout) and reads the version
/// again under it, so that two processes creating the same new store one after the other
/// apply each step once: the second finds the tables the first made (issue 47, case 7).
pub fn migrate(conn: &mut Connection, path: &str) -> Result<()> {
    let found = user_version(conn)?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::TooNew { path: path.to_owned(), found, known: SCHEMA_VERSION });
    }
    let mut version = found;
    while version < SCHEMA_VERSION {
        let fail = |source| StoreError::Migration { path: path.to_owned(), version: version + 1, source };
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(fail)?;
        let now = user_version(&tx)?;
        if now > SCHEMA_VERSION {
            return Err(StoreError::TooNew { path: path.to_owned(), found: now, known: SCHEMA_VERSION });
        }
        if now < SCHEMA_VERSION {
            let step = MIGRATIONS[usize::try_from(now).unwrap_or(0)];
            tx.execute_batch(step).map_err(fail)?;
            tx.pragma_update(None, "user_version", now + 1).map_err(fail)?;
        }
        tx.commit().map_err(fail)?;
        version = now + 1;
    }
    Ok(())
}

/// Creates the database at `path` at schema version `version` (an older one): a fixture of a
/// store written by an earlier racehorse, for tests of the upgrade in place.
pub fn create_at_version(path: &std::path::Path, version: i64) -> Result<()> {
    let shown = path.display().to_string();
    let mut conn =
        Connection::open(path).map_err(|source| StoreError::Open { path: shown.clone(), source })?;
    let steps = usize::try_from(version).unwrap_or(0).min(MIGRATIONS.len());
    for (i, step) in MIGRATIONS.iter().enumerate().take(steps) {
        let fail = |source| StoreError::Migration { path: shown.clone(), version: i as i64 + 1, source };
        let tx = conn.transaction().map_err(fail)?;
        tx.execute_batch(step).map_err(fail)?;
        tx.pragma_update(None, "user_version", i as i64 + 1).map_err(fail)?;
        tx.commit().map_err(fail)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrates_an_empty_database_to_the_current_version() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(user_version(&conn).unwrap(), 0);
        migrate(&mut conn, ":memory:").unwrap();
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
        for table in ["runs", "cells", "samples", "latencies"] {
            let n: i64 = conn
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                    [table],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(n, 1, "table {table} missing");
        }
        // Running again is a no-op.
        migrate(&mut conn, ":memory:").unwrap();
        assert_eq!(user_version(&conn).unwrap(), SCHEMA_VERSION);
    }

    #[test]
    fn a_version_1_database_gains_the_settings_column() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(V1).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute_batch(
            "INSERT INTO runs (label, started_at_unix_s, status, host, command, suite_json, env_json, \
             exclusivity_json, racehorse_version, cpu_method) VALUES ('a', 0, 'complete', 'h', 'c', '[]', '{}', \
             '{}', '0', 'none');
             INSERT INTO cells (run_id, idx, workload, variant, rep, params_json, match_key, status, unit, \
             window_ns, ops, bytes_read, bytes_written, wl_cpu_method, cpus_online, extra_json, \
             finished_at_unix_s) VALUES (1, 0, 'null', 'default', 1, '{}', 'k', 'ok', 'ops', 0, 0, 0, 0, \
             'none', 1, '{}', 0);",
        )
        .unwrap();
        migrate(&mut conn, "old.db").unwrap();
        let settings: String = conn.query_row("SELECT settings_json FROM cells", [], |r| r.get(0)).unwrap();
        assert_eq!((settings.as_str(), user_version(&conn).unwrap()), ("{}", SCHEMA_VERSION));
    }

    #[test]
    fn a_version_4_database_gives_every_run_its_own_uuid_and_keeps_its_host() {
        let mut conn = Connection::open_in_memory().unwrap();
        for (i, step) in MIGRATIONS[..4].iter().enumerate() {
            conn.execute_batch(step).unwrap();
            conn.pragma_update(None, "user_version", i as i64 + 1).unwrap();
        }
        for host in ["a", "b", "c"] {
            conn.execute(
                "INSERT INTO runs (label, started_at_unix_s, status, host, command, suite_json, env_json, \
                 exclusivity_json, racehorse_version, cpu_method) VALUES ('l', 0, 'complete', ?1, 'c', '[]', \
                 '{}', '{}', '0', 'none')",
                [host],
            )
            .unwrap();
        }
        migrate(&mut conn, "old.db").unwrap();
        let mut stmt = conn.prepare("SELECT uuid, inventory_name, campaign FROM runs ORDER BY id").unwrap();
        let rows: Vec<(String, String, Option<String>)> = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        let names: Vec<&str> = rows.iter().map(|r| r.1.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"], "the inventory name of an old run is its host");
        assert!(
            rows.iter().all(|r| crate::fleet::is_uuid(&r.0) && &r.0[14..15] == "4" && r.2.is_none()),
            "{rows:?}"
        );
        assert!(rows[0].0 != rows[1].0 && rows[1].0 != rows[2].0, "one uuid per run: {rows:?}");
    }

    #[test]
    fn refuses_a_newer_schema() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
        let err = migrate(&mut conn, "x.db").unwrap_err();
        assert!(matches!(err, StoreError::TooNew { .. }));
        assert!(err.to_string().contains("created by a newer racehorse; upgrade"), "{err}");
    }
}
