//! The suite `racehorse run WHAT` names: a suite file (a path ending in `.toml`, or any file),
//! a built-in preset fitted to this machine, or a workload (one engine with its defaults).

use super::model::{engine_names, Suite, SuiteError, WorkloadEntry};
use super::presets::{left_out, preset, PRESETS};
use racehorse_engines::find;
use std::collections::BTreeMap;
use std::path::Path;

impl Suite {
    /// The suite WHAT names, on a machine with `all_cpus` CPUs online, with its default run
    /// label (the file's stem, the preset's or the workload's name) and the notes to show
    /// before the run (what fitting a preset to this machine left out, and why).
    pub fn from_what(what: &str, all_cpus: u32) -> Result<(Suite, String, Vec<String>), SuiteError> {
        let path = Path::new(what);
        if what.ends_with(".toml") || path.is_file() {
            let text = std::fs::read_to_string(path)
                .map_err(|e| SuiteError::usage(format!("cannot read suite file {}: {e}", path.display())))?;
            let suite = Suite::parse(what, &text)?;
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("suite").to_string();
            return Ok((suite, stem, Vec::new()));
        }
        if let Some(p) = preset(what, all_cpus) {
            let notes = left_out(what, all_cpus).into_iter().map(|n| format!("preset {what}: {n}")).collect();
            return Ok((p?, what.to_string(), notes));
        }
        if find(what).is_some() {
            let w = WorkloadEntry::new(what, BTreeMap::new()).map_err(SuiteError::usage)?;
            let suite = Suite { name: what.to_string(), workloads: vec![w], ..Suite::default() };
            return Ok((suite, what.to_string(), Vec::new()));
        }
        let presets: Vec<&str> = PRESETS.iter().map(|p| p.0).collect();
        Err(SuiteError::usage(format!(
            "'{what}' is not a suite file, a preset ({}) or a workload ({})",
            presets.join(", "),
            engine_names()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_names_a_file_a_preset_or_a_workload() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mine.toml");
        std::fs::write(&file, "[[workload]]\nengine = \"null\"\n").unwrap();
        let (s, label, notes) = Suite::from_what(file.to_str().unwrap(), 2).unwrap();
        assert_eq!((s.workloads.len(), label.as_str(), notes.len(), s.preset), (1, "mine", 0, None));
        let (s, label, _) = Suite::from_what("quick-fileserver", 2).unwrap();
        assert_eq!((label.as_str(), s.preset.as_deref()), ("quick-fileserver", Some("quick-fileserver")));
        let (s, label, notes) = Suite::from_what("null", 2).unwrap();
        assert_eq!(
            (s.name.as_str(), label.as_str(), s.workloads[0].engine.as_str()),
            ("null", "null", "null")
        );
        assert!(notes.is_empty() && s.preset.is_none());
        let e = Suite::from_what("nosuch", 2).unwrap_err().to_string();
        assert!(
            e.contains("'nosuch' is not a suite file, a preset (quick,") && e.contains("fileserver"),
            "{e}"
        );
        let e = Suite::from_what("/nonexistent/x.toml", 2).unwrap_err().to_string();
        assert!(e.starts_with("cannot read suite file /nonexistent/x.toml"), "{e}");
    }
}
