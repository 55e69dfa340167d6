//! Issue 30, the store side, through the binary: runs carry a uuid, inventory name and
//! campaign into their export; `load` into a real PostgreSQL (started here, in a temp dir,
//! removed on every path by the cluster's Drop) is idempotent and adds only a run's new
//! cells; `list --campaign` shows a host without a run; `compare HOST:RUN HOST:RUN` reads two
//! hosts' runs from the central database; an old store gets its uuids in place.

use crate::common::{bin, machine_lock, text, Sandbox};
use racehorse_pg::{bin_dir, Cluster, ClusterOptions};
use std::path::Path;
use std::process::{Command, Output};

/// A throw-away PostgreSQL cluster under `dir` and its URL, or None (after saying why)
/// where the server binaries are not installed. Dropping the cluster stops and removes it.
pub fn central_db(dir: &Path) -> Option<(Cluster, String)> {
    if let Err(e) = bin_dir() {
        racehorse_testkit::skip!("no PostgreSQL server binaries ({e})");
        return None;
    }
    let c = Cluster::start(dir, &ClusterOptions::default()).expect("start a PostgreSQL cluster");
    let cfg = &c.config;
    let password = cfg.password.clone().unwrap_or_default();
    let url =
        format!("postgres://{}:{password}@127.0.0.1:{}/{}?sslmode=disable", cfg.user, cfg.port, cfg.dbname);
    Some((c, url))
}

/// `racehorse --db URL ARGS` (a central database).
fn central(url: &str, args: &[&str]) -> Output {
    let mut c = Command::new(bin());
    c.arg("--db").arg(url).args(args).env_remove("RACEHORSE_DB").env_remove("PGPASSWORD");
    c.output().expect("spawn racehorse")
}

/// A short run of the null engine on "host" `name` of campaign `campaign`, exported to a file.
fn host_run(sb: &Sandbox, name: &str, campaign: &str) -> (std::path::PathBuf, serde_json::Value) {
    let work = sb.work();
    let o = sb.run(&[
        "run",
        "null",
        "--label",
        "base",
        "--clients",
        "1,2",
        "--runtime",
        "100ms",
        "--warmup",
        "0s",
        "--reps",
        "2",
        "--no-warm-up",
        "--no-drop-caches",
        "--sample-ms",
        "0",
        "--quiet",
        "--dir",
        work.to_str().expect("utf-8"),
        "--inventory-name",
        name,
        "--campaign",
        campaign,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let file = sb.dir.path().join(format!("{name}.json"));
    let o = sb.run(&["export", "base", "--format", "json", "-o", file.to_str().expect("utf-8")]);
    assert!(o.status.success(), "{}", text(&o));
    let doc = serde_json::from_slice(&std::fs::read(&file).expect("export")).expect("json");
    (file, doc)
}

const MANIFEST: &str = r#"{"format":"racehorse-campaign","version":1,"campaign":"c1","started_at_unix_s":1800000000,
    "hosts":[{"name":"web-1","outcome":"ok","detail":""},{"name":"web-2","outcome":"ok","detail":""},
    {"name":"web-3","outcome":"unreachable","detail":"ssh: connect to host 10.0.0.3 port 22: Connection refused"}]}"#;

/// Two "hosts" (stores) with a run each, their exports loaded twice with the manifest.
fn load_two_hosts(tmp: &Path, url: &str) -> (Sandbox, serde_json::Value) {
    let (h1, h2) = (Sandbox::new(), Sandbox::new());
    let (e1, d1, e2, d2) = {
        let _m = machine_lock();
        let (e1, d1) = host_run(&h1, "web-1", "c1");
        let (e2, d2) = host_run(&h2, "web-2", "c1");
        (e1, d1, e2, d2)
    };
    let uuid = d1["run"]["uuid"].as_str().expect("the export carries the run's uuid");
    let identity = (uuid.len(), d1["run"]["inventory_name"].as_str(), d1["run"]["campaign"].as_str());
    assert_eq!(identity, (36, Some("web-1"), Some("c1")));
    assert_ne!(d1["run"]["uuid"], d2["run"]["uuid"]);
    let cells = d1["cells"].as_array().unwrap().len() + d2["cells"].as_array().unwrap().len();
    let manifest = tmp.join("campaign.json");
    std::fs::write(&manifest, MANIFEST).unwrap();
    let (p1, p2, pm) = (e1.to_str().unwrap(), e2.to_str().unwrap(), manifest.to_str().unwrap());
    let first = central(url, &["load", "--campaign-manifest", pm, p1, p2]);
    let t = text(&first);
    assert!(first.status.success(), "{t}");
    assert!(
        t.contains(&format!("runs 2 new, 0 updated, 0 unchanged; cells {cells} added of {cells} read")),
        "{t}"
    );
    assert!(t.contains("campaign c1: 3 host(s) recorded (2 ok, 1 unreachable, 0 failed)"), "{t}");
    assert!(
        t.contains("cells/s") && !t.contains(url) && !t.contains("racehorse:"),
        "a rate, no password: {t}"
    );
    let again = central(url, &["load", p1, p2, h1.db().to_str().unwrap()]);
    let t = text(&again);
    assert!(again.status.success() && t.contains("runs 0 new, 0 updated, 3 unchanged; cells 0 added"), "{t}");
    (h1, d1)
}

#[test]
fn fleet_runs_load_once_and_list_a_campaign_with_its_missing_host() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((_cluster, url)) = central_db(tmp.path()) else { return };
    load_two_hosts(tmp.path(), &url);
    let list = central(&url, &["list", "--campaign", "c1"]);
    let t = text(&list);
    assert!(list.status.success() && t.contains("web-1") && t.contains("web-2"), "{t}");
    assert!(
        t.contains("no run (unreachable)") && t.contains("web-3: unreachable: ssh: connect to host"),
        "{t}"
    );
    let o = central(&url, &["list", "--campaign", "c1", "--json"]);
    let json: serde_json::Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    let runs = json["runs"].as_array().map(Vec::len);
    assert_eq!((runs, json["hosts_without_runs"][0]["name"].as_str()), (Some(2), Some("web-3")), "{json}");
    assert_eq!(central(&url, &["list", "--campaign", "nope"]).status.code(), Some(2));
    assert_eq!(central(&url, &["run", "null"]).status.code(), Some(2), "a run writes a SQLite store");
    // The run filters apply to the central list as to a SQLite store's, with the campaign.
    let hosts = |args: &[&str]| -> Vec<String> {
        let o = central(&url, &[&["list", "--json"], args].concat());
        let json: serde_json::Value =
            serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
        json["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["inventory_name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(hosts(&["--host", "web-2"]), ["web-2"]);
    assert_eq!(hosts(&["--campaign", "c1", "--host", "web-1"]), ["web-1"]);
    assert_eq!(hosts(&["--label", "no-such-label"]), Vec::<String>::new());
    assert_eq!(hosts(&["--limit", "1"]).len(), 1);
}

#[test]
fn two_hosts_compare_from_the_central_database() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((_cluster, url)) = central_db(tmp.path()) else { return };
    let (h1, d1) = load_two_hosts(tmp.path(), &url);
    let cmp = central(&url, &["compare", "web-1:base", "web-2:base"]);
    let t = text(&cmp);
    assert!(cmp.status.success() && t.contains("(in host web-1)") && t.contains("(in host web-2)"), "{t}");
    let ambiguous = central(&url, &["show", "base"]);
    let t = text(&ambiguous);
    assert_eq!(ambiguous.status.code(), Some(2), "{t}");
    assert!(t.contains("names runs of 2 hosts (web-1, web-2); name one as HOST:base"), "{t}");
    let file_key = format!("{}:base", h1.db().display());
    let mixed = central(&url, &["compare", &file_key, "web-2:latest"]);
    let t = text(&mixed);
    assert!(mixed.status.success() && t.contains(&format!("(in {})", h1.db().display())), "a file wins: {t}");
    let uuid = d1["run"]["uuid"].as_str().unwrap();
    let out = central(&url, &["export", &format!("web-1:{}", &uuid[..8]), "--format", "json"]);
    let back: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    assert_eq!(back["run"]["uuid"].as_str(), Some(uuid));
    assert_eq!(back["cells"], d1["cells"], "the central copy exports the same cells");
    let show = central(&url, &["show", "web-2:latest"]);
    assert!(show.status.success() && text(&show).contains("null"), "{}", text(&show));
    let report = central(&url, &["report", "web-1:base"]);
    assert!(report.status.success(), "{}", text(&report));
}

#[test]
fn a_later_export_of_a_partial_run_adds_only_its_new_cells() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((_cluster, url)) = central_db(tmp.path()) else { return };
    let sb = Sandbox::new();
    let store = racehorse_store::Store::open(&sb.db()).unwrap();
    let new = racehorse_store::NewRun {
        label: "grow".into(),
        host: "h".into(),
        inventory_name: "db-1".into(),
        ..Default::default()
    };
    let id = store.create_run(&new).unwrap();
    let side = racehorse_report::synth::synthetic_side(0, "grow", &racehorse_report::synth::Shape::default());
    let (first, rest) = side.cells.split_at(10);
    for (i, c) in first.iter().enumerate() {
        store.insert_cell(id, i, c).unwrap();
    }
    let file = sb.dir.path().join("grow.json");
    let export = || {
        let o = sb.run(&["export", "grow", "-o", file.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o));
    };
    export();
    let o = central(&url, &["load", file.to_str().unwrap()]);
    assert!(
        text(&o).contains("runs 1 new, 0 updated, 0 unchanged; cells 10 added of 10 read"),
        "{}",
        text(&o)
    );
    for (i, c) in rest.iter().enumerate() {
        store.insert_cell(id, 10 + i, c).unwrap();
    }
    store.finish_run(id, racehorse_core::RunStatus::Complete).unwrap();
    export();
    let total = side.cells.len();
    let o = central(&url, &["load", file.to_str().unwrap()]);
    let want = format!("runs 0 new, 1 updated, 0 unchanged; cells {} added of {total} read", total - 10);
    assert!(text(&o).contains(&want), "{want}: {}", text(&o));
    let listed: serde_json::Value =
        serde_json::from_slice(&central(&url, &["list", "--json"]).stdout).unwrap();
    let run = &listed["runs"][0];
    assert_eq!(
        (run["inventory_name"].as_str(), run["status"].as_str()),
        (Some("db-1"), Some("complete")),
        "{listed}"
    );
    assert_eq!(run["cells_ok"].as_u64(), Some(total as u64), "{listed}");
    let o = central(&url, &["load", sb.db().to_str().unwrap()]);
    assert!(
        text(&o).contains("runs 0 new, 0 updated, 1 unchanged; cells 0 added"),
        "the store itself: {}",
        text(&o)
    );
}

#[test]
fn an_unknown_export_version_is_refused_before_anything_is_loaded() {
    let sb = Sandbox::new();
    let file = sb.dir.path().join("future.json");
    std::fs::write(&file, r#"{"format": "racehorse-run", "version": 99, "run": {}, "cells": []}"#).unwrap();
    // Nothing listens there: the file is refused before any connection is tried.
    let o = central("postgres://u:pw@127.0.0.1:9/db?sslmode=disable", &["load", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("export version 99 is not known to this racehorse"), "{}", text(&o));
    let o = central("postgres://u:pw@127.0.0.1:9/db?sslmode=disable", &["load"]);
    assert_eq!(o.status.code(), Some(2), "a path or a manifest is needed: {}", text(&o));
    let o = sb.run(&["load", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "load needs a central --db: {}", text(&o));
}

#[test]
fn a_store_of_schema_version_4_gets_a_uuid_per_run_in_place() {
    let sb = Sandbox::new();
    racehorse_store::schema::create_at_version(&sb.db(), 4).unwrap();
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    for label in ["a", "b"] {
        conn.execute(
            "INSERT INTO runs (label, started_at_unix_s, finished_at_unix_s, status, host, command, suite_json, \
             env_json, exclusivity_json, racehorse_version, cpu_method) VALUES (?1, 1, 2, 'complete', 'old-host', \
             'c', '[]', '{}', '{}', '0.1.0', 'none')",
            [label],
        )
        .unwrap();
    }
    drop(conn);
    let other = Sandbox::new();
    crate::compare_by_cli::store_synthetic(&other.db(), "new", &racehorse_report::synth::Shape::default());
    let file = sb.dir.path().join("new.json");
    let o = other.run(&["export", "new", "-o", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    // `import` opens the store for writing, which migrates it in place.
    let o = sb.run(&["import", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let conn = rusqlite::Connection::open(sb.db()).unwrap();
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    let rows: Vec<(String, String)> = conn
        .prepare("SELECT uuid, inventory_name FROM runs ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(version, racehorse_store::SCHEMA_VERSION, "migrated in place");
    assert_eq!(rows.len(), 3);
    assert!(rows[..2].iter().all(|(u, n)| u.len() == 36 && n == "old-host"), "{rows:?}");
    assert_ne!(rows[0].0, rows[1].0, "one uuid per run");
    assert_eq!(rows[2].1, "synthetic", "the imported run's inventory name is its host's");
}
