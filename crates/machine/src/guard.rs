//! The Guard: the only way racehorse changes the machine (CPU count, sysctls, sysfs files,
//! page cache, memory cgroup, before/after commands).
//! It records originals in a state file before any change and restores them on `restore`,
//! on drop (success, error, panic unwinding) and, via `recover`, after the process was killed.

use crate::cgroup::{self, CgroupLimit};
use crate::cpuctl::{detect_method, writable, CpuMethod};
use crate::error::MachineError;
use crate::root::{euid, write_ctl, SysRoot};
use crate::state::{self, owner_alive, restore_saved, sysctl_path, SavedState};
use std::path::{Path, PathBuf};
use verify::{ChangeLog, Setting};

mod commands;
mod cpus;
mod files;
mod guests;
mod verify;

pub(crate) use guests::stop_guests;
pub use guests::SavedGuest;

/// Changes machine state and always puts it back.
pub struct Guard {
    root: SysRoot,
    state_file: PathBuf,
    method: CpuMethod,
    saved: SavedState,
    /// Thread whose affinity we changed and its original mask.
    affinity: Option<(libc::pid_t, libc::cpu_set_t)>,
    /// The memory limit in force (its undo record is `saved.cgroup`).
    memory_limit: Option<CgroupLimit>,
    /// Every setting changed during the guard's life with its original (never cleared).
    log: ChangeLog,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("root", &self.root)
            .field("state_file", &self.state_file)
            .field("method", &self.method)
            .field("saved", &self.saved)
            .field("affinity_changed", &self.affinity.is_some())
            .field("memory_limit", &self.memory_limit)
            .field("log", &self.log)
            .finish()
    }
}

fn gettid() -> libc::pid_t {
    // SAFETY: gettid has no preconditions and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as libc::pid_t }
}

fn get_affinity() -> Result<libc::cpu_set_t, MachineError> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity writes at most size_of::<cpu_set_t>() bytes.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(MachineError::io("sched_getaffinity", std::io::Error::last_os_error()));
    }
    Ok(set)
}

fn set_affinity(tid: libc::pid_t, set: &libc::cpu_set_t) -> Result<(), std::io::Error> {
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    let rc = unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn cpus_in(set: &libc::cpu_set_t) -> Vec<u32> {
    let max = 8 * std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: CPU_ISSET only reads the set; every index is below its capacity.
    (0..max).filter(|&c| unsafe { libc::CPU_ISSET(c, set) }).map(|c| c as u32).collect()
}

/// The calling thread's current affinity (CPU numbers).
pub fn current_affinity() -> Result<Vec<u32>, MachineError> {
    get_affinity().map(|s| cpus_in(&s))
}

impl Guard {
    /// A guard over `root` recording into `state_file`. A state file left by a dead process is
    /// restored first; one owned by a live process is an error (another run is changing the machine).
    pub fn new(root: SysRoot, state_file: PathBuf) -> Result<Guard, MachineError> {
        if let Some(prev) = state::load(&state_file)? {
            if owner_alive(&root, &prev) {
                return Err(MachineError::State {
                    path: state_file,
                    msg: format!(
                        "owned by running process {}; wait for it to finish (or remove the file if that is not racehorse)",
                        prev.pid
                    ),
                });
            }
            recover(&root, &state_file)?;
        }
        let method = detect_method(&root);
        Ok(Guard {
            root,
            state_file,
            method,
            saved: SavedState::for_this_process(),
            affinity: None,
            memory_limit: None,
            log: ChangeLog::default(),
        })
    }

    /// How `set_cpus` and `set_cpu_list` change the CPUs in use.
    pub fn method(&self) -> CpuMethod {
        self.method
    }

    /// Forces a method (e.g. affinity even when hotplug is available).
    pub fn set_method(&mut self, method: CpuMethod) {
        self.method = method;
    }

    pub fn state_file(&self) -> &Path {
        &self.state_file
    }

    /// Sets a sysctl ("vm.swappiness" → proc/sys/vm/swappiness), remembering the original.
    pub fn set_sysctl(&mut self, name: &str, value: &str) -> Result<(), MachineError> {
        let path = sysctl_path(&self.root, name)?;
        if !self.saved.sysctl.contains_key(name) {
            let orig = std::fs::read_to_string(&path).map_err(|e| MachineError::io(&path, e))?;
            let orig = orig.trim_end_matches('\n').to_string();
            self.saved.sysctl.insert(name.to_string(), orig.clone());
            state::store(&self.state_file, &self.saved)?;
            self.log.note(Setting::Sysctl(name.to_string()), orig);
        }
        write_ctl(&path, value)
    }

    /// sync(), then drops page cache, dentries and inodes. Ok(false) when not root or the
    /// control file is missing or not writable (nothing is dropped then).
    pub fn drop_caches(&self) -> Result<bool, MachineError> {
        let path = self.root.proc("sys/vm/drop_caches");
        if (self.root.is_host() && euid() != 0) || !path.exists() || !writable(&path) {
            return Ok(false);
        }
        // SAFETY: sync has no preconditions.
        unsafe { libc::sync() };
        match write_ctl(&path, "3") {
            Ok(()) => Ok(true),
            Err(MachineError::Io { source, .. })
                if matches!(source.raw_os_error(), Some(libc::EACCES | libc::EPERM | libc::EROFS)) =>
            {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Puts this whole process (all its threads, also those started later) into a new child
    /// memory cgroup `<current>/racehorse-<pid>` limited to `limit_bytes` (at least 16 MiB), on
    /// the v1 `memory` hierarchy or cgroup v2 (see [`crate::cgroup`]). What is created is
    /// recorded in the state file before any change. Calling it again changes the limit.
    /// `restore` moves the process back and removes the cgroup.
    pub fn limit_memory(&mut self, limit_bytes: u64) -> Result<CgroupLimit, MachineError> {
        self.limit_memory_swap(limit_bytes, false)
    }

    /// [`Guard::limit_memory`], with swap use either limited (as there) or allowed without
    /// limit (`allow_swap`: anonymous memory over the limit is swapped out, not OOM-killed).
    pub fn limit_memory_swap(
        &mut self,
        limit_bytes: u64,
        allow_swap: bool,
    ) -> Result<CgroupLimit, MachineError> {
        cgroup::check_limit(limit_bytes)?;
        if let (Some(saved), Some(_)) = (&self.saved.cgroup, &self.memory_limit) {
            let limit = cgroup::change_limit(&self.root, saved, limit_bytes, allow_swap)?;
            self.memory_limit = Some(limit.clone());
            return Ok(limit);
        }
        // A record left by a failed undo: finish that first rather than overwrite it.
        self.undo_cgroup()?;
        let plan = cgroup::plan(&self.root, self.saved.pid)?;
        self.saved.cgroup = Some(plan.clone());
        if let Err(e) = state::store(&self.state_file, &self.saved) {
            self.saved.cgroup = None;
            return Err(e);
        }
        self.log.note_cgroup(&plan.child);
        match cgroup::apply(&self.root, &plan, self.saved.pid, limit_bytes, allow_swap) {
            Ok(limit) => {
                self.memory_limit = Some(limit.clone());
                Ok(limit)
            }
            Err(e) => {
                if let Err(undo) = self.undo_cgroup() {
                    eprintln!("racehorse: could not undo the memory cgroup: {undo}");
                }
                Err(e)
            }
        }
    }

    /// The memory limit set by `limit_memory`, until restored.
    pub fn memory_limit(&self) -> Option<&CgroupLimit> {
        self.memory_limit.as_ref()
    }

    /// Sets up a zram swap device of `bytes` (a free zramN, or one added through zram-control)
    /// and turns it on, recorded in the state file first; `remove_zram_swap`, `restore` and
    /// `recover` take it away. Returns the device path.
    pub fn zram_swap(&mut self, bytes: u64) -> Result<PathBuf, MachineError> {
        self.remove_zram_swap()?;
        let z = crate::zram::pick(&self.root)?;
        self.saved.zram = Some(z.clone());
        state::store(&self.state_file, &self.saved)?;
        crate::zram::setup(&self.root, &z, bytes).inspect_err(|_| {
            if let Err(undo) = self.remove_zram_swap() {
                eprintln!("racehorse: could not undo the zram swap: {undo}");
            }
        })
    }

    /// Turns the zram swap of `zram_swap` off and resets the device (if there is one).
    pub fn remove_zram_swap(&mut self) -> Result<(), MachineError> {
        let Some(z) = &self.saved.zram else { return Ok(()) };
        crate::zram::undo(&self.root, z)?;
        self.saved.zram = None;
        if self.saved.is_empty() {
            state::remove(&self.state_file)
        } else {
            state::store(&self.state_file, &self.saved)
        }
    }

    /// Ends the memory limit now (the process moves back, the cgroup goes), keeping every
    /// other saved setting: the end of one cell that ran under its own limit.
    pub fn remove_memory_limit(&mut self) -> Result<(), MachineError> {
        self.undo_cgroup()
    }

    /// Moves this process back out of the memory cgroup and removes it (if there is one).
    fn undo_cgroup(&mut self) -> Result<(), MachineError> {
        let Some(saved) = &self.saved.cgroup else { return Ok(()) };
        cgroup::undo(&self.root, saved, Some(self.saved.pid))?;
        self.saved.cgroup = None;
        self.memory_limit = None;
        if self.saved.is_empty() {
            state::remove(&self.state_file)
        } else {
            state::store(&self.state_file, &self.saved)
        }
    }

    /// Puts back the memory cgroup, every CPU online value, sysctl, sysfs file and the original
    /// affinity, then runs the pending after-commands (last one first); removes the state file
    /// when everything was restored. Idempotent. On failure the state file keeps what is left
    /// so `recover` can retry (a failed after-command is not kept: see [`Guard::run_command`]).
    pub fn restore(&mut self) -> Result<(), MachineError> {
        self.restore_inner(false)
    }

    /// Like [`Guard::restore`] but keeps the memory limit in force: between the variants of
    /// one run, whose limit holds for the whole run.
    pub fn restore_keeping_memory_limit(&mut self) -> Result<(), MachineError> {
        self.restore_inner(true)
    }

    fn restore_inner(&mut self, keep_memory: bool) -> Result<(), MachineError> {
        let kept = if keep_memory { self.saved.cgroup.take() } else { None };
        let (_, mut first_err) = restore_saved(&self.root, &mut self.saved, true);
        if kept.is_some() {
            self.saved.cgroup = kept;
        }
        if self.saved.cgroup.is_none() {
            self.memory_limit = None;
        }
        if let Some((tid, set)) = self.affinity.take() {
            match set_affinity(tid, &set) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {} // that thread is gone
                Err(e) => {
                    self.affinity = Some((tid, set));
                    first_err = first_err.or(Some(MachineError::io("sched_setaffinity", e)));
                }
            }
        }
        match first_err {
            None if self.saved.is_empty() => state::remove(&self.state_file),
            None => state::store(&self.state_file, &self.saved),
            Some(e) => {
                // Keep the file (with what is left) for `recover`, or remove it when only a failed
                // after-command was left (it is not retried); the first error is what matters.
                let _ = if self.saved.is_empty() {
                    state::remove(&self.state_file)
                } else {
                    state::store(&self.state_file, &self.saved)
                };
                Err(e)
            }
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Err(e) = self.restore() {
            eprintln!(
                "racehorse: could not restore machine state: {e}; state kept in {}",
                self.state_file.display()
            );
        }
    }
}

/// Restores from a state file left by a process that is gone (killed, crashed). Ok(None) when
/// there is no state file or its owner still runs; else a description of what was restored.
pub fn recover(root: &SysRoot, state_file: &Path) -> Result<Option<String>, MachineError> {
    let Some(mut saved) = state::load(state_file)? else { return Ok(None) };
    if owner_alive(root, &saved) {
        return Ok(None);
    }
    let pid = saved.pid;
    let (done, err) = restore_saved(root, &mut saved, false);
    if let Some(e) = err {
        if saved.is_empty() {
            state::remove(state_file)?;
        } else {
            state::store(state_file, &saved)?;
        }
        return Err(e);
    }
    state::remove(state_file)?;
    let what = if done.is_empty() { "nothing left to restore".to_string() } else { done.join(", ") };
    Ok(Some(format!("restored after racehorse pid {pid} ended without cleanup: {what}")))
}

/// Where the state file lives: $RACEHORSE_STATE_DIR/restore.json when that is set (tests,
/// a second racehorse installation), /var/lib/racehorse/restore.json for root, else
/// $XDG_STATE_HOME/racehorse/restore.json or ~/.local/state/racehorse/restore.json.
pub fn default_state_file() -> PathBuf {
    if let Some(dir) = std::env::var_os("RACEHORSE_STATE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("restore.json");
    }
    if euid() == 0 {
        return PathBuf::from("/var/lib/racehorse/restore.json");
    }
    let base = match (std::env::var_os("XDG_STATE_HOME"), std::env::var_os("HOME")) {
        (Some(x), _) if !x.is_empty() => PathBuf::from(x),
        (_, Some(h)) if !h.is_empty() => PathBuf::from(h).join(".local/state"),
        _ => std::env::temp_dir().join(format!("racehorse-{}", euid())),
    };
    base.join("racehorse/restore.json")
}

#[cfg(test)]
mod tests;
