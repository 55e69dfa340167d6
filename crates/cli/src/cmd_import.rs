//! `racehorse import FILE…`: loads cells that a run kept outside the store (written when the
//! store could not take them, e.g. a full disk) into the store, under their run and position.

use crate::args::{Cli, ImportArgs};
use crate::cmd_run::open_store;
use crate::{CmdResult, Failure};
use racehorse_core::CellResult;
use racehorse_runner::lifecycle::SPILL_FORMAT;
use std::path::Path;

/// One kept cell: its run, its position and the cell.
fn read_kept(path: &Path) -> Result<(i64, usize, CellResult), Failure> {
    let bad = |why: String| Failure::usage(format!("{}: {why}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
    let doc: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
    if doc["format"] != SPILL_FORMAT || doc["version"] != 1 {
        return Err(bad(format!(
            "not a kept cell (format {SPILL_FORMAT}, version 1); `import` loads the files a run names when its \
             store could not be written"
        )));
    }
    let run_id = doc["run_id"].as_i64().ok_or_else(|| bad("no run_id".into()))?;
    let idx =
        doc["idx"].as_u64().and_then(|i| usize::try_from(i).ok()).ok_or_else(|| bad("no idx".into()))?;
    let cell = serde_json::from_value(doc["cell"].clone()).map_err(|e| bad(format!("cell: {e}")))?;
    Ok((run_id, idx, cell))
}

pub fn import(cli: &Cli, a: &ImportArgs) -> CmdResult {
    let kept: Vec<_> = a.files.iter().map(|f| read_kept(f).map(|k| (f, k))).collect::<Result<_, _>>()?;
    let store = open_store(cli)?;
    for (file, (run_id, idx, cell)) in kept {
        store.insert_cell(run_id, idx, &cell).map_err(|e| {
            anyhow::anyhow!(
                "{}: cannot load cell {} into run {run_id}: {e}",
                file.display(),
                cell.spec.label()
            )
        })?;
        println!(
            "imported {} into run {run_id} at position {idx} (from {})",
            cell.spec.label(),
            file.display()
        );
        let _ = std::fs::remove_file(file);
    }
    Ok(0)
}
