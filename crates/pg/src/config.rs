//! PostgreSQL connection strings, libpq's two forms: `postgres://user:pw@host:port/db?k=v` and
//! `host=… port=… k=v`. A host starting with `/` is a Unix-socket directory (the socket is
//! `DIR/.s.PGSQL.PORT`), as in libpq; `sslmode` and `sslrootcert` choose TLS.

use super::client::PgError;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// libpq's `sslmode`: whether to use TLS and how far to trust the server's certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SslMode {
    /// Never TLS.
    Disable,
    /// Plain first; TLS only if the server refuses a plain connection.
    Allow,
    /// TLS when the server offers it, else plain (libpq's default). Unverified.
    #[default]
    Prefer,
    /// TLS or nothing; the certificate is not checked (unless `sslrootcert` is given: then as
    /// verify-ca, as libpq does).
    Require,
    /// TLS with a certificate chain to a trusted root.
    VerifyCa,
    /// As verify-ca, and the certificate names the host.
    VerifyFull,
}

impl SslMode {
    const ALL: [SslMode; 6] = [
        SslMode::Disable,
        SslMode::Allow,
        SslMode::Prefer,
        SslMode::Require,
        SslMode::VerifyCa,
        SslMode::VerifyFull,
    ];

    fn parse(v: &str) -> Result<SslMode, PgError> {
        Self::ALL.into_iter().find(|m| m.as_str() == v).ok_or_else(|| {
            PgError::Dsn(format!(
                "sslmode '{v}' is not one of disable, allow, prefer, require, verify-ca, verify-full"
            ))
        })
    }

    /// The name as libpq spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    /// Whether a plain connection is refused.
    pub fn requires_tls(self) -> bool {
        matches!(self, SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull)
    }
}

/// Where and as whom to connect.
#[derive(Debug, Clone, PartialEq)]
pub struct PgConfig {
    /// A host name or address, or (starting with `/`) a Unix-socket directory.
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: Option<String>,
    pub dbname: String,
    pub connect_timeout: Duration,
    /// Longest wait for any single read or write on the socket.
    pub io_timeout: Duration,
    pub sslmode: SslMode,
    /// Trusted root certificates (PEM) for verify-ca and verify-full; "system" or none: the
    /// system's roots (none: ~/.postgresql/root.crt first when it exists, as in libpq).
    pub sslrootcert: Option<PathBuf>,
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
    /// Parses `postgres://user[:password]@host[:port][/dbname][?key=value&…]` (host may be
    /// empty and given as `?host=/socket/dir`) or libpq's `host=… port=… user=… password=…
    /// dbname=… sslmode=…` form. Defaults: 127.0.0.1:5432, user and database "postgres",
    /// sslmode prefer, connect timeout 5 s, I/O timeout 30 s.
    pub fn parse(dsn: &str) -> Result<PgConfig, PgError> {
        let mut c = PgConfig {
            host: "127.0.0.1".into(),
            port: 5432,
            user: "postgres".into(),
            password: None,
            dbname: String::new(),
            connect_timeout: Duration::from_secs(5),
            io_timeout: Duration::from_secs(30),
            sslmode: SslMode::default(),
            sslrootcert: None,
        };
        if let Some(rest) = dsn.strip_prefix("postgres://").or_else(|| dsn.strip_prefix("postgresql://")) {
            c.parse_uri(rest)?;
        } else {
            for kv in dsn.split_ascii_whitespace() {
                let (k, v) =
                    kv.split_once('=').ok_or_else(|| PgError::Dsn(format!("'{kv}' is not key=value")))?;
                c.set(k, v.trim_matches('\'').to_string())?;
            }
        }
        if c.dbname.is_empty() {
            c.dbname = c.user.clone();
        }
        Ok(c)
    }

    fn parse_uri(&mut self, rest: &str) -> Result<(), PgError> {
        let (main, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (auth, hostpart) = main.rsplit_once('@').unwrap_or(("", main));
        let (hostport, db) = hostpart.split_once('/').unwrap_or((hostpart, ""));
        if !auth.is_empty() {
            let (u, p) = auth.split_once(':').map_or((auth, None), |(u, p)| (u, Some(p)));
            self.set("user", unescape(u)?)?;
            if let Some(p) = p {
                self.set("password", unescape(p)?)?;
            }
        }
        let (h, p) = match hostport.strip_prefix('[') {
            Some(v6) => {
                v6.split_once(']').map(|(h, r)| (h, r.strip_prefix(':').unwrap_or(""))).unwrap_or((v6, ""))
            }
            None => hostport.rsplit_once(':').unwrap_or((hostport, "")),
        };
        self.set("host", unescape(h)?)?;
        self.set("port", p.to_string())?;
        self.set("dbname", unescape(db)?)?;
        for kv in query.split('&').filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            self.set(k, unescape(v)?)?;
        }
        Ok(())
    }

    fn set(&mut self, k: &str, v: String) -> Result<(), PgError> {
        match k {
            "host" | "hostaddr" if !v.is_empty() => self.host = v,
            "port" if !v.is_empty() => {
                self.port = v.parse().map_err(|_| PgError::Dsn(format!("port '{v}' is not a number")))?
            }
            "user" => self.user = v,
            "password" => self.password = Some(v),
            "dbname" => self.dbname = v,
            "connect_timeout" => {
                let s: u64 = v.parse().map_err(|_| PgError::Dsn(format!("connect_timeout '{v}'")))?;
                self.connect_timeout = Duration::from_secs(s.max(1));
            }
            "sslmode" => self.sslmode = SslMode::parse(&v)?,
            "sslrootcert" => self.sslrootcert = Some(PathBuf::from(v)),
            "sslcert" | "sslkey" | "sslpassword" | "sslcrl" | "sslcrldir" => {
                return Err(PgError::Dsn(format!(
                    "'{k}' is not supported: client certificates and revocation lists are not implemented"
                )))
            }
            "host" | "hostaddr" | "port" | "application_name" => {}
            _ => return Err(PgError::Dsn(format!("unknown key '{k}'"))),
        }
        Ok(())
    }

    /// The Unix socket to connect to when the host is a directory (libpq's rule: it starts with `/`).
    pub fn socket_path(&self) -> Option<PathBuf> {
        self.host.starts_with('/').then(|| Path::new(&self.host).join(format!(".s.PGSQL.{}", self.port)))
    }

    /// host:port (or the socket's path) for messages.
    pub fn addr(&self) -> String {
        match self.socket_path() {
            Some(p) => p.display().to_string(),
            None => format!("{}:{}", self.host, self.port),
        }
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
        assert_eq!((c.sslmode, c.socket_path()), (SslMode::Prefer, None));
        let k = PgConfig::parse("host=::1 port=7000 user=amy password=x").unwrap();
        assert_eq!((k.host.as_str(), k.port, k.dbname.as_str()), ("::1", 7000, "amy"));
        let v6 = PgConfig::parse("postgresql://u@[::1]:5433/d").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 5433));
        assert!(PgConfig::parse("port=abc").is_err());
        assert!(PgConfig::parse("nonsense").unwrap_err().to_string().contains("key=value"));
        assert!(PgConfig::parse("bogus=1").unwrap_err().to_string().contains("unknown key"));
    }

    #[test]
    fn ssl_keys_parse_and_unsupported_ones_are_refused() {
        let modes = [
            ("disable", SslMode::Disable),
            ("allow", SslMode::Allow),
            ("prefer", SslMode::Prefer),
            ("require", SslMode::Require),
            ("verify-ca", SslMode::VerifyCa),
            ("verify-full", SslMode::VerifyFull),
        ];
        for (text, mode) in modes {
            assert_eq!(PgConfig::parse(&format!("sslmode={text}")).unwrap().sslmode, mode);
        }
        let c =
            PgConfig::parse("postgres://u@db.example/x?sslmode=verify-full&sslrootcert=/etc/ca.pem").unwrap();
        assert_eq!(c.sslmode, SslMode::VerifyFull);
        assert_eq!(c.sslrootcert.as_deref(), Some(Path::new("/etc/ca.pem")));
        assert!(PgConfig::parse("sslmode=on").unwrap_err().to_string().contains("verify-full"));
        let e = PgConfig::parse("sslmode=require sslcert=/c.pem").unwrap_err().to_string();
        assert!(e.contains("client certificates"), "{e}");
    }

    #[test]
    fn a_host_starting_with_a_slash_is_a_socket_directory() {
        let k = PgConfig::parse("host=/run/postgresql port=5433 user=u").unwrap();
        assert_eq!(k.socket_path(), Some(PathBuf::from("/run/postgresql/.s.PGSQL.5433")));
        assert_eq!(k.addr(), "/run/postgresql/.s.PGSQL.5433");
        let u = PgConfig::parse("postgres:///db?host=/var/run/pg&port=6000").unwrap();
        assert_eq!(
            (u.dbname.as_str(), u.socket_path()),
            ("db", Some(PathBuf::from("/var/run/pg/.s.PGSQL.6000")))
        );
        let e = PgConfig::parse("postgres://u@%2Ftmp%2Fpg/db").unwrap();
        assert_eq!(e.socket_path(), Some(PathBuf::from("/tmp/pg/.s.PGSQL.5432")));
        assert_eq!(PgConfig::parse("host=localhost").unwrap().socket_path(), None);
    }
}
