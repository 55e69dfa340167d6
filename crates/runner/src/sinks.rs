//! Event sinks: a progress bar (with the run's warnings and notices) for people, a
//! JSON-lines stream for programs. The store writer is in [`crate::lifecycle`].

use crate::duration::human;
use crate::error::RunError;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use racehorse_core::event::CellPhase;
use racehorse_core::Event;
use std::io::Write;
use std::time::Duration;

/// Receives every event of a run, in order. An error on a run or cell event aborts the run
/// (e.g. the store is full); one on a warning, notice or phase is ignored.
pub trait Sink {
    fn event(&mut self, e: &Event) -> Result<(), RunError>;

    /// A warning or notice from before the run is recorded (waiting for the machine lock,
    /// the exclusivity check): `run_started` has not come yet. Shown at once by default.
    fn before_run(&mut self, e: &Event) -> Result<(), RunError> {
        self.event(e)
    }
}

/// The indicatif progress bar: plan position, current cell, phase and ETA. The bar is hidden
/// when stderr is not a terminal or when quiet; warnings and notices go to stderr always.
pub struct ProgressSink {
    bar: ProgressBar,
    /// ETA of the remaining plan per cell index, computed from the plan.
    etas: Vec<Duration>,
}

impl ProgressSink {
    pub fn new(quiet: bool, etas: Vec<Duration>) -> Self {
        let bar = ProgressBar::with_draw_target(
            Some(etas.len() as u64),
            if quiet { ProgressDrawTarget::hidden() } else { ProgressDrawTarget::stderr() },
        );
        let style = ProgressStyle::with_template("{spinner} [{bar:30}] {pos}/{len} {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        bar.set_style(style);
        bar.enable_steady_tick(Duration::from_millis(250));
        ProgressSink { bar, etas }
    }

    fn eta(&self, index: usize) -> String {
        self.etas.get(index).map(|d| human(*d)).unwrap_or_default()
    }
}

impl Sink for ProgressSink {
    fn event(&mut self, e: &Event) -> Result<(), RunError> {
        match e {
            Event::Warning { message } => self.bar.suspend(|| eprintln!("warning: {message}")),
            Event::Notice { message } => self.bar.suspend(|| eprintln!("{message}")),
            Event::CellStarted { index, spec, cells } => {
                // Adaptive repetitions add cells as the run goes.
                if (*cells as u64) > self.bar.length().unwrap_or(0) {
                    self.bar.set_length(*cells as u64);
                }
                self.bar.set_message(format!("{}  (ETA {})", spec.label(), self.eta(*index)));
            }
            Event::CellPhase { index, phase } => {
                let word = match phase {
                    CellPhase::Prepare => "preparing",
                    CellPhase::Warmup => "warmup + measure",
                    CellPhase::Cleanup => "cleanup",
                };
                let msg = self.bar.message();
                let base = msg.split(" — ").next().unwrap_or("").to_string();
                self.bar.set_message(format!("{base} — {word}"));
                let _ = index;
            }
            Event::CellFinished { result, .. } => {
                if let Some(err) = &result.error {
                    self.bar.println(format!(
                        "cell {} {}: {err}",
                        result.spec.label(),
                        result.status.as_str()
                    ));
                }
                self.bar.inc(1);
            }
            Event::RunFinished { .. } => self.bar.finish_and_clear(),
            Event::RunStarted { .. } => {}
        }
        Ok(())
    }
}

/// One JSON object per event on a writer (stdout under `--format json`). A run's stream
/// starts with `run_started`: warnings and notices from before the run was recorded are held
/// and follow it; a run that never starts writes none.
pub struct JsonLinesSink<W: Write> {
    out: W,
    /// Warnings and notices from before the run was recorded, until `run_started`.
    held: Vec<Event>,
}

impl<W: Write> JsonLinesSink<W> {
    pub fn new(out: W) -> Self {
        JsonLinesSink { out, held: Vec::new() }
    }

    fn write(&mut self, e: &Event) -> Result<(), RunError> {
        serde_json::to_writer(&mut self.out, e).map_err(std::io::Error::from)?;
        writeln!(self.out)?;
        Ok(())
    }
}

impl<W: Write> Sink for JsonLinesSink<W> {
    fn event(&mut self, e: &Event) -> Result<(), RunError> {
        self.write(e)?;
        if matches!(e, Event::RunStarted { .. }) {
            for held in std::mem::take(&mut self.held) {
                self.write(&held)?;
            }
        }
        Ok(self.out.flush()?)
    }

    fn before_run(&mut self, e: &Event) -> Result<(), RunError> {
        self.held.push(e.clone());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_are_tagged_objects() {
        let mut buf = Vec::new();
        {
            let mut s = JsonLinesSink::new(&mut buf);
            s.event(&Event::Warning { message: "load is high".into() }).unwrap();
        }
        let v: serde_json::Value = serde_json::from_slice(&buf).unwrap();
        assert_eq!(v["event"], "warning");
        assert_eq!(v["message"], "load is high");
    }

    /// Issue 22: warnings found before the run is recorded follow `run_started`, which stays
    /// the stream's first event.
    #[test]
    fn early_warnings_follow_run_started() {
        let mut buf = Vec::new();
        {
            let mut s = JsonLinesSink::new(&mut buf);
            s.before_run(&Event::Notice { message: "waiting for the machine: x".into() }).unwrap();
            s.before_run(&Event::Warning { message: "load is high".into() }).unwrap();
            let start =
                Event::RunStarted { run_id: 1, label: "t".into(), cells: 0, eta: racehorse_core::Nanos(0) };
            s.event(&start).unwrap();
            s.event(&Event::Warning { message: "no profile".into() }).unwrap();
        }
        let kinds: Vec<String> = String::from_utf8(buf)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["event"].to_string())
            .collect();
        assert_eq!(kinds, ["\"run_started\"", "\"notice\"", "\"warning\"", "\"warning\""]);
    }
}
