//! racehorse-central: the central PostgreSQL database of a fleet (issue 30). `racehorse
//! load` brings JSON exports and whole SQLite stores into it (idempotently: runs keyed by
//! their UUID, cells by run, match key and repetition), with the campaign manifest that
//! records each host's outcome; `list`, `show`, `compare`, `report` and `export` read runs
//! back by copying them into an in-memory SQLite store through the import path, so every
//! renderer is reused unchanged. The schema and its migrations are in docs/central-store.md.

mod buckets;
pub mod bulk;
mod check;
pub mod connect;
mod copy;
pub mod error;
mod ledger;
pub mod load;
pub mod manifest;
pub mod prepare;
pub mod prune;
pub mod read;
pub mod schema;

pub use connect::{connect, is_central, redacted};
pub use error::CentralError;
pub use load::{Input, LoadStats, Loader};
pub use manifest::{parse_manifest, HostOutcome, Manifest, Outcome};
pub use read::{CentralRun, MissingHost};

#[cfg(test)]
mod pg_tests;
