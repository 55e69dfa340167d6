//! One step of a bisect: check the candidate out in the bisect's worktree, build it, run
//! `racehorse run` on it as a normal stored run tagged with the commit (or value) and the
//! bisect, and read the usable repetitions of the followed figure back from the store.

use crate::Failure;
use racehorse_bisect::git::Worktree;
use racehorse_core::CellStatus;
use racehorse_report::history::Figure;
use racehorse_store::{RunFilter, Store};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What a bisect measures, whatever its state.
#[derive(Debug, Clone)]
pub struct Plan {
    pub id: i64,
    pub db: PathBuf,
    pub repo: Option<PathBuf>,
    /// Commit shas, or values.
    pub candidates: Vec<String>,
    pub build: Option<String>,
    pub run_args: Vec<String>,
    pub figure: Figure,
    pub params: Vec<(String, String)>,
}

/// How a candidate's step ended.
pub enum Step {
    /// Measured by this run, with these usable repetitions.
    Measured { run_id: i64, values: Vec<f64> },
    /// Its build exited 125.
    Skipped,
    /// Stopped by a signal (the run's exit code).
    Stopped(u8),
}

/// The tag a step's run carries for its candidate: `commit=SHA` or `value=V`.
pub fn candidate_tag(plan: &Plan, i: usize) -> (String, String) {
    let key = if plan.repo.is_some() { "commit" } else { "value" };
    (key.to_string(), plan.candidates[i].clone())
}

/// `{worktree}` and `{value}` replaced in one argument.
pub fn substitute(arg: &str, worktree: &Path, value: &str) -> String {
    arg.replace("{worktree}", &worktree.to_string_lossy()).replace("{value}", value)
}

/// Measures candidate `i`: checkout and build (with a worktree), then the run.
pub fn measure(plan: &Plan, worktree: Option<&Worktree>, i: usize, quiet: bool) -> Result<Step, Failure> {
    let here = worktree.map(|w| w.path.clone()).unwrap_or_else(std::env::temp_dir);
    let value = &plan.candidates[i];
    if let (Some(w), Some(build)) = (worktree, &plan.build) {
        if !checkout_and_build(w, build, value)? {
            return Ok(Step::Skipped);
        }
    }
    let (key, tag_value) = candidate_tag(plan, i);
    let mut full: Vec<String> = Vec::new();
    if quiet {
        full.push("-q".to_string());
    }
    full.extend(["--db".to_string(), plan.db.to_string_lossy().into_owned(), "run".to_string()]);
    let args: Vec<String> = plan.run_args.iter().map(|a| substitute(a, &here, value)).collect();
    // Flags after `--` belong to the program of the `command` engine: ours go before it.
    let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
    full.extend(args[..split].iter().cloned());
    full.extend([
        "--tag".to_string(),
        format!("{key}={tag_value}"),
        "--tag".to_string(),
        format!("bisect={}", plan.id),
    ]);
    if !args[..split].iter().any(|a| a == "--label" || a.starts_with("--label=")) {
        full.extend(["--label".to_string(), format!("bisect-{}", plan.id)]);
    }
    full.extend(args[split..].iter().cloned());
    // The run's own report goes to stderr: stdout is the bisect's (JSON only with --json).
    let to_stderr = std::io::stderr().as_fd().try_clone_to_owned().map_err(|e| anyhow::anyhow!("{e}"))?;
    let stdout = if quiet { std::process::Stdio::null() } else { std::process::Stdio::from(to_stderr) };
    let status = Command::new(std::env::current_exe().map_err(|e| anyhow::anyhow!("{e}"))?)
        .args(&full)
        .current_dir(&here)
        .stdout(stdout)
        .status()
        .map_err(|e| anyhow::anyhow!("starting racehorse run: {e}"))?;
    match status.code() {
        Some(0) | Some(1) => {}
        Some(c) if c >= 128 => return Ok(Step::Stopped(c as u8)),
        None => return Ok(Step::Stopped(130)),
        Some(c) => {
            return Err(Failure {
                code: c as u8,
                error: anyhow::anyhow!("racehorse run exited {c} for {}", short(value)),
            })
        }
    }
    let store = Store::open(&plan.db).map_err(|e| anyhow::anyhow!("{e}"))?;
    let filter = RunFilter {
        tags: vec![(key, tag_value), ("bisect".to_string(), plan.id.to_string())],
        limit: Some(1),
        ..RunFilter::default()
    };
    let run = store.list_runs_where(&filter).map_err(|e| anyhow::anyhow!("{e}"))?;
    let Some(run) = run.first() else {
        return Err(anyhow::anyhow!("the run of {} is not in the store", short(value)).into());
    };
    Ok(Step::Measured { run_id: run.id, values: usable_values(&store, plan, run.id)? })
}

/// Checks `value` out in the worktree and builds it; false when the build asked to skip the
/// commit (exit 125).
fn checkout_and_build(w: &Worktree, build: &str, value: &str) -> Result<bool, Failure> {
    w.checkout(value).map_err(|e| anyhow::anyhow!("checking out {value}: {e}"))?;
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(substitute(build, &w.path, value))
        .current_dir(&w.path)
        .output()
        .map_err(|e| anyhow::anyhow!("running the build: {e}"))?;
    match out.status.code() {
        Some(0) => Ok(true),
        Some(125) => Ok(false),
        code => {
            let tail = |b: &[u8]| {
                let t = String::from_utf8_lossy(b);
                let lines: Vec<&str> = t.lines().collect();
                lines[lines.len().saturating_sub(20)..].join("\n")
            };
            Err(anyhow::anyhow!(
                "the build of {} failed (exit {}); the bisect stops here (exit 125 from the build skips a commit):\n{}\n{}",
                short(value),
                code.map_or("by a signal".to_string(), |c| c.to_string()),
                tail(&out.stdout),
                tail(&out.stderr)
            )
            .into())
        }
    }
}

/// The usable repetitions of the followed figure in run `run_id`: ok cells of the point,
/// neither noisy nor below resolution (as history and compare count them).
pub fn usable_values(store: &Store, plan: &Plan, run_id: i64) -> Result<Vec<f64>, Failure> {
    let cells = if plan.figure.needs_latencies() {
        store.run_cells_with_latencies(run_id)
    } else {
        store.run_cells_without_series(run_id)
    };
    let cells = cells.map_err(|e| anyhow::anyhow!("reading run {run_id}: {e}"))?;
    let mut keys: Vec<String> = Vec::new();
    let mut values = Vec::new();
    for c in cells.iter().filter(|c| {
        plan.params.iter().all(|(k, v)| {
            c.spec
                .params
                .get(k)
                .is_some_and(|x| x.to_string() == *v || racehorse_core::params::display_value(k, x) == *v)
        })
    }) {
        let key = c.spec.match_key();
        if !keys.contains(&key) {
            keys.push(key);
        }
        let (value, below) = plan.figure.read(c);
        if let (CellStatus::Ok, Some(v), false, None) = (c.status, value, below, &c.quality.noisy) {
            values.push(v);
        }
    }
    if keys.len() > 1 {
        return Err(Failure::usage(format!(
            "the run measures {} points; bisect follows one: add -p NAME=VALUE to pick it (points: {})",
            keys.len(),
            keys.join("; ")
        )));
    }
    Ok(values)
}

/// A commit's short form (values stay whole).
pub fn short(c: &str) -> &str {
    if c.len() == 40 && c.bytes().all(|b| b.is_ascii_hexdigit()) {
        &c[..10]
    } else {
        c
    }
}
