//! Running a perf subcommand to its end with a time limit and both pipes read on their own
//! threads (so neither can fill up and block perf), and quoting the end of its output.

use super::error::PerfError;
use std::ffi::OsStr;
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What a finished perf printed.
#[derive(Debug)]
pub struct Output {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `perf ARGS` (C locale, no stdin) until it ends; killed after `timeout`.
pub fn output<S: AsRef<OsStr>>(perf: &Path, args: &[S], timeout: Duration) -> Result<Output, PerfError> {
    let mut child = spawn_piped(perf, args)?;
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let status = wait_until(&mut child, timeout, args)?;
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    Ok(Output { status, stdout, stderr })
}

/// Starts `perf ARGS` with stdout and stderr piped.
pub fn spawn_piped<S: AsRef<OsStr>>(perf: &Path, args: &[S]) -> Result<Child, PerfError> {
    Command::new(perf)
        .args(args)
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| PerfError::io(format!("start {}", perf.display()), e))
}

/// Waits for `child`, killing and reaping it once `timeout` has passed.
pub fn wait_until<S: AsRef<OsStr>>(
    child: &mut Child,
    timeout: Duration,
    args: &[S],
) -> Result<ExitStatus, PerfError> {
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                let what =
                    args.first().map(|a| a.as_ref().to_string_lossy().into_owned()).unwrap_or_default();
                let took = format!("took over {} s and was killed", timeout.as_secs());
                return Err(PerfError::perf(format!("perf {what}"), took, ""));
            }
            Err(e) => return Err(PerfError::io("wait for perf", e)),
        }
    }
}

/// Reads a child's pipe to the end on its own thread.
pub fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// The last `n` non-blank lines of `text`, joined by " | ".
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_collects_both_pipes() {
        let o =
            output(Path::new("/bin/sh"), &["-c", "echo out; echo err >&2; exit 3"], Duration::from_secs(10))
                .unwrap();
        assert_eq!((o.stdout.as_str(), o.stderr.as_str(), o.status.code()), ("out\n", "err\n", Some(3)));
    }

    #[test]
    fn a_slow_command_is_killed() {
        let e = output(Path::new("/bin/sleep"), &["5"], Duration::from_millis(100)).unwrap_err().to_string();
        assert!(e.contains("perf 5 took over 0 s"), "{e}");
    }

    #[test]
    fn tails_skip_blank_lines() {
        assert_eq!(tail("a\n\nb\n c \n", 2), "b | c");
        assert_eq!(tail("", 3), "");
    }
}
