//! Event sinks: a progress bar (with the run's warnings and notices) for people, a
//! JSON-lines stream for programs. The store writer is in [`crate::lifecycle`].

use crate::duration::human;
use crate::error::RunError;
use console::{measure_text_width, truncate_str};
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

/// The progress line's fixed parts: spinner, position, bar. `{prefix}` (the phase and the
/// ETA) comes after the message so that indicatif's wide message, the cell's label, is what
/// gives way on a narrow terminal.
const TEMPLATE: &str = "{spinner} {pos}/{len} [{bar:20}] {wide_msg} {prefix}";
/// Columns of the template without `{pos}/{len}`, `{wide_msg}` and `{prefix}`: the spinner
/// and its space, the bar in brackets and the spaces around the message.
const FIXED_COLUMNS: usize = 2 + 1 + 22 + 1 + 1;
/// The shortest label worth keeping the phase for; below it only the ETA stays on the right.
const MIN_LABEL_COLUMNS: usize = 16;

/// The message (the label, cut to fit) and the prefix (phase and ETA) of a line `width`
/// columns wide whose `{pos}/{len}` takes `position_columns`. The ETA is dropped last: the
/// phase goes first, then the label shrinks to nothing.
pub fn fit_line(
    width: usize,
    position_columns: usize,
    label: &str,
    phase: &str,
    eta: &str,
) -> (String, String) {
    let room = width.saturating_sub(FIXED_COLUMNS + position_columns);
    let eta_only = if eta.is_empty() { String::new() } else { format!("ETA {eta}") };
    let with_phase = match (phase.is_empty(), eta.is_empty()) {
        (true, _) => eta_only.clone(),
        (false, true) => phase.to_string(),
        (false, false) => format!("{phase}, ETA {eta}"),
    };
    let right =
        if measure_text_width(&with_phase) + MIN_LABEL_COLUMNS <= room { with_phase } else { eta_only };
    let label_room = room.saturating_sub(measure_text_width(&right));
    let label =
        if label_room < 2 { String::new() } else { truncate_str(label, label_room, "…").into_owned() };
    (label, right)
}

/// The indicatif progress bar: plan position, current cell, phase and ETA, fitted to the
/// terminal's width ([`fit_line`]). The bar is hidden when stderr is not a terminal or when
/// quiet; warnings and notices go to stderr always, and verbose adds a line per cell.
pub struct ProgressSink {
    bar: ProgressBar,
    /// ETA of the remaining plan per cell index, computed from the plan.
    etas: Vec<Duration>,
    /// A line per finished cell (`-v`).
    verbose: bool,
    /// The terminal's width now (the bar's own terminal's in tests).
    width: Box<dyn Fn() -> usize + Send>,
    /// The current cell's label, phase word and ETA, fitted anew at every change.
    label: String,
    phase: &'static str,
    eta: String,
}

impl ProgressSink {
    pub fn new(quiet: bool, etas: Vec<Duration>) -> Self {
        let target = if quiet { ProgressDrawTarget::hidden() } else { ProgressDrawTarget::stderr() };
        let width = Box::new(|| usize::from(console::Term::stderr().size().1));
        let sink = Self::with_target(target, width, etas);
        sink.bar.enable_steady_tick(Duration::from_millis(250));
        sink
    }

    /// A sink drawing on `target`, whose width `width` tells (no steady tick: it draws on
    /// every event).
    pub fn with_target(
        target: ProgressDrawTarget,
        width: Box<dyn Fn() -> usize + Send>,
        etas: Vec<Duration>,
    ) -> Self {
        let bar = ProgressBar::with_draw_target(Some(etas.len() as u64), target);
        let style = ProgressStyle::with_template(TEMPLATE)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        bar.set_style(style);
        ProgressSink { bar, etas, verbose: false, width, label: String::new(), phase: "", eta: String::new() }
    }

    /// Also print a line per finished cell: its status and throughput (or its error).
    pub fn verbose(mut self, on: bool) -> Self {
        self.verbose = on;
        self
    }

    fn eta(&self, index: usize) -> String {
        self.etas.get(index).map(|d| human(*d)).unwrap_or_default()
    }

    /// Sets the message and prefix from the label, phase and ETA for the width now.
    fn redraw(&self) {
        let position = format!("{}/{}", self.bar.position(), self.bar.length().unwrap_or(0));
        let (msg, prefix) = fit_line((self.width)(), position.len(), &self.label, self.phase, &self.eta);
        // Each setter draws: change first the part that shrinks, so that no intermediate
        // line is wider than the terminal.
        if measure_text_width(&prefix) > measure_text_width(&self.bar.prefix()) {
            self.bar.set_message(msg);
            self.bar.set_prefix(prefix);
        } else {
            self.bar.set_prefix(prefix);
            self.bar.set_message(msg);
        }
    }

    fn finished(&self, result: &racehorse_core::CellResult) {
        let label = result.spec.label();
        let status = result.status.as_str();
        if self.verbose {
            let line = match (&result.error, result.throughput_resolved()) {
                (Some(err), _) => format!("cell {label}: {status}: {err}"),
                (None, Some(t)) => format!("cell {label}: {status}, {t:.4e} {}/s", result.unit),
                (None, None) => format!("cell {label}: {status}, throughput below resolution"),
            };
            self.bar.suspend(|| eprintln!("{line}"));
        } else if let Some(err) = &result.error {
            // Not `println`: a hidden bar (`-q`, stderr not a terminal) prints nothing with it,
            // and why a cell failed is a result, not progress (issue 47, case 8).
            self.bar.suspend(|| eprintln!("cell {label} {status}: {err}"));
        }
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
                (self.label, self.phase, self.eta) = (spec.label(), "", self.eta(*index));
                self.redraw();
            }
            Event::CellPhase { phase, .. } => {
                self.phase = match phase {
                    CellPhase::Prepare => "preparing",
                    CellPhase::Warmup => "warmup + measure",
                    CellPhase::Cleanup => "cleanup",
                };
                self.redraw();
            }
            Event::CellFinished { result, .. } => {
                self.finished(result);
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
    use std::sync::{Arc, Mutex};

    /// A terminal of a fixed width that keeps what is written to it.
    #[derive(Debug, Clone)]
    struct Screen {
        width: u16,
        written: Arc<Mutex<Vec<String>>>,
    }

    impl indicatif::TermLike for Screen {
        fn width(&self) -> u16 {
            self.width
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.write_str(s)
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.written.lock().unwrap().push(s.to_string());
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The last progress line drawn on a `width`-column terminal after a cell with a long
    /// label started and reached its measured window, with 1h05m of the plan left; every
    /// line drawn on the way fits too.
    fn drawn_line(width: u16, workload: &str, variant: &str) -> String {
        let screen = Screen { width, written: Arc::new(Mutex::new(Vec::new())) };
        let target = ProgressDrawTarget::term_like(Box::new(screen.clone()));
        let etas = vec![Duration::from_secs(3900); 120];
        let mut sink = ProgressSink::with_target(target, Box::new(move || usize::from(width)), etas);
        let mut params = racehorse_core::Params::new();
        params.insert("clients".into(), racehorse_core::Value::Int(64));
        params.insert("cmd".into(), racehorse_core::Value::Str("sh -c 'gzip -9 -c /tmp/big.bin'".into()));
        let spec =
            racehorse_core::CellSpec { workload: workload.into(), params, variant: variant.into(), rep: 3 };
        sink.event(&Event::CellStarted { index: 7, spec, cells: 120 }).unwrap();
        sink.event(&Event::CellPhase { index: 7, phase: CellPhase::Warmup }).unwrap();
        let written = screen.written.lock().unwrap();
        for drawn in written.iter().filter(|l| l.contains("/120")) {
            assert!(measure_text_width(drawn) <= usize::from(width), "{width}: drawn {drawn:?}");
        }
        let line = written.iter().rev().find(|l| l.contains("ETA")).expect("a progress line was drawn");
        line.trim_start_matches('\r').to_string()
    }

    /// Issue 26: at 80 columns the line was cut before the ETA. The label gives way; the
    /// ETA stays, on narrow terminals too, and with labels that are not ASCII.
    #[test]
    fn the_progress_line_fits_the_terminal_and_keeps_the_eta() {
        for width in [80u16, 60, 45] {
            for (workload, variant) in [("command", "default"), ("größenprüfung-überall", "ärger")] {
                let line = drawn_line(width, workload, variant);
                assert!(measure_text_width(&line) <= usize::from(width), "{width}: {line:?}");
                assert!(line.ends_with("ETA 1h05m"), "{width}: {line:?}");
                assert!(line.contains(" 0/120 "), "{width}: {line:?}");
                if width >= 80 {
                    let head: String = workload.chars().take(12).collect();
                    assert!(line.contains(&head) && line.contains('…'), "{line:?}");
                    assert!(line.contains("warmup + measure, ETA"), "{line:?}");
                }
            }
        }
    }

    #[test]
    fn fit_line_drops_the_phase_before_the_eta() {
        let (label, right) = fit_line(80, 5, "fileserver clients=4 #1", "warmup + measure", "2m");
        assert_eq!((label.as_str(), right.as_str()), ("fileserver clients=4 #1", "warmup + measure, ETA 2m"));
        let (label, right) = fit_line(50, 5, "fileserver clients=4 #1", "warmup + measure", "2m");
        assert_eq!(right, "ETA 2m");
        assert_eq!(measure_text_width(&label), 50 - FIXED_COLUMNS - 5 - 6, "{label}");
        let (label, right) = fit_line(20, 5, "fileserver", "cleanup", "2m");
        assert_eq!((label.as_str(), right.as_str()), ("", "ETA 2m"));
    }

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
