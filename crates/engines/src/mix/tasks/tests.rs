//! Every task body runs at a small size and leaves its user directory empty.

use super::*;

fn env(dir: &std::path::Path) -> TaskEnv {
    let shared_file = dir.join("shared.dat");
    create_shared(&shared_file, 16).unwrap();
    let user = dir.join("user0");
    std::fs::create_dir(&user).unwrap();
    TaskEnv { dir: user, shared_file, disk_blocks: 16, rng: SplitMix64::new(3), sink: 0 }
}

#[test]
fn every_task_runs_and_cleans_up() {
    let tmp = tempfile::tempdir().unwrap();
    let mut e = env(tmp.path());
    for (i, (name, _, about)) in TASKS.iter().enumerate() {
        assert!(!about.is_empty(), "{name} has no description");
        run(i, &mut e).unwrap_or_else(|err| panic!("{name} failed: {err}"));
        let left: Vec<_> = std::fs::read_dir(&e.dir).unwrap().map(|d| d.unwrap().file_name()).collect();
        assert!(left.is_empty(), "{name} left {left:?}");
    }
    assert_ne!(e.sink, 0, "the tasks' results were consumed");
}

#[test]
fn names_are_unique_and_found() {
    let mut names: Vec<&str> = TASKS.iter().map(|t| t.0).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), TASKS.len());
    assert_eq!(index_of("sieve").map(|i| TASKS[i].0), Some("sieve"));
    assert_eq!(index_of("nope"), None);
}

#[test]
fn disk_task_errors_say_what_failed() {
    let tmp = tempfile::tempdir().unwrap();
    let mut e = env(tmp.path());
    e.shared_file = tmp.path().join("missing.dat");
    let err = run(index_of("disk_rd").unwrap(), &mut e).unwrap_err();
    assert!(err.starts_with("disk_rd: open the shared file"), "{err}");
}
