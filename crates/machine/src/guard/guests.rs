//! Virtual machines as machine changes: a QEMU process started for a guest cell is recorded
//! in the state file (pid, start time, command name) right after it starts, and killed by
//! `restore`, by the Guard's drop and by `recover` after racehorse itself was killed. The
//! start time and name make sure a reused pid is never killed.

use super::Guard;
use crate::error::MachineError;
use crate::state::{self, running, start_ticks};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::{Duration, Instant};

/// One recorded guest process.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct SavedGuest {
    pub pid: u32,
    /// Field 22 of /proc/PID/stat when it was recorded.
    pub start_ticks: Option<u64>,
    /// /proc/PID/comm when it was recorded (e.g. `qemu-system-x86`).
    pub comm: String,
}

fn comm(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).ok().map(|c| c.trim_end().to_string())
}

impl SavedGuest {
    /// The record of running process `pid`, or None when it is already gone.
    pub fn of(pid: u32) -> Option<SavedGuest> {
        let proc_dir = Path::new("/proc");
        Some(SavedGuest { pid, start_ticks: start_ticks(proc_dir, pid), comm: comm(pid)? })
    }

    /// True while the very process recorded runs (same pid, start time and name).
    pub fn alive(&self) -> bool {
        let proc_dir = Path::new("/proc");
        running(proc_dir, self.pid)
            && start_ticks(proc_dir, self.pid) == self.start_ticks
            && comm(self.pid).as_deref() == Some(self.comm.as_str())
    }

    /// SIGKILLs the process if it is still the one recorded and waits (up to 5 s) until it
    /// has ended. Ok(true) when it was killed, Ok(false) when it had already ended.
    pub fn kill(&self) -> Result<bool, MachineError> {
        if !self.alive() {
            return Ok(false);
        }
        let pid = libc::pid_t::try_from(self.pid)
            .map_err(|_| MachineError::Invalid(format!("guest pid {} out of range", self.pid)))?;
        // SAFETY: kill has no memory preconditions; the pid, start time and name were checked.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        let start = Instant::now();
        while self.alive() {
            if start.elapsed() > Duration::from_secs(5) {
                return Err(MachineError::Invalid(format!(
                    "guest process {} ({}) did not end within 5 s of SIGKILL; kill it by hand",
                    self.pid, self.comm
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(true)
    }
}

/// Kills every recorded guest (see [`SavedGuest::kill`]), removing each one that is gone.
pub(crate) fn stop_guests(
    state: &mut state::SavedState,
    done: &mut Vec<String>,
    first_err: &mut Option<MachineError>,
) {
    let mut left = Vec::new();
    for g in std::mem::take(&mut state.guests) {
        match g.kill() {
            Ok(true) => done.push(format!("killed guest {} (pid {})", g.comm, g.pid)),
            Ok(false) => {}
            Err(e) => {
                *first_err = first_err.take().or(Some(e));
                left.push(g);
            }
        }
    }
    state.guests = left;
}

impl Guard {
    /// Records a just-started guest process in the state file, so that it is killed on every
    /// path (restore, drop, and the next start or `racehorse restore` after a SIGKILL).
    /// Returns false when it had already ended (nothing recorded).
    pub fn record_guest(&mut self, pid: u32) -> Result<bool, MachineError> {
        let Some(g) = SavedGuest::of(pid) else { return Ok(false) };
        self.saved.guests.push(g);
        state::store(&self.state_file, &self.saved)?;
        Ok(true)
    }

    /// Kills the guest `pid` if it still runs and forgets it: the normal end of a guest cell.
    pub fn end_guest(&mut self, pid: u32) -> Result<(), MachineError> {
        let Some(i) = self.saved.guests.iter().position(|g| g.pid == pid) else { return Ok(()) };
        self.saved.guests[i].kill()?;
        self.saved.guests.remove(i);
        if self.saved.is_empty() {
            state::remove(&self.state_file)
        } else {
            state::store(&self.state_file, &self.saved)
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::guard::{recover, Guard};
    use crate::testutil::writable_fixture;

    /// A run killed while its guest ran: the next start (recover) kills the guest, and only
    /// the very process recorded (a pid with another start time is left alone).
    #[test]
    fn recover_kills_a_recorded_guest_of_a_dead_run() {
        let (_d, root, state) = writable_fixture("knobs");
        let mut vm = std::process::Command::new("sleep").arg("30").spawn().expect("spawn sleep");
        let mut g = Guard::new(root.clone(), state.clone()).expect("guard");
        assert!(g.record_guest(vm.id()).expect("record"));
        let text = std::fs::read_to_string(&state).expect("state");
        assert!(text.contains("\"comm\": \"sleep\""), "{text}");
        // The owner "dies": rewrite the file as owned by a pid that does not run.
        let dead = text.replacen(&format!("\"pid\": {}", std::process::id()), "\"pid\": 999999", 1);
        std::mem::forget(g);
        std::fs::write(&state, dead).expect("rewrite");
        let msg = recover(&root, &state).expect("recover").expect("restored");
        assert!(msg.contains("killed guest sleep"), "{msg}");
        let status = vm.wait().expect("reap");
        assert!(!status.success(), "killed by a signal: {status:?}");
        assert!(!state.exists());
    }

    #[test]
    fn end_guest_kills_and_forgets_and_a_reused_pid_is_spared() {
        let (_d, root, state) = writable_fixture("knobs");
        let mut vm = std::process::Command::new("sleep").arg("30").spawn().expect("spawn sleep");
        let mut g = Guard::new(root, state.clone()).expect("guard");
        g.record_guest(vm.id()).expect("record");
        g.end_guest(vm.id()).expect("end");
        vm.wait().expect("reap");
        assert!(!state.exists(), "nothing left to restore");
        let other = std::process::Command::new("sleep").arg("30").spawn().expect("spawn");
        let mut saved = super::SavedGuest::of(other.id()).expect("alive");
        saved.start_ticks = saved.start_ticks.map(|t| t + 1);
        assert!(!saved.kill().expect("spared"), "another start time: not ours");
        let mut other = other;
        other.kill().expect("kill");
        other.wait().expect("reap");
    }
}
