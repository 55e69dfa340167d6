//! Tests of the `net` engine through its Engine interface: exact counts for rr and both
//! streams on IPv4 and IPv6 loopback, and clean, prompt failures for an unreachable peer, a
//! wrong token and a peer that goes away mid-run.

use super::*;
use crate::testutil::cell_ctx;
use crate::testutil::NoHooks;
use crate::{RealClock, Totals};
use racehorse_core::Value;
use std::sync::Arc;
use std::time::Instant;

fn ctx(opts: &[(&str, Value)]) -> CellContext {
    cell_ctx(&Net, &std::env::temp_dir(), 2, opts)
}

fn control(runtime_ms: u64) -> Control {
    Control::new(
        Duration::from_millis(50),
        Duration::from_millis(runtime_ms),
        Arc::new(RealClock::default()),
        Box::new(NoHooks),
        Default::default(),
    )
}

fn run_cell(c: &CellContext, runtime_ms: u64) -> (Result<(), EngineError>, Totals) {
    let rec = Recorder::new();
    let res = Net.prepare(c).and_then(|mut cell| {
        let r = cell.run(&control(runtime_ms), &rec);
        cell.cleanup().and(r)
    });
    (res, rec.totals())
}

fn s(v: &str) -> Value {
    Value::Str(v.into())
}

#[test]
fn rr_counts_whole_transactions_with_both_ends_cpu() {
    let c = ctx(&[
        ("request", Value::Int(200)),
        ("response", Value::Int(30 << 10)),
        ("connections", Value::Int(3)),
    ]);
    assert_eq!(Net.unit_for(&c.spec), WorkUnit::Transactions);
    let (res, t) = run_cell(&c, 300);
    res.expect("rr cell");
    assert!(t.units >= 10.0, "{} transactions", t.units);
    assert_eq!(t.bytes_written, t.units as u64 * 200, "requests are written whole");
    assert_eq!(t.bytes_read, t.units as u64 * 30 * 1024, "responses are read whole (30k = 30720)");
    assert_eq!(t.latencies["rr"].count, t.units as u64);
    assert_eq!(t.extra["n_tx"], t.units);
    assert!(t.extra["client_cpu_us_per_tx"] > 0.0 && t.extra["peer_cpu_us_per_tx"] > 0.0, "{:?}", t.extra);
    let both = t.extra["client_to_peer_bytes_per_s"] + t.extra["peer_to_client_bytes_per_s"];
    assert!((t.extra["uperf_bits_per_s"] - both * 8.0).abs() < 1.0);
}

#[test]
fn streams_count_bytes_in_their_direction_on_both_families() {
    let v6 = std::net::TcpListener::bind("[::1]:0").is_ok();
    for (mode, family) in [("stream-write", "ipv4"), ("stream-read", "ipv4"), ("stream-read", "ipv6")] {
        if family == "ipv6" && !v6 {
            eprintln!("skipping IPv6: ::1 cannot be bound here");
            continue;
        }
        let c = ctx(&[("mode", s(mode)), ("family", s(family)), ("connections", Value::Int(2))]);
        assert_eq!(Net.unit_for(&c.spec), WorkUnit::Bytes);
        let (res, t) = run_cell(&c, 200);
        res.unwrap_or_else(|e| panic!("{mode} {family}: {e}"));
        let moved = if mode == "stream-write" { t.bytes_written } else { t.bytes_read };
        let other = if mode == "stream-write" { t.bytes_read } else { t.bytes_written };
        assert!(moved > 0 && other == 0, "{mode}: {moved} one way, {other} the other");
        assert_eq!(t.units as u64, moved);
        assert_eq!(moved % (30 * 1024), 0, "whole 30k messages");
        assert_eq!(t.extra["n_msg"] as u64 * 30 * 1024, moved);
    }
}

#[test]
fn unreachable_peer_fails_fast_with_advice() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    let t0 = Instant::now();
    let (res, _) = run_cell(&ctx(&[("peer", s(&addr.to_string()))]), 200);
    let e = res.unwrap_err().to_string();
    assert!(e.contains("cannot connect") && e.contains("racehorse serve"), "{e}");
    assert!(t0.elapsed() < Duration::from_secs(3));
    let bad = Net.validate(&ctx(&[("peer", s("no-port-here"))])).unwrap_err();
    assert!(matches!(bad, EngineError::Usage(_)), "{bad}");
}

#[test]
fn wrong_token_fails_the_cell() {
    let peer = Peer::start(
        "127.0.0.1:0".parse().unwrap(),
        PeerConfig { token: Some(b"sesame".to_vec()), ..PeerConfig::default() },
    )
    .unwrap();
    let target = peer.addr().to_string();
    let (res, _) = run_cell(&ctx(&[("peer", s(&target)), ("token", s("guess"))]), 200);
    let e = res.unwrap_err().to_string();
    assert!(e.contains("refused the token"), "{e}");
    let (res, t) = run_cell(&ctx(&[("peer", s(&target)), ("token", s("sesame"))]), 200);
    res.expect("right token");
    assert!(t.units > 0.0);
    assert!(!t.extra.contains_key("peer_cpu_us_per_tx"), "a remote peer's CPU is not seen here");
}

#[test]
fn peer_gone_mid_run_fails_the_cell_without_hanging() {
    for mode in ["rr", "stream-write", "stream-read"] {
        let mut peer = Peer::start("127.0.0.1:0".parse().unwrap(), PeerConfig::default()).unwrap();
        let target = peer.addr().to_string();
        let c = ctx(&[
            ("peer", s(&target)),
            ("mode", s(mode)),
            ("connections", Value::Int(4)),
            ("timeout_s", Value::Int(2)),
        ]);
        let t0 = Instant::now();
        let runner = std::thread::spawn(move || run_cell(&c, 5_000).0);
        std::thread::sleep(Duration::from_millis(300));
        peer.stop();
        let e = runner.join().unwrap().unwrap_err().to_string();
        assert!(e.contains("closed the connection") || e.contains("did not answer"), "{mode}: {e}");
        assert!(t0.elapsed() < Duration::from_secs(6), "{mode}: {:?}", t0.elapsed());
    }
}

#[test]
fn a_peer_that_stops_answering_fails_the_cell_after_the_timeout() {
    // A peer that accepts the hello, answers a few requests, then holds the connection open
    // and answers nothing.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let target = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let _ = protocol::Hello::read_from(&mut s).unwrap();
        protocol::write_reply(&mut s, protocol::Status::Ok, "").unwrap();
        let mut b = [0u8; 1];
        for _ in 0..100 {
            std::io::Read::read_exact(&mut s, &mut b).unwrap();
            std::io::Write::write_all(&mut s, &b).unwrap();
        }
        std::thread::sleep(Duration::from_secs(20));
        drop(s);
    });
    let c = ctx(&[
        ("peer", s(&target)),
        ("mode", s("rr")),
        ("connections", Value::Int(1)),
        ("timeout_s", Value::Int(1)),
    ]);
    let t0 = Instant::now();
    let (res, _) = run_cell(&c, 2_000);
    let e = res.unwrap_err().to_string();
    assert!(e.contains("answered no request for 1 s"), "{e}");
    // The window (2 s) ends, then the watchdog's deadline (1 s) cuts the blocked read.
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
}
