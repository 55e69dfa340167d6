//! What `load` writes, made once per run before anything is written: an export file is read
//! in one pass, a cell at a time, each cell checked as `import` checks it and turned straight
//! into its row of COPY's text format (its JSON compact, without NUL characters, and with
//! its latency histograms' buckets moved into `latency_buckets`, see `buckets`); the rows
//! of a run are one buffer. Its run's uuid and the load time are added as each row is sent.

use crate::error::CentralError;
use racehorse_store::import_stream::{read_export_each, ImportFile};
use racehorse_store::{parse_export_value, ExportedRun, ImportError, Store, FORMAT_VERSION};
use serde_json::Value as Json;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The columns of a prepared row, in order; COPY's column list.
pub(crate) const ROW_COLUMNS: &str = "match_key, rep, dup, idx, workload, variant, status, unit, \
     throughput_per_s, cpu_total_per_unit_s, cell, latency_buckets, run_uuid, loaded_at_unix_s";

/// A cell's key in `racehorse.cells` besides its run, and where its row ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CellRow {
    pub match_key: String,
    pub rep: i64,
    /// Its ordinal among the cells of the run with the same match key and repetition.
    pub dup: i64,
    end: usize,
}

/// One run, read and checked, ready to write.
#[derive(Debug)]
pub struct PreparedRun {
    /// The run (its cells are in `rows`, not here).
    pub(crate) run: ExportedRun,
    pub(crate) suite: Option<Json>,
    pub(crate) env: Option<Json>,
    pub(crate) exclusivity: Option<Json>,
    pub(crate) cells: Vec<CellRow>,
    /// Each cell's row without its last two fields (run uuid, load time) and line end.
    rows: Vec<u8>,
    /// The file it came from, for messages.
    pub(crate) origin: PathBuf,
}

impl PreparedRun {
    /// How many cells the run has.
    pub fn cell_count(&self) -> usize {
        self.cells.len()
    }

    /// About how much memory it holds.
    pub fn size_bytes(&self) -> usize {
        self.rows.len() + self.cells.iter().map(|c| c.match_key.len() + 48).sum::<usize>()
    }

    /// Appends the rows of the cells `keep` selects to `buf`, ready for COPY; returns how many.
    pub(crate) fn rows_into(
        &self,
        buf: &mut Vec<u8>,
        now_unix_s: i64,
        keep: impl Fn(&CellRow) -> bool,
    ) -> u64 {
        let tail = format!("\t{}\t{now_unix_s}\n", self.run.uuid);
        let mut start = 0;
        let mut n = 0;
        for c in &self.cells {
            if keep(c) {
                buf.extend_from_slice(&self.rows[start..c.end]);
                buf.extend_from_slice(tail.as_bytes());
                n += 1;
            }
            start = c.end;
        }
        n
    }
}

/// One thing to load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A `racehorse export RUN --format json` file.
    Export(PathBuf),
    /// A whole SQLite store: every run in it.
    Store(PathBuf),
}

impl Input {
    /// What `path` holds: a SQLite store (by its first bytes), else an export, which
    /// [`crate::prepare::prepare_file`] reads and checks (and refuses when it is not one).
    pub fn classify(path: &Path) -> Result<Input, CentralError> {
        let mut file = std::fs::File::open(path).map_err(|e| input_error(path, e.to_string()))?;
        let mut head = Vec::with_capacity(16);
        (&mut file).take(16).read_to_end(&mut head).map_err(|e| input_error(path, e.to_string()))?;
        if head.as_slice() == b"SQLite format 3\0" {
            return Ok(Input::Store(path.to_path_buf()));
        }
        Ok(Input::Export(path.to_path_buf()))
    }
}

fn input_error(path: &Path, why: impl Into<String>) -> CentralError {
    CentralError::Input { path: path.to_path_buf(), why: why.into() }
}

/// What an export's problem means for `load` (the reader's words are `import`'s).
fn load_message(e: ImportError) -> String {
    match e {
        ImportError::UnknownVersion { found } => format!(
            "export version {found} is not known to this racehorse (it loads version {FORMAT_VERSION}); \
             load it with the racehorse that wrote it, or a newer one"
        ),
        ImportError::Field { field, why } if field == "(document)" && why.starts_with("not JSON") => {
            format!("neither a SQLite store nor a JSON export ({why})")
        }
        other => other.to_string(),
    }
}

/// The rows of a run's cells, made as the cells are read.
#[derive(Default)]
struct Rows {
    seen: HashMap<(String, u64), i64>,
    cells: Vec<CellRow>,
    rows: Vec<u8>,
}

impl Rows {
    fn push(&mut self, idx: usize, mut c: Json) {
        let match_key = c["match_key"].as_str().unwrap_or_default().to_string();
        let rep = c["rep"].as_u64().unwrap_or_default();
        let dup = self.seen.entry((match_key.clone(), rep)).and_modify(|d| *d += 1).or_insert(0);
        let dup = *dup;
        let buckets = crate::buckets::take(&mut c);
        let b = &mut self.rows;
        escaped(b, &match_key);
        b.extend_from_slice(format!("\t{rep}\t{dup}\t{idx}").as_bytes());
        for f in ["workload", "variant", "status", "unit"] {
            b.push(b'\t');
            escaped(b, c[f].as_str().unwrap_or_default());
        }
        for n in [&c["throughput_per_s"], &c["cpu_per_unit"]["total_s"]] {
            b.push(b'\t');
            match n.as_f64().filter(|x| x.is_finite()) {
                Some(x) => b.extend_from_slice(x.to_string().as_bytes()),
                None => b.extend_from_slice(b"\\N"),
            }
        }
        b.push(b'\t');
        let text = c.to_string();
        if text.contains("\\u0000") {
            escaped(b, &without_nul(&c).to_string());
        } else {
            escaped(b, &text);
        }
        b.push(b'\t');
        match buckets {
            None => b.extend_from_slice(b"\\N"),
            Some(bytes) => {
                // bytea's hex form, its backslash doubled for COPY.
                b.extend_from_slice(b"\\\\x");
                for byte in bytes {
                    b.extend_from_slice(format!("{byte:02x}").as_bytes());
                }
            }
        }
        let rep = i64::try_from(rep).unwrap_or(i64::MAX);
        self.cells.push(CellRow { match_key, rep, dup, end: b.len() });
    }

    fn into_run(self, run: ExportedRun, fields: &Json, origin: &Path) -> PreparedRun {
        let embedded = |v: &Json| (!v.is_null()).then(|| without_nul(v));
        let r = &fields["run"];
        PreparedRun {
            run: ExportedRun { cells: Vec::new(), ..run },
            suite: embedded(&r["suite"]),
            env: embedded(&r["env"]),
            exclusivity: embedded(&r["exclusivity"]),
            cells: self.cells,
            rows: self.rows,
            origin: origin.to_path_buf(),
        }
    }
}

/// Reads and checks the export at `path` (as `import` checks it) and makes its rows.
pub fn prepare_file(path: &Path) -> Result<PreparedRun, CentralError> {
    let file = std::fs::File::open(path).map_err(|e| input_error(path, e.to_string()))?;
    let mut rows = Rows::default();
    let read = read_export_each(file, &mut |i, c, r| {
        if let Some(why) = racehorse_store::limits::cell_problem(&r) {
            return Err(why);
        }
        rows.push(i, c);
        Ok(())
    });
    match read {
        Ok((ImportFile::Export(run), fields)) => Ok(rows.into_run(*run, &fields, path)),
        Ok((ImportFile::Kept(_), _)) => Err(input_error(
            path,
            "a kept cell, not an export: load it into its store with `racehorse import`",
        )),
        Err(e) => Err(input_error(path, load_message(e))),
    }
}

/// Calls `f` with each run of `input` read and checked, until `f` says stop (false).
pub(crate) fn runs_of(
    input: &Input,
    f: &mut dyn FnMut(PreparedRun) -> Result<bool, CentralError>,
) -> Result<(), CentralError> {
    match input {
        Input::Export(path) => {
            f(prepare_file(path)?)?;
        }
        Input::Store(path) => {
            let bad =
                |e: &dyn std::fmt::Display| CentralError::Input { path: path.clone(), why: e.to_string() };
            let store = Store::open_read_only(path).map_err(|e| bad(&e))?;
            let mut runs = store.list_runs()?;
            runs.reverse();
            for run in runs {
                let cells = store.run_cells(run.id)?;
                let parts = racehorse_store::history_parts(&store, &run)?;
                let doc = racehorse_store::export_doc_with(&run, &parts, &cells);
                if !f(prepare_doc(&doc, path)?)? {
                    break;
                }
            }
        }
    }
    Ok(())
}

/// Checks an export document already in memory (`origin` names it) and makes its rows.
pub fn prepare_doc(doc: &Json, origin: &Path) -> Result<PreparedRun, CentralError> {
    let run = parse_export_value(doc).map_err(|e| input_error(origin, load_message(e)))?;
    let mut rows = Rows::default();
    for (i, c) in doc["cells"].as_array().map(Vec::as_slice).unwrap_or_default().iter().enumerate() {
        rows.push(i, c.clone());
    }
    Ok(rows.into_run(run, doc, origin))
}

/// `s` as a field of COPY's text format: backslash, tab, newline and return escaped.
fn escaped(buf: &mut Vec<u8>, s: &str) {
    if !s.bytes().any(|b| matches!(b, b'\\' | b'\t' | b'\n' | b'\r')) {
        buf.extend_from_slice(s.as_bytes());
        return;
    }
    for &b in s.as_bytes() {
        match b {
            b'\\' => buf.extend_from_slice(b"\\\\"),
            b'\t' => buf.extend_from_slice(b"\\t"),
            b'\n' => buf.extend_from_slice(b"\\n"),
            b'\r' => buf.extend_from_slice(b"\\r"),
            _ => buf.push(b),
        }
    }
}

/// `v` with NUL characters in its strings replaced by U+FFFD (jsonb cannot hold them).
pub(crate) fn without_nul(v: &Json) -> Json {
    match v {
        Json::String(s) if s.contains('\0') => Json::String(s.replace('\0', "\u{fffd}")),
        Json::Array(a) => Json::Array(a.iter().map(without_nul).collect()),
        Json::Object(o) => {
            Json::Object(o.iter().map(|(k, v)| (k.replace('\0', "\u{fffd}"), without_nul(v))).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_escape_what_copy_reads_specially() {
        let mut buf = Vec::new();
        escaped(&mut buf, "a\tb\\c\nd\re");
        escaped(&mut buf, "plain");
        assert_eq!(String::from_utf8(buf).unwrap(), "a\\tb\\\\c\\nd\\replain");
    }

    #[test]
    fn nul_characters_are_replaced() {
        let v = json!({"e": "x\u{0}y", "l": [1, "\u{0}"]});
        assert_eq!(without_nul(&v), json!({"e": "x\u{fffd}y", "l": [1, "\u{fffd}"]}));
    }

    #[test]
    fn rows_number_repeated_keys_and_keep_only_what_is_asked() {
        let mut rows = Rows::default();
        let c = |rep: u64| {
            json!({"match_key": "k\tx", "rep": rep, "workload": "null", "throughput_per_s": 2.5,
                                   "cpu_per_unit": null, "error": "a\u{0}b"})
        };
        for (i, rep) in [1, 1, 2].into_iter().enumerate() {
            rows.push(i, c(rep));
        }
        let dups: Vec<(i64, i64)> = rows.cells.iter().map(|c| (c.rep, c.dup)).collect();
        assert_eq!(dups, [(1, 0), (1, 1), (2, 0)]);
        let run = ExportedRun {
            run: Default::default(),
            source_id: 1,
            uuid: "u".into(),
            uuid_given: true,
            started_at_unix_s: 0,
            finished_at_unix_s: None,
            status: racehorse_core::RunStatus::Complete,
            cells: Vec::new(),
            latencies_without_histogram: 0,
            change_points: Vec::new(),
        };
        let prepared = rows.into_run(run, &json!({"run": {}}), Path::new("x.json"));
        let mut buf = Vec::new();
        assert_eq!(prepared.rows_into(&mut buf, 7, |c| c.dup == 1), 1);
        let line = String::from_utf8(buf).unwrap();
        let fields: Vec<&str> = line.trim_end().split('\t').collect();
        assert_eq!(fields.len(), ROW_COLUMNS.split(',').count(), "{line}");
        assert_eq!(&fields[..4], ["k\\tx", "1", "1", "1"]);
        assert_eq!(
            (fields[8], fields[9], fields[11], fields[12], fields[13]),
            ("2.5", "\\N", "\\N", "u", "7")
        );
        assert!(fields[10].contains("a\u{fffd}b"), "{line}");
    }
}
