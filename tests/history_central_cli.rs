//! History against the central PostgreSQL store (issue 41): `load` carries tags and the
//! ledger; `history`, `alerts`, `ack` work with `--db postgres://…` and keep one ledger there;
//! the views and every query of the Grafana dashboard in dist/grafana/ run against a real
//! PostgreSQL (started here, removed on every path) and give the columns their panels expect.

use crate::central_cli::central_db;
use crate::common::{bin, text, Sandbox};
use racehorse_core::{CellResult, CellSpec, CpuUsage, Nanos, Params, RunStatus, Value, WorkUnit};
use racehorse_store::{NewRun, Store};
use std::process::{Command, Output};

/// 20 runs of `null clients=1` on web-1, three repetitions each, commit=c0..c19; from commit
/// c12 on the throughput is 15% lower. Deterministic wobble of about 1% between runs.
fn stepped_store(sb: &Sandbox) {
    let store = Store::open(&sb.db()).expect("store");
    let mut rng = racehorse_core::rng::SplitMix64::new(41);
    for run in 0..20 {
        let new = NewRun {
            label: "nightly".into(),
            host: "web-1".into(),
            tags: vec![("commit".into(), format!("c{run}"))],
            ..NewRun::default()
        };
        let id = store.create_run(&new).expect("run");
        let level = if run < 12 { 1000.0 } else { 850.0 } * (0.01 * rng.normal()).exp();
        for rep in 1..=3 {
            let mut params = Params::new();
            params.insert("clients".into(), Value::Int(1));
            let spec = CellSpec { workload: "null".into(), params, variant: "default".into(), rep };
            let mut c = CellResult::empty(spec, WorkUnit::Ops);
            c.window = Nanos(1_000_000_000);
            c.units = level * (0.005 * rng.normal()).exp();
            c.cpu = CpuUsage { user_s: 0.2, kernel_s: 0.3, steal_s: 0.0, iowait_s: 0.0, idle_s: 1.0 };
            c.cpus_online = 2;
            store.insert_cell(id, rep as usize - 1, &c).expect("cell");
        }
        store.finish_run(id, RunStatus::Complete).expect("finish");
    }
}

fn central(url: &str, args: &[&str]) -> Output {
    let mut c = Command::new(bin());
    c.arg("--db").arg(url).args(args).env_remove("RACEHORSE_DB").env_remove("PGPASSWORD");
    c.output().expect("spawn racehorse")
}

fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", text(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)))
}

#[test]
fn history_and_alerts_keep_one_ledger_in_the_central_store() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let Some((_cluster, url)) = central_db(tmp.path()) else { return };
    let sb = Sandbox::new();
    stepped_store(&sb);
    let o = central(&url, &["load", sb.db().to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let doc = json(&central(&url, &["history", "null", "--figure", "throughput", "--json"]));
    let c = &doc["series"][0]["change_points"][0];
    assert!(c.is_object(), "{}", serde_json::to_string_pretty(&doc).unwrap());
    assert_eq!(
        (c["first_after_run"]["tags"]["commit"].as_str(), c["pending"].as_bool()),
        (Some("c12"), Some(false)),
        "{c}"
    );
    let id = c["ledger"]["id"].as_i64().expect("a central ledger id").to_string();
    // Only the points named are read from the central store: another parameter matches no
    // cell and says so; a workload the store lacks is a usage error that names those it has.
    let o = central(&url, &["history", "null", "-p", "clients=2", "--no-ledger"]);
    assert!(o.status.success() && text(&o).contains("no cells of null match"), "{}", text(&o));
    let o = central(&url, &["history", "fileserver", "--no-ledger"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("the store has: null"), "{}", text(&o));
    // Running it again adds nothing: one ledger, in the central store.
    json(&central(&url, &["history", "null", "--figure", "throughput", "--json"]));
    let o = central(&url, &["alerts", "--fail-on-new", "--json"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let alerts: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    // Throughput fell with the same CPU time: CPU per unit (total, kernel, user) rose too.
    let figures: Vec<&str> =
        alerts["alerts"].as_array().unwrap().iter().map(|a| a["figure"].as_str().unwrap()).collect();
    assert_eq!(
        figures,
        ["throughput", "cpu_total_per_unit", "cpu_kernel_per_unit", "cpu_user_per_unit"],
        "{alerts}"
    );
    check_dashboard(&url, 4);
    let o = central(&url, &["ack", &id, "--reason", "expected: smaller buffers"]);
    assert!(o.status.success(), "{}", text(&o));
    check_dashboard(&url, 3);
    // The three CPU points are still new; hidden, the gate is green.
    let still: serde_json::Value =
        serde_json::from_slice(&central(&url, &["alerts", "--json"]).stdout).unwrap();
    for a in still["alerts"].as_array().unwrap() {
        let o = central(&url, &["hide", &a["id"].to_string(), "--reason", "follows from throughput"]);
        assert!(o.status.success(), "{}", text(&o));
    }
    assert_eq!(central(&url, &["alerts", "--fail-on-new"]).status.code(), Some(0));
    // The acknowledgement travels back out with an export of the run after the change.
    let run = format!("web-1:{}", c["first_after_run"]["uuid"].as_str().unwrap());
    let export = json(&central(&url, &["export", &run]));
    assert_eq!(export["change_points"][0]["status"], "acknowledged", "{}", export["change_points"]);
    assert_eq!(export["run"]["tags"]["commit"], "c12");
    // And a local store that imports it has the acknowledged point.
    let file = sb.dir.path().join("after.json");
    std::fs::write(&file, serde_json::to_vec(&export).unwrap()).unwrap();
    let other = Sandbox::new();
    assert!(other.run(&["import", file.to_str().unwrap()]).status.success());
    let local = json(&other.run(&["alerts", "--all", "--json"]));
    assert_eq!(local["alerts"][0]["reason"], "expected: smaller buffers");
    let o = central(&url, &["ack", "999", "--reason", "x"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

/// Every query of the dashboard (variables, annotations, panels) runs and gives the columns
/// its panel reads; `new_points`: how many change points are still new.
fn check_dashboard(url: &str, new_points: usize) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("dist/grafana/racehorse-history.json");
    let dash: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).expect("dashboard")).expect("json");
    let mut client =
        postgres::Client::connect(&url.replace("?sslmode=disable", ""), postgres::NoTls).expect("connect");
    // host and workload have one value here; figure the four throughput and CPU figures.
    for (v, values) in dash["templating"]["list"].as_array().expect("variables").iter().zip([1, 1, 4]) {
        let (cols, rows) = query_columns(&mut client, v["query"].as_str().unwrap());
        assert_eq!((cols.len(), rows), (1, values), "variable {}", v["name"]);
    }
    let (cols, rows) =
        query_columns(&mut client, dash["annotations"]["list"][0]["rawQuery"].as_str().unwrap());
    assert_eq!(cols, ["time", "text", "tags"]);
    assert_eq!(rows, 1, "one change point to annotate");
    let expected: [(&str, &[&str], usize); 3] = [
        ("timeseries", &["time", "value", "metric"], 20),
        (
            "table",
            &[
                "id",
                "host",
                "workload",
                "figure",
                "change_pct",
                "direction",
                "p_value",
                "before_label",
                "after_label",
                "after_started_at",
                "after_tags",
            ],
            new_points,
        ),
        (
            "table",
            &[
                "started_at",
                "label",
                "tags",
                "match_key",
                "median",
                "range_lo",
                "range_hi",
                "reps",
                "noisy",
                "below_resolution",
            ],
            20,
        ),
    ];
    let panels = dash["panels"].as_array().expect("panels");
    assert_eq!(panels.len(), expected.len());
    for (p, (kind, want, rows)) in panels.iter().zip(expected) {
        assert_eq!(p["type"], kind);
        let got = query_columns(&mut client, p["targets"][0]["rawSql"].as_str().unwrap());
        assert_eq!(
            (got.0.as_slice(), got.1),
            (want.iter().map(|s| s.to_string()).collect::<Vec<_>>().as_slice(), rows),
            "panel {}",
            p["title"]
        );
    }
}

/// A dashboard query with Grafana's macros and variables filled in: its column names and
/// how many rows it gives.
fn query_columns(client: &mut postgres::Client, sql: &str) -> (Vec<String>, usize) {
    let sql = sql
        .replace(
            "$__timeFilter(started_at)",
            "started_at BETWEEN to_timestamp(0) AND now() + interval '1 day'",
        )
        .replace(
            "$__timeFilter(after_started_at)",
            "after_started_at BETWEEN to_timestamp(0) AND now() + interval '1 day'",
        )
        .replace("$host", "web-1")
        .replace("$workload", "null")
        .replace("$figure", "throughput");
    assert!(!sql.contains('$'), "a macro left: {sql}");
    let stmt = client.prepare(&sql).unwrap_or_else(|e| panic!("{e}: {sql}"));
    let cols = stmt.columns().iter().map(|c| c.name().to_string()).collect();
    let rows = client.query(&stmt, &[]).unwrap_or_else(|e| panic!("{e}: {sql}")).len();
    (cols, rows)
}
