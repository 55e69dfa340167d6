//! `racehorse history`, `alerts`, `ack` and `hide`: series of a figure over runs, their change
//! points, and the ledger that remembers them (docs/history.md).

use crate::args_history::{AckArgs, AlertsArgs, Better, HideArgs, HistoryArgs, RunFilterArgs};
use crate::cmd_run::open_store_read_only;
use crate::{args::Cli, CmdResult, Failure};
use anyhow::Context;
use racehorse_core::Direction;
use racehorse_report::history::figure::SCANNED;
use racehorse_report::history::json::{document, Source};
use racehorse_report::history::ledger::{reconcile, records_for};
use racehorse_report::history::series::parse_when;
use racehorse_report::history::{
    self, analyse, Analysis, Figure, HistoryOptions, RunOrder, Selection, Series, WithLedger,
};
use racehorse_stats::changepoint::Options;
use racehorse_store::ledger::{ChangePointRecord, LedgerStatus};
use racehorse_store::{RunFilter, Store};
use std::path::Path;

fn now_unix_s() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// The run filters as the store takes them.
pub fn run_filter(a: &RunFilterArgs) -> Result<RunFilter, Failure> {
    let tags = a
        .tags
        .iter()
        .map(|t| racehorse_store::tags::parse_tag(t))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::usage)?;
    let when = |flag: &str, v: &Option<String>| {
        v.as_deref()
            .map(|t| parse_when(t, now_unix_s()).map_err(|e| Failure::usage(format!("--{flag} {e}"))))
            .transpose()
    };
    if a.limit == Some(0) {
        return Err(Failure::usage("--limit 0: give at least 1"));
    }
    Ok(RunFilter {
        label: a.label.clone(),
        tags,
        since_unix_s: when("since", &a.since)?,
        until_unix_s: when("until", &a.until)?,
        host: a.host.clone(),
        limit: a.limit,
    })
}

/// The detector's settings from the flags, checked.
fn detect_options(alpha: f64, min_segment: usize, permutations: u32, seed: u64) -> Result<Options, Failure> {
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(Failure::usage(format!("--alpha {alpha}: give a probability in (0, 1), e.g. 0.05")));
    }
    if !(1..=1000).contains(&min_segment) {
        return Err(Failure::usage(format!("--min-segment {min_segment}: give 1..1000 runs")));
    }
    if !(19..=100_000).contains(&permutations) {
        return Err(Failure::usage(format!("--permutations {permutations}: give 19..100000")));
    }
    if alpha * f64::from(permutations + 1) < 1.0 {
        return Err(Failure::usage(format!(
            "--alpha {alpha} needs at least {} permutations (the smallest p-value is 1/(N+1))",
            (1.0 / alpha).ceil() as u64 - 1
        )));
    }
    Ok(Options { alpha, min_segment, permutations, seed, ..Options::default() })
}

/// The store for history: writable (for the ledger) unless asked not to or not possible.
fn history_store(cli: &Cli, ledger: bool) -> Result<(Store, bool), Failure> {
    let path = cli.db.clone().unwrap_or_else(racehorse_store::default_path);
    if !ledger || !path.exists() {
        return Ok((open_store_read_only(cli)?, false));
    }
    match Store::open(&path) {
        Ok(s) => Ok((s, true)),
        Err(e) => {
            eprintln!("note: the ledger is not updated ({e}); change points are shown only");
            Ok((open_store_read_only(cli)?, false))
        }
    }
}

pub fn history(cli: &Cli, a: &HistoryArgs) -> CmdResult {
    let opts = detect_options(a.alpha, a.min_segment, a.permutations, a.seed)?;
    if let Some(path) = &a.csv {
        return history_csv(a, path, opts);
    }
    let sel = selection(a)?;
    let central = crate::cmd_central::central_url(cli);
    let (store, writable, workloads) = match &central {
        Some(url) => {
            let (store, workloads) = central_copy(url, &sel)?;
            (store, !a.no_ledger, workloads)
        }
        None => {
            let (store, writable) = history_store(cli, !a.no_ledger)?;
            (store, writable, None)
        }
    };
    let anchor_run = match &a.anchor {
        Some(key) => Some(store.resolve_run(key).map_err(Failure::usage)?.id),
        None => None,
    };
    let got = history::collect(&store, &sel, &engine_direction).context("reading the series")?;
    if got.runs_without_order_tag > 0 {
        eprintln!("note: {} runs have no tag to order them by and are left out", got.runs_without_order_tag);
    }
    if got.series.is_empty() {
        return nothing_matches(&store, workloads, a, got.runs_read);
    }
    let points = distinct_points(&got.series);
    let hopts = HistoryOptions { detect: opts, anchor_run };
    let mut analyses = Vec::new();
    for s in got.series {
        let what = format!("{} on {} ({})", s.key.point(), s.key.host, s.key.figure.name());
        let (usable, left): (usize, usize) = s.runs.iter().fold((0, 0), |(u, l), r| {
            (u + usize::from(!r.values.is_empty()), l + r.noisy + r.below_resolution + r.failed)
        });
        match analyse(s, &hopts) {
            Some(x) => analyses.push(x),
            None if !a.json => eprintln!(
                "{what}: {usable} runs with a usable repetition, too few for a history ({left} repetitions left out as noisy, below resolution or failed)"
            ),
            None => {}
        }
    }
    let mut with_ledger = keep_ledger(&store, writable, &analyses)?;
    if let (Some(url), true) = (&central, writable) {
        with_ledger = push_ledger(url, &store, with_ledger)?;
    }
    let detailed = a.workload.is_some() && points == 1;
    let shown: Vec<WithLedger> =
        with_ledger.into_iter().filter(|(x, _)| detailed || !x.changes.is_empty()).collect();
    output(a, &shown, detailed, Source::Store)
}

/// With a central database: an in-memory store holding the runs that pass the selection's
/// run filter (with their tags), the cells of the points it names (every cell when it names
/// none), and the whole central ledger, which history analyses as it would a SQLite store;
/// with the central store's workloads when it copied only some points.
fn central_copy(url: &str, sel: &Selection) -> Result<(Store, Option<Vec<String>>), Failure> {
    use crate::cmd_central::failure;
    let mut reader = racehorse_central::read::Reader::open(url).map_err(failure)?;
    let store = Store::open_in_memory().context("creating the in-memory store")?;
    let (keys, workloads) = match sel.workload.is_some() || sel.variant.is_some() || !sel.params.is_empty() {
        true => {
            let points = reader.points().map_err(failure)?;
            let mut workloads: Vec<String> =
                points.iter().map(|(k, _)| k.split('|').next().unwrap_or_default().to_string()).collect();
            workloads.sort();
            workloads.dedup();
            (Some(selected_points(points, sel)), Some(workloads))
        }
        false => (None, None),
    };
    let mut runs = reader.runs_where(&sel.runs, None).map_err(failure)?;
    // Oldest first, so that runs started in the same second keep their order in the copy.
    runs.sort_by(|a, b| {
        (a.started_at_unix_s, &a.inventory_name, a.source_id).cmp(&(
            b.started_at_unix_s,
            &b.inventory_name,
            b.source_id,
        ))
    });
    reader.copy_runs_into(&runs, keys.as_deref(), &store).map_err(failure)?;
    for p in reader.ledger().map_err(failure)? {
        store.merge_change_point(&p).context("copying the ledger")?;
    }
    Ok((store, workloads))
}

/// The match keys of the points `sel` reads, from the central store's points and their
/// parameters (a key is `workload|variant|name=value|…`).
fn selected_points(points: Vec<(String, serde_json::Value)>, sel: &Selection) -> Vec<String> {
    points
        .into_iter()
        .filter(|(key, params)| {
            let mut parts = key.splitn(3, '|');
            let (workload, variant) = (parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
            let params: racehorse_core::Params = serde_json::from_value(params.clone()).unwrap_or_default();
            history::point_selected(workload, variant, &params, sel)
        })
        .map(|(key, _)| key)
        .collect()
}

/// Writes what the analysis added or changed in the copy's ledger back to the central
/// database, and answers with the central ledger's records (and its ids).
fn push_ledger(url: &str, copy: &Store, analysed: Vec<WithLedger>) -> Result<Vec<WithLedger>, Failure> {
    use crate::cmd_central::failure;
    let mut loader = racehorse_central::Loader::open(url).map_err(failure)?;
    loader.merge_change_points(&copy.change_points(None).context("reading the ledger")?).map_err(failure)?;
    let central = racehorse_central::read::Reader::open(url).and_then(|mut r| r.ledger()).map_err(failure)?;
    Ok(analysed
        .into_iter()
        .map(|(a, _)| {
            let recs = records_for(&a, &central);
            (a, recs)
        })
        .collect())
}

/// An engine figure's declaration (direction, unit), as its engine states it.
fn engine_direction(workload: &str, key: &str) -> Option<racehorse_core::Figure> {
    let engine = racehorse_engines::find(workload)?;
    racehorse_core::figure::figure_of(engine.info().figures, key).copied()
}

fn selection(a: &HistoryArgs) -> Result<Selection, Failure> {
    let params = a
        .params
        .iter()
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| Failure::usage(format!("-p {p:?}: expected NAME=VALUE, e.g. -p clients=4")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut figures =
        a.figures.iter().map(|f| Figure::parse(f)).collect::<Result<Vec<_>, _>>().map_err(Failure::usage)?;
    if figures.is_empty() {
        figures = if a.workload.is_some() { SCANNED[..2].to_vec() } else { SCANNED.to_vec() };
    }
    let order = match a.order_by.as_deref() {
        None | Some("time") | Some("started") => RunOrder::Started,
        Some(o) => match o.strip_prefix("tag:").filter(|k| !k.is_empty()) {
            Some(k) => RunOrder::Tag(k.to_string()),
            None => {
                return Err(Failure::usage(format!(
                    "--order-by {o:?}: use tag:KEY (e.g. tag:commit) or time"
                )))
            }
        },
    };
    Ok(Selection {
        runs: run_filter(&a.runs)?,
        workload: a.workload.clone(),
        params,
        variant: a.variant.clone(),
        figures,
        order,
    })
}

fn distinct_points(series: &[Series]) -> usize {
    let mut keys: Vec<(String, String)> = series
        .iter()
        .map(|s| {
            (
                s.key.host.clone(),
                s.key.text().rsplit_once('|').map(|(p, _)| p.to_string()).unwrap_or_default(),
            )
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys.len()
}

/// No series: say why, and for an unknown workload which ones the store has.
/// `workloads`: every workload of the central store, when the copy holds only some points.
fn nothing_matches(store: &Store, workloads: Option<Vec<String>>, a: &HistoryArgs, runs: usize) -> CmdResult {
    if runs == 0 {
        println!("no runs match; list them with `racehorse list` (and the same filters)");
        return Ok(0);
    }
    if let Some(w) = &a.workload {
        let known = match workloads {
            Some(w) => w,
            None => store.workloads().context("listing workloads")?,
        };
        if !known.contains(w) {
            return Err(Failure::usage(format!(
                "no cells of workload {w:?} in the runs selected; the store has: {}",
                known.join(", ")
            )));
        }
        println!("no cells of {w} match these parameters, variant and figures in {runs} runs");
    } else {
        println!("no series in {runs} runs");
    }
    Ok(0)
}

/// Brings the ledger in step with the analyses (when the store is writable) and returns each
/// analysis with its confirmed changes' records.
fn keep_ledger(store: &Store, writable: bool, analyses: &[Analysis]) -> Result<Vec<WithLedger>, Failure> {
    let mut out = Vec::new();
    for a in analyses {
        let key = a.series.key.text();
        let stored = store.change_points(Some(&key)).context("reading the ledger")?;
        if writable {
            let mut uuid = || racehorse_store::fleet::new_uuid().unwrap_or_default();
            for rec in reconcile(a, &stored, now_unix_s(), &mut uuid) {
                store.save_change_point(&rec).context("writing the ledger")?;
            }
        }
        let stored = store.change_points(Some(&key)).context("reading the ledger")?;
        out.push((a.clone(), records_for(a, &stored)));
    }
    Ok(out)
}

fn history_csv(a: &HistoryArgs, path: &Path, opts: Options) -> CmdResult {
    let metric =
        a.metric.as_deref().ok_or_else(|| Failure::usage("--csv needs --metric NAME (a numeric column)"))?;
    let meta = std::fs::metadata(path)
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", path.display())))?;
    if meta.len() > history::csv::MAX_CSV_BYTES as u64 {
        return Err(Failure::usage(format!(
            "{}: larger than {} bytes",
            path.display(),
            history::csv::MAX_CSV_BYTES
        )));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", path.display())))?;
    let req =
        history::csv::CsvRequest { metric, time_column: Some(&a.time_column), attributes: &a.attributes };
    let csv =
        history::csv::parse(&text, &req).map_err(|e| Failure::usage(format!("{}: {e}", path.display())))?;
    let direction = match a.better {
        Better::Higher => Direction::HigherIsBetter,
        Better::Lower => Direction::LowerIsBetter,
    };
    let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("csv");
    let series = Series::from_csv(&csv, name, direction);
    let analysis = analyse(series, &HistoryOptions { detect: opts, anchor_run: None })
        .ok_or_else(|| Failure::usage("the series needs at least 2 runs with a value"))?;
    if csv.empty_cells > 0 && !a.json {
        eprintln!("note: {} rows with an empty {metric} were left out", csv.empty_cells);
    }
    output(a, &[(analysis, Vec::new())], true, Source::Csv)
}

/// Prints or writes the analyses: detailed (one point) or as a listing of change points.
fn output(a: &HistoryArgs, shown: &[WithLedger], detailed: bool, source: Source) -> CmdResult {
    use racehorse_report::history::view::{listing_blocks, series_blocks};
    if a.json {
        let doc = document(shown, source);
        println!("{}", serde_json::to_string_pretty(&doc).context("encoding JSON")?);
        return Ok(0);
    }
    let title = "racehorse history".to_string();
    let mut blocks = vec![racehorse_report::doc::Block::Heading(1, title.clone())];
    if detailed {
        for (x, l) in shown {
            blocks.extend(series_blocks(x, l));
        }
    } else if shown.is_empty() {
        blocks.push(racehorse_report::doc::Block::Para("no change points in the series selected".into()));
    } else {
        blocks.extend(listing_blocks(
            &shown.iter().map(|(x, _)| x.clone()).collect::<Vec<_>>(),
            "change points, most significant first",
        ));
    }
    let Some(path) = &a.output else {
        print!("{}", racehorse_report::doc::to_text(&blocks));
        return Ok(0);
    };
    let text = match path.extension().and_then(|e| e.to_str()) {
        Some("html") | Some("htm") => racehorse_report::html::page(&title, &blocks),
        Some("md") => racehorse_report::doc::to_markdown(&blocks),
        _ => racehorse_report::doc::to_text(&blocks),
    };
    racehorse_store::files::write_atomic(path, text.as_bytes())
        .with_context(|| format!("writing {} (a file already there is kept as it was)", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(0)
}

pub fn alerts(cli: &Cli, a: &AlertsArgs) -> CmdResult {
    let opts = detect_options(a.alpha, a.min_segment, 199, 0)?;
    let sel = Selection { runs: run_filter(&a.runs)?, figures: SCANNED.to_vec(), ..Selection::default() };
    let central = crate::cmd_central::central_url(cli);
    let (store, writable) = match &central {
        Some(url) => (central_copy(url, &sel)?.0, true),
        None => history_store(cli, true)?,
    };
    let got = history::collect(&store, &sel, &engine_direction).context("reading the series")?;
    let hopts = HistoryOptions { detect: opts, anchor_run: None };
    let analyses: Vec<Analysis> = got.series.into_iter().filter_map(|s| analyse(s, &hopts)).collect();
    let kept = keep_ledger(&store, writable, &analyses)?;
    let mut records = match &central {
        Some(url) => {
            push_ledger(url, &store, kept)?;
            let mut reader =
                racehorse_central::read::Reader::open(url).map_err(crate::cmd_central::failure)?;
            reader.ledger().map_err(crate::cmd_central::failure)?
        }
        None => store.change_points(None).context("reading the ledger")?,
    };
    records.retain(|r| (a.all || r.status == LedgerStatus::New) && (!a.worse || r.direction == "worse"));
    let new = records.iter().filter(|r| r.status == LedgerStatus::New).count();
    if a.json {
        let doc = serde_json::json!({ "format": "racehorse-alerts", "version": 1, "alerts": records.iter().map(alert_json).collect::<Vec<_>>() });
        println!("{}", serde_json::to_string_pretty(&doc).context("encoding JSON")?);
    } else {
        print_alerts(&store, &records);
    }
    Ok(if a.fail_on_new && new > 0 { 3 } else { 0 })
}

fn alert_json(r: &ChangePointRecord) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap_or_default();
    v["id"] = serde_json::json!(r.id);
    v
}

fn print_alerts(store: &Store, records: &[ChangePointRecord]) {
    if records.is_empty() {
        println!("no new change points");
        return;
    }
    let run_of = |uuid: &str| {
        store.run_by_uuid_prefix(uuid).ok().flatten().map(|r| r.id.to_string()).unwrap_or_else(|| "?".into())
    };
    let mut t = racehorse_report::doc::Table::new(
        &["id", "status", "point", "host", "figure", "before", "after", "change", "ratio", "p", "reason"],
        5,
    );
    for r in records {
        let point = format!("{} {}", r.workload, params_text(&r.params_json));
        t.row(vec![
            r.id.to_string(),
            r.status.as_str().to_string(),
            point.trim().to_string(),
            r.host.clone(),
            r.figure.clone(),
            run_of(&r.before_run_uuid),
            run_of(&r.after_run_uuid),
            format!("{} {}", racehorse_report::units::pct((r.ratio - 1.0) * 100.0), r.direction),
            racehorse_report::units::ratio(r.ratio),
            format!("{:.3}", r.p_value),
            r.reason.clone().unwrap_or_default(),
        ]);
    }
    print!("{}", t.render());
}

fn params_text(json: &str) -> String {
    let params: racehorse_core::Params = serde_json::from_str(json).unwrap_or_default();
    params
        .iter()
        .map(|(k, v)| format!("{k}={}", racehorse_core::params::display_value(k, v)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn ledger_store(cli: &Cli) -> Result<Store, Failure> {
    let path = cli.db.clone().unwrap_or_else(racehorse_store::default_path);
    if !path.exists() {
        return Err(Failure::usage(format!("no store at {}: nothing to acknowledge", path.display())));
    }
    Store::open(&path).with_context(|| format!("opening the store {}", path.display())).map_err(Failure::from)
}

fn set_status(
    cli: &Cli,
    id: i64,
    status: LedgerStatus,
    reason: Option<&str>,
    link: Option<&str>,
) -> CmdResult {
    if let Some(url) = crate::cmd_central::central_url(cli) {
        let mut reader = racehorse_central::read::Reader::open(&url).map_err(crate::cmd_central::failure)?;
        reader.set_change_point_status(id, status, reason, link).map_err(crate::cmd_central::failure)?;
        println!("change point {id}: {}", status.as_str());
        return Ok(0);
    }
    let store = ledger_store(cli)?;
    match store.set_change_point_status(id, status, reason, link) {
        Ok(()) => {
            println!("change point {id}: {}", status.as_str());
            Ok(0)
        }
        Err(
            e @ (racehorse_store::StoreError::UnknownChangePoint(_) | racehorse_store::StoreError::BadTag(_)),
        ) => Err(Failure::usage(e)),
        Err(e) => Err(anyhow::Error::new(e).context("writing the ledger").into()),
    }
}

pub fn ack(cli: &Cli, a: &AckArgs) -> CmdResult {
    if a.reason.trim().is_empty() {
        return Err(Failure::usage("--reason: say why the change is accepted"));
    }
    set_status(cli, a.id, LedgerStatus::Acknowledged, Some(&a.reason), a.link.as_deref())
}

pub fn hide(cli: &Cli, a: &HideArgs) -> CmdResult {
    set_status(cli, a.id, LedgerStatus::Hidden, a.reason.as_deref(), None)
}
