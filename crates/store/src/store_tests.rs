//! Tests of opening, migrating and the run-level API of the store.

use super::*;
use crate::testutil::{full_cell, new_run};

#[test]
fn open_creates_parent_dirs_and_migrates() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/racehorse.db");
    let store = Store::open(&path).unwrap();
    assert!(path.exists());
    assert_eq!(schema::user_version(&store.conn).unwrap(), schema::SCHEMA_VERSION);
    let mode: String = store.conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    drop(store);
    Store::open(&path).unwrap();
}

#[test]
fn open_refuses_a_database_from_a_newer_racehorse() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    let conn = Connection::open(&path).unwrap();
    conn.pragma_update(None, "user_version", schema::SCHEMA_VERSION + 1).unwrap();
    drop(conn);
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::TooNew { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("created by a newer racehorse; upgrade") && msg.contains("new.db"), "{msg}");
}

#[test]
fn default_path_follows_xdg() {
    let p = default_path_from(Some("/data".into()), Some("/home/u".into()));
    assert_eq!(p, PathBuf::from("/data/racehorse/racehorse.db"));
    let p = default_path_from(Some("relative".into()), Some("/home/u".into()));
    assert_eq!(p, PathBuf::from("/home/u/.local/share/racehorse/racehorse.db"));
    assert_eq!(default_path_from(None, None), PathBuf::from("racehorse.db"));
}

#[test]
fn create_finish_and_list_runs() {
    let store = Store::open_in_memory().unwrap();
    let a = store.create_run(&new_run("base")).unwrap();
    let b = store.create_run(&new_run("new")).unwrap();
    store.insert_cell(b, 0, &full_cell(1)).unwrap();
    store.insert_cell(b, 1, &crate::testutil::failed_cell()).unwrap();
    store.finish_run(b, RunStatus::Partial).unwrap();
    store.set_run_env(b, r#"{"kernel":"6.9"}"#).unwrap();
    let runs = store.list_runs().unwrap();
    assert_eq!(runs.iter().map(|r| r.id).collect::<Vec<_>>(), vec![b, a]);
    let rb = &runs[0];
    assert_eq!((rb.status, rb.cells_ok, rb.cells_failed), (RunStatus::Partial, 1, 1));
    assert!(rb.finished_at_unix_s.is_some());
    assert_eq!(rb.env_json, r#"{"kernel":"6.9"}"#);
    assert_eq!(runs[1].status, RunStatus::Running);
    assert_eq!(runs[1].finished_at_unix_s, None);
    let pid: i64 = store.conn.query_row("SELECT pid FROM runs WHERE id = ?1", [a], |r| r.get(0)).unwrap();
    assert_eq!(pid, i64::from(std::process::id()));
    assert!(matches!(store.finish_run(999, RunStatus::Complete), Err(StoreError::UnknownRun { .. })));
}

#[test]
fn resolve_run_by_id_and_label_newest_wins() {
    let store = Store::open_in_memory().unwrap();
    let first = store.create_run(&new_run("baseline")).unwrap();
    let second = store.create_run(&new_run("baseline")).unwrap();
    let other = store.create_run(&new_run("kernel-6.9")).unwrap();
    assert_eq!(store.resolve_run(&first.to_string()).unwrap().id, first);
    assert_eq!(store.resolve_run("baseline").unwrap().id, second);
    assert_eq!(store.resolve_run(" kernel-6.9 ").unwrap().id, other);
    // A numeric label that is not an id still resolves as a label.
    let numeric = store.create_run(&new_run("2024")).unwrap();
    assert_eq!(store.resolve_run("2024").unwrap().id, numeric);
}

#[test]
fn resolve_unknown_run_suggests_close_matches() {
    let store = Store::open_in_memory().unwrap();
    store.create_run(&new_run("baseline")).unwrap();
    store.create_run(&new_run("kernel-6.9")).unwrap();
    match store.resolve_run("basline") {
        Err(StoreError::UnknownRun { key, suggestions }) => {
            assert_eq!(key, "basline");
            assert_eq!(suggestions, vec!["baseline".to_string()]);
        }
        other => panic!("expected UnknownRun, got {other:?}"),
    }
    let err = store.resolve_run("kernel").unwrap_err();
    assert!(err.to_string().contains("did you mean 'kernel-6.9'"), "{err}");
    match store.resolve_run("3") {
        Err(StoreError::UnknownRun { suggestions, .. }) => assert!(suggestions.contains(&"2".to_string())),
        other => panic!("expected UnknownRun, got {other:?}"),
    }
}

#[test]
fn runs_of_dead_processes_become_interrupted() {
    let store = Store::open_in_memory().unwrap();
    let dead = store.create_run(&new_run("killed")).unwrap();
    let alive = store.create_run(&new_run("ours")).unwrap();
    let done = store.create_run(&new_run("done")).unwrap();
    store.finish_run(done, RunStatus::Complete).unwrap();
    store.insert_cell(dead, 0, &full_cell(1)).unwrap();
    store.conn.execute("UPDATE runs SET pid = 999999999 WHERE id IN (?1, ?2)", [dead, done]).unwrap();

    assert_eq!(store.mark_abandoned_runs().unwrap(), vec![dead]);
    let run = store.resolve_run(&dead.to_string()).unwrap();
    assert_eq!(run.status, RunStatus::Interrupted);
    assert!(run.finished_at_unix_s.is_some(), "finished at its last cell");
    assert_eq!(store.resolve_run(&alive.to_string()).unwrap().status, RunStatus::Running);
    assert_eq!(store.resolve_run(&done.to_string()).unwrap().status, RunStatus::Complete);
    assert!(store.mark_abandoned_runs().unwrap().is_empty());
}

#[test]
fn process_liveness() {
    assert!(process_alive(i64::from(std::process::id())));
    assert!(!process_alive(999_999_999));
    assert!(!process_alive(0));
}

/// Issue 23, case 4: a store on read-only media could not be listed, shown or exported.
#[test]
fn a_read_only_store_is_read_without_writing_anything() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rh.db");
    {
        let store = Store::open(&path).unwrap();
        let id = store.create_run(&crate::testutil::new_run("ro")).unwrap();
        store.finish_run(id, racehorse_core::RunStatus::Complete).unwrap();
    }
    let before: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let store = Store::open_read_only(&path);
    let runs = store.as_ref().map(|s| s.list_runs().unwrap().len());
    let status = store.as_ref().map(|s| s.list_runs().unwrap()[0].status);
    let after: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(runs.unwrap(), 1);
    assert_eq!(status.unwrap(), racehorse_core::RunStatus::Complete);
    assert_eq!(before.len(), after.len(), "no journal or shm file made: {after:?}");
}

/// Issue 23, case 6: `--db /dev/null list` created /dev/null-journal.
#[test]
fn a_device_or_directory_is_not_a_store() {
    for path in ["/dev/null", "/tmp"] {
        let e = Store::open(std::path::Path::new(path)).map(|_| ()).expect_err("refused").to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let e =
            Store::open_read_only(std::path::Path::new(path)).map(|_| ()).expect_err("refused").to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }
    assert!(!std::path::Path::new("/dev/null-journal").exists());
    let missing =
        Store::open_read_only(std::path::Path::new("/nonexistent/rh.db")).map(|_| ()).expect_err("refused");
    assert!(missing.to_string().contains("nothing was run"), "{missing}");
}

#[test]
fn an_older_schema_is_read_through_a_copy_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        let store = Store::open(&path).unwrap();
        store.create_run(&crate::testutil::new_run("old")).unwrap();
        store.conn.pragma_update(None, "user_version", 3).unwrap();
        for col in
            ["outside_cpu_s", "kthread_cpu_s", "own_cpu_s", "noisy", "below_resolution_json", "virt_json"]
        {
            store.conn.execute_batch(&format!("ALTER TABLE cells DROP COLUMN {col};")).unwrap();
        }
        store.conn.execute_batch("DROP INDEX runs_uuid; DROP INDEX runs_campaign;").unwrap();
        // What versions 7 and later added.
        store
            .conn
            .execute_batch("DROP TABLE run_tags; DROP TABLE change_points; DROP INDEX cells_workload;")
            .unwrap();
        store.conn.execute_batch("DROP TABLE bisect_steps; DROP TABLE bisects;").unwrap();
        for col in ["uuid", "inventory_name", "campaign"] {
            store.conn.execute_batch(&format!("ALTER TABLE runs DROP COLUMN {col};")).unwrap();
        }
    }
    let store = Store::open_read_only(&path).unwrap();
    let runs = store.list_runs().unwrap();
    assert_eq!(runs.len(), 1);
    assert!(crate::fleet::is_uuid(&runs[0].uuid) && runs[0].inventory_name == "testhost", "{runs:?}");
    assert!(store.run_cells(1).unwrap().is_empty());
    let conn = rusqlite::Connection::open(&path).unwrap();
    assert_eq!(schema::user_version(&conn).unwrap(), 3, "the file is not migrated");
}

/// A run whose process is gone reads as interrupted through a read-only store too, and the
/// file is not changed.
#[test]
fn a_read_only_store_shows_abandoned_runs_as_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rh.db");
    {
        let store = Store::open(&path).unwrap();
        store.create_run(&crate::testutil::new_run("gone")).unwrap();
        store.conn.execute("UPDATE runs SET pid = 0", []).unwrap();
    }
    let ro = Store::open_read_only(&path).unwrap();
    assert_eq!(ro.list_runs().unwrap()[0].status, racehorse_core::RunStatus::Interrupted);
    assert_eq!(ro.resolve_run("gone").unwrap().status, racehorse_core::RunStatus::Interrupted);
    drop(ro);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let status: String = conn.query_row("SELECT status FROM runs", [], |r| r.get(0)).unwrap();
    assert_eq!(status, "running", "the file is untouched");
}

/// Issue 47, case 7: processes that open a store that does not exist yet at the same time
/// all get it ("table runs already exists" or "database is locked" before): the schema is
/// made once, under the write lock, and the others wait for it.
#[test]
fn issue47_first_opens_of_a_new_store_at_once_all_succeed() {
    for round in 0..30 {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.db");
        let openers: Vec<_> = (0..4)
            .map(|_| {
                let p = path.clone();
                std::thread::spawn(move || Store::open(&p).map(|_| ()).map_err(|e| e.to_string()))
            })
            .collect();
        for o in openers {
            if let Err(e) = o.join().unwrap() {
                panic!("round {round}: {e}");
            }
        }
    }
}
