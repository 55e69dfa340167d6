//! The house rules that code review would otherwise have to remember, checked on every Rust
//! source of the workspace: a `//!` first line, files of at most 600 lines, functions of at
//! most 80 lines (signature to closing brace, as written), and in the runner no `Result<_,
//! String>` but in documented leaf parsers.

use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 600;
const MAX_FN_LINES: usize = 80;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        if p.is_dir() && name != "target" && name != "corpus" && name != "artifacts" {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for d in ["crates", "tests", "fuzz/fuzz_targets"] {
        rust_files(&root.join(d), &mut out);
    }
    assert!(out.len() > 100, "found only {} sources under {}", out.len(), root.display());
    out
}

/// A line without its string and char literals and its `//` comment, for brace counting.
fn code_of(line: &str) -> String {
    let (mut out, mut chars) = (String::new(), line.chars().peekable());
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                while let Some(d) = chars.next() {
                    match d {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '\'' if chars.clone().nth(1) == Some('\'') => {
                chars.nth(1);
            }
            '\'' if chars.peek() == Some(&'\\') => {
                chars.by_ref().take_while(|&d| d != '\'').for_each(drop);
            }
            '/' if chars.peek() == Some(&'/') => break,
            _ => out.push(c),
        }
    }
    out
}

/// The name of the function a line starts, if it does.
fn fn_name(line: &str) -> Option<&str> {
    let mut t = line.trim_start();
    for prefix in ["pub(crate) ", "pub(super) ", "pub ", "const ", "async ", "unsafe ", "extern \"C\" "] {
        t = t.strip_prefix(prefix).unwrap_or(t);
    }
    let rest = t.strip_prefix("fn ")?;
    Some(&rest[..rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len())])
}

/// (name, first line, length) of every function whose body spans more than `max` lines.
fn long_functions(text: &str, max: usize) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = fn_name(line) else { continue };
        let (mut depth, mut opened) = (0i64, false);
        for (j, l) in lines.iter().enumerate().skip(i) {
            let code = code_of(l);
            if !opened && code.contains(';') && !code.contains('{') {
                break; // a declaration without a body
            }
            for c in code.chars() {
                match c {
                    '{' => (depth, opened) = (depth + 1, true),
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if opened && depth <= 0 {
                if j - i + 1 > max {
                    out.push((name.to_string(), i + 1, j - i + 1));
                }
                break;
            }
        }
    }
    out
}

#[test]
fn every_source_opens_with_a_module_doc_line_and_stays_short() {
    let mut bad = Vec::new();
    for p in sources() {
        let text = std::fs::read_to_string(&p).unwrap();
        if !text.starts_with("//!") {
            bad.push(format!("{}: first line is not a `//!` doc line", p.display()));
        }
        let n = text.lines().count();
        if n > MAX_FILE_LINES {
            bad.push(format!("{}: {n} lines (at most {MAX_FILE_LINES}; split it)", p.display()));
        }
        for (name, line, len) in long_functions(&text, MAX_FN_LINES) {
            bad.push(format!(
                "{}:{line}: fn {name} is {len} lines (at most {MAX_FN_LINES}; split it)",
                p.display()
            ));
        }
    }
    assert!(bad.is_empty(), "house rules broken:\n{}", bad.join("\n"));
}

#[test]
fn the_function_measure_counts_bodies_not_braces_in_strings() {
    let short = "fn a() {\n    let s = \"}}}\";\n    let c = '}';\n}\n";
    assert!(long_functions(short, 4).is_empty(), "4 lines: {:?}", long_functions(short, 4));
    assert_eq!(long_functions(short, 3), vec![("a".to_string(), 1, 4)]);
    let long =
        format!("pub fn b(x: u32) -> u32 {{\n{}    x\n}}\nfn decl();\n", "    let _ = '{';\n".repeat(5));
    assert_eq!(long_functions(&long, 3), vec![("b".to_string(), 1, 8)]);
    assert_eq!(fn_name("    pub(crate) fn c<T>()"), Some("c"));
}

/// A test that cannot run here returns through `racehorse_testkit::skip!`, never a bare
/// `skipped:` print, so that scripts/test.sh counts it as skipped and not as passed.
#[test]
fn every_run_time_skip_goes_through_the_testkit() {
    let bare = ["println!(\"skipped:", "eprintln!(\"skipped:", "eprintln!(\"skipping:"];
    let mut bad = Vec::new();
    for p in sources() {
        if p.components().any(|c| c.as_os_str() == "testkit") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        for (i, l) in text.lines().enumerate() {
            if bare.iter().any(|b| l.contains(b)) {
                bad.push(format!("{}:{}: {}", p.display(), i + 1, l.trim()));
            }
        }
    }
    assert!(bad.is_empty(), "use racehorse_testkit::skip!(REASON) instead:\n{}", bad.join("\n"));
}

/// The runner's `Result<_, String>` sites that are left (issue 46): leaf parsers and checks
/// whose callers wrap the message into a typed error (`SuiteError` with file:line:col,
/// `OverrideError` naming the flag, `PerfError`), and test helpers. Each says so in a comment
/// holding "leaf" just above it. A new one gets a typed error in its module instead
/// (crates/runner/src/error.rs lists them), or, if it is a leaf, that comment and this count.
const RUNNER_LEAF_STRING_RESULTS: usize = 32;

/// Whether the type text `ty` holds a `Result<…, String>`: a `Result` whose last argument is
/// `String` (`io::Result<String>` and `Result<String, E>` are not).
fn has_string_error(ty: &str) -> bool {
    let mut from = 0;
    while let Some(at) = ty[from..].find("Result<") {
        let start = from + at + "Result<".len();
        let (mut depth, mut last_comma) = (0i32, None);
        for (i, c) in ty[start..].char_indices() {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' if depth == 0 => {
                    if last_comma.is_some_and(|c: usize| ty[c..start + i].trim() == "String") {
                        return true;
                    }
                    break;
                }
                '>' | ')' | ']' => depth -= 1,
                ',' if depth == 0 => last_comma = Some(start + i + 1),
                _ => {}
            }
        }
        from = start;
    }
    false
}

/// Whether a comment holding "leaf" stands above line `i`, over the lines of its signature
/// and attributes (up to 8 lines, not past the end of an earlier item).
fn leaf_comment_above(lines: &[&str], i: usize) -> bool {
    for l in lines[i.saturating_sub(8)..i].iter().rev() {
        let t = l.trim();
        if t.starts_with("//") {
            if t.to_lowercase().contains("leaf") {
                return true;
            }
        } else if t.is_empty() || t.ends_with('}') || t.ends_with(';') || t.ends_with('{') {
            return false;
        }
    }
    false
}

#[test]
fn the_runner_keeps_string_errors_only_in_documented_leaf_parsers() {
    let mut files = Vec::new();
    rust_files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/runner/src"), &mut files);
    assert!(files.len() > 30, "found only {} runner sources", files.len());
    let (mut sites, mut undocumented) = (0, Vec::new());
    for p in files {
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let code = code_of(l);
            let Some(at) = code.find("->") else { continue };
            if !has_string_error(&code[at + 2..]) {
                continue;
            }
            sites += 1;
            if !leaf_comment_above(&lines, i) {
                undocumented.push(format!("{}:{}: {}", p.display(), i + 1, l.trim()));
            }
        }
    }
    assert!(
        undocumented.is_empty(),
        "a `Result<_, String>` in the runner must be a leaf whose caller wraps the message into a \
         typed error, and say so in a comment (\"Leaf parser: CALLER wraps it …\") above it; else \
         give its module a typed error that converts into RunError:\n{}",
        undocumented.join("\n")
    );
    assert!(
        sites <= RUNNER_LEAF_STRING_RESULTS,
        "{sites} `Result<_, String>` sites in crates/runner/src, at most {RUNNER_LEAF_STRING_RESULTS}: \
         give the new one's module a typed error (crates/runner/src/error.rs)"
    );
}

#[test]
fn string_errors_are_told_from_other_results() {
    assert!(has_string_error(" Result<Vec<u32>, String> {"));
    assert!(has_string_error(" Option<Result<Vec<Value>, String>> {"));
    assert!(has_string_error(" Result<BTreeMap<String, String>, String> {"));
    assert!(has_string_error(" Result<Value, String>),"));
    assert!(!has_string_error(" Result<String, PerfError> {"));
    assert!(!has_string_error(" io::Result<String> {"));
    assert!(!has_string_error(" Result<(String, u32), RunError> {"));
    assert!(!has_string_error(" Option<String> {"));
    let lines = [
        "}",
        "/// Leaf parser: wrapped by its caller.",
        "fn a(",
        "    x: u32,",
        ") -> Result<u32, String> {",
    ];
    assert!(leaf_comment_above(&lines, 4));
    assert!(!leaf_comment_above(&["/// Leaf.", "fn a() {}", "fn b() -> Result<u32, String> {"], 2));
    assert!(!leaf_comment_above(&["/// Parses.", "fn b() -> Result<u32, String> {"], 1));
}
