//! A series from a CSV file (`racehorse history --csv FILE --metric NAME`): a header row, a
//! time column (Unix seconds or ISO 8601), attribute columns kept as text (a commit, a build),
//! and numeric metric columns. Rows with the same time and attributes are repetitions of one
//! run. Every refusal names the line and column, so a user can fix the file.

use std::collections::BTreeMap;

/// Longest file read (a CSV series of a million rows is well below it).
pub const MAX_CSV_BYTES: usize = 256 << 20;

/// One run of a CSV series: its time as written, its attributes, its repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvRun {
    /// The time exactly as the file wrote it.
    pub time_text: String,
    /// The time in seconds since the Unix epoch (for ordering).
    pub time_s: f64,
    /// The attribute columns in file order, with this run's values.
    pub attributes: Vec<(String, String)>,
    /// The metric's values (empty cells are left out).
    pub values: Vec<f64>,
    /// The file line of the run's first row (1-based).
    pub line: usize,
}

/// A series read from a CSV file.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvSeries {
    pub metric: String,
    pub time_column: String,
    /// Runs in time order (ties keep the file's order).
    pub runs: Vec<CsvRun>,
    /// Rows whose metric cell was empty.
    pub empty_cells: usize,
}

/// Why a CSV file cannot be read as a series; each names where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CsvError {
    #[error("the file is empty: give a header row (e.g. time,commit,throughput) and one row per repetition")]
    Empty,
    #[error(
        "line 1: the first row looks like data ({0}), not a header; add a header row naming the columns"
    )]
    NoHeader(String),
    #[error("line 1, column {column}: column name {name:?} appears twice; rename one")]
    DuplicateColumn { column: usize, name: String },
    #[error("no column {name:?} (the {what}); the columns are: {columns}")]
    NoSuchColumn { name: String, what: &'static str, columns: String },
    #[error("line {line}, column {column} ({name}): {value:?} is not a number")]
    NotANumber { line: usize, column: usize, name: String, value: String },
    #[error("line {line}, column {column} ({name}): {value:?} is not a time (give Unix seconds or ISO 8601, e.g. 2026-11-29T08:00:00Z)")]
    NotATime { line: usize, column: usize, name: String, value: String },
    #[error("line {line}: {found} fields, the header has {expected}")]
    FieldCount { line: usize, found: usize, expected: usize },
    #[error("line {line}: a quoted field is not closed")]
    OpenQuote { line: usize },
    #[error("the series has {0} run(s) with a value of {1}; history needs at least 2")]
    TooFewRuns(usize, String),
    #[error("the file is larger than {0} bytes")]
    TooLarge(usize),
}

/// What to read from the file.
#[derive(Debug, Clone, Copy, Default)]
pub struct CsvRequest<'a> {
    /// The metric column.
    pub metric: &'a str,
    /// The time column (default `time`).
    pub time_column: Option<&'a str>,
    /// Columns that are attributes even though every value in them is a number (a build
    /// number); other all-numeric columns are taken for other metrics and left out.
    pub attributes: &'a [String],
}

/// Reads the series of `req.metric` from CSV text.
pub fn parse(text: &str, req: &CsvRequest<'_>) -> Result<CsvSeries, CsvError> {
    if text.len() > MAX_CSV_BYTES {
        return Err(CsvError::TooLarge(MAX_CSV_BYTES));
    }
    let mut rows = records(text);
    let (_, header) = rows.next().transpose()?.ok_or(CsvError::Empty)?;
    if header.iter().all(|h| h.trim().is_empty()) {
        return Err(CsvError::Empty);
    }
    if header.iter().all(|h| h.trim().parse::<f64>().is_ok()) {
        return Err(CsvError::NoHeader(header.join(",")));
    }
    let names: Vec<String> = header.iter().map(|h| h.trim().to_string()).collect();
    for (i, n) in names.iter().enumerate() {
        if names[..i].contains(n) {
            return Err(CsvError::DuplicateColumn { column: i + 1, name: n.clone() });
        }
    }
    let find = |name: &str, what| {
        names.iter().position(|n| n == name).ok_or_else(|| CsvError::NoSuchColumn {
            name: name.to_string(),
            what,
            columns: names.join(", "),
        })
    };
    let time_name = req.time_column.unwrap_or("time");
    let (time_at, metric_at) = (find(time_name, "time column")?, find(req.metric, "metric")?);
    for a in req.attributes {
        find(a, "attribute")?;
    }
    let mut data = Vec::new();
    for row in rows {
        let (line, fields) = row?;
        if fields.len() == 1 && fields[0].trim().is_empty() {
            continue;
        }
        if fields.len() != names.len() {
            return Err(CsvError::FieldCount { line, found: fields.len(), expected: names.len() });
        }
        data.push((line, fields));
    }
    let attribute_at: Vec<usize> = (0..names.len())
        .filter(|&i| i != time_at && i != metric_at)
        .filter(|&i| req.attributes.contains(&names[i]) || !all_numeric(&data, i))
        .collect();
    let columns = Columns { names: &names, time_at, metric_at, attribute_at };
    let (runs, empty_cells) = group_runs(&data, &columns)?;
    if runs.len() < 2 {
        return Err(CsvError::TooFewRuns(runs.len(), req.metric.to_string()));
    }
    Ok(CsvSeries { metric: req.metric.to_string(), time_column: time_name.to_string(), runs, empty_cells })
}

/// Where the time, the metric and the attributes are.
struct Columns<'a> {
    names: &'a [String],
    time_at: usize,
    metric_at: usize,
    attribute_at: Vec<usize>,
}

/// A column every non-empty value of which is a number.
fn all_numeric(data: &[(usize, Vec<String>)], column: usize) -> bool {
    let mut seen = false;
    for (_, f) in data {
        let v = f[column].trim();
        if !v.is_empty() {
            if v.parse::<f64>().is_err() {
                return false;
            }
            seen = true;
        }
    }
    seen
}

/// Rows grouped into runs by time and attributes, in time order; and the empty metric cells.
fn group_runs(data: &[(usize, Vec<String>)], c: &Columns<'_>) -> Result<(Vec<CsvRun>, usize), CsvError> {
    let mut runs: Vec<CsvRun> = Vec::new();
    let mut index: BTreeMap<(String, Vec<String>), usize> = BTreeMap::new();
    let mut empty_cells = 0;
    for (line, fields) in data {
        let line = *line;
        let time_text = fields[c.time_at].trim().to_string();
        let time_s = parse_time(&time_text).ok_or_else(|| CsvError::NotATime {
            line,
            column: c.time_at + 1,
            name: c.names[c.time_at].clone(),
            value: time_text.clone(),
        })?;
        let value = metric_value(&fields[c.metric_at], (line, c.metric_at + 1, &c.names[c.metric_at]))?;
        let attributes: Vec<(String, String)> =
            c.attribute_at.iter().map(|&i| (c.names[i].clone(), fields[i].trim().to_string())).collect();
        let key = (time_text.clone(), attributes.iter().map(|(_, v)| v.clone()).collect());
        let at = *index.entry(key).or_insert_with(|| {
            runs.push(CsvRun { time_text, time_s, attributes, values: Vec::new(), line });
            runs.len() - 1
        });
        match value {
            Some(v) => runs[at].values.push(v),
            None => empty_cells += 1,
        }
    }
    runs.retain(|r| !r.values.is_empty());
    runs.sort_by(|a, b| a.time_s.total_cmp(&b.time_s).then(a.line.cmp(&b.line)));
    Ok((runs, empty_cells))
}

fn metric_value(field: &str, (line, column, name): (usize, usize, &str)) -> Result<Option<f64>, CsvError> {
    let v = field.trim();
    if v.is_empty() {
        return Ok(None);
    }
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(Some(x)),
        _ => Err(CsvError::NotANumber { line, column, name: name.to_string(), value: v.to_string() }),
    }
}

/// The records of `text` with the line each starts on: fields split at commas outside double
/// quotes, `""` inside quotes standing for one quote; CR LF and LF both end a record.
fn records(text: &str) -> impl Iterator<Item = Result<(usize, Vec<String>), CsvError>> + '_ {
    let mut chars = text.chars().peekable();
    let mut line = 1;
    std::iter::from_fn(move || {
        chars.peek()?;
        let start = line;
        let (mut fields, mut field, mut quoted) = (Vec::new(), String::new(), false);
        while let Some(c) = chars.next() {
            match c {
                '"' if quoted && chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' if quoted => quoted = false,
                '"' if field.trim().is_empty() => {
                    field.clear();
                    quoted = true
                }
                ',' if !quoted => fields.push(std::mem::take(&mut field)),
                '\n' => {
                    line += 1;
                    if !quoted {
                        break;
                    }
                    field.push('\n');
                }
                '\r' if !quoted && chars.peek() == Some(&'\n') => {}
                c => field.push(c),
            }
        }
        if quoted {
            return Some(Err(CsvError::OpenQuote { line: start }));
        }
        fields.push(field);
        Some(Ok((start, fields)))
    })
}

/// Seconds since the Unix epoch of a time written as a number (Unix seconds) or as ISO 8601:
/// `YYYY-MM-DD`, optionally `THH:MM[:SS[.fraction]]` (or a space for the T), optionally `Z`
/// or `±HH:MM` (UTC when no zone is written).
pub fn parse_time(text: &str) -> Option<f64> {
    let t = text.trim();
    if let Ok(x) = t.parse::<f64>() {
        return x.is_finite().then_some(x);
    }
    let (date, rest) = t.split_at(t.find(['T', ' ']).unwrap_or(t.len()));
    let mut d = date.splitn(3, '-');
    let (y, m, day): (i64, u32, u32) =
        (d.next()?.parse().ok()?, d.next()?.parse().ok()?, d.next()?.parse().ok()?);
    if !(1..=12).contains(&m) || day == 0 || day > days_in_month(y, m) || date.len() != 10 {
        return None;
    }
    let days = days_from_civil(y, m, day);
    let rest = rest.get(1..).unwrap_or("");
    let (clock, offset_s) = split_zone(rest)?;
    let secs = if clock.is_empty() { 0.0 } else { clock_seconds(clock)? };
    Some(days as f64 * 86400.0 + secs - offset_s)
}

fn split_zone(rest: &str) -> Option<(&str, f64)> {
    if let Some(c) = rest.strip_suffix('Z') {
        return Some((c, 0.0));
    }
    match rest.rfind(['+', '-']) {
        Some(i) if i > 0 => {
            let (clock, zone) = rest.split_at(i);
            let sign = if zone.starts_with('-') { -1.0 } else { 1.0 };
            let (h, m) = zone[1..].split_once(':').unwrap_or((&zone[1..], "0"));
            let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
            (h < 24 && m < 60).then_some((clock, sign * f64::from(h * 3600 + m * 60)))
        }
        _ => Some((rest, 0.0)),
    }
}

fn clock_seconds(clock: &str) -> Option<f64> {
    let mut p = clock.split(':');
    let h: u32 = p.next()?.parse().ok()?;
    let m: u32 = p.next()?.parse().ok()?;
    let s: f64 = p.next().map_or(Some(0.0), |s| s.parse().ok())?;
    if p.next().is_some() || h > 23 || m > 59 || !(0.0..61.0).contains(&s) {
        return None;
    }
    Some(f64::from(h * 3600 + m * 60) + s)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's civil algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
#[path = "csv_tests.rs"]
mod tests;
