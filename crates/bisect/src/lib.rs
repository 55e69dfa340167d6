//! racehorse-bisect: which change did it. A bisection over an ordered list of commits (or of
//! any values) that measures each candidate as a normal stored run, decides between two
//! measured candidates "different", "same" or "unknown" from their repetitions (the last
//! asks for more), and keeps splitting every pair that differs until each difference sits
//! between two neighbours — so more than one change in the range is found, and a stretch of
//! commits that cannot be built is answered as a range. The search itself is pure (it asks a
//! [`search::Search`] what to measure next); running builds and runs is the caller's, with the
//! git plumbing in [`git`]. docs/bisect.md explains the rules and their error rates.

pub mod git;
pub mod search;
pub mod verdict;

pub use search::{Action, Outcome, Search, SearchOptions};
pub use verdict::{compare, Comparison, Pooled, Rule, Verdict, Wanted};
