//! `compare` and `report`: read runs from the store, build the comparison or the one-run
//! report, and render it in the chosen format to stdout or a file.

use crate::args::{CiMethodArg, Cli, CompareArgs, ReportArgs, ReportFormat};
use crate::catalogue::catalogue;
use crate::cmd_central::central_url;
use crate::cmd_run::open_store_read_only;
use crate::{CmdResult, Failure};
use anyhow::Context;
use racehorse_report::{
    compare_csv, compare_json_with, regressions, slice_sides, split_run, By, CompareOptions, Side, View,
};
use racehorse_stats::CiMethod;
use racehorse_store::{Store, StoreError};
use std::path::Path;

/// Images and symbols listed per profiled point in a comparison.
const PROFILE_TOP: usize = 10;

/// Exit code of `compare --fail-on-regression` when a significant regression was found.
pub const EXIT_REGRESSION: u8 = 3;

/// Resolves `RUN`, `RUN@VARIANT` or `FILE:RUN[@VARIANT]` (a run of another store file); a
/// key that names a run of the main store is always that run.
/// `series`: also read samples (the one-run report's monitor chart); latency histograms are
/// always read (compare compares their percentiles).
pub(crate) fn load_side(store: &Store, key: &str, series: bool) -> Result<Side, Failure> {
    let Some((path, run_key)) = other_store(store, key) else { return load_side_in(store, key, series) };
    let other = Store::open_read_only(path)
        .map_err(|e| Failure::usage(format!("{key}: {} is not a racehorse store: {e}", path.display())))?;
    let mut side = load_side_in(&other, run_key, series)?;
    side.scope.store = Some(path.display().to_string());
    Ok(side)
}

/// `FILE:RUN` when `key` names no run of the main store and the part before one of its
/// colons is an existing file.
fn other_store<'k>(store: &Store, key: &'k str) -> Option<(&'k Path, &'k str)> {
    if store.resolve_run(key).is_ok() {
        return None;
    }
    key.match_indices(':').map(|(i, _)| (Path::new(&key[..i]), &key[i + 1..])).find(|(p, _)| p.is_file())
}

fn load_side_in(store: &Store, key: &str, series: bool) -> Result<Side, Failure> {
    let (run, variant) = match store.resolve_run(key) {
        Ok(run) => (run, None),
        Err(first) => match key.rsplit_once('@') {
            Some((run_key, variant)) if !variant.is_empty() => {
                (store.resolve_run(run_key).map_err(Failure::usage)?, Some(variant.to_string()))
            }
            _ => return Err(usage_or_fail(first)),
        },
    };
    let cells = if series { store.run_cells(run.id) } else { store.run_cells_with_latencies(run.id) };
    let cells = cells.with_context(|| format!("reading the cells of run {}", run.id))?;
    Ok(Side { run, variant, cells, scope: Default::default() })
}

fn usage_or_fail(e: StoreError) -> Failure {
    match e {
        StoreError::UnknownRun { .. } => Failure::usage(e),
        other => Failure::from(anyhow::Error::new(other)),
    }
}

/// One run's variants as sides, in the order they ran; the first is the base.
fn variant_sides(side: Side) -> Result<(Side, Vec<Side>), Failure> {
    if side.variant.is_some() {
        return Err(Failure::usage("give the runs to compare with, e.g. `racehorse compare 7@a 7@b`"));
    }
    let mut names: Vec<String> = Vec::new();
    for c in &side.cells {
        if !names.contains(&c.spec.variant) {
            names.push(c.spec.variant.clone());
        }
    }
    if names.len() < 2 {
        return Err(Failure::usage(format!(
            "{} has {} variant(s); give a second run to compare with: racehorse compare {} OTHER",
            side.name(),
            names.len(),
            side.run.id
        )));
    }
    let with = |v: &String| Side { variant: Some(v.clone()), ..side.clone() };
    Ok((with(&names[0]), names[1..].iter().map(with).collect()))
}

fn chosen_format(format: Option<ReportFormat>, output: Option<&Path>) -> ReportFormat {
    format.unwrap_or_else(|| match output.and_then(|p| p.extension()).and_then(|e| e.to_str()) {
        Some("html" | "htm") => ReportFormat::Html,
        Some("md") => ReportFormat::Md,
        Some("csv") => ReportFormat::Csv,
        Some("json") => ReportFormat::Json,
        _ => ReportFormat::Text,
    })
}

fn emit(text: &str, output: Option<&Path>) -> Result<(), Failure> {
    match output {
        None => {
            print!("{text}");
            Ok(())
        }
        Some(p) => {
            racehorse_store::files::write_atomic(p, text.as_bytes()).with_context(|| {
                format!("writing {} (a file already there is kept as it was)", p.display())
            })?;
            eprintln!("wrote {} ({} KiB)", p.display(), text.len().div_ceil(1024));
            Ok(())
        }
    }
}

fn check_percent_and_level(level: f64, noisy_cv_pct: f64) -> Result<(), Failure> {
    if !(level > 0.0 && level < 1.0) {
        return Err(Failure::usage(format!(
            "--level must be between 0 and 1 (exclusive), e.g. 0.95; got {level}"
        )));
    }
    if !(noisy_cv_pct.is_finite() && noisy_cv_pct >= 0.0) {
        return Err(Failure::usage(format!(
            "--noisy-cv-pct must be a non-negative number; got {noisy_cv_pct}"
        )));
    }
    Ok(())
}

/// The base and new sides the arguments name (`base_key`, `new_keys`: the run keys in
/// `store`): runs, variants, or slices along `--by`.
fn sides(
    store: &Store,
    a: &CompareArgs,
    base_key: &str,
    new_keys: &[String],
) -> Result<(Side, Vec<Side>), Failure> {
    let by = a.by.as_deref().map(By::parse).transpose().map_err(Failure::usage)?;
    let base = load_side(store, base_key, false)?;
    if new_keys.is_empty() {
        return match &by {
            Some(by) => split_run(&base, by).map_err(Failure::usage),
            None => variant_sides(base),
        };
    }
    let news = new_keys.iter().map(|k| load_side(store, k, false)).collect::<Result<Vec<_>, _>>()?;
    match &by {
        Some(by) => slice_sides(&base, &news, by).map_err(Failure::usage),
        None => Ok((base, news)),
    }
}

/// The regression gate: the regressions on stderr and exit code 3, or 0 when none.
fn gate(c: &racehorse_report::Comparison, min_pct: Option<f64>) -> u8 {
    let Some(pct) = min_pct else { return 0 };
    let found = regressions(c, pct);
    if found.is_empty() {
        eprintln!("regression gate: no significant regression of {pct}% or more");
        return 0;
    }
    eprintln!("regression gate: {} significant regression(s) of {pct}% or more:", found.len());
    for r in &found {
        eprintln!("  {}", racehorse_report::escape::escape_control(&r.text()));
    }
    EXIT_REGRESSION
}

pub fn compare(cli: &Cli, a: &CompareArgs) -> CmdResult {
    check_percent_and_level(a.level, a.noisy_cv_pct)?;
    if let Some(p) = a.fail_on_regression.filter(|p| !(p.is_finite() && *p >= 0.0)) {
        return Err(Failure::usage(format!(
            "--fail-on-regression takes a percentage >= 0, e.g. 5 for a 5% loss; got {p}"
        )));
    }
    let (base, news) = match central_url(cli) {
        Some(url) => {
            let keys: Vec<String> = std::iter::once(a.base.clone()).chain(a.new.iter().cloned()).collect();
            let (store, keys) = crate::cmd_central::runs(&url, &keys)?;
            let (mut base, mut news) = sides(&store, a, &keys[0], &keys[1..])?;
            // Sides read from the central database are named by their host.
            for side in std::iter::once(&mut base).chain(news.iter_mut()) {
                if side.scope.store.is_none() {
                    side.scope.store = Some(format!("host {}", side.run.inventory_name));
                }
            }
            (base, news)
        }
        None => sides(&open_store_read_only(cli)?, a, &a.base, &a.new)?,
    };
    let opts = CompareOptions {
        level: a.level,
        ci_method: match a.ci_method {
            CiMethodArg::Welch => CiMethod::Welch,
            CiMethodArg::Bootstrap => CiMethod::Bootstrap,
        },
        noisy_cv: a.noisy_cv_pct / 100.0,
        ..CompareOptions::default()
    };
    let c = racehorse_report::compare(&base, &news, &opts, &catalogue()).map_err(Failure::usage)?;
    let view = View { absolute: a.absolute, ci: a.ci };
    let profiles: String =
        news.iter().map(|n| racehorse_report::compare_profiles_text(&base, n, PROFILE_TOP)).collect();
    let profiles = racehorse_report::escape::escape_lines(&profiles);
    let text = match chosen_format(a.format, a.output.as_deref()) {
        ReportFormat::Text => racehorse_report::compare_text(&c, view) + &profiles,
        ReportFormat::Md if profiles.is_empty() => racehorse_report::compare_markdown(&c, view),
        ReportFormat::Md => {
            racehorse_report::compare_markdown(&c, view)
                + "
```
" + profiles.trim()
                + "
```
"
        }
        ReportFormat::Csv => compare_csv(&c),
        ReportFormat::Json => {
            let profiles = news.iter().enumerate();
            let profiles =
                profiles.flat_map(|(i, n)| racehorse_report::compare_profiles_json(&base, n, i, PROFILE_TOP));
            compare_json_with(&c, profiles.collect())
        }
        ReportFormat::Html => {
            let flames =
                news.iter().flat_map(|n| racehorse_report::compare_profiles_blocks(&base, n, PROFILE_TOP));
            racehorse_report::compare_html_with(&c, view, flames.collect())
        }
    };
    emit(&text, a.output.as_deref())?;
    Ok(gate(&c, a.fail_on_regression))
}

pub fn report(cli: &Cli, a: &ReportArgs) -> CmdResult {
    check_percent_and_level(0.5, a.noisy_cv_pct)?;
    let (store, key) = match central_url(cli) {
        Some(url) => crate::cmd_central::one_run(&url, &a.run)?,
        None => (open_store_read_only(cli)?, a.run.clone()),
    };
    let side = load_side(&store, &key, true)?;
    if side.cells.is_empty() {
        return Err(Failure::usage(format!("{} has no cells yet; nothing to report", side.name())));
    }
    let r = racehorse_report::run_report(&side, a.noisy_cv_pct / 100.0, &catalogue());
    if r.tables.is_empty() {
        let v = side.variant.as_deref().unwrap_or("");
        return Err(Failure::usage(format!("{} has no cells of variant '{v}'", side.name())));
    }
    let text = match chosen_format(a.format, a.output.as_deref()) {
        ReportFormat::Text => racehorse_report::run_text(&r),
        ReportFormat::Md => racehorse_report::run_markdown(&r),
        ReportFormat::Html => racehorse_report::run_html(&r),
        ReportFormat::Json | ReportFormat::Csv => {
            return Err(Failure::usage(
                "for one run's data use `racehorse export RUN --format json|csv`; report renders text, md or html",
            ))
        }
    };
    emit(&text, a.output.as_deref())?;
    Ok(0)
}
