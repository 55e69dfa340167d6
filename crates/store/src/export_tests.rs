//! Tests of the JSON export contract and the CSV export.

use super::*;
use crate::testutil::{failed_cell, full_cell, new_run};
use crate::Store;
use racehorse_core::Value;

fn stored(cells: &[CellResult]) -> (RunInfo, Vec<CellResult>) {
    let store = Store::open_in_memory().unwrap();
    let run = store.create_run(&new_run("export")).unwrap();
    for (i, c) in cells.iter().enumerate() {
        store.insert_cell(run, i, c).unwrap();
    }
    (store.resolve_run("export").unwrap(), store.run_cells(run).unwrap())
}

/// Minimal RFC 4180 reader for checking the writer.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut field) = (Vec::new(), Vec::new(), String::new());
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    rows
}

#[test]
fn json_export_parses_back_with_version_1() {
    let (run, cells) = stored(&[full_cell(1), failed_cell()]);
    let text = export_json(&run, &cells);
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["format"], "racehorse-run");
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["run"]["env"]["kernel"], "6.8.0", "env is embedded as an object");
    assert_eq!(doc["run"]["status"], "running");
    assert_eq!(doc["run"]["cells_failed"], 1);
    let c0 = &doc["cells"][0];
    assert_eq!(c0["params"]["cpus"], 4);
    assert_eq!(c0["params"]["direct"], true);
    assert_eq!(c0["params"]["ratio"], 0.75);
    assert_eq!(c0["unit"], "bytes");
    assert_eq!(c0["window_s"].as_f64().unwrap(), cells[0].window.as_secs_f64());
    assert_eq!(c0["throughput_per_s"].as_f64().unwrap(), cells[0].throughput());
    assert_eq!(c0["cpu_per_unit"]["total_s"].as_f64(), cells[0].cpu_total_per_unit());
    assert_eq!(c0["workload_cpu"]["method"], "threads");
    assert_eq!(c0["latencies"][1]["op"], "write");
    assert_eq!(
        c0["latencies"][0]["p99_ns"].as_u64().unwrap(),
        cells[0].latencies[0].latency.quantile_ns(0.99)
    );
    assert_eq!(c0["extra"]["fio_bw_kib_per_s"], 146_484.375);
    assert_eq!(doc["cells"][1]["status"], "failed");
    assert!(doc["cells"][1]["error"].as_str().unwrap().contains('\n'));
}

#[test]
fn json_cpu_per_unit_is_null_without_units() {
    let mut cell = full_cell(1);
    cell.units = 0.0;
    let (run, cells) = stored(&[cell]);
    let doc: serde_json::Value = serde_json::from_str(&export_json(&run, &cells)).unwrap();
    assert!(doc["cells"][0]["cpu_per_unit"].is_null());
    assert_eq!(doc["cells"][0]["throughput_per_s"], 0.0);
}

#[test]
fn csv_quotes_commas_quotes_and_newlines() {
    let (run, cells) = stored(&[full_cell(1), failed_cell()]);
    let text = export_csv(&run, &cells);
    assert!(text.contains("\"fio exited 1: \"\"bad, option\"\"\nsecond line\""), "{text}");
    let rows = parse_csv(&text);
    assert_eq!(rows.len(), 3);
    let header = &rows[0];
    assert!(rows.iter().all(|r| r.len() == header.len()));
    let col =
        |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
    assert_eq!(rows[2][col("error")], "fio exited 1: \"bad, option\"\nsecond line");
    assert_eq!(rows[1][col("error")], "");
    assert_eq!(rows[1][col("param.target")], "/mnt/a b,\"c\"");
    assert_eq!(rows[1][col("bytes_read")], "1000000000");
    assert_eq!(rows[1][col("window_s")], "10.000000123");
    assert_eq!(rows[1][col("lat.read.max_ns")], "2000000");
    assert_eq!(rows[1][col("extra.fio_bw_kib_per_s")], "146484.375");
    assert_eq!(rows[1][col("wl_cpu_method")], "threads");
}

#[test]
fn csv_params_are_the_union_over_cells() {
    let mut a = full_cell(1);
    a.spec.params.insert("only_a".into(), Value::Int(1));
    let mut b = full_cell(1);
    b.spec.params.insert("only_b".into(), Value::Str("x".into()));
    b.units = 0.0;
    let (run, cells) = stored(&[a, b]);
    let rows = parse_csv(&export_csv(&run, &cells));
    let col = |name: &str| rows[0].iter().position(|h| h == name).unwrap();
    assert_eq!((rows[1][col("param.only_a")].as_str(), rows[1][col("param.only_b")].as_str()), ("1", ""));
    assert_eq!((rows[2][col("param.only_a")].as_str(), rows[2][col("param.only_b")].as_str()), ("", "x"));
    assert_eq!(rows[2][col("cpu_total_per_unit_s")], "", "no per-unit cost without units");
    assert!(rows[0].iter().all(|h| !h.is_empty()));
}

#[test]
fn embedded_json_columns() {
    assert_eq!(embedded(""), serde_json::Value::Null);
    assert_eq!(embedded("{\"a\":1}")["a"], 1);
    assert_eq!(embedded("not json"), serde_json::Value::String("not json".into()));
}
