//! The racehorse binary.
fn main() {}
