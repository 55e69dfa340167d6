//! `racehorse import FILE…`: loads into the store either a run's JSON export (`racehorse
//! export RUN --format json`, from this or another store) as a new run, or, for a run
//! already here, what a later export of it adds; or the cells that a run kept outside the
//! store (written when the store could not take them, e.g. a full disk) into their run at
//! their position. Every file is checked before anything is written, and each is read a
//! cell at a time (`racehorse_store::import_stream`).

use crate::args::{Cli, ImportArgs};
use crate::cmd_run::open_store;
use crate::{CmdResult, Failure};
use racehorse_report::escape::escape_control;
use racehorse_store::import_stream::{read_import_file, ImportFile};
use racehorse_store::spill::{KeptCell, KeptOutcome};
use racehorse_store::{ExportedRun, Imported, Store, StoreError};
use std::path::Path;

fn import_kept(store: &Store, file: &Path, kept: &KeptCell) -> Result<(), Failure> {
    let what = format!("cell {} at position {}", escape_control(&kept.cell.spec.label()), kept.idx);
    let fail = |e: StoreError| {
        let msg = format!("{}: cannot load {what}: {e}", file.display());
        match e {
            StoreError::NotItsStore { .. } => Failure::usage(msg),
            _ => anyhow::anyhow!(msg).into(),
        }
    };
    match store.import_kept(kept).map_err(fail)? {
        KeptOutcome::Stored(run_id) => {
            println!("imported {what} into run {run_id} (from {})", file.display());
            let _ = std::fs::remove_file(file);
        }
        KeptOutcome::AlreadyStored(run_id) => println!(
            "run {run_id} already holds a cell at position {}; nothing imported (from {})",
            kept.idx,
            file.display()
        ),
    }
    Ok(())
}

fn import_export(store: &Store, file: &Path, r: &ExportedRun) -> Result<(), Failure> {
    let name = escape_control(&format!("'{}' from {}", r.run.label, r.run.host));
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
        Imported::Updated { id, cells_added } => println!(
            "run {name} started at {} is already in the store as run {id}: added {cells_added} of its {} \
             cells, status {} (from {})",
            r.started_at_unix_s,
            r.cells.len(),
            r.status.as_str(),
            file.display()
        ),
        Imported::AlreadyPresent(id) => println!(
            "run {name} started at {} is already in the store as run {id}; nothing imported (every cell of \
             this export is there) (from {})",
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

fn read(path: &Path) -> Result<ImportFile, Failure> {
    read_import_file(path).map_err(|why| {
        Failure::usage(format!(
            "{why}; `import` loads `racehorse export RUN --format json` files and the files a run names when \
             its store could not be written; nothing was imported"
        ))
    })
}

pub fn import(cli: &Cli, a: &ImportArgs) -> CmdResult {
    // Every file is checked first; with several, each is read again when its turn comes, so
    // that memory holds one file's cells at a time.
    let mut checked = Vec::with_capacity(a.files.len());
    for f in &a.files {
        let file = read(f)?;
        checked.push((a.files.len() == 1).then_some(file));
    }
    let store = open_store(cli)?;
    for (f, file) in a.files.iter().zip(checked) {
        match file.map_or_else(|| read(f), Ok)? {
            ImportFile::Kept(k) => import_kept(&store, f, &k)?,
            ImportFile::Export(r) => import_export(&store, f, &r)?,
        }
    }
    Ok(0)
}
