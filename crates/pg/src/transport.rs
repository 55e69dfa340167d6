//! The PostgreSQL client's byte stream: TCP, a Unix socket (host = a directory), or TLS over
//! TCP after an SSLRequest, as libpq does it. Every blocking step has a timeout.

use super::client::PgError;
use super::config::PgConfig;
use super::tls;
use rustls::{ClientConnection, StreamOwned};
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// SSLRequest's code: 1234 in the high half, 5679 in the low half.
const SSL_REQUEST: i32 = 80_877_103;

/// A connected stream to the server.
pub enum Stream {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

impl Stream {
    /// Sets the socket's read timeout (for TLS, the TCP socket's under it).
    pub fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => s.set_read_timeout(t),
            Stream::Unix(s) => s.set_read_timeout(t),
            Stream::Tls(s) => s.get_ref().set_read_timeout(t),
        }
    }

    /// Whether the bytes travel encrypted.
    pub fn is_tls(&self) -> bool {
        matches!(self, Stream::Tls(_))
    }
}

/// What to do about TLS on a TCP connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsUse {
    /// Plain.
    Off,
    /// TLS when the server offers it and the handshake works, else plain (sslmode=prefer).
    Try,
    /// TLS or an error.
    Must,
}

/// Opens the stream: a Unix socket when the host is a directory (TLS is not offered there, so
/// an sslmode that requires it is an error), else TCP with TLS as `tls` says. Reads and writes
/// time out after the connect timeout (the caller sets the I/O timeout once logged in).
pub fn open(cfg: &PgConfig, tls: TlsUse) -> Result<Stream, PgError> {
    let conn_err = |reason: String| PgError::Connect { addr: cfg.addr(), reason };
    if let Some(path) = cfg.socket_path() {
        if cfg.sslmode.requires_tls() {
            return Err(conn_err(format!(
                "sslmode={} asks for TLS, which PostgreSQL does not offer over a Unix socket; \
                 connect over TCP (a host name or address) or leave sslmode out",
                cfg.sslmode.as_str()
            )));
        }
        let s = UnixStream::connect(&path).map_err(|e| {
            conn_err(format!("{e} (is the server running with unix_socket_directories = '{}'?)", cfg.host))
        })?;
        s.set_read_timeout(Some(cfg.connect_timeout)).map_err(|e| conn_err(e.to_string()))?;
        s.set_write_timeout(Some(cfg.io_timeout)).map_err(|e| conn_err(e.to_string()))?;
        return Ok(Stream::Unix(s));
    }
    let mut tcp = tcp_connect(cfg)?;
    if tls == TlsUse::Off {
        return Ok(Stream::Tcp(tcp));
    }
    let mut request = Vec::with_capacity(8);
    request.extend_from_slice(&8i32.to_be_bytes());
    request.extend_from_slice(&SSL_REQUEST.to_be_bytes());
    tcp.write_all(&request).map_err(|e| conn_err(format!("sending SSLRequest: {e}")))?;
    let mut answer = [0u8; 1];
    tcp.read_exact(&mut answer)
        .map_err(|e| conn_err(format!("waiting for the answer to SSLRequest: {e}")))?;
    match answer[0] {
        b'S' => match handshake(cfg, tcp) {
            Ok(s) => Ok(s),
            // libpq's prefer: a failed TLS attempt is followed by a plain connection.
            Err(_) if tls == TlsUse::Try => Ok(Stream::Tcp(tcp_connect(cfg)?)),
            Err(e) => Err(conn_err(format!("TLS handshake failed: {e}"))),
        },
        b'N' if tls == TlsUse::Try => Ok(Stream::Tcp(tcp)),
        b'N' => Err(conn_err(format!(
            "the server does not offer TLS (its ssl setting is off) and sslmode={} requires it",
            cfg.sslmode.as_str()
        ))),
        other => {
            Err(PgError::Protocol(format!("unexpected answer '{}' to SSLRequest", other.escape_ascii())))
        }
    }
}

fn tcp_connect(cfg: &PgConfig) -> Result<TcpStream, PgError> {
    let conn_err = |reason: String| PgError::Connect { addr: cfg.addr(), reason };
    let addrs: Vec<_> = (cfg.host.as_str(), cfg.port)
        .to_socket_addrs()
        .map_err(|e| conn_err(format!("cannot resolve the host: {e}")))?
        .collect();
    // Each address in turn, as libpq does (localhost may be ::1 first and 127.0.0.1 next).
    let mut last = None;
    let mut tcp = None;
    for sock in &addrs {
        match TcpStream::connect_timeout(sock, cfg.connect_timeout) {
            Ok(s) => {
                tcp = Some(s);
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    let tcp = match (tcp, last) {
        (Some(s), _) => s,
        (None, Some(e)) => {
            return Err(conn_err(format!(
                "{e} (is the server running and listening on TCP at this address and port?)"
            )))
        }
        (None, None) => return Err(conn_err("the host has no address".into())),
    };
    tcp.set_nodelay(true).map_err(|e| conn_err(e.to_string()))?;
    // The whole handshake must fit the connect timeout; then the I/O timeout applies.
    tcp.set_read_timeout(Some(cfg.connect_timeout)).map_err(|e| conn_err(e.to_string()))?;
    tcp.set_write_timeout(Some(cfg.io_timeout)).map_err(|e| conn_err(e.to_string()))?;
    Ok(tcp)
}

/// The TLS handshake over `tcp`, finished before returning so certificate errors show here.
fn handshake(cfg: &PgConfig, mut tcp: TcpStream) -> Result<Stream, String> {
    let config = tls::client_config(cfg)?;
    let name = tls::server_name(cfg)?;
    let mut conn = ClientConnection::new(config, name).map_err(|e| e.to_string())?;
    while conn.is_handshaking() {
        conn.complete_io(&mut tcp).map_err(|e| e.to_string())?;
    }
    Ok(Stream::Tls(Box::new(StreamOwned::new(conn, tcp))))
}
