//! How one compared figure reads in a comparison's tables: what the tables show beyond
//! ratios ([`View`]), a metric's cell (`1.12 +12.0%*~`, toned for HTML) and its interval.

use crate::compare::metric::MetricCompare;
use crate::model::Verdict;
use crate::quality::{BELOW_RES, NOISY_MARK};
use crate::render::doc::{Cell, Tone};
use crate::render::units::{pct, ratio};

/// What the tables show beyond ratios.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct View {
    /// Base and new means in display units.
    pub absolute: bool,
    /// The confidence interval of each ratio.
    pub ci: bool,
}

/// The text of one metric cell: `1.12 +12.0%*~`, and its tone.
pub fn metric_cell(m: &MetricCompare) -> Cell {
    if m.below_resolution {
        return Cell::toned(BELOW_RES, Tone::Muted);
    }
    let Some(r) = m.ratio else { return Cell::toned("n/a", Tone::Muted) };
    let mut s = format!("{} {}", ratio(r), pct(m.gain_pct.unwrap_or(f64::NAN)));
    if m.significant == Some(true) {
        s.push('*');
    }
    if m.noisy {
        s.push('~');
    }
    if m.noisy_window {
        s.push(NOISY_MARK);
    }
    let tone = match (m.significant, m.verdict) {
        _ if m.noisy_window => Tone::Muted,
        (Some(true), Some(Verdict::Better)) => Tone::Better,
        (Some(true), Some(Verdict::Worse)) => Tone::Worse,
        (Some(_), _) => Tone::Muted,
        _ => Tone::Plain,
    };
    Cell::toned(s, tone)
}

pub fn ci_cell(m: &MetricCompare) -> Cell {
    match m.ci {
        Some(ci) => Cell::plain(format!("[{}, {}]", ratio(ci.lo), ratio(ci.hi))),
        None => Cell::toned("n/a", Tone::Muted),
    }
}
