//! The client side of a `net` cell: opening one connection (connect with a deadline, socket
//! options, hello, the peer's answer) and driving it: the request/response loop (write the
//! whole request, read the whole response, count one transaction) or a stream of messages.

use super::peer::{read_full, write_full, CHUNK_BYTES};
use super::protocol::{read_reply, Hello, Mode, Status};
use super::sockets;
pub use crate::support::net_options::Setup;
use crate::support::pace::Pacer;
use crate::{Control, EngineError, WorkerMeter};
use std::io::ErrorKind;
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Turns a failed exchange into an error that says what probably happened.
pub fn exchange_error(addr: &SocketAddr, timeout: Duration, e: std::io::Error) -> EngineError {
    let what = match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => {
            format!("the peer at {addr} did not answer within {} s", timeout.as_secs())
        }
        ErrorKind::UnexpectedEof | ErrorKind::ConnectionReset | ErrorKind::BrokenPipe => {
            format!("the peer at {addr} closed the connection mid-run (stopped or killed?)")
        }
        _ => format!("talking to the peer at {addr}"),
    };
    EngineError::Failed(format!("net: {what}: {e}"))
}

fn connect_error(addr: &SocketAddr, timeout: Duration, e: std::io::Error) -> EngineError {
    let hint = match e.kind() {
        ErrorKind::ConnectionRefused => {
            "nobody listens there: start `racehorse serve --listen ADDR` on that host \
                                         or fix the peer option"
                .to_string()
        }
        ErrorKind::TimedOut => {
            format!("no answer within {} s: is the host up and the port open?", timeout.as_secs())
        }
        _ => "check the peer address and the network".to_string(),
    };
    EngineError::Failed(format!("net: cannot connect to the peer at {addr}: {e}; {hint}"))
}

/// Connects, sets the options, says hello and checks the answer.
pub fn open(addr: &SocketAddr, s: &Setup, token: &[u8]) -> Result<TcpStream, EngineError> {
    let mut stream = sockets::connect(addr, s.timeout, s.sndbuf_bytes, s.rcvbuf_bytes)
        .map_err(|e| connect_error(addr, s.timeout, e))?;
    let io = |e| exchange_error(addr, s.timeout, e);
    stream.set_nodelay(s.nodelay).map_err(io)?;
    stream.set_read_timeout(Some(s.timeout)).map_err(io)?;
    stream.set_write_timeout(Some(s.timeout)).map_err(io)?;
    let hello = Hello {
        mode: s.mode,
        request_bytes: s.request_bytes,
        response_bytes: s.response_bytes,
        token: token.to_vec(),
    };
    std::io::Write::write_all(&mut stream, &hello.encode()).map_err(io)?;
    let (status, reason) = read_reply(&mut stream).map_err(|e| match e.kind() {
        ErrorKind::InvalidData => EngineError::Failed(format!(
            "net: {addr} is not a racehorse peer (it answered something else): {e}"
        )),
        ErrorKind::UnexpectedEof | ErrorKind::ConnectionReset => EngineError::Failed(format!(
            "net: the peer at {addr} closed the connection at the hello: is it a racehorse peer of the same \
             version?"
        )),
        _ => io(e),
    })?;
    match status {
        Status::Ok => {
            if s.mode == Mode::Rr {
                // A socket timeout arms a kernel timer on every wait for the response: about
                // 1 µs per transaction here (4% of rr 1×1's CPU). The cell's watchdog
                // ([`Watchdog`]) keeps the deadline instead.
                stream.set_read_timeout(None).map_err(io)?;
                stream.set_write_timeout(None).map_err(io)?;
            }
            Ok(stream)
        }
        Status::BadToken => Err(EngineError::Failed(format!(
            "net: the peer at {addr} refused the token ({reason}); give the token `racehorse serve` was \
             started with (-o token=T or RACEHORSE_TOKEN)"
        ))),
        Status::BadHello => {
            Err(EngineError::Failed(format!("net: the peer at {addr} refused the cell: {reason}")))
        }
        Status::Busy => Err(EngineError::Failed(format!(
            "net: the peer at {addr} is full ({reason}); use fewer connections or raise its --max-connections"
        ))),
    }
}

/// Drives one open connection until the window closes (or another connection fails); each
/// transaction or message starts when `pacer` says and its latency counts from then.
pub fn drive(
    mut stream: TcpStream,
    s: &Setup,
    ctl: &Control,
    failed: &AtomicBool,
    meter: &mut WorkerMeter,
    pacer: &mut Pacer,
    progress: &AtomicU64,
) -> Result<(), std::io::Error> {
    let mut done = 0u64;
    let request = s.request_bytes as usize;
    let response = s.response_bytes as usize;
    let out = vec![b'q'; request.min(CHUNK_BYTES)];
    let mut inbuf = vec![0u8; response.min(CHUNK_BYTES)];
    while meter.tick(ctl) && !failed.load(Ordering::Relaxed) {
        let Some(t0) = pacer.next(ctl, meter) else { continue };
        match s.mode {
            Mode::Rr => {
                write_full(&mut stream, &out, request, s.timeout)?;
                if !read_full(&mut stream, &mut inbuf, response, s.timeout)? {
                    return Err(ErrorKind::UnexpectedEof.into());
                }
                let ns = pacer.done(ctl, meter, t0);
                meter.count(ctl, "rr", ns, 1.0, response as u64, request as u64);
                done += 1;
                progress.store(done, Ordering::Relaxed);
            }
            Mode::StreamToPeer => {
                write_full(&mut stream, &out, request, s.timeout)?;
                let ns = pacer.done(ctl, meter, t0);
                meter.count(ctl, "write", ns, request as f64, 0, request as u64);
            }
            Mode::StreamFromPeer => {
                if !read_full(&mut stream, &mut inbuf, response, s.timeout)? {
                    return Err(ErrorKind::UnexpectedEof.into());
                }
                let ns = pacer.done(ctl, meter, t0);
                meter.count(ctl, "read", ns, response as f64, response as u64, 0);
            }
        }
    }
    Ok(())
}

/// Fails rr connections whose peer stopped answering: every slice it looks at each
/// connection's count of transactions, and one that has not moved for the timeout is shut
/// down (its blocked read returns) after `on_stall` has recorded why. Stream connections keep
/// their socket timeouts and are not watched.
pub struct Watchdog {
    conns: Vec<(TcpStream, std::sync::Arc<AtomicU64>)>,
    timeout: Duration,
}

impl Watchdog {
    pub fn new(timeout: Duration) -> Self {
        Watchdog { conns: Vec::new(), timeout }
    }

    /// Watches `stream` (a clone of a connection's socket) through `progress`.
    pub fn watch(&mut self, stream: TcpStream, progress: std::sync::Arc<AtomicU64>) {
        self.conns.push((stream, progress));
    }

    /// Shuts every watched connection down (an interrupted run).
    pub fn cut_all(&self) {
        for (stream, _) in &self.conns {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }

    /// Runs until `finished` is set; `on_stall` is called once per stalled connection.
    pub fn run(&self, ctl: &Control, finished: &AtomicBool, on_stall: &dyn Fn(Duration)) {
        let mut seen: Vec<(u64, Instant, bool)> = vec![(0, Instant::now(), false); self.conns.len()];
        let mut cut = false;
        while !finished.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(50));
            if ctl.aborted() && !cut {
                self.cut_all();
                cut = true;
            }
            for ((stream, progress), (last, since, stalled)) in self.conns.iter().zip(seen.iter_mut()) {
                let now = progress.load(Ordering::Relaxed);
                if now != *last {
                    (*last, *since) = (now, Instant::now());
                } else if !*stalled && since.elapsed() > self.timeout {
                    *stalled = true;
                    on_stall(self.timeout);
                    let _ = stream.shutdown(std::net::Shutdown::Both);
                }
            }
        }
    }
}
