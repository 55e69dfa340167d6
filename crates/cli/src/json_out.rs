//! The JSON documents of the listing commands (`list --json`, `workloads --json`,
//! `workloads show NAME --json`, `env --json`). Each carries `format` and `version`, like the
//! export, under the versioning rules of docs/formats.md (§8 lists the fields).

use crate::CmdResult;
use anyhow::Context;
use racehorse_engines::{Caps, Engine, OptKind, OptionSpec, Shortcut, ShortcutForm};
use racehorse_machine::env::Environment;
use racehorse_store::RunInfo;
use serde_json::{json, Map, Value};

/// The version of every listing contract; bumped only as docs/formats.md §6 says.
pub const VERSION: u32 = 1;

/// Prints a document alone on stdout, pretty, ending in a newline.
pub fn print(doc: &Value) -> CmdResult {
    let text = serde_json::to_string_pretty(doc).context("encoding JSON")?;
    println!("{text}");
    Ok(0)
}

/// `list --json`: the stored runs, newest first (an empty list without a store).
pub fn runs(runs: &[RunInfo]) -> Value {
    let rows: Vec<Value> = runs
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "label": r.label,
                "started_at_unix_s": r.started_at_unix_s,
                "finished_at_unix_s": r.finished_at_unix_s,
                "status": r.status.as_str(),
                "host": r.host,
                "command": r.command,
                "racehorse_version": r.racehorse_version,
                "cpu_method": r.cpu_method,
                "cells_ok": r.cells_ok,
                "cells_failed": r.cells_failed,
                "uuid": r.uuid,
                "inventory_name": r.inventory_name,
                "campaign": r.campaign,
            })
        })
        .collect();
    json!({ "format": "racehorse-runs", "version": VERSION, "runs": rows })
}

/// `list --json` with each run's tags (an object, empty when it has none).
pub fn runs_with_tags(
    list: &[RunInfo],
    tags: &std::collections::HashMap<i64, Vec<(String, String)>>,
) -> Value {
    let mut doc = runs(list);
    if let Some(rows) = doc["runs"].as_array_mut() {
        for (row, r) in rows.iter_mut().zip(list) {
            let t: Map<String, Value> = tags
                .get(&r.id)
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            row["tags"] = Value::Object(t);
        }
    }
    doc
}

/// `env --json`: the environment object itself with `format` and `version` added, so that
/// readers of the bare object from before keep working.
pub fn env(environment: &Environment) -> anyhow::Result<Value> {
    let mut doc = match serde_json::to_value(environment).context("encoding the environment")? {
        Value::Object(fields) => fields,
        other => Map::from_iter([("environment".to_string(), other)]),
    };
    doc.insert("format".into(), json!("racehorse-env"));
    doc.insert("version".into(), json!(VERSION));
    Ok(Value::Object(doc))
}

fn needs(caps: &Caps) -> Value {
    json!({
        "disk": caps.needs_disk,
        "peer": caps.needs_peer,
        "root": caps.changes_machine,
        "tool": caps.external_tool.map(|t| t.program),
    })
}

fn shortcut(s: &Shortcut) -> Value {
    let (form, flag) = match s.form {
        ShortcutForm::Switch => ("switch", Some(format!("--{}", s.flag))),
        ShortcutForm::List => ("list", Some(format!("--{}", s.flag))),
        ShortcutForm::Whole => ("whole", Some(format!("--{}", s.flag))),
        ShortcutForm::Repeat => ("repeat", Some(format!("--{}", s.flag))),
        ShortcutForm::Trailing => ("trailing", None),
    };
    json!({ "flag": flag, "form": form, "option": s.option, "value_name": s.value_name, "help": s.help })
}

fn option(o: &OptionSpec) -> Value {
    let mut v = json!({
        "name": o.name,
        "describe": o.kind.describe(),
        "default": (!o.default.is_empty()).then_some(o.default),
        "help": o.help,
    });
    let kind = match o.kind {
        OptKind::Int { min, max } => {
            v["min"] = json!(min);
            v["max"] = json!(max);
            "int"
        }
        OptKind::Size { min, max } => {
            v["min_bytes"] = json!(min);
            v["max_bytes"] = json!(max);
            "size"
        }
        OptKind::Float => "float",
        OptKind::Bool => "bool",
        OptKind::Str => "str",
        OptKind::Choice(words) => {
            v["choices"] = json!(words);
            "choice"
        }
    };
    v["kind"] = json!(kind);
    v
}

/// One engine as its description says: name, area, unit, needs, shortcuts and options.
pub fn workload(e: &dyn Engine) -> Value {
    json!({
        "name": e.name(),
        "area": e.area(),
        "unit": e.unit().as_str(),
        "about": e.about(),
        "needs": needs(&e.caps()),
        "shortcuts": e.info().shortcuts.iter().map(shortcut).collect::<Vec<_>>(),
        "options": e.options().iter().map(option).collect::<Vec<_>>(),
    })
}

/// `workloads --json`: every engine, in registry order.
pub fn workloads(engines: &[&dyn Engine]) -> Value {
    let all: Vec<Value> = engines.iter().map(|e| workload(*e)).collect();
    json!({ "format": "racehorse-workloads", "version": VERSION, "workloads": all })
}

/// `workloads show NAME --json`: one engine.
pub fn workload_doc(e: &dyn Engine) -> Value {
    json!({ "format": "racehorse-workload", "version": VERSION, "workload": workload(e) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_document_names_every_engine_and_option() {
        let engines = racehorse_engines::registry();
        let doc = workloads(engines);
        assert_eq!((doc["format"].as_str(), doc["version"].as_u64()), (Some("racehorse-workloads"), Some(1)));
        let listed = doc["workloads"].as_array().unwrap();
        assert_eq!(listed.len(), engines.len());
        for (e, w) in engines.iter().zip(listed) {
            assert_eq!(w["name"], e.name());
            assert_eq!(w["options"].as_array().unwrap().len(), e.options().len(), "{}", e.name());
            for o in w["options"].as_array().unwrap() {
                let kind = o["kind"].as_str().unwrap();
                assert!(["int", "size", "float", "bool", "str", "choice"].contains(&kind), "{o}");
                assert!(kind != "choice" || o["choices"].as_array().is_some_and(|c| !c.is_empty()), "{o}");
            }
        }
    }

    #[test]
    fn env_document_keeps_the_bare_fields() {
        let environment = racehorse_machine::env::capture(&racehorse_machine::SysRoot::host(), &[]);
        let doc = env(&environment).unwrap();
        assert_eq!(doc["format"], "racehorse-env");
        assert!(doc["cpus_online"].as_u64().unwrap() >= 1, "{doc}");
    }
}
