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
//!
//! The option table and reading it into a cell's settings are shared with the `iperf3`
//! adapter (`crate::support::net_options`).

pub(crate) mod client;
pub mod peer;
pub mod protocol;
pub(crate) mod sockets;
#[cfg(test)]
mod tests;

use crate::info::EngineInfo;
use crate::support::net_options::{config, Mode, Setup, Target, OPTIONS, PEER_SHORTCUT};
use crate::support::pace::{self, PaceSpec, PaceTally, Pacer};
use crate::{
    AreaRule, Caps, CellContext, Control, Engine, EngineError, Figure, OptionSpec, Recorder, SummaryArea,
    Workload,
};
use peer::{Peer, PeerConfig};
use racehorse_core::{CellSpec, WorkUnit};
use racehorse_machine::rusage::CpuTime;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct Net;

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

/// The shared option table with `rate` and `qos` (rr transactions can be paced).
static NET_OPTIONS: [OptionSpec; OPTIONS.len() + 2] = pace::with_pace_options(OPTIONS);

/// A cell's pacing, checked: rr only, and slow enough for the stall watchdog.
fn pace_of(ctx: &CellContext, s: &Setup) -> Result<PaceSpec, EngineError> {
    let pace = PaceSpec::of(ctx)?;
    if pace.active() && s.mode != Mode::Rr {
        return Err(EngineError::Usage(
            "net: rate and qos pace request/response transactions: use them with mode=rr (streams run flat out)"
                .into(),
        ));
    }
    if let Some(rate) = pace.rate_per_s {
        let gap_s = s.connections as f64 / rate;
        if gap_s * 2.0 > s.timeout.as_secs_f64() {
            return Err(EngineError::Usage(format!(
                "net: rate={rate} over {} connection(s) leaves {gap_s:.1} s between one connection's \
                 transactions, more than half of timeout_s={}: raise rate or timeout_s, or use fewer connections",
                s.connections,
                s.timeout.as_secs()
            )));
        }
    }
    Ok(pace)
}

/// The counts the runner turns into system CPU per transaction and per MB, each end's CPU,
/// bytes/s each way, then pace's figures.
const OWN_FIGURES: &[Figure] = &[
    Figure::info("n_*", "* counted", "count"),
    Figure::info("n_mb", "MB moved", "MB"),
    Figure::info("*_cpu_us_per_mb", "* CPU per MB", "µs"),
    Figure::info("*_cpu_us_per_*", "* CPU per *", "µs"),
    Figure::info("client_to_peer_bytes_per_s", "client to peer", "bytes/s"),
    Figure::info("peer_to_client_bytes_per_s", "peer to client", "bytes/s"),
    Figure::info("uperf_bits_per_s", "both ways (as uperf counts)", "bits/s"),
    Figure::info("connections", "connections", "connections"),
];

static FIGURES: [Figure; OWN_FIGURES.len() + pace::FIGURES.len()] = pace::with_pace_figures(OWN_FIGURES);

/// What `Net` is, for the binary, the help and the docs.
static INFO: EngineInfo = EngineInfo {
    name: "net",
    about:
        "uperf-like TCP load against racehorse's own peer: request/response transactions/s or stream bytes/s",
    area: "Network",
    summary_area: AreaRule::Fixed(SummaryArea::Networking),
    unit: WorkUnit::Transactions,
    caps: Caps { needs_peer: true, paced: true, ..Caps::NONE },
    options: &NET_OPTIONS,
    figures: &FIGURES,
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
        pace_of(ctx, &config(ctx)?.setup).map(|_| ())
    }
    fn prepare(&self, ctx: &CellContext) -> Result<Box<dyn Workload>, EngineError> {
        let cfg = config(ctx)?;
        let pace = pace_of(ctx, &cfg.setup)?;
        crate::support::fd_limit::raise_fd_limit(cfg.setup.connections * 2 + 64);
        let (peer, addr, token) = match &cfg.target {
            Target::Loopback { v6 } => {
                let (peer, token) = start_loopback(*v6, &cfg.setup)?;
                let addr = peer.addr();
                (Some(peer), addr, token)
            }
            Target::Remote { addr, token } => (None, *addr, token.clone()),
        };
        Ok(Box::new(NetCell { setup: cfg.setup, peer, addr, token, pace, tally: PaceTally::default() }))
    }
}

struct NetCell {
    setup: Setup,
    peer: Option<Peer>,
    addr: SocketAddr,
    token: String,
    pace: PaceSpec,
    tally: PaceTally,
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
        let n = streams.len();
        for (i, (stream, progress)) in streams.into_iter().zip(progress).enumerate() {
            let s = &self.setup;
            let body = move || {
                let mut meter = crate::WorkerMeter::new();
                let mut pacer = Pacer::new(&self.pace, i, n, ctl);
                let driven = client::drive(stream, s, ctl, &errors.failed, &mut meter, &mut pacer, &progress);
                if let Err(e) = driven {
                    errors.fail(client::exchange_error(&self.addr, s.timeout, e));
                }
                meter.finish(rec);
                pacer.finish(&self.tally);
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
        pace::record(rec, &self.pace, &self.tally, ctl);
        Ok(())
    }

    fn cleanup(mut self: Box<Self>) -> Result<(), EngineError> {
        if let Some(mut p) = self.peer.take() {
            p.stop();
        }
        Ok(())
    }
}
