//! History as JSON (contract `racehorse-history`, version 1, docs/formats.md): the options,
//! then per series its key, unit, direction, spreads, runs (with their repetitions), segments,
//! change points (with their ledger record when stored) and the anchor comparison.

use super::analyse::{Analysis, SeriesChange};
use super::series::RunRef;
use racehorse_store::ledger::ChangePointRecord;
use serde_json::{json, Map, Value as Json};

pub const FORMAT_NAME: &str = "racehorse-history";
pub const FORMAT_VERSION: u32 = 1;

/// Where the series came from: a store (runs have ids) or a CSV file (runs have the time as
/// the file wrote it, and their attributes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Store,
    Csv,
}

/// The whole document.
pub fn document(analyses: &[super::WithLedger], source: Source) -> Json {
    let opts = analyses.first().map(|(a, _)| a.options).unwrap_or_default();
    json!({
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "source": match source { Source::Store => "store", Source::Csv => "csv" },
        "options": {
            "alpha": opts.alpha,
            "min_segment": opts.min_segment,
            "min_size": opts.min_size,
            "permutations": opts.permutations,
            "level": opts.level,
        },
        "series": analyses.iter().map(|(a, l)| series(a, l, source)).collect::<Vec<_>>(),
    })
}

fn run_id(r: &RunRef, index: usize, source: Source) -> Json {
    match source {
        Source::Store => json!({
            "index": index,
            "run_id": r.id,
            "uuid": r.uuid,
            "label": r.label,
            "started_at_unix_s": r.started_at_unix_s,
            "tags": tags(&r.tags),
        }),
        Source::Csv => json!({ "index": index, "time": r.label, "attributes": tags(&r.tags) }),
    }
}

fn tags(t: &[(String, String)]) -> Json {
    Json::Object(t.iter().map(|(k, v)| (k.clone(), Json::String(v.clone()))).collect::<Map<_, _>>())
}

fn series(a: &Analysis, ledger: &[Option<ChangePointRecord>], source: Source) -> Json {
    let s = &a.series;
    let runs: Vec<Json> = s
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut o = run_id(&r.run, i, source);
            o["values"] = json!(r.values);
            o["median"] = json!(racehorse_stats::median(&r.values));
            o["noisy"] = json!(r.noisy);
            o["below_resolution"] = json!(r.below_resolution);
            o["failed"] = json!(r.failed);
            o["segment"] = json!(a.segment_of(i));
            o
        })
        .collect();
    let to_pos = |i: usize| a.used[i];
    let segments: Vec<Json> = a
        .detection
        .segments
        .iter()
        .map(|g| json!({ "first": to_pos(g.start), "last": to_pos(g.end - 1), "runs": g.end - g.start, "level": g.level }))
        .collect();
    let mut confirmed = 0;
    let changes: Vec<Json> = a
        .changes
        .iter()
        .map(|c| {
            let rec = if c.change.pending {
                None
            } else {
                confirmed += 1;
                ledger.get(confirmed - 1).cloned().flatten()
            };
            change(a, c, rec, source)
        })
        .collect();
    let (noisy, below, failed) = a.left_out;
    json!({
        "key": s.key.text(),
        "host": s.key.host,
        "workload": s.key.workload,
        "variant": s.key.variant,
        "params": s.key.params,
        "figure": s.key.figure.name(),
        "unit": s.unit,
        "direction": s.direction,
        "scale": match a.detection.scale { racehorse_stats::changepoint::Scale::Log => "log", _ => "linear" },
        "within_run_cv": a.detection.within_cv,
        "between_run_cv": a.detection.between_cv,
        "left_out": { "noisy": noisy, "below_resolution": below, "failed": failed },
        "runs": runs,
        "segments": segments,
        "change_points": changes,
        "anchor": a.anchor.as_ref().map(|(at, x)| json!({
            "anchor": run_id(&s.runs[*at].run, *at, source),
            "latest_first": to_pos(x.latest.0),
            "ratio": x.ratio,
            "interval": x.interval.map(|(l, h)| [l, h]),
            "p_value": x.p_value,
        })),
    })
}

fn change(a: &Analysis, c: &SeriesChange, rec: Option<ChangePointRecord>, source: Source) -> Json {
    let s = &a.series;
    let ch = &c.change;
    let after = &s.runs[c.after].run;
    let mut o = json!({
        "index": c.after,
        "last_before": run_id(&s.runs[c.before].run, c.before, source),
        "first_after": match source { Source::Store => json!(after.id), Source::Csv => json!(after.label) },
        "first_after_run": run_id(after, c.after, source),
        "level_before": ch.before.level,
        "level_after": ch.after.level,
        "ratio": ch.ratio,
        "interval": ch.interval.map(|(l, h)| [l, h]),
        "p_value": ch.p_value,
        "direction": if c.better { "better" } else { "worse" },
        "pending": ch.pending,
    });
    if let Some(r) = rec {
        o["ledger"] =
            json!({ "id": r.id, "uuid": r.uuid, "status": r.status, "reason": r.reason, "link": r.link });
    }
    o
}
