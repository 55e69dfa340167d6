//! Fuzz target: the suite-file parser must return Ok or a located error, never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(e) = racehorse_runner::Suite::parse("fuzz.toml", text) {
            assert!(e.to_string().starts_with("fuzz.toml:"));
        }
    }
});
