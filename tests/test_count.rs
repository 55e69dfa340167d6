//! The closing line of scripts/test.sh (scripts/test-count.sh): tests that skipped at run time
//! count as skipped, with their reasons, and only when they ended "ok".

use std::path::Path;
use std::process::Command;

const LOG: &str = "\
     Running unittests src/lib.rs (target/debug/deps/racehorse_pg-ff01)

running 3 tests
test tests::scram ... ok
test tests::md5 ... ok
test tests::slow ... ignored
test result: ok. 2 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s

     Running tests/main.rs (target/debug/deps/integration-0a1b)

running 4 tests
test kvm_cli::boots ... ok
test jmh_cli::jar ... FAILED
test tests::scram ... ok
test run_cli::plain ... ok
test result: FAILED. 3 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

   Doc-tests racehorse_pg

running 1 test
test crates/pg/src/lib.rs - x (line 3) ... ok
test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s
";

/// A skip twice in one test, a skip of a test that then failed, and a test of the same name in
/// another binary that did not skip.
const SKIPS: &str = "\
integration-0a1b\tkvm_cli::boots\tno /dev/kvm
integration-0a1b\tkvm_cli::boots\tno /dev/kvm
integration-0a1b\tjmh_cli::jar\tno jar
racehorse_pg-ff01\ttests::scram\tno PostgreSQL server binaries
";

fn count(log: &str, skips: Option<&str>) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("log"), log).unwrap();
    let skip_path = dir.path().join("skips");
    if let Some(s) = skips {
        std::fs::write(&skip_path, s).unwrap();
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/test-count.sh");
    let out = Command::new("bash").arg(script).arg(dir.path().join("log")).arg(&skip_path).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn run_time_skips_count_as_skipped_and_are_listed() {
    assert_eq!(
        count(LOG, Some(SKIPS)),
        "tests: 4 passed, 1 failed, 3 skipped\n  \
         skipped: racehorse_pg tests::scram: no PostgreSQL server binaries\n  \
         skipped: integration kvm_cli::boots: no /dev/kvm\n"
    );
}

#[test]
fn without_a_skip_log_the_count_is_cargos() {
    assert_eq!(count(LOG, None), "tests: 6 passed, 1 failed, 1 skipped\n");
    assert_eq!(count(LOG, Some("")), "tests: 6 passed, 1 failed, 1 skipped\n");
}
