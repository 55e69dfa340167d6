//! Shared support of the engines, the layer between the contract (`lib.rs`, `options`,
//! `control`, `recorder`, `error`) and the engines. Engines and adapters import from here and
//! from the contract, never from one another (a test, `crate::layers`, keeps it so); code
//! here imports only the contract and other support modules.

pub mod direct_io;
pub mod disk_layout;
pub mod disk_options;
pub mod fd_limit;
pub mod fiemap;
pub mod forked;
pub mod jdk;
pub mod net_options;
pub mod oltp_options;
pub mod pace;
pub mod path;
pub mod pg_server;
pub mod proc_tree;
pub mod residency;
pub mod rng;
pub mod sqlite;
