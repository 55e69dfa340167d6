//! One run: its model ([`report::RunReport`]: every point's medians and spread, repetitions,
//! figures, profiles, ramps, settings and failures), the one document `show` and `report`
//! render, `show --json`, the run's charts and the per-area table that ends a tour.

pub(crate) mod areas;
pub(crate) mod charts;
pub(crate) mod json;
pub(crate) mod latency;
pub(crate) mod report;
pub(crate) mod view;

#[cfg(test)]
mod tests;
