//! Test helpers: writable copies of the fixture trees (symlinks kept as symlinks), with the
//! sys/dev/block/MAJ:MIN links made from the `dev` files (colons cannot be packaged by cargo).

use crate::root::SysRoot;
use std::path::{Path, PathBuf};

pub(crate) use crate::fixtures::{copy_tree, fixture_dir};

/// sys/dev/block/MAJ:MIN → ../../block/DISK[/PART] for every sys/block entry with a `dev` file.
fn link_dev_numbers(sys: &Path) {
    let Ok(disks) = std::fs::read_dir(sys.join("block")) else { return };
    let dev_dir = sys.join("dev/block");
    for disk in disks.flatten() {
        let name = disk.file_name().to_string_lossy().into_owned();
        let mut targets = vec![(disk.path(), format!("../../block/{name}"))];
        for part in std::fs::read_dir(disk.path()).expect("disk dir").flatten() {
            if part.path().join("partition").is_file() {
                let p = part.file_name().to_string_lossy().into_owned();
                targets.push((part.path(), format!("../../block/{name}/{p}")));
            }
        }
        for (dir, target) in targets {
            if let Ok(num) = std::fs::read_to_string(dir.join("dev")) {
                std::fs::create_dir_all(&dev_dir).expect("mkdir dev/block");
                std::os::unix::fs::symlink(target, dev_dir.join(num.trim())).expect("dev link");
            }
        }
    }
}

/// A writable copy of fixture `name`, its root, and a state file path inside it.
pub(crate) fn writable_fixture(name: &str) -> (tempfile::TempDir, SysRoot, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_tree(&fixture_dir(name), dir.path());
    link_dev_numbers(&dir.path().join("sys"));
    let root = SysRoot::at(dir.path());
    let state = dir.path().join("state/restore.json");
    (dir, root, state)
}

/// A file's content, trimmed.
pub(crate) fn read(p: &Path) -> String {
    std::fs::read_to_string(p).expect("read").trim().to_string()
}
