//! PostgreSQL for the `oltp` and `analytics` engines: a protocol-3.0 client written here (no
//! client crate offline), the password methods it needs, and throw-away clusters.

pub mod auth;
pub mod client;
pub mod cluster;
pub mod hash;
pub mod memcg;
pub mod session;
#[cfg(test)]
pub(crate) mod tests;
pub mod wire;
