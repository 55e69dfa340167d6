//! Tests of the `iperf3` adapter: its report lines parse, and (with the real iperf3 installed)
//! its streams are stored like `net`'s, rr is refused and a missing server fails the cell.

use super::*;
use crate::testutil::cell_ctx;
use crate::testutil::NoHooks;
use crate::{RealClock, Totals};
use racehorse_core::Value;
use std::sync::Arc;

fn ctx(opts: &[(&str, Value)]) -> CellContext {
    cell_ctx(&Iperf3, &std::env::temp_dir(), 2, opts)
}

fn s(v: &str) -> Value {
    Value::Str(v.into())
}

/// True when iperf3 can run here; says why not otherwise (and insists under
/// RACEHORSE_REQUIRE_TOOLS).
fn have_iperf3() -> bool {
    if crate::ready(&Iperf3, false).is_ok() {
        return true;
    }
    racehorse_testkit::skip!("iperf3 is not installed (apt-get install iperf3)");
    assert!(std::env::var_os("RACEHORSE_REQUIRE_TOOLS").is_none(), "iperf3 is required here");
    false
}

fn run_iperf3(c: &CellContext, warmup_ms: u64, runtime_ms: u64) -> (Result<(), EngineError>, Totals) {
    let rec = Recorder::new();
    let ctl = Control::new(
        Duration::from_millis(warmup_ms),
        Duration::from_millis(runtime_ms),
        Arc::new(RealClock::default()),
        Box::new(NoHooks),
        Default::default(),
    );
    let res = Iperf3.prepare(c).and_then(|mut cell| {
        let r = cell.run(&ctl, &rec);
        cell.cleanup().and(r)
    });
    (res, rec.totals())
}

#[test]
fn iperf3_streams_are_stored_like_ours() {
    if !have_iperf3() {
        return;
    }
    for (mode, warmup_ms) in [("stream-write", 0), ("stream-read", 1000)] {
        let c = ctx(&[("mode", s(mode)), ("connections", Value::Int(2))]);
        let (res, t) = run_iperf3(&c, warmup_ms, 1000);
        res.unwrap_or_else(|e| panic!("{mode}: {e}"));
        let (moved, other) = if mode == "stream-write" {
            (t.bytes_written, t.bytes_read)
        } else {
            (t.bytes_read, t.bytes_written)
        };
        assert!(moved > 1_000_000 && other == 0, "{mode}: {moved} / {other}");
        assert_eq!(t.units as u64, moved);
        assert!(t.extra["iperf3_bits_per_s"] > 0.0);
        assert!(
            t.extra["client_cpu_us_per_mb"] > 0.0 && t.extra["peer_cpu_us_per_mb"] > 0.0,
            "{:?}",
            t.extra
        );
        assert_eq!(t.workload_cpu.method, racehorse_core::CpuMethod::Children);
    }
}

#[test]
fn iperf3_refuses_rr_and_reports_a_missing_server() {
    let e = Iperf3.validate(&ctx(&[])).unwrap_err();
    assert!(matches!(e, EngineError::Usage(_)) && e.to_string().contains("streams only"), "{e}");
    if !have_iperf3() {
        return;
    }
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    drop(l);
    let t0 = Instant::now();
    let (res, _) = run_iperf3(&ctx(&[("mode", s("stream-write")), ("peer", s(&addr))]), 0, 500);
    let e = res.unwrap_err().to_string();
    assert!(e.contains("iperf3"), "{e}");
    assert!(t0.elapsed() < Duration::from_secs(5));
}

#[test]
fn report_lines_parse() {
    let l = "[  5]   0.00-0.10   sec   288 MBytes  9670831 Kbits/sec    0   1023 KBytes       ";
    assert_eq!(parse_line(l), (false, Line::Interval { end_s: 0.10, omitted: false }));
    let l = "[SUM]   0.90-1.00   sec   261 MBytes  8748496 Kbits/sec    6             (omitted)";
    assert_eq!(parse_line(l), (true, Line::Interval { end_s: 1.0, omitted: true }));
    let l = "[SUM]   0.00-1.01   sec  1.31 GBytes  11122028 Kbits/sec   19             sender";
    assert_eq!(parse_line(l), (true, Line::Summary { bits_per_s: 11_122_028_000.0, sender: true }));
    let l = "[  7]   0.00-1.01   sec   663 MBytes  5516732 Kbits/sec                  receiver";
    assert_eq!(parse_line(l), (false, Line::Summary { bits_per_s: 5_516_732_000.0, sender: false }));
    for other in
        ["Connecting to host 127.0.0.1, port 5301", "[ ID] Interval  Transfer  Bitrate", "", "[", "- - -"]
    {
        assert_eq!(parse_line(other).1, Line::Other, "{other}");
    }
}
