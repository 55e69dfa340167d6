//! Seeded synthetic series for the detector's tests and benchmarks (never for measured
//! results): runs of repetitions around a level, with a run-to-run wobble larger than the
//! spread of repetitions, and planted changes (steps, a variance change, a spike, drift).

use racehorse_core::rng::SplitMix64;

/// Something planted in a series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Plant {
    /// From run `at` on, the level is multiplied by `ratio`.
    Step { at: usize, ratio: f64 },
    /// From run `at` on, the run-to-run spread is multiplied by `factor` (the level stays).
    Variance { at: usize, factor: f64 },
    /// Run `at` alone is multiplied by `ratio`.
    Spike { at: usize, ratio: f64 },
    /// The level moves by `total_ratio` over the whole series, a little every run.
    Drift { total_ratio: f64 },
}

/// The shape of a synthetic series.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub runs: usize,
    pub reps: usize,
    /// Spread of repetitions inside a run (coefficient of variation).
    pub within_cv: f64,
    /// Spread of run levels around the series' level (coefficient of variation).
    pub between_cv: f64,
    pub level: f64,
    pub plants: Vec<Plant>,
}

impl Spec {
    /// `runs` runs of `reps` repetitions at level 1000 with no plant.
    pub fn null(runs: usize, reps: usize, within_cv: f64, between_cv: f64) -> Spec {
        Spec { runs, reps, within_cv, between_cv, level: 1000.0, plants: Vec::new() }
    }

    /// The same with one more plant.
    pub fn with(mut self, plant: Plant) -> Spec {
        self.plants.push(plant);
        self
    }

    /// The runs where a step starts (the truth a detector should find), in order.
    pub fn step_indices(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .plants
            .iter()
            .filter_map(|p| if let Plant::Step { at, .. } = p { Some(*at) } else { None })
            .collect();
        v.sort_unstable();
        v
    }
}

/// The series: `spec.runs` runs of `spec.reps` values each, from `seed`. Noise is
/// log-normal-like (a multiplicative factor exp(cv · z)), so values stay positive.
pub fn generate(spec: &Spec, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = SplitMix64::new(seed);
    (0..spec.runs)
        .map(|i| {
            let mut level = spec.level;
            let mut between = spec.between_cv;
            for p in &spec.plants {
                match *p {
                    Plant::Step { at, ratio } if i >= at => level *= ratio,
                    Plant::Variance { at, factor } if i >= at => between *= factor,
                    Plant::Spike { at, ratio } if i == at => level *= ratio,
                    Plant::Drift { total_ratio } => {
                        level *= total_ratio.powf(i as f64 / (spec.runs.max(2) - 1) as f64)
                    }
                    _ => {}
                }
            }
            let run_level = level * (between * rng.normal()).exp();
            (0..spec.reps).map(|_| run_level * (spec.within_cv * rng.normal()).exp()).collect()
        })
        .collect()
}
