//! Issue 44, loading through the binary into a real PostgreSQL: eight `racehorse load`
//! processes at once over overlapping inputs store exactly the inputs' cells, each once, and
//! every histogram comes back whole; a load killed with SIGKILL while it writes (its
//! transaction held at its last statement by a lock this test keeps) leaves no partial run,
//! and the next load completes it.

use crate::central_cli::central_db;
use crate::common::{bin, text, Sandbox};
use racehorse_report::synth::{synthetic_side, Shape};
use racehorse_store::{export_doc, NewRun, Store};
use serde_json::Value as Json;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `count` runs (inventory names web-K, labels rK) of synthetic cells with latency
/// histograms in one store, each exported to rK.json; with `partial`, also the export of
/// run 0 with half of its cells. Returns the files and their documents.
fn exports(sb: &Sandbox, count: usize, partial: bool) -> Vec<(PathBuf, Json)> {
    let store = Store::open(&sb.db()).unwrap();
    let mut out = Vec::new();
    for k in 0..count {
        let new = NewRun {
            label: format!("r{k}"),
            host: "h".into(),
            inventory_name: format!("web-{k}"),
            ..NewRun::default()
        };
        let id = store.create_run(&new).unwrap();
        let shape = Shape { latencies: true, seed: k as u64 + 1, ..Shape::default() };
        let cells = synthetic_side(0, "x", &shape).cells;
        for (i, c) in cells.iter().enumerate() {
            store.insert_cell(id, i, c).unwrap();
        }
        if partial && k == 0 {
            let half = &store.run_cells(id).unwrap()[..cells.len() / 2];
            let doc = export_doc(&store.run(id).unwrap().unwrap(), half);
            let file = sb.dir.path().join("r0-partial.json");
            std::fs::write(&file, doc.to_string()).unwrap();
            out.push((file, doc));
        }
        store.finish_run(id, racehorse_core::RunStatus::Complete).unwrap();
        let doc = export_doc(&store.run(id).unwrap().unwrap(), &store.run_cells(id).unwrap());
        let file = sb.dir.path().join(format!("r{k}.json"));
        std::fs::write(&file, doc.to_string()).unwrap();
        out.push((file, doc));
    }
    out
}

fn load_cmd(url: &str, args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.arg("--db").arg(url).arg("load").args(args).env_remove("RACEHORSE_DB").env_remove("PGPASSWORD");
    c
}

fn sql_count(client: &mut postgres::Client, q: &str) -> i64 {
    client.query_one(q, &[]).unwrap().get(0)
}

/// The "cells N added" of a load's closing line.
fn cells_added(o: &Output) -> u64 {
    let t = text(o);
    let after = t.split("cells ").last().unwrap_or_default();
    after.split(' ').next().and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("no total: {t}"))
}

#[test]
fn eight_concurrent_loaders_of_overlapping_inputs_store_each_cell_once() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((_cluster, url)) = central_db(tmp.path()) else { return };
    let sb = Sandbox::new();
    let files = exports(&sb, 6, true);
    let paths: Vec<&str> = files.iter().map(|(p, _)| p.to_str().unwrap()).collect();
    let store = sb.db();
    let children: Vec<_> = (0..8)
        .map(|i| {
            let mut args: Vec<&str> = (0..3).map(|k| paths[(i + 2 * k) % paths.len()]).collect();
            if i == 5 {
                args.push(store.to_str().unwrap());
            }
            if i % 2 == 1 {
                args.extend(["--jobs", "3"]);
            }
            load_cmd(&url, &args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
        })
        .collect();
    let outputs: Vec<Output> = children.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    for o in &outputs {
        assert!(o.status.success(), "{}", text(o));
    }
    let full: Vec<&Json> =
        files.iter().filter(|(p, _)| !p.ends_with("r0-partial.json")).map(|f| &f.1).collect();
    let total: usize = full.iter().map(|d| d["cells"].as_array().unwrap().len()).sum();
    assert_eq!(outputs.iter().map(cells_added).sum::<u64>(), total as u64, "each cell added by one loader");
    let mut client = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    assert_eq!(sql_count(&mut client, "SELECT count(*) FROM racehorse.cells"), total as i64);
    let distinct = "SELECT count(*) FROM (SELECT DISTINCT run_uuid, match_key, rep FROM racehorse.cells) d";
    assert_eq!(sql_count(&mut client, distinct), total as i64, "no cell twice");
    assert_eq!(sql_count(&mut client, "SELECT count(*) FROM racehorse.runs"), full.len() as i64);
    for doc in &full {
        let q = format!(
            "SELECT count(*) FROM racehorse.cells WHERE run_uuid = '{}' AND latency_buckets IS NOT NULL",
            doc["run"]["uuid"].as_str().unwrap()
        );
        assert_eq!(sql_count(&mut client, &q) as usize, doc["cells"].as_array().unwrap().len(), "{q}");
    }
    let o = Command::new(bin())
        .args(["--db", &url, "export", "web-3:r3", "--format", "json"])
        .env_remove("PGPASSWORD")
        .output()
        .unwrap();
    let back: Json = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
    assert_eq!(back["cells"], full[3]["cells"], "every cell, histograms whole, comes back");
}

const POINT: &str = "00000000-0000-4000-8000-000000000044";

/// Runs `q` on `client` until it returns a count of at least 1 (30 s at most), while
/// `child`, if any, is still running.
fn wait_for(client: &mut postgres::Client, q: &str, mut child: Option<&mut std::process::Child>) {
    let start = Instant::now();
    while sql_count(client, q) < 1 {
        if let Some(c) = child.as_mut() {
            let exited = c.try_wait().unwrap();
            assert!(exited.is_none(), "the load ended before it could be killed: {exited:?}");
        }
        assert!(start.elapsed() < Duration::from_secs(30), "still not: {q}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_load_killed_while_it_writes_leaves_no_partial_run_and_the_next_completes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((_cluster, url)) = central_db(tmp.path()) else { return };
    let sb = Sandbox::new();
    let files = exports(&sb, 2, true);
    let (partial, full0, full1) = (&files[0], &files[1], &files[2]);
    let o = load_cmd(&url, &[partial.0.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let half = partial.1["cells"].as_array().unwrap().len() as i64;
    // Run 1's export carries a change point whose row this test holds, uncommitted: the
    // loader writes both runs' rows, then waits at the ledger, the last statement.
    let uuid1 = full1.1["run"]["uuid"].as_str().unwrap();
    let mut doc1 = full1.1.clone();
    doc1["change_points"] = serde_json::json!([{"uuid": POINT, "series_key": "s", "host": "web-1",
        "workload": "w0", "variant": "default", "params_json": "{}", "figure": "throughput", "unit": "ops",
        "before_run_uuid": uuid1, "after_run_uuid": uuid1, "level_before": 1.0, "level_after": 2.0,
        "ratio": 2.0, "ratio_lo": null, "ratio_hi": null, "p_value": 0.01, "direction": "better",
        "status": "new", "reason": null, "link": null, "detected_at_unix_s": 1, "updated_at_unix_s": 1}]);
    std::fs::write(&full1.0, doc1.to_string()).unwrap();
    let mut holder = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let mut hold = holder.transaction().unwrap();
    hold.batch_execute(&format!(
        "INSERT INTO racehorse.change_points (uuid, series_key, host, workload, variant, params, figure, unit, \
         before_run_uuid, after_run_uuid, level_before, level_after, ratio, p_value, direction, status, \
         detected_at_unix_s, updated_at_unix_s) VALUES ('{POINT}', 's', 'h', 'w', 'v', '{{}}', 'f', 'u', \
         '{uuid1}', '{uuid1}', 1, 1, 1, 1, 'better', 'new', 0, 0)"
    ))
    .unwrap();
    let paths = [full0.0.to_str().unwrap(), full1.0.to_str().unwrap(), "--jobs", "1"];
    let mut child = load_cmd(&url, &paths).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let mut watcher = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let waiting = "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'racehorse' \
                   AND wait_event_type = 'Lock' AND query LIKE '%change_points%'";
    wait_for(&mut watcher, waiting, Some(&mut child));
    child.kill().unwrap();
    child.wait().unwrap();
    hold.rollback().unwrap();
    let gone =
        "SELECT (count(*) = 0)::int::bigint FROM pg_stat_activity WHERE application_name = 'racehorse'";
    wait_for(&mut watcher, gone, None);
    let run0 = full0.1["run"]["uuid"].as_str().unwrap();
    let count_of = |c: &mut postgres::Client, uuid: &str| {
        sql_count(c, &format!("SELECT count(*) FROM racehorse.cells WHERE run_uuid = '{uuid}'"))
    };
    assert_eq!(count_of(&mut watcher, run0), half, "run 0 as the first load left it");
    assert_eq!(count_of(&mut watcher, uuid1), 0, "nothing of run 1");
    let runs = sql_count(&mut watcher, "SELECT count(*) FROM racehorse.runs");
    assert_eq!(runs, 1, "no row of run 1");
    let o = load_cmd(&url, &paths).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let n0 = full0.1["cells"].as_array().unwrap().len() as i64;
    let n1 = doc1["cells"].as_array().unwrap().len() as i64;
    assert!(text(&o).contains("runs 1 new, 1 updated, 0 unchanged"), "{}", text(&o));
    assert_eq!((count_of(&mut watcher, run0), count_of(&mut watcher, uuid1)), (n0, n1));
    let points = sql_count(&mut watcher, "SELECT count(*) FROM racehorse.change_points");
    assert_eq!(points, 1, "the ledger got its point");
}
