//! Predefined names (scalars and history families) and the [`Values`] trait expressions read through.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// The 17 predefined scalar names. Only `time` takes a history index `[N]`.
pub const SCALARS: &[&str] = &[
    "loadavg",
    "runnable_proc",
    "onumcpus",
    "user",
    "nice",
    "system",
    "idle",
    "iowait",
    "irq",
    "softirq",
    "steal",
    "guest",
    "guest_nice",
    "freemem",
    "swaprate",
    "apcr",
    "time",
];

/// The valid `cpustat.X` names: raw counters and the per-sample CPU values.
pub const CPUSTAT_NAMES: &[&str] = &[
    "onumcpus",
    "loadavg",
    "runnable_proc",
    "user",
    "nice",
    "system",
    "idle",
    "iowait",
    "irq",
    "softirq",
    "steal",
    "guest",
    "guest_nice",
    "total_ticks",
];

/// The history family prefixes, written `family.NAME[N]`.
pub const FAMILIES: &[&str] = &["meminfo", "vmstat", "cpustat"];

/// The deepest history index `[N]` an expression may use.
pub const MAX_HISTORY: usize = 100;

/// A referenced value: a predefined scalar or a history-family entry.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Name {
    /// One of [`SCALARS`].
    Scalar(String),
    /// `meminfo.MemFree` → `"MemFree"` (kB as in /proc/meminfo).
    Meminfo(String),
    /// `vmstat.pgscan_kswapd` → `"pgscan_kswapd"` (the raw counter).
    Vmstat(String),
    /// `cpustat.idle` → `"idle"`; one of [`CPUSTAT_NAMES`] (ticks are raw and cumulative).
    Cpustat(String),
}

impl Name {
    /// The family prefix (`"meminfo"`, `"vmstat"`, `"cpustat"`), or None for a scalar.
    pub fn family(&self) -> Option<&'static str> {
        match self {
            Name::Scalar(_) => None,
            Name::Meminfo(_) => Some("meminfo"),
            Name::Vmstat(_) => Some("vmstat"),
            Name::Cpustat(_) => Some("cpustat"),
        }
    }

    /// The scalar name or the field after the family's dot.
    pub fn field(&self) -> &str {
        match self {
            Name::Scalar(s) | Name::Meminfo(s) | Name::Vmstat(s) | Name::Cpustat(s) => s,
        }
    }

    /// Builds a family entry from its prefix; None for an unknown prefix.
    pub fn in_family(family: &str, field: &str) -> Option<Name> {
        let field = field.to_string();
        match family {
            "meminfo" => Some(Name::Meminfo(field)),
            "vmstat" => Some(Name::Vmstat(field)),
            "cpustat" => Some(Name::Cpustat(field)),
            _ => None,
        }
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.family() {
            Some(family) => write!(f, "{family}.{}", self.field()),
            None => f.write_str(self.field()),
        }
    }
}

/// True for the words a user variable may not be named: the scalars and the family prefixes.
pub fn is_predefined(word: &str) -> bool {
    SCALARS.contains(&word) || FAMILIES.contains(&word)
}

/// What an expression can read: `back` = 0 is the current sample, 1 the previous, and so on.
/// Scalars other than `time` are only ever asked with `back` = 0.
pub trait Values {
    /// The value, or None when the provider does not have it.
    fn value(&self, name: &Name, back: usize) -> Option<f64>;
}

impl Values for HashMap<(Name, usize), f64> {
    fn value(&self, name: &Name, back: usize) -> Option<f64> {
        self.get(&(name.clone(), back)).copied()
    }
}

impl Values for BTreeMap<(Name, usize), f64> {
    fn value(&self, name: &Name, back: usize) -> Option<f64> {
        self.get(&(name.clone(), back)).copied()
    }
}

/// Candidates close to `word` (same letters ignoring case, or at most two edits away), best first.
pub fn close_matches<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let limit = if word.chars().count() < 4 { 1 } else { 2 };
    let lower = word.to_ascii_lowercase();
    let mut found: Vec<(usize, &str)> = candidates
        .into_iter()
        .filter_map(|c| {
            let d = if c.to_ascii_lowercase() == lower { 0 } else { strsim::levenshtein(word, c) };
            (d <= limit).then_some((d, c))
        })
        .collect();
    found.sort();
    found.dedup();
    found.into_iter().take(3).map(|(_, c)| c.to_string()).collect()
}

/// " (did you mean `a` or `b`?)" or "" when nothing is close.
pub fn did_you_mean(matches: &[String]) -> String {
    match matches {
        [] => String::new(),
        [one] => format!(" (did you mean `{one}`?)"),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(|m| format!("`{m}`")).collect();
            format!(" (did you mean {} or `{last}`?)", init.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_have_the_documented_sizes() {
        assert_eq!(SCALARS.len(), 17);
        assert_eq!(CPUSTAT_NAMES.len(), 14);
        assert!(SCALARS.contains(&"time") && !CPUSTAT_NAMES.contains(&"time"));
    }

    #[test]
    fn display_and_family() {
        assert_eq!(Name::Meminfo("MemFree".into()).to_string(), "meminfo.MemFree");
        assert_eq!(Name::Scalar("idle".into()).to_string(), "idle");
        assert_eq!(Name::in_family("cpustat", "idle"), Some(Name::Cpustat("idle".into())));
        assert_eq!(Name::in_family("proc", "idle"), None);
        assert_eq!(Name::Vmstat("x".into()).family(), Some("vmstat"));
    }

    #[test]
    fn predefined_words() {
        assert!(is_predefined("loadavg") && is_predefined("meminfo"));
        assert!(!is_predefined("Loadavg") && !is_predefined("load"));
    }

    #[test]
    fn close_matches_and_message() {
        let m = close_matches("runable_proc", SCALARS.iter().copied());
        assert_eq!(m, vec!["runnable_proc".to_string()]);
        assert_eq!(close_matches("LOADAVG", SCALARS.iter().copied()), vec!["loadavg".to_string()]);
        assert!(close_matches("xyzzy", SCALARS.iter().copied()).is_empty());
        assert_eq!(did_you_mean(&[]), "");
        assert_eq!(did_you_mean(&["a".into(), "b".into()]), " (did you mean `a` or `b`?)");
    }

    #[test]
    fn maps_provide_values() {
        let mut m = HashMap::new();
        m.insert((Name::Scalar("idle".into()), 0), 5.0);
        assert_eq!(m.value(&Name::Scalar("idle".into()), 0), Some(5.0));
        assert_eq!(m.value(&Name::Scalar("idle".into()), 1), None);
    }
}
