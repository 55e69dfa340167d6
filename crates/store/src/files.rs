//! Files racehorse writes for the user (exports, reports, comparisons, history pages, kept
//! cells): whole or absent. The bytes go to a temporary name in the same directory, are
//! flushed to the disk, and only then take the file's name, so that a full disk or a crash
//! leaves the old file (or none), never a truncated one (issue 47, case 8).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Temporary names made by this process so far (two writes never share one).
static MADE: AtomicUsize = AtomicUsize::new(0);

/// Writes `bytes` to `path` as a whole: through a temporary file beside it (keeping the
/// mode of a file already there) renamed over it. A symbolic link is followed, so the file
/// it points to is replaced and the link stays. A path that is not a regular file (a
/// terminal, a pipe, /dev/stdout, /dev/null) is written in place, as it cannot be replaced.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let target = match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => return std::fs::write(path, bytes),
        Ok(m) => Some((std::fs::canonicalize(path)?, m.permissions())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let (target, mode) = match target {
        Some((t, mode)) => (t, Some(mode)),
        None => (path.to_path_buf(), None),
    };
    let tmp = temporary_name(&target);
    let written = write_new(&tmp, bytes, mode).and_then(|_| std::fs::rename(&tmp, &target));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    // The new name is durable once the directory is: best effort (not every filesystem can).
    if let Ok(dir) = std::fs::File::open(parent_of(&target)) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// The directory `path` is in ("." for a bare file name).
fn parent_of(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// `.NAME.racehorse-PID-N.tmp` beside `path`: hidden, and ours by its name.
fn temporary_name(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let n = MADE.fetch_add(1, Ordering::Relaxed);
    parent_of(path).join(format!(".{name}.racehorse-{}-{n}.tmp", std::process::id()))
}

/// Creates `tmp` (which must not exist), writes and flushes `bytes`.
fn write_new(tmp: &Path, bytes: &[u8], mode: Option<std::fs::Permissions>) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(tmp)?;
    if let Some(mode) = mode {
        f.set_permissions(mode)?;
    }
    f.write_all(bytes)?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_file_is_made_or_replaced_whole_keeping_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        write_atomic(&path, b"first").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(entries(dir.path()), vec!["out.json"], "no temporary file is left");
    }

    #[test]
    fn a_link_stays_and_its_file_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.txt");
        std::fs::write(&real, "old").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    }

    #[test]
    fn devices_are_written_in_place() {
        use std::os::unix::fs::FileTypeExt;
        write_atomic(Path::new("/dev/null"), b"nothing").unwrap();
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    }

    #[test]
    fn a_missing_directory_is_an_error_that_makes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert!(write_atomic(&dir.path().join("no/such/out.json"), b"x").is_err());
        assert!(entries(dir.path()).is_empty());
    }
}
