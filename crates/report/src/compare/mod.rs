//! Comparing runs: cells of a base side matched with one or more new sides, every metric and
//! item compared with its interval and corrected significance, the seed-000 summaries, load
//! ramps, `compare --by`, and the comparison as a document (text, markdown, HTML with charts)
//! and as machine formats (json, csv).

pub mod cell;
pub mod charts;
pub mod comparison;
pub mod dimension;
pub mod flat;
pub mod formats;
pub mod gate;
pub mod item_layout;
pub mod items;
pub mod layout;
pub mod metric;
pub mod ramps;
pub mod summary;
pub mod table;
pub mod verdicts;

#[cfg(test)]
mod items_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod trust_tests;
