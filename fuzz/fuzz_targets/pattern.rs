//! Fuzz target: output-extraction patterns and JSON paths must compile or return an error, never
//! panic; a compiled pattern must scan any text without panicking, a value it finds must be a
//! piece of that text, and a match from the middle of the text must lie inside it.
#![no_main]
use libfuzzer_sys::fuzz_target;
use racehorse_engines::command::{extract::JsonPath, pattern::Pattern};

fuzz_target!(|data: &[u8]| {
    let input = String::from_utf8_lossy(data);
    let (pattern, text) = input.split_once('\n').unwrap_or((&input, ""));
    if let Ok(p) = Pattern::new(pattern) {
        if let Ok(value) = p.last_value(text) {
            assert!(text.contains(value));
        }
        if let Some(caps) = p.captures_at(text, text.len() / 2) {
            assert!(caps.iter().flatten().all(|&(s, e)| s <= e && e <= text.len()));
        }
    }
    let _ = JsonPath::new(&input);
});
