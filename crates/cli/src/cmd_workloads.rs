//! `racehorse workloads`: the engines as their descriptions say (name, area, unit, needs,
//! shortcuts, options), as a terminal table or as the markdown table of docs/workloads.md.

use crate::args::{WorkloadsArgs, WorkloadsSub};
use crate::{CmdResult, Failure};
use racehorse_engines::{find, registry, Caps, Engine, ShortcutForm};
use racehorse_report::doc::Table;

/// What an engine needs, in words ("disk, peer, root, tool fio").
fn needs(caps: &Caps) -> String {
    let mut out: Vec<String> = Vec::new();
    if caps.needs_disk {
        out.push("disk".into());
    }
    if caps.needs_peer {
        out.push("peer".into());
    }
    if caps.changes_machine {
        out.push("root".into());
    }
    if let Some(t) = caps.external_tool {
        out.push(format!("tool {}", t.program));
    }
    if out.is_empty() {
        "-".into()
    } else {
        out.join(", ")
    }
}

/// The command-line forms of an engine's shortcuts ("--clients, -- PROGRAM ARGS").
fn shortcut_words(e: &dyn Engine) -> String {
    let words: Vec<String> = e
        .info()
        .shortcuts
        .iter()
        .map(|s| match s.form {
            ShortcutForm::Trailing => format!("-- {}", s.value_name),
            _ => format!("--{}", s.flag),
        })
        .collect();
    if words.is_empty() {
        "-".into()
    } else {
        words.join(", ")
    }
}

/// The overview table of docs/workloads.md, generated from the engines' descriptions.
pub fn docs_table(engines: &[&dyn Engine]) -> String {
    let mut out = String::from(
        "| workload | area | unit | needs | shortcuts | what it does |\n|---|---|---|---|---|---|\n",
    );
    for e in engines {
        out += &format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            e.name(),
            e.area(),
            e.unit(),
            needs(&e.caps()),
            shortcut_words(*e).replace('|', "\\|"),
            e.about().replace('|', "\\|")
        );
    }
    out
}

/// The terminal table of the engines.
fn overview(engines: &[&dyn Engine]) -> String {
    let mut t = Table::new(&["name", "area", "unit", "needs", "description"], 5);
    for e in engines {
        t.row(vec![
            e.name().into(),
            e.area().into(),
            e.unit().to_string(),
            needs(&e.caps()),
            e.about().into(),
        ]);
    }
    t.render()
}

/// One engine: what it is, what it needs, its shortcuts and its option table.
fn details(e: &dyn Engine) -> String {
    let mut out = format!("{} — {}\nunit of work: {}\narea: {}\n", e.name(), e.about(), e.unit(), e.area());
    out += &format!("needs: {}\nshortcuts: {}\n\n", needs(&e.caps()), shortcut_words(e));
    let mut t = Table::new(&["option", "kind", "default", "help"], 4);
    for o in e.options() {
        t.row(vec![o.name.into(), o.kind.describe(), o.default.into(), o.help.into()]);
    }
    out + &t.render()
}

pub fn workloads(a: &WorkloadsArgs) -> CmdResult {
    let engines = registry();
    if a.json && a.markdown {
        return Err(Failure::usage("--json and --markdown: choose one"));
    }
    match &a.sub {
        None if a.json => return crate::json_out::print(&crate::json_out::workloads(engines)),
        None if a.markdown => print!("{}", docs_table(engines)),
        None => {
            print!("{}", overview(engines));
            println!("\n`racehorse workloads show NAME` lists an engine's options.");
        }
        Some(WorkloadsSub::Show { name }) => {
            let e = find(name).ok_or_else(|| {
                let names: Vec<&str> = engines.iter().map(|e| e.name()).collect();
                Failure::usage(format!("unknown workload '{name}'; valid workloads: {}", names.join(", ")))
            })?;
            if a.json {
                return crate::json_out::print(&crate::json_out::workload_doc(e));
            }
            print!("{}", details(e));
            println!(
                "\nruntime, warmup, reps and cpus apply to every workload (see `racehorse run --help`)."
            );
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The overview table in docs/workloads.md is the generated one (regenerate it with
    /// `racehorse workloads --markdown`), and every engine has its section there, naming every
    /// one of its options.
    #[test]
    fn docs_table_and_sections_follow_the_registry() {
        let doc = include_str!("../../../docs/workloads.md");
        let table = docs_table(registry());
        assert!(
            doc.contains(&table),
            "docs/workloads.md's table is stale; paste `racehorse workloads --markdown`:\n{table}"
        );
        for e in registry() {
            let head = format!("\n## {}", e.name());
            let start = doc
                .find(&head)
                .unwrap_or_else(|| panic!("docs/workloads.md has no section '## {}'", e.name()));
            let rest = &doc[start + head.len()..];
            let section = &rest[..rest.find("\n## ").unwrap_or(rest.len())];
            for o in e.options() {
                assert!(
                    section.contains(&format!("`{}`", o.name)),
                    "docs/workloads.md, ## {}: option `{}` is not described",
                    e.name(),
                    o.name
                );
            }
        }
    }
}
