//! How `--profile` records call chains (`callgraph=fp|dwarf|lbr|none`) and at what rate
//! (`freq=HZ`): the settings' syntax, the `perf record` arguments of each mode, and a probe
//! that tells before the first cell whether this machine's perf can record them.

use super::error::ProfileError;
use super::output::{output, tail};
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

/// The default sampling frequency: 999 Hz per CPU, off the timer tick.
pub const DEFAULT_FREQ_HZ: u32 = 999;
/// The highest `freq=` accepted (the kernel's own limit, perf_event_max_sample_rate, is
/// usually lower and perf then says so).
pub const MAX_FREQ_HZ: u32 = 20_000;
/// How long the probe recording may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// How call chains are recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CallGraph {
    /// Frame pointers (`--call-graph fp`): cheap; code built without them (or leaf functions
    /// compiled without a frame) loses callers.
    #[default]
    Fp,
    /// DWARF unwinding of a copy of each sample's user stack (`--call-graph dwarf`): works
    /// without frame pointers, but costs far more (8 KiB per sample) and is slow to fold.
    Dwarf,
    /// The CPU's last-branch records (`--call-graph lbr`): Intel hardware only, never in most
    /// VMs; samples the `cycles` event.
    Lbr,
    /// No call chains: each stack is the process and the sampled function only.
    None,
}

impl CallGraph {
    /// The modes by name, as `callgraph=` takes them.
    pub const NAMES: [&'static str; 4] = ["fp", "dwarf", "lbr", "none"];

    /// The mode named `name` (one of [`CallGraph::NAMES`]). A leaf parser: [`parse_spec`]
    /// wraps its message into a [`ProfileError`].
    pub fn parse(name: &str) -> Result<CallGraph, String> {
        match name {
            "fp" => Ok(CallGraph::Fp),
            "dwarf" => Ok(CallGraph::Dwarf),
            "lbr" => Ok(CallGraph::Lbr),
            "none" => Ok(CallGraph::None),
            _ => Err(format!(
                "unknown call-graph mode '{name}': use one of {} (fp, frame pointers, is the default)",
                CallGraph::NAMES.join(", ")
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            CallGraph::Fp => "fp",
            CallGraph::Dwarf => "dwarf",
            CallGraph::Lbr => "lbr",
            CallGraph::None => "none",
        }
    }

    /// What a profile stores as its `callgraph`: the mode's name, None for `none`.
    pub fn stored(self) -> Option<String> {
        (self != CallGraph::None).then(|| self.name().to_string())
    }

    /// The sampling event: the `cpu-clock` timer (no hardware counters needed), except for
    /// LBR, which only hardware events carry.
    pub fn event(self) -> &'static str {
        match self {
            CallGraph::Lbr => "cycles",
            _ => "cpu-clock",
        }
    }

    /// The `perf record` arguments that ask for this mode's call chains.
    pub fn record_args(self) -> Vec<&'static str> {
        match self {
            CallGraph::None => vec![],
            mode => vec!["--call-graph", mode.name()],
        }
    }
}

/// What `--profile=SETTINGS` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProfileSpec {
    pub callgraph: CallGraph,
    pub freq_hz: u32,
}

impl Default for ProfileSpec {
    fn default() -> Self {
        ProfileSpec { callgraph: CallGraph::default(), freq_hz: DEFAULT_FREQ_HZ }
    }
}

/// Parses `--profile`'s settings: empty for the defaults, else comma-separated
/// `callgraph=fp|dwarf|lbr|none` and `freq=HZ`, e.g. `callgraph=dwarf,freq=499`.
pub fn parse_spec(text: &str) -> Result<ProfileSpec, ProfileError> {
    let mut spec = ProfileSpec::default();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (key, value) = item.split_once('=').ok_or_else(|| {
            ProfileError::Settings(format!(
                "'{item}' is not KEY=VALUE: use callgraph=fp|dwarf|lbr|none and/or freq=HZ"
            ))
        })?;
        match key.trim() {
            "callgraph" => spec.callgraph = CallGraph::parse(value.trim()).map_err(ProfileError::Settings)?,
            "freq" => {
                spec.freq_hz =
                    value.trim().parse().ok().filter(|hz| (1..=MAX_FREQ_HZ).contains(hz)).ok_or_else(
                        || {
                            ProfileError::Settings(format!(
                                "freq={value}: use a whole number of Hz from 1 to {MAX_FREQ_HZ}"
                            ))
                        },
                    )?;
            }
            other => {
                return Err(ProfileError::Settings(format!(
                    "unknown setting '{other}': use callgraph=fp|dwarf|lbr|none and/or freq=HZ"
                )))
            }
        }
    }
    Ok(spec)
}

/// Whether a word following `--profile` on the command line is its settings (rather than
/// the next argument, such as a preset name).
pub fn is_spec_word(word: &str) -> bool {
    word.starts_with("callgraph=") || word.starts_with("freq=")
}

/// Records a moment of `true` with `mode`'s call chains into `dir`, so that a perf or a
/// machine that cannot record them is found before the first cell.
pub fn probe(perf: &Path, mode: CallGraph, dir: &Path) -> Result<(), ProfileError> {
    let data = dir.join("probe.data");
    let mut args: Vec<OsString> =
        ["record", "-q", "-e", mode.event(), "-F", "99"].map(OsString::from).to_vec();
    args.extend(mode.record_args().into_iter().map(OsString::from));
    args.extend(["-N", "--no-bpf-event", "-o"].map(OsString::from));
    args.push(data.clone().into());
    args.extend(["--", "true"].map(OsString::from));
    let out = output(perf, &args, PROBE_TIMEOUT).map_err(ProfileError::Probe)?;
    let _ = std::fs::remove_file(&data);
    if out.status.success() {
        return Ok(());
    }
    let advice = match mode {
        CallGraph::Lbr => {
            "LBR needs an Intel CPU's last-branch records, which most VMs do not pass on; \
                           use callgraph=fp (frame pointers) or callgraph=dwarf"
        }
        CallGraph::Dwarf => "perf may lack DWARF unwinding support (libdw/libunwind); use callgraph=fp",
        _ => "check that perf works with `perf record -g -- true`",
    };
    Err(ProfileError::CallChains {
        mode: mode.name(),
        status: out.status,
        said: tail(&out.stderr, 4),
        advice,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_with_defaults() {
        assert_eq!(parse_spec("").unwrap(), ProfileSpec { callgraph: CallGraph::Fp, freq_hz: 999 });
        let s = parse_spec("callgraph=dwarf, freq=499").unwrap();
        assert_eq!(s, ProfileSpec { callgraph: CallGraph::Dwarf, freq_hz: 499 });
        assert_eq!(parse_spec("callgraph=none").unwrap().callgraph, CallGraph::None);
        assert_eq!(parse_spec("freq=99,callgraph=lbr").unwrap().callgraph, CallGraph::Lbr);
    }

    #[test]
    fn bad_settings_say_what_to_use() {
        let e = parse_spec("callgraph=frames").unwrap_err().to_string();
        assert!(e.contains("unknown call-graph mode 'frames'") && e.contains("fp, dwarf, lbr, none"), "{e}");
        let e = |text: &str| parse_spec(text).unwrap_err().to_string();
        assert!(e("freq=0").contains("from 1 to"));
        assert!(parse_spec("freq=fast").is_err());
        assert!(e("depth=3").starts_with("--profile: unknown setting 'depth'"));
        assert!(e("dwarf").contains("not KEY=VALUE"));
    }

    #[test]
    fn modes_map_to_perf_arguments() {
        for name in CallGraph::NAMES {
            assert_eq!(CallGraph::parse(name).unwrap().name(), name);
        }
        assert_eq!(CallGraph::Fp.record_args(), ["--call-graph", "fp"]);
        assert!(CallGraph::None.record_args().is_empty());
        assert_eq!(CallGraph::None.stored(), None);
        assert_eq!(CallGraph::Dwarf.stored().as_deref(), Some("dwarf"));
        assert_eq!((CallGraph::Lbr.event(), CallGraph::Fp.event()), ("cycles", "cpu-clock"));
    }

    #[test]
    fn only_settings_words_are_taken_after_the_flag() {
        assert!(is_spec_word("callgraph=dwarf") && is_spec_word("freq=99"));
        assert!(!is_spec_word("quick") && !is_spec_word("smallread") && !is_spec_word("--label"));
    }

    #[test]
    fn a_probe_with_a_failing_perf_explains() {
        let dir = tempfile::tempdir().unwrap();
        let e = probe(Path::new("/bin/false"), CallGraph::Lbr, dir.path()).unwrap_err().to_string();
        assert!(e.contains("callgraph=lbr") && e.contains("use callgraph=fp"), "{e}");
    }
}
