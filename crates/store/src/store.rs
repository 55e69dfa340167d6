//! The `Store`: opening the SQLite database (WAL, busy timeout, migrations) and the run-level
//! API — create, finish, list, resolve by id or label, and mark runs abandoned by a dead
//! process as interrupted.

use crate::error::{Result, StoreError};
use crate::{resolve, schema};
use racehorse_core::RunStatus;
use rusqlite::{params, Connection, OptionalExtension, Row};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long a writer waits for another process holding the database lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// A racehorse results database.
#[derive(Debug)]
pub struct Store {
    pub(crate) conn: Connection,
    path: String,
}

/// What the runner knows about a run when it starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewRun {
    pub label: String,
    pub host: String,
    pub command: String,
    pub suite_json: String,
    pub env_json: String,
    pub exclusivity_json: String,
    pub racehorse_version: String,
    pub cpu_method: String,
    /// The host's name in the fleet's inventory (`run --inventory-name`); empty: `host`.
    pub inventory_name: String,
    /// The campaign the run belongs to (`run --campaign`), if any.
    pub campaign: Option<String>,
    /// Tags (`run --tag KEY=VALUE` and the automatic ones), checked by `tags::tags_problem`.
    pub tags: Vec<(String, String)>,
}

/// A stored run with counts of its cells.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunInfo {
    pub id: i64,
    pub label: String,
    pub started_at_unix_s: i64,
    pub finished_at_unix_s: Option<i64>,
    pub status: RunStatus,
    pub host: String,
    pub command: String,
    pub suite_json: String,
    pub env_json: String,
    pub exclusivity_json: String,
    pub racehorse_version: String,
    pub cpu_method: String,
    /// Cells with status `ok`.
    pub cells_ok: u32,
    /// Cells with any other status (`failed`, `interrupted`).
    pub cells_failed: u32,
    /// Globally unique id of the run (a UUID made when it was created), kept by export,
    /// import and the central store.
    pub uuid: String,
    /// The host's name in the fleet's inventory (the host name unless given).
    pub inventory_name: String,
    /// The campaign the run belongs to, if any.
    pub campaign: Option<String>,
}

pub(crate) const RUN_COLUMNS: &str =
    "r.id, r.label, r.started_at_unix_s, r.finished_at_unix_s, r.status, r.host, \
     r.command, r.suite_json, r.env_json, r.exclusivity_json, r.racehorse_version, r.cpu_method, \
     (SELECT count(*) FROM cells c WHERE c.run_id = r.id AND c.status = 'ok'), \
     (SELECT count(*) FROM cells c WHERE c.run_id = r.id AND c.status <> 'ok'), \
     r.uuid, r.inventory_name, r.campaign";

/// Default database location: `$XDG_DATA_HOME/racehorse/racehorse.db`, else
/// `~/.local/share/racehorse/racehorse.db`, else `racehorse.db` in the current directory.
pub fn default_path() -> PathBuf {
    default_path_from(std::env::var_os("XDG_DATA_HOME"), std::env::var_os("HOME"))
}

fn default_path_from(xdg_data_home: Option<std::ffi::OsString>, home: Option<std::ffi::OsString>) -> PathBuf {
    // The XDG spec says relative values are invalid and must be ignored.
    let xdg = xdg_data_home.map(PathBuf::from).filter(|p| p.is_absolute());
    let home = home.map(PathBuf::from).filter(|p| p.is_absolute());
    match (xdg, home) {
        (Some(dir), _) => dir.join("racehorse").join("racehorse.db"),
        (None, Some(home)) => home.join(".local/share/racehorse/racehorse.db"),
        (None, None) => PathBuf::from("racehorse.db"),
    }
}

pub(crate) fn now_unix_s() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Reads a text column into an enum, reporting unknown words as a conversion failure.
pub(crate) fn parse_column<T>(
    row: &Row<'_>,
    idx: usize,
    parse: fn(&str) -> Option<T>,
) -> rusqlite::Result<T> {
    let text: String = row.get(idx)?;
    parse(&text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            idx,
            rusqlite::types::Type::Text,
            format!("unknown value '{text}'").into(),
        )
    })
}

pub(crate) fn run_from_row(row: &Row<'_>) -> rusqlite::Result<RunInfo> {
    Ok(RunInfo {
        id: row.get(0)?,
        label: row.get(1)?,
        started_at_unix_s: row.get(2)?,
        finished_at_unix_s: row.get(3)?,
        status: parse_column(row, 4, RunStatus::parse)?,
        host: row.get(5)?,
        command: row.get(6)?,
        suite_json: row.get(7)?,
        env_json: row.get(8)?,
        exclusivity_json: row.get(9)?,
        racehorse_version: row.get(10)?,
        cpu_method: row.get(11)?,
        cells_ok: row.get(12)?,
        cells_failed: row.get(13)?,
        uuid: row.get::<_, Option<String>>(14)?.unwrap_or_default(),
        inventory_name: row.get(15)?,
        campaign: row.get(16)?,
    })
}

/// [`configure_once`], again while another process holds the lock (switching a new store to
/// WAL does not wait for the busy timeout by itself), for at most [`BUSY_TIMEOUT`].
fn configure(conn: &Connection) -> rusqlite::Result<()> {
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match configure_once(conn) {
            Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10))
            }
            done => return done,
        }
    }
}

/// Whether another connection held the lock.
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

fn configure_once(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // journal_mode answers with the mode in force ("memory" for in-memory databases).
    conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
    // In WAL mode, NORMAL keeps every committed cell across a crash of the process; only a
    // power loss can drop the last commits. It avoids an fsync per cell between cells.
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(())
}

/// An existing path that is not a regular file (a device such as /dev/null, a directory)
/// is not a store: SQLite would create `PATH-journal` beside it.
fn check_regular(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            Err(StoreError::NotAStore { path: path.to_path_buf(), why: "not a regular file".into() })
        }
        _ => Ok(()),
    }
}

impl Store {
    /// Opens (creating if needed, with parent directories) the database at `path` for
    /// writing: checks it first ([`crate::health::quick_check`]: a damaged store is refused
    /// before anything is written), then brings its schema up to date (serialised between
    /// processes, see [`schema::migrate`]).
    pub fn open(path: &Path) -> Result<Store> {
        check_regular(path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|source| StoreError::CreateDir { path: dir.to_path_buf(), source })?;
        }
        let shown = path.display().to_string();
        let conn =
            Connection::open(path).map_err(|source| StoreError::Open { path: shown.clone(), source })?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|source| StoreError::Open { path: shown.clone(), source })?;
        crate::health::quick_check(&conn, &shown)?;
        Self::init(conn, shown)
    }

    /// Opens an existing database for reading only: nothing is created, migrated or written
    /// in place, so a store on read-only media, or one that belongs to another user, can be
    /// listed, shown, exported and compared. A store at an older schema version is copied
    /// into memory and brought up to date there.
    pub fn open_read_only(path: &Path) -> Result<Store> {
        check_regular(path)?;
        if !path.exists() {
            let why = "no store here (nothing was run with this --db yet)".into();
            return Err(StoreError::NotAStore { path: path.to_path_buf(), why });
        }
        let shown = path.display().to_string();
        let open_err = |source| StoreError::Open { path: shown.clone(), source };
        let ro = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        // Without a write-ahead log beside it no writer is active: read the file as immutable,
        // which makes no -wal or -shm file (read-only media, another user's store). With one,
        // read it as a reader among writers, and as immutable if even that is impossible.
        let wal = PathBuf::from(format!("{}-wal", path.display()));
        let immutable = || {
            let uri = format!("file:{}?immutable=1", path.display());
            Connection::open_with_flags(uri, ro | rusqlite::OpenFlags::SQLITE_OPEN_URI)
        };
        let shared = || -> rusqlite::Result<Connection> {
            let c = Connection::open_with_flags(path, ro)?;
            c.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))?;
            Ok(c)
        };
        let conn = match wal.exists() {
            true => shared().or_else(|_| immutable()),
            false => immutable(),
        }
        .map_err(open_err)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(open_err)?;
        let store = if schema::user_version(&conn)? == schema::SCHEMA_VERSION {
            // Runs are read through a private copy in memory (TEMP shadows the file's table), so
            // that runs whose process is gone read as interrupted without writing the file.
            conn.execute_batch(
                "PRAGMA temp_store = MEMORY; CREATE TEMP TABLE runs AS SELECT * FROM main.runs;",
            )
            .map_err(open_err)?;
            Store { conn, path: shown }
        } else {
            let mut mem = Connection::open_in_memory().map_err(open_err)?;
            {
                let backup = rusqlite::backup::Backup::new(&conn, &mut mem).map_err(open_err)?;
                backup.run_to_completion(256, Duration::ZERO, None).map_err(open_err)?;
            }
            schema::migrate(&mut mem, &shown)?;
            Store { conn: mem, path: shown }
        };
        store.mark_abandoned_runs()?;
        Ok(store)
    }

    /// A private, empty database in memory (tests, dry runs).
    pub fn open_in_memory() -> Result<Store> {
        let path = ":memory:".to_owned();
        let conn =
            Connection::open_in_memory().map_err(|source| StoreError::Open { path: path.clone(), source })?;
        Self::init(conn, path)
    }

    fn init(mut conn: Connection, path: String) -> Result<Store> {
        configure(&conn).map_err(|source| StoreError::Open { path: path.clone(), source })?;
        schema::migrate(&mut conn, &path)?;
        Ok(Store { conn, path })
    }

    /// SQLite's quick check of the whole store (see [`crate::health::quick_check`]).
    pub fn quick_check(&self) -> Result<()> {
        crate::health::quick_check(&self.conn, &self.path)
    }

    /// Where the database lives (as given to `open`, or `:memory:`).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Records a new run in state `running`, owned by this process, with a new random UUID;
    /// returns its id.
    pub fn create_run(&self, run: &NewRun) -> Result<i64> {
        let uuid = crate::fleet::new_uuid().map_err(StoreError::Random)?;
        let inventory = if run.inventory_name.is_empty() { &run.host } else { &run.inventory_name };
        self.conn.execute(
            "INSERT INTO runs (label, started_at_unix_s, status, host, command, suite_json, env_json, \
             exclusivity_json, racehorse_version, cpu_method, pid, uuid, inventory_name, campaign) \
             VALUES (?1, ?2, 'running', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![
                run.label,
                now_unix_s(),
                run.host,
                run.command,
                run.suite_json,
                run.env_json,
                run.exclusivity_json,
                run.racehorse_version,
                run.cpu_method,
                i64::from(std::process::id()),
                uuid,
                inventory,
                run.campaign,
            ],
        )?;
        let id = self.conn.last_insert_rowid();
        if !run.tags.is_empty() {
            self.set_run_tags(id, &run.tags)?;
        }
        Ok(id)
    }

    /// Sets the final status of a run and its finish time.
    pub fn finish_run(&self, run_id: i64, status: RunStatus) -> Result<()> {
        let n = self.conn.execute(
            "UPDATE runs SET status = ?1, finished_at_unix_s = ?2 WHERE id = ?3",
            params![status.as_str(), now_unix_s(), run_id],
        )?;
        expect_one_run(n, run_id)
    }

    /// Replaces the run's captured environment (captured after the run was created).
    pub fn set_run_env(&self, run_id: i64, env_json: &str) -> Result<()> {
        let n =
            self.conn.execute("UPDATE runs SET env_json = ?1 WHERE id = ?2", params![env_json, run_id])?;
        expect_one_run(n, run_id)
    }

    /// All runs, newest first.
    pub fn list_runs(&self) -> Result<Vec<RunInfo>> {
        let mut stmt = self.conn.prepare(&format!("SELECT {RUN_COLUMNS} FROM runs r ORDER BY r.id DESC"))?;
        let rows = stmt.query_map([], run_from_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// The run with this id.
    pub fn run(&self, run_id: i64) -> Result<Option<RunInfo>> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs r WHERE r.id = ?1");
        Ok(self.conn.query_row(&sql, [run_id], run_from_row).optional()?)
    }

    /// Finds a run by numeric id, else by label (the newest run with that label). An unknown
    /// key yields [`StoreError::UnknownRun`] with close matches among labels and ids.
    pub fn resolve_run(&self, key: &str) -> Result<RunInfo> {
        let key = key.trim();
        if let Ok(id) = key.parse::<i64>() {
            if let Some(run) = self.run(id)? {
                return Ok(run);
            }
        }
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs r WHERE r.label = ?1 ORDER BY r.id DESC LIMIT 1");
        if let Some(run) = self.conn.query_row(&sql, [key], run_from_row).optional()? {
            return Ok(run);
        }
        if let Some(run) = self.run_by_uuid_prefix(key)? {
            return Ok(run);
        }
        let mut candidates: Vec<String> = Vec::new();
        let mut stmt = self.conn.prepare("SELECT label, max(id) FROM runs GROUP BY label ORDER BY 2 DESC")?;
        for label in stmt.query_map([], |row| row.get::<_, String>(0))? {
            candidates.push(label?);
        }
        let mut stmt = self.conn.prepare("SELECT id FROM runs ORDER BY id DESC")?;
        for id in stmt.query_map([], |row| row.get::<_, i64>(0))? {
            candidates.push(id?.to_string());
        }
        Err(StoreError::UnknownRun {
            key: key.to_owned(),
            suggestions: resolve::suggestions(key, &candidates),
        })
    }

    /// The one run whose UUID starts with `prefix` (at least 8 hexadecimal digits and
    /// dashes), or None when no run or several do.
    pub fn run_by_uuid_prefix(&self, prefix: &str) -> Result<Option<RunInfo>> {
        let prefix = prefix.to_ascii_lowercase();
        if prefix.len() < 8 || !prefix.bytes().all(|c| c.is_ascii_hexdigit() || c == b'-') {
            return Ok(None);
        }
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs r WHERE substr(r.uuid, 1, ?2) = ?1 LIMIT 2");
        let mut stmt = self.conn.prepare(&sql)?;
        let found = stmt
            .query_map(params![prefix, prefix.len() as i64], run_from_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(if found.len() == 1 { found.into_iter().next() } else { None })
    }

    /// Marks runs still `running` whose process is gone (killed, machine rebooted) as
    /// `interrupted`, finished at their last cell's time; returns their ids. Call at startup.
    pub fn mark_abandoned_runs(&self) -> Result<Vec<i64>> {
        let boot = boot_time_unix_s();
        let mut stmt =
            self.conn.prepare("SELECT id, pid, started_at_unix_s FROM runs WHERE status = 'running'")?;
        let running = stmt
            .query_map([], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, Option<i64>>(1)?, row.get::<_, i64>(2)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let mut marked = Vec::new();
        for (id, pid, started) in running {
            let before_boot = boot.is_some_and(|b| started < b);
            if before_boot || !pid.is_some_and(process_alive) {
                let n = self.conn.execute(
                    "UPDATE runs SET status = 'interrupted', finished_at_unix_s = \
                     (SELECT max(finished_at_unix_s) FROM cells WHERE run_id = ?1) \
                     WHERE id = ?1 AND status = 'running'",
                    [id],
                )?;
                if n == 1 {
                    marked.push(id);
                }
            }
        }
        Ok(marked)
    }
}

fn expect_one_run(changed: usize, run_id: i64) -> Result<()> {
    if changed == 0 {
        return Err(StoreError::UnknownRun { key: run_id.to_string(), suggestions: Vec::new() });
    }
    Ok(())
}

/// Whether `pid` names a live (not zombie) process on this machine.
fn process_alive(pid: i64) -> bool {
    if pid <= 0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state letter follows the parenthesised command name, which may hold spaces.
        Ok(stat) => match stat.rfind(')').and_then(|i| stat[i + 1..].split_whitespace().next()) {
            Some(state) => state != "Z" && state != "X",
            None => true,
        },
        Err(_) => false,
    }
}

/// When the machine booted (`btime` of /proc/stat), to see runs from before a reboot.
fn boot_time_unix_s() -> Option<i64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    stat.lines().find_map(|line| line.strip_prefix("btime ")).and_then(|v| v.trim().parse().ok())
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
