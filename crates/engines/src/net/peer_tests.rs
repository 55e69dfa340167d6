//! Tests of the peer: it serves exact sizes, refuses garbage, huge sizes, wrong tokens and
//! surplus connections, drops slow clients, and keeps serving everyone else meanwhile (idle
//! connections that never say hello included).

use super::*;
use crate::net::protocol::{read_reply, Hello, Mode, Status};
use std::io::{Read, Write};
use std::net::TcpStream;

/// The tests' peer settings: short hello and exchange timeouts.
fn config(token: Option<&str>, max_connections: usize) -> PeerConfig {
    PeerConfig {
        token: token.map(|t| t.as_bytes().to_vec()),
        max_connections,
        hello_timeout: Duration::from_millis(300),
        exchange_timeout: Duration::from_secs(2),
        ..PeerConfig::default()
    }
}

fn start_with(cfg: PeerConfig) -> Peer {
    Peer::start("127.0.0.1:0".parse().unwrap(), cfg).expect("peer starts")
}

fn start(token: Option<&str>, max_connections: usize) -> Peer {
    start_with(config(token, max_connections))
}

fn hello(mode: Mode, req: u32, resp: u32, token: &str) -> Vec<u8> {
    Hello { mode, request_bytes: req, response_bytes: resp, token: token.as_bytes().to_vec() }.encode()
}

/// Connects and says hello; returns the stream and the peer's answer.
fn greet(peer: &Peer, wire: &[u8]) -> (TcpStream, std::io::Result<(Status, String)>) {
    let mut s = TcpStream::connect(peer.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    s.write_all(wire).unwrap();
    let reply = read_reply(&mut s);
    (s, reply)
}

/// One good rr client does `n` exchanges of 200 x 3000 bytes.
fn good_exchanges(peer: &Peer, token: &str, n: usize) {
    let (mut s, reply) = greet(peer, &hello(Mode::Rr, 200, 3000, token));
    assert_eq!(reply.unwrap().0, Status::Ok);
    let mut buf = vec![0u8; 3000];
    for _ in 0..n {
        s.write_all(&[7u8; 200]).unwrap();
        s.read_exact(&mut buf).unwrap();
    }
}

/// True when the peer closed `s` (EOF or reset) within the read timeout.
fn closed(s: &mut TcpStream) -> bool {
    let mut b = [0u8; 64];
    loop {
        match s.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) => return e.kind() == std::io::ErrorKind::ConnectionReset,
        }
    }
}

/// Ends the client's side of a stream and waits for the peer to close its side.
fn end_stream(s: &mut TcpStream) {
    s.shutdown(std::net::Shutdown::Write).unwrap();
    assert!(closed(s), "the peer closes after the client's end of stream");
}

#[test]
fn serves_exact_sizes_and_counts_its_cpu() {
    let peer = start(Some("tok"), 8);
    let before = peer.cpu();
    good_exchanges(&peer, "tok", 2000);
    assert!(peer.cpu().total_s() > before.total_s(), "the peer's threads used some CPU");
    assert_eq!(peer.counts().served, 1);
}

#[test]
fn garbage_and_huge_sizes_cost_one_connection_only() {
    let peer = start(Some("tok"), 8);
    // Garbage: the magic is wrong; the peer says why and closes.
    let (mut s, reply) = greet(&peer, &[0xAB; 100]);
    let (status, reason) = reply.unwrap();
    assert_eq!(status, Status::BadHello);
    assert!(reason.contains("not the racehorse benchmark protocol"), "{reason}");
    assert!(closed(&mut s));
    // A response of 4 GiB is refused before anything is allocated.
    let (_s, reply) = greet(&peer, &hello(Mode::Rr, 1, u32::MAX, "tok"));
    let (status, reason) = reply.unwrap();
    assert_eq!(status, Status::BadHello);
    assert!(reason.contains("outside"), "{reason}");
    // A request larger than announced just becomes the next requests; a short one waits.
    good_exchanges(&peer, "tok", 10);
    let c = peer.counts();
    assert_eq!((c.bad_hello, c.served), (2, 1));
}

#[test]
fn wrong_token_is_refused() {
    let peer = start(Some("right"), 8);
    let (mut s, reply) = greet(&peer, &hello(Mode::Rr, 1, 1, "wrong"));
    assert_eq!(reply.unwrap().0, Status::BadToken);
    assert!(closed(&mut s));
    let (_s, reply) = greet(&peer, &hello(Mode::Rr, 1, 1, ""));
    assert_eq!(reply.unwrap().0, Status::BadToken);
    assert_eq!(peer.counts().bad_token, 2);
    good_exchanges(&peer, "right", 5);
}

#[test]
fn slow_clients_are_dropped_while_others_are_served() {
    let peer = start(None, 8);
    let silent = TcpStream::connect(peer.addr()).unwrap();
    let mut trickle = TcpStream::connect(peer.addr()).unwrap();
    let wire = hello(Mode::Rr, 1, 1, "");
    let t0 = Instant::now();
    // The trickler sends a byte every 50 ms: the hello deadline is for the whole hello.
    let mut cut = false;
    for b in &wire {
        if trickle.write_all(std::slice::from_ref(b)).is_err() {
            cut = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    good_exchanges(&peer, "", 100);
    trickle.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let mut silent = silent;
    silent.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    assert!(cut || closed(&mut trickle), "the trickler was cut off");
    assert!(closed(&mut silent), "the silent client was cut off");
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    assert_eq!(peer.counts().bad_hello, 2);
}

#[test]
fn a_client_that_never_reads_does_not_block_the_peer() {
    let peer = start(None, 8);
    // stream-read: the peer writes until its write deadline (2 s) passes, then gives up.
    let (_lazy, reply) = greet(&peer, &hello(Mode::StreamFromPeer, 1, 1 << 20, ""));
    assert_eq!(reply.unwrap().0, Status::Ok);
    good_exchanges(&peer, "", 100);
    let limit = Instant::now() + Duration::from_secs(6);
    while peer.live_connections() > 0 && Instant::now() < limit {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(peer.live_connections(), 0, "the stuck writer gave up at its deadline");
}

#[test]
fn connections_beyond_the_limit_are_told_busy() {
    let peer = start(None, 1);
    let (_first, reply) = greet(&peer, &hello(Mode::Rr, 1, 1, ""));
    assert_eq!(reply.unwrap().0, Status::Ok);
    let (_second, reply) = greet(&peer, &hello(Mode::Rr, 1, 1, ""));
    let (status, reason) = reply.unwrap();
    assert_eq!(status, Status::Busy);
    assert!(reason.contains("at most 1"), "{reason}");
}

#[test]
fn stop_cuts_served_connections() {
    let mut peer = start(None, 8);
    let (mut s, reply) = greet(&peer, &hello(Mode::Rr, 1, 1, ""));
    assert_eq!(reply.unwrap().0, Status::Ok);
    let t0 = Instant::now();
    peer.stop();
    assert!(t0.elapsed() < Duration::from_secs(2));
    assert!(closed(&mut s));
    assert!(TcpStream::connect(peer.addr()).is_err(), "nobody listens after stop");
}

#[test]
fn an_rr_client_that_goes_silent_is_cut_after_the_exchange_timeout() {
    let peer = start(None, 8);
    let (mut s, reply) = greet(&peer, &hello(Mode::Rr, 1, 1, ""));
    assert_eq!(reply.unwrap().0, Status::Ok);
    let mut b = [0u8; 1];
    for _ in 0..10 {
        s.write_all(&[1]).unwrap();
        s.read_exact(&mut b).unwrap();
    }
    // Half a request, then silence: the peer waits without a socket timeout, so only its
    // own deadline (2 s here, checked every 250 ms) can end the wait.
    let t0 = Instant::now();
    let mut s2 = TcpStream::connect(peer.addr()).unwrap();
    s2.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    s2.write_all(&hello(Mode::Rr, 2, 1, "")).unwrap();
    assert_eq!(read_reply(&mut s2).unwrap().0, Status::Ok);
    s2.write_all(&[1]).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(4))).unwrap();
    assert!(closed(&mut s), "the idle client was cut off");
    assert!(closed(&mut s2), "the client stuck mid-request was cut off");
    let waited = t0.elapsed();
    assert!(waited >= Duration::from_secs(2) && waited < Duration::from_secs(4), "{waited:?}");
    good_exchanges(&peer, "", 10);
}

#[test]
fn a_stream_shorter_than_the_low_water_mark_ends_promptly() {
    // The draining peer wakes only at DRAIN_LOWAT_BYTES queued, or at the end of the stream:
    // a client that sends less and closes must see the peer close at once, not at its timeout.
    let peer = start(Some("tok"), 8);
    let (mut s, reply) = greet(&peer, &hello(Mode::StreamToPeer, 1000, 1, "tok"));
    assert_eq!(reply.unwrap().0, Status::Ok);
    s.write_all(&[5u8; 1000]).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let t0 = Instant::now();
    end_stream(&mut s);
    let waited = t0.elapsed();
    assert!(
        waited < Duration::from_secs(1),
        "closed after {waited:?}: the peer waited for its timeout (2 s)"
    );
    const _: () = assert!(DRAIN_LOWAT_BYTES > 1000, "the test sends less than the low-water mark");
}

#[test]
fn a_small_fixed_receive_buffer_does_not_stall_the_low_water_mark() {
    // A peer told to use a 16 KiB receive buffer (autotuning off) can never queue 128 KiB:
    // its reads must still move the stream at full speed, not once per timeout (2 s here).
    let peer = start_with(PeerConfig { rcvbuf_bytes: 16 << 10, ..config(Some("tok"), 8) });
    let (mut s, reply) = greet(&peer, &hello(Mode::StreamToPeer, 30 << 10, 1, "tok"));
    assert_eq!(reply.unwrap().0, Status::Ok);
    let t0 = Instant::now();
    let msg = vec![9u8; 30 << 10];
    for _ in 0..200 {
        s.write_all(&msg).unwrap();
    }
    end_stream(&mut s);
    let took = t0.elapsed();
    assert!(
        took < Duration::from_millis(1500),
        "6 MB took {took:?}: the peer's reads waited for their timeout"
    );
}

#[test]
fn issue_23_idle_connections_cannot_keep_a_token_holder_out() {
    // More silent connections than the peer lets wait for a hello (64), and than it serves
    // (4), with the real 5 s hello timeout: the token holder must be served at once anyway.
    let peer = start_with(PeerConfig { hello_timeout: Duration::from_secs(5), ..config(Some("tok"), 4) });
    let mut idle: Vec<TcpStream> = (0..70).map(|_| TcpStream::connect(peer.addr()).unwrap()).collect();
    let limit = Instant::now() + Duration::from_secs(2);
    while peer.counts().accepted < 70 && Instant::now() < limit {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(peer.counts().accepted, 70, "the peer accepted every idle connection");
    let t0 = Instant::now();
    good_exchanges(&peer, "tok", 10);
    assert!(t0.elapsed() < Duration::from_secs(1), "served after {:?}", t0.elapsed());
    assert_eq!(peer.counts().served, 1);
    // The oldest idle connection was dropped to make room, well before its hello timeout.
    idle[0].set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    assert!(closed(&mut idle[0]), "the oldest idle connection was dropped");
    // Evicted connections end on their own threads: give a loaded machine a moment.
    let limit = Instant::now() + Duration::from_secs(3);
    while peer.live_connections() > 64 + 1 && Instant::now() < limit {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(peer.live_connections() <= 64 + 1, "{} connections live", peer.live_connections());
}
