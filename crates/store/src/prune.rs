//! Which runs `racehorse prune` removes: the plan is computed from the runs of a store (this
//! SQLite store or the central PostgreSQL one, which builds the same [`Candidate`]s) and the
//! conditions given, the same way for both, so that `--dry-run` lists exactly what a prune
//! of the same store then removes. A run the change-point ledger cites (as the last run
//! before or the first run after a change), or that a bisect measured a candidate with, is
//! kept unless forced; a run still being written is always kept.

use std::collections::{BTreeMap, BTreeSet};

/// A run as the planner sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The run's uuid (what removal is keyed by in both stores).
    pub uuid: String,
    /// The run's id in its store (SQLite), or on its host (central).
    pub id: i64,
    pub label: String,
    /// The host name.
    pub host: String,
    /// The host's inventory name (the series' host, as `history` has it).
    pub inventory_name: String,
    pub started_at_unix_s: i64,
    /// How many cells it holds (what goes with it).
    pub cells: u64,
    pub tags: Vec<(String, String)>,
    /// The points of its cells (their match keys: workload, variant and parameters).
    pub points: BTreeSet<String>,
}

/// The conditions of a prune; every one given must hold (as `list`'s filters).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    /// Only these runs (uuids, resolved from the keys the user gave).
    pub runs: Option<BTreeSet<String>>,
    pub label: Option<String>,
    /// Tags the run must carry, KEY=VALUE exactly.
    pub tags: Vec<(String, String)>,
    /// The host name or inventory name, exactly.
    pub host: Option<String>,
    /// Only runs started before this time.
    pub older_than_unix_s: Option<i64>,
    /// Keep the newest N runs of every series: a run goes only when, for each point it
    /// measured on its host, N newer runs of the same scope measured that point there.
    pub keep_last: Option<usize>,
}

impl Selector {
    /// Whether any condition narrows the runs (a prune without one is refused).
    pub fn selects(&self) -> bool {
        self.runs.is_some()
            || self.label.is_some()
            || !self.tags.is_empty()
            || self.host.is_some()
            || self.older_than_unix_s.is_some()
            || self.keep_last.is_some()
    }

    /// Whether `c` is in the scope: the conditions other than age and count.
    fn in_scope(&self, c: &Candidate) -> bool {
        self.runs.as_ref().is_none_or(|r| r.contains(&c.uuid))
            && self.label.as_ref().is_none_or(|l| *l == c.label)
            && self.tags.iter().all(|t| c.tags.contains(t))
            && self.host.as_ref().is_none_or(|h| *h == c.host || *h == c.inventory_name)
    }
}

/// Why a run that was selected stays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeptBecause {
    /// Change point (its ledger id) cites it as the last run before (`before`) or the first
    /// run after (`after`) a change.
    ChangePoint { id: i64, side: &'static str },
    /// Bisect (its id) measured a candidate with it.
    Bisect { id: i64 },
    /// Still being written by a live racehorse (kept even with --force).
    Running,
}

impl std::fmt::Display for KeptBecause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeptBecause::ChangePoint { id, side } => {
                write!(f, "change point {id} cites it as its {side} run (--force removes it)")
            }
            KeptBecause::Bisect { id } => write!(f, "bisect {id} measured with it (--force removes it)"),
            KeptBecause::Running => write!(f, "still running"),
        }
    }
}

/// What cites runs: run uuid → the reasons to keep it.
pub type Guards = BTreeMap<String, Vec<KeptBecause>>;

/// Adds a reason to keep run `uuid`.
pub fn guard(guards: &mut Guards, uuid: &str, why: KeptBecause) {
    guards.entry(uuid.to_string()).or_default().push(why);
}

/// The outcome of planning: runs to remove and selected runs kept, each oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub remove: Vec<Candidate>,
    pub kept: Vec<(Candidate, Vec<KeptBecause>)>,
}

/// The runs of `runs` that `sel` selects, split into those to remove and those `guards`
/// keep (`force` overrides every guard but a run still being written).
pub fn plan(runs: &[Candidate], sel: &Selector, guards: &Guards, force: bool) -> Plan {
    let mut scope: Vec<&Candidate> = runs.iter().filter(|c| sel.in_scope(c)).collect();
    // Newest first for counting; ties broken by id, then uuid, so the plan is the same each time.
    scope.sort_by(|a, b| (b.started_at_unix_s, b.id, &b.uuid).cmp(&(a.started_at_unix_s, a.id, &a.uuid)));
    let protected = match sel.keep_last {
        Some(n) => newest_of_each_series(&scope, n),
        None => BTreeSet::new(),
    };
    let mut out = Plan::default();
    for c in scope.into_iter().rev() {
        let old = sel.older_than_unix_s.is_none_or(|t| c.started_at_unix_s < t);
        if !old || protected.contains(&c.uuid) {
            continue;
        }
        let why: Vec<KeptBecause> = guards
            .get(&c.uuid)
            .map(|w| w.iter().filter(|w| !force || **w == KeptBecause::Running).cloned().collect())
            .unwrap_or_default();
        match why.is_empty() {
            true => out.remove.push(c.clone()),
            false => out.kept.push((c.clone(), why)),
        }
    }
    out
}

/// The uuids of the runs among the newest `n` of some series of theirs: (inventory name,
/// point) for each point they measured, (inventory name, label) for a run without cells.
/// `newest_first` is sorted newest first.
fn newest_of_each_series(newest_first: &[&Candidate], n: usize) -> BTreeSet<String> {
    let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut keep = BTreeSet::new();
    for c in newest_first {
        let series: Vec<String> = match c.points.is_empty() {
            true => vec![format!("label {}", c.label)],
            false => c.points.iter().map(|p| format!("point {p}")).collect(),
        };
        for s in series {
            let count = seen.entry((c.inventory_name.clone(), s)).or_insert(0);
            *count += 1;
            if *count <= n {
                keep.insert(c.uuid.clone());
            }
        }
    }
    keep
}

#[cfg(test)]
#[path = "prune_tests.rs"]
mod tests;
