//! A small PostgreSQL client over TCP, TLS or a Unix socket (see `transport`): startup and
//! authentication (trust, cleartext, md5, SCRAM-SHA-256), the simple query protocol, and
//! server-side prepared statements through the extended protocol (Parse once;
//! Bind/Execute/Sync per call). Every blocking step has a timeout; a dead or silent server
//! becomes an error, never a hang.

use super::auth::{md5_password, Scram};
pub use super::config::{PgConfig, SslMode};
use super::transport::{self, Stream, TlsUse};
use super::wire::{self, tag, Body, Param, ServerError};
use std::io::{BufReader, Write};

/// What went wrong talking to the server.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    #[error("cannot connect to PostgreSQL at {addr}: {reason}")]
    Connect { addr: String, reason: String },
    #[error("PostgreSQL authentication failed for user '{user}': {reason}")]
    Auth { user: String, reason: String },
    /// The server answered with an ErrorResponse (the connection stays usable).
    #[error("PostgreSQL: {0}")]
    Server(ServerError),
    #[error("lost the PostgreSQL connection: {0}")]
    Io(#[from] std::io::Error),
    #[error("PostgreSQL protocol error: {0}")]
    Protocol(String),
    #[error("bad PostgreSQL connection string: {0}")]
    Dsn(String),
}

impl PgError {
    /// The SQLSTATE of a server error.
    pub fn sqlstate(&self) -> Option<&str> {
        match self {
            PgError::Server(e) => Some(&e.code),
            _ => None,
        }
    }
}

/// One open connection.
pub struct PgConn {
    stream: BufReader<Stream>,
    out: Vec<u8>,
    body: Vec<u8>,
    /// Rows of the last call, as text (only kept when asked for).
    pub rows: Vec<Vec<Option<String>>>,
}

/// What one call returned: rows seen and the row count of the command tag.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    pub rows: u64,
    pub affected: u64,
}

impl PgConn {
    /// Connects (with TLS as the sslmode says), authenticates and waits until the server is
    /// ready for queries. sslmode=allow tries plain first and TLS when the server refuses the
    /// plain login.
    pub fn connect(cfg: &PgConfig) -> Result<PgConn, PgError> {
        let first = match cfg.sslmode {
            SslMode::Disable | SslMode::Allow => TlsUse::Off,
            SslMode::Prefer => TlsUse::Try,
            _ => TlsUse::Must,
        };
        match Self::connect_with(cfg, first) {
            Err(e @ PgError::Auth { .. }) if cfg.sslmode == SslMode::Allow && cfg.socket_path().is_none() => {
                Self::connect_with(cfg, TlsUse::Must).map_err(|_| e)
            }
            other => other,
        }
    }

    fn connect_with(cfg: &PgConfig, tls: TlsUse) -> Result<PgConn, PgError> {
        let addr = cfg.addr();
        let conn_err = |reason: String| PgError::Connect { addr: addr.clone(), reason };
        let mut c = PgConn {
            stream: BufReader::with_capacity(64 << 10, transport::open(cfg, tls)?),
            out: Vec::new(),
            body: Vec::new(),
            rows: Vec::new(),
        };
        wire::startup(
            &mut c.out,
            &[("user", &cfg.user), ("database", &cfg.dbname), ("client_encoding", "UTF8")],
        );
        c.flush()?;
        c.authenticate(cfg).map_err(|e| match e {
            PgError::Server(s) if s.code.starts_with("28") => {
                PgError::Auth { user: cfg.user.clone(), reason: s.to_string() }
            }
            PgError::Server(s) => conn_err(s.to_string()),
            PgError::Io(io) => conn_err(format!("the server closed the connection during startup: {io}")),
            other => other,
        })?;
        c.wait_ready()?;
        c.stream.get_ref().set_read_timeout(Some(cfg.io_timeout))?;
        Ok(c)
    }

    /// Whether the connection is encrypted (TLS).
    pub fn is_tls(&self) -> bool {
        self.stream.get_ref().is_tls()
    }

    fn flush(&mut self) -> Result<(), PgError> {
        let stream = self.stream.get_mut();
        stream.write_all(&self.out)?;
        stream.flush()?;
        self.out.clear();
        Ok(())
    }

    fn read(&mut self) -> Result<u8, PgError> {
        Ok(wire::read_message(&mut self.stream, &mut self.body)?)
    }

    fn need_password<'a>(cfg: &'a PgConfig, method: &str) -> Result<&'a str, PgError> {
        cfg.password.as_deref().ok_or_else(|| PgError::Auth {
            user: cfg.user.clone(),
            reason: format!(
                "the server asks for a password ({method}) and none was given; add it to the DSN"
            ),
        })
    }

    /// Answers the server's authentication requests until AuthenticationOk.
    fn authenticate(&mut self, cfg: &PgConfig) -> Result<(), PgError> {
        let mut scram: Option<Scram> = None;
        loop {
            let t = self.read()?;
            if t == tag::ERROR {
                return Err(PgError::Server(wire::parse_error(&self.body)));
            }
            if t != tag::AUTH {
                return Err(PgError::Protocol(format!(
                    "expected authentication, got '{}'",
                    t.escape_ascii()
                )));
            }
            let mut b = Body::new(&self.body);
            let code = b.i32().ok_or_else(|| PgError::Protocol("short authentication message".into()))?;
            match code {
                0 => return Ok(()),
                3 => {
                    let pw = Self::need_password(cfg, "cleartext")?.to_string();
                    wire::password(&mut self.out, &pw);
                }
                5 => {
                    let salt = b.rest();
                    let salt: [u8; 4] = salt.try_into().map_err(|_| PgError::Protocol("md5 salt is not 4 bytes".into()))?;
                    let answer = md5_password(&cfg.user, Self::need_password(cfg, "md5")?, salt);
                    wire::password(&mut self.out, &answer);
                }
                10 => {
                    let mut mechs = Vec::new();
                    while let Some(m) = b.cstr().filter(|m| !m.is_empty()) {
                        mechs.push(m.to_string());
                    }
                    if !mechs.iter().any(|m| m == "SCRAM-SHA-256") {
                        return Err(PgError::Protocol(format!("no supported SASL mechanism among {mechs:?}")));
                    }
                    let s = Scram::new(Self::need_password(cfg, "SCRAM-SHA-256")?);
                    wire::sasl_initial(&mut self.out, "SCRAM-SHA-256", &s.client_first());
                    scram = Some(s);
                }
                11 | 12 => {
                    let s = scram.as_mut().ok_or_else(|| PgError::Protocol("SASL data before SASL start".into()))?;
                    let data = b.rest();
                    let auth_err = |reason: String| PgError::Auth { user: cfg.user.clone(), reason };
                    if code == 11 {
                        let fin = s.client_final(data).map_err(auth_err)?;
                        wire::sasl_response(&mut self.out, &fin);
                    } else {
                        s.verify_server(data).map_err(auth_err)?;
                        continue;
                    }
                }
                other => {
                    return Err(PgError::Protocol(format!(
                        "authentication method {other} is not supported (use trust, password, md5 or scram-sha-256)"
                    )))
                }
            }
            self.flush()?;
        }
    }

    /// Reads until ReadyForQuery, returning the first error the server sent on the way.
    fn wait_ready(&mut self) -> Result<Outcome, PgError> {
        self.collect(false)
    }

    /// Reads the answer to one batch up to ReadyForQuery: rows, command tag, first error.
    fn collect(&mut self, keep_rows: bool) -> Result<Outcome, PgError> {
        let mut out = Outcome::default();
        let mut error = None;
        loop {
            match self.read()? {
                tag::READY => break,
                tag::DATA_ROW => {
                    out.rows += 1;
                    if keep_rows {
                        let row = wire::parse_data_row(&self.body)
                            .ok_or_else(|| PgError::Protocol("malformed data row".into()))?;
                        self.rows.push(
                            row.iter().map(|c| c.map(|v| String::from_utf8_lossy(v).into_owned())).collect(),
                        );
                    }
                }
                tag::COMMAND_COMPLETE => {
                    let text = Body::new(&self.body).cstr().unwrap_or("");
                    out.affected += wire::command_rows(text).unwrap_or(0);
                }
                tag::ERROR => {
                    error.get_or_insert_with(|| wire::parse_error(&self.body));
                }
                tag::AUTH => return Err(PgError::Protocol("unexpected authentication request".into())),
                _ => {} // notices, parameter status, parse/bind complete, row descriptions
            }
        }
        match error {
            Some(e) => Err(PgError::Server(e)),
            None => Ok(out),
        }
    }

    /// Runs SQL through the simple protocol (several statements allowed); rows are dropped.
    pub fn execute(&mut self, sql: &str) -> Result<Outcome, PgError> {
        wire::query(&mut self.out, sql);
        self.flush()?;
        self.collect(false)
    }

    /// Runs one query through the simple protocol and returns its rows as text.
    pub fn query_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, PgError> {
        self.rows.clear();
        wire::query(&mut self.out, sql);
        self.flush()?;
        self.collect(true)?;
        Ok(std::mem::take(&mut self.rows))
    }

    /// Prepares a named server-side statement (parameters $1…, types inferred).
    pub fn prepare(&mut self, name: &str, sql: &str) -> Result<(), PgError> {
        wire::parse(&mut self.out, name, sql);
        wire::sync(&mut self.out);
        self.flush()?;
        self.collect(false).map(|_| ())
    }

    /// Runs a prepared statement once: Bind, Execute, Sync, one round trip.
    pub fn run_prepared(&mut self, name: &str, params: &[Param]) -> Result<Outcome, PgError> {
        wire::bind(&mut self.out, name, params);
        wire::execute(&mut self.out);
        wire::sync(&mut self.out);
        self.flush()?;
        self.collect(false)
    }

    /// Like [`PgConn::run_prepared`], keeping the rows as text.
    pub fn query_prepared(
        &mut self,
        name: &str,
        params: &[Param],
    ) -> Result<Vec<Vec<Option<String>>>, PgError> {
        self.rows.clear();
        wire::bind(&mut self.out, name, params);
        wire::execute(&mut self.out);
        wire::sync(&mut self.out);
        self.flush()?;
        self.collect(true)?;
        Ok(std::mem::take(&mut self.rows))
    }
}

impl Drop for PgConn {
    fn drop(&mut self) {
        wire::terminate(&mut self.out);
        let stream = self.stream.get_mut();
        let _ = stream.write_all(&self.out).and_then(|()| stream.flush());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn unreachable_server_is_a_clear_error_within_the_timeout() {
        // A port nobody listens on: bind one, note it, close it.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let cfg = PgConfig::parse(&format!("postgres://x@127.0.0.1:{port}/x?connect_timeout=2")).unwrap();
        let t0 = std::time::Instant::now();
        let e = PgConn::connect(&cfg).err().expect("nobody listens");
        assert!(t0.elapsed() < Duration::from_secs(3));
        assert!(e.to_string().contains("cannot connect to PostgreSQL at 127.0.0.1:"), "{e}");
    }

    #[test]
    fn a_silent_server_times_out() {
        // Accepts the connection and never answers the startup message.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let holder = std::thread::spawn(move || {
            if let Ok((s, _)) = l.accept() {
                std::thread::sleep(Duration::from_secs(3));
                drop(s);
            }
        });
        let cfg = PgConfig::parse(&format!("postgres://x@127.0.0.1:{port}/x?connect_timeout=1")).unwrap();
        let t0 = std::time::Instant::now();
        let e = PgConn::connect(&cfg).err().expect("silent server");
        assert!(t0.elapsed() < Duration::from_millis(2500), "{:?}", t0.elapsed());
        assert!(e.to_string().contains("cannot connect"), "{e}");
        let _ = holder.join();
    }
}
