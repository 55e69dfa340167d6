//! How long the texts of a run may be (docs/formats.md, "Limits"): one set of rules that
//! `run`, `import` and `load` all apply, so that whatever a run stores can be exported,
//! imported and loaded again, and no stored text can break a renderer (issue 47, case 3: a
//! label of 65,536 characters made `list` panic for the whole store).
//!
//! Names the user picks (the label, workload, variant and parameter names) over their
//! limit are refused; free texts that programs write (the command line, a cell's error)
//! are cut to their limit when stored, ending in "…".

use crate::store::NewRun;
use racehorse_core::{CellResult, CellSpec, Value};

/// Longest run label, in characters (`run --label`, and a label from an export).
pub const MAX_LABEL: usize = 256;
/// Longest name: host, workload, variant, parameter, latency operation, extra figure,
/// racehorse version, CPU method.
pub const MAX_NAME: usize = 256;
/// Longest free text: the recorded command line, a text parameter's value, a cell's error
/// and its noise reason.
pub const MAX_TEXT: usize = 65_536;

fn too_long(what: &str, text: &str, max: usize) -> Option<String> {
    let n = text.chars().count();
    (n > max).then(|| format!("{what} is {n} characters long; at most {max} are allowed"))
}

/// Why a run label cannot be stored, or None.
pub fn label_problem(label: &str) -> Option<String> {
    too_long("the label", label, MAX_LABEL)
}

/// Why a run's own texts cannot be stored, or None: label, host, command, version, CPU
/// method, inventory name and campaign (see [`crate::fleet::name_problem`]) and tags.
pub fn run_problem(run: &NewRun) -> Option<String> {
    label_problem(&run.label)
        .or_else(|| too_long("the host", &run.host, MAX_NAME))
        .or_else(|| too_long("the command", &run.command, MAX_TEXT))
        .or_else(|| too_long("the racehorse version", &run.racehorse_version, MAX_NAME))
        .or_else(|| too_long("the CPU method", &run.cpu_method, MAX_NAME))
        .or_else(|| {
            let inventory = Some(run.inventory_name.as_str()).filter(|n| !n.is_empty());
            inventory.and_then(|n| crate::fleet::name_problem("the inventory name", n))
        })
        .or_else(|| run.campaign.as_deref().and_then(|c| crate::fleet::name_problem("the campaign", c)))
        .or_else(|| crate::tags::tags_problem(&run.tags))
}

/// Why a cell's names or parameters cannot be stored, or None.
pub fn spec_problem(spec: &CellSpec) -> Option<String> {
    too_long("the workload name", &spec.workload, MAX_NAME)
        .or_else(|| too_long("the variant name", &spec.variant, MAX_NAME))
        .or_else(|| {
            spec.params.iter().find_map(|(k, v)| {
                too_long("a parameter name", k, MAX_NAME).or_else(|| match v {
                    Value::Str(s) => too_long(&format!("parameter {k}"), s, MAX_TEXT),
                    _ => None,
                })
            })
        })
}

/// Why a cell read from an export cannot be stored, or None: its spec, latency operation
/// names and extra figure names (its error and noise reason are cut, not refused).
pub fn cell_problem(cell: &CellResult) -> Option<String> {
    spec_problem(&cell.spec)
        .or_else(|| cell.latencies.iter().find_map(|l| too_long("a latency operation", &l.op, MAX_NAME)))
        .or_else(|| cell.extra.keys().find_map(|k| too_long("an extra figure's name", k, MAX_NAME)))
}

/// `text` cut to at most `max` characters, the last one "…" when it was cut.
pub fn clip(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => text.into(),
        Some(_) => {
            let keep = text.char_indices().nth(max.saturating_sub(1)).map_or(0, |(i, _)| i);
            format!("{}…", &text[..keep]).into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_keeps_short_texts_and_cuts_long_ones_to_the_limit() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("abcd", 3), "ab…");
        assert_eq!(clip("ééééé", 4).chars().count(), 4);
        assert_eq!(clip("", 0), "");
    }

    #[test]
    fn issue47_labels_and_names_have_limits() {
        assert!(label_problem(&"x".repeat(MAX_LABEL)).is_none());
        let why = label_problem(&"x".repeat(65_536)).unwrap();
        assert!(why.contains("65536 characters") && why.contains("at most 256"), "{why}");
        let mut spec = CellSpec {
            workload: "null".into(),
            params: Default::default(),
            variant: "default".into(),
            rep: 1,
        };
        assert!(spec_problem(&spec).is_none());
        spec.params.insert("program".into(), Value::Str("y".repeat(MAX_TEXT + 1)));
        assert!(spec_problem(&spec).unwrap().contains("parameter program"));
        let mut run = crate::testutil::new_run("ok");
        assert!(run_problem(&run).is_none());
        run.campaign = Some("bad\ncampaign".into());
        assert!(run_problem(&run).unwrap().contains("campaign"));
    }
}
