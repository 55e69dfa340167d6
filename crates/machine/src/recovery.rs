//! Putting the machine back after a racehorse that was killed: the run's state file, the
//! state file of a killed `racehorse plugd`, and the daemons a killed run had started as a
//! variant (`plugd-<run pid>-<variant>/` beside the state file), which are stopped first so
//! that they restore the CPUs they hold. Called under the machine lock by every run and by
//! `racehorse restore`.

use crate::error::MachineError;
use crate::guard::recover;
use crate::root::SysRoot;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The standalone daemon's state file beside the run's (`plugd-restore.json`).
pub fn plugd_state_file(state_file: &Path) -> PathBuf {
    state_file.with_file_name("plugd-restore.json")
}

/// Whether `pid` runs on this machine (the pids in file and directory names are the host's).
fn alive(pid: u32) -> bool {
    crate::state::running(Path::new("/proc"), pid)
}

fn is_plugd(pid: u32) -> bool {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&cmdline).contains("plugd")
}

/// The variant daemon directories beside `state_file` whose run (the pid in the name) is gone.
fn orphan_plugd_dirs(state_file: &Path) -> Vec<PathBuf> {
    let Some(dir) = state_file.parent() else { return Vec::new() };
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    rd.filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid: u32 = name.strip_prefix("plugd-")?.split('-').next()?.parse().ok()?;
            (pid != std::process::id() && !alive(pid)).then(|| e.path())
        })
        .collect()
}

/// Stops the daemon of an orphaned variant directory (SIGTERM, then SIGKILL after 5 s); it
/// restores what it changed on SIGTERM. Returns what was done, if anything.
fn stop_orphan(dir: &Path) -> Option<String> {
    let pid: u32 = std::fs::read_to_string(dir.join("pid")).ok()?.trim().parse().ok()?;
    if !alive(pid) || !is_plugd(pid) {
        return None;
    }
    let id = libc::pid_t::try_from(pid).ok()?;
    // SAFETY: kill has no memory preconditions; the pid was checked to be a plugd just now.
    unsafe { libc::kill(id, libc::SIGTERM) };
    let start = Instant::now();
    while alive(pid) && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    if alive(pid) {
        // SAFETY: as above.
        unsafe { libc::kill(id, libc::SIGKILL) };
        std::thread::sleep(Duration::from_millis(200));
        return Some(format!("killed racehorse plugd {pid} left running by a killed run"));
    }
    Some(format!("stopped racehorse plugd {pid} left running by a killed run"))
}

/// Removes the half-written state files (`.NAME.tmp.PID`, written then renamed) of
/// processes that are gone: a racehorse killed between the write and the rename.
fn remove_stale_temporaries(state_file: &Path) -> Vec<String> {
    let Some(dir) = state_file.parent() else { return Vec::new() };
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    rd.filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid: u32 = name.strip_prefix('.')?.rsplit_once(".tmp.")?.1.parse().ok()?;
            (pid != std::process::id() && !alive(pid) && std::fs::remove_file(e.path()).is_ok())
                .then(|| format!("removed {}, half-written by a killed racehorse", e.path().display()))
        })
        .collect()
}

/// The state files beside `state_file` whose owner still runs, as "FILE (pid N)": nothing
/// is restored from them (the owner restores on exit), and `restore` says so.
pub fn live_owners(root: &SysRoot, state_file: &Path) -> Vec<String> {
    let mut files = vec![state_file.to_path_buf(), plugd_state_file(state_file)];
    if let Some(Ok(rd)) = state_file.parent().map(std::fs::read_dir) {
        files.extend(rd.filter_map(|e| e.ok()).map(|e| e.path().join("state.json")).filter(|p| p.exists()));
    }
    files
        .into_iter()
        .filter_map(|f| {
            let saved = crate::state::load(&f).ok()??;
            crate::state::owner_alive(root, &saved).then(|| format!("{} (pid {})", f.display(), saved.pid))
        })
        .collect()
}

/// Restores everything a killed racehorse left: the run's state file, a killed standalone
/// daemon's, and every orphaned variant daemon. Returns what was done (empty: nothing).
pub fn recover_all(root: &SysRoot, state_file: &Path) -> Result<Vec<String>, MachineError> {
    let mut done = remove_stale_temporaries(state_file);
    done.extend(recover(root, state_file)?);
    done.extend(recover(root, &plugd_state_file(state_file))?);
    for dir in orphan_plugd_dirs(state_file) {
        done.extend(stop_orphan(&dir));
        if let Some(what) = recover(root, &dir.join("state.json"))? {
            done.push(format!("{what} (variant daemon {})", dir.display()));
        }
        std::fs::remove_dir_all(&dir).map_err(|e| MachineError::io(&dir, e))?;
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::copy_fixture;

    /// Issue 21, case 9: a SIGKILLed plugd left cpu1 offline and `restore` said "nothing to
    /// restore", because it read only the run's state file.
    #[test]
    fn a_killed_daemons_state_and_an_orphaned_variant_daemon_are_restored() {
        let tmp = tempfile::tempdir().unwrap();
        let root = copy_fixture("vm2", tmp.path());
        let online = root.sys("devices/system/cpu/cpu1/online");
        let state_dir = tmp.path().join("state");
        std::fs::create_dir_all(&state_dir).unwrap();
        let run_state = state_dir.join("restore.json");
        let mut dead = std::process::Command::new("true").spawn().unwrap();
        let dead_pid = dead.id();
        dead.wait().unwrap();
        let saved = |pid: u32| {
            format!(
                "{{\"pid\": {pid}, \"start_ticks\": null, \"online\": {{\"1\": \"1\"}}, \"sysctl\": {{}}}}"
            )
        };
        std::fs::write(&online, "0").unwrap();
        std::fs::write(plugd_state_file(&run_state), saved(dead_pid)).unwrap();
        let done = recover_all(&root, &run_state).unwrap();
        assert_eq!(std::fs::read_to_string(&online).unwrap().trim(), "1", "{done:?}");
        assert_eq!(done.len(), 1, "{done:?}");

        let orphan = state_dir.join(format!("plugd-{dead_pid}-hp"));
        std::fs::create_dir(&orphan).unwrap();
        std::fs::write(orphan.join("state.json"), saved(dead_pid)).unwrap();
        std::fs::write(&online, "0").unwrap();
        let live = state_dir.join(format!("plugd-{}-mine", std::process::id()));
        std::fs::create_dir(&live).unwrap();
        let done = recover_all(&root, &run_state).unwrap();
        assert_eq!(std::fs::read_to_string(&online).unwrap().trim(), "1", "{done:?}");
        assert!(!orphan.exists() && live.exists(), "only the dead run's daemon directory goes");
        assert!(recover_all(&root, &run_state).unwrap().is_empty(), "nothing left");
    }

    /// Issue 23, case 7: with a state file owned by a live process, `restore` printed
    /// "nothing to restore" and exited 0.
    #[test]
    fn a_state_file_with_a_live_owner_is_named_and_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        // The host's /proc tells that this process is alive; the file changes nothing.
        let root = SysRoot::host();
        let state = tmp.path().join("restore.json");
        let me = std::process::id();
        std::fs::write(&state, format!("{{\"pid\": {me}, \"online\": {{}}, \"sysctl\": {{}}}}")).unwrap();
        let done = recover_all(&root, &state).unwrap();
        assert!(done.is_empty(), "{done:?}");
        let live = live_owners(&root, &state);
        assert_eq!(live, vec![format!("{} (pid {me})", state.display())]);
        assert!(state.exists());
    }

    /// Issue 23, case 8: `.restore.json.tmp.PID` was left after a SIGTERM during start-up.
    #[test]
    fn half_written_state_files_of_dead_processes_go() {
        let tmp = tempfile::tempdir().unwrap();
        let root = copy_fixture("vm2", tmp.path());
        let state = tmp.path().join("restore.json");
        let mut dead = std::process::Command::new("true").spawn().unwrap();
        let dead_pid = dead.id();
        dead.wait().unwrap();
        let stale = tmp.path().join(format!(".restore.json.tmp.{dead_pid}"));
        let mine = tmp.path().join(format!(".restore.json.tmp.{}", std::process::id()));
        std::fs::write(&stale, "{").unwrap();
        std::fs::write(&mine, "{").unwrap();
        let done = recover_all(&root, &state).unwrap();
        assert!(!stale.exists() && mine.exists(), "{done:?}");
        assert_eq!(done.len(), 1);
    }
}
