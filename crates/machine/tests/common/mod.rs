//! Shared test helpers: locating fixture trees and copying them into writable temp dirs.
#![allow(dead_code)] // each test binary uses a different subset

use racehorse_machine::SysRoot;
use std::path::{Path, PathBuf};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name)
}

pub fn fixture_root(name: &str) -> SysRoot {
    SysRoot::at(fixture(name))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let dest = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).expect("copy");
        }
    }
}

/// A writable copy of fixture `name`; keep the TempDir alive while using the root.
pub fn writable_fixture(name: &str) -> (tempfile::TempDir, SysRoot) {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&fixture(name), dir.path());
    let root = SysRoot::at(dir.path());
    (dir, root)
}

pub fn read(p: &Path) -> String {
    std::fs::read_to_string(p).expect("read").trim().to_string()
}
