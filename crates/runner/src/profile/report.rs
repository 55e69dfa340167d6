//! Turning a perf data file into the top images and symbols: runs `perf report --stdio` and
//! parses its text (tab-separated, as [`report`] asks for, or perf's default aligned columns).

use super::error::PerfError;
use super::output::{output, tail};
use super::record::EVENT;
use racehorse_core::profile::{Profile, ProfileEntry};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

/// How long `perf report` may run before it is killed.
const REPORT_TIMEOUT: Duration = Duration::from_secs(300);
/// The symbol under which an image's unresolved addresses are merged.
pub const UNKNOWN_SYMBOL: &str = "[unknown]";

/// One entry line of `perf report`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportLine {
    /// perf's "Shared Object" column.
    pub image: String,
    /// The symbol without its level marker; None in `--sort dso` reports.
    pub symbol: Option<String>,
    /// The level marker: 'k' kernel, '.' user space (also 'g', 'u', 'H' for guests/hypervisor).
    pub level: Option<char>,
    /// perf's "Overhead" column: percent of all samples, 2 decimals.
    pub percent: f64,
    /// perf's "Samples" column (`-n`), when shown.
    pub samples: Option<u64>,
}

/// The exact counts of a report, cut to the top entries.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    /// All samples in the report.
    pub samples: u64,
    pub images: Vec<ProfileEntry>,
    pub symbols: Vec<ProfileEntry>,
}

/// Reports the data file: the total number of samples and the top `top` images and symbols,
/// with shares computed from exact sample counts. A recording without samples gives an
/// empty profile.
pub fn report(perf: &Path, data: &Path, top: usize) -> Result<Profile, PerfError> {
    let text = run_report(perf, data)?;
    let lines = parse_lines(&text, true).map_err(PerfError::Output)?;
    let summary = summarize(&lines, top).map_err(PerfError::Output)?;
    Ok(Profile {
        event: event_name(&text).unwrap_or_else(|| EVENT.to_string()),
        samples: summary.samples,
        images: summary.images,
        symbols: summary.symbols,
        frequency_hz: 0,
        ..Profile::default()
    })
}

/// `perf report` arguments: one line per (image, symbol) with its sample count, tab-separated,
/// no children/callchain columns and no percent limit (whatever ~/.perfconfig says).
pub fn report_args(data: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["report".into(), "--stdio".into(), "-i".into(), data.into()];
    let rest = ["--sort", "dso,sym", "-n", "-t", "\t", "--no-children", "-g", "none", "--percent-limit", "0"];
    args.extend(rest.map(OsString::from));
    args
}

/// Runs `perf report` and returns its standard output.
fn run_report(perf: &Path, data: &Path) -> Result<String, PerfError> {
    let out = output(perf, &report_args(data), REPORT_TIMEOUT)?;
    if !out.status.success() {
        let tool = format!("perf report -i {}", data.display());
        return Err(PerfError::perf(
            tool,
            format!("failed ({})", out.status),
            format!(": {}", tail(&out.stderr, 8)),
        ));
    }
    Ok(out.stdout)
}

/// The event named in the `# Samples: 1K of event 'cpu-clock'` header.
pub fn event_name(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("# Samples:"))?;
    let start = line.find("of event '")? + "of event '".len();
    let len = line[start..].find('\'')?;
    Some(line[start..start + len].to_string())
}

/// Parses a `perf report --stdio` text (`--sort dso`, or `--sort dso,sym` if `with_symbols`)
/// into entries, largest first. Shares come from the sample counts when every line has one
/// (`-n`), else from perf's 2-decimal percentages; either way relative to all samples, as
/// long as the report was not cut with `--percent-limit`.
/// Leaf parser: its callers (tests, the fuzz target) read the message as it is.
pub fn parse_report(text: &str, with_symbols: bool) -> Result<Vec<ProfileEntry>, String> {
    let lines = parse_lines(text, with_symbols)?;
    let counts: Option<Vec<u64>> = lines.iter().map(|l| l.samples).collect();
    let total = counts.as_ref().map_or(0, |c| c.iter().fold(0u64, |a, &n| a.saturating_add(n)));
    let mut entries: Vec<ProfileEntry> = lines
        .into_iter()
        .map(|l| {
            let share_pct = match l.samples {
                Some(n) if total > 0 && counts.is_some() => n as f64 * 100.0 / total as f64,
                _ => l.percent,
            };
            ProfileEntry { image: l.image, symbol: l.symbol, share_pct }
        })
        .collect();
    entries.sort_by(|a, b| b.share_pct.total_cmp(&a.share_pct));
    Ok(entries)
}

/// Parses every entry line; comment (`#`) and blank lines are skipped, anything else that
/// does not parse is an error naming the line.
/// Leaf parser: [`report`] wraps its message into a [`PerfError`].
pub fn parse_lines(text: &str, with_symbols: bool) -> Result<Vec<ReportLine>, String> {
    let has_counts = column_header(text).map(|h| h.contains("Samples"));
    let mut lines = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parsed = if raw.contains('\t') {
            parse_tabbed(raw, with_symbols, has_counts)
        } else {
            parse_aligned(line, with_symbols, has_counts)
        };
        lines
            .push(parsed.map_err(|e| format!("perf report line {}: {e}: {:?}", i + 1, truncate(line, 120)))?);
    }
    Ok(lines)
}

/// The `# Overhead  Samples  Shared Object  Symbol` line, if present.
fn column_header(text: &str) -> Option<&str> {
    text.lines().find(|l| l.starts_with('#') && l.contains("Overhead"))
}

fn truncate(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((at, _)) => &s[..at],
        None => s,
    }
}

/// A line of `perf report -t '\t'`: overhead, [samples,] image[, symbol].
// Leaf parser: `parse_lines` adds the line's number and text to its message.
fn parse_tabbed(line: &str, with_symbols: bool, has_counts: Option<bool>) -> Result<ReportLine, String> {
    let fields: Vec<&str> = line.split('\t').map(str::trim).collect();
    let fixed = 2 + usize::from(with_symbols);
    let counted = has_counts.unwrap_or(fields.len() > fixed);
    let want = fixed + usize::from(counted);
    if fields.len() < want {
        return Err(format!("expected {want} tab-separated fields, found {}", fields.len()));
    }
    let percent = parse_percent(fields[0])?;
    let samples = if counted { Some(parse_count(fields[1])?) } else { None };
    let image = nonempty_image(fields[want - 1 - usize::from(with_symbols)])?;
    let (level, symbol) = if with_symbols {
        let (level, name) = split_level(&fields[want - 1..].join("\t"));
        (level, Some(name))
    } else if fields.len() > want {
        return Err(format!("expected {want} tab-separated fields, found {}", fields.len()));
    } else {
        (None, None)
    };
    Ok(ReportLine { image, symbol, level, percent, samples })
}

/// A line in perf's default layout: columns padded with spaces, so images and symbols with
/// spaces are told apart by the symbol's `[k] `/`[.] ` marker.
// Leaf parser: `parse_lines` adds the line's number and text to its message.
fn parse_aligned(line: &str, with_symbols: bool, has_counts: Option<bool>) -> Result<ReportLine, String> {
    let (first, mut rest) = split_token(line);
    let percent = parse_percent(first)?;
    let mut samples = None;
    let (second, after) = split_token(rest);
    let numeric = !second.is_empty() && second.bytes().all(|b| b.is_ascii_digit());
    if has_counts == Some(true) || (has_counts.is_none() && numeric) {
        samples = Some(parse_count(second)?);
        rest = after;
    }
    if !with_symbols {
        return Ok(ReportLine { image: nonempty_image(rest)?, symbol: None, level: None, percent, samples });
    }
    let at = find_marker(rest).ok_or("no [k]/[.] symbol marker after the image")?;
    let image = nonempty_image(&rest[..at])?;
    let (level, symbol) = split_level(&rest[at..]);
    Ok(ReportLine { image, symbol: Some(symbol), level, percent, samples })
}

/// The first whitespace-delimited token and the rest (leading whitespace removed).
fn split_token(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    (&s[..end], s[end..].trim_start())
}

/// The byte offset of the first `[x] ` marker that follows whitespace (not at the start).
fn find_marker(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    (1..b.len()).find(|&i| {
        b[i] == b'['
            && b[i - 1] == b' '
            && b.get(i + 1).is_some_and(|c| c.is_ascii_graphic())
            && b.get(i + 2) == Some(&b']')
            && b.get(i + 3).copied().unwrap_or(b' ') == b' '
    })
}

/// Splits `[k] name` into ('k', "name"); a field without a marker is all name.
fn split_level(field: &str) -> (Option<char>, String) {
    let b = field.as_bytes();
    let marked = b.len() >= 3 && b[0] == b'[' && b[1].is_ascii_graphic() && b[2] == b']';
    if marked && b.get(3).copied().unwrap_or(b' ') == b' ' {
        (Some(b[1] as char), field[3..].trim().to_string())
    } else {
        (None, field.trim().to_string())
    }
}

// Leaf parser: `parse_lines` adds the line's number and text to its message.
fn parse_percent(token: &str) -> Result<f64, String> {
    let value: f64 = token
        .strip_suffix('%')
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("not a percentage: {:?}", truncate(token, 20)))?;
    if !(0.0..=100.005).contains(&value) {
        return Err(format!("percentage out of range: {value}"));
    }
    Ok(value)
}

// Leaf parser: `parse_lines` adds the line's number and text to its message.
fn parse_count(token: &str) -> Result<u64, String> {
    token.parse().map_err(|_| format!("not a sample count: {:?}", truncate(token, 20)))
}

// Leaf parser: `parse_lines` adds the line's number and text to its message.
fn nonempty_image(s: &str) -> Result<String, String> {
    let s = s.trim();
    if s.is_empty() {
        Err("empty image name".to_string())
    } else {
        Ok(s.to_string())
    }
}

/// Whether `symbol` is an unresolved address as perf prints it (`0x00007f12d91d2000`).
pub fn is_address(symbol: &str) -> bool {
    symbol.strip_prefix("0x").is_some_and(|hex| !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Exact totals from counted report lines: images summed over their lines, each image's
/// unresolved addresses merged into one `UNKNOWN_SYMBOL` entry, both lists sorted by
/// samples (ties by name) and cut to `top`; shares are percent of all samples.
/// Leaf: [`report`] wraps its message into a [`PerfError`].
pub fn summarize(lines: &[ReportLine], top: usize) -> Result<Summary, String> {
    let mut total = 0u64;
    let mut images: BTreeMap<&str, u64> = BTreeMap::new();
    let mut symbols: BTreeMap<(&str, &str), u64> = BTreeMap::new();
    for line in lines {
        let n = line.samples.ok_or("the report has no sample counts (perf report -n)")?;
        total = total.saturating_add(n);
        let image = images.entry(&line.image).or_default();
        *image = image.saturating_add(n);
        if let Some(sym) = &line.symbol {
            let name = if is_address(sym) || sym.is_empty() { UNKNOWN_SYMBOL } else { sym.as_str() };
            let count = symbols.entry((&line.image, name)).or_default();
            *count = count.saturating_add(n);
        }
    }
    let share = |n: u64| if total == 0 { 0.0 } else { n as f64 * 100.0 / total as f64 };
    let images = top_entries(images.into_iter().map(|(image, n)| ((image, None), n)), top, share);
    let symbols =
        top_entries(symbols.into_iter().map(|((image, sym), n)| ((image, Some(sym)), n)), top, share);
    Ok(Summary { samples: total, images, symbols })
}

type Key<'a> = (&'a str, Option<&'a str>);

fn top_entries<'a>(
    counts: impl Iterator<Item = (Key<'a>, u64)>,
    top: usize,
    share: impl Fn(u64) -> f64,
) -> Vec<ProfileEntry> {
    let mut counts: Vec<(Key<'a>, u64)> = counts.filter(|&(_, n)| n > 0).collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    counts.truncate(top);
    counts
        .into_iter()
        .map(|((image, symbol), n)| ProfileEntry {
            image: image.to_string(),
            symbol: symbol.map(str::to_string),
            share_pct: share(n),
        })
        .collect()
}

#[cfg(test)]
mod tests;
