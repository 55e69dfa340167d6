//! racehorse-report: compares runs ("scaled to base", with significance and summaries),
//! describes one run (one model, [`RunReport`], for both `report` and `show`), and renders
//! either as terminal text, markdown, csv, json or one self-contained HTML page with SVG charts.

// The rooms: what both compare and run use at the top (the vocabulary in `model`, what the
// report knows of engines in `catalogue`, trust marks, summed phases, profiles, environments),
// then `compare/` (many runs), `run/` (one run) and `render/` (documents and their renderers).
// Everything is crate-private behind this facade, but for history (a room other crates use
// as such), the rendering toolkit and synthetic runs for tests.
pub(crate) mod catalogue;
pub(crate) mod compare;
pub(crate) mod envdiff;
pub mod flame;
pub mod history;
pub(crate) mod model;
pub(crate) mod overall;
pub(crate) mod profile;
pub(crate) mod quality;
pub(crate) mod render;
pub(crate) mod run;
pub mod synth;

/// The rendering toolkit other crates lay out their own tables and pages with.
pub use render::{doc, escape, html, units};

pub use catalogue::{Catalogue, EngineEntry, EngineFacts};
pub use compare::cell::View;
pub use compare::charts::compare_charts;
pub use compare::comparison::{compare, CompareError, Comparison};
pub use compare::dimension::{slice_sides, split_run, By, DimensionError};
pub use compare::formats::{compare_csv, compare_json, compare_json_with};
pub use compare::gate::{regressions, Regression};
pub use compare::metric::CompareOptions;
pub use compare::profiles::{compare_profiles_blocks, compare_profiles_text};
pub use compare::profiles_json::compare_profiles_json;
pub use model::{Metric, Scope, Side, Verdict};
pub use run::areas::areas_text;
pub use run::json::show_json;
pub use run::report::{run_report, RunReport};
pub use run::view::ShowOptions;

/// Terminal text of a comparison.
pub fn compare_text(c: &Comparison, view: View) -> String {
    doc::to_text(&compare::layout::compare_doc(c, view, &|_| Vec::new()))
}

/// Markdown of a comparison.
pub fn compare_markdown(c: &Comparison, view: View) -> String {
    doc::to_markdown(&compare::layout::compare_doc(c, view, &|_| Vec::new()))
}

/// Self-contained HTML of a comparison, with charts.
pub fn compare_html(c: &Comparison, view: View) -> String {
    let blocks = compare::layout::compare_doc(c, view, &|t| compare_charts(c, t));
    html::page(&blocks.first().map_or_else(String::new, title_of), &blocks)
}

/// Self-contained HTML of a comparison with `extra` blocks after it (the profiles'
/// differential flame graphs, [`compare_profiles_blocks`]).
pub fn compare_html_with(c: &Comparison, view: View, extra: Vec<doc::Block>) -> String {
    let mut blocks = compare::layout::compare_doc(c, view, &|t| compare_charts(c, t));
    blocks.extend(extra);
    html::page(&blocks.first().map_or_else(String::new, title_of), &blocks)
}

/// Terminal text of a one-run report (`report RUN --format text`): `show`'s document under a
/// title, with phased workloads' summed points, the areas and the environment.
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
