//! One daemon at a time: a non-blocking flock on the lock file, and a pid file whose process
//! is checked (a pid file left by a dead daemon is stale and replaced, unlike upstream, where
//! it blocks the start). Both go away when the instance is dropped.

use std::io::Write;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Where a daemon keeps its lock, pid and restore state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    pub lock: PathBuf,
    pub pid: PathBuf,
    pub state: PathBuf,
}

impl Paths {
    /// /run/lock/racehorse-plugd.lock, /run/racehorse-plugd.pid and
    /// /var/lib/racehorse/plugd-restore.json for root; under the user's state dir otherwise.
    pub fn default_paths() -> Paths {
        let machine = racehorse_machine::default_state_file();
        let dir = machine.parent().map(Path::to_path_buf).unwrap_or_else(std::env::temp_dir);
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            Paths {
                lock: "/run/lock/racehorse-plugd.lock".into(),
                pid: "/run/racehorse-plugd.pid".into(),
                state: dir.join("plugd-restore.json"),
            }
        } else {
            Paths {
                lock: dir.join("plugd.lock"),
                pid: dir.join("plugd.pid"),
                state: dir.join("plugd-restore.json"),
            }
        }
    }
}

/// The running instance: holds the lock; removes its pid file on drop.
#[derive(Debug)]
pub struct Instance {
    _lock: std::fs::File,
    pid_file: PathBuf,
    wrote_pid: bool,
}

fn alive_plugd(pid: i32) -> bool {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let text = String::from_utf8_lossy(&cmdline);
    !cmdline.is_empty() && text.contains("plugd")
}

/// Takes the lock and checks the pid file. Err names who holds it.
pub fn acquire(paths: &Paths) -> Result<(Instance, Option<String>), String> {
    for p in [&paths.lock, &paths.pid] {
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
    }
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&paths.lock)
        .map_err(|e| format!("cannot open the lock file {}: {e}", paths.lock.display()))?;
    // SAFETY: flock on an open descriptor has no other preconditions.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let holder = std::fs::read_to_string(&paths.pid).unwrap_or_default();
        return Err(format!(
            "another racehorse plugd is running (lock {} held{}); stop it first",
            paths.lock.display(),
            if holder.trim().is_empty() { String::new() } else { format!(", pid {}", holder.trim()) }
        ));
    }
    let mut note = None;
    if let Ok(text) = std::fs::read_to_string(&paths.pid) {
        match text.trim().parse::<i32>() {
            Ok(pid) if alive_plugd(pid) => {
                return Err(format!("racehorse plugd already runs as pid {pid} ({})", paths.pid.display()))
            }
            _ => {
                note = Some(format!("replaced a stale pid file {} ({:?})", paths.pid.display(), text.trim()))
            }
        }
    }
    Ok((Instance { _lock: lock, pid_file: paths.pid.clone(), wrote_pid: false }, note))
}

impl Instance {
    /// Writes this process's pid (after detaching).
    pub fn write_pid(&mut self) -> Result<(), String> {
        let mut f = std::fs::File::create(&self.pid_file)
            .map_err(|e| format!("cannot write the pid file {}: {e}", self.pid_file.display()))?;
        writeln!(f, "{}", std::process::id()).map_err(|e| format!("{}: {e}", self.pid_file.display()))?;
        self.wrote_pid = true;
        Ok(())
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let ours =
            std::fs::read_to_string(&self.pid_file).map(|t| t.trim() == std::process::id().to_string());
        if self.wrote_pid && ours.unwrap_or(false) {
            let _ = std::fs::remove_file(&self.pid_file);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(dir: &Path) -> Paths {
        Paths { lock: dir.join("l"), pid: dir.join("p"), state: dir.join("s") }
    }

    #[test]
    fn one_instance_and_stale_pid_files() {
        let d = tempfile::tempdir().unwrap();
        let p = paths(d.path());
        std::fs::write(&p.pid, "999999\n").unwrap();
        let (mut a, note) = acquire(&p).unwrap();
        assert!(note.unwrap().contains("stale"));
        a.write_pid().unwrap();
        let e = acquire(&p).unwrap_err();
        assert!(e.contains("another racehorse plugd") && e.contains(&std::process::id().to_string()), "{e}");
        drop(a);
        assert!(!p.pid.exists(), "the pid file goes with the instance");
        let (_b, note) = acquire(&p).unwrap();
        assert!(note.is_none());
    }
}
