//! History: one figure of one point over many runs, its change points and their ledger.

pub mod csv;
