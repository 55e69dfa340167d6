//! racehorse-pg: PostgreSQL for the database engines (`oltp`, its `sysbench` adapter,
//! `analytics`) and the fleet's central store: a lean protocol-3.0 client written here (its
//! client CPU per transaction is below sysbench's libpq, see BENCHMARKS.md), its password
//! methods on `postgres-protocol`'s authentication module, TLS with rustls, Unix sockets, libpq's DSN forms, and
//! throw-away clusters. Nothing here knows a workload's tables or racehorse's engines.

mod auth;
mod client;
mod cluster;
mod config;
#[cfg(test)]
mod tests;
pub mod tls;
mod transport;
#[cfg(test)]
mod transport_tests;
mod wire;

pub use client::{Outcome, PgConn, PgError};
pub use cluster::{bin_dir, Cluster, ClusterError, ClusterOptions};
pub use config::{PgConfig, SslMode};
pub use wire::{Param, ServerError};
