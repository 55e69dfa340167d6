//! CPU cache levels: what sysfs says they are, working-set sizes that land inside each level, and
//! a cross-check of sysfs against the steps in a measured latency curve (lat_mem_rd's plateaus).

use racehorse_machine::cpucache::{self, CacheIndex};
use racehorse_machine::SysRoot;

/// A data or unified cache (instruction caches are left out).
#[derive(Debug, Clone, PartialEq)]
pub struct CacheLevel {
    pub level: u8,
    pub size_bytes: u64,
    /// The coherency line size; 0 when sysfs does not give it.
    pub line_bytes: u64,
}

/// Working sets are whole multiples of this (bw_mem's chunk), and at least one.
const GRANULE_BYTES: u64 = 512;
/// The least working set for main memory.
const MIN_MEM_BYTES: u64 = 64 << 20;

pub use racehorse_machine::cpucache::parse_size_bytes;

/// The data and unified caches of `cpu`, from
/// `<sys>/devices/system/cpu/cpu<N>/cache/index*/{level,type,size,coherency_line_size}` (read by
/// [`racehorse_machine::cpucache`]), sorted by level (then size). An index without a `size` file
/// is skipped; an unreadable directory or file or a malformed value is an error.
pub fn from_sysfs(root: &SysRoot, cpu: u32) -> Result<Vec<CacheLevel>, String> {
    let indexes = cpucache::cache_indexes(root, cpu).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for index in &indexes {
        if let Some(level) = data_level(index)? {
            out.push(level);
        }
    }
    out.sort_by_key(|c| (c.level, c.size_bytes));
    Ok(out)
}

/// One index as a level: None for instruction caches and entries without a size. Its files are
/// checked in the order type, size, level, coherency_line_size.
fn data_level(index: &CacheIndex) -> Result<Option<CacheLevel>, String> {
    let problem = |file: &str| index.problem(file).map_or(Ok(()), |p| Err(p.to_string()));
    problem("type")?;
    if index.is_instruction() {
        return Ok(None);
    }
    problem("size")?;
    let Some(size_bytes) = index.size_bytes else { return Ok(None) };
    problem("level")?;
    let level = index.level.ok_or_else(|| format!("{}: no level", index.dir.display()))?;
    problem("coherency_line_size")?;
    Ok(Some(CacheLevel { level, size_bytes, line_bytes: index.line_bytes.unwrap_or(0) }))
}

/// A level of the memory hierarchy a working set can target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    L1,
    L2,
    L3,
    L4,
    Mem,
}

impl Level {
    pub fn parse(s: &str) -> Option<Level> {
        match s.to_ascii_lowercase().as_str() {
            "l1" => Some(Level::L1),
            "l2" => Some(Level::L2),
            "l3" => Some(Level::L3),
            "l4" => Some(Level::L4),
            "mem" => Some(Level::Mem),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Level::L1 => "l1",
            Level::L2 => "l2",
            Level::L3 => "l3",
            Level::L4 => "l4",
            Level::Mem => "mem",
        }
    }

    /// The cache level number; None for main memory.
    fn number(self) -> Option<u8> {
        match self {
            Level::L1 => Some(1),
            Level::L2 => Some(2),
            Level::L3 => Some(3),
            Level::L4 => Some(4),
            Level::Mem => None,
        }
    }
}

/// A working-set size inside `level`, a multiple of 512 bytes. For a cache: half its size (room to
/// spare) if that is more than the next level down holds, else halfway between the two. For main
/// memory: the larger of 8 times the largest cache and 64 MiB. An error names the levels the
/// machine has when it has no such cache.
pub fn working_set(levels: &[CacheLevel], level: Level) -> Result<u64, String> {
    let Some(n) = level.number() else {
        let largest = levels.iter().map(|c| c.size_bytes).max().unwrap_or(0);
        return Ok(round_down(largest.saturating_mul(8).max(MIN_MEM_BYTES)));
    };
    // Several caches on one level (unusual): the largest counts.
    let size = levels.iter().filter(|c| c.level == n).map(|c| c.size_bytes).max().ok_or_else(|| {
        let mut have: Vec<String> = levels.iter().map(|c| format!("L{}", c.level)).collect();
        have.dedup();
        let have = if have.is_empty() { "none".to_string() } else { have.join(", ") };
        format!("this machine has no L{n} cache (its caches: {have})")
    })?;
    let lower = levels.iter().filter(|c| c.level < n).map(|c| c.size_bytes).max().unwrap_or(0);
    let half = size / 2;
    let pick = if half > lower { half } else { (lower + size) / 2 };
    Ok(round_down(pick))
}

/// Rounds down to a multiple of 512, at least 512.
fn round_down(bytes: u64) -> u64 {
    (bytes / GRANULE_BYTES * GRANULE_BYTES).max(GRANULE_BYTES)
}

/// Steps in a latency curve `[(size_bytes, ns)]`: walking up the sizes, a point more than `jump`
/// times (e.g. 1.3) the median of the current plateau starts a new plateau, and the size before it
/// is reported as the capacity of the level just left. A lone high point that the next point does
/// not confirm is noise and ignored; steps less than a factor 2 above the previous one are the same
/// transition ramping up and are merged into it. Points with non-finite or negative latencies are
/// dropped; the points need not be sorted. The result is sorted and taken from the input sizes.
pub fn detect_boundaries(points: &[(usize, f64)], jump: f64) -> Vec<usize> {
    let mut pts: Vec<(usize, f64)> =
        points.iter().copied().filter(|p| p.1.is_finite() && p.1 >= 0.0).collect();
    pts.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut out: Vec<usize> = Vec::new();
    let Some(&(_, first)) = pts.first() else { return out };
    let mut plateau = vec![first];
    for i in 1..pts.len() {
        let threshold = jump * median(&mut plateau);
        let (_, ns) = pts[i];
        if ns <= threshold {
            plateau.push(ns);
            continue;
        }
        let confirmed = pts.get(i + 1).is_none_or(|next| next.1 > threshold);
        if !confirmed {
            continue;
        }
        let capacity = pts[i - 1].0;
        if out.last().is_none_or(|&prev| capacity > prev && capacity >= prev.saturating_mul(2)) {
            out.push(capacity);
        }
        plateau = vec![ns];
    }
    out
}

/// The median (the upper one for an even count) of a non-empty list.
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Compares sysfs with measured boundaries: one human-readable line for each level that no
/// boundary lies within a factor 2 of, naming the nearest boundary if there is one.
pub fn cross_check(levels: &[CacheLevel], boundaries: &[usize]) -> Vec<String> {
    let mut out = Vec::new();
    for c in levels {
        let size = c.size_bytes as f64;
        let distance = |b: usize| (b as f64 / size).ln().abs();
        if boundaries.iter().any(|&b| distance(b) <= 2f64.ln() + 1e-9) {
            continue;
        }
        let nearest = boundaries.iter().copied().min_by(|&a, &b| distance(a).total_cmp(&distance(b)));
        let seen = match nearest {
            Some(b) => format!("the latency curve steps at {}", human_bytes(b as u64)),
            None => "the latency curve shows no step".to_string(),
        };
        out.push(format!("L{} is {} in sysfs, {seen}", c.level, human_bytes(c.size_bytes)));
    }
    out
}

/// "512 KiB", "32 MiB", "1.5 MiB", "700 B".
pub fn human_bytes(n: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if n >= size {
            return if n.is_multiple_of(size) {
                format!("{} {unit}", n / size)
            } else {
                format!("{:.1} {unit}", n as f64 / size as f64)
            };
        }
    }
    format!("{n} B")
}

#[cfg(test)]
#[path = "caches_tests.rs"]
mod tests;
