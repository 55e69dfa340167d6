//! Work files of runs that were killed (SIGKILL, power loss) before their cleanup: cell
//! directories `racehorse-<pid>-cell<N>`, guest directories `racehorse-<pid>-guest<N>` and
//! perf directories `racehorse-<pid>-perf-*` whose process is gone are removed when the next
//! run starts in the same work root. A [`WorkDir`] removes its directory on every other path
//! (issue 47, case 8: a failed or interrupted guest cell left 19-51 MB behind).

use std::path::{Path, PathBuf};

/// The pid in a work entry's name, if it is one of ours.
fn owner_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("racehorse-")?;
    let (pid, kind) = rest.split_once('-')?;
    let ours = ["cell", "guest", "perf-"].iter().any(|k| kind.starts_with(k));
    ours.then(|| pid.parse().ok()).flatten()
}

/// True when `pid` runs (a zombie counts as ended).
fn running(pid: u32) -> bool {
    racehorse_machine::pidstat::running(Path::new("/proc"), pid)
}

/// Removes the leftovers of dead runs directly under `work_root`; returns what was removed.
pub fn sweep(work_root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(work_root) else { return Vec::new() };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = owner_pid(&name) else { continue };
        if pid != std::process::id() && !running(pid) && std::fs::remove_dir_all(e.path()).is_ok() {
            removed.push(e.path());
        }
    }
    removed
}

/// A work directory of this process, removed with everything in it when dropped: on
/// success, error, interruption and panic alike (a kill leaves it to [`sweep`]).
#[derive(Debug)]
pub struct WorkDir(PathBuf);

impl WorkDir {
    /// Makes `dir` (and its parents).
    pub fn create(dir: PathBuf) -> std::io::Result<WorkDir> {
        std::fs::create_dir_all(&dir)?;
        Ok(WorkDir(dir))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_entries_of_dead_runs_go() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut dead = std::process::Command::new("true").spawn().expect("true");
        let dead_pid = dead.id();
        dead.wait().expect("reap");
        let me = std::process::id();
        let names = [
            format!("racehorse-{dead_pid}-cell3"),
            format!("racehorse-{dead_pid}-perf-abc"),
            format!("racehorse-{dead_pid}-guest4"),
            format!("racehorse-{me}-cell0"),
            format!("racehorse-{dead_pid}-other"),
            "racehorse-x-cell1".to_string(),
            "mine".to_string(),
        ];
        for n in &names {
            std::fs::create_dir(dir.path().join(n)).expect("mkdir");
            std::fs::write(dir.path().join(n).join("f"), "x").expect("file");
        }
        let mut gone: Vec<String> =
            sweep(dir.path()).iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        gone.sort();
        let mut dead = vec![names[0].clone(), names[1].clone(), names[2].clone()];
        dead.sort();
        assert_eq!(gone, dead, "issue 47: a killed guest cell's directory goes too");
        for n in &names[3..] {
            assert!(dir.path().join(n).exists(), "{n} stays");
        }
    }

    #[test]
    fn issue47_a_work_dir_is_removed_on_every_path() {
        let root = tempfile::tempdir().expect("tmp");
        let dir = root.path().join(format!("racehorse-{}-guest0", std::process::id()));
        let failed = || -> std::io::Result<()> {
            let d = WorkDir::create(dir.clone())?;
            std::fs::write(d.path().join("initramfs.cpio"), vec![0u8; 4096])?;
            Err(std::io::Error::other("the guest did not boot"))
        };
        assert!(failed().is_err());
        assert!(!dir.exists(), "removed after an error");
        let panicked = std::panic::catch_unwind(|| {
            let _d = WorkDir::create(dir.clone()).expect("mkdir");
            panic!("a bug in the cell");
        });
        assert!(panicked.is_err() && !dir.exists(), "removed after a panic");
    }
}
