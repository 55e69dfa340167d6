//! re-aim's load ramp as pure rules over the points run so far: the next user count
//! (fixed increment, or re-aim's adaptive increment from the 10th point on) and the stop
//! rules (maximum users, crossover, and the "max jobs" rule that ends the ramp once the
//! throughput has levelled off or dropped after its peak).

/// How a ramp ends (besides reaching `max_users` or a failed point).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopRule {
    /// re-aim `-g`: over the last 5 points, stop when their spread is below 1% or the
    /// newest fell below the one before and more than 1% below their mean.
    Peak,
    /// re-aim `-x`: stop once jobs/min per user ≤ the crossover value.
    Crossover,
    /// Run every load up to `max_users`.
    Max,
}

impl StopRule {
    pub fn parse(s: &str) -> Option<StopRule> {
        Some(match s {
            "peak" => StopRule::Peak,
            "crossover" => StopRule::Crossover,
            "max" => StopRule::Max,
            _ => return None,
        })
    }
}

/// The ramp's settings (options of the mix engine).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RampRules {
    pub start_users: u64,
    pub increment: u64,
    pub max_users: u64,
    pub stop: StopRule,
    /// Jobs per minute per user at or below which the crossover is reached.
    pub crossover_jpm_per_user: f64,
    /// re-aim's adaptive increment (its "timer"; `-t` turns it off).
    pub adaptive: bool,
}

/// One finished load point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub users: u64,
    /// Jobs per minute; None when the point failed.
    pub jpm: Option<f64>,
    /// Wall time of the point in seconds (start signal to the last user's exit).
    pub real_s: f64,
}

/// The jobs-per-minute formula: jobs per user × users × 60 / wall time.
pub fn jobs_per_minute(jobs_per_user: u64, users: u64, real_s: f64) -> f64 {
    (jobs_per_user * users) as f64 * 60.0 / real_s
}

/// re-aim's adjustments start once this many points have adjusted the step before.
const ADAPT_AFTER: usize = 8;
const THRESHOLD_MIN: f64 = 1.2;
const THRESHOLD_MAX: f64 = 1.3;

/// The step after point `k` (0-based) given the step before it: re-aim's
/// adjust_adaptive_timer. Runs only from the 10th point on (adjustment count > 8).
fn adjust(step: u64, k: usize, points: &[Point]) -> u64 {
    if k <= ADAPT_AFTER {
        return step;
    }
    let p = points[k];
    let jpm = p.jpm.unwrap_or(0.0);
    let users = p.users as f64;
    let mut next = step as f64;
    if (jpm - users) / users <= 0.10 {
        next = ((jpm - users) / 2.0).max(1.0);
    } else {
        let last = p.real_s;
        let prev = if k > 0 && points[k - 1].real_s > 0.0 { points[k - 1].real_s } else { 1.0 };
        let avg = (prev + last) / 2.0;
        let avg = if avg == 0.0 { 1.0 } else { avg };
        let ratio = last / prev;
        if ratio < THRESHOLD_MIN {
            next *= 2.0 / (prev / avg);
        } else if ratio > THRESHOLD_MAX {
            next /= 2.0 / (prev / avg);
        }
        if next < 1.0 {
            next = step as f64;
        }
    }
    next as u64
}

/// Why the ramp stops after the last point, if it does.
pub fn stop_reason(rules: &RampRules, points: &[Point]) -> Option<&'static str> {
    let last = points.last()?;
    let Some(jpm) = last.jpm else { return Some("the last point failed") };
    if last.users >= rules.max_users {
        return Some("max_users reached");
    }
    match rules.stop {
        StopRule::Crossover if jpm / last.users as f64 <= rules.crossover_jpm_per_user => {
            Some("crossover reached")
        }
        StopRule::Peak if points.len() >= 5 => {
            let last5: Vec<f64> = points[points.len() - 5..].iter().map(|p| p.jpm.unwrap_or(0.0)).collect();
            let mean = last5.iter().sum::<f64>() / 5.0;
            let var = last5.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 5.0;
            let (newest, previous) = (last5[4], last5[3]);
            if newest < previous && (mean - newest) / mean * 100.0 > 1.0 {
                Some("throughput dropped after the peak")
            } else if var.sqrt() / mean * 100.0 < 1.0 {
                Some("throughput levelled off")
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The user count of the next point, or None when the ramp stops.
pub fn next_users(rules: &RampRules, points: &[Point]) -> Option<u64> {
    if points.is_empty() {
        return Some(rules.start_users.min(rules.max_users));
    }
    if stop_reason(rules, points).is_some() {
        return None;
    }
    let mut step = rules.increment.max(1);
    if rules.adaptive {
        for k in 0..points.len() {
            step = adjust(step, k, points).max(1);
        }
    }
    let last = points.last()?.users;
    Some((last + step).min(rules.max_users))
}

#[cfg(test)]
#[path = "ramp_tests.rs"]
mod tests;
