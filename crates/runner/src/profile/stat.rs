//! Counters over the measured window: a system-wide `perf stat -x,` switched on and off
//! through its control fifo like the recording, with hardware events where the PMU has them
//! (`<not supported>` in most VMs: stored as no count) and software events everywhere.

use super::control::{control_arg, Controlled, Tool};
use super::error::PerfError;
use super::output::{output, tail};
use racehorse_core::profile::Counter;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Hardware events: counted where the PMU allows.
pub const HARDWARE: [&str; 4] = ["cycles", "instructions", "cache-misses", "branch-misses"];
/// Software events: counted on every machine.
pub const SOFTWARE: [&str; 3] = ["context-switches", "cpu-migrations", "page-faults"];
/// perf stat's CSV output inside the cell's directory.
pub const STAT_FILE: &str = "perf.stat.csv";
const TOOL: Tool = Tool { name: "perf stat", ctl: "stat.ctl", ack: "stat.ack", log: "stat.log" };
/// How long the probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// Every event counted, hardware first.
pub fn events() -> Vec<&'static str> {
    HARDWARE.iter().chain(SOFTWARE.iter()).copied().collect()
}

/// A system-wide count started with its events disabled. Dropping it kills and reaps perf.
pub struct Counting {
    perf: Controlled,
    out: PathBuf,
}

impl Counting {
    /// Starts `perf stat -a -x, -e EVENTS -D -1 --control … -o <dir>/perf.stat.csv` and waits
    /// until it answers; counting stays off until [`Counting::enable`].
    pub fn start(perf: &Path, dir: &Path) -> Result<Counting, PerfError> {
        let out = dir.join(STAT_FILE);
        let perf = Controlled::start(perf, dir, TOOL, stat_args(dir))?;
        Ok(Counting { perf, out })
    }

    pub fn enable(&mut self) -> Result<(), PerfError> {
        self.perf.enable()
    }

    pub fn disable(&mut self) -> Result<(), PerfError> {
        self.perf.disable()
    }

    /// Stops perf and reads its counts, one per event, hardware first (as `events()` lists them).
    pub fn finish(mut self) -> Result<Vec<Counter>, PerfError> {
        self.perf.stop()?;
        let text = std::fs::read_to_string(&self.out)
            .map_err(|e| PerfError::io(format!("read perf stat's output {}", self.out.display()), e))?;
        Ok(parse_csv(&text, &events()))
    }
}

/// The arguments of `perf stat` counting in `dir`.
pub fn stat_args(dir: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = ["stat", "-a", "-x,", "-e"].map(OsString::from).to_vec();
    args.push(events().join(",").into());
    args.extend(["-D", "-1", "--control"].map(OsString::from));
    args.push(control_arg(dir, &TOOL));
    args.push("-o".into());
    args.push(dir.join(STAT_FILE).into());
    args
}

/// Reads `perf stat -x,` output (`VALUE,UNIT,EVENT,RUN_TIME,PCT,…`) into one counter per
/// wanted event, in that order: `<not supported>`, `<not counted>` and missing events have no
/// count; an event split over several PMUs (`cpu_core/cycles/`, `cpu_atom/cycles/`) is summed.
pub fn parse_csv(text: &str, wanted: &[&str]) -> Vec<Counter> {
    let mut counts: Vec<Option<f64>> = vec![None; wanted.len()];
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split(',').collect();
        let (Some(value), Some(event)) = (fields.first(), fields.get(2)) else { continue };
        let Some(i) = wanted.iter().position(|w| base_event(event.trim()) == *w) else { continue };
        if let Some(v) = value.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0) {
            counts[i] = Some(counts[i].unwrap_or(0.0) + v);
        }
    }
    wanted.iter().zip(counts).map(|(e, count)| Counter { event: e.to_string(), count }).collect()
}

/// `cycles` from `cpu_core/cycles/` or `cycles:u`; other names unchanged.
fn base_event(name: &str) -> &str {
    let name = match name.strip_suffix('/').and_then(|n| n.split_once('/')) {
        Some((_, inner)) => inner,
        None => name,
    };
    name.split(':').next().unwrap_or(name)
}

/// Counts every event over a moment of `true`: which of them this machine supports (the
/// ones without a count do not).
pub fn probe(perf: &Path) -> Result<Vec<Counter>, PerfError> {
    let mut args: Vec<OsString> = ["stat", "-x,", "-e"].map(OsString::from).to_vec();
    args.push(events().join(",").into());
    args.extend(["--", "true"].map(OsString::from));
    let out = output(perf, &args, PROBE_TIMEOUT)?;
    if !out.status.success() {
        let what = format!("cannot count on this machine ({})", out.status);
        return Err(PerfError::perf("perf stat", what, format!(": {}", tail(&out.stderr, 4))));
    }
    Ok(parse_csv(&out.stderr, &events()))
}

/// The hardware events among `counters` that have no count, for the one line a run prints.
pub fn unsupported_hardware(counters: &[Counter]) -> Vec<&str> {
    counters
        .iter()
        .filter(|c| c.count.is_none() && HARDWARE.contains(&c.event.as_str()))
        .map(|c| c.event.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// perf 6.1 in a KVM guest: hardware events `<not supported>`; "Events disabled" is
    /// appended to the last line.
    const VM: &str = include_str!("../../tests/fixtures/perf/stat_vm.csv");
    /// perf 6.1 stopped before its events were ever enabled.
    const NEVER: &str = include_str!("../../tests/fixtures/perf/stat_never_enabled.csv");
    /// Written by hand in perf's layout (no machine here has a PMU): a hybrid CPU's cycles
    /// per core type, metrics after the percentage.
    const PMU: &str = "# started on Sun Nov 29 04:04:26 2026\n\n\
        1200000,,cpu_core/cycles/,2000000000,100.00,,\n\
        34000,,cpu_atom/cycles/,2000000000,100.00,,\n\
        2400000,,instructions,2000000000,100.00,2.00,insn per cycle\n\
        1234,,cache-misses,2000000000,100.00,,\n\
        99,,branch-misses,2000000000,100.00,,\n\
        7,,context-switches,2000100000,100.00,3.50,/sec\n\
        0,,cpu-migrations,2000100000,100.00,0.00,/sec\n\
        12,,page-faults,2000100000,100.00,6.00,/sec\n";

    fn count(cs: &[Counter], event: &str) -> Option<f64> {
        cs.iter().find(|c| c.event == event).expect(event).count
    }

    #[test]
    fn a_vm_counts_software_events_only() {
        let cs = parse_csv(VM, &events());
        assert_eq!(cs.len(), 7);
        assert_eq!(unsupported_hardware(&cs), HARDWARE);
        assert_eq!(count(&cs, "context-switches"), Some(95.0));
        assert_eq!(count(&cs, "cpu-migrations"), Some(3.0));
        assert_eq!(count(&cs, "page-faults"), Some(555.0), "despite the appended 'Events disabled'");
    }

    #[test]
    fn never_enabled_counts_nothing() {
        assert!(parse_csv(NEVER, &events()).iter().all(|c| c.count.is_none()));
    }

    #[test]
    fn hardware_counts_and_hybrid_pmus() {
        let cs = parse_csv(PMU, &events());
        assert_eq!(count(&cs, "cycles"), Some(1_234_000.0));
        assert_eq!(count(&cs, "instructions"), Some(2_400_000.0));
        assert_eq!(count(&cs, "cpu-migrations"), Some(0.0));
        assert!(unsupported_hardware(&cs).is_empty());
    }

    #[test]
    fn garbage_and_missing_events_give_no_count() {
        let cs = parse_csv("x\n,,\nnan,,cycles\n-3,,instructions\nEvents disabled\n", &events());
        assert!(cs.iter().all(|c| c.count.is_none()), "{cs:?}");
        assert_eq!(base_event("cycles:u"), "cycles");
        assert_eq!(base_event("page-faults"), "page-faults");
    }

    #[test]
    fn stat_command_line() {
        let args: Vec<String> =
            stat_args(Path::new("/w")).iter().map(|a| a.to_string_lossy().into()).collect();
        assert_eq!(
            args.join(" "),
            "stat -a -x, -e cycles,instructions,cache-misses,branch-misses,context-switches,cpu-migrations,page-faults \
             -D -1 --control fifo:/w/stat.ctl,/w/stat.ack -o /w/perf.stat.csv"
        );
    }

    #[test]
    fn a_failing_probe_explains() {
        let e = probe(Path::new("/bin/false")).unwrap_err().to_string();
        assert!(e.contains("perf stat cannot count"), "{e}");
    }
}
