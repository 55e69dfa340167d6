//! The module import graph of a crate, read from its sources, and the circles in it: a file
//! that uses another through `crate::…`, `super::…`, `self::…` or a path into one of its own
//! child modules depends on it. The runner's and the report's modules form no circle (issue
//! 45); the function takes any crate's directory.
//!
//! How paths are read: comments and literals are skipped; `use` trees are expanded item by
//! item; a `pub use` re-export both depends on its target and is looked through, so that
//! `crate::exec::Runner` names the file that defines `Runner`, not the facade `exec/mod.rs`.
//! Code under `#[cfg(test)]` is left out: a test may use any module of its crate.
//! `RACEHORSE_PRINT_GRAPH=1` prints every file's edges while the test checks a crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod tokens;

use tokens::{tokens, Tok};

/// What one file says about modules and paths.
#[derive(Debug, Default)]
struct Facts {
    /// Modules declared: (scope, name, under `#[cfg(test)]`, `#[path]` value).
    mods: Vec<(Vec<String>, String, bool, Option<String>)>,
    /// Paths as written, with the module they are written in.
    refs: Vec<(Vec<String>, Vec<String>)>,
    /// `pub use` re-exports: (scope, visible name, path as written).
    reexports: Vec<(Vec<String>, String, Vec<String>)>,
}

fn ident(t: Option<&Tok>) -> Option<&str> {
    match t {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

/// The index after the bracketed group that opens at `i`.
fn skip_group(t: &[Tok], mut i: usize) -> usize {
    let mut depth = 0i32;
    while i < t.len() {
        match t[i] {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                depth -= 1;
                if depth <= 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// The index after the item that starts at `i`: after its `;`, or after its `{…}` body.
fn skip_item(t: &[Tok], mut i: usize) -> usize {
    let mut depth = 0i32;
    while i < t.len() {
        match t[i] {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']') => depth -= 1,
            Tok::Punct('}') => {
                depth -= 1;
                if depth <= 0 {
                    return i + 1;
                }
            }
            Tok::Punct(';') if depth == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    i
}

/// Expands the use tree at `i` under `prefix` into (visible name, path) pairs; returns the
/// index after it.
fn use_tree(t: &[Tok], mut i: usize, prefix: &[String], out: &mut Vec<(String, Vec<String>)>) -> usize {
    let mut path = prefix.to_vec();
    if t.get(i) == Some(&Tok::Sep) {
        i += 1;
    }
    while let Some(seg) = ident(t.get(i)) {
        path.push(seg.to_string());
        i += 1;
        if t.get(i) != Some(&Tok::Sep) {
            break;
        }
        i += 1;
        match t.get(i) {
            Some(Tok::Punct('{')) => {
                i += 1;
                while i < t.len() && t[i] != Tok::Punct('}') {
                    i = use_tree(t, i, &path, out);
                    if t.get(i) == Some(&Tok::Punct(',')) {
                        i += 1;
                    }
                }
                return i + 1;
            }
            Some(Tok::Punct('*')) => {
                out.push(("*".into(), path));
                return i + 1;
            }
            _ => {}
        }
    }
    if path.last().is_some_and(|s| s == "self") {
        path.pop();
    }
    let mut name = path.last().cloned().unwrap_or_default();
    if ident(t.get(i)) == Some("as") {
        name = ident(t.get(i + 1)).unwrap_or("_").to_string();
        i += 2;
    }
    out.push((name, path));
    i
}

/// Is the `use` at `i` public (`pub use`, `pub(crate) use`, …)?
fn is_pub(t: &[Tok], i: usize) -> bool {
    match i.checked_sub(1).map(|p| &t[p]) {
        Some(Tok::Ident(s)) => s == "pub",
        Some(Tok::Punct(')')) => {
            let open = t[..i].iter().rposition(|x| *x == Tok::Punct('('));
            open.and_then(|o| o.checked_sub(1)).is_some_and(|p| ident(t.get(p)) == Some("pub"))
        }
        _ => false,
    }
}

/// Reads an attribute at `i` (at `#`); returns its end, whether it is `cfg(test)`, and a
/// `path = "…"` value.
fn attribute(t: &[Tok], i: usize) -> (usize, bool, Option<String>) {
    let end = skip_group(t, i + 1);
    let body = &t[(i + 2).min(end)..end.saturating_sub(1).max(i + 2)];
    let test =
        body == [Tok::Ident("cfg".into()), Tok::Punct('('), Tok::Ident("test".into()), Tok::Punct(')')];
    let path = match body {
        [Tok::Ident(p), Tok::Punct('='), Tok::Str(v)] if p == "path" => Some(v.clone()),
        _ => None,
    };
    (end, test, path)
}

impl Facts {
    /// Records the `use` declaration at `i` (written in `scope`); returns the index after it.
    fn add_use(&mut self, t: &[Tok], i: usize, scope: &[String]) -> usize {
        let mut items = Vec::new();
        let end = use_tree(t, i + 1, &[], &mut items);
        for (name, p) in items {
            if is_pub(t, i) && name != "*" {
                self.reexports.push((scope.to_vec(), name, p.clone()));
            }
            self.refs.push((scope.to_vec(), p));
        }
        end
    }
}

/// The path (`a::b::c`) that starts at `i`, and the index after it.
fn path_at(t: &[Tok], i: usize) -> (Vec<String>, usize) {
    let (mut p, mut j) = (Vec::new(), i);
    while let Some(seg) = ident(t.get(j)) {
        p.push(seg.to_string());
        if t.get(j + 1) != Some(&Tok::Sep) {
            return (p, j + 1);
        }
        j += 2;
    }
    (p, j)
}

/// The facts of one file whose module is `module`.
fn facts(src: &str, module: &[String]) -> Facts {
    let t = tokens(src);
    let mut f = Facts::default();
    let mut scopes: Vec<(Vec<String>, usize)> = vec![(module.to_vec(), 0)];
    let (mut depth, mut test, mut path_attr, mut i) = (0usize, false, None::<String>, 0);
    while i < t.len() {
        let scope = scopes.last().map(|s| s.0.clone()).unwrap_or_default();
        match &t[i] {
            Tok::Punct('#') if t.get(i + 1) == Some(&Tok::Punct('[')) => {
                let (end, is_test, p) = attribute(&t, i);
                test |= is_test;
                path_attr = p.or(path_attr);
                i = end;
                continue;
            }
            Tok::Ident(k) if k == "mod" => {
                let name = ident(t.get(i + 1)).unwrap_or_default().to_string();
                let inline = t.get(i + 2) == Some(&Tok::Punct('{'));
                f.mods.push((scope.clone(), name.clone(), test, path_attr.take()));
                if inline && test {
                    i = skip_group(&t, i + 2);
                } else if inline {
                    depth += 1;
                    scopes.push(([scope, vec![name]].concat(), depth));
                    i += 3;
                } else {
                    i += 3;
                }
                test = false;
                continue;
            }
            // A visibility keeps the item's `#[cfg(test)]` for the `mod` that may follow.
            Tok::Ident(k) if test && k == "pub" => {
                i += 1;
                if t.get(i) == Some(&Tok::Punct('(')) {
                    i = skip_group(&t, i);
                }
                continue;
            }
            _ if test => {
                i = skip_item(&t, i);
                test = false;
                continue;
            }
            Tok::Ident(k) if k == "use" => {
                i = f.add_use(&t, i, &scope);
                continue;
            }
            Tok::Ident(_) if t.get(i + 1) == Some(&Tok::Sep) && (i == 0 || t[i - 1] != Tok::Sep) => {
                let (p, end) = path_at(&t, i);
                f.refs.push((scope, p));
                i = end;
                continue;
            }
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                if scopes.len() > 1 && scopes.last().is_some_and(|s| s.1 == depth) {
                    scopes.pop();
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        i += 1;
    }
    f
}

/// The module a file under `src/` is by its path (`a/b.rs`, `a/b/mod.rs` → `a::b`).
fn module_of_file(rel: &Path) -> Vec<String> {
    let mut segs: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
    let file = segs.pop().unwrap_or_default();
    match file.trim_end_matches(".rs") {
        "mod" | "lib" | "main" => {}
        stem => segs.push(stem.to_string()),
    }
    segs
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The import graph of the crate at `crate_dir`: each file (relative to `src/`) with the
/// files it uses and, for each, the first path that made the edge.
#[derive(Debug, Default)]
pub struct ModuleGraph {
    pub edges: BTreeMap<String, BTreeMap<String, String>>,
}

/// What the crate's files say, each file's module, and the modules that exist.
struct Crate {
    files: BTreeMap<Vec<String>, (String, Facts)>,
    modules: BTreeSet<Vec<String>>,
    /// (module, name) → the path the name is re-exported from, as written in that module.
    reexports: BTreeMap<(Vec<String>, String), Vec<String>>,
}

impl Crate {
    fn read(crate_dir: &Path) -> Crate {
        let src = crate_dir.join("src");
        let mut paths = Vec::new();
        rust_files(&src, &mut paths);
        assert!(!paths.is_empty(), "no Rust sources under {}", src.display());
        paths.sort();
        // Files named by a `#[path]` attribute are the module that declares them.
        let mut by_path: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
        let mut test_modules: Vec<Vec<String>> = Vec::new();
        let mut files = BTreeMap::new();
        for p in &paths {
            let rel = p.strip_prefix(&src).unwrap_or(p).to_path_buf();
            let module = by_path.get(&rel).cloned().unwrap_or_else(|| module_of_file(&rel));
            let text = std::fs::read_to_string(p).unwrap_or_default();
            let f = facts(&text, &module);
            for (scope, name, test, attr) in &f.mods {
                let m = [scope.clone(), vec![name.clone()]].concat();
                if let Some(a) = attr {
                    by_path.insert(rel.parent().unwrap_or(Path::new("")).join(a), m.clone());
                }
                if *test {
                    test_modules.push(m);
                }
            }
            files.insert(module, (rel.display().to_string(), f));
        }
        // A second pass for files declared by `#[path]` after they were read.
        let mut out = Crate { files: BTreeMap::new(), modules: BTreeSet::new(), reexports: BTreeMap::new() };
        for (module, (rel, f)) in files {
            let module = by_path.get(Path::new(&rel)).cloned().unwrap_or(module);
            if test_modules.iter().any(|t| module.starts_with(t)) {
                continue;
            }
            for (scope, name, test, _) in &f.mods {
                if !test {
                    out.modules.insert([scope.clone(), vec![name.clone()]].concat());
                }
            }
            for (scope, name, p) in &f.reexports {
                out.reexports.insert((scope.clone(), name.clone()), p.clone());
            }
            out.modules.insert(module.clone());
            out.files.insert(module, (rel, f));
        }
        out
    }

    /// The module a path written in `scope` names, looking through re-exports.
    fn resolve(&self, scope: &[String], path: &[String], hops: usize) -> Option<Vec<String>> {
        let (mut cur, mut rest) = match path.first().map(String::as_str)? {
            "crate" => (Vec::new(), &path[1..]),
            "self" => (scope.to_vec(), &path[1..]),
            "super" => {
                let supers = path.iter().take_while(|s| *s == "super").count();
                (scope[..scope.len().checked_sub(supers)?].to_vec(), &path[supers..])
            }
            first if self.modules.contains(&[scope.to_vec(), vec![first.to_string()]].concat()) => {
                (scope.to_vec(), path)
            }
            _ => return None,
        };
        while let Some(seg) = rest.first() {
            let next = [cur.clone(), vec![seg.clone()]].concat();
            if self.modules.contains(&next) {
                (cur, rest) = (next, &rest[1..]);
            } else if let Some(target) = self.reexports.get(&(cur.clone(), seg.clone())) {
                if hops > 16 {
                    return Some(cur);
                }
                let full = [target.clone(), rest[1..].to_vec()].concat();
                return self.resolve(&cur, &full, hops + 1).or(Some(cur));
            } else {
                break;
            }
        }
        Some(cur)
    }

    /// The file that holds a module (an inline module is in its parent's file).
    fn file_of(&self, module: &[String]) -> Option<&String> {
        (0..=module.len()).rev().find_map(|n| self.files.get(&module[..n]).map(|(rel, _)| rel))
    }
}

impl ModuleGraph {
    /// Builds the graph of the crate whose directory (holding `src/`) is `crate_dir`.
    pub fn of_crate(crate_dir: &Path) -> ModuleGraph {
        let c = Crate::read(crate_dir);
        let mut g = ModuleGraph::default();
        for (rel, f) in c.files.values() {
            let out = g.edges.entry(rel.clone()).or_default();
            for (scope, path) in &f.refs {
                let Some(to) = c.resolve(scope, path, 0).and_then(|m| c.file_of(&m)) else { continue };
                if to != rel {
                    out.entry(to.clone()).or_insert_with(|| path.join("::"));
                }
            }
        }
        g
    }

    /// Every circle: one per group of files that reach each other, as the files in order
    /// (the first again at the end), each step with the path that makes it.
    pub fn cycles(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        let mut done: BTreeSet<&String> = BTreeSet::new();
        for start in self.edges.keys() {
            if done.contains(start) {
                continue;
            }
            let Some(chain) = self.cycle_from(start) else { continue };
            let group: Vec<&String> =
                self.reachable(start).into_iter().filter(|f| self.reachable(f).contains(start)).collect();
            let mut lines = self.describe(&chain);
            let names: Vec<&str> = group.iter().map(|f| f.as_str()).collect();
            lines.push(format!("(one circle of a group of {} files: {})", group.len(), names.join(", ")));
            done.extend(group);
            out.push(lines);
        }
        out
    }

    /// The files `start` uses, directly or not.
    fn reachable<'a>(&'a self, start: &'a String) -> BTreeSet<&'a String> {
        let (mut seen, mut todo) = (BTreeSet::new(), vec![start]);
        while let Some(at) = todo.pop() {
            for next in self.edges.get(at).into_iter().flat_map(BTreeMap::keys) {
                if seen.insert(next) {
                    todo.push(next);
                }
            }
        }
        seen
    }

    /// A shortest circle through `start`, if there is one (breadth first).
    fn cycle_from<'a>(&'a self, start: &'a String) -> Option<Vec<&'a String>> {
        let mut parent: BTreeMap<&String, &String> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        while let Some(at) = queue.pop_front() {
            for next in self.edges.get(at).into_iter().flat_map(BTreeMap::keys) {
                if next == start {
                    let mut chain = vec![at];
                    while let Some(p) = parent.get(chain[chain.len() - 1]) {
                        chain.push(p);
                    }
                    chain.reverse();
                    chain.push(start);
                    return Some(chain);
                }
                if !parent.contains_key(next) {
                    parent.insert(next, at);
                    queue.push_back(next);
                }
            }
        }
        None
    }

    fn describe(&self, chain: &[&String]) -> Vec<String> {
        let mut lines = vec![chain[0].clone()];
        for w in chain.windows(2) {
            let why = self.edges.get(w[0]).and_then(|e| e.get(w[1])).cloned().unwrap_or_default();
            lines.push(format!("{} (uses {why})", w[1]));
        }
        lines
    }
}

fn crate_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crates").join(name)
}

fn assert_no_cycles(name: &str) {
    let g = ModuleGraph::of_crate(&crate_dir(name));
    assert!(g.edges.len() > 5, "{name}: only {} files found", g.edges.len());
    if std::env::var_os("RACEHORSE_PRINT_GRAPH").is_some() {
        for (f, e) in &g.edges {
            eprintln!("{f} -> {:?}", e);
        }
    }
    let cycles = g.cycles();
    let text: Vec<String> = cycles.iter().map(|c| c.join("\n   → ")).collect();
    assert!(cycles.is_empty(), "crates/{name}: modules that import each other:\n{}", text.join("\n\n"));
}

#[test]
fn the_report_has_no_module_cycle() {
    assert_no_cycles("report");
}

#[test]
fn the_runner_has_no_module_cycle() {
    assert_no_cycles("runner");
}

/// The reader on a small crate of its own: a circle through a facade's re-export is found,
/// paths in comments, strings and test modules are not.
#[test]
fn the_graph_finds_a_circle_and_ignores_tests_comments_and_strings() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("a")).unwrap();
    let write = |p: &str, text: &str| std::fs::write(src.join(p), text).unwrap();
    write("lib.rs", "//! x\npub mod a;\npub mod b;\npub mod c;\n");
    write("a/mod.rs", "//! x\nmod inner;\npub use inner::Thing;\n");
    write("a/inner.rs", "//! x\nuse crate::b::{self, B as Bee};\npub struct Thing;\n");
    write("b.rs", "//! x\n// crate::c::C\nconst S: &str = \"crate::c::C\";\npub struct B;\n");
    write("c.rs", "//! x\npub fn f() -> crate::a::Thing { crate::a::Thing }\n#[cfg(test)]\nmod tests {\n    use crate::b::B;\n}\n");
    let g = ModuleGraph::of_crate(dir.path());
    assert!(g.cycles().is_empty(), "{:?}", g.edges);
    assert_eq!(g.edges["c.rs"].keys().collect::<Vec<_>>(), ["a/inner.rs"], "{:?}", g.edges);
    assert!(g.edges["b.rs"].is_empty(), "{:?}", g.edges);
    write("b.rs", "//! x\npub struct B(crate::c::C);\n");
    let cycles = ModuleGraph::of_crate(dir.path()).cycles();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    let files: BTreeSet<&str> =
        cycles[0].iter().filter(|l| !l.starts_with('(')).map(|l| l.split(' ').next().unwrap_or("")).collect();
    assert_eq!(files, BTreeSet::from(["a/inner.rs", "b.rs", "c.rs"]), "{cycles:?}");
}
