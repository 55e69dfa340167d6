//! The Guard: the only way racehorse changes the machine (CPU count, sysctls, page cache,
//! memory cgroup).
//! It records originals in a state file before any change and restores them on `restore`,
//! on drop (success, error, panic unwinding) and, via `recover`, after the process was killed.

use crate::cgroup::{self, CgroupLimit};
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
    /// The memory limit in force (its undo record is `saved.cgroup`).
    memory_limit: Option<CgroupLimit>,
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
        })
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

    /// Puts this whole process (all its threads, also those started later) into a new child
    /// memory cgroup `<current>/racehorse-<pid>` limited to `limit_bytes` (at least 16 MiB), on
    /// the v1 `memory` hierarchy or cgroup v2 (see [`crate::cgroup`]). What is created is
    /// recorded in the state file before any change. Calling it again changes the limit.
    /// `restore` moves the process back and removes the cgroup.
    pub fn limit_memory(&mut self, limit_bytes: u64) -> Result<CgroupLimit, MachineError> {
        cgroup::check_limit(limit_bytes)?;
        if let (Some(saved), Some(_)) = (&self.saved.cgroup, &self.memory_limit) {
            let limit = cgroup::change_limit(&self.root, saved, limit_bytes)?;
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
        match cgroup::apply(&self.root, &plan, self.saved.pid, limit_bytes) {
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

    /// Puts back the memory cgroup, every CPU online value, sysctl and the original affinity; removes the state
    /// file when everything was restored. Idempotent. On failure the state file keeps what is
    /// left so `recover` can retry.
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
    let (done, err) = restore_saved(root, &mut saved, false);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("mkdir");
        for e in std::fs::read_dir(from).expect("read_dir") {
            let e = e.expect("entry");
            if e.file_type().expect("type").is_dir() {
                copy_dir(&e.path(), &to.join(e.file_name()));
            } else {
                std::fs::copy(e.path(), to.join(e.file_name())).expect("copy");
            }
        }
    }

    /// A writable copy of a fixture tree, its root, and a state file path inside it.
    fn fixture(name: &str) -> (tempfile::TempDir, SysRoot, PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name), dir.path());
        let root = SysRoot::at(dir.path());
        let state = dir.path().join("state/restore.json");
        (dir, root, state)
    }

    fn read(p: &Path) -> String {
        std::fs::read_to_string(p).expect("read").trim().to_string()
    }

    const V1_DIR: &str = "/sys/fs/cgroup/memory/process_api/abc123";
    const V2_DIR: &str = "/sys/fs/cgroup/user.slice/racehorse.scope";

    #[test]
    fn v1_limit_is_written_recorded_and_restored() {
        let (_d, root, state) = fixture("cgroup-v1");
        let pid = std::process::id().to_string();
        let original = root.map_host_path(Path::new(V1_DIR));
        let child = original.join(format!("racehorse-{pid}"));
        let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
        let lim = g.limit_memory(256 << 20).expect("limit");
        let want =
            CgroupLimit { version: 1, path: child.clone(), limit_bytes: 256 << 20, swap_limited: true };
        assert_eq!(lim, want);
        assert_eq!(g.memory_limit(), Some(&want));
        assert_eq!(read(&child.join("memory.limit_in_bytes")), "268435456");
        assert_eq!(read(&child.join("memory.memsw.limit_in_bytes")), "268435456");
        assert_eq!(read(&child.join("cgroup.procs")), pid);
        assert_eq!(lim.memory_usage_bytes(), Some(1 << 20));
        let saved = read(&state);
        assert!(
            saved.contains(&format!("{V1_DIR}/racehorse-{pid}")) && saved.contains("\"original\""),
            "{saved}"
        );
        // Raising the limit writes memsw first (it must stay >= the limit).
        assert_eq!(g.limit_memory(512 << 20).expect("raise").limit_bytes, 512 << 20);
        assert_eq!(read(&child.join("memory.memsw.limit_in_bytes")), "536870912");
        g.restore().expect("restore");
        assert_eq!(read(&original.join("cgroup.procs")), pid, "moved back");
        assert!(!child.exists() && !state.exists());
        assert_eq!(g.memory_limit(), None);
        g.restore().expect("idempotent");
    }

    #[test]
    fn restoring_between_variants_keeps_the_memory_limit() {
        let (_d, root, state) = fixture("cgroup-v1");
        let child = root.map_host_path(Path::new(V1_DIR)).join(format!("racehorse-{}", std::process::id()));
        let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
        g.limit_memory(128 << 20).expect("limit");
        g.restore_keeping_memory_limit().expect("restore between variants");
        assert!(child.is_dir() && g.memory_limit().is_some(), "the limit holds for the whole run");
        assert!(read(&state).contains("racehorse-"), "the state file still names the cgroup");
        g.restore().expect("restore");
        assert!(!child.exists() && !state.exists());
    }

    #[test]
    fn v2_enables_memory_for_the_child_and_disables_it_after() {
        let (_d, root, state) = fixture("cgroup-v2");
        let original = root.map_host_path(Path::new(V2_DIR));
        let child = original.join(format!("racehorse-{}", std::process::id()));
        {
            let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
            let lim = g.limit_memory(64 << 20).expect("limit");
            assert_eq!((lim.version, lim.limit_bytes, lim.swap_limited), (2, 64 << 20, true));
            assert_eq!(read(&original.join("cgroup.subtree_control")), "+memory");
            assert_eq!(read(&child.join("memory.max")), "67108864");
            assert_eq!(read(&child.join("memory.swap.max")), "0");
            assert_eq!(read(&child.join("cgroup.procs")), std::process::id().to_string());
            assert_eq!(lim.memory_usage_bytes(), Some(2 << 20));
            assert!(read(&state).contains("\"enable_memory\": true"));
        }
        assert_eq!(read(&original.join("cgroup.subtree_control")), "-memory", "restored on drop");
        assert!(!child.exists() && !state.exists());
    }

    #[test]
    fn bad_limits_and_missing_controllers_change_nothing() {
        let (_d, root, state) = fixture("cgroup-v2");
        let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
        let e = g.limit_memory(1 << 20).expect_err("too small");
        assert!(matches!(e, MachineError::Invalid(_)) && e.to_string().contains("16 MiB"), "{e}");
        let controllers = root.map_host_path(Path::new(V2_DIR)).join("cgroup.controllers");
        std::fs::write(&controllers, "cpu io pids\n").expect("w");
        let e = g.limit_memory(64 << 20).expect_err("no memory controller");
        assert!(matches!(e, MachineError::NotPermitted(_)) && e.to_string().contains("+memory"), "{e}");
        std::fs::write(root.proc("self/mountinfo"), "22 1 254:1 / / rw - ext4 /dev/vda1 rw\n").expect("w");
        let e = g.limit_memory(64 << 20).expect_err("not mounted");
        assert!(e.to_string().contains("mount"), "{e}");
        assert!(!state.exists(), "nothing changed, nothing recorded");
    }

    /// A state file from dead pid 999999 that made `racehorse-999999` under the v1 fixture cgroup.
    fn leave_cgroup(root: &SysRoot, state: &Path, procs: &str) -> PathBuf {
        let child = root.map_host_path(Path::new(V1_DIR)).join("racehorse-999999");
        std::fs::create_dir(&child).expect("mkdir");
        std::fs::write(child.join("cgroup.procs"), procs).expect("w");
        std::fs::write(child.join("memory.limit_in_bytes"), "268435456\n").expect("w");
        let json = format!(
            r#"{{"pid": 999999, "start_ticks": null, "online": {{}}, "sysctl": {{}},
            "cgroup": {{"version": 1, "original": "{V1_DIR}", "child": "{V1_DIR}/racehorse-999999"}}}}"#
        );
        std::fs::create_dir_all(state.parent().expect("dir")).expect("mkdir");
        std::fs::write(state, json).expect("state");
        child
    }

    #[test]
    fn recover_removes_the_cgroup_of_a_dead_run() {
        let (_d, root, state) = fixture("cgroup-v1");
        let child = leave_cgroup(&root, &state, "");
        let msg = recover(&root, &state).expect("recover").expect("restored");
        assert!(msg.contains("999999") && msg.contains("removed cgroup"), "{msg}");
        assert!(!child.exists() && !state.exists());
    }

    #[test]
    fn recover_leaves_a_cgroup_that_still_has_processes() {
        let (_d, root, state) = fixture("cgroup-v1");
        std::fs::create_dir_all(root.proc("4242")).expect("a live process");
        let child = leave_cgroup(&root, &state, "4242\n");
        let msg = recover(&root, &state).expect("recover").expect("restored");
        assert!(msg.contains("left cgroup") && msg.contains("4242"), "{msg}");
        assert!(child.exists() && !state.exists());
    }

    #[test]
    fn recover_refuses_a_directory_that_is_not_ours() {
        let (_d, root, state) = fixture("cgroup-v1");
        leave_cgroup(&root, &state, "");
        let text = read(&state).replace("abc123/racehorse-999999", "abc123");
        std::fs::write(&state, text.replace(&format!("\"original\": \"{V1_DIR}\""), "\"original\": \"/x\""))
            .expect("w");
        let e = recover(&root, &state).expect_err("refused");
        assert!(e.to_string().contains("refusing"), "{e}");
        assert!(root.map_host_path(Path::new(V1_DIR)).exists() && state.exists());
    }

    /// Changes the real machine: moves this test process into a child memory cgroup and back.
    /// The Guard restores on drop, also when an assert fails.
    #[test]
    fn limit_memory_real_machine() {
        let _l = cgroup::machine_lock();
        let root = SysRoot::host();
        let Ok(found) = cgroup::detect_memory_cgroup(&root) else {
            println!("skipped: no memory cgroup");
            return;
        };
        if euid() != 0 || !writable(&found.dir) {
            println!("skipped: needs root and a writable {}", found.dir.display());
            return;
        }
        let dir = tempfile::tempdir().expect("tmp");
        let state = dir.path().join("restore.json");
        let name = format!("racehorse-{}", std::process::id());
        let child_path = format!("{}/{name}", found.cgroup_path.trim_end_matches('/'));
        {
            let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
            let lim = g.limit_memory(256 << 20).expect("limit");
            assert!(state.exists(), "recorded");
            assert_eq!(cgroup::detect_memory_cgroup(&root).expect("now").cgroup_path, child_path);
            let this_thread = std::fs::read_to_string("/proc/thread-self/cgroup").expect("thread-self");
            assert!(this_thread.contains(&format!("{child_path}\n")), "every thread moved: {this_thread}");
            let file = if lim.version == 1 { "memory.limit_in_bytes" } else { "memory.max" };
            let back: u64 = crate::root::read_num(&lim.path.join(file)).expect("limit reads back");
            assert!(back <= 256 << 20 && back > (256 << 20) - 65536, "{back}");
            assert_eq!(lim.limit_bytes, back);
            let mut buf = vec![0u8; 64 << 20];
            for i in (0..buf.len()).step_by(4096) {
                buf[i] = 1;
            }
            let used = lim.memory_usage_bytes().expect("usage");
            assert_eq!(std::hint::black_box(&buf).iter().step_by(4096).filter(|&&b| b == 1).count(), 16384);
            assert!(used >= 60 << 20, "64 MiB touched after the move is charged to the child: {used}");
            println!(
                "cgroup v{} {child_path} ({}): limit read back {back}, usage {used}, swap limited {}",
                lim.version,
                lim.path.display(),
                lim.swap_limited
            );
            drop(buf);
            g.restore().expect("restore");
        }
        assert_eq!(cgroup::detect_memory_cgroup(&root).expect("after").cgroup_path, found.cgroup_path);
        assert!(!found.dir.join(name).exists(), "child removed");
        assert!(!state.exists());
    }
}
