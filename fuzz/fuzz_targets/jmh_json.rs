//! Fuzz target: the JMH JSON result parser, and the units taken from what it accepts, must
//! return Ok or an error, never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(results) = racehorse_engines::adapters::jmh::json::parse(text) {
            for r in &results {
                let _ = racehorse_engines::adapters::jmh::json::normalise(r.primary.score, &r.primary.unit);
                let _ = r.primary.fork_mean(r.primary.raw.len().saturating_sub(1));
            }
        }
    }
});
