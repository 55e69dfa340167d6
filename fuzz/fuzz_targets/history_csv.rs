//! Fuzz target: `history --csv`'s reader must return a series or an error naming where, never
//! panic; a series it returns must analyse without panicking.
#![no_main]
use libfuzzer_sys::fuzz_target;
use racehorse_report::history::csv::{parse, CsvRequest};
use racehorse_report::history::{analyse, HistoryOptions, Series};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let attrs = vec!["b".to_string()];
    for metric in ["v", "b"] {
        let req = CsvRequest { metric, time_column: Some("time"), attributes: &attrs };
        if let Ok(csv) = parse(text, &req) {
            let series = Series::from_csv(&csv, "fuzz", racehorse_core::Direction::HigherIsBetter);
            let mut opts = HistoryOptions::default();
            opts.detect.permutations = 19;
            opts.detect.alpha = 0.05;
            let _ = analyse(series, &opts);
        }
    }
});
