//! Where the CPU time went, base against new: for every point profiled on both sides, the
//! images and symbols whose share of the samples grew or shrank most (`compare`'s text after
//! its tables).

use crate::model::{group_cells, GroupKey, Side};
use crate::profile::{changes, merge, name_of};
use racehorse_core::CellResult;
use std::fmt::Write;

fn point_name(k: &GroupKey) -> String {
    let params: Vec<String> = k
        .params
        .iter()
        .map(|(n, v)| format!("{n}={}", racehorse_core::params::display_value(n, v)))
        .collect();
    format!("{} {}", k.workload, params.join(" "))
}

/// For every point profiled on both sides: the images and symbols whose share grew or
/// shrank most. Empty when no point was profiled on both.
pub fn compare_profiles_text(base: &Side, new: &Side, top: usize) -> String {
    let pick = |s: &Side| -> Vec<CellResult> {
        s.cells.iter().filter(|c| s.variant.as_ref().is_none_or(|v| &c.spec.variant == v)).cloned().collect()
    };
    let (b_cells, n_cells) = (pick(base), pick(new));
    let (b, n) = (group_cells(&b_cells, false), group_cells(&n_cells, false));
    let mut out = String::new();
    for (key, bg) in &b {
        let (Some(bm), Some(nm)) = (merge(&bg.ok), n.get(key).and_then(|g| merge(&g.ok))) else { continue };
        let _ = writeln!(
            out,
            "\nProfile changes, {} (share of samples: base → new, change in points)",
            point_name(key)
        );
        for (what, list) in [
            ("images", changes(&bm.images, &nm.images, top)),
            ("symbols", changes(&bm.symbols, &nm.symbols, top)),
        ] {
            let _ = writeln!(out, "  {:>7}  {:>7}  {:>7}  {what}", "base %", "new %", "change");
            for c in list {
                let _ = writeln!(
                    out,
                    "  {:>7.2}  {:>7.2}  {:>+7.2}  {}",
                    c.base_pct,
                    c.new_pct,
                    c.delta_pp(),
                    name_of(&c.image, &c.symbol)
                );
            }
        }
    }
    if !out.is_empty() {
        out.insert_str(0, &format!("\nWhere the CPU time went: {} → {}\n", base.name(), new.name()));
    }
    out
}
