//! The net workload through the binary: a loopback run stores transactions with both ends'
//! CPU, `racehorse serve` serves a run from "another host" with a token, and a wrong token,
//! a peer killed mid-run and a peer that is gone fail their cells while the run goes on.

use crate::common::{bin, machine_lock, text, Sandbox};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A `racehorse serve` on a free loopback port; killed on drop.
struct Serve {
    child: Child,
    addr: String,
}

impl Serve {
    fn start(token: &str) -> Serve {
        let mut child = Command::new(bin())
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env("RACEHORSE_TOKEN", token)
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn racehorse serve");
        let mut line = String::new();
        BufReader::new(child.stderr.take().expect("stderr")).read_line(&mut line).expect("serve says where");
        let addr =
            line.split("listening on ").nth(1).and_then(|r| r.split(' ').next()).unwrap_or("").to_string();
        assert!(addr.starts_with("127.0.0.1:"), "{line}");
        Serve { child, addr }
    }
}

impl Serve {
    /// Established TCP connections to the peer's port (from /proc/net/tcp: local address,
    /// state 01).
    fn established(&self) -> usize {
        let port = self.addr.rsplit(':').next().and_then(|p| p.parse::<u16>().ok()).unwrap_or(0);
        let suffix = format!(":{port:04X}");
        let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
        table
            .lines()
            .skip(1)
            .filter(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() > 3 && f[1].ends_with(&suffix) && f[3] == "01"
            })
            .count()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn loopback_run_stores_transactions_and_both_ends_cpu() {
    // Runs as root share the machine's restore state with the machine tests.
    let _m = machine_lock();
    let sb = Sandbox::new();
    let o = sb.run(&[
        "run",
        "net",
        "--label",
        "lo",
        "-o",
        "mode=rr",
        "-o",
        "request=200",
        "-o",
        "response=1000",
        "-o",
        "connections=1,3",
        "--runtime",
        "1s",
        "--warmup",
        "0s",
        "--quiet",
        "--no-drop-caches",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let cells = sb.cells("lo");
    assert_eq!(cells.len(), 2, "the preset's profiles collapse into the one asked for");
    for c in &cells {
        assert_eq!(c["unit"], "transactions");
        let tx = c["units"].as_f64().expect("units");
        assert!(tx > 100.0, "{c}");
        assert_eq!(c["bytes_written"].as_f64(), Some(tx * 200.0));
        assert_eq!(c["bytes_read"].as_f64(), Some(tx * 1000.0));
        for key in ["cpu_us_per_tx", "client_cpu_us_per_tx", "peer_cpu_us_per_tx", "client_cpu_us_per_mb"] {
            assert!(c["extra"][key].as_f64().is_some_and(|v| v > 0.0), "{key}: {c}");
        }
    }
    let show = text(&sb.run(&["show", "lo"]));
    assert!(show.contains("tx/s") && show.contains("peer_cpu_us_per_tx"), "{show}");
}

#[test]
fn serve_takes_a_token_and_refuses_the_wrong_one() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let peer = Serve::start("open-sesame");
    let mut ok = sb.cmd(&[
        "run",
        "net",
        "--label",
        "remote",
        "--peer",
        &peer.addr,
        "-o",
        "mode=stream-write",
        "-o",
        "request=1",
        "-o",
        "response=1",
        "-o",
        "connections=2",
        "--runtime",
        "1s",
        "--warmup",
        "0s",
        "--quiet",
        "--no-drop-caches",
    ]);
    let o = ok.env("RACEHORSE_TOKEN", "open-sesame").output().expect("run");
    assert!(o.status.success(), "{}", text(&o));
    let stored = sb.cells("remote");
    assert_eq!(stored.len(), 1, "one profile of the preset");
    let c = &stored[0];
    assert_eq!(c["unit"], "bytes");
    assert!(
        c["bytes_written"].as_f64().is_some_and(|b| b > 0.0) && c["bytes_read"].as_f64() == Some(0.0),
        "{c}"
    );
    assert!(c["extra"].get("peer_cpu_us_per_mb").is_none(), "a remote peer's CPU is not measured here");
    // Wrong token: both cells fail with the reason, the run still ends (exit 1).
    let o = sb.run(&[
        "run",
        "net",
        "--label",
        "wrong",
        "--peer",
        &peer.addr,
        "-o",
        "token=guess",
        "-o",
        "mode=rr",
        "-o",
        "request=1",
        "-o",
        "response=1",
        "-o",
        "connections=1,2",
        "--runtime",
        "1s",
        "--warmup",
        "0s",
        "--quiet",
        "--no-drop-caches",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let failed = sb.cells("wrong");
    assert_eq!(failed.len(), 2);
    for c in failed {
        assert_eq!(c["status"], "failed");
        assert!(c["error"].as_str().is_some_and(|e| e.contains("refused the token")), "{c}");
    }
}

#[test]
fn serve_beyond_loopback_needs_a_token() {
    let o = Command::new(bin())
        .args(["serve", "--listen", "0.0.0.0:0"])
        .env_remove("RACEHORSE_TOKEN")
        .output()
        .expect("serve");
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("needs a shared token"), "{}", text(&o));
}

#[test]
fn peer_killed_mid_run_fails_its_cell_and_the_next_one_promptly() {
    let _m = machine_lock();
    let sb = Sandbox::new();
    let mut peer = Serve::start("t");
    let mut run = sb.cmd(&[
        "run",
        "net",
        "--label",
        "killed",
        "--peer",
        &peer.addr,
        "-o",
        "token=t",
        "-o",
        "mode=rr",
        "-o",
        "request=1",
        "-o",
        "response=1",
        "-o",
        "connections=2,4",
        "-o",
        "timeout_s=2",
        "--runtime",
        "3s",
        "--warmup",
        "0s",
        "--quiet",
        "--no-drop-caches",
        // The unmeasured warm-up cell would be the first to connect; this test is about the
        // measured ones.
        "--no-warm-up",
    ]);
    let child = run.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("run");
    // Killed once the first cell's two connections are up (its window is 3 s), however long
    // the run takes to get there on a busy machine.
    let waited = Instant::now();
    while peer.established() < 2 && waited.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    peer.child.kill().expect("kill the peer");
    let killed = Instant::now();
    let o = child.wait_with_output().expect("run ends");
    assert!(killed.elapsed() < Duration::from_secs(15), "no hang: {:?} after the kill", killed.elapsed());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let cells = sb.cells("killed");
    assert_eq!(cells.len(), 2, "the run went on to the next cell");
    let err = |i: usize| cells[i]["error"].as_str().unwrap_or("").to_string();
    assert!(err(0).contains("closed the connection") || err(0).contains("did not answer"), "{}", err(0));
    assert!(err(1).contains("cannot connect"), "{}", err(1));
}

#[test]
fn the_preset_is_the_seeds_matrix_and_options_narrow_it() {
    let sb = Sandbox::new();
    let all = text(&sb.run(&["run", "net", "--dry-run"]));
    assert!(all.contains("plan: 20 cells"), "3 rr profiles + 2 streams x 4 connection counts: {all}");
    let one =
        sb.run(&["run", "net", "--dry-run", "-o", "mode=rr", "-o", "request=200", "-o", "response=30k"]);
    assert!(text(&one).contains("plan: 4 cells"), "{}", text(&one));
    let bad = sb.run(&["run", "net", "--dry-run", "-o", "response=2m"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
}
