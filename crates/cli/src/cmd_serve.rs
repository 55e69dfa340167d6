//! `racehorse serve`: runs the `net` workload's peer in the foreground until Ctrl-C or
//! SIGTERM. It speaks only the benchmark protocol, never runs commands, and refuses to listen
//! beyond loopback without a token.

use crate::args::ServeArgs;
use crate::{CmdResult, Failure};
use racehorse_engines::net::peer::{Peer, PeerConfig};
use racehorse_engines::net::protocol::MAX_TOKEN_BYTES;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The address to bind, checked against the token rule.
fn listen_addr(a: &ServeArgs) -> Result<SocketAddr, Failure> {
    let addr = a
        .listen
        .to_socket_addrs()
        .map_err(|e| {
            Failure::usage(format!("--listen '{}': not ADDR:PORT ({e}); e.g. 0.0.0.0:7420", a.listen))
        })?
        .next()
        .ok_or_else(|| Failure::usage(format!("--listen '{}' has no address", a.listen)))?;
    let token = a.token.as_deref().unwrap_or("");
    if token.len() > MAX_TOKEN_BYTES {
        return Err(Failure::usage(format!("--token is longer than {MAX_TOKEN_BYTES} bytes")));
    }
    if token.is_empty() && !addr.ip().is_loopback() {
        return Err(Failure::usage(format!(
            "listening on {addr} (beyond loopback) needs a shared token: pass --token T or set RACEHORSE_TOKEN, \
             and give the same token to `racehorse run net --peer` on the client"
        )));
    }
    if a.max_connections == 0 || a.timeout_s == 0 {
        return Err(Failure::usage("--max-connections and --timeout-s must be at least 1"));
    }
    Ok(addr)
}

pub fn serve(a: &ServeArgs) -> CmdResult {
    let addr = listen_addr(a)?;
    let token = a.token.clone().filter(|t| !t.is_empty());
    let cfg = PeerConfig {
        token: token.as_ref().map(|t| t.as_bytes().to_vec()),
        max_connections: a.max_connections,
        exchange_timeout: Duration::from_secs(a.timeout_s),
        sndbuf_bytes: a.sndbuf,
        rcvbuf_bytes: a.rcvbuf,
        ..PeerConfig::default()
    };
    let stop = racehorse_machine::install_signal_flag().map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut peer = Peer::start(addr, cfg).map_err(|e| {
        Failure::from(anyhow::anyhow!(
            "cannot listen on {addr}: {e} (is the port in use? choose another with --listen)"
        ))
    })?;
    let guard = if token.is_some() { "token required" } else { "no token: loopback only" };
    eprintln!(
        "racehorse serve: listening on {} ({guard}, at most {} connections); Ctrl-C stops",
        peer.addr(),
        a.max_connections
    );
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
    peer.stop();
    let c = peer.counts();
    eprintln!(
        "racehorse serve: stopped; {} connections accepted, {} served, refused: {} bad hello, {} bad token, {} busy",
        c.accepted, c.served, c.bad_hello, c.bad_token, c.busy
    );
    Ok(0)
}
