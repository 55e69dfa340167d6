//! `run --profile` in the measurement loop: a perf recording per cell, started before the
//! warm-up with sampling off, switched on and off at the window's edges by window hooks, and
//! turned into the cell's [`Profile`] (top images and symbols) after the cell.

use crate::profile::{report, Recording};
use racehorse_core::Profile;
use racehorse_engines::{EngineError, WindowHooks};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// How to profile: the perf binary, the sampling rate and how many images/symbols to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileSettings {
    pub perf: PathBuf,
    pub freq_hz: u32,
    pub top: usize,
}

impl ProfileSettings {
    /// The defaults with `perf`: 999 Hz per CPU (off the timer tick), top 50 of each kind.
    pub fn with_perf(perf: PathBuf) -> ProfileSettings {
        ProfileSettings { perf, freq_hz: 999, top: 50 }
    }
}

#[derive(Default)]
struct State {
    recording: Option<Recording>,
    /// The first enable/disable failure (hooks cannot return errors).
    error: Option<String>,
}

/// One cell's recording, shared with its hooks.
pub(crate) struct Profiler {
    state: Arc<Mutex<State>>,
    _dir: tempfile::TempDir,
}

fn lock(s: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    s.lock().unwrap_or_else(|p| p.into_inner())
}

impl Profiler {
    /// Starts perf (sampling off) with its files in a fresh directory under `parent`; an
    /// error fails the cell.
    pub fn start(settings: &ProfileSettings, parent: &Path) -> Result<Profiler, EngineError> {
        let failed = |what: &str, e: std::io::Error| {
            EngineError::Failed(format!("profile: {what} {}: {e}", parent.display()))
        };
        std::fs::create_dir_all(parent).map_err(|e| failed("creating", e))?;
        let dir = tempfile::Builder::new()
            .prefix(&format!("racehorse-{}-perf-", std::process::id()))
            .tempdir_in(parent)
            .map_err(|e| failed("a directory for perf's data in", e))?;
        let recording =
            Recording::start(&settings.perf, dir.path(), settings.freq_hz).map_err(EngineError::Failed)?;
        let state = State { recording: Some(recording), error: None };
        Ok(Profiler { state: Arc::new(Mutex::new(state)), _dir: dir })
    }

    /// Hooks that switch sampling on just before `inner`'s window start and off just after
    /// its window end, so the samples cover the whole window.
    pub fn hooks(&self, inner: Box<dyn WindowHooks>) -> Box<dyn WindowHooks> {
        Box::new(Hooks { inner, state: self.state.clone() })
    }

    /// Stops perf and reads the profile of the window; an error loses only the profile.
    pub fn finish(self, settings: &ProfileSettings) -> Result<Profile, EngineError> {
        let (recording, error) = {
            let mut s = lock(&self.state);
            (s.recording.take(), s.error.take())
        };
        let profile = match (error, recording) {
            (Some(e), _) => Err(e),
            (None, None) => Err("profile: the recording was lost".to_string()),
            (None, Some(r)) => r.finish().and_then(|data| report(&settings.perf, &data, settings.top)),
        };
        profile.map_err(EngineError::Failed)
    }
}

struct Hooks {
    inner: Box<dyn WindowHooks>,
    state: Arc<Mutex<State>>,
}

impl Hooks {
    fn switch(&self, on: bool) {
        let mut s = lock(&self.state);
        let res = match s.recording.as_mut() {
            Some(r) if on => r.enable(),
            Some(r) => r.disable(),
            None => Ok(()),
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
