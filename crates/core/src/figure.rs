//! An engine's own figures (the extras it records beside its count) and its area in seed
//! 000's summary table, as plain declarations: each engine states them once in its
//! description, and the report reads them through a catalogue the binary builds, so that the
//! report never matches an engine by name.

use crate::params::Params;
use crate::units::Direction;

/// Where a figure's value comes from in a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The extra's own value.
    Extra,
    /// Total CPU seconds (user + kernel) per one of what the extra counts (`n_page_moved`:
    /// CPU per page moved); none when the count is 0 or the cell's CPU is below its
    /// resolution.
    CpuPerExtra,
}

/// One figure an engine records as an extra (`CellResult::extra`), or a family of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Figure {
    /// The extra's key (`gc_pause_ms`), or a family's pattern where each `*` stands for any
    /// text, none included (`*_ms`: analytics' `q01_ms`, `q02_ms` …). An exact key wins over
    /// a pattern that also matches it (analytics' `total_ms` is not a query's time).
    pub key: &'static str,
    /// What compare calls it (`GC pause time`); in a family's name, `*` stands for what the
    /// key's `*` matched (`* time`: `q01 time`).
    pub name: &'static str,
    /// Its unit as shown (`ms`, `cpu_s/page`, `MiB`, `count`).
    pub unit: &'static str,
    /// Which way is better; None for a figure compare does not compare (informational:
    /// stored, exported and shown by `show`).
    pub direction: Option<Direction>,
    pub source: Source,
}

impl Figure {
    const fn of(key: &'static str, name: &'static str, unit: &'static str, d: Option<Direction>) -> Figure {
        Figure { key, name, unit, direction: d, source: Source::Extra }
    }

    /// A figure compared with lower as better.
    pub const fn lower(key: &'static str, name: &'static str, unit: &'static str) -> Figure {
        Figure::of(key, name, unit, Some(Direction::LowerIsBetter))
    }

    /// A figure compared with higher as better.
    pub const fn higher(key: &'static str, name: &'static str, unit: &'static str) -> Figure {
        Figure::of(key, name, unit, Some(Direction::HigherIsBetter))
    }

    /// A figure compare does not compare.
    pub const fn info(key: &'static str, name: &'static str, unit: &'static str) -> Figure {
        Figure::of(key, name, unit, None)
    }

    /// CPU seconds per one of what the extra `key` counts, lower is better.
    pub const fn cpu_per(key: &'static str, name: &'static str, unit: &'static str) -> Figure {
        Figure { source: Source::CpuPerExtra, ..Figure::lower(key, name, unit) }
    }

    /// Whether compare compares it.
    pub fn compared(&self) -> bool {
        self.direction.is_some()
    }

    /// Whether the key is a pattern.
    pub fn is_family(&self) -> bool {
        self.key.contains('*')
    }

    /// What the pattern's `*`s matched in `key`, in order (empty for an exact key that is
    /// `key`); None when the figure is not `key`'s.
    pub fn matches<'k>(&self, key: &'k str) -> Option<Vec<&'k str>> {
        glob(self.key, key)
    }

    /// The name of one member of a family (the name itself for an exact key).
    pub fn name_of(&self, key: &str) -> String {
        let Some(parts) = self.matches(key) else { return self.name.to_string() };
        let mut out = String::new();
        let mut parts = parts.into_iter();
        for (i, piece) in self.name.split('*').enumerate() {
            if i > 0 {
                out.push_str(parts.next().unwrap_or("*"));
            }
            out.push_str(piece);
        }
        out
    }
}

/// The figure of `key` among `figures`: an exact key first, else the first pattern that
/// matches it.
pub fn figure_of<'f>(figures: &'f [Figure], key: &str) -> Option<&'f Figure> {
    figures
        .iter()
        .find(|f| !f.is_family() && f.key == key)
        .or_else(|| figures.iter().find(|f| f.is_family() && f.matches(key).is_some()))
}

/// Matches `text` against `pattern` (`*` = any text, none included); the texts the stars
/// matched, the leftmost star taking the least.
pub fn glob<'t>(pattern: &str, text: &'t str) -> Option<Vec<&'t str>> {
    let Some((head, rest)) = pattern.split_once('*') else {
        return (pattern == text).then(Vec::new);
    };
    let tail = text.strip_prefix(head)?;
    for cut in (0..=tail.len()).filter(|&i| tail.is_char_boundary(i)) {
        if let Some(mut more) = glob(rest, &tail[cut..]) {
            more.insert(0, &tail[..cut]);
            return Some(more);
        }
    }
    None
}

/// Seed 000's summary areas: the rows of its last table, plus racehorse's own for engines
/// the seed has no row for. The one vocabulary of compare's summary (listed in
/// `EngineInfo::summary_area`'s docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SummaryArea {
    KernelFunctions,
    ScalingCpuAndProcesses,
    CpuIntense,
    CpuAndMemoryIntense,
    FileServer,
    Database,
    DatabaseOltp,
    LargeDbBi,
    Networking,
    DiskIo,
    Java,
    Paging,
    Harness,
    Other,
}

impl SummaryArea {
    /// Every area, in the order of the list in the docs.
    pub const ALL: [SummaryArea; 14] = [
        SummaryArea::KernelFunctions,
        SummaryArea::ScalingCpuAndProcesses,
        SummaryArea::CpuIntense,
        SummaryArea::CpuAndMemoryIntense,
        SummaryArea::FileServer,
        SummaryArea::Database,
        SummaryArea::DatabaseOltp,
        SummaryArea::LargeDbBi,
        SummaryArea::Networking,
        SummaryArea::DiskIo,
        SummaryArea::Java,
        SummaryArea::Paging,
        SummaryArea::Harness,
        SummaryArea::Other,
    ];

    /// The words the summary prints.
    pub fn label(self) -> &'static str {
        match self {
            SummaryArea::KernelFunctions => "Kernel functions",
            SummaryArea::ScalingCpuAndProcesses => "Scaling CPU and processes",
            SummaryArea::CpuIntense => "CPU intense",
            SummaryArea::CpuAndMemoryIntense => "CPU and memory intense",
            SummaryArea::FileServer => "File server",
            SummaryArea::Database => "Database",
            SummaryArea::DatabaseOltp => "Database OLTP",
            SummaryArea::LargeDbBi => "Large DB / BI",
            SummaryArea::Networking => "Networking",
            SummaryArea::DiskIo => "Disk I/O",
            SummaryArea::Java => "Java",
            SummaryArea::Paging => "Paging",
            SummaryArea::Harness => "Harness",
            SummaryArea::Other => "Other",
        }
    }
}

/// Which summary area a point of an engine belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AreaRule {
    /// Every point.
    Fixed(SummaryArea),
    /// By the value of one string parameter (re-aim's mixes by their workfile): the area of
    /// the first case whose value it is, `otherwise` for another value, `missing` when the
    /// point has no such string parameter.
    ByParam {
        param: &'static str,
        cases: &'static [(&'static str, SummaryArea)],
        missing: SummaryArea,
        otherwise: SummaryArea,
    },
}

impl AreaRule {
    /// The area of a point with these parameters.
    pub fn area(&self, params: &Params) -> SummaryArea {
        match *self {
            AreaRule::Fixed(a) => a,
            AreaRule::ByParam { param, cases, missing, otherwise } => {
                match params.get(param).and_then(crate::Value::as_str) {
                    None => missing,
                    Some(v) => cases.iter().find(|(c, _)| *c == v).map_or(otherwise, |(_, a)| *a),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Value;

    #[test]
    fn patterns_match_and_name_their_members() {
        let q = Figure::lower("*_ms", "* time", "ms");
        assert_eq!(q.matches("q01_ms"), Some(vec!["q01"]));
        assert_eq!(q.matches("_ms"), Some(vec![""]), "a star may match nothing");
        assert_eq!(q.matches("q01_rows"), None);
        assert_eq!(q.name_of("q01_ms"), "q01 time");
        let two = Figure::info("*_cpu_us_per_*", "* CPU per *", "µs");
        assert_eq!(two.matches("peer_cpu_us_per_tx"), Some(vec!["peer", "tx"]));
        assert_eq!(two.name_of("peer_cpu_us_per_tx"), "peer CPU per tx");
        let exact = Figure::info("gc_count", "collections", "GCs");
        assert_eq!(exact.matches("gc_count"), Some(vec![]));
        assert_eq!(exact.matches("gc_counts"), None);
        assert!(q.is_family() && q.compared() && !exact.is_family() && !exact.compared());
    }

    #[test]
    fn an_exact_key_wins_over_a_pattern() {
        let figures = [Figure::lower("*_ms", "* time", "ms"), Figure::info("total_ms", "all queries", "ms")];
        assert_eq!(figure_of(&figures, "total_ms").map(|f| f.name), Some("all queries"));
        assert_eq!(figure_of(&figures, "q02_ms").map(|f| f.name), Some("* time"));
        assert_eq!(figure_of(&figures, "rows"), None);
    }

    #[test]
    fn an_area_rule_reads_its_parameter() {
        let rule = AreaRule::ByParam {
            param: "workfile",
            cases: &[("compute", SummaryArea::CpuAndMemoryIntense)],
            missing: SummaryArea::FileServer,
            otherwise: SummaryArea::ScalingCpuAndProcesses,
        };
        let with = |v: Value| Params::from([("workfile".to_string(), v)]);
        assert_eq!(rule.area(&with(Value::Str("compute".into()))), SummaryArea::CpuAndMemoryIntense);
        assert_eq!(rule.area(&with(Value::Str("shared".into()))), SummaryArea::ScalingCpuAndProcesses);
        assert_eq!(rule.area(&with(Value::Int(3))), SummaryArea::FileServer, "not a string: as if absent");
        assert_eq!(rule.area(&Params::new()), SummaryArea::FileServer);
        assert_eq!(AreaRule::Fixed(SummaryArea::DiskIo).area(&Params::new()).label(), "Disk I/O");
    }
}
