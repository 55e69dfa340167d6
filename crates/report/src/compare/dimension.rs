//! Comparing along one dimension (`compare --by NAME[=BASE]`): the sides are cut into one
//! slice per value of a parameter (`cflags`, `ipc` …), the parameter is taken out of every
//! cell, and the slices are then matched on everything else like any two runs. `--by workload`
//! cuts along the workload (engine) itself: `diskio` against `fio` in one run, cell for cell.

use crate::model::{shown, Group, GroupKey, Scope, Side};
use racehorse_core::CellResult;
use std::collections::{BTreeMap, BTreeSet};

/// The dimension to compare along, and optionally which of its values is the base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct By {
    pub name: String,
    pub base: Option<String>,
}

impl By {
    /// `ipc` or `ipc=none` (the value may hold `=` and spaces: `cflags=-O3 -march=native`).
    pub fn parse(text: &str) -> Result<By, DimensionError> {
        let (name, base) = match text.split_once('=') {
            Some((n, v)) => (n.trim(), Some(v.to_string())),
            None => (text.trim(), None),
        };
        if name.is_empty() {
            return Err(DimensionError::NoName { given: text.to_string() });
        }
        if name == "variant" {
            return Err(DimensionError::Variant);
        }
        Ok(By { name: name.to_string(), base })
    }
}

/// Why sides cannot be cut along a dimension; every case is a usage error.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DimensionError {
    #[error("--by needs a parameter name, e.g. --by cflags or --by ipc=none; got '{given}'")]
    NoName { given: String },
    #[error(
        "variants are not a parameter: `racehorse compare RUN` compares every variant of RUN with its \
         first, `racehorse compare RUN@A RUN@B` two of them"
    )]
    Variant,
    #[error("{side} has no parameter '{name}'; its parameters are: {known}")]
    NoSuchParameter { side: String, name: String, known: String },
    #[error("{side} has no cells with {name}={value}; its values of {name} are: {values}")]
    NoSuchValue { side: String, name: String, value: String, values: String },
    #[error(
        "{side} has {count} values of {name} ({values}); pick the base among them with --by {name}=VALUE"
    )]
    AmbiguousBase { side: String, name: String, count: usize, values: String },
    #[error(
        "{side} has only one value of {name} ({value}); give a second run to compare with \
         (racehorse compare {run} OTHER --by {name}), or run more values of it"
    )]
    OneValue { side: String, name: String, value: String, run: i64 },
}

/// The dimension that is not a parameter: the cell's workload (engine), so that two engines
/// of one run (`diskio` and `fio`, with the same parameters) compare point for point.
pub const WORKLOAD: &str = "workload";

/// The value of `name` in a cell as people write it (`bs=64k`), or None without it.
fn value_of(c: &CellResult, name: &str) -> Option<String> {
    if name == WORKLOAD {
        return Some(c.spec.workload.clone());
    }
    c.spec.params.get(name).map(|v| shown(name, v))
}

/// Whether the value given on the command line names this cell's value, as shown
/// (`64k`) or as stored (`65536`).
fn names_value(c: &CellResult, name: &str, given: &str) -> bool {
    if name == WORKLOAD {
        return c.spec.workload == given;
    }
    c.spec.params.get(name).is_some_and(|v| shown(name, v) == given || v.to_string() == given)
}

/// Takes the dimension out of a cell: the parameter, or for [`WORKLOAD`] the engine's name,
/// which becomes `joined` (every value, `diskio/fio`) so that the slices' cells match.
fn take_out(c: &mut CellResult, name: &str, joined: &str) {
    if name == WORKLOAD {
        c.spec.workload = joined.to_string();
    } else {
        c.spec.params.remove(name);
    }
}

/// The side's cells (of its variant) that count.
fn own_cells(side: &Side) -> impl Iterator<Item = &CellResult> {
    side.cells.iter().filter(|c| side.variant.iter().all(|v| &c.spec.variant == v))
}

/// The values of the dimension in the order they first ran; an error names the side's
/// parameters when it has none of them.
fn values(side: &Side, name: &str) -> Result<Vec<String>, DimensionError> {
    let mut out: Vec<String> = Vec::new();
    for v in own_cells(side).filter_map(|c| value_of(c, name)) {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    if out.is_empty() {
        let mut known: Vec<&str> =
            own_cells(side).flat_map(|c| c.spec.params.keys()).map(String::as_str).collect();
        known.push(WORKLOAD);
        known.sort_unstable();
        known.dedup();
        return Err(DimensionError::NoSuchParameter {
            side: side.name(),
            name: name.to_string(),
            known: known.join(", "),
        });
    }
    Ok(out)
}

/// The slice of `side` whose dimension has `value`, without the parameter (`joined`: what a
/// workload slice's cells are called instead of their engine).
fn slice(side: &Side, name: &str, value: &str, joined: &str) -> Side {
    let cells = own_cells(side)
        .filter(|c| names_value(c, name, value))
        .map(|c| {
            let mut c = c.clone();
            take_out(&mut c, name, joined);
            c
        })
        .collect();
    let shown_value = own_cells(side)
        .find(|c| names_value(c, name, value))
        .and_then(|c| value_of(c, name))
        .unwrap_or_else(|| value.to_string());
    Side {
        cells,
        scope: Scope { by: Some((name.to_string(), shown_value)), ..side.scope.clone() },
        ..side.clone()
    }
}

/// The base's value: the one given (which the side must have), else its only one, else
/// `first` when allowed (one run cut into slices), else an error asking to choose.
fn base_value(side: &Side, by: &By, vals: &[String], first: bool) -> Result<String, DimensionError> {
    let list = || vals.join(", ");
    match &by.base {
        Some(b) => {
            if own_cells(side).any(|c| names_value(c, &by.name, b)) {
                Ok(b.clone())
            } else {
                Err(DimensionError::NoSuchValue {
                    side: side.name(),
                    name: by.name.clone(),
                    value: b.clone(),
                    values: list(),
                })
            }
        }
        None if vals.len() == 1 || first => Ok(vals[0].clone()),
        None => Err(DimensionError::AmbiguousBase {
            side: side.name(),
            name: by.name.clone(),
            count: vals.len(),
            values: list(),
        }),
    }
}

/// The base value then every other one, once each, joined by `/` (`diskio/fio`).
fn joined_values<'a>(base: &str, others: impl Iterator<Item = &'a String>) -> String {
    let mut all = vec![base.to_string()];
    for v in others {
        if !all.contains(v) {
            all.push(v.clone());
        }
    }
    all.join("/")
}

/// One run (or variant) cut along the dimension: the base value's slice (the given one,
/// else the first value that ran) against a slice per other value, in the order they ran.
pub fn split_run(side: &Side, by: &By) -> Result<(Side, Vec<Side>), DimensionError> {
    let vals = values(side, &by.name)?;
    let base = base_value(side, by, &vals, true)?;
    let joined = joined_values(&base, vals.iter());
    let base_side = slice(side, &by.name, &base, &joined);
    let base_shown = base_side.scope.by.as_ref().map(|(_, v)| v.clone()).unwrap_or_default();
    let news: Vec<Side> =
        vals.iter().filter(|v| **v != base_shown).map(|v| slice(side, &by.name, v, &joined)).collect();
    if news.is_empty() {
        return Err(DimensionError::OneValue {
            side: side.name(),
            name: by.name.clone(),
            value: base_shown,
            run: side.run.id,
        });
    }
    Ok((base_side, news))
}

/// Several sides cut along the dimension: the base keeps one value (the given one, else
/// its only one); every new side gives a slice per value, except the base's own slice when a
/// new side is the base's run and variant.
pub fn slice_sides(base: &Side, news: &[Side], by: &By) -> Result<(Side, Vec<Side>), DimensionError> {
    let vals = values(base, &by.name)?;
    let b = base_value(base, by, &vals, false)?;
    let new_vals = news.iter().map(|n| values(n, &by.name)).collect::<Result<Vec<_>, _>>()?;
    let joined = joined_values(&b, new_vals.iter().flatten());
    let base_side = slice(base, &by.name, &b, &joined);
    let mut out = Vec::new();
    for (n, vals) in news.iter().zip(new_vals) {
        for v in vals {
            let s = slice(n, &by.name, &v, &joined);
            let same = n.run.id == base.run.id
                && n.variant == base.variant
                && n.scope.store == base.scope.store
                && s.scope.by == base_side.scope.by;
            if !same {
                out.push(s);
            }
        }
    }
    Ok((base_side, out))
}

/// When two sides share no point: the parameters along which they would match (each with
/// both sides' values), as a hint naming `--by`; "" when none would.
pub fn hint_for_nothing_in_common(
    base: &BTreeMap<GroupKey, Group<'_>>,
    new: &BTreeMap<GroupKey, Group<'_>>,
) -> String {
    let names: BTreeSet<&String> = base.keys().chain(new.keys()).flat_map(|k| k.params.keys()).collect();
    let mut found: Vec<String> = workload_differs(base, new).into_iter().collect();
    for n in names {
        let strip = |g: &BTreeMap<GroupKey, Group<'_>>| -> BTreeSet<GroupKey> {
            g.keys()
                .map(|k| {
                    let mut k = k.clone();
                    k.params.remove(n);
                    k
                })
                .collect()
        };
        if strip(base).is_disjoint(&strip(new)) {
            continue;
        }
        let vals = |g: &BTreeMap<GroupKey, Group<'_>>| -> String {
            let v: BTreeSet<String> = g.keys().filter_map(|k| k.params.get(n).map(|v| shown(n, v))).collect();
            if v.is_empty() {
                "(none)".to_string()
            } else {
                v.into_iter().map(|v| format!("'{v}'")).collect::<Vec<_>>().join(", ")
            }
        };
        found.push(format!("{n} (base {}, new {})", vals(base), vals(new)));
    }
    if found.is_empty() {
        return String::new();
    }
    let first = found[0].split(' ').next().unwrap_or_default().to_string();
    format!(
        "They differ in {}; to compare along it, add --by {first} (docs/compare.md, \"Along a dimension\").\n",
        found.join("; ")
    )
}

/// `workload (base 'diskio', new 'fio')` when the sides would match but for their workloads.
fn workload_differs(
    base: &BTreeMap<GroupKey, Group<'_>>,
    new: &BTreeMap<GroupKey, Group<'_>>,
) -> Option<String> {
    let anonymous = |g: &BTreeMap<GroupKey, Group<'_>>| -> BTreeSet<GroupKey> {
        g.keys().map(|k| GroupKey { workload: String::new(), ..k.clone() }).collect()
    };
    if anonymous(base).is_disjoint(&anonymous(new)) {
        return None;
    }
    let names = |g: &BTreeMap<GroupKey, Group<'_>>| -> String {
        let v: BTreeSet<&str> = g.keys().map(|k| k.workload.as_str()).collect();
        v.into_iter().map(|w| format!("'{w}'")).collect::<Vec<_>>().join(", ")
    };
    Some(format!("{WORKLOAD} (base {}, new {})", names(base), names(new)))
}

#[cfg(test)]
#[path = "dimension_tests.rs"]
mod tests;
