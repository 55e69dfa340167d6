//! `racehorse run quick`, the tour a newcomer runs first: one short cell of every built-in
//! area (paging only as root), ending in the per-area table.

use crate::common::{is_root, machine_lock, text, Sandbox};

#[test]
fn the_tour_runs_one_cell_per_area_and_ends_in_the_per_area_table() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let dir = sb.work();
    // Shorter windows than the preset's 5 s keep the test quick; the cells are the preset's.
    let out = sb.run(&[
        "run",
        "quick",
        "--runtime",
        "1s",
        "--warmup",
        "0s",
        "--quiet",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    let table = &t[t.find("By area").unwrap_or_else(|| panic!("no per-area table: {t}"))..];
    let areas =
        ["File server", "Kernel functions", "Disk I/O", "Network", "Compute", "Scalability", "Database"];
    for area in areas {
        assert!(table.lines().any(|l| l.starts_with(area)), "{area} missing: {table}");
    }
    assert_eq!(table.lines().any(|l| l.starts_with("Paging")), is_root(), "paging only as root: {table}");
    if !is_root() {
        assert!(t.contains("note: preset quick: [[workload]] 8 (paging) left out: needs root"), "{t}");
    }
    let cells = sb.cells("quick");
    assert!(cells.iter().all(|c| c["status"] == "ok"), "every cell ok: {t}");
    assert_eq!(cells.len(), if is_root() { 12 } else { 11 });
}
