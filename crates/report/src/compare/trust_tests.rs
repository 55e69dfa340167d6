//! Regression tests for the issue "Verdicts you can trust": noisy repetitions are never
//! significant and are counted, many points do not give `*` by chance, figures below
//! resolution never show as numbers (text, markdown, html, charts), cold first repetitions
//! are outliers, and the exclusivity warnings and outside CPU reach every report.

use crate::compare::cell::View;
use crate::compare::comparison::{compare, Comparison};
use crate::compare::metric::CompareOptions;
use crate::model::{Metric, Side};
use crate::synth::{synthetic_side, Shape};
use crate::{compare_html, compare_markdown, compare_text, run_html, run_report, run_text};
use racehorse_core::{quality, CellResult, WorkUnit};

fn area(_: &str) -> String {
    "File server".into()
}

fn cmp(base: &Side, new: &Side) -> Comparison {
    compare(base, std::slice::from_ref(new), &CompareOptions::default(), &area).expect("compare")
}

/// The cells of the first point (w0 clients=1 cpus=1) of a synthetic side.
fn first_point(side: &mut Side) -> impl Iterator<Item = &mut CellResult> {
    let key = side.cells[0].spec.match_key();
    side.cells.iter_mut().filter(move |c| c.spec.match_key() == key)
}

/// Every figure written as a signed percentage in `text` (`+12.0%`, `-64.7%`, `+53.6M%`),
/// with k/M/G suffixes expanded.
fn percentages(text: &str) -> Vec<f64> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    for (i, ch) in chars.iter().enumerate() {
        if *ch != '%' {
            continue;
        }
        let mut j = i;
        let scale = match chars.get(j.wrapping_sub(1)) {
            Some('k') => 1e3,
            Some('M') => 1e6,
            Some('G') => 1e9,
            _ => 1.0,
        };
        if scale > 1.0 {
            j -= 1;
        }
        let end = j;
        while j > 0 && (chars[j - 1].is_ascii_digit() || chars[j - 1] == '.') {
            j -= 1;
        }
        let digits: String = chars[j..end].iter().collect();
        if let Ok(v) = digits.parse::<f64>() {
            out.push(v * scale);
        }
    }
    out
}

/// The issue's A/A run: the same configuration twice, while another process used about one
/// CPU during the new run's first point. That point must not read as a verdict.
fn aa_with_a_busy_neighbour() -> (Side, Side) {
    let base = synthetic_side(1, "a", &Shape::default());
    let mut new = synthetic_side(2, "a-again", &Shape::default());
    new.run.exclusivity_json =
        r#"{"load1":1.3,"steal_pct":0.0,"busy":[],"warnings":["process 4242 (stress) uses 99% of a CPU"]}"#
            .into();
    for c in first_point(&mut new) {
        c.units *= 0.353;
        c.cpu.user_s *= 1.05;
        c.quality.outside_cpu_s = Some(9.6);
        c.quality.noisy = Some("other processes used 9.6 s of CPU in the 10 s window".into());
    }
    for c in new.cells.iter_mut().filter(|c| c.quality.noisy.is_none()) {
        c.quality.outside_cpu_s = Some(0.01);
    }
    (base, new)
}

#[test]
fn issue_verdicts_aa_noisy_point_is_never_significant_and_is_counted() {
    let (base, new) = aa_with_a_busy_neighbour();
    let c = cmp(&base, &new);
    let cell = c.tables[0].rows[0].sides[0].as_ref().expect("matched");
    let t = cell.metric(Metric::Throughput).expect("throughput");
    assert!(t.ratio.expect("ratio") < 0.4, "the figure is still shown: {t:?}");
    assert!(t.noisy_window && t.significant.is_none() && t.verdict.is_none(), "{t:?}");
    assert_eq!(cell.noisy_reps.len(), 3);
    let v = c.verdicts[0];
    assert_eq!((v.points, v.significant, v.noisy), (16, 0, 1));
    assert_eq!(c.summary[0].throughput_significant, (0, 0));
    let text = compare_text(&c, View::default());
    assert!(!text.contains("%*"), "no point is significant: {text}");
    assert!(text.contains("0 of 16 points significant, 1 noisy"), "{text}");
    assert!(text.contains("Overall (run 2 'a-again'): no significant difference"), "{text}");
    assert!(!text.contains("Overall (run 2 'a-again', geometric mean"), "no verdict-like headline");
    assert!(text.contains("0.353 -64.7%?"), "the noisy mark: {text}");
    assert!(text.contains("noisy new #1 #2 #3"), "{text}");
    assert!(text.contains("? noisy clients=1 cpus=1: new #1: other processes used 9.6 s"), "{text}");
    assert!(text.contains("(other processes: 96% of one CPU)"), "{text}");
    assert!(text.contains("median 0.1%, max 96.0% of one CPU over 48 windows"), "{text}");
    assert!(text.contains("Before run 2 'a-again' the exclusivity check warned: process 4242"), "{text}");
    assert!(text.contains("exclusivity warnings"), "the environment diff names the neighbour: {text}");
    let summary_rows: String = text.lines().filter(|l| l.starts_with("File server")).collect();
    assert!(!percentages(&summary_rows).iter().any(|p| *p > 10.0), "noisy points left out: {summary_rows}");
    let html = compare_html(&c, View::default());
    assert!(html.contains("noisy, not judged"), "the bar chart marks the noisy point");
    assert!(html.contains("<td class=\"muted\">0.353 -64.7%?</td>"), "noisy cells are grey");
}

/// The whitespace-separated fields of the first table line whose leading fields are `lead`.
fn row_fields(text: &str, lead: &[&str]) -> Vec<String> {
    text.lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .find(|f| f.len() >= lead.len() && f.iter().zip(lead).all(|(a, b)| a == b))
        .unwrap_or_default()
}

/// A quiet machine, the same configuration twice, 3 repetitions, 48 points × 4 metrics:
/// single tests at 5% would mark some of the 192 by chance; the correction marks none.
#[test]
fn aa_on_a_quiet_machine_gives_no_star_by_chance() {
    let shape = Shape { workloads: 4, clients: vec![1, 2, 4, 8, 16, 32], noise: 0.03, ..Shape::default() };
    let base = synthetic_side(1, "a", &shape);
    let new = synthetic_side(2, "b", &Shape { seed: 99, ..shape });
    let c = cmp(&base, &new);
    let metrics = || {
        c.tables
            .iter()
            .flat_map(|t| t.rows.iter())
            .filter_map(|r| r.sides[0].as_ref())
            .flat_map(|s| s.metrics.iter())
    };
    let raw = metrics().filter(|m| m.p_value.is_some_and(|p| p < 0.05)).count();
    assert!(raw > 0, "single tests would have marked some point");
    assert_eq!(metrics().filter(|m| m.significant == Some(true)).count(), 0);
    assert_eq!(c.verdicts[0].tests, 192);
    let text = compare_text(&c, View::default());
    assert!(!text.contains("%*"), "{text}");
    assert!(text.contains("0 of 48 points significant, 0 noisy, 0 below resolution."), "{text}");
    assert!(text.contains("no significant difference at any of the 48 points"), "{text}");
    assert!(text.contains("point estimates only, no point is significant"), "{text}");
}

/// The issue's micro figure: one repetition at 1e12 ops/s, below resolution.
fn micro_with_an_absurd_figure() -> (Side, Side) {
    let shape = Shape { workloads: 1, ..Shape::default() };
    let mut base = synthetic_side(1, "a", &shape);
    let mut new = synthetic_side(2, "b", &Shape { speed: 0.9, seed: 4, ..shape });
    for c in base.cells.iter_mut().chain(new.cells.iter_mut()) {
        c.unit = WorkUnit::Ops;
        c.units /= 1e5;
    }
    let absurd = first_point(&mut new).next().expect("a cell");
    absurd.units = 1e12 * absurd.window.as_secs_f64();
    absurd.quality.mark_below(quality::THROUGHPUT, "window shorter than the clock's resolution");
    absurd.quality.mark_below(quality::CPU, "2 ticks");
    (base, new)
}

#[test]
fn below_resolution_figures_never_show_as_numbers() {
    let (base, new) = micro_with_an_absurd_figure();
    let c = cmp(&base, &new);
    let cell = c.tables[0].rows[0].sides[0].as_ref().expect("matched");
    assert!(cell.metrics.iter().all(|m| m.below_resolution && m.ratio.is_none()));
    assert_eq!(c.verdicts[0].below_resolution, 1);
    assert_eq!(c.summary[0].below_resolution_points, 0, "clients=1 is ramp-up, left out anyway");
    let text = compare_text(&c, View { absolute: true, ci: true });
    assert!(text.contains("below res"), "{text}");
    assert!(text.contains("1 below resolution"), "{text}");
    for doc in [text.clone(), compare_markdown(&c, View::default()), compare_html(&c, View::default())] {
        let huge: Vec<f64> = percentages(&doc).into_iter().filter(|p| *p > 100.0).collect();
        assert!(huge.is_empty(), "no huge percentage: {huge:?}");
        assert!(!doc.contains("1e12") && !doc.contains("1.00e12") && !doc.contains("1000000000000"));
    }
    let r = run_report(&new, 0.05, &area);
    assert_eq!(r.tables[0].rows[0].below, Metric::ALL.to_vec());
    let run = run_text(&r);
    let fields = row_fields(&run, &["1", "clients=1", "cpus=1", "3"]);
    assert_eq!(fields[4..6], ["below", "res"], "{run}");
}

#[test]
fn charts_take_their_axes_from_resolved_figures_only() {
    let (base, new) = micro_with_an_absurd_figure();
    let html = compare_html(&cmp(&base, &new), View::default());
    // Tick labels of a 1e12 ops/s line or a +5e7% bar would carry a G, T or M suffix.
    for big in ["G</text>", "T</text>", "M</text>", "M%"] {
        assert!(!html.contains(big), "an axis reached {big}");
    }
    // The point with a figure below resolution has no bar, not even one from the other
    // repetitions, and no CPU stack.
    assert!(!html.contains("<title>clients=1 cpus=1: "), "no relative bar for it");
    assert!(!html.contains("<title>clients=1 cpus=1 / new: "), "no CPU stack for it");
    assert!(html.contains("<title>clients=1 cpus=2: "), "the other points keep theirs");
    let run = run_html(&run_report(&new, 0.05, &area));
    assert!(!run.contains("G</text>") && !run.contains("T</text>"), "run charts too");
}

/// A first-of-run cold cell among three: 119 GB/s beside 198 and 200.
#[test]
fn a_cold_first_repetition_is_an_outlier_everywhere() {
    let base = synthetic_side(1, "a", &Shape::default());
    let mut new = synthetic_side(2, "b", &Shape::default());
    for c in first_point(&mut new) {
        c.units = match c.spec.rep {
            1 => 119e9,
            2 => 198e9,
            _ => 200e9,
        } * c.window.as_secs_f64();
    }
    let c = cmp(&base, &new);
    assert_eq!(c.tables[0].rows[0].sides[0].as_ref().expect("side").outlier_reps, vec![1]);
    assert_eq!(c.verdicts[0].with_outliers, 1);
    let text = compare_text(&c, View::default());
    assert!(text.contains("new outlier #1 (kept)"), "{text}");
    assert!(text.contains("1 with an outlier repetition"), "{text}");
    assert!(text.contains("outlier #n = a repetition whose throughput lies far"), "legend: {text}");
    let r = run_report(&new, 0.05, &area);
    assert_eq!(r.tables[0].rows[0].outlier_reps, vec![1]);
    assert!(run_text(&r).contains("outlier #1"));
}

#[test]
fn run_report_marks_noisy_points_and_shows_the_exclusivity_warnings() {
    let (_, new) = aa_with_a_busy_neighbour();
    let r = run_report(&new, 0.05, &area);
    assert_eq!(r.tables[0].rows[0].noisy_reps.len(), 3);
    let text = run_text(&r);
    assert!(text.contains("Before run 2 'a-again' the exclusivity check warned: process 4242"), "{text}");
    assert!(text.contains("median 0.1%, max 96.0% of one CPU over 48 windows"), "{text}");
    assert_eq!(
        row_fields(&text, &["1", "clients=1", "cpus=1"])[3],
        "3?",
        "the n column carries the mark: {text}"
    );
    for rep in 1..=3 {
        assert!(
            text.contains(&format!("? noisy clients=1 cpus=1: rep #{rep}: other processes used")),
            "{text}"
        );
    }
    let html = run_html(&r);
    assert!(html.contains("exclusivity check warned"));
}
