//! Seed 001's "Overall Results": for workloads run in phases (IOzone's write, rewrite,
//! read …), one more point per configuration and repetition that sums the phases — all
//! units over all windows, all CPU over all units — so whole runs compare in one row.

use racehorse_core::{CellQuality, CellResult, CellStatus, Nanos, Value};
use std::collections::BTreeMap;

/// The parameter that names a phase.
pub const PHASE_PARAM: &str = "phase";
/// The phase value of the summed point.
pub const OVERALL: &str = "overall";

/// Summed "overall" cells for every (workload, variant, other parameters, repetition) that
/// ran at least two phases with every phase ok; empty when nothing has phases.
pub fn overall_cells<'a>(cells: impl IntoIterator<Item = &'a CellResult>) -> Vec<CellResult> {
    let mut groups: BTreeMap<String, Vec<&CellResult>> = BTreeMap::new();
    for c in cells {
        let Some(Value::Str(phase)) = c.spec.params.get(PHASE_PARAM) else { continue };
        if phase == OVERALL {
            continue;
        }
        let mut spec = c.spec.clone();
        spec.params.remove(PHASE_PARAM);
        groups.entry(format!("{}|#{}", spec.match_key(), spec.rep)).or_default().push(c);
    }
    groups.into_values().filter_map(|g| sum_phases(&g)).collect()
}

fn sum_phases(phases: &[&CellResult]) -> Option<CellResult> {
    let first = *phases.first()?;
    if phases.len() < 2 || phases.iter().any(|c| c.status != CellStatus::Ok) {
        return None;
    }
    let mut spec = first.spec.clone();
    spec.params.insert(PHASE_PARAM.into(), Value::Str(OVERALL.into()));
    let mut out = CellResult::empty(spec, first.unit);
    for c in phases {
        out.units += c.units;
        out.window = Nanos(out.window.0 + c.window.0);
        out.ops += c.ops;
        out.bytes_read += c.bytes_read;
        out.bytes_written += c.bytes_written;
        out.cpu.user_s += c.cpu.user_s;
        out.cpu.kernel_s += c.cpu.kernel_s;
        out.cpu.steal_s += c.cpu.steal_s;
        out.cpu.iowait_s += c.cpu.iowait_s;
        out.cpu.idle_s += c.cpu.idle_s;
        out.cpus_online = c.cpus_online;
    }
    out.quality = sum_quality(phases);
    Some(out)
}

/// The overall cell is as trustworthy as its phases: noisy when any phase was (the first
/// reason, named by its phase), below resolution where any phase was, CPU seconds summed.
fn sum_quality(phases: &[&CellResult]) -> CellQuality {
    let sum = |f: fn(&CellQuality) -> Option<f64>| -> Option<f64> {
        phases.iter().map(|c| f(&c.quality)).sum::<Option<f64>>()
    };
    let mut q = CellQuality {
        outside_cpu_s: sum(|q| q.outside_cpu_s),
        kthread_cpu_s: sum(|q| q.kthread_cpu_s),
        own_cpu_s: sum(|q| q.own_cpu_s),
        ..CellQuality::default()
    };
    q.noisy = phases.iter().find_map(|c| {
        let why = c.quality.noisy.as_ref()?;
        Some(match c.spec.params.get(PHASE_PARAM) {
            Some(p) => format!("phase {p}: {why}"),
            None => why.clone(),
        })
    });
    for c in phases {
        for (name, why) in &c.quality.below_resolution {
            q.below_resolution.entry(name.clone()).or_insert_with(|| why.clone());
        }
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;
    use racehorse_core::{CellSpec, CpuUsage, Params, WorkUnit};

    fn cell(phase: &str, rep: u32, units: f64, secs: u64, cpu_s: f64) -> CellResult {
        let mut params = Params::new();
        params.insert("phase".into(), Value::Str(phase.into()));
        params.insert("procs".into(), Value::Int(8));
        let spec = CellSpec { workload: "diskio".into(), params, variant: "default".into(), rep };
        let mut c = CellResult::empty(spec, WorkUnit::Bytes);
        c.units = units;
        c.window = Nanos(secs * 1_000_000_000);
        c.cpu = CpuUsage { user_s: cpu_s / 2.0, kernel_s: cpu_s / 2.0, ..CpuUsage::default() };
        c
    }

    #[test]
    fn phases_sum_per_repetition() {
        let cells = vec![
            cell("write", 1, 100.0, 1, 2.0),
            cell("read", 1, 300.0, 1, 2.0),
            cell("read", 2, 50.0, 1, 1.0),
        ];
        let o = overall_cells(&cells);
        assert_eq!(o.len(), 1, "rep 2 has one phase only");
        assert_eq!(o[0].spec.params["phase"], Value::Str("overall".into()));
        assert_eq!(o[0].throughput(), 200.0);
        assert_eq!(o[0].cpu_total_per_unit(), Some(0.01));
    }

    #[test]
    fn failed_phases_give_no_overall_and_plain_workloads_none() {
        let mut cells = vec![cell("write", 1, 100.0, 1, 2.0), cell("read", 1, 300.0, 1, 2.0)];
        cells[1].status = CellStatus::Failed;
        assert!(overall_cells(&cells).is_empty());
        cells[1].spec.params.remove("phase");
        cells[0].spec.params.remove("phase");
        assert!(overall_cells(&cells).is_empty());
    }

    #[test]
    fn overall_is_noisy_and_below_resolution_when_a_phase_is() {
        let mut cells = vec![cell("write", 1, 100.0, 1, 2.0), cell("read", 1, 300.0, 1, 2.0)];
        cells[1].quality.noisy = Some("outside CPU 0.9 s".into());
        cells[1].quality.outside_cpu_s = Some(0.9);
        cells[0].quality.outside_cpu_s = Some(0.1);
        cells[0].quality.mark_below(racehorse_core::quality::CPU, "3 ticks");
        let o = overall_cells(&cells);
        assert_eq!(o[0].quality.noisy.as_deref(), Some("phase read: outside CPU 0.9 s"));
        assert_eq!(o[0].quality.outside_cpu_s, Some(1.0));
        assert_eq!(o[0].cpu_total_per_unit(), None, "below resolution in a phase: below overall");
        assert_eq!(o[0].throughput_resolved(), Some(200.0));
    }
}
