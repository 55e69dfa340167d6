//! Where the CPU time went, as records of `compare --format json` (`profiles[]`): for every
//! point profiled on both sides of one new side, the images and symbols whose share moved
//! most, the frames whose own CPU per unit of work moved most, and the counters per unit with
//! their intervals — the same tables `compare` prints, in base units.

use crate::compare::counters::{CounterCompare, Counters};
use crate::compare::formats::add_compare_fields;
use crate::compare::frames::{moved_most, stack_of};
use crate::compare::profiles::{picked, points, side_counters, Point};
use crate::flame::FrameTree;
use crate::model::{Metric, Side};
use crate::profile::Change;
use serde_json::{json, Value};

fn shares(list: Vec<Change>) -> Vec<Value> {
    list.into_iter()
        .map(|c| {
            json!({
                "image": c.image,
                "symbol": c.symbol,
                "base_pct": c.base_pct,
                "new_pct": c.new_pct,
                "change_pp": c.delta_pp(),
            })
        })
        .collect()
}

/// The frames that moved most, each with its stack (outermost caller first).
fn frames(base: &FrameTree, new: &FrameTree, top: usize) -> Vec<Value> {
    if base.units <= 0.0 || new.units <= 0.0 {
        return Vec::new();
    }
    moved_most(base, new, top)
        .into_iter()
        .map(|c| {
            json!({
                "stack": stack_of(&c, base, new),
                "base_self": c.base_self,
                "new_self": c.new_self,
                "self_ratio": c.self_ratio(),
                "base_total": c.base_total,
                "new_total": c.new_total,
            })
        })
        .collect()
}

/// One counter's record, in the fields of docs/formats.md (an item's comparison fields).
fn counter(r: &CounterCompare) -> Value {
    let mut rec = json!({
        "event": r.event,
        "label": r.label,
        "higher_is_better": r.cmp.metric.direction() == racehorse_core::Direction::HigherIsBetter,
    });
    add_compare_fields(&mut rec, &r.cmp);
    rec
}

fn point_json(side: usize, p: &Point, counters: &Counters, top: usize) -> Value {
    let (bf, nf) = (p.base.flame.as_ref(), p.new.flame.as_ref());
    json!({
        "side": side,
        "workload": p.key.workload,
        "variant": p.key.variant,
        "params": p.key.params,
        "event": p.new.event,
        "windows": [p.base.windows, p.new.windows],
        "samples": [p.base.samples, p.new.samples],
        "images": shares(crate::profile::changes(&p.base.images, &p.new.images, top)),
        "symbols": shares(crate::profile::changes(&p.base.symbols, &p.new.symbols, top)),
        "cpu_unit": Metric::CpuTotalPerUnit.base_unit(p.unit),
        "frames": match (bf, nf) {
            (Some(b), Some(n)) => frames(b, n, top),
            _ => Vec::new(),
        },
        "stacks_on_both_sides": bf.is_some() && nf.is_some(),
        "counters": counters.rows.iter().map(counter).collect::<Vec<_>>(),
        "counters_unsupported": counters.unsupported,
    })
}

/// One record per point profiled on both `base` and `new` (new side number `side`).
pub fn compare_profiles_json(base: &Side, new: &Side, side: usize, top: usize) -> Vec<Value> {
    let (b_cells, n_cells) = (picked(base), picked(new));
    let points = points(&b_cells, &n_cells);
    points.iter().zip(side_counters(&points)).map(|(p, c)| point_json(side, p, &c, top)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::run_info;
    use racehorse_core::{CellResult, CellSpec, Counter, Profile, ProfileEntry, WorkUnit};

    fn cell(units: f64, instructions: f64, hot: f64) -> CellResult {
        let spec =
            CellSpec { workload: "w".into(), params: Default::default(), variant: "default".into(), rep: 1 };
        let mut c = CellResult::empty(spec, WorkUnit::Ops);
        c.units = units;
        let entry = |symbol: Option<&str>, share_pct: f64| ProfileEntry {
            image: "prog".into(),
            symbol: symbol.map(str::to_string),
            share_pct,
        };
        c.profile = Some(Profile {
            event: "cpu-clock".into(),
            samples: 1000,
            images: vec![entry(None, 100.0)],
            symbols: vec![entry(Some("hot"), hot), entry(Some("cold"), 100.0 - hot)],
            counters: vec![
                Counter { event: "instructions".into(), count: Some(instructions) },
                Counter { event: "cycles".into(), count: None },
            ],
            ..Profile::default()
        });
        c
    }

    #[test]
    fn profiles_become_records_with_counters_and_their_intervals() {
        let side = |cells: Vec<CellResult>, id: i64| Side::whole(run_info(id, "r"), cells);
        let base = side((0..3).map(|i| cell(1000.0, 4e6 + f64::from(i) * 1e3, 40.0)).collect(), 1);
        let new = side((0..3).map(|i| cell(1000.0, 8e6 + f64::from(i) * 1e3, 60.0)).collect(), 2);
        let recs = compare_profiles_json(&base, &new, 0, 10);
        assert_eq!(recs.len(), 1, "{recs:?}");
        let r = &recs[0];
        assert_eq!(r["workload"], "w");
        assert_eq!(r["symbols"][0]["symbol"], "cold", "equal moves keep name order: {r}");
        assert!((r["symbols"][0]["change_pp"].as_f64().unwrap() + 20.0).abs() < 1e-9, "{r}");
        let c = &r["counters"][0];
        assert_eq!(c["event"], "instructions");
        assert!((c["ratio"].as_f64().unwrap() - 2.0).abs() < 1e-3, "{c}");
        assert_eq!((c["significant"].as_bool(), c["verdict"].as_str()), (Some(true), Some("worse")));
        assert!(c["ci_lo"].as_f64().unwrap() > 1.9 && c["ci_hi"].as_f64().unwrap() < 2.1, "{c}");
        assert_eq!(r["counters_unsupported"], json!(["cycles"]), "{r}");
        assert_eq!(r["frames"], json!([]), "no stacks were recorded");
        assert_eq!(r["stacks_on_both_sides"], false);
        let unprofiled = side(vec![CellResult::empty(base.cells[0].spec.clone(), WorkUnit::Ops)], 3);
        assert!(compare_profiles_json(&base, &unprofiled, 0, 10).is_empty());
    }
}
