//! `racehorse profile RUN [POINT] [--svg FILE]`: one profiled point's call stacks, as its
//! hottest frames with their callers, or as a standalone flame graph.

use crate::args::Cli;
use crate::args_profile::ProfileArgs;
use crate::cmd_central::central_url;
use crate::cmd_compare::load_side;
use crate::cmd_run::open_store_read_only;
use crate::{CmdResult, Failure};
use anyhow::Context;
use racehorse_report::flame::{flame_chart, profiled_points, standalone, top_frames_text, ProfiledPoint};

fn choices(points: &[ProfiledPoint]) -> String {
    points.iter().map(|p| format!("\n  {}", p.label)).collect()
}

/// The one point `query` names among `points` (the only one when there is no query).
fn pick(points: Vec<ProfiledPoint>, query: Option<&str>, run: &str) -> Result<ProfiledPoint, Failure> {
    let found: Vec<&ProfiledPoint> = points.iter().filter(|p| query.is_none_or(|q| p.matches(q))).collect();
    match (found.len(), query) {
        (1, _) => Ok(found[0].clone()),
        (0, Some(q)) => Err(Failure::usage(format!(
            "no profiled point of {run} matches '{q}'; the profiled points are:{}",
            choices(&points)
        ))),
        (_, Some(q)) => Err(Failure::usage(format!(
            "'{q}' names {} profiled points of {run}; name one with more words, e.g. `racehorse profile {run} 'clients=4'`:{}",
            found.len(),
            choices(&found.into_iter().cloned().collect::<Vec<_>>())
        ))),
        (_, None) => Err(Failure::usage(format!(
            "{run} profiled {} points; name one, e.g. `racehorse profile {run} 'clients=4'`:{}",
            points.len(),
            choices(&points)
        ))),
    }
}

pub fn profile(cli: &Cli, a: &ProfileArgs) -> CmdResult {
    let (store, key) = match central_url(cli) {
        Some(url) => crate::cmd_central::one_run(&url, &a.run)?,
        None => (open_store_read_only(cli)?, a.run.clone()),
    };
    let side = load_side(&store, &key, false)?;
    let points = profiled_points(&side);
    if points.is_empty() {
        return Err(Failure::usage(format!(
            "{} was not profiled: run it again with --profile (call stacks with --profile callgraph=fp)",
            side.name()
        )));
    }
    let point = pick(points, a.point.as_deref(), &a.run)?;
    let Some(tree) = &point.tree else {
        return Err(Failure::usage(format!(
            "{}, {} was profiled without call chains: record with --profile callgraph=fp",
            side.name(),
            point.label
        )));
    };
    match &a.svg {
        Some(path) => {
            let title = format!("{}, {}", side.name(), point.label);
            let svg = standalone(&flame_chart(tree, &title, point.unit));
            racehorse_store::files::write_atomic(path, svg.as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
            eprintln!("wrote {} ({} KiB)", path.display(), svg.len().div_ceil(1024));
        }
        None => {
            println!("{}, {}", side.name(), point.label);
            print!("{}", racehorse_report::escape::escape_lines(&top_frames_text(tree, point.unit, a.top)));
        }
    }
    Ok(0)
}
