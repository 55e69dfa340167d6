//! A system-wide `perf record` (with call chains unless `callgraph=none`) whose sampling is
//! switched on and off through perf's control fifo, so that only the measured window is
//! sampled.

use super::callgraph::CallGraph;
use super::control::{control_arg, Controlled, Tool};
use super::error::PerfError;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

/// The sampling event without LBR: a software timer, available without hardware counters.
pub const EVENT: &str = "cpu-clock";

/// File names inside the recording directory.
pub const DATA_FILE: &str = "perf.data";
pub const LOG_FILE: &str = "perf.log";
const TOOL: Tool = Tool { name: "perf record", ctl: "perf.ctl", ack: "perf.ack", log: LOG_FILE };

/// A system-wide perf recording started before the warm-up with its events disabled, switched
/// on and off exactly at the measured window's edges. Dropping it kills and reaps perf.
pub struct Recording {
    perf: Controlled,
    dir: PathBuf,
}

impl Recording {
    /// Starts `perf record -a -e EVENT -F <freq_hz> [--call-graph MODE] -D -1 --control
    /// fifo:<ctl>,<ack> -o <dir>/perf.data` with its output in `<dir>/perf.log`, and waits
    /// until perf answers on the control fifo. Sampling stays off until [`Recording::enable`].
    pub fn start(
        perf: &Path,
        dir: &Path,
        freq_hz: u32,
        callgraph: CallGraph,
    ) -> Result<Recording, PerfError> {
        if freq_hz == 0 {
            return Err(PerfError::ZeroFrequency);
        }
        let perf = Controlled::start(perf, dir, TOOL, record_args(dir, freq_hz, callgraph))?;
        Ok(Recording { perf, dir: dir.to_path_buf() })
    }

    /// Turns sampling on; call it at the measured window's start.
    pub fn enable(&mut self) -> Result<(), PerfError> {
        self.perf.enable()
    }

    /// Turns sampling off; call it at the measured window's end.
    pub fn disable(&mut self) -> Result<(), PerfError> {
        self.perf.disable()
    }

    /// perf's process id.
    pub fn pid(&self) -> u32 {
        self.perf.pid()
    }

    /// The path of perf's output log.
    pub fn log_path(&self) -> PathBuf {
        self.perf.log_path()
    }

    /// Stops perf (SIGINT; SIGKILL if it has not finished within 30 s) and returns the path of
    /// the data file it wrote (typically within 0.1 s).
    pub fn finish(mut self) -> Result<PathBuf, PerfError> {
        self.perf.stop()?;
        let data = self.dir.join(DATA_FILE);
        match fs::metadata(&data) {
            Ok(m) if m.len() > 0 => Ok(data),
            _ => Err(PerfError::perf(
                "perf record",
                format!("wrote no {}", data.display()),
                self.perf.log_tail(),
            )),
        }
    }
}

/// The arguments of `perf record` for a recording in `dir`.
pub fn record_args(dir: &Path, freq_hz: u32, callgraph: CallGraph) -> Vec<OsString> {
    let mut args: Vec<OsString> =
        ["record", "-a", "-e", callgraph.event(), "-F"].map(OsString::from).to_vec();
    args.push(freq_hz.to_string().into());
    args.extend(callgraph.record_args().into_iter().map(OsString::from));
    // -D -1: start with events disabled; -N: do not copy binaries into ~/.debug;
    // --no-bpf-event: no side-band thread, whose 1 s poll would delay every stop by ~0.9 s
    // (the price: samples in BPF programs stay unresolved addresses).
    args.extend(["-D", "-1", "-N", "--no-bpf-event", "--control"].map(OsString::from));
    args.push(control_arg(dir, &TOOL));
    args.push("-o".into());
    args.push(dir.join(DATA_FILE).into());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(args: Vec<OsString>) -> String {
        args.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn record_command_line() {
        assert_eq!(
            line(record_args(Path::new("/w/cell"), 999, CallGraph::Fp)),
            "record -a -e cpu-clock -F 999 --call-graph fp -D -1 -N --no-bpf-event \
             --control fifo:/w/cell/perf.ctl,/w/cell/perf.ack -o /w/cell/perf.data"
        );
        assert_eq!(
            line(record_args(Path::new("/w"), 99, CallGraph::None)),
            "record -a -e cpu-clock -F 99 -D -1 -N --no-bpf-event --control fifo:/w/perf.ctl,/w/perf.ack -o /w/perf.data"
        );
        assert!(line(record_args(Path::new("/w"), 99, CallGraph::Lbr))
            .starts_with("record -a -e cycles -F 99 --call-graph lbr"));
    }

    #[test]
    fn start_reports_perf_output() {
        let dir = tempfile::tempdir().unwrap();
        // `ls record -a -e ...` rejects `-e` on stderr and exits, standing in for a perf that
        // rejects an option; its words must reach the error.
        let err = Recording::start(Path::new("/bin/ls"), &dir.path().join("rec"), 999, CallGraph::Fp)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("perf said: /bin/ls: invalid option"), "{err}");
        assert!(Recording::start(Path::new("/bin/ls"), dir.path(), 0, CallGraph::Fp).is_err());
    }
}
