//! The git plumbing of a bisect: the repository's commits from good to bad, a detached
//! worktree of its own (the user's working tree, index and HEAD are never touched), and a
//! commit's subject, author and date. Every call runs `git -C DIR …`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A git failure, with what was asked and what git said.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("{0} is not a git repository (git: {1})")]
    NotARepo(PathBuf, String),
    #[error("unknown revision {0:?} in {1} (git: {2})")]
    UnknownRev(String, PathBuf, String),
    #[error("{good} is not an ancestor of {bad}: give a good revision older than the bad one")]
    NotAncestor { good: String, bad: String },
    #[error("git {args}: {why}")]
    Failed { args: String, why: String },
}

/// Runs `git -C dir args`; its stdout, trimmed, or what it said on stderr.
fn git(dir: &Path, args: &[&str]) -> Result<String, (String, String)> {
    let out = Command::new("git").arg("-C").arg(dir).args(args).output();
    let joined = args.join(" ");
    match out {
        Err(e) => Err((joined, format!("cannot run git: {e}"))),
        Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).trim().to_string()),
        Ok(o) => Err((joined, String::from_utf8_lossy(&o.stderr).trim().to_string())),
    }
}

fn failed((args, why): (String, String)) -> GitError {
    GitError::Failed { args, why }
}

/// The repository's top directory.
pub fn toplevel(repo: &Path) -> Result<PathBuf, GitError> {
    git(repo, &["rev-parse", "--show-toplevel"])
        .map(PathBuf::from)
        .map_err(|(_, why)| GitError::NotARepo(repo.to_path_buf(), why))
}

/// The full sha of a revision.
pub fn resolve(repo: &Path, rev: &str) -> Result<String, GitError> {
    let spec = format!("{rev}^{{commit}}");
    git(repo, &["rev-parse", "--verify", "--quiet", &spec])
        .map_err(|(_, why)| GitError::UnknownRev(rev.to_string(), repo.to_path_buf(), why))
        .and_then(|s| {
            if s.is_empty() {
                Err(GitError::UnknownRev(rev.to_string(), repo.to_path_buf(), "no such commit".into()))
            } else {
                Ok(s)
            }
        })
}

/// The commits from `good` to `bad`, both included, oldest first, along the first-parent
/// line of `bad` (merges are one step each).
pub fn commits_between(repo: &Path, good: &str, bad: &str) -> Result<Vec<String>, GitError> {
    if git(repo, &["merge-base", "--is-ancestor", good, bad]).is_err() {
        return Err(GitError::NotAncestor { good: good.to_string(), bad: bad.to_string() });
    }
    let range = format!("{good}..{bad}");
    let list =
        git(repo, &["rev-list", "--first-parent", "--ancestry-path", "--reverse", &range]).map_err(failed)?;
    let mut out = vec![good.to_string()];
    out.extend(list.lines().map(str::to_string));
    Ok(out)
}

/// A commit as the answer shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CommitInfo {
    pub sha: String,
    pub subject: String,
    pub author: String,
    pub date: String,
}

/// Subject, author and date (ISO 8601) of a commit.
pub fn info(repo: &Path, sha: &str) -> Result<CommitInfo, GitError> {
    let text = git(repo, &["log", "-1", "--format=%s%x1f%an <%ae>%x1f%aI", sha]).map_err(failed)?;
    let mut parts = text.split('\x1f');
    let mut next = || parts.next().unwrap_or_default().to_string();
    Ok(CommitInfo { sha: sha.to_string(), subject: next(), author: next(), date: next() })
}

/// A detached worktree of the repository at `path`, removed (with git's record of it) when
/// dropped.
#[derive(Debug)]
pub struct Worktree {
    repo: PathBuf,
    pub path: PathBuf,
}

impl Worktree {
    /// Adds a detached worktree at `path` (which must not exist) at commit `sha`.
    pub fn add(repo: &Path, path: &Path, sha: &str) -> Result<Worktree, GitError> {
        let p = path.to_string_lossy().to_string();
        git(repo, &["worktree", "add", "--detach", "--force", &p, sha]).map_err(failed)?;
        Ok(Worktree { repo: repo.to_path_buf(), path: path.to_path_buf() })
    }

    /// Checks out `sha` in the worktree, discarding what a build left there.
    pub fn checkout(&self, sha: &str) -> Result<(), GitError> {
        git(&self.path, &["checkout", "--detach", "--force", "--quiet", sha]).map_err(failed)?;
        git(&self.path, &["clean", "-fdxq"]).map(|_| ()).map_err(failed)
    }
}

impl Drop for Worktree {
    fn drop(&mut self) {
        let p = self.path.to_string_lossy().to_string();
        let _ = git(&self.repo, &["worktree", "remove", "--force", &p]);
        let _ = std::fs::remove_dir_all(&self.path);
        let _ = git(&self.repo, &["worktree", "prune"]);
    }
}

/// Removes worktrees a killed bisect left under `dir` (git's records included).
pub fn sweep(repo: &Path, dir: &Path) {
    if let Ok(list) = git(repo, &["worktree", "list", "--porcelain"]) {
        for line in list.lines() {
            if let Some(p) = line.strip_prefix("worktree ") {
                if Path::new(p).starts_with(dir) {
                    let _ = git(repo, &["worktree", "remove", "--force", p]);
                }
            }
        }
    }
    let _ = git(repo, &["worktree", "prune"]);
}
