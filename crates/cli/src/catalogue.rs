//! The report's catalogue of the engines, built from their descriptions: each engine's area,
//! its points' areas in seed 000's summary and its figures. `compare`, `report` and `show` pass
//! it to the report, which knows no engine by name.

use racehorse_engines::{registry, Engine};
use racehorse_report::{Catalogue, EngineEntry};

/// The catalogue of `engines`.
pub(crate) fn catalogue_of(engines: &[&dyn Engine]) -> Catalogue {
    let mut c = Catalogue::new();
    for e in engines {
        let info = e.info();
        let entry = EngineEntry {
            area: info.area.to_string(),
            summary_area: info.summary_area,
            figures: info.figures.to_vec(),
        };
        c.add(info.name, entry);
    }
    c
}

/// The catalogue of every engine of this build.
pub(crate) fn catalogue() -> Catalogue {
    catalogue_of(registry())
}

#[cfg(test)]
#[path = "catalogue_tests.rs"]
mod tests;
