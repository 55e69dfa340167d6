//! What the report knows of the engines: per engine its area, where its points go in seed
//! 000's summary and the figures it records. The binary builds a [`Catalogue`] from the
//! engines' descriptions and hands it to [`crate::compare()`] and [`crate::run_report`], so that
//! the report matches no engine by name and a new engine, or a new figure, changes nothing
//! here.

use racehorse_core::{AreaRule, Figure, Params};

/// What [`crate::compare()`] and [`crate::run_report`] ask about a workload's engine. A
/// closure naming each workload's area is one too, with no figures and each area as its
/// summary area (synthetic runs in tests and benchmarks).
pub trait EngineFacts {
    /// The engine's area as listings and one run's report name it.
    fn area(&self, workload: &str) -> String;
    /// The seed-000 summary area of one point of the workload.
    fn summary_area(&self, workload: &str, params: &Params) -> String {
        let _ = params;
        self.area(workload)
    }
    /// The figures the engine declares (empty for an unknown engine).
    fn figures(&self, workload: &str) -> &[Figure] {
        let _ = workload;
        &[]
    }
}

impl<F: Fn(&str) -> String> EngineFacts for F {
    fn area(&self, workload: &str) -> String {
        self(workload)
    }
}

/// What one engine declares.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineEntry {
    /// The engine's area in listings (`EngineInfo::area`).
    pub area: String,
    /// Its points' areas in seed 000's summary (`EngineInfo::summary_area`).
    pub summary_area: AreaRule,
    /// Its figures (`EngineInfo::figures`).
    pub figures: Vec<Figure>,
}

/// The engines the report may meet, by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalogue {
    engines: Vec<(String, EngineEntry)>,
}

/// The area of a workload no engine of the catalogue has.
pub const UNKNOWN_AREA: &str = "Other";

impl Catalogue {
    pub fn new() -> Catalogue {
        Catalogue::default()
    }

    /// Adds (or replaces) an engine.
    pub fn add(&mut self, engine: &str, entry: EngineEntry) {
        self.engines.retain(|(n, _)| n != engine);
        self.engines.push((engine.to_string(), entry));
    }

    /// The engine of this name.
    pub fn engine(&self, name: &str) -> Option<&EngineEntry> {
        self.engines.iter().find(|(n, _)| n == name).map(|(_, e)| e)
    }
}

impl EngineFacts for Catalogue {
    /// The engine's area; for cells matched across engines by `--by workload` (`fio/diskio`),
    /// the base engine's.
    fn area(&self, workload: &str) -> String {
        let engine = workload.split('/').next().unwrap_or(workload);
        self.engine(engine).map_or_else(|| UNKNOWN_AREA.to_string(), |e| e.area.clone())
    }

    /// By the engine's rule; a workload of no engine (`fio/diskio` of `--by workload`, an
    /// engine this build lacks) takes [`EngineFacts::area`].
    fn summary_area(&self, workload: &str, params: &Params) -> String {
        match self.engine(workload) {
            Some(e) => e.summary_area.area(params).label().to_string(),
            None => self.area(workload),
        }
    }

    /// The engine's figures; none for a workload of no engine (`fio/diskio` included).
    fn figures(&self, workload: &str) -> &[Figure] {
        self.engine(workload).map_or(&[], |e| &e.figures)
    }
}
