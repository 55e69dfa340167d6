//! The check `load` makes of every file before it writes anything (issue 47, case 6: a good
//! export and a malformed one in one `load` loaded the good one, then failed): each export
//! is read whole, cell by cell, as `import` reads it, and each SQLite store is quick-checked
//! and every run of it read as its export. Nothing is kept: the load reads the files again.
//! (`load` itself checks exports as it prepares them, `prepare`, and stores here.)

use crate::error::CentralError;
use crate::prepare::Input;
use racehorse_store::import_stream::{read_import_file, ImportFile};
use racehorse_store::{parse_export_value, Store};
use std::path::Path;

fn refused(path: &Path, why: impl Into<String>) -> CentralError {
    CentralError::Input { path: path.to_path_buf(), why: why.into() }
}

impl Input {
    /// Reads the whole input as `load` will, keeping nothing; returns how many runs it holds.
    /// Any problem is the input's (a usage error naming the file).
    pub fn check(&self) -> Result<usize, CentralError> {
        match self {
            Input::Export(path) => match read_import_file(path) {
                Ok(ImportFile::Export(_)) => Ok(1),
                Ok(ImportFile::Kept(_)) => Err(refused(
                    path,
                    "a kept cell, not an export: load it into its store with `racehorse import`",
                )),
                // The reader names the file itself.
                Err(why) => Err(refused(path, why.trim_start_matches(&format!("{}: ", path.display())))),
            },
            Input::Store(path) => {
                let store = Store::open_read_only(path).map_err(|e| refused(path, e.to_string()))?;
                store.quick_check().map_err(|e| refused(path, e.to_string()))?;
                let runs = store.list_runs().map_err(|e| refused(path, e.to_string()))?;
                for run in &runs {
                    let why = |e: &dyn std::fmt::Display| refused(path, format!("run {}: {e}", run.id));
                    let cells = store.run_cells(run.id).map_err(|e| why(&e))?;
                    let parts = racehorse_store::history_parts(&store, run).map_err(|e| why(&e))?;
                    let doc = racehorse_store::export_doc_with(run, &parts, &cells);
                    parse_export_value(&doc).map_err(|e| why(&e))?;
                }
                Ok(runs.len())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 47, case 6: an export that passes the header check but not the full one is
    /// refused before anything is loaded, naming the file and the cell.
    #[test]
    fn issue47_a_malformed_export_is_refused_by_the_check() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        let store = Store::open(&db).unwrap();
        let run = racehorse_store::NewRun { label: "x".into(), host: "h".into(), ..Default::default() };
        let id = store.create_run(&run).unwrap();
        let info = store.run(id).unwrap().unwrap();
        let parts = racehorse_store::history_parts(&store, &info).unwrap();
        let mut doc = racehorse_store::export_doc_with(&info, &parts, &[]);
        let good = dir.path().join("good.json");
        std::fs::write(&good, doc.to_string()).unwrap();
        assert_eq!(Input::classify(&good).unwrap().check().unwrap(), 1);
        doc["cells"] = serde_json::json!([{"workload": "null"}]);
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, doc.to_string()).unwrap();
        let input = Input::classify(&bad).expect("the header is fine");
        let e = input.check().unwrap_err();
        assert!(e.is_usage() && e.to_string().starts_with(&format!("{}: cells[0]", bad.display())), "{e}");
        drop(store);
        assert_eq!(Input::classify(&db).unwrap().check().unwrap(), 1);
    }
}
