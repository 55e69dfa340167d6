//! Tests of the ramp rules with synthetic jobs-per-minute sequences.

use super::*;

fn rules(stop: StopRule, adaptive: bool) -> RampRules {
    RampRules { start_users: 1, increment: 1, max_users: 1000, stop, crossover_jpm_per_user: 10.0, adaptive }
}

/// Points at users 1, 2, … with the given JPMs; wall time as if each user's jobs took 1 s
/// on 2 CPUs.
fn points(jpms: &[f64]) -> Vec<Point> {
    jpms.iter()
        .enumerate()
        .map(|(i, &j)| Point { users: i as u64 + 1, jpm: Some(j), real_s: ((i as f64 + 1.0) / 2.0).max(1.0) })
        .collect()
}

#[test]
fn jpm_formula() {
    assert_eq!(jobs_per_minute(100, 4, 30.0), 800.0);
    assert_eq!(jobs_per_minute(103, 1, 60.0), 103.0);
}

#[test]
fn ramp_starts_at_start_users_and_steps_by_the_increment() {
    let r = RampRules { start_users: 3, increment: 2, ..rules(StopRule::Max, false) };
    assert_eq!(next_users(&r, &[]), Some(3));
    let p = [Point { users: 3, jpm: Some(100.0), real_s: 1.0 }];
    assert_eq!(next_users(&r, &p), Some(5));
}

#[test]
fn max_users_is_reached_exactly_and_ends_the_ramp() {
    let r = RampRules { increment: 4, max_users: 6, ..rules(StopRule::Max, false) };
    let p = points(&[100.0, 200.0]);
    assert_eq!(next_users(&r, &p), Some(6), "clamped to the maximum");
    let at_max = [Point { users: 6, jpm: Some(300.0), real_s: 1.0 }];
    assert_eq!(stop_reason(&r, &at_max), Some("max_users reached"));
    assert_eq!(next_users(&r, &at_max), None);
}

#[test]
fn crossover_stops_at_ten_jobs_per_minute_per_user() {
    let r = rules(StopRule::Crossover, false);
    let p = [Point { users: 5, jpm: Some(51.0), real_s: 1.0 }];
    assert_eq!(stop_reason(&r, &p), None);
    let p = [Point { users: 5, jpm: Some(50.0), real_s: 1.0 }];
    assert_eq!(stop_reason(&r, &p), Some("crossover reached"));
}

#[test]
fn peak_rule_stops_after_a_drop_not_during_the_climb() {
    let r = rules(StopRule::Peak, false);
    let climb = [100.0, 190.0, 200.0, 205.0, 210.0];
    assert_eq!(stop_reason(&r, &points(&climb)), None, "still rising");
    let early_drop = [100.0, 90.0, 200.0];
    assert_eq!(stop_reason(&r, &points(&early_drop)), None, "fewer than 5 points");
    let dropped = [200.0, 205.0, 210.0, 208.0, 195.0];
    assert_eq!(stop_reason(&r, &points(&dropped)), Some("throughput dropped after the peak"));
    // Newest below the previous but within 1% of the 5-point mean: keep going.
    let wobble = [190.0, 200.0, 210.0, 205.0, 202.0];
    assert_eq!(stop_reason(&r, &points(&wobble)), None);
}

#[test]
fn peak_rule_stops_once_throughput_levels_off() {
    let r = rules(StopRule::Peak, false);
    let flat = [100.0, 200.0, 400.0, 400.5, 401.0, 400.2, 400.8, 401.1];
    assert_eq!(stop_reason(&r, &points(&flat[..5])), None);
    assert_eq!(stop_reason(&r, &points(&flat)), Some("throughput levelled off"));
}

#[test]
fn a_failed_point_ends_the_ramp() {
    let r = rules(StopRule::Max, false);
    let mut p = points(&[100.0]);
    p.push(Point { users: 2, jpm: None, real_s: 0.0 });
    assert_eq!(next_users(&r, &p), None);
}

#[test]
fn adaptive_increment_waits_for_ten_points_then_follows_run_times() {
    let r = rules(StopRule::Max, true);
    // Run time grows by 1/n per step (< 1.2): the step grows once 10 points exist.
    let p: Vec<Point> =
        (1..=9).map(|u| Point { users: u, jpm: Some(1000.0 * u as f64), real_s: u as f64 }).collect();
    assert_eq!(next_users(&r, &p), Some(10), "no adjustment before the 10th point");
    let mut p10 = p.clone();
    p10.push(Point { users: 10, jpm: Some(10_000.0), real_s: 10.0 });
    // prev 9 s, last 10 s: ratio 1.11 < 1.2, step *= 2 / (9 / 9.5) = 2.11 → 2.
    assert_eq!(next_users(&r, &p10), Some(12));
    // A run time that jumps (ratio > 1.3) shrinks the step instead (but not below 1).
    let mut jump = p.clone();
    jump.push(Point { users: 10, jpm: Some(10_000.0), real_s: 20.0 });
    assert_eq!(next_users(&r, &jump), Some(11));
    // JPM within 10% of the user count: step = (JPM - users) / 2, at least 1.
    let mut near = p.clone();
    near.push(Point { users: 10, jpm: Some(10.5), real_s: 10.0 });
    assert_eq!(next_users(&r, &near), Some(11));
    let mut far = near.clone();
    far[9] = Point { users: 100, jpm: Some(108.0), real_s: 10.0 };
    assert_eq!(next_users(&r, &far), Some(104), "(108 - 100) / 2");
    let mut no_timer = p10.clone();
    no_timer.truncate(10);
    assert_eq!(next_users(&rules(StopRule::Max, false), &no_timer), Some(11), "adaptive off: fixed steps");
}

#[test]
fn stop_rule_names_parse() {
    assert_eq!(StopRule::parse("peak"), Some(StopRule::Peak));
    assert_eq!(StopRule::parse("crossover"), Some(StopRule::Crossover));
    assert_eq!(StopRule::parse("max"), Some(StopRule::Max));
    assert_eq!(StopRule::parse("never"), None);
}
