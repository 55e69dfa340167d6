//! Offline evaluation: `record` writes samples as JSON lines; `replay` runs the rules over
//! such a trace with a simulated CPU count and prints each decision (no root, no changes).

use crate::daemon::Exit;
use crate::decide::{cpu_step, CpuLimits, CpuStep};
use crate::sample::{machine_counts, read_sample, Needs, Sample};
use crate::values::History;
use racehorse_machine::SysRoot;
use racehorse_rules::{Config, Name, Values};
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Writes one sample every `interval` to `out` until `count` samples or `stop`.
pub fn record(
    root: &SysRoot,
    out: &mut dyn Write,
    interval: Duration,
    count: Option<u64>,
    stop: &AtomicBool,
) -> Result<u64, String> {
    let mut n = 0;
    while count.is_none_or(|c| n < c) && !stop.load(Ordering::SeqCst) {
        let t0 = Instant::now();
        let (online, present) = machine_counts(root).map_err(|e| e.to_string())?;
        let s = read_sample(root, Needs::ALL, online, present).map_err(|e| e.to_string())?;
        let line = serde_json::to_string(&s).map_err(|e| e.to_string())?;
        writeln!(out, "{line}").and_then(|_| out.flush()).map_err(|e| format!("writing the trace: {e}"))?;
        n += 1;
        while t0.elapsed() < interval && !stop.load(Ordering::SeqCst) && count.is_none_or(|c| n < c) {
            std::thread::sleep(interval.saturating_sub(t0.elapsed()).min(Duration::from_millis(100)));
        }
    }
    Ok(n)
}

/// Reads a trace: one JSON sample per line (blank lines skipped); errors name the line.
pub fn read_trace(path: &Path) -> Result<Vec<Sample>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let s: Sample =
            serde_json::from_str(&line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        out.push(s);
    }
    if out.is_empty() {
        return Err(format!(
            "{}: the trace has no samples; record one with `racehorse plugd record`",
            path.display()
        ));
    }
    Ok(out)
}

/// What a replay did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReplaySummary {
    pub samples: usize,
    pub plugs: usize,
    pub unplugs: usize,
    pub skipped: usize,
    /// Mean simulated CPU count over the decided samples.
    pub mean_cpus: f64,
}

fn scalar(h: &History, n: &str) -> f64 {
    h.value(&Name::Scalar(n.into()), 0).unwrap_or(f64::NAN)
}

/// Evaluates the config's CPU rules over `trace`, starting from the first sample's CPU count,
/// and writes one line per sample to `out`.
pub fn replay(cfg: &Config, trace: &[Sample], out: &mut dyn Write) -> Result<ReplaySummary, Exit> {
    let (Some(hp), Some(hu)) = (&cfg.hotplug, &cfg.hotunplug) else {
        return Err(Exit {
            code: 2,
            msg: "replay needs CPU control: CPU_MIN, CPU_MAX, HOTPLUG and HOTUNPLUG".into(),
        });
    };
    let present = trace[0].present.max(trace[0].onumcpus).max(1);
    let min = cfg.cpu_min.unwrap_or(1).min(present);
    let max = match cfg.cpu_max.unwrap_or(0) {
        0 => present,
        m => m.min(present),
    };
    let mut cpus = trace[0].onumcpus.clamp(min, max.max(min));
    let mut h = History::new(cfg.history_depth());
    let mut sum = ReplaySummary { samples: trace.len(), ..Default::default() };
    let mut decided = 0.0;
    let w = |out: &mut dyn Write, text: String| {
        writeln!(out, "{text}").map_err(|e| Exit { code: 1, msg: e.to_string() })
    };
    w(out, format!("{:>14} {:>5} {:>8} {:>8} {:>7}  decision", "time", "cpus", "loadavg", "idle", "user"))?;
    for s in trace {
        h.push(s.clone());
        h.onumcpus_override = Some(cpus);
        if !h.ready() {
            w(
                out,
                format!("{:>14.1} {cpus:>5} {:>8} {:>8} {:>7}  collecting history", s.time, "-", "-", "-"),
            )?;
            continue;
        }
        let cols = format!(
            "{:>14.1} {cpus:>5} {:>8.2} {:>8.1} {:>7.1}",
            s.time,
            scalar(&h, "loadavg"),
            scalar(&h, "idle"),
            scalar(&h, "user")
        );
        let what = match cpu_step(&hp.expr, &hu.expr, &h, cpus, CpuLimits { min, max }) {
            Ok(CpuStep::Plug) => {
                cpus += 1;
                sum.plugs += 1;
                format!("plug → {cpus}")
            }
            Ok(CpuStep::Unplug) => {
                cpus -= 1;
                sum.unplugs += 1;
                format!("unplug → {cpus}")
            }
            Ok(CpuStep::Hold) => "hold".to_string(),
            Err(e) => {
                sum.skipped += 1;
                format!("skip ({e})")
            }
        };
        decided += 1.0;
        sum.mean_cpus += f64::from(cpus);
        w(out, format!("{cols}  {what}"))?;
    }
    if decided > 0.0 {
        sum.mean_cpus /= decided;
    }
    Ok(sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use racehorse_rules::parse_config;

    fn sample(t: f64, load: f64, busy: u64, idle: u64) -> Sample {
        Sample {
            time: t,
            loadavg: load,
            runnable: 1.0,
            onumcpus: 2,
            present: 4,
            ticks: [busy, 0, 0, idle, 0, 0, 0, 0, 0, 0],
            ..Default::default()
        }
    }

    #[test]
    fn the_seed_rules_plug_under_load_and_unplug_when_idle() {
        let cfg = parse_config(
            "UPDATE=\"1\"\nCPU_MIN=\"1\"\nCPU_MAX=\"0\"\nHOTPLUG=\"(loadavg > onumcpus + 0.75) & (idle < 10.0)\"\n\
             HOTUNPLUG=\"(loadavg < onumcpus - 0.25) | (idle > 50)\"\n",
        )
        .unwrap();
        // Busy: load 5, no idle ticks → plug each interval up to present (4); then idle → unplug.
        let mut trace = Vec::new();
        let (mut busy, mut idle) = (0, 0);
        for i in 0..5 {
            busy += 200;
            trace.push(sample(f64::from(i), 5.0, busy, idle));
        }
        for i in 5..10 {
            idle += 400;
            trace.push(sample(f64::from(i), 0.1, busy, idle));
        }
        let mut out = Vec::new();
        let s = replay(&cfg, &trace, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!((s.plugs, s.unplugs, s.skipped), (2, 3, 0), "{text}");
        assert!(text.contains("plug → 4") && text.contains("unplug → 1"), "{text}");
        assert!(text.lines().nth(1).unwrap().contains("collecting history"));
    }

    #[test]
    fn traces_round_trip_and_bad_lines_are_named() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.jsonl");
        let mut buf = Vec::new();
        let stop = AtomicBool::new(false);
        let n = record(&SysRoot::host(), &mut buf, Duration::from_millis(10), Some(2), &stop).unwrap();
        assert_eq!(n, 2);
        std::fs::write(&p, &buf).unwrap();
        let t = read_trace(&p).unwrap();
        assert!(t.len() == 2 && t[0].vmstat.contains_key("pgpgin"));
        std::fs::write(&p, "\n{\"time\": 1}\nnot json\n").unwrap();
        let e = read_trace(&p).unwrap_err();
        assert!(e.contains(":2:"), "{e}");
    }
}
