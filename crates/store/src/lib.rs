//! racehorse-store: the SQLite store of runs and cells (versioned schema, one transaction per
//! finished cell so results survive crashes) and the JSON / CSV export formats.
//!
//! The schema and the export contracts are documented in docs/formats.md.

pub mod bisects;
mod cells;
pub mod error;
pub mod export;
pub mod files;
pub mod fleet;
pub mod health;
pub mod import;
mod import_merge;
pub mod import_stream;
pub mod ledger;
pub mod limits;
pub mod prune;
pub mod prune_store;
pub mod query;
mod resolve;
pub mod schema;
pub mod spill;
mod store;
pub mod tags;

pub use error::{Result, StoreError};
pub use export::{
    export_csv, export_doc, export_doc_with, export_json, history_parts, HistoryParts, FORMAT_VERSION,
};
pub use import::{parse_export, parse_export_value, ExportedRun, ImportError, Imported};
pub use query::RunFilter;
pub use schema::SCHEMA_VERSION;
pub use store::{default_path, NewRun, RunInfo, Store};

#[cfg(test)]
mod testutil;
