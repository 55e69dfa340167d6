//! Executor tests on a temporary directory: the files ops leave behind, and error counting.

use super::*;
use crate::fileserver::loadfile::parse;

const EXCERPT: &str = include_str!("../../fixtures/fileserver/excerpt.txt");

fn run_all(text: &str, root: &Path, id: usize) -> (u64, u64) {
    let lf = parse(text).unwrap();
    let mut ex = Executor::new(&lf, root, id, ExecConfig::default());
    let mut bytes = 0;
    for op in &lf.ops {
        bytes += ex.exec(op).unwrap();
    }
    (bytes, ex.errors)
}

#[test]
fn excerpt_leaves_expected_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let body: String =
        EXCERPT.lines().filter(|l| !l.starts_with("Deltree")).map(|l| format!("{l}\n")).collect();
    let (bytes, errors) = run_all(&body, tmp.path(), 3);
    assert_eq!(errors, 0);
    assert_eq!(bytes, 65536 + 4096 + 1 + 61440 + 4096 + 4096 + 4096);
    let word = tmp.path().join("clients/client3/~dmtmp/WORD");
    assert!(word.is_dir());
    assert_eq!(std::fs::metadata(word.join("KEEP.DOC")).unwrap().len(), 4096);
    assert!(!word.join("CHAP1.DOC").exists(), "renamed away");
    assert!(!word.join("CHAP2.DOC").exists(), "unlinked");
    assert!(!tmp.path().join("clients/client1").exists(), "client1 is replaced by the client's name");
}

#[test]
fn deltree_removes_files_but_keeps_directories() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, errors) = run_all(EXCERPT, tmp.path(), 0);
    assert_eq!(errors, 0);
    let word = tmp.path().join("clients/client0/~dmtmp/WORD");
    assert!(word.is_dir());
    assert_eq!(std::fs::read_dir(&word).unwrap().count(), 0);
}

#[test]
fn written_data_is_zero_and_sized_by_offsets() {
    let tmp = tempfile::tempdir().unwrap();
    let text = "NTCreateX \"\\clients\\client1\\f\" 0x0 0x5 7 NT_STATUS_OK\n\
                WriteX 7 10 5 5 NT_STATUS_OK\nClose 7 NT_STATUS_OK\n";
    std::fs::create_dir_all(tmp.path().join("clients/client0")).unwrap();
    let (bytes, errors) = run_all(text, tmp.path(), 0);
    assert_eq!((bytes, errors), (5, 0));
    assert_eq!(std::fs::read(tmp.path().join("clients/client0/f")).unwrap(), vec![0u8; 15]);
}

#[test]
fn unexpected_outcomes_are_counted_not_fatal() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("clients/client0")).unwrap();
    let text = "Unlink \"\\clients\\client1\\nothere\" 0x20 NT_STATUS_OK\n\
                NTCreateX \"\\clients\\client1\\g\" 0x0 0x2 1 NT_STATUS_OBJECT_NAME_NOT_FOUND\n\
                Close 1 NT_STATUS_OK\n\
                Unlink \"\\clients\\client1\\nothere\" 0x20 NT_STATUS_OBJECT_NAME_NOT_FOUND\n\
                Rename \"\\clients\\client1\\x\" \"\\clients\\client1\\y\" *\n";
    // unlink expected OK fails (1); open expected to fail succeeds (1); close of a
    // handle that was never stored (1); the expected failure and the `*` are fine.
    assert_eq!(run_all(text, tmp.path(), 0).1, 3);
}

#[test]
fn resolve_falls_back_to_case_insensitive_scan() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("clients/client0")).unwrap();
    std::fs::write(tmp.path().join("clients/client0/ABC.TXT"), b"x").unwrap();
    let text = "QUERY_PATH_INFORMATION \"\\clients\\client1\\abc.txt\" 1004 NT_STATUS_OK\n\
                FIND_FIRST \"\\clients\\client1\\*.TXT\" 260 1366 0 NT_STATUS_OK\n\
                QUERY_FS_INFORMATION 1 NT_STATUS_OK\n";
    assert_eq!(run_all(text, tmp.path(), 0), (0, 0));
}

#[test]
fn full_disk_is_fatal_with_path() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("clients/client0");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink("/dev/full", dir.join("full")).unwrap();
    let lf = parse(
        "NTCreateX \"\\clients\\client1\\full\" 0x0 0x1 1 NT_STATUS_OK\nWriteX 1 0 10 10 NT_STATUS_OK\n",
    )
    .unwrap();
    let mut ex = Executor::new(&lf, tmp.path(), 0, ExecConfig::default());
    ex.exec(&lf.ops[0]).unwrap();
    let fatal = ex.exec(&lf.ops[1]).unwrap_err();
    assert_eq!(fatal.source.raw_os_error(), Some(libc::ENOSPC));
    assert_eq!(fatal.path, dir.join("full"));
    assert_eq!(fatal.line, 2);
}

#[test]
fn sync_options_still_work() {
    let tmp = tempfile::tempdir().unwrap();
    let lf = parse(EXCERPT).unwrap();
    let cfg = ExecConfig { sync_open: true, fsync_dirs: true, fsync_writes: true };
    let mut ex = Executor::new(&lf, tmp.path(), 1, cfg);
    for op in &lf.ops {
        ex.exec(op).unwrap();
    }
    assert_eq!(ex.errors, 0);
    assert_eq!(ex.client_dir(), tmp.path().join("clients/client1"));
}
