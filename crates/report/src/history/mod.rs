//! History: one figure of one point over many runs, its change points and their ledger.
//!
//! `series` reads series from the store, `csv` from a CSV file; `analyse` finds their change
//! points (racehorse-stats' `changepoint`); `ledger` keeps what was found; the views render
//! an analysis as text, JSON or an HTML page.

pub mod analyse;
pub mod csv;
pub mod figure;
pub mod json;
pub mod ledger;
pub mod series;
pub mod view;

pub use analyse::{analyse, Analysis, HistoryOptions, SeriesChange};

/// An analysis with the ledger's record of each of its confirmed changes (in order; None
/// where nothing is stored).
pub type WithLedger = (Analysis, Vec<Option<racehorse_store::ledger::ChangePointRecord>>);
pub use figure::Figure;
pub use series::{collect, point_selected, RunOrder, RunRef, RunValues, Selection, Series, SeriesKey};

#[cfg(test)]
mod tests;
