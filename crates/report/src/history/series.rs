//! Series from the store: the cells of one point (workload, parameters, variant) on one
//! host over many runs, one figure of them, each run's repetitions with the noisy and
//! below-resolution ones left out and counted.

use super::figure::Figure;
use racehorse_core::{CellResult, CellStatus, Direction, Params, RunStatus, Value, WorkUnit};
use racehorse_store::{RunFilter, RunInfo, Store};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// What a series knows of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRef {
    pub id: i64,
    pub uuid: String,
    pub label: String,
    pub started_at_unix_s: i64,
    /// The host's inventory name.
    pub host: String,
    pub tags: Vec<(String, String)>,
}

/// One run of a series: its usable repetitions and what was left out.
#[derive(Debug, Clone, PartialEq)]
pub struct RunValues {
    pub run: Arc<RunRef>,
    /// The figure of each usable repetition.
    pub values: Vec<f64>,
    /// Repetitions left out because their window was noisy.
    pub noisy: usize,
    /// Repetitions left out because the figure was below its resolution.
    pub below_resolution: usize,
    /// Repetitions that failed (no figure).
    pub failed: usize,
}

/// What identifies a series.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesKey {
    pub host: String,
    pub workload: String,
    pub variant: String,
    pub params: Params,
    pub figure: Figure,
}

impl SeriesKey {
    /// The key as one text (the ledger's `series_key`): host, the point's match key, figure.
    pub fn text(&self) -> String {
        let spec = racehorse_core::CellSpec {
            workload: self.workload.clone(),
            params: self.params.clone(),
            variant: self.variant.clone(),
            rep: 1,
        };
        format!("{}|{}|{}", self.host, spec.match_key(), self.figure.name())
    }

    /// The point for people: `fileserver clients=4 cpus=2 [variant]`.
    pub fn point(&self) -> String {
        let mut s = self.workload.clone();
        for (k, v) in &self.params {
            s.push_str(&format!(" {k}={}", racehorse_core::params::display_value(k, v)));
        }
        if !self.variant.is_empty() && self.variant != "default" {
            s.push_str(&format!(" [{}]", self.variant));
        }
        s
    }
}

/// One figure of one point over runs, in run order.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub key: SeriesKey,
    pub work_unit: WorkUnit,
    /// The figure's unit in machine formats (`bytes/s`, `cpu_s/op`, `ns`, an engine's unit).
    pub unit: String,
    pub direction: Direction,
    pub runs: Vec<RunValues>,
}

/// How runs are put in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum RunOrder {
    /// By start time.
    #[default]
    Started,
    /// By the first appearance (in start order) of each value of this tag; runs without the
    /// tag are left out.
    Tag(String),
}

/// Which series to read.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// The runs (label, tags, time, host, limit).
    pub runs: RunFilter,
    /// The workload; every workload when None.
    pub workload: Option<String>,
    /// Parameters the point must have, `name=value` as shown (sizes with k/m/g work too).
    pub params: Vec<(String, String)>,
    pub variant: Option<String>,
    pub figures: Vec<Figure>,
    pub order: RunOrder,
}

/// Runs read for a selection, and how many were left out by the order.
#[derive(Debug, Clone, Default)]
pub struct Collected {
    pub series: Vec<Series>,
    /// Runs without the tag that orders them.
    pub runs_without_order_tag: usize,
    pub runs_read: usize,
}

/// Reads every series of `sel` from the store; `declared(workload, key)` gives an engine
/// figure's declaration (its direction and unit).
pub fn collect(
    store: &Store,
    sel: &Selection,
    declared: &dyn Fn(&str, &str) -> Option<racehorse_core::Figure>,
) -> racehorse_store::Result<Collected> {
    let mut runs: Vec<RunInfo> = store.list_runs_where(&sel.runs)?;
    runs.retain(|r| r.status != RunStatus::Running);
    runs.sort_by_key(|r| (r.started_at_unix_s, r.id));
    let tags = store.all_run_tags()?;
    let refs: Vec<Arc<RunRef>> = runs
        .iter()
        .map(|r| {
            Arc::new(RunRef {
                id: r.id,
                uuid: r.uuid.clone(),
                label: r.label.clone(),
                started_at_unix_s: r.started_at_unix_s,
                host: r.inventory_name.clone(),
                tags: tags.get(&r.id).cloned().unwrap_or_default(),
            })
        })
        .collect();
    let (refs, without_tag) = ordered(refs, &sel.order);
    let ids: Vec<i64> = refs.iter().map(|r| r.id).collect();
    let latencies = sel.figures.iter().any(Figure::needs_latencies);
    let cells = store.cells_across_runs(sel.workload.as_deref(), &ids, latencies)?;
    let position: HashMap<i64, usize> = refs.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
    let mut points: BTreeMap<(String, String), Vec<(usize, CellResult)>> = BTreeMap::new();
    for (run_id, cell) in cells {
        if !selected(&cell, sel) {
            continue;
        }
        let Some(&at) = position.get(&run_id) else { continue };
        points.entry((refs[at].host.clone(), cell.spec.match_key())).or_default().push((at, cell));
    }
    let mut series = Vec::new();
    for ((host, _), cells) in points {
        for figure in &sel.figures {
            if let Some(s) = build(&host, figure, &cells, &refs, declared) {
                series.push(s);
            }
        }
    }
    Ok(Collected { series, runs_without_order_tag: without_tag, runs_read: refs.len() })
}

/// The runs in the selection's order, and how many lacked the ordering tag.
fn ordered(refs: Vec<Arc<RunRef>>, order: &RunOrder) -> (Vec<Arc<RunRef>>, usize) {
    let RunOrder::Tag(key) = order else { return (refs, 0) };
    let value = |r: &RunRef| r.tags.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    let mut first_seen: HashMap<String, usize> = HashMap::new();
    let mut keep = Vec::new();
    let total = refs.len();
    for r in refs {
        if let Some(v) = value(&r) {
            let n = first_seen.len();
            let rank = *first_seen.entry(v).or_insert(n);
            keep.push((rank, r));
        }
    }
    keep.sort_by_key(|(rank, _)| *rank);
    let without = total - keep.len();
    (keep.into_iter().map(|(_, r)| r).collect(), without)
}

fn selected(cell: &CellResult, sel: &Selection) -> bool {
    point_selected(&cell.spec.workload, &cell.spec.variant, &cell.spec.params, sel)
}

/// Whether the point of `workload`, `variant` and `params` is one the selection reads (a
/// central store asks before it copies a point's cells).
pub fn point_selected(workload: &str, variant: &str, params: &Params, sel: &Selection) -> bool {
    if sel.workload.as_ref().is_some_and(|w| w != workload)
        || sel.variant.as_ref().is_some_and(|v| v != variant)
    {
        return false;
    }
    sel.params.iter().all(|(k, want)| params.get(k).is_some_and(|v| value_matches(k, v, want)))
}

/// A parameter value matches the text a user gave: as stored or as shown (`64k`).
fn value_matches(name: &str, v: &Value, want: &str) -> bool {
    v.to_string() == want || racehorse_core::params::display_value(name, v) == want
}

/// One figure's series from a point's cells (in run order); None when no run has a value.
fn build(
    host: &str,
    figure: &Figure,
    cells: &[(usize, CellResult)],
    refs: &[Arc<RunRef>],
    declared: &dyn Fn(&str, &str) -> Option<racehorse_core::Figure>,
) -> Option<Series> {
    let first = &cells.first()?.1;
    let mut by_run: BTreeMap<usize, RunValues> = BTreeMap::new();
    for (at, c) in cells {
        let entry = by_run.entry(*at).or_insert_with(|| RunValues {
            run: refs[*at].clone(),
            values: Vec::new(),
            noisy: 0,
            below_resolution: 0,
            failed: 0,
        });
        let (value, below) = figure.read(c);
        match (c.status, value) {
            (CellStatus::Ok, Some(_)) if c.quality.noisy.is_some() => entry.noisy += 1,
            (CellStatus::Ok, Some(_)) if below => entry.below_resolution += 1,
            (CellStatus::Ok, Some(v)) => entry.values.push(v),
            _ => entry.failed += 1,
        }
    }
    if by_run.values().all(|r| r.values.is_empty() && r.noisy + r.below_resolution == 0) {
        return None;
    }
    let engine_key = if let Figure::Engine(k) = figure { Some(k.as_str()) } else { None };
    let declaration = engine_key.and_then(|k| declared(&first.spec.workload, k));
    let direction = figure.direction(declaration.and_then(|d| d.direction));
    let unit = figure.unit(first.unit, declaration.map(|d| d.unit));
    Some(Series {
        key: SeriesKey {
            host: host.to_string(),
            workload: first.spec.workload.clone(),
            variant: first.spec.variant.clone(),
            params: first.spec.params.clone(),
            figure: figure.clone(),
        },
        work_unit: first.unit,
        unit,
        direction,
        runs: by_run.into_values().collect(),
    })
}

impl Series {
    /// A series read from a CSV file (`history --csv`): its runs in time order, each with its
    /// attributes as tags and its time as written as the label; `direction` says which way
    /// the metric is better.
    pub fn from_csv(csv: &super::csv::CsvSeries, name: &str, direction: Direction) -> Series {
        let runs = csv
            .runs
            .iter()
            .enumerate()
            .map(|(i, r)| RunValues {
                run: Arc::new(RunRef {
                    id: i as i64 + 1,
                    uuid: String::new(),
                    label: r.time_text.clone(),
                    started_at_unix_s: r.time_s.floor() as i64,
                    host: String::new(),
                    tags: r.attributes.clone(),
                }),
                values: r.values.clone(),
                noisy: 0,
                below_resolution: 0,
                failed: 0,
            })
            .collect();
        Series {
            key: SeriesKey {
                host: String::new(),
                workload: name.to_string(),
                variant: String::new(),
                params: Params::new(),
                figure: Figure::Engine(csv.metric.clone()),
            },
            work_unit: WorkUnit::Ops,
            unit: String::new(),
            direction,
            runs,
        }
    }
}

/// A time as `--since`/`--until` take it: an age (`30d`, `12h`, `2w`, `45m`, counted back
/// from `now_unix_s`), a date or time in ISO 8601, or Unix seconds.
pub fn parse_when(text: &str, now_unix_s: i64) -> Result<i64, String> {
    let t = text.trim();
    let unit_s = match t.chars().last() {
        Some('m') => Some(60),
        Some('h') => Some(3600),
        Some('d') => Some(86_400),
        Some('w') => Some(7 * 86_400),
        _ => None,
    };
    if let Some(unit) = unit_s {
        if let Ok(n) = t[..t.len() - 1].parse::<u32>() {
            return Ok(now_unix_s - i64::from(n) * unit);
        }
    }
    match super::csv::parse_time(t) {
        Some(s) if (0.0..1e11).contains(&s) => Ok(s.floor() as i64),
        _ => Err(format!(
            "{t:?}: give an age such as 30d, 12h or 2w, a date such as 2026-11-01, or Unix seconds"
        )),
    }
}

#[cfg(test)]
mod when_tests {
    use super::parse_when;

    #[test]
    fn ages_dates_and_seconds() {
        assert_eq!(parse_when("30d", 1_000_000_000), Ok(1_000_000_000 - 30 * 86_400));
        assert_eq!(parse_when("2w", 100 * 86_400), Ok(86 * 86_400));
        assert_eq!(parse_when("1970-01-02", 0), Ok(86_400));
        assert_eq!(parse_when("1700000000", 0), Ok(1_700_000_000));
        for bad in ["-5d", "yesterday", "d", "1e20", "-1"] {
            assert!(parse_when(bad, 0).is_err(), "{bad}");
        }
    }
}
