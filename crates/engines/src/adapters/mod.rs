//! Adapters: engines that run an external tool and store its results in our form (the real
//! fio, dbench). An adapter imports only the contract and `crate::support`, never another
//! engine: what it shares with its native counterpart (fio's option table is diskio's) lives
//! in `support`. The `sysbench` and `iperf3` adapters stay inside their engine families
//! (`oltp::sysbench`, `net::iperf3`): they run their native engine's cells (option parsing,
//! the database or peer the cell sets up), which are that engine's own, not shared support.

pub mod dbench;
pub mod fio;
