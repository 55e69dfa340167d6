//! Fuzz target: the parsers of perf's output (`perf script` folding and its storage bound,
//! `perf stat -x,` CSV, `perf report` lines) must take any text without panicking, and the
//! folded stacks must account for every sample.
#![no_main]
use libfuzzer_sys::fuzz_target;
use racehorse_runner::profile::{bounded, fold_text, parse_csv, parse_lines, HARDWARE};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let folded = fold_text(&text);
    assert_eq!(folded.stacks.values().sum::<u64>(), folded.samples);
    let (kept, dropped) = bounded(&folded);
    assert_eq!(kept.iter().map(|s| s.samples).sum::<u64>() + dropped, folded.samples);
    let _ = parse_csv(&text, &HARDWARE);
    let _ = parse_lines(&text, true);
});
