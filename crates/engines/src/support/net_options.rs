//! What the native `net` engine and the `iperf3` adapter share, so one suite runs both on the
//! same cells: the option table, the `--peer` shortcut, reading a cell's options into its
//! connection settings and peer ([`config`]), and the protocol's vocabulary those settings
//! use (the [`Mode`] and the size and token limits; the wire format is `net::protocol`'s).

use crate::info::{Shortcut, ShortcutForm};
use crate::{CellContext, EngineError, OptKind, OptionSpec};
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// The longest token accepted.
pub const MAX_TOKEN_BYTES: usize = 64;
/// The largest request, response or stream message the peer accepts (1 MiB).
pub const MAX_MESSAGE_BYTES: u32 = 1 << 20;

/// What a connection does after the hello.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Rr,
    StreamToPeer,
    StreamFromPeer,
}

/// One cell's connection settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    pub mode: Mode,
    /// Bytes the client writes per transaction (rr) or per message (stream-write).
    pub request_bytes: u32,
    /// Bytes the peer writes per transaction (rr) or per message (stream-read).
    pub response_bytes: u32,
    pub connections: usize,
    pub nodelay: bool,
    pub sndbuf_bytes: u64,
    pub rcvbuf_bytes: u64,
    /// Deadline for connecting and for each read or write.
    pub timeout: Duration,
}

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

/// The options of a `net` or `iperf3` cell.
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
    if token.len() > MAX_TOKEN_BYTES {
        return Err(EngineError::Usage(format!("the token is longer than {} bytes", MAX_TOKEN_BYTES)));
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
