//! Finding programs: the directories of PATH, and the first file of a name in a list of
//! directories that passes a test (a regular file, an executable). The adapters find their
//! tools this way, the compute engine its compiler, the runner `perf`, and the environment
//! capture the compilers it records.

use std::path::{Path, PathBuf};

/// The directories of PATH, in order; none when PATH is unset.
pub fn path_dirs() -> Vec<PathBuf> {
    std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default()
}

/// The first `dir/name` of `dirs` that `accept` takes.
pub fn find_in(
    dirs: impl IntoIterator<Item = PathBuf>,
    name: &str,
    accept: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    dirs.into_iter().map(|dir| dir.join(name)).find(|p| accept(p))
}

/// The first regular file `name` on PATH (how the adapters find fio, dbench, iperf3, sysbench).
pub fn find_file(name: &str) -> Option<PathBuf> {
    find_in(path_dirs(), name, Path::is_file)
}

/// The first executable regular file `name` on PATH.
pub fn find_executable(name: &str) -> Option<PathBuf> {
    find_in(path_dirs(), name, is_executable)
}

/// A regular file with an execute bit set.
pub fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_first_accepted_file_in_order_wins() {
        let (a, b) = (tempfile::tempdir().expect("tmp"), tempfile::tempdir().expect("tmp"));
        let dirs = || vec![a.path().to_path_buf(), b.path().to_path_buf()];
        assert_eq!(find_in(dirs(), "tool", Path::is_file), None, "nothing there yet");
        let in_b = b.path().join("tool");
        std::fs::write(&in_b, "#!/bin/sh\n").expect("write");
        assert_eq!(find_in(dirs(), "tool", Path::is_file), Some(in_b.clone()));
        assert_eq!(find_in(dirs(), "tool", is_executable), None, "not executable yet");
        std::fs::set_permissions(&in_b, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        assert_eq!(find_in(dirs(), "tool", is_executable), Some(in_b));
        let in_a = a.path().join("tool");
        std::fs::write(&in_a, "").expect("write");
        assert_eq!(find_in(dirs(), "tool", Path::is_file), Some(in_a), "earlier directories first");
    }

    #[test]
    fn directories_and_missing_paths_are_not_programs() {
        let dir = tempfile::tempdir().expect("tmp");
        assert!(!is_executable(dir.path()), "a directory has x bits but is no program");
        assert!(!is_executable(&dir.path().join("absent")));
        assert_eq!(find_in(Vec::new(), "sh", Path::is_file), None);
    }

    #[test]
    fn path_lookup_finds_the_shell() {
        assert!(!path_dirs().is_empty(), "PATH is set for the tests");
        assert!(find_executable("sh").is_some(), "PATH lookup finds /bin/sh");
        assert!(find_file("sh").is_some());
        assert!(find_executable("no-such-program-racehorse").is_none());
    }
}
