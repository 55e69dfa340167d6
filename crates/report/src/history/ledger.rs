//! Keeping the ledger in step with a fresh analysis: a confirmed change point that the ledger
//! already holds (same series, same direction, first run after within a few runs of the
//! stored one) is updated in place, keeping its uuid and any status set by hand; a new one is
//! added as `new`; a point whose later segment came back near the level before it is
//! `reverted`. Pending points are never stored.

use super::analyse::{Analysis, SeriesChange};
use racehorse_store::ledger::{ChangePointRecord, LedgerStatus};

/// The records to save for `a`: id 0 to add, else an update in place. A stored point matches
/// a fresh one within `min_size` runs (the shortest segment the detector allows), since more
/// runs may move a change's best place by a run or two.
pub fn reconcile(
    a: &Analysis,
    stored: &[ChangePointRecord],
    now_unix_s: i64,
    new_uuid: &mut dyn FnMut() -> String,
) -> Vec<ChangePointRecord> {
    let key = a.series.key.text();
    let position_of = |uuid: &str| a.series.runs.iter().position(|r| r.run.uuid == uuid);
    let mut taken = vec![false; stored.len()];
    let mut out = Vec::new();
    for (i, c) in a.changes.iter().enumerate().filter(|(_, c)| !c.change.pending) {
        let fresh = record(a, c, &key, reverted(a, i));
        let found = stored.iter().enumerate().position(|(j, s)| {
            !taken[j]
                && s.series_key == key
                && s.direction == fresh.direction
                && position_of(&s.after_run_uuid).is_some_and(|p| p.abs_diff(c.after) <= a.options.min_size)
        });
        match found {
            Some(j) => {
                taken[j] = true;
                let old = &stored[j];
                let status = if old.status.is_set_by_hand() { old.status } else { fresh.status };
                let updated = ChangePointRecord {
                    id: old.id,
                    uuid: old.uuid.clone(),
                    detected_at_unix_s: old.detected_at_unix_s,
                    reason: old.reason.clone(),
                    link: old.link.clone(),
                    status,
                    updated_at_unix_s: old.updated_at_unix_s,
                    ..fresh
                };
                if !same_evidence(old, &updated) {
                    out.push(updated);
                }
            }
            None => out.push(ChangePointRecord { uuid: new_uuid(), detected_at_unix_s: now_unix_s, ..fresh }),
        }
    }
    out
}

/// Whether a later segment came back to (nearer than half the step to) the level before the
/// `i`-th change.
fn reverted(a: &Analysis, i: usize) -> bool {
    let segs = &a.detection.segments;
    let (before, after) = (segs[i].level, segs[i + 1].level);
    let step = (after / before).ln().abs();
    segs[i + 2..].iter().any(|s| (s.level / before).ln().abs() < step / 2.0)
}

fn record(a: &Analysis, c: &SeriesChange, key: &str, reverted: bool) -> ChangePointRecord {
    let k = &a.series.key;
    let ch = &c.change;
    ChangePointRecord {
        id: 0,
        uuid: String::new(),
        series_key: key.to_string(),
        host: k.host.clone(),
        workload: k.workload.clone(),
        variant: k.variant.clone(),
        params_json: serde_json::to_string(&k.params).unwrap_or_default(),
        figure: k.figure.name(),
        unit: a.series.unit.clone(),
        before_run_uuid: a.series.runs[c.before].run.uuid.clone(),
        after_run_uuid: a.series.runs[c.after].run.uuid.clone(),
        level_before: ch.before.level,
        level_after: ch.after.level,
        ratio: ch.ratio,
        ratio_lo: ch.interval.map(|i| i.0),
        ratio_hi: ch.interval.map(|i| i.1),
        p_value: ch.p_value,
        direction: if c.better { "better" } else { "worse" }.to_string(),
        status: if reverted { LedgerStatus::Reverted } else { LedgerStatus::New },
        reason: None,
        link: None,
        detected_at_unix_s: 0,
        updated_at_unix_s: 0,
    }
}

/// Nothing a reader would see has changed.
fn same_evidence(a: &ChangePointRecord, b: &ChangePointRecord) -> bool {
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-12 * x.abs().max(y.abs());
    let close_opt = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) => close(x, y),
        (None, None) => true,
        _ => false,
    };
    a.before_run_uuid == b.before_run_uuid
        && a.after_run_uuid == b.after_run_uuid
        && close(a.ratio, b.ratio)
        && close_opt(a.ratio_lo, b.ratio_lo)
        && close_opt(a.ratio_hi, b.ratio_hi)
        && close(a.p_value, b.p_value)
        && close(a.level_before, b.level_before)
        && close(a.level_after, b.level_after)
        && a.status == b.status
}

/// For each confirmed change of `a` (in order), its record in `ledger` (same series, same
/// first run after), once the reconciled records are saved.
pub fn records_for(a: &Analysis, ledger: &[ChangePointRecord]) -> Vec<Option<ChangePointRecord>> {
    let key = a.series.key.text();
    a.confirmed()
        .map(|c| {
            let after = &a.series.runs[c.after].run.uuid;
            ledger.iter().find(|r| r.series_key == key && &r.after_run_uuid == after).cloned()
        })
        .collect()
}
