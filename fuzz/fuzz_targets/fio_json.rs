//! Fuzz target: the fio JSON report parser must return Ok or an error, never panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = racehorse_engines::adapters::fio::json::parse(text);
    }
});
