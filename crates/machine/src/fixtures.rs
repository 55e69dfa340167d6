//! The fixture machines (fake /proc, /sys and /etc trees in crates/machine/fixtures), for the
//! tests of every crate: a writable copy is a `SysRoot` the code under test reads and writes.

use crate::root::SysRoot;
use std::path::{Path, PathBuf};

/// The directory of fixture `name` (e.g. "vm2", "baremetal4").
pub fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name)
}

/// Copies a tree; symlinks are copied as symlinks (the fixtures use relative ones). Panics on
/// an I/O error: it is for tests.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let (kind, dest) = (e.file_type().expect("type"), to.join(e.file_name()));
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(e.path()).expect("readlink"), &dest)
                .expect("symlink");
        } else if kind.is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).expect("copy");
        }
    }
}

/// A writable copy of fixture `name` in `to`, as a root.
pub fn copy_fixture(name: &str, to: &Path) -> SysRoot {
    copy_tree(&fixture_dir(name), to);
    SysRoot::at(to)
}
