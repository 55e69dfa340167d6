//! The engines' deterministic generator: the one SplitMix64 of `racehorse_core::rng`, here
//! under the support layer's name so that engines draw from `crate::support::rng`.

pub use racehorse_core::rng::SplitMix64;
