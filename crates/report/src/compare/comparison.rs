//! Matching cells of a base side with one or more new sides and comparing every metric
//! ([`crate::compare::metric`]) and item ([`crate::compare::items`]) of every matched point,
//! then the corrections, counts and summaries over them: everything `racehorse compare` shows,
//! as one [`Comparison`].

use crate::catalogue::EngineFacts;
use crate::compare::metric::{metric_compare, CompareOptions, MetricCompare};
use crate::compare::summary::{by_area, overall, summarise, AreaSummary, Overall, SummaryRow};
use crate::compare::table::{Row, SideCell, WorkloadTable};
use crate::compare::verdicts::{correct, correct_items, count_verdicts, SideVerdicts};
use crate::envdiff::{env_diff, EnvDelta};
use crate::model::{group_cells, params_label, split_params, Group, GroupKey, Metric, Side, SideInfo};
use crate::overall::overall_cells;
use racehorse_core::{Figure, WorkUnit};
use std::collections::{BTreeMap, BTreeSet};

/// Everything `racehorse compare` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub base: SideInfo,
    pub news: Vec<SideInfo>,
    pub options: CompareOptions,
    pub tables: Vec<WorkloadTable>,
    /// Seed-000-style summary, per new side and workload.
    pub summary: Vec<SummaryRow>,
    /// Geometric means per area, per new side.
    pub areas: Vec<AreaSummary>,
    /// Geometric means over all workloads, per new side.
    pub overall: Vec<Overall>,
    /// Per new side: how many points are significant, noisy, below resolution.
    pub verdicts: Vec<SideVerdicts>,
    /// What differs in the environment, per new side.
    pub env_diff: Vec<Vec<EnvDelta>>,
    /// Matrix points only in base, and only in each new side (labels).
    pub only_base: Vec<String>,
    pub only_new: Vec<Vec<String>>,
    /// Load ramps (re-aim's users): the highest load each side reached, per new side.
    pub ramps: Vec<crate::compare::ramps::RampCompare>,
}

/// Why two sides cannot be compared.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CompareError {
    #[error("{name} has no cells{hint}")]
    Empty { name: String, hint: String },
    #[error(
        "{base_name} and {new_name} have no cells in common (same workload and parameters).\n  \
         {base_name}: {base}\n  {new_name}: {new}\n\
         {hint}Compare runs of the same suite, variants inside one run with RUN@VARIANT, or the \
         values of one parameter with --by NAME."
    )]
    NothingInCommon { base_name: String, new_name: String, base: String, new: String, hint: String },
}

/// Compares `base` with each of `news`. `engines` says what each workload's engine declares:
/// its area, its points' areas in seed 000's summary ("Scaling CPU and processes", "Disk
/// I/O" …) and its figures (see [`crate::Catalogue`]).
pub fn compare<'s>(
    base: &'s Side,
    news: &'s [Side],
    opts: &CompareOptions,
    engines: &dyn EngineFacts,
) -> Result<Comparison, CompareError> {
    let by_variant = base.variant.is_none() && news.iter().all(|s| s.variant.is_none());
    let narrow = |s: &'s Side| -> Vec<&'s racehorse_core::CellResult> {
        let want = s.variant.clone().or_else(|| (!by_variant).then(|| "default".to_string()));
        s.cells.iter().filter(|c| want.iter().all(|v| &c.spec.variant == v)).collect()
    };
    let base_cells = narrow(base);
    check_nonempty(base, &base_cells)?;
    let new_cells: Vec<_> = news.iter().map(narrow).collect();
    for (s, cells) in news.iter().zip(&new_cells) {
        check_nonempty(s, cells)?;
    }
    // Seed 001's overall rows for phased workloads, compared like any other point.
    let base_overall = overall_cells(base_cells.iter().copied());
    let new_overall: Vec<Vec<_>> = new_cells.iter().map(|c| overall_cells(c.iter().copied())).collect();
    let base_cells: Vec<_> = base_cells.into_iter().chain(&base_overall).collect();
    let new_cells: Vec<Vec<_>> =
        new_cells.into_iter().zip(&new_overall).map(|(c, o)| c.into_iter().chain(o).collect()).collect();
    let base_groups = group_cells(base_cells.iter().copied(), by_variant);
    let new_groups: Vec<_> = new_cells.iter().map(|c| group_cells(c.iter().copied(), by_variant)).collect();
    for (s, g) in news.iter().zip(&new_groups) {
        if !g.keys().any(|k| base_groups.contains_key(k)) {
            return Err(CompareError::NothingInCommon {
                base_name: base.name(),
                new_name: s.name(),
                base: describe(&base_groups),
                new: describe(g),
                hint: crate::compare::dimension::hint_for_nothing_in_common(&base_groups, g),
            });
        }
    }
    let mut tables = build_tables(&base_groups, &new_groups, opts, engines);
    correct(&mut tables, news.len(), 1.0 - opts.level);
    correct_items(&mut tables, news.len(), 1.0 - opts.level);
    let ramps = crate::compare::ramps::compare_ramps(&base_groups, &new_groups);
    let verdicts = count_verdicts(&tables, news.len());
    let summary = summarise(&tables, news.len());
    let overall = overall(&tables, news.len());
    let areas = by_area(&tables, news.len());
    let only_base = base_groups
        .keys()
        .filter(|k| !new_groups.iter().any(|g| g.contains_key(*k)))
        .map(key_label)
        .collect();
    let only_new = new_groups
        .iter()
        .map(|g| g.keys().filter(|k| !base_groups.contains_key(*k)).map(key_label).collect())
        .collect();
    Ok(Comparison {
        base: SideInfo::of(base),
        news: news.iter().map(SideInfo::of).collect(),
        options: *opts,
        tables,
        summary,
        areas,
        overall,
        verdicts,
        env_diff: news.iter().map(|n| side_env_diff(base, n)).collect(),
        only_base,
        only_new,
        ramps,
    })
}

/// The environment diff of two sides, with the variant when either side names one (the
/// variants of one run share its captured environment).
fn side_env_diff(base: &Side, new: &Side) -> Vec<EnvDelta> {
    let mut d = env_diff(&base.run, &new.run);
    let warned = |s: &Side| crate::quality::exclusivity_warnings(&s.run.exclusivity_json);
    let (bw, nw) = (warned(base), warned(new));
    let same_run = base.run.id == new.run.id && base.scope.store == new.scope.store;
    if !same_run && bw != nw {
        let text = |w: Vec<String>| if w.is_empty() { "(none)".to_string() } else { w.join("; ") };
        d.push(EnvDelta { key: "exclusivity warnings".into(), base: text(bw), new: text(nw) });
    }
    if base.variant != new.variant {
        let name = |s: &Side| s.variant.clone().unwrap_or_else(|| "(all)".into());
        let (bs, ns) = (side_settings(base), side_settings(new));
        let keys: BTreeSet<&String> = bs.keys().chain(ns.keys()).collect();
        let shown = |m: &std::collections::BTreeMap<String, String>, k: &String| {
            m.get(k).cloned().unwrap_or_else(|| "(as found)".into())
        };
        let settings = keys.into_iter().filter(|k| bs.get(*k) != ns.get(*k)).map(|k| EnvDelta {
            key: format!("set {k}"),
            base: shown(&bs, k),
            new: shown(&ns, k),
        });
        let mut front = vec![EnvDelta { key: "variant".into(), base: name(base), new: name(new) }];
        front.extend(settings);
        d.splice(0..0, front);
    }
    if let (Some((name, b)), Some((_, n))) = (&base.scope.by, &new.scope.by) {
        d.insert(0, EnvDelta { key: format!("by {name}"), base: b.clone(), new: n.clone() });
    }
    d
}

/// What a side's variant set on the machine (its cells' recorded settings); empty when the
/// side is a whole run.
fn side_settings(side: &Side) -> std::collections::BTreeMap<String, String> {
    let Some(v) = &side.variant else { return Default::default() };
    side.cells.iter().filter(|c| &c.spec.variant == v).flat_map(|c| c.settings.clone()).collect()
}

fn check_nonempty(side: &Side, cells: &[&racehorse_core::CellResult]) -> Result<(), CompareError> {
    if !cells.is_empty() {
        return Ok(());
    }
    let variants: BTreeSet<&str> = side.cells.iter().map(|c| c.spec.variant.as_str()).collect();
    let hint = if side.cells.is_empty() {
        String::new()
    } else {
        format!(" of that variant; its variants are: {}", variants.into_iter().collect::<Vec<_>>().join(", "))
    };
    Err(CompareError::Empty { name: side.name(), hint })
}

fn key_label(k: &GroupKey) -> String {
    let names: Vec<String> = k.params.keys().cloned().collect();
    let mut s = format!("{} {}", k.workload, params_label(&k.params, &names));
    if !k.variant.is_empty() {
        s.push_str(&format!(" [{}]", k.variant));
    }
    s.trim_end().to_string()
}

/// `fileserver (clients=1,4; cpus=1,2), null (rate=…)`: what a side holds, for errors.
pub fn describe(groups: &BTreeMap<GroupKey, Group<'_>>) -> String {
    let mut per: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for k in groups.keys() {
        let w = per.entry(k.workload.clone()).or_default();
        for (n, v) in &k.params {
            w.entry(n.clone()).or_default().insert(crate::model::shown(n, v));
        }
        if !k.variant.is_empty() {
            w.entry("variant".into()).or_default().insert(k.variant.clone());
        }
    }
    per.iter()
        .map(|(w, axes)| {
            let a: Vec<String> = axes
                .iter()
                .map(|(n, vals)| format!("{n}={}", vals.iter().cloned().collect::<Vec<_>>().join(",")))
                .collect();
            format!("{w} ({})", a.join("; "))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A table's identity: workload, variant and unit.
type TableKey = (String, String, &'static str);

fn build_tables(
    base: &BTreeMap<GroupKey, Group<'_>>,
    news: &[BTreeMap<GroupKey, Group<'_>>],
    opts: &CompareOptions,
    engines: &dyn EngineFacts,
) -> Vec<WorkloadTable> {
    // Rows per (workload, variant), in key order.
    // Per (workload, variant, unit): an engine may count bytes in some cells, ops in others.
    let mut by_table: BTreeMap<TableKey, Vec<(&GroupKey, &Group<'_>)>> = BTreeMap::new();
    for (k, g) in base {
        if news.iter().any(|n| n.contains_key(k)) {
            by_table
                .entry((k.workload.clone(), k.variant.clone(), g.unit.as_str()))
                .or_default()
                .push((k, g));
        }
    }
    by_table
        .into_iter()
        .map(|((workload, variant, _), groups)| {
            let (columns, constant) = split_params(groups.iter().map(|(k, _)| &k.params));
            let figures = engines.figures(&workload);
            let rows = groups
                .iter()
                .map(|(k, g)| Row {
                    params: k.params.clone(),
                    label: params_label(&k.params, &columns),
                    area: engines.summary_area(&workload, &k.params),
                    base_not_ok: g.not_ok,
                    base_outlier_reps: g.outlier_reps(),
                    base_noisy_reps: g.noisy_reps(),
                    base_qos_failed_reps: g.qos_failed_reps(),
                    sides: news.iter().map(|n| n.get(*k).map(|ng| side_cell(g, ng, opts, figures))).collect(),
                })
                .collect();
            let unit = groups.first().map(|(_, g)| g.unit).unwrap_or(WorkUnit::Ops);
            WorkloadTable { area: engines.area(&workload), workload, variant, unit, columns, constant, rows }
        })
        .collect()
}

/// One matched point on one new side. A figure below resolution on either side shows no
/// number; a noisy repetition on either side leaves every metric unjudged (no `*`, no verdict).
fn side_cell(base: &Group<'_>, new: &Group<'_>, opts: &CompareOptions, figures: &[Figure]) -> SideCell {
    let noisy_reps = new.noisy_reps();
    let noisy_window = !noisy_reps.is_empty() || !base.noisy_reps().is_empty();
    let metrics = Metric::ALL
        .iter()
        .map(|&m| {
            if base.below(m) || new.below(m) {
                return MetricCompare::below_resolution(m);
            }
            let mut mc = metric_compare(m, &base.values(m), &new.values(m), opts);
            if noisy_window {
                mc.noisy_window = true;
                mc.significant = None;
                mc.verdict = None;
            }
            mc
        })
        .collect();
    let items = crate::compare::items::item_compares(base, new, noisy_window, opts, figures);
    SideCell {
        metrics,
        not_ok: new.not_ok,
        outlier_reps: new.outlier_reps(),
        noisy_reps,
        qos_failed_reps: new.qos_failed_reps(),
        items,
    }
}
