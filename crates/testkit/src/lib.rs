//! racehorse-testkit: what the tests of every crate share (a dev-dependency only).
//!
//! A test that cannot run here (no root, no PostgreSQL, no KVM …) returns early; cargo counts
//! it as passed. [`skip!`] is the one way such a test says so: it prints `skipped: REASON` on
//! stderr as before, and when `RACEHORSE_SKIP_LOG` names a file (scripts/test.sh sets it) it
//! appends one line to it, `BINARY<TAB>TEST<TAB>REASON`, so that the closing line of the
//! script counts the test as skipped and lists why (scripts/test-count.sh).

use std::io::Write;
use std::path::Path;

/// The environment variable naming the file skips are appended to.
pub const SKIP_LOG_ENV: &str = "RACEHORSE_SKIP_LOG";

/// Says that the running test skipped, and why: `skip!("needs root and {what}")`. The caller
/// returns right after.
#[macro_export]
macro_rules! skip {
    ($($arg:tt)*) => {
        $crate::skipped(&::std::format!($($arg)*))
    };
}

/// What [`skip!`] calls: prints the reason and records the skip where the script asked.
pub fn skipped(reason: &str) {
    eprintln!("skipped: {reason}");
    if let Some(log) = std::env::var_os(SKIP_LOG_ENV) {
        if let Err(e) = record(Path::new(&log), &binary(), &test_name(), reason) {
            eprintln!("could not record the skip in {}: {e}", Path::new(&log).display());
        }
    }
}

/// The test binary's file name as cargo prints it in its `Running … (target/…/NAME)` line.
fn binary() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "?".to_string())
}

/// The running test's name as libtest prints it: libtest runs each test on a thread named
/// after it.
fn test_name() -> String {
    std::thread::current().name().unwrap_or("?").to_string()
}

/// Appends `binary<TAB>test<TAB>reason` as one line (one write, so that tests running in
/// parallel do not interleave their lines).
pub fn record(log: &Path, binary: &str, test: &str, reason: &str) -> std::io::Result<()> {
    let clean = |s: &str| s.replace(['\t', '\n', '\r'], " ");
    let line = format!("{}\t{}\t{}\n", clean(binary), clean(test), clean(reason.trim()));
    std::fs::OpenOptions::new().create(true).append(true).open(log)?.write_all(line.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skip_is_one_line_with_the_binary_the_test_and_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("skips");
        record(&log, "integration-0123", "kvm_cli::boots", "no /dev/kvm\n(here)").unwrap();
        record(&log, "racehorse_pg-ab", "tests::scram", "no\tPostgreSQL").unwrap();
        let text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(
            text,
            "integration-0123\tkvm_cli::boots\tno /dev/kvm (here)\nracehorse_pg-ab\ttests::scram\tno PostgreSQL\n"
        );
    }

    #[test]
    fn skip_appends_to_the_file_the_environment_names() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("skips");
        // The only test of this crate that reads the variable.
        std::env::set_var(SKIP_LOG_ENV, &log);
        skip!("needs {} and {}", "root", "KVM");
        std::env::remove_var(SKIP_LOG_ENV);
        let text = std::fs::read_to_string(&log).unwrap();
        let want = format!(
            "{}\ttests::skip_appends_to_the_file_the_environment_names\tneeds root and KVM\n",
            binary()
        );
        assert_eq!(text, want);
    }

    #[test]
    fn the_test_name_is_the_libtest_thread_name() {
        assert_eq!(test_name(), "tests::the_test_name_is_the_libtest_thread_name");
        assert!(binary().starts_with("racehorse_testkit-"), "{}", binary());
    }
}
