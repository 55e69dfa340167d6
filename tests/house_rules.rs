//! The house rules that code review would otherwise have to remember, checked on every Rust
//! source of the workspace: a `//!` first line, files of at most 600 lines, functions of at
//! most 80 lines (signature to closing brace, as written).

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
    let bare = ["println!(\"skipped:", "eprintln!(\"skipped:"];
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
