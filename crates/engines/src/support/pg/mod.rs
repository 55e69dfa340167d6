//! PostgreSQL for the database engines (`oltp`, its `sysbench` adapter, `analytics`): a lean
//! protocol-3.0 client written here (its client CPU per transaction is below sysbench's libpq,
//! see BENCHMARKS.md), its password methods on RustCrypto's digests, TLS with rustls, Unix
//! sockets, and throw-away clusters with their memory cgroup. Nothing here knows a workload's
//! tables.

pub mod auth;
pub mod client;
pub mod cluster;
pub mod config;
pub mod memcg;
#[cfg(test)]
pub(crate) mod tests;
pub mod tls;
pub mod transport;
#[cfg(test)]
mod transport_tests;
pub mod wire;
