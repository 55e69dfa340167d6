//! Event sinks: a progress bar for people, a JSON-lines stream for programs. The store
//! writer lives in the binary (it owns the database handle).

use crate::duration::human;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use racehorse_core::event::CellPhase;
use racehorse_core::Event;
use std::io::Write;
use std::time::Duration;

/// Receives every event of a run, in order. An error aborts the run (e.g. the store is full).
pub trait Sink {
    fn event(&mut self, e: &Event) -> Result<(), String>;
}

/// The indicatif progress bar: plan position, current cell, phase and ETA. Hidden when
/// stderr is not a terminal or when quiet.
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
    fn event(&mut self, e: &Event) -> Result<(), String> {
        match e {
            Event::Warning { message } => self.bar.println(format!("warning: {message}")),
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
                    CellPhase::Measure => "measuring",
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

/// One JSON object per event on a writer (stdout under `--format json`).
pub struct JsonLinesSink<W: Write> {
    out: W,
}

impl<W: Write> JsonLinesSink<W> {
    pub fn new(out: W) -> Self {
        JsonLinesSink { out }
    }
}

impl<W: Write> Sink for JsonLinesSink<W> {
    fn event(&mut self, e: &Event) -> Result<(), String> {
        let line = serde_json::to_string(e).map_err(|err| err.to_string())?;
        writeln!(self.out, "{line}").and_then(|()| self.out.flush()).map_err(|err| err.to_string())
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
}
