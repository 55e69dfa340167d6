//! The layer rule of this crate, checked on its own sources so that it stays true: no engine
//! (native or adapter) imports another engine; what engines share comes from `support` or the
//! contract; `support` imports only the contract and itself; the contract imports neither.
//! The registry and `adapters/mod.rs` wire the layers together and are not checked.
//!
//! Every `crate::…` and `super::…` path outside comments is resolved to the module it names
//! (`{…}` groups item by item). A file's module follows its path (`a/b.rs` and `a/b/mod.rs`
//! are `a::b`; `a/x_tests.rs` is `a::x::tests`, as `#[path]` includes it); an inline module
//! opened at the start of a line (`mod tests {`) lasts until the first `}` line, as rustfmt
//! lays it out.

use std::path::{Path, PathBuf};

/// The contract's modules (with the crate root's own items).
const CONTRACT: &[&str] = &["control", "error", "info", "options", "recorder", "testutil"];
/// Modules that wire the layers together and may import anything.
const WIRING: &[&str] = &["registry", "layers", "adapters"];

#[derive(Debug, Clone, PartialEq, Eq)]
enum Layer {
    Contract,
    Support,
    Engine(String),
    Wiring,
}

/// The module of a source file, from its path under `src/`.
fn module_of(rel: &Path) -> Vec<String> {
    let mut segs: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
    let file = segs.pop().unwrap_or_default();
    let stem = file.strip_suffix(".rs").unwrap_or(&file);
    match stem {
        "mod" | "lib" => {}
        s => match s.strip_suffix("_tests") {
            Some(parent) => segs.extend([parent.to_string(), "tests".to_string()]),
            None => segs.push(s.to_string()),
        },
    }
    segs
}

/// The layer a crate-absolute module path belongs to; `engines` are the top-level engines.
fn layer_of(path: &[String], engines: &[String]) -> Layer {
    let Some(first) = path.first().map(String::as_str) else { return Layer::Contract };
    match (first, path.get(1)) {
        ("support", _) => Layer::Support,
        ("adapters", Some(adapter)) => Layer::Engine(format!("adapters::{adapter}")),
        (s, _) if WIRING.contains(&s) => Layer::Wiring,
        (s, _) if engines.iter().any(|e| e == s) => Layer::Engine(s.to_string()),
        // The contract's modules and the root's items (Engine, Caps, …).
        _ => Layer::Contract,
    }
}

/// May code of layer `from` use layer `to`?
fn allowed(from: &Layer, to: &Layer) -> bool {
    match (from, to) {
        (Layer::Wiring, _) | (_, Layer::Contract) => true,
        (Layer::Support, Layer::Support) | (Layer::Engine(_), Layer::Support) => true,
        (Layer::Engine(a), Layer::Engine(b)) => a == b,
        _ => false,
    }
}

fn ident_len(s: &str) -> usize {
    s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len())
}

/// The paths a path tail (after `crate::` or the `super::`s) names, one per `{…}` item.
fn tails(s: &str) -> Vec<Vec<String>> {
    let s = s.trim_start();
    if let Some(group) = s.strip_prefix('{') {
        let (mut depth, mut start, mut out) = (0usize, 0usize, Vec::new());
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    out.extend(tails(&group[start..i]));
                    return out;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.extend(tails(&group[start..i]));
                    start = i + 1;
                }
                _ => {}
            }
        }
        return out;
    }
    let n = ident_len(s);
    let ident = &s[..n];
    if n == 0 || ident == "self" {
        return vec![Vec::new()];
    }
    match s[n..].strip_prefix("::") {
        Some(rest) => tails(rest).into_iter().map(|t| [vec![ident.to_string()], t].concat()).collect(),
        None => vec![vec![ident.to_string()]],
    }
}

/// The name of the inline module a line opens at its start (`mod tests {`, `pub mod tag {`).
fn inline_mod(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("pub ").or_else(|| line.strip_prefix("pub(crate) ")).unwrap_or(line);
    rest.strip_prefix("mod ")?.strip_suffix(" {")
}

/// Every crate-absolute module path that `code` (of module `module`) names, with its line.
fn paths_in(code: &str, file_module: &[String]) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut module = file_module.to_vec();
    for (line_no, line) in code.lines().enumerate() {
        if let Some(name) = inline_mod(line) {
            module = [file_module, &[name.to_string()]].concat();
        } else if line == "}" {
            module = file_module.to_vec();
        }
        let line = line.split("//").next().unwrap_or("");
        let mut from = 0;
        while let Some(pos) = line[from..].find(['c', 's']).map(|p| p + from) {
            from = pos + 1;
            let before = line[..pos].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut rest = &line[pos..];
            let base: Vec<String> = if let Some(r) = rest.strip_prefix("crate::") {
                rest = r;
                Vec::new()
            } else {
                let mut ups = 0;
                while let Some(r) = rest.strip_prefix("super::") {
                    (rest, ups) = (r, ups + 1);
                }
                if ups == 0 {
                    continue;
                }
                module[..module.len().saturating_sub(ups)].to_vec()
            };
            out.extend(tails(rest).into_iter().map(|t| (line_no + 1, [base.clone(), t].concat())));
        }
    }
    out
}

/// The imports of one file that break the rule, as "file:line: from → to" lines.
fn violations_in(file: &str, module: &[String], code: &str, engines: &[String]) -> Vec<String> {
    let from = layer_of(module, engines);
    paths_in(code, module)
        .into_iter()
        .filter_map(|(line, path)| {
            let to = layer_of(&path, engines);
            (!allowed(&from, &to))
                .then(|| format!("{file}:{line}: {from:?} uses {} ({to:?})", path.join("::")))
        })
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src").flatten() {
        let p = entry.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_engine_imports_another_engine() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let tops: Vec<Vec<String>> =
        files.iter().map(|f| module_of(f.strip_prefix(&src).expect("under src"))).collect();
    let mut engines: Vec<String> = tops.iter().filter_map(|m| m.first().cloned()).collect();
    engines.retain(|e| e != "support" && !CONTRACT.contains(&e.as_str()) && !WIRING.contains(&e.as_str()));
    engines.sort();
    engines.dedup();
    for known in ["analytics", "compute", "diskio", "micro", "net", "oltp"] {
        assert!(engines.iter().any(|e| e == known), "{known} not found among {engines:?}");
    }
    let mut bad = Vec::new();
    for (file, module) in files.iter().zip(&tops) {
        let code = std::fs::read_to_string(file).expect("read a source");
        let name = file.strip_prefix(&src).expect("under src").display().to_string();
        bad.extend(violations_in(&name, module, &code, &engines));
    }
    assert!(bad.is_empty(), "imports across layers (move what is shared to support):\n{}", bad.join("\n"));
}

#[test]
fn the_check_sees_imports_across_engines() {
    let engines: Vec<String> = ["diskio", "micro", "net", "oltp"].map(String::from).to_vec();
    let m = |s: &str| -> Vec<String> { s.split("::").map(String::from).collect() };
    let check = |module: &str, code: &str| violations_in("x.rs", &m(module), code, &engines);
    assert_eq!(check("adapters::fio", "use crate::diskio::DiskPhase;").len(), 1);
    assert_eq!(
        check("adapters::fio::job", "use crate::support::disk_options::DiskPhase;"),
        Vec::<String>::new()
    );
    assert_eq!(check("diskio", "use crate::{support::rng, adapters::fio::job, Caps};").len(), 1, "a group");
    assert_eq!(check("micro::caches::tests", "let n = super::super::chase::sizes(1);"), Vec::<String>::new());
    assert_eq!(check("micro::run", "use super::super::oltp::mix;").len(), 1, "super out of the engine");
    assert_eq!(check("support::rng", "use crate::micro::chase;").len(), 1, "support uses no engine");
    assert_eq!(check("options", "use crate::support::rng;").len(), 1, "the contract uses no support");
    assert_eq!(check("registry", "&crate::oltp::Oltp, &crate::micro::Micro,"), Vec::<String>::new());
    assert_eq!(
        check("oltp::schema", "use super::{sqlite, mix::Dist}; // crate::micro"),
        Vec::<String>::new()
    );
    assert_eq!(check("adapters::sysbench", "use crate::oltp::{setup, Target};").len(), 2, "an adapter");
    assert_eq!(check("adapters::iperf3", "shortcuts: &[crate::net::PEER_SHORTCUT],").len(), 1);
    assert_eq!(
        check("adapters::iperf3", "use crate::support::net_options::{config, Target, OPTIONS};"),
        Vec::<String>::new()
    );
    assert_eq!(check("support::net_options", "use crate::net::protocol::Mode;").len(), 1);
    let inline = "mod tests {\n    use super::*;\n}\nuse super::dbench;";
    assert_eq!(check("adapters::fio", inline).len(), 1, "only the line after the inline module");
    assert_eq!(module_of(Path::new("micro/caches_tests.rs")), m("micro::caches::tests"));
    assert_eq!(module_of(Path::new("adapters/fio/mod.rs")), m("adapters::fio"));
}
