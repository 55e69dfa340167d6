//! `racehorse workloads`: the engines as their descriptions say (name, area, unit, needs,
//! shortcuts, options), as a terminal table or as the markdown table of docs/workloads/README.md.

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

/// The overview table of docs/workloads/README.md, generated from the engines' descriptions.
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
    use std::path::PathBuf;

    /// docs/workloads/, read at test time so that a new or removed page counts.
    fn docs_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/workloads")
    }

    fn read_page(file: &str) -> String {
        std::fs::read_to_string(docs_dir().join(file))
            .unwrap_or_else(|e| panic!("docs/workloads/{file}: {e}; every engine has a page there"))
    }

    /// The index docs/workloads/README.md carries the generated table (regenerate it with
    /// `racehorse workloads --markdown`) and links every engine's page.
    #[test]
    fn docs_index_has_the_current_table_and_links_every_page() {
        let index = read_page("README.md");
        let table = docs_table(registry());
        assert!(
            index.contains(&table),
            "docs/workloads/README.md's table is stale; paste `racehorse workloads --markdown`:\n{table}"
        );
        for e in registry() {
            let link = format!("]({}.md)", e.name());
            assert!(index.contains(&link), "docs/workloads/README.md does not link {}.md", e.name());
        }
    }

    /// Every engine has its page docs/workloads/NAME.md, titled `# NAME`, naming every one of
    /// its options.
    #[test]
    fn every_engine_has_a_page_naming_its_options() {
        for e in registry() {
            let file = format!("{}.md", e.name());
            let page = read_page(&file);
            let title = page.lines().next().unwrap_or("");
            assert!(
                title.split_whitespace().take(2).eq(["#", e.name()]),
                "docs/workloads/{file} opens with '{title}', not '# {}'",
                e.name()
            );
            for o in e.options() {
                assert!(
                    page.contains(&format!("`{}`", o.name)),
                    "docs/workloads/{file}: option `{}` is not described",
                    o.name
                );
            }
        }
    }

    /// No page is left for an engine the registry no longer has.
    #[test]
    fn every_page_belongs_to_an_engine() {
        let entries = std::fs::read_dir(docs_dir()).expect("docs/workloads/ exists");
        for entry in entries {
            let name = entry.expect("a directory entry").file_name().to_string_lossy().into_owned();
            let Some(engine) = name.strip_suffix(".md").filter(|n| *n != "README") else { continue };
            assert!(find(engine).is_some(), "docs/workloads/{name} is the page of no engine; remove it");
        }
    }
}
