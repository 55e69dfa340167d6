//! Faults, round three (issue 47), the files: a later export of a known run adds its cells,
//! a kept cell goes only into its own run and only once, `load` checks every file before
//! it writes any, and `-o` onto a full disk leaves the old file whole.

use crate::central_cli::central_db;
use crate::common::{is_root, machine_lock, text, Sandbox};
use crate::compare_by_cli::store_synthetic;
use racehorse_report::synth::Shape;
use serde_json::Value as Json;
use std::process::Command;

fn export_doc(sb: &Sandbox, run: &str) -> Json {
    let o = sb.run(&["export", run, "--format", "json"]);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Issue 47, case 4: the export of a run while it was partial (3 cells), imported, then its
/// finished export: "already in the store; nothing imported", and 3 cells stayed.
#[test]
fn issue47_a_later_export_of_a_known_run_adds_its_cells_through_import() {
    let (source, target) = (Sandbox::new(), Sandbox::new());
    store_synthetic(&source.db(), "grows", &Shape::default());
    let whole = export_doc(&source, "grows");
    let total = whole["cells"].as_array().unwrap().len();
    let mut partial = whole.clone();
    partial["cells"] = Json::from(whole["cells"].as_array().unwrap()[..3].to_vec());
    partial["run"]["status"] = Json::from("running");
    partial["run"]["finished_at_unix_s"] = Json::Null;
    let (p, w) = (source.dir.path().join("partial.json"), source.dir.path().join("whole.json"));
    std::fs::write(&p, partial.to_string()).unwrap();
    std::fs::write(&w, whole.to_string()).unwrap();
    let first = target.run(&["import", p.to_str().unwrap()]);
    assert!(first.status.success(), "{}", text(&first));
    assert_eq!(target.cells("grows").len(), 3);
    let later = target.run(&["import", w.to_str().unwrap()]);
    let t = text(&later);
    assert!(later.status.success(), "{t}");
    assert!(t.contains(&format!("added {} of its {total} cells, status complete", total - 3)), "{t}");
    let after = export_doc(&target, "grows");
    assert_eq!(after["cells"], whole["cells"], "every cell, once, in order");
    assert_eq!(after["run"]["status"], "complete");
    let again = target.run(&["import", w.to_str().unwrap(), p.to_str().unwrap()]);
    assert!(text(&again).matches("nothing imported").count() == 2, "{}", text(&again));
    assert_eq!(target.cells("grows").len(), total);
}

/// Issue 47, case 5: a kept cell went into whatever run had its id in the store it was
/// imported into, and a copy of it was stored a second time at the same position.
#[test]
fn issue47_a_kept_cell_goes_only_into_its_run_and_only_once() {
    let (a, b) = (Sandbox::new(), Sandbox::new());
    {
        let _m = machine_lock();
        for sb in [&a, &b] {
            let o = sb.run(&["run", "null", "--runtime", "50ms", "--warmup", "0s", "--no-warm-up", "-q"]);
            assert!(o.status.success(), "{}", text(&o));
        }
    }
    let uuid = export_doc(&a, "null")["run"]["uuid"].as_str().unwrap().to_string();
    let mut cell = racehorse_core::CellResult::empty(
        racehorse_core::CellSpec {
            workload: "null".into(),
            params: racehorse_core::Params::new(),
            variant: "default".into(),
            rep: 2,
        },
        racehorse_core::WorkUnit::Ops,
    );
    cell.units = 42.0;
    let kept = racehorse_store::spill::keep_cell(&a.db(), 1, &uuid, 1, &cell).unwrap();
    let copy = a.dir.path().join("copy.json");
    std::fs::copy(&kept, &copy).unwrap();
    let elsewhere = b.run(&["import", kept.to_str().unwrap()]);
    assert_eq!(elsewhere.status.code(), Some(2), "{}", text(&elsewhere));
    assert!(text(&elsewhere).contains(&format!("belongs to {uuid}, which is not in the store")));
    assert_eq!(b.cells("null").len(), 1, "nothing added to the other store's run 1");
    let home = a.run(&["import", kept.to_str().unwrap()]);
    assert!(home.status.success(), "{}", text(&home));
    let twice = a.run(&["import", copy.to_str().unwrap()]);
    assert!(twice.status.success() && text(&twice).contains("already holds a cell at position 1"));
    let cells = a.cells("null");
    assert_eq!((cells.len(), cells[1]["units"].as_f64()), (2, Some(42.0)), "{cells:?}");
}

/// Issue 47, case 6: a good export and a malformed one in one `load` loaded the good one,
/// then exited 2; every file is checked before anything is written.
#[test]
fn issue47_load_checks_every_file_before_writing_any() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((_cluster, url)) = central_db(tmp.path()) else { return };
    let sb = Sandbox::new();
    store_synthetic(&sb.db(), "good", &Shape { workloads: 1, ..Shape::default() });
    let good_doc = export_doc(&sb, "good");
    let mut bad_doc = good_doc.clone();
    bad_doc["run"]["uuid"] = Json::from("00000000-0000-4000-8000-000000000047");
    bad_doc["cells"][1]["unit"] = Json::from("furlongs");
    let (good, bad) = (sb.dir.path().join("good.json"), sb.dir.path().join("bad.json"));
    std::fs::write(&good, good_doc.to_string()).unwrap();
    std::fs::write(&bad, bad_doc.to_string()).unwrap();
    let load = |paths: &[&std::path::Path]| {
        let mut c = Command::new(crate::common::bin());
        c.arg("--db").arg(&url).arg("load").args(paths).env_remove("RACEHORSE_DB").env_remove("PGPASSWORD");
        c.output().unwrap()
    };
    let refused = load(&[&good, &bad]);
    let t = text(&refused);
    assert_eq!(refused.status.code(), Some(2), "{t}");
    assert!(t.contains(&format!("{}: cells[1]: unit: unknown", bad.display())), "{t}");
    let alone = load(&[&good]);
    assert!(text(&alone).contains("runs 1 new"), "nothing was loaded before: {}", text(&alone));
}

/// Mounts a tmpfs of 256 KiB at `dir`; unmounted on drop.
struct Tiny(std::path::PathBuf);

impl Tiny {
    fn mount(dir: std::path::PathBuf) -> Tiny {
        std::fs::create_dir_all(&dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "mount tmpfs failed");
        Tiny(dir)
    }
}

impl Drop for Tiny {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Issue 47, case 8: `export`/`report`/`compare -o` onto a full disk left a truncated file
/// and truncated a good one that was there. Now the good one stays as it was.
#[test]
fn issue47_output_onto_a_full_disk_keeps_the_old_file() {
    if !is_root() {
        racehorse_testkit::skip!("mounting a tiny tmpfs needs root (CI runs as root)");
        return;
    }
    let sb = Sandbox::new();
    store_synthetic(&sb.db(), "base", &Shape::default());
    store_synthetic(&sb.db(), "new", &Shape { speed: 1.1, seed: 2, ..Shape::default() });
    let tiny = Tiny::mount(sb.dir.path().join("tiny"));
    let outputs = ["out.json", "out.html", "out.md"].map(|n| tiny.0.join(n));
    for o in &outputs {
        std::fs::write(o, "good").unwrap();
    }
    let _ = Command::new("dd")
        .args(["if=/dev/zero", "bs=4k"])
        .arg(format!("of={}", tiny.0.join("filler").display()))
        .stderr(std::process::Stdio::null())
        .status();
    let commands = [
        vec!["export", "base", "--format", "json", "-o"],
        vec!["report", "base", "-o"],
        vec!["compare", "base", "new", "-o"],
    ];
    for (args, out) in commands.iter().zip(&outputs) {
        let mut args = args.clone();
        args.push(out.to_str().unwrap());
        let o = sb.run(&args);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {t}");
        assert!(t.contains("No space left") && t.contains("kept as it was"), "{t}");
        assert_eq!(std::fs::read_to_string(out).unwrap(), "good", "{args:?}");
    }
    let mut left: Vec<String> = std::fs::read_dir(&tiny.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["filler", "out.html", "out.json", "out.md"], "no temporary file is left");
}
