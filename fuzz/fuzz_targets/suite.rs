//! Fuzz target: the suite-file parser must return Ok or a located error, never panic; a
//! suite that parses must plan (or refuse with an error) without a panic, and its estimated
//! duration must add up.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        match racehorse_runner::Suite::parse("fuzz.toml", text) {
            Err(e) => assert!(e.to_string().starts_with("fuzz.toml:")),
            Ok(suite) => {
                if let Ok(plan) = racehorse_runner::Plan::expand(&suite, 4, 2) {
                    let _ = plan.eta();
                }
            }
        }
    }
});
