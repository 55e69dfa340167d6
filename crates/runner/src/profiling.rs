//! `run --profile` in the measurement loop: a perf recording (with call chains) and a perf
//! count per cell, started before the warm-up with their events off, switched on and off at
//! the window's edges by window hooks, and turned into the cell's [`Profile`] (top images and
//! symbols, folded stacks, counters) after the cell; `--keep-profile` keeps the data file.

use crate::plan::PlannedCell;
use crate::profile::{bounded, fold, report, CallGraph, Counting, Recording, DEFAULT_FREQ_HZ};
use crate::profile::{PerfError, ProfileError};
use racehorse_core::Profile;
use racehorse_engines::{EngineError, WindowHooks};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// How to profile: the perf binary, the sampling rate, the call chains, how many images and
/// symbols to keep, whether to count events, and where to keep the data files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileSettings {
    pub perf: PathBuf,
    pub freq_hz: u32,
    pub top: usize,
    pub callgraph: CallGraph,
    /// Count hardware and software events over the window with `perf stat`.
    pub counters: bool,
    /// `--keep-profile DIR`: keep each cell's perf.data there.
    pub keep_dir: Option<PathBuf>,
    /// The run's id in the store, for the kept files' names (0 until the run is recorded).
    pub run_id: i64,
}

impl ProfileSettings {
    /// The defaults with `perf`: 999 Hz per CPU (off the timer tick), frame-pointer call
    /// chains, counters, top 50 images and symbols, nothing kept.
    pub fn with_perf(perf: PathBuf) -> ProfileSettings {
        ProfileSettings {
            perf,
            freq_hz: DEFAULT_FREQ_HZ,
            top: 50,
            callgraph: CallGraph::Fp,
            counters: true,
            keep_dir: None,
            run_id: 0,
        }
    }
}

/// Everything `run --profile` needs, checked before the first cell: perf itself, the
/// settings (`callgraph=…,freq=…`), that perf records call chains of that mode here, that
/// `keep_dir` can be written, and which counters this machine has. Returns the settings and
/// the notes to print once (hardware counters missing); an error is a usage error, but for a
/// scratch directory that cannot be made ([`crate::RunError::exit_code`]).
pub fn prepare(spec: &str, keep_dir: Option<&Path>) -> Result<(ProfileSettings, Vec<String>), ProfileError> {
    let spec = crate::profile::parse_spec(spec)?;
    let perf = crate::profile::find_perf()?;
    let keep_dir = keep_dir.map(writable_dir).transpose()?;
    let probe_dir = tempfile::tempdir().map_err(ProfileError::TempDir)?;
    crate::profile::probe_callgraph(&perf, spec.callgraph, probe_dir.path())?;
    let mut notes = Vec::new();
    let counters = match crate::profile::probe_counters(&perf) {
        Ok(counts) => {
            let missing = crate::profile::unsupported_hardware(&counts);
            if !missing.is_empty() {
                notes.push(format!(
                    "hardware counters ({}) are not supported on this machine: profiles store them without \
                     a count; the software events ({}) are counted",
                    missing.join(", "),
                    crate::profile::SOFTWARE.join(", ")
                ));
            }
            true
        }
        Err(e) => {
            notes.push(format!("{e}: profiles will have no counters"));
            false
        }
    };
    let settings = ProfileSettings {
        freq_hz: spec.freq_hz,
        callgraph: spec.callgraph,
        counters,
        keep_dir,
        ..ProfileSettings::with_perf(perf)
    };
    Ok((settings, notes))
}

/// `dir` made absolute and created if missing, once a file could be written in it.
fn writable_dir(dir: &Path) -> Result<PathBuf, ProfileError> {
    let refused = |dir: &Path, problem: &'static str| {
        let dir = dir.to_path_buf();
        move |source| ProfileError::KeepDir { dir, problem, source }
    };
    let dir = std::path::absolute(dir).map_err(refused(dir, ""))?;
    std::fs::create_dir_all(&dir).map_err(refused(&dir, "cannot create it: "))?;
    tempfile::tempfile_in(&dir).map_err(refused(&dir, "cannot write there: "))?;
    Ok(dir)
}

/// The name of a cell's kept data file: `run<ID>-cell<INDEX>-<label>.perf.data`, the label
/// (workload, parameters, variant, repetition) reduced to letters, digits and `._=+-`.
pub fn kept_name(run_id: i64, cell: &PlannedCell) -> String {
    let mut slug = String::new();
    for c in cell.spec.label().chars() {
        let keep = c.is_ascii_alphanumeric() || "._=+-".contains(c);
        if keep {
            slug.push(c);
        } else if !slug.ends_with('_') {
            slug.push('_');
        }
    }
    let slug: String = slug.trim_matches('_').chars().take(80).collect();
    format!("run{run_id}-cell{}-{slug}.perf.data", cell.index)
}

#[derive(Default)]
struct State {
    recording: Option<Recording>,
    counting: Option<Counting>,
    /// The first enable/disable failure (hooks cannot return errors).
    error: Option<PerfError>,
}

/// One cell's recording and count, shared with its hooks.
pub(crate) struct Profiler {
    state: Arc<Mutex<State>>,
    /// Where the data file goes when it is kept.
    keep: Option<PathBuf>,
    /// What was lost at the start (the counters), reported with the profile.
    warnings: Vec<String>,
    _dir: tempfile::TempDir,
}

fn lock(s: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

impl Profiler {
    /// Starts perf record and perf stat (events off) with their files in a fresh directory
    /// under `parent`; an error fails the cell.
    pub fn start(
        settings: &ProfileSettings,
        parent: &Path,
        cell: &PlannedCell,
    ) -> Result<Profiler, EngineError> {
        let failed = |what: &str, e: std::io::Error| {
            EngineError::Failed(format!("profile: {what} {}: {e}", parent.display()))
        };
        std::fs::create_dir_all(parent).map_err(|e| failed("creating", e))?;
        let dir = tempfile::Builder::new()
            .prefix(&format!("racehorse-{}-perf-", std::process::id()))
            .tempdir_in(parent)
            .map_err(|e| failed("a directory for perf's data in", e))?;
        let recording = Recording::start(&settings.perf, dir.path(), settings.freq_hz, settings.callgraph)
            .map_err(cell_failed)?;
        // Counters are extra: a perf stat that does not start leaves the rest of the profile.
        let mut warnings = Vec::new();
        let counting = match settings.counters {
            true => Counting::start(&settings.perf, dir.path())
                .map_err(|e| warnings.push(format!("no counters: {e}")))
                .ok(),
            false => None,
        };
        let state = State { recording: Some(recording), counting, error: None };
        let keep = settings.keep_dir.as_ref().map(|d| d.join(kept_name(settings.run_id, cell)));
        Ok(Profiler { state: Arc::new(Mutex::new(state)), keep, warnings, _dir: dir })
    }

    /// Hooks that switch sampling and counting on just before `inner`'s window start and off
    /// just after its window end, so that they cover the whole window.
    pub fn hooks(&self, inner: Box<dyn WindowHooks>) -> Box<dyn WindowHooks> {
        Box::new(Hooks { inner, state: self.state.clone() })
    }

    /// Stops perf and reads the profile of the window; an error loses only the profile.
    /// What was lost on the way without losing the profile (stacks, counters, the kept file)
    /// comes back as warnings.
    pub fn finish(self, settings: &ProfileSettings) -> Result<(Profile, Vec<String>), EngineError> {
        let (recording, counting, error) = {
            let mut s = lock(&self.state);
            (s.recording.take(), s.counting.take(), s.error.take())
        };
        let mut warnings = self.warnings;
        let counters = counting.map(Counting::finish).transpose().unwrap_or_else(|e| {
            warnings.push(format!("no counters: {e}"));
            None
        });
        let data = match (error, recording) {
            (Some(e), _) => Err(e),
            (None, None) => Err(PerfError::Lost),
            (None, Some(r)) => r.finish(),
        }
        .map_err(cell_failed)?;
        let data = match &self.keep {
            Some(to) => keep(&data, to).unwrap_or_else(|e| {
                warnings.push(e.to_string());
                data
            }),
            None => data,
        };
        let mut profile = report(&settings.perf, &data, settings.top).map_err(cell_failed)?;
        profile.callgraph = settings.callgraph.stored();
        profile.frequency_hz = settings.freq_hz;
        profile.counters = counters.unwrap_or_default();
        match fold(&settings.perf, &data) {
            Ok(folded) => (profile.stacks, profile.stacks_dropped_samples) = bounded(&folded),
            Err(e) => warnings.push(format!("no call stacks: {e}")),
        }
        Ok((profile, warnings))
    }
}

/// A perf failure during a cell fails the cell (exit 1 at the end of the run).
fn cell_failed(e: PerfError) -> EngineError {
    EngineError::Failed(e.to_string())
}

/// Moves the data file to `to` (copying across file systems); the path it is now at.
fn keep(data: &Path, to: &Path) -> Result<PathBuf, ProfileError> {
    if std::fs::rename(data, to).is_ok() {
        return Ok(to.to_path_buf());
    }
    std::fs::copy(data, to).map_err(|source| ProfileError::Keep { to: to.to_path_buf(), source })?;
    Ok(to.to_path_buf())
}

struct Hooks {
    inner: Box<dyn WindowHooks>,
    state: Arc<Mutex<State>>,
}

impl Hooks {
    fn switch(&self, on: bool) {
        let mut guard = lock(&self.state);
        let s = &mut *guard;
        let res = match (s.recording.as_mut(), s.counting.as_mut()) {
            (Some(r), c) if on => r.enable().and_then(|_| c.map_or(Ok(()), Counting::enable)),
            (Some(r), c) => c.map_or(Ok(()), Counting::disable).and_then(|_| r.disable()),
            (None, _) => Ok(()),
        };
        if let Err(e) = res {
            s.error.get_or_insert(e);
        }
    }
}

impl WindowHooks for Hooks {
    fn measure_started(&self) {
        self.switch(true);
        self.inner.measure_started();
    }
    fn measure_ended(&self) {
        self.inner.measure_ended();
        self.switch(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::EngineRef;
    use racehorse_core::{CellSpec, Params, Value};
    use std::time::Duration;

    #[test]
    fn kept_files_are_named_after_the_run_and_the_cell() {
        let mut params = Params::new();
        params.insert("cmd".into(), Value::Str("/tmp/x/hot 30 | tee /dev/null".into()));
        let spec = CellSpec { workload: "command".into(), params, variant: "fast".into(), rep: 2 };
        let engine = EngineRef(racehorse_engines::find("null").expect("null engine"));
        let cell = PlannedCell {
            index: 7,
            spec,
            engine,
            cpus: 1,
            cpu_list: None,
            runtime: Duration::from_secs(1),
            warmup: Duration::ZERO,
            variant: 0,
        };
        assert_eq!(
            kept_name(12, &cell),
            "run12-cell7-command_cmd=_tmp_x_hot_30_tee_dev_null_fast_2.perf.data"
        );
    }

    #[test]
    fn a_keep_directory_must_be_writable() {
        let dir = tempfile::tempdir().unwrap();
        let made = writable_dir(&dir.path().join("a/b")).unwrap();
        assert!(made.is_dir() && made.is_absolute());
        let file = dir.path().join("file");
        std::fs::write(&file, b"").unwrap();
        let e = writable_dir(&file.join("sub")).unwrap_err().to_string();
        assert!(e.contains("cannot create it") && e.contains("--keep-profile DIR"), "{e}");
        // Not even root may create files in /proc.
        let e = writable_dir(Path::new("/proc")).unwrap_err().to_string();
        assert!(e.contains("--keep-profile /proc: cannot write there"), "{e}");
    }

    #[test]
    fn bad_settings_fail_before_perf_is_looked_for() {
        let e = prepare("callgraph=stack", None).unwrap_err();
        assert!(matches!(e, ProfileError::Settings(_)), "{e:?}");
        assert!(e.to_string().starts_with("--profile: unknown call-graph mode 'stack'"), "{e}");
    }

    #[test]
    fn keeping_moves_the_file_or_says_why_not() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("perf.data");
        std::fs::write(&data, b"x").unwrap();
        let to = dir.path().join("kept.perf.data");
        assert_eq!(keep(&data, &to).unwrap(), to);
        assert!(to.exists() && !data.exists());
        let e = keep(&to, &dir.path().join("missing/x")).unwrap_err().to_string();
        assert!(e.contains("--keep-profile: cannot write"), "{e}");
    }
}
