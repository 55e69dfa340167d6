//! `racehorse prune` through the binary (issue 44): `--dry-run` changes nothing and lists
//! exactly what `prune` then removes; the change-point ledger (and a bisect) guards its runs
//! unless `--force`; `--vacuum` shrinks the file; bad arguments are usage errors; and the same
//! in a real PostgreSQL (started here, removed on every path). Stores are built directly.

use crate::central_cli::central_db;
use crate::common::{bin, text, Sandbox};
use racehorse_core::{CellResult, CellSpec, Nanos, Params, RunStatus, SamplePoint, Value, WorkUnit};
use racehorse_store::ledger::ChangePointRecord;
use racehorse_store::{NewRun, Store};
use std::collections::BTreeSet;
use std::process::{Command, Output, Stdio};

const DAY_S: i64 = 86_400;

fn cell(clients: i64, rep: u32, samples: usize) -> CellResult {
    let mut params = Params::new();
    params.insert("clients".into(), Value::Int(clients));
    let spec = CellSpec { workload: "null".into(), params, variant: "default".into(), rep };
    let mut c = CellResult::empty(spec, WorkUnit::Ops);
    c.window = Nanos(1_000_000_000);
    c.units = 1000.0;
    c.samples = (0..samples).map(|i| SamplePoint { t_ms: i as u64, ..SamplePoint::default() }).collect();
    c
}

/// Runs `(label, days ago, tag commit)` on host web-1, two cells each (`samples` samples per
/// cell); returns their uuids in order.
fn store_with(sb: &Sandbox, runs: &[(&str, i64, &str)], samples: usize) -> Vec<String> {
    let store = Store::open(&sb.db()).expect("store");
    let sql = rusqlite::Connection::open(sb.db()).expect("sqlite");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let mut uuids = Vec::new();
    for (label, days, commit) in runs {
        let new = NewRun {
            label: label.to_string(),
            host: "web-1".into(),
            tags: vec![("commit".into(), commit.to_string())],
            ..NewRun::default()
        };
        let id = store.create_run(&new).expect("run");
        for rep in 1..=2 {
            store.insert_cell(id, rep as usize - 1, &cell(1, rep, samples)).expect("cell");
        }
        store.finish_run(id, RunStatus::Complete).expect("finish");
        sql.execute("UPDATE runs SET started_at_unix_s = ?1 WHERE id = ?2", [now - days * DAY_S, id])
            .expect("age");
        uuids.push(store.run(id).expect("read").expect("run").uuid);
    }
    uuids
}

/// The uuid prefixes of the rows of a prune listing whose action is `action`.
fn listed(o: &Output, action: &str) -> BTreeSet<String> {
    assert!(o.status.success(), "{}", text(o));
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix(action).filter(|rest| rest.starts_with("  ")))
        .map(|rest| rest.split_whitespace().nth(5).expect("uuid column").to_string())
        .collect()
}

fn short(uuids: &[&String]) -> BTreeSet<String> {
    uuids.iter().map(|u| u[..8].to_string()).collect()
}

/// The uuids of the stored runs, by `list --json`.
fn stored(o: Output) -> BTreeSet<String> {
    assert!(o.status.success(), "{}", text(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    doc["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["uuid"].as_str().expect("uuid")[..8].to_string())
        .collect()
}

#[test]
fn a_dry_run_changes_nothing_and_lists_exactly_what_prune_then_removes() {
    let sb = Sandbox::new();
    let u = store_with(
        &sb,
        &[
            ("nightly", 200, "c1"),
            ("nightly", 120, "c2"),
            ("nightly", 100, "c3"),
            ("nightly", 95, "c4"),
            ("nightly", 1, "c5"),
            ("adhoc", 150, "x"),
        ],
        1,
    );
    let before = std::fs::read(sb.db()).expect("store");
    let args = ["prune", "--older-than", "90d", "--keep-last", "2", "--label", "nightly"];
    let dry = sb.run(&[&args[..], &["--dry-run"]].concat());
    assert_eq!(std::fs::read(sb.db()).expect("store"), before, "--dry-run wrote nothing");
    // The newest two of the series are c5 and c4; of the old ones c1..c3 go; adhoc is another label.
    let want = short(&[&u[0], &u[1], &u[2]]);
    assert_eq!(listed(&dry, "would remove"), want, "{}", text(&dry));
    assert!(text(&dry).contains("nothing changed (--dry-run)"));
    let done = sb.run(&[&args[..], &["--yes"]].concat());
    assert_eq!(listed(&done, "remove"), want, "{}", text(&done));
    assert!(text(&done).contains("removed 3 run(s) (6 cells)"), "{}", text(&done));
    assert_eq!(stored(sb.run(&["list", "--json"])), short(&[&u[3], &u[4], &u[5]]));
    let again = sb.run(&[&args[..], &["--yes"]].concat());
    assert!(text(&again).contains("no runs match"), "{}", text(&again));
    // By id and by tag.
    let o = sb.run(&["prune", "--tag", "commit=x", "--yes"]);
    assert_eq!(listed(&o, "remove"), short(&[&u[5]]));
    let o = sb.run(&["prune", &u[4][..8], "--yes"]);
    assert_eq!(listed(&o, "remove"), short(&[&u[4]]));
}

fn change_point(before: &str, after: &str) -> ChangePointRecord {
    serde_json::from_value(serde_json::json!({
        "uuid": "9e3c0a52-1f4b-4c6d-8e7f-a0b1c2d3e4f5", "series_key": "web-1|null|default|clients=1|throughput",
        "host": "web-1", "workload": "null", "variant": "default", "params_json": "{\"clients\":1}",
        "figure": "throughput", "unit": "ops/s", "before_run_uuid": before, "after_run_uuid": after,
        "level_before": 1000.0, "level_after": 850.0, "ratio": 0.85, "ratio_lo": 0.83, "ratio_hi": 0.87,
        "p_value": 0.005, "direction": "worse", "status": "acknowledged", "reason": "known", "link": null,
        "detected_at_unix_s": 1_700_000_000, "updated_at_unix_s": 1_700_000_000
    }))
    .expect("a change point")
}

#[test]
fn the_ledger_guards_its_runs_unless_forced() {
    let sb = Sandbox::new();
    let u = store_with(&sb, &[("n", 30, "a"), ("n", 20, "b"), ("n", 10, "c"), ("n", 5, "d")], 1);
    let store = Store::open(&sb.db()).expect("store");
    store.save_change_point(&change_point(&u[1], &u[2])).expect("ledger");
    drop(store);
    let o = sb.run(&["prune", "--label", "n", "--yes"]);
    assert_eq!(listed(&o, "remove"), short(&[&u[0], &u[3]]));
    assert_eq!(listed(&o, "keep"), short(&[&u[1], &u[2]]));
    let out = text(&o);
    assert!(out.contains("cites it as its before run (--force removes it)"), "{out}");
    assert!(out.contains("cites it as its after run"), "{out}");
    assert_eq!(stored(sb.run(&["list", "--json"])), short(&[&u[1], &u[2]]));
    let o = sb.run(&["prune", "--label", "n", "--force", "--yes"]);
    assert_eq!(listed(&o, "remove"), short(&[&u[1], &u[2]]));
    assert!(stored(sb.run(&["list", "--json"])).is_empty());
    let alerts = sb.run(&["alerts", "--all", "--json"]);
    assert!(alerts.status.success(), "the ledger still reads: {}", text(&alerts));
}

#[test]
fn vacuum_shrinks_the_file() {
    let sb = Sandbox::new();
    let runs: Vec<(&str, i64, &str)> = (0..6).map(|_| ("big", 1, "c")).collect();
    store_with(&sb, &runs, 2000);
    let size = || std::fs::metadata(sb.db()).map(|m| m.len()).unwrap_or(0);
    // Fold the log into the file first, so that the size before is the data's.
    let c = rusqlite::Connection::open(sb.db()).expect("sqlite");
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).expect("checkpoint");
    drop(c);
    let before = size();
    let o = sb.run(&["prune", "--label", "big", "--yes"]);
    assert!(o.status.success(), "{}", text(&o));
    let o = sb.run(&["prune", "--vacuum"]);
    assert!(text(&o).contains("vacuumed"), "{}", text(&o));
    assert!(size() * 4 < before, "VACUUM shrinks the file: {before} -> {} bytes", size());
}

#[test]
fn bad_arguments_are_usage_errors_that_say_what_to_do() {
    let sb = Sandbox::new();
    store_with(&sb, &[("n", 1, "a")], 0);
    let cases: &[(&[&str], &str)] = &[
        (&["prune"], "give RUN ids or labels"),
        (&["prune", "nope"], "no run"),
        (&["prune", "--older-than", "-5d"], "cannot be negative"),
        (&["prune", "--older-than", "5 days"], "give an age such as 30d"),
        (&["prune", "--keep-last", "0"], "at least 1"),
        (&["prune", "--keep-last", "-2"], "at least 1"),
        (&["prune", "--tag", "commit"], "KEY=VALUE"),
        (&["prune", "--label", "n"], "add --yes"),
    ];
    for (args, says) in cases {
        let o = sb.cmd(args).stdin(Stdio::null()).output().expect("spawn");
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(says), "{args:?}: {}", text(&o));
    }
    let o = Command::new(bin())
        .args(["--db", "postgres://u@127.0.0.1:9/db", "prune", "--vacuum"])
        .env_remove("RACEHORSE_DB")
        .output()
        .expect("spawn");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let missing = sb.dir.path().join("none.db");
    let o = Command::new(bin()).arg("--db").arg(&missing).args(["prune", "1"]).output().expect("spawn");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!missing.exists(), "no store is created");
    assert_eq!(stored(sb.run(&["list", "--json"])).len(), 1, "nothing was removed");
}

fn central(url: &str, args: &[&str]) -> Output {
    let mut c = Command::new(bin());
    c.arg("--db").arg(url).args(args).env_remove("RACEHORSE_DB").env_remove("PGPASSWORD");
    c.stdin(Stdio::null()).output().expect("spawn racehorse")
}

#[test]
fn pruning_the_central_database_lists_then_removes_the_same_runs_and_keeps_the_ledgers() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some((_cluster, url)) = central_db(tmp.path()) else { return };
    let sb = Sandbox::new();
    let u = store_with(&sb, &[("n", 300, "a"), ("n", 200, "b"), ("n", 100, "c"), ("n", 1, "d")], 1);
    let store = Store::open(&sb.db()).expect("store");
    store.save_change_point(&change_point(&u[0], &u[1])).expect("ledger");
    drop(store);
    let o = central(&url, &["load", sb.db().to_str().expect("utf-8")]);
    assert!(o.status.success(), "{}", text(&o));
    let runs = |url: &str| stored(central(url, &["list", "--json"]));
    let all = runs(&url);
    let dry = central(&url, &["prune", "--older-than", "90d", "--dry-run"]);
    assert_eq!(listed(&dry, "would remove"), short(&[&u[2]]), "{}", text(&dry));
    assert_eq!(listed(&dry, "would keep"), short(&[&u[0], &u[1]]));
    assert_eq!(runs(&url), all, "--dry-run changed nothing");
    let o = central(&url, &["prune", "--older-than", "90d"]);
    assert_eq!(o.status.code(), Some(2), "asks for --yes: {}", text(&o));
    let o = central(&url, &["prune", "--older-than", "90d", "--yes"]);
    assert_eq!(listed(&o, "remove"), short(&[&u[2]]));
    assert!(text(&o).contains("removed 1 run(s) (2 cells)"), "{}", text(&o));
    assert_eq!(runs(&url), short(&[&u[0], &u[1], &u[3]]));
    let o = central(&url, &["prune", "web-1:nope", "--yes"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = central(&url, &["prune", "--older-than", "90d", "--force", "--yes"]);
    assert_eq!(listed(&o, "remove"), short(&[&u[0], &u[1]]));
    assert_eq!(runs(&url), short(&[&u[3]]));
}
