//! Simulated bisects (not a test): how often the search names exactly the planted commit of
//! 64, and how many runs it spends, for slowdowns of 5% and 2% with a within-run and a
//! between-run spread of 1% each, three repetitions a run, at the default settings and with
//! `--max-reps 60`. docs/bisect.md quotes its output.
//!
//! `cargo run --release -p racehorse-bisect --example bisect_sim [SEARCHES]`

use racehorse_bisect::{Action, Outcome, Search, SearchOptions};
use racehorse_core::rng::SplitMix64;

fn one(levels: &[f64], opts: SearchOptions, seed: u64) -> (Outcome, usize) {
    let mut s = Search::new(levels.len(), opts);
    let mut rng = SplitMix64::new(seed);
    let mut runs = 0;
    loop {
        match s.next() {
            Action::Measure(i) => {
                let run_level = levels[i] * (0.01 * rng.normal()).exp();
                let v: Vec<f64> = (0..3).map(|_| run_level * (0.01 * rng.normal()).exp()).collect();
                s.record(i, &v);
                runs += 1;
            }
            Action::Done(o) => return (o, runs),
        }
    }
}

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(200);
    for max_reps in [20, 60] {
        for factor in [0.95, 0.98] {
            let opts = SearchOptions { max_reps, max_attempts: max_reps / 2, ..SearchOptions::default() };
            let (mut exact, mut runs) = (0, 0);
            for seed in 0..n {
                let at = 1 + (seed as usize * 37) % 62;
                let levels: Vec<f64> =
                    (0..64).map(|i| if i >= at { 1000.0 * factor } else { 1000.0 }).collect();
                let (o, r) = one(&levels, opts, seed);
                exact += u64::from(
                    matches!(&o, Outcome::Found { changes, .. } if changes.len() == 1 && changes[0].after == at),
                );
                runs += r;
            }
            let pct = (1.0 - factor) * 100.0;
            println!(
                "{pct:.0}% slowdown, --max-reps {max_reps}: {exact}/{n} exact, {:.1} runs per bisect",
                runs as f64 / n as f64
            );
        }
    }
}
