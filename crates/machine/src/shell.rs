//! Runs the before/after commands of a variant with `sh -c` (stdin null, output captured) and
//! turns a failure into an error carrying the exit status and the end of stderr.

use crate::error::MachineError;
use std::process::{Command, Stdio};

/// How many of the last stderr lines an error shows.
const STDERR_LINES: usize = 5;

/// The last non-empty lines of `stderr`, joined with " | ".
fn tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(STDERR_LINES)..].join(" | ")
}

/// Runs `cmd` with `sh -c`; `what` names it in errors ("before-command", "after-command") and
/// `advice` says what to do when it fails.
pub(crate) fn run_sh(what: &str, cmd: &str, advice: &str) -> Result<(), MachineError> {
    let out = Command::new("sh").arg("-c").arg(cmd).stdin(Stdio::null()).output().map_err(|e| {
        MachineError::Invalid(format!(
            "cannot start the {what} `{cmd}` with sh -c: {e}; check that /bin/sh exists; {advice}"
        ))
    })?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = tail(&out.stderr);
    let shown = if stderr.is_empty() {
        "(no stderr output)".to_string()
    } else {
        format!("stderr ends with: {stderr}")
    };
    Err(MachineError::Invalid(format!("the {what} `{cmd}` failed ({}); {advice}; {shown}", out.status)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn success_and_failure() {
        run_sh("before-command", "true", "fix it").expect("true succeeds");
        let e =
            run_sh("before-command", "for i in 1 2 3 4 5 6 7; do echo line$i >&2; done; exit 3", "fix it")
                .expect_err("exit 3");
        let msg = e.to_string();
        assert!(
            msg.contains("exit status: 3") && msg.contains("line3 | line4 | line5 | line6 | line7"),
            "{msg}"
        );
        assert!(!msg.contains("line2"), "only the last lines: {msg}");
        let quiet = run_sh("after-command", "exit 1", "fix it").expect_err("exit 1").to_string();
        assert!(
            quiet.contains("after-command `exit 1`")
                && quiet.contains("no stderr")
                && quiet.contains("fix it"),
            "{quiet}"
        );
    }

    #[test]
    fn stdin_is_null() {
        // `read` fails at once on /dev/null instead of waiting for input.
        let e = run_sh("before-command", "read x", "fix it").expect_err("no input");
        assert!(e.to_string().contains("exit status: 1"), "{e}");
    }
}
