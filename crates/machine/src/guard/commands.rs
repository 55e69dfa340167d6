//! A variant's before/after commands: the after-command is recorded in the state file before the
//! before-command runs, and `restore`/drop/`recover` run pending after-commands last one first,
//! before anything else is put back (the reverse of how a variant applies its settings).

use super::Guard;
use crate::error::MachineError;
use crate::shell::run_sh;
use crate::state;

impl Guard {
    /// Records `after` (if any) in the state file, then runs `before` (if any) with `sh -c`,
    /// stdin null and output captured. A before-command that cannot start or exits non-zero is
    /// an error with its exit status and the last lines of its stderr; `after` stays recorded
    /// even then, since `before` may have changed things half-way.
    ///
    /// Pending after-commands run at the end of `restore` (also on drop) and of `recover`, the
    /// last recorded first. Each is removed from the state file once it has run, even when it
    /// fails: its failure is reported as the first error, but a broken command must not block
    /// every later recovery forever, so it is never retried.
    pub fn run_command(&mut self, before: Option<&str>, after: Option<&str>) -> Result<(), MachineError> {
        for (what, cmd) in [("before", before), ("after", after)] {
            if cmd.is_some_and(|c| c.trim().is_empty()) {
                return Err(MachineError::Invalid(format!(
                    "the {what}-command is empty; give a shell command or leave it out"
                )));
            }
        }
        if let Some(cmd) = after {
            self.saved.commands.push(cmd.to_string());
            if let Err(e) = state::store(&self.state_file, &self.saved) {
                self.saved.commands.pop();
                return Err(e);
            }
        }
        match before {
            Some(cmd) => run_sh("before-command", cmd, "fix the command or remove it from the variant"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::guard::{recover, Guard};
    use crate::testutil::{read, writable_fixture};

    #[test]
    fn failing_before_keeps_after_and_restore_runs_it() {
        let (d, root, state) = writable_fixture("knobs");
        let log = d.path().join("log");
        let sh = |s: &str| s.replace("LOG", &log.display().to_string());
        let mut g = Guard::new(root, state.clone()).expect("guard");
        g.run_command(Some(&sh("echo b1 >> LOG")), Some(&sh("echo a1 >> LOG"))).expect("first");
        let e = g
            .run_command(
                Some(&sh("echo b2 >> LOG; echo 'no such thing' >&2; exit 7")),
                Some(&sh("echo a2 >> LOG")),
            )
            .expect_err("before fails");
        let msg = e.to_string();
        assert!(msg.contains("exit status: 7") && msg.contains("no such thing"), "{msg}");
        assert!(read(&state).contains("echo a2"), "after stays recorded");
        assert_eq!(read(&log), "b1\nb2");
        g.restore().expect("restore");
        assert_eq!(read(&log), "b1\nb2\na2\na1", "after-commands run last one first");
        assert!(!state.exists());
        g.restore().expect("idempotent: nothing runs twice");
        assert_eq!(read(&log), "b1\nb2\na2\na1");
        assert!(g.run_command(Some(" "), None).is_err());
    }

    #[test]
    fn a_failing_after_command_is_reported_once() {
        let (d, root, state) = writable_fixture("knobs");
        let log = d.path().join("log");
        let mut g = Guard::new(root, state.clone()).expect("guard");
        g.run_command(None, Some(&format!("echo ok >> {}", log.display()))).expect("after 1");
        g.run_command(None, Some("echo broken >&2; exit 2")).expect("after 2");
        let e = g.restore().expect_err("the after-command fails");
        assert!(e.to_string().contains("broken") && e.to_string().contains("will not run again"), "{e}");
        assert_eq!(read(&log), "ok", "the other one still ran");
        assert!(!state.exists(), "nothing left to retry");
        g.restore().expect("not retried");
    }

    #[test]
    fn recover_runs_the_after_commands_of_a_dead_run() {
        let (d, root, state) = writable_fixture("knobs");
        let log = d.path().join("log");
        let json = format!(
            r#"{{"pid": 999999, "start_ticks": null, "online": {{}}, "sysctl": {{}},
            "commands": ["echo first >> {0}", "echo second >> {0}"]}}"#,
            log.display()
        );
        std::fs::create_dir_all(state.parent().expect("dir")).expect("mkdir");
        std::fs::write(&state, json).expect("state");
        let msg = recover(&root, &state).expect("recover").expect("restored");
        assert!(msg.contains("ran after-command `echo second"), "{msg}");
        assert_eq!(read(&log), "second\nfirst");
        assert!(!state.exists());
    }
}
