//! Running the command engine's program: `/bin/sh -c` in its own process group, output
//! captured (the last bytes kept), waited for with wait4 so its CPU (and its descendants')
//! comes back exactly, and the whole group killed on Ctrl-C, timeout or error.

use crate::EngineError;
use racehorse_machine::rusage::CpuTime;
use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Bytes of each output stream kept (the tail: results come last).
pub const KEEP_BYTES: usize = 8 << 20;

/// How the program ended.
#[derive(Debug)]
pub struct Finished {
    /// Exit code, or 128 + signal number when a signal ended it.
    pub code: i32,
    /// User and kernel CPU of the program and the descendants it waited for.
    pub cpu: CpuTime,
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    /// The last `n` non-empty lines of stdout then stderr, joined with " | ".
    pub fn tail(&self, n: usize) -> String {
        let lines: Vec<&str> =
            self.stdout.lines().chain(self.stderr.lines()).filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(n)..].join(" | ")
    }
}

/// Why waiting stopped early.
pub enum Stop {
    Interrupted,
    TimedOut,
}

/// A started program.
pub struct Running {
    pid: i32,
    waited: Receiver<(i32, libc::rusage)>,
    readers: Vec<JoinHandle<String>>,
    done: bool,
}

fn reader(mut src: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut kept: Vec<u8> = Vec::new();
        let mut buf = [0u8; 64 * 1024];
        while let Ok(n) = src.read(&mut buf) {
            if n == 0 {
                break;
            }
            kept.extend_from_slice(&buf[..n]);
            if kept.len() > 2 * KEEP_BYTES {
                kept.drain(..kept.len() - KEEP_BYTES);
            }
        }
        let from = kept.len().saturating_sub(KEEP_BYTES);
        String::from_utf8_lossy(&kept[from..]).into_owned()
    })
}

/// Starts `sh -c script` in `dir` with `env` added, in a new process group.
pub fn start(script: &str, dir: &Path, env: &BTreeMap<String, String>) -> Result<Running, EngineError> {
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(script).current_dir(dir).envs(env).stdin(Stdio::null());
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let mut child =
        cmd.spawn().map_err(|e| EngineError::io("cannot start /bin/sh for the command", dir, e))?;
    let pid = child.id() as i32;
    let readers = vec![
        reader(child.stdout.take().expect("piped stdout")),
        reader(child.stderr.take().expect("piped stderr")),
    ];
    // std's Child is dropped unwaited (no zombie handling there); wait4 below reaps it.
    drop(child);
    let (tx, waited) = channel();
    std::thread::spawn(move || {
        let mut status = 0;
        // SAFETY: a zeroed rusage is a valid out-parameter; pid is our child.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
            if r == pid || (r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR)) {
                break;
            }
        }
        let _ = tx.send((status, usage));
    });
    Ok(Running { pid, waited, readers, done: false })
}

fn seconds(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

impl Running {
    /// Waits for the end, checking `stop` every 100 ms; `deadline` bounds the wait.
    pub fn wait(mut self, deadline: Option<Instant>, stop: &dyn Fn() -> bool) -> Result<Finished, Stop> {
        let (status, usage) = loop {
            if stop() {
                return Err(Stop::Interrupted);
            }
            if deadline.is_some_and(|d| Instant::now() > d) {
                return Err(Stop::TimedOut);
            }
            match self.waited.recv_timeout(Duration::from_millis(100)) {
                Ok(r) => break r,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break (0, unsafe { std::mem::zeroed() }),
            }
        };
        self.done = true;
        // Descendants that outlive the shell would hold the pipes open: end them.
        self.kill_group();
        let mut texts = std::mem::take(&mut self.readers).into_iter().map(|r| r.join().unwrap_or_default());
        let (stdout, stderr) = (texts.next().unwrap_or_default(), texts.next().unwrap_or_default());
        let code =
            if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { 128 + libc::WTERMSIG(status) };
        let cpu = CpuTime { user_s: seconds(usage.ru_utime), kernel_s: seconds(usage.ru_stime) };
        Ok(Finished { code, cpu, stdout, stderr })
    }

    fn kill_group(&self) {
        // SAFETY: signalling our own process group (pgid = the shell's pid).
        unsafe { libc::kill(-self.pid, libc::SIGKILL) };
    }
}

impl Drop for Running {
    /// An abandoned program (interrupt, timeout, error) is killed with its whole group.
    fn drop(&mut self) {
        if !self.done {
            // SAFETY: as in kill_group; SIGTERM first for a clean exit, then SIGKILL.
            unsafe { libc::kill(-self.pid, libc::SIGTERM) };
            if self.waited.recv_timeout(Duration::from_secs(2)).is_err() {
                self.kill_group();
                let _ = self.waited.recv_timeout(Duration::from_secs(2));
            }
            self.kill_group();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(script: &str) -> Finished {
        let dir = tempfile::tempdir().expect("tmp");
        let env = BTreeMap::from([("RH_TEST".to_string(), "v1".to_string())]);
        let r = start(script, dir.path(), &env).expect("start");
        r.wait(None, &|| false).ok().expect("finished")
    }

    #[test]
    fn output_exit_code_and_cpu_come_back() {
        let f =
            run("echo out $RH_TEST; echo err >&2; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 3");
        assert_eq!(f.code, 3);
        assert_eq!(f.stdout, "out v1\n");
        assert_eq!(f.stderr, "err\n");
        assert!(f.cpu.total_s() > 0.0, "the shell loop used CPU: {:?}", f.cpu);
        assert_eq!(f.tail(5), "out v1 | err");
        assert_eq!(run("kill -9 $$").code, 128 + 9, "a signal shows as 128 + its number");
    }

    #[test]
    fn a_stopped_wait_kills_the_whole_group() {
        let dir = tempfile::tempdir().expect("tmp");
        let pidfile = dir.path().join("pid");
        let script = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
        let r = start(&script, dir.path(), &BTreeMap::new()).expect("start");
        let t0 = Instant::now();
        let stopped = r.wait(Some(Instant::now() + Duration::from_millis(400)), &|| false);
        assert!(matches!(stopped, Err(Stop::TimedOut)));
        assert!(t0.elapsed() < Duration::from_secs(6), "killed promptly");
        let pid: i32 = std::fs::read_to_string(&pidfile).expect("pid").trim().parse().expect("num");
        std::thread::sleep(Duration::from_millis(100));
        // Gone, or a zombie waiting for whoever adopted it.
        let alive = racehorse_machine::pidstat::running(std::path::Path::new("/proc"), pid as u32);
        assert!(!alive, "the background sleep {pid} went with its group");
    }
}
