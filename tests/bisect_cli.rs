//! `racehorse bisect` on generated git repositories (issue 42): a shell program whose unit of
//! work gets slower at one commit is bisected to that commit; identical endpoints give "no
//! reproducible difference"; unbuildable commits around the change give a range; two
//! slowdowns are both reported; a CPU-per-unit regression under the same throughput is found
//! with --worse cpu; Ctrl-C in the middle leaves the repository as it was and the bisect
//! resumable; bad arguments are usage errors before anything runs.

use crate::common::{machine_lock, text, Sandbox};
use std::path::{Path, PathBuf};
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git").arg("-C").arg(dir).args(args).output().expect("git");
    assert!(o.status.success(), "git {args:?}: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// What a generated repository plants.
#[derive(Default)]
struct Plant<'a> {
    commits: usize,
    /// Commits (1-based) from which each unit costs twice the work.
    slow_at: &'a [usize],
    /// Commits whose build exits 125.
    skip: &'a [usize],
    /// The figure is a fixed rate (throughput stays) and the work only costs CPU.
    cpu_only: bool,
}

/// A repository of `p.commits` commits of `bench.sh`; its build (`build.sh`) exits 125 where
/// a commit carries a `skip` file.
fn repo(dir: &Path, p: &Plant<'_>) -> PathBuf {
    let r = dir.join("app");
    std::fs::create_dir_all(&r).expect("repo dir");
    git(&r, &["init", "-q"]);
    git(&r, &["config", "user.email", "dev@example.org"]);
    git(&r, &["config", "user.name", "Dev"]);
    std::fs::write(r.join("build.sh"), "[ -f skip ] && exit 125; exit 0\n").expect("build");
    for c in 1..=p.commits {
        let doubled = 2usize.pow(p.slow_at.iter().filter(|&&s| c >= s).count() as u32);
        let busy = |work: usize| {
            format!("u=0; while [ $u -lt 100 ]; do i=0; while [ $i -lt {work} ]; do i=$((i+1)); done; u=$((u+1)); done")
        };
        // cpu_only: the figure is a fixed rate (throughput stays exactly) and the run lasts the
        // sleep's 1.5 s, so the CPU spent per unit doubles with the work at a slow commit.
        let body = match p.cpu_only {
            true => format!("sleep 1.5 & {}; wait; echo \"rate: 1000\"\n", busy(5000 * doubled)),
            false => format!("{}; echo \"units: $u\"\n", busy(400 * doubled)),
        };
        std::fs::write(r.join("bench.sh"), format!("# commit {c}\n{body}")).expect("bench");
        match p.skip.contains(&c) {
            true => std::fs::write(r.join("skip"), "").expect("skip"),
            false => {
                let _ = std::fs::remove_file(r.join("skip"));
            }
        }
        git(&r, &["add", "-A"]);
        git(&r, &["commit", "-qm", &format!("change {c}")]);
    }
    r
}

fn run_args(cpu_only: bool) -> Vec<String> {
    let (reps, figure) = if cpu_only { ("1", "regex:=rate: (\\d+)") } else { ("3", "regex:=units: (\\d+)") };
    let flags = [
        "command",
        "--reps",
        reps,
        "--warmup",
        "0s",
        "--noise-threshold",
        "100",
        "--no-warm-up",
        "-o",
        figure,
    ];
    let mut v: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
    if !cpu_only {
        v.extend(["-o".to_string(), "count=true".to_string()]);
    }
    for o in ["--", "sh", "{worktree}/bench.sh"] {
        v.push(o.to_string());
    }
    v
}

fn bisect(sb: &Sandbox, repo: &Path, extra: &[&str], cpu_only: bool) -> std::process::Output {
    let r = repo.to_str().unwrap();
    let mut args =
        vec!["bisect", "--repo", r, "--good", "HEAD~11", "--bad", "HEAD", "--build", "sh build.sh", "--json"];
    args.extend_from_slice(extra);
    args.push("--");
    let ra = run_args(cpu_only);
    args.extend(ra.iter().map(String::as_str));
    sb.run(&args)
}

fn answer(o: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(o)))
}

/// The repository is as the user left it: HEAD, a clean index and tree, one worktree.
fn untouched(repo: &Path, head: &str) {
    assert_eq!(git(repo, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(repo, &["status", "--porcelain"]), "");
    assert_eq!(git(repo, &["worktree", "list"]).lines().count(), 1, "no worktree left");
}

fn first_bad_subjects(a: &serde_json::Value) -> Vec<String> {
    a["changes"]
        .as_array()
        .map(|c| {
            c.iter().map(|x| x["first_bad"]["commit"]["subject"].as_str().unwrap_or("").to_string()).collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_planted_slowdown_is_named_and_the_repository_left_alone() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let repo = repo(sb.dir.path(), &Plant { commits: 12, slow_at: &[9], ..Plant::default() });
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let o = bisect(&sb, &repo, &[], false);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let a = answer(&o);
    assert_eq!(a["format"], "racehorse-bisect");
    assert_eq!(first_bad_subjects(&a), ["change 9"], "{a}");
    assert_eq!(a["changes"][0]["last_good"]["commit"]["subject"], "change 8");
    assert!(a["changes"][0]["ratio"].as_f64().unwrap() < 0.8);
    assert_eq!(a["changes"][0]["compare"]["format"], "racehorse-compare");
    untouched(&repo, &head);
    // Every step is a stored run tagged with its commit and the bisect.
    let list: serde_json::Value =
        serde_json::from_slice(&sb.run(&["list", "--tag", "bisect=1", "--json"]).stdout).unwrap();
    let runs = list["runs"].as_array().unwrap();
    assert_eq!(runs.len() as u64, a["spent"]["runs"].as_u64().unwrap());
    assert!(runs.iter().all(|r| r["tags"]["commit"].as_str().is_some_and(|c| c.len() == 40)));
    let o = sb.run(&["bisect", "--list"]);
    assert!(text(&o).contains("found"), "{}", text(&o));
}

#[test]
fn identical_endpoints_give_no_reproducible_difference() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let repo = repo(sb.dir.path(), &Plant { commits: 12, ..Plant::default() });
    let o = bisect(&sb, &repo, &[], false);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(answer(&o)["status"], "no-difference");
}

#[test]
fn unbuildable_commits_around_the_change_give_a_range() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let repo =
        repo(sb.dir.path(), &Plant { commits: 12, slow_at: &[9], skip: &[8, 9, 10], ..Plant::default() });
    let a = answer(&bisect(&sb, &repo, &[], false));
    let c = &a["changes"][0];
    assert_eq!(
        (c["last_good"]["commit"]["subject"].as_str(), c["first_bad"]["commit"]["subject"].as_str()),
        (Some("change 7"), Some("change 11")),
        "{a}"
    );
    assert_eq!(c["suspects"].as_array().unwrap().len(), 4);
    assert_eq!(a["spent"]["skipped"].as_u64().unwrap(), 3);
}

#[test]
fn two_slowdowns_are_both_reported() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let repo = repo(sb.dir.path(), &Plant { commits: 12, slow_at: &[4, 9], ..Plant::default() });
    let a = answer(&bisect(&sb, &repo, &[], false));
    assert_eq!(first_bad_subjects(&a), ["change 4", "change 9"], "{a}");
}

#[test]
fn a_cpu_per_unit_regression_is_bisected_with_worse_cpu() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let repo = repo(sb.dir.path(), &Plant { commits: 12, slow_at: &[6], cpu_only: true, ..Plant::default() });
    let o = bisect(&sb, &repo, &["--worse", "throughput"], true);
    assert_eq!(o.status.code(), Some(1), "throughput did not change: {}", text(&o));
    // The window's CPU of one shell repetition scatters by a tenth or more from run to run
    // here, and the default smallest change (a quarter of the endpoints' 2x, 19%) let a pair
    // of equal builds differ after enough looks (2 of 4 runs on 2026-11-29): the test asks
    // what it checks, a CPU regression of 2x, with a smallest change of 40%.
    let a = answer(&bisect(&sb, &repo, &["--worse", "cpu", "--min-change", "40"], true));
    assert_eq!(first_bad_subjects(&a), ["change 6"], "{a}");
}

#[test]
fn bad_arguments_are_usage_errors_before_anything_runs() {
    let sb = Sandbox::new();
    let repo = repo(sb.dir.path(), &Plant { commits: 4, ..Plant::default() });
    let r = repo.to_str().unwrap();
    let not_repo = sb.dir.path().to_str().unwrap().to_string() + "/none";
    std::fs::create_dir_all(&not_repo).unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["bisect", "--repo", &not_repo, "--good", "a", "--bad", "b", "--build", "true", "--", "null"],
        vec!["bisect", "--repo", r, "--good", "nope", "--bad", "HEAD", "--build", "true", "--", "null"],
        vec!["bisect", "--repo", r, "--good", "HEAD", "--bad", "HEAD~2", "--build", "true", "--", "null"],
        vec!["bisect", "--repo", r, "--good", "HEAD~2", "--bad", "HEAD", "--", "null"],
        vec![
            "bisect",
            "--repo",
            r,
            "--good",
            "HEAD~2",
            "--bad",
            "HEAD",
            "--build",
            "true",
            "--",
            "nosuchworkload",
        ],
        vec!["bisect", "--repo", r, "--good", "HEAD~2", "--bad", "HEAD", "--build", "true"],
        vec!["bisect", "--values", "a,b", "--", "null"],
        vec!["bisect", "--resume", "9"],
    ];
    for args in cases {
        let o = sb.run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    }
    assert!(
        !sb.db().exists() || sb.run(&["list", "--json"]).stdout.windows(6).all(|w| w != b"bisect"),
        "nothing ran"
    );
}

#[test]
fn ctrl_c_leaves_the_repository_alone_and_the_bisect_resumable() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let repo = repo(sb.dir.path(), &Plant { commits: 12, slow_at: &[9], ..Plant::default() });
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let r = repo.to_str().unwrap();
    let mut args =
        vec!["bisect", "--repo", r, "--good", "HEAD~11", "--bad", "HEAD", "--build", "sh build.sh", "--"];
    let ra = run_args(false);
    args.extend(ra.iter().map(String::as_str));
    let mut cmd = sb.cmd(&args);
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let child =
        cmd.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::piped()).spawn().expect("spawn");
    // Wait until two runs are stored, then press Ctrl-C (the whole process group, as a terminal does).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while std::time::Instant::now() < deadline {
        let l = sb.run(&["list", "--json"]);
        let n = serde_json::from_slice::<serde_json::Value>(&l.stdout)
            .ok()
            .and_then(|d| d["runs"].as_array().map(Vec::len))
            .unwrap_or(0);
        if n >= 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    // SAFETY: kill(2) with a negative pid signals the process group the child leads.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    let o = child.wait_with_output().expect("wait");
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    assert!(text(&o).contains("--resume 1"), "{}", text(&o));
    untouched(&repo, &head);
    let o = sb.run(&["bisect", "--resume", "1", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(first_bad_subjects(&answer(&o)), ["change 9"]);
    untouched(&repo, &head);
}
