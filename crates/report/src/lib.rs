//! racehorse-report: compares runs ("scaled to base", with significance and summaries),
//! describes one run (one model, [`RunReport`], for both `report` and `show`), and renders
//! either as terminal text, markdown, csv, json or one self-contained HTML page with SVG charts.

pub mod catalogue;
pub mod compare;
pub mod envdiff;
pub mod history;
pub mod model;
pub mod overall;
pub mod profile;
pub mod quality;
pub mod render;
pub mod run;

pub use compare::{charts, dimension, flat, formats, item_layout, items, layout, ramps, summary, verdicts};
pub use render::{doc, escape, html, units};
pub use run::{areas as runareas, json as runview_json, report as runreport, view as runview};

pub use catalogue::{Catalogue, EngineEntry, EngineFacts};
pub use compare::cell::View;
pub use compare::comparison::{compare, CompareError, Comparison};
pub use compare::metric::CompareOptions;
pub use model::{Metric, Scope, Side, Verdict};
pub use run::report::{run_report, RunReport};
pub use run::view::ShowOptions;

/// Terminal text of a comparison.
pub fn compare_text(c: &Comparison, view: View) -> String {
    doc::to_text(&layout::compare_doc(c, view, &|_| Vec::new()))
}

/// Markdown of a comparison.
pub fn compare_markdown(c: &Comparison, view: View) -> String {
    doc::to_markdown(&layout::compare_doc(c, view, &|_| Vec::new()))
}

/// Self-contained HTML of a comparison, with charts.
pub fn compare_html(c: &Comparison, view: View) -> String {
    let blocks = layout::compare_doc(c, view, &|t| charts::compare_charts(c, t));
    html::page(&blocks.first().map_or_else(String::new, title_of), &blocks)
}

/// Terminal text of a one-run report (`report RUN --format text`): `show`'s document under a
/// title, with phased workloads' summed points and the environment.
pub fn run_text(r: &RunReport) -> String {
    doc::to_text(&run::view::report_blocks(r, &|_| Vec::new()))
}

/// Markdown of a one-run report.
pub fn run_markdown(r: &RunReport) -> String {
    doc::to_markdown(&run::view::report_blocks(r, &|_| Vec::new()))
}

/// Terminal text of one run as `racehorse show` prints it: every point in the order it ran,
/// with `reps` a line per repetition.
pub fn show_text(r: &RunReport, reps: bool) -> String {
    show_text_with(r, ShowOptions { reps, latency: false })
}

/// Terminal text of one run as `racehorse show` prints it with `opts`. Every label,
/// parameter, variant name and error text has its control characters escaped.
pub fn show_text_with(r: &RunReport, opts: ShowOptions) -> String {
    doc::to_text(&run::view::show_blocks(r, opts))
}

/// Self-contained HTML of a one-run report, with charts.
pub fn run_html(r: &RunReport) -> String {
    let blocks = run::view::report_blocks(r, &run::charts::run_charts);
    html::page(&blocks.first().map_or_else(String::new, title_of), &blocks)
}

fn title_of(b: &doc::Block) -> String {
    match b {
        doc::Block::Heading(_, t) => t.clone(),
        _ => String::new(),
    }
}

pub mod synth;
