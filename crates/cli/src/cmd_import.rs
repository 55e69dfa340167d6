//! `racehorse import FILE…`: loads into the store either a run's JSON export (`racehorse
//! export RUN --format json`, from this or another store) as a new run, or the cells that a
//! run kept outside the store (written when the store could not take them, e.g. a full disk)
//! under their run and position.

use crate::args::{Cli, ImportArgs};
use crate::cmd_run::open_store;
use crate::{CmdResult, Failure};
use racehorse_core::CellResult;
use racehorse_runner::lifecycle::SPILL_FORMAT;
use racehorse_store::{parse_export, ExportedRun, Imported, Store};
use std::path::Path;

/// What one file holds.
enum Input {
    /// A kept cell: its run, its position and the cell.
    Kept(i64, usize, Box<CellResult>),
    Export(Box<ExportedRun>),
}

fn read_input(path: &Path) -> Result<Input, Failure> {
    let bad = |why: String| Failure::usage(format!("{}: {why}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
    if doc["format"] == racehorse_store::export::FORMAT_NAME {
        return parse_export(&text).map(|r| Input::Export(Box::new(r))).map_err(|e| bad(e.to_string()));
    }
    if doc["format"] != SPILL_FORMAT || doc["version"] != 1 {
        return Err(bad(format!(
            "neither a run's JSON export (format {}) nor a kept cell (format {SPILL_FORMAT}, version 1); \
             `import` loads `racehorse export RUN --format json` files and the files a run names when \
             its store could not be written",
            racehorse_store::export::FORMAT_NAME
        )));
    }
    let run_id = doc["run_id"].as_i64().ok_or_else(|| bad("no run_id".into()))?;
    let idx =
        doc["idx"].as_u64().and_then(|i| usize::try_from(i).ok()).ok_or_else(|| bad("no idx".into()))?;
    let cell = serde_json::from_value(doc["cell"].clone()).map_err(|e| bad(format!("cell: {e}")))?;
    Ok(Input::Kept(run_id, idx, Box::new(cell)))
}

fn import_kept(
    store: &Store,
    file: &Path,
    run_id: i64,
    idx: usize,
    cell: &CellResult,
) -> Result<(), Failure> {
    store.insert_cell(run_id, idx, cell).map_err(|e| {
        anyhow::anyhow!("{}: cannot load cell {} into run {run_id}: {e}", file.display(), cell.spec.label())
    })?;
    println!("imported {} into run {run_id} at position {idx} (from {})", cell.spec.label(), file.display());
    let _ = std::fs::remove_file(file);
    Ok(())
}

fn import_export(store: &Store, file: &Path, r: &ExportedRun) -> Result<(), Failure> {
    let name = racehorse_report::escape::escape_control(&format!("'{}' from {}", r.run.label, r.run.host));
    let outcome = store
        .import_run(r)
        .map_err(|e| anyhow::anyhow!("{}: cannot store run {name}: {e}", file.display()))?;
    match outcome {
        Imported::New(id) => println!(
            "imported run {} {name} as run {id} ({} cells, from {})",
            r.source_id,
            r.cells.len(),
            file.display()
        ),
        Imported::AlreadyPresent(id) => println!(
            "run {name} started at {} is already in the store as run {id}; nothing imported (from {})",
            r.started_at_unix_s,
            file.display()
        ),
    }
    if r.latencies_without_histogram > 0 {
        eprintln!(
            "note: {}: {} latency record(s) carry only percentiles (an export from an older racehorse); \
             their latencies were not loaded",
            file.display(),
            r.latencies_without_histogram
        );
    }
    Ok(())
}

pub fn import(cli: &Cli, a: &ImportArgs) -> CmdResult {
    let inputs: Vec<_> = a.files.iter().map(|f| read_input(f).map(|k| (f, k))).collect::<Result<_, _>>()?;
    let store = open_store(cli)?;
    for (file, input) in inputs {
        match input {
            Input::Kept(run_id, idx, cell) => import_kept(&store, file, run_id, idx, &cell)?,
            Input::Export(r) => import_export(&store, file, &r)?,
        }
    }
    Ok(0)
}
