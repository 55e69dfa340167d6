//! The Guard: the only way racehorse changes the machine (CPU count, sysctls, page cache).
//! It records originals in a state file before any change and restores them on `restore`,
//! on drop (success, error, panic unwinding) and, via `recover`, after the process was killed.

use crate::cpuctl::{detect_method, format_cpu_list, online_file, possible_cpus, writable, CpuMethod};
use crate::error::MachineError;
use crate::root::{euid, read_trim, write_ctl, SysRoot};
use crate::state::{self, owner_alive, restore_saved, sysctl_path, SavedState};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Changes machine state and always puts it back.
pub struct Guard {
    root: SysRoot,
    state_file: PathBuf,
    method: CpuMethod,
    saved: SavedState,
    /// Thread whose affinity we changed and its original mask.
    affinity: Option<(libc::pid_t, libc::cpu_set_t)>,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("root", &self.root)
            .field("state_file", &self.state_file)
            .field("method", &self.method)
            .field("saved", &self.saved)
            .field("affinity_changed", &self.affinity.is_some())
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
        Ok(Guard { root, state_file, method, saved: SavedState::for_this_process(), affinity: None })
    }

    /// How `set_cpus` changes the CPU count.
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

    /// Makes `n` CPUs available: Hotplug onlines the first `n` possible CPUs and offlines the rest
    /// (highest first); Affinity pins the calling thread (and threads it spawns later) to the
    /// first `n` CPUs of its original mask.
    pub fn set_cpus(&mut self, n: u32) -> Result<CpuMethod, MachineError> {
        if n == 0 {
            return Err(MachineError::Invalid("cannot run on 0 CPUs; ask for at least 1".into()));
        }
        match self.method {
            CpuMethod::Hotplug => self.hotplug(n as usize)?,
            CpuMethod::Affinity => self.pin(n as usize)?,
        }
        Ok(self.method)
    }

    fn hotplug(&mut self, n: usize) -> Result<(), MachineError> {
        let possible = possible_cpus(&self.root)?;
        if n > possible.len() {
            return Err(MachineError::Invalid(format!(
                "cannot use {n} CPUs: this machine has {} possible CPUs ({})",
                possible.len(),
                format_cpu_list(&possible)
            )));
        }
        let is_on = |cpu: u32| read_trim(&online_file(&self.root, cpu)).map(|v| v == "1");
        let mut plan: Vec<(u32, &str)> = Vec::new();
        for &cpu in &possible[..n] {
            // No online file (None): a CPU that cannot be hot-removed (cpu0) is always online.
            if is_on(cpu) == Some(false) {
                plan.push((cpu, "1"));
            }
        }
        for &cpu in possible[n..].iter().rev() {
            match is_on(cpu) {
                Some(true) => plan.push((cpu, "0")),
                Some(false) => {}
                None => {
                    return Err(MachineError::NotPermitted(format!(
                        "cpu{cpu} has no online file and cannot be taken offline; use the affinity method \
                         instead (cpu_control = affinity)"
                    )))
                }
            }
        }
        for &(cpu, new) in &plan {
            let orig = if new == "1" { "0" } else { "1" };
            self.saved.online.entry(cpu).or_insert_with(|| orig.to_string());
        }
        if !plan.is_empty() {
            state::store(&self.state_file, &self.saved)?;
        }
        for (cpu, value) in plan {
            write_ctl(&online_file(&self.root, cpu), value)?;
        }
        Ok(())
    }

    fn pin(&mut self, n: usize) -> Result<(), MachineError> {
        let original = match &self.affinity {
            Some((_, set)) => *set,
            None => get_affinity()?,
        };
        let online = crate::cpuctl::online_cpus(&self.root).unwrap_or_default();
        let usable: Vec<u32> =
            cpus_in(&original).into_iter().filter(|c| online.is_empty() || online.contains(c)).collect();
        if n > usable.len() {
            return Err(MachineError::Invalid(format!(
                "cannot use {n} CPUs: only {} are online and allowed to this process ({})",
                usable.len(),
                format_cpu_list(&usable)
            )));
        }
        // SAFETY: cpu_set_t is plain data; CPU_SET indexes are CPU numbers below its capacity.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &cpu in &usable[..n] {
            unsafe { libc::CPU_SET(cpu as usize, &mut set) };
        }
        if self.affinity.is_none() {
            self.affinity = Some((gettid(), original));
        }
        set_affinity(0, &set).map_err(|e| MachineError::io("sched_setaffinity", e))
    }

    /// Sets a sysctl ("vm.swappiness" → proc/sys/vm/swappiness), remembering the original.
    pub fn set_sysctl(&mut self, name: &str, value: &str) -> Result<(), MachineError> {
        let path = sysctl_path(&self.root, name)?;
        if !self.saved.sysctl.contains_key(name) {
            let orig = std::fs::read_to_string(&path).map_err(|e| MachineError::io(&path, e))?;
            self.saved.sysctl.insert(name.to_string(), orig.trim_end_matches('\n').to_string());
            state::store(&self.state_file, &self.saved)?;
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

    /// Puts back every CPU online value, sysctl and the original affinity; removes the state
    /// file when everything was restored. Idempotent. On failure the state file keeps what is
    /// left so `recover` can retry.
    pub fn restore(&mut self) -> Result<(), MachineError> {
        let (_, mut first_err) = restore_saved(&self.root, &mut self.saved);
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
            None => state::remove(&self.state_file),
            Some(e) => {
                // Keep the file (with what is left) for `recover`; the first error is what matters.
                if !self.saved.is_empty() {
                    let _ = state::store(&self.state_file, &self.saved);
                }
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
    let (done, err) = restore_saved(root, &mut saved);
    if let Some(e) = err {
        state::store(state_file, &saved)?;
        return Err(e);
    }
    state::remove(state_file)?;
    let what = if done.is_empty() { "nothing left to restore".to_string() } else { done.join(", ") };
    Ok(Some(format!("restored after racehorse pid {pid} ended without cleanup: {what}")))
}

/// Where the state file lives: /var/lib/racehorse/restore.json for root, else
/// $XDG_STATE_HOME/racehorse/restore.json or ~/.local/state/racehorse/restore.json.
pub fn default_state_file() -> PathBuf {
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

/// Sets the returned flag on the first SIGINT/SIGTERM (the runner then stops and unwinds, so
/// Guards restore on drop); a second one exits at once with 128+signal (130 for Ctrl-C), which
/// skips Drop — the state file and `recover` cover that case.
pub fn install_signal_flag() -> Result<Arc<AtomicBool>, MachineError> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        let err = |e| MachineError::io(format!("signal handler for signal {sig}"), e);
        // Order matters: the conditional shutdown sees the flag before this signal sets it.
        signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&flag)).map_err(err)?;
        signal_hook::flag::register(sig, Arc::clone(&flag)).map_err(err)?;
    }
    Ok(flag)
}
