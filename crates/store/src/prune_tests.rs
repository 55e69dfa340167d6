//! Tests of pruning: the plan (every condition, series for --keep-last, guards and --force)
//! and its removal from a SQLite store (every table, kept cells, VACUUM).

use super::*;
use crate::bisects::{BisectRecord, BisectStep};
use crate::ledger::tests::record;
use crate::prune_store::{remove_kept_cells, store_bytes, Removed};
use crate::store::Store;
use crate::testutil::{full_cell, new_run};

fn cand(uuid: &str, label: &str, host: &str, at: i64, points: &[&str]) -> Candidate {
    Candidate {
        uuid: uuid.into(),
        id: at,
        label: label.into(),
        host: host.into(),
        inventory_name: host.into(),
        started_at_unix_s: at,
        cells: points.len() as u64,
        tags: Vec::new(),
        points: points.iter().map(|p| p.to_string()).collect(),
    }
}

fn removed(p: &Plan) -> Vec<&str> {
    p.remove.iter().map(|c| c.uuid.as_str()).collect()
}

#[test]
fn every_condition_must_hold_and_the_oldest_come_first() {
    let mut runs = vec![
        cand("a", "nightly", "h1", 10, &["p"]),
        cand("b", "nightly", "h2", 20, &["p"]),
        cand("c", "other", "h1", 30, &["p"]),
    ];
    runs[1].tags = vec![("branch".into(), "main".into())];
    let none = Guards::new();
    let label = Selector { label: Some("nightly".into()), ..Selector::default() };
    assert_eq!(removed(&plan(&runs, &label, &none, false)), vec!["a", "b"]);
    let tag = Selector { tags: vec![("branch".into(), "main".into())], ..label.clone() };
    assert_eq!(removed(&plan(&runs, &tag, &none, false)), vec!["b"]);
    let old = Selector { older_than_unix_s: Some(30), ..Selector::default() };
    assert_eq!(removed(&plan(&runs, &old, &none, false)), vec!["a", "b"]);
    let host = Selector { host: Some("h1".into()), ..old.clone() };
    assert_eq!(removed(&plan(&runs, &host, &none, false)), vec!["a"]);
    let ids = Selector { runs: Some(["c".to_string()].into()), ..Selector::default() };
    assert_eq!(removed(&plan(&runs, &ids, &none, false)), vec!["c"]);
    assert!(!Selector::default().selects());
    assert!(ids.selects());
}

#[test]
fn keep_last_keeps_the_newest_runs_of_each_point_on_each_host() {
    let runs = vec![
        cand("a1", "n", "h1", 1, &["p", "q"]),
        cand("a2", "n", "h1", 2, &["p"]),
        cand("a3", "n", "h1", 3, &["p"]),
        cand("b1", "n", "h2", 1, &["p"]),
        cand("e1", "empty", "h1", 1, &[]),
        cand("e2", "empty", "h1", 2, &[]),
    ];
    let keep1 = Selector { keep_last: Some(1), ..Selector::default() };
    // a1 is the newest run of point q on h1; b1 the only one of p on h2; e2 the newest empty run.
    assert_eq!(removed(&plan(&runs, &keep1, &Guards::new(), false)), vec!["e1", "a2"]);
    let keep2 = Selector { keep_last: Some(2), ..Selector::default() };
    assert!(plan(&runs, &keep2, &Guards::new(), false).remove.is_empty());
    // Age and count together: old runs go unless they are among the newest of their series.
    let both = Selector { keep_last: Some(1), older_than_unix_s: Some(2), ..Selector::default() };
    assert_eq!(removed(&plan(&runs, &both, &Guards::new(), false)), vec!["e1"]);
}

#[test]
fn guarded_runs_are_kept_with_their_reason_unless_forced_and_running_ones_always() {
    let runs =
        vec![cand("a", "n", "h", 1, &["p"]), cand("b", "n", "h", 2, &["p"]), cand("c", "n", "h", 3, &["p"])];
    let mut guards = Guards::new();
    guard(&mut guards, "a", KeptBecause::ChangePoint { id: 4, side: "before" });
    guard(&mut guards, "b", KeptBecause::Bisect { id: 2 });
    guard(&mut guards, "c", KeptBecause::Running);
    let all = Selector { label: Some("n".into()), ..Selector::default() };
    let p = plan(&runs, &all, &guards, false);
    assert!(p.remove.is_empty());
    assert_eq!(p.kept.len(), 3);
    assert_eq!(p.kept[0].1[0].to_string(), "change point 4 cites it as its before run (--force removes it)");
    let forced = plan(&runs, &all, &guards, true);
    assert_eq!(removed(&forced), vec!["a", "b"]);
    assert_eq!(forced.kept[0].1, vec![KeptBecause::Running]);
}

/// Rows of `table` whose `column` is in the run (or its cells).
fn count(s: &Store, sql: &str, run: i64) -> i64 {
    s.conn.query_row(sql, [run], |r| r.get(0)).unwrap()
}

#[test]
fn removal_takes_every_row_of_a_run_and_guards_come_from_the_ledger_and_bisects() {
    let s = Store::open_in_memory().unwrap();
    let ids: Vec<i64> = (0..4).map(|_| s.create_run(&new_run("n")).unwrap()).collect();
    for &id in &ids {
        s.insert_cell(id, 0, &full_cell(1)).unwrap();
        s.set_run_tags(id, &[("commit".into(), format!("c{id}"))]).unwrap();
        s.finish_run(id, racehorse_core::RunStatus::Complete).unwrap();
    }
    let uuid = |id: i64| s.run(id).unwrap().unwrap().uuid;
    let mut cp = record("cp1");
    (cp.before_run_uuid, cp.after_run_uuid) = (uuid(ids[1]), uuid(ids[2]));
    let cp_id = s.save_change_point(&cp).unwrap();
    let b = BisectRecord { uuid: "b1".into(), status: "found".into(), ..bisect() };
    let b_id = s.create_bisect(&b).unwrap();
    s.add_bisect_step(b_id, BisectStep { candidate: 0, run_id: Some(ids[3]), skipped: false }).unwrap();
    let guards = s.prune_guards().unwrap();
    assert_eq!(guards[&uuid(ids[1])], vec![KeptBecause::ChangePoint { id: cp_id, side: "before" }]);
    assert_eq!(guards[&uuid(ids[3])], vec![KeptBecause::Bisect { id: b_id }]);
    let cands = s.prune_candidates(true).unwrap();
    assert_eq!(cands.iter().map(|c| c.cells).sum::<u64>(), 4);
    assert!(cands.iter().all(|c| c.points.len() == 1 && c.tags.len() == 1));
    let all = Selector { label: Some("n".into()), ..Selector::default() };
    let p = plan(&cands, &all, &guards, false);
    assert_eq!(p.remove.iter().map(|c| c.id).collect::<Vec<_>>(), vec![ids[0]]);

    let forced = plan(&cands, &all, &guards, true);
    let gone: Vec<String> = forced.remove.iter().map(|c| c.uuid.clone()).collect();
    assert_eq!(s.remove_runs(&gone).unwrap(), Removed { runs: 4, cells: 4 });
    for sql in [
        "SELECT count(*) FROM runs WHERE id >= ?1",
        "SELECT count(*) FROM cells WHERE run_id >= ?1",
        "SELECT count(*) FROM samples WHERE ?1 > 0",
        "SELECT count(*) FROM latencies WHERE ?1 > 0",
        "SELECT count(*) FROM run_tags WHERE run_id >= ?1",
        "SELECT count(*) FROM bisect_steps WHERE run_id >= ?1",
    ] {
        assert_eq!(count(&s, sql, ids[0]), 0, "{sql}");
    }
    assert_eq!(s.bisect_steps(b_id).unwrap()[0].run_id, None, "the step stays, without its run");
    assert_eq!(s.change_points(None).unwrap().len(), 1, "the ledger keeps the point");
}

fn bisect() -> BisectRecord {
    BisectRecord {
        id: 0,
        uuid: String::new(),
        repo: None,
        good: "1".into(),
        bad: "2".into(),
        candidates_json: "[\"1\",\"2\"]".into(),
        build: None,
        run_args_json: "[]".into(),
        options_json: "{}".into(),
        status: "running".into(),
        result_json: None,
        started_at_unix_s: 0,
        updated_at_unix_s: 0,
    }
}

#[test]
fn kept_cells_of_removed_runs_go_and_vacuum_shrinks_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let s = Store::open(&db).unwrap();
    let a = s.create_run(&new_run("a")).unwrap();
    let b = s.create_run(&new_run("b")).unwrap();
    for i in 0..200 {
        s.insert_cell(a, i, &full_cell(1)).unwrap();
    }
    let (ua, ub) = (s.run(a).unwrap().unwrap().uuid, s.run(b).unwrap().unwrap().uuid);
    let fa = crate::spill::keep_cell(&db, a, &ua, 200, &full_cell(1)).unwrap();
    let fb = crate::spill::keep_cell(&db, b, &ub, 0, &full_cell(1)).unwrap();
    s.remove_runs(std::slice::from_ref(&ua)).unwrap();
    assert_eq!(remove_kept_cells(&db, &[ua].into()), vec![fa.clone()]);
    assert!(!fa.exists() && fb.exists(), "only the removed run's kept cell goes");
    s.vacuum_checkpointed_for_test();
    let before = store_bytes(&db);
    s.vacuum().unwrap();
    let after = store_bytes(&db);
    assert!(after * 2 < before, "VACUUM shrinks the file: {before} -> {after} bytes");
}

impl Store {
    /// Folds the log into the file first, so that the sizes compared are the file's alone.
    fn vacuum_checkpointed_for_test(&self) {
        self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
    }
}

#[test]
fn a_run_being_written_is_guarded_and_one_whose_process_is_gone_is_not() {
    let s = Store::open_in_memory().unwrap();
    let live = s.create_run(&new_run("n")).unwrap();
    let dead = s.create_run(&new_run("n")).unwrap();
    s.conn.execute("UPDATE runs SET pid = -1 WHERE id = ?1", [dead]).unwrap();
    s.mark_abandoned_runs().unwrap();
    let guards = s.prune_guards().unwrap();
    let uuid = |id: i64| s.run(id).unwrap().unwrap().uuid;
    assert_eq!(guards.get(&uuid(live)), Some(&vec![KeptBecause::Running]));
    assert_eq!(guards.get(&uuid(dead)), None);
    let all = Selector { label: Some("n".into()), ..Selector::default() };
    let p = plan(&s.prune_candidates(false).unwrap(), &all, &guards, true);
    assert_eq!(p.remove.iter().map(|c| c.id).collect::<Vec<_>>(), vec![dead]);
}
