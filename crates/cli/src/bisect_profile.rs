//! `bisect --profile`: once a single change is named, its two sides are run once more with
//! `--profile` and compared, so the answer shows where the CPU time moved between them.

use crate::bisect_step::{measure, Plan, Step};
use crate::Failure;
use anyhow::Context;
use racehorse_bisect::git::Worktree;
use racehorse_bisect::search::Change;
use std::process::Command;

/// The compare text of profiled runs of the change's two sides.
pub fn profile_change(plan: &Plan, worktree: Option<&Worktree>, change: &Change) -> Result<String, Failure> {
    let mut profiled = plan.clone();
    let split = profiled.run_args.iter().position(|a| a == "--").unwrap_or(profiled.run_args.len());
    profiled.run_args.insert(split, "--profile".to_string());
    let mut runs = Vec::new();
    for i in [change.before, change.after] {
        match measure(&profiled, worktree, i, true)? {
            Step::Measured { run_id, .. } => runs.push(run_id),
            Step::Skipped => return Ok("(a side could not be built again for profiling)\n".into()),
            Step::Stopped(code) => {
                return Err(Failure { code, error: anyhow::anyhow!("stopped while profiling") })
            }
        }
    }
    let out = Command::new(std::env::current_exe().context("locating racehorse")?)
        .arg("--db")
        .arg(&plan.db)
        .args(["compare", &runs[0].to_string(), &runs[1].to_string()])
        .output()
        .context("comparing the profiled runs")?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
