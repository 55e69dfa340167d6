//! PostgreSQL for the database engines (`oltp`, its `sysbench` adapter, `analytics`): a
//! protocol-3.0 client written here (no client crate offline), the password methods it needs,
//! and throw-away clusters with their memory cgroup. Nothing here knows a workload's tables.

pub mod auth;
pub mod client;
pub mod cluster;
pub mod hash;
pub mod memcg;
#[cfg(test)]
pub(crate) mod tests;
pub mod wire;
