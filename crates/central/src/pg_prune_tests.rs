//! Pruning a real PostgreSQL (a throw-away cluster, skipped without the server binaries):
//! the runs read back as candidates with their tags and points, the ledger guards its runs,
//! and a removal takes a run's cells and tags with it and leaves the others whole.

use super::Pruner;
use crate::load::{Input, Loader};
use crate::pg_tests::{cell, cluster};
use racehorse_store::prune::{plan, KeptBecause, Selector};
use racehorse_store::{NewRun, Store};

/// Rows of `table` that belong to run `uuid`.
fn rows(client: &mut postgres::Client, table: &str, column: &str, uuid: &str) -> i64 {
    let q = format!("SELECT count(*) FROM racehorse.{table} WHERE {column} = $1::text::uuid");
    client.query_one(&q, &[&uuid]).unwrap().get(0)
}

#[test]
fn a_pruned_run_takes_its_cells_and_tags_and_the_ledger_guards_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_cluster, url)) = cluster(dir.path()) else { return };
    let db = dir.path().join("h.db");
    let store = Store::open(&db).unwrap();
    let mut uuids = Vec::new();
    for i in 0..3 {
        let new = NewRun {
            label: "nightly".into(),
            host: "h".into(),
            inventory_name: "web-1".into(),
            tags: vec![("commit".into(), format!("c{i}"))],
            ..NewRun::default()
        };
        let id = store.create_run(&new).unwrap();
        store.insert_cell(id, 0, &cell(1, 10.0)).unwrap();
        store.insert_cell(id, 1, &cell(2, 11.0)).unwrap();
        store.finish_run(id, racehorse_core::RunStatus::Complete).unwrap();
        uuids.push(store.run(id).unwrap().unwrap().uuid);
    }
    let cp = racehorse_store::ledger::ChangePointRecord {
        uuid: "5b0f2a4e-8c1d-4e2f-9a3b-0c4d5e6f7a8b".into(),
        before_run_uuid: uuids[0].clone(),
        after_run_uuid: uuids[1].clone(),
        ..serde_json::from_value(sample_point()).unwrap()
    };
    store.save_change_point(&cp).unwrap();
    Loader::open(&url).unwrap().load(&Input::Store(db.clone()), &mut |_| {}).unwrap();

    let mut p = Pruner::open(&url).unwrap();
    let cands = p.candidates(true).unwrap();
    assert_eq!(cands.len(), 3);
    assert!(cands.iter().all(|c| c.cells == 2 && c.points.len() == 1 && c.tags.len() == 1), "{cands:?}");
    let guards = p.guards().unwrap();
    assert!(matches!(guards[&uuids[1]][..], [KeptBecause::ChangePoint { side: "after", .. }]));
    let all = Selector { label: Some("nightly".into()), ..Selector::default() };
    let first = plan(&cands, &all, &guards, false);
    assert_eq!(first.remove.iter().map(|c| c.uuid.as_str()).collect::<Vec<_>>(), vec![uuids[2].as_str()]);
    assert_eq!(first.kept.len(), 2);
    let gone: Vec<String> = first.remove.iter().map(|c| c.uuid.clone()).collect();
    let removed = p.remove(&gone).unwrap();
    assert_eq!((removed.runs, removed.cells), (1, 2));
    let mut client = crate::connect(&url).unwrap();
    for (table, column) in [("runs", "uuid"), ("cells", "run_uuid"), ("run_tags", "run_uuid")] {
        assert_eq!(rows(&mut client, table, column, &uuids[2]), 0, "{table}");
        assert!(rows(&mut client, table, column, &uuids[0]) > 0, "{table} of a kept run");
    }
    assert_eq!(p.candidates(false).unwrap().len(), 2);
    let forced = plan(&p.candidates(false).unwrap(), &all, &p.guards().unwrap(), true);
    let gone: Vec<String> = forced.remove.iter().map(|c| c.uuid.clone()).collect();
    assert_eq!(p.remove(&gone).unwrap().runs, 2, "--force removes cited runs");
    assert_eq!(p.guards().unwrap().len(), 2, "the ledger keeps its point");
}

/// A change point as JSON (its record derives Deserialize).
fn sample_point() -> serde_json::Value {
    serde_json::json!({
        "uuid": "", "series_key": "web-1|null|default|clients=2|throughput", "host": "web-1",
        "workload": "null", "variant": "default", "params_json": "{\"clients\":2}", "figure": "throughput",
        "unit": "ops/s", "before_run_uuid": "", "after_run_uuid": "", "level_before": 10.0,
        "level_after": 11.0, "ratio": 1.1, "ratio_lo": 1.05, "ratio_hi": 1.15, "p_value": 0.01,
        "direction": "better", "status": "new", "reason": null, "link": null,
        "detected_at_unix_s": 1_700_000_000, "updated_at_unix_s": 1_700_000_000
    })
}
