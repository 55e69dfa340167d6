//! Loading a JSON export (contract `racehorse-run` v1, docs/formats.md) into a store as a new
//! run with its host, label, environment and cells, so that runs move between stores. A run
//! already in the store (same UUID; for exports without one, same host, start second, label,
//! command and racehorse version) is not loaded twice: a later export of it adds only its
//! new cells and status (`import_merge`).

use crate::cells::{insert_cell_row, insert_latencies, parse_cell_status, parse_cpu_method};
use crate::error::Result;
use crate::export::{FORMAT_NAME, FORMAT_VERSION};
use crate::store::{NewRun, Store};
use racehorse_core::{
    CellQuality, CellResult, CellSpec, CpuUsage, LatencyHistogram, Nanos, OpStats, Params, RunStatus, Value,
    WorkUnit, WorkloadCpu,
};
use rusqlite::{params, OptionalExtension};
use serde::Deserialize;
use serde_json::Value as Json;

/// Why a file is not an export this version can load.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ImportError {
    #[error("not a racehorse export (its \"format\" is {found}, not \"{FORMAT_NAME}\")")]
    NotAnExport { found: String },
    #[error(
        "export version {found} is not known to this racehorse (it reads version {FORMAT_VERSION}); \
         import it with the racehorse that wrote it, or a newer one"
    )]
    UnknownVersion { found: String },
    #[error("{field}: {why}")]
    Field { field: String, why: String },
}

/// A run read from an export, ready to be stored.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportedRun {
    pub run: NewRun,
    /// The run's id in the store it was exported from.
    pub source_id: i64,
    /// The run's globally unique id: the export's `uuid`, or for an export written before
    /// runs had one, a stable id derived from its host, start, label, command and version.
    pub uuid: String,
    /// Whether the export carried the UUID (false: derived, an export from before UUIDs).
    pub uuid_given: bool,
    pub started_at_unix_s: i64,
    pub finished_at_unix_s: Option<i64>,
    pub status: RunStatus,
    pub cells: Vec<CellResult>,
    /// Operations whose latencies the export gave only as percentiles (exports written before
    /// histograms were exported): their latencies are not loaded.
    pub latencies_without_histogram: usize,
    /// The ledger's change points the export carries (none in exports before history).
    pub change_points: Vec<crate::ledger::ChangePointRecord>,
}

/// What [`Store::import_run`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Imported {
    /// Stored as this new run id.
    New(i64),
    /// The run is already in the store under this id; nothing was written.
    AlreadyPresent(i64),
    /// The run is already in the store under this id, and this (later) export added its
    /// cells not yet stored, or its further status (see `import_merge`).
    Updated { id: i64, cells_added: usize },
}

pub(crate) fn field(name: &str, why: impl Into<String>) -> ImportError {
    ImportError::Field { field: name.to_string(), why: why.into() }
}

fn text(v: &Json, name: &str) -> std::result::Result<String, ImportError> {
    v[name].as_str().map(str::to_string).ok_or_else(|| field(name, "missing or not text"))
}

fn int(v: &Json, name: &str) -> std::result::Result<i64, ImportError> {
    v[name].as_i64().ok_or_else(|| field(name, "missing or not an integer"))
}

fn uint(v: &Json, name: &str) -> std::result::Result<u64, ImportError> {
    v[name].as_u64().ok_or_else(|| field(name, "missing or not a count"))
}

/// A number; null (how the export writes a non-finite one) reads back as NaN.
fn real(v: &Json, name: &str) -> std::result::Result<f64, ImportError> {
    match &v[name] {
        Json::Null => Ok(f64::NAN),
        n => n.as_f64().ok_or_else(|| field(name, "not a number")),
    }
}

fn opt_real(v: &Json, name: &str) -> Option<f64> {
    v[name].as_f64()
}

/// An embedded JSON column back as the text the store keeps ("" for null).
fn embedded_text(v: &Json) -> String {
    match v {
        Json::Null => String::new(),
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Reads an export's text: the run and its cells.
pub fn parse_export(text_in: &str) -> std::result::Result<ExportedRun, ImportError> {
    let doc: Json =
        serde_json::from_str(text_in).map_err(|e| field("(document)", format!("not JSON: {e}")))?;
    parse_export_value(&doc)
}

/// Reads an export already parsed as JSON: the run and its cells.
pub fn parse_export_value(doc: &Json) -> std::result::Result<ExportedRun, ImportError> {
    check_format(doc)?;
    let mut latencies_without_histogram = 0;
    let cells = doc["cells"]
        .as_array()
        .ok_or_else(|| field("cells", "missing or not a list"))?
        .iter()
        .enumerate()
        .map(|(i, c)| {
            cell(c, &mut latencies_without_histogram)
                .map_err(|e| field(&format!("cells[{i}]"), e.to_string()))
        })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    assemble(doc, cells, latencies_without_histogram)
}

/// An export's `format` and `version` are ones this racehorse reads.
pub(crate) fn check_format(doc: &Json) -> std::result::Result<(), ImportError> {
    if doc["format"] != FORMAT_NAME {
        return Err(ImportError::NotAnExport { found: doc["format"].to_string() });
    }
    if doc["version"] != FORMAT_VERSION {
        return Err(ImportError::UnknownVersion { found: doc["version"].to_string() });
    }
    Ok(())
}

/// The run of an export (`doc`: its fields; its cells already read), every text within
/// its limits (`crate::limits`).
pub(crate) fn assemble(
    doc: &Json,
    cells: Vec<CellResult>,
    latencies_without_histogram: usize,
) -> std::result::Result<ExportedRun, ImportError> {
    let r = &doc["run"];
    let status = RunStatus::parse(&text(r, "status")?).ok_or_else(|| field("run.status", "unknown"))?;
    let run = NewRun {
        label: text(r, "label")?,
        host: text(r, "host")?,
        command: text(r, "command")?,
        suite_json: embedded_text(&r["suite"]),
        env_json: embedded_text(&r["env"]),
        exclusivity_json: embedded_text(&r["exclusivity"]),
        racehorse_version: text(r, "racehorse_version")?,
        cpu_method: text(r, "cpu_method")?,
        inventory_name: r["inventory_name"].as_str().unwrap_or_default().to_string(),
        campaign: r["campaign"].as_str().map(str::to_string),
        tags: tags_of(&r["tags"])?,
    };
    let started_at_unix_s = int(r, "started_at_unix_s")?;
    let uuid = match &r["uuid"] {
        Json::Null => crate::fleet::derived_uuid(&[
            &run.host,
            &started_at_unix_s.to_string(),
            &run.label,
            &run.command,
            &run.racehorse_version,
        ]),
        Json::String(u) if crate::fleet::is_uuid(u) => u.to_ascii_lowercase(),
        _ => return Err(field("run.uuid", "not a UUID")),
    };
    if let Some(why) = crate::limits::run_problem(&run) {
        return Err(field("run", why));
    }
    let problem = cells.iter().enumerate().find_map(|(i, c)| crate::limits::cell_problem(c).map(|w| (i, w)));
    if let Some((i, why)) = problem {
        return Err(field(&format!("cells[{i}]"), why));
    }
    Ok(ExportedRun {
        run,
        source_id: int(r, "id")?,
        uuid_given: !r["uuid"].is_null(),
        uuid,
        started_at_unix_s,
        finished_at_unix_s: r["finished_at_unix_s"].as_i64(),
        status,
        cells,
        latencies_without_histogram,
        change_points: change_points_of(&doc["change_points"])?,
    })
}

/// The run's tags (absent before history: none), checked as `run --tag` checks them.
fn tags_of(v: &Json) -> std::result::Result<Vec<(String, String)>, ImportError> {
    let tags: Vec<(String, String)> = match v {
        Json::Null => Vec::new(),
        Json::Object(m) => m
            .iter()
            .map(|(k, v)| {
                v.as_str()
                    .map(|s| (k.clone(), s.to_string()))
                    .ok_or_else(|| field("run.tags", "a tag value is text"))
            })
            .collect::<std::result::Result<_, _>>()?,
        _ => return Err(field("run.tags", "an object of KEY: VALUE")),
    };
    match crate::tags::tags_problem(&tags) {
        Some(why) => Err(field("run.tags", why)),
        None => Ok(tags),
    }
}

/// The change points an export carries (absent before history: none).
fn change_points_of(v: &Json) -> std::result::Result<Vec<crate::ledger::ChangePointRecord>, ImportError> {
    match v {
        Json::Null => Ok(Vec::new()),
        v => Deserialize::deserialize(v).map_err(|e| field("change_points", e.to_string())),
    }
}

fn param(name: &str, v: &Json) -> std::result::Result<Value, ImportError> {
    Ok(match v {
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().ok_or_else(|| field(name, "not a number"))?),
        },
        Json::String(s) => Value::Str(s.clone()),
        _ => return Err(field(name, "a parameter is a bool, number or text")),
    })
}

pub(crate) fn cell(c: &Json, without_histogram: &mut usize) -> std::result::Result<CellResult, ImportError> {
    let mut params = Params::new();
    for (k, v) in c["params"].as_object().ok_or_else(|| field("params", "missing"))? {
        params.insert(k.clone(), param(k, v)?);
    }
    let rep = u32::try_from(uint(c, "rep")?).map_err(|_| field("rep", "too large"))?;
    let spec = CellSpec { workload: text(c, "workload")?, params, variant: text(c, "variant")?, rep };
    let unit = WorkUnit::parse(&text(c, "unit")?).ok_or_else(|| field("unit", "unknown"))?;
    let mut out = CellResult::empty(spec, unit);
    out.status = parse_cell_status(&text(c, "status")?).ok_or_else(|| field("status", "unknown"))?;
    out.error = c["error"].as_str().map(str::to_string);
    out.units = real(c, "units")?;
    out.window = Nanos(uint(c, "window_ns")?);
    out.ops = uint(c, "ops")?;
    out.bytes_read = uint(c, "bytes_read")?;
    out.bytes_written = uint(c, "bytes_written")?;
    let cpu = &c["cpu"];
    out.cpu = CpuUsage {
        user_s: real(cpu, "user_s")?,
        kernel_s: real(cpu, "kernel_s")?,
        steal_s: real(cpu, "steal_s")?,
        iowait_s: real(cpu, "iowait_s")?,
        idle_s: real(cpu, "idle_s")?,
    };
    let wl = &c["workload_cpu"];
    out.workload_cpu = WorkloadCpu {
        user_s: real(wl, "user_s")?,
        kernel_s: real(wl, "kernel_s")?,
        method: parse_cpu_method(&text(wl, "method")?)
            .ok_or_else(|| field("workload_cpu.method", "unknown"))?,
    };
    out.harness_cpu_s = real(c, "harness_cpu_s")?;
    out.cpus_online =
        u32::try_from(uint(c, "cpus_online")?).map_err(|_| field("cpus_online", "too large"))?;
    out.latencies = latencies(&c["latencies"], without_histogram)?;
    if let Some(extra) = c["extra"].as_object() {
        out.extra = extra.iter().map(|(k, v)| (k.clone(), v.as_f64().unwrap_or(f64::NAN))).collect();
    }
    if !c["settings"].is_null() {
        out.settings =
            Deserialize::deserialize(&c["settings"]).map_err(|e| field("settings", e.to_string()))?;
    }
    if !c["profile"].is_null() {
        out.profile = Deserialize::deserialize(&c["profile"]).map_err(|e| field("profile", e.to_string()))?;
    }
    if !c["samples"].is_null() {
        out.samples = Deserialize::deserialize(&c["samples"]).map_err(|e| field("samples", e.to_string()))?;
    }
    out.quality = quality(&c["quality"])?;
    if !c["virt"].is_null() {
        out.virt = Deserialize::deserialize(&c["virt"]).map_err(|e| field("virt", e.to_string()))?;
    }
    Ok(out)
}

/// Latencies with their histogram (exports since histograms were added); those with only
/// percentiles are counted and left out, as a histogram cannot be rebuilt from them.
fn latencies(v: &Json, without_histogram: &mut usize) -> std::result::Result<Vec<OpStats>, ImportError> {
    let mut out = Vec::new();
    for l in v.as_array().map(Vec::as_slice).unwrap_or_default() {
        if l["histogram"].is_null() {
            *without_histogram += 1;
            continue;
        }
        let latency: LatencyHistogram =
            Deserialize::deserialize(&l["histogram"]).map_err(|e| field("latencies", e.to_string()))?;
        out.push(OpStats { op: text(l, "op")?, latency });
    }
    Ok(out)
}

fn quality(q: &Json) -> std::result::Result<CellQuality, ImportError> {
    let below = match &q["below_resolution"] {
        Json::Null => Default::default(),
        b => Deserialize::deserialize(b).map_err(|e| field("quality.below_resolution", e.to_string()))?,
    };
    Ok(CellQuality {
        outside_cpu_s: opt_real(q, "outside_cpu_s"),
        kthread_cpu_s: opt_real(q, "kthread_cpu_s"),
        own_cpu_s: opt_real(q, "own_cpu_s"),
        noisy: q["noisy_reason"].as_str().map(str::to_string),
        below_resolution: below,
    })
}

impl Store {
    /// The run that `r` was exported from, when it is already here: same UUID, or for an
    /// export without one, same host, start second, label, command and racehorse version.
    pub fn find_same_run(&self, r: &ExportedRun) -> Result<Option<i64>> {
        let same_uuid = self
            .conn
            .query_row("SELECT id FROM runs WHERE uuid = ?1", [&r.uuid], |row| row.get(0))
            .optional()?;
        if same_uuid.is_some() || r.uuid_given {
            return Ok(same_uuid);
        }
        Ok(self
            .conn
            .query_row(
                "SELECT id FROM runs WHERE host = ?1 AND started_at_unix_s = ?2 AND label = ?3 \
                 AND command = ?4 AND racehorse_version = ?5 ORDER BY id LIMIT 1",
                params![r.run.host, r.started_at_unix_s, r.run.label, r.run.command, r.run.racehorse_version],
                |row| row.get(0),
            )
            .optional()?)
    }

    /// Stores an exported run and its cells in one transaction as a new run (its own start,
    /// finish and status kept); when the same run is already here, adds what this export
    /// has that the store does not (cells, a further status, tags).
    pub fn import_run(&self, r: &ExportedRun) -> Result<Imported> {
        if let Some(id) = self.find_same_run(r)? {
            let merged = self.merge_run(id, r)?;
            self.merge_change_points(&r.change_points)?;
            return Ok(if merged.cells_added > 0 || merged.run_updated {
                Imported::Updated { id, cells_added: merged.cells_added }
            } else {
                Imported::AlreadyPresent(id)
            });
        }
        let tx = self.conn.unchecked_transaction()?;
        tx.execute(
            "INSERT INTO runs (label, started_at_unix_s, finished_at_unix_s, status, host, command, \
             suite_json, env_json, exclusivity_json, racehorse_version, cpu_method, pid, uuid, \
             inventory_name, campaign) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, NULL, ?12, ?13, ?14)",
            params![
                r.run.label,
                r.started_at_unix_s,
                r.finished_at_unix_s,
                r.status.as_str(),
                r.run.host,
                r.run.command,
                r.run.suite_json,
                r.run.env_json,
                r.run.exclusivity_json,
                r.run.racehorse_version,
                r.run.cpu_method,
                r.uuid,
                if r.run.inventory_name.is_empty() { &r.run.host } else { &r.run.inventory_name },
                r.run.campaign,
            ],
        )?;
        let run_id = tx.last_insert_rowid();
        for (k, v) in &r.run.tags {
            tx.execute(
                "INSERT INTO run_tags (run_id, key, value) VALUES (?1, ?2, ?3)",
                params![run_id, k, v],
            )?;
        }
        for (idx, cell) in r.cells.iter().enumerate() {
            let cell_id = insert_cell_row(&tx, run_id, idx, cell)?;
            crate::cells::insert_samples(&tx, cell_id, &cell.samples)?;
            insert_latencies(&tx, cell_id, &cell.latencies)?;
        }
        tx.commit()?;
        self.merge_change_points(&r.change_points)?;
        Ok(Imported::New(run_id))
    }
}

impl Store {
    /// Merges an export's change points into the ledger (see [`Store::merge_change_point`]).
    fn merge_change_points(&self, points: &[crate::ledger::ChangePointRecord]) -> Result<usize> {
        let mut changed = 0;
        for p in points {
            changed += usize::from(self.merge_change_point(p)?);
        }
        Ok(changed)
    }
}

#[cfg(test)]
#[path = "import_tests.rs"]
mod tests;
