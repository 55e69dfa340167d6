//! Tests of writing cells and reading them back: exact round trips, plan order, durability
//! of each committed cell, and range checks.

use super::*;
use crate::testutil::{failed_cell, full_cell, new_run};
use proptest::prelude::*;

#[test]
fn full_cell_round_trips() {
    let store = Store::open_in_memory().unwrap();
    let run = store.create_run(&new_run("rt")).unwrap();
    let cells = vec![full_cell(1), failed_cell()];
    for (i, c) in cells.iter().enumerate() {
        store.insert_cell(run, i, c).unwrap();
    }
    let back = store.run_cells(run).unwrap();
    assert_eq!(back, cells);
    assert_eq!(back[0].spec.params["whole"], racehorse_core::Value::Float(3.0));
    let light = store.run_cells_without_series(run).unwrap();
    assert!(!back[0].samples.is_empty() && !back[0].latencies.is_empty());
    assert!(light[0].samples.is_empty() && light[0].latencies.is_empty());
    let mut expected = back[0].clone();
    expected.samples.clear();
    expected.latencies.clear();
    assert_eq!(light[0], expected, "everything but the series is read");
    let for_compare = store.run_cells_with_latencies(run).unwrap();
    expected.latencies = back[0].latencies.clone();
    assert_eq!(for_compare[0], expected, "latencies without samples");
    assert_eq!(for_compare.len(), cells.len());
}

#[test]
fn latency_summary_columns_match_the_histogram() {
    let store = Store::open_in_memory().unwrap();
    let run = store.create_run(&new_run("lat")).unwrap();
    let cell = full_cell(1);
    let id = store.insert_cell(run, 0, &cell).unwrap();
    let (count, p99_ns, max_ns): (u64, u64, u64) = store
        .conn
        .query_row(
            "SELECT count, p99_ns, max_ns FROM latencies WHERE cell_id = ?1 AND op = 'read'",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    let h = &cell.latencies[0].latency;
    assert_eq!((count, p99_ns, max_ns), (h.count, h.quantile_ns(0.99), h.max_ns));
}

#[test]
fn cells_come_back_in_plan_order_and_per_run() {
    let store = Store::open_in_memory().unwrap();
    let run = store.create_run(&new_run("order")).unwrap();
    let other = store.create_run(&new_run("other")).unwrap();
    for idx in [2usize, 0, 1] {
        store.insert_cell(run, idx, &full_cell(idx as u32 + 1)).unwrap();
    }
    store.insert_cell(other, 0, &full_cell(9)).unwrap();
    let reps: Vec<u32> = store.run_cells(run).unwrap().iter().map(|c| c.spec.rep).collect();
    assert_eq!(reps, vec![1, 2, 3]);
    assert_eq!(store.run_cells(other).unwrap().len(), 1);
    assert!(store.run_cells(12345).unwrap().is_empty());
}

#[test]
fn each_cell_is_visible_to_another_connection_once_inserted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("durable.db");
    let writer = Store::open(&path).unwrap();
    let reader = Store::open(&path).unwrap();
    let run = writer.create_run(&new_run("crash")).unwrap();
    for idx in 0..3 {
        writer.insert_cell(run, idx, &full_cell(idx as u32 + 1)).unwrap();
        let seen = reader.run_cells(run).unwrap();
        assert_eq!(seen.len(), idx + 1, "cell {idx} not committed");
        assert_eq!(seen[idx], full_cell(idx as u32 + 1));
    }
    // Still readable from a fresh connection after the writer goes away without finishing.
    drop(writer);
    assert_eq!(Store::open(&path).unwrap().run_cells(run).unwrap().len(), 3);
}

#[test]
fn insert_into_unknown_run_fails_clearly() {
    let store = Store::open_in_memory().unwrap();
    let err = store.insert_cell(42, 0, &full_cell(1)).unwrap_err();
    assert!(matches!(err, StoreError::UnknownRun { ref key, .. } if key == "42"), "{err:?}");
}

#[test]
fn counts_above_i64_are_refused_and_nothing_is_written() {
    let store = Store::open_in_memory().unwrap();
    let run = store.create_run(&new_run("big")).unwrap();
    let mut cell = full_cell(1);
    cell.bytes_read = u64::MAX;
    let err = store.insert_cell(run, 0, &cell).unwrap_err();
    assert!(matches!(err, StoreError::OutOfRange { column: "bytes_read", .. }), "{err:?}");
    let mut cell = full_cell(1);
    cell.samples[1].mem_free_bytes = u64::MAX;
    assert!(store.insert_cell(run, 0, &cell).is_err());
    assert!(store.run_cells(run).unwrap().is_empty(), "failed cell left rows behind");
}

#[test]
fn nan_reads_back_as_nan() {
    let store = Store::open_in_memory().unwrap();
    let run = store.create_run(&new_run("nan")).unwrap();
    let mut cell = full_cell(1);
    cell.units = f64::NAN;
    cell.extra.insert("bad".into(), f64::INFINITY);
    store.insert_cell(run, 0, &cell).unwrap();
    let back = &store.run_cells(run).unwrap()[0];
    assert!(back.units.is_nan());
    assert!(back.extra["bad"].is_nan());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn counts_round_trip(
        units in prop::num::f64::NORMAL | prop::num::f64::ZERO | prop::num::f64::SUBNORMAL,
        ops in 0..=i64::MAX as u64,
        bytes_read in 0..=i64::MAX as u64,
        bytes_written in 0..=i64::MAX as u64,
        window_ns in 0..=i64::MAX as u64,
        cpus in any::<u32>(),
        rep in any::<u32>(),
    ) {
        let store = Store::open_in_memory().unwrap();
        let run = store.create_run(&new_run("prop")).unwrap();
        let mut cell = full_cell(rep);
        cell.units = units;
        cell.ops = ops;
        cell.bytes_read = bytes_read;
        cell.bytes_written = bytes_written;
        cell.window = Nanos(window_ns);
        cell.cpus_online = cpus;
        store.insert_cell(run, 0, &cell).unwrap();
        let back = store.run_cells(run).unwrap();
        prop_assert_eq!(back, vec![cell]);
    }
}

/// A cell run in a KVM guest keeps its CPU split through the store and an export/import.
#[test]
fn a_guest_cells_cpu_split_round_trips() {
    let store = Store::open_in_memory().unwrap();
    let run = store.create_run(&new_run("virt")).unwrap();
    let mut cell = full_cell(1);
    let (guest_s, hypervisor_s) = racehorse_core::VirtCpu::split(3.0, 2.5);
    cell.virt = Some(racehorse_core::VirtCpu {
        total_s: 3.0,
        guest_s,
        hypervisor_s,
        qemu_s: 2.7,
        vcpus: 2,
        mem_mib: 512,
        host_window: Nanos(2_000_000_000),
        boot: Nanos(900_000_000),
        ..Default::default()
    });
    store.insert_cell(run, 0, &cell).unwrap();
    let back = store.run_cells(run).unwrap();
    assert_eq!(back[0].virt, cell.virt);
    let info = store.run(run).unwrap().unwrap();
    let json = crate::export_json(&info, &back);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let per_unit = &doc["cells"][0]["virt"]["per_unit"];
    assert!(per_unit["guest_s"].as_f64().is_some() && doc["cells"][0]["virt"]["boot_ns"] == 900_000_000);
    let imported = crate::parse_export(&json).unwrap();
    assert_eq!(imported.cells[0].virt, cell.virt);
}
