//! Profiles: the images and symbols of a point's measured windows merged (mean share over
//! its repetitions, as `opreport` and `opreport -l` list them) and listed, and what grew or
//! shrank between two of them, in percentage points of all samples. Comparing the profiles
//! of two runs point by point is [`crate::compare::profiles`]'s.

use crate::flame::FrameTree;
use racehorse_core::{CellResult, Profile, ProfileEntry};
use std::collections::BTreeMap;
use std::fmt::Write;

/// An image or a symbol and its mean share (percent of all samples).
#[derive(Debug, Clone, PartialEq)]
pub struct Share {
    pub image: String,
    pub symbol: Option<String>,
    pub pct: f64,
}

/// The profiles of one point's windows, merged.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    pub event: String,
    /// Profiled windows merged.
    pub windows: usize,
    /// Samples over all of them.
    pub samples: u64,
    pub images: Vec<Share>,
    pub symbols: Vec<Share>,
    /// The windows' call stacks merged into a frame tree, when they were recorded.
    pub flame: Option<FrameTree>,
}

/// Means per (image, symbol) over `n` windows; an entry missing from a window's top list
/// counts as 0 there. Largest first, ties by name.
fn mean_shares<'a>(lists: impl Iterator<Item = &'a [ProfileEntry]>, n: usize) -> Vec<Share> {
    let mut sum: BTreeMap<(String, Option<String>), f64> = BTreeMap::new();
    for list in lists {
        for e in list {
            *sum.entry((e.image.clone(), e.symbol.clone())).or_default() += e.share_pct;
        }
    }
    let mut out: Vec<Share> = sum
        .into_iter()
        .map(|((image, symbol), s)| Share { image, symbol, pct: s / n.max(1) as f64 })
        .collect();
    out.sort_by(|a, b| {
        b.pct.total_cmp(&a.pct).then_with(|| (&a.image, &a.symbol).cmp(&(&b.image, &b.symbol)))
    });
    out
}

/// Merges the profiles of `cells` (those that have one); None when none has.
pub fn merge(cells: &[&CellResult]) -> Option<Merged> {
    let profiles: Vec<&Profile> = cells.iter().filter_map(|c| c.profile.as_ref()).collect();
    let first = profiles.first()?;
    let n = profiles.len();
    Some(Merged {
        event: first.event.clone(),
        windows: n,
        samples: profiles.iter().map(|p| p.samples).sum(),
        images: mean_shares(profiles.iter().map(|p| p.images.as_slice()), n),
        symbols: mean_shares(profiles.iter().map(|p| p.symbols.as_slice()), n),
        flame: FrameTree::from_cells(cells),
    })
}

/// A share in the base and in the new run.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub image: String,
    pub symbol: Option<String>,
    pub base_pct: f64,
    pub new_pct: f64,
}

impl Change {
    /// New minus base, in percentage points.
    pub fn delta_pp(&self) -> f64 {
        self.new_pct - self.base_pct
    }
}

/// The `top` entries whose share moved most (absent on one side = 0 there), largest move first.
pub fn changes(base: &[Share], new: &[Share], top: usize) -> Vec<Change> {
    let mut both: BTreeMap<(String, Option<String>), (f64, f64)> = BTreeMap::new();
    for s in base {
        both.entry((s.image.clone(), s.symbol.clone())).or_default().0 = s.pct;
    }
    for s in new {
        both.entry((s.image.clone(), s.symbol.clone())).or_default().1 = s.pct;
    }
    let mut out: Vec<Change> = both
        .into_iter()
        .map(|((image, symbol), (b, n))| Change { image, symbol, base_pct: b, new_pct: n })
        .collect();
    out.sort_by(|a, b| b.delta_pp().abs().total_cmp(&a.delta_pp().abs()));
    out.truncate(top);
    out
}

/// `symbol  (image)`, or the image alone.
pub fn name_of(image: &str, symbol: &Option<String>) -> String {
    match symbol {
        Some(s) => format!("{s}  ({image})"),
        None => image.to_string(),
    }
}

/// The merged profile as text: images, then symbols, `top` of each.
pub fn profile_text(title: &str, m: &Merged, top: usize) -> String {
    let mut out = format!("{title}: {} samples of {} in {} window(s)\n", m.samples, m.event, m.windows);
    for (what, list) in [("images", &m.images), ("symbols", &m.symbols)] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(out, "  {:>7}  {what}", "share %");
        for s in list.iter().take(top) {
            let _ = writeln!(out, "  {:>7.2}  {}", s.pct, name_of(&s.image, &s.symbol));
        }
    }
    if let Some(t) = &m.flame {
        let _ = writeln!(
            out,
            "  call stacks of {} samples: `racehorse profile` lists the hottest frames, `report -o FILE.html` draws them",
            t.frames[0].samples
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(image: &str, symbol: Option<&str>, pct: f64) -> ProfileEntry {
        ProfileEntry { image: image.into(), symbol: symbol.map(str::to_string), share_pct: pct }
    }

    fn profile(kernel: f64, app: f64) -> Profile {
        Profile {
            event: "cpu-clock".into(),
            samples: 1000,
            images: vec![entry("[kernel.kallsyms]", None, kernel), entry("app", None, app)],
            symbols: vec![entry("[kernel.kallsyms]", Some("copy_user"), kernel / 2.0)],
            ..Profile::default()
        }
    }

    fn cell(p: Option<Profile>) -> CellResult {
        let spec = racehorse_core::CellSpec {
            workload: "null".into(),
            params: Default::default(),
            variant: "default".into(),
            rep: 1,
        };
        let mut c = CellResult::empty(spec, racehorse_core::WorkUnit::Ops);
        c.profile = p;
        c
    }

    #[test]
    fn merging_averages_over_windows_and_counts_missing_as_zero() {
        let (a, b, none) = (cell(Some(profile(60.0, 40.0))), cell(Some(profile(80.0, 0.0))), cell(None));
        let mut lone = profile(80.0, 0.0);
        lone.images.truncate(1);
        let c = cell(Some(lone));
        let m = merge(&[&a, &none, &c]).expect("two profiled windows");
        assert_eq!((m.windows, m.samples), (2, 2000));
        assert_eq!(m.images[0], Share { image: "[kernel.kallsyms]".into(), symbol: None, pct: 70.0 });
        assert_eq!(m.images[1].pct, 20.0, "app is missing from one window's list: 40 and 0");
        assert!(merge(&[&none]).is_none());
        let text = profile_text("#1", &merge(&[&b]).expect("one"), 5);
        assert!(text.contains("#1: 1000 samples of cpu-clock in 1 window(s)"), "{text}");
        assert!(text.contains("copy_user  ([kernel.kallsyms])"), "{text}");
    }

    #[test]
    fn changes_rank_by_the_size_of_the_move() {
        let base = vec![
            Share { image: "a".into(), symbol: None, pct: 50.0 },
            Share { image: "b".into(), symbol: None, pct: 10.0 },
        ];
        let new = vec![
            Share { image: "a".into(), symbol: None, pct: 45.0 },
            Share { image: "c".into(), symbol: None, pct: 30.0 },
        ];
        let c = changes(&base, &new, 2);
        assert_eq!(c.len(), 2);
        assert_eq!((c[0].image.as_str(), c[0].delta_pp()), ("c", 30.0), "new in the new run");
        assert_eq!((c[1].image.as_str(), c[1].delta_pp()), ("b", -10.0), "gone from the new run");
    }
}
