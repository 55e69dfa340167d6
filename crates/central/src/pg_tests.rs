//! Tests against a real PostgreSQL: a throw-away cluster per test (racehorse-pg's `Cluster`,
//! stopped and removed when dropped, also on panic), skipped with a message where the
//! server binaries are not installed.

use crate::load::{Input, Loader, RunOutcome};
use crate::read::Reader;
use crate::schema::{self, CENTRAL_VERSION};
use racehorse_pg::{bin_dir, Cluster, ClusterOptions};
use racehorse_store::{export_doc, NewRun, Store};
use std::path::Path;

/// A cluster and its URL, or None (after saying why) without PostgreSQL.
pub(crate) fn cluster(dir: &Path) -> Option<(Cluster, String)> {
    if let Err(e) = bin_dir() {
        racehorse_testkit::skip!("no PostgreSQL server binaries ({e})");
        return None;
    }
    let c = Cluster::start(dir, &ClusterOptions::default()).expect("start a cluster");
    let cfg = &c.config;
    let url = format!(
        "postgres://{}:{}@127.0.0.1:{}/{}?sslmode=disable",
        cfg.user,
        cfg.password.clone().unwrap_or_default(),
        cfg.port,
        cfg.dbname
    );
    Some((c, url))
}

pub(crate) fn cell(rep: u32, units: f64) -> racehorse_core::CellResult {
    let mut params = racehorse_core::Params::new();
    params.insert("clients".into(), racehorse_core::Value::Int(2));
    let spec = racehorse_core::CellSpec { workload: "null".into(), params, variant: "default".into(), rep };
    let mut c = racehorse_core::CellResult::empty(spec, racehorse_core::WorkUnit::Ops);
    c.units = units;
    c.ops = units as u64;
    c.window = racehorse_core::Nanos(1_000_000_000);
    c.error = Some("a\tb\\c\u{0}".into());
    c
}

#[test]
fn migrations_create_upgrade_and_refuse_a_newer_schema() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_cluster, url)) = cluster(dir.path()) else { return };
    let mut client = crate::connect(&url).unwrap();
    assert_eq!(schema::version(&mut client).unwrap(), 0);
    assert_eq!(schema::migrate_to(&mut client, 1).unwrap(), 0, "a version 1 database");
    let view = "SELECT count(*) FROM pg_views WHERE schemaname = 'racehorse' AND viewname = 'run_counts'";
    assert_eq!(client.query_one(view, &[]).unwrap().get::<_, i64>(0), 0);
    assert_eq!(schema::migrate(&mut client).unwrap(), 1, "brought forward from version 1");
    assert_eq!(schema::version(&mut client).unwrap(), CENTRAL_VERSION);
    assert_eq!(client.query_one(view, &[]).unwrap().get::<_, i64>(0), 1);
    assert_eq!(schema::migrate(&mut client).unwrap(), CENTRAL_VERSION, "again: nothing to do");
    let steps: i64 =
        client.query_one("SELECT count(*) FROM racehorse.schema_migrations", &[]).unwrap().get(0);
    assert_eq!(steps, i64::from(CENTRAL_VERSION), "each step recorded once");
    client
        .execute(
            "INSERT INTO racehorse.schema_migrations VALUES ($1, 'future', 0)",
            &[&(CENTRAL_VERSION + 1)],
        )
        .unwrap();
    let e = schema::migrate(&mut client).unwrap_err();
    assert!(e.to_string().contains("upgrade racehorse"), "{e}");
    assert!(Reader::open(&url).is_err(), "readers refuse it too");
}

#[test]
fn runs_loaded_before_version_6_get_their_cell_counts() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_cluster, url)) = cluster(dir.path()) else { return };
    let mut client = crate::connect(&url).unwrap();
    schema::migrate_to(&mut client, 5).unwrap();
    client
        .batch_execute(
            "INSERT INTO racehorse.runs (uuid, inventory_name, source_id, label, started_at_unix_s, status, host, \
             command, racehorse_version, cpu_method, export_version, loaded_at_unix_s, updated_at_unix_s) \
             VALUES ('00000000-0000-4000-8000-000000000001', 'h', 1, 'l', 0, 'complete', 'h', 'c', 'v', 'none', 1, 0, 0); \
             INSERT INTO racehorse.cells (run_uuid, match_key, rep, dup, idx, workload, variant, status, unit, cell, \
             loaded_at_unix_s) SELECT '00000000-0000-4000-8000-000000000001', 'null|default', rep, 0, rep, 'null', \
             'default', CASE WHEN rep = 3 THEN 'failed' ELSE 'ok' END, 'ops', '{}', 0 FROM generate_series(1, 3) AS rep",
        )
        .unwrap();
    assert_eq!(schema::migrate(&mut client).unwrap(), 5);
    let row = client.query_one("SELECT cells_ok, cells_failed FROM racehorse.runs", &[]).unwrap();
    assert_eq!((row.get::<_, i64>(0), row.get::<_, i64>(1)), (2, 1));
    let n: i64 = client.query_one("SELECT cells_ok FROM racehorse.run_counts", &[]).unwrap().get(0);
    assert_eq!(n, 2, "the view reads the columns");
}

#[test]
fn loads_idempotently_adds_only_new_cells_and_reads_back_every_figure() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_cluster, url)) = cluster(dir.path()) else { return };
    let db = dir.path().join("h.db");
    let store = Store::open(&db).unwrap();
    let new =
        NewRun { label: "l".into(), host: "h".into(), inventory_name: "web-1".into(), ..NewRun::default() };
    let id = store.create_run(&new).unwrap();
    store.insert_cell(id, 0, &cell(1, 10.0)).unwrap();
    let partial = export_doc(&store.run(id).unwrap().unwrap(), &store.run_cells(id).unwrap());
    let mut loader = Loader::open(&url).unwrap();
    let first = loader.load_doc(&partial, Path::new("partial.json")).unwrap();
    assert_eq!(
        (first.outcome, first.cells_added, first.inventory_name.as_str()),
        (RunOutcome::New, 1, "web-1")
    );
    store.insert_cell(id, 1, &cell(2, 12.5)).unwrap();
    store.finish_run(id, racehorse_core::RunStatus::Complete).unwrap();
    let mut seen = Vec::new();
    loader.load(&Input::Store(db.clone()), &mut |r| seen.push(r.clone())).unwrap();
    assert_eq!((seen[0].outcome, seen[0].cells_added, seen[0].cells_read), (RunOutcome::Updated, 1, 2));
    seen.clear();
    loader.load(&Input::Store(db.clone()), &mut |r| seen.push(r.clone())).unwrap();
    assert_eq!((seen[0].outcome, seen[0].cells_added), (RunOutcome::Unchanged, 0), "the same store twice");

    let mut reader = Reader::open(&url).unwrap();
    let run = reader.resolve("web-1:l").unwrap();
    assert_eq!((run.cells_ok, run.status.as_str()), (2, "complete"));
    assert_eq!(reader.resolve(&run.uuid[..8]).unwrap().uuid, run.uuid);
    assert_eq!(reader.resolve("latest").unwrap().uuid, run.uuid);
    assert!(reader.resolve("web-2:l").unwrap_err().is_usage());
    let memory = Store::open_in_memory().unwrap();
    let copied = reader.copy_into(&run, &memory).unwrap();
    let back = memory.run(copied).unwrap().unwrap();
    assert_eq!((back.uuid.as_str(), back.inventory_name.as_str()), (run.uuid.as_str(), "web-1"));
    let mut expected = store.run_cells(id).unwrap();
    for c in &mut expected {
        c.error = c.error.as_ref().map(|e| e.replace('\0', "\u{fffd}"));
    }
    assert_eq!(memory.run_cells(copied).unwrap(), expected, "every figure survives the round trip");
}

#[test]
fn profiles_are_loaded_whole_and_listed_by_the_profile_views() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_cluster, url)) = cluster(dir.path()) else { return };
    let store = Store::open_in_memory().unwrap();
    let id = store.create_run(&NewRun { label: "p".into(), ..NewRun::default() }).unwrap();
    let mut profiled = cell(1, 10.0);
    profiled.profile = Some(racehorse_core::Profile {
        event: "cpu-clock".into(),
        samples: 100,
        callgraph: Some("fp".into()),
        frequency_hz: 999,
        stacks: vec![
            racehorse_core::FoldedStack { stack: "app;main;parent;leaf_a".into(), samples: 60 },
            racehorse_core::FoldedStack { stack: "app;main;parent;leaf_b".into(), samples: 30 },
        ],
        stacks_dropped_samples: 10,
        counters: vec![
            racehorse_core::Counter { event: "cycles".into(), count: None },
            racehorse_core::Counter { event: "page-faults".into(), count: Some(250.0) },
        ],
        ..racehorse_core::Profile::default()
    });
    store.insert_cell(id, 0, &profiled).unwrap();
    store.insert_cell(id, 1, &cell(2, 10.0)).unwrap();
    let doc = export_doc(&store.run(id).unwrap().unwrap(), &store.run_cells(id).unwrap());
    Loader::open(&url).unwrap().load_doc(&doc, Path::new("p.json")).unwrap();
    let mut client = crate::connect(&url).unwrap();
    let stacks = client
        .query("SELECT stack, samples, window_samples, callgraph FROM racehorse.profile_stacks ORDER BY samples DESC", &[])
        .unwrap();
    let stacks: Vec<(String, i64, i64, String)> =
        stacks.iter().map(|r| (r.get(0), r.get(1), r.get(2), r.get(3))).collect();
    assert_eq!(stacks.len(), 2, "only the profiled cell has stacks: {stacks:?}");
    assert_eq!(stacks[0], ("app;main;parent;leaf_a".to_string(), 60, 100, "fp".to_string()));
    let counters = client
        .query("SELECT event, count, per_unit FROM racehorse.profile_counters ORDER BY event", &[])
        .unwrap();
    let counters: Vec<(String, Option<f64>, Option<f64>)> =
        counters.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect();
    assert_eq!(counters, [("cycles".into(), None, None), ("page-faults".into(), Some(250.0), Some(25.0))]);
    let mut reader = Reader::open(&url).unwrap();
    let run = reader.resolve("latest").unwrap();
    let memory = Store::open_in_memory().unwrap();
    let copied = reader.copy_into(&run, &memory).unwrap();
    assert_eq!(
        memory.run_cells(copied).unwrap()[0].profile,
        profiled.profile,
        "the profile comes back whole"
    );
}
