//! The `net` engine: seed 000's uperf suite. Request/response over TCP with one connection per
//! client ("rr1c": write the whole request, read the whole response, repeat) and streams of
//! messages to or from a peer ("str-write", "str-read").
//!
//! The peer is racehorse's own ([`peer`]): by default each cell starts one on loopback inside
//! this process and stops it afterwards, so its threads' CPU is measured over the window too;
//! `peer = "HOST:PORT"` uses a `racehorse serve` running elsewhere (its CPU is not seen here).
//!
//! Units: transactions for rr, payload bytes in the stream's direction for streams. The bytes
//! of both directions are kept (`bytes_written` = client to peer, `bytes_read` = peer to
//! client); `uperf_bits_per_s` counts both, as uperf's summary does.

pub mod client;
pub mod iperf3;
pub mod peer;
pub mod protocol;
pub mod sockets;
#[cfg(test)]
mod tests;

use crate::info::{EngineInfo, Shortcut, ShortcutForm};
use crate::{Caps, CellContext, Control, Engine, EngineError, OptKind, OptionSpec, Recorder, Workload};
use client::Setup;
use peer::{Peer, PeerConfig};
use protocol::{Mode, MAX_MESSAGE_BYTES};
use racehorse_core::{CellSpec, WorkUnit};
use racehorse_machine::rusage::CpuTime;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct Net;

/// The environment variable holding the shared token (as for `racehorse serve`).
pub const TOKEN_ENV: &str = "RACEHORSE_TOKEN";

/// `--peer HOST:PORT` (net and iperf3).
pub const PEER_SHORTCUT: Shortcut = Shortcut {
    flag: "peer",
    option: "peer",
    form: ShortcutForm::Whole,
    value_name: "HOST:PORT",
    help: "The peer, HOST:PORT of a `racehorse serve`; default: a peer on loopback started for each cell",
};

/// Options shared with the `iperf3` adapter.
pub const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "mode",
        kind: OptKind::Choice(&["rr", "stream-write", "stream-read"]),
        default: "rr",
        help: "rr: request/response transactions; stream-write: messages to the peer (outgoing file \
               transfer); stream-read: messages from the peer (incoming file transfer)",
    },
    OptionSpec {
        name: "request",
        kind: OptKind::Size { min: 1, max: MAX_MESSAGE_BYTES as u64 },
        default: "1",
        help: "rr: bytes the client writes per transaction (k = 1024)",
    },
    OptionSpec {
        name: "response",
        kind: OptKind::Size { min: 1, max: MAX_MESSAGE_BYTES as u64 },
        default: "1",
        help: "rr: bytes the peer writes back per transaction (k = 1024)",
    },
    OptionSpec {
        name: "message",
        kind: OptKind::Size { min: 1, max: MAX_MESSAGE_BYTES as u64 },
        default: "30k",
        help: "streams: bytes per write (stream-write) or per full read (stream-read)",
    },
    OptionSpec {
        name: "connections",
        kind: OptKind::Int { min: 1, max: 4096 },
        default: "1",
        help: "TCP connections, one per client thread (uperf's nthreads with one connection each)",
    },
    OptionSpec {
        name: "peer",
        kind: OptKind::Str,
        default: "",
        help: "HOST:PORT of a `racehorse serve` peer; empty = start one on loopback for each cell",
    },
    OptionSpec {
        name: "token",
        kind: OptKind::Str,
        default: "",
        help: "token of a remote peer (default: $RACEHORSE_TOKEN); the loopback peer makes its own",
    },
    OptionSpec {
        name: "family",
        kind: OptKind::Choice(&["ipv4", "ipv6"]),
        default: "ipv4",
        help: "address family of the loopback peer (127.0.0.1 or ::1)",
    },
    OptionSpec {
        name: "nodelay",
        kind: OptKind::Bool,
        default: "true",
        help: "TCP_NODELAY on the client's sockets (the peer always sets it)",
    },
    OptionSpec {
        name: "sndbuf",
        kind: OptKind::Size { min: 0, max: 1 << 30 },
        default: "0",
        help: "SO_SNDBUF in bytes on both ends of loopback, the client's only with a remote peer; \
               0 = the kernel's autotuning",
    },
    OptionSpec {
        name: "rcvbuf",
        kind: OptKind::Size { min: 0, max: 1 << 30 },
        default: "0",
        help: "SO_RCVBUF in bytes, like sndbuf; 0 = the kernel's autotuning",
    },
    OptionSpec {
        name: "timeout_s",
        kind: OptKind::Int { min: 1, max: 3600 },
        default: "10",
        help: "seconds to wait for a connect and for each exchange before the cell fails",
    },
];

/// Where the peer is.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Loopback { v6: bool },
    Remote { addr: SocketAddr, token: String },
}

/// A cell's settings, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct NetConfig {
    pub setup: Setup,
    pub target: Target,
}

fn mode_of(word: &str) -> Result<Mode, EngineError> {
    match word {
        "rr" => Ok(Mode::Rr),
        "stream-write" => Ok(Mode::StreamToPeer),
        "stream-read" => Ok(Mode::StreamFromPeer),
        other => Err(EngineError::Usage(format!(
            "option 'mode': '{other}' is not one of rr, stream-write, stream-read"
        ))),
    }
}

fn size32(ctx: &CellContext, name: &str) -> Result<u32, EngineError> {
    let v = ctx.get_u64(name)?;
    u32::try_from(v).ok().filter(|&b| (1..=MAX_MESSAGE_BYTES).contains(&b)).ok_or_else(|| {
        EngineError::Usage(format!("option '{name}': {v} bytes is outside 1..{MAX_MESSAGE_BYTES} (1 MiB)"))
    })
}

/// Reads the remote peer's address and token.
fn remote(ctx: &CellContext, peer: &str) -> Result<Target, EngineError> {
    let addr = peer
        .to_socket_addrs()
        .map_err(|e| {
            EngineError::Usage(format!("option 'peer': '{peer}' is not HOST:PORT ({e}); e.g. 192.0.2.7:7420"))
        })?
        .next()
        .ok_or_else(|| EngineError::Usage(format!("option 'peer': '{peer}' has no address")))?;
    let mut token = ctx.spec.params.get("token").and_then(|v| v.as_str()).unwrap_or("").to_string();
    if token.is_empty() {
        token = ctx.env.get(TOKEN_ENV).cloned().or_else(|| std::env::var(TOKEN_ENV).ok()).unwrap_or_default();
    }
    if token.len() > protocol::MAX_TOKEN_BYTES {
        return Err(EngineError::Usage(format!(
            "the token is longer than {} bytes",
            protocol::MAX_TOKEN_BYTES
        )));
    }
    Ok(Target::Remote { addr, token })
}

/// Reads and checks a cell's options.
pub fn config(ctx: &CellContext) -> Result<NetConfig, EngineError> {
    let mode = mode_of(ctx.get_str("mode")?)?;
    let (request_bytes, response_bytes) = match mode {
        Mode::Rr => (size32(ctx, "request")?, size32(ctx, "response")?),
        Mode::StreamToPeer => (size32(ctx, "message")?, 1),
        Mode::StreamFromPeer => (1, size32(ctx, "message")?),
    };
    let setup = Setup {
        mode,
        request_bytes,
        response_bytes,
        connections: ctx.get_u64("connections")? as usize,
        nodelay: ctx.get_bool("nodelay")?,
        sndbuf_bytes: ctx.get_u64("sndbuf")?,
        rcvbuf_bytes: ctx.get_u64("rcvbuf")?,
        timeout: Duration::from_secs(ctx.get_u64("timeout_s")?.max(1)),
    };
    let peer = ctx.spec.params.get("peer").and_then(|v| v.as_str()).unwrap_or("").trim().to_string();
    let target = if peer.is_empty() {
        Target::Loopback { v6: ctx.get_str("family")? == "ipv6" }
    } else {
        remote(ctx, &peer)?
    };
    Ok(NetConfig { setup, target })
}

/// The unit of a cell: transactions for rr, bytes for streams.
fn unit_of(spec: &CellSpec) -> WorkUnit {
    match spec.params.get("mode").and_then(|v| v.as_str()) {
        Some("stream-write") | Some("stream-read") => WorkUnit::Bytes,
        _ => WorkUnit::Transactions,
    }
}

/// A fresh random token for the loopback peer.
fn random_token() -> String {
    let mut bytes = [0u8; 16];
    // SAFETY: getrandom writes at most 16 bytes into our buffer.
    let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    if n != bytes.len() as isize {
        // No entropy source: the time still keeps other local users from guessing easily.
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        bytes[..16].copy_from_slice(&t.as_nanos().to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Starts the loopback peer for one cell.
fn start_loopback(v6: bool, s: &Setup) -> Result<(Peer, String), EngineError> {
    let token = random_token();
    let cfg = PeerConfig {
        token: Some(token.clone().into_bytes()),
        max_connections: s.connections + 8,
        exchange_timeout: s.timeout.max(Duration::from_secs(30)),
        sndbuf_bytes: s.sndbuf_bytes,
        rcvbuf_bytes: s.rcvbuf_bytes,
        ..PeerConfig::default()
    };
    let listen: SocketAddr = if v6 { "[::1]:0" } else { "127.0.0.1:0" }.parse().expect("literal address");
    let peer = Peer::start(listen, cfg).map_err(|e| {
        let hint = if v6 { "; is IPv6 enabled (sysctl net.ipv6.conf.lo.disable_ipv6)?" } else { "" };
        EngineError::Failed(format!("net: cannot start the loopback peer on {listen}: {e}{hint}"))
    })?;
    Ok((peer, token))
}

/// What `Net` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "net",
    about:
        "uperf-like TCP load against racehorse's own peer: request/response transactions/s or stream bytes/s",
    area: "Network",
    unit: WorkUnit::Transactions,
    caps: Caps { needs_peer: true, ..Caps::NONE },
    options: OPTIONS,
    shortcuts: &[PEER_SHORTCUT],
};

impl Engine for Net {
    fn info(&self) -> &'static EngineInfo {
        &INFO
    }
    fn unit_for(&self, spec: &CellSpec) -> WorkUnit {
        unit_of(spec)
    }
    fn validate(&self, ctx: &CellContext) -> Result<(), EngineError> {
        config(ctx).map(|_| ())
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        let cfg = config(ctx)?;
        crate::support::fd_limit::raise_fd_limit(cfg.setup.connections * 2 + 64);
        let (peer, addr, token) = match &cfg.target {
            Target::Loopback { v6 } => {
                let (peer, token) = start_loopback(*v6, &cfg.setup)?;
                let addr = peer.addr();
                (Some(peer), addr, token)
            }
            Target::Remote { addr, token } => (None, *addr, token.clone()),
        };
        Ok(Box::new(NetCell { setup: cfg.setup, peer, addr, token }))
    }
}

struct NetCell {
    setup: Setup,
    peer: Option<Peer>,
    addr: SocketAddr,
    token: String,
}

impl NetCell {
    /// Opens every connection; the first failure fails the cell.
    fn open_all(&self) -> Result<Vec<std::net::TcpStream>, EngineError> {
        (0..self.setup.connections)
            .map(|_| client::open(&self.addr, &self.setup, self.token.as_bytes()))
            .collect()
    }

    /// Runs the connections' threads through the window; returns the peer's CPU over it.
    fn drive_all(
        &self,
        streams: Vec<std::net::TcpStream>,
        ctl: &Control,
        rec: &Recorder,
    ) -> Result<Option<CpuTime>, EngineError> {
        let errors = FirstError::default();
        let (watchdog, progress) = self.watchdog(&streams)?;
        let clients_done = AtomicBool::new(false);
        let stalled = |t: Duration| {
            errors.fail(EngineError::Failed(format!(
                "net: the peer at {} answered no request for {} s (timeout_s); is it overloaded or stopped?",
                self.addr,
                t.as_secs()
            )))
        };
        let mut edges: (Option<CpuTime>, Option<CpuTime>) = (None, None);
        let driven = std::thread::scope(|scope| {
            let (wd, clients_done, stalled) = (&watchdog, &clients_done, &stalled);
            scope.spawn(move || wd.run(ctl, clients_done, stalled));
            let clients = self.spawn_clients(scope, streams, progress, ctl, rec, &errors);
            let peer = self.peer.as_ref();
            let driven = ctl.drive_window_observed(&errors.failed, &mut |phase| {
                let cpu = peer.map(Peer::cpu);
                match phase {
                    crate::Phase::Measure => edges.0 = cpu,
                    _ => edges.1 = cpu,
                }
            });
            for h in clients {
                let _ = h.join();
            }
            clients_done.store(true, Ordering::Release);
            driven
        });
        if let Some(e) = errors.into_error() {
            return Err(e);
        }
        driven?;
        Ok(match edges {
            (Some(a), Some(b)) => Some(b.since(a)),
            _ => None,
        })
    }

    /// A progress counter for each connection, and a watchdog over the rr connections (a clone
    /// of each socket), which fails the cell when one makes no progress for `timeout_s`.
    fn watchdog(
        &self,
        streams: &[std::net::TcpStream],
    ) -> Result<(client::Watchdog, Vec<Arc<AtomicU64>>), EngineError> {
        let mut watchdog = client::Watchdog::new(self.setup.timeout);
        let mut progress = Vec::new();
        for stream in streams {
            let p = Arc::new(AtomicU64::new(0));
            if self.setup.mode == Mode::Rr {
                let clone = stream
                    .try_clone()
                    .map_err(|e| client::exchange_error(&self.addr, self.setup.timeout, e))?;
                watchdog.watch(clone, p.clone());
            }
            progress.push(p);
        }
        Ok((watchdog, progress))
    }

    /// One client thread per connection in `scope`, each driving its connection through the
    /// window and recording into `rec`; a thread that cannot start fails the cell.
    fn spawn_clients<'scope, 'env>(
        &'env self,
        scope: &'scope std::thread::Scope<'scope, 'env>,
        streams: Vec<std::net::TcpStream>,
        progress: Vec<Arc<AtomicU64>>,
        ctl: &'env Control,
        rec: &'env Recorder,
        errors: &'env FirstError,
    ) -> Vec<std::thread::ScopedJoinHandle<'scope, ()>> {
        let mut clients = Vec::new();
        for (stream, progress) in streams.into_iter().zip(progress) {
            let s = &self.setup;
            let body = move || {
                let mut meter = crate::WorkerMeter::new();
                if let Err(e) = client::drive(stream, s, ctl, &errors.failed, &mut meter, &progress) {
                    errors.fail(client::exchange_error(&self.addr, s.timeout, e));
                }
                meter.finish(rec);
            };
            let spawned = std::thread::Builder::new()
                .name("net-client".into())
                .stack_size(128 << 10)
                .spawn_scoped(scope, body);
            match spawned {
                Ok(h) => clients.push(h),
                Err(e) => {
                    errors.fail(EngineError::Failed(format!("net: cannot start a client thread: {e}")));
                    break;
                }
            }
        }
        clients
    }
}

/// The first error of a cell's threads, and the flag that tells all of them to stop.
#[derive(Default)]
struct FirstError {
    failed: AtomicBool,
    error: Mutex<Option<EngineError>>,
}

impl FirstError {
    /// Raises the flag and keeps `e` if it is the first error.
    fn fail(&self, e: EngineError) {
        self.failed.store(true, Ordering::Relaxed);
        self.error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
    }

    fn into_error(self) -> Option<EngineError> {
        self.error.into_inner().unwrap_or_else(|p| p.into_inner())
    }
}

/// The figures the engine adds: counts the runner turns into system CPU per transaction and
/// per MB, the client's and the peer's CPU per transaction and per MB, bytes/s each way.
fn record_extras(rec: &Recorder, mode: Mode, client: CpuTime, peer: Option<CpuTime>, window_s: f64) {
    let t = rec.totals();
    let mb = (t.bytes_read + t.bytes_written) as f64 / 1e6;
    let (count_name, count) = match mode {
        Mode::Rr => ("tx", t.units),
        _ => ("msg", t.ops as f64),
    };
    rec.set_extra(&format!("n_{count_name}"), count);
    rec.set_extra("n_mb", mb);
    let per = |who: &str, cpu: CpuTime| {
        if count > 0.0 {
            rec.set_extra(&format!("{who}_cpu_us_per_{count_name}"), cpu.total_s() * 1e6 / count);
        }
        if mb > 0.0 {
            rec.set_extra(&format!("{who}_cpu_us_per_mb"), cpu.total_s() * 1e6 / mb);
        }
    };
    per("client", client);
    if let Some(p) = peer {
        per("peer", p);
    }
    if window_s > 0.0 {
        rec.set_extra("client_to_peer_bytes_per_s", t.bytes_written as f64 / window_s);
        rec.set_extra("peer_to_client_bytes_per_s", t.bytes_read as f64 / window_s);
        rec.set_extra("uperf_bits_per_s", (t.bytes_read + t.bytes_written) as f64 * 8.0 / window_s);
    }
}

impl Workload for NetCell {
    fn run(&mut self, ctl: &Control, rec: &Recorder) -> Result<(), EngineError> {
        let streams = self.open_all().inspect_err(|_| ctl.stop())?;
        let peer_cpu = self.drive_all(streams, ctl, rec)?;
        let client_cpu = rec.totals().workload_cpu;
        let client = CpuTime { user_s: client_cpu.user_s, kernel_s: client_cpu.kernel_s };
        if let Some(p) = peer_cpu {
            // Both ends run in this process: the workload's CPU is theirs together.
            rec.submit(crate::WorkerStats { cpu: p, ..Default::default() });
        }
        let window_s = ctl.window().map(|w| w.0 as f64 / 1e9).unwrap_or(0.0);
        record_extras(rec, self.setup.mode, client, peer_cpu, window_s);
        rec.set_extra("connections", self.setup.connections as f64);
        Ok(())
    }

    fn cleanup(mut self: Box<Self>) -> Result<(), EngineError> {
        if let Some(mut p) = self.peer.take() {
            p.stop();
        }
        Ok(())
    }
}
