//! One racehorse changes the machine at a time: an exclusive flock on a lock file beside the
//! restore state file, taken before the first change and held until the machine is restored.
//! The kernel drops a flock when its holder dies (even by SIGKILL), so a lock is never stale;
//! the file's text only names the holder for the message a refused run prints.

use crate::error::MachineError;
use std::io::{Seek, Write};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The lock file beside a state file (`/var/lib/racehorse/machine.lock` for root).
pub fn lock_file_for(state_file: &Path) -> PathBuf {
    state_file.with_file_name("machine.lock")
}

/// The default lock file, beside [`crate::default_state_file`].
pub fn default_lock_file() -> PathBuf {
    lock_file_for(&crate::default_state_file())
}

/// How often to try again, and whom to tell once that we wait.
type Waiting<'a> = (Duration, &'a mut dyn FnMut(&str));

/// The held machine lock; dropping it (or the process ending) releases it.
#[derive(Debug)]
pub struct MachineLock {
    file: std::fs::File,
    path: PathBuf,
}

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another live process holds it.
    #[error(
        "another racehorse is changing this machine ({holder}); wait for it to finish, or run again with \
         --wait to queue behind it (lock {path})"
    )]
    Held { holder: String, path: PathBuf },
    /// The wait was given up (a signal arrived).
    #[error("gave up waiting for the machine lock {path} (held by {holder})")]
    Abandoned { holder: String, path: PathBuf },
    #[error(transparent)]
    Machine(#[from] MachineError),
}

fn try_flock(file: &std::fs::File) -> Result<bool, std::io::Error> {
    // SAFETY: flock on an open descriptor has no other preconditions.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// Who holds the lock at `path`, as its holder wrote it ("pid 123: racehorse run quick").
pub fn holder(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let text = text.trim();
    if text.is_empty() {
        "a process that has not said who it is".to_string()
    } else {
        text.chars().take(300).collect()
    }
}

/// [`holder`], giving a holder that has just taken the lock a moment to write its name.
fn holder_settled(path: &Path) -> String {
    for _ in 0..20 {
        if std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    holder(path)
}

impl MachineLock {
    /// Takes the lock at `path` now, or fails naming its holder.
    pub fn acquire(path: &Path, what: &str) -> Result<MachineLock, LockError> {
        let never = AtomicBool::new(false);
        Self::acquire_inner(path, what, None, &never)
    }

    /// Waits for the lock at `path` (polling every `poll`), calling `waiting` once with the
    /// holder's description when it has to wait. A set `abort` flag gives up.
    pub fn acquire_waiting(
        path: &Path,
        what: &str,
        poll: Duration,
        abort: &AtomicBool,
        waiting: &mut dyn FnMut(&str),
    ) -> Result<MachineLock, LockError> {
        Self::acquire_inner(path, what, Some((poll, waiting)), abort)
    }

    fn acquire_inner(
        path: &Path,
        what: &str,
        mut wait: Option<Waiting<'_>>,
        abort: &AtomicBool,
    ) -> Result<MachineLock, LockError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| MachineError::io(dir, e))?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| MachineError::io(path, e))?;
        let mut told = false;
        loop {
            if try_flock(&file).map_err(|e| MachineError::io(path, e))? {
                break;
            }
            let who = holder_settled(path);
            let Some((poll, waiting)) = wait.as_mut() else {
                return Err(LockError::Held { holder: who, path: path.to_path_buf() });
            };
            if abort.load(Ordering::Relaxed) {
                return Err(LockError::Abandoned { holder: who, path: path.to_path_buf() });
            }
            if !told {
                waiting(&who);
                told = true;
            }
            std::thread::sleep(*poll);
        }
        let mut lock = MachineLock { file, path: path.to_path_buf() };
        lock.describe(what)?;
        Ok(lock)
    }

    /// Writes who holds the lock into the file, for a refused process to name.
    fn describe(&mut self, what: &str) -> Result<(), MachineError> {
        let text = format!("pid {}: {what}\n", std::process::id());
        let f = &mut self.file;
        f.set_len(0)
            .and_then(|_| f.rewind())
            .and_then(|_| f.write_all(text.as_bytes()))
            .map_err(|e| MachineError::io(&self.path, e))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for MachineLock {
    fn drop(&mut self) {
        // Clear the holder's name while still holding the lock; closing the file releases it.
        let _ = self.file.set_len(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_is_refused_with_the_holder_named_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/machine.lock");
        let first = MachineLock::acquire(&path, "racehorse run quick").unwrap();
        let err = MachineLock::acquire(&path, "racehorse run other").unwrap_err();
        let text = err.to_string();
        assert!(text.contains(&format!("pid {}: racehorse run quick", std::process::id())), "{text}");
        assert!(text.contains("--wait"), "{text}");
        drop(first);
        let again = MachineLock::acquire(&path, "racehorse run other").unwrap();
        assert!(holder(again.path()).contains("racehorse run other"));
    }

    #[test]
    fn a_waiter_gets_the_lock_when_the_holder_ends_and_can_give_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("machine.lock");
        let first = MachineLock::acquire(&path, "first").unwrap();
        let abort = AtomicBool::new(true);
        let mut seen = Vec::new();
        let gave_up = MachineLock::acquire_waiting(&path, "w", Duration::from_millis(5), &abort, &mut |h| {
            seen.push(h.to_string())
        });
        assert!(matches!(gave_up, Err(LockError::Abandoned { .. })), "{gave_up:?}");
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            drop(first);
        });
        let never = AtomicBool::new(false);
        let mut told = Vec::new();
        let got = MachineLock::acquire_waiting(&path, "second", Duration::from_millis(5), &never, &mut |h| {
            told.push(h.to_string())
        });
        releaser.join().unwrap();
        assert!(got.is_ok(), "{got:?}");
        assert_eq!(told.len(), 1, "told once that it waits: {told:?}");
        assert!(told[0].contains("first"), "{told:?}");
    }

    /// Regression (issue 21, case 1): two runs started together both passed the state-file
    /// check. The lock is taken by exactly one of many simultaneous takers.
    #[test]
    fn exactly_one_of_simultaneous_takers_wins() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("machine.lock");
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let (p, b) = (path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    b.wait();
                    let got = MachineLock::acquire(&p, &format!("taker {i}"));
                    std::thread::sleep(Duration::from_millis(50));
                    got.is_ok()
                })
            })
            .collect();
        let won = handles.into_iter().map(|h| h.join().unwrap()).filter(|w| *w).count();
        assert_eq!(won, 1);
    }
}
