//! A small PostgreSQL client over TCP: connection strings, startup and authentication (trust,
//! cleartext, md5, SCRAM-SHA-256), the simple query protocol, and server-side prepared
//! statements through the extended protocol (Parse once; Bind/Execute/Sync per call). Every
//! blocking step has a timeout; a dead or silent server becomes an error, never a hang.

use super::auth::{md5_password, Scram};
use super::wire::{self, tag, Body, Param, ServerError};
use std::io::{BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Where and as whom to connect.
#[derive(Debug, Clone, PartialEq)]
pub struct PgConfig {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: Option<String>,
    pub dbname: String,
    pub connect_timeout: Duration,
    /// Longest wait for any single read or write on the socket.
    pub io_timeout: Duration,
}

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

/// Percent-decoding for URI parts.
fn unescape(s: &str) -> Result<String, PgError> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok());
            out.push(hex.ok_or_else(|| PgError::Dsn(format!("bad %-escape in '{s}'")))?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| PgError::Dsn(format!("'{s}' is not UTF-8")))
}

impl PgConfig {
    /// Parses `postgres://user[:password]@host[:port][/dbname]` or libpq's
    /// `host=… port=… user=… password=… dbname=…` form. Defaults: 127.0.0.1:5432, user and
    /// database "postgres", connect timeout 5 s, I/O timeout 30 s.
    pub fn parse(dsn: &str) -> Result<PgConfig, PgError> {
        let mut c = PgConfig {
            host: "127.0.0.1".into(),
            port: 5432,
            user: "postgres".into(),
            password: None,
            dbname: String::new(),
            connect_timeout: Duration::from_secs(5),
            io_timeout: Duration::from_secs(30),
        };
        let mut set = |k: &str, v: String| -> Result<(), PgError> {
            match k {
                "host" | "hostaddr" if !v.is_empty() => c.host = v,
                "port" if !v.is_empty() => {
                    c.port = v.parse().map_err(|_| PgError::Dsn(format!("port '{v}' is not a number")))?
                }
                "user" => c.user = v,
                "password" => c.password = Some(v),
                "dbname" => c.dbname = v,
                "connect_timeout" => {
                    let s: u64 = v.parse().map_err(|_| PgError::Dsn(format!("connect_timeout '{v}'")))?;
                    c.connect_timeout = Duration::from_secs(s.max(1));
                }
                "host" | "hostaddr" | "port" | "sslmode" | "application_name" => {}
                _ => return Err(PgError::Dsn(format!("unknown key '{k}'"))),
            }
            Ok(())
        };
        if let Some(rest) = dsn.strip_prefix("postgres://").or_else(|| dsn.strip_prefix("postgresql://")) {
            let (main, query) = rest.split_once('?').unwrap_or((rest, ""));
            let (auth, hostpart) = main.rsplit_once('@').unwrap_or(("", main));
            let (hostport, db) = hostpart.split_once('/').unwrap_or((hostpart, ""));
            if !auth.is_empty() {
                let (u, p) = auth.split_once(':').map_or((auth, None), |(u, p)| (u, Some(p)));
                set("user", unescape(u)?)?;
                if let Some(p) = p {
                    set("password", unescape(p)?)?;
                }
            }
            let (h, p) = match hostport.strip_prefix('[') {
                Some(v6) => v6
                    .split_once(']')
                    .map(|(h, r)| (h, r.strip_prefix(':').unwrap_or("")))
                    .unwrap_or((v6, "")),
                None => hostport.rsplit_once(':').unwrap_or((hostport, "")),
            };
            set("host", unescape(h)?)?;
            set("port", p.to_string())?;
            set("dbname", unescape(db)?)?;
            for kv in query.split('&').filter(|s| !s.is_empty()) {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                set(k, unescape(v)?)?;
            }
        } else {
            for kv in dsn.split_ascii_whitespace() {
                let (k, v) =
                    kv.split_once('=').ok_or_else(|| PgError::Dsn(format!("'{kv}' is not key=value")))?;
                set(k, v.trim_matches('\'').to_string())?;
            }
        }
        if c.dbname.is_empty() {
            c.dbname = c.user.clone();
        }
        Ok(c)
    }

    /// host:port for messages.
    pub fn addr(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// One open connection.
pub struct PgConn {
    stream: BufReader<TcpStream>,
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
    /// Connects, authenticates and waits until the server is ready for queries.
    pub fn connect(cfg: &PgConfig) -> Result<PgConn, PgError> {
        let addr = cfg.addr();
        let conn_err = |reason: String| PgError::Connect { addr: addr.clone(), reason };
        let sock = (cfg.host.as_str(), cfg.port)
            .to_socket_addrs()
            .map_err(|e| conn_err(format!("cannot resolve the host: {e}")))?
            .next()
            .ok_or_else(|| conn_err("the host has no address".into()))?;
        let tcp = TcpStream::connect_timeout(&sock, cfg.connect_timeout).map_err(|e| {
            conn_err(format!("{e} (is the server running and listening on TCP at this address and port?)"))
        })?;
        tcp.set_nodelay(true).map_err(|e| conn_err(e.to_string()))?;
        // The whole handshake must fit the connect timeout; then the I/O timeout applies.
        tcp.set_read_timeout(Some(cfg.connect_timeout)).map_err(|e| conn_err(e.to_string()))?;
        tcp.set_write_timeout(Some(cfg.io_timeout)).map_err(|e| conn_err(e.to_string()))?;
        let mut c = PgConn {
            stream: BufReader::with_capacity(64 << 10, tcp),
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

    fn flush(&mut self) -> Result<(), PgError> {
        self.stream.get_mut().write_all(&self.out)?;
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
                    let nonce = Scram::random_nonce()?;
                    let s = Scram::new(Self::need_password(cfg, "SCRAM-SHA-256")?, &nonce);
                    wire::sasl_initial(&mut self.out, "SCRAM-SHA-256", s.client_first().as_bytes());
                    scram = Some(s);
                }
                11 | 12 => {
                    let s = scram.as_mut().ok_or_else(|| PgError::Protocol("SASL data before SASL start".into()))?;
                    let text = String::from_utf8_lossy(b.rest()).into_owned();
                    let auth_err = |reason: String| PgError::Auth { user: cfg.user.clone(), reason };
                    if code == 11 {
                        let fin = s.client_final(&text).map_err(auth_err)?;
                        wire::sasl_response(&mut self.out, fin.as_bytes());
                    } else {
                        s.verify_server(&text).map_err(auth_err)?;
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

    /// The server process serving this connection (for tests that kill it).
    pub fn backend_pid(&mut self) -> Result<i32, PgError> {
        let rows = self.query_rows("SELECT pg_backend_pid()")?;
        rows.first()
            .and_then(|r| r.first().cloned().flatten())
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| PgError::Protocol("pg_backend_pid() returned nothing".into()))
    }
}

impl Drop for PgConn {
    fn drop(&mut self) {
        wire::terminate(&mut self.out);
        let _ = self.stream.get_mut().write_all(&self.out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dsn_forms_parse() {
        let c = PgConfig::parse("postgres://bob:p%40ss@127.0.0.1:6543/sbtest?connect_timeout=2").unwrap();
        assert_eq!((c.user.as_str(), c.password.as_deref(), c.port), ("bob", Some("p@ss"), 6543));
        assert_eq!((c.host.as_str(), c.dbname.as_str()), ("127.0.0.1", "sbtest"));
        assert_eq!(c.connect_timeout, Duration::from_secs(2));
        let k = PgConfig::parse("host=::1 port=7000 user=amy password=x").unwrap();
        assert_eq!((k.host.as_str(), k.port, k.dbname.as_str()), ("::1", 7000, "amy"));
        let v6 = PgConfig::parse("postgresql://u@[::1]:5433/d").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 5433));
        assert!(PgConfig::parse("port=abc").is_err());
        assert!(PgConfig::parse("nonsense").unwrap_err().to_string().contains("key=value"));
        assert!(PgConfig::parse("bogus=1").unwrap_err().to_string().contains("unknown key"));
    }

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
