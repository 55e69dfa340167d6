//! Every figure an engine records is declared in its description, and every declaration is
//! recorded. The keys are read from each engine's sources (its directory or file, under `src/`
//! or `src/adapters/`, tests left out): the literal or `format!` key of each
//! `Recorder::set_extra` and `extra.insert` call (a `format!`'s `{…}` read as `*`); for a call
//! whose key is a variable, the tuples `("key", …)` of the function around it and of the
//! functions its loop or its key expression calls (or, for a map built elsewhere, of the
//! functions [`BUILT_ELSEWHERE`] names). `support::pace` is read the same way against its own
//! table, which every paced engine's table ends with; fio's fixture reports and a full QoS
//! verdict check the keys their functions really produce.

use super::registry;
use crate::support::pace;
use crate::Engine;
use racehorse_core::figure::{figure_of, glob};
use racehorse_core::{Figure, LatencyHistogram, SummaryArea};
use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// Recording calls whose keys come from a map the engine builds elsewhere: (file, the call,
/// the functions that build the map).
const BUILT_ELSEWHERE: &[(&str, &str, &[&str])] =
    &[("micro/record.rs", "set_extra(&k, v)", &["latency_outcome", "bandwidth", "chase", "caches"])];

/// One source file: its path under `src/`, its text, and the text with comments and the
/// insides of literals blanked (same byte offsets), its test modules blanked too.
struct Source {
    rel: String,
    text: String,
    code: Vec<u8>,
}

impl Source {
    fn read(path: &Path) -> Source {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut code = blank(&text);
        while let Some(at) = find(&code, b"#[cfg(test)]\nmod ", 0) {
            let end = block_end(&code, at).unwrap_or(code.len());
            code[at..end].fill(b' ');
        }
        let rel = path.strip_prefix(SRC).unwrap_or(path).display().to_string();
        Source { rel, text, code }
    }

    fn line_of(&self, at: usize) -> usize {
        self.text[..at].lines().count().max(1)
    }
}

/// `text` with comments and the insides of string and char literals as spaces.
fn blank(text: &str) -> Vec<u8> {
    let mut b = text.as_bytes().to_vec();
    let n = b.len();
    let mut i = 0;
    let blank_to = |b: &mut Vec<u8>, from: usize, to: usize| b[from..to.min(n)].fill(b' ');
    while i < n {
        if b[i..].starts_with(b"//") {
            let end = find(&b, b"\n", i).unwrap_or(n);
            blank_to(&mut b, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < n && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank_to(&mut b, i + 1, j);
            i = j + 1;
        } else if b[i] == b'\'' {
            let len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
            if b.get(i + 1) == Some(&b'\\') {
                let end = find(&b, b"'", i + 3).unwrap_or(n);
                blank_to(&mut b, i + 1, end);
                i = end + 1;
            } else if b.get(i + 1 + len) == Some(&b'\'') {
                blank_to(&mut b, i + 1, i + 1 + len);
                i += 2 + len;
            } else {
                i += 1; // a lifetime
            }
        } else {
            i += 1;
        }
    }
    b
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    hay.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|p| p + from)
}

/// The end (after the `}`) of the first `{…}` block from `from`.
fn block_end(code: &[u8], from: usize) -> Option<usize> {
    let open = find(code, b"{", from)?;
    let mut depth = 0usize;
    for (i, c) in code.iter().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The text of the first argument of the call whose `(` is at `open`.
fn first_arg(s: &Source, open: usize) -> (&str, bool) {
    let mut depth = 0i32;
    for (i, c) in s.code.iter().enumerate().skip(open + 1) {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth == 0 => return (s.text[open + 1..i].trim(), false),
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => return (s.text[open + 1..i].trim(), true),
            _ => {}
        }
    }
    ("", false)
}

/// The key a key expression names: a literal, or a `format!`'s shape with `*` for each `{…}`.
fn key_of(expr: &str) -> Option<String> {
    let e = expr.trim_start_matches('&');
    if let Some(rest) = e.strip_prefix('"') {
        let lit = &rest[..rest.find('"')?];
        let tail = rest[lit.len() + 1..].trim();
        return ["", ".to_string()", ".into()", ".to_owned()"].contains(&tail).then(|| lit.to_string());
    }
    let rest = e.strip_prefix("format!(\"")?;
    let fmt = &rest[..rest.find('"')?];
    let mut shape = String::new();
    let mut in_brace = false;
    for c in fmt.chars() {
        match c {
            '{' => in_brace = true,
            '}' if in_brace => {
                in_brace = false;
                shape.push('*');
            }
            c if !in_brace => shape.push(c),
            _ => {}
        }
    }
    Some(shape)
}

/// Every `NAME(` call's first argument in `range` of a source.
fn calls<'s>(s: &'s Source, name: &str, range: std::ops::Range<usize>) -> Vec<(usize, &'s str)> {
    let mut out = Vec::new();
    let mut at = range.start;
    while let Some(i) = find(&s.code[..range.end], format!("{name}(").as_bytes(), at) {
        let word_start = i == 0 || !(s.code[i - 1].is_ascii_alphanumeric() || s.code[i - 1] == b'_');
        if word_start || name.contains('.') {
            out.push((i, first_arg(s, i + name.len()).0));
        }
        at = i + 1;
    }
    out
}

/// The keys of the tuples `("key", …)` (or `("key".to_string(), …)`, `(format!(…), …)`) in
/// `range`: a `(` that opens no call, whose first element is a key and is followed by more.
fn tuple_keys(s: &Source, range: std::ops::Range<usize>) -> Vec<String> {
    let mut out = Vec::new();
    for i in range.clone().filter(|&i| s.code[i] == b'(') {
        let before = s.code[range.start..i].iter().rev().find(|c| !c.is_ascii_whitespace());
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || b"_!>".contains(c)) {
            continue;
        }
        if let (arg, true) = first_arg(s, i) {
            out.extend(key_of(arg));
        }
    }
    out
}

/// The `{…}` of the innermost `fn` around `at`, as a byte range.
fn enclosing_fn(s: &Source, at: usize) -> Option<std::ops::Range<usize>> {
    let mut best = None;
    let mut from = 0;
    while let Some(f) = find(&s.code, b"fn ", from) {
        if f > at {
            break;
        }
        if let Some(end) = block_end(&s.code, f).filter(|&e| e > at) {
            best = Some(f..end);
        }
        from = f + 1;
    }
    best
}

/// The body of `fn name` in any of the sources.
fn fn_named<'s>(sources: &'s [Source], name: &str) -> Vec<(&'s Source, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    for s in sources {
        let mut from = 0;
        while let Some(f) = find(&s.code, format!("fn {name}(").as_bytes(), from) {
            out.extend(block_end(&s.code, f).map(|end| (s, f..end)));
            from = f + 1;
        }
    }
    out
}

/// The names of the functions called in `text` (`name(`, `.name(`).
fn called(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            if c == '(' && word.chars().next().is_some_and(|f| f.is_ascii_lowercase()) {
                out.push(word.clone());
            }
            word.clear();
        }
    }
    out
}

/// The keys a call with a variable key records (see the module's docs).
fn variable_keys(sources: &[Source], s: &Source, at: usize, expr: &str) -> Vec<String> {
    let call = &s.text[at..s.text[at..].find(')').map_or(s.text.len(), |e| at + e + 1)];
    if let Some((_, _, makers)) = BUILT_ELSEWHERE.iter().find(|(f, c, _)| *f == s.rel && *c == call) {
        let bodies = makers.iter().flat_map(|m| fn_named(sources, m));
        return bodies.flat_map(|(src, r)| tuple_keys(src, r)).collect();
    }
    let Some(body) = enclosing_fn(s, at) else { return Vec::new() };
    let mut keys = tuple_keys(s, body.clone());
    let mut helpers = called(expr);
    if let Some(f) = s.code[body.start..at].windows(4).rposition(|w| w == b"for ") {
        let header = &s.text[body.start + f..at];
        helpers.extend(called(&header[..header.find('{').unwrap_or(header.len())]));
    }
    for (src, r) in helpers.iter().flat_map(|h| fn_named(sources, h)) {
        keys.extend(tuple_keys(src, r.clone()));
        keys.extend(calls(src, "format!", r).into_iter().filter_map(|(i, _)| key_of(&src.text[i..])));
    }
    keys
}

/// Every key the sources record, with where (`file:line`); panics on a call whose keys
/// cannot be read.
fn recorded(sources: &[Source]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for s in sources {
        for name in ["set_extra", "extra.insert"] {
            for (at, expr) in calls(s, name, 0..s.code.len()) {
                let place = format!("{}:{}", s.rel, s.line_of(at));
                let keys = match key_of(expr) {
                    Some(k) => vec![k],
                    None => variable_keys(sources, s, at, expr),
                };
                assert!(
                    !keys.is_empty(),
                    "{place}: cannot tell which keys `{name}({expr}, …)` records; record literal keys, \
                     tuples (\"key\", value) in the same function, or name the functions that build them \
                     in BUILT_ELSEWHERE"
                );
                out.extend(keys.into_iter().map(|k| (k, place.clone())));
            }
        }
    }
    out
}

fn rs_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        out.push(path.to_path_buf());
    } else if let Ok(dir) = std::fs::read_dir(path) {
        for e in dir.flatten() {
            rs_files(&e.path(), out);
        }
    }
}

fn is_test_file(p: &Path) -> bool {
    let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    stem == "tests" || stem.ends_with("_tests") || stem.starts_with("tests_") || stem == "testutil"
}

/// The non-test sources under `src/` of these paths.
fn sources_of(paths: &[String]) -> Vec<Source> {
    let mut files = Vec::new();
    for p in paths {
        rs_files(&Path::new(SRC).join(p), &mut files);
    }
    files.retain(|f| f.extension().is_some_and(|e| e == "rs") && !is_test_file(f));
    files.sort();
    files.iter().map(|f| Source::read(f)).collect()
}

/// An engine's module: `src/NAME/`, `src/NAME.rs` or the same under `src/adapters/`.
fn engine_sources(name: &str) -> Vec<Source> {
    let candidates =
        [name.to_string(), format!("{name}.rs"), format!("adapters/{name}"), format!("adapters/{name}.rs")];
    let found: Vec<String> = candidates.into_iter().filter(|c| Path::new(SRC).join(c).exists()).collect();
    assert!(!found.is_empty(), "engine {name}: no module src/{name} or src/adapters/{name}");
    sources_of(&found)
}

/// Checks both ways: each recorded key is declared, each declaration recorded.
fn check(who: &str, figures: &[Figure], keys: &[(String, String)]) {
    for (key, place) in keys {
        let declared = if key.contains('*') {
            figures.iter().any(|f| glob(f.key, key).is_some())
        } else {
            figure_of(figures, key).is_some()
        };
        assert!(
            declared,
            "{who}: {place} records the extra `{key}`, which its figure table does not declare"
        );
    }
    for f in figures {
        let used = keys.iter().any(|(k, _)| glob(f.key, k).is_some());
        assert!(used, "{who}: the figure `{}` ({}) is declared but nothing records it", f.key, f.name);
        let twice = figures.iter().filter(|g| g.key == f.key).count();
        assert_eq!(twice, 1, "{who}: `{}` is declared {twice} times", f.key);
        assert!(!f.name.is_empty() && !f.unit.is_empty(), "{who}: `{}` needs a name and a unit", f.key);
    }
}

/// An engine's own figures: its table without pace's tail.
fn own_figures(e: &dyn Engine) -> &'static [Figure] {
    let all = e.info().figures;
    if e.caps().paced {
        let (own, tail) = all.split_at(all.len().saturating_sub(pace::FIGURES.len()));
        assert_eq!(tail, pace::FIGURES, "{} paces: its figure table ends with pace::FIGURES", e.name());
        return own;
    }
    for f in all {
        assert!(!pace::FIGURES.contains(f), "{} does not pace but declares `{}`", e.name(), f.key);
    }
    all
}

#[test]
fn every_recorded_figure_is_declared_and_every_declared_one_recorded() {
    for e in registry() {
        let keys = recorded(&engine_sources(e.name()));
        check(e.name(), own_figures(*e), &keys);
    }
    let pace_keys = recorded(&sources_of(&["support/pace.rs".to_string()]));
    check("support::pace", &pace::FIGURES, &pace_keys);
    let support = sources_of(&["support".to_string()]);
    for s in support.iter().filter(|s| s.rel != "support/pace.rs") {
        let keys = recorded(std::slice::from_ref(s));
        assert!(keys.is_empty(), "{}: support code records extras {keys:?}; declare them like pace's", s.rel);
    }
}

#[test]
fn what_fio_reports_and_a_qos_verdict_hold_are_declared() {
    let fio = crate::find("fio").expect("fio").info().figures;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fio");
    let mut files = Vec::new();
    rs_files(&dir, &mut files);
    assert!(!files.is_empty(), "fio's fixture reports in {}", dir.display());
    for f in files {
        let report = crate::adapters::fio::json::parse(&std::fs::read_to_string(&f).expect("fixture"))
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        for (key, _) in report.extras() {
            assert!(figure_of(fio, &key).is_some(), "{}: fio's `{key}` is not declared", f.display());
        }
    }
    let qos = pace::Qos { percentile: 95.0, limit_ns: 5_000_000, min_rate_pct: None };
    let spec = pace::PaceSpec { rate_per_s: Some(100.0), qos: Some(qos) };
    let mut hist = LatencyHistogram::default();
    hist.record(1_000_000);
    let keys: Vec<&str> = pace::evaluate(&spec, &hist, 1.0).figures.iter().map(|(k, _)| *k).collect();
    let declared: Vec<&str> = pace::FIGURES.iter().map(|f| f.key).collect();
    assert_eq!(keys.len(), declared.len(), "{keys:?}");
    assert!(keys.iter().all(|k| declared.contains(k)), "{keys:?} against {declared:?}");
}

#[test]
fn the_summary_areas_are_listed_in_engine_infos_docs() {
    let docs = std::fs::read_to_string(Path::new(SRC).join("info.rs")).expect("info.rs");
    for a in SummaryArea::ALL {
        assert!(
            docs.contains(&format!("/// - \"{}\":", a.label())),
            "EngineInfo's docs list \"{}\"",
            a.label()
        );
    }
    let used: Vec<&str> =
        registry().iter().map(|e| e.info().summary_area.area(&Default::default()).label()).collect();
    assert!(used.contains(&"Disk I/O") && used.contains(&"Harness"), "{used:?}");
}
