//! The peer of the `net` engine: accepts benchmark connections and serves them, one thread per
//! connection (as uperf's slave does), within limits: a bounded number of served connections,
//! a separate small budget for connections still owing their hello (so that idle strangers
//! cannot keep a token holder out), at most 256 KiB of buffer per connection, a deadline for
//! the hello and for every read or write (for rr, a deadline per transaction that the accept
//! thread keeps, so that waiting for a request arms no kernel timer). Garbage, a wrong token
//! or a slow client costs one connection, never the peer.
//!
//! The same peer runs inside racehorse (the default loopback case, started and stopped
//! around each cell) and as `racehorse serve` on another host. Its threads' CPU time can be
//! read at any moment, so the engine can charge the peer's CPU to the measured window.

use super::protocol::{tokens_match, write_reply, Hello, Mode, Status};
use super::sockets::{self, set_buffers, thread_clock, ThreadClock};
use racehorse_machine::rusage::{thread_cpu, CpuTime};
use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Largest buffer a connection allocates; longer messages move in pieces.
pub const CHUNK_BYTES: usize = 256 << 10;

/// How a peer behaves.
#[derive(Debug, Clone)]
pub struct PeerConfig {
    /// The token clients must present; None accepts any (loopback only).
    pub token: Option<Vec<u8>>,
    /// Connections served at once (those whose hello and token were accepted).
    pub max_connections: usize,
    /// Connections waiting for their hello at once; a new one beyond this drops the oldest.
    pub max_awaiting_hello: usize,
    /// Time a client has to send its hello.
    pub hello_timeout: Duration,
    /// Longest wait for any read or write once serving.
    pub exchange_timeout: Duration,
    /// SO_SNDBUF / SO_RCVBUF for accepted connections (0 = the kernel's autotuning).
    pub sndbuf_bytes: u64,
    pub rcvbuf_bytes: u64,
}

impl Default for PeerConfig {
    fn default() -> Self {
        PeerConfig {
            token: None,
            max_connections: 1024,
            max_awaiting_hello: 64,
            hello_timeout: Duration::from_secs(5),
            exchange_timeout: Duration::from_secs(30),
            sndbuf_bytes: 0,
            rcvbuf_bytes: 0,
        }
    }
}

/// What the peer has seen so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PeerCounts {
    pub accepted: u64,
    /// Connections that presented a valid hello and token and were served.
    pub served: u64,
    pub bad_hello: u64,
    pub bad_token: u64,
    pub busy: u64,
}

/// Where a thread stands, for the two limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Counts against neither limit: the accept thread, or a connection cut and ending.
    Uncounted,
    /// Accepted, hello not yet accepted: counts against `max_awaiting_hello`.
    AwaitingHello,
    /// Hello and token accepted: counts against `max_connections`.
    Served,
}

struct Entry {
    fd: Option<RawFd>,
    stage: Stage,
    clock: Option<ThreadClock>,
    /// Transactions served, for rr connections (which wait without socket timeouts; the
    /// accept thread cuts one whose count stands still for the exchange timeout).
    progress: Option<Arc<AtomicU64>>,
}

#[derive(Default)]
struct Threads {
    live: HashMap<u64, Entry>,
    next_id: u64,
    /// CPU of threads that have ended.
    retired: CpuTime,
}

struct Shared {
    cfg: PeerConfig,
    stop: AtomicBool,
    threads: Mutex<Threads>,
    accepted: AtomicU64,
    served: AtomicU64,
    bad_hello: AtomicU64,
    bad_token: AtomicU64,
    busy: AtomicU64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Threads> {
        self.threads.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers the calling thread (keeping the entry [`admit`] made for a connection);
    /// `fd` is shut down by [`Peer::stop`].
    fn enter(&self, id: u64, fd: Option<RawFd>) {
        let mut t = self.lock();
        let e =
            t.live.entry(id).or_insert(Entry { fd, stage: Stage::Uncounted, clock: None, progress: None });
        e.clock = thread_clock();
    }

    /// Moves a connection whose hello was accepted to the served ones, if fewer than
    /// `max_connections` are. Returns its stage: Served, AwaitingHello (the peer is full) or
    /// Uncounted (it was cut meanwhile).
    fn promote(&self, id: u64) -> Stage {
        let mut t = self.lock();
        let served = t.live.values().filter(|e| e.stage == Stage::Served).count();
        let Some(e) = t.live.get_mut(&id) else { return Stage::Uncounted };
        if e.stage == Stage::AwaitingHello && served < self.cfg.max_connections {
            e.stage = Stage::Served;
        }
        e.stage
    }

    /// Marks the calling rr connection as watched through `progress`.
    fn watch(&self, id: u64, progress: Arc<AtomicU64>) {
        if let Some(e) = self.lock().live.get_mut(&id) {
            e.progress = Some(progress);
        }
    }

    /// Shuts down the rr connections whose count has not moved for the exchange timeout;
    /// `seen` holds each one's last count and since when.
    fn cut_stalled(&self, seen: &mut HashMap<u64, (u64, Instant)>) {
        let t = self.lock();
        seen.retain(|id, _| t.live.contains_key(id));
        for (id, e) in &t.live {
            let (Some(p), Some(fd)) = (&e.progress, e.fd) else { continue };
            let now = p.load(Ordering::Relaxed);
            let entry = seen.entry(*id).or_insert((now, Instant::now()));
            if entry.0 != now {
                *entry = (now, Instant::now());
            } else if entry.1.elapsed() > self.cfg.exchange_timeout {
                // SAFETY: the fd is open: its thread removes the entry (under this lock)
                // before closing it.
                unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
            }
        }
    }

    /// Moves the calling thread's CPU to `retired` and forgets it.
    fn leave(&self, id: u64) {
        let mut t = self.lock();
        t.live.remove(&id);
        let cpu = thread_cpu();
        t.retired.user_s += cpu.user_s;
        t.retired.kernel_s += cpu.kernel_s;
    }
}

/// A running peer. Dropping it stops it.
pub struct Peer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    listener: Option<JoinHandle<()>>,
}

impl Peer {
    /// Binds `listen` and starts accepting.
    pub fn start(listen: SocketAddr, cfg: PeerConfig) -> std::io::Result<Peer> {
        let listener = TcpListener::bind(listen)?;
        set_buffers(listener.as_raw_fd(), cfg.sndbuf_bytes, cfg.rcvbuf_bytes)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            cfg,
            stop: AtomicBool::new(false),
            threads: Mutex::new(Threads::default()),
            accepted: AtomicU64::new(0),
            served: AtomicU64::new(0),
            bad_hello: AtomicU64::new(0),
            bad_token: AtomicU64::new(0),
            busy: AtomicU64::new(0),
        });
        let sh = shared.clone();
        let handle = std::thread::Builder::new()
            .name("net-peer-accept".into())
            .stack_size(128 << 10)
            .spawn(move || accept_loop(&sh, listener))?;
        Ok(Peer { shared, addr, listener: Some(handle) })
    }

    /// The address the peer listens on (with the port the kernel chose for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn counts(&self) -> PeerCounts {
        let sh = &self.shared;
        PeerCounts {
            accepted: sh.accepted.load(Ordering::Relaxed),
            served: sh.served.load(Ordering::Relaxed),
            bad_hello: sh.bad_hello.load(Ordering::Relaxed),
            bad_token: sh.bad_token.load(Ordering::Relaxed),
            busy: sh.busy.load(Ordering::Relaxed),
        }
    }

    /// Connections being served now.
    pub fn live_connections(&self) -> usize {
        self.shared.lock().live.len().saturating_sub(1)
    }

    /// CPU used by all of the peer's threads so far (ended ones included).
    pub fn cpu(&self) -> CpuTime {
        let t = self.shared.lock();
        let mut cpu = t.retired;
        for e in t.live.values() {
            if let Some(c) = &e.clock {
                let now = c.cpu();
                cpu.user_s += now.user_s;
                cpu.kernel_s += now.kernel_s;
            }
        }
        cpu
    }

    /// Stops accepting, cuts every connection and waits (up to 5 s) for their threads.
    pub fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.listener.take() {
            let _ = h.join();
        }
        self.cut_connections();
        let limit = Instant::now() + Duration::from_secs(5);
        while !self.shared.lock().live.is_empty() && Instant::now() < limit {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Shuts every served connection down (both directions); their threads then end.
    pub fn cut_connections(&self) {
        let t = self.shared.lock();
        for e in t.live.values() {
            if let Some(fd) = e.fd {
                // SAFETY: the fd is open: its thread removes the entry before closing it, and
                // that removal needs the lock we hold.
                unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
            }
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(sh: &Arc<Shared>, listener: TcpListener) {
    let me = {
        let mut t = sh.lock();
        t.next_id += 1;
        t.next_id
    };
    sh.enter(me, None);
    let mut pfd = libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    let (mut seen, mut next_check) = (HashMap::new(), Instant::now());
    while !sh.stop.load(Ordering::Relaxed) {
        if Instant::now() >= next_check {
            sh.cut_stalled(&mut seen);
            next_check = Instant::now() + Duration::from_millis(250);
        }
        // SAFETY: poll on one valid pollfd we own.
        let ready = unsafe { libc::poll(&mut pfd, 1, 100) };
        if ready <= 0 {
            continue;
        }
        match listener.accept() {
            Ok((stream, _)) => admit(sh, stream),
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {}
            // Out of descriptors or memory: back off instead of spinning.
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    sh.leave(me);
}

/// Starts a thread for a new connection. Whether it is served is decided after its hello
/// ([`Shared::promote`]), so connections that never say one take no served slot; when
/// `max_awaiting_hello` already wait, the oldest of them is dropped to make room.
fn admit(sh: &Arc<Shared>, mut stream: TcpStream) {
    sh.accepted.fetch_add(1, Ordering::Relaxed);
    let _ = stream.set_nonblocking(false);
    let id = {
        let mut t = sh.lock();
        make_room_for_hello(&mut t, sh.cfg.max_awaiting_hello.max(1));
        t.next_id += 1;
        let id = t.next_id;
        let fd = Some(stream.as_raw_fd());
        t.live.insert(id, Entry { fd, stage: Stage::AwaitingHello, clock: None, progress: None });
        id
    };
    let sh2 = sh.clone();
    let spawned =
        std::thread::Builder::new().name("net-peer-conn".into()).stack_size(128 << 10).spawn(move || {
            sh2.enter(id, Some(stream.as_raw_fd()));
            serve(&sh2, id, &mut stream);
            sh2.leave(id);
            drop(stream);
        });
    if spawned.is_err() {
        sh.lock().live.remove(&id);
    }
}

/// Cuts the oldest connections awaiting their hello until fewer than `budget` wait. Ids grow
/// with each accept, so the smallest is the oldest; a cut one's thread ends at once.
fn make_room_for_hello(t: &mut Threads, budget: usize) {
    let mut waiting: Vec<u64> =
        t.live.iter().filter(|(_, e)| e.stage == Stage::AwaitingHello).map(|(id, _)| *id).collect();
    if waiting.len() < budget {
        return;
    }
    waiting.sort_unstable();
    for id in &waiting[..=waiting.len() - budget] {
        let Some(e) = t.live.get_mut(id) else { continue };
        e.stage = Stage::Uncounted;
        if let Some(fd) = e.fd {
            // SAFETY: the fd is open: its thread removes the entry (under the lock the caller
            // holds) before closing it.
            unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
        }
    }
}

/// Reads the hello, answers it and serves the connection until it ends.
fn serve(sh: &Shared, id: u64, stream: &mut TcpStream) {
    let cfg = &sh.cfg;
    if stream.set_read_timeout(Some(cfg.hello_timeout)).is_err()
        || stream.set_write_timeout(Some(cfg.hello_timeout)).is_err()
    {
        return;
    }
    let mut timed = Deadline { s: stream, until: Instant::now() + cfg.hello_timeout };
    let hello = match Hello::read_from(&mut timed) {
        Err(_) => {
            sh.bad_hello.fetch_add(1, Ordering::Relaxed);
            return;
        }
        Ok(Err(e)) => {
            sh.bad_hello.fetch_add(1, Ordering::Relaxed);
            let _ = write_reply(stream, Status::BadHello, &e.to_string());
            return;
        }
        Ok(Ok(h)) => h,
    };
    if let Some(expected) = &cfg.token {
        if !tokens_match(expected, &hello.token) {
            sh.bad_token.fetch_add(1, Ordering::Relaxed);
            let _ = write_reply(stream, Status::BadToken, "wrong token (see --token / RACEHORSE_TOKEN)");
            return;
        }
    }
    match sh.promote(id) {
        Stage::Served => {}
        Stage::AwaitingHello => {
            sh.busy.fetch_add(1, Ordering::Relaxed);
            let reason = format!("the peer serves at most {} connections", cfg.max_connections);
            let _ = write_reply(stream, Status::Busy, &reason);
            return;
        }
        Stage::Uncounted => return,
    }
    let _ = stream.set_nodelay(true);
    if write_reply(stream, Status::Ok, "").is_err()
        || stream.set_read_timeout(Some(cfg.exchange_timeout)).is_err()
        || stream.set_write_timeout(Some(cfg.exchange_timeout)).is_err()
    {
        return;
    }
    sh.served.fetch_add(1, Ordering::Relaxed);
    // Every way a served connection ends (client closed, timeout, reset) is normal here.
    let _ = match hello.mode {
        Mode::Rr => {
            // No socket timeouts while waiting for requests: each wait would arm a kernel
            // timer (about 1 µs per transaction here); the accept thread keeps the deadline.
            let progress = Arc::new(AtomicU64::new(0));
            sh.watch(id, progress.clone());
            if stream.set_read_timeout(None).is_err() || stream.set_write_timeout(None).is_err() {
                return;
            }
            serve_rr(
                stream,
                hello.request_bytes as usize,
                hello.response_bytes as usize,
                cfg.exchange_timeout,
                &progress,
            )
        }
        Mode::StreamToPeer => drain(stream),
        Mode::StreamFromPeer => pour(stream, hello.response_bytes as usize, cfg.exchange_timeout),
    };
}

/// Reads with one deadline for all reads, so a client trickling its hello byte by byte
/// cannot hold a connection longer than the hello timeout.
struct Deadline<'a> {
    s: &'a mut TcpStream,
    until: Instant,
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ErrorKind::TimedOut.into());
        }
        self.s.set_read_timeout(Some(left))?;
        self.s.read(buf)
    }
}

/// Fails a message that has been moving for longer than `limit`. The socket's own timeout
/// bounds each wait; this bounds a peer that trickles (each call moving a few bytes in time).
/// The clock is read only once a message has needed more than one call.
fn check_pace(started: &mut Option<Instant>, limit: Duration) -> std::io::Result<()> {
    let t = *started.get_or_insert_with(Instant::now);
    if t.elapsed() > limit {
        return Err(std::io::Error::new(ErrorKind::TimedOut, "the other end moves the message too slowly"));
    }
    Ok(())
}

/// Reads exactly `n` bytes in `buf`-sized pieces within `limit`; Ok(false) on a clean end
/// before any byte.
pub fn read_full(s: &mut impl Read, buf: &mut [u8], n: usize, limit: Duration) -> std::io::Result<bool> {
    let mut done = 0;
    let mut started = None;
    while done < n {
        let want = (n - done).min(buf.len());
        match s.read(&mut buf[..want]) {
            Ok(0) if done == 0 => return Ok(false),
            Ok(0) => return Err(ErrorKind::UnexpectedEof.into()),
            Ok(k) => done += k,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        if done < n {
            check_pace(&mut started, limit)?;
        }
    }
    Ok(true)
}

/// Writes `n` bytes from `buf` (repeated as needed) within `limit`.
pub fn write_full(s: &mut impl Write, buf: &[u8], n: usize, limit: Duration) -> std::io::Result<()> {
    let mut left = n;
    let mut started = None;
    while left > 0 {
        let k = left.min(buf.len());
        match s.write(&buf[..k]) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(w) => left -= w,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        if left > 0 {
            check_pace(&mut started, limit)?;
        }
    }
    Ok(())
}

fn serve_rr(
    s: &mut TcpStream,
    request: usize,
    response: usize,
    limit: Duration,
    progress: &AtomicU64,
) -> std::io::Result<()> {
    let mut inbuf = vec![0u8; request.min(CHUNK_BYTES)];
    let outbuf = vec![b'r'; response.min(CHUNK_BYTES)];
    let mut done = 0u64;
    while read_full(s, &mut inbuf, request, limit)? {
        write_full(s, &outbuf, response, limit)?;
        done += 1;
        progress.store(done, Ordering::Relaxed);
    }
    Ok(())
}

/// How much a draining peer lets queue before its blocked read wakes (SO_RCVLOWAT).
pub const DRAIN_LOWAT_BYTES: usize = CHUNK_BYTES / 2;

/// Reads and discards whatever comes, up to a chunk per read, waking only once half a chunk
/// has queued. Waking the peer is work done on the sending client's CPU (the loopback
/// receive runs there), and the client's CPU is what bounds a stream on loopback: waking
/// once per 128 KiB instead of once per 30k message cut the client's CPU per MB by 7%
/// and the peer's by 40% (docs/workloads/net.md). The message size does not matter to
/// a sink.
fn drain(s: &mut TcpStream) -> std::io::Result<()> {
    sockets::set_rcvlowat(s.as_raw_fd(), DRAIN_LOWAT_BYTES)?;
    let mut buf = vec![0u8; CHUNK_BYTES];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn pour(s: &mut TcpStream, message: usize, limit: Duration) -> std::io::Result<()> {
    let buf = vec![b's'; message.min(CHUNK_BYTES)];
    loop {
        write_full(s, &buf, message, limit)?;
    }
}

#[cfg(test)]
#[path = "peer_tests.rs"]
mod tests;
