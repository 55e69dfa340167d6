//! A bisect's answer: each change with the candidate before and after it (for commits their
//! sha, subject, author and date; a range when unbuildable commits surround it), the
//! comparison of their runs (compare's table, scaled to base), undecided pairs, and what the
//! search spent; as text or as `racehorse-bisect` JSON (docs/formats.md). Recorded with the
//! bisect in the store.

use crate::bisect_step::{short, Plan};
use crate::{CmdResult, Failure};
use anyhow::Context;
use racehorse_bisect::git;
use racehorse_bisect::search::Change;
use racehorse_bisect::{Outcome, Search};
use racehorse_store::Store;
use serde_json::{json, Value as Json};
use std::process::Command;

pub const FORMAT_NAME: &str = "racehorse-bisect";
pub const FORMAT_VERSION: u32 = 1;

/// The newest run that measured candidate `i` of bisect `id`.
fn run_of(store: &Store, id: i64, i: usize) -> Option<i64> {
    let steps = store.bisect_steps(id).ok()?;
    steps.iter().rev().find(|s| s.candidate == i).and_then(|s| s.run_id)
}

/// `racehorse compare BEFORE AFTER` on the bisect's store, as text or JSON.
fn compare_runs(plan: &Plan, before: i64, after: i64, json_out: bool) -> Result<String, Failure> {
    let mut cmd = Command::new(std::env::current_exe().context("locating racehorse")?);
    cmd.arg("--db").arg(&plan.db).args(["compare", &before.to_string(), &after.to_string()]);
    if json_out {
        cmd.args(["--format", "json"]);
    }
    let out = cmd.output().context("running compare")?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn candidate_json(plan: &Plan, i: usize) -> Json {
    let c = &plan.candidates[i];
    match &plan.repo {
        Some(repo) => match git::info(repo, c) {
            Ok(info) => json!({ "index": i, "commit": info }),
            Err(_) => json!({ "index": i, "commit": { "sha": c } }),
        },
        None => json!({ "index": i, "value": c }),
    }
}

fn change_json(plan: &Plan, store: &Store, c: &Change, json_out: bool) -> Result<Json, Failure> {
    let range: Vec<&String> = plan.candidates[c.before + 1..=c.after].iter().collect();
    let mut o = json!({
        "last_good": candidate_json(plan, c.before),
        "first_bad": candidate_json(plan, c.after),
        "suspects": range,
        "ratio": c.comparison.ratio,
        "interval": c.comparison.interval.map(|(l, h)| [l, h]),
        "p_value": c.comparison.p_value,
    });
    if let (Some(b), Some(a)) = (run_of(store, plan.id, c.before), run_of(store, plan.id, c.after)) {
        o["runs"] = json!({ "before": b, "after": a });
        let text = compare_runs(plan, b, a, json_out)?;
        o["compare"] =
            if json_out { serde_json::from_str(&text).unwrap_or(Json::Null) } else { Json::String(text) };
    }
    Ok(o)
}

/// What the search spent: candidates measured, runs, usable repetitions, skipped builds.
fn spent(search: &Search, store: &Store, plan: &Plan) -> Json {
    let steps = store.bisect_steps(plan.id).unwrap_or_default();
    let measured = (0..search.len()).filter(|&i| search.attempts(i) > 0).count();
    let skipped = (0..search.len()).filter(|&i| search.is_skipped(i)).count();
    let runs: usize = steps.iter().filter(|s| s.run_id.is_some()).count();
    let usable: usize = (0..search.len()).map(|i| search.runs(i).len()).sum();
    let attempts: usize = (0..search.len()).map(|i| search.attempts(i)).sum();
    json!({
        "candidates_measured": measured,
        "runs": runs,
        "usable_runs": usable,
        "noisy_runs": attempts.saturating_sub(usable),
        "skipped": skipped,
    })
}

/// Prints the answer, records it, and gives the exit code: 0 when a change was named, 1 when
/// there was none to find or it could not be measured.
pub fn answer(
    store: &Store,
    plan: &Plan,
    search: &Search,
    outcome: &Outcome,
    profile: Option<Option<&git::Worktree>>,
    json_out: bool,
) -> CmdResult {
    let (status, code) = match outcome {
        Outcome::Found { changes, .. } if !changes.is_empty() => ("found", 0),
        Outcome::Found { .. } => ("no-difference", 1),
        Outcome::NoDifference { .. } => ("no-difference", 1),
        Outcome::Undecided { .. } => ("undecided", 1),
        Outcome::Unmeasurable { .. } => ("unmeasurable", 1),
    };
    let mut doc = json!({
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "bisect": plan.id,
        "status": status,
        "figure": plan.figure.name(),
        "candidates": plan.candidates.len(),
        "good": plan.candidates.first(),
        "bad": plan.candidates.last(),
        "outcome": outcome,
        "spent": spent(search, store, plan),
    });
    if let Outcome::Found { changes, undecided, .. } = outcome {
        let list: Vec<Json> =
            changes.iter().map(|c| change_json(plan, store, c, json_out)).collect::<Result<_, _>>()?;
        doc["changes"] = json!(list);
        doc["undecided"] = json!(undecided
            .iter()
            .map(|c| json!({
                "between": [candidate_json(plan, c.before), candidate_json(plan, c.after)],
                "ratio": c.comparison.ratio, "interval": c.comparison.interval.map(|(l, h)| [l, h]),
            }))
            .collect::<Vec<_>>());
        if let (Some(worktree), [change]) = (profile, changes.as_slice()) {
            doc["profile"] = json!(crate::bisect_profile::profile_change(plan, worktree, change)?);
        }
    }
    store.finish_bisect(plan.id, status, Some(&doc.to_string())).context("recording the answer")?;
    if json_out {
        println!("{}", serde_json::to_string_pretty(&doc).context("encoding JSON")?);
    } else {
        print!("{}", text(plan, outcome, &doc));
    }
    Ok(code)
}

/// Why endpoints that were not told apart may still differ: an interval around 1 bounds the
/// change these runs could not resolve; one that excludes 1 missed the bisect's p ≤ `alpha`.
/// Either way more repetitions decide.
fn resolution_hint(interval: Option<(f64, f64)>, p_value: Option<f64>) -> String {
    match (interval, p_value) {
        (Some((lo, hi)), _) if lo < 1.0 && hi > 1.0 => format!(
            ". A change under about {:.1}% cannot be told from none with these runs: allow more with --max-reps",
            100.0 * (hi - 1.0).max(1.0 - lo)
        ),
        (Some(_), Some(p)) => format!(
            ". The 95% interval excludes 1, but the endpoints must differ at p <= {} and these runs \
             give p = {p:.4}: allow more with --max-reps",
            racehorse_bisect::SearchOptions::default().alpha
        ),
        _ => String::new(),
    }
}

fn text(plan: &Plan, outcome: &Outcome, doc: &Json) -> String {
    let mut out = String::new();
    let pct = |r: f64| format!("{:+.1}%", (r - 1.0) * 100.0);
    match outcome {
        Outcome::NoDifference { endpoints } => out.push_str(&format!(
            "bisect {}: no reproducible difference between the endpoints {} and {} ({} {}, interval {}); nothing to bisect{}\n",
            plan.id,
            short(&plan.candidates[0]),
            short(&plan.candidates[plan.candidates.len() - 1]),
            plan.figure.name(),
            pct(endpoints.ratio),
            endpoints.interval.map_or("n/a".into(), |(l, h)| format!("{:.3}-{:.3}", l, h)),
            resolution_hint(endpoints.interval, endpoints.p_value)
        )),
        Outcome::Undecided { endpoints } => out.push_str(&format!(
            "bisect {}: no verdict on the endpoints {} and {} ({} {}, interval {}): {} of the runs \
             were noisy (other processes used the CPU during the window), so neither a change \
             nor its absence could be shown; run it on a quieter machine, or allow more runs \
             with --max-reps\n",
            plan.id,
            short(&plan.candidates[0]),
            short(&plan.candidates[plan.candidates.len() - 1]),
            plan.figure.name(),
            pct(endpoints.ratio),
            endpoints.interval.map_or("n/a".into(), |(l, h)| format!("{:.3}-{:.3}", l, h)),
            doc["spent"]["noisy_runs"]
        )),
        Outcome::Unmeasurable { candidate } => out.push_str(&format!(
            "bisect {}: {} cannot be measured (its build was skipped, or every run was noisy)\n",
            plan.id,
            short(&plan.candidates[*candidate])
        )),
        Outcome::Found { changes, .. } if changes.is_empty() => out.push_str(&format!(
            "bisect {}: the endpoints differ, but no pair of neighbours could be told apart within --max-reps (see undecided)\n",
            plan.id
        )),
        Outcome::Found { changes, .. } => {
            if changes.len() > 1 {
                out.push_str(&format!("bisect {}: {} changes in the range\n", plan.id, changes.len()));
            }
            for (c, j) in changes.iter().zip(doc["changes"].as_array().into_iter().flatten()) {
                out.push_str(&change_text(plan, c, j));
            }
            if let Some(p) = doc.get("profile").and_then(Json::as_str) {
                out.push_str("where the CPU time moved (profiled runs of both):\n");
                out.push_str(p);
            }
        }
    }
    let s = &doc["spent"];
    out.push_str(&format!(
        "spent: {} of {} candidates measured, {} runs ({} usable, {} noisy), {} skipped builds\n",
        s["candidates_measured"],
        plan.candidates.len(),
        s["runs"],
        s["usable_runs"],
        s["noisy_runs"],
        s["skipped"]
    ));
    out
}

fn change_text(plan: &Plan, c: &Change, j: &Json) -> String {
    let bad = &plan.candidates[c.after];
    let mut out = match (&plan.repo, c.after - c.before) {
        (Some(_), 1) => {
            let i = &j["first_bad"]["commit"];
            format!(
                "first bad commit: {} {}\n  author {}, {}\n",
                i["sha"].as_str().unwrap_or(bad),
                i["subject"].as_str().unwrap_or(""),
                i["author"].as_str().unwrap_or(""),
                i["date"].as_str().unwrap_or("")
            )
        }
        (Some(_), _) => format!(
            "the change is one of {} commits that could not all be built: {}..{}\n",
            c.after - c.before,
            short(&plan.candidates[c.before]),
            short(bad)
        ),
        (None, _) => format!("first bad value: {bad} (after {})\n", plan.candidates[c.before]),
    };
    let cmp = &c.comparison;
    out.push_str(&format!(
        "  {} against {}: {:.3}x ({}), p {}\n",
        short(bad),
        short(&plan.candidates[c.before]),
        cmp.ratio,
        cmp.interval.map_or("n/a".into(), |(l, h)| format!("{l:.3}-{h:.3}")),
        cmp.p_value.map_or("n/a".into(), |p| format!("{p:.2e}"))
    ));
    if let Some(t) = j["compare"].as_str() {
        out.push_str(t);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::resolution_hint;

    #[test]
    fn an_interval_around_one_names_the_change_it_could_not_resolve() {
        let around = resolution_hint(Some((0.97, 1.01)), Some(0.2));
        assert!(around.contains("under about 3.0%"), "the wider side: {around}");
        let short = resolution_hint(Some((0.972, 0.996)), Some(0.0105));
        assert!(short.contains("excludes 1") && short.contains("p = 0.0105"), "{short}");
        assert_eq!(resolution_hint(None, None), "");
    }
}
