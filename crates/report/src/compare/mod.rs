//! Comparing runs: cells of a base side matched with one or more new sides, every metric and
//! item compared with its interval and corrected significance, the seed-000 summaries, load
//! ramps, `compare --by`, and the comparison as a document (text, markdown, HTML with charts)
//! and as machine formats (json, csv).

pub(crate) mod cell;
pub(crate) mod charts;
pub(crate) mod comparison;
pub(crate) mod counters;
pub(crate) mod dimension;
pub(crate) mod flat;
pub(crate) mod formats;
pub(crate) mod frames;
pub(crate) mod gate;
pub(crate) mod item_layout;
pub(crate) mod items;
pub(crate) mod layout;
pub(crate) mod metric;
pub(crate) mod profiles;
pub(crate) mod profiles_json;
pub(crate) mod ramps;
pub(crate) mod summary;
pub(crate) mod table;
pub(crate) mod verdicts;

#[cfg(test)]
mod items_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod trust_tests;
