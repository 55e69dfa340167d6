//! History as a document (text and HTML share it): for one series a table of its runs
//! (date, tags, median, range of repetitions, what was left out, segment), its change points
//! with their ledger status and a timeline chart; for many series one line per change point,
//! most significant first.

use super::analyse::{Analysis, SeriesChange};
use super::figure::{Figure, MetricName};
use super::series::Series;
use crate::render::doc::{Block, Cell, Grid, Tone};
use crate::render::units::{date, num, pct, ratio, unit_view};
use racehorse_chart::{ChangeMark, Level, RunMark, TimelineChart};
use racehorse_store::ledger::ChangePointRecord;

/// How a figure's values are shown: a scale and a unit label.
pub fn display_scale(series: &Series) -> (f64, String) {
    let view = unit_view(series.work_unit);
    match &series.key.figure {
        Figure::Metric(MetricName::Throughput) => (view.tput_scale, view.tput_label.to_string()),
        Figure::Metric(_) => (view.cpu_scale, view.cpu_label.to_string()),
        Figure::Latency { .. } => (1e-3, "µs".to_string()),
        Figure::Engine(_) => (1.0, String::new()),
    }
}

/// A change point in words: `-5.8% worse (0.942x, 0.93-0.95), p 0.005`.
pub fn change_words(c: &SeriesChange) -> String {
    let ch = &c.change;
    let interval = ch.interval.map(|(lo, hi)| format!(", {}-{}", ratio(lo), ratio(hi))).unwrap_or_default();
    format!(
        "{} {} ({}x{interval}), p {}",
        pct((ch.ratio - 1.0) * 100.0),
        if c.better { "better" } else { "worse" },
        ratio(ch.ratio),
        p_text(ch.p_value)
    )
}

fn p_text(p: f64) -> String {
    if p < 0.001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

/// The tags a user gave as `k=v k=v` (the automatic kernel and racehorse tags are in the JSON).
pub fn tags_text(tags: &[(String, String)]) -> String {
    tags.iter()
        .filter(|(k, _)| k != "kernel" && k != "racehorse")
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The document of one analysed series; `ledger` gives each confirmed change's record.
pub fn series_blocks(a: &Analysis, ledger: &[Option<ChangePointRecord>]) -> Vec<Block> {
    let s = &a.series;
    let (scale, label) = display_scale(s);
    let better = if s.direction == racehorse_core::Direction::HigherIsBetter { "higher" } else { "lower" };
    let heading = match s.key.host.is_empty() {
        true => format!("{} — {}", s.key.point(), s.key.figure.header()),
        false => format!("{} on {} — {}", s.key.point(), s.key.host, s.key.figure.header()),
    };
    let mut blocks = vec![
        Block::Heading(2, heading),
        Block::Para(format!(
            "{} runs; {label}{}{better} is better. Within-run spread {}, between-run spread {}.",
            s.runs.len(),
            if label.is_empty() { "" } else { ", " },
            cv_text(a.detection.within_cv),
            cv_text(a.detection.between_cv)
        )),
    ];
    blocks.push(Block::Chart(timeline(a, scale, &label).to_svg()));
    blocks.push(Block::Table(runs_grid(a, scale, &label)));
    blocks.extend(change_blocks(a, ledger));
    blocks
}

fn host_name(h: &str) -> &str {
    // A CSV series has no host.
    if h.is_empty() {
        "(file)"
    } else {
        h
    }
}

fn cv_text(cv: Option<f64>) -> String {
    cv.map_or("n/a".to_string(), |c| format!("{:.2}%", c * 100.0))
}

fn runs_grid(a: &Analysis, scale: f64, label: &str) -> Grid {
    let from_file = a.series.key.host.is_empty();
    let when = if from_file { "time" } else { "date" };
    let header = ["run", when, "tags", "median", "reps range", "n", "left out", "segment"];
    let caption = if label.is_empty() { "runs".to_string() } else { format!("runs ({label})") };
    let mut g = Grid::new("history", caption, header.iter().map(|h| h.to_string()).collect(), 3);
    for (i, r) in a.series.runs.iter().enumerate() {
        let mut v = r.values.clone();
        v.sort_by(f64::total_cmp);
        let median = racehorse_stats::median(&v);
        let range = match (v.first(), v.last()) {
            (Some(lo), Some(hi)) if v.len() > 1 => format!("{}-{}", num(lo * scale), num(hi * scale)),
            _ => String::new(),
        };
        let mut left = Vec::new();
        for (n, what) in [(r.noisy, "noisy"), (r.below_resolution, "below res."), (r.failed, "failed")] {
            if n > 0 {
                left.push(format!("{n} {what}"));
            }
        }
        let segment = a.segment_of(i).map(|s| (s + 1).to_string()).unwrap_or_default();
        let tone = if left.is_empty() { Tone::Plain } else { Tone::Muted };
        g.rows.push(vec![
            Cell::plain(r.run.id.to_string()),
            Cell::plain(if from_file { r.run.label.clone() } else { date(r.run.started_at_unix_s) }),
            Cell::plain(tags_text(&r.run.tags)),
            Cell::toned(median.map(|m| num(m * scale)).unwrap_or_else(|| "-".into()), tone),
            Cell::plain(range),
            Cell::plain(r.values.len().to_string()),
            Cell::plain(left.join(", ")),
            Cell::plain(segment),
        ]);
    }
    g
}

fn change_blocks(a: &Analysis, ledger: &[Option<ChangePointRecord>]) -> Vec<Block> {
    let s = &a.series;
    let mut out = Vec::new();
    let opts = &a.options;
    let mut lines = Vec::new();
    let mut confirmed = 0;
    for c in &a.changes {
        let (before, after) = (&s.runs[c.before].run, &s.runs[c.after].run);
        let status = if c.change.pending {
            "pending: not alerted until it holds for ".to_string() + &opts.min_segment.to_string() + " runs"
        } else {
            let rec = ledger.get(confirmed).cloned().flatten();
            confirmed += 1;
            rec.map(|r| format!("ledger #{} {}", r.id, r.status.as_str()))
                .unwrap_or_else(|| "confirmed".into())
        };
        lines.push(format!(
            "between run {} ({}) and run {} ({}): {} [{status}]",
            before.id,
            tags_text(&before.tags),
            after.id,
            tags_text(&after.tags),
            change_words(c)
        ));
    }
    let head = format!(
        "Change points (alpha {}, {} permutations, segments of at least {} runs; confirmed after {} runs)",
        opts.alpha, opts.permutations, opts.min_size, opts.min_segment
    );
    out.push(Block::Heading(3, head));
    if lines.is_empty() {
        out.push(Block::Para("none: no change stands out from the run-to-run spread.".into()));
    }
    out.extend(lines.into_iter().map(Block::Para));
    let (noisy, below, failed) = a.left_out;
    if noisy + below + failed > 0 {
        out.push(Block::Para(format!(
            "Left out: {noisy} noisy repetitions, {below} below resolution, {failed} failed; they never make a change point."
        )));
    }
    if let Some((at, anchor)) = &a.anchor {
        let interval =
            anchor.interval.map(|(lo, hi)| format!(" ({}-{})", ratio(lo), ratio(hi))).unwrap_or_default();
        out.push(Block::Para(format!(
            "Since anchor run {}: {}x{interval} over the latest {} runs, {}.",
            s.runs[*at].run.id,
            ratio(anchor.ratio),
            anchor.latest.1 - anchor.latest.0,
            anchor.p_value.map_or("no spread to judge it".into(), |p| format!("p {}", p_text(p)))
        )));
    }
    out
}

fn timeline(a: &Analysis, scale: f64, label: &str) -> TimelineChart {
    let s = &a.series;
    let runs = s
        .runs
        .iter()
        .map(|r| {
            let mut v: Vec<f64> = r.values.iter().map(|x| x * scale).collect();
            v.sort_by(f64::total_cmp);
            RunMark {
                median: racehorse_stats::median(&v),
                interval: (v.len() > 1).then(|| (v[0], v[v.len() - 1])),
                hollow: r.noisy + r.below_resolution > 0,
                tooltip: format!(
                    "run {} {} {}",
                    r.run.id,
                    date(r.run.started_at_unix_s),
                    tags_text(&r.run.tags)
                ),
            }
        })
        .collect();
    let to_pos = |i: usize| a.used.get(i).copied().unwrap_or(s.runs.len());
    let levels = a
        .detection
        .segments
        .iter()
        .map(|seg| Level { start: to_pos(seg.start), end: to_pos(seg.end - 1) + 1, level: seg.level * scale })
        .collect();
    let changes = a
        .changes
        .iter()
        .map(|c| ChangeMark {
            after: c.after,
            label: format!("{} ({}x)", pct((c.change.ratio - 1.0) * 100.0), ratio(c.change.ratio)),
            worse: !c.better,
            pending: c.change.pending,
        })
        .collect();
    TimelineChart {
        title: format!("{} — {}", s.key.point(), s.key.figure.header()),
        y_label: label.to_string(),
        x_label: "run (oldest first)".into(),
        runs,
        levels,
        changes,
    }
}

/// One line per change point of many series, most significant first (smallest p, then the
/// largest step).
pub fn listing_blocks(analyses: &[Analysis], title: &str) -> Vec<Block> {
    let mut rows: Vec<(&Analysis, &SeriesChange)> =
        analyses.iter().flat_map(|a| a.changes.iter().map(move |c| (a, c))).collect();
    rows.sort_by(|x, y| {
        x.1.change
            .pending
            .cmp(&y.1.change.pending)
            .then(x.1.change.p_value.total_cmp(&y.1.change.p_value))
            .then(y.1.change.ratio.ln().abs().total_cmp(&x.1.change.ratio.ln().abs()))
    });
    let header = ["point", "host", "figure", "before", "after", "change", "ratio", "interval", "p", "state"];
    let mut g = Grid::new("history", title.to_string(), header.iter().map(|h| h.to_string()).collect(), 3);
    for (a, c) in &rows {
        let s = &a.series;
        let ch = &c.change;
        let tone = if c.better { Tone::Better } else { Tone::Worse };
        g.rows.push(vec![
            Cell::plain(s.key.point()),
            Cell::plain(host_name(&s.key.host).to_string()),
            Cell::plain(s.key.figure.name()),
            Cell::plain(s.runs[c.before].run.id.to_string()),
            Cell::plain(s.runs[c.after].run.id.to_string()),
            Cell::toned(
                format!("{} {}", pct((ch.ratio - 1.0) * 100.0), if c.better { "better" } else { "worse" }),
                tone,
            ),
            Cell::plain(ratio(ch.ratio)),
            Cell::plain(ch.interval.map(|(l, h)| format!("{}-{}", ratio(l), ratio(h))).unwrap_or_default()),
            Cell::plain(p_text(ch.p_value)),
            Cell::plain(if ch.pending { "pending" } else { "confirmed" }.to_string()),
        ]);
    }
    vec![Block::Table(g)]
}
