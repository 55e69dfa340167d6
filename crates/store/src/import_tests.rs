//! Tests of loading a JSON export into a store: the round trip keeps every figure, a second
//! import of the same run writes nothing, unknown formats and versions are refused.

use super::*;
use crate::testutil::{failed_cell, full_cell, new_run};
use crate::{export_json, Store};

fn exported() -> (String, Vec<CellResult>) {
    let store = Store::open_in_memory().unwrap();
    let id = store.create_run(&new_run("moved")).unwrap();
    let cells = [full_cell(1), failed_cell()];
    for (i, c) in cells.iter().enumerate() {
        store.insert_cell(id, i, c).unwrap();
    }
    store.finish_run(id, RunStatus::Partial).unwrap();
    let run = store.run(id).unwrap().unwrap();
    (export_json(&run, &store.run_cells(id).unwrap()), store.run_cells(id).unwrap())
}

#[test]
fn an_export_loads_into_another_store_with_every_figure() {
    let (text, cells) = exported();
    let r = parse_export(&text).unwrap();
    assert_eq!(r.latencies_without_histogram, 0);
    let other = Store::open_in_memory().unwrap();
    other.create_run(&new_run("already here")).unwrap();
    let Imported::New(id) = other.import_run(&r).unwrap() else { panic!("a new run") };
    assert_eq!(id, 2, "a new id in the other store");
    let run = other.run(id).unwrap().unwrap();
    assert_eq!((run.label.as_str(), run.host.as_str()), ("moved", "testhost"));
    assert_eq!(run.status, RunStatus::Partial);
    assert_eq!(run.env_json, r#"{"cpus":4,"kernel":"6.8.0"}"#, "the environment as JSON");
    assert_eq!((run.cells_ok, run.cells_failed), (1, 1));
    assert_eq!(other.run_cells(id).unwrap(), cells, "cells, samples, latencies, profile, quality");
}

#[test]
fn the_same_export_twice_is_stored_once() {
    let (text, _) = exported();
    let r = parse_export(&text).unwrap();
    let other = Store::open_in_memory().unwrap();
    let first = other.import_run(&r).unwrap();
    assert_eq!(first, Imported::New(1));
    assert_eq!(other.import_run(&r).unwrap(), Imported::AlreadyPresent(1));
    assert_eq!(other.list_runs().unwrap().len(), 1);
}

#[test]
fn unknown_formats_and_versions_are_refused() {
    let (text, _) = exported();
    let v2 = text.replacen("\"version\": 1", "\"version\": 2", 1);
    assert_eq!(parse_export(&v2), Err(ImportError::UnknownVersion { found: "2".into() }));
    let other = text.replacen("racehorse-run", "racehorse-cell", 1);
    assert!(matches!(parse_export(&other), Err(ImportError::NotAnExport { .. })));
    assert!(parse_export("{").is_err());
    let broken = text.replacen("\"unit\": \"bytes\"", "\"unit\": \"furlongs\"", 1);
    assert_eq!(parse_export(&broken).unwrap_err().to_string(), "cells[0]: unit: unknown");
}

#[test]
fn latencies_without_a_histogram_are_counted_not_invented() {
    let (text, _) = exported();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    for c in doc["cells"].as_array_mut().unwrap() {
        for l in c["latencies"].as_array_mut().unwrap() {
            l.as_object_mut().unwrap().remove("histogram");
        }
    }
    let r = parse_export(&doc.to_string()).unwrap();
    assert_eq!(r.latencies_without_histogram, 4, "two ops in each of two cells");
    assert!(r.cells.iter().all(|c| c.latencies.is_empty()));
}

#[test]
fn the_export_carries_the_fleet_identity_and_import_keeps_it() {
    let store = Store::open_in_memory().unwrap();
    let run = NewRun { inventory_name: "web-1".into(), campaign: Some("c7".into()), ..new_run("f") };
    let id = store.create_run(&run).unwrap();
    let info = store.run(id).unwrap().unwrap();
    assert!(crate::fleet::is_uuid(&info.uuid), "{}", info.uuid);
    let doc: serde_json::Value = serde_json::from_str(&export_json(&info, &[])).unwrap();
    assert_eq!(doc["run"]["uuid"], info.uuid.as_str());
    assert_eq!(
        (doc["run"]["inventory_name"].as_str(), doc["run"]["campaign"].as_str()),
        (Some("web-1"), Some("c7"))
    );
    let r = parse_export(&export_json(&info, &[])).unwrap();
    let other = Store::open_in_memory().unwrap();
    let Imported::New(new_id) = other.import_run(&r).unwrap() else { panic!("a new run") };
    let moved = other.run(new_id).unwrap().unwrap();
    assert_eq!(
        (moved.uuid, moved.inventory_name, moved.campaign),
        (info.uuid.clone(), "web-1".into(), Some("c7".into()))
    );
    assert_eq!(
        other.resolve_run(&info.uuid[..8]).unwrap().id,
        new_id,
        "a run is found by a prefix of its uuid"
    );
    // A different run (another uuid) with the same host, start, label and command is a new run.
    let mut twin = r.clone();
    twin.uuid = crate::fleet::new_uuid().unwrap();
    assert!(matches!(other.import_run(&twin).unwrap(), Imported::New(_)));
}

#[test]
fn an_export_without_uuid_gets_a_stable_derived_one() {
    let (text, _) = exported();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    for k in ["uuid", "inventory_name", "campaign"] {
        doc["run"].as_object_mut().unwrap().remove(k);
    }
    let a = parse_export(&doc.to_string()).unwrap();
    let b = parse_export(&doc.to_string()).unwrap();
    assert!(!a.uuid_given && a.uuid == b.uuid && &a.uuid[14..15] == "8", "{}", a.uuid);
    let other = Store::open_in_memory().unwrap();
    let Imported::New(id) = other.import_run(&a).unwrap() else { panic!("a new run") };
    assert_eq!(
        other.run(id).unwrap().unwrap().inventory_name,
        "testhost",
        "the host stands for the inventory name"
    );
    doc["run"]["uuid"] = serde_json::json!("not-a-uuid");
    assert_eq!(parse_export(&doc.to_string()).unwrap_err().to_string(), "run.uuid: not a UUID");
}

/// Issue 41: tags and the ledger's change points travel with an export; an acknowledgement
/// made in one store reaches another, and a second import changes nothing.
#[test]
fn tags_and_change_points_travel_with_an_export() {
    let store = Store::open_in_memory().unwrap();
    let run = crate::NewRun { tags: vec![("commit".into(), "abc".into())], ..new_run("tagged") };
    let id = store.create_run(&run).unwrap();
    store.insert_cell(id, 0, &full_cell(1)).unwrap();
    let info = store.run(id).unwrap().unwrap();
    let mut point = crate::ledger::tests::record("7d4b1f0e-0000-4000-8000-000000000001");
    point.after_run_uuid = info.uuid.clone();
    let cp = store.save_change_point(&point).unwrap();
    store
        .set_change_point_status(cp, crate::ledger::LedgerStatus::Acknowledged, Some("known"), None)
        .unwrap();
    let parts = crate::HistoryParts {
        tags: store.run_tags(id).unwrap(),
        change_points: store.change_points(None).unwrap(),
    };
    let text = crate::export_doc_with(&info, &parts, &store.run_cells(id).unwrap()).to_string();
    let r = parse_export(&text).unwrap();
    assert_eq!(r.run.tags, vec![("commit".to_string(), "abc".to_string())]);
    let other = Store::open_in_memory().unwrap();
    let Imported::New(new_id) = other.import_run(&r).unwrap() else { panic!("a new run") };
    assert_eq!(other.run_tags(new_id).unwrap(), parts.tags);
    let got = other.change_points(None).unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(
        (got[0].status, got[0].reason.as_deref()),
        (crate::ledger::LedgerStatus::Acknowledged, Some("known"))
    );
    assert!(matches!(other.import_run(&r).unwrap(), Imported::AlreadyPresent(_)));
    assert_eq!(other.change_points(None).unwrap(), got, "a second import changes nothing");
    // A bad tag in an export is refused with its field.
    let bad = text.replace("\"commit\":\"abc\"", "\"Commit\":\"abc\"");
    assert!(parse_export(&bad).unwrap_err().to_string().starts_with("run.tags:"));
}
