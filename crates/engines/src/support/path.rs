//! Finding programs on PATH: the one implementation lives in racehorse-machine (the
//! environment capture finds compilers with it too); the engines use it from here.

pub use racehorse_machine::path::*;
