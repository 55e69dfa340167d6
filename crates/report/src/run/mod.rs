//! One run: its model ([`report::RunReport`]: every point's medians and spread, repetitions,
//! figures, profiles, ramps, settings and failures), the one document `show` and `report`
//! render, `show --json`, the run's charts and the per-area table that ends a tour.

pub mod areas;
pub mod charts;
pub mod json;
pub mod latency;
pub mod report;
pub mod view;

#[cfg(test)]
mod tests;
