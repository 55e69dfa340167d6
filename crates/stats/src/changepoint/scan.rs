//! The split statistic of the change-point test and its permutation p-value: for every
//! candidate split of a segment of run means, the two-sample t with the pooled variance of
//! both sides, in one pass over prefix sums; the largest |t| is compared with the largest
//! |t| of the same segment in shuffled orders (the runs are exchangeable when nothing changed).

use racehorse_core::rng::SplitMix64;

/// Where a segment may be split: at least `min_left` runs before and `min_right` after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bounds {
    pub min_left: usize,
    pub min_right: usize,
}

impl Bounds {
    /// True when some split of `n` runs is allowed.
    pub fn allows(self, n: usize) -> bool {
        self.min_left >= 1 && self.min_right >= 1 && n >= self.min_left + self.min_right && n >= 3
    }
}

/// The largest |t| over the allowed splits of `m` (run means) and the split where it is: the
/// index of the first run after it. None when no split is allowed. `m` should be centred
/// (its mean near 0) for precision; the statistic does not depend on a shift.
pub(crate) fn max_t(m: &[f64], bounds: Bounds) -> Option<(usize, f64)> {
    let n = m.len();
    if !bounds.allows(n) {
        return None;
    }
    let (total, total_sq) = m.iter().fold((0.0, 0.0), |(s, q), x| (s + x, q + x * x));
    let (mut left, mut left_sq) = (0.0, 0.0);
    let mut best: Option<(usize, f64)> = None;
    let free = (n - 2) as f64;
    for k in 1..=n - bounds.min_right {
        let x = m[k - 1];
        left += x;
        left_sq += x * x;
        if k >= bounds.min_left.max(1) {
            let t = split_t(k, n, (left, left_sq), (total, total_sq), free);
            if best.is_none_or(|(_, b)| t > b) {
                best = Some((k, t));
            }
        }
    }
    best
}

/// |t| of the split before run `k` of `n`, from the sums of the runs before it and of all.
fn split_t(k: usize, n: usize, (sl, ql): (f64, f64), (s, q): (f64, f64), free: f64) -> f64 {
    let (nl, nr) = (k as f64, (n - k) as f64);
    let (sr, qr) = (s - sl, q - ql);
    let ss = ((ql - sl * sl / nl) + (qr - sr * sr / nr)).max(0.0);
    let diff = (sr / nr - sl / nl).abs();
    let var = ss / free * (1.0 / nl + 1.0 / nr);
    if var <= f64::EPSILON * f64::EPSILON * (q / n as f64).max(f64::MIN_POSITIVE) {
        // No spread inside either side: any difference is a perfect separation.
        return if diff > 0.0 { f64::INFINITY } else { 0.0 };
    }
    diff / var.sqrt()
}

/// Monte-Carlo p-value of `observed` (the segment's [`max_t`]) against at most `permutations`
/// random orders of `m`, by Besag and Clifford's sequential rule: stop as soon as `stop_after`
/// shuffled statistics reached the observed one (p = stop_after / shuffles so far, which can
/// then no longer fall to the level), else p = (exceedances + 1) / (permutations + 1). Both are
/// valid p-values: P(p ≤ α) ≤ α when the runs are exchangeable.
pub(crate) fn permutation_p(
    m: &[f64],
    observed: f64,
    bounds: Bounds,
    (permutations, stop_after): (u32, u32),
    rng: &mut SplitMix64,
) -> f64 {
    let mut work = m.to_vec();
    let sums = Sums::of(m);
    let mut reached = 0u32;
    for done in 1..=permutations {
        shuffle(&mut work, rng);
        if reaches(&work, bounds, &sums, observed) {
            reached += 1;
            if reached >= stop_after {
                return f64::from(reached) / f64::from(done);
            }
        }
    }
    f64::from(reached + 1) / f64::from(permutations + 1)
}

/// What every order of one segment shares: its sums, the inverse of each side's size, and
/// the threshold below which the pooled variance counts as none.
struct Sums {
    total: f64,
    total_sq: f64,
    inverse: Vec<f64>,
    tiny: f64,
}

impl Sums {
    fn of(m: &[f64]) -> Sums {
        let n = m.len();
        let (total, total_sq) = m.iter().fold((0.0, 0.0), |(s, q), x| (s + x, q + x * x));
        let inverse = (0..=n).map(|k| if k == 0 { 0.0 } else { 1.0 / k as f64 }).collect();
        let tiny = f64::EPSILON * f64::EPSILON * (total_sq / n.max(1) as f64).max(f64::MIN_POSITIVE);
        Sums { total, total_sq, inverse, tiny }
    }
}

/// Whether some allowed split of `m` has |t| ≥ `observed`, as [`max_t`] would compute it,
/// stopping at the first one: t² ≥ observed² is tested as diff² ≥ observed² · var, without a
/// division or a square root.
fn reaches(m: &[f64], bounds: Bounds, sums: &Sums, observed: f64) -> bool {
    let n = m.len();
    let free_inv = 1.0 / (n - 2) as f64;
    let observed_sq = observed * observed;
    let (mut sl, mut ql) = (0.0, 0.0);
    for k in 1..=n - bounds.min_right {
        let x = m[k - 1];
        sl += x;
        ql += x * x;
        if k < bounds.min_left {
            continue;
        }
        let (il, ir) = (sums.inverse[k], sums.inverse[n - k]);
        let (sr, qr) = (sums.total - sl, sums.total_sq - ql);
        let ss = ((ql - sl * sl * il) + (qr - sr * sr * ir)).max(0.0);
        let diff = sr * ir - sl * il;
        let var = ss * free_inv * (il + ir);
        let hit =
            if var <= sums.tiny { diff != 0.0 || observed <= 0.0 } else { diff * diff >= observed_sq * var };
        if hit {
            return true;
        }
    }
    false
}

/// Fisher–Yates shuffle in place.
fn shuffle(v: &mut [f64], rng: &mut SplitMix64) {
    for i in (1..v.len()).rev() {
        let j = rng.index(i + 1);
        v.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_t(m: &[f64], k: usize) -> f64 {
        let (l, r) = m.split_at(k);
        let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
        let ss = |s: &[f64]| s.iter().map(|x| (x - mean(s)).powi(2)).sum::<f64>();
        let var = (ss(l) + ss(r)) / (m.len() - 2) as f64 * (1.0 / l.len() as f64 + 1.0 / r.len() as f64);
        (mean(r) - mean(l)).abs() / var.sqrt()
    }

    #[test]
    fn the_scan_matches_the_textbook_t() {
        let m = [0.3, -0.1, 0.2, 0.0, 1.1, 0.9, 1.3, 1.0];
        let b = Bounds { min_left: 2, min_right: 2 };
        let (k, t) = max_t(&m, b).unwrap();
        assert_eq!(k, 4);
        assert!((t - naive_t(&m, 4)).abs() < 1e-9, "{t}");
        for k in 2..=6 {
            assert!(naive_t(&m, k) <= t + 1e-12);
        }
    }

    #[test]
    fn bounds_are_respected() {
        let m = [5.0, 0.0, 0.1, -0.1, 0.0, 0.05];
        let (k, _) = max_t(&m, Bounds { min_left: 2, min_right: 1 }).unwrap();
        assert!(k >= 2);
        assert_eq!(max_t(&m, Bounds { min_left: 3, min_right: 4 }), None);
        assert_eq!(max_t(&[1.0, 2.0], Bounds { min_left: 1, min_right: 1 }), None);
    }

    #[test]
    fn flat_sides_are_a_perfect_split() {
        let (k, t) = max_t(&[1.0, 1.0, 1.0, 2.0, 2.0, 2.0], Bounds { min_left: 1, min_right: 1 }).unwrap();
        assert_eq!((k, t), (3, f64::INFINITY));
        let (_, t) = max_t(&[1.0; 6], Bounds { min_left: 1, min_right: 1 }).unwrap();
        assert_eq!(t, 0.0);
    }

    #[test]
    fn a_clear_step_has_a_small_p_and_noise_a_large_one() {
        let mut rng = SplitMix64::new(7);
        let step: Vec<f64> = (0..30).map(|i| if i < 15 { 0.0 } else { 1.0 } + 0.1 * rng.normal()).collect();
        let b = Bounds { min_left: 3, min_right: 3 };
        let (_, t) = max_t(&step, b).unwrap();
        let p = permutation_p(&step, t, b, (199, 10), &mut SplitMix64::new(1));
        assert!(p <= 0.01, "{p}");
        let noise: Vec<f64> = (0..30).map(|_| rng.normal()).collect();
        let (_, t) = max_t(&noise, b).unwrap();
        let p = permutation_p(&noise, t, b, (199, 10), &mut SplitMix64::new(1));
        assert!(p > 0.05, "{p}");
    }
}
