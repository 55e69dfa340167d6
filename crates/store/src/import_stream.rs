//! Reading a file for `racehorse import` (a run's export or a kept cell) straight from the
//! disk, a cell at a time: only one cell is ever held as a JSON tree, the rest as the
//! compact results they become, and the file's text not at all (issue 47, case 8: import
//! held about 19 times the export's size in memory, text and tree and results at once).
//! `racehorse load` reads the same way but takes each cell as it is read
//! ([`read_export_each`]), so that nothing of the cells is kept but what it makes of them.

use crate::import::{assemble, cell, check_format, field, ExportedRun, ImportError};
use crate::spill::{read_kept, KeptCell, SPILL_FORMAT};
use racehorse_core::CellResult;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value as Json};
use std::io::Read;
use std::path::Path;

/// What a file to import holds.
#[derive(Debug)]
pub enum ImportFile {
    /// A run's JSON export.
    Export(Box<ExportedRun>),
    /// A cell a run kept outside its store.
    Kept(Box<KeptCell>),
}

/// What is done with each cell as it is read: its position, its JSON and what it reads as.
/// An `Err` refuses the cell (the file is then refused, naming it).
pub type EachCell<'a> = dyn FnMut(usize, Json, CellResult) -> Result<(), String> + 'a;

/// How the cells of an export were read: how many, and the first that is not one.
#[derive(Default)]
struct CellsRead {
    without_histogram: usize,
    error: Option<ImportError>,
}

/// Every field of the document but `cells`, kept as JSON; the cells went to `each`.
struct Document {
    fields: Json,
    cells: Option<CellsRead>,
}

struct DocumentVisitor<'e, 'a> {
    each: &'e mut EachCell<'a>,
}

impl<'de> Visitor<'de> for DocumentVisitor<'_, '_> {
    type Value = Document;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object (a racehorse export or kept cell)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Document, A::Error> {
        let mut fields = Map::new();
        let mut cells = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "cells" {
                cells = Some(map.next_value_seed(CellsVisitor { each: &mut *self.each })?);
            } else {
                fields.insert(key, map.next_value()?);
            }
        }
        Ok(Document { fields: Json::Object(fields), cells })
    }
}

struct CellsVisitor<'e, 'a> {
    each: &'e mut EachCell<'a>,
}

impl<'de> DeserializeSeed<'de> for CellsVisitor<'_, '_> {
    type Value = CellsRead;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<CellsRead, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for CellsVisitor<'_, '_> {
    type Value = CellsRead;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of cells")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<CellsRead, A::Error> {
        let mut out = CellsRead::default();
        for i in 0.. {
            if out.error.is_some() {
                // The first bad cell is the answer; the rest is only read past.
                if seq.next_element::<IgnoredAny>()?.is_none() {
                    break;
                }
                continue;
            }
            let Some(c) = seq.next_element::<Json>()? else { break };
            let taken = cell(&c, &mut out.without_histogram).map_err(|e| e.to_string());
            if let Err(why) = taken.and_then(|r| (self.each)(i, c, r)) {
                out.error = Some(field(&format!("cells[{i}]"), why));
            }
        }
        Ok(out)
    }
}

/// Reads an import file from `reader`: an export (checked as [`crate::parse_export`]
/// checks it) or a kept cell (see [`read_kept`]).
pub fn read_import(reader: impl Read) -> Result<ImportFile, ImportError> {
    let mut cells = Vec::new();
    let (read, _) = read_export_each(reader, &mut |_, _, c| {
        cells.push(c);
        Ok(())
    })?;
    Ok(match read {
        ImportFile::Export(mut run) => {
            run.cells = cells;
            // The limits of each cell, as `parse_export` checks them.
            let problem = run
                .cells
                .iter()
                .enumerate()
                .find_map(|(i, c)| crate::limits::cell_problem(c).map(|w| (i, w)));
            if let Some((i, why)) = problem {
                return Err(field(&format!("cells[{i}]"), why));
            }
            ImportFile::Export(run)
        }
        kept => kept,
    })
}

/// Reads an export (or a kept cell) from `reader` as [`read_import`] does, but hands each
/// cell to `each` as it is read instead of keeping it: the run comes back without cells,
/// with every other field of the document as JSON (`run`, `format`, …), and the limits on texts are the caller's to check for each cell (as `each` sees it,
/// `crate::limits::cell_problem`). Any cell read before the document turns out not to be an
/// export of a known version has been given to `each`: the caller drops what it made of
/// them on an error.
pub fn read_export_each(
    reader: impl Read,
    each: &mut EachCell<'_>,
) -> Result<(ImportFile, Json), ImportError> {
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(1 << 16, reader));
    let doc = de.deserialize_map(DocumentVisitor { each }).and_then(|d| de.end().map(|_| d)).map_err(
        |e| match e.classify() {
            serde_json::error::Category::Data => field("(document)", e.to_string()),
            _ => field("(document)", format!("not JSON: {e}")),
        },
    )?;
    if doc.fields["format"] == SPILL_FORMAT {
        let kept = read_kept(&doc.fields).map_err(|why| field("(kept cell)", why))?;
        return Ok((ImportFile::Kept(Box::new(kept)), doc.fields));
    }
    if doc.fields["format"] != crate::export::FORMAT_NAME {
        return Err(ImportError::Field {
            field: "(document)".into(),
            why: format!(
                "neither a run's JSON export (format \"{}\") nor a kept cell (format \"{SPILL_FORMAT}\"): its \
                 \"format\" is {}",
                crate::export::FORMAT_NAME,
                doc.fields["format"]
            ),
        });
    }
    check_format(&doc.fields)?;
    let read = doc.cells.ok_or_else(|| field("cells", "missing or not a list"))?;
    if let Some(e) = read.error {
        return Err(e);
    }
    let run = assemble(&doc.fields, Vec::new(), read.without_histogram)?;
    Ok((ImportFile::Export(Box::new(run)), doc.fields))
}

/// [`read_import`] of the file at `path`; the error names the file.
pub fn read_import_file(path: &Path) -> Result<ImportFile, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    read_import(file).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{full_cell, new_run};
    use crate::Store;

    fn export_text() -> String {
        let s = Store::open_in_memory().unwrap();
        let id = s.create_run(&new_run("streamed")).unwrap();
        for i in 0..3 {
            s.insert_cell(id, i, &full_cell(i as u32 + 1)).unwrap();
        }
        let info = s.run(id).unwrap().unwrap();
        let parts = crate::history_parts(&s, &info).unwrap();
        crate::export_doc_with(&info, &parts, &s.run_cells(id).unwrap()).to_string()
    }

    #[test]
    fn a_streamed_export_reads_as_the_whole_document_does() {
        let text = export_text();
        let ImportFile::Export(streamed) = read_import(text.as_bytes()).unwrap() else { panic!("an export") };
        assert_eq!(*streamed, crate::parse_export(&text).unwrap());
    }

    #[test]
    fn bad_documents_are_named_as_before() {
        let e =
            read_import(&b"{\"format\": \"racehorse-run\", \"version\": 9, \"cells\": []}"[..]).unwrap_err();
        assert!(matches!(e, ImportError::UnknownVersion { .. }), "{e}");
        let e = read_import(&b"{\"format\": \"other\"}"[..]).unwrap_err();
        assert!(e.to_string().contains("neither a run's JSON export"), "{e}");
        let e = read_import(&b"[1, 2]"[..]).unwrap_err();
        assert!(e.to_string().contains("expected a JSON object"), "{e}");
        let e = read_import(&b"{\"format\": "[..]).unwrap_err();
        assert!(e.to_string().contains("not JSON"), "{e}");
        let mut doc: Json = serde_json::from_str(&export_text()).unwrap();
        doc["cells"][1]["unit"] = Json::from("furlongs");
        let e = read_import(doc.to_string().as_bytes()).unwrap_err();
        assert_eq!(e.to_string(), "cells[1]: unit: unknown");
        doc["cells"] = Json::from(5);
        let e = read_import(doc.to_string().as_bytes()).unwrap_err();
        assert!(e.to_string().contains("expected a list of cells"), "{e}");
    }
}
