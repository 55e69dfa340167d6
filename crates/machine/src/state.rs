//! The restore state file: what the Guard changed and the original values, written before any
//! change (atomically: tmp + rename) so a later start can undo a run killed with SIGKILL.

use crate::cgroup::{self, SavedCgroup};
use crate::cpuctl::online_file;
use crate::error::MachineError;
use crate::knobs::selected_value;
use crate::pidstat::PidStat;
use crate::root::{read_trim, write_ctl, SysRoot};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// Original values of everything changed by a Guard, plus the owner process.
#[derive(Serialize, Deserialize, Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct SavedState {
    /// Process that made the changes.
    pub pid: u32,
    /// Its start time (field 22 of /proc/PID/stat), to tell a reused pid from the owner.
    pub start_ticks: Option<u64>,
    /// CPU number → original content of cpuN/online ("0" or "1").
    pub online: BTreeMap<u32, String>,
    /// sysctl name (dotted) → original value.
    pub sysctl: BTreeMap<String, String>,
    /// Child memory cgroup made by `Guard::limit_memory` (absent in files written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<SavedCgroup>,
    /// sysfs files set by `Guard::set_files`, in the order first recorded (restored in that order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<SavedFile>,
    /// After-commands of `Guard::run_command` still to run (last one first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
    /// A zram device made swap by `Guard::zram_swap`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zram: Option<crate::zram::SavedZram>,
    /// Virtual machines (QEMU processes) started by `Guard::record_guest`, killed on restore.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guests: Vec<crate::guard::SavedGuest>,
}

/// One sysfs file changed by `Guard::set_files`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub(crate) struct SavedFile {
    /// Host path ("/sys/block/vda/queue/scheduler"), mapped into a fixture root when restoring.
    pub path: String,
    /// Its value before the run (the selected word of a choice list).
    pub original: String,
}

impl SavedState {
    pub fn for_this_process() -> Self {
        let pid = std::process::id();
        SavedState { pid, start_ticks: start_ticks(Path::new("/proc"), pid), ..Default::default() }
    }

    pub fn is_empty(&self) -> bool {
        self.online.is_empty()
            && self.sysctl.is_empty()
            && self.cgroup.is_none()
            && self.files.is_empty()
            && self.commands.is_empty()
            && self.zram.is_none()
            && self.guests.is_empty()
    }
}

/// Start time in ticks of process `pid`, from `<proc>/<pid>/stat`.
pub(crate) fn start_ticks(proc_dir: &Path, pid: u32) -> Option<u64> {
    PidStat::of(proc_dir, pid).map(|s| s.start_ticks)
}

/// True when `pid` has ended but not been reaped yet (state Z or X in its stat).
fn is_zombie(proc_dir: &Path, pid: u32) -> bool {
    PidStat::of(proc_dir, pid).is_some_and(|s| s.has_ended())
}

/// True when `pid` exists under `proc_dir` and has not ended (a zombie counts as ended).
pub(crate) fn running(proc_dir: &Path, pid: u32) -> bool {
    proc_dir.join(pid.to_string()).exists() && !is_zombie(proc_dir, pid)
}

/// True when the owner of `state` still runs (same pid and, if known, same start time; a
/// killed owner its parent has not reaped yet counts as gone).
pub(crate) fn owner_alive(root: &SysRoot, state: &SavedState) -> bool {
    if !running(&root.proc_dir, state.pid) {
        return false;
    }
    match (state.start_ticks, start_ticks(&root.proc_dir, state.pid)) {
        (Some(saved), Some(now)) => saved == now,
        _ => true,
    }
}

fn state_err(path: &Path, msg: impl Into<String>) -> MachineError {
    MachineError::State { path: path.to_path_buf(), msg: msg.into() }
}

/// Reads a state file; Ok(None) when there is none.
pub(crate) fn load(path: &Path) -> Result<Option<SavedState>, MachineError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(MachineError::io(path, e)),
    };
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| state_err(path, format!("{e}; inspect it, restore by hand and delete it")))
}

/// Writes the state atomically (tmp file in the same directory, fsync, rename).
pub(crate) fn store(path: &Path, state: &SavedState) -> Result<(), MachineError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| MachineError::io(dir, e))?;
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp: PathBuf = path.with_file_name(format!(".{name}.tmp.{}", std::process::id()));
    let json = serde_json::to_vec_pretty(state).map_err(|e| state_err(path, e.to_string()))?;
    let mut f = std::fs::File::create(&tmp).map_err(|e| MachineError::io(&tmp, e))?;
    f.write_all(&json).and_then(|_| f.sync_all()).map_err(|e| MachineError::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| MachineError::io(path, e))
}

/// Removes the state file (a missing file is fine).
pub(crate) fn remove(path: &Path) -> Result<(), MachineError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(MachineError::io(path, e)),
        _ => Ok(()),
    }
}

/// The /proc/sys file of a dotted sysctl name ("vm.swappiness" → proc/sys/vm/swappiness).
pub(crate) fn sysctl_path(root: &SysRoot, name: &str) -> Result<PathBuf, MachineError> {
    let ok = !name.is_empty()
        && name.split('.').all(|p| !p.is_empty())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !ok {
        return Err(MachineError::Invalid(format!("{name:?} is not a sysctl name like \"vm.swappiness\"")));
    }
    Ok(root.proc("sys").join(name.replace('.', "/")))
}

/// Writes `value` unless `current` already reads it back, retrying twice.
fn write_retrying(
    path: &Path,
    value: &str,
    current: fn(&Path) -> Option<String>,
) -> Result<(), MachineError> {
    let mut last = None;
    for attempt in 0..3 {
        if current(path).as_deref() == Some(value) {
            return Ok(());
        }
        match write_ctl(path, value) {
            Ok(()) => return Ok(()),
            Err(e) => last = Some(e),
        }
        std::thread::sleep(std::time::Duration::from_millis(50 * (attempt + 1)));
    }
    last.map_or(Ok(()), Err)
}

/// Puts back every value in `state`, removing each entry restored, in the reverse order of how
/// a variant applies them. The pending after-commands run first, last one first (they stop
/// what `before` started, e.g. a daemon living in the memory cgroup). Then the memory cgroup
/// (with `move_back`, the owner — this process — is moved back to its original cgroup; without,
/// the owner is gone). CPUs that were online are brought back next, then CPUs that were offline
/// are offlined again from the highest down, then sysctls, then sysfs files in the order they
/// were first recorded. Every entry is
/// tried; returns what was restored and the first error (entries that failed stay in `state`,
/// except after-commands, which are removed even when they fail).
pub(crate) fn restore_saved(
    root: &SysRoot,
    state: &mut SavedState,
    move_back: bool,
) -> (Vec<String>, Option<MachineError>) {
    let mut done = Vec::new();
    let mut first_err = None;
    // Guests first: nothing else may be put back under a virtual machine still running.
    crate::guard::stop_guests(state, &mut done, &mut first_err);
    while let Some(cmd) = state.commands.pop() {
        match crate::shell::run_sh("after-command", &cmd, AFTER_FAILED) {
            Ok(()) => done.push(format!("ran after-command `{cmd}`")),
            Err(e) => first_err = first_err.or(Some(e)),
        }
    }
    if let Some(cg) = &state.cgroup {
        match cgroup::undo(root, cg, move_back.then_some(state.pid)) {
            Ok(msg) => {
                state.cgroup = None;
                done.push(msg);
            }
            Err(e) => first_err = Some(e),
        }
    }
    // After the cgroup: swapoff reads the pages back into whatever memory their owners have.
    if let Some(z) = &state.zram {
        match crate::zram::undo(root, z) {
            Ok(msg) => {
                state.zram = None;
                done.push(msg);
            }
            Err(e) => first_err = first_err.or(Some(e)),
        }
    }
    let mut cpus: Vec<(u32, String)> = state.online.iter().map(|(c, v)| (*c, v.clone())).collect();
    cpus.sort_by_key(|(c, v)| (v.as_str() != "1", if v.as_str() == "1" { *c as i64 } else { -(*c as i64) }));
    for (cpu, value) in cpus {
        match write_retrying(&online_file(root, cpu), &value, read_trim) {
            Ok(()) => {
                state.online.remove(&cpu);
                done.push(format!("cpu{cpu}/online={value}"));
            }
            Err(e) => first_err = first_err.or(Some(e)),
        }
    }
    let sysctls: Vec<(String, String)> = state.sysctl.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    for (name, value) in sysctls {
        match sysctl_path(root, &name).and_then(|p| write_retrying(&p, &value, read_trim)) {
            Ok(()) => {
                state.sysctl.remove(&name);
                done.push(format!("{name}={value}"));
            }
            Err(e) => first_err = first_err.or(Some(e)),
        }
    }
    restore_files(root, state, &mut done, &mut first_err);
    (done, first_err)
}

/// What to do about a failed after-command: it is not retried (see `Guard::run_command`).
const AFTER_FAILED: &str =
    "it was removed from the state file and will not run again: undo by hand what it should have undone";

/// The file in `root` of a recorded host path; only paths under /sys without `..` qualify.
pub(crate) fn saved_file_path(root: &SysRoot, host: &str) -> Result<PathBuf, MachineError> {
    let path = Path::new(host);
    let clean = path.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    if !clean || !path.starts_with("/sys") || path == Path::new("/sys") {
        return Err(MachineError::Invalid(format!(
            "refusing to restore {host}: not a file under /sys (was the state file edited?); \
             restore it by hand and delete the state file"
        )));
    }
    Ok(root.map_host_path(path))
}

fn selected(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|t| selected_value(&t))
}

/// Puts back the sysfs files of `state` in the order recorded, removing each one restored.
fn restore_files(
    root: &SysRoot,
    state: &mut SavedState,
    done: &mut Vec<String>,
    first_err: &mut Option<MachineError>,
) {
    let mut left = Vec::new();
    for f in std::mem::take(&mut state.files) {
        match saved_file_path(root, &f.path).and_then(|p| write_retrying(&p, &f.original, selected)) {
            Ok(()) => done.push(format!("{}={}", f.path, f.original)),
            Err(e) => {
                *first_err = first_err.take().or(Some(e));
                left.push(f);
            }
        }
    }
    state.files = left;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_names() {
        let r = SysRoot::at("/x");
        assert_eq!(sysctl_path(&r, "vm.swappiness").expect("ok"), PathBuf::from("/x/proc/sys/vm/swappiness"));
        for bad in ["", "vm..x", "../etc", "vm/x", ".vm", "vm swappiness"] {
            assert!(sysctl_path(&r, bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn store_load_round_trip() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("sub/restore.json");
        assert_eq!(load(&p).expect("none"), None);
        let mut s = SavedState::for_this_process();
        assert!(s.start_ticks.is_some());
        s.online.insert(3, "1".into());
        s.sysctl.insert("vm.swappiness".into(), "60".into());
        store(&p, &s).expect("store");
        assert!(!std::fs::read_to_string(&p).expect("r").contains("files"), "empty lists are left out");
        assert_eq!(load(&p).expect("load"), Some(s.clone()));
        let only_command = SavedState { commands: vec!["true".into()], ..Default::default() };
        assert!(!only_command.is_empty());
        s.files.push(SavedFile { path: "/sys/block/vda/queue/scheduler".into(), original: "none".into() });
        s.commands.push("echo after".into());
        store(&p, &s).expect("store");
        assert_eq!(load(&p).expect("load"), Some(s));
        remove(&p).expect("rm");
        remove(&p).expect("rm twice");
        std::fs::write(&p, "{not json").expect("w");
        assert!(matches!(load(&p), Err(MachineError::State { .. })));
    }

    #[test]
    fn this_process_is_alive() {
        let s = SavedState::for_this_process();
        assert!(owner_alive(&SysRoot::host(), &s));
        let reused = SavedState { start_ticks: s.start_ticks.map(|t| t + 1), ..s.clone() };
        assert!(!owner_alive(&SysRoot::host(), &reused));
    }

    #[test]
    fn a_killed_owner_not_yet_reaped_is_gone() {
        let mut child = std::process::Command::new("sleep").arg("30").spawn().expect("sleep");
        let pid = child.id();
        let s = SavedState {
            pid,
            start_ticks: start_ticks(Path::new("/proc"), pid),
            ..SavedState::for_this_process()
        };
        assert!(owner_alive(&SysRoot::host(), &s), "running");
        child.kill().expect("kill");
        // Not waited for: a zombie, as a killed racehorse is until its shell reaps it.
        let t0 = std::time::Instant::now();
        while !is_zombie(Path::new("/proc"), pid) && t0.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(!owner_alive(&SysRoot::host(), &s), "a zombie owns nothing");
        child.wait().expect("reap");
    }

    /// Changes the real machine: a `sleep` moved into a cgroup made by hand stands for a run
    /// killed with SIGKILL while limited; `recover` must leave it while the owner lives and
    /// remove it once the owner is dead.
    #[test]
    fn recover_after_sigkill_machine() {
        struct Cleanup(std::process::Child, PathBuf);
        impl Drop for Cleanup {
            fn drop(&mut self) {
                let _ = self.0.kill();
                let _ = self.0.wait();
                let _ = std::fs::remove_dir(&self.1);
            }
        }
        let _l = cgroup::machine_lock();
        let root = SysRoot::host();
        let Ok(found) = cgroup::detect_memory_cgroup(&root) else {
            racehorse_testkit::skip!("no memory cgroup");
            return;
        };
        if crate::root::euid() != 0 || !crate::cpuctl::writable(&found.dir) {
            racehorse_testkit::skip!("needs root and a writable {}", found.dir.display());
            return;
        }
        let sleeper = std::process::Command::new("sleep").arg("30").spawn().expect("spawn sleep");
        let pid = sleeper.id();
        let child = found.dir.join(format!("racehorse-{pid}"));
        let mut owner = Cleanup(sleeper, child.clone());
        std::fs::create_dir(&child).expect("mkdir");
        write_ctl(&child.join("cgroup.procs"), &pid.to_string()).expect("move sleep in");
        let dir = tempfile::tempdir().expect("tmp");
        let file = dir.path().join("restore.json");
        let cg =
            SavedCgroup { version: found.version, original: found.dir.clone(), child, enable_memory: false };
        let start = start_ticks(Path::new("/proc"), pid);
        store(&file, &SavedState { pid, start_ticks: start, cgroup: Some(cg), ..Default::default() })
            .expect("store");
        assert_eq!(crate::guard::recover(&root, &file).expect("alive"), None, "owner alive: left alone");
        assert!(owner.1.exists() && file.exists());
        owner.0.kill().expect("SIGKILL");
        owner.0.wait().expect("reap");
        let msg = crate::guard::recover(&root, &file).expect("recover").expect("restored");
        assert!(msg.contains(&format!("pid {pid}")) && msg.contains("removed cgroup"), "{msg}");
        assert!(!owner.1.exists() && !file.exists());
        println!("{msg}");
    }
}
