//! Machine formats of a comparison: versioned json (header, flat records, summaries,
//! environment diff) and csv (one line per record). Units are fixed base units.

use crate::compare::comparison::Comparison;
use crate::compare::flat::{flat_records, params_text, FlatRecord, COMPARE_FORMAT_VERSION};
use crate::compare::metric::MetricCompare;
use serde_json::json;

/// The comparison as one json document (docs/formats.md, "compare"), with no profiles.
pub fn compare_json(c: &Comparison) -> String {
    compare_json_with(c, Vec::new())
}

/// The comparison as one json document with `profiles`, the records of
/// [`crate::compare_profiles_json`] for every new side (empty when none was profiled).
pub fn compare_json_with(c: &Comparison, profiles: Vec<serde_json::Value>) -> String {
    let doc = json!({
        "format": "racehorse-compare",
        "version": COMPARE_FORMAT_VERSION,
        "base": c.base,
        "news": c.news,
        "options": {
            "ci_level": c.options.level,
            "ci_method": c.options.ci_method.as_str(),
            "noisy_cv": c.options.noisy_cv,
            "same_within_pct": c.options.same_within_pct,
        },
        "records": flat_records(c),
        "items": item_records(c),
        "ramps": c.ramps,
        "summary": c.summary,
        "areas": c.areas,
        "overall": c.overall,
        "verdicts": c.verdicts,
        "env_diff": c.env_diff,
        "only_base": c.only_base,
        "only_new": c.only_new,
        "profiles": profiles,
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

/// The per-item comparisons (latency percentiles, engine figures) as flat json records, one
/// per (new side, matched point, item): the fields of a metric record, plus `kind` (`latency`
/// or `figure`), `item` (operation or figure), `stat` (`p50`, `p90`, `p99` or "").
pub fn item_records(c: &Comparison) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for t in &c.tables {
        for row in &t.rows {
            for (side, cell) in row.sides.iter().enumerate() {
                let Some(cell) = cell else { continue };
                for i in &cell.items {
                    let mut rec = json!({
                        "side": side,
                        "new_run_id": c.news.get(side).map_or(0, |s| s.run_id),
                        "workload": t.workload,
                        "variant": t.variant,
                        "params": row.params,
                        "kind": i.kind,
                        "item": i.item,
                        "stat": i.stat,
                        "unit": i.unit,
                        "direction": i.direction(),
                    });
                    add_compare_fields(&mut rec, &i.cmp);
                    out.push(rec);
                }
            }
        }
    }
    out
}

/// Adds one comparison's figures to a json record: counts, means and spreads a side, ratio,
/// gain, interval, p and q, significance, verdict and the marks that keep it from a verdict.
pub(crate) fn add_compare_fields(rec: &mut serde_json::Value, m: &MetricCompare) {
    let fields = json!({
        "base_n": m.base.map_or(0, |s| s.n),
        "base_mean": m.base.map(|s| s.mean),
        "base_stddev": m.base.map(|s| s.stddev),
        "new_n": m.new.map_or(0, |s| s.n),
        "new_mean": m.new.map(|s| s.mean),
        "new_stddev": m.new.map(|s| s.stddev),
        "ratio": m.ratio,
        "gain_pct": m.gain_pct,
        "ci_lo": m.ci.map(|x| x.lo),
        "ci_hi": m.ci.map(|x| x.hi),
        "p_value": m.p_value,
        "q_value": m.q_value,
        "significant": m.significant,
        "verdict": m.verdict.map(|v| v.as_str()),
        "noisy": m.noisy,
        "noisy_window": m.noisy_window,
        "below_resolution": m.below_resolution,
    });
    if let (Some(rec), serde_json::Value::Object(fields)) = (rec.as_object_mut(), fields) {
        rec.extend(fields);
    }
}

/// csv header, in column order.
pub const CSV_COLUMNS: [&str; 27] = [
    "format_version",
    "side",
    "new_run_id",
    "workload",
    "variant",
    "params",
    "metric",
    "unit",
    "direction",
    "base_n",
    "base_mean",
    "base_stddev",
    "new_n",
    "new_mean",
    "new_stddev",
    "ratio",
    "gain_pct",
    "ci_lo",
    "ci_hi",
    "ci_level",
    "ci_method",
    "significant",
    "verdict",
    "noisy",
    "partial",
    "noisy_window",
    "below_resolution",
];

/// Quotes a csv field when it holds a comma, quote or line break (RFC 4180).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

fn csv_line(r: &FlatRecord) -> String {
    let direction = match r.direction {
        racehorse_core::Direction::HigherIsBetter => "higher_is_better",
        racehorse_core::Direction::LowerIsBetter => "lower_is_better",
    };
    let fields = [
        COMPARE_FORMAT_VERSION.to_string(),
        r.side.to_string(),
        r.new_run_id.to_string(),
        r.workload.clone(),
        r.variant.clone(),
        params_text(&r.params),
        r.metric.to_string(),
        r.unit.clone(),
        direction.to_string(),
        r.base_n.to_string(),
        opt(r.base_mean),
        opt(r.base_stddev),
        r.new_n.to_string(),
        opt(r.new_mean),
        opt(r.new_stddev),
        opt(r.ratio),
        opt(r.gain_pct),
        opt(r.ci_lo),
        opt(r.ci_hi),
        opt(r.ci_level),
        opt(r.ci_method),
        opt(r.significant),
        opt(r.verdict),
        r.noisy.to_string(),
        r.partial.to_string(),
        r.noisy_window.to_string(),
        r.below_resolution.to_string(),
    ];
    fields.iter().map(|f| csv_field(f)).collect::<Vec<_>>().join(",")
}

/// The comparison as csv: a header line, then one line per record.
pub fn compare_csv(c: &Comparison) -> String {
    let mut out = CSV_COLUMNS.join(",");
    out.push('\n');
    for r in flat_records(c) {
        out.push_str(&csv_line(&r));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
