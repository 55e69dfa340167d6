//! The search: which candidate to measure next, and when it is done. Candidates are the
//! indices `0..n` of an ordered list (commits from good to bad, or values); 0 and `n - 1` are
//! the endpoints. The endpoints are measured and compared first; when they do not differ
//! (in the wanted direction) the answer is "no reproducible difference". Otherwise every pair
//! of neighbouring measured candidates is compared: a pair that differs gets its middle
//! candidate measured, an unknown pair more repetitions on its thinner side, a pair that is
//! the same nothing — until each difference sits between two neighbours (a change), or
//! between two candidates with only unbuildable ones in between (a range).
//!
//! Each endpoint is run twice before anything else, so that the spread of a run is known
//! (it is pooled over every candidate run more than once, see [`crate::verdict`]).
//!
//! The state is the runs recorded per candidate and the skipped ones, so a search rebuilt
//! from stored runs (a resumed bisect) asks for exactly what is missing.

use crate::verdict::{compare, Comparison, Pooled, Rule, Verdict, Wanted};
use serde::Serialize;

/// Settings of a search.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SearchOptions {
    /// Runs each endpoint gets before anything is compared (at least 2: the spread of a run
    /// is learnt from them).
    pub endpoint_runs: usize,
    /// Most usable repetitions per candidate; an unknown pair at this many stays undecided.
    pub max_reps: usize,
    /// Most runs per candidate (runs whose repetitions were all noisy count too).
    pub max_attempts: usize,
    /// The p-value at or below which the endpoints differ; neighbours differ at or below
    /// `alpha / log2(n)` (the search makes about log2(n) comparisons on its way to a change,
    /// and a false one would name an innocent commit).
    pub alpha: f64,
    /// The smallest change looked for between neighbours (relative, 0.025 = 2.5%); None: a
    /// quarter of the endpoints' change, as ratios compound (the fourth root of their ratio,
    /// so that two large steps are each well above it). Neighbours whose interval lies within
    /// one and a half times this, compounded, are the same.
    pub min_change: Option<f64>,
    /// The direction the endpoints must differ in.
    pub wanted: Wanted,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            endpoint_runs: 2,
            max_reps: 20,
            max_attempts: 10,
            alpha: 0.01,
            min_change: None,
            wanted: Wanted::Any,
        }
    }
}

/// What to do next.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub enum Action {
    /// Measure candidate `i` (once more).
    Measure(usize),
    Done(Outcome),
}

/// A difference between two measured candidates with nothing measurable between them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The last candidate like the one before, and the first like the one after.
    pub before: usize,
    pub after: usize,
    pub comparison: Comparison,
}

/// How a search ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// The endpoints do not differ (in the wanted direction) as far as `max_reps` usable
    /// repetitions of each tell.
    NoDifference { endpoints: Comparison },
    /// The endpoints could not be told apart before an endpoint ran out of runs
    /// (`max_attempts`) with fewer than `max_reps` usable repetitions: runs were lost to
    /// noise, so there is no verdict either way.
    Undecided { endpoints: Comparison },
    /// An endpoint could not be measured (its build was skipped, or every run was noisy).
    Unmeasurable { candidate: usize },
    /// The changes found, in order; pairs still unknown at `max_reps`.
    Found { endpoints: Comparison, min_change: f64, changes: Vec<Change>, undecided: Vec<Change> },
}

/// The state of a search.
#[derive(Debug, Clone, PartialEq)]
pub struct Search {
    opts: SearchOptions,
    /// Per candidate, the log of each usable run's mean repetition.
    runs: Vec<Vec<f64>>,
    /// Per candidate, its usable repetitions in all.
    reps: Vec<usize>,
    attempts: Vec<usize>,
    skipped: Vec<bool>,
}

impl Search {
    /// A search over `n` (at least 2) candidates.
    pub fn new(n: usize, opts: SearchOptions) -> Search {
        let n = n.max(2);
        let opts = SearchOptions { endpoint_runs: opts.endpoint_runs.max(2), ..opts };
        Search {
            opts,
            runs: vec![Vec::new(); n],
            reps: vec![0; n],
            attempts: vec![0; n],
            skipped: vec![false; n],
        }
    }

    pub fn len(&self) -> usize {
        self.runs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// Records a run of candidate `i` with its usable repetitions (possibly none: a noisy run
    /// counts as an attempt only). Values must be positive (throughput, CPU per unit).
    pub fn record(&mut self, i: usize, usable: &[f64]) {
        self.attempts[i] += 1;
        let v: Vec<f64> = usable.iter().copied().filter(|x| x.is_finite() && *x > 0.0).collect();
        if !v.is_empty() {
            self.runs[i].push((v.iter().sum::<f64>() / v.len() as f64).ln());
            self.reps[i] += v.len();
        }
    }

    /// Records that candidate `i` cannot be measured (its build exited 125).
    pub fn skip(&mut self, i: usize) {
        self.skipped[i] = true;
    }

    /// The log means of candidate `i`'s usable runs.
    pub fn runs(&self, i: usize) -> &[f64] {
        &self.runs[i]
    }

    pub fn is_skipped(&self, i: usize) -> bool {
        self.skipped[i]
    }

    /// Runs spent on candidate `i` (noisy ones included).
    pub fn attempts(&self, i: usize) -> usize {
        self.attempts[i]
    }

    /// The level at which neighbours differ: `alpha / log2(n)`, at most `alpha`.
    pub fn pair_alpha(&self) -> f64 {
        self.opts.alpha / (self.len() as f64).log2().max(1.0)
    }

    /// Whether `i` can still be measured (not skipped, runs and repetitions left).
    fn measurable(&self, i: usize) -> bool {
        !self.skipped[i] && self.attempts[i] < self.opts.max_attempts && self.reps[i] < self.opts.max_reps
    }

    /// Whether `i` has a usable run to compare.
    fn ready(&self, i: usize) -> bool {
        !self.skipped[i] && !self.runs[i].is_empty()
    }

    fn cmp(&self, a: usize, b: usize, pooled: Option<Pooled>, min_change: f64, wanted: Wanted) -> Comparison {
        let endpoints = a == 0 && b == self.len() - 1;
        let alpha = if endpoints { self.opts.alpha } else { self.pair_alpha() };
        // One and a half times the smallest change, as ratios compound: (1 + m)^1.5 − 1. Not
        // twice: with the default m two equal changes are each (1 + m)² apart, and a margin
        // that wide called one of them "same" on a noisy run, so the search missed it.
        let rule = Rule { min_change, same_margin: (1.0 + min_change).powf(1.5) - 1.0, alpha, wanted };
        compare(&self.runs[a], &self.runs[b], pooled, rule)
    }

    /// What to measure next, or how the search ended.
    pub fn next(&self) -> Action {
        let last = self.len() - 1;
        for i in [0, last] {
            if self.runs[i].len() < self.opts.endpoint_runs {
                return match self.measurable(i) {
                    true => Action::Measure(i),
                    false if self.ready(i) => continue,
                    false => Action::Done(Outcome::Unmeasurable { candidate: i }),
                };
            }
        }
        let pooled = Pooled::of(&self.runs);
        let endpoints = self.cmp(0, last, pooled, self.opts.min_change.unwrap_or(0.0), self.opts.wanted);
        match endpoints.verdict {
            Verdict::Different => {}
            Verdict::Unknown => {
                if let Some(i) = self.thinner(0, last) {
                    return Action::Measure(i);
                }
                // Spent on usable repetitions: as alike as this many can tell. Runs lost to
                // noise first: no verdict.
                let starved = [0, last].iter().any(|&i| self.reps[i] < self.opts.max_reps);
                return Action::Done(match starved {
                    true => Outcome::Undecided { endpoints },
                    false => Outcome::NoDifference { endpoints },
                });
            }
            Verdict::Same => return Action::Done(Outcome::NoDifference { endpoints }),
        }
        let min_change = self
            .opts
            .min_change
            .unwrap_or_else(|| endpoints.ratio.max(1.0 / endpoints.ratio).powf(0.25) - 1.0);
        self.pairs(endpoints, pooled, min_change)
    }

    /// The side of a pair to give another run: the one with fewer runs that can still be
    /// measured.
    fn thinner(&self, a: usize, b: usize) -> Option<usize> {
        let mut sides = [a, b];
        sides.sort_by_key(|&i| self.runs[i].len());
        sides.into_iter().find(|&i| self.measurable(i))
    }

    /// The measurable candidate strictly between `a` and `b` nearest their middle (none of
    /// them has a usable run, or the pair would not be neighbours).
    fn middle(&self, a: usize, b: usize) -> Option<usize> {
        let mid = (a + b) as f64 / 2.0;
        ((a + 1)..b)
            .filter(|&i| self.measurable(i))
            .min_by(|&x, &y| (x as f64 - mid).abs().total_cmp(&(y as f64 - mid).abs()).then(x.cmp(&y)))
    }

    /// Splits a differing pair first (that narrows the search), then gives an unknown pair
    /// another run; when neither is possible the search is done.
    fn pairs(&self, endpoints: Comparison, pooled: Option<Pooled>, min_change: f64) -> Action {
        let measured: Vec<usize> = (0..self.len()).filter(|&i| self.ready(i)).collect();
        let (mut changes, mut undecided, mut thicken) = (Vec::new(), Vec::new(), None);
        for w in measured.windows(2) {
            let (a, b) = (w[0], w[1]);
            let comparison = self.cmp(a, b, pooled, min_change, Wanted::Any);
            match comparison.verdict {
                Verdict::Different => match self.middle(a, b) {
                    Some(m) => return Action::Measure(m),
                    // A change is only taken once both sides have been run twice: one odd run
                    // must not name a culprit.
                    None => {
                        match [a, b].into_iter().find(|&i| self.runs[i].len() < 2 && self.measurable(i)) {
                            Some(i) => thicken = thicken.or(Some(i)),
                            None => changes.push(Change { before: a, after: b, comparison }),
                        }
                    }
                },
                Verdict::Unknown => match self.thinner(a, b) {
                    Some(i) => thicken = thicken.or(Some(i)),
                    None => undecided.push(Change { before: a, after: b, comparison }),
                },
                Verdict::Same => {}
            }
        }
        match thicken {
            Some(i) => Action::Measure(i),
            None => Action::Done(Outcome::Found { endpoints, min_change, changes, undecided }),
        }
    }
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod tests;
