//! Moving runs between stores: `import` of a JSON export (once only, unknown versions
//! refused with exit 2) and `compare FILE:RUN RUN` across two store files.

use crate::common::{text, Sandbox};
use crate::compare_by_cli::store_synthetic;
use racehorse_report::synth::Shape;

#[test]
fn an_export_imports_once_and_compares_in_its_new_store() {
    let (a, b) = (Sandbox::new(), Sandbox::new());
    store_synthetic(&a.db(), "base", &Shape::default());
    store_synthetic(&b.db(), "new", &Shape { speed: 1.25, seed: 2, ..Shape::default() });
    let file = a.dir.path().join("base.json");
    let o = a.run(&["export", "base", "--format", "json", "-o", file.to_str().expect("utf-8")]);
    assert!(o.status.success(), "{}", text(&o));
    let first = b.run(&["import", file.to_str().expect("utf-8")]);
    let t = text(&first);
    assert!(first.status.success(), "{t}");
    assert!(t.contains("imported run 1 'base' from synthetic as run 2 (48 cells"), "{t}");
    let again = b.run(&["import", file.to_str().expect("utf-8")]);
    assert!(again.status.success(), "{}", text(&again));
    assert!(text(&again).contains("already in the store as run 2; nothing imported"), "{}", text(&again));
    let list = text(&b.run(&["list"]));
    assert_eq!(list.lines().filter(|l| l.contains("synthetic")).count(), 2, "no duplicate: {list}");
    let c = b.run(&["compare", "base", "new"]);
    assert!(c.status.success(), "{}", text(&c));
    assert!(text(&c).contains("racehorse compare: run 1 'new' vs run 2 'base'"), "{}", text(&c));
    let export_a = a.cells("base");
    let export_b = b.cells("base");
    assert_eq!(export_a, export_b, "the imported cells export as the original ones");
}

#[test]
fn unknown_export_versions_and_other_files_are_usage_errors() {
    let sb = Sandbox::new();
    store_synthetic(&sb.db(), "base", &Shape { workloads: 1, ..Shape::default() });
    let json = String::from_utf8(sb.run(&["export", "base", "--format", "json"]).stdout).expect("utf-8");
    let v9 = sb.dir.path().join("v9.json");
    std::fs::write(&v9, json.replacen("\"version\": 1", "\"version\": 9", 1)).expect("write");
    let o = sb.run(&["import", v9.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("export version 9 is not known"), "{}", text(&o));
    let other = sb.dir.path().join("other.json");
    std::fs::write(&other, "{\"format\": \"something\"}").expect("write");
    let o = sb.run(&["import", other.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("neither a run's JSON export"), "{}", text(&o));
}

#[test]
fn compare_reads_a_run_of_another_store_file() {
    let (a, b) = (Sandbox::new(), Sandbox::new());
    store_synthetic(&a.db(), "base", &Shape::default());
    store_synthetic(&b.db(), "new", &Shape { speed: 0.8, seed: 2, ..Shape::default() });
    let other = format!("{}:base", a.db().display());
    let o = b.run(&["compare", &other, "new", "--fail-on-regression", "5"]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(3), "20% slower than the other store's run: {t}");
    assert!(t.contains(&format!("vs run 1 'base' (in {})", a.db().display())), "{t}");
    let by_id = b.run(&["compare", &format!("{}:1", a.db().display()), "1"]);
    assert!(by_id.status.success(), "{}", text(&by_id));
    let missing = b.run(&["compare", &format!("{}:nope", a.db().display()), "new"]);
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing));
    assert!(text(&missing).contains("nope"), "{}", text(&missing));
}
