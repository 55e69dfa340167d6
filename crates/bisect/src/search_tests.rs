//! Tests of the search on simulated candidates: a level per candidate and seeded noise per
//! repetition and per run, as a real bisect would measure them.

use super::*;
use racehorse_core::rng::SplitMix64;

/// Runs a search to its end over candidates of these levels; each run gives `reps`
/// repetitions with within-run noise `cv` around a run level drawn with between-run noise
/// `cv` too. Candidates in `skip` cannot be built. Returns the outcome and the runs spent.
fn run(levels: &[f64], skip: &[usize], opts: SearchOptions, seed: u64) -> (Outcome, usize) {
    let mut s = Search::new(levels.len(), opts);
    let mut rng = SplitMix64::new(seed);
    let (reps, cv) = (3, 0.01);
    let mut runs = 0;
    loop {
        match s.next() {
            Action::Measure(i) if skip.contains(&i) => s.skip(i),
            Action::Measure(i) => {
                let run_level = levels[i] * (cv * rng.normal()).exp();
                let v: Vec<f64> = (0..reps).map(|_| run_level * (cv * rng.normal()).exp()).collect();
                s.record(i, &v);
                runs += 1;
                assert!(runs < 500, "the search does not end");
            }
            Action::Done(o) => return (o, runs),
        }
    }
}

fn slowdown_at(n: usize, at: &[usize], factor: f64) -> Vec<f64> {
    (0..n).map(|i| 1000.0 * factor.powi(at.iter().filter(|&&a| i >= a).count() as i32)).collect()
}

fn changes(o: &Outcome) -> Vec<(usize, usize)> {
    match o {
        Outcome::Found { changes, .. } => changes.iter().map(|c| (c.before, c.after)).collect(),
        other => panic!("no change found: {other:?}"),
    }
}

#[test]
fn one_slowdown_is_named_at_its_commit() {
    for seed in 0..10 {
        let at = 5 + (seed as usize * 7) % 50;
        let (o, runs) = run(&slowdown_at(64, &[at], 0.95), &[], SearchOptions::default(), seed);
        assert_eq!(changes(&o), vec![(at - 1, at)], "seed {seed}");
        assert!(runs < 100, "seed {seed}: {runs} runs");
    }
}

#[test]
fn identical_endpoints_are_no_difference() {
    let (o, _) = run(&[1000.0; 32], &[], SearchOptions::default(), 3);
    assert!(matches!(o, Outcome::NoDifference { .. }), "{o:?}");
}

#[test]
fn endpoints_still_unknown_when_runs_run_out_are_undecided_not_the_same() {
    // Every run of the bad endpoint is noisy (no usable repetition): its one usable run cannot
    // tell a 5% slowdown from none, and the search must not call that "no difference".
    let opts = SearchOptions { max_attempts: 4, ..SearchOptions::default() };
    let mut s = Search::new(16, opts);
    let mut rng = SplitMix64::new(9);
    let mut good = 0;
    loop {
        match s.next() {
            Action::Measure(0) => {
                let v: Vec<f64> = (0..3).map(|_| 1000.0 * (0.05 * rng.normal()).exp()).collect();
                s.record(0, &v);
                good += 1;
            }
            Action::Measure(i) => {
                let first = s.attempts(i) == 0;
                let v: Vec<f64> = (0..3).map(|_| 950.0 * (0.05 * rng.normal()).exp()).collect();
                s.record(i, if first { &v } else { &[] });
            }
            Action::Done(o) => {
                assert!(matches!(o, Outcome::Undecided { .. }), "{o:?}");
                break;
            }
        }
        assert!(good < 50, "the search does not end");
    }
}

#[test]
fn two_large_steps_are_both_found() {
    // Slowdowns of 1.5x and 2.4x: the endpoints differ 3.6x. A quarter of that change taken
    // linearly (65%) would call the 1.5x step too small to count, and "the same" (±130%)
    // would swallow it; compounded, a quarter is 38%.
    let levels: Vec<f64> =
        (0..12).map(|i| 1000.0 / if i >= 4 { 1.5 } else { 1.0 } / if i >= 9 { 2.4 } else { 1.0 }).collect();
    for seed in 0..5 {
        let (o, _) = run(&levels, &[], SearchOptions::default(), seed);
        assert_eq!(changes(&o), vec![(3, 4), (8, 9)], "seed {seed}");
    }
}

#[test]
fn the_wrong_direction_is_no_difference() {
    let opts = SearchOptions { wanted: Wanted::Up, ..SearchOptions::default() };
    let (o, _) = run(&slowdown_at(16, &[8], 0.9), &[], opts, 4);
    assert!(matches!(o, Outcome::NoDifference { .. }), "{o:?}");
}

#[test]
fn unbuildable_commits_around_the_change_give_a_range() {
    let (o, _) = run(&slowdown_at(40, &[20], 0.9), &[18, 19, 20, 21], SearchOptions::default(), 5);
    assert_eq!(changes(&o), vec![(17, 22)]);
}

#[test]
fn two_slowdowns_are_both_reported() {
    let (o, _) = run(&slowdown_at(64, &[17, 45], 0.94), &[], SearchOptions::default(), 6);
    assert_eq!(changes(&o), vec![(16, 17), (44, 45)]);
}

#[test]
fn an_endpoint_that_cannot_be_built_ends_the_search() {
    let (o, _) = run(&slowdown_at(8, &[4], 0.9), &[0], SearchOptions::default(), 7);
    assert_eq!(o, Outcome::Unmeasurable { candidate: 0 });
}

#[test]
fn a_resumed_search_asks_for_what_is_missing() {
    let levels = slowdown_at(32, &[11], 0.9);
    let mut s = Search::new(32, SearchOptions::default());
    for _ in 0..2 {
        s.record(0, &[1000.0, 1001.0, 999.0]);
        s.record(31, &[900.0, 901.0, 899.0]);
    }
    let Action::Measure(m) = s.next() else { panic!("a middle to measure") };
    assert!((14..=17).contains(&m), "{m}");
    let _ = levels;
}
