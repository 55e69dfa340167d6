//! Issue 47, case 8: `export`/`report`/`compare -o` onto a full disk left a truncated file
//! and truncated a good one that was there. A file size limit (RLIMIT_FSIZE, which binds
//! root too) stands in for the full disk: the write fails midway, the old file stays whole
//! and no temporary file is left. Own test binary: the limit is process-wide.

use racehorse_store::files::write_atomic;

#[test]
fn issue47_a_write_that_fails_midway_leaves_the_old_file_whole() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("report.html");
    std::fs::write(&path, "good old report").expect("write");
    // SAFETY: ignoring SIGXFSZ makes a write over the limit fail with EFBIG instead of
    // ending the process; setrlimit has no other precondition.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        let limit = libc::rlimit { rlim_cur: 64 * 1024, rlim_max: libc::RLIM_INFINITY };
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &limit), 0);
    }
    let e = write_atomic(&path, &vec![b'x'; 1 << 20]).expect_err("over the limit");
    assert_eq!(e.raw_os_error(), Some(libc::EFBIG), "{e}");
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "good old report");
    let left: Vec<_> =
        std::fs::read_dir(dir.path()).expect("dir").map(|e| e.expect("entry").file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("report.html")], "no temporary file is left");
    write_atomic(&path, b"small enough").expect("within the limit");
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "small enough");
}
