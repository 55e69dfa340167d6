//! The line syntax of cpuplugd.conf: comments, whitespace deletion, `NAME="value"`, key and
//! variable names. Produces one [`Entry`] per setting, in file order.

use super::Key;
use crate::names::is_predefined;
use crate::source::Source;
use crate::ConfigError;
use std::collections::HashMap;

/// Longest accepted line, in characters (without the newline).
pub const MAX_LINE: usize = 2048;
/// Longest user variable name.
pub const MAX_VAR_NAME: usize = 128;

/// One `NAME="value"` line.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub line: usize,
    pub name: String,
    pub name_col: usize,
    /// None: a user variable.
    pub key: Option<Key>,
    /// The value between the quotes, stripped, with columns in the original line.
    pub value: Source,
    /// The value as written (whitespace kept).
    pub raw: String,
}

#[derive(Debug, Default)]
pub(super) struct Lines {
    pub entries: Vec<Entry>,
    pub warnings: Vec<String>,
    /// Where "end of file" is reported: (line, column).
    pub eof: (usize, usize),
}

/// "line L, column C: message", the form of warnings.
pub(super) fn warning(line: usize, column: usize, message: &str) -> String {
    format!("line {line}, column {column}: {message}")
}

/// Splits the file into entries; rejects malformed lines, bad names and repeated variables.
pub(super) fn read_lines(text: &str) -> Result<Lines, ConfigError> {
    let mut out = Lines::default();
    let mut keys_seen: HashMap<Key, usize> = HashMap::new();
    let mut vars_seen: HashMap<String, usize> = HashMap::new();
    let mut last = (1, 1);
    for (i, piece) in text.split('\n').enumerate() {
        let line = i + 1;
        let orig = piece.strip_suffix('\r').unwrap_or(piece);
        last = (line, orig.chars().count() + 1);
        let Some(entry) = read_line(line, orig, &mut out.warnings)? else { continue };
        match entry.key {
            Some(key) => {
                if let Some(prev) = keys_seen.insert(key, line) {
                    let msg =
                        format!("{} is set again (previously on line {prev}); the last one wins", key.name());
                    out.warnings.push(warning(line, entry.name_col, &msg));
                }
            }
            None => {
                if let Some(prev) = vars_seen.insert(entry.name.clone(), line) {
                    let msg = format!("variable `{}` is already defined on line {prev}", entry.name);
                    return Err(ConfigError::at(line, entry.name_col, msg));
                }
            }
        }
        out.entries.push(entry);
    }
    out.eof = last;
    Ok(out)
}

/// One line: None for comments, blank lines and lines without `=`.
fn read_line(line: usize, orig: &str, warnings: &mut Vec<String>) -> Result<Option<Entry>, ConfigError> {
    if orig.chars().count() > MAX_LINE {
        return Err(ConfigError::at(line, MAX_LINE + 1, format!("line longer than {MAX_LINE} characters")));
    }
    if orig.starts_with('#') {
        return Ok(None);
    }
    let src = Source::strip(line, orig);
    let Some(eq) = src.text.find('=') else {
        if !src.text.is_empty() {
            warnings.push(warning(line, src.col(0), "no `=` on this line, so it is ignored"));
        }
        return Ok(None);
    };
    let name = &src.text[..eq];
    let name_col = if name.is_empty() { src.col(eq) } else { src.col(0) };
    let key = classify(name, line, &src, warnings)?;
    let label: &str = match key {
        Some(k) => k.name(),
        None => name,
    };
    let open = eq + 1;
    if !src.text[open..].starts_with('"') {
        let msg = format!("the value of {label} must be in double quotes, as in {label}=\"...\"");
        return Err(ConfigError::at(line, src.col(open), msg));
    }
    let close = src.text.rfind('"').unwrap_or(open);
    if close == open {
        return Err(ConfigError::at(
            line,
            src.col(src.text.len()),
            format!("missing closing `\"` in the value of {label}"),
        ));
    }
    let value = src.slice(open + 1, close, src.col(close));
    let (open_col, close_col) = (src.col(open), src.col(close));
    let raw = orig.chars().skip(open_col).take(close_col - open_col - 1).collect();
    Ok(Some(Entry { line, name: name.to_string(), name_col, key, value, raw }))
}

/// A key (case-insensitive, whole name) or a valid user variable name (None).
fn classify(
    name: &str,
    line: usize,
    src: &Source,
    warnings: &mut Vec<String>,
) -> Result<Option<Key>, ConfigError> {
    let col = src.col(0);
    if name.is_empty() {
        return Err(ConfigError::at(line, col, "missing name before `=`"));
    }
    let upper = name.to_ascii_uppercase();
    if let Some(key) = Key::ALL.iter().find(|k| k.name() == upper) {
        return Ok(Some(*key));
    }
    if let Some(bad) = name.char_indices().find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_')) {
        let hint = if name.starts_with('#') { "; `#` starts a comment only in the first column" } else { "" };
        let msg = format!(
            "`{name}` is neither a key nor a valid variable name (letters, digits and `_` only){hint}"
        );
        return Err(ConfigError::at(line, src.col(bad.0), msg));
    }
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(ConfigError::at(
            line,
            col,
            format!("variable name `{name}` must not start with a digit"),
        ));
    }
    if name.len() > MAX_VAR_NAME {
        return Err(ConfigError::at(
            line,
            col,
            format!("variable name longer than {MAX_VAR_NAME} characters"),
        ));
    }
    if is_predefined(name) {
        return Err(ConfigError::at(
            line,
            col,
            format!("`{name}` is a predefined name and cannot be a variable"),
        ));
    }
    if let Some(key) = Key::ALL.iter().find(|k| upper.starts_with(k.name())) {
        let msg = format!(
            "`{name}` is a user variable here; upstream cpuplugd matches keys by prefix and reads it as {}",
            key.name()
        );
        warnings.push(warning(line, col, &msg));
    }
    Ok(None)
}
