//! Adapters: engines that run an external tool and store its results in our form (the real
//! fio, dbench, iperf3, sysbench, and a user's JMH benchmarks jar). An adapter imports only the contract and
//! `crate::support`, never another engine: what it shares with its native counterpart lives
//! in `support` (fio's option table is diskio's, `support::disk_options`; iperf3 runs net's
//! cells, `support::net_options`; sysbench runs oltp's, `support::oltp_options`).

pub(crate) mod dbench;
pub mod fio;
pub(crate) mod iperf3;
pub mod jmh;
pub(crate) mod sysbench;
