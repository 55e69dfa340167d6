//! Kept cells: written whole, read back, stored into their own run once (issue 47, case 5).

use super::*;
use crate::testutil::{full_cell, new_run};

fn kept_doc(file: &Path) -> Json {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

#[test]
fn a_kept_cell_goes_back_into_its_run_at_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rh.db");
    let store = Store::open(&db).unwrap();
    let id = store.create_run(&new_run("a")).unwrap();
    let uuid = store.run(id).unwrap().unwrap().uuid;
    let file = keep_cell(&db, id, &uuid, 3, &full_cell(1)).unwrap();
    assert!(file.starts_with(dir.path().join("rh.db.spill")), "{}", file.display());
    let kept = read_kept(&kept_doc(&file)).unwrap();
    assert_eq!((kept.run_id, kept.idx, kept.run_uuid.as_deref()), (id, 3, Some(uuid.as_str())));
    assert_eq!(store.import_kept(&kept).unwrap(), KeptOutcome::Stored(id));
    assert_eq!(store.run_cells(id).unwrap().len(), 1);
}

/// Issue 47, case 5: a copy of a kept cell was stored twice at one position, and a cell
/// kept for another store went into whatever run had the same id here.
#[test]
fn issue47_a_kept_cell_is_stored_once_and_only_into_its_own_run() {
    let dir = tempfile::tempdir().unwrap();
    let (db_a, db_b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    let (a, b) = (Store::open(&db_a).unwrap(), Store::open(&db_b).unwrap());
    let id_a = a.create_run(&new_run("a")).unwrap();
    let id_b = b.create_run(&new_run("b")).unwrap();
    assert_eq!(id_a, id_b, "the same id in both stores");
    let uuid = a.run(id_a).unwrap().unwrap().uuid;
    let kept = read_kept(&kept_doc(&keep_cell(&db_a, id_a, &uuid, 0, &full_cell(1)).unwrap())).unwrap();
    let e = b.import_kept(&kept).unwrap_err();
    assert!(matches!(e, StoreError::NotItsStore { .. }) && e.to_string().contains("a.db"), "{e}");
    assert!(b.run_cells(id_b).unwrap().is_empty());
    assert_eq!(a.import_kept(&kept).unwrap(), KeptOutcome::Stored(id_a));
    assert_eq!(a.import_kept(&kept).unwrap(), KeptOutcome::AlreadyStored(id_a));
    assert_eq!(a.run_cells(id_a).unwrap().len(), 1);
}

#[test]
fn version_1_files_go_only_into_the_store_they_name() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rh.db");
    let store = Store::open(&db).unwrap();
    let id = store.create_run(&new_run("a")).unwrap();
    let doc = |store_path: &str| {
        serde_json::json!({"format": SPILL_FORMAT, "version": 1, "store": store_path, "run_id": id, "idx": 0,
                           "cell": full_cell(1)})
    };
    let other = read_kept(&doc("/elsewhere/rh.db")).unwrap();
    assert!(matches!(store.import_kept(&other).unwrap_err(), StoreError::NotItsStore { .. }));
    let mine = read_kept(&doc(db.to_str().unwrap())).unwrap();
    assert_eq!(store.import_kept(&mine).unwrap(), KeptOutcome::Stored(id));
    let no_uuid = serde_json::json!({"format": SPILL_FORMAT, "version": 2, "run_id": id, "idx": 0, "cell": full_cell(1)});
    assert!(read_kept(&no_uuid).unwrap_err().contains("run_uuid"));
}
