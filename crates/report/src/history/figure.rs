//! Which figure of a point a history follows: throughput, CPU per unit (total, kernel, user),
//! a latency percentile of one operation, or an engine figure; how to read it from a cell,
//! which way is better, and when a repetition's value is below its resolution.

use crate::model::Metric;
use racehorse_core::{quality, CellResult, Direction, WorkUnit};

/// A figure of a cell that history can follow.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Figure {
    Metric(MetricName),
    /// A latency percentile (50, 90, 99 or 99.9 as per mille: 500, 900, 990, 999) of an
    /// operation.
    Latency {
        op: String,
        per_mille: u16,
    },
    /// An engine figure (a key of the cell's extras).
    Engine(String),
}

/// The four metrics every cell has (an ordered copy of [`Metric`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MetricName {
    Throughput,
    CpuTotal,
    CpuKernel,
    CpuUser,
}

impl MetricName {
    pub fn metric(self) -> Metric {
        match self {
            MetricName::Throughput => Metric::Throughput,
            MetricName::CpuTotal => Metric::CpuTotalPerUnit,
            MetricName::CpuKernel => Metric::CpuKernelPerUnit,
            MetricName::CpuUser => Metric::CpuUserPerUnit,
        }
    }
}

/// The figures a scan of the whole store follows for every point.
pub const SCANNED: [Figure; 4] = [
    Figure::Metric(MetricName::Throughput),
    Figure::Metric(MetricName::CpuTotal),
    Figure::Metric(MetricName::CpuKernel),
    Figure::Metric(MetricName::CpuUser),
];

impl Figure {
    /// Parses a figure as `--figure` takes it: `throughput`, `cpu` (or `cpu_total`),
    /// `cpu_kernel`, `cpu_user`, `p50:OP` / `p90:OP` / `p99:OP` / `p99.9:OP`, `extra:KEY`.
    pub fn parse(text: &str) -> Result<Figure, String> {
        let t = text.trim();
        let metric = match t {
            "throughput" => Some(MetricName::Throughput),
            "cpu" | "cpu_total" | "cpu_total_per_unit" => Some(MetricName::CpuTotal),
            "cpu_kernel" | "cpu_kernel_per_unit" => Some(MetricName::CpuKernel),
            "cpu_user" | "cpu_user_per_unit" => Some(MetricName::CpuUser),
            _ => None,
        };
        if let Some(m) = metric {
            return Ok(Figure::Metric(m));
        }
        if let Some((kind, name)) = t.split_once(':').filter(|(_, n)| !n.is_empty()) {
            let per_mille = match kind {
                "p50" => Some(500),
                "p90" => Some(900),
                "p99" => Some(990),
                "p99.9" => Some(999),
                "extra" => return Ok(Figure::Engine(name.to_string())),
                _ => None,
            };
            if let Some(per_mille) = per_mille {
                return Ok(Figure::Latency { op: name.to_string(), per_mille });
            }
        }
        Err(format!(
            "figure {t:?}: use throughput, cpu, cpu_kernel, cpu_user, p50:OP, p90:OP, p99:OP, p99.9:OP or extra:KEY"
        ))
    }

    /// The name `parse` reads back, used in series keys and machine formats.
    pub fn name(&self) -> String {
        match self {
            Figure::Metric(m) => m.metric().name().to_string(),
            Figure::Latency { op, per_mille } => format!("{}:{op}", percentile_name(*per_mille)),
            Figure::Engine(k) => format!("extra:{k}"),
        }
    }

    /// A heading for people.
    pub fn header(&self) -> String {
        match self {
            Figure::Metric(m) => m.metric().header().to_string(),
            Figure::Latency { op, per_mille } => format!("{op} {} latency", percentile_name(*per_mille)),
            Figure::Engine(k) => k.clone(),
        }
    }

    /// The figure's unit in machine formats.
    pub fn unit(&self, unit: WorkUnit, engine_unit: Option<&str>) -> String {
        match self {
            Figure::Metric(m) => m.metric().base_unit(unit),
            Figure::Latency { .. } => "ns".to_string(),
            Figure::Engine(_) => engine_unit.unwrap_or("").to_string(),
        }
    }

    /// Which way is better; an engine figure's direction is the engine's declaration
    /// (`engine_direction`), higher-is-better when it has none.
    pub fn direction(&self, engine_direction: Option<Direction>) -> Direction {
        match self {
            Figure::Metric(m) => m.metric().direction(),
            Figure::Latency { .. } => Direction::LowerIsBetter,
            Figure::Engine(_) => engine_direction.unwrap_or(Direction::HigherIsBetter),
        }
    }

    /// The figure of one repetition, and whether it is below its resolution (then it is
    /// never used as a number).
    pub fn read(&self, c: &CellResult) -> (Option<f64>, bool) {
        match self {
            Figure::Metric(m) => {
                let metric = m.metric();
                let name = if metric == Metric::Throughput { quality::THROUGHPUT } else { quality::CPU };
                (metric.value(c), c.quality.below(name))
            }
            Figure::Latency { op, per_mille } => {
                let value = c.latencies.iter().find(|o| &o.op == op).and_then(|o| {
                    (o.latency.count > 0)
                        .then(|| o.latency.quantile_ns(f64::from(*per_mille) / 1000.0) as f64)
                });
                (value, c.quality.below(&format!("latency {op}")))
            }
            Figure::Engine(k) => (c.extra.get(k).copied().filter(|x| x.is_finite()), c.quality.below(k)),
        }
    }

    /// Whether reading needs the cells' latency histograms.
    pub fn needs_latencies(&self) -> bool {
        matches!(self, Figure::Latency { .. })
    }
}

fn percentile_name(per_mille: u16) -> String {
    if per_mille.is_multiple_of(10) {
        format!("p{}", per_mille / 10)
    } else {
        format!("p{}.{}", per_mille / 10, per_mille % 10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_parse_and_print_back() {
        for text in [
            "throughput",
            "cpu_total_per_unit",
            "cpu_kernel_per_unit",
            "cpu_user_per_unit",
            "p99:read",
            "p99.9:rr",
            "extra:gc_time_ms",
        ] {
            let f = Figure::parse(text).unwrap();
            assert_eq!(Figure::parse(&f.name()).unwrap(), f, "{text}");
        }
        assert_eq!(Figure::parse("cpu").unwrap(), Figure::Metric(MetricName::CpuTotal));
        assert_eq!(Figure::parse("p99:read").unwrap().name(), "p99:read");
        for bad in ["", "tput", "p98:read", "p99:", "extra:"] {
            assert!(Figure::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Figure::parse("p50:x").unwrap().direction(None), Direction::LowerIsBetter);
        assert_eq!(
            Figure::parse("extra:k").unwrap().direction(Some(Direction::LowerIsBetter)),
            Direction::LowerIsBetter
        );
    }
}
