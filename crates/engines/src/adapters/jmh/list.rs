//! Which benchmark a cell runs: the jar's benchmarks that the `benchmark` pattern selects, as
//! JMH itself lists them (`java -jar JAR -l PATTERN`, JMH's own regular expressions), narrowed
//! to exactly one. A cell is one benchmark method, so that its window and its CPU per
//! operation belong to one piece of code; a pattern that selects several is a usage error
//! that names them and shows how to make them an axis.

use crate::EngineError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::SystemTime;

/// Listings already made, by (jar, its modification time, pattern): planning validates every
/// cell and should not start a JVM for each.
type Cache = BTreeMap<(PathBuf, Option<SystemTime>, String), Vec<String>>;
static LISTED: Mutex<Cache> = Mutex::new(BTreeMap::new());

/// The benchmark names in the output of JMH's `-l` (the lines after `Benchmarks:`).
pub(super) fn parse_listing(stdout: &str) -> Option<Vec<String>> {
    let (_, rest) = stdout.split_once("Benchmarks:")?;
    Some(rest.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect())
}

/// The jar's benchmarks that `pattern` selects (all for an empty pattern).
pub(super) fn list(java: &Path, jar: &Path, pattern: &str) -> Result<Vec<String>, EngineError> {
    let mtime = std::fs::metadata(jar).and_then(|m| m.modified()).ok();
    let key = (jar.to_path_buf(), mtime, pattern.to_string());
    if let Some(names) = LISTED.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(names.clone());
    }
    let mut cmd = Command::new(java);
    cmd.arg("-jar").arg(jar).arg("-l");
    if !pattern.is_empty() {
        cmd.arg(pattern);
    }
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| EngineError::io("cannot run java to list the jar's benchmarks", java, e))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let tail = || super::process::tail(&stdout, &String::from_utf8_lossy(&out.stderr));
    let Some(names) = parse_listing(&stdout).filter(|_| out.status.success()) else {
        // The jar lists its benchmarks without the pattern: the pattern is what JMH refused.
        if !pattern.is_empty() && list(java, jar, "").is_ok() {
            return Err(EngineError::Usage(format!(
                "benchmark pattern '{pattern}' is not one JMH can use (a Java regular expression; \
                 `java -jar {} -l {pattern}` failed: {}); `java -jar {} -l` lists the benchmarks",
                jar.display(),
                tail(),
                jar.display()
            )));
        }
        return Err(EngineError::Usage(format!(
            "{} is not a JMH benchmarks jar (`java -jar {} -l` failed: {})",
            jar.display(),
            jar.display(),
            tail()
        )));
    };
    LISTED.lock().unwrap_or_else(|e| e.into_inner()).insert(key, names.clone());
    Ok(names)
}

/// The one benchmark of `names` (what `pattern` selected) a cell runs: the only one, or the
/// one whose full name is the pattern or ends with `.pattern`.
pub(super) fn pick(names: &[String], pattern: &str, jar: &Path) -> Result<String, EngineError> {
    if let [one] = names {
        return Ok(one.clone());
    }
    let exact: Vec<&String> =
        names.iter().filter(|n| *n == pattern || n.ends_with(&format!(".{pattern}"))).collect();
    if let [one] = exact.as_slice() {
        return Ok((*one).clone());
    }
    if names.is_empty() {
        return Err(EngineError::Usage(format!(
            "benchmark '{pattern}' selects none of the benchmarks in {} (`java -jar {} -l` lists them)",
            jar.display(),
            jar.display()
        )));
    }
    let short: Vec<&str> = names.iter().map(|n| short_name(n)).collect();
    Err(EngineError::Usage(format!(
        "benchmark '{pattern}' selects {} benchmarks ({}); a cell runs one: name one, or make them an axis: \
         -o benchmark={}",
        names.len(),
        crate::bounded_output(&names.join(", ")),
        crate::bounded_output(&short.join(","))
    )))
}

/// `Class.method` of `package.Class.method`.
pub(super) fn short_name(full: &str) -> &str {
    let mut dots = full.rmatch_indices('.');
    let _method = dots.next();
    match dots.next() {
        Some((i, _)) => &full[i + 1..],
        None => full,
    }
}

/// A regular expression (Java's) that matches exactly `name` and nothing else.
pub(super) fn exact_pattern(name: &str) -> String {
    let mut out = String::from("^");
    for c in name.chars() {
        if !(c.is_alphanumeric() || c == '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('$');
    out
}
